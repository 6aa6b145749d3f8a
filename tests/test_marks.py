"""A figure of an undecided claim says so on its face: the band text from the verdict, the band
drawn above the image, and the site's pages carrying it (image bytes and alt text)."""
from __future__ import annotations

import base64
import hashlib
import io
import json

import nbformat
from PIL import Image

from paper_lib.claims.registry import CLAIMS
from paper_lib.pipeline import site
from paper_lib.pipeline.marks import MARK_PREFIX, figure_marks, mark_png, mark_published, mark_text
from paper_lib.pipeline.report import claims_table


def _png(w: int = 300, h: int = 200) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (255, 255, 255)).save(buf, format="PNG")
    return buf.getvalue()


def test_only_decided_verdicts_go_unmarked():
    assert mark_text("yes") == mark_text("partly") == mark_text("no") == ""
    for holds in ("not informative at this budget", "undetermined", "the number; not attributable to learning",
                  "not run yet", "metric missing: x"):
        assert mark_text(holds).startswith(MARK_PREFIX) and holds in mark_text(holds)


def test_a_figure_of_several_claims_is_marked_when_one_is_undecided():
    rows = [{"key": "a", "holds": "yes"}, {"key": "b", "holds": "undetermined"}]
    marks = figure_marks(rows, {"a": ("shared", "only_a"), "b": ("shared",)})
    assert set(marks) == {"shared"} and "undetermined" in marks["shared"]


def test_the_band_sits_above_the_image_and_keeps_it():
    out = Image.open(io.BytesIO(mark_png(_png(), "Not a result: the claim reads “undetermined”")))
    assert out.width == 300 and out.height > 200 + 14
    band = out.crop((0, 0, 300, out.height - 200)).convert("RGB")
    assert any(c[0] > 100 and c[1] < 60 for _, c in band.getcolors(300 * 100))    # dark red text in the band
    assert out.crop((0, out.height - 200, 300, out.height)).getcolors() == [(300 * 200, (255, 255, 255))]


def test_the_page_shows_the_saved_figure_marked(tmp_path):
    from test_site import make_executed

    executed, figures = make_executed(tmp_path)
    rows = claims_table(figures, CLAIMS).to_dict("records")
    name = "05_associative_recall"
    mine = [r for r in rows if r["notebook"] == name]
    nb = nbformat.read(executed / f"{name}.ipynb", as_version=4)
    claim_figures = {c.key: c.figures for c in CLAIMS if c.notebook == name}
    page = site.prepare_notebook(nb, mine, figures, name, "", claim_figures)
    cell = next(c for c in page.cells if c.cell_type == "code" and "recall_by_pairs" in c.source)
    holds = {r["key"]: r["holds"] for r in mine}
    assert holds["recall"] == "yes" and holds["recall_attribution"] not in ("yes", "partly", "no")
    assert cell.metadata["mystnb"]["image"]["alt"].startswith(MARK_PREFIX)
    shown = Image.open(io.BytesIO(base64.b64decode(cell.outputs[0]["data"]["image/png"])))
    saved = Image.open(figures / name / "recall_by_pairs.png")
    assert shown.width == saved.width and shown.height > saved.height            # the saved PNG, with its band
    unmarked = site.prepare_notebook(nb, [{**r, "holds": "yes"} for r in mine], figures, name, "", claim_figures)
    cell = next(c for c in unmarked.cells if c.cell_type == "code" and "recall_by_pairs" in c.source)
    assert not cell.metadata["mystnb"]["image"]["alt"].startswith(MARK_PREFIX)
    assert base64.b64decode(cell.outputs[0]["data"]["image/png"]) == (figures / name / "recall_by_pairs.png").read_bytes()


def test_the_published_html_marks_an_undecided_claims_figure_once(tmp_path):
    folder = tmp_path / "05_x"
    folder.mkdir()
    src = "data:image/png;base64," + base64.b64encode(_png()).decode()
    (folder / "05_x.html").write_text(f'<p>x</p><img alt="Recall, a figure" src="{src}"/><img alt="Other" src="{src}"/>')
    (folder / "figures.json").write_text(json.dumps({"recall": {"alt": "Recall, a figure"}, "o": {"alt": "Other"}}))
    (folder / "provenance.json").write_text(json.dumps({"05_x.html": {"git_commit": "abc", "sha256": "old"}}))
    rows = [{"notebook": "05_x", "key": "k", "holds": "not informative at this budget"},
            {"notebook": "05_y", "key": "j", "holds": "not informative at this budget"}]
    assert mark_published(folder, rows, {"k": ("recall",), "j": ("o",)})       # 05_y's claim marks nothing here
    page = (folder / "05_x.html").read_text()
    band = mark_text("not informative at this budget")
    assert f'alt="{band}. Recall, a figure"' in page and 'alt="Other"' in page
    marked = base64.b64decode(page.split('src="data:image/png;base64,')[1].split('"')[0])
    assert Image.open(io.BytesIO(marked)).size[1] > 200                         # the band above the image
    stamp = json.loads((folder / "provenance.json").read_text())["05_x.html"]
    assert stamp == {"git_commit": "abc", "sha256": hashlib.sha256(page.encode()).hexdigest()}
    assert not mark_published(folder, rows, {"k": ("recall",)})                 # marked before: left as it is
    assert not mark_published(tmp_path / "none", rows, {})
