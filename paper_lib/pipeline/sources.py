"""What a run reads, checked before and after it runs: the sha256 of the source and the ``paper_lib`` files it
imports (:func:`read_hashes`, :func:`changed_since`: a file saved while ``make`` ran it), and an edit made only in
the paired ``.ipynb``, which the runner would ignore (:func:`paired_difference`). Our design: the paper is silent."""
from __future__ import annotations

from pathlib import Path

from .deps import dependencies, digest
from .failures import rel


def _sha256(path: Path) -> str | None:
    try:
        return digest(path)
    except FileNotFoundError:
        return None


def read_hashes(source: Path) -> dict[Path, str | None]:
    """The sha256 of ``source`` and of every ``paper_lib`` file it depends on, as read now; FileNotFoundError
    for no such source."""
    source = Path(source).resolve()
    return {p: _sha256(p) for p in [source, *dependencies(source)]}


def changed_since(hashes: dict[Path, str | None]) -> list[Path]:
    """The files of ``hashes`` whose content on disk differs now (or which are gone)."""
    return [p for p, digest in hashes.items() if _sha256(p) != digest]


def paired_notebook(source: Path) -> Path | None:
    """The existing ``.ipynb`` that jupytext pairs with ``source`` (by ``jupytext.toml``, else beside it), or None."""
    source = Path(source).resolve()
    candidates = [source.with_suffix(".ipynb")]
    try:
        from jupytext.config import load_jupytext_config
        from jupytext.paired_paths import paired_paths

        config = load_jupytext_config(str(source))
        if config and (formats := config.default_formats(str(source))):
            candidates = [Path(p) for p, fmt in paired_paths(str(source), "py:percent", formats)
                          if fmt.get("extension") == ".ipynb"] or candidates
    except Exception:  # noqa: BLE001 - a config jupytext cannot pair with falls back to the sibling .ipynb
        pass
    return next((p for p in candidates if p.is_file()), None)


def paired_difference(source: Path) -> str | None:
    """One line if the paired ``.ipynb`` of ``source`` has cells (type and source) that differ from the ``.py``'s:
    which is newer, the first cell that differs and how to sync; else None. ValueError: an unreadable ``.ipynb``."""
    import jupytext

    source = Path(source).resolve()
    if (ipynb := paired_notebook(source)) is None:
        return None
    try:
        ours, theirs = jupytext.read(source).cells, jupytext.read(ipynb).cells
    except Exception as err:  # noqa: BLE001 - a corrupt .ipynb (half-saved, a merge conflict) is named in one line
        why = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"cannot read {ipynb.name}, paired with {source.name}: {why}; "
                         f"delete it or sync it with `jupytext --sync {rel(source)}`") from None
    pairs = [(a.cell_type, a.source.rstrip()) for a in ours], [(b.cell_type, b.source.rstrip()) for b in theirs]
    if pairs[0] == pairs[1]:
        return None
    first = next((i for i, (a, b) in enumerate(zip(*pairs, strict=False)) if a != b), min(map(len, pairs)))
    newer = ipynb.name if ipynb.stat().st_mtime > source.stat().st_mtime else source.name
    return (f"{ipynb.name} (paired by jupytext) differs from {source.name} from cell {first + 1} on "
            f"({len(pairs[1])} cells vs {len(pairs[0])}; {newer} is newer), and the run executes {source.name}: "
            f"sync them with `jupytext --sync {rel(source)}` (the newer file's cells win) or delete {ipynb.name}")
