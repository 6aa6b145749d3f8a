"""Corpora and tokenizers (paper_lib.data.corpus, paper_lib.data.tokenizer): offline default, splits, caches, errors."""
from __future__ import annotations

import re

import pytest

from paper_lib.data.corpus import (
    CorpusNeedsNetworkError,
    clean_wiki_text,
    extract_wiki_sample,
    load_corpus,
    load_eval_docs,
)
from paper_lib.data.tokenizer import encode_docs, gpt2_tokenizer, train_bpe

MARKUP = re.compile(r"\[\[|\]\]|\{\{|\}\}|'''|''|<ref|</|==|\|")


@pytest.fixture(scope="module")
def wiki(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    return d, load_corpus("wiki_sample", data_dir=d)


def test_wiki_sample_extraction_is_plain_text(wiki):
    _, c = wiki
    assert len(c.train) >= 50 and len(c.validation) >= 3
    assert sum(map(len, c.train)) > 1_000_000            # characters
    assert min(map(len, c.train + c.validation)) >= 2000  # the length threshold
    for doc in c.train + c.validation:
        assert not MARKUP.search(doc), MARKUP.search(doc).group(0)
    assert c.train[0].startswith("Anarchism is a political philosophy")  # casing and punctuation kept


def test_split_is_by_article_and_deterministic(wiki, tmp_path):
    d, c = wiki
    again = extract_wiki_sample(data_dir=tmp_path)        # a fresh extraction, elsewhere
    first = next((d / "corpus").glob("wiki_sample-*.jsonl"))
    assert again.read_bytes() == first.read_bytes()
    assert not set(c.train) & set(c.validation)


def test_clean_wiki_text_removes_markup():
    raw = "'''Foo''' is a [[bar|baz]] {{cite|x}} thing.<ref>r</ref>\n==History==\n* a listed item here\n==References==\n* gone"
    out = clean_wiki_text(raw)
    assert out == "Foo is a baz thing.\nHistory\na listed item here"


def test_ood_news_text():
    docs = load_eval_docs("lee_background")
    assert len(docs) == 300 and "bushfire" in docs[0]


def test_tokenizer_round_trip_and_cache_key(wiki):
    d, c = wiki
    tok = train_bpe(c, vocab_size=512, data_dir=d)
    assert tok.get_vocab_size() == 512 and tok.token_to_id("<|endoftext|>") == 0
    for s in ["Anarchism is a political philosophy.", "Ünïcödé — 42\ttabs  and\nnewlines ", c.validation[0][:500]]:
        assert tok.decode(tok.encode(s).ids) == s
    caches = sorted(p.name for p in (d / "tokenizers").iterdir())
    train_bpe(c, vocab_size=600, data_dir=d)               # another size: another cache file
    small = type(c)(c.name, c.train[:5], c.validation)     # other text: another key
    train_bpe(small, vocab_size=512, data_dir=d)
    assert len(list((d / "tokenizers").iterdir())) == len(caches) + 2
    ids = encode_docs(tok, c.validation[:2], "val", data_dir=d)
    assert (ids == 0).sum() == 2 and ids[-1] == 0          # one end-of-text per document
    assert (encode_docs(tok, c.validation[:2], "val", data_dir=d) == ids).all()


@pytest.mark.parametrize("var", ["HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"])
@pytest.mark.parametrize("name", ["c4", "wikitext103"])
def test_hub_corpus_offline_fails_in_one_line(monkeypatch, var, name):
    monkeypatch.setenv(var, "1")
    with pytest.raises(CorpusNeedsNetworkError) as err:
        load_corpus(name, max_train_chars=1000)
    msg = str(err.value)
    assert "\n" not in msg and "needs the network" in msg and "'wiki_sample'" in msg


def test_gpt2_tokenizer_offline_fails_in_one_line(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CorpusNeedsNetworkError, match=r"GPT-2 tokenizer needs the network.*tokenizer 'bpe'"):
        gpt2_tokenizer()


def test_unknown_corpus():
    with pytest.raises(ValueError, match="unknown corpus 'nope'"):
        load_corpus("nope")


def test_empty_local_corpus_is_a_clear_error(tmp_path):
    from paper_lib.data.corpus import load_corpus

    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"corpus file .*empty.txt: 0 documents, and at least 2 are needed"):
        load_corpus(str(empty))


@pytest.mark.parametrize("network", ["refused", "hangs"])
@pytest.mark.parametrize("name", ["c4", "wikitext103"])
def test_hub_corpus_without_network_fails_fast_in_one_line(monkeypatch, network, name):
    """No offline variable set and no network: one bounded check, not datasets' retries. A lookup
    that hangs blocks until the test releases it (or 60 s): the error must come while it still hangs."""
    import socket
    import threading

    from paper_lib.data import corpus

    calls, answered, release = [], [], threading.Event()

    def connect(*args, **kwargs):
        calls.append(kwargs.get("timeout"))
        if network == "hangs":
            release.wait(60)                  # a name lookup that does not answer
        answered.append(True)
        raise OSError("Name or service not known")

    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(socket, "create_connection", connect)
    corpus.hub_reachable.cache_clear()
    try:
        with pytest.raises(CorpusNeedsNetworkError) as err:
            load_corpus(name, max_train_chars=1000)
        assert calls == [corpus.HUB_PROBE_S]                          # one probe, with the bounded wait
        assert bool(answered) == (network == "refused")                # a hanging lookup is not waited for
        msg = str(err.value)
        assert "\n" not in msg and "needs the network" in msg and "'wiki_sample'" in msg
        with pytest.raises(CorpusNeedsNetworkError, match="GPT-2 tokenizer needs the network"):
            gpt2_tokenizer()                  # checked once per process: no second wait
        assert len(calls) == 1
    finally:
        release.set()
        corpus.hub_reachable.cache_clear()
