"""Training throughput of SPEN against the matched Transformer, interleaved in one run.

``python benchmarks/bench_throughput.py`` (part of ``make bench``) builds SPEN and the
Transformer at notebook 03's cpu sizes (read from its settings: 4 blocks, vocabulary 2048, d_model 128
and 2 heads; ``--d-models`` adds widths, heads and the other widths keep notebook 03's ratios) and times full AdamW training
steps (forward, backward, optimizer) on random tokens, ``--batch-tokens`` tokens per step at every
``seq_len``. Steps of every (model, seq_len) are interleaved round by round, so a change in what
else the machine runs hits every cell alike; the median over rounds is reported. One thread
(``paper_lib.pipeline.threads.set_threads(1)``) unless ``--threads``.

Writes ``figures/bench/throughput.csv``: ``seq_len, model, d_model, tokens_per_s, spen_over_transformer,
spen_vs_shortest`` (SPEN's tokens/s over its own at the shortest length), ``clock`` (``process_time``,
the process's CPU time, on one thread; wall time otherwise), the model FLOP utilisation
(``flops_per_token`` counted by ``torch.utils.flop_counter`` with causal attention at half,
``gemm_peak_gflops`` the measured FP32 ``torch.mm`` peak on the same threads, ``mfu`` their ratio to the
measured rate; ``benchmarks/_flops.py``; ``active_flops_per_token`` and ``mfu_active`` count SPEN's FFN
after the selection over the kept units only: :func:`add_mfu`) and the 1-minute load average before the run; and ``figures/bench/sparse_ffn.csv``: forward+backward time of the sparse FFN's
selection options at (tokens, d_ff) = (4096, 4 d_model), all giving the same values and gradients:

- ``scatter``: topk, then the kept values scattered into a zero-filled (tokens, d_ff) tensor;
- ``mask_mul``: the ``k``-th value from ``topk`` as a threshold, ``a * (a >= kth)``;
- ``masked_fill_topk``: the same threshold, ``a.masked_fill_(a < kth, 0)`` in place;
- ``gather_rows``: only the ``k`` active rows of the output projection, ``F.embedding_bag`` with the
  kept values as weights (no dense hidden tensor into the projection);
- ``masked_fill_partition``: the in-place mask with the threshold from ``numpy.partition``
  (:func:`paper_lib.models.sparse_ffn.kth_largest`; ``SparseFFN``'s dense path, ``fuse_gelu_mask = False``);
- ``kept_gelu``: the selection on the pre-activation and GELU with its gradient for the kept units only
  (lever 3 of ``bench_levers.py``: :class:`paper_lib.models.sparse_ffn._KeptGELU`; ``sparse_gemms = False``);
- ``kept_ffn_csr``: lever 3's selection and every GEMM after it over the kept units only, as sparse CSR
  products (lever 4 of ``bench_levers.py``: :class:`paper_lib.models.sparse_ffn._KeptFFN`; ``SparseFFN``'s default on the CPU).

Targets: SPEN >= the Transformer at seq_len 1024, >= 2x at 4096, SPEN flat within 20%
from 256 to 8192. The Transformer is timed up to ``--transformer-max`` tokens (attention's cost
grows with the length). Our design: the paper is silent.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cli import OneLineParser, bench_outputs, check_publishable, positive  # noqa: E402  (benchmarks/_cli.py)
from _flops import cpu_gemm_peak, training_flops_per_token  # noqa: E402  (benchmarks/_flops.py)

from paper_lib.experiments import spen_train  # noqa: E402
from paper_lib.lm_recipe import model_config  # noqa: E402
from paper_lib.models.factory import build_model  # noqa: E402
from paper_lib.models.spen import SparseFFN, SPENConfig  # noqa: E402
from paper_lib.pipeline.threads import (
    machine,  # noqa: E402
    set_threads,  # noqa: E402
)


def lm_sizes(kind: str, d_model: int, seq_len: int) -> dict:
    """Notebook 03's cpu sizes (``spen_train.settings_for("cpu")``: vocabulary, blocks, heads, widths),
    scaled to width ``d_model`` (heads, bottleneck and FFN widths keep their ratio to ``d_model``);
    ``block_size`` = the longest length timed."""
    s = spen_train.settings_for("cpu")
    scale = d_model / s.spen.d_model
    sizes = {k: v for k, v in asdict(model_config(kind, s)).items() if k not in ("predictor", "n_head", "alphas")}
    sizes.update(d_model=d_model, block_size=seq_len, d_ff=max(8, round(sizes["d_ff"] * scale)))
    if kind == "transformer":
        sizes["n_head"] = max(1, round(s.transformer.n_head * scale))
    else:
        sizes["d_bottleneck"] = max(8, round(s.spen.d_bottleneck * scale))
    return sizes


def _step_fn(kind: str, d_model: int, seq_len: int, batch_tokens: int, seed: int = 0):
    """A closure that runs one AdamW training step of ``kind`` on fixed random tokens."""
    sizes = lm_sizes(kind, d_model, seq_len)
    model = build_model(kind, seed=seed, **sizes)
    g = torch.Generator().manual_seed(seed)
    b = max(1, batch_tokens // seq_len)
    x = torch.randint(0, sizes["vocab_size"], (b, seq_len + 1), generator=g)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
    model.train()

    def step():
        _, loss = model(x[:, :-1], x[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step, b * seq_len


def bench_throughput(seq_lens: list[int], d_models: list[int], batch_tokens: int, rounds: int,
                     transformer_max: int, clock=time.perf_counter) -> pd.DataFrame:
    """Median training tokens/s of each (d_model, seq_len, model), interleaved over ``rounds`` rounds,
    timed by ``clock`` (``time.process_time`` on one thread: the step's own CPU time)."""
    cells = {}
    for d_model in d_models:
        for T in seq_lens:
            for kind in ("spen", "transformer"):
                if kind == "transformer" and T > transformer_max:
                    continue
                step, tokens = _step_fn(kind, d_model, T, batch_tokens)
                step()  # warm-up
                cells[(d_model, T, kind)] = (step, tokens, [])
    for r in range(rounds):
        for step, tokens, rates in cells.values():
            t0 = clock()
            step()
            rates.append(tokens / (clock() - t0))
        print(f"round {r + 1}/{rounds}: " + ", ".join(f"{k}@{d},{T} {v[2][-1]:.0f}" for (d, T, k), v in cells.items()),
              flush=True)
    rows = [{"seq_len": T, "model": kind, "d_model": d, "tokens_per_s": statistics.median(v[2])}
            for (d, T, kind), v in cells.items()]
    df = pd.DataFrame(rows)
    rate = df.set_index(["d_model", "seq_len", "model"]).tokens_per_s
    df["spen_over_transformer"] = [rate[(d, T, "spen")] / rate[(d, T, "transformer")]
                                   if (d, T, "transformer") in rate.index else float("nan")
                                   for d, T in zip(df.d_model, df.seq_len, strict=True)]
    df["spen_vs_shortest"] = [rate[(d, T, "spen")] / rate[(d, min(seq_lens), "spen")]
                              for d, T in zip(df.d_model, df.seq_len, strict=True)]
    return df.round(3)


def add_mfu(df: pd.DataFrame, batch_tokens: int, peak: float) -> pd.DataFrame:
    """``df`` with ``flops_per_token`` (counted, :func:`_flops.training_flops_per_token`: causal attention
    at half; SPEN's sparse FFN counted as the model defines it, every GEMM dense (SPEN's 6.86M per token at
    the benchmark sizes): ``SparseFFN.sparse_gemms = False`` while counting), ``gemm_peak_gflops`` (``peak``, the measured
    FP32 torch.mm rate) and ``mfu`` = FLOPs per token x tokens/s / peak, each row's model at its width and
    length; ``active_flops_per_token`` and ``mfu_active``: the same with the five FFN GEMMs after the
    selection (the output projection and the four gradients, ``10 D F`` FLOPs a token a block) counted
    over the kept units only (``10 D k``), what lever 4 executes (the Transformer's equal its totals)."""
    flops, active = {}, {}
    for d, T, kind in zip(df.d_model, df.seq_len, df.model, strict=True):
        sizes = lm_sizes(kind, d, T)
        was, SparseFFN.sparse_gemms = SparseFFN.sparse_gemms, False        # count the dense definition
        try:
            flops[(d, T, kind)] = training_flops_per_token(lambda k=kind, s=sizes: build_model(k, seed=0, **s), T,
                                                           sizes["vocab_size"])["flops_per_token"]
        finally:
            SparseFFN.sparse_gemms = was
        active[(d, T, kind)] = flops[(d, T, kind)]
        if kind == "spen":
            cfg = SPENConfig(**{k: v for k, v in sizes.items() if k in SPENConfig.__dataclass_fields__})
            active[(d, T, kind)] -= cfg.n_layer * 10 * cfg.d_model * (cfg.d_ff - cfg.top_k)
    df = df.copy()
    keys = list(zip(df.d_model, df.seq_len, df.model, strict=True))
    df["flops_per_token"] = [flops[key] for key in keys]
    df["gemm_peak_gflops"] = round(peak / 1e9, 1)
    df["mfu"] = (df.flops_per_token * df.tokens_per_s / peak).round(3)
    df["active_flops_per_token"] = [active[key] for key in keys]
    df["mfu_active"] = (df.active_flops_per_token * df.tokens_per_s / peak).round(3)
    return df


def _ffn_options(ffn: SparseFFN):
    k = ffn.k

    def topk_kth(a):
        return a.detach().topk(k, dim=-1, sorted=False).values.amin(-1, keepdim=True)

    def scatter(x):
        a = F.gelu(ffn.fc(x))
        vals, idx = a.topk(k, dim=-1)
        return ffn.proj(torch.zeros_like(a).scatter(-1, idx, vals))

    def mask_mul(x):
        a = F.gelu(ffn.fc(x))
        return ffn.proj(a * (a >= topk_kth(a)))

    def masked_fill_topk(x):
        a = F.gelu(ffn.fc(x))
        return ffn.proj(a.masked_fill_(a < topk_kth(a), 0.0))

    def gather_rows(x):
        a = F.gelu(ffn.fc(x))
        vals, idx = a.topk(k, dim=-1, sorted=False)
        w = ffn.proj.weight.t()                                          # (F, D): row j = unit j's output
        return F.embedding_bag(idx, w, per_sample_weights=vals, mode="sum") + ffn.proj.bias

    def with_fuse(fuse, sparse_gemms=False):
        def run(x):
            SparseFFN.fuse_gelu_mask, SparseFFN.sparse_gemms = fuse, sparse_gemms
            try:
                return ffn(x)
            finally:
                SparseFFN.fuse_gelu_mask, SparseFFN.sparse_gemms = True, True
        return run

    return {"scatter": scatter, "mask_mul": mask_mul, "masked_fill_topk": masked_fill_topk,
            "gather_rows": gather_rows, "masked_fill_partition": with_fuse(False), "kept_gelu": with_fuse(True),
            "kept_ffn_csr": with_fuse(True, True)}


def bench_sparse_ffn(d_model: int, tokens: int = 4096, rounds: int = 7) -> pd.DataFrame:
    """Forward+backward seconds of each selection option (medians, interleaved), and the largest
    difference of its output and gradients from ``scatter``'s."""
    torch.manual_seed(0)
    ffn = SparseFFN(SPENConfig(d_model=d_model, d_ff=4 * d_model))
    x = torch.randn(tokens, d_model, requires_grad=True)
    g = torch.randn(tokens, d_model)
    params = [x, *ffn.parameters()]
    opts = _ffn_options(ffn)
    ref, diffs, times = None, {}, {n: [] for n in opts}

    def run(fn):
        for p in params:
            p.grad = None
        y = fn(x)
        y.backward(g)
        return [y.detach()] + [p.grad.clone() for p in params]

    for name, fn in opts.items():
        out = run(fn)
        ref = ref or out
        diffs[name] = max(float((a - b).abs().max()) for a, b in zip(out, ref, strict=True))
    for _ in range(rounds):
        for name, fn in opts.items():
            t0 = time.perf_counter()
            run(fn)
            times[name].append(time.perf_counter() - t0)
    base = statistics.median(times["scatter"])
    return pd.DataFrame([{"option": n, "tokens": tokens, "d_model": d_model, "d_ff": 4 * d_model, "k": ffn.k,
                          "fwd_bwd_s": statistics.median(t), "x_faster_than_scatter": base / statistics.median(t),
                          "max_abs_diff": diffs[n]} for n, t in times.items()]).round(6)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seq-lens", type=positive, nargs="+", default=[256, 1024, 4096, 8192])
    ap.add_argument("--d-models", type=positive, nargs="+", default=[128, 256])
    ap.add_argument("--batch-tokens", type=positive, default=8192, help="tokens per timed step")
    ap.add_argument("--rounds", type=positive, default=5)
    ap.add_argument("--transformer-max", type=positive, default=4096)
    ap.add_argument("--threads", type=positive, default=1)
    args = ap.parse_args(argv)
    check_publishable()
    heads = {d: lm_sizes("transformer", d, 1)["n_head"] for d in args.d_models}
    if any(d % h for d, h in heads.items()):
        ap.error(f"--d-models must be multiples of the Transformer's heads (d_model: heads {heads}), got {args.d_models}")
    if max(args.seq_lens) > args.batch_tokens:
        ap.error(f"--batch-tokens ({args.batch_tokens}) must be >= the longest --seq-lens ({max(args.seq_lens)})")
    threads = set_threads(args.threads)
    load = round(os.getloadavg()[0], 2)
    ffn = pd.concat([bench_sparse_ffn(d) for d in args.d_models], ignore_index=True)
    clock = time.process_time if threads == 1 else time.perf_counter   # CPU time is robust to a shared machine
    df = bench_throughput(sorted(args.seq_lens), args.d_models, args.batch_tokens, args.rounds, args.transformer_max,
                          clock)
    df["clock"] = clock.__name__
    df = add_mfu(df, args.batch_tokens, cpu_gemm_peak(clock=clock))
    df["load_avg"] = load
    ffn["load_avg"] = load
    params = {**vars(args), "threads": threads, "torch": torch.__version__, **machine(), "load_avg_before": load,
              "load_avg_after": round(os.getloadavg()[0], 2)}
    out = bench_outputs(params, "benchmarks/bench_throughput.py")
    out.save_data(ffn, "sparse_ffn")
    path = out.save_data(df, "throughput")
    out.finish()  # figures/bench/ only with PAPER_LIB_PUBLISH=1 (make bench)
    print(ffn.to_string(index=False))
    print(df.to_string(index=False))
    print(f"-> {path} (load average {load} before, {params['load_avg_after']} after)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
