"""Notebook 07's noisy models, its oracle and its experiment's bookkeeping."""
from __future__ import annotations

import pytest
import torch

from paper_lib.bounds.noise_budget import trace_gain
from paper_lib.bounds.update_oracle import UpdateOracleConfig, fit_update_oracle, oracle_features
from paper_lib.data.update_recall import UpdateTask, sample_update
from paper_lib.ema import ema_traces
from paper_lib.experiments import update_recall as ur
from paper_lib.models.noisy_states import NoisyAttention, NoisyGRULM, NoisyScanLM, NoisySPENBlock
from paper_lib.models.spen import SPENConfig
from paper_lib.models.transformer import CausalSelfAttention, TransformerConfig
from paper_lib.stopping import StopRule

A = (0.5, 0.1, 0.02)


def test_scan_with_fixed_rates_is_the_normalised_bank():
    torch.manual_seed(0)
    m = NoisyScanLM(81, d_embed=8, d_state=6, d_hidden=4, sigma=0.0)
    with torch.no_grad():
        m.rate.weight.zero_()
        m.rate.bias.copy_(torch.logit(torch.tensor([0.5, 0.1, 0.02] * 2)))
    e = torch.randn(2, 9, 8)
    v = torch.tanh(m.value(e))                                            # (B, T, 6) the code in [-1, 1]
    want = ema_traces(v, A)                                              # (B, T, 3, 6): every channel at every rate
    want = torch.stack([want[:, :, i % 3, i] for i in range(6)], -1) * trace_gain(A).float().repeat(2)
    assert torch.allclose(m.states(e), want, atol=1e-5)


def test_noise_is_drawn_in_training_and_test_and_seeded():
    x = sample_update(UpdateTask(), 2, 4, 0).inputs
    for cls in (NoisyScanLM, NoisyGRULM):
        torch.manual_seed(0)
        m = cls(81, d_embed=8, d_state=12, d_hidden=8, sigma=0.05).eval()
        torch.manual_seed(1)
        a = m(x)
        torch.manual_seed(1)
        assert torch.equal(a, m(x))                                      # the same seed: the same noise
        assert not torch.equal(a, m(x))                                  # noise in eval mode too
        m.sigma = 0.0
        assert torch.equal(m(x), m(x))


def test_noisy_spen_traces_and_attention_without_noise_are_the_plain_ones():
    cfg = SPENConfig(vocab_size=81, n_layer=1, d_model=8, d_ff=32, d_bottleneck=4, block_size=16)
    block = NoisySPENBlock(cfg, 0.0)
    u = torch.randn(2, 7, 8)
    assert torch.equal(block.traces(u), ema_traces(u, cfg.alphas, causal=True))
    assert not block.ln_1.elementwise_affine                             # no learned gain to buy precision
    tcfg = TransformerConfig(vocab_size=81, n_layer=1, d_model=16, n_head=2, d_ff=32, block_size=16)
    torch.manual_seed(0)
    plain = CausalSelfAttention(tcfg)
    noisy = NoisyAttention(tcfg, 0.0)
    noisy.load_state_dict(plain.state_dict())
    x = torch.randn(2, 5, 16)
    assert torch.allclose(noisy(x), plain(x))
    noisy.sigma = 0.1
    assert not torch.allclose(noisy(x), plain(x))


def test_oracle_features_and_a_short_fit():
    task = UpdateTask()
    b = sample_update(task, 2, 5, 0)
    x = oracle_features(b, task, A, 0.02, 1, 3)
    assert x.shape == (5, 3 * 81 + 8 * 3 + 8 + 3) and (x[:, -3:].argmax(1) == 1).all()
    cfg = UpdateOracleConfig(hidden=8, batch_size=10, max_steps=6, val_sequences=8)
    _, curve, info = fit_update_oracle(task, (2, 8), A, 0.02, cfg, seed=0, rule=StopRule(check_every=2, patience=1,
                                                                                         tol=0.2))
    assert {r["gap"] for r in curve} == {2, 8} and info["steps"] <= 6 and set(info) == {"steps", "stop"}
    assert info["stop"] in ("never_left_plateau", "cap_while_improving", "flat")
    with pytest.raises(ValueError, match="held-out set of 16 examples has a standard error up to 0.1250"):
        fit_update_oracle(task, (2, 8), A, 0.02, cfg, seed=0)                       # the default rule's tol 0.01


def test_settings_state_sizes_and_errors():
    s = ur.settings_for("cpu")
    assert [ur.state_size(m, s) for m in (ur.ORACLE, "scan", "lti_scan", "gru", "spen")] == [243, 243, 243, 243, 240]
    assert ur.state_size("transformer", s) == 2 * 2 * 64 * (10 + 64 + 2)
    with pytest.raises(ValueError, match=r"^update_recall.sigma=0.03: must be one of sigmas \[0.0, 0.005, 0.02\] "
                                         r"\(add it there\)$"):
        ur.settings_for("cpu", {"sigma": 0.03})
    with pytest.raises(ValueError, match="unknown model"):
        ur.settings_for("cpu", {"models": ["lstm"]})
    with pytest.raises(ValueError, match=r"validation set \(val_sequences x gaps\) of 1280 examples"):
        ur.settings_for("cpu", {"val_sequences": 256})


def test_the_scans_last_state_in_closed_form_is_the_recurrence():
    x = sample_update(UpdateTask(), 8, 4, 0).inputs
    for selective in (True, False):
        m = NoisyScanLM(81, d_embed=8, d_state=12, d_hidden=8, sigma=0.05, selective=selective)
        e = m.embed(x)
        torch.manual_seed(3)
        want = m.states(e)[:, -1]
        torch.manual_seed(3)
        assert torch.allclose(m.last_state(e), want, atol=1e-5)
    lti = NoisyScanLM(81, d_embed=8, d_state=12, d_hidden=8, selective=False)
    assert not hasattr(lti, "rate") and lti.rate_logit.shape == (12,)              # one learned rate per channel
    a = torch.sigmoid(lti._rates_and_writes(torch.randn(2, 5, 8))[0])
    assert torch.equal(a, a[:1, :1].expand_as(a))                                   # the same at every step and input


def test_a_calibration_run_holds_out_as_many_sequences_as_the_task():
    """The calibration trains at one gap: its held-out set is the task's size there, so the stopping rule's
    check passes wherever the settings passed it (a run of one gap at the cpu settings, one step)."""
    s = ur.settings_for("cpu", {"d_state": 6, "d_embed": 4, "d_hidden": 4})
    model = ur.build("scan", s, 0.0, 0)
    _, curve, stop = ur.train_arm(model, s, s.scan, (2,), seed=0, cap=1)
    assert stop.reason == "never_left_plateau" and stop.steps[0] == 1 and {r["gap"] for r in curve} == {2}
