"""Fault kind: ``make venv`` with a ``python3`` older than 3.10.

It got pip's ``ResolutionImpossible`` for torch with no word about the Python version, and kept the
old-Python ``.venv``, so the next ``make venv`` with a right ``python3`` failed the same way; with Python
3.6 the profile check (``paper_lib/pipeline/profiles.py``, run first with the plain ``python3``) was a
``SyntaxError``. Expected: one line naming the version found, the one needed and how to choose another,
before anything is installed; a ``.venv`` an old Python made is made again; ``profiles.py`` parses on 3.6.

The old interpreter is this one told it is 3.6.9 (Debian has no 3.6 to run); the good one hands
``-m venv`` and ``-m pip`` to a log, so no package is installed.
"""
from __future__ import annotations

import ast
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "paper_lib" / "pipeline" / "profiles.py"
FUTURE_IN_36 = {"nested_scopes", "generators", "division", "absolute_import", "with_statement", "print_function",
                "unicode_literals", "generator_stop"}
OLD = f'''#!{sys.executable}
import os, runpy, sys
sys.version_info, sys.version = (3, 6, 9, "final", 0), "3.6.9 (stands in for an old python3)"
sys.executable = os.path.abspath(__file__)
args = sys.argv[1:]
if args == ["-V"]:
    print("Python 3.6.9")
elif args[0] == "-c":
    sys.argv = ["-c", *args[2:]]
    exec(compile(args[1], "<string>", "exec"))
else:
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
'''
GOOD = f'''#!{sys.executable}
import os, shutil, sys
from pathlib import Path
args = sys.argv[1:]
if args[:2] == ["-m", "venv"]:                      # a venv whose python is this script
    venv = Path(args[-1])
    (venv / "bin").mkdir(parents=True)
    shutil.copy(__file__, venv / "bin" / "python")
    (venv / "pyvenv.cfg").write_text("version = 3.11.7\\n")
elif args[:2] == ["-m", "pip"]:
    with open(os.environ["PIP_LOG"], "a") as log:
        log.write(" ".join(args[2:]) + "\\n")
elif args[:1] == ["-c"] and "import torch" in args[1]:
    sys.exit(1)                                      # no torch here
else:
    os.execv({sys.executable!r}, [{sys.executable!r}, *args])
'''


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _project(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "paper_lib" / "pipeline").mkdir(parents=True)
    shutil.copy(PROFILES, tmp_path / "paper_lib" / "pipeline" / "profiles.py")
    return tmp_path


def _make(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env["PIP_LOG"] = str(root / "pip.log")
    return subprocess.run(["make", *args], cwd=root, capture_output=True, encoding="utf-8", env=env, timeout=300)


def test_the_profile_check_parses_as_python_3_6():
    tree = ast.parse(PROFILES.read_text(encoding="utf-8"), feature_version=(3, 6))
    futures = {a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module == "__future__"
               for a in node.names}
    assert futures <= FUTURE_IN_36, futures


def test_an_old_python3_is_one_line_naming_its_version_and_nothing_is_installed(tmp_path):
    root = _project(tmp_path)
    old = _script(tmp_path / "old" / "python3", OLD)
    proc = subprocess.run([str(old), str(PROFILES), "cpu"], capture_output=True, encoding="utf-8", timeout=60)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == (f"error: {old} is Python 3.6.9; the project needs Python 3.10 or newer: choose another "
                           "with `make venv PYTHON=python3.11` (any python3.10+)\n")
    made = _make(root, "venv", f"PYTHON={old}")
    assert made.returncode == 2
    lines = made.stderr.strip().splitlines()
    assert len(lines) == 1 and re.fullmatch(r"Makefile:\d+: \*\*\* (.*)  Stop\.", lines[0]).group(1) == (
        f"error: {old} is Python 3.6.9; the project needs Python 3.10 or newer: choose another with "
        "`make venv PYTHON=python3.11` (any python3.10+).")
    assert not (root / ".venv").exists() and not (root / "pip.log").exists()


def test_a_venv_an_old_python_made_is_made_again_and_installs_through_the_constraints(tmp_path):
    root = _project(tmp_path)
    _script(root / ".venv" / "bin" / "python", OLD)
    (root / ".venv" / "pyvenv.cfg").write_text("version = 3.6.9\n", encoding="utf-8")
    good = _script(tmp_path / "good" / "python3", GOOD)
    made = _make(root, "venv", f"PYTHON={good}")
    assert made.returncode == 0, made.stderr
    assert f".venv was made by Python 3.6.9, older than 3.10: made again with Python {sys.version.split()[0]}" \
        in made.stdout.splitlines()
    assert (root / ".venv" / "bin" / "python").read_text(encoding="utf-8") == GOOD
    assert (root / "pip.log").read_text(encoding="utf-8").splitlines() == [
        "install -q --upgrade pip", "install -q torch==2.13.0", "install -q -c constraints.txt -e .[dev]"]
    assert (root / ".venv" / ".installed").exists()
    assert "note:" not in made.stdout                       # constraints.txt pins this Python's versions
