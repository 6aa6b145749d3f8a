"""The grammar family's claims (notebooks 01 and 02): each rule reaching its verdicts."""
from __future__ import annotations

import pytest

from paper_lib.claims.grammar import CLAIMS
from paper_lib.pipeline.verdicts import Kind


def _s(mean, ci=0.01, n=5):
    return {"mean": mean, "ci95": ci, "n": n}


def test_learning_needs_a_ceiling_above_the_floor():
    # decided on Grammar B's unseen content words, where the fixed code cannot do the job, on fresh seeds
    m = {"spcn_learned_content_acc_B_fresh": _s(0.25, 0.03), "spcn_floor_content_acc_B_fresh": _s(0.228, 0.04),
         "backprop_content_acc_B_fresh": _s(0.24, 0.03), "spcn_learned_feat_acc_A": _s(0.952, 0.003)}
    v = CLAIMS.verdict("learning", m, "cpu")
    assert v.holds == "not informative at this budget"
    assert v.reason.startswith("the ceiling backprop_content_acc_B_fresh 0.240 ± 0.030 does not beat the floor")
    room = {**m, "backprop_content_acc_B_fresh": _s(0.60, 0.05)}
    assert CLAIMS.verdict("learning", room, "cpu").holds == "partly"                  # ahead, CIs overlap
    assert CLAIMS.verdict("learning", {**room, "spcn_learned_content_acc_B_fresh": _s(0.20, 0.03)}, "cpu").holds == "no"
    yes = CLAIMS.verdict("learning", {**room, "spcn_learned_content_acc_B_fresh": _s(0.45, 0.04)}, "cpu")
    assert yes.holds == "yes" and "CIs apart" in yes.reason
    assert CLAIMS.verdict("learning", {**room, "spcn_learned_content_acc_B_fresh": _s(0.45, 0.04)},
                          "smoke").holds == "undetermined"
    # the first seeds (on which the settings were chosen) and A's numbers are shown, never decide
    assert {"spcn_learned_content_acc_B", "spcn_learned_feat_acc_A"} <= set(CLAIMS["learning"].prefixes)
    assert CLAIMS.verdict("learning", {"spcn_learned_content_acc_B": _s(0.45, 0.04), "spcn_floor_content_acc_B": _s(0.2),
                                       "backprop_content_acc_B": _s(0.6)}, "cpu").holds.startswith("metric missing")

@pytest.mark.parametrize("a, b, margin, verdict, reason", [
    (_s(0.90), _s(0.80), 0.0, "yes", "acc_a - acc_b = +0.100 (acc_a ahead, CIs apart)"),
    (_s(0.81, 0.05), _s(0.80, 0.05), 0.0, "partly", "acc_a - acc_b = +0.010 (acc_a ahead, CIs overlap)"),
    (_s(0.70), _s(0.80), 0.0, "no", "acc_a - acc_b = -0.100 (acc_b ahead, CIs apart)"),
    (_s(0.79, 0.05), _s(0.80, 0.05), 0.0, "no", "acc_a - acc_b = -0.010 (acc_b ahead, CIs overlap)"),
    (_s(0.80), _s(0.80), 0.0, "no", "acc_a - acc_b = +0.000 (tied, CIs overlap)"),
    (_s(0.85), _s(0.80), 0.10, "partly", "acc_a - acc_b = +0.050 (acc_a ahead, CIs apart, short of the 0.1 margin)"),
])
def test_beats_says_who_is_ahead_and_whether_cis_are_apart(a, b, margin, verdict, reason):
    from paper_lib.claims.grammar import beats

    assert beats("acc_a", "acc_b", margin=margin)({"acc_a": a, "acc_b": b}) == (verdict, reason)

@pytest.mark.parametrize("spcn, gru, nodrop, verdict", [
    (_s(0.90), _s(0.80), _s(0.70), "yes"),                   # beats both, CIs apart
    (_s(0.90), _s(0.89), _s(0.70), "partly"),                # beats one with CIs apart, ahead of the other
    (_s(0.90), _s(0.95), _s(0.70), "partly"),                # beats one with CIs apart, behind the other
    (_s(0.90, 0.05), _s(0.88, 0.05), _s(0.87, 0.05), "partly"),  # ahead of both, CIs overlap
    (_s(0.90, 0.05), _s(0.91, 0.05), _s(0.87, 0.05), "no"),  # behind one, no pair apart
    (_s(0.70), _s(0.80), _s(0.90), "no"),                    # behind both
])
def test_structure_rule_against_both_causal_grus(spcn, gru, nodrop, verdict):
    m = {"spcn_struct_context_acc_B": spcn, "gru_causal_struct_context_acc_B": gru,
         "causal_gru_nodrop_struct_context_acc_B": nodrop}
    word, reason = CLAIMS["structure"].rule(m)
    assert word == verdict
    assert reason.count("spcn_struct_context_acc_B - ") == 2    # one clause per causal GRU

def test_beats_each_needs_a_rival():
    from paper_lib.claims.grammar import beats_each

    with pytest.raises(ValueError, match="at least one rival"):
        beats_each("a", ())

def test_paired_difference_names_a_gain_a_loss_a_tie_and_too_few_seeds():
    from paper_lib.claims.grammar import paired_difference

    assert paired_difference([0.10, 0.12, 0.11])[0] == "gain"
    assert paired_difference([-0.10, -0.12, -0.11])[0] == "loss"
    assert paired_difference([0.1, -0.1, 0.0]) == ("no difference", "+0.000 ± 0.248 (n=3): no difference within the 95% CI")
    assert paired_difference([0.1])[0] == "undetermined"

def test_a_number_that_the_negative_control_reaches_too_is_not_informative():
    m = {"spcn_probe_acc_A": _s(0.944, 0.002), "spcn_over_bigru_A": _s(0.956, 0.004),
         "spcn_untrained_acc_A": _s(0.940, 0.002), "spcn_level1_floor_acc_A": _s(0.956, 0.002)}
    v = CLAIMS.verdict("within_A", m, "cpu")
    assert v.holds == "the number; not attributable to learning" and "spcn_level1_floor_acc_A 0.956" in v.reason
    assert v.kind is Kind.NOT_LEARNING and v.number == "reproduced"       # the number is the paper's; not learning's
    above = {**m, "spcn_level1_floor_acc_A": _s(0.90, 0.002), "spcn_untrained_acc_A": _s(0.90, 0.002)}
    assert CLAIMS.verdict("within_A", above, "cpu").holds == "yes"
    assert CLAIMS.verdict("transfer_B", {"spcn_acc_B": _s(0.618, 0.02)}, "cpu").holds.startswith("metric missing")

def test_a_notebook_verdict_line_shows_unk_instead_of_an_html_tag():
    m = {"spcn_struct_context_acc_B": _s(0.36, 0.07), "gru_causal_struct_context_acc_B": _s(0.66, 0.08),
         "causal_gru_nodrop_struct_context_acc_B": _s(0.67, 0.18)}
    line = CLAIMS.markdown("structure", m, "cpu")
    assert r"\<unk\>" in line and "<unk>" not in line and "What the controls say: **does not hold**" in line
