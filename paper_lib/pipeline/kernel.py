"""The notebook kernel as the runner starts and watches it: its environment, and how it ended.

- :func:`kernel_env`: what the kernel inherits (this checkout's ``paper_lib`` first, the run,
  a fixed file date, and :data:`KERNEL_ENV`, which no shell setting overrides: matplotlib's
  inline backend, since ``MPLBACKEND=Agg``, common on servers, would leave the executed
  notebook and its HTML without figures; Python's UTF-8 mode, whatever the locale).
- :func:`watched_kernel_manager`: a kernel manager that keeps the kernel's process, so that when
  the kernel dies (the OOM killer's SIGKILL, a segfault) the runner can say how
  (:func:`describe_exit`) instead of nbclient's ``DeadKernelError`` traceback.

Our design: the paper is silent.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any, Iterator

REPO_ROOT = Path(__file__).resolve().parents[2]
KERNEL_ENV: dict[str, str] = {"MPLBACKEND": "module://matplotlib_inline.backend_inline", "PYTHONUTF8": "1"}
"""Set for every kernel whatever the user's shell says (``MPLBACKEND=Agg`` gives no figures; a
latin-1 or ASCII locale would make ``open()`` without an encoding read UTF-8 text wrongly)."""


@contextlib.contextmanager
def kernel_env(root: Path, run: dict[str, Any], run_env: str, epoch: int | None) -> Iterator[None]:
    """Set, for the kernel started inside the block, what it inherits: ``paper_lib`` of ``root``
    first on ``PYTHONPATH``, the run (JSON in ``run_env``), ``SOURCE_DATE_EPOCH=epoch`` (any date a
    library writes is the commit's), ``TQDM_MININTERVAL`` and :data:`KERNEL_ENV`; the runner's own
    environment is restored after. Raises nothing."""
    path = [str(root), str(REPO_ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys(path)), run_env: json.dumps(run),
           "TQDM_MININTERVAL": os.environ.get("TQDM_MININTERVAL", "1"),  # a bar redraws at most once a second
           **KERNEL_ENV}
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = str(epoch)
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


def watched_kernel_manager():
    """A subclass of jupyter_client's ``AsyncKernelManager`` (for nbclient's ``kernel_manager_class``)
    whose class attribute ``processes`` collects the ``Popen`` of every kernel it starts, so that
    its exit status can be read once nbclient reports the kernel dead. A new class per call, so
    runs do not share the list. Our design: the paper is silent."""
    from jupyter_client.manager import AsyncKernelManager

    class WatchedKernelManager(AsyncKernelManager):
        processes: list = []

        async def start_kernel(self, **kw):  # noqa: D102 (jupyter_client's)
            await super().start_kernel(**kw)
            process = getattr(self.provisioner, "process", None)
            if process is not None:
                type(self).processes.append(process)

    WatchedKernelManager.processes = []
    return WatchedKernelManager


def exit_status(manager_class) -> int | None:
    """The exit status of the last kernel ``manager_class`` started (negative: the signal that
    killed it), or None when it is unknown (still running after 5 s, or never started)."""
    processes = getattr(manager_class, "processes", [])
    if not processes:
        return None
    process = processes[-1]
    with contextlib.suppress(Exception):
        return process.wait(timeout=5) if process.returncode is None else process.returncode
    return None


def describe_exit(status: int | None) -> str:
    """How a kernel ended, in words: ``killed by signal 9 (SIGKILL); out of memory?`` (Linux's OOM
    killer sends SIGKILL), a crash for other signals, the exit status, or that it is unknown."""
    if status is None:
        return "how is unknown (no exit status; out of memory, or a crash in native code?)"
    if status >= 0:
        return f"it exited with status {status}"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = "unknown signal"
    hint = "; out of memory?" if -status == signal.SIGKILL else ", a crash in native code"
    return f"killed by signal {-status} ({name}){hint}"
