"""Fault kind: an edit made only in the paired ``.ipynb`` (jupytext, ``jupytext.toml``) is
never silently ignored: a one-line warning before a run, and an error when publishing."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import jupytext
import nbformat
import pytest

from paper_lib.pipeline.runner import main, paired_difference, paired_notebook

ROOT = Path(__file__).resolve().parent.parent
DEMO = ('# %% [markdown]\n# # Demo\n\n# %% tags=["parameters"]\nprofile = "cpu"\nlr = 0.1\n\n'
        '# %%\nprint(lr)\n')


@pytest.fixture()
def paired(tmp_path) -> tuple[Path, Path]:
    """A committed clone with ``notebooks/00_demo.py`` and its paired ``.ipynb`` as Jupyter saves it
    (outputs and metadata of its own, the same cells)."""
    shutil.copy(ROOT / "jupytext.toml", tmp_path / "jupytext.toml")
    source = tmp_path / "notebooks" / "00_demo.py"
    source.parent.mkdir()
    source.write_text(DEMO)
    nb = jupytext.read(source)
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="0.1\n")]
    nb.cells[2].execution_count = 3
    nb.cells[2].metadata["collapsed"] = True
    ipynb = source.with_suffix(".ipynb")
    jupytext.write(nb, ipynb, fmt="ipynb")
    (tmp_path / ".gitignore").write_text("*.ipynb\nbuild/\n")
    for args in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"], ["add", "-A"],
                 ["commit", "-qm", "demo"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    return source, ipynb


def _edit_in_jupyter(ipynb: Path) -> None:
    nb = nbformat.read(ipynb, as_version=4)
    nb.cells[2].source = "print(lr * 10)"
    nbformat.write(nb, ipynb)


def test_outputs_and_metadata_of_the_paired_notebook_are_no_difference(paired):
    source, ipynb = paired
    assert paired_notebook(source) == ipynb
    assert paired_difference(source) is None


def test_an_edit_only_in_the_ipynb_is_reported(paired):
    source, ipynb = paired
    _edit_in_jupyter(ipynb)
    assert paired_difference(source) == (
        "00_demo.ipynb (paired by jupytext) differs from 00_demo.py from cell 3 on (3 cells vs 3; 00_demo.ipynb is "
        f"newer), and the run executes 00_demo.py: sync them with `jupytext --sync {source}` (the newer file's "
        "cells win) or delete 00_demo.ipynb")


def test_publishing_with_an_unsynced_ipynb_is_refused_in_one_line(paired, capsys):
    source, ipynb = paired
    _edit_in_jupyter(ipynb)
    assert main([str(source), "--profile", "cpu", "--publish"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("error: refusing to publish 00_demo: 00_demo.ipynb (paired by jupytext) differs from "
                          "00_demo.py from cell 3 on")
    assert "jupytext --sync" in err and not (source.parent.parent / "figures").exists()


def test_without_publishing_it_is_a_warning_before_the_run(paired, capsys):
    source, ipynb = paired
    _edit_in_jupyter(ipynb)
    assert main([str(source), "--profile", "cpu", "-p", "lr", "fast"]) == 2  # stops at the parameter check
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("warning: 00_demo.ipynb (paired by jupytext) differs from 00_demo.py from cell 3 on")
    assert err[1] == "error: parameter lr takes a number (its default is 0.1), got 'fast'"


def test_a_corrupt_paired_notebook_is_one_line(paired):
    source, ipynb = paired
    ipynb.write_text('{"cells": [')  # half-saved
    with pytest.raises(ValueError, match=r"^cannot read 00_demo.ipynb, paired with 00_demo.py: .*; delete it or sync"):
        paired_difference(source)
