"""A run whose loss goes non-finite, and a split too short to evaluate, stop before anything is filed.

- A non-finite loss (or non-finite weights before a checkpoint) stops training in one line naming
  the step, the loss and the settings to look at; the exit status is 2, no ``metrics.json`` is
  written, no checkpoint of a non-finite state becomes the latest, ``log.csv`` keeps the finite
  rows, and a rerun stops again instead of saying "already complete". A sweep leaves such a rate out.
- A split shorter than one window is named (split, file, length, the settings that lengthen it)
  before any step is trained.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import torch
from _tiny_lm import SIZES
from _tiny_lm import random_ids as _ids

from paper_lib import lm_recipe
from paper_lib.checkpoint import latest_checkpoint, load_checkpoint
from paper_lib.models.factory import build_model
from paper_lib.train import TrainConfig, make_optimizer, train


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def test_weights_that_turn_nan_stop_the_run_and_no_nan_checkpoint_is_kept(tmp_path):
    cfg = TrainConfig(steps=12, batch_size=2, seq_len=16, warmup_steps=1, log_every=4, ckpt_every=3, seed=1)
    model = build_model("spen", seed=0, **SIZES)

    def poison(done: int) -> None:  # after step 4 a weight becomes NaN: the loss of step 5 on is NaN
        if done == 4:
            with torch.no_grad():
                next(model.parameters()).view(-1)[0] = float("nan")

    with pytest.raises(ValueError) as err:  # paper_lib.train.Diverged
        train(model, _ids(), cfg, out_dir=tmp_path, progress=False, on_step=poison)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("training diverged: the loss is nan at step 6 of 12 (learning rate ")
    assert "lower train.lr" in message and "the latest checkpoint stays step 3's" in message
    ck = tmp_path / "checkpoints"
    assert latest_checkpoint(ck) == 3 and not list(ck.glob("step0000006*"))
    fresh = build_model("spen", seed=5, **SIZES)
    load_checkpoint(ck, fresh, make_optimizer(fresh, cfg))
    assert all(torch.isfinite(p).all() for p in fresh.parameters())
    log = pd.read_csv(tmp_path / "log.csv")
    assert list(log.step) == [4] and np.isfinite(log.loss).all()  # the finite rows before


class _Tok:
    def get_vocab_size(self) -> int:
        return 64


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """``python -m paper_lib.lm_recipe`` in-process on a synthetic token stream (no corpus)."""
    data = {"tokenizer": _Tok(), "train": _ids(), "val": _ids(600, 1), "ood": _ids(600, 2)}
    monkeypatch.setattr(lm_recipe, "prepare_data", lambda settings: dict(data))
    out = tmp_path / "run"
    base = ["--profile", "smoke", "--steps", "16", "--batch-size", "2", "--out", str(out)]
    return lambda *extra: lm_recipe.main([*base, *extra]), out, data


@pytest.mark.parametrize("model", ["spen", "transformer"])
def test_a_diverging_cli_run_is_one_line_and_never_filed_complete(cli, capsys, model):
    run, out, _ = cli
    args = ("--model", model, "--overrides", '{"train": {"lr": 1e6, "warmup_steps": 1, "grad_clip": 0}}')
    assert run(*args) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in re.split(r"[\r\n]", err) if ln.strip()]  # tqdm's bar redraws, cleared, then the error
    assert [ln for ln in lines if "error" in ln] == lines[-1:] and lines[-1].startswith("error: training diverged: "
                                                                                     "the loss is ")
    assert re.search(r"the loss is (nan|inf) at step \d+ of 16 \(learning rate ", err) and "lower train.lr" in err
    assert not (out / "metrics.json").exists()
    ck = out / "checkpoints"  # its one checkpoint would be the last step's: none of a non-finite state
    assert not ck.exists() or latest_checkpoint(ck) is None
    log = pd.read_csv(out / "log.csv")
    assert np.isfinite(log.loss.astype(float)).all()  # the rows before the loss went non-finite, none empty
    assert run(*args) == 2  # the rerun stops again; never "already complete"
    assert "already complete" not in capsys.readouterr().out


def test_a_held_out_split_too_short_is_named_before_training(cli, capsys):
    run, out, data = cli
    data["val"] = _ids(28, 1)  # 28 tokens: no window of 64 + 1
    data["sources"] = {"train": "notes.jsonl", "val": "notes.jsonl", "ood": "lee_background"}
    assert run() == 2
    err = capsys.readouterr().err
    assert err == ("error: the held-out validation split (val, from notes.jsonl) has 28 tokens, fewer than the 65 "
                   "that one window of train.seq_len=64 needs; give data.corpus more or longer documents (a local "
                   "file holds out every 10th one) or set data.val_corpus (or raise data.max_val_chars), or lower "
                   "train.seq_len\n")
    assert not out.exists() or not any(out.rglob("*"))  # nothing trained, nothing written


def test_a_sweep_rate_that_diverges_is_left_out_not_fatal():
    from paper_lib.experiments import spen_train as st

    settings = st.settings_for("smoke", {"sweep_lrs": [2e-3, 1e6], "sweep_steps": 6, "train": {"grad_clip": 0}})
    data = {"tokenizer": _Tok(), "train": _ids(), "dev": _ids(600, 3)}
    sweep = st.lr_sweep(settings, data, kinds=("spen",), progress=False)
    assert list(sweep.lr) == [2e-3, 1e6]
    assert np.isfinite(sweep.val_loss[0]) and np.isnan(sweep.val_loss[1])  # diverged: no dev loss
    assert st.choose_lr(sweep)["spen"]["lr"] == 2e-3
