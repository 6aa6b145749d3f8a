"""The trace oracle (paper_lib.bounds.oracle) and the keys-ignored baseline: real values on tiny tasks."""
from __future__ import annotations

import math

import pytest
import torch

from paper_lib.bounds.oracle import (
    LagOracleConfig,
    OracleConfig,
    fit_lag_oracle,
    fit_oracle,
    fixed_embeddings,
    keys_ignored_baseline,
    keys_ignored_loss,
    oracle_by_pairs,
)
from paper_lib.data.mqar import IGNORE, MQARTask, sample_mqar
from paper_lib.ema import ema_traces

TINY = MQARTask(n_keys=4, n_values=4, n_queries=2, seq_len=6, delay=1, single_hop=True)
CFG = OracleConfig(d_model=32, rank=64, steps=250, batch_size=64, warmup_steps=10)


def test_oracle_recovers_pairs_where_it_must_and_repeats():
    torch.set_num_threads(1)
    oracle, curve, stop = fit_oracle(TINY, [2], CFG, seed=0)
    acc = oracle_by_pairs(oracle, TINY, [2], 256, seed=5)
    assert acc[2] >= 0.95 and stop.reason in ("solved", "flat")  # two pairs, 16 bindings, a bank of 3 x 32
    assert curve[-1]["step"] == stop.steps[0] and curve[-1]["train_loss"] < math.log(TINY.n_values)
    again, _, _ = fit_oracle(TINY, [2], CFG, seed=0)
    assert oracle_by_pairs(again, TINY, [2], 256, seed=5) == acc
    logits, _ = oracle(sample_mqar(TINY, 2, 3, 1).inputs)
    assert logits.shape == (3, TINY.seq_len, TINY.vocab_size)


def test_oracle_without_training_is_at_chance_not_above():
    oracle, _, stop = fit_oracle(TINY, [2], OracleConfig(d_model=32, rank=64, steps=1, lr=1e-9, warmup_steps=0), seed=0)
    assert oracle_by_pairs(oracle, TINY, [2], 256, seed=5)[2] < 0.5 and stop.reason == "never_left_plateau"


def test_keys_ignored_baseline_on_a_constructed_sequence():
    K, V = TINY.n_keys, TINY.n_values
    def pair(k, v):                                            # key 1..K, value index 0..V-1
        return 1 + K + V + (k - 1) * V + v
    # pairs (1 -> v0), (2 -> v0), (3 -> v2); queries for keys 1 and 3, answers one blank later
    inputs = torch.tensor([[pair(1, 0), pair(2, 0), pair(3, 2), 1, 0, 3, 0]])
    targets = torch.full_like(inputs, IGNORE)
    targets[0, 4], targets[0, 6] = K + 1 + 0, K + 1 + 2
    assert keys_ignored_baseline(TINY, inputs, targets) == 0.5   # the mode v0 is right for key 1, wrong for key 3
    tie = torch.tensor([[pair(1, 0), pair(2, 1), 1, 0]])        # two values once each: 1/2 for any answer
    t2 = torch.full_like(tie, IGNORE)
    t2[0, 3] = K + 1
    assert keys_ignored_baseline(TINY, tie, t2) == 0.5
    # its loss: each value with its share of the pairs, v0 2/3 (right for key 1), v2 1/3 (right for key 3)
    assert keys_ignored_loss(TINY, inputs, targets) == pytest.approx(-(math.log(2 / 3) + math.log(1 / 3)) / 2)
    assert keys_ignored_loss(TINY, tie, t2) == pytest.approx(math.log(2))


def test_baseline_is_above_one_over_n_on_drawn_sequences():
    task = MQARTask(n_keys=8, n_values=8, n_queries=8, seq_len=24, delay=1, single_hop=True)
    b = sample_mqar(task, 8, 512, 3)
    assert 0.3 < keys_ignored_baseline(task, b.inputs, b.targets) < 0.36    # about 0.326 > 1/8


def test_bad_input_is_one_line_error():
    with pytest.raises(ValueError, match="no answer position"):
        keys_ignored_baseline(TINY, torch.zeros(1, 4, dtype=torch.long), torch.full((1, 4), IGNORE))
    with pytest.raises(ValueError, match=r"must both be \(B, T\)"):
        keys_ignored_baseline(TINY, torch.zeros(1, 4, dtype=torch.long), torch.zeros(1, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="alpha"):
        OracleConfig(alphas=(0.0, 0.5))
    with pytest.raises(ValueError, match="d_model"):
        fixed_embeddings(5, 0, 0)
    e = fixed_embeddings(5, 7, 0)
    assert torch.allclose(e.norm(dim=1), torch.ones(5))


# --------------------------------------------------------------------------- the lag oracle (notebook 06)

def _bank_sampler(V, d, alphas, T, seed=0):
    E = fixed_embeddings(V, d, seed)

    def sample(n, gen):
        tok = torch.randint(0, V, (n, T), generator=gen)
        return ema_traces(E[tok], alphas).flatten(2), tok
    return sample


SMALL = LagOracleConfig(hidden=64, layers=1, max_steps=300, lr=1e-2, batch_sequences=8, eval_every=25, patience=3,
                        val_sequences=8, min_steps=0, tol=0.05)


def test_lag_oracle_reads_a_copy_trace_at_lag_zero_and_not_at_lag_one():
    torch.set_num_threads(1)
    sample = _bank_sampler(8, 16, [1.0], 40)                   # alpha = 1: the trace is x_t, 8 tokens in 16 dims
    oracle, steps, stops = fit_lag_oracle(sample, 8, [0, 1], 1, SMALL, seed=0)
    acc, chance = oracle.score(*sample(16, torch.Generator().manual_seed(9)), 1)
    assert acc[0] >= 0.99                                      # identity at lag 0 is exact
    assert acc[1] < chance[1] + 0.1                            # lag 1 is not in a copy trace
    assert set(steps) == {0, 1} and all(1 <= s <= SMALL.max_steps for s in steps.values())
    assert stops == {0: "solved", 1: "never_left_plateau"}     # lag 1 sits on its chance loss to the cap


def test_lag_oracle_falls_to_chance_far_past_the_slowest_trace():
    torch.set_num_threads(1)
    sample = _bank_sampler(64, 4, [0.5, 0.1, 0.02], 140)       # 64 tokens in 4 dims, lag 120 >> 1 / 0.02
    oracle, _, _ = fit_lag_oracle(sample, 64, [0, 120], 120, SMALL, seed=0)
    acc, chance = oracle.score(*sample(32, torch.Generator().manual_seed(9)), 120)
    assert acc[1] < chance[1] + 0.03 and acc[0] > acc[1] + 0.1  # lag 0 is read well above the far lag


def test_lag_oracle_runs_on_while_on_its_chance_loss_and_not_flat_before_min_steps():
    torch.set_num_threads(1)
    frozen = LagOracleConfig(hidden=8, layers=1, max_steps=200, lr=1e-12, batch_sequences=2, eval_every=10, patience=1,
                             val_sequences=40, min_steps=0, tol=0.2)   # no learning: it never leaves its chance loss
    _, steps, stops = fit_lag_oracle(_bank_sampler(4, 4, [0.5], 10), 4, [0], 3, frozen, seed=0)
    assert (steps[0], stops[0]) == (200, "never_left_plateau")
    learns = LagOracleConfig(hidden=16, layers=1, max_steps=400, lr=1e-2, batch_sequences=4, eval_every=10,
                             patience=2, val_sequences=40, min_steps=0, tol=0.2)   # flat quickly at a tolerance of 0.2
    sample = _bank_sampler(8, 4, [0.5], 10)
    _, early, why = fit_lag_oracle(sample, 8, [1], 3, learns, seed=0)
    _, late, why_late = fit_lag_oracle(sample, 8, [1], 3, LagOracleConfig(**{**learns.__dict__, "min_steps": 200}),
                                       seed=0)
    assert why == why_late == {1: "flat"} and early[1] < 200 <= late[1] <= 210


def test_lag_oracle_rejects_a_lag_past_the_scored_positions():
    with pytest.raises(ValueError, match="lags must be non-empty"):
        fit_lag_oracle(_bank_sampler(4, 4, [0.5], 10), 4, [0, 5], 3, SMALL)


def test_lag_oracle_skipping_stopped_readers_leaves_the_fit_as_computing_them_all(monkeypatch):
    from paper_lib.bounds.oracle import LagOracle

    torch.set_num_threads(1)
    cfg = LagOracleConfig(hidden=8, layers=2, max_steps=80, batch_sequences=2, eval_every=5, patience=2,
                          val_sequences=4, min_steps=0, tol=0.2)   # readers stop at different steps
    sample = _bank_sampler(6, 4, [0.5, 0.1], 20)
    skipping, steps, _ = fit_lag_oracle(sample, 6, [0, 1, 4, 8], 8, cfg, seed=0)
    assert len(set(steps.values())) > 1 and min(steps.values()) < cfg.max_steps   # some stopped early
    every = LagOracle.forward

    def all_readers(self, x, readers=None):                        # compute every reader, then keep the live ones
        out = every(self, x)
        return out if readers is None else out.index_select(0, readers)
    monkeypatch.setattr(LagOracle, "forward", all_readers)
    computing_all, steps_all, _ = fit_lag_oracle(sample, 6, [0, 1, 4, 8], 8, cfg, seed=0)
    assert steps_all == steps
    for a, b in zip(skipping.parameters(), computing_all.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-6)
