"""Notebook 06's claims family: its words cover every residual rule of panel B, and its rows read
what the notebook writes (the rules' verdicts: tests/test_boundary_map.py)."""
from __future__ import annotations

from paper_lib.claims.boundary import CLAIMS, DEPTH_ARMS, METRICS, NOT_AT_SMOKE
from paper_lib.models.depth_probe import ARMS


def test_every_residual_rule_has_words_and_every_depth_metric_a_label():
    assert set(DEPTH_ARMS) == set(ARMS)
    labels = CLAIMS.labels
    assert labels.label("depth_both_acc_lnscale_16") == "fixed 1/sqrt(l) rescaling, first token and state at L=16"
    assert all(labels.has(f"depth_{t}_acc_{arm}_4") for t in ("both", "copy", "state") for arm in ARMS)
    assert not labels.has("depth_both_acc_sum_4")                      # no such rule, no words
    assert NOT_AT_SMOKE <= set(METRICS["06_boundary_map"])


def test_the_rows_read_notebook_06():
    assert [c.key for c in CLAIMS] == ["time_map", "depth_map"]
    assert {c.notebook for c in CLAIMS} == {"06_boundary_map"}
