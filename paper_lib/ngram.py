"""Count-based reference lines for the language models: a unigram and an interpolated
Kneser-Ney bigram, scored on the same evaluation windows as :func:`paper_lib.evaluate.evaluate`.

A trained language model that does not beat the unigram line has learned token frequencies
only; one that does not beat the bigram line has not used more than one token of context.
Both lines are counted from the model's own training stream, so they need no training and
cost seconds. Our design (the paper reports no reference line).

- Unigram: ``p(w) = (c(w) + 1) / (N + V)`` (add-one, so a token absent from training text
  costs ``log(N + V)`` nats, never infinity).
- Interpolated Kneser-Ney bigram (Chen & Goodman 1998, one discount ``d``)::

      p(w | v) = max(c(v, w) - d, 0) / c(v) + d * N1+(v, .) / c(v) * p_cont(w)     (c(v) > 0)
      p(w | v) = p_cont(w)                                                          (c(v) = 0)
      p_cont(w) = max(N1+(., w) - d, 0) / N1+(., .) + d * |{w : N1+(., w) > 0}| / N1+(., .) / V

  ``c(v)`` counts ``v`` as a context (bigram tokens starting with ``v``); ``N1+(v, .)`` the
  distinct successors of ``v``; ``N1+(., w)`` the distinct predecessors of ``w``;
  ``N1+(., .)`` the distinct bigram types; ``d = n1 / (n1 + 2 n2)`` from the bigram
  count-of-counts (Ney's estimate; 0.5 when n1 or n2 is 0), unless given. Every ``p(. | v)`` sums to 1 over the
  vocabulary (``tests/test_ngram.py``).

Counting streams chunk by chunk (:meth:`NGramCounts.update`), so a token stream too large
for memory (the ``paper`` profile's C4) can be counted in pieces.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .evaluate import window_starts


@dataclass
class NGramCounts:
    """Unigram and bigram counts of a token stream over a vocabulary of ``vocab_size`` tokens.

    Attributes:
        vocab_size: V (token ids lie in ``[0, V)``).
        unigram: (V,) int64, occurrences of each token.
        bigram_keys: (K,) int64 sorted, ``v * V + w`` for each bigram type seen.
        bigram_counts: (K,) int64, occurrences of each bigram type.
    """

    vocab_size: int
    unigram: np.ndarray = field(init=False)
    bigram_keys: np.ndarray = field(init=False)
    bigram_counts: np.ndarray = field(init=False)
    _last: int | None = field(init=False, default=None)

    def __post_init__(self):
        if int(self.vocab_size) < 1:
            raise ValueError(f"vocab_size must be >= 1, got {self.vocab_size}")
        self.unigram = np.zeros(self.vocab_size, dtype=np.int64)
        self.bigram_keys = np.zeros(0, dtype=np.int64)
        self.bigram_counts = np.zeros(0, dtype=np.int64)

    def update(self, ids: np.ndarray) -> NGramCounts:
        """Add the tokens of ``ids`` (1-D) and its bigrams, continuing from the previous chunk.

        Raises:
            ValueError: ``ids`` not 1-D, or a token outside ``[0, vocab_size)``.
        """
        ids = _check_ids(ids, self.vocab_size)
        if ids.size == 0:
            return self
        self.unigram += np.bincount(ids, minlength=self.vocab_size)
        prev = ids if self._last is None else np.concatenate([[self._last], ids])
        all_keys = np.concatenate([self.bigram_keys, prev[:-1] * self.vocab_size + prev[1:]])
        weights = np.concatenate([self.bigram_counts, np.ones(len(prev) - 1, dtype=np.int64)])
        keys, inv = np.unique(all_keys, return_inverse=True)
        counts = np.bincount(inv, weights=weights, minlength=len(keys)).astype(np.int64)
        self.bigram_keys, self.bigram_counts = keys, counts
        self._last = int(ids[-1])
        return self


def count_ngrams(ids: np.ndarray, vocab_size: int, chunk_tokens: int = 50_000_000) -> NGramCounts:
    """:class:`NGramCounts` of the stream ``ids``, counted ``chunk_tokens`` at a time."""
    counts = NGramCounts(vocab_size)
    for i in range(0, len(ids), chunk_tokens):
        counts.update(ids[i:i + chunk_tokens])
    return counts


def _check_ids(ids: np.ndarray, vocab_size: int) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"token ids must be 1-D, got shape {ids.shape}")
    ids = ids.astype(np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"token ids must lie in [0, {vocab_size}), got range [{ids.min()}, {ids.max()}]")
    return ids


def window_targets(ids: np.ndarray, seq_len: int, max_tokens: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Contexts and targets of :func:`paper_lib.evaluate.evaluate`'s windows, flattened.

    The windows are :func:`paper_lib.evaluate.window_starts`'s (non-overlapping, ``seq_len``
    inputs each); the target at position ``t`` of the window at ``s`` is ``ids[s + t + 1]``
    and its previous token ``ids[s + t]`` (always inside the window).

    Returns:
        ``(prev, target)``, two (n_windows * seq_len,) int64 arrays.

    Raises:
        ValueError: fewer than ``seq_len + 1`` tokens.
    """
    idx = window_starts(len(ids), seq_len, max_tokens)[:, None] + np.arange(seq_len)[None, :]
    ids = np.asarray(ids).astype(np.int64)
    return ids[idx].reshape(-1), ids[idx + 1].reshape(-1)


def unigram_logprob(counts: NGramCounts, target: np.ndarray) -> np.ndarray:
    """``log p(w)`` (nats) of each target under the add-one unigram; (N,) float64."""
    n, v = counts.unigram.sum(), counts.vocab_size
    return np.log(counts.unigram[target] + 1.0) - math.log(n + v)


def kneser_ney_discount(counts: NGramCounts) -> float:
    """Ney's discount ``n1 / (n1 + 2 n2)`` from the bigram count-of-counts; 0.5 when ``n1`` or
    ``n2`` is zero (the estimate would be 0 or 1, outside (0, 1))."""
    n1 = int((counts.bigram_counts == 1).sum())
    n2 = int((counts.bigram_counts == 2).sum())
    return n1 / (n1 + 2 * n2) if n1 > 0 and n2 > 0 else 0.5


def kneser_ney_logprob(counts: NGramCounts, prev: np.ndarray, target: np.ndarray,
                       discount: float | None = None) -> np.ndarray:
    """``log p_KN(w | v)`` (nats) of each (previous token, target) pair; (N,) float64.

    Raises:
        ValueError: ``discount`` outside (0, 1), or ``prev``/``target`` of different shapes.
    """
    d = kneser_ney_discount(counts) if discount is None else float(discount)
    if not 0.0 < d < 1.0:
        raise ValueError(f"discount must lie in (0, 1), got {d}")
    prev, target = np.asarray(prev, dtype=np.int64), np.asarray(target, dtype=np.int64)
    if prev.shape != target.shape:
        raise ValueError(f"prev and target must have one shape, got {prev.shape} and {target.shape}")
    V = counts.vocab_size
    keys, c = counts.bigram_keys, counts.bigram_counts
    first, second = keys // V, keys % V
    ctx_count = np.bincount(first, weights=c, minlength=V)              # c(v)
    successors = np.bincount(first, minlength=V)                        # N1+(v, .)
    predecessors = np.bincount(second, minlength=V)                     # N1+(., w)
    types = max(len(keys), 1)                                           # N1+(., .)
    seen_types = int((predecessors > 0).sum())
    p_cont = np.maximum(predecessors - d, 0.0) / types + d * seen_types / types / V
    if len(keys) == 0:
        p_cont = np.full(V, 1.0 / V)
    q = prev * V + target
    pos = np.searchsorted(keys, q)
    pos_c = np.minimum(pos, max(len(keys) - 1, 0))
    c_vw = np.where(keys[pos_c] == q, c[pos_c], 0) if len(keys) else np.zeros_like(q)
    cv = ctx_count[prev]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(cv > 0,
                     np.maximum(c_vw - d, 0.0) / np.maximum(cv, 1) + d * successors[prev] / np.maximum(cv, 1)
                     * p_cont[target],
                     p_cont[target])
    return np.log(p)


def reference_losses(train_ids: np.ndarray, eval_ids: np.ndarray, vocab_size: int, seq_len: int,
                     max_tokens: int | None = None, counts: NGramCounts | None = None) -> dict:
    """Unigram and Kneser-Ney bigram loss (nats/token) of ``eval_ids``, counted on ``train_ids``,
    on the windows :func:`paper_lib.evaluate.evaluate` scores (same ``seq_len``, ``max_tokens``).

    Returns:
        ``{"unigram": nats, "bigram": nats, "unigram_token_loss": (N,), "bigram_token_loss": (N,),
        "discount": d, "train_tokens": int}``; ``counts`` reuses counts already made.
    """
    counts = counts if counts is not None else count_ngrams(train_ids, vocab_size)
    prev, target = window_targets(eval_ids, seq_len, max_tokens)
    _check_ids(target, vocab_size)
    uni = -unigram_logprob(counts, target)
    bi = -kneser_ney_logprob(counts, prev, target)
    return {"unigram": float(uni.mean()), "bigram": float(bi.mean()), "unigram_token_loss": uni,
            "bigram_token_loss": bi, "discount": kneser_ney_discount(counts),
            "train_tokens": int(counts.unigram.sum())}
