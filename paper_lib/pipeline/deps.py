"""Which ``paper_lib`` files a notebook depends on, so ``make`` reruns only the notebooks a change touches.

``python -m paper_lib.pipeline.deps notebooks/01_grammar_probe.py`` prints the ``paper_lib``
source files the notebook imports, directly or through other ``paper_lib`` modules (read with
``ast``; nothing is imported). The Makefile turns this into one dependency line per notebook.

Staleness is by content, not by date: ``make`` compares content stamps,
``build/hash/<file>.sha256``, one per source and ``paper_lib`` file (``--stamps`` prints those a
notebook needs), and :func:`stamp` (``--stamp FILE STAMP``) rewrites a stamp only when the file's
content changed. So a notebook saved while ``make`` ran it (the executed notebook is then newer
than the edit) reruns at the next ``make``, and a file rewritten with the same bytes (Jupyter
saving a notebook that was only opened) reruns nothing. Standard library only: the Makefile
runs it with the plain ``python3``. Our design (showyourwork's habit): the paper is silent.
"""
from __future__ import annotations

import ast
import hashlib
import os
import sys
import tempfile
from pathlib import Path

PKG = Path(__file__).resolve().parents[1]
HASH_DIR = Path("build") / "hash"  # the content stamps, relative to the project root


def _module_file(name: str) -> Path | None:
    rel = Path(*name.split("."))
    for cand in (PKG.parent / rel.with_suffix(".py"), PKG.parent / rel / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _imports(path: Path) -> set[str]:
    """Absolute ``paper_lib`` module names imported anywhere in ``path`` (plus their packages)."""
    if path.name == "__init__.py":
        package = ".".join(path.parent.relative_to(PKG.parent).parts)
    elif PKG in path.parents:
        package = ".".join(path.parent.relative_to(PKG.parent).parts)
    else:
        package = ""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for n in names:
            parts = n.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1) if parts[0] == "paper_lib")
    return out


def dependencies(source: str | Path) -> list[Path]:
    """The ``paper_lib`` files ``source`` (a notebook or module) needs, transitively, sorted.

    Raises:
        FileNotFoundError: no such source.
    """
    source = Path(source).resolve()
    if not source.is_file():
        raise FileNotFoundError(f"no such file: {source}")
    seen: set[Path] = set()
    todo = [source]
    while todo:
        for name in _imports(todo.pop()):
            f = _module_file(name)
            if f is not None and f not in seen:
                seen.add(f)
                todo.append(f)
    return sorted(seen)


def stamp_path(path: str | Path, root: str | Path = PKG.parent) -> Path:
    """The content stamp of ``path`` (relative to ``root``): ``build/hash/<path>.sha256``."""
    rel = Path(path).resolve().relative_to(Path(root).resolve())
    return HASH_DIR / f"{rel}.sha256"


def stamp(path: str | Path, out: str | Path) -> bool:
    """Write ``path``'s sha256 to the stamp ``out`` if it differs from what ``out`` holds; return
    whether ``out`` was written. Unchanged content leaves ``out`` (and its date) as it was, so
    ``make`` reruns nothing; the write is atomic (a temporary file renamed).

    Raises:
        FileNotFoundError: no such ``path``.
    """
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest() + "\n"
    out = Path(out)
    if out.is_file() and out.read_text() == digest:
        return False
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    with os.fdopen(fd, "w") as f:
        f.write(digest)
    os.replace(tmp, out)
    return True


def _main(argv: list[str]) -> None:
    root = PKG.parent
    if argv[:1] == ["--stamp"] and len(argv) == 3:
        stamp(argv[1], argv[2])
    elif argv[:1] == ["--stamps"]:
        print(" ".join(str(stamp_path(p, root)) for a in argv[1:] for p in [Path(a), *dependencies(a)]))
    else:
        print(" ".join(str(p.relative_to(root)) for a in argv for p in dependencies(a)))


if __name__ == "__main__":
    try:
        _main(sys.argv[1:])
    except FileNotFoundError as err:
        sys.exit(f"error: {err}")
