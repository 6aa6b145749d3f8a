"""The selective (input-dependent) EMA of the ``selective`` control reader, recurrent and chunked.

Moved out of :mod:`paper_lib.ema` for length (its names are importable from there too); the inf/NaN
helpers are :mod:`paper_lib.nonfinite`'s, as the fast EMA's.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from .nonfinite import _all_finite, _split_finite

SELECTIVE_CHUNK = 32
"""Time steps per chunk of :func:`selective_scan` (the within-chunk products stay in float range)."""
SELECTIVE_MAX_RATE = 1.0 - math.exp(-4.0)
"""Largest rate of the selective EMA (~0.982): caps the log-decay at -4 nats per step, so ``exp`` of a
chunk's log-decay (at most ``4 * SELECTIVE_CHUNK / 2`` after centring) fits float32. Our design."""


def selective_scan_reference(logit: Tensor, v: Tensor, max_rate: float = SELECTIVE_MAX_RATE) -> Tensor:
    """The selective EMA, one step at a time (the reference :func:`selective_scan` is tested against).

    ``a_t = max_rate * sigmoid(logit_t)``, ``g_t = (1 - a_t) g_{t-1} + a_t v_t``, ``g_0 = 0``.

    Args:
        logit: ``(B, T, N)`` rate logits. v: ``(B, T, N)`` values.

    Returns:
        ``(B, T, N)``: ``g_t``, the state *after* step ``t`` (it holds ``v_{<=t}``); empty if ``T`` = 0.
    """
    a = max_rate * torch.sigmoid(logit)
    if v.shape[1] == 0:
        return a * v                                                 # (B, 0, N)
    g = torch.zeros_like(v[:, 0])
    out = []
    for t in range(v.shape[1]):
        g = (1 - a[:, t]) * g + a[:, t] * v[:, t]
        out.append(g)
    return torch.stack(out, dim=1)


def selective_scan(logit: Tensor, v: Tensor, max_rate: float = SELECTIVE_MAX_RATE, chunk: int = SELECTIVE_CHUNK) -> Tensor:
    """The selective EMA of :func:`selective_scan_reference`, chunked and parallel (no T-step loop).

    Within a chunk, with ``L_i = sum_{tau <= i} log(1 - a_tau)`` (a cumulative sum), ``g_i = sum_{j <= i}
    exp(L_i - L_j) a_j v_j + exp(L_i) c`` is computed as ``exp(L_i - R) * cumsum_j(exp(R - L_j) a_j v_j)`` with
    ``R`` the chunk's mid log-decay, which stays within float range because ``a <= max_rate`` bounds each step's
    log-decay (Mamba-2's chunked scan, in log space). The carries ``c`` into the ``T / chunk`` chunks come from
    a small masked decay matrix over chunks, so autograd sees only cumsums, exps and one einsum. Computed in
    float32 at least (under bf16 autocast too). Inf/NaN at step t reach steps >= t only, as in the reference
    (the chunks see the finite part; a cumsum carries the rest).

    Args:
        logit: ``(B, T, N)`` rate logits. v: ``(B, T, N)`` values.
        max_rate: the rate cap, in (0, 1). chunk: time steps per chunk (>= 1).

    Returns:
        ``(B, T, N)`` states after each step, as the reference.

    Raises:
        ValueError: shapes differ or are not 3-D, ``max_rate`` outside (0, 1), ``chunk < 1``.
    """
    if logit.shape != v.shape or v.ndim != 3:
        raise ValueError(f"logit and v must share a (B, T, N) shape, got {tuple(logit.shape)} and {tuple(v.shape)}")
    if not 0.0 < max_rate < 1.0 or chunk < 1:
        raise ValueError(f"need max_rate in (0, 1) and chunk >= 1, got {max_rate}, {chunk}")
    dtype = torch.promote_types(v.dtype, torch.float32)
    logit, v = logit.to(dtype), v.to(dtype)
    B, T, N = v.shape
    a = max_rate * torch.sigmoid(logit)                                  # (B, T, N)
    la, x = torch.log1p(-a), a * v                                       # (B, T, N) each
    carried = None                                  # inf/NaN (a NaN rate makes x NaN) go around
    if not _all_finite(x):                          # the chunks; decay (1 - a) > 0 keeps inf as is
        (x, carried), la = _split_finite(x), _split_finite(la)[0]
    pad = (-T) % chunk                                                   # padding at the end: a = 0
    if pad:
        la, x = F.pad(la, (0, 0, 0, pad)), F.pad(x, (0, 0, 0, pad))
    K = (T + pad) // chunk
    la, x = la.view(B, K, chunk, N), x.view(B, K, chunk, N)
    L = la.cumsum(dim=2)                                                 # (B, K, C, N), <= 0
    R = 0.5 * L[:, :, -1:]                                               # (B, K, 1, N) centre
    intra = torch.exp(L - R) * torch.cumsum(torch.exp(R - L) * x, dim=2)  # (B, K, C, N), zero carry
    # carries: c_k = sum_{m < k} exp(P_{k-1} - P_m) end_m, with P the cumulative chunk log-decay
    Lc = L[:, :, -1]                                                     # (B, K, N)
    P = Lc.cumsum(dim=1)                                                 # (B, K, N)
    diff = (P - Lc)[:, :, None] - P[:, None, :]                          # (B, K, K, N): P_{k-1} - P_m
    below = torch.ones(K, K, dtype=torch.bool, device=v.device).tril(-1)[None, :, :, None]
    W = torch.where(below, torch.exp(torch.where(below, diff, torch.zeros_like(diff))), torch.zeros_like(diff))
    carry = torch.einsum("bkmn,bmn->bkn", W, intra[:, :, -1])            # (B, K, N)
    g = intra + torch.exp(L) * carry[:, :, None]                         # (B, K, C, N)
    g = g.reshape(B, K * chunk, N)[:, :T]
    return g if carried is None else g + carried.cumsum(1)
