"""The reproduction report: one row per claim of the paper, each decided by ONE rule that can fail.

``python -m paper_lib.pipeline.report --profile cpu`` (the last step of ``make all``) reads every
notebook's ``metrics.json`` and writes ``REPORT.md`` beside them; at ``cpu`` it also refreshes
the table in ``README.md`` between the ``report:start``/``report:end`` markers. The notebooks
print the same verdict through :func:`verdict_for`, so a notebook and the report cannot disagree.

A claim is decided in this order (our design: the paper states no tolerances):

1. ``not run yet`` / ``metric missing``: its notebook or a metric is absent;
2. ``undetermined``: fewer than 2 seeds (no interval) or a smoke run (plumbing, not evidence);
3. ``not informative at this budget``: the claim's *control* did not differ as it must for the
   experiment to have power (e.g. both language models near the unigram loss, a positive control
   that fails the task); the reason names the numbers (a claim may word this verdict itself,
   ``Claim.gated``: row 1 says "the number; not attributable to learning");
4. ``yes`` / ``partly`` / ``no`` by the claim's rule, written beside it below.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pandas as pd

from .atomic import write_text
from .labels import label, plain
from .profiles import check_profile
from .provenance import REPO_ROOT, output_dir
from .report_render import _md_cell, findings_markdown, render, results_markdown, update_readme  # noqa: F401
from .rules import (
    RECALL_SOLVED,
    Gate,
    Metrics,
    Rule,
    all_of,
    any_solves,
    at_least,
    beats,
    beats_each,
    beats_negative_controls,
    ceiling_above_floor,
    copies_in_context,
    depth_dilution,
    depth_learnable,
    first_gate,
    learned_state_keeps,
    near,
    oracle_below_learned,
    oracle_converged,
    oracle_loses,
    past_unigram,
    recall_gap,
    solves,
    spread,
    structure_outlives_identity,
    traces_lose,
    unbounded_beats_bounded,
)
from .stats import mean_ci95

# --------------------------------------------------------------------------- the claims

@dataclass(frozen=True)
class Claim:
    """One claim of the paper (the numbers it reports) and how we decide it.

    Attributes:
        key: a short id, for :func:`verdict_for` (``"ablation"``).
        claim: the claim in words. paper: the paper's number or relation, as text.
        paper_value: the paper's number where there is one (for the "distance" column).
        notebook: the notebook whose ``metrics.json`` holds the metrics.
        metrics: metric names the rule needs (all must exist); shown in the "ours" column.
        rule: -> (yes | partly | no, reason). gate: -> reason the experiment has no power, or None.
        prefixes: extra metric-name prefixes to show (families such as ``recall_acc_spen_<N>``).
        shown: metric-name prefixes shown but not counted for the seeds check (exact numbers such
            as a baseline or a state size, one value each).
        figure: a file under ``figures/<notebook>/`` to link.
        headline: the one metric of the results table's "ours" cell (default: the first of
            ``metrics``); a name ending in ``_`` is a family (``recall_acc_spen_``): its member with
            the largest numeric suffix (the largest N or depth) is shown.
        versus: the one metric of the "against" cell (the control or rival the rule compares with).
        comparable: whether ours and the paper's number measure the same thing (same task and
            scale), so that a "distance" means something; ``False`` shows "not comparable".
        gated: the verdict shown when ``gate`` fires (default "not informative at this budget"; a
            claim whose gate is a negative control names what the number is not attributable to).
    """

    key: str
    claim: str
    paper: str
    paper_value: float | None
    notebook: str
    metrics: tuple[str, ...]
    rule: Rule
    gate: Gate | None = None
    prefixes: tuple[str, ...] = ()
    figure: str = ""
    shown: tuple[str, ...] = ()
    headline: str = ""
    versus: str = ""
    comparable: bool = True
    gated: str = "not informative at this budget"


BOUNDED = ("loss_linear", "loss_linear_attention", "loss_softmax_attention")
UNBOUNDED = ("loss_token_attention", "loss_history_attention", "loss_selective", "loss_transformer")

CLAIMS: tuple[Claim, ...] = (
    Claim("within_A", "SPCN role accuracy within Grammar A with zero labels (probe), 96% of the supervised BiGRU",
          "0.960", 0.960, "01_grammar_probe", ("spcn_probe_acc_A", "spcn_over_bigru_A"),
          near("spcn_probe_acc_A", 0.960, 0.03, 0.08),
          gate=beats_negative_controls("spcn_probe_acc_A", ("spcn_untrained_acc_A", "spcn_level1_floor_acc_A")),
          prefixes=("spcn_level1_floor_acc_A", "spcn_untrained_acc_A"),
          figure="table1.md", versus="spcn_level1_floor_acc_A", gated="the number; not attributable to learning"),
    Claim("learning", "Label-free learning adds role information beyond the fixed word code and its traces, where the "
          "fixed code cannot do the job: Grammar B's unseen content words, with word codes learned from unlabelled A "
          "and B sentences (Hebbian, zero labels; the probe trained on A's labels)",
          "implied (PGHU learns the representation)", None, "01_grammar_probe",
          ("spcn_learned_content_acc_B", "spcn_floor_content_acc_B"),
          beats("spcn_learned_content_acc_B", "spcn_floor_content_acc_B"),
          gate=ceiling_above_floor("backprop_content_acc_B", "spcn_floor_content_acc_B"),
          prefixes=("backprop_content_acc_B", "spcn_category_codes_content_acc_B", "spcn_learned_feat_acc_A",
                    "spcn_level1_floor_acc_A", "spcn_backprop_acc_A", "spcn_untrained_acc_A"),
          figure="learned_codes_B.png", versus="spcn_floor_content_acc_B"),
    Claim("transfer_B", "SPCN transfers A -> B (unseen vocabulary); the total mixes function words and content words",
          "0.618", 0.618, "02_transfer", ("spcn_acc_B",), near("spcn_acc_B", 0.618, 0.10, 0.20),
          gate=beats_negative_controls("spcn_acc_B", ("spcn_none_acc_B",)),
          prefixes=("spcn_function_acc_B", "spcn_content_acc_B", "spcn_none_acc_B"), figure="table2.md",
          versus="spcn_none_acc_B"),
    # issue 23 item 2: depth where the right answer is the minority under uncertainty. The metric is
    # SPCN's subject-number accuracy at the verb after a centre-embedded stack, pooled over the items
    # with k >= 1 attractors (paper_lib.data.agreement); the BiGRU, which reads the main verb itself,
    # is the positive control; the old depth >= 2 role accuracies are shown beside it.
    Claim("deep", "SPCN on deep embedding: the subject's number at the verb after a centre-embedded stack with "
          ">= 1 attractor (Linzen et al. 2016; chance 0.5)", "0.84 (deep-embedded roles)", 0.84, "02_transfer",
          ("spcn_attractor_acc_ge1",), near("spcn_attractor_acc_ge1", 0.84, 0.05, 0.12),
          gate=any_solves(("bigru_attractor_acc_ge1",), 0.9),
          prefixes=("spcn_attractor_acc_", "gru_causal_attractor_acc_", "bigru_attractor_acc_", "spcn_deep_acc_A",
                    "spcn_deep_acc_hard", "bigru_deep_acc_hard", "gru_causal_deep_acc_hard"),
          figure="accuracy_by_attractors.png", versus="gru_causal_attractor_acc_ge1"),
    Claim("structure", "SPCN beats the recurrent tagger on structure-dependent roles on B, like for like: on the "
          "structural roles that the preceding words decide (causal SPCN vs the causal GRU tagger with and without "
          "<unk> training)", "SPCN > BiGRU", None, "02_transfer",
          ("spcn_struct_context_acc_B", "gru_causal_struct_context_acc_B", "causal_gru_nodrop_struct_context_acc_B"),
          beats_each("spcn_struct_context_acc_B", ("gru_causal_struct_context_acc_B",
                                                   "causal_gru_nodrop_struct_context_acc_B")),
          prefixes=("struct_context_share_B", "spcn_struct_category_acc_B", "gru_causal_struct_category_acc_B",
                    "causal_gru_nodrop_struct_category_acc_B", "spcn_bidir_struct_context_acc_B",
                    "bigru_nounk_struct_context_acc_B"),
          figure="structure_split.md", versus="causal_gru_nodrop_struct_context_acc_B"),
    Claim("content", "BiGRU far ahead on content-dependent roles that a causal reader can see (within A); roles "
          "fixed by a later verb are a causality confound, shown apart", "BiGRU >> SPCN", None, "02_transfer",
          ("bigru_lexical_causal_acc_A", "spcn_lexical_causal_acc_A"),
          beats("bigru_lexical_causal_acc_A", "spcn_lexical_causal_acc_A", margin=0.10),
          prefixes=("bigru_lexical_acc_A", "spcn_lexical_acc_A", "gru_causal_lexical_causal_acc_A",
                    "spcn_content_acc_lag_", "gru_causal_content_acc_lag_", "bigru_content_acc_lag_"),
          figure="role_groups.md", versus="spcn_lexical_causal_acc_A"),
    Claim("ppl_gap", "EMA-only SPEN vs Transformer perplexity gap (C4: 260 vs 33)", "~7.9x", 260 / 33, "03_spen_train",
          ("ppl_ratio", "spen_val_ppl", "transformer_val_ppl"), at_least("ppl_ratio", 3.9, 1.5),
          gate=first_gate(past_unigram(("spen", "transformer")),
                          copies_in_context("transformer_induction_score", "transformer_val_loss")),
          prefixes=("transformer_induction_score", "spen_induction_score"), figure="table3_perplexity.md",
          versus="transformer_induction_score", comparable=False),
    Claim("ablation", "Predictor ablation: linear, linear attention, softmax attention give the same loss",
          "7.60 nats, all three", 7.60, "04_predictor_ablation", BOUNDED, spread(BOUNDED, 0.02, 0.05),
          gate=first_gate(copies_in_context("induction_transformer", "loss_transformer"),
                          unbounded_beats_bounded(BOUNDED, UNBOUNDED)),
          prefixes=UNBOUNDED + ("induction_transformer",), figure="table4_ablation.md",
          versus="loss_softmax_attention", comparable=False),
    Claim("recall", "Attention recalls what SPEN's compressed state does not (associative recall, SPEN vs the "
          "Transformer as N grows)", "beyond the paper", None, "05_associative_recall", (),
          recall_gap("recall_acc_spen_", "recall_acc_transformer_"),
          gate=solves("recall_acc_transformer_", RECALL_SOLVED), prefixes=("recall_acc_spen_", "recall_acc_transformer_"),
          figure="recall_by_pairs.png", shown=("recall_baseline_",),
          headline="recall_acc_spen_", versus="recall_acc_transformer_"),
    Claim("recall_attribution", "The loss is the fixed traces' own: the best reader of the fixed traces fails where a "
          "learned recurrence of equal state succeeds", "beyond the paper (the paper's mechanism)", None,
          "05_associative_recall", (), traces_lose("recall_acc_spen_", ("recall_acc_gru_", "recall_acc_spen_selective_"),
                                                      "recall_acc_oracle_"),
          gate=any_solves(("recall_acc_transformer", "recall_acc_spen_token_attention"), RECALL_SOLVED),
          prefixes=("recall_acc_spen_", "recall_acc_gru_", "recall_acc_spen_selective_", "recall_acc_oracle_"),
          figure="recall_by_pairs.png",
          shown=("recall_baseline_", "recall_state_"), headline="recall_acc_oracle_", versus="recall_acc_spen_"),
    Claim("time_map", "Fixed-rate traces keep structure where they lose identity (lag 2, vocabulary / width 16)",
          "beyond the paper (its boundary, mapped)", None, "06_boundary_map",
          ("time_identity_bank", "time_structure_bank"),
          structure_outlives_identity("time_identity_bank", "time_structure_bank",
                                      learned=("time_identity_gru", "time_structure_gru"),
                                      others=(("selective scan", "time_identity_scan", "time_structure_scan"),)),
          gate=first_gate(learned_state_keeps("time_identity_gru_easy", 0.5), oracle_loses("time_identity_oracle"),
                          oracle_converged("time_oracle_converged")),
          prefixes=("time_identity_gru", "time_structure_gru", "time_identity_scan", "time_structure_scan",
                    "time_identity_oracle", "time_structure_oracle", "time_oracle_converged"),
          figure="time_by_lag.png",
          versus="time_structure_bank"),
    Claim("lag_equal_state", "At equal state, a learned GRU keeps word identity that the fixed trace bank loses "
          "(notebook 02's lag curves, lag 1 and 4, both read by the same linear probe)", "beyond the paper", None,
          "02_transfer", ("lag1_identity_acc_gru", "lag1_identity_acc_bank", "lag4_identity_acc_gru",
                          "lag4_identity_acc_bank"),
          all_of(beats("lag1_identity_acc_gru", "lag1_identity_acc_bank"),
                 beats("lag4_identity_acc_gru", "lag4_identity_acc_bank")), figure="lag_decodability.png",
          gate=oracle_below_learned("lag4_identity_acc_bank_oracle", "lag4_identity_acc_gru"),
          gated="the number; not attributable to the fixed traces",
          prefixes=("lag4_identity_acc_bank_oracle", "lag4_oracle_converged"),
          headline="lag4_identity_acc_gru", versus="lag4_identity_acc_bank"),
    Claim("depth_map", "Fixed-coefficient accumulation dilutes across depth; learned selection avoids it",
          "the paper's general principle", None, "06_boundary_map", (), depth_dilution(),
          gate=depth_learnable(), prefixes=("depth_both_acc_",), figure="depth_map.png",
          headline="depth_both_acc_plain_", versus="depth_both_acc_dwa_"),
)
CLAIMS_BY_KEY = {c.key: c for c in CLAIMS}

@dataclass(frozen=True)
class Verdict:
    """A claim's verdict: ``holds`` (yes, partly, no, not informative at this budget,
    undetermined, not run yet, metric missing) and the ``reason`` in words."""

    holds: str
    reason: str

    def markdown(self, claim: Claim) -> str:
        """One line of Markdown for a notebook: the claim, the verdict in bold, the reason, the rule.
        ``<`` is written ``&lt;`` so that ``<unk>`` shows in JupyterLab and in the executed
        notebook's HTML instead of vanishing as an unknown HTML tag."""
        line = (f"**Claim: {claim.claim}.** Verdict: **{self.holds}** ({plain(self.reason)}). "
                f"Rule: {plain(claim.rule.__doc__)}.")
        return line.replace("<", "&lt;")


def summarise(metrics: Mapping[str, object]) -> dict[str, dict[str, float]]:
    """Per-seed lists (or ready summaries) -> ``{name: {"mean", "ci95", "n"}}`` (as ``metrics.json``)."""
    return {k: dict(v) if isinstance(v, Mapping) else mean_ci95(v) for k, v in metrics.items()}


def decide(claim: Claim, m: Metrics, profile: str) -> Verdict:
    """The verdict of ``claim`` on summarised metrics ``m`` at ``profile`` (see the module docstring)."""
    missing = [n for n in claim.metrics if n not in m]
    if missing:
        return Verdict(f"metric missing: {', '.join(missing)}", "its notebook did not write it")
    if profile == "smoke":
        return Verdict("undetermined", "smoke run: checks the plumbing, proves nothing")
    names = list(claim.metrics) or [k for k in m if k.startswith(claim.prefixes)]
    n = min((int(m[k].get("n", 1)) for k in names), default=0)
    if n < 2:
        return Verdict("undetermined", f"n={n}, no interval")
    try:
        if claim.gate is not None and (why := claim.gate(m)) is not None:
            return Verdict(claim.gated, why)
        word, why = claim.rule(m)
    except (KeyError, IndexError, ValueError) as err:
        return Verdict("metric missing", f"{err}")
    return Verdict(word, why)


def verdict_for(key: str, metrics: Mapping[str, object], profile: str) -> Verdict:
    """The verdict that ``REPORT.md`` will show for claim ``key``, from a notebook's metrics
    (per-seed lists or summaries): what every notebook prints, so the two cannot disagree.

    Raises:
        ValueError: unknown claim key (the message lists the known ones).
    """
    if key not in CLAIMS_BY_KEY:
        raise ValueError(f"unknown claim {key!r}; known: {', '.join(CLAIMS_BY_KEY)}")
    return decide(CLAIMS_BY_KEY[key], summarise(metrics), profile)


# --------------------------------------------------------------------------- the report

def load_metrics(figures: Path, notebook: str) -> dict | None:
    """The parsed ``figures/<notebook>/metrics.json``, or ``None`` if that notebook has not run."""
    path = figures / notebook / "metrics.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _fmt(s: Mapping[str, float]) -> str:
    v, ci = float(s["mean"]), s.get("ci95")
    big = abs(v) >= 100
    head = f"{v:.0f}" if big else f"{v:.3g}"
    if ci is None or not math.isfinite(ci) or int(s.get("n", 1)) < 2:
        return f"{head} (no interval)"
    return f"{head} ± {ci:.0f}" if big else f"{head} ± {ci:.2g}"


def _member(m: Metrics, name: str) -> str | None:
    """``name`` itself, or for a family (``name`` ending in ``_``) its member with the largest
    numeric suffix; ``None`` if absent."""
    if not name.endswith("_"):
        return name if name in m else None
    sizes = [int(k[len(name):]) for k in m if k.startswith(name) and k[len(name):].isdigit()]
    return f"{name}{max(sizes)}" if sizes else None


def _cell(m: Metrics, name: str) -> str:
    """One number for the results table: ``"0.944 ± 0.0023 (SPCN probe accuracy on A)"``, or "—"."""
    key = _member(m, name) if name else None
    return f"{_fmt(m[key])} ({label(key)})" if key else "—"


def _distance(c: Claim, m: Metrics) -> str:
    """Ours minus the paper's number, only where both measure the same thing."""
    if c.paper_value is None:
        return "—"
    if not c.comparable:
        return "not comparable"
    if not c.metrics or c.metrics[0] not in m:
        return "—"
    d = float(m[c.metrics[0]]["mean"]) - c.paper_value
    text = f"{d:+.3f}" if abs(d) < 10 else f"{d:+.0f}"
    return "0.000" if text in ("+0.000", "-0.000") else text


def claims_table(figures: Path, claims: tuple[Claim, ...] = CLAIMS) -> pd.DataFrame:
    """One row per claim, in the order of ``claims``.

    Columns: ``key, notebook, claim, paper, headline`` (ours: one number ± CI),
    ``versus`` (the control or rival the rule compares with: one number), ``distance`` (ours minus
    the paper's number where the two are comparable), ``holds`` (:func:`decide`'s verdict),
    ``why``, ``rule`` (both in plain words), ``ours`` (every number the claim reads, ``;``-separated),
    ``source`` (links relative to ``figures``).
    """
    rows = []
    for c in claims:
        doc = load_metrics(figures, c.notebook)
        source = f"[{c.notebook}](../notebooks/{c.notebook}.py)"
        if c.figure and (figures / c.notebook / c.figure).exists():
            source += f", [{c.figure}]({c.notebook}/{c.figure})"
        row = {"key": c.key, "notebook": c.notebook, "claim": c.claim, "paper": c.paper,
               "rule": plain(c.rule.__doc__), "source": source, "ours": "—", "headline": "—", "versus": "—",
               "distance": "—", "why": ""}
        if doc is None:
            rows.append({**row, "holds": "not run yet"})
            continue
        m, profile = doc.get("metrics", {}), doc.get("profile", "?")
        verdict = decide(c, m, profile)
        shown = [k for k in c.metrics if k in m] + [k for k in m if c.prefixes and k.startswith(c.prefixes)
                                                    and k not in c.metrics]
        shown += [k for k in m if c.shown and k.startswith(c.shown) and k not in shown]
        if shown:
            n = m[shown[0]].get("n", "?")
            row["ours"] = "; ".join(f"{label(k)} {_fmt(m[k])}" for k in shown) + f" ({profile}, n={n})"
        row["headline"] = _cell(m, c.headline or (c.metrics[0] if c.metrics else ""))
        row["versus"] = _cell(m, c.versus)
        row["distance"] = _distance(c, m)
        rows.append({**row, "holds": verdict.holds, "why": plain(verdict.reason)})
    return pd.DataFrame(rows, columns=["key", "notebook", "claim", "paper", "headline", "versus", "distance",
                                       "holds", "why", "rule", "ours", "source"])


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
    ap = argparse.ArgumentParser(prog="python -m paper_lib.pipeline.report",
                                 description="Write the reproduction report from every metrics.json.")
    ap.add_argument("--profile", default="cpu", choices=["smoke", "cpu", "paper"])
    args = ap.parse_args(argv)
    try:
        path = write_report(args.profile)
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"report -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
