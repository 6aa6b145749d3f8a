"""The 20 grammatical roles of Experiment 1 and how far a token sits from the word that fixes
its role (**our design: the paper names 20 roles and gives none of them**).

A role is *structural* (decided by the position in the construction given the word
categories) or *lexical* (decided by which content word occurred); see
:mod:`paper_lib.data.grammar`. :func:`dependency_bin` groups the signed distance from a token
to the word that fixes its role (its *head*, recorded by the grammar's generator): 0 for a
role the word fixes itself, negative when the deciding word came earlier, positive when it
comes later (no causal reader can see it yet).
"""
from __future__ import annotations

import numpy as np

ROLES: tuple[str, ...] = (
    # structural: decided by position in the construction
    "DET", "DEGREE", "ADJ", "REL_PRON", "VERB_MAIN", "VERB_REL", "REL_SUBJ", "REL_OBJ",
    "PREP", "LOCATION", "GOAL", "ADV", "END",
    # lexical: decided by which content word occurred
    "AGENT", "EXPERIENCER", "THEME", "PATIENT", "STIMULUS", "INSTRUMENT", "COMPANION",
)
"""The 20 role names; a role's id is its index here."""

N_ROLES = len(ROLES)
ROLE_ID: dict[str, int] = {r: i for i, r in enumerate(ROLES)}
ROLE_KIND: dict[str, str] = {r: ("structural" if i < 13 else "lexical") for i, r in enumerate(ROLES)}
"""``"structural"`` or ``"lexical"`` for each role name."""

ROLE_DESCRIPTION: dict[str, str] = {
    "DET": "determiner of any noun phrase",
    "DEGREE": "'very' before an adjective",
    "ADJ": "adjective before a noun",
    "REL_PRON": "relative pronoun opening a relative clause",
    "VERB_MAIN": "verb of the main clause",
    "VERB_REL": "verb inside a relative clause",
    "REL_SUBJ": "subject noun inside an object relative clause ('that [the cat] chases')",
    "REL_OBJ": "object noun inside a subject relative clause ('that chases [the cat]')",
    "PREP": "preposition",
    "LOCATION": "noun after a locative preposition (near, on, under)",
    "GOAL": "noun after 'to' (motion verbs)",
    "ADV": "sentence adverb before the full stop",
    "END": "the full stop",
    "AGENT": "main subject of an action or motion verb",
    "EXPERIENCER": "main subject of a psych verb",
    "THEME": "main subject of an unaccusative verb (the subject undergoes the event)",
    "PATIENT": "main object of an action verb",
    "STIMULUS": "main object of a psych verb",
    "INSTRUMENT": "noun after 'with' that is a tool",
    "COMPANION": "noun after 'with' that is an animal (A) or a vehicle (B)",
}

DEPENDENCY_BINS: tuple[str, ...] = ("later word", "self", "1 back", "2-3 back", "4-6 back", "7+ back")
"""Groups of the signed distance head - t (tokens): a later word decides, the word itself, or
an earlier word 1, 2-3, 4-6 or 7+ tokens back."""


def dependency_bin(distance) -> np.ndarray:
    """Bin names (:data:`DEPENDENCY_BINS`) of signed distances ``head - t`` (tokens), ``(N,)`` -> ``(N,)``."""
    d = np.asarray(distance)
    edges = np.select([d > 0, d == 0, d == -1, d >= -3, d >= -6], [0, 1, 2, 3, 4], 5)
    return np.asarray(DEPENDENCY_BINS, dtype=object)[edges]
