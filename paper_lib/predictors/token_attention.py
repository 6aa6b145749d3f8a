"""Control (ours): causal self-attention over the block inputs themselves.
"""
from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .base import Predictor, n_heads, reader_width, register_predictor


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

    label, sees = "token attention", "u_{<t} directly (causal self-attention)"
    bounded, keeps = False, "every earlier token"

    @classmethod
    def added_state(cls, config, seq_len: int, d_state: int | None = None) -> int:
        """Every earlier token, counted as the Transformer's keys and values: ``2 d_model`` each."""
        return 2 * config.d_model * seq_len

    def __init__(self, config):
        super().__init__(config)
        D = config.d_model
        self.n_head = n_heads(config)
        self.width = reader_width(config, 4 * D)
        self.qkv = nn.Linear(D, 3 * self.width)
        self.out = nn.Linear(self.width, D)

    def forward(self, u: Tensor, traces: Tensor) -> Tensor:
        B, T, D = u.shape
        H, w = self.n_head, self.width
        q, k, v = (x.view(B, T, H, w // H).transpose(1, 2) for x in self.qkv(u).split(w, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)      # (B, H, T, w/H): u_{<=t}
        y = F.pad(y.transpose(1, 2).reshape(B, T, w)[:, :-1], (0, 0, 1, 0))  # (B, T, w): u_{<t}
        return self.out(y)                                               # (B, T, D)
