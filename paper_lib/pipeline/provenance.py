"""Outputs of a notebook, each traceable to its source (showyourwork's habit), and safe.

A run writes to ``figures/<notebook>/`` only when ``make`` publishes from a clean commit, else to
``build/<profile>/figures/<notebook>/``, through a staging folder swapped in once the run is complete.
Every output is stamped with what identifies the result and no date. ``metrics.json`` has the form

    {"notebook": ..., "profile": ..., "git_commit": ..., "parameters": ..., "seeds": [...], "threads": n,
     "cpu": ..., "cpu_capability": ..., "versions": {"torch": ..., "blas": ...}, "metrics": {NAME: {"mean": x, ...}}}

plus the profile's ``"note"`` at a profile whose runs prove nothing. Our design: the paper is silent.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping

from .atomic import atomic_path, fresh_dir, replace_dir, write_json, write_text
from .figcheck import check_figure
from .profiles import check_profile, get_profile
from .stats import mean_ci95
from .tables import in_words
from .threads import machine, threads_in_use

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_PATHS = ("paper_lib", "notebooks", "benchmarks")  # what the results are computed from
PUBLISH_ENV = "PAPER_LIB_PUBLISH"  # "1": a script's Outputs publishes to figures/ (make's recipes set it)
RUN_ENV = "PAPER_LIB_RUN"  # set by the runner for its kernel: JSON of the run's folders, profile, commit
FIGURE_DPI = 150  # every PNG is saved at this dpi; the legibility check measures at it
FIGCHECK_ENV = "PAPER_LIB_FIGCHECK"  # "raise": a legibility problem raises at every profile (default: at smoke)


def _git(root: Path, *args: str, strip: bool = True) -> str:
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, encoding="utf-8", errors="replace", check=True)
    return out.stdout.strip() if strip else out.stdout


def source_commit(root: Path = REPO_ROOT) -> tuple[str, str | None]:
    """``(commit, None)``, the last commit (12 hex digits) that changed :data:`SOURCE_PATHS` (``-dirty``
    for uncommitted changes there), or ``("unknown", reason)`` in one line. Raises nothing. Our design."""
    try:
        last = _git(root, "log", "-1", "--format=%H", "--", *SOURCE_PATHS) or _git(root, "rev-parse", "HEAD")
        dirty = _git(root, "status", "--porcelain", "--", *SOURCE_PATHS)
    except FileNotFoundError:
        return "unknown", "git is not on PATH"
    except (OSError, subprocess.CalledProcessError) as err:
        said = [ln.strip() for ln in (getattr(err, "stderr", None) or "").splitlines() if ln.strip()]
        first = said[0].removeprefix("fatal: ").removeprefix("error: ") if said else str(err)
        return "unknown", f"git: {first}"
    return last[:12] + ("-dirty" if dirty else ""), None


def source_date_epoch(root: Path = REPO_ROOT) -> int | None:
    """The commit time (Unix seconds) of :func:`git_commit`'s commit, or ``None`` outside git."""
    try:
        stamp = _git(root, "log", "-1", "--format=%ct", "--", *SOURCE_PATHS) or _git(root, "log", "-1", "--format=%ct")
    except (OSError, subprocess.CalledProcessError):
        return None
    return int(stamp) if stamp.isdigit() else None


def uncommitted(root: Path = REPO_ROOT) -> list[tuple[str, str]]:
    """``(status, path)`` of each uncommitted source (``git status --porcelain``); ``[]`` when git cannot say."""
    try:
        out = _git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", *SOURCE_PATHS, strip=False)
    except (OSError, subprocess.CalledProcessError):
        return []
    entries, fields = [], iter(out.split("\0"))
    for field in fields:
        if len(field) > 3:
            entries.append((field[:2], field[3:]))
            if field[0] in "RC":  # a rename or copy: the next field is where it came from
                next(fields, None)
    return entries


def _restore_advice(changes: list[tuple[str, str]], shown: int = 10) -> str:
    """The files of ``changes`` (:func:`uncommitted`), at most ``shown``, and how to restore them, in one line."""
    def listed(paths: list[str]) -> str:
        return ", ".join(paths[:shown]) + (f" and {len(paths) - shown} more (git status)" if len(paths) > shown else "")

    is_new = [status == "??" or status[0] == "A" for status, _ in changes]  # not in the commit
    new = [path for (_, path), fresh in zip(changes, is_new, strict=True) if fresh]
    changed = [(status, path) for (status, path), fresh in zip(changes, is_new, strict=True) if not fresh]
    parts, steps = [], []
    if changed:
        paths = [path for _, path in changed]
        parts.append(f"changed {listed(paths)}")
        staged = " --staged --worktree" if any(status[0] != " " for status, _ in changed) else ""
        restore = " ".join(shlex.quote(path) for path in (paths if len(paths) <= shown else SOURCE_PATHS))
        steps.append(f"`git restore{staged} -- {restore}`")
    if new:
        parts.append(f"new {listed(new)}")
        steps.append("move the new files out of " + ", ".join(sorted({p.split('/')[0] + '/' for p in new})))
    if not parts:  # git said dirty, then nothing (a change undone meanwhile)
        return "commit them first, or run"
    return (f"{'; '.join(parts)}; to publish the committed study, {' and '.join(steps)} (or commit the changes "
            "if they are meant as the new default), or run")


def check_clean(commit: str, where: str = "figures/", reason: str | None = None, root: Path = REPO_ROOT) -> str:
    """Return ``commit`` if results may be published from it (every way of publishing asks here); a
    refusal gives ``reason`` (:func:`source_commit`) or names ``root``'s uncommitted files. Our design.

    Raises:
        ValueError: ``commit`` ends with ``-dirty``, or is ``"unknown"`` (one line saying why and
            how to run without publishing).
    """
    to_build = "outputs then go to build/<profile>/figures/)"
    instead = f"run without publishing (without --publish or PAPER_LIB_PUBLISH=1; {to_build}"
    if commit == "unknown" or not commit:
        why = f" ({reason})" if reason else ""
        raise ValueError(f"refusing to publish to {where}: the commit of the sources cannot be determined{why}; "
                         f"run from a git clone, or {instead}")
    if commit.endswith("-dirty"):
        raise ValueError(f"refusing to publish to {where} from uncommitted sources (commit {commit}): "
                         f"{_restore_advice(uncommitted(root))} without publishing ({to_build}")
    return commit


def publishing() -> bool:
    """Whether a script's :class:`Outputs` publishes: ``PAPER_LIB_PUBLISH=1`` in the environment."""
    return os.environ.get(PUBLISH_ENV, "") == "1"


def output_dir(notebook: str, profile: str, root: Path = REPO_ROOT, publish: bool = True) -> Path:
    """Where ``notebook`` writes at ``profile``: ``<figures>/<notebook>`` when ``publish`` and the
    profile publishes, else ``build/<profile>/figures/<notebook>``.

    Raises:
        ValueError: unknown profile.
    """
    record = get_profile(profile)
    if publish and record.publishes:
        return Path(root) / record.figures / notebook
    return Path(root) / "build" / profile / "figures" / notebook


def runner_run() -> dict[str, Any] | None:
    """The run the notebook runner started this kernel for (``PAPER_LIB_RUN``), or ``None``."""
    text = os.environ.get(RUN_ENV)
    return json.loads(text) if text else None


def _session_source(root: Path | None) -> str | None:
    """The notebook this Jupyter kernel runs (``JPY_SESSION_NAME``) relative to ``root``, or ``None``."""
    session = os.environ.get("JPY_SESSION_NAME")
    if not session:
        return None
    try:
        return str(Path(session).resolve().relative_to(Path(root if root is not None else REPO_ROOT).resolve()))
    except ValueError:
        return None


def _update_json(path: Path, entries: Mapping[str, Any]) -> Path:
    doc = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return write_json(path, {**doc, **entries})


def record(folder: Path, paths: Iterable[Path], stamp: Mapping[str, Any]) -> Path:
    """Add ``paths`` (files in ``folder``) to ``folder/provenance.json`` with ``stamp`` and their sha256 (checked)."""
    return _update_json(Path(folder) / "provenance.json", {
        Path(p).name: {**stamp, "sha256": hashlib.sha256(Path(p).read_bytes()).hexdigest()} for p in paths})


def _show(fig, png: Path, meta: Mapping[str, str]) -> None:
    """In a Jupyter kernel, show the saved ``png`` with ``meta`` as its output's ``figure`` metadata (what the
    HTML and the site read), and close ``fig`` so that the cell's ``plt.show()`` draws it no second time."""
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:
        return
    if get_ipython() is None:
        return
    import matplotlib.pyplot as plt

    display(Image(data=png.read_bytes(), format="png"), metadata={"figure": dict(meta)})
    plt.close(fig)


class Outputs:
    """The writer of one notebook run's figures, tables and metrics, into ``dir`` once the run is complete.

    Args:
        notebook, profile: e.g. ``"01_grammar_probe"``, ``"cpu"``.
        parameters, seeds: the settings the run used (recorded verbatim, JSON-able) and its seeds.
        root: the project root. source: the file that produced the outputs (default: the runner's,
            else the Jupyter kernel's notebook, else ``notebooks/<notebook>.py``).
        publish: write to ``figures/``; default: :func:`publishing`; ignored under the runner.

    Raises:
        ValueError: unknown profile; publishing from a ``-dirty`` or unknown commit (:func:`check_clean`);
            under the runner, a notebook or profile other than the runner's.
    """

    def __init__(self, notebook: str, profile: str, parameters: Mapping[str, Any],
                 seeds: Iterable[int], root: Path | None = None, source: str | None = None,
                 publish: bool | None = None):
        self.notebook, self.profile = notebook, check_profile(profile)
        run = runner_run()
        self.source = source or (run or {}).get("source") or _session_source(root) or f"notebooks/{notebook}.py"
        self.parameters = json.loads(json.dumps(dict(parameters), default=str))
        self.seeds = [int(s) for s in seeds]
        self.finished = False
        self._written: dict[str, str] = {}  # file name -> the call that wrote it in this run
        if run is not None:  # the runner owns the folders; it swaps them in when the notebook has run to the end
            if (run["notebook"], run["profile"]) != (notebook, profile):
                raise ValueError(f"this kernel runs {run['notebook']} at profile {run['profile']}, not {notebook} "
                                 f"at {profile}; the runner's --profile is the one source of the profile")
            self.root, self.dir, self._stage = Path(run["root"]), Path(run["dir"]), Path(run["stage"])
            self.commit, self.published, self._managed = run["git_commit"], bool(run["published"]), True
            if self.published:
                check_clean(self.commit, root=self.root)  # the runner checked already; a stamp "unknown" never reaches figures/
            self._stage.mkdir(parents=True, exist_ok=True)
        else:
            self.root = Path(root) if root is not None else REPO_ROOT
            self.commit, reason = source_commit(self.root)
            self.published = bool(publishing() if publish is None else publish) and get_profile(profile).publishes
            if self.published:
                check_clean(self.commit, reason=reason, root=self.root)
            self.dir, self._managed = output_dir(notebook, profile, self.root, self.published), False
            self._stage = fresh_dir(self.dir)

    def provenance(self) -> dict[str, Any]:
        """The stamp written beside every output: what identifies the result (``threads``: this
        process's torch thread count; ``versions``: :func:`~paper_lib.pipeline.threads.machine`'s), and no date."""
        stamp = {"source": self.source, "profile": self.profile, "parameters": self.parameters,
                 "seeds": self.seeds, "git_commit": self.commit, "threads": threads_in_use(),
                 "versions": machine()["versions"]}
        if note := get_profile(self.profile).note:
            stamp["note"] = note
        return stamp

    def _claim(self, call: str, *names: str) -> None:
        """Raise ValueError on a second write of one file in one run (save_data, save_table: ``<name>.csv``)."""
        for name in names:
            if name in self._written:
                raise ValueError(f"{name} was already written in this run by {self._written[name]}; give {call}'s output another name")
        self._written.update(dict.fromkeys(names, call))

    def save_figure(self, fig, name: str, *, alt: str, title: str, verdict: str | None = None) -> Path:
        """Save ``fig`` as ``<name>.png`` (150 dpi) and ``<name>.pdf``, stamped, no date, and show that PNG as the
        cell's output, its stem and alt text in the output's metadata (``figure``), ``fig`` closed; returns the
        final PNG path. ``alt`` (one sentence), ``title``, a ``verdict`` of the figure's own (the verdict words of
        a control it shows failing; the report marks the PNG with it) and any legibility problems
        (:func:`~paper_lib.pipeline.figcheck.check_figure`, which otherwise only warn) go into ``figures.json``.

        Raises:
            ValueError: ``alt`` is not one line of at least 4 words, ``title`` is empty; at smoke (or
                ``PAPER_LIB_FIGCHECK=raise``), the first legibility problem (one line naming the figure).
        """
        if not isinstance(alt, str) or len(alt.split()) < 4 or "\n" in alt.strip():
            raise ValueError(f"alt must be one sentence describing what figure {name!r} shows "
                             f"(at least 4 words, one line), got {alt!r}")
        if not isinstance(title, str) or not title.strip() or "\n" in title.strip():
            raise ValueError(f"title of figure {name!r} must be a non-empty line, got {title!r}")
        alt, title = alt.strip(), title.strip()
        problems = check_figure(fig, dpi=FIGURE_DPI)
        if problems:
            message = f"figure {name!r} of {self.notebook}: {problems[0]}" + (
                f" (and {len(problems) - 1} more: {'; '.join(problems[1:])})" if len(problems) > 1 else "")
            if get_profile(self.profile).proves_nothing or os.environ.get(FIGCHECK_ENV, "") == "raise":
                raise ValueError(message)
            warnings.warn(message, stacklevel=2)
        text = json.dumps(self.provenance(), sort_keys=True)
        paths = []
        for ext, meta in (("png", {"Title": title, "Description": text, "Software": "paper_lib"}),
                          ("pdf", {"Title": title, "Subject": text, "Creator": "paper_lib", "CreationDate": None})):
            path = self._stage / f"{name}.{ext}"
            with atomic_path(path) as tmp:
                fig.savefig(tmp, format=ext, dpi=FIGURE_DPI, bbox_inches="tight", metadata=meta)
            paths.append(path)
        _update_json(self._stage / "figures.json", {name: {"alt": alt, "title": title, **(
            {"verdict": verdict} if verdict else {}), **({"problems": problems} if problems else {})}})
        record(self._stage, [*paths, self._stage / "figures.json"], self.provenance())
        _show(fig, paths[0], {"stem": name, "alt": alt})
        return self.dir / paths[0].name

    def save_table(self, df, name: str, floatfmt: str = ".3f", index: bool = False) -> Path:
        """Save ``df`` as ``<name>.csv`` and a stamped ``<name>.md``; returns the CSV's final path.
        Raises ValueError if either was already written in this run."""
        csv_path, md_path = self._stage / f"{name}.csv", self._stage / f"{name}.md"
        self._claim("save_table", csv_path.name, md_path.name)
        with atomic_path(csv_path) as tmp:
            df.to_csv(tmp, index=index)
        stamp = json.dumps(self.provenance(), sort_keys=True)
        md = in_words(df).to_markdown(index=index, floatfmt=floatfmt)  # the CSV keeps the names code reads
        banner = f"**{b}**\n\n" if (b := get_profile(self.profile).banner) else ""
        write_text(md_path, f"{banner}<!-- provenance: {stamp} -->\n\n{md}\n")
        record(self._stage, (csv_path, md_path), self.provenance())
        return self.dir / csv_path.name

    def save_data(self, df, name: str) -> Path:
        """Save a data frame as ``<name>.csv``, stamped in the manifest; returns its final path.
        Raises ValueError if ``<name>.csv`` was already written in this run."""
        path = self._stage / f"{name}.csv"
        self._claim("save_data", path.name)
        with atomic_path(path) as tmp:
            df.to_csv(tmp, index=False)
        record(self._stage, (path,), self.provenance())
        return self.dir / path.name

    def write_metrics(self, metrics: Mapping[str, Iterable[float] | Mapping[str, float]]) -> Path:
        """Write ``metrics.json`` and complete the run (:meth:`finish`); returns the final path. Each value
        is per-seed numbers (:func:`~paper_lib.pipeline.stats.mean_ci95`) or a ``{"mean", "ci95", "n"}``."""
        summary = {key: dict(value) if isinstance(value, Mapping) else mean_ci95(value) for key, value in metrics.items()}
        doc = {"notebook": self.notebook, "profile": self.profile, "git_commit": self.commit,
               "parameters": self.parameters, "seeds": self.seeds, "threads": threads_in_use(), **machine(), "metrics": summary}
        if note := get_profile(self.profile).note:
            doc["note"] = note
        record(self._stage, [write_json(self._stage / "metrics.json", doc)], self.provenance())
        self.finish()
        return self.dir / "metrics.json"

    def finish(self) -> Path:
        """Complete the run: the staging folder replaces ``dir`` (unless the runner does); returns ``dir``."""
        if not self.finished and not self._managed:
            replace_dir(self._stage, self.dir)
            self._stage = self.dir
        self.finished = True
        return self.dir

    def discard(self) -> None:
        """Abandon an unfinished run: remove its staging folder; ``dir`` stays as it was."""
        if not self.finished and not self._managed:
            shutil.rmtree(self._stage, ignore_errors=True)
            self.finished = True

    def __enter__(self) -> Outputs:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self.finish() if exc_type is None else self.discard()  # a run that raised leaves ``dir`` as it was
        return False
