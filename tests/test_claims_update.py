"""Notebook 07's claim: the key-update rule reaching each verdict, its gate, and its metrics' words."""
from __future__ import annotations

from paper_lib.claims.update import CLAIMS, update_kept, update_learnable


def _m(**values) -> dict:
    return {k: {"mean": v[0], "ci95": v[1], "n": 3} for k, v in values.items()}


def _fixture(oracle, scan, gru=0.5, tf=0.99, bound=0.5, dense=0.6, spen=0.3, gaps=(2, 64)):
    vals = {}
    for d in gaps:
        vals.update({f"update_acc_bank_oracle_{d}": (oracle, 0.02), f"update_acc_scan_{d}": (scan, 0.02),
                     f"update_acc_gru_{d}": (gru, 0.02), f"update_acc_spen_{d}": (spen, 0.02),
                     f"update_acc_transformer_{d}": (tf, 0.01), f"update_bound_{d}": (bound, 0.0),
                     f"update_bound_dense_{d}": (dense, 0.0)})
    return _m(**vals)


def test_the_rule_can_say_yes_no_or_not_attributable():
    rule = update_kept()
    assert rule(_fixture(0.4, 0.95))[0] == "yes"
    assert rule(_fixture(0.4, 0.5, gru=0.95))[0] == "yes"                                   # the GRU counts too
    assert rule(_fixture(0.93, 0.95, bound=0.95, dense=0.99))[0] == "no"
    assert rule(_fixture(0.4, 0.95, dense=0.95))[0] == "not attributable at this budget"   # a dense code keeps it
    assert rule(_fixture(0.4, 0.95, bound=0.91))[0] == "not attributable at this budget"   # the bound does not say lost
    assert rule(_fixture(0.89, 0.91))[0] == "not attributable at this budget"               # CIs overlap
    assert rule(_fixture(0.4, 0.5, spen=0.95))[0] == "not attributable at this budget"     # SPEN never counts for yes
    assert "SPEN, fixed decay in two blocks" in rule(_fixture(0.4, 0.95, spen=0.95))[1]
    why = rule(_fixture(0.4, 0.95))[1]
    assert "gap 64: oracle 0.40 (upper CI 0.42), bound 0.50, dense-code bound 0.60; scan 0.95, gru 0.50" in why


def test_the_gate_asks_for_the_positive_control_and_a_learnable_task():
    gate = update_learnable()
    assert gate(_fixture(0.4, 0.95)) is None
    assert "Transformer is below 0.95 at gap 2 0.90, gap 64 0.90" in gate(_fixture(0.4, 0.95, tf=0.9))
    assert "no learned state reaches 0.9 at gap 2 (scan 0.50, gru 0.50, spen 0.30)" in gate(_fixture(0.4, 0.5))
    assert gate(_fixture(0.4, 0.5, spen=0.92)) is None                                     # any equal state at gap 2


def test_the_claim_row_reads_the_rule_and_the_gate():
    assert CLAIMS.verdict("update_recall", _fixture(0.4, 0.95), "cpu").holds == "yes"
    assert CLAIMS.verdict("update_recall", _fixture(0.4, 0.95, tf=0.5), "cpu").holds == "not informative at this budget"
    assert CLAIMS.verdict("update_recall", _fixture(0.4, 0.95), "smoke").holds == "undetermined"
    assert "**not informative at this budget**" in CLAIMS.markdown("update_recall", _fixture(0.4, 0.5), "cpu")
    label = CLAIMS.labels.label
    assert label("update_acc_scan_64") == "selective scan, latest value at gap 64"
    assert label("update_bound_dense_8") == "Bayes bound of a dense-code fixed bank, gap 8"
    assert label("update_bound_8") == "Bayes bound of the fixed bank, gap 8"
    assert label("update_state_bank_oracle") == "fixed-bank oracle state (numbers per sequence)"
