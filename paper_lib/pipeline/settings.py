"""Typed settings: a notebook's settings are a dataclass of defaults, changed only by named keys.

Each experiment module defines ``Settings`` (a dataclass whose defaults are the ``cpu``
profile's values) and ``settings_for(profile, overrides)``, which applies, in order, the
profile's differences (:data:`paper_lib.pipeline.profiles.PROFILES`) and a reader's
``overrides`` (a dict from a notebook cell or ``-p overrides '{...}'``). A key that the
dataclass does not have is a one-line error naming the allowed keys, so a misspelt setting
can never silently fall back to its default. Nested dataclasses (``spcn``, ``bigru``) take
nested dicts. Every value set this way is checked against the field's annotation before
anything runs (:func:`check_value`): an integer where the field is ``int`` (a count, so >= 1,
unless its name is in :data:`ZERO_ALLOWED`), a finite number for ``float``, true/false for
``bool``, a string for ``str``, a list of those for a ``tuple``. Our design: the paper is silent.
"""
from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any, Mapping, TypeVar

T = TypeVar("T")

ZERO_ALLOWED = frozenset({"seed", "sweep_seed", "sweep_steps", "warmup_steps", "ckpt_every", "delay",
                          "min_chars", "max_depth"})
"""Integer settings for which 0 means something (no sweep, no warmup, no checkpoints, no delay,
depth 0, seed 0); they must be >= 0. Every other integer setting is a count and must be >= 1."""

_KINDS = {int: "an integer", float: "a finite number", bool: "true or false", str: "a string"}


def _fits(kind, value) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, kind)


def check_value(name: str, annotation, value, where: str = "settings") -> None:
    """Raise if ``value`` does not fit the field ``name`` annotated ``annotation`` (a type, not a string).

    ``int``: an integer >= 1 (>= 0 for :data:`ZERO_ALLOWED`); ``float``: a finite number;
    ``bool``; ``str``; ``X | None``: None or an ``X``; ``tuple[X, ...]`` / ``tuple[X, Y]``: a list
    or tuple of those (no range check on elements). Other annotations are not checked.

    Raises:
        ValueError: one line, ``<where>.<name>=<value>: must be ...``.
    """
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if value is None or len(rest) != 1:
            return
        annotation = rest[0]
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation in _KINDS:
        low = 0 if name in ZERO_ALLOWED else 1
        if not _fits(annotation, value) or (annotation is int and value < low):
            need = f"an integer >= {low}" if annotation is int else _KINDS[annotation]
            raise ValueError(f"{where}.{name}={value!r}: must be {need}")
    elif origin is tuple:
        kinds = [a for a in args if a is not Ellipsis]
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{where}.{name}={value!r}: must be a list")
        if Ellipsis not in args and len(value) != len(args):
            raise ValueError(f"{where}.{name}={value!r}: must be a list of {len(args)} values")
        for i, v in enumerate(value):
            kind = kinds[0] if Ellipsis in args else kinds[i]
            if kind in _KINDS and not _fits(kind, v):
                plural = {int: "integers", float: "numbers", bool: "true/false values", str: "strings"}[kind]
                raise ValueError(f"{where}.{name}={list(value)!r}: must be a list of {plural}")


def apply_overrides(obj: T, overrides: Mapping[str, Any] | None, where: str = "settings") -> T:
    """A copy of the dataclass ``obj`` with ``overrides`` applied (recursively for nested dataclasses).

    Lists become tuples where the default is a tuple; a dict given for a nested dataclass
    changes only the keys it names.

    Raises:
        ValueError: a key that ``obj`` has no field for (the message names the allowed ones),
            a dict given for a field that is not a dataclass, ``overrides`` not a dict, or a
            value that does not fit its field (:func:`check_value`).
    """
    if not overrides:
        return obj
    if not isinstance(overrides, Mapping):
        raise ValueError(f"{where}: overrides must be a dict of setting -> value, got {type(overrides).__name__}")
    names = [f.name for f in dataclasses.fields(obj)]
    hints = typing.get_type_hints(type(obj))
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(f'{where}.{k}' for k in unknown)}; "
                         f"allowed: {', '.join(names)}")
    changes = {}
    for key, value in overrides.items():
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current) and not isinstance(current, type):
            if not isinstance(value, Mapping):
                raise ValueError(f"{where}.{key} takes a dict of its fields, got {value!r}")
            value = apply_overrides(current, value, f"{where}.{key}")
        elif isinstance(value, Mapping) and not isinstance(current, Mapping):
            raise ValueError(f"{where}.{key} is not a group of settings; got a dict {dict(value)!r}")
        else:
            check_value(key, hints.get(key), value, where)
            if isinstance(current, tuple) and isinstance(value, list):
                value = tuple(value)
        changes[key] = value
    return dataclasses.replace(obj, **changes)


def configure(default: T, section: str, profile: str, overrides: Mapping[str, Any] | None = None) -> T:
    """``default`` with the profile's differences for ``section``, then ``overrides``, applied.

    Raises:
        ValueError: unknown profile, or an unknown key in the profile or the overrides.
    """
    from .profiles import profile_overrides

    obj = apply_overrides(default, profile_overrides(profile, section), f"{section}[{profile}]")
    return apply_overrides(obj, overrides, section)


def as_dict(obj) -> dict[str, Any]:
    """The settings as a plain (JSON-able) dict, for provenance."""
    return dataclasses.asdict(obj)


def check_seeds(settings: T) -> T:
    """``settings`` whose ``seeds`` is a non-empty tuple of distinct ints.

    Raises:
        ValueError: ``seeds`` empty, not a list of integers, or with repeats.
    """
    seeds = settings.seeds
    if isinstance(seeds, (int, str)) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of integers, e.g. [0, 1], got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct, got {list(seeds)}")
    return dataclasses.replace(settings, seeds=tuple(seeds))
