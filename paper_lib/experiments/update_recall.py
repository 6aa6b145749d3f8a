"""Notebook 07's experiment: key-update recall at equal state, under a stated noise budget.

The task (:mod:`paper_lib.data.update_recall`): ten pair tokens, the query key bound two or three
times, a gap of Δ blanks, the query, the answer (the key's latest value) one token later. The
resource model (:mod:`paper_lib.noise_budget`): every state number at unit scale carries Gaussian
noise ``sigma`` per step, in training and test. The fixed bank (one-hot codes, the paper's three
rates, 243 numbers) is read two ways: the Bayes bound (:mod:`paper_lib.update_bound`, an upper
bound for any reader) and the MLP oracle (:mod:`paper_lib.update_oracle`). The learned states of
equal size (:mod:`paper_lib.models.noisy_states`): the selective scan and the GRU (243 numbers)
and SPEN-linear with two blocks (2 x 3 x 40 = 240); the Transformer is the positive control. Every
run trains on a mixture of the gaps and is tested at each. Our design: the paper has no such
experiment.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import pandas as pd
import torch
import torch.nn.functional as F

from ..claims.update import ORACLE, UPDATE_STATES
from ..data.update_recall import UpdateTask, any_value_baseline, keys_ignored_baseline, sample_update
from ..ema import rates_setting
from ..models.lm import count_params
from ..models.noisy_states import NoisyGRULM, NoisyScanLM, NoisySPEN, NoisyTransformer
from ..models.spen import SPENConfig
from ..models.transformer import TransformerConfig
from ..noise_budget import dense_sigma
from ..pipeline.parallel import parallel_map
from ..pipeline.settings import check_seeds, configure, setting
from ..profile_settings import PROFILE_SETTINGS
from ..train import TrainConfig, make_optimizer
from ..update_bound import analytic_block, bayes_accuracy, update_bound
from ..update_oracle import UpdateOracle, UpdateOracleConfig, fit_update_oracle, oracle_accuracy

MODELS: tuple[str, ...] = ("scan", "gru", "spen", "transformer")
"""The learned states of equal size (the selective scan, the GRU, SPEN-linear with two blocks) and
the positive control."""
VAL_SEED, TEST_SEED = 30_011, 40_009
"""Generator seeds of the validation and test sequences (plus the gap; disjoint from training)."""


@dataclass
class Settings:
    """Notebook 07's settings; defaults are the ``cpu`` profile's (counts in tokens, steps, numbers)."""

    n_keys: int = 8                          # keys (tokens)
    n_values: int = 8                        # values (tokens); 81 token ids with the pair tokens
    n_slots: int = 10                        # pair tokens per sequence
    bindings: tuple[int, ...] = (2, 3)       # times the query key is bound (each equally likely)
    delay: int = setting(1, low=0)           # blanks after the query; the answer is due at the last
    gaps: tuple[int, ...] = (2, 8, 16, 32, 64)  # Δ: blanks between the pairs and the query
    sigma: float = setting(0.02, low=0)      # the headline noise per state number per step (the rule's)
    sigmas: tuple[float, ...] = (0.0, 0.005, 0.02)  # one figure panel each (must include sigma)
    alphas: tuple[float, ...] = rates_setting()  # the fixed bank's rates
    models: tuple[str, ...] = MODELS         # at the headline sigma
    panel_models: tuple[str, ...] = ("scan", "transformer")  # at the other sigmas
    seeds: tuple[int, ...] = (0, 1, 2)       # at the headline sigma (oracle and models)
    panel_seeds: tuple[int, ...] = (0,)      # at the other sigmas
    d_state: int = 243                       # numbers of the scan's and the GRU's state (3 x 81, the bank's)
    d_embed: int = 32                        # their token embedding (dims)
    d_hidden: int = 256                      # their MLP readout's hidden units
    spen_d_model: int = 40                   # SPEN's width: 2 blocks x 3 traces x 40 = 240 numbers
    transformer_d_model: int = 64            # the positive control's width (2 heads)
    n_layer: int = 2                         # SPEN's and the Transformer's blocks
    batch_size: int = 32                     # sequences per step (one gap per step, drawn uniformly)
    max_steps: int = 2000                    # optimiser steps at most
    min_steps: int = setting(800, low=0)     # steps before a plateau may stop a run
    warmup_steps: int = setting(100, low=0)  # linear warmup, then a constant rate (dropped on plateaus)
    check_every: int = 100                   # steps between validation checks
    patience: int = 3                        # checks without a gain of tol in mean validation accuracy
    tol: float = setting(0.005, low=0)       # accuracy gain that counts as progress
    lr_drops: int = setting(1, low=0)        # rate drops (x lr_factor) before a plateau stops a run
    lr_factor: float = setting(0.3, low=0, high=1, low_open=True, high_open=True)
    solved_stop: float = setting(0.99, low=0, low_open=True)  # stop once validation >= this at every gap
    weight_decay: float = setting(0.0, low=0)  # AdamW on matrices
    scan_lr: float = setting(3e-3, low=0, low_open=True)
    gru_lr: float = setting(3e-3, low=0, low_open=True)
    spen_lr: float = setting(3e-3, low=0, low_open=True)
    transformer_lr: float = setting(1e-3, low=0, low_open=True)
    val_sequences: int = 128                 # fixed validation sequences per gap
    test_sequences: int = 1024               # test sequences per gap
    calibration_steps: int = 600             # steps of the calibration runs (gap 2, seed 0, headline sigma)
    oracle: UpdateOracleConfig = field(default_factory=lambda: UpdateOracleConfig(max_steps=3000, check_every=100,
                                                                                  val_sequences=512))
    bound_samples: int = 20_000              # Monte-Carlo draws of the Bayes bound per gap and sigma
    bayes_samples: int = 4_000               # draws of the Bayes reader (no genie) per gap and sigma
    workers: int = 2                         # worker processes (one torch thread each)


def settings_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> Settings:
    """Notebook 07's settings at ``profile`` with ``overrides`` applied.

    Raises:
        ValueError: unknown profile or setting, a value that does not fit, an unknown model,
            ``sigma`` not among ``sigmas``, or a task that does not fit (:class:`UpdateTask`).
    """
    s = check_seeds(configure(Settings(), "update_recall", profile, overrides, PROFILE_SETTINGS))
    bad = sorted((set(s.models) | set(s.panel_models)) - set(MODELS))
    if bad:
        raise ValueError(f"unknown model(s) {', '.join(bad)}; allowed: {', '.join(MODELS)}")
    if s.sigma not in s.sigmas:
        raise ValueError(f"sigma ({s.sigma:g}) must be one of sigmas {list(s.sigmas)}")
    if not s.gaps or min(s.gaps) < 0:
        raise ValueError(f"gaps must be a non-empty list of integers >= 0, got {list(s.gaps)}")
    task(s)
    return s


def task(s: Settings) -> UpdateTask:
    """The key-update setting of ``s``."""
    return UpdateTask(n_keys=s.n_keys, n_values=s.n_values, n_slots=s.n_slots, bindings=tuple(s.bindings),
                      delay=s.delay)


def state_size(name: str, s: Settings) -> int:
    """Numbers each state carries from token to token per sequence: the bank ``S x vocab``, the scan
    and the GRU ``d_state``, SPEN ``n_layer x S x d_model`` (its traces), the Transformer the keys
    and values of every position at the longest gap (``n_layer x 2 x d_model x T``)."""
    t = task(s)
    if name == ORACLE:
        return len(s.alphas) * t.vocab_size
    if name in ("scan", "gru"):
        return s.d_state
    if name == "spen":
        return s.n_layer * len(s.alphas) * s.spen_d_model
    if name == "transformer":
        return s.n_layer * 2 * s.transformer_d_model * t.length(max(s.gaps))
    raise ValueError(f"unknown state {name!r}; allowed: {ORACLE}, {', '.join(MODELS)}")


def build(name: str, s: Settings, sigma: float, seed: int = 0):
    """A freshly initialised model ``name`` (in :data:`MODELS`) with noise ``sigma`` (seeded by ``seed``).

    Raises:
        ValueError: unknown name.
    """
    t = task(s)
    torch.manual_seed(seed)
    if name == "scan":
        return NoisyScanLM(t.vocab_size, s.d_embed, s.d_state, s.d_hidden, sigma)
    if name == "gru":
        return NoisyGRULM(t.vocab_size, s.d_embed, s.d_state, s.d_hidden, sigma)
    block = t.length(max(s.gaps))
    if name == "spen":
        d = s.spen_d_model
        return NoisySPEN(SPENConfig(vocab_size=t.vocab_size, n_layer=s.n_layer, d_model=d, d_ff=4 * d,
                                    d_bottleneck=max(1, d // 2), alphas=tuple(s.alphas), block_size=block), sigma)
    if name == "transformer":
        d = s.transformer_d_model
        return NoisyTransformer(TransformerConfig(vocab_size=t.vocab_size, n_layer=s.n_layer, d_model=d, n_head=2,
                                                  d_ff=4 * d, block_size=block), sigma)
    raise ValueError(f"unknown model {name!r}; allowed: {', '.join(MODELS)}")


@torch.no_grad()
def accuracy(model, batches: Mapping[int, Any], seed: int) -> dict[int, float]:
    """Answer accuracy per gap on ``batches`` (``{gap: UpdateBatch}``), the noise drawn from ``seed``
    (a forked generator: the caller's random stream is left as it was)."""
    model.eval()
    out = {}
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        for d, b in batches.items():
            out[int(d)] = float((model(b.inputs).argmax(-1) == b.targets[:, -1]).float().mean())
    return out


def train_arm(model, s: Settings, gaps: Sequence[int], lr: float, steps: int, seed: int):
    """Train ``model`` on fresh sequences, one gap per step (uniform over ``gaps``), loss on the answer.

    AdamW (betas 0.9/0.98, ``s.weight_decay`` on matrices), linear warmup, then a constant rate;
    gradients clipped at norm 1. Every ``s.check_every`` steps the accuracy on fixed validation
    sequences per gap is measured: the run keeps the weights of its best mean, and stops when it
    solves every gap (``s.solved_stop``), or after ``s.patience`` checks without a gain of ``s.tol``
    (past ``s.min_steps``) once the rate has been dropped ``s.lr_drops`` times (each plateau before
    that multiplies it by ``s.lr_factor``), or at ``steps``.

    Returns:
        the model (best weights, eval mode), the learning curve (rows ``step, gap, val_accuracy, lr,
        train_loss``) and ``{"steps", "stop"}`` (``solved``, ``plateau`` or ``max_steps``).
    """
    t = task(s)
    cfg = TrainConfig(steps=steps, batch_size=s.batch_size, seq_len=t.length(max(gaps)), lr=lr,
                      weight_decay=s.weight_decay, betas=(0.9, 0.98), seed=seed)
    opt = make_optimizer(model, cfg)
    gen = torch.Generator().manual_seed(1_000 * seed + 1)
    val = {d: sample_update(t, d, s.val_sequences, VAL_SEED + d) for d in gaps}
    torch.manual_seed(seed)
    curve, best, best_state, stale, drops, rate, stop, step = [], -1.0, None, 0, 0, lr, "max_steps", 0
    model.train()
    for step in range(1, steps + 1):
        for g in opt.param_groups:
            g["lr"] = rate * min(1.0, step / max(1, s.warmup_steps))
        d = gaps[int(torch.randint(len(gaps), (1,), generator=gen))]
        b = sample_update(t, d, s.batch_size, gen)
        loss = F.cross_entropy(model(b.inputs), b.targets[:, -1])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % s.check_every and step < steps:
            continue
        acc = accuracy(model, val, VAL_SEED)
        model.train()
        curve += [{"step": step, "gap": k, "val_accuracy": v, "lr": rate, "train_loss": float(loss.detach())} for k, v in acc.items()]
        mean = sum(acc.values()) / len(acc)
        if mean > best + s.tol or best_state is None:
            best, best_state, stale = max(mean, best), copy.deepcopy(model.state_dict()), 0
        else:
            stale += 1
        if min(acc.values()) >= s.solved_stop:
            stop = "solved"
            break
        if stale >= s.patience and step >= s.min_steps:
            if drops >= s.lr_drops:
                stop = "plateau"
                break
            drops, rate, stale = drops + 1, rate * s.lr_factor, 0
    model.load_state_dict(best_state)
    model.eval()
    return model, curve, {"steps": step, "stop": stop}


def _lr(name: str, s: Settings) -> float:
    return getattr(s, f"{name}_lr")


def test_batches(s: Settings, gaps: Sequence[int] | None = None) -> dict:
    """The test sequences of every gap (``s.test_sequences`` each, seeded ``TEST_SEED + gap``)."""
    return {d: sample_update(task(s), d, s.test_sequences, TEST_SEED + d) for d in gaps or s.gaps}


def _job(s: Settings, kind: str, name: str, sigma: float, seed: int) -> dict:
    """One unit of work, module-level for the worker processes: ``kind`` ``"model"`` (train a model
    on every gap), ``"calibration"`` (gap 2 only, ``s.calibration_steps``), ``"oracle"`` (fit the bank
    oracle) or ``"bound"`` (``seed`` is the gap). Returns ``{"rows": [...], "curve": [...]}``."""
    t = task(s)
    if kind == "bound":
        gap = seed
        top = update_bound(t, gap, s.alphas, sigma, s.bound_samples, seed=TEST_SEED + gap)
        dense = update_bound(t, gap, s.alphas, dense_sigma(sigma, t.vocab_size), s.bound_samples, seed=TEST_SEED + gap)
        bayes = 1.0 if sigma == 0 else bayes_accuracy(*_bayes_draws(s, gap, sigma))
        return {"rows": [{"sigma": sigma, "gap": gap, "bound": top["acc"], "bound_se": top["se"],
                          "dense_bound": dense["acc"], "dense_se": dense["se"], "bayes": bayes}], "curve": []}
    if kind == "oracle":
        model, curve, info = fit_update_oracle(t, s.gaps, s.alphas, sigma, s.oracle, seed=seed)
        acc = oracle_accuracy(model, t, s.gaps, s.alphas, sigma, s.test_sequences, TEST_SEED)
        rows = [{"model": ORACLE, "sigma": sigma, "seed": seed, "gap": d, "accuracy": a, "steps": info["steps"],
                 "converged": info[d]} for d, a in acc.items()]
        return {"rows": rows, "curve": [{**r, "model": ORACLE, "sigma": sigma, "seed": seed} for r in curve]}
    gaps = (min(s.gaps),) if kind == "calibration" else tuple(s.gaps)
    steps = s.calibration_steps if kind == "calibration" else s.max_steps
    model = build(name, s, sigma, seed)
    model, curve, info = train_arm(model, s, gaps, _lr(name, s), steps, seed)
    acc = accuracy(model, test_batches(s, gaps), TEST_SEED)
    rows = [{"model": name, "sigma": sigma, "seed": seed, "gap": d, "accuracy": a, "steps": info["steps"],
             "stop": info["stop"], "parameters": count_params(model)} for d, a in acc.items()]
    return {"rows": rows, "curve": [{**r, "model": name, "sigma": sigma, "seed": seed} for r in curve]}


def _bayes_draws(s: Settings, gap: int, sigma: float) -> tuple:
    """``(y, batch, task, mu, var)`` for :func:`paper_lib.update_bound.bayes_accuracy`: the query blocks
    of ``s.bayes_samples`` test-seeded sequences drawn from the model."""
    b = sample_update(task(s), gap, s.bayes_samples, TEST_SEED + gap)
    y, mu, var = analytic_block(b, task(s), s.alphas, sigma, torch.Generator().manual_seed(TEST_SEED))
    return y, b, task(s), mu, var


RUN_COST = {"gru": 122, "scan": 78, "spen": 62, "transformer": 82, ORACLE: 36, "bound": 1, "calibration": 12}
"""CPU seconds of a run at the cpu profile at most (its steps x the CPU seconds per step measured on the
shared machine, validation included; only the order matters)."""


def jobs(s: Settings) -> list[tuple]:
    """Every ``(kind, name, sigma, seed)`` of the notebook: the models and the oracle at the headline
    sigma on ``s.seeds`` and at the other sigmas on ``s.panel_seeds``, the bounds at every sigma and
    gap, and the calibration runs (gap 2, seed 0, headline sigma)."""
    out = []
    for sigma in s.sigmas:
        head = sigma == s.sigma
        seeds, models = (s.seeds, s.models) if head else (s.panel_seeds, s.panel_models)
        out += [("model", m, sigma, seed) for m in models for seed in seeds]
        out += [("oracle", ORACLE, sigma, seed) for seed in seeds]
        out += [("bound", "bound", sigma, d) for d in s.gaps]
    out += [("calibration", m, s.sigma, 0) for m in s.models]
    return out


def _cost(job: tuple) -> float:
    kind, name = job[1], job[2]                                        # (s, kind, name, sigma, seed)
    return RUN_COST["calibration"] if kind == "calibration" else RUN_COST.get(name, RUN_COST["bound"])


def run_all(s: Settings, progress=None) -> dict[str, pd.DataFrame]:
    """Run :func:`jobs` in ``s.workers`` processes (costliest first); every job seeds itself, so the
    numbers do not depend on the workers. Returns ``{"results", "curves", "bounds", "calibration",
    "calibration_curves"}`` DataFrames (accuracies are fractions of answers)."""
    todo = jobs(s)
    done = parallel_map(_job, [(s, *j) for j in todo], workers=s.workers, progress=progress is not None,
                        bar=progress, cost=_cost)
    out: dict[str, list] = {"results": [], "curves": [], "bounds": [], "calibration": [], "calibration_curves": []}
    for (kind, *_), r in zip(todo, done, strict=True):
        key = {"bound": "bounds", "calibration": "calibration"}.get(kind, "results")
        out[key] += r["rows"]
        out["calibration_curves" if kind == "calibration" else "curves"] += r["curve"]
    return {k: pd.DataFrame(v) for k, v in out.items()}


def baselines(s: Settings) -> pd.DataFrame:
    """The exact baselines on the test sequences: rows ``gap, any_value, keys_ignored``."""
    t = task(s)
    return pd.DataFrame([{"gap": d, "any_value": any_value_baseline(b), "keys_ignored": keys_ignored_baseline(t, b)}
                         for d, b in test_batches(s).items()])


def update_metrics(results: pd.DataFrame, bounds: pd.DataFrame, base: pd.DataFrame, s: Settings,
                   sigma: float | None = None) -> dict[str, list[float]]:
    """``metrics.json``'s numbers at ``sigma`` (default the headline): per seed
    ``update_acc_<state>_<gap>`` and ``update_oracle_converged_<gap>`` (1 where the oracle's fit was
    flat at that gap); one number each: ``update_bound_<gap>``, ``update_bound_dense_<gap>``,
    ``update_bayes_<gap>``, ``update_baseline_any_<gap>``, ``update_baseline_keys`` (pooled over the
    gaps), ``update_state_<state>`` (numbers per sequence) and ``update_sigma``."""
    sigma = s.sigma if sigma is None else sigma
    r = results[results.sigma == sigma]
    m: dict[str, list[float]] = {}
    for (name, d), g in r.groupby(["model", "gap"]):
        m[f"update_acc_{name}_{d}"] = g.sort_values("seed").accuracy.astype(float).tolist()
        if name == ORACLE:
            m[f"update_oracle_converged_{d}"] = g.sort_values("seed").converged.astype(float).tolist()
    for row in bounds[bounds.sigma == sigma].itertuples():
        m[f"update_bound_{row.gap}"], m[f"update_bound_dense_{row.gap}"] = [row.bound], [row.dense_bound]
        m[f"update_bayes_{row.gap}"] = [row.bayes]
    for row in base.itertuples():
        m[f"update_baseline_any_{row.gap}"] = [row.any_value]
    m["update_baseline_keys"] = [float(base.keys_ignored.mean())]
    for name in (ORACLE,) + tuple(s.models):
        m[f"update_state_{name}"] = [float(state_size(name, s))]
    m["update_sigma"] = [float(sigma)]
    return m


def budget_table(s: Settings) -> pd.DataFrame:
    """Parameters and the state each model carries from token to token (in words and in numbers per
    sequence, :func:`state_size`)."""
    t = task(s)
    words = {ORACLE: f"{len(s.alphas)} fixed traces x {t.vocab_size} one-hot codes, noisy",
             "scan": f"{s.d_state} channels, input-dependent decay, noisy",
             "gru": f"{s.d_state} gated numbers, noisy",
             "spen": f"{s.n_layer} blocks x {len(s.alphas)} fixed traces x {s.spen_d_model}, noisy",
             "transformer": "keys and values of every earlier token (noisy), counted at the longest gap"}
    rows = []
    for name in UPDATE_STATES:
        if name == ORACLE:
            n_feat = len(s.alphas) * t.vocab_size + t.n_values * len(s.alphas) + t.n_keys + len(s.gaps)
            n = count_params(UpdateOracle(n_feat, t.n_values, s.oracle.hidden))
        else:
            with torch.device("meta"):
                n = count_params(build(name, s, s.sigma))
        rows.append({"model": UPDATE_STATES[name], "parameters": n, "state": words[name],
                     "state_numbers": state_size(name, s)})
    return pd.DataFrame(rows)
