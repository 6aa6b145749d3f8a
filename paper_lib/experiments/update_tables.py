"""Notebook 07's tables and prose, written from the numbers (:mod:`paper_lib.experiments.update_recall`
runs the models, the oracle and the bounds, and writes the budget table). ``s`` is that module's ``Settings``. Our design."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from ..claims.update import ORACLE, UPDATE_KEPT, UPDATE_SOLVED, UPDATE_STATES
from ..pipeline.stats import format_mean_ci, mean_ci95
from ..stopping import STOP_WORDS, cut_metrics

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


def summary_table(runs, base: pd.DataFrame, s, sigma: float) -> pd.DataFrame:
    """Accuracy per state (rows) and gap (columns, ``mean ± 95% CI (n)``) at ``sigma``, then the best
    fixed-decay bank of the family (at the headline noise), the paper bank's Bayes bound, its Bayes
    reader, the dense-code bound and the two baselines."""
    results, bounds, fam = runs["results"], runs["bounds"], runs["family"]
    cols = [f"gap {d}" for d in s.gaps]

    def row(label, values):
        return {"state": label, **dict(zip(cols, values, strict=True))}

    rows = [row(UPDATE_STATES[m], [format_mean_ci(_acc(results, m, sigma, d)) for d in s.gaps])
            for m in STATES if len(results[(results.model == m) & (results.sigma == sigma)])]
    f = fam[fam.sigma == sigma].set_index("gap")
    if len(f):
        rows.append(row("best fixed-decay bank of the family: Bayes bound", [f"{f.loc[d, 'acc']:.3f}" for d in s.gaps]))
    b = bounds[bounds.sigma == sigma].set_index("gap")
    for label, col in (("the paper's one-hot bank: Bayes bound", "bound"), ("the paper's one-hot bank: Bayes reader",
                                                                           "bayes"),
                       ("the paper's rates, dense code: Bayes bound", "dense_bound")):
        rows.append(row(label, [f"{b.loc[d, col]:.3f}" for d in s.gaps]))
    base = base.set_index("gap")
    rows.append(row("any-bound-value baseline", [f"{base.loc[d, 'any_value']:.3f}" for d in s.gaps]))
    rows.append(row("keys-ignored baseline", [f"{base.loc[d, 'keys_ignored']:.3f}" for d in s.gaps]))
    return pd.DataFrame(rows)


def family_table(family: pd.DataFrame) -> pd.DataFrame:
    """The family's best bank at every gap: the bank in words, its bound (Monte-Carlo standard error) on
    fresh draws, and what the search had measured."""
    return pd.DataFrame({"gap": family.gap, "best fixed-decay bank": family.bank,
                         "Bayes bound": [f"{a:.3f} ± {1.96 * e:.3f}"
                                         for a, e in zip(family.acc, family.se, strict=True)],
                         "in the search": family.search_acc.map("{:.3f}".format), "banks searched": family.banks})


def stop_table(results: pd.DataFrame, sigma: float) -> pd.DataFrame:
    """Why each run stopped, and when (state rows, seed columns), at ``sigma``."""
    r = results[results.sigma == sigma].drop_duplicates(["model", "seed"])
    cells = r.assign(state=r.model.map(UPDATE_STATES),
                     why=[f"{STOP_WORDS[w]} at {n:,}" for w, n in zip(r.stop, r.steps, strict=True)])
    out = cells.pivot(index="state", columns="seed", values="why").reindex([UPDATE_STATES[m] for m in STATES if m in
                                                                            set(r.model)])
    return out.rename(columns=lambda c: f"seed {c}").reset_index()


def agreement_table(results: pd.DataFrame, bounds: pd.DataFrame) -> pd.DataFrame:
    """Per sigma and gap: the paper bank's oracle (mean over its seeds), its Bayes reader and bound,
    the oracle's distance below the bound, and the share of its fits that stopped flat or solved."""
    o = results[results.model == ORACLE].assign(flat=lambda d: d.stop.isin(("flat", "solved")).astype(float))
    o = o.groupby(["sigma", "gap"]).agg(oracle=("accuracy", "mean"), flat=("flat", "mean"), fits=("seed", "count"))
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
                                                  f"{', flat' if r.flat >= 1 else ', cut'})"
                                                  for r in miss.itertuples()) + ". ")
        if len(flat):
            text += ("Where its fit is flat and it still falls short, the MLP's own capacity or optimisation is the limit "
                     "(at noise 0 the bound is 1 exactly: telling slots apart needs the traces' last digits, which an MLP "
                     "on standardised inputs does not resolve); there the bound, not the oracle, is the fixed bank's number.")
    return text


def calibration_table(calibration: pd.DataFrame) -> pd.DataFrame:
    """The calibration runs (gap 2 alone, noise 0, one seed): test accuracy, steps run, why each stopped,
    and whether it learned (left the chance loss)."""
    c = calibration.assign(state=calibration.model.map(UPDATE_STATES),
                           accuracy=calibration.accuracy.map("{:.3f}".format),
                           learned=[("did not learn" if w == "never_left_plateau" else "learned")
                                    for w in calibration.stop],
                           stopped=[f"{STOP_WORDS[w]} at {n:,}" for w, n in zip(calibration.stop, calibration.steps,
                                                                                strict=True)])
    return c[["state", "accuracy", "learned", "stopped"]].reset_index(drop=True)


def calibration_paragraph(calibration: pd.DataFrame) -> str:
    """Which arms learn the task at the smallest gap without noise (leave the chance loss and reach the
    bar of :data:`UPDATE_KEPT`; the Transformer's bar :data:`UPDATE_SOLVED`)."""
    fails = [UPDATE_STATES[r.model] for r in calibration.itertuples() if r.stop == "never_left_plateau"
             or r.accuracy < (UPDATE_SOLVED if r.model == "transformer" else UPDATE_KEPT)]
    text = f"At gap {int(calibration.gap.min())} without noise (the table above). "
    if fails:
        return text + (f"**{', '.join(fails)} did not learn the task where it is easiest**, so a failure of "
                       f"{'theirs' if len(fails) > 1 else 'its'} at longer gaps is the recipe's, not the state's; the "
                       "rule reads no arm whose calibration failed.")
    return text + ("Every arm learns the task where it is easiest, so a failure at longer gaps is not the arm's "
                   "inability to learn it.")


def update_metrics(runs: Mapping[str, pd.DataFrame], base: pd.DataFrame, s, states: Mapping[str, int],
                   sigma: float | None = None) -> dict[str, list[float]]:
    """``metrics.json``'s numbers at ``sigma`` (default the headline) from :func:`run_all`'s frames: per
    seed ``update_acc_<state>_<gap>`` and ``update_cut_<state>_improving`` / ``_plateau`` (1 where a
    seed was cut: :func:`paper_lib.stopping.cut_metrics`); one number each: the paper bank's
    ``update_bound_<gap>``, ``update_bound_dense_<gap>``, ``update_bayes_<gap>``; the family's
    ``update_bound_best_fixed_<gap>`` with the best bank's ``update_best_fixed_fastest_<gap>``,
    ``_slowest_<gap>``, ``_groups_<gap>`` and ``update_bound_family_size``; the calibration's
    ``update_calib_acc_<state>`` and ``update_calib_learned_<state>`` (1 where it left the chance loss);
    ``update_baseline_any_<gap>``, ``update_baseline_keys`` (pooled over the gaps), ``update_state_<state>``
    (``states``: numbers per sequence, :func:`paper_lib.experiments.update_recall.state_sizes`) and ``update_sigma``."""
    sigma = s.sigma if sigma is None else sigma
    r = runs["results"][runs["results"].sigma == sigma]
    m: dict[str, list[float]] = {}
    for (name, d), g in r.groupby(["model", "gap"]):
        m[f"update_acc_{name}_{d}"] = g.sort_values("seed").accuracy.astype(float).tolist()
    for name, g in r.drop_duplicates(["model", "seed"]).groupby("model"):
        m.update(cut_metrics(f"update_cut_{name}_", g.sort_values("seed").stop.tolist()))
    for row in runs["bounds"][runs["bounds"].sigma == sigma].itertuples():
        m[f"update_bound_{row.gap}"], m[f"update_bound_dense_{row.gap}"] = [row.bound], [row.dense_bound]
        m[f"update_bayes_{row.gap}"] = [row.bayes]
    fam = runs["family"]
    for row in fam[fam.sigma == sigma].itertuples():
        m[f"update_bound_best_fixed_{row.gap}"] = [row.acc]
        m[f"update_best_fixed_fastest_{row.gap}"] = [max(row.rates)]
        m[f"update_best_fixed_slowest_{row.gap}"] = [min(row.rates)]
        m[f"update_best_fixed_groups_{row.gap}"] = [float(len(row.rates))]
        m["update_bound_family_size"] = [float(row.banks)]
    if sigma == s.sigma:
        for row in runs["calibration"].itertuples():
            m[f"update_calib_acc_{row.model}"] = [row.accuracy]
            m[f"update_calib_learned_{row.model}"] = [float(row.stop != "never_left_plateau")]
    for row in base.itertuples():
        m[f"update_baseline_any_{row.gap}"] = [row.any_value]
    m["update_baseline_keys"] = [float(base.keys_ignored.mean())]
    for name, n in states.items():
        m[f"update_state_{name}"] = [float(n)]
    m["update_sigma"] = [float(sigma)]
    return m
