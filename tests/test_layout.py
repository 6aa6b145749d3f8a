"""The house's layering: no import loop, no import against the wings.

Wings, from the bottom: ``pipeline`` (profiles, runner, provenance, report, stats: knows no
science, and names no metric of the claims) <- the mechanisms (``ema``, ``hebbian``) <-
``predictors`` <- ``models`` <- ``data``, training and evaluation <- ``bounds`` (the oracles and
bounds of what a fixed state holds, and their resource model) <- the language-model recipe
(``lm_recipe``) <- ``experiments`` (one per notebook; none imports another). ``claims`` (what
decides: the report's rows, their rules, the metrics' words) reads the plumbing and the
predictors' facts and is read by the experiments and the notebooks only. The test reads every module's imports with ``ast``: at
module level, inside functions and in ``if __name__ == "__main__":`` blocks (a script's
imports make loops and layering breaks too).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "paper_lib"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """paper_lib modules imported by ``path`` (absolute names, at any depth of the file)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.startswith("paper_lib"):
                out.add(mod)
                out.update(f"{mod}.{a.name}" for a in node.names)  # `from . import x` imports module x
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("paper_lib"))
    return out


MODULES = {_module_name(p): p for p in PKG.rglob("*.py")}
GRAPH = {m: {i for i in _imports(p) if i in MODULES and i != m} for m, p in MODULES.items()}


def _wing(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "root"


def find_loop(graph: dict[str, set[str]]) -> list[str] | None:
    """An import cycle of ``graph`` as a path, or None (a package importing its own submodules
    is not a loop)."""
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for n in sorted(graph.get(m, ())):
            if n.startswith(m + "."):
                continue
            if state.get(n) == 1 and not m.startswith(n + "."):
                return path + [n]
            if n not in state:
                found = visit(n, path + [n])
                if found:
                    return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [m])
            if found:
                return found
    return None


def test_no_import_loop():
    loop = find_loop(GRAPH)
    assert loop is None, "import loop: " + " -> ".join(loop or [])


def test_the_checker_finds_a_planted_loop():
    planted = {"paper_lib.a": {"paper_lib.b"}, "paper_lib.b": {"paper_lib.c"}, "paper_lib.c": {"paper_lib.a"}}
    assert find_loop(planted) == ["paper_lib.a", "paper_lib.b", "paper_lib.c", "paper_lib.a"]
    assert find_loop({"paper_lib.p": {"paper_lib.p.x"}, "paper_lib.p.x": {"paper_lib.q"}}) is None


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _wing(m) == "pipeline"))
def test_pipeline_imports_no_science(module):
    bad = sorted(i for i in GRAPH[module] if _wing(i) != "pipeline")
    assert not bad, f"{module} (pipeline) imports {bad}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _wing(m) in ("models", "predictors", "data")
                                          or m in ("paper_lib.ema", "paper_lib.hebbian")))
def test_mechanisms_models_and_data_import_no_experiment(module):
    bad = sorted(i for i in GRAPH[module] if _wing(i) == "experiments" or i in ("paper_lib.train", "paper_lib.lm_recipe"))
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _wing(m) == "bounds"))
def test_the_bounds_read_mechanisms_data_and_training_only(module):
    """The oracles and bounds (what a fixed state can hold at most) import no experiment, claim or recipe."""
    bad = sorted(i for i in GRAPH[module] if _wing(i) in ("experiments", "claims") or i == "paper_lib.lm_recipe")
    assert not bad, f"{module} (bounds) imports {bad}"


def test_every_oracle_and_bound_lives_in_the_bounds_wing():
    import re

    loose = sorted(m for m in MODULES if _wing(m) != "bounds"
                   and re.search(r"oracle|bound(?!ary)|noise_budget", m.rsplit(".", 1)[-1]))
    assert not loose, f"oracles or bounds outside paper_lib/bounds/: {loose}"
    assert {"oracle", "fresh_oracle", "update_oracle", "update_bound", "bank_family", "noise_budget"} <= {
        m.rsplit(".", 1)[-1] for m in MODULES if _wing(m) == "bounds"}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _wing(m) == "experiments" and m.count(".") == 2))
def test_an_experiment_imports_no_other_experiment(module):
    bad = sorted(i for i in GRAPH[module] if _wing(i) == "experiments" and i != "paper_lib.experiments")
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_over_400_lines(module):
    n = len(MODULES[module].read_text().splitlines())
    assert n <= 420, f"{module} has {n} lines (limit about 400)"


def test_the_plumbing_stays_smaller_than_the_science_it_serves():
    """``pipeline/`` (running, stamping, rendering, reporting) at most 3,650 lines in all: 3,400 before the verdict's
    words (the two columns, their legend, the figure's band), the summary tables, the published HTML's findings,
    JupyterLab's one-line errors and the code-name check came in, less what they replaced."""
    files = sorted((PKG / "pipeline").rglob("*.py"))
    n = sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)
    assert len(files) > 20 and n <= 3650, f"paper_lib/pipeline/ has {n} lines in {len(files)} files (limit 3,650)"


@pytest.mark.parametrize("module", ["paper_lib.train", "paper_lib.evaluate", "paper_lib.checkpoint"])
def test_training_imports_no_recipe_or_experiment(module):
    bad = sorted(i for i in GRAPH[module] if _wing(i) == "experiments" or i == "paper_lib.lm_recipe")
    assert not bad, f"{module} imports {bad}"


def test_main_blocks_are_read(tmp_path):
    script = tmp_path / "paper_lib" / "x.py"
    script.parent.mkdir()
    script.write_text('if __name__ == "__main__":\n    from .experiments.spen_train import main\n')
    global PKG
    old, PKG = PKG, tmp_path / "paper_lib"
    try:
        assert "paper_lib.experiments.spen_train" in _imports(script)
    finally:
        PKG = old


def test_notebook_dependencies_follow_its_imports():
    from paper_lib.pipeline.deps import dependencies

    root = PKG.parent
    deps01 = {str(p.relative_to(root)) for p in dependencies(root / "notebooks" / "01_grammar_probe.py")}
    assert {"paper_lib/experiments/grammar_probe.py", "paper_lib/models/spcn.py", "paper_lib/hebbian.py",
            "paper_lib/ema.py", "paper_lib/pipeline/provenance.py"} <= deps01
    assert "paper_lib/models/spen.py" not in deps01 and "paper_lib/predictors/base.py" not in deps01
    deps04 = {str(p.relative_to(root)) for p in dependencies(root / "notebooks" / "04_predictor_ablation.py")}
    assert {"paper_lib/predictors/selective.py", "paper_lib/models/spen.py", "paper_lib/train.py",
            "paper_lib/lm_recipe.py"} <= deps04
    with pytest.raises(FileNotFoundError, match="no such file"):
        dependencies(root / "notebooks" / "99_none.py")


CLAIMS_MAY_READ = ("pipeline", "predictors", "claims")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _wing(m) == "claims"))
def test_the_claims_read_only_the_plumbing_and_the_predictors(module):
    bad = sorted(i for i in GRAPH[module] if _wing(i) not in CLAIMS_MAY_READ)
    assert not bad, f"{module} (claims) imports {bad}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _wing(m) not in ("claims", "experiments")))
def test_nothing_below_the_experiments_reads_the_claims(module):
    bad = sorted(i for i in GRAPH[module] if _wing(i) == "claims")
    assert not bad, f"{module} imports {bad}"


def _metric_patterns():
    """Every metric the claims know, as regular expressions: each family's exact names and
    templates (:class:`paper_lib.pipeline.labels.Labels`) and each claim's families (prefixes)."""
    import re

    from paper_lib.claims.registry import CLAIMS

    labels = CLAIMS.labels
    exact = [re.escape(n) for n in labels.exact] + [re.sub(r"\(\?P<\w+>", "(?:", p.pattern) for _, p, _, _ in labels.templates]
    prefixes = {p for c in CLAIMS for p in (*c.prefixes, *c.shown, c.headline, c.versus, *c.metrics)
                if p and isinstance(p, str)}
    return re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(exact) + r")(?![A-Za-z0-9_])"), sorted(prefixes)


def metric_names_in(text: str) -> list[str]:
    """The metric names of any claims family that ``text`` names (as a word, or a claim's family prefix)."""
    import re

    pattern, prefixes = _metric_patterns()
    found = [m.group() for m in pattern.finditer(text)]
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    return found + sorted(p for p in prefixes if any(w == p or w.startswith(p) and p.endswith("_") for w in words))


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _wing(m) == "pipeline"))
def test_the_plumbing_names_no_metric(module):
    """What decides lives in the claims: no pipeline module (code, strings, comments) names a metric."""
    named = metric_names_in(MODULES[module].read_text())
    assert not named, f"{module} names metric(s) {sorted(set(named))}: they belong to paper_lib/claims/"


def test_the_fence_finds_a_planted_metric_name():
    planted = metric_names_in('x = m["spcn_probe_acc_A"]  # recall_acc_spen_8 and depth_both_acc_dwa_16')
    assert {"spcn_probe_acc_A", "recall_acc_spen_8", "depth_both_acc_dwa_16"} <= set(planted)
    assert metric_names_in("for k in m if k.startswith('recall_acc_spen_')") == ["recall_acc_spen_"]
    assert metric_names_in("spcn_probe_accuracy, recall_by_pairs, loss_by_position") == []


def test_every_metric_a_claim_reads_has_words():
    """The metrics a claim reads or shows by name (its rule's, its headline and against cells) have
    a label in their family's METRICS, and so does every metric it shows from the published
    figures (``figures/<notebook>/metrics.json``; ``tests/test_notebooks.py`` checks the same at smoke)."""
    import json

    from paper_lib.claims.registry import CLAIMS

    labels = CLAIMS.labels
    for c in CLAIMS:
        for name in (*c.metrics, *(n for n in (c.headline, c.versus) if isinstance(n, str) and n
                                   and not n.endswith("_"))):
            assert labels.has(name), f"claim {c.key}: metric {name} has no label"
        path = PKG.parent / "figures" / c.notebook / "metrics.json"
        shown = [k for k in json.loads(path.read_text())["metrics"] if k.startswith((*c.prefixes, *c.shown))
                 or k in c.metrics] if path.exists() else []
        assert [k for k in shown if not labels.has(k)] == [], f"claim {c.key} shows metrics without a label"
