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
- a local ``.txt`` / ``.jsonl`` / ``.parquet`` file (``"path/to/file.jsonl"``; documents
  are lines, or the ``text`` field).

One code path: every source is read as a stream of documents through HF ``datasets``
(``load_dataset(..., streaming=True)``); the gensim sample is first extracted once into a
JSONL cache under ``data/`` and then read like any local file. Offline, the hub sources
fail with one line that says so and names the offline default. Documents are plain text.
Our design throughout (the paper only names C4 and Wikipedia).
"""
from __future__ import annotations

import bz2
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..pipeline.atomic import write_text

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
LOCAL_BUILDERS = {".txt": "text", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}


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
        """12 hex digits of a SHA-256 over the training text: the key of derived caches."""
        h = hashlib.sha256(self.name.encode())
        for doc in self.train:
            h.update(doc.encode("utf-8"))
            h.update(b"\0")
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
    written atomically.

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
        return path
    lines = []
    with bz2.BZ2File(datapath(WIKI_SAMPLE_FILE)) as f:
        for title, wikitext, _pageid in extract_pages(f, filter_namespaces=("0",)):
            text = clean_wiki_text(wikitext)
            if len(text) >= min_chars:
                lines.append(json.dumps({"title": title, "split": _split_of(title, val_percent),
                                         "text": text}, ensure_ascii=False))
    write_text(path, "\n".join(lines) + "\n")
    return path


# --------------------------------------------------------------------------- streaming

def hub_offline() -> bool:
    """True when the environment forbids the hub (``HF_HUB_OFFLINE`` / ``HF_DATASETS_OFFLINE``)."""
    return any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on")
               for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"))


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
    suffix = "".join(Path(name).suffixes[-1:]).lower()
    if suffix in LOCAL_BUILDERS:
        if not Path(name).is_file():
            raise ValueError(f"no such corpus file: {name}")
        field = "text"
        return _stream(LOCAL_BUILDERS[suffix], None, "train", field, hub=False, data_files=str(name))
    raise ValueError(f"unknown corpus {name!r}; allowed: wiki_sample, lee_background, c4, wikitext103, "
                     f"or a local {'/'.join(LOCAL_BUILDERS)} file")


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
        ValueError: unknown source, or no training document in a local file.
        CorpusNeedsNetworkError: a hub source offline.
    """
    if name in HUB_SOURCES or name == "wiki_sample":
        kw = dict(min_chars=min_chars, val_percent=val_percent, data_dir=data_dir)
        train = take_chars(stream_docs(name, "train", **kw), max_train_chars)
        val = take_chars(stream_docs(name, "validation", **kw), max_val_chars)
        return Corpus(name, train, val)
    docs = list(stream_docs(name, "train", min_chars=min_chars, data_dir=data_dir))
    every = max(2, round(100 / val_percent))
    train = take_chars((d for i, d in enumerate(docs) if i % every), max_train_chars)
    val = take_chars((d for i, d in enumerate(docs) if i % every == 0), max_val_chars)
    if not train:
        raise ValueError(f"corpus {name!r} has no training document "
                         "(local .txt files hold one document per non-empty line)")
    return Corpus(Path(name).name if Path(name).suffix else name, train, val)


def load_eval_docs(name: str, max_chars: int | None = None, **kwargs) -> list[str]:
    """Evaluation-only documents: ``lee_background`` (offline news), ``wikitext103``
    (validation split), ``c4`` (validation split), ``wiki_sample`` (validation) or a file.

    Raises:
        ValueError: unknown source. CorpusNeedsNetworkError: a hub source offline.
    """
    split = "train" if name == "lee_background" or Path(name).suffix else "validation"
    return take_chars(stream_docs(name, split, **kwargs), max_chars)
