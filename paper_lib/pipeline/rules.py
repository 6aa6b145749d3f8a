"""The rule types and combinators of the house, and the rules more than one claims family uses.

A rule maps summarised metrics (``{name: {"mean", "ci95", "n"}}``) to ``(yes | partly | no,
reason)``; its docstring is what the report prints. A gate returns the reason an experiment has
no power (its control did not differ as it must), or ``None``. This module knows no metric name;
a rule only one family uses lives in that family (:mod:`paper_lib.claims`). Our design: the paper
states no tolerances.
"""
from __future__ import annotations

import math
import re
from typing import Callable, Iterable, Mapping

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
    """The numeric suffixes ``N`` of the metrics ``<prefix><N>``, ascending."""
    return sorted(int(k[len(prefix):]) for k in m if re.fullmatch(re.escape(prefix) + r"\d+", k))


def first_gate(*gates: Gate) -> Gate:
    """The first of ``gates`` that finds no power (its reason), or None when every gate passes."""
    def gate(m: Metrics) -> str | None:
        return next((why for g in gates if (why := g(m)) is not None), None)
    return gate


def any_solves(names: Iterable[str], threshold: float) -> Gate:
    """Informative only if at least one positive control of ``names`` reaches ``threshold``."""
    names = tuple(names)

    def gate(m: Metrics) -> str | None:
        seen = {n: mean(m, n) for n in names if n in m}
        if not seen:
            return f"no positive control measured ({', '.join(names)})"
        if any(v >= threshold for v in seen.values()):
            return None
        return ("no positive control solves the task (" + ", ".join(f"{n} {v:.2f}" for n, v in seen.items())
                + f" < {threshold:g}): the recipe fails")
    return gate


def cut_arms(m: Metrics, arms: Mapping[str, str]) -> str:
    """Which of ``arms`` (words -> prefix of ``<prefix>improving``, ``<prefix>plateau``: the share of seeds stopped
    at the step cap still learning, or on the chance loss) was cut, in words; '' where none was."""
    kinds = (("improving", "was still learning at its step cap"), ("plateau", "never left the chance loss"))
    return "; ".join(f"{words} {what} in {round(mean(m, p + k) * (n := int(m[p + k].get('n', 1))))} of {n} seeds"
                     for words, p in arms.items() for k, what in kinds if p + k in m and mean(m, p + k) > 0)


def unless_cut(rule: Rule, arms: Mapping[str, str], verdict: str = "not attributable at this budget") -> Rule:
    """``rule``, unless an arm it reads was cut (:func:`cut_arms`): then ``verdict``, naming the arm."""
    def wrapped(m: Metrics) -> tuple[str, str]:
        return (verdict, f"{why}: the verdict would rest on an arm that was cut") if (why := cut_arms(m, arms)) \
            else rule(m)
    wrapped.__doc__ = f"{rule.__doc__}; {verdict} if an arm it reads ({', '.join(arms)}) was cut at its step cap"
    return wrapped


def unless(gate: Gate, verdict: str, rule: Rule) -> Rule:
    """``rule``, unless ``gate`` finds a reason (e.g. a negative control reaches the number too): then ``verdict``."""
    def wrapped(m: Metrics) -> tuple[str, str]:
        why = gate(m)
        return (verdict, why) if why is not None else rule(m)
    wrapped.__doc__ = f"{verdict} unless the controls differ as they must; else {rule.__doc__}"
    return wrapped
