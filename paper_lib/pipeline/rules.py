"""The rule combinators of the house: summarised metrics -> a verdict, or the reason a test has no power.

A rule maps summarised metrics (``{name: {"mean", "ci95", "n"}}``) to ``(yes | partly | no,
reason)``; a gate returns the reason an experiment has no power (its control did not differ as
it must), or ``None``. Each rule's docstring is what the report prints. These are generic: they
take the metric names as arguments and know none; the claims (:mod:`paper_lib.claims`) compose
them and add the rules only one family uses. Our design: the paper states no tolerances.
"""
from __future__ import annotations

import math
import re
from typing import Callable, Iterable, Mapping

from .stats import format_mean_ci, mean_ci95

Metrics = Mapping[str, Mapping[str, float]]  # NAME -> {"mean", "ci95", "n"}
Rule = Callable[[Metrics], tuple[str, str]]   # -> (verdict, reason)
Gate = Callable[[Metrics], str | None]         # -> reason the experiment has no power, or None


def mean(m: Metrics, name: str) -> float:
    """The mean of metric ``name`` (KeyError when absent: the report says "metric missing")."""
    return float(m[name]["mean"])


def ci(m: Metrics, name: str) -> float:
    """The 95% CI half-width of metric ``name`` (0 where there is none: one seed, an exact number)."""
    c = m[name].get("ci95")
    return 0.0 if c is None or (isinstance(c, float) and math.isnan(c)) else float(c)


def sizes(m: Metrics, prefix: str) -> list[int]:
    """The numeric suffixes ``N`` of the metrics ``<prefix><N>``, ascending (a family: one metric per pair count or depth)."""
    return sorted(int(k[len(prefix):]) for k in m if re.fullmatch(re.escape(prefix) + r"\d+", k))


_m, _ci = mean, ci


# --------------------------------------------------------------------------- rules


def near(name: str, paper: float, yes: float, partly: float) -> Rule:
    """yes if |ours - paper| <= yes; partly if <= partly; else no (the reason says which side)."""
    def rule(m: Metrics) -> tuple[str, str]:
        d = _m(m, name) - paper
        word = "yes" if abs(d) <= yes else "partly" if abs(d) <= partly else "no"
        return word, f"ours {'above' if d > 0 else 'below'} the paper by {abs(d):.3f}"
    rule.__doc__ = f"yes if ours is within {yes:g} of {paper:g}; partly if within {partly:g}; else no"
    return rule


def at_least(name: str, yes: float, partly: float) -> Rule:
    """yes if ours >= yes; partly if >= partly; else no."""
    def rule(m: Metrics) -> tuple[str, str]:
        v = _m(m, name)
        return ("yes" if v >= yes else "partly" if v >= partly else "no"), f"{name} = {v:.3g}"
    rule.__doc__ = f"yes if {name} >= {yes:g}; partly if >= {partly:g}; else no"
    return rule


def beats(a: str, b: str, margin: float = 0.0) -> Rule:
    """yes if ``a`` beats ``b`` (by ``margin``) with 95% CIs apart; partly if ahead; else no.

    Higher is better. The reason names who is ahead (``a``, ``b`` or neither: tied) and whether
    the two 95% CIs are apart (either way round), e.g. ``"a - b = -0.120 (b ahead, CIs apart)"``;
    with a ``margin``, a lead with CIs apart but smaller than the margin says so.
    """
    def rule(m: Metrics) -> tuple[str, str]:
        d = _m(m, a) - _m(m, b)
        a_above = _m(m, a) - _ci(m, a) > _m(m, b) + _ci(m, b)
        b_above = _m(m, b) - _ci(m, b) > _m(m, a) + _ci(m, a)
        word = "yes" if d >= margin and a_above else "partly" if d > 0 else "no"
        who = a if d > 0 else b if d < 0 else "tied"
        ahead = "tied" if who == "tied" else f"{who} ahead"
        cis = "CIs apart" if a_above or b_above else "CIs overlap"
        short = f", short of the {margin:g} margin" if 0 < d < margin else ""
        return word, f"{a} - {b} = {d:+.3f} ({ahead}, {cis}{short})"
    extra = f" by >= {margin:g}" if margin else ""
    otherwise = "ahead with CIs overlapping" if margin <= 0 else "ahead otherwise"
    rule.__doc__ = f"yes if {a} beats {b}{extra} with 95% CIs apart; partly if {otherwise}; else no"
    return rule


def beats_each(a: str, rivals: Iterable[str]) -> Rule:
    """yes if ``a`` beats every rival with 95% CIs apart; partly if it beats at least one with CIs
    apart, or is ahead of every rival with CIs overlapping; else no (higher is better).

    Our design (issue 23 item 3: SPCN against both causal GRU taggers, with and without ``<unk>``
    training); the reason lists each pair as :func:`beats` writes it.
    """
    rivals = tuple(rivals)
    if not rivals:
        raise ValueError("beats_each needs at least one rival metric")

    def rule(m: Metrics) -> tuple[str, str]:
        apart = [_m(m, a) - _ci(m, a) > _m(m, b) + _ci(m, b) for b in rivals]
        ahead = [_m(m, a) > _m(m, b) for b in rivals]
        word = "yes" if all(apart) else "partly" if any(apart) or all(ahead) else "no"
        return word, "; ".join(beats(a, b)(m)[1] for b in rivals)
    rule.__doc__ = (f"yes if {a} beats each of {', '.join(rivals)} with 95% CIs apart; partly if it beats one "
                    "with CIs apart or is ahead of all with CIs overlapping; else no")
    return rule


def relative_spread(values: Iterable[float]) -> float:
    """``(max - min) / min`` of ``values`` (a fraction): how far apart losses are."""
    v = list(values)
    return (max(v) - min(v)) / min(v)


def spread(names: Iterable[str], yes: float, partly: float) -> Rule:
    """yes if (max - min) / min of the values <= yes; partly if <= partly; else no."""
    names = tuple(names)

    def rule(m: Metrics) -> tuple[str, str]:
        rel = relative_spread(_m(m, n) for n in names)
        return ("yes" if rel <= yes else "partly" if rel <= partly else "no"), f"spread {rel:.1%}"
    rule.__doc__ = f"yes if (max - min) / min of the losses <= {yes:.0%}; partly if <= {partly:.0%}; else no"
    return rule


def all_of(*rules: Rule) -> Rule:
    """yes if every rule says yes; partly if at least one says yes or partly; else no."""
    def rule(m: Metrics) -> tuple[str, str]:
        results = [r(m) for r in rules]
        words = [w for w, _ in results]
        word = "yes" if all(w == "yes" for w in words) else "partly" if any(w in ("yes", "partly") for w in words) else "no"
        return word, "; ".join(why for _, why in results)
    rule.__doc__ = "all of: " + " AND ".join((r.__doc__ or "").split(";")[0] for r in rules)
    return rule


# --------------------------------------------------------------------------- gates (power)


def beats_negative_controls(name: str, controls: Iterable[str]) -> Gate:
    """Informative only if ``name`` beats every negative control that was measured (a model that
    lacks what the claim credits, e.g. SPCN without learning) with 95% CIs apart, and at least
    one was: a number that the negative control reaches too is not attributable to the
    claimed mechanism (our design)."""
    controls = tuple(controls)

    def gate(m: Metrics) -> str | None:
        present = [c for c in controls if c in m]
        if not present:
            return f"no negative control measured ({', '.join(controls)})"
        ties = [f"{c} {_m(m, c):.3f} ± {_ci(m, c):.3f}" for c in present
                if not _m(m, name) - _ci(m, name) > _m(m, c) + _ci(m, c)]
        if not ties:
            return None
        return (f"{name} {_m(m, name):.3f} ± {_ci(m, name):.3f} does not beat the negative control(s) "
                f"{'; '.join(ties)} with CIs apart: the number is not attributable to what the claim credits")
    return gate


def ceiling_above_floor(ceiling: str, floor: str) -> Gate:
    """Informative only if ``ceiling`` (the best the setup can learn) beats ``floor`` (no learning)
    with 95% CIs apart: if even the ceiling cannot rise above the floor, a learner that ties the
    floor says nothing about learning (issue 11; our design)."""
    def gate(m: Metrics) -> str | None:
        if _m(m, ceiling) - _ci(m, ceiling) > _m(m, floor) + _ci(m, floor):
            return None
        return (f"the ceiling {ceiling} {_m(m, ceiling):.3f} ± {_ci(m, ceiling):.3f} does not beat the floor "
                f"{floor} {_m(m, floor):.3f} ± {_ci(m, floor):.3f} with CIs apart: no room to show learning")
    return gate


def first_gate(*gates: Gate) -> Gate:
    """The first of ``gates`` that finds no power (its reason), or None when every gate passes."""
    def gate(m: Metrics) -> str | None:
        for g in gates:
            why = g(m)
            if why is not None:
                return why
        return None
    return gate


def any_solves(names: Iterable[str], threshold: float) -> Gate:
    """Informative only if at least one positive control of ``names`` reaches ``threshold``."""
    names = tuple(names)

    def gate(m: Metrics) -> str | None:
        seen = {n: _m(m, n) for n in names if n in m}
        if not seen:
            return f"no positive control measured ({', '.join(names)})"
        if any(v >= threshold for v in seen.values()):
            return None
        return ("no positive control solves the task (" + ", ".join(f"{n} {v:.2f}" for n, v in seen.items())
                + f" < {threshold:g}): the recipe fails")
    return gate


# --------------------------------------------------------------------------- paired differences


def paired_difference(diffs: Iterable[float]) -> tuple[str, str]:
    """Per-seed differences ``a - b`` -> ``("gain" | "loss" | "no difference" | "undetermined", text)``.

    A gain (loss) when the 95% CI of the mean difference lies above (below) 0; undetermined with
    fewer than 2 seeds. ``text``: ``"+0.012 ± 0.004 (n=5): a gain"`` and the like.
    """
    s = mean_ci95(list(diffs))
    if s["n"] < 2 or not math.isfinite(s["ci95"]):
        return "undetermined", f"{format_mean_ci(s, 3)}: undetermined"
    word = "gain" if s["mean"] - s["ci95"] > 0 else "loss" if s["mean"] + s["ci95"] < 0 else "no difference"
    words = {"gain": "a gain", "loss": "a loss", "no difference": "no difference within the 95% CI"}[word]
    return word, f"{s['mean']:+.3f} ± {s['ci95']:.3f} (n={s['n']}): {words}"
