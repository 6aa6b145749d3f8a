"""Every notebook's Markdown shows ``<unk>``: the escape of :mod:`paper_lib.pipeline.markdown`,
the verdict line of :meth:`Claims.markdown`, and the notebooks' own imports."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from paper_lib.claims.registry import CLAIMS
from paper_lib.pipeline.markdown import Markdown, escape_tags

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.py"))


def test_pseudo_tags_are_escaped_outside_code_only():
    assert escape_tags("no <unk> training") == r"no \<unk\> training"
    assert escape_tags("</unk> and <pad>") == r"\</unk\> and \<pad\>"
    assert escape_tags("<b>bold</b> `<unk>` <br>") == "<b>bold</b> `<unk>` <br>"
    assert escape_tags("```\n<unk>\n```") == "```\n<unk>\n```"
    assert escape_tags("a < b > c") == "a < b > c"            # no tag, nothing to escape


def test_markdown_helper_escapes_and_names_bad_input():
    assert Markdown("GRU, no <unk> training").data == r"GRU, no \<unk\> training"
    with pytest.raises(TypeError, match="got int"):
        Markdown(3)


def test_verdict_line_escapes_unk():
    claim = CLAIMS["structure"]
    assert "<unk>" in claim.claim
    line = CLAIMS.markdown("structure", {}, "cpu")
    assert r"\<unk\>" in line and "<unk>" not in line


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_display_markdown_through_the_helper(path):
    source = path.read_text()
    assert not re.search(r"from IPython\.display import[^\n]*\bMarkdown\b", source), path.name
    if "Markdown(" in source:
        assert "from paper_lib.pipeline.markdown import Markdown" in source
