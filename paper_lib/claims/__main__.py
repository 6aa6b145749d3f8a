"""``python -m paper_lib.claims report|site --profile cpu``: the report and the site of every claim.

``report`` writes ``REPORT.md`` from every notebook's ``metrics.json`` (and, at a profile whose
report refreshes it, the README's table) and marks the figures of undecided claims in each
notebook's published HTML; ``--out PATH`` writes the report there and leaves the rest alone.
``site`` builds the static site from the executed notebooks. Both hand the claims of
:mod:`paper_lib.claims.registry` to the plumbing. Every expected error is one line on stderr and
exit status 2; Ctrl-C, SIGTERM or SIGHUP one line and 128 + signal.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from ..pipeline.failures import signal_of, signals_interrupt
from ..pipeline.marks import mark_published
from ..pipeline.profiles import PROFILE_NAMES
from ..pipeline.provenance import output_dir
from ..pipeline.report import claims_table, write_report
from .registry import CLAIMS, HEADLINE, PAPER_SUMMARY

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
            print(f"report -> {write_report(args.profile, CLAIMS, out=args.out)}")
            if args.out is None:  # the figures of undecided claims, marked in each notebook's HTML
                figures = output_dir("x", args.profile).parent
                rows = claims_table(figures, CLAIMS).to_dict("records")
                keyed = {c.key: c.figures for c in CLAIMS}
                marked = [nb for nb in NOTEBOOKS if mark_published(figures / nb, rows, keyed)]
                if marked:
                    print(f"marked the undecided claims' figures in {', '.join(f'{nb}.html' for nb in marked)}")
            return 0
        from ..pipeline.site import build

        path = build(args.profile, CLAIMS, out=args.out, headline=HEADLINE, summary=PAPER_SUMMARY)
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


if __name__ == "__main__":
    with signals_interrupt():  # SIGTERM and SIGHUP end it as Ctrl-C does
        raise SystemExit(main())
