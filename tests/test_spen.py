"""SPEN (paper_lib.models.spen), its predictors and the matched Transformer: causality, sizes, sparsity."""
from __future__ import annotations

import pytest
import torch

from paper_lib.models.spen import SPEN, SPENConfig
from paper_lib.models.transformer import Transformer, TransformerConfig
from paper_lib.predictors import PREDICTORS, build_predictor, check_predictor_causal

pytestmark = pytest.mark.kernel  # also run with torch's CPU dispatch forced down: make test-dispatch

TINY = dict(vocab_size=97, n_layer=2, d_model=32, d_bottleneck=16, d_ff=64)


@pytest.mark.parametrize("kind", ["spen", "transformer"])
def test_changing_token_t_plus_1_leaves_outputs_up_to_t(kind):
    torch.manual_seed(0)
    model = SPEN(SPENConfig(**TINY)) if kind == "spen" else Transformer(TransformerConfig(n_head=4, block_size=64, vocab_size=97, n_layer=2, d_model=32, d_ff=64))
    model.eval()
    idx = torch.randint(0, 97, (2, 40))
    for t in (0, 17, 38):
        other = idx.clone()
        other[:, t + 1] = (other[:, t + 1] + 1) % 97
        with torch.no_grad():
            a, _ = model(idx)
            b, _ = model(other)
        assert torch.allclose(a[:, :t + 1], b[:, :t + 1], atol=1e-6)
        assert not torch.allclose(a[:, t + 1], b[:, t + 1], atol=1e-4)  # and the change is seen at t + 1


def test_paper_config_parameter_count_on_meta():
    with torch.device("meta"):
        spen = SPEN(SPENConfig())
        gpt = Transformer(TransformerConfig())
    assert spen.config.n_layer == 12 and spen.config.d_model == 768 and spen.config.vocab_size == 50257
    assert 120e6 <= spen.num_params() <= 140e6
    assert spen.num_params() == 128_356_608
    assert gpt.num_params() == 124_439_808  # GPT-2 small
    assert spen.lm_head.weight is spen.wte.weight  # tied


def test_sparse_ffn_keeps_six_percent(monkeypatch):
    from paper_lib.models.sparse_ffn import SparseFFN

    monkeypatch.setattr(SparseFFN, "sparse_gemms", False)             # the hidden layer is built (lever 3)
    cfg = SPENConfig(**{**TINY, "d_ff": 200})
    assert cfg.top_k == 12
    model = SPEN(cfg)
    acts = {}

    def keep(module, inputs, output):
        acts["a"] = inputs[0]

    model.blocks[0].ffn.proj.register_forward_hook(keep)
    model(torch.randint(0, 97, (1, 10)))
    assert ((acts["a"] != 0).sum(-1) <= 12).all()


def test_predictor_registry():
    cfg = SPENConfig(**TINY)
    assert "linear" in PREDICTORS
    with pytest.raises(ValueError, match="unknown predictor 'nope'; registered: .*linear"):
        build_predictor("nope", cfg)
    torch.manual_seed(0)
    u = torch.randn(2, 20, cfg.d_model)
    for name in PREDICTORS:  # every registered predictor obeys the causality contract
        p = build_predictor(name, cfg).eval()
        assert all(check_predictor_causal(p, u, t) for t in (0, 7, 19)), name


def test_bad_config():
    with pytest.raises(ValueError, match=r"^SPENConfig.top_k_frac=0.0: must be a finite number > 0 and <= 1$"):
        SPENConfig(top_k_frac=0.0)
    with pytest.raises(ValueError, match=r"^SPENConfig.alphas=\[0.5, 1.5\]: every value must be > 0 and <= 1$"):
        SPENConfig(alphas=(0.5, 1.5))
    with pytest.raises(ValueError, match=r"^SPENConfig.alphas=\(\): must be a non-empty list"):
        SPENConfig(alphas=())
    with pytest.raises(ValueError, match=r"^SPENConfig.n_layer=0: must be an integer >= 1$"):
        SPENConfig(n_layer=0)
    with pytest.raises(ValueError, match="divisible by n_head"):
        TransformerConfig(d_model=30, n_head=4)


def _scatter_reference(ffn, x):
    """The sparse FFN as first written: topk, then the kept values scattered into zeros."""
    a = torch.nn.functional.gelu(ffn.fc(x))
    vals, idx = a.topk(ffn.k, dim=-1)
    return ffn.proj(torch.zeros_like(a).scatter(-1, idx, vals))


@pytest.mark.parametrize("sparse_gemms", [False, True])
@pytest.mark.parametrize("d_model, d_ff", [(32, 200), (64, 256), (128, 512)])
def test_sparse_ffn_equals_topk_scatter_in_values_and_gradients(d_model, d_ff, sparse_gemms, monkeypatch):
    from paper_lib.models.spen import SparseFFN

    monkeypatch.setattr(SparseFFN, "sparse_gemms", sparse_gemms)
    torch.manual_seed(0)
    ffn = SparseFFN(SPENConfig(**{**TINY, "d_model": d_model, "d_ff": d_ff}))
    x = torch.randn(3, 17, d_model, requires_grad=True)
    g = torch.randn(3, 17, d_model)
    grads = []
    for fn in (ffn, lambda v: _scatter_reference(ffn, v)):
        for p in [x, *ffn.parameters()]:
            p.grad = None
        y = fn(x)
        y.backward(g)
        grads.append((y.detach(), x.grad.clone(), [p.grad.clone() for p in ffn.parameters()]))
    (y1, gx1, gp1), (y2, gx2, gp2) = grads
    assert torch.allclose(y1, y2, atol=1e-6)
    assert torch.allclose(gx1, gx2, atol=1e-6)
    for a, b in zip(gp1, gp2, strict=True):
        assert torch.allclose(a, b, atol=1e-6)
    if sparse_gemms:                                                   # no hidden tensor to look at
        return
    hidden = {}
    ffn.proj.register_forward_hook(lambda m, inp, out: hidden.setdefault("a", inp[0]))
    ffn(x)
    assert ((hidden["a"] != 0).sum(-1) == ffn.k).all()  # exactly k active per position


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_kth_largest_equals_topk(dtype):
    from paper_lib.models.spen import kth_largest

    torch.manual_seed(0)
    a = torch.randn(3, 5, 40, dtype=dtype, requires_grad=dtype != torch.bfloat16)
    for k in (1, 7, 40):
        want = a.detach().topk(k, dim=-1).values[..., -1:]            # (3, 5, 1)
        got = kth_largest(a, k)
        assert got.shape == (3, 5, 1) and got.dtype == dtype and not got.requires_grad
        assert torch.equal(got, want)
    at = a.detach().transpose(0, 2)[..., :3]                          # strided (40, 5, 3): last dim 3
    assert torch.equal(kth_largest(at, 2), at.topk(2, dim=-1).values[..., -1:])
    with pytest.raises(ValueError, match=r"k must lie in \[1, 40\] \(the last dimension\), got 41"):
        kth_largest(a, 41)
    if dtype != torch.bfloat16:                                        # the CPU path reuses one work buffer:
        first = kth_largest(a, 3)                                      # what it returned must not change
        kept = first.clone()
        kth_largest(torch.randn_like(a), 3)
        assert torch.equal(first, kept)
        one = torch.randn(6, 1, dtype=dtype)                           # F = 1: the slice is the whole buffer
        got = kth_largest(one, 1)
        kth_largest(torch.zeros(6, 1, dtype=dtype), 1)
        assert torch.equal(got, one)


def test_linear_predictor_and_mix_as_one_gemm_equal_the_two_modules(monkeypatch):
    from paper_lib.models.spen import SPENBlock

    torch.manual_seed(0)
    block = SPENBlock(SPENConfig(**TINY)).double()
    x = torch.randn(3, 70, 32, dtype=torch.float64, requires_grad=True)
    out = {}
    for fused in (True, False):
        monkeypatch.setattr(SPENBlock, "fuse_linear_mix", fused)
        y = block(x)
        out[fused] = (y.detach(), torch.autograd.grad(y.pow(2).sum(), [x, *block.parameters()]))
    assert float((out[True][0] - out[False][0]).abs().max()) < 1e-12
    assert max(float((a - b).abs().max()) for a, b in zip(out[True][1], out[False][1], strict=True)) < 1e-10
    assert float(out[True][0].abs().max()) > 0.1                       # not trivially zero


def _ffn_paths(ffn, x, g, monkeypatch, sparse_gemms=False):
    """Output and gradients (x, then the parameters) of the FFN with GELU on the kept units only
    (``True``; with ``sparse_gemms`` the whole FFN over the kept units, lever 4) and with the dense
    GELU + threshold + in-place mask (``False``)."""
    from paper_lib.models.spen import SparseFFN

    monkeypatch.setattr(SparseFFN, "sparse_gemms", sparse_gemms)
    out = {}
    for fused in (True, False):
        monkeypatch.setattr(SparseFFN, "fuse_gelu_mask", fused)
        y = ffn(x)
        out[fused] = (y.detach(), torch.autograd.grad(y, [x, *ffn.parameters()], g))
    return out


def _max_diff(out):
    (y1, g1), (y2, g2) = out[True], out[False]
    return float((y1 - y2).abs().max()), max(float((a - b).abs().max()) for a, b in zip(g1, g2, strict=True))


@pytest.mark.parametrize("sparse_gemms, dtype, tol", [(False, torch.float64, 1e-12), (False, torch.float32, 1e-6),
                                                      (True, torch.float64, 1e-12), (True, torch.float32, 1e-5)])
def test_sparse_ffn_gelu_on_kept_units_only_equals_the_dense_path(sparse_gemms, dtype, tol, monkeypatch):
    from paper_lib.models.spen import SparseFFN

    torch.manual_seed(0)
    ffn = SparseFFN(SPENConfig(**{**TINY, "d_model": 64, "d_ff": 256})).to(dtype)   # k = 15
    x = torch.randn(3, 50, 64, dtype=dtype, requires_grad=True)
    z = ffn.fc(x).detach()
    assert (z.topk(ffn.k, dim=-1).values[..., -1] > 0).all()           # every row on the fast path
    out = _ffn_paths(ffn, x, torch.randn(3, 50, 64, dtype=dtype), monkeypatch, sparse_gemms)
    dy, dg = _max_diff(out)
    assert dy < tol and dg < tol
    assert float(out[True][0].abs().max()) > 0.1 and float(out[True][1][0].abs().max()) > 0.1


@pytest.mark.parametrize("sparse_gemms", [False, True])
def test_sparse_ffn_rows_with_a_negative_kth_preactivation_select_on_gelu_and_still_match(sparse_gemms, monkeypatch):
    from paper_lib.models.spen import SparseFFN, kth_largest

    torch.manual_seed(0)
    ffn = SparseFFN(SPENConfig(**{**TINY, "d_model": 64, "d_ff": 256})).double()
    with torch.no_grad():
        ffn.fc.bias.fill_(-1.0)                                        # most pre-activations negative
    x = torch.randn(3, 50, 64, dtype=torch.float64, requires_grad=True)
    z = ffn.fc(x).detach()
    neg = kth_largest(z, ffn.k)[..., 0] <= 0                           # (3, 50): rows on the fallback
    assert 0 < int(neg.sum()) < neg.numel()                            # both kinds of row occur
    a = torch.nn.functional.gelu(z)
    on_gelu, on_z = a >= kth_largest(a, ffn.k), z >= kth_largest(z, ffn.k)
    assert (on_gelu != on_z)[neg].any()                                # selecting on z there would be wrong
    assert not (on_gelu != on_z)[~neg].any()                           # and is right where z_k > 0
    dy, dg = _max_diff(_ffn_paths(ffn, x, torch.randn(3, 50, 64, dtype=torch.float64), monkeypatch, sparse_gemms))
    assert dy < 1e-12 and dg < 1e-12
    with torch.no_grad():
        ffn.fc.bias.fill_(-3.0)                                        # every row on the fallback
    dy, dg = _max_diff(_ffn_paths(ffn, x, torch.randn(3, 50, 64, dtype=torch.float64), monkeypatch, sparse_gemms))
    assert dy < 1e-12 and dg < 1e-12


def _same_kept_units_and_close(got: torch.Tensor, want: torch.Tensor, rtol: float = 1e-6) -> None:
    """The same units kept (non-zero) and their values equal to float rounding: two GELU kernels
    (a SIMD body and its scalar tail, or two dispatch levels) may round one input differently."""
    assert torch.equal(got != 0, want != 0)
    torch.testing.assert_close(got, want, rtol=rtol, atol=0)


def test_kept_gelu_keeps_exact_ties_like_the_dense_path_and_selects_by_z():
    from paper_lib.models.sparse_ffn import _KeptGELU

    def dense(z, k):
        a = torch.nn.functional.gelu(z)
        return a.masked_fill(a < a.topk(k, dim=-1).values[..., -1:], 0.0)

    k = 4
    z = torch.full((2, 16), -1.0)
    z[0, :5] = torch.tensor([3.0, 2.5, 2.0, 1.5, 1.5])                 # an exact tie at the k-th value
    got, want = _KeptGELU.apply(z, k), dense(z, k)
    _same_kept_units_and_close(got[0], want[0])
    assert int((got[0] != 0).sum()) == 5                               # both keep all tied units
    # the k-th and the (k+1)-th pre-activation one float apart: the kept set is {z >= z_k}, whatever
    # the GELU kernel's rounding (a dense path selecting on GELU(z) keeps both where the two round to
    # one value, which some float32 kernels do and a correctly rounded GELU never does)
    z[1, :3] = torch.tensor([3.0, 2.5, 2.2])
    z[1, 3] = 1.75
    z[1, 4] = torch.nextafter(torch.tensor(1.75), torch.tensor(0.0))
    got, want = _KeptGELU.apply(z, k), dense(z, k)
    assert torch.equal(got[1] != 0, torch.arange(16) < 4)              # by z: exactly the four largest
    assert int((want[1] != 0).sum()) in (4, 5)
    torch.testing.assert_close(got[1, :4], want[1, :4], rtol=1e-6, atol=0)


@pytest.fixture(params=["native", "exact_gelu", "exact_gelu_zero_skipping_gemm"])
def kernels(request, monkeypatch):
    """This machine's GELU and GEMM, or those of others: a GELU with the exact limits (GELU(+inf) =
    +inf, GELU(-inf) = 0; the AVX2 kernel of one AMD EPYC gave +inf where this build's SIMD kernel
    gives NaN), alone or with a dense ``addmm`` that skips zero products as the reference BLAS does
    (so ``inf * 0`` never happens). A test of a non-finite input must pass on every one."""
    gelu, addmm = torch.nn.functional.gelu, torch.addmm

    def gelu_limits(z, *args, **kwargs):
        return torch.where(torch.isinf(z), z.clamp(min=0), gelu(z, *args, **kwargs))

    def addmm_skipping_zeros(bias, a, b, **kwargs):
        if a.layout != torch.strided or kwargs:
            return addmm(bias, a, b, **kwargs)
        terms = a[:, :, None] * b[None]                                # (N, K, M)
        return bias + torch.where(b[None] != 0, terms, torch.zeros(())).sum(1)
    if request.param != "native":
        monkeypatch.setattr(torch.nn.functional, "gelu", gelu_limits)
    if request.param == "exact_gelu_zero_skipping_gemm":
        monkeypatch.setattr(torch, "addmm", addmm_skipping_zeros)
    return request.param


def test_kept_gelu_propagates_nan_and_inf_as_every_correct_kernel_must(kernels):
    """What IEEE arithmetic and any GELU kernel guarantee, not what one kernel returns for +-inf:
    GELU(NaN) is NaN and kept; GELU(+inf) is +inf or NaN (0 * inf inside some kernels) and kept;
    GELU(-inf) is 0 (dropped) or NaN (kept); finite rows are the dense path's, untouched by the others."""
    from paper_lib.models.sparse_ffn import _KeptGELU

    torch.manual_seed(0)
    z = torch.randn(6, 64)
    z[1, 3], z[2, 5], z[3, 0], z[4, 7] = float("nan"), float("inf"), -float("inf"), float("nan")
    z[4, 9] = -float("inf")
    a = torch.nn.functional.gelu(z)
    want = a.masked_fill(a < a.topk(4, dim=-1).values[..., -1:], 0.0)  # the dense path, k = 4
    got = _KeptGELU.apply(z, 4)
    assert got[1, 3].isnan() and got[4, 7].isnan()                     # NaN in, NaN kept
    assert not torch.isfinite(got[2, 5]) and not (got[2, 5] < 0)       # +inf in: +inf or NaN, kept
    assert got[3, 0].isnan() or got[3, 0] == 0                         # -inf in: dropped or NaN
    assert (torch.isfinite(got) | ~torch.isfinite(z)).all()            # no other unit turns non-finite
    finite = [0, 5]
    assert torch.isfinite(got[finite]).all()
    _same_kept_units_and_close(got[finite], want[finite])
    _same_kept_units_and_close(got[finite], _KeptGELU.apply(z[finite].contiguous(), 4))   # unaffected


def test_kept_gelu_saves_a_sixteenth_of_what_the_dense_path_saves(monkeypatch):
    from paper_lib.models.spen import SparseFFN

    torch.manual_seed(0)
    ffn = SparseFFN(SPENConfig(**{**TINY, "d_model": 64, "d_ff": 256}))
    x = torch.randn(4, 100, 64, requires_grad=True)
    saved, largest = {}, {}
    for fused in (True, False, "sparse_gemms"):
        monkeypatch.setattr(SparseFFN, "fuse_gelu_mask", bool(fused))
        monkeypatch.setattr(SparseFFN, "sparse_gemms", fused == "sparse_gemms")
        sizes = []

        def pack(t, sizes=sizes):
            sizes.append(t.numel() * t.element_size())
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            ffn(x)
        saved[fused], largest[fused] = sum(sizes), max(sizes)
    n, f, k = 400, 256, ffn.k
    # lever 4 keeps x (n, d), the two weights and 28 bytes a kept unit (three int64 indices, fp32 z):
    # no (n, f) tensor at all, and less in all than lever 3
    assert largest["sparse_gemms"] == max(n * 64 * 4, f * 64 * 4) and largest[True] >= n * f * 4
    assert saved["sparse_gemms"] <= n * 64 * 4 + 2 * f * 64 * 4 + n * k * 28 + (n + 1) * 8 < saved[True]
    assert saved[False] - saved[True] >= n * f * 5 - n * k * 12        # z (fp32) and the bool mask gone
    assert saved[False] - saved[True] <= n * f * 5


def test_kept_ffn_keeps_exact_ties_propagates_nan_and_matches_the_dense_gradients_without_bias_gradients(kernels):
    """Against a dense reference that computes the same products (``z = x W_1^T + b_1`` by the same
    ``addmm``, so ``inf * 0`` gives what this machine's BLAS gives, in both): the non-finite rows are
    non-finite in both, the finite rows finite, equal to float rounding and untouched by the others.
    Nothing is assumed of how a kernel treats ``inf * 0`` (IEEE says NaN; BLAS may skip a zero)."""
    from paper_lib.models.sparse_ffn import _KeptFFN

    torch.manual_seed(0)
    k, D = 4, 16
    x = torch.randn(6, D)                                              # w1 = I, b1 = 0: z is x, up to BLAS
    x[0, :5] = torch.tensor([3.0, 2.5, 2.0, 1.5, 1.5])                 # an exact tie at the k-th value
    x[0, 5:] = -1.0
    x[1, 3], x[2, 5], x[3, 0] = float("nan"), float("inf"), -float("inf")
    w1, b1 = torch.eye(D), torch.zeros(D)
    w2, b2 = torch.randn(8, D), torch.randn(8)
    assert (w2 != 0).all()                                             # a non-finite kept unit reaches every output
    z = torch.addmm(b1, x, w1.t())                                     # the same products as _KeptFFN's
    a = torch.nn.functional.gelu(z)
    want = torch.addmm(b2, a.masked_fill(a < a.topk(k, dim=-1).values[..., -1:], 0.0), w2.t())   # the dense path
    got = _KeptFFN.apply(x, w1, b1, w2, b2, k)
    assert got[1].isnan().all() and want[1].isnan().all()              # NaN in: NaN * 1 is NaN, kept, everywhere
    assert not torch.isfinite(got[2]).any() and not torch.isfinite(want[2]).any()   # +inf in: inf or NaN out
    finite = [0, 4, 5]                                                 # (row 3, -inf: GELU(-inf) is 0 or NaN)
    assert torch.isfinite(got[finite]).all()
    torch.testing.assert_close(got[finite], want[finite], rtol=0, atol=1e-5)
    torch.testing.assert_close(got[finite], _KeptFFN.apply(x[finite], w1, b1, w2, b2, k), rtol=0, atol=1e-6)
    # row 0 keeps all five tied units: its output is W2 GELU(z) over units 0-4
    torch.testing.assert_close(got[0], b2 + w2[:, :5] @ torch.nn.functional.gelu(x[0, :5]), rtol=0, atol=1e-5)
    x = torch.randn(5, D, dtype=torch.float64, requires_grad=True)
    ws = [w1.double().requires_grad_(), torch.zeros(D, dtype=torch.float64),
          w2.double().requires_grad_(), b2.double()]                   # the biases need no gradient
    y = _KeptFFN.apply(x, *ws, k)
    gx, gw1, gw2 = torch.autograd.grad(y.pow(2).sum(), [x, ws[0], ws[2]])
    xr = x.detach().clone().requires_grad_()
    wr = [w.detach().clone().requires_grad_() for w in (ws[0], ws[2])]
    ar = torch.nn.functional.gelu(xr @ wr[0].t())
    yr = torch.addmm(ws[3], ar.masked_fill(ar < ar.topk(k, dim=-1).values[..., -1:], 0.0), wr[1].t())
    ref = torch.autograd.grad(yr.pow(2).sum(), [xr, *wr])
    assert max(float((a - b).abs().max()) for a, b in zip((gx, gw1, gw2), ref, strict=True)) < 1e-12
    assert float(gw1.abs().max()) > 0.1
