"""Rotary positions of the Transformer (paper_lib.models.transformer): RoFormer's rotation, its
relative-position property, causality, sizes, and defaults that leave GPT-2's model as it was."""
from __future__ import annotations

import pytest
import torch

from paper_lib.models.lm import count_params
from paper_lib.models.transformer import (
    CausalSelfAttention,
    Transformer,
    TransformerConfig,
    apply_rotary,
    rotary_tables,
)

pytestmark = pytest.mark.kernel  # also run with torch's CPU dispatch forced down: make test-dispatch

SMALL = dict(vocab_size=97, n_layer=2, d_model=32, n_head=4, d_ff=64, block_size=64)


def _complex_reference(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """RoFormer's rotation written as complex numbers: the pair ``(x_i, x_{i + hd/2})`` at position
    ``m`` times ``exp(1j * m * base ** (-2i / hd))`` (float64)."""
    hd = x.shape[-1]
    z = torch.complex(x[..., : hd // 2].double(), x[..., hd // 2:].double())          # (..., T, hd/2)
    m = torch.arange(x.shape[-2], dtype=torch.float64)[:, None]
    theta = base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    w = z * torch.polar(torch.ones_like(m * theta), m * theta)
    return torch.cat([w.real, w.imag], dim=-1)


def test_rotary_equals_the_complex_rotation_and_keeps_norms():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 50, 16, dtype=torch.float64)
    y = apply_rotary(x, *rotary_tables(50, 16, 500.0, dtype=torch.float64))
    assert torch.allclose(y, _complex_reference(x, 500.0), atol=1e-12)
    assert torch.allclose(apply_rotary(x.float(), *rotary_tables(50, 16, 500.0)), y.float(), atol=1e-5)  # float32
    assert torch.allclose(y.norm(dim=-1), x.norm(dim=-1), atol=1e-10)                 # a rotation
    assert torch.equal(y[..., 0, :], x[..., 0, :])                                     # position 0: no turn


def test_rotary_scores_depend_on_the_distance_only():
    torch.manual_seed(0)
    T, hd = 40, 8
    q, k = torch.randn(hd, dtype=torch.float64), torch.randn(hd, dtype=torch.float64)
    cos, sin = rotary_tables(T, hd, dtype=torch.float64)
    rq = apply_rotary(q.expand(1, 1, T, hd), cos, sin)[0, 0]                          # (T, hd): q at every position
    rk = apply_rotary(k.expand(1, 1, T, hd), cos, sin)[0, 0]
    s = rq @ rk.T                                                                      # (T, T): s[i, j] = q_i . k_j
    for d in (-7, 0, 1, 5, 20):                                                        # every diagonal is constant
        diag = torch.diagonal(s, offset=-d)                                            # entries with i - j = d
        assert torch.allclose(diag, diag[0].expand_as(diag), atol=1e-10)
    assert torch.diagonal(s, 0)[0] == pytest.approx(float(q @ k), abs=1e-10)          # distance 0: the plain product
    lags = torch.stack([torch.diagonal(s, offset=-d)[0] for d in range(8)])
    assert lags.std() > 0.1 * lags.abs().mean()                                       # and it does change with i - j


def test_rotary_attention_equals_softmax_of_rotated_scores_written_out():
    torch.manual_seed(0)
    attn = CausalSelfAttention(TransformerConfig(**SMALL, positions="rotary")).double()
    attn.cos, attn.sin = rotary_tables(64, 8, dtype=torch.float64)                  # the module's tables, in float64
    x = torch.randn(2, 24, 32, dtype=torch.float64)
    q, k, v = (z.view(2, 24, 4, 8).transpose(1, 2) for z in attn.qkv(x).split(32, dim=2))   # (B, H, T, 8)
    q, k = _complex_reference(q), _complex_reference(k)
    s = (q @ k.transpose(-1, -2)) / 8 ** 0.5 + torch.full((24, 24), float("-inf")).triu(1).double()
    ref = attn.proj((s.softmax(-1) @ v).transpose(1, 2).reshape(2, 24, 32))
    with torch.no_grad():
        assert torch.allclose(attn(x), ref, atol=1e-10)


@pytest.mark.parametrize("positions", ["learned", "rotary"])
@pytest.mark.parametrize("attn_only", [False, True])
def test_changing_token_t_plus_1_leaves_outputs_up_to_t(positions, attn_only):
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(**SMALL, positions=positions, attn_only=attn_only)).eval()
    idx = torch.randint(0, 97, (2, 40))
    for t in (0, 17, 38):
        other = idx.clone()
        other[:, t + 1] = (other[:, t + 1] + 1) % 97
        with torch.no_grad():
            a, b = model(idx)[0], model(other)[0]
        assert torch.allclose(a[:, :t + 1], b[:, :t + 1], atol=1e-6)
        assert not torch.allclose(a[:, t + 1], b[:, t + 1], atol=1e-4)


def test_parameter_counts():
    learned, rotary = (Transformer(TransformerConfig(**SMALL, positions=p)) for p in ("learned", "rotary"))
    assert count_params(learned) - count_params(rotary) == 64 * 32                     # the position table
    assert "wpe.weight" in learned.state_dict() and not any("wpe" in k or "cos" in k for k in rotary.state_dict())
    d, ff, layers = 32, 64, 2
    mlp = ff * d + ff + d * ff + d + 2 * d                                             # fc, proj, ln_2
    assert count_params(Transformer(TransformerConfig(**SMALL, attn_only=True))) == count_params(learned) - layers * mlp
    with torch.device("meta"):
        assert Transformer(TransformerConfig(positions="rotary")).num_params() == 124_439_808 - 1024 * 768


def test_default_is_gpt2_with_learned_positions_and_the_same_weights():
    a = Transformer(TransformerConfig(**SMALL))
    torch.manual_seed(3)
    b = Transformer(TransformerConfig(**SMALL, positions="learned", attn_only=False))
    torch.manual_seed(3)
    c = Transformer(TransformerConfig(**SMALL))
    assert a.config.positions == "learned" and a.wpe is not None
    assert all(torch.equal(x, y) for x, y in zip(b.state_dict().values(), c.state_dict().values(), strict=True))


def test_bad_positions_and_too_long_input():
    with pytest.raises(ValueError, match=r"^TransformerConfig.positions='absolute': must be one of learned, rotary$"):
        TransformerConfig(positions="absolute")
    with pytest.raises(ValueError, match=r"head size d_model / n_head = 5 must be even"):
        TransformerConfig(d_model=20, n_head=4, positions="rotary")
    with pytest.raises(ValueError, match=r"^TransformerConfig.rope_base=1.0: must be a finite number > 1$"):
        TransformerConfig(rope_base=1.0)
    model = Transformer(TransformerConfig(**SMALL, positions="rotary"))
    with pytest.raises(ValueError, match="sequence of 65 tokens is longer than block_size 64"):
        model(torch.zeros(1, 65, dtype=torch.long))
