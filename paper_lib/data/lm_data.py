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

import os
from pathlib import Path

from .corpus import Corpus, load_corpus, load_eval_docs
from .token_file import TOKEN_FILE_ENV, load_token_file
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

    Returns ``{"corpus", "tokenizer", "train", "dev", "val", "ood", "sources"}`` (token streams as
    numpy arrays; ``corpus.train`` excludes the dev articles; ``sources``: split -> the corpus name or
    file it comes from). See the module docstring for the splits; :func:`check_splits` checks their lengths.

    Raises:
        CorpusNeedsNetworkError: a hub corpus or the GPT-2 tokenizer offline.
        ValueError: ``dev_every`` < 2; a token file made with other settings.

    With ``PAPER_LIB_TOKEN_FILE`` set, the streams and the tokenizer come from that file
    (:func:`paper_lib.data.token_file.load_token_file`, checked against ``settings``), not from the corpus.
    """
    if token_file := os.environ.get(TOKEN_FILE_ENV):
        return load_token_file(token_file, settings)
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
    sources = {"train": settings.corpus, "dev": settings.corpus, "val": settings.val_corpus or settings.corpus,
               "ood": settings.ood_corpus}
    return {"corpus": corpus, "tokenizer": tok, "train": train_ids, "dev": dev_ids, "val": val_ids, "ood": ood_ids,
            "sources": sources}


_SPLITS = {  # split: (what it is, how to make it longer)
    "train": ("training", "give data.corpus more text (or raise data.max_train_chars)"),
    "dev": ("dev (every data.dev_every-th training document)", "lower data.dev_every or give data.corpus more documents"),
    "val": ("held-out validation", "give data.corpus more or longer documents (a local file holds out every 10th "
            "one) or set data.val_corpus (or raise data.max_val_chars)"),
    "ood": ("out-of-domain evaluation", "set data.ood_corpus to a longer text (or raise data.max_val_chars)"),
}


def check_splits(data: dict, seq_len: int, splits=("train", "val", "ood")) -> None:
    """Check, before any training, that each of ``splits`` of ``data`` (:func:`prepare_data`) holds
    at least one window: ``seq_len + 1`` tokens to evaluate, ``seq_len + 2`` to train on.

    Raises:
        ValueError: one line naming the split, the corpus (file) it comes from, its length in tokens,
            what is needed and the settings that make it longer.
    """
    for split in dict.fromkeys(splits):
        need = seq_len + (2 if split == "train" else 1)
        n = len(data[split])
        if n < need:
            what, advice = _SPLITS.get(split, (split, "give it more text"))
            source = data.get("sources", {}).get(split)
            raise ValueError(f"the {what} split ({split}{f', from {source}' if source else ''}) has {n} tokens, fewer "
                             f"than the {need} that one window of train.seq_len={seq_len} needs; {advice}, or lower "
                             "train.seq_len")
