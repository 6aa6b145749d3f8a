"""The grammar rows' controls and rules (notebooks 01 and 02): the fresh-document lag oracle, the bank's
closed-form decoder, the context-free control, and each row's rule reaching every verdict."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from paper_lib.bounds.fresh_oracle import (
    FreshDocuments,
    decode_fast_trace,
    fit_fresh_lag_oracle,
    score_oracle,
    word_ids,
)
from paper_lib.bounds.oracle import LagOracleConfig, fit_lag_oracle
from paper_lib.claims.registry import CLAIMS as CLAIMS_BY_KEY
from paper_lib.data.grammar import GrammarConfig, function_words, make_split, vocabulary
from paper_lib.ema import ema_traces
from paper_lib.pipeline.report import claims_table, decide, render
from paper_lib.pipeline.verdicts import Kind


def _s(mean, ci=0.01, n=5):
    return {"mean": mean, "ci95": ci, "n": n}


# --------------------------------------------------------------------------- fresh documents and the decoder

def test_fresh_documents_are_new_of_one_length_and_replayable():
    train, test = make_split("A", 40, 10, seed=0)
    stream = FreshDocuments(30, seed=0, exclude=train.sentences + test.sentences, chunk=50)
    docs = stream.take(5) + stream.take(7)
    assert {len(d) for d in docs} == {30} and stream.position == 12
    assert stream.exclude == {tuple(s) for s in train.sentences + test.sentences}
    stream.rewind()
    assert stream.take(12) == docs                                            # a second reader gets the same
    other = FreshDocuments(30, seed=1, chunk=50).take(12)
    assert other != docs and FreshDocuments(30, seed=0, exclude=train.sentences + test.sentences, chunk=50).take(12) == docs
    with pytest.raises(ValueError, match="T >= 1"):
        FreshDocuments(0, seed=0)


def test_fresh_documents_are_the_excluding_generator_joined_and_cut():
    from paper_lib.bounds.fresh_oracle import FRESH_SEED
    from paper_lib.data.grammar import generate

    plain = generate("A", 40, FRESH_SEED + 1000 * 3).sentences
    banned = plain[:3]
    drawn = generate("A", 40, FRESH_SEED + 1000 * 3, exclude=map(tuple, banned)).sentences
    assert not {tuple(x) for x in drawn} & {tuple(x) for x in banned}
    doc = FreshDocuments(100, seed=3, exclude=banned, chunk=40).take(1)[0]
    assert doc == [w for x in drawn for w in x][:100]


def test_decoder_inverts_a_half_rate_trace_of_binary_codes_exactly():
    g = torch.Generator().manual_seed(0)
    V, N, B, T = 12, 32, 4, 30
    codes = torch.zeros(V, N)
    for v in range(V):
        codes[v, torch.randperm(N, generator=g)[:4]] = 1.0                    # 4 of 32 units on per word
    ids = torch.randint(V, (B, T), generator=g)
    trace = ema_traces(codes[ids], [0.5])[:, :, 0]                            # (B, T, N)
    lags = [0, 1, 4, 12]
    pred = decode_fast_trace(trace, codes, 0.5, lags)
    assert pred.shape == (len(lags), B, T - 12)
    for i, k in enumerate(lags):
        assert torch.equal(pred[i], ids[:, 12 - k: T - k])                    # every word, every lag
    slow = ema_traces(codes[ids], [0.9])[:, :, 0]                             # faster than 0.5 works too
    assert torch.equal(decode_fast_trace(slow, codes, 0.9, [3])[0], ids[:, 0: T - 3])
    with pytest.raises(ValueError, match="rate in \\[0.5, 1\\]"):
        decode_fast_trace(trace, codes, 0.1, [1])
    with pytest.raises(ValueError, match="lags must be"):
        decode_fast_trace(trace, codes, 0.5, [T])


def test_decoder_cannot_tell_words_that_share_a_code():
    codes = torch.tensor([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # words 0 and 1: one code
    ids = torch.tensor([[0, 2, 1, 2, 0, 2]])
    trace = ema_traces(codes[ids], [0.5])[:, :, 0]
    pred = decode_fast_trace(trace, codes, 0.5, [0])[0, 0]
    assert pred.tolist() == [0, 2, 0, 2, 0, 2]                                 # word 1 read as word 0: the bank's limit


def test_decoder_fails_under_the_noise_budget_where_it_must():
    """At sigma 0.02 per number per step (normalised units) every peel of the 0.5 trace doubles the noise:
    the decoder reads the recent words and loses them once the doubled noise outgrows the code's margin."""
    from paper_lib.bounds.noise_budget import noisy_traces

    g = torch.Generator().manual_seed(0)
    V, N, B, T = 40, 64, 64, 40
    codes = torch.zeros(V, N)
    for v in range(V):
        codes[v, torch.randperm(N, generator=g)[:8]] = 1.0
    ids = torch.randint(V, (B, T), generator=g)
    lags = [0, 1, 2, 3, 10, 14]
    clean = decode_fast_trace(noisy_traces(codes[ids], [0.5], 0.0)[:, :, 0], codes, 0.5, lags)
    noisy = noisy_traces(codes[ids], [0.5], 0.02, generator=torch.Generator().manual_seed(1))[:, :, 0]
    pred = decode_fast_trace(noisy, codes, 0.5, lags)
    acc = [float((p == ids[:, 14 - k: T - k]).float().mean()) for p, k in zip(pred, lags, strict=True)]
    assert all(float((p == ids[:, 14 - k: T - k]).float().mean()) == 1.0 for p, k in zip(clean, lags, strict=True))
    assert min(acc[:3]) > 0.99                    # lag k's weight 0.87 * 0.5^k per unit, noise std 0.023
    assert acc[4] < 0.2 and acc[5] < 0.1          # after 10 peels the noise is ~2^10 times larger: near chance (1/40)
    again = decode_fast_trace(noisy_traces(codes[ids], [0.5], 0.02, generator=torch.Generator().manual_seed(1))[:, :, 0],
                              codes, 0.5, lags)
    assert torch.equal(pred, again)               # seeded


def test_noisy_bank_is_spcn_traces_plus_normalised_noise_drawn_anew_at_every_read():
    from paper_lib.bounds.noise_budget import trace_gain
    from paper_lib.experiments.lag_stage import bank_states
    from paper_lib.experiments.transfer import settings_for
    from paper_lib.models.spcn import SPCN

    spcn = SPCN(replace(settings_for("smoke").spcn, seed=0))
    docs = FreshDocuments(30, seed=0, chunk=100).take(48)
    plain = spcn.forward_levels(docs, n_levels=1)[0][0][1]                       # (B, T, S, N)
    assert torch.equal(bank_states(spcn, docs, 0.0), plain)                       # no noise: SPCN's own traces
    g = torch.Generator().manual_seed(3)
    a, b = bank_states(spcn, docs, 0.02, g), bank_states(spcn, docs, 0.02, g)   # one generator, two reads
    assert a.shape == plain.shape and not torch.equal(a, b)
    assert torch.equal(a, bank_states(spcn, docs, 0.02, torch.Generator().manual_seed(3)))
    gain = trace_gain(spcn.cfg.alphas).float().view(1, -1, 1)
    first = (a - plain)[:, 0] * gain                                              # step 0, normalised: sigma * eps
    assert float(first.std()) == pytest.approx(0.02, rel=0.05)
    late = (a - plain)[:, -1] * gain                                              # after 30 steps: noise_var
    assert float(late[:, 0].std()) == pytest.approx(0.02 / (1 - 0.25) ** 0.5, rel=0.05)
    with pytest.raises(ValueError, match="noise sigma must be a finite number >= 0"):
        bank_states(spcn, docs, -1.0)


def test_decoder_metrics_find_where_the_noisy_decoder_fails():
    import pandas as pd

    from paper_lib.experiments.lag_stage import DECODER, DECODER_EXACT, decoder_metrics

    rows = [{"state": st, "seed": seed, "lag": k, "accuracy": acc}
            for seed, fail in ((1, 6), (0, 5)) for k in range(9)
            for st, acc in ((DECODER, 1.0 if k < fail else 0.3), (DECODER_EXACT, 1.0))]
    rows += [{"state": DECODER, "seed": 2, "lag": k, "accuracy": 0.9} for k in range(9)]      # never fails
    rows += [{"state": DECODER_EXACT, "seed": 2, "lag": k, "accuracy": 1.0} for k in range(9)]
    m = decoder_metrics(pd.DataFrame(rows), [1, 4, 5])
    assert m["lag_decoder_bank_fail_lag"] == [5.0, 6.0, 9.0]                      # seeds ascending
    assert m["lag_decoder_bank_5"] == [0.3, 1.0, 0.9] and m["lag_decoder_bank_exact_4"] == [1.0, 1.0, 1.0]
    assert decoder_metrics(pd.DataFrame(rows).query("state == 'none'"), [1]) == {}


def test_lag_stage_runs_every_state_under_its_noise():
    from paper_lib.experiments.lag_stage import BANK, DECODER, DECODER_EXACT, GRU, lag_stage
    from paper_lib.experiments.transfer import settings_for

    torch.set_num_threads(1)
    s = settings_for("smoke", {"lag": {"max_lag": 6, "oracle_seeds": [0]}})
    assert s.lag.sigma == 0.02 and s.lag.gru.sigma == 0.0          # lag_gru gives the GRU the study's noise
    r = lag_stage(s, 0)
    lag, o = r["lag"], r["oracle"]
    assert r["sigma"] == o["sigma"] == 0.02 and {BANK, GRU, DECODER, DECODER_EXACT} <= set(lag.state)
    exact = lag[lag.state == DECODER_EXACT]
    assert (exact.accuracy == 1.0).all() and set(exact.lag) == set(range(7))     # no noise: every word back
    assert set(o["stops"]) == {"bank", "gru", "bank_mismatched"}
    assert all(w in ("solved", "flat", "cap_while_improving", "never_left_plateau") for d in o["stops"].values()
               for w in d.values())
    assert o["converged"]["bank"] == {k: float(w in ("flat", "solved")) for k, w in o["stops"]["bank"].items()}
    quiet = lag_stage(settings_for("smoke", {"lag": {"max_lag": 6, "oracle_seeds": [], "sigma": 0.0}}), 0)["lag"]
    both = lag.merge(quiet, on=["state", "target", "lag"], suffixes=("", "_quiet"))
    assert (both[both.state == DECODER_EXACT].accuracy == both[both.state == DECODER_EXACT].accuracy_quiet).all()
    assert not np.allclose(both[both.state == BANK].accuracy, both[both.state == BANK].accuracy_quiet)
    with pytest.raises(ValueError, match="sigma"):
        settings_for("smoke", {"lag": {"sigma": -0.1}})
    with pytest.raises(ValueError, match="the GRU's noise is lag.sigma"):
        settings_for("smoke", {"lag": {"gru": {"sigma": 0.05}}})


def test_fit_lag_oracle_history_is_a_fresh_data_curve():
    g0 = torch.Generator().manual_seed(1)
    E = torch.randn(6, 8, generator=g0)

    def sample(n, gen):
        tok = torch.randint(6, (n, 12), generator=gen)
        return ema_traces(E[tok], [0.5]).flatten(2), tok

    cfg = LagOracleConfig(hidden=16, layers=1, max_steps=60, lr=1e-2, batch_sequences=4, eval_every=10, patience=50,
                          val_sequences=4, min_steps=0, tol=0.2)
    history: list = []
    _, steps, _ = fit_lag_oracle(sample, 6, [0, 2], 2, cfg, seed=0, history=history)
    assert [h["step"] for h in history if h["lag"] == 0] == [10, 20, 30, 40, 50, 60]
    assert all(h["train_loss"] > 0 and h["val_loss"] > 0 and 0 <= h["val_acc"] <= 1 for h in history)
    first = [h["train_loss"] for h in history if h["lag"] == 0]
    assert first[-1] < first[0]                                               # it learns
    without, steps_without, _ = fit_lag_oracle(sample, 6, [0, 2], 2, cfg, seed=0)     # recording changes nothing
    with_history, _, _ = fit_lag_oracle(sample, 6, [0, 2], 2, cfg, seed=0, history=[])
    assert steps == steps_without
    assert all(torch.equal(a, b) for a, b in zip(without.parameters(), with_history.parameters(), strict=True))


def test_fresh_oracle_reads_a_kept_word_and_not_a_mismatched_one():
    """The positive control (the word one back from a half-rate trace) and the negative (another document's words)."""
    torch.set_num_threads(1)
    words = vocabulary("A")
    vocab = {w: i + 1 for i, w in enumerate(words)}
    E = torch.randn(len(vocab) + 1, 32, generator=torch.Generator().manual_seed(0))   # dense fixed codes

    def read(docs):
        return ema_traces(E[word_ids(docs, vocab)], [0.5]).flatten(2)

    cfg = LagOracleConfig(hidden=64, layers=1, max_steps=250, lr=1e-2, batch_sequences=4, eval_every=10, patience=50,
                          val_sequences=8, min_steps=0, tol=0.1)
    stream = FreshDocuments(20, seed=0, chunk=200)
    test = FreshDocuments(20, seed=9, chunk=200).take(16)
    kept, steps, stops, hist = fit_fresh_lag_oracle(read, stream, vocab, [1], cfg, seed=0)
    acc, chance = score_oracle(kept, read(test), word_ids(test, vocab))
    assert acc[0] > 0.8 and set(hist.columns) >= {"step", "lag", "train_loss", "val_loss", "val_acc", "documents"}
    assert hist.documents.iloc[-1] == cfg.val_sequences + hist.step.iloc[-1] * cfg.batch_sequences
    stream.rewind()
    lost, _, why, _ = fit_fresh_lag_oracle(read, stream, vocab, [1], cfg, seed=0, mismatched=True)
    acc_l, chance_l = score_oracle(lost, read(test), word_ids(test, vocab), mismatched=True)
    assert acc_l[0] < chance_l[0] + 0.1 and float(chance_l[0]) == pytest.approx(float(chance[0]), abs=0.05)
    assert stops[1] in ("flat", "cap_while_improving", "solved") and why == {1: "never_left_plateau"}  # nothing to read
    with pytest.raises(ValueError, match="lags must be"):
        fit_fresh_lag_oracle(read, stream, vocab, [20], cfg, seed=0)


def test_spcn_level_one_is_fixed_so_the_bank_needs_no_fit():
    from paper_lib.experiments.transfer import settings_for
    from paper_lib.models.spcn import SPCN

    s = settings_for("smoke")
    train, _ = make_split("A", 40, 5, seed=0)
    fitted = SPCN(replace(s.spcn, seed=0)).fit(train.sentences)
    fresh = SPCN(replace(s.spcn, seed=0))
    a = fitted.forward_levels(train.sentences[:5], n_levels=1)[0][0][1]
    b = fresh.forward_levels(train.sentences[:5], n_levels=1)[0][0][1]
    assert torch.equal(a, b)


def test_context_free_control_reads_function_words_and_one_content_role():
    from paper_lib.experiments.transfer import context_free_roles

    train, test = make_split("A", 200, 50, seed=0, config=GrammarConfig())
    pred = context_free_roles(train, test.sentences)
    words = np.asarray(test.flat_words(), dtype=object)
    fw = np.isin(words, list(function_words()))
    assert len(pred) == test.n_tokens and len(set(pred[~fw])) == 1            # every content word: one role
    assert (pred[fw] == test.flat_roles()[fw]).mean() > 0.95                  # function words by their role
    for w in set(words[fw]):                                                  # one role per function word
        assert len(set(pred[words == w])) == 1


def test_oracle_metrics_are_per_seed_lists_in_seed_order():
    import pandas as pd

    from paper_lib.experiments.lag_stage import oracle_metrics
    from paper_lib.pipeline.parallel import call

    def run(seed, acc):
        o = {"accuracy": {"bank": {4: acc}, "gru": {4: acc / 2}}, "chance": {4: 0.08},
             "converged": {"bank": {4: 1.0}, "gru": {4: 0.0}}}
        return {"lag": pd.DataFrame({"seed": [seed]}), "oracle": o}
    m = oracle_metrics([run(2, 0.9), {"lag": pd.DataFrame({"seed": [1]}), "oracle": None}, run(0, 0.5)])
    assert m == {"lag_oracle_bank_4": [0.5, 0.9], "lag_oracle_bank_converged_4": [1.0, 1.0],
                 "lag_oracle_gru_4": [0.25, 0.45], "lag_oracle_gru_converged_4": [0.0, 0.0],
                 "lag_oracle_chance_4": [0.08, 0.08]}
    assert call(max, 3, 7) == 7


# --------------------------------------------------------------------------- the rows' rules

def _lag(gru4=0.87, bank4=0.84, dec=1.0, conv_gru=0.0, conv_bank=0.0, mis=0.08, sigma=0.02, conv_bank2=None):
    m = {}
    for k, (g, b) in {1: (1.0, 0.999), 2: (0.99, 0.99), 4: (gru4, bank4)}.items():
        m |= {f"lag_oracle_gru_{k}": _s(g, 0.01, 3), f"lag_oracle_bank_{k}": _s(b, 0.01, 3),
              f"lag_decoder_bank_{k}": _s(dec, 0.0), f"lag_oracle_chance_{k}": _s(0.078, 0.002, 3),
              f"lag_oracle_gru_converged_{k}": _s(conv_gru, 0.0, 3), f"lag_oracle_bank_converged_{k}": _s(conv_bank, 0.0, 3)}
    if conv_bank2 is not None:
        m["lag_oracle_bank_converged_2"] = _s(conv_bank2, 0.5, 3)
    return m | {"lag_oracle_bank_mismatched_4": _s(mis, 0.005, 3), "lag4_identity_acc_bank": _s(0.275, 0.01),
                "lag_sigma": _s(sigma, 0.0)}


@pytest.mark.parametrize("kw, verdict", [
    ({}, "no"),                                                        # the decoder reads every word: nothing lost
    ({"dec": 0.30, "bank4": 0.30, "gru4": 0.90}, "not informative at this budget"),   # the bank's oracle not flat
    ({"dec": 0.30, "bank4": 0.30, "gru4": 0.90, "conv_bank": 1.0}, "yes"),          # a converged bound below the GRU
    ({"dec": 0.50, "bank4": 0.50, "gru4": 0.60, "conv_gru": 1.0, "conv_bank": 1.0}, "yes"),
    ({"dec": 0.90, "bank4": 0.90, "gru4": 0.60, "conv_gru": 1.0}, "no"),              # the GRU's bound below the bank
    ({"dec": 0.10, "bank4": 0.90, "gru4": 0.60, "conv_gru": 1.0}, "no"),              # the decoder failed, the oracle reads
    ({"dec": 0.10, "bank4": 0.90, "gru4": 0.60}, "not informative at this budget"),   # the GRU's oracle cut: no bound
    ({"dec": 0.10, "bank4": 0.30, "gru4": 0.95, "conv_bank": 1.0, "conv_bank2": 2 / 3},
     "yes"),                                                           # decided at lag 4; a cut lag-2 reader bounds nothing
    ({"mis": 0.30}, "not informative at this budget"),                 # the negative control reads words it cannot see
    ({"sigma": 0.0}, "exact arithmetic: not a test of the mechanism"),  # no noise: a test of float precision
    ({"sigma": 0.005}, "not informative at this budget"),              # not the claim's budget
])
def test_lag_row_is_decided_on_bounds_at_its_noise_budget(kw, verdict):
    v = decide(CLAIMS_BY_KEY["lag_equal_state"], _lag(**kw), "cpu")
    assert v.holds == verdict, v.reason
    if kw.get("mis"):
        assert "negative control" in v.reason
    if verdict in ("yes", "no", "partly"):
        assert v.reason.startswith("at noise 0.02 per number per step: lag 1: bank oracle")
    if kw.get("sigma") == 0.005:
        assert "not the claim's budget 0.02" in v.reason


def test_lag_row_states_its_noise_budget_and_which_readers_were_cut():
    from paper_lib.claims.grammar import LAG_SIGMA
    from paper_lib.experiments.transfer import LagSettings

    claim = CLAIMS_BY_KEY["lag_equal_state"]
    assert LagSettings().sigma == LAG_SIGMA == 0.02 and "under noise 0.02 per number per step" in claim.claim
    assert "lag_sigma" in claim.metrics and "0.02 per state number per step" in claim.rule.__doc__
    v = decide(claim, _lag(dec=0.10, bank4=0.30, gru4=0.95, conv_bank=1.0, conv_bank2=2 / 3), "cpu")
    assert "lag 2: bank oracle 0.990 (cut in some seed)" in v.reason and "lag 4: bank oracle 0.300 (flat in every seed)" in v.reason
    assert "GRU oracle 0.950 (cut in some seed)" in v.reason
    missing = {k: x for k, x in _lag().items() if k != "lag_sigma"}
    assert decide(claim, missing, "cpu").holds == "metric missing: lag_sigma"


def test_lag_row_needs_its_positive_control():
    m = _lag() | {"lag_oracle_gru_1": _s(0.5, 0.01, 3)}
    v = decide(CLAIMS_BY_KEY["lag_equal_state"], m, "cpu")
    assert v.holds == "not informative at this budget" and "positive control" in v.reason


def _transfer(spcn=0.618, none=0.600, gain=0.018, cf=0.595, bigru=0.82):
    return {"spcn_acc_B": _s(spcn, 0.02), "spcn_none_acc_B": _s(none, 0.02), "spcn_learning_gain_B": _s(gain, 0.011),
            "context_free_acc_B": _s(cf, 0.003), "bigru_acc_B": _s(bigru, 0.03)}


@pytest.mark.parametrize("kw, verdict", [
    ({}, "the number; not attributable to learning"),                  # learning adds 0.018 < the 0.10 margin
    ({"gain": 0.15, "spcn": 0.66}, "yes"),                             # learning earns it, context too, near 0.618
    ({"gain": 0.15, "cf": 0.62}, "the number; not attributable to context"),
    ({"gain": 0.15, "spcn": 0.90}, "no"),                              # far from the paper
    ({"bigru": 0.60}, "not informative at this budget"),               # the positive control does not beat no context
])
def test_transfer_row_credits_learning_only_past_its_margin(kw, verdict):
    v = decide(CLAIMS_BY_KEY["transfer_B"], _transfer(**kw), "cpu")
    assert v.holds == verdict, v.reason


def _deep(spcn=-0.008, gru=0.0, bigru=1.0, gru0=1.0, heur2=0.56):
    return {"spcn_attractor_slope": _s(spcn, 0.003), "gru_causal_attractor_slope": _s(gru, 0.001),
            "bigru_attractor_acc_ge1": _s(bigru), "gru_causal_attractor_acc_0": _s(gru0),
            "heuristic_attractor_acc_2": _s(heur2, 0.03), "heuristic_attractor_acc_3": _s(0.17, 0.03)}


@pytest.mark.parametrize("kw, verdict", [
    ({}, "yes"),                                                       # SPCN falls per attractor, the GRU does not
    ({"spcn": -0.002, "gru": 0.0}, "partly"),                          # falls, CIs overlap
    ({"spcn": 0.01}, "no"),
    ({"bigru": 0.7}, "not informative at this budget"),                # the positive control fails
    ({"gru0": 0.6}, "not informative at this budget"),                 # the learned causal state cannot do it
    ({"heur2": 0.9}, "not informative at this budget"),                # a surface heuristic does the task
])
def test_the_attractor_row_is_the_slope(kw, verdict):
    claim = CLAIMS_BY_KEY["attractors"]
    assert claim.paper_value is None and claim.metrics == ("spcn_attractor_slope", "gru_causal_attractor_slope")
    assert decide(claim, _deep(**kw), "cpu").holds == verdict


@pytest.mark.parametrize("kw, verdict, number", [
    ({}, Kind.NO, "not reproduced"),                                   # ours 0.98 against the paper's 0.84
    ({"spcn": 0.86}, Kind.YES, "reproduced"),
    ({"spcn": 0.92}, Kind.PARTLY, "close"),
    ({"spcn": 0.86, "context_free": 0.85}, Kind.NOT_CONTEXT, "reproduced"),  # a reader of no context gets it too
    ({"bigru": 0.6}, Kind.NOT_INFORMATIVE, "not reproduced"),         # the roles are not learnable here
])
def test_the_deep_row_is_the_papers_084_with_its_controls(kw, verdict, number):
    v = {"spcn": 0.980, "context_free": 0.498, "bigru": 0.999} | kw
    m = {"spcn_deep_acc_A": _s(v["spcn"], 0.011), "context_free_deep_acc_A": _s(v["context_free"], 0.01),
         "bigru_deep_acc_A": _s(v["bigru"], 0.002)}
    claim = CLAIMS_BY_KEY["deep"]
    assert claim.paper_value == 0.84 and claim.comparable and claim.metrics == ("spcn_deep_acc_A",)
    got = decide(claim, m, "cpu")
    assert got.kind is verdict and got.number == number


@pytest.mark.parametrize("kw, verdict", [
    ({"nodrop": 0.899}, "no"),                                         # causal against causal: a tie
    ({"nodrop": 0.99, "spcn": 0.85}, "yes"),                           # far ahead, CIs apart
    ({}, "partly"),                                                    # ahead with CIs apart, by less than 0.10
    ({"bigru": 0.5}, "not informative at this budget"),                # the positive control fails
    ({"spcn_b": 0.90}, "not informative at this budget"),              # the roles do not need the word
])
def test_content_row_is_causal_against_the_gru_without_dropout(kw, verdict):
    v = {"nodrop": 0.985, "drop": 0.899, "spcn": 0.917, "bigru": 0.997, "spcn_b": 0.2} | kw
    m = {"causal_gru_nodrop_lexical_causal_acc_A": _s(v["nodrop"], 0.015), "gru_causal_lexical_causal_acc_A":
         _s(v["drop"], 0.03), "spcn_lexical_causal_acc_A": _s(v["spcn"], 0.02),
         "bigru_lexical_causal_acc_A": _s(v["bigru"], 0.003), "spcn_lexical_causal_acc_B": _s(v["spcn_b"], 0.03)}
    got = decide(CLAIMS_BY_KEY["content"], m, "cpu")
    assert got.holds == verdict, got.reason
    with_drop_only = {k: x for k, x in m.items() if not k.startswith("causal_gru_nodrop")}   # the dropout GRU decides nothing
    assert decide(CLAIMS_BY_KEY["content"], with_drop_only, "cpu").holds.startswith("metric missing")


def test_content_row_names_its_comparator_and_shows_both_grus():
    c = CLAIMS_BY_KEY["content"]
    assert c.metrics[0] == "causal_gru_nodrop_lexical_causal_acc_A" and c.versus == "spcn_lexical_causal_acc_A"
    assert "gru_causal_lexical_causal_acc_A" in c.prefixes and "without <unk> dropout" in c.claim
    assert "the comparator is the causal GRU without <unk> dropout, because" in c.controls


def test_every_grammar_row_names_its_strongest_controls_in_the_report(tmp_path):
    import json

    for key in ("learning", "transfer_B", "deep", "attractors", "content", "lag_equal_state"):
        c = CLAIMS_BY_KEY[key]
        assert "positive:" in c.controls and "negative:" in c.controls, key
    assert "oracle" in CLAIMS_BY_KEY["lag_equal_state"].controls
    nb = tmp_path / "02_transfer"
    nb.mkdir()
    (nb / "metrics.json").write_text(json.dumps({"profile": "cpu", "metrics": _lag()}))
    md = render(claims_table(tmp_path, CLAIMS_BY_KEY), "cpu")
    section = md.split('<a id="claim-lag_equal_state"></a>')[1].split("<a id=")[0]
    assert "Strongest controls: positive: the oracle must read the word one back" in section
    assert "Strongest controls: positive:" in md.split('<a id="claim-ppl_gap"></a>')[1].split("<a id=")[0]
