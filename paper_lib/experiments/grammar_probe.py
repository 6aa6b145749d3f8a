"""Experiment 1a in one function per seed: SPCN and BiGRU role accuracy on held-out Grammar A.

:func:`run_seed` draws the grammar split, learns SPCN without labels, reads roles with a
linear probe and a label-free clustering, repeats the probe with the untrained weights
(what PGHU contributes), trains the supervised BiGRU, and returns every accuracy and the
per-role accuracies. The notebook ``01_grammar_probe`` loops it over seeds; issue 3 reuses
the same pieces (grammar, SPCN, BiGRU, probes). Our design: the paper is silent on the
protocol beyond "train on A, test on held-out A".
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np
import torch

from ..data.grammar import N_ROLES, GrammarConfig, make_split
from ..ema import PAPER_ALPHAS
from ..models.gru import BiGRUConfig, predict_bigru, train_bigru
from ..models.spcn import SPCN, SPCNConfig
from ..pipeline.settings import check_seeds, configure
from ..probes import accuracy, fit_cluster_readout, fit_linear_probe, per_role_accuracy

READOUTS: tuple[str, ...] = ("spcn_probe", "spcn_labelfree", "spcn_hungarian", "spcn_untrained", "bigru")
"""The rows of Table 1, in order."""


@dataclass
class Settings:
    """Notebook 01's settings; the defaults are the ``cpu`` profile's (our design: the paper
    gives no sizes). Profiles change them in :mod:`paper_lib.pipeline.profiles`."""

    n_train: int = 2000                  # training sentences of Grammar A
    n_test: int = 500                    # held-out sentences of Grammar A
    max_depth: int = 3                   # deepest relative-clause nesting (levels)
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)  # seeds (grammar, SPCN, probe, BiGRU)
    spcn: SPCNConfig = field(default_factory=lambda: SPCNConfig(
        d_code=128, n_levels=2, n_columns=8, column_size=16, top_k=2, alphas=PAPER_ALPHAS, rule="pghu",
        lr=1.0, beta=0.05, epochs=3, batch_size=32))  # paper_lib.models.spcn.SPCNConfig (seed set per run)
    probe_C: float = 1.0                 # inverse L2 strength of the logistic probe
    probe_max_iter: int = 50             # lbfgs iterations (budget)
    n_clusters: int = 128                # K of the label-free readout (majority mapping)
    bigru: BiGRUConfig = field(default_factory=lambda: BiGRUConfig(
        d_embed=32, d_hidden=64, lr=0.003, epochs=6, batch_size=32, word_dropout=0.1))  # paper_lib.models.gru


def settings_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> Settings:
    """Notebook 01's settings at ``profile`` with a reader's ``overrides`` applied.

    Raises:
        ValueError: unknown profile or an unknown setting (one line naming the allowed ones).
    """
    return check_seeds(configure(Settings(), "grammar_probe", profile, overrides))


def run_seed(settings: Settings, seed: int, progress: bool = False) -> dict[str, Any]:
    """One seed of Experiment 1a.

    Args:
        settings: notebook 01's :class:`Settings`.
        seed: seeds the grammar, SPCN's codes and projections, the probes and the BiGRU.
        progress: tqdm bars for the learning loops.

    Returns:
        ``{"acc": {readout: accuracy in [0, 1]}, "per_role": {readout: (20,) accuracies},
        "spcn_history": [per-update prediction MSE rows], "test_mse": {"trained", "untrained"},
        "n_train_tokens", "n_test_tokens", "spcn": the fitted SPCN}``.
    """
    torch.manual_seed(seed)
    np.random.seed(seed)
    train, test = make_split("A", settings.n_train, settings.n_test, seed,
                             GrammarConfig(max_depth=settings.max_depth))
    y_tr, y_te = train.flat_roles(), test.flat_roles()

    spcn = SPCN(replace(settings.spcn, seed=seed)).fit(train.sentences, progress=progress)
    untrained = spcn.untrained()
    preds: dict[str, np.ndarray] = {}
    for name, model in (("spcn", spcn), ("spcn_untrained", untrained)):
        X_tr, X_te = model.token_features(train.sentences), model.token_features(test.sentences)
        probe = fit_linear_probe(X_tr, y_tr, C=settings.probe_C, max_iter=settings.probe_max_iter, seed=seed)
        preds["spcn_probe" if name == "spcn" else name] = probe.predict(X_te)
        if name == "spcn":
            for mapping, k in (("majority", settings.n_clusters), ("hungarian", N_ROLES)):
                readout = fit_cluster_readout(X_tr, y_tr, n_clusters=k, n_roles=N_ROLES, mapping=mapping, seed=seed)
                preds["spcn_labelfree" if mapping == "majority" else "spcn_hungarian"] = readout.predict(X_te)

    model, vocab, _ = train_bigru(train.sentences, train.roles, replace(settings.bigru, seed=seed), progress=progress)
    preds["bigru"] = predict_bigru(model, vocab, test.sentences)

    return {
        "acc": {k: accuracy(y_te, preds[k]) for k in READOUTS},
        "per_role": {k: per_role_accuracy(y_te, preds[k], N_ROLES) for k in READOUTS},
        "spcn_history": spcn.history,
        "test_mse": {"trained": spcn.prediction_mse(test.sentences), "untrained": untrained.prediction_mse(test.sentences)},
        "n_train_tokens": train.n_tokens, "n_test_tokens": test.n_tokens,
        "spcn": spcn,
    }
