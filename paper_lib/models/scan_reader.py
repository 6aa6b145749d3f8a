"""A selective scan trained to keep the past: the second learned state of notebook 06's panel A.

The issue asks for "a trained gated recurrence or selective scan" of the fixed bank's size; the
GRU (:class:`paper_lib.models.gru.LagReaderGRU`) is the gated recurrence, this is the selective
scan: a diagonal linear recurrence whose decay depends on the input, as in Mamba (Gu & Dao,
2023), here in the selective EMA form of :func:`paper_lib.ema_selective.selective_scan`:

    ``v_t = W_v x_t``, ``a_t = max_rate * sigmoid(W_a x_t + b)``, ``g_t = (1 - a_t) g_{t-1} + a_t v_t``

with ``g_t`` ``d_state`` numbers (no hidden nonlinearity in the recurrence, unlike the GRU, and
unlike the fixed bank, whose rates are constants: here each channel's rate is chosen per token).
Linear heads read, from ``g_t``, the label of the token at ``t - k`` for every trained lag (the
heads and the loss are the GRU reader's). The rate bias starts spread over the paper's range
(channel ``i``'s initial rate ``max_rate * sigmoid(b_i)`` from about 0.5 down to 0.02) so that the
scan starts as a fixed multi-rate bank and learns where to depart from it. **Our design**: the paper is silent.

Shapes: inputs ``x`` ``(B, T, d_input)`` float; states ``(B, T, d_state)``.
"""
from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import Tensor, nn

from ..ema_selective import SELECTIVE_MAX_RATE, selective_scan
from .gru import LagReaderGRU


class LagReaderScan(LagReaderGRU):
    """A selective scan of ``d_state`` channels over fixed input vectors, with the lag heads of
    :class:`~paper_lib.models.gru.LagReaderGRU` (module docstring).

    Args:
        d_input: width of the inputs. d_state: the state's size (channels of the scan).
        n_out: ``{target: classes}``. lags: the trained lags (>= 0).
        rates: (lowest, highest) initial rate of the channels (log-spaced), in (0, max_rate).
        selective: False makes the scan time-invariant: each channel's rate a learned constant, the
            same at every step and for every input (S4 against Mamba's S6; everything else as it is).

    Raises:
        ValueError: ``rates`` not two numbers with ``0 < lowest <= highest < SELECTIVE_MAX_RATE``.
    """

    def __init__(self, d_input: int, d_state: int, n_out: dict[str, int], lags: Sequence[int],
                 rates: tuple[float, float] = (0.02, 0.5), selective: bool = True):
        lo, hi = (float(r) for r in rates)
        if not 0 < lo <= hi < SELECTIVE_MAX_RATE:
            raise ValueError(f"rates must satisfy 0 < lowest <= highest < {SELECTIVE_MAX_RATE:.3f}, got {rates}")
        nn.Module.__init__(self)                                         # the GRU reader's loss, not its GRU
        self.value = nn.Linear(d_input, d_state, bias=False)
        r = torch.logspace(math.log10(hi), math.log10(lo), d_state) / SELECTIVE_MAX_RATE
        self.rate = nn.Linear(d_input, d_state)
        with torch.no_grad():
            self.rate.weight.mul_(0.1)                                  # input-dependence grows from small
            self.rate.bias.copy_(torch.log(r) - torch.log1p(-r))        # sigmoid(b) * max_rate = r
        if not selective:                                               # one learned rate per channel, constant
            self.rate.weight.requires_grad_(False).zero_()
        self.lags = [int(k) for k in lags]
        self.heads = nn.ModuleDict({f"{t}_{k}": nn.Linear(d_state, n) for t, n in n_out.items() for k in self.lags})

    def states(self, x: Tensor) -> Tensor:
        """``(B, T, d_state)`` states ``g_t`` of inputs ``x`` ``(B, T, d_input)``."""
        return selective_scan(self.rate(x), self.value(x))
