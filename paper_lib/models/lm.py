"""One causal language-model shell shared by SPEN and the Transformer (nanoGPT's frame).

:class:`CausalLM` owns what the two models share: the token embedding, an optional learned
position table, the final LayerNorm, the output head tied to the embedding, GPT-2's
initialisation (normal std 0.02, zero biases, residual projections scaled by
``1 / sqrt(2 n_layer)``), the next-token loss and the parameter count. A model supplies its
config and its block; the forward pass is

    x = wte(idx) [+ wpe(pos)]            # (B, T, D)
    x = block_l(x) for l = 1..n_layer    # (B, T, D)
    logits = wte^T LayerNorm(x)          # (B, T, V); with targets only the loss, chunk by chunk
                                         # (linear_cross_entropy: the logits are never held whole)

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


def _chunk_rows(n: int, vocab: int, d: int) -> int:
    """Rows per chunk of :func:`linear_cross_entropy`: Liger's rule, ``next_pow2(n / ceil(V / d))``,
    so a chunk's ``(rows, V)`` logits hold about as many numbers as the ``(n, d)`` inputs; at least 256."""
    rows = -(-n // -(-vocab // d))
    return max(256, 1 << max(0, rows - 1).bit_length())


class _LinearCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy of ``x @ weight.T`` and both its gradients, chunk by chunk over rows.

    The ``(N, V)`` logits are never held whole: each chunk's logits give its log-sum-exp, its share
    of the loss and, while they are in cache, ``grad x`` and ``grad weight`` (computed in the forward,
    scaled by the incoming gradient in the backward). Liger-Kernel's fused linear cross-entropy
    (Hsu et al. 2024), here in plain torch; our design for this project.
    """

    @staticmethod
    def forward(ctx, x, weight, targets, ignore_index, need_grad):   # x (N, D), weight (V, D), targets (N,)
        N, D = x.shape
        rows = _chunk_rows(N, weight.shape[0], D)
        valid = targets != ignore_index                                # (N,)
        n_valid = valid.sum()                                          # 0-d, no host sync
        acc = torch.promote_types(x.dtype, torch.float32)              # float32 at least (autocast too)
        loss = torch.zeros((), dtype=acc, device=x.device)
        gx = torch.empty_like(x) if need_grad else None                # (N, D)
        gw = torch.zeros(weight.shape, dtype=acc, device=x.device) if need_grad else None  # (V, D)
        for s in range(0, N, rows):
            xc, vc = x[s:s + rows], valid[s:s + rows]                  # (n, D), (n,)
            tc = targets[s:s + rows].clamp(min=0)[:, None]             # (n, 1): ignored rows read class 0
            z = xc @ weight.t()                                        # (n, V), autocast's dtype
            logits = z.to(acc)                                         # (n, V)
            lse = torch.logsumexp(logits, dim=1)                       # (n,)
            loss += torch.where(vc, lse - logits.gather(1, tc)[:, 0], 0.0).sum()
            if need_grad:                                              # d mean / d logits = (p - onehot) / n
                g = logits.sub_(lse[:, None]).exp_()                   # (n, V): softmax, in place
                g.scatter_add_(1, tc, g.new_full(tc.shape, -1.0))
                g = g.mul_((vc.to(acc) / n_valid)[:, None]).to(z.dtype)  # (n, V), ignored rows 0
                gx[s:s + rows] = g @ weight                            # (n, D)
                gw += g.t() @ xc                                       # (V, D)
        ctx.save_for_backward(gx, gw)
        ctx.weight_dtype = weight.dtype
        return loss / n_valid                                          # 0-d, nats

    @staticmethod
    def backward(ctx, grad):                                           # grad: 0-d
        gx, gw = ctx.saved_tensors
        return (gx * grad).to(gx.dtype), (gw * grad).to(ctx.weight_dtype), None, None, None


def linear_cross_entropy(x: Tensor, weight: Tensor, targets: Tensor, ignore_index: int = -100) -> Tensor:
    """``F.cross_entropy(x @ weight.T, targets, ignore_index=ignore_index)`` without the ``(N, V)`` logits.

    Args:
        x: ``(N, D)`` inputs of the output layer. weight: ``(V, D)`` its (bias-free) weight.
        targets: ``(N,)`` int64 classes in ``[0, V)``, or ``ignore_index`` (not counted).

    Returns:
        The mean over counted targets, a 0-d tensor in float32 (float64 for float64 ``x``; NaN when none is counted, as
        ``F.cross_entropy``). Values and gradients equal the unfused path to float rounding
        (``tests/test_lm_head.py``). Under autocast the matmuls run in autocast's dtype, the
        log-sum-exp in float32, as ``F.cross_entropy(logits.float())`` after an autocast layer.
    """
    need_grad = torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad)
    return _LinearCrossEntropy.apply(x, weight, targets, ignore_index, need_grad)


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

    ``forward(idx (B, T) int64, targets (B, T) | None, return_logits=False)`` returns
    ``(logits (B, T, V), loss)`` with ``loss`` the mean next-token cross-entropy in nats over the
    targets that are not -100 (``None`` without targets). With targets the loss comes from
    :func:`linear_cross_entropy` and ``logits`` is None (the ``(B, T, V)`` logits are never
    built); ``return_logits=True`` gives both, through ``F.cross_entropy`` (the unfused path).

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

    def forward(self, idx: Tensor, targets: Tensor | None = None, return_logits: bool = False):
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
        x = self.ln_f(x)                                               # (B, T, D)
        if targets is not None and not return_logits:                  # the loss alone: chunked, no logits
            return None, linear_cross_entropy(x.reshape(-1, x.shape[-1]), self.lm_head.weight, targets.reshape(-1))
        logits = self.lm_head(x)                                       # (B, T, V)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss

    @torch.no_grad()
    def residual_stream(self, idx: Tensor) -> list[Tensor]:
        """The residual stream entering the first block and leaving each block (before ``ln_f``):
        ``n_layer + 1`` tensors ``(B, T, D)``, index ``l`` after ``l`` blocks (0: the embedding,
        with positions where the model has them). ``idx`` (B, T) int64. Our design (it shows what
        each layer of a trained model still holds of the current and earlier tokens)."""
        x = self.wte(idx)                                              # (B, T, D)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        out = [x]
        for block in self.blocks:
            out.append(block(out[-1]))                                 # (B, T, D)
        return out

    def num_params(self) -> int:
        """Parameters, counting the tied embedding once."""
        return count_params(self)
