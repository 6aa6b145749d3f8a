"""Experiment 1a in one function per seed: SPCN and BiGRU role accuracy on held-out Grammar A.

:func:`run_seed` draws the grammar split, learns SPCN without labels, reads roles with a
linear probe and a label-free clustering, repeats the probe with the untrained weights
(what PGHU contributes), trains the supervised BiGRU, and returns every accuracy and the
per-role accuracies. The notebook ``01_grammar_probe`` loops it over seeds; issue 3 reuses
the same pieces (grammar, SPCN, BiGRU, probes). Our design: the paper is silent on the
protocol beyond "train on A, test on held-out A".
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch

from .baselines import BiGRUConfig, predict_bigru, train_bigru
from .grammar import N_ROLES, GrammarConfig, make_split
from .probes import accuracy, fit_cluster_readout, fit_linear_probe, per_role_accuracy
from .spcn import SPCN, SPCNConfig

READOUTS: tuple[str, ...] = ("spcn_probe", "spcn_labelfree", "spcn_hungarian", "spcn_untrained", "bigru")
"""The rows of Table 1, in order."""


def spcn_config(settings: Mapping[str, Any], seed: int) -> SPCNConfig:
    """The :class:`SPCNConfig` of a ``grammar_probe`` profile section for ``seed``."""
    kw = dict(settings["spcn"])
    kw["alphas"] = tuple(kw.get("alphas", (0.5, 0.1, 0.02)))
    return SPCNConfig(**kw, seed=seed)


def bigru_config(settings: Mapping[str, Any], seed: int) -> BiGRUConfig:
    """The :class:`BiGRUConfig` of a ``grammar_probe`` profile section for ``seed``."""
    return BiGRUConfig(**settings["bigru"], seed=seed)


def run_seed(settings: Mapping[str, Any], seed: int, progress: bool = False) -> dict[str, Any]:
    """One seed of Experiment 1a.

    Args:
        settings: a ``grammar_probe`` profile section (``paper_lib.profiles``).
        seed: seeds the grammar, SPCN's codes and projections, the probes and the BiGRU.
        progress: tqdm bars for the learning loops.

    Returns:
        ``{"acc": {readout: accuracy in [0, 1]}, "per_role": {readout: (20,) accuracies},
        "spcn_history": [per-update prediction MSE rows], "test_mse": {"trained", "untrained"},
        "n_train_tokens", "n_test_tokens", "spcn": the fitted SPCN}``.
    """
    torch.manual_seed(seed)
    np.random.seed(seed)
    train, test = make_split("A", settings["n_train"], settings["n_test"], seed,
                             GrammarConfig(max_depth=settings["max_depth"]))
    y_tr, y_te = train.flat_roles(), test.flat_roles()

    spcn = SPCN(spcn_config(settings, seed)).fit(train.sentences, progress=progress)
    untrained = spcn.untrained()
    preds: dict[str, np.ndarray] = {}
    for name, model in (("spcn", spcn), ("spcn_untrained", untrained)):
        X_tr, X_te = model.token_features(train.sentences), model.token_features(test.sentences)
        probe = fit_linear_probe(X_tr, y_tr, C=settings["probe_C"], max_iter=settings["probe_max_iter"], seed=seed)
        preds["spcn_probe" if name == "spcn" else name] = probe.predict(X_te)
        if name == "spcn":
            for mapping, k in (("majority", settings["n_clusters"]), ("hungarian", N_ROLES)):
                readout = fit_cluster_readout(X_tr, y_tr, n_clusters=k, n_roles=N_ROLES, mapping=mapping, seed=seed)
                preds["spcn_labelfree" if mapping == "majority" else "spcn_hungarian"] = readout.predict(X_te)

    model, vocab, _ = train_bigru(train.sentences, train.roles, bigru_config(settings, seed), progress=progress)
    preds["bigru"] = predict_bigru(model, vocab, test.sentences)

    return {
        "acc": {k: accuracy(y_te, preds[k]) for k in READOUTS},
        "per_role": {k: per_role_accuracy(y_te, preds[k], N_ROLES) for k in READOUTS},
        "spcn_history": spcn.history,
        "test_mse": {"trained": spcn.prediction_mse(test.sentences), "untrained": untrained.prediction_mse(test.sentences)},
        "n_train_tokens": train.n_tokens, "n_test_tokens": test.n_tokens,
        "spcn": spcn,
    }
