"""The MQAR generator: answers are the values paired earlier, nothing leaks, seeds repeat."""
from __future__ import annotations

import pytest
import torch

from paper_lib.data.mqar import BLANK, IGNORE, MQARTask, query_accuracy, sample_mqar


def _pairs(task: MQARTask, row: torch.Tensor, n: int) -> dict[int, int]:
    """key -> value of one sequence's pair list, decoded from its tokens."""
    K, V = task.n_keys, task.n_values
    if task.single_hop:
        p = row[:n] - (1 + K + V)
        return {int(k) + 1: int(v) + K + 1 for k, v in zip(p // V, p % V, strict=True)}
    return {int(row[2 * i]): int(row[2 * i + 1]) for i in range(n)}


@pytest.mark.parametrize("single_hop", [False, True])
@pytest.mark.parametrize("delay", [0, 1])
def test_every_answer_is_the_value_paired_earlier(single_hop, delay):
    task = MQARTask(n_keys=16, n_values=8, n_queries=5, seq_len=60, gap=(0, 7), delay=delay, single_hop=single_hop)
    b = sample_mqar(task, [3, 5, 8], 64, 0)
    K = task.n_keys
    counted = 0
    for row, tgt, dist, n in zip(b.inputs, b.targets, b.distance, b.n_pairs, strict=True):
        n = int(n)
        pairs = _pairs(task, row, n)
        assert len(pairs) == n                                      # keys distinct within a sequence
        assert all(1 <= k <= K and K < v <= K + task.n_values for k, v in pairs.items())
        where = (tgt != IGNORE).nonzero(as_tuple=True)[0]
        assert len(where) == min(task.n_queries, n)
        asked = []
        for a in where.tolist():
            key = int(row[a - delay])
            assert key in pairs and int(tgt[a]) == pairs[key]      # the value paired with it earlier
            assert all(int(row[a - j]) == BLANK for j in range(delay))
            key_pos = list(pairs).index(key) * (1 if single_hop else 2)
            assert int(dist[a]) == a - key_pos > 0
            asked.append(key)
            counted += 1
        assert len(set(asked)) == len(asked)                        # distinct queries
        assert (dist[tgt == IGNORE] == -1).all()
    assert counted > 64 * 3


def test_vocabularies_are_disjoint_and_ids_in_range():
    task = MQARTask(n_keys=10, n_values=6, n_queries=4, seq_len=24)
    b = sample_mqar(task, 4, 200, 3)
    assert int(b.inputs.max()) < task.vocab_size == 17
    vals = b.targets[b.targets != IGNORE]
    assert vals.min() >= 11 and vals.max() <= 16                   # values only: ids K+1..K+V
    keys_in_queries = b.inputs[:, 8:12]
    assert keys_in_queries.min() >= 1 and keys_in_queries.max() <= 10


def test_deterministic_for_a_seed_and_different_across_seeds():
    task = MQARTask(n_keys=32, n_values=32, n_queries=8, seq_len=40)
    a, b, c = sample_mqar(task, [2, 8], 16, 7), sample_mqar(task, [2, 8], 16, 7), sample_mqar(task, [2, 8], 16, 8)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
    assert not torch.equal(a.inputs, c.inputs)


def test_nothing_leaks_across_sequences():
    """Pairings are drawn per sequence: the same key maps to many values across a batch, so the
    answer cannot be memorised, and the best fixed key -> value table is near chance."""
    task = MQARTask(n_keys=8, n_values=8, n_queries=8, seq_len=24)
    b = sample_mqar(task, 8, 2000, 1)
    mask = b.targets != IGNORE
    keys, vals = b.inputs[mask], b.targets[mask]                   # delay 0: the key sits at the answer position
    table = torch.zeros(9, 17)
    table.index_put_((keys, vals), torch.ones_like(keys, dtype=torch.float), accumulate=True)
    best_fixed = float(table.max(1).values.sum() / mask.sum())
    assert best_fixed < 0.2                                        # chance is 1/8 = 0.125
    assert len({tuple(r.tolist()) for r in b.inputs}) == 2000     # every sequence is new


def test_query_accuracy_counts_answer_positions_only():
    targets = torch.tensor([[IGNORE, 3, IGNORE, 4]])
    logits = torch.zeros(1, 4, 6)
    logits[0, 1, 3] = 1.0                                          # right
    logits[0, 3, 2] = 1.0                                          # wrong
    logits[0, 0, 5] = 1.0                                          # not counted
    assert query_accuracy(logits, targets) == (1, 2)


@pytest.mark.parametrize("kwargs, message", [
    ({"n_keys": 0}, "MQAR n_keys must be an integer >= 1, got 0"),
    ({"delay": -1}, "MQAR delay must be an integer >= 0, got -1"),
    ({"gap": (5, 2)}, "MQAR gap must be an integer >= 0 or a range (lo, hi) with 0 <= lo <= hi, got (5, 2)"),
])
def test_bad_task_is_one_line_error(kwargs, message):
    with pytest.raises(ValueError) as err:
        MQARTask(**kwargs)
    assert str(err.value) == message


@pytest.mark.parametrize("n_pairs, batch, message", [
    (9, 4, "MQAR n_pairs (9) exceeds n_keys (8): keys in a sequence are distinct"),
    (6, 4, "MQAR sequence of 6 pairs needs 18 tokens; seq_len is 16"),
    ([], 4, "MQAR n_pairs is an empty list; give at least one pair count"),
    (2, 0, "MQAR batch must be an integer >= 1, got 0"),
    (0, 4, "MQAR n_pairs must be an integer >= 1, got 0"),
])
def test_bad_sample_is_one_line_error(n_pairs, batch, message):
    task = MQARTask(n_keys=8, n_values=8, n_queries=6, seq_len=16)
    with pytest.raises(ValueError) as err:
        sample_mqar(task, n_pairs, batch, 0)
    assert str(err.value) == message


def test_distractors_fill_the_gap_and_change_no_answer():
    plain = MQARTask(n_keys=4, n_values=4, n_queries=2, seq_len=20, gap=(3, 6), delay=1, single_hop=True)
    noisy = MQARTask(n_keys=4, n_values=4, n_queries=2, seq_len=20, gap=(3, 6), delay=1, single_hop=True,
                     n_distractors=5)
    assert noisy.vocab_size == plain.vocab_size + 5 and noisy.distractor_base == plain.vocab_size
    b = sample_mqar(noisy, 2, 64, 0)
    gap = (b.inputs >= noisy.distractor_base)
    assert gap.sum(1).min() >= 3 and gap.sum(1).max() <= 6 and int(b.inputs.max()) < noisy.vocab_size
    assert gap[:, :2].sum() == 0 and (b.targets[gap] == IGNORE).all()
    with pytest.raises(ValueError, match="n_distractors"):
        MQARTask(n_distractors=-1)
