"""The paper's softmax-attention reader of the trace bank at t.
"""
from __future__ import annotations

from .bank_attention import BankAttention
from .base import register_predictor


@register_predictor("softmax_attention")
class SoftmaxAttentionPredictor(BankAttention):
    """The paper's "full softmax attention" reader, over the trace bank at t.

    Sees: only the S traces at t (``traces[:, t]``, which hold ``u_{<t}``): bounded by the
    data processing inequality. Scaled dot-product softmax attention among the S trace tokens
    (queries from the traces themselves, see :class:`BankAttention`). The paper's: softmax
    attention over the traces; ours: the tokens, the query's source, heads and width.
    ``(B, T, D), (B, T, S, D) -> (B, T, D)``.
    """

    label, sees, paper = "softmax attention", "trace bank at t (softmax attention among its S traces)", True
    softmax = True
