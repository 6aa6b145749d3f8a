"""Language models by name: :func:`build_model` makes ``"spen"``, ``"transformer"`` or ``"gru"`` from one dict
of sizes; :func:`sizes_for` reads those sizes from a settings object.

Fields that only the other model has (``n_head`` for SPEN) are ignored; a field neither has is
an error. Our design: the paper is silent.
"""
from __future__ import annotations

from dataclasses import fields

import torch

from .gru import GRUCausalConfig, GRUCausalLM
from .lm import CausalLM
from .spen import SPEN, SPENConfig
from .transformer import Transformer, TransformerConfig

LM_KINDS: dict[str, tuple[type[CausalLM], type]] = {"spen": (SPEN, SPENConfig),
                                                     "transformer": (Transformer, TransformerConfig),
                                                     "gru": (GRUCausalLM, GRUCausalConfig)}
"""Language models by name: (model class, config class)."""

LM_SIZE_KEYS: tuple[str, ...] = ("vocab_size", "n_layer", "d_model", "n_head", "d_bottleneck", "d_ff",
                                 "d_ff_transformer", "top_k_frac", "predictor", "block_size", "alphas", "d_state")
"""The size fields a settings object may carry for either language model."""


def build_model(kind: str, seed: int = 0, **sizes) -> CausalLM:
    """A freshly initialised ``"spen"``, ``"transformer"`` or ``"gru"`` (seeded with ``seed``).

    ``sizes`` are config fields (``vocab_size``, ``n_layer``, ``d_model``, ...); a field only
    the other model has is ignored.

    Raises:
        ValueError: unknown ``kind``, or a size field that neither model has.
    """
    if kind not in LM_KINDS:
        raise ValueError(f"unknown model {kind!r}; allowed: {', '.join(LM_KINDS)}")
    known = {f.name for _, c in LM_KINDS.values() for f in fields(c)}
    unknown = sorted(set(sizes) - known)
    if unknown:
        raise ValueError(f"unknown model size field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(known))}")
    cls, cfg_cls = LM_KINDS[kind]
    names = {f.name for f in fields(cfg_cls)}
    torch.manual_seed(seed)
    return cls(cfg_cls(**{k: v for k, v in sizes.items() if k in names}))


def sizes_for(kind: str, settings, vocab_size: int) -> dict:
    """The size fields of ``settings`` (a dataclass or a mapping) for ``kind``, with the
    tokenizer's ``vocab_size``; the Transformer takes ``d_ff_transformer`` as its ``d_ff``."""
    get = settings.get if isinstance(settings, dict) else (lambda k, d=None: getattr(settings, k, d))
    sizes = {k: get(k) for k in LM_SIZE_KEYS if get(k) is not None}
    sizes["vocab_size"] = vocab_size
    d_ff_t = sizes.pop("d_ff_transformer", None)
    if kind == "transformer" and d_ff_t is not None:
        sizes["d_ff"] = d_ff_t
    return sizes
