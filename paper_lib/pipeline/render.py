"""The executed notebook as a reader gets it: tidy streams, numbered cells, and a self-contained
HTML rendering (what ``make all`` publishes beside the figures). Our design: the paper is silent."""
from __future__ import annotations

import copy
import re
from pathlib import Path

from .atomic import atomic_path

HTML_TAGS = {"remove_cell_tags": {"remove-cell"}, "remove_all_outputs_tags": {"remove-output"},
             "remove_input_tags": {"remove-input"}}
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


def render_html(nb, path: Path, title: str) -> Path:
    """Write the executed notebook ``nb`` as one self-contained HTML file (code, outputs, images
    embedded), without progress bars, whose timings change from run to run; returns ``path``.

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
    with atomic_path(path) as tmp:
        tmp.write_text(body, encoding="utf-8")
    return path
