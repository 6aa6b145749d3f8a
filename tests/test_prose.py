"""The project's text speaks to its readers, not of its own history: no tracked text file under
``paper_lib/``, ``notebooks/``, ``tests/``, ``benchmarks/``, ``guide/``, nor ``README.md`` or the ``Makefile``,
names a tracker entry ("issue" and a number) or an ordinal working period ("the seventh" and
"session"). A reader sees neither the tracker nor the working periods; the text says what the design
is and why, and history belongs to git.

The patterns are built from pieces, so this file does not match itself.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCOPE = ("paper_lib", "notebooks", "tests", "benchmarks", "guide", "README.md", "Makefile")
TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".json", ".csv", ".yml", ".yaml", ".sh", ""}
PENDING: set[str] = set()
"""Files still being rewritten; each is checked once it leaves this set (empty it when they are done)."""

_ISSUE = "iss" + "ue"
_ORDINALS = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|[0-9]+(?:st|nd|rd|th)"
PATTERNS = (
    re.compile(r"\b" + _ISSUE + r"s?\s*#?\s*[0-9]+", re.IGNORECASE),
    re.compile(r"\b(?:" + _ORDINALS + r")\s+" + "sess" + "ion" + r"s?\b", re.IGNORECASE),
)


def tracked_text_files(root: Path = ROOT) -> list[str]:
    """The scoped files, relative to ``root``: git's tracked files, or (no git, e.g. a ZIP download)
    every file under the scope that is not a cache."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", *SCOPE],
                             capture_output=True, check=True).stdout.decode()
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
    if not names:
        names = [str(p.relative_to(root)) for s in SCOPE for p in ([root / s] if (root / s).is_file()
                 else (root / s).rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
    return sorted(n for n in names if Path(n).suffix in TEXT_SUFFIXES)


def history_references(text: str) -> list[str]:
    """Every tracker or working-period reference in ``text``, as ``"line N: match"``."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        found += [f"line {number}: {m.group(0)!r}" for pattern in PATTERNS for m in pattern.finditer(line)]
    return found


def test_the_scope_is_not_empty():
    files = tracked_text_files()
    assert "paper_lib/ema.py" in files and "Makefile" in files and "tests/test_prose.py" in files


def test_the_checker_finds_planted_references():
    planted = "\n".join(["Our design (" + _ISSUE.capitalize() + " 26, lever 3).",
                         "measured in the seventh " + "sess" + "ion", "see " + _ISSUE + " #4",
                         "the 8th " + "Sess" + "ions", "a tissue 3 cm wide", "a session cookie"])
    assert [r.split(":")[0] for r in history_references(planted)] == ["line 1", "line 2", "line 3", "line 4"]


def test_pending_names_only_tracked_files():
    assert PENDING <= set(tracked_text_files()), sorted(PENDING - set(tracked_text_files()))


def test_no_history_in_the_text():
    offenders = {name: refs for name in tracked_text_files() if name not in PENDING
                 if (refs := history_references((ROOT / name).read_text(encoding="utf-8", errors="replace")))}
    assert not offenders, "the tracker or a working period named in: " + "; ".join(
        f"{name} ({', '.join(refs)})" for name, refs in offenders.items())
