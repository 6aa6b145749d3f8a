"""The README a reader finishes and the guide's pages (``guide/*.md``, which the site renders) stay true: the
README opens with the summary of results and stays short; every ``make`` target, file and folder that they
name exists; their citation is the one the site shows."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from paper_lib.claims.registry import CITATION, CLAIMS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = sorted((ROOT / "guide").glob("*.md"))
TARGETS = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.M))
NOTEBOOKS = {p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py")}


def test_the_readme_opens_with_the_papers_numbers_and_is_short():
    lines = README.splitlines()
    assert len(lines) <= 150
    head = "\n".join(lines[:40])
    for claim in (c for c in CLAIMS if c.paper_value is not None):        # the paper's five headline numbers
        row = next(ln for ln in lines[:40] if f"#claim-{claim.key})" in ln)
        assert f"| {claim.paper} " in row.replace("&gt;", ">"), claim.key
    assert len([c for c in CLAIMS if c.paper_value is not None]) == 5
    assert "[arXiv:2604.08556](https://arxiv.org/abs/2604.08556)" in head
    assert "make all" in README and "make test" in README                # what CI and a newcomer run
    assert "```bibtex\n" + CITATION + "```" in README


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_every_target_and_path_named_exists(page):
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"`make ([a-z][\w-]*)", text):
        assert target in TARGETS | NOTEBOOKS, f"{page.name}: make {target} is no target"
    for path in re.findall(r"`((?:paper_lib|notebooks|tests|benchmarks|guide)/[\w./-]+?)`", text):
        if "<" in path or "*" in path or "{" in path:
            continue
        assert (ROOT / path).exists() or (ROOT / path).with_suffix(".py").exists(), f"{page.name}: {path} is not there"
    for link in re.findall(r"\]\(((?:guide|figures)/[^)#]+)", text):
        assert (page.parent / link).exists() or (ROOT / link).exists(), f"{page.name}: link {link} is broken"


def test_the_guide_pages_have_titles_and_the_readme_links_each():
    assert {p.stem for p in PAGES} == {"running", "faults", "tweak", "profiles", "layout", "benchmarks", "gpu"}
    for page in PAGES:
        assert page.read_text(encoding="utf-8").startswith("# "), page.name
        assert f"(guide/{page.name})" in README, page.name
