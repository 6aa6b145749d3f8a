"""The claim of notebook 07 (key-update recall at equal state, under a stated noise budget): fixed
decay loses what input-dependent selection keeps.

Its row of the report, the metrics notebook 07 writes with their words, the rule and the power
gate, and the bars the notebook's prose and tables read (:mod:`paper_lib.experiments.update_tables`).
The rule reads, at the headline noise: ``update_acc_<state>_<gap>`` per seed for the selective scan
and the time-invariant scan (the same scan, its decay input-independent: the control that isolates
selection, as S4 stands to Mamba's S6); ``update_bound_best_fixed_<gap>``, the Bayes bound maximised
over a stated family of fixed-decay banks of the same 243 numbers (an upper bound for every reader
of every bank in it); the stop reasons of the arms it reads (``update_cut_<state>_improving`` and
``_plateau``); and, for the gate, the Transformer and the calibration at gap 2. The GRU is shown
beside it as "selection or nonlinear state" (its saturating gates can also correct noise), SPEN
only where its calibration passed. Written before the cpu run that decides it; it can go either
way. Our design: the paper is silent.
"""
from __future__ import annotations

from ..pipeline.labels import Labels
from ..pipeline.report import Claim, Claims
from ..pipeline.rules import Gate, Metrics, Rule, ci, cut_arms, mean, sizes, unless_cut

# --------------------------------------------------------------------------- the metrics and their words

ORACLE = "bank_oracle"
"""The MLP oracle of the paper's fixed one-hot bank (fitted on fresh sequences, not trained as a model)."""
UPDATE_STATES = {ORACLE: "fixed-bank oracle", "scan": "selective scan", "lti_scan": "time-invariant scan",
                 "gru": "GRU (selection or nonlinear state)", "spen": "SPEN-linear", "transformer": "Transformer"}
"""The states notebook 07 trains or fits (``update_acc_<state>_<gap>``), in words, in the figure's order."""

METRICS: dict[str, dict[str, str]] = {"07_update_recall": {
    "update_acc_{state}_{gap}": "{state}, latest value at gap {gap}",
    "update_cut_{state}_improving": "{state} cut at its step cap while still improving (share of seeds)",
    "update_cut_{state}_plateau": "{state} never left the chance loss (share of seeds)",
    "update_calib_acc_{state}": "{state} at gap 2 without noise (calibration, one seed)",
    "update_calib_learned_{state}": "{state} left the chance loss at gap 2 (calibration)",
    "update_bound_best_fixed_{gap}": "best fixed-decay bank of the family, Bayes bound at gap {gap}",
    "update_best_fixed_{end}_{gap}": "the best fixed bank's {end} rate at gap {gap}",
    "update_best_fixed_groups_{gap}": "the best fixed bank's number of rates at gap {gap}",
    "update_bound_family_size": "fixed banks in the family searched",
    "update_bound_dense_{gap}": "Bayes bound of the paper's rates with a dense code, gap {gap}",
    "update_bound_{gap}": "Bayes bound of the paper's one-hot bank, gap {gap}",
    "update_bayes_{gap}": "Bayes reader of the paper's one-hot bank, gap {gap}",
    "update_baseline_any_{gap}": "any-bound-value baseline, gap {gap}",
    "update_baseline_keys": "keys-ignored baseline (key update)",
    "update_state_{state}": "{state} state (numbers per sequence)",
    "update_sigma": "noise per state number per step",
}}
"""What notebook 07 writes (a name in braces is a field), with the words a reader sees for it."""

LABELS = Labels(METRICS["07_update_recall"], {"state": UPDATE_STATES, "gap": r"\d+",
                                              "end": {"fastest": "fastest", "slowest": "slowest"}})

# --------------------------------------------------------------------------- thresholds (the notebook's prose reads them too)

UPDATE_KEPT = 0.9
"""Accuracy at which a state keeps the latest binding (a fixed-bank bound below it has lost it)."""
UPDATE_SOLVED = 0.95
"""The positive control's bar: the Transformer must reach it at every gap."""
NOT_ATTRIBUTABLE = "not attributable at this budget"
"""The rule's third verdict: neither is selection shown to keep what every fixed bank loses, nor does
the fixed family reach it (or an arm the rule reads was cut)."""


def _calibrated(m: Metrics, state: str) -> bool:
    """``state`` left the chance loss and reached :data:`UPDATE_KEPT` at gap 2 in its calibration."""
    a, ok = f"update_calib_acc_{state}", f"update_calib_learned_{state}"
    return a in m and ok in m and mean(m, ok) >= 1 and mean(m, a) >= UPDATE_KEPT


# --------------------------------------------------------------------------- the rule and the gate

def selection_keeps(selective: str = "scan", invariant: str = "lti_scan", bound: str = "update_bound_best_fixed_",
                    shown: tuple[str, ...] = ("gru", "spen")) -> Rule:
    """The rule (its docstring, set below, is what the report prints); per gap of the selective scan's metrics."""
    def rule(m: Metrics) -> tuple[str, str]:
        gaps = sizes(m, f"update_acc_{selective}_")
        if not gaps:
            raise KeyError(f"no update_acc_{selective}_<gap> metric")
        yes, reached, parts = [], [], []
        for d in gaps:
            s, i, b = f"update_acc_{selective}_{d}", f"update_acc_{invariant}_{d}", f"{bound}{d}"
            s_lo, i_hi = mean(m, s) - ci(m, s), mean(m, i) + ci(m, i)
            if s_lo >= UPDATE_KEPT and s_lo > mean(m, b) and s_lo > i_hi:
                yes.append(d)
            if max(mean(m, b), i_hi) >= mean(m, s):
                reached.append(d)
            beside = [f"{UPDATE_STATES[x]} {mean(m, f'update_acc_{x}_{d}'):.2f}" for x in shown
                      if f"update_acc_{x}_{d}" in m and (x != "spen" or _calibrated(m, x))]
            parts.append(f"gap {d}: selective {mean(m, s):.2f} (lower CI {s_lo:.2f}), best fixed bank "
                         f"{mean(m, b):.2f}, time-invariant {mean(m, i):.2f} (upper CI {i_hi:.2f})"
                         + (f"; {', '.join(beside)}" if beside else ""))
        text = "; ".join(parts)
        if yes:
            return "yes", (f"{text} (at gap {', '.join(map(str, yes))} selection keeps what every fixed bank of the "
                           "family loses)")
        if len(reached) == len(gaps):
            return "no", f"{text} (the fixed family reaches the selective scan at every gap)"
        return NOT_ATTRIBUTABLE, text
    rule.__doc__ = (f"yes if at some gap the selective scan's lower 95% CI over seeds is at least {UPDATE_KEPT:g} and "
                    "above both the best fixed-decay bank's Bayes bound and the time-invariant scan's upper CI; no if "
                    "at every gap that bound or the time-invariant scan's upper CI reaches the selective scan's mean; "
                    f"otherwise {NOT_ATTRIBUTABLE}")
    return unless_cut(rule, {UPDATE_STATES[x]: f"update_cut_{x}_" for x in (selective, invariant)}, NOT_ATTRIBUTABLE)


def update_learnable(control: str = "transformer", selective: str = "scan") -> Gate:
    """Informative only if the positive control (the Transformer) reaches :data:`UPDATE_SOLVED` at every
    gap and the selective scan learns the task at gap 2 (its calibration): else the recipe, not the
    state, is what fails."""
    def gate(m: Metrics) -> str | None:
        gaps = sizes(m, f"update_acc_{control}_")
        if not gaps:
            return f"no update_acc_{control}_<gap> metric"
        low = [f"gap {d} {mean(m, f'update_acc_{control}_{d}'):.2f}" for d in gaps
               if mean(m, f"update_acc_{control}_{d}") < UPDATE_SOLVED]
        if low:
            why = cut_arms(m, {"the Transformer": f"update_cut_{control}_"})
            return (f"the Transformer is below {UPDATE_SOLVED:g} at {', '.join(low)}: the recipe fails the positive "
                    "control" + (f" ({why})" if why else ""))
        if not _calibrated(m, selective):
            a = f"update_calib_acc_{selective}"
            got = f" ({mean(m, a):.2f})" if a in m else ""
            return (f"the selective scan does not learn the task at gap 2 without noise{got}: the recipe does not "
                    "teach it")
        return None
    return gate


# --------------------------------------------------------------------------- the claim

CLAIMS = Claims((
    Claim("update_recall", "Input-dependent decay keeps what fixed decay loses: the selective scan against the best "
          "fixed-decay bank of equal state (243 numbers, 1 to 243 fixed rates in 0.005-0.9, one-hot, dense or "
          "per-rate codes) and the same scan with time-invariant rates (key update, noise 0.02 per number per step)",
          "beyond the paper (the paper's mechanism)", None, "07_update_recall", (), selection_keeps(),
          gate=update_learnable(), prefixes=("update_acc_scan_", "update_acc_lti_scan_"),
          figure="update_by_gap.png",
          shown=("update_acc_", "update_cut_", "update_calib_", "update_best_fixed_", "update_bound_", "update_bayes_",
                 "update_baseline_", "update_state_", "update_sigma"),
          headline="update_acc_scan_", versus="update_bound_best_fixed_",
          figures=("update_by_gap", "update_learning_curves"),
          controls="positive: the Transformer of equal noise recalls the latest value (>= 0.95 at every gap), and the "
                   "selective scan learns the task at gap 2 without noise (calibration); negative: the same scan with "
                   "time-invariant learned rates (the control that isolates input dependence), and the exact baselines "
                   "(keys ignored; any value bound to the query key, about 0.42); upper bound: the Bayes accuracy of a "
                   "reader told every token but the query key's values, maximised over the stated family of fixed "
                   "banks of 243 numbers at noise 0.02 per number per step (closed form per bank, Monte-Carlo over "
                   "sequences); every arm trained until flat, its stop reason read by the rule"),
), LABELS)
