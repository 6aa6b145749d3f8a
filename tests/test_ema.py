"""The EMA trace bank: fast path against the plain recurrence, gradients, streaming, errors."""
from __future__ import annotations

import pytest
import torch

from paper_lib.ema import PAPER_ALPHAS, EMATraces, check_alphas, ema_reference, ema_traces

pytestmark = pytest.mark.kernel  # also run with torch's CPU dispatch forced down: make test-dispatch

ALPHAS = [(0.5, 0.1, 0.02), (1.0, 0.3), (0.999,), (0.007, 1.0, 0.25, 0.6)]


@pytest.mark.parametrize("alphas", ALPHAS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("T", [1, 5, 32, 77])
def test_fast_equals_reference_float64(alphas, causal, T):
    g = torch.Generator().manual_seed(T)
    x = torch.randn(3, T, 4, dtype=torch.float64, generator=g)
    state = torch.randn(3, len(alphas), 4, dtype=torch.float64, generator=g)
    for s in (None, state):
        ref = ema_reference(x, alphas, state=s, causal=causal)
        fast = ema_traces(x, alphas, state=s, causal=causal, chunk_size=8)
        assert fast.shape == (3, T, len(alphas), 4)
        torch.testing.assert_close(fast, ref, rtol=0, atol=1e-10)


def test_recurrence_by_hand():
    # alpha = 0.5, x = (1, 0, 2): h = 0.5, 0.25, 1.125; causal: 0, 0.5, 0.25
    x = torch.tensor([1.0, 0.0, 2.0], dtype=torch.float64).view(1, 3, 1)
    assert ema_traces(x, [0.5]).flatten().tolist() == [0.5, 0.25, 1.125]
    assert ema_traces(x, [0.5], causal=True).flatten().tolist() == [0.0, 0.5, 0.25]
    # alpha = 1 keeps only the current token
    assert ema_traces(x, [1.0]).flatten().tolist() == [1.0, 0.0, 2.0]


@pytest.mark.parametrize("chunk_size", [1, 3, 16, 64, 200])
def test_chunk_size_does_not_change_results(chunk_size):
    x = torch.randn(2, 150, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    base = ema_traces(x, chunk_size=32)
    torch.testing.assert_close(ema_traces(x, chunk_size=chunk_size), base, rtol=0, atol=1e-12)


def test_float32_long_sequence_close_to_reference():
    x = torch.randn(2, 1024, 8, generator=torch.Generator().manual_seed(1))
    ref = ema_reference(x.double()).float()
    torch.testing.assert_close(ema_traces(x), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_gradcheck(causal):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 19, 3, dtype=torch.float64, generator=g, requires_grad=True)
    s = torch.randn(2, 3, 3, dtype=torch.float64, generator=g, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: ema_traces(a, state=b, causal=causal, chunk_size=4), (x, s))


def test_backward_matches_reference_autograd():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 70, 4, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(2, 70, 3, 4, dtype=torch.float64, generator=g)
    (gf,) = torch.autograd.grad((ema_traces(x, causal=True) * w).sum(), x)
    (gr,) = torch.autograd.grad((ema_reference(x, causal=True) * w).sum(), x)
    torch.testing.assert_close(gf, gr, rtol=0, atol=1e-10)


def test_fast_path_builds_no_per_step_graph():
    x = torch.randn(1, 512, 2, requires_grad=True)
    y = ema_traces(x)
    # one custom node, not a chain of T indexing/mul/add nodes
    assert type(y.grad_fn).__name__ == "_EMAFunctionBackward"
    assert all(type(f).__name__ != "MulBackward0" for f, _ in y.grad_fn.next_functions if f is not None)


@pytest.mark.parametrize("causal", [False, True])
def test_streaming_equals_one_shot(causal):
    x = torch.randn(2, 100, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    one_shot = ema_traces(x, causal=causal)
    module = EMATraces(causal=causal, streaming=True)
    parts = [module(x[:, a:b]) for a, b in [(0, 1), (1, 37), (37, 38), (38, 100)]]
    torch.testing.assert_close(torch.cat(parts, dim=1), one_shot, rtol=0, atol=1e-12)
    module.reset()
    assert module.state is None


def test_module_defaults_are_the_papers():
    m = EMATraces()
    assert m.alphas == PAPER_ALPHAS
    assert list(m.parameters()) == []  # fixed coefficients, nothing learned


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, float("nan")])
def test_alpha_outside_unit_interval_raises(bad):
    outside = r"^alphas=\[.*\]: (every value must be > 0 and <= 1|must be a list of numbers)$"  # NaN: not a number
    with pytest.raises(ValueError, match=outside):
        ema_traces(torch.zeros(1, 2, 3), [0.5, bad])
    with pytest.raises(ValueError, match=outside):
        EMATraces(alphas=(bad,))


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match=r"shape \(B, T, D\)"):
        ema_traces(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="state must have shape"):
        ema_traces(torch.zeros(2, 3, 4), state=torch.zeros(2, 2, 4))
    with pytest.raises(ValueError, match="non-empty"):
        check_alphas([])
    with pytest.raises(ValueError, match="floating-point tensor, got torch.int64"):
        ema_traces(torch.ones(1, 3, 1, dtype=torch.long), [0.5])
