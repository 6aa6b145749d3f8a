"""Which structural roles a causal reader can decide from context alone.

On Grammar B every content word is unseen: a reader trained on A knows the shared function
words and only *that* a content word stood at a position, not its category (adjective, noun or
verb). A structural role of an unseen word is then of one of two kinds:

- **context**: the preceding words alone fix the role, whatever the unseen word's category
  ("that ___": the verb of a subject relative, VERB_REL; "very ___": ADJ; "near the very ___ ___":
  the second unseen word is the LOCATION noun, because 'very' marked the first as an adjective);
- **category**: some parse of the same prefix gives the token another role, so a reader must know
  a content word's category to decide it ("the ___": ADJ or the noun; "the ___ ___": the noun
  after an adjective or the verb after a noun; a verb after a closed relative clause: main or
  relative by how many clauses are still open, which the earlier words' categories fix).

A structural role carried by a **function word** (DET, DEGREE, REL_PRON, PREP, ADV, END) is
decided by the word itself, which the reader knows on B as on A; it is a third kind,
``"function word"``: it tests reading the current word, not keeping structure (the same objection
as to lag 0, the current token's identity, in a lag-decodability curve), so it belongs to neither kind above.

**The rule** (stated before any model was scored on it; our design, the paper is silent): a
structural token on an unseen content word is ``"context"`` iff every parse of the grammar
(:mod:`paper_lib.data.grammar`, its constructions and ``max_depth``) consistent with the
sentence's *skeleton* up to and including the token gives it the same role; else
``"category"``. The skeleton keeps each function word's class (determiner, 'very', relative
pronoun, locative preposition, 'to', 'with', sentence adverb, '.') and writes every content word
as one placeholder ``___``. This is the ideal causal reader that knows the grammar and every
function word but no content word: what it cannot decide, no causal model trained on A can be
blamed for; what it can decide, a model that "keeps structure" must. The parse is an exact
top-down simulation of the grammar's generator (a set of pushdown stacks, bounded by
``max_depth``), so long-range facts count too (e.g. "the ___ that ___ the ___ ___": a fourth
unseen word after 'the' and one more is the noun, or the main verb, so it is "category").

For "category" tokens :func:`structure_split` also says whether the *current* word's category
alone would settle the role (``"current word"``, e.g. ADJ versus noun after 'the') or the earlier
words' categories are needed too (``"earlier words"``, e.g. main versus relative verb).

A construction whose probability is 0 or 1 in the :class:`~paper_lib.data.grammar.GrammarConfig`
is left out of (or forced in) the parse, as the generator would. Only the default grammar
(``variant="paper"``) is parsed; the harder one raises.
"""
from __future__ import annotations

from typing import Sequence

from .grammar import FUNCTION_WORDS, GrammarConfig
from .roles import ROLE_KIND, ROLES

CONTENT = "___"
"""The skeleton's placeholder for a content word."""

KINDS: tuple[str, ...] = ("function word", "context", "category")
"""The kinds of a structural token (see the module docstring)."""

_CLASS = {w: cls for cls, ws in FUNCTION_WORDS.items() for w in ws}
_VERB_CLASSES = ("v_action", "v_psych", "v_motion", "v_unacc")
# Placeholder names of the lexical slots (their roles are lexical, fixed later or by the word).
_SUBJ, _OBJ, _WITH = "main subject (lexical)", "main object (lexical)", "with-noun (lexical)"


def skeleton(words: Sequence[str]) -> list[str]:
    """Each function word's class (``"det"``, ``"degree"``, ``"rel"``, ...), a content word as :data:`CONTENT`."""
    return [_CLASS.get(w, CONTENT) for w in words]


def _opt(p: float, yes: tuple, no: tuple = ()) -> list[tuple]:
    """The alternatives of an optional construction of probability ``p`` (0 or 1 forces one)."""
    return ([yes] if p > 0 else []) + ([no] if p < 1 else [])


class _Parser:
    """The grammar's generator as a nondeterministic pushdown automaton over skeletons.

    A stack is a tuple of symbols, top first: ``("t", class, role, category)`` a terminal, or a
    nonterminal ``("np", role, depth, rc_allowed)``, ``("adj",)``, ``("rc?", depth)``,
    ``("rc", depth)``, ``("vp", depth, main)``, ``("with", depth)``, ``("motion", depth)``,
    ``("loc", depth, main)``, ``("adv",)``. Mirrors ``paper_lib.data.grammar._Generator``.
    """

    def __init__(self, cfg: GrammarConfig):
        if cfg.variant != "paper":
            raise ValueError(f"the context/category split parses the default grammar only, got variant {cfg.variant!r}")
        self.cfg = cfg

    def t(self, cls: str, role: str, cat: str = "function") -> tuple:
        return ("t", cls, role, cat)

    def np(self, role: str, depth: int, rc_allowed: bool = True) -> tuple:
        return ("np", role, depth, rc_allowed)

    def expand(self, sym: tuple) -> list[tuple]:
        """The alternatives (tuples of symbols) of nonterminal ``sym``."""
        rule = getattr(self, f"_{sym[0].rstrip('?')}{'_opt' if sym[0].endswith('?') else ''}", None)
        if rule is None:
            raise ValueError(f"unknown grammar symbol {sym!r}")
        return rule(*sym[1:])

    def _np(self, role, depth, rc_allowed):                  # DET [[very] ADJ] NOUN [RC]
        tail = (("rc?", depth),) if rc_allowed and depth < self.cfg.max_depth else ()
        return [(self.t("det", "DET"), ("adj",), self.t(CONTENT, role, "noun"), *tail)]

    def _adj(self):
        c, adj = self.cfg, self.t(CONTENT, "ADJ", "adj")
        with_adj = ([(adj,)] if c.degree_p < 1 else []) + ([(self.t("degree", "DEGREE"), adj)] if c.degree_p > 0 else [])
        return (with_adj if c.adj_p > 0 else []) + ([()] if c.adj_p < 1 else [])

    def _rc_opt(self, depth):
        return _opt(self.cfg.rc_p, (("rc", depth + 1),))

    def _rc(self, d):                                        # that NP V_trans | that VP
        obj = (self.t("rel", "REL_PRON"), self.np("REL_SUBJ", d), self.t(CONTENT, "VERB_REL", "verb"))
        subj = (self.t("rel", "REL_PRON"), ("vp", d, False))
        return [subj] if sum(self.cfg.verb_class_p[:2]) == 0 else _opt(self.cfg.object_rc_p, obj, subj)

    def _vp(self, d, main):                                  # verb, its object and complements
        verb = self.t(CONTENT, "VERB_MAIN" if main else "VERB_REL", "verb")
        alts = []
        for vc, p in zip(_VERB_CLASSES, self.cfg.verb_class_p, strict=True):
            if p > 0:
                obj = (self.np(_OBJ if main else "REL_OBJ", d),) if vc in ("v_action", "v_psych") else ()
                comp = (("with", d),) if vc == "v_action" else (("motion", d),) if vc == "v_motion" else ()
                alts.append((verb, *obj, *comp, ("loc", d, main)))
        return alts

    def _with(self, d):
        return _opt(self.cfg.with_p, (self.t("with", "PREP"), self.np(_WITH, d, False)))

    def _motion(self, d):                                    # with NP | to PLACE | nothing
        c = self.cfg
        goal = (self.t("to", "PREP"), self.np("GOAL", d, False))
        with_pp = (self.t("with", "PREP"), self.np(_WITH, d, False))
        return ([with_pp] if c.with_p > 0 else []) + (_opt(c.goal_p, goal) if c.with_p < 1 else [])

    def _loc(self, d, main):
        p = self.cfg.loc_p if main else self.cfg.loc_rel_p
        return _opt(p, (self.t("loc_prep", "PREP"), self.np("LOCATION", d, False)))

    def _adv(self):
        return _opt(self.cfg.adv_p, (self.t("adv", "ADV"),))

    def close(self, stacks: set[tuple]) -> set[tuple]:
        """Expand every stack until a terminal is on top (or it is empty)."""
        done, todo = set(), list(stacks)
        while todo:
            s = todo.pop()
            if not s or s[0][0] == "t":
                done.add(s)
                continue
            todo.extend(alt + s[1:] for alt in self.expand(s[0]))
        return done

    def start(self) -> set[tuple]:
        return self.close({(self.np(_SUBJ, 0), ("vp", 0, True), ("adv",), self.t("end", "END"))})

    def step(self, stacks: set[tuple], cls: str) -> tuple[set[tuple], set[tuple[str, str]]]:
        """Consume one skeleton symbol; returns the new stacks and the ``(role, category)`` pairs it can have."""
        matched = {s for s in stacks if s and s[0][1] == cls}
        return self.close({s[1:] for s in matched}), {(s[0][2], s[0][3]) for s in matched}


def prefix_roles(words: Sequence[str], config: GrammarConfig | None = None) -> list[set[tuple[str, str]]]:
    """Per token, the ``(role, category)`` pairs that some parse of the skeleton prefix (up to and
    including the token) gives it; category is ``"adj"``, ``"noun"``, ``"verb"`` or ``"function"``.
    Lexical noun slots carry placeholder role names (``"main subject (lexical)"``, ...).

    Raises:
        ValueError: the skeleton leaves the grammar at some token (no parse), or a hard-grammar config.
    """
    parser = _Parser(config or GrammarConfig())
    stacks, out = parser.start(), []
    for t, cls in enumerate(skeleton(words)):
        stacks, pairs = parser.step(stacks, cls)
        if not pairs:
            raise ValueError(f"token {t} ({words[t]!r}) of {' '.join(words)!r} has no parse in the grammar")
        out.append(pairs)
    return out


def structure_split(words: Sequence[str], roles: Sequence[str], config: GrammarConfig | None = None,
                    ) -> list[tuple[str, str]]:
    """Per token ``(kind, settles)``: ``kind`` is one of :data:`KINDS` for a structural role and ``""``
    for a lexical one; ``settles`` is, for a ``"category"`` token, ``"current word"`` when the
    current word's category alone would fix the role and ``"earlier words"`` otherwise (else ``""``).

    Args:
        words: one sentence of the default grammar (A or B). roles: its role names (:data:`~paper_lib.data.roles.ROLES`).
        config: the grammar's settings (its ``max_depth`` and probabilities define the parses).

    Raises:
        ValueError: lengths differ, or as :func:`prefix_roles`.
    """
    if len(words) != len(roles):
        raise ValueError(f"words and roles must be the same length, got {len(words)} and {len(roles)}")
    out = []
    for w, r, pairs in zip(words, roles, prefix_roles(words, config), strict=True):
        if ROLE_KIND[r] != "structural":
            out.append(("", ""))
        elif w in _CLASS:
            out.append(("function word", ""))
        elif {role for role, _ in pairs} == {r}:
            out.append(("context", ""))
        else:
            cat = {c for role, c in pairs if role == r}
            same = {role for role, c in pairs if c in cat}
            out.append(("category", "current word" if same == {r} else "earlier words"))
    return out


def split_columns(sentences: Sequence[Sequence[str]], roles: Sequence[Sequence[int]],
                  config: GrammarConfig | None = None) -> dict[str, list[str]]:
    """:func:`structure_split` over a corpus, flat (sentence after sentence, as ``Corpus.to_frame``):
    ``{"struct_split": kind per token, "struct_settles": settles per token}`` (``""`` where none);
    ``roles`` are role ids (indices of :data:`~paper_lib.data.roles.ROLES`)."""
    kinds, settles = [], []
    for words, ids in zip(sentences, roles, strict=True):
        for k, s in structure_split(words, [ROLES[i] for i in ids], config):
            kinds.append(k)
            settles.append(s)
    return {"struct_split": kinds, "struct_settles": settles}
