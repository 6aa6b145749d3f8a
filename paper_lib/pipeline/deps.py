"""Which files a notebook reads, and whether ``make``'s last run of it read them as they are now.

``python -m paper_lib.pipeline.deps notebooks/01_grammar_probe.py`` prints the ``paper_lib`` files the
notebook imports, transitively (read with ``ast``; nothing is imported). Staleness is by content, never by
date: a target is up to date only when the sha256 of its source and of every file it imports equals the record
of its last run, ``build/executed/<profile>/<notebook>.inputs`` (:func:`inputs` as the run starts, written by
``benchmarks/timed.py --record``; :func:`stale`, ``--stale DIR SOURCE...``). Standard library only: the Makefile
runs it with the plain ``python3``. Our design (showyourwork's habit): the paper is silent."""
from __future__ import annotations

import ast
import hashlib
import json
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1]


def _module_file(name: str) -> Path | None:
    rel = PKG.parent / Path(*name.split("."))
    return next((cand for cand in (rel.with_suffix(".py"), rel / "__init__.py") if cand.is_file()), None)


def _imports(path: Path) -> set[str]:
    """Absolute ``paper_lib`` module names imported anywhere in ``path`` (plus their packages)."""
    inside = path.name == "__init__.py" or PKG in path.parents
    package = ".".join(path.parent.relative_to(PKG.parent).parts) if inside else ""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
    Raises FileNotFoundError: no such source."""
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


def digest(path: str | Path) -> str:
    """The sha256 (hex) of ``path``'s bytes. Raises FileNotFoundError: no such ``path``."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def inputs(source: str | Path, root: str | Path = PKG.parent) -> dict[str, str]:
    """The sha256 of ``source`` and of every ``paper_lib`` file it imports (:func:`dependencies`), keyed by
    their paths relative to ``root``. Raises FileNotFoundError: no such source."""
    root = Path(root).resolve()
    files = [Path(source).resolve(), *dependencies(source)]
    return {str(f.relative_to(root)) if root in f.parents else str(f): digest(f) for f in files}


def stale(folder: str | Path, sources: list[str | Path], root: str | Path = PKG.parent) -> list[str]:
    """The stems of the ``sources`` whose record ``folder/<name>.inputs`` is missing, unreadable, or differs from
    their :func:`inputs` now. Raises nothing: a source that cannot be read counts as stale."""
    out = []
    for source in sources:
        name = Path(source).stem
        try:
            fresh = json.loads((Path(folder) / f"{name}.inputs").read_text(encoding="utf-8")) == inputs(source, root)
        except (OSError, ValueError, SyntaxError):
            fresh = False
        if not fresh:
            out.append(name)
    return out


def _main(argv: list[str]) -> None:
    root = PKG.parent
    if argv[:1] == ["--stale"] and len(argv) >= 2:
        print(" ".join(stale(argv[1], argv[2:], root)))
    else:
        print(" ".join(str(p.relative_to(root)) for a in argv for p in dependencies(a)))


if __name__ == "__main__":
    try:
        _main(sys.argv[1:])
    except FileNotFoundError as err:
        sys.exit(f"error: {err}")
