# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06 · The boundary, mapped: in time and in depth
#
# **The claim under test (the paper's title and its general principle, beyond its experiments).**
# Fixed-rate EMA traces keep *temporal structure* and lose *content* (which token it was); and
# fixed-coefficient accumulation dilutes information across **depth** too (a residual stream sums
# every layer's write with fixed coefficients), so that only learned, input-dependent selection
# avoids the dilution. The paper runs no such map; both panels are **our design**, built in
# `paper_lib.experiments.boundary_map` and `paper_lib.models.depth_probe`. Each panel's report row
# is decided against its strongest controls: in time, the best reader we fit on the fixed traces
# (an upper bound of what a reader gets from them) against learned states of equal size trained
# until their held-out accuracy is flat; in depth, every residual rule trained until it reaches the
# criterion, or is flat, or at most 6,000 steps, the gates that set the carry starting as carriers.
# Every run here stops by the house's one stopping rule (`paper_lib.stopping`), never while its
# training loss sits on the chance loss, and records why it stopped; a row that would rest on a
# run cut at its cap says "not attributable at this budget".
#
# **Panel A (time).** Tokens drawn uniformly from `vocab_size` tokens; a token's *class* (the
# structural label) is `token mod n_classes`, and its input vector is part class direction, part
# its own (`class_share`). A fixed EMA trace bank (the paper's rates 0.5/0.1/0.02, and a slower
# bank) holds `3 x d_model` numbers; a linear probe fitted on the fixed traces alone reads the
# token at lag `k` and its class. The learned states of equal size are a GRU with `3 x d_model`
# numbers and a selective scan of `3 x d_model` channels (a diagonal linear recurrence whose decay
# each token sets, Mamba's recurrence; `paper_lib.models.scan_reader`), each trained to output the
# token and class at every lag of the grid up to `learned_max_lag` (8: a state of this size keeps
# no identity further back at vocabulary / width 1 or more), until flat on held-out sequences,
# then read two ways: by the same linear probe (every lag) and by its own trained heads.
# Decodability is `(accuracy - chance) / (1 - chance)`. Over the measured bank map we draw
# the closed form of a matched-filter reader that knows the embeddings
# (`paper_lib.probes.matched_filter_identity_accuracy`: weights `alpha (1 - alpha)^k` against the
# interference of the other tokens in the window).
#
# **Panel B (depth).** Position-wise, no sequence: the stream starts as the embedding of `x0`;
# block `l` receives a fresh token `a_l`, writes `u_l` computed from the normalised stream and
# `a_l`, and a head at every layer must read `s_l = T[s_{l-1}, a_l]` (a fixed random table, `s_0 =
# x0`); a copy head reads `x0` from the top. Seven residual rules: `plain` `h + u`, `decay` `0.5 h +
# 0.5 u`, `dwa` (DenseFormer's learned depth-weighted average, the same for every input), `gate`
# `h + g(h, a) u`, `highway` `(1 - g(h, a)) h + g(h, a) u`, `static` `(1 - g_l) h + g_l u` (one
# learned gate per layer and channel, the same for every input: the highway without its
# input-dependence), and the *fixed* control `lnscale` (`h + u` with the block's normalised input
# scaled by `1/sqrt(l)`, "The Curse of Depth"). The gates that set the carry (`highway`, `static`)
# start carrying: their bias starts at `gate_bias` = -3 (g = 0.05), as in Highway networks. At bias
# 0 the highway would start as the `decay` arm, whose gradient to `x0` through 16 blocks is $0.5^{16}$.
# A stream that dilutes loses `x0` (too much forgetting) or the current state (stale writes crowding
# it out); each run is scored by both and by the smaller of the two, and each seed trains until it
# has both at `depth_criterion` (0.9) on held-out examples, or is flat, or at most `depth_steps`.
# The row reads how many steps each rule needs (`depth_steps_to_criterion_<arm>_<L>`) beside the
# accuracies where it stopped.
#
# A linear probe that misses a token says nothing about the traces, so the same bank is also read
# by **the oracle** (`paper_lib.bounds.oracle.fit_lag_oracle`): the best reader we fit on the fixed
# traces alone, one MLP per lag (`oracle.layers` hidden layers of `oracle.hidden` ReLU units),
# trained on fresh sequences with Adam until flat on a held-out split, at every vocabulary
# of the learned states up to the rule's (`boundary_map.oracle_vocab_sizes`), at every seed in the
# rule's cell and at one seed elsewhere (`oracle_map_seeds`, the cpu budget).
#
# **What this notebook does not do yet:** the learned states run at three vocabularies (vocabulary
# / width 1, 4 and 16) and the oracle reads the paper bank only, up to vocabulary / width 16 (an
# identity reader at 64 took 183 s, 2.7 times one at 16, measured once before stopped readers were
# skipped; the slow bank's oracle is `oracle_banks`, off at the cpu budget); the oracle runs one seed
# away from the rule's cell; the structural label is a token class, not a grammar role; the probe
# of trained language models is a linear one and lives in notebook 03 (notebook 02's lag curves are
# read by their own report row); depth 32 runs only at the paper profile. Panel A's cell (lag 2,
# vocabulary / width 16) was fixed after a one-seed pilot of the bank at the cpu sizes, before any
# run of this notebook, and its contrast rule before the cpu run that decides it; panel B's rule
# was written before the cpu run that decides it, beside a pilot at n_layer 16 (both widths, every
# arm, three seeds, up to 6,000 steps) that fixed the criterion's budget and the stopping patience.

# %% tags=["parameters"]
# Tweak these in your copy, lab/06_boundary_map.py (`make lab`); a change here is the new default, to commit.
profile = "cpu"  # smoke | cpu | paper: sizes and seeds from paper_lib.profile_settings, section boundary_map
overrides = {}   # any setting of paper_lib.experiments.boundary_map.Settings, e.g. {"depths": [4, 8, 16, 32]}
#                  (gru_seeds, gru_vocab_sizes and the oracle's seeds and sizes must be among seeds and vocab_sizes)
# No n_threads: every job runs on one thread by design (`workers` of them at a time), so no result
# depends on a thread count; this process only gathers their rows.

# %%
from paper_lib.pipeline.params import check_parameters; check_parameters(globals())  # noqa: E702, I001
from paper_lib.pipeline.threads import JOB_THREADS, set_threads

set_threads(JOB_THREADS)  # one thread here too: every job trains or probes on one thread (`workers` at a time)
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from IPython.display import display
from tqdm.auto import tqdm

from paper_lib.claims.boundary import CLAIMS, DEPTH_ARMS
from paper_lib.claims.words import COLUMNS
from paper_lib.experiments import boundary_map as bm
from paper_lib.experiments import depth_runs as dr
from paper_lib.models.depth_probe import FIXED_ARMS, INPUT_DEPENDENT_ARMS
from paper_lib.pipeline.markdown import Markdown
from paper_lib.pipeline.plots import clipped_yerr, count, legend_below, stamp
from paper_lib.pipeline.provenance import Outputs
from paper_lib.pipeline.settings import as_dict
from paper_lib.pipeline.stats import format_mean_ci, mean_ci95
from paper_lib.pipeline.tables import use_table_style
from paper_lib.stopping import STOP_WORDS, learning_curves

LEARNED_WORDS = {"gru": "GRU (equal state)", "scan": "selective scan (equal state)",
                 "lti_scan": "time-invariant scan (equal state)"}

t_start = time.perf_counter()
use_table_style(COLUMNS)  # every table below: columns in words, one formatted number per cell, no index
settings = bm.settings_for(profile, overrides)
S = settings
out = Outputs("06_boundary_map", profile, as_dict(settings), S.seeds)
sns.set_theme(style="whitegrid")
display(Markdown(
    f"Panel A: width `d_model` = {S.d_model} per trace, `vocab_size` in {list(S.vocab_sizes)} (vocabulary / width "
    f"{S.vocab_sizes[0] / S.d_model:g} to {S.vocab_sizes[-1] / S.d_model:g}), {S.n_classes} classes, lags "
    f"{list(S.lags)}, banks {dict(S.banks)}, {len(S.seeds)} seeds (learned states {list(S.learned_states)}: "
    f"{len(S.gru_seeds)} seeds at vocabularies {list(S.gru_vocab_sizes)}, trained at lags "
    f"{list(bm.learned_lags(S))}, until flat by the one stopping rule (less than {S.gru_stop.tol:g} gained over "
    f"{S.gru_stop.patience} checks of {S.gru_stop.check_every} steps, never on the chance loss), at most "
    f"{S.gru_steps} steps; {S.workers} worker process{'es' if S.workers != 1 else ''}, one thread each). Panel B: "
    f"arms {list(S.arms)}, depths {list(S.depths)}, widths {list(S.widths)}, {S.n_states} states, {S.n_inputs} "
    f"fresh tokens, {S.depth_batch} examples a step until the stopping rule stops each seed: min(copy, state) >= "
    f"{S.depth_criterion:g} (solved), less than {S.depth_min_gain:g} gained over {S.depth_patience} evaluations "
    f"(flat), or {S.depth_steps} steps; carry gates' bias {S.gate_bias:g}; {len(S.seeds)} seeds."))

# %% [markdown]
# ## Panel A: decodability over lag and vocabulary / width
# The report row reads one cell fixed before the run (`boundary_map.RULE_LAG`, `RULE_RATIO`: lag 2,
# vocabulary / width 16) and decides it by a contrast: the oracle of the fixed traces against the
# better of the two learned states of equal size read by their own heads, per target. The traces
# *lose identity* if the oracle's identity is below the learned state's with 95% CIs apart; they
# *keep structure* if the oracle's class is not below the learned state's so. Its controls: the
# positive one, the GRU keeps identity at the smallest lag and vocabulary (linear probe,
# decodability >= 0.5), and every learned state the contrast reads trained until flat (the one
# stopping rule, `paper_lib.stopping`: a state cut at its step cap, still learning or never off the
# chance loss, makes the row "not attributable", `time_cut_<state>_improving`, `_plateau`); the
# negative one, the oracle reads no identity at the largest lag (`time_identity_oracle_far`, upper 95%
# CI at most 0.05), where the traces weigh the token least; and the oracle is an upper bound only where
# its identity and structure readers at the cell were not cut (`time_cut_oracle_improving`, `_plateau`).
# What panel A does not do yet: the learned states run at three vocabularies (their cells elsewhere
# are blank) and are trained at lags up to 8 (beyond, the map shows what such a state keeps
# untrained); the structural label is a token class, not a grammar role. The paper bank's identity decodability is *lower* at lag 1
# than at lag 2 at every vocabulary (0.05 vs 0.26 at vocabulary / width 1 in the cpu run of commit
# b1e1866, on all three seeds). A linear reader of the bank responds to a combination of the three
# exponentials $(1 - \alpha)^k$; to read lag 1 it must cancel lag 0, which the fast trace weights twice
# as much, while a difference of traces peaks later ($0.9^k - 0.5^k$ is largest at $k = 3$). The same
# dip appears with the library's probe on uniform tokens of 64 ids at width 64 and no classes
# (accuracy 1.00, 0.04, 0.32, 0.33, 0.28 at lags 0-4; measured once outside the notebook), so it is
# the bank's own, not the task's. The matched-filter closed form assumes a reader that knows the
# embeddings and is not a linear read-out of the traces.

# %%
with tqdm(total=len(bm.time_jobs(S)), desc="panel A: (state, vocabulary, seed)") as bar:
    time_map, learned_curves = bm.run_time_map(S, bar)
closed = pd.concat([bm.closed_form_map(S, b).assign(bank=b) for b in S.banks], ignore_index=True)
out.save_data(time_map, "time_map")
out.save_data(closed, "time_closed_form")
states = ([f"bank_{b}" for b in S.banks] + [k for k in S.learned_states if k != "lti_scan"]  # its heads: by lag
          + [f"oracle_{b}" for b in S.oracle_banks])
lags, ratios = list(S.lags), sorted(time_map.ratio.unique())
state_names = {**{f"bank_{b}": f"{b} bank (alpha {', '.join(f'{a:g}' for a in S.banks[b])}), linear probe"
                  for b in S.banks},
               **{f"oracle_{b}": f"{b} bank, oracle (MLP)" for b in S.oracle_banks},
               "gru": "GRU (equal state), linear probe", "scan": "selective scan (equal state), linear probe"}
fig, axes = plt.subplots(len(states), 2, figsize=(10, 2.4 * len(states)), sharex=True, sharey=True, squeeze=False)
for i, st in enumerate(states):
    for j, target in enumerate(("identity", "structure")):
        ax = axes[i, j]
        grid = (time_map[(time_map.state == st) & (time_map.target == target)]
                .pivot_table(index="ratio", columns="lag", values="decodability").reindex(index=ratios, columns=lags))
        im = ax.imshow(grid.values, origin="lower", aspect="auto", vmin=0, vmax=1, cmap="viridis")
        ax.grid(False)
        bank = st.split("_", 1)[-1]
        if st.startswith(("bank_", "oracle_")) and target == "identity" and len(ratios) > 1 and len(lags) > 1:
            cf = (closed[closed.bank == bank].pivot(index="ratio", columns="lag", values="decodability")
                  .reindex(index=ratios, columns=lags))
            ax.contour(np.arange(len(lags)), np.arange(len(ratios)), cf.values, levels=[0.1, 0.5],
                       colors="white", linestyles=["--", "-"], linewidths=1.5)
        ax.set_title(f"{state_names.get(st, st)}\n{target}", fontsize=10)
        ax.set_xticks(range(len(lags)), [str(k) for k in lags], fontsize=10)
        ax.set_yticks(range(len(ratios)), [f"{r:g}" for r in ratios], fontsize=10)
        if i == len(states) - 1:
            ax.set_xlabel("lag k (tokens)")
        if j == 0:
            ax.set_ylabel("vocabulary / width")
fig.subplots_adjust(top=0.93, bottom=0.06, hspace=0.45)         # two-line titles between the rows
fig.colorbar(im, ax=axes, shrink=0.6, label="decodability (0 chance, 1 perfect)")
fig.suptitle("What each state keeps of the token k steps back, by vocabulary size per width")
stamp(fig, profile, len(S.seeds), None, note=f"mean over seeds; GRU, scan {count(len(S.gru_seeds), 'seed')}; oracle "
      f"{count(len(bm.oracle_map_seeds(S)), 'seed')} off the rule's cell;\nblank cell: not run; white lines: each "
      "bank's closed-form decodability 0.1 (dashed) and 0.5 (solid)")
out.save_figure(fig, "time_map", title="The time map: identity and structure decodability by lag and vocabulary",
                alt=f"Heatmaps of decodability (0 chance, 1 perfect) of the identity (left) and the structure "
                    f"(right) of the token k steps back, lag on the x axis and vocabulary size per width on the y "
                    f"axis, one row per state ({'; '.join(state_names.get(st, st) for st in states)}), with each bank's closed-form 0.1 and 0.5 contours "
                    "in white on its identity panels (linear probe and oracle).")
plt.show()
# %% [markdown]
# **Where each state stops keeping each target.** For every state, target and lag, the largest
# vocabulary / width at which the decodability (mean over seeds) is still at least 0.5, and at
# least 0.1 (blank: no measured ratio reaches it; the oracle's grid ends at the rule's ratio). The
# map's question, "do fixed traces keep structure where they lose identity?", reads off the oracle
# rows: a structure boundary to the right of the identity boundary at the same lag says yes.

# %%
boundary = bm.boundary_ratios(time_map[time_map.lag.isin([1, bm.RULE_LAG, 4, 8])])
out.save_table(boundary, "time_boundary")
display(boundary.pivot_table(index=["state", "lag"], columns="target", values=["ratio_at_0.5", "ratio_at_0.1"]))
ob = boundary[boundary.state.str.startswith("oracle_") & (boundary.lag == bm.RULE_LAG)].set_index(["state", "target"])


def _upto(st, target, col="ratio_at_0.1"):
    v = ob[col].get((st, target), np.nan)
    return "no ratio" if np.isnan(v) else f"{v:g}"


display(Markdown(f"At lag {bm.RULE_LAG}, decodability >= 0.1 up to vocabulary / width: " + "; ".join(
    f"`{st}` identity {_upto(st, 'identity')}, structure {_upto(st, 'structure')}"
    for st in sorted(set(ob.index.get_level_values(0)))) + "." if len(ob) else "No oracle ran."))

# %% [markdown]
# ## Panel A at the rule's vocabulary: the linear probe, the oracle and the learned states over lag
# The same bank read two ways (the linear probe, and the oracle: the best reader we fit on the
# fixed traces alone, `paper_lib.bounds.oracle.fit_lag_oracle`, an MLP per lag trained on fresh
# sequences with Adam until flat on a held-out split), beside the GRU and the selective
# scan of equal state, each read by the linear probe and by its own trained heads (a linear read-out
# trained with the state: the learned state's reading the contrast uses, weaker than the oracle's MLP,
# so the contrast does not favour the learned state).
# What the oracle reads, the traces hold; what it misses may be its own limit (its capacity is
# in the settings: `oracle.layers` hidden layers of `oracle.hidden` units).
#
# **Is the oracle converged?** Each reader of the oracle trains until the one stopping rule stops it:
# at least `oracle.min_steps` steps, then flat once its validation accuracy gains less than
# `oracle.tol` over `oracle.patience` checks (40 held-out sequences, standard error below the
# tolerance), never while its loss is on the chance loss (the entropy of its labels), at most
# `oracle.max_steps`. Why each reader at the rule's cell stopped is in `time_map.csv` (`stop`); the
# row reads it (`time_cut_oracle_*`), so a reader cut at its cap, whose reading is a lower bound,
# cannot pass for "the traces lost identity".

# %%
V_rule = bm.rule_vocab_size(S)
at_rule = time_map[time_map.vocab_size == V_rule]
curve_states = [st for st in ("bank_paper", "oracle_paper", "oracle_slow", "gru", "scan", "gru_heads", "scan_heads",
                              "lti_scan_heads") if st in set(at_rule.state)]
names = {"bank_paper": "paper bank, linear probe", "oracle_paper": "paper bank, oracle (MLP)",
         "oracle_slow": "slow bank, oracle (MLP)", "gru": "GRU (equal state), linear probe",
         "scan": "selective scan (equal state), linear probe", "gru_heads": "GRU, its own heads",
         "scan_heads": "selective scan, its own heads", "lti_scan_heads": "time-invariant scan, its own heads"}
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for ax, target in zip(axes, ("identity", "structure"), strict=True):
    for st in curve_states:
        g = at_rule[(at_rule.state == st) & (at_rule.target == target)].groupby("lag").decodability
        mean, ci = g.mean(), g.apply(lambda v: mean_ci95(v)["ci95"]).fillna(0)
        ax.errorbar(mean.index, mean.values, yerr=clipped_yerr(mean.values, ci.values, -1, 1), fmt="o-", ms=3, capsize=2,
                    label=names[st])
    ax.axhline(0, color="0.5", lw=1)
    ax.axvline(bm.RULE_LAG, color="0.7", lw=1, ls=":")
    ax.set(xscale="log", xlabel="lag k (tokens)", ylim=(-0.05, 1.02),
           title=f"{target}, vocabulary {V_rule} (vocabulary / width {V_rule / S.d_model:g})")
axes[0].set_ylabel("decodability (0 chance, 1 perfect)")
fig.suptitle(f"Identity and structure of the token k steps back, vocabulary {V_rule}")
legend_below(fig, axes[1], ncol=4)
stamp(fig, profile, len(S.seeds), "95% CI over seeds", note=f"dotted: the rule's lag {bm.RULE_LAG}")
out.save_figure(fig, "time_by_lag", title="Identity and structure by lag: linear probe, oracle and learned states",
                alt=f"Two panels, identity (left) and structure (right) of the token k steps back at vocabulary "
                    f"{V_rule}: decodability (0 chance, 1 perfect) against lag on a log axis for the paper bank read "
                    "by a linear probe and by the oracle, and the GRU and the selective scan of equal state read by "
                    "the linear probe and by their own heads, with 95% CIs.")
plt.show()
table_a = (time_map[time_map.lag.isin([min(lags), bm.RULE_LAG, max(lags)])]
           .groupby(["state", "target", "ratio", "lag"]).decodability.mean().unstack("lag").round(3).reset_index())
out.save_table(table_a, "time_map_summary")
display(table_a)
out.save_data(learned_curves, "time_learning_curves")
runs = time_map[time_map.state.isin(S.learned_states)].drop_duplicates(["state", "vocab_size", "seed"])
display(Markdown(f"**Were the learned states trained until flat?** Why each run stopped, and when (at most "
                 f"{S.gru_steps} steps):"))
display(runs.assign(state=runs.state.map(LEARNED_WORDS), why=[f"{STOP_WORDS[w]} at {n:,}" for w, n in zip(
    runs.stop, runs.steps, strict=True)]).pivot(index=["state", "vocab_size"], columns="seed", values="why")
        .rename(columns=lambda c: f"seed {c}").reset_index())
lc = learned_curves[learned_curves.vocab_size == V_rule].rename(columns={"state": "arm"})
reasons = {(r.state, r.seed): f"{STOP_WORDS[r.stop]} at {r.steps:,}"
           for r in runs[runs.vocab_size == V_rule].itertuples()}
fig = learning_curves(lc, [k for k in S.learned_states if k in set(lc.arm)], LEARNED_WORDS, reasons,
                      {"chance (uniform guesses)": float(np.log(V_rule) + np.log(S.n_classes)) / 2},
                      {"gru": "tab:green", "scan": "tab:blue", "lti_scan": "tab:cyan"})
fig.suptitle(f"Panel A's learned states at vocabulary {V_rule}: training curves and why each run stopped", fontsize=10)
fig.tight_layout()
stamp(fig, profile, len(S.gru_seeds), None, note="held-out: mean accuracy of the heads at lags up to the rule's")
out.save_figure(fig, "time_learning_curves", title="Panel A's learned states: learning curves and stop reasons",
                alt=f"Training loss with the chance line (left) and held-out head accuracy (right) against the step "
                    f"for the GRU and the selective scan at vocabulary {V_rule}, one line per seed labelled with why "
                    "its run stopped.")
plt.show()

# %% [markdown]
# ## Panel B: the residual stream across depth
# Every (arm, depth, width) is trained at every seed (independent copies, the same batches for
# every arm) until the one stopping rule stops each seed: it reaches the criterion (solved), its
# min(copy, state) accuracy gains less than `depth_min_gain` over `depth_patience` evaluations (flat),
# or `depth_steps` (its cap: still improving, or never off the chance loss). The accuracies are those
# at the evaluation where each seed stopped.
#
# The report row reads the deepest depth at both widths. Its controls: the positive one, some arm
# keeps both the copy and the state at the shallowest depth (the task is learnable at this budget),
# and the plain residual keeps the copy of `x0` at the deepest (what carries the stream carries
# it); the negative one, the fixed decay 0.5 must lose `x0` at the deepest depth (`0.5^16` of it is
# left), or the copy head reads something other than what the stream carried. Its question, for the
# arms that learn: how many steps each needs, and whether the fastest is input-dependent (`highway`
# against `static`, the same rule with one gate for every input, and against `dwa`).

# %%
with tqdm(total=len(S.widths) * len(S.depths) * len(S.arms), desc="panel B: (arm, depth, width)") as bar:
    curves = dr.run_depth_map(S, bar)
out.save_data(curves, "depth_curves")
final = dr.depth_final(curves, S)
out.save_data(final, "depth_final")
palette = dict(zip(S.arms, sns.color_palette("tab10", len(S.arms)), strict=True))
fixed_style = {a: "--" if a in FIXED_ARMS else "-" for a in S.arms}
fig, axes = plt.subplots(4, len(S.widths), figsize=(min(4.2 * len(S.widths) + 1.5, 10.5), 11.5), sharey="row",
                         squeeze=False)
for j, d in enumerate(S.widths):
    for i, (col, name) in enumerate((("copy_acc", "copy of the first input (top)"), ("state_acc", "state at the top"),
                                     ("both_acc", "min(copy, state)"), ("steps_to_criterion", "steps to criterion"))):
        ax = axes[i, j]
        for arm in S.arms:
            g = final[(final.arm == arm) & (final.d_model == d)].groupby("n_layer")[col]
            mean, ci = g.mean(), g.apply(lambda v: mean_ci95(v)["ci95"]).fillna(0)
            yerr = clipped_yerr(mean.values, ci.values, 0, S.depth_steps if i == 3 else 1)
            ax.errorbar(mean.index, mean.values, yerr=yerr, fmt="o", ms=3, capsize=2,
                        color=palette[arm], label=DEPTH_ARMS[arm], ls=fixed_style[arm])
        if i < 3:
            ax.axhline(1 / S.n_states, color="0.5", lw=1)
            ax.set(ylim=(0, 1.02), ylabel="held-out accuracy" if j == 0 else None)
        else:
            ax.axhline(S.depth_steps, color="0.5", lw=1, ls=":")
            ax.set(ylim=(0, S.depth_steps * 1.05), ylabel="training steps" if j == 0 else None)
        ax.set(xscale="log", xticks=list(S.depths), title=f"{name}, width {d}", xlabel="layers" if i == 3 else None)
        ax.set_xticklabels([str(L) for L in S.depths])
        ax.minorticks_off()
fig.suptitle("What the top of a deep residual stream keeps, and how fast each rule learns it")
stamp(fig, profile, len(S.seeds), "95% CI over seeds",
      note=f"grey: chance 1/{S.n_states};\ndotted: the {S.depth_steps}-step budget (not reached)")
legend_below(fig, axes[0, -1], ncol=4, title="residual rule (dashed: fixed)")
out.save_figure(fig, "depth_map", title="The depth map: copy and state accuracy at the top, and steps to the criterion",
                alt=f"Against depth (n_layer {', '.join(map(str, S.depths))}) for each residual rule, one column per "
                    f"width (d_model {', '.join(map(str, S.widths))}): held-out accuracy at the top layer after early "
                    "stopping for the copy of the first input, the state and the smaller of the two (chance as a grey "
                    f"line), and the training steps to reach both at {S.depth_criterion:g} (the budget of "
                    f"{S.depth_steps} steps dotted: not reached), with 95% CIs over seeds.")
plt.show()

# %% [markdown]
# ## Learning curves (is a failure slow optimisation?)
# Held-out accuracy against steps at every depth and width (one row each); mean over seeds, the
# band the range over seeds. A curve ends where its run stopped: at the criterion, on a plateau, or
# at the budget. A run short of the criterion whose curve still rises at its last step is slow
# optimisation, a flat one a plateau of this budget.

# %%
cases = [(L, d) for d in S.widths for L in S.depths]
fig, axes = plt.subplots(len(cases), 2, figsize=(10, 2.3 * len(cases) + 0.8), sharey=True, sharex=True, squeeze=False)
for r, (L, d) in enumerate(cases):
    here = curves[(curves.n_layer == L) & (curves.d_model == d)]
    for ax, col, name in ((axes[r, 0], "copy_acc", "copy of the first input"),
                          (axes[r, 1], "state_acc", "state at the top")):
        for arm in S.arms:
            g = here[here.arm == arm].groupby("step")[col]
            ax.plot(g.mean().index, g.mean().values, color=palette[arm], label=DEPTH_ARMS[arm], ls=fixed_style[arm])
            ax.fill_between(g.min().index, g.min().values, g.max().values, color=palette[arm], alpha=0.12, lw=0)
        ax.axhline(1 / S.n_states, color="0.5", lw=1)
        ax.set(ylim=(0, 1.02), title=f"{name}, {L} layers, width {d}",
               xlabel="training step" if r == len(cases) - 1 else None,
               ylabel="held-out accuracy" if col == "copy_acc" else None)
fig.suptitle("Learning curves at every depth and width: is a failure slow optimisation?")
stamp(fig, profile, len(S.seeds), None, note=f"mean over seeds, band: range over seeds; grey: chance 1/{S.n_states}")
legend_below(fig, axes[-1, 1], ncol=4, title="residual rule (dashed: fixed)")
out.save_figure(fig, "depth_learning_curves", title="Learning curves at every depth and width",
                alt=f"Held-out accuracy against training step (up to {S.depth_steps}), one row per depth and width "
                    f"(n_layer {', '.join(map(str, S.depths))}; d_model {', '.join(map(str, S.widths))}), for each "
                    "residual rule: the copy of the first input (left) and the state at the top (right), mean over seeds "
                    "with the range over seeds as a band, chance as a grey line; each curve ends where its run stopped.")
plt.show()
table_b = (final.groupby(["d_model", "arm", "n_layer"])[["copy_acc", "state_acc", "both_acc"]]
           .agg(lambda v: format_mean_ci(v, 2))
           .join(final.groupby(["d_model", "arm", "n_layer"]).steps_to_criterion.agg(lambda v: format_mean_ci(v, 0)))
           .join(final.groupby(["d_model", "arm", "n_layer"]).stopped_at.max()).reset_index())
out.save_table(table_b, "depth_table")
display(table_b)
short = final[final.stop != "solved"]
display(Markdown("Seeds that did not reach the criterion, and why each stopped (flat: it had stopped gaining; "
                 "cut at its cap: still learning, or never off the chance loss, 2 ln 16 nats):\n\n"
                 + (short.assign(why=[f"{STOP_WORDS[w]} at {n:,}" for w, n in zip(short.stop, short.stopped_at,
                                                                                  strict=True)])
                    .pivot(index=["d_model", "arm", "n_layer"], columns="seed", values="why")
                    .rename(columns=lambda c: f"seed {c}").to_markdown() if len(short) else "none")))

# %% [markdown]
# ## Metrics and verdicts

# %%
metrics = {**bm.time_metrics(time_map, S), **dr.depth_metrics(curves, S)}
path = out.write_metrics({k: [float(v) for v in vals] for k, vals in metrics.items()})
display(Markdown(
    f"Wrote `{path.relative_to(out.root)}` ({len(metrics)} metrics). The notebook took "
    f"{time.perf_counter() - t_start:.0f} s.\n\n"
    + CLAIMS.markdown("time_map", metrics, profile) + "\n\n" + CLAIMS.markdown("depth_map", metrics, profile)))
# Which rule learns the deep chain fastest at each width, and is it input-dependent? highway and static are the same
# rule with and without input-dependence; dwa learns its mix of earlier layers once, the same for every input.
L = max(S.depths)
lines = []
for d in S.widths:
    w = "" if d == S.widths[-1] else f"_d{d}"
    steps = {a: mean_ci95(metrics[f"depth_steps_to_criterion_{a}_{L}{w}"]) for a in S.arms
             if f"depth_steps_to_criterion_{a}_{L}{w}" in metrics}
    if not steps:
        continue
    order = sorted(steps, key=lambda a: steps[a]["mean"])
    best = order[0]
    lines.append(f"- d_model {d}: " + ", ".join(
        f"`{a}` {steps[a]['mean']:.0f}" + (" (not reached)" if steps[a]["mean"] >= S.depth_steps else "")
        for a in order) + f". The fastest, `{best}`, is "
        + ("input-dependent" if best in INPUT_DEPENDENT_ARMS else "the same for every input") + ".")
if lines:
    display(Markdown(f"**Steps to the criterion at n_layer {L}** (mean over seeds; {S.depth_steps} = not reached within "
                     "the budget):\n\n" + "\n".join(lines)))
# The time row's contrast in numbers: the oracle of the fixed traces against the learned states' own heads.
if all(f"time_{t}_{k}" in metrics for t in ("identity", "structure") for k in ("oracle", "gru_heads")):
    display(Markdown(
        f"**The time row's contrast** (lag {bm.RULE_LAG}, vocabulary {V_rule}): identity, oracle of the fixed traces "
        f"{format_mean_ci(metrics['time_identity_oracle'])}, GRU's heads {format_mean_ci(metrics['time_identity_gru_heads'])}"
        + (f", scan's heads {format_mean_ci(metrics['time_identity_scan_heads'])}" if "time_identity_scan_heads" in metrics
           else "") + f"; structure, oracle {format_mean_ci(metrics['time_structure_oracle'])}, GRU's heads "
        f"{format_mean_ci(metrics['time_structure_gru_heads'])}"
        + (f", scan's heads {format_mean_ci(metrics['time_structure_scan_heads'])}" if "time_structure_scan_heads" in metrics
           else "") + "."))
