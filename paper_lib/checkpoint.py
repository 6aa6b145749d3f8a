"""Checkpoints of a training run: weights (safetensors), optimizer and RNG state, written atomically.

``stepNNNNNNN.safetensors`` (weights; its header also records the step, the state file and its
size, and the run's ``meta``), ``stepNNNNNNN.state.pt`` (optimizer, RNG states, log so far: tensors
and plain data, loaded with ``weights_only=True``, so a planted file runs nothing: :func:`load_state`) and
``latest.json`` (the newest checkpoint's record and its predecessor's), each written to a
temporary file, flushed to the disk (``fsync``), renamed, and the folder flushed too;
``latest.json`` is written last, so a kill at any moment leaves the previous checkpoint usable.
The last two checkpoints are kept.

A damaged checkpoint (a 0-byte or truncated file after a crash before the data reached the
disk, or an interrupted copy) is found before anything is loaded: the weights' header and
length, the state's zip directory and checksums, ``latest.json``'s JSON. The run then resumes
from the previous good checkpoint with a one-line warning naming the damaged file, or, when
there is none, stops with a one-line :class:`CheckpointError` naming it and ``--no-resume``.
Our design: the paper gives no training recipe.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import re
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .pipeline.atomic import WriteFailed, atomic_path

_KEY = "paper_lib.checkpoint"             # the record's key in the safetensors header metadata
_STEM = re.compile(r"^step(\d{7,})\.(safetensors|state\.pt)$")
_WAY_OUT = "rerun with --no-resume to start over (it replaces the folder's checkpoints)"


class CheckpointError(ValueError):
    """A damaged checkpoint with no good one to fall back on: one line naming the file and
    ``--no-resume``. A ``ValueError``, so the training command line prints it as ``error: ...``
    and exits with status 2."""


def _rng_state() -> dict:
    """The RNG states as tensors and plain data (numpy's key as a list of ints), so that the state
    file loads with ``weights_only=True``."""
    name, key, pos, has_gauss, gauss = np.random.get_state(legacy=True)
    state = {"torch": torch.get_rng_state(), "numpy": (name, key.tolist(), pos, has_gauss, gauss),
             "python": random.getstate()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    name, key, *rest = state["numpy"]   # a list of ints, or the array of a state file written before
    np.random.set_state((name, np.asarray(key, dtype=np.uint32), *rest))
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _fsync(path: Path, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(fd)
    except OSError:                    # a folder on a file system that cannot flush folders
        if not directory:
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def _durable(path: Path):
    """:func:`atomic_path`, with the file flushed to the disk before the rename and the folder after."""
    with atomic_path(path) as tmp:
        yield tmp
        _fsync(tmp)
    _fsync(path.parent, directory=True)


def save_checkpoint(ckpt_dir: Path, model: nn.Module, opt, step: int, history: list[dict],
                    meta: dict | None = None) -> None:
    """Write weights (safetensors), optimizer + RNG state, then ``latest.json``, atomically and durably.

    ``meta``: a JSON-able dict the run records beside the log (e.g. its training config and
    busy seconds so far), kept in ``latest.json`` and the weights' header and read back by
    :func:`checkpoint_meta`. Keeps this checkpoint and the newest good one of an earlier step;
    every other checkpoint file in ``ckpt_dir`` (and temporaries of a killed write) is removed.

    Raises:
        WriteFailed: a file could not be written (a full disk: one line naming it, the disk and
            the checkpoint that stays the latest; nothing of this one is left).
    """
    from safetensors.torch import save_model

    ckpt_dir = Path(ckpt_dir)
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    previous = next((r for r in _usable(ckpt_dir, quiet=True) if r["step"] < step), None)
    stem = f"step{step:07d}"
    rec = {"step": step, "weights": f"{stem}.safetensors", "state": f"{stem}.state.pt", "meta": dict(meta or {})}
    try:
        with _durable(ckpt_dir / rec["state"]) as tmp:
            torch.save({"optimizer": opt.state_dict(), "rng": _rng_state(), "step": step, "history": history}, tmp)
        rec["state_bytes"] = (ckpt_dir / rec["state"]).stat().st_size
        with _durable(ckpt_dir / rec["weights"]) as tmp:
            save_model(model, str(tmp), metadata={_KEY: json.dumps(rec)})
        with _durable(ckpt_dir / "latest.json") as tmp:
            tmp.write_text(json.dumps({**rec, "previous": previous}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    except WriteFailed as err:  # a full disk (torch says "unexpected pos"): one line, the previous checkpoint kept
        kept = (f"the checkpoint of step {previous['step']} is kept, and rerunning with the same --out resumes from it"
                if previous else "no earlier checkpoint is kept")
        raise WriteFailed(f"cannot save the checkpoint of step {step}: {err}; {kept}", err.errno, err.path) from None
    keep = {rec["weights"], rec["state"], "latest.json"}
    keep |= {previous["weights"], previous["state"]} if previous else set()
    for p in ckpt_dir.iterdir():
        stale = _STEM.match(p.name) or (p.name.startswith((".step", ".latest.json.")) and p.is_file())
        if stale and p.name not in keep:
            p.unlink(missing_ok=True)


def latest_checkpoint(ckpt_dir: Path) -> int | None:
    """The step of the newest good checkpoint in ``ckpt_dir`` (None if the folder holds none).

    A damaged newer one is passed over with a one-line warning on stderr naming the file.

    Raises:
        CheckpointError: checkpoints are there, but every one is damaged (one line naming the
        newest damaged file and ``--no-resume``).
    """
    rec = _chosen(ckpt_dir)
    return None if rec is None else int(rec["step"])


def checkpoint_meta(ckpt_dir: Path) -> dict:
    """The ``meta`` of the checkpoint :func:`latest_checkpoint` picks (``{}`` if there is none,
    or it was written without). Raises :class:`CheckpointError` as :func:`latest_checkpoint`."""
    rec = _chosen(ckpt_dir)
    return {} if rec is None else dict(rec.get("meta") or {})


def load_checkpoint(ckpt_dir: Path, model: nn.Module, opt) -> tuple[int, list[dict]]:
    """Restore weights, optimizer and RNG state of the checkpoint :func:`latest_checkpoint`
    picks (the same one whose ``meta`` :func:`checkpoint_meta` gives); returns ``(step, history)``.

    Raises:
        CheckpointError: every checkpoint is damaged, or a file fails to load (one line naming it).
        FileNotFoundError: ``ckpt_dir`` holds no checkpoint.
    """
    from safetensors.torch import load_model

    ckpt_dir = Path(ckpt_dir)
    rec = _chosen(ckpt_dir)
    if rec is None:
        raise FileNotFoundError(f"no checkpoint in {ckpt_dir}")
    device = next(model.parameters()).device
    weights, state_path = ckpt_dir / rec["weights"], ckpt_dir / rec["state"]
    try:
        load_model(model, str(weights), device=str(device))
    except Exception as err:
        if "Error(s) in loading state_dict" in str(err) or "Missing key" in str(err):
            raise                       # another model, not a damaged file
        raise CheckpointError(f"damaged checkpoint {weights}: {_first_line(err)}; {_WAY_OUT}") from None
    try:
        state = load_state(state_path, device)
        opt.load_state_dict(state["optimizer"])
        _set_rng_state(state["rng"])
        step, history = int(state["step"]), list(state["history"])
    except CheckpointError:
        raise
    except Exception as err:
        raise CheckpointError(f"damaged checkpoint {state_path}: {_first_line(err)}; {_WAY_OUT}") from None
    return step, history


# numpy's array and dtype: what a state file written before the RNG state was plain data holds beyond data
_OLD_NUMPY = (np.ndarray, np.dtype, type(np.dtype(np.uint32)),
              (np._core if hasattr(np, "_core") else np.core).multiarray._reconstruct)


def load_state(path: Path, device="cpu") -> dict:
    """The optimizer, RNG and log state of ``path`` (a ``*.state.pt``), loaded as data only
    (``torch.load(weights_only=True)``, numpy's array and dtype allowed for older files): a pickle
    can name any function to call while it is read (pytorch#87443), and a checkpoint folder may
    come from someone else. Our design.

    Raises:
        CheckpointError: the file names a function or class outside that list (one line naming it;
            nothing of it was called).
        pickle.UnpicklingError, RuntimeError, OSError: a damaged file (the caller names it).
    """
    import pickle

    allow = getattr(torch.serialization, "safe_globals", None)  # torch >= 2.5
    with allow(list(_OLD_NUMPY)) if allow else contextlib.nullcontext():
        try:
            return torch.load(path, map_location=device, weights_only=True)
        except pickle.UnpicklingError as err:
            said = str(err)  # torch < 2.5 names the global only in its message
            listed = getattr(torch.serialization, "get_unsafe_globals_in_checkpoint",
                             lambda _: re.findall(r"GLOBAL ([\w.]+)", said))
            allowed = {f"{g.__module__}.{g.__name__}" for g in _OLD_NUMPY}
            if not (names := [n for n in listed(path) if n not in allowed]):
                raise
    raise CheckpointError(f"refusing checkpoint {path}: it names {', '.join(names[:3])}, which loading would call; "
                          "a checkpoint holds data only, so this project did not write this file (resume only from "
                          f"a folder you trust, or {_WAY_OUT})")


# ------------------------------------------------------------------ which checkpoint, and is it whole

_WARNED: set[tuple] = set()
_VERDICTS: dict[tuple, str | None] = {}


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


def _warn(key: tuple, text: str) -> None:
    if key not in _WARNED and os.environ.get("RANK", "0") == "0":
        _WARNED.add(key)
        print(f"warning: {text}", file=sys.stderr, flush=True)


def _stamp(path: Path) -> tuple:
    try:
        st = path.stat()
        return (str(path), st.st_size, st.st_mtime_ns)
    except OSError:
        return (str(path), None, None)


def _chosen(ckpt_dir: Path) -> dict | None:
    """The record of the newest good checkpoint (None if the folder holds no checkpoint at all)."""
    ckpt_dir = Path(ckpt_dir)
    damaged: list[tuple[Path, str]] = []
    for rec in _usable(ckpt_dir, quiet=False, damaged=damaged):
        for path, why in damaged:
            _warn(_stamp(path), f"damaged checkpoint {path} ({why}); resuming from the previous good one, "
                               f"{ckpt_dir / rec['weights']} (step {rec['step']})")
        return rec
    if damaged:
        path, why = damaged[0]
        raise CheckpointError(f"damaged checkpoint {path} ({why}) and no earlier good checkpoint in {ckpt_dir}; "
                              f"{_WAY_OUT}")
    return None


def _usable(ckpt_dir: Path, quiet: bool, damaged: list | None = None):
    """Records of the good checkpoints, newest first (lazily: the first is all most callers need).

    With a readable ``latest.json``: its checkpoint, then the one before it. Without one (missing,
    0 bytes, not JSON): the records in the weights' headers, newest step first. ``damaged``
    collects ``(file, why)`` of each damaged one passed over, in order."""
    damaged = [] if damaged is None else damaged
    index = ckpt_dir / "latest.json"
    recs, why = _index(index)
    if recs is None:
        if why is not None:                            # a damaged index: say so, read the headers
            damaged.append((index, why))
        recs = _scan(ckpt_dir)
        if why is not None and recs and not quiet:
            _warn(_stamp(index), f"damaged checkpoint index {index} ({why}); reading the checkpoints' own records")
            damaged.remove((index, why))
    for rec in recs:
        bad = _damage(ckpt_dir, rec)
        if bad is None:
            yield rec
        else:
            damaged.append(bad)


def _index(path: Path) -> tuple[list[dict] | None, str | None]:
    """``latest.json`` as [newest record, previous record]; (None, why) if damaged, (None, None) if absent."""
    if not path.exists():
        return None, None
    raw = path.read_bytes()
    if not raw.strip():
        return None, f"{len(raw)} bytes"
    try:
        rec = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None, "not valid JSON"
    if not (isinstance(rec, dict) and _is_record(rec)):
        return None, "not a checkpoint record"
    prev = rec.pop("previous", None)
    return [rec] + ([prev] if isinstance(prev, dict) and _is_record(prev) else []), None


def _is_record(rec: dict) -> bool:
    return isinstance(rec.get("step"), int) and isinstance(rec.get("weights"), str) \
        and isinstance(rec.get("state"), str) and isinstance(rec.get("meta", {}), dict)


def _scan(ckpt_dir: Path) -> list[dict]:
    """Records of every ``step*.safetensors`` in ``ckpt_dir``, newest first; a file without a
    readable record (damaged, or written before records) counts as a damaged checkpoint."""
    recs = []
    for p in ckpt_dir.glob("step*.safetensors") if ckpt_dir.is_dir() else ():
        m = _STEM.match(p.name)
        if m:
            rec = _header_record(p)
            recs.append(rec if rec is not None else {"step": int(m.group(1)), "weights": p.name,
                                                     "state": f"{p.name[:-12]}.state.pt", "meta": {}, "bad": True})
    return sorted(recs, key=lambda r: -r["step"])


def _header_record(path: Path) -> dict | None:
    try:
        header = _safetensors_header(path, path.stat().st_size)
        rec = json.loads(header.get("__metadata__", {})[_KEY])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return rec if isinstance(rec, dict) and _is_record(rec) else None


def _safetensors_header(path: Path, size: int) -> dict:
    """The JSON header of a safetensors file, checked against the file's length.

    Raises:
        ValueError: what is wrong (0 bytes, truncated, not safetensors)."""
    if size == 0:
        raise ValueError("0 bytes")
    with open(path, "rb") as f:
        head = f.read(8)
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
        if not 0 < n <= size - 8:
            raise ValueError(f"truncated or not safetensors ({size} bytes)")
        try:
            header = json.loads(f.read(n))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ValueError(f"truncated or not safetensors ({size} bytes)") from None
    if not isinstance(header, dict):
        raise ValueError("not safetensors")
    end = max((int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"), default=0)
    if size != 8 + n + end:
        raise ValueError(f"truncated: {size} of {8 + n + end} bytes")
    return header


def _damage(ckpt_dir: Path, rec: dict) -> tuple[Path, str] | None:
    """``(file, why)`` for the first damaged file of checkpoint ``rec``, or None if it is whole."""
    weights, state = ckpt_dir / rec["weights"], ckpt_dir / rec["state"]
    if rec.get("bad"):
        return weights, _verdict(weights, lambda: _header_check(weights)) or "written without a record"
    for path, check in ((weights, lambda: _header_check(weights)),
                        (state, lambda: _state_check(state, rec.get("state_bytes")))):
        why = _verdict(path, check)
        if why is not None:
            return path, why
    return None


def _verdict(path: Path, check) -> str | None:
    """``check()``'s verdict on ``path`` (None: whole), remembered while the file is unchanged."""
    key = _stamp(path)
    if key[1] is None:
        return "missing"
    if key not in _VERDICTS:
        try:
            check()
            _VERDICTS[key] = None
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as err:
            _VERDICTS[key] = _first_line(err)
    return _VERDICTS[key]


def _header_check(path: Path) -> None:
    _safetensors_header(path, path.stat().st_size)


def _state_check(path: Path, expected: int | None) -> None:
    size = path.stat().st_size
    if size == 0:
        raise ValueError("0 bytes")
    if expected is not None and size != expected:
        raise ValueError(f"truncated: {size} of {expected} bytes" if size < expected
                         else f"{size} bytes, {expected} expected")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"truncated or not a torch.save file ({size} bytes)")
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
    if bad is not None:
        raise ValueError(f"checksum mismatch in {bad}")
