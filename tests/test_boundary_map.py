"""Notebook 06's mechanics: the trace bank's closed form, the depth probe's residual rules, the
lag probe where it must recover identity, the report rules, determinism."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from paper_lib.claims.boundary import CLAIMS, depth_dilution, depth_learnable, structure_outlives_identity
from paper_lib.claims.grammar import CLAIMS as GRAMMAR
from paper_lib.ema import ema_traces
from paper_lib.experiments import boundary_map as bm
from paper_lib.models.depth_probe import ARMS, DepthProbe, chain_states, chain_table
from paper_lib.pipeline.report import decide, summarise
from paper_lib.probes import lag_decodability, matched_filter_identity_accuracy, trace_lag_weights


def test_trace_lag_weights_are_the_ema_impulse_response():
    w = trace_lag_weights([0.5, 0.1], 4)
    assert np.allclose(w[0], [0.5, 0.25, 0.125, 0.0625]) and np.allclose(w[1], [0.1, 0.09, 0.081, 0.0729])
    x = torch.zeros(1, 4, 1, dtype=torch.float64)
    x[0, 0, 0] = 1.0                                                   # an impulse at t = 0
    h = ema_traces(x, [0.5, 0.1])[0, :, :, 0].T.numpy()                # (S, T): weight of lag t
    assert np.allclose(h, w)


def test_matched_filter_closed_form():
    assert matched_filter_identity_accuracy([0.5], 1, 1, 8, window=10) == 1.0
    # one trace, lag 0: snr^2 = d * w0^2 / sum_{j>0} w_j^2 = d * 0.25 / (0.25/3) = 3d (window -> infinity)
    from scipy import integrate
    from scipy.stats import norm
    snr = math.sqrt(3 * 4)
    want = integrate.quad(lambda z: norm.pdf(z) * norm.cdf(z + snr) ** 15, -10, 10)[0]
    assert matched_filter_identity_accuracy([0.5], 0, 16, 4, window=60) == pytest.approx(want, abs=1e-4)
    accs = [matched_filter_identity_accuracy([0.5, 0.1, 0.02], 2, V, 16, window=200) for V in (4, 64, 1024)]
    assert accs[0] > accs[1] > accs[2] > 0


def _probe(arm, L=2, d=3):
    m = DepthProbe(arm, L, d, n_x0=2, n_inputs=2, n_states=2, n_models=1, seeds=[0])
    with torch.no_grad():
        for name in ("w1", "b1", "w2", "b2"):
            getattr(m, name).zero_()
        m.b2.copy_(torch.tensor([1.0, 2.0, 3.0]))                    # u = (1, 2, 3) at every block
        m.embed_x0.copy_(torch.tensor([[[1.0, 0.0, -1.0], [2.0, 2.0, 2.0]]]))
        if arm in ("gate", "highway"):
            m.gate_w.zero_()
            m.gate_b.zero_()                                            # g = sigmoid(0) = 0.5
    return m


@pytest.mark.parametrize("arm", ARMS)
def test_each_residual_rule_against_a_hand_computation(arm):
    m = _probe(arm)
    x0, a = torch.tensor([[0]]), torch.tensor([[[1, 0]]])
    h = m.streams(x0, a)[0, 0].detach().numpy()                      # (L + 1, d)
    e, u = np.array([1.0, 0.0, -1.0]), np.array([1.0, 2.0, 3.0])
    if arm in ("plain", "lnscale"):
        want = [e, e + u, e + 2 * u]
    elif arm == "decay":
        h1 = 0.5 * e + 0.5 * u
        want = [e, h1, 0.5 * h1 + 0.5 * u]
    elif arm == "gate":
        want = [e, e + 0.5 * u, e + u]
    elif arm == "highway":
        h1 = 0.5 * e + 0.5 * u
        want = [e, h1, 0.5 * h1 + 0.5 * u]
    else:  # dwa at init: the plain residual
        want = [e, e + u, e + 2 * u]
    assert np.allclose(h, np.array(want), atol=1e-6)


def test_dwa_weights_mix_every_earlier_output():
    m = _probe("dwa", L=2)
    with torch.no_grad():
        m.dwa_weights.copy_(torch.tensor([[[0.5, 0.25, 0.0], [0.1, 0.2, 0.3]]]))
    h = m.streams(torch.tensor([[0]]), torch.tensor([[[0, 0]]]))[0, 0].detach().numpy()
    e, u = np.array([1.0, 0.0, -1.0]), np.array([1.0, 2.0, 3.0])
    y1 = e + u
    h1 = 0.5 * e + 0.25 * y1
    y2 = h1 + u
    assert np.allclose(h[2], 0.1 * e + 0.2 * y1 + 0.3 * y2, atol=1e-6)


def test_lnscale_divides_the_normalised_input_by_sqrt_depth():
    m = _probe("lnscale", L=2)
    with torch.no_grad():
        m.w1.zero_()
        m.w1[0, :, :3, :3] = torch.eye(3)                            # hidden = gelu(n / sqrt(l)) (first 3 units)
        m.w2.zero_()
        m.w2[0, :, :3, :3] = torch.eye(3)
        m.b2.zero_()
    h = m.streams(torch.tensor([[0]]), torch.tensor([[[0, 0]]]))[0, 0].detach()
    e = torch.tensor([1.0, 0.0, -1.0])
    h1 = e + F.gelu(F.layer_norm(e, (3,)))
    h2 = h1 + F.gelu(F.layer_norm(h1, (3,)) / math.sqrt(2))
    assert torch.allclose(h[1], h1, atol=1e-6) and torch.allclose(h[2], h2, atol=1e-6)


def test_chain_states_follow_the_table():
    table = torch.tensor([[1, 0], [0, 1]])                            # a=0: flip, a=1: keep
    s = chain_states(torch.tensor([0, 1]), torch.tensor([[0, 1, 0], [1, 1, 0]]), table)
    assert s.tolist() == [[1, 1, 0], [1, 1, 0]]
    assert chain_table(16, 4, 0).shape == (16, 4) and torch.equal(chain_table(16, 4, 0), chain_table(16, 4, 0))


def test_probe_recovers_identity_at_lag_one_where_it_must():
    g = np.random.default_rng(0)
    tok = g.integers(0, 6, (40, 30))
    onehot = np.eye(6)[tok]
    prev = np.concatenate([np.zeros_like(onehot[:, :1]), onehot[:, :-1]], 1)
    states = np.concatenate([onehot, prev], -1)                        # the state holds x_t and x_{t-1}
    df = lag_decodability(states[:30], {"identity": tok[:30]}, states[30:], {"identity": tok[30:]}, [0, 1, 2])
    acc = dict(zip(df.lag, df.accuracy, strict=True))
    assert acc[0] == 1.0 and acc[1] == 1.0 and acc[2] < 0.4            # lag 2 is not in the state
    # a copy trace (alpha = 1) holds only x_t: lag 1 falls to about chance
    bank = ema_traces(torch.from_numpy(onehot), [1.0]).flatten(2).numpy()
    df = lag_decodability(bank[:30], {"identity": tok[:30]}, bank[30:], {"identity": tok[30:]}, [0, 1])
    assert df.accuracy.tolist()[0] == 1.0 and df.accuracy.tolist()[1] < 0.4


def _m(**kv):
    return {k: {"mean": v[0], "ci95": v[1], "n": 3} for k, v in kv.items()}


def test_structure_rule_can_say_yes_partly_no():
    r = structure_outlives_identity("i", "s")
    assert r(_m(i=(0.03, 0.02), s=(0.3, 0.05)))[0] == "yes"
    assert r(_m(i=(0.15, 0.02), s=(0.3, 0.05)))[0] == "partly"
    assert r(_m(i=(0.15, 0.02), s=(0.16, 0.05)))[0] == "no"
    named = structure_outlives_identity("i", "s", learned=("gi", "gs"), others=(("scan", "si", "ss"),))
    why = named(_m(i=(0.03, 0.02), s=(0.3, 0.05), gi=(0.1, 0.0), gs=(0.9, 0.0), si=(0.12, 0.0), ss=(0.27, 0.0)))[1]
    assert "learned state: identity 0.10, structure 0.90; scan: identity 0.12, structure 0.27" in why
    assert "scan" not in named(_m(i=(0.03, 0.02), s=(0.3, 0.05)))[1]        # absent metrics are not named


def _depth(plain, decay, dwa, gate, highway, lnscale):
    m = {}
    for arm, (lo, hi) in dict(plain=plain, decay=decay, dwa=dwa, gate=gate, highway=highway, lnscale=lnscale).items():
        m[f"depth_both_acc_{arm}_4"] = (lo, 0.02)
        m[f"depth_both_acc_{arm}_16"] = (hi, 0.02)
    return _m(**m)


def test_depth_rule_and_its_control():
    r = depth_dilution()
    assert r(_depth((1, .2), (1, .1), (1, .95), (1, .2), (1, .5), (1, .2)))[0] == "yes"
    assert r(_depth((1, .2), (1, .1), (1, .95), (1, .2), (1, .5), (1, .95)))[0] == "partly"   # fixed control matches
    assert r(_depth((1, .2), (1, .1), (1, .6), (1, .2), (1, .5), (1, .2)))[0] == "partly"     # reduces, not avoids
    assert r(_depth((1, .95), (1, .1), (1, .9), (1, .2), (1, .5), (1, .2)))[0] == "no"      # no dilution
    assert depth_learnable()(_depth((0.5, .2), (0.5, .1), (0.6, .9), (0.5, .2), (0.5, .5), (0.5, .2))) is not None
    assert depth_learnable()(_depth((0.95, .2), (0.5, .1), (0.6, .9), (0.5, .2), (0.5, .5), (0.5, .2))) is None


def test_report_rows_decide_from_notebook_metrics():
    m = _depth((1, .2), (1, .1), (1, .95), (1, .2), (1, .5), (1, .2))
    assert decide(CLAIMS["depth_map"], m, "cpu").holds == "yes"
    t = summarise({"time_identity_bank": [0.03, 0.04, 0.05], "time_structure_bank": [0.3, 0.31, 0.29],
                   "time_identity_gru": [0.2, 0.2], "time_structure_gru": [0.9, 0.9], "time_identity_gru_easy": [0.2, 0.3]})
    assert decide(CLAIMS["time_map"], t, "cpu").holds == "not informative at this budget"
    t["time_identity_gru_easy"] = {"mean": 0.99, "ci95": 0.0, "n": 2}
    no_oracle = decide(CLAIMS["time_map"], t, "cpu")
    assert no_oracle.holds == "not informative at this budget" and "no time_identity_oracle" in no_oracle.reason
    t["time_identity_oracle"] = {"mean": 0.9, "ci95": 0.0, "n": 2}      # even a lower bound above 0.1 decides
    assert "the oracle of the fixed traces reads identity" in decide(CLAIMS["time_map"], t, "cpu").reason
    t["time_identity_oracle"] = {"mean": 0.05, "ci95": 0.0, "n": 2}
    t["time_oracle_converged"] = {"mean": 0.5, "ci95": 1.0, "n": 2}
    cut_short = decide(CLAIMS["time_map"], t, "cpu")           # below 0.1 but cut short: a lower bound
    assert cut_short.holds == "not informative at this budget" and "still improving at its last step in 1 of 2" in cut_short.reason
    t["time_oracle_converged"] = {"mean": 1.0, "ci95": 0.0, "n": 2}
    assert decide(CLAIMS["time_map"], t, "cpu").holds == "yes"
    t["time_identity_oracle"] = {"mean": 0.085, "ci95": 0.022, "n": 3}  # a cpu run's reading: mean under 0.1,
    fragile = decide(CLAIMS["time_map"], t, "cpu")              # its upper CI 0.107 is not
    assert fragile.holds == "not informative at this budget" and "upper 95% CI 0.107 >= 0.1" in fragile.reason
    t["time_identity_oracle"] = {"mean": 0.085, "ci95": 0.010, "n": 3}  # upper CI 0.095: passes
    assert decide(CLAIMS["time_map"], t, "cpu").holds == "yes"


def test_oracle_gate_reads_the_upper_ci():
    from paper_lib.claims.boundary import oracle_loses
    gate = oracle_loses("o")
    assert gate(_m(o=(0.05, 0.04))) is None                            # 0.09 < 0.10
    assert "upper 95% CI 0.110 >= 0.1" in gate(_m(o=(0.05, 0.06)))
    assert "upper 95% CI" in gate(_m(o=(0.12, 0.0)))
    assert "no o" in gate({})
    assert "upper 95% CI" in (oracle_loses.__doc__ or "")


def test_settings_and_determinism():
    s = bm.settings_for("smoke")
    with pytest.raises(ValueError, match="unknown arm"):
        bm.settings_for("smoke", {"arms": ["plain", "sum"]})
    a, b = bm.run_depth(s, "highway", 2, 8), bm.run_depth(s, "highway", 2, 8)
    assert a.equals(b) and set(a.seed) == set(s.seeds)
    t1, t2 = bm.time_map_bank(s, 4, 0), bm.time_map_bank(s, 4, 0)
    assert t1.equals(t2) and set(t1.state) == {"bank_paper", "bank_slow"}
    assert set(bm.time_metrics(t1, s)) >= {"time_identity_bank", "time_structure_bank", "time_identity_bank_easy"}


def test_oracle_map_at_the_rule_cell_repeats_and_gives_the_gate_its_metric():
    s = bm.settings_for("smoke", {"oracle": {"hidden": 16, "max_steps": 20, "eval_every": 5}})
    V = bm.rule_vocab_size(s)
    assert V == 32 and bm.oracle_vocab_sizes(s) == (4, 32)        # vocab / width 4 is the smoke grid's nearest to 16
    o1, o2 = bm.time_map_oracle(s, V, 0, banks=("paper",)), bm.time_map_oracle(s, V, 0, banks=("paper",))
    assert o1.equals(o2) and set(o1.state) == {"oracle_paper"} and len(o1) == 2 * len(s.lags)
    oracle_jobs = [j for j in bm.time_jobs(s) if j[0].startswith("oracle_")]
    assert {sd for k, V_, sd in oracle_jobs if k == "oracle_paper_identity" and V_ == 32} == set(s.seeds)  # the rule's cell
    assert {(k, V_, sd) for k, V_, sd in oracle_jobs if (k.startswith("oracle_slow") or V_ == 4)} == {
        (f"oracle_{b}_{t}", V_, 0) for b, V_ in (("paper", 4), ("slow", 4), ("slow", 32)) for t in ("identity", "structure")}
    assert (o1.steps >= 1).all() and (o1.steps <= 20).all() and o1.n_test.eq(s.test_sequences * s.scored_positions).all()
    both = pd.concat([bm.time_map_bank(s, V, sd) for sd in s.seeds] + [bm.time_map_oracle(s, V, sd) for sd in s.seeds])
    m = bm.time_metrics(both, s)
    assert len(m["time_identity_oracle"]) == len(s.seeds) and len(m["time_structure_oracle"]) == len(s.seeds)
    assert len(m["time_identity_oracle_slow"]) == len(s.seeds)       # every seed here, as run
    assert set(m["time_oracle_converged"]) <= {0.0, 1.0} and len(m["time_oracle_converged"]) == len(s.seeds)
    with pytest.raises(ValueError, match="oracle_vocab_sizes, oracle_banks and oracle_map_seeds must be subsets"):
        bm.settings_for("smoke", {"oracle_vocab_sizes": [5]})
    with pytest.raises(ValueError, match=r"and seeds \[0, 1\]$"):
        bm.settings_for("smoke", {"oracle_map_seeds": [7]})


def test_boundary_ratios_name_the_largest_ratio_still_at_each_level():
    df = pd.DataFrame({"state": "oracle_paper", "target": "identity", "lag": 1, "seed": [0, 1, 0, 1, 0, 1],
                       "ratio": [0.25, 0.25, 4.0, 4.0, 16.0, 16.0], "decodability": [1.0, 0.9, 0.6, 0.5, 0.2, 0.0]})
    b = bm.boundary_ratios(df).iloc[0]
    assert b["ratio_at_0.5"] == 4.0                                    # mean 0.55 at ratio 4, 0.1 at 16
    assert b["ratio_at_0.1"] == 16.0
    none = bm.boundary_ratios(df.assign(decodability=0.05)).iloc[0]
    assert np.isnan(none["ratio_at_0.5"]) and np.isnan(none["ratio_at_0.1"])


def test_lag_row_reads_notebook_02():
    claim = GRAMMAR["lag_equal_state"]
    m = _m(lag1_identity_acc_gru=(0.999, 0.001), lag1_identity_acc_bank=(0.38, 0.01),
           lag4_identity_acc_gru=(0.41, 0.03), lag4_identity_acc_bank=(0.28, 0.01),
           lag4_identity_acc_bank_oracle=(0.15, 0.01))                                 # the bank's oracle
    assert decide(claim, m, "cpu").holds == "yes"
    m["lag4_identity_acc_gru"] = {"mean": 0.30, "ci95": 0.05, "n": 3}                 # ahead, CIs overlap
    assert decide(claim, m, "cpu").holds == "partly"
    m["lag1_identity_acc_gru"] = {"mean": 0.30, "ci95": 0.01, "n": 3}
    m["lag4_identity_acc_gru"] = {"mean": 0.20, "ci95": 0.01, "n": 3}
    assert decide(claim, m, "cpu").holds == "no"


def test_selective_scan_reader_starts_as_a_multi_rate_bank_and_is_input_dependent():
    from paper_lib.ema_selective import selective_scan_reference
    from paper_lib.models.scan_reader import LagReaderScan
    torch.manual_seed(0)
    m = LagReaderScan(4, 6, {"identity": 5}, [1, 2])
    with torch.no_grad():
        rates = 1 - torch.exp(torch.log1p(-torch.sigmoid(m.rate.bias) * (1 - math.exp(-4.0))))
    assert rates[0].item() == pytest.approx(0.5, abs=1e-5) and rates[-1].item() == pytest.approx(0.02, abs=1e-6)
    x = torch.randn(2, 40, 4)
    want = selective_scan_reference(m.rate(x), m.value(x))
    assert torch.allclose(m.states(x), want, atol=1e-5) and m.states(x).shape == (2, 40, 6)
    logit = m.rate(x)
    assert logit.std(dim=1).min() > 0                                   # the decay changes with the token
    with pytest.raises(ValueError, match="rates must satisfy"):
        LagReaderScan(4, 6, {"identity": 5}, [1], rates=(0.5, 0.99))


def test_learned_states_train_alike_and_repeat():
    s = bm.settings_for("smoke")
    a, b = bm.time_map_gru(s, 4, 0, "scan"), bm.time_map_gru(s, 4, 0, "scan")
    assert a.equals(b) and set(a.state) == {"scan"} and len(a) == 2 * len(s.lags)
    assert set(bm.time_metrics(a, s)) == {"time_identity_scan", "time_structure_scan", "time_identity_scan_easy"}
    with pytest.raises(ValueError, match="unknown learned state 'lstm'"):
        bm.train_gru(s, 4, 0, "lstm")
    with pytest.raises(ValueError, match="unknown learned state"):
        bm.settings_for("smoke", {"learned_states": ["gru", "lstm"]})
    jobs = bm.time_jobs(s)
    assert [j[0] for j in jobs].count("scan") == len(s.gru_vocab_sizes) * len(s.gru_seeds)
    df = bm.run_time_map(s.__class__(**{**s.__dict__, "vocab_sizes": (4,), "oracle_vocab_sizes": (4,),
                                        "seeds": (0,), "gru_seeds": (0,), "learned_states": ("scan",)}))
    assert list(dict.fromkeys(df.state)) == ["bank_paper", "bank_slow", "scan", "oracle_paper", "oracle_slow"]  # jobs' order
    whole = bm.time_map_oracle(s, 4, 0)                                # one call, or one job per fit: the same rows
    pd.testing.assert_frame_equal(df[df.state.str.startswith("oracle")].reset_index(drop=True)[whole.columns], whole,
                                  check_dtype=False)                  # steps: float beside the bank's NaN
