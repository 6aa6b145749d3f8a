"""Readouts on toy cases with known answers, and a tiny BiGRU."""
import numpy as np
import pytest

from paper_lib.models.gru import BiGRUConfig, build_vocab, encode, predict_bigru, train_bigru
from paper_lib.probes import accuracy, fit_cluster_readout, fit_linear_probe, per_role_accuracy


def _blobs(n=600, k=4, d=10, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 5, (k, d))
    y = rng.integers(0, k, n)
    return centres[y] + rng.normal(0, 0.5, (n, d)), y


def test_linear_probe_separable():
    X, y = _blobs()
    probe = fit_linear_probe(X[:400], y[:400])
    assert accuracy(y[400:], probe.predict(X[400:])) == 1.0


def test_linear_probe_cannot_read_noise():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(600, 10)), rng.integers(0, 4, 600)
    probe = fit_linear_probe(X[:400], y[:400])
    assert accuracy(y[400:], probe.predict(X[400:])) < 0.4


@pytest.mark.parametrize("mapping", ["majority", "hungarian"])
def test_cluster_readout_recovers_blobs(mapping):
    X, y = _blobs()
    r = fit_cluster_readout(X[:400], y[:400], n_clusters=4, n_roles=4, mapping=mapping)
    assert accuracy(y[400:], r.predict(X[400:])) == 1.0


def test_hungarian_is_one_to_one():
    X, y = _blobs(k=3)
    y2 = np.where(y == 2, 1, y)             # roles 0, 1 only; three clusters
    r = fit_cluster_readout(X, y2, n_clusters=2, n_roles=2, mapping="hungarian")
    assert sorted(r.cluster_role.tolist()) == [0, 1]


def test_per_role_accuracy_and_errors():
    acc = per_role_accuracy(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1]), 3)
    assert acc[:2].tolist() == [0.5, 1.0] and np.isnan(acc[2])
    with pytest.raises(ValueError, match="same shape"):
        accuracy(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="unknown mapping"):
        fit_cluster_readout(*_blobs(), mapping="greedy")


def test_bigru_learns_a_toy_tagging_task_and_maps_unknown_words():
    rng = np.random.default_rng(0)
    nouns, verbs = ["dog", "cat", "fox"], ["runs", "eats"]
    sents = [[nouns[rng.integers(3)], verbs[rng.integers(2)]] for _ in range(200)]
    roles = [[0, 1] for _ in sents]
    model, vocab, hist = train_bigru(sents, roles, BiGRUConfig(n_roles=2, epochs=5, d_hidden=16, seed=0))
    assert hist[-1] < hist[0]
    assert accuracy(np.array([0, 1] * 3), predict_bigru(model, vocab, [["dog", "runs"], ["cat", "eats"], ["fox", "runs"]])) == 1.0
    assert vocab["<unk>"] == 1 and encode([["truck"]], build_vocab(sents))[0].tolist() == [[1]]
    with pytest.raises(ValueError, match="word_dropout must lie in"):
        BiGRUConfig(word_dropout=1.0)
