"""Every claims family, gathered for the report and the site (:mod:`paper_lib.claims`).

A module of this package that defines ``CLAIMS`` and ``METRICS`` is a family; they are found
here, so a new family is one new module. The report's rows keep the order in which they were
published (:data:`ROW_ORDER`); a claim not listed there follows them, family by family.
"""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from ..pipeline.report import Claims

ROW_ORDER: tuple[str, ...] = ("within_A", "learning", "transfer_B", "deep", "structure", "content", "ppl_gap",
                              "ablation", "recall", "recall_attribution", "time_map", "lag_equal_state", "depth_map")
"""The report's rows as published (the numbering of README's and REPORT.md's table)."""

HEADLINE = ("05_associative_recall", "recall_by_pairs")
"""The site's headline figure: (notebook, figure stem) under ``figures/``."""

PAPER_SUMMARY = (
    'The paper, *"EMA Is Not All You Need: Mapping the Boundary Between Structure and Content in '
    'Recurrent Context"* (A. Singh, [arXiv:2604.08556](https://arxiv.org/abs/2604.08556)), uses banks '
    "of fixed-rate exponential moving averages (EMA traces) as a lower bound for recurrent context. It "
    "claims that such traces keep temporal structure (a Hebbian network, SPCN, reads grammatical roles "
    "from them with zero labels and transfers to unseen words) but lose token identity (an EMA-only "
    "language model, SPEN, trails a Transformer by a wide perplexity gap, whichever predictor reads the "
    "traces)."
)
"""What the paper claims, in the README's words (its first paragraph): the site's first section."""


def families() -> list:
    """The family modules of this package (those with ``CLAIMS`` and ``METRICS``), by module name."""
    names = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]))
    mods = [importlib.import_module(f"{__package__}.{n}") for n in names if not n.startswith("_") and n != "registry"]
    return [m for m in mods if hasattr(m, "CLAIMS") and hasattr(m, "METRICS")]


def _gather() -> tuple[Claims, dict[str, dict[str, str]]]:
    found = families()
    claims = sum((m.CLAIMS for m in found[1:]), found[0].CLAIMS)
    metrics: dict[str, dict[str, str]] = {}
    NOT_AT_SMOKE.update(*(getattr(m, "NOT_AT_SMOKE", ()) for m in found))
    for m in found:
        for notebook, names in m.METRICS.items():
            metrics.setdefault(notebook, {}).update(names)
    rank = {key: i for i, key in enumerate(ROW_ORDER)}       # a claim not listed: after them, as found
    return Claims(sorted(claims, key=lambda c: rank.get(c.key, len(rank))), claims.labels), metrics


NOT_AT_SMOKE: set[str] = set()
"""Metrics of a family's ``METRICS`` that a smoke run does not write (its sizes are too small)."""
CLAIMS, METRICS = _gather()
"""Every claim (the report's rows, in order, with every family's labels) and every notebook's metrics."""
