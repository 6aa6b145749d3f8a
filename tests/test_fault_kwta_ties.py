"""Fault kind: ``kwta_columns`` says ties are broken by index, but an all-zero column
of 16 units picked units [10, 11] (of 64: [42, 43]), whatever ``torch.topk`` returned.

:func:`paper_lib.hebbian.kwta_columns` breaks ties by the lowest index, and picks the same winners
as ``torch.topk`` whenever there is no tie.
"""
from __future__ import annotations

import pytest
import torch

from paper_lib.hebbian import kwta_columns

pytestmark = pytest.mark.kernel  # also run with torch's CPU dispatch forced down: make test-dispatch


@pytest.mark.parametrize("units", [16, 64])
def test_all_zero_column_picks_the_lowest_indices(units):
    out = kwta_columns(torch.zeros(units), 1, 2)
    assert out.nonzero().flatten().tolist() == [0, 1]


def test_ties_at_the_boundary_go_to_the_lowest_index_in_every_column():
    x = torch.tensor([[0.0, 5.0, 1.0, 1.0, 1.0, 0.0,     2.0, 2.0, 2.0, 2.0, -1.0, 3.0]])
    out = kwta_columns(x, 2, 2)
    assert out.tolist() == [[0.0, 1.0, 1.0, 0.0, 0.0, 0.0,   1.0, 0.0, 0.0, 0.0, 0.0, 1.0]]
    batch = kwta_columns(torch.zeros(3, 7, 4 * 16), 4, 3)                    # (B, T, C * U)
    assert batch.shape == (3, 7, 64)
    assert torch.equal(batch.view(3, 7, 4, 16)[..., :3], torch.ones(3, 7, 4, 3))
    assert batch.sum().item() == 3 * 7 * 4 * 3


def test_without_ties_the_winners_are_those_of_topk():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 9, 8 * 32, generator=g)
    xc = x.view(5, 9, 8, 32)
    ref = torch.zeros_like(xc).scatter_(-1, xc.topk(4, dim=-1).indices, 1.0).view_as(x)
    assert torch.equal(kwta_columns(x, 8, 4), ref)


def test_bad_sizes_are_one_line_errors():
    with pytest.raises(ValueError, match=r"^n_columns must be >= 1 and divide the last dimension 10, got 3$"):
        kwta_columns(torch.zeros(10), 3, 1)
    with pytest.raises(ValueError, match=r"^top_k must lie in 1\.\.5 \(units per column\), got 6$"):
        kwta_columns(torch.zeros(10), 2, 6)
