"""The companion as a static site under ``docs/``: the findings first, the code folded away.

``python -m paper_lib.claims site --profile cpu`` reads the executed notebooks
``build/executed/<profile>/<NN_name>.ipynb`` and the report's claims table for the claims it is given,
and writes ``index.html`` (what the paper claims, the summary of results: the paper's numbers beside
ours, what the companion adds, every other claim, each row a card on a phone; the headline figure, how
to rerun, how to cite), one page per notebook (a "Findings" cell first, one ``claim-<key>`` anchor per
claim, every code cell folded, the parameters cells and progress bars removed, each figure as published
with its alt text, formulas as MathML) and one per page of ``guide/``.

Jupyter Book 1.x (our choice, the paper is silent) renders executed notebooks without running them,
folds code by cell tag (``hide-input``) and bundles its theme: it builds and reads offline
(:func:`remote_assets` fails a build that loads a remote asset). The site replaces ``docs/`` in one rename.
"""
from __future__ import annotations

import base64
import copy
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Mapping

import nbformat
import pandas as pd

from .atomic import STAGING_MARK, fresh_dir, real_target, replace_dir
from .markdown import dollars_to_mathml, escape_tags
from .marks import figure_alt
from .profiles import check_profile, get_profile
from .provenance import REPO_ROOT, output_dir
from .render import drop_bars, figure_stem
from .report import Claims, claims_table, load_metrics, summary_frames
from .verdicts import legend

PARAMETER_TAGS = {"parameters", "injected-parameters"}  # papermill's parameters cells: removed from the pages

def md_escape(text: object) -> str:
    """``text`` as literal Markdown inline text: every character Markdown or MyST could read as
    syntax backslash-escaped, newlines as spaces."""
    return re.sub(r"([\\`*_\[\]<>|$&{}#~])", r"\\\1", " ".join(str(text).split()))


def figure_meta(figures: Path, notebook: str, stem: str) -> dict:
    """Figure ``stem``'s entry in ``figures/<notebook>/figures.json`` (``{"alt", "title", "mark"}``), or ``{}``."""
    meta = figures / notebook / "figures.json"
    return (json.loads(meta.read_text(encoding="utf-8")).get(stem) or {}) if meta.exists() else {}


def notebook_title(nb: nbformat.NotebookNode, notebook: str) -> str:
    """The first ``# heading`` of ``nb``'s first Markdown cell, else the notebook's name."""
    first = next((cell.source for cell in nb.cells if cell.cell_type == "markdown"), "")
    m = re.search(r"^# (.+)$", first, flags=re.M)
    return m.group(1).strip() if m else notebook


def findings_markdown(title: str, rows: Iterable[Mapping[str, str]], run: str = "") -> str:
    """The Findings cell of a notebook page: its title, then per claim an anchor ``(claim-<key>)=``,
    the verdict, paper and ours, the reason, the rule and all our numbers (folded)."""
    lines, rows = [f"# {title}", "", "## Findings", "", run, ""], list(rows)
    if not rows:
        lines += ["This notebook decides no claim of the report; its figures and tables are below.", ""]
    for r in rows:
        numbers = [s.strip() for s in r["ours"].split(";") if s.strip() and s.strip() != "—"]
        heading = r.get("name") or r["claim"]
        number = f"**Number reproduced?** {md_escape(r['number'])}. " if r.get("number") else ""
        lines += [f"(claim-{r['key']})=", f"### {md_escape(heading)}", "",
                  *([f"*Claim:* {md_escape(r['claim'])}.", ""] if heading != r["claim"] else []),
                  f"{number}**What the controls say:** {md_escape(r.get('says', r['holds']))}. Paper: "
                  f"{md_escape(r['paper'])}; ours: {md_escape(r['headline'])}; against: {md_escape(r['versus'])}.", ""]
        lines += [f"*{k.title()}:* {md_escape(r[k])}.\n" for k in ("why", "rule") if r[k]]
        if numbers:
            lines += ["```{dropdown} All our numbers for this claim", *[f"- {md_escape(n)}" for n in numbers],
                      "```", ""]
    lines += ["The code that made every number is folded above each output: click *Show code cell source* "
              "to open it.", ""]
    return "\n".join(lines)


def prepare_notebook(nb: nbformat.NotebookNode, rows: Iterable[Mapping[str, str]], figures: Path,
                     notebook: str, run: str = "") -> nbformat.NotebookNode:
    """A copy of the executed notebook ``nb`` ready for its page: a Findings cell first (the title
    moves into it), the parameters cells, progress bars and trailing empty cells removed, every code
    cell tagged ``hide-input``, each figure shown as published (``figures/<notebook>/<stem>.png``, its
    band included) with the alt text of its ``figures.json`` entry, and ``<word>`` pseudo-tags escaped
    in Markdown cells and outputs."""
    nb, rows = copy.deepcopy(nb), list(rows)
    title = notebook_title(nb, notebook)
    drop_bars(nb)
    cells = [c for c in nb.cells if not PARAMETER_TAGS & set(c.get("metadata", {}).get("tags", []))]
    while cells and not cells[-1].source.strip() and not cells[-1].get("outputs"):
        cells.pop()
    out: list[nbformat.NotebookNode] = [nbformat.v4.new_markdown_cell(findings_markdown(title, rows, run))]
    title_done = False
    for cell in cells:
        if cell.cell_type == "markdown" and not title_done:
            cell.source, n = re.subn(r"^# .+\n?", "## The experiment\n", cell.source, count=1, flags=re.M)
            title_done = n > 0
        if cell.cell_type != "code":
            cell.source = dollars_to_mathml(escape_tags(cell.source)) if cell.cell_type == "markdown" else cell.source
            out.append(cell)
            continue
        tags = list(cell.metadata.get("tags", []))
        folded = {"hide-input", "remove-input", "remove-cell"} & set(tags)
        cell.metadata["tags"] = tags if folded else [*tags, "hide-input"]
        for o in cell.get("outputs", []):
            if "text/markdown" in o.get("data", {}):
                o["data"]["text/markdown"] = escape_tags(o["data"]["text/markdown"])
        out.extend(_split_images(cell, figures, notebook, title))
    nb.cells = out
    return nb


def _split_images(cell: nbformat.NotebookNode, figures: Path, notebook: str, title: str) -> list:
    """``cell`` split so that each image output is the last of its piece (MyST-NB gives a cell's images one alt
    text), each figure (its output's ``figure`` metadata) shown as published with its alt text."""
    images = [i for i, o in enumerate(cell.outputs) if "image/png" in o.get("data", {})]
    pieces = []
    for k, i in enumerate(images):
        piece = copy.deepcopy(cell) if k == 0 else nbformat.v4.new_code_cell(  # MyST-NB drops an empty cell
            "# the cell above, continued", metadata={"tags": ["remove-input"]})
        piece.outputs = cell.outputs[0 if k == 0 else i:images[k + 1] if k + 1 < len(images) else None]
        stem = figure_stem(cell.outputs[i])
        entry = {**cell.outputs[i].get("metadata", {}).get("figure", {}), **figure_meta(figures, notebook, stem or "")}
        if stem and (png := figures / notebook / f"{stem}.png").is_file():
            piece.outputs[i if k == 0 else 0]["data"]["image/png"] = base64.b64encode(png.read_bytes()).decode()
        piece.metadata.setdefault("mystnb", {})["image"] = {"alt": figure_alt(entry, f"A figure of {title}")}
        pieces.append(piece)
    return pieces or [cell]


def landing_page(table: pd.DataFrame, profile: str, headline: str | None, headline_alt: str, summary: str = "",
                 headline_notebook: str = "", caption: str = "", claim: str = "", adds: str = "",
                 guide: Iterable[tuple[str, str]] = (), cite: str = "") -> str:
    """The Markdown of ``index.md``: what the paper claims (``summary``), the summary of results (the paper's
    numbers beside ours, ``adds``, every other claim, as cards on a phone, and the legend of their verdict words),
    the figure ``headline`` of ``headline_notebook`` (a path relative to the page, or None) with its ``caption``
    and a link to the findings of the claim keyed ``claim`` (else to the notebook), how to rerun and read on
    (``guide``: (page, title)), and how to cite (``cite``: BibTeX)."""
    first, second = summary_frames(table, "claim-{key}")
    lines = ["# EMA Is Not All You Need: a reproduction", "", "## What the paper claims", "", summary, "",
             "## Summary of results", "",
             f"At the `{profile}` profile; ours: mean ± 95% confidence interval over seeds. Two verdicts per claim: "
             "whether our number is the paper's, and what the controls say of it. Each claim links to its "
             "notebook's findings, where every number, the reason and the rule are given.", "",
             ":::{container} cards numbers", first.to_markdown(index=False), ":::", "", adds, "",
             ":::{container} cards findings", second.to_markdown(index=False), ":::", "",
             legend([*table.number, *table.says]), ""]
    if headline:
        where = f"(claim-{claim})" if claim else f"({headline_notebook}.ipynb)"
        lines += ["## The headline figure", "", f"![{md_escape(headline_alt)}]({headline})", "",
                  *([f"*{md_escape(caption)}.*", ""] if caption else []),
                  f"From the notebook [{headline_notebook}]{where}, where it is explained.", ""]
    lines += ["## How to rerun", "",
              "```bash", "make all            # every notebook at PROFILE=cpu, the report, and this site (docs/)",
              "make test           # the tests, and every notebook at the smoke profile",
              "make lab            # JupyterLab on lab/, your copies of the notebooks to tweak", "```", "",
              "The notebooks are `notebooks/NN_*.py`; each page here is one of them as executed by `make all`.", ""]
    if guide := list(guide):
        lines += ["More: " + "; ".join(f"[{title}]({page})" for page, title in guide) + ".", ""]
    if cite:
        lines += ["## How to cite", "", "```bibtex", cite.strip(), "```", ""]
    return "\n".join(lines)


def cards_css(tables: Mapping[str, Iterable[str]], width: int = 720) -> str:
    """CSS that shows each row of the tables in ``cards`` containers as a card below ``width`` px, each cell led by
    its column's header (``tables``: container class -> headers)."""
    rules = [f"@media (max-width: {width}px) {{",
             ".cards table, .cards tbody, .cards tr, .cards td { display: block; width: 100%; }",
             ".cards thead { display: none; }",
             ".cards tr { border: 1px solid #bbb; border-radius: 6px; margin: 0 0 0.8em; padding: 0.4em 0.6em; }",
             ".cards td { border: none !important; padding: 0.1em 0 !important; text-align: left !important; }",
             ".cards td:first-child { font-weight: 600; }", ".cards td p { display: inline; margin: 0; }"]
    for cls, headers in tables.items():
        rules += [f'.{cls} td:nth-of-type({i})::before {{ content: "{h}: "; font-style: italic; }}'
                  for i, h in enumerate(headers, 1) if i > 1]
    return "\n".join([*rules, "}", ""])


# Jupyter Book's _config.yml (JSON is YAML): no execution, no launch or download buttons or sources'
# copies; one search (the header's), a light default theme (an empty stored mode logs a console error).
BOOK_CONFIG = {
    "title": "EMA Is Not All You Need, a reproduction", "author": "the paper_lib companion", "copyright": "",
    "only_build_toc_files": True, "execute": {"execute_notebooks": "off"},
    "parse": {"myst_enable_extensions": ["colon_fence", "substitution"]},
    "html": {"use_repository_button": False, "use_issues_button": False, "use_edit_page_button": False},
    "launch_buttons": {"thebe": False},
    "sphinx": {"config": {
        "html_show_copyright": False, "html_copy_source": False, "html_show_sourcelink": False,
        "html_last_updated_fmt": "", "nb_merge_streams": True,
        "html_theme_options": {"use_download_button": False, "use_fullscreen_button": False},
        "html_context": {"default_mode": "light"}, "html_favicon": "_static/favicon.svg",
        "html_sidebars": {"**": ["navbar-logo.html", "sbt-sidebar-nav.html"]},
        "suppress_warnings": ["myst.header", "mystnb.unknown_mime_type"]}},
}


# At a phone's width (390 px) a long code name (Sphinx keeps it on one line) or word breaks, an image
# shrinks to the column, a wide table scrolls within itself. Jupyter Book links every stylesheet in the book's _static/.
NARROW_CSS = """code, .pre { overflow-wrap: anywhere; word-break: break-word; }
code span.pre { white-space: normal; }
article img { max-width: 100%; height: auto; }
article table { display: block; max-width: 100%; overflow-x: auto; }
article :is(h1, h2, h3, h4, p, li) { overflow-wrap: break-word; }
"""
# The theme's icons as characters, for its 1.5 MB Font Awesome script (:func:`slim_pages` removes it).
ICONS = {"magnifying-glass": "2315", "bars": "2630", "list": "2261", "outdent": "21E4", "arrow-up": "2191",
         "angle-left": "2039", "angle-right": "203A", "sun": "2600", "moon": "263E", "circle-half-stroke": "25D0"}
ICON_CSS = ".fa-solid { font-style: normal; font-weight: bold; }\n" + "".join(
    f'.fa-{name}::before {{ content: "\\{code}"; }}\n' for name, code in ICONS.items())
# The site's icon (a decaying trace), so that no page asks for a missing favicon.ico.
FAVICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
           '<path d="M1 14 Q5 2 15 3" fill="none" stroke="#369" stroke-width="2"/></svg>')


def stage(profile: str, staging: Path, executed: Path, figures: Path, claims: Claims,
          headline: tuple[str, str] | None = None, summary: str = "", adds: str = "", guide: Path | None = None,
          cite: str = "", sources: Path | None = None) -> list[str]:
    """Write the book's sources into ``staging`` (``_config.yml``, ``_toc.yml``, ``index.md``, the
    pages, the figure ``headline``: ``(notebook, figure stem)``, the pages of ``guide``: a folder of
    Markdown files, each titled by its first line) and return the notebooks' names; with ``sources``
    (``notebooks/``), only of those whose source is there now (one line names the executed ones left
    out: renamed or removed).

    Raises:
        FileNotFoundError: no executed notebook in ``executed`` (run ``make all`` first).
    """
    paths = sorted(executed.glob("[0-9][0-9]_*.ipynb"))
    if gone := [p.stem for p in paths if sources is not None and not (sources / f"{p.stem}.py").is_file()]:
        print(f"site: left out {', '.join(gone)}, executed in {executed} but no longer in {sources}", flush=True)
        paths = [p for p in paths if p.stem not in gone]
    if not paths:
        raise FileNotFoundError(f"no executed notebook in {executed}; run `make all PROFILE={profile}` first")
    table = claims_table(figures, claims)
    rows = table.to_dict("records")  # the report's rows, every value a string
    names, titles = [], {}
    for path in paths:
        name = path.stem
        nb = nbformat.read(path, as_version=4)
        titles[name] = notebook_title(nb, name)
        meta = load_metrics(figures, name)
        run = "" if meta is None else (f"Run at the `{meta.get('profile', profile)}` profile from commit "
                                       f"`{meta.get('git_commit', '?')}`; ours: mean ± 95% CI over seeds.")
        page = prepare_notebook(nb, [r for r in rows if r["notebook"] == name], figures, name, run)
        nbformat.write(page, staging / path.name)
        names.append(name)
    rel, alt, (notebook, stem) = None, "", headline or ("", "")
    if headline and (figures / notebook / f"{stem}.png").exists():
        rel = f"{stem}.png"
        shutil.copyfile(figures / notebook / rel, staging / rel)      # as published, its band included
        alt = figure_alt(figure_meta(figures, notebook, stem), f"A figure of {titles.get(notebook, notebook)}")
    caption = figure_meta(figures, notebook, stem).get("title", "") if headline else ""
    key = next((c.key for c in claims if c.notebook == notebook and stem in c.figures), "")
    pages = []
    for md in sorted(Path(guide).glob("*.md")) if guide and Path(guide).is_dir() else []:
        shutil.copyfile(md, staging / md.name)
        pages.append((md.stem, md.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()))
    first, second = summary_frames(table, "{key}")
    page = landing_page(table, profile, rel, alt, summary, notebook, caption, key, adds,
                        [(f"{p}.md", t) for p, t in pages], cite)
    (staging / "index.md").write_text(page, encoding="utf-8")
    (staging / "_config.yml").write_text(json.dumps(BOOK_CONFIG, indent=1), encoding="utf-8")
    (staging / "_static").mkdir(exist_ok=True)
    css = NARROW_CSS + cards_css({"numbers": first.columns, "findings": second.columns})
    (staging / "_static" / "narrow.css").write_text(css, encoding="utf-8")
    (staging / "_static" / "favicon.svg").write_text(FAVICON, encoding="utf-8")
    (staging / "_static" / "icons.css").write_text(ICON_CSS, encoding="utf-8")
    toc = ["format: jb-book", "root: index", "chapters:", *[f"- file: {n}" for n in names],
           *[f"- file: {p}" for p, _ in pages], ""]
    (staging / "_toc.yml").write_text("\n".join(toc), encoding="utf-8")
    return names


_REMOTE = re.compile(r"<(script|link|img|iframe|source)\b[^>]*\b(src|href)=[\"'](https?:)?//", re.I)


def remote_assets(site: Path) -> list[str]:
    """``file: tag`` for every script, stylesheet, image or frame in ``site``'s HTML that loads
    from another host (a plain ``<a href>`` loads nothing)."""
    pages = {page: page.read_text(encoding="utf-8") for page in sorted(site.rglob("*.html"))}
    return [f"{page.relative_to(site)}: {text[m.start():text.find('>', m.start()) + 1][:160]}"
            for page, text in pages.items() for m in _REMOTE.finditer(text)]


def slim_pages(site: Path) -> None:
    """Every page of ``site`` without the Font Awesome script (:data:`ICON_CSS` draws its icons) and the thebe
    launcher's inline script (it names a remote host, and two of them declare one constant twice), each image of
    the article a link to itself at full size; the Font Awesome files removed."""
    from bs4 import BeautifulSoup  # nbconvert's own dependency

    for page in site.rglob("*.html"):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), features="html.parser")
        for script in soup.find_all("script"):
            if "fontawesome" in (script.get("src") or "") or "THEBE_JS_URL" in script.get_text():
                script.decompose()
        for img in soup.select("article img"):
            if img.get("src") and img.find_parent("a") is None:
                img.wrap(soup.new_tag("a", href=img["src"],
                                      attrs={"class": "full-size", "title": "the figure at full size"}))
        page.write_text(str(soup), encoding="utf-8")
    for script in site.glob("_static/scripts/fontawesome.js*"):
        script.unlink()


def site_dir(profile: str, root: Path = REPO_ROOT) -> Path:
    """Where the site of ``profile`` goes: its :attr:`~paper_lib.pipeline.profiles.Profile.docs`
    (``docs/`` at cpu and paper), else ``build/<profile>/docs/``."""
    docs = get_profile(profile).docs
    return Path(root) / docs if docs else Path(root) / "build" / profile / "docs"


def foreign(site: Path, made: Path) -> list[str]:
    """The names in ``site`` that no build made (``CNAME``, ``docs/gpu/``): not in the new build ``made``, not Sphinx's
    (a ``_`` folder, ``.buildinfo``, a page setting ``DOCUMENTATION_OPTIONS``), not a staging folder. Our design."""
    def built(p: Path) -> bool:
        text = p.read_text(encoding="utf-8", errors="replace") if p.suffix == ".html" and p.is_file() else ""
        return "DOCUMENTATION_OPTIONS" in text or (made / p.name).exists() or p.name.startswith("_") or \
            p.name == ".buildinfo" or any(m in p.name for m in (STAGING_MARK, ".old-"))
    return sorted(p.name for p in site.iterdir() if not built(p)) if site.is_dir() else []


def render_book(staging: Path, out: Path) -> Path:
    """Jupyter Book's HTML of the book in ``staging``, built under ``out``; returns its folder.
    Raises RuntimeError: jupyter-book is not installed, or its build failed (its last lines)."""
    if importlib.util.find_spec("jupyter_book") is None:
        raise RuntimeError("jupyter-book is not installed: pip install -e '.[site]' (`make site` does)")
    cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(staging),
           "--path-output", str(out), "--builder", "html"]
    proc = subprocess.run(cmd, capture_output=True, encoding="utf-8", errors="replace")
    if proc.returncode != 0 or not (out / "_build" / "html" / "index.html").exists():
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
        raise RuntimeError(f"jupyter-book build failed (exit {proc.returncode}): {tail}")
    return out / "_build" / "html"


def build(profile: str, claims: Claims, root: Path = REPO_ROOT, out: Path | None = None,
          executed: Path | None = None, figures: Path | None = None, headline: tuple[str, str] | None = None,
          summary: str = "", adds: str = "", guide: Path | None = None, cite: str = "") -> Path:
    """Build the site of ``profile`` for ``claims`` from ``executed`` (default ``build/executed/<profile>``, those
    in ``root/notebooks`` now) and ``figures`` (default the profile's), replace ``out`` (default :func:`site_dir`)
    with it, keeping what no build made (:func:`foreign`, named in one line), and return ``out`` (a build that stops
    leaves it as it was). ``headline``: ``(notebook, figure stem)`` of the landing page's figure; ``summary``,
    ``adds``: what the paper claims and what the companion adds, in words; ``guide``: a folder of Markdown pages
    (default ``root/guide``); ``cite``: BibTeX.

    Raises:
        ValueError: unknown profile.
        FileNotFoundError: no executed notebook.
        RuntimeError: Jupyter Book failed (its last lines), or a page loads a remote asset.
    """
    check_profile(profile)
    root = Path(root)
    out = Path(out) if out is not None else site_dir(profile, root)
    executed = Path(executed) if executed is not None else root / "build" / "executed" / profile
    figures = Path(figures) if figures is not None else output_dir("x", profile, root).parent
    with tempfile.TemporaryDirectory(prefix="site-") as tmp:
        (staging := Path(tmp) / "book").mkdir()
        stage(profile, staging, executed, figures, claims, headline, summary, adds,
              Path(guide) if guide is not None else root / "guide", cite, root / "notebooks")
        html_dir = render_book(staging, Path(tmp) / "out")
        slim_pages(html_dir)
        if remote := remote_assets(html_dir):
            raise RuntimeError(f"the site would load {len(remote)} remote asset(s), first: {remote[0]}")
        for junk in [*html_dir.rglob("*.map"), html_dir / ".buildinfo"]:  # source maps (3 MB): for debuggers
            junk.unlink(missing_ok=True)
        (html_dir / ".nojekyll").write_text("", encoding="utf-8")
        kept, new = foreign(real_target(out), html_dir), fresh_dir(out)
        try:
            for name in kept:  # copied, links as links, so that the old folder stays whole until the swap
                if (out / name).is_dir() and not (out / name).is_symlink():
                    shutil.copytree(out / name, html_dir / name, symlinks=True)
                else:
                    shutil.copy2(out / name, html_dir / name, follow_symlinks=False)
            shutil.copytree(html_dir, new, dirs_exist_ok=True, symlinks=True)
            done = replace_dir(new, out)
        finally:
            shutil.rmtree(new, ignore_errors=True)  # gone once swapped in; else a half copy
    if kept:
        print(f"site: kept {len(kept)} file(s) in {out} that no build made: {', '.join(kept)}", flush=True)
    return done
