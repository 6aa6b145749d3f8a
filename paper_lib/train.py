"""Training and evaluation of the language models of notebook 03 (SPEN and the Transformer).

nanoGPT's loop, as plain functions: AdamW, linear warmup then cosine decay to
``min_lr_frac * lr``, gradient clipping, bf16 autocast on CUDA (fp32 on CPU), a tqdm bar and
a CSV log (step, tokens, loss, lr, tokens_per_s, elapsed_s). Our design throughout: the
paper gives no training recipe.

- Data order is a pure function of ``(seed, step)``: the batch of step ``s`` is drawn from
  ``numpy.random.default_rng([seed, s])``, so a resumed run sees exactly the batches an
  uninterrupted one would, and every DDP rank slices the same global batch.
- Checkpoints every ``ckpt_every`` steps and at the end: ``stepNNNNNNN.safetensors`` (weights),
  ``stepNNNNNNN.state.pt`` (optimizer, RNG states, log so far) and ``latest.json``, each
  written atomically (:mod:`paper_lib.atomic`); ``latest.json`` is written last, so a kill at
  any moment leaves the previous checkpoint usable. A killed and resumed run reaches the
  same final loss as an uninterrupted one (``tests/test_train.py``).
- Distributed: under ``torchrun`` (``WORLD_SIZE`` > 1) the model is wrapped in PyTorch DDP
  (NCCL on GPUs, gloo on CPU); ``batch_size`` is the global batch, split across ranks.

Checkpoints: :mod:`paper_lib.checkpoint`. One language-model run from settings (model, data,
this loop, evaluation) and the command line are :mod:`paper_lib.lm_recipe`
(``torchrun --nproc_per_node 8 -m paper_lib.lm_recipe --profile paper --model spen --out runs/spen``).
The small models of notebooks 05 to 07 and the oracles train on fresh batches with
:func:`train_until_flat` (the same AdamW and schedule, stopped by :mod:`paper_lib.stopping`), so every
model of the house is trained with one AdamW, one warmup-cosine schedule and one stopping rule.
"""
from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
from torch import nn

from .checkpoint import checkpoint_meta, latest_checkpoint, load_checkpoint, save_checkpoint
from .pipeline.atomic import atomic_path
from .pipeline.settings import check_fields, setting
from .stopping import Stopper


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

    Counts are >= 1 and the other ranges are declared on the fields
    (:func:`paper_lib.pipeline.settings.setting`), checked on construction. Raises ValueError, one line.
    """

    steps: int = 100
    batch_size: int = 16
    seq_len: int = 256
    lr: float = setting(3e-3, low=0, low_open=True)
    min_lr_frac: float = setting(0.1, low=0, high=1)
    warmup_steps: int = setting(10, low=0)
    weight_decay: float = setting(0.1, low=0)
    grad_clip: float = setting(1.0, low=0)
    betas: tuple[float, float] = setting((0.9, 0.95), low=0, high=1, high_open=True)
    seed: int = setting(0, low=0)
    log_every: int = 10
    ckpt_every: int = setting(0, low=0)

    def __post_init__(self):
        self.betas = tuple(self.betas)
        check_fields(self)


@dataclass
class TrainResult:
    """What :func:`train` returns: the log, the final training loss (nats) and throughput."""

    history: pd.DataFrame
    final_loss: float
    tokens_per_s: float
    steps_done: int


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
    """Learning rate at ``step`` (0-based): linear warmup over ``warmup_steps``, then cosine decay to
    ``min_lr_frac * lr`` at ``steps`` (nanoGPT's schedule; the one schedule of the house)."""
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


# --------------------------------------------------------------------------- small models, until flat

def train_until_flat(model: nn.Module, step_loss: Callable[[int], torch.Tensor],
                     heldout: Callable[[], Mapping[str, float]], cfg: TrainConfig, stopper: Stopper) -> list[dict]:
    """Train a small model on fresh batches until the one stopping rule stops it (:mod:`paper_lib.stopping`).

    The house's recipe: AdamW (``cfg.betas``, ``cfg.weight_decay`` on matrices), linear warmup over
    ``cfg.warmup_steps`` then cosine decay to ``cfg.min_lr_frac * cfg.lr`` at ``cfg.steps`` (the cap,
    ``stopper.max_steps``), gradients clipped at ``cfg.grad_clip``. Every ``stopper.rule.check_every``
    steps, and at the cap, ``heldout()`` gives accuracies on a fixed held-out set (fractions, e.g. one
    per gap); their mean is the run's held-out accuracy, the training loss is the mean since the last
    check, and the stopper decides. The weights of the best held-out accuracy are kept (restored at
    the end; eval mode). Our design: the paper gives no recipe.

    Args:
        step_loss: ``step_loss(step)`` -> the loss (nats, a scalar tensor) of step ``step``'s batch (1-based).
        heldout: -> ``{name: accuracy}`` on the held-out set (the model in eval mode; the loop resets it).

    Returns:
        the curve, one row per check: ``step, lr, train_loss`` (nats), every held-out accuracy by
        name and ``heldout`` (their mean); ``stopper.reason`` and ``stopper.steps`` say why and when it stopped.

    Raises:
        ValueError: ``cfg.steps`` differs from ``stopper.max_steps``.
    """
    if cfg.steps != stopper.max_steps:
        raise ValueError(f"the schedule ends at {cfg.steps} steps but the stopper's cap is {stopper.max_steps}")
    opt = make_optimizer(model, cfg)
    curve, losses, best, step = [], [], None, 0
    model.train()
    for step in range(1, cfg.steps + 1):
        lr = lr_at(step - 1, cfg)
        for g in opt.param_groups:
            g["lr"] = lr
        loss = step_loss(step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        losses.append(float(loss.detach()))
        if step % stopper.rule.check_every and step < cfg.steps:
            continue
        model.eval()
        with torch.no_grad():
            parts = dict(heldout())
        model.train()
        score, train_loss = sum(parts.values()) / len(parts), sum(losses) / len(losses)
        losses = []
        done = stopper.update(step, train_loss, score)
        curve.append({"step": step, "lr": lr, "train_loss": train_loss, **parts, "heldout": score})
        if stopper.improved[0] or best is None:
            best = copy.deepcopy(model.state_dict())
        if done:
            break
    stopper.finish(step)
    model.load_state_dict(best)
    model.eval()
    return curve


# --------------------------------------------------------------------------- training

def rank_and_world() -> tuple[int, int]:
    """``(rank, world_size)`` of this process under torch.distributed, ``(0, 1)`` outside it."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def train(model: nn.Module, ids: np.ndarray, cfg: TrainConfig, out_dir: str | Path | None = None,
          resume: bool = True, stop_after: int | None = None, progress: bool = True,
          desc: str | None = None, on_step=None) -> TrainResult:
    """Train ``model`` on the token stream ``ids`` for ``cfg.steps`` steps.

    A rerun never overwrites a result with less (our design): a run that reaches
    ``cfg.steps`` with an ``out_dir`` ends with a checkpoint, so rerunning it restores the
    trained weights, trains 0 steps, leaves ``log.csv`` as it is and returns the recorded
    loss and throughput; a resumed run continues the log without repeating rows.

    Args:
        model: a SPEN or Transformer (on its device; wrapped in DDP here when distributed).
        ids: 1-D token stream (``numpy`` integer array).
        out_dir: where ``log.csv`` and ``checkpoints/`` go (None: nothing written).
        resume: continue from ``out_dir/checkpoints`` when a checkpoint exists.
        stop_after: stop after this step (a simulated kill; the checkpoint schedule is
            unchanged), for tests.
        progress: show a tqdm bar (rank 0 only).
        on_step: ``on_step(steps_done)`` called after every step (e.g. to evaluate at
            checkpoints of a token-scaling curve); its time is not counted as training time.

    Returns:
        :class:`TrainResult`; ``final_loss`` is the mean training loss (nats) of the last step,
        averaged over ranks; ``tokens_per_s`` the mean training throughput (global tokens per
        busy second, over the whole run, resumed parts included).

    Raises:
        ValueError: ``out_dir`` holds a checkpoint of a run with another config (one line
        naming the differences; ``log_every`` and ``ckpt_every`` may change), or a token
        stream shorter than ``seq_len + 2``.
        Diverged: the loss, or before a checkpoint the weights, are not finite (checked at every
        log row and checkpoint; one line naming the step, the loss and the learning rate). No
        checkpoint of a non-finite state is written, so the latest stays the last finite one;
        ``log.csv`` keeps the rows before.
    """
    from tqdm.auto import tqdm

    rank, world = rank_and_world()
    device = next(model.parameters()).device
    net, opt, ckpt_dir, start, history, busy = _prepare(model, cfg, out_dir, resume, world, device)
    end = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
    tokens_per_step = cfg.batch_size * cfg.seq_len
    bar = tqdm(total=cfg.steps, initial=start, desc=desc or "train", disable=not progress or rank != 0,
               leave=False)
    model.train()
    t_last, n_since = time.perf_counter(), 0
    loss_val = float(history[-1]["loss"]) if history and start >= end else float("nan")
    for step in range(start, end):
        t0 = time.perf_counter()
        lr = lr_at(step, cfg)
        loss = _step(net, model, opt, *get_batch(ids, step, cfg, rank, world), lr, cfg.grad_clip, device)
        n_since += 1
        if (step + 1) % cfg.log_every == 0 or step + 1 == end:
            loss_val = _mean_over_ranks(loss, world, device)
            _check_finite(loss_val, model, step + 1, lr, cfg, ckpt_dir, history, out_dir if rank == 0 else None, bar)
            now = time.perf_counter()
            history.append({"step": step + 1, "tokens": (step + 1) * tokens_per_step, "loss": loss_val,
                            "lr": lr, "tokens_per_s": n_since * tokens_per_step / (now - t_last),
                            "elapsed_s": busy + now - t0})
            t_last, n_since = now, 0
            bar.set_postfix(loss=f"{loss_val:.3f}")
        busy += time.perf_counter() - t0
        bar.update(1)
        if on_step is not None:
            on_step(step + 1)
        last = step + 1 == cfg.steps                              # the run is complete: keep it
        if ckpt_dir is not None and ((cfg.ckpt_every and (step + 1) % cfg.ckpt_every == 0) or last):
            _check_finite(_mean_over_ranks(loss, world, device), model, step + 1, lr, cfg, ckpt_dir, history,
                          out_dir if rank == 0 else None, bar, weights=True)
            if rank == 0:
                try:
                    save_checkpoint(ckpt_dir, model, opt, step + 1, history, _run_meta(cfg, busy))
                except OSError:  # a full disk (one line): it starts a line of its own, after the bar
                    bar.close()
                    raise
            if world > 1:
                dist.barrier()
    bar.close()
    log = Path(out_dir) / "log.csv" if out_dir is not None else None
    keep = log is not None and rank == 0 and (end > start or not log.exists())  # a rerun keeps the log
    df = _write_log(history, out_dir if keep else None)
    tps = max(start, end) * tokens_per_step / busy if busy > 0 else float("nan")
    return TrainResult(df, loss_val, tps, max(start, end))


def _write_log(history: list[dict], out_dir) -> pd.DataFrame:
    """The log as a frame, written to ``out_dir/log.csv`` (atomically) when ``out_dir`` is given."""
    df = pd.DataFrame(history, columns=["step", "tokens", "loss", "lr", "tokens_per_s", "elapsed_s"])
    if out_dir is not None:
        with atomic_path(Path(out_dir) / "log.csv") as tmp:
            df.to_csv(tmp, index=False)
    return df


class Diverged(ValueError):
    """The training loss (or the weights) became inf or NaN: one line naming the step, the loss, the
    learning rate and the settings to change. A ``ValueError``, so the command line prints it as
    ``error: ...`` with exit status 2. Our design: the paper gives no training recipe."""


def _check_finite(loss: float, model: nn.Module, step: int, lr: float, cfg: TrainConfig, ckpt_dir, history: list[dict],
                  out_dir, bar, weights: bool = False) -> None:
    """Raise :class:`Diverged` when ``loss`` (or, with ``weights``, a parameter) is not finite, after
    writing the finite log rows so far to ``out_dir`` (rank 0's; None: nothing written) and closing
    the progress ``bar`` (so the error starts a line of its own)."""
    bad = next((n for n, p in model.named_parameters() if not bool(torch.isfinite(p).all())), None) if weights else None
    if math.isfinite(loss) and bad is None:
        return
    bar.close()
    _write_log(history, out_dir)
    latest = latest_checkpoint(ckpt_dir) if ckpt_dir is not None and Path(ckpt_dir).is_dir() else None
    kept = f"the latest checkpoint stays step {latest}'s" if latest is not None else "no checkpoint of it is written"
    what = f"the loss is {loss}" if not math.isfinite(loss) else f"the weights ({bad}) are not finite"
    raise Diverged(f"training diverged: {what} at step {step} of {cfg.steps} (learning rate {lr:.3g} at that step, "
                   f"peak {cfg.lr:g}); lower train.lr (lr_transformer for the Transformer), or raise "
                   f"train.warmup_steps, or set train.grad_clip > 0; {kept}, and no result is filed")


# TrainConfig fields that change no result: a resumed run may change them
_BOOKKEEPING = ("log_every", "ckpt_every")


def _run_meta(cfg: TrainConfig, busy: float) -> dict:
    """What a checkpoint records beside the log: the config (JSON form) and busy seconds so far."""
    return {"config": json.loads(json.dumps(asdict(cfg))), "busy_s": busy}


def _prepare(model: nn.Module, cfg: TrainConfig, out_dir, resume: bool, world: int, device):
    """The optimizer, the (DDP-wrapped) network, and the step, log and busy seconds to start from.

    Raises:
        ValueError: the checkpoint in ``out_dir`` was written by a run with another config.
    """
    opt = make_optimizer(model, cfg)
    net = model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP
        net = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    ckpt_dir = Path(out_dir) / "checkpoints" if out_dir is not None else None
    start, history, busy = 0, [], 0.0
    if ckpt_dir is not None and resume and latest_checkpoint(ckpt_dir) is not None:
        meta = checkpoint_meta(ckpt_dir)
        if "config" in meta:
            old, new = meta["config"], _run_meta(cfg, 0.0)["config"]
            diff = [f"{k}={old.get(k)!r} (now {v!r})" for k, v in new.items()
                    if k not in _BOOKKEEPING and old.get(k) != v]
            if diff:
                raise ValueError(f"{out_dir} holds a checkpoint of another run ({', '.join(diff)}); "
                                 "choose another output folder, or start over without resuming")
        start, history = load_checkpoint(ckpt_dir, model, opt)
        busy = float(meta.get("busy_s", 0.0))
    else:
        torch.manual_seed(cfg.seed + 1)  # training-time RNG (unused by these models), seeded
    return net, opt, ckpt_dir, start, history, busy


def _step(net: nn.Module, model: nn.Module, opt, x, y, lr: float, grad_clip: float, device) -> torch.Tensor:
    """One AdamW step on the batch ``x, y`` (B, T) at learning rate ``lr``; returns the loss (nats)."""
    for g in opt.param_groups:
        g["lr"] = lr
    x, y = x.to(device), y.to(device)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=device.type == "cuda"):
        _, loss = net(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()
    return loss


def _mean_over_ranks(loss: torch.Tensor, world: int, device) -> float:
    """The loss averaged over DDP ranks (after the device finished the step)."""
    loss_t = loss.detach().float()
    if world > 1:
        dist.all_reduce(loss_t)
        loss_t /= world
    if device.type == "cuda":
        torch.cuda.synchronize()
    return float(loss_t)
