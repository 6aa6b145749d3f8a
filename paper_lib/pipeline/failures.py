"""How a notebook run that cannot finish ends: one line, and nothing finished thrown away.

- :func:`signals_interrupt`: SIGTERM and SIGHUP (a ``kill``, a closed terminal, a job scheduler)
  raise :class:`Interrupted` in the runner, as Ctrl-C raises ``KeyboardInterrupt``, so the
  runner's clean-up runs (the kernel is shut down, its scratch files and staging folder go) and
  the run ends with one line and exit status ``128 + signal``.
- :func:`kernel_start_failure`: a kernel that does not answer within the start timeout
  (:data:`START_TIMEOUT_ENV`, the runner's ``--start-timeout``), or one that exits before it
  answers (a kernelspec whose Python lacks ipykernel), in one line with the setting or the fix.
- :func:`keep_outputs`: when publishing fails after every cell ran (a full or read-only disk),
  the finished outputs move to ``build/<profile>/kept/<notebook>/`` instead of being deleted.

Our design: the paper is silent.
"""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Iterator

START_TIMEOUT_ENV = "PAPER_LIB_START_TIMEOUT"
"""Seconds a kernel may take to start and answer (default :data:`START_TIMEOUT_S`)."""
START_TIMEOUT_S = 60.0
CAUGHT = (signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: a ``KeyboardInterrupt`` (libraries clean up as for Ctrl-C) that
    names its signal."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_of(err: BaseException) -> int:
    """The signal that interrupted the run: :class:`Interrupted`'s, else SIGINT (Ctrl-C)."""
    return getattr(err, "signum", signal.SIGINT)


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Interrupted` (main thread only; elsewhere
    a no-op); the previous handlers are restored after."""
    if os.name != "posix" or not _main_thread():
        yield
        return

    def handler(signum, _frame):
        raise Interrupted(signum)

    old = {s: signal.signal(s, handler) for s in CAUGHT}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def start_timeout(value: float | None = None) -> float:
    """The kernel start timeout in seconds: ``value``, else :data:`START_TIMEOUT_ENV`, else 60.

    Raises:
        ValueError: not a number > 0 (one line naming the setting).
    """
    text = value if value is not None else os.environ.get(START_TIMEOUT_ENV) or START_TIMEOUT_S
    try:
        seconds = float(text)
    except (TypeError, ValueError):
        seconds = -1.0
    if not seconds > 0:
        raise ValueError(f"the kernel start timeout (--start-timeout or {START_TIMEOUT_ENV}) must be a number of "
                         f"seconds > 0, got {text!r}")
    return seconds


class _QuietStartError(logging.Filter):
    """Drops nbclient's log line for a kernel that did not start (the runner says it in one line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Error occurred while starting new kernel client")


@contextlib.contextmanager
def quiet_start_errors() -> Iterator[None]:
    """Within the block, papermill's logger leaves out nbclient's kernel-start error line."""
    quiet, log = _QuietStartError(), logging.getLogger("papermill")
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


def kernel_start_failure(name: str, err: BaseException, status: int | None, timeout: float) -> str:
    """The one line for a kernel that never answered: ``status`` is its exit status (negative: the
    signal; nbclient kills one that did not answer in time), ``timeout`` the start timeout (s)."""
    python = _kernel_python()
    timed_out = "didn't respond" in str(err) or (status is not None and status < 0)
    if timed_out:
        return (f"{name}: the kernel ({python}) did not answer within {timeout:g} s of starting (a loaded "
                f"machine or a slow disk?); allow it longer with --start-timeout {max(300, 5 * timeout):g} "
                f"(for make: {START_TIMEOUT_ENV}={max(300, 5 * timeout):g} make ...)")
    how = f"exited with status {status}" if status is not None else "died"
    return (f"{name}: the kernel ({python}) {how} before it answered, so no cell ran (its own message is "
            f"above); a Python without ipykernel? install it with `{python} -m pip install ipykernel`, or "
            f"register this environment's kernel with `{sys.executable} -m ipykernel install --user --name python3`")


def _kernel_python() -> str:
    """The program the ``python3`` kernelspec starts (what a user must fix)."""
    try:
        from jupyter_client.kernelspec import get_kernel_spec

        return get_kernel_spec("python3").argv[0]
    except Exception:  # noqa: BLE001 - no spec found: nbclient falls back to this interpreter
        return sys.executable


def keep_outputs(stage: Path, kept: Path) -> Path:
    """Move a finished run's outputs, the folder ``stage``, to ``kept`` (replacing a folder kept
    there before); a rename where one file system holds both (no space needed), else a copy. Returns
    where they are: ``kept``, or ``stage`` itself if it could not move (it is then left in place)."""
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        if kept.exists():
            shutil.rmtree(kept)
        try:
            os.replace(stage, kept)
        except OSError:
            shutil.copytree(stage, kept)
            shutil.rmtree(stage, ignore_errors=True)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(kept, 0o777 & ~mask)  # the staging folder was made 0700
    except OSError:
        shutil.rmtree(kept, ignore_errors=True)
        return stage
    return kept


class Attempt:
    """What one notebook run has made so far, so that a run that stops keeps what it finished and
    leaves no scratch file behind.

    Attributes:
        plan: the run's :class:`~paper_lib.pipeline.runner.RunPlan` (``name``, ``outputs``,
            ``failed``, ``kept``). ipynb: the converted notebook (this run's own).
        stage: the staging folder; running: papermill's notebook as it runs; progress: the cell hook.
        phase: ``"running"`` (cells run), ``"ran"`` (every cell ran, outputs not yet in place) or
            ``"published"`` (outputs in place, the executed notebook not yet written).
        kept: where the finished outputs were kept, once :meth:`keep` kept them.
    """

    def __init__(self, plan, ipynb: Path):
        self.plan, self.ipynb, self.phase = plan, ipynb, "running"
        self.stage: Path | None = None
        self.running: Path | None = None
        self.kept: Path | None = None
        self.progress = None

    def keep_notebook(self) -> None:
        """Move the notebook as far as it ran (papermill saved it) to ``plan.failed``; a failure to
        move it (a broken disk) leaves it where it is."""
        failed = self.plan.failed
        if self.running is not None and self.running.is_file() and self.running.stat().st_size:
            with contextlib.suppress(OSError):
                failed.parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.running, failed)

    def keep(self) -> None:
        """Keep what the run finished: the notebook as far as it ran and, when every cell ran but the
        outputs are not in place, the outputs (:func:`keep_outputs` to ``plan.kept``)."""
        self.keep_notebook()
        if self.phase == "ran" and self.stage is not None and self.stage.is_dir():
            self.kept = keep_outputs(self.stage, self.plan.kept)

    def stopped(self, why: str) -> str:
        """The one line for a run stopped by ``why`` (a signal, a write failure), saying what is kept where."""
        p = self.plan
        notebook = f"the notebook as far as it ran: {_rel(p.failed)}" if p.failed.is_file() else "no notebook was kept"
        if self.phase == "running":
            where = self.progress.now() if self.progress is not None else "before its first cell"
            return f"{p.name}: {why} {where}; nothing was published and the previous outputs are as they were; {notebook}"
        if self.phase == "ran":
            return (f"{p.name}: every cell ran, but {why}; the finished outputs are kept in {_rel(self.kept or p.kept)}/ "
                    f"and the executed notebook in {_rel(p.failed)}; the previous outputs in {_rel(p.outputs)}/ are as "
                    "they were")
        return (f"{p.name}: every cell ran and the outputs are in {_rel(p.outputs)}/, but {why}; the executed "
                f"notebook is kept in {_rel(p.failed)}, and the next make reruns the notebook")

    def explain(self, err: BaseException, status: int | None, timeout: float) -> tuple[str, int] | None:
        """The one line and exit status for ``err``, having kept what the run finished: a signal
        (``128 + signal``), a kernel that never answered (``status``: its exit status), a failed
        write (a full or read-only disk); None for an error that is none of these."""
        from .atomic import NotReplaceable, disk_full, mount_point, write_failure

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


def _rel(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.relative_to(Path.cwd()))
    return str(path)
