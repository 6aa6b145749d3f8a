"""Run one notebook through the runner and append its cost to ``build/timing.csv``.

``python benchmarks/timed.py notebooks/01_grammar_probe.py --profile cpu [-p NAME VALUE ...]``
runs ``python -m paper_lib.pipeline.runner`` with the same arguments in a child process and
appends one row ``notebook, profile, wall_s, cpu_s, threads, load_avg``: wall-clock seconds,
CPU seconds of the runner and its kernel (user + system, every thread), the notebook's
``n_threads`` (the ``-p n_threads`` given, else :func:`paper_lib.pipeline.threads.default_threads`),
and the 1-minute load average when the run started (what else the machine was doing).
``make all`` runs every notebook this way. Exits with the runner's status; a failed run is
recorded too (``wall_s`` then says how long it took to fail), and so is an interrupted one: on
Ctrl-C, SIGTERM or SIGHUP this process waits for the runner to clean up (SIGTERM and SIGHUP are
passed on to it; a Ctrl-C reaches it from the terminal already), records ``interrupted (SIGINT)``
and exits with ``128 + signal``.

``--record PATH`` (``make``'s recipe, ``build/executed/<profile>/<notebook>.inputs``): the run holds
``PATH`` with the suffix ``.lock`` (:func:`held_lock`) from before it reads its inputs until its record
is in place, so two ``make`` runs in one clone never run one notebook at once nor share a record file;
the second says in one line which run it waits for, and once that run is done it ends at once if the
record it left is current (else it runs). The record (:func:`paper_lib.pipeline.deps.inputs`, the
sha256 of every file the run reads, taken as it starts) replaces ``PATH`` only once the run
succeeded. Our design: the paper is silent.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("notebook", "profile", "wall_s", "cpu_s", "threads", "load_avg", "status")


def children_cpu_s() -> float:
    """CPU seconds (user + system) of every finished child process of this one, and theirs."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_timed(cmd: list[str], env: dict | None = None) -> tuple[int, float, float, float, list[int]]:
    """Run ``cmd`` to its end, whatever signals arrive meanwhile; return ``(exit status, wall seconds,
    CPU seconds, 1-minute load at start, the signals that arrived)``. SIGTERM and SIGHUP are passed on
    to ``cmd``; SIGINT is not (a Ctrl-C reaches the whole process group), and nothing kills it. A signal
    this process was started ignoring stays ignored, and so does ``cmd``, which inherits that."""
    load = os.getloadavg()[0]
    cpu0, t0 = children_cpu_s(), time.perf_counter()
    proc, got = subprocess.Popen(cmd, env=env), []

    def forward(signum, _frame):
        got.append(signum)
        if signum != signal.SIGINT and proc.poll() is None:
            proc.send_signal(signum)

    caught = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) != signal.SIG_IGN]
    old = {s: signal.signal(s, forward) for s in caught}  # one it was started ignoring (nohup's SIGHUP): ignored
    try:
        rc = proc.wait()
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    return rc, time.perf_counter() - t0, children_cpu_s() - cpu0, load, got


@contextlib.contextmanager
def held_lock(path: Path, who: str) -> Iterator[bool]:
    """Run the block holding an exclusive ``fcntl.flock`` on ``path`` (the OS releases it when this process
    ends, however it ends), with this run's pid and command written in the file; yields whether it had to
    wait. A run that finds it held names the holder in one line on stderr (``who``: what waits) and waits."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            waited = False
        except BlockingIOError:
            f.seek(0)
            print(f"{who}: another run holds {path} ({f.read().strip() or 'pid unknown'}); waiting for it to end",
                  file=sys.stderr, flush=True)
            fcntl.flock(f, fcntl.LOCK_EX)
            waited = True
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}: {' '.join([Path(sys.executable).name, *sys.argv])}\n")
        f.flush()
        yield waited


def append_row(path: Path, row: dict) -> None:
    """Append ``row`` to the CSV at ``path`` (header written when the file is new)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with path.open("a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        if new:
            w.writeheader()
        w.writerow(row)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="notebooks/NN_name.py")
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    ap.add_argument("--publish", action="store_true", help="passed to the runner")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "timing.csv")
    ap.add_argument("--record", type=Path, help="make's record of the run's inputs, replaced once it succeeded")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.record is None:
        return timed(args)
    from paper_lib.pipeline import deps
    from paper_lib.pipeline.atomic import write_json

    name, done = Path(args.source).stem, args.record.with_suffix(".ipynb")
    try:
        with held_lock(args.record.with_suffix(".lock"), name) as waited:
            if waited and done.is_file() and not deps.stale(args.record.parent, [args.source]):
                print(f"{name}: made by that run meanwhile from the same sources; nothing to do", flush=True)
                return 0
            new = write_json(args.record.with_name(f".{args.record.name}.{os.getpid()}"), deps.inputs(args.source))
            try:
                rc = timed(args)
                if rc == 0:
                    os.replace(new, args.record)
                return rc
            finally:
                new.unlink(missing_ok=True)
    except KeyboardInterrupt:  # while it waited for the other run (during its own, run_timed takes the signals)
        print(f"error: {name}: interrupted by SIGINT before its run began", file=sys.stderr)
        return 128 + signal.SIGINT


def timed(args: argparse.Namespace) -> int:
    """Run the runner as ``args`` say, append the timing row, return the exit status."""
    from paper_lib.pipeline.threads import default_threads

    params = dict(args.param)
    threads = json.loads(params["n_threads"]) if params.get("n_threads", "null") != "null" else None
    cmd = [sys.executable, "-m", "paper_lib.pipeline.runner", args.source, "--profile", args.profile]
    for name, value in args.param:
        cmd += ["-p", name, value]
    if args.publish:
        cmd.append("--publish")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    rc, wall, cpu, load, got = run_timed(cmd, env)
    status = f"interrupted ({signal.Signals(got[0]).name})" if got else "ok" if rc == 0 else f"failed ({rc})"
    append_row(args.out, {"notebook": Path(args.source).stem, "profile": args.profile, "wall_s": round(wall, 2),
                          "cpu_s": round(cpu, 2), "threads": threads or default_threads(args.profile),
                          "load_avg": round(load, 2), "status": status})
    if got:
        return 128 + got[0]
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
