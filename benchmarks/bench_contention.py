"""Contention benchmark: a notebook idle and beside a competing CPU-bound load, old vs tuned threads.

``python benchmarks/bench_contention.py`` (``make bench-contention``) runs notebook 01 at the
smoke profile through the runner (``benchmarks/timed.py``'s timing: wall seconds and CPU seconds
of the runner and its kernel) in four settings, interleaved, each ``--repeats`` times:

- ``load``: ``idle`` (nothing started by us) or ``loaded`` (we start ``--load-threads``
  single-threaded busy loops, separate processes, for the length of the run);
- ``threading``: ``default`` is the libraries' defaults: 2 torch threads, numpy's
  BLAS and scikit-learn's OpenMP at 2 (their default on a 2-core machine), OpenMP threads that
  spin about 3 ms while waiting (libgomp's default, ``GOMP_SPINCOUNT=300000``); it runs through
  ``n_threads=2``, so the allocator is tuned as in ``tuned``, which is
  :func:`paper_lib.pipeline.threads.set_threads` with the notebook's default ``n_threads`` and
  ``OMP_WAIT_POLICY=PASSIVE`` (what the runner sets). ``--extra-threads 2`` adds a
  ``tuned`` run at 2 threads, to tell the thread count from the wait policy.

Writes ``figures/bench/contention.csv``: ``notebook, load, threading, threads, wall_s, cpu_s,
wall_vs_idle, cpu_vs_idle, load_avg`` (medians over repeats; the ratios divide by the same
threading's idle run; ``load_avg`` is the 1-minute load average before the run, other people's
work included). Targets: loaded wall <= about 2x idle, CPU <= 1.5x. Our design.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cli import OneLineParser, bench_outputs, check_publishable, positive  # noqa: E402  (benchmarks/_cli.py)
from timed import run_timed  # noqa: E402  (benchmarks/timed.py)

BUSY_LOOP = "while True:\n    pass\n"


def start_load(n: int) -> list[subprocess.Popen]:
    """Start ``n`` single-threaded CPU-bound processes (pure Python busy loops)."""
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(n)]


def stop_load(procs: list[subprocess.Popen]) -> None:
    """Stop the processes of :func:`start_load` (by their own ids)."""
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


def one_run(notebook: Path, threading: str, threads: int | None, load_threads: int) -> dict:
    """Run ``notebook`` at smoke once; return wall and CPU seconds and the load average before."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        env.pop(key, None)
    cmd = [sys.executable, "-m", "paper_lib.pipeline.runner", str(notebook), "--profile", "smoke"]
    if threading == "default":
        env["GOMP_SPINCOUNT"] = "300000"  # libgomp's spin when OMP_WAIT_POLICY is unset: overrides PASSIVE
        cmd += ["-p", "n_threads", "2"]
        label = 2
    else:
        if threads is not None:
            cmd += ["-p", "n_threads", str(threads)]
        from paper_lib.pipeline.threads import default_threads
        label = threads or default_threads("smoke")
    load = start_load(load_threads) if load_threads else []
    try:
        rc, wall, cpu, load_avg, _ = run_timed(cmd, env)
    finally:
        stop_load(load)
    if rc != 0:
        raise SystemExit(f"error: {notebook.stem} failed at smoke ({threading}, exit {rc})")
    return {"threads": label, "wall_s": wall, "cpu_s": cpu, "load_avg": load_avg}


def bench(notebook: Path, repeats: int, load_threads: int, extra_threads: list[int]) -> pd.DataFrame:
    """Every (load, threading) setting ``repeats`` times, interleaved; medians per setting."""
    settings = [("default", None), ("tuned", None)] + [("tuned", n) for n in extra_threads]
    rows = []
    for r in range(repeats):
        for load in ("idle", "loaded"):
            for threading, threads in settings:
                res = one_run(notebook, threading, threads, load_threads if load == "loaded" else 0)
                print(f"[{r}] {load:6s} {threading:7s} threads={res['threads']}: wall {res['wall_s']:.1f} s, "
                      f"cpu {res['cpu_s']:.1f} s, load avg {res['load_avg']:.2f}", flush=True)
                rows.append({"notebook": notebook.stem, "load": load, "threading": threading, **res})
    df = (pd.DataFrame(rows).groupby(["notebook", "load", "threading", "threads"], as_index=False, sort=False)
          .agg(wall_s=("wall_s", "median"), cpu_s=("cpu_s", "median"), load_avg=("load_avg", "median")))
    idle = df[df.load == "idle"].set_index(["threading", "threads"])
    key = list(zip(df.threading, df.threads, strict=True))
    df["wall_vs_idle"] = [w / idle.loc[k, "wall_s"] for w, k in zip(df.wall_s, key, strict=True)]
    df["cpu_vs_idle"] = [c / idle.loc[k, "cpu_s"] for c, k in zip(df.cpu_s, key, strict=True)]
    cols = ["notebook", "load", "threading", "threads", "wall_s", "cpu_s", "wall_vs_idle", "cpu_vs_idle", "load_avg"]
    return df[cols].round(3)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notebook", type=Path, default=ROOT / "notebooks" / "01_grammar_probe.py")
    ap.add_argument("--repeats", type=positive, default=1)
    ap.add_argument("--load-threads", type=positive, default=2, help="busy loops started beside the notebook")
    ap.add_argument("--extra-threads", type=positive, nargs="*", default=[],
                    help="also run the tuned setting at these thread counts")
    args = ap.parse_args(argv)
    check_publishable()
    if not args.notebook.is_file():
        ap.error(f"no notebook source at {args.notebook}")
    df = bench(args.notebook, args.repeats, args.load_threads, args.extra_threads)
    params = {"repeats": args.repeats, "load_threads": args.load_threads, "cores": os.cpu_count(),
              "load_avg_after": round(os.getloadavg()[0], 2)}
    out = bench_outputs(params, "benchmarks/bench_contention.py")
    path = out.save_data(df, "contention")
    out.finish()  # figures/bench/ only with PAPER_LIB_PUBLISH=1 (make bench-contention)
    print(df.to_string(index=False))
    print(f"-> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
