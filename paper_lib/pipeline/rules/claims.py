"""The report's rules: summarised metrics -> (yes | partly | no, reason)."""
from __future__ import annotations

from typing import Iterable

from ._base import Metrics, Rule, _ci, _m, _sizes
from .within import RECALL_CAPACITY, recalls

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


def traces_lose(spen: str = "recall_acc_spen_", learned: str | tuple[str, ...] = "recall_acc_gru_",
                oracle: str = "recall_acc_oracle_") -> Rule:
    """The attribution of a recall failure (see the docstring set below); per ``N`` of ``spen``.
    ``learned``: the prefix of a learned recurrence of equal state, or several (the GRU and
    SPEN-selective at equal state): any one that recalls, CIs apart above SPEN, counts."""
    prefixes = (learned,) if isinstance(learned, str) else tuple(learned)

    def rule(m: Metrics) -> tuple[str, str]:
        ns = [n for n in _sizes(m, spen) if any(f"{g}{n}" in m for g in prefixes) and f"{oracle}{n}" in m]
        if not ns:
            raise KeyError(f"no N with all of {spen}, {' or '.join(prefixes)} and {oracle}")
        yes, no, parts = [], [], []
        for n in ns:
            s, o = f"{spen}{n}", f"{oracle}{n}"
            gs = [f"{g}{n}" for g in prefixes if f"{g}{n}" in m]
            spen_fails, oracle_fails = not recalls(_m(m, s)), not recalls(_m(m, o))
            learned_wins = any(recalls(_m(m, g)) and _m(m, g) - _ci(m, g) > _m(m, s) + _ci(m, s) for g in gs)
            if oracle_fails and learned_wins and spen_fails:
                yes.append(n)
            elif spen_fails and not oracle_fails:
                no.append(n)
            best = max(gs, key=lambda g: _m(m, g))
            each = (" [" + ", ".join(f"{g[len('recall_acc_'):-len(str(n)) - 1]} {_m(m, g):.2f}" for g in gs) + "]"
                    if len(gs) > 1 else "")
            parts.append(f"N={n}: SPEN {_m(m, s):.2f}, learned recurrence {_m(m, best):.2f}, oracle {_m(m, o):.2f}"
                         + each)
        text = "; ".join(parts)
        if yes:
            return "yes", f"{text} (at N={', '.join(map(str, yes))} the traces lose the key, a learned state keeps it)"
        if no:
            return "no", f"{text} (at N={', '.join(map(str, no))} the oracle reads the key from the traces; SPEN does not)"
        return NOT_ATTRIBUTABLE, text
    rule.__doc__ = (f"yes if at some N the trace oracle fails (< {RECALL_CAPACITY:g}), a learned recurrence of "
                    f"equal state (the GRU or SPEN-selective) succeeds (>= {RECALL_CAPACITY:g}, CIs apart above SPEN) and SPEN fails; no if the "
                    "oracle succeeds where SPEN fails (the information is in the traces, SPEN does not read it); "
                    f"otherwise {NOT_ATTRIBUTABLE}")
    return rule
