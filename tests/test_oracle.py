"""The trace oracle (paper_lib.oracle) and the keys-ignored baseline: real values on tiny tasks."""
from __future__ import annotations

import pytest
import torch

from paper_lib.data.mqar import IGNORE, MQARTask, sample_mqar
from paper_lib.oracle import (
    OracleConfig,
    fit_oracle,
    fixed_embeddings,
    keys_ignored_baseline,
    oracle_by_pairs,
)

TINY = MQARTask(n_keys=4, n_values=4, n_queries=2, seq_len=6, delay=1, single_hop=True)
CFG = OracleConfig(d_model=32, rank=64, steps=250, batch_size=64, warmup_steps=10)


def test_oracle_recovers_pairs_where_it_must_and_repeats():
    torch.set_num_threads(1)
    oracle, loss = fit_oracle(TINY, [2], CFG, seed=0)
    acc = oracle_by_pairs(oracle, TINY, [2], 256, seed=5)
    assert acc[2] >= 0.95 and loss < 0.3                       # two pairs, 16 bindings, a bank of 3 x 32
    again, _ = fit_oracle(TINY, [2], CFG, seed=0)
    assert oracle_by_pairs(again, TINY, [2], 256, seed=5) == acc
    logits, _ = oracle(sample_mqar(TINY, 2, 3, 1).inputs)
    assert logits.shape == (3, TINY.seq_len, TINY.vocab_size)


def test_oracle_without_training_is_at_chance_not_above():
    oracle, _ = fit_oracle(TINY, [2], OracleConfig(d_model=32, rank=64, steps=1, lr=1e-9, warmup_steps=0), seed=0)
    assert oracle_by_pairs(oracle, TINY, [2], 256, seed=5)[2] < 0.5


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
