"""Plain-language names of the metrics, for the report, the site and the notebooks' verdicts.

Rules and gates (``paper_lib.pipeline.rules``) write their reasons with metric names
(``spcn_backprop_acc_A``); a reader sees words (``backprop ceiling on A``). Our design: the
paper is silent.
"""
from __future__ import annotations

import re

METRIC_LABELS: dict[str, str] = {
    "spcn_probe_acc_A": "SPCN probe accuracy on A", "spcn_over_bigru_A": "SPCN / BiGRU on A",
    "spcn_untrained_acc_A": "untrained SPCN on A", "spcn_acc_B": "SPCN accuracy on B",
    "spcn_level1_floor_acc_A": "no-learning floor (level-1 traces) on A",
    "spcn_learned_feat_acc_A": "error-driven SPCN (learned features) on A", "spcn_backprop_acc_A": "backprop ceiling on A",
    "spcn_learned_content_acc_B": "SPCN with Hebbian-learned word codes, content words on B",
    "spcn_floor_content_acc_B": "SPCN with the fixed word codes (no-learning floor), content words on B",
    "backprop_content_acc_B": "SPCN with backprop-learned word codes (ceiling), content words on B",
    "spcn_category_codes_content_acc_B": "SPCN with B words given A codes of their category (oracle), content words on B",
    "spcn_deep_acc_hard": "SPCN depth >= 2, harder grammar", "bigru_deep_acc_hard": "BiGRU depth >= 2, harder grammar",
    "gru_causal_deep_acc_hard": "causal GRU depth >= 2, harder grammar",
    "bigru_lexical_causal_acc_A": "BiGRU causally available content roles on A",
    "spcn_lexical_causal_acc_A": "SPCN causally available content roles on A",
    "gru_causal_lexical_causal_acc_A": "causal GRU causally available content roles on A",
    "spcn_function_acc_B": "function words on B", "spcn_content_acc_B": "content words on B",
    "spcn_deep_acc_A": "SPCN at depth >= 2 on A", "spcn_struct_acc_B": "SPCN structural roles on B",
    "bigru_struct_acc_B": "BiGRU structural roles on B", "gru_causal_struct_acc_B": "causal GRU structural roles on B",
    "bigru_nounk_struct_acc_B": "BiGRU without <unk> training, structural roles on B",
    "spcn_bidir_struct_acc_B": "bidirectional SPCN structural roles on B",
    "struct_context_share_B": "context-decided share of B's structural tokens",
    "spcn_struct_context_acc_B": "SPCN, context-decided structure on B",
    "gru_causal_struct_context_acc_B": "causal GRU, context-decided structure on B",
    "causal_gru_nodrop_struct_context_acc_B": "causal GRU without <unk> training, context-decided structure on B",
    "spcn_struct_category_acc_B": "SPCN, category-dependent structure on B",
    "gru_causal_struct_category_acc_B": "causal GRU, category-dependent structure on B",
    "causal_gru_nodrop_struct_category_acc_B": "causal GRU without <unk> training, category-dependent structure on B",
    "spcn_bidir_struct_context_acc_B": "bidirectional SPCN, context-decided structure on B",
    "bigru_nounk_struct_context_acc_B": "BiGRU without <unk> training, context-decided structure on B",
    "bigru_lexical_acc_A": "BiGRU content roles on A", "spcn_lexical_acc_A": "SPCN content roles on A",
    "ppl_ratio": "perplexity ratio SPEN / Transformer", "spen_val_ppl": "SPEN perplexity",
    "transformer_val_ppl": "Transformer perplexity", "loss_linear": "linear reader (nats)",
    "loss_linear_attention": "linear attention (nats)", "loss_softmax_attention": "softmax attention (nats)",
    "loss_token_attention": "token attention (nats)", "loss_history_attention": "history attention (nats)",
    "loss_selective": "selective EMA (nats)", "loss_transformer": "Transformer (nats)",
    "transformer_induction_score": "Transformer induction score (nats)",
    "spen_induction_score": "SPEN induction score (nats)", "induction_transformer": "Transformer induction score (nats)",
    "spcn_none_acc_B": "SPCN without learning on B", "spcn_none_acc_A": "SPCN without learning on A",
    "time_identity_bank": "token identity from the fixed trace bank (linear probe)",
    "time_identity_bank_easy": "token identity from the fixed trace bank, easiest cell",
    "time_structure_bank": "structural class from the fixed trace bank",
    "time_identity_gru": "token identity from the GRU state (equal size)",
    "time_identity_gru_easy": "token identity from the GRU state, easiest cell",
    "time_structure_gru": "structural class from the GRU state (equal size)",
    "time_identity_oracle": "token identity, best reader of the fixed traces (oracle)",
    "time_structure_oracle": "structural class, best reader of the fixed traces (oracle)",
    "time_oracle_converged": "oracle fit converged (share of seeds)",
    "lag4_identity_acc_bank_oracle": "word identity at lag 4, best reader of the EMA trace bank (oracle)",
    "lag4_oracle_converged": "bank oracle fit stopped on a plateau (share of seeds)",
}
DEPTH_ARMS = {"plain": "plain residual", "decay": "fixed-decay residual", "dwa": "learned depth weights",
              "gate": "input-dependent write gate", "highway": "highway (learned forget and write)",
              "lnscale": "fixed 1/sqrt(l) rescaling"}
_READERS = {"spcn": "SPCN", "gru_causal": "causal GRU", "bigru": "BiGRU"}
_KEY = re.compile(r"\b[a-z][a-z0-9]*(?:_[A-Za-z0-9]+)+\b")


UPDATE_STATES = {"bank_oracle": "fixed-bank oracle", "scan": "selective scan", "gru": "GRU", "spen": "SPEN-linear",
                 "transformer": "Transformer"}
_UPDATE_ONE = {"bound": "Bayes bound of the fixed bank", "bound_dense": "Bayes bound of a dense-code fixed bank",
               "bayes": "Bayes reader of the fixed bank", "baseline_any": "any-bound-value baseline",
               "oracle_converged": "oracle fit flat (share of seeds)"}


def _update_label(name: str) -> str | None:
    """Notebook 07's metrics in words (key-update recall), or None for another name."""
    m = re.fullmatch(r"update_acc_([a-z_]+?)_(\d+)", name)
    if m and m.group(1) in UPDATE_STATES:
        return f"{UPDATE_STATES[m.group(1)]}, latest value at gap {m.group(2)}"
    m = re.fullmatch(r"update_([a-z_]+?)_(\d+)", name)
    if m and m.group(1) in _UPDATE_ONE:
        return f"{_UPDATE_ONE[m.group(1)]}, gap {m.group(2)}"
    m = re.fullmatch(r"update_state_([a-z_]+)", name)
    if m and m.group(1) in UPDATE_STATES:
        return f"{UPDATE_STATES[m.group(1)]} state (numbers per sequence)"
    return {"update_baseline_keys": "keys-ignored baseline (key update)",
            "update_sigma": "noise per state number per step"}.get(name)


def label(name: str) -> str:
    """A metric's plain-language name (its code name where none is written)."""
    if name.startswith("update_") and (words := _update_label(name)):
        return words
    m = re.fullmatch(r"recall_acc_(spen|transformer|gru|oracle)_(\d+)", name)
    if m:
        who = {"spen": "SPEN", "transformer": "Transformer", "gru": "GRU (equal state)", "oracle": "trace oracle"}
        return f"{who[m.group(1)]} recall, N={m.group(2)}"
    m = re.fullmatch(r"recall_baseline_(\d+)", name)
    if m:
        return f"keys-ignored baseline, N={m.group(1)}"
    m = re.fullmatch(r"recall_state_(gru|spen)", name)
    if m:
        return f"{'GRU' if m.group(1) == 'gru' else 'SPEN'} state (numbers per sequence)"
    m = re.fullmatch(r"recall_acc_spen_([a-z_]+)", name)
    if m:
        return f"SPEN-{m.group(1)} recall, largest N"
    m = re.fullmatch(r"depth_(both|copy|state)_acc_([a-z]+)_(\d+)", name)
    if m and m.group(2) in DEPTH_ARMS:
        what = {"both": "first token and state", "copy": "first token", "state": "state"}[m.group(1)]
        return f"{DEPTH_ARMS[m.group(2)]}, {what} at L={m.group(3)}"
    m = re.fullmatch(r"(spcn|gru_causal|bigru)_attractor_acc_(ge1|\d+)", name)
    if m:
        k = ">= 1 attractor" if m.group(2) == "ge1" else f"{m.group(2)} attractor{'s' * (m.group(2) != '1')}"
        return f"{_READERS[m.group(1)]} subject number after the stack, {k}"
    m = re.fullmatch(r"(spcn|gru_causal|bigru)_content_acc_lag_(\d+)", name)
    if m:
        return f"{_READERS[m.group(1)]} content roles fixed {m.group(2)} tokens back on A"
    m = re.fullmatch(r"lag(\d+)_(identity|role)_acc_(bank|gru)", name)
    if m:
        who = "EMA trace bank" if m.group(3) == "bank" else "GRU state"
        return f"word {m.group(2)} at lag {m.group(1)}, {who}"
    return METRIC_LABELS.get(name, name)


def plain(text: str) -> str:
    """``text`` with every metric name that has a plain-language label replaced by it (rules and
    reasons are written with metric names; the report and the notebooks show words)."""
    return _KEY.sub(lambda mo: label(mo.group()) if label(mo.group()) != mo.group() else mo.group(), text or "")
