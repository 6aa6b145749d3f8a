"""The executed notebook as a reader gets it: tidy streams, numbered cells, and a self-contained HTML
rendering (what ``make all`` publishes beside the figures) that loads nothing from another host and folds
every code cell under "Show code". Our design: the paper is silent."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from .atomic import atomic_path

HTML_TAGS = {"remove_cell_tags": {"remove-cell"}, "remove_all_outputs_tags": {"remove-output"},
             "remove_input_tags": {"remove-input"}}
SAVE_CALL = re.compile(r"save_figure\(\s*\w+\s*,\s*[\"']([\w.-]+)[\"']")  # out.save_figure(fig, "name", ...)
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


def figure_alts(nb, figures_json: Path | None) -> dict[str, str]:
    """Base64 PNG data -> its ``alt`` in ``figures.json``: a code cell's images are matched, in order, with its
    ``save_figure(fig, "name", ...)`` calls, only where the counts agree. Our design."""
    if figures_json is None or not Path(figures_json).is_file():
        return {}
    index = json.loads(Path(figures_json).read_text(encoding="utf-8"))
    alts = {}
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        names = SAVE_CALL.findall(cell.source)
        images = [o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if names and len(names) == len(images):
            alts.update({img.strip(): index[n]["alt"] for n, img in zip(names, images, strict=True) if n in index})
    return alts


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
    """Write ``nb`` at ``path`` (returned) as one self-contained HTML page: no progress bars, alt texts from
    ``figures_json`` (:func:`figure_alts`), :func:`offline`, and without what the cell tags of :data:`HTML_TAGS`
    remove (a wall time, an absolute path), so a rerun with the same numbers writes the same HTML."""
    from bs4 import BeautifulSoup  # nbconvert's own dependency, which writes the generic alt
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        kept = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                out["text"] = "\n".join(ln for ln in out["text"].split("\n") if not HIDDEN_LINE.search(ln))
                if not out["text"].strip():
                    continue
            kept.append(out)
        cell["outputs"] = kept if cell.cell_type == "code" else cell.get("outputs", [])
        cell.get("metadata", {}).pop("papermill", None)
        cell.get("metadata", {}).pop("execution", None)
    exporter = HTMLExporter(embed_images=True)
    exporter.register_preprocessor(TagRemovePreprocessor(**HTML_TAGS), enabled=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    soup = BeautifulSoup(body, features="html.parser")
    alts = figure_alts(nb, figures_json)
    for img in soup.find_all("img"):
        data = img.get("src", "").removeprefix("data:image/png;base64,").strip()
        if data in alts:
            img["alt"] = alts[data]
    offline(soup)
    with atomic_path(path) as tmp:
        tmp.write_text(str(soup), encoding="utf-8")
    return path
