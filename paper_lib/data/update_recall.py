"""Key-update recall: the query key was bound more than once, and the answer is its LATEST value.

Notebook 05's single-hop recall (:mod:`paper_lib.data.mqar`) never overwrites anything: every key
is bound once, so a fixed-decay state only has to tell *which* bindings it holds, and the decay
merely rescales them. Here the query key is bound two or three times, to distinct values, among
``n_slots`` pair tokens; the other slots bind the other keys (drawn with replacement, so they
repeat and rebind too). A state that cannot erase the old binding must tell the latest one by its
age, which a fixed decay writes only as a weight; an input-dependent decay can erase and rewrite.
Our design: the paper has no recall experiment.

Layout of one sequence (token ids as in :mod:`paper_lib.data.mqar`'s single-hop variant: ``0``
blank, keys ``1..K``, values ``K+1..K+V``, pair tokens ``p(k, v) = K+V+1 + (k-1) V + v``):

    p(k_1, v_1) ... p(k_S, v_S) | 0 x gap | q | 0 x delay   (the target of the last position:
                                                              q's latest value, the token K+1+v)

With ``delay = 1`` the answer is due one token after the query (the notebooks' choice: a reader
whose attention query comes from the previous position can still key on ``q``). Every other
target is ``-100``. ``gap`` is the paper's Δ: blanks between the last pair and the query.

Two exact baselines, computed on the very sequences a model is scored on:
:func:`any_value_baseline` (a reader that knows which values the query key was bound to but not
their order, and guesses among them: ``1/2`` or ``1/3``, about 0.42), and
:func:`keys_ignored_baseline` (the Bayes-optimal guess from the values in slot order without their
keys).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch
from torch import Tensor

BLANK = 0
IGNORE = -100


@dataclass(frozen=True)
class UpdateTask:
    """One key-update setting (our design).

    Attributes:
        n_keys: keys K (tokens 1..K). n_values: values V (tokens K+1..K+V).
        n_slots: pair tokens per sequence (S).
        bindings: how many times the query key may be bound, each drawn with equal probability;
            every entry in ``[2, min(n_slots, n_values)]`` (distinct values per binding).
        delay: blanks after the query; the answer is due at the last of them (>= 0).
    """

    n_keys: int = 8
    n_values: int = 8
    n_slots: int = 10
    bindings: tuple[int, ...] = (2, 3)
    delay: int = 1

    def __post_init__(self):
        for name in ("n_keys", "n_values", "n_slots"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"update task {name} must be an integer >= 1, got {v!r}")
        if self.n_keys < 2:
            raise ValueError(f"update task n_keys must be >= 2 (the query key and others), got {self.n_keys}")
        if isinstance(self.delay, bool) or not isinstance(self.delay, int) or self.delay < 0:
            raise ValueError(f"update task delay must be an integer >= 0, got {self.delay!r}")
        top = min(self.n_slots, self.n_values)
        if not self.bindings or any(isinstance(m, bool) or not isinstance(m, int) or not 2 <= m <= top
                                    for m in self.bindings):
            raise ValueError(f"update task bindings must be integers in [2, {top}] (min of n_slots, n_values), "
                             f"got {self.bindings!r}")

    @property
    def vocab_size(self) -> int:
        """Token ids in use: blank, keys, values and the ``K x V`` pair tokens (81 at 8 x 8)."""
        return 1 + self.n_keys + self.n_values + self.n_keys * self.n_values

    def pair_token(self, key: Tensor, value: Tensor) -> Tensor:
        """``p(k, v)`` for keys in ``1..K`` and value indices in ``0..V-1`` (any shape)."""
        return 1 + self.n_keys + self.n_values + (key - 1) * self.n_values + value

    def length(self, gap: int) -> int:
        """Tokens of a sequence with ``gap`` blanks: slots, gap, query, delay."""
        return self.n_slots + gap + 1 + self.delay

    def answer_pos(self, gap: int) -> int:
        """Position (0-based) of the answer: the last token of the sequence."""
        return self.length(gap) - 1


@dataclass
class UpdateBatch:
    """Sequences of one gap.

    Attributes:
        inputs: ``(B, T)`` int64 token ids. targets: ``(B, T)`` int64, the latest value's token at
            the answer position, ``-100`` elsewhere.
        query: ``(B,)`` the query key (1..K). latest: ``(B,)`` its latest value (index 0..V-1).
        n_bound: ``(B,)`` how many times the query key is bound.
        slot_keys, slot_values: ``(B, S)`` each slot's key (1..K) and value index (0..V-1).
        gap: blanks between the pairs and the query. answer_pos: the answer's position.
    """

    inputs: Tensor
    targets: Tensor
    query: Tensor
    latest: Tensor
    n_bound: Tensor
    slot_keys: Tensor
    slot_values: Tensor
    gap: int
    answer_pos: int

    def __len__(self) -> int:
        return self.inputs.shape[0]

    @property
    def bound(self) -> Tensor:
        """``(B, S)`` bool: the slots that bind the query key."""
        return self.slot_keys == self.query[:, None]


def _generator(generator: torch.Generator | int) -> torch.Generator:
    return generator if isinstance(generator, torch.Generator) else torch.Generator().manual_seed(int(generator))


def sample_update(task: UpdateTask, gap: int, batch: int, generator: torch.Generator | int) -> UpdateBatch:
    """Fresh key-update sequences with ``gap`` blanks (the layout in the module docstring).

    Per sequence: the query key uniformly; how often it is bound (uniformly from
    ``task.bindings``), at slots drawn without replacement, to distinct values (in slot order, a
    random ordering of the values); every other slot a key drawn uniformly from the other keys and a
    value drawn uniformly. The same generator state gives the same batch.

    Raises:
        ValueError: ``gap`` not an integer >= 0, or ``batch`` not an integer >= 1.
    """
    if isinstance(gap, bool) or not isinstance(gap, int) or gap < 0:
        raise ValueError(f"update gap must be an integer >= 0, got {gap!r}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"update batch must be an integer >= 1, got {batch!r}")
    g = _generator(generator)
    K, V, S = task.n_keys, task.n_values, task.n_slots
    query = torch.randint(K, (batch,), generator=g) + 1                           # (B,)
    choices = torch.tensor(task.bindings)
    m = choices[torch.randint(len(choices), (batch,), generator=g)]               # (B,)
    order = torch.rand(batch, S, generator=g).argsort(dim=1)                      # (B, S) a random slot order
    bound = torch.zeros(batch, S, dtype=torch.bool).scatter_(1, order, torch.arange(S).expand(batch, S) < m[:, None])
    q_values = torch.rand(batch, V, generator=g).argsort(dim=1)                   # (B, V): values in binding order
    rank = (bound.cumsum(1) - 1).clamp(min=0)                                     # (B, S): which binding a slot is
    other_keys = torch.randint(K - 1, (batch, S), generator=g) + 1                # (B, S) in 1..K-1
    other_keys = other_keys + (other_keys >= query[:, None]).long()               # skip the query key
    other_values = torch.randint(V, (batch, S), generator=g)                      # (B, S)
    slot_keys = torch.where(bound, query[:, None], other_keys)
    slot_values = torch.where(bound, q_values.gather(1, rank), other_values)
    latest = q_values.gather(1, (m - 1)[:, None])[:, 0]                           # (B,): the last binding's value
    T, a = task.length(gap), task.answer_pos(gap)
    inputs = torch.full((batch, T), BLANK, dtype=torch.long)
    inputs[:, :S] = task.pair_token(slot_keys, slot_values)
    inputs[:, S + gap] = query
    targets = torch.full((batch, T), IGNORE, dtype=torch.long)
    targets[:, a] = K + 1 + latest
    return UpdateBatch(inputs, targets, query, latest, m, slot_keys, slot_values, gap, a)


def any_value_baseline(batch: UpdateBatch) -> float:
    """Accuracy of guessing uniformly among the values bound to the query key (``mean 1 / n_bound``):
    a reader that knows the query key's bindings but not their order. Exact on ``batch``."""
    return float((1.0 / batch.n_bound.double()).mean())


def keys_ignored_posterior(task: UpdateTask, batch: UpdateBatch) -> Tensor:
    """``(B, V)`` float64: the posterior of the latest value given the slots' values in order, without
    their keys (the best reader that ignores the keys).

    Without keys, the query key's slots are unknown: a set ``P`` of ``m`` slots has prior
    ``P(m) / C(S, m)``, and the values seen there have likelihood ``[distinct] V^m / (V)_m``
    relative to any other set (the query's values are distinct, the rest uniform). Each value scores
    the posterior mass of the sets whose last slot holds it.
    """
    vals, S, V = batch.slot_values, task.n_slots, task.n_values
    score = torch.zeros(len(batch), V, dtype=torch.float64)
    for m in task.bindings:
        w = (1 / len(task.bindings)) / math.comb(S, m) * V ** m / math.perm(V, m)
        for P in itertools.combinations(range(S), m):
            sub = vals[:, list(P)]                                                # (B, m)
            distinct = (sub[:, :, None] != sub[:, None, :]).sum((1, 2)) == m * (m - 1)
            score.scatter_add_(1, sub[:, -1:], (w * distinct.double())[:, None])
    return score / score.sum(1, keepdim=True)


def keys_ignored_baseline(task: UpdateTask, batch: UpdateBatch) -> float:
    """Accuracy of the Bayes-optimal guess from the slots' values in order, without their keys
    (:func:`keys_ignored_posterior`'s best value, ties shared: each tied value counts ``1 / ties``).
    Exact on ``batch``."""
    post = keys_ignored_posterior(task, batch)
    best = post == post.max(dim=1, keepdim=True).values                          # (B, V)
    hit = best.gather(1, batch.latest[:, None])[:, 0].double() / best.sum(1)
    return float(hit.mean())


def keys_ignored_loss(task: UpdateTask, batch: UpdateBatch) -> float:
    """The cross-entropy (nats per answer) of :func:`keys_ignored_posterior`: the loss a model sits at
    while it reads values without keys (the stopping rule's chance loss, :mod:`paper_lib.stopping`)."""
    p = keys_ignored_posterior(task, batch).gather(1, batch.latest[:, None])[:, 0]
    return float(-p.clamp_min(1e-12).log().mean())
