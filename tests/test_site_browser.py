"""The built site in a real browser: headless Chromium (Playwright driving the system's
``/usr/bin/chromium``; no browser download) opens every page of a site built from a tiny
fixture, served by a local ``http.server``, and checks that every page loads, every image
loads (``naturalWidth > 0``) and opens at full size, no request leaves localhost, the console
stays quiet, the landing page opens with the summary of results (the paper's numbers, then every
other claim), each row a card at 390 px, and a notebook's published HTML opens with its findings.
``make test-browser`` installs what it needs and runs it; without a browser, Playwright or the
site extra it skips in one line."""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

from paper_lib.claims.registry import CITATION, CLAIMS, COMPANION_SUMMARY, HEADLINE, PAPER_SUMMARY
from paper_lib.pipeline import site
from paper_lib.pipeline.marks import mark_figures
from paper_lib.pipeline.verdicts import Kind, mark_text

NUMBERED = [c for c in CLAIMS if c.paper_value is not None]
OTHERS = [c for c in CLAIMS if c.paper_value is None]

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
    ``(base_url, docs, figures)``."""
    from test_site import make_executed

    root = tmp_path_factory.mktemp("site")
    executed, figures = make_executed(root)
    mark_figures(figures / HEADLINE[0], {HEADLINE[1]: mark_text(Kind.NOT_INFORMATIVE)})
    (root / "guide").mkdir()
    (root / "guide" / "faults.md").write_text("# Faults: what the pipeline promises\n\nOne line each.\n")
    docs = site.build("cpu", CLAIMS, root=root, out=root / "docs", executed=executed, figures=figures,
                      headline=HEADLINE, summary=PAPER_SUMMARY, adds=COMPANION_SUMMARY, cite=CITATION)
    handler = functools.partial(_Quiet, directory=str(docs))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", docs, figures
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


def _open(browser, url, width=1440, errors=None):
    """Open ``url`` in a ``width`` px wide window; returns ``(page, status, remote, failed)``: the
    main response's status, the requests to any host but 127.0.0.1 (aborted, so the test never needs
    a network) and the requests that failed. The console's errors go to the list ``errors``."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    remote, failed = [], []
    if errors is not None:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    def route(r):
        host = urlparse(r.request.url).hostname
        if r.request.url.startswith(("data:", "blob:", "about:", "file:")) or host in ("127.0.0.1", "localhost"):
            return r.continue_()
        remote.append(r.request.url)
        return r.abort()
    page.route("**/*", route)
    page.on("requestfailed", lambda req: failed.append(req.url))
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    response = page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, response.status if response else None, remote, failed


def test_every_page_loads_offline_with_its_images(browser, served):
    base, docs, _ = served
    pages = _pages(docs)
    assert len(pages) == 1 + len({c.notebook for c in CLAIMS}) + 1                       # and the guide's page
    for name in pages:
        page, status, remote, failed = _open(browser, f"{base}/{name}")
        assert status == 200, name
        assert remote == [], f"{name} asks for remote resources: {remote[:3]}"
        assert [u for u in failed if u not in remote] == [], f"{name}: failed requests {failed[:3]}"
        images = page.evaluate("[...document.querySelectorAll('article img')].map(i => [i.currentSrc, i.complete, "
                               "i.naturalWidth, i.alt, i.closest('a.full-size') ? i.closest('a').href : ''])")
        assert images or name == "faults.html", f"{name} shows no image"
        for src, complete, width, alt, link in images:
            assert complete and width > 0, f"{name}: image {src} did not load"
            assert alt.strip() and not alt.endswith(".png"), f"{name}: image {src} has no meaningful alt text"
            assert link == src, f"{name}: image {src} does not open at full size"
        assert page.locator("article h1").count() == 1, name                 # the page's one title
        page.close()


def test_landing_page_opens_with_the_summary_every_claim_linking_to_its_anchor(browser, served):
    base, _, _ = served
    page, status, _, _ = _open(browser, f"{base}/index.html")
    assert status == 200
    first, second = page.locator(".cards.numbers table tbody tr"), page.locator(".cards.findings table tbody tr")
    assert first.count() == len(NUMBERED) == 5 and second.count() == len(OTHERS)
    headers = page.locator(".cards.numbers table thead th").all_inner_texts()
    assert headers == ["result", "paper", "ours ± 95% CI", "number reproduced?", "what the controls say", "why"]
    for rows, claims, n in ((first, NUMBERED, 6), (second, OTHERS, 5)):
        for i, claim in enumerate(claims):
            cells = rows.nth(i).locator("td")
            assert cells.count() == n and cells.nth(0).inner_text().replace("\u2019", "'") == claim.name
            link = cells.nth(0).locator("a").first
            assert link.get_attribute("href") == f"{claim.notebook}.html#claim-{claim.key.replace('_', '-').lower()}"
    order = page.evaluate("[...document.querySelectorAll('article h2')].map(h => h.textContent.replace('#', ''))")
    assert order[:2] == ["What the paper claims", "Summary of results"] and order[-1] == "How to cite"
    assert page.locator('a[href="https://arxiv.org/abs/2604.08556"]').count() == 1        # the paper, linked
    assert "@misc{singh2026ema" in page.locator("#how-to-cite pre").inner_text()
    # following a claim's link lands on its findings, with the code folded
    second.nth([c.key for c in OTHERS].index("recall")).locator("td a").first.click()
    page.wait_for_load_state("load")
    target = page.locator(":target")
    assert target.count() == 1 and target.first.get_attribute("id") == "claim-recall"
    folded = page.locator(".cell.tag_hide-input details.above-input")
    assert folded.count() > 0
    assert not folded.first.evaluate("d => d.open")
    page.close()


def test_on_a_phone_each_claim_is_a_card(browser, served):
    base, _, _ = served
    page, _, _, _ = _open(browser, f"{base}/index.html", width=390)
    assert not page.locator(".cards.numbers table thead").is_visible()
    cards = page.locator(".cards.numbers table tbody tr")
    for i in range(cards.count()):
        box = cards.nth(i).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, f"card {i} leaves the screen: {box}"
        cells = cards.nth(i).locator("td")
        assert cells.nth(0).evaluate("td => getComputedStyle(td).display") == "block"    # one cell a line
        label = cells.nth(3).evaluate("td => getComputedStyle(td, '::before').content")
        assert label == '"number reproduced?: "', label                                  # each cell says what it is
    page.close()


def test_the_marked_figure_says_so_and_the_unk_shows(browser, served):
    base, _, _ = served
    page, status, remote, _ = _open(browser, f"{base}/{HEADLINE[0]}.html")
    assert status == 200 and remote == []
    text = page.locator("article").inner_text()
    assert "BiGRU without <unk> training" in text and "so is <unk>." in text   # the source's <unk>, shown
    alts = page.evaluate("[...document.images].map(i => i.alt)")
    assert any(a.startswith(mark_text(Kind.NOT_INFORMATIVE)) for a in alts)      # the published PNG, band and all
    assert page.locator("article math").count() >= 1                            # the formula, drawn as MathML
    for name in _pages(served[1])[1:]:
        page, _, _, _ = _open(browser, f"{base}/{name}")
        assert "NaN" not in "".join(page.locator("table").all_inner_texts()), name
        page.close()


def _pages(docs):
    return ["index.html"] + sorted(p.name for p in docs.glob("[0-9][0-9]_*.html")) + ["faults.html"]


def test_a_phone_wide_page_never_scrolls_sideways_and_the_console_is_quiet(browser, served):
    base, docs, _ = served
    for name in _pages(docs):
        errors = []
        page, status, _, failed = _open(browser, f"{base}/{name}", width=390, errors=errors)
        assert status == 200 and failed == [], f"{name}: {failed[:3]}"                   # no favicon 404 either
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{name} is {width} px wide on a 390 px screen"
        assert errors == [], f"{name}: console errors {errors[:3]}"
        assert page.locator("input[type=search]:visible, .search-button-field:visible").count() <= 1, name
        page.close()


def test_landing_page_captions_its_headline(browser, served):
    import json

    base, _, figures = served
    page, _, _, _ = _open(browser, f"{base}/index.html")
    key = next(c.key for c in CLAIMS if c.notebook == HEADLINE[0] and HEADLINE[1] in c.figures)
    section = page.locator("#the-headline-figure")
    assert section.locator(f'a[href="{HEADLINE[0]}.html#claim-{key.replace("_", "-")}"]').count() == 1
    title = json.loads((figures / HEADLINE[0] / "figures.json").read_text())[HEADLINE[1]]["title"]
    assert section.locator("em").first.inner_text() == f"{title}."                  # the figure's title as caption
    page.close()


def test_a_notebooks_html_opens_with_its_findings(browser, tmp_path):
    """The per-notebook HTML as ``make all`` publishes it (the runner's rendering, then the report's findings)."""
    import json

    import nbformat
    from test_site import make_executed

    from paper_lib.claims.__main__ import findings_html
    from paper_lib.pipeline.render import finish_page, render_html
    from paper_lib.pipeline.report import claims_table

    executed, figures = make_executed(tmp_path)
    folder = figures / HEADLINE[0]
    page_path = render_html(nbformat.read(executed / f"{HEADLINE[0]}.ipynb", 4), folder / f"{HEADLINE[0]}.html",
                            HEADLINE[0], folder / "figures.json")
    rows = [r for r in claims_table(figures, CLAIMS).to_dict("records") if r["notebook"] == HEADLINE[0]]
    assert finish_page(page_path, json.loads((folder / "figures.json").read_text()), findings_html(rows))
    page, _, remote, failed = _open(browser, page_path.as_uri(), width=390)
    assert remote == [] and failed == []
    findings = page.locator("#findings")
    assert findings.count() == 1 and findings.locator("h3").all_inner_texts() == [r["name"] for r in rows]
    first_code = page.locator(".jp-CodeCell").first.bounding_box()
    assert findings.bounding_box()["y"] < first_code["y"]                        # before any code or output
    assert page.locator("h1").first.bounding_box()["y"] < findings.bounding_box()["y"]   # after the title
    assert page.evaluate("document.documentElement.scrollWidth") <= 390                # no sideways scroll
    page.close()


# The committed per-notebook HTML (`figures/<nb>/<nb>.html`, nbconvert's export of the executed
# notebook): opened straight from disk, as a reader who downloads one would.
COMMITTED = sorted(Path(__file__).resolve().parents[1].glob("figures/[0-9][0-9]_*/[0-9][0-9]_*.html"))


@pytest.mark.parametrize("path", COMMITTED, ids=[p.stem for p in COMMITTED])
def test_committed_notebook_html_is_self_contained_and_shows_its_text(browser, path):
    page, _, remote, failed = _open(browser, path.as_uri(), width=390)
    assert remote == [] and failed == [], f"{path.name} asks for {(remote or failed)[:3]}"
    assert page.locator("script[src^='http'], link[href^='http'][rel=stylesheet]").count() == 0
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{path.name} is {width} px wide on a 390 px screen"
    assert "NaN" not in "".join(page.locator("table").all_inner_texts())
    source = path.with_name(path.stem + ".html").read_text(encoding="utf-8")
    if "&lt;unk&gt;" in source:                                           # where the source says <unk>, it shows
        assert "<unk>" in page.locator("body").inner_text()
    page.close()
