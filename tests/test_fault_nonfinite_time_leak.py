"""Fault kind: a non-finite value leaks backwards in time through a chunked fast path.

Every fast path must equal its reference recurrence on every input the reference accepts,
inf and NaN included: a NaN/inf at step t reaches outputs at t and after only (after t with
``causal=True``), gradients at t and before only, and NaN in end padding leaves the real
tokens alone. Checked for :func:`ema_traces` (forward and backward), its streaming form and
:func:`selective_scan`.
"""
from __future__ import annotations

import pytest
import torch

from paper_lib.ema import EMATraces, ema_reference, ema_traces, selective_scan, selective_scan_reference

pytestmark = pytest.mark.kernel  # also run with torch's CPU dispatch forced down: make test-dispatch

NAN, INF = float("nan"), float("inf")
ALPHAS = [(0.5, 0.1, 0.02), (1.0, 0.3), (0.999,)]


def assert_same(fast: torch.Tensor, ref: torch.Tensor, atol: float = 1e-10) -> None:
    """Same NaN, +inf and -inf positions, and the finite values equal to ``atol``."""
    for name, fn in (("nan", torch.isnan), ("+inf", torch.isposinf), ("-inf", torch.isneginf)):
        bad = (fn(fast) != fn(ref)).nonzero()
        assert bad.numel() == 0, f"{name} differs at {bad[:5].tolist()}"
    fin = torch.isfinite(ref)
    torch.testing.assert_close(fast[fin], ref[fin], rtol=0, atol=atol)


def _poisoned(B=2, T=40, D=3, seed=0) -> torch.Tensor:
    x = torch.randn(B, T, D, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    x[0, 37, 0] = NAN                  # late in a chunk
    x[0, 9, 1], x[0, 30, 1] = INF, -INF  # +inf then -inf: NaN from 30 on
    x[1, 16, 2] = -INF                 # at a chunk start (chunk 8)
    x[1, 3, 0] = INF
    return x


def test_issue_example():
    x = torch.ones(1, 40, 1, dtype=torch.float64)
    x[0, 37, 0] = NAN
    t = torch.arange(37, dtype=torch.float64)
    torch.testing.assert_close(ema_traces(x, [0.5])[0, :37, 0, 0], 1 - 0.5 ** (t + 1), rtol=0, atol=1e-12)
    causal = ema_traces(x, [0.5], causal=True)[0, :, 0, 0]
    assert torch.isfinite(causal[:38]).all() and torch.isnan(causal[38:]).all()


@pytest.mark.parametrize("alphas", ALPHAS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("chunk", [8, 32])
def test_forward_equals_reference_with_inf_and_nan(alphas, causal, chunk):
    x = _poisoned()
    state = torch.randn(2, len(alphas), 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    state[1, 0, 1] = NAN
    state[0, -1, 2] = INF
    for s in (None, state):
        assert_same(ema_traces(x, alphas, state=s, causal=causal, chunk_size=chunk),
                    ema_reference(x, alphas, state=s, causal=causal))


@pytest.mark.parametrize("causal", [False, True])
def test_nan_in_end_padding_leaves_real_tokens_alone(causal):
    x = torch.randn(2, 45, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    x[1, 21:] = NAN                                   # sequence 1 has 21 real tokens
    y = ema_traces(x, causal=causal)
    torch.testing.assert_close(y[1, :21], ema_reference(x[1:, :21], causal=causal)[0], rtol=0, atol=1e-12)
    assert torch.isfinite(y[0]).all()


@pytest.mark.parametrize("alphas", ALPHAS)
@pytest.mark.parametrize("causal", [False, True])
def test_backward_equals_reference_autograd_with_inf_and_nan_gradients(alphas, causal):
    g = torch.Generator().manual_seed(3)
    S = len(alphas)
    x = torch.randn(2, 40, 3, dtype=torch.float64, generator=g, requires_grad=True)
    s0 = torch.randn(2, S, 3, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(2, 40, S, 3, dtype=torch.float64, generator=g)   # the upstream gradient
    w[0, 5, 0, 0], w[0, 35, -1, 1] = NAN, INF
    w[1, 20, 0, 2], w[1, 26, -1, 2] = INF, -INF
    w[1, 0, 0, 0] = NAN                                               # reaches the state only
    fast = torch.autograd.grad(ema_traces(x, alphas, state=s0, causal=causal, chunk_size=8), (x, s0), w)
    ref = torch.autograd.grad(ema_reference(x, alphas, state=s0, causal=causal), (x, s0), w)
    for f, r in zip(fast, ref, strict=True):
        assert_same(f, r)


def test_masked_loss_over_nan_padding_gives_finite_gradients():
    x = torch.randn(1, 40, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    x[0, 30:] = NAN
    x.requires_grad_()
    y = ema_traces(x, causal=True)
    (gx,) = torch.autograd.grad(y[:, :30].sum(), x)
    assert torch.isfinite(gx[0, :30]).all()


@pytest.mark.parametrize("causal", [False, True])
def test_streaming_carries_nan_forwards_only(causal):
    x = _poisoned(T=70)
    module = EMATraces(causal=causal, streaming=True)
    parts = [module(x[:, a:b]) for a, b in [(0, 20), (20, 41), (41, 70)]]
    assert_same(torch.cat(parts, dim=1), ema_reference(x, causal=causal))


@pytest.mark.parametrize("chunk", [4, 16])
def test_selective_scan_equals_reference_with_inf_and_nan(chunk):
    g = torch.Generator().manual_seed(5)
    logit = torch.randn(2, 50, 3, dtype=torch.float64, generator=g)
    v = torch.randn(2, 50, 3, dtype=torch.float64, generator=g)
    v[0, 13, 0] = NAN                  # value
    logit[0, 30, 1] = NAN              # rate
    v[1, 7, 2], v[1, 40, 2] = INF, -INF
    v[1, 45, 0] = INF
    logit[1, 45, 0] = -INF             # rate 0 times inf: NaN, as in the recurrence
    logit[1, 20, 1] = INF              # rate max_rate: finite
    assert_same(selective_scan(logit, v, chunk=chunk), selective_scan_reference(logit, v))


def test_selective_scan_nan_padding_gives_reference_gradients_on_real_tokens():
    g = torch.Generator().manual_seed(6)
    logit = torch.randn(1, 40, 2, dtype=torch.float64, generator=g)
    v = torch.randn(1, 40, 2, dtype=torch.float64, generator=g)
    v[0, 33:] = NAN
    grads = []
    for fn in (selective_scan, selective_scan_reference):
        lg, vv = logit.clone().requires_grad_(), v.clone().requires_grad_()
        out = fn(lg, vv)
        assert torch.isfinite(out[0, :33]).all()
        grads.append(torch.autograd.grad(out[:, :33].sum(), (lg, vv)))
    for f, r in zip(*grads, strict=True):
        torch.testing.assert_close(f[:, :33], r[:, :33], rtol=0, atol=1e-10)


def test_exact_path_equals_reference_on_finite_inputs_too(monkeypatch):
    """The exact path (taken when a sum overflows, or any inf/NaN is present) agrees everywhere."""
    import paper_lib.ema as ema
    import paper_lib.ema_selective as ema_selective

    monkeypatch.setattr(ema, "_all_finite", lambda *ts: False)
    monkeypatch.setattr(ema_selective, "_all_finite", lambda *ts: False)
    g = torch.Generator().manual_seed(7)
    for poison in (False, True):
        x = _poisoned() if poison else torch.randn(2, 40, 3, dtype=torch.float64, generator=g)
        x.requires_grad_()
        w = torch.randn(2, 40, 3, 3, dtype=torch.float64, generator=g)
        fast = ema_traces(x, causal=True, chunk_size=8)
        ref = ema_reference(x, causal=True)
        assert_same(fast, ref)
        assert_same(torch.autograd.grad(fast, x, w)[0], torch.autograd.grad(ref, x, w)[0])
        logit = torch.randn(2, 40, 3, dtype=torch.float64, generator=g)
        assert_same(selective_scan(logit, x.detach()), selective_scan_reference(logit, x.detach()))
    x = torch.randn(1, 11, 2, dtype=torch.float64, generator=g, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a: ema_traces(a, chunk_size=4), (x,))
