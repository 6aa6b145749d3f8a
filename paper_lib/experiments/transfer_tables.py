"""Aggregation, verdicts and figures of notebook 02 (transfer A -> B, structure versus content,
depth and dependency length, lag decodability, timescales, learning rules); used only by it.

Inputs are the per-token tables of :func:`paper_lib.experiments.transfer.run_seed` (one row per
held-out token: seed, grammar, word, role, kind, depth, dep_distance, dep_bin, function_word and
a boolean ``ok_<readout>`` per readout). Every comparison between two models is paired over
seeds (:func:`paired_verdict`). Our design: the paper gives no CIs and no such breakdowns.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..data.grammar import ROLE_KIND, ROLES
from ..pipeline.plots import legend_below, legend_outside, mark_paper, stamp
from ..pipeline.stats import format_mean_ci, mean_ci95

GRAMMAR_NOTES = {"A": " (held out)", "B": " (unseen content words)", "A_hard": " (no pronoun marks depth)",
                 "B_hard": " (hard, unseen content words)"}
VERDICT = {"a > b": "first > second", "a < b": "second > first", "tie": "tie"}


def group_accuracy(tokens: pd.DataFrame, readouts, by) -> pd.DataFrame:
    """Token accuracy per seed within groups: one row per (seed, *by, readout) with
    ``accuracy`` (fraction of the group's tokens) and ``n`` (tokens).

    Raises:
        ValueError: a readout without its ``ok_<readout>`` column.
    """
    by = [by] if isinstance(by, str) else list(by)
    missing = [r for r in readouts if f"ok_{r}" not in tokens]
    if missing:
        raise ValueError(f"no token column for readouts {missing}; have {[c[3:] for c in tokens if c.startswith('ok_')]}")
    long = tokens.melt(id_vars=["seed", *by], value_vars=[f"ok_{r}" for r in readouts],
                       var_name="readout", value_name="ok")
    long["readout"] = long["readout"].str[3:]
    long = long.dropna(subset=["ok"])                      # a readout not run on that grammar
    long["ok"] = long["ok"].astype(float)
    return long.groupby(["seed", *by, "readout"], observed=True)["ok"].agg(accuracy="mean", n="size").reset_index()


def paired_verdict(a, b) -> dict[str, Any]:
    """Compare per-seed values ``a`` and ``b`` (same seeds, same order) by their paired
    difference ``a - b``.

    Returns:
        ``{"diff": mean of a - b, "ci95": its 95% CI half-width, "n": seeds, "verdict"}``;
        ``verdict`` is ``"a > b"`` or ``"a < b"`` when the CI excludes 0, else ``"tie"``
        (also for a single seed, whose CI is undefined). Our design: the paper gives no CIs.

    Raises:
        ValueError: different lengths or no values.
    """
    a, b = np.asarray(list(a), float), np.asarray(list(b), float)
    if a.shape != b.shape or a.size == 0:
        raise ValueError(f"a and b must be non-empty and the same length, got {a.size} and {b.size}")
    s = mean_ci95(a - b)
    ci = s["ci95"]
    verdict = "tie" if not np.isfinite(ci) or abs(s["mean"]) <= ci else ("a > b" if s["mean"] > 0 else "a < b")
    return {"diff": s["mean"], "ci95": ci, "n": s["n"], "verdict": verdict}


def seeds_of(acc: pd.DataFrame, readout: str, **where) -> list[float]:
    """Per-seed accuracies (seed order) of ``readout`` in the group ``where`` (e.g. grammar="B", kind="structural")."""
    d = acc[acc.readout == readout]
    for k, v in where.items():
        d = d[d[k] == v]
    return d.sort_values("seed").accuracy.tolist()


def comparison_table(acc: pd.DataFrame, pairs: Sequence[tuple[str, str, str]], groups: Sequence[Mapping]) -> pd.DataFrame:
    """One row per (comparison, group): both models' ``mean ± CI``, their paired difference and a verdict.

    Args:
        acc: :func:`group_accuracy` output. pairs: ``(label, readout a, readout b)``.
        groups: dicts selecting the group (e.g. ``{"grammar": "B", "kind": "structural"}``).
    """
    rows = []
    for label, a, b in pairs:
        for g in groups:
            sa, sb = seeds_of(acc, a, **g), seeds_of(acc, b, **g)
            if not sa or not sb:
                continue
            v = paired_verdict(sa, sb)
            rows.append({"comparison": label, **g, "first": a, "first_acc": format_mean_ci(sa), "second": b,
                         "second_acc": format_mean_ci(sb), "difference": f"{v['diff']:+.3f} ± {v['ci95']:.3f}",
                         "verdict": {"a > b": f"{a} > {b}", "a < b": f"{b} > {a}", "tie": "tie"}[v["verdict"]]
                         if v["n"] > 1 else "undetermined (n=1)"})
    return pd.DataFrame(rows)


def group_table(acc: pd.DataFrame, by: str, readouts: Sequence[str], names: Mapping[str, str]) -> pd.DataFrame:
    """Mean accuracy over seeds per (grammar, group) and readout, readouts as columns (plain names)."""
    d = acc[acc.readout.isin(readouts)].groupby(["grammar", by, "readout"]).accuracy.mean().unstack()
    return d[[r for r in readouts if r in d]].rename(columns=names)


def plot_per_role(role_acc: pd.DataFrame, labels: Mapping[str, str], grammars: Sequence[str], profile: str, n_seeds: int):
    """Bars per role (one panel per grammar, in rows), one hue per readout; one legend under the panels."""
    fig, axes = plt.subplots(len(grammars), 1, figsize=(10.5, 3.8 * len(grammars) + 1), sharex=True, squeeze=False)
    n_struct = sum(ROLE_KIND[r] == "structural" for r in ROLES)
    for ax, g in zip(axes[:, 0], grammars, strict=True):
        d = role_acc[(role_acc.grammar == g) & role_acc.readout.isin(labels)].assign(model=lambda f: f.readout.map(labels))
        sns.barplot(data=d, x="role", y="accuracy", hue="model", hue_order=list(labels.values()), order=list(ROLES),
                    errorbar=("ci", 95), n_boot=200, seed=0, ax=ax)
        ax.axvline(n_struct - 0.5, color="k", ls=":", lw=1)
        ax.text(n_struct / 2, 1.05, "structural roles", ha="center", va="center")
        ax.text(n_struct + (len(ROLES) - n_struct) / 2, 1.05, "lexical roles", ha="center", va="center")
        ax.set_ylim(0, 1.1)
        ax.set_ylabel("accuracy (fraction of\nthe role's tokens)")
        ax.set_title(f"Grammar {g}" + (" (unseen content words; trained on A)" if g.startswith("B") else " (held out)"))
    axes[-1, 0].set_xlabel("role")
    axes[-1, 0].tick_params(axis="x", rotation=60)
    fig.suptitle("Per-role accuracy, within Grammar A and on Grammar B")
    stamp(fig, profile, n_seeds, errorbars="95% CI over seeds")
    legend_below(fig, axes[0, 0], ncol=2)
    return fig


def plot_by_group(acc: pd.DataFrame, by: str, labels: Mapping[str, str], grammars: Sequence[str], profile: str,
                  n_seeds: int, xlabel: str, order=None, paper_deep: float | None = None):
    """Accuracy per group (depth or dependency bin), one panel per grammar, two panels a row (four
    in one row were 3,583 px wide); one legend under the panels. ``paper_deep`` draws the paper's
    deep-embedded value as a labelled mark over depths >= 2 only."""
    n_cols = min(2, len(grammars))
    n_rows = -(-len(grammars) // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(10.5, 3.6 * n_rows + 1.4), sharey=True, squeeze=False)
    for ax in axes.flat[len(grammars):]:
        ax.set_visible(False)
    for ax, g in zip(axes.flat, grammars, strict=False):
        d = acc[(acc.grammar == g) & acc.readout.isin(labels)].assign(model=lambda f: f.readout.map(labels))
        xs = order if order is not None else sorted(d[by].unique())
        xs = [x for x in xs if x in set(d[by])]
        sns.pointplot(data=d, x=by, y="accuracy", hue="model", hue_order=list(labels.values()), order=xs,
                      errorbar=("ci", 95), n_boot=200, seed=0, ax=ax, dodge=0.3)
        if paper_deep is not None and g == "A":
            deep = [i for i, x in enumerate(xs) if x >= 2]
            if deep:
                ax.hlines(paper_deep, deep[0] - 0.3, deep[-1] + 0.3, colors="0.2", linestyles="--", lw=1.2)
                ax.annotate(f"paper: SPCN, depth >= 2: {paper_deep:g}", xy=(deep[0] - 0.3, paper_deep), xytext=(0, -12),
                            textcoords="offset points", fontsize=8, color="0.2")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("accuracy (fraction of\nthe group's tokens)")
        ax.set_title(f"Grammar {g}" + GRAMMAR_NOTES.get(g, ""))
        if max(len(str(x)) for x in xs) > 3:  # a depth's single digits stay upright
            ax.tick_params(axis="x", rotation=20)
        ax.yaxis.set_tick_params(labelleft=True)
    fig.suptitle(f"Role accuracy by {xlabel}, per grammar")
    stamp(fig, profile, n_seeds, errorbars="95% CI over seeds")
    legend_below(fig, axes.flat[0], ncol=2)
    return fig


def plot_lag(lag: pd.DataFrame, profile: str, sigma: float | None = None):
    """Lag-decodability curves, identity and role panels, mean and 95% CI over seeds: each EMA rate alone
    in blues, the whole bank in black, the GRU dashed red, the bank's closed-form decoder (identity only) green,
    and the same decoder on the bank without noise dotted olive; ``sigma``: the states' noise per number per
    step, named in the title."""
    states = list(dict.fromkeys(lag.state))
    fixed = {"EMA bank (all alphas)": "black", "GRU language model": "tab:red",
             "EMA bank, closed-form decoder": "tab:green",
             "EMA bank without noise, closed-form decoder": "tab:olive"}
    rates = [st for st in states if st not in fixed]
    colors = dict(zip(rates, sns.color_palette("Blues", len(rates) + 1)[1:], strict=True)) | fixed
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 5.8), sharex=True)
    for ax, target in zip(axes, ["identity", "role"], strict=True):
        d = lag[lag.target == target]
        for st in states:
            m = d[d.state == st].groupby("lag").accuracy.agg(["mean", "std", "count"])
            if m.empty:
                continue
            half = 1.96 * m["std"].fillna(0) / np.sqrt(m["count"])
            bold = st in fixed
            style = "--" if st.startswith("GRU") else ":" if "without noise" in st else "-"
            ax.plot(m.index, m["mean"], style, color=colors[st], lw=2.5 if bold else 1.3,
                    marker="o", ms=3, label=f"{st} ({int(d[d.state == st].width.iloc[0])} dims)")
            ax.fill_between(m.index, m["mean"] - half, m["mean"] + half, color=colors[st], alpha=0.15)
        ax.axhline(d.chance.mean(), color="gray", ls=":", lw=1, label="chance (most frequent class)")
        ax.set_xlabel("lag k (tokens back from the current one)")
        ax.set_ylabel(f"held-out accuracy of the {target} at t - k")
        ax.set_title("which word was at t - k?" if target == "identity" else "which role was at t - k?")
        ax.set_ylim(0, 1.02)
    noise = "" if sigma is None else f"\nevery state with noise {sigma:g} per number per step"
    fig.suptitle("What a fixed-decay EMA trace bank keeps about the past,\nagainst a learned GRU state of the same "
                 f"width{noise}\n(linear probes; the bank's closed-form decoder in green, without noise dotted)")
    stamp(fig, profile, lag.seed.nunique(), errorbars="95% CI over seeds")
    legend_below(fig, axes[0], ncol=2)
    return fig


def plot_oracle_convergence(history: pd.DataFrame, labels: Mapping[str, str], profile: str):
    """The lag oracle's convergence curves: per lag (columns), the loss on fresh batches (top, nats per
    position, log scale) and the held-out accuracy (bottom) against the fresh documents read, one line per
    (state, seed); a line that ends before the last step stopped on a plateau."""
    lags = sorted(history.lag.unique())
    colors = dict(zip(labels, ["black", "tab:red", "tab:gray"], strict=False))
    fig, axes = plt.subplots(2, len(lags), figsize=(min(3.2 * len(lags) + 0.8, 10.4), 6.4), sharex=True, squeeze=False)
    for j, k in enumerate(lags):
        for (state, seed), d in history[history.lag == k].groupby(["state", "seed"]):
            kw = {"color": colors.get(state, "tab:blue"), "lw": 1.2, "alpha": 0.8}
            first = seed == history.seed.min()
            axes[0, j].plot(d.documents, d.train_loss, label=labels.get(state, state) if first else None, **kw)
            axes[1, j].plot(d.documents, d.val_acc, **kw)
        axes[0, j].set_yscale("log")
        axes[0, j].set_title(f"the word {k} back")
        axes[1, j].set_xlabel("fresh documents read")
        axes[1, j].set_ylim(0, 1.02)
    axes[0, 0].set_ylabel("loss on fresh batches\n(nats per position)")
    axes[1, 0].set_ylabel("held-out accuracy")
    fig.suptitle("The lag oracle fed fresh documents: does its loss go flat?")
    stamp(fig, profile, history.seed.nunique(), note="one line per seed")
    legend_below(fig, axes[0, -1], ncol=3)
    return fig


def lag_summary(lag: pd.DataFrame, bank: str, gru: str, frac: float = 0.5) -> dict[str, Any]:
    """Mean curves ``L[state][target][k]``, chance per target, the largest lag keeping ``frac`` of the
    k = 0 decodability above chance (``half``), and the share from chance to perfect (``norm``)."""
    L = lag.groupby(["state", "target", "lag"]).accuracy.mean()
    chance = lag.groupby("target").chance.mean()

    def keep(state, target):
        c = L[state][target]
        return int(c[c >= chance[target] + frac * (c.loc[0] - chance[target])].index.max())

    norm = {(s, t, k): float((L[s][t].loc[k] - chance[t]) / (1 - chance[t])) for s in (bank, gru)
            for t in ("identity", "role") for k in L[s][t].index}
    return {"L": L, "chance": chance, "half": {(s, t): keep(s, t) for s in (bank, gru) for t in ("identity", "role")},
            "norm": norm}


def timescale_table(ts: pd.DataFrame) -> pd.DataFrame:
    """One row per alpha subset: accuracy on A and B as ``mean ± CI (n)``, sorted by size then accuracy on A."""
    rows = []
    for (alphas, n), d in ts.groupby(["alphas", "n_alphas"], sort=False):
        rows.append({"alphas": alphas, "n_alphas": int(n), "acc_A": float(d.acc_A.mean()), "A": format_mean_ci(d.acc_A),
                     "B": format_mean_ci(d.acc_B), "seeds": int(d.seed.nunique())})
    return pd.DataFrame(rows).sort_values(["n_alphas", "acc_A"], ascending=[True, False]).reset_index(drop=True)


def plot_timescales(ts: pd.DataFrame, order: Sequence[str], profile: str):
    """Bars of accuracy on A and B per alpha subset (adapts to the alphas chosen)."""
    tl = ts.melt(id_vars=["seed", "alphas", "n_alphas"], value_vars=["acc_A", "acc_B"], var_name="test", value_name="accuracy")
    tl["test"] = tl["test"].map({"acc_A": "held-out A", "acc_B": "B (transfer)"})
    fig, ax = plt.subplots(figsize=(min(max(6, 1.2 * len(order)), 8) + 1.5, 4.2))  # legend outside: <= 1600 px
    sns.barplot(data=tl, x="alphas", y="accuracy", hue="test", order=list(order), errorbar=("ci", 95), n_boot=200,
                seed=0, ax=ax)
    mark_paper(ax, 0.618, "paper: transfer 0.618")
    ax.set_xlabel("EMA rates alpha in SPCN's trace bank")
    ax.set_ylabel("role accuracy (fraction of tokens)")
    ax.set_title("SPCN role accuracy by timescales (linear probe)")
    ax.set_ylim(0, 1)
    ax.tick_params(axis="x", rotation=20 if len(order) <= 7 else 45)
    legend_outside(ax)
    stamp(fig, profile, ts.seed.nunique(), errorbars="95% CI over seeds")
    fig.tight_layout()
    return fig


def rule_table(per_seed: pd.DataFrame, rules: Sequence[str]) -> pd.DataFrame:
    """Accuracy per learning rule and grammar, and its paired difference from no learning."""
    rows = []
    for rule in rules:
        for g in "AB":
            a = per_seed[f"spcn_rule_{rule}_acc_{g}"]
            v = paired_verdict(a, per_seed[f"spcn_rule_none_acc_{g}"]) if "none" in rules and rule != "none" else None
            rows.append({"rule": rule, "grammar": g, "accuracy": format_mean_ci(a),
                         "minus_none": f"{v['diff']:+.3f} ± {v['ci95']:.3f}" if v else "",
                         "verdict": ("tie with none" if v["verdict"] == "tie" else "differs from none") if v else "",
                         "diff": v["diff"] if v else 0.0})
    return pd.DataFrame(rows)



def plot_by_number(acc: pd.DataFrame, x: str, labels: Mapping[str, str], profile: str, n_seeds: int, *, xlabel: str,
                   ylabel: str, title: str, chance: float | Mapping[Any, float], chance_label: str,
                   paper: tuple[float, str] | None = None):
    """Accuracy (mean and 95% CI over seeds) against a count ``x`` (attractors, lag), one line per reader.

    ``acc``: one row per (seed, ``x``, readout) with ``accuracy`` (:func:`group_accuracy`, or rows with
    ``reader`` instead of ``readout``). ``chance``: one level, or one per ``x`` (drawn as steps).
    ``paper``: ``(value, label)`` drawn as a dashed line.
    """
    d = acc.rename(columns={"reader": "readout"})
    d = d[d.readout.isin(labels)].assign(model=lambda f: f.readout.map(labels))
    xs = sorted(d[x].unique())
    fig, ax = plt.subplots(figsize=(9, 4.6))
    sns.pointplot(data=d, x=x, y="accuracy", hue="model", hue_order=[v for k, v in labels.items() if k in set(d.readout)],
                  order=xs, errorbar=("ci", 95), n_boot=200, seed=0, ax=ax, dodge=0.25)
    if "n" in d:                                            # items per seed under each group: few items, wide CIs
        per = d.groupby(x).n.mean()
        ax.set_xticks(range(len(xs)), [f"{v}\n({per[v]:.0f})" for v in xs])
        xlabel += " (items per seed)"
    if isinstance(chance, Mapping):
        ax.plot(range(len(xs)), [chance[v] for v in xs], ":", color="gray", drawstyle="steps-mid", label=chance_label)
    else:
        ax.axhline(chance, color="gray", ls=":", lw=1.2, label=chance_label)
    if paper is not None:
        mark_paper(ax, paper[0], paper[1], legend=True)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    legend_outside(ax)
    stamp(fig, profile, n_seeds, errorbars="95% CI over seeds")
    fig.tight_layout()
    return fig
