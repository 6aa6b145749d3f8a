"""EMA kernel benchmark: forward+backward of the fast path against the plain recurrence.

Writes ``figures/bench/ema.csv`` (and its provenance): the median time of forward+backward
of :func:`paper_lib.ema.ema_traces` and of :func:`paper_lib.ema.ema_reference` under
autograd, and of ``x.clone()`` on the same tensor as a memory floor, all measured in one run
at (B, T, D) = (8, 1024, 768) with the paper's 3 alphas. Only the ratios are meaningful
across machines. ``python benchmarks/bench_ema.py --help`` for the knobs.
"""
from __future__ import annotations

import argparse
import statistics
import time

import pandas as pd
import torch

from paper_lib.ema import PAPER_ALPHAS, ema_reference, ema_traces
from paper_lib.pipeline.provenance import Outputs


def _time(fn, repeats: int) -> list[float]:
    fn()  # warm-up
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def bench(B: int = 8, T: int = 1024, D: int = 768, repeats: int = 5, ref_repeats: int = 3,
          seed: int = 0) -> pd.DataFrame:
    """Time the three methods; returns one row per method with seconds and ratios.

    Columns: ``method``, ``B``, ``T``, ``D``, ``n_alphas``, ``repeats``, ``median_s``,
    ``min_s`` (seconds), ``x_slower_than_fast`` (median ratio to the fast path).
    """
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, T, D, generator=g).requires_grad_()
    gy = torch.randn(B, T, len(PAPER_ALPHAS), D, generator=g)  # a dense upstream gradient

    def fast():
        x.grad = None
        ema_traces(x, PAPER_ALPHAS).backward(gy)

    def reference():
        x.grad = None
        ema_reference(x, PAPER_ALPHAS).backward(gy)

    def clone():
        with torch.no_grad():
            x.clone()

    times = {"fast (ema_traces, fwd+bwd)": _time(fast, repeats),
             "reference recurrence under autograd (fwd+bwd)": _time(reference, ref_repeats),
             "x.clone() (memory floor)": _time(clone, repeats)}
    fast_median = statistics.median(times["fast (ema_traces, fwd+bwd)"])
    rows = [{"method": m, "B": B, "T": T, "D": D, "n_alphas": len(PAPER_ALPHAS), "repeats": len(t),
             "median_s": statistics.median(t), "min_s": min(t),
             "x_slower_than_fast": statistics.median(t) / fast_median} for m, t in times.items()]
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=8)
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--D", type=int, default=768)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ref-repeats", type=int, default=3)
    args = ap.parse_args()
    params = {**vars(args), "alphas": list(PAPER_ALPHAS), "torch": torch.__version__,
              "threads": torch.get_num_threads()}
    df = bench(args.B, args.T, args.D, args.repeats, args.ref_repeats)
    out = Outputs("bench", "cpu", params, seeds=[0], source="benchmarks/bench_ema.py")
    path = out.save_data(df, "ema")
    out.finish()  # the new folder replaces the previous run's (figures/bench/ only with PAPER_LIB_PUBLISH=1)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    ratio = df.loc[1, "x_slower_than_fast"]
    print(f"\nfast path is {ratio:.1f}x faster than the reference under autograd (target >= 20x) -> {path}")


if __name__ == "__main__":
    main()
