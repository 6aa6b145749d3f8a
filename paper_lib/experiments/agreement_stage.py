"""Notebook 02's agreement stage: the subject's number at the verb after a
centre-embedded stack, scored by the number of attractors (:mod:`paper_lib.data.agreement`).

The readers are notebook 02's: SPCN (its weights learned label-free on the stage's training
sentences, then the same logistic probe on its token features at the prediction points), and the
causal GRU tagger and the BiGRU of the same sizes, trained with the labels at the prediction points
(2 classes; every other token ignored). The BiGRU also reads the main verb, whose form carries the
answer: it is the positive control that the label is decidable and the plumbing works. Two surface
heuristics (:func:`paper_lib.data.agreement.heuristic_answers`: the nearest noun's number, the majority
number) are the negative controls: they must fail once attractors pile up (k >= 2). The stacks hold
1 to 4 relatives (``settings.depths``), so the subject is at no fixed distance from the prediction
point. :func:`attractor_slope` is the change in accuracy per attractor. Our design (Linzen et al.
2016's number-prediction task; the paper is silent).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..data.agreement import HEURISTICS, agreement_set, heuristic_answers
from ..models.gru import BiGRUConfig, predict_bigru, train_bigru
from ..models.spcn import SPCN, SPCNConfig
from ..probes import fit_linear_probe

READERS: tuple[str, ...] = ("spcn", "gru_causal", "bigru")
"""The trained readers; every item row also has ``ok_<heuristic>`` for each of
:data:`paper_lib.data.agreement.HEURISTICS`."""


def agreement_stage(settings, spcn_cfg: SPCNConfig, gru_cfg: BiGRUConfig, seed: int,
                    probe_C: float = 1.0, probe_max_iter: int = 50, progress: bool = False) -> pd.DataFrame:
    """One seed: every reader's answer on every test item of Grammar A's agreement sentences.

    ``settings``: :class:`paper_lib.experiments.transfer.AgreementSettings` (n_train, n_test, depths,
    epochs); ``spcn_cfg``, ``gru_cfg``: notebook 02's SPCN and tagger configurations (the taggers get 2
    classes and ``settings.epochs``).

    Returns:
        One row per (test sentence): seed, attractors (k), depth (d), label, and a boolean
        ``ok_<reader>`` per reader of :data:`READERS` and per heuristic.
    """
    train = agreement_set("A", settings.n_train, seed, settings.depths)
    test = agreement_set("A", settings.n_test, seed + 10_000, settings.depths)
    exclude = {tuple(s) for s in train.sentences}
    keep = [i for i, s in enumerate(test.sentences) if tuple(s) not in exclude]   # no test sentence in training
    rows = test.to_frame().iloc[keep].drop(columns=["sentence", "length"]).reset_index(drop=True)
    y_te = np.asarray(test.label)[keep]
    spcn = SPCN(replace(spcn_cfg, seed=seed)).fit(train.sentences, progress=progress)
    probe = fit_linear_probe(spcn.token_features(train.sentences)[train.flat_index()], np.asarray(train.label),
                             C=probe_C, max_iter=probe_max_iter, seed=seed)
    rows["ok_spcn"] = probe.predict(spcn.token_features(test.sentences)[test.flat_index()])[keep] == y_te
    for name, bidirectional in (("gru_causal", False), ("bigru", True)):
        cfg = replace(gru_cfg, seed=seed, bidirectional=bidirectional, n_roles=2, epochs=settings.epochs)
        model, vocab, _ = train_bigru(train.sentences, train.token_labels(), cfg, progress=progress)
        rows[f"ok_{name}"] = predict_bigru(model, vocab, test.sentences)[test.flat_index()][keep] == y_te
    for h in HEURISTICS:
        rows[f"ok_{h}"] = heuristic_answers(test, h)[keep] == y_te
    return rows.assign(seed=seed)


def attractor_accuracy(items: pd.DataFrame, readers=READERS + HEURISTICS, min_items: int = 20) -> pd.DataFrame:
    """Accuracy per (seed, reader, k) and pooled over k >= 1 (``k`` = "ge1"), with ``n`` items;
    groups with fewer than ``min_items`` items in some seed are dropped (too few to score).

    Raises:
        ValueError: a reader without its ``ok_<reader>`` column.
    """
    missing = [r for r in readers if f"ok_{r}" not in items]
    if missing:
        raise ValueError(f"no item column for readers {missing}; have {[c[3:] for c in items if c.startswith('ok_')]}")
    long = items.melt(id_vars=["seed", "attractors"], value_vars=[f"ok_{r}" for r in readers],
                      var_name="reader", value_name="ok").assign(reader=lambda d: d.reader.str[3:])
    long["k"] = long.attractors.astype(str)
    both = pd.concat([long, long[long.attractors >= 1].assign(k="ge1")], ignore_index=True)
    acc = both.groupby(["seed", "reader", "k"]).ok.agg(accuracy="mean", n="size").reset_index()
    enough = acc.groupby("k").n.transform("min") >= min_items
    return acc[enough].reset_index(drop=True)


def heuristic_accuracy(acc: pd.DataFrame, heuristics=HEURISTICS) -> pd.DataFrame:
    """The stronger of the surface heuristics per (seed, k) (reader ``"heuristic"``), from
    :func:`attractor_accuracy`'s table (with the heuristics among its readers): the negative control."""
    h = acc[acc.reader.isin(heuristics)].reset_index(drop=True)
    best = h.loc[h.groupby(["seed", "k"]).accuracy.idxmax()]
    return best.assign(reader="heuristic").reset_index(drop=True)


def attractor_slope(acc: pd.DataFrame, reader: str) -> list[float]:
    """Per seed (ascending), the least-squares slope of ``reader``'s accuracy against the number of
    attractors k (every integer k in the table, each k weighted alike): accuracy per attractor,
    negative when the reader falls as attractors pile up.

    Raises:
        ValueError: ``reader`` absent, or fewer than two values of k.
    """
    d = acc[(acc.reader == reader) & (acc.k != "ge1")]
    if d.empty or d.k.nunique() < 2:
        raise ValueError(f"need {reader!r} at two or more k, have {sorted(d.k.unique())}")
    return [float(np.polyfit(g.k.astype(int), g.accuracy, 1)[0]) for _, g in d.sort_values("seed").groupby("seed")]
