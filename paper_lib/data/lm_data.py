"""Token streams for the language models: corpus -> tokenizer -> train / dev / held-out / out-of-domain ids.

Our design (the paper names C4 and a Wikipedia evaluation, nothing more): the corpus and the
tokenizer are chosen by name (:mod:`paper_lib.data.corpus`, :mod:`paper_lib.data.tokenizer`),
encoded streams are cached under ``data/``.

Three evaluation texts, never mixed up:

- ``dev``: every ``dev_every``-th training article, removed from the training stream (and
  from the tokenizer's training text). Choices (the learning rate) are made on it.
- ``val``: the corpus's held-out articles, the reported in-domain number. Nothing is chosen on it.
- ``ood``: out-of-domain text, reported.
"""
from __future__ import annotations

from pathlib import Path

from .corpus import Corpus, load_corpus, load_eval_docs
from .tokenizer import encode_docs, get_tokenizer


def split_dev(corpus: Corpus, dev_every: int) -> tuple[Corpus, list[str]]:
    """``corpus`` without every ``dev_every``-th training article (counting from the first), and those articles.

    Raises:
        ValueError: ``dev_every`` < 2, or a training split too small to give a dev article.
    """
    if int(dev_every) < 2:
        raise ValueError(f"dev_every must be >= 2 (one training article in dev_every goes to dev), got {dev_every}")
    dev = corpus.train[::dev_every]
    train = [d for i, d in enumerate(corpus.train) if i % dev_every]
    if not dev or not train:
        raise ValueError(f"{len(corpus.train)} training articles cannot give both a training and a dev split "
                         f"(dev_every={dev_every})")
    return Corpus(corpus.name, train, corpus.validation), dev


def prepare_data(settings, data_dir: Path | None = None) -> dict:
    """Corpus, tokenizer and token streams for language-model settings (any object with the
    fields ``corpus, val_corpus, ood_corpus, min_chars, max_train_chars, max_val_chars,
    tokenizer, vocab_size`` and optionally ``dev_every`` (default 20), e.g.
    :class:`paper_lib.experiments.spen_train.Settings`).

    Returns ``{"corpus", "tokenizer", "train", "dev", "val", "ood"}`` (token streams as numpy
    arrays; ``corpus.train`` excludes the dev articles). See the module docstring for the splits.

    Raises:
        CorpusNeedsNetworkError: a hub corpus or the GPT-2 tokenizer offline.
        ValueError: ``dev_every`` < 2.
    """
    full = load_corpus(settings.corpus, max_train_chars=settings.max_train_chars,
                       max_val_chars=settings.max_val_chars, min_chars=settings.min_chars,
                       data_dir=data_dir)
    corpus, dev_docs = split_dev(full, getattr(settings, "dev_every", 20))
    tok = get_tokenizer(settings.tokenizer, corpus, settings.vocab_size, data_dir)
    name = corpus.name
    train_ids = encode_docs(tok, corpus.train, f"{name}-train", data_dir)
    dev_ids = encode_docs(tok, dev_docs, f"{name}-dev", data_dir)
    val_docs = (load_eval_docs(settings.val_corpus, settings.max_val_chars)
                if settings.val_corpus else corpus.validation)
    val_ids = encode_docs(tok, val_docs, f"{name}-val", data_dir)
    ood_ids = encode_docs(tok, load_eval_docs(settings.ood_corpus, settings.max_val_chars),
                          f"{name}-ood-{Path(settings.ood_corpus).name}", data_dir)
    return {"corpus": corpus, "tokenizer": tok, "train": train_ids, "dev": dev_ids, "val": val_ids, "ood": ood_ids}
