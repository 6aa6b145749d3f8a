"""Training the depth probe until it reaches a criterion: notebook 06's panel B runs and metrics.

One run trains one residual rule (:mod:`paper_lib.models.depth_probe`) at one depth and width,
every seed as an independent copy side by side, on fresh examples of the chained-state task,
evaluating on held-out examples every ``eval_every`` steps until the one stopping rule
(:mod:`paper_lib.stopping`) has stopped every seed: solved (min(copy, state) accuracy at least
``depth_criterion``), flat, or at ``depth_steps``. From the learning curves: the accuracies where each run
stopped and the
steps each seed took to the criterion. ``s`` is notebook 06's settings
(:class:`paper_lib.experiments.boundary_map.Settings`; the fields named below). Our design: the
paper runs no depth experiment.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..models.depth_probe import DepthProbe, chain_states, chain_table
from ..pipeline.parallel import parallel_map
from ..stopping import Stopper, StopRule, chance_loss, cut_metrics

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
    """Train one (arm, depth, width) at every seed (independent copies side by side) until the one
    stopping rule stops each seed (:class:`paper_lib.stopping.Stopper`, a run per seed): solved once
    min(copy_acc, state_acc) reaches ``depth_criterion``, flat once it has gained less than
    ``depth_min_gain`` over ``depth_patience`` evaluations, or at ``depth_steps``, and never while the
    seed's training loss is on the chance loss (``2 ln n_states``: the copy and the state guessed);
    the run ends when every seed has stopped. The learning curve on held-out examples: ``arm, n_layer,
    d_model, seed, step, copy_acc, state_acc`` (the state at the top layer), ``state_acc_mean`` (over
    layers), ``train_loss`` (nats, the mean since the last evaluation) and ``stop`` (why the seed
    stopped, on its last row; '' before). Our design: the paper is silent."""
    G = len(s.seeds)
    table = chain_table(s.n_states, s.n_inputs, 0)                     # one task for every arm and seed
    model = DepthProbe(arm, L, d_model, n_x0=s.n_states, n_inputs=s.n_inputs, n_states=s.n_states, n_models=G,
                       seeds=[1000 * sd + L for sd in s.seeds], gate_bias=s.gate_bias)
    opt = torch.optim.Adam(model.parameters(), lr=s.depth_lr)
    g = torch.Generator().manual_seed(17 * L + d_model)            # the same batches for every arm
    held = _depth_batch(s, L, G, s.eval_examples, table, torch.Generator().manual_seed(EVAL_SEED + L))
    rule = StopRule(check_every=s.eval_every, patience=s.depth_patience, tol=s.depth_min_gain, solved=s.depth_criterion)
    stopper = Stopper(rule, s.depth_steps, 2 * chance_loss(s.n_states), s.eval_examples, runs=G)
    rows, window, since, step = [], torch.zeros(G), 0, 0

    def record(step: int, loss) -> None:
        c, st, sm = _evaluate(model, held)
        was = stopper.running.copy()
        if step:
            stopper.update(step, loss, np.minimum(c, st))
        rows.extend({"arm": arm, "n_layer": L, "d_model": d_model, "seed": sd, "step": step, "copy_acc": float(c[i]),
                     "state_acc": float(st[i]), "state_acc_mean": float(sm[i]), "train_loss": float(loss[i]),
                     "stop": stopper.reasons[i] if was[i] and not stopper.running[i] else ""}
                    for i, sd in enumerate(s.seeds))

    record(0, np.full(G, np.nan))
    for step in range(1, s.depth_steps + 1):
        losses = model.losses(*_depth_batch(s, L, G, s.depth_batch, table, g))
        opt.zero_grad()
        losses.sum().backward()
        opt.step()
        window += losses.detach()
        since += 1
        if step % s.eval_every == 0 or step == s.depth_steps:
            record(step, (window / since).numpy())
            window.zero_()
            since = 0
            if not stopper.running.any():
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
    """One row per (arm, n_layer, d_model, seed): the accuracies at the evaluation where that seed
    stopped, ``both_acc`` (the smaller of copy and state), ``stopped_at`` (that step), ``stop`` (why)
    and ``steps_to_criterion`` (the first evaluated step where ``both_acc`` reached
    ``depth_criterion``; ``depth_steps`` where it never did: the budget, a lower bound)."""
    keys = ["arm", "n_layer", "d_model", "seed"]
    c = curves.assign(both_acc=np.minimum(curves.copy_acc, curves.state_acc))
    last = c[c.stop != ""].set_index(keys)
    hit = c[c.both_acc >= s.depth_criterion].groupby(keys).step.min()
    out = last.assign(stopped_at=last.step, steps_to_criterion=hit.reindex(last.index).fillna(s.depth_steps))
    return out.drop(columns="step").reset_index()


def depth_metrics(curves: pd.DataFrame, s) -> dict[str, list[float]]:
    """Per-seed panel B metrics where each seed stopped (:func:`depth_final`), at every width:
    ``depth_copy_acc_<arm>_<L>``, ``depth_state_acc_<arm>_<L>``, ``depth_both_acc_<arm>_<L>``
    (the smaller of the two per seed: a stream that keeps both the first token and the current
    state), ``depth_steps_to_criterion_<arm>_<L>`` and ``depth_cut_<arm>_<L>_improving`` / ``_plateau``
    (1 per seed cut at the step cap, :func:`paper_lib.stopping.cut_metrics`) at the headline width (the
    last of ``widths``), the same names with ``_d<d_model>`` after ``<L>`` at the other widths."""
    out: dict[str, list[float]] = {}
    for (arm, L, d), g in depth_final(curves, s).groupby(["arm", "n_layer", "d_model"]):
        g = g.sort_values("seed")
        w = "" if d == s.widths[-1] else f"_d{d}"
        for col in ("copy_acc", "state_acc", "both_acc", "steps_to_criterion"):
            out[f"depth_{col}_{arm}_{L}{w}"] = g[col].astype(float).tolist()
        out.update(cut_metrics(f"depth_cut_{arm}_{L}{w}_", g.stop.tolist()))
    return out
