"""Shared pieces of the rules: the metric types and how a rule reads a summarised metric."""
from __future__ import annotations

import math
import re
from typing import Callable, Mapping

Metrics = Mapping[str, Mapping[str, float]]  # NAME -> {"mean", "ci95", "n"}
Rule = Callable[[Metrics], tuple[str, str]]   # -> (verdict, reason)
Gate = Callable[[Metrics], str | None]         # -> reason the experiment has no power, or None


def _m(m: Metrics, name: str) -> float:
    return float(m[name]["mean"])


def _ci(m: Metrics, name: str) -> float:
    c = m[name].get("ci95")
    return 0.0 if c is None or (isinstance(c, float) and math.isnan(c)) else float(c)


def _sizes(m: Metrics, prefix: str) -> list[int]:
    return sorted(int(k[len(prefix):]) for k in m if re.fullmatch(re.escape(prefix) + r"\d+", k))
