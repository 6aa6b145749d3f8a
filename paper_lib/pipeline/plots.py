"""Figure helpers every notebook shares: a footer that says what the figure is (:func:`stamp`),
labelled paper marks, legends that never cover data, CIs clipped to [0, 1], log2 axes.
Our design: the paper is silent.
"""
from __future__ import annotations

from .profiles import PROFILES


def count(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word`` in the right number: ``count(1, "seed")`` is ``1 seed``, with 3 ``3 seeds``."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def stamp(fig, profile: str, n_seeds: int, errorbars: str | None = None, note: str | None = None) -> None:
    """Write a footer under ``fig``: profile, seed count, what the error bars are, a note, and the
    profile's :attr:`~paper_lib.pipeline.profiles.Profile.note` for a run that proves nothing. Error
    bars "over seeds" from one seed are none, and the footer says so."""
    parts = [f"profile: {profile}", count(n_seeds, "seed")]
    if errorbars and n_seeds == 1 and "over seeds" in errorbars:
        parts.append("no error bars (one seed)")
    elif errorbars:
        parts.append(f"error bars: {errorbars}")
    if note:
        parts.append(note)
    if profile in PROFILES and PROFILES[profile].note:
        parts.append(PROFILES[profile].note.upper())
    fig.text(0.01, -0.02, " · ".join(parts), ha="left", va="top", fontsize=8, color="0.35")


def mark_paper(ax, value: float, label: str, axis: str = "y", color: str = "0.2", legend: bool = False, **kw) -> None:
    """A dashed line at the paper's ``value`` on ``axis`` (``"y"``: horizontal, ``"x"``: vertical) with
    ``label`` beside it, or (``legend``) in the legend. Raises ValueError for another ``axis``."""
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    if legend:
        (ax.axhline if axis == "y" else ax.axvline)(value, ls="--", lw=1.2, color=color, label=label, **kw)
    elif axis == "y":
        ax.axhline(value, ls="--", lw=1.2, color=color, **kw)
        ax.annotate(label, xy=(1.0, value), xycoords=("axes fraction", "data"), xytext=(-4, 3),
                    textcoords="offset points", ha="right", va="bottom", fontsize=8, color=color)
    elif axis == "x":
        ax.axvline(value, ls="--", lw=1.2, color=color, **kw)
        ax.annotate(label, xy=(value, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -4),
                    textcoords="offset points", ha="left", va="top", fontsize=8, color=color, rotation=90)


def legend_outside(ax, title: str | None = None, **kw) -> None:
    """Put ``ax``'s legend to the right of the axes, where it cannot cover bars or lines."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                  fontsize=8, **kw)


def legend_below(fig, ax, ncol: int = 2, title: str | None = None, **kw):
    """One legend under the figure's panels from ``ax``'s labelled artists, then ``fig.tight_layout``
    above it (for figures a legend beside the axes would make too wide). Returns it, or ``None``."""
    handles, labels = ax.get_legend_handles_labels()
    for a in fig.axes:
        if a.get_legend() is not None:
            a.get_legend().remove()
    if not handles:
        fig.tight_layout()
        return None
    leg = fig.legend(handles, labels, title=title, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=ncol,
                     frameon=False, fontsize=8, title_fontsize=8, **kw)
    height = leg.get_window_extent(fig.canvas.get_renderer()).height / fig.bbox.height
    fig.tight_layout(rect=(0, min(height + 0.01, 0.6), 1, 1))
    return leg


def clipped_yerr(mean, ci, lo: float = 0.0, hi: float = 1.0):
    """``yerr`` for :meth:`~matplotlib.axes.Axes.errorbar` of ``mean +- ci`` drawn inside ``[lo, hi]``: a
    ``(2, n)`` array of the distances down and up (only the drawing is clipped)."""
    import numpy as np

    mean, ci = np.asarray(mean, float), np.asarray(ci, float)
    return np.stack([mean - np.clip(mean - ci, lo, hi), np.clip(mean + ci, lo, hi) - mean])


def log2_ticks(ax, values, axis: str = "x") -> None:
    """A base-2 log scale on ``axis`` labelled at ``values`` only (plain numbers, no minor labels)."""
    from matplotlib.ticker import NullFormatter, NullLocator

    which = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)
    values = sorted(values)
    (ax.set_xticks if axis == "x" else ax.set_yticks)(values, [f"{v:g}" for v in values])
    which.set_minor_locator(NullLocator())
    which.set_minor_formatter(NullFormatter())
