"""The reproduction report from small fixture metrics: the table, the verdict order, the README,
the labels; every claim of every family (the families' own rules: tests/test_claims_<family>.py)."""
from __future__ import annotations

import json

import pytest

from paper_lib.claims.__main__ import main as claims_main
from paper_lib.claims.grammar import near
from paper_lib.claims.lm import at_least
from paper_lib.claims.registry import CLAIMS, ROW_ORDER
from paper_lib.pipeline.labels import Labels
from paper_lib.pipeline.report import Claim, Claims, claims_table, decide, render, update_readme, write_report


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
             causal_gru_nodrop_lexical_causal_acc_A=(0.60, 0.2), gru_causal_lexical_causal_acc_A=(0.50, 0.2),
             spcn_lexical_causal_acc_A=(0.55, 0.2),
             bigru_lexical_causal_acc_A=(0.99, 0.01), spcn_lexical_causal_acc_B=(0.20, 0.05))
    table = claims_table(figures, CLAIMS).set_index("claim")
    holds = table["holds"]
    within = "SPCN role accuracy within Grammar A with zero labels (probe), 96% of the supervised BiGRU"
    assert holds[within] == "yes"                                                     # |0.95 - 0.96| <= 0.03
    assert table.loc[within, "distance"] == "-0.010"
    assert (table.loc[within, "number"], table.loc[within, "says"]) == ("reproduced", "the controls pass")
    structure = next(k for k in holds.index if k.startswith("SPCN beats the recurrent tagger"))
    content = next(k for k in holds.index if k.startswith("The recurrent tagger is far ahead"))
    transfer = next(k for k in holds.index if k.startswith("SPCN transfers A -> B"))
    assert holds[structure] == "yes"                                  # beats both causal GRUs, CIs apart
    assert (table.loc[structure, "number"], table.loc[structure, "says"]) == ("", "holds")     # no number of the paper
    assert "SPCN, category-dependent structure on B 0.3 ± 0.02" in table.loc[structure, "ours"]  # shown
    assert holds[content] == "partly"                                                 # ahead, CIs overlap
    assert holds[transfer] == "metric missing: spcn_acc_B, spcn_learning_gain_B, context_free_acc_B"
    learning = next(k for k in holds.index if k.startswith("Label-free learning"))
    assert holds[learning] == "metric missing: spcn_learned_content_acc_B_fresh, spcn_floor_content_acc_B_fresh"
    assert holds["EMA-only SPEN vs Transformer perplexity gap (C4: 260 vs 33)"] == "not run yet"
    assert "SPCN probe accuracy on A 0.95 ± 0.01" in table.loc[within, "ours"]
    assert table.loc[within, "headline"] == "0.95 ± 0.01 (SPCN probe accuracy on A)"   # one number per cell
    assert table.loc[within, "versus"] == "—"                                           # no floor in the fixture
    assert table.loc[transfer, "distance"] == "—"
    md = render(claims_table(figures, CLAIMS), "cpu")
    for line in md.splitlines():  # every table row has the same 7 cells (no stray "|")
        if line.startswith("| ") and "---" not in line:
            assert line.replace("\\|", "").count("|") == 8, line
    assert '<a id="claim-within_A"></a>' in md and "(#claim-within_A)" in md
    assert "[SPCN beats a causal GRU tagger on structural roles of B](#claim-structure)" in md     # the short name
    assert "### 5. SPCN beats the recurrent tagger on structure-dependent roles on B, like for like: on the structural " \
           "roles that the preceding words decide (causal SPCN vs the causal GRU tagger with and without &lt;unk&gt; " \
           "training)" in md                                                  # the whole claim in its section; <unk> shows
    assert md.startswith("# Reproduction report (cpu profile)") and "not run yet: 7" in md and "metric missing: 5" in md  # 05 and 06 add two rows each, 07 one; 02 the deep, attractor and lag rows
    time_section = md.split('<a id="claim-time_map"></a>')[1].split("<a id=")[0]      # a claim names its controls
    assert "Strongest controls: positive: the GRU keeps identity where it is easy" in time_section
    assert "Strongest controls: positive: the supervised BiGRU" in md.split('<a id="claim-within_A"></a>')[1]

def test_one_seed_and_smoke_are_undetermined():
    claim = CLAIMS["within_A"]
    m = {"spcn_probe_acc_A": _s(0.96, float("nan"), 1), "spcn_over_bigru_A": _s(1.0, float("nan"), 1),
         "spcn_untrained_acc_A": _s(0.9, float("nan"), 1)}
    assert decide(claim, m, "cpu").holds == "undetermined" and "n=1" in decide(claim, m, "cpu").reason
    m5 = {k: _s(v["mean"]) for k, v in m.items()}
    assert decide(claim, m5, "smoke").holds == "undetermined"
    assert decide(claim, m5, "cpu").holds == "yes"

def test_write_report_and_the_readme_summary(tmp_path):
    (tmp_path / "README.md").write_text("intro\n<!-- summary:start -->\nold\n<!-- summary:end -->\nrest\n")
    _metrics(tmp_path / "figures", "03_spen_train", ppl_ratio=(8.1, 0.5), spen_val_ppl=(300.0, 10.0),
             transformer_val_ppl=(37.0, 2.0), unigram_val_loss=(7.3, 0.01), spen_val_loss=(5.7, 0.02),
             transformer_val_loss=(3.6, 0.05), transformer_induction_score=(2.0, 0.1), bigram_val_loss=(4.8, 0.0))
    path = write_report("cpu", CLAIMS, root=tmp_path, adds="What the companion adds.")
    assert path == tmp_path / "figures" / "REPORT.md"
    readme = (tmp_path / "README.md").read_text()
    assert "\nold\n" not in readme and readme.startswith("intro\n") and readme.endswith("rest\n")
    first, second = ([ln for ln in block.splitlines() if ln.startswith("|")] for block in readme.split("\n\n")
                     if "| result" in block or "| finding" in block)
    assert [c.strip() for c in first[0].strip("|").split("|")] == [
        "result", "paper", "ours ± 95% CI", "number reproduced?", "what the controls say", "why"]
    assert len(first) == 2 + 5 and len(second) == 2 + len(CLAIMS) - 5      # the paper's five numbers; every other claim
    row = next(line for line in first if "claim-ppl_gap" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:5] == ["~7.9x (260 / 33)", "8.1 ± 0.5", "not run at paper scale", "the controls pass"]
    assert readme.index("| result") < readme.index("What the companion adds.") < readme.index("| finding")
    assert "*not run at paper scale*: the paper's number comes from" in readme       # the legend of the words used
    report = path.read_text()
    assert "- SPEN perplexity 300 ± 10" in report and "Rule (stated before the run): yes if perplexity ratio" in report
    assert "| number reproduced? | what the controls say |" in report.replace("  ", "").replace(" |", " |")
    assert update_readme(tmp_path / "nope.md", claims_table(tmp_path / "figures", CLAIMS)) is False


def test_attribution_row_in_the_table(tmp_path):
    vals = {"recall_acc_spen_8": (0.33, 0.01), "recall_acc_gru_8": (0.97, 0.01), "recall_acc_oracle_8": (0.4, 0.01),
            "recall_acc_transformer": (1.0, 0.01), "recall_baseline_8": (0.33, 0.0)}
    _metrics(tmp_path, "05_associative_recall", n=3, **vals)
    table = claims_table(tmp_path, CLAIMS)
    row = table[table.claim.str.startswith("SPEN's recall loss is the fixed traces' own")].iloc[0]
    assert row.holds == "yes" and "keys-ignored baseline, N=8" in row.ours and "trace oracle recall, N=8" in row.ours
    assert table[table.claim.str.startswith("Attention recalls")].shape[0] == 1

def test_markdown_cells_keep_angle_brackets_and_pipes():
    from paper_lib.pipeline.report import _md_cell

    assert _md_cell("BiGRU without <unk> training | a & b") == "BiGRU without &lt;unk&gt; training \\| a &amp; b"
    assert _md_cell(0.5) == 0.5

def test_plain_words_replace_metric_names_and_distance_formats():
    from paper_lib.pipeline.report import _distance

    plain = CLAIMS.labels.plain
    assert plain("the ceiling spcn_backprop_acc_A 0.9 does not beat spcn_level1_floor_acc_A") == (
        "the ceiling backprop ceiling on A 0.9 does not beat no-learning floor (level-1 traces) on A")
    assert plain("depth_both_acc_lnscale_16 and token_attention") == (
        "fixed 1/sqrt(l) rescaling, first token and state at L=16 and token_attention")   # unknown names stay
    within = CLAIMS["within_A"]
    assert _distance(within, {"spcn_probe_acc_A": _s(0.96000001)}) == "0.000"          # never "-0.000"
    assert _distance(CLAIMS["ablation"], {"loss_linear": _s(4.7)}) == "not comparable"
    assert _distance(CLAIMS["recall"], {}) == "—"
    assert _distance(CLAIMS["deep"], {"spcn_deep_acc_A": _s(0.98)}) == "+0.140"        # the paper's 0.84
    assert _distance(CLAIMS["attractors"], {"spcn_attractor_slope": _s(-0.03)}) == "—"  # ours alone


def test_every_claim_has_a_short_name():
    for c in CLAIMS:
        assert c.name and c.name != c.claim and len(c.name.split()) <= 12, c.key


def test_the_report_keeps_the_published_row_order_and_every_family():
    assert [c.key for c in CLAIMS][:len(ROW_ORDER)] == list(ROW_ORDER)
    assert {c.notebook for c in CLAIMS} == {"01_grammar_probe", "02_transfer", "03_spen_train",
                                           "04_predictor_ablation", "05_associative_recall", "06_boundary_map",
                                           "07_update_recall"}


def test_claims_reject_a_key_twice_and_name_the_known_ones():
    row = Claim("a", "A holds", "1", 1.0, "01_x", ("acc_a",), at_least("acc_a", 0.9, 0.5))
    with pytest.raises(ValueError, match=r"^claim key\(s\) a given twice$"):
        Claims((row, row), Labels({}))
    two = Claims((row,), Labels({"acc_a": "accuracy of A"})) + Claims(
        (Claim("b", "B holds", "2", None, "01_x", ("acc_a",), near("acc_a", 1.0, 0.1, 0.2)),), Labels({}))
    assert [c.key for c in two] == ["a", "b"] and two["b"].claim == "B holds"
    with pytest.raises(ValueError, match="^unknown claim 'c'; known: a, b$"):
        two["c"]
    line = two.markdown("a", {"acc_a": [0.95, 0.97]}, "cpu")
    assert line == ("**Claim: A holds.** Number reproduced? **—**. What the controls say: **the controls pass** "
                    "(accuracy of A = 0.96). Rule: yes if accuracy of A >= 0.9; partly if >= 0.5; else no.")
    assert two.verdict("b", {"acc_a": [0.95, 0.97]}, "cpu").number == ""           # the paper gives no number
    assert two.verdict("a", {"acc_a": [0.95, 0.97]}, "smoke").holds == "undetermined"


def test_labels_templates_fields_and_conflicts():
    labels = Labels({"acc_{who}_{N}": "{who} at N={N}", "acc_x_1": "one x", "train_loss": "the loss"},
                    {"who": {"x": "model X", "y_z": "model Y"}, "N": r"\d+"})
    assert labels.label("acc_y_z_16") == "model Y at N=16" and labels.label("acc_x_1") == "one x"
    assert labels.label("acc_w_3") == "acc_w_3" and not labels.has("acc_w_3") and labels.has("acc_x_2")
    assert labels.plain("train_loss above acc_x_4, acc_q_1") == "the loss above model X at N=4, acc_q_1"
    with pytest.raises(ValueError, match="metric 'train_loss' has two labels: 'the loss' and 'a loss'"):
        labels + Labels({"train_loss": "a loss"})
    with pytest.raises(ValueError, match="uses field 'k', which is not given"):
        Labels({"acc_{k}": "{k}"})


def test_the_report_command_writes_where_it_is_told_and_leaves_the_readme(tmp_path):
    from paper_lib.pipeline.provenance import REPO_ROOT

    readme = (REPO_ROOT / "README.md").read_bytes()
    out = tmp_path / "REPORT.md"
    assert claims_main(["report", "--profile", "cpu", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Reproduction report (cpu profile)") and "python -m paper_lib.claims report" in text
    assert (REPO_ROOT / "README.md").read_bytes() == readme
    with pytest.raises(SystemExit) as err:
        claims_main(["report", "--profile", "laptop"])
    assert err.value.code == 2


def test_every_row_names_its_strongest_controls():
    """Each row of the report says which positive control must pass, which negative must fail, and
    where the claim is about what fixed traces hold, the oracle that bounds them (its section of REPORT.md)."""
    for c in CLAIMS:
        assert "positive:" in c.controls and "negative:" in c.controls, c.key
    for key in ("recall_attribution", "time_map", "lag_equal_state"):        # about what the traces hold
        assert "oracle" in CLAIMS[key].controls, key
