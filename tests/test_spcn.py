"""SPCN: word codes, sparsity, shapes, causality, learning without labels, determinism."""
import numpy as np
import pytest
import torch

from paper_lib.data.grammar import generate
from paper_lib.models.spcn import SPCN, SPCNConfig, kwta_columns, word_code

CFG = dict(d_code=32, n_columns=4, column_size=8, top_k=2, epochs=1, batch_size=16)


@pytest.fixture(scope="module")
def corpus():
    return generate("A", 120, seed=0)


def test_word_codes_deterministic_and_need_no_vocabulary():
    a, b = word_code("tractor", 0, 64), word_code("tractor", 0, 64)
    assert np.array_equal(a, b) and a.shape == (64,)
    assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-5)
    assert not np.allclose(a, word_code("tractor", 1, 64))        # the seed matters
    assert abs(float(a @ word_code("truck", 0, 64))) < 0.6        # distinct words: near-orthogonal


def test_kwta_exactly_top_k_per_column():
    x = torch.randn(3, 5, 4 * 8)
    a = kwta_columns(x, 4, 2)
    assert set(a.unique().tolist()) == {0.0, 1.0}
    assert (a.reshape(3, 5, 4, 8).sum(-1) == 2).all()


def test_feature_shapes_and_sparsity(corpus):
    m = SPCN(SPCNConfig(**CFG))
    feats, mask = m.features(corpus.sentences[:5])
    B, T = 5, max(len(s) for s in corpus.sentences[:5])
    assert feats.shape == (B, T, m.cfg.n_features) == (B, T, 2 * 4 * 32)
    assert mask.sum() == sum(len(s) for s in corpus.sentences[:5])
    levels, _ = m.forward_levels(corpus.sentences[:5])
    a1 = levels[0][0][mask]
    assert (a1.sum(-1) == 4 * 2).all()                             # top_k per column, 4 columns
    assert m.token_features(corpus.sentences[:5]).shape == (int(mask.sum()), m.cfg.n_features)


def test_features_are_causal(corpus):
    """The features at t do not change when later words change."""
    m = SPCN(SPCNConfig(**CFG)).fit(corpus.sentences[:40])
    s = corpus.sentences[0]
    s2 = s[:3] + ["zebra"] * (len(s) - 3)
    f1, _ = m.features([s])
    f2, _ = m.features([s2])
    assert torch.allclose(f1[0, :3], f2[0, :3])
    assert not torch.allclose(f1[0, 3:], f2[0, 3:])


def test_unseen_words_get_codes_without_training(corpus):
    m = SPCN(SPCNConfig(**CFG)).fit(corpus.sentences[:40])
    b = generate("B", 3, seed=0)
    f1 = m.token_features(b.sentences)
    f2 = SPCN(SPCNConfig(**CFG)).fit(corpus.sentences[:40]).token_features(b.sentences)
    assert np.isfinite(f1).all() and np.array_equal(f1, f2)


def test_pghu_reduces_prediction_error_and_untrained_resets(corpus):
    m = SPCN(SPCNConfig(**CFG, lr=1.0)).fit(corpus.sentences)
    untrained = m.untrained()
    density = 2 / 8                                              # top_k / column_size
    assert untrained.prediction_mse(corpus.sentences) == pytest.approx(density)
    assert m.prediction_mse(corpus.sentences) < 0.9 * density
    assert all(torch.count_nonzero(p) == 0 for p in untrained.P)
    assert any(torch.count_nonzero(p) > 0 for p in m.P)          # the original keeps its weights
    none = SPCN(SPCNConfig(**CFG, rule="none")).fit(corpus.sentences)
    assert all(torch.count_nonzero(p) == 0 for p in none.P)
    heb = SPCN(SPCNConfig(**CFG, rule="hebbian", lr=0.05)).fit(corpus.sentences)
    assert any(torch.count_nonzero(p) > 0 for p in heb.P)


def test_deterministic_per_seed(corpus):
    f = [SPCN(SPCNConfig(**CFG, seed=s)).fit(corpus.sentences[:60]).token_features(corpus.sentences[:5])
         for s in (7, 7, 8)]
    assert np.array_equal(f[0], f[1]) and not np.array_equal(f[0], f[2])


def test_config_errors():
    with pytest.raises(ValueError, match="n_levels must be >= 2"):
        SPCNConfig(n_levels=1)
    with pytest.raises(ValueError, match="top_k must lie in"):
        SPCNConfig(top_k=20, column_size=16)
    with pytest.raises(ValueError, match="unknown rule 'sgd'"):
        SPCNConfig(rule="sgd")
    with pytest.raises(ValueError, match=r"^SPCNConfig.alphas=\[0.5, 1.5\]: every value must be > 0 and <= 1$"):
        SPCNConfig(alphas=(0.5, 1.5))
