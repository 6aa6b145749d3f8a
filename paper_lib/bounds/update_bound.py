"""The Bayes bound of the fixed bank on key-update recall: the best any reader of the noisy one-hot
trace bank can do, computed, not fitted.

The query key ``q`` owns ``V`` coordinates of the one-hot bank, its pair tokens ``p(q, v)`` (the
*query block*, :func:`query_block`; ``S`` traces each). Under the resource model
(:mod:`paper_lib.bounds.noise_budget`) a binding of ``q`` to ``v`` in slot ``i`` puts the known decay profile
``mu_i = b (1 - a)^(answer - i)`` (:func:`slot_profiles`) into coordinate ``v``, plus independent
Gaussian noise of known variance; an unbound coordinate holds noise only. Telling the latest value
is telling which coordinate carries the most recent profile.

- :func:`genie_latest` is the Bayes decision when the reader is also **told which slots bind q** (not
  which value sits where). Given those slots, the rest of the bank (the other keys' coordinates,
  written by the other slots) is independent of the assignment, so this reader is at least as good
  as the best reader of the *whole* bank: its accuracy, :func:`update_bound`, is an **upper bound**
  for every reader of the fixed one-hot bank, the MLP oracle included.
- :func:`bayes_latest` is the Bayes decision from the query block alone, told nothing: a reader the
  bank does allow, so its accuracy is a lower bound on the best reader. Where the two are close, the
  best reader of the fixed bank is pinned between them.

Both enumerate the hypotheses exactly (in log space); only the expectation over sequences and noise
is a Monte-Carlo average (:func:`update_bound` returns its standard error). Our design: the paper is
silent. Shapes: ``L`` log-likelihood ratios ``(n, V, n_slots)``; banks ``(B, S, vocab)``.
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import torch
from torch import Tensor

from ..data.update_recall import UpdateBatch, UpdateTask, sample_update
from .noise_budget import check_sigma, noise_var, write_gain


def slot_profiles(task: UpdateTask, gap: int, alphas: Sequence[float]) -> Tensor:
    """``(n_slots, S)`` float64: slot ``i``'s normalised coefficient in each trace at the answer,
    ``b (1 - a)^(answer_pos - i)``."""
    a = torch.as_tensor(alphas, dtype=torch.float64)
    lag = task.answer_pos(gap) - torch.arange(task.n_slots, dtype=torch.float64)
    return write_gain(alphas)[None, :] * (1 - a[None, :]) ** lag[:, None]


def query_block(bank: Tensor, query: Tensor, task: UpdateTask) -> Tensor:
    """``(B, V, S)``: the bank ``(B, S, vocab)`` at the query key's pair tokens ``p(q, v)``, ``v = 0..V-1``."""
    ids = task.pair_token(query[:, None], torch.arange(task.n_values)[None, :])      # (B, V)
    return bank.gather(2, ids[:, None, :].expand(-1, bank.shape[1], -1)).transpose(1, 2)


def slot_loglik(y: Tensor, mu: Tensor, var: Tensor) -> Tensor:
    """``(n, V, n_slots)`` float64 ``log N(y_v; mu_i, var) - log N(y_v; 0, var)``: the evidence that
    coordinate ``v`` holds a binding from slot ``i`` rather than none. ``y`` ``(n, V, S)``, ``mu``
    ``(n_slots, S)``, ``var`` ``(S,)`` (> 0)."""
    y, mu, var = y.double(), mu.double(), var.double()
    return torch.einsum("nvs,is->nvi", y / var, mu) - 0.5 * (mu ** 2 / var).sum(1)[None, None, :]


def _excl_logcumsumexp(x: Tensor, dim: int) -> Tensor:
    """``log sum_{j < i} exp(x_j)`` along ``dim`` (``-inf`` at the first index)."""
    c = torch.logcumsumexp(x, dim=dim).narrow(dim, 0, x.shape[dim] - 1)
    first = torch.full_like(x.narrow(dim, 0, 1), -math.inf)
    return torch.cat([first, c], dim=dim)


def genie_latest(L: Tensor, bound: Tensor) -> Tensor:
    """``(n,)`` Bayes decision for the latest value when the slots binding the query key are known.

    ``L``: :func:`slot_loglik` ``(n, V, n_slots)``; ``bound``: ``(n, n_slots)`` bool, ``m >= 1`` slots per
    row. Every injective assignment of values to those slots is equally likely a priori; the score of
    ``v`` is the posterior mass of the assignments that put ``v`` in the last bound slot.
    """
    n, V, _ = L.shape
    out = torch.zeros(n, dtype=torch.long)
    counts = bound.sum(1)
    for m in counts.unique().tolist():
        rows = (counts == m).nonzero(as_tuple=True)[0]
        pos = bound[rows].nonzero(as_tuple=True)[1].view(len(rows), m)            # (r, m) ascending slots
        Lp = L[rows].gather(2, pos[:, None, :].expand(-1, V, -1))                 # (r, V, m)
        tuples = torch.tensor(list(itertools.permutations(range(V), m)))          # (H, m) distinct values
        score = sum(Lp[:, tuples[:, j], j] for j in range(m))                     # (r, H)
        lse = torch.stack([torch.logsumexp(score[:, tuples[:, -1] == v], dim=1) for v in range(V)], 1)
        out[rows] = lse.argmax(1)
    return out


def bayes_latest(L: Tensor, bindings: Sequence[int]) -> Tensor:
    """``(n,)`` Bayes decision for the latest value from the query block alone (nothing revealed).

    Hypotheses: ``m`` in ``bindings`` (equally likely), a set of ``m`` slots (uniform), distinct values
    in slot order (uniform); the rest of the block holds noise. Sums over them are factorised over
    slots in log space (no subtraction, so no cancellation at high signal to noise).

    Raises:
        ValueError: a binding count other than 2 or 3.
    """
    if any(m not in (2, 3) for m in bindings):
        raise ValueError(f"bayes_latest handles 2 or 3 bindings, got {list(bindings)}")
    n, V, P = L.shape
    eye = torch.eye(V, dtype=torch.bool)
    out = torch.full((n, V), -math.inf, dtype=L.dtype)
    for m in bindings:
        logw = -math.log(len(bindings)) - math.log(math.comb(P, m)) - math.log(math.perm(V, m))
        if m == 2:                                                                # one earlier binding
            A = torch.logsumexp(L[:, None].expand(n, V, V, P).masked_fill(eye[None, :, :, None], -math.inf), 2)
            post = torch.logsumexp(L + _excl_logcumsumexp(A, 2), 2)              # (n, V)
        else:                                                                     # two earlier bindings
            drop = (eye[:, None, :] | eye[None, :, :])[None, :, :, :, None]      # u in {v, w}
            Bu = torch.logsumexp(L[:, None, None].expand(n, V, V, V, P).masked_fill(drop, -math.inf), 3)
            C = _excl_logcumsumexp(Bu, 3)                                         # (n, v, w, P): k < j
            D = torch.logsumexp((L[:, None] + C).masked_fill(eye[None, :, :, None], -math.inf), 2)
            post = torch.logsumexp(L + _excl_logcumsumexp(D, 2), 2)              # (n, V)
        out = torch.logaddexp(out, post + logw)
    return out.argmax(1)


def analytic_block(batch: UpdateBatch, task: UpdateTask, alphas: Sequence[float], sigma: float,
                   generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
    """The query block of ``batch`` drawn from the model (signal profiles plus Gaussian noise), and
    the ``(mu, var)`` it was drawn with: ``((n, V, S), (n_slots, S), (S,))``, float64."""
    mu = slot_profiles(task, batch.gap, alphas)
    var = noise_var(alphas, sigma, batch.answer_pos + 1)
    y = torch.zeros(len(batch), task.n_values, len(var), dtype=torch.float64)
    rows, slots = batch.bound.nonzero(as_tuple=True)
    y[rows, batch.slot_values[rows, slots]] += mu[slots]
    y += var.sqrt() * torch.randn(y.shape, generator=generator, dtype=torch.float64)
    return y, mu, var


def update_bound(task: UpdateTask, gap: int, alphas: Sequence[float], sigma: float, n: int = 20_000,
                 seed: int = 0, chunk: int = 5_000) -> dict[str, float]:
    """The Bayes bound at ``gap``: :func:`genie_latest`'s accuracy on ``n`` draws of the task and the
    noise (seeded by ``seed``). Returns ``{"acc", "se"}`` (fraction; ``se`` its Monte-Carlo standard
    error). At ``sigma = 0`` the profiles of distinct slots differ, so the bound is 1 exactly.

    Raises:
        ValueError: ``sigma < 0`` or ``n < 1``.
    """
    if check_sigma(sigma) == 0:
        return {"acc": 1.0, "se": 0.0}
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    g = torch.Generator().manual_seed(int(seed))
    right = 0
    for start in range(0, n, chunk):
        b = sample_update(task, gap, min(chunk, n - start), g)
        y, mu, var = analytic_block(b, task, alphas, sigma, g)
        right += int((genie_latest(slot_loglik(y, mu, var), b.bound) == b.latest).sum())
    p = right / n
    return {"acc": p, "se": math.sqrt(max(p * (1 - p), 1e-12) / n)}


def bayes_accuracy(y: Tensor, batch: UpdateBatch, task: UpdateTask, mu: Tensor, var: Tensor,
                   chunk: int = 1_000) -> float:
    """:func:`bayes_latest`'s accuracy on query blocks ``y`` ``(n, V, S)`` of ``batch`` (in chunks: the
    three-binding sums hold ``(chunk, V, V, V, n_slots)`` numbers)."""
    right = 0
    for s in range(0, len(batch), chunk):
        L = slot_loglik(y[s:s + chunk], mu, var)
        right += int((bayes_latest(L, task.bindings) == batch.latest[s:s + chunk]).sum())
    return right / len(batch)
