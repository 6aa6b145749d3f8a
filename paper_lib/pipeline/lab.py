"""The scratch copies that ``make lab`` opens: a tweak never touches a tracked notebook.

``python -m paper_lib.pipeline.lab [ROOT]`` copies each ``notebooks/NN_name.py`` that the git-ignored ``lab/``
lacks to ``lab/NN_name.py``, so JupyterLab's autosave lands in a file that ``make all`` never reads; a copy
there is never overwritten. The runner publishes no source outside ``notebooks/``. Our design: the paper is silent."""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]  # as provenance.REPO_ROOT; standard library only
LAB_DIR = "lab"  # git-ignored (.gitignore)
NOTEBOOK_GLOB = "[0-9][0-9]_*.py"
# jupytext.toml's filters, the copy paired beside itself (tests/test_notebook_sources.py checks the filters).
LAB_JUPYTEXT = """\
# Written by `make lab` (paper_lib/pipeline/lab.py): the repository's jupytext.toml for the
# git-ignored copies in lab/, each paired with its lab/NN_name.ipynb (outputs).
formats = "ipynb,py:percent"
notebook_metadata_filter = "kernelspec,-all"
cell_metadata_filter = "tags,-all"
"""


_TWEAK_LINE = re.compile(r"^# Tweak these in your copy, lab/(\S+) \(`make lab`\); "
                         r"a change here is the new default, to commit\.$", flags=re.M)


def lab_text(source: str) -> str:
    """A notebook source as its ``lab/`` copy: the parameters cell's note says that this is the copy."""
    return _TWEAK_LINE.sub(r"# Your copy (git ignores lab/): tweak these here; notebooks/\1 keeps the defaults.", source)


def scratch_copies(root: str | Path = REPO_ROOT) -> tuple[list[Path], list[Path]]:
    """Create ``root/lab/`` with ``jupytext.toml`` and a copy (:func:`lab_text`) of every
    ``root/notebooks/NN_name.py`` it lacks; return ``(created, differing)``: the copies made now, and
    those already there that differ from their source's copy.
    FileNotFoundError: ``root/notebooks/`` holds no ``NN_name.py``."""
    root = Path(root)
    sources = sorted((root / "notebooks").glob(NOTEBOOK_GLOB))
    if not sources:
        raise FileNotFoundError(f"no notebooks/{NOTEBOOK_GLOB} under {root}")
    lab = root / LAB_DIR
    lab.mkdir(exist_ok=True)
    config = lab / "jupytext.toml"
    if not config.is_file() or config.read_text(encoding="utf-8") != LAB_JUPYTEXT:
        config.write_text(LAB_JUPYTEXT, encoding="utf-8")
    created, differing = [], []
    for source in sources:
        copy = lab / source.name
        text = lab_text(source.read_text(encoding="utf-8"))
        if not copy.exists():
            copy.write_text(text, encoding="utf-8")
            shutil.copystat(source, copy)
            created.append(copy)
        elif copy.read_text(encoding="utf-8") != text:
            differing.append(copy)
    return created, differing


def main(root: str | Path = REPO_ROOT) -> int:
    """Make the copies and say in one line each what was made and which copies differ."""
    try:
        created, differing = scratch_copies(root)
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if created:
        print(f"lab/: copied {', '.join(p.name for p in created)} from notebooks/ (git ignores lab/; tweak there)")
    if differing:
        which = "which differs" if len(differing) == 1 else "which differ"
        print(f"lab/: kept {', '.join(p.name for p in differing)}, {which} from notebooks/ (your tweaks, or a "
              "notebook changed since the copy was made); delete a copy to start again from notebooks/")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))  # optional: the project root (default: this checkout's)
