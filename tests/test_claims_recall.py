"""Notebook 05's claims: the recall gap and the attribution of a recall failure, every branch."""
from __future__ import annotations

import pytest

from paper_lib.claims.recall import CLAIMS


def _s(mean, ci=0.01, n=5):
    return {"mean": mean, "ci95": ci, "n": n}


def test_recall_rule_and_its_positive_control():
    m = {"recall_acc_spen_4": _s(0.9), "recall_acc_spen_64": _s(0.2), "recall_acc_transformer_4": _s(1.0),
         "recall_acc_transformer_64": _s(0.99)}
    assert CLAIMS.verdict("recall", m, "cpu").holds == "yes"
    weak_control = {**m, "recall_acc_transformer_64": _s(0.6)}
    v = CLAIMS.verdict("recall", weak_control, "cpu")
    assert v.holds == "not informative at this budget" and "0.60 < 0.95 at N=64" in v.reason
    at_chance = {**m, "recall_acc_spen_4": _s(0.08)}                    # flat at chance: cannot bind at all
    assert CLAIMS.verdict("recall", at_chance, "cpu").holds == "yes"
    as_good = {**m, "recall_acc_spen_64": _s(0.995), "recall_acc_spen_4": _s(1.0)}
    assert CLAIMS.verdict("recall", as_good, "cpu").holds == "no"
    with pytest.raises(ValueError, match="unknown claim 'nope'; known: recall, recall_attribution"):
        CLAIMS.verdict("nope", m, "cpu")

def _attribution(spen, gru, oracle, n=8, **extra):
    return {f"recall_acc_spen_{n}": _s(spen), f"recall_acc_gru_{n}": _s(gru), f"recall_acc_oracle_{n}": _s(oracle),
            "recall_acc_transformer": _s(1.0), f"recall_baseline_{n}": _s(0.33, 0.0, 1), **extra}

def test_attribution_rule_every_branch():
    yes = CLAIMS.verdict("recall_attribution", _attribution(spen=0.33, gru=0.97, oracle=0.4), "cpu")
    assert yes.holds == "yes" and "N=8: SPEN 0.33, learned recurrence 0.97, oracle 0.40" in yes.reason
    no = CLAIMS.verdict("recall_attribution", _attribution(spen=0.33, gru=0.33, oracle=0.99), "cpu")
    assert no.holds == "no" and "the oracle reads the key" in no.reason
    both_fail = CLAIMS.verdict("recall_attribution", _attribution(spen=0.33, gru=0.34, oracle=0.5), "cpu")
    assert both_fail.holds == "not attributable at this budget"
    spen_ok = CLAIMS.verdict("recall_attribution", _attribution(spen=0.99, gru=0.99, oracle=0.99), "cpu")
    assert spen_ok.holds == "not attributable at this budget"
    overlap = _attribution(spen=0.85, gru=0.93, oracle=0.4)                 # the GRU recalls, but CIs touch SPEN's
    overlap["recall_acc_gru_8"], overlap["recall_acc_spen_8"] = _s(0.93, 0.06), _s(0.85, 0.06)
    assert CLAIMS.verdict("recall_attribution", overlap, "cpu").holds == "not attributable at this budget"

def test_attribution_rule_takes_either_learned_recurrence_of_equal_state():
    """SPEN-selective at equal state is the second learned recurrence: either one that recalls
    (CIs apart above SPEN) can carry the yes; the reason names both."""
    sel_wins = _attribution(spen=0.33, gru=0.33, oracle=0.4, recall_acc_spen_selective_8=_s(0.97))
    v = CLAIMS.verdict("recall_attribution", sel_wins, "cpu")
    assert v.holds == "yes" and "learned recurrence 0.97, oracle 0.40 [gru 0.33, spen_selective 0.97]" in v.reason
    neither = _attribution(spen=0.33, gru=0.34, oracle=0.4, recall_acc_spen_selective_8=_s(0.35))
    assert CLAIMS.verdict("recall_attribution", neither, "cpu").holds == "not attributable at this budget"
    no = _attribution(spen=0.33, gru=0.34, oracle=0.99, recall_acc_spen_selective_8=_s(0.97))
    assert CLAIMS.verdict("recall_attribution", no, "cpu").holds == "no"      # the oracle reads the key: no, as before

def test_attribution_gate_smoke_and_missing():
    weak = _attribution(spen=0.33, gru=0.97, oracle=0.4, recall_acc_transformer=_s(0.5),
                        recall_acc_spen_token_attention=_s(0.6))
    v = CLAIMS.verdict("recall_attribution", weak, "cpu")
    assert v.holds == "not informative at this budget" and "no positive control solves" in v.reason
    inner = {**weak, "recall_acc_spen_token_attention": _s(1.0)}          # the in-block control suffices
    assert CLAIMS.verdict("recall_attribution", inner, "cpu").holds == "yes"
    assert CLAIMS.verdict("recall_attribution", _attribution(0.3, 0.97, 0.4), "smoke").holds == "undetermined"
    one_seed = {k: {**v, "n": 1} for k, v in _attribution(0.3, 0.97, 0.4).items()}
    assert CLAIMS.verdict("recall_attribution", one_seed, "cpu").holds == "undetermined"
    baseline_n1 = _attribution(0.3, 0.97, 0.4)                             # the baseline's n = 1 is not counted
    assert CLAIMS.verdict("recall_attribution", baseline_n1, "cpu").holds == "yes"
    no_gru = {k: v for k, v in _attribution(0.3, 0.97, 0.4).items() if not k.startswith("recall_acc_gru")}
    assert CLAIMS.verdict("recall_attribution", no_gru, "cpu").holds == "metric missing"
