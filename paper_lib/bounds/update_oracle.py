"""The MLP oracle of the fixed bank on key-update recall: the best reader we fit of the noisy one-hot
trace bank, trained on fresh sequences until its held-out accuracy is flat.

Its input is the whole bank at the answer position (:func:`paper_lib.bounds.noise_budget.bank_read`,
``S x vocab`` numbers: 243 at the paper's three rates and 81 tokens), the query key (one-hot), the
gap (one-hot: the Bayes bound knows it too) and, as a routing of numbers the bank already holds, the
query key's block (:func:`paper_lib.bounds.update_bound.query_block`), so that the MLP need not learn the
lookup before it can learn to read the decay. One MLP reads every gap. It bounds what the bank holds
from below; :func:`paper_lib.bounds.update_bound.update_bound` bounds it from above, and where the two meet
the oracle has converged.

**Fitted until flat** (our design): with the house's recipe and the one stopping rule
(:func:`paper_lib.train.train_until_flat`, :mod:`paper_lib.stopping`), on the mean accuracy over the gaps of
``val_sequences`` fixed fresh sequences per gap (fixed noise), so that it stops when its held-out
curve is flat, never on its initial plateau; where it stops, and why, is recorded.
Shapes: banks ``(B, S, vocab)``; features ``(B, F)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor, nn

from ..data.update_recall import UpdateBatch, UpdateTask, keys_ignored_loss, sample_update
from ..pipeline.settings import check_fields, setting
from ..stopping import Stopper, StopRule
from ..train import TrainConfig, train_until_flat
from .noise_budget import bank_read
from .update_bound import query_block


@dataclass(frozen=True)
class UpdateOracleConfig:
    """The oracle's size and fit (our design).

    Attributes:
        hidden: units per hidden layer (two ReLU layers). lr: AdamW's peak rate (no weight decay).
        batch_size: fresh sequences per step, spread evenly over the gaps. max_steps: the cap.
        warmup_steps: linear warmup, then cosine decay to 5% of ``lr`` at ``max_steps``.
        val_sequences: fixed fresh validation sequences per gap.
    """

    hidden: int = setting(256, low=1)
    lr: float = setting(1e-3, low=0, low_open=True)
    batch_size: int = setting(320, low=1)
    max_steps: int = setting(3000, low=1)
    warmup_steps: int = setting(100, low=0)
    val_sequences: int = setting(512, low=1)

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
                      cfg: UpdateOracleConfig, seed: int = 0, rule: StopRule | None = None
                      ) -> tuple[UpdateOracle, list[dict], dict]:
    """Fit an :class:`UpdateOracle` on fresh sequences of every gap until ``rule`` (default
    :class:`~paper_lib.stopping.StopRule`) stops it (see the module docstring). ``seed`` fixes the
    weights, the training stream and the validation split (its sequences and noise).

    Returns:
        the oracle (its best held-out weights, eval mode); the learning curve, rows ``step, gap,
        val_accuracy, lr, train_loss``; ``{"steps", "stop"}``: the steps run and why it stopped.

    Raises:
        ValueError: a validation set too small for ``rule.tol`` (``val_sequences x gaps``).
    """
    gaps = [int(d) for d in gaps]
    rule = rule or StopRule()
    gen = torch.Generator().manual_seed(int(seed))
    val = [sample_update(task, d, cfg.val_sequences, gen) for d in gaps]
    vx = [oracle_features(b, task, alphas, sigma, i, len(gaps), gen) for i, b in enumerate(val)]
    torch.manual_seed(seed)
    model = UpdateOracle(vx[0].shape[1], task.n_values, cfg.hidden)
    allx = torch.cat(vx)
    model.mean.copy_(allx.mean(0))
    model.std.copy_(allx.std(0).clamp_min(1e-4))
    per = max(1, cfg.batch_size // len(gaps))

    def step_loss(step: int) -> Tensor:
        xs, ys = [], []
        for i, d in enumerate(gaps):
            b = sample_update(task, d, per, gen)
            xs.append(oracle_features(b, task, alphas, sigma, i, len(gaps), gen))
            ys.append(b.latest)
        return nn.functional.cross_entropy(model(torch.cat(xs)), torch.cat(ys))

    def heldout() -> dict[str, float]:
        return {str(d): float((model(x).argmax(1) == b.latest).float().mean()) for d, b, x in zip(gaps, val, vx,
                                                                                                    strict=True)}

    tc = TrainConfig(steps=cfg.max_steps, batch_size=per * len(gaps), seq_len=1, lr=cfg.lr, min_lr_frac=0.05,
                     warmup_steps=min(cfg.warmup_steps, cfg.max_steps - 1), weight_decay=0.0, grad_clip=0.0, seed=seed)
    chance = sum(keys_ignored_loss(task, b) for b in val) / len(val)       # the best answer blind to the keys
    stopper = Stopper(rule, cfg.max_steps, chance, cfg.val_sequences * len(gaps))
    rows = train_until_flat(model, step_loss, heldout, tc, stopper)
    curve = [{"step": r["step"], "gap": d, "val_accuracy": r[str(d)], "lr": r["lr"], "train_loss": r["train_loss"]}
             for r in rows for d in gaps]
    return model, curve, {"steps": int(stopper.steps[0]), "stop": stopper.reason}


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
