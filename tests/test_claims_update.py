"""Notebook 07's claim: the selection rule reaching each verdict, its gate, the stop reasons it reads,
and its metrics' words."""
from __future__ import annotations

from paper_lib.claims.update import CLAIMS, selection_keeps, update_learnable


def _m(n=3, **values) -> dict:
    return {k: {"mean": v[0], "ci95": v[1], "n": n} for k, v in values.items()}


def _fixture(scan, lti=0.3, bound=0.6, gru=0.9, tf=0.99, spen=0.95, gaps=(2, 64), calib_scan=0.99, calib_spen=0.2,
             cut=None):
    vals = {}
    for d in gaps:
        vals.update({f"update_acc_scan_{d}": (scan, 0.02), f"update_acc_lti_scan_{d}": (lti, 0.02),
                     f"update_acc_gru_{d}": (gru, 0.02), f"update_acc_spen_{d}": (spen, 0.02),
                     f"update_acc_transformer_{d}": (tf, 0.01), f"update_bound_best_fixed_{d}": (bound, 0.0)})
    for arm in ("scan", "lti_scan", "transformer"):
        for kind in ("improving", "plateau"):
            vals[f"update_cut_{arm}_{kind}"] = ((1 / 3) if cut == (arm, kind) else 0.0, 0.5)
    m = _m(**vals)
    for d in gaps:                                                      # a bound: one number, no interval
        m[f"update_bound_best_fixed_{d}"] = {"mean": bound, "ci95": float("nan"), "n": 1}
    for arm, acc in (("scan", calib_scan), ("spen", calib_spen)):
        m[f"update_calib_acc_{arm}"] = {"mean": acc, "ci95": float("nan"), "n": 1}
        m[f"update_calib_learned_{arm}"] = {"mean": 1.0 if acc > 0.2 else 0.0, "ci95": float("nan"), "n": 1}
    return m


def test_the_rule_can_say_yes_no_or_not_attributable():
    rule = selection_keeps()
    assert rule(_fixture(0.97))[0] == "yes"
    assert rule(_fixture(0.97, bound=0.96))[0] == "not attributable at this budget"        # the bound within its CI
    assert rule(_fixture(0.97, bound=0.99))[0] == "no"                                     # the family reaches it
    assert rule(_fixture(0.97, lti=0.97))[0] == "no"                                       # the learned member does
    assert rule(_fixture(0.91))[0] == "not attributable at this budget"                    # lower CI 0.89 < 0.9
    assert rule(_fixture(0.97, lti=0.94))[0] == "not attributable at this budget"          # CIs of the two scans touch
    why = rule(_fixture(0.97))[1]
    assert ("gap 64: selective 0.97 (lower CI 0.95), best fixed bank 0.60, time-invariant 0.30 (upper CI 0.32); "
            "GRU (selection or nonlinear state) 0.90") in why
    assert "SPEN" not in why                                                                # its calibration failed
    assert "SPEN-linear 0.95" in rule(_fixture(0.97, calib_spen=0.95))[1]                   # shown once it passed


def test_a_cut_arm_makes_the_verdict_not_attributable_by_itself():
    rule = selection_keeps()
    verdict, why = rule(_fixture(0.97, cut=("lti_scan", "improving")))
    assert verdict == "not attributable at this budget"
    assert why == ("time-invariant scan was still learning at its step cap in 1 of 3 seeds: the verdict would rest "
                   "on an arm that was cut")
    why = rule(_fixture(0.97, cut=("scan", "plateau")))[1]
    assert "selective scan never left the chance loss in 1 of 3 seeds" in why
    assert rule(_fixture(0.97, cut=("transformer", "improving")))[0] == "yes"              # not an arm the rule reads


def test_the_gate_asks_for_the_positive_control_and_the_calibration():
    gate = update_learnable()
    assert gate(_fixture(0.97)) is None
    assert "Transformer is below 0.95 at gap 2 0.90, gap 64 0.90" in gate(_fixture(0.97, tf=0.9))
    assert "(the Transformer never left the chance loss in 1 of 3 seeds)" in gate(
        _fixture(0.97, tf=0.2, cut=("transformer", "plateau")))
    assert gate(_fixture(0.97, calib_scan=0.5)) == ("the selective scan does not learn the task at gap 2 without noise "
                                                    "(0.50): the recipe does not teach it")


def test_the_claim_row_reads_the_rule_and_the_gate():
    assert CLAIMS.verdict("update_recall", _fixture(0.97), "cpu").holds == "yes"
    assert CLAIMS.verdict("update_recall", _fixture(0.97, tf=0.5), "cpu").holds == "not informative at this budget"
    assert CLAIMS.verdict("update_recall", _fixture(0.97), "smoke").holds == "undetermined"
    assert "**not attributable at this budget**" in CLAIMS.markdown("update_recall", _fixture(0.91), "cpu")
    label = CLAIMS.labels.label
    assert label("update_acc_scan_64") == "selective scan, latest value at gap 64"
    assert label("update_acc_lti_scan_8") == "time-invariant scan, latest value at gap 8"
    assert label("update_bound_best_fixed_8") == "best fixed-decay bank of the family, Bayes bound at gap 8"
    assert label("update_cut_lti_scan_improving") == ("time-invariant scan cut at its step cap while still improving "
                                                      "(share of seeds)")
    assert label("update_best_fixed_slowest_64") == "the best fixed bank's slowest rate at gap 64"
    assert label("update_state_bank_oracle") == "fixed-bank oracle state (numbers per sequence)"
