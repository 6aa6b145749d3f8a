"""Readouts on toy cases with known answers, and a tiny BiGRU."""
import numpy as np
import pytest
import torch

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


def test_layer_identity_reads_a_layer_that_holds_the_token_and_not_one_that_does_not():
    from paper_lib.probes import layer_identity

    rng = np.random.default_rng(0)
    ids = rng.integers(0, 12, size=(60, 20))                           # (B, T)
    eye = np.eye(12)
    holds = eye[ids] + 0.01 * rng.standard_normal((60, 20, 12))        # layer 0: the current token, one-hot
    prev = np.concatenate([np.zeros((60, 1, 12)), eye[ids[:, :-1]]], 1)  # layer 1: the previous token only
    noise = rng.standard_normal((60, 20, 12))                          # layer 2: nothing
    streams = [holds, prev, noise]
    df = layer_identity([x[:40] for x in streams], ids[:40], [x[40:] for x in streams], ids[40:], lags=(0, 1))
    d = df.set_index(["layer", "lag"]).decodability
    assert d[(0, 0)] > 0.95 and d[(1, 1)] > 0.95                       # what each layer holds
    assert abs(d[(0, 1)]) < 0.1 and abs(d[(1, 0)]) < 0.1 and abs(d[(2, 0)]) < 0.1
    assert list(df.columns) == ["layer", "target", "lag", "accuracy", "chance", "n_test", "decodability"]
    with pytest.raises(ValueError, match="train and test streams have 3 and 2 layers"):
        layer_identity(streams, ids, streams[:2], ids)


def test_residual_stream_ends_where_the_forward_pass_reads_out_and_probe_layers_needs_enough_tokens():
    from paper_lib.lm_recipe import probe_layers
    from paper_lib.models.spen import SPEN, SPENConfig

    torch.manual_seed(0)
    model = SPEN(SPENConfig(vocab_size=50, d_model=16, n_layer=2, d_ff=64, d_bottleneck=8, block_size=32)).eval()
    idx = torch.randint(0, 50, (3, 12))
    stream = model.residual_stream(idx)
    assert len(stream) == 3 and all(x.shape == (3, 12, 16) for x in stream)
    logits, _ = model(idx)
    assert torch.allclose(model.lm_head(model.ln_f(stream[-1])), logits, atol=1e-6)
    df = probe_layers(model, np.arange(48 * 12) % 50, 12)
    assert sorted(df.layer.unique()) == [0, 1, 2] and set(df.lag) == {0, 1}
    with pytest.raises(ValueError, match=r"probe_layers needs 576 tokens \(48 windows of 12\), got 100"):
        probe_layers(model, np.arange(100), 12)
