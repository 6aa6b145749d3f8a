"""One file holding a language-model run's prepared data: the token streams and the tokenizer.

:func:`save_token_file` writes what :func:`paper_lib.data.lm_data.prepare_data` returns (the
``train``, ``dev``, ``val`` and ``ood`` token streams, the tokenizer as its JSON, the number of
articles of each split and the data settings that made them) into one ``.npz``;
:func:`load_token_file` gives the same dictionary back. A machine without the corpus's own
loaders (gensim, HF ``datasets``) or without network, such as a GPU lent for minutes, then trains
on exactly the tokens the CPU machine prepared: ``prepare_data`` reads the file named by
``PAPER_LIB_TOKEN_FILE`` instead of the corpus (:data:`TOKEN_FILE_ENV`). The documents themselves
are not in the file, only their count: ``corpus.train`` and ``corpus.validation`` hold that many
empty strings. Our design: the paper is silent.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from ..pipeline.atomic import atomic_path
from .corpus import Corpus

TOKEN_FILE_ENV = "PAPER_LIB_TOKEN_FILE"
"""The environment variable naming a token file that :func:`~paper_lib.data.lm_data.prepare_data` reads."""
SPLITS = ("train", "dev", "val", "ood")
FORMAT = 1
MAX_BYTES = 60 * 2**20
"""The largest token file written (60 MiB): it travels with the working tree to a lent GPU."""


def settings_record(settings: Any) -> dict:
    """The data settings as a JSON-able dict (a dataclass's fields, else its attributes)."""
    record = dataclasses.asdict(settings) if dataclasses.is_dataclass(settings) else dict(vars(settings))
    return json.loads(json.dumps(record, default=str))


def save_token_file(data: dict, settings: Any, path: str | Path) -> Path:
    """Write ``data`` (:func:`~paper_lib.data.lm_data.prepare_data`'s dict, made with ``settings``)
    to ``path`` (``.npz``), atomically. Token ids are stored as uint16 when the vocabulary fits
    (vocab_size <= 65535, as :func:`~paper_lib.data.tokenizer.encode_docs` does), else int32.

    Raises:
        ValueError: the file would exceed :data:`MAX_BYTES` (nothing is left behind).
    """
    vocab_size = data["tokenizer"].get_vocab_size()
    dtype = np.uint16 if vocab_size <= 65535 else np.int32
    meta = {"format": FORMAT, "settings": settings_record(settings), "corpus": data["corpus"].name,
            "n_train_docs": len(data["corpus"].train), "n_val_docs": len(data["corpus"].validation),
            "sources": data["sources"], "vocab_size": vocab_size}
    arrays = {s: np.asarray(data[s]).astype(dtype) for s in SPLITS}
    path = Path(path)
    with atomic_path(path) as tmp:
        np.savez_compressed(tmp, meta=np.array(json.dumps(meta)), tokenizer=np.array(data["tokenizer"].to_str()),
                            **arrays)
        if (size := tmp.stat().st_size) > MAX_BYTES:
            raise ValueError(f"token file {path} would be {size / 2**20:.1f} MiB, over the {MAX_BYTES // 2**20} MiB "
                             "that travel to a lent GPU; lower data.max_train_chars")
    return path


def load_token_file(path: str | Path, settings: Any | None = None) -> dict:
    """The dictionary :func:`save_token_file` wrote: ``{"corpus", "tokenizer", "train", "dev",
    "val", "ood", "sources"}``, token streams as the arrays ``prepare_data`` gives (shape ``(n_tokens,)``, uint16 or int32).

    Args:
        settings: the run's data settings; when given they must equal the ones the file was made with.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: a file of another format, or made with other data settings (the first setting
            that differs is named).
    """
    from tokenizers import Tokenizer

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no token file at {path} ({TOKEN_FILE_ENV}); make one with "
                                "`python benchmarks/device_study.py prepare`")
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        if meta.get("format") != FORMAT:
            raise ValueError(f"{path}: token file format {meta.get('format')!r}, this library reads {FORMAT}")
        if settings is not None and (want := settings_record(settings)) != meta["settings"]:
            key = next(k for k in sorted(set(want) | set(meta["settings"])) if want.get(k) != meta["settings"].get(k))
            raise ValueError(f"{path} was made with data.{key} = {meta['settings'].get(key)!r}, this run has "
                             f"{want.get(key)!r}; prepare the token file again for these settings")
        tok = Tokenizer.from_str(str(z["tokenizer"]))
        streams = {s: z[s] for s in SPLITS}
    corpus = Corpus(meta["corpus"], [""] * meta["n_train_docs"], [""] * meta["n_val_docs"])
    return {"corpus": corpus, "tokenizer": tok, **streams, "sources": meta["sources"]}
