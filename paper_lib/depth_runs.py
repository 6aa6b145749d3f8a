"""Training the depth probe until it reaches a criterion: notebook 06's panel B runs and metrics.

One run trains one residual rule (:mod:`paper_lib.models.depth_probe`) at one depth and width,
every seed as an independent copy side by side, on fresh examples of the chained-state task,
evaluating on held-out examples every ``eval_every`` steps until every seed has reached the
criterion (min(copy, state) accuracy at least ``depth_criterion``), or has stopped gaining, or at
most ``depth_steps``. From the learning curves: the accuracies where each run stopped and the
steps each seed took to the criterion. ``s`` is notebook 06's settings
(:class:`paper_lib.experiments.boundary_map.Settings`; the fields named below). Our design: the
paper runs no depth experiment.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from .models.depth_probe import DepthProbe, chain_states, chain_table
from .pipeline.parallel import parallel_map

EVAL_SEED = 99_991
"""Seed of the held-out examples (plus the depth)."""


def _depth_batch(s, L: int, G: int, B: int, table: torch.Tensor, g: torch.Generator):
    x0 = torch.randint(0, s.n_states, (G, B), generator=g)
    a = torch.randint(0, s.n_inputs, (G, B, L), generator=g)
    return x0, a, chain_states(x0.flatten(), a.flatten(0, 1), table).view(G, B, L)


@torch.no_grad()
def _evaluate(model: DepthProbe, batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x0, a, st = batch
    logits, copy = model(x0, a)
    state_acc = (logits.argmax(-1) == st).float().mean(1)                # (G, L)
    return (copy.argmax(-1) == x0).float().mean(1).numpy(), state_acc[:, -1].numpy(), state_acc.mean(1).numpy()


def run_depth(s, arm: str, L: int, d_model: int) -> pd.DataFrame:
    """Train one (arm, depth, width) at every seed (independent copies side by side) until every
    seed has reached the criterion, or has stopped gaining, or ``depth_steps`` steps; the
    learning curve on held-out examples: ``arm, n_layer, d_model, seed, step, copy_acc,
    state_acc`` (the state at the top layer) and ``state_acc_mean`` (over layers).

    A seed *reaches* the criterion at the first evaluation where min(copy_acc, state_acc) is at
    least ``depth_criterion``. A seed short of it *stops gaining* when its best min(copy, state)
    has not risen by ``depth_min_gain`` for ``depth_patience`` steps (0: never). The run stops when
    every seed has reached it or stopped gaining (our design: the paper is silent)."""
    G = len(s.seeds)
    table = chain_table(s.n_states, s.n_inputs, 0)                     # one task for every arm and seed
    model = DepthProbe(arm, L, d_model, n_x0=s.n_states, n_inputs=s.n_inputs, n_states=s.n_states, n_models=G,
                       seeds=[1000 * sd + L for sd in s.seeds], gate_bias=s.gate_bias)
    opt = torch.optim.Adam(model.parameters(), lr=s.depth_lr)
    g = torch.Generator().manual_seed(17 * L + d_model)            # the same batches for every arm
    held = _depth_batch(s, L, G, s.eval_examples, table, torch.Generator().manual_seed(EVAL_SEED + L))
    rows = []
    reached = np.zeros(G, dtype=bool)
    best, best_step = np.full(G, -1.0), np.zeros(G)

    def record(step) -> bool:
        """Append the evaluation at ``step``; True when the run is done."""
        c, st, sm = _evaluate(model, held)
        rows.extend({"arm": arm, "n_layer": L, "d_model": d_model, "seed": sd, "step": step, "copy_acc": float(c[i]),
                     "state_acc": float(st[i]), "state_acc_mean": float(sm[i])} for i, sd in enumerate(s.seeds))
        both = np.minimum(c, st)
        reached[both >= s.depth_criterion] = True
        gain = both >= best + s.depth_min_gain
        best[gain], best_step[gain] = both[gain], step
        stale = (step - best_step >= s.depth_patience) if s.depth_patience else np.zeros(G, dtype=bool)
        return bool((reached | stale).all())

    record(0)
    for step in range(1, s.depth_steps + 1):
        loss = model.loss(*_depth_batch(s, L, G, s.depth_batch, table, g))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if (step % s.eval_every == 0 or step == s.depth_steps) and record(step):
            break
    return pd.DataFrame(rows)


def run_depth_map(s, progress=None) -> pd.DataFrame:
    """:func:`run_depth` at every (width, depth, arm) in ``s.workers`` processes (the deepest
    first; rows in (width, depth, arm) order). ``progress``: a tqdm bar advanced per run."""
    runs = [(s, arm, L, d) for d in s.widths for L in s.depths for arm in s.arms]
    return pd.concat(parallel_map(run_depth, runs, workers=s.workers, progress=progress is not None, bar=progress,
                                  cost=_run_cost), ignore_index=True)


_ARM_COST = {"decay": 1.0, "gate": 1.0, "plain": 0.9, "static": 0.9, "lnscale": 0.8, "dwa": 0.6, "highway": 0.6}


def _run_cost(run: tuple) -> float:
    """The order in which runs are handed out: a run's cost ~ L (d + 16) times its arm's share of
    the step budget it used at n_layer 16 (measured once at the cpu sizes: decay and gate use it
    all, dwa and highway a quarter at d_model 32); only the order matters."""
    _, arm, L, d = run
    return L * (d + 16) * _ARM_COST.get(arm, 1.0)


def depth_final(curves: pd.DataFrame, s) -> pd.DataFrame:
    """One row per (arm, n_layer, d_model, seed): the accuracies at the run's last evaluation
    (after early stopping), ``both_acc`` (the smaller of copy and state), ``stopped_at`` (the
    run's last step) and ``steps_to_criterion`` (the first evaluated step where ``both_acc`` reached
    ``depth_criterion``; ``depth_steps`` where it never did: the budget, a lower bound)."""
    keys = ["arm", "n_layer", "d_model", "seed"]
    c = curves.assign(both_acc=np.minimum(curves.copy_acc, curves.state_acc))
    last = c.loc[c.groupby(keys).step.idxmax()].set_index(keys)
    hit = c[c.both_acc >= s.depth_criterion].groupby(keys).step.min()
    out = last.assign(stopped_at=last.step, steps_to_criterion=hit.reindex(last.index).fillna(s.depth_steps))
    return out.drop(columns="step").reset_index()


def depth_metrics(curves: pd.DataFrame, s) -> dict[str, list[float]]:
    """Per-seed panel B metrics after early stopping (:func:`depth_final`), at every width:
    ``depth_copy_acc_<arm>_<L>``, ``depth_state_acc_<arm>_<L>``, ``depth_both_acc_<arm>_<L>``
    (the smaller of the two per seed: a stream that keeps both the first token and the current
    state) and ``depth_steps_to_criterion_<arm>_<L>`` at the headline width (the last of
    ``widths``), the same names ending ``_d<d_model>`` at the other widths."""
    out: dict[str, list[float]] = {}
    for (arm, L, d), g in depth_final(curves, s).groupby(["arm", "n_layer", "d_model"]):
        g = g.sort_values("seed")
        w = "" if d == s.widths[-1] else f"_d{d}"
        for col in ("copy_acc", "state_acc", "both_acc", "steps_to_criterion"):
            out[f"depth_{col}_{arm}_{L}{w}"] = g[col].astype(float).tolist()
    return out
