"""Experiment 1b in one function per seed: transfer from Grammar A to Grammar B, the
learning-rule and timescale ablations, and the settings of the lag and agreement stages.

Everything is learned on Grammar A only (SPCN's predictive weights, the probe, the
label-free cluster naming, the BiGRU) and scored on held-out Grammar A and on Grammar B,
whose content words were never seen (the paper's transfer claim, brief "Experiment 1").
How the two models meet an unseen word:

- **SPCN**: a word's input code is a hash of ``(seed, word)`` (:func:`paper_lib.models.spcn.word_code`),
  so a Grammar B word gets a fresh random code, unrelated to any code the probe saw.
- **BiGRU**: every word outside its training vocabulary maps to ``<unk>``, whose embedding
  training learned through word dropout (``BiGRUConfig.word_dropout``).

Like-for-like controls: a causal GRU tagger of the BiGRU's sizes (reads left to right,
as SPCN's traces do), trained with the BiGRU's word dropout and, as the paper-like causal baseline,
without it (an unseen word then meets an untrained ``<unk>``); a bidirectional SPCN (the trace banks read forward and on the reversed
sentence, concatenated); the BiGRU without ``<unk>`` training (word dropout 0, the paper-like
baseline); the SPCN probe trained with content-word-only dropout (function words kept); and the
harder grammar (:mod:`paper_lib.data.grammar_hard`), trained and tested on its own Grammar A
(and B) sentences, to score deep-embedded tokens where depth is not marked by a pronoun.

The agreement stage (its settings :class:`AgreementSettings` here, its run
:mod:`paper_lib.experiments.agreement_stage`, called by the notebook) scores the subject's number
after a centre-embedded stack by the number of attractors.

Beyond the paper (**our design**): the SPCN probe retrained with the BiGRU's word dropout
(each dropped training token becomes a fresh never-seen string, so it gets a fresh random
code, as a Grammar B word does): a parity control for the two models' unknown-word
handling; and SPCN rebuilt with every non-empty subset of the EMA rates (timescales). The lag
study's settings are :class:`LagSettings` here, its run :mod:`paper_lib.experiments.lag_stage`.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch

from ..bounds.noise_budget import check_sigma
from ..bounds.oracle import LagOracleConfig
from ..data.grammar import (
    ROLES,
    GrammarConfig,
    GrammarData,
    function_words,
    generate,
    make_split,
)
from ..data.structure import split_columns
from ..ema import PAPER_ALPHAS
from ..models.gru import BiGRUConfig, GRULMConfig, predict_bigru, train_bigru
from ..models.spcn import SPCN, SPCNConfig
from ..pipeline.settings import check_seeds, configure, setting
from ..probes import fit_cluster_readout, fit_linear_probe
from ..profile_settings import PROFILE_SETTINGS

READOUTS: tuple[str, ...] = ("spcn", "spcn_labelfree", "spcn_worddrop", "spcn_contentdrop", "spcn_bidir",
                             "gru_causal", "causal_gru_nodrop", "bigru", "context_free")
"""The main readouts, each a boolean column ``ok_<readout>`` of the token table."""


@dataclass
class LagSettings:
    """The lag study of notebook 02 (:mod:`paper_lib.experiments.lag_stage`): the linear probe's curves,
    the bank's closed-form decoder and the lag oracle fed fresh documents, every state under one noise budget.

    ``sigma``, the noise budget (notebook 07's resource model, :mod:`paper_lib.bounds.noise_budget`):
    Gaussian noise of std ``sigma`` on every state number at unit scale (the bank's traces in normalised
    units, the GRU's numbers in [-1, 1]) after every step, in the GRU's training and in every read. 0.02 is
    07's headline: the bank's fastest trace then still holds the last few words (a word's normalised weight
    at lag k is ``0.87 * 0.5^k`` against a stationary noise std of 0.023) and loses them within about eight
    steps, inside the lags the study draws; at 0 the row would be decided by float precision (our design:
    the paper states no precision).

    Raises:
        ValueError: ``sigma`` not a finite number >= 0; ``gru.sigma`` set (the GRU's noise is ``sigma``).
    """

    enabled: bool = True                 # run it
    sigma: float = setting(0.02, low=0)  # noise per state number per step (normalised units), training and reading
    max_lag: int = 16                    # largest k (tokens)
    doc_sentences: int = 8               # sentences joined into one document (tokens run across them)
    ridge: float = 1.0                   # L2 strength of the least-squares probe
    gru: GRULMConfig = field(default_factory=lambda: GRULMConfig(
        d_embed=32, lr=0.003, epochs=3, batch_size=16))  # d_hidden and sigma are set per run: the bank's width, sigma
    oracle_lags: tuple[int, ...] = (1, 2, 4)  # lags (tokens) the lag oracle reads, fed fresh documents (empty: off)
    oracle_seeds: tuple[int, ...] = (0, 1, 2)  # seeds whose states the lag oracle reads (each about 100 CPU s at cpu)
    oracle: LagOracleConfig = field(default_factory=lambda: LagOracleConfig(
        hidden=256, layers=2, lr=1e-3, max_steps=1500, min_steps=300, eval_every=25, patience=8,
        batch_sequences=8, val_sequences=64))  # the lag oracle's fit (paper_lib.bounds.fresh_oracle; 8 docs a step)

    def __post_init__(self):
        check_sigma(self.sigma)
        if self.gru.sigma:
            raise ValueError(f"lag.gru.sigma={self.gru.sigma:g}: the GRU's noise is lag.sigma (set that instead)")


@dataclass
class AgreementSettings:
    """The agreement stage of notebook 02 (:mod:`paper_lib.experiments.agreement_stage`; our design)."""

    n_train: int = 1000                  # training sentences (one labelled prediction point each)
    n_test: int = 2400                   # test sentences (k = 0..4 about 23, 41, 25, 9, 1.6 %: about 37 items at k = 4)
    depths: tuple[int, ...] = (1, 2, 3, 4)  # relatives in a stack, drawn uniformly per sentence; k runs 0..d
    epochs: int = 10                     # GRU tagger epochs (one label per sentence: more passes than the role taggers)


@dataclass
class Settings:
    """Notebook 02's settings; the defaults are the ``cpu`` profile's (our design: the paper
    gives no sizes). Profiles change them in :mod:`paper_lib.profile_settings`."""

    data: GrammarData = field(default_factory=GrammarData)  # sentences of A and B (shared with notebook 01)
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)  # seeds (grammars, SPCN, probes, BiGRU, GRU LM)
    workers: int = 2                     # seeds run at once (worker processes, one thread each)
    spcn: SPCNConfig = field(default_factory=lambda: SPCNConfig(
        d_code=128, n_levels=2, n_columns=8, column_size=16, top_k=2, alphas=PAPER_ALPHAS, rule="pghu",
        lr=1.0, beta=0.05, epochs=3, batch_size=32))  # headline SPCN (seed set per run)
    rules: tuple[str, ...] = ("pghu", "hebbian", "none")  # learning-rule ablation (one SPCN each)
    probe_C: float = 1.0                 # inverse L2 strength of the logistic probe
    probe_max_iter: int = 50             # lbfgs iterations (budget)
    probe_word_dropout: float = 0.1      # P(A-train token -> fresh unseen word) for the parity-control probe
    n_clusters: int = 128                # K of the label-free readout (majority mapping)
    bigru: BiGRUConfig = field(default_factory=lambda: BiGRUConfig(
        d_embed=32, d_hidden=64, lr=0.003, epochs=6, batch_size=32, word_dropout=0.1))
    bigru_word_dropouts: tuple[float, ...] = (0.0,)  # extra BiGRUs with these word-dropout rates (0: paper-like, no <unk>)
    controls: bool = True                # causal GRU tagger, bidirectional SPCN, content-word-only dropout probe
    hard: bool = True                    # also train and test on the harder grammar (GrammarConfig.hard())
    timescale_seeds: tuple[int, ...] = (0, 1, 2)  # seeds whose SPCN is rebuilt with every subset of the alphas
    lag: LagSettings = field(default_factory=LagSettings)
    agreement: AgreementSettings = field(default_factory=AgreementSettings)  # number agreement across attractors


def settings_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> Settings:
    """Notebook 02's settings at ``profile`` with a reader's ``overrides`` applied; the
    timescale study runs on the chosen seeds that it lists (or on the first seed).

    Raises:
        ValueError: unknown profile or an unknown setting (one line naming the allowed ones).
    """
    s = check_seeds(configure(Settings(), "transfer", profile, overrides, PROFILE_SETTINGS))
    kept = tuple(x for x in s.timescale_seeds if x in s.seeds) or s.seeds[:1]
    return replace(s, timescale_seeds=kept)


def alpha_subsets(alphas) -> list[tuple[float, ...]]:
    """Every non-empty subset of ``alphas``, singles first, then pairs, ..., all."""
    alphas = tuple(float(a) for a in alphas)
    return [c for n in range(1, len(alphas) + 1) for c in itertools.combinations(alphas, n)]


def word_dropout(sentences, p: float, seed: int, tag: str = "unk", keep=frozenset()) -> list[list[str]]:
    """Each token replaced, with probability ``p``, by a fresh string never seen before
    (``"<tag:i>"``, a new one per replaced token), deterministic in ``seed``; words in ``keep``
    (e.g. the function words, for content-word-only dropout) are never replaced.

    For SPCN a fresh string means a fresh random code, as an unseen Grammar B word gets: the
    analogue of the BiGRU's word dropout into ``<unk>``. Raises ValueError if ``p`` is
    outside [0, 1).
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"word dropout p must lie in [0, 1), got {p}")
    rng = np.random.default_rng([seed, 7])
    out, i = [], 0
    for s in sentences:
        drop = rng.random(len(s)) < p
        row = []
        for w, d in zip(s, drop, strict=True):
            d = d and w not in keep
            row.append(f"<{tag}:{i}>" if d else w)
            i += int(d)
        out.append(row)
    return out


def context_free_roles(train, sentences) -> np.ndarray:
    """The context-free control: ``(N,)`` role ids of ``sentences``' tokens (sentence after sentence)
    from no context at all: a function word gets its most frequent role in ``train``, any other word
    (a content word, seen or not) the most frequent role of ``train``'s content-word tokens. Whatever
    a reader of B's unseen words gets above it, it gets from context (our design: the paper is silent).

    Raises:
        ValueError: ``train`` without any content-word token.
    """
    fw = function_words()
    words, roles = train.flat_words(), train.flat_roles()
    by_word = pd.Series(roles).groupby(pd.Series(words)).agg(lambda r: r.value_counts().idxmax())
    content = [r for w, r in zip(words, roles, strict=True) if w not in fw]
    if not content:
        raise ValueError("context_free_roles needs training sentences with content words")
    default = int(pd.Series(content).value_counts().idxmax())
    return np.asarray([int(by_word[w]) if w in fw and w in by_word.index else default
                       for s in sentences for w in s], dtype=np.int64)


def _probe(settings, seed, X, y):
    return fit_linear_probe(X, y, C=settings.probe_C, max_iter=settings.probe_max_iter, seed=seed)


def _token_table(corpus, seed: int) -> pd.DataFrame:
    tok = corpus.to_frame()
    tok.insert(0, "grammar", corpus.grammar)
    tok.insert(0, "seed", seed)
    tok["function_word"] = tok["word"].isin(function_words())
    return tok


def _controls_stage(settings: Settings, seed: int, spcn: SPCN, train, evals, tokens, progress: bool) -> None:
    """Like-for-like controls: content-word-only dropout probe, bidirectional SPCN, causal GRU (with the
    BiGRU's word dropout into ``<unk>``) and the causal GRU without it (``causal_gru_nodrop``: an unseen
    word meets an ``<unk>`` embedding training never updated, the paper-like causal baseline)."""
    y_tr = train.flat_roles()
    kept = word_dropout(train.sentences, settings.probe_word_dropout, seed, keep=function_words())
    probe = _probe(settings, seed, spcn.token_features(kept), y_tr)
    bidir = _probe(settings, seed, spcn.bidirectional_features(train.sentences), y_tr)
    for g, c in evals.items():
        tokens[g]["ok_spcn_contentdrop"] = probe.predict(spcn.token_features(c.sentences)) == c.flat_roles()
        tokens[g]["ok_spcn_bidir"] = bidir.predict(spcn.bidirectional_features(c.sentences)) == c.flat_roles()
    for name, p in (("gru_causal", settings.bigru.word_dropout), ("causal_gru_nodrop", 0.0)):
        cfg = replace(settings.bigru, seed=seed, bidirectional=False, word_dropout=p)
        model, vocab, _ = train_bigru(train.sentences, train.roles, cfg, progress=progress)
        for g, c in evals.items():
            tokens[g][f"ok_{name}"] = predict_bigru(model, vocab, c.sentences) == c.flat_roles()


def _hard_stage(settings: Settings, seed: int, progress: bool) -> pd.DataFrame:
    """The harder grammar: SPCN probe, BiGRU and causal GRU trained on its Grammar A, scored on its
    held-out A (``grammar`` "A_hard") and its B ("B_hard"). Returns the token table."""
    gcfg = GrammarConfig.hard(max_depth=settings.data.max_depth)
    train, test_a = make_split("A", settings.data.n_train, settings.data.n_test, seed, gcfg)
    evals = {"A_hard": test_a, "B_hard": generate("B", settings.data.n_test_B, seed, gcfg)}
    tokens = {g: _token_table(c, seed).assign(grammar=g) for g, c in evals.items()}
    spcn = SPCN(replace(settings.spcn, seed=seed)).fit(train.sentences, progress=progress)
    probe = _probe(settings, seed, spcn.token_features(train.sentences), train.flat_roles())
    for g, c in evals.items():
        tokens[g]["ok_spcn"] = probe.predict(spcn.token_features(c.sentences)) == c.flat_roles()
    for name, bidirectional in (("bigru", True), ("gru_causal", False)):
        bcfg = replace(settings.bigru, seed=seed, bidirectional=bidirectional)
        model, vocab, _ = train_bigru(train.sentences, train.roles, bcfg, progress=progress)
        for g, c in evals.items():
            tokens[g][f"ok_{name}"] = predict_bigru(model, vocab, c.sentences) == c.flat_roles()
    return pd.concat(tokens.values(), ignore_index=True)


def _bigru_stage(settings: Settings, seed: int, train, evals, tokens, progress: bool) -> None:
    """The supervised BiGRU (and one per extra word-dropout rate): writes ``ok_bigru[_wd<p>]``."""
    for p in [None, *settings.bigru_word_dropouts]:
        bcfg = replace(settings.bigru, seed=seed, **({} if p is None else {"word_dropout": p}))
        model, vocab, _ = train_bigru(train.sentences, train.roles, bcfg, progress=progress)
        for g, c in evals.items():
            ok = predict_bigru(model, vocab, c.sentences) == c.flat_roles()
            tokens[g]["ok_bigru" if p is None else f"ok_bigru_wd{p:g}"] = ok


def _timescale_rows(base: SPCNConfig, seed: int, train, evals, tokens, score) -> list[dict]:
    """SPCN rebuilt with each subset of the EMA rates: accuracy on A and B per subset."""
    rows = []
    for subset in alpha_subsets(base.alphas):
        if subset == tuple(base.alphas):
            acc = {g: float(tokens[g]["ok_spcn"].mean()) for g in evals}
        else:
            acc = score(SPCN(replace(base, alphas=subset)).fit(train.sentences))
        rows.append({"seed": seed, "alphas": " + ".join(f"{a:g}" for a in subset), "n_alphas": len(subset),
                     "acc_A": acc["A"], "acc_B": acc["B"]})
    return rows


def run_seed(settings: Settings, seed: int, progress: bool = False) -> dict[str, Any]:
    """One seed of Experiment 1b.

    Args:
        settings: notebook 02's :class:`Settings`.
        seed: seeds both grammars' sentences, SPCN's codes and projections, the probes and
            the BiGRU.
        progress: tqdm bars for the learning loops.

    Returns:
        ``{"tokens": one row per held-out token of A and of B, and with ``hard`` of the harder
        grammar's A and B (``grammar`` "A_hard", "B_hard"; readouts spcn, bigru, gru_causal only):
        seed, grammar, word, role, kind, depth, dep_distance, dep_bin, function_word, struct_split and
        struct_settles (:func:`paper_lib.data.structure.split_columns`, A and B only), and a
        boolean column ok_<readout> per readout (the main ones of :data:`READOUTS`,
        ``spcn_rule_<rule>`` per learning rule and ``bigru_wd<p>`` per extra BiGRU word dropout)``, "timescales": one row per alpha
        subset (alphas, n_alphas, acc_A, acc_B; empty unless ``seed`` is in
        ``settings.timescale_seeds``), "n_train_tokens", "timings": seconds per stage}``.
    """
    torch.manual_seed(seed)
    np.random.seed(seed)
    clock, timings = time.perf_counter(), {}

    def lap(name: str) -> None:
        nonlocal clock
        timings[name] = time.perf_counter() - clock
        clock = time.perf_counter()

    gcfg = GrammarConfig(max_depth=settings.data.max_depth)
    train, test_a = make_split("A", settings.data.n_train, settings.data.n_test, seed, gcfg)
    test_b = generate("B", settings.data.n_test_B, seed, gcfg)
    y_tr = train.flat_roles()
    evals = {"A": test_a, "B": test_b}
    tokens = {g: _token_table(c, seed).assign(**split_columns(c.sentences, c.roles, gcfg),
                                              ok_context_free=context_free_roles(train, c.sentences) == c.flat_roles())
              for g, c in evals.items()}
    base = replace(settings.spcn, seed=seed)
    main_rule = base.rule

    def score(model: SPCN, column: str | None = None, extra: bool = False) -> dict[str, float]:
        """Probe on A-train features; writes ok_<column> and returns the accuracy on A and B."""
        X_tr = model.token_features(train.sentences)
        probe = _probe(settings, seed, X_tr, y_tr)
        readout = (fit_cluster_readout(X_tr, y_tr, n_clusters=settings.n_clusters, n_roles=len(ROLES),
                                       mapping="majority", seed=seed) if extra else None)
        acc = {}
        for g, c in evals.items():
            X = model.token_features(c.sentences)
            ok = probe.predict(X) == c.flat_roles()
            if column:
                tokens[g][f"ok_{column}"] = ok
            if readout is not None:                     # label-free: clusters named on A-train
                tokens[g]["ok_spcn_labelfree"] = readout.predict(X) == c.flat_roles()
            acc[g] = float(ok.mean())
        return acc

    # SPCN, one network per learning rule; the main rule's is the headline model
    models = {}
    for rule in dict.fromkeys([main_rule, *settings.rules]):
        models[rule] = SPCN(replace(base, rule=rule)).fit(train.sentences, progress=progress)
        score(models[rule], f"spcn_rule_{rule}", extra=rule == main_rule)
    spcn = models[main_rule]
    for g in evals:
        tokens[g]["ok_spcn"] = tokens[g][f"ok_spcn_rule_{main_rule}"]
    lap("spcn (all rules)")

    # parity control: the same SPCN, its probe trained with word dropout into fresh codes
    dropped = word_dropout(train.sentences, settings.probe_word_dropout, seed)
    X_drop = spcn.token_features(dropped)
    probe = _probe(settings, seed, X_drop, y_tr)
    for g, c in evals.items():
        tokens[g]["ok_spcn_worddrop"] = probe.predict(spcn.token_features(c.sentences)) == c.flat_roles()
    lap("spcn word-dropout probe")

    _bigru_stage(settings, seed, train, evals, tokens, progress)
    lap("bigru")

    if settings.controls:
        _controls_stage(settings, seed, spcn, train, evals, tokens, progress)
        lap("controls")
    hard = _hard_stage(settings, seed, progress) if settings.hard else None
    lap("hard grammar")

    ts_rows = (_timescale_rows(base, seed, train, evals, tokens, score) if seed in settings.timescale_seeds else [])
    lap("timescales")

    return {"tokens": pd.concat([*tokens.values(), hard], ignore_index=True), "timescales": pd.DataFrame(ts_rows),
            "n_train_tokens": train.n_tokens,
            "timings": timings}
