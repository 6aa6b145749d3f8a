# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · Experiment 1a: a Hebbian network reads grammatical roles from EMA traces, and where the accuracy comes from
#
# **The paper's claim** (Singh, "EMA Is Not All You Need", arXiv:2604.08556, Experiment 1):
# SPCN, a Sparse Predictive Column Network built from fixed random projections, sparse
# top-k activations and multi-timescale EMA traces, learned by a local Hebbian rule (PGHU,
# the precision-gated Hebbian update) with **zero role labels**, assigns one of 20
# grammatical roles to the tokens of held-out sentences of a synthetic grammar with
# accuracy **0.960**, which is **96 %** of a supervised bidirectional GRU tagger.
#
# **What is ours.** The paper does not give its grammar, its 20 roles, SPCN's wiring and
# sizes, PGHU's exact form or the readout; all are ours (`paper_lib.data.grammar`,
# `paper_lib.models.spcn`, `paper_lib.hebbian`, `paper_lib.probes`, `paper_lib.models.gru`):
# Grammar A (animals) with relative clauses nested to depth 3 and 20 roles, 13 *structural*
# and 7 *lexical*; SPCN with hash-seeded random word codes, two levels of 8 columns x 16 units
# (2 winners per column), EMA traces at 0.5, 0.1, 0.02, and predictive weights learned by PGHU;
# a linear probe on the frozen features (the features use no label, the probe does) and a
# label-free k-means readout. The traces are **causal**; the BiGRU reads both directions.
#
# **Where does the accuracy come from?** In the paper-style SPCN the probe reads
# `[h, P h]`: what learning adds is a linear function of traces the probe already has, so a
# linear probe cannot see it. We therefore measure three sources separately
# (`paper_lib.models.spcn_variants`):
# 1. the **floor**: the probe on level 1's EMA traces of the fixed random word codes (nothing learned);
# 2. **learning that reaches the probe**: an *error-driven* SPCN whose level 2 reads level 1's
#    precision-weighted prediction errors through a k-winners-take-all, so what the rule learns
#    changes *which* level-2 units fire (a nonlinear change), with PGHU, Oja's Hebbian rule or no learning;
# 3. the **label-free ceiling**: the same wiring trained by backpropagation on the same
#    next-activity objective.
#
# On A the floor already does the job, so the learning row is decided where the fixed
# code cannot: Grammar B's unseen content words, with learning that reaches the word codes
# (a Hebbian context rule and its backprop ceiling, from unlabelled A and B sentences); A's
# numbers stay as shown numbers.

# %% tags=["parameters"]
# Tweak these in your copy, lab/01_grammar_probe.py (`make lab`); a change here is the new default, to commit.
profile = "cpu"    # smoke | cpu | paper: the sizes and seeds of paper_lib.profile_settings
overrides = {}    # any setting of the notebook's Settings, e.g. {"seeds": [0], "spcn": {"alphas": [0.5, 0.05]}, "grammar": "hard"}
#                   (seeds distinct integers; fresh_seeds share none with seeds; every rate alpha in (0, 1])
n_threads = None   # CPU threads of this process for torch, BLAS and scikit-learn (None: the profile's, 1 at smoke, 2 at cpu and paper); its training jobs run on one thread each

# %%
from paper_lib.pipeline.params import check_parameters; check_parameters(globals())  # noqa: E702, I001
from paper_lib.pipeline.threads import set_threads

n_threads = set_threads(n_threads, profile)
import os
import time

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
import torch
from IPython.display import display

from paper_lib.claims.grammar import CLAIMS
from paper_lib.claims.words import COLUMNS
from paper_lib.data.grammar import ROLE_KIND, ROLES, make_split, role_inventory
from paper_lib.data.roles import DEPENDENCY_BINS
from paper_lib.experiments.grammar_probe import (
    CODE_READOUTS,
    READOUTS,
    RULE_WORDS,
    fresh_seed,
    grammar_config,
    group_table,
    paired_gain,
    paired_words,
    readout_name,
    run_seed,
    settings_for,
    summary_table,
)
from paper_lib.pipeline.markdown import Markdown
from paper_lib.pipeline.parallel import call, parallel_map
from paper_lib.pipeline.plots import legend_below, legend_outside, mark_paper, stamp
from paper_lib.pipeline.provenance import Outputs
from paper_lib.pipeline.settings import as_dict, settings_table
from paper_lib.pipeline.stats import format_mean_ci, mean_ci95
from paper_lib.pipeline.tables import use_table_style

use_table_style(COLUMNS)  # every table below: columns in words, one formatted number per cell, no index
sns.set_theme(style="whitegrid")  # one figure style for every notebook
settings = settings_for(profile, overrides)
out = Outputs("01_grammar_probe", profile, as_dict(settings), settings.seeds)
n_seeds = len(settings.seeds)
t_start = time.perf_counter()
display(settings_table(settings))

# %% [markdown]
# ## The 20 roles
#
# `share` is the role's share of the first seed's training tokens, `mean_depth` the mean
# embedding depth of its tokens (0 = main clause).

# %%
train0, test0 = make_split("A", settings.data.n_train, settings.data.n_test, settings.seeds[0], grammar_config(settings))
inventory = role_inventory(train0)
out.save_table(inventory, "role_inventory")
tok0 = train0.to_frame()
display(inventory)
display(Markdown(
    f"Grammar variant `{settings.grammar}`: {len(train0)} training and {len(test0)} test sentences per seed, "
    f"{train0.n_tokens / len(train0):.1f} tokens per sentence; {(tok0.depth >= 2).mean():.1%} of the tokens sit "
    f"at depth 2 or more; lexical roles cover {(tok0.kind == 'lexical').mean():.1%} of the tokens, and "
    f"{(tok0.dep_distance > 0).mean():.1%} of the tokens have a role fixed by a *later* word."))

# %% [markdown]
# ## Experiment 1a over seeds
#
# Per seed: a fresh split; the paper-style SPCN per learning rule; its readouts; the floor;
# the error-driven SPCN per rule; the backprop ceiling; the BiGRU trained with labels.

# %%
jobs = [(run_seed, settings, seed) for seed in settings.seeds] + [(fresh_seed, settings, seed) for seed in settings.fresh_seeds]
done = parallel_map(call, jobs, workers=settings.workers, desc="seeds", cost=lambda job: job[0] is run_seed)
results = dict(zip(settings.seeds, done[:n_seeds], strict=True))
fresh = dict(zip(settings.fresh_seeds, done[n_seeds:], strict=True))  # the learned-codes comparison alone
per_seed = pd.DataFrame([{"seed": s, **r["acc"], **{f"test_mse_{k}": v for k, v in r["test_mse"].items()}}
                         for s, r in results.items()])
per_seed["spcn_over_bigru"] = per_seed["spcn_probe"] / per_seed["bigru"]
tokens = pd.concat([r["tokens"] for r in results.values()], ignore_index=True)
out.save_data(per_seed, "per_seed")
display(per_seed.rename(columns=lambda c: readout_name(c) if c.startswith("spcn") or c == "bigru" else c).round(3))

# %% [markdown]
# ## Table 1: held-out Grammar A role accuracy (the paper's comparison)
#
# The paper's BiGRU accuracy is not reported; 1.000 is what 0.960 being 96 % of it implies.

# %%
table1 = summary_table(per_seed, [*READOUTS, "spcn_over_bigru"],
                       paper={"spcn_probe": 0.960, "bigru": 1.0, "spcn_over_bigru": 0.96})
out.save_table(table1.drop(columns="key"), "table1")
display(table1.drop(columns="key"))
acc = {k: mean_ci95(per_seed[k]) for k in per_seed.columns if k != "seed"}
display(Markdown(
    f"**Within Grammar A, SPCN's probe reads {format_mean_ci(acc['spcn_probe'])} of the roles right** (paper: 0.960), "
    f"the supervised BiGRU {format_mean_ci(acc['bigru'])}: SPCN reaches {format_mean_ci(acc['spcn_over_bigru'])} "
    f"of the BiGRU (paper: 0.96). Label-free, clusters named by their majority role read "
    f"{format_mean_ci(acc['spcn_labelfree'])}, a one-to-one matching of 20 clusters {format_mean_ci(acc['spcn_hungarian'])}."))

# %% [markdown]
# ## Where the accuracy comes from: the fixed code and the traces, learning, and the ceiling
#
# Every row is a linear probe on frozen, label-free features. *Level 2 only* isolates what
# the rule learned: with no learning, level 2 of the error-driven SPCN is again a fixed
# function of the current word.

# %%
rules = list(settings.rules)
keys = (["spcn_level1_floor", "spcn_probe", "spcn_untrained", f"spcn_err_{settings.spcn.rule}", "spcn_backprop"]
        + [f"spcn_err_{r}_level2" for r in rules] + ["spcn_backprop_level2", "bigru"])
sources = summary_table(per_seed, keys)
out.save_table(sources.drop(columns="key"), "accuracy_sources")
display(sources.drop(columns="key"))


def paired(a, b):
    """Paired per-seed difference a - b in words."""
    return paired_words(per_seed[a], per_seed[b])


# Two panels: the whole range, and the top of it, where most readouts differ by a few points.
fig, axes = plt.subplots(1, 2, figsize=(10, 5.5), sharey=True, gridspec_kw={"width_ratios": [1, 1.6]})
long = per_seed.melt(id_vars="seed", value_vars=keys, var_name="key", value_name="accuracy")
long["readout"] = long.key.map(readout_name)
for ax, (lo, hi), title in zip(axes, [(0, 1.02), (0.88, 1.0)], ["the whole range", "zoomed to 0.88-1"], strict=True):
    sns.pointplot(data=long, y="readout", x="accuracy", order=[readout_name(k) for k in keys], errorbar=("ci", 95),
                  n_boot=200, seed=0, ax=ax, color="tab:blue", linestyle="none", markersize=5)
    mark_paper(ax, 0.960, "paper: SPCN 0.960", axis="x")
    ax.set_xlim(lo, hi)
    ax.set(xlabel="", ylabel="", title=title)
axes[0].set_xticks([0, 0.25, 0.5, 0.75])  # none at the panels' shared edge, where 1.0 would meet 0.88
fig.supxlabel("held-out role accuracy (fraction of tokens)")
fig.suptitle("Where SPCN's role accuracy comes from (Grammar A, linear probes)")
stamp(fig, profile, n_seeds, errorbars="95% CI over seeds")
fig.tight_layout()
out.save_figure(fig, "accuracy_sources", title="Where SPCN's role accuracy comes from",
                alt="Points with 95% CIs over seeds of held-out role accuracy on Grammar A for linear probes on the "
                    "fixed word codes and traces, SPCN with and without learning, its backpropagation ceiling, level 2 "
                    "alone and the BiGRU, over the whole range and zoomed to 0.88-1, with the paper's 0.960 as a "
                    "dashed line.")
plt.show()
main = settings.spcn.rule
learned = [(f"spcn_err_{main}", "spcn_level1_floor"), ("spcn_backprop", "spcn_level1_floor")] + [
    (f"spcn_err_{r}_level2", "spcn_err_none_level2") for r in rules if r != "none"]
any_gain = any(paired_gain(per_seed[a], per_seed[b]) for a, b in learned)  # the rule: claims.grammar.paired_difference
display(Markdown(
    f"**Floor (no learning):** the probe on level 1's traces of the random word codes reads "
    f"{format_mean_ci(acc['spcn_level1_floor'])}. The paper-style SPCN ({main}) reads {format_mean_ci(acc['spcn_probe'])}: "
    f"{paired('spcn_probe', 'spcn_level1_floor')} against the floor (paired over seeds).\n\n"
    f"**Learning that reaches the probe:** the error-driven SPCN with {main} reads {format_mean_ci(acc[f'spcn_err_{main}'])} "
    f"with level 1's traces ({paired(f'spcn_err_{main}', 'spcn_level1_floor')} against the floor); its level 2 alone "
    f"{format_mean_ci(acc[f'spcn_err_{main}_level2'])}, against {format_mean_ci(acc['spcn_err_none_level2'])} for level 2 "
    f"with no learning ({paired(f'spcn_err_{main}_level2', 'spcn_err_none_level2')}).\n\n"
    f"**Ceiling:** trained by backpropagation on the same label-free objective, the same wiring reads "
    f"{format_mean_ci(acc['spcn_backprop'])} ({paired('spcn_backprop', 'spcn_level1_floor')} against the floor).\n\n"
    + ("**So:** in our SPCN the role accuracy on A comes from the fixed word codes and their EMA traces; no label-free "
       "learning we tried here, local or by gradient, adds role information beyond them (no gain outside the CI; the "
       "next section asks where the fixed code cannot do the job). "
       if not any_gain else
       "**So:** some label-free learning adds accuracy beyond the fixed code and traces (see the gains above). ")
    + "What no variant reaches is mostly the roles a *later* word fixes (dependency table below)."
    if "none" in rules else "Add \"none\" to `rules` to compare with no learning."))

# %% [markdown]
# ## Learning where the fixed code cannot do the job: Grammar B's unseen content words
#
# On A the floor already reads the roles, so no learner can show anything there. On Grammar B
# (notebook 02) a content word the probe never saw gets a fresh random code, and SPCN reads
# B's content words at about the chance of guessing from context alone. Here learning reaches
# the word codes themselves (`paper_lib.models.learned_codes`; our design, the paper is silent):
# a **Hebbian** update moves each word's code toward its context trace (the codes of its
# neighbours, before and after), from *unlabelled* sentences, A's training sentences and
# other B sentences (transductive on B's vocabulary, zero labels); the **ceiling** trains the
# same codes by backpropagation on a label-free **fill-in (cloze)** loss on the same sentences (each
# word predicted from the traces of the words before and after it, the context the Hebbian rule
# reads, through learned maps and an output table of its own; its Adam step size chosen per seed by
# the same loss on held-out unlabelled B sentences). The fill-in loss reads both sides because the
# Hebbian rule does; an output table of its own keeps each word's code apart (a code that must also
# be predicted collapses toward its neighbours').
# An **oracle**
# gives each B word the fixed code of the A word of its category (what the readout can do with
# codes that carry the category). The SPCN (PGHU) and the probe are the same as above, trained
# on A's labels; scored on B's content-word tokens, as notebook 02's `spcn_content_acc_B`.
#
# **Fresh seeds.** The Hebbian rule's settings (`paper_lib.models.learned_codes.CodeLearningConfig`)
# were chosen on seed 0's scores, so seeds 0-4 are not a clean test of them. The row is decided on
# five seeds none of that choice saw (`fresh_seeds`, 5-9 at cpu), with every setting fixed before
# they ran; seeds 0-4 are shown beside them. Strongest controls: the backprop ceiling must beat the
# fixed codes (positive: there is room to learn), the fixed codes are the negative the Hebbian codes
# must beat, and the category codes are the oracle of what the readout does with category-carrying codes.

# %%
first = {s: r["codes_B"] for s, r in results.items()}
groups = ((f"seeds {min(settings.seeds)}-{max(settings.seeds)} (settings chosen on seed 0)", first),
          ("fresh seeds (the rule's)", fresh))
codes_seed = pd.concat([pd.DataFrame([{"seed": s, "seeds": g, **r["acc"]} for s, r in runs.items()])
                        for g, runs in groups if runs], ignore_index=True)
out.save_data(codes_seed, "learned_codes_B_per_seed")  # per seed; the summary table below is learned_codes_B
is_fresh = codes_seed.seed.isin(settings.fresh_seeds)
codes_table = pd.concat([summary_table(codes_seed[f], list(CODE_READOUTS)).assign(seeds=g)
                         for g, f in (("first", ~is_fresh), ("fresh", is_fresh)) if f.any()], ignore_index=True)
codes_table["all B tokens"] = [format_mean_ci(mean_ci95([r["acc_all"][k] for r in runs.values()]))
                               for _, runs in groups if runs for k in CODE_READOUTS]
out.save_table(codes_table.drop(columns="key"), "learned_codes_B")
display(codes_table.drop(columns="key"))
CODE_METRICS = {"spcn_floor_content_acc_B": "codes_floor", "spcn_learned_content_acc_B": "codes_hebbian",
                "backprop_content_acc_B": "codes_backprop", "spcn_category_codes_content_acc_B": "codes_category"}
codes_metrics = {m: codes_seed.loc[~is_fresh, k].tolist() for m, k in CODE_METRICS.items()}
codes_metrics |= {f"{m}_fresh": codes_seed.loc[is_fresh, k].tolist() for m, k in CODE_METRICS.items()}
codes_metrics["backprop_codes_lr_B"] = [r["codes_B"]["bp_lr"] for r in results.values()]
codes_metrics["backprop_codes_lr_B_fresh"] = [r["bp_lr"] for r in fresh.values()]
codes_verdict = CLAIMS.verdict("learning", codes_metrics, profile)
fig, ax = plt.subplots(figsize=(9, 4.6))
long = codes_seed.melt(id_vars=["seed", "seeds"], value_vars=list(CODE_READOUTS), var_name="key", value_name="accuracy")
long["codes"] = long.key.map(readout_name)
sns.barplot(data=long, y="codes", x="accuracy", hue="seeds", order=[readout_name(k) for k in CODE_READOUTS],
            errorbar=("ci", 95), n_boot=200, seed=0, ax=ax, palette=["tab:gray", "tab:green"])
ax.axvline(codes_seed.loc[is_fresh, "codes_floor"].mean(), color="k", ls=":", lw=1,
           label="no-learning floor, fresh seeds (mean)")
ax.set_xlim(0, 1.02)
ax.set_xlabel("role accuracy on Grammar B's content-word tokens (fraction)")
ax.set_ylabel("")
ax.set_title("Learned word codes on Grammar B's unseen content words (probe trained on A)")
stamp(fig, profile, len(settings.fresh_seeds), errorbars="95% CI over seeds")
legend_below(fig, ax, ncol=3)
out.save_figure(fig, "learned_codes_B", title="Learned word codes on Grammar B's unseen content words",
                alt="Horizontal bars of role accuracy on Grammar B's content-word tokens for SPCN read by a probe trained "
                    "on A, with the fixed word codes (the floor, also a dotted line), codes learned by the Hebbian "
                    "context rule, codes learned by backprop (the ceiling) and B words given the A codes of their "
                    "category (oracle), grey for the first seeds (on which the settings were chosen) and green for "
                    "the fresh seeds that decide the row, with 95% CIs over seeds.")
plt.show()
fs = codes_seed[is_fresh]
display(Markdown(
    f"**Fresh seeds {', '.join(map(str, settings.fresh_seeds))}** (the rule's): on B's content words the fixed codes "
    f"read {format_mean_ci(fs['codes_floor'])} (notebook 02: the same model on the same sentences); Hebbian-learned "
    f"codes {format_mean_ci(fs['codes_hebbian'])} ({paired_words(fs['codes_hebbian'], fs['codes_floor'])} against the "
    f"floor, paired over seeds); backprop-learned codes {format_mean_ci(fs['codes_backprop'])} "
    f"({paired_words(fs['codes_backprop'], fs['codes_floor'])}); the category oracle "
    f"{format_mean_ci(fs['codes_category'])}. On seeds {min(settings.seeds)}-{max(settings.seeds)} the Hebbian codes "
    f"gain {paired_words(codes_seed.loc[~is_fresh, 'codes_hebbian'], codes_seed.loc[~is_fresh, 'codes_floor'])}. "
    f"Verdict of the learning row: **{codes_verdict.holds}** ({CLAIMS.labels.plain(codes_verdict.reason)})."
    if len(fs) else "No fresh seeds: set `fresh_seeds` to decide the learning row."))

# %% [markdown]
# ## What the traces look like: the "muddy water"
#
# One training sentence with nested relative clauses, through the first seed's SPCN: level
# 1's active units and one EMA trace per rate (the panels follow the rates you choose).

# %%
spcn0 = results[settings.seeds[0]]["spcn"]
deep = [i for i, d in enumerate(train0.depths) if max(d) >= 2 and len(d) <= 16]
ex = deep[0] if deep else 0
words = train0.sentences[ex]
levels, _ = spcn0.forward_levels([words])
a1, h1, _ = levels[0]
units = torch.nonzero(a1[0].sum(0) > 0).flatten()[:40]
panels = [("active units $a_t$", a1[0][:, units], "activity (0 or 1)")] + [
    (f"trace, $\\alpha$ = {alpha:g}", h1[0, :, s][:, units], "trace value") for s, alpha in enumerate(spcn0.cfg.alphas)]
n_cols = min(2, len(panels))  # two panels a row: four in one row would be 2,400 px wide
n_rows = -(-len(panels) // n_cols)
fig, axes = plt.subplots(n_rows, n_cols, figsize=(10.2, 4.6 * n_rows), sharey=True, squeeze=False)
labels = [f"{w} ({ROLES[r]}, d{d})" for w, r, d in zip(words, train0.roles[ex], train0.depths[ex], strict=True)]
for ax, (title, m, cbar) in zip(axes.flat, panels, strict=False):
    sns.heatmap(m.numpy(), ax=ax, cmap="viridis", vmin=0, vmax=1, yticklabels=labels, xticklabels=False,
                cbar_kws={"label": cbar})  # one colour scale: codes are 0/1, traces their averages in [0, 1]
    ax.set_title(title)
    ax.set_xlabel("level-1 unit")
    ax.tick_params(axis="y", labelsize=8, labelrotation=0)
for ax in axes.flat[len(panels):]:
    ax.set_visible(False)
for ax in axes[:, 0]:
    ax.set_ylabel("token (role, embedding depth)")
fig.suptitle(f"One sentence in SPCN level 1: sparse codes and their EMA traces (first {len(units)} active units)")
stamp(fig, profile, 1, note=f"seed {settings.seeds[0]}")
fig.tight_layout()
out.save_figure(fig, "traces_heatmap", title="One sentence in SPCN level 1: codes and EMA traces",
                alt=f"Heatmaps of one training sentence with nested relative clauses, one row per token labelled with "
                    f"its role and depth, one column per active level-1 unit: the sparse 0/1 activity and its EMA "
                    f"trace at each of the {len(spcn0.cfg.alphas)} rates, slower rates smearing each word over the "
                    "later tokens.")
plt.show()

# %% [markdown]
# ## The learning rule lowers the prediction error
#
# The quantity the rule reduces, per update (first seed): each level's mean squared error in
# predicting its next column activity. With the weights at zero it is the code density.

# %%
hist = pd.DataFrame(results[settings.seeds[0]]["spcn_history"])
hist["update"] = hist.groupby("level").cumcount() + 1
fig, ax = plt.subplots(figsize=(7, 3.5))
for level, g in hist.groupby("level"):
    ax.plot(g["update"], g["mse"], label=f"level {level}")
ax.set_xlabel(f"{RULE_WORDS[main]} update (minibatch)")
ax.set_ylabel("prediction MSE (squared activity units)")
ax.set_title("SPCN next-activity prediction error during learning")
legend_outside(ax)
stamp(fig, profile, 1, note=f"seed {settings.seeds[0]}")
fig.tight_layout()
out.save_figure(fig, "pghu_learning", title="SPCN prediction error during learning",
                alt=f"Lines of each SPCN level's mean squared error in predicting its next column activity against the "
                    f"{RULE_WORDS[main]} update number, for the first seed.")
plt.show()
display(Markdown(f"On held-out sentences, level 1's prediction MSE is {format_mean_ci(per_seed.test_mse_trained, 4)} "
                 f"after learning against {format_mean_ci(per_seed.test_mse_untrained, 4)} with untrained weights."))

# %% [markdown]
# ## Accuracy per role

# %%
shown = ["spcn_probe", "spcn_level1_floor", "spcn_labelfree", "bigru"]
per_role = pd.DataFrame([{"seed": seed, "readout": readout_name(k), "role": ROLES[i], "kind": ROLE_KIND[ROLES[i]],
                          "accuracy": a} for seed, r in results.items() for k in shown
                         for i, a in enumerate(r["per_role"][k])])
out.save_data(per_role, "per_role")
fig, ax = plt.subplots(figsize=(10.5, 5.5))
sns.barplot(data=per_role, x="role", y="accuracy", hue="readout", errorbar=("ci", 95), ax=ax, order=list(ROLES),
            n_boot=200, seed=0)
n_struct = sum(ROLE_KIND[r] == "structural" for r in ROLES)
ax.axvline(n_struct - 0.5, color="k", ls=":", lw=1)
ax.text(n_struct / 2, 1.05, "structural roles", ha="center", va="center")
ax.text(n_struct + (len(ROLES) - n_struct) / 2, 1.05, "lexical roles", ha="center", va="center")
mark_paper(ax, 0.960, "paper: SPCN overall 0.960", legend=True)  # in the legend: a label beside it sits across bars
ax.set_ylim(0, 1.1)
ax.set_ylabel("held-out accuracy (fraction of the role's tokens)")
ax.set_title("Per-role accuracy on held-out Grammar A")
ax.tick_params(axis="x", rotation=60)
stamp(fig, profile, n_seeds, errorbars="95% CI over seeds")
legend_below(fig, ax, ncol=2)
out.save_figure(fig, "per_role", title="Per-role accuracy on held-out Grammar A",
                alt="Grouped bars of held-out accuracy for each of the 20 roles of Grammar A (13 structural, then 7 "
                    "lexical) for SPCN's linear probe, the no-learning floor, label-free SPCN and the BiGRU, with 95% "
                    "CIs over seeds and the paper's overall 0.960 as a dashed line.")
plt.show()

# %% [markdown]
# ## Accuracy by embedding depth and by dependency length
#
# The dependency length is the distance from a token to the word that fixes its role
# (`paper_lib.data.roles`): "later word" means the role is decided by a word still to come
# (the main subject's thematic role, fixed by the main verb), which a causal reader cannot see.

# %%
gkeys = ["spcn_probe", "spcn_level1_floor", f"spcn_err_{main}", "spcn_backprop", "bigru"]
by_depth, by_dep = group_table(tokens, gkeys, "depth"), group_table(tokens, gkeys, "dep_bin")
by_dep = by_dep.reindex([b for b in DEPENDENCY_BINS if b in by_dep.index])
out.save_table(by_depth, "accuracy_by_depth", index=True)
out.save_table(by_dep, "accuracy_by_dependency", index=True)
display(by_depth.round(3), by_dep.round(3))

# %% [markdown]
# ## Metrics

# %%
metric_keys = {"spcn_probe_acc_A": "spcn_probe", "spcn_labelfree_acc_A": "spcn_labelfree",
               "spcn_hungarian_acc_A": "spcn_hungarian", "spcn_untrained_acc_A": "spcn_untrained",
               "bigru_acc_A": "bigru", "spcn_over_bigru_A": "spcn_over_bigru",
               "spcn_level1_floor_acc_A": "spcn_level1_floor", "spcn_learned_feat_acc_A": "spcn_learned_feat",
               "spcn_backprop_acc_A": "spcn_backprop", "spcn_backprop_level2_acc_A": "spcn_backprop_level2",
               f"spcn_err_{main}_acc_A": f"spcn_err_{main}",
               **{f"spcn_err_{r}_level2_acc_A": f"spcn_err_{r}_level2" for r in rules}}
metrics = {m: per_seed[k].tolist() for m, k in metric_keys.items() if k in per_seed} | codes_metrics
out.write_metrics(metrics)
for key in ("within_A", "learning"):  # the verdicts REPORT.md shows, by the same rule
    display(Markdown(CLAIMS.markdown(key, metrics, profile)))

# %% tags=["remove-cell"]
display(Markdown(f"Outputs in `{os.path.relpath(out.dir)}`; this notebook ran in {time.perf_counter() - t_start:.0f} s."))
