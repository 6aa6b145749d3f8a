"""The ablation's predictors (paper_lib.predictors) and the experiment's helpers
(paper_lib.experiments.predictor_ablation): causality, what each predictor sees, shapes, the selective scan against
its reference loop, the parameter budget, errors."""
from __future__ import annotations

import pandas as pd
import pytest
import torch

from paper_lib import predictors as ap
from paper_lib.ema import ema_traces, selective_scan, selective_scan_reference
from paper_lib.experiments.predictor_ablation import (
    ablation_metrics,
    budget_table,
    check_param_budget,
    predictor_param_count,
    settings_for,
)
from paper_lib.models.spen import SPEN, SPENConfig
from paper_lib.predictors import PREDICTORS, build_predictor, check_predictor_causal

pytestmark = pytest.mark.kernel  # also run with torch's CPU dispatch forced down: make test-dispatch

CFG = SPENConfig(vocab_size=97, n_layer=2, d_model=32, d_bottleneck=16, d_ff=64, n_head=2)


def _predictor(name, cfg=CFG):
    torch.manual_seed(0)
    p = build_predictor(name, cfg).eval()
    with torch.no_grad():  # SPEN's init zeroes biases; random ones make the checks stricter
        for prm in p.parameters():
            prm.add_(0.1 * torch.randn_like(prm))
    return p


def test_every_ablation_name_is_registered_through_build_predictor():
    assert set(ap.ABLATION_PREDICTORS) <= set(PREDICTORS)
    assert ap.PAPER_PREDICTORS == ("linear", "linear_attention", "softmax_attention")


@pytest.mark.parametrize("name", sorted(set(PREDICTORS) | set(ap.ABLATION_PREDICTORS)))
def test_predictor_is_causal_and_reads_the_past(name):
    p = _predictor(name)
    torch.manual_seed(1)
    u = torch.randn(2, 45, 32)
    for t in (0, 1, 17, 33, 44):  # 33: past a selective-scan chunk boundary
        assert check_predictor_causal(p, u, t), f"{name}: x_hat at <= {t} changed when u[{t}:] changed"
    # and the prediction at t + 1 does see u_t (a predictor that ignores its input would pass above)
    with torch.no_grad():
        v = u.clone()
        v[:, 20] += 1.0
        a = p(u, ema_traces(u, CFG.alphas, causal=True))
        b = p(v, ema_traces(v, CFG.alphas, causal=True))
    assert (a[:, 21] - b[:, 21]).abs().max() > 1e-4


@pytest.mark.parametrize("name", ap.PAPER_PREDICTORS)
def test_bounded_predictors_read_only_the_trace_bank_at_t(name):
    p = _predictor(name)
    torch.manual_seed(2)
    u = torch.randn(2, 20, 32)
    h = ema_traces(u, CFG.alphas, causal=True)
    other = torch.randn_like(h)
    other[:, 7] = h[:, 7]
    with torch.no_grad():
        a = p(u, h)[:, 7]
        b = p(torch.randn_like(u), other)[:, 7]  # everything but the bank at t = 7 replaced
    torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ap.ABLATION_PREDICTORS)
@pytest.mark.parametrize("T", [1, 5, 70])
def test_shapes(name, T):
    p = _predictor(name)
    u = torch.randn(3, T, 32)
    x_hat = p(u, ema_traces(u, CFG.alphas, causal=True))
    assert x_hat.shape == (3, T, 32) and torch.isfinite(x_hat).all()


@pytest.mark.parametrize("chunk", [1, 7, 32, 64])
def test_selective_scan_matches_reference_loop(chunk):
    torch.manual_seed(3)
    z = (3 * torch.randn(2, 61, 5, dtype=torch.float64)).requires_grad_()
    v = torch.randn(2, 61, 5, dtype=torch.float64, requires_grad=True)
    fast = selective_scan(z, v, chunk=chunk)
    ref = selective_scan_reference(z, v)
    torch.testing.assert_close(fast, ref, rtol=1e-12, atol=1e-12)
    w = torch.randn_like(ref)
    g_fast = torch.autograd.grad((fast * w).sum(), (z, v))
    g_ref = torch.autograd.grad((ref * w).sum(), (z, v))
    for a, b in zip(g_fast, g_ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_selective_scan_float32_stays_finite_at_extreme_rates():
    v = torch.randn(1, 300, 4)
    for logit in (60.0, -60.0):
        z = torch.full((1, 300, 4), logit)
        torch.testing.assert_close(selective_scan(z, v), selective_scan_reference(z, v), rtol=1e-4, atol=1e-5)


def test_selective_scan_rejects_bad_input():
    with pytest.raises(ValueError, match="share a \\(B, T, N\\) shape"):
        selective_scan(torch.zeros(1, 4, 3), torch.zeros(1, 4, 2))
    with pytest.raises(ValueError, match="max_rate in \\(0, 1\\)"):
        selective_scan(torch.zeros(1, 4, 3), torch.zeros(1, 4, 3), max_rate=1.0)


def test_selective_rates_start_log_spaced_between_the_papers_alphas():
    model = SPEN(CFG.__class__(**{**CFG.__dict__, "predictor": "selective"}))  # SPEN's init ran
    p = model.blocks[0].predictor
    rates = p.max_rate * torch.sigmoid(p.rate_bias.detach())
    assert rates.max().item() == pytest.approx(0.5, rel=1e-4)
    assert rates.min().item() == pytest.approx(0.02, rel=1e-4)


@pytest.mark.parametrize("profile", ["smoke", "cpu", "paper"])
def test_parameter_budget_within_five_percent(profile):
    s = settings_for(profile)
    cfg = s.spen
    counts = check_param_budget(cfg)
    ref = counts["linear"]
    assert set(counts) == set(ap.ABLATION_PREDICTORS)
    assert all(abs(n - ref) <= 0.05 * ref for n in counts.values())
    # each predictor alone is near the linear one's S d^2 + d parameters (widths are rounded to
    # whole heads, coarse at smoke's d_model = 32)
    tol = 0.06 if profile == "smoke" else 0.015
    for name in ap.ABLATION_PREDICTORS:
        assert abs(predictor_param_count(cfg, name) - ap.linear_budget(cfg)) <= tol * ap.linear_budget(cfg)
    table = budget_table(s, s.data.vocab_size)  # the notebook's check, Transformer included
    assert set(table.model) == set(ap.ABLATION_PREDICTORS) | {"transformer"}
    assert table.vs_linear.abs().max() <= 0.05


def test_budget_check_names_the_offender():
    cfg = SPENConfig(vocab_size=97, n_layer=2, d_model=32, d_bottleneck=16, d_ff=64)
    with pytest.raises(ValueError, match="SPEN with predictor '[a-z_]+' has [0-9]+ parameters, .* from linear's [0-9]+ \\(allowed: 0%\\)"):
        check_param_budget(cfg, tol=0.0)


def test_unknown_predictor_name():
    with pytest.raises(ValueError, match="unknown predictor 'mamba'; registered: .*selective.*token_attention"):
        build_predictor("mamba", CFG)
    with pytest.raises(ValueError, match=r"^unknown predictor\(s\) mamba; registered: "):
        settings_for("smoke", {"predictors": ["linear", "mamba"]})


def test_ablation_metrics_gap_closed():
    rows = [{"model": m, "seed": s, "val_loss": v, "val_ppl": 0.0}
            for s, off in ((0, 0.0), (1, 0.1))
            for m, v in (("linear", 6.0), ("linear_attention", 6.06), ("softmax_attention", 5.94),
                         ("token_attention", 5.5), ("transformer", 5.0))
            for v in [v + off]]
    m = ablation_metrics(pd.DataFrame(rows))
    assert m["loss_linear"] == pytest.approx([6.0, 6.1])
    assert m["gap_closed_token_attention"] == pytest.approx([0.5, 0.5])
    assert m["bounded_spread"] == pytest.approx([0.12 / 6.0, 0.12 / 6.1])
    assert m["gap_transformer_nats"] == pytest.approx([1.0, 1.0])
    worse = pd.DataFrame(rows).assign(val_loss=lambda d: d.val_loss.where(d.model != "transformer", 6.5))
    m = ablation_metrics(worse)  # a Transformer worse than SPEN: no gap to close, no gap_closed_*
    assert m["gap_transformer_nats"] == pytest.approx([-0.5, -0.4])
    assert not any(k.startswith("gap_closed_") for k in m)


def test_the_groups_and_the_claims_come_from_each_predictors_facts():
    """A predictor's facts live on its class; the groups, notebook 04's table, the report's bounded
    and unbounded readers and their labels all derive from them (a new predictor: one file)."""
    from paper_lib.claims.lm import BOUNDED, METRICS, PAPER, UNBOUNDED

    assert ap.PAPER_PREDICTORS == tuple(sorted(n for n, c in PREDICTORS.items() if c.paper))
    assert ap.CONTROL_PREDICTORS == ("history_attention", "selective", "token_attention")
    assert ap.BOUNDED_PREDICTORS == ap.PAPER_PREDICTORS and set(ap.ABLATION_PREDICTORS) == set(PREDICTORS)
    assert all(c.label and c.sees for c in PREDICTORS.values()) and ap.SEES["linear"] == PREDICTORS["linear"].sees
    assert PAPER == BOUNDED == ("loss_linear", "loss_linear_attention", "loss_softmax_attention")
    assert UNBOUNDED == ("loss_history_attention", "loss_selective", "loss_token_attention", "loss_transformer")
    assert METRICS["04_predictor_ablation"]["loss_selective"] == "selective EMA (nats)"
    assert [PREDICTORS[n].added_state(CFG, 10, d_state=7) for n in ap.ABLATION_PREDICTORS] == [0, 0, 0, 640, 7, 640]
    assert PREDICTORS["selective"].added_state(CFG, 10) == build_predictor("selective", CFG).d_state
