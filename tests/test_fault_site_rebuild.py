"""Fault kinds of a site rebuild (``make site``, built beside the old site and swapped in by one rename).

1. It deleted files it did not make (gh-pages#213): ``CNAME`` (the code host writes it into the pages
   folder for a custom domain), a search engine's verification page, ``.well-known/``, another
   profile's site under ``docs/gpu/``. Expected: every file no build made is carried into the new site,
   byte for byte, and one line names them; the build's own old files (an earlier page, ``_static/``)
   are not.
2. A renamed notebook kept its page: after ``99_x.py`` became ``98_x.py`` the site had both, and the
   landing page's contents linked the removed one. Expected: only notebooks whose source exists now
   are rendered, and one line names the executed notebooks left out.
3. Ctrl-C during the build gave a 26-line ``KeyboardInterrupt`` traceback. Expected: one line, exit
   status 130, the previous site as it was and nothing of the new one left.

Jupyter Book's own step (:func:`paper_lib.pipeline.site.render_book`) is replaced by a stand-in that
writes a page per entry of the book's ``_toc.yml``, so these run without the ``site`` extra.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _signals import with_signals
from test_site import make_executed

from paper_lib.claims.registry import CLAIMS, HEADLINE, PAPER_SUMMARY
from paper_lib.pipeline import site

ROOT = Path(__file__).resolve().parents[1]
PAGE = "<html><script>var DOCUMENTATION_OPTIONS = {{}};</script><body>{body}</body></html>"
FOREIGN = {"CNAME": "paper.example.org\n", "google1234.html": "google-site-verification: google1234.html",
           "robots.txt": "User-agent: *\n", ".well-known/security.txt": "Contact: mailto:a@example.org\n",
           "gpu/index.html": PAGE.format(body="the gpu profile's site")}


def fake_render_book(staging: Path, out: Path) -> Path:
    """What Jupyter Book makes, in small: a page per ``_toc.yml`` entry, an index linking them, ``_static/``."""
    html = out / "_build" / "html"
    (html / "_static").mkdir(parents=True)
    names = [line.split("file: ")[1] for line in (staging / "_toc.yml").read_text().splitlines() if "file: " in line]
    for name in names:
        (html / f"{name}.html").write_text(PAGE.format(body=name), encoding="utf-8")
    links = "".join(f'<a href="{n}.html">{n}</a>' for n in names)
    (html / "index.html").write_text(PAGE.format(body=links), encoding="utf-8")
    (html / "_static" / "theme.css").write_text("body {}", encoding="utf-8")
    return html


@pytest.fixture
def fixture(tmp_path, monkeypatch):
    monkeypatch.setattr(site, "render_book", fake_render_book)
    executed, figures = make_executed(tmp_path)
    return tmp_path, executed, figures


def _build(root, executed, figures):
    return site.build("cpu", CLAIMS, root=root, out=root / "docs", executed=executed, figures=figures,
                      headline=HEADLINE, summary=PAPER_SUMMARY)


def test_a_rebuild_keeps_every_file_no_build_made_and_names_them(fixture, capsys):
    root, executed, figures = fixture
    docs = _build(root, executed, figures)
    for name, text in FOREIGN.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    (docs / "00_gone.html").write_text(PAGE.format(body="an earlier build's page"), encoding="utf-8")
    (docs / "_static" / "old-theme.css").write_text("old", encoding="utf-8")
    capsys.readouterr()
    assert _build(root, executed, figures) == docs
    for name, text in FOREIGN.items():
        assert (docs / name).read_text(encoding="utf-8") == text, name
    assert not (docs / "00_gone.html").exists() and not (docs / "_static" / "old-theme.css").exists()
    assert (docs / "_static" / "theme.css").exists() and (docs / ".nojekyll").exists()
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"site: kept 5 file(s) in {docs} that no build made: .well-known, CNAME, google1234.html, "
                     "gpu, robots.txt"]
    assert not [p.name for p in root.iterdir() if p.name.startswith(".docs.")]   # no staging or replaced folder


def test_a_renamed_notebook_has_one_page_and_the_removed_one_none(fixture, capsys):
    root, executed, figures = fixture
    first = sorted(executed.glob("*.ipynb"))[0]
    (executed / "99_x.ipynb").write_bytes(first.read_bytes())       # made when the source was 99_x.py
    (root / "notebooks" / "99_x.py").write_text("# %%\n", encoding="utf-8")
    docs = _build(root, executed, figures)
    assert (docs / "99_x.html").exists()
    (root / "notebooks" / "99_x.py").rename(root / "notebooks" / "98_x.py")   # renamed, then run again
    (executed / "98_x.ipynb").write_bytes(first.read_bytes())
    capsys.readouterr()
    _build(root, executed, figures)
    assert (docs / "98_x.html").exists() and not (docs / "99_x.html").exists()
    assert "98_x.html" in (docs / "index.html").read_text() and "99_x" not in (docs / "index.html").read_text()
    assert capsys.readouterr().out.splitlines() == [f"site: left out 99_x, executed in {executed} but no longer in "
                                                    f"{root / 'notebooks'}"]


INTERRUPTED = '''
import functools, pathlib, signal, sys
from paper_lib.pipeline import site

def waits(staging, out):
    pathlib.Path({started!r}).write_text("building")
    signal.pause()                     # the build cannot end on its own: only a signal ends it

site.render_book = waits
site.build = functools.partial(site.build, root=pathlib.Path({root!r}), executed=pathlib.Path({executed!r}),
                               figures=pathlib.Path({figures!r}))
from paper_lib.claims.__main__ import main
sys.exit(main(["site", "--profile", "cpu", "--out", {docs!r}]))
'''


def test_ctrl_c_during_the_build_is_one_line_and_leaves_the_previous_site(fixture):
    root, executed, figures = fixture
    docs = _build(root, executed, figures)
    (docs / "CNAME").write_text("paper.example.org\n", encoding="utf-8")
    before = {str(p.relative_to(docs)): p.read_bytes() for p in docs.rglob("*") if p.is_file()}
    started, tmp = root / "started", root / "tmp"
    tmp.mkdir()
    code = INTERRUPTED.format(started=str(started), root=str(root), executed=str(executed), figures=str(figures),
                              docs=str(docs))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp)}
    proc = subprocess.Popen(with_signals([sys.executable, "-c", code]), cwd=root, env=env,  # SIGINT as from a terminal
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8", start_new_session=True)
    try:
        for _ in range(6000):           # until the build is under way (or ended early); the bound only ends a hang
            if started.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert started.exists(), proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)                       # Ctrl-C reaches the whole process group
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err == ("error: site: interrupted by SIGINT; every file it writes is replaced whole or not at all\n"), err
    assert {str(p.relative_to(docs)): p.read_bytes() for p in docs.rglob("*") if p.is_file()} == before
    assert not [p.name for p in root.iterdir() if p.name.startswith(".docs.")]
    assert list(tmp.iterdir()) == []                             # its temporary build folder is gone too
