"""The harder grammar: reduced object relatives, number agreement across centre
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


# ----------------------------------------------------------------------------- stacked reduced relatives
def _corpus_hash(c) -> str:
    import hashlib
    import json
    return hashlib.sha256(json.dumps([c.sentences, c.roles, c.depths, c.heads]).encode()).hexdigest()


def test_default_grammar_corpora_pinned():
    # the "paper" grammar's corpora are pinned, so no variant's option changes them
    # (words, roles, depths and heads of 300 sentences)
    assert _corpus_hash(generate("A", 300, 0)) == "8c988720e974a77f55a3f31eb8af5c4cdc23de224237cae8e2553c63f6b231dc"
    assert _corpus_hash(generate("B", 300, 5, GrammarConfig(max_depth=2))) == (
        "aff2b1e443d9cae4fff8655ad13087e082eaa3a3d1a0ef3acaffe824a5474789")
    long = [s for s in generate("A", 40, 3).sentences if len(s) > 14][0]
    assert long == ["some", "big", "owl", "which", "loves", "the", "dog", "that", "hates", "every", "goat", "which",
                    "swims", "with", "a", "frog", "loves", "the", "young", "wolf", "that", "faints", "."]


def test_hard_grammar_is_deterministic(hard):
    again = generate("A", 400, seed=0, config=GrammarConfig.hard())
    assert _corpus_hash(again) == _corpus_hash(hard)
    assert _corpus_hash(generate("A", 400, seed=1, config=GrammarConfig.hard())) != _corpus_hash(hard)


def test_nest_p_is_checked():
    with pytest.raises(ValueError, match="nest_p must be a probability in \\[0, 1\\], got 1.5"):
        GrammarConfig.hard(nest_p=1.5)


def test_verbs_balance_the_clauses_opened_at_each_depth(hard):
    # a clause opened at depth d: a relative pronoun, or a reduced relative's subject (no pronoun as head)
    for rs, ds, hs in zip(hard.roles, hard.depths, hard.heads, strict=True):
        names = [ROLES[r] for r in rs]
        for d in range(1, 4):
            opened = sum(1 for n, x, h in zip(names, ds, hs, strict=True) if x == d and (
                n == "REL_PRON" or n == "REL_SUBJ" and names[h] != "REL_PRON"))
            closed = sum(1 for n, x in zip(names, ds, strict=True) if x == d and n == "VERB_REL")
            assert opened == closed, (names, ds)
        assert names.count("VERB_MAIN") == 1 and ds[names.index("VERB_MAIN")] == 0


def test_a_stacked_clause_closes_after_every_clause_inside_it(hard):
    # an object relative's verb agrees with (has as head) its REL_SUBJ at the same depth; between
    # them lie only deeper tokens (the clauses stacked inside the subject); a subject relative's
    # verb has the modified noun, one level up, as head
    n_stacked = 0
    for rs, ds, hs in zip(hard.roles, hard.depths, hard.heads, strict=True):
        names = [ROLES[r] for r in rs]
        for v, (n, h) in enumerate(zip(names, hs, strict=True)):
            if n == "VERB_REL" and names[h] == "REL_SUBJ" and ds[h] == ds[v]:
                assert all(x > ds[v] for x in ds[h + 1:v]), (names, ds)
                n_stacked += v - h > 1 and names[v - 1] == "VERB_REL"
            elif n == "VERB_REL":
                assert names[v - 1] == "REL_PRON" and ds[h] == ds[v] - 1
    assert n_stacked > 100


def test_verb_runs_close_a_stack():
    c = generate("A", 400, seed=0, config=GrammarConfig.hard())
    runs = [(s, ds) for s, rs, ds in zip(c.sentences, c.roles, c.depths, strict=True)
            if any([ROLES[r] for r in rs[t:t + 3]] == ["VERB_REL", "VERB_REL", "VERB_MAIN"] and ds[t:t + 3] == [2, 1, 0]
                   for t in range(len(rs) - 2))]
    assert len(runs) > 15


def test_hard_depth_and_role_shares(hard):
    tok = hard.to_frame()
    deep = tok[tok.depth >= 2]
    assert 0.18 < len(deep) / len(tok) < 0.26
    prev = tok.groupby("sentence")["role"].shift(1)
    closing = tok.role.eq("VERB_REL") & prev.eq("VERB_REL") & (tok.depth >= 2)
    assert 0.25 < deep.role.eq("VERB_REL").mean() < 0.33
    assert 0.08 < closing.sum() / len(deep) < 0.18
    # the default grammar: about 10% of tokens deep, hardly any verb closing a stack there
    easy = generate("A", 400, seed=0).to_frame()
    assert (easy.depth >= 2).mean() < 0.12
