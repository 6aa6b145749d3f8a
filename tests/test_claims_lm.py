"""The language-model family's claims (notebooks 03 and 04): each rule and gate reaching its verdicts."""
from __future__ import annotations

from paper_lib.claims.lm import CLAIMS


def _s(mean, ci=0.01, n=5):
    return {"mean": mean, "ci95": ci, "n": n}


def test_perplexity_gap_not_informative_near_unigram():
    near = {"ppl_ratio": _s(0.7), "spen_val_ppl": _s(705.0), "transformer_val_ppl": _s(1030.0),
            "unigram_val_loss": _s(7.30), "spen_val_loss": _s(6.56), "transformer_val_loss": _s(6.94)}
    v = CLAIMS.verdict("ppl_gap", near, "cpu")
    assert v.holds == "not informative at this budget"
    assert "not 1 nat below the unigram loss 7.30: spen 6.56, transformer 6.94" in v.reason
    learned = {**near, "spen_val_loss": _s(4.55), "transformer_val_loss": _s(5.14), "ppl_ratio": _s(0.55),
               "bigram_val_loss": _s(5.5), "transformer_induction_score": _s(2.0)}
    assert CLAIMS.verdict("ppl_gap", learned, "cpu").holds == "no"                          # informative, ratio < 1.5
    no_copy = CLAIMS.verdict("ppl_gap", {**learned, "transformer_induction_score": _s(0.01)}, "cpu")
    assert no_copy.holds == "not informative at this budget" and "in-context copying" in no_copy.reason

def test_ablation_needs_an_unbounded_reader_to_win():
    tie = {"loss_linear": _s(6.65), "loss_linear_attention": _s(6.59), "loss_softmax_attention": _s(6.59),
           "loss_token_attention": _s(6.60), "loss_history_attention": _s(6.62), "loss_transformer": _s(6.9),
           "induction_transformer": _s(2.0), "bigram_val_loss": _s(7.0)}
    v = CLAIMS.verdict("ablation", tie, "cpu")
    assert v.holds == "not informative at this budget" and "no unbounded reader beats" in v.reason
    power = {**tie, "loss_token_attention": _s(5.9)}
    assert CLAIMS.verdict("ablation", power, "cpu").holds == "yes"                          # spread 0.9% <= 2%
    assert CLAIMS.verdict("ablation", {**power, "loss_linear": _s(6.95)}, "cpu").holds == "no"      # spread 5.4%
    assert CLAIMS.verdict("ablation", {**power, "loss_linear": _s(6.85)}, "cpu").holds == "partly"  # spread 3.9%
