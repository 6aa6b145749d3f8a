"""Word codes that learning can reach: the Hebbian context rule, its backprop
ceiling, the category oracle, SPCN reading given codes, and the B content-word readout."""
import numpy as np
import pytest

from paper_lib.data.grammar import LEXICONS, generate
from paper_lib.experiments.grammar_probe import CODE_READOUTS, code_learning_readouts, settings_for
from paper_lib.models.learned_codes import (
    CodeLearningConfig,
    backprop_codes,
    category_codes,
    hebbian_codes,
    select_backprop_codes,
)
from paper_lib.models.spcn import SPCN, SPCNConfig, word_code


@pytest.fixture(scope="module")
def pool():
    return generate("A", 150, seed=0).sentences + generate("B", 150, seed=0).sentences


def _same_category_share(codes):
    """Share of B content words whose nearest A content word (cosine) is of the same category."""
    cat = {w: c for g in "AB" for c, ws in LEXICONS[g].items() for w in ws}
    a = [w for ws in LEXICONS["A"].values() for w in ws if w in codes]
    b = [w for ws in LEXICONS["B"].values() for w in ws if w in codes]
    sims = np.stack([codes[w] for w in b]) @ np.stack([codes[w] for w in a]).T
    return np.mean([cat[b[i]] == cat[a[j]] for i, j in enumerate(sims.argmax(1))])


def test_hebbian_codes_carry_the_category_across_grammars(pool):
    fixed = hebbian_codes(pool, 0, 64, CodeLearningConfig(epochs=0))
    assert fixed["dog"] == pytest.approx(word_code("dog", 0, 64))               # no pass: the fixed codes
    learned = hebbian_codes(pool, 0, 64)
    assert set(learned) == {w for s in pool for w in s}
    assert all(np.linalg.norm(c) == pytest.approx(1.0, abs=1e-5) and c.shape == (64,) for c in learned.values())
    assert _same_category_share(fixed) < 0.4                                    # random codes: no category
    assert _same_category_share(learned) > 0.75                                 # a B noun lands among A's nouns
    again = hebbian_codes(pool, 0, 64)
    np.testing.assert_array_equal(learned["truck"], again["truck"])              # the same twice


def test_backprop_codes_lower_the_next_word_loss_and_repeat(pool):
    cfg, few = CodeLearningConfig(bp_epochs=2, bp_batch_size=8, bp_objective="next_word"), pool[130:170]  # A and B
    codes, hist = backprop_codes(few, 0, 32, cfg)
    assert len(hist) == 2 and hist[-1] < hist[0] - 0.3                            # nats per token
    np.testing.assert_array_equal(codes["the"], backprop_codes(few, 0, 32, cfg)[0]["the"])


def test_cloze_ceiling_learns_codes_from_both_sides(pool):
    """The default ceiling fills a word in from both sides; its codes move B's content words toward
    A's of the same category (random codes: under 0.4), and the fill-in loss falls."""
    assert CodeLearningConfig().bp_objective == "cloze"
    codes, hist = backprop_codes(pool, 0, 64, CodeLearningConfig(bp_lr=0.1))
    assert hist[-1] < hist[0] - 2.0                                             # nats per token, 8 passes
    assert _same_category_share(codes) > 0.6
    with pytest.raises(ValueError, match=r"^unknown bp_objective 'mlm'; allowed: cloze, next_word$"):
        CodeLearningConfig(bp_objective="mlm")


def test_category_oracle_and_bad_input():
    oracle = category_codes(0, 16)
    np.testing.assert_array_equal(oracle["truck"], word_code("dog", 0, 16))      # first animate of B and of A
    assert "the" not in oracle
    with pytest.raises(ValueError, match="mix must lie in"):
        CodeLearningConfig(mix=1.0)
    with pytest.raises(ValueError, match="bp_alpha must lie in"):
        CodeLearningConfig(bp_alpha=0.0)
    with pytest.raises(ValueError, match="no empty sentence"):
        hebbian_codes([["the", "dog"], []], 0, 16)
    with pytest.raises(ValueError, match="unknown grammar"):
        category_codes(0, 16, target="C")


def test_spcn_reads_given_codes_and_rejects_bad_ones():
    cfg = SPCNConfig(d_code=16, n_columns=4, column_size=8)
    code = np.ones(16, np.float32) / 4
    x, _ = SPCN(cfg, codes={"dog": code}).encode([["the", "dog"]])
    np.testing.assert_array_equal(x[0, 1].numpy(), code)
    np.testing.assert_array_equal(x[0, 0].numpy(), word_code("the", 0, 16))       # others keep the hash code
    with pytest.raises(ValueError, match="must be a finite \\(16,\\) vector"):
        SPCN(cfg, codes={"dog": np.ones(8)})


def test_b_content_readout_at_smoke():
    s = settings_for("smoke")
    from dataclasses import replace

    from paper_lib.data.grammar import make_split
    train, _ = make_split("A", s.data.n_train, s.data.n_test, 0)
    spcn = SPCN(replace(s.spcn, seed=0)).fit(train.sentences)
    r = code_learning_readouts(s, 0, train, spcn)
    assert tuple(r["acc"]) == CODE_READOUTS and r["n_content"] > 100
    assert r["acc"]["codes_floor"] == pytest.approx(0.216, abs=0.01)            # fixed codes: context alone
    assert r["acc"]["codes_category"] > r["acc"]["codes_floor"] + 0.3           # the oracle: the readout can
    assert r["acc"]["codes_hebbian"] > r["acc"]["codes_floor"] + 0.1


def test_select_backprop_codes_keeps_the_step_size_with_the_lowest_held_out_loss(pool):
    from paper_lib.models.learned_codes import _held_out_loss, _train_codes
    train, held = pool[130:170], pool[170:200]                                    # disjoint; B sentences held out
    cfg = CodeLearningConfig(bp_epochs=1, bp_batch_size=8, bp_lr_grid=(0.001, 0.03, 3.0))
    out = select_backprop_codes(train, held, 0, 32, cfg)
    losses = out["held_out_loss"]
    assert list(losses) == [0.001, 0.03, 3.0] and out["lr"] == min(losses, key=losses.get)
    assert out["lr"] == 0.03 and losses[0.03] < losses[0.001] - 0.1              # too small and too large lose
    vocab, net, _ = _train_codes(train, 0, 32, CodeLearningConfig(bp_epochs=1, bp_batch_size=8, bp_lr=0.03))
    kept = [s for s in held if set(s) <= set(vocab)]
    assert losses[0.03] == pytest.approx(_held_out_loss(net, vocab, kept))        # the loss it compared
    np.testing.assert_array_equal(out["codes"]["the"], select_backprop_codes(train, held, 0, 32, cfg)["codes"]["the"])
    with pytest.raises(ValueError, match="held-out sentences"):
        select_backprop_codes(train, [["zebra", "flies"]], 0, 32, cfg)
    with pytest.raises(ValueError, match="bp_lr_grid must hold"):
        CodeLearningConfig(bp_lr_grid=())
