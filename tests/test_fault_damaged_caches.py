"""Damaged ``data/`` caches and cache keys that collide.

A cache cut short by an interrupted copy (an empty tokenizer JSON, a 0-byte or half token
``.npy``, a 0-byte corpus JSONL) is rebuilt with a one-line warning naming the file, never a
traceback from tokenizers, numpy or a generator. Cache keys hash each document with its
length in front, so ``["x", "y"]`` and ``["x\\0y"]`` (and two corpora split the same way)
never share a key.
"""
from __future__ import annotations

import numpy as np
import pytest

from paper_lib.data.corpus import Corpus, damaged_jsonl, extract_wiki_sample, load_corpus
from paper_lib.data.tokenizer import encode_docs, train_bpe

DOCS = [f"Document {i}: the quick brown fox jumps over the lazy dog, {i * 7} times." for i in range(40)]


@pytest.fixture(scope="module")
def tok(tmp_path_factory):
    return train_bpe(Corpus("tiny", DOCS, DOCS[:2]), vocab_size=300, data_dir=tmp_path_factory.mktemp("tok"))


def _warned(capsys, path) -> None:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"warning: damaged cache {path} (")
    assert lines[0].endswith(("; rebuilding it", "; extracting it again"))


def test_an_empty_tokenizer_json_is_rebuilt(tmp_path, capsys):
    corpus = Corpus("tiny", DOCS, DOCS[:2])
    first = train_bpe(corpus, vocab_size=300, data_dir=tmp_path)
    (path,) = (tmp_path / "tokenizers").iterdir()
    path.write_bytes(b"")  # an interrupted copy
    capsys.readouterr()
    again = train_bpe(corpus, vocab_size=300, data_dir=tmp_path)
    _warned(capsys, path)
    assert again.to_str() == first.to_str() and path.stat().st_size > 0


@pytest.mark.parametrize("damage", ["0 bytes", "half", "a stranger's array"])
def test_a_damaged_token_npy_is_rebuilt(tok, tmp_path, capsys, damage):
    fresh = encode_docs(tok, DOCS, "train", data_dir=tmp_path)
    (path,) = (tmp_path / "tokens").iterdir()
    raw = path.read_bytes()
    if damage == "0 bytes":
        path.write_bytes(b"")
    elif damage == "half":
        path.write_bytes(raw[: len(raw) // 2])
    else:
        np.save(path, np.zeros((3, 4), dtype=np.uint16))
    capsys.readouterr()
    again = encode_docs(tok, DOCS, "train", data_dir=tmp_path)
    _warned(capsys, path)
    assert np.array_equal(again, fresh) and path.read_bytes() == raw


@pytest.mark.parametrize("damage", ["0 bytes", "cut mid-row"])
def test_a_damaged_corpus_jsonl_is_extracted_again(tmp_path, capsys, damage):
    path = extract_wiki_sample(data_dir=tmp_path)
    raw = path.read_bytes()
    assert damaged_jsonl(path) is None
    path.write_bytes(b"" if damage == "0 bytes" else raw[: len(raw) - 500])
    assert damaged_jsonl(path) == ("0 bytes" if damage == "0 bytes" else f"{len(raw) - 500} bytes, cut short")
    capsys.readouterr()
    corpus = load_corpus("wiki_sample", data_dir=tmp_path)
    _warned(capsys, path)
    assert path.read_bytes() == raw and len(corpus.train) >= 50


def test_documents_never_share_a_token_cache_key(tok, tmp_path):
    apart = encode_docs(tok, ["x", "y"], "k", data_dir=tmp_path)
    joined = encode_docs(tok, ["x\0y"], "k", data_dir=tmp_path)  # once the same key: this read ["x", "y"]'s stream
    eot = tok.token_to_id("<|endoftext|>")
    assert int((apart == eot).sum()) == 2 and int((joined == eot).sum()) == 1
    assert np.array_equal(joined, encode_docs(tok, ["x\0y"], None))  # what an uncached encoding gives
    assert len(list((tmp_path / "tokens").iterdir())) == 2


def test_corpora_split_differently_have_different_fingerprints():
    assert Corpus("c", ["x", "y"], []).fingerprint() != Corpus("c", ["x\0y"], []).fingerprint()
    assert Corpus("c", ["ab"], []).fingerprint() != Corpus("ca", ["b"], []).fingerprint()  # the name, too
    assert Corpus("c", ["x", "y"], ["v"]).fingerprint() == Corpus("c", ["x", "y"], ["w"]).fingerprint()  # train only
    assert Corpus("c", ["x"], []).fingerprint() != Corpus("c", ["x", ""], []).fingerprint()
