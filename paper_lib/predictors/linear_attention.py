"""The paper's linear-attention reader of the trace bank at t.
"""
from __future__ import annotations

from .bank_attention import BankAttention
from .base import register_predictor


@register_predictor("linear_attention")
class LinearAttentionPredictor(BankAttention):
    """The paper's "linear attention" reader, over the trace bank at t.

    Sees: only the S traces at t (``traces[:, t]``, which hold ``u_{<t}``), so it is bounded by
    the data processing inequality like ``linear``. Attention among the S trace tokens (queries
    from the traces themselves, see :class:`BankAttention`) with the feature map
    ``elu(x) + 1`` in place of the softmax. The paper's: that the reader is linear attention
    over the traces; ours: the tokens (one per timescale, plus a timescale embedding), where
    the query comes from, the heads, the width. ``(B, T, D), (B, T, S, D) -> (B, T, D)``.
    """

    label, sees, paper = "linear attention", "trace bank at t (linear attention among its S traces)", True
    softmax = False
