"""A figure says on its face what its claim's verdict makes of it: the band's words from the verdict (one
wording), the band drawn above the published PNG once (and replaced, never stacked), ``figures.json`` saying
which, the notebook's HTML and the site showing that PNG."""
from __future__ import annotations

import base64
import hashlib
import io
import json

import nbformat
from PIL import Image

from paper_lib.claims.registry import CLAIMS
from paper_lib.pipeline import site
from paper_lib.pipeline.marks import figure_marks, mark_figures, mark_png
from paper_lib.pipeline.render import finish_page
from paper_lib.pipeline.report import claims_table
from paper_lib.pipeline.verdicts import Kind, mark_text


def _png(w: int = 300, h: int = 200) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (255, 255, 255)).save(buf, format="PNG", pnginfo=_info())
    return buf.getvalue()


def _info():
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Description", '{"git_commit": "abc"}')
    return info


def test_the_words_follow_the_verdict():
    assert mark_text(Kind.YES) == mark_text(Kind.NO) == ""                     # decided: no band
    assert mark_text(Kind.PARTLY) == "The claim holds only in part"
    assert mark_text(Kind.NOT_INFORMATIVE).startswith("Not informative at this budget")
    assert mark_text(Kind.NOT_LEARNING, "reproduced") == (
        "The number matches the paper's; a control without learning reaches it too")
    assert mark_text(Kind.NOT_CONTEXT, "not reproduced").startswith("The number is ours;")
    assert "not informative" not in mark_text(Kind.NOT_LEARNING, "reproduced").lower()  # only for undecided
    for kind in (Kind.NOT_ATTRIBUTABLE, Kind.UNDETERMINED, Kind.MISSING, Kind.NOT_RUN):
        assert mark_text(kind)
    assert Kind.of("metric missing: a, b") is Kind.MISSING and Kind.of("yes").decided


def test_a_figure_of_several_claims_takes_the_first_mark():
    rows = [{"key": "a", "holds": "yes"}, {"key": "b", "holds": "undetermined"},
            {"key": "c", "holds": "the number; not attributable to learning", "number": "reproduced"}]
    marks = figure_marks(rows, {"a": ("shared", "only_a"), "b": ("shared",), "c": ("learning",)})
    assert marks == {"shared": mark_text(Kind.UNDETERMINED), "learning": mark_text(Kind.NOT_LEARNING, "reproduced")}


def test_the_band_sits_above_the_image_keeps_its_stamp_and_comes_off():
    data, band = mark_png(_png(), "The claim holds only in part")
    out = Image.open(io.BytesIO(data))
    assert out.width == 300 and out.height == 200 + band and band >= 14
    strip = out.convert("RGB").crop((0, 0, 300, band))
    assert any(c[0] > 100 and c[1] < 60 for _, c in strip.getcolors(300 * 100))      # dark red text in the band
    assert out.convert("RGB").crop((0, band, 300, out.height)).getcolors() == [(300 * 200, (255, 255, 255))]
    assert out.info["Description"] == '{"git_commit": "abc"}'                          # the provenance stamp kept
    bare, none = mark_png(data, "", crop=band)
    assert none == 0 and Image.open(io.BytesIO(bare)).size == (300, 200)


def _published(tmp_path):
    folder = tmp_path / "05_x"
    folder.mkdir()
    (folder / "recall.png").write_bytes(_png())
    (folder / "other.png").write_bytes(_png())
    (folder / "figures.json").write_text(json.dumps({"recall": {"alt": "Recall, a figure", "title": "R"},
                                                     "other": {"alt": "Other", "title": "O",
                                                               "verdict": "not informative at this budget"}}))
    stamp = {"git_commit": "abc", "sha256": "old"}
    (folder / "provenance.json").write_text(json.dumps({"recall.png": stamp, "other.png": stamp, "05_x.html": stamp}))
    src = "data:image/png;base64," + base64.b64encode(_png()).decode()
    (folder / "05_x.html").write_text(f'<div class="jp-Cell"><h1>05 · Title</h1></div><p>x</p>'
                                      f'<img alt="Recall, a figure" data-figure="recall" src="{src}"/>'
                                      f'<img alt="Other" data-figure="other" src="{src}"/><img alt="plain" src="{src}"/>')
    return folder


def test_the_report_marks_the_published_png_once_and_replaces_a_changed_mark(tmp_path):
    folder = _published(tmp_path)
    first = mark_text(Kind.UNDETERMINED)
    assert mark_figures(folder, {"recall": first}) == ["recall", "other"]          # other: its own verdict
    meta = json.loads((folder / "figures.json").read_text())
    assert meta["recall"]["mark"] == first and meta["other"]["mark"] == mark_text(Kind.NOT_INFORMATIVE)
    png = (folder / "recall.png").read_bytes()
    assert Image.open(io.BytesIO(png)).size == (300, 200 + meta["recall"]["band"])
    stamps = json.loads((folder / "provenance.json").read_text())
    assert stamps["recall.png"] == {"git_commit": "abc", "sha256": hashlib.sha256(png).hexdigest()}
    assert mark_figures(folder, {"recall": first}) == []                           # marked before: left as it is
    assert mark_figures(folder, {}) == ["recall"]                                  # decided now: the band comes off
    assert Image.open(folder / "recall.png").size == (300, 200)
    assert "mark" not in json.loads((folder / "figures.json").read_text())["recall"]
    assert mark_figures(tmp_path / "none", {}) == []


def test_the_html_opens_with_the_findings_and_shows_the_published_pngs(tmp_path):
    folder = _published(tmp_path)
    mark_figures(folder, {"recall": mark_text(Kind.PARTLY)})
    meta = json.loads((folder / "figures.json").read_text())
    row = {"key": "k", "name": "Short", "claim": "The whole claim", "number": "", "says": "holds in part",
           "paper": "beyond the paper", "headline": "0.5 ± 0.1 (x)", "versus": "0.2 ± 0.1 (y)", "why": "w", "rule": "r"}
    from paper_lib.claims.__main__ import findings_html
    assert finish_page(folder / "05_x.html", meta, findings_html([row]))
    page = (folder / "05_x.html").read_text()
    assert page.index("05 · Title") < page.index('id="findings"') < page.index("<p>x</p>")   # after the title
    assert 'id="claim-k"' in page and "holds in part" in page
    assert f'alt="{mark_text(Kind.PARTLY)}. Recall, a figure"' in page and 'alt="plain"' in page
    shown = base64.b64decode(page.split('data-figure="recall" src="data:image/png;base64,')[1].split('"')[0])
    assert shown == (folder / "recall.png").read_bytes()                           # the published PNG, band and all
    assert not finish_page(folder / "05_x.html", meta, findings_html([row]))       # once: the findings replaced


def test_the_site_page_shows_the_published_figure_with_its_alt_text(tmp_path):
    from test_site import make_executed

    executed, figures = make_executed(tmp_path)
    mark_figures(figures / "05_associative_recall", {"recall_by_pairs": mark_text(Kind.NOT_ATTRIBUTABLE)})
    rows = claims_table(figures, CLAIMS).to_dict("records")
    name = "05_associative_recall"
    nb = nbformat.read(executed / f"{name}.ipynb", as_version=4)
    page = site.prepare_notebook(nb, [r for r in rows if r["notebook"] == name], figures, name, "")
    cell = next(c for c in page.cells if c.cell_type == "code" and "recall_by_pairs" in c.source)
    assert cell.metadata["mystnb"]["image"]["alt"].startswith(mark_text(Kind.NOT_ATTRIBUTABLE))
    shown = base64.b64decode(cell.outputs[0]["data"]["image/png"])
    assert shown == (figures / name / "recall_by_pairs.png").read_bytes()
