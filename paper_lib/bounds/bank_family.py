"""The best fixed-decay bank of a stated family on key-update recall: the Bayes bound, maximised over
banks of ``N`` numbers (their rates, how the numbers are split among the rates, and their codes).

One fixed bank is one instance; "fixed decay loses what selection keeps" is a claim about every
fixed bank of that size, so its bound is a maximum over a family (our design: the paper is
silent). A bank (:class:`FixedBank`) is ``R`` groups of numbers; every number of group ``r`` decays
at the fixed rate ``a_r``, in the resource model's normalised units (:mod:`.noise_budget`): a token
writes ``b_r c_j`` into number ``j`` (``b = sqrt(a (2 - a))``, its code entry ``c_j`` in [-1, 1]) and
every number carries ``sigma`` of Gaussian noise per step. Codes:

- ``one-hot``: each token its own number in every group (needs ``vocab_size`` numbers per group);
- ``dense``: every number a sign, ``+-1``, the same near-orthogonal sign code in every group (rows
  of an 8 x 8 Hadamard matrix tiled along the group; below 8 numbers, the corners of the cube);
- ``per-rate``: such a sign code drawn afresh for every group (another order of the values and
  other signs per group), so that groups of few numbers still tell the values apart together.

**The bound** (:func:`genie_accuracy`) is the accuracy of the Bayes reader told, beyond the bank,
every token except the values bound to the query key (which slots bind it, and every other slot's
key and value). What it is not told enters linearly, so its posterior over the assignments of
distinct values to those slots is exact: with ``w_(s, v)`` the whitened write of value ``v`` in slot
``s`` (``b_j (1 - a_j)^lag_s c_vj / sd_j``, ``sd_j`` the noise std the number holds at the answer)
and ``K = W W^T``, an assignment ``h`` scores ``sum_i Y[s_i, h_i] - 1/2 sum_ii' K[(s_i, h_i), (s_i', h_i')]``
with ``Y = W y``. Told more than any reader of the bank, it bounds them all from above, the MLP
oracle and the learned time-invariant scan's readout included (that scan's code lies outside the
family's codes: the rule reads it beside the bound). For the one-hot bank it is
:func:`paper_lib.bounds.update_bound.update_bound` (the test checks that they agree). The
expectation over sequences and noise is a Monte-Carlo average; a search draws the same sequences
and noise for every bank (common random numbers), and the best bank of each gap is scored again on
fresh draws (:func:`best_banks`), so that the maximum is not the luck of the draw.

Shapes: codes ``(V, N)``; ``W`` ``(n_slots * V, N)``; ``K`` ``(n_slots * V, n_slots * V)``.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from ..data.update_recall import UpdateTask, sample_update
from .noise_budget import check_sigma, noise_var, write_gain

CODES: tuple[str, ...] = ("one-hot", "dense", "per-rate")
"""The codes of the family (module docstring)."""


@dataclass(frozen=True)
class FixedBank:
    """``sizes[r]`` numbers at the fixed rate ``rates[r]``, written with ``code`` (module docstring).

    Raises:
        ValueError: rates outside (0, 1], sizes below 1 or of another length, an unknown code.
    """

    rates: tuple[float, ...]
    sizes: tuple[int, ...]
    code: str = "dense"

    def __post_init__(self):
        if len(self.rates) != len(self.sizes) or not self.rates:
            raise ValueError(f"a bank needs one size per rate, got rates {self.rates} and sizes {self.sizes}")
        if any(not 0 < a <= 1 for a in self.rates) or any(n < 1 for n in self.sizes):
            raise ValueError(f"rates must lie in (0, 1] and sizes be >= 1, got {self.rates}, {self.sizes}")
        if self.code not in CODES:
            raise ValueError(f"unknown code {self.code!r}; allowed: {', '.join(CODES)}")

    @property
    def numbers(self) -> int:
        return sum(self.sizes)

    def label(self) -> str:
        """The bank in words, e.g. ``3 x 81 at 0.5/0.1/0.02, dense code``."""
        groups = (f"{len(self.sizes)} x {self.sizes[0]}" if len(set(self.sizes)) == 1
                  else " + ".join(map(str, self.sizes)))
        rates = "/".join(f"{a:.3g}" for a in self.rates) if len(self.rates) <= 3 else \
            f"{self.rates[0]:.3g} .. {self.rates[-1]:.3g} (log-spaced)"
        return f"{groups} at {rates}, {self.code} code"


def _sign_code(d: int, V: int) -> np.ndarray:
    """``(V, d)`` near-orthogonal ``+-1`` codes: Hadamard rows tiled (``d >= 8``), cube corners below."""
    if d >= V:
        H = np.array([[1.0]])
        while len(H) < V:
            H = np.block([[H, H], [H, -H]])
        return np.tile(H[:V], (1, math.ceil(d / len(H))))[:, :d]
    bits = (np.arange(V)[:, None] >> np.arange(d)[None, :]) & 1
    return 1.0 - 2.0 * bits


def bank_codes(bank: FixedBank, task: UpdateTask, seed: int = 0) -> np.ndarray:
    """``(V, N)`` the codes of one key's ``V`` pair tokens, number by number (groups in order).

    Raises:
        ValueError: a one-hot group with fewer numbers than the task's ``vocab_size``.
    """
    V, rng, parts = task.n_values, np.random.default_rng(seed), []
    for d in bank.sizes:
        if bank.code == "one-hot":
            if d < task.vocab_size:
                raise ValueError(f"a one-hot group needs {task.vocab_size} numbers (one per token), got {d}")
            parts.append(np.eye(V, d))
        elif bank.code == "dense":
            parts.append(_sign_code(d, V))
        else:
            parts.append(_sign_code(d, V)[rng.permutation(V)] * rng.choice([-1.0, 1.0], size=d))
    return np.concatenate(parts, axis=1)


def whitened_writes(bank: FixedBank, task: UpdateTask, gap: int, sigma: float) -> Tensor:
    """``W`` ``(n_slots * V, N)`` float64: row ``s * V + v`` is value ``v``'s write in slot ``s`` as the
    bank holds it at the answer, divided by each number's noise std there (``sigma > 0``)."""
    a = torch.tensor(np.repeat(bank.rates, bank.sizes), dtype=torch.float64)          # (N,)
    lag = task.answer_pos(gap) - torch.arange(task.n_slots, dtype=torch.float64)      # (S,)
    g = write_gain(a.tolist()) * (1 - a)[None, :] ** lag[:, None]                      # (S, N)
    sd = noise_var(a.tolist(), sigma, task.answer_pos(gap) + 1).sqrt()                 # (N,)
    c = torch.from_numpy(bank_codes(bank, task))                                       # (V, N)
    return (g[:, None, :] * c[None, :, :] / sd).reshape(task.n_slots * task.n_values, -1)


def genie_accuracy(bank: FixedBank, task: UpdateTask, gap: int, sigma: float, n: int = 4000,
                   seed: int = 0) -> dict[str, float]:
    """The bound at ``gap``: the told reader's accuracy (module docstring) on ``n`` draws of sequences
    and noise (seeded by ``seed``: the same draws for every bank of the same size). Returns ``{"acc",
    "se"}`` (fractions; ``se`` the Monte-Carlo standard error). At ``sigma = 0`` distinct assignments
    write distinct states, so the bound is 1 exactly.

    Raises:
        ValueError: ``sigma < 0``, ``n < 1``.
    """
    if check_sigma(sigma) == 0:
        return {"acc": 1.0, "se": 0.0}
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    W = whitened_writes(bank, task, gap, sigma)
    K = W @ W.T
    V = task.n_values
    g = torch.Generator().manual_seed(int(seed))
    b = sample_update(task, gap, n, g)
    z = torch.randn(n, bank.numbers, generator=g, dtype=torch.float64)
    rows, slots = b.bound.nonzero(as_tuple=True)
    Y = z @ W.T                                                                         # (n, S * V) noise
    Y.index_add_(0, rows, K[slots * V + b.slot_values[rows, slots]])                   # + the signal
    right, counts = 0, b.bound.sum(1)
    for m in counts.unique().tolist():
        r = (counts == m).nonzero(as_tuple=True)[0]
        pos = b.bound[r].nonzero(as_tuple=True)[1].view(len(r), m)                      # (r, m) ascending
        h = torch.tensor(list(itertools.permutations(range(V), m)))                     # (H, m)
        idx = pos[:, None, :] * V + h[None, :, :]                                       # (r, H, m) rows of Y, K
        score = Y[r[:, None, None], idx].sum(2)
        for i in range(m):
            for j in range(m):
                score -= 0.5 * K[idx[:, :, i], idx[:, :, j]]
        lse = torch.stack([torch.logsumexp(score[:, h[:, -1] == v], 1) for v in range(V)], 1)
        right += int((lse.argmax(1) == b.latest[r]).sum())
    p = right / n
    return {"acc": p, "se": math.sqrt(max(p * (1 - p), 1e-12) / n)}


def family(numbers: int = 243, vocab_size: int = 81, lo: float = 0.005, hi: float = 0.9,
           grid: int = 10) -> list[FixedBank]:
    """The stated family of fixed banks of ``numbers`` numbers (our design, the issue's span):

    - three rates, every 3-set of ``grid`` log-spaced rates in ``[lo, hi]``, the numbers split
      equally (one-hot where a third of them holds ``vocab_size``; dense) or unequally (half, a
      third, a sixth, to the fastest or to the slowest rate; dense);
    - one rate for every number (each rate of the grid; dense);
    - more rates with fewer numbers each: ``R`` in (9, 27, 81, ``numbers``) groups of
      ``numbers / R``, rates log-spaced from ``r1`` to ``r2`` for every pair ``r1 < r2`` of the grid
      (dense and per-rate codes).

    Raises:
        ValueError: ``numbers`` not divisible by 3, or a grid of fewer than 3 rates.
    """
    if numbers % 3 or grid < 3:
        raise ValueError(f"the family needs numbers divisible by 3 and a grid of >= 3 rates, got {numbers}, {grid}")
    rates = np.geomspace(hi, lo, grid).round(5)
    third, out = numbers // 3, []
    unequal = [(numbers - numbers // 3 - numbers // 6, numbers // 3, numbers // 6)]
    unequal.append(unequal[0][::-1])
    for trio in itertools.combinations(rates.tolist(), 3):
        if third >= vocab_size:
            out.append(FixedBank(trio, (third,) * 3, "one-hot"))
        out += [FixedBank(trio, (third,) * 3, "dense")] + [FixedBank(trio, s, "dense") for s in unequal]
    out += [FixedBank((a,), (numbers,), "dense") for a in rates.tolist()]
    for R in (9, 27, 81, numbers):
        if numbers % R:
            continue
        for r1, r2 in itertools.combinations(rates.tolist(), 2):
            spread = tuple(np.geomspace(r1, r2, R).round(6).tolist())
            out += [FixedBank(spread, (numbers // R,) * R, c) for c in ("dense", "per-rate")]
    return out


def search(task: UpdateTask, gaps: Sequence[int], sigma: float, banks: Sequence[FixedBank], n: int,
           seed: int, progress=None) -> pd.DataFrame:
    """:func:`genie_accuracy` of every bank at every gap on common draws (``n`` each, seeded ``seed + gap``):
    rows ``bank, code, groups, rates, gap, acc, se``. ``progress``: a tqdm bar advanced per bank."""
    rows = []
    for bank in banks:
        for d in gaps:
            r = genie_accuracy(bank, task, int(d), sigma, n, seed + int(d))
            rows.append({"bank": bank.label(), "code": bank.code, "groups": len(bank.sizes),
                         "rates": list(bank.rates), "sizes": list(bank.sizes), "gap": int(d), **r})
        if progress is not None:
            progress.update(1)
    return pd.DataFrame(rows)


def best_banks(table: pd.DataFrame, task: UpdateTask, sigma: float, top: int, top_draws: int, final_draws: int,
               seed: int) -> pd.DataFrame:
    """Per gap, the family's best bank and its bound: the ``top`` banks of ``table`` (:func:`search`)
    scored again on ``top_draws`` common draws (seeded ``seed + gap``), the best of them on
    ``final_draws`` fresh ones (seeded ``seed + 100_000 + gap``, draws no selection saw): rows ``gap, bank,
    code, rates, sizes, acc, se, search_acc``."""
    rows = []
    for d, g in table.groupby("gap"):
        cands = [FixedBank(tuple(r.rates), tuple(r.sizes), r.code) for r in g.nlargest(top, "acc").itertuples()]
        again = [genie_accuracy(b, task, int(d), sigma, top_draws, seed + int(d))["acc"] for b in cands]
        bank = cands[int(np.argmax(again))]
        r = genie_accuracy(bank, task, int(d), sigma, final_draws, seed + 100_000 + int(d))
        rows.append({"gap": int(d), "bank": bank.label(), "code": bank.code, "rates": list(bank.rates),
                     "sizes": list(bank.sizes), **r, "search_acc": float(max(again))})
    return pd.DataFrame(rows)
