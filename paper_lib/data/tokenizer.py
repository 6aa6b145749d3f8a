"""Tokenizers for SPEN: a byte-level BPE trained on the corpus, or GPT-2's (the paper's).

- :func:`train_bpe`: byte-level BPE trained with HF ``tokenizers`` on a corpus's training
  split, cached as ``data/tokenizers/bpe-<corpus>-v<vocab>-<fingerprint>.json``. The
  fingerprint is a SHA-256 of the training text (:meth:`Corpus.fingerprint`), so a changed
  corpus or vocabulary size never reuses a stale cache. Our design (``cpu``: 8192 tokens).
- :func:`gpt2_tokenizer`: GPT-2's tokenizer (vocabulary 50257) through
  ``tokenizers.Tokenizer.from_pretrained("gpt2")``, as the paper's GPT-2 comparison implies;
  it needs the network, and offline raises one line saying so.
- :func:`encode_docs`: documents -> one ``uint16``/``int32`` token stream, each document
  followed by the end-of-text token, cached beside the tokenizer.

Cache keys hash each document with its length in front, so no two lists of documents share a key
(``["x", "y"]`` and ``["x\0y"]`` did, when documents were joined by a separator). A damaged cache
(an empty or half-copied tokenizer JSON or ``.npy``) is rebuilt with a one-line warning naming it.

Byte-level BPE decodes every string back exactly (``tests/test_corpus.py``), special-token
text included: the tokenizers here encode a document's literal ``<|endoftext|>`` as plain
text (``encode_special_tokens``), so end-of-text ids come only from the document boundaries
:func:`encode_docs` inserts (``tests/test_fault_special_token_text.py``).
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np

from ..pipeline.atomic import atomic_path, write_text
from .corpus import DATA_DIR, Corpus, hub_offline, needs_network_error

EOT = "<|endoftext|>"
ENCODING_VERSION = 3
"""Part of the token-stream cache key; bump it when the encoding or the key changes (2: special-token
text inside a document is plain text; 3: documents hashed with their lengths)."""


def hash_docs(h, docs) -> None:
    """Add ``docs`` to the hash ``h`` so that no other list of documents adds the same bytes: each
    document's UTF-8 length (8 bytes) before its bytes (a code that decodes back to one list only)."""
    for doc in docs:
        raw = doc.encode("utf-8")
        h.update(len(raw).to_bytes(8, "little"))
        h.update(raw)


def _damaged(path: Path, err: BaseException) -> None:
    """Say in one line that the cache ``path`` is damaged and is rebuilt, and remove it."""
    why = (str(err).strip().splitlines() or [type(err).__name__])[0]
    print(f"warning: damaged cache {path} ({path.stat().st_size} bytes: {why}); rebuilding it", file=sys.stderr,
          flush=True)
    path.unlink(missing_ok=True)


def literal_special_tokens(tok):
    """``tok`` set to encode special-token text (``<|endoftext|>``) as plain text; returns it."""
    tok.encode_special_tokens = True
    return tok


def train_bpe(corpus: Corpus, vocab_size: int = 8192, data_dir: Path | None = None):
    """A byte-level BPE ``tokenizers.Tokenizer`` trained on ``corpus.train`` (cached); it
    encodes special-token text inside a string as plain text.

    Args:
        corpus: the documents; only ``train`` is used (validation stays unseen).
        vocab_size: tokens, including the 256 bytes and ``<|endoftext|>`` (id 0).

    Raises:
        ValueError: ``vocab_size`` < 257 or an empty training split.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if vocab_size < 257:
        raise ValueError(f"vocab_size must be >= 257 (256 bytes + end-of-text), got {vocab_size}")
    if not corpus.train:
        raise ValueError("cannot train a tokenizer on an empty training split")
    data_dir = Path(data_dir) if data_dir is not None else DATA_DIR
    path = data_dir / "tokenizers" / f"bpe-{corpus.name}-v{vocab_size}-{corpus.fingerprint()}.json"
    if path.exists():
        try:
            return literal_special_tokens(Tokenizer.from_file(str(path)))
        except Exception as err:  # noqa: BLE001 - an empty or half-copied file: tokenizers' error, rebuilt
            _damaged(path, err)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus.train, trainer=trainer)
    write_text(path, tok.to_str())
    return literal_special_tokens(tok)


def gpt2_tokenizer():
    """GPT-2's byte-level BPE (50257 tokens) from the hub.

    Raises:
        CorpusNeedsNetworkError: offline (one line naming the offline default).
    """
    from tokenizers import Tokenizer

    advice = "use the BPE tokenizer trained on the corpus (tokenizer 'bpe', e.g. --profile cpu)"
    if hub_offline():
        raise needs_network_error("the GPT-2 tokenizer", advice)
    try:
        return literal_special_tokens(Tokenizer.from_pretrained("gpt2"))
    except Exception:
        raise needs_network_error("the GPT-2 tokenizer", advice) from None


def get_tokenizer(kind: str, corpus: Corpus, vocab_size: int = 8192, data_dir: Path | None = None):
    """``kind="bpe"`` -> :func:`train_bpe`; ``kind="gpt2"`` -> :func:`gpt2_tokenizer`.

    Raises:
        ValueError: unknown kind. CorpusNeedsNetworkError: ``gpt2`` offline.
    """
    if kind == "bpe":
        return train_bpe(corpus, vocab_size, data_dir)
    if kind == "gpt2":
        return gpt2_tokenizer()
    raise ValueError(f"unknown tokenizer {kind!r}; allowed: bpe, gpt2")


def tokenizer_key(tok) -> str:
    """12 hex digits identifying a tokenizer (a hash of its JSON)."""
    return hashlib.sha256(tok.to_str().encode()).hexdigest()[:12]


def encode_docs(tok, docs: list[str], cache_name: str | None = None,
                data_dir: Path | None = None) -> np.ndarray:
    """Token ids of ``docs`` as one stream, each document followed by ``<|endoftext|>``.

    A document's own text is encoded literally (a ``<|endoftext|>`` written in it is plain
    text), so the stream holds exactly one end-of-text id per document, at its end.

    Returns a 1-D ``uint16`` array (``int32`` when the vocabulary exceeds 65535). With
    ``cache_name`` the array is cached as ``data/tokens/<cache_name>-<key>.npy``, the key
    hashing :data:`ENCODING_VERSION`, the tokenizer and the documents (:func:`hash_docs`); a cache
    that is damaged (0 bytes, truncated, another shape or fewer end-of-text ids than documents)
    is rebuilt with a one-line warning.
    """
    eot = tok.token_to_id(EOT)
    dtype = np.uint16 if tok.get_vocab_size() <= 65535 else np.int32
    path = None
    if cache_name is not None:
        h = hashlib.sha256(f"encoding-v{ENCODING_VERSION}:{tokenizer_key(tok)}".encode())
        hash_docs(h, docs)
        data_dir = Path(data_dir) if data_dir is not None else DATA_DIR
        path = data_dir / "tokens" / f"{cache_name}-{h.hexdigest()[:12]}.npy"
        if path.exists():
            try:
                ids = np.load(path, allow_pickle=False)
                if ids.ndim != 1 or ids.dtype != dtype or int((ids == eot).sum()) != len(docs):
                    raise ValueError(f"a {ids.dtype} array of shape {ids.shape}, not the stream of {len(docs)} documents")
                return ids
            except (OSError, ValueError, EOFError) as err:  # 0 bytes, a half copy: rebuilt
                _damaged(path, err)
    pieces, literal = [], tok.encode_special_tokens
    tok.encode_special_tokens = True                    # the documents' text, never a boundary
    try:
        encoded = tok.encode_batch(docs)
    finally:
        tok.encode_special_tokens = literal
    for enc in encoded:
        pieces.append(np.asarray(enc.ids, dtype=dtype))
        pieces.append(np.asarray([eot], dtype=dtype))
    ids = np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)
    if path is not None:
        with atomic_path(path) as tmp:
            np.save(tmp, ids)
    return ids
