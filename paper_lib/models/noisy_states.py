"""Models whose recurrent state carries the resource model's noise (:mod:`paper_lib.bounds.noise_budget`):
the learned states of key-update recall (notebook 07) and its positive control.

Every model maps token ids ``(B, T)`` to the logits of the LAST position ``(B, vocab_size)``
(:func:`answer_logits`: the answer is due at the last token), and every state number receives
``sigma * N(0, 1)`` after every step, in training and in test (``sigma`` is an attribute; 0 turns
it off). Our design (the paper is silent):

- :class:`NoisyScanLM`, the selective scan: a diagonal linear recurrence whose decay each token
  sets (Mamba's; :mod:`paper_lib.models.scan_reader`'s form), written in the bank's normalised
  units, ``z_t = (1 - a_t) z_{t-1} + sqrt(a_t (2 - a_t)) tanh(W_v e_t) + sigma eps_t`` with
  ``a_t = sigmoid(W_a e_t + b)``: with constant rates it *is* a fixed bank of a code in [-1, 1].
  With ``selective=False`` it is that bank with learned rates, ``a = sigmoid(b)`` per channel: the
  time-invariant scan, the control that isolates input dependence (Gu and Dao 2023, Table 1).
- :class:`NoisyGRULM`, a GRU (state in [-1, 1]): ``h_t = GRUCell(e_t, h_{t-1}) + sigma eps_t``.
  Both read the state at the last position with an MLP (``d_state -> d_hidden -> vocab_size``).
- :class:`NoisySPEN`, SPEN (:mod:`paper_lib.models.spen`) whose traces carry the noise in normalised
  units; the traces read ``LayerNorm(x)`` without a learned gain, so no weight can buy precision.
- :class:`NoisyTransformer`, the positive control: the matched Transformer with ``sigma`` added to
  its keys and values (once: they are stored, not rewritten; nothing bounds their scale, so attention
  can outgrow the noise, which a positive control may).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..bounds.noise_budget import check_sigma, noisy_traces
from .lm import CausalLM
from .spen import SPEN, SPENBlock, SPENConfig
from .transformer import Block, CausalSelfAttention, Transformer, TransformerConfig


def _noise(x: Tensor, sigma: float) -> Tensor:
    return x + sigma * torch.randn_like(x) if sigma else x


class _Readout(nn.Module):
    """Embedding -> a recurrent state of ``d_state`` numbers -> MLP on the last state; subclasses
    write :meth:`last_state` ``(B, T, d_embed) -> (B, d_state)``."""

    def __init__(self, vocab_size: int, d_embed: int, d_state: int, d_hidden: int, sigma: float):
        super().__init__()
        self.sigma, self.d_state = check_sigma(sigma), d_state
        self.embed = nn.Embedding(vocab_size, d_embed)
        self.head = nn.Sequential(nn.Linear(d_state, d_hidden), nn.GELU(), nn.Linear(d_hidden, vocab_size))

    def forward(self, idx: Tensor) -> Tensor:
        """``(B, T)`` ids -> ``(B, vocab_size)`` logits of the last position."""
        if idx.ndim != 2 or idx.shape[1] == 0:
            raise ValueError(f"idx must have shape (B, T) with T >= 1, got {tuple(idx.shape)}")
        return self.head(self.last_state(self.embed(idx)))


class NoisyScanLM(_Readout):
    """The scan of ``d_state`` channels (module docstring): selective (each token sets every channel's
    decay) or, with ``selective=False``, **time-invariant** (each channel's decay a learned constant,
    the same at every step: S4 / S4D / LRU against Mamba's selective S6; everything else as it is).

    The rate bias starts log-spaced over ``rates`` (the paper's range: the scan starts as a fixed
    multi-rate bank and learns where to depart from it), the rate weights small, as
    :class:`paper_lib.models.scan_reader.LagReaderScan`'s. The readout needs only the last state,
    which :meth:`last_state` computes in closed form, ``z_T = sum_t exp(sum_{s > t} log(1 - a_s)) u_t``
    (``log(1 - a) = -softplus(rate)``, one reverse cumulative sum: no loop over time); :meth:`states`
    is the recurrence itself, the reference it is tested against.

    Raises:
        ValueError: ``rates`` not ``0 < lowest <= highest < 1``; ``sigma < 0``.
    """

    def __init__(self, vocab_size: int, d_embed: int = 64, d_state: int = 243, d_hidden: int = 256,
                 sigma: float = 0.0, rates: tuple[float, float] = (0.02, 0.5), selective: bool = True):
        super().__init__(vocab_size, d_embed, d_state, d_hidden, sigma)
        lo, hi = (float(r) for r in rates)
        if not 0 < lo <= hi < 1:
            raise ValueError(f"rates must satisfy 0 < lowest <= highest < 1, got {rates}")
        self.selective = bool(selective)
        self.value = nn.Linear(d_embed, d_state)
        r = torch.logspace(math.log10(hi), math.log10(lo), d_state)
        logit = torch.log(r) - torch.log1p(-r)                            # sigmoid(logit) = r
        if self.selective:
            self.rate = nn.Linear(d_embed, d_state)
            with torch.no_grad():
                self.rate.weight.mul_(0.1)
                self.rate.bias.copy_(logit)
        else:
            self.rate_logit = nn.Parameter(logit)                         # (N,) one rate per channel

    def _rates_and_writes(self, e: Tensor) -> tuple[Tensor, Tensor]:
        """``(r, u)``: the rate logits ``(B, T, N)`` (``a = sigmoid(r)``) and the noisy writes ``(B, T, N)``."""
        r = self.rate(e) if self.selective else self.rate_logit.expand(*e.shape[:2], -1)
        a = torch.sigmoid(r)                                              # (B, T, N) rates
        return r, _noise(torch.sqrt(a * (2 - a)) * torch.tanh(self.value(e)), self.sigma)  # write + this step's noise

    def states(self, e: Tensor) -> Tensor:
        """``(B, T, d_state)`` normalised noisy states of embeddings ``e`` ``(B, T, d_embed)``, by the
        recurrence ``z_t = (1 - a_t) z_{t-1} + u_t`` (the reference of :meth:`last_state`)."""
        r, u = self._rates_and_writes(e)
        z, out = torch.zeros_like(u[:, 0]), []
        for a_t, u_t in zip(torch.sigmoid(r).unbind(1), u.unbind(1), strict=True):
            z = (1 - a_t) * z + u_t
            out.append(z)
        return torch.stack(out, 1)

    def last_state(self, e: Tensor) -> Tensor:
        """``(B, d_state)``: the state after the last token, in closed form (class docstring)."""
        r, u = self._rates_and_writes(e)
        log_keep = -F.softplus(r)                                         # log(1 - a_t), (B, T, N)
        after = log_keep.flip(1).cumsum(1).flip(1) - log_keep            # sum over s > t
        return (after.exp() * u).sum(1)


class NoisyGRULM(_Readout):
    """A GRU of ``d_state`` numbers with noise after every step (module docstring)."""

    def __init__(self, vocab_size: int, d_embed: int = 64, d_state: int = 243, d_hidden: int = 256,
                 sigma: float = 0.0):
        super().__init__(vocab_size, d_embed, d_state, d_hidden, sigma)
        self.cell = nn.GRUCell(d_embed, d_state)

    def last_state(self, e: Tensor) -> Tensor:
        h = e.new_zeros(e.shape[0], self.d_state)
        for x in e.unbind(1):
            h = _noise(self.cell(x, h), self.sigma)                       # (B, N)
        return h


class NoisySPENBlock(SPENBlock):
    """A SPEN block whose traces carry the noise (:func:`paper_lib.bounds.noise_budget.noisy_traces`,
    causal) and read ``LayerNorm(x)`` without a learned gain."""

    def __init__(self, config: SPENConfig, sigma: float):
        super().__init__(config)
        self.sigma = check_sigma(sigma)
        self.ln_1 = nn.LayerNorm(config.d_model, elementwise_affine=False)

    def traces(self, u: Tensor) -> Tensor:
        return noisy_traces(u, self.alphas, self.sigma, causal=True)


class NoisySPEN(SPEN):
    """SPEN of :class:`NoisySPENBlock` blocks; ``forward(idx)`` -> ``(B, vocab_size)`` (last position)."""

    def __init__(self, config: SPENConfig, sigma: float = 0.0):
        CausalLM.__init__(self, config, lambda c: NoisySPENBlock(c, sigma), positions=False,
                          residual_proj=("mix.up.weight", "ffn.proj.weight"))

    def forward(self, idx: Tensor) -> Tensor:
        return super().forward(idx)[0][:, -1]


class NoisyAttention(CausalSelfAttention):
    """Causal self-attention with ``sigma`` added to every key and value number."""

    def __init__(self, config: TransformerConfig, sigma: float):
        super().__init__(config)
        self.sigma = check_sigma(sigma)

    def forward(self, x: Tensor) -> Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)                           # 3 x (B, T, D)
        k, v = _noise(k, self.sigma), _noise(v, self.sigma)
        q, k, v = (z.view(B, T, self.n_head, D // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)    # (B, H, T, D/H)
        return self.proj(y.transpose(1, 2).reshape(B, T, D))


class NoisyTransformer(Transformer):
    """The matched Transformer with :class:`NoisyAttention`; ``forward(idx)`` -> ``(B, vocab_size)``."""

    def __init__(self, config: TransformerConfig, sigma: float = 0.0):
        def block(c: TransformerConfig) -> Block:
            b = Block(c)
            b.attn = NoisyAttention(c, sigma)
            return b
        CausalLM.__init__(self, config, block, positions=True, residual_proj=("attn.proj.weight", "mlp.proj.weight"))

    def forward(self, idx: Tensor) -> Tensor:
        return super().forward(idx)[0][:, -1]
