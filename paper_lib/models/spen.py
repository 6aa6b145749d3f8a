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

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..ema import ema_traces, rates_setting
from ..pipeline.settings import check_fields, setting
from ..predictors import build_predictor
from ..predictors.linear import LinearPredictor
from .lm import CausalLM
from .sparse_ffn import SparseFFN, kth_largest  # noqa: F401  (kth_largest: re-exported for callers of spen)


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
    alphas: tuple[float, ...] = rates_setting()
    d_bottleneck: int = 256
    d_ff: int = 3072
    top_k_frac: float = setting(0.06, low=0, high=1, low_open=True)
    predictor: str = "linear"
    n_head: int | None = None
    block_size: int = 1024

    def __post_init__(self):
        if isinstance(self.alphas, (list, tuple)):
            self.alphas = tuple(float(a) if isinstance(a, int) and not isinstance(a, bool) else a for a in self.alphas)
        check_fields(self)

    @property
    def top_k(self) -> int:
        """Active FFN hidden units per token: ``max(1, round(top_k_frac * d_ff))``."""
        return max(1, round(self.top_k_frac * self.d_ff))


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
        over the traces (the ``chunked+gemm`` path of ``benchmarks/bench_levers.py``): ``[W_p; W_down,h] h`` gives the prediction and the
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
