"""Which ``paper_lib`` files a notebook depends on, so ``make`` reruns only the notebooks a change touches.

``python -m paper_lib.pipeline.deps notebooks/01_grammar_probe.py`` prints the ``paper_lib``
source files the notebook imports, directly or through other ``paper_lib`` modules (read with
``ast``; nothing is imported). The Makefile turns this into one dependency line per notebook.
Our design (showyourwork's habit): the paper is silent.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[1]


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


if __name__ == "__main__":
    try:
        root = PKG.parent
        print(" ".join(str(p.relative_to(root)) for a in sys.argv[1:] for p in dependencies(a)))
    except FileNotFoundError as err:
        sys.exit(f"error: {err}")
