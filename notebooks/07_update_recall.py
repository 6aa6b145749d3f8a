# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 07 · Key-update recall: a test the paper's mechanism can fail, at equal state under a noise budget
#
# **The claim under test (the paper's mechanism, beyond its experiments).** Fixed, data-independent
# decay loses content that learned, input-dependent selection keeps. Notebook 05's recall never has
# to overwrite anything (every key is bound once), so there a decay only rescales what it holds.
# Here it must fail if the mechanism is right: the **query key is bound two or three times, to
# distinct values, and the answer is its latest value**. A fixed bank cannot erase the old binding;
# it can only tell the latest one by its weight, which decays. A state whose decay each token sets
# can erase and rewrite.
#
# **The task** (`paper_lib.data.update_recall`): notebook 05's single-hop layout, 8 keys, 8 values,
# one pair token per binding (81 token ids), 10 pair slots; the other slots bind the other keys
# (drawn with replacement, so they rebind too); then Δ blanks, the query, the answer one token later.
# Two exact baselines on the test sequences: *keys ignored* (the Bayes-optimal guess from the values
# in slot order without their keys) and *any bound value* (a reader told the query key's values but
# not their order, about 0.42).
#
# **The resource model, stated before any run** (`paper_lib.bounds.noise_budget`). In exact arithmetic a
# fixed bank loses nothing, so the claim means something only under a precision per state number.
# Every recurrent state number, at unit scale (the fixed traces rescaled by `sqrt((2 - a) / a)` to
# unit stationary std; the scan in the same normalised form; the GRU's numbers in [-1, 1]; SPEN's
# traces likewise), gets Gaussian noise `sigma` **after every step**, in training and in test; the
# noise accumulates as the signal does. The Transformer, the positive control, gets `sigma` on its
# keys and values. Headline `sigma = 0.02`, beside `sigma = 0` and `0.005`.
#
# **The paper's bank, read two ways** (`paper_lib.bounds.update_bound`, `paper_lib.bounds.update_oracle`).
# One-hot codes under the paper's three rates (3 x 81 = 243 numbers). (a) The **Bayes
# bound**: the best reader told, beyond the bank, which slots bind the query key; given those, the
# rest of the bank is independent of which value sits where, so no reader of the bank does better.
# Its hypotheses are enumerated exactly; the expectation over sequences and noise is a Monte-Carlo
# average. Beside it the **Bayes reader** of the query key's block, told nothing: a reader the bank
# allows, so the best one is pinned between the two. (b) The **MLP oracle**, fitted on fresh
# sequences until its held-out accuracy is flat. One-hot codes stand for every token-wise code of
# unit norm (isotropic noise does not see a rotation); a code that uses every number's range does
# better: an orthogonal one is the one-hot bank at `sigma / 9` (the **dense-code bound**). One bank
# is one instance, which is why the rule reads the family's best instead.
#
# **The best fixed-decay bank, not one bank** (`paper_lib.bounds.bank_family`). The claim says
# "fixed decay", so its bound is a maximum over a **stated family** of fixed banks of the same 243
# numbers: three rates from a grid of 12 over 0.005-0.9 (every triple; the numbers split equally or
# unequally; one-hot or dense codes), one rate for every number, and 9, 27, 81 or 243 rates log-spaced
# over any span of the grid (dense codes, or a code drawn afresh per rate), 1,420 banks in all. Each
# bank's bound is the Bayes accuracy of a reader told every token except the query key's values: exact
# over the hypotheses, Monte-Carlo over sequences and noise, and an upper bound for every reader of
# that bank. The best bank of each gap is scored again on fresh draws.
#
# **Learned states of equal size, the same noise** (`paper_lib.models.noisy_states`): the selective
# scan (243 channels whose decay each token sets); **the same scan with time-invariant rates** (each
# channel's decay learned but constant: the control that isolates input dependence, as S4 stands to
# Mamba's S6, whose selective-copying task reads about 18% against 97%, Gu and Dao 2023, Table 1); a
# GRU (243 numbers: its saturating gates can also pull a number back and so correct noise, so it is
# read as "selection or nonlinear state", never as selection alone); SPEN-linear with two blocks
# (2 x 3 x 40 = 240 trace numbers), read only where its calibration passes.
#
# **One recipe, trained until flat** (`paper_lib.stopping`). Every arm: AdamW, warmup then cosine
# decay over its step cap (peak rate 3e-3; the Transformer's 1e-3, see its recipe), batch 64, and
# one curriculum: the answer due at the query itself for the
# first 800 steps (a one-hop lookup), then one token later (the task's two hops); the gaps join one
# every 150 steps. Every run stops on the one stopping rule: solved (0.99 held out), flat (less than
# 0.01 gained over five checks, 2,560 held-out sequences: standard error below 0.01), or its cap,
# and never while its training loss is within 0.05 nats of the chance loss: the loss of the best
# answer that ignores the keys (about 1.48 nats; a uniform guess among the values is ln 8 = 2.08),
# the plateau a recall model sits on before it binds keys to values. Each run's stop
# reason is in the tables and on the learning curves, and the rule reads it: a verdict that rests on
# an arm cut while still learning, or that never left the chance loss, is "not attributable".
#
# **The rule, written in `paper_lib/claims/update.py` before the cpu run:** *yes* if at some gap the
# selective scan's lower 95% CI over 3 seeds is at least 0.9 and above both the family's best bound
# and the time-invariant scan's upper CI; *no* if at every gap that bound or the time-invariant scan
# reaches the selective scan; *not informative* if the Transformer is below 0.95 at any gap or the
# selective scan does not learn the task at gap 2 without noise (the calibration appendix).

# %% tags=["parameters"]
# Tweak these in your copy, lab/07_update_recall.py (`make lab`); a change here is the new default, to commit.
profile = "cpu"  # smoke | cpu | paper: sizes and seeds from paper_lib.profile_settings, section update_recall
overrides = {}   # any setting of paper_lib.experiments.update_recall.Settings, e.g. {"scan": {"lr": 1e-3}} or
#                  {"sigmas": [0.0, 0.01], "sigma": 0.01} (sigma, the headline noise, must be one of sigmas)
# No n_threads: every job runs on one thread by design (`workers` of them at a time), so no result
# depends on a thread count; this process only gathers their rows.

# %%
from paper_lib.pipeline.params import check_parameters; check_parameters(globals())  # noqa: E702, I001
from paper_lib.pipeline.threads import JOB_THREADS, set_threads

set_threads(JOB_THREADS)  # one thread here too: every run trains or fits in a job of one thread (`workers` at a time)
import math
import textwrap
import time

import matplotlib.pyplot as plt
import seaborn as sns
from IPython.display import display
from tqdm.auto import tqdm

from paper_lib.claims.update import CLAIMS, UPDATE_KEPT, UPDATE_STATES
from paper_lib.claims.words import COLUMNS
from paper_lib.experiments import update_recall as ur
from paper_lib.experiments import update_tables as ut
from paper_lib.pipeline.markdown import Markdown
from paper_lib.pipeline.plots import clipped_yerr, count, legend_below, stamp
from paper_lib.pipeline.provenance import Outputs
from paper_lib.pipeline.report import summarise
from paper_lib.pipeline.settings import as_dict
from paper_lib.pipeline.tables import use_table_style
from paper_lib.stopping import STOP_WORDS

use_table_style(COLUMNS)  # every table below: columns in words, one formatted number per cell, no index
t_start = time.perf_counter()
S = ur.settings_for(profile, overrides)
out = Outputs("07_update_recall", profile, as_dict(S), S.seeds)
task = ur.task(S)
sns.set_theme(style="whitegrid")
display(Markdown(
    f"Task: {S.n_keys} keys, {S.n_values} values ({task.vocab_size} token ids), {S.n_slots} pair slots, the query "
    f"key bound {' or '.join(map(str, S.bindings))} times, gaps {list(S.gaps)}, the answer {count(S.delay, 'token')} "
    f"after the query. Noise per state number per step: {list(S.sigmas)} (headline {S.sigma:g}). Models at the "
    f"headline: {', '.join(UPDATE_STATES[m] for m in S.models)} on {len(S.seeds)} seeds; at the other noise levels: "
    f"{', '.join(UPDATE_STATES[m] for m in S.panel_models)} on {len(S.panel_seeds)} "
    f"seed{'s' if len(S.panel_seeds) != 1 else ''}. Validation every {S.stop.check_every} steps on "
    f"{S.val_sequences} sequences per gap; test: {S.test_sequences} fresh sequences per gap; {S.workers} worker "
    f"process{'es' if S.workers != 1 else ''}."))

# %% [markdown]
# ## Every run, at once
# The models, the oracle fits, the bounds, the family search and the calibration runs are
# independent jobs; they run in `workers` processes of one thread each, costliest first, and every
# job seeds itself, so the numbers do not depend on the number of workers.

# %%
with tqdm(total=len(ur.jobs(S)), desc="runs (models, oracle fits, bounds, family, calibration)") as bar:
    runs = ur.run_all(S, progress=bar)
results, bounds = runs["results"], runs["bounds"]
base = ur.baselines(S)
for name, stem in (("results", "update_results"), ("bounds", "update_bounds"), ("curves", "update_learning_curves"),
                   ("family", "update_best_banks"), ("family_search", "update_family_search"),
                   ("calibration", "update_calibration"), ("calibration_curves", "update_calibration_curves")):
    out.save_data(runs[name], stem)
out.save_data(base, "update_baselines")
metrics = ut.update_metrics(runs, base, S, ur.state_sizes(S))
claim = CLAIMS["update_recall"]
verdict = CLAIMS.verdict("update_recall", metrics, profile)
spen_counts = "update_calib_learned_spen" in metrics and metrics["update_calib_learned_spen"][0] >= 1 \
    and metrics.get("update_calib_acc_spen", [0])[0] >= UPDATE_KEPT


def panel_note(sigma):
    """What the claim's gate says of a panel (its verdict at the headline; elsewhere the gate with the
    headline's calibration, which runs once, without noise), or ''."""
    if sigma == S.sigma:
        return verdict.reason if verdict.holds == "not informative at this budget" else ""
    calibration = {k: v for k, v in metrics.items() if k.startswith("update_calib_")}
    return claim.gate(summarise({**ut.update_metrics(runs, base, S, ur.state_sizes(S), sigma), **calibration})) or ""


def label(name):
    """A state's legend entry (SPEN's says when its calibration failed)."""
    return UPDATE_STATES[name] + ("" if name != "spen" or spen_counts else " (did not learn at gap 2)")


# %% [markdown]
# ## The figure: accuracy against the gap, per state, one panel per noise level
# Solid: the learned states and the Transformer; black dash-dot with dots: the MLP oracle of the
# paper's bank; the grey band reaches from that bank's Bayes reader (told nothing) up to its Bayes
# bound; red dashes: the bound of the best fixed-decay bank of the family (headline noise); thin
# grey: the two baselines. A panel whose positive control fails says so in its title.

# %%
style = {ur.ORACLE: dict(color="black", ls="-.", marker="o"), "scan": dict(color="tab:blue", ls="-", marker="s"),
         "lti_scan": dict(color="tab:cyan", ls="--", marker="P"), "gru": dict(color="tab:green", ls="-", marker="^"),
         "spen": dict(color="tab:orange", ls=":", marker="v"),
         "transformer": dict(color="tab:purple", ls="-", marker="D")}
fam = runs["family"].sort_values("gap")
fig, axes = plt.subplots(1, len(S.sigmas), figsize=(3.6 * len(S.sigmas), 4.0), sharey=True, squeeze=False)
for ax, sigma in zip(axes[0], S.sigmas, strict=True):
    b = bounds[bounds.sigma == sigma].sort_values("gap")
    ax.fill_between(b.gap, b.bayes, b.bound, color="0.6", alpha=0.5, lw=0,
                    label="the paper's bank: Bayes reader to bound")
    ax.plot(b.gap, b.bound, color="0.35", lw=1.2)
    if sigma == S.sigma and len(fam):
        ax.plot(fam.gap, fam.acc, color="firebrick", ls="--", lw=1.8,
                label="best fixed-decay bank of the family: bound")
    ax.plot(base.gap, base.any_value, color="0.55", lw=0.9, label="any-bound-value baseline")
    ax.plot(base.gap, base.keys_ignored, color="0.55", lw=0.9, ls="--", label="keys-ignored baseline")
    for name in ut.STATES:
        mean, ci = ut.mean_by_gap(results, name, sigma, list(S.gaps))
        if all(v != v for v in mean):
            continue
        ax.errorbar(list(S.gaps), mean, yerr=clipped_yerr(mean, ci), ms=4, capsize=2, lw=1.4, label=label(name),
                    **style[name])
    ax.axhline(UPDATE_KEPT, color="firebrick", lw=0.8, ls=(0, (1, 3)))
    note = panel_note(sigma)
    ax.set(xscale="log", ylim=(0, 1.03), xlabel="gap Δ (blanks before the query)",
           title=f"noise {sigma:g} per step" + ("\nits positive control failed" if note else ""))
    ax.set_xticks(list(S.gaps), [str(d) for d in S.gaps])
    ax.minorticks_off()
axes[0][0].set_ylabel("accuracy on the latest value (test)")
fig.suptitle("Key-update recall: the latest value, by gap, at equal state and stated noise", fontsize=10)
legend_below(fig, axes[0][-1], ncol=3)
n_panel = len(S.panel_seeds)
stamp(fig, profile, len(S.seeds), "95% CI over seeds", note=f"{n_panel} seed{'s' if n_panel != 1 else ''} at noise "
      f"other than {S.sigma:g}; dotted red: the rule's bar {UPDATE_KEPT:g}")
out.save_figure(fig, "update_by_gap", title="Key-update recall against the gap, per state and noise level",
                alt="Accuracy on the key's latest value against the gap (2 to 64 blanks, log axis), one panel per noise "
                    f"level ({', '.join(f'{v:g}' for v in S.sigmas)} per state number per step): the paper bank's MLP "
                    "oracle, a grey band from its Bayes reader to its Bayes bound, the bound of the best fixed-decay "
                    "bank of the family, the selective scan, the time-invariant scan, the GRU, SPEN-linear and the "
                    "Transformer with 95% CIs, the two baselines and the bar 0.9.")
plt.show()

# %% [markdown]
# ## The numbers at the headline noise
# Mean ± 95% CI over seeds (n), per state and gap; then the best fixed-decay bank of the family and
# the paper's bank (computed, one number each; the Monte-Carlo standard errors are in
# `update_bounds.csv` and `update_best_banks.csv`) and the baselines.

# %%
summary = ut.summary_table(runs, base, S, S.sigma)
out.save_table(summary, "update_summary")
display(summary)

# %% [markdown]
# ## The best fixed-decay bank at each gap
# The family's best bank (the search's bound on common draws, then scored again on fresh ones); every
# bank's bound at every gap is in `update_family_search.csv`.

# %%
display(ut.family_table(runs["family"]))

# %% [markdown]
# ## Does the oracle meet the bound?
# The MLP oracle bounds what the paper's bank holds from below, its Bayes bound from above. Where they
# meet, the oracle has converged and the bank's number is known; where the oracle's fit was flat and
# it still falls short, the MLP, not the bank, is the limit.

# %%
agree = ut.agreement_table(results, bounds)
out.save_table(agree, "update_oracle_vs_bound")
display(agree.round(3))
display(Markdown(ut.agreement_paragraph(agree)))

# %% [markdown]
# ## One budget table
# Every learned state carries as many numbers as the fixed bank (SPEN three fewer: 240); the
# Transformer carries the keys and values of every earlier token. Parameters differ (the budget is
# the state, not the weights); each arm's recipe beside it.

# %%
budget = ur.budget_table(S)
out.save_table(budget, "update_budget", floatfmt=".0f")
display(budget)

# %% [markdown]
# ## Learning curves at the headline noise, and why each run stopped
# Left: training loss (nats, the mean between checks) with the chance loss of the stopping rule (the
# best answer that ignores the keys) and ln 8 (a uniform guess among the values); right: validation
# accuracy (mean over the gaps); one line per seed, its stop reason in the legend. The first 800
# steps ask for the answer at the query itself, so validation (one token later) reads low there.

# %%
curves = runs["curves"]
head = curves[curves.sigma == S.sigma]
names = [n for n in ut.STATES if n in set(head.model)]
stops = results[results.sigma == S.sigma].drop_duplicates(["model", "seed"]).set_index(["model", "seed"])
blind = ur.chance(S)
fig, axes = plt.subplots(len(names), 2, figsize=(8.5, 1.75 * len(names) + 0.6), sharex=True, squeeze=False)
for i, name in enumerate(names):
    for seed, g in head[head.model == name].groupby("seed"):
        per_step = g.groupby("step").agg(train_loss=("train_loss", "first"), val=("val_accuracy", "mean"))
        why = STOP_WORDS[stops.loc[(name, seed), "stop"]]
        kw = dict(lw=1.1, color=style[name]["color"], alpha=0.45 + 0.55 / (1 + seed))
        axes[i][0].plot(per_step.index, per_step.train_loss, **kw)
        axes[i][1].plot(per_step.index, per_step.val, label=f"seed {seed}: {why}", **kw)
    axes[i][0].axhline(blind, color="0.3", ls="--", lw=0.9)
    axes[i][0].axhline(math.log(S.n_values), color="0.3", ls=":", lw=0.9)
    axes[i][0].set_ylabel(textwrap.fill(UPDATE_STATES[name], 18), fontsize=8)
    axes[i][1].set(ylim=(0, 1.03))
    axes[i][1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
axes[0][0].set_title(f"training loss (nats); dashed: keys ignored ({blind:.2f}),\ndotted: uniform guess (ln 8)",
                     fontsize=8)
axes[0][1].set_title("validation accuracy (mean over the gaps)", fontsize=9)
for ax in axes[-1]:
    ax.set_xlabel("step")
fig.suptitle(f"Learning curves at noise {S.sigma:g}, one line per seed, with why it stopped", fontsize=10)
fig.tight_layout()
stamp(fig, profile, len(S.seeds), None, note="one line per seed")
out.save_figure(fig, "update_learning_curves", title="Learning curves at the headline noise",
                alt="Training loss with the chance lines (keys ignored; uniform guess) on the left and validation "
                    "accuracy, mean over the gaps, on the right, against the optimiser step for every learned state, "
                    "one line per seed, each labelled with why its run stopped.")
plt.show()
display(ut.stop_table(results, S.sigma))

# %% [markdown]
# ## Metrics and the verdict
# The report row reads `metrics.json` through the rule in `paper_lib/claims/update.py`.

# %%
path = out.write_metrics({k: [float(v) for v in vals] for k, vals in metrics.items()})
display(Markdown(f"Wrote `{path.relative_to(out.root)}` ({len(metrics)} metrics). The notebook took "
                 f"{time.perf_counter() - t_start:.0f} s.\n\n" + CLAIMS.markdown("update_recall", metrics, profile)))

# %% [markdown]
# ## Appendix: calibration, each arm at gap 2 without noise (one seed)
# Before reading a failure at long gaps as the state's, each arm must learn the task where it is
# easiest: gap 2 alone, no noise, seed 0, the same recipe and stopping rule, capped at
# `calibration_steps`. An arm that never leaves the chance loss "did not learn"; the rule reads the
# selective scan's calibration, and SPEN's numbers only where its calibration passed.

# %%
calib = runs["calibration"]
display(ut.calibration_table(calib))
display(Markdown(ut.calibration_paragraph(calib)))
