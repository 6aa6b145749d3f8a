"""The harder grammar of Experiment 1 (issue 11; **our design: the paper is silent**).

The default grammar (``GrammarConfig()``, variant ``"paper"``) marks every relative clause with
*that*/*which* and has no agreement, so depth is easy to read from a function word's trace and
no role depends on counting open clauses. ``GrammarConfig.hard()`` (variant ``"hard"``) keeps
the 20 roles and the vocabularies and changes three things:

- **Object relatives without a relative pronoun** (probability ``reduced_rc_p``): "the dog
  the cat chases runs". Nested, "the dog the cat the fox bites chases runs": whether a verb is
  ``VERB_REL`` (and at which depth) or ``VERB_MAIN`` then depends only on how many clauses are
  still open, a role whose label depends on depth and attachment.
- **Number agreement across the embedding**: each noun phrase is plural with probability
  ``plural_p`` (determiner *the*/*some*, noun + s); every verb agrees with its subject
  ("the dogs the cat chases run"), so the main verb after a centre-embedded clause agrees with
  a noun several tokens back: a long dependency.
- more object relatives (``object_rc_p`` 0.7) and relative clauses (``rc_p`` 0.45).

:class:`HardRules` is a mixin over the default generator (``paper_lib.data.grammar``); it reads
``self.cfg``, ``self.lex``, ``self.fw`` and calls the generator's ``emit``/``pick``/``coin``/``vp``.
"""
from __future__ import annotations

SINGULAR_DETS: tuple[str, ...] = ("the", "a", "every")
PLURAL_DETS: tuple[str, ...] = ("the", "some")


def plural_noun(word: str) -> str:
    """``dog`` -> ``dogs``, ``fox`` -> ``foxes``, ``bus`` -> ``buses`` (regular English plural)."""
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def plural_verb(word: str) -> str:
    """Third person singular -> plural: ``chases`` -> ``chase``, ``pushes`` -> ``push``."""
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word


class HardRules:
    """Overrides of the default generator's noun phrase, relative clause and verb choice."""

    def sentence(self):
        self.plural: dict[int, bool] = {}
        return super().sentence()

    def verb_word(self, verb_class: str, subj: int | None) -> str:
        w = self.pick(self.lex[verb_class])
        return plural_verb(w) if subj is not None and self.plural.get(subj, False) else w

    def np_(self, role: str, depth: int, noun_cat: str = "animate", rc_allowed: bool = True,
            head: int | None = None, nest: bool = False) -> int:
        """DET [[very] ADJ] NOUN [RC], singular or plural; returns the noun's position.

        ``nest``: the noun phrase is the subject of a reduced relative; with ``nest_p`` it opens
        another reduced relative (a stack), otherwise a relative clause with ``rc_p`` as usual.
        """
        cfg = self.cfg
        plural = self.coin(cfg.plural_p)
        self.emit(self.pick(PLURAL_DETS if plural else SINGULAR_DETS), "DET", depth)
        if self.coin(cfg.adj_p):
            if self.coin(cfg.degree_p):
                self.emit("very", "DEGREE", depth)
            self.emit(self.pick(self.lex["adj"]), "ADJ", depth)
        w = self.pick(self.lex[noun_cat])
        noun = self.emit(plural_noun(w) if plural else w, role, depth, head)
        self.plural[noun] = plural
        if rc_allowed and depth < cfg.max_depth:
            if nest and self.coin(cfg.nest_p):
                self.reduced_rc(depth + 1, noun)
            elif self.coin(cfg.rc_p):
                self.rc(depth + 1, noun)
        return noun

    def reduced_rc(self, depth: int, noun: int) -> None:
        """NP V_trans at ``depth``, no pronoun: the subject's phrase may stack another one inside."""
        subj = self.np_("REL_SUBJ", depth, head=noun, nest=True)
        self.emit(self.verb_word(self.verb_class(transitive_only=True), subj), "VERB_REL", depth, subj)

    def rc(self, depth: int, noun: int) -> None:
        """[that] NP V_trans (the pronoun dropped with ``reduced_rc_p``) | that VP_rel."""
        if self.coin(self.cfg.object_rc_p):
            if self.coin(self.cfg.reduced_rc_p):
                self.reduced_rc(depth, noun)
                return
            pron = self.emit(self.pick(self.fw["rel"]), "REL_PRON", depth)
            subj = self.np_("REL_SUBJ", depth, head=pron)
            self.emit(self.verb_word(self.verb_class(transitive_only=True), subj), "VERB_REL", depth, subj)
        else:
            self.emit(self.pick(self.fw["rel"]), "REL_PRON", depth)
            self.vp(depth, main=False, subj=noun)
