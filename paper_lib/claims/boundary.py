"""The claims of notebook 06 (the boundary map): fixed-rate traces keep structure where they lose
identity (in time), and fixed-coefficient accumulation dilutes across depth (in depth).

Rows, the words for notebook 06's metrics, and the gates only this family uses (the learned state
and the oracle as controls, a task learnable at all); the rules that decide the rows, contrasts
with converged controls, are :mod:`paper_lib.claims.boundary_rules`. The absolute rules below
(structure outliving identity, dilution across depth) read the map without deciding a row.
Our design: the paper runs neither map.
"""
from __future__ import annotations

import re

from ..pipeline.labels import Labels
from ..pipeline.report import Claim, Claims
from ..pipeline.rules import Gate, Metrics, Rule, first_gate, unless_cut
from ..pipeline.rules import ci as _ci
from ..pipeline.rules import mean as _m
from ..pipeline.rules import sizes as _sizes
from .boundary_rules import depth_carry_selection, fastest_learned, reads_nothing, traces_keep_structure

# --------------------------------------------------------------------------- the metrics and their words

DEPTH_ARMS = {"plain": "plain residual", "decay": "fixed-decay residual", "dwa": "learned depth weights",
              "gate": "input-dependent write gate", "highway": "highway (input-dependent carry, carry-biased start)",
              "static": "static highway (one learned carry for every input)", "lnscale": "fixed 1/sqrt(l) rescaling"}
"""The residual rules of panel B (:data:`paper_lib.models.depth_probe.ARMS`), in words."""

METRICS: dict[str, dict[str, str]] = {"06_boundary_map": {
    "time_identity_bank": "token identity from the fixed trace bank (linear probe)",
    "time_identity_bank_easy": "token identity from the fixed trace bank, easiest cell",
    "time_structure_bank": "structural class from the fixed trace bank",
    "time_identity_gru": "token identity from the GRU state (equal size)",
    "time_identity_gru_easy": "token identity from the GRU state, easiest cell",
    "time_structure_gru": "structural class from the GRU state (equal size)",
    "time_identity_scan": "token identity from the selective scan's state (equal size)",
    "time_identity_scan_easy": "token identity from the selective scan's state, easiest cell",
    "time_structure_scan": "structural class from the selective scan's state (equal size)",
    "time_identity_oracle": "token identity, best reader of the fixed traces (oracle)",
    "time_structure_oracle": "structural class, best reader of the fixed traces (oracle)",
    "time_cut_{who}_improving": "{who} cut at its step cap while still improving, rule's cell (share of seeds)",
    "time_cut_{who}_plateau": "{who} never left the chance loss, rule's cell (share of seeds)",
    "time_identity_oracle_slow": "token identity, best reader of the slow trace bank (oracle)",
    "time_structure_oracle_slow": "structural class, best reader of the slow trace bank (oracle)",
    "time_identity_gru_heads": "token identity, the GRU read by its own heads",
    "time_structure_gru_heads": "structural class, the GRU read by its own heads",
    "time_identity_scan_heads": "token identity, the selective scan read by its own heads",
    "time_structure_scan_heads": "structural class, the selective scan read by its own heads",
    "time_identity_lti_scan_heads": "token identity, the time-invariant scan read by its own heads",
    "time_structure_lti_scan_heads": "structural class, the time-invariant scan read by its own heads",
    "time_steps_lti_scan": "time-invariant scan training steps before it stopped",
    "time_identity_oracle_far": "token identity at the largest lag, oracle (negative control)",
    "time_steps_gru": "GRU training steps before it stopped",
    "time_steps_scan": "selective scan training steps before it stopped",
    "depth_{target}_acc_{arm}_{L}": "{arm}, {target} at L={L}",
    "depth_{target}_acc_{arm}_{L}_d{d}": "{arm}, {target} at L={L}, d_model {d}",
    "depth_steps_to_criterion_{arm}_{L}": "{arm}, steps to the criterion at L={L}",
    "depth_steps_to_criterion_{arm}_{L}_d{d}": "{arm}, steps to the criterion at L={L}, d_model {d}",
    "depth_cut_{arm}_{L}_improving": "{arm} cut at its step cap while still improving at L={L} (share of seeds)",
    "depth_cut_{arm}_{L}_plateau": "{arm} never left the chance loss at L={L} (share of seeds)",
    "depth_cut_{arm}_{L}_d{d}_improving": "{arm} cut at its step cap while still improving at L={L}, d_model {d} "
                                          "(share of seeds)",
    "depth_cut_{arm}_{L}_d{d}_plateau": "{arm} never left the chance loss at L={L}, d_model {d} (share of seeds)",
}}
"""What notebook 06 writes (a name in braces is a field), with the words a reader sees for it."""
NOT_AT_SMOKE = frozenset({"depth_{target}_acc_{arm}_{L}_d{d}", "depth_steps_to_criterion_{arm}_{L}_d{d}",
                          "depth_cut_{arm}_{L}_d{d}_improving", "depth_cut_{arm}_{L}_d{d}_plateau",
                          "time_identity_oracle_slow", "time_structure_oracle_slow"})
"""Metrics of :data:`METRICS` a smoke run does not write: it runs one width of panel B (a width's
own suffix ``_d<d_model>`` marks every width but the headline one), and the slow bank's oracle
only where ``oracle_banks`` names that bank (the cpu budget reads the paper's bank alone)."""

LABELS = Labels(METRICS["06_boundary_map"], {
    "arm": DEPTH_ARMS, "L": r"\d+", "d": r"\d+",
    "who": {"gru": "GRU", "scan": "selective scan", "lti_scan": "time-invariant scan",
            "oracle": "oracle of the fixed traces"},
    "target": {"both": "first token and state", "copy": "first token", "state": "state"}})

# --------------------------------------------------------------------------- rules and gates only this family uses

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

# --------------------------------------------------------------------------- the claims

CLAIMS = Claims((
    Claim("time_map", "Fixed-rate traces keep the token's class where they lose its identity, against a learned state "
          "of equal size trained until its held-out accuracy is flat (lag 2, vocabulary / width 16; float32, no "
          "added noise: what a reader fitted on the traces gets, not what exact arithmetic holds)",
          "beyond the paper (its boundary, mapped)", None, "06_boundary_map",
          ("time_identity_oracle", "time_structure_oracle", "time_identity_gru_heads", "time_structure_gru_heads"),
          unless_cut(traces_keep_structure("time_identity_oracle", "time_structure_oracle", (
              ("GRU", "time_identity_gru_heads", "time_structure_gru_heads"),
              ("selective scan", "time_identity_scan_heads", "time_structure_scan_heads"))),
                     {"the GRU": "time_cut_gru_", "the selective scan": "time_cut_scan_",
                      "the oracle of the fixed traces": "time_cut_oracle_"}),
          gate=first_gate(learned_state_keeps("time_identity_gru_easy", 0.5),
                          reads_nothing("time_identity_oracle_far")),
          prefixes=("time_identity_scan_heads", "time_structure_scan_heads", "time_identity_bank", "time_structure_bank",
                    "time_identity_gru", "time_structure_gru", "time_identity_scan", "time_structure_scan",
                    "time_identity_oracle_far", "time_steps_", "time_identity_lti_scan_heads",
                    "time_structure_lti_scan_heads"),
          shown=("time_cut_",),
          figure="time_by_lag.png", headline="time_identity_oracle", versus="time_identity_gru_heads",
          controls="positive: the GRU keeps identity where it is easy (lag 1, vocabulary / width 1: linear probe "
                   ">= 0.5), and the learned states trained until flat by the one stopping rule (none cut at its step "
                   "cap in any seed); negative: the oracle reads no identity at the largest lag (upper 95% CI <= "
                   "0.05); upper bound: the oracle of the fixed traces, an MLP per lag fed fresh sequences until its "
                   "held-out accuracy is flat (none cut in any seed), read against the learned states' own linear "
                   "heads",
          figures=("time_map", "time_by_lag")),
    Claim("depth_map", "Across 16 layers (d_model 16 and 32): does a fixed decay below 1 forget the first input, do "
          "learned coefficients learn the state chain in fewer steps than the fixed residual sum, and is the fastest "
          "learner input-dependent?", "the paper's general principle", None, "06_boundary_map", (),
          depth_carry_selection(),
          gate=depth_learnable(), prefixes=("depth_steps_to_criterion_", "depth_copy_acc_", "depth_both_acc_"),
          figure="depth_map.png", headline="depth_steps_to_criterion_plain_", versus=fastest_learned(),
          controls="positive: some rule keeps both the copy and the state at 0.9 at the shallowest depth, and the plain "
                   "residual keeps the copy of the first input at the deepest; negative: the fixed decay 0.5 loses the "
                   "first input at the deepest depth (copy below 0.5, below the plain residual's); every seed of every "
                   "rule trains until the one stopping rule stops it (the criterion reached, flat, or its 6,000-step "
                   "cap; learning curves drawn), the carry gates starting as carriers (bias -3); the input-dependence "
                   "control: static, the highway with one gate for every input",
          figures=("depth_map", "depth_learning_curves")),
), LABELS)
