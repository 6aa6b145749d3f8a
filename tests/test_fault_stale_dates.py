"""A changed source that is not newer than what make compares it with is never rerun.

A file copied in with its old date (``cp -p``, ``rsync -a``, ``tar x``, ``unzip``) and a file
edited after stamps were written with the clock an hour ahead both looked up to date to a
date-based ``make`` ("Nothing to be done", results of the old content). Expected: staleness by
content, whatever the dates: ``make -q`` says the notebook is out of date, ``make`` reruns it once,
and a rerun with nothing changed runs nothing.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = '# %% tags=["parameters"]\nprofile = "cpu"\nvalue = 1.0\n\n# %%\nfrom paper_lib.pipeline.stats import mean_ci95\n'
FAKE_PYTHON = """#!/bin/sh
# stands in for the venv's python: a notebook run (benchmarks/timed.py --record REC) records what it reads
# as it starts, writes make's target, and puts its record in place once it succeeded
if [ "$1" = benchmarks/timed.py ]; then
  name=$(basename "$2" .py); rec=build/executed/cpu/$name.inputs; mkdir -p build/executed/cpu
  echo "$name" >> runs.log
  python3 -c "import json, sys; from paper_lib.pipeline.deps import inputs
open(sys.argv[2], 'w').write(json.dumps(inputs(sys.argv[1])))" "$2" "$rec.new"
  echo '{}' > "build/executed/cpu/$name.ipynb"
  mv -f "$rec.new" "$rec"
fi
"""
TARGET = "build/executed/cpu/00_demo.ipynb"


@pytest.fixture()
def project(tmp_path) -> Path:
    """This repository's Makefile and paper_lib with one notebook, and a venv whose python only
    records each notebook run (so ``make`` takes a second)."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(ROOT / "constraints.txt", tmp_path / "constraints.txt")
    shutil.copytree(ROOT / "paper_lib", tmp_path / "paper_lib", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_demo.py").write_text(DEMO, encoding="utf-8")
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON, encoding="utf-8")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "venv" / ".installed").touch()
    return tmp_path


def _make(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "-s", *args, f"VENV={root / 'venv'}"], cwd=root, capture_output=True,
                          encoding="utf-8", env=env, timeout=120)


def _runs(root: Path) -> int:
    log = root / "runs.log"
    return len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0


def _date(path: Path, when: float) -> None:
    os.utime(path, (when, when))


def _dated_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and "venv" not in p.parts]


@pytest.mark.multiprocess  # a few `make` runs, about a second each
def test_a_changed_source_with_an_old_date_reruns(project):
    source, lib = project / "notebooks" / "00_demo.py", project / "paper_lib" / "pipeline" / "stats.py"
    assert _make(project, TARGET).returncode == 0 and _runs(project) == 1
    assert _make(project, "-q", TARGET).returncode == 0  # nothing changed: up to date

    week_ago = source.stat().st_mtime - 7 * 86400
    source.write_text(DEMO.replace("value = 1.0", "value = 5.0"), encoding="utf-8")
    _date(source, week_ago)  # `cp -p` / `rsync -a` / `tar x` of last week's edit
    assert _make(project, "-q", TARGET).returncode == 1  # out of date
    assert _make(project, TARGET).returncode == 0 and _runs(project) == 2
    assert _make(project, TARGET).returncode == 0 and _runs(project) == 2  # once

    lib.write_text(lib.read_text(encoding="utf-8") + "\n# a copied-in change\n", encoding="utf-8")
    _date(lib, week_ago)  # the same for a paper_lib module it imports
    assert _make(project, TARGET).returncode == 0 and _runs(project) == 3


@pytest.mark.multiprocess
def test_an_edit_after_the_clock_went_back_reruns(project):
    source = project / "notebooks" / "00_demo.py"
    assert _make(project, TARGET).returncode == 0 and _runs(project) == 1
    ahead = source.stat().st_mtime + 3600
    for path in _dated_files(project):  # everything make wrote, written while the clock was an hour ahead
        if "build" in path.relative_to(project).parts:
            _date(path, ahead)
    source.write_text(DEMO.replace("value = 1.0", "value = 5.0"), encoding="utf-8")  # now, at the right time
    assert _make(project, TARGET).returncode == 0 and _runs(project) == 2
    assert _make(project, TARGET).returncode == 0 and _runs(project) == 2


@pytest.mark.multiprocess
def test_the_same_bytes_with_a_new_date_rerun_nothing(project):
    source = project / "notebooks" / "00_demo.py"
    assert _make(project, TARGET).returncode == 0 and _runs(project) == 1
    source.write_bytes(source.read_bytes())  # Jupyter saving a notebook that was only opened
    _date(source, source.stat().st_mtime + 3600)
    assert _make(project, "-q", TARGET).returncode == 0
    assert _make(project, TARGET).returncode == 0 and _runs(project) == 1
