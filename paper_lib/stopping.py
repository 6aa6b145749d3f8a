"""One stopping rule for every small-model training loop: train until the held-out curve is flat,
and never stop a run on its initial plateau.

Recall and induction tasks start with a long plateau at the chance loss (Olsson et al. 2022 on
induction heads; Zoology's associative recall): the loss sits at the loss of the best answer that
ignores the mechanism until the circuit forms, then falls. A patience counter that starts counting
there stops a run that never began, and a step budget that ends there reads "cannot" where the
truth is "not yet". This module is the rule, defined once (our design: the paper gives no recipe):

- Every ``check_every`` steps a loop reports, per run, its **training loss** (nats, the mean over
  the steps since the previous check) and its **held-out accuracy** (a fraction, on a fixed set of
  ``n_heldout`` examples).
- A run is **on the plateau** while its training loss is above ``chance_loss - margin``:
  ``chance_loss`` is the loss of the best answer that ignores the mechanism, ``ln`` of the number of
  answers for a uniform answer (:func:`chance_loss`), ``margin`` (default 0.05 nats) the distance
  below it that counts as leaving. A run on the plateau is never stopped before its cap.
- A run is **solved** once its held-out accuracy reaches ``solved`` (a bar of the task's, e.g. 0.99).
- A run is **flat** once, past its ``min_steps`` and off the plateau, its best held-out accuracy
  has gained less than ``tol`` over the last ``patience`` checks.
- At its cap ``max_steps`` a run still going is **flat** (the same test), **never_left_plateau** (on the
  plateau at its last check) or **cap_while_improving** (anything else: it was still learning).

The held-out set must resolve ``tol``: the standard error of an accuracy on ``n`` examples is at
most ``0.5 / sqrt(n)`` (:func:`accuracy_se`), and :class:`StopRule` refuses a set whose bound
exceeds ``tol`` (at the default ``tol`` 0.01 that is at least 2,500 examples). Every run records
why it stopped (:data:`REASONS`); a verdict that reads an arm cut at ``cap_while_improving`` or
``never_left_plateau`` says so (:func:`cut_metrics` writes it into ``metrics.json`` for the claims).

:class:`Stopper` applies the rule to ``G`` runs trained side by side (independent seeds or readers
in one batched model; a single run is ``G = 1``); arrays are ``(G,)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .pipeline.settings import check_fields, setting

REASONS: tuple[str, ...] = ("solved", "flat", "cap_while_improving", "never_left_plateau")
"""Why a run stopped: it reached the task's bar; its held-out curve was flat; it reached its step cap
still improving; it reached its cap with its training loss still at the chance loss."""
CUT: tuple[str, ...] = ("cap_while_improving", "never_left_plateau")
"""The reasons of a run that was cut: more steps could have changed what it reads."""


def accuracy_se(n: int) -> float:
    """The largest standard error of an accuracy measured on ``n`` examples: ``0.5 / sqrt(n)``
    (a proportion's at p = 0.5). Raises ValueError: ``n < 1``."""
    if n < 1:
        raise ValueError(f"a held-out set needs at least 1 example, got {n}")
    return 0.5 / math.sqrt(n)


def chance_loss(n_answers: int) -> float:
    """``ln(n_answers)`` nats: the loss of a uniform guess among ``n_answers`` equally likely answers.
    Raises ValueError: ``n_answers < 1``."""
    if n_answers < 1:
        raise ValueError(f"the number of answers must be >= 1, got {n_answers}")
    return math.log(n_answers)


def label_entropy(labels: np.ndarray, n_classes: int) -> float:
    """The entropy (nats) of the labels' empirical distribution: the loss of the best label-blind
    guess, the chance loss of a task whose answers are not uniform."""
    p = np.bincount(np.asarray(labels).ravel(), minlength=n_classes).astype(float)
    p = p[p > 0] / p.sum()
    return float(-(p * np.log(p)).sum())


@dataclass(frozen=True)
class StopRule:
    """The stopping rule's settings (the module docstring says what each does); a loop's cap and the
    steps before a run may stop as flat are the loop's own (:class:`Stopper`).

    Attributes:
        check_every: steps between held-out checks.
        patience: checks over which a gain below ``tol`` counts as flat.
        tol: held-out accuracy gain that counts as progress (a fraction).
        margin: nats below the chance loss that count as leaving the plateau.
        solved: held-out accuracy that stops a run as solved (> 1: never).

    Raises ValueError, one line: a value outside its range.
    """

    check_every: int = setting(100, low=1)
    patience: int = setting(5, low=1)
    tol: float = setting(0.01, low=0, low_open=True)
    margin: float = setting(0.05, low=0)
    solved: float = setting(0.99, low=0)

    def __post_init__(self):
        check_fields(self)

    def check_heldout(self, n: int, where: str = "held-out set") -> None:
        """Raise ValueError (one line) unless ``n`` held-out examples resolve ``tol``
        (:func:`accuracy_se` at most ``tol``)."""
        if accuracy_se(n) > self.tol:
            need = math.ceil((0.5 / self.tol) ** 2)
            raise ValueError(f"{where} of {n} examples has a standard error up to {accuracy_se(n):.4f}, above the "
                             f"stopping tolerance {self.tol:g}: use at least {need} examples, or a larger tol")


class Stopper:
    """:class:`StopRule` applied to ``runs`` runs trained side by side, capped at ``max_steps``, none
    stopped as flat before ``min_steps`` (a curriculum's length, say).

    Call :meth:`update` at every check (and at the last step) with each run's mean training loss
    since the previous check and its held-out accuracy; it returns ``True`` once every run has
    stopped. :attr:`improved` says which runs set a new best at that check (keep their weights),
    :attr:`running` which are still going; after the loop, :attr:`reasons` and :attr:`steps` say
    why and when each stopped, :attr:`best` its best held-out accuracy (at :attr:`best_step`).

    Raises:
        ValueError: ``n_heldout`` too small to resolve ``rule.tol`` (:meth:`StopRule.check_heldout`),
            ``max_steps < 1``, or ``chance`` of the wrong length.
    """

    def __init__(self, rule: StopRule, max_steps: int, chance: float | Sequence[float], n_heldout: int,
                 runs: int = 1, min_steps: int = 0):
        rule.check_heldout(n_heldout)
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.rule, self.G, self.max_steps, self.min_steps = rule, int(runs), int(max_steps), int(min_steps)
        self.chance = np.broadcast_to(np.asarray(chance, dtype=float), (self.G,)).copy()
        self.best = np.full(self.G, -np.inf)
        self.best_step = np.zeros(self.G, dtype=int)
        self.history: list[np.ndarray] = []              # the best accuracy so far, per check, per run
        self.running = np.ones(self.G, dtype=bool)
        self.improved = np.zeros(self.G, dtype=bool)
        self.on_plateau = np.ones(self.G, dtype=bool)
        self.steps = np.zeros(self.G, dtype=int)
        self.reasons = [""] * self.G

    def _flat(self) -> np.ndarray:
        p = self.rule.patience
        if len(self.history) <= p:
            return np.zeros(self.G, dtype=bool)
        return self.history[-1] - self.history[-1 - p] < self.rule.tol

    def update(self, step: int, train_loss, accuracy) -> bool:
        """Record the check at ``step``: ``train_loss`` and ``accuracy`` ``(G,)`` (or scalars for one run;
        values of runs already stopped are ignored). Returns True when every run has stopped."""
        loss = np.broadcast_to(np.asarray(train_loss, dtype=float), (self.G,))
        acc = np.broadcast_to(np.asarray(accuracy, dtype=float), (self.G,))
        live = self.running.copy()
        self.improved = live & (acc > self.best)
        self.best = np.where(self.improved, acc, self.best)
        self.best_step = np.where(self.improved, step, self.best_step)
        self.history.append(self.best.copy())
        self.on_plateau = np.where(live, ~(loss < self.chance - self.rule.margin), self.on_plateau)
        flat = self._flat() & ~self.on_plateau
        cap = step >= self.max_steps
        for g in np.flatnonzero(live):
            if acc[g] >= self.rule.solved:
                why = "solved"
            elif flat[g] and (step >= self.min_steps or cap):
                why = "flat"
            elif cap:
                why = "never_left_plateau" if self.on_plateau[g] else "cap_while_improving"
            else:
                continue
            self.reasons[g], self.steps[g], self.running[g] = why, step, False
        return not self.running.any()

    def finish(self, step: int) -> None:
        """Close runs still going when a loop ended before ``max_steps`` (judged as at the cap)."""
        for g in np.flatnonzero(self.running):
            self.reasons[g] = ("flat" if self._flat()[g] and not self.on_plateau[g] else
                               "never_left_plateau" if self.on_plateau[g] else "cap_while_improving")
            self.steps[g], self.running[g] = step, False

    @property
    def reason(self) -> str:
        """The stop reason of a single run (``runs == 1``)."""
        return self.reasons[0]


def cut_metrics(prefix: str, reasons: Sequence[str]) -> dict[str, list[float]]:
    """Per-run flags for ``metrics.json``: ``<prefix>improving`` (1 where a run stopped at
    ``cap_while_improving``) and ``<prefix>plateau`` (1 where it stopped at ``never_left_plateau``),
    0 elsewhere, in the order of ``reasons`` (the seeds')."""
    return {f"{prefix}improving": [float(r == "cap_while_improving") for r in reasons],
            f"{prefix}plateau": [float(r == "never_left_plateau") for r in reasons]}


STOP_WORDS: dict[str, str] = {"solved": "solved", "flat": "flat", "cap_while_improving": "still improving at its cap",
                              "never_left_plateau": "never left the chance loss"}
"""Each stop reason in words, for tables and legends."""


def learning_curves(curves, arms, words, reasons, chance=None, colors=None):
    """The figure of the rule: one row per arm, the training loss (nats) with ``chance`` lines
    (``{label: nats}``) on the left, the held-out accuracy on the right, one line per seed labelled with
    why its run stopped.

    ``curves``: rows ``arm, seed, step, train_loss, heldout``; ``words``: arm -> its name in words;
    ``reasons``: ``(arm, seed)`` -> why that run stopped, in words; ``colors``: arm -> colour. Returns the figure.
    """
    import textwrap

    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(arms), 2, figsize=(8.5, 1.75 * len(arms) + 0.6), sharex=True, squeeze=False)
    for (left, right), arm in zip(axes, arms, strict=True):
        for k, (seed, g) in enumerate(curves[curves.arm == arm].groupby("seed")):
            kw = dict(lw=1.1, color=(colors or {}).get(arm, "tab:blue"), alpha=1.0 - 0.25 * min(k, 2))
            left.plot(g.step, g.train_loss, **kw)
            right.plot(g.step, g.heldout, label=f"seed {seed}: {reasons[(arm, seed)]}", **kw)
        for (label, nats), ls in zip((chance or {}).items(), ("--", ":", "-."), strict=False):
            left.axhline(nats, color="0.3", ls=ls, lw=0.9, label=label)
        left.set_ylabel(textwrap.fill(words[arm], 18), fontsize=8)
        right.set(ylim=(0, 1.03))
        right.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    axes[0][0].set_title("training loss (nats)", fontsize=9)
    axes[0][1].set_title("held-out accuracy", fontsize=9)
    if chance:
        axes[0][0].legend(fontsize=7, loc="upper right", frameon=False)
    for ax in axes[-1]:
        ax.set_xlabel("step")
    return fig
