"""Fault kind: a malformed local corpus file gives a traceback, not an answer.

Every malformed input file is one ``ValueError`` line naming the file, the row and what is
allowed: ``.jsonl`` rows without ``text`` or with a non-string one, invalid JSON, an empty
file, a ``.txt`` with a single document (one must go to validation), bad UTF-8, a Parquet
file without a string ``text`` column or with a null in it.
"""
from __future__ import annotations

import re

import pandas as pd
import pytest

from paper_lib.data.corpus import load_corpus, load_eval_docs

JSONL = "one JSON object per line, each with a string 'text' field"
TXT = "UTF-8 text, documents separated by blank lines"
PARQUET = "a string column 'text' without nulls"
CASES = {
    "content.jsonl": ('{"text": "a first document"}\n{"content": "no text field"}\n',
                      "row 2: no 'text' field (fields: content)", JSONL),
    "number.jsonl": ('{"text": 12}\n', "row 1: 'text' is a number, not a string", JSONL),
    "list.jsonl": ('{"text": "ok"}\n\n{"text": ["a", "b"]}\n', "row 3: 'text' is a list, not a string", JSONL),
    "null.jsonl": ('{"text": null}\n', "row 1: 'text' is null, not a string", JSONL),
    "scalar.jsonl": ('"just a string"\n', "row 1: a string, not an object", JSONL),
    "broken.jsonl": ('{"text": "a"}\n{"text": \n', "row 2: not valid JSON (Expecting value)", JSONL),
    "empty.jsonl": ("", "0 documents, and at least 2 are needed (the first goes to validation)", JSONL),
    "blank.jsonl": ('{"text": "  "}\n', "0 documents, and at least 2 are needed (the first goes to validation)",
                    JSONL),
    "one.txt": ("a single document\n\n", "1 document, and at least 2 are needed (the first goes to validation)",
                TXT),
    "latin1.txt": (b"fine\ncaf\xe9\n", "row 2: not UTF-8 text", TXT),
}


def _write(path, content):
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", CASES)
def test_malformed_file_is_one_line_naming_file_row_and_what_is_allowed(tmp_path, name):
    content, problem, allowed = CASES[name]
    path = _write(tmp_path / name, content)
    with pytest.raises(ValueError) as err:
        load_corpus(str(path))
    assert str(err.value) == f"corpus file {path}{': ' if problem[0].isdigit() else ', '}{problem}; allowed: {allowed}"


@pytest.mark.parametrize("frame, problem", [
    (pd.DataFrame({"content": ["a", "b"]}), "no 'text' column (columns: content)"),
    (pd.DataFrame({"text": [1, 2]}), "column 'text' holds int64, not strings"),
    (pd.DataFrame({"text": ["a", None, "c"]}), "row 2: 'text' is null, not a string"),
])
def test_malformed_parquet(tmp_path, frame, problem):
    path = tmp_path / "docs.parquet"
    frame.to_parquet(path)
    with pytest.raises(ValueError, match=re.escape(f"corpus file {path}") + r"(, |: )" + re.escape(
            f"{problem}; allowed: {PARQUET}")):
        load_corpus(str(path))


def test_json_list_and_good_files_still_load(tmp_path):
    arr = _write(tmp_path / "docs.json", '[{"text": "first doc", "id": 1}, {"text": "second doc", "id": "x"}]')
    c = load_corpus(str(arr))
    assert c.validation == ["first doc"] and c.train == ["second doc"]
    txt = _write(tmp_path / "two.txt", "doc one\r\n\ndoc two\n")
    assert load_corpus(str(txt)).train == ["doc two"]
    pq = tmp_path / "docs.parquet"
    pd.DataFrame({"text": ["a doc", "b doc", "c doc"], "n": [1, 2, 3]}).to_parquet(pq)
    assert load_corpus(str(pq)).train == ["b doc", "c doc"]
    bad = _write(tmp_path / "bad.json", '[{"text": "a"}, 3]')
    with pytest.raises(ValueError, match=r"bad.json, row 2: a number, not an object; allowed: JSON lines"):
        load_corpus(str(bad))


def test_evaluation_file_without_documents_is_one_line(tmp_path):
    path = _write(tmp_path / "empty.jsonl", "\n")
    with pytest.raises(ValueError, match=r"^corpus file .*empty.jsonl: no document; allowed: one JSON object"):
        load_eval_docs(str(path))
