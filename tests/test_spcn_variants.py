"""The no-learning floor, the error-driven SPCN and its backprop ceiling; the causal GRU tagger;
the bidirectional SPCN."""
import numpy as np
import pytest
import torch

from paper_lib.data.grammar import generate
from paper_lib.experiments.transfer import word_dropout
from paper_lib.models.gru import BiGRUConfig, BiGRUTagger
from paper_lib.models.spcn import SPCN, SPCNConfig
from paper_lib.models.spcn_variants import BackpropConfig, BackpropSPCN, ErrorSPCN, level1_traces

CFG = dict(d_code=32, n_columns=4, column_size=8, top_k=2, epochs=1, batch_size=16)


@pytest.fixture(scope="module")
def corpus():
    return generate("A", 120, seed=0)


def test_floor_is_level1_traces_and_ignores_learning(corpus):
    m = SPCN(SPCNConfig(**CFG))
    before = level1_traces(m, corpus.sentences[:20])
    m.fit(corpus.sentences)
    after = level1_traces(m, corpus.sentences[:20])
    assert before.shape == (sum(len(s) for s in corpus.sentences[:20]), 3 * 32)
    np.testing.assert_array_equal(before, after)


def test_error_spcn_without_learning_is_a_function_of_the_current_word(corpus):
    m = ErrorSPCN(SPCNConfig(**CFG, rule="none")).fit(corpus.sentences)
    # same word, different contexts -> same level-2 activity when nothing is learned
    e1 = m.token_features([["the", "dog", "runs", "."]], "level2")
    e2 = m.token_features([["a", "big", "cat", "runs", "."]], "level2")
    fast = slice(0, 32)                               # alpha = 0.5 trace of level 2's code
    a1 = 2 * e1[2, fast] - e1[1, fast]                # recover a_t = (h_t - 0.5 h_{t-1}) / 0.5
    a2 = 2 * e2[3, fast] - e2[2, fast]
    np.testing.assert_allclose(a1, a2, atol=1e-5)


def test_error_spcn_learning_changes_level2_codes(corpus):
    base = ErrorSPCN(SPCNConfig(**CFG, rule="none")).fit(corpus.sentences)
    learned = ErrorSPCN(SPCNConfig(**CFG, rule="pghu")).fit(corpus.sentences)
    f0 = base.token_features(corpus.sentences[:10], "level2")
    f1 = learned.token_features(corpus.sentences[:10], "level2")
    assert f0.shape == f1.shape == (sum(len(s) for s in corpus.sentences[:10]), 3 * 32)
    assert np.abs(f0 - f1).max() > 0.1
    both = learned.token_features(corpus.sentences[:10])
    np.testing.assert_allclose(both[:, 3 * 32:], f1)
    with pytest.raises(ValueError, match="unknown part 'all'"):
        learned.token_features(corpus.sentences[:2], "all")


def test_backprop_ceiling_lowers_its_loss_and_is_deterministic(corpus):
    bp = BackpropConfig(epochs=3, lr=1e-2)
    a = BackpropSPCN(SPCNConfig(**CFG), bp).fit(corpus.sentences)
    b = BackpropSPCN(SPCNConfig(**CFG), bp).fit(corpus.sentences)
    assert a.history[-1] < a.history[0]
    np.testing.assert_array_equal(a.token_features(corpus.sentences[:5]), b.token_features(corpus.sentences[:5]))


def test_causal_gru_tagger_does_not_read_ahead():
    torch.manual_seed(0)
    m = BiGRUTagger(20, BiGRUConfig(bidirectional=False)).eval()
    ids = torch.randint(2, 20, (1, 8))
    other = ids.clone()
    other[0, 5:] = 2
    lens = torch.tensor([8])
    with torch.no_grad():
        assert torch.allclose(m(ids, lens)[0, :5], m(other, lens)[0, :5])
    bi = BiGRUTagger(20, BiGRUConfig()).eval()
    with torch.no_grad():
        assert not torch.allclose(bi(ids, lens)[0, :5], bi(other, lens)[0, :5])


def test_bidirectional_spcn_halves(corpus):
    m = SPCN(SPCNConfig(**CFG)).fit(corpus.sentences)
    sents = corpus.sentences[:4]
    f = m.bidirectional_features(sents)
    fwd = m.token_features(sents, traces_only=True)
    np.testing.assert_allclose(f[:, : fwd.shape[1]], fwd)
    rev = m.token_features([list(reversed(sents[0]))], traces_only=True)
    np.testing.assert_allclose(f[: len(sents[0]), fwd.shape[1]:], rev[::-1])


def test_content_word_only_dropout_keeps_function_words():
    sents = [["the", "dog", "chases", "a", "cat", "."]] * 50
    out = word_dropout(sents, 0.5, seed=0, keep={"the", "a", "."})
    assert all(s[0] == "the" and s[3] == "a" and s[5] == "." for s in out)
    assert sum(s[1].startswith("<unk:") for s in out) > 10
