"""Fault kind: two ``make`` runs at once in one clone (papermill#578).

Both ran the notebook, and the second, whose run succeeded and published, ended with ``mv: cannot
stat 'build/executed/smoke/<nb>.inputs.new'``, rc 2: both recipes wrote one record file. Expected:
the recipe (``benchmarks/timed.py --record``) holds ``<notebook>.lock`` (``fcntl.flock``: released by
the OS when its holder dies) from before it reads its inputs until its record is in place; a second
run names the first (its pid and command) in one line, waits, and then ends at once since the first
made the notebook from the same sources; never a half-written record.

The project here is this repository's Makefile, ``benchmarks/timed.py`` and ``paper_lib.pipeline``'s
standard-library modules, with a stand-in runner that writes make's target only once the test lets it
(a run that cannot end before the second make has started, whatever the machine's speed).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNNER = '''import os, sys, time
from pathlib import Path

name, profile = Path(sys.argv[1]).stem, sys.argv[sys.argv.index("--profile") + 1]
with open("runs.log", "a") as log:
    log.write(f"{os.getpid()}\\n")
while not Path("release").exists():  # the test says when this run may end
    time.sleep(0.05)
target = Path("build/executed") / profile / f"{name}.ipynb"
target.write_text("{}")
'''


@pytest.fixture()
def project(tmp_path) -> Path:
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "timed.py", tmp_path / "benchmarks" / "timed.py")
    pipeline = tmp_path / "paper_lib" / "pipeline"
    pipeline.mkdir(parents=True)
    for init in (tmp_path / "paper_lib" / "__init__.py", pipeline / "__init__.py"):
        init.write_text("", encoding="utf-8")
    for name in ("threads.py", "profiles.py", "deps.py", "atomic.py"):  # what timed.py and the Makefile use
        shutil.copy(ROOT / "paper_lib" / "pipeline" / name, pipeline / name)
    (pipeline / "runner.py").write_text(RUNNER, encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_demo.py").write_text('# %% tags=["parameters"]\nprofile = "smoke"\n',
                                                       encoding="utf-8")
    python = tmp_path / "venv" / "bin" / "python"  # the venv's python: this one, under the venv's name
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n', encoding="utf-8")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "venv" / ".installed").touch()
    return tmp_path


def _make(root: Path, log: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env["PYTHONPATH"] = str(root)
    with log.open("w", encoding="utf-8") as f:
        return subprocess.Popen(["make", "00_demo", "PROFILE=smoke", f"VENV={root / 'venv'}"], cwd=root, env=env,
                                stdout=f, stderr=subprocess.STDOUT, start_new_session=True)


def _until(condition, what: str) -> None:
    """Wait for ``condition()``; the bound only ends a hang."""
    for _ in range(3000):
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"waited 300 s for {what}")


def _runs(root: Path) -> list[str]:
    log = root / "runs.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


def test_a_second_make_names_the_first_waits_and_reruns_nothing(project):
    first, second = _make(project, project / "first.log"), None
    try:
        _until(lambda: _runs(project) or first.poll() is not None, "the first make's run to start")
        assert _runs(project), (project / "first.log").read_text()
        second = _make(project, project / "second.log")
        _until(lambda: "waiting for it to end" in (project / "second.log").read_text() or len(_runs(project)) > 1
               or second.poll() is not None, "the second make to wait or run")
        assert len(_runs(project)) == 1, "both makes ran the notebook"
        lock = project / "build" / "executed" / "smoke" / "00_demo.lock"
        waiting = [ln for ln in (project / "second.log").read_text().splitlines() if "waiting" in ln]
        holder = lock.read_text().strip()                       # the first run's pid and command
        assert waiting == [f"00_demo: another run holds {lock.relative_to(project)} ({holder}); waiting for it to end"]
        pid = int(holder.split()[1].rstrip(":"))
        assert "benchmarks/timed.py" in Path(f"/proc/{pid}/cmdline").read_text()   # it names the first make's run
        assert "notebooks/00_demo.py --profile smoke --publish --record" in holder
        (project / "release").touch()
        assert first.wait(300) == 0 and second.wait(300) == 0, (project / "second.log").read_text()
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    assert len(_runs(project)) == 1
    said = (project / "second.log").read_text()
    assert "00_demo: made by that run meanwhile from the same sources; nothing to do" in said
    assert "cannot stat" not in said and "Error" not in said
    record = project / "build" / "executed" / "smoke" / "00_demo.inputs"
    sys.path.insert(0, str(project))
    try:
        from paper_lib.pipeline.deps import inputs
        assert json.loads(record.read_text()) == inputs(project / "notebooks" / "00_demo.py", project)
    finally:
        sys.path.remove(str(project))
    left = sorted(p.name for p in record.parent.iterdir())
    assert left == ["00_demo.inputs", "00_demo.ipynb", "00_demo.lock"]  # no record of a second run, half-written


def test_the_lock_of_a_killed_run_is_free_at_once(project):
    first = _make(project, project / "first.log")
    try:
        _until(lambda: _runs(project) or first.poll() is not None, "the first make's run to start")
        assert _runs(project), (project / "first.log").read_text()
    finally:
        os.killpg(first.pid, signal.SIGKILL)                    # make, timed.py and its runner, all at once
        first.wait()
    (project / "release").touch()
    second = _make(project, project / "second.log")
    assert second.wait(300) == 0, (project / "second.log").read_text()
    assert "waiting" not in (project / "second.log").read_text()
    assert len(_runs(project)) == 2                             # the killed run left no record: it runs again
    assert (project / "build" / "executed" / "smoke" / "00_demo.inputs").is_file()
