"""The one stopping rule (paper_lib.stopping), driven through scripted curves, and the loop that uses it."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from paper_lib.stopping import CUT, REASONS, Stopper, StopRule, accuracy_se, chance_loss, cut_metrics
from paper_lib.train import TrainConfig, train_until_flat

RULE = StopRule(check_every=10, patience=3, tol=0.01, margin=0.05, solved=0.99)
LN8 = math.log(8)


def drive(stopper: Stopper, losses, accs, every: int = 10) -> list[int]:
    """Feed the scripted (loss, accuracy) of each check; returns the steps at which the loop asked."""
    asked = []
    for i, (loss, acc) in enumerate(zip(losses, accs, strict=True), 1):
        asked.append(i * every)
        if stopper.update(i * every, loss, acc):
            break
    else:
        stopper.finish(asked[-1])
    return asked


def test_the_held_out_set_must_resolve_the_tolerance():
    assert accuracy_se(2500) == pytest.approx(0.01)
    RULE.check_heldout(2500)
    with pytest.raises(ValueError, match=r"held-out set of 2499 examples has a standard error up to 0\.0100, above the "
                                         r"stopping tolerance 0\.01: use at least 2500 examples, or a larger tol"):
        Stopper(RULE, 100, LN8, n_heldout=2499)
    with pytest.raises(ValueError, match="must be a finite number > 0"):
        StopRule(tol=0)
    assert chance_loss(8) == pytest.approx(2.0794, abs=1e-4)


def test_a_run_on_its_initial_plateau_is_never_stopped_however_flat():
    s = Stopper(RULE, 200, LN8, 2500)
    asked = drive(s, [LN8 + 0.01] * 20, [0.125] * 20)                  # flat at chance for 20 checks
    assert asked[-1] == 200 and s.reason == "never_left_plateau" and s.steps[0] == 200


def test_the_plateau_is_judged_by_the_loss_not_by_the_accuracy():
    s = Stopper(RULE, 200, LN8, 2500)
    drive(s, [LN8 - 0.04] * 20, [0.30] * 20)                           # within the 0.05-nat margin: still on it
    assert s.reason == "never_left_plateau"
    s = Stopper(RULE, 200, LN8, 2500)
    asked = drive(s, [LN8 - 0.2] * 20, [0.30] * 20)                    # off it, and flat: stops after patience
    assert s.reason == "flat" and asked[-1] == 40                      # best at 10, no gain of 0.01 by 40


def test_a_long_plateau_then_learning_then_flat():
    losses = [LN8] * 8 + [1.5, 1.0, 0.6, 0.4, 0.35, 0.34, 0.34, 0.34, 0.34, 0.34]
    accs = [0.12] * 8 + [0.4, 0.6, 0.8, 0.9, 0.93, 0.935, 0.936, 0.936, 0.937, 0.936]
    s = Stopper(RULE, 1000, LN8, 2500)
    asked = drive(s, losses, accs)
    assert s.reason == "flat" and asked[-1] == 160 and s.best[0] == pytest.approx(0.936)   # 0.93 -> 0.936 over 3
    assert s.best_step[0] == 150


def test_solved_stops_at_once_and_min_steps_holds_back_only_flat():
    s = Stopper(RULE, 1000, LN8, 2500, min_steps=500)
    assert drive(s, [0.5] * 3, [0.5, 0.995, 0.995])[-1] == 20 and s.reason == "solved"
    s = Stopper(RULE, 1000, LN8, 2500, min_steps=100)
    asked = drive(s, [0.5] * 20, [0.5] * 20)                          # flat from the start: waits for min_steps
    assert s.reason == "flat" and asked[-1] == 100


def test_the_cap_says_whether_the_run_was_still_improving():
    s = Stopper(RULE, 100, LN8, 2500)
    drive(s, [1.0] * 10, np.linspace(0.2, 0.8, 10))                    # rising at the cap
    assert s.reason == "cap_while_improving"
    s = Stopper(RULE, 100, LN8, 2500)
    drive(s, [1.0] * 10, [0.5] * 10)                                   # flat before the cap: stopped there
    assert s.reason == "flat" and s.steps[0] == 40


def test_runs_side_by_side_stop_separately_and_record_why():
    s = Stopper(RULE, 100, [LN8, LN8, 1.0], 2500, runs=3)
    for step in range(10, 101, 10):
        acc = np.array([0.125, min(1.0, step / 100), 0.5])
        loss = np.array([LN8, 0.5, 0.5])                                # run 2 sits on ITS chance loss, 1.0
        if s.update(step, loss, acc):
            break
    assert s.reasons == ["never_left_plateau", "solved", "flat"]
    assert list(s.steps) == [100, 100, 40] and not s.running.any()
    assert set(CUT) < set(REASONS)
    assert cut_metrics("x_", s.reasons) == {"x_improving": [0.0, 0.0, 0.0], "x_plateau": [1.0, 0.0, 0.0]}


def test_train_until_flat_keeps_the_best_weights_and_says_why_it_stopped():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    x = torch.randn(256, 4)
    y = (x[:, 0] > 0).long()
    cfg = TrainConfig(steps=300, batch_size=256, seq_len=1, lr=0.05, warmup_steps=0, weight_decay=0.0, seed=0)
    rule = StopRule(check_every=10, patience=3, tol=0.01, solved=0.98)

    def heldout():
        return {"all": float((model(x).argmax(1) == y).float().mean())}

    stopper = Stopper(rule, 300, math.log(2), 2500)
    curve = train_until_flat(model, lambda step: torch.nn.functional.cross_entropy(model(x), y), heldout, cfg, stopper)
    assert stopper.reason == "solved" and curve[-1]["heldout"] >= 0.98 and curve[-1]["step"] == stopper.steps[0]
    assert heldout()["all"] == pytest.approx(stopper.best[0])          # the best held-out weights are restored
    assert {"step", "lr", "train_loss", "all", "heldout"} <= set(curve[0])
    with pytest.raises(ValueError, match="the schedule ends at 300 steps but the stopper's cap is 200"):
        train_until_flat(model, lambda step: None, heldout, cfg, Stopper(rule, 200, 1.0, 2500))
