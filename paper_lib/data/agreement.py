"""Subject-verb number agreement across a centre-embedded stack with attractors.

Linzen, Dupoux and Goldberg (2016, "Assessing the ability of LSTMs to learn syntax-sensitive
dependencies") predict the number of a verb from the words before it; *attractors* are nouns of
the other number between the subject and its verb. The paper (Experiment 1's "deep-embedded"
84 %) is silent on this task; the construction below is **our design** on the vocabulary and the
number morphology of the harder grammar (:mod:`paper_lib.data.grammar_hard`):

    DET [[very] ADJ] N0  DET [[very] ADJ] N1 ... DET [[very] ADJ] Nd  Vd ... V1  V0  [DET N_obj] .

a subject ``N0`` and a stack of ``d`` = ``depth`` reduced object relatives, each verb ``Vi``
agreeing with its noun ``Ni`` (``V0``, the main verb, with the subject). The **label** is the
subject's number (0 singular, 1 plural), read at the **prediction point**: the token right before
the main verb (``V1``), where a reader must predict the main verb's number (chance 0.5; the
subject's number is a fair coin). Every noun's number is a fair coin of its own, so no word but
the subject (and the main verb after it) tells the label: a first version drew ``k`` first, which
made the stack noun next to the verb an attractor 61 % of the time, and a causal GRU learned
"the opposite of the last verb" (0.04 at ``k = 0``). ``k``, the number of stack nouns whose number
differs from the subject's (the attractors, 0..``d``), is then binomial (``d`` = 3: 1/8, 3/8,
3/8, 1/8); the verbs agreeing with them carry the other number too (``V1`` itself when ``N1`` is
one). A fixed trace weights every noun of the window by its decay alone, so its errors should
grow with ``k``; a learned state can keep the subject's number apart.

Deterministic per seed (``numpy.random.default_rng([seed, 23, grammar index])``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from .grammar import GRAMMARS, LEXICONS, check_grammar
from .grammar_hard import PLURAL_DETS, SINGULAR_DETS, plural_noun, plural_verb

IGNORE = -100
"""Label of every token that is not a prediction point (``train_bigru`` ignores it)."""

NUMBERS: tuple[str, ...] = ("singular", "plural")


@dataclass
class AgreementSet:
    """Agreement sentences with one labelled prediction point each.

    Attributes:
        grammar: ``"A"`` or ``"B"`` (the vocabulary).
        sentences: token lists.
        target: per sentence, the position of the prediction point (the token before the main verb).
        label: per sentence, the subject's number (0 singular, 1 plural).
        attractors: per sentence, ``k``, how many stack nouns have the other number.
        depth: per sentence, ``d``, the number of stacked relatives.
        numbers: per sentence, the numbers of its nouns ``N0`` (the subject) .. ``Nd`` (0 singular,
            1 plural), for the surface heuristics (:func:`heuristic_answers`).
    """

    grammar: str
    sentences: list[list[str]] = field(default_factory=list)
    target: list[int] = field(default_factory=list)
    label: list[int] = field(default_factory=list)
    attractors: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    numbers: list[list[int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.sentences)

    def token_labels(self) -> list[list[int]]:
        """Per sentence, one label per token: the number at the prediction point, :data:`IGNORE` elsewhere."""
        out = []
        for s, t, y in zip(self.sentences, self.target, self.label, strict=True):
            row = [IGNORE] * len(s)
            row[t] = y
            out.append(row)
        return out

    def flat_index(self) -> np.ndarray:
        """``(n_sentences,)`` index of each prediction point among all tokens, sentence after sentence
        (rows of ``SPCN.token_features`` or of ``predict_bigru``'s output)."""
        starts = np.cumsum([0] + [len(s) for s in self.sentences[:-1]])
        return (starts + np.asarray(self.target, dtype=np.int64)).astype(np.int64)

    def to_frame(self) -> pd.DataFrame:
        """One row per sentence: sentence, label, attractors, depth, length (tokens)."""
        return pd.DataFrame({"sentence": range(len(self)), "label": self.label, "attractors": self.attractors,
                             "depth": self.depth, "length": [len(s) for s in self.sentences]})


def _noun_phrase(rng, lex, plural: bool, adj_p: float, degree_p: float) -> list[str]:
    out = [str(rng.choice(PLURAL_DETS if plural else SINGULAR_DETS))]
    if rng.random() < adj_p:
        if rng.random() < degree_p:
            out.append("very")
        out.append(str(rng.choice(lex["adj"])))
    w = str(rng.choice(lex["animate"]))
    out.append(plural_noun(w) if plural else w)
    return out


def _verb(rng, lex, plural: bool, classes=("v_action", "v_psych")) -> str:
    w = str(rng.choice(lex[str(rng.choice(classes))]))
    return plural_verb(w) if plural else w


def agreement_set(grammar: str, n_sentences: int, seed: int, depth: int | Sequence[int] = 3, adj_p: float = 0.3,
                  degree_p: float = 0.3) -> AgreementSet:
    """``n_sentences`` agreement sentences of ``grammar``'s vocabulary (see the module docstring).

    Args:
        grammar: ``"A"`` or ``"B"``. n_sentences: how many (>= 0). seed: the random seed.
        depth: the stack's size (1..6 relatives), or several sizes: each sentence's is then drawn
            uniformly from them, so that the subject is not at a fixed distance from the prediction
            point (a fixed bank could read it by position); ``k`` runs 0..``d``.
        adj_p, degree_p: P(adjective) per noun phrase and P('very' | adjective).

    Raises:
        ValueError: unknown grammar, ``n_sentences`` < 0, ``depth`` outside 1..6 or a
        probability outside [0, 1].
    """
    check_grammar(grammar)
    if n_sentences < 0:
        raise ValueError(f"n_sentences must be >= 0, got {n_sentences}")
    depths = [int(depth)] if isinstance(depth, (int, np.integer)) else [int(d) for d in depth]
    if not depths or not all(1 <= d <= 6 for d in depths):
        raise ValueError(f"depth must be in 1..6 (or a non-empty list of such), got {depth}")
    for name, p in (("adj_p", adj_p), ("degree_p", degree_p)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be a probability in [0, 1], got {p}")
    lex = LEXICONS[grammar]
    rng = np.random.default_rng([seed, 23, GRAMMARS.index(grammar)])
    out = AgreementSet(grammar)
    for _ in range(n_sentences):
        d = depths[0] if len(depths) == 1 else int(rng.choice(depths))
        numbers = (rng.random(d + 1) < 0.5).tolist()              # N0 (the subject), N1..Nd: fair coins
        subj = numbers[0]
        k = sum(n != subj for n in numbers[1:])
        words: list[str] = []
        for pl in numbers:
            words += _noun_phrase(rng, lex, pl, adj_p, degree_p)
        for pl in reversed(numbers[1:]):                          # Vd ... V1 close the stack
            words.append(_verb(rng, lex, pl))
        target = len(words) - 1                                   # V1: the token before the main verb
        main_class = str(rng.choice(("v_action", "v_psych", "v_motion", "v_unacc")))
        words.append(_verb(rng, lex, subj, (main_class,)))
        if main_class in ("v_action", "v_psych"):
            words += _noun_phrase(rng, lex, bool(rng.random() < 0.5), adj_p, degree_p)
        words.append(".")
        out.sentences.append(words)
        out.target.append(target)
        out.label.append(int(subj))
        out.attractors.append(k)
        out.depth.append(d)
        out.numbers.append([int(n) for n in numbers])
    return out


HEURISTICS: tuple[str, ...] = ("nearest_noun", "majority_number")
"""Surface readers of the subject's number that use no structure (the negative controls)."""


def heuristic_answers(data: AgreementSet, heuristic: str) -> np.ndarray:
    """``(n_sentences,)`` the subject's number as a surface heuristic guesses it from the nouns before the
    prediction point: ``"nearest_noun"``, the number of the last noun (``Nd``, the innermost of the
    stack; Linzen et al. 2016's attractor heuristic), or ``"majority_number"``, the more frequent number
    among ``N0 .. Nd`` (ties: the nearest noun's). Both fail as attractors pile up, and neither can
    be right at ``k = d`` (every stack noun an attractor; our design).

    Raises:
        ValueError: an unknown heuristic.
    """
    if heuristic not in HEURISTICS:
        raise ValueError(f"unknown heuristic {heuristic!r}; allowed: {', '.join(HEURISTICS)}")
    out = []
    for nums in data.numbers:
        if heuristic == "nearest_noun":
            out.append(nums[-1])
        else:
            ones = sum(nums)
            out.append(nums[-1] if 2 * ones == len(nums) else int(2 * ones > len(nums)))
    return np.asarray(out, dtype=np.int64)
