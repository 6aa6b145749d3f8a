"""The chunked output layer + cross-entropy (paper_lib.models.lm.linear_cross_entropy)
against ``F.cross_entropy`` of the full logits: values, both gradients, ignored targets, the models."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from paper_lib.models.factory import build_model
from paper_lib.models.lm import _chunk_rows, linear_cross_entropy

pytestmark = pytest.mark.kernel  # also run with torch's CPU dispatch forced down: make test-dispatch

# tolerances: float64 to rounding (1e-12); float32 loss within 2e-6 (one chunked sum against one
# whole-tensor sum), gradients within 1e-7 absolute (entries of order 1e-4 here)
TOL = {torch.float64: (1e-12, 1e-12), torch.float32: (2e-6, 1e-7)}


def _data(dtype, N=1000, D=32, V=300, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, D, dtype=dtype, generator=g, requires_grad=True)
    w = (0.3 * torch.randn(V, D, dtype=dtype, generator=g)).requires_grad_()
    t = torch.randint(0, V, (N,), generator=g)
    t[::7] = -100                                                       # ignored, as notebook 05's answers
    return x, w, t


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_and_both_gradients_equal_cross_entropy_of_the_full_logits(dtype):
    x, w, t = _data(dtype)
    assert _chunk_rows(len(x), w.shape[0], w.shape[1]) < len(x)           # several chunks
    fused = linear_cross_entropy(x, w, t)
    ref = F.cross_entropy((x @ w.t()).float() if dtype == torch.float32 else x @ w.t(), t)
    gf = torch.autograd.grad(2.5 * fused, (x, w))
    gr = torch.autograd.grad(2.5 * ref, (x, w))
    loss_tol, grad_tol = TOL[dtype]
    assert fused.dtype == ref.dtype and abs(float((fused - ref).detach())) < loss_tol
    for a, b in zip(gf, gr, strict=True):
        assert float((a - b).abs().max()) < grad_tol
    assert float(gf[0][::7].abs().max()) == 0.0                          # ignored rows get no gradient


def test_no_grad_gives_the_same_loss_and_all_ignored_is_nan_as_cross_entropy():
    x, w, t = _data(torch.float64)
    with torch.no_grad():
        assert float(linear_cross_entropy(x, w, t)) == pytest.approx(float(F.cross_entropy(x @ w.t(), t)), abs=1e-12)
    none = torch.full_like(t, -100)
    assert torch.isnan(linear_cross_entropy(x, w, none)) and torch.isnan(F.cross_entropy(x @ w.t(), none))


@pytest.mark.parametrize("kind", ["spen", "transformer"])
def test_models_loss_and_gradients_match_the_unfused_path(kind):
    sizes = dict(vocab_size=97, n_layer=2, d_model=32, d_bottleneck=16, d_ff=64, n_head=2, block_size=64)
    model = build_model(kind, seed=0, **sizes)
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 97, (6, 65), generator=g)
    y = x[:, 1:].clone()
    y[:, :3] = -100
    out = {}
    for unfused in (False, True):
        model.zero_grad()
        logits, loss = model(x[:, :-1], y, return_logits=unfused)
        assert (logits is None) != unfused
        loss.backward()
        out[unfused] = (float(loss.detach()), [p.grad.clone() for p in model.parameters()])
    assert abs(out[True][0] - out[False][0]) < 2e-6
    assert max(float((a - b).abs().max()) for a, b in zip(out[True][1], out[False][1], strict=True)) < 1e-6
    assert model(x[:, :-1])[0].shape == (6, 64, 97)                     # without targets: the logits
