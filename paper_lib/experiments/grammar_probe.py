"""Experiment 1a in one function per seed: SPCN and BiGRU role accuracy on held-out Grammar A,
and where SPCN's accuracy comes from.

:func:`run_seed` draws the grammar split, learns SPCN without labels, reads roles with a
linear probe and a label-free clustering, and separates three sources of accuracy
(:mod:`paper_lib.models.spcn_variants`):

- the **floor**: a probe on level 1's EMA traces of the fixed random word codes (no learning);
- **learning**: the error-driven SPCN, whose level 2 reads level 1's precision-weighted
  prediction errors through a k-WTA, so what the rule learns changes the probed code
  nonlinearly; once per rule (PGHU, Oja, none), probed with and without level 1's traces;
- the **label-free ceiling**: the same wiring trained by backpropagation on the same
  next-activity objective.

On A the fixed word code and its traces already do the job (the ceiling does not beat the
floor), so :func:`code_learning_readouts` asks the question where they cannot:
Grammar B's unseen content words. The same SPCN and probe (trained on A's labels), with the
word codes fixed (the floor), learned by the Hebbian context rule from unlabelled A and B
sentences, learned by backprop on a two-sided fill-in (cloze) loss on the same sentences (the ceiling), or
copied from A's words of the same category (an oracle of the readout),
:mod:`paper_lib.models.learned_codes`; scored on B's content-word tokens as notebook 02 scores
``spcn_content_acc_B``.

It also probes the paper-style SPCN (``[h, P h]`` features) and its untrained copy and trains the supervised
BiGRU. The notebook ``01_grammar_probe`` loops it over seeds. Our design: the paper is silent
on the protocol beyond "train on A, test on held-out A".
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch

from ..claims.grammar import paired_difference
from ..data.grammar import N_ROLES, VARIANTS, GrammarConfig, GrammarData, function_words, generate, make_split
from ..ema import PAPER_ALPHAS
from ..models.gru import BiGRUConfig, predict_bigru, train_bigru
from ..models.learned_codes import CodeLearningConfig, category_codes, hebbian_codes, select_backprop_codes
from ..models.spcn import SPCN, SPCNConfig
from ..models.spcn_variants import BackpropConfig, BackpropSPCN, ErrorSPCN, level1_traces
from ..pipeline.settings import check_seed_list, check_seeds, configure
from ..pipeline.stats import format_mean_ci, mean_ci95
from ..probes import accuracy, fit_cluster_readout, fit_linear_probe, per_role_accuracy
from ..profile_settings import PROFILE_SETTINGS

READOUTS: tuple[str, ...] = ("spcn_probe", "spcn_labelfree", "spcn_hungarian", "spcn_untrained", "bigru")
"""The rows of Table 1, in order (the paper's comparison)."""

NAMES: dict[str, str] = {
    "spcn_probe": "SPCN, linear probe", "spcn_labelfree": "SPCN, label-free (k-means, majority)",
    "spcn_hungarian": "SPCN, label-free (k-means, K = 20, Hungarian)",
    "spcn_untrained": "SPCN, untrained weights, linear probe", "bigru": "BiGRU (supervised)",
    "spcn_level1_floor": "floor: level-1 traces of the fixed word codes (no learning)",
    "spcn_learned_feat": "error-driven SPCN (PGHU), level 1 + level 2 traces",
    "spcn_backprop": "error-driven SPCN trained by backprop (ceiling), level 1 + 2",
    "spcn_backprop_level2": "error-driven SPCN trained by backprop (ceiling), level 2 only",
    "spcn_over_bigru": "SPCN probe / BiGRU",
    "codes_floor": "fixed codes (floor)",
    "codes_hebbian": "Hebbian-learned codes",
    "codes_backprop": "backprop-learned codes (ceiling)",
    "codes_category": "A's codes by category (oracle)",
}
"""Plain-language names of the readouts (per-rule rows are named by :func:`readout_name`)."""


@dataclass
class Settings:
    """Notebook 01's settings; the defaults are the ``cpu`` profile's (our design: the paper
    gives no sizes). Profiles change them in :mod:`paper_lib.profile_settings`."""

    data: GrammarData = field(default_factory=GrammarData)  # sentences of A and B (shared with notebook 02)
    grammar: str = "paper"               # grammar variant: "paper" (default) | "hard" (paper_lib.data.grammar_hard)
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)  # seeds (grammar, SPCN, probe, BiGRU)
    fresh_seeds: tuple[int, ...] = (5, 6, 7, 8, 9)  # seeds the learned-codes row is decided on (settings fixed before they ran)
    workers: int = 2                     # seeds run at once (worker processes, one thread each)
    spcn: SPCNConfig = field(default_factory=lambda: SPCNConfig(
        d_code=128, n_levels=2, n_columns=8, column_size=16, top_k=2, alphas=PAPER_ALPHAS, rule="pghu",
        lr=1.0, beta=0.05, epochs=3, batch_size=32))  # paper_lib.models.spcn.SPCNConfig (seed set per run)
    rules: tuple[str, ...] = ("pghu", "hebbian", "none")  # learning rules compared (each SPCN variant)
    backprop: BackpropConfig = field(default_factory=BackpropConfig)  # the label-free ceiling's training
    probe_C: float = 1.0                 # inverse L2 strength of the logistic probe
    probe_max_iter: int = 50             # lbfgs iterations (budget)
    n_clusters: int = 128                # K of the label-free readout (majority mapping)
    bigru: BiGRUConfig = field(default_factory=lambda: BiGRUConfig(
        d_embed=32, d_hidden=64, lr=0.003, epochs=6, batch_size=32, word_dropout=0.1))  # paper_lib.models.gru
    n_unlabelled_B: int = 500            # unlabelled B sentences the code learners read (none of them scored)
    n_heldout_B: int = 200               # further unlabelled B sentences that choose the ceiling's step size (its fill-in loss)
    codes: CodeLearningConfig = field(default_factory=CodeLearningConfig)  # paper_lib.models.learned_codes

    def __post_init__(self):
        if self.grammar not in VARIANTS:
            raise ValueError(f"unknown grammar {self.grammar!r}; allowed: {', '.join(VARIANTS)}")


def settings_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> Settings:
    """Notebook 01's settings at ``profile`` with a reader's ``overrides`` applied.

    Raises:
        ValueError: unknown profile or an unknown setting (one line naming the allowed ones), or
        ``fresh_seeds`` with repeats or sharing a seed with ``seeds`` (then they are not fresh).
    """
    s = check_seeds(configure(Settings(), "grammar_probe", profile, overrides, PROFILE_SETTINGS))
    fresh = tuple(check_seed_list(s.fresh_seeds, "fresh_seeds")) if len(s.fresh_seeds) else ()
    if set(fresh) & set(s.seeds):
        raise ValueError(f"fresh_seeds must not share a seed with seeds {list(s.seeds)}, got {list(fresh)}")
    return replace(s, fresh_seeds=fresh)


def grammar_config(settings) -> GrammarConfig:
    """The :class:`GrammarConfig` that ``settings.grammar`` and ``settings.data.max_depth`` name."""
    if settings.grammar == "hard":
        return GrammarConfig.hard(max_depth=settings.data.max_depth)
    return GrammarConfig(max_depth=settings.data.max_depth)


RULE_WORDS = {"pghu": "PGHU", "hebbian": "Oja", "none": "no learning"}
"""SPCN's learning rules (``spcn.rule``), in words."""


def readout_name(key: str) -> str:
    """Plain-language name of a readout key (per-rule keys ``spcn_<rule>``, ``spcn_err_<rule>[_level2]``)."""
    if key in NAMES:
        return NAMES[key]
    rule = RULE_WORDS
    parts = key.split("_")
    if parts[1] == "err":
        return f"error-driven SPCN ({rule[parts[2]]}), " + ("level 2 only" if key.endswith("level2") else "level 1 + 2")
    return f"SPCN ({rule[parts[1]]}), linear probe"


def _spcn_readouts(settings: Settings, seed: int, train, test, progress: bool) -> tuple[dict, SPCN, SPCN]:
    """Paper-style SPCN, its label-free readouts, the untrained copy (= rule "none"; notebook 02
    compares the rules on this SPCN) and the level-1 floor."""
    y_tr, preds = train.flat_roles(), {}
    probe = lambda X: fit_linear_probe(X, y_tr, C=settings.probe_C, max_iter=settings.probe_max_iter, seed=seed)  # noqa: E731
    spcn = SPCN(replace(settings.spcn, seed=seed)).fit(train.sentences, progress=progress)
    untrained = spcn.untrained()
    for name, model in (("spcn_probe", spcn), ("spcn_untrained", untrained)):
        X_tr, X_te = model.token_features(train.sentences), model.token_features(test.sentences)
        preds[name] = probe(X_tr).predict(X_te)
        if name == "spcn_probe":
            for key, mapping, k in (("spcn_labelfree", "majority", settings.n_clusters),
                                    ("spcn_hungarian", "hungarian", N_ROLES)):
                readout = fit_cluster_readout(X_tr, y_tr, n_clusters=k, n_roles=N_ROLES, mapping=mapping, seed=seed)
                preds[key] = readout.predict(X_te)
    preds["spcn_level1_floor"] = probe(level1_traces(spcn, train.sentences)).predict(level1_traces(spcn, test.sentences))
    return preds, spcn, untrained


def _learning_readouts(settings: Settings, seed: int, train, test, progress: bool) -> tuple[dict, list[float]]:
    """Error-driven SPCN per rule (level 2 alone; levels 1 + 2 for the main rule) and its backprop
    ceiling (both ways)."""
    y_tr, preds = train.flat_roles(), {}
    probe = lambda X: fit_linear_probe(X, y_tr, C=settings.probe_C, max_iter=settings.probe_max_iter, seed=seed)  # noqa: E731
    models = {f"spcn_err_{rule}": ErrorSPCN(replace(settings.spcn, seed=seed, rule=rule)).fit(train.sentences)
              for rule in settings.rules}
    bp = BackpropSPCN(replace(settings.spcn, seed=seed), settings.backprop).fit(train.sentences, progress=progress)
    models["spcn_backprop"] = bp
    main = f"spcn_err_{settings.spcn.rule}"
    for key, m in models.items():
        for part, suffix in (("both", ""), ("level2", "_level2")):
            if part == "both" and key not in (main, "spcn_backprop"):
                continue                                  # levels 1 + 2 only where the metrics need it (budget)
            preds[key + suffix] = probe(m.token_features(train.sentences, part)).predict(m.token_features(test.sentences, part))
    if main in preds:
        preds["spcn_learned_feat"] = preds[main]
    return preds, bp.history


CODE_READOUTS: tuple[str, ...] = ("codes_floor", "codes_hebbian", "codes_backprop", "codes_category")
"""The word codes :func:`code_learning_readouts` compares, in order."""


def code_learning_readouts(settings: Settings, seed: int, train, spcn: SPCN) -> dict[str, Any]:
    """Learning where the fixed code cannot do the job: Grammar B's unseen content words.

    The floor is ``spcn`` (fixed codes, PGHU, fitted on ``train``) and its probe on A's labels; each
    other code set builds the same SPCN with those codes, fitted on ``train``, and a probe on
    ``train``'s labels. Scored on ``settings.data.n_test_B`` B sentences (``generate("B", n, seed)``, the
    sentences notebook 02 scores), on the tokens that are not function words. The code learners read
    ``train`` and ``settings.n_unlabelled_B`` other B sentences (drawn excluding the scored ones), no label.
    The ceiling's step size is chosen by its own label-free loss on ``settings.n_heldout_B`` further unlabelled B
    sentences, disjoint from both (:func:`paper_lib.models.learned_codes.select_backprop_codes`; our design).

    Returns:
        ``{"acc": {readout: accuracy on B's content tokens in [0, 1]}, "acc_all": {readout: on every
        B token}, "bp_history": the chosen ceiling's training loss per epoch (nats/token), "bp_lr": its
        step size, "bp_heldout_loss": {step size: held-out loss (nats/token)}, "n_content": content tokens scored}``.
    """
    gcfg = grammar_config(settings)
    test_b = generate("B", settings.data.n_test_B, seed, gcfg)
    pool_b = generate("B", settings.n_unlabelled_B, seed, gcfg, exclude=map(tuple, test_b.sentences))
    held_b = generate("B", settings.n_heldout_B, seed, gcfg,
                      exclude=map(tuple, test_b.sentences + pool_b.sentences))
    pool = train.sentences + pool_b.sentences
    cfg, d = replace(settings.spcn, seed=seed), settings.spcn.d_code
    y_tr, y_b = train.flat_roles(), test_b.flat_roles()
    content = ~np.isin(np.asarray(test_b.flat_words(), dtype=object), list(function_words()))
    ceiling = select_backprop_codes(pool, held_b.sentences, seed, d, settings.codes)
    codes = {"codes_floor": None, "codes_hebbian": hebbian_codes(pool, seed, d, settings.codes),
             "codes_backprop": ceiling["codes"],
             "codes_category": category_codes(seed, d)}
    acc, acc_all = {}, {}
    for key, c in codes.items():
        model = spcn if c is None else SPCN(cfg, codes=c).fit(train.sentences)
        probe = fit_linear_probe(model.token_features(train.sentences), y_tr, C=settings.probe_C,
                                 max_iter=settings.probe_max_iter, seed=seed)
        ok = probe.predict(model.token_features(test_b.sentences)) == y_b
        acc[key], acc_all[key] = float(ok[content].mean()), float(ok.mean())
    return {"acc": acc, "acc_all": acc_all, "bp_history": ceiling["history"], "bp_lr": ceiling["lr"],
            "bp_heldout_loss": ceiling["held_out_loss"], "n_content": int(content.sum())}


def fresh_seed(settings: Settings, seed: int) -> dict[str, Any]:
    """The learned-codes comparison alone (:func:`code_learning_readouts`) on a seed of
    ``settings.fresh_seeds``: the split and the SPCN (PGHU) as :func:`run_seed` draws them, then the
    four code sets. The code learners' settings were chosen on seed 0's scores; seeds none of that
    choice saw decide the learning row (our design). Returns :func:`code_learning_readouts`' result."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    train, _ = make_split("A", settings.data.n_train, settings.data.n_test, seed, grammar_config(settings))
    spcn = SPCN(replace(settings.spcn, seed=seed)).fit(train.sentences)
    return code_learning_readouts(settings, seed, train, spcn)


def run_seed(settings: Settings, seed: int, progress: bool = False) -> dict[str, Any]:
    """One seed of Experiment 1a.

    Args:
        settings: notebook 01's :class:`Settings`.
        seed: seeds the grammar, SPCN's codes and projections, the probes and the BiGRU.
        progress: tqdm bars for the learning loops.

    Returns:
        ``{"acc": {readout: accuracy in [0, 1]}, "per_role": {readout: (20,) accuracies},
        "tokens": one row per test token (word, role, kind, depth, dep_distance, dep_bin) with
        ``ok_<readout>`` columns, "spcn_history": [per-update prediction MSE rows],
        "backprop_history": loss per epoch, "test_mse": {"trained", "untrained"},
        "n_train_tokens", "n_test_tokens", "spcn": the fitted SPCN, "test": the test corpus,
        "codes_B": :func:`code_learning_readouts`' result}``.
    """
    torch.manual_seed(seed)
    np.random.seed(seed)
    train, test = make_split("A", settings.data.n_train, settings.data.n_test, seed, grammar_config(settings))
    y_te = test.flat_roles()
    preds, spcn, untrained = _spcn_readouts(settings, seed, train, test, progress)
    more, bp_history = _learning_readouts(settings, seed, train, test, progress)
    preds.update(more)
    codes_b = code_learning_readouts(settings, seed, train, spcn)
    model, vocab, _ = train_bigru(train.sentences, train.roles, replace(settings.bigru, seed=seed), progress=progress)
    preds["bigru"] = predict_bigru(model, vocab, test.sentences)
    tokens = test.to_frame().assign(seed=seed)
    for k, p in preds.items():
        tokens[f"ok_{k}"] = p == y_te
    return {
        "acc": {k: accuracy(y_te, p) for k, p in preds.items()},
        "per_role": {k: per_role_accuracy(y_te, p, N_ROLES) for k, p in preds.items()},
        "tokens": tokens, "spcn_history": spcn.history, "backprop_history": bp_history,
        "test_mse": {"trained": spcn.prediction_mse(test.sentences), "untrained": untrained.prediction_mse(test.sentences)},
        "n_train_tokens": train.n_tokens, "n_test_tokens": test.n_tokens, "spcn": spcn, "test": test,
        "codes_B": codes_b,
    }


def paired_words(a, b) -> str:
    """Per-seed ``a - b`` in words: ``"+0.012 ± 0.004 (n=5): a gain"``, ``"...: a loss"``,
    ``"...: no difference within the 95% CI"``, or ``"undetermined"`` with fewer than 2 seeds
    (the rule: :func:`paper_lib.claims.grammar.paired_difference`)."""
    return paired_difference(np.asarray(a, float) - np.asarray(b, float))[1]


def paired_gain(a, b) -> bool:
    """Whether ``a`` beats ``b`` per seed by :func:`paper_lib.claims.grammar.paired_difference` (a gain)."""
    return paired_difference(np.asarray(a, float) - np.asarray(b, float))[0] == "gain"


def summary_table(per_seed: pd.DataFrame, keys, paper: Mapping[str, float] | None = None) -> pd.DataFrame:
    """One row per readout key: name, mean accuracy, 95% CI, seeds, ``mean ± ci (n)`` text, paper value."""
    paper = paper or {}
    rows = []
    for k in keys:
        s = mean_ci95(per_seed[k])
        rows.append({"readout": readout_name(k), "key": k, "accuracy": s["mean"], "ci95": s["ci95"], "seeds": s["n"],
                     "summary": format_mean_ci(s), "paper": paper.get(k, "")})
    return pd.DataFrame(rows)


def group_table(tokens: pd.DataFrame, keys, by: str) -> pd.DataFrame:
    """Accuracy of each readout within groups of test tokens (``by``: ``depth`` or ``dep_bin``),
    averaged over seeds: one row per group with the token share and one column per readout."""
    per_seed = tokens.groupby(["seed", by])[[f"ok_{k}" for k in keys]].mean()
    out = per_seed.groupby(level=by).mean()
    out.columns = [readout_name(k) for k in keys]
    out.insert(0, "share of tokens", tokens.groupby(by).size() / len(tokens))
    return out
