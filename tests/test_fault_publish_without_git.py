"""Fault kind: publishing when git cannot say which commit the sources are.

A docker bind mount owned by another user (git's "dubious ownership"), no git on PATH, or a ZIP
download without ``.git``: ``--publish`` and ``PAPER_LIB_PUBLISH=1`` refuse in one line that
says why and how to run without publishing, and nothing stamped ``"unknown"`` reaches ``figures/``.
"""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from paper_lib.pipeline.provenance import Outputs, source_commit
from paper_lib.pipeline.runner import main

DEMO = '# %% tags=["parameters"]\nprofile = "cpu"\n\n# %%\nx = 1\n'
DUBIOUS = ("fatal: detected dubious ownership in repository at '{root}'\n"
           "To add an exception for this directory, call:\n\n\tgit config --global --add safe.directory {root}\n")


@pytest.fixture()
def zip_download(tmp_path, monkeypatch) -> Path:
    """A checkout without ``.git`` (a ZIP download); git is told not to look above ``tmp_path``."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "companion"
    (root / "notebooks").mkdir(parents=True)
    (root / "notebooks" / "00_demo.py").write_text(DEMO)
    return root


def _fake_git(folder: Path, stderr: str, status: int = 128) -> None:
    """Put a ``git`` on PATH that answers every command as git does in a foreign-owned checkout."""
    folder.mkdir()
    git = folder / "git"
    git.write_text(f"#!/bin/sh\ncat >&2 <<'END'\n{stderr}END\nexit {status}\n")
    git.chmod(git.stat().st_mode | stat.S_IXUSR)


def _publish_error(capsys, root: Path) -> str:
    assert main([str(root / "notebooks" / "00_demo.py"), "--profile", "cpu", "--publish"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert not (root / "figures").exists() and not (root / "build").exists()  # refused before anything ran
    return err


def test_publish_refused_in_a_zip_download_without_git_metadata(zip_download, capsys):
    err = _publish_error(capsys, zip_download)
    assert err == ("error: refusing to publish to figures/00_demo/: the commit of the sources cannot be determined "
                   "(git: not a git repository (or any of the parent directories): .git); run from a git clone, "
                   "or run without publishing (without --publish or PAPER_LIB_PUBLISH=1; outputs then go to "
                   "build/<profile>/figures/)")


def test_publish_refused_when_git_reports_dubious_ownership(zip_download, capsys, monkeypatch, tmp_path):
    _fake_git(tmp_path / "bin", DUBIOUS.format(root=zip_download))
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    err = _publish_error(capsys, zip_download)
    assert err.startswith("error: refusing to publish to figures/00_demo/: the commit of the sources cannot be "
                          f"determined (git: detected dubious ownership in repository at '{zip_download}'); ")
    assert err.endswith("or run without publishing (without --publish or PAPER_LIB_PUBLISH=1; outputs then go to "
                        "build/<profile>/figures/)")


def test_publish_refused_without_git_on_path(zip_download, capsys, monkeypatch, tmp_path):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    err = _publish_error(capsys, zip_download)
    assert "the commit of the sources cannot be determined (git is not on PATH); " in err


def test_a_script_publishing_with_the_environment_variable_is_refused_too(zip_download, monkeypatch):
    """benchmarks/*.py publish through Outputs with PAPER_LIB_PUBLISH=1 (make bench)."""
    monkeypatch.setenv("PAPER_LIB_PUBLISH", "1")
    with pytest.raises(ValueError) as err:
        Outputs("bench", "cpu", {}, seeds=[0], root=zip_download, source="benchmarks/bench_ema.py")
    assert str(err.value).startswith("refusing to publish to figures/: the commit of the sources cannot be "
                                     "determined (git: not a git repository")
    assert not (zip_download / "figures").exists()
    monkeypatch.delenv("PAPER_LIB_PUBLISH")
    out = Outputs("bench", "cpu", {}, seeds=[0], root=zip_download)  # not publishing: allowed, under build/
    assert out.dir == zip_download / "build" / "cpu" / "figures" / "bench" and out.commit == "unknown"
    out.discard()


def test_source_commit_gives_gits_reason_and_the_commit_stays_unknown(zip_download):
    assert source_commit(zip_download)[0] == "unknown"
    commit, reason = source_commit(zip_download)
    assert commit == "unknown" and reason == "git: not a git repository (or any of the parent directories): .git"
    subprocess.run(["git", "init", "-q"], cwd=zip_download, check=True)  # a clone without a commit yet
    commit, reason = source_commit(zip_download)
    assert commit == "unknown" and reason.startswith("git: ") and "commits" in reason


def test_a_benchmark_refuses_before_measuring_when_git_cannot_give_the_commit(monkeypatch, capsys):
    from pathlib import Path

    from paper_lib.pipeline import provenance

    bench = Path(__file__).resolve().parent.parent / "benchmarks"
    monkeypatch.syspath_prepend(str(bench))
    import _cli

    monkeypatch.setenv("PAPER_LIB_PUBLISH", "1")
    monkeypatch.setattr(provenance, "source_commit", lambda *a, **k: ("unknown", "git is not on PATH"))
    with pytest.raises(SystemExit) as stop:
        _cli.check_publishable()
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing to publish to figures/bench/" in err and "git is not on PATH" in err
    monkeypatch.delenv("PAPER_LIB_PUBLISH")
    _cli.check_publishable()                                  # not publishing: nothing to check
    assert capsys.readouterr().err == ""
