"""The harder grammar (issue 11): reduced object relatives, number agreement across centre
embedding, heads and dependency distances; the default grammar is unchanged."""
import numpy as np
import pytest

from paper_lib.data.grammar import ROLES, GrammarConfig, content_words, generate
from paper_lib.data.grammar_hard import plural_noun, plural_verb
from paper_lib.data.roles import dependency_bin


@pytest.fixture(scope="module")
def hard():
    return generate("A", 400, seed=0, config=GrammarConfig.hard())


def test_plural_forms():
    assert [plural_noun(w) for w in ("dog", "fox", "bus", "bike")] == ["dogs", "foxes", "buses", "bikes"]
    assert [plural_verb(w) for w in ("chases", "pushes", "runs", "scratches")] == ["chase", "push", "run", "scratch"]


def test_unknown_variant_is_one_line_error():
    with pytest.raises(ValueError, match="unknown grammar variant 'harder'; allowed: paper, hard"):
        GrammarConfig(variant="harder")


def test_reduced_object_relatives_occur(hard):
    # a REL_SUBJ noun phrase opened right after a noun, with no relative pronoun in between
    reduced = sum(1 for s, rs in zip(hard.sentences, hard.roles, strict=True)
                  for t, r in enumerate(rs) if ROLES[r] == "DET" and t + 1 < len(rs)
                  and "REL_SUBJ" in [ROLES[x] for x in rs[t:t + 4]] and t > 0 and ROLES[rs[t - 1]] != "REL_PRON")
    assert reduced > 20


def test_every_verb_agrees_with_its_subject(hard):
    content = content_words("A")
    checked = 0
    for s, rs, hs in zip(hard.sentences, hard.roles, hard.heads, strict=True):
        for t, (w, r, h) in enumerate(zip(s, rs, hs, strict=True)):
            if ROLES[r] in ("VERB_MAIN", "VERB_REL"):
                subj = s[h]
                assert h < t and subj in content
                plural_subj = subj.endswith("s") and subj[:-1] in content or subj.endswith("es") and subj[:-2] in content
                assert (not w.endswith("s")) == plural_subj or w.endswith("ss"), (s, w, subj)
                checked += 1
    assert checked > 400


def test_hard_has_more_deep_tokens_and_long_dependencies(hard):
    easy = generate("A", 400, seed=0).to_frame()
    tok = hard.to_frame()
    assert (tok.depth >= 2).mean() > (easy.depth >= 2).mean()
    assert (tok.dep_distance <= -7).sum() > (easy.dep_distance <= -7).sum()


def test_heads_of_the_default_grammar():
    c = generate("A", 50, seed=1)
    tok = c.to_frame()
    # the main subject's role is fixed by the main verb, which comes later
    subj = tok[tok.role.isin(["AGENT", "EXPERIENCER", "THEME"])]
    assert (subj.dep_distance > 0).all()
    assert (tok[tok.role.isin(["DET", "END", "PREP"])].dep_distance == 0).all()
    assert (tok[tok.role.isin(["PATIENT", "STIMULUS", "LOCATION", "GOAL"])].dep_distance < 0).all()


def test_default_grammar_unchanged():
    c = generate("A", 3, seed=0)
    assert c.sentences[0] == ["some", "very", "old", "dog", "falls", "."]
    assert c.sentences[1] == ["every", "wolf", "bites", "some", "furry", "fox", "."]


def test_dependency_bins():
    assert list(dependency_bin(np.array([3, 0, -1, -3, -5, -9]))) == [
        "later word", "self", "1 back", "2-3 back", "4-6 back", "7+ back"]
