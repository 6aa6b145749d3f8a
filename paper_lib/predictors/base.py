"""Predictors of SPEN: the module that reads a block's EMA traces and predicts its input.

In the paper's Figure 1 every SPEN block predicts ``x_hat_t`` from the traces ``h_t^(s)``
and passes on the prediction error ``e_t = x_t - x_hat_t``. The paper's ablation swaps the
reader (linear projection, linear attention, softmax attention) and keeps the traces. Here
every reader is a :class:`Predictor` with one call signature, registered under a name, so a
config string chooses it (Zoology's habit for sequence mixers):

    predictor = build_predictor("linear", config)      # config: a SPENConfig
    x_hat = predictor(u, traces)                       # (B, T, D)

The contract of :meth:`Predictor.forward` (what keeps the language model causal):

- ``u``: ``(B, T, D)`` the block's normalised input; ``traces``: ``(B, T, S, D)`` the causal
  EMA traces of ``u`` (``traces[:, t]`` holds ``u_{<t}`` only, rates ``config.alphas``).
- returns ``x_hat``: ``(B, T, D)``, the prediction of ``u[:, t]``. ``x_hat[:, t]`` may depend
  on ``u[:, :t]`` (strictly earlier positions) and on ``traces[:, :t + 1]``, never on
  ``u[:, t]`` itself (else the "prediction" copies its target) nor on anything later.
  :func:`check_predictor_causal` tests exactly that; every registered predictor must pass.

A new predictor is a subclass in a module of its own in this package, decorated with
``@register_predictor("name")`` and imported by ``paper_lib/predictors/__init__.py``, which
states its facts as class attributes (:class:`Predictor`: its words, what it sees, whether the
traces bound it, the state it keeps beside them). Everything that groups or counts predictors
reads them: the paper's readers and our controls, notebook 04's table, the report's bounded and
unbounded readers, notebook 05's state budget. Importing :mod:`paper_lib.predictors` registers
every reader.
"""
from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor, nn

from ..ema import ema_traces

PREDICTORS: dict[str, type["Predictor"]] = {}
"""Registry: config string -> predictor class."""


def register_predictor(name: str) -> Callable[[type["Predictor"]], type["Predictor"]]:
    """Class decorator: make a :class:`Predictor` subclass available as ``name``.

    Raises:
        ValueError: ``name`` already registered to a different class.
    """
    def deco(cls: type[Predictor]) -> type[Predictor]:
        if name in PREDICTORS and PREDICTORS[name] is not cls:
            raise ValueError(f"predictor {name!r} is already registered to {PREDICTORS[name].__name__}")
        PREDICTORS[name] = cls
        cls.name = name
        return cls
    return deco


def build_predictor(name: str, config) -> "Predictor":
    """Instantiate the predictor registered as ``name`` for ``config`` (a ``SPENConfig``).

    Raises:
        ValueError: unknown name (the message lists the registered ones).
    """
    if name not in PREDICTORS:
        raise ValueError(f"unknown predictor {name!r}; registered: {', '.join(sorted(PREDICTORS))}")
    return PREDICTORS[name](config)


class Predictor(nn.Module):
    """Base class: ``forward(u (B, T, D), traces (B, T, S, D)) -> x_hat (B, T, D)``.

    Subclasses take the model config (``d_model``, ``alphas`` and whatever else they need)
    as their first constructor argument and obey the causality contract of this module. Their
    facts (class attributes, read by :mod:`paper_lib.predictors` and the claims):

    - ``label``: the reader in a few words (``"linear reader"``; the report names its loss so);
    - ``sees``: what ``x_hat_t`` can see (notebook 04's table);
    - ``paper``: one of the paper's readers (its ablation) rather than a control of ours;
    - ``bounded``: a function of the trace bank at t alone, so bounded by what the traces keep
      (the data processing inequality); the ablation's positive control must not be;
    - ``keeps``: the state it carries beside the fixed traces, in words ("" for none), and
      :meth:`added_state`, in numbers.
    """

    name: str = "base"
    label: str = ""
    sees: str = ""
    paper: bool = False
    bounded: bool = True
    keeps: str = ""

    @classmethod
    def added_state(cls, config, seq_len: int, d_state: int | None = None) -> int:
        """Numbers per block this reader carries from token to token beside the fixed traces (0:
        none), for ``config`` (``d_model``, ``alphas``, ``n_head``) at ``seq_len`` tokens; ``d_state``:
        the size of a learned state of its own where it is sized otherwise than by default."""
        return 0

    def __init__(self, config):
        super().__init__()
        self.config = config

    def forward(self, u: Tensor, traces: Tensor) -> Tensor:  # pragma: no cover - interface
        raise NotImplementedError


def check_predictor_causal(predictor: Predictor, u: Tensor, t: int, atol: float = 1e-6) -> bool:
    """True if ``x_hat[:, :t + 1]`` does not change when ``u[:, t:]`` changes.

    Recomputes the causal traces of the perturbed input (``paper_lib.ema.ema_traces``), so
    it checks the contract of :class:`Predictor`: ``x_hat_t`` never sees ``u_t`` or later.

    Args:
        predictor: any registered predictor (in eval mode).
        u: ``(B, T, D)`` input; ``t``: the first position perturbed, ``0 <= t < T``.

    Raises:
        ValueError: ``t`` outside ``[0, T)``.
    """
    if not 0 <= t < u.shape[1]:
        raise ValueError(f"t must lie in [0, {u.shape[1]}), got {t}")
    alphas = predictor.config.alphas
    with torch.no_grad():
        a = predictor(u, ema_traces(u, alphas, causal=True))
        v = u.clone()
        v[:, t:] = torch.randn_like(v[:, t:])
        b = predictor(v, ema_traces(v, alphas, causal=True))
    return bool(torch.allclose(a[:, :t + 1], b[:, :t + 1], atol=atol))


def n_heads(config) -> int:
    """Attention heads of the attention predictors: ``config.n_head``, or ``max(1, d_model // 64)``
    when it is None (our design: the paper is silent)."""
    n = getattr(config, "n_head", None)
    return int(n) if n is not None else max(1, config.d_model // 64)


def linear_budget(config) -> int:
    """Parameters of the ``linear`` predictor, the budget every predictor is sized to:
    ``S * d_model**2 + d_model``."""
    return len(config.alphas) * config.d_model ** 2 + config.d_model


def reader_width(config, per_unit: int) -> int:
    """Inner width ``w`` (a multiple of the heads) with ``per_unit * w`` closest to the budget."""
    h = n_heads(config)
    return max(h, h * round(linear_budget(config) / (per_unit * h)))


