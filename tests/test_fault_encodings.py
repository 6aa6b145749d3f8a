"""A non-UTF-8 locale (``LANG=en_US.ISO-8859-1``, Windows' cp1252) corrupts text.

Python reads and writes text in the locale's encoding unless told otherwise, so under latin-1 the
report step read ``README.md``'s UTF-8 as latin-1 and wrote it back as UTF-8 ("—" became "â€”"),
more with every run. Expected: every text read and write in the project names its encoding, a
report run under a non-UTF-8 locale leaves the README's bytes as they were, and a notebook that
prints "—" runs under such a locale. The tests use the ASCII locale (``LC_ALL=C`` with Python's
UTF-8 mode and locale coercion off), which every machine has, and which fails where latin-1
silently corrupts.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("paper_lib", "benchmarks", "notebooks")  # what a user runs; `make test` runs pytest in UTF-8 mode
ASCII_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0", "PYTHONIOENCODING": ""}


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _binary(mode: ast.expr | None) -> bool:
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and "b" in mode.value


def unnamed_encodings(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, call)`` of every text read or write in ``tree`` that does not name its encoding:
    ``open(...)``, ``Path.open(...)``, ``os.fdopen(...)`` in text mode, ``read_text()``,
    ``write_text(...)``, and ``subprocess`` calls with ``text=True``/``universal_newlines=True``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _keyword(node, "encoding") is not None:
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name in ("read_text", "write_text") and isinstance(f, ast.Attribute):  # Path's (atomic.write_text is UTF-8)
            found.append((node.lineno, name))
        elif name in ("open", "fdopen") and not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                                 and f.value.id in ("os", "zipfile", "tarfile", "Image", "gzip", "bz2")
                                                 and name == "open"):
            at = 1 if isinstance(f, ast.Name) or name == "fdopen" else 0  # open(path, mode) / path.open(mode)
            mode = _keyword(node, "mode") or (node.args[at] if len(node.args) > at else None)
            if not _binary(mode):
                found.append((node.lineno, name))
        elif any(isinstance(_keyword(node, k), ast.Constant) and _keyword(node, k).value is True
                 for k in ("text", "universal_newlines")):
            found.append((node.lineno, f"{name}(text=True)"))
    return sorted(found)


def test_every_text_read_and_write_names_its_encoding():
    missing = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, call in unnamed_encodings(ast.parse(path.read_text(encoding="utf-8"))):
                missing.append(f"{path.relative_to(ROOT)}:{line} {call}")
    assert not missing, "text read or written in the locale's encoding: " + ", ".join(missing)


def test_the_checker_finds_each_kind():
    code = ('open(p)\nopen(p, "w")\nopen(p, "rb")\nopen(p, encoding="utf-8")\np.open("a")\np.open("rb")\n'
            'p.read_text()\np.write_text(s, encoding="utf-8")\nos.fdopen(fd, "w")\nos.open(p, 0)\n'
            'subprocess.run(c, text=True)\nsubprocess.run(c, text=True, encoding="utf-8")\nzipfile.open(p)\n'
            'write_text(p, s)\n')
    assert [line for line, _ in unnamed_encodings(ast.parse(code))] == [1, 2, 5, 7, 9, 11]


README = ("# Title — the paper companion\n\nx → y, 0.5 ± 0.1\n<!-- summary:start -->\nold\n<!-- summary:end -->\n"
          "rest — end\n")
REPORT = "import sys; from pathlib import Path; from paper_lib.pipeline.report import write_report; " \
         "from paper_lib.claims.registry import CLAIMS; write_report('cpu', CLAIMS, root=Path(sys.argv[1]))"


def test_the_report_keeps_the_readme_as_utf8_under_a_non_utf8_locale(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_bytes(README.encode("utf-8"))
    (tmp_path / "figures").mkdir()
    env = {**os.environ, **ASCII_LOCALE, "PYTHONPATH": str(ROOT)}
    for _ in range(2):  # every run used to corrupt it a little more
        proc = subprocess.run([sys.executable, "-c", REPORT, str(tmp_path)], env=env, capture_output=True,
                              encoding="utf-8", errors="replace")
        assert proc.returncode == 0, proc.stderr
    text = readme.read_bytes().decode("utf-8")  # still UTF-8
    assert text.startswith("# Title — the paper companion\n\nx → y, 0.5 ± 0.1\n") and text.endswith("rest — end\n")
    assert "\nold\n" not in text and "â" not in text


DASH = '''# %% tags=["parameters"]
profile = "smoke"

# %%
print("structure — content, 0.5 ± 0.1")
'''


@pytest.mark.notebook
def test_a_notebook_printing_a_dash_runs_under_a_non_utf8_locale(tmp_path):
    source = tmp_path / "notebooks" / "00_dash.py"
    source.parent.mkdir()
    source.write_text(DASH, encoding="utf-8")
    env = {**os.environ, **ASCII_LOCALE, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "paper_lib.pipeline.runner", str(source), "--profile", "smoke"],
                          env=env, capture_output=True, encoding="utf-8", errors="replace", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "structure ? content, 0.5 ? 0.1" in proc.stdout  # the terminal cannot show them: "?"
    executed = nbformat.read(tmp_path / "build" / "smoke" / "executed" / "00_dash.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in executed.cells for o in c.get("outputs", []))
    assert "structure — content, 0.5 ± 0.1" in printed  # the notebook keeps them as they were
