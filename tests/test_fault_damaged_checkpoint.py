"""Fault kind: a damaged checkpoint on resume (a crash before the data reached the
disk, an interrupted copy) gives a 27-line traceback, or a JSON error naming no file.

A damaged checkpoint is passed over with a one-line warning naming the file when an earlier
good one exists (the last two are kept), and is otherwise one ``CheckpointError`` line (a
``ValueError``) naming the file and ``--no-resume``; meta and weights always come from the same
checkpoint. Checkpoint files are flushed to the disk (file and folder) before and after the rename.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch
from _tiny_lm import SIZES
from _tiny_lm import random_ids as _ids

from paper_lib import checkpoint, lm_recipe
from paper_lib.checkpoint import CheckpointError, checkpoint_meta, latest_checkpoint
from paper_lib.models.factory import build_model
from paper_lib.train import TrainConfig, train

CFG = TrainConfig(steps=8, batch_size=2, seq_len=16, warmup_steps=2, log_every=1, ckpt_every=3, seed=1)



@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
    checkpoint._WARNED.clear()


def _killed_run(out, cfg=CFG, stop_after=7):
    """A run killed after ``stop_after`` steps: checkpoints at 3 and 6 with ``CFG``."""
    train(build_model("spen", seed=0, **SIZES), _ids(), cfg, out_dir=out, stop_after=stop_after, progress=False)
    return out / "checkpoints"


def _damage(path, how):
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    else:
        path.write_text("{not json")


@pytest.fixture(scope="module")
def full_loss(tmp_path_factory):
    torch.set_num_threads(1)
    return train(build_model("spen", seed=0, **SIZES), _ids(), CFG, out_dir=tmp_path_factory.mktemp("full"),
                 progress=False).history["loss"].tolist()


def test_the_last_two_checkpoints_are_kept(tmp_path):
    ck = _killed_run(tmp_path)
    assert sorted(p.name for p in ck.iterdir()) == [
        "latest.json", "step0000003.safetensors", "step0000003.state.pt",
        "step0000006.safetensors", "step0000006.state.pt"]
    index = json.loads((ck / "latest.json").read_text())
    assert index["step"] == 6 and index["previous"]["step"] == 3
    assert index["state_bytes"] == (ck / "step0000006.state.pt").stat().st_size
    assert latest_checkpoint(ck) == 6


@pytest.mark.parametrize("name, how", [("step0000006.safetensors", "empty"), ("step0000006.safetensors", "truncated"),
                                       ("step0000006.state.pt", "truncated"), ("step0000006.state.pt", "empty")])
def test_damaged_newest_checkpoint_falls_back_to_the_previous_one(tmp_path, capsys, full_loss, name, how):
    ck = _killed_run(tmp_path)
    _damage(ck / name, how)
    capsys.readouterr()
    assert latest_checkpoint(ck) == 3
    assert checkpoint_meta(ck)["config"]["steps"] == 8
    resumed = train(build_model("spen", seed=5, **SIZES), _ids(), CFG, out_dir=tmp_path, progress=False)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"warning: damaged checkpoint {ck / name} (")
    assert f"resuming from the previous good one, {ck / 'step0000003.safetensors'} (step 3)" in err
    assert resumed.steps_done == 8
    assert np.allclose(resumed.history["loss"], full_loss, atol=1e-5)   # steps 4-6 redone, the same
    assert latest_checkpoint(ck) == 8


@pytest.mark.parametrize("how", ["empty", "garbage"])
def test_damaged_index_is_read_from_the_checkpoints_themselves(tmp_path, capsys, full_loss, how):
    ck = _killed_run(tmp_path)
    _damage(ck / "latest.json", how)
    capsys.readouterr()
    assert latest_checkpoint(ck) == 6
    resumed = train(build_model("spen", seed=5, **SIZES), _ids(), CFG, out_dir=tmp_path, progress=False)
    err = capsys.readouterr().err
    why = "0 bytes" if how == "empty" else "not valid JSON"
    assert err == f"warning: damaged checkpoint index {ck / 'latest.json'} ({why}); reading the checkpoints' own records\n"
    assert np.allclose(resumed.history["loss"], full_loss, atol=1e-5)


def test_damaged_index_and_newest_weights_fall_back_to_the_older_one(tmp_path, capsys):
    ck = _killed_run(tmp_path)
    _damage(ck / "latest.json", "empty")
    _damage(ck / "step0000006.safetensors", "truncated")
    capsys.readouterr()
    assert latest_checkpoint(ck) == 3
    assert f"damaged checkpoint {ck / 'step0000006.safetensors'} (truncated: " in capsys.readouterr().err


@pytest.mark.parametrize("name, how, why", [
    ("step0000005.safetensors", "empty", "0 bytes"),
    ("step0000005.safetensors", "truncated", "truncated: "),
    ("step0000005.state.pt", "truncated", "truncated: "),
    ("latest.json", "empty", None),
])
def test_damaged_only_checkpoint_is_one_line_naming_file_and_no_resume(tmp_path, name, how, why):
    cfg = TrainConfig(**{**CFG.__dict__, "ckpt_every": 5})
    ck = _killed_run(tmp_path, cfg)
    _damage(ck / name, how)
    if why is None:                                     # the weights' header still has the record
        _damage(ck / "step0000005.safetensors", "empty")
        name, why = "step0000005.safetensors", "0 bytes"
    with pytest.raises(CheckpointError) as err:
        train(build_model("spen", seed=5, **SIZES), _ids(), cfg, out_dir=tmp_path, progress=False)
    msg = str(err.value)
    assert isinstance(err.value, ValueError) and "\n" not in msg
    assert msg.startswith(f"damaged checkpoint {ck / name} ({why}")
    assert msg.endswith(f"and no earlier good checkpoint in {ck}; rerun with --no-resume to start over "
                        "(it replaces the folder's checkpoints)")


def test_no_resume_over_damaged_checkpoints_starts_over_and_replaces_them(tmp_path, full_loss):
    ck = _killed_run(tmp_path)
    for name in ("latest.json", "step0000003.safetensors", "step0000006.state.pt"):
        _damage(ck / name, "empty")
    res = train(build_model("spen", seed=0, **SIZES), _ids(), CFG, out_dir=tmp_path, resume=False, progress=False)
    assert np.allclose(res.history["loss"], full_loss, atol=1e-5)
    assert sorted(p.name for p in ck.iterdir()) == [
        "latest.json", "step0000006.safetensors", "step0000006.state.pt",
        "step0000008.safetensors", "step0000008.state.pt"]
    assert latest_checkpoint(ck) == 8


def test_cli_damaged_checkpoint_is_error_line_and_exit_2(tmp_path, monkeypatch, capsys):
    class Tok:
        def get_vocab_size(self):
            return 64
    monkeypatch.setattr(lm_recipe, "prepare_data", lambda s: {"tokenizer": Tok(), "train": _ids(),
                                                               "val": _ids(600, 1), "ood": _ids(600, 2)})
    out = tmp_path / "run"
    args = ["--profile", "smoke", "--steps", "3", "--batch-size", "2", "--out", str(out)]
    assert lm_recipe.main(args) == 0
    (out / "metrics.json").unlink()                                   # killed during evaluation
    weights = out / "checkpoints" / "step0000003.safetensors"
    _damage(weights, "truncated")
    capsys.readouterr()
    assert lm_recipe.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: damaged checkpoint {weights} (truncated: ")
    assert "--no-resume" in err
    assert lm_recipe.main([*args, "--no-resume"]) == 0


def test_every_checkpoint_file_and_its_folder_are_flushed(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(checkpoint.os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")),
                                                            real(fd)))
    _killed_run(tmp_path, TrainConfig(**{**CFG.__dict__, "ckpt_every": 5}))
    ck = str(tmp_path / "checkpoints")
    names = [os.path.basename(p) for p in synced]
    assert synced.count(ck) == 3                                      # the folder after each rename
    assert sum(n.startswith(".step0000005.safetensors.") for n in names) == 1
    assert sum(n.startswith(".step0000005.state.pt.") for n in names) == 1
    assert sum(n.startswith(".latest.json.") for n in names) == 1
