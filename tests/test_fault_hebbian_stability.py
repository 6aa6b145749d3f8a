"""Fault kind: Hebbian rules diverge outside the regime they were tuned for.

A learning rule either stays stable for the inputs it accepts or refuses them with one line.
Oja's rule with a large post-synaptic activity (``lr * <y^2> >= 2``) diverged; PGHU's precision
gate (up to 10) pushed a noise-free unit's normalised-LMS step past the stable range, so the
unit that should learn fastest oscillated. Both now bound each unit's step (docstrings state it).
"""
from __future__ import annotations

import pytest
import torch

from paper_lib.hebbian import PGHU, OjaHebbian


def _batches(n_steps=200, n=64, j=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_steps):
        yield torch.randn(n, j, generator=g) + 1, g


@pytest.mark.parametrize("height", [1.0, 10.0, 20.0, 1000.0])
@pytest.mark.parametrize("lr", [0.05, 0.5, 5.0])
def test_oja_stays_bounded_for_any_activity(height, lr):
    """y = height * Bernoulli(1/2) over 4 units, x = randn + 1 (8 inputs): W_i -> E[y_i x] / E[y_i^2] = 1 / height."""
    W = torch.zeros(4, 8)
    rule = OjaHebbian(lr=lr)
    for x, g in _batches():
        y = height * (torch.rand(x.shape[0], 4, generator=g) < 0.5).float()
        rule.step(W, x, y)
    assert torch.isfinite(W).all()
    torch.testing.assert_close(W, torch.full_like(W, 1 / height), rtol=0, atol=0.7 / height)


def test_oja_step_is_plain_oja_when_stable_and_the_fixed_point_when_capped():
    g = torch.Generator().manual_seed(1)
    x, W0 = torch.randn(16, 5, generator=g, dtype=torch.float64), torch.randn(3, 5, generator=g, dtype=torch.float64)
    y = torch.rand(16, 3, generator=g, dtype=torch.float64)
    y[:, 2] *= 30                                        # unit 2: lr * <y^2> = 0.1 * ~300 > 1
    W = W0.clone()
    OjaHebbian(lr=0.1).step(W, x, y)
    plain = W0 + 0.1 / 16 * (y.T @ x - (y * y).sum(0)[:, None] * W0)
    torch.testing.assert_close(W[:2], plain[:2], rtol=0, atol=1e-12)
    fixed_point = (y[:, 2] @ x) / (y[:, 2] ** 2).sum()
    torch.testing.assert_close(W[2], fixed_point, rtol=0, atol=1e-12)


def _reliable_among_noisy(rule: PGHU, n_steps=300, seed=1):
    """Unit 0 has an exact linear target, units 1-3 carry noise of std 2; unit 0's error per step."""
    Wt = torch.randn(4, 8, generator=torch.Generator().manual_seed(seed))
    W = torch.zeros(4, 8)
    errs = []
    for x, g in _batches(n_steps, seed=seed):
        y = x @ Wt.T
        y[:, 1:] += 2 * torch.randn(x.shape[0], 3, generator=g)
        errs.append(float((rule.step(W, x, y)[:, 0] ** 2).mean()))
    return torch.tensor(errs)


@pytest.mark.parametrize("lr", [0.5, 1.0])
def test_pghu_reliable_unit_learns_at_least_as_fast_as_with_gate_one(lr):
    gated = _reliable_among_noisy(PGHU(4, lr=lr))
    gate_one = _reliable_among_noisy(PGHU(4, lr=lr, gate_max=1.0))  # the gate clipped to [1, 1]
    assert gated.max() <= gated[0]                                     # no spike above the start
    assert gated[-1] <= gate_one[-1] + 1e-9
    assert gated[-1] < 1e-6 * gated[0]                                 # it converges


@pytest.mark.parametrize("normalise", [True, False])
def test_pghu_any_rate_and_gate_stay_stable(normalise):
    """A large rate and the raw precision as the gate (up to 1 / eps): each unit's step stays capped."""
    rule = PGHU(4, lr=8.0, normalise=normalise)
    errs = _reliable_among_noisy(rule, n_steps=100)
    assert torch.isfinite(errs).all() and errs.max() <= errs[0] and errs[-1] < 1e-6 * errs[0]
    assert float(rule.unit_steps().max()) <= rule.max_step


@pytest.mark.parametrize("bad", [0.0, 2.0, -1.0])
def test_pghu_refuses_a_step_cap_outside_the_stable_range(bad):
    with pytest.raises(ValueError, match=r"max_step must lie in \(0, 2\) \(the normalised-LMS stable range\)"):
        PGHU(3, max_step=bad)
