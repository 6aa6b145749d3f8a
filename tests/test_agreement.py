"""The agreement-with-attractors generator (paper_lib.data.agreement)."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from paper_lib.data.agreement import IGNORE, AgreementSet, agreement_set
from paper_lib.data.grammar import LEXICONS
from paper_lib.data.grammar_hard import plural_noun
from paper_lib.experiments.agreement_stage import agreement_stage, attractor_accuracy
from paper_lib.experiments.transfer import AgreementSettings, settings_for

NOUNS_A = set(LEXICONS["A"]["animate"])
PLURALS_A = {plural_noun(w) for w in NOUNS_A}


def _noun_numbers(words):
    return [int(w in PLURALS_A) for w in words if w in NOUNS_A or w in PLURALS_A]


def test_hand_made_set_indexes_and_labels():
    s = AgreementSet("A", [["the", "dog", "some", "cats", "chase", "runs", "."], ["the", "dogs", "run", "."]],
                     target=[4, 1], label=[0, 1], attractors=[1, 0], depth=[1, 0])
    assert s.token_labels() == [[IGNORE] * 4 + [0, IGNORE, IGNORE], [IGNORE, 1, IGNORE, IGNORE]]
    assert s.flat_index().tolist() == [4, 8]
    assert s.to_frame().length.tolist() == [7, 4]


def test_generated_sentences_agree_and_count_attractors():
    s = agreement_set("A", 300, seed=0)
    for words, t, y, k, d in zip(s.sentences, s.target, s.label, s.attractors, s.depth, strict=True):
        nums = _noun_numbers(words)
        assert nums[0] == y                                  # the subject's number is the label
        stack = nums[1:d + 1]
        assert len(stack) == d == 3 and 0 <= k <= d
        assert sum(n != y for n in stack) == k               # attractors: stack nouns of the other number
        main = words[t + 1]
        assert main.endswith("s") == (y == 0)                # the main verb agrees with the subject
        assert words[t] not in NOUNS_A | PLURALS_A           # the prediction point is the last stack verb
    counts = np.bincount(s.attractors, minlength=4)
    assert counts.min() > 20 and counts[1] > 2 * counts[0]   # binomial: 1/8, 3/8, 3/8, 1/8
    last = [_noun_numbers(w)[d] for w, d in zip(s.sentences, s.depth, strict=True)]
    assert 0.4 < np.mean(np.array(last) != np.array(s.label)) < 0.6   # the noun next to the verb: no shortcut
    assert 0.4 < np.mean(s.label) < 0.6                      # chance 0.5


def test_same_seed_same_set_and_errors():
    a, b = agreement_set("B", 20, seed=3), agreement_set("B", 20, seed=3)
    assert a.sentences == b.sentences and a.label == b.label
    assert agreement_set("B", 20, seed=4).sentences != a.sentences
    with pytest.raises(ValueError, match="depth must be in 1..6"):
        agreement_set("A", 5, 0, depth=0)
    with pytest.raises(ValueError, match="unknown grammar"):
        agreement_set("C", 5, 0)


def test_attractor_accuracy_on_hand_made_items():
    items = pd.DataFrame({"seed": [0] * 6, "attractors": [0, 0, 1, 1, 2, 2],
                          "ok_spcn": [True, True, True, False, False, False]})
    acc = attractor_accuracy(items, readers=("spcn",), min_items=2).set_index("k")
    assert acc.accuracy.to_dict() == {"0": 1.0, "1": 0.5, "2": 0.0, "ge1": 0.25}
    assert acc.loc["ge1", "n"] == 4
    assert set(attractor_accuracy(items, readers=("spcn",), min_items=3).k) == {"ge1"}   # too few items per k
    with pytest.raises(ValueError, match="no item column for readers"):
        attractor_accuracy(items, readers=("bigru",))


def test_agreement_stage_smoke_sizes():
    s = settings_for("smoke")
    a = AgreementSettings(n_train=60, n_test=40, epochs=1)
    items = agreement_stage(a, replace(s.spcn, epochs=1), s.bigru, seed=0, probe_max_iter=10)
    assert len(items) == 40 and items.attractors.between(0, 3).all()
    assert {"ok_spcn", "ok_gru_causal", "ok_bigru"} <= set(items) and items.ok_spcn.dtype == bool
    assert 0.3 < items.ok_spcn.mean() <= 1.0
