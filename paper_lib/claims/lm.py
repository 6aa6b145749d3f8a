"""The claims of the language-model notebooks (03 SPEN against the Transformer, 04 the predictor
ablation): the perplexity gap and the paper's three readers giving the same loss.

Rows, the gates only this family uses (the unigram line, in-context copying, an unbounded reader
beating the bounded ones) and the thresholds notebook 03's and 04's prose reads. The readers'
groups and words come from the predictors' own facts (:mod:`paper_lib.predictors`), so a new
predictor joins the ablation's rows, its gate and :data:`METRICS` without an edit here.
Our design: the paper states no tolerances.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from ..pipeline.labels import Labels
from ..pipeline.report import Claim, Claims
from ..pipeline.rules import Gate, Metrics, Rule, first_gate
from ..pipeline.rules import ci as _ci
from ..pipeline.rules import mean as _m
from ..predictors import ABLATION_PREDICTORS, BOUNDED_PREDICTORS, PAPER_PREDICTORS, PREDICTORS

# --------------------------------------------------------------------------- the metrics and their words

MODELS = {"spen": "SPEN", "transformer": "Transformer"}
"""Notebook 03's two language models, in words."""

METRICS: dict[str, dict[str, str]] = {
    "03_spen_train": {
        "ppl_ratio": "perplexity ratio SPEN / Transformer", "spen_val_ppl": "SPEN perplexity",
        "transformer_val_ppl": "Transformer perplexity",
        "transformer_induction_score": "Transformer induction score (nats)",
        "spen_induction_score": "SPEN induction score (nats)",
        "unigram_val_loss": "unigram loss on the held-out text (nats)",
        "bigram_val_loss": "counted bigram loss on the held-out text (nats)",
        "n_train_tokens": "training tokens",
        "{model}_val_loss": "{model} loss on the held-out text (nats)",
        "{model}_ood_ppl": "{model} out-of-domain perplexity",
        "{model}_repeat_loss": "{model} loss on tokens seen earlier in the document (nats)",
        "{model}_tokens_per_s": "{model} training tokens per second at the longest length",
    },
    "04_predictor_ablation": {
        **{f"loss_{n}": f"{PREDICTORS[n].label} (nats)" for n in ABLATION_PREDICTORS},
        "loss_transformer": "Transformer (nats)", "induction_transformer": "Transformer induction score (nats)",
        "unigram_val_loss": "unigram loss on the held-out text (nats)",
    },
}
"""What notebooks 03 and 04 write (a name in braces is a field), with the words a reader sees for it."""

LABELS = Labels({**METRICS["03_spen_train"], **METRICS["04_predictor_ablation"]}, {"model": MODELS})

PAPER = tuple(f"loss_{n}" for n in PAPER_PREDICTORS)
"""The losses of the paper's readers (the ablation's claim: the same loss)."""
BOUNDED = tuple(f"loss_{n}" for n in BOUNDED_PREDICTORS)
"""The losses of the readers bounded by the traces."""
UNBOUNDED = tuple(f"loss_{n}" for n in ABLATION_PREDICTORS if n not in BOUNDED_PREDICTORS) + ("loss_transformer",)
"""The losses of the readers that see more than the traces, and the Transformer's."""

# --------------------------------------------------------------------------- rules, gates and thresholds only this family uses

def at_least(name: str, yes: float, partly: float) -> Rule:
    """yes if ours >= yes; partly if >= partly; else no."""
    def rule(m: Metrics) -> tuple[str, str]:
        v = _m(m, name)
        return ("yes" if v >= yes else "partly" if v >= partly else "no"), f"{name} = {v:.3g}"
    rule.__doc__ = f"yes if {name} >= {yes:g}; partly if >= {partly:g}; else no"
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

# --------------------------------------------------------------------------- the claims

CLAIMS = Claims((
    Claim("ppl_gap", "EMA-only SPEN vs Transformer perplexity gap (C4: 260 vs 33)", "~7.9x (260 / 33)", 260 / 33,
          "03_spen_train",
          ("ppl_ratio", "spen_val_ppl", "transformer_val_ppl"), at_least("ppl_ratio", 3.9, 1.5),
          gate=first_gate(past_unigram(("spen", "transformer")),
                          copies_in_context("transformer_induction_score", "transformer_val_loss")),
          prefixes=("transformer_induction_score", "spen_induction_score"), figure="table3_perplexity.md",
          headline="ppl_ratio", versus="transformer_val_ppl", comparable=False,
          controls="positive: both models at least 1 nat below the unigram loss (they learned more than word "
                   "frequencies) and the Transformer copying in context (its induction score; the gate, so a gap "
                   "is not read off a Transformer that cannot use attention); negative: none that must fail (the "
                   "row measures a ratio of two trained models, not what the traces hold); rival: the Transformer "
                   "of matched depth, width and positions trained on the same tokens and steps",
          figures=("token_scaling", "induction_score", "learning_curves", "loss_by_repeat", "loss_by_position")),
    Claim("ablation", "Predictor ablation: linear, linear attention, softmax attention give the same loss",
          "7.60 nats, all three", 7.60, "04_predictor_ablation", PAPER, spread(PAPER, 0.02, 0.05),
          gate=first_gate(copies_in_context("induction_transformer", "loss_transformer"),
                          unbounded_beats_bounded(BOUNDED, UNBOUNDED)),
          prefixes=UNBOUNDED + ("induction_transformer",), figure="table4_ablation.md",
          versus="loss_softmax_attention", comparable=False,
          controls="positive: the Transformer copying in context, and a reader not bounded by the traces (token "
                   "attention, history attention, the selective reader or the Transformer) beating every bounded one "
                   "with CIs apart (the gates: a tie that no reader can break says nothing about the readers); "
                   "negative: none that must fail (the tie of the three paper readers is the claim); oracle: none is "
                   "run, so the tie shows three readers alike, not the lowest loss the traces allow",
          figures=("learning_curves", "loss_by_repeat")),
), LABELS)
