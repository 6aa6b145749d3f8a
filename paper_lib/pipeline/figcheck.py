"""Legibility checks of a matplotlib figure about to be saved (:func:`check_figure`), measured as
``savefig(bbox_inches="tight")`` lays it out: extents in display pixels at ``dpi``, font sizes in
points (a tight crop does not rescale them). Our design: the paper is silent.
"""
from __future__ import annotations

import re
from itertools import combinations

import numpy as np

MIN_FONT_PT = 7.0      # smallest readable text at the saved size (points); our choice
MAX_WIDTH_PX = 1600    # widest figure a page shows legibly at its saved dpi (pixels); our choice
PAD_INCHES = 0.1       # savefig's default pad around a tight bounding box (rcParams["savefig.pad_inches"])


def _visible(text) -> bool:
    """A text a reader sees: visible, non-blank, in a visible axes (or none)."""
    if not text.get_visible() or not text.get_text().strip():
        return False
    parent = text.axes
    return parent is None or parent.get_visible()


def _name(ax) -> str:
    """An axes' title, else its position among the figure's axes."""
    title = ax.get_title() or ax.get_title(loc="left") or ax.get_title(loc="right")
    return repr(title) if title else f"axes {ax.figure.axes.index(ax) + 1}"


def drawn_tick_labels(axis) -> list:
    """The tick labels ``axis`` draws: major and minor, visible, non-blank, inside the view limits."""
    lo, hi = sorted(axis.get_view_interval())
    tol = 1e-9 * max(abs(lo), abs(hi), 1.0)
    labels = []
    for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
        loc = tick.get_loc()
        if loc is None or not lo - tol <= loc <= hi + tol:
            continue
        for label in (tick.label1, tick.label2):
            if _visible(label):
                labels.append(label)
    return labels


def _texts(fig, drawn_ticks: set) -> list:
    """Every visible text of ``fig``, each once; of the tick labels only those in ``drawn_ticks`` (ids)."""
    undrawn = {id(lab) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
               for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]
               for lab in (tick.label1, tick.label2)} - drawn_ticks
    seen, out = set(), []
    for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontsize")):
        if id(t) not in seen and id(t) not in undrawn and _visible(t):
            seen.add(id(t))
            out.append(t)
    return out


def _overlap(a, b) -> bool:
    """Whether two outlines (:func:`outline`) overlap by more than a pixel (separating axis test)."""
    for poly in (a, b):
        for i in range(len(poly)):
            edge = poly[(i + 1) % len(poly)] - poly[i]
            normal = np.array([-edge[1], edge[0]])
            norm = np.hypot(*normal)
            if norm == 0:
                continue
            pa, pb = a @ (normal / norm), b @ (normal / norm)
            if min(pa.max(), pb.max()) - max(pa.min(), pb.min()) <= 1:
                return False
    return True


def outline(text, renderer) -> np.ndarray:
    """The corners (4 x 2, display pixels) of ``text``'s box as drawn, rotation included."""
    box = text.get_window_extent(renderer)
    angle = text.get_rotation()
    if angle % 90 == 0:
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    text.set_rotation(0)
    try:
        flat = text.get_window_extent(renderer)
    finally:
        text.set_rotation(angle)
    w, h, th = flat.width / 2, flat.height / 2, np.deg2rad(angle)
    rot = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    corners = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) @ rot.T
    return corners + [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]


def code_names(text: str) -> list[str]:
    """The identifiers in ``text`` that a reader should see in words (``spen_linear``: lower-case words joined
    by ``_``), outside ``$math$``."""
    return _IDENTIFIER.findall(re.sub(r"\$[^$]*\$", "", text))


_IDENTIFIER = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w(])")


def _short(text) -> str:
    s = " ".join(text.get_text().split())
    return repr(s if len(s) <= 40 else s[:37] + "...")


def check_figure(fig, dpi: float = 150, max_width_px: float = MAX_WIDTH_PX, min_font_pt: float = MIN_FONT_PT) -> list[str]:
    """The legibility problems of ``fig`` saved at ``dpi`` with ``bbox_inches="tight"``; ``[]`` if none.

    One line per problem: wider than ``max_width_px`` pixels, text under ``min_font_pt`` points, tick
    labels or other text over tick labels, several panels and no suptitle, a code name (:func:`code_names`)
    where words belong. The figure is left as it was.
    """
    old_dpi = fig.get_dpi()
    fig.set_dpi(dpi)
    try:
        fig.canvas.draw()  # lays out the figure (tight_layout, legends, ticks) as savefig will
        renderer = fig.canvas.get_renderer()
        problems = []
        width = (fig.get_tightbbox(renderer).width + 2 * PAD_INCHES) * dpi
        if width > max_width_px:
            problems.append(f"{width:.0f} px wide at {dpi:g} dpi, more than {max_width_px:g} px "
                            "(split the panels into rows or make it narrower)")
        owner, boxes, overlapping = _tick_labels(fig, renderer)
        texts = _texts(fig, set(owner))
        problems += overlapping + _small_text(texts, min_font_pt) + _over_ticks(texts, owner, boxes, renderer)
        problems += _no_suptitle(fig)
        if named := sorted({n for t in texts for n in code_names(t.get_text())}):
            problems.append(f"code name(s) {', '.join(named)} in a title, label, tick or legend: say it in words")
    finally:
        fig.set_dpi(old_dpi)
    return problems


def _tick_labels(fig, renderer):
    """``owner[id] = (axes, "x" or "y")`` and ``boxes[id]`` of the drawn tick labels, and collisions."""
    owner, boxes, problems = {}, {}, []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = drawn_tick_labels(axis)
            for t in labels:
                owner[id(t)], boxes[id(t)] = (ax, which), outline(t, renderer)
            for a, b in combinations(labels, 2):
                if _overlap(boxes[id(a)], boxes[id(b)]):
                    problems.append(f"tick labels overlap on the {which} axis of {_name(ax)}: {_short(a)} and {_short(b)}")
                    break
    return owner, boxes, problems


def _small_text(texts, min_font_pt: float) -> list[str]:
    small = [t for t in texts if t.get_fontsize() < min_font_pt - 1e-6]
    if not small:
        return []
    sizes = sorted({round(t.get_fontsize(), 1) for t in small})
    return [f"text of {', '.join(f'{s:g}' for s in sizes)} pt, smaller than {min_font_pt:g} pt: "
            + ", ".join(_short(t) for t in small[:3])]


def _over_ticks(texts, owner, boxes, renderer) -> list[str]:
    ticks = [t for t in texts if id(t) in owner]
    problems = []
    for t in texts:
        if id(t) in owner:
            continue
        box = outline(t, renderer)
        hit = next((tick for tick in ticks if _overlap(box, boxes[id(tick)])), None)
        if hit is not None:
            ax, which = owner[id(hit)]
            problems.append(f"text {_short(t)} overlaps the {which} tick label {_short(hit)} of {_name(ax)}")
    return problems


def _no_suptitle(fig) -> list[str]:
    panels = [ax for ax in fig.axes if ax.get_visible() and not hasattr(ax, "_colorbar")]
    suptitle = getattr(fig, "_suptitle", None)
    if len(panels) > 1 and (suptitle is None or not _visible(suptitle)):
        return [f"{len(panels)} panels and no suptitle (fig.suptitle says what the figure shows)"]
    return []
