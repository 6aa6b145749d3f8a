"""EMA kernel benchmark: the fast path against its memory floor and against the plain recurrence.

``python benchmarks/bench_ema.py`` (part of ``make bench``) times, in one run at
(B, T, D) = (8, 1024, 768) with the paper's 3 alphas (S = 3):

- forward+backward of :func:`paper_lib.ema.ema_traces` for every ``--chunks`` size (8, 16, 32, 64);
- the memory floor the way a kernel author reports it: the time to read and write the fast
  path's tensors once. Forward reads ``x`` (B, T, D) and writes the traces (B, T, S, D); backward
  reads their gradient (B, T, S, D) and writes ``grad x`` (B, T, D): ``2 B T D (S + 1)`` floats
  moved, which is one ``dst.copy_(src)`` of ``B T D (S + 1)`` floats into a buffer allocated beforehand;
- forward+backward of :func:`paper_lib.ema.ema_reference` under autograd (the plain recurrence).

Every method is timed round by round (interleaved), median over ``--repeats``. Writes
``figures/bench/ema.csv``: ``method, chunk, B, T, D, n_alphas, repeats, median_s, min_s,
x_floor`` (median over the floor's median) and ``x_slower_than_fast`` (over the fastest chunk's
median), plus the 1-minute load average. Only ratios travel across machines. The fastest chunk
is what ``paper_lib.ema.DEFAULT_CHUNK`` should be.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import pandas as pd
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cli import OneLineParser, bench_outputs, check_publishable, positive  # noqa: E402  (benchmarks/_cli.py)

from paper_lib.ema import DEFAULT_CHUNK, PAPER_ALPHAS, ema_reference, ema_traces  # noqa: E402
from paper_lib.pipeline.threads import machine  # noqa: E402


def bench(B: int = 8, T: int = 1024, D: int = 768, chunks: tuple[int, ...] = (8, 16, 32, 64), repeats: int = 5,
          ref_repeats: int = 3, seed: int = 0) -> pd.DataFrame:
    """Time every method (see the module docstring); one row per method and chunk size."""
    S = len(PAPER_ALPHAS)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, D, generator=g).requires_grad_()
    gy = torch.randn(B, T, S, D, generator=g)                         # a dense upstream gradient
    src = torch.randn(B * T * D * (S + 1), generator=g)
    dst = torch.empty_like(src)

    def fast(chunk):
        def run():
            x.grad = None
            ema_traces(x, PAPER_ALPHAS, chunk_size=chunk).backward(gy)
        return run

    def reference():
        x.grad = None
        ema_reference(x, PAPER_ALPHAS).backward(gy)

    def floor():
        dst.copy_(src)

    methods = {("memory floor: copy of B*T*D*(S+1) floats", 0): floor}
    methods.update({("fast (ema_traces, fwd+bwd)", c): fast(c) for c in chunks})
    times = {key: [] for key in methods}
    for fn in methods.values():
        fn()                                                            # warm-up
    for _ in range(repeats):
        for key, fn in methods.items():
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
    ref_key = ("reference recurrence under autograd (fwd+bwd)", DEFAULT_CHUNK)
    times[ref_key] = []
    for _ in range(ref_repeats):
        t0 = time.perf_counter()
        reference()
        times[ref_key].append(time.perf_counter() - t0)
    floor_s = statistics.median(times[("memory floor: copy of B*T*D*(S+1) floats", 0)])
    fastest = min(statistics.median(times[("fast (ema_traces, fwd+bwd)", c)]) for c in chunks)
    rows = [{"method": m, "chunk": c or None, "B": B, "T": T, "D": D, "n_alphas": S, "repeats": len(t),
             "median_s": statistics.median(t), "min_s": min(t), "x_floor": statistics.median(t) / floor_s,
             "x_slower_than_fast": statistics.median(t) / fastest} for (m, c), t in times.items()]
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="bench_ema.py", description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=positive, default=8)
    ap.add_argument("--T", type=positive, default=1024)
    ap.add_argument("--D", type=positive, default=768)
    ap.add_argument("--chunks", type=positive, nargs="+", default=[8, 16, 32, 64])
    ap.add_argument("--repeats", type=positive, default=7)
    ap.add_argument("--ref-repeats", type=positive, default=3)
    args = ap.parse_args(argv)
    check_publishable()
    load = round(os.getloadavg()[0], 2)
    df = bench(args.B, args.T, args.D, tuple(args.chunks), args.repeats, args.ref_repeats)
    df["load_avg"] = load
    params = {**vars(args), "alphas": list(PAPER_ALPHAS), "torch": torch.__version__,
              "threads": torch.get_num_threads(), **machine(), "load_avg_before": load, "load_avg_after": round(os.getloadavg()[0], 2)}
    out = bench_outputs(params, "benchmarks/bench_ema.py")
    path = out.save_data(df, "ema")
    out.finish()  # the new folder replaces the previous run's (figures/bench/ only with PAPER_LIB_PUBLISH=1)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    fast = df[df.method.str.startswith("fast")]
    best = fast.loc[fast.median_s.idxmin()]
    ref = df[df.method.str.startswith("reference")].iloc[0]
    print(f"\nfastest chunk {int(best.chunk)}: {best.x_floor:.1f}x the memory floor; the reference recurrence is "
          f"{ref.x_slower_than_fast:.1f}x slower (DEFAULT_CHUNK is {DEFAULT_CHUNK}) -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
