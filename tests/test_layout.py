"""The house's layering (issue "One house"): no import loop, no import against the wings.

Wings, from the bottom: ``pipeline`` (profiles, runner, provenance, report, stats: knows no
science) <- the mechanisms (``ema``, ``hebbian``) <- ``predictors`` <- ``models`` <- ``data``,
training and evaluation <- the language-model recipe (``lm_recipe``) <- ``experiments`` (one per
notebook; none imports another). The test reads every module's imports with ``ast``: at
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


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _wing(m) == "experiments" and m.count(".") == 2))
def test_an_experiment_imports_no_other_experiment(module):
    bad = sorted(i for i in GRAPH[module] if _wing(i) == "experiments" and i != "paper_lib.experiments")
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_over_400_lines(module):
    n = len(MODULES[module].read_text().splitlines())
    assert n <= 420, f"{module} has {n} lines (limit about 400)"


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
