"""One causal language-model shell shared by SPEN and the Transformer (nanoGPT's frame).

:class:`CausalLM` owns what the two models share: the token embedding, an optional learned
position table, the final LayerNorm, the output head tied to the embedding, GPT-2's
initialisation (normal std 0.02, zero biases, residual projections scaled by
``1 / sqrt(2 n_layer)``), the next-token loss and the parameter count. A model supplies its
config and its block; the forward pass is

    x = wte(idx) [+ wpe(pos)]            # (B, T, D)
    x = block_l(x) for l = 1..n_layer    # (B, T, D)
    logits = wte^T LayerNorm(x)          # (B, T, V)

Our design (the paper is silent): tied embeddings, GPT-2's initialisation for SPEN too.
"""
from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def gpt2_init_weights(module: nn.Module) -> None:
    """GPT-2's initialisation (normal std 0.02, zero biases), for ``model.apply``."""
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Embedding):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)


def count_params(model: nn.Module) -> int:
    """Parameters of ``model``, shared (tied) tensors counted once."""
    return sum(p.numel() for p in model.parameters())


class CausalLM(nn.Module):
    """Embedding, ``n_layer`` blocks, LayerNorm and a tied head; subclasses name their blocks.

    Args:
        config: a dataclass with ``vocab_size``, ``d_model``, ``n_layer`` and ``block_size``.
        make_block: ``config -> nn.Module`` mapping ``(B, T, D) -> (B, T, D)`` causally.
        positions: add a learned position table of ``block_size`` rows (the Transformer) or
            not (SPEN: its traces carry all temporal information).
        residual_proj: parameter-name suffixes of the projections into the residual stream,
            initialised with std ``0.02 / sqrt(2 n_layer)`` (GPT-2).

    ``forward(idx (B, T) int64, targets (B, T) | None)`` returns ``(logits (B, T, V), loss)``
    with ``loss`` the mean next-token cross-entropy in nats (``None`` without targets).

    Raises:
        ValueError: ``idx`` not 2-D, or (with positions) longer than ``block_size``.
    """

    kind: str = "lm"

    def __init__(self, config, make_block: Callable[[object], nn.Module], positions: bool,
                 residual_proj: tuple[str, ...]):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)
        self.wpe = nn.Embedding(config.block_size, config.d_model) if positions else None
        self.blocks = nn.ModuleList(make_block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.d_model)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight                          # tied embeddings
        self.apply(gpt2_init_weights)
        for name, p in self.named_parameters():                        # GPT-2's scaled residual init
            if name.endswith(residual_proj):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def forward(self, idx: Tensor, targets: Tensor | None = None):
        if idx.ndim != 2:
            raise ValueError(f"idx must have shape (B, T), got {tuple(idx.shape)}")
        x = self.wte(idx)                                              # (B, T, D)
        if self.wpe is not None:
            T = idx.shape[1]
            if T > self.config.block_size:
                raise ValueError(f"sequence of {T} tokens is longer than block_size {self.config.block_size}")
            x = x + self.wpe(torch.arange(T, device=idx.device))       # (B, T, D)
        for block in self.blocks:
            x = block(x)                                               # (B, T, D)
        logits = self.lm_head(self.ln_f(x))                            # (B, T, V)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss

    def num_params(self) -> int:
        """Parameters, counting the tied embedding once."""
        return count_params(self)
