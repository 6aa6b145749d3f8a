"""EMA trace banks: the fixed-decay recurrent context that the paper studies.

For every timescale ``s`` with a fixed rate ``alpha_s`` in (0, 1] (the paper's EMA trace):

    h_t^(s) = (1 - alpha_s) * h_{t-1}^(s) + alpha_s * x_t,     h_0^(s) = 0

The paper's SPEN uses ``alpha = (0.5, 0.1, 0.02)`` (fast, medium, slow), exported here as
``PAPER_ALPHAS``.

Three implementations of one operator, which agree to float tolerance (``tests/test_ema.py``):

- :func:`ema_reference`: the plain recurrence, one time step at a time. Obviously correct, slow under
  autograd (a T-step graph).
- :func:`ema_traces`: the fast path. Within a chunk of ``chunk_size`` steps the recurrence is a small
  lower-triangular Toeplitz matmul (kernel ``alpha (1 - alpha)^k``, as in Mega's ``MultiHeadEMA``); chunk
  boundaries are joined by a scan over ``T / chunk_size`` carries, and one matmul per direction writes every
  output. Its backward is the adjoint of the same operator, run backwards in time (a custom
  :class:`torch.autograd.Function`), so neither direction builds a T-step autograd graph.
- :class:`EMATraces`: the module, with a streaming form that carries the state across chunks of a long
  sequence and equals the one-shot result.

Beside them, the input-dependent EMA of the ``selective`` control reader:
:func:`selective_scan_reference` (the recurrence) and :func:`selective_scan` (chunked, parallel).

Inf and NaN (our design): every fast path equals its reference on every input the reference accepts. An
inf/NaN at step ``t`` reaches outputs at ``t`` and after only (after ``t`` if causal), and gradients at ``t``
and before only; a chunk's zero upper triangle times NaN would leak it backwards, so the chunks see the
finite part and the rest is carried as the recurrence does (:func:`_carried_nonfinite`). All-finite inputs
cost one ``(B, S, D)`` sum per direction. Empty inputs (``B``, ``T`` or ``D`` = 0, our design): every path
returns the empty result of the right shape, on the autograd graph of its inputs.

Shapes: input ``x`` is ``(B, T, D)``; the traces are ``(B, T, S, D)`` with ``S`` the number of alphas;
states are ``(B, S, D)``. ``causal=True`` shifts the traces by one step so that the trace at ``t`` holds
only ``x_{<t}`` (what a next-token predictor may read).
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

# the selective EMA of the ``selective`` control reader: in its own module (length), importable from here
from .ema_selective import SELECTIVE_CHUNK, SELECTIVE_MAX_RATE, selective_scan, selective_scan_reference  # noqa: F401
from .nonfinite import _all_finite, _split_finite
from .pipeline.settings import bounds, check_value, setting

PAPER_ALPHAS: tuple[float, ...] = (0.5, 0.1, 0.02)
"""The three rates of the paper's SPEN (fast, medium, slow), the paper's Experiment 2."""

DEFAULT_CHUNK = 32

ALPHA_RANGE: dict = {"low": 0.0, "high": 1.0, "low_open": True, "nonempty": True}
"""An EMA rate alpha lies in (0, 1] (1 keeps only the newest input; 0 would never change), and a
bank has at least one: the one statement of the rule, for every settings field of rates
(:func:`rates_setting`) and every check of rates given to a function (:func:`check_alphas`)."""


def rates_setting(default=PAPER_ALPHAS, *, default_factory=dataclasses.MISSING):
    """A dataclass field of EMA rates (a list, or a mapping name -> list), range-checked wherever
    settings are checked (:func:`paper_lib.pipeline.settings.setting` with :data:`ALPHA_RANGE`)."""
    return setting(default, default_factory=default_factory, **ALPHA_RANGE)


def check_alphas(alphas: Sequence[float] | Tensor, where: str = "") -> Tensor:
    """Return ``alphas`` as a 1-D float64 tensor, or raise if any lies outside (0, 1] (:data:`ALPHA_RANGE`).

    Raises:
        ValueError: one line, ``<where>.alphas=[...]: ...``: empty, not 1-D, or a value outside
            (0, 1] (NaN included).
    """
    a = torch.as_tensor(alphas, dtype=torch.float64).detach().cpu()
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise ValueError(f"alphas must be a 1-D sequence of rates, got shape {tuple(a.shape)}")
    check_value("alphas", tuple[float, ...], a.tolist(), where, bounds(**ALPHA_RANGE))
    return a


def _check_x(x: Tensor) -> None:
    if x.ndim != 3:
        raise ValueError(f"x must have shape (B, T, D), got {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor, got {x.dtype}")


def ema_reference(x: Tensor, alphas: Sequence[float] | Tensor = PAPER_ALPHAS, state: Tensor | None = None,
                  causal: bool = False) -> Tensor:
    """The plain recurrence, one step at a time: the reference every fast path is tested against.

    Args:
        x: ``(B, T, D)`` inputs. alphas: ``S`` rates, each in (0, 1].
        state: ``(B, S, D)`` trace before ``x[:, 0]`` (zeros when ``None``).
        causal: if True, the output at ``t`` is the trace *before* ``x_t`` is added.

    Returns:
        ``(B, T, S, D)`` traces, in ``x``'s dtype.

    Raises:
        ValueError: bad ``alphas``, ``x`` not 3-D or not floating point.
    """
    _check_x(x)
    a = check_alphas(alphas).to(device=x.device, dtype=x.dtype).view(1, -1, 1)  # (1, S, 1)
    B, T, D = x.shape
    if T == 0:
        return _empty_traces(x, a.shape[1], state)
    h = x.new_zeros(B, a.shape[1], D) if state is None else state               # (B, S, D)
    out = []
    for t in range(T):
        if causal:
            out.append(h)
        h = (1 - a) * h + a * x[:, t, None, :]
        if not causal:
            out.append(h)
    return torch.stack(out, dim=1)                                               # (B, T, S, D)


def _empty_traces(x: Tensor, S: int, state: Tensor | None) -> Tensor:
    """Empty ``(B, T, S, D)`` traces of an empty ``x``, on the graph of ``x`` and ``state`` (zero grads)."""
    y = x[:, :, None, :].expand(-1, -1, S, -1)                                   # (B, T, S, D)
    if state is not None:
        y = y + state.to(x.dtype)[:, None, :, :]
    return y.contiguous()


@functools.lru_cache(maxsize=64)
def _kernels(alphas: tuple[float, ...], C: int, causal: bool, dtype, device):
    """The chunk operators of the EMA for rates ``alphas`` (S floats), built in float64 on the CPU.

    Within chunk ``k`` (inputs ``x_k``: (C, D), carry ``c_k``: (S, D), the trace before it)::

        y_k     = M @ [x_k; c_k]          M = [Lp | Dp]: (C*S, C+S), rows ordered (i, s)
        c_{k+1} = E @ x_k + dC * c_k      E: (S, C), dC: (S,) = (1 - alpha)^C

    Non-causal: ``Lp[(i,s), j] = a_s (1-a_s)^(i-j)`` for ``j <= i``, ``Dp[(i,s), s] = (1-a_s)^(i+1)``.
    Causal (trace at i holds only x_{<i}): ``(1-a_s)^(i-1-j)`` for ``j < i``, ``Dp = (1-a_s)^i``.

    Cached per (alphas, C, causal, dtype, device) (our design): the copy to an accelerator is
    made once, not in every forward and backward (each was a blocking host-to-device copy). The
    returned tensors are shared: callers must not write into them.
    """
    a = torch.tensor(alphas, dtype=torch.float64)
    S = a.numel()
    i = torch.arange(C, dtype=torch.float64)
    shift = 1 if causal else 0
    lag = i.view(C, 1, 1) - i.view(1, 1, C) - shift                         # (C, 1, C): i - j (- 1)
    Lp = torch.where(lag >= 0, a.view(1, S, 1) * (1 - a.view(1, S, 1)) ** lag.clamp(min=0),
                     torch.zeros(()))                                        # (C, S, C)
    Dp = torch.diag_embed((1 - a.view(1, S)) ** (i.view(C, 1) + 1 - shift))  # (C, S, S)
    M = torch.cat([Lp, Dp], dim=2).reshape(C * S, C + S)                    # (C*S, C+S)
    E = a.view(S, 1) * (1 - a.view(S, 1)) ** (C - 1 - i.view(1, C))         # (S, C)
    dC = (1 - a) ** C                                                        # (S,)
    return tuple(t.to(device=device, dtype=dtype) for t in (M, E, dC))


def _pad_time(x: Tensor, C: int) -> Tensor:
    """Zero-pad dim 1 (time) up to a multiple of ``C``; padding at the end never changes
    earlier outputs (forward) nor the gradients of real positions (backward)."""
    return F.pad(x, (0, 0) * (x.ndim - 2) + (0, -x.shape[1] % C)) if x.shape[1] % C else x


def _scan_forward(x: Tensor, alphas: tuple[float, ...], state: Tensor | None, C: int, causal: bool,
                  finite_only: bool = False) -> Tensor | None:
    """Chunked EMA, no autograd: ``x`` (B, T, D) -> traces (B, T, S, D).

    Two passes: the chunk-end states from local inputs (a small matmul), a scan over the ``T / C`` carries, then
    one matmul writes every trace from ``[x_k; c_k]``. With ``finite_only``, None when an input holds inf/NaN
    (the last carry then does: checked before the big matmul, whose zero upper triangle would spread it
    backwards in time).
    """
    B, T, D = x.shape
    S = len(alphas)
    M, E, dC = _kernels(alphas, C, causal, x.dtype, x.device)
    xc = _pad_time(x, C).reshape(B, -1, C, D)                        # (B, n, C, D)
    n = xc.shape[1]
    ends = torch.matmul(E, xc)                                       # (B, n, S, D) local ends
    carries = torch.empty(B, n, S, D, dtype=x.dtype, device=x.device)
    c = x.new_zeros(B, S, D) if state is None else state.to(x.dtype)
    dC = dC.view(1, S, 1)
    for k in range(n):                                               # n = T / C steps only
        carries[:, k] = c
        c = dC * c + ends[:, k]
    if finite_only and not _all_finite(c):
        return None
    xaug = torch.cat([xc, carries], dim=2)                           # (B, n, C+S, D)
    y = torch.matmul(M, xaug)                                        # (B, n, C*S, D)
    return y.view(B, n * C, S, D)[:, :T]                             # (B, T, S, D)


def _scan_backward(g: Tensor, alphas: tuple[float, ...], C: int, causal: bool) -> tuple[Tensor, Tensor]:
    """The adjoint of :func:`_scan_forward`: ``g`` (B, T, S, D) -> (grad_x (B, T, D),
    grad_state (B, S, D)). Same structure run backwards in time: with ``rho_k`` the gradient
    of the carry ``c_k``, ``rho_k = Dp^T g_k + dC rho_{k+1}`` and
    ``grad x_k = Lp^T g_k + E^T rho_{k+1}``."""
    B, T, S, D = g.shape
    M, E, dC = _kernels(alphas, C, causal, g.dtype, g.device)
    gc = _pad_time(g, C).reshape(B, -1, C * S, D)                    # (B, n, C*S, D)
    n = gc.shape[1]
    out = torch.matmul(M.t(), gc)                                    # (B, n, C+S, D)
    local, w = out[:, :, :C], out[:, :, C:]                          # (B,n,C,D), (B,n,S,D)
    rho_next = torch.empty(B, n, S, D, dtype=g.dtype, device=g.device)
    rho = g.new_zeros(B, S, D)
    dC = dC.view(1, S, 1)
    for k in range(n - 1, -1, -1):
        rho_next[:, k] = rho
        rho = w[:, k] + dC * rho
    local = local + torch.matmul(E.t(), rho_next)                    # (B, n, C, D)
    return local.reshape(B, n * C, D)[:, :T], rho                    # rho is now rho_0


def _carried_nonfinite(nf: Tensor, start: Tensor, gain: Tensor, decay: Tensor) -> Tensor:
    """The inf/NaN part of ``h_t = decay * h_{t-1} + gain * u_t`` under IEEE rules, no T-step loop.

    ``nf`` (B, T, S|1, D): the inf/NaN part of ``u``; ``start`` (B, 1, S|1, D): that of ``h_{-1}``;
    ``gain``, ``decay`` (S,). Values 0, +-inf, NaN are left alone by positive factors, so
    ``H_t = start + gain cumsum(nf)_t`` is ``h_t``'s if ``decay > 0``, and ``gain nf_t + decay H_{t-1}``
    is it for every decay (``0 * inf`` is NaN, as with alpha = 1). Returns (B, T, S, D)."""
    gv, dv = gain.view(1, 1, -1, 1), decay.view(1, 1, -1, 1)
    H = start + gv * nf.cumsum(1)                                    # (B, T, S, D)
    prev = torch.cat([start.expand(-1, -1, H.shape[2], -1), H[:, :-1]], dim=1)
    return gv * nf + dv * prev


def _forward(x: Tensor, alphas: tuple[float, ...], state: Tensor | None, C: int, causal: bool,
             exact: bool = True) -> Tensor:
    """:func:`_scan_forward`, exact with inf/NaN: the chunks see the finite part of the inputs;
    the rest is added as the recurrence carries it (forwards in time only). ``exact=False``: no
    check (no device sync); an inf/NaN may then reach up to ``C - 1`` earlier steps of its chunk."""
    y = _scan_forward(x, alphas, state, C, causal, finite_only=exact)
    if y is not None:
        return y
    a = torch.tensor(alphas, dtype=torch.float64).to(device=x.device, dtype=x.dtype)  # the reference's dtype
    (xf, xn), sf = _split_finite(x), None
    start = x.new_zeros(x.shape[0], 1, 1, x.shape[2])                # (B, 1, S|1, D)
    if state is not None:
        sf, sn = _split_finite(state.to(x.dtype))
        start = sn[:, None]
    P = _carried_nonfinite(xn[:, :, None], start, a, 1 - a)          # (B, T, S, D)
    if causal:                                                       # trace at t: h_{t-1}
        P = torch.cat([start.expand(-1, -1, a.numel(), -1), P[:, :-1]], dim=1)
    return _scan_forward(xf, alphas, sf, C, causal) + P


def _backward(g: Tensor, alphas: tuple[float, ...], C: int, causal: bool,
              exact: bool = True) -> tuple[Tensor, Tensor]:
    """:func:`_scan_backward`, exact with inf/NaN in ``g``: they reach only the gradients of the
    same and earlier steps, as autograd through the recurrence gives (``exact=False``: no check, no
    device sync; an inf/NaN may reach up to ``C - 1`` later steps of its chunk)."""
    gx, gs = _scan_backward(g, alphas, C, causal)
    if not exact or _all_finite(gs):                                 # any inf/NaN in g reaches rho_0
        return gx, gs
    B, T, S, D = g.shape
    a = torch.tensor(alphas, dtype=torch.float64).to(device=g.device, dtype=g.dtype)
    gf, gn = _split_finite(g)                                        # (B, T, S, D) each
    nf = torch.cat([gn[:, 1:], gn.new_zeros(B, 1, S, D)], 1) if causal else gn  # h_t feeds out_{t+1}
    # the adjoint lam_t = g_t + (1 - a) lam_{t+1}: the same carry, backwards in time
    lam = _carried_nonfinite(nf.flip(1), gn.new_zeros(B, 1, S, D), torch.ones_like(a), 1 - a).flip(1)
    ps = (1 - a).view(1, S, 1) * lam[:, 0] + (gn[:, 0] if causal else 0)  # (B, S, D)
    gx, gs = _scan_backward(gf, alphas, C, causal)
    return gx + (a.view(1, 1, S, 1) * lam).sum(2), gs + ps


def _no_autocast(device: torch.device):
    """A context with autocast off on ``device``'s kind (a no-op where autocast does not exist)."""
    kind = device.type
    return torch.autocast(kind, enabled=False) if torch.amp.is_autocast_available(kind) else contextlib.nullcontext()


class _EMAFunction(torch.autograd.Function):
    """Fast EMA with a custom backward (the adjoint scan), so no T-step autograd graph.

    Both directions run in float32 at least with autocast off (our design: under bf16
    autocast the chunk matmuls would otherwise round the traces to bf16, 1.4e-2 from fp32); the
    traces come back in ``x``'s dtype, the gradients in the inputs' dtypes.
    """

    @staticmethod
    def forward(ctx, x, state, alphas, chunk_size, causal, exact):   # x (B, T, D), state (B, S, D)
        ctx.alphas, ctx.chunk_size, ctx.causal, ctx.exact = alphas, chunk_size, causal, exact
        ctx.dtypes = (x.dtype, None if state is None else state.dtype)
        dt = torch.promote_types(x.dtype, torch.float32)
        with _no_autocast(x.device):
            y = _forward(x.to(dt), alphas, None if state is None else state.to(dt), chunk_size, causal, exact)
        return y.to(x.dtype)                                         # (B, T, S, D)

    @staticmethod
    def backward(ctx, g):                                            # g (B, T, S, D)
        with _no_autocast(g.device):
            gx, gs = _backward(g.to(torch.promote_types(g.dtype, torch.float32)), ctx.alphas, ctx.chunk_size,
                               ctx.causal, ctx.exact)
        gs = gs.to(ctx.dtypes[1]) if ctx.needs_input_grad[1] else None
        return gx.to(ctx.dtypes[0]), gs, None, None, None, None


@functools.lru_cache(maxsize=256)
def _checked_alphas(alphas: tuple) -> tuple[float, ...]:
    """:func:`check_alphas` of a tuple, as floats; cached (a rate list is checked once, not per call)."""
    return tuple(check_alphas(alphas).tolist())


def ema_traces(x: Tensor, alphas: Sequence[float] | Tensor = PAPER_ALPHAS, state: Tensor | None = None,
               causal: bool = False, chunk_size: int = DEFAULT_CHUNK, exact_nonfinite: bool | None = None) -> Tensor:
    """Fast EMA trace bank, equal to :func:`ema_reference` to float tolerance.

    Args:
        x: ``(B, T, D)`` inputs (any float dtype, any device; computed in float32 at least, autocast off).
        alphas: ``S`` fixed rates in (0, 1]; default the paper's ``(0.5, 0.1, 0.02)``.
        state: ``(B, S, D)`` trace before ``x[:, 0]``; zeros when ``None``.
        causal: if True, the trace at ``t`` holds only ``x_{<t}`` (shifted by one step).
        chunk_size: steps per Toeplitz block; changes speed, not results.
        exact_nonfinite: True: inf/NaN reach outputs at ``t`` and after only (and gradients at ``t``
            and before), as in the reference; this costs one check per direction, which on an
            accelerator is a device sync. False: no check (no sync); an inf/NaN then also reaches up to
            ``chunk_size - 1`` neighbours in its chunk (in a training step the loss is inf/NaN either
            way). None (default): True on the CPU, where the check syncs nothing, False elsewhere (our
            design: no host sync inside a training step on a GPU).

    Returns:
        ``(B, T, S, D)`` traces in ``x``'s dtype (contiguous unless ``T`` is not a multiple of ``chunk_size``);
        empty, and on the autograd graph, when ``B``, ``T`` or ``D`` is 0 (our design).

    Raises:
        ValueError: alpha outside (0, 1], ``x`` not 3-D or not floating point, ``chunk_size`` < 1, bad ``state``.
    """
    _check_x(x)
    a = _checked_alphas(tuple(check_alphas(alphas).tolist() if isinstance(alphas, Tensor) else alphas))
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    B, T, D = x.shape
    if state is not None and tuple(state.shape) != (B, len(a), D):
        raise ValueError(f"state must have shape (B, S, D) = {(B, len(a), D)}, got {tuple(state.shape)}")
    if x.numel() == 0:                                               # B, T or D is 0
        return _empty_traces(x, len(a), state)
    exact = x.device.type == "cpu" if exact_nonfinite is None else bool(exact_nonfinite)
    return _EMAFunction.apply(x, state, a, chunk_size, causal, exact)


class EMATraces(nn.Module):
    """A bank of fixed-rate EMA traces as a module, with a streaming (stateful) form.

    ``forward(x)`` maps ``(B, T, D)`` to ``(B, T, S, D)``. With ``streaming=True`` the module remembers
    the ``(B, S, D)`` state after each call, so feeding a long sequence chunk by chunk gives exactly the
    one-shot traces; :meth:`reset` forgets it. The alphas are plain floats, not parameters: the paper's
    traces have fixed coefficients.

    Raises:
        ValueError: alpha outside (0, 1] (at construction), or a state whose batch size does not match the input.
    """

    def __init__(self, alphas: Sequence[float] = PAPER_ALPHAS, causal: bool = False, streaming: bool = False,
                 chunk_size: int = DEFAULT_CHUNK):
        super().__init__()
        self.alphas: tuple[float, ...] = tuple(check_alphas(alphas).tolist())
        self.causal, self.streaming, self.chunk_size = causal, streaming, chunk_size
        self.state: Tensor | None = None

    def reset(self) -> None:
        """Forget the streaming state."""
        self.state = None

    def forward(self, x: Tensor) -> Tensor:
        state = self.state if self.streaming else None
        y = ema_traces(x, self.alphas, state=state, causal=self.causal, chunk_size=self.chunk_size)  # (B,T,S,D)
        if self.streaming and x.shape[1] > 0:
            a = torch.tensor(self.alphas, dtype=x.dtype, device=x.device).view(1, -1, 1)
            last = y[:, -1]                                          # (B, S, D)
            # causal output at T-1 excludes x_{T-1}: add it to get the state after the chunk
            self.state = (((1 - a) * last + a * x[:, -1, None, :]) if self.causal else last).detach()
        return y

    def extra_repr(self) -> str:
        return f"alphas={self.alphas}, causal={self.causal}, streaming={self.streaming}"
