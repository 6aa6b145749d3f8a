"""The companion as a static site under ``docs/``: the findings first, the code folded away.

``python -m paper_lib.claims site --profile cpu`` reads the executed notebooks
``build/executed/<profile>/<NN_name>.ipynb`` and the report's claims table for the claims it is given,
and writes ``index.html`` (what the paper claims, what we find, ONE results table, the headline
figure, how to rerun) and one page per notebook (a "Findings" cell first, one ``claim-<key>`` anchor
per claim, every code cell folded, the parameters cells removed, images with alt text).

Jupyter Book 1.x (our choice, the paper is silent) renders executed notebooks without running them,
folds code by cell tag (``hide-input``) and bundles its theme: it builds and reads offline
(:func:`remote_assets` fails a build that loads a remote asset). The site replaces ``docs/`` in one rename.
"""
from __future__ import annotations

import base64
import copy
import html
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
from .markdown import escape_tags
from .marks import figure_marks, mark_png
from .profiles import check_profile, get_profile
from .provenance import REPO_ROOT, output_dir
from .report import Claims, claims_table, load_metrics

PARAMETER_TAGS = {"parameters", "injected-parameters"}  # papermill's parameters cells: removed from the pages

def md_escape(text: object) -> str:
    """``text`` as literal Markdown inline text: every character Markdown or MyST could read as
    syntax backslash-escaped, newlines as spaces."""
    return re.sub(r"([\\`*_\[\]<>|$&{}#~])", r"\\\1", " ".join(str(text).split()))


def stem_words(stem: str) -> str:
    """A figure's file stem in words: ``recall_by_pairs`` -> ``Recall by pairs``."""
    words = re.sub(r"[_-]+", " ", stem).strip()
    return words[:1].upper() + words[1:]


def figure_meta(figures: Path, notebook: str, stem: str) -> dict:
    """Figure ``stem``'s entry in ``figures/<notebook>/figures.json`` (``{stem: {"alt", "title"}}``), or ``{}``."""
    meta = figures / notebook / "figures.json"
    return (json.loads(meta.read_text(encoding="utf-8")).get(stem) or {}) if meta.exists() else {}


def figure_alt(figures: Path, notebook: str, stem: str, title: str = "") -> str:
    """Alt text of figure ``stem`` of ``notebook``: its ``alt`` (:func:`figure_meta`), else the stem in
    words and the notebook's title."""
    alt = figure_meta(figures, notebook, stem).get("alt")
    return str(alt or f"{stem_words(stem)}, a figure of {title or notebook}")


def notebook_title(nb: nbformat.NotebookNode, notebook: str) -> str:
    """The first ``# heading`` of ``nb``'s first Markdown cell, else the notebook's name."""
    first = next((cell.source for cell in nb.cells if cell.cell_type == "markdown"), "")
    m = re.search(r"^# (.+)$", first, flags=re.M)
    return m.group(1).strip() if m else notebook


def claim_heading(claim: str, most: int = 18) -> str:
    """A claim's heading in the page contents: the claim up to its first ``:``, ``;`` or `` (`` after at
    least 4 words, or ``, `` after at least 6, where that leaves at most ``most`` words; else the whole
    claim when it is that short, else its first words and an ellipsis. The whole claim follows."""
    for m in re.finditer(r":|;| \(|, ", claim):
        n = len(claim[:m.start()].split())
        if (4 if m.group() != ", " else 6) <= n <= most:
            return claim[:m.start()]
    words = claim.split()
    return claim if len(words) <= most else " ".join(words[:most - 2]) + " …"


def findings_markdown(title: str, rows: Iterable[Mapping[str, str]], run: str = "") -> str:
    """The Findings cell of a notebook page: its title, then per claim an anchor ``(claim-<key>)=``,
    the verdict, paper and ours, the reason, the rule and all our numbers (folded)."""
    lines, rows = [f"# {title}", "", "## Findings", "", run, ""], list(rows)
    if not rows:
        lines += ["This notebook decides no claim of the report; its figures and tables are below.", ""]
    for r in rows:
        numbers = [s.strip() for s in r["ours"].split(";") if s.strip() and s.strip() != "—"]
        heading = claim_heading(r["claim"])
        lines += [f"(claim-{r['key']})=", f"### {md_escape(heading)}", "",
                  *([f"*Claim:* {md_escape(r['claim'])}.", ""] if heading != r["claim"] else []),
                  f"**Verdict: {md_escape(r['holds'])}.** Paper: {md_escape(r['paper'])}; "
                  f"ours: {md_escape(r['headline'])}; against: {md_escape(r['versus'])}.", ""]
        lines += [f"*{k.title()}:* {md_escape(r[k])}.\n" for k in ("why", "rule") if r[k]]
        if numbers:
            lines += ["```{dropdown} All our numbers for this claim", *[f"- {md_escape(n)}" for n in numbers],
                      "```", ""]
    lines += ["The code that made every number is folded above each output: click *Show code cell source* "
              "to open it.", ""]
    return "\n".join(lines)


def prepare_notebook(nb: nbformat.NotebookNode, rows: Iterable[Mapping[str, str]], figures: Path,
                     notebook: str, run: str = "", claim_figures: Mapping[str, Iterable[str]] | None = None
                     ) -> nbformat.NotebookNode:
    """A copy of the executed notebook ``nb`` ready for its page: a Findings cell first (the title
    moves into it), the parameters cells and trailing empty cells removed, every code cell tagged
    ``hide-input``, each image with its alt text, its saved 150 dpi PNG and, where its claim
    (``claim_figures``: key -> stems) is undecided in ``rows``, a band (:mod:`.marks`), and
    ``<word>`` pseudo-tags escaped in Markdown cells and outputs."""
    nb, rows = copy.deepcopy(nb), list(rows)
    title = notebook_title(nb, notebook)
    marks = figure_marks(rows, claim_figures or {})
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
            cell.source = escape_tags(cell.source) if cell.cell_type == "markdown" else cell.source
            out.append(cell)
            continue
        tags = list(cell.metadata.get("tags", []))
        folded = {"hide-input", "remove-input", "remove-cell"} & set(tags)
        cell.metadata["tags"] = tags if folded else [*tags, "hide-input"]
        for o in cell.get("outputs", []):
            if "text/markdown" in o.get("data", {}):
                o["data"]["text/markdown"] = escape_tags(o["data"]["text/markdown"])
        out.extend(_split_images(cell, figures, notebook, title, marks))
    nb.cells = out
    return nb


def _split_images(cell: nbformat.NotebookNode, figures: Path, notebook: str, title: str,
                  marks: Mapping[str, str] | None = None) -> list:
    """``cell`` split so that each image output carries its own alt text (``mystnb.image.alt``), saved PNG and band."""
    images = [i for i, o in enumerate(cell.outputs) if any(k.startswith("image/") for k in o.get("data", {}))]
    stems = re.findall(r"save_figure\(\s*[^,()]+,\s*[\"']([^\"']+)[\"']", cell.source)  # out.save_figure(fig, "x")
    marks = marks or {}
    if len(stems) == len(images):
        for stem, i in zip(stems, images, strict=True):
            _mark_output(cell.outputs[i], figures / notebook / f"{stem}.png", marks.get(stem, ""))
        alts = [(f"{marks[s]}. " if s in marks else "") + figure_alt(figures, notebook, s, title) for s in stems]
    else:
        band = next((marks[s] for s in stems if s in marks), "")
        for i in images:
            _mark_output(cell.outputs[i], None, band)
        alts = [figure_alt(figures, notebook, s, title) for s in stems]
        alts = [f"{band}. " + ("; ".join(alts) or f"A figure of {title}")] if band else alts
    if len(alts) != len(images) or len(images) < 2:
        alts = ["; ".join(alts) or f"A figure of {title}"] if images else []
        images = images[:1]
    pieces = []
    for k, alt in enumerate(alts):
        piece = copy.deepcopy(cell) if k == 0 else nbformat.v4.new_code_cell(  # MyST-NB drops an empty cell
            "# the cell above, continued", metadata={"tags": ["remove-input"]})
        piece.outputs = cell.outputs[0 if k == 0 else images[k]:images[k + 1] if k + 1 < len(images) else None]
        piece.metadata.setdefault("mystnb", {})["image"] = {"alt": alt}
        pieces.append(piece)
    return pieces or [cell]


def _mark_output(output: nbformat.NotebookNode, saved: Path | None, band: str) -> None:
    """Give one image ``output`` the bytes of ``saved`` (when it exists) and the ``band`` above it."""
    data = output["data"]
    if "image/png" not in data or not (band or (saved and saved.is_file())):
        return
    png = saved.read_bytes() if saved and saved.is_file() else base64.b64decode(data["image/png"])
    data["image/png"] = base64.b64encode(mark_png(png, band) if band else png).decode()


def landing_page(rows: list[Mapping[str, str]], profile: str, headline: str | None, headline_alt: str,
                 summary: str = "", headline_notebook: str = "", caption: str = "", claim: str = "") -> str:
    """The Markdown of ``index.md``: ``summary``, what we find (every claim and its verdict), the
    results table (reason and rule as footnotes), the figure ``headline`` of ``headline_notebook`` (a
    path relative to the page, or None) with its ``caption`` and a link to the findings of the claim
    keyed ``claim`` (else to the notebook), and how to rerun."""
    counts = pd.Series([r["holds"] for r in rows], dtype=str).str.split(":").str[0].value_counts()  # README's order
    found = ", ".join(f"**{n}** {w}" for w, n in counts.items())
    lines = ["# EMA Is Not All You Need: a reproduction", "",
             "## What the paper claims", "", summary, "",
             "## What we find", "",
             f"Of the {len(rows)} claims we test (at the `{profile}` profile): {found}. "
             "A claim is *not informative at this budget* when its control did not differ as it must for "
             "the experiment to have power; the footnote of each verdict says why.", ""]
    lines += [f"- [{md_escape(r['claim'])}](claim-{r['key']}): **{md_escape(r['holds'])}**." for r in rows]
    lines += [""] if rows else []
    lines += ["## Results", "",
              "Ours: mean ± 95% confidence interval over seeds; against: the control or rival the claim's rule "
              "compares with. Each claim links to its notebook's findings, "
              "where every number, the reason and the rule are given.", "",
              "| claim | paper | ours ± CI | against | verdict |", "|---|---|---|---|---|"]
    notes = []
    for r in rows:
        lines.append(f"| [{md_escape(r['claim'])}](claim-{r['key']}) | {md_escape(r['paper'])} | "
                     f"{md_escape(r['headline'])} | {md_escape(r['versus'])} | {md_escape(r['holds'])}[^{r['key']}] |")
        notes.append(f"[^{r['key']}]: {md_escape(r['why'] or r['holds'])}. Rule: {md_escape(r['rule'])}.")
    lines += ["", *notes, ""]
    if headline:
        where = f"(claim-{claim})" if claim else f"({headline_notebook}.ipynb)"
        lines += ["## The headline figure", "", f"![{md_escape(headline_alt)}]({headline})", "",
                  *([f"*{md_escape(caption)}.*", ""] if caption else []),
                  f"From the notebook [{headline_notebook}]{where}, where it is explained.", ""]
    lines += ["## How to rerun", "",
              "```bash", "make all            # every notebook at PROFILE=cpu, the report, and this site (docs/)",
              "make all PROFILE=smoke  # minutes: checks the plumbing, proves nothing",
              "make site           # only this site, from the executed notebooks of the last run", "```", "",
              "The notebooks are `notebooks/NN_*.py`; each page here is one of them as executed by `make all`.", ""]
    return "\n".join(lines)


# Jupyter Book's _config.yml (JSON is YAML): no execution, math, launch or download buttons or sources'
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
          headline: tuple[str, str] | None = None, summary: str = "", sources: Path | None = None) -> list[str]:
    """Write the book's sources into ``staging`` (``_config.yml``, ``_toc.yml``, ``index.md``, the pages, the figure
    ``headline``: ``(notebook, figure stem)``) and return the notebooks' names; with ``sources`` (``notebooks/``),
    only of those whose source is there now (one line names the executed ones left out: renamed or removed).

    Raises:
        FileNotFoundError: no executed notebook in ``executed`` (run ``make all`` first).
    """
    paths = sorted(executed.glob("[0-9][0-9]_*.ipynb"))
    if gone := [p.stem for p in paths if sources is not None and not (sources / f"{p.stem}.py").is_file()]:
        print(f"site: left out {', '.join(gone)}, executed in {executed} but no longer in {sources}", flush=True)
        paths = [p for p in paths if p.stem not in gone]
    if not paths:
        raise FileNotFoundError(f"no executed notebook in {executed}; run `make all PROFILE={profile}` first")
    rows = claims_table(figures, claims).to_dict("records")  # the report's rows, every value a string
    names, titles = [], {}
    for path in paths:
        name = path.stem
        nb = nbformat.read(path, as_version=4)
        titles[name] = notebook_title(nb, name)
        meta = load_metrics(figures, name)
        run = "" if meta is None else (f"Run at the `{meta.get('profile', profile)}` profile from commit "
                                       f"`{meta.get('git_commit', '?')}`; ours: mean ± 95% CI over seeds.")
        page = prepare_notebook(nb, [r for r in rows if r["notebook"] == name], figures, name, run,
                                {c.key: c.figures for c in claims if c.notebook == name})
        nbformat.write(page, staging / path.name)
        names.append(name)
    rel, alt, (notebook, stem) = None, "", headline or ("", "")
    if headline and (figures / notebook / f"{stem}.png").exists():
        rel = f"{stem}.png"
        band = figure_marks([r for r in rows if r["notebook"] == notebook],
                            {c.key: c.figures for c in claims if c.notebook == notebook}).get(stem, "")
        png = (figures / notebook / rel).read_bytes()
        (staging / rel).write_bytes(mark_png(png, band) if band else png)
        alt = (f"{band}. " if band else "") + figure_alt(figures, notebook, stem, titles.get(notebook, ""))
    caption = figure_meta(figures, notebook, stem).get("title", "") if headline else ""
    key = next((c.key for c in claims if c.notebook == notebook and stem in c.figures), "")
    page = landing_page(rows, profile, rel, alt, summary, notebook, caption, key)
    (staging / "index.md").write_text(page, encoding="utf-8")
    (staging / "_config.yml").write_text(json.dumps(BOOK_CONFIG, indent=1), encoding="utf-8")
    (staging / "_static").mkdir(exist_ok=True)
    (staging / "_static" / "narrow.css").write_text(NARROW_CSS, encoding="utf-8")
    (staging / "_static" / "favicon.svg").write_text(FAVICON, encoding="utf-8")
    (staging / "_static" / "icons.css").write_text(ICON_CSS, encoding="utf-8")
    toc = ["format: jb-book", "root: index", "chapters:", *[f"- file: {n}" for n in names], ""]
    (staging / "_toc.yml").write_text("\n".join(toc), encoding="utf-8")
    return names


_REMOTE = re.compile(r"<(script|link|img|iframe|source)\b[^>]*\b(src|href)=[\"'](https?:)?//", re.I)


def remote_assets(site: Path) -> list[str]:
    """``file: tag`` for every script, stylesheet, image or frame in ``site``'s HTML that loads
    from another host (a plain ``<a href>`` loads nothing)."""
    pages = {page: page.read_text(encoding="utf-8") for page in sorted(site.rglob("*.html"))}
    return [f"{page.relative_to(site)}: {text[m.start():text.find('>', m.start()) + 1][:160]}"
            for page, text in pages.items() for m in _REMOTE.finditer(text)]


_IMG = re.compile(r"<img\b[^>]*>", re.I)
_FONTAWESOME = re.compile(r"<script\b[^>]*fontawesome\.js[^>]*>\s*</script>\s*", re.I)


def _alt_fixed(tag: str, title: str) -> str:
    """``tag`` (one ``<img ...>``) with alt text ``A figure of <title>`` where its own is missing,
    empty or a file path (Sphinx's fallback)."""
    alt = re.search(r"\balt=\"([^\"]*)\"", tag)
    if alt and alt.group(1).strip() and not re.search(r"\.(png|jpe?g|svg|gif)$|_images/", alt.group(1)):
        return tag
    new = f'alt="{html.escape("A figure of " + title)}"'
    return tag.replace(alt.group(0), new) if alt else f"{tag[:4]} {new}{tag[4:]}"


def slim_pages(site: Path) -> None:
    """Give every ``<img>`` in ``site``'s HTML that lacks meaningful alt text the page's title as alt
    text, and remove the Font Awesome script (:data:`ICON_CSS` draws its icons) from every page and the site."""
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        m = re.search(r"<title>(.*?)</title>", text, flags=re.S)
        title = html.unescape(m.group(1).split("—")[0].strip()) if m else page.stem
        new = _FONTAWESOME.sub("", _IMG.sub(lambda tag, t=title: _alt_fixed(tag.group(0), t), text))
        if new != text:
            page.write_text(new, encoding="utf-8")
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
          summary: str = "") -> Path:
    """Build the site of ``profile`` for ``claims`` from ``executed`` (default ``build/executed/<profile>``, those
    in ``root/notebooks`` now) and ``figures`` (default the profile's), replace ``out`` (default :func:`site_dir`)
    with it, keeping what no build made (:func:`foreign`, named in one line), and return ``out`` (a build that stops
    leaves it as it was); ``headline``: ``(notebook, figure stem)`` of the landing figure; ``summary``: in words.

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
        stage(profile, staging, executed, figures, claims, headline, summary, root / "notebooks")
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
