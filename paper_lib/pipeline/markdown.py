"""Markdown that shows what it says: a ``<word>`` that is no HTML element (``<unk>``, the GRU
taggers' unknown-word token) is escaped, so JupyterLab, nbconvert and the site show it instead of
swallowing it as an unknown tag; a ``$formula$`` becomes MathML for the published HTML and the site,
which every current browser draws with no script (JupyterLab draws the TeX itself). Our design.
"""
from __future__ import annotations

import re

HTML_TAGS = frozenset({"a", "abbr", "b", "br", "code", "del", "details", "div", "em", "hr", "i", "img", "kbd",
                       "li", "ol", "p", "pre", "s", "small", "span", "strong", "sub", "summary", "sup", "table",
                       "tbody", "td", "th", "thead", "tr", "u", "ul"})
"""The HTML elements a notebook's Markdown may mean; any other ``<word>`` is text."""

_TAG = re.compile(r"</?([A-Za-z][\w-]*)>")
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", flags=re.S)


def escape_tags(markdown: str) -> str:
    """``markdown`` with every ``<word>`` or ``</word>`` not in :data:`HTML_TAGS` backslash-escaped
    (``\\<unk\\>``), outside code spans and fences."""
    def fix(part: str) -> str:
        return _TAG.sub(lambda m: m.group(0) if m.group(1).lower() in HTML_TAGS
                        else m.group(0).replace("<", "\\<").replace(">", "\\>"), part)
    parts = _CODE.split(markdown)
    return "".join(p if i % 2 else fix(p) for i, p in enumerate(parts))


def Markdown(text: str):  # noqa: N802 -- the name notebooks know from IPython.display
    """``IPython.display.Markdown`` of ``text`` with :func:`escape_tags` applied.

    Raises:
        TypeError: ``text`` is not a string (one line naming its type).
    """
    from IPython.display import Markdown as IPythonMarkdown

    if not isinstance(text, str):
        raise TypeError(f"Markdown needs a string, got {type(text).__name__}")
    return IPythonMarkdown(escape_tags(text))


def dollars_to_mathml(markdown: str) -> str:
    """``markdown`` with each ``$...$`` outside code as inline MathML (latex2mathml); a lone ``$`` stays."""
    from latex2mathml.converter import convert

    def fix(part: str) -> str:
        return re.sub(r"(?<![\\$])\$([^$\n]+?)\$(?!\$)", lambda m: convert(m.group(1)), part)
    parts = _CODE.split(markdown)
    return "".join(p if i % 2 else fix(p) for i, p in enumerate(parts))
