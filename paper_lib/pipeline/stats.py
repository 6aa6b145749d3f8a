"""Summary statistics for results over seeds (our design: the paper reports no CIs)."""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np
from scipy import stats as _st


def mean_ci95(values: Iterable[float]) -> dict[str, float]:
    """``{"mean": m, "ci95": h, "n": n}``: the mean of ``values`` (one number per seed, any unit) and the
    half-width of a 95% Student-t confidence interval over seeds (``nan`` for a single value).
    Raises ValueError: no values, or a non-finite value."""
    v = np.asarray(list(values), dtype=float)
    if v.size == 0:
        raise ValueError("mean_ci95 needs at least one value, got none")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"mean_ci95 got a non-finite value: {v.tolist()}")
    n = int(v.size)
    if n == 1:
        return {"mean": float(v[0]), "ci95": math.nan, "n": 1}
    half = float(_st.t.ppf(0.975, n - 1) * v.std(ddof=1) / math.sqrt(n))
    return {"mean": float(v.mean()), "ci95": half, "n": n}


def format_mean_ci(values: Iterable[float] | dict, digits: int = 3, unit: str = "") -> str:
    """``"0.955 ± 0.003 (n=5)"``: mean and 95% CI over seeds of ``values`` (per-seed numbers or a :func:`mean_ci95`
    summary), ``digits`` decimals, ``unit`` after the mean; ``"0.955 (n=1, no interval)"`` for one seed."""
    s = dict(values) if isinstance(values, dict) else mean_ci95(values)
    n = int(s.get("n", 1))
    ci = s.get("ci95")
    if n < 2 or ci is None or not math.isfinite(ci):
        return f"{s['mean']:.{digits}f}{unit} (n={n}, no interval)"
    return f"{s['mean']:.{digits}f}{unit} ± {ci:.{digits}f} (n={n})"
