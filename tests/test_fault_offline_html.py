"""The per-notebook HTML a run publishes beside its figures reads offline and tells no third party.

nbconvert's template loads require.js, MathJax and Mermaid from a CDN: offline the page waits
on them, online it tells another host who reads it. The rendering keeps no script from another
host (the site's own check, :func:`paper_lib.pipeline.site.remote_assets`, finds none) and folds
every code cell under "Show code", as the site does.
"""
from __future__ import annotations

import re

import nbformat

from paper_lib.pipeline.render import render_html
from paper_lib.pipeline.site import remote_assets


def _notebook():
    code = nbformat.v4.new_code_cell("print(f'value {0.123}')", execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="value 0.123\n")])
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Demo\n\nThe loss is $\\ln V$ nats.\n\n```mermaid\ngraph LR; a-->b\n```"),
        code, nbformat.v4.new_code_cell("x = 1", execution_count=2)])


def test_the_notebook_html_loads_nothing_from_another_host(tmp_path):
    page = render_html(_notebook(), tmp_path / "00_demo.html", "00_demo").read_text(encoding="utf-8")
    assert remote_assets(tmp_path) == []
    assert not re.search(r"https?://[^\"' ]*(cdn|jsdelivr|cloudflare|unpkg)", page)  # no import of one either
    assert "require.js" not in page and "MathJax.Hub.Config" not in page and "mermaid.esm" not in page
    assert "value 0.123" in page and "<math" in page and "$\\ln V$" not in page  # the results stay, the formula as MathML


def test_the_notebook_html_folds_each_code_cell_as_the_site_does(tmp_path):
    page = render_html(_notebook(), tmp_path / "00_demo.html", "00_demo").read_text(encoding="utf-8")
    assert page.count("<summary>Show code</summary>") == 2  # one per code cell, none for the markdown
    folded = re.search(r"<details[^>]*>\s*<summary>Show code</summary>(.*?)</details>", page, flags=re.S).group(1)
    assert "print" in folded and "value 0.123" not in folded and "value 0.123" in page  # the code folds, its output stays open
