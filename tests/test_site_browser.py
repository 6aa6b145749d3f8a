"""The built site in a real browser: headless Chromium (Playwright driving the system's
``/usr/bin/chromium``; no browser download) opens every page of a site built from a tiny
fixture, served by a local ``http.server``, and checks that every page loads, every image
loads (``naturalWidth > 0``), no request leaves localhost, and the landing page's results
table has one row per claim. ``make test-browser`` installs what it needs and runs it; without
a browser, Playwright or the site extra it skips in one line."""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

from paper_lib.claims.registry import CLAIMS, HEADLINE, PAPER_SUMMARY
from paper_lib.pipeline import site

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

pytestmark = pytest.mark.browser
# One skip line for the whole module where something is missing.
if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
    pytest.skip(f"no browser at {CHROMIUM} (make test-browser installs Debian's chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (make test-browser)")
pytest.importorskip("jupyter_book", reason="the site extra is not installed (make test-browser)")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no line per request
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A site built from ``test_site.make_executed``'s fixture, served on 127.0.0.1; yields
    ``(base_url, docs)``."""
    from test_site import make_executed

    root = tmp_path_factory.mktemp("site")
    executed, figures = make_executed(root)
    docs = site.build("cpu", CLAIMS, root=root, out=root / "docs", executed=executed, figures=figures,
                      headline=HEADLINE, summary=PAPER_SUMMARY)
    handler = functools.partial(_Quiet, directory=str(docs))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", docs
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM,
                              args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                    "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield b
        b.close()


def _open(browser, url):
    """Open ``url``; returns ``(page, status, remote, failed)``: the main response's status, the
    requests to any host but 127.0.0.1 (aborted, so the test never needs a network) and the
    requests that failed."""
    page = browser.new_page()
    remote, failed = [], []

    def route(r):
        host = urlparse(r.request.url).hostname
        if r.request.url.startswith(("data:", "blob:", "about:")) or host in ("127.0.0.1", "localhost"):
            return r.continue_()
        remote.append(r.request.url)
        return r.abort()
    page.route("**/*", route)
    page.on("requestfailed", lambda req: failed.append(req.url))
    response = page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, response.status if response else None, remote, failed


def test_every_page_loads_offline_with_its_images(browser, served):
    base, docs = served
    pages = ["index.html"] + sorted(p.name for p in docs.glob("[0-9][0-9]_*.html"))
    assert len(pages) == 1 + len({c.notebook for c in CLAIMS})
    for name in pages:
        page, status, remote, failed = _open(browser, f"{base}/{name}")
        assert status == 200, name
        assert remote == [], f"{name} asks for remote resources: {remote[:3]}"
        assert [u for u in failed if u not in remote] == [], f"{name}: failed requests {failed[:3]}"
        images = page.evaluate("[...document.images].map(i => [i.currentSrc, i.complete, i.naturalWidth, i.alt])")
        assert images, f"{name} shows no image"
        for src, complete, width, alt in images:
            assert complete and width > 0, f"{name}: image {src} did not load"
            assert alt.strip() and not alt.endswith(".png"), f"{name}: image {src} has no meaningful alt text"
        assert page.locator("article h1").count() == 1, name                 # the page's one title
        page.close()


def test_landing_table_one_row_per_claim_linking_to_its_anchor(browser, served):
    base, _ = served
    page, status, _, _ = _open(browser, f"{base}/index.html")
    assert status == 200
    rows = page.locator("table tbody tr")
    assert rows.count() == len(CLAIMS)
    for i, claim in enumerate(CLAIMS):
        cells = rows.nth(i).locator("td")
        assert cells.count() == 5                     # claim | paper | ours | against | verdict
        link = cells.nth(0).locator("a").first
        assert link.get_attribute("href") == f"{claim.notebook}.html#claim-{claim.key.replace('_', '-').lower()}"
    # following a claim's link lands on its findings, with the code folded
    rows.nth([c.key for c in CLAIMS].index("recall")).locator("td a").first.click()
    page.wait_for_load_state("load")
    target = page.locator(":target")
    assert target.count() == 1 and target.first.get_attribute("id") == "claim-recall"
    folded = page.locator(".cell.tag_hide-input details.above-input")
    assert folded.count() > 0
    assert not folded.first.evaluate("d => d.open")
    page.close()


def test_unk_shows_no_nan_and_undecided_figures_are_marked(browser, served):
    from paper_lib.pipeline.marks import MARK_PREFIX

    base, _ = served
    page, status, remote, _ = _open(browser, f"{base}/05_associative_recall.html")
    assert status == 200 and remote == []
    text = page.locator("article").inner_text()
    assert "BiGRU without <unk> training" in text and "so is <unk>." in text   # the source's <unk>, shown
    assert "NaN" not in "".join(page.locator("table").all_inner_texts())
    alts = page.evaluate("[...document.images].map(i => i.alt)")
    assert any(a.startswith(MARK_PREFIX) and "Recall accuracy" in a for a in alts)  # recall_by_pairs: an undecided claim
    page.close()
