"""Grammar A and B: 20 roles, determinism, disjoint content words, depth up to 3."""
import numpy as np
import pytest

from paper_lib.data.grammar import (
    FUNCTION_WORDS,
    N_ROLES,
    ROLE_KIND,
    ROLES,
    GrammarConfig,
    content_words,
    function_words,
    generate,
    make_split,
    role_inventory,
)


@pytest.fixture(scope="module")
def corpus_a():
    return generate("A", 1500, seed=0)


def test_exactly_20_roles_with_kinds():
    assert N_ROLES == 20 and len(set(ROLES)) == 20
    kinds = [ROLE_KIND[r] for r in ROLES]
    assert kinds.count("structural") == 13 and kinds.count("lexical") == 7
    assert ROLE_KIND["VERB_REL"] == "structural" and ROLE_KIND["AGENT"] == "lexical"


def test_every_token_labelled_and_all_roles_occur(corpus_a):
    for s, r, d in zip(corpus_a.sentences, corpus_a.roles, corpus_a.depths, strict=True):
        assert len(s) == len(r) == len(d) > 0
    assert set(corpus_a.flat_roles().tolist()) == set(range(20))


def test_deterministic_per_seed():
    a, b, c = generate("A", 50, seed=3), generate("A", 50, seed=3), generate("A", 50, seed=4)
    assert a.sentences == b.sentences and a.roles == b.roles and a.depths == b.depths
    assert a.sentences != c.sentences


def test_disjoint_content_shared_function_words():
    assert not content_words("A") & content_words("B")
    assert not content_words("A") & function_words()
    b = generate("B", 300, seed=0)
    words_b = set(b.flat_words())
    assert not words_b & content_words("A")
    assert {"the", "that", "."} <= words_b & function_words()


def test_depth_up_to_3_and_bounded(corpus_a):
    depths = corpus_a.flat_depths()
    assert depths.min() == 0 and depths.max() == 3
    shallow = generate("A", 300, seed=0, config=GrammarConfig(max_depth=1))
    assert shallow.flat_depths().max() == 1


def test_relative_clause_tokens_are_embedded(corpus_a):
    df = corpus_a.to_frame()
    assert (df[df.role == "VERB_REL"].depth >= 1).all()
    assert (df[df.role == "REL_PRON"].depth >= 1).all()
    assert (df[df.role.isin(["VERB_MAIN", "END", "AGENT", "PATIENT"])].depth == 0).all()


def test_lexical_roles_same_order_different_roles(corpus_a):
    """'DET NOUN VERB DET NOUN .' occurs with AGENT/PATIENT and with EXPERIENCER/STIMULUS."""
    pairs = set()
    for s, r in zip(corpus_a.sentences, corpus_a.roles, strict=True):
        names = [ROLES[i] for i in r]
        if len(s) == 6 and names[2] == "VERB_MAIN" and names[5] == "END":
            pairs.add((names[1], names[4]))
    assert {("AGENT", "PATIENT"), ("EXPERIENCER", "STIMULUS")} <= pairs


def test_split_by_sentence_no_overlap():
    train, test = make_split("A", 400, 100, seed=1)
    assert len(train) == 400 and len(test) == 100
    assert not {tuple(s) for s in train.sentences} & {tuple(s) for s in test.sentences}


def test_role_inventory_table(corpus_a):
    df = role_inventory(corpus_a)
    assert list(df.role) == list(ROLES) and len(df) == 20
    assert df.share.sum() == pytest.approx(1.0)
    assert np.isclose(df.set_index("role").loc["VERB_MAIN", "mean_depth"], 0.0)


def test_bad_input_errors():
    with pytest.raises(ValueError, match="unknown grammar 'C'"):
        generate("C", 10, seed=0)
    with pytest.raises(ValueError, match="rc_p must be a probability"):
        GrammarConfig(rc_p=1.5)
    assert "that" in FUNCTION_WORDS["rel"]
