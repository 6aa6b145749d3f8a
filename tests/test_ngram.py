"""Reference lines (paper_lib.ngram): a hand-computed tiny case, proper distributions, the windows of evaluate."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from paper_lib.evaluate import evaluate
from paper_lib.ngram import (
    NGramCounts,
    count_ngrams,
    kneser_ney_discount,
    kneser_ney_logprob,
    reference_losses,
    window_targets,
)


def test_hand_computed_tiny_case():
    # train 0 1 0 1 2 (V = 3): bigrams (0,1) x2, (1,0), (1,2); n1 = 2, n2 = 1 -> d = 0.5;
    # every token has one distinct predecessor -> p_cont = 0.5/3 + 0.5 * 3/3/3 = 1/3;
    # p(1|0) = 1.5/2 + 0.5 * 1/2 * 1/3 = 5/6, p(2|1) = 0.5/2 + 0.5 * 2/2 * 1/3 = 5/12, p(0|2) = p_cont = 1/3.
    train = np.array([0, 1, 0, 1, 2])
    ref = reference_losses(train, np.array([0, 1, 2, 0]), vocab_size=3, seq_len=3)
    assert ref["discount"] == pytest.approx(0.5)
    assert ref["bigram"] == pytest.approx(-(math.log(5 / 6) + math.log(5 / 12) + math.log(1 / 3)) / 3)
    # add-one unigram: (c + 1) / (5 + 3) for targets 1, 2, 0 with counts 2, 1, 2
    assert ref["unigram"] == pytest.approx(-(math.log(3 / 8) + math.log(2 / 8) + math.log(3 / 8)) / 3)
    assert ref["train_tokens"] == 5


def test_kneser_ney_sums_to_one_for_every_context():
    rng = np.random.default_rng(0)
    V = 17
    counts = count_ngrams(rng.integers(0, V - 2, size=400), V)       # two tokens never seen
    for v in range(V):
        p = np.exp(kneser_ney_logprob(counts, np.full(V, v), np.arange(V)))
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        assert (p > 0).all()


def test_chunked_counting_equals_one_pass():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 50, size=1000)
    one = count_ngrams(ids, 50)
    chunked = count_ngrams(ids, 50, chunk_tokens=77)
    assert np.array_equal(one.unigram, chunked.unigram)
    assert np.array_equal(one.bigram_keys, chunked.bigram_keys)
    assert np.array_equal(one.bigram_counts, chunked.bigram_counts)
    assert one.bigram_counts.sum() == 999
    assert kneser_ney_discount(one) == kneser_ney_discount(chunked)


def test_bigram_beats_unigram_on_a_markov_chain():
    rng = np.random.default_rng(2)
    nxt = rng.integers(0, 32, size=(32, 2))
    ids = [0]
    for _ in range(20000):
        ids.append(int(nxt[ids[-1], rng.integers(0, 2)]))
    ids = np.asarray(ids)
    ref = reference_losses(ids[:15000], ids[15000:], 32, seq_len=64)
    assert ref["bigram"] < math.log(2) + 0.05          # the chain's entropy rate is <= ln 2 nats
    assert ref["unigram"] > ref["bigram"] + 1.0


class _Uniform(torch.nn.Module):
    """A model whose logits are all zero: loss ln V on every target."""

    def __init__(self, V):
        super().__init__()
        self.V = V
        self.w = torch.nn.Parameter(torch.zeros(1))

    def forward(self, idx):
        return torch.zeros(*idx.shape, self.V) + 0 * self.w, None


def test_windows_are_the_ones_evaluate_scores():
    ids = np.arange(1, 1001) % 97
    prev, target = window_targets(ids, seq_len=32, max_tokens=256)
    assert len(target) == 256
    assert np.array_equal(target, prev + 1 - 97 * (prev == 96))
    ev = evaluate(_Uniform(97), ids, 32, max_tokens=256, eot_id=None)
    assert len(ev["token_loss"]) == len(target)


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match=r"token ids must lie in \[0, 3\), got range \[0, 5\]"):
        NGramCounts(3).update(np.array([0, 5]))
    with pytest.raises(ValueError, match="need at least seq_len \\+ 1 = 9 tokens, got 4"):
        window_targets(np.arange(4), 8)
    with pytest.raises(ValueError, match="discount must lie in \\(0, 1\\), got 1.5"):
        kneser_ney_logprob(count_ngrams(np.array([0, 1, 1]), 2), np.array([0]), np.array([1]), discount=1.5)


def test_gpt2_sized_vocabulary_counts_in_chunks():
    # the paper profile: GPT-2's 50257 tokens, int32 streams, counted chunk by chunk (offline, small)
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 50257, size=3000).astype(np.int32)
    counts = count_ngrams(ids, 50257, chunk_tokens=1000)
    assert counts.bigram_keys.max() < 50257 ** 2 and counts.bigram_counts.sum() == 2999
    ref = reference_losses(ids, ids[:513], 50257, seq_len=256, counts=counts)
    # every target was seen once or twice in training: add-one gives (c + 1) / (3000 + 50257), c in {1, 2}
    assert math.log(53257 / 3) < ref["unigram"] <= math.log(53257 / 2) + 1e-9
    assert ref["bigram"] < ref["unigram"]                                 # the bigrams were all seen
