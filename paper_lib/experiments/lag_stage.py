"""Notebook 02's lag study, one job per seed: what SPCN's fixed level-1 trace bank and a learned GRU
state of the same width hold about the words before, read three ways.

1. **The linear probe** (:func:`paper_lib.probes.lag_decodability`): the identity and the role of the
   token at ``t - k`` from the state at ``t``, on the run's training and test documents (8 sentences
   each), for each EMA rate alone, the whole bank and the GRU language model (``S * N`` hidden units,
   trained on the training documents by next-word prediction, no role label). A lower bound.
2. **The closed-form decoder of the bank** (:func:`paper_lib.bounds.fresh_oracle.decode_fast_trace`): the
   fastest trace (rate 0.5) inverted step by step; exact up to float32 rounding. Scored on the probe's
   test positions (state ``"EMA bank, closed-form decoder"`` in the curves).
3. **The lag oracle fed fresh documents** (:func:`paper_lib.bounds.fresh_oracle.fit_fresh_lag_oracle`; on
   ``settings.lag.oracle_seeds``): the same MLP readers and the same fresh documents for the bank and
   for the frozen GRU, at ``settings.lag.oracle_lags``, scored on the run's test documents cut to the
   shortest one; and its negative control, the bank's states paired with another document's words.

Level 1 of SPCN is fixed (hash-seeded word codes, fixed projections, k-WTA, fixed rates; learning
changes only the predictive weights), so the bank is built from the run's SPCN configuration and seed
without a fit. ``settings``: notebook 02's :class:`paper_lib.experiments.transfer.Settings`. Our
design: the paper has no lag study.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import torch

from ..bounds.fresh_oracle import FreshDocuments, decode_fast_trace, fit_fresh_lag_oracle, score_oracle, word_ids
from ..data.grammar import GrammarConfig, make_documents, make_split, pad_labels, vocabulary
from ..models.gru import GRULanguageModel, gru_states, train_gru_lm
from ..models.spcn import SPCN
from ..probes import lag_decodability

BANK, GRU, DECODER = "EMA bank (all alphas)", "GRU language model", "EMA bank, closed-form decoder"
"""Names of the states in the curves (the ``state`` column)."""

ORACLE_STATES: tuple[str, ...] = ("bank", "gru", "bank_mismatched")
"""The lag oracle's fits: the bank, the frozen GRU, the negative control (the bank, another document's words)."""


def _documents(corpus, doc_sentences: int, vocab: dict[str, int]):
    words, roles = make_documents(corpus, doc_sentences)
    ids = pad_labels([[vocab[w] for w in d] for d in words])          # (B, T), -1 on padding
    return words, {"identity": ids, "role": pad_labels(roles, ids.shape[1])}


def _codes(spcn: SPCN, words) -> torch.Tensor:
    """``(V, N)`` level-1 code of each word alone (it depends on the word only)."""
    return spcn.forward_levels([[w] for w in words], n_levels=1)[0][0][0][:, 0]


def decoder_rows(spcn: SPCN, states: np.ndarray, ids: np.ndarray, lags, words) -> pd.DataFrame:
    """The closed-form decoder's accuracy per lag on ``states`` ``(B, T, S, N)`` (the bank) at the
    positions ``t >= max(lags)`` that are not padding (``ids`` ``(B, T)``, 1..V, -1 on padding), the
    positions :func:`paper_lib.probes.lag_decodability` scores. Empty if no rate is >= 0.5."""
    alphas = list(spcn.cfg.alphas)
    if max(alphas) < 0.5:
        return pd.DataFrame(columns=["target", "lag", "accuracy", "n_test"])
    s = int(np.argmax(alphas))
    K = max(lags)
    pred = decode_fast_trace(torch.from_numpy(states[:, :, s]), _codes(spcn, words), alphas[s], lags).numpy() + 1
    keep = ids[:, K:] >= 0
    rows = [{"target": "identity", "lag": k, "accuracy": float((pred[i] == ids[:, K - k: ids.shape[1] - k])[keep].mean()),
             "n_test": int(keep.sum())} for i, k in enumerate(lags)]
    return pd.DataFrame(rows)


def lag_gru(ids_train: np.ndarray, n_classes: int, width: int, settings, seed: int,
            progress: bool = False) -> tuple[GRULanguageModel, list[float]]:
    """The GRU language model of the lag study: ``width`` hidden units, trained on the training
    documents' ids ``(B, T)`` (-1 padding) by next-word prediction (:func:`paper_lib.models.gru.train_gru_lm`)."""
    cfg = replace(settings.lag.gru, d_hidden=width, seed=seed)
    return train_gru_lm(torch.from_numpy(np.maximum(ids_train, 0)), n_classes, cfg, progress=progress)


def oracle_runs(spcn: SPCN, gru: GRULanguageModel, exclude, test_words, settings, seed: int,
                vocab: dict[str, int]) -> dict[str, Any]:
    """The lag oracle fed fresh documents (module docstring, 3.), every fit on the same stream of
    documents, none of whose sentences is in ``exclude`` (the run's training and test sentences).

    Returns:
        ``{"accuracy": {state: {lag: fraction}}, "chance": {lag: share of the most frequent word},
        "steps": {state: {lag: steps}}, "converged": {state: {lag: 1.0 where it stopped flat or solved, 0.0 where
        it was cut at its cap}},
        "documents": {state: fresh documents read}, "T": tokens per document, "history": the
        convergence curves (state, seed, step, lag, train_loss, val_loss, val_acc, documents)}``.
    """
    lag = settings.lag
    T = min(len(d) for d in test_words)
    test = [d[:T] for d in test_words]
    test_ids = word_ids(test, vocab)
    readers = {"bank": lambda docs: spcn.forward_levels(docs, n_levels=1)[0][0][1].flatten(2),
               "gru": lambda docs: torch.from_numpy(gru_states(gru, word_ids(docs, vocab)))}
    stream = FreshDocuments(T, seed, GrammarConfig(max_depth=settings.data.max_depth), exclude)
    out: dict[str, Any] = {"accuracy": {}, "chance": {}, "steps": {}, "converged": {}, "documents": {}, "T": T}
    curves = []
    for state in ORACLE_STATES:
        mismatched = state == "bank_mismatched"
        read, lags = readers[state.split("_")[0]], [max(lag.oracle_lags)] if mismatched else list(lag.oracle_lags)
        stream.rewind()
        oracle, steps, stops, hist = fit_fresh_lag_oracle(read, stream, vocab, lags, lag.oracle, seed, mismatched)
        acc, chance = score_oracle(oracle, read(test), test_ids, mismatched)
        out["accuracy"][state] = dict(zip(lags, acc.tolist(), strict=True))
        if state == "bank":
            out["chance"] = dict(zip(lags, chance.tolist(), strict=True))
        out["steps"][state] = steps
        out["converged"][state] = {k: float(w in ("flat", "solved")) for k, w in stops.items()}
        out["documents"][state] = stream.position
        curves.append(hist.assign(state=state, seed=seed))
    out["history"] = pd.concat(curves, ignore_index=True)
    return out


def lag_stage(settings, seed: int, progress: bool = False) -> dict[str, Any]:
    """One seed of the lag study (module docstring): the run's split of Grammar A
    (:func:`paper_lib.data.grammar.make_split` with ``settings.data.n_train``, ``settings.data.n_test``), its
    documents of ``settings.lag.doc_sentences`` sentences.

    Returns:
        ``{"lag": one row per (state, target, lag) with accuracy, chance, n_test, width, seed;
        "gru_lm_history": the GRU's training loss per epoch (nats/token); "oracle": :func:`oracle_runs`'
        result, or None when ``seed`` is not in ``settings.lag.oracle_seeds``}``.
    """
    lag = settings.lag
    lags = list(range(lag.max_lag + 1))
    train, test = make_split("A", settings.data.n_train, settings.data.n_test, seed, GrammarConfig(max_depth=settings.data.max_depth))
    words = vocabulary("A")
    vocab = {w: i + 1 for i, w in enumerate(words)}                    # 0 = padding
    spcn = SPCN(replace(settings.spcn, seed=seed))                     # level 1 only: fixed, no fit needed
    docs, labels, states = {}, {}, {}
    for split, corpus in (("train", train), ("test", test)):
        docs[split], labels[split] = _documents(corpus, lag.doc_sentences, vocab)
        states[split] = spcn.forward_levels(docs[split], n_levels=1)[0][0][1].numpy()   # (B, T, S, N)
    S, N = states["train"].shape[2:]
    gru, history = lag_gru(labels["train"]["identity"], len(vocab) + 1, S * N, settings, seed, progress)
    variants = {f"alpha = {a:g}": (lambda h, s=s: h[:, :, s]) for s, a in enumerate(spcn.cfg.alphas)}
    variants[BANK] = lambda h: h.reshape(*h.shape[:2], -1)
    rows = []
    for name, pick in variants.items():
        df = lag_decodability(pick(states["train"]), labels["train"], pick(states["test"]), labels["test"],
                              lags, ridge=lag.ridge)
        rows.append(df.assign(state=name, width=pick(states["train"][:1, :1]).shape[-1]))
    g = {split: gru_states(gru, torch.from_numpy(np.maximum(labels[split]["identity"], 0))) for split in labels}
    df = lag_decodability(g["train"], labels["train"], g["test"], labels["test"], lags, ridge=lag.ridge)
    rows.append(df.assign(state=GRU, width=S * N))
    dec = decoder_rows(spcn, states["test"], labels["test"]["identity"], lags, words)
    if len(dec):
        chance = rows[-1][rows[-1].target == "identity"].set_index("lag").chance
        rows.append(dec.assign(state=DECODER, width=N, chance=dec.lag.map(chance)))  # reads the 0.5 trace alone
    oracle = (oracle_runs(spcn, gru, train.sentences + test.sentences, docs["test"], settings, seed, vocab)
              if seed in lag.oracle_seeds and lag.oracle_lags else None)
    return {"lag": pd.concat(rows, ignore_index=True).assign(seed=seed), "gru_lm_history": history, "oracle": oracle}


def oracle_metrics(results) -> dict[str, list[float]]:
    """Per-seed metric lists (seeds ascending) from :func:`lag_stage` results that ran the oracle:
    ``lag_oracle_<state>_<lag>`` (accuracy), ``lag_oracle_chance_<lag>`` and ``lag_oracle_<state>_converged_<lag>``
    (1 where the reader stopped on a plateau before its last step)."""
    out: dict[str, list[float]] = {}
    for r in sorted((r for r in results if r["oracle"]), key=lambda r: int(r["lag"].seed.iloc[0])):
        o = r["oracle"]
        for state, acc in o["accuracy"].items():
            for k, a in acc.items():
                out.setdefault(f"lag_oracle_{state}_{k}", []).append(a)
                out.setdefault(f"lag_oracle_{state}_converged_{k}", []).append(o["converged"][state][k])
        for k, c in o["chance"].items():
            out.setdefault(f"lag_oracle_chance_{k}", []).append(c)
    return out
