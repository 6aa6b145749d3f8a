"""Typed settings (paper_lib.pipeline.settings): every notebook's values are checked against their fields."""
from __future__ import annotations

import pytest

from paper_lib.experiments import associative_recall, grammar_probe, predictor_ablation, spen_train, transfer

MODULES = [grammar_probe, transfer, spen_train, predictor_ablation, associative_recall]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("profile", ["smoke", "cpu", "paper"])
def test_every_profile_passes_its_own_checks(module, profile):
    assert module.settings_for(profile).seeds


@pytest.mark.parametrize("module, overrides, message", [
    (grammar_probe, {"spcn": {"epochs": 0}}, "grammar_probe.spcn.epochs=0: must be an integer >= 1"),
    (grammar_probe, {"workers": 0}, "grammar_probe.workers=0: must be an integer >= 1"),
    (transfer, {"n_train": 2.5}, "transfer.n_train=2.5: must be an integer >= 1"),
    (transfer, {"controls": 1}, "transfer.controls=1: must be true or false"),
    (spen_train, {"steps": -1}, "spen_train.steps=-1: must be an integer >= 1"),
    (spen_train, {"batch_size": True}, "spen_train.batch_size=True: must be an integer >= 1"),
    (spen_train, {"lr": "fast"}, "spen_train.lr='fast': must be a finite number"),
    (spen_train, {"lr": float("nan")}, "spen_train.lr=nan: must be a finite number"),
    (spen_train, {"max_train_chars": 0}, "spen_train.max_train_chars=0: must be an integer >= 1"),
    (spen_train, {"warmup_steps": -1}, "spen_train.warmup_steps=-1: must be an integer >= 0"),
    (spen_train, {"predictor": 3}, "spen_train.predictor=3: must be a string"),
    (predictor_ablation, {"seeds": 3}, "predictor_ablation.seeds=3: must be a list"),
    (predictor_ablation, {"predictors": ["linear", 2]}, "predictor_ablation.predictors=['linear', 2]: must be a list of strings"),
    (associative_recall, {"distance_gap": [1]}, "associative_recall.distance_gap=[1]: must be a list of 2 values"),
    (associative_recall, {"lrs": [1e-3, "x"]}, "associative_recall.lrs=[0.001, 'x']: must be a list of numbers"),
])
def test_a_value_that_does_not_fit_its_field_is_one_line_before_anything_runs(module, overrides, message):
    with pytest.raises(ValueError) as err:
        module.settings_for("smoke", overrides)
    assert str(err.value) == message


def test_values_that_fit_are_kept_with_lists_as_tuples():
    s = spen_train.settings_for("smoke", {"warmup_steps": 0, "sweep_steps": 0, "lr": 1, "lr_transformer": None,
                                          "max_train_chars": None, "eval_at": [4, 8]})
    assert (s.warmup_steps, s.sweep_steps, s.lr, s.lr_transformer, s.eval_at) == (0, 0, 1, None, (4, 8))
    assert grammar_probe.settings_for("smoke", {"max_depth": 0, "spcn": {"seed": 0}}).max_depth == 0
