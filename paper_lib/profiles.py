"""Run profiles, defined in one place: ``smoke`` (seconds, used by tests), ``cpu`` (the
default: the full study on a 2-core laptop) and ``paper`` (the paper's scale, for a GPU).

Every notebook receives the papermill parameter ``profile`` and reads its own section:

    settings = get_profile(profile)["grammar_probe"]

Sizes and budgets are our design (the paper is silent on most of them); each value carries
its unit in the comment beside it. ``paper`` values follow the paper where it gives a number.
"""
from __future__ import annotations

import copy

PROFILE_NAMES: tuple[str, ...] = ("smoke", "cpu", "paper")
DEFAULT_PROFILE = "cpu"

# One dict per profile; one section per notebook. A section is owned by its notebook.
PROFILES: dict[str, dict[str, dict]] = {
    "smoke": {
        "grammar_probe": {  # notebook 01: SPCN vs BiGRU role accuracy on Grammar A (seconds)
            "n_train": 150,              # training sentences of Grammar A
            "n_test": 60,                # held-out sentences of Grammar A
            "max_depth": 3,               # deepest relative-clause nesting (levels)
            "seeds": [0, 1],  # seeds (grammar, SPCN, probe, BiGRU)
            "spcn": {                     # paper_lib.spcn.SPCNConfig
                "d_code": 64,             # word input code width (dims)
                "n_levels": 2,            # levels of columns
                "n_columns": 4,            # columns per level
                "column_size": 16,        # units per column
                "top_k": 2,               # active units per column
                "alphas": [0.5, 0.1, 0.02],  # EMA rates (the paper's)
                "rule": "pghu",           # pghu | hebbian | none
                "lr": 1.0,                # PGHU step (dimensionless, normalised LMS)
                "beta": 0.05,             # PGHU error-statistics rate (per minibatch)
                "epochs": 1,              # passes over the training sentences, per level
                "batch_size": 32,         # sentences per update
            },
            "probe_C": 1.0,               # inverse L2 strength of the logistic probe
            "probe_max_iter": 20,         # lbfgs iterations (budget)
            "n_clusters": 32,           # K of the label-free readout (majority mapping)
            "bigru": {                    # paper_lib.baselines.BiGRUConfig
                "d_embed": 32,            # dims
                "d_hidden": 64,           # dims per direction
                "lr": 0.003,              # Adam step
                "epochs": 2,              # passes over the training sentences
                "batch_size": 32,         # sentences per step
                "word_dropout": 0.1,      # P(training token -> <unk>)
            },
        },
        "transfer": {  # notebook 02: transfer A -> B, ablations, lag decodability (seconds)
            "n_train": 150,              # training sentences of Grammar A
            "n_test": 60,                # held-out sentences of Grammar A
            "n_test_B": 60,              # sentences of Grammar B (never trained on)
            "max_depth": 3,               # deepest relative-clause nesting (levels)
            "seeds": [0, 1],  # seeds (grammars, SPCN, probes, BiGRU, GRU LM)
            "spcn": {                     # paper_lib.spcn.SPCNConfig (the grammar_probe section's)
                "d_code": 64,             # word input code width (dims)
                "n_levels": 2,            # levels of columns
                "n_columns": 4,            # columns per level
                "column_size": 16,        # units per column
                "top_k": 2,               # active units per column
                "alphas": [0.5, 0.1, 0.02],  # EMA rates (the paper's)
                "rule": "pghu",           # headline rule: pghu | hebbian | none
                "lr": 1.0,                # PGHU step (dimensionless, normalised LMS)
                "beta": 0.05,             # PGHU error-statistics rate (per minibatch)
                "epochs": 1,              # passes over the training sentences, per level
                "batch_size": 32,         # sentences per update
            },
            "rules": ["pghu", "hebbian", "none"],  # learning-rule ablation (one SPCN each)
            "probe_C": 1.0,               # inverse L2 strength of the logistic probe
            "probe_max_iter": 20,         # lbfgs iterations (budget)
            "probe_word_dropout": 0.1,    # P(A-train token -> fresh unseen word) for the parity-control probe
            "n_clusters": 32,           # K of the label-free readout (majority mapping)
            "bigru": {                    # paper_lib.baselines.BiGRUConfig
                "d_embed": 32,            # dims
                "d_hidden": 64,           # dims per direction
                "lr": 0.003,              # Adam step
                "epochs": 2,              # passes over the training sentences
                "batch_size": 32,         # sentences per step
                "word_dropout": 0.1,      # P(training token -> <unk>)
            },
            "bigru_word_dropouts": [],  # extra BiGRUs with these word-dropout rates (sensitivity)
            "timescale_seeds": [0, 1],    # seeds whose SPCN is rebuilt with every subset of the alphas
            "lag": {                      # lag decodability (paper_lib.lag_probe)
                "enabled": True,          # run it
                "max_lag": 16,            # largest k (tokens)
                "doc_sentences": 8,       # sentences joined into one document (tokens run across them)
                "ridge": 1.0,             # L2 strength of the least-squares probe
                "gru": {                  # paper_lib.baselines.GRULMConfig (d_hidden = trace-bank width)
                    "d_embed": 32,        # dims
                    "lr": 0.003,          # Adam step
                    "epochs": 1,          # passes over the training documents
                    "batch_size": 16,     # documents per step
                },
            },
        },
        "spen": {  # notebook 03: SPEN vs the matched Transformer (tiny: seconds)
            "corpus": "wiki_sample",      # training/validation source (paper_lib.corpus)
            "val_corpus": None,           # None: the corpus's own held-out articles
            "ood_corpus": "lee_background",  # out-of-domain evaluation text
            "min_chars": 2000,            # characters; shorter articles dropped
            "max_train_chars": 400_000,   # characters of training text read
            "max_val_chars": 60_000,      # characters of each evaluation text read
            "tokenizer": "bpe",           # bpe (trained here) | gpt2
            "vocab_size": 1024,           # tokens
            "n_layer": 2,                 # blocks
            "d_model": 64,                # residual width
            "n_head": 2,                  # Transformer heads
            "d_bottleneck": 32,           # SPEN context-mix bottleneck width
            "d_ff": 256,                  # SPEN sparse FFN hidden units
            "d_ff_transformer": 256,      # Transformer MLP hidden units
            "top_k_frac": 0.06,           # fraction of SPEN FFN units active (paper: 6%)
            "predictor": "linear",        # SPEN predictor (paper_lib.predictors registry)
            "block_size": 256,            # longest sequence (tokens)
            "seq_len": 64,                # training/eval sequence length (tokens)
            "batch_size": 8,              # sequences per step (global)
            "steps": 30,                  # optimizer steps (same for both models)
            "lr": 3e-3,                   # peak learning rate
            "warmup_steps": 5,            # steps
            "log_every": 5,               # steps between log rows
            "eval_tokens": 4096,          # tokens per evaluation text
            "throughput_seq_lens": [64, 256],  # tokens; training tokens/s measured at each
            "throughput_batch_tokens": 1024,   # tokens per timed step
            "throughput_steps": 1,        # timed steps per measurement
            "seeds": [0],                 # seeds
        },
        "ablation": {  # notebook 04: predictor ablation, tiny (seconds); corpus/tokenizer: the "spen" section's
            "predictors": ["linear", "linear_attention", "softmax_attention",  # the paper's three
                           "history_attention", "selective", "token_attention"],  # our controls
            "transformer": True,          # also train the matched Transformer (same budget and tokens)
            "budget_tol": 0.05,           # max relative parameter difference to SPEN-linear (fraction)
            "n_layer": 1,                 # blocks
            "d_model": 32,                # residual width
            "n_head": 1,                  # Transformer heads (SPEN's attention predictors: d_model // 64, min 1)
            "d_bottleneck": 16,           # SPEN context-mix bottleneck width
            "d_ff": 128,                  # SPEN sparse FFN hidden units
            "d_ff_transformer": 128,      # Transformer MLP hidden units
            "top_k_frac": 0.06,           # fraction of SPEN FFN units active (paper: 6%)
            "block_size": 32,             # longest sequence (tokens)
            "seq_len": 32,                # training/eval sequence length (tokens)
            "batch_size": 4,              # sequences per step (global)
            "steps": 8,                   # optimizer steps (same for every model)
            "lr": 3e-3,                   # peak learning rate
            "warmup_steps": 2,            # steps
            "log_every": 2,               # steps between log rows
            "eval_tokens": 1024,          # tokens of each evaluation text
            "seeds": [0],                 # seeds
        },
    },
    "cpu": {
        "grammar_probe": {  # notebook 01: SPCN vs BiGRU role accuracy on Grammar A (~4 min on 2 cores)
            "n_train": 2000,              # training sentences of Grammar A
            "n_test": 500,               # held-out sentences of Grammar A
            "max_depth": 3,               # deepest relative-clause nesting (levels)
            "seeds": [0, 1, 2, 3, 4],  # seeds (grammar, SPCN, probe, BiGRU)
            "spcn": {                     # paper_lib.spcn.SPCNConfig
                "d_code": 128,             # word input code width (dims)
                "n_levels": 2,            # levels of columns
                "n_columns": 8,            # columns per level
                "column_size": 16,        # units per column
                "top_k": 2,               # active units per column
                "alphas": [0.5, 0.1, 0.02],  # EMA rates (the paper's)
                "rule": "pghu",           # pghu | hebbian | none
                "lr": 1.0,                # PGHU step (dimensionless, normalised LMS)
                "beta": 0.05,             # PGHU error-statistics rate (per minibatch)
                "epochs": 3,              # passes over the training sentences, per level
                "batch_size": 32,         # sentences per update
            },
            "probe_C": 1.0,               # inverse L2 strength of the logistic probe
            "probe_max_iter": 50,         # lbfgs iterations (budget)
            "n_clusters": 128,           # K of the label-free readout (majority mapping)
            "bigru": {                    # paper_lib.baselines.BiGRUConfig
                "d_embed": 32,            # dims
                "d_hidden": 64,           # dims per direction
                "lr": 0.003,              # Adam step
                "epochs": 6,              # passes over the training sentences
                "batch_size": 32,         # sentences per step
                "word_dropout": 0.1,      # P(training token -> <unk>)
            },
        },
        "transfer": {  # notebook 02: transfer A -> B, ablations, lag decodability (~6 min on 2 idle cores)
            "n_train": 2000,              # training sentences of Grammar A
            "n_test": 500,                # held-out sentences of Grammar A
            "n_test_B": 500,              # sentences of Grammar B (never trained on)
            "max_depth": 3,               # deepest relative-clause nesting (levels)
            "seeds": [0, 1, 2, 3, 4],  # seeds (grammars, SPCN, probes, BiGRU, GRU LM)
            "spcn": {                     # paper_lib.spcn.SPCNConfig (the grammar_probe section's)
                "d_code": 128,             # word input code width (dims)
                "n_levels": 2,            # levels of columns
                "n_columns": 8,            # columns per level
                "column_size": 16,        # units per column
                "top_k": 2,               # active units per column
                "alphas": [0.5, 0.1, 0.02],  # EMA rates (the paper's)
                "rule": "pghu",           # headline rule: pghu | hebbian | none
                "lr": 1.0,                # PGHU step (dimensionless, normalised LMS)
                "beta": 0.05,             # PGHU error-statistics rate (per minibatch)
                "epochs": 3,              # passes over the training sentences, per level
                "batch_size": 32,         # sentences per update
            },
            "rules": ["pghu", "hebbian", "none"],  # learning-rule ablation (one SPCN each)
            "probe_C": 1.0,               # inverse L2 strength of the logistic probe
            "probe_max_iter": 50,         # lbfgs iterations (budget)
            "probe_word_dropout": 0.1,    # P(A-train token -> fresh unseen word) for the parity-control probe
            "n_clusters": 128,           # K of the label-free readout (majority mapping)
            "bigru": {                    # paper_lib.baselines.BiGRUConfig
                "d_embed": 32,            # dims
                "d_hidden": 64,           # dims per direction
                "lr": 0.003,              # Adam step
                "epochs": 6,              # passes over the training sentences
                "batch_size": 32,         # sentences per step
                "word_dropout": 0.1,      # P(training token -> <unk>)
            },
            "bigru_word_dropouts": [0.0, 0.3],  # extra BiGRUs with these word-dropout rates (sensitivity)
            "timescale_seeds": [0, 1, 2],  # seeds whose SPCN is rebuilt with every subset of the alphas (cost)
            "lag": {                      # lag decodability (paper_lib.lag_probe)
                "enabled": True,          # run it
                "max_lag": 16,            # largest k (tokens)
                "doc_sentences": 8,       # sentences joined into one document (tokens run across them)
                "ridge": 1.0,             # L2 strength of the least-squares probe
                "gru": {                  # paper_lib.baselines.GRULMConfig (d_hidden = trace-bank width)
                    "d_embed": 32,        # dims
                    "lr": 0.003,          # Adam step
                    "epochs": 3,          # passes over the training documents
                    "batch_size": 16,     # documents per step
                },
            },
        },
        "spen": {  # notebook 03: SPEN vs the matched Transformer, both ~5.5M parameters (~10 min)
            "corpus": "wiki_sample",      # training/validation source (paper_lib.corpus)
            "val_corpus": None,           # None: the corpus's own held-out articles
            "ood_corpus": "lee_background",  # out-of-domain evaluation text (news)
            "min_chars": 2000,            # characters; shorter articles dropped
            "max_train_chars": None,      # characters of training text read (None: all)
            "max_val_chars": None,        # characters of each evaluation text read (None: all)
            "tokenizer": "bpe",           # bpe (trained on the training split) | gpt2
            "vocab_size": 8192,           # tokens
            "n_layer": 4,                 # blocks
            "d_model": 256,               # residual width
            "n_head": 4,                  # Transformer heads
            "d_bottleneck": 96,           # SPEN context-mix bottleneck width
            "d_ff": 1024,                 # SPEN sparse FFN hidden units (61 active)
            "d_ff_transformer": 1024,     # Transformer MLP hidden units
            "top_k_frac": 0.06,           # fraction of SPEN FFN units active (paper: 6%)
            "predictor": "linear",        # SPEN predictor (paper_lib.predictors registry)
            "block_size": 1024,           # longest sequence (tokens)
            "seq_len": 256,               # training/eval sequence length (tokens)
            "batch_size": 8,              # sequences per step (global)
            "steps": 150,                 # optimizer steps (150 x 2048 = 307k tokens, both models)
            "lr": 3e-3,                   # peak learning rate
            "warmup_steps": 15,           # steps
            "log_every": 10,              # steps between log rows
            "eval_tokens": 32768,         # tokens per evaluation text
            "throughput_seq_lens": [256, 1024],  # tokens; training tokens/s measured at each
            "throughput_batch_tokens": 4096,     # tokens per timed step
            "throughput_steps": 2,        # timed steps per measurement
            "seeds": [0, 1],              # seeds
        },
        "ablation": {  # notebook 04: 6 predictors + Transformer, ~1.9M parameters each, 2 seeds (~12 min)
            "predictors": ["linear", "linear_attention", "softmax_attention",  # the paper's three
                           "history_attention", "selective", "token_attention"],  # our controls
            "transformer": True,          # also train the matched Transformer (same budget and tokens)
            "budget_tol": 0.05,           # max relative parameter difference to SPEN-linear (fraction)
            # corpus and tokenizer: the "spen" section's (same token streams as notebook 03)
            "n_layer": 4,                 # blocks
            "d_model": 128,               # residual width
            "n_head": 2,                  # Transformer heads (= SPEN's attention predictors': d_model // 64)
            "d_bottleneck": 48,           # SPEN context-mix bottleneck width
            "d_ff": 512,                  # SPEN sparse FFN hidden units (31 active)
            "d_ff_transformer": 512,      # Transformer MLP hidden units
            "top_k_frac": 0.06,           # fraction of SPEN FFN units active (paper: 6%)
            "block_size": 128,            # longest sequence (tokens)
            "seq_len": 128,               # training/eval sequence length (tokens)
            "batch_size": 16,             # sequences per step (global)
            "steps": 150,                 # optimizer steps (150 x 2048 = 307k tokens, every model)
            "lr": 3e-3,                   # peak learning rate
            "warmup_steps": 15,           # steps
            "log_every": 10,              # steps between log rows
            "eval_tokens": 16384,         # tokens of each evaluation text
            "seeds": [0, 1],              # seeds
        },
    },
    "paper": {
        "grammar_probe": {  # notebook 01: SPCN vs BiGRU role accuracy on Grammar A (larger corpus and SPCN)
            "n_train": 10000,              # training sentences of Grammar A
            "n_test": 2000,               # held-out sentences of Grammar A
            "max_depth": 3,               # deepest relative-clause nesting (levels)
            "seeds": list(range(10)),  # seeds (grammar, SPCN, probe, BiGRU)
            "spcn": {                     # paper_lib.spcn.SPCNConfig
                "d_code": 128,             # word input code width (dims)
                "n_levels": 2,            # levels of columns
                "n_columns": 16,            # columns per level
                "column_size": 16,        # units per column
                "top_k": 2,               # active units per column
                "alphas": [0.5, 0.1, 0.02],  # EMA rates (the paper's)
                "rule": "pghu",           # pghu | hebbian | none
                "lr": 1.0,                # PGHU step (dimensionless, normalised LMS)
                "beta": 0.05,             # PGHU error-statistics rate (per minibatch)
                "epochs": 5,              # passes over the training sentences, per level
                "batch_size": 32,         # sentences per update
            },
            "probe_C": 1.0,               # inverse L2 strength of the logistic probe
            "probe_max_iter": 200,         # lbfgs iterations (budget)
            "n_clusters": 256,           # K of the label-free readout (majority mapping)
            "bigru": {                    # paper_lib.baselines.BiGRUConfig
                "d_embed": 32,            # dims
                "d_hidden": 64,           # dims per direction
                "lr": 0.003,              # Adam step
                "epochs": 10,              # passes over the training sentences
                "batch_size": 32,         # sentences per step
                "word_dropout": 0.1,      # P(training token -> <unk>)
            },
        },
        "transfer": {  # notebook 02: transfer A -> B, ablations, lag decodability (larger corpus and SPCN)
            "n_train": 10000,              # training sentences of Grammar A
            "n_test": 2000,                # held-out sentences of Grammar A
            "n_test_B": 2000,              # sentences of Grammar B (never trained on)
            "max_depth": 3,               # deepest relative-clause nesting (levels)
            "seeds": list(range(10)),  # seeds (grammars, SPCN, probes, BiGRU, GRU LM)
            "spcn": {                     # paper_lib.spcn.SPCNConfig (the grammar_probe section's)
                "d_code": 128,             # word input code width (dims)
                "n_levels": 2,            # levels of columns
                "n_columns": 16,            # columns per level
                "column_size": 16,        # units per column
                "top_k": 2,               # active units per column
                "alphas": [0.5, 0.1, 0.02],  # EMA rates (the paper's)
                "rule": "pghu",           # headline rule: pghu | hebbian | none
                "lr": 1.0,                # PGHU step (dimensionless, normalised LMS)
                "beta": 0.05,             # PGHU error-statistics rate (per minibatch)
                "epochs": 5,              # passes over the training sentences, per level
                "batch_size": 32,         # sentences per update
            },
            "rules": ["pghu", "hebbian", "none"],  # learning-rule ablation (one SPCN each)
            "probe_C": 1.0,               # inverse L2 strength of the logistic probe
            "probe_max_iter": 200,         # lbfgs iterations (budget)
            "probe_word_dropout": 0.1,    # P(A-train token -> fresh unseen word) for the parity-control probe
            "n_clusters": 256,           # K of the label-free readout (majority mapping)
            "bigru": {                    # paper_lib.baselines.BiGRUConfig
                "d_embed": 32,            # dims
                "d_hidden": 64,           # dims per direction
                "lr": 0.003,              # Adam step
                "epochs": 10,              # passes over the training sentences
                "batch_size": 32,         # sentences per step
                "word_dropout": 0.1,      # P(training token -> <unk>)
            },
            "bigru_word_dropouts": [0.0, 0.3],  # extra BiGRUs with these word-dropout rates (sensitivity)
            "timescale_seeds": list(range(10)),  # seeds whose SPCN is rebuilt with every subset of the alphas
            "lag": {                      # lag decodability (paper_lib.lag_probe)
                "enabled": True,          # run it
                "max_lag": 16,            # largest k (tokens)
                "doc_sentences": 8,       # sentences joined into one document (tokens run across them)
                "ridge": 1.0,             # L2 strength of the least-squares probe
                "gru": {                  # paper_lib.baselines.GRULMConfig (d_hidden = trace-bank width)
                    "d_embed": 32,        # dims
                    "lr": 0.003,          # Adam step
                    "epochs": 8,          # passes over the training documents
                    "batch_size": 16,     # documents per step
                },
            },
        },
        "spen": {  # notebook 03 at the paper's scale (a GPU; C4, GPT-2 tokenizer, ~128M parameters)
            "corpus": "c4",               # C4 English, streaming (network)
            "val_corpus": None,           # None: C4's validation split
            "ood_corpus": "wikitext103",  # the Wikipedia evaluation (paper: perplexity 729)
            "min_chars": 0,               # characters
            "max_train_chars": 2_000_000_000,  # characters of C4 read (~0.5B GPT-2 tokens)
            "max_val_chars": 5_000_000,   # characters of each evaluation text
            "tokenizer": "gpt2",          # GPT-2's BPE (vocabulary 50257), as the paper
            "vocab_size": 50257,          # tokens
            "n_layer": 12,                # blocks (paper)
            "d_model": 768,               # residual width (ours; GPT-2 small's)
            "n_head": 12,                 # Transformer heads (GPT-2 small)
            "d_bottleneck": 256,          # SPEN context-mix bottleneck width (ours)
            "d_ff": 3072,                 # SPEN sparse FFN hidden units (184 active)
            "d_ff_transformer": 3072,     # Transformer MLP hidden units (GPT-2 small)
            "top_k_frac": 0.06,           # fraction of SPEN FFN units active (paper: 6%)
            "predictor": "linear",        # SPEN predictor
            "block_size": 1024,           # longest sequence (tokens)
            "seq_len": 1024,              # training/eval sequence length (tokens)
            "batch_size": 64,             # sequences per step (global, 65k tokens)
            "steps": 6000,                # optimizer steps (~0.4B tokens)
            "lr": 6e-4,                   # peak learning rate (GPT-2 small's)
            "warmup_steps": 300,          # steps
            "log_every": 50,              # steps between log rows
            "ckpt_every": 500,            # steps between checkpoints
            "eval_tokens": 1_048_576,     # tokens per evaluation text
            "throughput_seq_lens": [256, 1024],  # tokens
            "throughput_batch_tokens": 65536,    # tokens per timed step
            "throughput_steps": 5,        # timed steps per measurement
            "seeds": [0],                 # seeds
        },
        "ablation": {  # notebook 04 at the paper's scale (a GPU; C4, GPT-2 tokenizer, ~128M parameters each)
            "predictors": ["linear", "linear_attention", "softmax_attention",  # the paper's three
                           "history_attention", "selective", "token_attention"],  # our controls
            "transformer": True,          # also train the matched Transformer (same budget and tokens)
            "budget_tol": 0.05,           # max relative parameter difference to SPEN-linear (fraction)
            # corpus and tokenizer: the "spen" section's
            "n_layer": 12,                # blocks (paper)
            "d_model": 768,               # residual width (ours; GPT-2 small's)
            "n_head": 12,                 # Transformer heads (= SPEN's attention predictors': d_model // 64)
            "d_bottleneck": 256,          # SPEN context-mix bottleneck width (ours)
            "d_ff": 3072,                 # SPEN sparse FFN hidden units (184 active)
            "d_ff_transformer": 3072,     # Transformer MLP hidden units (GPT-2 small)
            "top_k_frac": 0.06,           # fraction of SPEN FFN units active (paper: 6%)
            "block_size": 1024,           # longest sequence (tokens)
            "seq_len": 1024,              # training/eval sequence length (tokens)
            "batch_size": 64,             # sequences per step (global, 65k tokens)
            "steps": 2000,                # optimizer steps (~131M tokens per model; ours, the paper is silent)
            "lr": 6e-4,                   # peak learning rate
            "warmup_steps": 200,          # steps
            "log_every": 50,              # steps between log rows
            "eval_tokens": 1_048_576,     # tokens of each evaluation text
            "seeds": [0],                 # seeds
        },
    },
}


def check_profile(profile: str) -> str:
    """Return ``profile`` if it is known.

    Raises:
        ValueError: one line naming the unknown profile and the allowed ones.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; allowed: {', '.join(PROFILE_NAMES)}")
    return profile


def get_profile(profile: str) -> dict[str, dict]:
    """A deep copy of the settings of ``profile`` (so a notebook may edit its copy freely).

    Raises:
        ValueError: unknown profile (the message lists the allowed ones).
    """
    return copy.deepcopy(PROFILES[check_profile(profile)])


if __name__ == "__main__":  # `python -m paper_lib.profiles NAME`: validate a profile name
    import sys

    try:
        check_profile(sys.argv[1] if len(sys.argv) > 1 else "")
    except ValueError as err:
        sys.exit(f"error: {err}")
