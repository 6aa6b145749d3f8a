"""Fault kind: a local ``.txt`` corpus is read one document per line, not as the
README says (documents separated by blank lines), and a UTF-8 byte-order mark stays inside the
first document.

One rule for ``.txt``: documents are runs of non-blank lines, separated by one or more blank
(or whitespace-only) lines, their lines joined with ``\\n``; so a file with one document per line
and blank lines between reads the same. A BOM is dropped in every text format (.txt, .jsonl,
.json). The default corpora (``wiki_sample``, ``lee_background``) never take this path.
"""
from __future__ import annotations

import json

import pytest

from paper_lib.data import corpus
from paper_lib.data.corpus import load_corpus, load_eval_docs
from paper_lib.data.local_files import local_docs

DOCS = [f"Title {i}\nthe body of document {i}, its second line" for i in range(6)]


def test_txt_documents_are_separated_by_blank_lines(tmp_path):
    path = tmp_path / "docs.txt"
    seps = ["\n\n", "\n\n\n", "\n   \n", "\n\t\n\n", "\n\n"]          # one or more blank lines
    text = DOCS[0] + "".join(sep + d for sep, d in zip(seps, DOCS[1:], strict=True)) + "\n"
    path.write_text(text, encoding="utf-8")
    assert list(local_docs(path)) == DOCS
    c = load_corpus(str(path))
    assert c.validation == DOCS[:1] and c.train == DOCS[1:]           # every 10th document, from the first
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(text.replace("\n", "\r\n").encode())
    assert list(local_docs(crlf)) == DOCS


def test_one_document_per_line_with_blank_lines_between_is_the_same_rule(tmp_path):
    lines = [f"document {i} on a single line" for i in range(6)]
    path = tmp_path / "lines.txt"
    path.write_text("\n\n".join(lines) + "\n\n", encoding="utf-8")
    assert list(local_docs(path)) == lines
    c = load_corpus(str(path))
    assert c.validation == lines[:1] and c.train == lines[1:]


@pytest.mark.parametrize("name, body", [
    ("bom.txt", "first doc\n\nsecond doc\n"),
    ("bom.jsonl", '{"text": "first doc"}\n{"text": "second doc"}\n'),
    ("bom.json", '[{"text": "first doc"}, {"text": "second doc"}]'),
    ("lines.json", '{"text": "first doc"}\n{"text": "second doc"}\n'),
])
def test_byte_order_mark_is_dropped_in_every_text_format(tmp_path, name, body):
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    assert list(local_docs(path)) == ["first doc", "second doc"]
    c = load_corpus(str(path))
    assert c.validation == ["first doc"] and c.train == ["second doc"]


def test_error_rows_of_a_txt_are_still_line_numbers(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"\xef\xbb\xbfa first\ndocument\n\ncaf\xe9\n")
    with pytest.raises(ValueError, match=r"^corpus file .*bad.txt, row 4: not UTF-8 text; allowed: UTF-8 text, "
                                         r"documents separated by blank lines$"):
        load_corpus(str(path))


def test_default_corpora_do_not_read_local_files(monkeypatch):
    """The published token streams come from wiki_sample and lee_background, read by HF
    ``datasets`` (the JSONL cache, gensim's ``.cor``), never by :func:`local_docs`."""
    def refuse(path):
        raise AssertionError(f"local_docs called for {path}")
    monkeypatch.setattr(corpus, "local_docs", refuse)
    docs = load_eval_docs("lee_background", max_chars=3000)
    assert docs and all("\n" not in d.strip() for d in docs)          # one article per line, as before
    assert json.dumps(docs[0])[:40] == json.dumps(docs[0].lstrip("\ufeff"))[:40]
    wiki = load_corpus("wiki_sample", max_train_chars=5000, max_val_chars=5000)
    assert wiki.train and wiki.validation
