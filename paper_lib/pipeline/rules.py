"""The rules and power gates of the reproduction report (:mod:`paper_lib.pipeline.report`).

A rule maps summarised metrics (``{name: {"mean", "ci95", "n"}}``) to ``(yes | partly | no,
reason)``; a gate returns the reason an experiment has no power (its control did not differ as
it must), or ``None``. Each rule's docstring is what the report prints. Our design: the paper
states no tolerances.
"""
from __future__ import annotations

import math
import re
from typing import Callable, Iterable, Mapping

Metrics = Mapping[str, Mapping[str, float]]  # NAME -> {"mean", "ci95", "n"}
Rule = Callable[[Metrics], tuple[str, str]]   # -> (verdict, reason)
Gate = Callable[[Metrics], str | None]         # -> reason the experiment has no power, or None


def _m(m: Metrics, name: str) -> float:
    return float(m[name]["mean"])


def _ci(m: Metrics, name: str) -> float:
    c = m[name].get("ci95")
    return 0.0 if c is None or (isinstance(c, float) and math.isnan(c)) else float(c)


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


def recall_gap(prefix_weak: str, prefix_strong: str) -> Rule:
    """yes if the weak model's recall at the largest N is below the strong model's with CIs apart
    and it either falls with N (CIs apart) or is below the strong model at the smallest N too
    (CIs apart: it cannot bind even a few pairs); partly if below at the largest N with CIs
    overlapping; else no. It fails if SPEN recalls about as well as attention."""
    def rule(m: Metrics) -> tuple[str, str]:
        ns = _sizes(m, prefix_weak)
        lo, hi = f"{prefix_weak}{ns[0]}", f"{prefix_weak}{ns[-1]}"
        s_lo, s_hi = f"{prefix_strong}{ns[0]}", f"{prefix_strong}{ns[-1]}"

        def below(a: str, b: str) -> bool:
            return _m(m, a) + _ci(m, a) < _m(m, b) - _ci(m, b)

        falls = below(hi, lo)
        word = ("yes" if below(hi, s_hi) and (falls or below(lo, s_lo)) else
                "partly" if _m(m, hi) < _m(m, s_hi) else "no")
        return word, (f"SPEN {_m(m, lo):.2f} at N={ns[0]} -> {_m(m, hi):.2f} at N={ns[-1]}; "
                      f"Transformer {_m(m, s_lo):.2f} -> {_m(m, s_hi):.2f}")
    rule.__doc__ = ("yes if SPEN's recall at the largest N is below the Transformer's (CIs apart) and SPEN either "
                    "falls with N or is below the Transformer at the smallest N too (CIs apart); partly if below "
                    "with CIs overlapping; else no")
    return rule


NOT_ATTRIBUTABLE = "not attributable at this budget"
"""The attribution row's third verdict: neither the traces nor the reader is shown to lose the key."""


def traces_lose(spen: str = "recall_acc_spen_", learned: str = "recall_acc_gru_",
                oracle: str = "recall_acc_oracle_") -> Rule:
    """The attribution of a recall failure (see the docstring set below); per ``N`` of ``spen``."""
    def rule(m: Metrics) -> tuple[str, str]:
        ns = [n for n in _sizes(m, spen) if f"{learned}{n}" in m and f"{oracle}{n}" in m]
        if not ns:
            raise KeyError(f"no N with all of {spen}, {learned} and {oracle}")
        yes, no, parts = [], [], []
        for n in ns:
            s, g, o = f"{spen}{n}", f"{learned}{n}", f"{oracle}{n}"
            spen_fails, oracle_fails = not recalls(_m(m, s)), not recalls(_m(m, o))
            learned_wins = recalls(_m(m, g)) and _m(m, g) - _ci(m, g) > _m(m, s) + _ci(m, s)
            if oracle_fails and learned_wins and spen_fails:
                yes.append(n)
            elif spen_fails and not oracle_fails:
                no.append(n)
            parts.append(f"N={n}: SPEN {_m(m, s):.2f}, learned recurrence {_m(m, g):.2f}, oracle {_m(m, o):.2f}")
        text = "; ".join(parts)
        if yes:
            return "yes", f"{text} (at N={', '.join(map(str, yes))} the traces lose the key, a learned state keeps it)"
        if no:
            return "no", f"{text} (at N={', '.join(map(str, no))} the oracle reads the key from the traces; SPEN does not)"
        return NOT_ATTRIBUTABLE, text
    rule.__doc__ = (f"yes if at some N the trace oracle fails (< {RECALL_CAPACITY:g}), the learned recurrence of "
                    f"equal state succeeds (>= {RECALL_CAPACITY:g}, CIs apart above SPEN) and SPEN fails; no if the "
                    "oracle succeeds where SPEN fails (the information is in the traces, SPEN does not read it); "
                    f"otherwise {NOT_ATTRIBUTABLE}")
    return rule


def _sizes(m: Metrics, prefix: str) -> list[int]:
    return sorted(int(k[len(prefix):]) for k in m if re.fullmatch(re.escape(prefix) + r"\d+", k))


# --------------------------------------------------------------------------- paired and within-notebook rules

def paired_difference(diffs: Iterable[float]) -> tuple[str, str]:
    """Per-seed differences ``a - b`` -> ``("gain" | "loss" | "no difference" | "undetermined", text)``.

    A gain (loss) when the 95% CI of the mean difference lies above (below) 0; undetermined with
    fewer than 2 seeds. ``text``: ``"+0.012 ± 0.004 (n=5): a gain"`` and the like.
    """
    from .stats import format_mean_ci, mean_ci95

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


# --------------------------------------------------------------------------- gates (power)

def past_unigram(models: Iterable[str], by: float = 1.0) -> Gate:
    """Informative only if every ``<model>_val_loss`` is at least ``by`` nats below ``unigram_val_loss``."""
    models = tuple(models)

    def gate(m: Metrics) -> str | None:
        if "unigram_val_loss" not in m:
            return "no unigram reference computed"
        u = _m(m, "unigram_val_loss")
        short = [f"{k} {_m(m, f'{k}_val_loss'):.2f}" for k in models
                 if f"{k}_val_loss" in m and _m(m, f"{k}_val_loss") > u - by]
        missing = [k for k in models if f"{k}_val_loss" not in m]
        if missing:
            return f"missing {', '.join(k + '_val_loss' for k in missing)}"
        return f"not {by:g} nat below the unigram loss {u:.2f}: {', '.join(short)}" if short else None
    return gate


def unbounded_beats_bounded(bounded: Iterable[str], unbounded: Iterable[str]) -> Gate:
    """Informative only if some reader that can see the past beats every trace-bounded reader
    with 95% CIs apart (the positive control of the ablation)."""
    bounded, unbounded = tuple(bounded), tuple(unbounded)

    def gate(m: Metrics) -> str | None:
        best_b = min(_m(m, b) - _ci(m, b) for b in bounded if b in m)
        winners = [u for u in unbounded if u in m and _m(m, u) + _ci(m, u) < best_b]
        if winners:
            return None
        seen = ", ".join(f"{u} {_m(m, u):.2f}" for u in unbounded if u in m) or "none run"
        return f"no unbounded reader beats the bounded ones with CIs apart (best bounded {best_b:.2f}; {seen})"
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


def copies_in_context(induction: str, loss: str, bigram: str = "bigram_val_loss", min_nats: float = 1.0) -> Gate:
    """Informative only if the Transformer has learned to use its context: an induction score
    (``induction``: loss on the first minus the second copy of repeated random tokens, Olsson et
    al. 2022) of at least ``min_nats`` nats, and a held-out loss (``loss``) below the counted
    bigram line (``bigram``). A Transformer that does neither measures only how fast n-gram
    statistics are learned, not the retrieval from context the paper's gap comes from (our design)."""
    def gate(m: Metrics) -> str | None:
        if induction not in m:
            return f"no induction score measured ({induction})"
        score = _m(m, induction)
        if score < min_nats:
            return (f"the Transformer has not learned in-context copying: induction score {score:.2f} nats "
                    f"< {min_nats:g}")
        if loss not in m or bigram not in m:
            return f"missing {loss if loss not in m else bigram}"
        if _m(m, loss) >= _m(m, bigram):
            return f"the Transformer ({_m(m, loss):.2f} nats) is not below the counted bigram line ({_m(m, bigram):.2f})"
        return None
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


def solves(name_prefix: str, threshold: float) -> Gate:
    """Informative only if the positive control reaches ``threshold`` at its largest N."""
    def gate(m: Metrics) -> str | None:
        ns = _sizes(m, name_prefix)
        if not ns:
            return f"no {name_prefix}<N> metric"
        v = _m(m, f"{name_prefix}{ns[-1]}")
        return None if v >= threshold else f"the Transformer reaches {v:.2f} < {threshold:g} at N={ns[-1]}: the recipe fails"
    return gate
