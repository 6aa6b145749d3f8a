"""Notebook 07's experiment: key-update recall at equal state, under a stated noise budget.

The task (:mod:`paper_lib.data.update_recall`): ten pair tokens, the query key bound two or three
times, a gap of Δ blanks, the query, the answer (the key's latest value) one token later. The
resource model (:mod:`paper_lib.bounds.noise_budget`): every state number at unit scale carries
Gaussian noise ``sigma`` per step, in training and test. The fixed banks: the paper's (one-hot codes,
its three rates, 243 numbers), read by the Bayes bound (:mod:`paper_lib.bounds.update_bound`) and the
MLP oracle (:mod:`paper_lib.bounds.update_oracle`), and the best bank of a stated family of 243
numbers (:mod:`paper_lib.bounds.bank_family`). The learned states of equal size
(:mod:`paper_lib.models.noisy_states`): the selective scan, the time-invariant scan (the same scan
with learned constant rates: the control that isolates input dependence), the GRU (243 numbers),
SPEN-linear with two blocks (2 x 3 x 40 = 240); the Transformer is the positive control. Every arm
trains on fresh sequences with one recipe (:class:`Arm`: AdamW, warmup, cosine decay) and one
curriculum (:class:`Curriculum`: the answer due at the query first, then the gaps joining one by one)
until the one stopping rule stops it (:mod:`paper_lib.stopping`), and is tested at every gap.
Our design: the paper has no such experiment. Tables and metrics: :mod:`.update_tables`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import pandas as pd
import torch
import torch.nn.functional as F

from ..bounds import bank_family
from ..bounds.noise_budget import dense_sigma
from ..bounds.update_bound import analytic_block, bayes_accuracy, update_bound
from ..bounds.update_oracle import UpdateOracle, UpdateOracleConfig, fit_update_oracle, oracle_accuracy
from ..claims.update import ORACLE, UPDATE_STATES
from ..data.update_recall import UpdateTask, any_value_baseline, keys_ignored_baseline, keys_ignored_loss, sample_update
from ..ema import rates_setting
from ..models.lm import count_params
from ..models.noisy_states import NoisyGRULM, NoisyScanLM, NoisySPEN, NoisyTransformer
from ..models.spen import SPENConfig
from ..models.transformer import TransformerConfig
from ..pipeline.parallel import parallel_map
from ..pipeline.settings import check_seeds, configure, setting
from ..profile_settings import PROFILE_SETTINGS
from ..stopping import Stopper, StopRule
from ..train import TrainConfig, train_until_flat

MODELS: tuple[str, ...] = ("scan", "lti_scan", "gru", "spen", "transformer")
"""The learned states of equal size (selective scan, time-invariant scan, GRU, two-block SPEN-linear), the control."""
VAL_SEED, TEST_SEED = 30_011, 40_009
"""Generator seeds of the validation and test sequences (plus the gap; disjoint from training)."""


@dataclass
class Arm:
    """One arm's recipe (our design): AdamW (betas 0.9/0.98, ``weight_decay`` on matrices), linear
    warmup over ``warmup_steps``, cosine decay to ``min_lr_frac * lr`` at ``max_steps`` (the cap of
    the stopping rule), ``batch_size`` fresh sequences per step (one gap per step), gradients clipped at 1."""

    lr: float = setting(3e-3, low=0, low_open=True)
    max_steps: int = 3000                                   # steps at most (the stopping rule's cap)
    batch_size: int = 64                                    # sequences per step
    warmup_steps: int = setting(200, low=0)                 # steps
    min_lr_frac: float = setting(0.05, low=0, high=1)       # final rate / peak rate
    weight_decay: float = setting(0.0, low=0)


@dataclass
class SPENArm(Arm):
    """SPEN-linear's recipe and sizes; its rates are also the paper's fixed bank's (the oracle, the bounds)."""

    d_model: int = 40                                       # 2 blocks x 3 traces x 40 = 240 numbers
    alphas: tuple[float, ...] = rates_setting()             # EMA rates, each in (0, 1] (paper: 0.5, 0.1, 0.02)


@dataclass
class TransformerArm(Arm):
    """The positive control's recipe and width (2 heads); peak rate 1e-3 (at 3e-3 seed 1 kept to the plateau)."""

    d_model: int = 64


@dataclass
class Curriculum:
    """The order in which every arm meets the task (our design; recall circuits start on a long
    plateau, which a curriculum shortens): the first ``delay_steps`` steps with the answer due at the
    query itself (delay 0), then the task's delay; the gaps join the mixture in ascending order, one
    every ``gap_every`` steps (0: all from the start). No run stops as flat before both are done."""

    delay_steps: int = setting(800, low=0)
    gap_every: int = setting(150, low=0)


@dataclass
class FamilySearch:
    """The family of fixed banks the bound is maximised over (:func:`paper_lib.bounds.bank_family.family`,
    rates on a grid of ``grid`` log-spaced values in ``[lo, hi]``) and the search's Monte-Carlo draws:
    every bank on ``draws`` common draws, the best ``top`` again on ``top_draws``, the best of them on
    ``final_draws`` fresh ones (the number reported)."""

    grid: int = setting(12, low=3)
    lo: float = setting(0.005, low=0, low_open=True, high=1)
    hi: float = setting(0.9, low=0, low_open=True, high=1)
    draws: int = 600
    top: int = 12
    top_draws: int = 6000
    final_draws: int = 20_000


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
    sigmas: tuple[float, ...] = (0.0, 0.005, 0.02)  # one figure panel each; must include sigma
    models: tuple[str, ...] = MODELS         # at the headline sigma
    panel_models: tuple[str, ...] = ("scan", "transformer")  # at the other sigmas
    seeds: tuple[int, ...] = (0, 1, 2)       # at the headline sigma (oracle and models)
    panel_seeds: tuple[int, ...] = (0,)      # at the other sigmas
    d_state: int = 243                       # numbers of the scans' and the GRU's state (3 x 81, the bank's)
    d_embed: int = 32                        # their token embedding (dims)
    d_hidden: int = 256                      # their MLP readout's hidden units
    n_layer: int = 2                         # SPEN's and the Transformer's blocks
    scan: Arm = field(default_factory=Arm)
    lti_scan: Arm = field(default_factory=lambda: Arm(max_steps=6000))  # learns slowly: a longer cap
    gru: Arm = field(default_factory=lambda: Arm(max_steps=4000))
    spen: SPENArm = field(default_factory=lambda: SPENArm(max_steps=1500))  # never leaves the chance loss at 3,000
    transformer: TransformerArm = field(default_factory=lambda: TransformerArm(lr=1e-3, max_steps=4000))
    curriculum: Curriculum = field(default_factory=Curriculum)
    stop: StopRule = field(default_factory=StopRule)  # the stopping rule of every arm (its tol: held-out accuracy)
    val_sequences: int = 512                 # fixed validation sequences per gap (x gaps: resolves stop.tol)
    test_sequences: int = 1024               # test sequences per gap
    calibration_steps: int = 2000            # cap of the calibration runs (gap 2 alone, noise 0, seed 0)
    oracle: UpdateOracleConfig = field(default_factory=UpdateOracleConfig)
    oracle_stop: StopRule = field(default_factory=lambda: StopRule(patience=15))  # the oracle's fit: slow, cheap
    family: FamilySearch = field(default_factory=FamilySearch)
    bound_samples: int = 20_000              # Monte-Carlo draws of the paper bank's Bayes bound per gap and sigma
    bayes_samples: int = 4_000               # draws of the Bayes reader (no genie) per gap and sigma
    workers: int = 2                         # worker processes (one torch thread each)


def settings_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> Settings:
    """Notebook 07's settings at ``profile`` with ``overrides`` applied.

    Raises:
        ValueError: unknown profile or setting, a value that does not fit, an unknown model,
            ``sigma`` not among ``sigmas``, a held-out set too small for ``stop.tol``, or a task that
            does not fit (:class:`UpdateTask`).
    """
    s = check_seeds(configure(Settings(), "update_recall", profile, overrides, PROFILE_SETTINGS))
    bad = sorted((set(s.models) | set(s.panel_models)) - set(MODELS))
    if bad:
        raise ValueError(f"unknown model(s) {', '.join(bad)}; allowed: {', '.join(MODELS)}")
    if s.sigma not in s.sigmas:
        raise ValueError(f"update_recall.sigma={s.sigma:g}: must be one of sigmas {list(s.sigmas)} (add it there)")
    if not s.gaps or min(s.gaps) < 0:
        raise ValueError(f"update_recall.gaps={list(s.gaps)}: must be a non-empty list of integers >= 0")
    s.stop.check_heldout(s.val_sequences * len(s.gaps), "update_recall's validation set (val_sequences x gaps)")
    s.oracle_stop.check_heldout(s.oracle.val_sequences * len(s.gaps), "update_recall's oracle validation set")
    task(s)
    return s


def task(s: Settings) -> UpdateTask:
    """The key-update setting of ``s``."""
    return UpdateTask(n_keys=s.n_keys, n_values=s.n_values, n_slots=s.n_slots, bindings=tuple(s.bindings),
                      delay=s.delay)


def arm(name: str, s: Settings) -> Arm:
    """The recipe of model ``name``."""
    return getattr(s, name)


def state_size(name: str, s: Settings) -> int:
    """Numbers each state carries from token to token per sequence: the bank ``S x vocab``, the scans
    and the GRU ``d_state``, SPEN ``n_layer x S x d_model`` (its traces), the Transformer the keys
    and values of every position at the longest gap (``n_layer x 2 x d_model x T``)."""
    t = task(s)
    if name == ORACLE:
        return len(s.spen.alphas) * t.vocab_size
    if name in ("scan", "lti_scan", "gru"):
        return s.d_state
    if name == "spen":
        return s.n_layer * len(s.spen.alphas) * s.spen.d_model
    if name == "transformer":
        return s.n_layer * 2 * s.transformer.d_model * t.length(max(s.gaps))
    raise ValueError(f"unknown state {name!r}; allowed: {ORACLE}, {', '.join(MODELS)}")


def build(name: str, s: Settings, sigma: float, seed: int = 0):
    """A freshly initialised model ``name`` (in :data:`MODELS`) with noise ``sigma`` (seeded by ``seed``).

    Raises:
        ValueError: unknown name.
    """
    t = task(s)
    torch.manual_seed(seed)
    if name in ("scan", "lti_scan"):
        return NoisyScanLM(t.vocab_size, s.d_embed, s.d_state, s.d_hidden, sigma, selective=name == "scan")
    if name == "gru":
        return NoisyGRULM(t.vocab_size, s.d_embed, s.d_state, s.d_hidden, sigma)
    block = t.length(max(s.gaps))
    if name == "spen":
        d = s.spen.d_model
        return NoisySPEN(SPENConfig(vocab_size=t.vocab_size, n_layer=s.n_layer, d_model=d, d_ff=4 * d,
                                    d_bottleneck=max(1, d // 2), alphas=tuple(s.spen.alphas), block_size=block), sigma)
    if name == "transformer":
        d = s.transformer.d_model
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


def curriculum_steps(s: Settings, gaps: Sequence[int]) -> int:
    """Steps before a run may stop as flat: the curriculum, then a patience window wholly on the task."""
    c, w = s.curriculum, s.stop.patience * s.stop.check_every  # in the delay phase the loss is the lookup's
    return max(c.delay_steps if s.delay else 0, c.gap_every * (len(gaps) - 1)) + w


def chance(s: Settings, gaps: Sequence[int] | None = None) -> float:
    """The stopping rule's chance loss (nats): the loss of the best answer that ignores the keys on the
    validation sequences, averaged over ``gaps`` (default ``s.gaps``; :func:`keys_ignored_loss`)."""
    t = task(s)
    return sum(keys_ignored_loss(t, sample_update(t, d, s.val_sequences, VAL_SEED + d)) for d in gaps or s.gaps) \
        / len(gaps or s.gaps)


def train_arm(model, s: Settings, recipe: Arm, gaps: Sequence[int], seed: int, cap: int | None = None):
    """Train ``model`` on fresh sequences of ``gaps`` with ``recipe`` and :class:`Curriculum` until the
    stopping rule ``s.stop`` stops it (:func:`paper_lib.train.train_until_flat`; held out: as many
    fixed sequences as ``s.val_sequences`` per gap of the task, spread over ``gaps``, at the task's
    delay, so the calibration's one gap is held out as finely as the task; chance: the loss of the best
    answer that ignores the keys on them, :func:`chance`, about 1.48 nats where ``ln n_values`` is 2.08:
    a run that has learned the values but not the keys is still on its plateau).

    Returns:
        the model (best held-out weights, eval mode), the learning curve (rows ``step, lr,
        train_loss, gap, val_accuracy``) and the :class:`~paper_lib.stopping.Stopper` (``reason``, ``steps``).
    """
    t, gaps = task(s), sorted(int(d) for d in gaps)
    first = replace(t, delay=0)
    steps, per_gap = cap or recipe.max_steps, s.val_sequences * len(s.gaps) // len(gaps)
    cfg = TrainConfig(steps=steps, batch_size=recipe.batch_size, seq_len=t.length(max(gaps)), lr=recipe.lr,
                      min_lr_frac=recipe.min_lr_frac, warmup_steps=min(recipe.warmup_steps, steps - 1),
                      weight_decay=recipe.weight_decay, grad_clip=1.0, betas=(0.9, 0.98), seed=seed)
    gen = torch.Generator().manual_seed(1_000 * seed + 1)
    val = {d: sample_update(t, d, per_gap, VAL_SEED + d) for d in gaps}
    c = s.curriculum

    def step_loss(step: int) -> torch.Tensor:
        ready = gaps[: 1 + (step - 1) // c.gap_every] if c.gap_every else gaps
        d = ready[int(torch.randint(len(ready), (1,), generator=gen))]
        b = sample_update(first if step <= c.delay_steps else t, d, recipe.batch_size, gen)
        return F.cross_entropy(model(b.inputs), b.targets[:, -1])

    blind = sum(keys_ignored_loss(t, b) for b in val.values()) / len(val)          # :func:`chance` on this set
    stopper = Stopper(s.stop, steps, blind, per_gap * len(gaps), min_steps=curriculum_steps(s, gaps))
    torch.manual_seed(seed)
    rows = train_until_flat(model, step_loss, lambda: {str(d): a for d, a in accuracy(model, val, VAL_SEED).items()},
                            cfg, stopper)
    curve = [{"step": r["step"], "lr": r["lr"], "train_loss": r["train_loss"], "gap": d, "val_accuracy": r[str(d)]}
             for r in rows for d in gaps]
    return model, curve, stopper


def test_batches(s: Settings, gaps: Sequence[int] | None = None) -> dict:
    """The test sequences of every gap (``s.test_sequences`` each, seeded ``TEST_SEED + gap``)."""
    return {d: sample_update(task(s), d, s.test_sequences, TEST_SEED + d) for d in gaps or s.gaps}


def _job(s: Settings, kind: str, name: str, sigma: float, seed: int) -> dict:
    """:func:`_run_job`, each row stamped with the job's CPU seconds (``cpu_s``: what each arm costs)."""
    t0 = time.process_time()
    out = _run_job(s, kind, name, sigma, seed)
    cpu = time.process_time() - t0
    return {"rows": [{**r, "cpu_s": cpu} for r in out["rows"]], "curve": out["curve"]}


def _run_job(s: Settings, kind: str, name: str, sigma: float, seed: int) -> dict:
    """One unit of work, module-level for the worker processes: ``kind`` ``"model"`` (train a model
    on every gap), ``"calibration"`` (gap 2 alone, noise 0, capped at ``s.calibration_steps``),
    ``"oracle"`` (fit the paper bank's oracle), ``"bound"`` (``seed`` is the gap) or ``"family"`` (the
    family's best bank at gap ``seed``). Returns ``{"rows": [...], "curve": [...]}``."""
    t = task(s)
    if kind == "bound":
        gap, a = seed, s.spen.alphas
        top = update_bound(t, gap, a, sigma, s.bound_samples, seed=TEST_SEED + gap)
        dense = update_bound(t, gap, a, dense_sigma(sigma, t.vocab_size), s.bound_samples, seed=TEST_SEED + gap)
        bayes = 1.0 if sigma == 0 else bayes_accuracy(*_bayes_draws(s, gap, sigma))
        return {"rows": [{"sigma": sigma, "gap": gap, "bound": top["acc"], "bound_se": top["se"],
                          "dense_bound": dense["acc"], "dense_se": dense["se"], "bayes": bayes}], "curve": []}
    if kind == "family":
        f = s.family
        banks = bank_family.family(s.d_state, t.vocab_size, f.lo, f.hi, f.grid)
        table = bank_family.search(t, [seed], sigma, banks, f.draws, TEST_SEED)
        best = bank_family.best_banks(table, t, sigma, f.top, f.top_draws, f.final_draws, 2 * TEST_SEED)
        return {"rows": best.assign(sigma=sigma, banks=len(banks)).to_dict("records"),
                "curve": table.assign(sigma=sigma).to_dict("records")}
    if kind == "oracle":
        model, curve, info = fit_update_oracle(t, s.gaps, s.spen.alphas, sigma, s.oracle, seed=seed,
                                               rule=s.oracle_stop)
        acc = oracle_accuracy(model, t, s.gaps, s.spen.alphas, sigma, s.test_sequences, TEST_SEED)
        rows = [{"model": ORACLE, "sigma": sigma, "seed": seed, "gap": d, "accuracy": a, "steps": info["steps"],
                 "stop": info["stop"]} for d, a in acc.items()]
        return {"rows": rows, "curve": [{**r, "model": ORACLE, "sigma": sigma, "seed": seed} for r in curve]}
    gaps = (min(s.gaps),) if kind == "calibration" else tuple(s.gaps)
    model = build(name, s, sigma, seed)
    model, curve, stop = train_arm(model, s, arm(name, s), gaps, seed,
                                   cap=s.calibration_steps if kind == "calibration" else None)
    acc = accuracy(model, test_batches(s, gaps), TEST_SEED)
    rows = [{"model": name, "sigma": sigma, "seed": seed, "gap": d, "accuracy": a, "steps": int(stop.steps[0]),
             "stop": stop.reason, "parameters": count_params(model)} for d, a in acc.items()]
    return {"rows": rows, "curve": [{**r, "model": name, "sigma": sigma, "seed": seed} for r in curve]}


def _bayes_draws(s: Settings, gap: int, sigma: float) -> tuple:
    """``(y, batch, task, mu, var)`` for :func:`paper_lib.bounds.update_bound.bayes_accuracy`: the query
    blocks of ``s.bayes_samples`` test-seeded sequences drawn from the model."""
    b = sample_update(task(s), gap, s.bayes_samples, TEST_SEED + gap)
    y, mu, var = analytic_block(b, task(s), s.spen.alphas, sigma, torch.Generator().manual_seed(TEST_SEED))
    return y, b, task(s), mu, var


RUN_COST = {"gru": 180, "lti_scan": 140, "scan": 110, "spen": 80, "transformer": 180, ORACLE: 20, "bound": 1,
            "family": 45, "calibration": 35}  # CPU seconds of a job at cpu, about (`cpu_s`); only the order matters


def jobs(s: Settings) -> list[tuple]:
    """Every ``(kind, name, sigma, seed)`` of the notebook: the models and the oracle at the headline
    sigma on ``s.seeds`` and at the other sigmas on ``s.panel_seeds``, the bounds at every sigma and
    gap, the family's best bank at the headline sigma and every gap, and the calibration runs (gap 2,
    noise 0, seed 0)."""
    out = []
    for sigma in s.sigmas:
        head = sigma == s.sigma
        seeds, models = (s.seeds, s.models) if head else (s.panel_seeds, s.panel_models)
        out += [("model", m, sigma, seed) for m in models for seed in seeds]
        out += [("oracle", ORACLE, sigma, seed) for seed in seeds]
        out += [("bound", "bound", sigma, d) for d in s.gaps]
    out += [("family", "family", s.sigma, d) for d in s.gaps]
    out += [("calibration", m, 0.0, 0) for m in s.models]
    return out


def _cost(job: tuple) -> float:
    kind, name = job[1], job[2]                                        # (s, kind, name, sigma, seed)
    return RUN_COST[kind] if kind in ("calibration", "family") else RUN_COST.get(name, RUN_COST["bound"])


def run_all(s: Settings, progress=None) -> dict[str, pd.DataFrame]:
    """Run :func:`jobs` in ``s.workers`` processes (costliest first); every job seeds itself, so the
    numbers do not depend on the workers. Returns ``{"results", "curves", "bounds", "family",
    "family_search", "calibration", "calibration_curves"}`` DataFrames (accuracies are fractions)."""
    todo = jobs(s)
    done = parallel_map(_job, [(s, *j) for j in todo], workers=s.workers, progress=progress is not None,
                        bar=progress, cost=_cost)
    keys = {"bound": ("bounds", None), "family": ("family", "family_search"),
            "calibration": ("calibration", "calibration_curves")}
    out: dict[str, list] = {k: [] for k in ("results", "curves", "bounds", "family", "family_search", "calibration",
                                            "calibration_curves")}
    for (kind, *_), r in zip(todo, done, strict=True):
        rows, curve = keys.get(kind, ("results", "curves"))
        out[rows] += r["rows"]
        if curve:
            out[curve] += r["curve"]
    return {k: pd.DataFrame(v) for k, v in out.items()}


def baselines(s: Settings) -> pd.DataFrame:
    """The exact baselines on the test sequences: rows ``gap, any_value, keys_ignored``."""
    t = task(s)
    return pd.DataFrame([{"gap": d, "any_value": any_value_baseline(b), "keys_ignored": keys_ignored_baseline(t, b)}
                         for d, b in test_batches(s).items()])


def budget_table(s: Settings) -> pd.DataFrame:
    """Parameters and the state each model carries from token to token (in words and in numbers per
    sequence, :func:`state_size`), and each arm's recipe."""
    t = task(s)
    words = {ORACLE: f"{len(s.spen.alphas)} fixed traces x {t.vocab_size} one-hot codes, noisy",
             "scan": f"{s.d_state} channels, input-dependent decay, noisy",
             "lti_scan": f"{s.d_state} channels, learned constant decay, noisy",
             "gru": f"{s.d_state} gated numbers, noisy",
             "spen": f"{s.n_layer} blocks x {len(s.spen.alphas)} fixed traces x {s.spen.d_model}, noisy",
             "transformer": "keys and values of every earlier token (noisy), counted at the longest gap"}
    rows = []
    for name in (ORACLE,) + tuple(s.models):
        if name == ORACLE:
            n_feat = len(s.spen.alphas) * t.vocab_size + t.n_values * len(s.spen.alphas) + t.n_keys + len(s.gaps)
            n, recipe = count_params(UpdateOracle(n_feat, t.n_values, s.oracle.hidden)), s.oracle
        else:
            with torch.device("meta"):
                n = count_params(build(name, s, s.sigma))
            recipe = arm(name, s)
        rows.append({"model": UPDATE_STATES[name], "parameters": n, "state": words[name],
                     "state numbers": state_size(name, s), "peak learning rate": f"{recipe.lr:g}",
                     "step cap": recipe.max_steps, "batch": recipe.batch_size})
    return pd.DataFrame(rows)


def state_sizes(s: Settings) -> dict[str, int]:
    """:func:`state_size` of the paper bank's oracle and every model of ``s.models``."""
    return {name: state_size(name, s) for name in (ORACLE,) + tuple(s.models)}
