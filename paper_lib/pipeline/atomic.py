"""Write files and folders atomically: to a temporary file (folder) beside the target, then rename.

A crash, a kill or an exception never leaves a half-written output behind, and a run's
folder of outputs replaces the previous run's only once it is complete, so no folder ever
holds files of two runs (our design: the paper is silent; every writer in ``paper_lib`` uses this).
A folder that is a symbolic link is written through the link (:func:`real_target`); one that cannot
be replaced (read-only) is refused in one line before anything moves (:func:`check_replaceable`);
a write that fails for a full disk says so in one line (:func:`write_failure`). Every text file is
written as UTF-8, whatever the locale.
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


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it onto ``path``.

    ``suffix`` defaults to ``path``'s own suffix, so writers that infer a format from the
    extension (matplotlib, pandas) still work. On an exception the temporary file is removed
    and ``path`` is left as it was.

    Raises:
        WriteFailed: the disk is full, or the folder read-only (one line naming ``path``, the disk
            and its free space); other exceptions of the block pass through.
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
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
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


def real_target(target: str | os.PathLike) -> Path:
    """``target``, or the folder that ``target`` points to when it is a symbolic link: a run
    replaces the folder the link names and keeps the link (a shared results folder stays shared).

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
    """A folder a run cannot replace (it, or the folder it goes into, is read-only); ``str()`` is one
    line naming it and the way out."""


def check_replaceable(target: str | os.PathLike) -> Path:
    """Check that a run may put a new folder at ``target`` (:func:`fresh_dir`, :func:`replace_dir`):
    the folder above it (or the nearest one that exists) and ``target`` itself, if it exists, are
    writable. Returns the real target (:func:`real_target`). Our design: the paper is silent.

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
    """Whether ``err`` says a disk (or quota) is full: ``OSError`` ENOSPC/EDQUOT, or torch's zip
    writer's ``RuntimeError`` for a short write ("unexpected pos", "file write failed")."""
    if isinstance(err, OSError):
        return err.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))  # a WriteFailed keeps its cause's
    text = str(err)
    return isinstance(err, RuntimeError) and ("unexpected pos" in text or "file write failed" in text)


_UNWRITABLE = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EACCES, errno.EPERM, errno.EROFS,
               errno.EFBIG, errno.EIO)


def _unwritable(err: BaseException) -> bool:
    """Whether ``err`` says a file could not be written: a full disk, no permission, a read-only or broken one."""
    return disk_full(err) or (isinstance(err, OSError) and not isinstance(err, WriteFailed) and err.errno in _UNWRITABLE)


class WriteFailed(OSError):
    """A file that could not be written; ``str()`` is one line naming it and why (:func:`write_failure`),
    ``errno`` the cause's (``ENOSPC`` for a full disk, also when torch's writer said it)."""

    def __init__(self, message: str, code: int | None = None, filename: str | None = None):
        super().__init__(code if code is not None else errno.EIO, message)
        self.path = filename

    def __str__(self) -> str:
        return str(self.strerror)

    @classmethod
    def of(cls, path: str | os.PathLike, err: BaseException) -> WriteFailed:
        """The one-line failure to write ``path`` for ``err``."""
        code = errno.ENOSPC if disk_full(err) else getattr(err, "errno", None)
        return cls(write_failure(path, err), code, str(path))


def write_failure(path: str | os.PathLike, err: BaseException) -> str:
    """Why writing ``path`` failed, in words for one line: the full disk (its mount point and free
    space), or the error's own reason (``Permission denied``, ``Read-only file system``)."""
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


STAGING_MARK = ".staging-"
RUNNING_MARK = ".running-"


def _dead(pid: str) -> bool:
    return not pid.isdigit() or (int(pid) != os.getpid() and not _alive(int(pid)))


def scratch_path(folder: str | os.PathLike, stem: str, suffix: str = "") -> Path:
    """A new, empty file ``folder/.<stem>.running-<pid>-<random><suffix>`` that only this run uses
    (a converted notebook, papermill's notebook as it runs), so two runs of one notebook (``make``'s
    and a ``lab/`` copy's) never share a file. Such files of processes that no longer run (killed
    with SIGKILL, before their clean-up) are removed first. Our design: the paper is silent."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f".*{RUNNING_MARK}*"):
        if old.is_file() and _dead(old.name.split(RUNNING_MARK, 1)[1].split("-", 1)[0].split(".", 1)[0]):
            old.unlink(missing_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{stem}{RUNNING_MARK}{os.getpid()}-", suffix=suffix, dir=folder)
    os.close(fd)
    return Path(name)


def fresh_dir(target: str | os.PathLike) -> Path:
    """A new, empty folder beside ``target`` for a run to write into, before :func:`replace_dir`.

    It is named ``.<target name>.staging-<pid>-<random>`` (hidden, and ignored by git), beside the
    folder a symbolic link ``target`` points to (:func:`real_target`). Staging folders of the same
    target left by processes that no longer run (a killed run) are removed, and so is this
    process's own earlier one (a notebook whose first cell is run again).
    Our design: the paper is silent.

    Raises:
        NotReplaceable: ``target`` cannot be replaced (:func:`check_replaceable`).
    """
    target = check_replaceable(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}{STAGING_MARK}"
    for old in target.parent.glob(prefix + "*"):
        pid = old.name[len(prefix):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=target.parent))


def replace_dir(new: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Move the complete folder ``new`` to ``target``; the folder that was there is removed after.

    ``new`` and ``target`` must be on one file system (:func:`fresh_dir` puts them side by side);
    a symbolic link ``target`` is written through (the folder it points to is replaced, the link
    kept). Two renames within one folder: should the process die between them, ``target`` is
    missing and the previous folder survives as ``.<name>.old-*`` beside it; a reader never sees
    a mixture of two runs. Should the second rename fail, the previous folder is put back.
    Returns ``target``.

    Raises:
        NotReplaceable: ``target`` cannot be replaced (:func:`check_replaceable`), before anything moves.
        OSError: a rename failed; ``new`` and the previous folder are then as they were.
    """
    new, target = Path(new), check_replaceable(target)
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
        os.replace(target, old)  # within one folder: no write permission on the moved folder needed
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
