"""The site's pages from a tiny fixture of executed notebooks: findings first, code folded,
parameters gone, anchors the results table links to, alt text (no browser; the build itself
needs the ``site`` extra and is skipped without it)."""
from __future__ import annotations

import io
import json
import re

import nbformat
import pytest
from bs4 import BeautifulSoup

from paper_lib.claims.registry import CLAIMS, HEADLINE, PAPER_SUMMARY
from paper_lib.pipeline import site
from paper_lib.pipeline.marks import mark_figures
from paper_lib.pipeline.report import _md_cell, claims_table
from paper_lib.pipeline.verdicts import Kind, mark_text


def _png(color: str) -> str:
    """A small PNG (base64) drawn by matplotlib, as a notebook's image output holds it."""
    import base64

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
    ax.plot([0, 1], [0, 1], color=color)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _figure(stem: str, color: str, alt: str):
    """An image output as ``Outputs.save_figure`` leaves it: the PNG, its stem and alt text in its metadata."""
    return nbformat.v4.new_output("display_data", data={"image/png": _png(color), "text/plain": "<Image>"},
                                  metadata={"figure": {"stem": stem, "alt": alt}})


def make_executed(root):
    """``root/executed/<nb>.ipynb`` for every notebook of the report's claims (as papermill leaves
    them: a title, the parameters and injected-parameters cells, code with outputs, a trailing
    empty cell), their sources ``root/notebooks/<nb>.py`` and ``root/figures`` with one
    ``metrics.json``, a ``figures.json`` and the headline PNG. Returns ``(executed, figures)``."""
    executed, figures = root / "executed", root / "figures"
    executed.mkdir(parents=True)
    (root / "notebooks").mkdir(exist_ok=True)
    notebooks = sorted({c.notebook for c in CLAIMS})
    for name in notebooks:
        nb = nbformat.v4.new_notebook()
        params = nbformat.v4.new_code_cell('profile = "cpu"\noverrides = {}')
        params.metadata["tags"] = ["parameters"]
        injected = nbformat.v4.new_code_cell('# Parameters\nprofile = "cpu"\n')
        injected.metadata["tags"] = ["injected-parameters"]
        one = nbformat.v4.new_code_cell('fig = plot()\nout.save_figure(fig, "recall_by_pairs")')
        one.outputs = [_figure("recall_by_pairs", "red", "Recall, as the notebook saw it")]
        two = nbformat.v4.new_code_cell('out.save_figure(fa, "depth_panel")\nout.save_figure(fb, "dependency_panel")')
        two.outputs = [nbformat.v4.new_output("stream", name="stdout", text="two panels\n"),
                       nbformat.v4.new_output("stream", name="stderr", text="runs: 100%|#####| 4/4 [00:01<00:00, 2.1it/s]\n"),
                       _figure("depth_panel", "blue", "Depth panel, accuracy by depth"),
                       nbformat.v4.new_output("display_data", data={"image/png": _png("green")})]
        md_out = nbformat.v4.new_code_cell('display(Markdown(table))')
        md_out.outputs = [nbformat.v4.new_output("display_data", data={
            "text/markdown": "| model | acc |\n|---|---|\n| BiGRU without <unk> training | 0.5 |"})]
        nb.cells = [nbformat.v4.new_markdown_cell(f"# Notebook {name}: a title\n\nThe paper claims X; `<unk>` "
                                                  "is the GRU's unknown word, and so is <unk>."),
                    params, injected, one, nbformat.v4.new_markdown_cell(
                        "## Panels\n\nRead by `paper_lib.probes.matched_filter_identity_accuracy_at_every_lag`; "
                        "the trace is $h_t = (1 - \\alpha) h_{t-1} + \\alpha x_t$."),
                    two, md_out,
                    nbformat.v4.new_code_cell("")]
        nbformat.write(nb, executed / f"{name}.ipynb")
        (root / "notebooks" / f"{name}.py").write_text('# %% tags=["parameters"]\nprofile = "cpu"\n', encoding="utf-8")
        (figures / name).mkdir(parents=True)
    doc = {"profile": "cpu", "git_commit": "abc123", "notebook": "05_associative_recall",
           "metrics": {"recall_acc_spen_8": {"mean": 0.25, "ci95": 0.05, "n": 3},
                       "recall_acc_transformer_8": {"mean": 0.99, "ci95": 0.01, "n": 3}}}
    (figures / "05_associative_recall" / "metrics.json").write_text(json.dumps(doc))
    (figures / "05_associative_recall" / "figures.json").write_text(json.dumps(
        {"recall_by_pairs": {"alt": "Recall accuracy against the number of pairs, SPEN below the Transformer",
                             "title": "Recall by pairs"}}))
    import base64
    (figures / "05_associative_recall" / "recall_by_pairs.png").write_bytes(base64.b64decode(_png("black")))
    return executed, figures


def test_prepared_page_findings_first_code_hidden_anchors(tmp_path):
    executed, figures = make_executed(tmp_path)
    rows = claims_table(figures, CLAIMS).to_dict("records")
    assert [r["key"] for r in rows] == [c.key for c in CLAIMS]
    name = "05_associative_recall"
    mine = [r for r in rows if r["notebook"] == name]
    assert [r["key"] for r in mine] == ["recall", "recall_attribution"]
    recall = mine[0]
    assert recall["headline"] == "0.25 ± 0.05 (SPEN recall, N=8)"         # the report's one number per cell
    nb = site.prepare_notebook(nbformat.read(executed / f"{name}.ipynb", 4), mine, figures, name, "run note")
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert first.source.startswith(f"# Notebook {name}: a title\n\n## Findings")
    assert "(claim-recall)=" in first.source and "(claim-recall_attribution)=" in first.source
    assert first.source.index("(claim-recall)=") < first.source.index("(claim-recall_attribution)=")
    assert f"**What the controls say:** {site.md_escape(recall['says'])}." in first.source
    # the title moved into the findings; the intro keeps its text; `<unk>` in code stays, bare <unk> escaped
    assert nb.cells[1].source.startswith("## The experiment\n\nThe paper claims X")
    assert "`<unk>`" in nb.cells[1].source and r"so is \<unk\>." in nb.cells[1].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    sources = [c.source for c in code]
    assert not any("profile =" in s for s in sources)                    # both parameters cells removed
    assert sources[-1] == "display(Markdown(table))"                     # trailing empty cell removed
    assert all("hide-input" in c.metadata["tags"] or c.metadata["tags"] == ["remove-input"] for c in code)
    # one image, alt from figures.json; two images split into two cells: the output's own alt text, else the title
    alts = [c.metadata["mystnb"]["image"]["alt"] for c in code if "mystnb" in c.metadata]
    assert alts[0] == "Recall accuracy against the number of pairs, SPEN below the Transformer"
    assert alts[1] == "Depth panel, accuracy by depth"
    assert alts[2] == f"A figure of Notebook {name}: a title"
    assert [o.output_type for o in code[1].outputs] == ["stream", "display_data"]        # the progress bar dropped
    assert code[2].metadata["tags"] == ["remove-input"] and len(code[2].outputs) == 1 and code[2].source
    assert r"without \<unk\> training" in code[-1].outputs[0]["data"]["text/markdown"]


def test_landing_page_summary_first_every_claim_once_linking_anchors(tmp_path):
    _, figures = make_executed(tmp_path)
    table = claims_table(figures, CLAIMS)
    page = site.landing_page(table, "cpu", "recall_by_pairs.png", "alt words", PAPER_SUMMARY, HEADLINE[0],
                             adds="What we add.", cite="@misc{x}")
    rows = [line for line in page.splitlines() if line.startswith("| [")]
    assert len(rows) == len(CLAIMS)                              # the paper's numbers, then every other claim
    numbered = [c for c in CLAIMS if c.paper_value is not None]
    assert [c.key for c in numbered] == ["within_A", "transfer_B", "deep", "ppl_gap", "ablation"]
    for line, claim in zip(rows, [*numbered, *(c for c in CLAIMS if c.paper_value is None)], strict=True):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert cells[0] == f"[{_md_cell(claim.name)}](claim-{claim.key})"
        assert len(cells) == (6 if claim.paper_value is not None else 5)
    assert page.index("## What the paper claims") < page.index("## Summary of results") < page.index("What we add.")
    assert page.index(":::{container} cards numbers") < page.index("What we add.") < page.index(
        ":::{container} cards findings")
    assert "*not run yet*" not in page and "![alt words](recall_by_pairs.png)" in page and "make all" in page
    assert PAPER_SUMMARY in page and "```bibtex\n@misc{x}\n```" in page
    assert f"From the notebook [{HEADLINE[0]}]({HEADLINE[0]}.ipynb)" in page      # no claim given: the notebook
    linked = site.landing_page(table, "cpu", "f.png", "alt", "", HEADLINE[0], "Recall against pairs", "recall")
    assert "*Recall against pairs.*" in linked and f"[{HEADLINE[0]}](claim-recall), where" in linked


def test_phone_cards_label_each_cell_with_its_column():
    css = site.cards_css({"numbers": ["result", "paper", "ours"]})
    assert css.startswith("@media (max-width: 720px)") and ".cards thead { display: none; }" in css
    assert '.numbers td:nth-of-type(2)::before { content: "paper: ";' in css and "nth-of-type(1)" not in css


def test_escapes():
    assert site.md_escape("a | b <unk> $x$ *y*") == r"a \| b \<unk\> \$x\$ \*y\*"
    assert site.escape_tags("<b>bold</b> <unk> `<unk>`") == r"<b>bold</b> \<unk\> `<unk>`"


def test_site_build_offline_and_replaces_docs(tmp_path):
    pytest.importorskip("jupyter_book", reason="the site extra is not installed (pip install -e '.[site]')")
    executed, figures = make_executed(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "stale.html").write_text("<script>var DOCUMENTATION_OPTIONS = {};</script>")  # an earlier build's page
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "faults.md").write_text("# Faults: what the pipeline promises\n\nOne line each.\n")
    mark_figures(figures / "05_associative_recall", {"recall_by_pairs": mark_text(Kind.NOT_INFORMATIVE)})
    site.build("cpu", CLAIMS, root=tmp_path, out=docs, executed=executed, figures=figures, headline=HEADLINE,
               summary=PAPER_SUMMARY, cite="@misc{x}")
    assert not (docs / "stale.html").exists() and (docs / ".nojekyll").exists()
    pages = sorted(p.name for p in docs.glob("[0-9][0-9]_*.html"))
    assert pages == [f"{n}.html" for n in sorted({c.notebook for c in CLAIMS})]
    assert site.remote_assets(docs) == []
    assert not list(docs.rglob("fontawesome.js*"))                         # the theme's 1.5 MB icon script: gone
    assert not [p for p in docs.rglob("*.html") if "fontawesome.js" in p.read_text()]
    assert ".fa-bars::before" in (docs / "_static" / "icons.css").read_text()                  # its icons, drawn
    index = (docs / "index.html").read_text()
    assert "narrow.css" in index and "overflow-wrap: anywhere" in (docs / "_static" / "narrow.css").read_text()
    assert 'href="05_associative_recall.html#claim-recall"' in index
    page = (docs / "05_associative_recall.html").read_text()
    assert 'id="claim-recall"' in page and 'id="claim-recall-attribution"' in page
    assert page.index('id="findings"') < page.index("hide-input")
    soup = BeautifulSoup(page, features="html.parser")
    alts = [img.get("alt", "") for img in soup.select("article img")]           # every image, each with its alt
    assert alts == [f"{mark_text(Kind.NOT_INFORMATIVE)}. Recall accuracy against the number of pairs, SPEN below "
                    "the Transformer", "Depth panel, accuracy by depth", "A figure of Notebook 05_associative_recall: a title"]
    assert all(img.find_parent("a", class_="full-size") for img in soup.select("article img"))  # tap: full size
    assert soup.find("math") is not None and "h_{t-1}" not in soup.get_text()        # the formula as MathML
    assert "THEBE_JS_URL" not in page and "unpkg" not in page
    assert (docs / "faults.html").exists() and 'href="faults.html"' in index          # the guide, a page of the site


def test_a_claims_heading_is_its_short_name_and_the_claim_follows():
    page = site.findings_markdown("T", [{"key": "k", "name": "Short claim", "claim": "Short claim: then much more",
                                         "holds": "yes", "says": "holds", "number": "", "paper": "1", "headline": "2",
                                         "versus": "3", "ours": "", "why": "", "rule": ""}])
    assert "### Short claim\n\n*Claim:* Short claim: then much more." in page and "**What the controls say:** holds." in page
