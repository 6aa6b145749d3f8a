"""Notebook 06's rules and gates: the boundary map in time and in depth."""
from __future__ import annotations

import re

from ._base import Gate, Metrics, Rule, _ci, _m, _sizes

# --------------------------------------------------------------------------- notebook 06: the boundary map

def structure_outlives_identity(identity: str, structure: str, lost: float = 0.10, kept: float = 0.20,
                                learned: tuple[str, str] | None = None,
                                others: tuple[tuple[str, str, str], ...] = ()) -> Rule:
    """yes if, at the pre-stated cell, identity decodability is below ``lost`` (upper CI) while
    structural decodability is above ``kept`` (lower CI); partly if structure exceeds identity
    with CIs apart; else no. ``learned``: (identity, structure) of the learned state, named in the
    reason; ``others``: (label, identity, structure) of further learned states, named too (where present)."""
    def rule(m: Metrics) -> tuple[str, str]:
        i_hi = _m(m, identity) + _ci(m, identity)
        s_lo = _m(m, structure) - _ci(m, structure)
        word = ("yes" if i_hi < lost and s_lo > kept else
                "partly" if s_lo > i_hi else "no")
        why = f"fixed bank: identity {_m(m, identity):.2f}, structure {_m(m, structure):.2f}"
        if learned and all(k in m for k in learned):
            why += f"; learned state: identity {_m(m, learned[0]):.2f}, structure {_m(m, learned[1]):.2f}"
        for label, i_name, s_name in others:
            if i_name in m and s_name in m:
                why += f"; {label}: identity {_m(m, i_name):.2f}, structure {_m(m, s_name):.2f}"
        return word, why
    rule.__doc__ = (f"yes if the fixed bank's identity decodability at the pre-stated cell is below {lost:g} (upper 95% CI) "
                    f"while its structural decodability is above {kept:g} (lower 95% CI); partly if structure is above "
                    "identity with CIs apart; else no")
    return rule


def learned_state_keeps(name: str, threshold: float) -> Gate:
    """Informative only if the learned state of equal size keeps what is asked where it is easy
    (``name`` >= ``threshold``): otherwise the probe or the task, not the fixed rates, is the limit."""
    def gate(m: Metrics) -> str | None:
        v = _m(m, name)
        return None if v >= threshold else f"{name} = {v:.2f} < {threshold:g}: even the learned state does not keep it"
    return gate


def oracle_converged(name: str) -> Gate:
    """Informative only if the oracle converged in every seed (``name``: 1 per seed where its fit
    stopped on a plateau, 0 where it ran out of steps still improving): an oracle cut short gives
    a lower bound, and "the traces lose identity" cannot rest on a lower bound (our design)."""
    def gate(m: Metrics) -> str | None:
        if name not in m:
            return f"no {name}: whether the oracle of the fixed traces converged is not recorded"
        v = _m(m, name)
        n = int(m[name].get("n", 1))
        return None if v >= 1.0 else (f"the oracle of the fixed traces was still improving at its last step in "
                                      f"{round((1 - v) * n)} of {n} seeds: what it reads is a lower bound of "
                                      "what the traces hold")
    return gate


def oracle_loses(name: str, lost: float = 0.10) -> Gate:
    """Informative only if the best reader fitted on the fixed traces alone (the oracle, ``name``)
    also loses identity: its upper 95% CI over seeds (mean + ci95) below ``lost``, the standard the
    rule applies to the bank's identity. A linear probe that misses what the traces still hold says
    nothing about the traces, and an oracle whose mean is under ``lost`` but whose CI reaches it
    does not show that they lost it (our design)."""
    def gate(m: Metrics) -> str | None:
        if name not in m:
            return (f"identity is read by a linear probe, not by the best reader fitted on the fixed traces "
                    f"(no {name}): what the probe misses, the traces may still hold")
        v, hi = _m(m, name), _m(m, name) + _ci(m, name)
        return None if hi < lost else (f"the oracle of the fixed traces reads identity ({name} = {v:.3f}, upper 95% "
                                       f"CI {hi:.3f} >= {lost:g})")
    return gate


def oracle_below_learned(oracle: str, learned: str) -> Gate:
    """Attributable to the fixed traces only if the best reader fitted on them (the oracle, ``oracle``)
    stays below the learned state (``learned``) with 95% CIs apart: where the oracle reads what the
    learned state keeps, the linear probe missed what the traces hold (issue 23; our design)."""
    def gate(m: Metrics) -> str | None:
        if oracle not in m:
            return (f"no {oracle}: only a linear probe read the traces, and what it misses the traces may "
                    "still hold")
        o, g = _m(m, oracle), _m(m, learned)
        if o + _ci(m, oracle) < g - _ci(m, learned):
            return None
        return (f"the oracle of the fixed traces reads {o:.2f} where the learned state keeps {g:.2f} "
                f"({oracle}, {learned}; CIs not apart): the probe, not the traces, loses it")
    return gate


def _depths(m: Metrics, prefix: str, arm: str) -> list[int]:
    return _sizes(m, f"{prefix}{arm}_")


def depth_dilution(prefix: str = "depth_both_acc_", fixed: tuple[str, ...] = ("plain", "decay"),
                   learned: tuple[str, ...] = ("dwa", "gate", "highway"), control: str = "lnscale",
                   keep: float = 0.10) -> Rule:
    """Read at the shallowest and deepest depth run; the score is min(copy, state accuracy) per seed.

    The fixed arms *dilute* if the best of them at the deepest depth is below its own score at the
    shallowest (CIs apart). The best learned arm *avoids* it if it is above the best fixed arm at
    the deepest depth (CIs apart) and loses at most ``keep`` from its shallowest score; it only
    *reduces* it if it is above but loses more. The fixed ``control`` (lnscale) makes the row fail
    if it is not below the best learned arm at the deepest depth (CIs apart)."""
    def rule(m: Metrics) -> tuple[str, str]:
        Ls = _depths(m, prefix, fixed[0])
        lo, hi = Ls[0], Ls[-1]

        def k(arm, L):
            return f"{prefix}{arm}_{L}"

        def below(a, b):
            return _m(m, a) + _ci(m, a) < _m(m, b) - _ci(m, b)

        best_fixed = max(fixed, key=lambda a: _m(m, k(a, hi)))
        best_learned = max(learned, key=lambda a: _m(m, k(a, hi)))
        dilutes = below(k(best_fixed, hi), k(best_fixed, lo))
        above = below(k(best_fixed, hi), k(best_learned, hi))
        avoids = above and _m(m, k(best_learned, lo)) - _m(m, k(best_learned, hi)) <= keep
        control_below = below(k(control, hi), k(best_learned, hi))
        word = ("yes" if dilutes and avoids and control_below else
                "partly" if dilutes and above else "no")
        why = (f"best fixed ({best_fixed}) {_m(m, k(best_fixed, lo)):.2f} at L={lo} -> {_m(m, k(best_fixed, hi)):.2f} "
               f"at L={hi}; best learned ({best_learned}) {_m(m, k(best_learned, lo)):.2f} -> "
               f"{_m(m, k(best_learned, hi)):.2f}; {control} {_m(m, k(control, hi)):.2f} at L={hi}"
               + ("" if dilutes else "; the fixed arms do not dilute (CIs overlap)")
               + ("" if not above or avoids else "; the learned arm reduces the dilution, does not avoid it")
               + ("" if control_below or not above else f"; the fixed {control} control is not below the learned arm"))
        return word, why
    rule.__doc__ = (f"min(copy, state accuracy) per seed: yes if the best of {', '.join(fixed)} falls from the shallowest "
                    f"to the deepest depth (CIs apart), the best of {', '.join(learned)} is above it at the deepest (CIs "
                    f"apart) and loses at most {keep:g} from its own shallowest score, and the fixed {control} control is "
                    f"below that learned arm (CIs apart); partly if the fixed arms dilute and a learned arm is above them "
                    f"but loses more than {keep:g} or {control} is not below it; else no")
    return rule


def depth_learnable(prefix: str = "depth_both_acc_", threshold: float = 0.9) -> Gate:
    """Informative only if some arm solves the task (copy and state) at the shallowest depth."""
    def gate(m: Metrics) -> str | None:
        names = [k for k in m if re.fullmatch(re.escape(prefix) + r"[a-z]+_\d+", k)]
        if not names:
            return f"no {prefix}<arm>_<L> metric"
        lo = min(int(n.rsplit("_", 1)[1]) for n in names)
        best = max(_m(m, n) for n in names if n.endswith(f"_{lo}"))
        return None if best >= threshold else (f"no arm keeps both the copy and the state at L={lo} "
                                               f"(best {best:.2f} < {threshold:g}): the task is not learned at this budget")
    return gate


# --------------------------------------------------------------------------- contrasts with converged controls

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


def learned_converged(learned: tuple[tuple[str, str, str], ...]) -> Gate:
    """Informative only if the learned state each side of the contrast reads converged in every
    seed. ``learned``: (identity, structure, converged) metric names per learned state; per target
    the best state by mean is the one read (as :func:`traces_keep_structure` reads it), and its
    ``converged`` (1 per seed that stopped on a plateau of its held-out accuracy, 0 per seed still
    improving at its step budget) must be 1 in every seed: a learned state cut short is no positive
    control. A state that is not the best of either target may be cut short: more training could
    only raise the contrast it does not set (our design)."""
    def gate(m: Metrics) -> str | None:
        present = [t for t in learned if t[0] in m and t[1] in m]
        if not present:
            return f"no learned state among {', '.join(t[0] for t in learned)}"
        for i, target in ((0, "identity"), (1, "structure")):
            best = max(present, key=lambda t: _m(m, t[i]))
            if best[2] not in m:
                return f"no {best[2]}: whether the learned state the {target} contrast reads converged is not recorded"
            v, n = _m(m, best[2]), int(m[best[2]].get("n", 1))
            if v < 1.0:
                return (f"the learned state the {target} contrast reads ({best[i]}) was still improving at its last "
                        f"step in {round((1 - v) * n)} of {n} seeds: it is no converged control")
        return None
    return gate


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
        L = _sizes(m, f"depth_steps_to_criterion_{fixed}_")[-1]
        found = sorted({mo.group(1) for k in m if (mo := re.fullmatch(
            rf"depth_steps_to_criterion_{fixed}_{L}((?:_d\d+)?)", k))}, key=lambda w: (w != "", w))
        words, whys = [], []
        for w in suffixes if suffixes is not None else found:
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
                    "D and S hold at every width; partly if F holds at every width and D at one at least; else no")
    return rule
