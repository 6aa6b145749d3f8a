"""Execute a jupytext notebook headlessly with papermill (what ``make all`` runs).

``python -m paper_lib.pipeline.runner notebooks/01_grammar_probe.py --profile smoke`` converts
the ``py:percent`` source to ``build/notebooks/01_grammar_probe.ipynb``, checks the parameters
(``-p NAME VALUE``) against the notebook's ``parameters`` cell before any kernel starts, runs
it with papermill and streams its progress (one line per code cell, and the notebook's own
tqdm bars) to the terminal.

Where things land (:class:`RunPlan`):

- without ``--publish`` (a one-off run): outputs in ``build/<profile>/figures/<notebook>/``,
  the executed notebook in ``build/<profile>/executed/<notebook>.ipynb``;
- with ``--publish`` (``make``'s recipe): outputs in ``figures/<notebook>/`` (but
  ``build/smoke/figures/<notebook>/`` at smoke, which never publishes), together with the
  executed notebook rendered as self-contained HTML, ``<notebook>.html``; the executed
  notebook in ``build/executed/<profile>/<notebook>.ipynb``, ``make``'s target. Publishing at
  cpu or paper from sources with uncommitted changes is refused (one line), so every
  published result names a commit that produced it.

The kernel writes into a fresh staging folder; the runner swaps it in for the old output
folder only when every cell ran (and the HTML is written), then writes the executed notebook.
A failed run leaves the old outputs as they were, no executed notebook (so ``make`` reruns
it), its notebook with the traceback in ``build/<profile>/failed/`` and a one-line error.
The profile has one source, ``--profile``: ``-p profile`` is refused. Our design: the paper is silent.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .atomic import atomic_path, fresh_dir, replace_dir
from .params import check_values
from .profiles import check_profile
from .provenance import RUN_ENV, check_clean, output_dir, record, source_commit, source_date_epoch
from .threads import WAIT_POLICY_ENV

REPO_ROOT = Path(__file__).resolve().parents[2]
KERNEL_ARGS = ["--IPKernelApp.extensions=['paper_lib.pipeline.headless']"]  # text tqdm bars, streamed
PROFILE_PARAM = ("the profile is set with --profile, never with -p profile (it also decides where the outputs "
                 "and the executed notebook land)")
HTML_TAGS = {"remove_cell_tags": {"remove-cell"}, "remove_all_outputs_tags": {"remove-output"},
             "remove_input_tags": {"remove-input"}}
PROGRESS_LINE = re.compile(r"\[[\d:]+(?:<[\d:?]+)?, [^\]]*\]\s*$")  # the tail of a tqdm bar: [00:01<00:02, 1.2it/s]


class NotebookFailed(RuntimeError):
    """A cell raised; the message is one line and ``failed`` the executed notebook with the traceback."""

    def __init__(self, message: str, failed: Path):
        super().__init__(message)
        self.failed = failed


@dataclass(frozen=True)
class RunPlan:
    """Where one run reads and writes (see the module docstring)."""

    name: str
    profile: str
    root: Path
    publish: bool  # make's run: HTML, and the executed notebook at make's target
    outputs: Path  # the output folder once the run is complete
    executed: Path
    failed: Path

    @property
    def publishes(self) -> bool:
        """Whether the outputs go to ``figures/`` (not at smoke)."""
        return self.publish and self.profile != "smoke"


def plan(source: str | Path, profile: str, publish: bool = False, root: str | Path | None = None) -> RunPlan:
    """The paths of a run of ``source`` at ``profile``; ``root`` defaults to the source's checkout.

    Raises:
        ValueError: unknown profile.
    """
    check_profile(profile)
    source = Path(source).resolve()
    root = Path(root).resolve() if root is not None else source.parent.parent
    build, name = root / "build", source.stem
    executed = build / "executed" / profile if publish else build / profile / "executed"
    return RunPlan(name, profile, root, publish, output_dir(name, profile, root, publish and profile != "smoke"),
                   executed / f"{name}.ipynb", build / profile / "failed" / f"{name}.ipynb")


def convert(source: Path, ipynb: Path):
    """Write the jupytext ``source`` as ``ipynb`` (kernel ``python3``, cell ids ``cell-000``, ...)."""
    import jupytext

    nb = jupytext.read(source)
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    _number_cells(nb)
    with atomic_path(ipynb) as tmp:
        jupytext.write(nb, tmp, fmt="ipynb")
    return nb


def _number_cells(nb) -> None:
    for i, cell in enumerate(nb.cells):  # jupytext and papermill draw random ids; the HTML shows them
        cell["id"] = f"cell-{i:03d}"


def check_notebook_parameters(ipynb: Path, name: str, parameters: dict[str, Any]) -> None:
    """Check ``parameters`` against the notebook's ``parameters`` cell, before anything runs.

    Raises:
        ValueError: ``profile`` given (it is ``--profile``), a name the cell does not define (with
            a hint when it is a setting that belongs in ``overrides``), a value whose type differs
            from the default's, or a bad shared value (:func:`paper_lib.pipeline.params.check_values`).
    """
    import papermill as pm

    if "profile" in parameters:
        raise ValueError(PROFILE_PARAM)
    known = pm.inspect_notebook(str(ipynb))
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        hint = (f"; a setting goes into overrides, e.g. -p overrides '{{\"{unknown[0]}\": ...}}'"
                if "overrides" in known else "")
        raise ValueError(f"unknown notebook parameter(s) {', '.join(unknown)} for {name}; "
                         f"allowed: {', '.join(k for k in known if k != 'profile')}{hint}")
    for key, value in parameters.items():
        _check_type(key, value, known[key].get("default"))
    check_values(parameters)


def _check_type(key: str, value: Any, default_source: str | None) -> None:
    try:
        default = ast.literal_eval(default_source) if default_source else None
    except (ValueError, SyntaxError):
        return
    kinds = [(bool, "true or false"), ((int, float), "a number"), (str, "a string"), (dict, "a JSON object"),
             ((list, tuple), "a JSON list")]
    for kind, words in kinds:
        if isinstance(default, kind):
            if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                raise ValueError(f"parameter {key} takes {words} (its default is {default_source}), got {value!r}")
            return


@contextlib.contextmanager
def _kernel_env(root: Path, run: dict[str, Any]) -> Iterator[None]:
    """Set what the kernel inherits: paper_lib of this checkout first, the run, a fixed file date."""
    path = [str(root), str(REPO_ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys(path)), RUN_ENV: json.dumps(run),
           "TQDM_MININTERVAL": os.environ.get("TQDM_MININTERVAL", "1")}  # a bar redraws at most once a second
    epoch = source_date_epoch(root)
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = str(epoch)  # any date a library writes is the commit's
    old = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


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
    """nbclient's ``on_cell_execute`` hook: one line per code cell, ``[name] 3/14 · heading (0:00:42)``."""

    def __init__(self, name: str, nb):
        self.name, self.t0, self.k = name, time.perf_counter(), 0
        self.total = sum(c.cell_type == "code" for c in nb.cells) + 1  # + papermill's parameters cell
        self.heading = {c["id"]: h for c, h in zip(nb.cells, _headings(nb), strict=True)}

    def __call__(self, cell, cell_index: int) -> None:
        self.k += 1
        elapsed = time.strftime("%H:%M:%S", time.gmtime(time.perf_counter() - self.t0))
        head = self.heading.get(cell.get("id"), "the values papermill injects")
        print(f"[{self.name}] cell {self.k}/{self.total}" + (f" · {head}" if head else "") + f" ({elapsed})",
              flush=True)


def tidy(nb):
    """The executed notebook as a reader wants it: each stream keeps the last state of its
    redrawn lines (a tqdm bar's final line, not every redraw), and cells are numbered."""
    _number_cells(nb)
    for cell in nb.cells:
        merged = []  # the kernel sends each redraw as its own output; a front end joins them, so do we
        for out in cell.get("outputs", []):
            last = merged[-1] if merged else {}
            if out.get("output_type") == "stream" and last.get("output_type") == "stream" and last.get("name") == out.get("name"):
                last["text"] += out["text"]
            else:
                merged.append(out)
        for out in merged:
            if out.get("output_type") == "stream":
                out["text"] = _last_redraw(out["text"])
        if "outputs" in cell:
            cell["outputs"] = merged
    return nb


def _last_redraw(text: str) -> str:
    """Each line as a terminal shows it after its carriage returns; lines a bar cleared are dropped."""
    kept = []
    for line in text.split("\n"):
        shown = line.rsplit("\r", 1)[-1]
        if shown.strip() or "\r" not in line:
            kept.append(shown)
    return "\n".join(kept)


def render_html(nb, path: Path, title: str) -> Path:
    """Write the executed notebook ``nb`` as one self-contained HTML file (code, outputs, images
    embedded), without progress bars, whose timings change from run to run.

    The cell tags of :data:`HTML_TAGS` (those of jupyter-book) leave out what changes from run to
    run or machine to machine without being a result, e.g. ``# %% tags=["remove-output"]`` on a
    cell that prints the wall time or an absolute path, so a rerun with the same numbers writes
    the same HTML.
    """
    import copy

    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        kept = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                out["text"] = "\n".join(ln for ln in out["text"].split("\n") if not PROGRESS_LINE.search(ln))
                if not out["text"].strip():
                    continue
            kept.append(out)
        cell["outputs"] = kept if cell.cell_type == "code" else cell.get("outputs", [])
        cell.get("metadata", {}).pop("papermill", None)
        cell.get("metadata", {}).pop("execution", None)
    exporter = HTMLExporter(embed_images=True)
    exporter.register_preprocessor(TagRemovePreprocessor(**HTML_TAGS), enabled=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    with atomic_path(path) as tmp:
        tmp.write_text(body, encoding="utf-8")
    return path


def run_notebook(source: str | Path, profile: str, parameters: dict[str, Any] | None = None,
                 publish: bool = False, root: str | Path | None = None, stream: bool = False) -> Path:
    """Convert, check and execute one notebook; return the executed ``.ipynb`` path.

    Args:
        source: a ``notebooks/NN_name.py`` jupytext file.
        profile: ``smoke``, ``cpu`` or ``paper``.
        parameters: papermill parameters other than ``profile`` (each must exist in the
            ``parameters`` cell; values are checked before the kernel starts).
        publish: ``make``'s run: outputs to ``figures/`` (not at smoke), an HTML rendering,
            the executed notebook at ``build/executed/<profile>/``.
        root: the project root (default: the source's checkout, whose ``paper_lib`` the kernel
            imports first, whatever environment runs it).
        stream: print one line per code cell and the notebook's printed output and progress bars.

    Raises:
        ValueError: unknown profile, bad parameter (see :func:`check_notebook_parameters`), or
            publishing from uncommitted sources.
        FileNotFoundError: no such source.
        NotebookFailed: a cell raised (one-line message; the old outputs are untouched).
    """
    import papermill as pm

    p = plan(source, profile, publish, root)
    source = Path(source).resolve()
    if not source.is_file():
        raise FileNotFoundError(f"no notebook source at {source}")
    parameters = dict(parameters or {})
    if "profile" in parameters:
        raise ValueError(PROFILE_PARAM)
    commit, reason = source_commit(p.root)
    if p.publishes:
        check_clean(commit, f"figures/{p.name}/", reason)
    ipynb = p.root / "build" / "notebooks" / f"{p.name}.ipynb"
    nb = convert(source, ipynb)
    check_notebook_parameters(ipynb, p.name, parameters)
    stage = fresh_dir(p.outputs)
    p.executed.parent.mkdir(parents=True, exist_ok=True)
    running = p.executed.parent / f".{p.name}.running-{os.getpid()}.ipynb"
    run = {"notebook": p.name, "profile": profile, "root": str(p.root), "dir": str(p.outputs),
           "stage": str(stage), "git_commit": commit, "published": p.publishes}
    if stream:
        why = "" if p.publishes else " (smoke never publishes)" if publish else " (not published: make all publishes)"
        print(f"[{p.name}] profile {profile}, outputs -> {_rel(p.outputs)}{why}", flush=True)
    extra = {"stdout_file": sys.stdout, "stderr_file": sys.stderr, "on_cell_execute": _Progress(p.name, nb)} if stream else {}
    # issue 14 (pipeline/threads.py): the kernel's OpenMP threads sleep while they wait for a core.
    for key, value in WAIT_POLICY_ENV.items():
        os.environ.setdefault(key, value)
    try:
        with _kernel_env(p.root, run):
            done = pm.execute_notebook(str(ipynb), str(running), parameters={"profile": profile, **parameters},
                                       kernel_name="python3", cwd=str(source.parent), progress_bar=False,
                                       extra_arguments=KERNEL_ARGS, **extra)
        done = tidy(done)
        if publish:
            html = render_html(done, stage / f"{p.name}.html", p.name)
            record(stage, [html], {"source": f"notebooks/{p.name}.py", "profile": profile,
                                   "parameters": parameters, "git_commit": commit})
        replace_dir(stage, p.outputs)
        import nbformat

        with atomic_path(p.executed) as tmp:
            nbformat.write(done, str(tmp))
        p.failed.unlink(missing_ok=True)  # an earlier failure's notebook no longer describes this run
    except pm.PapermillExecutionError as err:
        p.failed.parent.mkdir(parents=True, exist_ok=True)
        if running.exists():
            os.replace(running, p.failed)
        where = _headings(nb)[min(err.cell_index, len(nb.cells)) - 1] if err.cell_index else ""
        first = (str(err.evalue).strip().splitlines() or [""])[0]
        raise NotebookFailed(f"{p.name} failed in cell [{err.exec_count}]" + (f" ({where})" if where else "")
                             + f": {err.ename}: {first}; traceback in {_rel(p.failed)}", p.failed) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        running.unlink(missing_ok=True)
    return p.executed


def _rel(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.relative_to(Path.cwd()))
    return str(path)


def parse_params(pairs: list[list[str]]) -> dict[str, Any]:
    """``-p NAME VALUE`` pairs as a dict; VALUE is read as JSON, else taken as a string."""
    params = {}
    for key, value in pairs:
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def main(argv: list[str] | None = None) -> int:
    """The command line; every expected error is one line on stderr and exit status 2 (bad
    input) or 1 (a cell failed)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="notebooks/NN_name.py")
    ap.add_argument("--profile", default="cpu", help="smoke | cpu | paper (default cpu)")
    ap.add_argument("--publish", action="store_true",
                    help="make's run: write figures/<notebook>/ (never at smoke) with an HTML rendering; "
                         "refused from uncommitted sources")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="set a parameter of the notebook's parameters cell; VALUE is read as JSON "
                         "(e.g. -p overrides '{\"seeds\": [3, 4]}'), else as a string")
    args = ap.parse_args(argv)
    name = Path(args.source).stem
    try:
        p = plan(args.source, args.profile, args.publish)
        params = parse_params(args.param)
        t0 = time.perf_counter()
        executed = run_notebook(args.source, args.profile, params, publish=args.publish, stream=True)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except NotebookFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"[{name}] done in {time.perf_counter() - t0:.0f} s -> {_rel(p.outputs)}; "
          f"executed notebook {_rel(executed)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
