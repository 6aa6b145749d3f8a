"""Typed settings: a notebook's settings are a dataclass of defaults, changed only by named keys.

Each experiment module defines ``Settings`` (a dataclass whose defaults are the ``cpu``
profile's values) and ``settings_for(profile, overrides)``, which applies, in order, the
profile's differences (:data:`paper_lib.profile_settings.PROFILE_SETTINGS`) and a reader's
``overrides`` (a dict from a notebook cell or ``-p overrides '{...}'``). A key that the
dataclass does not have is a one-line error naming the allowed keys, so a misspelt setting
can never silently fall back to its default. Nested dataclasses (``spcn``, ``bigru``) take
nested dicts, and a mapping field (``dict[str, X]``, notebook 06's banks of rates) merges a dict
key by key the same way (``None`` for a key removes it). Every value set this way is checked
against the field's annotation before anything runs (:func:`check_value`): an integer where the
field is ``int`` (a count, so >= 1, unless the field declares another range), a finite number
for ``float``, true/false for ``bool``, a string for ``str``, a list of those for a ``tuple``,
a mapping of those for a ``dict``.

A field's range is declared once, on the field, with :func:`setting` (``warmup_steps: int =
setting(30, low=0)``, ``top_k_frac: float = setting(0.06, low=0, high=1, low_open=True)``), and a
config dataclass checks all its fields in ``__post_init__`` with :func:`check_fields`, so the
same rule holds whether a value comes from a profile, a reader's override or a direct call.
Our design: the paper is silent.
"""
from __future__ import annotations

import collections.abc
import copy
import dataclasses
import math
import types
import typing
from typing import Any, Mapping, TypeVar

T = TypeVar("T")

_BOUNDS = "paper_lib.bounds"  # the key of a field's range in its dataclass metadata


def setting(default: Any = dataclasses.MISSING, *, low: float | None = None, high: float | None = None,
            low_open: bool = False, high_open: bool = False, nonempty: bool = False,
            default_factory: Any = dataclasses.MISSING):
    """A dataclass field with a declared range: ``low <= value <= high`` (``<`` where open), for
    the field or every number of its lists; ``nonempty``: a list (and a mapping, and each of its
    lists) must hold at least one value.

    For ``int`` fields the range replaces the default rule (a count, >= 1); ``low=0`` is the
    declaration that 0 means something (no warmup, no checkpoints, seed 0). ``None`` values of
    an ``X | None`` field are never range-checked.
    """
    meta = {_BOUNDS: bounds(low=low, high=high, low_open=low_open, high_open=high_open, nonempty=nonempty)}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


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
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, kind)


def check_value(name: str, annotation, value, where: str = "settings", bounds=None) -> None:
    """Raise if ``value`` does not fit the field ``name`` annotated ``annotation`` (a type, not a string).

    ``int``: an integer in ``bounds`` (default: >= 1, a count); ``float``: a finite number in
    ``bounds`` (default: any); ``bool``; ``str``; ``X | None``: None or an ``X``; ``tuple[X, ...]``
    / ``tuple[X, Y]``: a list or tuple of those, each element in ``bounds`` where given;
    ``dict[str, X]``: a mapping whose every value is an ``X`` (named ``<name>.<key>``). Other
    annotations are not checked. ``bounds``: ``(low, high, low_open, high_open, nonempty)`` from
    :func:`setting`.

    Raises:
        ValueError: one line, ``<where>.<name>=<value>: must be ...`` (``<name>=...`` with no ``where``).
    """
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
            raise ValueError(f"{_named(where, name)}={value!r}: must be {need}")
    elif origin is tuple:
        _check_list(name, args, value, where, bounds)
    elif origin is dict:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise ValueError(f"{_named(where, name)}={value!r}: must be a dict of name -> value")
        if bounds is not None and bounds[4] and not value:
            raise ValueError(f"{_named(where, name)}={dict(value)!r}: must name at least one")
        for key, v in value.items():
            check_value(f"{name}.{key}", args[1], v, where, bounds)


def _named(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _check_list(name: str, args, value, where: str, bounds) -> None:
    """:func:`check_value` for a ``tuple[X, ...]`` or ``tuple[X, Y]`` field."""
    kinds = [a for a in args if a is not Ellipsis]
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{_named(where, name)}={value!r}: must be a list")
    if Ellipsis not in args and len(value) != len(args):
        raise ValueError(f"{_named(where, name)}={value!r}: must be a list of {len(args)} values")
    if bounds is not None and bounds[4] and not value:
        raise ValueError(f"{_named(where, name)}={value!r}: must be a non-empty list")
    for i, v in enumerate(value):
        kind = kinds[0] if Ellipsis in args else kinds[i]
        if kind in _KINDS and not _fits(kind, v):
            plural = {int: "integers", float: "numbers", bool: "true/false values", str: "strings"}[kind]
            raise ValueError(f"{_named(where, name)}={list(value)!r}: must be a list of {plural}")
        if bounds is not None and kind in (int, float) and not _in_range(v, bounds):
            raise ValueError(f"{_named(where, name)}={list(value)!r}: every value must be {_range_text(bounds)}")


def check_fields(obj, where: str | None = None) -> None:
    """Check every field of the dataclass instance ``obj`` against its annotation and declared
    range (:func:`check_value`); config dataclasses call it from ``__post_init__``.

    Raises:
        ValueError: one line, ``<where>.<name>=<value>: must be ...`` (``where``: the class name).
    """
    where = where or type(obj).__name__
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        check_value(f.name, hints.get(f.name), getattr(obj, f.name), where, f.metadata.get(_BOUNDS))


def apply_overrides(obj: T, overrides: Mapping[str, Any] | None, where: str = "settings") -> T:
    """A copy of the dataclass ``obj`` with ``overrides`` applied (recursively for nested dataclasses).

    Lists become tuples where the default is a tuple; a dict given for a nested dataclass, or for
    a mapping field, changes only the keys it names (``None`` removes a key of a mapping).

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
    bounds = {f.name: f.metadata.get(_BOUNDS) for f in dataclasses.fields(obj)}
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        nested = [f"{where}.{n}.{k}" for k in unknown for n in names if dataclasses.is_dataclass(getattr(obj, n))
                  and k in {f.name for f in dataclasses.fields(getattr(obj, n))}]
        raise ValueError(f"unknown setting(s) {', '.join(f'{where}.{k}' for k in unknown)}; "
                         f"allowed: {', '.join(names)}" + (f" (did you mean {', '.join(nested)}?)" if nested else ""))
    changes = {}
    for key, value in overrides.items():
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current) and not isinstance(current, type):
            if not isinstance(value, Mapping):
                raise ValueError(f"{where}.{key} takes a dict of its fields, got {value!r}")
            value = apply_overrides(current, value, f"{where}.{key}")
        elif isinstance(value, Mapping) and not isinstance(current, Mapping):
            raise ValueError(f"{where}.{key} is not a group of settings; got a dict {dict(value)!r}")
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
    """``default`` with what ``profile`` changes in ``section`` (``profiles[profile][section]``,
    :data:`paper_lib.profile_settings.PROFILE_SETTINGS`; none: the defaults), then ``overrides``, applied.

    Raises:
        ValueError: unknown profile, or an unknown key in the profile or the overrides.
    """
    from .profiles import check_profile

    changes = copy.deepcopy(dict((profiles or {}).get(check_profile(profile), {})).get(section))
    obj = _prefixed(apply_overrides, default, changes, f"{section}[{profile}]")
    return _prefixed(apply_overrides, obj, overrides, section)


def _prefixed(fn, obj, overrides, where):
    """``fn(obj, overrides, where)``, with a config's own check (``SPENConfig.d_model=0: ...``,
    raised from its ``__post_init__``) re-worded to name the setting (``spen_train.spen.d_model=0: ...``)."""
    try:
        return fn(obj, overrides, where)
    except ValueError as err:
        raise ValueError(_reword(str(err), obj, where)) from None


def _reword(message: str, obj, where: str) -> str:
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value) and message.startswith(type(value).__name__ + "."):
            return f"{where}.{f.name}." + message[len(type(value).__name__) + 1:]
    return message


def as_dict(obj) -> dict[str, Any]:
    """The settings as a plain (JSON-able) dict, for provenance."""
    return dataclasses.asdict(obj)


def settings_table(obj) -> Any:
    """The settings as a short table (a ``pandas.DataFrame``) for a notebook page: one row per section (the top-level
    scalars first, then one row per nested config), its fields as ``name=value`` in one cell.

    Our design (the paper is silent): a dataclass repr is one unreadable line; a row per field is
    forty rows. Raises ``TypeError`` if ``obj`` is not a dataclass instance.
    """
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
    table = pd.DataFrame([("run", ", ".join(top))] + rows, columns=["section", "settings"]).set_index("section")
    return table


def check_seed_list(seeds: Any, where: str = "seeds") -> list[int]:
    """``seeds`` as a list of distinct integers (the one seeds validator of the house).

    Raises:
        ValueError: not a non-empty list of integers, or with repeats.
    """
    if isinstance(seeds, (str, bytes, Mapping)) or not isinstance(seeds, collections.abc.Iterable):
        raise ValueError(f"{where} must be a non-empty list of integers, e.g. [0, 1], got {seeds!r}")
    seeds = list(seeds)
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ValueError(f"{where} must be a non-empty list of integers, e.g. [0, 1], got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"{where} must be distinct, got {seeds}")
    return seeds


def check_seeds(settings: T) -> T:
    """``settings`` whose ``seeds`` is a non-empty tuple of distinct ints (:func:`check_seed_list`).

    Raises:
        ValueError: ``seeds`` empty, not a list of integers, or with repeats.
    """
    return dataclasses.replace(settings, seeds=tuple(check_seed_list(settings.seeds)))
