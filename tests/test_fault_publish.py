"""Where a notebook run's outputs go when the folder is odd or the disk fails under it.

- a symbolic link ``build/<profile>/figures/<notebook>`` is written through: the folder it names
  gets the new outputs and the link stays (it was renamed away, leaving the shared folder stale);
- each run converts its source into a file of its own, so a ``lab/`` copy run at the same time
  never replaces what ``make``'s run executes;
- a full or unwritable disk after every cell ran is one line naming the disk and where the
  finished outputs are kept (``build/<profile>/kept/<notebook>/``); the previous outputs stay;
- a read-only output folder (or the folder it goes into) is one line before any cell runs;
- a kernel slow to start, or one that exits before it answers, is one line with the setting
  (``--start-timeout``, ``PAPER_LIB_START_TIMEOUT``) or the fix (ipykernel).

Each test runs a small notebook for real; the failing disk is a patched call (this machine's
tests may run as root, for whom no folder is read-only).
"""
from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import pytest

from paper_lib.pipeline import atomic, runner

DEMO = '''# %% tags=["parameters"]
profile = "smoke"
value = 1

# %%
from paper_lib.pipeline.provenance import Outputs

out = Outputs("00_demo", profile, {"value": value}, seeds=[0])
out.write_metrics({"value": [float(value)]})
'''

pytestmark = pytest.mark.notebook


@pytest.fixture
def project(tmp_path, monkeypatch):
    source = tmp_path / "notebooks" / "00_demo.py"
    source.parent.mkdir()
    source.write_text(DEMO, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    previous = tmp_path / "build" / "smoke" / "figures" / "00_demo"
    previous.mkdir(parents=True)
    (previous / "last-week.txt").write_text("the previous run's outputs\n", encoding="utf-8")
    return source, previous


def _value(folder: Path) -> float:
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))["metrics"]["value"]["mean"]


def _one_error(capsys, argv: list[str], code: int) -> str:
    assert runner.main(argv) == code
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def test_a_symlinked_output_folder_is_written_through(project, tmp_path):
    source, previous = project
    shared = tmp_path / "shared" / "00_demo"
    shared.mkdir(parents=True)
    (shared / "last-week.txt").write_text("stale\n", encoding="utf-8")
    previous.rename(tmp_path / "elsewhere")
    previous.symlink_to(shared, target_is_directory=True)
    runner.run_notebook(source, "smoke", root=tmp_path)
    assert previous.is_symlink() and previous.resolve() == shared.resolve()
    assert _value(shared) == 1.0 and not (shared / "last-week.txt").exists()  # the shared folder has this run
    assert sorted(p.name for p in shared.parent.iterdir()) == ["00_demo"]  # no staging or old folder left


def test_a_lab_copy_run_meanwhile_never_replaces_what_makes_run_executes(project, tmp_path, monkeypatch):
    import papermill as pm

    source, previous = project
    lab = tmp_path / "lab" / "00_demo.py"
    lab.parent.mkdir()
    lab.write_text(DEMO.replace("value = 1", "value = 666"), encoding="utf-8")
    real, inputs = pm.execute_notebook, []

    def execute(path, *args, **kwargs):  # between make's conversion and papermill's read, the lab copy runs
        inputs.append(path)
        if len(inputs) == 1:
            runner.run_notebook(lab, "smoke", root=tmp_path)
            assert _value(previous) == 666.0
        return real(path, *args, **kwargs)

    monkeypatch.setattr(pm, "execute_notebook", execute)
    runner.run_notebook(source, "smoke", root=tmp_path)
    assert _value(previous) == 1.0  # make's run executed the committed source, not the lab tweak
    assert inputs[0] != inputs[1] and all(Path(p).parent == tmp_path / "build" / "notebooks" for p in inputs)
    assert list((tmp_path / "build" / "notebooks").iterdir()) == []  # each run removed its own


@pytest.mark.parametrize("code, why, fix", [
    (errno.ENOSPC, "no space left on the disk that holds ", "; free space on /"),
    (errno.EACCES, "cannot write ", "; make it writable and rerun"),
])
def test_a_failed_swap_after_every_cell_ran_keeps_the_finished_outputs(project, tmp_path, monkeypatch, capsys,
                                                                       code, why, fix):
    source, previous = project

    def fails(new, target):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(runner, "replace_dir", fails)
    line = _one_error(capsys, [str(source), "--profile", "smoke"], 1)
    assert line.startswith("error: 00_demo: every cell ran, but " + why) and fix in line, line
    assert code != errno.EACCES or ": Permission denied; the finished outputs are kept" in line
    assert "the finished outputs are kept in build/smoke/kept/00_demo/ and the executed notebook in " \
           "build/smoke/failed/00_demo.ipynb" in line
    assert _value(tmp_path / "build" / "smoke" / "kept" / "00_demo") == 1.0
    assert sorted(p.name for p in previous.iterdir()) == ["last-week.txt"]  # the previous outputs as they were
    assert not [p for p in previous.parent.iterdir() if p.name.startswith(".")]  # no staging or .old-* folder


def test_a_full_disk_under_the_executed_notebook_is_one_line(project, tmp_path, monkeypatch, capsys):
    import nbformat

    source, previous = project

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(nbformat, "write", full)
    line = _one_error(capsys, [str(source), "--profile", "smoke"], 1)
    assert line.startswith("error: 00_demo: every cell ran and the outputs are in build/smoke/figures/00_demo/, but "
                           "no space left on the disk that holds "), line
    assert "the next make reruns the notebook" in line and _value(previous) == 1.0
    assert not (tmp_path / "build" / "smoke" / "executed" / "00_demo.ipynb").exists()  # make's target: rerun


@pytest.mark.parametrize("which", ["the folder itself", "the folder it goes into"])
def test_a_read_only_output_folder_is_one_line_before_any_cell(project, tmp_path, monkeypatch, capsys, which):
    source, previous = project
    read_only = previous if which == "the folder itself" else previous.parent
    real = os.access
    monkeypatch.setattr(atomic.os, "access", lambda p, mode: False if Path(p) == read_only else real(p, mode))
    line = _one_error(capsys, [str(source), "--profile", "smoke"], 2)
    assert line == (f"error: cannot replace {previous}: {read_only} ({which}) is read-only; make it writable "
                    f"(chmod -R u+w {read_only}) or write elsewhere")
    assert not (tmp_path / "build" / "smoke" / "failed").exists()  # no cell ran
    assert sorted(p.name for p in previous.iterdir()) == ["last-week.txt"]


def _kernelspec(tmp_path: Path, monkeypatch, code: str) -> None:
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [sys.executable, "-c", code, "{connection_file}"],
                                                  "display_name": "Python 3", "language": "python"}),
                                      encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))


def test_a_kernel_slow_to_start_names_the_setting(project, tmp_path, monkeypatch, capsys):
    source, _ = project
    _kernelspec(tmp_path, monkeypatch, "import time; time.sleep(120)")  # never answers in time
    line = _one_error(capsys, [str(source), "--profile", "smoke", "--start-timeout", "3"], 1)
    assert line == (f"error: 00_demo: the kernel ({sys.executable}) did not answer within 3 s of starting (a loaded "
                    "machine or a slow disk?); allow it longer with --start-timeout 300 (for make: "
                    "PAPER_LIB_START_TIMEOUT=300 make ...)")


def test_a_kernel_that_cannot_start_names_the_fix(project, tmp_path, monkeypatch, capsys):
    source, _ = project
    _kernelspec(tmp_path, monkeypatch, "import sys; sys.exit('No module named ipykernel_launcher')")
    assert runner.main([str(source), "--profile", "smoke"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith(f"error: 00_demo: the kernel ({sys.executable}) exited with status 1 before it "
                                "answered, so no cell ran (its own message is above); a Python without ipykernel? "
                                f"install it with `{sys.executable} -m pip install ipykernel`"), lines
    assert "Traceback" not in "\n".join(lines) and len(lines) <= 3, lines


def test_a_full_disk_under_the_running_notebook_is_one_line_and_publishes_nothing(project, tmp_path, monkeypatch,
                                                                                   capsys):
    import papermill.engines

    source, previous = project

    def full(nb, path):  # papermill saves the notebook as it runs, after each cell
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(papermill.engines, "write_ipynb", full)
    line = _one_error(capsys, [str(source), "--profile", "smoke"], 1)
    assert line.startswith("error: 00_demo: no space left on the disk that holds "), line
    assert "; nothing was published and the previous outputs are as they were; " in line and "; free space on /" in line
    assert sorted(p.name for p in previous.iterdir()) == ["last-week.txt"]
    assert not [p for p in (tmp_path / "build").rglob(".*")]  # no scratch file or staging folder left
