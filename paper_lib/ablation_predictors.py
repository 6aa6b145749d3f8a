"""The predictor ablation: readers of SPEN's traces (the paper's) and readers of more (our controls).

The paper keeps SPEN's EMA traces and swaps the module that predicts ``x_hat_t`` from them:
linear projection, linear attention, full softmax attention; all reach about 7.60 nats, and
the paper concludes, by the data processing inequality, that the traces lost the information
(the paper's predictor ablation, Experiment 2). This module adds the two attention readers the paper names
and three controls of ours that test the argument by seeing *more* than the trace bank at t:

=====================  =========  ===========================================================
name                   whose      what ``x_hat_t`` can see
=====================  =========  ===========================================================
``linear``             paper      the trace bank at t (in :mod:`paper_lib.predictors`)
``linear_attention``   paper      the trace bank at t (S trace vectors as S tokens)
``softmax_attention``  paper      the trace bank at t (S trace vectors as S tokens)
``history_attention``  ours       the trace banks h_1 .. h_t (all past banks)
``selective``          ours       u_{<t} through a learned, input-dependent EMA
``token_attention``    ours       u_{<t} directly (causal self-attention, strictly earlier)
=====================  =========  ===========================================================

The first three are bounded by the data processing inequality (a function of ``h_t`` alone);
the controls are not: past banks determine past inputs
(``u_{t-1} = (h_t - (1 - alpha) h_{t-1}) / alpha``), the selective EMA chooses per input what
to keep, and token attention reads the inputs themselves.

Every class obeys the contract of :mod:`paper_lib.predictors` (``x_hat_t`` uses ``u_{<t}``
and ``traces[:, :t + 1]`` only; ``tests/test_ablation_predictors.py`` checks it) and is sized
to the parameter budget of ``linear`` (``S * d_model**2 + d_model``, with ``S`` the number of
rates) so that every SPEN of the ablation has the same parameter count within 5%
(:func:`check_param_budget`). Attention heads: ``config.extra["n_head"]`` (default
``max(1, d_model // 64)``). Our design throughout where not marked as the paper's: the paper
gives neither the attention predictors' form nor their sizes.
"""
from __future__ import annotations

import math
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .predictors import PREDICTORS, Predictor, build_predictor, register_predictor

PAPER_PREDICTORS: tuple[str, ...] = ("linear", "linear_attention", "softmax_attention")
"""The paper's ablation: readers of the trace bank at t, bounded by the traces."""
CONTROL_PREDICTORS: tuple[str, ...] = ("history_attention", "selective", "token_attention")
"""Our controls: readers that see more than the trace bank at t."""
ABLATION_PREDICTORS: tuple[str, ...] = PAPER_PREDICTORS + CONTROL_PREDICTORS
SEES: dict[str, str] = {
    "linear": "trace bank at t (one linear map)",
    "linear_attention": "trace bank at t (linear attention among its S traces)",
    "softmax_attention": "trace bank at t (softmax attention among its S traces)",
    "history_attention": "trace banks h_1..h_t (causal softmax attention)",
    "selective": "u_{<t} through a learned input-dependent EMA",
    "token_attention": "u_{<t} directly (causal self-attention)",
}
"""What ``x_hat_t`` of each predictor can see, in a few words (the notebook's table)."""

SELECTIVE_CHUNK = 32
"""Time steps per chunk of :func:`selective_scan` (the within-chunk products stay in float range)."""
SELECTIVE_MAX_RATE = 1.0 - math.exp(-4.0)
"""Largest rate of the selective EMA (~0.982): caps the log-decay at -4 nats per step, so
``exp`` of a chunk's log-decay (at most ``4 * SELECTIVE_CHUNK / 2`` after centring) fits
float32. Our design."""


# --------------------------------------------------------------------------- sizing

def n_heads(config) -> int:
    """Attention heads of the attention predictors: ``config.extra["n_head"]`` or ``d_model // 64``."""
    return int(config.extra.get("n_head", max(1, config.d_model // 64)))


def linear_budget(config) -> int:
    """Parameters of the ``linear`` predictor, the budget every predictor is sized to:
    ``S * d_model**2 + d_model``."""
    return len(config.alphas) * config.d_model ** 2 + config.d_model


def _width(config, per_unit: int) -> int:
    """Inner width ``w`` (a multiple of the heads) with ``per_unit * w`` closest to the budget."""
    h = n_heads(config)
    return max(h, h * round(linear_budget(config) / (per_unit * h)))


# --------------------------------------------------------------------------- the paper's readers

class _BankAttention(Predictor):
    """Multi-head attention among the S trace vectors of the bank at t (shared by the two below).

    Tokens: ``z_s = h_t^(s) + e_s`` for ``s = 1..S`` with ``e_s`` a learned timescale embedding
    (else the set of traces would be unordered). Queries, keys and values are all projections
    of these S tokens, so every query comes from the traces at t, never from ``u_t``. The S
    outputs are concatenated and projected to ``d_model``:
    ``x_hat_t = W_o [o_1; ...; o_S]``. Width ``w = S d / (S + 3)`` (``d / 2`` for three rates)
    matches the linear predictor's ``S d^2`` parameters.
    """

    softmax: bool = True

    def __init__(self, config):
        super().__init__(config)
        S, D = len(config.alphas), config.d_model
        self.n_head = n_heads(config)
        self.width = _width(config, (S + 3) * D)
        self.scale_emb = nn.Parameter(torch.randn(S, D) * 0.02)          # (S, D)
        self.qkv = nn.Linear(D, 3 * self.width)
        self.out = nn.Linear(S * self.width, D)

    def forward(self, u: Tensor, traces: Tensor) -> Tensor:
        B, T, S, D = traces.shape
        H, w = self.n_head, self.width
        z = traces + self.scale_emb                                      # (B, T, S, D)
        q, k, v = self.qkv(z).view(B, T, S, 3, H, w // H).unbind(3)      # 3 x (B, T, S, H, w/H)
        if self.softmax:
            att = torch.einsum("btihc,btjhc->bthij", q, k) / math.sqrt(w // H)
            att = att.softmax(dim=-1)                                    # (B, T, H, S, S)
        else:  # linear attention (Katharopoulos et al. 2020): feature map elu + 1, normalised
            q, k = F.elu(q) + 1, F.elu(k) + 1
            att = torch.einsum("btihc,btjhc->bthij", q, k)               # (B, T, H, S, S), > 0
            att = att / att.sum(dim=-1, keepdim=True)
        o = torch.einsum("bthij,btjhc->btihc", att, v)                   # (B, T, S, H, w/H)
        return self.out(o.reshape(B, T, S * w))                          # (B, T, D)


@register_predictor("linear_attention")
class LinearAttentionPredictor(_BankAttention):
    """The paper's "linear attention" reader, over the trace bank at t.

    Sees: only the S traces at t (``traces[:, t]``, which hold ``u_{<t}``), so it is bounded by
    the data processing inequality like ``linear``. Attention among the S trace tokens (queries
    from the traces themselves, see :class:`_BankAttention`) with the feature map
    ``elu(x) + 1`` in place of the softmax. The paper's: that the reader is linear attention
    over the traces; ours: the tokens (one per timescale, plus a timescale embedding), where
    the query comes from, the heads, the width. ``(B, T, D), (B, T, S, D) -> (B, T, D)``.
    """

    softmax = False


@register_predictor("softmax_attention")
class SoftmaxAttentionPredictor(_BankAttention):
    """The paper's "full softmax attention" reader, over the trace bank at t.

    Sees: only the S traces at t (``traces[:, t]``, which hold ``u_{<t}``): bounded by the
    data processing inequality. Scaled dot-product softmax attention among the S trace tokens
    (queries from the traces themselves, see :class:`_BankAttention`). The paper's: softmax
    attention over the traces; ours: the tokens, the query's source, heads and width.
    ``(B, T, D), (B, T, S, D) -> (B, T, D)``.
    """

    softmax = True


# --------------------------------------------------------------------------- our controls

@register_predictor("history_attention")
class HistoryAttentionPredictor(Predictor):
    """Control (ours): causal softmax attention over the whole history of trace banks h_1..h_t.

    Sees: the stacked banks ``b_t' = [h_t'^(1); ...; h_t'^(S)]`` for every ``t' <= t``
    (``traces[:, :t + 1]``; each holds ``u_{<t'}``), so everything in ``u_{<t}``. NOT bounded by
    the data processing inequality: past banks determine past inputs
    (``u_{t'-1} = (h_t' - (1 - alpha) h_{t'-1}) / alpha``), although one attention layer must
    learn to use that. Query from ``b_t``, keys and values from ``b_{t'}``, causal mask
    ``t' <= t``; multi-head; width ``w = S d / (3 S + 1)`` matches the linear predictor's
    parameters. ``(B, T, D), (B, T, S, D) -> (B, T, D)``.
    """

    def __init__(self, config):
        super().__init__(config)
        S, D = len(config.alphas), config.d_model
        self.n_head = n_heads(config)
        self.width = _width(config, (3 * S + 1) * D)
        self.qkv = nn.Linear(S * D, 3 * self.width)
        self.out = nn.Linear(self.width, D)

    def forward(self, u: Tensor, traces: Tensor) -> Tensor:
        B, T, S, D = traces.shape
        H, w = self.n_head, self.width
        qkv = self.qkv(traces.reshape(B, T, S * D))                      # (B, T, 3w)
        q, k, v = (x.view(B, T, H, w // H).transpose(1, 2) for x in qkv.split(w, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)      # (B, H, T, w/H), t' <= t
        return self.out(y.transpose(1, 2).reshape(B, T, w))              # (B, T, D)


@register_predictor("token_attention")
class TokenAttentionPredictor(Predictor):
    """Control (ours): plain causal self-attention over the block inputs ``u_{<t}``.

    Sees: the inputs ``u_{t'}`` for ``t' < t`` themselves (strictly earlier; the traces are not
    used). A GPT-style multi-head causal self-attention runs over ``u`` and its output at
    ``t - 1`` is the prediction at ``t``: ``x_hat_t = W_o Attn(q(u_{t-1}), k/v(u_{<=t-1}))``,
    ``x_hat_0 = b_o``. So the query comes from ``u_{t-1}``, never ``u_t``. No position
    embedding (SPEN has none; a causal mask alone carries some order). Width ``w = S d / 4``
    matches the linear predictor's parameters. ``(B, T, D), (B, T, S, D) -> (B, T, D)``.
    """

    def __init__(self, config):
        super().__init__(config)
        D = config.d_model
        self.n_head = n_heads(config)
        self.width = _width(config, 4 * D)
        self.qkv = nn.Linear(D, 3 * self.width)
        self.out = nn.Linear(self.width, D)

    def forward(self, u: Tensor, traces: Tensor) -> Tensor:
        B, T, D = u.shape
        H, w = self.n_head, self.width
        q, k, v = (x.view(B, T, H, w // H).transpose(1, 2) for x in self.qkv(u).split(w, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)      # (B, H, T, w/H): u_{<=t}
        y = F.pad(y.transpose(1, 2).reshape(B, T, w)[:, :-1], (0, 0, 1, 0))  # (B, T, w): u_{<t}
        return self.out(y)                                               # (B, T, D)


def selective_scan_reference(logit: Tensor, v: Tensor, max_rate: float = SELECTIVE_MAX_RATE) -> Tensor:
    """The selective EMA, one step at a time (the reference :func:`selective_scan` is tested against).

    ``a_t = max_rate * sigmoid(logit_t)``, ``g_t = (1 - a_t) g_{t-1} + a_t v_t``, ``g_0 = 0``.

    Args:
        logit: ``(B, T, N)`` rate logits. v: ``(B, T, N)`` values.

    Returns:
        ``(B, T, N)``: ``g_t``, the state *after* step ``t`` (it holds ``v_{<=t}``).
    """
    a = max_rate * torch.sigmoid(logit)
    g = torch.zeros_like(v[:, 0])
    out = []
    for t in range(v.shape[1]):
        g = (1 - a[:, t]) * g + a[:, t] * v[:, t]
        out.append(g)
    return torch.stack(out, dim=1)


def selective_scan(logit: Tensor, v: Tensor, max_rate: float = SELECTIVE_MAX_RATE,
                   chunk: int = SELECTIVE_CHUNK) -> Tensor:
    """The selective EMA of :func:`selective_scan_reference`, chunked and parallel (no T-step loop).

    Within a chunk, with ``L_i = sum_{tau <= i} log(1 - a_tau)`` (a cumulative sum),
    ``g_i = sum_{j <= i} exp(L_i - L_j) a_j v_j + exp(L_i) c`` is computed as
    ``exp(L_i - R) * cumsum_j(exp(R - L_j) a_j v_j)`` with ``R`` the chunk's mid log-decay, which
    stays within float range because ``a <= max_rate`` bounds each step's log-decay (Mamba-2's
    chunked scan, in log space). The carries ``c`` into the ``T / chunk`` chunks come from a
    small masked decay matrix over chunks, so autograd sees only cumsums, exps and one einsum.
    Computed in float32 at least (under bf16 autocast too).

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
    return g.reshape(B, K * chunk, N)[:, :T]


@register_predictor("selective")
class SelectivePredictor(Predictor):
    """Control (ours): an EMA whose rate is computed from the input (Mamba-style selection).

    Sees: ``u_{<t}`` only, through its own learned recurrence (the fixed traces are not used):

        a_t = max_rate * sigmoid(W_a u_t + b_a)      # (N,) per-channel rate, chosen by u_t
        g_t = (1 - a_t) g_{t-1} + a_t W_v u_t        # g_0 = 0
        x_hat_t = W_o g_{t-1} + b_o                  # the state *before* u_t: causal

    The "learned, input-dependent selection" the paper says fixed-decay traces lack: an input
    can write itself in strongly (a near 1) or let the state keep older content (a near 0).
    Not bounded by the data processing inequality on the fixed traces. ``b_a`` starts at the
    logits of rates log-spaced between the paper's fastest and slowest alphas, so training
    starts near a fixed multi-timescale bank. ``N = S d / 3`` (``d`` for three rates) matches the
    linear predictor's parameters. Scan: :func:`selective_scan`. ``(B, T, D), (B, T, S, D) ->
    (B, T, D)``.
    """

    def __init__(self, config):
        super().__init__(config)
        D = config.d_model
        self.max_rate = SELECTIVE_MAX_RATE
        self.d_state = _width(config, 3 * D)
        self.rate = nn.Linear(D, self.d_state, bias=False)
        self.value = nn.Linear(D, self.d_state)
        self.out = nn.Linear(self.d_state, D)
        # a separate parameter (not a Linear's bias), so SPEN's init (zero biases) keeps it
        lo, hi = min(config.alphas), max(config.alphas)
        start = torch.logspace(math.log10(hi), math.log10(lo), self.d_state) / self.max_rate
        self.rate_bias = nn.Parameter(torch.logit(start.clamp(1e-4, 1 - 1e-4)))  # (N,)

    def forward(self, u: Tensor, traces: Tensor) -> Tensor:
        g = selective_scan(self.rate(u) + self.rate_bias, self.value(u), self.max_rate)   # (B, T, N): u_{<=t}
        g = F.pad(g[:, :-1], (0, 0, 1, 0)).to(u.dtype)                   # (B, T, N): u_{<t}
        return self.out(g)                                               # (B, T, D)


# --------------------------------------------------------------------------- the budget

def spen_param_count(config, predictor: str) -> int:
    """Parameters of a whole SPEN with ``predictor`` (built on the meta device: no memory, fast)."""
    from .spen import SPEN

    with torch.device("meta"):
        return SPEN(replace(config, predictor=predictor)).num_params()


def predictor_param_count(config, predictor: str) -> int:
    """Parameters of one ``predictor`` for ``config`` (meta device)."""
    with torch.device("meta"):
        return sum(p.numel() for p in build_predictor(predictor, config).parameters())


def check_param_budget(config, predictors=ABLATION_PREDICTORS, tol: float = 0.05) -> dict[str, int]:
    """Whole-model parameters of a SPEN per predictor; all must lie within ``tol`` of ``linear``'s.

    Returns:
        ``{predictor: parameters}``.

    Raises:
        ValueError: a predictor's model differs from the linear one's by more than ``tol``
        (relative), naming it and both counts.
    """
    ref = spen_param_count(config, "linear")
    counts = {name: spen_param_count(config, name) for name in predictors}
    for name, n in counts.items():
        if abs(n - ref) > tol * ref:
            raise ValueError(f"SPEN with predictor {name!r} has {n} parameters, {abs(n - ref) / ref:.1%} "
                             f"away from linear's {ref} (allowed: {tol:.0%})")
    return counts


assert set(ABLATION_PREDICTORS) <= set(PREDICTORS)  # every name above is registered
