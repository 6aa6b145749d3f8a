"""Language models by name or by config: :func:`build` makes the model of a config
(``SPENConfig``, ``TransformerConfig``, ``GRUCausalConfig``); :func:`build_model` makes
``"spen"``, ``"transformer"`` or ``"gru"`` from keyword sizes (notebook 05, tests, benchmarks).

The language-model recipe of notebooks 03 and 04 (:mod:`paper_lib.lm_recipe`) holds typed
configs and calls :func:`build`. Our design: the paper is silent.
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


def build(config, seed: int = 0) -> CausalLM:
    """A freshly initialised model of ``config`` (``torch.manual_seed(seed)`` first, so the same
    config and seed give the same weights).

    Raises:
        ValueError: ``config`` is not one of the configs of :data:`LM_KINDS`.
    """
    for cls, cfg_cls in LM_KINDS.values():
        if type(config) is cfg_cls:
            torch.manual_seed(seed)
            return cls(config)
    raise ValueError(f"no language model takes a {type(config).__name__}; allowed: "
                     + ", ".join(c.__name__ for _, c in LM_KINDS.values()))


def build_model(kind: str, seed: int = 0, **sizes) -> CausalLM:
    """A freshly initialised ``"spen"``, ``"transformer"`` or ``"gru"`` (seeded with ``seed``).

    ``sizes`` are config fields (``vocab_size``, ``n_layer``, ``d_model``, ...); a field only
    another model has is ignored, so one dict of sizes builds every model of notebook 05.

    Raises:
        ValueError: unknown ``kind``, or a size field that no model has.
    """
    if kind not in LM_KINDS:
        raise ValueError(f"unknown model {kind!r}; allowed: {', '.join(LM_KINDS)}")
    known = {f.name for _, c in LM_KINDS.values() for f in fields(c)}
    unknown = sorted(set(sizes) - known)
    if unknown:
        raise ValueError(f"unknown model size field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(known))}")
    cls, cfg_cls = LM_KINDS[kind]
    names = {f.name for f in fields(cfg_cls)}
    return build(cfg_cls(**{k: v for k, v in sizes.items() if k in names}), seed=seed)
