"""Depth as time: a position-wise residual stack whose residual rule is the variable (notebook 06, panel B).

The paper's general principle (its fourth contribution): fixed-coefficient accumulation dilutes
information across *depth* as EMA traces do across time (a residual stream sums every layer's
write with fixed coefficients), and only learned, input-dependent selection avoids it. The paper
runs no depth experiment; this model is **our design**.

The task (one position, no sequence, so depth plays the role of time): the stream starts as the
embedding of a token ``x0`` (which is also the first state ``s_0 = x0``); block ``l`` (1-based)
receives a fresh token ``a_l`` and computes a write ``u_l = MLP([n_l, e(a_l)])`` from the
normalised stream ``n_l = LN(h_{l-1})`` and ``a_l``'s embedding; a linear head at every layer must
read ``s_l = T[s_{l-1}, a_l]`` (a fixed random table) from ``LN(h_l)``, and a copy head reads
``x0`` from the top ``LN(h_L)``. The residual rules (``ARMS``):

- ``plain``:   ``h_l = h + u``
- ``decay``:   ``h_l = 0.5 h + 0.5 u`` (a fixed decay, the EMA's rule with alpha = 0.5)
- ``dwa``:     DenseFormer's depth-weighted average (Pagliardini et al., 2024): ``y_l = h + u``
  and ``h_l = sum_{j <= l} w_{l,j} y_j`` (``y_0`` the embedding), ``w`` learned, initialised to
  ``w_{l,l} = 1`` (the plain residual at init); the weights do not depend on the input
- ``gate``:    ``h_l = h + g * u`` with ``g = sigmoid(W [n_l, e(a_l)] + b)`` (a write gate: can add
  less, cannot forget)
- ``highway``: ``h_l = (1 - g) h + g u`` with ``g = sigmoid(W [n_l, e(a_l)] + b)`` (GRU/highway
  style: can forget as well as write); ``b`` starts at ``gate_bias`` (default -3, so ``g`` starts
  near 0.05 and the block carries the stream: the carry-biased start of Highway networks,
  Srivastava et al., 2015). At ``b = 0`` the highway starts as the ``decay`` arm (``g = 0.5``), whose
  gradient to ``x0`` through L blocks is ``0.5^L``
- ``static``: ``h_l = (1 - g_l) h + g_l u`` with ``g_l = sigmoid(b_l)`` learned per layer and
  channel, the same start as ``highway`` but **the same for every input**: the control that says
  whether the highway's input-dependence or its learned carry does the work
- ``lnscale``: ``h_l = h + u`` with the block's normalised input scaled by a fixed ``1/sqrt(l)``
  ("The Curse of Depth", Sun et al., 2025): a fixed rescaling, the control that can make
  "only learned selection avoids dilution" false in depth

Shapes: ``x0`` ``(B,)``, ``a`` ``(B, L)`` int ids; outputs are logits ``(B, L, n_states)`` and
``(B, n_x0)``.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

ARMS: tuple[str, ...] = ("plain", "decay", "dwa", "gate", "highway", "static", "lnscale")
"""The residual rules of panel B, in the order the notebook shows them."""
FIXED_ARMS: tuple[str, ...] = ("plain", "decay", "lnscale")
"""Arms whose accumulation coefficients are fixed (``lnscale``: fixed, but rescaled by depth)."""
LEARNED_ARMS: tuple[str, ...] = ("dwa", "gate", "highway", "static")
"""Arms whose coefficients are learned (``dwa``, ``static``: input-independent; ``gate``, ``highway``: input-dependent)."""
INPUT_DEPENDENT_ARMS: tuple[str, ...] = ("gate", "highway")
"""Learned arms whose coefficients depend on the input (the paper's "learned, input-dependent selection")."""
CARRY_GATED_ARMS: tuple[str, ...] = ("highway", "static")
"""Arms whose gate sets how much of the stream is carried; their gate bias starts at ``gate_bias``."""
GATE_BIAS = -3.0
"""The carry-biased start of the carry gates (Highway networks' -1 to -3): ``g = sigmoid(-3) = 0.047``."""


def chain_table(n_states: int, n_inputs: int, seed: int) -> Tensor:
    """The fixed random transition table ``T`` ``(n_states, n_inputs)`` of next states (int64)."""
    g = torch.Generator().manual_seed(int(seed))
    return torch.randint(0, n_states, (n_states, n_inputs), generator=g)


def chain_states(x0: Tensor, a: Tensor, table: Tensor) -> Tensor:
    """``(B, L)`` states ``s_l = T[s_{l-1}, a_l]`` for ``l = 1..L`` from ``s_0 = x0`` (needs ``x0 < n_states``)."""
    s, out = x0, []
    for l in range(a.shape[1]):
        s = table[s, a[:, l]]
        out.append(s)
    return torch.stack(out, 1)


def _init(g: torch.Generator, *shape: int, fan_in: int) -> Tensor:
    return (torch.rand(*shape, generator=g) * 2 - 1) / math.sqrt(fan_in)


class DepthProbe(nn.Module):
    """``n_models`` independent copies of the residual stack of the module docstring (rule ``arm``),
    trained side by side in one batched forward (one per seed: the copies share no parameter).

    Args:
        arm: one of :data:`ARMS`. n_layer: blocks L. d_model: stream width.
        n_x0: vocabulary of ``x0`` (and of the first state; ``n_x0 <= n_states``).
        n_inputs: vocabulary of the fresh tokens ``a_l``. n_states: states of the table.
        d_ff: hidden units of each block's MLP (default ``2 * d_model``).
        n_models: G independent copies; inputs then carry a leading ``G`` axis.
        seeds: one initialisation seed per copy (default ``0..G-1``).
        gate_bias: the start of the carry gates' bias (:data:`CARRY_GATED_ARMS`; the write gate of
            ``gate`` keeps PyTorch's default start, since it carries the whole stream at any ``g``).

    The LayerNorms have no learned gain or bias (our simplification). Linear layers are
    initialised uniform in ``+-1/sqrt(fan_in)`` (PyTorch's default bound), embeddings N(0, 1).

    Raises:
        ValueError: unknown arm, a size below 1, or a seed list of the wrong length.
    """

    def __init__(self, arm: str, n_layer: int, d_model: int, n_x0: int = 16, n_inputs: int = 16,
                 n_states: int = 16, d_ff: int | None = None, n_models: int = 1, seeds=None,
                 gate_bias: float = GATE_BIAS):
        super().__init__()
        if arm not in ARMS:
            raise ValueError(f"unknown arm {arm!r}; allowed: {', '.join(ARMS)}")
        if min(n_layer, d_model, n_x0, n_inputs, n_states, n_models) < 1:
            raise ValueError("n_layer, d_model, n_models and the vocabularies must be >= 1")
        seeds = list(range(n_models)) if seeds is None else [int(s) for s in seeds]
        if len(seeds) != n_models:
            raise ValueError(f"need {n_models} seeds, got {len(seeds)}")
        self.arm, self.n_layer, self.d_model, self.n_models = arm, n_layer, d_model, n_models
        G, L, d, f = n_models, n_layer, d_model, d_ff or 2 * d_model
        parts: dict[str, list[Tensor]] = {}
        for s in seeds:
            g = torch.Generator().manual_seed(s)
            p = {"embed_x0": torch.randn(n_x0, d, generator=g), "embed_a": torch.randn(L, n_inputs, d, generator=g),
                 "w1": _init(g, L, 2 * d, f, fan_in=2 * d), "b1": _init(g, L, f, fan_in=2 * d),
                 "w2": _init(g, L, f, d, fan_in=f), "b2": _init(g, L, d, fan_in=f),
                 "head_w": _init(g, L, d, n_states, fan_in=d), "head_b": _init(g, L, n_states, fan_in=d),
                 "copy_w": _init(g, d, n_x0, fan_in=d), "copy_b": _init(g, n_x0, fan_in=d)}
            if arm in ("gate", "highway"):
                p["gate_w"], p["gate_b"] = _init(g, L, 2 * d, d, fan_in=2 * d), _init(g, L, d, fan_in=2 * d)
            if arm in CARRY_GATED_ARMS:
                p["gate_b"] = torch.full((L, d), float(gate_bias))
            for k, v in p.items():
                parts.setdefault(k, []).append(v)
        for k, v in parts.items():
            setattr(self, k, nn.Parameter(torch.stack(v)))      # leading axis: the G copies
        if arm == "dwa":
            w = torch.zeros(G, L, L + 1)
            w[:, torch.arange(L), torch.arange(1, L + 1)] = 1.0
            self.dwa_weights = nn.Parameter(w)  # [g, l-1, j]: weight of y_j in h_l (entries j > l unused)

    def streams(self, x0: Tensor, a: Tensor) -> Tensor:
        """The residual stream after every block: ``(G, B, L + 1, d_model)`` (index 0: the embedding of ``x0``).

        ``x0`` ``(G, B)`` and ``a`` ``(G, B, L)`` int ids."""
        d = self.d_model
        gi = torch.arange(self.n_models)[:, None]
        h = self.embed_x0[gi, x0]                                           # (G, B, d)
        ys, hs = [h], [h]
        for i in range(self.n_layer):
            n = F.layer_norm(h, (d,))
            if self.arm == "lnscale":
                n = n / math.sqrt(i + 1)
            z = torch.cat([n, self.embed_a[gi, i, a[..., i]]], -1)         # (G, B, 2d)
            hid = F.gelu(torch.baddbmm(self.b1[:, i, None], z, self.w1[:, i]))
            u = torch.baddbmm(self.b2[:, i, None], hid, self.w2[:, i])
            if self.arm in ("plain", "lnscale"):
                h = h + u
            elif self.arm == "decay":
                h = 0.5 * h + 0.5 * u
            elif self.arm == "gate":
                h = h + torch.sigmoid(torch.baddbmm(self.gate_b[:, i, None], z, self.gate_w[:, i])) * u
            elif self.arm == "highway":
                g = torch.sigmoid(torch.baddbmm(self.gate_b[:, i, None], z, self.gate_w[:, i]))
                h = (1 - g) * h + g * u
            elif self.arm == "static":
                g = torch.sigmoid(self.gate_b[:, i, None])                # (G, 1, d): one gate for every input
                h = (1 - g) * h + g * u
            else:  # dwa
                ys.append(h + u)
                h = torch.einsum("gj,jgbd->gbd", self.dwa_weights[:, i, : i + 2], torch.stack(ys))
            hs.append(h)
        return torch.stack(hs, 2)

    def forward(self, x0: Tensor, a: Tensor) -> tuple[Tensor, Tensor]:
        """``x0`` ``(G, B)``, ``a`` ``(G, B, L)`` (or ``(B,)``, ``(B, L)`` when G = 1) ->
        ``(state_logits (G, B, L, n_states), copy_logits (G, B, n_x0))`` (no G axis when the input had none)."""
        squeeze = x0.ndim == 1
        if squeeze:
            x0, a = x0[None], a[None]
        n = F.layer_norm(self.streams(x0, a)[:, :, 1:], (self.d_model,))  # (G, B, L, d)
        st = torch.einsum("gbld,glds->gbls", n, self.head_w) + self.head_b[:, None]
        cp = torch.baddbmm(self.copy_b[:, None], n[:, :, -1], self.copy_w)
        return (st[0], cp[0]) if squeeze else (st, cp)

    def losses(self, x0: Tensor, a: Tensor, s: Tensor) -> Tensor:
        """``(G,)`` per copy: the cross-entropy of the states at every layer (mean) plus that of the
        copy of ``x0`` (nats)."""
        st, cp = self(x0, a)
        if x0.ndim == 1:
            st, cp, x0, s = st[None], cp[None], x0[None], s[None]
        G = st.shape[0]
        ls = F.cross_entropy(st.flatten(0, 2), s.flatten(), reduction="none").view(G, -1).mean(1)
        lc = F.cross_entropy(cp.flatten(0, 1), x0.flatten(), reduction="none").view(G, -1).mean(1)
        return ls + lc

    def loss(self, x0: Tensor, a: Tensor, s: Tensor) -> Tensor:
        """:meth:`losses` summed over copies (so each copy's gradient is its own loss's)."""
        return self.losses(x0, a, s).sum()
