"""Notebook 05's tables and prose: the summary table and one paragraph per panel, written from
the numbers (:mod:`paper_lib.experiments.associative_recall` trains and scores the models).

``s`` is notebook 05's ``Settings``; the functions read its fields only. Our design: the paper
has no recall experiment.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from ..claims.recall import (
    MODEL_WORDS,
    RECALL_CAPACITY,
    RECALL_FAR_BELOW,
    RECALL_SOLVED,
    above_chance,
    below_chance,
    changes,
    far_below,
    recall_capacity,
    recall_solved,
)
from ..pipeline.stats import format_mean_ci, mean_ci95
from ..predictors import CONTROL_PREDICTORS, PAPER_PREDICTORS
from ..stopping import STOP_WORDS

PAPER_MODELS: tuple[str, ...] = tuple(f"spen_{p}" for p in PAPER_PREDICTORS)
"""SPEN with the paper's readers of the trace bank."""
CONTROL_SUFFIXES: tuple[str, ...] = CONTROL_PREDICTORS
"""Name endings of SPEN with our controls."""


def _acc(df: pd.DataFrame, model: str, **where) -> dict:
    d = df[df.model == model]
    for k, v in where.items():
        d = d[d[k] == v]
    return mean_ci95(d.sort_values("seed").accuracy.astype(float)) if len(d) else {"mean": float("nan"), "ci95": 0.0, "n": 0}


def summary_table(by_pairs: pd.DataFrame, n_pairs: Sequence[int]) -> pd.DataFrame:
    """Accuracy per model (rows) and pair count (columns), ``mean ± 95% CI (n)`` over seeds."""
    rows = [{"model": m, **{f"N = {n}": format_mean_ci(by_pairs[(by_pairs.model == m) & (by_pairs.n_pairs == n)]
                                                       .accuracy.astype(float).tolist()) for n in n_pairs}}
            for m in dict.fromkeys(by_pairs.model)]
    return pd.DataFrame(rows)


def stop_table(by_pairs: pd.DataFrame) -> pd.DataFrame:
    """Why each run stopped and after how many steps: models (rows, in words) by width and seed (columns)."""
    r = by_pairs.drop_duplicates(["model", "d_model", "seed"])
    r = r.assign(model=r.model.map(lambda m: MODEL_WORDS.get(m, m)), column=[f"width {d}, seed {sd}" for d, sd in
                                                                          zip(r.d_model, r.seed, strict=True)],
                 why=[f"{STOP_WORDS[w]} at {n:,}" for w, n in zip(r.stop, r.steps, strict=True)])
    return r.pivot(index="model", columns="column", values="why").reset_index()


def pairs_paragraph(by_pairs: pd.DataFrame, s, informative: bool) -> str:
    """Panel 1's reading for the paper's claim, written from the numbers."""
    lo, hi = min(s.n_pairs), max(s.n_pairs)
    d = by_pairs[by_pairs.d_model == s.d_model]
    acc = {m: (_acc(d, m, n_pairs=lo)["mean"], _acc(d, m, n_pairs=hi)["mean"]) for m in s.models}
    parts = [f"`{m}` {a:.2f} -> {b:.2f}" for m, (a, b) in acc.items()]
    text = f"Accuracy from N = {lo} to N = {hi} (mean over seeds): " + "; ".join(parts) + ". "
    if not informative:
        return text + (f"**The Transformer does not solve the task at the hardest setting (< {RECALL_SOLVED:g}), so this panel "
                       "cannot test the claim:** a failure of SPEN here may be the recipe's, not the traces'.")
    spen = [m for m in PAPER_MODELS if m in acc]
    falls = [m for m in spen if far_below(acc[m][1], acc["transformer"][1])]
    text += (f"The Transformer holds {acc['transformer'][1]:.2f} at N = {hi}. ")
    if spen and len(falls) == len(spen):
        drop = [m for m in spen if changes(acc[m][1], acc[m][0])]
        text += ("Every SPEN that reads only the current trace bank ends far below it, as the paper's claim predicts"
                 + (f"; {', '.join(f'`{m}`' for m in drop)} fall(s) with N (a finite capacity)" if drop else "")
                 + (f"; {', '.join(f'`{m}`' for m in spen if m not in drop)} stay(s) flat near chance from N = {lo} on: "
                    "at this budget it never binds a key to its value at all, which is stronger than the claim "
                    "and also consistent with slow learning" if len(drop) < len(spen) else "") + ". ")
    elif spen:
        keep = [m for m in spen if m not in falls]
        text += (f"**Against the claim:** {', '.join(f'`{m}`' for m in keep)} stay(s) within {RECALL_FAR_BELOW:g} of the Transformer at "
                 f"N = {hi}: a 2-layer SPEN can bind a key to its value nonlinearly in block 1 (the fast trace holds "
                 "the key when the value arrives) before the slow traces sum the pairs. ")
    ctrl = [m for m in acc if m.endswith(CONTROL_SUFFIXES)]
    if ctrl:
        text += "Controls that see more than the bank: " + ", ".join(
            f"`{m}` {acc[m][1]:.2f}" for m in ctrl) + f" at N = {hi}"
        text += (f"; the GRU (a learned gate, state of {len(s.spen.alphas)} x {s.d_model} numbers per block, equal to "
                 f"SPEN's traces) {acc['gru'][1]:.2f}." if "gru" in acc else ".")
    if "oracle" in acc:
        text += (f" The trace oracle (the best reader we fit of one fixed bank of width {s.d_model}) scores "
                 f"{acc['oracle'][0]:.2f} -> {acc['oracle'][1]:.2f}: what it recovers, the traces hold.")
    return text


def width_paragraph(by_width: pd.DataFrame, s) -> str:
    """Panel 2's reading: does recall grow with the state (finite capacity) or stay flat (no binding)?"""
    ws = sorted(by_width.d_model.unique())
    parts = []
    for m in s.width_models:
        a, b = _acc(by_width, m, d_model=ws[0])["mean"], _acc(by_width, m, d_model=ws[-1])["mean"]
        verdict = "rises with width (a finite capacity)" if changes(a, b) else "does not rise with width"
        parts.append(f"`{m}` {a:.2f} at width {ws[0]} -> {b:.2f} at width {ws[-1]}: {verdict}")
    return (f"At N = {s.width_n_pairs}: " + "; ".join(parts) + ". For SPEN, a wider trace bank that recalls more "
            "means the traces are lossy with a capacity that grows with `S x d_model`, not blind to identity; a "
            "flat line at chance would mean it cannot bind at all.")


POSITIVE_CONTROLS: tuple[str, ...] = ("transformer", "spen_token_attention")
"""The models that can look a key up by content: the retention panel's positive controls."""


def capacity_table(by_width: pd.DataFrame) -> pd.DataFrame:
    """The capacity panel (Zoology's figure): per model, width and seed, the largest ``N`` recalled
    at :data:`paper_lib.claims.recall.RECALL_CAPACITY` or more (0: none), against the state size.
    ``by_width``: rows ``model, n_pairs, d_model, seed, accuracy, state_size`` (every ``N`` tested).
    Returns ``model, state_size, n_star, seed, d_model`` sorted by model, state size and seed."""
    rows = [{"model": m, "state_size": int(g.state_size.iloc[0]),
             "n_star": recall_capacity(dict(zip(g.n_pairs, g.accuracy.astype(float), strict=True))),
             "seed": int(seed), "d_model": int(d)}
            for (m, d, seed), g in by_width.groupby(["model", "d_model", "seed"], sort=False)]
    return pd.DataFrame(rows).sort_values(["model", "state_size", "seed"]).reset_index(drop=True)


ATTENTION_MODELS: tuple[str, ...] = ("transformer", "spen_token_attention", "spen_history_attention")
"""Models that can look a key up among every earlier token: the capacity panel's ceiling."""


def capacity_informative(cap: pd.DataFrame, n_pairs: Sequence[int]) -> tuple[bool, str]:
    """Whether the capacity panel separates the models: an attention model (:data:`ATTENTION_MODELS`)
    recalls the largest ``N`` of the grid at every width it was run at (the ceiling), and some
    fixed-state model (every other one) recalls less than that at some width (its state, not the
    grid, sets its ``n_star``). ``cap``: :func:`capacity_table`'s rows. Returns ``(ok, why)``."""
    top = max(n_pairs)
    mean = cap.groupby(["model", "state_size"]).n_star.mean()
    ceiling = [m for m in ATTENTION_MODELS if m in mean.index.get_level_values(0) and (mean[m] >= top).all()]
    below = [m for m in dict.fromkeys(cap.model) if m not in ATTENTION_MODELS and (mean[m] < top).any()]
    if not ceiling:
        return False, f"no attention model recalls N = {top} at every width (no ceiling)"
    if not below:
        return False, f"every fixed-state model recalls N = {top} at every width (the grid saturates)"
    return True, ""


def capacity_paragraph(cap: pd.DataFrame, n_pairs: Sequence[int]) -> str:
    """The capacity panel's reading: how ``n_star`` moves with the state, per model, and whether the
    panel separates the models (:func:`capacity_informative`)."""
    top = max(n_pairs)
    parts = []
    for m, g in cap.groupby("model", sort=False):
        by = g.groupby("state_size").n_star.mean()
        shape = ("at the grid's edge at every state" if (by >= top).all() else
                 "grows with the state" if by.iloc[-1] > by.iloc[0] else "does not grow with the state")
        parts.append(f"`{m}` " + ", ".join(f"{v:g} at {int(k)} numbers" for k, v in by.items()) + f" ({shape})")
    text = (f"Largest `N` recalled at >= {RECALL_CAPACITY:g} (mean over seeds; 0: none of {list(n_pairs)}): "
            + "; ".join(parts) + ". ")
    ok, why = capacity_informative(cap, n_pairs)
    if not ok:
        return text + f"**Not informative:** {why}; the `paper` profile runs Zoology's grid."
    return text + (f"Attention recalls every `N` up to {top} at every width, while a fixed state recalls fewer where "
                   f"it is small: below the grid's edge, the state, not the grid, sets the capacity (a model at "
                   f"{top} everywhere may hold more than the grid asks).")


def _near_far(d: pd.DataFrame, horizon: float) -> tuple[float, float]:
    inside = (d.distance_lo + d.distance_hi) / 2 < horizon          # a bin belongs to the side of its midpoint

    def mean(x: pd.DataFrame) -> float:                              # accuracy over answers, not over bins
        return float((x.accuracy * x.answers).sum() / x.answers.sum()) if len(x) else float("nan")

    return mean(d[inside]), mean(d[~inside])


def retention_informative(by_distance: pd.DataFrame, s) -> tuple[bool, str]:
    """Whether the retention panel can be read: every positive control run (the Transformer,
    SPEN-token_attention) solves the task (:func:`paper_lib.claims.recall.recall_solved`) at
    every distance bin's side, near and beyond the slowest horizon. Returns ``(ok, why)``."""
    horizon = 1 / min(s.spen.alphas)
    failed = []
    for m in POSITIVE_CONTROLS:
        d = by_distance[by_distance.model == m]
        if len(d):
            near, far = _near_far(d, horizon)
            if not all(recall_solved(v) for v in (near, far) if v == v):
                failed.append(f"{m} {near:.2f} / " + (f"{far:.2f}" if far == far else "no answer"))
    if not any(m in set(by_distance.model) for m in POSITIVE_CONTROLS):
        return False, "no positive control was run"
    if failed:
        return False, "positive control(s) below " + f"{RECALL_SOLVED:g} (near / beyond the horizon): " + ", ".join(failed)
    return True, ""


def distance_paragraph(by_distance: pd.DataFrame, s, chance: float) -> str:
    """The retention panel's reading: does recall vanish beyond the slowest trace's horizon
    ``1 / min(alpha)``, with the gap filled by distractors?

    ``chance`` is the keys-ignored baseline at ``s.distance_n_pairs``. Says "not informative at this
    budget" when a positive control fails (:func:`retention_informative`), or, per model, when it
    is not above chance inside the horizon (:func:`~paper_lib.claims.recall.above_chance`: it never
    learned the task, so where its recall vanishes cannot be read)."""
    horizon = 1 / min(s.spen.alphas)
    near, far, parts = {}, {}, []
    for m in dict.fromkeys(by_distance.model):
        near[m], far[m] = _near_far(by_distance[by_distance.model == m], horizon)
        parts.append(f"`{m}`: {near[m]:.2f} at distances up to about {horizon:g} tokens, "
                     + (f"{far[m]:.2f} beyond" if far[m] == far[m] else "no answer beyond (gap too short)")
                     + (" (below chance)" if below_chance(near[m], chance) else ""))
    text = "; ".join(parts) + f" (keys-ignored baseline {chance:.2f}). "
    ok, why = retention_informative(by_distance, s)
    if not ok:
        return text + (f"**Not informative at this budget:** {why}, so the recipe ({s.distance_steps} steps, gaps of "
                       f"{s.distance_distractors} distractor ids) does not teach the task; nothing here says where "
                       "the traces forget.")
    unlearned = [m for m in near if m not in POSITIVE_CONTROLS and not above_chance(near[m], chance)]
    if unlearned:
        text += (f"**Not informative** for {', '.join(f'`{m}`' for m in unlearned)}: at or near the baseline even "
                 "inside the horizon, so it never learned the task and its curve cannot show where recall vanishes. ")
    return text + ("Where the oracle falls to the baseline beyond the slowest decay time, the fixed traces themselves "
                   "have lost the key (up to the oracle's own capacity); where it survives and SPEN does not, the "
                   "key is there and SPEN does not read it.")
