"""The predictor ablation experiment of notebook 04: every predictor trained the same way.

The paper swaps the reader of SPEN's traces (linear, linear attention, softmax attention),
finds one loss (about 7.60 nats) and concludes that the traces, not the reader, are the
bottleneck (the paper's predictor ablation, Experiment 2). Here every predictor of
:mod:`paper_lib.ablation_predictors` (the paper's three and our three controls) and the
matched Transformer are trained by notebook 03's code (:func:`paper_lib.train.train_and_evaluate`)
on notebook 03's token streams (:func:`paper_lib.train.prepare_data` with the ``spen``
section), with the same seeds, steps and batches, at one parameter budget (within
``budget_tol``, checked before anything trains). Sizes and budget are ours (the paper gives
neither); they live in the ``ablation`` section of :mod:`paper_lib.profiles`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import ablation_predictors as ap
from .stats import mean_ci95
from .train import build_model, count_params, model_sizes, sizes_for, train_and_evaluate

PAPER_LOSS_NATS = 7.60
"""The paper's ablation loss, the same for its three predictors (nats)."""


def ablation_settings(sections: dict) -> dict:
    """The settings of one ablation run: the ``spen`` section (corpus, tokenizer, data sizes)
    overridden by the ``ablation`` section (models, budget, seeds).

    Args:
        sections: a profile, as from :func:`paper_lib.profiles.get_profile`.

    Raises:
        ValueError: the ``ablation`` section is empty or names an unknown predictor.
    """
    spen, abl = sections["spen"], sections["ablation"]
    if not abl.get("predictors"):
        raise ValueError("the profile's 'ablation' section lists no predictors")
    unknown = sorted(set(abl["predictors"]) - set(ap.PREDICTORS))
    if unknown:
        raise ValueError(f"unknown predictor(s) {unknown}; registered: {', '.join(sorted(ap.PREDICTORS))}")
    return {**spen, **abl}


def model_names(settings: dict) -> list[str]:
    """The predictors of ``settings`` and, when ``settings["transformer"]``, ``"transformer"``."""
    return list(settings["predictors"]) + (["transformer"] if settings.get("transformer") else [])


def _build(name: str, settings: dict, vocab_size: int, seed: int = 0):
    kind = "transformer" if name == "transformer" else "spen"
    sizes = sizes_for(kind, model_sizes({**settings, "predictor": name}, vocab_size))
    return build_model(kind, seed=seed, **sizes)


def budget_table(settings: dict, vocab_size: int) -> pd.DataFrame:
    """Parameters of every model of the ablation and their difference to SPEN-linear.

    Returns:
        columns ``model, parameters, predictor_parameters, vs_linear`` (relative difference
        of the whole model's parameters, a fraction).

    Raises:
        ValueError: a model lies more than ``settings["budget_tol"]`` (default 0.05) from
        SPEN with the linear predictor.
    """
    import torch

    tol = settings.get("budget_tol", 0.05)
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


def run_one(name: str, settings: dict, data: dict, seed: int, progress: bool = True) -> dict:
    """Train and evaluate one model of the ablation (a predictor name or ``"transformer"``).

    Returns:
        ``{"model", "seed", "params", "val_loss", "val_ppl", "ood_loss", "repeat_loss",
        "first_loss", "train_tokens_per_s", "history"}``; losses in nats per token on the
        held-out text (``repeat``/``first``: targets that did / did not already occur earlier
        in the same document within the window, :func:`paper_lib.train.evaluate`).
    """
    kind = "transformer" if name == "transformer" else "spen"
    r = train_and_evaluate(kind, {**settings, "predictor": name}, data, seed, progress=progress,
                           desc=f"{name} seed {seed}")
    rep = r["val"]["repeat"]
    tl = r["val"]["token_loss"]
    return {"model": name, "seed": seed, "params": r["params"], "val_loss": r["val"]["loss"],
            "val_ppl": r["val"]["ppl"], "ood_loss": r["ood"]["loss"],
            "repeat_loss": float(tl[rep].mean()) if rep.any() else float("nan"),
            "first_loss": float(tl[~rep].mean()) if (~rep).any() else float("nan"),
            "train_tokens_per_s": r["train_tokens_per_s"], "history": r["history"]}


def run_ablation(settings: dict, data: dict, seeds, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every model of the ablation for every seed (same tokens for all models of one seed).

    Returns:
        ``(per_seed, curves)``: one row per (model, seed) with :func:`run_one`'s numbers, and
        the training-loss log (``model, seed, step, tokens, loss`` in nats).
    """
    rows, curves = [], []
    for seed in seeds:
        for name in model_names(settings):
            r = run_one(name, settings, data, seed, progress)
            curves.append(r.pop("history").assign(model=name, seed=seed))
            rows.append(r)
    return pd.DataFrame(rows), pd.concat(curves, ignore_index=True)


def _fmt(values, digits: int = 3) -> str:
    s = mean_ci95(list(values))
    return f"{s['mean']:.{digits}f}" + ("" if s["n"] < 2 else f" ± {s['ci95']:.{digits}f}")


def ablation_table(per_seed: pd.DataFrame) -> pd.DataFrame:
    """Table 4: held-out loss (nats) and perplexity per model, mean ± 95% CI over seeds,
    with the paper's 7.60 nats beside its three predictors."""
    rows = []
    for name in per_seed.model.unique():
        d = per_seed[per_seed.model == name].sort_values("seed")
        group = ("paper (bounded by the traces)" if name in ap.PAPER_PREDICTORS else
                 "control (beyond the paper)" if name in ap.CONTROL_PREDICTORS else "matched Transformer")
        rows.append({"model": name, "group": group, "parameters": int(d.params.iloc[0]),
                     "loss (nats)": _fmt(d.val_loss), "perplexity": _fmt(d.val_ppl, 1),
                     "loss, repeated tokens": _fmt(d.repeat_loss), "loss, first occurrences": _fmt(d.first_loss),
                     "paper loss (nats)": PAPER_LOSS_NATS if name in ap.PAPER_PREDICTORS else None})
    return pd.DataFrame(rows)


def per_seed_values(per_seed: pd.DataFrame, name: str, col: str = "val_loss") -> np.ndarray:
    """``col`` of model ``name``, one value per seed, in seed order."""
    return per_seed[per_seed.model == name].sort_values("seed")[col].to_numpy(dtype=float)


def ablation_metrics(per_seed: pd.DataFrame) -> dict[str, list[float]]:
    """Per-seed metrics for ``metrics.json``.

    ``loss_<model>`` and ``ppl_<model>`` (held-out, nats and perplexity) for every model;
    ``bounded_spread``: (max - min) / mean of the paper's three losses (a fraction; the paper:
    0). With a Transformer: ``gap_transformer_nats`` = loss_linear - loss_transformer (nats;
    > 0 when the Transformer is better) and, only when that gap is positive for every seed,
    ``gap_closed_<control>`` = (loss_linear - loss_control) / (loss_linear - loss_transformer),
    the fraction of the gap a control closes (1 = as good as the Transformer).
    """
    names = list(per_seed.model.unique())
    m = {f"loss_{n}": per_seed_values(per_seed, n).tolist() for n in names}
    m.update({f"ppl_{n}": per_seed_values(per_seed, n, "val_ppl").tolist() for n in names})
    bounded = [n for n in ap.PAPER_PREDICTORS if n in names]
    if len(bounded) >= 2:
        b = np.stack([per_seed_values(per_seed, n) for n in bounded])   # (predictors, seeds)
        m["bounded_spread"] = ((b.max(0) - b.min(0)) / b.mean(0)).tolist()
    if "transformer" in names and "linear" in names:
        gap = per_seed_values(per_seed, "linear") - per_seed_values(per_seed, "transformer")
        m["gap_transformer_nats"] = gap.tolist()
        for n in names if (gap > 0).all() else []:
            if n in ap.CONTROL_PREDICTORS:
                m[f"gap_closed_{n}"] = ((per_seed_values(per_seed, "linear") - per_seed_values(per_seed, n)) / gap).tolist()
    return m
