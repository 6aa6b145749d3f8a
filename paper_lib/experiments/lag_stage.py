"""Notebook 02's lag study, one job per seed: what SPCN's fixed level-1 trace bank and a learned GRU
state of the same width hold about the words before, under one noise budget, read three ways.

**The resource model** (:mod:`paper_lib.bounds.noise_budget`, notebook 07's): every state number at
unit scale gets Gaussian noise ``settings.lag.sigma`` after every step, in training and in reading. The
bank's traces are noised in their normalised units (:func:`bank_states`,
:func:`paper_lib.bounds.noise_budget.noisy_traces`); the GRU's numbers lie in [-1, 1] and get the same
``sigma`` after every step, in its language-model training and whenever it is read
(:class:`paper_lib.models.gru.GRULanguageModel`). Every read draws new noise (a seeded generator per
state and use): no reader sees the same noise twice. In exact arithmetic (``sigma = 0``) the bank is a
lossless register of its last ~20 tokens, so the lag row would be decided by float precision, not by
the mechanism (our design: the paper has no lag study and states no precision).

1. **The linear probe** (:func:`paper_lib.probes.lag_decodability`): the identity and the role of the
   token at ``t - k`` from the state at ``t``, on the run's training and test documents (8 sentences
   each), for each EMA rate alone, the whole bank and the GRU language model (``S * N`` hidden units,
   trained on the training documents by next-word prediction, no role label). A lower bound.
2. **The closed-form decoder of the bank** (:func:`paper_lib.bounds.fresh_oracle.decode_fast_trace`): the
   fastest trace (rate 0.5) inverted step by step, on the noisy bank (state ``DECODER``) and, for
   contrast, on the bank without noise (``DECODER_EXACT``: exact up to float32 rounding). Scored on the
   probe's test positions.
3. **The lag oracle fed fresh documents** (:func:`paper_lib.bounds.fresh_oracle.fit_fresh_lag_oracle`; on
   ``settings.lag.oracle_seeds``): the same MLP readers and the same fresh documents for the noisy bank
   and for the frozen noisy GRU, at ``settings.lag.oracle_lags``, scored on the run's test documents cut
   to the shortest one; and its negative control, the bank's states paired with another document's words.

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
from ..bounds.noise_budget import check_sigma, noisy_traces
from ..data.grammar import GrammarConfig, make_documents, make_split, pad_labels, vocabulary
from ..models.gru import GRULanguageModel, gru_states, train_gru_lm
from ..models.spcn import SPCN
from ..probes import lag_decodability

BANK, GRU, DECODER = "EMA bank (all alphas)", "GRU language model", "EMA bank, closed-form decoder"
DECODER_EXACT = "EMA bank without noise, closed-form decoder"
"""Names of the states in the curves (the ``state`` column); every state but ``DECODER_EXACT`` carries the noise."""

NOISE_SEED = 2_000_000
"""Offset of the noise generators' seeds (use ``j`` of run seed ``s``: ``NOISE_SEED + 100 * s + j``)."""

ORACLE_STATES: tuple[str, ...] = ("bank", "gru", "bank_mismatched")
"""The lag oracle's fits: the bank, the frozen GRU, the negative control (the bank, another document's words)."""


def _documents(corpus, doc_sentences: int, vocab: dict[str, int]):
    words, roles = make_documents(corpus, doc_sentences)
    ids = pad_labels([[vocab[w] for w in d] for d in words])          # (B, T), -1 on padding
    return words, {"identity": ids, "role": pad_labels(roles, ids.shape[1])}


def _noise(seed: int, use: int) -> torch.Generator:
    """The seeded generator of one use of the noise (a state, a split, a reader) in run ``seed``."""
    return torch.Generator().manual_seed(NOISE_SEED + 100 * int(seed) + int(use))


def bank_states(spcn: SPCN, docs, sigma: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """``(B, T, S, N)`` SPCN's level-1 trace bank of ``docs`` (token lists, padded) with the resource
    model's noise: the traces of the binary k-WTA codes (amplitude 1) plus the normalised noise process
    of std ``sigma`` per number per step, scaled back to the traces' units
    (:func:`paper_lib.bounds.noise_budget.noisy_traces`; drawn from ``generator``). ``sigma = 0``: the
    plain bank, equal to SPCN's own traces.

    Raises:
        ValueError: ``sigma`` not a finite number >= 0.
    """
    a = spcn.forward_levels(docs, n_levels=1)[0][0][0]                # (B, T, N) binary codes, 0 on padding
    return noisy_traces(a, spcn.cfg.alphas, check_sigma(sigma), generator=generator)


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
    documents' ids ``(B, T)`` (-1 padding) by next-word prediction (:func:`paper_lib.models.gru.train_gru_lm`)
    with the noise ``settings.lag.sigma`` on its state after every step."""
    cfg = replace(settings.lag.gru, d_hidden=width, seed=seed, sigma=settings.lag.sigma)
    return train_gru_lm(torch.from_numpy(np.maximum(ids_train, 0)), n_classes, cfg, progress=progress)


def oracle_runs(spcn: SPCN, gru: GRULanguageModel, exclude, test_words, settings, seed: int,
                vocab: dict[str, int]) -> dict[str, Any]:
    """The lag oracle fed fresh documents (module docstring, 3.), every fit on the same stream of
    documents, none of whose sentences is in ``exclude`` (the run's training and test sentences); the
    bank and ``gru`` carry the noise ``settings.lag.sigma``, a new draw at every read (each fit and its
    test read have their own seeded generator), so no reader sees the same noise twice.

    Returns:
        ``{"accuracy": {state: {lag: fraction}}, "chance": {lag: share of the most frequent word},
        "steps": {state: {lag: steps}}, "converged": {state: {lag: 1.0 where it stopped flat or solved, 0.0 where
        it was cut at its cap}}, "stops": {state: {lag: why it stopped}} (:data:`paper_lib.stopping.REASONS`),
        "sigma": the noise, "documents": {state: fresh documents read}, "T": tokens per document, "history": the
        convergence curves (state, seed, step, lag, train_loss, val_loss, val_acc, documents)}``.
    """
    lag = settings.lag
    T = min(len(d) for d in test_words)
    test = [d[:T] for d in test_words]
    test_ids = word_ids(test, vocab)
    sigma = lag.sigma
    readers = {"bank": lambda docs, g: bank_states(spcn, docs, sigma, g).flatten(2),           # (B, T, S N)
               "gru": lambda docs, g: torch.from_numpy(gru_states(gru, word_ids(docs, vocab), generator=g))}
    stream = FreshDocuments(T, seed, GrammarConfig(max_depth=settings.data.max_depth), exclude)
    out: dict[str, Any] = {"accuracy": {}, "chance": {}, "steps": {}, "converged": {}, "stops": {}, "documents": {},
                           "T": T, "sigma": sigma}
    curves = []
    for j, state in enumerate(ORACLE_STATES):
        mismatched = state == "bank_mismatched"
        lags = [max(lag.oracle_lags)] if mismatched else list(lag.oracle_lags)
        fit_noise, test_noise = _noise(seed, 10 + 2 * j), _noise(seed, 11 + 2 * j)
        reader = readers[state.split("_")[0]]
        stream.rewind()
        oracle, steps, stops, hist = fit_fresh_lag_oracle(lambda docs, r=reader, g=fit_noise: r(docs, g), stream,
                                                          vocab, lags, lag.oracle, seed, mismatched)
        acc, chance = score_oracle(oracle, reader(test, test_noise), test_ids, mismatched)
        out["accuracy"][state] = dict(zip(lags, acc.tolist(), strict=True))
        if state == "bank":
            out["chance"] = dict(zip(lags, chance.tolist(), strict=True))
        out["steps"][state] = steps
        out["converged"][state] = {k: float(w in ("flat", "solved")) for k, w in stops.items()}
        out["stops"][state] = stops
        out["documents"][state] = stream.position
        curves.append(hist.assign(state=state, seed=seed))
    out["history"] = pd.concat(curves, ignore_index=True)
    return out


def lag_stage(settings, seed: int, progress: bool = False) -> dict[str, Any]:
    """One seed of the lag study (module docstring): the run's split of Grammar A
    (:func:`paper_lib.data.grammar.make_split` with ``settings.data.n_train``, ``settings.data.n_test``), its
    documents of ``settings.lag.doc_sentences`` sentences, every state with the noise ``settings.lag.sigma``.

    Returns:
        ``{"lag": one row per (state, target, lag) with accuracy, chance, n_test, width, seed;
        "gru_lm_history": the GRU's training loss per epoch (nats/token); "oracle": :func:`oracle_runs`'
        result, or None when ``seed`` is not in ``settings.lag.oracle_seeds``; "sigma": the noise}``.
    """
    lag = settings.lag
    lags = list(range(lag.max_lag + 1))
    train, test = make_split("A", settings.data.n_train, settings.data.n_test, seed, GrammarConfig(max_depth=settings.data.max_depth))
    words = vocabulary("A")
    vocab = {w: i + 1 for i, w in enumerate(words)}                    # 0 = padding
    spcn = SPCN(replace(settings.spcn, seed=seed))                     # level 1 only: fixed, no fit needed
    docs, labels, states = {}, {}, {}
    for j, (split, corpus) in enumerate((("train", train), ("test", test))):
        docs[split], labels[split] = _documents(corpus, lag.doc_sentences, vocab)
        states[split] = bank_states(spcn, docs[split], lag.sigma, _noise(seed, j)).numpy()   # (B, T, S, N)
    S, N = states["train"].shape[2:]
    gru, history = lag_gru(labels["train"]["identity"], len(vocab) + 1, S * N, settings, seed, progress)
    variants = {f"alpha = {a:g}": (lambda h, s=s: h[:, :, s]) for s, a in enumerate(spcn.cfg.alphas)}
    variants[BANK] = lambda h: h.reshape(*h.shape[:2], -1)
    rows = []
    for name, pick in variants.items():
        df = lag_decodability(pick(states["train"]), labels["train"], pick(states["test"]), labels["test"],
                              lags, ridge=lag.ridge)
        rows.append(df.assign(state=name, width=pick(states["train"][:1, :1]).shape[-1]))
    g = {split: gru_states(gru, torch.from_numpy(np.maximum(labels[split]["identity"], 0)),
                           generator=_noise(seed, 2 + j))
         for j, split in enumerate(labels)}
    df = lag_decodability(g["train"], labels["train"], g["test"], labels["test"], lags, ridge=lag.ridge)
    rows.append(df.assign(state=GRU, width=S * N))
    chance = rows[-1][rows[-1].target == "identity"].set_index("lag").chance
    exact = bank_states(spcn, docs["test"], 0.0).numpy()                # the contrast: no noise
    for name, bank in ((DECODER, states["test"]), (DECODER_EXACT, exact)):
        dec = decoder_rows(spcn, bank, labels["test"]["identity"], lags, words)
        if len(dec):                                                    # reads the 0.5 trace alone
            rows.append(dec.assign(state=name, width=N, chance=dec.lag.map(chance)))
    oracle = (oracle_runs(spcn, gru, train.sentences + test.sentences, docs["test"], settings, seed, vocab)
              if seed in lag.oracle_seeds and lag.oracle_lags else None)
    return {"lag": pd.concat(rows, ignore_index=True).assign(seed=seed), "gru_lm_history": history, "oracle": oracle,
            "sigma": lag.sigma}


def oracle_metrics(results) -> dict[str, list[float]]:
    """Per-seed metric lists (seeds ascending) from :func:`lag_stage` results that ran the oracle:
    ``lag_oracle_<state>_<lag>`` (accuracy), ``lag_oracle_chance_<lag>`` and ``lag_oracle_<state>_converged_<lag>``
    (1 where the reader stopped flat or solved, 0 where it was cut at its cap: still improving, or never off
    the chance loss; :mod:`paper_lib.stopping`)."""
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


def decoder_metrics(lag: pd.DataFrame, lags, fail_below: float = 0.5) -> dict[str, list[float]]:
    """Per-seed metric lists (seeds ascending) of the closed-form decoder from the curves ``lag`` (the
    ``"lag"`` tables of :func:`lag_stage`, concatenated): ``lag_decoder_bank_<k>`` on the noisy bank and
    ``lag_decoder_bank_exact_<k>`` without noise, at each of ``lags``; and ``lag_decoder_bank_fail_lag``,
    the first lag at which the noisy bank's decoder reads fewer than ``fail_below`` of the words (one
    more than the largest lag measured where it never does). Empty where no decoder ran."""
    out: dict[str, list[float]] = {}
    for name, key in ((DECODER, "lag_decoder_bank_"), (DECODER_EXACT, "lag_decoder_bank_exact_")):
        d = lag[lag.state == name]
        for k in lags:
            if len(v := d[d.lag == k].sort_values("seed").accuracy.tolist()):
                out[f"{key}{k}"] = v
    d = lag[lag.state == DECODER]
    for _, c in sorted(d.groupby("seed"), key=lambda x: x[0]):
        below = c[c.accuracy < fail_below].lag
        out.setdefault("lag_decoder_bank_fail_lag", []).append(float(below.min() if len(below) else c.lag.max() + 1))
    return out
