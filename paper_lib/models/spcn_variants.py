"""What SPCN's learning can contribute: the no-learning floor, an error-driven SPCN in which
learning changes the probed code *nonlinearly*, and its backpropagation ceiling.

In :class:`paper_lib.models.spcn.SPCN` the probed features are ``[h^l, P^l h^l]``: the learned
weights add only a linear function of traces the probe already reads, and level 1's activity
is a fixed function of the current word, so a linear probe cannot see what PGHU learned. This
module separates three sources of accuracy (**our design: the paper is silent**):

- :func:`level1_traces`, the **floor**: the EMA traces of level 1's sparse codes of the fixed
  random word codes, ``(N_tokens, S N)``. Nothing in it is learned.
- :class:`ErrorSPCN`, **learning reaches the probe**: level 1 is SPCN's (fixed codes, k-WTA,
  traces, ``P^1`` learned by PGHU, Oja or nothing); level 2 reads the *precision-weighted
  prediction error* of level 1,

      e_t = pi * (a^1_t - P^1 h^1_{t-1}),   a^2_t = kWTA(R^2 e_t),   h^2 = EMA_traces(a^2)

  with ``pi`` the per-unit precision (inverse error variance on the training sentences,
  normalised to mean 1), the quantity PGHU gates by. Why this variant and not a competitive
  Hebbian projection: it keeps the paper's predictive-coding reading (errors passed up the
  hierarchy) and the paper's rule unchanged, and the learned ``P^1`` enters the probed code
  through the k-WTA, a nonlinearity, so a change in ``P^1`` changes *which* level-2 units fire.
  With no learning (``P^1 = 0``) the error is the word's own code and level 2 is again a fixed
  function of the current word: the comparison "rule vs none" is then what learning adds.
- :func:`fit_backprop`, the **ceiling**: the same wiring with ``P^1``, the precision vector and
  the level-2 projection (``R^2``, fixed random above) trained by gradient descent (Adam) on the
  same label-free next-activity objective, predicting ``a^1_{t+1}`` from ``[h^1_t, h^2_t]``. The
  k-WTA stays hard in the forward pass; its gradient is a per-column softmax (straight-through).

All three are causal (features at t read words 1..t) and see no role label. Features are
``(N_tokens, F)`` float32 numpy, sentence after sentence, aligned with ``Corpus.flat_roles()``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from ..ema import ema_traces
from .spcn import SPCN, SPCNConfig, _hash_seed, kwta_columns

PARTS: tuple[str, ...] = ("both", "level2")
"""What :meth:`ErrorSPCN.token_features` returns: level-1 and level-2 traces, or level 2's alone."""


def _batches(sentences, batch_size):
    for i in range(0, len(sentences), batch_size):
        yield sentences[i: i + batch_size]


def _token_rows(levels, sentences: Sequence[Sequence[str]], part: str, batch_size: int) -> np.ndarray:
    """Per-token features of a two-level model, sentence after sentence, ``batch_size`` sentences
    at a time: the part :meth:`ErrorSPCN.token_features` and :meth:`BackpropSPCN.token_features` share.

    ``levels(chunk) -> (h1 (B, T, S N), h2 (B, T, S N), mask (B, T) bool)``; ``part="both"``
    gives ``[h1, h2]`` (``(N_tokens, 2 S N)`` float32), ``"level2"`` ``h2`` (``(N_tokens, S N)``).

    Raises:
        ValueError: ``part`` not in :data:`PARTS`.
    """
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}; allowed: {', '.join(PARTS)}")
    rows = []
    for chunk in _batches(sentences, batch_size):
        h1, h2, mask = levels(chunk)
        f = h2 if part == "level2" else torch.cat([h1, h2], -1)
        rows.append(f[mask].numpy())
    return np.concatenate(rows, 0)


def level1_traces(spcn: SPCN, sentences: Sequence[Sequence[str]], batch_size: int = 256) -> np.ndarray:
    """The floor: level-1 EMA traces of the fixed word codes, ``(N_tokens, S * N)`` float32.

    Independent of any learned weight (level 1's codes and projection are fixed).
    """
    rows = []
    for chunk in _batches(sentences, batch_size):
        levels, mask = spcn.forward_levels(chunk, n_levels=1)
        rows.append(levels[0][1].flatten(2)[mask].numpy())              # (n, S N)
    return np.concatenate(rows, 0)


class ErrorSPCN:
    """SPCN whose level 2 reads level 1's precision-weighted prediction errors (module docstring).

    Usage: ``m = ErrorSPCN(cfg).fit(train_sentences)``; ``m.token_features(sents, part)``.
    ``cfg.rule`` (pghu | hebbian | none) learns ``P^1``; ``cfg.n_levels`` is ignored (two levels).

    Raises:
        ValueError: bad configuration (see :class:`SPCNConfig`), an unknown ``part``.
    """

    def __init__(self, config: SPCNConfig | None = None, eps: float = 1e-3):
        self.cfg = cfg = config or SPCNConfig()
        self.base = SPCN(cfg)                                              # level 1: codes, R^1, P^1
        N = cfg.n_units
        gen = torch.Generator().manual_seed(_hash_seed("error-projection", cfg.seed) % (2**63))
        self.R2 = torch.randn(N, N, generator=gen) / N ** 0.5              # (N, N) fixed random
        self.precision = torch.ones(N)                                     # (N,) set by fit
        self.eps = eps

    @torch.no_grad()
    def _error(self, sentences) -> tuple[Tensor, Tensor, Tensor]:
        """Level-1 traces ``(B, T, S, N)``, raw errors ``(B, T, N)`` and mask ``(B, T)``."""
        levels, mask = self.base.forward_levels(sentences, n_levels=1)
        a, h, y = levels[0]
        y_prev = torch.cat([torch.zeros_like(y[:, :1]), y[:, :-1]], 1)    # prediction of a_t made at t-1
        return h, (a - y_prev) * mask[..., None], mask

    @torch.no_grad()
    def fit(self, sentences: Sequence[Sequence[str]], progress: bool = False) -> "ErrorSPCN":
        """Learn ``P^1`` with ``cfg.rule`` (no labels), then the precision of each unit's error
        on ``sentences``. Returns ``self``."""
        self.base.fit(sentences, progress=progress, n_levels=1)
        total, sq, n = 0.0, 0.0, 0
        for chunk in _batches(sentences, 256):
            _, e, mask = self._error(chunk)
            e = e[mask].double()                                           # (n, N)
            total, sq, n = total + e.sum(0), sq + (e * e).sum(0), n + e.shape[0]
        var = sq / n - (total / n) ** 2
        pi = 1.0 / (var + self.eps)
        self.precision = (pi / pi.mean()).float()
        return self

    @torch.no_grad()
    def token_features(self, sentences: Sequence[Sequence[str]], part: str = "both",
                       batch_size: int = 256) -> np.ndarray:
        """``(N_tokens, F)``: ``part="both"`` gives ``[h^1, h^2]`` (F = 2 S N), ``"level2"`` ``h^2``."""
        cfg = self.cfg

        def levels(chunk):
            h1, e, mask = self._error(chunk)
            a2 = kwta_columns((self.precision * e) @ self.R2.T, cfg.n_columns, cfg.top_k) * mask[..., None]
            return h1.flatten(2), ema_traces(a2, cfg.alphas).flatten(2), mask   # (B, T, S N) each

        return _token_rows(levels, sentences, part, batch_size)


# ----------------------------------------------------------------------------- backprop ceiling
@dataclass
class BackpropConfig:
    """Training of the backpropagation ceiling (our design)."""

    lr: float = 1e-2           # Adam step size
    epochs: int = 2            # passes over the training sentences
    batch_size: int = 32       # sentences per step
    temperature: float = 0.5   # softmax temperature of the straight-through k-WTA gradient

    def __post_init__(self):
        if self.lr <= 0 or self.epochs < 0 or self.batch_size < 1 or self.temperature <= 0:
            raise ValueError("lr and temperature must be > 0, epochs >= 0, batch_size >= 1")


def _kwta_st(z: Tensor, n_columns: int, top_k: int, temperature: float) -> Tensor:
    """Hard k-WTA forward, per-column softmax (times ``top_k``) gradient."""
    hard = kwta_columns(z.detach(), n_columns, top_k)
    soft = (z.reshape(*z.shape[:-1], n_columns, -1) / temperature).softmax(-1).reshape(z.shape) * top_k
    return hard + soft - soft.detach()


class _Ceiling(nn.Module):
    def __init__(self, cfg: SPCNConfig, R2: Tensor):
        super().__init__()
        N, S = cfg.n_units, len(cfg.alphas)
        self.cfg = cfg
        self.P1 = nn.Parameter(torch.zeros(N, S * N))                     # level-1 prediction
        self.log_pi = nn.Parameter(torch.zeros(N))                        # precision (log)
        self.W2 = nn.Parameter(R2.clone())                                 # level-2 projection
        self.Q = nn.Linear(2 * S * N, N)                                   # next-activity readout

    def forward(self, a1: Tensor, h1: Tensor, mask: Tensor, temperature: float):
        """``a1`` (B, T, N), ``h1`` (B, T, S, N) -> features (B, T, 2 S N), loss (scalar)."""
        cfg = self.cfg
        hf = h1.flatten(2)                                                 # (B, T, S N)
        y = hf @ self.P1.T                                                 # (B, T, N)
        y_prev = torch.cat([torch.zeros_like(y[:, :1]), y[:, :-1]], 1)
        e = (a1 - y_prev) * self.log_pi.exp() * mask[..., None]
        a2 = _kwta_st(e @ self.W2.T, cfg.n_columns, cfg.top_k, temperature) * mask[..., None]
        h2 = ema_traces(a2, cfg.alphas).flatten(2)                         # (B, T, S N)
        feats = torch.cat([hf, h2], -1)
        m = mask[:, 1:]
        target = a1[:, 1:][m]
        loss = ((y[:, :-1][m] - target) ** 2).mean() + ((self.Q(feats[:, :-1])[m] - target) ** 2).mean()
        return feats, loss


class BackpropSPCN:
    """The error-driven SPCN trained end to end by backpropagation (the label-free ceiling).

    Usage: ``m = BackpropSPCN(spcn_cfg, bp_cfg).fit(train_sentences)``; ``m.token_features(sents, part)``.
    Level 1's codes and projection are fixed (as in every SPCN); ``P^1``, the precision and
    the level-2 projection learn by Adam on next-activity MSE. ``history``: mean loss per epoch
    (squared activity units).
    """

    def __init__(self, config: SPCNConfig | None = None, bp: BackpropConfig | None = None):
        self.cfg = cfg = config or SPCNConfig()
        self.bp = bp or BackpropConfig()
        self.base = ErrorSPCN(cfg)
        torch.manual_seed(_hash_seed("backprop", cfg.seed) % (2**31))
        self.net = _Ceiling(cfg, self.base.R2)
        self.history: list[float] = []

    def _level1(self, sentences):
        with torch.no_grad():
            levels, mask = self.base.base.forward_levels(sentences, n_levels=1)
        return levels[0][0], levels[0][1], mask

    def fit(self, sentences: Sequence[Sequence[str]], progress: bool = False) -> "BackpropSPCN":
        """Train on ``sentences`` (no labels). Returns ``self``."""
        opt = torch.optim.Adam(self.net.parameters(), lr=self.bp.lr)
        rng = np.random.default_rng(_hash_seed("backprop-order", self.cfg.seed) % (2**63))
        epochs = range(self.bp.epochs)
        if progress:
            from tqdm.auto import tqdm
            epochs = tqdm(epochs, desc="SPCN backprop", leave=False)
        cache = [self._level1(chunk) for chunk in _batches(sentences, 256)]   # level 1 is fixed
        T = max(c[0].shape[1] for c in cache)
        pad = lambda x: nn.functional.pad(x, [0, 0] * (x.ndim - 2) + [0, T - x.shape[1]])  # noqa: E731
        a1_all, h1_all, m_all = (torch.cat([pad(c[k]) for c in cache]) for k in range(3))
        for _ in epochs:
            order, total, n = torch.from_numpy(rng.permutation(len(sentences))), 0.0, 0
            for i in range(0, len(order), self.bp.batch_size):
                idx = order[i: i + self.bp.batch_size]
                Tb = int(m_all[idx].sum(1).max())
                _, loss = self.net(a1_all[idx, :Tb], h1_all[idx, :Tb], m_all[idx, :Tb], self.bp.temperature)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total, n = total + loss.item(), n + 1
            self.history.append(total / max(n, 1))
        return self

    @torch.no_grad()
    def token_features(self, sentences: Sequence[Sequence[str]], part: str = "both",
                       batch_size: int = 256) -> np.ndarray:
        """``(N_tokens, F)`` as :meth:`ErrorSPCN.token_features`."""
        SN = len(self.cfg.alphas) * self.cfg.n_units

        def levels(chunk):
            a1, h1, mask = self._level1(chunk)
            f, _ = self.net(a1, h1, mask, self.bp.temperature)            # (B, T, 2 S N)
            return f[..., :SN], f[..., SN:], mask

        return _token_rows(levels, sentences, part, batch_size)
