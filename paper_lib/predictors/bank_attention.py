"""Attention among the S trace vectors of the bank at t: the base of the paper's two attention readers.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import Predictor, n_heads, reader_width


class BankAttention(Predictor):
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
        self.width = reader_width(config, (S + 3) * D)
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
