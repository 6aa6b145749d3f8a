"""The trace oracles: the best readers we can fit of a fixed EMA trace bank alone.

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
It is fitted with the house's recipe and the one stopping rule (:func:`paper_lib.train.train_until_flat`)
on fresh sequences until its held-out accuracy is flat, capped at ``steps`` (its stop reason is
returned, so "fitted to convergence" can be checked).

**Its own capacity caveat.** The oracle is a lower bound on what the traces hold, not the bound
itself: what it recovers, the traces contain; what it misses may be its own limit (rank, fixed
embeddings of width ``d_model`` that are not orthogonal when the vocabulary exceeds the width,
a finite fit). A failure of the oracle is evidence, not proof, that the information is gone.

**The lag oracle** (notebook 06, :func:`fit_lag_oracle`): the same idea for "which token, or
which class, was at ``t - k``": independent MLP readers (one per lag) of any fixed state, fitted
on fresh sequences of a synthetic process with Adam until flat on a held-out split (the one
stopping rule). Its capacity caveat is the same: it bounds what the state holds from below.

Shapes: token ids ``(B, T)``; embeddings ``(B, T, D)``; traces ``(B, T, S, D)``; logits ``(B, T, V)``
with ``V`` the task's vocabulary. Units: accuracy is a fraction of query answers; loss in nats
per answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor, nn

from ..data.mqar import MQARTask, query_accuracy, sample_mqar
from ..ema import PAPER_ALPHAS, check_alphas, ema_traces
from ..pipeline.settings import setting
from ..stopping import Stopper, StopRule, label_entropy
from ..train import TrainConfig, train_until_flat


@dataclass(frozen=True)
class OracleConfig:
    """How the oracle is built and fitted (our design: the paper is silent).

    Attributes:
        d_model: width of the fixed embedding and of each trace (dims; SPEN's first block's).
        alphas: the trace rates (SPEN's; paper: 0.5, 0.1, 0.02).
        rank: products of the bilinear reader. steps: the fit's step cap.
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
        check_alphas(self.alphas, "OracleConfig")


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
               generator_seed: int | None = None, rule: StopRule | None = None, val_sequences: int = 2500,
               val_seed: int = 10_007):
    """Fit a :class:`TraceOracle` on fresh ``task`` sequences (a mixture over ``n_pairs``) until the
    stopping rule ``rule`` (default :class:`~paper_lib.stopping.StopRule`) stops it, capped at ``cfg.steps``.

    ``seed`` fixes the embeddings and the reader's start; the training stream is seeded by
    ``generator_seed`` (default ``1000 * seed + 7``). Loss: cross-entropy on answers only. Held out:
    ``val_sequences`` sequences per ``N`` (drawn with ``val_seed + N``, as the notebooks' validation);
    chance: the loss of the best answer that ignores the keys (:func:`keys_ignored_loss`).

    Returns:
        the oracle (its best held-out weights, eval mode), its learning curve (rows ``step, lr,
        train_loss, n_pairs, val_accuracy``) and the :class:`~paper_lib.stopping.Stopper`.

    Raises:
        ValueError: ``cfg.d_model`` or the task does not fit (:meth:`MQARTask.check`); a held-out set
            too small for ``rule.tol``.
    """
    ns = [n_pairs] if isinstance(n_pairs, int) else [int(n) for n in n_pairs]
    for n in ns:
        task.check(n)
    model = TraceOracle(task, cfg, seed)
    tc = TrainConfig(steps=cfg.steps, batch_size=cfg.batch_size, seq_len=task.seq_len, lr=cfg.lr, min_lr_frac=0.0,
                     warmup_steps=min(cfg.warmup_steps, cfg.steps - 1), weight_decay=0.0, grad_clip=1.0,
                     betas=(0.9, 0.98), seed=seed)
    gen = torch.Generator().manual_seed(1000 * seed + 7 if generator_seed is None else generator_seed)
    val = {n: sample_mqar(task, n, val_sequences, val_seed + n) for n in ns}

    def step_loss(step: int) -> Tensor:
        b = sample_mqar(task, ns, cfg.batch_size, gen)
        h, q = model.features(b.inputs)
        mask = b.targets != -100                                         # read the answer positions only
        return nn.functional.cross_entropy(model.read(h[mask], q[mask]), b.targets[mask])

    def heldout() -> dict[str, float]:
        return {str(n): (lambda rt: rt[0] / rt[1])(query_accuracy(model(b.inputs)[0], b.targets))
                for n, b in val.items()}

    chance = sum(keys_ignored_loss(task, b.inputs, b.targets) for b in val.values()) / len(val)
    stopper = Stopper(rule or StopRule(), cfg.steps, chance, val_sequences * len(val))
    rows = train_until_flat(model, step_loss, heldout, tc, stopper)
    curve = [{"step": r["step"], "lr": r["lr"], "train_loss": r["train_loss"], "n_pairs": n, "val_accuracy": r[str(n)]}
             for r in rows for n in ns]
    return model, curve, stopper


def _value_counts(task: MQARTask, inputs: Tensor) -> Tensor:
    """``(B, V)`` how often each value occurs among a sequence's pairs."""
    K, V = task.n_keys, task.n_values
    if task.single_hop:
        is_pair = (inputs > K + V) & (inputs < task.distractor_base)
        value = torch.where(is_pair, (inputs - K - V - 1) % V, 0)
    else:
        is_pair = (inputs > K) & (inputs <= K + V)
        value = torch.where(is_pair, inputs - K - 1, 0)
    return torch.zeros(inputs.shape[0], V).scatter_add_(1, value, is_pair.float())


def _answers(inputs: Tensor, targets: Tensor) -> tuple[Tensor, Tensor]:
    if inputs.shape != targets.shape or inputs.dim() != 2:
        raise ValueError(f"inputs and targets must both be (B, T), got {tuple(inputs.shape)}, {tuple(targets.shape)}")
    mask = targets != -100
    if not mask.any():
        raise ValueError("no answer position to score (every target is -100)")
    return mask.nonzero(as_tuple=True)[0], mask


@torch.no_grad()
def keys_ignored_baseline(task: MQARTask, inputs: Tensor, targets: Tensor) -> float:
    """Accuracy (fraction of answers) of guessing the most frequent value present in each
    sequence, ignoring the keys: the chance level of MQAR, above ``1 / N`` because values are
    drawn with replacement. Ties are broken uniformly (each tied value scores ``1 / ties``).

    ``inputs`` and ``targets`` are ``(B, T)`` as :func:`paper_lib.data.mqar.sample_mqar` draws them.

    Raises:
        ValueError: shapes differ, or no answer to score.
    """
    rows, mask = _answers(inputs, targets)
    counts = _value_counts(task, inputs)                                               # (B, V)
    modes = counts == counts.max(dim=1, keepdim=True).values                          # (B, V)
    hit = modes[rows, targets[mask] - task.n_keys - 1].float() / modes[rows].sum(1)
    return float(hit.mean())


@torch.no_grad()
def keys_ignored_loss(task: MQARTask, inputs: Tensor, targets: Tensor) -> float:
    """The cross-entropy (nats per answer) of the best answer that ignores the keys: each value with
    the share of the sequence's pairs that hold it. The loss a recall model sits at before it binds
    keys to values (the stopping rule's chance loss, :mod:`paper_lib.stopping`). Raises ValueError as
    :func:`keys_ignored_baseline`."""
    rows, mask = _answers(inputs, targets)
    counts = _value_counts(task, inputs)
    p = counts[rows, targets[mask] - task.n_keys - 1] / counts[rows].sum(1)
    return float(-p.clamp_min(1e-12).log().mean())


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


# --------------------------------------------------------------------------- the lag oracle (notebook 06)

@dataclass(frozen=True)
class LagOracleConfig:
    """How the lag oracle is built and fitted (our design: the paper is silent).

    Attributes:
        hidden: units of each hidden layer. layers: hidden layers (1 or 2; ReLU).
        max_steps: Adam steps at most (the stopping rule's cap). lr: Adam's learning rate (constant).
        batch_sequences: fresh sequences per step (every scored position of each is a row).
        eval_every: steps between validation checks. patience: checks over which a reader whose
            validation accuracy gains less than ``tol`` is flat (it stops; its best weights are kept).
        tol: that gain (a fraction; the validation rows must resolve it, :mod:`paper_lib.stopping`).
        min_steps: steps before a reader may stop as flat.
        val_sequences: held-out sequences of the validation split (never trained on, never scored).

    Each reader stops by the one stopping rule (:mod:`paper_lib.stopping`): solved (every validation
    row right), flat, or at ``max_steps`` (still improving, or never off the chance loss, the entropy
    of its validation labels); why is returned per lag.
    """

    hidden: int = setting(256, low=1)            # units per hidden layer
    layers: int = setting(2, low=1, high=2)      # hidden layers
    max_steps: int = setting(1500, low=1)        # Adam steps at most
    lr: float = setting(3e-3, low=0, low_open=True)
    batch_sequences: int = setting(16, low=1)    # sequences per step
    eval_every: int = setting(25, low=1)         # steps
    patience: int = setting(8, low=1)            # validation checks
    tol: float = setting(0.01, low=0, low_open=True)  # validation accuracy gain that counts as progress
    min_steps: int = setting(500, low=0)         # steps before a reader may stop as flat
    val_sequences: int = setting(40, low=1)      # sequences

    def rule(self) -> StopRule:
        """The stopping rule of every reader (checks every ``eval_every`` steps; solved only when perfect)."""
        return StopRule(check_every=self.eval_every, patience=self.patience, tol=self.tol, solved=1.0)


def lag_rows(states: Tensor, labels: Tensor, lag: int, min_pos: int) -> tuple[Tensor, Tensor]:
    """``(X (B * (T - min_pos), F), y)``: the state at every ``t >= min_pos`` and the label at ``t - lag``.

    Raises:
        ValueError: ``lag > min_pos`` (a label before the sequence) or ``min_pos >= T``.
    """
    T = states.shape[1]
    if not 0 <= lag <= min_pos < T:
        raise ValueError(f"need 0 <= lag <= min_pos < T, got lag {lag}, min_pos {min_pos}, T {T}")
    return states[:, min_pos:].reshape(-1, states.shape[-1]), labels[:, min_pos - lag: T - lag].reshape(-1)


class LagOracle(nn.Module):
    """Independent MLP readers side by side, one per lag, each reading the label at ``t - k`` from
    the state at ``t`` (standardised with the validation split's mean and std):
    ``F -> hidden (ReLU) [-> hidden (ReLU)] -> n_classes``. ``forward(x (N, F))`` -> logits
    ``(n_lags, N, n_classes)``. **Capacity:** ``layers`` hidden layers of ``hidden`` units per lag
    (about ``F h + h^2 + h C`` weights); a universal approximator in the limit, so what it misses at
    this size is evidence, not proof, that the state lost it (as for :class:`TraceOracle`)."""

    def __init__(self, n_features: int, n_classes: int, lags: Sequence[int], cfg: LagOracleConfig, seed: int = 0):
        super().__init__()
        self.lags = tuple(int(k) for k in lags)
        G, H = len(self.lags), cfg.hidden
        g = torch.Generator().manual_seed(int(seed))
        dims = [n_features] + [H] * cfg.layers + [n_classes]
        self.weights = nn.ParameterList(
            nn.Parameter(torch.randn(G, a, b, generator=g) * (2 / a) ** 0.5) for a, b in zip(dims[:-1], dims[1:], strict=True))
        self.biases = nn.ParameterList(nn.Parameter(torch.zeros(G, 1, b)) for b in dims[1:])
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("std", torch.ones(n_features))
        self.register_buffer("majority", torch.zeros(G, dtype=torch.long))  # most frequent validation label per lag

    def forward(self, x: Tensor, readers: Tensor | None = None) -> Tensor:
        """Logits ``(G, N, C)`` of every reader, or ``(len(readers), N, C)`` of the readers (lag
        positions, int64) in ``readers`` only."""
        ws, bs = list(self.weights), list(self.biases)
        if readers is not None:
            ws, bs = [w.index_select(0, readers) for w in ws], [b.index_select(0, readers) for b in bs]
        h = ((x - self.mean) / self.std).expand(len(ws[0]), *x.shape)     # (G, N, F)
        for i, (w, b) in enumerate(zip(ws, bs, strict=True)):
            h = torch.baddbmm(b, h, w)
            if i < len(ws) - 1:
                h = torch.relu(h)
        return h

    def rows(self, states: Tensor, labels: Tensor, min_pos: int) -> tuple[Tensor, Tensor]:
        """``(X (N, F), y (n_lags, N))`` for every lag at once (the same positions)."""
        X = states[:, min_pos:].reshape(-1, states.shape[-1])
        return X, torch.stack([lag_rows(states, labels, k, min_pos)[1] for k in self.lags])

    @torch.no_grad()
    def score(self, states: Tensor, labels: Tensor, min_pos: int) -> tuple[Tensor, Tensor]:
        """``(accuracy, chance)``, each ``(n_lags,)``, on ``(B, T, F)`` states at positions ``t >= min_pos``;
        chance is the share of the most frequent validation label (the best label-blind guess, as
        :func:`paper_lib.probes.lag_decodability` draws it)."""
        X, y = self.rows(states, labels, min_pos)
        return (self(X).argmax(-1) == y).float().mean(1), (y == self.majority[:, None]).float().mean(1)


def fit_lag_oracle(sample, n_classes: int, lags: Sequence[int], min_pos: int, cfg: LagOracleConfig,
                   seed: int = 0, history: list | None = None) -> tuple[LagOracle, dict[int, int], dict[int, str]]:
    """Fit a :class:`LagOracle` on fresh sequences, each lag's reader until the one stopping rule stops it.

    ``sample(n_seq, generator)`` -> ``(states (n_seq, T, F) float, labels (n_seq, T) int64 in
    [0, n_classes))``: draws sequences of the process and runs the fixed state over them (a
    synthetic task gives as many as we want, so the reader is limited by the state and its own
    capacity, not by a finite training set). The validation split is drawn first (generator seeded
    ``seed``), then one fresh batch per step; each lag's reader keeps its weights of best validation
    accuracy and stops by :meth:`LagOracleConfig.rule` (:class:`paper_lib.stopping.Stopper`, one run
    per reader; chance: the entropy of its validation labels). Loss: cross-entropy.

    ``history``: when a list, one row per (check, lag of a reader still training) is appended:
    ``{"step", "lag", "train_loss"`` (mean cross-entropy of the fresh batches since the previous
    check, nats per position, each batch scored before the step that learns from it: a loss on
    unseen data), ``"val_loss"`` (nats), ``"val_acc"}`` (fraction): the convergence curve.

    Returns:
        the oracle (eval mode, the best weights), ``{lag: steps run}`` and ``{lag: why it stopped}``
        (:data:`paper_lib.stopping.REASONS`).

    Raises:
        ValueError: no lag, a lag above ``min_pos``, or validation rows too few for ``cfg.tol``.
    """
    if not lags or max(lags) > min_pos or min(lags) < 0:
        raise ValueError(f"lags must be non-empty, in [0, min_pos={min_pos}], got {list(lags)}")
    gen = torch.Generator().manual_seed(int(seed))
    val_states, val_labels = sample(cfg.val_sequences, gen)
    model = LagOracle(val_states.shape[-1], n_classes, lags, cfg, seed)
    Xv, yv = model.rows(val_states, val_labels, min_pos)
    model.mean.copy_(Xv.mean(0))
    model.std.copy_(Xv.std(0).clamp_min(1e-6))
    model.majority.copy_(torch.stack([torch.bincount(y, minlength=n_classes).argmax() for y in yv]))
    G = len(model.lags)
    chance = [label_entropy(y.numpy(), n_classes) for y in yv]
    stopper = Stopper(cfg.rule(), cfg.max_steps, chance, len(Xv), runs=G, min_steps=cfg.min_steps)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    best_params = [p.detach().clone() for p in model.parameters()]
    window, since, step = torch.zeros(G), 0, 0                           # fresh-batch loss summed since the last check
    for step in range(1, cfg.max_steps + 1):
        X, y = model.rows(*sample(cfg.batch_sequences, gen), min_pos)
        live = torch.from_numpy(stopper.running.nonzero()[0])            # readers still training
        logits, y = model(X, live), y.index_select(0, live)              # (G', N, C), (G', N)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").view(len(y), -1).mean(1)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()                                            # independent readers: sum of their losses
        # (a stopped reader gets a zero gradient; Adam's momentum still moves it, but its best
        # weights were kept when it stopped and are restored below, so the result is as before)
        opt.step()
        window.index_add_(0, live, loss.detach())
        since += 1
        if step % cfg.eval_every and step < cfg.max_steps:
            continue
        model.eval()
        with torch.no_grad():
            val_logits = model(Xv)
            acc = (val_logits.argmax(-1) == yv).float().mean(1)
        model.train()
        was = stopper.running.copy()
        done = stopper.update(step, (window / since).numpy(), acc.numpy())
        if history is not None:
            val_loss = nn.functional.cross_entropy(val_logits.flatten(0, 1), yv.flatten(), reduction="none")
            val_loss = val_loss.view(G, -1).mean(1)
            history += [{"step": step, "lag": model.lags[g], "train_loss": float(window[g]) / since,
                         "val_loss": float(val_loss[g]), "val_acc": float(acc[g])} for g in range(G) if was[g]]
        window.zero_()
        since = 0
        better = torch.from_numpy(stopper.improved)
        for p, keep in zip(model.parameters(), best_params, strict=True):     # every parameter is (G, ...)
            keep[better] = p.detach()[better]
        if done:
            break
    stopper.finish(step)
    with torch.no_grad():
        for p, keep in zip(model.parameters(), best_params, strict=True):
            p.copy_(keep)
    model.eval()
    return (model, {k: int(n) for k, n in zip(model.lags, stopper.steps.tolist(), strict=True)},
            dict(zip(model.lags, stopper.reasons, strict=True)))
