"""FLOPs per training token and the peaks that model FLOP utilisation (MFU) is measured against.

Shared by ``bench_throughput.py`` (CPU: against the measured single-thread GEMM peak) and
``gpu_check.py`` (GPU: against the device's dense bf16 peak from :data:`GPU_BF16_DENSE_PEAK`).

FLOPs are *counted*, not estimated: one forward + backward of the model on one sequence under :class:`torch.utils.flop_counter.FlopCounterMode`, which adds up every matmul
as dispatched (``mm``, ``bmm``, ``addmm``, attention): SPEN's EMA chunk matmuls and its top-k FFN as
they are computed (the FFN's down-projection is a dense GEMM over the masked hidden layer), the
output layer and its weight gradient, and for the Transformer the attention kernel. The counter
charges causal attention for the full ``T x T`` score matrix; the kernels skip the masked half (the
CPU's flash kernel and FlashAttention by blocks), so ``flops_per_token`` counts attention at half of
the counter's figure. Torch's attention formulas include the flash backward's recomputation of
the scores (forward 2, backward 5 score-sized matmuls), so the Transformer's count is above PaLM's
``6N + 6 L T d``: 9.96M against 9.44M per token at the benchmark's 1024 tokens. Element-wise work (GELU,
LayerNorm, softmax, the optimizer) is not counted, as in every MFU convention. Our design.
"""
from __future__ import annotations

import time

import torch
from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count

GPU_BF16_DENSE_PEAK: dict[str, float] = {   # FLOP/s, dense (no sparsity), vendors' data sheets
    "H200": 989e12, "H100 PCIe": 756e12, "H100": 989e12, "GH200": 989e12,
    "A100": 312e12, "L40S": 362e12, "L4": 121e12, "A10G": 70e12, "A10": 125e12,
}
"""bf16 tensor-core peak by device-name fragment, most specific first (``gpu_bf16_peak``)."""


def _cpu_flash(query, key, value, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(query, key, value)


def _cpu_flash_backward(grad_out, query, key, value, *args, out_shape=None, **kwargs) -> int:
    return sdpa_backward_flop_count(grad_out, query, key, value)


CPU_ATTENTION = {torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _cpu_flash,
                 torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward: _cpu_flash_backward}
"""The CPU's attention kernels, which the counter has no formula for (torch 2.13): torch's own formulas."""


def gpu_bf16_peak(name: str) -> float | None:
    """The dense bf16 peak (FLOP/s) of a device called ``name`` (``torch.cuda.get_device_name``), or
    None when it is not in :data:`GPU_BF16_DENSE_PEAK` (say "unknown" then)."""
    for key, peak in GPU_BF16_DENSE_PEAK.items():
        if key.lower() in name.lower():
            return peak
    return None


def training_flops_per_token(model_fn, seq_len: int, vocab_size: int, device="cpu", batch: int = 1) -> dict:
    """Counted FLOPs of one forward + backward per token of ``model_fn()`` on ``device``.

    Returns ``{"flops_per_token": ..., "counted_per_token": ..., "attention_per_token": ...}``:
    the counter's total, its attention kernels' share, and the total with causal attention at half
    (the figure MFU uses). A real device, not ``meta``: there attention decomposes into plain
    ``bmm`` and cannot be told apart. ``model_fn`` is called inside ``torch.device(device)``.
    """
    with torch.device(device):
        model = model_fn()
    x = torch.randint(0, vocab_size, (batch, seq_len + 1), device=device)
    counter = FlopCounterMode(display=False, custom_mapping=CPU_ATTENTION)
    with counter:
        _, loss = model(x[:, :-1], x[:, 1:])
        loss.backward()
    total = counter.get_total_flops()
    attn = sum(v for op, v in counter.get_flop_counts().get("Global", {}).items() if "scaled_dot_product" in str(op))
    tokens = batch * seq_len
    return {"counted_per_token": total / tokens, "attention_per_token": attn / tokens,
            "flops_per_token": (total - attn / 2) / tokens}


def cpu_gemm_peak(n: int = 1024, repeats: int = 9, clock=time.perf_counter) -> float:
    """The best FP32 ``torch.mm`` rate (FLOP/s) of ``n x n`` by ``n x n`` on the current threads, timed
    by ``clock`` (the one the model steps are timed by: ``time.process_time`` on one thread)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        t0 = clock()
        torch.mm(a, b)
        best = min(best, clock() - t0)
    return 2 * n ** 3 / best
