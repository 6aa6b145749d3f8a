"""SPEN, the Sparse Predictive Equilibrium Network: the paper's EMA-only language model.

One block follows the paper's Figure 1 (Experiment 2):

    u_t      = LayerNorm(x_t)                                   # ours: pre-norm
    h_t^(s)  = EMA_alpha_s(u)_{<t},  alpha = (0.5, 0.1, 0.02)   # paper; causal: only u_{<t}
    x_hat_t  = predictor(u, h)_t                                # paper: "predict" (swappable)
    e_t      = u_t - x_hat_t                                    # paper: prediction error
    m_t      = W_up GELU(W_down [e_t; h_t^(1..S)])              # paper: context mix + bottleneck
    x_t     <- x_t + m_t                                        # paper: residual
    x_t     <- x_t + W_2 topk_6%(GELU(W_1 LayerNorm(x_t)))      # paper: sparse FFN, 6% active

What is the paper's: the three fixed rates, the trace -> predict -> error -> context mix ->
sparse FFN order, top-k with 6% of hidden units active, the residual, 12 blocks, no
attention anywhere, about 130M parameters. What is ours (the paper is silent): pre-norm
LayerNorms, the mix's input ``[e_t; h_t]`` and its bottleneck width, GELU, the FFN width (4 d_model), top-k by value after the activation, tied input/output
embeddings, no positional embedding (the traces carry all temporal information), the
initialisation (GPT-2's), and training the predictor only through the language-model loss.

Causality: the traces are computed with ``causal=True`` (``h_t`` holds ``u_{<t}``), every
other operation acts on one position at a time, so the block's output at ``t`` depends on
``x_{<=t}`` only; ``tests/test_spen.py`` checks that changing token ``t + 1`` leaves the
logits at ``<= t`` unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..ema import PAPER_ALPHAS, ema_traces
from ..pipeline.settings import check_fields, setting
from ..predictors import build_predictor
from ..predictors.linear import LinearPredictor
from .lm import CausalLM


@dataclass
class SPENConfig:
    """Sizes of a SPEN model. Defaults are the paper's config (about 128M parameters).

    Attributes:
        vocab_size: tokens (paper: GPT-2's 50257).
        n_layer: blocks (paper: 12).
        d_model: width of the residual stream (ours: 768, GPT-2 small's, to match 130M).
        alphas: EMA rates, each in (0, 1] (paper: 0.5, 0.1, 0.02).
        d_bottleneck: width of the context mix's bottleneck (ours: d_model / 3).
        d_ff: hidden units of the sparse FFN (ours: 4 d_model).
        top_k_frac: fraction of FFN hidden units kept active per token, in (0, 1] (paper: 0.06).
        predictor: registered name of the trace reader (paper default: ``"linear"``).
        n_head: heads of the attention readers (``linear_attention``, ``softmax_attention``,
            ``history_attention``, ``token_attention``); None: ``max(1, d_model // 64)`` (ours).
        block_size: longest sequence the model is used with (tokens; SPEN has no position
            table, kept for the same interface as the Transformer).

    Every field is checked on construction (:func:`paper_lib.pipeline.settings.check_fields`:
    counts >= 1, the declared ranges). Raises ValueError, one line.
    """

    vocab_size: int = 50257
    n_layer: int = 12
    d_model: int = 768
    alphas: tuple[float, ...] = setting(PAPER_ALPHAS, low=0, high=1, low_open=True)
    d_bottleneck: int = 256
    d_ff: int = 3072
    top_k_frac: float = setting(0.06, low=0, high=1, low_open=True)
    predictor: str = "linear"
    n_head: int | None = None
    block_size: int = 1024

    def __post_init__(self):
        if isinstance(self.alphas, (list, tuple)):
            self.alphas = tuple(float(a) if isinstance(a, int) and not isinstance(a, bool) else a for a in self.alphas)
        if not self.alphas:
            raise ValueError("SPENConfig.alphas=(): must be a non-empty list of rates in (0, 1]")
        check_fields(self)

    @property
    def top_k(self) -> int:
        """Active FFN hidden units per token: ``max(1, round(top_k_frac * d_ff))``."""
        return max(1, round(self.top_k_frac * self.d_ff))


def kth_largest(a: Tensor, k: int) -> Tensor:
    """The ``k``-th largest value along the last dimension, ``(..., F) -> (..., 1)``, no autograd.

    Equal to ``a.topk(k, dim=-1).values[..., -1:]`` (the value, not an index). On the CPU, for
    float32/float64, it is ``numpy.partition`` (a SIMD selection of values only), measured 5x faster
    than ``torch.topk`` at (8192, 512), k = 31, one thread; elsewhere (CUDA, bfloat16) ``torch.topk``.
    Our design: the paper is silent on how the top-k is computed.

    Raises:
        ValueError: ``k`` outside ``[1, F]``.
    """
    n = a.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must lie in [1, {n}] (the last dimension), got {k}")
    if a.device.type == "cpu" and a.dtype in (torch.float32, torch.float64):
        v = np.partition(a.detach().numpy(), n - k, axis=-1)[..., n - k:n - k + 1]
        return torch.from_numpy(np.ascontiguousarray(v))
    with torch.no_grad():
        return a.topk(k, dim=-1, sorted=False).values.amin(dim=-1, keepdim=True)


def _kept_units(z: Tensor, k: int) -> Tensor:
    """Flat indices (int64, ascending) of the units ``GELU(z) -> threshold at the k-th largest``
    keeps, found on the pre-activation ``z`` (C-contiguous ``(..., F)``, CPU, float32/float64).

    GELU is increasing on ``[0, inf)`` and negative below 0, so in a row whose ``k``-th largest
    pre-activation ``z_k`` is positive the units with ``GELU(z) >= GELU(z_k)`` are those with ``z >= z_k``
    (a unit at ``z < 0`` has ``GELU(z) < 0 < GELU(z_k)``; the minimum at ``z = -0.75`` does not matter,
    a very negative ``z`` has ``GELU(z)`` just below 0). Rows where ``z_k`` is not positive, or that
    hold a non-finite value, are selected on ``GELU(z)`` itself, as :class:`SparseFFN`'s dense path does.
    A NaN is kept (``not z < z_k``), as the dense path keeps it. Our design (issue 26, lever 3).
    """
    n = z.shape[-1]
    z2 = z.detach().reshape(-1, n)                                     # (N, F), a view
    zn, kth = z2.numpy(), kth_largest(z2, k).numpy()                   # (N, F), (N, 1)
    keep = np.less(zn, kth)
    np.logical_not(keep, out=keep)                                     # (N, F): z >= z_k, NaN kept
    with np.errstate(invalid="ignore", over="ignore"):                 # inf - inf: a NaN sum, as wanted
        bad = ~(kth[:, 0] > 4 * np.finfo(zn.dtype).tiny) | ~np.isfinite(zn.sum(axis=-1))
    if bad.any():                                                      # select on GELU(z), as the dense path
        rows = torch.from_numpy(np.flatnonzero(bad))
        a = F.gelu(z2.index_select(0, rows))                           # (n_bad, F)
        keep[rows.numpy()] = ~(a < kth_largest(a, k)).numpy()
    return torch.from_numpy(np.flatnonzero(keep))                      # (n_kept,), about N k


class _KeptGELU(torch.autograd.Function):
    """``GELU(z)`` with every unit below its row's ``k``-th largest set to 0, computed only for the kept
    units: ``z`` (..., F) -> (..., F), the same values and gradients as ``F.gelu`` + threshold +
    ``masked_fill_`` (:class:`SparseFFN`'s dense path). Saves the kept units' flat indices and
    pre-activations (about ``k / F`` of the tensor, 12 bytes each in float32) instead of ``z`` and a
    ``(..., F)`` mask. CPU, float32/float64 only (the caller checks). Our design (issue 26, lever 3)."""

    @staticmethod
    def forward(ctx, z: Tensor, k: int) -> Tensor:
        z = z.contiguous()
        flat = _kept_units(z, k)                                       # (n_kept,)
        zk = z.view(-1).index_select(0, flat)                          # (n_kept,)
        ctx.save_for_backward(flat, zk)
        ctx.shape = z.shape
        return _scatter_flat(F.gelu(zk), flat, z)                      # (..., F), about k non-zero a row

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: Tensor):
        flat, zk = ctx.saved_tensors
        gk = grad.contiguous().view(-1).index_select(0, flat)          # (n_kept,)
        return _scatter_flat(torch.ops.aten.gelu_backward(gk, zk), flat, grad), None


def _scatter_flat(values: Tensor, flat: Tensor, like: Tensor) -> Tensor:
    """Zeros shaped as ``like`` with ``values`` (n,) at the flat indices ``flat`` (n,); numpy's fancy
    assignment, measured 2x faster than ``zeros`` + ``index_copy_`` at (8192, 512), one thread."""
    out = torch.zeros(like.shape, dtype=like.dtype)
    out.numpy().reshape(-1)[flat.numpy()] = values.numpy()
    return out


class SparseFFN(nn.Module):
    """Position-wise FFN whose hidden layer keeps only its ``top_k`` largest activations.

    ``(B, T, D) -> (B, T, D)``. Paper: "sparse FFN, top-k with 6% of units active";
    ours: GELU before the selection, selection by value, gradients through the kept units.

    The selection is a threshold: the ``k``-th largest activation of each position
    (:func:`kth_largest`) is found without autograd, and every activation below it is zeroed in
    place, so no dense zero-filled tensor is built and nothing is scattered, forward or backward.
    Values and gradients equal a ``topk`` + scatter into zeros (``tests/test_spen.py``); the one
    difference is that activations tied with the ``k``-th value are all kept (exact float ties
    among the largest GELU outputs; none occur in practice in float32; in bfloat16/float16, where
    they do, the ``k`` indices of ``topk`` are kept instead). Measured (issue 14,
    ``figures/bench/sparse_ffn.csv``: the FFN's forward+backward at 4096 tokens, one thread; two
    runs): with the threshold from ``torch.topk``, the scatter, a mask multiply and the in-place
    mask cost the same within 11%, and a gather of the ``k`` active rows of the output projection
    (``embedding_bag``) is 1.5-1.7x slower; with the threshold from ``numpy.partition``
    (:func:`kth_largest`), the in-place mask is 1.24-1.40x faster than the scatter. The in-place
    mask is kept because it allocates no second ``(B, T, F)`` tensor.

    On the CPU in float32/float64 (issue 26, lever 3; ``fuse_gelu_mask = True``, a class attribute
    for benchmarks and tests) the units are selected on the pre-activation and GELU and its
    gradient are computed for the kept units only (:class:`_KeptGELU`, :func:`_kept_units`): the
    same kept set wherever a row's ``k``-th pre-activation is positive (other rows are selected on
    GELU, as above), so the same values and gradients (``tests/test_spen.py``: fp64 within 1e-12).
    Where they can differ: units whose float GELU ties or reorders within rounding of the ``k``-th
    one (GELU is monotone, its float rounding not strictly); the threshold on ``z`` then keeps by
    ``z`` (none in 262,144 random float32 rows at the benchmark width). Elsewhere (CUDA, half
    precision, autocast) the dense path runs. Measured (one thread, CPU time, on a shared 2-core
    machine at load 9-12, so ratios only): the FFN's forward+backward at (8192, 512) 1.07-1.15x
    faster; a SPEN training step at the benchmark sizes 1.04-1.07x (seq_len 1024) and 1.02-1.03x (4096),
    medians of paired rounds, three runs (``benchmarks/bench_levers.py``, ``chunked+gemm+ffn``), and its
    peak memory 26-148 MiB lower in two runs (``z`` and the mask are not kept for the backward).
    """

    fuse_gelu_mask: bool = True

    def __init__(self, config: SPENConfig):
        super().__init__()
        self.fc = nn.Linear(config.d_model, config.d_ff)
        self.proj = nn.Linear(config.d_ff, config.d_model)
        self.k = config.top_k

    def forward(self, x: Tensor) -> Tensor:
        z = self.fc(x)                                                 # (B, T, F): pre-activation
        if self.k < z.shape[-1] and self.fuse_gelu_mask and z.device.type == "cpu" \
                and z.dtype in (torch.float32, torch.float64):
            return self.proj(_KeptGELU.apply(z, self.k))               # (B, T, D)
        a = F.gelu(z)                                                  # (B, T, F)
        if self.k < a.shape[-1] and a.dtype in (torch.bfloat16, torch.float16):
            # half precision (autocast): exact ties at the k-th value are common, so keep topk's k
            # indices rather than a threshold (our design, issue 26); sync-free on a GPU
            keep = torch.zeros_like(a, dtype=torch.bool).scatter_(-1, a.detach().topk(self.k, dim=-1).indices, True)
            a = a.masked_fill_(~keep, 0.0)                             # (B, T, F), exactly k kept
        elif self.k < a.shape[-1]:
            kth = kth_largest(a, self.k)                               # (B, T, 1), no autograd
            a = a.masked_fill_(a < kth, 0.0)                           # (B, T, F), k non-zero
        return self.proj(a)                                            # (B, T, D)


class ContextMix(nn.Module):
    """The context mix through a bottleneck: ``[e_t; h_t^(1..S)] -> d_bottleneck -> d_model``.

    ``e`` (B, T, D) and ``traces`` (B, T, S, D) -> (B, T, D). Paper: "context mix" and a
    bottleneck in Figure 1; ours: its input (the error beside the traces), GELU, the width.
    """

    def __init__(self, config: SPENConfig):
        super().__init__()
        S = len(config.alphas)
        self.down = nn.Linear((S + 1) * config.d_model, config.d_bottleneck)
        self.up = nn.Linear(config.d_bottleneck, config.d_model)

    def forward(self, e: Tensor, traces: Tensor) -> Tensor:
        B, T, S, D = traces.shape
        z = torch.cat([e, traces.reshape(B, T, S * D)], dim=-1)        # (B, T, (S+1) D)
        return self.up(F.gelu(self.down(z)))                           # (B, T, D)


class SPENBlock(nn.Module):
    """One SPEN block (Figure 1): traces -> predict -> error -> context mix -> sparse FFN.

    ``(B, T, D) -> (B, T, D)``; the output at ``t`` depends on inputs at ``<= t`` only.
    With the linear predictor the prediction and the mix's input are one GEMM over the traces
    (:meth:`_linear_mix_in`); ``fuse_linear_mix = False`` (class attribute, for benchmarks and
    tests) runs the two modules one after the other.
    """

    fuse_linear_mix: bool = True

    def __init__(self, config: SPENConfig):
        super().__init__()
        self.alphas = config.alphas
        self.ln_1 = nn.LayerNorm(config.d_model)
        self.predictor = build_predictor(config.predictor, config)
        self.mix = ContextMix(config)
        self.ln_2 = nn.LayerNorm(config.d_model)
        self.ffn = SparseFFN(config)

    def forward(self, x: Tensor) -> Tensor:
        u = self.ln_1(x)                                               # (B, T, D)
        h = ema_traces(u, self.alphas, causal=True)                    # (B, T, S, D): u_{<t}
        if self.fuse_linear_mix and type(self.predictor) is LinearPredictor:  # paper's reader: one GEMM
            x = x + self.mix.up(F.gelu(self._linear_mix_in(u, h)))     # (B, T, D)
        else:
            e = u - self.predictor(u, h)                               # (B, T, D): error
            x = x + self.mix(e, h)                                     # (B, T, D)
        return x + self.ffn(self.ln_2(x))                              # (B, T, D)

    def _linear_mix_in(self, u: Tensor, h: Tensor) -> Tensor:
        """The mix's bottleneck input ``W_down [e; h] + b`` with ``e = u - (W_p h + b_p)``, one GEMM
        over the traces (issue 26, lever 2): ``[W_p; W_down,h] h`` gives the prediction and the
        traces' share of the bottleneck at once, so the ``(B, T, (S+1) D)`` concatenation is never
        built; the error's share ``W_down,e e`` is a second, ``D``-wide GEMM. Same parameters and
        the same function as ``mix(u - predictor(u, h), h)``, to float rounding
        (``tests/test_spen.py``). ``u`` (B, T, D), ``h`` (B, T, S, D) -> (B, T, d_bottleneck)."""
        B, T, S, D = h.shape
        p, down = self.predictor.proj, self.mix.down                   # (D, S D); (Db, (S+1) D): [e | h]
        y = F.linear(h.reshape(B, T, S * D), torch.cat([p.weight, down.weight[:, D:]]),
                     torch.cat([p.bias, down.bias]))                   # (B, T, D + Db): [x_hat | h part]
        e = u - y[..., :D]                                             # (B, T, D): prediction error
        return y[..., D:] + F.linear(e, down.weight[:, :D])            # (B, T, Db)


class SPEN(CausalLM):
    """The SPEN language model: token embedding, ``n_layer`` SPEN blocks, LayerNorm, tied head
    (:class:`paper_lib.models.lm.CausalLM`; no position table, any length works).

    ``forward(idx (B, T) int64, targets (B, T) | None)`` returns ``(logits (B, T, V), loss)``
    with ``loss`` the mean next-token cross-entropy in nats (``None`` without targets); with
    targets ``logits`` is None unless ``return_logits=True`` (:class:`~paper_lib.models.lm.CausalLM`).

    Raises:
        ValueError: ``idx`` not 2-D.
    """

    kind = "spen"

    def __init__(self, config: SPENConfig):
        super().__init__(config, SPENBlock, positions=False, residual_proj=("mix.up.weight", "ffn.proj.weight"))
