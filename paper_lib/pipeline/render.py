"""The executed notebook as a reader gets it: tidy streams, numbered cells, and a self-contained HTML
rendering (what ``make all`` publishes beside the figures) that loads nothing from another host and folds
every code cell under "Show code". Our design: the paper is silent."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from .atomic import atomic_path
from .markdown import dollars_to_mathml

HTML_TAGS = {"remove_cell_tags": {"remove-cell"}, "remove_all_outputs_tags": {"remove-output"},
             "remove_input_tags": {"remove-input"}}
# a stderr line the HTML leaves out: a tqdm bar's tail, [00:01<00:02, 1.2it/s], or a cleared bar (leave=False)
HIDDEN_LINE = re.compile(r"\[[\d:]+(?:<[\d:?]+)?, [^\]]*\]\s*$|^\s*\r\s*$")


def number_cells(nb) -> None:
    """Give the cells of ``nb`` the ids ``cell-000``, ``cell-001``, ... (not random ones, which the HTML shows)."""
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"


def tidy(nb):
    """``nb`` with consecutive outputs of one stream joined, each line as a terminal shows it (a tqdm bar's last
    redraw only: nbconvert's ``CoalesceStreamsPreprocessor``), and cells numbered."""
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    nb, _ = CoalesceStreamsPreprocessor().preprocess(nb, {})
    number_cells(nb)
    return nb


def drop_bars(nb) -> None:
    """Remove from ``nb``'s stderr outputs the lines that are progress bars (:data:`HIDDEN_LINE`), and an output
    left empty."""
    for cell in nb.cells:
        kept = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                out["text"] = "\n".join(ln for ln in out["text"].split("\n") if not HIDDEN_LINE.search(ln))
                if not out["text"].strip():
                    continue
            kept.append(out)
        if cell.cell_type == "code":
            cell["outputs"] = kept


def figure_stem(output) -> str | None:
    """The stem of the figure an image ``output`` shows (its ``figure`` metadata, from ``Outputs.save_figure``)."""
    return (output.get("metadata", {}).get("figure") or {}).get("stem")


def finish_page(page: Path, meta: dict, findings: str = "") -> bool:
    """Open the published ``page`` (a notebook's HTML) with ``findings`` (a ``<section id="findings">``, replacing
    one there) right after its title, and show each figure's published PNG beside it (``<img data-figure=stem>``)
    with the alt text of its ``figures.json`` entry in ``meta`` (band first). Returns whether the page changed."""
    import base64

    from bs4 import BeautifulSoup  # nbconvert's own dependency

    from .marks import figure_alt

    if not page.is_file():
        return False
    old = page.read_text(encoding="utf-8")
    soup = BeautifulSoup(old, features="html.parser")
    for img in soup.find_all("img", attrs={"data-figure": True}):
        png = page.parent / f"{img['data-figure']}.png"
        if png.is_file():
            img["src"] = "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode()
            img["alt"] = figure_alt(meta.get(img["data-figure"], {}), img.get("alt", "A figure"))
    if findings:
        for section in soup.select("section#findings"):
            section.decompose()
        title, new = soup.find("h1"), BeautifulSoup(findings, features="html.parser")
        if title is not None:                      # before the notebook's own introduction, as on the site
            title.insert_after(new)
        elif soup.body is not None:
            soup.body.insert(0, new)
    if str(soup) == old:
        return False
    with atomic_path(page) as tmp:
        tmp.write_text(str(soup), encoding="utf-8")
    return True


def offline(soup) -> None:
    """Remove from nbconvert's page ``soup`` every script that loads from another host (require.js, MathJax,
    Mermaid: a formula shows as its TeX) and fold each code cell's input into ``<details>``. Our design."""
    for script in soup.find_all("script"):
        if script.get("src") or script.get("type") == "text/x-mathjax-config" or "://" in script.get_text():
            script.decompose()
    for wrapper in soup.select(".jp-CodeCell > .jp-Cell-inputWrapper"):
        details = soup.new_tag("details", attrs={"class": "jp-Cell-inputDetails"})
        wrapper.wrap(details)
        details.insert(0, soup.new_tag("summary", string="Show code"))


def render_html(nb, path: Path, title: str, figures_json: Path | None = None) -> Path:
    """Write ``nb`` at ``path`` (returned) as one self-contained HTML page: no progress bars, each figure's image
    named by its stem (``data-figure``) with its alt text from ``figures_json``, :func:`offline`, and without what
    the cell tags of :data:`HTML_TAGS` remove (a wall time, an absolute path), so a rerun with the same numbers
    writes the same HTML."""
    from bs4 import BeautifulSoup  # nbconvert's own dependency, which writes the generic alt
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    nb = copy.deepcopy(nb)
    drop_bars(nb)
    images = {}  # base64 PNG -> the figure it shows
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = dollars_to_mathml(cell.source)
        for out in cell.get("outputs", []):
            if (stem := figure_stem(out)) and "image/png" in out.get("data", {}):
                images[out["data"]["image/png"].strip()] = stem
        cell.get("metadata", {}).pop("papermill", None)
        cell.get("metadata", {}).pop("execution", None)
    exporter = HTMLExporter(embed_images=True)
    exporter.register_preprocessor(TagRemovePreprocessor(**HTML_TAGS), enabled=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    soup = BeautifulSoup(body, features="html.parser")
    known = figures_json and Path(figures_json).is_file()
    meta = json.loads(Path(figures_json).read_text(encoding="utf-8")) if known else {}
    for img in soup.find_all("img"):
        if stem := images.get(img.get("src", "").removeprefix("data:image/png;base64,").strip()):
            img["data-figure"] = stem
            img["alt"] = str(meta.get(stem, {}).get("alt") or img.get("alt", ""))
    offline(soup)
    with atomic_path(path) as tmp:
        tmp.write_text(str(soup), encoding="utf-8")
    return path
