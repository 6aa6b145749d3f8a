"""The executed notebook's streams are tidied by nbconvert's
``CoalesceStreamsPreprocessor`` (no hand-written copy), with the outputs a reader saw before;
and every third-party module ``paper_lib`` imports is declared in ``pyproject.toml``."""
from __future__ import annotations

import inspect
import io
import re
from pathlib import Path

import nbformat
from tqdm import tqdm

from paper_lib.pipeline import render
from paper_lib.pipeline.render import render_html, tidy

ROOT = Path(__file__).resolve().parent.parent


class _Chunks(io.StringIO):
    """A file that keeps each write, as a kernel sends each write as its own stream output."""

    def __init__(self):
        super().__init__()
        self.chunks: list[str] = []

    def write(self, s: str) -> int:
        self.chunks.append(s)
        return len(s)


# no rate and no times in the bar: its text is the same on a loaded machine as on an idle one
FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}"


def _cell(kind: str) -> nbformat.NotebookNode:
    f = _Chunks()
    bar = {"file": f, "mininterval": 0, "ascii": True, "bar_format": FORMAT}
    if kind in ("leave", "nested"):
        for _ in tqdm(range(2), desc="outer", position=0, **bar):
            if kind == "nested":
                for _ in tqdm(range(2), desc="inner", leave=False, position=1, **bar):
                    pass
    else:
        for _ in tqdm(range(3), desc="inner", leave=False, position=0, **bar):
            pass
        f.chunks.append("done\n")
    outs = [nbformat.v4.new_output("stream", name="stderr", text=c) for c in f.chunks]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=outs)])


def test_tidy_is_nbconverts_preprocessor_and_keeps_each_bars_last_state():
    assert "CoalesceStreamsPreprocessor" in inspect.getsource(render.tidy)
    assert not hasattr(render, "_last_redraw")
    (out,) = tidy(_cell("leave")).cells[0].outputs
    assert out.text == "outer: 100%|##########| 2/2\n"
    (out,) = tidy(_cell("cleared")).cells[0].outputs
    assert out.text == "done\n"  # a bar that cleared itself leaves nothing before the next line
    (out,) = tidy(_cell("nested")).cells[0].outputs
    assert out.text.splitlines()[-1] == "outer: 100%|##########| 2/2"


def test_a_bar_that_cleared_itself_at_the_end_of_a_cell_leaves_no_line_in_the_html(tmp_path):
    nb = _cell("cleared")
    nb.cells[0].outputs.pop()  # no "done" after the bar: the stream ends with its clearing spaces
    html = render_html(tidy(nb), tmp_path / "a.html", "demo").read_text()
    body = html.split("</style>")[-1]
    assert "inner:" not in body and "application/vnd.jupyter.stderr" not in body  # no empty stderr box either
    nb.cells[0].outputs.append(nbformat.v4.new_output("stream", name="stderr", text="kept\n"))
    body = render_html(tidy(nb), tmp_path / "b.html", "demo").read_text().split("</style>")[-1]
    assert "application/vnd.jupyter.stderr" in body and "kept" in body


def test_threadpoolctl_is_a_declared_dependency():
    text = (ROOT / "pyproject.toml").read_text()  # tomllib is 3.11+; the project supports 3.10
    block = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    names = set(re.findall(r'^\s*"([A-Za-z0-9_.-]+)', block, flags=re.M))
    assert "threadpoolctl" in names and "nbconvert" in names
    assert "import threadpoolctl" in (ROOT / "paper_lib/pipeline/threads.py").read_text() or \
        "from threadpoolctl" in (ROOT / "paper_lib/pipeline/threads.py").read_text()
