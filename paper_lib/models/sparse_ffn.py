"""SPEN's sparse FFN: ``W_2 topk(GELU(W_1 x))`` with 6% of the hidden units kept, and its CPU kernels.

The paper's Figure 1 ends each block with a sparse FFN ("top-k with 6% of units active"); what is
ours (the paper is silent): GELU before the selection, selection by value, gradients through the
kept units only. :class:`SparseFFN` is the module; the rest of this file makes it fast on the CPU
without changing what it computes (each piece timed against the path it replaces by
``benchmarks/bench_levers.py``, whose paths are named below):

* :func:`kth_largest`: the threshold (``numpy.partition`` on the CPU, ``torch.topk`` elsewhere);
* :func:`_kept_units` and :class:`_KeptGELU` (the ``+ffn`` path): the kept units found on the pre-activation,
  GELU and its gradient computed for them only;
* :class:`_KeptFFN` (the ``+csr`` path): the whole FFN as one autograd function whose five GEMMs after the
  selection run over the kept units only, as sparse CSR products (the output projection, its two
  gradients, the first layer's two gradients); only ``W_1 x`` stays dense (every pre-activation is
  needed to select).

Shapes: ``x`` (B, T, D) or (N, D); hidden (N, F) with ``F = d_ff``; ``k`` kept units per row.
"""
from __future__ import annotations

import threading
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

_SCRATCH = threading.local()


def _scratch(name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
    """This thread's work buffer ``name`` of ``shape`` and ``dtype`` (kept between calls; callers
    never return it). Measured inside a SPEN training step at the benchmark sizes:
    ``numpy.partition`` of a fresh (8192, 512) copy took 14 ms a call against 6 ms in a loop, the
    difference the first touch of fresh pages."""
    buf = getattr(_SCRATCH, name, None)
    if buf is None or buf.shape != shape or buf.dtype != dtype:
        buf = np.empty(shape, dtype)
        setattr(_SCRATCH, name, buf)
    return buf


def kth_largest(a: Tensor, k: int) -> Tensor:
    """The ``k``-th largest value along the last dimension, ``(..., F) -> (..., 1)``, no autograd.

    Equal to ``a.topk(k, dim=-1).values[..., -1:]`` (the value, not an index). On the CPU, for
    float32/float64, it is ``numpy.partition`` (a SIMD selection of values only) in a reused buffer
    (:func:`_scratch`), measured 5x faster than ``torch.topk`` at (8192, 512), k = 31, one thread;
    elsewhere (CUDA, bfloat16) ``torch.topk``.
    Our design: the paper is silent on how the top-k is computed.

    Raises:
        ValueError: ``k`` outside ``[1, F]``.
    """
    n = a.shape[-1]
    if not 1 <= k <= n:
        raise ValueError(f"k must lie in [1, {n}] (the last dimension), got {k}")
    if a.device.type == "cpu" and a.dtype in (torch.float32, torch.float64):
        an = a.detach().numpy()
        buf = _scratch("partition", an.shape, an.dtype)                # (..., F), reused: no fresh pages
        np.copyto(buf, an)
        buf.partition(n - k, axis=-1)
        return torch.from_numpy(buf[..., n - k:n - k + 1].copy())     # (..., 1), never the buffer itself
    with torch.no_grad():
        return a.topk(k, dim=-1, sorted=False).values.amin(dim=-1, keepdim=True)


def _kept_units(z: Tensor, k: int) -> Tensor:
    """Flat indices (int64, ascending) of the units ``GELU(z) -> threshold at the k-th largest``
    keeps, found on the pre-activation ``z`` (C-contiguous ``(..., F)``, CPU, float32/float64).

    GELU is increasing on ``[0, inf)`` and negative below 0, so in a row whose ``k``-th largest
    pre-activation ``z_k`` is positive the units with ``GELU(z) >= GELU(z_k)`` are those with ``z >= z_k``
    (a unit at ``z < 0`` has ``GELU(z) < 0 < GELU(z_k)``; the minimum at ``z = -0.75`` does not matter,
    a very negative ``z`` has ``GELU(z)`` just below 0). Rows where ``z_k`` is not positive, or that
    hold a non-finite value, are selected on ``GELU(z)`` itself, as :class:`SparseFFN`'s dense path does.
    A NaN is kept (``not z < z_k``), as the dense path keeps it. Our design.
    """
    n = z.shape[-1]
    z2 = z.detach().reshape(-1, n)                                     # (N, F), a view
    zn, kth = z2.numpy(), kth_largest(z2, k).numpy()                   # (N, F), (N, 1)
    keep = np.less(zn, kth, out=_scratch("keep", zn.shape, np.bool_))
    np.logical_not(keep, out=keep)                                     # (N, F): z >= z_k, NaN kept
    with np.errstate(invalid="ignore", over="ignore"):                 # inf - inf: a NaN sum, as wanted
        bad = ~(kth[:, 0] > 4 * np.finfo(zn.dtype).tiny) | ~np.isfinite(zn.sum(axis=-1))
    if bad.any():                                                      # select on GELU(z), as the dense path
        rows = torch.from_numpy(np.flatnonzero(bad))
        a = F.gelu(z2.index_select(0, rows))                           # (n_bad, F)
        keep[rows.numpy()] = ~(a < kth_largest(a, k)).numpy()
    return torch.from_numpy(np.flatnonzero(keep))                      # (n_kept,), about N k


class _KeptGELU(torch.autograd.Function):
    """``GELU(z)`` with every unit below its row's ``k``-th largest set to 0, computed only for the kept
    units: ``z`` (..., F) -> (..., F), the same values and gradients as ``F.gelu`` + threshold +
    ``masked_fill_`` (:class:`SparseFFN`'s dense path). Saves the kept units' flat indices and
    pre-activations (about ``k / F`` of the tensor, 12 bytes each in float32) instead of ``z`` and a
    ``(..., F)`` mask. CPU, float32/float64 only (the caller checks). Our design."""

    @staticmethod
    def forward(ctx, z: Tensor, k: int) -> Tensor:
        z = z.contiguous()
        flat = _kept_units(z, k)                                       # (n_kept,)
        zk = z.view(-1).index_select(0, flat)                          # (n_kept,)
        ctx.save_for_backward(flat, zk)
        ctx.shape = z.shape
        return _scatter_flat(F.gelu(zk), flat, z)                      # (..., F), about k non-zero a row

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: Tensor):
        flat, zk = ctx.saved_tensors
        gk = grad.contiguous().view(-1).index_select(0, flat)          # (n_kept,)
        return _scatter_flat(torch.ops.aten.gelu_backward(gk, zk), flat, grad), None


def _scatter_flat(values: Tensor, flat: Tensor, like: Tensor) -> Tensor:
    """Zeros shaped as ``like`` with ``values`` (n,) at the flat indices ``flat`` (n,); numpy's fancy
    assignment, measured 2x faster than ``zeros`` + ``index_copy_`` at (8192, 512), one thread."""
    out = torch.zeros(like.shape, dtype=like.dtype)
    out.numpy().reshape(-1)[flat.numpy()] = values.numpy()
    return out


def _csr(crow: Tensor, col: Tensor, values: Tensor, shape: tuple[int, int]) -> Tensor:
    """A sparse CSR matrix (no invariant check: callers build valid, sorted indices)."""
    with warnings.catch_warnings():                                    # "sparse CSR support is in beta"
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(crow, col, values, shape, check_invariants=False)


class _KeptFFN(torch.autograd.Function):
    """``y = W_2 a + b_2`` with ``a = GELU(W_1 x + b_1)`` kept at each row's top ``k`` (units below
    the ``k``-th largest set to 0; the same kept set as :class:`_KeptGELU`), and every GEMM after
    the selection over the kept units only: ``a`` is a CSR matrix of about ``N k`` values, so the
    output projection, ``dL/da`` (sampled at the kept units, SDDMM), ``dL/dW_2``, ``dL/dx`` and
    ``dL/dW_1`` cost ``k / F`` of their dense FLOPs (6% in the paper's setting). ``x`` (N, D),
    ``w1`` (F, D), ``b1`` (F,), ``w2`` (D, F), ``b2`` (D,) -> (N, D). CPU, float32/float64 only
    (the caller checks). Saves ``x``, the weights and the kept units' indices and pre-activations:
    no ``(N, F)`` tensor is kept for the backward, and the only ones built are the forward's
    pre-activation ``z`` and the selection's work buffers (:func:`_kept_units`, reused between
    calls); the backward builds none. The transposed pattern (for the weight gradients) is one
    stable sort of the column indices (numpy's radix sort while ``F < 2**15``). Our design."""

    @staticmethod
    def forward(ctx, x: Tensor, w1: Tensor, b1: Tensor, w2: Tensor, b2: Tensor, k: int) -> Tensor:
        z = torch.addmm(b1, x, w1.t())                                 # (N, F): every pre-activation
        N, Fd = z.shape
        flat = _kept_units(z, k).numpy()                               # (n,) ascending
        row, col = np.divmod(flat, Fd)                                 # (n,), (n,)
        crow = np.zeros(N + 1, np.int64)
        np.cumsum(np.bincount(row, minlength=N), out=crow[1:])         # (N + 1,)
        crow, col, row = torch.from_numpy(crow), torch.from_numpy(col), torch.from_numpy(row)
        zk = z.view(-1).index_select(0, torch.from_numpy(flat))        # (n,) kept pre-activations
        ctx.save_for_backward(x, w1, w2, crow, col, row, zk)
        return torch.addmm(b2, _csr(crow, col, F.gelu(zk), (N, Fd)), w2.t())   # (N, D)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy: Tensor):
        x, w1, w2, crow, col, row, zk = ctx.saved_tensors
        N, Fd = x.shape[0], w1.shape[0]
        dy = dy.contiguous()                                           # (N, D)
        pattern = _csr(crow, col, torch.zeros_like(zk), (N, Fd))
        da = torch.sparse.sampled_addmm(pattern, dy, w2, beta=0.0).values()   # (n,): (dy W_2)[kept]
        dz = torch.ops.aten.gelu_backward(da, zk)                      # (n,): dL/dz at the kept units
        order = np.argsort(col.numpy().astype(np.int16 if Fd < 2 ** 15 else np.int64), kind="stable")
        crow_t = np.zeros(Fd + 1, np.int64)
        np.cumsum(np.bincount(col.numpy(), minlength=Fd), out=crow_t[1:])
        order, crow_t = torch.from_numpy(order), torch.from_numpy(crow_t)
        row_t = row.index_select(0, order)                             # (n,): the transposed pattern
        need = ctx.needs_input_grad
        dx = torch.mm(_csr(crow, col, dz, (N, Fd)), w1) if need[0] else None                  # (N, D)
        dz_t = _csr(crow_t, row_t, dz.index_select(0, order), (Fd, N))                        # (F, N)
        dw1 = torch.mm(dz_t, x) if need[1] else None                                          # (F, D)
        db1 = torch.zeros(Fd, dtype=dz.dtype).index_add_(0, col, dz) if need[2] else None    # (F,)
        a_t = _csr(crow_t, row_t, F.gelu(zk).index_select(0, order), (Fd, N))                 # (F, N)
        dw2 = torch.mm(a_t, dy).t().contiguous() if need[3] else None                         # (D, F)
        db2 = dy.sum(0) if need[4] else None                                                  # (D,)
        return dx, dw1, db1, dw2, db2, None


def _cpu_autocast() -> bool:
    """Whether CPU autocast is on (``torch.is_autocast_enabled("cpu")`` from torch 2.4; the older
    ``torch.is_autocast_cpu_enabled()`` before, which ``pyproject.toml``'s ``torch>=2.1`` allows)."""
    try:
        return torch.is_autocast_enabled("cpu")
    except TypeError:                                                  # torch < 2.4: no device argument
        return torch.is_autocast_cpu_enabled()


class SparseFFN(nn.Module):
    """Position-wise FFN whose hidden layer keeps only its ``top_k`` largest activations.

    ``(B, T, D) -> (B, T, D)``. Paper: "sparse FFN, top-k with 6% of units active";
    ours: GELU before the selection, selection by value, gradients through the kept units.

    The selection is a threshold: the ``k``-th largest activation of each position
    (:func:`kth_largest`) is found without autograd, and every activation below it is zeroed in
    place, so no dense zero-filled tensor is built and nothing is scattered, forward or backward.
    Values and gradients equal a ``topk`` + scatter into zeros (``tests/test_spen.py``); the one
    difference is that activations tied with the ``k``-th value are all kept (exact float ties
    among the largest GELU outputs; none occur in practice in float32; in bfloat16/float16, where
    they do, the ``k`` indices of ``topk`` are kept instead). Measured
    (``figures/bench/sparse_ffn.csv``: the FFN's forward+backward at 4096 tokens, one thread; two
    runs): with the threshold from ``torch.topk``, the scatter, a mask multiply and the in-place
    mask cost the same within 11%, and a gather of the ``k`` active rows of the output projection
    (``embedding_bag``) is 1.5-1.7x slower; with the threshold from ``numpy.partition``
    (:func:`kth_largest`), the in-place mask is 1.24-1.40x faster than the scatter. The in-place
    mask is kept because it allocates no second ``(B, T, F)`` tensor.

    On the CPU in float32/float64 (``fuse_gelu_mask = True``, a class attribute
    for benchmarks and tests) the units are selected on the pre-activation and GELU and its
    gradient are computed for the kept units only (:class:`_KeptGELU`, :func:`_kept_units`): the
    same kept set wherever a row's ``k``-th pre-activation is positive (other rows are selected on
    GELU, as above), so the same values and gradients (``tests/test_spen.py``: fp64 within 1e-12).
    Where they can differ: units whose float GELU ties or reorders within rounding of the ``k``-th
    one (GELU is monotone, its float rounding not strictly); the threshold on ``z`` then keeps by
    ``z`` (none in 262,144 random float32 rows at the benchmark width). Elsewhere (CUDA, half
    precision, autocast) the dense path runs. Measured (one thread, CPU time, on a shared 2-core
    machine at load 9-12, so ratios only): the FFN's forward+backward at (8192, 512) 1.07-1.15x
    faster; a SPEN training step at the benchmark sizes 1.04-1.07x (seq_len 1024) and 1.02-1.03x (4096),
    medians of paired rounds, three runs (``benchmarks/bench_levers.py``, ``chunked+gemm+ffn``), and its
    peak memory 26-148 MiB lower in two runs (``z`` and the mask are not kept for the backward).

    With ``sparse_gemms = True`` as well (lever 4, the default where lever 3 runs) the whole FFN is
    :class:`_KeptFFN`: the same kept units, and the output projection and all four gradient GEMMs
    over the kept units only (sparse CSR products), so the values and gradients equal the paths
    above to float rounding (summation order; fp64 within 1e-12, ``tests/test_spen.py``).
    """

    fuse_gelu_mask: bool = True
    sparse_gemms: bool = True

    def __init__(self, config):                                   # a SPENConfig: d_model, d_ff, top_k
        super().__init__()
        self.fc = nn.Linear(config.d_model, config.d_ff)
        self.proj = nn.Linear(config.d_ff, config.d_model)
        self.k = config.top_k

    def forward(self, x: Tensor) -> Tensor:
        kept_path = (self.fuse_gelu_mask and self.k < self.fc.out_features and x.device.type == "cpu"
                     and not _cpu_autocast() and x.dtype in (torch.float32, torch.float64)
                     and self.fc.weight.dtype == x.dtype)
        if kept_path and self.sparse_gemms:                            # lever 4: sparse GEMMs after the selection
            y = _KeptFFN.apply(x.reshape(-1, x.shape[-1]), self.fc.weight, self.fc.bias,
                               self.proj.weight, self.proj.bias, self.k)               # (N, D)
            return y.view(x.shape)                                     # (B, T, D)
        z = self.fc(x)                                                 # (B, T, F): pre-activation
        if kept_path:                                                  # lever 3: GELU on the kept units only
            return self.proj(_KeptGELU.apply(z, self.k))               # (B, T, D)
        a = F.gelu(z)                                                  # (B, T, F)
        if self.k < a.shape[-1] and a.dtype in (torch.bfloat16, torch.float16):
            # half precision (autocast): exact ties at the k-th value are common, so keep topk's k
            # indices rather than a threshold (our design); sync-free on a GPU
            keep = torch.zeros_like(a, dtype=torch.bool).scatter_(-1, a.detach().topk(self.k, dim=-1).indices, True)
            a = a.masked_fill_(~keep, 0.0)                             # (B, T, F), exactly k kept
        elif self.k < a.shape[-1]:
            kth = kth_largest(a, self.k)                               # (B, T, 1), no autograd
            a = a.masked_fill_(a < kth, 0.0)                           # (B, T, F), k non-zero
        return self.proj(a)                                            # (B, T, D)
