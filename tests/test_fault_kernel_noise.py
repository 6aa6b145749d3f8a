"""Fault kind: every kernel start printed ipykernel's "Kernel is running over TCP without encryption
... susceptible to eavesdropping" warning, eight times per ``make all``, and a reader could not tell
whether it concerned them. Expected: the runner's kernels get CurveZMQ keys (jupyter_client's
``transport_encryption``, where pyzmq has CurveZMQ and the kernelspec declares it), so their sockets
are encrypted and the warning never comes; the run's output is the runner's lines and the notebook's.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HELLO = '# %% tags=["parameters"]\nprofile = "smoke"\n\n# %%\nprint("hello from the kernel")\n'


@pytest.mark.notebook
def test_a_run_says_nothing_of_plain_text_sockets(tmp_path):
    zmq = pytest.importorskip("zmq")
    if not zmq.has("curve"):
        pytest.skip("this pyzmq has no CurveZMQ: the kernel's sockets cannot be encrypted here")
    source = tmp_path / "notebooks" / "00_hello.py"
    source.parent.mkdir()
    source.write_text(HELLO, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "paper_lib.pipeline.runner", str(source), "--profile", "smoke"],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          encoding="utf-8", timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "hello from the kernel" in proc.stdout
    assert "without encryption" not in proc.stdout + proc.stderr and "eavesdropping" not in proc.stderr
