"""The causal GRU tagger without word dropout, and the bank's lag oracle, at tiny sizes."""
from __future__ import annotations

from dataclasses import replace

import torch

from paper_lib.data.grammar import GrammarConfig, generate, make_split
from paper_lib.data.structure import split_columns
from paper_lib.experiments.transfer import _controls_stage, _token_table, settings_for
from paper_lib.models.gru import BiGRUConfig, BiGRUTagger, train_bigru
from paper_lib.models.spcn import SPCN


def _unk_row_moves(word_dropout: float) -> bool:
    train, _ = make_split("A", 30, 1, seed=0)
    cfg = BiGRUConfig(d_embed=8, d_hidden=8, epochs=2, batch_size=8, word_dropout=word_dropout, bidirectional=False)
    model, vocab, _ = train_bigru(train.sentences, train.roles, cfg)
    torch.manual_seed(cfg.seed)                       # train_bigru seeds its initialisation the same way
    init = BiGRUTagger(len(vocab), cfg).embed.weight[1]
    return not torch.equal(model.embed.weight[1].detach(), init.detach())


def test_without_word_dropout_unk_stays_untrained():
    assert not _unk_row_moves(0.0)                   # <unk> never occurs in training: no gradient
    assert _unk_row_moves(0.3)                       # with word dropout it is learned


def test_controls_stage_writes_both_causal_taggers():
    s = settings_for("smoke", {"data": {"n_train": 40}, "seeds": [0], "bigru": {"d_embed": 8, "d_hidden": 16, "epochs": 3, "lr": 0.02},
                               "spcn": {"d_code": 32, "n_columns": 2, "column_size": 8, "epochs": 1}})
    gcfg = GrammarConfig(max_depth=s.data.max_depth)
    train, test_a = make_split("A", s.data.n_train, 20, 0, gcfg)
    evals = {"A": test_a, "B": generate("B", 20, 0, gcfg)}
    tokens = {g: _token_table(c, 0).assign(**split_columns(c.sentences, c.roles, gcfg)) for g, c in evals.items()}
    spcn = SPCN(replace(s.spcn, seed=0)).fit(train.sentences)
    _controls_stage(s, 0, spcn, train, evals, tokens, progress=False)
    for g, c in evals.items():
        for col in ("ok_gru_causal", "ok_causal_gru_nodrop"):
            assert tokens[g][col].dtype == bool and len(tokens[g][col]) == c.n_tokens
    assert tokens["A"].ok_causal_gru_nodrop.mean() > 0.3                # it learned the seen words
    b = tokens["B"]
    assert not b.ok_gru_causal.equals(b.ok_causal_gru_nodrop)        # a different baseline, not a copy
    assert set(b.struct_split) <= {"", "function word", "context", "category"}
    assert (b.struct_split == "context").any() and (b.struct_split == "category").any()
