"""Four levers on the CPU training step (levers 1-4 below), each against the path it replaces, interleaved in one run (part of ``make bench``).

``python benchmarks/bench_levers.py`` builds SPEN and the Transformer at the throughput benchmark's
sizes (notebook 03's cpu sizes: 4 blocks, d_model 128, vocabulary 2048; ``bench_throughput.lm_sizes``)
and times full AdamW training steps (forward, backward, optimizer) of ``--batch-tokens`` tokens at
every ``--seq-lens``, one thread, for each path (tokens per CPU second of the process, which on one
thread is the step's own time; wall time on a shared machine varied 5x between rounds):

- ``unfused``: the full ``(B, T, V)`` logits and ``F.cross_entropy`` (``model(x, y, return_logits=True)``);
- ``chunked``: lever 1, :func:`paper_lib.models.lm.linear_cross_entropy` (``model(x, y)``);
- ``chunked+gemm``: with lever 2 as well, SPEN's linear predictor and its mix's input as one GEMM
  over the traces (:meth:`paper_lib.models.spen.SPENBlock._linear_mix_in`; the Transformer has no
  such layer: its cell equals ``chunked``). The other paths set ``SPENBlock.fuse_linear_mix = False``;
- ``chunked+gemm+ffn``: with lever 3 as well, the sparse FFN's GELU and its gradient for the kept units
  only, selected on the pre-activation (:class:`paper_lib.models.sparse_ffn._KeptGELU`; SPEN only). The other
  paths set ``SparseFFN.fuse_gelu_mask = False`` (GELU over every unit, threshold, in-place mask);
- ``chunked+gemm+ffn+csr``: with lever 4 as well, the whole sparse FFN as one function whose GEMMs after
  the selection run over the kept units only, as sparse CSR products
  (:class:`paper_lib.models.sparse_ffn._KeptFFN`; SPEN only). The other paths set
  ``SparseFFN.sparse_gemms = False``.

Cells are interleaved round by round and the median over ``--rounds`` is kept, so a change in the
machine's load hits every cell alike; ``x_vs_previous`` is the median over rounds of each round's
ratio to the path before it in the list (the same model and seq_len), the lever's own gain. Peak
memory of a step: each cell once more in a fresh process, the growth of its peak resident set (``VmHWM``) over two steps beyond what the built
model and data already hold (MiB; the allocator's reuse makes it a bound, the same for every cell).

Writes ``figures/bench/levers.csv`` (``build/`` unless ``PAPER_LIB_PUBLISH=1``): ``model, seq_len, path,
tokens_per_cpu_s, x_vs_unfused, x_vs_previous, step_peak_mib, load_avg``. Our design: the paper is silent.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cli import OneLineParser, bench_outputs, check_publishable, positive  # noqa: E402  (benchmarks/_cli.py)
from bench_throughput import lm_sizes  # noqa: E402

from paper_lib.models.factory import build_model  # noqa: E402
from paper_lib.models.spen import SparseFFN, SPENBlock  # noqa: E402
from paper_lib.pipeline.threads import machine, set_threads  # noqa: E402

PATHS = ("unfused", "chunked", "chunked+gemm", "chunked+gemm+ffn", "chunked+gemm+ffn+csr")


def step_fn(kind: str, seq_len: int, path: str, batch_tokens: int, d_model: int = 128):
    """One AdamW training step of ``kind`` on fixed random tokens, through ``path``."""
    if path not in PATHS:
        raise ValueError(f"unknown path {path!r}; allowed: {', '.join(PATHS)}")
    sizes = lm_sizes(kind, d_model, seq_len)
    model = build_model(kind, seed=0, **sizes)
    x = torch.randint(0, sizes["vocab_size"], (max(1, batch_tokens // seq_len), seq_len + 1),
                      generator=torch.Generator().manual_seed(0))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)

    def step():
        SPENBlock.fuse_linear_mix = path in PATHS[2:]
        SparseFFN.fuse_gelu_mask = path in PATHS[3:]
        SparseFFN.sparse_gemms = path == PATHS[4]
        _, loss = model(x[:, :-1], x[:, 1:], return_logits=path == "unfused")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step, x[:, 1:].numel()


def _peak_rss_mib() -> float:
    """This process's peak resident set (MiB): ``VmHWM`` of /proc/self/status (reset by exec, unlike
    ``ru_maxrss``, which a child started from a big parent inherits), else ``ru_maxrss``."""
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _peak_child(kind: str, seq_len: int, path: str, batch_tokens: int) -> None:
    """In a fresh process: print the peak-RSS growth (MiB) of two steps over the built state."""
    set_threads(1)
    step, _ = step_fn(kind, seq_len, path, batch_tokens)
    before = _peak_rss_mib()
    step()
    step()
    print(json.dumps(_peak_rss_mib() - before))


def step_peak_mib(kind: str, seq_len: int, path: str, batch_tokens: int) -> float:
    """:func:`_peak_child` of one cell, run as a subprocess."""
    code = f"import bench_levers as b; b._peak_child({kind!r}, {seq_len}, {path!r}, {batch_tokens})"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(__file__).resolve().parent)])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, encoding="utf-8", env=env, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def bench_levers(seq_lens: list[int], batch_tokens: int, rounds: int,
                 models: tuple[str, ...] = ("spen", "transformer")) -> pd.DataFrame:
    """Median tokens per CPU second of every (model, seq_len, path), interleaved over ``rounds`` rounds."""
    cells = {}
    for T in seq_lens:
        for kind in models:
            for path in PATHS if kind == "spen" else PATHS[:2]:
                step, tokens = step_fn(kind, T, path, batch_tokens)
                step()                                                   # warm-up
                cells[(kind, T, path)] = (step, tokens, [])
    for r in range(rounds):
        for step, tokens, rates in cells.values():
            t0 = time.process_time()                                     # CPU time: one thread, so the
            step()                                                       # shared machine's load barely enters
            rates.append(tokens / (time.process_time() - t0))
        print(f"round {r + 1}/{rounds}: " + ", ".join(f"{k}@{T} {p} {v[2][-1]:.0f}" for (k, T, p), v in cells.items()),
              flush=True)
    rate = {key: statistics.median(v[2]) for key, v in cells.items()}

    def x_vs_previous(k, T, p):                                          # paired by round: robust to load drift
        if p == PATHS[0]:
            return 1.0
        prev = cells[(k, T, PATHS[PATHS.index(p) - 1])][2]
        return round(statistics.median(a / b for a, b in zip(cells[(k, T, p)][2], prev, strict=True)), 3)
    return pd.DataFrame([{"model": k, "seq_len": T, "path": p, "tokens_per_cpu_s": round(r, 1),
                          "x_vs_unfused": round(r / rate[(k, T, "unfused")], 3), "x_vs_previous": x_vs_previous(k, T, p)}
                         for (k, T, p), r in rate.items()])


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seq-lens", type=positive, nargs="+", default=[1024, 4096])
    ap.add_argument("--batch-tokens", type=positive, default=8192, help="tokens per timed step")
    ap.add_argument("--rounds", type=positive, default=7)
    ap.add_argument("--models", nargs="+", choices=["spen", "transformer"], default=["spen", "transformer"])
    args = ap.parse_args(argv)
    check_publishable()
    threads = set_threads(1)
    load = round(os.getloadavg()[0], 2)
    df = bench_levers(sorted(args.seq_lens), args.batch_tokens, args.rounds, tuple(args.models))
    df["step_peak_mib"] = [round(step_peak_mib(k, T, p, args.batch_tokens), 1)
                           for k, T, p in zip(df.model, df.seq_len, df.path, strict=True)]
    df["load_avg"] = load
    params = {**vars(args), "threads": threads, "torch": torch.__version__, **machine(), "load_avg_before": load,
              "load_avg_after": round(os.getloadavg()[0], 2)}
    out = bench_outputs(params, "benchmarks/bench_levers.py")
    path = out.save_data(df, "levers")
    out.finish()
    print(df.to_string(index=False))
    print(f"-> {path} (load average {load} before, {params['load_avg_after']} after)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
