"""Every numbered notebook runs end to end at the smoke profile and writes the metrics its claims
family lists (``paper_lib.claims.<family>.METRICS``), each of them with words; no table header it shows
names code (a figure that does stops the run at smoke: ``paper_lib.pipeline.figcheck``), and every figure
it saves is shown with its stem in the output's metadata."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

from paper_lib.claims.registry import CLAIMS, METRICS, NOT_AT_SMOKE
from paper_lib.pipeline.figcheck import code_names
from paper_lib.pipeline.provenance import output_dir
from paper_lib.pipeline.runner import run_notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.notebook
@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_at_smoke(source: Path):
    executed = run_notebook(source, "smoke")  # no wall-time assertion: timing is benchmarks'
    assert executed.is_file()
    metrics_path = output_dir(source.stem, "smoke") / "metrics.json"
    doc = json.loads(metrics_path.read_text())
    assert doc["profile"] == "smoke" and doc["notebook"] == source.stem
    written, labels = doc["metrics"], CLAIMS.labels
    for name in set(METRICS.get(source.stem, {})) - NOT_AT_SMOKE:  # a template: one metric of its family at least
        found = [k for k in written if k == name] if "{" not in name else [
            k for k in written if any(t == name and p.fullmatch(k) for t, p, _, _ in labels.templates)]
        assert found, f"{source.stem} did not write metric {name}"
        assert all(set(written[k]) >= {"mean", "ci95", "n"} for k in found)
    for c in (c for c in CLAIMS if c.notebook == source.stem):   # every metric a claim shows has words
        shown = [k for k in written if k in c.metrics or k.startswith((*c.prefixes, *c.shown))]
        assert [k for k in shown if not labels.has(k)] == [], f"claim {c.key} shows metrics without a label"
    nb = nbformat.read(executed, as_version=4)
    headers = {th.get_text(" ", strip=True) for cell in nb.cells for o in cell.get("outputs", [])
               for th in BeautifulSoup(o.get("data", {}).get("text/html", ""), "html.parser").find_all("th")}
    assert [h for h in headers if code_names(h)] == [], f"{source.stem}: a table header names code"
    figures = [o["metadata"]["figure"] for cell in nb.cells for o in cell.get("outputs", [])
               if "figure" in o.get("metadata", {})]
    saved = json.loads((metrics_path.parent / "figures.json").read_text())
    assert sorted(f["stem"] for f in figures) == sorted(saved)      # every saved figure shown, its stem beside it
