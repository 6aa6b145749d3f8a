"""Notebook 05's experiment module and the GRU language model it adds to build_model."""
from __future__ import annotations

import math

import pandas as pd
import pytest
import torch
from torch import nn

from paper_lib.data.mqar import MQARTask, sample_mqar
from paper_lib.experiments import associative_recall as ar
from paper_lib.experiments import recall_tables as rt
from paper_lib.models.factory import build_model
from paper_lib.models.lm import count_params


def test_settings_profiles_and_errors():
    assert ar.settings_for("cpu") == ar.Settings()
    smoke = ar.settings_for("smoke")
    assert smoke.steps < ar.Settings().steps and len(smoke.seeds) >= 2
    paper = ar.settings_for("paper")
    assert max(paper.n_pairs) == 64 and paper.d_model > ar.Settings().d_model
    with pytest.raises(ValueError, match=r"^unknown model\(s\) mamba; allowed: spen_linear, "):
        ar.settings_for("smoke", {"models": ["mamba"]})
    with pytest.raises(ValueError, match=r"^lrs must list at least 3 learning rates to choose from, got \[0.001\]$"):
        ar.settings_for("cpu", {"lrs": [1e-3]})
    with pytest.raises(ValueError, match=r"^MQAR n_pairs \(40\) exceeds n_keys \(8\)"):
        ar.settings_for("cpu", {"n_pairs": [4, 40]})
    with pytest.raises(ValueError, match=r"^unknown setting\(s\) associative_recall.step; allowed: models, "):
        ar.settings_for("cpu", {"step": 3})


def test_every_model_builds_at_one_budget_and_is_causal():
    s = ar.settings_for("cpu", {"models": ["spen_linear", "spen_selective", "spen_token_attention", "transformer",
                                           "gru", ar.ORACLE]})
    V = ar.task(s).vocab_size
    budget = ar.budget_table(s, V)
    assert list(budget.model) == list(s.models)
    matched = budget[~budget.model.isin(["gru", "spen_selective", ar.ORACLE])]  # those two: matched on state
    assert matched.vs_transformer.abs().max() < 0.25            # one budget: within 25% of the Transformer
    state = budget.set_index("model").state_numbers
    assert state["gru"] == state["spen_linear"] == 2 * 3 * 64 and state[ar.ORACLE] == 3 * 64
    assert state["spen_selective"] == 2 * state["spen_linear"]  # its learned state equals the traces beside them
    x = torch.randint(V, (2, 12))
    for name in [m for m in ar.MODELS if m != ar.ORACLE]:
        model = ar.build(name, s, V, d_model=32, seed=0).eval()
        logits, _ = model(x)
        assert logits.shape == (2, 12, V)
        y = x.clone()
        y[:, 7] = (y[:, 7] + 1) % V
        assert torch.allclose(model(y)[0][:, :7], logits[:, :7], atol=1e-5), name
    with pytest.raises(ValueError, match=r"^unknown model 'spen_oja'; allowed: "):
        ar.build("spen_oja", s, V)


def test_gru_lm_is_registered_with_its_state_width():
    m = build_model("gru", seed=0, vocab_size=20, n_layer=2, d_model=16, d_state=24, d_ff=32, block_size=8)
    assert m.kind == "gru" and m.blocks[0].gru.hidden_size == 24
    gru = 3 * (16 * 24 + 24 * 24 + 2 * 24)                       # PyTorch's GRU: 3 gates, two biases each
    block = 2 * 2 * 16 + gru + (24 * 16 + 16) + (16 * 32 + 32) + (32 * 16 + 16)
    assert count_params(m) == 20 * 16 + 2 * block + 2 * 16       # tied embedding, final LayerNorm
    with pytest.raises(ValueError, match=r"^GRUCausalConfig.d_state=-1: must be an integer >= 0$"):
        build_model("gru", vocab_size=20, d_state=-1)


def test_training_solves_one_pair_and_scores_only_answers():
    """One pair, answer at the blank after the query: any model that learns to copy the only value
    gets it right; chance among the 8 values is 0.125. A GRU learns it in a few hundred steps."""
    s = ar.settings_for("smoke", {"steps": 300, "warmup_steps": 10, "batch_size": 32, "delay": 1,
                                  "stop": {"check_every": 50, "tol": 0.04}, "val_sequences": 256})
    t = MQARTask(n_keys=8, n_values=8, n_queries=1, seq_len=6, delay=1)
    model = ar.build("gru", s, t.vocab_size, d_model=32, seq_len=6, seed=0)
    model, curve, stop = ar.train_recall(model, t, [1], s, lr=1e-2, steps=s.steps, seed=0)
    acc = ar.accuracy_by_pairs(model, t, [1], 256, ar.TEST_SEED)
    assert acc[1] > 0.9 and curve[-1]["train_loss"] < math.log(8) and stop.reason == "solved"
    assert stop.steps[0] == curve[-1]["step"] < 300             # solved at a check: it stops there


class _Lookup(nn.Module):
    """Reads single-hop MQAR exactly (the value paired with the key ``delay`` tokens back), or, with
    ``solve=False``, always answers the first value; one weight so that the optimiser has work."""

    def __init__(self, mqar: MQARTask, solve: bool):
        super().__init__()
        self.mqar, self.solve, self.w = mqar, solve, nn.Parameter(torch.zeros(()))

    def forward(self, idx, targets=None):
        K, V, d = self.mqar.n_keys, self.mqar.n_values, self.mqar.delay
        pair = (idx > K + V) & (idx <= K + V + K * V)                              # (B, T) pair tokens
        key, value = (idx - K - V - 1) // V + 1, (idx - K - V - 1) % V + K + 1      # (B, T) their key, value
        table = torch.zeros(idx.shape[0], K + 1, dtype=torch.long)                 # (B, K + 1) key -> value
        table.scatter_(1, torch.where(pair, key, 0), torch.where(pair, value, 0))
        asked = torch.roll(idx, d, dims=1).clamp(max=K) * (torch.roll(idx, d, dims=1) <= K)
        answer = table.gather(1, asked) if self.solve else torch.full_like(idx, K + 1)
        logits = 10 * nn.functional.one_hot(answer, self.mqar.vocab_size).float() + self.w
        loss = None if targets is None else nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


def test_a_run_stops_once_it_solves_the_task_and_never_on_the_chance_loss():
    """A model that solves the task stops at the first check; one that always answers the first value
    (worse than the keys-ignored guess: on the chance loss) runs to its cap, never stopped as flat."""
    s = ar.settings_for("smoke", {"stop": {"check_every": 3, "patience": 1, "tol": 0.2}, "val_sequences": 32})
    t = MQARTask(n_keys=8, n_values=8, n_queries=4, seq_len=16, delay=1, single_hop=True)
    solver = _Lookup(t, solve=True)
    assert ar.accuracy_by_pairs(solver, t, [2, 4], 64, ar.TEST_SEED) == {2: 1.0, 4: 1.0}
    stop = ar.train_recall(solver, t, [2, 4], s, lr=1e-3, steps=10, seed=0)[2]
    assert (stop.reason, stop.steps[0]) == ("solved", 3)
    stop = ar.train_recall(_Lookup(t, solve=False), t, [2, 4], s, lr=1e-3, steps=10, seed=0)[2]
    assert (stop.reason, stop.steps[0]) == ("never_left_plateau", 10)
    never = ar.settings_for("smoke", {"stop": {"check_every": 3, "patience": 2, "tol": 0.2, "solved": 1.5},
                                      "val_sequences": 32})
    stop = ar.train_recall(_Lookup(t, solve=True), t, [2, 4], never, lr=1e-3, steps=10, seed=0)[2]
    assert stop.reason == "flat" and stop.steps[0] == 9          # off the plateau, no gain over two checks


class _Oracle(nn.Module):
    """Answers every query right where its distance is below ``horizon``, else the blank token."""

    def __init__(self, mqar: MQARTask, horizon: int):
        super().__init__()
        self.mqar, self.horizon = mqar, horizon

    def forward(self, idx):
        b = sample_mqar(self.mqar, 2, idx.shape[0], ar.TEST_SEED)
        assert torch.equal(b.inputs, idx)
        answer = torch.where((b.targets >= 0) & (b.distance < self.horizon), b.targets, torch.zeros_like(b.targets))
        return nn.functional.one_hot(answer, self.mqar.vocab_size).float(), None


def test_accuracy_by_distance_bins_answers():
    t = MQARTask(n_keys=8, n_values=8, n_queries=2, seq_len=40, gap=(0, 30))
    df = ar.accuracy_by_distance(_Oracle(t, 16), t, 2, 200, bins=(0, 8, 16), seed=ar.TEST_SEED)
    assert list(df.distance_lo) == [0, 8, 16]
    assert df.accuracy.tolist()[:2] == [1.0, 1.0] and df.accuracy.iloc[2] == 0.0
    assert df.answers.sum() == 400


def test_recall_metrics_names_and_values():
    s = ar.settings_for("smoke", {"models": ["spen_linear", "transformer"], "n_pairs": [2, 4],
                                  "width_models": ["spen_linear"], "distance_models": ["transformer"]})
    rows = [{"model": m, "n_pairs": n, "d_model": s.d_model, "seed": seed, "accuracy": acc,
             "stop": "solved" if m == "transformer" else "cap_while_improving" if seed else "flat"}
            for m, acc in (("spen_linear", 0.5), ("transformer", 1.0)) for n in (2, 4) for seed in s.seeds]
    rows[0]["accuracy"] = 0.75                                  # spen_linear, N = 2, first seed
    rows.append({"model": "transformer", "n_pairs": 4, "d_model": 99, "seed": 0, "accuracy": 0.0, "stop": "flat"})
    m = ar.recall_metrics(pd.DataFrame(rows), s, {2: 0.6, 4: 0.4})
    assert set(m) == {"recall_acc_spen_linear", "recall_acc_transformer", "recall_acc_transformer_2",
                      "recall_acc_transformer_4", "recall_acc_spen_2", "recall_acc_spen_4",
                      "recall_drop_transformer", "recall_drop_spen", "recall_baseline_2", "recall_baseline_4",
                      "recall_state_gru", "recall_state_spen", "recall_cut_spen_linear_improving",
                      "recall_cut_spen_linear_plateau", "recall_cut_transformer_improving",
                      "recall_cut_transformer_plateau"}
    assert m["recall_cut_spen_linear_improving"] == [0.0] + [1.0] * (len(s.seeds) - 1)   # seeds after the first: cut
    assert m["recall_cut_transformer_improving"] == m["recall_cut_transformer_plateau"] == [0.0] * len(s.seeds)
    assert m["recall_baseline_4"] == [0.4] and m["recall_state_gru"] == m["recall_state_spen"] == [2 * 3 * s.d_model]
    assert m["recall_acc_transformer"] == [1.0] * len(s.seeds) and m["recall_acc_spen_4"] == [0.5] * len(s.seeds)
    assert m["recall_drop_spen"] == [0.25] + [0.0] * (len(s.seeds) - 1) and m["recall_drop_transformer"] == [0.0] * len(s.seeds)


def test_spen_selective_holds_a_learned_state_equal_to_the_traces():
    """SPEN-selective at equal state: S x d learned numbers per block beside the S x d traces."""
    s = ar.settings_for("smoke")
    V = ar.task(s).vocab_size
    model = ar.build("spen_selective", s, V, d_model=16, seed=3)
    assert [b.predictor.d_state for b in model.blocks] == [3 * 16] * s.n_layer
    again = ar.build("spen_selective", s, V, d_model=16, seed=3)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), again.parameters(), strict=True))
    assert ar.state_size("spen_selective", s, d_model=16) == s.n_layer * 2 * 3 * 16
    rows = [{"model": "spen_selective", "n_pairs": n, "d_model": s.d_model, "seed": seed, "accuracy": 0.5,
             "stop": "flat"} for n in s.n_pairs for seed in s.seeds]
    m = ar.recall_metrics(pd.DataFrame(rows), ar.settings_for("smoke", {"models": ["spen_selective", ar.ORACLE],
                                                                        "width_models": [], "distance_models": []}))
    assert m["recall_acc_spen_selective_4"] == [0.5] * len(s.seeds)
    assert m["recall_state_oracle"] == [3 * s.d_model] and m["recall_state_spen"] == [s.n_layer * 3 * s.d_model]
    assert m["recall_state_spen_selective"] == [2 * m["recall_state_spen"][0]]
    with pytest.raises(ValueError, match=r"^selective d_state must be an integer >= 1 or None, got 0$"):
        from paper_lib.predictors import SelectivePredictor
        SelectivePredictor(model.config, d_state=0)


def test_worker_processes_give_the_same_rows_as_one_process():
    few = {"width_models": ["spen_linear"], "distance_models": ["transformer"]}
    s = ar.settings_for("smoke", {"models": ["transformer", "spen_linear"], "steps": 3, **few})
    jobs = [("pairs", m, s.d_model, seed, 1e-3) for m in s.models for seed in s.seeds]
    one, curves = ar.run_jobs(s, jobs)
    two, again = ar.run_jobs(ar.settings_for("smoke", {"models": ["transformer", "spen_linear"], "steps": 3,
                                                       "workers": 2, **few}), jobs)
    assert len(one) == len(jobs) * len(s.n_pairs) and {r["stop"] for r in one} <= {"never_left_plateau", "flat",
                                                                                 "cap_while_improving", "solved"}
    assert pd.DataFrame(one).equals(pd.DataFrame(two)) and pd.DataFrame(curves).equals(pd.DataFrame(again))


def _distance_rows(acc_near: dict, acc_far: dict) -> pd.DataFrame:
    rows = []
    for m in acc_near:
        rows += [{"model": m, "seed": 0, "distance_lo": 0, "distance_hi": 32, "accuracy": acc_near[m], "answers": 10},
                 {"model": m, "seed": 0, "distance_lo": 64, "distance_hi": 128, "accuracy": acc_far[m], "answers": 10}]
    return pd.DataFrame(rows)


def test_distance_paragraph_needs_both_controls_and_a_learner():
    s = ar.settings_for("cpu")                                # horizon 50 tokens
    failed_control = _distance_rows({"spen_linear": 0.1, "transformer": 0.37, "spen_token_attention": 1.0},
                                    {"spen_linear": 0.13, "transformer": 0.36, "spen_token_attention": 1.0})
    text = rt.distance_paragraph(failed_control, s, chance=0.4)
    assert "**Not informative at this budget:** positive control(s) below 0.95" in text and "transformer 0.37 / 0.36" in text
    assert not rt.retention_informative(failed_control, s)[0]
    far_fails = _distance_rows({"spen_linear": 0.9, "spen_token_attention": 1.0}, {"spen_linear": 0.4,
                                                                                  "spen_token_attention": 0.5})
    assert "spen_token_attention 1.00 / 0.50" in rt.retention_informative(far_fails, s)[1]
    unlearned = _distance_rows({"spen_linear": 0.42, "transformer": 1.0}, {"spen_linear": 0.40, "transformer": 1.0})
    assert "**Not informative** for `spen_linear`: at or near the baseline" in rt.distance_paragraph(unlearned, s, 0.4)
    readable = _distance_rows({"spen_linear": 0.8, "transformer": 1.0}, {"spen_linear": 0.41, "transformer": 1.0})
    text = rt.distance_paragraph(readable, s, 0.4)
    assert "`spen_linear`: 0.80 at distances up to about 50 tokens, 0.41 beyond" in text and "Not informative" not in text
    below = _distance_rows({"spen_linear": 0.1, "transformer": 1.0}, {"spen_linear": 0.1, "transformer": 1.0})
    assert "0.10 at distances up to about 50 tokens, 0.10 beyond (below chance)" in rt.distance_paragraph(below, s, 0.4)


def test_capacity_is_the_largest_n_recalled_per_state():
    rows = [{"model": "spen_linear", "n_pairs": n, "d_model": d, "seed": 0, "accuracy": a, "state_size": 6 * d}
            for d, accs in ((32, (0.95, 0.5, 0.3)), (64, (1.0, 0.92, 0.89)))
            for n, a in zip((2, 4, 8), accs, strict=True)]
    rows += [{"model": "oracle", "n_pairs": n, "d_model": 32, "seed": 1, "accuracy": 0.2, "state_size": 96}
             for n in (2, 4, 8)]
    cap = rt.capacity_table(pd.DataFrame(rows))
    assert cap[["model", "state_size", "n_star", "seed"]].values.tolist() == [
        ["oracle", 96, 0, 1], ["spen_linear", 192, 2, 0], ["spen_linear", 384, 4, 0]]
    text = rt.capacity_paragraph(cap, (2, 4, 8))
    assert "`spen_linear` 2 at 192 numbers, 4 at 384 numbers (grows with the state)" in text
    assert "**Not informative:** no attention model recalls N = 8 at every width" in text
    attn = [{"model": "spen_token_attention", "n_pairs": n, "d_model": d, "seed": 0, "accuracy": 1.0,
             "state_size": 100 * d} for d in (32, 64) for n in (2, 4, 8)]
    full = rt.capacity_table(pd.DataFrame(rows + attn))
    assert rt.capacity_informative(full, (2, 4, 8)) == (True, "")
    flat = full.assign(n_star=8)                                   # every model at the grid's edge
    assert rt.capacity_informative(flat, (2, 4, 8)) == (
        False, "every fixed-state model recalls N = 8 at every width (the grid saturates)")
    assert "(at the grid's edge at every state)" in rt.capacity_paragraph(flat, (2, 4, 8))


@pytest.mark.parametrize("key, value", [("steps", -1), ("steps", 0), ("d_model", -5), ("workers", 0),
                                        ("steps", "many"), ("batch_size", True)])
def test_counts_below_one_are_refused_before_anything_runs(key, value):
    with pytest.raises(ValueError, match=rf"^associative_recall\.{key}={value!r}: must be an integer >= 1$"):
        ar.settings_for("smoke", {key: value})


def test_the_state_budget_comes_from_the_readers_facts():
    """Numbers of state per sequence at the cpu sizes (2 blocks, width 64, 3 rates, 24 tokens):
    the fixed traces, plus what each reader keeps beside them (its ``added_state``)."""
    s = ar.settings_for("cpu")
    sizes = {m: ar.state_size(m, s) for m in ("spen_linear", "spen_selective", "spen_token_attention",
                                              "spen_history_attention", "transformer", "gru", "oracle")}
    assert sizes == {"spen_linear": 384, "spen_selective": 768, "spen_token_attention": 6528,
                     "spen_history_attention": 6528, "transformer": 6144, "gru": 384, "oracle": 192}
    assert ar.settings_for("paper").models == ar.MODELS                       # (): every model there is
