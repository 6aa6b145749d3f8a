"""Fault kind: a date-based ``make`` misses a source saved during a run; staleness is by content, not by date.

A source saved while ``make`` runs it leaves an executed notebook newer than the edit, so a
date-based ``make`` calls it up to date forever; and Jupyter rewriting a ``.py`` with the same
bytes (opening it) made a date-based ``make`` rerun it. The Makefile compares the content of what
each run read as it started (``build/executed/<profile>/<notebook>.inputs``), and the runner says
when a file it read changed on disk while it ran.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from paper_lib.pipeline.atomic import write_json
from paper_lib.pipeline.deps import digest, inputs, stale
from paper_lib.pipeline.runner import run_notebook

ROOT = Path(__file__).resolve().parent.parent
DEMO = '# %% tags=["parameters"]\nprofile = "cpu"\n\n# %%\nfrom paper_lib.pipeline.stats import mean_ci95\n'
FAKE_PYTHON = """#!/bin/sh
# stands in for the venv's python: a notebook run (benchmarks/timed.py --record REC) records what it reads
# as it starts, writes make's target, and puts its record in place once it succeeded
if [ "$1" = benchmarks/timed.py ]; then
  name=$(basename "$2" .py); rec=build/executed/cpu/$name.inputs; mkdir -p build/executed/cpu
  echo "$name" >> runs.log
  python3 -c "import json, sys; from paper_lib.pipeline.deps import inputs
open(sys.argv[2], 'w').write(json.dumps(inputs(sys.argv[1])))" "$2" "$rec.new"
  if [ -n "$EDIT_DURING_RUN" ]; then echo "$EDIT_DURING_RUN" >> "$2"; fi
  echo '{}' > "build/executed/cpu/$name.ipynb"
  mv -f "$rec.new" "$rec"
fi
"""


@pytest.fixture()
def project(tmp_path) -> Path:
    """This repository's Makefile and paper_lib with one notebook, and a venv whose python only
    records each notebook run (so ``make all`` takes a second)."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(ROOT / "constraints.txt", tmp_path / "constraints.txt")
    shutil.copytree(ROOT / "paper_lib", tmp_path / "paper_lib", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_demo.py").write_text(DEMO)
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "venv" / ".installed").touch()
    return tmp_path


def _make(root: Path, **extra: str) -> int:
    """Run ``make all`` in ``root`` (with ``extra`` in its environment); return how many notebook
    runs ``runs.log`` holds."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")} | extra
    proc = subprocess.run(["make", "-s", "all", f"VENV={root / 'venv'}"], cwd=root, capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    log = root / "runs.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _later(path: Path, than: Path, by: float = 5.0) -> None:
    t = than.stat().st_mtime + by
    os.utime(path, (t, t))


def _saved_during_the_run(project: Path, edited: Path) -> None:
    """Date the files as they are when ``edited`` was saved while ``make`` ran the notebook: the
    record (written as the run started) < the edit < the executed notebook (the end of the run) < now."""
    t = edited.stat().st_mtime - 100
    executed = project / "build" / "executed" / "cpu" / "00_demo.ipynb"
    for path, when in ((executed.with_suffix(".inputs"), t), (edited, t + 10), (executed, t + 20)):
        if path.exists():
            os.utime(path, (when, when))


@pytest.mark.multiprocess  # seven `make` runs, about 7 s
def test_make_reruns_a_source_saved_while_it_ran_and_not_one_rewritten_with_the_same_bytes(project):
    source, lib = project / "notebooks" / "00_demo.py", project / "paper_lib" / "pipeline" / "stats.py"
    executed = project / "build" / "executed" / "cpu" / "00_demo.ipynb"
    assert _make(project) == 1 and executed.is_file()
    assert _make(project) == 1  # nothing changed

    source.write_bytes(source.read_bytes())  # Jupyter opening the notebook rewrites the same bytes
    _later(source, executed)
    lib.write_bytes(lib.read_bytes())
    _later(lib, executed)
    assert _make(project) == 1  # the same content reruns nothing

    source.write_text(DEMO + "x = 2\n")  # saved while make ran it: the executed notebook is newer than the edit
    _saved_during_the_run(project, source)
    assert _make(project) == 2
    assert _make(project) == 2

    lib.write_text(lib.read_text() + "\n# edited while notebook 00 ran\n")  # the same for a paper_lib file it imports
    _saved_during_the_run(project, lib)
    assert _make(project) == 3
    source.write_text(DEMO + "x = 4\n")
    assert _make(project, EDIT_DURING_RUN="y = 3") == 4  # and saved again while that run ran: its record is older
    assert _make(project) == 5 and _make(project) == 5


def test_a_record_holds_the_content_of_what_a_notebook_reads(tmp_path):
    source = ROOT / "notebooks" / "01_grammar_probe.py"
    recorded = inputs(source)
    assert recorded["notebooks/01_grammar_probe.py"] == digest(source) and len(digest(source)) == 64
    assert "paper_lib/models/spcn.py" in recorded and "paper_lib/models/spen.py" not in recorded
    write_json(tmp_path / "01_grammar_probe.inputs", recorded)  # as benchmarks/timed.py --record writes it
    assert stale(tmp_path, [source, ROOT / "notebooks" / "02_transfer.py"]) == ["02_transfer"]  # no record: stale
    (tmp_path / "01_grammar_probe.inputs").write_text("{not json", encoding="utf-8")
    assert stale(tmp_path, [source]) == ["01_grammar_probe"]  # a damaged record: stale


EDITS_ITSELF = '''# %% tags=["parameters"]
profile = "smoke"

# %%
from pathlib import Path

source = Path("00_edit.py")  # the kernel runs in the notebook's folder
source.write_text(source.read_text() + "# saved from the editor while the notebook ran\\n")
'''


@pytest.mark.notebook
def test_the_runner_says_when_its_source_changed_while_it_ran(tmp_path, capsys):
    source = tmp_path / "notebooks" / "00_edit.py"
    source.parent.mkdir()
    source.write_text(EDITS_ITSELF)
    run_notebook(source, "smoke", root=tmp_path)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"warning: {source} changed on disk while 00_edit ran; its results are of the files as they "
                   "were read at the start, and the next `make` reruns it"]
