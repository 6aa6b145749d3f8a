"""Profiles, provenance, atomic writes, statistics and the notebook runner's errors."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from paper_lib.pipeline.atomic import atomic_path, write_json
from paper_lib.pipeline.profiles import PROFILE_NAMES, PROFILES, check_profile, get_profile
from paper_lib.pipeline.provenance import Outputs, output_dir
from paper_lib.pipeline.runner import main as notebooks_main
from paper_lib.pipeline.settings import configure
from paper_lib.pipeline.stats import mean_ci95
from paper_lib.profile_settings import PROFILE_SETTINGS

ROOT = Path(__file__).resolve().parent.parent


def test_every_profile_has_settings_for_known_sections_only():
    assert set(PROFILE_SETTINGS) == set(PROFILE_NAMES) and PROFILE_SETTINGS["cpu"] == {}
    sections = {"grammar_probe", "transfer", "lm", "spen_train", "predictor_ablation", "associative_recall", "boundary_map",
                "update_recall"}
    assert set(PROFILE_SETTINGS["smoke"]) == sections and set(PROFILE_SETTINGS["paper"]) <= sections


def test_a_profile_is_one_record_that_every_module_asks():
    smoke, cpu, paper = (get_profile(n) for n in ("smoke", "cpu", "paper"))
    assert (smoke.publishes, smoke.proves_nothing, smoke.threads, smoke.banner) == (
        False, True, 1, "Smoke run: checks the plumbing, proves nothing.")
    assert cpu.publishes and not cpu.proves_nothing and cpu.readme and (cpu.figures, cpu.docs) == ("figures", "docs")
    assert paper.publishes and not paper.readme and paper.banner == ""
    assert set(PROFILES) == set(PROFILE_NAMES)


def test_no_module_spells_a_profile_by_its_name():
    """Only the profile records say what a profile does (pipeline/profiles.py): nothing else compares
    a profile with a name."""
    import re

    pattern = re.compile(r"""profile\)?\s*[!=]=\s*["'](smoke|cpu|paper)["']""")
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in sorted((ROOT / "paper_lib").rglob("*.py"))
            if p.name != "profiles.py" for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []
    assert pattern.search('if profile == "smoke":') and pattern.search("check_profile(profile) != 'smoke'")


def test_unknown_profile_is_one_line_naming_the_allowed():
    with pytest.raises(ValueError) as err:
        check_profile("laptop")
    assert str(err.value) == "unknown profile 'laptop'; allowed: smoke, cpu, paper, gpu"
    proc = subprocess.run([sys.executable, "-m", "paper_lib.pipeline.profiles", "laptop"], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.strip() == "error: unknown profile 'laptop'; allowed: smoke, cpu, paper, gpu"
    assert notebooks_main(["notebooks/none.py", "--profile", "laptop"]) == 2


def test_configure_never_changes_the_profile_settings():
    from paper_lib.experiments.spen_train import Settings

    before = json.dumps(PROFILE_SETTINGS["smoke"]["spen_train"], sort_keys=True, default=str)
    s = configure(Settings(), "spen_train", "smoke", {"train": {"steps": 3}}, PROFILE_SETTINGS)
    assert s.train.steps == 3 and json.dumps(PROFILE_SETTINGS["smoke"]["spen_train"], sort_keys=True, default=str) == before


def test_the_gpu_profile_builds_the_language_models_of_notebooks_03_and_04():
    from paper_lib.experiments.predictor_ablation import Settings as AblationSettings
    from paper_lib.experiments.spen_train import Settings

    gpu = get_profile("gpu")
    assert (gpu.figures, gpu.docs, gpu.proves_nothing, gpu.readme) == ("figures/gpu", "docs/gpu", False, False)
    assert set(PROFILE_SETTINGS["gpu"]) == {"lm", "spen_train", "predictor_ablation"}
    s = configure(Settings(), "spen_train", "gpu", None, PROFILE_SETTINGS)
    sizes = (s.spen.n_layer, s.spen.d_model, s.transformer.n_head, s.train.seq_len, s.train.batch_size, s.train.steps)
    assert sizes == (8, 512, 8, 1024, 32, 3000)
    assert s.train.seq_len * s.train.batch_size * s.train.steps >= 9.8e7      # about 1e8 training tokens
    a = configure(AblationSettings(), "predictor_ablation", "gpu", None, PROFILE_SETTINGS)
    assert (a.spen.d_model, a.train.steps) == (512, 1000)


def test_mean_ci95_known_values():
    r = mean_ci95([1.0, 2.0, 3.0])
    assert r["mean"] == 2.0 and r["n"] == 3
    assert r["ci95"] == pytest.approx(4.302653 * 1.0 / math.sqrt(3), rel=1e-6)  # t_{0.975,2} * s / sqrt(n)
    assert math.isnan(mean_ci95([0.5])["ci95"])
    with pytest.raises(ValueError, match="at least one value"):
        mean_ci95([])


def test_atomic_path_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.json"
    write_json(target, {"a": 1})
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert json.loads(target.read_text()) == {"a": 1}
    assert target.stat().st_mode & 0o044 == 0o044  # readable by others, like any written file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def _figure():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    return fig


def test_outputs_stamp_every_file(tmp_path):
    _git_repo(tmp_path)  # publishing needs the commit of the sources (never "unknown" in figures/)
    out = Outputs("99_demo", "cpu", {"lr": 0.1}, seeds=[0, 1], root=tmp_path, publish=True)
    commit = out.commit
    assert out.dir == tmp_path / "figures" / "99_demo" and len(commit) == 12 and not commit.endswith("-dirty")
    png = out.save_figure(_figure(), "curve", alt="A falling line from 1 to 0.", title="Curve")
    out.save_table(pd.DataFrame({"model": ["a"], "acc": [0.5]}), "table1")
    out.write_metrics({"acc": [0.5, 0.7], "ratio": {"mean": 1.0, "ci95": 0.1, "n": 2}})
    manifest = json.loads((out.dir / "provenance.json").read_text())
    assert set(manifest) == {"curve.png", "curve.pdf", "figures.json", "table1.csv", "table1.md", "metrics.json"}
    stamp = manifest["curve.png"]
    assert stamp["profile"] == "cpu" and stamp["seeds"] == [0, 1] and stamp["parameters"] == {"lr": 0.1}
    assert stamp["source"] == "notebooks/99_demo.py" and stamp["git_commit"] == commit
    assert "date" not in stamp and "note" not in stamp  # what identifies the result, not when it ran
    assert b"99_demo" in png.read_bytes()  # PNG text chunk carries the stamp
    assert b"CreationDate" not in (out.dir / "curve.pdf").read_bytes()
    assert (out.dir / "table1.md").read_text().startswith("<!-- provenance:")
    metrics = json.loads((out.dir / "metrics.json").read_text())
    assert metrics["metrics"]["acc"]["mean"] == pytest.approx(0.6) and metrics["metrics"]["acc"]["n"] == 2
    assert "date" not in metrics and "note" not in metrics
    import torch  # the libraries the numbers depend on, beside the processor and the threads, in every stamp

    assert metrics["versions"]["torch"] == torch.__version__ and metrics["versions"]["blas"]
    assert {"cpu", "threads"} <= set(metrics) and all(s["versions"] == metrics["versions"] for s in manifest.values())
    assert b'"scikit-learn": ' in png.read_bytes()


def test_a_run_that_does_not_publish_writes_under_build(tmp_path, monkeypatch):
    monkeypatch.delenv("PAPER_LIB_PUBLISH", raising=False)
    _git_repo(tmp_path)  # a clean clone: publishing may say which commit
    out = Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path)  # Jupyter, a script, papermill by hand
    assert out.dir == tmp_path / "build" / "cpu" / "figures" / "99_demo" and not out.published
    monkeypatch.setenv("PAPER_LIB_PUBLISH", "1")
    assert Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path).dir == tmp_path / "figures" / "99_demo"
    smoke = Outputs("99_demo", "smoke", {}, seeds=[0], root=tmp_path)  # smoke never publishes
    assert smoke.dir == tmp_path / "build" / "smoke" / "figures" / "99_demo" and not smoke.published


def test_a_run_replaces_the_old_folder_only_when_complete(tmp_path):
    first = Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path)
    first.save_data(pd.DataFrame({"x": [1]}), "old_only")
    first.write_metrics({"acc": [0.5]})
    second = Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path)
    second.save_data(pd.DataFrame({"x": [2]}), "curve")
    assert sorted(p.name for p in first.dir.iterdir()) == ["metrics.json", "old_only.csv", "provenance.json"]
    second.write_metrics({"acc": [0.9]})  # complete: the new folder replaces the old one, no mixture
    assert sorted(p.name for p in second.dir.iterdir()) == ["curve.csv", "metrics.json", "provenance.json"]
    assert json.loads((second.dir / "metrics.json").read_text())["metrics"]["acc"]["mean"] == 0.9
    assert sorted(p.name for p in second.dir.parent.iterdir()) == ["99_demo"]  # no staging folder left


def test_a_failed_run_leaves_the_old_folder_intact(tmp_path):
    with Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path) as out:
        out.save_data(pd.DataFrame({"x": [1]}), "curve")
    before = (out.dir / "curve.csv").read_bytes()
    with pytest.raises(RuntimeError, match="cell failed"):
        with Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path) as out:
            out.save_data(pd.DataFrame({"x": [2]}), "curve")
            out.save_data(pd.DataFrame({"y": [2]}), "other")
            raise RuntimeError("cell failed")
    assert (out.dir / "curve.csv").read_bytes() == before and not (out.dir / "other.csv").exists()
    assert sorted(p.name for p in out.dir.parent.iterdir()) == ["99_demo"]


def test_a_rerun_with_the_same_numbers_rewrites_every_file_byte_for_byte(tmp_path):
    def run(root):
        with Outputs("99_demo", "cpu", {"lr": 0.1}, seeds=[0, 1], root=root, publish=True) as out:
            out.save_figure(_figure(), "curve", alt="A falling line from 1 to 0.", title="Curve")
            out.save_table(pd.DataFrame({"model": ["a"], "acc": [0.5]}), "table1")
            out.write_metrics({"acc": [0.5, 0.7]})
        return {p.name: p.read_bytes() for p in out.dir.iterdir()}

    _git_repo(tmp_path)  # publishing needs the commit of the sources
    first = run(tmp_path)
    import time

    time.sleep(1.1)  # a date with one-second resolution would differ
    second = run(tmp_path)
    assert set(first) == {"curve.png", "curve.pdf", "figures.json", "table1.csv", "table1.md", "metrics.json",
                          "provenance.json"}
    assert first == second


def test_smoke_outputs_say_they_prove_nothing(tmp_path):
    SMOKE_NOTE = get_profile("smoke").note

    with Outputs("99_demo", "smoke", {}, seeds=[0], root=tmp_path) as out:
        out.save_table(pd.DataFrame({"acc": [0.5]}), "table1")
        out.write_metrics({"acc": [0.5]})
    assert json.loads((out.dir / "metrics.json").read_text())["note"] == SMOKE_NOTE == "smoke run: checks the plumbing, proves nothing"
    assert (out.dir / "table1.md").read_text().splitlines()[0] == "**Smoke run: checks the plumbing, proves nothing.**"


def _git_repo(root: Path) -> None:
    for args in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    (root / "paper_lib").mkdir()
    (root / "paper_lib" / "m.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "sources"], cwd=root, check=True)


def test_the_stamp_names_the_commit_of_the_sources_and_refuses_a_dirty_tree(tmp_path):
    from paper_lib.pipeline.provenance import source_commit

    _git_repo(tmp_path)
    sources = source_commit(tmp_path)[0]
    assert len(sources) == 12 and not sources.endswith("-dirty")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "f.csv").write_text("1\n")
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run(["git", "commit", "-qm", "figures"], cwd=tmp_path, check=True)
    assert source_commit(tmp_path)[0] == sources  # committing results does not change the stamp
    (tmp_path / "paper_lib" / "m.py").write_text("x = 2\n")
    assert source_commit(tmp_path)[0] == sources + "-dirty"
    with pytest.raises(ValueError) as err:
        Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path, publish=True)
    assert str(err.value).startswith(f"refusing to publish to figures/ from uncommitted sources (commit {sources}-dirty")
    assert "\n" not in str(err.value)
    assert Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path).dir == tmp_path / "build" / "cpu" / "figures" / "99_demo"
    assert Outputs("99_demo", "smoke", {}, seeds=[0], root=tmp_path, publish=True).commit.endswith("-dirty")


def test_smoke_outputs_never_land_in_figures(tmp_path):
    assert output_dir("01_grammar_probe", "smoke", tmp_path) == tmp_path / "build" / "smoke" / "figures" / "01_grammar_probe"
    assert output_dir("01_grammar_probe", "paper", tmp_path) == tmp_path / "figures" / "01_grammar_probe"
    assert output_dir("01_grammar_probe", "paper", tmp_path, publish=False) == tmp_path / "build" / "paper" / "figures" / "01_grammar_probe"


def test_make_rejects_an_unknown_profile_before_installing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}  # under `make -j2 test`
    proc = subprocess.run(["make", "-s", "check-profile", "PROFILE=huge"], cwd=ROOT, capture_output=True, text=True,
                          env=env)
    assert proc.returncode != 0
    assert "unknown profile 'huge'; allowed: smoke, cpu, paper, gpu" in proc.stderr
    venv = tmp_path / "venv"
    proc = subprocess.run(["make", "all", "PROFILE=typo", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True,
                          env=env)
    assert proc.returncode != 0 and proc.stdout == "" and not venv.exists()  # nothing installed, nothing run
    assert proc.stderr.strip().endswith("*** error: unknown profile 'typo'; allowed: smoke, cpu, paper, gpu.  Stop.")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_format_mean_ci_says_when_there_is_no_interval():
    from paper_lib.pipeline.stats import format_mean_ci

    assert format_mean_ci([0.5]) == "0.500 (n=1, no interval)"
    assert format_mean_ci([1.0, 2.0, 3.0], digits=2) == "2.00 ± 2.48 (n=3)"
    assert format_mean_ci({"mean": 7.6, "ci95": float("nan"), "n": 1}, digits=1, unit=" nats") == "7.6 nats (n=1, no interval)"


def test_plot_helpers_stamp_and_mark():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_lib.pipeline.plots import legend_outside, mark_paper, stamp

    SMOKE_NOTE = get_profile("smoke").note

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="ours")
    mark_paper(ax, 0.96, "paper: 0.960")
    legend_outside(ax)
    stamp(fig, "smoke", 3, "95% CI over seeds")
    stamp(fig, "smoke", 1, "95% CI over seeds")
    texts = [t.get_text() for t in fig.texts] + [t.get_text() for t in ax.texts]
    assert "paper: 0.960" in texts
    assert any("profile: smoke · 3 seeds · error bars: 95% CI over seeds" in t and SMOKE_NOTE.upper() in t for t in texts)
    assert any("profile: smoke · 1 seed · no error bars (one seed)" in t for t in texts)  # a CI of one seed is none
    assert ax.get_legend().get_bbox_to_anchor() is not None
    with pytest.raises(ValueError, match="axis must be 'x' or 'y'"):
        mark_paper(ax, 1.0, "x", axis="z")
    plt.close(fig)


def test_a_second_write_of_one_file_in_a_run_is_refused(tmp_path):
    out = Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path)
    df = pd.DataFrame({"seed": [0], "acc": [0.5]})
    out.save_data(df, "per_seed")
    with pytest.raises(ValueError, match=r"^per_seed.csv was already written in this run by save_data; "
                                         r"give save_table's output another name$"):
        out.save_table(df.assign(acc=0.9), "per_seed")
    assert (out._stage / "per_seed.csv").read_text() == df.to_csv(index=False)   # the first is kept
    assert not (out._stage / "per_seed.md").exists()
    assert out.save_table(df, "summary").name == "summary.csv"          # another name is fine
