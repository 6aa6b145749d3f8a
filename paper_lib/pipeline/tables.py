"""One table style for every notebook: what a ``pandas.DataFrame`` looks like when a notebook
displays it, in JupyterLab, in the published HTML and on the site.

- no index column 0..n (a named or non-default index becomes the table's first columns);
- one formatted number per cell: integers with thousands separators, other numbers to 3 decimals
  (3 significant digits below 0.01), a missing value as an empty cell, never ``NaN``;
- no text cut with "...": every label and setting is shown whole;
- a table of more than :data:`FOLD_COLUMNS` columns folded under a one-line summary;
- every column and index named in words (the map the notebook gives :func:`use_table_style`), as in the
  Markdown copy of a saved table (the CSV keeps the names code reads).

A notebook calls :func:`use_table_style` once, in its first code cell. Our design: the paper is silent.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

FOLD_COLUMNS = 8
"""Widest table shown open (columns); a wider one is folded under ``<details>``."""


def format_number(value) -> str:
    """One cell's text: ``""`` for a missing value, ``1,234`` for an integer, ``0.123`` for another
    number (3 decimals; 3 significant digits below 0.01); anything else as ``str``."""
    if value is None or (isinstance(value, Real) and not isinstance(value, Integral) and math.isnan(value)):
        return ""
    if isinstance(value, bool) or not isinstance(value, Real):
        return str(value)
    if isinstance(value, Integral):
        return f"{int(value):,}"
    if value != 0 and abs(value) < 0.01:
        return f"{value:.3g}"
    return f"{value + 0.0:.3f}"  # + 0.0: -0.0 shows as 0.000


def _column(col):
    """A float column whose every value is a whole number shows as integers."""
    values = col.dropna()
    if col.dtype.kind == "f" and len(values) and (values == values.round()).all() and values.abs().max() < 2**53:
        return [format_number(None if v != v else int(v)) for v in col]
    return [format_number(v) for v in col]


WORDS: dict[str, str] = {}
"""Column name -> the words a reader sees for it (:func:`use_table_style` fills it)."""


def in_words(df):
    """``df`` with each column and index name that :data:`WORDS` knows in its words."""
    def say(name):
        return WORDS.get(name, name) if isinstance(name, str) else name
    return df.rename(columns=say).rename_axis(index=[say(n) for n in df.index.names])


def table_html(df) -> str:
    """``df`` (a ``pandas.DataFrame``) as HTML in the house style (see the module docstring)."""
    import pandas as pd

    df = in_words(df)
    if not isinstance(df.index, pd.RangeIndex) or df.index.names != [None]:
        df = df.rename_axis([n if n is not None else "" for n in df.index.names]).reset_index()
    if not isinstance(df.columns, pd.MultiIndex):
        df = df.set_axis([format_number(c) if isinstance(c, Real) else c for c in df.columns], axis=1)
    cells = pd.DataFrame({i: _column(df.iloc[:, i]) for i in range(df.shape[1])})
    html = cells.set_axis(df.columns, axis=1).to_html(index=False, border=0, max_rows=None, max_cols=None)
    if df.shape[1] > FOLD_COLUMNS:
        plural = "s" if df.shape[0] != 1 else ""
        html = (f"<details><summary>Table of {df.shape[0]} row{plural} and {df.shape[1]} columns (show)</summary>"
                f"{html}</details>")
    return html


def use_table_style(words: dict[str, str] | None = None) -> None:
    """Make IPython show every ``pandas.DataFrame`` with :func:`table_html` in this kernel (no-op outside
    IPython), its columns named by ``words`` (added to :data:`WORDS`)."""
    import pandas as pd

    WORDS.update(words or {})
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, table_html)
