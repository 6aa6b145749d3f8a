"""Synthetic grammars for Experiment 1: Grammar A (animals) and Grammar B (vehicles).

The paper (brief, "Experiment 1") tags every token of sentences from two synthetic grammars
with one of **20 grammatical roles**; the two grammars share their structure and have
disjoint vocabularies. The grammar itself, the 20 roles and every probability below are
**our design: the paper is silent** on them.

Design
------
Both grammars use the same rules and the same *function words* (determiners, ``very``,
the relative pronouns ``that``/``which``, prepositions, sentence adverbs, ``.``); their
*content words* (nouns, adjectives, verbs) are disjoint. A sentence is

    S   -> NP_subj VP [ADV] "."
    NP  -> DET [[very] ADJ] NOUN [RC]            (an RC only below ``max_depth``)
    RC  -> that VP_rel                           (subject relative: "that chases the cat")
         | that NP_relsubj V_trans               (object relative:  "that the cat chases")
    VP  -> V_action NP [with NP] [PP_loc] | V_psych NP [PP_loc]
         | V_motion [to PLACE | with ANIMAL] [PP_loc] | V_unacc [PP_loc]

Relative clauses nest (right-branching through the object, centre-embedding through the
object relative's subject) up to ``max_depth`` (default 3). Every token carries its
*embedding depth*: 0 in the main clause, d + 1 for ``that`` and everything inside a relative
clause opened at depth d.

The 20 roles (:mod:`paper_lib.data.roles`) are **structural** (13, decided by the position in
the construction, e.g. ``VERB_REL`` versus ``VERB_MAIN``) or **lexical** (7, decided by which
content word occurred: the main subject is AGENT, EXPERIENCER or THEME by the main verb's class;
the noun after ``with`` is an INSTRUMENT or a COMPANION by the noun itself).
``GrammarConfig.hard()`` is the harder variant of :mod:`paper_lib.data.grammar_hard`.

Generation is deterministic per seed (``numpy.random.default_rng``); :func:`make_split`
splits by sentence, with no sentence in both splits.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..pipeline.settings import check_fields, setting
from .documents import make_documents, pad_labels  # noqa: F401 (re-exported)
from .grammar_hard import HardRules, plural_noun, plural_verb
from .roles import N_ROLES, ROLE_DESCRIPTION, ROLE_ID, ROLE_KIND, ROLES, dependency_bin  # noqa: F401 (re-exported)

# ----------------------------------------------------------------------------- lexicons
FUNCTION_WORDS: dict[str, tuple[str, ...]] = {
    "det": ("the", "a", "every", "some"),
    "degree": ("very",),
    "rel": ("that", "which"),
    "loc_prep": ("near", "on", "under"),
    "to": ("to",),
    "with": ("with",),
    "adv": ("often", "again", "today"),
    "end": (".",),
}
"""Shared by both grammars."""

LEXICONS: dict[str, dict[str, tuple[str, ...]]] = {
    "A": {
        "animate": ("dog", "cat", "fox", "bird", "horse", "mouse", "wolf", "bear", "rabbit", "goat",
                    "owl", "frog"),
        "tool": ("stick", "bone", "rope", "stone"),
        "place": ("tree", "river", "barn", "hill", "field", "pond"),
        "adj": ("big", "small", "brown", "old", "young", "furry"),
        "v_action": ("chases", "bites", "kicks", "licks", "scratches"),
        "v_psych": ("fears", "loves", "hates", "trusts"),
        "v_motion": ("runs", "walks", "jumps", "swims"),
        "v_unacc": ("falls", "trips", "sinks", "faints"),
    },
    "B": {
        "animate": ("truck", "bus", "car", "van", "train", "tram", "taxi", "bike", "boat", "plane",
                    "tractor", "scooter"),
        "tool": ("wrench", "cable", "jack", "hose"),
        "place": ("garage", "road", "bridge", "depot", "tunnel", "station"),
        "adj": ("red", "fast", "heavy", "rusty", "shiny", "electric"),
        "v_action": ("tows", "rams", "hits", "pushes", "bumps"),
        "v_psych": ("detects", "tracks", "senses", "ignores"),
        "v_motion": ("drives", "rolls", "speeds", "cruises"),
        "v_unacc": ("stalls", "breaks", "rusts", "crashes"),
    },
}
"""Content words of Grammar A (animals) and Grammar B (vehicles): same categories, disjoint words."""

GRAMMARS: tuple[str, ...] = tuple(LEXICONS)

# Thematic roles of the main clause by verb class (the lexical roles).
_SUBJ_ROLE = {"v_action": "AGENT", "v_motion": "AGENT", "v_psych": "EXPERIENCER", "v_unacc": "THEME"}
_OBJ_ROLE = {"v_action": "PATIENT", "v_psych": "STIMULUS"}


VARIANTS: tuple[str, ...] = ("paper", "hard")


@dataclass(frozen=True)
class GrammarConfig:
    """Probabilities of the optional constructions (our design: the paper is silent).

    ``verb_class_p`` weights the verb classes (action, psych, motion, unaccusative);
    ``rc_p`` is the probability that an eligible noun phrase gets a relative clause, and
    ``object_rc_p`` the share of relative clauses that are object relatives.
    """

    max_depth: int = 3           # deepest relative-clause nesting (levels)
    rc_p: float = 0.4            # P(noun phrase gets a relative clause), per eligible NP
    object_rc_p: float = 0.4     # P(relative clause is an object relative)
    adj_p: float = 0.3           # P(noun phrase has an adjective)
    degree_p: float = 0.3        # P('very' | adjective)
    with_p: float = 0.3          # P('with' phrase | action or motion verb)
    goal_p: float = 0.4          # P('to' phrase | motion verb, no 'with')
    loc_p: float = 0.25          # P(locative phrase) in the main clause
    loc_rel_p: float = 0.1       # P(locative phrase) inside a subject relative clause
    adv_p: float = 0.2           # P(sentence adverb)
    instrument_p: float = 0.6    # P(tool | 'with' after an action verb); else an animate noun
    verb_class_p: tuple[float, float, float, float] = (0.4, 0.2, 0.2, 0.2)
    # "paper" (the default: the grammar as the paper describes it; it lands the paper's within-A and
    # A -> B accuracies inside the report's bands, not its deep-embedded one, where ours is far higher:
    # depth is marked by 'that', so the deep row now reads agreement across attractors,
    # paper_lib.data.agreement) | "hard" (object relatives without a pronoun, agreement)
    variant: str = "paper"
    reduced_rc_p: float = 0.8    # hard: P(object relative has no relative pronoun)
    plural_p: float = 0.5        # hard: P(noun phrase is plural; its verb agrees)
    nest_p: float = 0.75         # hard: P(a reduced relative's subject opens another reduced relative)

    @classmethod
    def hard(cls, **kw) -> "GrammarConfig":
        """The harder grammar: object relatives mostly without pronoun, stacked inside
        each other (``nest_p``), number agreement across centre embedding (see :mod:`paper_lib.data.grammar_hard`)."""
        return cls(**{"variant": "hard", "object_rc_p": 0.7, "rc_p": 0.45, **kw})

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown grammar variant {self.variant!r}; allowed: {', '.join(VARIANTS)}")
        if not (0 <= self.max_depth <= 8):
            raise ValueError(f"max_depth must be in 0..8, got {self.max_depth}")
        for name in ("rc_p", "object_rc_p", "adj_p", "degree_p", "with_p", "goal_p", "loc_p",
                     "loc_rel_p", "adv_p", "instrument_p", "reduced_rc_p", "plural_p", "nest_p"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], got {v}")
        if len(self.verb_class_p) != 4 or abs(sum(self.verb_class_p) - 1) > 1e-9 or min(self.verb_class_p) < 0:
            raise ValueError(f"verb_class_p must be 4 non-negative numbers summing to 1, got {self.verb_class_p}")


@dataclass
class GrammarData:
    """How many sentences notebooks 01 and 02 draw (the same nested settings ``data`` in both;
    our design: the paper gives no sizes). Every field is checked on construction."""

    n_train: int = 1000                  # training sentences of Grammar A (1000: the cpu budget)
    n_test: int = 500                    # held-out sentences of Grammar A
    n_test_B: int = 500                  # sentences of Grammar B scored (never trained on)
    max_depth: int = setting(3, low=0)   # deepest relative-clause nesting (levels)

    def __post_init__(self):
        check_fields(self)


_VERB_CLASSES = ("v_action", "v_psych", "v_motion", "v_unacc")


@dataclass
class Corpus:
    """Sentences with one role id and one embedding depth per token.

    Attributes:
        grammar: ``"A"`` or ``"B"``.
        sentences: list of token lists (words).
        roles: list of role-id lists (ids index :data:`ROLES`), aligned with ``sentences``.
        depths: list of depth lists (0 = main clause), aligned with ``sentences``.
        heads: list of lists: per token, the position of the word that fixes its role
            (itself for a role its own word decides; see :mod:`paper_lib.data.roles`).
    """

    grammar: str
    sentences: list[list[str]] = field(default_factory=list)
    roles: list[list[int]] = field(default_factory=list)
    depths: list[list[int]] = field(default_factory=list)
    heads: list[list[int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.sentences)

    def flat_roles(self) -> np.ndarray:
        """``(N,)`` role ids of all tokens, sentence after sentence."""
        return np.fromiter((r for rs in self.roles for r in rs), dtype=np.int64, count=self.n_tokens)

    def flat_depths(self) -> np.ndarray:
        """``(N,)`` embedding depths of all tokens, sentence after sentence."""
        return np.fromiter((d for ds in self.depths for d in ds), dtype=np.int64, count=self.n_tokens)

    def flat_words(self) -> list[str]:
        """All tokens, sentence after sentence (length N)."""
        return [w for s in self.sentences for w in s]

    def to_frame(self) -> pd.DataFrame:
        """One row per token: sentence, position, word, role id and name, role kind, depth,
        ``dep_distance`` (head - position, tokens; > 0: a later word fixes the role) and ``dep_bin``."""
        heads = self.heads or [list(range(len(s))) for s in self.sentences]
        rows = [(i, t, w, r, ROLES[r], ROLE_KIND[ROLES[r]], d, h - t)
                for i, (s, rs, ds, hs) in enumerate(zip(self.sentences, self.roles, self.depths, heads, strict=True))
                for t, (w, r, d, h) in enumerate(zip(s, rs, ds, hs, strict=True))]
        df = pd.DataFrame(rows, columns=["sentence", "position", "word", "role_id", "role", "kind", "depth",
                                         "dep_distance"])
        df["dep_bin"] = dependency_bin(df["dep_distance"].to_numpy()) if len(df) else []
        return df


def check_grammar(grammar: str) -> str:
    """Return ``grammar`` if known. Raises ValueError naming the allowed ones."""
    if grammar not in LEXICONS:
        raise ValueError(f"unknown grammar {grammar!r}; allowed: {', '.join(GRAMMARS)}")
    return grammar


def content_words(grammar: str) -> set[str]:
    """The content words of ``grammar`` (nouns, adjectives, verbs), plural forms included."""
    lex = LEXICONS[check_grammar(grammar)]
    base = {w for ws in lex.values() for w in ws}
    nouns = {plural_noun(w) for c in ("animate", "tool", "place") for w in lex[c]}
    verbs = {plural_verb(w) for c in _VERB_CLASSES for w in lex[c]}
    return base | nouns | verbs


def function_words() -> set[str]:
    """The function words shared by both grammars."""
    return {w for ws in FUNCTION_WORDS.values() for w in ws}


def vocabulary(grammar: str, variant: str = "paper") -> list[str]:
    """All words of ``grammar``, sorted (function words included; plural forms for ``"hard"``)."""
    words = content_words(grammar) if variant == "hard" else {w for ws in LEXICONS[check_grammar(grammar)].values() for w in ws}
    return sorted(words | function_words())


class _Generator:
    """One sentence at a time: a recursive generator over the rules in the module docstring.

    ``out`` holds ``[word, role, depth, head]`` per token; ``head`` is the position of the word
    that fixes the token's role (our design, :mod:`paper_lib.data.roles`): itself for function
    words, adjectives and nouns whose own class decides (INSTRUMENT/COMPANION); the main verb for
    the main subject and object; the verb of the clause for REL_OBJ; the relative pronoun for
    REL_SUBJ; the preposition for LOCATION/GOAL; the subject (the agreement controller) for a verb.
    """

    def __init__(self, grammar: str, cfg: GrammarConfig, rng: np.random.Generator):
        self.lex, self.cfg, self.rng = LEXICONS[grammar], cfg, rng
        self.fw = FUNCTION_WORDS
        self.out: list[list] = []

    def pick(self, words: Sequence[str]) -> str:
        return words[int(self.rng.integers(len(words)))]

    def coin(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def emit(self, word: str, role: str, depth: int, head: int | None = None) -> int:
        i = len(self.out)
        self.out.append([word, role, depth, i if head is None else head])
        return i

    def verb_word(self, verb_class: str, subj: int | None) -> str:
        """A verb of ``verb_class`` (the hard grammar makes it agree with the noun at ``subj``)."""
        return self.pick(self.lex[verb_class])

    def verb_class(self, transitive_only: bool = False) -> str:
        p = np.asarray(self.cfg.verb_class_p[:2] if transitive_only else self.cfg.verb_class_p, float)
        return _VERB_CLASSES[int(self.rng.choice(len(p), p=p / p.sum()))]

    def np_(self, role: str, depth: int, noun_cat: str = "animate", rc_allowed: bool = True,
            head: int | None = None) -> int:
        """DET [[very] ADJ] NOUN [RC]; returns the noun's position."""
        cfg = self.cfg
        self.emit(self.pick(FUNCTION_WORDS["det"]), "DET", depth)
        if self.coin(cfg.adj_p):
            if self.coin(cfg.degree_p):
                self.emit("very", "DEGREE", depth)
            self.emit(self.pick(self.lex["adj"]), "ADJ", depth)
        noun = self.emit(self.pick(self.lex[noun_cat]), role, depth, head)
        if rc_allowed and depth < cfg.max_depth and self.coin(cfg.rc_p):
            self.rc(depth + 1, noun)
        return noun

    def rc(self, depth: int, noun: int) -> None:
        """that VP_rel | that NP V_trans, every token at ``depth``; ``noun``: the modified noun."""
        pron = self.emit(self.pick(FUNCTION_WORDS["rel"]), "REL_PRON", depth)
        if self.coin(self.cfg.object_rc_p):
            subj = self.np_("REL_SUBJ", depth, head=pron)
            self.emit(self.pick(self.lex[self.verb_class(transitive_only=True)]), "VERB_REL", depth, subj)
        else:
            self.vp(depth, main=False, subj=noun)

    def pp(self, prep_cat: str, noun_role: str, noun_cat: str, depth: int, self_head: bool = False) -> None:
        prep = self.emit(self.pick(FUNCTION_WORDS[prep_cat]), "PREP", depth)
        n = self.np_(noun_role, depth, noun_cat, rc_allowed=False, head=prep)
        if self_head:
            self.out[n][3] = n

    def vp(self, depth: int, main: bool, subj: int | None = None) -> tuple[str, int]:
        """Verb and its complements; returns the verb class and the verb's position."""
        cfg = self.cfg
        vc = self.verb_class()
        verb = self.emit(self.verb_word(vc, subj), "VERB_MAIN" if main else "VERB_REL", depth, subj)
        if vc in _OBJ_ROLE:
            self.np_(_OBJ_ROLE[vc] if main else "REL_OBJ", depth, head=verb)
        if vc == "v_action" and self.coin(cfg.with_p):
            tool = self.coin(cfg.instrument_p)
            self.pp("with", "INSTRUMENT" if tool else "COMPANION", "tool" if tool else "animate", depth, True)
        elif vc == "v_motion":
            if self.coin(cfg.with_p):
                self.pp("with", "COMPANION", "animate", depth, True)
            elif self.coin(cfg.goal_p):
                self.pp("to", "GOAL", "place", depth)
        if self.coin(cfg.loc_p if main else cfg.loc_rel_p):
            self.pp("loc_prep", "LOCATION", "place", depth)
        return vc, verb

    def sentence(self) -> list[list]:
        self.out = []
        subj = self.np_("SUBJ", 0)                 # placeholder, fixed once the main verb is known
        self.out[subj][3] = subj
        vc, verb = self.vp(0, main=True, subj=subj)
        self.out[subj][1], self.out[subj][3] = _SUBJ_ROLE[vc], verb
        if self.coin(self.cfg.adv_p):
            self.emit(self.pick(FUNCTION_WORDS["adv"]), "ADV", 0)
        self.emit(".", "END", 0)
        return self.out


class _HardGenerator(HardRules, _Generator):
    """The harder grammar: :class:`paper_lib.data.grammar_hard.HardRules` over the same rules."""


def generate(grammar: str, n_sentences: int, seed: int, config: GrammarConfig | None = None,
             exclude: Iterable[tuple[str, ...]] = ()) -> Corpus:
    """``n_sentences`` distinct sentences of ``grammar``, deterministic in ``seed``.

    Args:
        grammar: ``"A"`` (animals) or ``"B"`` (vehicles).
        n_sentences: how many distinct sentences.
        seed: the random seed (same seed and arguments -> same corpus).
        config: construction probabilities (default :class:`GrammarConfig`).
        exclude: sentences (tuples of words) that must not be generated.

    Raises:
        ValueError: unknown grammar, ``n_sentences`` < 0, or the grammar cannot produce that
        many distinct sentences.
    """
    check_grammar(grammar)
    if n_sentences < 0:
        raise ValueError(f"n_sentences must be >= 0, got {n_sentences}")
    cfg = config or GrammarConfig()
    cls = _HardGenerator if cfg.variant == "hard" else _Generator
    gen = cls(grammar, cfg, np.random.default_rng([seed, GRAMMARS.index(grammar)]))
    seen = set(map(tuple, exclude))
    corpus = Corpus(grammar)
    tries = 0
    while len(corpus) < n_sentences:
        tries += 1
        if tries > 20 * n_sentences + 1000:
            raise ValueError(f"could not draw {n_sentences} distinct sentences of grammar {grammar}")
        toks = gen.sentence()
        words = tuple(t[0] for t in toks)
        if words in seen:
            continue
        seen.add(words)
        corpus.sentences.append(list(words))
        corpus.roles.append([ROLE_ID[t[1]] for t in toks])
        corpus.depths.append([t[2] for t in toks])
        corpus.heads.append([t[3] for t in toks])
    return corpus


def make_split(grammar: str, n_train: int, n_test: int, seed: int,
               config: GrammarConfig | None = None) -> tuple[Corpus, Corpus]:
    """Train and test corpora of ``grammar``, split by sentence (no sentence in both).

    Returns:
        ``(train, test)``, deterministic in ``seed``.
    """
    both = generate(grammar, n_train + n_test, seed, config)
    train = Corpus(grammar, both.sentences[:n_train], both.roles[:n_train], both.depths[:n_train],
                   both.heads[:n_train])
    test = Corpus(grammar, both.sentences[n_train:], both.roles[n_train:], both.depths[n_train:],
                  both.heads[n_train:])
    return train, test


def role_inventory(corpus: Corpus | None = None) -> pd.DataFrame:
    """The 20 roles as a table: id, name, kind, description, an example word from each
    grammar, and, given a corpus, each role's share of its tokens and mean embedding depth."""
    examples = {g: _examples(g) for g in GRAMMARS}
    df = pd.DataFrame({"id": range(N_ROLES), "role": ROLES, "kind": [ROLE_KIND[r] for r in ROLES],
                       "description": [ROLE_DESCRIPTION[r] for r in ROLES],
                       "example_A": [examples["A"][r] for r in ROLES],
                       "example_B": [examples["B"][r] for r in ROLES]})
    if corpus is not None:
        tok = corpus.to_frame()
        share = tok["role_id"].value_counts(normalize=True)
        depth = tok.groupby("role_id")["depth"].mean()
        df["share"] = [float(share.get(i, 0.0)) for i in range(N_ROLES)]
        df["mean_depth"] = [float(depth.get(i, np.nan)) for i in range(N_ROLES)]
    return df


def _examples(grammar: str) -> dict[str, str]:
    lex = LEXICONS[grammar]
    return {"DET": "the", "DEGREE": "very", "ADJ": lex["adj"][0], "REL_PRON": "that",
            "VERB_MAIN": lex["v_action"][0], "VERB_REL": lex["v_action"][0], "REL_SUBJ": lex["animate"][1],
            "REL_OBJ": lex["animate"][1], "PREP": "near", "LOCATION": lex["place"][0], "GOAL": lex["place"][1],
            "ADV": "often", "END": ".", "AGENT": lex["animate"][0], "EXPERIENCER": lex["animate"][0],
            "THEME": lex["animate"][0], "PATIENT": lex["animate"][1], "STIMULUS": lex["animate"][1],
            "INSTRUMENT": lex["tool"][0], "COMPANION": lex["animate"][2]}
