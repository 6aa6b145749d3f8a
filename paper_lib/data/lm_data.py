"""Token streams for the language models: corpus -> tokenizer -> train / validation / out-of-domain ids.

Our design (the paper names C4 and a Wikipedia evaluation, nothing more): the corpus and the
tokenizer are chosen by name (:mod:`paper_lib.data.corpus`, :mod:`paper_lib.data.tokenizer`),
encoded streams are cached under ``data/``.
"""
from __future__ import annotations

from pathlib import Path

from .corpus import load_corpus, load_eval_docs
from .tokenizer import encode_docs, get_tokenizer


def prepare_data(settings, data_dir: Path | None = None) -> dict:
    """Corpus, tokenizer and token streams for language-model settings (any object with the
    fields ``corpus, val_corpus, ood_corpus, min_chars, max_train_chars, max_val_chars,
    tokenizer, vocab_size``, e.g. :class:`paper_lib.experiments.spen_train.Settings`).

    Returns ``{"corpus", "tokenizer", "train", "val", "ood"}`` (token streams as numpy arrays).

    Raises:
        CorpusNeedsNetworkError: a hub corpus or the GPT-2 tokenizer offline.
    """
    corpus = load_corpus(settings.corpus, max_train_chars=settings.max_train_chars,
                         max_val_chars=settings.max_val_chars, min_chars=settings.min_chars,
                         data_dir=data_dir)
    tok = get_tokenizer(settings.tokenizer, corpus, settings.vocab_size, data_dir)
    name = corpus.name
    train_ids = encode_docs(tok, corpus.train, f"{name}-train", data_dir)
    val_docs = (load_eval_docs(settings.val_corpus, settings.max_val_chars)
                if settings.val_corpus else corpus.validation)
    val_ids = encode_docs(tok, val_docs, f"{name}-val", data_dir)
    ood_ids = encode_docs(tok, load_eval_docs(settings.ood_corpus, settings.max_val_chars),
                          f"{name}-ood-{Path(settings.ood_corpus).name}", data_dir)
    return {"corpus": corpus, "tokenizer": tok, "train": train_ids, "val": val_ids, "ood": ood_ids}
