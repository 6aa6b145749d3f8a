"""Fault kind: re-running a finished training job erases what it recorded.

A rerun or a resume never overwrites a result with less: the library's :func:`train` restores
a finished run (weights, loss, throughput) and keeps its log; the command line says
"already complete" and leaves every file as it is, refuses a folder that holds another run,
and evaluates a run killed between training and ``metrics.json`` with the recorded values.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from _tiny_lm import SIZES
from _tiny_lm import random_ids as _ids

from paper_lib import lm_recipe
from paper_lib.models.factory import build_model
from paper_lib.train import TrainConfig, train


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.mark.parametrize("ckpt_every", [0, 3])                      # 3: the last checkpoint is the end
def test_rerunning_a_finished_run_restores_it_and_keeps_the_log(tmp_path, ckpt_every):
    cfg = TrainConfig(steps=6, batch_size=2, seq_len=16, warmup_steps=2, log_every=2, seed=1, ckpt_every=ckpt_every)
    model = build_model("spen", seed=0, **SIZES)
    first = train(model, _ids(), cfg, out_dir=tmp_path, progress=False)
    log = (tmp_path / "log.csv").read_bytes()
    again_model = build_model("spen", seed=7, **SIZES)                 # other weights: must be restored
    again = train(again_model, _ids(), cfg, out_dir=tmp_path, progress=False)
    assert again.steps_done == 6
    assert again.final_loss == first.final_loss and np.isfinite(again.final_loss)
    assert again.tokens_per_s == first.tokens_per_s and np.isfinite(again.tokens_per_s)
    assert (tmp_path / "log.csv").read_bytes() == log
    assert list(again.history["step"]) == [2, 4, 6]                   # not duplicated
    for name, p in model.state_dict().items():
        assert torch.equal(again_model.state_dict()[name], p), name


def test_resuming_with_another_config_is_a_one_line_error(tmp_path):
    cfg = TrainConfig(steps=4, batch_size=2, seq_len=16, warmup_steps=1, log_every=2, seed=1)
    train(build_model("spen", seed=0, **SIZES), _ids(), cfg, out_dir=tmp_path, progress=False)
    other = TrainConfig(steps=8, batch_size=2, seq_len=16, warmup_steps=1, log_every=4, seed=1)
    with pytest.raises(ValueError, match=r"holds a checkpoint of another run \(steps=4 \(now 8\)\)"):
        train(build_model("spen", seed=0, **SIZES), _ids(), other, out_dir=tmp_path, progress=False)


class _Tok:
    def get_vocab_size(self) -> int:
        return 64


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """``python -m paper_lib.lm_recipe`` in-process on a synthetic token stream (no corpus)."""
    calls = []

    def fake_data(settings):
        calls.append(settings)
        return {"tokenizer": _Tok(), "train": _ids(), "val": _ids(600, 1), "ood": _ids(600, 2)}

    monkeypatch.setattr(lm_recipe, "prepare_data", fake_data)
    out = tmp_path / "run"
    base = ["--profile", "smoke", "--steps", "4", "--batch-size", "2", "--out", str(out)]
    return lambda *extra: lm_recipe.main([*base, *extra]), out, calls


def test_cli_second_run_says_already_complete_and_touches_nothing(cli, capsys):
    run, out, calls = cli
    assert run() == 0
    files = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert json.loads(files["metrics.json"])["final_train_loss"] is not None
    capsys.readouterr()
    assert run() == 0
    assert "already complete" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == files
    assert len(calls) == 1                                            # no data prepared, nothing trained


def test_cli_run_killed_before_metrics_is_evaluated_with_recorded_values(cli):
    run, out, _ = cli
    assert run() == 0
    first = json.loads((out / "metrics.json").read_text())
    log = (out / "log.csv").read_bytes()
    (out / "metrics.json").unlink()                                   # killed during evaluation
    assert run() == 0
    second = json.loads((out / "metrics.json").read_text())
    for key in ("final_train_loss", "tokens_per_s", "val_loss", "ood_loss"):
        assert second[key] == first[key], key
    assert (out / "log.csv").read_bytes() == log


def test_cli_folder_with_another_finished_run_is_a_one_line_error(cli, capsys):
    run, out, _ = cli
    assert run() == 0
    capsys.readouterr()
    assert run("--seed", "3") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds a finished run with other settings (seed)" in err


def test_cli_overrides_reach_every_recipe_field_and_are_recorded(cli, capsys):
    run, out, calls = cli
    assert run("--overrides", '{"spen": {"alphas": [0.5, 0.05], "top_k_frac": 0.1}, "train": {"lr": 0.001}}') == 0
    settings = json.loads((out / "metrics.json").read_text())["run"]["settings"]
    assert (settings["spen"]["alphas"], settings["spen"]["top_k_frac"], settings["train"]["lr"]) == ([0.5, 0.05], 0.1, 0.001)
    assert settings["train"]["steps"] == 4                             # the --steps shortcut lands in train
    assert calls[0].vocab_size == 1024                                 # the data group goes to prepare_data
    capsys.readouterr()
    assert run("--overrides", '{"spen": {"alpha": 1}}') == 2
    assert capsys.readouterr().err.startswith("error: unknown setting(s) lm.spen.alpha; allowed: ")
