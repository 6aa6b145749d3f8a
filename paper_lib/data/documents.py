"""Sentences joined into documents and label lists padded into arrays, for states that run
across sentence boundaries (the lag-decodability study; our design: the paper is silent)."""
from __future__ import annotations

from typing import Sequence

import numpy as np


def make_documents(corpus, doc_sentences: int) -> tuple[list[list[str]], list[list[int]]]:
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
