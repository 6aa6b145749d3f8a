"""Fault kind: special-token text inside a document becomes a document boundary.

The text of a document survives encoding: a literal ``<|endoftext|>`` written in a document
decodes back as written, and end-of-text ids come only from the boundaries that
:func:`encode_docs` inserts. A token cache written under the old encoding is not reused.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from paper_lib.data.corpus import Corpus
from paper_lib.data.tokenizer import EOT, encode_docs, get_tokenizer, tokenizer_key

DOCS = ["GPT-2 marks the end of a text with <|endoftext|> between documents.",
        "<|endoftext|>",
        "twice: <|endoftext|><|endoftext|> and a near miss <|endoftext| too"]


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    text = ["the cat sat on the mat, and the dog chased the cat. " * 20,
            "a special token looks like <|endoftext|> in GPT-2's vocabulary. " * 10]
    return get_tokenizer("bpe", Corpus("tiny", text, text[:1]), vocab_size=300,
                         data_dir=tmp_path_factory.mktemp("data"))


@pytest.mark.parametrize("doc", DOCS)
def test_special_token_text_survives_a_round_trip(tok, doc):
    ids = tok.encode(doc).ids
    assert tok.token_to_id(EOT) not in ids
    assert tok.decode(ids) == doc


def test_end_of_text_only_at_inserted_boundaries(tok, tmp_path):
    eot = tok.token_to_id(EOT)
    ids = encode_docs(tok, DOCS, "docs", data_dir=tmp_path)
    ends = np.flatnonzero(ids == eot)
    assert len(ends) == len(DOCS) and ends[-1] == len(ids) - 1
    starts = np.concatenate([[0], ends[:-1] + 1])
    assert [tok.decode(ids[a:b].tolist()) for a, b in zip(starts, ends, strict=True)] == DOCS


def test_caller_setting_is_restored(tok, tmp_path):
    tok.encode_special_tokens = False
    try:
        encode_docs(tok, DOCS[:1])
        assert tok.encode_special_tokens is False
    finally:
        tok.encode_special_tokens = True


def test_cache_of_the_old_encoding_is_not_reused(tok, tmp_path):
    """The old key hashed the tokenizer and the documents only; a file there is stale."""
    h = hashlib.sha256(tokenizer_key(tok).encode())
    for d in DOCS:
        h.update(d.encode("utf-8"))
        h.update(b"\0")
    stale = tmp_path / "tokens" / f"docs-{h.hexdigest()[:12]}.npy"
    stale.parent.mkdir(parents=True)
    np.save(stale, np.zeros(5, dtype=np.uint16))
    ids = encode_docs(tok, DOCS, "docs", data_dir=tmp_path)
    assert len(ids) > 5 and (ids == tok.token_to_id(EOT)).sum() == len(DOCS)
