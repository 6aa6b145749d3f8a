"""Local corpus files: ``.txt``, ``.jsonl``, ``.json`` and ``.parquet``, read and checked row by row.

A ``.txt`` holds documents separated by one or more blank (or whitespace-only) lines; the lines
of a document are joined with ``\n``, so one document per line with blank lines between is the
same rule. A UTF-8 byte-order mark at the start of a text file (``.txt``, ``.jsonl``, ``.json``)
is dropped.

Every malformed file is one ``ValueError`` line naming the file, the row and what is allowed
(:data:`LOCAL_FORMATS`): a row that is not an object, without a ``text`` field or with a
non-string one, invalid JSON or UTF-8, a Parquet file without a string ``text`` column or with
a null in it (``tests/test_fault_malformed_corpus.py``). JSON is read with the standard
library one line at a time, Parquet with ``pyarrow`` in batches. Our design (the paper is silent).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

LOCAL_FORMATS = {
    ".txt": "UTF-8 text, documents separated by blank lines",
    ".jsonl": "one JSON object per line, each with a string 'text' field",
    ".json": "JSON lines or a JSON list of objects, each with a string 'text' field",
    ".parquet": "a string column 'text' without nulls",
}
"""What each local corpus file must hold (the error messages quote it)."""


def malformed_file(path, problem: str, row: int | None = None) -> ValueError:
    """The one-line ``ValueError`` for a malformed local corpus file: the file, the row (from 1)
    when known, the problem and what is allowed (:data:`LOCAL_FORMATS`)."""
    where = f", row {row}" if row is not None else ""
    return ValueError(f"corpus file {path}{where}: {problem}; allowed: {LOCAL_FORMATS[Path(path).suffix.lower()]}")


def _lines(path) -> Iterator[tuple[int, str]]:
    """(line number from 1, line) of a UTF-8 text file, read one line at a time; a byte-order
    mark at the start is dropped."""
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise malformed_file(path, "not UTF-8 text", n) from None
            yield n, (line[1:] if n == 1 and line.startswith("\ufeff") else line)


def _txt_docs(path) -> Iterator[str]:
    """Documents of a ``.txt``: runs of non-blank lines, each run's lines joined with ``\n``."""
    doc: list[str] = []
    for _, line in _lines(path):
        if line.strip():
            doc.append(line.rstrip("\r\n"))
        elif doc:
            yield "\n".join(doc)
            doc = []
    if doc:
        yield "\n".join(doc)


def _json_rows(path) -> Iterator[tuple[int, object]]:
    """(row number from 1, parsed row) of JSON lines, or of a JSON list (a ``.json`` starting with ``[``)."""
    if Path(path).suffix.lower() == ".json":
        text = "".join(line for _, line in _lines(path))
        if text.lstrip().startswith("["):
            try:
                rows = json.loads(text)
            except json.JSONDecodeError as err:
                raise malformed_file(path, f"not valid JSON at line {err.lineno} ({err.msg})") from None
            yield from enumerate(rows, 1)
            return
    for n, line in _lines(path):
        if line.strip():
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as err:
                raise malformed_file(path, f"not valid JSON ({err.msg})", n) from None


def local_docs(path: str | Path) -> Iterator[str]:
    """Documents of a local ``.txt`` / ``.jsonl`` / ``.json`` / ``.parquet`` file (see
    :data:`LOCAL_FORMATS`), checked row by row as they are read; empty documents are skipped.

    Raises:
        ValueError: one line naming the file, the row and what is allowed: a row that is not
        an object, has no ``text`` field or a non-string one, invalid JSON or UTF-8.
    """
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        yield from _parquet_docs(path)
    elif suffix == ".txt":
        yield from _txt_docs(path)
    else:
        for n, row in _json_rows(path):
            if not isinstance(row, dict):
                raise malformed_file(path, f"{_JSON_KINDS.get(type(row), 'not text')}, not an object", n)
            if "text" not in row:
                raise malformed_file(path, f"no 'text' field (fields: {', '.join(map(str, row)) or 'none'})", n)
            if not isinstance(row["text"], str):
                raise malformed_file(path, f"'text' is {_JSON_KINDS.get(type(row['text']), 'not text')}, not a string", n)
            if row["text"].strip():
                yield row["text"]


_JSON_KINDS = {int: "a number", float: "a number", bool: "a boolean", list: "a list", dict: "an object",
               str: "a string", type(None): "null"}


def _parquet_docs(path) -> Iterator[str]:
    """The non-empty ``text`` values of a Parquet file, read in batches with ``pyarrow``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    if "text" not in f.schema_arrow.names:
        raise malformed_file(path, f"no 'text' column (columns: {', '.join(f.schema_arrow.names) or 'none'})")
    kind = f.schema_arrow.field("text").type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise malformed_file(path, f"column 'text' holds {kind}, not strings")
    row = 0
    for batch in f.iter_batches(columns=["text"]):
        for text in batch.column(0).to_pylist():
            row += 1
            if text is None:
                raise malformed_file(path, "'text' is null, not a string", row)
            if text.strip():
                yield text
