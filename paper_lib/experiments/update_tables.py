"""Notebook 07's tables and prose, written from the numbers (:mod:`paper_lib.experiments.update_recall`
runs the models, the oracle and the bounds, and writes the budget table). ``s`` is that module's ``Settings``. Our design."""
from __future__ import annotations

import pandas as pd

from ..claims.update import ORACLE, UPDATE_KEPT, UPDATE_SOLVED, UPDATE_STATES
from ..pipeline.stats import format_mean_ci, mean_ci95

STATES: tuple[str, ...] = tuple(UPDATE_STATES)
"""Every state of the figure, in its legend's order."""


def _acc(results: pd.DataFrame, name: str, sigma: float, gap: int) -> list[float]:
    r = results[(results.model == name) & (results.sigma == sigma) & (results.gap == gap)]
    return r.sort_values("seed").accuracy.astype(float).tolist()


def mean_by_gap(results: pd.DataFrame, name: str, sigma: float, gaps) -> tuple[list[float], list[float]]:
    """Mean and 95% CI over seeds (0 with one seed) of state ``name`` at each gap (NaN where not run)."""
    stats = [mean_ci95(_acc(results, name, sigma, d)) if _acc(results, name, sigma, d) else None for d in gaps]
    return ([st["mean"] if st else float("nan") for st in stats],
            [st["ci95"] if st and st["n"] > 1 else 0.0 for st in stats])


def summary_table(results: pd.DataFrame, bounds: pd.DataFrame, base: pd.DataFrame, s, sigma: float) -> pd.DataFrame:
    """Accuracy per state (rows) and gap (columns, ``mean ± 95% CI (n)``) at ``sigma``, then the fixed
    bank's Bayes bound, its Bayes reader, the dense-code bound and the two baselines."""
    cols = [f"gap {d}" for d in s.gaps]
    rows = [{"state": UPDATE_STATES[m], **{c: format_mean_ci(_acc(results, m, sigma, d)) for c, d in zip(cols, s.gaps,
                                                                                                     strict=True)}}
            for m in STATES if len(results[(results.model == m) & (results.sigma == sigma)])]
    b = bounds[bounds.sigma == sigma].set_index("gap")
    for label, col in (("Bayes bound of the fixed bank (upper)", "bound"), ("Bayes reader of the fixed bank", "bayes"),
                       ("Bayes bound, dense orthogonal code", "dense_bound")):
        rows.append({"state": label, **{c: f"{b.loc[d, col]:.3f}" for c, d in zip(cols, s.gaps, strict=True)}})
    base = base.set_index("gap")
    rows.append({"state": "any-bound-value baseline", **{c: f"{base.loc[d, 'any_value']:.3f}"
                                                          for c, d in zip(cols, s.gaps, strict=True)}})
    rows.append({"state": "keys-ignored baseline", **{c: f"{base.loc[d, 'keys_ignored']:.3f}"
                                                       for c, d in zip(cols, s.gaps, strict=True)}})
    return pd.DataFrame(rows)


def agreement_table(results: pd.DataFrame, bounds: pd.DataFrame, s) -> pd.DataFrame:
    """Per sigma and gap: the oracle (mean over its seeds), the Bayes reader, the Bayes bound, the
    oracle's distance below the bound, and the share of its fits that were flat there."""
    o = results[results.model == ORACLE].groupby(["sigma", "gap"]).agg(oracle=("accuracy", "mean"),
                                                                          flat=("converged", "mean"),
                                                                          fits=("seed", "count"))
    t = bounds.set_index(["sigma", "gap"])[["bayes", "bound", "bound_se"]].join(o, how="inner").reset_index()
    return t.assign(below_bound=t.bound - t.oracle)


def agreement_paragraph(table: pd.DataFrame, tol: float = 0.03) -> str:
    """Where the oracle meets the bound (within ``tol``), where not, and whether its fit was flat there."""
    meet = table[table.below_bound <= tol]
    miss = table[table.below_bound > tol]
    text = (f"The oracle is within {tol:g} of the Bayes bound at {len(meet)} of {len(table)} (noise, gap) cells. "
            "The Bayes reader, told nothing beyond the bank, is within "
            f"{(table.bound - table.bayes).abs().max():.3f} of the bound everywhere it was computed, so the best reader "
            "of the fixed bank is pinned between the two. ")
    if len(miss):
        flat = miss[miss.flat >= 1]
        text += ("It falls short at " + ", ".join(f"noise {r.sigma:g}, gap {r.gap} ({r.oracle:.2f} against {r.bound:.2f}"
                                                  f"{', flat' if r.flat >= 1 else ', still improving'})"
                                                  for r in miss.itertuples()) + ". ")
        if len(flat):
            text += ("Where its fit is flat and it still falls short, the MLP's own capacity or optimisation is the limit "
                     "(at noise 0 the bound is 1 exactly: telling slots apart needs the traces' last digits, which an MLP "
                     "on standardised inputs does not resolve); there the bound, not the oracle, is the fixed bank's number.")
    return text


def calibration_table(calibration: pd.DataFrame) -> pd.DataFrame:
    """The calibration runs (gap 2, one seed): test accuracy, steps run, why each stopped."""
    c = calibration.assign(state=calibration.model.map(UPDATE_STATES))
    return c[["state", "accuracy", "steps", "stop"]].reset_index(drop=True)


def calibration_paragraph(calibration: pd.DataFrame) -> str:
    """Which arms learn the task at the smallest gap (>= the bar of :data:`UPDATE_KEPT`; the
    Transformer's bar :data:`UPDATE_SOLVED`)."""
    parts, fails = [], []
    for r in calibration.itertuples():
        bar = UPDATE_SOLVED if r.model == "transformer" else UPDATE_KEPT
        parts.append(f"{UPDATE_STATES[r.model]} {r.accuracy:.3f} after {r.steps} steps ({r.stop})")
        if r.accuracy < bar:
            fails.append(UPDATE_STATES[r.model])
    text = f"At gap {int(calibration.gap.min())}: " + "; ".join(parts) + ". "
    if fails:
        return text + ("**Not every arm learns the task at the smallest gap within the calibration's steps:** "
                       + ", ".join(fails) + " stay(s) below the bar, so a failure of theirs at longer gaps may be the "
                       "recipe's, not the state's.")
    return text + "Every arm learns the task at the smallest gap, so a failure at longer gaps is not the arm's inability to learn it."
