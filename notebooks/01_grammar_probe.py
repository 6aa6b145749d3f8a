# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation: {extension: .py, format_name: percent}
#   kernelspec: {display_name: Python 3, language: python, name: python3}
# ---

# %% [markdown]
# # Experiment 1a: a Hebbian network reads grammatical roles from EMA traces
#
# **The paper's claim** (Singh, "EMA Is Not All You Need", arXiv:2604.08556, Experiment 1):
# SPCN, a Sparse Predictive Column Network built from fixed random projections, sparse
# top-k activations and multi-timescale EMA traces, learned by a local Hebbian rule (PGHU,
# the precision-gated Hebbian update) with **zero role labels**, assigns one of 20
# grammatical roles to the tokens of held-out sentences of a synthetic grammar with
# accuracy **0.960**, which is **96 %** of a supervised bidirectional GRU tagger.
#
# **What is ours.** The paper does not give its grammar, its 20 roles, SPCN's wiring and
# sizes, PGHU's exact form or the readout. We built all of them (`paper_lib.data.grammar`,
# `paper_lib.models.spcn`, `paper_lib.hebbian`, `paper_lib.probes`, `paper_lib.models.gru`); the
# design is stated below and in the docstrings. In short:
#
# - **Grammar A** (animals; Grammar B, vehicles, is for notebook 02): subject/object
#   relative clauses nested up to depth 3, prepositional phrases, adjectives. **20 roles**:
#   13 *structural* (decided by position, e.g. `VERB_REL`, the verb inside a relative
#   clause) and 7 *lexical* (decided by which content word occurred: the main subject is
#   AGENT, EXPERIENCER or THEME depending on the main verb; the noun after *with* is an
#   INSTRUMENT or a COMPANION depending on the noun).
# - **SPCN**: each word's input code is a hash-seeded random vector; two levels of 8 columns
#   x 16 units with 2 winners per column; EMA traces at the paper's rates 0.5, 0.1, 0.02;
#   each level predicts its next column activity from its traces with weights learned by
#   PGHU (no autograd); level 2 reads level 1's traces and predictions. A token's features
#   are the traces and predictions of both levels. The traces are **causal**: SPCN sees only
#   the words up to the current one; the BiGRU sees the whole sentence.
# - **Readouts**: a linear probe (logistic regression on the frozen features: the features
#   use no label, the probe does) and a label-free readout (k-means clusters, each named
#   after the majority role of its training tokens; and a one-to-one Hungarian matching of
#   20 clusters to the 20 roles).
# - **Ablation**: the same SPCN with its learned predictive weights put back to their
#   initial value (zero), read by the same probe: what PGHU contributes.

# %% tags=["parameters"]
profile = "cpu"    # smoke | cpu | paper: the sizes and seeds of paper_lib.pipeline.profiles
overrides = {}    # any setting of the notebook's Settings, e.g. {"seeds": [0], "spcn": {"alphas": [0.5, 0.05]}}

# %%
from paper_lib.pipeline.params import check_parameters; check_parameters(globals())  # noqa: E702, I001
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch
from IPython.display import Markdown, display
from tqdm.auto import tqdm

from paper_lib.data.grammar import N_ROLES, ROLE_KIND, ROLES, GrammarConfig, make_split, role_inventory
from paper_lib.experiments.grammar_probe import READOUTS, run_seed, settings_for
from paper_lib.pipeline.provenance import Outputs
from paper_lib.pipeline.settings import as_dict
from paper_lib.pipeline.stats import mean_ci95

torch.set_num_threads(2)
settings = settings_for(profile, overrides)
out = Outputs("01_grammar_probe", profile, as_dict(settings), settings.seeds)
t_start = time.perf_counter()
display(settings)

# %% [markdown]
# ## The 20 roles
#
# Every token carries exactly one role. `share` is the role's share of the tokens of the
# first seed's training split and `mean_depth` the mean embedding depth of its tokens
# (0 = main clause, up to 3 nested relative clauses).

# %%
train0, test0 = make_split("A", settings.n_train, settings.n_test, settings.seeds[0],
                           GrammarConfig(max_depth=settings.max_depth))
inventory = role_inventory(train0)
out.save_table(inventory, "role_inventory")
tok0 = train0.to_frame()
display(inventory)
display(Markdown(
    f"{len(train0)} training and {len(test0)} test sentences per seed, "
    f"{train0.n_tokens / len(train0):.1f} tokens per sentence on average; "
    f"{(tok0.depth >= 2).mean():.1%} of the tokens sit at depth 2 or 3. "
    f"Lexical roles cover {(tok0.kind == 'lexical').mean():.1%} of the tokens."))

# %% [markdown]
# ## Experiment 1a over seeds
#
# For each seed: a fresh grammar split, SPCN learned on the training sentences (no labels),
# the readouts, the untrained-weights ablation, and the BiGRU trained with labels.

# %%
results = {}
for seed in tqdm(settings.seeds, desc="seeds"):
    results[seed] = run_seed(settings, seed, progress=False)
per_seed = pd.DataFrame([{"seed": s, **r["acc"], **{f"test_mse_{k}": v for k, v in r["test_mse"].items()}}
                         for s, r in results.items()])
per_seed["spcn_over_bigru"] = per_seed["spcn_probe"] / per_seed["bigru"]
out.save_data(per_seed, "per_seed")
display(per_seed)

# %% [markdown]
# ## What the traces look like: the "muddy water"
#
# One training sentence with nested relative clauses, through the first seed's SPCN:
# level 1's active units (the sparse word codes) and their three EMA traces. The fast trace
# (alpha = 0.5) still shows the last word or two; the slow one (alpha = 0.02) is a blur of
# the whole sentence in which the order of the words is mixed together.

# %%
spcn0 = results[settings.seeds[0]]["spcn"]
deep = [i for i, d in enumerate(train0.depths) if max(d) >= 2 and len(d) <= 16]
ex = deep[0] if deep else 0
words, roles_ex = train0.sentences[ex], [ROLES[r] for r in train0.roles[ex]]
levels, _ = spcn0.forward_levels([words])
a1, h1, _ = levels[0]
units = torch.nonzero(a1[0].sum(0) > 0).flatten()[:40]       # units this sentence uses
fig, axes = plt.subplots(1, 4, figsize=(16, 5.5), sharey=True)
panels = [("active units a_t (binary)", a1[0][:, units])] + [
    (f"trace, alpha = {alpha}", h1[0, :, s][:, units]) for s, alpha in enumerate(spcn0.cfg.alphas)]
labels = [f"{w} ({r}, d{d})" for w, r, d in zip(words, roles_ex, train0.depths[ex], strict=True)]
for ax, (title, m) in zip(axes, panels, strict=True):
    sns.heatmap(m.numpy(), ax=ax, cmap="viridis", cbar=True, yticklabels=labels, xticklabels=False)
    ax.set_title(title)
    ax.set_xlabel("level-1 unit")
axes[0].set_ylabel("token (role, embedding depth)")
fig.suptitle("One Grammar A sentence in SPCN level 1: sparse codes and their EMA traces "
             "(the first 40 units active in this sentence)")
fig.tight_layout()
out.save_figure(fig, "traces_heatmap")
plt.show()

# %% [markdown]
# ## PGHU lowers the prediction error
#
# The quantity PGHU learns to reduce: the mean squared error of each level's prediction of
# its next column activity, per update (first seed). With the weights at zero the error is
# the density of the codes, top_k / column_size.

# %%
hist = pd.DataFrame(results[settings.seeds[0]]["spcn_history"])
hist["update"] = hist.groupby("level").cumcount() + 1
fig, ax = plt.subplots(figsize=(6, 3.5))
for level, g in hist.groupby("level"):
    ax.plot(g["update"], g["mse"], label=f"level {level}")
ax.set_xlabel("PGHU update (minibatch)")
ax.set_ylabel("prediction MSE (squared activity units)")
ax.set_title("SPCN next-activity prediction error during PGHU learning")
ax.legend()
out.save_figure(fig, "pghu_learning")
plt.show()
mse_tr = mean_ci95(per_seed["test_mse_trained"])
mse_un = mean_ci95(per_seed["test_mse_untrained"])
display(Markdown(f"On held-out sentences, level 1's prediction MSE is {mse_tr['mean']:.4f} "
                 f"(± {mse_tr['ci95']:.4f}) after PGHU against {mse_un['mean']:.4f} with untrained weights."))

# %% [markdown]
# ## Table 1: held-out Grammar A role accuracy

# %%
NAMES = {"spcn_probe": "SPCN, linear probe", "spcn_labelfree": f"SPCN, label-free (k-means, K = {settings.n_clusters}, majority)",
         "spcn_hungarian": "SPCN, label-free (k-means, K = 20, Hungarian)",
         "spcn_untrained": "SPCN, untrained weights, linear probe", "bigru": "BiGRU (supervised)"}
PAPER = {"spcn_probe": 0.960, "bigru": 0.960 / 0.96}
rows = []
for k in READOUTS:
    s = mean_ci95(per_seed[k])
    rows.append({"model": NAMES[k], "accuracy": s["mean"], "ci95": s["ci95"], "seeds": s["n"],
                 "paper": PAPER.get(k, np.nan)})
ratio = mean_ci95(per_seed["spcn_over_bigru"])
rows.append({"model": "SPCN probe / BiGRU", "accuracy": ratio["mean"], "ci95": ratio["ci95"], "seeds": ratio["n"],
             "paper": 0.96})
table1 = pd.DataFrame(rows)
out.save_table(table1, "table1")
display(table1)

# %% [markdown]
# The paper's BiGRU accuracy is not reported; 1.000 in the `paper` column is what 0.960
# being 96 % of it implies.

# %%
acc = {k: mean_ci95(per_seed[k]) for k in READOUTS}
tok_te = test0.to_frame()
subj_share = tok_te.role.isin(["AGENT", "EXPERIENCER", "THEME"]).mean()
met = acc["spcn_probe"]["mean"] >= 0.93
gain_ci = mean_ci95(per_seed["spcn_probe"] - per_seed["spcn_untrained"])   # paired over seeds
gain, noise = gain_ci["mean"], gain_ci["ci95"]
subj_ids = [ROLES.index(r) for r in ("AGENT", "EXPERIENCER", "THEME")]
subj_acc = {k: np.mean([np.nanmean(r["per_role"][k][subj_ids]) for r in results.values()]) for k in ("spcn_probe", "bigru")}
display(Markdown(
    f"**Within Grammar A, SPCN's probe reads {acc['spcn_probe']['mean']:.3f} ± {acc['spcn_probe']['ci95']:.3f} "
    f"of the roles right** (paper: 0.960; our target at `cpu`: 0.93, {'met' if met else 'missed'}), "
    f"the supervised BiGRU {acc['bigru']['mean']:.3f} ± {acc['bigru']['ci95']:.3f}; "
    f"SPCN reaches {ratio['mean']:.1%} ± {ratio['ci95']:.1%} of the BiGRU (paper: 96 %).\n\n"
    f"Without any label at all, clusters named by their majority role read "
    f"{acc['spcn_labelfree']['mean']:.3f} ± {acc['spcn_labelfree']['ci95']:.3f}, and a strict one-to-one "
    f"matching of 20 clusters to the 20 roles {acc['spcn_hungarian']['mean']:.3f} ± {acc['spcn_hungarian']['ci95']:.3f}; "
    f"we compare the paper's 0.960 with our probe, the readout closest to \"the traces act as the probe\".\n\n"
    f"**What PGHU contributes:** with the learned predictive weights put back to zero, the same probe reads "
    f"{acc['spcn_untrained']['mean']:.3f} ± {acc['spcn_untrained']['ci95']:.3f}, a difference of "
    f"{gain:+.3f} ± {noise:.3f} (paired over seeds) against the trained SPCN, "
    + ("within its 95% CI: in our SPCN the accuracy comes from the fixed parts (random codes, sparse "
       "columns, EMA traces), not from what PGHU learned.\n\n" if abs(gain) <= noise else
       "outside its 95% CI.\n\n") +
    f"Where SPCN loses: the main subject ({subj_share:.1%} of the test tokens) is AGENT, EXPERIENCER or THEME "
    f"depending on the main verb, which comes *after* it. SPCN's causal traces cannot know it when the subject "
    f"is read; the BiGRU reads the sentence in both directions. "
    f"Averaged over these three roles, SPCN's probe reads {subj_acc['spcn_probe']:.3f}, the BiGRU {subj_acc['bigru']:.3f}."))

# %% [markdown]
# ## Accuracy per role

# %%
pr = []
for seed, r in results.items():
    for k in ("spcn_probe", "spcn_untrained", "spcn_labelfree", "bigru"):
        for i, a in enumerate(r["per_role"][k]):
            pr.append({"seed": seed, "readout": NAMES[k], "role": ROLES[i], "kind": ROLE_KIND[ROLES[i]],
                       "accuracy": a})
per_role = pd.DataFrame(pr)
out.save_data(per_role, "per_role")
fig, ax = plt.subplots(figsize=(15, 5))
sns.barplot(data=per_role, x="role", y="accuracy", hue="readout", errorbar=("ci", 95), ax=ax,
            order=list(ROLES), n_boot=200, seed=0)
n_struct = sum(ROLE_KIND[r] == "structural" for r in ROLES)
ax.axvline(n_struct - 0.5, color="k", ls="--", lw=1)
ax.text(n_struct / 2, 1.03, "structural roles", ha="center")
ax.text(n_struct + (N_ROLES - n_struct) / 2, 1.03, "lexical roles", ha="center")
ax.set_ylim(0, 1.08)
ax.set_ylabel("held-out accuracy (fraction of the role's tokens)")
ax.set_xlabel("role")
ax.set_title(f"Per-role accuracy on held-out Grammar A (mean and 95% CI over {len(results)} seeds)")
ax.tick_params(axis="x", rotation=60)
ax.legend(loc="lower left", fontsize=8)
fig.tight_layout()
out.save_figure(fig, "per_role")
plt.show()
by_kind = per_role.groupby(["readout", "kind"])["accuracy"].mean().unstack()
display(by_kind)

# %% [markdown]
# ## Metrics

# %%
out.write_metrics({
    "spcn_probe_acc_A": per_seed["spcn_probe"].tolist(),
    "spcn_labelfree_acc_A": per_seed["spcn_labelfree"].tolist(),
    "spcn_hungarian_acc_A": per_seed["spcn_hungarian"].tolist(),
    "spcn_untrained_acc_A": per_seed["spcn_untrained"].tolist(),
    "bigru_acc_A": per_seed["bigru"].tolist(),
    "spcn_over_bigru_A": per_seed["spcn_over_bigru"].tolist(),
})
display(Markdown(f"Outputs in `{out.dir}`; this notebook ran in {time.perf_counter() - t_start:.0f} s."))
