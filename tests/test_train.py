"""Training (paper_lib.train): resume after a kill gives the same loss; 2-process DDP agrees with 1 process."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp

from paper_lib.evaluate import evaluate
from paper_lib.models.factory import build_model
from paper_lib.train import TrainConfig, get_batch, lr_at, train

SIZES = dict(vocab_size=64, n_layer=2, d_model=32, n_head=2, d_bottleneck=16, d_ff=64, block_size=64)


def _ids(n: int = 5000, seed: int = 0) -> np.ndarray:
    """A learnable stream: a random first-order Markov chain over 64 tokens."""
    rng = np.random.default_rng(seed)
    nxt = rng.integers(0, 64, size=(64, 3))
    out = [0]
    for _ in range(n - 1):
        out.append(int(nxt[out[-1], rng.integers(0, 3)]))
    return np.asarray(out, dtype=np.uint16)


CFG = TrainConfig(steps=12, batch_size=4, seq_len=32, lr=3e-3, warmup_steps=3, log_every=2, ckpt_every=5, seed=3)


@pytest.mark.parametrize("kind", ["spen", "transformer"])
def test_killed_and_resumed_run_reaches_the_same_loss(kind, tmp_path):
    torch.set_num_threads(1)
    ids = _ids()
    full = train(build_model(kind, seed=0, **SIZES), ids, CFG, out_dir=tmp_path / "full", progress=False)
    killed = tmp_path / "killed"
    part = train(build_model(kind, seed=0, **SIZES), ids, CFG, out_dir=killed, stop_after=8, progress=False)
    assert part.steps_done == 8
    assert sorted(p.name for p in (killed / "checkpoints").iterdir()) == [
        "latest.json", "step0000005.safetensors", "step0000005.state.pt"]
    fresh = build_model(kind, seed=99, **SIZES)  # other init: the checkpoint must overwrite it
    resumed = train(fresh, ids, CFG, out_dir=killed, progress=False)
    assert resumed.steps_done == 12
    assert abs(resumed.final_loss - full.final_loss) <= 1e-5
    assert full.final_loss < math.log(64) - 0.25           # it learned something (uniform: 4.16 nats)
    assert list(resumed.history["step"]) == list(full.history["step"])
    assert np.allclose(resumed.history["loss"], full.history["loss"], atol=1e-5)
    assert (tmp_path / "full" / "log.csv").read_text().splitlines()[0] == "step,tokens,loss,lr,tokens_per_s,elapsed_s"


def _ddp_worker(rank: int, world: int, rdv: str, out: str) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{rdv}", rank=rank, world_size=world)
    model = build_model("spen", seed=0, **SIZES)
    cfg = TrainConfig(steps=6, batch_size=4, seq_len=32, lr=3e-3, warmup_steps=2, log_every=1, seed=5)
    res = train(model, _ids(), cfg, progress=False)
    if rank == 0:
        torch.save({"state": model.state_dict(), "loss": res.history["loss"].tolist()}, out)
    dist.destroy_process_group()


@pytest.mark.multiprocess
def test_ddp_two_processes_agree_with_one(tmp_path):
    out = str(tmp_path / "ddp.pt")
    mp.spawn(_ddp_worker, args=(2, str(tmp_path / "rdv"), out), nprocs=2, join=True)
    ddp = torch.load(out, weights_only=True)
    torch.set_num_threads(1)
    model = build_model("spen", seed=0, **SIZES)
    cfg = TrainConfig(steps=6, batch_size=4, seq_len=32, lr=3e-3, warmup_steps=2, log_every=1, seed=5)
    single = train(model, _ids(), cfg, progress=False)
    assert np.allclose(ddp["loss"], single.history["loss"], atol=1e-5)
    for name, p in model.state_dict().items():
        assert torch.allclose(ddp["state"][name], p, atol=1e-5), name


def test_batches_split_across_ranks_and_depend_only_on_seed_and_step():
    ids = _ids()
    x, y = get_batch(ids, 7, CFG)
    x0, _ = get_batch(ids, 7, CFG, rank=0, world=2)
    x1, _ = get_batch(ids, 7, CFG, rank=1, world=2)
    assert torch.equal(torch.cat([x0, x1]), x) and torch.equal(x[:, 1:], y[:, :-1])
    assert torch.equal(get_batch(ids, 7, CFG)[0], x) and not torch.equal(get_batch(ids, 8, CFG)[0], x)
    with pytest.raises(ValueError, match="not divisible by the 3 ranks"):
        get_batch(ids, 0, CFG, rank=0, world=3)


def test_schedule_warmup_then_cosine():
    cfg = TrainConfig(steps=100, lr=1.0, warmup_steps=10, min_lr_frac=0.1)
    assert lr_at(0, cfg) == pytest.approx(0.1) and lr_at(9, cfg) == pytest.approx(1.0)
    assert lr_at(55, cfg) == pytest.approx(0.55) and lr_at(99, cfg) == pytest.approx(0.1, abs=1e-3)


def test_evaluate_marks_repeats_within_a_document():
    ids = np.asarray([5, 6, 5, 0, 5, 7, 7, 8, 9], dtype=np.uint16)  # 0 = end of text
    model = build_model("transformer", seed=0, **{**SIZES, "block_size": 8})
    ev = evaluate(model, ids, seq_len=8)
    # targets 6 5 0 5 7 7 8 9: "5" after 5,6 is a repeat; "5" after the 0 is not; second "7" is
    assert ev["repeat"].tolist() == [False, True, False, False, False, True, False, False]
    assert ev["token_loss"].shape == (8,) and ev["ppl"] == pytest.approx(math.exp(ev["loss"]))


def test_on_step_sees_every_step_and_does_not_change_training():
    torch.set_num_threads(1)
    ids = _ids()
    cfg = TrainConfig(steps=6, batch_size=4, seq_len=32, lr=3e-3, warmup_steps=2, log_every=2, seed=1)
    seen, losses = [], []
    model = build_model("spen", seed=0, **SIZES)

    def hook(done):
        seen.append(done)
        if done in (3, 6):
            losses.append(evaluate(model, ids, 32, max_tokens=256)["loss"])

    hooked = train(model, ids, cfg, progress=False, on_step=hook)
    plain = train(build_model("spen", seed=0, **SIZES), ids, cfg, progress=False)
    assert seen == [1, 2, 3, 4, 5, 6]
    assert len(losses) == 2 and losses[1] < losses[0]
    assert np.allclose(hooked.history["loss"], plain.history["loss"], atol=1e-6)


@pytest.mark.parametrize("argv, message", [
    (["--profile", "nonsense"], "argument --profile: invalid choice: 'nonsense'"),
    (["--predictor", "nope"], "argument --predictor: invalid choice: 'nope'"),
    (["--steps", "0"], "argument --steps: must be >= 1, got 0"),
    (["--batch-size", "-4"], "argument --batch-size: must be >= 1, got -4"),
    (["--seed", "-1"], "argument --seed: must be >= 0, got -1"),
    (["--steps", "ten"], "argument --steps: must be an integer >= 1, got 'ten'"),
])
def test_cli_bad_arguments_are_one_line_errors(argv, message, capsys):
    from paper_lib.lm_recipe import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(f"python -m paper_lib.lm_recipe: error: {message}") and "Traceback" not in err


def test_cli_value_errors_are_one_line(monkeypatch, capsys, tmp_path):
    """A ValueError past argparse (here: an unknown override) is caught once: one line, status 2."""
    from paper_lib import lm_recipe

    def bad(profile, over):
        raise ValueError("unknown setting 'x'; allowed: a, b")

    monkeypatch.setattr(lm_recipe, "recipe_for", bad)
    assert lm_recipe.main(["--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "error: unknown setting 'x'; allowed: a, b\n"
