"""The executed notebook as a reader gets it: tidy streams, numbered cells, and a self-contained
HTML rendering (what ``make all`` publishes beside the figures): no script from another host
(nbconvert's template loads require.js, MathJax and Mermaid from a CDN; none is needed for text,
tables and images, and a formula shows as its TeX source), and every code cell folded under
"Show code". Our design: the paper is silent."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from .atomic import atomic_path

HTML_TAGS = {"remove_cell_tags": {"remove-cell"}, "remove_all_outputs_tags": {"remove-output"},
             "remove_input_tags": {"remove-input"}}
SAVE_CALL = re.compile(r"save_figure\(\s*\w+\s*,\s*[\"']([\w.-]+)[\"']")  # out.save_figure(fig, "name", ...)
PROGRESS_LINE = re.compile(r"\[[\d:]+(?:<[\d:?]+)?, [^\]]*\]\s*$")  # the tail of a tqdm bar: [00:01<00:02, 1.2it/s]


def number_cells(nb) -> None:
    """Give the cells of ``nb`` the ids ``cell-000``, ``cell-001``, ... (jupytext and papermill draw
    random ones, which the HTML would show)."""
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"


def tidy(nb):
    """The executed notebook as a reader wants it: consecutive outputs of one stream joined and
    each line as a terminal shows it after its carriage returns (a tqdm bar's last redraw, not
    every redraw: nbconvert's ``CoalesceStreamsPreprocessor``), and cells numbered. Returns ``nb``."""
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    nb, _ = CoalesceStreamsPreprocessor().preprocess(nb, {})
    number_cells(nb)
    return nb


def _hidden(line: str) -> bool:
    """A stderr line the HTML leaves out: a progress bar, or a bar that cleared itself (``leave=False``)."""
    return bool(PROGRESS_LINE.search(line)) or ("\r" in line and not line.replace("\r", "").strip())


def figure_alts(nb, figures_json: Path | None) -> dict[str, str]:
    """The alt text of each figure image in ``nb``: base64 PNG data -> the ``alt`` that
    ``figures.json`` (written by :meth:`~paper_lib.pipeline.provenance.Outputs.save_figure`) holds
    for it. A code cell's images are matched, in order, with the names of its
    ``save_figure(fig, "name", ...)`` calls, only where the counts agree (a cell that shows a
    figure it does not save keeps nbconvert's generic text). Our design."""
    if figures_json is None or not Path(figures_json).is_file():
        return {}
    index = json.loads(Path(figures_json).read_text(encoding="utf-8"))
    alts = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        names = SAVE_CALL.findall(cell.source)
        images = [o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if names and len(names) == len(images):
            alts.update({img.strip(): index[n]["alt"] for n, img in zip(names, images, strict=True) if n in index})
    return alts


def offline(soup) -> None:
    """Make nbconvert's page ``soup`` (BeautifulSoup) read offline and tell no other host: remove every
    script that loads from elsewhere (``src``, or an ``import`` of a URL: require.js, MathJax,
    Mermaid) and MathJax's configuration; fold each code cell's input into ``<details>`` ("Show
    code"), as the site does. Our design."""
    for script in soup.find_all("script"):
        if script.get("src") or script.get("type") == "text/x-mathjax-config" or "://" in script.get_text():
            script.decompose()
    for wrapper in soup.select(".jp-CodeCell > .jp-Cell-inputWrapper"):
        details = soup.new_tag("details", attrs={"class": "jp-Cell-inputDetails"})
        summary = soup.new_tag("summary")
        summary.string = "Show code"
        wrapper.wrap(details)
        details.insert(0, summary)


def render_html(nb, path: Path, title: str, figures_json: Path | None = None) -> Path:
    """Write the executed notebook ``nb`` as one self-contained HTML file (code, outputs, images
    embedded), without progress bars, whose timings change from run to run; returns ``path``.

    ``figures_json`` (the run's ``figures.json``) gives each saved figure's image its alt text
    (:func:`figure_alts`) instead of nbconvert's "No description has been provided". The page loads
    nothing from another host and folds the code (:func:`offline`).

    The cell tags of :data:`HTML_TAGS` (those of jupyter-book) leave out what changes from run to
    run or machine to machine without being a result, e.g. ``# %% tags=["remove-output"]`` on a
    cell that prints the wall time or an absolute path, so a rerun with the same numbers writes
    the same HTML.
    """
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        kept = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                out["text"] = "\n".join(ln for ln in out["text"].split("\n") if not _hidden(ln))
                if not out["text"].strip():
                    continue
            kept.append(out)
        cell["outputs"] = kept if cell.cell_type == "code" else cell.get("outputs", [])
        cell.get("metadata", {}).pop("papermill", None)
        cell.get("metadata", {}).pop("execution", None)
    exporter = HTMLExporter(embed_images=True)
    exporter.register_preprocessor(TagRemovePreprocessor(**HTML_TAGS), enabled=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    from bs4 import BeautifulSoup  # nbconvert's own dependency, which writes the generic alt

    soup = BeautifulSoup(body, features="html.parser")
    alts = figure_alts(nb, figures_json)
    for img in soup.find_all("img"):
        data = img.get("src", "").removeprefix("data:image/png;base64,").strip()
        if data in alts:
            img["alt"] = alts[data]
    offline(soup)
    body = str(soup)
    with atomic_path(path) as tmp:
        tmp.write_text(body, encoding="utf-8")
    return path
