"""Rules and gates of the grammar family (:mod:`paper_lib.claims.grammar`) beyond its comparisons:
transfer credited to learning and context, deep embedding by attractor slope, content roles causal
against causal with their controls, and the lag comparison decided on bounds. Our design: the
paper states no tolerances."""
from __future__ import annotations

from typing import Iterable

from ..pipeline.rules import Gate, Metrics, Rule
from ..pipeline.rules import ci as _ci
from ..pipeline.rules import mean as _m
from ..pipeline.rules import sizes as _sizes

NOT_LEARNING = "the number; not attributable to learning"
NOT_CONTEXT = "the number; not attributable to context"


def _apart(m: Metrics, a: str, b: str) -> bool:
    """``a`` above ``b`` with 95% CIs apart."""
    return _m(m, a) - _ci(m, a) > _m(m, b) + _ci(m, b)


def all_solve(names: Iterable[str], threshold: float) -> Gate:
    """Informative only if every positive control of ``names`` reaches ``threshold`` (its mean)."""
    names = tuple(names)

    def gate(m: Metrics) -> str | None:
        short = [f"{n} {_m(m, n):.3f}" for n in names if _m(m, n) < threshold]
        return None if not short else (f"a positive control fails ({', '.join(short)} < {threshold:g}): "
                                       "the reader or the task does not work")
    return gate


def positive_beats(name: str, floor: str) -> Gate:
    """Informative only if the positive control ``name`` beats ``floor`` with 95% CIs apart (a reader
    that can do the task gets above what no reader of context can miss)."""
    def gate(m: Metrics) -> str | None:
        if _apart(m, name, floor):
            return None
        return (f"the positive control {name} {_m(m, name):.3f} ± {_ci(m, name):.3f} does not beat {floor} "
                f"{_m(m, floor):.3f} ± {_ci(m, floor):.3f} with CIs apart")
    return gate


def near_chance(name: str, chance: str, margin: float = 0.02) -> Gate:
    """Informative only if the negative control ``name`` fails: its upper 95% CI at most ``margin``
    above ``chance`` (a reader with nothing to read must read nothing)."""
    def gate(m: Metrics) -> str | None:
        hi, c = _m(m, name) + _ci(m, name), _m(m, chance)
        return None if hi <= c + margin else (f"the negative control {name} reads {_m(m, name):.3f} (upper 95% CI "
                                              f"{hi:.3f}) above chance {c:.3f} + {margin:g}: the reader learns "
                                              "from something other than the state")
    return gate


def fails_from(prefix: str, k_min: int, bar: float) -> Gate:
    """Informative only if the negative control ``<prefix><k>`` fails at every ``k >= k_min`` measured:
    its upper 95% CI below ``bar``."""
    def gate(m: Metrics) -> str | None:
        ks = [k for k in _sizes(m, prefix) if k >= k_min]
        if not ks:
            return f"no {prefix}<k> with k >= {k_min}: the negative control was not measured"
        up = [f"k={k} {_m(m, f'{prefix}{k}'):.3f}" for k in ks if _m(m, f"{prefix}{k}") + _ci(m, f"{prefix}{k}") >= bar]
        return None if not up else (f"the negative control {prefix}<k> does not fail ({', '.join(up)}; upper 95% CI "
                                    f">= {bar:g}): a surface heuristic does the task")
    return gate


def drops_without(with_word: str, without_word: str) -> Gate:
    """Informative only if the reader falls when the deciding word is unseen (``without_word`` below
    ``with_word``, CIs apart): otherwise the roles are decided without the word's identity."""
    def gate(m: Metrics) -> str | None:
        if _apart(m, with_word, without_word):
            return None
        return (f"the negative control {without_word} {_m(m, without_word):.3f} is not below {with_word} "
                f"{_m(m, with_word):.3f} with CIs apart: the roles do not need the word's identity")
    return gate


def learning_and_context(gain: str, margin: float, name: str, context_free: str, then: Rule) -> Rule:
    """The number first, then whether learning and context earn it (see the docstring set below)."""
    def rule(m: Metrics) -> tuple[str, str]:
        g, lo = _m(m, gain), _m(m, gain) - _ci(m, gain)
        if lo < margin:
            return NOT_LEARNING, (f"learning's paired gain {gain} {g:+.3f} ± {_ci(m, gain):.3f} is not above the "
                                  f"row's margin {margin:g}; {then(m)[1]}; {name} - {context_free} = "
                                  f"{_m(m, name) - _m(m, context_free):+.3f}")
        if not _apart(m, name, context_free):
            return NOT_CONTEXT, (f"{name} {_m(m, name):.3f} does not beat the context-free control {context_free} "
                                 f"{_m(m, context_free):.3f} with CIs apart")
        return then(m)
    rule.__doc__ = (f"{NOT_LEARNING} if learning's paired gain ({gain}, lower 95% CI) is below the row's margin "
                    f"{margin:g}; else {NOT_CONTEXT} if {name} does not beat {context_free} with CIs apart; else "
                    + (then.__doc__ or ""))
    return rule


def falls_faster(a: str, b: str) -> Rule:
    """yes if ``a``'s slope (accuracy per attractor) is below ``b``'s with 95% CIs apart; partly if
    below with CIs overlapping; else no."""
    def rule(m: Metrics) -> tuple[str, str]:
        sa, sb = _m(m, a), _m(m, b)
        apart = _apart(m, b, a)
        word = "yes" if apart else "partly" if sa < sb else "no"
        return word, (f"{a} {sa:+.4f} ± {_ci(m, a):.4f} against {b} {sb:+.4f} ± {_ci(m, b):.4f} per attractor "
                      f"({'CIs apart' if apart or _apart(m, a, b) else 'CIs overlap'})")
    rule.__doc__ = (f"yes if {a} is below {b} with 95% CIs apart (its accuracy falls faster as attractors pile up); "
                    "partly if below with CIs overlapping; else no")
    return rule


def lag_bounds(lags: tuple[int, ...] = (1, 2, 4), bank: str = "lag_oracle_bank_", gru: str = "lag_oracle_gru_",
               decoder: str = "lag_decoder_bank_", converged: str = "lag_oracle_{}_converged_") -> Rule:
    """The lag comparison on bounds (see the docstring set below). Per lag ``k`` each state's holding is an
    interval: from below its best reader (the bank: the better of its oracle and its closed-form decoder;
    the GRU: its oracle), from above 1, or its oracle where that converged in every seed (a reader fed fresh
    data until it stopped flat or solved: the house's upper bound; a reader cut at its cap bounds nothing
    from above). Both ends carry the readers' 95% CIs. The reason says, per lag, whether each oracle
    converged in every seed or was cut in some."""
    def status(m: Metrics, state: str, k: int) -> str:
        c = f"{converged.format(state)}{k}"
        return "no stop recorded" if c not in m else "flat in every seed" if _m(m, c) >= 1.0 else "cut in some seed"

    def interval(m: Metrics, state: str, names: tuple[str, ...], k: int) -> tuple[float, float, float, bool]:
        """(lowest, highest) of what ``state`` holds at lag ``k``, its best reading's mean, converged."""
        best = max((x for x in names if x in m), key=lambda x: _m(m, x))
        c, own = f"{converged.format(state)}{k}", names[0]
        flat = c in m and _m(m, c) >= 1.0
        lo, hi = _m(m, best) - _ci(m, best), _m(m, best) + _ci(m, best)
        return lo, (max(hi, _m(m, own) + _ci(m, own)) if flat else 1.0), _m(m, best), flat

    def rule(m: Metrics) -> tuple[str, str]:
        parts, gru_above, bank_reaches, bank_above = [], {}, {}, {}
        for k in lags:
            b_lo, b_hi, b, _ = interval(m, "bank", (f"{bank}{k}", f"{decoder}{k}"), k)
            g_lo, g_hi, g, g_flat = interval(m, "gru", (f"{gru}{k}",), k)
            b_read = b + _ci(m, max((x for x in (f"{bank}{k}", f"{decoder}{k}") if x in m), key=lambda x: _m(m, x)))
            gru_above[k] = g_lo > b_hi                         # the GRU holds more than the bank can
            bank_above[k] = b_lo > g_hi                        # the bank holds more than the GRU can
            bank_reaches[k] = b_read >= (g_lo if g_flat else 1.0)   # converged: within its reading's CI; else 1
            parts.append(f"lag {k}: bank oracle {_m(m, f'{bank}{k}'):.3f} ({status(m, 'bank', k)})"
                         + (f", decoder {_m(m, f'{decoder}{k}'):.3f}" if f"{decoder}{k}" in m else "")
                         + f", GRU oracle {g:.3f} ({status(m, 'gru', k)})")
        why = "; ".join(parts)
        if gru_above[max(lags)] and not any(bank_above.values()):
            return "yes", why
        if all(bank_reaches.values()):
            return "no", why + " (at every lag the bank holds what the GRU state can hold at most)"
        if any(gru_above.values()):
            return "partly", why
        return "not informative at this budget", why + " (the bounds overlap)"
    rule.__doc__ = (f"at lags {', '.join(map(str, lags))}, what a state holds is bounded below by its best reader "
                    "(the bank: its oracle fed fresh documents or its closed-form decoder; the GRU: the same oracle) and "
                    "above by 1, or by its oracle where that converged in every seed; yes if the GRU's lower bound "
                    "is above the bank's upper bound at the largest lag (95% CIs) and the bank is above the GRU at no lag; "
                    "no if at every lag the bank's reading reaches what the GRU can hold at most (1, or its converged "
                    "oracle within the CIs); partly if the GRU is above at a smaller lag only; else not informative at "
                    "this budget")
    return rule


EXACT = "exact arithmetic: not a test of the mechanism"
"""The verdict of a row about what fixed traces hold, run without a noise or precision budget."""


def at_noise(rule: Rule, sigma: str, budget: float) -> Rule:
    """``rule`` decided at the claim's noise budget (the docstring set below): the metric ``sigma`` is the
    noise per state number per step the run's states carried (one value per seed)."""
    def wrapped(m: Metrics) -> tuple[str, str]:
        s = _m(m, sigma)
        if s == 0 and _ci(m, sigma) == 0:
            return EXACT, (f"{sigma} = 0: the states carry no noise, and in exact arithmetic a fixed bank is a "
                           "lossless register of its last ~20 tokens (its closed-form decoder reads them back), so it "
                           "holds whatever a learned state holds at the lags it reaches: a test of float precision")
        if abs(s - budget) > 1e-12 or _ci(m, sigma) > 0:
            return "not informative at this budget", (f"the run's noise {sigma} = {s:g} is not the claim's budget "
                                                      f"{budget:g} per number per step")
        word, why = rule(m)
        return word, f"at noise {budget:g} per number per step: {why}"
    wrapped.__doc__ = (f"at the claim's noise budget, {budget:g} per state number per step ({sigma}; at 0: {EXACT}; at "
                       f"another noise: not informative at this budget): " + (rule.__doc__ or ""))
    return wrapped
