"""The reproduction report: one row per claim of the paper, each decided by ONE rule that can fail.

The claims and their rules live in :mod:`paper_lib.claims`; this module decides a :class:`Claim` on a notebook's
``metrics.json`` and tabulates a set of them (:class:`Claims`) for ``REPORT.md`` and the README, while notebooks
print the same verdict (:meth:`Claims.markdown`). Order of decision (our design: the paper states no
tolerances): ``not run yet`` / ``metric missing``; ``undetermined`` (fewer than 2 seeds, or a profile that
proves nothing); ``not informative at this budget`` (the control did not differ as it must); then the rule's
``yes`` / ``partly`` / ``no``; beside it, what that says of the paper's number and of the controls
(:mod:`.verdicts`).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

import pandas as pd

from .atomic import write_text
from .labels import Labels
from .markdown import escape_tags
from .profiles import PROFILES, get_profile
from .provenance import REPO_ROOT, output_dir
from .rules import Gate, Metrics, Rule, sizes
from .stats import mean_ci95
from .verdicts import Kind, controls_word, legend, number_word


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and how we decide it.

    Attributes:
        key: short id, its section's anchor. claim, paper: the claim and the paper's number, as text.
        paper_value: the paper's number, for "distance". notebook: whose ``metrics.json`` holds the metrics.
        metrics: names the rule needs (all must exist). rule: -> (yes | partly | no, reason).
        gate: -> why the experiment has no power, or None. gated: the verdict shown when it fires.
        prefixes: extra metric-name prefixes to show. shown: prefixes shown, not counted for the seeds check.
        figure: a file under ``figures/<notebook>/`` to link. figures: stems of figures showing its numbers.
        headline, versus: the metric of the "ours" (default: the first of ``metrics``; a name ending in ``_``
            is its largest-suffix member) and of the "against" cell.
        comparable: ``False`` shows "not comparable" as the distance. controls: its strongest controls.
        number: the rule on the paper's number alone (yes, partly, no), whatever the controls say.
        name: the claim in at most a dozen words (the summary's tables).
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
    versus: str | Callable[[Metrics], str] = ""  # or the rival the rule names, chosen from the metrics
    comparable: bool = True
    gated: str = "not informative at this budget"
    controls: str = ""
    figures: tuple[str, ...] = ()
    number: Rule | None = None
    name: str = ""


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict: ``holds`` (yes, partly, no, undetermined, ...) and the ``reason`` in words; ``number``
    and ``controls``: what it says of the paper's number and of the controls (:mod:`.verdicts`)."""

    holds: str
    reason: str
    number: str = ""
    controls: str = ""

    @property
    def kind(self) -> Kind:
        return Kind.of(self.holds)


class Claims:
    """An ordered set of claims and the labels of the metrics they read. Raises ValueError: a key given twice."""

    def __init__(self, rows: Iterable[Claim], labels: Labels):
        self.rows, self.labels = tuple(rows), labels
        keys = [c.key for c in self.rows]
        if twice := sorted({k for k in keys if keys.count(k) > 1}):
            raise ValueError(f"claim key(s) {', '.join(twice)} given twice")
        self._by_key = {c.key: c for c in self.rows}

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, key: str) -> Claim:
        """The claim ``key``. Raises ValueError: unknown key (the message lists the known ones)."""
        if key not in self._by_key:
            raise ValueError(f"unknown claim {key!r}; known: {', '.join(self._by_key)}")
        return self._by_key[key]

    def __add__(self, other: Claims) -> Claims:
        return Claims(self.rows + other.rows, self.labels + other.labels)

    def verdict(self, key: str, metrics: Mapping[str, object], profile: str) -> Verdict:
        """``REPORT.md``'s verdict for ``key`` from per-seed lists or summaries. Raises ValueError: unknown key."""
        return decide(self[key], summarise(metrics), profile)

    def markdown(self, key: str, metrics: Mapping[str, object], profile: str) -> str:
        """A notebook's one Markdown line for ``key``: claim, its two verdicts, reason, rule. Raises ValueError: unknown
        key."""
        claim, v, plain = self[key], self.verdict(key, metrics, profile), self.labels.plain
        number = f"Number reproduced? **{v.number}**. " if v.number else ""
        return escape_tags(f"**Claim: {claim.claim}.** {number}What the controls say: **{v.controls}** "
                           f"({plain(v.reason)}). Rule: {plain(claim.rule.__doc__)}.")


def summarise(metrics: Mapping[str, object]) -> dict[str, dict[str, float]]:
    """Per-seed lists (or ready summaries) -> ``{name: {"mean", "ci95", "n"}}`` (as ``metrics.json``)."""
    return {k: dict(v) if isinstance(v, Mapping) else mean_ci95(v) for k, v in metrics.items()}


def decide(claim: Claim, m: Metrics, profile: str) -> Verdict:
    """The verdict of ``claim`` on summarised metrics ``m`` at ``profile`` (see the module docstring)."""
    numbered = claim.paper_value is not None

    def verdict(word: str, why: str, number: str = "") -> Verdict:
        return Verdict(word, why, number or ("—" if numbered else ""), controls_word(Kind.of(word), numbered))

    if missing := [n for n in claim.metrics if n not in m]:
        return verdict(f"metric missing: {', '.join(missing)}", "its notebook did not write it")
    if profile in PROFILES and PROFILES[profile].proves_nothing:    # an unknown origin is judged as evidence
        return verdict("undetermined", PROFILES[profile].note)
    names = list(claim.metrics) or [k for k in m if k.startswith(claim.prefixes)]
    n = min((int(m[k].get("n", 1)) for k in names), default=0)
    if n < 2:
        return verdict("undetermined", f"n={n}, no interval")
    try:
        number = number_word(claim.number(m)[0] if claim.number and claim.comparable else None, numbered,
                             claim.comparable)
        if claim.gate is not None and (why := claim.gate(m)) is not None:
            return verdict(claim.gated, why, number)
        word, why = claim.rule(m)
    except (KeyError, IndexError, ValueError) as err:
        return verdict("metric missing", f"{err}")
    return verdict(word, why, number)


def load_metrics(figures: Path, notebook: str) -> dict | None:
    """The parsed ``figures/<notebook>/metrics.json``, or ``None`` if that notebook has not run. Raises ValueError:
    it differs from the sha256 its ``provenance.json`` records (edited or damaged: a verdict is never read off it)."""
    path, prov = figures / notebook / "metrics.json", figures / notebook / "provenance.json"
    if not path.exists():
        return None
    sha = json.loads(prov.read_text(encoding="utf-8")).get(path.name, {}).get("sha256") if prov.exists() else None
    if sha not in (None, hashlib.sha256(path.read_bytes()).hexdigest()):
        raise ValueError(f"{path} differs from the sha256 its provenance.json records (edited or damaged); rerun it")
    return json.loads(path.read_text(encoding="utf-8"))


def _fmt(s: Mapping[str, float]) -> str:
    v, ci = float(s["mean"]), s.get("ci95")
    big = abs(v) >= 100
    head = f"{v:.0f}" if big else f"{v:.3g}"
    if ci is None or not math.isfinite(ci) or int(s.get("n", 1)) < 2:
        return f"{head} (no interval)"
    return f"{head} ± {ci:.0f}" if big else f"{head} ± {ci:.2g}"


def _member(m: Metrics, name: str) -> str | None:
    """``name``, or for a family (ending in ``_``) its member with the largest suffix; ``None`` if absent."""
    if not name.endswith("_"):
        return name if name in m else None
    return f"{name}{ns[-1]}" if (ns := sizes(m, name)) else None


def _cell(m: Metrics, name: str, label: Callable[[str], str] | None = None) -> str:
    """One number for the results table: ``"0.944 ± 0.0023 (SPCN probe accuracy on A)"`` (with ``label``), or "—"."""
    key = _member(m, name) if name else None
    return (f"{_fmt(m[key])} ({label(key)})" if label else _fmt(m[key])) if key else "—"


def _distance(c: Claim, m: Metrics) -> str:
    """Ours minus the paper's number, only where both measure the same thing."""
    if c.paper_value is not None and not c.comparable:
        return "not comparable"
    if c.paper_value is None or not c.metrics or c.metrics[0] not in m:
        return "—"
    d = float(m[c.metrics[0]]["mean"]) - c.paper_value
    text = f"{d:+.3f}" if abs(d) < 10 else f"{d:+.0f}"
    return "0.000" if text in ("+0.000", "-0.000") else text


def claims_table(figures: Path, claims: Claims) -> pd.DataFrame:
    """One row per claim, metrics named by ``claims.labels``; ``headline``/``versus``: one number ± CI each,
    ``holds``: :func:`decide`'s verdict, ``ours``: every number, ``source``: links relative to ``figures``."""
    label, plain = claims.labels.label, claims.labels.plain
    rows = []
    for c in claims:
        doc = load_metrics(figures, c.notebook)
        source = f"[{c.notebook}](../notebooks/{c.notebook}.py)"
        if c.figure and (figures / c.notebook / c.figure).exists():
            source += f", [{c.figure}]({c.notebook}/{c.figure})"
        row = {"key": c.key, "notebook": c.notebook, "claim": c.claim, "name": c.name or c.claim, "paper": c.paper,
               "rule": plain(c.rule.__doc__), "source": source, "ours": "—", "headline": "—", "versus": "—",
               "value": "—", "against": "—", "distance": "—", "why": "", "controls": plain(c.controls),
               "number": "—" if c.paper_value is not None else "", "says": Kind.NOT_RUN.value}
        if doc is None:
            rows.append({**row, "holds": Kind.NOT_RUN.value})
            continue
        m, profile = doc.get("metrics", {}), doc.get("profile", "?")
        verdict = decide(c, m, profile)
        shown = [k for k in c.metrics if k in m] + [k for k in m if c.prefixes and k.startswith(c.prefixes)
                                                    and k not in c.metrics]
        shown += [k for k in m if c.shown and k.startswith(c.shown) and k not in shown]
        if shown:
            n = m[shown[0]].get("n", "?")
            row["ours"] = "; ".join(f"{label(k)} {_fmt(m[k])}" for k in shown) + f" ({profile}, n={n})"
        head, vs = c.headline or (c.metrics[0] if c.metrics else ""), c.versus(m) if callable(c.versus) else c.versus
        rows.append({**row, "headline": _cell(m, head, label), "value": _cell(m, head), "against": _cell(m, vs),
                     "versus": _cell(m, vs, label), "distance": _distance(c, m), "holds": verdict.holds,
                     "why": plain(verdict.reason), "number": verdict.number, "says": verdict.controls})
    return pd.DataFrame(rows, columns=["key", "notebook", "claim", "name", "paper", "headline", "value", "versus",
                                       "against", "distance",
                                       "holds", "number", "says", "why", "rule", "ours", "source", "controls"])


def _md_cell(v):
    """A table cell as Markdown text: ``|`` escaped, ``&``, ``<``, ``>`` as entities."""
    if not isinstance(v, str):
        return v
    return v.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def results_markdown(table: pd.DataFrame, link: str = "#claim-{key}") -> str:
    """The results table, each claim's short name linked by ``link`` (formatted with the row's ``key`` and ``notebook``)
    to its section, where the whole claim is."""
    t = table.map(_md_cell)
    short = pd.DataFrame({
        "#": range(1, len(t) + 1),
        "claim": [f"[{r.name}]({link.format(key=r.key, notebook=r.notebook)})" for r in t.itertuples()],
        "paper": t.paper, "ours ± 95% CI": t.headline, "against": t.versus, "number reproduced?": t.number,
        "what the controls say": t.says})
    return short.to_markdown(index=False) + "\n\n" + legend([*table.number, *table.says])


def short_why(reason: str) -> str:
    """A verdict's reason up to its first ``;`` (and before a ``: `` that explains it): the why a summary shows."""
    first = reason.split("; ")[0]
    head = first.split(": ")[0]
    return head if len(head.split()) >= 4 else first


def summary_frames(table: pd.DataFrame, link: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The summary's two tables (cells as Markdown, each claim's short name linked by ``link``): the paper's numbers
    (result, paper, ours, number reproduced?, what the controls say, why) and every other claim (finding, paper,
    ours, against, what the controls say)."""
    t = table.map(_md_cell)
    name = [f"[{r.name}]({link.format(key=r.key, notebook=r.notebook)})" for r in t.itertuples()]
    numbered = (table.number != "").to_numpy()
    first = pd.DataFrame({"result": name, "paper": t.paper, "ours ± 95% CI": t.value,
                          "number reproduced?": t.number, "what the controls say": t.says,
                          "why": [short_why(w) for w in t.why]})[numbered]
    second = pd.DataFrame({"finding": name, "paper": t.paper, "ours ± 95% CI": t.value, "against": t.against,
                           "what the controls say": t.says})[~numbered]
    return first, second


def summary_markdown(table: pd.DataFrame, adds: str = "", link: str = "figures/REPORT.md#claim-{key}") -> str:
    """The summary of results: the paper's numbers beside ours, the paragraph ``adds`` (what the companion adds),
    every other claim, and the legend of the verdict words they use."""
    first, second = summary_frames(table, link)
    return "\n\n".join(p for p in (first.to_markdown(index=False), adds, second.to_markdown(index=False),
                                     legend([*table.number, *table.says])) if p)


def render(table: pd.DataFrame, profile: str) -> str:
    """The Markdown report: summary, results table, one section per claim (anchor ``claim-<key>``)."""
    counts = table["says"].value_counts().to_dict()
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    details = []
    for i, r in enumerate(table.itertuples(), 1):
        numbers = "\n".join(f"- {_md_cell(x.strip())}" for x in r.ours.split(";")) if r.ours != "—" else "- none yet"
        distance = f" Ours minus the paper's number: {r.distance}." if r.distance not in ("—", "") else ""
        details.append(
            f'<a id="claim-{r.key}"></a>\n\n### {i}. {_md_cell(r.claim)}\n\n'
            f"**Verdict: {_md_cell(r.holds)}.** {_md_cell(r.why)}\n\n"
            + (f"Number reproduced? **{r.number}**.{distance} " if r.number else "")
            + f"What the controls say: **{r.says}**.\n\n"
            f"Rule (stated before the run): {_md_cell(r.rule)}.\n\n"
            + (f"Strongest controls: {_md_cell(r.controls)}.\n\n" if r.controls else "")
            + f"Numbers (mean ± 95% CI over seeds):\n\n{numbers}\n\nSource: {r.source}\n")
    return (f"# Reproduction report ({profile} profile)\n\n"
            "Generated by `python -m paper_lib.claims report` from every notebook's `metrics.json`; "
            "do not edit by hand. Ours: mean ± 95% CI over seeds; *against*: the control or rival "
            "the claim's rule compares with. Two verdicts per claim: whether our number is the paper's, and what "
            "the controls say of it; each claim's section below gives the reason, the rule and every "
            "number.\n\n"
            f"What the controls say: {summary}.\n\n{results_markdown(table)}\n\n## Details\n\n" + "\n".join(details))


def _between(text: str, start: str, end: str, new: str) -> str | None:
    if start not in text or end not in text:
        return None
    head, rest = text.split(start, 1)
    return f"{head}{start}\n{new}\n{end}{rest.split(end, 1)[1]}"


def update_readme(readme: Path, table: pd.DataFrame, adds: str = "") -> bool:
    """Put :func:`summary_markdown` between ``readme``'s ``summary`` markers; False where either is missing."""
    old = readme.read_text(encoding="utf-8") if readme.exists() else ""
    text = _between(old, "<!-- summary:start -->", "<!-- summary:end -->", summary_markdown(table, adds))
    if text is None:
        return False
    write_text(readme, text)
    return True


def write_report(profile: str, claims: Claims, root: Path = REPO_ROOT, out: Path | None = None, adds: str = "") -> Path:
    """Write ``REPORT.md`` of ``claims`` for ``profile`` (to ``out`` where given, leaving ``README.md`` alone, else
    with the README's summary and its paragraph ``adds``); returns its path. Raises ValueError: unknown profile."""
    figures = output_dir("x", profile, root).parent
    table = claims_table(figures, claims)
    path = write_text(Path(out) if out is not None else figures / "REPORT.md", render(table, profile))
    if out is None and get_profile(profile).readme:
        update_readme(root / "README.md", table, adds)
    return path
