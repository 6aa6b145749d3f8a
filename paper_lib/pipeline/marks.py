"""A figure says on its face when its claim decides nothing: every figure of a claim whose verdict is not yes,
partly or no carries a band with the verdict, from the claim's report row, never by hand: on the site and (by
:func:`mark_published`) in each notebook's published HTML. Our design: the paper is silent."""
from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Iterable, Mapping

from .atomic import write_text
from .provenance import record

DECIDED = ("yes", "partly", "no")
"""The verdicts a figure shows as a result; any other marks it."""
MARK_PREFIX = "Not a result"
"""How a marked figure's band and alt text begin."""


def mark_text(holds: str) -> str:
    """The band of a figure whose claim reads ``holds``, or ``""`` when the claim is decided."""
    return "" if holds.split(":")[0].strip() in DECIDED else f"{MARK_PREFIX}: the claim reads “{holds}”"


def figure_marks(rows: Iterable[Mapping[str, object]], figures: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """``{figure stem: band}`` of one notebook from its report ``rows`` (``key``, ``holds``) and each
    claim key's figure stems; a figure of several claims takes the first undecided verdict."""
    marks: dict[str, str] = {}
    for r in rows:
        if text := mark_text(str(r["holds"])):
            for stem in figures.get(str(r["key"]), ()):
                marks.setdefault(stem, text)
    return marks


def mark_png(data: bytes, text: str) -> bytes:
    """PNG ``data`` with a band of ``text`` above it, dark red on pale, at least 14 px tall and as
    wide as the image. Raises ``PIL.UnidentifiedImageError``: not an image."""
    from matplotlib import font_manager
    from PIL import Image, ImageDraw, ImageFont

    image = Image.open(io.BytesIO(data)).convert("RGB")
    w, h = image.size
    for size in range(max(12, min(28, w // 45)), 7, -1):  # the largest size whose text fits, 8 at least
        font = ImageFont.truetype(font_manager.findfont("DejaVu Sans:bold"), size)
        if size == 8 or font.getlength(text) <= w - 16:
            break
    band = int(size * 1.8)
    out = Image.new("RGB", (w, h + band), (255, 236, 230))
    out.paste(image, (0, band))
    ImageDraw.Draw(out).text((8, (band - size) // 2), text, fill=(150, 20, 20), font=font)
    buf = io.BytesIO()
    out.save(buf, format="PNG")
    return buf.getvalue()


def mark_published(folder: Path, rows: Iterable[Mapping[str, object]], figures: Mapping[str, Iterable[str]]) -> bool:
    """Mark each image of ``folder/<notebook>.html`` (``folder``: ``figures/<notebook>/``) whose alt text in
    ``figures.json`` is a figure :func:`figure_marks` marks from ``rows`` (the report's, every notebook's):
    band, alt prefix, sha256 in ``provenance.json``; once. Returns whether the page changed."""
    from bs4 import BeautifulSoup  # nbconvert's own dependency

    page, meta, prov = folder / f"{folder.name}.html", folder / "figures.json", folder / "provenance.json"
    if not (page.is_file() and meta.is_file() and prov.is_file()):
        return False
    stems = {str(e.get("alt")): stem for stem, e in json.loads(meta.read_text(encoding="utf-8")).items()}
    bands = figure_marks([r for r in rows if r["notebook"] == folder.name], figures)
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), features="html.parser")
    changed = False
    for img in soup.find_all("img"):
        band = bands.get(stems.get(img.get("alt", ""), ""))
        if band and img.get("src", "").startswith("data:image/png;base64,"):
            png = mark_png(base64.b64decode(img["src"].split(",", 1)[1]), band)
            img["src"] = "data:image/png;base64," + base64.b64encode(png).decode()
            img["alt"] = f"{band}. {img['alt']}"
            changed = True
    if changed:
        write_text(page, str(soup))
        stamp = json.loads(prov.read_text(encoding="utf-8")).get(page.name, {})
        record(folder, [page], {k: v for k, v in stamp.items() if k != "sha256"})
    return changed
