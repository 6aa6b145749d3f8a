"""Control (ours): causal softmax attention over the whole history of trace banks.
"""
from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .base import Predictor, n_heads, reader_width, register_predictor


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

    label, sees = "history attention", "trace banks h_1..h_t (causal softmax attention)"
    bounded, keeps = False, "every earlier trace bank"

    @classmethod
    def added_state(cls, config, seq_len: int, d_state: int | None = None) -> int:
        """Every earlier position, counted as the Transformer's keys and values: ``2 d_model`` each."""
        return 2 * config.d_model * seq_len

    def __init__(self, config):
        super().__init__(config)
        S, D = len(config.alphas), config.d_model
        self.n_head = n_heads(config)
        self.width = reader_width(config, (3 * S + 1) * D)
        self.qkv = nn.Linear(S * D, 3 * self.width)
        self.out = nn.Linear(self.width, D)

    def forward(self, u: Tensor, traces: Tensor) -> Tensor:
        B, T, S, D = traces.shape
        H, w = self.n_head, self.width
        qkv = self.qkv(traces.reshape(B, T, S * D))                      # (B, T, 3w)
        q, k, v = (x.view(B, T, H, w // H).transpose(1, 2) for x in qkv.split(w, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)      # (B, H, T, w/H), t' <= t
        return self.out(y.transpose(1, 2).reshape(B, T, w))              # (B, T, D)
