"""The trace oracle: the best reader we can fit of a fixed EMA trace bank alone.

The paper's argument (Experiment 2) is a data processing inequality: whatever fixed-rate EMA
traces discard, no reader of them can recover. The oracle makes that bound measurable on a
recall task (:mod:`paper_lib.data.mqar`): every token is mapped by a **fixed** random
embedding (never trained) of width ``d_model``, the bank :func:`paper_lib.ema.ema_traces` with
SPEN's rates runs over it (the same rates and width as SPEN's first block, so the same
``S x d_model`` numbers per position), and a reader is fitted on the traces at the answer
position and on the embedding of the query key (the token ``delay`` positions before the
answer). The reader is a factored bilinear map (our design: the paper is silent):

    logits = O ((U h_t) * (W e_q)) + b,     h_t = traces at t flattened (S * d_model), e_q the key's embedding

with ``rank`` products; a rank of at least the number of distinct (key, value) bindings can
represent the exact lookup "the trace coordinate of the pair token whose key is the query".
It is fitted with the house's recipe (:func:`paper_lib.train.make_optimizer`, :func:`paper_lib.train.lr_at`)
on fresh sequences for ``steps`` steps (the final training loss is returned, so "fitted to
convergence" can be checked against it).

**Its own capacity caveat.** The oracle is a lower bound on what the traces hold, not the bound
itself: what it recovers, the traces contain; what it misses may be its own limit (rank, fixed
embeddings of width ``d_model`` that are not orthogonal when the vocabulary exceeds the width,
a finite fit). A failure of the oracle is evidence, not proof, that the information is gone.

Shapes: token ids ``(B, T)``; embeddings ``(B, T, D)``; traces ``(B, T, S, D)``; logits ``(B, T, V)``
with ``V`` the task's vocabulary. Units: accuracy is a fraction of query answers; loss in nats
per answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor, nn

from .data.mqar import MQARTask, query_accuracy, sample_mqar
from .ema import PAPER_ALPHAS, check_alphas, ema_traces
from .pipeline.settings import setting
from .train import TrainConfig, lr_at, make_optimizer


@dataclass(frozen=True)
class OracleConfig:
    """How the oracle is built and fitted (our design: the paper is silent).

    Attributes:
        d_model: width of the fixed embedding and of each trace (dims; SPEN's first block's).
        alphas: the trace rates (SPEN's; paper: 0.5, 0.1, 0.02).
        rank: products of the bilinear reader. steps: optimiser steps of the fit.
        lr: peak learning rate (AdamW, warmup then cosine to 0). batch_size: sequences per step.
        warmup_steps: linear warmup (steps).
    """

    d_model: int = setting(64, low=1)                  # dims
    alphas: tuple[float, ...] = PAPER_ALPHAS           # rates in (0, 1]
    rank: int = setting(512, low=1)                    # products of the reader
    steps: int = setting(1000, low=1)                  # optimiser steps
    lr: float = setting(1e-2, low=0, low_open=True)    # peak learning rate
    batch_size: int = setting(64, low=1)               # sequences per step
    warmup_steps: int = setting(30, low=0)             # steps

    def __post_init__(self):
        check_alphas(self.alphas)


def fixed_embeddings(vocab_size: int, d_model: int, seed: int) -> Tensor:
    """``(vocab_size, d_model)`` fixed random embeddings, rows of unit norm (Gaussian directions).

    Raises:
        ValueError: a size below 1.
    """
    if vocab_size < 1 or d_model < 1:
        raise ValueError(f"oracle embeddings need vocab_size >= 1 and d_model >= 1, got {vocab_size}, {d_model}")
    e = torch.randn(vocab_size, d_model, generator=torch.Generator().manual_seed(int(seed)))
    return e / e.norm(dim=1, keepdim=True)


class TraceOracle(nn.Module):
    """A bilinear reader of a fixed trace bank (see the module docstring); ``forward(inputs)``
    ``(B, T)`` ids -> ``(logits (B, T, V), None)``, the models' interface, so that
    :func:`paper_lib.data.mqar.query_accuracy` and the notebooks' scorers apply unchanged."""

    def __init__(self, task: MQARTask, cfg: OracleConfig, seed: int = 0):
        super().__init__()
        self.delay, self.alphas = task.delay, tuple(cfg.alphas)
        S, D, V = len(cfg.alphas), cfg.d_model, task.vocab_size
        self.register_buffer("embed", fixed_embeddings(V, D, seed))     # never trained
        a = torch.tensor(self.alphas)                                    # a fixed rescaling of each trace to the
        self.register_buffer("gain", ((2 - a) / a).sqrt().repeat_interleave(D))  # stationary std of white noise
        g = torch.Generator().manual_seed(int(seed) + 1)
        self.u = nn.Parameter(torch.randn(S * D, cfg.rank, generator=g) / (S * D) ** 0.5)
        self.w = nn.Parameter(torch.randn(D, cfg.rank, generator=g) / D ** 0.5)
        self.o = nn.Parameter(torch.randn(cfg.rank, V, generator=g) / cfg.rank ** 0.5)
        self.b = nn.Parameter(torch.zeros(V))

    def features(self, inputs: Tensor) -> tuple[Tensor, Tensor]:
        """``(h, q)``: the traces at every position ``(B, T, S * D)`` and the embedding of the token
        ``delay`` positions earlier (the query key at an answer position) ``(B, T, D)``."""
        x = self.embed[inputs]                                           # (B, T, D)
        with torch.no_grad():
            h = ema_traces(x, self.alphas).flatten(2) * self.gain        # (B, T, S * D)
        q = torch.roll(x, self.delay, dims=1) if self.delay else x       # wraps only at t < delay (no answers there)
        return h, q

    def read(self, h: Tensor, q: Tensor) -> Tensor:
        """Logits ``(..., V)`` from traces ``(..., S * D)`` and query embeddings ``(..., D)``."""
        return ((h @ self.u) * (q @ self.w)) @ self.o + self.b

    def forward(self, inputs: Tensor, targets: Tensor | None = None):
        h, q = self.features(inputs)
        return self.read(h, q), None


def fit_oracle(task: MQARTask, n_pairs: int | Sequence[int], cfg: OracleConfig, seed: int = 0,
               generator_seed: int | None = None) -> tuple[TraceOracle, float]:
    """Fit a :class:`TraceOracle` on fresh ``task`` sequences (a mixture over ``n_pairs``).

    ``seed`` fixes the embeddings and the reader's start; the training stream is seeded by
    ``generator_seed`` (default ``1000 * seed + 7``). Loss: cross-entropy on answers only.
    Returns the oracle (eval mode) and its final training loss (nats per answer).

    Raises:
        ValueError: ``cfg.d_model`` or the task does not fit (:meth:`MQARTask.check`).
    """
    for n in [n_pairs] if isinstance(n_pairs, int) else list(n_pairs):
        task.check(n)
    model = TraceOracle(task, cfg, seed)
    tc = TrainConfig(steps=cfg.steps, batch_size=cfg.batch_size, seq_len=task.seq_len, lr=cfg.lr, min_lr_frac=0.0,
                     warmup_steps=cfg.warmup_steps, weight_decay=0.0, grad_clip=1.0, betas=(0.9, 0.98), seed=seed)
    opt = make_optimizer(model, tc)
    gen = torch.Generator().manual_seed(1000 * seed + 7 if generator_seed is None else generator_seed)
    loss = torch.tensor(float("nan"))
    model.train()
    for step in range(cfg.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, tc)
        b = sample_mqar(task, n_pairs, cfg.batch_size, gen)
        h, q = model.features(b.inputs)
        mask = b.targets != -100                                         # read the answer positions only
        loss = nn.functional.cross_entropy(model.read(h[mask], q[mask]), b.targets[mask])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tc.grad_clip)
        opt.step()
    model.eval()
    return model, float(loss.detach())


@torch.no_grad()
def keys_ignored_baseline(task: MQARTask, inputs: Tensor, targets: Tensor) -> float:
    """Accuracy (fraction of answers) of guessing the most frequent value present in each
    sequence, ignoring the keys: the chance level of MQAR, above ``1 / N`` because values are
    drawn with replacement. Ties are broken uniformly (each tied value scores ``1 / ties``).

    ``inputs`` and ``targets`` are ``(B, T)`` as :func:`paper_lib.data.mqar.sample_mqar` draws them.

    Raises:
        ValueError: shapes differ, or no answer to score.
    """
    if inputs.shape != targets.shape or inputs.dim() != 2:
        raise ValueError(f"inputs and targets must both be (B, T), got {tuple(inputs.shape)}, {tuple(targets.shape)}")
    K, V = task.n_keys, task.n_values
    if task.single_hop:
        is_pair = (inputs > K + V) & (inputs < task.distractor_base)
        value = torch.where(is_pair, (inputs - K - V - 1) % V, 0)
    else:
        is_pair = (inputs > K) & (inputs <= K + V)
        value = torch.where(is_pair, inputs - K - 1, 0)
    counts = torch.zeros(inputs.shape[0], V).scatter_add_(1, value, is_pair.float())    # (B, V)
    modes = counts == counts.max(dim=1, keepdim=True).values                          # (B, V)
    mask = targets != -100
    if not mask.any():
        raise ValueError("no answer position to score (every target is -100)")
    rows = mask.nonzero(as_tuple=True)[0]
    hit = modes[rows, targets[mask] - K - 1].float() / modes[rows].sum(1)
    return float(hit.mean())


def baseline_by_pairs(task: MQARTask, n_pairs: Sequence[int], n_seqs: int, seed: int) -> dict[int, float]:
    """:func:`keys_ignored_baseline` at each pair count on the same ``n_seqs`` test sequences the
    models are scored on (drawn with ``seed + N``, as the notebooks' scorers)."""
    out = {}
    for n in n_pairs:
        b = sample_mqar(task, n, n_seqs, seed + n)
        out[int(n)] = keys_ignored_baseline(task, b.inputs, b.targets)
    return out


def oracle_by_pairs(oracle: TraceOracle, task: MQARTask, n_pairs: Sequence[int], n_seqs: int,
                    seed: int) -> dict[int, float]:
    """The oracle's query accuracy at each pair count (test sequences drawn with ``seed + N``)."""
    out = {}
    with torch.no_grad():
        for n in n_pairs:
            b = sample_mqar(task, n, n_seqs, seed + n)
            right, total = query_accuracy(oracle(b.inputs)[0], b.targets)
            out[int(n)] = right / total
    return out
