"""Figure helpers every notebook shares: a footer that says what the figure is, labelled paper
marks, legends that never cover data. Our design: the paper is silent.

    fig, ax = plt.subplots()
    ...
    mark_paper(ax, 0.960, "paper: 0.960")                   # a dashed, labelled line
    legend_outside(ax)                                      # legend right of the axes
    stamp(fig, profile="cpu", n_seeds=5, errorbars="95% CI over seeds")
"""
from __future__ import annotations

SMOKE_NOTE = "smoke run: checks the plumbing, proves nothing"


def stamp(fig, profile: str, n_seeds: int, errorbars: str | None = None, note: str | None = None) -> None:
    """Write a footer under ``fig``: profile, seed count, what the error bars are, a note.

    A smoke run says so (:data:`SMOKE_NOTE`), so its figure is never mistaken for a finding.
    """
    parts = [f"profile: {profile}", f"{n_seeds} seed{'s' if n_seeds != 1 else ''}"]
    if errorbars:
        parts.append(f"error bars: {errorbars}")
    if note:
        parts.append(note)
    if profile == "smoke":
        parts.append(SMOKE_NOTE.upper())
    fig.text(0.01, -0.02, " · ".join(parts), ha="left", va="top", fontsize=8, color="0.35")


def mark_paper(ax, value: float, label: str, axis: str = "y", color: str = "0.2", **kw) -> None:
    """A dashed line at the paper's ``value`` with its ``label`` written beside it (not in the legend).

    Args:
        axis: ``"y"`` for a horizontal line (a paper accuracy or loss), ``"x"`` for a vertical one.
    """
    if axis == "y":
        ax.axhline(value, ls="--", lw=1.2, color=color, **kw)
        ax.annotate(label, xy=(1.0, value), xycoords=("axes fraction", "data"), xytext=(-4, 3),
                    textcoords="offset points", ha="right", va="bottom", fontsize=8, color=color)
    elif axis == "x":
        ax.axvline(value, ls="--", lw=1.2, color=color, **kw)
        ax.annotate(label, xy=(value, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -4),
                    textcoords="offset points", ha="left", va="top", fontsize=8, color=color, rotation=90)
    else:
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")


def legend_outside(ax, title: str | None = None, **kw) -> None:
    """Put ``ax``'s legend to the right of the axes, where it cannot cover bars or lines."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                  fontsize=8, **kw)
