"""The training command line: ``python -m paper_lib.train --profile paper --model spen --out runs/spen``.

torchrun-aware: under ``torchrun`` (``WORLD_SIZE`` > 1) it joins the process group (NCCL on
GPUs, gloo on CPU) and trains with DDP; rank 0 evaluates and writes ``metrics.json``.
Our design: the paper gives no training recipe.

A rerun never overwrites a result with less: with the same ``--out`` and the same settings,
a finished run (``metrics.json`` present) says "already complete" and leaves every file as it
is; a run with other settings in that folder is a one-line error; an interrupted run resumes
from its checkpoint (a run killed after training, before ``metrics.json``, is evaluated from
its final checkpoint with the recorded loss and throughput). ``--no-resume`` starts over and
replaces what the folder holds. Bad arguments are one-line errors (exit status 2), never tracebacks.
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
from .models.factory import LM_KINDS, build_model, sizes_for
from .models.lm import count_params
from .pipeline.atomic import write_json, write_text
from .pipeline.profiles import PROFILE_NAMES
from .pipeline.threads import set_threads
from .predictors import PREDICTORS
from .train import _dist, train, train_config


def _int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value
    return parse


def parser() -> argparse.ArgumentParser:
    """The argument parser (choices and types reject bad values with one line, exit status 2)."""
    ap = argparse.ArgumentParser(prog="python -m paper_lib.train",
                                 description="Train SPEN or the matched Transformer (notebook 03's models).",
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--profile", default="cpu", choices=PROFILE_NAMES)
    ap.add_argument("--model", default="spen", choices=sorted(LM_KINDS))
    ap.add_argument("--out", default=None, help="run folder (log.csv, checkpoints/, metrics.json)")
    ap.add_argument("--seed", type=_int_at_least(0), default=0)
    ap.add_argument("--steps", type=_int_at_least(1), default=None, help="override the profile's optimizer steps")
    ap.add_argument("--batch-size", type=_int_at_least(1), default=None,
                    help="override the global batch (sequences)")
    ap.add_argument("--corpus", default=None, help="override the profile's corpus (e.g. c4, a .jsonl file)")
    ap.add_argument("--predictor", default=None, choices=sorted(PREDICTORS),
                    help="SPEN predictor name (default: the profile's)")
    ap.add_argument("--no-resume", action="store_true", help="start over, replacing what --out holds")
    ap.add_argument("--threads", type=_int_at_least(1), default=None,
                    help="CPU threads per process for torch, BLAS and OpenMP (default: paper_lib.pipeline.threads)")
    return ap


def main(argv: list[str] | None = None) -> int:
    """``python -m paper_lib.train --profile paper --model spen --out runs/spen`` (torchrun-aware).

    Returns the exit status: 0 done (or already complete), 2 a one-line error on stderr.
    """
    args = parser().parse_args(argv)
    set_threads(args.threads, args.profile)
    try:
        return _run(args)
    except (CorpusNeedsNetworkError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def _changed(old: dict, new: dict) -> list[str]:
    """Names of the settings that differ between two recorded runs (one level of nesting)."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        elif a != b:
            out.append(key)
    return out


def _already_complete(out: Path, run: dict, no_resume: bool) -> bool:
    """Whether ``out`` holds this finished run; with ``no_resume``, forget any finished run there.

    Raises:
        ValueError: ``out`` holds a finished run with other settings (one line naming them).
    """
    if no_resume:
        if int(os.environ.get("RANK", "0")) == 0:
            for name in ("metrics.json", "summary.txt"):
                (out / name).unlink(missing_ok=True)
        return False
    if not (out / "metrics.json").exists():
        return False
    recorded = json.loads((out / "metrics.json").read_text()).get("run")
    if recorded is not None and recorded != run:
        raise ValueError(f"{out} holds a finished run with other settings ({', '.join(_changed(recorded, run))}); "
                         "choose another --out, or --no-resume to replace it")
    return recorded == run


def _run(args: argparse.Namespace) -> int:
    over = {k: v for k, v in (("corpus", args.corpus), ("predictor", args.predictor), ("steps", args.steps),
                                ("batch_size", args.batch_size)) if v is not None}
    if args.steps is not None:  # notebook 03's evaluation points beyond a shorter run do not apply here
        over["eval_at"] = [k for k in settings_for(args.profile).eval_at if k <= args.steps]
    settings = settings_for(args.profile, over)
    cfg = train_config(settings, args.seed)
    out = Path(args.out or f"runs/{args.profile}-{args.model}-seed{args.seed}")
    run = json.loads(json.dumps({"model": args.model, "seed": args.seed, "profile": args.profile,
                                 "settings": asdict(settings)}, default=str))
    if _already_complete(out, run, args.no_resume):
        print(f"already complete: {out} (metrics.json and log.csv kept; --no-resume starts over)")
        return 0
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        dist.init_process_group(backend)
    rank, world = _dist()
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    data = prepare_data(settings)
    sizes = sizes_for(args.model, settings, data["tokenizer"].get_vocab_size())
    model = build_model(args.model, seed=args.seed, **sizes).to(device)
    result = train(model, data["train"], cfg, out_dir=out, resume=not args.no_resume, desc=args.model)
    if rank == 0:
        ev = {split: evaluate(model, data[split], cfg.seq_len, max_tokens=settings.eval_tokens)
              for split in ("val", "ood")}
        summary = {"model": args.model, "params": count_params(model), "train": asdict(cfg), "run": run,
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
