"""Outputs of a notebook, each traceable to its source (showyourwork's habit).

:class:`Outputs` decides where a notebook writes (``figures/<notebook>/`` for the ``cpu``
and ``paper`` profiles, ``build/smoke/figures/<notebook>/`` for ``smoke``, so a test run
never overwrites the committed figures) and stamps every figure and table with its
provenance: notebook, profile, parameters, seeds, git commit, date. The stamp goes into
the file where the format allows (PNG text chunks, PDF info, a Markdown comment) and, for
every file, into the folder's ``provenance.json`` manifest. ``metrics.json`` has the form

    {"notebook": ..., "profile": ..., "git_commit": ..., "parameters": ..., "seeds": [...],
     "metrics": {NAME: {"mean": x, "ci95": y, "n": seeds}}}

and carries no date, so the same seed on the same commit writes the same file twice.
Our design: the paper is silent.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any, Iterable, Mapping

from .atomic import atomic_path, write_json, write_text
from .profiles import check_profile
from .stats import mean_ci95

REPO_ROOT = Path(__file__).resolve().parents[2]


def git_commit(root: Path = REPO_ROOT) -> str:
    """The commit of ``root``'s checkout, with ``-dirty`` when ``paper_lib`` or ``notebooks``
    have uncommitted changes; ``"unknown"`` outside a git checkout."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "paper_lib", "notebooks"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def output_dir(notebook: str, profile: str, root: Path = REPO_ROOT) -> Path:
    """Where ``notebook`` writes at ``profile``: ``figures/<nb>`` or ``build/smoke/figures/<nb>``."""
    check_profile(profile)
    base = root / "build" / "smoke" / "figures" if profile == "smoke" else root / "figures"
    return base / notebook


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=str))


class Outputs:
    """The writer of one notebook run's figures, tables and metrics.

    Args:
        notebook: the notebook's name, e.g. ``"01_grammar_probe"``.
        profile: ``smoke``, ``cpu`` or ``paper``.
        parameters: the settings the run used (recorded verbatim, must be JSON-able).
        seeds: the seeds the run averaged over.
        root: the project root (tests pass a temporary folder).
        source: the file that produced the outputs (default ``notebooks/<notebook>.py``).

    Raises:
        ValueError: unknown profile.
    """

    def __init__(self, notebook: str, profile: str, parameters: Mapping[str, Any],
                 seeds: Iterable[int], root: Path | None = None, source: str | None = None):
        self.notebook, self.profile = notebook, check_profile(profile)
        self.source = source or f"notebooks/{notebook}.py"
        self.parameters = _jsonable(dict(parameters))
        self.seeds = [int(s) for s in seeds]
        self.root = Path(root) if root is not None else REPO_ROOT
        self.dir = output_dir(notebook, profile, self.root)
        self.commit = git_commit(self.root)

    def provenance(self) -> dict[str, Any]:
        """The stamp written beside every output."""
        return {"source": self.source, "profile": self.profile,
                "parameters": self.parameters, "seeds": self.seeds, "git_commit": self.commit,
                "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}

    def _record(self, *paths: Path) -> None:
        manifest_path = self.dir / "provenance.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
        stamp = self.provenance()
        for p in paths:
            manifest[p.name] = {**stamp, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        write_json(manifest_path, manifest)

    def save_figure(self, fig, name: str) -> Path:
        """Save ``fig`` as ``<name>.png`` (150 dpi) and ``<name>.pdf``, stamped; returns the PNG."""
        stamp = self.provenance()
        text = json.dumps(stamp, sort_keys=True)
        paths = []
        for ext, meta in (("png", {"Description": text, "Software": "paper_lib"}),
                          ("pdf", {"Subject": text, "Creator": "paper_lib"})):
            path = self.dir / f"{name}.{ext}"
            with atomic_path(path) as tmp:
                fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight", metadata=meta)
            paths.append(path)
        self._record(*paths)
        return paths[0]

    def save_table(self, df, name: str, floatfmt: str = ".3f", index: bool = False) -> Path:
        """Save a pandas table as ``<name>.csv`` and ``<name>.md`` (with a provenance comment)."""
        csv_path, md_path = self.dir / f"{name}.csv", self.dir / f"{name}.md"
        with atomic_path(csv_path) as tmp:
            df.to_csv(tmp, index=index)
        stamp = json.dumps(self.provenance(), sort_keys=True)
        md = df.to_markdown(index=index, floatfmt=floatfmt)
        write_text(md_path, f"<!-- provenance: {stamp} -->\n\n{md}\n")
        self._record(csv_path, md_path)
        return csv_path

    def save_data(self, df, name: str) -> Path:
        """Save a data frame (curves, per-seed rows) as ``<name>.csv``, stamped in the manifest."""
        path = self.dir / f"{name}.csv"
        with atomic_path(path) as tmp:
            df.to_csv(tmp, index=False)
        self._record(path)
        return path

    def write_metrics(self, metrics: Mapping[str, Iterable[float] | Mapping[str, float]]) -> Path:
        """Write ``metrics.json``. Each value is either per-seed numbers (summarised here with
        :func:`paper_lib.stats.mean_ci95`) or an already summarised ``{"mean", "ci95", "n"}``."""
        summary = {}
        for key, value in metrics.items():
            summary[key] = dict(value) if isinstance(value, Mapping) else mean_ci95(value)
        doc = {"notebook": self.notebook, "profile": self.profile, "git_commit": self.commit,
               "parameters": self.parameters, "seeds": self.seeds, "metrics": summary}
        path = write_json(self.dir / "metrics.json", doc)
        return path
