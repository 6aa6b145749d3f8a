"""The resource model of key-update recall: every recurrent state number at unit scale carries
additive Gaussian noise ``sigma`` at every step, in training and in test.

In exact arithmetic a fixed trace bank loses nothing (the ``alpha = 0.5`` trace alone is a binary
register of the last ~24 tokens in float32), so "fixed decay discards content" means something only
under a stated precision per state number, the framing of Zoology and Based (recurrent state size in
bits). Ours (our design, the paper is silent):

- **The scale.** A trace ``h_t = (1 - a) h_{t-1} + a x_t`` is read as ``z = gain * h`` with
  ``gain = sqrt((2 - a) / a)`` (:func:`trace_gain`, :class:`paper_lib.bounds.oracle.TraceOracle`'s
  rescaling): for a white input of unit variance ``z`` has unit stationary std, and
  ``z_t = (1 - a) z_{t-1} + b x_t`` with ``b = sqrt(a (2 - a))`` (:func:`write_gain`). An input of
  amplitude 1 (a one-hot code, a ``tanh`` value) thus writes at most ``b`` into a number whose scale is 1.
- **The noise.** Every state number gets ``sigma * N(0, 1)`` after every step:
  ``z_t = (1 - a) z_{t-1} + b x_t + sigma eps_t``. The noise accumulates as the signal does: after
  ``t + 1`` steps its variance is ``sigma^2 sum_{k <= t} (1 - a)^(2k)`` (:func:`noise_var`), which for
  the slow trace (``a = 0.02``) grows to ``(5 sigma)^2``. The same ``sigma`` is added to the GRU's
  state (whose numbers lie in [-1, 1]), to the selective scan's normalised state and to SPEN's
  traces in these units (:mod:`paper_lib.models.noisy_states`); notebook 02's lag study puts SPCN's
  level-1 bank and its GRU language model under it too (:mod:`paper_lib.experiments.lag_stage`).

**What the one-hot bank bounds.** The one-hot bank (:func:`bank_read`) is the fixed bank of any
token-wise code of unit norm up to a rotation (isotropic noise is rotation-invariant). A code may use
every number's range instead: an orthogonal code with entries in [-1, 1] has norm at most
``sqrt(vocab)``, and rotated back it is the one-hot bank at ``sigma / sqrt(vocab)`` (:func:`dense_sigma`).

Shapes: token ids ``(B, T)``; inputs ``(B, T, D)``; traces ``(B, T, S, D)`` with ``S`` rates.
"""
from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import Tensor

from ..ema import check_alphas, ema_traces


def trace_gain(alphas: Sequence[float]) -> Tensor:
    """``(S,)`` float64 ``sqrt((2 - a) / a)``: the rescaling of a trace to unit stationary std."""
    a = check_alphas(alphas)
    return ((2 - a) / a).sqrt()


def write_gain(alphas: Sequence[float]) -> Tensor:
    """``(S,)`` float64 ``b = sqrt(a (2 - a))``: what an input of 1 adds to a normalised trace."""
    a = check_alphas(alphas)
    return (a * (2 - a)).sqrt()


def noise_var(alphas: Sequence[float], sigma: float, steps: int) -> Tensor:
    """``(S,)`` float64 variance of the noise a normalised trace holds after ``steps`` noisy steps:
    ``sigma^2 sum_{k < steps} (1 - a)^(2k)``.

    Raises:
        ValueError: ``sigma < 0`` or ``steps < 0``.
    """
    check_sigma(sigma)
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    d = (1 - check_alphas(alphas)) ** 2                                          # in [0, 1): alpha in (0, 1]
    return sigma ** 2 * (1 - d ** steps) / (1 - d)


def check_sigma(sigma: float) -> float:
    """``sigma`` as a float, or a one-line ValueError unless it is a finite number >= 0."""
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not math.isfinite(sigma) or sigma < 0:
        raise ValueError(f"noise sigma must be a finite number >= 0, got {sigma!r}")
    return float(sigma)


def dense_sigma(sigma: float, vocab_size: int) -> float:
    """The one-hot bank's noise that matches an orthogonal code with entries in [-1, 1] at ``sigma``
    (norm ``sqrt(vocab_size)`` per token, rotated back): ``sigma / sqrt(vocab_size)``."""
    return check_sigma(sigma) / math.sqrt(vocab_size)


def noisy_traces(x: Tensor, alphas: Sequence[float], sigma: float, causal: bool = False,
                 generator: torch.Generator | None = None) -> Tensor:
    """EMA traces of ``x`` ``(B, T, D)`` with the resource model's noise, in the traces' own units.

    Returns ``(B, T, S, D)``: ``ema_traces(x, alphas, causal) + n / gain`` with ``n`` the normalised
    noise process ``n_t = (1 - a) n_{t-1} + sigma eps_t`` (so ``gain *`` the result is the noisy
    normalised trace; :func:`paper_lib.ema.ema_traces` runs the noise's recurrence too, as the
    EMA of ``(sigma / a) eps``). ``causal`` shifts the noise with the trace (the trace at ``t`` holds
    ``x_{<t}`` and ``t`` noisy steps). Gradients flow to ``x`` only. ``sigma = 0``: the plain traces.
    """
    h = ema_traces(x, alphas, causal=causal)
    if check_sigma(sigma) == 0:
        return h
    a = [float(v) for v in check_alphas(alphas)]
    eps = torch.randn(x.shape[0], x.shape[1], len(a), x.shape[2], generator=generator, dtype=x.dtype, device=x.device)
    noise = torch.stack([ema_traces(eps[:, :, s] * (sigma / a[s]), (a[s],), causal=causal)[:, :, 0]
                         for s in range(len(a))], dim=2)                     # (B, T, S, D), normalised units
    gain = trace_gain(a).to(dtype=x.dtype, device=x.device).view(1, 1, -1, 1)
    return h + noise / gain


def bank_read(inputs: Tensor, pos: int, vocab_size: int, alphas: Sequence[float], sigma: float,
              generator: torch.Generator | None = None) -> Tensor:
    """The noisy normalised one-hot bank at position ``pos`` (its input included): ``(B, S, vocab_size)``.

    Sampled in closed form, which is the recurrence's distribution exactly (a linear Gaussian
    recurrence): the signal ``sum_{t <= pos} b (1 - a)^(pos - t) onehot(inputs_t)`` plus Gaussian noise
    of variance :func:`noise_var` at ``pos + 1`` steps, independent across numbers
    (``tests/test_update_recall.py`` checks it against :func:`noisy_traces`). Float32.

    Raises:
        ValueError: ``pos`` outside the sequence, ``sigma < 0``.
    """
    B, T = inputs.shape
    if not 0 <= pos < T:
        raise ValueError(f"pos must lie in [0, {T}), got {pos}")
    a = check_alphas(alphas)
    lag = (pos - torch.arange(pos + 1, dtype=torch.float64))                     # (pos + 1,)
    w = (write_gain(a)[:, None] * (1 - a[:, None]) ** lag[None]).float()         # (S, pos + 1)
    idx = inputs[:, None, : pos + 1].expand(B, len(a), pos + 1)                  # (B, S, pos + 1)
    z = torch.zeros(B, len(a), vocab_size).scatter_add_(2, idx, w[None].expand(B, -1, -1))  # (B, S, V)
    std = noise_var(a, sigma, pos + 1).sqrt().float().view(1, -1, 1)
    if sigma > 0:
        z = z + std * torch.randn(z.shape, generator=generator)
    return z
