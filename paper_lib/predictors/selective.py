"""Control (ours): an EMA whose rate is chosen by the input (Mamba-style selection).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..ema import SELECTIVE_MAX_RATE, selective_scan
from .base import Predictor, reader_width, register_predictor


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
    linear predictor's parameters; ``d_state`` sets ``N`` instead (notebook 05's equal-state
    control: ``N = S d``, the size of the fixed trace bank). Scan: :func:`selective_scan`.
    ``(B, T, D), (B, T, S, D) -> (B, T, D)``.

    Raises:
        ValueError: ``d_state`` below 1.
    """

    label, sees = "selective EMA", "u_{<t} through a learned input-dependent EMA"
    bounded, keeps = False, "learned selective"

    @classmethod
    def added_state(cls, config, seq_len: int, d_state: int | None = None) -> int:
        """Its learned state ``N``: ``d_state``, or the default ``S d / 3``."""
        return d_state if d_state is not None else reader_width(config, 3 * config.d_model)

    def __init__(self, config, d_state: int | None = None):
        super().__init__(config)
        D = config.d_model
        if d_state is not None and (isinstance(d_state, bool) or not isinstance(d_state, int) or d_state < 1):
            raise ValueError(f"selective d_state must be an integer >= 1 or None, got {d_state!r}")
        self.max_rate = SELECTIVE_MAX_RATE
        self.d_state = reader_width(config, 3 * D) if d_state is None else d_state
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
