"""The claim of notebook 07 (key-update recall at equal state, under a stated noise budget): fixed
decay loses what input-dependent selection keeps.

Its row of the report, the metrics notebook 07 writes with their words, the rule and the power
gate, and the bars the notebook's prose and tables read (:mod:`paper_lib.experiments.update_tables`).
The rule reads ``update_acc_<state>_<gap>`` (per seed, at the headline noise), ``update_bound_<gap>``
(the Bayes bound of the one-hot fixed bank: an upper bound for any of its readers) and
``update_bound_dense_<gap>`` (the same bound for an orthogonal code that uses every number's range).
It is written before the cpu run that decides it, and it can go either way. Our design: the paper
is silent.
"""
from __future__ import annotations

from ..pipeline.labels import Labels
from ..pipeline.report import Claim, Claims
from ..pipeline.rules import Gate, Metrics, Rule, ci, mean, sizes

# --------------------------------------------------------------------------- the metrics and their words

ORACLE = "bank_oracle"
"""The MLP oracle of the fixed one-hot bank (fitted on fresh sequences, not trained as a model)."""
UPDATE_STATES = {ORACLE: "fixed-bank oracle", "scan": "selective scan", "gru": "GRU", "spen": "SPEN-linear",
                 "transformer": "Transformer"}
"""The states notebook 07 trains or fits (``update_acc_<state>_<gap>``), in words, in the figure's order."""

METRICS: dict[str, dict[str, str]] = {"07_update_recall": {
    "update_acc_{state}_{gap}": "{state}, latest value at gap {gap}",
    "update_oracle_converged_{gap}": "fixed-bank oracle fit flat at gap {gap} (share of seeds)",
    "update_bound_dense_{gap}": "Bayes bound of a dense-code fixed bank, gap {gap}",
    "update_bound_{gap}": "Bayes bound of the fixed bank, gap {gap}",
    "update_bayes_{gap}": "Bayes reader of the fixed bank, gap {gap}",
    "update_baseline_any_{gap}": "any-bound-value baseline, gap {gap}",
    "update_baseline_keys": "keys-ignored baseline (key update)",
    "update_state_{state}": "{state} state (numbers per sequence)",
    "update_sigma": "noise per state number per step",
}}
"""What notebook 07 writes (a name in braces is a field), with the words a reader sees for it."""

LABELS = Labels(METRICS["07_update_recall"], {"state": UPDATE_STATES, "gap": r"\d+"})

# --------------------------------------------------------------------------- thresholds (the notebook's prose reads them too)

UPDATE_KEPT = 0.9
"""Accuracy at which a state keeps the latest binding (a fixed-bank bound below it has lost it)."""
UPDATE_SOLVED = 0.95
"""The positive control's bar: the Transformer must reach it at every gap."""
SELECTIVE_STATES = ("scan", "gru")
"""The learned states with input-dependent decay (the selective scan and the GRU's gates): the states
the claim credits. SPEN (fixed decay, two blocks) is shown beside them, never counted for them."""
NOT_ATTRIBUTABLE = "not attributable at this budget"
"""The rule's third verdict: a selective state keeps what the oracle misses, but the bank is not
shown to have lost it (a bound at or above the bar, or CIs that overlap)."""

# --------------------------------------------------------------------------- the rule and the gate

def update_kept(prefix: str = "update_acc_", oracle: str = "bank_oracle", bound: str = "update_bound_",
                dense: str = "update_bound_dense_", learned: tuple[str, ...] = SELECTIVE_STATES,
                shown: tuple[str, ...] = ("spen",)) -> Rule:
    """The rule (its docstring, set below, is what the report prints); per gap of the oracle's metrics."""
    def rule(m: Metrics) -> tuple[str, str]:
        gaps = sizes(m, f"{prefix}{oracle}_")
        if not gaps:
            raise KeyError(f"no {prefix}{oracle}_<gap> metric")
        yes, no, kept, parts = [], True, False, []
        for d in gaps:
            o = f"{prefix}{oracle}_{d}"
            o_hi = mean(m, o) + ci(m, o)
            lost = o_hi < UPDATE_KEPT and mean(m, f"{bound}{d}") < UPDATE_KEPT and mean(m, f"{dense}{d}") < UPDATE_KEPT
            names = [f"{prefix}{s}_{d}" for s in learned if f"{prefix}{s}_{d}" in m]
            keeps = [n for n in names if mean(m, n) >= UPDATE_KEPT]
            if lost and any(mean(m, n) - ci(m, n) > o_hi for n in keeps):
                yes.append(d)
            kept = kept or bool(keeps)
            if keeps and mean(m, o) < UPDATE_KEPT:
                no = False
            each = ", ".join(f"{n[len(prefix):-len(str(d)) - 1]} {mean(m, n):.2f}" for n in names + [
                f"{prefix}{s}_{d}" for s in shown if f"{prefix}{s}_{d}" in m])
            parts.append(f"gap {d}: oracle {mean(m, o):.2f} (upper CI {o_hi:.2f}), bound {mean(m, f'{bound}{d}'):.2f}, "
                         f"dense-code bound {mean(m, f'{dense}{d}'):.2f}; {each}")
        text = "; ".join(parts)
        spen = [d for d in gaps for s in shown if f"{prefix}{s}_{d}" in m and mean(m, f"{prefix}{s}_{d}") >= UPDATE_KEPT
                and mean(m, f"{prefix}{oracle}_{d}") < UPDATE_KEPT]
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
        gaps = sizes(m, f"{prefix}{control}_")
        if not gaps:
            return f"no {prefix}{control}_<gap> metric"
        low = [f"gap {d} {mean(m, f'{prefix}{control}_{d}'):.2f}" for d in gaps
               if mean(m, f"{prefix}{control}_{d}") < UPDATE_SOLVED]
        if low:
            return f"the Transformer is below {UPDATE_SOLVED:g} at {', '.join(low)}: the recipe fails the positive control"
        d = gaps[0]
        seen = {s: mean(m, f"{prefix}{s}_{d}") for s in learned if f"{prefix}{s}_{d}" in m}
        if any(v >= UPDATE_KEPT for v in seen.values()):
            return None
        return (f"no learned state reaches {UPDATE_KEPT:g} at gap {d} ("
                + ", ".join(f"{s} {v:.2f}" for s, v in seen.items()) + "): the recipe does not teach the task")
    return gate


# --------------------------------------------------------------------------- the claim

CLAIMS = Claims((
    Claim("update_recall", "Fixed decay loses what input-dependent selection keeps (key update, equal state, noise "
          "budget)", "beyond the paper (the paper's mechanism)", None, "07_update_recall", (), update_kept(),
          gate=update_learnable(), prefixes=("update_acc_",), figure="update_by_gap.png",
          shown=("update_bound_", "update_bayes_", "update_oracle_converged_", "update_baseline_", "update_state_",
                 "update_sigma"), headline="update_acc_bank_oracle_", versus="update_acc_scan_", figures=("update_by_gap", "update_learning_curves"),
          controls="positive: the Transformer of equal noise recalls the latest value (>= 0.95 at every gap), and a "
                   "learned state reaches 0.9 at gap 2; negative: the exact baselines (keys ignored; any value bound to "
                   "the query key, about 0.42) must stay below the learned states; oracle: the Bayes accuracy of "
                   "telling the bindings' order from the one-hot bank's noisy coefficients (closed form, an upper "
                   "bound on any reader of the fixed bank), beside the MLP oracle fed fresh sequences"),
), LABELS)
