"""Every claims family, gathered for the report and the site (:mod:`paper_lib.claims`).

A module of this package that defines ``CLAIMS`` and ``METRICS`` is a family; they are found
here, so a new family is one new module. The report's rows keep the order in which they were
published (:data:`ROW_ORDER`); a claim not listed there follows them, family by family.
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from pathlib import Path

from ..pipeline.report import Claims

ROW_ORDER: tuple[str, ...] = ("within_A", "learning", "transfer_B", "deep", "structure", "content", "ppl_gap",
                              "ablation", "attractors", "recall", "recall_attribution", "time_map", "lag_equal_state",
                              "depth_map", "update_recall")
"""The report's rows: the paper's claims, then the companion's (the numbering of README's and REPORT.md's tables)."""

NAMES: dict[str, str] = {
    "within_A": "SPCN role accuracy within Grammar A, zero labels",
    "learning": "Label-free Hebbian learning adds role information on Grammar B's unseen words",
    "transfer_B": "SPCN role accuracy on Grammar B's unseen vocabulary (transfer A -> B)",
    "deep": "SPCN accuracy on deep-embedded roles (depth >= 2, Grammar A)",
    "structure": "SPCN beats a causal GRU tagger on structural roles of B",
    "content": "A causal GRU tagger is far ahead of SPCN on content roles",
    "ppl_gap": "SPEN / Transformer perplexity (C4: 260 against GPT-2's 33)",
    "ablation": "Predictor ablation: three readers of the traces give one loss",
    "attractors": "SPCN's subject-number accuracy falls faster per attractor than a causal GRU's",
    "recall": "A Transformer recalls keys that SPEN as trained does not",
    "recall_attribution": "SPEN's recall loss is the fixed traces' own (trace oracle)",
    "time_map": "Fixed traces keep a token's class but lose its identity",
    "lag_equal_state": "At equal state, a GRU keeps word identity the trace bank loses",
    "depth_map": "Across 16 layers, learned depth mixing beats the fixed residual sum",
    "update_recall": "Fixed decay loses what input-dependent selection keeps (key update)",
}
"""Each claim in at most a dozen words: the summary's tables (the report's sections keep the whole claim)."""

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

COMPANION_SUMMARY = (
    "What the companion adds: every claim is decided by a rule written before the run, against controls that could "
    "have failed it (a model that must succeed, one that must not, a chance line) and, where the claim is about what "
    "fixed traces hold, the best reader of the traces (an oracle) beside a learned state of equal size. So a number "
    "that a control without learning also reaches is reported as such, and a run whose positive control failed "
    "decides nothing. It adds experiments the paper's mechanism could fail: associative recall (notebook 05), the "
    "boundary between structure and content in time and in depth (06) and key-update recall at equal state under a "
    "stated noise budget (07)."
)
"""What the companion adds, in one paragraph: between the summary's two tables (README and landing page)."""

CITATION = """\
@misc{singh2026ema,
  title         = {EMA Is Not All You Need: Mapping the Boundary Between Structure and Content in Recurrent Context},
  author        = {Singh, A.},
  year          = {2026},
  eprint        = {2604.08556},
  archivePrefix = {arXiv},
  primaryClass  = {cs.CL},
  url           = {https://arxiv.org/abs/2604.08556}
}
@software{ema_companion,
  title = {{EMA Is Not All You Need}: a reproducible companion (paper\\_lib and notebooks 01-07)},
  year  = {2026},
  note  = {Cite with the commit of the sources that made the numbers, as stamped in each metrics.json}
}
"""
"""How to cite the paper and the companion (BibTeX): the README's and the landing page's last section."""


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
    rows = [dataclasses.replace(c, name=NAMES.get(c.key, c.name)) for c in claims]
    return Claims(sorted(rows, key=lambda c: rank.get(c.key, len(rank))), claims.labels), metrics


NOT_AT_SMOKE: set[str] = set()
"""Metrics of a family's ``METRICS`` that a smoke run does not write (its sizes are too small)."""
CLAIMS, METRICS = _gather()
"""Every claim (the report's rows, in order, with every family's labels) and every notebook's metrics."""
