"""The notebook kernel as the runner starts and watches it: its environment (:func:`kernel_env`), its text progress
bars (:func:`load_ipython_extension`), and how it ended (:func:`watched_kernel_manager`, :func:`describe_exit`: the
OOM killer's SIGKILL or a segfault in words instead of nbclient's ``DeadKernelError`` traceback). Our design."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Iterator

REPO_ROOT = Path(__file__).resolve().parents[2]
KERNEL_ENV: dict[str, str] = {"MPLBACKEND": "module://matplotlib_inline.backend_inline", "PYTHONUTF8": "1"}
"""Set for every kernel whatever the shell says (``MPLBACKEND=Agg`` gives no figures; UTF-8 whatever the locale)."""


@contextlib.contextmanager
def kernel_env(root: Path, run: dict[str, Any], run_env: str, epoch: int | None) -> Iterator[None]:
    """Within the block, what a kernel started inherits: ``paper_lib`` of ``root`` first on ``PYTHONPATH``, the
    run (JSON in ``run_env``), ``SOURCE_DATE_EPOCH=epoch`` (any date a library writes is the commit's),
    ``TQDM_MININTERVAL`` and :data:`KERNEL_ENV`; the runner's environment is restored after."""
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
        os.environ.update({key: value for key, value in old.items() if value is not None})
        for key in [key for key, value in old.items() if value is None]:
            os.environ.pop(key, None)


def watched_kernel_manager():
    """A new ``AsyncKernelManager`` subclass (nbclient's ``kernel_manager_class``) whose ``processes`` collects
    the ``Popen`` of every kernel it starts, so that a dead kernel's exit status can be read; its kernels get
    CurveZMQ keys where pyzmq and the kernelspec allow (encrypted sockets: ipykernel then does not warn)."""
    import zmq
    from jupyter_client.manager import AsyncKernelManager

    class WatchedKernelManager(AsyncKernelManager):
        processes: list = []

        async def start_kernel(self, **kw):  # noqa: D102 (jupyter_client's)
            if zmq.has("curve") and self.has_trait("transport_encryption"):
                kw.setdefault("transport_encryption", "auto")
            await super().start_kernel(**kw)
            if (process := getattr(self.provisioner, "process", None)) is not None:
                type(self).processes.append(process)

    return WatchedKernelManager


def exit_status(manager_class) -> int | None:
    """The exit status of the last kernel ``manager_class`` started (negative: its signal), or None if unknown."""
    with contextlib.suppress(Exception):
        process = manager_class.processes[-1]
        return process.wait(timeout=5) if process.returncode is None else process.returncode
    return None


def describe_exit(status: int | None) -> str:
    """How a kernel ended, in words: ``killed by signal 9 (SIGKILL); out of memory?``, a crash, or its status."""
    if status is None:
        return "how is unknown (no exit status; out of memory, or a crash in native code?)"
    if status >= 0:
        return f"it exited with status {status}"
    name = {s.value: s.name for s in signal.Signals}.get(-status, "unknown signal")
    hint = "; out of memory?" if -status == signal.SIGKILL else ", a crash in native code"
    return f"killed by signal {-status} ({name}){hint}"


def load_ipython_extension(ipython) -> None:
    """IPython's hook as the runner starts a kernel: ``tqdm.auto`` draws text bars on stderr, which the runner streams,
    not ipywidgets bars that a terminal cannot show (kept as ``HBox(...)``); JupyterLab still draws widget bars."""
    import tqdm.std

    sys.modules["tqdm.autonotebook"] = tqdm.std  # tqdm.auto takes its class from tqdm.autonotebook
