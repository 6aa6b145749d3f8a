"""Plain-language names of metrics (``acc_<model>_A`` -> ``<model> accuracy on A``), for reports and verdicts.

Each claims family declares ``{name: label}``; a name may be a template with fields in braces
(``acc_{model}_{N}``), each field a mapping from codes to words or a regular expression shown as matched
(``r"\\d+"``), its label naming the same fields. Exact names come first, then templates in order. Our design.
"""
from __future__ import annotations

import re
from typing import Mapping

_FIELD = re.compile(r"(\{\w+\})")
_KEY = re.compile(r"\b[a-z][a-z0-9]*(?:_[A-Za-z0-9]+)+\b")  # what a metric name looks like in a sentence

Field = Mapping[str, str] | str  # codes -> words, or a regular expression shown as matched


class Labels:
    """Metric name -> plain words, from ``metrics`` (``{name or template: label}``) and the templates' ``fields``.
    Raises ValueError: a template names a field that ``fields`` lacks."""

    def __init__(self, metrics: Mapping[str, str], fields: Mapping[str, Field] | None = None):
        fields = dict(fields or {})
        self.exact: dict[str, str] = {n: w for n, w in metrics.items() if "{" not in n}
        self.templates: list[tuple[str, re.Pattern, str, dict[str, Field]]] = [
            (n, _pattern(n, fields), w, fields) for n, w in metrics.items() if "{" in n]

    def label(self, name: str) -> str:
        """``name``'s words, or ``name`` itself where none is written."""
        if name in self.exact:
            return self.exact[name]
        for _, pattern, words, fields in self.templates:
            if m := pattern.fullmatch(name):
                return words.format(**{k: fields[k][v] if isinstance(fields[k], Mapping) else v
                                       for k, v in m.groupdict().items()})
        return name

    def has(self, name: str) -> bool:
        """Whether ``name`` has words of its own."""
        return name in self.exact or any(p.fullmatch(name) for _, p, _, _ in self.templates)

    def plain(self, text: str | None) -> str:
        """``text`` with every metric name that has words replaced by them."""
        return _KEY.sub(lambda mo: self.label(mo.group()), text or "")

    def __add__(self, other: Labels) -> Labels:
        """Both sets of labels. Raises ValueError: an exact name given two different labels (one line)."""
        for name, words in other.exact.items():
            if self.exact.get(name, words) != words:
                raise ValueError(f"metric {name!r} has two labels: {self.exact[name]!r} and {words!r}")
        out = Labels({})
        out.exact = {**self.exact, **other.exact}
        out.templates = self.templates + other.templates
        return out


def _pattern(template: str, fields: Mapping[str, Field]) -> re.Pattern:
    """The regular expression of ``template``: literal text, each field its alternatives or regex."""
    parts = []
    for piece in _FIELD.split(template):
        if not _FIELD.fullmatch(piece):
            parts.append(re.escape(piece))
            continue
        name = piece[1:-1]
        if name not in fields:
            raise ValueError(f"metric template {template!r} uses field {name!r}, which is not given; "
                             f"given: {', '.join(fields) or 'none'}")
        spec = fields[name]
        alt = "|".join(map(re.escape, sorted(spec, key=len, reverse=True))) if isinstance(spec, Mapping) else spec
        parts.append(f"(?P<{name}>{alt})")
    return re.compile("".join(parts))
