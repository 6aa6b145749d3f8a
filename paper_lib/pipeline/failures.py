"""How a notebook run that cannot finish ends: one line, and nothing finished thrown away (a signal:
:func:`signals_interrupt`; a kernel that never answers: :func:`kernel_start_failure`; a full or read-only
disk after every cell ran: :func:`keep_outputs`). Our design: the paper is silent."""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import threading
from pathlib import Path
from typing import Iterator

from .atomic import NotReplaceable, _umask, disk_full, mount_point, write_failure

START_TIMEOUT_ENV = "PAPER_LIB_START_TIMEOUT"
"""Seconds a kernel may take to start and answer (default 60)."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: a ``KeyboardInterrupt`` (libraries clean up as for Ctrl-C) naming it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_of(err: BaseException) -> int:
    """The signal that interrupted the run: :class:`Interrupted`'s, else SIGINT (Ctrl-C)."""
    return getattr(err, "signum", signal.SIGINT)


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """Within the block (in the main thread), SIGTERM and SIGHUP raise :class:`Interrupted`, unless ignored (nohup)."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, _frame):
        raise Interrupted(signum)

    taken = [s for s in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) != signal.SIG_IGN]
    old = {s: signal.signal(s, handler) for s in taken}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def start_timeout(value: float | None = None) -> float:
    """The kernel start timeout in seconds: ``value``, else :data:`START_TIMEOUT_ENV`, else 60; ValueError (one
    line naming the setting) unless it is a number > 0."""
    text = value if value is not None else os.environ.get(START_TIMEOUT_ENV) or 60.0
    with contextlib.suppress(TypeError, ValueError):
        if (seconds := float(text)) > 0:
            return seconds
    raise ValueError(f"the kernel start timeout (--start-timeout or {START_TIMEOUT_ENV}) must be a number of "
                     f"seconds > 0, got {text!r}")


@contextlib.contextmanager
def quiet_start_errors() -> Iterator[None]:
    """Within the block, papermill's logger leaves out nbclient's kernel-start error (the runner's line says it)."""
    log, quiet = logging.getLogger("papermill"), lambda r: not str(r.msg).startswith("Error occurred while starting")
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


def kernel_start_failure(name: str, err: BaseException, status: int | None, timeout: float) -> str:
    """The one line for a kernel that never answered; ``status``: its exit status (negative: nbclient killed it)."""
    try:  # the program the ``python3`` kernelspec starts (what a user must fix)
        from jupyter_client.kernelspec import get_kernel_spec

        python = get_kernel_spec("python3").argv[0]
    except Exception:  # noqa: BLE001 - no spec found: nbclient falls back to this interpreter
        python = sys.executable
    longer = max(300, 5 * timeout)
    if "didn't respond" in str(err) or (status is not None and status < 0):
        return (f"{name}: the kernel ({python}) did not answer within {timeout:g} s of starting (a loaded "
                f"machine or a slow disk?); allow it longer with --start-timeout {longer:g} "
                f"(for make: {START_TIMEOUT_ENV}={longer:g} make ...)")
    how = f"exited with status {status}" if status is not None else "died"
    return (f"{name}: the kernel ({python}) {how} before it answered, so no cell ran (its own message is "
            f"above); a Python without ipykernel? install it with `{python} -m pip install ipykernel`, or "
            f"register this environment's kernel with `{sys.executable} -m ipykernel install --user --name python3`")


def keep_outputs(stage: Path, kept: Path) -> Path:
    """Move a finished run's outputs, the folder ``stage``, to ``kept`` (replacing an older one there): a rename
    where one file system holds both, else a copy. Returns ``kept``, or ``stage`` if it could not move."""
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        if kept.exists():
            shutil.rmtree(kept)
        try:
            os.replace(stage, kept)
        except OSError:
            shutil.copytree(stage, kept)
            shutil.rmtree(stage, ignore_errors=True)
        os.chmod(kept, 0o777 & ~_umask())  # the staging folder was made 0700
    except OSError:
        shutil.rmtree(kept, ignore_errors=True)
        return stage
    return kept


class Attempt:
    """What one run (``plan``: a ``RunPlan``) has made so far, so that a run that stops keeps what it finished and
    leaves no scratch file; ``phase``: ``"running"``, ``"ran"`` (outputs not in place) or ``"published"``."""

    def __init__(self, plan, ipynb: Path):
        self.plan, self.ipynb, self.phase = plan, ipynb, "running"
        self.stage = self.running = self.kept = self.progress = None  # made as the run goes

    def keep_notebook(self) -> None:
        """Move the notebook as far as it ran to ``plan.failed`` (left where it is if it cannot move)."""
        if self.running is not None and self.running.is_file() and self.running.stat().st_size:
            with contextlib.suppress(OSError):
                self.plan.failed.parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.running, self.plan.failed)

    def keep(self) -> None:
        """Keep the notebook as far as it ran and, if every cell ran, the outputs not yet in place."""
        self.keep_notebook()
        if self.phase == "ran" and self.stage is not None and self.stage.is_dir():
            self.kept = keep_outputs(self.stage, self.plan.kept)

    def stopped(self, why: str) -> str:
        """The one line for a run stopped by ``why`` (a signal, a write failure), saying what is kept where."""
        p = self.plan
        notebook = f"the notebook as far as it ran: {rel(p.failed)}" if p.failed.is_file() else "no notebook was kept"
        if self.phase == "running":
            where = self.progress.now() if self.progress is not None else "before its first cell"
            return f"{p.name}: {why} {where}; nothing was published and the previous outputs are as they were; {notebook}"
        if self.phase == "ran":
            return (f"{p.name}: every cell ran, but {why}; the finished outputs are kept in {rel(self.kept or p.kept)}/ "
                    f"and the executed notebook in {rel(p.failed)}; the previous outputs in {rel(p.outputs)}/ are as "
                    "they were")
        return (f"{p.name}: every cell ran and the outputs are in {rel(p.outputs)}/, but {why}; the executed "
                f"notebook is kept in {rel(p.failed)}, and the next make reruns the notebook")

    def explain(self, err: BaseException, status: int | None, timeout: float) -> tuple[str, int] | None:
        """The one line and exit status for a signal, a kernel that never answered (``status``: its exit status)
        or a failed write, having kept what the run finished; None for any other ``err``."""
        if isinstance(err, KeyboardInterrupt):
            self.keep()
            sig = signal_of(err)
            return self.stopped(f"interrupted by {signal.Signals(sig).name}"), 128 + sig
        if isinstance(err, OSError):
            p = self.plan
            near = {"running": self.running.parent if self.running else p.outputs, "ran": self.stage or p.outputs}
            path = Path(getattr(err, "path", None) or getattr(err, "filename", None) or near.get(self.phase, p.executed))
            why = write_failure(path, err) if not isinstance(err, NotReplaceable) else str(err)
            self.keep()
            fix = "" if isinstance(err, NotReplaceable) else \
                f"; free space on {mount_point(path)} and rerun" if disk_full(err) else "; make it writable and rerun"
            return self.stopped(why) + fix, 1
        no_cell = self.progress is not None and self.progress.cell is None
        if isinstance(err, RuntimeError) and no_cell and status is not None:
            return kernel_start_failure(self.plan.name, err, status, timeout), 1
        return None

    def clean(self) -> None:
        """Remove the run's scratch files and its staging folder (unless its outputs are kept there)."""
        self.ipynb.unlink(missing_ok=True)
        if self.stage is not None and self.stage != self.kept:
            shutil.rmtree(self.stage, ignore_errors=True)
        if self.running is not None:
            self.running.unlink(missing_ok=True)


def rel(path: Path, root: Path | None = None) -> str:
    """``path`` relative to ``root`` (default: the working directory), else as it is."""
    with contextlib.suppress(ValueError):
        return str(path.relative_to(root or Path.cwd()))
    return str(path)
