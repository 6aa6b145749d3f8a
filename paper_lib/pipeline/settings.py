"""Typed settings: a notebook's settings are a dataclass of defaults, changed only by named keys.

Each experiment's ``settings_for(profile, overrides)`` applies the profile's differences
(:data:`paper_lib.profile_settings.PROFILE_SETTINGS`), then a reader's ``overrides``, to its ``Settings``
(defaults: the ``cpu`` profile's). An unknown key is a one-line error naming the allowed ones; nested
dataclasses and mapping fields take dicts, merged key by key (``None`` removes a mapping's key). Every value is
checked against its field's annotation and range (:func:`check_value`, ranges declared with :func:`setting`;
config dataclasses check themselves with :func:`check_fields`). Our design: the paper is silent.
"""
from __future__ import annotations

import collections.abc
import copy
import dataclasses
import math
import types
import typing
from typing import Any, Mapping, TypeVar

from .profiles import SettingError, check_profile

T = TypeVar("T")

_BOUNDS = "paper_lib.bounds"  # the key of a field's range in its dataclass metadata


def setting(default: Any = dataclasses.MISSING, *, low: float | None = None, high: float | None = None,
            low_open: bool = False, high_open: bool = False, nonempty: bool = False,
            default_factory: Any = dataclasses.MISSING):
    """A dataclass field with a declared range: ``low <= value <= high`` (``<`` where open), for the field or
    every number of its lists; ``nonempty``: a list or mapping must hold a value. For ``int`` it replaces the
    default rule (a count, >= 1); ``None`` of an ``X | None`` field is never range-checked."""
    meta = {_BOUNDS: bounds(low=low, high=high, low_open=low_open, high_open=high_open, nonempty=nonempty)}
    given = {"default": default} if default_factory is dataclasses.MISSING else {"default_factory": default_factory}
    return dataclasses.field(**given, metadata=meta)


def bounds(*, low: float | None = None, high: float | None = None, low_open: bool = False,
           high_open: bool = False, nonempty: bool = False) -> tuple:
    """The range :func:`setting` declares, as :func:`check_value` takes it (a check outside a dataclass)."""
    return (low, high, low_open, high_open, nonempty)


def _range_text(bounds) -> str:
    low, high, low_open, high_open = bounds[:4]
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts)


def _in_range(value, bounds) -> bool:
    low, high, low_open, high_open = bounds[:4]
    if low is not None and (value <= low if low_open else value < low):
        return False
    return not (high is not None and (value >= high if high_open else value > high))


_KINDS = {int: "an integer", float: "a finite number", bool: "true or false", str: "a string"}


def _fits(kind, value) -> bool:
    if kind in (int, float) and isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, (int, float)) and math.isfinite(value)
    return isinstance(value, kind)


def check_value(name: str, annotation, value, where: str = "settings", bounds=None) -> None:
    """Raise if ``value`` does not fit the field ``name`` annotated ``annotation`` (a type, not a string).

    ``int`` in ``bounds`` (default >= 1), finite ``float`` in ``bounds``, ``bool``, ``str``, ``X | None``,
    ``tuple[X, ...]`` / ``tuple[X, Y]`` (a list), ``dict[str, X]``; other annotations are not checked.
    Raises ValueError: one line, ``<where>.<name>=<value>: must be ...`` (``<name>=...`` with no ``where``)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if value is None or len(rest) != 1:
            return
        annotation = rest[0]
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation in _KINDS:
        rng = bounds if bounds is not None else (1, None, False, False, False) if annotation is int else None
        if not _fits(annotation, value) or (rng is not None and annotation in (int, float) and not _in_range(value, rng)):
            need = _KINDS[annotation] + (f" {_range_text(rng)}" if rng is not None and annotation in (int, float) else "")
            raise SettingError(f"{_named(where, name)}={value!r}: must be {need}")
    elif origin is tuple:
        _check_list(name, args, value, where, bounds)
    elif origin is dict:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise SettingError(f"{_named(where, name)}={value!r}: must be a dict of name -> value")
        if bounds is not None and bounds[4] and not value:
            raise SettingError(f"{_named(where, name)}={dict(value)!r}: must name at least one")
        for key, v in value.items():
            check_value(f"{name}.{key}", args[1], v, where, bounds)


def _named(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _check_list(name: str, args, value, where: str, bounds) -> None:
    """:func:`check_value` for a ``tuple[X, ...]`` or ``tuple[X, Y]`` field."""
    kinds = [a for a in args if a is not Ellipsis]
    if not isinstance(value, (list, tuple)):
        raise SettingError(f"{_named(where, name)}={value!r}: must be a list")
    if Ellipsis not in args and len(value) != len(args):
        raise SettingError(f"{_named(where, name)}={value!r}: must be a list of {len(args)} values")
    if bounds is not None and bounds[4] and not value:
        raise SettingError(f"{_named(where, name)}={value!r}: must be a non-empty list")
    for i, v in enumerate(value):
        kind = kinds[0] if Ellipsis in args else kinds[i]
        if kind in _KINDS and not _fits(kind, v):
            plural = {int: "integers", float: "numbers", bool: "true/false values", str: "strings"}[kind]
            raise SettingError(f"{_named(where, name)}={list(value)!r}: must be a list of {plural}")
        if bounds is not None and kind in (int, float) and not _in_range(v, bounds):
            raise SettingError(f"{_named(where, name)}={list(value)!r}: every value must be {_range_text(bounds)}")


def check_fields(obj, where: str | None = None) -> None:
    """Check every field of the dataclass ``obj`` (:func:`check_value`); called from ``__post_init__``.
    Raises ValueError: one line, ``<where>.<name>=<value>: must be ...`` (``where``: the class name)."""
    where = where or type(obj).__name__
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        check_value(f.name, hints.get(f.name), getattr(obj, f.name), where, f.metadata.get(_BOUNDS))


def apply_overrides(obj: T, overrides: Mapping[str, Any] | None, where: str = "settings") -> T:
    """A copy of the dataclass ``obj`` with ``overrides`` applied (dicts merged into nested dataclasses and
    mappings; lists become tuples where the default is a tuple). Raises ValueError: an unknown key (naming the
    allowed ones), a dict for a field that is not a group, ``overrides`` not a dict, or a value that does not fit."""
    if not overrides:
        return obj
    if not isinstance(overrides, Mapping):
        raise SettingError(f"{where}: overrides must be a dict of setting -> value, got {type(overrides).__name__}")
    bounds = {f.name: f.metadata.get(_BOUNDS) for f in dataclasses.fields(obj)}
    names, hints = list(bounds), typing.get_type_hints(type(obj))
    if unknown := sorted(set(overrides) - set(names)):
        nested = [f"{where}.{n}.{k}" for k in unknown for n in names if dataclasses.is_dataclass(getattr(obj, n))
                  and k in {f.name for f in dataclasses.fields(getattr(obj, n))}]
        raise SettingError(f"unknown setting(s) {', '.join(f'{where}.{k}' for k in unknown)}; "
                           f"allowed: {', '.join(names)}" + (f" (did you mean {', '.join(nested)}?)" if nested else ""))
    changes = {}
    for key, value in overrides.items():
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current) and not isinstance(current, type):
            if not isinstance(value, Mapping):
                raise SettingError(f"{where}.{key} takes a dict of its fields, got {value!r}")
            value = apply_overrides(current, value, f"{where}.{key}")
        elif isinstance(value, Mapping) and not isinstance(current, Mapping):
            raise SettingError(f"{where}.{key} is not a group of settings; got a dict {dict(value)!r}")
        elif isinstance(value, Mapping):                      # a mapping field: merged key by key
            value = {k: v for k, v in {**current, **value}.items() if v is not None}
            check_value(key, hints.get(key), value, where, bounds.get(key))
            value = {k: tuple(v) if isinstance(v, list) else v for k, v in value.items()}
        else:
            check_value(key, hints.get(key), value, where, bounds.get(key))
            if isinstance(current, tuple) and isinstance(value, list):
                value = tuple(value)
        changes[key] = value
    return dataclasses.replace(obj, **changes)


def configure(default: T, section: str, profile: str, overrides: Mapping[str, Any] | None = None,
              profiles: Mapping[str, Mapping[str, Any]] | None = None) -> T:
    """``default`` with ``profiles[profile][section]`` (:data:`paper_lib.profile_settings.PROFILE_SETTINGS`),
    then ``overrides``, applied. Raises ValueError: unknown profile, or an unknown key in either."""
    changes = copy.deepcopy(dict((profiles or {}).get(check_profile(profile), {})).get(section))
    return _prefixed(_prefixed(default, changes, f"{section}[{profile}]"), overrides, section)


def _prefixed(obj, overrides, where):
    """:func:`apply_overrides`, a config's own check (``SPENConfig.d_model=0: ...``) re-worded to name the
    setting (``spen_train.spen.d_model=0: ...``)."""
    try:
        return apply_overrides(obj, overrides, where)
    except ValueError as err:
        message = str(err)
        for f in dataclasses.fields(obj):
            prefix = type(getattr(obj, f.name)).__name__ + "."
            if dataclasses.is_dataclass(getattr(obj, f.name)) and message.startswith(prefix):
                message = f"{where}.{f.name}." + message[len(prefix):]
                break
        raise SettingError(message) from None


def as_dict(obj) -> dict[str, Any]:
    """The settings as a plain (JSON-able) dict, for provenance."""
    return dataclasses.asdict(obj)


def settings_table(obj) -> Any:
    """The settings as a ``pandas.DataFrame`` for a notebook page: one row per section (the top-level scalars,
    then each nested config), its fields as ``name=value`` in one cell. Raises TypeError: not a dataclass."""
    import pandas as pd

    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise TypeError(f"settings_table needs a dataclass instance, got {type(obj).__name__}")
    top, rows = [], []
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            inner = ", ".join(f"{g.name}={getattr(value, g.name)!r}" for g in dataclasses.fields(value))
            rows.append((f"{f.name} ({type(value).__name__})", inner))
        else:
            top.append(f"{f.name}={value!r}")
    return pd.DataFrame([("run", ", ".join(top))] + rows, columns=["section", "settings"]).set_index("section")


def check_seed_list(seeds: Any, where: str = "seeds") -> list[int]:
    """``seeds`` as a list of distinct integers. Raises ValueError: not a non-empty list of integers, or repeats."""
    listed = not isinstance(seeds, (str, bytes, Mapping)) and isinstance(seeds, collections.abc.Iterable)
    seeds = list(seeds) if listed else seeds
    if not listed or not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise SettingError(f"{where} must be a non-empty list of integers, e.g. [0, 1], got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise SettingError(f"{where} must be distinct, got {seeds}")
    return seeds


def check_seeds(settings: T) -> T:
    """``settings`` with ``seeds`` a tuple, checked by :func:`check_seed_list` (ValueError)."""
    return dataclasses.replace(settings, seeds=tuple(check_seed_list(settings.seeds)))
