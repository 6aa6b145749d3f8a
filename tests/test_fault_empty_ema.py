"""Fault kind: empty shapes through the EMA paths.

``ema_traces`` on an empty batch or zero width raised an internal reshape error, with ``T`` = 0
its output had no ``grad_fn``, and ``ema_reference`` / ``selective_scan_reference`` failed on
``T`` = 0. Every path now returns the empty result of the right shape, with gradients flowing
(the input's gradient has the input's shape); the non-empty numerics are unchanged.
"""
from __future__ import annotations

import pytest
import torch

from paper_lib.ema import EMATraces, ema_reference, ema_traces, selective_scan, selective_scan_reference

pytestmark = pytest.mark.kernel  # also run with torch's CPU dispatch forced down: make test-dispatch

SHAPES = [(0, 5, 3), (2, 5, 0), (2, 0, 3), (0, 0, 0)]
PATHS = {
    "reference": lambda x, **kw: ema_reference(x, **kw),
    "fast": lambda x, **kw: ema_traces(x, **kw),
    "fast_chunk1": lambda x, **kw: ema_traces(x, chunk_size=1, **kw),
    "module": lambda x, **kw: EMATraces(causal=kw.get("causal", False))(x),
    "streaming": lambda x, **kw: EMATraces(causal=kw.get("causal", False), streaming=True)(x),
}


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_ema_path_gives_the_empty_result_with_gradients(shape, path, causal):
    x = torch.randn(*shape, requires_grad=True)
    out = PATHS[path](x, causal=causal)
    B, T, D = shape
    assert out.shape == (B, T, 3, D) and out.dtype == x.dtype and out.grad_fn is not None
    out.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape


@pytest.mark.parametrize("fn", [ema_reference, ema_traces])
@pytest.mark.parametrize("shape", SHAPES)
def test_empty_input_with_a_state_gives_the_state_a_zero_gradient(fn, shape):
    B, T, D = shape
    x = torch.randn(*shape, requires_grad=True)
    state = torch.randn(B, 3, D, requires_grad=True)
    out = fn(x, state=state)
    assert out.shape == (B, T, 3, D)
    out.sum().backward()
    assert state.grad is not None and state.grad.shape == state.shape
    if T == 0:
        assert torch.equal(state.grad, torch.zeros_like(state))


def test_streaming_keeps_its_state_over_an_empty_chunk():
    x = torch.randn(2, 9, 4)
    m = EMATraces(streaming=True)
    y = torch.cat([m(x[:, :4]), m(x[:, 4:4]), m(x[:, 4:])], dim=1)
    assert torch.allclose(y, ema_traces(x), atol=1e-6)


@pytest.mark.parametrize("fn", [selective_scan, selective_scan_reference])
@pytest.mark.parametrize("shape", SHAPES)
def test_selective_scan_paths_give_the_empty_result_with_gradients(fn, shape):
    logit = torch.randn(*shape, requires_grad=True)
    v = torch.randn(*shape, requires_grad=True)
    out = fn(logit, v)
    assert out.shape == shape and out.grad_fn is not None
    out.sum().backward()
    assert logit.grad.shape == logit.shape and v.grad.shape == v.shape


def test_bad_shapes_are_still_one_line_errors():
    with pytest.raises(ValueError, match=r"^x must have shape \(B, T, D\), got \(0, 5\)$"):
        ema_traces(torch.randn(0, 5))
    with pytest.raises(ValueError, match=r"^state must have shape \(B, S, D\) = \(2, 3, 0\), got \(2, 3, 1\)$"):
        ema_traces(torch.randn(2, 5, 0), state=torch.randn(2, 3, 1))


def test_non_empty_fast_path_is_unchanged():
    """The fast path's traces of a fixed input, recorded (torch 2.13 CPU): handling empty shapes
    changes nothing on non-empty ones (the published figures depend on them); here to 1e-6 relative."""
    x = torch.randn(2, 70, 5, generator=torch.Generator().manual_seed(25))
    y = ema_traces(x).double()
    assert y.sum().item() == pytest.approx(76.37521610701435, rel=1e-6)
    assert y.abs().sum().item() == pytest.approx(449.96830669364215, rel=1e-6)
    assert torch.allclose(ema_traces(x), ema_reference(x), atol=1e-6, rtol=0)
    xc = torch.randn(3, 33, 8, generator=torch.Generator().manual_seed(7))
    assert torch.allclose(ema_traces(xc, causal=True, chunk_size=8), ema_reference(xc, causal=True), atol=1e-6)
