"""Execute a jupytext notebook headlessly with papermill (what ``make all`` runs).

``python -m paper_lib.notebooks notebooks/01_grammar_probe.py --profile cpu`` converts the
``py:percent`` source to ``build/notebooks/01_grammar_probe.ipynb``, executes it with the
papermill parameter ``profile`` injected after the cell tagged ``parameters``, and writes
the executed notebook to ``build/executed/<profile>/01_grammar_probe.ipynb`` only when it
ran to the end (a failed run leaves no executed notebook, so ``make`` reruns it).
Our design: the paper is silent.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from .atomic import atomic_path
from .profiles import check_profile
from .threads import WAIT_POLICY_ENV

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_notebook(source: str | Path, profile: str, parameters: dict[str, Any] | None = None,
                 build: Path | None = None) -> Path:
    """Convert and execute one notebook; return the executed ``.ipynb`` path.

    Args:
        source: a ``notebooks/NN_name.py`` jupytext file.
        profile: ``smoke``, ``cpu`` or ``paper``.
        parameters: extra papermill parameters (must exist in the ``parameters`` cell).
        build: the build folder (default ``<repo>/build``).

    The kernel imports ``paper_lib`` from the source's own checkout (its folder's parent is
    put first on ``PYTHONPATH``), whatever environment runs it.

    Raises:
        ValueError: unknown profile, or a parameter the ``parameters`` cell does not define.
        FileNotFoundError: no such source.
        papermill.PapermillExecutionError: a cell failed (its traceback is in the message).
    """
    import os

    import jupytext
    import papermill as pm

    check_profile(profile)
    source = Path(source).resolve()
    if not source.is_file():
        raise FileNotFoundError(f"no notebook source at {source}")
    build = Path(build) if build is not None else REPO_ROOT / "build"
    name = source.stem
    ipynb = build / "notebooks" / f"{name}.ipynb"
    executed = build / "executed" / profile / f"{name}.ipynb"
    with atomic_path(ipynb) as tmp:
        nb = jupytext.read(source)
        nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
        jupytext.write(nb, tmp, fmt="ipynb")
    known = pm.inspect_notebook(str(ipynb))
    unknown = sorted(set(parameters or {}) - set(known))
    if unknown:
        raise ValueError(f"unknown notebook parameter(s) {', '.join(unknown)} for {name}; "
                         f"allowed: {', '.join(known)}")
    executed.parent.mkdir(parents=True, exist_ok=True)
    checkout = str(source.parent.parent)
    # issue 14 (pipeline/threads.py): the kernel's OpenMP threads sleep while they wait for a core.
    for key, value in WAIT_POLICY_ENV.items():
        os.environ.setdefault(key, value)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = checkout + (os.pathsep + old if old else "")
    try:
        with atomic_path(executed) as tmp:
            pm.execute_notebook(str(ipynb), str(tmp), parameters={"profile": profile, **(parameters or {})},
                                kernel_name="python3", cwd=str(source.parent), progress_bar=False)
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    return executed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="notebooks/NN_name.py")
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="override a parameter of the notebook's parameters cell; VALUE is read as "
                         "JSON (e.g. -p seeds '[3, 4]'), else as a string")
    args = ap.parse_args(argv)
    params = {}
    for key, value in args.param:
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    t0 = time.perf_counter()
    print(f"[{Path(args.source).stem}] running at profile {args.profile} ...", flush=True)
    try:
        out = run_notebook(args.source, args.profile, params)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"[{Path(args.source).stem}] done in {time.perf_counter() - t0:.0f} s -> {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
