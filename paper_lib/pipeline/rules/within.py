"""Rules the notebooks' prose reads (paired differences, recall and gap thresholds), so no sentence
states a verdict of its own."""
from __future__ import annotations

import math
from typing import Iterable, Mapping

# --------------------------------------------------------------------------- paired and within-notebook rules

def paired_difference(diffs: Iterable[float]) -> tuple[str, str]:
    """Per-seed differences ``a - b`` -> ``("gain" | "loss" | "no difference" | "undetermined", text)``.

    A gain (loss) when the 95% CI of the mean difference lies above (below) 0; undetermined with
    fewer than 2 seeds. ``text``: ``"+0.012 ± 0.004 (n=5): a gain"`` and the like.
    """
    from ..stats import format_mean_ci, mean_ci95

    s = mean_ci95(list(diffs))
    if s["n"] < 2 or not math.isfinite(s["ci95"]):
        return "undetermined", f"{format_mean_ci(s, 3)}: undetermined"
    word = "gain" if s["mean"] - s["ci95"] > 0 else "loss" if s["mean"] + s["ci95"] < 0 else "no difference"
    words = {"gain": "a gain", "loss": "a loss", "no difference": "no difference within the 95% CI"}[word]
    return word, f"{s['mean']:+.3f} ± {s['ci95']:.3f} (n={s['n']}): {words}"


def clearly_better(edge: Mapping[str, float], own_range: float) -> bool:
    """A per-seed edge (``{"mean", "ci95", "n"}``, > 0: better) is clear: >= 2 seeds, its 95% CI above 0
    and the edge larger than the spread ``own_range`` of the group it is compared with (notebook 04's
    controls against the paper's readers)."""
    return edge["n"] >= 2 and edge["mean"] - edge["ci95"] > 0 and edge["mean"] > own_range


GAP_GROWTH = 0.05
"""A loss gap grows with context when it is larger at the last positions than at the first by
more than this (nats; notebook 03's "where the gap lives")."""


def gap_grows(first: float, last: float) -> bool:
    """Whether a gap (nats) at the last positions exceeds the one at the first by :data:`GAP_GROWTH`."""
    return last - first > GAP_GROWTH


RECALL_SOLVED = 0.95
"""Query accuracy at which a model solves a recall task (the positive control's bar; notebook 05)."""
RECALL_FAR_BELOW = 0.2
"""A model ends far below another when its accuracy is lower by more than this (fraction)."""
RECALL_CHANGE = 0.1
"""Accuracy that falls with N, or rises with width, changes by more than this (fraction)."""
CHANCE_MARGIN = 0.05
"""Accuracy within this of chance counts as chance (not learned; notebook 05)."""


RECALL_CAPACITY = 0.9
"""Query accuracy at which a pair count counts as recalled (Zoology's capacity bar; the capacity
panel's ``n_star`` and the attribution row's "succeeds" / "fails"; notebook 05)."""


def recalls(acc: float) -> bool:
    """Whether ``acc`` reaches :data:`RECALL_CAPACITY` (a pair count is recalled)."""
    return acc >= RECALL_CAPACITY


def recall_capacity(acc_by_n: Mapping[int, float]) -> int:
    """The largest ``N`` whose accuracy :func:`recalls` (0 when none does): the capacity panel's ``n_star``."""
    return max((int(n) for n, a in acc_by_n.items() if recalls(a)), default=0)


def recall_solved(acc: float) -> bool:
    """Whether ``acc`` reaches :data:`RECALL_SOLVED`."""
    return acc >= RECALL_SOLVED


def far_below(acc: float, reference: float) -> bool:
    """``acc`` ends more than :data:`RECALL_FAR_BELOW` below ``reference``."""
    return acc < reference - RECALL_FAR_BELOW


def changes(before: float, after: float) -> bool:
    """``after`` differs from ``before`` by more than :data:`RECALL_CHANGE` in the direction
    ``after > before`` (call as ``changes(hi, lo)`` for a fall)."""
    return after - before > RECALL_CHANGE


def above_chance(acc: float, chance: float) -> bool:
    """``acc`` lies more than :data:`CHANCE_MARGIN` above ``chance``."""
    return acc > chance + CHANCE_MARGIN


def below_chance(acc: float, chance: float) -> bool:
    """``acc`` lies more than :data:`CHANCE_MARGIN` below ``chance``."""
    return acc < chance - CHANCE_MARGIN
