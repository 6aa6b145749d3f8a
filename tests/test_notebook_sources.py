"""The notebook sources are exactly what jupytext writes under the project's ``jupytext.toml``
(no header, cell metadata only ``tags``), so a researcher's first save from Jupyter, or a
``jupytext --to py:percent`` run, changes no byte of them."""
from __future__ import annotations

from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
from jupytext.config import load_jupytext_config  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("0*.py"))


def test_there_are_notebook_sources():
    assert len(SOURCES) >= 4


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_a_jupytext_round_trip_is_byte_identical(source):
    config = load_jupytext_config(str(source))  # the repository's jupytext.toml, as Jupyter and the CLI find it
    assert config is not None and config.notebook_metadata_filter == "-all"
    nb = jupytext.read(source, fmt="py:percent", config=config)
    written = jupytext.writes(nb, fmt="py:percent", config=config)
    assert written.encode() == source.read_bytes()
