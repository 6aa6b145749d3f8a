"""The training command line: ``python -m paper_lib.train --profile paper --model spen --out runs/spen``.

torchrun-aware: under ``torchrun`` (``WORLD_SIZE`` > 1) it joins the process group (NCCL on
GPUs, gloo on CPU) and trains with DDP; rank 0 evaluates and writes ``metrics.json``.
Our design: the paper gives no training recipe.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

import torch
import torch.distributed as dist

from .data.corpus import CorpusNeedsNetworkError
from .data.lm_data import prepare_data
from .evaluate import evaluate
from .experiments.spen_train import settings_for
from .models.factory import build_model, sizes_for
from .models.lm import count_params
from .pipeline.atomic import write_json, write_text
from .train import _dist, train, train_config


def main(argv: list[str] | None = None) -> int:
    """``python -m paper_lib.train --profile paper --model spen --out runs/spen`` (torchrun-aware)."""
    ap = argparse.ArgumentParser(prog="python -m paper_lib.train",
                                 description="Train SPEN or the matched Transformer (notebook 03's models).",
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--profile", default="cpu", help="smoke | cpu | paper")
    ap.add_argument("--model", default="spen", choices=["spen", "transformer"])
    ap.add_argument("--out", default=None, help="run folder (log.csv, checkpoints/, metrics.json)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=None, help="override the profile's optimizer steps")
    ap.add_argument("--batch-size", type=int, default=None, help="override the global batch (sequences)")
    ap.add_argument("--corpus", default=None, help="override the profile's corpus (e.g. c4, a .jsonl file)")
    ap.add_argument("--predictor", default=None, help="SPEN predictor name (default: the profile's)")
    ap.add_argument("--no-resume", action="store_true")
    args = ap.parse_args(argv)

    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        dist.init_process_group(backend)
    rank, world = _dist()
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    over = {k: v for k, v in (("corpus", args.corpus), ("predictor", args.predictor), ("steps", args.steps),
                                ("batch_size", args.batch_size)) if v is not None}
    try:
        settings = settings_for(args.profile, over)
        data = prepare_data(settings)
    except (CorpusNeedsNetworkError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    sizes = sizes_for(args.model, settings, data["tokenizer"].get_vocab_size())
    model = build_model(args.model, seed=args.seed, **sizes).to(device)
    cfg = train_config(settings, args.seed)
    out = Path(args.out or f"runs/{args.profile}-{args.model}-seed{args.seed}")
    result = train(model, data["train"], cfg, out_dir=out, resume=not args.no_resume, desc=args.model)
    if rank == 0:
        ev = {split: evaluate(model, data[split], cfg.seq_len, max_tokens=settings.eval_tokens)
              for split in ("val", "ood")}
        summary = {"model": args.model, "params": count_params(model), "train": asdict(cfg),
                   "final_train_loss": result.final_loss, "tokens_per_s": result.tokens_per_s,
                   **{f"{s}_loss": e["loss"] for s, e in ev.items()}, **{f"{s}_ppl": e["ppl"] for s, e in ev.items()}}
        write_json(out / "metrics.json", summary)
        write_text(out / "summary.txt", json.dumps(summary, indent=2, default=str) + "\n")
        print(json.dumps({k: summary[k] for k in ("params", "val_ppl", "ood_ppl", "tokens_per_s")}))
    if world > 1:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
