"""Local learning rules for SPCN's predictive weights: PGHU and a plain Hebbian (Oja) rule.

Both rules update a weight matrix ``W`` (I, J) that maps presynaptic activity ``x`` (J,) to a
prediction ``y_hat = W x`` (I,) of a postsynaptic target ``y`` (I,); here ``x`` is a bank of
EMA traces at time t and ``y`` the column activity at t + 1. Everything is local (a unit's
update uses only its own error and its own inputs) and runs under ``torch.no_grad``: no
autograd anywhere in SPCN learning (the paper's Experiment 1).

- :class:`PGHU`, the **Precision-Gated Hebbian Update** (the paper's rule, brief
  "Experiment 1"; the exact form is **our design**, the paper gives only its idea): each
  postsynaptic unit i keeps a running mean and variance of its prediction error
  ``e_i = y_i - y_hat_i``; its precision is ``pi_i = 1 / (var_i + eps)``; the update is the
  error-times-input Hebbian product scaled by that precision,

      dW_ij = lr * g_i * e_i * x_j / <|x|^2>,
      g_i = clip(pi_i * mean_k(var_k), 1 / gate_max, gate_max)      (normalise=True)

  so a unit whose predictions are reliable (small error variance) learns faster than one
  whose errors are noisy. The gate is the precision measured in units of the typical error
  variance and bounded by ``gate_max``: without the bound, a unit that has converged
  (variance near 0) would take an unbounded step, and a gate normalised by the *mean
  precision* would let such a unit starve all the others (``tests/test_hebbian.py``).
  Dividing by the mean squared input norm ``<|x|^2>`` makes ``lr * g_i`` a dimensionless
  normalised-LMS step, stable below 2 for every input and free of oscillation up to 1, so
  each unit's step is capped at ``max_step`` (default 1): a reliable unit learns faster than
  a noisy one, never faster than that (``tests/test_fault_hebbian_stability.py``).
- :class:`OjaHebbian`, a plain Hebbian rule for comparison (our design): the
  correlation ``y x^T`` with Oja's decay ``- y^2 W``, no error, no precision; each unit's
  step ``lr * <y_i^2>`` is capped at 1, which keeps the weights bounded for every activity.

Updates are applied per minibatch of tokens (rows), averaging over the rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


def _check_batch(W: Tensor, x: Tensor, y: Tensor) -> None:
    if W.ndim != 2:
        raise ValueError(f"W must have shape (I, J), got {tuple(W.shape)}")
    if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0]:
        raise ValueError(f"x must be (N, J) and y (N, I) with the same N, got {tuple(x.shape)} and {tuple(y.shape)}")
    if x.shape[1] != W.shape[1] or y.shape[1] != W.shape[0]:
        raise ValueError(f"W {tuple(W.shape)} does not match x {tuple(x.shape)} -> y {tuple(y.shape)}")


@dataclass
class PGHU:
    """Precision-Gated Hebbian Update of a predictive weight matrix (see the module docstring).

    Args:
        n_units: I, the number of predicted (postsynaptic) units.
        lr: step size, dimensionless (normalised by the mean squared input norm).
        beta: rate of the running error statistics, in (0, 1] (per minibatch).
        eps: variance floor (units of error squared) so that precision stays finite.
        normalise: express precision in units of the mean error variance and clip it to
            ``[1 / gate_max, gate_max]``; if False the gate is the raw precision.
        gate_max: bound of the normalised gate (dimensionless, >= 1).
        max_step: cap of each unit's normalised-LMS step ``lr * g_i`` (dimensionless, in
            (0, 2): stable for every input below 2, without oscillation up to 1).

    Stable for every input: the cap keeps each unit's step inside the normalised-LMS range,
    whatever ``lr``, the gate and the input statistics.

    Raises:
        ValueError: ``n_units`` < 1, ``lr`` < 0, ``beta`` outside (0, 1], ``eps`` <= 0,
        ``gate_max`` < 1, ``max_step`` outside (0, 2).
    """

    n_units: int
    lr: float = 0.5
    beta: float = 0.05
    eps: float = 1e-4
    normalise: bool = True
    gate_max: float = 10.0
    max_step: float = 1.0

    def __post_init__(self):
        if self.n_units < 1:
            raise ValueError(f"n_units must be >= 1, got {self.n_units}")
        if self.lr < 0:
            raise ValueError(f"lr must be >= 0, got {self.lr}")
        if not 0 < self.beta <= 1:
            raise ValueError(f"beta must lie in (0, 1], got {self.beta}")
        if self.eps <= 0:
            raise ValueError(f"eps must be > 0, got {self.eps}")
        if self.gate_max < 1:
            raise ValueError(f"gate_max must be >= 1, got {self.gate_max}")
        if not 0 < self.max_step < 2:
            raise ValueError(f"max_step must lie in (0, 2) (the normalised-LMS stable range), got {self.max_step}")
        self.err_mean = torch.zeros(self.n_units, dtype=torch.float64)   # (I,)
        self.err_var = torch.ones(self.n_units, dtype=torch.float64)     # (I,)
        self.steps = 0

    @property
    def precision(self) -> Tensor:
        """``(I,)`` inverse running error variance, ``1 / (var + eps)`` (1 / error units squared)."""
        return 1.0 / (self.err_var + self.eps)

    def gate(self) -> Tensor:
        """``(I,)`` the per-unit factor applied to the Hebbian product."""
        p = self.precision
        if not self.normalise:
            return p
        return (p * (self.err_var.mean() + self.eps)).clamp(1 / self.gate_max, self.gate_max)

    def unit_steps(self) -> Tensor:
        """``(I,)`` each unit's normalised-LMS step ``min(lr * g_i, max_step)`` (dimensionless)."""
        return (self.lr * self.gate()).clamp(max=self.max_step)

    @torch.no_grad()
    def update_stats(self, err: Tensor) -> None:
        """Fold a minibatch of errors ``(N, I)`` into the running mean and variance.

        The first minibatch initialises the statistics (no bias from the starting values).
        """
        e = err.detach().to(torch.float64)
        m, v = e.mean(0), e.var(0, unbiased=False)
        if self.steps == 0:
            self.err_mean, self.err_var = m, v
        else:
            b = self.beta
            # running variance around the running mean (exponentially weighted)
            self.err_var = (1 - b) * self.err_var + b * (v + (m - self.err_mean) ** 2)
            self.err_mean = (1 - b) * self.err_mean + b * m
        self.steps += 1

    @torch.no_grad()
    def step(self, W: Tensor, x: Tensor, y: Tensor, mask: Tensor | None = None) -> Tensor:
        """Update ``W`` in place from one minibatch and return the errors before the update.

        Args:
            W: ``(I, J)`` predictive weights (modified in place).
            x: ``(N, J)`` presynaptic activity (e.g. traces at t).
            y: ``(N, I)`` targets (e.g. column activity at t + 1).
            mask: optional ``(N,)`` bool, rows that count.

        Returns:
            ``(N, I)`` prediction errors ``y - x W^T`` before the update.

        Raises:
            ValueError: shapes that do not match.
        """
        _check_batch(W, x, y)
        if mask is not None:
            x, y = x[mask], y[mask]
        err = y - x @ W.T                                                 # (N, I)
        if x.shape[0] == 0:
            return err
        self.update_stats(err)
        mu = self.unit_steps().to(W.dtype)                                     # (I,) lr * g, capped
        norm = (x * x).sum(1).mean().clamp_min(1e-12)                     # <|x|^2>
        W.add_((mu[:, None] * err.T) @ x, alpha=1.0 / (x.shape[0] * float(norm)))
        return err


@dataclass
class OjaHebbian:
    """Plain Hebbian learning with Oja's decay: ``dW_i = lr * (y_i x^T - y_i^2 W_i) / (N max(1, r_i))``.

    The comparison rule for PGHU (our design): no prediction error, no precision. Each row
    ``W_i`` converges to ``E[y_i x] / E[y_i^2]``, the mean input seen when unit i is active.

    A minibatch moves ``W_i`` a fraction ``r_i = lr * <y_i^2>`` of the way to the batch's
    fixed point ``sum y_i x / sum y_i^2``; plain Oja diverges when ``r_i >= 2`` (a large
    post-synaptic activity), so the fraction is capped at 1 (the ``max(1, r_i)``): stable
    for every activity and every ``lr``, and plain Oja wherever ``lr * <y_i^2> <= 1``.

    Args:
        lr: step size (per token, averaged over the minibatch), dimensionless.

    Raises:
        ValueError: ``lr`` < 0.
    """

    lr: float = 0.05

    def __post_init__(self):
        if self.lr < 0:
            raise ValueError(f"lr must be >= 0, got {self.lr}")

    @torch.no_grad()
    def step(self, W: Tensor, x: Tensor, y: Tensor, mask: Tensor | None = None) -> Tensor:
        """Update ``W`` (I, J) in place from ``x`` (N, J) and ``y`` (N, I); returns ``y - x W^T``.

        Raises:
            ValueError: shapes that do not match.
        """
        _check_batch(W, x, y)
        if mask is not None:
            x, y = x[mask], y[mask]
        err = y - x @ W.T
        n = x.shape[0]
        if n == 0:
            return err
        hebb = y.T @ x                                                    # (I, J)
        y2 = (y * y).sum(0)                                               # (I,)
        decay = y2[:, None] * W                                           # (I, J)
        over = (self.lr * y2 / n).clamp(min=1.0)[:, None].to(W.dtype)     # (I, 1) max(1, r_i)
        W.add_((hebb - decay) / over, alpha=self.lr / n)
        return err


LEARNING_RULES: tuple[str, ...] = ("pghu", "hebbian", "none")
"""The rules SPCN accepts: PGHU, plain Hebbian (Oja), or no learning (weights stay at init)."""


def make_rule(name: str, n_units: int, lr: float | None = None, **kwargs):
    """The learning rule called ``name`` for ``n_units`` predicted units (``None`` for ``"none"``).

    Raises:
        ValueError: unknown rule name (the message lists the allowed ones).
    """
    if name == "pghu":
        return PGHU(n_units, **({"lr": lr} if lr is not None else {}), **kwargs)
    if name == "hebbian":
        return OjaHebbian(**({"lr": lr} if lr is not None else {}))
    if name == "none":
        return None
    raise ValueError(f"unknown learning rule {name!r}; allowed: {', '.join(LEARNING_RULES)}")


def kwta_columns(x: Tensor, n_columns: int, top_k: int) -> Tensor:
    """k-winners-take-all within each column: ``(..., n_columns * U)`` -> binary, same shape, with exactly
    ``top_k`` ones per column of ``U`` units; among equal values the lowest index wins (e.g. an all-zero
    column picks its units ``0 .. top_k - 1``). Without ties the winners are those of ``torch.topk``.

    A stable descending sort, so ties do not depend on ``topk``'s internal order (our design: the paper
    says only "k-winners-take-all").

    Raises:
        ValueError: ``n_columns`` < 1 or not dividing the last dimension, or ``top_k`` outside 1..U.
    """
    width = x.shape[-1] if x.ndim else 0
    if n_columns < 1 or width % n_columns:
        raise ValueError(f"n_columns must be >= 1 and divide the last dimension {width}, got {n_columns}")
    U = width // n_columns
    if not 1 <= top_k <= U:
        raise ValueError(f"top_k must lie in 1..{U} (units per column), got {top_k}")
    xc = x.reshape(*x.shape[:-1], n_columns, U)                                  # (..., C, U)
    idx = torch.sort(xc, dim=-1, descending=True, stable=True).indices[..., :top_k]
    return torch.zeros_like(xc).scatter_(-1, idx, 1.0).reshape(x.shape)
