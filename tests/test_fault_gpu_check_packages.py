"""Fault kind: ``make gpu-check`` in a copy without ``.git`` (a tarball, a lent device's copy) on a
machine whose ``python3`` lacks pandas gave a ``ModuleNotFoundError`` traceback, where the device
study names a missing package in one line. Expected: the same one line, before anything is imported.

The python3 here is this one with pandas hidden (``sys.modules["pandas"] = None``: not importable).
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NO_PANDAS = f'''#!{sys.executable}
import runpy, sys
sys.modules["pandas"] = None                        # this python3 has no pandas
sys.executable = __file__
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def test_gpu_check_without_pandas_names_it_in_one_line(tmp_path):
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    for folder in ("benchmarks", "paper_lib"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    assert not (tmp_path / ".git").exists()
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.write_text(NO_PANDAS, encoding="utf-8")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    proc = subprocess.run(["make", "gpu-check", f"PYTHON={python}"], cwd=tmp_path, capture_output=True,
                          encoding="utf-8", env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr
    ours = [ln for ln in proc.stderr.splitlines() if not ln.startswith("make:")]
    assert ours == [f"gpu-check: this Python ({python}) lacks pandas; it needs numpy, pandas, scipy, sklearn, torch, "
                    "threadpoolctl, tqdm (install them, or carry a folder holding them on PYTHONPATH)"], proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
