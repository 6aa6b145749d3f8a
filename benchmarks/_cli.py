"""Shared command-line pieces of the benchmarks: one-line argument errors, positive integers, missing packages."""
from __future__ import annotations

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (``prog: error: ...``), exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def lacking(prog: str, needs: tuple[str, ...]) -> str | None:
    """One line naming the packages of ``needs`` (import names) that this Python lacks, for ``prog``; None if
    it has them all. Asked before they are imported, so that a lent device's Python without one gets this
    line instead of a ``ModuleNotFoundError`` traceback."""
    import importlib.util

    if missing := [m for m in needs if importlib.util.find_spec(m) is None]:
        return (f"{prog}: this Python ({sys.executable}) lacks {', '.join(missing)}; it needs {', '.join(needs)} "
                "(install them, or carry a folder holding them on PYTHONPATH)")
    return None


def positive(text: str) -> int:
    """An integer >= 1, else an argparse error naming the value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text}")
    return value


def bench_outputs(params: dict, source: str, profile: str = "cpu"):
    """``Outputs("bench", ...)`` whose staging folder starts with the other benchmarks' files, so that
    ``finish()`` (which replaces ``figures/bench/`` by the staging folder) keeps them."""
    import shutil

    from paper_lib.pipeline.provenance import Outputs

    out = Outputs("bench", profile, params, seeds=[0], source=source)
    stage = getattr(out, "_stage", out.dir)
    if out.dir.is_dir() and stage != out.dir:
        for f in out.dir.iterdir():
            if f.is_file():
                shutil.copy2(f, stage / f.name)
    return out


def check_publishable() -> None:
    """With ``PAPER_LIB_PUBLISH=1``, stop before measuring (one line, exit status 2) when the results
    could not be published: uncommitted sources, or a commit git cannot give
    (:func:`paper_lib.pipeline.provenance.check_clean`)."""
    from paper_lib.pipeline.provenance import check_clean, publishing, source_commit

    if publishing():
        commit, reason = source_commit()
        try:
            check_clean(commit, "figures/bench/", reason)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(2)
