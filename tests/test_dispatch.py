"""The kernel tests (``-m kernel``) run twice more in ``make test`` with torch's CPU dispatch forced
down (``ATEN_CPU_CAPABILITY=default`` and ``=avx2``, ``make test-dispatch``), so a kernel difference
between CPUs fails here rather than on the next user's machine. This checks that the setting is the
one torch runs at (a misspelt value falls back to the machine's best without a word)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

pytestmark = pytest.mark.kernel


def _capability(env_value: str) -> str:
    env = {**os.environ, "ATEN_CPU_CAPABILITY": env_value}
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_dispatch_level_asked_for_is_the_one_torch_runs_at():
    assert _capability("default") == "DEFAULT"
    native = _capability("")
    if native in ("AVX2", "AVX512"):                                   # an x86 CPU with AVX2: it can go down
        assert _capability("avx2") == "AVX2"


@pytest.mark.skipif(os.environ.get("ATEN_CPU_CAPABILITY") not in ("default", "avx2"),
                    reason="runs under make test-dispatch, which forces the level")
def test_this_run_is_at_the_level_make_asked_for():
    asked = os.environ["ATEN_CPU_CAPABILITY"]
    if asked == "avx2" and _capability("") not in ("AVX2", "AVX512"):
        pytest.skip("this CPU has no AVX2")
    assert torch.backends.cpu.get_cpu_capability() == asked.upper()
