"""Training and evaluation of the language models of notebook 03 (SPEN and the Transformer).

nanoGPT's loop, as plain functions: AdamW, linear warmup then cosine decay to
``min_lr_frac * lr``, gradient clipping, bf16 autocast on CUDA (fp32 on CPU), a tqdm bar and
a CSV log (step, tokens, loss, lr, tokens_per_s, elapsed_s). Our design throughout: the
paper gives no training recipe.

- Data order is a pure function of ``(seed, step)``: the batch of step ``s`` is drawn from
  ``numpy.random.default_rng([seed, s])``, so a resumed run sees exactly the batches an
  uninterrupted one would, and every DDP rank slices the same global batch.
- Checkpoints every ``ckpt_every`` steps: ``stepNNNNNNN.safetensors`` (weights),
  ``stepNNNNNNN.state.pt`` (optimizer, RNG states, log so far) and ``latest.json``, each
  written atomically (:mod:`paper_lib.atomic`); ``latest.json`` is written last, so a kill at
  any moment leaves the previous checkpoint usable. A killed and resumed run reaches the
  same final loss as an uninterrupted one (``tests/test_train.py``).
- Distributed: under ``torchrun`` (``WORLD_SIZE`` > 1) the model is wrapped in PyTorch DDP
  (NCCL on GPUs, gloo on CPU); ``batch_size`` is the global batch, split across ranks.

Command line (clusters)::

    torchrun --nproc_per_node 8 -m paper_lib.train --profile paper --model spen --out runs/spen
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
from torch import nn

from .atomic import atomic_path, write_json, write_text
from .corpus import CorpusNeedsNetworkError


@dataclass
class TrainConfig:
    """One training run.

    Attributes:
        steps: optimizer steps. batch_size: sequences per step (global, over all ranks).
        seq_len: tokens per sequence. lr: peak learning rate. min_lr_frac: final lr / peak.
        warmup_steps: linear warmup (steps). weight_decay: AdamW's (2-D weights only).
        grad_clip: max global gradient norm (0 = off). betas: AdamW's.
        seed: model init, data order and RNG. log_every: steps between log rows.
        ckpt_every: steps between checkpoints (0 = none).
    """

    steps: int = 100
    batch_size: int = 16
    seq_len: int = 256
    lr: float = 3e-3
    min_lr_frac: float = 0.1
    warmup_steps: int = 10
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    betas: tuple[float, float] = (0.9, 0.95)
    seed: int = 0
    log_every: int = 10
    ckpt_every: int = 0

    def __post_init__(self):
        for name in ("steps", "batch_size", "seq_len", "log_every"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.lr <= 0 or not 0 <= self.min_lr_frac <= 1:
            raise ValueError(f"need lr > 0 and min_lr_frac in [0, 1], got {self.lr}, {self.min_lr_frac}")


@dataclass
class TrainResult:
    """What :func:`train` returns: the log, the final training loss (nats) and throughput."""

    history: pd.DataFrame
    final_loss: float
    tokens_per_s: float
    steps_done: int
    extra: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- models

def build_model(kind: str, seed: int = 0, **sizes) -> nn.Module:
    """A freshly initialised ``"spen"`` or ``"transformer"`` (seeded with ``seed``).

    ``sizes`` are the config's fields (``vocab_size``, ``n_layer``, ``d_model``, ...);
    fields the other model has but this one lacks (``n_head`` for SPEN) are ignored.

    Raises:
        ValueError: unknown ``kind``.
    """
    from dataclasses import fields

    from .spen import SPEN, SPENConfig
    from .transformer import Transformer, TransformerConfig

    table = {"spen": (SPEN, SPENConfig), "transformer": (Transformer, TransformerConfig)}
    if kind not in table:
        raise ValueError(f"unknown model {kind!r}; allowed: {', '.join(table)}")
    cls, cfg_cls = table[kind]
    names = {f.name for f in fields(cfg_cls)}
    torch.manual_seed(seed)
    return cls(cfg_cls(**{k: v for k, v in sizes.items() if k in names}))


def count_params(model: nn.Module) -> int:
    """Parameters of ``model`` (shared tensors counted once)."""
    return sum(p.numel() for p in model.parameters())


# --------------------------------------------------------------------------- data

def get_batch(ids: np.ndarray, step: int, cfg: TrainConfig, rank: int = 0, world: int = 1):
    """Inputs and targets ``(B_local, seq_len)`` int64 of step ``step``, this rank's slice.

    The global batch is ``batch_size`` windows at offsets from ``default_rng([seed, step])``.

    Raises:
        ValueError: the stream is shorter than ``seq_len + 1`` tokens, or ``batch_size`` is
        not divisible by ``world``.
    """
    if len(ids) < cfg.seq_len + 2:
        raise ValueError(f"token stream of {len(ids)} tokens is shorter than seq_len + 2 = {cfg.seq_len + 2}")
    if cfg.batch_size % world:
        raise ValueError(f"batch_size {cfg.batch_size} is not divisible by the {world} ranks")
    rng = np.random.default_rng([cfg.seed, step])
    starts = rng.integers(0, len(ids) - cfg.seq_len - 1, size=cfg.batch_size)
    per = cfg.batch_size // world
    starts = starts[rank * per:(rank + 1) * per]
    idx = starts[:, None] + np.arange(cfg.seq_len + 1)[None, :]
    w = torch.from_numpy(ids[idx].astype(np.int64))                    # (B_local, L + 1)
    return w[:, :-1], w[:, 1:]


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate at ``step`` (0-based): linear warmup, then cosine to ``min_lr_frac * lr``."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    frac = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    lo = cfg.lr * cfg.min_lr_frac
    return lo + 0.5 * (cfg.lr - lo) * (1 + math.cos(math.pi * min(1.0, frac)))


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices (``ndim >= 2``) only, as nanoGPT."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.ndim >= 2]
    no_decay = [p for p in params if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, foreach=False)


# --------------------------------------------------------------------------- checkpoints

def _rng_state() -> dict:
    state = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(ckpt_dir: Path, model: nn.Module, opt, step: int, history: list[dict]) -> None:
    """Write weights (safetensors), optimizer + RNG state, then ``latest.json``, atomically."""
    from safetensors.torch import save_model

    ckpt_dir = Path(ckpt_dir)
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    stem = f"step{step:07d}"
    with atomic_path(ckpt_dir / f"{stem}.safetensors") as tmp:
        save_model(model, str(tmp))
    with atomic_path(ckpt_dir / f"{stem}.state.pt") as tmp:
        torch.save({"optimizer": opt.state_dict(), "rng": _rng_state(), "step": step, "history": history}, tmp)
    previous = latest_checkpoint(ckpt_dir)
    write_json(ckpt_dir / "latest.json", {"step": step, "weights": f"{stem}.safetensors",
                                          "state": f"{stem}.state.pt"})
    if previous is not None and previous != step:  # keep only the newest
        for suffix in (".safetensors", ".state.pt"):
            (ckpt_dir / f"step{previous:07d}{suffix}").unlink(missing_ok=True)


def latest_checkpoint(ckpt_dir: Path) -> int | None:
    """The step of the newest complete checkpoint in ``ckpt_dir`` (None if there is none)."""
    path = Path(ckpt_dir) / "latest.json"
    return json.loads(path.read_text())["step"] if path.exists() else None


def load_checkpoint(ckpt_dir: Path, model: nn.Module, opt) -> tuple[int, list[dict]]:
    """Restore weights, optimizer and RNG state; returns ``(step, history)``."""
    from safetensors.torch import load_model

    meta = json.loads((Path(ckpt_dir) / "latest.json").read_text())
    device = next(model.parameters()).device
    load_model(model, str(Path(ckpt_dir) / meta["weights"]), device=str(device))
    state = torch.load(Path(ckpt_dir) / meta["state"], map_location=device, weights_only=False)
    opt.load_state_dict(state["optimizer"])
    _set_rng_state(state["rng"])
    return int(state["step"]), list(state["history"])


# --------------------------------------------------------------------------- training

def _dist() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def train(model: nn.Module, ids: np.ndarray, cfg: TrainConfig, out_dir: str | Path | None = None,
          resume: bool = True, stop_after: int | None = None, progress: bool = True,
          desc: str | None = None) -> TrainResult:
    """Train ``model`` on the token stream ``ids`` for ``cfg.steps`` steps.

    Args:
        model: a SPEN or Transformer (on its device; wrapped in DDP here when distributed).
        ids: 1-D token stream (``numpy`` integer array).
        out_dir: where ``log.csv`` and ``checkpoints/`` go (None: nothing written).
        resume: continue from ``out_dir/checkpoints`` when a checkpoint exists.
        stop_after: stop after this step (a simulated kill; the checkpoint schedule is
            unchanged), for tests.
        progress: show a tqdm bar (rank 0 only).

    Returns:
        :class:`TrainResult`; ``final_loss`` is the mean training loss (nats) of the last step,
        averaged over ranks; ``tokens_per_s`` the mean training throughput (global tokens).
    """
    from tqdm.auto import tqdm

    rank, world = _dist()
    device = next(model.parameters()).device
    opt = make_optimizer(model, cfg)
    net = model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP
        net = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    ckpt_dir = Path(out_dir) / "checkpoints" if out_dir is not None else None
    start, history = 0, []
    if ckpt_dir is not None and resume and latest_checkpoint(ckpt_dir) is not None:
        start, history = load_checkpoint(ckpt_dir, model, opt)
    else:
        torch.manual_seed(cfg.seed + 1)  # training-time RNG (unused by these models), seeded
    end = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
    tokens_per_step = cfg.batch_size * cfg.seq_len
    bar = tqdm(total=cfg.steps, initial=start, desc=desc or "train", disable=not progress or rank != 0,
               leave=False)
    model.train()
    t_last, n_since, loss_val, busy = time.perf_counter(), 0, float("nan"), 0.0
    for step in range(start, end):
        t0 = time.perf_counter()
        lr = lr_at(step, cfg)
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = get_batch(ids, step, cfg, rank, world)
        x, y = x.to(device), y.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
            _, loss = net(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        n_since += 1
        last = step + 1 == end
        if (step + 1) % cfg.log_every == 0 or last:
            loss_t = loss.detach().float()
            if world > 1:
                dist.all_reduce(loss_t)
                loss_t /= world
            if device.type == "cuda":
                torch.cuda.synchronize()
            now = time.perf_counter()
            loss_val = float(loss_t)
            history.append({"step": step + 1, "tokens": (step + 1) * tokens_per_step, "loss": loss_val,
                            "lr": lr, "tokens_per_s": n_since * tokens_per_step / (now - t_last),
                            "elapsed_s": busy + now - t0})
            t_last, n_since = now, 0
            bar.set_postfix(loss=f"{loss_val:.3f}")
        busy += time.perf_counter() - t0
        bar.update(1)
        if ckpt_dir is not None and cfg.ckpt_every and (step + 1) % cfg.ckpt_every == 0:
            if rank == 0:
                save_checkpoint(ckpt_dir, model, opt, step + 1, history)
            if world > 1:
                dist.barrier()
    bar.close()
    df = pd.DataFrame(history, columns=["step", "tokens", "loss", "lr", "tokens_per_s", "elapsed_s"])
    if out_dir is not None and rank == 0:
        with atomic_path(Path(out_dir) / "log.csv") as tmp:
            df.to_csv(tmp, index=False)
    done = end - start
    tps = done * tokens_per_step / busy if busy > 0 else float("nan")
    return TrainResult(df, loss_val, tps, end)


# --------------------------------------------------------------------------- evaluation

@torch.no_grad()
def evaluate(model: nn.Module, ids: np.ndarray, seq_len: int, batch_size: int = 8,
             max_tokens: int | None = None, eot_id: int | None = 0) -> dict:
    """Per-token next-token loss on non-overlapping windows of ``ids``.

    Each window holds ``seq_len`` inputs and their ``seq_len`` targets (one shifted); a
    model sees only its window (no state carried across windows).

    Returns:
        ``{"loss": mean nats/token, "ppl": exp(loss), "token_loss": (N,) float32 nats,
        "repeat": (N,) bool}`` where ``repeat`` marks targets that already occurred earlier
        in the same document within the window (copyable from context; documents are
        separated by ``eot_id``), the split of the notebook's "where the gap lives".

    Raises:
        ValueError: fewer than ``seq_len + 1`` tokens.
    """
    n_win = (len(ids) - 1) // seq_len
    if max_tokens is not None:
        n_win = min(n_win, max(1, max_tokens // seq_len))
    if n_win < 1:
        raise ValueError(f"need at least seq_len + 1 = {seq_len + 1} tokens, got {len(ids)}")
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    losses = []
    starts = np.arange(n_win) * seq_len
    for i in range(0, n_win, batch_size):
        idx = starts[i:i + batch_size, None] + np.arange(seq_len + 1)[None, :]
        w = torch.from_numpy(ids[idx].astype(np.int64)).to(device)    # (b, L + 1)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits, _ = model(w[:, :-1])                                 # (b, L, V)
        nll = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), w[:, 1:], reduction="none")
        losses.append(nll.reshape(-1).cpu())
    model.train(was_training)
    token_loss = torch.cat(losses).numpy().astype(np.float32)
    repeat = np.zeros(n_win * seq_len, dtype=bool)
    for k, s in enumerate(starts):
        seen: set[int] = set()
        window = ids[s:s + seq_len + 1].tolist()
        for t in range(seq_len):
            if window[t] == eot_id:
                seen = set()
            else:
                seen.add(window[t])
            repeat[k * seq_len + t] = window[t + 1] in seen
    loss = float(token_loss.mean())
    return {"loss": loss, "ppl": math.exp(loss), "token_loss": token_loss, "repeat": repeat}


def measure_throughput(model: nn.Module, vocab_size: int, seq_len: int, batch_tokens: int,
                       steps: int = 3, seed: int = 0) -> float:
    """Training throughput (tokens/s) of ``model`` at ``seq_len``: ``steps`` timed AdamW steps
    on random tokens after one untimed warm-up step, ``batch_tokens // seq_len`` sequences each.
    The model's weights change (use a throw-away copy)."""
    device = next(model.parameters()).device
    g = torch.Generator().manual_seed(seed)
    b = max(1, batch_tokens // seq_len)
    x = torch.randint(0, vocab_size, (b, seq_len + 1), generator=g).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
    model.train()
    t0 = 0.0
    for i in range(steps + 1):
        if i == 1:
            if device.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
            _, loss = model(x[:, :-1], x[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps * b * seq_len / (time.perf_counter() - t0)


# --------------------------------------------------------------------------- data for a profile

def prepare_data(settings: dict, data_dir: Path | None = None) -> dict:
    """Corpus, tokenizer and token streams for a profile's ``spen`` section.

    Returns ``{"corpus", "tokenizer", "train", "val", "ood"}`` (token streams as numpy arrays).

    Raises:
        CorpusNeedsNetworkError: a hub corpus or the GPT-2 tokenizer offline.
    """
    from .corpus import load_corpus, load_eval_docs
    from .tokenizer import encode_docs, get_tokenizer

    corpus = load_corpus(settings["corpus"], max_train_chars=settings.get("max_train_chars"),
                         max_val_chars=settings.get("max_val_chars"), min_chars=settings.get("min_chars", 2000),
                         data_dir=data_dir)
    tok = get_tokenizer(settings["tokenizer"], corpus, settings["vocab_size"], data_dir)
    name = corpus.name
    train_ids = encode_docs(tok, corpus.train, f"{name}-train", data_dir)
    val_docs = (load_eval_docs(settings["val_corpus"], settings.get("max_val_chars"))
                if settings.get("val_corpus") else corpus.validation)
    val_ids = encode_docs(tok, val_docs, f"{name}-val", data_dir)
    ood_ids = encode_docs(tok, load_eval_docs(settings["ood_corpus"], settings.get("max_val_chars")),
                          f"{name}-ood-{Path(settings['ood_corpus']).name}", data_dir)
    return {"corpus": corpus, "tokenizer": tok, "train": train_ids, "val": val_ids, "ood": ood_ids}


def model_sizes(settings: dict, vocab_size: int) -> dict:
    """The model-size fields of a profile's ``spen`` section, with the tokenizer's vocabulary."""
    keys = ("n_layer", "d_model", "n_head", "d_bottleneck", "d_ff", "d_ff_transformer", "top_k_frac",
            "predictor", "block_size")
    sizes = {k: settings[k] for k in keys if k in settings}
    sizes["vocab_size"] = vocab_size
    return sizes


def sizes_for(kind: str, sizes: dict) -> dict:
    """``sizes`` for ``kind``: the Transformer takes ``d_ff_transformer`` as its ``d_ff``."""
    out = {k: v for k, v in sizes.items() if k != "d_ff_transformer"}
    if kind == "transformer" and "d_ff_transformer" in sizes:
        out["d_ff"] = sizes["d_ff_transformer"]
    return out


def train_config(settings: dict, seed: int, **overrides) -> TrainConfig:
    """A :class:`TrainConfig` from a profile's ``spen`` section."""
    names = set(TrainConfig.__dataclass_fields__)
    kw = {k: v for k, v in settings.items() if k in names}
    kw.update(seed=seed, **overrides)
    if "betas" in kw:
        kw["betas"] = tuple(kw["betas"])
    return TrainConfig(**kw)


def train_and_evaluate(kind: str, settings: dict, data: dict, seed: int, progress: bool = True,
                       out_dir: str | Path | None = None, desc: str | None = None) -> dict:
    """Train one model of a profile's ``spen`` section and evaluate it (notebook 03's unit of work).

    ``desc`` labels the progress bar (default ``"<kind> seed <seed>"``).

    Returns ``{"model", "seed", "params", "history" (DataFrame), "train_tokens_per_s",
    "val": evaluate(...), "ood": evaluate(...)}`` (see :func:`evaluate`).
    """
    sizes = sizes_for(kind, model_sizes(settings, data["tokenizer"].get_vocab_size()))
    model = build_model(kind, seed=seed, **sizes)
    cfg = train_config(settings, seed)
    res = train(model, data["train"], cfg, out_dir=out_dir, progress=progress,
                desc=desc or f"{kind} seed {seed}")
    ev = {split: evaluate(model, data[split], cfg.seq_len, max_tokens=settings.get("eval_tokens"))
          for split in ("val", "ood")}
    return {"model": kind, "seed": seed, "params": count_params(model), "history": res.history,
            "train_tokens_per_s": res.tokens_per_s, **ev}


def main(argv: list[str] | None = None) -> int:
    """``python -m paper_lib.train --profile paper --model spen --out runs/spen`` (torchrun-aware)."""
    from .profiles import get_profile

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
    settings = get_profile(args.profile)["spen"]
    if args.corpus:
        settings["corpus"] = args.corpus
    if args.predictor:
        settings["predictor"] = args.predictor
    try:
        data = prepare_data(settings)
    except (CorpusNeedsNetworkError, ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    sizes = sizes_for(args.model, model_sizes(settings, data["tokenizer"].get_vocab_size()))
    model = build_model(args.model, seed=args.seed, **sizes).to(device)
    over = {k: v for k, v in (("steps", args.steps), ("batch_size", args.batch_size)) if v is not None}
    cfg = train_config(settings, args.seed, **over)
    out = Path(args.out or f"runs/{args.profile}-{args.model}-seed{args.seed}")
    result = train(model, data["train"], cfg, out_dir=out, resume=not args.no_resume, desc=args.model)
    if rank == 0:
        ev = {split: evaluate(model, data[split], cfg.seq_len, max_tokens=settings.get("eval_tokens"))
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
