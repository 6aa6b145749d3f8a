"""Fault kind: the kernel dies (the OOM killer's SIGKILL, a segfault).

Expected: one line naming the notebook, the cell and its heading and the signal, exit status 1,
and the notebook as far as it ran in ``build/<profile>/failed/``.
"""
from __future__ import annotations

import signal

import nbformat
import pytest

from paper_lib.pipeline.runner import describe_exit, main

DIES = '''# %% [markdown]
# # A notebook whose kernel dies

# %% tags=["parameters"]
profile = "smoke"
how = "SIGKILL"

# %%
print("before the crash")

# %% [markdown]
# ## Training at full size
# Far too big for this machine.

# %%
import os
import signal

os.kill(os.getpid(), getattr(signal, how))
'''


@pytest.mark.notebook
def test_a_killed_kernel_is_one_line_naming_the_cell_and_the_partial_notebook_is_kept(tmp_path, capsys):
    source = tmp_path / "notebooks" / "00_dies.py"
    source.parent.mkdir()
    source.write_text(DIES)
    failed = tmp_path / "build" / "smoke" / "failed" / "00_dies.ipynb"
    assert main([str(source), "--profile", "smoke"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err == ("error: 00_dies: the kernel died in cell [4] (Training at full size): killed by signal 9 "
                   f"(SIGKILL); out of memory? The notebook as far as it ran: {failed}")
    kept = nbformat.read(failed, as_version=4)
    printed = [o.get("text", "") for c in kept.cells for o in c.get("outputs", [])]
    assert "before the crash\n" in printed
    assert not (tmp_path / "build" / "smoke" / "executed" / "00_dies.ipynb").exists()
    assert not (tmp_path / "build" / "smoke" / "figures" / "00_dies").exists()  # no staging folder left either
    assert sorted(p.name for p in (tmp_path / "build" / "smoke" / "figures").iterdir()) == []


def test_how_a_kernel_ended_is_said_in_words():
    assert describe_exit(-signal.SIGKILL) == "killed by signal 9 (SIGKILL); out of memory?"
    assert describe_exit(-signal.SIGSEGV) == "killed by signal 11 (SIGSEGV), a crash in native code"
    assert describe_exit(3) == "it exited with status 3"
    assert describe_exit(None) == "how is unknown (no exit status; out of memory, or a crash in native code?)"
