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
from paper_lib.ema import ema_traces
from paper_lib.experiments import boundary_map as bm
from paper_lib.experiments import depth_runs as dr
from paper_lib.models.depth_probe import ARMS, DepthProbe, chain_states, chain_table
from paper_lib.pipeline.report import decide, summarise
from paper_lib.probes import lag_decodability, matched_filter_identity_accuracy, trace_lag_weights
from paper_lib.stopping import REASONS


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
        if arm in ("gate", "highway", "static"):
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
    elif arm in ("highway", "static"):
        h1 = 0.5 * e + 0.5 * u
        want = [e, h1, 0.5 * h1 + 0.5 * u]
    else:  # dwa at init: the plain residual
        want = [e, e + u, e + 2 * u]
    assert np.allclose(h, np.array(want), atol=1e-6)


def test_carry_gates_start_carrying_and_static_ignores_the_input():
    m = DepthProbe("highway", 3, 4, n_x0=2, n_inputs=2, n_states=2, seeds=[0])
    assert torch.all(m.gate_b == -3.0)                                 # g = sigmoid(-3) = 0.047: carry 0.953
    st = DepthProbe("static", 3, 4, n_x0=2, n_inputs=2, n_states=2, seeds=[0], gate_bias=-1.0)
    assert torch.all(st.gate_b == -1.0) and not hasattr(st, "gate_w")
    with torch.no_grad():
        for name in ("w1", "b1", "w2", "b2"):
            getattr(st, name).zero_()
        st.b2.fill_(1.0)                                               # u = 1 at every block
    x0, g = torch.tensor([[0, 1]]), torch.sigmoid(torch.tensor(-1.0))
    for a in (torch.tensor([[[0, 0, 0], [1, 1, 1]]]), torch.tensor([[[1, 0, 1], [0, 1, 0]]])):
        h = st.streams(x0, a)[0].detach()                              # the fresh tokens do not move the gate
        e = st.embed_x0[0, x0[0]].detach()
        want = e
        for _ in range(3):
            want = (1 - g) * want + g
        assert torch.allclose(h[:, -1], want, atol=1e-6)
    # the gate's own start (PyTorch's default) is kept for the write gate, which carries the whole stream
    assert not torch.all(DepthProbe("gate", 2, 4, seeds=[0]).gate_b == -3.0)


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
    fast = {"plain": (4000, 300), "dwa": (1300, 200), "gate": (3500, 300), "highway": (1200, 150),
            "static": (3900, 200), "lnscale": (3200, 200)}
    m = {**_steps(fast, {"decay": (0.06, 0.01)}), **_steps(fast, {"decay": (0.08, 0.02)}, "_d16")}
    m.update({f"depth_both_acc_{a}_4": (0.97, 0.01) for a in ARMS})
    depth = decide(CLAIMS["depth_map"], _m(**m), "cpu")
    assert depth.holds == "partly" and "fastest highway (not input-dependent and ahead" in depth.reason  # dwa ties it
    m["depth_steps_to_criterion_dwa_16"] = m["depth_steps_to_criterion_dwa_16_d16"] = (2500, 200)
    assert decide(CLAIMS["depth_map"], _m(**m), "cpu").holds == "yes"
    m.update({f"depth_both_acc_{a}_4": (0.5, 0.01) for a in ARMS})                  # nothing learns even at L=4
    assert decide(CLAIMS["depth_map"], _m(**m), "cpu").holds == "not informative at this budget"

    claim = CLAIMS["time_map"]
    t = summarise({"time_identity_oracle": [0.08, 0.09, 0.1], "time_structure_oracle": [0.27, 0.3, 0.25],
                   "time_identity_gru_heads": [0.97, 0.96, 0.98], "time_structure_gru_heads": [1.0, 1.0, 1.0],
                   "time_identity_scan_heads": [0.18, 0.2, 0.17], "time_structure_scan_heads": [0.5, 0.48, 0.47],
                   "time_identity_gru_easy": [0.95, 0.97, 0.96], "time_identity_oracle_far": [0.0, 0.004, -0.002],
                   **{f"time_cut_{w}_{k}": [0, 0, 0] for w in ("gru", "scan", "oracle")
                      for k in ("improving", "plateau")}})
    verdict = decide(claim, t, "cpu")
    assert verdict.holds == "partly" and "the traces lose structure too" in verdict.reason
    t["time_structure_oracle"] = {"mean": 0.99, "ci95": 0.01, "n": 3}
    assert decide(claim, t, "cpu").holds == "yes"
    for name, value, why in (("time_identity_gru_easy", 0.3, "even the learned state does not keep it"),
                             ("time_identity_oracle_far", 0.2, "the negative control reads 0.200")):
        cut = {**t, name: {"mean": value, "ci95": 0.0, "n": 3}}
        gated = decide(claim, cut, "cpu")
        assert gated.holds == "not informative at this budget" and why in gated.reason, (name, gated)
    for name, why in (("time_cut_scan_improving", "the selective scan was still learning at its step cap in 1 of 3"),
                      ("time_cut_oracle_plateau", "the oracle of the fixed traces never left the chance loss in 1"),
                      ("time_cut_gru_improving", "the GRU was still learning at its step cap in 1 of 3 seeds")):
        v = decide(claim, {**t, name: {"mean": 1 / 3, "ci95": 0.5, "n": 3}}, "cpu")
        assert v.holds == "not attributable at this budget" and why in v.reason, (name, v)
    assert "Strongest" not in claim.controls and claim.controls.startswith("positive:")


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
    a, b = dr.run_depth(s, "highway", 2, 8), dr.run_depth(s, "highway", 2, 8)
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
    assert {(k, V_, sd) for k, V_, sd in oracle_jobs if V_ == 4} == {
        (f"oracle_paper_{t}", 4, 0) for t in ("identity", "structure")}               # one seed off the rule's cell
    assert not [j for j in oracle_jobs if j[0].startswith("oracle_slow")]             # the slow bank only when asked
    slow = bm.settings_for("smoke", {"oracle_banks": ["paper", "slow"]})
    assert {sd for k, V_, sd in bm.time_jobs(slow) if k == "oracle_slow_identity"} == {0}
    assert (o1.steps >= 1).all() and (o1.steps <= 20).all() and o1.n_test.eq(s.test_sequences * s.scored_positions).all()
    both = pd.concat([bm.time_map_bank(s, V, sd) for sd in s.seeds] + [bm.time_map_oracle(s, V, sd, banks=("paper", "slow"))
                                                                       for sd in s.seeds])
    m = bm.time_metrics(both, s)
    assert len(m["time_identity_oracle"]) == len(s.seeds) and len(m["time_structure_oracle"]) == len(s.seeds)
    assert len(m["time_identity_oracle_slow"]) == len(s.seeds)       # every seed here, as run
    far = both[(both.state == "oracle_paper") & (both.target == "identity") & (both.lag == max(s.lags))]
    assert m["time_identity_oracle_far"] == far.sort_values("seed").decodability.tolist()   # the negative control
    assert set(m["time_cut_oracle_improving"]) | set(m["time_cut_oracle_plateau"]) <= {0.0, 1.0}
    assert len(m["time_cut_oracle_improving"]) == len(s.seeds) and set(o1.stop) <= set(REASONS)
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
    lti = LagReaderScan(4, 6, {"identity": 5}, [1, 2], selective=False)
    assert lti.rate(x).std(dim=1).max() == 0 and not lti.rate.weight.requires_grad   # the same at every step
    assert torch.allclose(lti.states(x), selective_scan_reference(lti.rate(x), lti.value(x)), atol=1e-5)
    with pytest.raises(ValueError, match="rates must satisfy"):
        LagReaderScan(4, 6, {"identity": 5}, [1], rates=(0.5, 0.99))


def test_learned_states_train_alike_and_repeat():
    s = bm.settings_for("smoke")
    (a, ca), (b, cb) = bm.time_map_gru(s, 4, 0, "scan"), bm.time_map_gru(s, 4, 0, "scan")
    assert a.equals(b) and ca.equals(cb) and set(a.state) == {"scan", "scan_heads"}
    assert len(a) == 2 * len(s.lags) + 2 * len(bm.learned_lags(s)) and list(ca.step) == [2, 3]   # a check, the cap
    assert set(bm.time_metrics(a, s)) == {"time_identity_scan", "time_structure_scan", "time_identity_scan_easy",
                                          "time_steps_scan", "time_cut_scan_improving", "time_cut_scan_plateau",
                                          "time_identity_scan_heads", "time_structure_scan_heads"}
    m = bm.time_metrics(a, s)
    assert a.steps.eq(s.gru_steps).all() and m["time_cut_scan_improving"] + m["time_cut_scan_plateau"] == [0.0, 1.0] \
        or m["time_cut_scan_improving"] + m["time_cut_scan_plateau"] == [1.0, 0.0]               # 3 steps: cut
    with pytest.raises(ValueError, match="unknown learned state 'lstm'"):
        bm.train_gru(s, 4, 0, "lstm")
    with pytest.raises(ValueError, match="unknown learned state"):
        bm.settings_for("smoke", {"learned_states": ["gru", "lstm"]})
    jobs = bm.time_jobs(s)
    assert [j[0] for j in jobs].count("scan") == len(s.gru_vocab_sizes) * len(s.gru_seeds)
    df, curves = bm.run_time_map(s.__class__(**{**s.__dict__, "vocab_sizes": (4,), "oracle_vocab_sizes": (4,),
                                                "seeds": (0,), "gru_seeds": (0,), "learned_states": ("scan",)}))
    assert set(curves.state) == {"scan"} and set(curves.seed) == {0}
    assert list(dict.fromkeys(df.state)) == ["bank_paper", "bank_slow", "scan", "scan_heads", "oracle_paper"]  # jobs' order
    whole = bm.time_map_oracle(s, 4, 0)                                # one call, or one job per fit: the same rows
    pd.testing.assert_frame_equal(df[df.state.str.startswith("oracle")].reset_index(drop=True)[whole.columns], whole,
                                  check_dtype=False)                  # steps: float beside the bank's NaN


def test_time_contrast_rule_can_say_yes_partly_no():
    from paper_lib.claims.boundary_rules import traces_keep_structure
    r = traces_keep_structure("oi", "os", (("GRU", "gi", "gs"), ("scan", "si", "ss")))
    base = dict(gi=(0.6, 0.05), gs=(0.95, 0.02), si=(0.2, 0.05), ss=(0.5, 0.05))
    assert r(_m(oi=(0.1, 0.02), os=(0.94, 0.02), **base))[0] == "yes"          # identity lost, class kept
    word, why = r(_m(oi=(0.1, 0.02), os=(0.3, 0.05), **base))
    assert word == "partly" and "the traces lose structure too" in why        # both lost, identity more
    assert r(_m(oi=(0.1, 0.02), os=(0.11, 0.05), **base))[0] == "no"          # both lost alike
    word, why = r(_m(oi=(0.55, 0.05), os=(0.94, 0.02), **base))
    assert word == "no" and "hold identity as the learned state does" in why
    # the contrast is the better learned state per target: the scan's structure when it is higher
    assert "scan: structure 0.99" in r(_m(oi=(0.1, 0.02), os=(0.5, 0.02), **{**base, "ss": (0.99, 0.0)}))[1]
    with pytest.raises(KeyError, match="no learned state"):
        r(_m(oi=(0.1, 0.02), os=(0.5, 0.02)))


def test_the_negative_control_gate():
    from paper_lib.claims.boundary_rules import reads_nothing
    assert reads_nothing("f")(_m(f=(0.01, 0.02))) is None                      # 0.03 <= 0.05
    assert "upper 95% CI 0.070 > 0.05" in reads_nothing("f")(_m(f=(0.03, 0.04)))
    assert "did not run" in reads_nothing("f")({})


def _steps(steps, copy, w=""):
    """Depth metrics at L = 4 and 16 for ``w``: steps to criterion and copy accuracy per arm (L = 16)."""
    m = {}
    for arm in ARMS:
        m[f"depth_steps_to_criterion_{arm}_16{w}"] = steps.get(arm, (6000, 0.0))
        m[f"depth_steps_to_criterion_{arm}_4{w}"] = (300, 0.0)
        m[f"depth_copy_acc_{arm}_16{w}"] = copy.get(arm, (1.0, 0.0))
    return m


def test_depth_rule_reads_steps_and_forgetting_at_both_widths():
    from paper_lib.claims.boundary_rules import depth_carry_selection
    r = depth_carry_selection()
    forget = {"decay": (0.06, 0.01)}
    fast_highway = {"plain": (4000, 300), "dwa": (2000, 200), "gate": (5000, 400), "highway": (800, 100),
                    "static": (2000, 300), "lnscale": (4500, 300)}
    both = {**_steps(fast_highway, forget), **_steps(fast_highway, forget, "_d16")}
    assert r(_m(**both))[0] == "yes"
    static_too = {**fast_highway, "static": (850, 100)}                         # the input-independent gate as fast
    word, why = r(_m(**_steps(static_too, forget), **_steps(static_too, forget, "_d16")))
    assert word == "partly" and "not input-dependent and ahead" in why
    narrow_none = _steps({}, forget, "_d16")                                   # nothing reaches it at d_model 16
    word, why = r(_m(**_steps(fast_highway, forget), **narrow_none))
    assert word == "partly" and "d_model 16" in why and "L=16" in why
    kept = {"decay": (0.9, 0.02)}                                              # the decay arm keeps the input
    assert r(_m(**_steps(fast_highway, kept), **_steps(fast_highway, kept, "_d16")))[0] == "no"
    plain_fast = {**fast_highway, "plain": (800, 100)}                         # the fixed residual as fast
    assert r(_m(**_steps(plain_fast, forget), **_steps(plain_fast, forget, "_d16")))[0] == "no"
    cut = {**both, "depth_cut_decay_16_d16_improving": (1 / 3, 0.5)}            # F reads an arm still learning
    word, why = r(_m(**cut))
    assert word == "not attributable at this budget" and "the decay arm at d_model 16 was still learning" in why


def test_depth_runs_stop_by_the_one_rule_and_record_why():
    s = bm.settings_for("smoke", {"depth_steps": 40, "eval_every": 2})
    reach = dr.run_depth(bm.settings_for("smoke", {"depth_steps": 40, "eval_every": 2, "depth_criterion": 0.0}),
                         "plain", 2, 8)
    assert reach.step.max() == 2 and set(reach[reach.stop != ""].stop) == {"solved"}   # every seed at the first check
    stall = dr.run_depth(bm.settings_for("smoke", {"depth_steps": 40, "eval_every": 2, "depth_criterion": 1.0,
                                                   "depth_patience": 2, "depth_min_gain": 1.0}), "plain", 2, 8)
    stops = stall[stall.stop != ""]
    assert len(stops) == len(s.seeds) and set(stops.stop) <= {"flat", "never_left_plateau"}
    assert all(st == "never_left_plateau" or step >= 6 for st, step in zip(stops.stop, stops.step, strict=True))
    assert set(stall.seed) == set(s.seeds) and stall.step.max() <= 40


def test_depth_final_reads_the_stop_and_the_first_step_at_the_criterion():
    s = bm.settings_for("smoke", {"depth_steps": 300, "widths": [8, 16], "depth_criterion": 0.9})
    rows = []
    for d, steps in ((16, (0, 100, 200)), (8, (0, 100, 200, 300))):
        for step in steps:
            for seed, acc in ((0, min(1.0, 0.5 + step / 400)), (1, 0.3)):   # seed 0 reaches 0.9 at step 200
                stop = ("solved" if seed == 0 and step == 200 and d == 16 else "flat" if seed == 0 and step == 300
                        else "cap_while_improving" if seed == 1 and step == steps[-1] else "")
                rows.append({"arm": "plain", "n_layer": 4, "d_model": d, "seed": seed, "step": step,
                             "copy_acc": 1.0, "state_acc": acc, "state_acc_mean": acc, "stop": stop})
    curves = pd.DataFrame(rows)
    final = dr.depth_final(curves, s).set_index(["d_model", "seed"])
    assert final.loc[(16, 0), "steps_to_criterion"] == 200 and final.loc[(16, 1), "steps_to_criterion"] == 300
    assert final.loc[(16, 0), "stopped_at"] == 200 and final.loc[(8, 0), "both_acc"] == 1.0   # at its own stop
    assert final.loc[(8, 0), "stop"] == "flat" and final.loc[(16, 1), "stop"] == "cap_while_improving"
    m = dr.depth_metrics(curves, s)
    assert m["depth_steps_to_criterion_plain_4"] == [200.0, 300.0]                 # headline width: no suffix
    assert m["depth_state_acc_plain_4_d8"] == [1.0, 0.3] and "depth_copy_acc_plain_4_d8" in m
    assert m["depth_cut_plain_4_improving"] == [0.0, 1.0] and m["depth_cut_plain_4_d8_plateau"] == [0.0, 0.0]


def test_the_oracle_is_cut_where_either_reader_at_the_rule_cell_was():
    s = bm.settings_for("smoke")
    V = bm.rule_vocab_size(s)
    rows = [{"state": "oracle_paper", "target": t, "lag": bm.RULE_LAG, "vocab_size": V, "ratio": V / s.d_model,
             "seed": sd, "decodability": 0.1, "steps": 60, "stop": stop}
            for sd, stops in enumerate((("flat", "solved"), ("flat", "cap_while_improving"), ("never_left_plateau",
                                                                                              "flat")))
            for t, stop in zip(("identity", "structure"), stops, strict=True)]
    m = bm.time_metrics(pd.DataFrame(rows), s)
    assert m["time_cut_oracle_improving"] == [0.0, 1.0, 0.0] and m["time_cut_oracle_plateau"] == [0.0, 0.0, 1.0]


def test_depth_row_without_steps_says_which_metric_is_missing():
    m = summarise({f"depth_both_acc_{a}_{L}": [0.95, 0.96] for a in ARMS for L in (4, 16)})
    v = decide(CLAIMS["depth_map"], m, "cpu")
    assert v.holds.startswith("metric missing") and "no depth_steps_to_criterion_plain_<L>" in v.reason


def test_the_depth_rows_rival_is_the_fastest_learned_arm_its_rule_names(tmp_path):
    from paper_lib.claims.boundary_rules import fastest_learned
    m = _m(**_steps({"plain": (4000, 300), "dwa": (1300, 200), "highway": (1500, 150)}, {}))
    assert fastest_learned()(m) == "depth_steps_to_criterion_dwa_16" and fastest_learned()({}) == ""
    import json

    from paper_lib.pipeline.report import claims_table
    folder = tmp_path / "06_boundary_map"
    folder.mkdir()
    (folder / "metrics.json").write_text(json.dumps({"profile": "cpu", "metrics": m}))
    row = claims_table(tmp_path, CLAIMS).set_index("key").loc["depth_map"]
    assert row["against"].startswith("1300") and "learned depth weights" in row["versus"]   # dwa, in words
