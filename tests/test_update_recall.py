"""Key-update recall (notebook 07): the task, its exact baselines, the noise model, the Bayes bound
(against brute force and against the simulated recurrence) and the noisy models."""
from __future__ import annotations

import itertools
import math

import pytest
import torch

from paper_lib.bounds.noise_budget import bank_read, dense_sigma, noise_var, noisy_traces, trace_gain, write_gain
from paper_lib.bounds.update_bound import (
    analytic_block,
    bayes_latest,
    genie_latest,
    query_block,
    slot_loglik,
    slot_profiles,
    update_bound,
)
from paper_lib.data.update_recall import (
    UpdateBatch,
    UpdateTask,
    any_value_baseline,
    keys_ignored_baseline,
    sample_update,
)
from paper_lib.ema import ema_traces

A = (0.5, 0.1, 0.02)
TASK = UpdateTask()


# --------------------------------------------------------------------------- the task

def test_layout_and_target_are_the_latest_binding():
    b = sample_update(TASK, 5, 400, 0)
    S = TASK.n_slots
    assert b.inputs.shape == (400, S + 5 + 2) and b.answer_pos == S + 6 and TASK.vocab_size == 81
    assert (b.inputs[:, S:S + 5] == 0).all() and (b.inputs[:, S + 5] == b.query).all() and (b.inputs[:, -1] == 0).all()
    assert ((b.targets[:, :-1] == -100).all()) and (b.targets[:, -1] == TASK.n_keys + 1 + b.latest).all()
    assert (b.inputs[:, :S] == TASK.pair_token(b.slot_keys, b.slot_values)).all()
    for r in range(400):
        slots = b.bound[r].nonzero()[:, 0]
        assert len(slots) == int(b.n_bound[r]) and int(b.n_bound[r]) in TASK.bindings
        vals = b.slot_values[r, slots]
        assert len(set(vals.tolist())) == len(vals)                  # distinct values for the query key
        assert int(vals[-1]) == int(b.latest[r])                     # the target: the last slot's value
    assert set(b.n_bound.tolist()) == {2, 3}


def test_same_seed_same_batch_and_errors():
    a, b = sample_update(TASK, 2, 8, 3), sample_update(TASK, 2, 8, 3)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
    with pytest.raises(ValueError, match="gap must be an integer >= 0"):
        sample_update(TASK, -1, 8, 0)
    with pytest.raises(ValueError, match="bindings must be integers in"):
        UpdateTask(bindings=(1,))


def _all_outcomes(task: UpdateTask) -> UpdateBatch:
    """Every outcome of a tiny task's generator, equally likely (one binding count, K = 2)."""
    assert task.n_keys == 2 and len(task.bindings) == 1
    m, S, V = task.bindings[0], task.n_slots, task.n_values
    rows = []
    for q in (1, 2):
        for P in itertools.combinations(range(S), m):
            for qv in itertools.permutations(range(V), m):
                rest = [i for i in range(S) if i not in P]
                for others in itertools.product(range(V), repeat=len(rest)):
                    vals = [0] * S
                    for i, v in zip(P, qv, strict=True):
                        vals[i] = v
                    for i, v in zip(rest, others, strict=True):
                        vals[i] = v
                    keys = [q if i in P else 3 - q for i in range(S)]
                    rows.append((q, qv[-1], keys, vals))
    q = torch.tensor([r[0] for r in rows])
    keys, vals = torch.tensor([r[2] for r in rows]), torch.tensor([r[3] for r in rows])
    n = torch.full((len(rows),), m)
    return UpdateBatch(torch.zeros(len(rows), 1, dtype=torch.long), torch.zeros(len(rows), 1, dtype=torch.long), q,
                       torch.tensor([r[1] for r in rows]), n, keys, vals, 0, 0)


def test_keys_ignored_is_the_bayes_optimal_key_blind_guess_exactly():
    task = UpdateTask(n_keys=2, n_values=3, n_slots=4, bindings=(2,))
    b = _all_outcomes(task)
    joint: dict[tuple, torch.Tensor] = {}                              # value sequence -> counts of the latest value
    for vals, latest in zip(b.slot_values.tolist(), b.latest.tolist(), strict=True):
        joint.setdefault(tuple(vals), torch.zeros(3))[latest] += 1
    bayes = sum(float(c.max()) for c in joint.values()) / len(b)      # each value sequence: its best guess
    assert keys_ignored_baseline(task, b) == pytest.approx(bayes, abs=1e-12)
    assert any_value_baseline(b) == pytest.approx(0.5)


def test_the_default_tasks_baselines():
    """Two or three bindings, equally likely: the any-bound-value guess scores (1/2 + 1/3) / 2 = 5/12
    in expectation; the key-blind guess beats uniform over the 8 values and stays below it."""
    b = sample_update(TASK, 2, 20_000, 4)
    p3 = float((b.n_bound == 3).double().mean())
    assert any_value_baseline(b) == pytest.approx(0.5 * (1 - p3) + p3 / 3, abs=1e-12)   # exact on the batch
    assert abs(any_value_baseline(b) - 5 / 12) < 4 * math.sqrt(1 / 144 / 20_000)         # 4 SE of the mean
    assert 1 / TASK.n_values < keys_ignored_baseline(TASK, sample_update(TASK, 2, 2000, 4)) < 5 / 12


# --------------------------------------------------------------------------- the noise model

def test_gains_and_noise_variance():
    a = torch.tensor(A, dtype=torch.float64)
    assert torch.allclose(trace_gain(A) * write_gain(A), 2 - a)     # gain * b = (2 - a)
    v = noise_var(A, 0.1, 7)
    assert torch.allclose(v, 0.01 * torch.tensor([sum((1 - x) ** (2 * k) for k in range(7)) for x in A],
                                                  dtype=torch.float64))
    assert dense_sigma(0.02, 81) == pytest.approx(0.02 / 9)
    with pytest.raises(ValueError, match="sigma must be a finite number >= 0"):
        noise_var(A, -1.0, 3)


def test_bank_read_is_the_noisy_recurrence_in_distribution():
    b = sample_update(TASK, 3, 1000, 1)
    V, pos = TASK.vocab_size, b.answer_pos
    onehot = torch.nn.functional.one_hot(b.inputs, V).float()
    gain = trace_gain(A).float().view(1, -1, 1)
    exact = gain * ema_traces(onehot, A)[:, pos]                       # (B, S, V) noise-free, normalised
    assert torch.allclose(bank_read(b.inputs, pos, V, A, 0.0), exact, atol=1e-5)
    g = torch.Generator().manual_seed(2)
    direct = bank_read(b.inputs, pos, V, A, 0.05, g) - exact
    recur = gain * noisy_traces(onehot, A, 0.05, generator=g)[:, pos] - exact
    want = noise_var(A, 0.05, pos + 1).float()
    for noise in (direct, recur):                                       # mean 0, the stated variance per trace
        assert noise.mean().abs() < 1e-3
        assert torch.allclose(noise.var(dim=(0, 2)), want, rtol=0.03)


# --------------------------------------------------------------------------- the Bayes bound

def _brute(L: torch.Tensor, bindings, P=None) -> torch.Tensor:
    """The Bayes decision by enumerating every hypothesis (the reference of the fast sums)."""
    n, V, S = L.shape
    scores = torch.full((n, V), -math.inf, dtype=torch.float64)
    for m in bindings:
        w = math.log(1 / len(bindings)) - math.log(math.comb(S, m) * math.perm(V, m))
        for pos in itertools.combinations(range(S), m):
            if P is not None and pos != P:
                continue
            for vs in itertools.permutations(range(V), m):
                term = w + sum(L[:, v, p] for v, p in zip(vs, pos, strict=True))
                scores[:, vs[-1]] = torch.logaddexp(scores[:, vs[-1]], term)
    return scores.argmax(1)


@pytest.mark.parametrize("sigma,gap", [(0.005, 2), (0.02, 8), (0.05, 32)])
def test_bayes_decisions_equal_brute_force(sigma, gap):
    task = UpdateTask(n_values=5, n_slots=6)
    g = torch.Generator().manual_seed(0)
    b = sample_update(task, gap, 60, g)
    y, mu, var = analytic_block(b, task, A, sigma, g)
    L = slot_loglik(y, mu, var)
    assert torch.equal(bayes_latest(L, task.bindings), _brute(L, task.bindings))
    slots = [tuple(r.nonzero()[:, 0].tolist()) for r in b.bound]
    want = torch.stack([_brute(L[i:i + 1], task.bindings, slots[i])[0] for i in range(len(b))])
    assert torch.equal(genie_latest(L, b.bound), want)


def test_the_bound_matches_the_simulated_noisy_bank():
    """Monte-Carlo check of the bound's model (profiles, noise variance): the genie decision applied to
    query blocks read from the noisy recurrence over one-hot inputs scores what the bound says."""
    sigma, gap, n = 0.02, 8, 4000
    bound = update_bound(TASK, gap, A, sigma, n=n, seed=5)
    b = sample_update(TASK, gap, n, 11)
    onehot = torch.nn.functional.one_hot(b.inputs, TASK.vocab_size).float()
    bank = (trace_gain(A).float().view(1, 1, -1, 1) * noisy_traces(onehot, A, sigma,
                                                                    generator=torch.Generator().manual_seed(3)))
    y = query_block(bank[:, b.answer_pos], b.query, TASK)
    L = slot_loglik(y, slot_profiles(TASK, gap, A), noise_var(A, sigma, b.answer_pos + 1))
    sim = float((genie_latest(L, b.bound) == b.latest).float().mean())
    se = math.sqrt(2 * bound["acc"] * (1 - bound["acc"]) / n)
    assert abs(sim - bound["acc"]) < 4 * se
    assert 0.5 < bound["acc"] < 0.8                                    # neither chance nor exact at this noise


def test_bound_is_one_without_noise_and_falls_with_gap_and_noise():
    assert update_bound(TASK, 64, A, 0.0) == {"acc": 1.0, "se": 0.0}
    near, far = (update_bound(TASK, d, A, 0.02, n=3000, seed=1)["acc"] for d in (2, 64))
    quiet = update_bound(TASK, 2, A, 0.005, n=3000, seed=1)["acc"]
    assert far < near < quiet
