"""The harder grammar of Experiment 1 (**our design: the paper is silent**).

The default grammar (``GrammarConfig()``, variant ``"paper"``) marks every relative clause with
*that*/*which* and has no agreement, so depth is easy to read from a function word's trace and
no role depends on counting open clauses. ``GrammarConfig.hard()`` (variant ``"hard"``) keeps
the 20 roles and the vocabularies and changes four things:

- **Object relatives without a relative pronoun** (probability ``reduced_rc_p``): "the dog
  the cat chases runs".
- **Reduced relatives stacked inside reduced relatives** (probability ``nest_p`` 0.75, up to
  ``max_depth``): the subject of a reduced relative opens another one, "the dog the cat the fox
  bites chases runs" (*bites* ``VERB_REL`` at depth 2, *chases* ``VERB_REL`` at depth 1, *runs*
  ``VERB_MAIN``). A stack of nouns is closed by a run of verbs, and whether a verb that follows
  a verb is ``VERB_REL`` or ``VERB_MAIN`` depends only on how many clauses are still open: a
  role whose label depends on depth and attachment, and (unlike the first version of this
  grammar) one that sits at depth >= 2.
- **Number agreement across the embedding**: each noun phrase is plural with probability
  ``plural_p`` (determiner *the*/*some*, noun + s); every verb agrees with its subject
  ("the dogs the cat chases run"), so the main verb after a centre-embedded clause agrees with
  a noun several tokens back: a long dependency.
- more object relatives (``object_rc_p`` 0.7) and relative clauses (``rc_p`` 0.45).

Measured (Grammar A, 2000 sentences, seed 0, ``max_depth`` 3; ``/tmp`` script, no training):

=====================================  ================  ===================
quantity                               before stacking   now (``nest_p`` .75)
=====================================  ================  ===================
tokens per sentence                    11.9              13.3
share of tokens at depth 0/1/2/3       .64/.23/.09/.04   .58/.21/.12/.10
VERB_REL share of depth >= 2 tokens    .26               .29
REL_SUBJ / DET / ADJ, depth >= 2       .18/.25/.07       .26/.28/.08
REL_PRON share of depth >= 2 tokens    .12               .04
verbs right after a verb: MAIN/REL1/REL2+  759/359/136   739/763/681
=====================================  ================  ===================

Why deep tokens stayed easy in the first version: a depth >= 2 verb almost always followed a
noun or *that* (its label fixed by the previous word's category), and the rest of depth >= 2
was determiners, adjectives, pronouns and the reduced relative's subject (a noun right after a
noun phrase). Stacking makes the verbs that close a stack common at depth >= 2 (over a third
of the depth >= 2 verbs follow a verb). It does **not** make depth >= 2 hard for a causal
reader: in a one-seed pilot of notebook 02's hard stage (2000 training sentences, 300 test,
seeds 0 and 1) SPCN scored depth 0-1 / depth >= 2 at .939/.993 and .931/.988 (.940/.981 and
.945/.966 before stacking), the causal GRU .961/.999 and .953/.999. Of the verbs right after a
verb, SPCN got the depth-0 main verbs .936 right, the depth-1 ones .982 and the depth-2 ones
1.000 (seed 0): where the count of open clauses is uncertain the probe answers ``VERB_REL``,
the label of every deep verb, so the errors land on the depth-0 main verb. A deep token is
only hard if its label is the minority one where readers are unsure; ``VERB_REL`` never is.
:mod:`paper_lib.data.agreement` builds that case (the subject's number after a stack, against
attractors), and notebook 02's deep row reads it.

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
