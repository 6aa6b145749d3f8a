"""Execute a jupytext notebook headlessly with papermill (what ``make all`` runs).

``python -m paper_lib.pipeline.runner notebooks/01_grammar_probe.py --profile smoke`` converts the source to
this run's own notebook, checks ``-p NAME VALUE`` against its ``parameters`` cell before any kernel starts,
and runs it, streaming one line per code cell. Where things land: :class:`RunPlan`; ``--publish`` (``make``'s
recipe) writes ``figures/<notebook>/`` with a self-contained HTML, refused from uncommitted sources.
The kernel writes into a staging folder, swapped in only when every cell ran; a failed run keeps the old
outputs and leaves its notebook in ``build/<profile>/failed/``, and one that cannot finish keeps what it
finished (:mod:`paper_lib.pipeline.failures`). Our design: the paper is silent."""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .atomic import atomic_path, check_replaceable, fresh_dir, replace_dir, scratch_path
from .deps import dependencies, digest
from .failures import Attempt, quiet_start_errors, rel, signal_of, signals_interrupt, start_timeout
from .kernel import KERNEL_ENV, describe_exit, exit_status, kernel_env, watched_kernel_manager
from .params import check_values
from .profiles import check_profile, get_profile
from .provenance import RUN_ENV, check_clean, output_dir, record, source_commit, source_date_epoch
from .render import number_cells, render_html, tidy
from .threads import WAIT_POLICY_ENV

__all__ = ["KERNEL_ENV", "NotebookFailed", "RunPlan", "check_notebook_parameters", "convert", "describe_exit",
           "main", "plan", "render_html", "run_notebook", "tidy"]

KERNEL_ARGS = ["--IPKernelApp.extensions=['paper_lib.pipeline.kernel']"]  # text tqdm bars, streamed
PROFILE_PARAM = ("the profile is set with --profile, never with -p profile (it also decides where the outputs "
                 "and the executed notebook land)")


class NotebookFailed(RuntimeError):
    """A run that did not finish, in one line; ``failed``: its notebook, ``code``: 1 or ``128 + signal``."""

    def __init__(self, message: str, failed: Path, code: int = 1):
        super().__init__(message)
        self.failed, self.code = failed, code


@dataclass(frozen=True)
class RunPlan:
    """Where one run writes: one-off, ``build/<profile>/figures/<notebook>/`` and ``build/<profile>/executed/``;
    publishing, ``figures/<notebook>/`` (not at smoke) and ``build/executed/<profile>/``, ``make``'s target."""

    name: str
    profile: str
    root: Path
    publish: bool  # make's run: HTML, and the executed notebook at make's target
    outputs: Path  # the output folder once the run is complete
    executed: Path
    failed: Path

    @property
    def publishes(self) -> bool:
        """Whether the outputs go to ``figures/`` (not at a profile that never publishes, smoke)."""
        return self.publish and get_profile(self.profile).publishes

    @property
    def kept(self) -> Path:
        """Where a finished run's outputs go when they cannot be put in place (a full or read-only disk)."""
        return self.root / "build" / self.profile / "kept" / self.name


def plan(source: str | Path, profile: str, publish: bool = False, root: str | Path | None = None) -> RunPlan:
    """The paths of a run of ``source`` at ``profile`` (``root``: default the source's checkout)."""
    check_profile(profile)
    source = Path(source).resolve()
    root = Path(root).resolve() if root is not None else source.parent.parent
    build, name = root / "build", source.stem
    executed = build / "executed" / profile if publish else build / profile / "executed"
    return RunPlan(name, profile, root, publish, output_dir(name, profile, root, publish),
                   executed / f"{name}.ipynb", build / profile / "failed" / f"{name}.ipynb")


def convert(source: Path, ipynb: Path, text: str | None = None):
    """Write the jupytext ``source`` (its ``text`` if already read) as ``ipynb``, kernel ``python3``."""
    import jupytext

    source = Path(source)
    nb = jupytext.read(source) if text is None else jupytext.reads(text, fmt={"extension": source.suffix})
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    number_cells(nb)
    with atomic_path(ipynb) as tmp:
        jupytext.write(nb, tmp, fmt="ipynb")
    return nb


def check_notebook_parameters(ipynb: Path, name: str, parameters: dict[str, Any]) -> None:
    """Check ``parameters`` (``profile`` refused already) against the notebook's ``parameters`` cell; ValueError
    for a name the cell lacks, a value whose type differs from the default's, or a bad shared value
    (:func:`check_values`)."""
    import papermill as pm

    known = pm.inspect_notebook(str(ipynb))
    if unknown := sorted(set(parameters) - set(known)):
        hint = (f"; a setting goes into overrides, e.g. -p overrides '{{\"{unknown[0]}\": ...}}'"
                if "overrides" in known else "")
        raise ValueError(f"unknown notebook parameter(s) {', '.join(unknown)} for {name}; "
                         f"allowed: {', '.join(k for k in known if k != 'profile')}{hint}")
    for key, value in parameters.items():
        default_source = known[key].get("default")
        try:
            default = ast.literal_eval(default_source) if default_source else None
        except (ValueError, SyntaxError):
            continue
        for kind, words in [(bool, "true or false"), ((int, float), "a number"), (str, "a string"),
                            (dict, "a JSON object"), ((list, tuple), "a JSON list")]:
            if isinstance(default, kind):
                if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                    raise ValueError(f"parameter {key} takes {words} (its default is {default_source}), got {value!r}")
                break
    check_values(parameters)


def _headings(nb) -> list[str]:
    """For each cell, what it is: ``parameters``, or the last Markdown heading at or before it."""
    out, current = [], ""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            heads = [ln.lstrip("#").strip() for ln in cell.source.splitlines() if ln.startswith("#")]
            current = heads[-1] if heads else current
        out.append("parameters" if "parameters" in cell.get("metadata", {}).get("tags", []) else current)
    return out


class _Progress:
    """nbclient's ``on_cell_execute`` hook: the cell being run and, if ``shown``, ``[name] cell 3/14 · heading``."""

    def __init__(self, name: str, nb, shown: bool = True):
        self.name, self.t0, self.k, self.shown, self.cell = name, time.perf_counter(), 0, shown, None
        self.total = sum(c.cell_type == "code" for c in nb.cells) + 1  # + papermill's parameters cell
        self.heading = {c["id"]: h for c, h in zip(nb.cells, _headings(nb), strict=True)}

    def __call__(self, cell, cell_index: int) -> None:
        self.k, self.cell = self.k + 1, cell
        if self.shown:
            elapsed = time.strftime("%H:%M:%S", time.gmtime(time.perf_counter() - self.t0))
            head = self.where()
            print(f"[{self.name}] cell {self.k}/{self.total}" + (f" · {head}" if head else "") + f" ({elapsed})",
                  flush=True)

    def where(self) -> str:
        """The heading of the cell being run (papermill's injected cell has none of its own)."""
        return self.heading.get(self.cell.get("id"), "the values papermill injects")

    def now(self) -> str:
        """Where the run is: ``in cell [3] (heading)``, or ``before its first cell``."""
        if self.cell is None:
            return "before its first cell"
        head = self.where()
        return f"in cell [{self.cell.get('execution_count') or self.k}]" + (f" ({head})" if head else "")


def run_notebook(source: str | Path, profile: str, parameters: dict[str, Any] | None = None,
                 publish: bool = False, root: str | Path | None = None, stream: bool = False,
                 start_timeout_s: float | None = None) -> Path:
    """Convert, check and execute the jupytext ``source`` at ``profile``; return the executed ``.ipynb`` path.

    ``root``: the project root, whose ``paper_lib`` the kernel imports first (default: the source's checkout);
    ``stream``: print progress and the notebook's output; ``start_timeout_s``: seconds (:func:`start_timeout`).
    A file changed on disk during the run is named in a warning.

    Raises:
        ValueError: bad profile or parameter, or a refused publish (a ``lab/`` copy, uncommitted sources, a
            paired ``.ipynb`` that differs).
        FileNotFoundError, PermissionError: no such source; a read-only output folder, before any cell runs.
        NotebookFailed: a cell raised, the kernel died or never answered, a write failed or a signal came.
    """
    import papermill as pm
    from nbclient.exceptions import DeadKernelError

    p = plan(source, profile, publish, root)
    source = Path(source).resolve()
    if not source.is_file():
        raise FileNotFoundError(f"no notebook source at {source}")
    parameters = dict(parameters or {})
    if "profile" in parameters:
        raise ValueError(PROFILE_PARAM)
    commit = _check_publishable(source, p)
    text = source.read_text(encoding="utf-8")
    read = {**{f: digest(f) for f in dependencies(source)}, source: hashlib.sha256(text.encode()).hexdigest()}
    timeout = start_timeout(start_timeout_s)
    check_replaceable(p.outputs)  # a read-only figures/<notebook>/: one line before any cell runs
    run = Attempt(p, scratch_path(p.root / "build" / "notebooks", p.name, ".ipynb"))  # this run's own conversion
    manager, nb = watched_kernel_manager(), None
    try:
        nb = convert(source, run.ipynb, text)
        check_notebook_parameters(run.ipynb, p.name, parameters)
        run.progress, run.stage = _Progress(p.name, nb, shown=stream), fresh_dir(p.outputs)
        run.running = scratch_path(p.executed.parent, p.name, ".ipynb")
        env = {"notebook": p.name, "profile": profile, "root": str(p.root), "dir": str(p.outputs),
               "stage": str(run.stage), "git_commit": commit, "published": p.publishes, "source": rel(source, p.root)}
        if stream:
            why = "" if p.publishes else " (smoke never publishes)" if publish else " (not published: make all publishes)"
            print(f"[{p.name}] profile {profile}, outputs -> {rel(p.outputs)}{why}", flush=True)
        extra = {"stdout_file": sys.stdout, "stderr_file": sys.stderr} if stream else {}
        for key, value in WAIT_POLICY_ENV.items():  # the kernel's OpenMP threads sleep while waiting for a core
            os.environ.setdefault(key, value)
        with kernel_env(p.root, env, RUN_ENV, source_date_epoch(p.root)), quiet_start_errors():
            done = pm.execute_notebook(str(run.ipynb), str(run.running), parameters={"profile": profile, **parameters},
                                       kernel_name="python3", cwd=str(source.parent), progress_bar=False,
                                       extra_arguments=KERNEL_ARGS, on_cell_execute=run.progress,
                                       kernel_manager_class=manager, start_timeout=timeout, **extra)
        run.phase = "ran"
        _publish(run, tidy(done), parameters, commit)
    except DeadKernelError:  # the OOM killer, a segfault: say which cell, keep the notebook as far as it ran
        run.keep_notebook()
        how = describe_exit(exit_status(manager))
        kept = (" The" if how.endswith("?") else "; the") + f" notebook as far as it ran: {rel(p.failed)}"
        raise NotebookFailed(f"{p.name}: the kernel died {run.progress.now()}: {how}{kept}", p.failed) from None
    except pm.PapermillExecutionError as err:
        run.keep_notebook()
        if err.ename == "KeyboardInterrupt":  # the Ctrl-C reached the kernel first
            raise NotebookFailed(run.stopped("interrupted by SIGINT"), p.failed, 130) from None
        where = _headings(nb)[min(err.cell_index, len(nb.cells)) - 1] if err.cell_index else ""
        first = (str(err.evalue).strip().splitlines() or [""])[0]
        raise NotebookFailed(f"{p.name} failed in cell [{err.exec_count}]" + (f" ({where})" if where else "")
                             + f": {err.ename}: {first}; traceback in {rel(p.failed)}", p.failed) from None
    except (KeyboardInterrupt, RuntimeError, OSError) as err:  # a signal, a kernel that never answered, a full disk
        status = exit_status(manager) if isinstance(err, RuntimeError) and manager.processes else None
        if (stopped := run.explain(err, status, timeout)) is None:
            raise
        raise NotebookFailed(stopped[0], p.failed, stopped[1]) from None
    finally:
        run.clean()
    _warn_changed(read, p.name)
    return p.executed


def _check_publishable(source: Path, p: RunPlan) -> str:
    """The sources' commit; when publishing, refuse a scratch copy, uncommitted sources and a paired ``.ipynb``
    whose cells differ (otherwise a warning: an edit made only there is never silently ignored)."""
    commit, reason = source_commit(p.root)
    if p.publishes:
        if source != p.root / "notebooks" / source.name:  # a scratch copy (lab/, `make lab`) is never the default
            raise ValueError(f"refusing to publish {rel(source)}: only notebooks/{source.name}, committed, publishes "
                             f"to figures/{p.name}/; run it without --publish (outputs then go to "
                             f"{rel(plan(source, p.profile, False, p.root).outputs)}/)")
        check_clean(commit, f"figures/{p.name}/", reason, p.root)
    if (paired := paired_difference(source)) and p.publishes:
        raise ValueError(f"refusing to publish {p.name}: {paired}")
    if paired:
        print(f"warning: {paired}", file=sys.stderr, flush=True)
    return commit


def paired_notebook(source: Path) -> Path | None:
    """The existing ``.ipynb`` that jupytext pairs with ``source`` (by ``jupytext.toml``, else beside it), or None."""
    source = Path(source).resolve()
    candidates = [source.with_suffix(".ipynb")]
    try:
        from jupytext.config import load_jupytext_config
        from jupytext.paired_paths import paired_paths

        config = load_jupytext_config(str(source))
        if config and (formats := config.default_formats(str(source))):
            candidates = [Path(p) for p, fmt in paired_paths(str(source), "py:percent", formats)
                          if fmt.get("extension") == ".ipynb"] or candidates
    except Exception:  # noqa: BLE001 - a config jupytext cannot pair with falls back to the sibling .ipynb
        pass
    return next((p for p in candidates if p.is_file()), None)


def paired_difference(source: Path) -> str | None:
    """One line if the paired ``.ipynb`` of ``source`` has cells (type and source) that differ from the ``.py``'s:
    which is newer, the first cell that differs and how to sync; else None. ValueError: an unreadable ``.ipynb``."""
    import jupytext

    source = Path(source).resolve()
    if (ipynb := paired_notebook(source)) is None:
        return None
    try:
        ours, theirs = jupytext.read(source).cells, jupytext.read(ipynb).cells
    except Exception as err:  # noqa: BLE001 - a corrupt .ipynb (half-saved, a merge conflict) is named in one line
        why = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"cannot read {ipynb.name}, paired with {source.name}: {why}; "
                         f"delete it or sync it with `jupytext --sync {rel(source)}`") from None
    pairs = [(a.cell_type, a.source.rstrip()) for a in ours], [(b.cell_type, b.source.rstrip()) for b in theirs]
    if pairs[0] == pairs[1]:
        return None
    first = next((i for i, (a, b) in enumerate(zip(*pairs, strict=False)) if a != b), min(map(len, pairs)))
    newer = ipynb.name if ipynb.stat().st_mtime > source.stat().st_mtime else source.name
    return (f"{ipynb.name} (paired by jupytext) differs from {source.name} from cell {first + 1} on "
            f"({len(pairs[1])} cells vs {len(pairs[0])}; {newer} is newer), and the run executes {source.name}: "
            f"sync them with `jupytext --sync {rel(source)}` (the newer file's cells win) or delete {ipynb.name}")


def _warn_changed(read: dict[Path, str], name: str) -> None:
    """One line naming the files whose content changed on disk while the run used what it had read."""
    if edited := [f for f, sha in read.items() if (digest(f) if f.is_file() else None) != sha]:  # or gone
        names = ", ".join(rel(f) for f in edited[:3]) + (f" and {len(edited) - 3} more" if len(edited) > 3 else "")
        print(f"warning: {names} changed on disk while {name} ran; its results are of the files as they were "
              "read at the start, and the next `make` reruns it", file=sys.stderr, flush=True)


def _publish(run: Attempt, done, parameters: dict[str, Any], commit: str) -> None:
    """Put a finished run in place: the HTML and its stamp, the staging folder, then the executed notebook."""
    import nbformat

    p, stage = run.plan, run.stage
    if p.publish:
        html = render_html(done, stage / f"{p.name}.html", p.name, figures_json=stage / "figures.json")
        metrics = stage / "metrics.json"  # the kernel's thread count and versions, as its outputs are stamped
        kernel = json.loads(metrics.read_text(encoding="utf-8")) if metrics.is_file() else {}
        record(stage, [html], {"source": f"notebooks/{p.name}.py", "profile": p.profile, "parameters": parameters,
                               "git_commit": commit, **{k: kernel[k] for k in ("threads", "versions") if k in kernel}})
    replace_dir(stage, p.outputs)
    run.phase = "published"
    with atomic_path(p.executed) as tmp:
        nbformat.write(done, str(tmp))
    p.failed.unlink(missing_ok=True)  # an earlier failure's notebook no longer describes this run


def main(argv: list[str] | None = None) -> int:
    """The command line; an expected error is one line on stderr and exit status 2 (bad input) or 1 (a cell failed)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="notebooks/NN_name.py")
    ap.add_argument("--profile", default="cpu", help="smoke | cpu | paper (default cpu)")
    ap.add_argument("--publish", action="store_true",
                    help="make's run: write figures/<notebook>/ (never at smoke) with an HTML rendering; "
                         "refused from uncommitted sources")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="set a parameter of the notebook's parameters cell; VALUE is read as JSON "
                         "(e.g. -p overrides '{\"seeds\": [3, 4]}'), else as a string")
    ap.add_argument("--start-timeout", type=float, default=None, metavar="SECONDS",
                    help="seconds the kernel may take to start and answer (default: $PAPER_LIB_START_TIMEOUT, else 60)")
    args = ap.parse_args(argv)
    name = Path(args.source).stem
    if (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "") != "utf8" and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")  # a notebook's "—" on a latin-1 or ASCII terminal: shown as "?"
    try:
        with signals_interrupt():
            p = plan(args.source, args.profile, args.publish)
            params = {}
            for key, value in args.param:  # VALUE is read as JSON, else taken as a string
                try:
                    params[key] = json.loads(value)
                except json.JSONDecodeError:
                    params[key] = value
            t0 = time.perf_counter()
            executed = run_notebook(args.source, args.profile, params, publish=args.publish, stream=True,
                                    start_timeout_s=args.start_timeout)
    except (ValueError, FileNotFoundError, PermissionError, NotebookFailed) as err:
        print(f"error: {err}", file=sys.stderr)
        return err.code if isinstance(err, NotebookFailed) else 2
    except KeyboardInterrupt as err:  # before the run began or after it ended: nothing of it to keep
        print(f"error: {name}: interrupted by {signal.Signals(signal_of(err)).name}", file=sys.stderr)
        return 128 + signal_of(err)
    print(f"[{name}] done in {time.perf_counter() - t0:.0f} s -> {rel(p.outputs)}; "
          f"executed notebook {rel(executed)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
