"""What a run reads, checked before and after it runs.

- :func:`read_hashes` / :func:`changed_since`: the sha256 of the notebook source and of the
  ``paper_lib`` files it imports (:func:`paper_lib.pipeline.deps.dependencies`) when the run
  starts, and which of them differ on disk when it ends: a file saved while ``make`` ran it. The
  runner then says so in one line; ``make`` decides staleness by content (``build/hash/``, see
  :func:`paper_lib.pipeline.deps.stamp`), so the next ``make`` reruns the notebook, and a file
  rewritten with the same bytes (Jupyter saving an unchanged notebook) reruns nothing.
- :func:`paired_difference`: an edit made only in the ``.ipynb`` that jupytext pairs with the
  source (``jupytext.toml``) would be silently ignored, since the runner executes the ``.py``;
  the runner reports it before the run (a warning, and an error when publishing).

Our design: the paper is silent.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from .deps import dependencies


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def read_hashes(source: Path) -> dict[Path, str | None]:
    """The sha256 of ``source`` and of every ``paper_lib`` file it depends on, as read now.

    Raises:
        FileNotFoundError: no such source.
    """
    source = Path(source).resolve()
    return {p: _sha256(p) for p in [source, *dependencies(source)]}


def changed_since(hashes: dict[Path, str | None]) -> list[Path]:
    """The files of ``hashes`` whose content on disk differs now (or which are gone)."""
    return [p for p, digest in hashes.items() if _sha256(p) != digest]


def paired_notebook(source: Path) -> Path | None:
    """The ``.ipynb`` that jupytext pairs with ``source`` (from the ``jupytext.toml`` above it, else
    the ``.ipynb`` beside it), if that file exists."""
    source = Path(source).resolve()
    candidates = [source.with_suffix(".ipynb")]
    try:
        from jupytext.config import load_jupytext_config
        from jupytext.paired_paths import paired_paths

        config = load_jupytext_config(str(source))
        formats = config.default_formats(str(source)) if config else None
        if formats:
            candidates = [Path(p) for p, fmt in paired_paths(str(source), "py:percent", formats)
                          if fmt.get("extension") == ".ipynb"] or candidates
    except Exception:  # noqa: BLE001 - a config jupytext cannot pair with falls back to the sibling .ipynb
        pass
    return next((p for p in candidates if p.is_file()), None)


def paired_difference(source: Path) -> str | None:
    """If the paired ``.ipynb`` of ``source`` exists and its cells (type and source; outputs and
    metadata aside) differ from the ``.py``'s, both read with jupytext, one line saying so: which
    file is newer, the first cell that differs and how to sync; else None.

    Raises:
        ValueError: the ``.ipynb`` cannot be read (one line naming it).
    """
    import jupytext

    source = Path(source).resolve()
    ipynb = paired_notebook(source)
    if ipynb is None:
        return None
    try:
        ours, theirs = jupytext.read(source).cells, jupytext.read(ipynb).cells
    except Exception as err:  # noqa: BLE001 - a corrupt .ipynb (half-saved, a merge conflict) is named in one line
        why = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"cannot read {ipynb.name}, paired with {source.name}: {why}; "
                         f"delete it or sync it with `jupytext --sync {_shown(source)}`") from None
    pairs = [(a.cell_type, a.source.rstrip()) for a in ours], [(b.cell_type, b.source.rstrip()) for b in theirs]
    if pairs[0] == pairs[1]:
        return None
    first = next((i for i, (a, b) in enumerate(zip(*pairs, strict=False)) if a != b), min(map(len, pairs)))
    newer = ipynb.name if ipynb.stat().st_mtime > source.stat().st_mtime else source.name
    return (f"{ipynb.name} (paired by jupytext) differs from {source.name} from cell {first + 1} on "
            f"({len(pairs[1])} cells vs {len(pairs[0])}; {newer} is newer), and the run executes {source.name}: "
            f"sync them with `jupytext --sync {_shown(source)}` (the newer file's cells win) or delete {ipynb.name}")


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
