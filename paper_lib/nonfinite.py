"""Inf/NaN helpers shared by the fast EMA (:mod:`paper_lib.ema`) and the selective EMA
(:mod:`paper_lib.ema_selective`): their fast paths see the finite part of an input and carry the rest."""
from __future__ import annotations

import torch
from torch import Tensor


def _split_finite(t: Tensor) -> tuple[Tensor, Tensor]:
    """``t`` as (its finite part, its inf/NaN part), each 0 where the other holds the value."""
    ok, zero = torch.isfinite(t), t.new_zeros(())
    return torch.where(ok, t, zero), torch.where(ok, zero, t)


def _all_finite(*ts: Tensor | None) -> bool:
    """True when no tensor holds inf/NaN: one float32+ sum each (a finite tensor whose sum
    overflows only sends the caller down its exact path, which gives the same result)."""
    return all(bool(torch.isfinite(t.sum(dtype=torch.promote_types(t.dtype, torch.float32))))
               for t in ts if t is not None)
