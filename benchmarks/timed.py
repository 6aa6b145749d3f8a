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
and exits with ``128 + signal``. Our design: the paper is silent.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("notebook", "profile", "wall_s", "cpu_s", "threads", "load_avg", "status")


def children_cpu_s() -> float:
    """CPU seconds (user + system) of every finished child process of this one, and theirs."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_timed(cmd: list[str], env: dict | None = None) -> tuple[int, float, float, float, list[int]]:
    """Run ``cmd`` to its end, whatever signals arrive meanwhile; return ``(exit status, wall seconds,
    CPU seconds, 1-minute load at start, the signals that arrived)``. SIGTERM and SIGHUP are passed on
    to ``cmd``; SIGINT is not (a Ctrl-C reaches the whole process group), and nothing kills it."""
    load = os.getloadavg()[0]
    cpu0, t0 = children_cpu_s(), time.perf_counter()
    proc, got = subprocess.Popen(cmd, env=env), []

    def forward(signum, _frame):
        got.append(signum)
        if signum != signal.SIGINT and proc.poll() is None:
            proc.send_signal(signum)

    caught = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    old = {s: signal.signal(s, forward) for s in caught}
    try:
        rc = proc.wait()
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    return rc, time.perf_counter() - t0, children_cpu_s() - cpu0, load, got


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
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
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
