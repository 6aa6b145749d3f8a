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

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn


@dataclass
class TransformerConfig:
    """Sizes of the matched Transformer (defaults: GPT-2 small).

    Attributes:
        vocab_size: tokens. n_layer: blocks. d_model: residual width.
        n_head: attention heads (``d_model`` must be divisible by it).
        d_ff: MLP hidden units (GPT-2: 4 d_model). block_size: positions (tokens).
    """

    vocab_size: int = 50257
    n_layer: int = 12
    d_model: int = 768
    n_head: int = 12
    d_ff: int = 3072
    block_size: int = 1024

    def __post_init__(self):
        for name in ("vocab_size", "n_layer", "d_model", "n_head", "d_ff", "block_size"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_head ({self.n_head})")


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


class Transformer(nn.Module):
    """GPT-2-style causal language model.

    ``forward(idx (B, T) int64, targets (B, T) | None)`` returns ``(logits (B, T, V), loss)``
    with ``loss`` the mean next-token cross-entropy in nats (``None`` without targets).

    Raises:
        ValueError: ``idx`` not 2-D or longer than ``block_size``.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)
        self.wpe = nn.Embedding(config.block_size, config.d_model)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.d_model)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight                          # tied embeddings
        self.apply(gpt2_init_weights)
        for name, p in self.named_parameters():                        # GPT-2's scaled residual init
            if name.endswith(("attn.proj.weight", "mlp.proj.weight")):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def forward(self, idx: Tensor, targets: Tensor | None = None):
        if idx.ndim != 2:
            raise ValueError(f"idx must have shape (B, T), got {tuple(idx.shape)}")
        T = idx.shape[1]
        if T > self.config.block_size:
            raise ValueError(f"sequence of {T} tokens is longer than block_size {self.config.block_size}")
        pos = torch.arange(T, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)                              # (B, T, D)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))                            # (B, T, V)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss

    def num_params(self) -> int:
        """Parameters, counting the tied embedding once."""
        return sum(p.numel() for p in self.parameters())

    def config_dict(self) -> dict:
        return {"model": "transformer", **asdict(self.config)}


def gpt2_init_weights(module: nn.Module) -> None:
    """GPT-2's initialisation (normal std 0.02, zero biases), for ``model.apply``; SPEN uses it
    too (ours: the paper is silent)."""
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
