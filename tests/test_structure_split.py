"""The context/category split of structural roles on hand-made sentences."""
from __future__ import annotations

import pytest

from paper_lib.data.grammar import ROLES, GrammarConfig, generate
from paper_lib.data.structure import prefix_roles, skeleton, structure_split


def _split(sentence: str, roles: str, **cfg):
    words, names = sentence.split(), roles.split()
    return dict(zip(range(len(words)), structure_split(words, names, GrammarConfig(**cfg) if cfg else None), strict=True))


def test_skeleton_keeps_function_words_only():
    assert skeleton("the red truck that tows .".split()) == ["det", "___", "___", "rel", "___", "end"]


def test_after_that_and_very_is_context_after_the_is_category():
    # the truck that tows the car stalls .
    k = _split("the truck that tows the car stalls .",
               "DET AGENT REL_PRON VERB_REL DET REL_OBJ VERB_MAIN END")
    assert k[0] == ("function word", "") and k[2] == ("function word", "") and k[7] == ("function word", "")
    assert k[1] == ("", "")                                   # lexical role: not in the split
    assert k[3] == ("context", "")                            # after 'that': a subject relative's verb
    assert k[5] == ("category", "current word")               # after 'the': ADJ or the noun
    assert k[6] == ("category", "current word")               # noun after an adjective, or the main verb


def test_a_known_adjective_fixes_the_noun_and_the_verb():
    # the very red truck stalls near the very old road .
    k = _split("the very red truck stalls near the very old road .",
               "DET DEGREE ADJ THEME VERB_MAIN PREP DET DEGREE ADJ LOCATION END")
    assert k[2] == ("context", "")                            # after 'very'
    assert k[4] == ("context", "")                            # DET very ADJ NOUN, then the main verb
    assert k[8] == ("context", "") and k[9] == ("context", "")  # 'near the very ___ ___': LOCATION
    # without 'very', the noun after 'near the' may be an adjective
    k = _split("the truck stalls near the road .", "DET THEME VERB_MAIN PREP DET LOCATION END")
    assert k[5] == ("category", "current word")
    assert k[2] == ("category", "current word")               # 'the ___ ___': noun after ADJ or the verb


def test_main_or_relative_verb_needs_the_earlier_words():
    # the truck that the car rams stalls . : 'stalls' is VERB_MAIN; 'the ___ that the ___ ___ ___'
    # also parses as ... that the ADJ NOUN VERB_REL, so even a known verb is ambiguous
    k = _split("the truck that the car rams stalls .",
               "DET THEME REL_PRON DET REL_SUBJ VERB_REL VERB_MAIN END")
    assert k[4] == ("category", "current word")               # REL_SUBJ after 'that the'
    assert k[5] == ("category", "current word")               # noun (after ADJ) or the relative verb
    assert k[6] == ("category", "earlier words")


def test_max_depth_and_probabilities_change_the_parses():
    # with no adjectives in the grammar the word after 'the' is always the noun
    k = _split("the truck stalls near the road .", "DET THEME VERB_MAIN PREP DET LOCATION END", adj_p=0.0)
    assert k[5] == ("context", "") and k[2] == ("context", "")
    # max_depth 0: no relative clause, so 'that' has no parse
    with pytest.raises(ValueError, match="no parse"):
        prefix_roles("the truck that tows the car stalls .".split(), GrammarConfig(max_depth=0))


def test_hard_grammar_and_bad_lengths_raise():
    with pytest.raises(ValueError, match="default grammar only"):
        prefix_roles(["the"], GrammarConfig.hard())
    with pytest.raises(ValueError, match="same length"):
        structure_split(["the", "truck"], ["DET"])


@pytest.mark.parametrize("grammar", ["A", "B"])
def test_every_generated_token_parses_with_its_true_role(grammar):
    """The parser mirrors the generator: each token's true role is among its prefix's parses."""
    cfg = GrammarConfig(max_depth=3)
    corpus = generate(grammar, 300, seed=5, config=cfg)
    kinds = []
    for words, roles in zip(corpus.sentences, corpus.roles, strict=True):
        names = [ROLES[r] for r in roles]
        for name, pairs in zip(names, prefix_roles(words, cfg), strict=True):
            if name not in {"AGENT", "EXPERIENCER", "THEME", "PATIENT", "STIMULUS", "INSTRUMENT", "COMPANION"}:
                assert name in {r for r, _ in pairs}
        kinds += [k for k, _ in structure_split(words, names, cfg) if k]
    share = {k: kinds.count(k) / len(kinds) for k in set(kinds)}
    assert set(share) == {"function word", "context", "category"}
    assert 0.05 < share["context"] < share["category"] < share["function word"]
