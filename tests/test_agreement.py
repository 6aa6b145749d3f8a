"""The agreement-with-attractors generator (paper_lib.data.agreement)."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from paper_lib.data.agreement import IGNORE, AgreementSet, agreement_set, heuristic_answers
from paper_lib.data.grammar import LEXICONS
from paper_lib.data.grammar_hard import plural_noun
from paper_lib.experiments.agreement_stage import (
    agreement_stage,
    attractor_accuracy,
    attractor_slope,
    heuristic_accuracy,
)
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
    with pytest.raises(ValueError, match="depth must be in 1..6"):
        agreement_set("A", 5, 0, depth=[1, 7])
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
    assert len(items) == 40 and items.attractors.between(0, 4).all() and set(items.depth) <= {1, 2, 3, 4}
    assert (items.attractors <= items.depth).all()
    assert {"ok_spcn", "ok_gru_causal", "ok_bigru", "ok_nearest_noun", "ok_majority_number"} <= set(items)
    assert items.ok_spcn.dtype == bool
    assert 0.3 < items.ok_spcn.mean() <= 1.0


def test_mixed_depths_are_drawn_per_sentence_and_numbers_are_kept():
    s = agreement_set("A", 400, seed=1, depth=(1, 2, 3, 4))
    counts = np.bincount(s.depth, minlength=5)[1:]
    assert counts.min() > 70                                  # uniform over 1..4: about 100 each
    for words, d, nums, k, y in zip(s.sentences, s.depth, s.numbers, s.attractors, s.label, strict=True):
        assert _noun_numbers(words)[: d + 1] == nums and len(nums) == d + 1
        assert nums[0] == y and sum(n != y for n in nums[1:]) == k
    assert agreement_set("A", 50, seed=2, depth=3).sentences == agreement_set("A", 50, seed=2).sentences


def test_heuristics_on_hand_made_numbers():
    s = AgreementSet("A", [["x"]] * 4, target=[0] * 4, label=[0, 0, 1, 1], attractors=[1, 2, 0, 1], depth=[2, 2, 2, 3],
                     numbers=[[0, 1, 0], [0, 1, 1], [1, 1, 1], [1, 0, 0, 1]])
    assert heuristic_answers(s, "nearest_noun").tolist() == [0, 1, 1, 1]
    assert heuristic_answers(s, "majority_number").tolist() == [0, 1, 1, 1]   # 2 vs 2: the nearest noun's
    with pytest.raises(ValueError, match="unknown heuristic"):
        heuristic_answers(s, "first_noun")


def test_heuristics_fail_when_attractors_pile_up():
    """Neither surface heuristic can be right when every stack noun is an attractor (k = d)."""
    s = agreement_set("A", 600, seed=0, depth=(1, 2, 3, 4))
    k, d, y = np.array(s.attractors), np.array(s.depth), np.array(s.label)
    for h in ("nearest_noun", "majority_number"):
        ok = heuristic_answers(s, h) == y
        assert not ok[k == d].any() and ok[k == 0].all()


def test_attractor_slope_and_the_stronger_heuristic():
    acc = pd.DataFrame({"seed": [0, 0, 0, 1, 1, 1] * 2, "k": ["0", "1", "2"] * 4,
                        "reader": ["spcn"] * 6 + ["nearest_noun"] * 6,
                        "accuracy": [1.0, 0.9, 0.8, 1.0, 0.8, 0.6, 1.0, 0.5, 0.0, 1.0, 0.5, 0.0]})
    assert np.allclose(attractor_slope(acc, "spcn"), [-0.1, -0.2])
    maj = acc[acc.reader == "nearest_noun"].assign(reader="majority_number", accuracy=[1.0, 0.7, 0.1] * 2)
    best = heuristic_accuracy(pd.concat([acc, maj]))
    assert best.reader.unique().tolist() == ["heuristic"]
    assert best.sort_values(["seed", "k"]).accuracy.tolist() == [1.0, 0.7, 0.1] * 2
    with pytest.raises(ValueError, match="two or more k"):
        attractor_slope(acc[acc.k == "0"], "spcn")
