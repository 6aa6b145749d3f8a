"""Typed settings: a notebook's settings are a dataclass of defaults, changed only by named keys.

Each experiment module defines ``Settings`` (a dataclass whose defaults are the ``cpu``
profile's values) and ``settings_for(profile, overrides)``, which applies, in order, the
profile's differences (:data:`paper_lib.pipeline.profiles.PROFILES`) and a reader's
``overrides`` (a dict from a notebook cell or ``-p overrides '{...}'``). A key that the
dataclass does not have is a one-line error naming the allowed keys, so a misspelt setting
can never silently fall back to its default. Nested dataclasses (``spcn``, ``bigru``) take
nested dicts. Our design: the paper is silent.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, TypeVar

T = TypeVar("T")


def apply_overrides(obj: T, overrides: Mapping[str, Any] | None, where: str = "settings") -> T:
    """A copy of the dataclass ``obj`` with ``overrides`` applied (recursively for nested dataclasses).

    Lists become tuples where the default is a tuple; a dict given for a nested dataclass
    changes only the keys it names.

    Raises:
        ValueError: a key that ``obj`` has no field for (the message names the allowed ones),
            or a dict given for a field that is not a dataclass, or ``overrides`` not a dict.
    """
    if not overrides:
        return obj
    if not isinstance(overrides, Mapping):
        raise ValueError(f"{where}: overrides must be a dict of setting -> value, got {type(overrides).__name__}")
    names = [f.name for f in dataclasses.fields(obj)]
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
        elif isinstance(current, tuple) and isinstance(value, list):
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
