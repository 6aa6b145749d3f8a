"""The claims of the grammar notebooks (01 grammar probe, 02 transfer): SPCN's roles on Grammars
A and B, learning, depth, structure against content, and word identity at equal state.

Each :class:`~paper_lib.pipeline.report.Claim` below is one row of the report; its rule and gate
are built from the house's combinators (:mod:`paper_lib.pipeline.rules`), from the comparisons
below and from the family's further rules and gates (:mod:`paper_lib.claims.grammar_rules`). :data:`METRICS` is what each notebook
writes, with the plain words the report, the site and the verdicts use for it (the notebook
tests read it). Our design: the paper states no tolerances.
"""
from __future__ import annotations

import math
from typing import Iterable

from ..pipeline.labels import Labels
from ..pipeline.report import Claim, Claims
from ..pipeline.rules import Gate, Metrics, Rule, any_solves, first_gate, unless
from ..pipeline.rules import ci as _ci
from ..pipeline.rules import mean as _m
from ..pipeline.stats import format_mean_ci, mean_ci95
from . import grammar_rules as gr

# --------------------------------------------------------------------------- the metrics and their words

READERS = {"spcn": "SPCN", "gru_causal": "causal GRU", "bigru": "BiGRU",
           "heuristic": "surface heuristic (nearest noun or majority number)"}
"""The readers of notebook 02's per-reader families, in words."""
LAG_STATES = {"bank": "EMA trace bank", "gru": "GRU state",
              "bank_mismatched": "EMA trace bank paired with another document's words (negative control)"}
"""The states the lag oracle reads (notebook 02), in words."""
LAG_SIGMA = 0.02
"""The lag row's noise budget: Gaussian noise per state number (at unit scale) per step, in training and reading
(notebook 07's headline; :class:`paper_lib.experiments.transfer.LagSettings`). Our design: the paper states none."""

METRICS: dict[str, dict[str, str]] = {
    "01_grammar_probe": {
        "spcn_probe_acc_A": "SPCN probe accuracy on A", "spcn_over_bigru_A": "SPCN / BiGRU on A",
        "spcn_untrained_acc_A": "untrained SPCN on A", "spcn_labelfree_acc_A": "label-free SPCN readout on A",
        "bigru_acc_A": "BiGRU accuracy on A", "spcn_level1_floor_acc_A": "no-learning floor (level-1 traces) on A",
        "spcn_learned_feat_acc_A": "error-driven SPCN (learned features) on A", "spcn_backprop_acc_A": "backprop ceiling on A",
        "spcn_learned_content_acc_B": "SPCN with Hebbian-learned word codes, content words on B",
        "spcn_floor_content_acc_B": "SPCN with the fixed word codes (no-learning floor), content words on B",
        "backprop_content_acc_B": "SPCN with backprop-learned word codes (ceiling), content words on B",
        "spcn_category_codes_content_acc_B": "SPCN with B words given A codes of their category (oracle), content words on B",
        "spcn_floor_content_acc_B_fresh": "SPCN with the fixed word codes (no-learning floor), content words on B, fresh seeds",
        "spcn_learned_content_acc_B_fresh": "SPCN with Hebbian-learned word codes, content words on B, fresh seeds",
        "backprop_content_acc_B_fresh": "SPCN with backprop-learned word codes (ceiling), content words on B, fresh seeds",
        "spcn_category_codes_content_acc_B_fresh": "SPCN with B words given A codes of their category (oracle), "
                                                   "content words on B, fresh seeds",
    },
    "02_transfer": {
        "spcn_acc_B": "SPCN accuracy on B", "bigru_acc_B": "BiGRU accuracy on B",
        "gru_causal_acc_B": "causal GRU accuracy on B",
        "causal_gru_nodrop_acc_B": "causal GRU without <unk> training, accuracy on B",
        "spcn_deep_acc_hard": "SPCN depth >= 2, harder grammar", "bigru_deep_acc_hard": "BiGRU depth >= 2, harder grammar",
        "gru_causal_deep_acc_hard": "causal GRU depth >= 2, harder grammar",
        "bigru_lexical_causal_acc_A": "BiGRU causally available content roles on A",
        "spcn_lexical_causal_acc_A": "SPCN causally available content roles on A",
        "gru_causal_lexical_causal_acc_A": "causal GRU causally available content roles on A",
        "causal_gru_nodrop_lexical_causal_acc_A": "causal GRU without <unk> training, causally available content roles "
                                                  "on A",
        "causal_gru_nodrop_lexical_causal_acc_B": "causal GRU without <unk> training, causally available content roles "
                                                  "on B (the deciding word unseen)",
        "spcn_function_acc_B": "function words on B", "spcn_content_acc_B": "content words on B",
        "spcn_deep_acc_A": "SPCN at depth >= 2 on A",
        "bigru_deep_acc_A": "BiGRU at depth >= 2 on A", "gru_causal_deep_acc_A": "causal GRU at depth >= 2 on A",
        "context_free_deep_acc_A": "context-free control at depth >= 2 on A",
        "spcn_struct_acc_B": "SPCN structural roles on B",
        "bigru_struct_acc_B": "BiGRU structural roles on B", "gru_causal_struct_acc_B": "causal GRU structural roles on B",
        "bigru_nounk_struct_acc_B": "BiGRU without <unk> training, structural roles on B",
        "spcn_bidir_struct_acc_B": "bidirectional SPCN structural roles on B",
        "struct_context_share_B": "context-decided share of B's structural tokens",
        "spcn_struct_context_acc_B": "SPCN, context-decided structure on B",
        "gru_causal_struct_context_acc_B": "causal GRU, context-decided structure on B",
        "causal_gru_nodrop_struct_context_acc_B": "causal GRU without <unk> training, context-decided structure on B",
        "spcn_struct_category_acc_B": "SPCN, category-dependent structure on B",
        "gru_causal_struct_category_acc_B": "causal GRU, category-dependent structure on B",
        "causal_gru_nodrop_struct_category_acc_B": "causal GRU without <unk> training, category-dependent structure on B",
        "spcn_bidir_struct_context_acc_B": "bidirectional SPCN, context-decided structure on B",
        "bigru_nounk_struct_context_acc_B": "BiGRU without <unk> training, context-decided structure on B",
        "bigru_lexical_acc_A": "BiGRU content roles on A", "spcn_lexical_acc_A": "SPCN content roles on A",
        "spcn_none_acc_B": "SPCN without learning on B", "spcn_none_acc_A": "SPCN without learning on A",
        "context_free_acc_B": "context-free control on B (function words by role, others the majority content role)",
        "spcn_learning_gain_B": "SPCN minus SPCN without learning on B (paired gain)",
        "{reader}_attractor_acc_{k}": "{reader} subject number after the stack, {k}",
        "{reader}_attractor_slope": "{reader}, change in accuracy per attractor",
        "{reader}_lexical_causal_acc_B": "{reader} causally available content roles on B (the deciding word unseen)",
        "lag_sigma": "noise per state number per step in the lag study (normalised units; training and reading)",
        "lag_decoder_bank_fail_lag": "first lag at which the closed-form decoder of the noisy EMA trace bank reads "
                                     "fewer than half of the words",
        "lag_oracle_{who}_{N}": "word identity at lag {N}, {who} with the noise, oracle fed fresh documents",
        "lag_oracle_{who}_converged_{N}": "word identity at lag {N}, {who} with the noise, oracle stopped flat or "
                                          "solved (share of seeds)",
        "lag_oracle_chance_{N}": "most frequent word (chance) at lag {N}",
        "lag_decoder_bank_{N}": "word identity at lag {N}, EMA trace bank with the noise, closed-form decoder",
        "lag_decoder_bank_exact_{N}": "word identity at lag {N}, EMA trace bank without noise (exact arithmetic), "
                                      "closed-form decoder",
        "{reader}_content_acc_lag_{N}": "{reader} content roles fixed {N} tokens back on A",
        "lag{N}_{target}_acc_{state}": "word {target} at lag {N}, {state} with the noise, linear probe",
    },
}
"""What notebooks 01 and 02 write (a name in braces is a field; see :class:`~paper_lib.pipeline.labels.Labels`),
with the words a reader sees for it."""

LABELS = Labels({**METRICS["01_grammar_probe"], **METRICS["02_transfer"]},
                {"reader": READERS, "N": r"\d+", "target": {"identity": "identity", "role": "role"},
                 "k": {"ge1": ">= 1 attractor", **{str(k): f"{k} attractor{'s' * (k != 1)}" for k in range(10)}},
                 "state": {"bank": "EMA trace bank", "gru": "GRU state"}, "who": LAG_STATES})

# --------------------------------------------------------------------------- rules and gates only this family uses

def near(name: str, paper: float, yes: float, partly: float) -> Rule:
    """yes if |ours - paper| <= yes; partly if <= partly; else no (the reason says which side)."""
    def rule(m: Metrics) -> tuple[str, str]:
        d = _m(m, name) - paper
        word = "yes" if abs(d) <= yes else "partly" if abs(d) <= partly else "no"
        return word, f"ours {'above' if d > 0 else 'below'} the paper by {abs(d):.3f}"
    rule.__doc__ = f"yes if ours is within {yes:g} of {paper:g}; partly if within {partly:g}; else no"
    return rule


def beats(a: str, b: str, margin: float = 0.0) -> Rule:
    """yes if ``a`` beats ``b`` (by ``margin``) with 95% CIs apart; partly if ahead; else no.

    Higher is better. The reason names who is ahead (``a``, ``b`` or neither: tied) and whether
    the two 95% CIs are apart (either way round), e.g. ``"a - b = -0.120 (b ahead, CIs apart)"``;
    with a ``margin``, a lead with CIs apart but smaller than the margin says so.
    """
    def rule(m: Metrics) -> tuple[str, str]:
        d = _m(m, a) - _m(m, b)
        a_above = _m(m, a) - _ci(m, a) > _m(m, b) + _ci(m, b)
        b_above = _m(m, b) - _ci(m, b) > _m(m, a) + _ci(m, a)
        word = "yes" if d >= margin and a_above else "partly" if d > 0 else "no"
        who = a if d > 0 else b if d < 0 else "tied"
        ahead = "tied" if who == "tied" else f"{who} ahead"
        cis = "CIs apart" if a_above or b_above else "CIs overlap"
        short = f", short of the {margin:g} margin" if 0 < d < margin else ""
        return word, f"{a} - {b} = {d:+.3f} ({ahead}, {cis}{short})"
    extra = f" by >= {margin:g}" if margin else ""
    otherwise = "ahead with CIs overlapping" if margin <= 0 else "ahead otherwise"
    rule.__doc__ = f"yes if {a} beats {b}{extra} with 95% CIs apart; partly if {otherwise}; else no"
    return rule


def beats_each(a: str, rivals: Iterable[str]) -> Rule:
    """yes if ``a`` beats every rival with 95% CIs apart; partly if it beats at least one with CIs
    apart, or is ahead of every rival with CIs overlapping; else no (higher is better).

    Our design (it sets SPCN against both causal GRU taggers, with and without ``<unk>``
    training); the reason lists each pair as :func:`beats` writes it.
    """
    rivals = tuple(rivals)
    if not rivals:
        raise ValueError("beats_each needs at least one rival metric")

    def rule(m: Metrics) -> tuple[str, str]:
        apart = [_m(m, a) - _ci(m, a) > _m(m, b) + _ci(m, b) for b in rivals]
        ahead = [_m(m, a) > _m(m, b) for b in rivals]
        word = "yes" if all(apart) else "partly" if any(apart) or all(ahead) else "no"
        return word, "; ".join(beats(a, b)(m)[1] for b in rivals)
    rule.__doc__ = (f"yes if {a} beats each of {', '.join(rivals)} with 95% CIs apart; partly if it beats one "
                    "with CIs apart or is ahead of all with CIs overlapping; else no")
    return rule


def beats_negative_controls(name: str, controls: Iterable[str]) -> Gate:
    """Informative only if ``name`` beats every negative control that was measured (a model that
    lacks what the claim credits, e.g. SPCN without learning) with 95% CIs apart, and at least
    one was: a number that the negative control reaches too is not attributable to the
    claimed mechanism (our design)."""
    controls = tuple(controls)

    def gate(m: Metrics) -> str | None:
        present = [c for c in controls if c in m]
        if not present:
            return f"no negative control measured ({', '.join(controls)})"
        ties = [f"{c} {_m(m, c):.3f} ± {_ci(m, c):.3f}" for c in present
                if not _m(m, name) - _ci(m, name) > _m(m, c) + _ci(m, c)]
        if not ties:
            return None
        return (f"{name} {_m(m, name):.3f} ± {_ci(m, name):.3f} does not beat the negative control(s) "
                f"{'; '.join(ties)} with CIs apart: the number is not attributable to what the claim credits")
    return gate


def ceiling_above_floor(ceiling: str, floor: str) -> Gate:
    """Informative only if ``ceiling`` (the best the setup can learn) beats ``floor`` (no learning)
    with 95% CIs apart: if even the ceiling cannot rise above the floor, a learner that ties the
    floor says nothing about learning (our design)."""
    def gate(m: Metrics) -> str | None:
        if _m(m, ceiling) - _ci(m, ceiling) > _m(m, floor) + _ci(m, floor):
            return None
        return (f"the ceiling {ceiling} {_m(m, ceiling):.3f} ± {_ci(m, ceiling):.3f} does not beat the floor "
                f"{floor} {_m(m, floor):.3f} ± {_ci(m, floor):.3f} with CIs apart: no room to show learning")
    return gate


def paired_difference(diffs: Iterable[float]) -> tuple[str, str]:
    """Per-seed differences ``a - b`` -> ``("gain" | "loss" | "no difference" | "undetermined", text)``.

    A gain (loss) when the 95% CI of the mean difference lies above (below) 0; undetermined with
    fewer than 2 seeds. ``text``: ``"+0.012 ± 0.004 (n=5): a gain"`` and the like.
    """
    s = mean_ci95(list(diffs))
    if s["n"] < 2 or not math.isfinite(s["ci95"]):
        return "undetermined", f"{format_mean_ci(s, 3)}: undetermined"
    word = "gain" if s["mean"] - s["ci95"] > 0 else "loss" if s["mean"] + s["ci95"] < 0 else "no difference"
    words = {"gain": "a gain", "loss": "a loss", "no difference": "no difference within the 95% CI"}[word]
    return word, f"{s['mean']:+.3f} ± {s['ci95']:.3f} (n={s['n']}): {words}"


# --------------------------------------------------------------------------- the claims

CLAIMS = Claims((
    Claim("within_A", "SPCN role accuracy within Grammar A with zero labels (probe), 96% of the supervised BiGRU",
          "0.960", 0.960, "01_grammar_probe", ("spcn_probe_acc_A", "spcn_over_bigru_A"),
          near("spcn_probe_acc_A", 0.960, 0.03, 0.08),
          gate=beats_negative_controls("spcn_probe_acc_A", ("spcn_untrained_acc_A", "spcn_level1_floor_acc_A")),
          prefixes=("spcn_level1_floor_acc_A", "spcn_untrained_acc_A", "bigru_acc_A"),
          figure="table1.md", versus="spcn_level1_floor_acc_A", gated="the number; not attributable to learning",
          number=near("spcn_probe_acc_A", 0.960, 0.03, 0.08),
          controls="positive: the supervised BiGRU on the same sentences (bigru_acc_A, the paper's 96% is of it); "
                   "negative: the untrained SPCN and the level-1 traces read by the same probe (no learning), which "
                   "SPCN must beat with CIs apart for the number to be credited to learning (the gate)",
          figures=("accuracy_sources", "per_role")),
    # The Hebbian settings were chosen on seed 0's scores: the row is decided on fresh seeds
    # (settings fixed before they ran, metrics ending in _fresh); the first seeds are shown beside them.
    Claim("learning", "Label-free learning adds role information beyond the fixed word code and its traces, where the "
          "fixed code cannot do the job: Grammar B's unseen content words, with word codes learned from unlabelled A "
          "and B sentences (Hebbian, zero labels; the probe trained on A's labels; decided on fresh seeds)",
          "implied (PGHU learns the representation)", None, "01_grammar_probe",
          ("spcn_learned_content_acc_B_fresh", "spcn_floor_content_acc_B_fresh"),
          beats("spcn_learned_content_acc_B_fresh", "spcn_floor_content_acc_B_fresh"),
          gate=ceiling_above_floor("backprop_content_acc_B_fresh", "spcn_floor_content_acc_B_fresh"),
          prefixes=("backprop_content_acc_B_fresh", "spcn_category_codes_content_acc_B_fresh",
                    "spcn_learned_content_acc_B", "spcn_floor_content_acc_B", "backprop_content_acc_B",
                    "spcn_category_codes_content_acc_B", "spcn_learned_feat_acc_A", "spcn_level1_floor_acc_A",
                    "spcn_backprop_acc_A", "spcn_untrained_acc_A"),
          figure="learned_codes_B.png", versus="spcn_floor_content_acc_B_fresh",
          controls="positive: the backprop ceiling (codes trained on a label-free fill-in loss) must beat the fixed "
                   "codes with CIs apart (the gate); negative: the fixed codes (no learning), which the Hebbian codes "
                   "must beat; oracle: B words given the codes of A's words of their category (what the readout does "
                   "with codes that carry the category); the rule reads the fresh seeds only, the Hebbian settings "
                   "having been chosen on seed 0",
          figures=("learned_codes_B", "pghu_learning")),
    Claim("transfer_B", "SPCN transfers A -> B (unseen vocabulary); the total mixes function words and content words",
          "0.618", 0.618, "02_transfer", ("spcn_acc_B", "spcn_learning_gain_B", "context_free_acc_B"),
          gr.learning_and_context("spcn_learning_gain_B", 0.10, "spcn_acc_B", "context_free_acc_B",
                                  near("spcn_acc_B", 0.618, 0.10, 0.20)),
          gate=gr.positive_beats("bigru_acc_B", "context_free_acc_B"),
          prefixes=("spcn_function_acc_B", "spcn_content_acc_B", "spcn_none_acc_B", "bigru_acc_B"), figure="table2.md",
          versus="context_free_acc_B", number=near("spcn_acc_B", 0.618, 0.10, 0.20),
          controls="positive: the BiGRU on B must beat the context-free control with CIs apart (a reader of context "
                   "can use it; the gate); negative: the context-free control (function words by their A role, every "
                   "other word the most frequent content role) and SPCN without learning, which SPCN must beat, the "
                   "latter by the row's 0.10 margin (paired over seeds), for the number to be credited to learning",
          figures=("per_role", "timescales")),
    # The paper's 0.84: role accuracy on deep-embedded tokens (depth >= 2) of held-out Grammar A.
    Claim("deep", "SPCN reads the roles of deep-embedded tokens (depth >= 2, within held-out Grammar A) at the "
          "paper's 0.84, above a reader that ignores context", "0.84", 0.84, "02_transfer", ("spcn_deep_acc_A",),
          unless(beats_negative_controls("spcn_deep_acc_A", ("context_free_deep_acc_A",)),
                 "the number; not attributable to context", near("spcn_deep_acc_A", 0.84, 0.05, 0.10)),
          gate=any_solves(("bigru_deep_acc_A",), 0.9), number=near("spcn_deep_acc_A", 0.84, 0.05, 0.10),
          prefixes=("context_free_deep_acc_A", "bigru_deep_acc_A", "gru_causal_deep_acc_A"),
          figure="accuracy_by_depth.png", versus="context_free_deep_acc_A",
          controls="positive: the BiGRU on the same tokens must reach 0.9 (the roles are learnable); negative: the "
                   "context-free control (function words by role, others the majority content role), which SPCN must "
                   "beat with CIs apart for the number to be credited to reading context",
          figures=("accuracy_by_depth",)),
    # Deep embedding as number agreement across attractors (paper_lib.data.agreement): stacks of 1-4
    # relatives, decided on how fast SPCN's accuracy falls per attractor against the causal GRU's.
    Claim("attractors", "SPCN on deep embedding: its accuracy on the subject's number after a centre-embedded stack "
          "of 1-4 relatives falls with each attractor faster than the causal GRU's (Linzen et al. 2016; chance 0.5)",
          "beyond the paper", None, "02_transfer", ("spcn_attractor_slope", "gru_causal_attractor_slope"),
          gr.falls_faster("spcn_attractor_slope", "gru_causal_attractor_slope"),
          gate=first_gate(any_solves(("bigru_attractor_acc_ge1",), 0.9),
                          gr.all_solve(("gru_causal_attractor_acc_0",), 0.9),
                          gr.fails_from("heuristic_attractor_acc_", 2, 0.75)),
          prefixes=("spcn_attractor_acc_", "gru_causal_attractor_acc_", "bigru_attractor_acc_",
                    "heuristic_attractor_acc_", "bigru_attractor_slope", "heuristic_attractor_slope",
                    "spcn_deep_acc_hard", "bigru_deep_acc_hard", "gru_causal_deep_acc_hard"),
          figure="accuracy_by_attractors.png", headline="spcn_attractor_slope", versus="gru_causal_attractor_slope",
          controls="positive: the BiGRU, which also reads the main verb, must reach 0.9 (the label is decidable), and "
                   "the causal GRU must reach 0.9 without attractors (a learned causal state can do it); negative: "
                   "the better of two surface heuristics (the nearest noun's number, the majority number) must fail "
                   "at every k >= 2 (upper 95% CI below 0.75)",
          figures=("accuracy_by_attractors",)),
    Claim("structure", "SPCN beats the recurrent tagger on structure-dependent roles on B, like for like: on the "
          "structural roles that the preceding words decide (causal SPCN vs the causal GRU tagger with and without "
          "<unk> training)", "SPCN > BiGRU", None, "02_transfer",
          ("spcn_struct_context_acc_B", "gru_causal_struct_context_acc_B", "causal_gru_nodrop_struct_context_acc_B"),
          beats_each("spcn_struct_context_acc_B", ("gru_causal_struct_context_acc_B",
                                                   "causal_gru_nodrop_struct_context_acc_B")),
          prefixes=("struct_context_share_B", "spcn_struct_category_acc_B", "gru_causal_struct_category_acc_B",
                    "causal_gru_nodrop_struct_category_acc_B", "spcn_bidir_struct_context_acc_B",
                    "bigru_nounk_struct_context_acc_B"),
          figure="structure_split.md", versus="causal_gru_nodrop_struct_context_acc_B",
          controls="positive: none gates the row (both rivals are trained taggers reading the same tokens); the "
                   "bidirectional SPCN and the BiGRU without <unk> training on the same tokens are shown (what a "
                   "reader of both sides gets); negative: the structure that needs the word's category "
                   "(spcn_struct_category_acc_B), shown apart, which the preceding words do not decide; the rivals "
                   "are causal, like SPCN, one with and one without <unk> training, so that neither is favoured by "
                   "how it met unseen words"),
    Claim("content", "The recurrent tagger is far ahead on content-dependent roles that a causal reader can see "
          "(within A), causal against causal: the causal GRU tagger trained without <unk> dropout against causal SPCN "
          "(the GRU with dropout and the BiGRU shown apart); roles fixed by a later verb are a causality confound, "
          "shown apart", "BiGRU >> SPCN", None, "02_transfer",
          ("causal_gru_nodrop_lexical_causal_acc_A", "spcn_lexical_causal_acc_A"),
          beats("causal_gru_nodrop_lexical_causal_acc_A", "spcn_lexical_causal_acc_A", margin=0.10),
          gate=first_gate(gr.all_solve(("bigru_lexical_causal_acc_A",), 0.9),
                          gr.drops_without("spcn_lexical_causal_acc_A", "spcn_lexical_causal_acc_B")),
          prefixes=("gru_causal_lexical_causal_acc_A", "bigru_lexical_causal_acc_A", "bigru_lexical_acc_A",
                    "spcn_lexical_acc_A", "causal_gru_nodrop_lexical_causal_acc_B", "gru_causal_lexical_causal_acc_B",
                    "spcn_lexical_causal_acc_B", "spcn_content_acc_lag_", "gru_causal_content_acc_lag_",
                    "bigru_content_acc_lag_"),
          figure="role_groups.md", versus="spcn_lexical_causal_acc_A",
          controls="positive: the BiGRU (supervised, both directions) must read these roles at 0.9 (they are "
                   "learnable); negative: SPCN on the same roles in Grammar B, where the deciding word is unseen, "
                   "must fall below its Grammar A accuracy with CIs apart (the roles need the word's identity); the "
                   "comparator is the causal GRU without <unk> dropout, because on content roles of seen words the "
                   "dropout hides exactly the word identity the row is about (the GRU with dropout is shown beside it)",
          figures=("content_by_lag", "accuracy_by_dependency")),
    Claim("lag_equal_state", "At equal state and under noise 0.02 per number per step, a learned GRU keeps word "
          "identity that the fixed trace bank loses (lags 1, 2 and 4; the bank's traces and the GRU's state carry "
          "the noise after every step, the GRU in training too; both read by the same MLP oracle fed fresh documents "
          "with fresh noise, the bank also by its closed-form decoder)", "beyond the paper", None, "02_transfer",
          ("lag_oracle_gru_4", "lag_oracle_bank_4", "lag_decoder_bank_4", "lag_sigma"),
          gr.at_noise(gr.lag_bounds((1, 2, 4)), "lag_sigma", LAG_SIGMA),
          gate=first_gate(gr.all_solve(("lag_oracle_bank_1", "lag_oracle_gru_1"), 0.95),
                          gr.near_chance("lag_oracle_bank_mismatched_4", "lag_oracle_chance_4")),
          figure="lag_oracle_convergence.png",
          prefixes=("lag_oracle_gru_", "lag_oracle_bank_", "lag_decoder_bank_", "lag_oracle_chance_",
                    "lag1_identity_acc_", "lag4_identity_acc_"),  # the linear probe's, shown
          headline="lag_oracle_gru_4", versus="lag_oracle_bank_4",
          controls="positive: the oracle must read the word one back from both noisy states at 0.95; negative: the "
                   "same oracle fitted on the noisy bank's states paired with another document's words must read no "
                   "more than chance + 0.02; oracles: the MLP readers fed fresh documents and fresh noise (a lower "
                   "bound, and an upper bound only where every seed's reader stopped flat or solved: the convergence "
                   "curves) and, for the bank, the closed-form decoder of its 0.5 trace, which fails from some lag on "
                   "under the noise; the same decoder without noise is shown for contrast (exact up to float32 "
                   "rounding: why the row needs a noise budget)",
          figures=("lag_decodability",)),
), LABELS)
