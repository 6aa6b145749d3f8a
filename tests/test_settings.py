"""Typed settings (paper_lib.pipeline.settings): every notebook's values are checked against their fields."""
from __future__ import annotations

import pytest

from paper_lib.experiments import (
    associative_recall,
    boundary_map,
    grammar_probe,
    predictor_ablation,
    spen_train,
    transfer,
    update_recall,
)

MODULES = [grammar_probe, transfer, spen_train, predictor_ablation, associative_recall, boundary_map, update_recall]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("profile", ["smoke", "cpu", "paper", "gpu"])
def test_every_profile_passes_its_own_checks(module, profile):
    assert module.settings_for(profile).seeds


@pytest.mark.parametrize("module, overrides, message", [
    (grammar_probe, {"spcn": {"epochs": 0}}, "grammar_probe.spcn.epochs=0: must be an integer >= 1"),
    (grammar_probe, {"workers": 0}, "grammar_probe.workers=0: must be an integer >= 1"),
    (transfer, {"data": {"n_train": 2.5}}, "transfer.data.n_train=2.5: must be an integer >= 1"),
    (transfer, {"controls": 1}, "transfer.controls=1: must be true or false"),
    (spen_train, {"train": {"steps": -1}}, "spen_train.train.steps=-1: must be an integer >= 1"),
    (spen_train, {"train": {"batch_size": True}}, "spen_train.train.batch_size=True: must be an integer >= 1"),
    (spen_train, {"train": {"lr": "fast"}}, "spen_train.train.lr='fast': must be a finite number > 0"),
    (spen_train, {"train": {"lr": float("nan")}}, "spen_train.train.lr=nan: must be a finite number > 0"),
    (spen_train, {"train": {"lr": 0}}, "spen_train.train.lr=0: must be a finite number > 0"),
    (spen_train, {"data": {"max_train_chars": 0}}, "spen_train.data.max_train_chars=0: must be an integer >= 1"),
    (spen_train, {"train": {"warmup_steps": -1}}, "spen_train.train.warmup_steps=-1: must be an integer >= 0"),
    (spen_train, {"spen": {"predictor": 3}}, "spen_train.spen.predictor=3: must be a string"),
    (spen_train, {"spen": {"top_k_frac": 0}}, "spen_train.spen.top_k_frac=0: must be a finite number > 0 and <= 1"),
    (spen_train, {"spen": {"alphas": [0.5, 1.5]}}, "spen_train.spen.alphas=[0.5, 1.5]: every value must be > 0 and <= 1"),
    (spen_train, {"spen": {"d_model": 256}}, "spen_train: spen.d_model=256 but transformer.d_model=64; the two models "
     "must be matched (n_layer, d_model, block_size and data.vocab_size): set both"),
    (spen_train, {"spen": {"vocab_size": 4096}}, "spen_train.spen.vocab_size is not a setting of its own; set data.vocab_size"),
    (spen_train, {"train": {"seed": 3}}, "spen_train.train.seed is not a setting of its own; set seeds"),
    (spen_train, {"spen": {"alpha": [0.5]}}, "unknown setting(s) spen_train.spen.alpha; allowed: vocab_size, n_layer, "
     "d_model, alphas, d_bottleneck, d_ff, top_k_frac, predictor, n_head, block_size"),
    (predictor_ablation, {"transformer": {"n_head": 3}}, "predictor_ablation.transformer.n_head=3: d_model (32) must be "
     "divisible by n_head"),
    (predictor_ablation, {"seeds": 3}, "predictor_ablation.seeds=3: must be a list"),
    (predictor_ablation, {"predictors": ["linear", 2]}, "predictor_ablation.predictors=['linear', 2]: must be a list of strings"),
    (associative_recall, {"distance_gap": [1]}, "associative_recall.distance_gap=[1]: must be a list of 2 values"),
    (associative_recall, {"lrs": [1e-3, "x"]}, "associative_recall.lrs=[0.001, 'x']: must be a list of numbers"),
    (associative_recall, {"stop": {"tol": 0}}, "associative_recall.stop.tol=0: must be a finite number > 0"),
    (update_recall, {"spen": {"alphas": [1.5, 0.1]}}, "update_recall.spen.alphas=[1.5, 0.1]: every value must be > 0 "
     "and <= 1"),
    (update_recall, {"scan": {"lr": 0}}, "update_recall.scan.lr=0: must be a finite number > 0"),
    (update_recall, {"lti_scan": {"max_steps": 0}}, "update_recall.lti_scan.max_steps=0: must be an integer >= 1"),
    (update_recall, {"curriculum": {"gap_every": -1}},
     "update_recall.curriculum.gap_every=-1: must be an integer >= 0"),
    (update_recall, {"transformer": {"d_modl": 32}},
     "unknown setting(s) update_recall.transformer.d_modl; allowed: lr, max_steps, batch_size, warmup_steps, "
     "min_lr_frac, weight_decay, d_model"),
    (boundary_map, {"gru_stop": {"patience": 0}}, "boundary_map.gru_stop.patience=0: must be an integer >= 1"),
])
def test_a_value_that_does_not_fit_its_field_is_one_line_before_anything_runs(module, overrides, message):
    with pytest.raises(ValueError) as err:
        module.settings_for("smoke", overrides)
    assert str(err.value) == message


def test_values_that_fit_are_kept_with_lists_as_tuples():
    s = spen_train.settings_for("smoke", {"train": {"warmup_steps": 0, "lr": 1}, "sweep_steps": 0, "lr_transformer": None,
                                          "data": {"max_train_chars": None}, "eval_at": [4, 8]})
    assert (s.train.warmup_steps, s.sweep_steps, s.train.lr, s.lr_transformer, s.eval_at) == (0, 0, 1, None, (4, 8))
    assert grammar_probe.settings_for("smoke", {"data": {"max_depth": 0}, "spcn": {"seed": 0}}).data.max_depth == 0


@pytest.mark.parametrize("module", [spen_train, predictor_ablation], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_language_model_knob_is_reachable_from_overrides(module):
    s = module.settings_for("smoke", {"spen": {"alphas": [0.5, 0.05], "top_k_frac": 0.1, "n_head": 2},
                                      "train": {"lr": 1e-3}, "transformer": {"n_head": 2}, "data": {"vocab_size": 512}})
    assert (s.spen.alphas, s.spen.top_k_frac, s.spen.n_head, s.train.lr, s.transformer.n_head) == ((0.5, 0.05), 0.1, 2, 1e-3, 2)
    assert s.spen.vocab_size == s.transformer.vocab_size == 512       # both models take data's vocabulary
    from paper_lib.lm_recipe import build_lm, lr_for

    spen = build_lm("spen", s, 97)
    assert spen.config.alphas == (0.5, 0.05) and spen.config.vocab_size == 97
    assert lr_for("spen", s) == lr_for("transformer", s) == 1e-3


def test_a_config_checks_its_fields_however_it_is_made():
    from paper_lib.models.spen import SPENConfig
    from paper_lib.train import TrainConfig

    with pytest.raises(ValueError, match=r"^SPENConfig.top_k_frac=1.5: must be a finite number > 0 and <= 1$"):
        SPENConfig(top_k_frac=1.5)
    with pytest.raises(ValueError, match=r"^TrainConfig.min_lr_frac=2: must be a finite number >= 0 and <= 1$"):
        TrainConfig(min_lr_frac=2)
    assert TrainConfig(warmup_steps=0, ckpt_every=0, seed=0).warmup_steps == 0


def test_settings_table_one_row_per_section():
    from paper_lib.experiments.grammar_probe import settings_for
    from paper_lib.pipeline.settings import settings_table

    table = settings_table(settings_for("smoke"))
    assert table.index[0] == "run" and "seeds=(0, 1)" in table.loc["run", "settings"]
    assert table.loc["spcn (SPCNConfig)", "settings"].startswith("d_code=")
    assert len(table) <= 6                                  # a few rows, not one per field
    with pytest.raises(TypeError, match="needs a dataclass instance, got dict"):
        settings_table({"a": 1})


def test_the_ema_rates_are_one_checked_field_in_every_notebook():
    """One shape per knob: 05's rates are nested as 03/04's (``spen.alphas``), 06's banks a mapping
    merged by name; every list of rates is checked by the one rule (0, 1] (paper_lib.ema.ALPHA_RANGE)."""
    from paper_lib.experiments import boundary_map

    with pytest.raises(ValueError, match=r"^unknown setting\(s\) associative_recall.alphas; allowed: .*"
                                         r"\(did you mean associative_recall.spen.alphas\?\)$"):
        associative_recall.settings_for("cpu", {"alphas": [1.5, 0.1]})
    for module, overrides, message in (
            (associative_recall, {"spen": {"alphas": [1.5, 0.1]}},
             "associative_recall.spen.alphas=[1.5, 0.1]: every value must be > 0 and <= 1"),
            (spen_train, {"spen": {"alphas": [1.5, 0.1]}}, "spen_train.spen.alphas=[1.5, 0.1]: every value must be > 0 and <= 1"),
            (grammar_probe, {"spcn": {"alphas": [1.5, 0.1]}},
             "grammar_probe.spcn.alphas=[1.5, 0.1]: every value must be > 0 and <= 1"),
            (boundary_map, {"banks": {"paper": [1.5]}}, "boundary_map.banks.paper=[1.5]: every value must be > 0 and <= 1"),
            (boundary_map, {"banks": {"fast": []}}, "boundary_map.banks.fast=[]: must be a non-empty list")):
        with pytest.raises(ValueError) as err:
            module.settings_for("cpu", overrides)
        assert str(err.value) == message
    assert associative_recall.settings_for("cpu", {"spen": {"alphas": [0.5, 0.05]}}).spen.alphas == (0.5, 0.05)
    s = update_recall.settings_for("cpu", {"spen": {"alphas": [0.5, 0.05]}, "scan": {"lr": 1e-3}})
    assert s.spen.alphas == (0.5, 0.05) and s.scan.lr == 1e-3 and s.gru.lr == 3e-3   # one name: SPEN's and the bank's
    with pytest.raises(ValueError, match=r"did you mean update_recall.spen.alphas\?"):
        update_recall.settings_for("cpu", {"alphas": [0.5]})
    kept = boundary_map.settings_for("cpu", {"banks": {"paper": [0.5, 0.1, 0.02]}}).banks
    assert kept == {"paper": (0.5, 0.1, 0.02), "slow": (0.2, 0.02, 0.005)}                       # slow is kept
    added = boundary_map.settings_for("cpu", {"banks": {"fast": [0.9]}}).banks
    assert list(added) == ["paper", "slow", "fast"] and added["fast"] == (0.9,)
    one = boundary_map.settings_for("cpu", {"banks": {"slow": None}, "oracle_banks": ["paper"]})
    assert list(one.banks) == ["paper"]                                                         # None removes a bank


def test_grammar_sizes_are_one_nested_config_shared_by_01_and_02():
    a, b = grammar_probe.settings_for("paper"), transfer.settings_for("paper")
    assert type(a.data) is type(b.data) and a.data == b.data
    assert (a.data.n_train, a.data.n_test, a.data.n_test_B) == (10000, 2000, 2000)
    with pytest.raises(ValueError, match=r"\(did you mean grammar_probe.data.n_train\?\)$"):
        grammar_probe.settings_for("cpu", {"n_train": 300})
    with pytest.raises(ValueError, match=r"^GrammarData.max_depth=-1: must be an integer >= 0$"):
        type(a.data)(max_depth=-1)
