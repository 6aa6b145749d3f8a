"""The site's pages from a tiny fixture of executed notebooks: findings first, code folded,
parameters gone, anchors the results table links to, alt text (no browser; the build itself
needs the ``site`` extra and is skipped without it)."""
from __future__ import annotations

import io
import json
import re

import nbformat
import pytest

from paper_lib.claims.registry import CLAIMS, HEADLINE, PAPER_SUMMARY
from paper_lib.pipeline import site
from paper_lib.pipeline.report import claims_table


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
        one.outputs = [nbformat.v4.new_output("display_data", data={"image/png": _png("red"), "text/plain": "<Figure>"})]
        two = nbformat.v4.new_code_cell('out.save_figure(fa, "depth_panel")\nout.save_figure(fb, "dependency_panel")')
        two.outputs = [nbformat.v4.new_output("stream", name="stdout", text="two panels\n"),
                       nbformat.v4.new_output("display_data", data={"image/png": _png("blue")}),
                       nbformat.v4.new_output("display_data", data={"image/png": _png("green")})]
        md_out = nbformat.v4.new_code_cell('display(Markdown(table))')
        md_out.outputs = [nbformat.v4.new_output("display_data", data={
            "text/markdown": "| model | acc |\n|---|---|\n| BiGRU without <unk> training | 0.5 |"})]
        nb.cells = [nbformat.v4.new_markdown_cell(f"# Notebook {name}: a title\n\nThe paper claims X; `<unk>` "
                                                  "is the GRU's unknown word, and so is <unk>."),
                    params, injected, one, nbformat.v4.new_markdown_cell(
                        "## Panels\n\nRead by `paper_lib.probes.matched_filter_identity_accuracy_at_every_lag`."),
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
    assert f"**Verdict: {site.md_escape(recall['holds'])}.**" in first.source
    # the title moved into the findings; the intro keeps its text; `<unk>` in code stays, bare <unk> escaped
    assert nb.cells[1].source.startswith("## The experiment\n\nThe paper claims X")
    assert "`<unk>`" in nb.cells[1].source and r"so is \<unk\>." in nb.cells[1].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    sources = [c.source for c in code]
    assert not any("profile =" in s for s in sources)                    # both parameters cells removed
    assert sources[-1] == "display(Markdown(table))"                     # trailing empty cell removed
    assert all("hide-input" in c.metadata["tags"] or c.metadata["tags"] == ["remove-input"] for c in code)
    # one image, alt from figures.json; two images split into two cells, each with its stem in words
    alts = [c.metadata["mystnb"]["image"]["alt"] for c in code if "mystnb" in c.metadata]
    assert alts[0] == "Recall accuracy against the number of pairs, SPEN below the Transformer"
    assert alts[1].startswith("Depth panel, a figure of Notebook 05")
    assert alts[2].startswith("Dependency panel, a figure of Notebook 05")
    assert [o.output_type for o in code[1].outputs] == ["stream", "display_data"]
    assert code[2].metadata["tags"] == ["remove-input"] and len(code[2].outputs) == 1 and code[2].source
    assert r"without \<unk\> training" in code[-1].outputs[0]["data"]["text/markdown"]


def test_landing_page_one_row_per_claim_linking_anchors(tmp_path):
    _, figures = make_executed(tmp_path)
    rows = claims_table(figures, CLAIMS).to_dict("records")
    page = site.landing_page(rows, "cpu", "recall_by_pairs.png", "alt words", PAPER_SUMMARY, HEADLINE[0])
    table = [line for line in page.splitlines() if line.startswith("| [")]
    assert len(table) == len(CLAIMS)
    for line, claim in zip(table, CLAIMS, strict=True):
        assert f"](claim-{claim.key}) |" in line
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 5                  # claim | paper | ours | against | verdict
        assert cells[4].endswith(f"[^{claim.key}]")
        assert f"[^{claim.key}]: " in page
    assert "\\<unk\\>" in page and "<unk>" not in page.replace("\\<unk\\>", "")
    assert "![alt words](recall_by_pairs.png)" in page and "make all" in page and PAPER_SUMMARY in page
    assert f"From the notebook [{HEADLINE[0]}]({HEADLINE[0]}.ipynb)" in page      # no claim given: the notebook
    assert page.count("](claim-") == 2 * len(CLAIMS)            # what we find and the table: every claim
    linked = site.landing_page(rows, "cpu", "f.png", "alt", "", HEADLINE[0], "Recall against pairs", "recall")
    assert "*Recall against pairs.*" in linked and f"[{HEADLINE[0]}](claim-recall), where" in linked


def test_escapes_and_alt_fallbacks():
    assert site.md_escape("a | b <unk> $x$ *y*") == r"a \| b \<unk\> \$x\$ \*y\*"
    assert site.escape_tags("<b>bold</b> <unk> `<unk>`") == r"<b>bold</b> \<unk\> `<unk>`"
    assert site.stem_words("recall_by_pairs") == "Recall by pairs"
    assert site._alt_fixed('<img alt="_images/ab.png" src="x.png">', "Page") == '<img alt="A figure of Page" src="x.png">'
    assert site._alt_fixed('<img src="x.png">', "P") == '<img alt="A figure of P" src="x.png">'
    assert site._alt_fixed('<img alt="Recall" src="x.png">', "P") == '<img alt="Recall" src="x.png">'


def test_site_build_offline_and_replaces_docs(tmp_path):
    pytest.importorskip("jupyter_book", reason="the site extra is not installed (pip install -e '.[site]')")
    executed, figures = make_executed(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "stale.html").write_text("<script>var DOCUMENTATION_OPTIONS = {};</script>")  # an earlier build's page
    site.build("cpu", CLAIMS, root=tmp_path, out=docs, executed=executed, figures=figures, headline=HEADLINE,
               summary=PAPER_SUMMARY)
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
    assert re.search(r'alt="Not a result: [^"]*Recall accuracy against the number of pairs', page)  # recall_attribution undecided
    alts = re.findall(r'<img\b[^>]*\balt="([^"]*)"', page)                   # every image, each with its alt
    assert [a.split(". ")[-1].split(",")[0] for a in alts] == ["Recall accuracy against the number of pairs", "Depth panel",
                                               "Dependency panel"]
    assert not [t for t in re.findall(r"<img\b[^>]*>", page) if not re.search(r'alt="[^"]+"', t)]


def test_a_claims_heading_is_its_first_clause_and_the_claim_follows():
    assert site.claim_heading("SPCN on deep embedding: its accuracy falls") == "SPCN on deep embedding"
    assert site.claim_heading("Predictor ablation: linear, softmax give the same loss") == \
        "Predictor ablation: linear, softmax give the same loss"            # 2 words before ':' make no heading
    assert site.claim_heading(" ".join(["w"] * 30)) == " ".join(["w"] * 16) + " …"
    page = site.findings_markdown("T", [{"key": "k", "claim": "Short claim here now: then much more", "holds": "yes",
                                         "paper": "1", "headline": "2", "versus": "3", "ours": "", "why": "",
                                         "rule": ""}])
    assert "### Short claim here now\n\n*Claim:* Short claim here now: then much more." in page
