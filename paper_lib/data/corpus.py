"""Text corpora for SPEN (notebook 03): an embedded offline default and real hub sources.

Sources, by name (:func:`load_corpus` for training/validation, :func:`load_eval_docs` for
evaluation-only text):

- ``"wiki_sample"`` (default, offline): the English Wikipedia sample that ``gensim`` ships
  among its test data (``enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2``),
  turned into plain text with gensim's own tools (``extract_pages`` + ``filter_wiki``) plus a
  light clean-up of what ``filter_wiki`` leaves (bold/italic quotes, headings, list bullets,
  the reference sections at the end); articles shorter than ``min_chars`` dropped;
  train/validation split by article from a hash of the title (deterministic).
- ``"lee_background"`` (offline, evaluation only): the news corpus ``lee_background.cor``
  shipped beside it, one article per line: our out-of-domain evaluation (it plays the role
  of the paper's second domain).
- ``"c4"``: C4 English (``allenai/c4``, ``en``), streaming, train/validation (the paper's).
- ``"wikitext103"``: WikiText-103 (``Salesforce/wikitext``, ``wikitext-103-raw-v1``) for the
  Wikipedia evaluation (the paper reports Wikipedia perplexity 729).
- a local ``.txt`` / ``.jsonl`` / ``.json`` / ``.parquet`` file (``"path/to/file.jsonl"``;
  a ``.txt``'s documents are separated by blank lines, the others' are the ``text`` field), read
  by :mod:`paper_lib.data.local_files`, which names the file and the row of anything malformed.

Hub sources and the gensim samples are read as streams of documents through HF
``datasets`` (``load_dataset(..., streaming=True)``); the gensim Wikipedia sample is first
extracted once into a JSONL cache under ``data/``. Offline (``HF_HUB_OFFLINE``, or the hub not
answering one 1.5 s check), the hub sources fail at once with one line that names the
offline default. Documents are plain text.
Our design throughout (the paper only names C4 and Wikipedia).
"""
from __future__ import annotations

import bz2
import functools
import hashlib
import json
import os
import re
import socket
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator
from urllib.parse import urlparse

from ..pipeline.atomic import write_text
from .local_files import LOCAL_FORMATS, local_docs, malformed_file

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
OFFLINE_DEFAULT = "wiki_sample"
WIKI_SAMPLE_FILE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
LEE_FILE = "lee_background.cor"
EXTRACT_VERSION = 1  # bump when the extraction changes: the cache key includes it

HUB_SOURCES = {
    # name: (path, config, {our split: hub split}, text field)
    "c4": ("allenai/c4", "en", {"train": "train", "validation": "validation"}, "text"),
    "wikitext103": ("Salesforce/wikitext", "wikitext-103-raw-v1",
                    {"train": "train", "validation": "validation", "test": "test"}, "text"),
}
HUB_PROBE_S = 1.5
"""Seconds the one network check of a process waits for the hub (so offline fails in < 2 s)."""


class CorpusNeedsNetworkError(RuntimeError):
    """A hub corpus or tokenizer was asked for without network access."""


@dataclass
class Corpus:
    """Documents of one source, split by document.

    Attributes:
        name: the source's name (part of every cache key).
        train, validation: lists of plain-text documents (one article each).
    """

    name: str
    train: list[str]
    validation: list[str]

    def fingerprint(self) -> str:
        """12 hex digits of a SHA-256 over the name and the training documents, each with its length
        in front (two corpora share a fingerprint only when both are the same): the key of derived caches."""
        h = hashlib.sha256(b"corpus-v2")
        for part in (self.name, *self.train):
            raw = part.encode("utf-8")
            h.update(len(raw).to_bytes(8, "little"))
            h.update(raw)
        return h.hexdigest()[:12]


# --------------------------------------------------------------------------- extraction

_SKIP_SECTIONS = re.compile(r"^(see also|references|external links|further reading|notes|bibliography|"
                            r"sources|footnotes|citations|notes and references)$", re.I)
_HEADING = re.compile(r"^\s*(=+)\s*(.*?)\s*\1\s*$")


def clean_wiki_text(wikitext: str) -> str:
    """Plain text of one article's wiki markup: ``gensim.corpora.wikicorpus.filter_wiki``
    (links, templates, tables, refs, tags) plus our clean-up of what it leaves: quotes for
    bold/italic, headings (kept as their plain title on a line), list bullets, the sections
    after "See also"/"References"/"External links", empty brackets and runs of spaces.
    Sentence casing and punctuation are kept. ``#REDIRECT`` pages give ``""``.
    """
    from gensim.corpora.wikicorpus import filter_wiki

    text = filter_wiki(wikitext)
    if text.lstrip().upper().startswith("#REDIRECT"):
        return ""
    text = re.sub(r"'{2,}", "", text)
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        m = _HEADING.match(line)
        if m:
            title = m.group(2).strip()
            if _SKIP_SECTIONS.match(title):
                break
            line = title
        else:
            line = re.sub(r"^[*#:;|!]+\s*", "", line)                  # list and table remnants
        line = re.sub(r"[{}\[\]|=<>]", "", line)                         # stray markup characters
        line = re.sub(r"\(\s*[,;]?\s*\)", "", line)                       # brackets emptied by filter_wiki
        line = re.sub(r"\s+([,.;:)])", r"\1", line)
        line = re.sub(r"\s{2,}", " ", line).strip()
        if len(line.split()) >= 3 or (m and line):
            out.append(line)
    # drop headings left with no paragraph under them (e.g. at the end)
    while out and len(out[-1].split()) < 3:
        out.pop()
    return "\n".join(out)


def _split_of(title: str, val_percent: float) -> str:
    """Deterministic split by article: ``validation`` iff SHA-1(title) mod 10000 < 100 * percent."""
    bucket = int(hashlib.sha1(title.encode("utf-8")).hexdigest(), 16) % 10000
    return "validation" if bucket < val_percent * 100 else "train"


def extract_wiki_sample(min_chars: int = 2000, val_percent: float = 10.0, data_dir: Path | None = None,
                        force: bool = False) -> Path:
    """Extract the gensim Wikipedia sample to ``data/corpus/wiki_sample-<key>.jsonl`` (cached).

    Each line is ``{"title", "split", "text"}``; articles whose plain text is shorter than
    ``min_chars`` characters are dropped. The key covers the settings and
    :data:`EXTRACT_VERSION`, so changed settings never reuse a stale file; the file is
    written atomically, and a damaged one (0 bytes, or cut short by an interrupted copy:
    :func:`damaged_jsonl`) is extracted again with a one-line warning naming it.

    Raises:
        ValueError: ``min_chars`` < 0 or ``val_percent`` outside (0, 100).
    """
    from gensim.corpora.wikicorpus import extract_pages
    from gensim.test.utils import datapath

    if min_chars < 0:
        raise ValueError(f"min_chars must be >= 0, got {min_chars}")
    if not 0 < val_percent < 100:
        raise ValueError(f"val_percent must lie in (0, 100), got {val_percent}")
    data_dir = Path(data_dir) if data_dir is not None else DATA_DIR
    key = f"v{EXTRACT_VERSION}-min{min_chars}-val{val_percent:g}"
    path = data_dir / "corpus" / f"wiki_sample-{key}.jsonl"
    if path.exists() and not force:
        why = damaged_jsonl(path)
        if why is None:
            return path
        print(f"warning: damaged cache {path} ({why}); extracting it again", file=sys.stderr, flush=True)
    lines = []
    with bz2.BZ2File(datapath(WIKI_SAMPLE_FILE)) as f:
        for title, wikitext, _pageid in extract_pages(f, filter_namespaces=("0",)):
            text = clean_wiki_text(wikitext)
            if len(text) >= min_chars:
                lines.append(json.dumps({"title": title, "split": _split_of(title, val_percent),
                                         "text": text}, ensure_ascii=False))
    write_text(path, "\n".join(lines) + "\n")
    return path


def damaged_jsonl(path: Path) -> str | None:
    """Why the JSONL cache ``path`` is damaged (0 bytes; not ending in a newline, or a last row
    that is not a JSON object with a ``text``: cut short), or None when it is whole."""
    size = path.stat().st_size
    if size == 0:
        return "0 bytes"
    start = max(0, size - (1 << 22))
    with open(path, "rb") as f:
        f.seek(start)
        tail = f.read()
    lines = tail.rstrip(b"\n").rsplit(b"\n", 1)
    if len(lines) == 1 and start > 0:  # a last row longer than the tail read: judged by its newline alone
        return None if tail.endswith(b"\n") else f"{size} bytes, cut short"
    try:
        row = json.loads(lines[-1].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        row = None
    if not tail.endswith(b"\n") or not (isinstance(row, dict) and isinstance(row.get("text"), str)):
        return f"{size} bytes, cut short"
    return None


# --------------------------------------------------------------------------- streaming

def hub_offline() -> bool:
    """True when the hub cannot be used: the environment forbids it (``HF_HUB_OFFLINE`` /
    ``HF_DATASETS_OFFLINE``), or it did not answer the process's one quick check
    (:func:`hub_reachable`)."""
    forbidden = any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
                    for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"))
    return forbidden or not hub_reachable()


@functools.lru_cache(maxsize=1)
def hub_reachable(timeout_s: float = HUB_PROBE_S) -> bool:
    """Whether a TCP connection to the hub (``HF_ENDPOINT``, or the HTTPS proxy when one is set)
    opens within ``timeout_s`` seconds; checked once per process, in a thread, so that a
    hanging name lookup cannot stall the caller (our design: ``datasets`` retries for ~30 s)."""
    proxy = next((os.environ[v] for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
                  if os.environ.get(v)), None)
    url = urlparse(proxy or os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    host, port = url.hostname, url.port or (80 if url.scheme == "http" else 443)
    answer: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout_s).close()
            answer.append(True)
        except (OSError, ValueError):
            answer.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout_s)
    return bool(answer and answer[0])


def needs_network_error(what: str, advice: str | None = None) -> CorpusNeedsNetworkError:
    """The one-line error for a hub resource used offline."""
    advice = advice or f"use the offline default corpus {OFFLINE_DEFAULT!r} (--corpus {OFFLINE_DEFAULT})"
    return CorpusNeedsNetworkError(f"{what} needs the network (Hugging Face hub), which is not reachable; {advice}")


def _stream(path: str, config: str | None, split: str, field: str, hub: bool,
            where: tuple[str, str] | None = None, **kwargs) -> Iterator[str]:
    """Documents (``row[field]``) of one split through ``datasets.load_dataset(..., streaming=True)``;
    ``where=(key, value)`` keeps only rows with ``row[key] == value``."""
    if hub and hub_offline():
        raise needs_network_error(f"corpus {path!r}")
    import datasets

    try:
        ds = datasets.load_dataset(path, config, split=split, streaming=True, **kwargs)
        for row in ds:
            text = row[field]
            if text and text.strip() and (where is None or row[where[0]] == where[1]):
                yield text
    except CorpusNeedsNetworkError:
        raise
    except Exception as err:  # connection errors come in many types across versions
        if hub and any(w in f"{type(err).__name__} {err}".lower()
                       for w in ("connect", "offline", "network", "resolve", "timeout", "http")):
            raise needs_network_error(f"corpus {path!r}") from None
        raise


def stream_docs(name: str, split: str = "train", min_chars: int = 2000, val_percent: float = 10.0,
                data_dir: Path | None = None) -> Iterator[str]:
    """Plain-text documents of ``name``'s ``split`` (``train`` / ``validation`` / ``test``).

    Raises:
        ValueError: unknown source or split. CorpusNeedsNetworkError: a hub source offline.
    """
    if name == "wiki_sample":
        if split not in ("train", "validation"):
            raise ValueError(f"wiki_sample has splits train and validation, got {split!r}")
        path = extract_wiki_sample(min_chars, val_percent, data_dir)
        return _stream("json", None, "train", "text", hub=False, where=("split", split), data_files=str(path))
    if name == "lee_background":
        from gensim.test.utils import datapath
        return _stream("text", None, "train", "text", hub=False, data_files=datapath(LEE_FILE))
    if name in HUB_SOURCES:
        path, config, splits, field = HUB_SOURCES[name]
        if split not in splits:
            raise ValueError(f"{name} has splits {', '.join(splits)}, got {split!r}")
        if name == "wikitext103":
            return _wikitext_articles(_stream(path, config, splits[split], field, hub=True))
        return _stream(path, config, splits[split], field, hub=True)
    if Path(name).suffix.lower() in LOCAL_FORMATS:
        if not Path(name).is_file():
            raise ValueError(f"no such corpus file: {name}")
        return local_docs(name)
    raise ValueError(f"unknown corpus {name!r}; allowed: wiki_sample, lee_background, c4, wikitext103, "
                     f"or a local {'/'.join(LOCAL_FORMATS)} file")


def _wikitext_articles(lines: Iterator[str]) -> Iterator[str]:
    """Join WikiText's lines into articles (an article starts at a `` = Title = `` line)."""
    buf: list[str] = []
    for line in lines:
        if re.match(r"^ = [^=].* = $", line.rstrip("\n")) and buf:
            yield "".join(buf).strip()
            buf = []
        buf.append(line)
    if buf:
        yield "".join(buf).strip()


def take_chars(docs: Iterator[str], max_chars: int | None) -> list[str]:
    """The first documents of ``docs`` up to ``max_chars`` characters in total (all if None)."""
    out, total = [], 0
    for doc in docs:
        if max_chars is not None and total >= max_chars:
            break
        out.append(doc)
        total += len(doc)
    return out


def load_corpus(name: str = OFFLINE_DEFAULT, max_train_chars: int | None = None,
                max_val_chars: int | None = None, min_chars: int = 2000,
                val_percent: float = 10.0, data_dir: Path | None = None) -> Corpus:
    """Training and validation documents of ``name`` (see the module docstring for names).

    For a local file the validation split is every ``round(100 / val_percent)``-th document.
    ``max_*_chars`` cap how much of a (streaming, possibly huge) source is read.

    Raises:
        ValueError: unknown source, or a local file that is malformed or holds fewer than 2
        documents (one line naming the file, the row and what is allowed).
        CorpusNeedsNetworkError: a hub source offline (one line naming ``wiki_sample``).
    """
    if name in HUB_SOURCES or name == "wiki_sample":
        kw = dict(min_chars=min_chars, val_percent=val_percent, data_dir=data_dir)
        train = take_chars(stream_docs(name, "train", **kw), max_train_chars)
        val = take_chars(stream_docs(name, "validation", **kw), max_val_chars)
        return Corpus(name, train, val)
    docs = list(stream_docs(name, "train", min_chars=min_chars, data_dir=data_dir))
    if len(docs) < 2:
        raise malformed_file(name, f"{len(docs)} document{'s' * (len(docs) != 1)}, and at least 2 are needed "
                              "(the first goes to validation)")
    every = max(2, round(100 / val_percent))
    train = take_chars((d for i, d in enumerate(docs) if i % every), max_train_chars)
    val = take_chars((d for i, d in enumerate(docs) if i % every == 0), max_val_chars)
    return Corpus(Path(name).name if Path(name).suffix else name, train, val)


def load_eval_docs(name: str, max_chars: int | None = None, **kwargs) -> list[str]:
    """Evaluation-only documents: ``lee_background`` (offline news), ``wikitext103``
    (validation split), ``c4`` (validation split), ``wiki_sample`` (validation) or a file.

    Raises:
        ValueError: unknown source. CorpusNeedsNetworkError: a hub source offline.
    """
    split = "train" if name == "lee_background" or Path(name).suffix else "validation"
    docs = take_chars(stream_docs(name, split, **kwargs), max_chars)
    if not docs and Path(name).suffix.lower() in LOCAL_FORMATS:
        raise malformed_file(name, "no document")
    return docs
