"""In-context scores (paper_lib.in_context) and the gate that reads them."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from paper_lib.claims.lm import CLAIMS, copies_in_context
from paper_lib.in_context import in_context_score, induction_score, loss_by_position, repeated_span_stream
from paper_lib.pipeline.report import decide, summarise
from paper_lib.pipeline.rules import first_gate

V = 1000


class Copier(nn.Module):
    """A perfect induction head: after token a, predict what followed a's previous occurrence."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def forward(self, idx):
        B, T = idx.shape
        logits = torch.zeros(B, T, V)
        for b in range(B):
            for t in range(T):
                prev = [j for j in range(t) if idx[b, j] == idx[b, t]]
                if prev:
                    logits[b, t, idx[b, prev[-1] + 1]] = 30.0
        return logits, None


class Unigram(nn.Module):
    """Constant logits: no use of context at all."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(V))

    def forward(self, idx):
        return self.w.expand(*idx.shape, V), None


def test_a_copier_scores_near_ln_v_and_a_context_free_model_scores_zero():
    copy = induction_score(Copier(), V, length=12, n_seqs=4)
    assert copy["first_loss"] == pytest.approx(math.log(V), abs=1e-4)   # no repeat inside a copy of 12 of 1000 tokens
    assert copy["second_loss"] < 1e-6 and copy["induction_score"] > 0.9 * math.log(V)
    flat = induction_score(Unigram(), V, length=12, n_seqs=4)
    assert flat["first_loss"] == pytest.approx(math.log(V)) and flat["induction_score"] == pytest.approx(0.0, abs=1e-6)


def test_induction_score_is_seeded_and_leaves_the_global_rng_alone():
    torch.manual_seed(3)
    before = torch.rand(1)
    torch.manual_seed(3)
    a = induction_score(Copier(), V, length=8, n_seqs=2, seed=5)
    assert torch.rand(1) == before and a == induction_score(Copier(), V, length=8, n_seqs=2, seed=5)


def test_induction_length_must_fit_the_block():
    model = Unigram()
    model.config = type("C", (), {"block_size": 16})()
    with pytest.raises(ValueError, match=r"^induction length must be >= 2 with 2 \* length - 1 <= block_size=16, got 9$"):
        induction_score(model, V, length=9)


def test_position_scores_from_per_token_losses():
    per_pos = np.linspace(4.0, 2.0, 8)                                 # loss falls with context
    token_loss = np.tile(per_pos, 3)                                   # 3 windows of seq_len 8
    assert in_context_score(token_loss, 8) == pytest.approx(per_pos[:2].mean() - per_pos[-2:].mean())
    bins = loss_by_position(token_loss, 8, n_bins=4)
    assert bins.position_lo.tolist() == [0, 2, 4, 6] and bins.loss.iloc[0] == pytest.approx(per_pos[:2].mean())
    with pytest.raises(ValueError, match="does not hold whole windows"):
        in_context_score(token_loss[:-1], 8)


def _m(**kw):
    return summarise({k: [v, v] for k, v in kw.items()})


@pytest.mark.parametrize("metrics, reason", [
    (dict(transformer_val_loss=4.0, bigram_val_loss=4.8), "no induction score measured (transformer_induction_score)"),
    (dict(transformer_induction_score=0.01, transformer_val_loss=4.0, bigram_val_loss=4.8),
     "the Transformer has not learned in-context copying: induction score 0.01 nats < 1"),
    (dict(transformer_induction_score=2.0, transformer_val_loss=5.21, bigram_val_loss=4.81),
     "the Transformer (5.21 nats) is not below the counted bigram line (4.81)"),
    (dict(transformer_induction_score=2.0, transformer_val_loss=4.0, bigram_val_loss=4.81), None),
])
def test_the_in_context_gate_has_a_branch_for_each_failure(metrics, reason):
    assert copies_in_context("transformer_induction_score", "transformer_val_loss")(_m(**metrics)) == reason


def test_first_gate_reports_the_first_failure_in_order():
    never, always = (lambda m: None), (lambda m: "a")
    assert first_gate(never, always, lambda m: "b")({}) == "a" and first_gate(never, never)({}) is None


def test_the_8x_row_is_not_informative_while_the_transformer_does_not_copy():
    base = dict(ppl_ratio=0.54, spen_val_ppl=100.0, transformer_val_ppl=180.0, spen_val_loss=4.6,
                transformer_val_loss=4.0, unigram_val_loss=6.6, bigram_val_loss=4.8)
    claim = CLAIMS["ppl_gap"]
    weak = decide(claim, _m(**base, transformer_induction_score=0.01), "cpu")
    assert weak.holds == "not informative at this budget" and "in-context copying" in weak.reason
    strong = decide(claim, _m(**base, transformer_induction_score=3.0), "cpu")
    assert strong.holds == "no"                                         # decided by the rule: ratio 0.54 < 1.5
    ablation = decide(CLAIMS["ablation"], _m(loss_linear=5.0, loss_linear_attention=5.0,
                                                    loss_softmax_attention=5.0, loss_transformer=4.0,
                                                    induction_transformer=0.2, bigram_val_loss=4.8), "cpu")
    assert ablation.holds == "not informative at this budget" and "in-context copying" in ablation.reason


def _pairs(stream: np.ndarray, vocab: int) -> list[np.ndarray]:
    """The runs of tokens below ``vocab`` (the spans, text ids lie above) in order."""
    low = stream < vocab
    edges = np.flatnonzero(np.diff(np.r_[0, low.astype(int), 0]))
    return [stream[a:b] for a, b in zip(edges[::2], edges[1::2], strict=True)]


def test_repeated_span_stream_holds_each_span_twice_and_the_text_in_order():
    text = np.arange(500, 900, dtype=np.uint16)                          # text ids above the span vocabulary
    s = repeated_span_stream(text, 100, 20_000, span_share=0.4, span_len=(5, 9), seed=1)
    assert s.dtype == np.uint16 and len(s) == 20_000
    assert abs(float((s < 100).mean()) - 0.4) < 0.05 and s[s < 100].min() >= 1
    runs = _pairs(s, 100)[:-1]                                           # the last may be cut at n_tokens
    assert len(runs) > 100
    for run in runs:                                                     # [span, span]: an even run, halves equal
        n = len(run) // 2
        assert len(run) % 2 == 0 and 5 <= n <= 9 and np.array_equal(run[:n], run[n:])
    seg = s[s >= 500]
    assert np.array_equal(seg, text[np.arange(len(seg)) % len(text)])   # the text, in order, wrapped
    assert np.array_equal(s, repeated_span_stream(text, 100, 20_000, span_share=0.4, span_len=(5, 9), seed=1))
    assert not np.array_equal(s, repeated_span_stream(text, 100, 20_000, span_share=0.4, span_len=(5, 9), seed=2))


def test_a_copier_predicts_every_second_copy_of_a_pure_span_stream():
    s = repeated_span_stream(np.zeros(0, dtype=np.int64), V, 2_000, span_share=1.0, span_len=(12, 12))
    assert (s >= 1).all() and (s < V).all()
    idx = torch.as_tensor(s[:240].astype(np.int64))[None]                # ten whole pairs of 12 + 12
    logits, _ = Copier()(idx[:, :-1])
    hit = logits.argmax(-1)[0] == idx[0, 1:]
    second = torch.tensor([(t + 1) % 24 >= 13 for t in range(239)])    # targets 13..23 of each pair of 24
    assert hit[second].all() and hit[~second].float().mean() < 0.2


@pytest.mark.parametrize("kwargs, message", [
    (dict(span_share=0.0), r"span_share must lie in \(0, 1\]"),
    (dict(span_len=(1, 4)), r"span_len must be \(lo, hi\) with 2 <= lo <= hi"),
    (dict(span_share=0.5, text=np.zeros(0, dtype=np.int64)), "text is empty"),
    (dict(low=V), "need 0 <= low < vocab_size"),
])
def test_repeated_span_stream_rejects_bad_settings(kwargs, message):
    args = dict(text=np.arange(10), vocab_size=V, n_tokens=100) | kwargs
    with pytest.raises(ValueError, match=message):
        repeated_span_stream(**args)
