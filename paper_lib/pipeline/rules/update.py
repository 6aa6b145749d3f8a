"""Notebook 07's rule and gate: key-update recall at equal state, under a stated noise budget.

The report row "Fixed decay loses what input-dependent selection keeps (key update, equal state,
noise budget)" reads the metrics ``update_acc_<state>_<gap>`` (per seed, at the headline noise),
``update_bound_<gap>`` (the Bayes bound of the one-hot fixed bank: an upper bound for any of its
readers) and ``update_bound_dense_<gap>`` (the same bound for an orthogonal code that uses every
number's range). Written before the cpu run that decides it. Our design: the paper is silent.
"""
from __future__ import annotations

from ._base import Gate, Metrics, Rule, _ci, _m, _sizes
from .claims import NOT_ATTRIBUTABLE

UPDATE_KEPT = 0.9
"""Accuracy at which a state keeps the latest binding (a fixed-bank bound below it has lost it)."""
UPDATE_SOLVED = 0.95
"""The positive control's bar: the Transformer must reach it at every gap."""
SELECTIVE_STATES = ("scan", "gru")
"""The learned states with input-dependent decay (the selective scan and the GRU's gates): the states
the claim credits. SPEN (fixed decay, two blocks) is shown beside them, never counted for them."""


def update_kept(prefix: str = "update_acc_", oracle: str = "bank_oracle", bound: str = "update_bound_",
                dense: str = "update_bound_dense_", learned: tuple[str, ...] = SELECTIVE_STATES,
                shown: tuple[str, ...] = ("spen",)) -> Rule:
    """The rule (its docstring, set below, is what the report prints); per gap of the oracle's metrics."""
    def rule(m: Metrics) -> tuple[str, str]:
        gaps = _sizes(m, f"{prefix}{oracle}_")
        if not gaps:
            raise KeyError(f"no {prefix}{oracle}_<gap> metric")
        yes, no, kept, parts = [], True, False, []
        for d in gaps:
            o = f"{prefix}{oracle}_{d}"
            o_hi = _m(m, o) + _ci(m, o)
            lost = o_hi < UPDATE_KEPT and _m(m, f"{bound}{d}") < UPDATE_KEPT and _m(m, f"{dense}{d}") < UPDATE_KEPT
            names = [f"{prefix}{s}_{d}" for s in learned if f"{prefix}{s}_{d}" in m]
            keeps = [n for n in names if _m(m, n) >= UPDATE_KEPT]
            if lost and any(_m(m, n) - _ci(m, n) > o_hi for n in keeps):
                yes.append(d)
            kept = kept or bool(keeps)
            if keeps and _m(m, o) < UPDATE_KEPT:
                no = False
            each = ", ".join(f"{n[len(prefix):-len(str(d)) - 1]} {_m(m, n):.2f}" for n in names + [
                f"{prefix}{s}_{d}" for s in shown if f"{prefix}{s}_{d}" in m])
            parts.append(f"gap {d}: oracle {_m(m, o):.2f} (upper CI {o_hi:.2f}), bound {_m(m, f'{bound}{d}'):.2f}, "
                         f"dense-code bound {_m(m, f'{dense}{d}'):.2f}; {each}")
        text = "; ".join(parts)
        spen = [d for d in gaps for s in shown if f"{prefix}{s}_{d}" in m and _m(m, f"{prefix}{s}_{d}") >= UPDATE_KEPT
                and _m(m, f"{prefix}{oracle}_{d}") < UPDATE_KEPT]
        note = (f" (SPEN, fixed decay in two blocks, also keeps it at gap {', '.join(map(str, spen))}: the one-bank "
                "bound does not hold for a stack)" if spen else "")
        if yes:
            return "yes", f"{text} (at gap {', '.join(map(str, yes))} the fixed bank has lost it, a selective state keeps it){note}"
        if no and kept:
            return "no", f"{text} (wherever a selective state keeps it, the fixed-bank oracle does too){note}"
        return NOT_ATTRIBUTABLE, text + note
    rule.__doc__ = (f"yes if at some gap the fixed-bank oracle's upper 95% CI, its Bayes bound and the bound of a dense "
                    f"orthogonal code are all below {UPDATE_KEPT:g} while a learned state of equal size with "
                    f"input-dependent decay (the selective scan or the GRU) reaches >= {UPDATE_KEPT:g} with its lower "
                    f"95% CI above the oracle's upper CI; no if wherever such a state reaches {UPDATE_KEPT:g} the "
                    f"fixed-bank oracle does too; otherwise {NOT_ATTRIBUTABLE}")
    return rule


def update_learnable(prefix: str = "update_acc_", control: str = "transformer",
                     learned: tuple[str, ...] = SELECTIVE_STATES + ("spen",)) -> Gate:
    """Informative only if the positive control (the Transformer) reaches :data:`UPDATE_SOLVED` at every
    gap and some learned state of equal size reaches :data:`UPDATE_KEPT` at the smallest gap: else the
    recipe, not the state, is what fails."""
    def gate(m: Metrics) -> str | None:
        gaps = _sizes(m, f"{prefix}{control}_")
        if not gaps:
            return f"no {prefix}{control}_<gap> metric"
        low = [f"gap {d} {_m(m, f'{prefix}{control}_{d}'):.2f}" for d in gaps
               if _m(m, f"{prefix}{control}_{d}") < UPDATE_SOLVED]
        if low:
            return f"the Transformer is below {UPDATE_SOLVED:g} at {', '.join(low)}: the recipe fails the positive control"
        d = gaps[0]
        seen = {s: _m(m, f"{prefix}{s}_{d}") for s in learned if f"{prefix}{s}_{d}" in m}
        if any(v >= UPDATE_KEPT for v in seen.values()):
            return None
        return (f"no learned state reaches {UPDATE_KEPT:g} at gap {d} ("
                + ", ".join(f"{s} {v:.2f}" for s, v in seen.items()) + "): the recipe does not teach the task")
    return gate
