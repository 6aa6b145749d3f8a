"""The claims of notebook 05 (associative recall): attention recalls what SPEN's compressed state
does not, and whether the loss is the fixed traces' own.

Rows, the rules only this family uses (the recall gap, the attribution of a failure), the
positive control's bar, and the thresholds the notebook's prose and tables read
(:mod:`paper_lib.experiments.recall_tables`), so no sentence states a verdict of its own.
Our design: the paper has no recall experiment.
"""
from __future__ import annotations

from typing import Mapping

from ..pipeline.labels import Labels
from ..pipeline.report import Claim, Claims
from ..pipeline.rules import Gate, Metrics, Rule, any_solves, unless_cut
from ..pipeline.rules import ci as _ci
from ..pipeline.rules import mean as _m
from ..pipeline.rules import sizes as _sizes
from ..predictors import ABLATION_PREDICTORS

# --------------------------------------------------------------------------- the metrics and their words

LEARNERS = {"spen": "SPEN", "transformer": "Transformer", "gru": "GRU (equal state)", "oracle": "trace oracle",
            "spen_selective": "SPEN-selective"}
"""The models of the per-N families (``spen``: the paper's reader, ``linear``), in words."""

READER_WORDS = {"linear": "linear", "linear_attention": "linear attention", "softmax_attention": "softmax attention",
                "history_attention": "attention over past traces", "selective": "selective (equal state)",
                "token_attention": "token attention", "bank_attention": "attention over the bank"}
"""SPEN's readers of its traces (:mod:`paper_lib.predictors`), in words."""
MODEL_WORDS = {**{f"spen_{r}": f"SPEN, {w} reader" for r, w in READER_WORDS.items()},
               "transformer": "Transformer", "gru": "GRU (equal state)", "oracle": "trace oracle"}
"""Notebook 05's models (``spen_<reader>``, ``transformer``, ``gru``, ``oracle``), in words."""

METRICS: dict[str, dict[str, str]] = {"05_associative_recall": {
    "recall_acc_transformer": "Transformer recall, largest N", "recall_acc_gru": "GRU (equal state) recall, largest N",
    "recall_acc_oracle": "trace oracle recall, largest N",
    "recall_acc_{learner}_{N}": "{learner} recall, N={N}",
    "recall_acc_spen_{reader}": "SPEN-{reader} recall, largest N",
    "recall_baseline_{N}": "keys-ignored baseline, N={N}",
    "recall_drop_{learner}": "{learner} recall at the smallest N minus at the largest",
    "recall_state_{net}": "{net} state (numbers per sequence)",
    "recall_cut_{model}_improving": "{model} cut at its step cap while still improving (share of seeds)",
    "recall_cut_{model}_plateau": "{model} never left the chance loss (share of seeds)",
}}
"""What notebook 05 writes (a name in braces is a field), with the words a reader sees for it."""

LABELS = Labels(METRICS["05_associative_recall"],
                {"learner": LEARNERS, "N": r"\d+", "reader": {n: READER_WORDS.get(n, n) for n in ABLATION_PREDICTORS},
                 "model": MODEL_WORDS,
                 "net": {"gru": "GRU", "spen": "SPEN", "spen_selective": "SPEN-selective",
                         "oracle": "trace oracle (one bank)"}})

# --------------------------------------------------------------------------- thresholds (the notebook's prose reads them too)

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

# --------------------------------------------------------------------------- rules and gates only this family uses

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


def solves(name_prefix: str, threshold: float) -> Gate:
    """Informative only if the positive control reaches ``threshold`` at its largest N."""
    def gate(m: Metrics) -> str | None:
        ns = _sizes(m, name_prefix)
        if not ns:
            return f"no {name_prefix}<N> metric"
        v = _m(m, f"{name_prefix}{ns[-1]}")
        return None if v >= threshold else f"the Transformer reaches {v:.2f} < {threshold:g} at N={ns[-1]}: the recipe fails"
    return gate

# --------------------------------------------------------------------------- the claims

CLAIMS = Claims((
    Claim("recall", "Attention recalls what SPEN as trained does not (associative recall, SPEN vs the Transformer as N "
          "grows; whether the traces themselves hold the key is the next row's question)", "beyond the paper", None,
          "05_associative_recall", (),
          unless_cut(recall_gap("recall_acc_spen_", "recall_acc_transformer_"),
                     {"SPEN": "recall_cut_spen_linear_", "the Transformer": "recall_cut_transformer_"},
                     NOT_ATTRIBUTABLE),
          gate=solves("recall_acc_transformer_", RECALL_SOLVED), prefixes=("recall_acc_spen_", "recall_acc_transformer_"),
          figure="recall_by_pairs.png", shown=("recall_baseline_",),
          headline="recall_acc_spen_", versus="recall_acc_transformer_",
          controls="positive: the Transformer must recall at 0.95 at the largest N (the recipe can learn the task; "
                   "the gate); negative: the keys-ignored baseline (chance), shown, which SPEN must leave at the "
                   "smallest N for its fall with N to count; every learned model's learning rate is chosen from at "
                   "least three on validation sequences, and every run trains until the one stopping rule stops it "
                   "(none of SPEN's or the Transformer's runs cut at its step cap)",
          figures=("recall_by_pairs", "recall_capacity", "recall_by_distance")),
    Claim("recall_attribution", "SPEN's recall loss is the fixed traces' own: the best reader of one trace bank (the "
          "oracle; its state beside SPEN's in the numbers) fails where a learned recurrence of equal state succeeds. "
          "Single-hop recall of distinct keys cannot reach the traces' own loss at any N (a task where a key's value "
          "is updated can). Precision: float32 traces, no added noise, so a yes here would say what a reader fitted "
          "on them gets, a no that the key is in them", "beyond the paper (the paper's mechanism)", None,
          "05_associative_recall", (),
          unless_cut(traces_lose("recall_acc_spen_", ("recall_acc_gru_", "recall_acc_spen_selective_"),
                                 "recall_acc_oracle_"),
                     {"SPEN": "recall_cut_spen_linear_", "the GRU": "recall_cut_gru_",
                      "SPEN-selective": "recall_cut_spen_selective_", "the trace oracle": "recall_cut_oracle_"},
                     NOT_ATTRIBUTABLE),
          gate=any_solves(("recall_acc_transformer", "recall_acc_spen_token_attention"), RECALL_SOLVED),
          prefixes=("recall_acc_spen_", "recall_acc_gru_", "recall_acc_spen_selective_", "recall_acc_oracle_"),
          figure="recall_by_pairs.png",
          shown=("recall_baseline_", "recall_state_"), headline="recall_acc_oracle_", versus="recall_acc_spen_",
          controls="positive: the Transformer or SPEN with token attention must recall at 0.95 (the gate), and a "
                   "learned recurrence of equal state (the GRU, SPEN-selective) must recall where the traces are said "
                   "to lose the key; negative: SPEN as trained, which must fail where the row is decided; oracle: "
                   "a low-rank reader of one trace bank trained on fresh sequences (its state, one bank, is shown "
                   "beside SPEN's traces across its layers); what it recalls is a lower bound of "
                   "what the bank holds, so its success can decide no, its failure yes only where it is the best fit; "
                   "every run (the oracle's fit too) trains until the one stopping rule stops it, none cut at its cap",
          figures=("recall_by_pairs",)),
), LABELS)
