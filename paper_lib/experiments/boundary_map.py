"""Notebook 06's experiment: the boundary between structure and content, mapped in time (panel A)
and in depth (panel B).

The paper's general principle: fixed-coefficient accumulation dilutes information across time (EMA
traces) and across depth (residual streams), and only learned, input-dependent selection avoids it.
The paper runs neither map; everything here is **our design**.

Panel A (time). Tokens are drawn uniformly and independently from ``vocab_size`` tokens; each
token's *class* (the structural label) is ``token mod n_classes``. A token's input vector is
``sqrt(class_share) K[class] + sqrt(1 - class_share) R[token]`` (``K``, ``R`` fixed random
Gaussian, ``d_model`` wide): tokens of a class share a direction, as learned embeddings of one
role do. A fixed EMA trace bank (:func:`paper_lib.ema.ema_traces`) of ``S`` rates holds ``S x
d_model`` numbers; a linear probe (:func:`paper_lib.probes.lag_decodability`) reads the token and
its class at lag ``k`` from it. The learned states of equal size (a GRU,
:class:`paper_lib.models.gru.LagReaderGRU`; a selective scan, Mamba's input-dependent decay, and the
same scan time-invariant, :class:`paper_lib.models.scan_reader.LagReaderScan`) read the same inputs,
trained to output the token and its class at the grid's lags up to ``learned_max_lag`` until their
held-out accuracy is flat, then read by the same probe and by their own heads. Decodability is
``(accuracy - chance) / (1 - chance)`` (0: chance, 1: perfect). Panel B (depth):
:mod:`paper_lib.models.depth_probe`, trained to a criterion by :mod:`paper_lib.experiments.depth_runs`.

Every job seeds itself and runs on one thread, so ``workers`` processes
(:func:`paper_lib.pipeline.parallel.parallel_map`) run them at once with the same numbers as one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch

from ..bounds.oracle import LagOracleConfig, fit_lag_oracle
from ..ema import PAPER_ALPHAS, ema_traces, rates_setting
from ..models.depth_probe import ARMS
from ..models.gru import LagReaderGRU
from ..models.scan_reader import LagReaderScan
from ..pipeline.parallel import parallel_map
from ..pipeline.settings import check_seeds, configure, setting
from ..probes import lag_decodability, matched_filter_identity_accuracy
from ..profile_settings import PROFILE_SETTINGS
from ..stopping import CUT, Stopper, StopRule, chance_loss, cut_metrics
from ..train import TrainConfig, train_until_flat

RULE_LAG, RULE_RATIO = 2, 16
"""The panel A cell the report row reads, fixed before the first run: lag 2 (tokens), and
vocabulary / width = 16 (superposition: 16 tokens per dimension of one trace)."""
LEARNED_STATES: tuple[str, ...] = ("gru", "scan", "lti_scan")
"""Panel A's learned states of the fixed bank's size: a GRU (gated recurrence), a selective scan, and the
same scan with time-invariant learned rates (the control that isolates input dependence; shown, read by
no rule)."""


@dataclass
class Settings:
    """Notebook 06's settings; defaults are the ``cpu`` profile's (sizes in tokens or dims)."""

    # panel A (time)
    # name -> EMA rates alpha (per token), each in (0, 1]; an override merges by name ({"slow": None} drops one)
    banks: dict[str, tuple[float, ...]] = rates_setting(default_factory=lambda: {
        "paper": PAPER_ALPHAS, "slow": (0.2, 0.02, 0.005)})
    d_model: int = setting(16, low=1)               # width of one trace (and of the inputs)
    vocab_sizes: tuple[int, ...] = (4, 16, 64, 256, 1024)  # vocabularies; vocab / d_model from 0.25 to 64
    n_classes: int = setting(4, low=2)              # structural classes (token mod n_classes)
    class_share: float = setting(0.5, low=0.0, high=1.0)  # share of a token's input energy its class sets
    lags: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 200)  # lags k probed (tokens)
    scored_positions: int = setting(64, low=1)      # positions scored per sequence (after max(lags))
    train_sequences: int = setting(128, low=1)      # probe-training sequences per (seed, vocabulary)
    test_sequences: int = setting(32, low=1)        # probe-test sequences
    ridge: float = setting(1.0, low=0.0)            # L2 of the least-squares probe
    learned_states: tuple[str, ...] = LEARNED_STATES  # learned states of equal size (gru, scan, lti_scan)
    gru_vocab_sizes: tuple[int, ...] = (16, 64, 256)  # vocabularies of the learned states (vocab / width 1, 4, 16)
    gru_seeds: tuple[int, ...] = (0, 1, 2)          # seeds of the learned states (a subset of seeds)
    learned_max_lag: int = setting(8, low=1)        # the learned states keep the lags of the grid up to this (tokens)
    gru_steps: int = setting(3000, low=1)           # the step cap of each learned state (GRU and scan alike)
    # the one stopping rule of the learned states (paper_lib.stopping): held-out accuracy of the heads the row reads
    gru_stop: StopRule = field(default_factory=lambda: StopRule(check_every=50, patience=6, tol=0.01))
    gru_min_steps: int = setting(300, low=0)        # steps before a learned state may stop as flat
    gru_val_sequences: int = setting(24, low=1)     # held-out sequences (x scored positions x lags read: resolve tol)
    gru_batch: int = setting(16, low=1)             # sequences per step
    gru_lr: float = setting(1e-2, low=0.0)          # Adam
    oracle_banks: tuple[str, ...] = ("paper",)     # banks the oracle reads (names of banks; the cpu budget)
    oracle_vocab_sizes: tuple[int, ...] = ()        # vocabularies of the oracle; (): the learned states' up to the rule's
    oracle_map_seeds: tuple[int, ...] = ()          # the oracle's seeds away from the rule's cell; (): the first seed
    # the oracle's fit: no reader stops before 1,000 steps, nor before 12 checks (300 steps) without a gain
    oracle: LagOracleConfig = field(default_factory=lambda: LagOracleConfig(hidden=128, layers=2, max_steps=3000,
                                                                             min_steps=1000, patience=12, tol=0.01))
    # panel B (depth)
    arms: tuple[str, ...] = ARMS                    # residual rules (paper_lib.models.depth_probe.ARMS)
    depths: tuple[int, ...] = (4, 8, 16)            # n_layer values
    widths: tuple[int, ...] = (16, 32)              # d_model values of panel B; the last is the headline width
    n_states: int = setting(16, low=2)              # states of the random table (chance 1/16)
    n_inputs: int = setting(4, low=1)               # fresh-token vocabulary a_l (pilot: 16 was unlearnable at cpu)
    depth_steps: int = setting(6000, low=1)         # the step cap of a run
    depth_criterion: float = setting(0.9, low=0.0, high=1.0)  # min(copy, state) accuracy a seed must reach (solved)
    depth_patience: int = setting(20, low=1)        # checks (eval_every apart) over which a seed short of it is flat
    depth_min_gain: float = setting(0.03, low=0.0, low_open=True)  # the gain that counts: min(copy, state) accuracy
    gate_bias: float = setting(-3.0)                # start of the carry gates' bias (highway, static)
    depth_batch: int = setting(64, low=1)           # examples per step
    depth_lr: float = setting(3e-3, low=0.0)        # Adam
    eval_every: int = setting(100, low=1)           # steps between points of the learning curves
    eval_examples: int = setting(1024, low=1)       # held-out examples per evaluation
    seeds: tuple[int, ...] = (0, 1, 2)
    workers: int = setting(2, low=1)                # processes running jobs at once (one thread each)


def settings_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> Settings:
    """Notebook 06's settings at ``profile`` with ``overrides`` applied.

    Raises:
        ValueError: unknown profile, setting or arm; a GRU seed or vocabulary not among the
            panel's; a bank without rates or with a rate outside (0, 1] (the field's own check,
            :data:`paper_lib.ema.ALPHA_RANGE`).
    """
    s = check_seeds(configure(Settings(), "boundary_map", profile, overrides, PROFILE_SETTINGS))
    bad = [a for a in s.arms if a not in ARMS]
    if bad:
        raise ValueError(f"unknown arm(s) {', '.join(bad)}; allowed: {', '.join(ARMS)}")
    bad = [k for k in s.learned_states if k not in LEARNED_STATES]
    if bad:
        raise ValueError(f"unknown learned state(s) {', '.join(bad)}; allowed: {', '.join(LEARNED_STATES)}")
    if not set(s.gru_seeds) <= set(s.seeds) or not set(s.gru_vocab_sizes) <= set(s.vocab_sizes):
        raise ValueError("gru_seeds and gru_vocab_sizes must be subsets of seeds and vocab_sizes")
    if not set(s.oracle_vocab_sizes) <= set(s.vocab_sizes) or not set(s.oracle_banks) <= set(s.banks) \
            or not set(s.oracle_map_seeds) <= set(s.seeds):
        raise ValueError(f"oracle_vocab_sizes, oracle_banks and oracle_map_seeds must be subsets of vocab_sizes "
                         f"{list(s.vocab_sizes)}, banks {list(s.banks)} and seeds {list(s.seeds)}")
    return s


# --------------------------------------------------------------------------- panel A: time

def sample_tokens(s: Settings, vocab_size: int, n_seq: int, seed: int,
                  max_lag: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``(tokens (n_seq, T) int64, classes (n_seq, T))`` with ``T = max_lag + scored_positions``
    (``max_lag``: default ``max(lags)``; the learned states train at ``max(learned_lags(s))``)."""
    g = torch.Generator().manual_seed(int(seed))
    tok = torch.randint(0, vocab_size, (n_seq, (max_lag or max(s.lags)) + s.scored_positions), generator=g)
    return tok, tok % s.n_classes


def embeddings(s: Settings, vocab_size: int, seed: int) -> torch.Tensor:
    """``(vocab_size, d_model)`` input vectors (float32): class part plus own part (module docstring)."""
    g = torch.Generator().manual_seed(10_000 + int(seed))
    K = torch.randn(s.n_classes, s.d_model, generator=g) / s.d_model ** 0.5
    R = torch.randn(vocab_size, s.d_model, generator=g) / s.d_model ** 0.5
    return s.class_share ** 0.5 * K[torch.arange(vocab_size) % s.n_classes] + (1 - s.class_share) ** 0.5 * R


def _probe(s: Settings, states: dict[str, np.ndarray], labels: dict[str, dict[str, np.ndarray]]) -> pd.DataFrame:
    """One probe per lag (one-hot targets of a large vocabulary do not fit every lag at once)."""
    rows = [lag_decodability(states["train"], labels["train"], states["test"], labels["test"], [k],
                             min_pos=max(s.lags), ridge=s.ridge) for k in s.lags]
    df = pd.concat(rows, ignore_index=True)
    df["decodability"] = ((df.accuracy - df.chance) / (1 - df.chance)).clip(lower=-1)
    return df


def _data(s: Settings, V: int, seed: int):
    E = embeddings(s, V, seed)
    out = {}
    for split, n, off in (("train", s.train_sequences, 0), ("test", s.test_sequences, 1)):
        tok, cls = sample_tokens(s, V, n, 1000 * seed + 2 * V + off)
        out[split] = (E[tok], {"identity": tok.numpy(), "structure": cls.numpy()})
    return E, out


def time_map_bank(s: Settings, V: int, seed: int) -> pd.DataFrame:
    """Decodability of identity and structure at every lag from each fixed bank at vocabulary ``V``:
    ``state, vocab_size, ratio, seed, target, lag, accuracy, chance, decodability, n_test``."""
    _, data = _data(s, V, seed)
    frames = []
    for name, rates in s.banks.items():
        states = {sp: ema_traces(x, rates).flatten(2).numpy() for sp, (x, _) in data.items()}
        df = _probe(s, states, {sp: lab for sp, (_, lab) in data.items()})
        frames.append(df.assign(state=f"bank_{name}"))
    return pd.concat(frames, ignore_index=True).assign(vocab_size=V, ratio=V / s.d_model, seed=seed)


def learned_lags(s: Settings) -> tuple[int, ...]:
    """The lags the learned states are trained to keep: those of ``lags`` up to ``learned_max_lag``
    (the smallest lag at least). A learned state of this size keeps no token identity beyond lag 8
    at vocabulary / width 1 or more, so longer lags only slow its training (our design)."""
    return tuple(k for k in s.lags if k <= s.learned_max_lag) or (min(s.lags),)


def train_gru(s: Settings, V: int, seed: int, kind: str = "gru") -> tuple[LagReaderGRU, str, int, pd.DataFrame]:
    """The learned state ``kind`` (``gru``, ``scan`` or ``lti_scan``, :data:`LEARNED_STATES`) of equal size
    (``S x d_model``, ``S`` the paper bank's rates) trained on fresh sequences (the same batches
    for both kinds) to output the token and its class at every lag of :func:`learned_lags`, until the
    one stopping rule ``s.gru_stop`` stops it (:func:`paper_lib.train.train_until_flat`: Adam at a
    constant ``gru_lr``, gradients clipped at 1, capped at ``gru_steps``).

    Held out: the mean accuracy of its heads at the lags up to the report row's (:data:`RULE_LAG`: what
    the row reads) on ``gru_val_sequences`` sequences; the weights of the best are kept. Chance: the
    mean over its heads of ``ln`` of their classes (tokens are uniform). The longer lags' heads may
    still be learning where it stops. Our design: the paper is silent.

    Returns:
        the model (its best weights), why it stopped (:data:`paper_lib.stopping.REASONS`), the steps it
        ran and its learning curve (``step, train_loss, heldout, state, vocab_size, seed``).

    Raises:
        ValueError: an unknown ``kind``; a held-out set too small for ``gru_stop.tol``.
    """
    if kind not in LEARNED_STATES:
        raise ValueError(f"unknown learned state {kind!r}; allowed: {', '.join(LEARNED_STATES)}")
    torch.manual_seed(seed)
    E = embeddings(s, V, seed)
    S = len(s.banks["paper"]) if "paper" in s.banks else len(next(iter(s.banks.values())))
    lags = learned_lags(s)
    heads = {"identity": V, "structure": s.n_classes}
    model = (LagReaderGRU(s.d_model, S * s.d_model, heads, lags) if kind == "gru" else
             LagReaderScan(s.d_model, S * s.d_model, heads, lags, selective=kind == "scan"))
    vtok, vcls = sample_tokens(s, V, s.gru_val_sequences, 8_000_000 + 10_000 * seed + 10 * V, max(lags))
    stop_lag = max([k for k in lags if k <= RULE_LAG] or [min(lags)])

    def step_loss(step: int) -> torch.Tensor:
        tok, c = sample_tokens(s, V, s.gru_batch, 7_000_000 + 10_000 * seed + 10 * V + step, max(lags))
        return model.loss(E[tok], {"identity": tok, "structure": c}, max(lags))

    def heldout() -> dict[str, float]:
        accs = model.head_accuracy(E[vtok], {"identity": vtok, "structure": vcls}, max(lags))
        return {f"{t} {k}": a for (t, k), a in accs.items() if k <= stop_lag}

    cfg = TrainConfig(steps=s.gru_steps, batch_size=s.gru_batch, seq_len=max(lags) + s.scored_positions, lr=s.gru_lr,
                      min_lr_frac=1.0, warmup_steps=0, weight_decay=0.0, grad_clip=1.0, betas=(0.9, 0.999), seed=seed)
    read = s.gru_val_sequences * s.scored_positions * sum(k <= stop_lag for k in lags)   # held-out rows per target
    stopper = Stopper(s.gru_stop, s.gru_steps, (chance_loss(V) + chance_loss(s.n_classes)) / 2, read,
                      min_steps=s.gru_min_steps)
    curve = pd.DataFrame(train_until_flat(model, step_loss, heldout, cfg, stopper))[["step", "train_loss", "heldout"]]
    return model, stopper.reason, int(stopper.steps[0]), curve.assign(state=kind, vocab_size=V, seed=seed)


def time_map_gru(s: Settings, V: int, seed: int, kind: str = "gru") -> tuple[pd.DataFrame, pd.DataFrame]:
    """As :func:`time_map_bank` for the trained learned state ``kind``: ``state`` = ``"gru"`` or
    ``"scan"`` (its state read by the linear probe, every lag) and ``"<kind>_heads"`` (read by its
    own trained heads, the lags of :func:`learned_lags`; chance: the test labels' most frequent
    share), with ``steps`` and ``stop`` (the steps it ran and why it stopped), and its learning curve
    (:func:`train_gru`)."""
    _, data = _data(s, V, seed)
    model, stop, steps, curve = train_gru(s, V, seed, kind)
    with torch.no_grad():
        states = {sp: model.states(x).numpy() for sp, (x, _) in data.items()}
    df = _probe(s, states, {sp: lab for sp, (_, lab) in data.items()})
    x_test, lab = data["test"]
    lab = {t: torch.from_numpy(v) for t, v in lab.items()}
    acc = model.head_accuracy(x_test, lab, max(s.lags))
    heads = pd.DataFrame([{"target": t, "lag": k, "accuracy": a, "n_test": x_test.shape[0] * s.scored_positions,
                           "chance": float(torch.bincount(lab[t][:, max(s.lags) - k: lab[t].shape[1] - k].flatten())
                                           .max()) / (x_test.shape[0] * s.scored_positions)}
                          for (t, k), a in acc.items()])
    heads["decodability"] = ((heads.accuracy - heads.chance) / (1 - heads.chance)).clip(lower=-1)
    return pd.concat([df.assign(state=kind), heads.assign(state=f"{kind}_heads")], ignore_index=True).assign(
        vocab_size=V, ratio=V / s.d_model, seed=seed, steps=steps, stop=stop), curve


def _time_job(s: Settings, kind: str, V: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    if kind == "bank":
        return time_map_bank(s, V, seed), None
    if kind.startswith("oracle_"):                    # "oracle_<bank>_<target>": one fit (the longest jobs)
        bank, target = kind.removeprefix("oracle_").rsplit("_", 1)
        return time_map_oracle(s, V, seed, (target,), (bank,)), None
    return time_map_gru(s, V, seed, kind)


def time_jobs(s: Settings) -> list[tuple[str, int, int]]:
    """Panel A's jobs ``(kind, vocab_size, seed)``: every bank vocabulary and seed (``bank``), the
    learned states at ``gru_vocab_sizes`` x ``gru_seeds``, and the oracle of each bank of
    ``oracle_banks`` at :func:`oracle_vocab_sizes` (``oracle_<bank>_identity`` and
    ``oracle_<bank>_structure``: one fit per job), at every seed in the rule's cell (the paper bank
    at :func:`rule_vocab_size`) and at :func:`oracle_map_seeds` elsewhere (the cpu budget)."""
    V_rule = rule_vocab_size(s)
    return ([("bank", V, sd) for V in s.vocab_sizes for sd in s.seeds]
            + [(k, V, sd) for k in s.learned_states for V in s.gru_vocab_sizes for sd in s.gru_seeds]
            + [(f"oracle_{b}_{t}", V, sd) for b in s.oracle_banks for V in oracle_vocab_sizes(s)
               for sd in (s.seeds if (b, V) == ("paper", V_rule) else oracle_map_seeds(s))
               for t in ("identity", "structure")])


def _time_cost(job: tuple) -> float:
    """Seconds of one panel A job on one core of a 2-core Xeon at the cpu sizes (measured once:
    an identity oracle 28 s at vocabulary 4, 67 s at 256, 183 s at 1024 before stopped readers were
    skipped, 48 s at 256 after; a structure oracle 23-31 s; a GRU up to 60 s and a scan up to 35 s
    at vocabulary 256 and 2,000 steps, a bank 1 s): only the order matters."""
    _, kind, V, _ = job
    if kind.startswith("oracle_"):
        return 20 + 0.11 * V if kind.endswith("_identity") else 23
    return {"gru": 40, "scan": 30, "lti_scan": 30}.get(kind, 1)


def run_time_map(s: Settings, progress=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every panel A job of :func:`time_jobs` in ``s.workers`` processes (the costliest first, so
    two workers finish together; rows in the order of :func:`time_jobs`): the map and the learned
    states' learning curves. ``progress``: a tqdm bar."""
    done = parallel_map(_time_job, [(s, *job) for job in time_jobs(s)], workers=s.workers,
                        progress=progress is not None, bar=progress, cost=_time_cost)
    curves = [c for _, c in done if c is not None]
    return (pd.concat([d for d, _ in done], ignore_index=True),
            pd.concat(curves, ignore_index=True) if curves else pd.DataFrame())


def rule_vocab_size(s: Settings) -> int:
    """The vocabulary of ``vocab_sizes`` whose ratio to ``d_model`` is nearest :data:`RULE_RATIO` (in log)."""
    return min(s.vocab_sizes, key=lambda V: abs(np.log(V / s.d_model / RULE_RATIO)))


def oracle_vocab_sizes(s: Settings) -> tuple[int, ...]:
    """The vocabularies the oracle runs at: ``oracle_vocab_sizes``, or those of the learned states
    (``gru_vocab_sizes``) up to the rule's, and the rule's (:func:`rule_vocab_size`; an identity reader's cost grows with the vocabulary)."""
    V_rule = rule_vocab_size(s)
    return tuple(s.oracle_vocab_sizes) or tuple(V for V in s.vocab_sizes if V <= V_rule
                                                 and (V in s.gru_vocab_sizes or V == V_rule))


def oracle_map_seeds(s: Settings) -> tuple[int, ...]:
    """The oracle's seeds away from the rule's cell: ``oracle_map_seeds``, or the first of ``seeds``."""
    return tuple(s.oracle_map_seeds) or tuple(s.seeds[:1])


def time_map_oracle(s: Settings, V: int, seed: int, targets: tuple[str, ...] = ("identity", "structure"),
                    banks: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The oracle of each bank in ``banks`` (default ``oracle_banks``) at vocabulary ``V``: the best reader we fit on the
    fixed traces alone (:func:`paper_lib.bounds.oracle.fit_lag_oracle`, an MLP per lag with
    ``s.oracle.layers`` hidden layers of ``s.oracle.hidden`` ReLU units, Adam, until flat on a
    held-out split), for identity and structure at every lag, scored on the linear probe's test
    sequences and positions. Rows as :func:`time_map_bank` with ``state = "oracle_<bank>"``, ``steps``
    and ``stop`` (the Adam steps each reader ran and why it stopped). ``targets``: the targets fitted
    (each target's fit is seeded alone, so fitting them in separate calls gives the same rows)."""
    E, data = _data(s, V, seed)
    x_test, labels_test = data["test"]
    frames = []
    for name in s.oracle_banks if banks is None else banks:
        rates = s.banks[name]
        test_states = ema_traces(x_test, rates).flatten(2)
        for j, (target, C) in enumerate((("identity", V), ("structure", s.n_classes))):
            if target not in targets:
                continue
            def sample(n, gen, rates=rates, C=C, target=target):
                tok = torch.randint(0, V, (n, max(s.lags) + s.scored_positions), generator=gen)
                return ema_traces(E[tok], rates).flatten(2), tok if target == "identity" else tok % C
            model, steps, stops = fit_lag_oracle(sample, C, s.lags, max(s.lags), s.oracle,
                                                 seed=5_000_000 + 10_000 * seed + 10 * V + j)
            acc, chance = model.score(test_states, torch.from_numpy(labels_test[target]), max(s.lags))
            frames.append(pd.DataFrame({"target": target, "lag": list(model.lags), "accuracy": acc.tolist(),
                                        "chance": chance.tolist(), "n_test": x_test.shape[0] * s.scored_positions,
                                        "steps": [steps[k] for k in model.lags],
                                        "stop": [stops[k] for k in model.lags], "state": f"oracle_{name}"}))
    df = pd.concat(frames, ignore_index=True)
    df["decodability"] = ((df.accuracy - df.chance) / (1 - df.chance)).clip(lower=-1)
    return df.assign(vocab_size=V, ratio=V / s.d_model, seed=seed)


def closed_form_map(s: Settings, bank: str = "paper") -> pd.DataFrame:
    """The matched filter's identity accuracy and decodability (``1/V`` chance) at every (lag, V):
    ``lag, vocab_size, ratio, accuracy, decodability`` (:func:`paper_lib.probes.matched_filter_identity_accuracy`)."""
    rows = []
    for V in s.vocab_sizes:
        for k in s.lags:
            acc = matched_filter_identity_accuracy(s.banks[bank], k, V, s.d_model, window=max(s.lags) + 1,
                                                   signal_share=1 - s.class_share)
            rows.append({"lag": k, "vocab_size": V, "ratio": V / s.d_model, "accuracy": acc,
                         "decodability": (acc - 1 / V) / (1 - 1 / V) if V > 1 else 1.0})
    return pd.DataFrame(rows)


def time_metrics(df: pd.DataFrame, s: Settings) -> dict[str, list[float]]:
    """Per-seed panel A metrics: ``time_<target>_<state>`` at the rule's cell (lag :data:`RULE_LAG`,
    vocab / width nearest :data:`RULE_RATIO`) for ``bank`` (the paper's rates), ``gru`` and ``scan``
    (the learned states), ``oracle_slow`` (the slow bank's oracle, one seed at the cpu budget),
    and ``time_identity_<state>_easy`` (the smallest lag at the smallest vocabulary: the GRU's is the
    report row's gate, the learned state must keep identity where it is easy); ``oracle`` (the
    paper bank read by its oracle, :func:`time_map_oracle`) at the rule's cell, and
    ``time_cut_oracle_improving`` / ``_plateau`` (1 per seed where that oracle's identity or structure
    reader was cut at its cap: its accuracy is then a lower bound; :func:`paper_lib.stopping.cut_metrics`);
    ``time_<target>_gru_heads`` and ``time_<target>_scan_heads`` (the learned states read by their
    own trained heads: the contrast of the report row); ``time_identity_oracle_far`` (that oracle's identity at the largest lag: the negative control,
    where the traces weigh the token least), ``time_cut_<state>_improving`` / ``_plateau`` (1 per seed
    where the learned state at the rule's cell was cut at ``gru_steps``) and ``time_steps_<state>``
    (the steps each ran)."""
    ratio = min(df.ratio.unique(), key=lambda r: abs(np.log(r / RULE_RATIO)))
    lag = min(s.lags, key=lambda k: abs(k - RULE_LAG))
    out: dict[str, list[float]] = {}
    for state, short in (("bank_paper", "bank"), ("gru", "gru"), ("scan", "scan"), ("oracle_paper", "oracle"),
                         ("oracle_slow", "oracle_slow"), ("gru_heads", "gru_heads"), ("scan_heads", "scan_heads"),
                         ("lti_scan_heads", "lti_scan_heads")):
        for target in ("identity", "structure"):
            d = df[(df.state == state) & (df.target == target) & (df.lag == lag) & (df.ratio == ratio)]
            if len(d):
                out[f"time_{target}_{short}"] = d.sort_values("seed").decodability.tolist()
    cell = df[(df.state == "oracle_paper") & (df.lag == lag) & (df.ratio == ratio)]
    if len(cell):  # per seed the worse of its identity and structure readers' stops
        worst = cell.groupby("seed").stop.agg(lambda w: max(w, key=lambda r: (r in CUT, r == "never_left_plateau")))
        out.update(cut_metrics("time_cut_oracle_", worst.sort_index().tolist()))
    far = df[(df.state == "oracle_paper") & (df.target == "identity") & (df.lag == max(s.lags)) & (df.ratio == ratio)]
    if len(far):  # the negative control: the oracle where the traces weigh the token least
        out["time_identity_oracle_far"] = far.sort_values("seed").decodability.tolist()
    runs = df[df.state.isin(LEARNED_STATES) & (df.ratio == ratio) & (df.lag == lag) & (df.target == "identity")]
    for state, g in runs.groupby("state"):  # why each seed's run at the rule's cell stopped, and when
        g = g.sort_values("seed")
        out[f"time_steps_{state}"] = g.steps.astype(float).tolist()
        out.update(cut_metrics(f"time_cut_{state}_", g.stop.tolist()))
    for state, short in (("bank_paper", "bank"), ("gru", "gru"), ("scan", "scan")):
        mine = df[(df.state == state) & (df.target == "identity")]
        if len(mine):
            easy = mine[(mine.lag == min(s.lags)) & (mine.vocab_size == mine.vocab_size.min())]
            out[f"time_identity_{short}_easy"] = easy.sort_values("seed").decodability.tolist()
    return out


def boundary_ratios(df: pd.DataFrame, levels: tuple[float, ...] = (0.5, 0.1)) -> pd.DataFrame:
    """Where each state stops keeping each target: for every ``state, target, lag``, the largest
    vocabulary / width ratio at which the decodability (mean over seeds) is still at least each of
    ``levels`` (``ratio_at_<level>``; NaN where no measured ratio reaches it). Our design."""
    m = df.groupby(["state", "target", "lag", "ratio"]).decodability.mean().reset_index()
    out = m[["state", "target", "lag"]].drop_duplicates().set_index(["state", "target", "lag"])
    for level in levels:
        out[f"ratio_at_{level:g}"] = m[m.decodability >= level].groupby(["state", "target", "lag"]).ratio.max()
    return out.reset_index()
