"""A figure says on its face what its claim's verdict makes of it: every figure of a claim (or with a verdict of
its own) that is not a plain yes or no carries a band above the image with :func:`~.verdicts.mark_text`'s words,
never over the data. The report draws it once on the published PNG (:func:`mark_figures`) and records it in
``figures.json``; the notebook's HTML (:func:`~.render.finish_page`) and the site show that PNG. Our design."""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Iterable, Mapping

from .atomic import atomic_path, write_json
from .provenance import record
from .verdicts import Kind, mark_text


def figure_marks(rows: Iterable[Mapping[str, object]], figures: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """``{figure stem: band}`` of one notebook from its report ``rows`` (``key``, ``holds``, ``number``) and each
    claim key's figure stems; a figure of several claims takes the first that marks it."""
    marks: dict[str, str] = {}
    for r in rows:
        if text := mark_text(Kind.of(str(r["holds"])), str(r.get("number", ""))):
            for stem in figures.get(str(r["key"]), ()):
                marks.setdefault(stem, text)
    return marks


def mark_png(data: bytes, text: str, crop: int = 0) -> tuple[bytes, int]:
    """PNG ``data`` less its top ``crop`` rows (an earlier band), with a band of ``text`` above it (dark red on
    pale, as wide as the image; none for ``""``), its text chunks (the provenance stamp) and dpi kept; returns
    the PNG and the band's height. Raises ``PIL.UnidentifiedImageError``: not an image."""
    from matplotlib import font_manager
    from PIL import Image, ImageDraw, ImageFont
    from PIL.PngImagePlugin import PngInfo

    source = Image.open(io.BytesIO(data))
    info = PngInfo()
    for key, value in source.info.items():
        if isinstance(value, str):
            info.add_text(key, value)
    image = source.convert("RGB")
    image = image.crop((0, crop, image.width, image.height)) if crop else image
    w, h = image.size
    band, out = 0, image
    if text:
        for size in range(max(12, min(28, w // 45)), 7, -1):  # the largest size whose text fits, 8 at least
            font = ImageFont.truetype(font_manager.findfont("DejaVu Sans:bold"), size)
            if size == 8 or font.getlength(text) <= w - 16:
                break
        band = int(size * 1.8)
        out = Image.new("RGB", (w, h + band), (255, 236, 230))
        out.paste(image, (0, band))
        ImageDraw.Draw(out).text((8, (band - size) // 2), text, fill=(150, 20, 20), font=font)
    buf = io.BytesIO()
    out.save(buf, format="PNG", pnginfo=info, **({"dpi": source.info["dpi"]} if "dpi" in source.info else {}))
    return buf.getvalue(), band


def mark_figures(folder: Path, marks: Mapping[str, str]) -> list[str]:
    """Give each figure of ``folder`` (``figures/<notebook>/``, its ``figures.json``) its band: that of a verdict of
    its own (its entry's ``verdict``), else the one ``marks`` names, else none; on its PNG (sha256 in
    ``provenance.json``) and in its entry (``mark``, ``band``: the band's height in pixels). Returns the stems
    changed; a figure already so marked is left as it is."""
    meta_path, prov = folder / "figures.json", folder / "provenance.json"
    if not meta_path.is_file():
        return []
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    stamps = json.loads(prov.read_text(encoding="utf-8")) if prov.is_file() else {}
    changed = []
    for stem, entry in meta.items():
        png, text = folder / f"{stem}.png", mark_text(Kind.of(entry.get("verdict", "yes"))) or marks.get(stem, "")
        if entry.get("mark", "") == text or not png.is_file():
            continue
        data, band = mark_png(png.read_bytes(), text, int(entry.get("band", 0)))
        with atomic_path(png) as tmp:
            tmp.write_bytes(data)
        meta[stem] = {**{k: v for k, v in entry.items() if k not in ("mark", "band")},
                      **({"mark": text, "band": band} if text else {})}
        record(folder, [png], {k: v for k, v in stamps.get(png.name, {}).items() if k != "sha256"})
        changed.append(stem)
    if changed:
        write_json(meta_path, meta)
        record(folder, [meta_path], {k: v for k, v in stamps.get(meta_path.name, {}).items() if k != "sha256"})
    return changed


def figure_alt(entry: Mapping[str, str], fallback: str = "A figure") -> str:
    """A figure's alt text from its ``figures.json`` entry: its band's words first, where it has one."""
    alt = str(entry.get("alt") or fallback)
    return f"{entry['mark']}. {alt}" if entry.get("mark") else alt
