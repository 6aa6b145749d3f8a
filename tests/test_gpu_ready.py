"""SPEN's training step is GPU-ready, proven on the CPU.

- No host sync: the step runs on the ``meta`` device (a device that is not the CPU, with no data, as
  CUDA is to the host), where ``.item()``, ``bool()`` or ``.tolist()`` of a device tensor raise, and a
  dispatch mode counts every copy from the CPU to the device and every scalar read.
- The EMA under bf16 autocast is computed in float32.
"""
from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from paper_lib.ema import PAPER_ALPHAS, ema_reference, ema_traces
from paper_lib.models.factory import build_model

pytestmark = pytest.mark.kernel  # also run with torch's CPU dispatch forced down: make test-dispatch

SIZES = dict(vocab_size=64, n_layer=3, d_model=32, d_bottleneck=16, d_ff=64, n_head=2, block_size=128)


class HostTraffic(TorchDispatchMode):
    """Records host -> device copies and scalar reads of device tensors (each a sync on CUDA)."""

    SCALAR_READS = (torch.ops.aten._local_scalar_dense.default, torch.ops.aten.is_nonzero.default)

    def __init__(self):
        super().__init__()
        self.h2d, self.reads = [], []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in self.SCALAR_READS and args[0].device.type != "cpu":
            self.reads.append(str(func))
        if func is torch.ops.aten._to_copy.default and args[0].device.type == "cpu" and out.device.type != "cpu":
            self.h2d.append(str(func))
        if func is torch.ops.aten.copy_.default and args[1].device.type == "cpu" and args[0].device.type != "cpu":
            self.h2d.append(str(func))
        return out


def _step_traffic(kind: str, steps: int = 2) -> list[HostTraffic]:
    """Forward + backward (+ gradient clipping, as paper_lib.train) on the meta device, ``steps`` times."""
    model = build_model(kind, seed=0, **SIZES).to("meta")
    x = torch.randint(0, SIZES["vocab_size"], (2, 97)).to("meta")
    y = x[:, 1:].clone()
    y[:, :5] = -100                                                   # ignored targets, as notebook 05
    out = []
    for _ in range(steps):
        rec = HostTraffic()
        with rec:
            _, loss = model(x[:, :-1], y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        out.append(rec)
    return out


@pytest.mark.parametrize("kind", ["spen", "transformer"])
def test_training_step_reads_no_device_scalar_and_copies_nothing_to_the_device_after_the_first(kind):
    first, second = _step_traffic(kind)
    assert first.reads == [] and second.reads == []
    assert second.h2d == []                                            # the EMA's kernels are cached
    assert len(first.h2d) <= 3                                         # M, E, dC: once per (dtype, device)


def test_the_exact_nonfinite_path_would_sync_so_the_meta_test_can_fail():
    x = torch.randn(1, 40, 4).to("meta")
    with pytest.raises(RuntimeError):
        ema_traces(x, causal=True, exact_nonfinite=True)               # its check reads a scalar
    assert ema_traces(x, causal=True).shape == (1, 40, 3, 4)           # the default off the CPU does not


def test_without_the_check_a_nan_stays_inside_its_chunk_and_exact_is_the_reference():
    x = torch.randn(1, 64, 2, dtype=torch.float64)
    x[0, 40, 0] = float("nan")                                         # chunk 1 of 32 steps: 32..63
    ref = ema_reference(x, causal=True)
    fast = ema_traces(x, causal=True, exact_nonfinite=False)
    torch.testing.assert_close(fast[:, :32], ref[:, :32], rtol=0, atol=1e-12)
    assert torch.isnan(fast[0, 41:, :, 0]).all()                       # after the NaN (causal), as the recurrence
    torch.testing.assert_close(fast[..., 1], ref[..., 1], rtol=0, atol=1e-12)   # the other channel untouched
    # steps 32-39 may be NaN too (the chunk's matmul times its zero upper triangle: NaN * 0 = NaN in
    # IEEE arithmetic, but a BLAS may skip a zero product): whether they are is the BLAS's, not ours
    torch.testing.assert_close(ema_traces(x, causal=True), ref, rtol=0, atol=1e-12, equal_nan=True)


def test_ema_under_bf16_autocast_is_computed_in_float32():
    g = torch.Generator().manual_seed(0)
    x0 = torch.randn(2, 300, 64, generator=g)
    w = torch.randn(2, 300, 3, 64, generator=g)
    res = {}
    for auto in (False, True):
        x = x0.clone().requires_grad_()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=auto):
            assert (torch.mm(x0[0], x0[0].T).dtype == torch.bfloat16) == auto   # autocast is on
            y = ema_traces(x, PAPER_ALPHAS, causal=True)
        y.backward(w)
        res[auto] = (y.detach(), x.grad)
    assert res[True][0].dtype == torch.float32
    assert float((res[True][0] - res[False][0]).abs().max()) < 1e-6    # bf16 matmuls: ~1e-2
    assert float((res[True][1] - res[False][1]).abs().max()) < 1e-5


def test_sparse_ffn_keeps_exactly_k_units_in_bf16_where_the_threshold_would_keep_ties():
    from paper_lib.models.spen import SparseFFN, SPENConfig

    torch.manual_seed(0)
    ffn = SparseFFN(SPENConfig(d_model=16, d_ff=64))                   # k = 4
    x = torch.randn(3, 50, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.nn.functional.gelu(ffn.fc(x))                        # what the FFN selects from
        kept = {}
        ffn.proj.register_forward_hook(lambda m, i, o: kept.__setitem__("a", i[0]))
        ffn(x)
    assert a.dtype == torch.bfloat16
    ties = (a >= a.topk(ffn.k, dim=-1).values[..., -1:]).sum(-1)       # what a threshold keeps
    assert int(ties.max()) > ffn.k                                     # bf16 ties exist here
    assert ((kept["a"] != 0).sum(-1) <= ffn.k).all() and int((kept["a"] != 0).sum(-1).max()) == ffn.k
