"""The reproduction report: one row per claim of the paper, checked against our metrics.

``python -m paper_lib.report --profile cpu`` (the last step of ``make all``) reads every
notebook's ``metrics.json`` and writes ``REPORT.md`` beside them (``figures/REPORT.md``, or
``build/smoke/figures/REPORT.md`` at smoke); at ``cpu`` it also refreshes the table in
``README.md`` between the ``report:start``/``report:end`` markers. A claim whose notebook has
not run yet is reported as missing, not as a failure. Whether a claim holds here is decided
by the ``rule`` written beside it below (our design: the paper states no tolerances).
"""
from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from .atomic import write_text
from .profiles import check_profile
from .provenance import REPO_ROOT, output_dir

Metrics = dict[str, dict[str, float]]  # NAME -> {"mean", "ci95", "n"}


def _ci(m: dict[str, float]) -> float:
    c = m.get("ci95")
    return 0.0 if c is None or (isinstance(c, float) and math.isnan(c)) else float(c)


def _near(name: str, paper: float, yes: float, partly: float) -> Callable[[Metrics], str]:
    def rule(m: Metrics) -> str:
        d = abs(m[name]["mean"] - paper)
        return "yes" if d <= yes else "partly" if d <= partly else "no"
    rule.__doc__ = f"yes if ours is within {yes:g} of {paper:g}; partly if within {partly:g}; else no"
    return rule


def _at_least(name: str, yes: float, partly: float) -> Callable[[Metrics], str]:
    def rule(m: Metrics) -> str:
        v = m[name]["mean"]
        return "yes" if v >= yes else "partly" if v >= partly else "no"
    rule.__doc__ = f"yes if ours >= {yes:g}; partly if >= {partly:g}; else no"
    return rule


def _beats(a: str, b: str, margin: float = 0.0) -> Callable[[Metrics], str]:
    def rule(m: Metrics) -> str:
        lo_a, hi_b = m[a]["mean"] - _ci(m[a]), m[b]["mean"] + _ci(m[b])
        if m[a]["mean"] - m[b]["mean"] >= margin and lo_a > hi_b:
            return "yes"
        return "partly" if m[a]["mean"] > m[b]["mean"] else "no"
    extra = f" by >= {margin:g}" if margin else ""
    rule.__doc__ = (f"yes if {a} beats {b}{extra} with 95% CIs apart; partly if ahead with CIs "
                    "overlapping; else no")
    return rule


def _spread(names: list[str], yes: float, partly: float) -> Callable[[Metrics], str]:
    def rule(m: Metrics) -> str:
        v = [m[n]["mean"] for n in names]
        rel = (max(v) - min(v)) / min(v)
        return "yes" if rel <= yes else "partly" if rel <= partly else "no"
    rule.__doc__ = f"yes if (max - min) / min of the losses <= {yes:.0%}; partly if <= {partly:.0%}; else no"
    return rule


@dataclass(frozen=True)
class Claim:
    """One claim of the paper (the numbers it reports) and how we check it."""

    claim: str
    paper: str
    notebook: str
    metrics: tuple[str, ...]       # shown in the "ours" column; all must exist for the rule
    rule: Callable[[Metrics], str]
    figure: str = ""               # a file under figures/<notebook>/ to link, if it exists


CLAIMS: tuple[Claim, ...] = (
    Claim("SPCN role accuracy within Grammar A (zero labels, probe)", "0.960", "01_grammar_probe",
          ("spcn_probe_acc_A",), _near("spcn_probe_acc_A", 0.960, 0.03, 0.08), "table1.md"),
    Claim("SPCN reaches 96% of the supervised BiGRU within A", "0.96", "01_grammar_probe",
          ("spcn_over_bigru_A",), _at_least("spcn_over_bigru_A", 0.93, 0.85), "table1.md"),
    Claim("SPCN transfers A -> B (unseen vocabulary)", "0.618", "02_transfer",
          ("spcn_acc_B",), _near("spcn_acc_B", 0.618, 0.10, 0.20), "table2.md"),
    Claim("SPCN on deep-embedded roles (depth >= 2)", "0.84", "02_transfer",
          ("spcn_deep_acc_A",), _near("spcn_deep_acc_A", 0.84, 0.05, 0.12), "accuracy_by_depth.png"),
    Claim("SPCN beats the BiGRU on structure-dependent roles (on B)", "SPCN > BiGRU", "02_transfer",
          ("spcn_struct_acc_B", "bigru_struct_acc_B"), _beats("spcn_struct_acc_B", "bigru_struct_acc_B"),
          "role_groups.md"),
    Claim("BiGRU far ahead on content-dependent roles (within A)", "BiGRU >> SPCN", "02_transfer",
          ("bigru_lexical_acc_A", "spcn_lexical_acc_A"),
          _beats("bigru_lexical_acc_A", "spcn_lexical_acc_A", margin=0.10), "role_groups.md"),
    Claim("EMA-only SPEN vs Transformer perplexity gap (C4: 260 vs 33)", "~7.9x", "03_spen_train",
          ("ppl_ratio", "spen_val_ppl", "transformer_val_ppl"), _at_least("ppl_ratio", 3.9, 1.5),
          "table3_perplexity.md"),
    Claim("Predictor ablation: linear, linear attention, softmax attention give the same loss",
          "7.60 nats, all three", "04_predictor_ablation",
          ("loss_linear", "loss_linear_attention", "loss_softmax_attention"),
          _spread(["loss_linear", "loss_linear_attention", "loss_softmax_attention"], 0.02, 0.05),
          "table4_ablation.md"),
)


def load_metrics(figures: Path, notebook: str) -> dict | None:
    """The parsed ``figures/<notebook>/metrics.json``, or ``None`` if that notebook has not run."""
    path = figures / notebook / "metrics.json"
    return json.loads(path.read_text()) if path.exists() else None


def _fmt(m: dict[str, float]) -> str:
    ci = _ci(m)
    return f"{m['mean']:.3g} ± {ci:.2g}" if ci else f"{m['mean']:.3g}"


def claims_table(figures: Path, claims: tuple[Claim, ...] = CLAIMS) -> pd.DataFrame:
    """One row per claim: ``claim``, ``paper``, ``ours``, ``holds`` (yes / no / partly /
    not run yet / metric missing), ``rule``, ``source``. Links are relative to ``figures``."""
    rows = []
    for c in claims:
        doc = load_metrics(figures, c.notebook)
        source = f"[{c.notebook}](../notebooks/{c.notebook}.py)"
        if c.figure and (figures / c.notebook / c.figure).exists():
            source += f", [{c.figure}]({c.notebook}/{c.figure})"
        row = {"claim": c.claim, "paper": c.paper, "rule": c.rule.__doc__, "source": source}
        if doc is None:
            rows.append({**row, "ours": "—", "holds": "not run yet"})
            continue
        m = doc.get("metrics", {})
        missing = [n for n in c.metrics if n not in m]
        if missing:
            rows.append({**row, "ours": "—", "holds": f"metric missing: {', '.join(missing)}"})
            continue
        n = m[c.metrics[0]].get("n", "?")
        ours = "; ".join(f"{name} {_fmt(m[name])}" for name in c.metrics)
        rows.append({**row, "ours": f"{ours} ({doc.get('profile', '?')}, n={n})", "holds": c.rule(m)})
    return pd.DataFrame(rows, columns=["claim", "paper", "ours", "holds", "rule", "source"])


def render(table: pd.DataFrame, profile: str) -> str:
    """The Markdown report for ``table``."""
    counts = table["holds"].value_counts().to_dict()
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    table = table.map(lambda v: v.replace("|", "\\|") if isinstance(v, str) else v)  # Markdown cells
    return (f"# Reproduction report ({profile} profile)\n\n"
            "Generated by `python -m paper_lib.report` from every notebook's `metrics.json`; "
            "do not edit by hand. Ours: mean ± 95% CI over n seeds. The rule of each row is "
            "written in `paper_lib/report.py`.\n\n"
            f"Summary: {summary}.\n\n{table.to_markdown(index=False)}\n")


def update_readme(readme: Path, table: pd.DataFrame) -> bool:
    """Replace the table between ``<!-- report:start -->`` and ``<!-- report:end -->``."""
    if not readme.exists():
        return False
    text = readme.read_text()
    start, end = "<!-- report:start -->", "<!-- report:end -->"
    if start not in text or end not in text:
        return False
    short = table[["claim", "paper", "ours", "holds"]].to_markdown(index=False)
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    write_text(readme, f"{head}{start}\n{short}\n{end}{tail}")
    return True


def write_report(profile: str, root: Path = REPO_ROOT) -> Path:
    """Write ``REPORT.md`` for ``profile``; returns its path.

    Raises:
        ValueError: unknown profile.
    """
    figures = output_dir("x", check_profile(profile), root).parent
    table = claims_table(figures)
    path = write_text(figures / "REPORT.md", render(table, profile))
    if profile == "cpu":
        update_readme(root / "README.md", table)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write the reproduction report from every metrics.json.")
    ap.add_argument("--profile", default="cpu")
    args = ap.parse_args(argv)
    path = write_report(args.profile)
    print(f"report -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
