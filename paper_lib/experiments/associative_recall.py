"""Notebook 05's experiment: multi-query associative recall (MQAR) across models, pair counts,
widths and key-query distances.

The paper's claim: fixed-decay EMA traces keep temporal structure and lose *which* token
appeared, and no reader of the traces can recover it (Experiment 2's ablation and its data
processing argument). MQAR (:mod:`paper_lib.data.mqar`, Zoology's protocol) needs exactly
token identity: bind a key to its value, retrieve it later. Every model here (SPEN with each
reader of :mod:`paper_lib.predictors`, the matched Transformer, a GRU language model of the
same width) is built by :func:`paper_lib.models.build_model`, trained with the same optimiser
budget on the same fresh sequences, with its learning rate chosen on a validation set, and
scored on fresh test sequences (query accuracy, a fraction). Everything here is our design:
the paper has no recall experiment.

Each model is trained once on a *mixture* of pair counts and evaluated at every count (panel 1);
panel 2 repeats that at other widths (capacity: the largest ``N`` recalled against the state size);
panel 3 (retention) trains on gaps of distractors past the slowest trace's horizon.
Beside every model stands the trace oracle (:mod:`paper_lib.bounds.oracle`, model name ``"oracle"``):
the best reader we fit of a fixed trace bank alone, and the keys-ignored baseline (chance).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from ..bounds.oracle import OracleConfig, baseline_by_pairs, fit_oracle, keys_ignored_loss
from ..data.mqar import MQARTask, accuracy_by_distance, accuracy_by_pairs, model_device, query_accuracy, sample_mqar
from ..ema import rates_setting
from ..models.factory import build_model
from ..models.lm import count_params, gpt2_init_weights
from ..models.spen import SPENConfig
from ..pipeline.parallel import parallel_map
from ..pipeline.profiles import get_profile
from ..pipeline.settings import check_fields, check_seeds, configure, setting
from ..predictors import ABLATION_PREDICTORS, PREDICTORS, SelectivePredictor
from ..profile_settings import PROFILE_SETTINGS
from ..stopping import Stopper, StopRule, cut_metrics
from ..train import TrainConfig, train_until_flat

ORACLE = "oracle"
"""The trace oracle's name among the models (:mod:`paper_lib.bounds.oracle`; fitted, not built)."""
MODELS: tuple[str, ...] = tuple(f"spen_{p}" for p in ABLATION_PREDICTORS) + ("transformer", "gru", ORACLE)
"""Every model the notebook can train: SPEN with each reader (``spen_<predictor>``), the
matched Transformer, the GRU language model (state equal to SPEN's traces) and the trace oracle."""
VAL_SEED, TEST_SEED = 10_007, 20_011
"""Generator seeds of the validation and test sequences (disjoint from every training stream)."""


@dataclass
class SPENTraces:
    """SPEN's fixed traces in notebook 05 (the GRU's state and the oracle's bank follow their size)."""

    alphas: tuple[float, ...] = rates_setting()  # EMA rates, each in (0, 1] (paper: 0.5, 0.1, 0.02)

    def __post_init__(self):
        check_fields(self)


@dataclass
class Settings:
    """Notebook 05's settings; defaults are the ``cpu`` profile's (sizes in tokens or dims).

    The task (see :class:`paper_lib.data.mqar.MQARTask`): ``n_keys``/``n_values`` tokens,
    ``n_pairs`` the pair counts of panel 1 (the last is "the hardest standard setting"),
    ``n_queries`` per sequence, ``seq_len`` tokens, ``single_hop`` and ``delay`` as there.
    """

    models: tuple[str, ...] = ("spen_linear", "spen_token_attention", "transformer", "gru",
                               ORACLE)      # names in MODELS; (): every one (the paper profile, spen_selective too)
    n_keys: int = 8                         # key vocabulary (tokens)
    n_values: int = 8                       # value vocabulary (tokens)
    n_pairs: tuple[int, ...] = (2, 4, 8)    # panel 1's pair counts; the last is the hardest
    n_queries: int = 8                      # queries per sequence (all pairs up to this many)
    seq_len: int = 24                       # tokens per sequence
    single_hop: bool = True                 # one token per pair (ours; calibration) instead of key, value
    delay: int = setting(1, low=0)          # blanks after each query key (>= 1: readers can key on the query)
    n_layer: int = 2                        # blocks of every model
    d_model: int = 64                       # residual width of panel 1 and 3
    n_head: int = 2                         # Transformer heads
    ff_mult: int = 4                        # MLP / sparse-FFN hidden units per d_model
    steps: int = 12000                      # the step cap of every run (the stopping rule's; cosine decay to 0 there)
    stop: StopRule = field(default_factory=lambda: StopRule(check_every=250, patience=4, tol=0.02))  # every run's
    batch_size: int = 32                    # sequences per step
    warmup_steps: int = setting(50, low=0)  # linear warmup, then cosine decay to 0
    weight_decay: float = 0.1               # AdamW
    lrs: tuple[float, ...] = (2e-3, 3e-3, 4e-3)  # learning rates tried per model (>= 3)
    lr_steps: int = 600                     # steps of each learning-rate trial (seed 0; a short budget)
    val_sequences: int = 640                # fresh validation sequences per pair count (resolve stop.tol alone)
    test_sequences: int = 512               # fresh test sequences per pair count
    widths: tuple[int, ...] = (16, 32, 64)  # panel 2's d_model values (>= 3; below the 81 token ids: calibration)
    width_models: tuple[str, ...] = ("spen_linear", "spen_token_attention", "gru", "oracle")  # panel 2 (no selective)
    width_n_pairs: int = 8                  # panel 2's fixed pair count
    width_seeds: tuple[int, ...] = (0,)     # panel 2's seeds at the widths other than d_model
    width_steps: int = 4000                 # panel 2's step cap at those widths (a run cut there says so)
    distance_models: tuple[str, ...] = ("spen_linear", "spen_token_attention", "transformer", "oracle")  # panel 3
    distance_n_pairs: int = 4               # panel 3's pairs per sequence
    distance_gap: tuple[int, int] = (0, 200)  # panel 3's distractor tokens between pairs and queries (range)
    distance_distractors: int = setting(64, low=0)  # panel 3's distractor vocabulary (0: blanks)
    distance_steps: int = 600               # optimiser steps per panel-3 run (long sequences: the cpu budget)
    distance_seeds: tuple[int, ...] = (0,)  # panel 3's seeds
    distance_bins: tuple[int, ...] = (0, 25, 50, 100, 150, 200)  # bin edges of key-query distance (tokens)
    oracle_rank: int = setting(512, low=1)  # products of the oracle's bilinear reader
    oracle_steps: int = 3000                # the step cap of the oracle's fit
    oracle_lr: float = setting(1e-2, low=0, low_open=True)  # its peak learning rate
    spen: SPENTraces = field(default_factory=SPENTraces)  # SPEN's trace rates, as notebooks 03 and 04's spen.alphas
    seeds: tuple[int, ...] = (0, 1, 2)
    workers: int = 2                        # training processes at once (one torch thread each)
    device: str = "cpu"                     # where models train ("cuda" at the paper profile)


def settings_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> Settings:
    """Notebook 05's settings at ``profile`` with a reader's ``overrides`` applied.

    Raises:
        ValueError: unknown profile or setting, a value that does not fit its field (a count
            below 1 such as ``steps: 0``; :func:`paper_lib.pipeline.settings.check_value`), an
            unknown model, fewer than 3 learning rates, or a task that does not fit (more pairs
            than keys, sequences longer than ``seq_len``).
    """
    s = check_seeds(configure(Settings(), "associative_recall", profile, overrides, PROFILE_SETTINGS))
    s = replace(s, models=s.models or MODELS)
    bad = sorted(m for m in set(s.models) | set(s.width_models) | set(s.distance_models) if m not in MODELS)
    if bad:
        raise ValueError(f"unknown model(s) {', '.join(bad)}; allowed: {', '.join(MODELS)}")
    outside = sorted((set(s.width_models) | set(s.distance_models)) - set(s.models))
    if outside:
        raise ValueError(f"panel 2/3 model(s) {', '.join(outside)} not in models (their learning rate is chosen there)")
    if len(s.lrs) < 3 and not get_profile(profile).proves_nothing:
        raise ValueError(f"lrs must list at least 3 learning rates to choose from, got {list(s.lrs)}")
    task(s).check(max(s.n_pairs))
    distance_task(s).check(s.distance_n_pairs)
    s.stop.check_heldout(s.val_sequences, "associative_recall.val_sequences (one pair count's validation set)")
    return s


def task(s: Settings) -> MQARTask:
    """The MQAR setting of panels 1 and 2."""
    return MQARTask(n_keys=s.n_keys, n_values=s.n_values, n_queries=s.n_queries, seq_len=s.seq_len,
                    delay=s.delay, single_hop=s.single_hop)


def distance_task(s: Settings) -> MQARTask:
    """Panel 3's setting: ``distance_n_pairs`` pairs, a gap drawn in ``distance_gap`` per sequence."""
    t = task(s)
    t = replace(t, gap=tuple(s.distance_gap), n_queries=min(s.n_queries, s.distance_n_pairs),
                n_distractors=s.distance_distractors)
    return replace(t, seq_len=t.length(s.distance_n_pairs))


def oracle_config(s: Settings, d_model: int | None = None) -> OracleConfig:
    """The oracle of a trace bank of SPEN's rates and width ``d_model`` (default ``s.d_model``)."""
    return OracleConfig(d_model=d_model or s.d_model, alphas=tuple(s.spen.alphas), rank=s.oracle_rank,
                        steps=s.oracle_steps, lr=s.oracle_lr, batch_size=2 * s.batch_size,
                        warmup_steps=s.warmup_steps)


def state_size(name: str, s: Settings, d_model: int | None = None, seq_len: int | None = None) -> int:
    """Numbers a model carries from token to token per sequence: SPEN ``n_layer x S x d`` fixed
    traces plus what its reader keeps beside them (the predictor's
    :meth:`~paper_lib.predictors.Predictor.added_state`: a learned selective state of ``S x d`` per
    block, equal to the traces, see :func:`build`; every earlier token, counted as the Transformer);
    the GRU ``n_layer x S x d`` (equal to SPEN's traces); the oracle one bank ``S x d``; the
    Transformer keys and values of every position, ``n_layer x 2 x d x seq_len``."""
    d, T, S = d_model or s.d_model, seq_len or s.seq_len, len(s.spen.alphas)
    if name == ORACLE:
        return S * d
    if name == "transformer":
        return s.n_layer * 2 * d * T
    if name.startswith("spen_"):
        cfg = SPENConfig(vocab_size=1, n_layer=s.n_layer, d_model=d, alphas=tuple(s.spen.alphas), block_size=T)
        return s.n_layer * (S * d + PREDICTORS[name[5:]].added_state(cfg, T, d_state=S * d))
    return s.n_layer * S * d


def build(name: str, s: Settings, vocab_size: int, d_model: int | None = None, seq_len: int | None = None,
          seed: int = 0):
    """A freshly initialised model ``name`` (in :data:`MODELS`) of width ``d_model``.

    Sizes scale with the width: MLP / sparse FFN ``ff_mult * d``; SPEN's bottleneck ``d / 2``;
    the GRU's state ``S x d`` per block (equal to SPEN's trace state); ``spen_selective``'s learned
    selective state also ``S x d`` per block (SPEN-selective at equal state; the library's
    default sizes it to the linear reader's parameters, ``d`` per block; its weights are drawn after
    the rest of the model's, from ``seed``). Raises ValueError: unknown name (the oracle is fitted by
    :func:`paper_lib.bounds.oracle.fit_oracle`, not built here).
    """
    d = d_model or s.d_model
    common = dict(vocab_size=vocab_size, n_layer=s.n_layer, d_model=d, d_ff=s.ff_mult * d,
                  block_size=seq_len or s.seq_len)
    if name == "transformer":
        return build_model("transformer", seed=seed, n_head=max(1, min(s.n_head, d // 16)), **common)
    if name == "gru":
        return build_model("gru", seed=seed, d_state=len(s.spen.alphas) * d, **common)
    if name.startswith("spen_") and name[5:] in ABLATION_PREDICTORS:
        model = build_model("spen", seed=seed, predictor=name[5:], d_bottleneck=max(1, d // 2),
                            alphas=tuple(s.spen.alphas), **common)
        if name == "spen_selective":                     # equal state: S x d learned numbers per block
            torch.manual_seed(seed)
            for block in model.blocks:
                block.predictor = SelectivePredictor(model.config, d_state=len(s.spen.alphas) * d)
                block.predictor.apply(gpt2_init_weights)
        return model
    raise ValueError(f"unknown model {name!r}; allowed: {', '.join(MODELS)}")


def budget_table(s: Settings, vocab_size: int) -> pd.DataFrame:
    """Parameters of every model of panel 1 (``model, parameters, vs_transformer``, the last a
    relative difference) and the state each carries per sequence (``state`` in words,
    ``state_numbers`` by :func:`state_size`; attention's at ``seq_len``)."""
    rows, S = [], len(s.spen.alphas)
    for name in s.models:
        if name == ORACLE:
            rows.append({"model": name, "parameters": s.oracle_rank * (S * s.d_model + s.d_model
                                                                        + vocab_size) + vocab_size,
                         "state": f"1 x {S} x {s.d_model} fixed traces (fixed embeddings)",
                         "state_numbers": state_size(name, s)})
            continue
        with torch.device("meta"):
            n = count_params(build(name, s, vocab_size))
        traces = f"{s.n_layer} x {S} x {s.d_model} fixed traces"
        gru = f"{s.n_layer} x {S * s.d_model} gated (equal to the traces)"
        state = {"transformer": "every earlier token (keys and values)", "gru": gru}.get(name, traces)
        keeps = PREDICTORS[name[5:]].keeps if name.startswith("spen_") else ""   # the reader's own facts
        if name == "spen_selective":            # the equal-state control (build): S x d learned numbers per block
            state += f" + {s.n_layer} x {S * s.d_model} {keeps} (equal to the traces)"
        elif keeps:
            state += f" + {keeps}"
        rows.append({"model": name, "parameters": n, "state": state, "state_numbers": state_size(name, s)})
    df = pd.DataFrame(rows)
    if "transformer" in set(df.model):
        ref = df.loc[df.model == "transformer", "parameters"].item()
        df["vs_transformer"] = (df.parameters - ref) / ref
    return df


def chance(s: Settings, mqar: MQARTask | None = None, n_pairs: Sequence[int] | None = None) -> float:
    """The stopping rule's chance loss (nats): the best answer that ignores the keys, on the validation
    sequences of ``n_pairs`` (default: panel 1's task and pair counts; :func:`keys_ignored_loss`)."""
    mqar, ns = mqar or task(s), [int(n) for n in (n_pairs or s.n_pairs)]
    val = [sample_mqar(mqar, n, s.val_sequences, VAL_SEED + n) for n in ns]
    return float(np.mean([keys_ignored_loss(mqar, b.inputs, b.targets) for b in val]))


def train_recall(model, mqar: MQARTask, n_pairs: Sequence[int], s: Settings, lr: float, steps: int, seed: int):
    """Train ``model`` on fresh MQAR sequences (a mixture over ``n_pairs``), loss on query answers only,
    until the stopping rule ``s.stop`` stops it (:func:`paper_lib.train.train_until_flat`).

    The house's one recipe: AdamW (betas 0.9/0.98, ``s.weight_decay`` on matrices only), linear warmup
    over ``s.warmup_steps`` then cosine decay to 0 at ``steps`` (the cap), gradients clipped at norm 1;
    batch ``s.batch_size``; the training stream seeded by ``seed`` (never equal to the validation or
    test streams). Held out: ``s.val_sequences`` fresh validation sequences per ``N`` (query accuracy,
    mean over ``N``); chance: the loss of the best answer that ignores the keys on them
    (:func:`paper_lib.bounds.oracle.keys_ignored_loss`), the plateau a recall model sits on before it binds.

    Returns:
        the model (its best held-out weights, eval mode), the learning curve (rows ``step, lr,
        train_loss, n_pairs, val_accuracy``) and the :class:`~paper_lib.stopping.Stopper` (``reason``, ``steps``).
    """
    dev = model_device(model)
    cfg = TrainConfig(steps=steps, batch_size=s.batch_size, seq_len=s.seq_len, lr=lr, min_lr_frac=0.0,
                      warmup_steps=min(s.warmup_steps, steps - 1), weight_decay=s.weight_decay, grad_clip=1.0,
                      betas=(0.9, 0.98), seed=seed)
    gen = torch.Generator().manual_seed(1_000 * seed + 1)
    val = {int(n): sample_mqar(mqar, int(n), s.val_sequences, VAL_SEED + int(n)) for n in n_pairs}

    def step_loss(step: int) -> torch.Tensor:
        b = sample_mqar(mqar, list(n_pairs), s.batch_size, gen)
        return model(b.inputs.to(dev), b.targets.to(dev))[1]             # cross-entropy on answers

    def heldout() -> dict[str, float]:
        return {str(n): (lambda rt: rt[0] / rt[1])(query_accuracy(model(b.inputs.to(dev))[0].cpu(), b.targets))
                for n, b in val.items()}

    stopper = Stopper(s.stop, steps, chance(s, mqar, n_pairs), s.val_sequences * len(val))
    rows = train_until_flat(model, step_loss, heldout, cfg, stopper)
    curve = [{"step": r["step"], "lr": r["lr"], "train_loss": r["train_loss"], "n_pairs": n, "val_accuracy": r[str(n)]}
             for r in rows for n in val]
    return model, curve, stopper


def _fit(name: str, s: Settings, mqar: MQARTask, n_pairs: Sequence[int], d_model: int, seed: int, lr: float,
         steps: int):
    """A model ``name`` trained on ``mqar``, its learning curve and its :class:`~paper_lib.stopping.Stopper`
    (the oracle: fitted on its fixed traces, capped at ``s.oracle_steps``)."""
    if name == ORACLE:
        return fit_oracle(mqar, list(n_pairs), oracle_config(s, d_model), seed=seed, rule=s.stop,
                          val_sequences=s.val_sequences, val_seed=VAL_SEED)
    model = build(name, s, mqar.vocab_size, d_model, seq_len=mqar.seq_len, seed=seed).to(s.device)
    return train_recall(model, mqar, n_pairs, s, lr, steps, seed)


def _job(s: Settings, kind: str, name: str, d_model: int, seed: int, lr: float) -> dict:
    """One training run and its evaluation: ``kind`` is ``"lr"`` (a learning-rate trial scored on
    validation sequences), ``"pairs"`` (tested at every ``N`` of ``s.n_pairs``) or ``"distance"``
    (panel 3). Returns ``{"rows": [...], "curve": [...]}``; every row names why its run stopped
    (``stop``) and when (``steps``). Module-level so that a worker process can run it."""
    key = {"model": name, "d_model": d_model, "seed": seed, "lr": lr}
    if kind == "distance":
        mqar = distance_task(s)
        model, curve, stop = _fit(name, s, mqar, [s.distance_n_pairs], d_model, seed, lr, s.distance_steps)
        df = accuracy_by_distance(model, mqar, s.distance_n_pairs, s.test_sequences, s.distance_bins, TEST_SEED)
        rows = df.assign(model=name, seed=seed, steps=int(stop.steps[0]), stop=stop.reason).to_dict("records")
    else:
        mqar = task(s)
        cap = s.lr_steps if kind == "lr" else s.steps if d_model == s.d_model else s.width_steps
        model, curve, stop = _fit(name, s, mqar, s.n_pairs, d_model, seed, lr, cap)
        ran = {"steps": int(stop.steps[0]), "stop": stop.reason}
        if kind == "lr":
            acc = accuracy_by_pairs(model, mqar, s.n_pairs, s.val_sequences, VAL_SEED)
            rows = [{"model": name, "d_model": d_model, "lr": lr, "val_accuracy": float(np.mean(list(acc.values()))),
                     **ran}]
        else:
            acc = accuracy_by_pairs(model, mqar, s.n_pairs, s.test_sequences, TEST_SEED)
            rows = [{"model": name, "n_pairs": n, "d_model": d_model, "seed": seed, "accuracy": a, "lr": lr, **ran,
                     "parameters": count_params(model), "state_size": state_size(name, s, d_model)}
                    for n, a in acc.items()]
    return {"rows": rows, "curve": [{**key, "panel": kind, **r} for r in curve]}


def run_jobs(s: Settings, jobs: Sequence[tuple], progress=None) -> tuple[list[dict], list[dict]]:
    """Run :func:`_job` for every ``(kind, name, d_model, seed, lr)`` of ``jobs`` in ``s.workers`` processes
    of one torch thread (:func:`paper_lib.pipeline.parallel.parallel_map`), costliest first (``RUN_COST``):
    ``(rows, curves)`` in job order. Every job seeds itself, so the rows do not depend on the workers."""
    done = parallel_map(_job, [(s, *job) for job in jobs], workers=s.workers, progress=progress is not None,
                        bar=progress, cost=lambda job: RUN_COST.get(job[2], 1) * job[3])   # (s, kind, name, width, ...)
    return [r for d in done for r in d["rows"]], [c for d in done for c in d["curve"]]


RUN_COST = {"gru": 155, "spen_selective": 150, "spen_linear": 75, "oracle": 30, "spen_token_attention": 20,
            "transformer": 15}  # seconds of a run at width 64, one core (calibration part 4): only the order matters


def choose_lrs(s: Settings, progress=None) -> tuple[dict[str, float], pd.DataFrame]:
    """Per model, the learning rate of ``s.lrs`` with the best mean validation accuracy over
    ``s.n_pairs`` after ``s.lr_steps`` steps (seed 0, width ``s.d_model``; fresh validation
    sequences; ties -> the smaller rate). ``len(s.models) * len(s.lrs)`` jobs; the oracle keeps
    ``s.oracle_lr`` (its fit is long enough to converge, see :mod:`paper_lib.bounds.oracle`).

    Returns:
        ``({model: lr}, trials)`` with ``trials`` columns ``model, d_model, lr, val_accuracy``.
    """
    learned = [m for m in s.models if m != ORACLE]
    trials = pd.DataFrame(run_jobs(s, [("lr", m, s.d_model, 0, lr) for m in learned for lr in s.lrs], progress)[0])
    best = trials.sort_values(["val_accuracy", "lr"], ascending=[False, True]).drop_duplicates("model")
    chosen = {m: float(best.set_index("model").lr[m]) for m in learned}
    return {**chosen, ORACLE: s.oracle_lr}, trials


def run_pairs(s: Settings, lrs: Mapping[str, float], d_model: int | None = None, models: Sequence[str] | None = None,
              progress=None, seeds: Sequence[int] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Panels 1 and 2: every model and seed trained once on the mixture of ``s.n_pairs`` at width
    ``d_model`` (default ``s.d_model``), tested at every pair count. ``len(models) * len(s.seeds)`` jobs.

    Returns:
        rows ``model, n_pairs, d_model, seed, accuracy, lr, steps, stop, parameters, state_size``
        (``steps``: the optimiser steps run; ``stop``: why, :data:`paper_lib.stopping.REASONS`) and
        the learning curves (``model, d_model, seed, lr, step, train_loss, n_pairs, val_accuracy``).
    """
    d = d_model or s.d_model
    rows, curves = run_jobs(s, [("pairs", m, d, seed, lrs[m]) for m in models or s.models for seed in seeds or s.seeds],
                            progress)
    return pd.DataFrame(rows), pd.DataFrame(curves)


def baselines(s: Settings) -> dict[int, float]:
    """The keys-ignored baseline (chance, :func:`paper_lib.bounds.oracle.keys_ignored_baseline`) at each
    ``N`` of panel 1, on the very test sequences the models are scored on."""
    return baseline_by_pairs(task(s), s.n_pairs, s.test_sequences, TEST_SEED)


def run_distance(s: Settings, lrs: Mapping[str, float], progress=None) -> pd.DataFrame:
    """Panel 3: each of ``s.distance_models`` trained on :func:`distance_task` sequences, accuracy
    binned by key-query distance. Rows ``model, seed, distance_lo, distance_hi, accuracy, answers, steps, stop``."""
    rows, _ = run_jobs(s, [("distance", m, s.d_model, seed, lrs[m]) for m in s.distance_models
                           for seed in s.distance_seeds], progress)
    return pd.DataFrame(rows)[["model", "seed", "distance_lo", "distance_hi", "accuracy", "answers", "steps", "stop"]]


def recall_metrics(by_pairs: pd.DataFrame, s: Settings, chance: Mapping[int, float] | None = None) -> dict[str, list[float]]:
    """Per-seed metrics for ``metrics.json`` (accuracies are fractions of query answers):

    ``recall_acc_<model>`` at the hardest standard setting (the largest pair count of panel 1,
    width ``s.d_model``) for every model (``recall_acc_spen_token_attention`` is the positive
    control inside SPEN, at ``s.delay``); ``recall_acc_<label>_<N>`` for every ``N`` with label
    ``transformer``, ``spen`` (the paper's default reader, ``linear``), ``gru``, ``spen_selective``
    (at equal state) and ``oracle``;
    ``recall_drop_transformer`` and ``recall_drop_spen``: accuracy at the smallest ``N`` minus at the
    largest, per seed; ``recall_baseline_<N>``: the keys-ignored baseline ``chance`` (one number,
    exact on the test sequences); ``recall_state_gru``, ``recall_state_spen`` and
    ``recall_state_spen_selective`` (traces plus its learned state) and ``recall_state_oracle`` (one
    bank): numbers of state per sequence (:func:`state_size`); ``recall_cut_<model>_improving`` and
    ``_plateau``: 1 per seed whose run was cut (:func:`paper_lib.stopping.cut_metrics`).
    """
    d = by_pairs[by_pairs.d_model == s.d_model]
    hard = max(s.n_pairs)

    def per_seed(model: str, n: int) -> list[float]:
        return d[(d.model == model) & (d.n_pairs == n)].sort_values("seed").accuracy.astype(float).tolist()

    m = {f"recall_acc_{name}": per_seed(name, hard) for name in s.models}
    easy = min(s.n_pairs)
    for label, name in (("transformer", "transformer"), ("spen", "spen_linear"), ("gru", "gru"),
                        ("spen_selective", "spen_selective"), (ORACLE, ORACLE)):
        if name in s.models:
            for n in s.n_pairs:
                m[f"recall_acc_{label}_{n}"] = per_seed(name, n)
            if label in ("transformer", "spen") and per_seed(name, easy) and per_seed(name, hard):
                m[f"recall_drop_{label}"] = (np.array(per_seed(name, easy)) - np.array(per_seed(name, hard))).tolist()
    for n, b in (chance or {}).items():
        m[f"recall_baseline_{n}"] = [float(b)]
    for name, g in d.drop_duplicates(["model", "seed"]).groupby("model"):    # why each run stopped
        m.update(cut_metrics(f"recall_cut_{name}_", g.sort_values("seed").stop.tolist()))
    m["recall_state_gru"], m["recall_state_spen"] = [state_size("gru", s)], [state_size("spen_linear", s)]
    if "spen_selective" in s.models:
        m["recall_state_spen_selective"] = [state_size("spen_selective", s)]
    if ORACLE in s.models:
        m["recall_state_oracle"] = [state_size(ORACLE, s)]
    return {k: v for k, v in m.items() if v}
