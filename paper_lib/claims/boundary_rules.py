"""Rules and gates of the boundary family (:mod:`paper_lib.claims.boundary`) that decide its rows
on contrasts with converged controls: the time row's oracle against learned states of equal size
trained until flat, their gates, and the depth row on steps to a criterion. Our design: the paper
runs neither map.
"""
from __future__ import annotations

import re
from typing import Callable

from ..pipeline.rules import Gate, Metrics, Rule, cut_arms
from ..pipeline.rules import ci as _ci
from ..pipeline.rules import mean as _m
from ..pipeline.rules import sizes as _sizes

NOT_ATTRIBUTABLE = "not attributable at this budget"


def _apart(m: Metrics, low: str, high: str) -> bool:
    """``low`` is below ``high`` with 95% CIs apart."""
    return _m(m, low) + _ci(m, low) < _m(m, high) - _ci(m, high)


def traces_keep_structure(identity: str, structure: str, learned: tuple[tuple[str, str, str], ...]) -> Rule:
    """The time row's contrast: the best reader of the fixed traces (the oracle: ``identity``,
    ``structure``) against the converged learned states of equal size (``learned``: (label,
    identity, structure) each; per target the best of them by mean is the contrast).

    yes if the oracle's identity is below the learned state's (CIs apart) while its structure is
    not below the learned state's (CIs not apart that way): the fixed rates lose what a learned
    state of their size keeps, and keep the class as well as it does; partly if identity is lost
    so and the oracle's structure is above its own identity (CIs apart: the class outlives the
    token in the traces, though below the learned state); else no (our design)."""
    def rule(m: Metrics) -> tuple[str, str]:
        present = [t for t in learned if t[1] in m and t[2] in m]
        if not present:
            raise KeyError(f"no learned state among {', '.join(t[1] for t in learned)}")
        li = max(present, key=lambda t: _m(m, t[1]))
        ls = max(present, key=lambda t: _m(m, t[2]))
        lost = _apart(m, identity, li[1])
        kept = not _apart(m, structure, ls[2])
        outlives = _m(m, structure) - _ci(m, structure) > _m(m, identity) + _ci(m, identity)
        word = "yes" if lost and kept else "partly" if lost and outlives else "no"
        why = (f"oracle of the fixed traces: identity {_m(m, identity):.2f}, structure {_m(m, structure):.2f}; "
               f"{li[0]}: identity {_m(m, li[1]):.2f}; {ls[0]}: structure {_m(m, ls[2]):.2f}"
               + ("" if lost else "; the traces hold identity as the learned state does (CIs not apart)")
               + ("" if not lost or kept else "; the traces lose structure too" + ("" if outlives else
                                                                                    ", as much as identity")))
        return word, why
    rule.__doc__ = ("oracle of the fixed traces against the best converged learned state of equal size (GRU or "
                    "selective scan), at the pre-stated cell: yes if the oracle's identity is below the learned "
                    "state's (95% CIs apart) and its structure is not below the learned state's (CIs not apart); "
                    "partly if identity is below so and the oracle's structure is above its own identity (CIs "
                    "apart); else no")
    return rule


def reads_nothing(name: str, level: float = 0.05) -> Gate:
    """The negative control: informative only if a reader where nothing can be read (``name``:
    the oracle at a lag beyond what the traces weigh) reads at most ``level`` (upper 95% CI): a
    reader that reads there reads something other than the traces' content (our design)."""
    def gate(m: Metrics) -> str | None:
        if name not in m:
            return f"no {name}: the negative control did not run"
        hi = _m(m, name) + _ci(m, name)
        return None if hi <= level else (f"the negative control reads {_m(m, name):.3f} ({name}, upper 95% CI "
                                         f"{hi:.3f} > {level:g}) where nothing can be read")
    return gate


def depth_carry_selection(suffixes: tuple[str, ...] | None = None, fixed: str = "plain", forgets: str = "decay",
                          learned: tuple[str, ...] = ("dwa", "gate", "highway", "static"),
                          input_dependent: tuple[str, ...] = ("gate", "highway"),
                          others: tuple[str, ...] = ("plain", "decay", "lnscale"), forget_below: float = 0.5) -> Rule:
    """The depth row, read at the deepest depth run and at every width (``suffixes`` of the metric
    names: ``""`` the headline width, ``"_d16"`` d_model 16; default: every width the metrics hold), from the accuracies after early
    stopping (``depth_copy_acc_``) and the steps to the criterion (``depth_steps_to_criterion_``;
    a seed that never reached it counts as the step budget, so "slower" is never overstated).

    Three clauses per width: (F) the fixed decay ``forgets`` the first input: its copy accuracy is
    below ``forget_below`` (upper CI) and below the ``fixed`` residual's (CIs apart); (D) the best
    ``learned`` arm reaches the criterion in fewer steps than the ``fixed`` residual (CIs apart);
    (S) the fastest arm is ``input_dependent`` and faster than every input-independent arm (the
    other learned ones and ``others``; CIs apart). yes if F, D and S hold at every width; partly if
    F holds at every width and D at one at least; else no (our design: the paper is silent)."""
    def rule(m: Metrics) -> tuple[str, str]:
        depths = _sizes(m, f"depth_steps_to_criterion_{fixed}_")
        if not depths:
            raise KeyError(f"no depth_steps_to_criterion_{fixed}_<L>")
        L = depths[-1]
        found = sorted({mo.group(1) for k in m if (mo := re.fullmatch(
            rf"depth_steps_to_criterion_{fixed}_{L}((?:_d\d+)?)", k))}, key=lambda w: (w != "", w))
        widths = suffixes if suffixes is not None else found
        cut = cut_arms(m, {f"the {forgets} arm{w.replace('_d', ' at d_model ')}": f"depth_cut_{forgets}_{L}{w}_"
                           for w in widths})
        if cut:  # (F) reads the decay's copy where it stopped: cut, it may still rise
            return NOT_ATTRIBUTABLE, f"L={L}; {cut}: the verdict would rest on an arm that was cut"
        words, whys = [], []
        for w in widths:
            def st(a, w=w):
                return f"depth_steps_to_criterion_{a}_{L}{w}"

            def cp(a, w=w):
                return f"depth_copy_acc_{a}_{L}{w}"
            f_ok = _m(m, cp(forgets)) + _ci(m, cp(forgets)) < forget_below and _apart(m, cp(forgets), cp(fixed))
            best = min(learned, key=lambda a: _m(m, st(a)))
            d_ok = _apart(m, st(best), st(fixed))
            pool = tuple(dict.fromkeys(learned + others))
            fastest = min(pool, key=lambda a: _m(m, st(a)))
            s_ok = fastest in input_dependent and all(_apart(m, st(fastest), st(a)) for a in pool
                                                      if a not in input_dependent)
            words.append((f_ok, d_ok, s_ok))
            width = "headline width" if not w else f"d_model {w.removeprefix('_d')}"
            whys.append(f"{width}: {forgets} copy {_m(m, cp(forgets)):.2f} vs {fixed} {_m(m, cp(fixed)):.2f}"
                        f"{'' if f_ok else ' (does not forget)'}; steps to criterion {fixed} {_m(m, st(fixed)):.0f}, "
                        f"best learned {best} {_m(m, st(best)):.0f}{'' if d_ok else ' (CIs not apart)'}; fastest "
                        f"{fastest}" + ("" if s_ok else " (not input-dependent and ahead of every input-independent "
                                                        "arm with CIs apart)"))
        f_all = all(f for f, _, _ in words)
        word = ("yes" if all(f and d and s for f, d, s in words) else
                "partly" if f_all and any(d for _, d, _ in words) else "no")
        return word, f"L={L}; " + "; ".join(whys)
    rule.__doc__ = (f"at the deepest depth and at each width: (F) the fixed {forgets} arm's copy of the first input is "
                    f"below {forget_below:g} (upper 95% CI) and below the {fixed} residual's (CIs apart); (D) the best "
                    f"of {', '.join(learned)} reaches the criterion in fewer steps than {fixed} (CIs apart; a seed that "
                    f"never reaches it counts as the step budget); (S) the fastest arm is input-dependent "
                    f"({', '.join(input_dependent)}) and faster than every input-independent arm (CIs apart). yes if F, "
                    "D and S hold at every width; partly if F holds at every width and D at one at least; else no; "
                    f"{NOT_ATTRIBUTABLE} if the {forgets} arm was cut at its step cap (F reads it where it stopped)")
    return rule


def fastest_learned(learned: tuple[str, ...] = ("dwa", "gate", "highway", "static"), fixed: str = "plain") -> Callable[
        [Metrics], str]:
    """The depth row's rival as its rule names it: the metric of the ``learned`` arm with the fewest steps to the
    criterion at the deepest depth, headline width (``depth_steps_to_criterion_<arm>_<L>``); '' where none ran."""
    def pick(m: Metrics) -> str:
        depths = _sizes(m, f"depth_steps_to_criterion_{fixed}_")
        names = [f"depth_steps_to_criterion_{a}_{depths[-1]}" for a in learned] if depths else []
        return min((n for n in names if n in m), key=lambda n: _m(m, n), default="")
    return pick
