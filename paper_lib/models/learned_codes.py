"""Word codes that learning can reach: a Hebbian update of each word's code toward its context
trace, and the same codes trained by backpropagation on a label-free fill-in loss.

SPCN's input code of a word is a fixed hash-seeded random vector (:func:`paper_lib.models.spcn.word_code`),
so a Grammar B word the probe never saw gets a code unrelated to any code it saw; on A the fixed
codes and their traces already give the roles, so no learner downstream of them can show
anything (notebook 01, "where the accuracy comes from"). Here learning acts on the codes
themselves, from **unlabelled** sentences (A's training sentences and unlabelled B sentences:
transductive on B's vocabulary, still zero labels). **Our design: the paper is silent** on how
(or whether) SPCN's learning reaches its input codes; the Hebbian rule is in the spirit of the
paper's PGHU family (local, error-driven: the error is the context trace minus the word's code),
without the precision gate.

- :func:`hebbian_codes`: each word ``w`` keeps a learned part ``m_w`` (``d_code``), moved once
  per pass toward the mean *context trace* of its occurrences,

      z_t = P_L l_{t-1} + P_R r_{t+1},   l_t = EMA_alpha(c_{w_1..t}),  r_t = EMA_alpha(c_{w_T..t})
      m_w <- m_w + lr * (<z_t>_{t: w_t = w} - m_w)                    (delta rule, per pass)
      c_w = normalise((1 - mix) r_w + mix * normalise(m_w - <m_v>_v))

  with ``r_w`` the fixed code, ``l``/``r`` the left (causal) and right EMA traces of the current
  codes at rate ``alpha`` and ``P_L``, ``P_R`` fixed random orthogonal matrices (so that "before"
  and "after" stay apart). Words in the same contexts (a noun of A and a noun of B, both after a
  determiner and before a verb or ``that``) end with similar codes. The defaults (neighbouring
  words only, ``alpha = 1``; one pass; ``mix = 0.99``) were chosen on seed 0 at the cpu profile
  among a few settings, by seed 0's accuracy on B's content words (the scored metric: a selection
  on one of the five seeds; wider traces, more passes and a larger fixed share transferred less:
  each further pass moves a code toward the codes of its neighbours' neighbours). Only the codes
  are learned, per word type from whole unlabelled sentences (both sides, as word2vec does); the
  features that read them stay causal (a token's features read the codes of words 1..t).
- :func:`backprop_codes`, the **ceiling**: the codes (initialised at the fixed codes) trained by
  Adam on the same unlabelled sentences, by default (``bp_objective="cloze"``) on a **fill-in** cross-entropy: ``w_t`` predicted from ``W_L l_{t-1} + W_R r_{t+1}``
  (the Hebbian rule's two-sided context, EMA rate ``bp_alpha``, learned maps) against an output
  table of its own, so a code is learned only as the context of its neighbours (word2vec's input
  vectors). ``bp_objective="next_word"`` is the other ceiling: next-word cross-entropy from the
  left trace, the codes tied as the output embedding (its passes chosen on seed 0 as above). At cpu,
  next-word codes read B's content words at 0.364 ± 0.095 (seeds 0-4, a run on another machine);
  the fill-in codes 0.428 / 0.466 / 0.289 on seeds 0-2 (floor 0.181 / 0.277 / 0.224), tied fill-in codes 0.126 on seed 0.
  :func:`select_backprop_codes` picks its Adam step size per seed from ``bp_lr_grid``: one
  training per grid point, kept is the one with the lowest loss of its objective on **held-out
  unlabelled** sentences (disjoint from the training and the scored ones; label-free model
  selection, **our design**: one fixed step size left the ceiling below the Hebbian codes and
  swung it by +-0.1 per seed between step sizes 0.03 and 0.1). Caveat, measured at the cpu
  profile on seeds 0-4 with the next-word objective (the fill-in one also picked 0.03 on every seed): the held-out loss picks the grid's smallest step (0.03) on every seed,
  and on a grid (0.003, 0.01, 0.03) it picks 0.003 (lower held-out loss, 2.70-2.73 nats against
  2.86-2.94), where the content accuracy on B falls back toward the floor (0.17-0.34 on seeds
  0-4 against the floor's 0.18-0.28): a lower next-word loss does not mean codes that carry
  the category, so this selection does not make the ceiling an upper bound on the Hebbian codes.
- :func:`category_codes`, an **oracle** control (uses the grammar's lexicon, not learning): each
  Grammar B content word takes the fixed code of the A word of the same category and index.

All return ``{word: (d_code,) float32 unit-norm code}`` for the pool's words; pass them to
:class:`paper_lib.models.spcn.SPCN` (``codes=``). Deterministic in ``seed``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from ..data.grammar import LEXICONS
from .spcn import _hash_seed, word_code


@dataclass
class CodeLearningConfig:
    """The code learners' settings (our design: the paper is silent)."""

    alpha: float = 1.0        # EMA rate of the Hebbian context traces (1: the neighbouring words alone)
    mix: float = 0.99         # weight of the learned context part in a code (0: the fixed code; < 1 keeps identity)
    lr: float = 0.5           # Hebbian step per pass (fraction of the way to the mean context), in (0, 1]
    epochs: int = 1           # Hebbian passes (one: later passes drift from the category, see the module docstring)
    bp_alpha: float = 0.5     # backprop ceiling: EMA rate of the context traces that predict a word
    bp_lr: float = 0.1        # backprop ceiling: Adam step size
    bp_epochs: int = 8        # backprop ceiling: passes over the unlabelled sentences
    bp_batch_size: int = 32   # backprop ceiling: sentences per step
    bp_lr_grid: tuple[float, ...] = (0.03, 0.1, 0.3)  # step sizes select_backprop_codes tries (by held-out loss)
    bp_objective: str = "cloze"  # backprop ceiling: "cloze" (a word from both sides) or "next_word" (left only)

    def __post_init__(self):
        for name in ("alpha", "bp_alpha"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name} must lie in (0, 1], got {getattr(self, name)}")
        if not 0 <= self.mix < 1:
            raise ValueError(f"mix must lie in [0, 1) (1 would erase word identity), got {self.mix}")
        if not 0 < self.lr <= 1:
            raise ValueError(f"lr must lie in (0, 1], got {self.lr}")
        if len(self.bp_lr_grid) == 0 or min(self.bp_lr_grid) <= 0:
            raise ValueError(f"bp_lr_grid must hold at least one step size, all > 0, got {self.bp_lr_grid}")
        if self.bp_objective not in OBJECTIVES:
            raise ValueError(f"unknown bp_objective {self.bp_objective!r}; allowed: {', '.join(OBJECTIVES)}")
        if self.epochs < 0 or self.bp_epochs < 0 or self.bp_batch_size < 1 or self.bp_lr <= 0:
            raise ValueError("epochs and bp_epochs must be >= 0, bp_batch_size >= 1 and bp_lr > 0")


def _vocab_ids(sentences: Sequence[Sequence[str]]) -> tuple[list[str], Tensor, Tensor]:
    """Sorted vocabulary, ``(B, T)`` long ids (0 on padding) and the ``(B, T)`` bool mask."""
    if len(sentences) == 0 or min(len(s) for s in sentences) == 0:
        raise ValueError("code learning needs at least one sentence and no empty sentence")
    vocab = sorted({w for s in sentences for w in s})
    return (vocab, *_padded_ids(sentences, vocab))


def _padded_ids(sentences: Sequence[Sequence[str]], vocab: Sequence[str]) -> tuple[Tensor, Tensor]:
    """``(B, T)`` long ids of ``sentences`` in ``vocab`` (0 on padding) and the ``(B, T)`` bool mask."""
    index = {w: i for i, w in enumerate(vocab)}
    T = max(len(s) for s in sentences)
    ids = torch.zeros(len(sentences), T, dtype=torch.long)
    mask = torch.zeros(len(sentences), T, dtype=torch.bool)
    for b, s in enumerate(sentences):
        ids[b, : len(s)] = torch.tensor([index[w] for w in s])
        mask[b, : len(s)] = True
    return ids, mask


def _ema(x: Tensor, alpha: float, reverse: bool = False) -> Tensor:
    """EMA along time of ``x`` (B, T, D): ``y_t = alpha x_t + (1 - alpha) y_{t-1}`` (``t+1`` if reverse)."""
    out, y = torch.zeros_like(x), torch.zeros_like(x[:, 0])
    steps = range(x.shape[1] - 1, -1, -1) if reverse else range(x.shape[1])
    for t in steps:
        y = alpha * x[:, t] + (1 - alpha) * y
        out[:, t] = y
    return out


def _fixed(vocab: Sequence[str], seed: int, d_code: int) -> Tensor:
    return torch.from_numpy(np.stack([word_code(w, seed, d_code) for w in vocab]))       # (V, d)


def _normalise(x: Tensor) -> Tensor:
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)


def _as_dict(vocab: Sequence[str], codes: Tensor) -> dict[str, np.ndarray]:
    c = _normalise(codes.detach().float()).numpy()
    return {w: c[i].copy() for i, w in enumerate(vocab)}


@torch.no_grad()
def hebbian_codes(sentences: Sequence[Sequence[str]], seed: int, d_code: int,
                  cfg: CodeLearningConfig | None = None) -> dict[str, np.ndarray]:
    """Codes learned by the Hebbian context rule of the module docstring from unlabelled ``sentences``.

    Args:
        sentences: the unlabelled pool (word lists); every word in it gets a code.
        seed: the seed of the fixed codes (as SPCN's) and of ``P_L``, ``P_R``.
        d_code: code width (dims).
        cfg: :class:`CodeLearningConfig`; ``epochs=0`` returns the fixed codes.

    Returns:
        ``{word: (d_code,) float32 unit-norm code}``.

    Raises:
        ValueError: no sentences or an empty sentence.
    """
    cfg = cfg or CodeLearningConfig()
    vocab, ids, mask = _vocab_ids(sentences)
    fixed = _fixed(vocab, seed, d_code)                                                 # (V, d)
    gen = torch.Generator().manual_seed(_hash_seed("context-rotations", seed) % (2**63))
    P_L, P_R = (torch.linalg.qr(torch.randn(d_code, d_code, generator=gen))[0] for _ in range(2))
    m = torch.zeros_like(fixed)                                                         # (V, d) learned part
    codes = fixed.clone()
    flat_ids, flat_mask = ids.reshape(-1), mask.reshape(-1)
    counts = torch.bincount(flat_ids[flat_mask], minlength=len(vocab)).clamp_min(1).float()[:, None]
    for _ in range(cfg.epochs):
        x = codes[ids] * mask[..., None]                                                # (B, T, d)
        left = torch.cat([torch.zeros_like(x[:, :1]), _ema(x, cfg.alpha)[:, :-1]], 1)  # l_{t-1}
        right = torch.cat([_ema(x, cfg.alpha, reverse=True)[:, 1:], torch.zeros_like(x[:, :1])], 1)  # r_{t+1}
        z = (left @ P_L.T + right @ P_R.T).reshape(-1, d_code)[flat_mask]               # (n, d) context traces
        mean_z = torch.zeros_like(m).index_add_(0, flat_ids[flat_mask], z) / counts     # (V, d)
        m += cfg.lr * (mean_z - m)                                                      # delta rule toward the context
        codes = _normalise((1 - cfg.mix) * fixed + cfg.mix * _normalise(m - m.mean(0)))
    return _as_dict(vocab, codes)


class _NextWord(nn.Module):
    def __init__(self, codes: Tensor, alpha: float):
        super().__init__()
        self.E = nn.Parameter(codes.clone())                                            # (V, d) the codes
        self.W = nn.Linear(codes.shape[1], codes.shape[1])
        self.alpha = alpha

    def forward(self, ids: Tensor, mask: Tensor) -> Tensor:
        """Mean next-word cross-entropy (nats) of ``ids`` (B, T) under ``mask`` (B, T)."""
        x = self.E[ids] * mask[..., None]
        h = _ema(x, self.alpha)[:, :-1]                                                 # (B, T-1, d) left trace
        logits = self.W(h) @ self.E.T                                                   # tied output codes
        m = mask[:, 1:]
        return nn.functional.cross_entropy(logits[m], ids[:, 1:][m])


class _Cloze(nn.Module):
    """Fill in a word from both sides: ``w_t`` from ``W_L l_{t-1} + W_R r_{t+1}`` (the Hebbian rule's
    context trace, with learned maps instead of fixed rotations) against an output table of its own
    (word2vec's input and output vectors: a code is learned only as context, from its neighbours)."""

    def __init__(self, codes: Tensor, alpha: float):
        super().__init__()
        self.E = nn.Parameter(codes.clone())                                            # (V, d) the codes
        self.W_L = nn.Linear(codes.shape[1], codes.shape[1])
        self.W_R = nn.Linear(codes.shape[1], codes.shape[1], bias=False)
        self.out = nn.Parameter(torch.zeros_like(codes))                                 # (V, d) output table
        self.alpha = alpha

    def forward(self, ids: Tensor, mask: Tensor) -> Tensor:
        """Mean fill-in cross-entropy (nats) of ``ids`` (B, T) under ``mask`` (B, T)."""
        x = self.E[ids] * mask[..., None]                                               # (B, T, d)
        left = torch.cat([torch.zeros_like(x[:, :1]), _ema(x, self.alpha)[:, :-1]], 1)  # l_{t-1}
        right = torch.cat([_ema(x, self.alpha, reverse=True)[:, 1:], torch.zeros_like(x[:, :1])], 1)  # r_{t+1}
        logits = (self.W_L(left) + self.W_R(right)) @ self.out.T                        # (B, T, V)
        return nn.functional.cross_entropy(logits[mask], ids[mask])


OBJECTIVES = {"cloze": _Cloze, "next_word": _NextWord}
"""The backprop ceiling's label-free objectives (``CodeLearningConfig.bp_objective``)."""


def _train_codes(sentences, seed: int, d_code: int, cfg: CodeLearningConfig):
    """Adam on the ceiling's objective (``cfg.bp_objective``); returns ``(vocab, net, history)`` (nats per
    token per epoch)."""
    vocab, ids, mask = _vocab_ids(sentences)
    torch.manual_seed(_hash_seed("code-backprop", seed) % (2**31))
    net = OBJECTIVES[cfg.bp_objective](_fixed(vocab, seed, d_code), cfg.bp_alpha)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.bp_lr)
    rng = np.random.default_rng(_hash_seed("code-backprop-order", seed) % (2**63))
    history = []
    for _ in range(cfg.bp_epochs):
        order, total, n = torch.from_numpy(rng.permutation(len(sentences))), 0.0, 0
        for i in range(0, len(order), cfg.bp_batch_size):
            idx = order[i: i + cfg.bp_batch_size]
            Tb = int(mask[idx].sum(1).max())
            loss = net(ids[idx, :Tb], mask[idx, :Tb])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, n = total + loss.item(), n + 1
        history.append(total / max(n, 1))
    return vocab, net, history


def backprop_codes(sentences: Sequence[Sequence[str]], seed: int, d_code: int,
                   cfg: CodeLearningConfig | None = None) -> tuple[dict[str, np.ndarray], list[float]]:
    """The ceiling: codes trained by backprop on ``cfg.bp_objective`` (fill-in or next word) over
    unlabelled ``sentences`` at the one step size ``cfg.bp_lr`` (:func:`select_backprop_codes` chooses it).

    Returns:
        ``(codes, history)``: ``{word: (d_code,) float32 unit-norm code}`` and the mean
        training cross-entropy per epoch (nats per token).

    Raises:
        ValueError: no sentences or an empty sentence.
    """
    vocab, net, history = _train_codes(sentences, seed, d_code, cfg or CodeLearningConfig())
    return _as_dict(vocab, net.E), history


@torch.no_grad()
def _held_out_loss(net: _NextWord, vocab: Sequence[str], held_out: Sequence[Sequence[str]]) -> float:
    """Mean cross-entropy of ``net``'s objective (nats per token) on ``held_out`` (all its words in ``vocab``)."""
    ids, mask = _padded_ids(held_out, vocab)
    return float(net(ids, mask))


def select_backprop_codes(sentences: Sequence[Sequence[str]], held_out: Sequence[Sequence[str]], seed: int,
                          d_code: int, cfg: CodeLearningConfig | None = None) -> dict:
    """The ceiling with its step size chosen without labels: :func:`backprop_codes` at each step size of
    ``cfg.bp_lr_grid``, kept the one with the lowest loss of its objective on ``held_out`` (unlabelled sentences
    none of which is in ``sentences`` nor scored; the caller ensures it; ties: the first). Our design.

    Args:
        sentences: the training pool (word lists).
        held_out: unlabelled sentences for the selection; those with a word outside ``sentences``'
            vocabulary are skipped (no code to predict it).

    Returns:
        ``{"codes": {word: (d_code,) unit-norm code}, "history": the chosen run's loss per epoch (nats/token),
        "lr": the chosen step size, "held_out_loss": {step size: held-out loss (nats/token)}}``.

    Raises:
        ValueError: no sentences, an empty sentence, or no held-out sentence within the vocabulary.
    """
    cfg = cfg or CodeLearningConfig()
    vocab_set = {w for s in sentences for w in s}
    held = [list(s) for s in held_out if len(s) > 1 and set(s) <= vocab_set]
    if not held:
        raise ValueError("select_backprop_codes needs held-out sentences (length > 1) whose words all occur in sentences")
    best, losses = None, {}
    for lr in cfg.bp_lr_grid:
        vocab, net, history = _train_codes(sentences, seed, d_code, replace(cfg, bp_lr=lr))
        losses[lr] = _held_out_loss(net, vocab, held)
        if best is None or losses[lr] < losses[best[0]]:
            best = (lr, _as_dict(vocab, net.E), history)
    return {"codes": best[1], "history": best[2], "lr": best[0], "held_out_loss": losses}


def category_codes(seed: int, d_code: int, source: str = "A", target: str = "B") -> dict[str, np.ndarray]:
    """The oracle control: each ``target`` content word gets the fixed code of the ``source`` word of the
    same lexical category and index (``LEXICONS``), e.g. B's "truck" the code of A's "dog".

    Raises:
        ValueError: unknown grammar names.
    """
    if source not in LEXICONS or target not in LEXICONS:
        raise ValueError(f"unknown grammar; allowed: {', '.join(LEXICONS)}")
    return {w: word_code(LEXICONS[source][cat][i], seed, d_code)
            for cat, words in LEXICONS[target].items() for i, w in enumerate(words)}

