"""Write files and folders atomically: to a temporary file (folder) beside the target, then rename,
so a crash never leaves a half-written output nor a folder of two runs; full disks and read-only
folders are reported in one line, text is UTF-8. Our design: the paper is silent.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

STAGING_MARK = ".staging-"
RUNNING_MARK = ".running-"
_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
_UNWRITABLE = (*_FULL, errno.EACCES, errno.EPERM, errno.EROFS, errno.EFBIG, errno.EIO)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (``suffix``: default its own); on success rename it onto it.

    Raises:
        WriteFailed: the disk is full or the folder read-only (one line); the block's other exceptions pass.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix if suffix is not None else path.suffix,
                                   dir=path.parent)
    except OSError as err:
        raise WriteFailed.of(path, err) from err
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if _unwritable(err):
            raise WriteFailed.of(path, err) from err
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
    """Write ``obj`` as indented, key-sorted JSON atomically (NaN written as ``null``); returns ``path``."""
    return write_text(path, json.dumps(_nan_to_none(obj), indent=2, sort_keys=True) + "\n")


def _nan_to_none(obj: Any) -> Any:
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {str(k): _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    return obj


def real_target(target: str | os.PathLike) -> Path:
    """``target``, or the folder it points to when it is a symbolic link (replaced, the link kept).

    Raises:
        FileNotFoundError: ``target`` is a link to something that is not a folder (one line).
    """
    target = Path(target)
    if not target.is_symlink():
        return target
    real = Path(os.path.realpath(target))
    if not real.is_dir():
        raise FileNotFoundError(f"{target} is a symbolic link to {real}, which is not a folder; "
                                "point the link at a folder, or remove it")
    return real


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


class NotReplaceable(PermissionError):
    """A folder a run cannot replace (it, or the folder above, is read-only); ``str()`` is one line."""


def check_replaceable(target: str | os.PathLike) -> Path:
    """Check that ``target`` (if it exists) and the folder above are writable; returns :func:`real_target`.

    Raises:
        NotReplaceable: one line naming the read-only folder and the way out (a ``PermissionError``).
    """
    real = real_target(target)
    for folder, what in ((_existing(real.parent), "the folder it goes into"), (real, "the folder itself")):
        if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
            raise NotReplaceable(f"cannot replace {target}: {folder} ({what}) is read-only; make it writable "
                                 f"(chmod -R u+w {folder}) or write elsewhere")
    return real


def mount_point(path: str | os.PathLike) -> Path:
    """The mount point of the file system that holds ``path`` (or its nearest existing folder)."""
    path = _existing(Path(os.path.abspath(path)))
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return path


def disk_full(err: BaseException) -> bool:
    """Whether ``err`` says a disk or quota is full (ENOSPC/EDQUOT, or torch's zip writer's short write)."""
    if isinstance(err, OSError):
        return err.errno in _FULL  # a WriteFailed keeps its cause's
    text = str(err)
    return isinstance(err, RuntimeError) and ("unexpected pos" in text or "file write failed" in text)


def _unwritable(err: BaseException) -> bool:
    return disk_full(err) or (isinstance(err, OSError) and not isinstance(err, WriteFailed) and err.errno in _UNWRITABLE)


class WriteFailed(OSError):
    """A file that could not be written; ``str()`` is one line (:func:`write_failure`), ``errno`` the cause's."""

    def __init__(self, message: str, code: int | None = None, filename: str | None = None):
        super().__init__(code if code is not None else errno.EIO, message)
        self.path = filename

    def __str__(self) -> str:
        return str(self.strerror)

    @classmethod
    def of(cls, path: str | os.PathLike, err: BaseException) -> WriteFailed:
        code = errno.ENOSPC if disk_full(err) else getattr(err, "errno", None)
        return cls(write_failure(path, err), code, str(path))


def write_failure(path: str | os.PathLike, err: BaseException) -> str:
    """Why writing ``path`` failed, in one line: the full disk (mount point, free space), or ``err``'s reason."""
    if isinstance(err, WriteFailed):
        return str(err)
    if disk_full(err):
        mount = mount_point(path)
        try:
            free = f"{shutil.disk_usage(mount).free / 2**20:.0f} MiB free"
        except OSError:
            free = "free space unknown"
        return f"no space left on the disk that holds {path} (mounted at {mount}, {free})"
    reason = getattr(err, "strerror", None) or (str(err).splitlines() or [type(err).__name__])[0]
    where = getattr(err, "filename", None) or path
    return f"cannot write {where}: {reason}"


def _dead(pid: str) -> bool:
    """Whether ``pid`` (from a file name) is no process that runs (this one runs)."""
    if not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)  # signal 0 only asks whether the process exists
    except ProcessLookupError:
        return True
    except PermissionError:  # it exists, another user's
        pass
    return False


def scratch_path(folder: str | os.PathLike, stem: str, suffix: str = "") -> Path:
    """A new, empty file ``folder/.<stem>.running-<pid>-<random><suffix>`` only this run uses, so two
    runs of one notebook never share one; those of processes that no longer run are removed first."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f".*{RUNNING_MARK}*"):
        if old.is_file() and _dead(old.name.split(RUNNING_MARK, 1)[1].split("-", 1)[0].split(".", 1)[0]):
            old.unlink(missing_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{stem}{RUNNING_MARK}{os.getpid()}-", suffix=suffix, dir=folder)
    os.close(fd)
    return Path(name)


def fresh_dir(target: str | os.PathLike) -> Path:
    """A new, empty folder ``.<name>.staging-<pid>-<random>`` beside ``target`` to write into before
    :func:`replace_dir`; earlier ones of dead processes, and this process's own, are removed.

    Raises:
        NotReplaceable: ``target`` cannot be replaced (:func:`check_replaceable`).
    """
    target = check_replaceable(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}{STAGING_MARK}"
    for old in target.parent.glob(prefix + "*"):
        pid = old.name[len(prefix):].split("-", 1)[0]
        if _dead(pid) or int(pid) == os.getpid():
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=target.parent))


def replace_dir(new: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Move the complete folder ``new`` to ``target`` (through a link), by two renames in one folder (a
    failed second one puts the previous folder back), then remove the previous one. Returns ``target``.

    Raises:
        NotReplaceable: ``target`` cannot be replaced (:func:`check_replaceable`), before anything moves.
        OSError: a rename failed; ``new`` and the previous folder are then as they were.
    """
    new, target = Path(new), check_replaceable(target)
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
        os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        if old is not None:
            os.replace(old, target)
        raise
    os.chmod(target, 0o777 & ~_umask())  # mkdtemp makes 0700
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return target
