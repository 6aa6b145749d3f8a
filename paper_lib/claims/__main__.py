"""``python -m paper_lib.claims report|site --profile cpu``: the report and the site of every claim.

``report`` writes ``REPORT.md`` from every notebook's ``metrics.json`` (and, at a profile whose
report refreshes it, the README's summary), marks each published figure with its claim's verdict
and opens each notebook's published HTML with its findings; ``--out PATH`` writes the report there
and leaves the rest alone.
``site`` builds the static site from the executed notebooks. Both hand the claims of
:mod:`paper_lib.claims.registry` to the plumbing. Every expected error is one line on stderr and
exit status 2; Ctrl-C, SIGTERM or SIGHUP one line and 128 + signal.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

from ..pipeline.failures import signal_of, signals_interrupt
from ..pipeline.marks import figure_marks, mark_figures
from ..pipeline.profiles import PROFILE_NAMES
from ..pipeline.provenance import output_dir, record
from ..pipeline.render import finish_page
from ..pipeline.report import claims_table, write_report
from .registry import CITATION, CLAIMS, COMPANION_SUMMARY, HEADLINE, PAPER_SUMMARY

NOTEBOOKS = sorted({c.notebook for c in CLAIMS})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m paper_lib.claims", description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["report", "site"])
    ap.add_argument("--profile", default="cpu", choices=PROFILE_NAMES)
    ap.add_argument("--out", type=Path, default=None,
                    help="report: the REPORT.md to write (the README is then left alone); site: its folder "
                         "(default: the profile's docs/, build/smoke/docs/ at smoke)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        if args.what == "report":
            print(f"report -> {write_report(args.profile, CLAIMS, out=args.out, adds=COMPANION_SUMMARY)}")
            if args.out is None:
                publish(output_dir("x", args.profile).parent)
            return 0
        from ..pipeline.site import build

        path = build(args.profile, CLAIMS, out=args.out, headline=HEADLINE, summary=PAPER_SUMMARY,
                     adds=COMPANION_SUMMARY, cite=CITATION)
    except (ValueError, OSError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:  # Ctrl-C, SIGTERM or SIGHUP: one line and 128 + signal, as a notebook run
        print(f"error: {args.what}: interrupted by {signal.Signals(signal_of(err)).name}; every file it writes is "
              "replaced whole or not at all", file=sys.stderr)
        return 128 + signal_of(err)
    size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    print(f"site -> {path}/index.html ({size / 1e6:.1f} MB, {time.perf_counter() - t0:.0f} s)")
    return 0


def findings_html(rows, report: str = "../REPORT.md") -> str:
    """The notebook's findings as one HTML section: per claim of the report's ``rows``, its short name, the two
    verdicts, paper against ours, why, the rule and a link to its section of ``report``."""
    from html import escape

    parts = ['<section id="findings" class="jp-Cell jp-MarkdownCell"><h2>Findings</h2>']
    for r in rows:
        parts.append(
            f'<h3 id="claim-{escape(r["key"])}">{escape(r["name"])}</h3><p><em>Claim:</em> {escape(r["claim"])}.</p>'
            + (f'<p><strong>Number reproduced?</strong> {escape(r["number"])}. ' if r["number"] else "<p>")
            + f'<strong>What the controls say:</strong> {escape(r["says"])}. Paper: {escape(r["paper"])}; ours: '
            f'{escape(r["headline"])}; against: {escape(r["versus"])}.</p><p><em>Why:</em> {escape(r["why"])}.</p>'
            f'<p><em>Rule:</em> {escape(r["rule"])}. <a href="{report}#claim-{escape(r["key"])}">Every number</a></p>')
    if not rows:
        parts.append("<p>This notebook decides no claim of the report; its figures and tables are below.</p>")
    return "".join(parts) + "<h2>The experiment</h2></section>"


def publish(figures: Path) -> None:
    """Each published notebook under ``figures``: its figures marked with their claims' verdicts, its HTML opened
    with its findings and showing the marked figures (stamped anew in ``provenance.json``); one line of what changed."""
    rows = claims_table(figures, CLAIMS).to_dict("records")
    keyed = {c.key: c.figures for c in CLAIMS}
    for nb in NOTEBOOKS:
        folder = figures / nb
        mine = [r for r in rows if r["notebook"] == nb]
        marked = mark_figures(folder, figure_marks(mine, keyed))
        meta_path, prov = folder / "figures.json", folder / "provenance.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
        page = folder / f"{nb}.html"
        if finish_page(page, meta, findings_html(mine)):
            stamps = json.loads(prov.read_text(encoding="utf-8")) if prov.is_file() else {}
            record(folder, [page], {k: v for k, v in stamps.get(page.name, {}).items() if k != "sha256"})
        if marked:
            print(f"{nb}: marked {', '.join(marked)}")


if __name__ == "__main__":
    with signals_interrupt():  # SIGTERM and SIGHUP end it as Ctrl-C does
        raise SystemExit(main())
