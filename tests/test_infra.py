"""Profiles, provenance, atomic writes, statistics and the notebook runner's errors."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from paper_lib.pipeline.atomic import atomic_path, write_json
from paper_lib.pipeline.profiles import PROFILE_NAMES, PROFILES, check_profile, profile_overrides
from paper_lib.pipeline.provenance import Outputs, output_dir
from paper_lib.pipeline.runner import main as notebooks_main
from paper_lib.pipeline.stats import mean_ci95

ROOT = Path(__file__).resolve().parent.parent


def test_profiles_have_the_same_sections():
    sections = {name: set(PROFILES[name]) for name in PROFILE_NAMES}
    assert sections["smoke"] == sections["cpu"] == sections["paper"]
    assert {"grammar_probe", "transfer", "spen_train", "predictor_ablation"} <= sections["cpu"]


def test_unknown_profile_is_one_line_naming_the_allowed():
    with pytest.raises(ValueError) as err:
        check_profile("laptop")
    assert str(err.value) == "unknown profile 'laptop'; allowed: smoke, cpu, paper"
    proc = subprocess.run([sys.executable, "-m", "paper_lib.pipeline.profiles", "laptop"], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.strip() == "error: unknown profile 'laptop'; allowed: smoke, cpu, paper"
    assert notebooks_main(["notebooks/none.py", "--profile", "laptop"]) == 2


def test_profile_overrides_returns_a_copy():
    profile_overrides("smoke", "spen_train")["injected"] = 1
    assert "injected" not in profile_overrides("smoke", "spen_train")


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


def test_outputs_stamp_every_file(tmp_path):
    out = Outputs("99_demo", "cpu", {"lr": 0.1}, seeds=[0, 1], root=tmp_path)
    assert out.dir == tmp_path / "figures" / "99_demo"
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    png = out.save_figure(fig, "curve")
    out.save_table(pd.DataFrame({"model": ["a"], "acc": [0.5]}), "table1")
    out.write_metrics({"acc": [0.5, 0.7], "ratio": {"mean": 1.0, "ci95": 0.1, "n": 2}})
    manifest = json.loads((out.dir / "provenance.json").read_text())
    assert set(manifest) == {"curve.png", "curve.pdf", "table1.csv", "table1.md"}
    stamp = manifest["curve.png"]
    assert stamp["profile"] == "cpu" and stamp["seeds"] == [0, 1] and stamp["parameters"] == {"lr": 0.1}
    assert stamp["source"] == "notebooks/99_demo.py" and "git_commit" in stamp and "date" in stamp
    assert b"99_demo" in png.read_bytes()  # PNG text chunk carries the stamp
    assert (out.dir / "table1.md").read_text().startswith("<!-- provenance:")
    metrics = json.loads((out.dir / "metrics.json").read_text())
    assert metrics["metrics"]["acc"]["mean"] == pytest.approx(0.6) and metrics["metrics"]["acc"]["n"] == 2
    assert "date" not in metrics  # the same seed on the same commit writes the same file


def test_smoke_outputs_never_land_in_figures(tmp_path):
    assert output_dir("01_grammar_probe", "smoke", tmp_path) == tmp_path / "build" / "smoke" / "figures" / "01_grammar_probe"
    assert output_dir("01_grammar_probe", "paper", tmp_path) == tmp_path / "figures" / "01_grammar_probe"


def test_make_rejects_an_unknown_profile():
    proc = subprocess.run(["make", "-s", "check-profile", "PROFILE=huge"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "unknown profile 'huge'; allowed: smoke, cpu, paper" in proc.stderr


def test_unknown_notebook_parameter_is_rejected(tmp_path):
    nb = tmp_path / "nb" / "00_demo.py"
    nb.parent.mkdir()
    nb.write_text('# %% tags=["parameters"]\nprofile = "cpu"\nseeds = None\n')
    with pytest.raises(ValueError, match=r"unknown notebook parameter\(s\) seedz for 00_demo; allowed: profile, seeds"):
        from paper_lib.pipeline.runner import run_notebook
        run_notebook(nb, "smoke", {"seedz": [3]}, build=tmp_path / "build")
    assert not (tmp_path / "build" / "executed").exists() or not any((tmp_path / "build" / "executed").rglob("*.ipynb"))


def test_format_mean_ci_says_when_there_is_no_interval():
    from paper_lib.pipeline.stats import format_mean_ci

    assert format_mean_ci([0.5]) == "0.500 (n=1, no interval)"
    assert format_mean_ci([1.0, 2.0, 3.0], digits=2) == "2.00 ± 2.48 (n=3)"
    assert format_mean_ci({"mean": 7.6, "ci95": float("nan"), "n": 1}, digits=1, unit=" nats") == "7.6 nats (n=1, no interval)"


def test_plot_helpers_stamp_and_mark():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_lib.pipeline.plots import SMOKE_NOTE, legend_outside, mark_paper, stamp

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="ours")
    mark_paper(ax, 0.96, "paper: 0.960")
    legend_outside(ax)
    stamp(fig, "smoke", 1, "95% CI over seeds")
    texts = [t.get_text() for t in fig.texts] + [t.get_text() for t in ax.texts]
    assert "paper: 0.960" in texts
    assert any("profile: smoke · 1 seed · error bars: 95% CI over seeds" in t and SMOKE_NOTE.upper() in t for t in texts)
    assert ax.get_legend().get_bbox_to_anchor() is not None
    with pytest.raises(ValueError, match="axis must be 'x' or 'y'"):
        mark_paper(ax, 1.0, "x", axis="z")
    plt.close(fig)
