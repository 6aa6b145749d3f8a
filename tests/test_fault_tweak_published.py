"""Fault kind: a tweak is never published as the paper's default.

JupyterLab autosaved an edited parameters cell into the tracked notebook, and ``make all``
refused with "commit them first" without naming the file: following that advice would have
published the tweaked study. Now the refusal names the files that differ and the ``git restore``
that brings the committed sources back (one line), ``make lab`` opens git-ignored copies in
``lab/`` (never overwritten), a copy is never published, and a Jupyter run of a copy is stamped
as the copy. Every test runs before any kernel starts (about a second in all).
"""
from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from paper_lib.pipeline import lab
from paper_lib.pipeline.provenance import Outputs, source_commit
from paper_lib.pipeline.runner import main

DEMO = '# %% tags=["parameters"]\nprofile = "cpu"\nlr = 0.1\n\n# %%\nx = 1\n'


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def clone(tmp_path) -> Path:
    """A committed clone: notebooks/00_demo.py, paper_lib/m.py, and the repository's .gitignore of lab/."""
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_demo.py").write_text(DEMO)
    (tmp_path / "paper_lib").mkdir()
    (tmp_path / "paper_lib" / "m.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("build/\nlab/\n")
    for args in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"], ["add", "-A"],
                 ["commit", "-qm", "sources"]):
        _git(tmp_path, *args)
    return tmp_path


def _publish_error(capsys, source: Path) -> str:
    assert main([str(source), "--profile", "cpu", "--publish"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert not (source.parents[1] / "figures").exists()
    return err


def _advised_restore(err: str) -> list[str]:
    """The `git restore ...` command the refusal advises, as argv."""
    return shlex.split(err.split("`git restore", 1)[1].split("`", 1)[0])


def test_the_refusal_names_the_autosaved_notebook_and_its_restore_brings_the_default_back(clone, capsys):
    source = clone / "notebooks" / "00_demo.py"
    source.write_text(DEMO.replace("lr = 0.1", "lr = 0.5"))  # what JupyterLab's autosave did
    commit = source_commit(clone)[0]
    err = _publish_error(capsys, source)
    assert err == (f"error: refusing to publish to figures/00_demo/ from uncommitted sources (commit {commit}): "
                   "changed notebooks/00_demo.py; to publish the committed study, "
                   "`git restore -- notebooks/00_demo.py` (or commit the changes if they are meant as the new "
                   "default), or run without publishing (outputs then go to build/<profile>/figures/)")
    subprocess.run(["git", "restore", *_advised_restore(err)], cwd=clone, check=True)  # following the advice
    assert source.read_text() == DEMO and not source_commit(clone)[0].endswith("-dirty")


def test_staged_and_new_files_are_named_with_what_to_do_for_each(clone, capsys):
    (clone / "notebooks" / "01 tweak.py").write_text(DEMO)
    _git(clone, "add", "notebooks/01 tweak.py")
    _git(clone, "commit", "-qm", "a name with a space")
    (clone / "notebooks" / "01 tweak.py").write_text(DEMO + "z = 3\n")
    (clone / "paper_lib" / "m.py").write_text("x = 2\n")
    _git(clone, "add", "paper_lib/m.py")
    (clone / "notebooks" / "00_demo.py").write_text(DEMO + "y = 2\n")
    (clone / "notebooks" / "my copy.py").write_text(DEMO)  # untracked, with a space
    err = _publish_error(capsys, clone / "notebooks" / "00_demo.py")
    assert "from uncommitted sources (commit " in err
    assert ("changed notebooks/00_demo.py, notebooks/01 tweak.py, "
            "paper_lib/m.py; new notebooks/my copy.py; to publish the committed study, `git restore --staged "
            "--worktree -- notebooks/00_demo.py 'notebooks/01 tweak.py' paper_lib/m.py` and move the new files out "
            "of notebooks/ (or commit") in err
    subprocess.run(["git", "restore", *_advised_restore(err)], cwd=clone, check=True)
    assert (clone / "paper_lib" / "m.py").read_text() == "x = 1\n" and _git(clone, "diff", "--cached") == ""
    assert (clone / "notebooks" / "01 tweak.py").read_text() == DEMO
    (clone / "notebooks" / "my copy.py").rename(clone / "my copy.py")
    assert not source_commit(clone)[0].endswith("-dirty")


def test_many_changed_files_are_listed_ten_then_counted(clone, capsys):
    for i in range(12):
        (clone / "paper_lib" / f"n{i:02d}.py").write_text("x = 1\n")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "more")
    for i in range(12):
        (clone / "paper_lib" / f"n{i:02d}.py").write_text("x = 2\n")
    err = _publish_error(capsys, clone / "notebooks" / "00_demo.py")
    assert "changed paper_lib/n00.py, paper_lib/n01.py," in err and "paper_lib/n09.py and 2 more (git status);" in err
    assert "paper_lib/n10.py" not in err and "`git restore -- paper_lib notebooks benchmarks`" in err


def test_make_lab_copies_what_is_missing_and_never_overwrites_a_tweak(clone, capsys):
    assert lab.main(clone) == 0
    copy = clone / "lab" / "00_demo.py"
    assert copy.read_text() == DEMO and (clone / "lab" / "jupytext.toml").read_text() == lab.LAB_JUPYTEXT
    assert capsys.readouterr().out == "lab/: copied 00_demo.py from notebooks/ (git ignores lab/; tweak there)\n"
    copy.write_text(DEMO.replace("lr = 0.1", "lr = 0.5"))  # the tweak, autosaved
    assert lab.scratch_copies(clone) == ([], [copy])
    assert copy.read_text() == DEMO.replace("lr = 0.1", "lr = 0.5")
    assert lab.main(clone) == 0
    assert capsys.readouterr().out.startswith("lab/: kept 00_demo.py, which differs from notebooks/ (your tweaks")
    assert _git(clone, "status", "--porcelain") == "" and not source_commit(clone)[0].endswith("-dirty")
    with pytest.raises(FileNotFoundError, match=r"^no notebooks/\[0-9\]\[0-9\]_\*\.py under "):
        lab.scratch_copies(clone / "lab")


def test_a_lab_copy_says_it_is_the_copy():
    src = ("x = 1\n# Tweak these in your copy, lab/05_a.py (`make lab`); a change here is the new default, "
           "to commit.\ny = 2\n")
    assert lab.lab_text(src) == ("x = 1\n# Your copy (git ignores lab/): tweak these here; notebooks/05_a.py keeps the "
                                 "defaults.\ny = 2\n")
    assert lab.lab_text("x = 1\n") == "x = 1\n"
    for source in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.py")):
        assert "# Your copy (git ignores lab/)" in lab.lab_text(source.read_text(encoding="utf-8")), source.name


def test_a_lab_copy_is_never_published(clone, capsys):
    lab.scratch_copies(clone)
    copy = clone / "lab" / "00_demo.py"
    copy.write_text(DEMO.replace("lr = 0.1", "lr = 0.5"))
    assert not source_commit(clone)[0].endswith("-dirty")  # git ignores it: the tree is clean
    err = _publish_error(capsys, copy)
    assert err == (f"error: refusing to publish {copy}: only notebooks/00_demo.py, committed, publishes to "
                   f"figures/00_demo/; run it without --publish (outputs then go to "
                   f"{clone / 'build' / 'cpu' / 'figures' / '00_demo'}/)")
    assert not (clone / "build").exists()


def test_a_jupyter_run_of_a_lab_copy_is_stamped_as_the_copy_and_stays_under_build(clone, monkeypatch):
    lab.scratch_copies(clone)
    monkeypatch.setenv("JPY_SESSION_NAME", str(clone / "lab" / "00_demo.py"))  # what jupyter_server sets
    out = Outputs("00_demo", "cpu", {"lr": 0.5}, seeds=[0], root=clone)
    assert out.provenance()["source"] == "lab/00_demo.py"
    assert out.dir == clone / "build" / "cpu" / "figures" / "00_demo"
    out.discard()
    monkeypatch.setenv("JPY_SESSION_NAME", "/elsewhere/00_demo.py")
    assert Outputs("00_demo", "cpu", {}, seeds=[0], root=clone).provenance()["source"] == "notebooks/00_demo.py"
