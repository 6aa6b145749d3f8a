"""Fault kind: tests that depend on how ``make test`` was started, through the environment. With
``PAPER_LIB_PUBLISH=1`` exported by the caller (as ``make bench`` exports it for its commands), every
``Outputs`` a test made without saying ``publish`` tried to publish and failed. Expected: ``conftest.py``
drops the project's own settings before any test runs; a test that needs one sets it itself."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_callers_project_settings_do_not_reach_the_tests(tmp_path):
    env = {**os.environ, "PAPER_LIB_PUBLISH": "1", "PAPER_LIB_FIGCHECK": "raise", "PAPER_LIB_START_TIMEOUT": "x"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                           "tests/test_infra.py::test_a_run_replaces_the_old_folder_only_when_complete",
                           "tests/test_infra.py::test_smoke_outputs_say_they_prove_nothing"],
                          cwd=ROOT, env=env, capture_output=True, encoding="utf-8", timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "2 passed" in proc.stdout
