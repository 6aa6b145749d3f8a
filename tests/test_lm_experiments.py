"""Notebooks 03 and 04's mechanics: the dev split, the learning-rate choice, the verdicts, the profiles."""
from __future__ import annotations

import pandas as pd
import pytest

from paper_lib.data.corpus import Corpus
from paper_lib.data.lm_data import split_dev
from paper_lib.experiments import predictor_ablation as pa
from paper_lib.experiments import spen_train as st
from paper_lib.lm_recipe import lr_for


def test_dev_articles_leave_the_training_split():
    corpus = Corpus("c", [f"doc{i}" for i in range(10)], ["held"])
    train, dev = split_dev(corpus, 4)
    assert dev == ["doc0", "doc4", "doc8"]
    assert train.train == ["doc1", "doc2", "doc3", "doc5", "doc6", "doc7", "doc9"]
    assert train.validation == ["held"] and not set(dev) & set(train.train)
    with pytest.raises(ValueError, match="dev_every must be >= 2"):
        split_dev(corpus, 1)


def test_choose_lr_takes_the_lowest_dev_loss_and_flags_the_edge():
    sweep = pd.DataFrame({"model": ["spen"] * 3 + ["transformer"] * 3, "lr": [1e-3, 2e-3, 4e-3] * 2,
                          "val_loss": [5.0, 4.8, 4.9, 5.5, 5.4, 5.3], "tokens": 100})
    chosen = st.choose_lr(sweep)
    assert chosen["spen"] == {"lr": 2e-3, "val_loss": 4.8, "at_edge": False}
    assert chosen["transformer"]["lr"] == 4e-3 and chosen["transformer"]["at_edge"]


def test_profiles_configure_and_check_checkpoints():
    paper = st.settings_for("paper")
    assert (paper.data.tokenizer, paper.data.vocab_size, paper.data.corpus) == ("gpt2", 50257, "c4")
    assert (paper.spen.vocab_size, paper.transformer.vocab_size, paper.spen.n_layer, paper.transformer.n_head) == (50257, 50257, 12, 12)
    assert max(paper.eval_at) < paper.train.steps
    cpu = st.settings_for("cpu")
    assert (cpu.data.vocab_size, cpu.spen.d_model, cpu.train.seq_len, cpu.train.steps) == (2048, 128, 128, 600)
    with pytest.raises(ValueError, match=r"eval_at steps \[700\] lie outside \[1, train.steps=600\]"):
        st.settings_for("cpu", {"eval_at": [100, 700]})
    assert pa.settings_for("paper").data.tokenizer == "gpt2"


def test_cpu_learning_rates_are_the_recorded_sweeps_choice():
    chosen = st.choose_lr(st.RECORDED_SWEEP)
    cpu = st.settings_for("cpu")
    assert cpu.sweep_steps == 0
    assert st.learning_rates(cpu) == {k: chosen[k]["lr"] for k in ("spen", "transformer")}
    ablation = pa.settings_for("cpu")
    assert {k: lr_for(k, ablation) for k in ("spen", "transformer")} == st.learning_rates(cpu)


def test_rotary_metrics_read_the_last_step_of_each_arm_and_the_best_rotary_score():
    rows = [(arm, pos, step, score, 5.0 + step / 1000) for arm, pos, scores in
            (("rotary, text", "rotary", (0.1, 1.2, 0.3)), ("rotary, repeated spans", "rotary", (0.2, 0.4, 0.5)),
             ("learned, repeated spans", "learned", (2.0, 3.0, 4.0)))
            for step, score in zip((600, 250, 500), scores, strict=True)]           # steps out of order
    curves = pd.DataFrame(rows, columns=["arm", "positions", "step", "induction_score", "val_loss"])
    m = st.rotary_metrics(curves)
    assert m == {"rotary_induction_score": [0.1], "rotary_val_loss": [5.6], "rotary_span_induction_score": [0.2],
                 "learned_span_induction_score": [2.0], "rotary_best_induction_score": [1.2]}  # learned's 4.0 not counted


def test_the_rotary_try_runs_at_cpu_and_smoke_and_not_at_paper():
    assert st.settings_for("cpu").rotary_try and st.settings_for("smoke").rotary_try
    assert not st.settings_for("paper").rotary_try
    assert [p for _, p, _ in st.ROTARY_ARMS] == ["rotary", "rotary", "learned"]
    with pytest.raises(ValueError, match=r"rotary_span_len=\[1, 8\]: every value must be >= 2"):
        st.settings_for("cpu", {"rotary_span_len": [1, 8]})
