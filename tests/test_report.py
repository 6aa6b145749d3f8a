"""The reproduction report from small fixture metrics: a claim that holds, one that fails,
one whose notebook has not run yet."""
from __future__ import annotations

import json

from paper_lib.pipeline.report import claims_table, render, update_readme, write_report


def _metrics(folder, notebook, **values):
    (folder / notebook).mkdir(parents=True)
    doc = {"profile": "cpu", "notebook": notebook, "git_commit": "abc",
           "metrics": {k: {"mean": v[0], "ci95": v[1], "n": 5} for k, v in values.items()}}
    (folder / notebook / "metrics.json").write_text(json.dumps(doc))


def test_report_holds_fails_and_missing(tmp_path):
    figures = tmp_path / "figures"
    _metrics(figures, "01_grammar_probe", spcn_probe_acc_A=(0.95, 0.01), spcn_over_bigru_A=(0.80, 0.02))
    _metrics(figures, "02_transfer", spcn_struct_acc_B=(0.90, 0.01), bigru_struct_acc_B=(0.70, 0.02),
             bigru_lexical_acc_A=(0.60, 0.2), spcn_lexical_acc_A=(0.55, 0.2))
    table = claims_table(figures).set_index("claim")
    holds = table["holds"]
    assert holds["SPCN role accuracy within Grammar A (zero labels, probe)"] == "yes"    # |0.95 - 0.96| <= 0.03
    assert holds["SPCN reaches 96% of the supervised BiGRU within A"] == "no"          # 0.80 < 0.85
    assert holds["SPCN beats the BiGRU on structure-dependent roles (on B)"] == "yes"  # CIs apart
    assert holds["BiGRU far ahead on content-dependent roles (within A)"] == "partly"  # ahead, CIs overlap
    assert holds["SPCN transfers A -> B (unseen vocabulary)"] == "metric missing: spcn_acc_B"
    assert holds["EMA-only SPEN vs Transformer perplexity gap (C4: 260 vs 33)"] == "not run yet"
    assert holds[
        "Predictor ablation: linear, linear attention, softmax attention give the same loss"] == "not run yet"
    assert "0.95 ± 0.01 (cpu, n=5)" in table.loc["SPCN role accuracy within Grammar A (zero labels, probe)", "ours"]
    md = render(claims_table(figures), "cpu")
    for line in md.splitlines():  # every table row has the same 6 cells (no stray "|")
        if line.startswith("| ") and "---" not in line:
            assert line.replace("\\|", "").count("|") == 7, line
    assert md.startswith("# Reproduction report (cpu profile)") and "not run yet: 2" in md


def test_write_report_and_readme_markers(tmp_path):
    (tmp_path / "README.md").write_text("intro\n<!-- report:start -->\nold\n<!-- report:end -->\nrest\n")
    _metrics(tmp_path / "figures", "03_spen_train", ppl_ratio=(8.1, 0.5), spen_val_ppl=(300.0, 10.0),
             transformer_val_ppl=(37.0, 2.0))
    path = write_report("cpu", root=tmp_path)
    assert path == tmp_path / "figures" / "REPORT.md"
    readme = (tmp_path / "README.md").read_text()
    assert "\nold\n" not in readme and readme.startswith("intro\n") and readme.endswith("rest\n")
    row = next(line for line in readme.splitlines() if "perplexity gap" in line)
    assert "8.1 ± 0.5" in row and row.rstrip("| ").endswith("yes")
    assert update_readme(tmp_path / "nope.md", claims_table(tmp_path / "figures")) is False
