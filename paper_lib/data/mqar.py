"""Multi-query associative recall (MQAR): the field's probe of whether a state keeps token identity.

The protocol is Zoology's (Arora et al., 2023, "Zoology: Measuring and Improving Recall in
Efficient Language Models"), restated here in our words and built from scratch: a sequence
first lists ``N`` key-value pairs, then asks for some of the keys again; the model must
answer each query with the value that was paired with that key *in this sequence*. Keys and
values come from disjoint vocabularies, which keys appear, which value each gets and in what
order are drawn afresh for every sequence, so nothing can be memorised across sequences: the
only way to answer is to bind a key to its value when the pair is read and retrieve it later.

Layout of one sequence (token ids; ``BLANK = 0`` fills and pads):

    two-token pairs (Zoology):  k_1 v_1 k_2 v_2 ... k_N v_N | 0 x gap | q_1 [0 x delay] q_2 [0 x delay] ... | 0 ...
    single-hop pairs (ours):    p(k_1,v_1) ... p(k_N,v_N)   | 0 x gap | q_1 [0 x delay] ...                 | 0 ...

``q_j`` is one of the ``N`` keys (queries are distinct, in random order). The target of the
position ``delay`` tokens after ``q_j`` is ``q_j``'s value; every other target is ``-100``, so a
cross-entropy with ``ignore_index=-100`` counts the query positions only. With ``delay = 0`` the
answer is due at the query token itself (Zoology's choice). ``delay = 1`` gives the model one
blank token to answer in: our design, so that SPEN's predictor controls, whose attention query
at ``t`` comes from ``u_{t-1}``, can use the query key at all. The *single-hop* variant (ours)
writes each pair as one token ``p(k, v)``, so retrieval needs one attention hop instead of
two (no previous-token step to bind a value to the key before it). ``gap`` inserts blanks
between the pairs and the queries: the key-query distance grows by ``gap`` (a range draws one
gap per sequence). With ``n_distractors > 0`` (ours, for the retention panel) the gap is
filled with distractor tokens drawn uniformly from their own vocabulary instead of blanks, so a
state must keep the key through content that looks like input, not through silence.

Token ids: ``0`` blank; keys ``1..K``; values ``K+1..K+V``; pair tokens (single-hop)
``K+V+1 .. K+V+K*V``; distractors after those. :attr:`MQARTask.vocab_size` gives the total.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd
import torch
from torch import Tensor

BLANK = 0
"""The filler/padding token id."""
IGNORE = -100
"""The target of every position that is not a query answer (cross-entropy's ignore_index)."""


@dataclass(frozen=True)
class MQARTask:
    """One MQAR setting (our parameter names; the protocol is Zoology's).

    Attributes:
        n_keys: key vocabulary K (tokens); must be >= every ``n_pairs`` used.
        n_values: value vocabulary V (tokens), disjoint from the keys.
        n_queries: queries per sequence (at most ``n_pairs``; fewer when ``n_pairs`` is smaller).
        seq_len: tokens per sequence (padded with blanks).
        gap: blanks between the last pair and the first query: an int, or ``(lo, hi)`` for a
            gap drawn uniformly in ``[lo, hi]`` per sequence.
        delay: blanks after each query key; the answer is due at the last of them (0: at the key).
        single_hop: one token per pair (ours) instead of key then value (Zoology).
        n_distractors: distractor vocabulary that fills the gap (0: blanks; ours).
    """

    n_keys: int = 64
    n_values: int = 64
    n_queries: int = 8
    seq_len: int = 64
    gap: int | tuple[int, int] = 0
    delay: int = 0
    single_hop: bool = False
    n_distractors: int = 0

    def __post_init__(self):
        for name in ("n_keys", "n_values", "n_queries", "seq_len"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"MQAR {name} must be an integer >= 1, got {v!r}")
        if isinstance(self.delay, bool) or not isinstance(self.delay, int) or self.delay < 0:
            raise ValueError(f"MQAR delay must be an integer >= 0, got {self.delay!r}")
        if isinstance(self.n_distractors, bool) or not isinstance(self.n_distractors, int) or self.n_distractors < 0:
            raise ValueError(f"MQAR n_distractors must be an integer >= 0, got {self.n_distractors!r}")
        lo, hi = self.gap_range
        if lo < 0 or hi < lo:
            raise ValueError(f"MQAR gap must be an integer >= 0 or a range (lo, hi) with 0 <= lo <= hi, got {self.gap!r}")

    @property
    def gap_range(self) -> tuple[int, int]:
        """``(lo, hi)`` of the gap in blanks."""
        g = self.gap
        if isinstance(g, (tuple, list)) and len(g) == 2 and all(isinstance(x, int) for x in g):
            return int(g[0]), int(g[1])
        if isinstance(g, int) and not isinstance(g, bool):
            return g, g
        raise ValueError(f"MQAR gap must be an integer >= 0 or a range (lo, hi), got {g!r}")

    @property
    def vocab_size(self) -> int:
        """Token ids in use: blank, keys, values, the pair tokens when single-hop, the distractors."""
        return self.distractor_base + self.n_distractors

    @property
    def distractor_base(self) -> int:
        """The first distractor id (the ids before it are blank, keys, values and pair tokens)."""
        return 1 + self.n_keys + self.n_values + (self.n_keys * self.n_values if self.single_hop else 0)

    def length(self, n_pairs: int) -> int:
        """Tokens a sequence with ``n_pairs`` pairs needs at the largest gap (before padding)."""
        per_pair = 1 if self.single_hop else 2
        return per_pair * n_pairs + self.gap_range[1] + min(self.n_queries, n_pairs) * (1 + self.delay)

    def check(self, n_pairs: int) -> None:
        """Raise a one-line ValueError if ``n_pairs`` does not fit this task."""
        if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or n_pairs < 1:
            raise ValueError(f"MQAR n_pairs must be an integer >= 1, got {n_pairs!r}")
        if n_pairs > self.n_keys:
            raise ValueError(f"MQAR n_pairs ({n_pairs}) exceeds n_keys ({self.n_keys}): keys in a sequence are distinct")
        need = self.length(n_pairs)
        if need > self.seq_len:
            raise ValueError(f"MQAR sequence of {n_pairs} pairs needs {need} tokens; seq_len is {self.seq_len}")


@dataclass
class MQARBatch:
    """A batch of MQAR sequences.

    Attributes:
        inputs: ``(B, T)`` int64 token ids.
        targets: ``(B, T)`` int64, the value id at answer positions, ``-100`` elsewhere.
        distance: ``(B, T)`` int64, tokens from the queried key's position in the pair list to
            the answer position (``-1`` where there is no answer).
        n_pairs: ``(B,)`` int64, pairs in each sequence.
    """

    inputs: Tensor
    targets: Tensor
    distance: Tensor
    n_pairs: Tensor

    def __len__(self) -> int:
        return self.inputs.shape[0]


def _one_n(task: MQARTask, n: int, batch: int, gen: torch.Generator) -> MQARBatch:
    """``batch`` sequences with exactly ``n`` pairs (see the module docstring for the layout)."""
    K, V, T = task.n_keys, task.n_values, task.seq_len
    Q = min(task.n_queries, n)
    keys = torch.rand(batch, K, generator=gen).argsort(dim=1)[:, :n] + 1           # (B, n) distinct keys
    values = torch.randint(V, (batch, n), generator=gen) + K + 1                   # (B, n) values
    asked = torch.rand(batch, n, generator=gen).argsort(dim=1)[:, :Q]             # (B, Q) which pairs are queried
    lo, hi = task.gap_range
    gap = torch.randint(lo, hi + 1, (batch, 1), generator=gen)                    # (B, 1) blanks
    if task.single_hop:
        context = 1 + K + V + (keys - 1) * V + (values - K - 1)                   # (B, n) pair tokens
        key_pos = torch.arange(n).expand(batch, n)                                # (B, n)
    else:
        context = torch.stack([keys, values], dim=2).reshape(batch, 2 * n)         # (B, 2n) k v k v ...
        key_pos = (2 * torch.arange(n)).expand(batch, n)
    inputs = torch.full((batch, T), BLANK, dtype=torch.long)
    targets = torch.full((batch, T), IGNORE, dtype=torch.long)
    distance = torch.full((batch, T), -1, dtype=torch.long)
    inputs[:, : context.shape[1]] = context
    if task.n_distractors:                                                        # fill the gap with distractors
        pos = torch.arange(T).expand(batch, T)
        fill = (pos >= context.shape[1]) & (pos < context.shape[1] + gap)
        noise = torch.randint(task.n_distractors, (batch, T), generator=gen) + task.distractor_base
        inputs = torch.where(fill, noise, inputs)
    q_pos = context.shape[1] + gap + (1 + task.delay) * torch.arange(Q)           # (B, Q) query key positions
    a_pos = q_pos + task.delay                                                    # (B, Q) answer positions
    inputs.scatter_(1, q_pos, keys.gather(1, asked))
    targets.scatter_(1, a_pos, values.gather(1, asked))
    distance.scatter_(1, a_pos, a_pos - key_pos.gather(1, asked))
    return MQARBatch(inputs, targets, distance, torch.full((batch,), n, dtype=torch.long))


def sample_mqar(task: MQARTask, n_pairs: int | Sequence[int], batch: int,
                generator: torch.Generator | int) -> MQARBatch:
    """Fresh MQAR sequences: keys, values, pairings, query order and gaps drawn per sequence.

    Args:
        task: the setting (:class:`MQARTask`).
        n_pairs: pairs per sequence, or a list of them: then each sequence draws its ``N``
            uniformly from the list (a mixture over ``N``, for training one model for all).
        batch: sequences (>= 1).
        generator: a seeded ``torch.Generator``, or an int seed; the same seed gives the same batch.

    Returns:
        :class:`MQARBatch` with ``inputs``/``targets``/``distance`` of shape ``(batch, seq_len)``.

    Raises:
        ValueError: ``batch < 1``, an empty list, or an ``n_pairs`` that does not fit ``task``
            (more pairs than keys, or a sequence longer than ``seq_len``).
    """
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"MQAR batch must be an integer >= 1, got {batch!r}")
    ns = [n_pairs] if isinstance(n_pairs, int) else list(n_pairs)
    if not ns:
        raise ValueError("MQAR n_pairs is an empty list; give at least one pair count")
    for n in ns:
        task.check(n)
    gen = generator if isinstance(generator, torch.Generator) else torch.Generator().manual_seed(int(generator))
    if len(ns) == 1:
        return _one_n(task, ns[0], batch, gen)
    choice = torch.randint(len(ns), (batch,), generator=gen)                     # (B,) index into ns
    parts = [(i, _one_n(task, n, int((choice == i).sum()), gen)) for i, n in enumerate(ns) if (choice == i).any()]
    out = MQARBatch(*(torch.empty((batch,) + getattr(parts[0][1], f).shape[1:], dtype=torch.long)
                      for f in ("inputs", "targets", "distance", "n_pairs")))
    for i, part in parts:
        rows = (choice == i).nonzero(as_tuple=True)[0]
        for f in ("inputs", "targets", "distance", "n_pairs"):
            getattr(out, f)[rows] = getattr(part, f)
    return out


def query_accuracy(logits: Tensor, targets: Tensor) -> tuple[int, int]:
    """Correct answers and answers counted: argmax of ``logits`` ``(B, T, V)`` against
    ``targets`` ``(B, T)`` at the positions whose target is not ``-100``."""
    mask = targets != IGNORE
    return int((logits.argmax(-1)[mask] == targets[mask]).sum()), int(mask.sum())


def model_device(model) -> torch.device:
    """The device of ``model``'s first parameter (the CPU for a model without parameters)."""
    p = next(model.parameters(), None)
    return p.device if p is not None else torch.device("cpu")


@torch.no_grad()
def accuracy_by_pairs(model, mqar: MQARTask, n_pairs: Sequence[int], n_seqs: int, seed: int) -> dict[int, float]:
    """Query accuracy (fraction) at each pair count on ``n_seqs`` fresh sequences drawn with ``seed``."""
    out = {}
    for n in n_pairs:
        b = sample_mqar(mqar, n, n_seqs, seed + n)
        right, total = query_accuracy(model(b.inputs.to(model_device(model)))[0].cpu(), b.targets)
        out[int(n)] = right / total
    return out


@torch.no_grad()
def accuracy_by_distance(model, mqar: MQARTask, n_pairs: int, n_seqs: int, bins: Sequence[int],
                         seed: int) -> pd.DataFrame:
    """Query accuracy binned by key-query distance (tokens) on ``n_seqs`` fresh sequences drawn with
    ``seed``: rows ``distance_lo, distance_hi, accuracy, answers`` (empty bins left out)."""
    b = sample_mqar(mqar, n_pairs, n_seqs, seed)
    mask = b.targets != -100
    right = (model(b.inputs.to(model_device(model)))[0].argmax(-1).cpu() == b.targets)[mask].numpy()
    dist = b.distance[mask].numpy()
    edges = list(bins) + [max(int(dist.max()) + 1, bins[-1] + 1)]
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        sel = (dist >= lo) & (dist < hi)
        if sel.any():
            rows.append({"distance_lo": lo, "distance_hi": hi, "accuracy": float(right[sel].mean()),
                         "answers": int(sel.sum())})
    return pd.DataFrame(rows)
