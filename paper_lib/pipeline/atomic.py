"""Write files and folders atomically: to a temporary file (folder) beside the target, then rename.

A crash, a kill or an exception never leaves a half-written output behind, and a run's
folder of outputs replaces the previous run's only once it is complete, so no folder ever
holds files of two runs (our design: the paper is silent; every writer in ``paper_lib`` uses this).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it onto ``path``.

    ``suffix`` defaults to ``path``'s own suffix, so writers that infer a format from the
    extension (matplotlib, pandas) still work. On an exception the temporary file is removed
    and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix if suffix is not None else path.suffix,
                               dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns ``path``."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented, key-sorted JSON atomically (NaN written as ``null``)."""
    return write_text(path, json.dumps(_nan_to_none(obj), indent=2, sort_keys=True) + "\n")


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {str(k): _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    return obj


STAGING_MARK = ".staging-"


def fresh_dir(target: str | os.PathLike) -> Path:
    """A new, empty folder beside ``target`` for a run to write into, before :func:`replace_dir`.

    It is named ``.<target name>.staging-<pid>-<random>`` (hidden, and ignored by git). Staging
    folders of the same target left by processes that no longer run (a killed run) are removed,
    and so is this process's own earlier one (a notebook whose first cell is run again).
    Our design: the paper is silent.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}{STAGING_MARK}"
    for old in target.parent.glob(prefix + "*"):
        pid = old.name[len(prefix):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=target.parent))


def replace_dir(new: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Move the complete folder ``new`` to ``target``; the folder that was there is removed after.

    ``new`` and ``target`` must be on one file system (:func:`fresh_dir` puts them side by side).
    Two renames: should the process die between them, ``target`` is missing and the previous
    folder survives as ``.<name>.old-*`` beside it; a reader never sees a mixture of two runs.
    Returns ``target``.
    """
    new, target = Path(new), Path(target)
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.replace(target, old / target.name)
    os.replace(new, target)
    os.chmod(target, 0o777 & ~_umask())  # mkdtemp makes 0700
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return target


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
