"""Lag decodability on cases with known answers, and the mechanics of notebook 02."""
import numpy as np
import pandas as pd
import pytest
import torch

from paper_lib.data.grammar import make_documents, make_split, pad_labels
from paper_lib.ema import ema_traces
from paper_lib.experiments.transfer import alpha_subsets, word_dropout
from paper_lib.experiments.transfer_tables import group_accuracy, paired_verdict
from paper_lib.models.gru import GRULMConfig, gru_states, train_gru_lm
from paper_lib.probes import lag_decodability, lagged

V = 8  # vocabulary of the toy streams


def _traces(ids: np.ndarray, alphas) -> np.ndarray:
    """One-hot codes of ``ids`` (B, T) through the EMA bank: (B, T, S * V)."""
    x = torch.nn.functional.one_hot(torch.from_numpy(ids), V).double()       # (B, T, V)
    h = ema_traces(x, alphas)                                                # (B, T, S, V)
    return h.flatten(2).numpy()


def _iid(B=40, T=60, seed=0):
    return np.random.default_rng(seed).integers(0, V, (B, T))


def _curve(ids_tr, ids_te, alphas, lags=(0, 1, 2)):
    df = lag_decodability(_traces(ids_tr, alphas), {"identity": ids_tr}, _traces(ids_te, alphas),
                          {"identity": ids_te}, lags=lags)
    return df.set_index("lag")


def test_lagged_shifts_and_pads():
    lab = np.array([[1, 2, 3, -1]])
    assert lagged(lab, 0).tolist() == [[1, 2, 3, -1]]
    assert lagged(lab, 1).tolist() == [[-1, 1, 2, 3]]
    assert lagged(lab, 4).tolist() == [[-1, -1, -1, -1]]
    with pytest.raises(ValueError, match="lag k must be >= 0"):
        lagged(lab, -1)


def test_alpha_one_keeps_only_the_current_token():
    """alpha = 1: the trace is the current code, so lag 0 is perfect and lag 1 is chance (i.i.d. tokens)."""
    c = _curve(_iid(seed=0), _iid(seed=1), (1.0,))
    assert c.loc[0, "accuracy"] == 1.0
    assert abs(c.loc[1, "accuracy"] - 1 / V) < 0.04          # chance is 1/8 = 0.125
    assert abs(c.loc[2, "accuracy"] - 1 / V) < 0.04
    assert c.loc[1, "chance"] == pytest.approx(1 / V, abs=0.03)
    assert (c.n_test == c.n_test.iloc[0]).all()              # every lag scored on the same tokens


def test_alpha_one_reads_the_past_when_the_present_determines_it():
    """A deterministic cycle: the current token fixes the previous one, so lag 1 is read
    perfectly even with alpha = 1 (structure, not memory)."""
    start = np.random.default_rng(0).integers(0, V, (40, 1))
    ids = (start + np.arange(30)[None, :]) % V
    c = _curve(ids[:20], ids[20:], (1.0,))
    assert c.loc[0, "accuracy"] == 1.0 and c.loc[1, "accuracy"] == 1.0


def test_single_traces_and_a_bank():
    """Known answers for one-hot codes of i.i.d. tokens (chance 1/8):
    alpha = 0.5 reads the present perfectly but not the previous token, whose weight (1/4)
    equals the summed weight of all older ones, so no linear readout separates it;
    alpha = 0.3 holds a blurred present and some of the past; the bank (1, 0.5) exposes
    x_{t-1} exactly (h_0.5 - x_t / 2 = h_0.5 at t-1, halved) but not x_{t-2}."""
    tr, te = _iid(seed=0), _iid(seed=1)
    half, third, bank = _curve(tr, te, (0.5,)), _curve(tr, te, (0.3,)), _curve(tr, te, (1.0, 0.5))
    assert half.loc[0, "accuracy"] == 1.0 and half.loc[1, "accuracy"] < 0.2
    assert 0.7 < third.loc[0, "accuracy"] < 0.95 and 0.2 < third.loc[1, "accuracy"] < 0.4
    assert bank.loc[1, "accuracy"] == 1.0 and bank.loc[2, "accuracy"] < 0.2


def test_lag_decodability_errors():
    ids = _iid()
    with pytest.raises(ValueError, match="lags must be"):
        lag_decodability(_traces(ids, (1.0,)), {"id": ids}, _traces(ids, (1.0,)), {"id": ids}, lags=[-1])
    with pytest.raises(ValueError, match="do not match states"):
        lag_decodability(_traces(ids, (1.0,)), {"id": ids[:, :5]}, _traces(ids, (1.0,)), {"id": ids}, lags=[0])
    with pytest.raises(ValueError, match="no position"):
        lag_decodability(_traces(ids, (1.0,)), {"id": ids}, _traces(ids, (1.0,)), {"id": ids}, lags=[0], min_pos=100)


def test_documents_join_sentences():
    train, _ = make_split("A", 10, 1, seed=0)
    words, roles = make_documents(train, 4)
    assert len(words) == 3 and [len(w) for w in words] == [len(r) for r in roles]
    assert words[0] == [w for s in train.sentences[:4] for w in s]
    assert pad_labels(roles).shape == (3, max(map(len, roles)))
    with pytest.raises(ValueError, match="doc_sentences"):
        make_documents(train, 0)


def test_gru_lm_learns_a_cycle():
    """A GRU LM on a deterministic cycle predicts the next token: loss falls well below log V."""
    start = np.random.default_rng(0).integers(1, V + 1, (32, 1))
    ids = torch.from_numpy((start - 1 + np.arange(20)[None, :]) % V + 1)     # ids 1..V, 0 = padding
    model, hist = train_gru_lm(ids, V + 1, GRULMConfig(d_hidden=16, epochs=30, batch_size=8, lr=0.01))
    assert hist[-1] < 0.3 * np.log(V) < hist[0]
    assert gru_states(model, ids).shape == (32, 20, 16)
    with pytest.raises(ValueError, match="ids must be"):
        train_gru_lm(ids, 3)


def test_noisy_gru_lm_is_the_fused_gru_at_zero_noise_and_noised_after_every_step():
    """sigma = 0: the step loop is the fused nn.GRU; sigma > 0: sigma per number per step, seeded, in eval mode too."""
    from dataclasses import replace

    from paper_lib.models.gru import GRULanguageModel

    torch.manual_seed(0)
    cfg = GRULMConfig(d_embed=8, d_hidden=64)
    model = GRULanguageModel(V + 1, cfg).eval()
    ids = torch.randint(1, V + 1, (32, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        fused = model(ids)[1]                                                     # (B, T, H)
        loop = model.noisy_states(model.embed(ids))                              # sigma = 0: no noise drawn
        assert fused.shape == (32, 12, 64) and torch.allclose(fused, loop, atol=1e-5)
        model.cfg = replace(cfg, sigma=0.05)
        a = model(ids, torch.Generator().manual_seed(7))[1]
        b = model(ids, torch.Generator().manual_seed(7))[1]
        g = torch.Generator().manual_seed(7)
        c, d = model(ids, g)[1], model(ids, g)[1]                                 # one generator, two reads
    assert torch.equal(a, b) and torch.equal(a, c) and not torch.equal(c, d)   # seeded; a new draw per read
    first = (a - fused)[:, 0]                                                     # step 0: the noise alone
    assert float(first.std()) == pytest.approx(0.05, rel=0.1) and abs(float(first.mean())) < 0.01
    assert not torch.allclose(a[:, 5], fused[:, 5], atol=0.01)                    # it enters the recurrence
    assert np.array_equal(gru_states(model, ids, generator=torch.Generator().manual_seed(7)), a.numpy())
    with pytest.raises(ValueError, match="noise sigma must be a finite number >= 0"):
        GRULMConfig(sigma=-0.1)


def test_noisy_gru_lm_trains_with_its_noise_deterministically():
    start = np.random.default_rng(0).integers(1, V + 1, (32, 1))
    ids = torch.from_numpy((start - 1 + np.arange(20)[None, :]) % V + 1)
    cfg = GRULMConfig(d_hidden=16, epochs=30, batch_size=8, lr=0.01, sigma=0.02)
    model, hist = train_gru_lm(ids, V + 1, cfg)
    _, again = train_gru_lm(ids, V + 1, cfg)
    _, quiet = train_gru_lm(ids, V + 1, GRULMConfig(d_hidden=16, epochs=30, batch_size=8, lr=0.01))
    assert hist == again and hist != quiet and hist[-1] < 0.3 * np.log(V) < hist[0]   # seeded, noised, learns


def test_word_dropout_gives_fresh_words():
    sents = [["the", "dog", "runs", "."]] * 50
    out = word_dropout(sents, 0.3, seed=0)
    dropped = [w for s in out for w in s if w.startswith("<unk:")]
    assert 0.2 < len(dropped) / 200 < 0.4 and len(set(dropped)) == len(dropped)
    assert out == word_dropout(sents, 0.3, seed=0) and word_dropout(sents, 0.0, seed=0) == sents
    with pytest.raises(ValueError, match="word dropout p"):
        word_dropout(sents, 1.0, seed=0)


def test_alpha_subsets_and_paired_verdict():
    assert alpha_subsets([0.5, 0.1]) == [(0.5,), (0.1,), (0.5, 0.1)]
    assert len(alpha_subsets([0.5, 0.1, 0.02])) == 7
    assert paired_verdict([0.9, 0.8, 0.85], [0.5, 0.45, 0.5])["verdict"] == "a > b"
    assert paired_verdict([0.5, 0.45, 0.5], [0.9, 0.8, 0.85])["verdict"] == "a < b"
    assert paired_verdict([0.5, 0.6, 0.4], [0.5, 0.4, 0.6])["verdict"] == "tie"
    with pytest.raises(ValueError, match="same length"):
        paired_verdict([1.0], [1.0, 2.0])


def test_group_accuracy():
    tok = pd.DataFrame({"seed": [0, 0, 0, 1], "kind": ["s", "s", "l", "s"],
                        "ok_m": [True, False, True, True]})
    g = group_accuracy(tok, ["m"], "kind").set_index(["seed", "kind"])
    assert g.loc[(0, "s"), "accuracy"] == 0.5 and g.loc[(0, "l"), "n"] == 1 and g.loc[(1, "s"), "accuracy"] == 1.0
    with pytest.raises(ValueError, match="no token column"):
        group_accuracy(tok, ["x"], "kind")
