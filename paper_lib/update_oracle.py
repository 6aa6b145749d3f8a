"""The MLP oracle of the fixed bank on key-update recall: the best reader we fit of the noisy one-hot
trace bank, trained on fresh sequences until its loss is flat on fresh data at every gap.

Its input is the whole bank at the answer position (:func:`paper_lib.noise_budget.bank_read`,
``S x vocab`` numbers: 243 at the paper's three rates and 81 tokens), the query key (one-hot), the
gap (one-hot: the Bayes bound knows it too) and, as a routing of numbers the bank already holds, the
query key's block (:func:`paper_lib.update_bound.query_block`), so that the MLP need not learn the
lookup before it can learn to read the decay. One MLP reads every gap. It bounds what the bank holds
from below; :func:`paper_lib.update_bound.update_bound` bounds it from above, and where the two meet
the oracle has converged.

**Flatness** (our design): every ``check_every`` steps the cross-entropy on ``val_sequences`` fixed
fresh sequences per gap (fixed noise) is measured; a gap is *flat* when its best validation loss
improved by less than ``tol`` nats over the last ``patience`` checks. When every gap is flat the
learning rate drops by ``lr_factor`` (``lr_drops`` times); flat again after the last drop, the fit
stops and every gap is *converged*. A fit that reaches ``max_steps`` first reports which gaps were
flat. Shapes: banks ``(B, S, vocab)``; features ``(B, F)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor, nn

from .data.update_recall import UpdateBatch, UpdateTask, sample_update
from .noise_budget import bank_read
from .pipeline.settings import check_fields, setting
from .update_bound import query_block


@dataclass(frozen=True)
class UpdateOracleConfig:
    """The oracle's size and fit (our design).

    Attributes:
        hidden: units per hidden layer (two ReLU layers). lr: Adam's rate (after a drop, times ``lr_factor``).
        batch_size: fresh sequences per step, spread evenly over the gaps. max_steps: steps at most.
        check_every: steps between validation checks. patience: checks a gap's loss may improve by
            less than ``tol`` (nats) before it counts as flat. lr_drops: learning-rate drops before the stop.
        val_sequences: fixed fresh validation sequences per gap.
    """

    hidden: int = setting(256, low=1)
    lr: float = setting(1e-3, low=0, low_open=True)
    lr_factor: float = setting(0.3, low=0, high=1, low_open=True, high_open=True)
    batch_size: int = setting(320, low=1)
    max_steps: int = setting(8000, low=1)
    check_every: int = setting(250, low=1)
    patience: int = setting(4, low=1)
    tol: float = setting(0.003, low=0)
    lr_drops: int = setting(1, low=0)
    val_sequences: int = setting(1024, low=1)

    def __post_init__(self):
        check_fields(self)


def oracle_features(batch: UpdateBatch, task: UpdateTask, alphas: Sequence[float], sigma: float, gap_index: int,
                    n_gaps: int, generator: torch.Generator | None = None) -> Tensor:
    """``(B, S * vocab + V * S + K + n_gaps)`` float32: the noisy bank at the answer, the query block,
    the query key and the gap, one-hot."""
    bank = bank_read(batch.inputs, batch.answer_pos, task.vocab_size, alphas, sigma, generator)   # (B, S, vocab)
    q = nn.functional.one_hot(batch.query - 1, task.n_keys).float()
    g = torch.zeros(len(batch), n_gaps)
    g[:, gap_index] = 1.0
    return torch.cat([bank.flatten(1), query_block(bank, batch.query, task).flatten(1), q, g], dim=1)


class UpdateOracle(nn.Module):
    """``features (B, F) -> logits (B, V)`` over the values: standardised inputs (the validation
    split's mean and std), two hidden ReLU layers."""

    def __init__(self, n_features: int, n_values: int, hidden: int):
        super().__init__()
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("std", torch.ones(n_features))
        self.net = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, n_values))

    def forward(self, x: Tensor) -> Tensor:
        return self.net((x - self.mean) / self.std)


def fit_update_oracle(task: UpdateTask, gaps: Sequence[int], alphas: Sequence[float], sigma: float,
                      cfg: UpdateOracleConfig, seed: int = 0, progress=None) -> tuple[UpdateOracle, list[dict], dict]:
    """Fit an :class:`UpdateOracle` on fresh sequences of every gap (see the module docstring).

    ``seed`` fixes the weights, the training stream and the validation split (its sequences and
    noise). ``progress``: a tqdm bar advanced per check.

    Returns:
        the oracle (eval mode); the learning curve, rows ``step, gap, val_loss, val_accuracy, lr``;
        ``{gap: converged}`` (flat at the end, after the last learning-rate drop) and ``"steps"``: the steps run.
    """
    gaps = [int(d) for d in gaps]
    gen = torch.Generator().manual_seed(int(seed))
    val = [sample_update(task, d, cfg.val_sequences, gen) for d in gaps]
    vx = [oracle_features(b, task, alphas, sigma, i, len(gaps), gen) for i, b in enumerate(val)]
    torch.manual_seed(seed)
    model = UpdateOracle(vx[0].shape[1], task.n_values, cfg.hidden)
    allx = torch.cat(vx)
    model.mean.copy_(allx.mean(0))
    model.std.copy_(allx.std(0).clamp_min(1e-4))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    per = max(1, cfg.batch_size // len(gaps))
    best = {d: float("inf") for d in gaps}
    history: dict[int, list[float]] = {d: [] for d in gaps}
    curve, drops, flat, step = [], 0, {d: False for d in gaps}, 0
    for step in range(1, cfg.max_steps + 1):
        xs, ys = [], []
        for i, d in enumerate(gaps):
            b = sample_update(task, d, per, gen)
            xs.append(oracle_features(b, task, alphas, sigma, i, len(gaps), gen))
            ys.append(b.latest)
        loss = nn.functional.cross_entropy(model(torch.cat(xs)), torch.cat(ys))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % cfg.check_every and step < cfg.max_steps:
            continue
        model.eval()
        with torch.no_grad():
            for d, b, x in zip(gaps, val, vx, strict=True):
                logits = model(x)
                v = float(nn.functional.cross_entropy(logits, b.latest))
                best[d] = min(best[d], v)
                history[d].append(best[d])
                curve.append({"step": step, "gap": d, "val_loss": v, "lr": opt.param_groups[0]["lr"],
                              "val_accuracy": float((logits.argmax(1) == b.latest).float().mean())})
        model.train()
        if progress is not None:
            progress.update(1)
        flat = {d: len(h) > cfg.patience and h[-cfg.patience - 1] - h[-1] < cfg.tol for d, h in history.items()}
        if all(flat.values()):
            if drops >= cfg.lr_drops:
                break
            drops += 1
            for g in opt.param_groups:
                g["lr"] *= cfg.lr_factor
            history = {d: h[-1:] for d, h in history.items()}                  # flatness is judged afresh
    model.eval()
    return model, curve, {**{d: bool(flat[d] and drops >= cfg.lr_drops) for d in gaps}, "steps": step}


@torch.no_grad()
def oracle_accuracy(model: UpdateOracle, task: UpdateTask, gaps: Sequence[int], alphas: Sequence[float],
                    sigma: float, n_seqs: int, seed: int) -> dict[int, float]:
    """Test accuracy at each gap on ``n_seqs`` fresh sequences drawn with ``seed + gap`` (the
    notebooks' test sequences) and noise drawn with ``seed``."""
    gen = torch.Generator().manual_seed(int(seed))
    out = {}
    for i, d in enumerate(gaps):
        b = sample_update(task, int(d), n_seqs, int(seed) + int(d))
        x = oracle_features(b, task, alphas, sigma, i, len(gaps), gen)
        out[int(d)] = float((model(x).argmax(1) == b.latest).float().mean())
    return out
