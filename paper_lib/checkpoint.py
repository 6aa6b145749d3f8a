"""Checkpoints of a training run: weights (safetensors), optimizer and RNG state, written atomically.

``stepNNNNNNN.safetensors`` (weights), ``stepNNNNNNN.state.pt`` (optimizer, RNG states, log so
far) and ``latest.json``, each written atomically (:mod:`paper_lib.pipeline.atomic`);
``latest.json`` is written last, so a kill at any moment leaves the previous checkpoint usable.
Our design: the paper gives no training recipe.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .pipeline.atomic import atomic_path, write_json


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


def save_checkpoint(ckpt_dir: Path, model: nn.Module, opt, step: int, history: list[dict],
                    meta: dict | None = None) -> None:
    """Write weights (safetensors), optimizer + RNG state, then ``latest.json``, atomically.

    ``meta``: a JSON-able dict the run records beside the log (e.g. its training config and
    busy seconds so far), kept in ``latest.json`` and read back by :func:`checkpoint_meta`.
    """
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
                                          "state": f"{stem}.state.pt", "meta": dict(meta or {})})
    if previous is not None and previous != step:  # keep only the newest
        for suffix in (".safetensors", ".state.pt"):
            (ckpt_dir / f"step{previous:07d}{suffix}").unlink(missing_ok=True)


def latest_checkpoint(ckpt_dir: Path) -> int | None:
    """The step of the newest complete checkpoint in ``ckpt_dir`` (None if there is none)."""
    path = Path(ckpt_dir) / "latest.json"
    return json.loads(path.read_text())["step"] if path.exists() else None


def checkpoint_meta(ckpt_dir: Path) -> dict:
    """The ``meta`` of the newest checkpoint (``{}`` if there is none, or it was written without)."""
    path = Path(ckpt_dir) / "latest.json"
    return dict(json.loads(path.read_text()).get("meta", {})) if path.exists() else {}


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


