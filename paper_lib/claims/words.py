"""The words a reader sees for the data columns the notebooks' tables show (``val_loss`` -> "held-out loss
(nats)"): every notebook hands them to :func:`paper_lib.pipeline.tables.use_table_style`, so no table the
notebook, its HTML or the site shows is headed by a name from the code (``tests/test_notebooks.py`` checks
it). A column of one notebook only may be named here too: one map, no two words for one column."""
from __future__ import annotations

COLUMNS: dict[str, str] = {
    # sizes and runs
    "n_layer": "layers", "d_model": "width", "vocab_size": "vocabulary", "seq_len": "sequence length",
    "n_pairs": "pairs N", "state_size": "state per sequence (numbers)", "state_numbers": "state (numbers)",
    "predictor_parameters": "predictor's parameters", "vs_linear": "parameters against SPEN-linear",
    "vs_transformer": "parameters against the Transformer", "n_star": "largest N recalled at >= 0.9",
    "position_lo": "from position", "position_hi": "to position", "span_share": "share of repeated spans",
    # losses and scores
    "val_loss": "held-out loss (nats)", "val_ppl": "held-out perplexity", "ood_loss": "out-of-domain loss (nats)",
    "ood_ppl": "out-of-domain perplexity", "repeat_loss": "loss on tokens seen before (nats)",
    "first_loss": "loss on first occurrences (nats)", "held_out_loss": "held-out loss (nats)",
    "train_tokens_per_s": "training tokens / s", "induction_score": "induction score (nats)",
    "in_context_score": "in-context score (nats)",
    "test_mse_trained": "prediction MSE, trained", "test_mse_untrained": "prediction MSE, untrained",
    "mean_depth": "mean depth", "dep_bin": "tokens to the word that decides the role",
    "kind_causal": "kind of role", "struct_split": "what decides the structural role",
    "first_acc": "first's accuracy", "second_acc": "second's accuracy", "n_alphas": "rates",
    "minus_none": "minus no learning", "ratio_at_0.1": "vocabulary / width at 0.1 decodability",
    "ratio_at_0.5": "vocabulary / width at 0.5 decodability",
    "copy_acc": "copy of the first input", "state_acc": "state at the top", "both_acc": "both (the lower)",
    "steps_to_criterion": "steps to the criterion", "stopped_at": "stopped at step",
    # bounds
    "bound_se": "the bound's standard error", "below_bound": "below the bound",
}
"""Column name -> words, for every table a notebook shows."""
