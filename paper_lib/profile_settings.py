"""What each run profile changes in each notebook's settings (the ``cpu`` profile is the defaults).

Each notebook's settings are a dataclass in its experiment module whose defaults are the ``cpu``
profile's values (``paper_lib.experiments.<name>.Settings``). A profile states only what differs,
per section (one section per notebook, and ``lm``, the training command line of
:mod:`paper_lib.lm_recipe`); :func:`paper_lib.pipeline.settings.configure` applies it, so a
misspelt key here is a one-line error, never a silent default. Units are in the dataclasses'
comments; ``paper`` values follow the paper where it gives a number. A profile itself (its
threads, where it publishes, whether it proves nothing) is a record of
:mod:`paper_lib.pipeline.profiles`; adding one is that record and its block here.
Our design: the paper is silent.
"""
from __future__ import annotations

import copy
from typing import Mapping


def merged(*parts: Mapping) -> dict:
    """Dicts merged left to right, nested dicts key by key (a section built from shared parts)."""
    out: dict = {}
    for part in parts:
        for k, v in part.items():
            out[k] = merged(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) else copy.deepcopy(v)
    return out


def _matched(n_layer: int, d_model: int, block_size: int, n_head: int, d_ff: int, d_bottleneck: int) -> dict:
    """Sizes of SPEN and the matched Transformer (same depth, width, positions; the vocabulary is data's)."""
    same = {"n_layer": n_layer, "d_model": d_model, "block_size": block_size, "d_ff": d_ff}
    return {"spen": {**same, "d_bottleneck": d_bottleneck}, "transformer": {**same, "n_head": n_head}}


# The language-model recipe (paper_lib.lm_recipe) at smoke and paper: the `lm` section (the training
# command line) and the base of notebooks 03 and 04 (same token streams).
_SMOKE_LM_DATA = {"data": {"max_train_chars": 400_000, "max_val_chars": 60_000, "vocab_size": 1024}}
_SMOKE_LM = merged(_SMOKE_LM_DATA, _matched(2, 64, 256, n_head=2, d_ff=256, d_bottleneck=32),
                   {"train": {"seq_len": 64, "steps": 30, "warmup_steps": 5, "log_every": 5},
                    "eval_tokens": 4096, "seeds": [0]})
_PAPER_LM = merged({"data": {"corpus": "c4", "ood_corpus": "wikitext103", "min_chars": 0, "max_train_chars": 2_000_000_000,
                             "max_val_chars": 5_000_000, "tokenizer": "gpt2", "vocab_size": 50257}},
                   _matched(12, 768, 1024, n_head=12, d_ff=3072, d_bottleneck=256),
                   {"train": {"seq_len": 1024, "batch_size": 64, "lr": 6e-4, "log_every": 50},
                    "eval_tokens": 1_048_576, "seeds": [0]})

# Notebooks 01 and 02 (the grammars) at smoke and paper: the same sentences, SPCN, probe and BiGRU budget.
_SMOKE_GRAMMAR = {"data": {"n_train": 150, "n_test": 60, "n_test_B": 60}, "seeds": [0, 1], "probe_max_iter": 20,
                  "n_clusters": 32, "spcn": {"d_code": 64, "n_columns": 4, "epochs": 1}, "bigru": {"epochs": 2}}
_PAPER_GRAMMAR = {"data": {"n_train": 10000, "n_test": 2000, "n_test_B": 2000}, "seeds": list(range(10)),
                  "probe_max_iter": 200, "n_clusters": 256, "spcn": {"n_columns": 16, "epochs": 5},
                  "bigru": {"epochs": 10}}

_SMOKE_ARM = {"max_steps": 4, "batch_size": 8}  # one small model of notebook 07 at smoke

_SMOKE: dict[str, dict] = {  # seconds per notebook: checks the plumbing, proves nothing
    "grammar_probe": merged(_SMOKE_GRAMMAR, {"backprop": {"epochs": 1}, "rules": ["pghu", "none"],
                                             "n_unlabelled_B": 60, "n_heldout_B": 30, "codes": {"bp_epochs": 1},
                                             "fresh_seeds": [2, 3]}),
    "transfer": merged(_SMOKE_GRAMMAR, {
        "bigru_word_dropouts": [0.0], "timescale_seeds": [0, 1], "workers": 1,
        "lag": {"gru": {"epochs": 1}, "oracle": {"hidden": 32, "max_steps": 20, "min_steps": 0, "eval_every": 5,
                                                 "tol": 0.2,
                                                 "val_sequences": 8, "batch_sequences": 4}},
        "agreement": {"n_train": 150, "n_test": 300, "epochs": 2}}),
    "lm": _SMOKE_LM,
    "spen_train": merged(_SMOKE_LM, {"sweep_lrs": [2e-3, 4e-3], "sweep_steps": 6, "eval_at": [8, 16],
                                     "throughput_seq_lens": [64, 256], "throughput_batch_tokens": 1024,
                                     "throughput_steps": 1, "throughput_repeats": 1}),
    "predictor_ablation": merged(_SMOKE_LM_DATA, _matched(1, 32, 32, n_head=1, d_ff=128, d_bottleneck=16),
                                 {"train": {"seq_len": 32, "batch_size": 4, "steps": 8, "warmup_steps": 2,
                                            "log_every": 2}, "eval_tokens": 1024, "seeds": [0], "workers": 1}),
    "associative_recall": {"n_keys": 8, "n_values": 8, "n_pairs": [2, 4], "n_queries": 4, "seq_len": 16,
                           "d_model": 16, "steps": 6, "warmup_steps": 2, "lrs": [1e-3, 3e-3, 1e-2], "lr_steps": 2,
                           "val_sequences": 8, "test_sequences": 16, "widths": [8, 16], "width_n_pairs": 4,
                           "distance_gap": [0, 8], "distance_bins": [0, 4, 8], "distance_distractors": 4,
                           "distance_steps": 4, "oracle_rank": 16, "oracle_steps": 4, "width_seeds": [0],
                           "width_steps": 6, "stop": {"check_every": 2, "tol": 0.2}, "seeds": [0, 1], "workers": 1},
    "boundary_map": {"d_model": 8, "vocab_sizes": [4, 32], "lags": [1, 2, 8], "scored_positions": 8,
                     "train_sequences": 16, "test_sequences": 8, "gru_vocab_sizes": [4, 32], "gru_seeds": [0],
                     "gru_steps": 3, "gru_batch": 4, "gru_stop": {"check_every": 2, "tol": 0.2}, "depths": [2, 4],
                     "widths": [8], "depth_steps": 4, "depth_batch": 8, "eval_every": 2, "eval_examples": 32,
                     "depth_min_gain": 0.2, "seeds": [0, 1],
                     "oracle": {"hidden": 16, "max_steps": 20, "eval_every": 5, "min_steps": 0, "tol": 0.2},
                     "workers": 1},
    "update_recall": merged({k: _SMOKE_ARM for k in ("scan", "lti_scan", "gru", "transformer")}, {
        "gaps": [2, 8], "sigmas": [0.0, 0.02], "seeds": [0, 1], "panel_seeds": [0],
        "panel_models": ["scan", "transformer"],
        "d_state": 12, "d_embed": 8, "d_hidden": 16, "spen": {**_SMOKE_ARM, "d_model": 4},
        "transformer": {"d_model": 16}, "curriculum": {"delay_steps": 1, "gap_every": 1},
        "stop": {"check_every": 2, "patience": 1, "tol": 0.2}, "val_sequences": 8, "test_sequences": 16,
        "calibration_steps": 2, "bound_samples": 200, "bayes_samples": 20,
        "oracle": {"hidden": 8, "batch_size": 20, "max_steps": 4, "val_sequences": 16},
        "oracle_stop": {"check_every": 2, "patience": 1, "tol": 0.2},
        "family": {"grid": 3, "draws": 20, "top": 2, "top_draws": 20, "final_draws": 50}, "workers": 1}),
}
_PAPER: dict[str, dict] = {  # a GPU; C4 and GPT-2's tokenizer for the language models
    "grammar_probe": merged(_PAPER_GRAMMAR, {"n_unlabelled_B": 2000, "fresh_seeds": list(range(10, 15))}),
    "transfer": merged(_PAPER_GRAMMAR, {"timescale_seeds": list(range(10)), "lag": {"gru": {"epochs": 8}}}),
    "lm": merged(_PAPER_LM, {"train": {"steps": 6000, "warmup_steps": 300, "ckpt_every": 500}}),
    "spen_train": merged(_PAPER_LM, {"train": {"steps": 6000, "warmup_steps": 300, "ckpt_every": 500},
                                     "sweep_lrs": [3e-4, 6e-4, 1.2e-3], "sweep_steps": 500,
                                     "eval_at": [750, 1500, 3000], "throughput_batch_tokens": 65536,
                                     "throughput_steps": 5, "rotary_try": False}),
    "predictor_ablation": merged(_PAPER_LM, {"train": {"steps": 2000, "warmup_steps": 200, "ckpt_every": 500},
                                             "workers": 1}),
    # Zoology's grid: keys then values (a vocabulary of 8192), N up to 64, widths 64-256; every model
    # (models: [] is every model notebook 05 can train)
    "associative_recall": {"models": [], "n_keys": 4096, "n_values": 4095, "single_hop": False,
                           "n_pairs": [4, 8, 16, 32, 64], "n_queries": 64, "seq_len": 256, "d_model": 128,
                           "steps": 20000, "width_steps": 20000, "warmup_steps": 1000, "batch_size": 64,
                           "lr_steps": 3000,
                           "lrs": [3e-4, 1e-3, 3e-3], "widths": [64, 128, 256], "width_n_pairs": 64,
                           "width_models": ["spen_linear", "spen_selective", "spen_token_attention", "gru",
                                            "transformer", "oracle"], "width_seeds": [0, 1, 2],
                           "distance_gap": [0, 400], "distance_distractors": 1024, "distance_steps": 20000,
                           "distance_models": ["spen_linear", "spen_selective", "spen_token_attention", "gru",
                                               "transformer", "oracle"],
                           "distance_bins": [0, 25, 50, 100, 200, 300, 400], "oracle_rank": 4096,
                           "oracle_steps": 20000, "oracle_lr": 3e-3, "seeds": [0, 1, 2, 3, 4], "workers": 1,
                           "device": "cuda"},
    "boundary_map": {"d_model": 32, "vocab_sizes": [8, 32, 128, 512, 2048], "lags": [1, 2, 4, 8, 16, 32, 64, 128, 256],
                     "train_sequences": 512, "test_sequences": 128, "gru_vocab_sizes": [8, 32, 128, 512, 2048],
                     "gru_seeds": [0, 1, 2, 3, 4], "gru_steps": 2000, "depths": [4, 8, 16, 32], "widths": [32, 64, 128],
                     "n_inputs": 16, "depth_steps": 5000, "seeds": [0, 1, 2, 3, 4]},
    "update_recall": merged({k: {"max_steps": 20000, "warmup_steps": 1000} for k in ("scan", "lti_scan", "gru", "spen",
                                                                                     "transformer")}, {
        "sigmas": [0.0, 0.005, 0.01, 0.02, 0.05], "seeds": [0, 1, 2, 3, 4], "panel_seeds": [0, 1, 2],
        "panel_models": ["scan", "lti_scan", "gru", "spen", "transformer"], "val_sequences": 2048,
        "calibration_steps": 8000, "test_sequences": 8192, "bound_samples": 200_000, "bayes_samples": 20_000,
        "stop": {"check_every": 250, "patience": 8, "tol": 0.005},
        "oracle": {"max_steps": 40000, "val_sequences": 2048},
        "family": {"grid": 20, "draws": 2000, "top": 20, "top_draws": 20_000, "final_draws": 200_000}}),
}


# Ours: notebooks 03 and 04 on one GPU in minutes, on the offline corpus (the cpu profile's text).
# 32 windows of 1024 tokens a step, 3000 steps: about 1e8 training tokens (the corpus repeats).
_GPU_LM = merged({"data": {"max_train_chars": 400_000_000, "max_val_chars": 5_000_000}},
                 _matched(8, 512, 1024, n_head=8, d_ff=2048, d_bottleneck=256),
                 {"train": {"seq_len": 1024, "batch_size": 32, "lr": 6e-4, "steps": 3000, "warmup_steps": 150,
                            "log_every": 50}, "eval_tokens": 1_048_576, "seeds": [0]})
_GPU: dict[str, dict] = {
    "lm": _GPU_LM,
    "spen_train": merged(_GPU_LM, {"sweep_lrs": [3e-4, 6e-4, 1.2e-3], "sweep_steps": 300,
                                   "eval_at": [750, 1500], "throughput_batch_tokens": 65536,
                                   "throughput_steps": 5}),
    "predictor_ablation": merged(_GPU_LM, {"train": {"steps": 1000, "warmup_steps": 100}, "workers": 1}),
}


PROFILE_SETTINGS: dict[str, dict[str, dict]] = {"smoke": _SMOKE, "cpu": {}, "paper": _PAPER, "gpu": _GPU}
"""Profile -> settings section -> what that profile changes in it (a section it lacks: the defaults)."""
