"""The report's power gates: summarised metrics -> the reason an experiment has no power, or None."""
from __future__ import annotations

from typing import Iterable

from ._base import Gate, Metrics, _ci, _m, _sizes

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


def beats_negative_controls(name: str, controls: Iterable[str]) -> Gate:
    """Informative only if ``name`` beats every negative control that was measured (a model that
    lacks what the claim credits, e.g. SPCN without learning) with 95% CIs apart, and at least
    one was: a number that the negative control reaches too is not attributable to the
    claimed mechanism (our design)."""
    controls = tuple(controls)

    def gate(m: Metrics) -> str | None:
        present = [c for c in controls if c in m]
        if not present:
            return f"no negative control measured ({', '.join(controls)})"
        ties = [f"{c} {_m(m, c):.3f} ± {_ci(m, c):.3f}" for c in present
                if not _m(m, name) - _ci(m, name) > _m(m, c) + _ci(m, c)]
        if not ties:
            return None
        return (f"{name} {_m(m, name):.3f} ± {_ci(m, name):.3f} does not beat the negative control(s) "
                f"{'; '.join(ties)} with CIs apart: the number is not attributable to what the claim credits")
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
