"""An interrupted run leaves hidden files behind and no timing row.

SIGTERM to the runner and SIGHUP to its process group killed it before its clean-up, so
``.<notebook>.running-<pid>.ipynb`` files and staging folders piled up; under ``make``, Ctrl-C
made ``benchmarks/timed.py`` SIGKILL the runner 0.25 s later (``subprocess.call``'s way), before
its clean-up, and write no ``build/timing.csv`` row. Expected: one line naming the signal and the
cell, exit status ``128 + signal``, no scratch file, the notebook as far as it ran kept in
``failed/``; what a SIGKILL leaves is removed by the next run; ``timed.py`` waits for the runner
and records the interrupted run. Each child starts with the signals it is sent at their default
action (:mod:`_signals`), so these pass however ``make test`` was started (a script's background job
starts it with SIGINT ignored); a run started ignoring one (``nohup``'s SIGHUP) keeps ignoring it.
"""
from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _signals import with_signals

from paper_lib.pipeline.runner import run_notebook

ROOT = Path(__file__).resolve().parent.parent
STOPS = '''# %% tags=["parameters"]
profile = "smoke"

# %%
print("first cell")

# %% [markdown]
# ## The long part

# %%
import os, signal, time  # noqa: E401

os.{how}
time.sleep(120)  # busy when the signal arrives; the runner shuts the kernel down
'''
SENDS = {  # the signal, as a user or a scheduler sends it (the kernel's parent is the runner)
    "SIGTERM to the runner": ("kill(os.getppid(), signal.SIGTERM)", signal.SIGTERM),
    "SIGHUP to its group": ("killpg(os.getpgid(os.getppid()), signal.SIGHUP)", signal.SIGHUP),
    "Ctrl-C (SIGINT to its group)": ("killpg(os.getpgid(os.getppid()), signal.SIGINT)", signal.SIGINT),
}


def _hidden(root: Path) -> list[str]:
    build = root / "build"
    return sorted(str(p.relative_to(root)) for p in build.rglob(".*")) + \
        sorted(str(p.relative_to(root)) for p in (build / "notebooks").glob("*"))


@pytest.mark.notebook
@pytest.mark.parametrize("sent", list(SENDS))
def test_an_interrupted_run_cleans_up_and_says_so_in_one_line(tmp_path, sent):
    how, sig = SENDS[sent]
    source = tmp_path / "notebooks" / "00_stops.py"
    source.parent.mkdir()
    source.write_text(STOPS.format(how=how), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(with_signals([sys.executable, "-m", "paper_lib.pipeline.runner", str(source), "--profile",
                                        "smoke"]), cwd=tmp_path, env=env, capture_output=True, encoding="utf-8",
                          timeout=300, start_new_session=True)  # its own group, as make's is
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert proc.returncode == 128 + sig, proc.stderr
    assert errors == [f"error: 00_stops: interrupted by {signal.Signals(sig).name} in cell [4] (The long part); "
                      "nothing was published and the previous outputs are as they were; the notebook as far as it "
                      "ran: build/smoke/failed/00_stops.ipynb"], proc.stderr
    assert _hidden(tmp_path) == []  # no .running-*.ipynb, no converted notebook, no staging folder
    assert "first cell" in (tmp_path / "build" / "smoke" / "failed" / "00_stops.ipynb").read_text(encoding="utf-8")


DEMO = '# %% tags=["parameters"]\nprofile = "smoke"\n\n# %%\nprint("ok")\n'


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.notebook
def test_what_a_killed_run_left_is_removed_by_the_next_run(tmp_path):
    source = tmp_path / "notebooks" / "00_demo.py"
    source.parent.mkdir()
    source.write_text(DEMO, encoding="utf-8")
    dead = _dead_pid()  # a runner killed with SIGKILL: its clean-up never ran
    left = [tmp_path / "build" / "smoke" / "executed" / f".00_demo.running-{dead}.ipynb",
            tmp_path / "build" / "smoke" / "executed" / f".01_other.running-{dead}-x1y2.ipynb",
            tmp_path / "build" / "notebooks" / f".00_demo.running-{dead}-a1b2.ipynb"]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}", encoding="utf-8")
    mine = tmp_path / "build" / "smoke" / "executed" / f".01_other.running-{os.getppid()}-c3d4.ipynb"  # alive
    mine.write_text("{}", encoding="utf-8")
    run_notebook(source, "smoke", root=tmp_path)
    assert not any(p.exists() for p in left)
    assert mine.exists()  # a run still going keeps its files
    assert sorted(p.name for p in (tmp_path / "build" / "notebooks").iterdir()) == []


FAKE_RUNNER = '''import os, signal, sys, time
from pathlib import Path

try:
    os.killpg(os.getpgrp(), signal.SIGINT)  # the user presses Ctrl-C: timed.py and the runner get it
    time.sleep(60)
except KeyboardInterrupt:
    time.sleep(1.0)  # the runner's clean-up (shutting the kernel down) takes a moment
    Path("cleaned-up").write_text("yes", encoding="utf-8")
    print("error: 00_demo: interrupted by SIGINT", file=sys.stderr)
    sys.exit(130)
'''


@pytest.mark.multiprocess
def test_timed_waits_for_an_interrupted_runner_and_records_it(tmp_path):
    (tmp_path / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "timed.py", tmp_path / "benchmarks" / "timed.py")
    pipeline = tmp_path / "paper_lib" / "pipeline"
    pipeline.mkdir(parents=True)
    for init in (tmp_path / "paper_lib" / "__init__.py", pipeline / "__init__.py"):
        init.write_text("", encoding="utf-8")
    for name in ("threads.py", "profiles.py"):  # what timed.py imports of the project
        shutil.copy(ROOT / "paper_lib" / "pipeline" / name, pipeline / name)
    (pipeline / "runner.py").write_text(FAKE_RUNNER, encoding="utf-8")
    timing = tmp_path / "build" / "timing.csv"
    proc = subprocess.run(with_signals([sys.executable, "benchmarks/timed.py", "notebooks/00_demo.py", "--profile",
                                        "smoke", "--out", str(timing)]), cwd=tmp_path, capture_output=True,
                          encoding="utf-8", timeout=120, start_new_session=True)
    assert (tmp_path / "cleaned-up").exists(), proc.stderr  # not killed 0.25 s into its clean-up
    assert proc.returncode == 130, proc.stderr
    rows = list(csv.DictReader(timing.open(encoding="utf-8")))
    assert [(r["notebook"], r["profile"], r["status"]) for r in rows] == [("00_demo", "smoke", "interrupted (SIGINT)")]
    assert float(rows[0]["wall_s"]) >= 1.0


SURVIVES = '''# %% tags=["parameters"]
profile = "smoke"

# %%
import os, signal  # noqa: E401

os.killpg(os.getpgid(os.getppid()), signal.SIGHUP)  # the terminal closes under `nohup make all`
print("still running")
'''


@pytest.mark.notebook
def test_a_run_started_ignoring_sighup_keeps_ignoring_it(tmp_path):
    source = tmp_path / "notebooks" / "00_nohup.py"
    source.parent.mkdir()
    source.write_text(SURVIVES, encoding="utf-8")
    proc = subprocess.run(with_signals([sys.executable, "-m", "paper_lib.pipeline.runner", str(source), "--profile",
                                        "smoke"], ignored=[signal.SIGHUP]), cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, encoding="utf-8",
                          timeout=300, start_new_session=True)
    assert proc.returncode == 0, proc.stderr
    assert "still running" in proc.stdout and "interrupted" not in proc.stderr
