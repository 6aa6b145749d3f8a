"""Lag decodability: what a recurrent state at time t still holds about the token at t - k.

The paper states the boundary between structure and content (brief, "Experiment 1": the
EMA traces lose word identity and keep the temporal pattern); this module measures it
(**our design: the paper has no such experiment**). From a state ``z_t`` (an EMA trace
bank, one trace alone, or a GRU hidden state) a linear probe tries to recover a label of
the token at ``t - k`` (its identity, or its grammatical role) for ``k = 0, 1, ..., K``.
Identity that is read at k = 0 and not at k = 2 is content the state lost; a role read at
k = 8 is structure it kept.

The probe is a linear least-squares classifier (scikit-learn ``Ridge`` on standardised
states, one-hot targets, argmax): one closed-form fit serves every lag and every target at
once, so a full curve costs one solve. The same token positions are scored at every lag
(positions ``t >= min_pos``), so the points of a curve are comparable.

Shapes: states ``(B, T, F)``; labels ``(B, T)`` integer ids with ``-1`` on padding.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

from .grammar import Corpus


def make_documents(corpus: Corpus, doc_sentences: int) -> tuple[list[list[str]], list[list[int]]]:
    """Consecutive sentences of ``corpus`` joined into documents of ``doc_sentences`` sentences.

    A state then runs across sentence boundaries, so every lag up to a document's length is
    defined (our design). The last document may be shorter.

    Returns:
        ``(words, roles)``: token lists and aligned role-id lists, one per document.

    Raises:
        ValueError: ``doc_sentences`` < 1 or an empty corpus.
    """
    if doc_sentences < 1:
        raise ValueError(f"doc_sentences must be >= 1, got {doc_sentences}")
    if len(corpus) == 0:
        raise ValueError("make_documents needs a non-empty corpus")
    words, roles = [], []
    for i in range(0, len(corpus), doc_sentences):
        words.append([w for s in corpus.sentences[i: i + doc_sentences] for w in s])
        roles.append([r for rs in corpus.roles[i: i + doc_sentences] for r in rs])
    return words, roles


def pad_labels(seqs: Sequence[Sequence[int]], T: int | None = None) -> np.ndarray:
    """Label lists -> ``(B, T)`` int64 array padded with ``-1``."""
    T = T if T is not None else max(len(s) for s in seqs)
    out = np.full((len(seqs), T), -1, np.int64)
    for b, s in enumerate(seqs):
        out[b, : len(s)] = s
    return out


def lagged(labels: np.ndarray, k: int) -> np.ndarray:
    """``(B, T)`` labels shifted by ``k`` steps: ``out[b, t] = labels[b, t - k]``, ``-1`` where
    ``t - k < 0``.

    Raises:
        ValueError: ``k`` < 0 or labels not 2-D.
    """
    if k < 0:
        raise ValueError(f"lag k must be >= 0, got {k}")
    if labels.ndim != 2:
        raise ValueError(f"labels must be (B, T), got shape {labels.shape}")
    out = np.full_like(labels, -1)
    out[:, k:] = labels[:, : labels.shape[1] - k]
    return out


def _rows(states: np.ndarray, targets: Mapping[str, np.ndarray], lags: Sequence[int],
          min_pos: int) -> tuple[np.ndarray, dict[tuple[str, int], np.ndarray]]:
    """States ``(n, F)`` of the scored positions and their lagged labels ``{(target, k): (n,)}``."""
    if states.ndim != 3:
        raise ValueError(f"states must be (B, T, F), got shape {states.shape}")
    first = next(iter(targets.values()))
    if first.shape != states.shape[:2]:
        raise ValueError(f"labels {first.shape} do not match states {states.shape[:2]}")
    pos = np.arange(states.shape[1])[None, :] >= min_pos
    keep = pos & (first >= 0)                                            # (B, T) scored positions
    X = states[keep]
    Y = {(name, k): lagged(lab, k)[keep] for name, lab in targets.items() for k in lags}
    return X, Y


def lag_decodability(train_states: np.ndarray, train_labels: Mapping[str, np.ndarray],
                     test_states: np.ndarray, test_labels: Mapping[str, np.ndarray],
                     lags: Sequence[int] = tuple(range(17)), min_pos: int | None = None,
                     ridge: float = 1.0) -> pd.DataFrame:
    """Held-out accuracy of a linear probe that reads, from the state at t, the label at t - k.

    Args:
        train_states, test_states: ``(B, T, F)`` states (any width F; float).
        train_labels, test_labels: ``{target name: (B, T) int ids, -1 on padding}``, e.g.
            ``{"identity": word ids, "role": role ids}``; the first target's padding marks
            the valid positions.
        lags: the k's (steps, >= 0).
        min_pos: score only positions ``t >= min_pos`` (default ``max(lags)``), so every lag
            is scored on the same tokens.
        ridge: L2 strength of the least-squares probe (on standardised states).

    Returns:
        one row per (target, lag): ``target, lag, accuracy, chance, n_test``; ``chance`` is the
        test share of the most frequent training class (the best label-blind guess).

    Raises:
        ValueError: bad shapes, a negative lag, or no position left to score.
    """
    lags = [int(k) for k in lags]
    if not lags or min(lags) < 0:
        raise ValueError(f"lags must be a non-empty list of integers >= 0, got {lags}")
    min_pos = max(lags) if min_pos is None else int(min_pos)
    X_tr, Y_tr = _rows(train_states, train_labels, lags, min_pos)
    X_te, Y_te = _rows(test_states, test_labels, lags, min_pos)
    if len(X_tr) == 0 or len(X_te) == 0:
        raise ValueError(f"no position t >= min_pos={min_pos} to train or score on")
    scaler = StandardScaler().fit(X_tr)
    # one-hot blocks, one per (target, lag), solved together (one factorisation)
    blocks, cols = [], []
    for key, y in Y_tr.items():
        classes = np.unique(y)
        blocks.append((key, classes))
        cols.append((y[:, None] == classes[None, :]).astype(np.float64))
    model = Ridge(alpha=ridge).fit(scaler.transform(X_tr), np.concatenate(cols, 1))
    scores = model.predict(scaler.transform(X_te))                     # (n_test, sum of classes)
    rows, j = [], 0
    for (name, k), classes in blocks:
        pred = classes[scores[:, j: j + len(classes)].argmax(1)]
        j += len(classes)
        y_tr, y_te = Y_tr[(name, k)], Y_te[(name, k)]
        majority = np.bincount(y_tr).argmax()
        rows.append({"target": name, "lag": k, "accuracy": float((pred == y_te).mean()),
                     "chance": float((y_te == majority).mean()), "n_test": int(len(y_te))})
    return pd.DataFrame(rows)
