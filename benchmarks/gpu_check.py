"""A prepared GPU check (``make gpu-check``): run it whenever a CUDA machine is lent; never needed by CI.

On a machine without CUDA it prints one line and exits 0. With CUDA, in about 8 minutes at most
(``--budget-s``; checks that would start past it are skipped and say so):

1. ``ema``: :func:`paper_lib.ema.ema_traces` (fast path, custom backward) against
   :func:`paper_lib.ema.ema_reference` (the recurrence under autograd) on the GPU, causal and not,
   in float32: the largest absolute difference of the traces and of ``grad x`` (passes under 1e-4).
   Also in bf16 autocast (``autocast_diff_traces``: the traces must equal the fp32 ones, under 1e-5).
2. ``train``: SPEN and the Transformer at the ``paper`` profile's sizes (12 blocks, d_model 768,
   GPT-2's vocabulary of 50257; notebook 03's ``Settings`` at ``paper``) for ``--steps`` training
   steps on random tokens, each :func:`paper_lib.train._step` (the step training runs: bf16 autocast,
   :func:`paper_lib.train.make_optimizer`'s AdamW with the paper profile's lr, betas, weight decay and
   gradient clipping): tokens/s (after ``--warmup`` untimed steps, synchronised), model FLOP
   utilisation against the device's dense bf16 peak (``benchmarks/_flops.py``: FLOPs counted by
   ``torch.utils.flop_counter``; "unknown" for a device not in its table), peak allocated memory
   (GiB), and SPEN's tokens/s over the Transformer's, at every ``--seq-lens``. One more step of each
   runs under ``torch.cuda.set_sync_debug_mode("warn")`` around forward + backward
   (``host_syncs_in_step``: SPEN passes when nothing synchronised with the host).
3. ``nccl``: if two or more GPUs exist, two processes join an NCCL group, all-reduce a known
   tensor (exact sum) and train a small SPEN with DDP for a few steps through
   :func:`paper_lib.train.train`; passes when both ranks end with identical weights.

Writes ``figures/bench/gpu_check.csv``: ``check, item, metric, value, unit, passed``, plus the
device name in its provenance. Exit status 1 if a check failed. Our design: the paper is silent.
"""
from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cli import OneLineParser, bench_outputs, check_publishable, lacking, positive  # noqa: E402  (benchmarks/_cli.py)

NEEDS = ("numpy", "pandas", "scipy", "sklearn", "torch", "threadpoolctl", "tqdm")
"""What the check imports (directly and through ``paper_lib``)."""
if __name__ == "__main__" and (line := lacking("gpu-check", NEEDS)):  # before an import below fails in a traceback
    sys.exit(line)

import pandas as pd  # noqa: E402
import torch  # noqa: E402

EMA_TOL = 1e-4


def skip_line() -> str | None:
    """The one line printed when there is no CUDA device, else None."""
    if torch.cuda.is_available():
        return None
    return f"gpu-check: skipped, no CUDA device (torch {torch.__version__}); nothing written"


def check_ema(device: torch.device, B: int = 4, T: int = 1536, D: int = 512) -> list[dict]:
    """Fast EMA against the reference on ``device``: values and input gradients."""
    from paper_lib.ema import PAPER_ALPHAS, ema_reference, ema_traces

    rows = []
    torch.backends.cuda.matmul.allow_tf32 = False                     # float32 means float32 here
    g = torch.Generator(device="cpu").manual_seed(0)
    x0 = torch.randn(B, T, D, generator=g).to(device)
    gy = torch.randn(B, T, len(PAPER_ALPHAS), D, generator=g).to(device)
    for causal in (False, True):
        with torch.autocast(device.type, dtype=torch.bfloat16):
            y16 = ema_traces(x0, PAPER_ALPHAS, causal=causal)
        err = float((y16 - ema_traces(x0, PAPER_ALPHAS, causal=causal)).abs().max())
        rows.append({"check": "ema", "item": f"causal={causal}", "metric": "autocast_diff_traces",
                     "value": err, "unit": "", "passed": err < 1e-5})
        out = {}
        for name, fn in (("fast", ema_traces), ("reference", ema_reference)):
            x = x0.clone().requires_grad_()
            y = fn(x, PAPER_ALPHAS, causal=causal)
            y.backward(gy)
            out[name] = (y.detach(), x.grad)
        for i, what in enumerate(("traces", "grad_x")):
            err = float((out["fast"][i] - out["reference"][i]).abs().max())
            rows.append({"check": "ema", "item": f"causal={causal}", "metric": f"max_abs_diff_{what}",
                         "value": err, "unit": "", "passed": err < EMA_TOL})
    return rows


def _paper_sizes(kind: str, seq_len: int) -> dict:
    from dataclasses import asdict

    from paper_lib.lm_recipe import model_config, recipe_for

    settings = recipe_for("paper")
    sizes = asdict(model_config(kind, settings))
    sizes["block_size"] = max(sizes["block_size"], seq_len)
    return sizes


def _host_syncs(model, x, device) -> int:
    """Host syncs of one forward + backward, counted under ``set_sync_debug_mode("warn")`` (each
    synchronising CUDA call warns once; the first lines are printed)."""
    import warnings

    torch.cuda.synchronize(device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                _, loss = model(x[:, :-1], x[:, 1:])
            loss.backward()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    syncs = [str(w.message).splitlines()[0] for w in caught if "synchroniz" in str(w.message).lower()]
    for line in syncs[:3]:
        print(f"  host sync in the step: {line}", flush=True)
    return len(syncs)


def train_rate(kind: str, seq_len: int, batch: int, steps: int, warmup: int, device: torch.device) -> dict:
    """Tokens/s, peak memory and no-sync flag of ``steps`` training steps of ``kind`` at the paper's
    sizes, each :func:`paper_lib.train._step` with the paper profile's optimizer settings."""
    from paper_lib.lm_recipe import recipe_for, train_config
    from paper_lib.models.factory import build_model
    from paper_lib.train import _step, lr_at, make_optimizer

    cfg = train_config(kind, recipe_for("paper"), seed=0)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(device)
    model = build_model(kind, seed=0, **_paper_sizes(kind, seq_len)).to(device)
    opt = make_optimizer(model, cfg)
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randint(0, model.config.vocab_size, (batch, seq_len + 1), generator=g).to(device)
    t0 = time.perf_counter()
    for i in range(warmup + steps):
        if i == warmup:
            torch.cuda.synchronize(device)
            t0 = time.perf_counter()
        loss = _step(model, model, opt, x[:, :-1], x[:, 1:], lr_at(i, cfg), cfg.grad_clip, device)
    torch.cuda.synchronize(device)
    rate = steps * batch * seq_len / (time.perf_counter() - t0)
    peak = torch.cuda.max_memory_allocated(device) / 2**30
    finite = bool(torch.isfinite(loss).item())
    opt.zero_grad(set_to_none=True)
    syncs = _host_syncs(model, x, device)
    del model, opt
    return {"tokens_per_s": rate, "peak_gib": peak, "finite": finite, "host_syncs": syncs}


def flops_per_token(kind: str, seq_len: int, device: torch.device) -> float:
    """Counted training FLOPs per token of ``kind`` at the paper's sizes (``benchmarks/_flops.py``)."""
    from _flops import training_flops_per_token

    from paper_lib.models.factory import build_model

    sizes = _paper_sizes(kind, seq_len)
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        res = training_flops_per_token(lambda: build_model(kind, seed=0, **sizes), seq_len, sizes["vocab_size"], device)
    return res["flops_per_token"]


def check_train(device, seq_lens, batch_tokens, steps, warmup, deadline) -> list[dict]:
    """SPEN and the Transformer at every length: tokens/s, MFU, peak memory, no-sync flag, the ratio."""
    from _flops import gpu_bf16_peak

    peak = gpu_bf16_peak(torch.cuda.get_device_name(device))
    rows = []
    for T in seq_lens:
        rates = {}
        for kind in ("spen", "transformer"):
            if time.monotonic() > deadline:
                rows.append({"check": "train", "item": f"{kind}@{T}", "metric": "skipped (time budget)",
                             "value": float("nan"), "unit": "", "passed": None})
                continue
            res = train_rate(kind, T, max(1, batch_tokens // T), steps, warmup, device)
            rates[kind] = res["tokens_per_s"]
            fpt = flops_per_token(kind, T, device)
            mfu = fpt * res["tokens_per_s"] / peak if peak else float("nan")
            item = f"{kind}@{T}"
            rows += [{"check": "train", "item": item, "metric": "tokens_per_s", "value": res["tokens_per_s"],
                      "unit": "tokens/s", "passed": res["finite"]},
                     {"check": "train", "item": item, "metric": "flops_per_token", "value": fpt, "unit": "FLOP",
                      "passed": None},
                     {"check": "train", "item": item, "metric": "mfu_bf16_dense" if peak else "mfu (peak unknown)",
                      "value": mfu, "unit": "", "passed": None},
                     {"check": "train", "item": item, "metric": "peak_memory", "value": res["peak_gib"],
                      "unit": "GiB", "passed": None},
                     {"check": "train", "item": item, "metric": "host_syncs_in_step", "value": res["host_syncs"],
                      "unit": "", "passed": res["host_syncs"] == 0 if kind == "spen" else None}]
            print(f"  {kind} seq_len {T}: {res['tokens_per_s']:,.0f} tokens/s, MFU "
                  f"{f'{mfu:.3f}' if peak else 'unknown (peak of this device not in benchmarks/_flops.py)'}, "
                  f"peak {res['peak_gib']:.1f} GiB, host syncs in forward + backward: {res['host_syncs']}", flush=True)
        if len(rates) == 2:
            rows.append({"check": "train", "item": f"ratio@{T}", "metric": "spen_over_transformer",
                         "value": rates["spen"] / rates["transformer"], "unit": "", "passed": None})
    return rows


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _nccl_worker(rank: int, world: int, port: int, out: str) -> None:
    import numpy as np
    import torch.distributed as dist

    from paper_lib.models.factory import build_model
    from paper_lib.train import TrainConfig, train

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    t = torch.full((4,), float(rank + 1), device=f"cuda:{rank}")
    dist.all_reduce(t)
    exact = bool((t == world * (world + 1) / 2).all())
    ids = np.random.default_rng(0).integers(0, 256, size=200_000)
    model = build_model("spen", seed=0, vocab_size=256, n_layer=2, d_model=128, d_bottleneck=48, d_ff=512,
                        block_size=256).to(f"cuda:{rank}")
    train(model, ids, TrainConfig(steps=5, batch_size=8, seq_len=256, warmup_steps=1, log_every=1, seed=0),
          progress=False)
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    if rank == 0:
        same = all(torch.equal(gathered[0], o) for o in gathered[1:])
        torch.save({"all_reduce_exact": exact, "ranks_identical": same}, out)
    dist.destroy_process_group()


def check_nccl(tmp: Path) -> list[dict]:
    """Two processes over NCCL (only with >= 2 GPUs): an exact all-reduce and DDP training."""
    import torch.multiprocessing as mp

    if torch.cuda.device_count() < 2:
        return [{"check": "nccl", "item": "2 processes", "metric": "skipped (one GPU)", "value": float("nan"),
                 "unit": "", "passed": None}]
    out = tmp / "nccl.pt"
    mp.spawn(_nccl_worker, args=(2, _free_port(), str(out)), nprocs=2, join=True)
    res = torch.load(out, weights_only=True)  # data only, as every loader here
    return [{"check": "nccl", "item": "2 processes", "metric": k, "value": float(v), "unit": "", "passed": bool(v)}
            for k, v in res.items()]


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="gpu_check.py", description=__doc__.splitlines()[0])
    ap.add_argument("--seq-lens", type=positive, nargs="+", default=[1024, 4096])
    ap.add_argument("--batch-tokens", type=positive, default=16384, help="tokens per step (per GPU)")
    ap.add_argument("--steps", type=positive, default=30, help="timed steps per model and length")
    ap.add_argument("--warmup", type=positive, default=5, help="untimed steps first")
    ap.add_argument("--budget-s", type=positive, default=420, help="no new training check starts after this")
    args = ap.parse_args(argv)
    check_publishable()
    line = skip_line()
    if line:
        print(line)
        return 0
    import tempfile

    deadline = time.monotonic() + args.budget_s
    device = torch.device("cuda:0")
    name = torch.cuda.get_device_name(device)
    print(f"gpu-check on {torch.cuda.device_count()} x {name}, torch {torch.__version__}", flush=True)
    rows = check_ema(device)
    print("  ema: " + ", ".join(f"{r['item']} {r['metric']} {r['value']:.2e}" for r in rows), flush=True)
    rows += check_train(device, args.seq_lens, args.batch_tokens, args.steps, args.warmup, deadline)
    with tempfile.TemporaryDirectory() as tmp:
        rows += check_nccl(Path(tmp))
    df = pd.DataFrame(rows)
    params = {**vars(args), "device": name, "n_gpus": torch.cuda.device_count(), "torch": torch.__version__,
              "cuda": torch.version.cuda}
    out = bench_outputs(params, "benchmarks/gpu_check.py", "paper")
    path = out.save_data(df, "gpu_check")
    out.finish()
    print(df.to_string(index=False))
    failed = df[df.passed.eq(False)]
    print(f"-> {path}: {'all checks passed' if failed.empty else f'{len(failed)} check(s) FAILED'}")
    return 1 if len(failed) else 0


if __name__ == "__main__":
    sys.exit(main())
