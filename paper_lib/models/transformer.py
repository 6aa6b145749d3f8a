"""A causal GPT-2-style Transformer: the in-project stand-in for GPT-2 in notebook 03.

nanoGPT's model (pre-norm blocks of causal self-attention and a 4x GELU MLP, learned
position embeddings, tied input/output embeddings, GPT-2 initialisation) with attention
through ``F.scaled_dot_product_attention(is_causal=True)``. It is matched to SPEN by
``d_model``, ``n_layer`` and ``vocab_size`` and trained on the same tokens with the same
budget. The paper compares SPEN with GPT-2 small (124M, C4 perplexity 33); this class with
the paper profile's sizes (12 x 768, 12 heads, 50257 tokens, 1024 positions) has GPT-2
small's architecture and 124M parameters. Our design otherwise: no dropout.

``positions="rotary"`` replaces the learned position table by rotary position embeddings
(RoPE; Su et al. 2021, "RoFormer"), the relative positions of the Transformers that Zoology
(Arora et al. 2023) and Mamba (Gu and Dao 2023) compare against: each head's queries and keys
are rotated by angles ``position * base ** (-2i / head_dim)``, so a query-key score depends on
the two tokens and their distance ``i - j`` only, never on where the pair sits in the window.
The pairs rotated together are the two halves of a head (GPT-NeoX's layout). Rotary adds no
parameter and drops the ``block_size x d_model`` table. ``attn_only=True`` drops the MLPs
(Olsson et al. 2022's attention-only models). Both are our design for notebook 03's cpu
study of in-context copying; the defaults are GPT-2's.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..pipeline.settings import check_fields, setting
from .lm import CausalLM

POSITIONS: tuple[str, ...] = ("learned", "rotary")
"""How the Transformer knows where a token is: a learned table added to the input, or rotary queries and keys."""


@dataclass
class TransformerConfig:
    """Sizes of the matched Transformer (defaults: GPT-2 small).

    Attributes:
        vocab_size: tokens. n_layer: blocks. d_model: residual width.
        n_head: attention heads (``d_model`` must be divisible by it).
        d_ff: MLP hidden units (GPT-2: 4 d_model). block_size: positions (tokens).
        positions: ``"learned"`` (GPT-2's table of ``block_size`` rows) or ``"rotary"`` (RoPE,
            no table; the head size ``d_model / n_head`` must be even).
        rope_base: rotary's base (RoFormer: 10000); the slowest pair turns once in about
            ``2 pi rope_base`` tokens. attn_only: blocks without the MLP.

    The sizes are counts (>= 1), checked on construction
    (:func:`paper_lib.pipeline.settings.check_fields`). Raises ValueError, one line.
    """

    vocab_size: int = 50257
    n_layer: int = 12
    d_model: int = 768
    n_head: int = 12
    d_ff: int = 3072
    block_size: int = 1024
    positions: str = "learned"
    rope_base: float = setting(10000.0, low=1, low_open=True)
    attn_only: bool = False

    def __post_init__(self):
        check_fields(self)
        if self.d_model % self.n_head:
            raise ValueError(f"TransformerConfig.n_head={self.n_head}: d_model ({self.d_model}) must be divisible by n_head")
        if self.positions not in POSITIONS:
            raise ValueError(f"TransformerConfig.positions={self.positions!r}: must be one of {', '.join(POSITIONS)}")
        if self.positions == "rotary" and (self.d_model // self.n_head) % 2:
            raise ValueError(f"TransformerConfig.positions='rotary': the head size d_model / n_head = "
                             f"{self.d_model // self.n_head} must be even")


def rotary_tables(n_pos: int, head_dim: int, base: float = 10000.0,
                  dtype: torch.dtype = torch.float32) -> tuple[Tensor, Tensor]:
    """``cos`` and ``sin`` of RoPE's angles ``m * base ** (-2i / head_dim)``, each ``(n_pos, head_dim)``
    in ``dtype`` (position ``m`` in rows; the ``head_dim / 2`` frequencies twice, one per half of a
    head), computed in float64 and rounded once."""
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)   # (hd/2,)
    angles = torch.outer(torch.arange(n_pos, dtype=torch.float64), inv_freq)            # (n_pos, hd/2)
    angles = torch.cat([angles, angles], dim=1)                                          # (n_pos, hd)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rotary(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate each pair ``(x[..., i], x[..., i + hd/2])`` of ``x`` (B, H, T, hd) by the angle of its
    position and frequency: ``x cos + rotate_half(x) sin`` with ``cos``, ``sin`` (T, hd)
    (:func:`rotary_tables`; RoFormer's eq. 34 in GPT-NeoX's layout). Same shape and dtype as ``x``."""
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos.to(x.dtype) + torch.cat([-x2, x1], dim=-1) * sin.to(x.dtype)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention, ``(B, T, D) -> (B, T, D)``; with ``positions="rotary"`` the
    queries and keys are rotated first (:func:`apply_rotary`; tables of ``block_size`` rows, not saved).

    Raises:
        ValueError: with rotary positions, ``T`` longer than ``block_size``.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.n_head = config.n_head
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)
        self.rotary = config.positions == "rotary"
        if self.rotary:
            cos, sin = rotary_tables(config.block_size, config.d_model // config.n_head, config.rope_base)
            self.register_buffer("cos", cos, persistent=False)          # (block_size, D/H)
            self.register_buffer("sin", sin, persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)                          # 3 x (B, T, D)
        q, k, v = (z.view(B, T, self.n_head, D // self.n_head).transpose(1, 2) for z in (q, k, v))
        if self.rotary:
            if T > self.cos.shape[0]:
                raise ValueError(f"sequence of {T} tokens is longer than block_size {self.cos.shape[0]}")
            q, k = apply_rotary(q, self.cos[:T], self.sin[:T]), apply_rotary(k, self.cos[:T], self.sin[:T])
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
    """Pre-norm Transformer block: ``x + attn(ln(x))``, then ``x + mlp(ln(x))`` (not with ``attn_only``)."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = None if config.attn_only else nn.LayerNorm(config.d_model)
        self.mlp = None if config.attn_only else MLP(config)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))
        return x if self.mlp is None else x + self.mlp(self.ln_2(x))


class Transformer(CausalLM):
    """GPT-2-style causal language model (:class:`paper_lib.models.lm.CausalLM` with a learned
    position table of ``block_size`` rows, or rotary attention, and :class:`Block`).

    Parameters: GPT-2 small's 124,439,808 at the defaults; rotary positions have
    ``block_size * d_model`` fewer (no table; 16,384 fewer at notebook 03's cpu sizes).

    ``forward(idx (B, T) int64, targets (B, T) | None)`` returns ``(logits (B, T, V), loss)``
    with ``loss`` the mean next-token cross-entropy in nats (``None`` without targets); with
    targets ``logits`` is None unless ``return_logits=True`` (:class:`~paper_lib.models.lm.CausalLM`).

    Raises:
        ValueError: ``idx`` not 2-D or longer than ``block_size``.
    """

    kind = "transformer"

    def __init__(self, config: TransformerConfig):
        super().__init__(config, Block, positions=config.positions == "learned",
                         residual_proj=("attn.proj.weight", "mlp.proj.weight"))
