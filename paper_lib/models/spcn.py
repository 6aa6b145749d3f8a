"""SPCN, the Sparse Predictive Column Network of the paper's Experiment 1.

The paper's recipe (brief, "Experiment 1"): a hierarchy of columns built from *fixed
random projections*, *sparse top-k activations* and *multi-timescale EMA traces*, learned
without backpropagation by PGHU, the precision-gated Hebbian update. The wiring, sizes and
readout below are **our design: the paper is silent** on them.

Wiring (one level l = 1..L; ``N = n_columns * column_size`` units per level)::

    u^1_t = code(word_t)                               word code, (d_code,)  fixed, from the word string
    u^l_t = [h^{l-1}_t, y^{l-1}_{t+1}]                 traces and prediction of the level below
    a^l_t = kWTA_columns(R^l u^l_t)                    (N,) binary, top_k winners per column; R^l fixed random
    h^l_t = EMA_traces(a^{l})_t                        (S, N) multi-timescale traces (paper_lib.ema)
    y^l_{t+1} = P^l h^l_t                              (N,) prediction of the next column activity
    e^l_{t+1} = a^l_{t+1} - y^l_{t+1}                  prediction error -> PGHU updates P^l

Only the predictive weights ``P^l`` learn (PGHU, or plain Hebbian, or nothing), level by
level, from sentences alone: **no role label** enters SPCN. A token's *features* are the
trace bank and the predictions of every level at that token, ``[h^l_t, y^l_{t+1}]_l``,
shape ``(B, T, F)`` with ``F = L * (S + 1) * N``; a probe or a clustering reads roles from
them (``paper_lib.probes``). The traces are causal: the features at t depend on
``word_1..word_t`` only.

A word's input code derives from the word string and the seed alone (a hash-seeded Gaussian
vector, :func:`word_code`), so words never seen in training (Grammar B's) get codes without
any training.
"""
from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import torch
from torch import Tensor

from ..ema import PAPER_ALPHAS, check_alphas, ema_traces
from ..hebbian import LEARNING_RULES, kwta_columns, make_rule
from ..pipeline.settings import setting


@dataclass
class SPCNConfig:
    """Sizes and learning settings of :class:`SPCN` (our design: the paper is silent)."""

    d_code: int = 128                   # width of a word's input code (dims)
    n_levels: int = 2                   # levels of columns (>= 2)
    n_columns: int = 16                 # columns per level
    column_size: int = 16               # units per column
    top_k: int = 2                      # active units per column (of column_size)
    alphas: tuple[float, ...] = PAPER_ALPHAS  # EMA rates, fast to slow
    rule: str = "pghu"                  # pghu | hebbian | none
    lr: float = 0.5                     # step size of the rule (dimensionless)
    beta: float = 0.05                  # PGHU: rate of the running error statistics (per minibatch)
    epochs: int = 2                     # passes over the training sentences, per level
    batch_size: int = 64                # sentences per update
    seed: int = setting(0, low=0)       # seeds the word codes and the random projections

    def __post_init__(self):
        if self.n_levels < 2:
            raise ValueError(f"n_levels must be >= 2 (the paper's hierarchy of columns), got {self.n_levels}")
        if not 1 <= self.top_k <= self.column_size:
            raise ValueError(f"top_k must lie in 1..column_size={self.column_size}, got {self.top_k}")
        if min(self.d_code, self.n_columns, self.column_size, self.epochs + 1, self.batch_size) < 1:
            raise ValueError("d_code, n_columns, column_size, batch_size must be >= 1 and epochs >= 0")
        if self.rule not in LEARNING_RULES:
            raise ValueError(f"unknown rule {self.rule!r}; allowed: {', '.join(LEARNING_RULES)}")
        self.alphas = tuple(float(a) for a in check_alphas(self.alphas, "SPCNConfig"))

    @property
    def n_units(self) -> int:
        return self.n_columns * self.column_size

    @property
    def n_features(self) -> int:
        """F, the width of a token's features."""
        return self.n_levels * (len(self.alphas) + 1) * self.n_units


def _hash_seed(*parts: object) -> int:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def word_code(word: str, seed: int, d_code: int) -> np.ndarray:
    """The fixed input code of ``word``: a unit-norm Gaussian vector ``(d_code,)`` seeded by a
    hash of ``(seed, word)``. Deterministic, needs no vocabulary, so unseen words get codes.

    Our design (the paper says only "fixed random projections").
    """
    v = np.random.default_rng(_hash_seed("word", seed, word)).standard_normal(d_code)
    return (v / np.linalg.norm(v)).astype(np.float32)


class SPCN:
    """Sparse Predictive Column Network (see the module docstring for the wiring).

    Usage: ``model = SPCN(cfg).fit(train_sentences)``; ``feats, mask = model.features(sents)``.
    ``model.untrained()`` is the same network with its predictive weights back at their
    initial values (zeros: the "what PGHU contributes" ablation). ``codes`` (``{word: (d_code,)}``)
    replaces the fixed codes of those words (learned codes, :mod:`paper_lib.models.learned_codes`);
    every other word keeps its hash-seeded code.

    Raises:
        ValueError: bad configuration (see :class:`SPCNConfig`), a code that is not a finite
        ``(d_code,)`` vector, or empty sentences.
    """

    def __init__(self, config: SPCNConfig | None = None, codes: Mapping[str, np.ndarray] | None = None):
        self.cfg = cfg = config or SPCNConfig()
        N, S = cfg.n_units, len(cfg.alphas)
        gen = torch.Generator().manual_seed(_hash_seed("projections", cfg.seed) % (2**63))
        d_in = [cfg.d_code] + [(S + 1) * N] * (cfg.n_levels - 1)
        # fixed random projections R^l: (N, d_in), unit-variance rows per input dim
        self.R = [torch.randn(N, d, generator=gen) / d ** 0.5 for d in d_in]
        # learned predictive weights P^l: (N, S * N), start at zero (no prediction)
        self.P = [torch.zeros(N, S * N) for _ in range(cfg.n_levels)]
        self.history: list[dict] = []          # per update: level, epoch, mean squared error
        self._codes: dict[str, np.ndarray] = {}
        if codes is not None:                  # learned codes (paper_lib.models.learned_codes); others hashed
            for w, c in codes.items():
                c = np.asarray(c, np.float32)
                if c.shape != (cfg.d_code,) or not np.all(np.isfinite(c)):
                    raise ValueError(f"code of {w!r} must be a finite ({cfg.d_code},) vector, got shape {c.shape}")
                self._codes[w] = c

    # ------------------------------------------------------------------ inputs
    def encode(self, sentences: Sequence[Sequence[str]]) -> tuple[Tensor, Tensor]:
        """Word codes of padded sentences: ``(B, T, d_code)`` and the ``(B, T)`` bool mask.

        Raises:
            ValueError: no sentences or an empty sentence.
        """
        if len(sentences) == 0 or min(len(s) for s in sentences) == 0:
            raise ValueError("encode needs at least one sentence and no empty sentence")
        B, T = len(sentences), max(len(s) for s in sentences)
        x = np.zeros((B, T, self.cfg.d_code), np.float32)
        mask = np.zeros((B, T), bool)
        for b, s in enumerate(sentences):
            for t, w in enumerate(s):
                if w not in self._codes:
                    self._codes[w] = word_code(w, self.cfg.seed, self.cfg.d_code)
                x[b, t] = self._codes[w]
            mask[b, : len(s)] = True
        return torch.from_numpy(x), torch.from_numpy(mask)

    # ------------------------------------------------------------------ forward
    @torch.no_grad()
    def _level(self, l: int, u: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Level ``l`` on input ``u`` (B, T, d_in): activity (B, T, N), traces (B, T, S, N),
        prediction (B, T, N) of the activity at t + 1."""
        cfg = self.cfg
        a = kwta_columns(u @ self.R[l].T, cfg.n_columns, cfg.top_k)  # (B, T, N)
        a = a * mask[..., None]                                      # silent on padding
        h = ema_traces(a, cfg.alphas)                                # (B, T, S, N)
        y = h.flatten(2) @ self.P[l].T                               # (B, T, N)
        return a, h, y

    @torch.no_grad()
    def forward_levels(self, sentences: Sequence[Sequence[str]], n_levels: int | None = None):
        """Per level: ``(a, h, y)`` as in :meth:`_level`, plus the mask ``(B, T)``."""
        u, mask = self.encode(sentences)
        out = []
        for l in range(n_levels or self.cfg.n_levels):
            a, h, y = self._level(l, u, mask)
            out.append((a, h, y))
            u = torch.cat([h.flatten(2), y], dim=-1)                 # (B, T, (S + 1) N)
        return out, mask

    @torch.no_grad()
    def features(self, sentences: Sequence[Sequence[str]], traces_only: bool = False) -> tuple[Tensor, Tensor]:
        """Token features ``(B, T, F)`` (traces and predictions of every level; the traces alone,
        ``F = L S N``, with ``traces_only``) and mask ``(B, T)``."""
        levels, mask = self.forward_levels(sentences)
        feats = torch.cat([h.flatten(2) if traces_only else torch.cat([h.flatten(2), y], -1) for _, h, y in levels], -1)
        return feats * mask[..., None], mask

    def token_features(self, sentences: Sequence[Sequence[str]], batch_size: int = 256,
                       traces_only: bool = False) -> np.ndarray:
        """Features of every token, sentence after sentence: ``(N_tokens, F)`` float32 numpy,
        aligned with ``Corpus.flat_roles()``."""
        rows = []
        for i in range(0, len(sentences), batch_size):
            f, m = self.features(sentences[i: i + batch_size], traces_only)
            rows.append(f[m].numpy())
        return np.concatenate(rows, 0)

    def bidirectional_features(self, sentences: Sequence[Sequence[str]]) -> np.ndarray:
        """A bidirectional SPCN: the trace banks of every level read forward and read on the
        reversed sentence, realigned and concatenated, ``(N_tokens, 2 L S N)`` (our
        design). The backward half at t has read words t..T, so the features are not causal."""
        fwd = self.token_features(sentences, traces_only=True)
        bwd = self.token_features([list(reversed(s)) for s in sentences], traces_only=True)
        starts = np.cumsum([0] + [len(s) for s in sentences])
        order = np.concatenate([np.arange(b - 1, a - 1, -1) for a, b in zip(starts[:-1], starts[1:], strict=True)])
        return np.concatenate([fwd, bwd[order]], 1)

    # ------------------------------------------------------------------ learning
    @torch.no_grad()
    def fit(self, sentences: Sequence[Sequence[str]], progress: bool = False,
            n_levels: int | None = None) -> "SPCN":
        """Learn the predictive weights, level by level, from sentences alone (no labels).

        Each level predicts its own next column activity from its traces; the rule
        (``cfg.rule``) updates ``P^l`` per minibatch of ``batch_size`` sentences for ``epochs``
        passes, in an order fixed by ``cfg.seed``. ``rule="none"`` leaves the weights at zero.
        ``n_levels`` learns only the first levels (default all; the others keep their init).
        Returns ``self``.

        Raises:
            ValueError: ``n_levels`` outside ``1..cfg.n_levels``.
        """
        cfg = self.cfg
        n_fit = cfg.n_levels if n_levels is None else int(n_levels)
        if not 1 <= n_fit <= cfg.n_levels:
            raise ValueError(f"n_levels must lie in 1..{cfg.n_levels}, got {n_levels}")
        order_rng = np.random.default_rng(_hash_seed("order", cfg.seed) % (2**63))
        for l in range(n_fit):
            rule = make_rule(cfg.rule, cfg.n_units, lr=cfg.lr,
                             **({"beta": cfg.beta} if cfg.rule == "pghu" else {}))
            if rule is None:
                continue
            for epoch in range(cfg.epochs):
                order = order_rng.permutation(len(sentences))
                batches = range(0, len(sentences), cfg.batch_size)
                if progress:
                    from tqdm.auto import tqdm
                    batches = tqdm(batches, desc=f"SPCN level {l + 1} epoch {epoch + 1}", leave=False)
                for i in batches:
                    batch = [sentences[j] for j in order[i: i + cfg.batch_size]]
                    levels, mask = self.forward_levels(batch, n_levels=l + 1)
                    a, h, _ = levels[l]
                    x = h[:, :-1].flatten(2).reshape(-1, h.shape[2] * h.shape[3])   # (B (T-1), S N)
                    y = a[:, 1:].reshape(-1, a.shape[-1])                         # (B (T-1), N)
                    valid = mask[:, 1:].reshape(-1)
                    err = rule.step(self.P[l], x, y, valid)
                    self.history.append({"level": l + 1, "epoch": epoch + 1,
                                         "mse": float((err ** 2).mean()) if err.numel() else float("nan")})
        return self

    def untrained(self) -> "SPCN":
        """A copy with the same codes and projections and the predictive weights at init."""
        other = copy.copy(self)
        other.P = [torch.zeros_like(p) for p in self.P]
        other.history = []
        return other

    @torch.no_grad()
    def prediction_mse(self, sentences: Sequence[Sequence[str]], level: int = 1) -> float:
        """Mean squared error of level ``level``'s next-activity prediction on ``sentences``."""
        levels, mask = self.forward_levels(sentences, n_levels=level)
        a, h, y = levels[level - 1]
        err = (a[:, 1:] - y[:, :-1])[mask[:, 1:]]
        return float((err ** 2).mean())
