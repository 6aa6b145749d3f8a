"""Words, not identifiers: every model, arm, state, reader, rule and stop reason a notebook can plot or tabulate
has words in its word map, and no word is itself a code name; the table columns' words too
(``paper_lib.claims.words``). ``paper_lib.pipeline.figcheck`` stops a smoke run whose figure shows a code name,
and ``tests/test_notebooks.py`` checks the headers of every table a notebook shows."""
from __future__ import annotations

import pytest

from paper_lib.claims.boundary import DEPTH_ARMS
from paper_lib.claims.grammar import LAG_STATES, READERS
from paper_lib.claims.lm import MODELS as LM_MODELS
from paper_lib.claims.recall import MODEL_WORDS
from paper_lib.claims.update import UPDATE_STATES
from paper_lib.claims.words import COLUMNS
from paper_lib.experiments import associative_recall, grammar_probe, update_recall
from paper_lib.models.depth_probe import ARMS
from paper_lib.pipeline.figcheck import code_names
from paper_lib.predictors import PREDICTORS
from paper_lib.stopping import STOP_WORDS

MAPS = {"depth arms": (DEPTH_ARMS, ARMS), "recall models": (MODEL_WORDS, associative_recall.MODELS),
        "update states": (UPDATE_STATES, update_recall.MODELS), "stop reasons": (STOP_WORDS, STOP_WORDS),
        "rules": (grammar_probe.RULE_WORDS, grammar_probe.RULE_WORDS), "readers": (READERS, READERS),
        "lag states": (LAG_STATES, LAG_STATES), "language models": (LM_MODELS, LM_MODELS),
        "predictors": ({n: p.label for n, p in PREDICTORS.items()}, PREDICTORS), "columns": (COLUMNS, COLUMNS)}


@pytest.mark.parametrize("what", MAPS)
def test_every_name_a_notebook_plots_has_words(what):
    words, names = MAPS[what]
    assert [n for n in names if n not in words] == [], f"{what} without words"
    assert [w for w in words.values() if code_names(w)] == [], f"{what}: a word that is code"


def test_the_check_finds_code_names_and_leaves_words_and_math():
    assert code_names("spen_linear, spen_token_attention and depth_both_acc_dwa_16") == [
        "spen_linear", "spen_token_attention", "depth_both_acc_dwa_16"]
    assert code_names("SPEN, linear reader; learned depth weights; $h_{t-1}$; gap Δ; 1/α = 50") == []


def test_no_published_figure_records_a_code_name():
    """At cpu a legibility problem is a warning recorded in ``figures.json``: none may be a code name."""
    import json
    from pathlib import Path

    for meta in sorted((Path(__file__).resolve().parents[1] / "figures").glob("*/figures.json")):
        for stem, entry in json.loads(meta.read_text(encoding="utf-8")).items():
            assert not [p for p in entry.get("problems", []) if "code name" in p], f"{meta.parent.name}/{stem}"
