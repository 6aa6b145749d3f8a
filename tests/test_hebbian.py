"""PGHU and the plain Hebbian (Oja) rule on cases with known answers."""
import pytest
import torch

from paper_lib.hebbian import PGHU, OjaHebbian, make_rule


def _linear_task(n=512, j=8, i=3, noise=0.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    W_true = torch.randn(i, j, generator=g)
    x = torch.randn(n, j, generator=g)
    y = x @ W_true.T + noise * torch.randn(n, i, generator=g)
    return W_true, x, y


def test_pghu_reduces_prediction_error_and_finds_weights():
    W_true, x, y = _linear_task()
    W = torch.zeros_like(W_true)
    rule = PGHU(3, lr=0.5)
    first = float((rule.step(W, x, y) ** 2).mean())
    for _ in range(200):
        err = rule.step(W, x, y)
    assert float((err ** 2).mean()) < 1e-3 * first
    assert torch.allclose(W, W_true, atol=1e-2)


def test_precision_gate_scales_each_unit_by_inverse_error_variance():
    """Two units with the same instantaneous error; unit 1's running error variance is 4x
    unit 0's, so its update is 4x smaller (normalise=False: the gate is the precision)."""
    rule = PGHU(2, lr=1.0, beta=1.0, eps=1e-12, normalise=False)
    # errors with variance 1 (unit 0) and 4 (unit 1), mean 0
    rule.update_stats(torch.tensor([[1.0, 2.0], [-1.0, -2.0]]))
    assert torch.allclose(rule.precision, torch.tensor([1.0, 0.25], dtype=torch.float64))
    gate = rule.gate()
    assert float(gate[0] / gate[1]) == pytest.approx(4.0)
    norm = PGHU(2, normalise=True)
    norm.update_stats(torch.tensor([[1.0, 2.0], [-1.0, -2.0]]))
    # in units of the mean variance 2.5: gates 2.5 and 0.625, still a ratio of 4
    assert norm.gate().tolist() == pytest.approx([2.5, 0.625], rel=1e-3)
    # bounded: a converged unit (variance ~ 0) gets at most gate_max
    norm.update_stats(torch.tensor([[0.0, 2.0], [0.0, -2.0]]))
    assert float(norm.gate()[0]) <= norm.gate_max


def test_pghu_noisy_unit_learns_slower():
    """Unit 1's target carries noise: its precision is low and its weights move less."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(256, 4, generator=g)
    w = torch.ones(4)
    y = torch.stack([x @ w, x @ w + 3 * torch.randn(256, generator=g)], 1)   # (N, 2)
    W = torch.zeros(2, 4)
    rule = PGHU(2, lr=0.1, beta=1.0)
    rule.step(W, x, y)                      # first step: statistics from this batch's errors
    W.zero_()
    rule.step(W, x, y)
    assert float(rule.precision[0]) > 1.5 * float(rule.precision[1])
    assert W[0].norm() > 1.5 * W[1].norm()


def test_oja_converges_to_conditional_mean():
    """Oja's fixed point: W_i = E[y_i x] / E[y_i^2]. With one-hot y, W_i = mean x given unit i."""
    g = torch.Generator().manual_seed(0)
    y = torch.eye(2)[torch.randint(0, 2, (400,), generator=g)]                 # (N, 2) one-hot
    means = torch.tensor([[1.0, 0.0, 2.0], [0.0, -1.0, 1.0]])
    x = y @ means + 0.1 * torch.randn(400, 3, generator=g)
    W = torch.zeros(2, 3)
    rule = OjaHebbian(lr=0.5)
    for _ in range(200):
        rule.step(W, x, y)
    expected = (y.T @ x) / (y * y).sum(0)[:, None]
    assert torch.allclose(W, expected, atol=1e-3)


def test_mask_and_errors():
    W_true, x, y = _linear_task(n=10)
    W = torch.zeros_like(W_true)
    mask = torch.zeros(10, dtype=torch.bool)
    PGHU(3).step(W, x, y, mask)
    assert torch.count_nonzero(W) == 0
    with pytest.raises(ValueError, match="does not match"):
        PGHU(3).step(torch.zeros(3, 5), x, y)
    with pytest.raises(ValueError, match="beta must lie in"):
        PGHU(3, beta=0.0)
    with pytest.raises(ValueError, match="unknown learning rule 'adam'"):
        make_rule("adam", 3)
    assert make_rule("none", 3) is None


def test_one_pghu_step_equals_its_closed_form_without_autograd():
    """First step: statistics from this batch's errors, gate = precision in units of the mean
    variance clipped to [1/gate_max, gate_max], step min(lr g, max_step), normalised by <|x|^2>."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(32, 6, generator=g, dtype=torch.float64)
    W0 = torch.randn(3, 6, generator=g, dtype=torch.float64)
    y = torch.randn(32, 3, generator=g, dtype=torch.float64) * torch.tensor([0.1, 1.0, 3.0], dtype=torch.float64)
    e = y - x @ W0.T
    var = e.var(0, unbiased=False)
    gate = ((1 / (var + 1e-4)) * (var.mean() + 1e-4)).clamp(0.1, 10.0)
    mu = (0.7 * gate).clamp(max=1.0)                    # unit 0 (reliable) capped at 1
    assert float(0.7 * gate[0]) > 1 and float(0.7 * gate[2]) < 1
    expected = W0 + (mu[:, None] * e.T) @ x / (32 * (x * x).sum(1).mean())
    W = W0.clone()
    err = PGHU(3, lr=0.7).step(W, x.clone().requires_grad_(), y)
    torch.testing.assert_close(W, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(err, e, rtol=0, atol=1e-12)
    assert not err.requires_grad                        # local learning: no autograd graph
