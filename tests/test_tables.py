"""The house table style: every cell one formatted number or the label whole, no index column,
no NaN, wide tables folded."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from paper_lib.pipeline.tables import FOLD_COLUMNS, format_number, table_html


@pytest.mark.parametrize("value, text", [
    (None, ""), (math.nan, ""), (1234567, "1,234,567"), (0.12345, "0.123"), (0.0012345, "0.00123"),
    (-0.0, "0.000"), (2.0, "2.000"), (True, "True"), ("a label", "a label"),
])
def test_format_number(value, text):
    assert format_number(value) == text


def test_table_html_no_index_no_nan_whole_labels():
    long = "a setting name far longer than pandas' default column width of fifty characters, shown whole"
    df = pd.DataFrame({"model": ["spen", long], "acc": [0.5, math.nan], "steps": [1000.0, 2000.0]})
    html = table_html(df)
    assert long in html and "NaN" not in html and "nan" not in html and "..." not in html
    assert "<td>1,000</td>" in html and "<td>0.500</td>" in html  # whole floats as integers
    assert "<th></th>" not in html and "<td>0</td>" not in html    # no 0..n index column
    assert "<details>" not in html


def test_named_index_becomes_columns_and_wide_tables_fold():
    df = pd.DataFrame({"acc": [0.25]}, index=pd.Index(["spen"], name="model"))
    assert "<th>model</th>" in table_html(df) and "<td>spen</td>" in table_html(df)
    wide = pd.DataFrame([list(range(FOLD_COLUMNS + 1))], columns=[f"c{i}" for i in range(FOLD_COLUMNS + 1)])
    html = table_html(wide)
    assert html.startswith("<details><summary>Table of 1 row and 9 columns (show)</summary>")
    assert table_html(wide.iloc[:, :FOLD_COLUMNS]).startswith("<table")
