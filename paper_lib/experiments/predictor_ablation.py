"""The predictor ablation experiment of notebook 04: every predictor trained the same way.

The paper swaps the reader of SPEN's traces (linear, linear attention, softmax attention),
finds one loss (about 7.60 nats) and concludes that the traces, not the reader, are the
bottleneck (the paper's predictor ablation, Experiment 2). Here every predictor of
:mod:`paper_lib.predictors` (the paper's three and our three controls) and the
matched Transformer are trained by notebook 03's recipe (:func:`paper_lib.lm_recipe.run_lm`)
on notebook 03's token streams (:func:`paper_lib.data.lm_data.prepare_data`,
:class:`paper_lib.lm_recipe.LMSettings`), with the same seeds, steps and batches, at one parameter
budget (within ``budget_tol``, checked before anything trains), beside the unigram and
Kneser-Ney bigram lines counted on the same training tokens (:mod:`paper_lib.ngram`).

An ablation in which readers that can and cannot see the past tie has no power; its verdict
(:data:`paper_lib.claims.lm.CLAIMS`, claim ``ablation``) is "not informative" unless a reader that sees past tokens beats
the trace-bounded readers with confidence intervals apart. Sizes and budget are ours (the
paper gives neither); they live in the ``predictor_ablation`` section of
:mod:`paper_lib.profile_settings`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch

from ..lm_recipe import Evaluation, LMSettings, build_lm, configure_lm, run_lm
from ..models.lm import count_params
from ..models.spen import SPEN
from ..ngram import reference_losses
from ..pipeline.parallel import parallel_map
from ..pipeline.stats import format_mean_ci
from ..predictors import ABLATION_PREDICTORS, CONTROL_PREDICTORS, PAPER_PREDICTORS, PREDICTORS, build_predictor
from ..train import TrainConfig

PAPER_LOSS_NATS = 7.60
"""The paper's ablation loss, the same for its three predictors (nats)."""


def _ablation_train() -> TrainConfig:
    """Notebook 03's cpu training at 450 steps (every model; at 300 the Transformer ended 0.9 nat
    past unigram, short of the 1.0 the claim needs)."""
    return TrainConfig(steps=450, batch_size=16, seq_len=128, lr=2e-3, warmup_steps=30, log_every=10)


@dataclass
class Settings(LMSettings):
    """Notebook 04's settings: notebook 03's recipe (:class:`paper_lib.lm_recipe.LMSettings`: same
    corpus, tokenizer, sizes) at the ablation's own budget, plus the models to compare.
    Defaults are the ``cpu`` profile's: 6 predictors and the Transformer, ~1.3M parameters each.
    ``spen.predictor`` is not used: each SPEN of the ablation takes its reader from ``predictors``."""

    train: TrainConfig = field(default_factory=_ablation_train)
    predictors: tuple[str, ...] = ABLATION_PREDICTORS  # the paper's three, then our three controls
    with_transformer: bool = True        # also train the matched Transformer (same budget and tokens)
    budget_tol: float = 0.05             # max relative parameter difference to SPEN-linear (fraction)
    workers: int = 2                     # models trained at once (worker processes, one thread each)
    eval_tokens: int = 16384             # tokens of each evaluation text


def settings_for(profile: str = "cpu", overrides: Mapping[str, Any] | None = None) -> Settings:
    """Notebook 04's settings at ``profile`` with a reader's ``overrides`` applied.

    Raises:
        ValueError: unknown profile, an unknown setting, no predictors, or an unknown predictor.
    """
    s = configure_lm(Settings(), "predictor_ablation", profile, overrides)
    if not s.predictors:
        raise ValueError("the ablation lists no predictors; allowed: " + ", ".join(sorted(PREDICTORS)))
    unknown = sorted(set(s.predictors) - set(PREDICTORS))
    if unknown:
        raise ValueError(f"unknown predictor(s) {', '.join(unknown)}; registered: {', '.join(sorted(PREDICTORS))}")
    return s


def model_names(settings: Settings) -> list[str]:
    """The predictors of ``settings`` and, when ``settings.with_transformer``, ``"transformer"``."""
    return list(settings.predictors) + (["transformer"] if settings.with_transformer else [])


def _build(name: str, settings: Settings, vocab_size: int, seed: int = 0):
    if name == "transformer":
        return build_lm("transformer", settings, vocab_size, seed)
    return build_lm("spen", settings, vocab_size, seed, predictor=name)


def budget_table(settings: Settings, vocab_size: int) -> pd.DataFrame:
    """Parameters of every model of the ablation and their difference to SPEN-linear.

    Returns:
        columns ``model, parameters, predictor_parameters, vs_linear`` (relative difference
        of the whole model's parameters, a fraction).

    Raises:
        ValueError: a model lies more than ``settings.budget_tol`` from
        SPEN with the linear predictor.
    """
    tol = settings.budget_tol
    rows = []
    for name in ["linear"] + [n for n in model_names(settings) if n != "linear"]:
        with torch.device("meta"):
            model = _build(name, settings, vocab_size)
        pred = (sum(p.numel() for p in model.blocks[0].predictor.parameters()) * len(model.blocks)
                if name != "transformer" else None)
        rows.append({"model": name, "parameters": count_params(model), "predictor_parameters": pred})
    df = pd.DataFrame(rows)
    ref = df.loc[df.model == "linear", "parameters"].item()
    df["vs_linear"] = (df.parameters - ref) / ref
    worst = df.loc[df.vs_linear.abs().idxmax()]
    if abs(worst.vs_linear) > tol:
        raise ValueError(f"model {worst.model!r} has {worst.parameters} parameters, {worst.vs_linear:+.1%} from "
                         f"SPEN-linear's {ref} (allowed: {tol:.0%})")
    return df


def run_one(name: str, settings: Settings, data: dict, seed: int, progress: bool = True) -> dict:
    """Train and evaluate one model of the ablation (a predictor name or ``"transformer"``).

    Returns:
        ``{"model", "seed", "params", "val_loss", "val_ppl", "ood_loss", "repeat_loss",
        "first_loss", "train_tokens_per_s", "induction_score", "in_context_score", "history"}``
        (scores: :mod:`paper_lib.in_context`, nats); losses in nats per token on the
        held-out text (``repeat``/``first``: targets that did / did not already occur earlier
        in the same document within the window, :func:`paper_lib.evaluate.evaluate`).
    """
    kind = "transformer" if name == "transformer" else "spen"
    r = run_lm(kind, settings, data, seed, Evaluation(induction=True), predictor=None if kind == "transformer" else name,
               progress=progress)
    rep = r["val"]["repeat"]
    tl = r["val"]["token_loss"]
    return {"model": name, "seed": seed, "params": r["params"], "val_loss": r["val"]["loss"],
            "val_ppl": r["val"]["ppl"], "ood_loss": r["ood"]["loss"],
            "repeat_loss": float(tl[rep].mean()) if rep.any() else float("nan"),
            "first_loss": float(tl[~rep].mean()) if (~rep).any() else float("nan"),
            "train_tokens_per_s": r["train_tokens_per_s"], "induction_score": r["induction"]["induction_score"],
            "in_context_score": r["in_context"], "history": r["history"]}


def run_ablation(settings: Settings, data: dict, seeds, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every model of the ablation for every seed (same tokens for all models of one seed), run
    ``settings.workers`` at a time in worker processes (:func:`paper_lib.pipeline.parallel.parallel_map`;
    each run seeds itself, so the losses do not depend on the number of workers; per-run training
    bars only with one worker).

    Returns:
        ``(per_seed, curves)``: one row per (model, seed) with :func:`run_one`'s numbers, and
        the training-loss log (``model, seed, step, tokens, loss`` in nats).
    """
    jobs = [(name, settings, data, seed, progress and settings.workers == 1)
            for seed in seeds for name in model_names(settings)]
    rows, curves = [], []
    for r in parallel_map(run_one, jobs, workers=settings.workers, desc="runs (model x seed)", progress=progress):
        curves.append(r.pop("history").assign(model=r["model"], seed=r["seed"]))
        rows.append(r)
    return pd.DataFrame(rows), pd.concat(curves, ignore_index=True)


def reference_lines(data: dict, settings: Settings) -> dict:
    """Unigram and Kneser-Ney bigram loss (nats/token) of the held-out text, counted on the
    training stream, on the windows every model is scored on (:func:`paper_lib.ngram.reference_losses`)."""
    return reference_losses(data["train"], data["val"], data["tokenizer"].get_vocab_size(), settings.train.seq_len,
                            settings.eval_tokens)


def group_of(name: str) -> str:
    """``paper (bounded by the traces)``, ``control (beyond the paper)`` or ``matched Transformer``."""
    return ("paper (bounded by the traces)" if name in PAPER_PREDICTORS else
            "control (beyond the paper)" if name in CONTROL_PREDICTORS else "matched Transformer")


def ablation_table(per_seed: pd.DataFrame, refs: dict | None = None) -> pd.DataFrame:
    """Table 4: held-out loss (nats) and perplexity per model, mean ± 95% CI over seeds (n),
    how far below the unigram line, the paper's 7.60 nats beside its three predictors, and
    the reference lines as rows."""
    rows = []
    for name in per_seed.model.unique():
        d = per_seed[per_seed.model == name].sort_values("seed")
        rows.append({"model": name, "group": group_of(name), "parameters": f"{int(d.params.iloc[0]):,}",
                     "loss (nats)": format_mean_ci(d.val_loss), "perplexity": format_mean_ci(d.val_ppl, 1),
                     "below unigram (nats)": format_mean_ci(refs["unigram"] - d.val_loss) if refs else "",
                     "loss, repeated tokens": format_mean_ci(d.repeat_loss),
                     "loss, first occurrences": format_mean_ci(d.first_loss),
                     "paper loss (nats)": f"{PAPER_LOSS_NATS:.2f}" if name in PAPER_PREDICTORS else ""})
    for ref in ("unigram", "bigram") if refs else ():
        rows.append({"model": f"{ref} reference (counted)", "group": "reference line",
                     "loss (nats)": f"{refs[ref]:.3f}", "perplexity": f"{np.exp(refs[ref]):.1f}"})
    return pd.DataFrame(rows).fillna("")


def per_seed_values(per_seed: pd.DataFrame, name: str, col: str = "val_loss") -> np.ndarray:
    """``col`` of model ``name``, one value per seed, in seed order."""
    return per_seed[per_seed.model == name].sort_values("seed")[col].to_numpy(dtype=float)


def ablation_metrics(per_seed: pd.DataFrame, refs: dict | None = None) -> dict[str, list[float]]:
    """Per-seed metrics for ``metrics.json``.

    ``loss_<model>`` and ``ppl_<model>`` (held-out, nats and perplexity) and ``induction_<model>``
    (the induction score, nats; the report's gate reads the Transformer's) for every model;
    ``bounded_spread``: (max - min) / mean of the paper's three losses (a fraction; the paper:
    0). With a Transformer: ``gap_transformer_nats`` = loss_linear - loss_transformer (nats;
    > 0 when the Transformer is better) and, only when that gap is positive for every seed,
    ``gap_closed_<control>`` = (loss_linear - loss_control) / (loss_linear - loss_transformer),
    the fraction of the gap a control closes (1 = as good as the Transformer). With ``refs``:
    ``unigram_val_loss``, ``bigram_val_loss`` and ``min_past_unigram_nats`` (per seed, the
    smallest unigram - loss over all models; >= 1.0 is the issue's target).
    """
    names = list(per_seed.model.unique())
    m = {f"loss_{n}": per_seed_values(per_seed, n).tolist() for n in names}
    m.update({f"ppl_{n}": per_seed_values(per_seed, n, "val_ppl").tolist() for n in names})
    if "induction_score" in per_seed:
        m.update({f"induction_{n}": per_seed_values(per_seed, n, "induction_score").tolist() for n in names})
    bounded = [n for n in PAPER_PREDICTORS if n in names]
    if len(bounded) >= 2:
        b = np.stack([per_seed_values(per_seed, n) for n in bounded])   # (predictors, seeds)
        m["bounded_spread"] = ((b.max(0) - b.min(0)) / b.mean(0)).tolist()
    if "transformer" in names and "linear" in names:
        gap = per_seed_values(per_seed, "linear") - per_seed_values(per_seed, "transformer")
        m["gap_transformer_nats"] = gap.tolist()
        for n in names if (gap > 0).all() else []:
            if n in CONTROL_PREDICTORS:
                m[f"gap_closed_{n}"] = ((per_seed_values(per_seed, "linear") - per_seed_values(per_seed, n)) / gap).tolist()
    if refs:
        m["unigram_val_loss"] = [refs["unigram"]]
        m["bigram_val_loss"] = [refs["bigram"]]
        worst = np.max(np.stack([per_seed_values(per_seed, n) for n in names]), axis=0)
        m["min_past_unigram_nats"] = (refs["unigram"] - worst).tolist()
    return m


# --------------------------------------------------------------------------- the budget, per predictor

def spen_param_count(config, predictor: str) -> int:
    """Parameters of a whole SPEN with ``predictor`` (built on the meta device: no memory, fast)."""
    with torch.device("meta"):
        return SPEN(replace(config, predictor=predictor)).num_params()


def predictor_param_count(config, predictor: str) -> int:
    """Parameters of one ``predictor`` for ``config`` (meta device)."""
    with torch.device("meta"):
        return sum(p.numel() for p in build_predictor(predictor, config).parameters())


def check_param_budget(config, predictors=ABLATION_PREDICTORS, tol: float = 0.05) -> dict[str, int]:
    """Whole-model parameters of a SPEN per predictor; all must lie within ``tol`` of ``linear``'s.

    Returns:
        ``{predictor: parameters}``.

    Raises:
        ValueError: a predictor's model differs from the linear one's by more than ``tol``
        (relative), naming it and both counts.
    """
    ref = spen_param_count(config, "linear")
    counts = {name: spen_param_count(config, name) for name in predictors}
    for name, n in counts.items():
        if abs(n - ref) > tol * ref:
            raise ValueError(f"SPEN with predictor {name!r} has {n} parameters, {abs(n - ref) / ref:.1%} "
                             f"away from linear's {ref} (allowed: {tol:.0%})")
    return counts
