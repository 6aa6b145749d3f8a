"""A causal GPT-2-style Transformer: the in-project stand-in for GPT-2 in notebook 03.

nanoGPT's model (pre-norm blocks of causal self-attention and a 4x GELU MLP, learned
position embeddings, tied input/output embeddings, GPT-2 initialisation) with attention
through ``F.scaled_dot_product_attention(is_causal=True)``. It is matched to SPEN by
``d_model``, ``n_layer`` and ``vocab_size`` and trained on the same tokens with the same
budget. The paper compares SPEN with GPT-2 small (124M, C4 perplexity 33); this class with
the paper profile's sizes (12 x 768, 12 heads, 50257 tokens, 1024 positions) has GPT-2
small's architecture and 124M parameters. Our design otherwise: no dropout.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch.nn.functional as F
from torch import Tensor, nn

from ..pipeline.settings import check_fields
from .lm import CausalLM


@dataclass
class TransformerConfig:
    """Sizes of the matched Transformer (defaults: GPT-2 small).

    Attributes:
        vocab_size: tokens. n_layer: blocks. d_model: residual width.
        n_head: attention heads (``d_model`` must be divisible by it).
        d_ff: MLP hidden units (GPT-2: 4 d_model). block_size: positions (tokens).

    Every field is a count (>= 1), checked on construction
    (:func:`paper_lib.pipeline.settings.check_fields`). Raises ValueError, one line.
    """

    vocab_size: int = 50257
    n_layer: int = 12
    d_model: int = 768
    n_head: int = 12
    d_ff: int = 3072
    block_size: int = 1024

    def __post_init__(self):
        check_fields(self)
        if self.d_model % self.n_head:
            raise ValueError(f"TransformerConfig.n_head={self.n_head}: d_model ({self.d_model}) must be divisible by n_head")


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention, ``(B, T, D) -> (B, T, D)``."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.n_head = config.n_head
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)

    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)                          # 3 x (B, T, D)
        q, k, v = (z.view(B, T, self.n_head, D // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)    # (B, H, T, D/H)
        return self.proj(y.transpose(1, 2).reshape(B, T, D))           # (B, T, D)


class MLP(nn.Module):
    """GPT-2's dense MLP, ``(B, T, D) -> (B, T, D)``."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.fc = nn.Linear(config.d_model, config.d_ff)
        self.proj = nn.Linear(config.d_ff, config.d_model)

    def forward(self, x: Tensor) -> Tensor:
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    """Pre-norm Transformer block: ``x + attn(ln(x))``, then ``x + mlp(ln(x))``."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.d_model)
        self.mlp = MLP(config)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Transformer(CausalLM):
    """GPT-2-style causal language model (:class:`paper_lib.models.lm.CausalLM` with a learned
    position table of ``block_size`` rows and :class:`Block`).

    ``forward(idx (B, T) int64, targets (B, T) | None)`` returns ``(logits (B, T, V), loss)``
    with ``loss`` the mean next-token cross-entropy in nats (``None`` without targets); with
    targets ``logits`` is None unless ``return_logits=True`` (:class:`~paper_lib.models.lm.CausalLM`).

    Raises:
        ValueError: ``idx`` not 2-D or longer than ``block_size``.
    """

    kind = "transformer"

    def __init__(self, config: TransformerConfig):
        super().__init__(config, Block, positions=True, residual_proj=("attn.proj.weight", "mlp.proj.weight"))
