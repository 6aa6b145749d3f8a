"""The reproduction report from small fixture metrics: each verdict reachable, one rule per claim."""
from __future__ import annotations

import json

import pytest

from paper_lib.pipeline.report import (
    CLAIMS_BY_KEY,
    claims_table,
    decide,
    render,
    update_readme,
    verdict_for,
    write_report,
)


def _metrics(folder, notebook, profile="cpu", n=5, **values):
    (folder / notebook).mkdir(parents=True)
    doc = {"profile": profile, "notebook": notebook, "git_commit": "abc",
           "metrics": {k: {"mean": v[0], "ci95": v[1], "n": n} for k, v in values.items()}}
    (folder / notebook / "metrics.json").write_text(json.dumps(doc))


def _s(mean, ci=0.01, n=5):
    return {"mean": mean, "ci95": ci, "n": n}


def test_report_holds_fails_and_missing(tmp_path):
    figures = tmp_path / "figures"
    _metrics(figures, "01_grammar_probe", spcn_probe_acc_A=(0.95, 0.01), spcn_over_bigru_A=(0.80, 0.02),
             spcn_untrained_acc_A=(0.90, 0.01))
    _metrics(figures, "02_transfer", spcn_struct_context_acc_B=(0.90, 0.01), gru_causal_struct_context_acc_B=(0.70, 0.02),
             causal_gru_nodrop_struct_context_acc_B=(0.60, 0.02), spcn_struct_category_acc_B=(0.30, 0.02),
             bigru_lexical_causal_acc_A=(0.60, 0.2), spcn_lexical_causal_acc_A=(0.55, 0.2))
    table = claims_table(figures).set_index("claim")
    holds = table["holds"]
    within = "SPCN role accuracy within Grammar A with zero labels (probe), 96% of the supervised BiGRU"
    assert holds[within] == "yes"                                                     # |0.95 - 0.96| <= 0.03
    assert table.loc[within, "distance"] == "-0.010"
    structure = next(k for k in holds.index if k.startswith("SPCN beats the recurrent tagger"))
    content = next(k for k in holds.index if k.startswith("BiGRU far ahead"))
    transfer = next(k for k in holds.index if k.startswith("SPCN transfers A -> B"))
    assert holds[structure] == "yes"                                  # beats both causal GRUs, CIs apart
    assert "SPCN, category-dependent structure on B 0.3 ± 0.02" in table.loc[structure, "ours"]  # shown
    assert holds[content] == "partly"                                                 # ahead, CIs overlap
    assert holds[transfer] == "metric missing: spcn_acc_B"
    learning = next(k for k in holds.index if k.startswith("Label-free learning"))
    assert holds[learning] == "metric missing: spcn_learned_content_acc_B, spcn_floor_content_acc_B"
    assert holds["EMA-only SPEN vs Transformer perplexity gap (C4: 260 vs 33)"] == "not run yet"
    assert "SPCN probe accuracy on A 0.95 ± 0.01" in table.loc[within, "ours"]
    assert table.loc[within, "headline"] == "0.95 ± 0.01 (SPCN probe accuracy on A)"   # one number per cell
    assert table.loc[within, "versus"] == "—"                                           # no floor in the fixture
    assert table.loc[transfer, "distance"] == "—"
    md = render(claims_table(figures), "cpu")
    for line in md.splitlines():  # every table row has the same 7 cells (no stray "|")
        if line.startswith("| ") and "---" not in line:
            assert line.replace("\\|", "").count("|") == 8, line
    assert '<a id="claim-within_A"></a>' in md and "(#claim-within_A)" in md
    assert "on the structural roles that the preceding words decide (causal SPCN vs the causal GRU tagger with and " \
           "without &lt;unk&gt; training)](#claim-structure)" in md   # <unk> shows
    assert md.startswith("# Reproduction report (cpu profile)") and "not run yet: 6" in md and "metric missing: 4" in md  # 05 and 06 add two rows each, 02 the lag row
    time_section = md.split('<a id="claim-time_map"></a>')[1].split("<a id=")[0]      # a claim names its controls
    assert "Strongest controls: positive: the GRU keeps identity where it is easy" in time_section
    assert "Strongest controls" not in md.split('<a id="claim-within_A"></a>')[1].split("<a id=")[0]   # none written


def test_one_seed_and_smoke_are_undetermined():
    claim = CLAIMS_BY_KEY["within_A"]
    m = {"spcn_probe_acc_A": _s(0.96, float("nan"), 1), "spcn_over_bigru_A": _s(1.0, float("nan"), 1),
         "spcn_untrained_acc_A": _s(0.9, float("nan"), 1)}
    assert decide(claim, m, "cpu").holds == "undetermined" and "n=1" in decide(claim, m, "cpu").reason
    m5 = {k: _s(v["mean"]) for k, v in m.items()}
    assert decide(claim, m5, "smoke").holds == "undetermined"
    assert decide(claim, m5, "cpu").holds == "yes"


def test_perplexity_gap_not_informative_near_unigram():
    near = {"ppl_ratio": _s(0.7), "spen_val_ppl": _s(705.0), "transformer_val_ppl": _s(1030.0),
            "unigram_val_loss": _s(7.30), "spen_val_loss": _s(6.56), "transformer_val_loss": _s(6.94)}
    v = verdict_for("ppl_gap", near, "cpu")
    assert v.holds == "not informative at this budget"
    assert "not 1 nat below the unigram loss 7.30: spen 6.56, transformer 6.94" in v.reason
    learned = {**near, "spen_val_loss": _s(4.55), "transformer_val_loss": _s(5.14), "ppl_ratio": _s(0.55),
               "bigram_val_loss": _s(5.5), "transformer_induction_score": _s(2.0)}
    assert verdict_for("ppl_gap", learned, "cpu").holds == "no"                          # informative, ratio < 1.5
    no_copy = verdict_for("ppl_gap", {**learned, "transformer_induction_score": _s(0.01)}, "cpu")
    assert no_copy.holds == "not informative at this budget" and "in-context copying" in no_copy.reason


def test_ablation_needs_an_unbounded_reader_to_win():
    tie = {"loss_linear": _s(6.65), "loss_linear_attention": _s(6.59), "loss_softmax_attention": _s(6.59),
           "loss_token_attention": _s(6.60), "loss_history_attention": _s(6.62), "loss_transformer": _s(6.9),
           "induction_transformer": _s(2.0), "bigram_val_loss": _s(7.0)}
    v = verdict_for("ablation", tie, "cpu")
    assert v.holds == "not informative at this budget" and "no unbounded reader beats" in v.reason
    power = {**tie, "loss_token_attention": _s(5.9)}
    assert verdict_for("ablation", power, "cpu").holds == "yes"                          # spread 0.9% <= 2%
    assert verdict_for("ablation", {**power, "loss_linear": _s(6.95)}, "cpu").holds == "no"      # spread 5.4%
    assert verdict_for("ablation", {**power, "loss_linear": _s(6.85)}, "cpu").holds == "partly"  # spread 3.9%


def test_learning_needs_a_ceiling_above_the_floor():
    # issue 23 item 1: decided on Grammar B's unseen content words, where the fixed code cannot do the job
    m = {"spcn_learned_content_acc_B": _s(0.25, 0.03), "spcn_floor_content_acc_B": _s(0.228, 0.04),
         "backprop_content_acc_B": _s(0.24, 0.03), "spcn_learned_feat_acc_A": _s(0.952, 0.003)}
    v = verdict_for("learning", m, "cpu")
    assert v.holds == "not informative at this budget"
    assert v.reason.startswith("the ceiling backprop_content_acc_B 0.240 ± 0.030 does not beat the floor")
    room = {**m, "backprop_content_acc_B": _s(0.60, 0.05)}
    assert verdict_for("learning", room, "cpu").holds == "partly"                  # ahead, CIs overlap
    assert verdict_for("learning", {**room, "spcn_learned_content_acc_B": _s(0.20, 0.03)}, "cpu").holds == "no"
    yes = verdict_for("learning", {**room, "spcn_learned_content_acc_B": _s(0.45, 0.04)}, "cpu")
    assert yes.holds == "yes" and "CIs apart" in yes.reason
    assert verdict_for("learning", {**room, "spcn_learned_content_acc_B": _s(0.45, 0.04)}, "smoke").holds == "undetermined"
    # A's numbers no longer decide the row (the fixed code already does the job there); they are shown
    assert "spcn_learned_feat_acc_A" in CLAIMS_BY_KEY["learning"].prefixes
    assert verdict_for("learning", {"spcn_learned_feat_acc_A": _s(0.99, 0.001), "spcn_level1_floor_acc_A": _s(0.9, 0.001),
                                    "spcn_backprop_acc_A": _s(0.99, 0.001)}, "cpu").holds.startswith("metric missing")


def test_recall_rule_and_its_positive_control():
    m = {"recall_acc_spen_4": _s(0.9), "recall_acc_spen_64": _s(0.2), "recall_acc_transformer_4": _s(1.0),
         "recall_acc_transformer_64": _s(0.99)}
    assert verdict_for("recall", m, "cpu").holds == "yes"
    weak_control = {**m, "recall_acc_transformer_64": _s(0.6)}
    v = verdict_for("recall", weak_control, "cpu")
    assert v.holds == "not informative at this budget" and "0.60 < 0.95 at N=64" in v.reason
    at_chance = {**m, "recall_acc_spen_4": _s(0.08)}                    # flat at chance: cannot bind at all
    assert verdict_for("recall", at_chance, "cpu").holds == "yes"
    as_good = {**m, "recall_acc_spen_64": _s(0.995), "recall_acc_spen_4": _s(1.0)}
    assert verdict_for("recall", as_good, "cpu").holds == "no"
    with pytest.raises(ValueError, match="unknown claim 'nope'; known: within_A"):
        verdict_for("nope", m, "cpu")


def test_write_report_and_readme_markers(tmp_path):
    (tmp_path / "README.md").write_text("intro\n<!-- findings:start -->\nx\n<!-- findings:end -->\n"
                                        "<!-- report:start -->\nold\n<!-- report:end -->\nrest\n")
    _metrics(tmp_path / "figures", "03_spen_train", ppl_ratio=(8.1, 0.5), spen_val_ppl=(300.0, 10.0),
             transformer_val_ppl=(37.0, 2.0), unigram_val_loss=(7.3, 0.01), spen_val_loss=(5.7, 0.02),
             transformer_val_loss=(3.6, 0.05), transformer_induction_score=(2.0, 0.1), bigram_val_loss=(4.8, 0.0))
    path = write_report("cpu", root=tmp_path)
    assert path == tmp_path / "figures" / "REPORT.md"
    readme = (tmp_path / "README.md").read_text()
    assert "\nold\n" not in readme and readme.startswith("intro\n") and readme.endswith("rest\n")
    row = next(line for line in readme.splitlines() if "perplexity gap" in line and line.startswith("|"))
    assert "8.1 ± 0.5 (perplexity ratio SPEN / Transformer)" in row and row.rstrip("| ").endswith("yes")
    assert "(figures/REPORT.md#claim-ppl_gap)" in row and "not comparable" in row   # C4 vs our corpus
    assert "Of the 13 claims tested: **12** not run yet, **1** yes." in readme
    assert "- [EMA-only SPEN vs Transformer perplexity gap (C4: 260 vs 33)](figures/REPORT.md#claim-ppl_gap): **yes**; " \
           "ours 8.1 ± 0.5 (perplexity ratio SPEN / Transformer), against 2 ± 0.1 (Transformer induction score (nats))." \
           in readme
    report = path.read_text()
    assert "- SPEN perplexity 300 ± 10" in report and "Rule (stated before the run): yes if perplexity ratio" in report
    assert update_readme(tmp_path / "nope.md", claims_table(tmp_path / "figures")) is False


@pytest.mark.parametrize("a, b, margin, verdict, reason", [
    (_s(0.90), _s(0.80), 0.0, "yes", "acc_a - acc_b = +0.100 (acc_a ahead, CIs apart)"),
    (_s(0.81, 0.05), _s(0.80, 0.05), 0.0, "partly", "acc_a - acc_b = +0.010 (acc_a ahead, CIs overlap)"),
    (_s(0.70), _s(0.80), 0.0, "no", "acc_a - acc_b = -0.100 (acc_b ahead, CIs apart)"),
    (_s(0.79, 0.05), _s(0.80, 0.05), 0.0, "no", "acc_a - acc_b = -0.010 (acc_b ahead, CIs overlap)"),
    (_s(0.80), _s(0.80), 0.0, "no", "acc_a - acc_b = +0.000 (tied, CIs overlap)"),
    (_s(0.85), _s(0.80), 0.10, "partly", "acc_a - acc_b = +0.050 (acc_a ahead, CIs apart, short of the 0.1 margin)"),
])
def test_beats_says_who_is_ahead_and_whether_cis_are_apart(a, b, margin, verdict, reason):
    from paper_lib.pipeline.rules import beats

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
    word, reason = CLAIMS_BY_KEY["structure"].rule(m)
    assert word == verdict
    assert reason.count("spcn_struct_context_acc_B - ") == 2    # one clause per causal GRU


def test_beats_each_needs_a_rival():
    from paper_lib.pipeline.rules import beats_each

    with pytest.raises(ValueError, match="at least one rival"):
        beats_each("a", ())


def _attribution(spen, gru, oracle, n=8, **extra):
    return {f"recall_acc_spen_{n}": _s(spen), f"recall_acc_gru_{n}": _s(gru), f"recall_acc_oracle_{n}": _s(oracle),
            "recall_acc_transformer": _s(1.0), f"recall_baseline_{n}": _s(0.33, 0.0, 1), **extra}


def test_attribution_rule_every_branch():
    yes = verdict_for("recall_attribution", _attribution(spen=0.33, gru=0.97, oracle=0.4), "cpu")
    assert yes.holds == "yes" and "N=8: SPEN 0.33, learned recurrence 0.97, oracle 0.40" in yes.reason
    no = verdict_for("recall_attribution", _attribution(spen=0.33, gru=0.33, oracle=0.99), "cpu")
    assert no.holds == "no" and "the oracle reads the key" in no.reason
    both_fail = verdict_for("recall_attribution", _attribution(spen=0.33, gru=0.34, oracle=0.5), "cpu")
    assert both_fail.holds == "not attributable at this budget"
    spen_ok = verdict_for("recall_attribution", _attribution(spen=0.99, gru=0.99, oracle=0.99), "cpu")
    assert spen_ok.holds == "not attributable at this budget"
    overlap = _attribution(spen=0.85, gru=0.93, oracle=0.4)                 # the GRU recalls, but CIs touch SPEN's
    overlap["recall_acc_gru_8"], overlap["recall_acc_spen_8"] = _s(0.93, 0.06), _s(0.85, 0.06)
    assert verdict_for("recall_attribution", overlap, "cpu").holds == "not attributable at this budget"


def test_attribution_rule_takes_either_learned_recurrence_of_equal_state():
    """SPEN-selective at equal state is the second learned recurrence (issue 20): either one that recalls
    (CIs apart above SPEN) can carry the yes; the reason names both."""
    sel_wins = _attribution(spen=0.33, gru=0.33, oracle=0.4, recall_acc_spen_selective_8=_s(0.97))
    v = verdict_for("recall_attribution", sel_wins, "cpu")
    assert v.holds == "yes" and "learned recurrence 0.97, oracle 0.40 [gru 0.33, spen_selective 0.97]" in v.reason
    neither = _attribution(spen=0.33, gru=0.34, oracle=0.4, recall_acc_spen_selective_8=_s(0.35))
    assert verdict_for("recall_attribution", neither, "cpu").holds == "not attributable at this budget"
    no = _attribution(spen=0.33, gru=0.34, oracle=0.99, recall_acc_spen_selective_8=_s(0.97))
    assert verdict_for("recall_attribution", no, "cpu").holds == "no"      # the oracle reads the key: no, as before


def test_attribution_gate_smoke_and_missing():
    weak = _attribution(spen=0.33, gru=0.97, oracle=0.4, recall_acc_transformer=_s(0.5),
                        recall_acc_spen_token_attention=_s(0.6))
    v = verdict_for("recall_attribution", weak, "cpu")
    assert v.holds == "not informative at this budget" and "no positive control solves" in v.reason
    inner = {**weak, "recall_acc_spen_token_attention": _s(1.0)}          # the in-block control suffices
    assert verdict_for("recall_attribution", inner, "cpu").holds == "yes"
    assert verdict_for("recall_attribution", _attribution(0.3, 0.97, 0.4), "smoke").holds == "undetermined"
    one_seed = {k: {**v, "n": 1} for k, v in _attribution(0.3, 0.97, 0.4).items()}
    assert verdict_for("recall_attribution", one_seed, "cpu").holds == "undetermined"
    baseline_n1 = _attribution(0.3, 0.97, 0.4)                             # the baseline's n = 1 is not counted
    assert verdict_for("recall_attribution", baseline_n1, "cpu").holds == "yes"
    no_gru = {k: v for k, v in _attribution(0.3, 0.97, 0.4).items() if not k.startswith("recall_acc_gru")}
    assert verdict_for("recall_attribution", no_gru, "cpu").holds == "metric missing"


def test_attribution_row_in_the_table(tmp_path):
    vals = {k: (v["mean"], v["ci95"]) for k, v in _attribution(0.33, 0.97, 0.4).items()}
    _metrics(tmp_path, "05_associative_recall", n=3, **vals)
    table = claims_table(tmp_path)
    row = table[table.claim.str.startswith("The loss is the fixed traces' own")].iloc[0]
    assert row.holds == "yes" and "keys-ignored baseline, N=8" in row.ours and "trace oracle recall, N=8" in row.ours
    assert table[table.claim.str.startswith("Attention recalls")].shape[0] == 1


def test_paired_difference_names_a_gain_a_loss_a_tie_and_too_few_seeds():
    from paper_lib.pipeline.rules import paired_difference

    assert paired_difference([0.10, 0.12, 0.11])[0] == "gain"
    assert paired_difference([-0.10, -0.12, -0.11])[0] == "loss"
    assert paired_difference([0.1, -0.1, 0.0]) == ("no difference", "+0.000 ± 0.248 (n=3): no difference within the 95% CI")
    assert paired_difference([0.1])[0] == "undetermined"


def test_markdown_cells_keep_angle_brackets_and_pipes():
    from paper_lib.pipeline.report import _md_cell

    assert _md_cell("BiGRU without <unk> training | a & b") == "BiGRU without &lt;unk&gt; training \\| a &amp; b"
    assert _md_cell(0.5) == 0.5


def test_a_number_that_the_negative_control_reaches_too_is_not_informative():
    m = {"spcn_probe_acc_A": _s(0.944, 0.002), "spcn_over_bigru_A": _s(0.956, 0.004),
         "spcn_untrained_acc_A": _s(0.940, 0.002), "spcn_level1_floor_acc_A": _s(0.956, 0.002)}
    v = verdict_for("within_A", m, "cpu")
    assert v.holds == "the number; not attributable to learning" and "spcn_level1_floor_acc_A 0.956" in v.reason
    above = {**m, "spcn_level1_floor_acc_A": _s(0.90, 0.002), "spcn_untrained_acc_A": _s(0.90, 0.002)}
    assert verdict_for("within_A", above, "cpu").holds == "yes"
    assert "no negative control measured" in verdict_for("transfer_B", {"spcn_acc_B": _s(0.618, 0.02)}, "cpu").reason


def test_plain_words_replace_metric_names_and_distance_formats():
    from paper_lib.pipeline.report import _distance, plain

    assert plain("the ceiling spcn_backprop_acc_A 0.9 does not beat spcn_level1_floor_acc_A") == (
        "the ceiling backprop ceiling on A 0.9 does not beat no-learning floor (level-1 traces) on A")
    assert plain("depth_both_acc_lnscale_16 and token_attention") == (
        "fixed 1/sqrt(l) rescaling, first token and state at L=16 and token_attention")   # unknown names stay
    within = CLAIMS_BY_KEY["within_A"]
    assert _distance(within, {"spcn_probe_acc_A": _s(0.96000001)}) == "0.000"          # never "-0.000"
    assert _distance(CLAIMS_BY_KEY["ablation"], {"loss_linear": _s(4.7)}) == "not comparable"
    assert _distance(CLAIMS_BY_KEY["recall"], {}) == "—"


def test_a_notebook_verdict_line_shows_unk_instead_of_an_html_tag():
    m = {"spcn_struct_context_acc_B": _s(0.36, 0.07), "gru_causal_struct_context_acc_B": _s(0.66, 0.08),
         "causal_gru_nodrop_struct_context_acc_B": _s(0.67, 0.18)}
    line = verdict_for("structure", m, "cpu").markdown(CLAIMS_BY_KEY["structure"])
    assert "&lt;unk>" in line and "<unk>" not in line and "Verdict: **no**" in line


@pytest.mark.parametrize("spcn, bigru, verdict", [
    (0.83, 0.99, "yes"),                                   # within 0.05 of the paper's 0.84
    (0.74, 0.99, "partly"),                                # within 0.12
    (0.55, 0.99, "no"),                                    # fixed traces fooled by the attractors
    (0.98, 0.99, "no"),                                    # far above: depth is easy again
    (0.83, 0.70, "not informative at this budget"),        # the reader that sees the main verb fails: no power
])
def test_deep_row_is_agreement_across_attractors(spcn, bigru, verdict):
    """Issue 23 item 2: the deep row reads SPCN's subject-number accuracy pooled over the items with
    k >= 1 attractors, the BiGRU (which reads the main verb itself) as its positive control."""
    claim = CLAIMS_BY_KEY["deep"]
    assert claim.metrics == ("spcn_attractor_acc_ge1",)
    m = {"spcn_attractor_acc_ge1": _s(spcn), "bigru_attractor_acc_ge1": _s(bigru),
         "gru_causal_attractor_acc_ge1": _s(0.9)}
    assert decide(claim, m, "cpu").holds == verdict
    assert "spcn_deep_acc_A" in claim.prefixes and "spcn_attractor_acc_" in claim.prefixes


@pytest.mark.parametrize("oracle, verdict", [
    (0.30, "yes"),                                          # the best reader of the bank also loses it at lag 4
    (0.88, "the number; not attributable to the fixed traces"),   # the oracle reads what the GRU keeps
    (None, "the number; not attributable to the fixed traces"),   # no oracle measured
])
def test_lag_equal_state_needs_the_bank_oracle_to_lose_identity(oracle, verdict):
    """Issue 23 item C: the lag row holds only if the lag oracle fitted on the trace bank stays below the GRU."""
    claim = CLAIMS_BY_KEY["lag_equal_state"]
    m = {"lag1_identity_acc_gru": _s(0.95), "lag1_identity_acc_bank": _s(0.60), "lag4_identity_acc_gru": _s(0.90),
         "lag4_identity_acc_bank": _s(0.20)}
    if oracle is not None:
        m["lag4_identity_acc_bank_oracle"] = _s(oracle)
    v = decide(claim, m, "cpu")
    assert v.holds == verdict
    if oracle == 0.88:
        assert "0.88" in v.reason and "0.90" in v.reason
