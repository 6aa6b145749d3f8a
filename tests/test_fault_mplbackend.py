"""Fault kind: ``MPLBACKEND=Agg`` from the user's shell must not reach the kernel.

With Agg the executed notebook (and the HTML made from it) has no figures; the runner gives the
kernel matplotlib's inline backend whatever the shell says.
"""
from __future__ import annotations

import os

import nbformat
import pytest

from paper_lib.pipeline.runner import KERNEL_ENV, run_notebook

PLOT = '''# %% tags=["parameters"]
profile = "smoke"

# %%
import matplotlib
import matplotlib.pyplot as plt

print(matplotlib.get_backend())
plt.plot([0, 1], [1, 0])
'''


def test_the_runner_pins_the_inline_backend():
    assert KERNEL_ENV["MPLBACKEND"] == "module://matplotlib_inline.backend_inline"


@pytest.mark.notebook
def test_mplbackend_agg_in_the_shell_still_gives_figures(tmp_path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    source = tmp_path / "notebooks" / "00_plot.py"
    source.parent.mkdir()
    source.write_text(PLOT)
    nb = nbformat.read(run_notebook(source, "smoke", root=tmp_path), as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outputs), outputs
    assert os.environ["MPLBACKEND"] == "Agg"  # the runner's own environment is as it was
