"""The notebook runner and the notebook side of it: one-line errors before anything runs, a check
of papermill's injected parameters inside the kernel, safe output folders, the HTML rendering,
progress, and the Jupyter set-up (jupytext pairing, nbstripout)."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from paper_lib.pipeline.params import check_parameters, injected_parameters
from paper_lib.pipeline.runner import NotebookFailed, main, plan, render_html, run_notebook, tidy

ROOT = Path(__file__).resolve().parent.parent

DEMO = '''# %% [markdown]
# # A demo notebook

# %% tags=["parameters"]
profile = "cpu"
overrides = {}
fail = False

# %%
from paper_lib.pipeline.params import check_parameters; check_parameters(globals())  # noqa: E702, I001
import matplotlib.pyplot as plt
from tqdm.auto import tqdm

from paper_lib.pipeline.provenance import Outputs

out = Outputs("00_demo", profile, {"overrides": overrides}, seeds=[0, 1])

# %% [markdown]
# ## Results

# %%
for _ in tqdm(range(3), desc="steps"):
    pass
print("value 0.123")
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1])
out.save_figure(fig, "line", alt="A rising line from 0 to 1.", title="Line")
assert not fail, "asked to fail"
out.write_metrics({"acc": [0.5, 0.7]})
'''


@pytest.fixture()
def demo(tmp_path) -> Path:
    source = tmp_path / "notebooks" / "00_demo.py"
    source.parent.mkdir()
    source.write_text(DEMO)
    return source


def _one_line_error(capsys, argv, code=2) -> str:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


# --- errors at the entry point: one line, before any kernel starts ---------------------------------

def test_one_source_of_truth_for_each_run_parameter_the_profile_flag(demo, capsys):
    err = _one_line_error(capsys, [str(demo), "--profile", "cpu", "-p", "profile", "smoke"])
    assert err == ("error: the profile is set with --profile, never with -p profile (it also decides where the "
                   "outputs and the executed notebook land)")
    assert _one_line_error(capsys, [str(demo), "--profile", "typo"]) == \
        "error: unknown profile 'typo'; allowed: smoke, cpu, paper, gpu"
    assert not (demo.parent.parent / "build" / "executed").exists()


def test_bad_parameters_are_one_line_naming_the_allowed(demo, capsys):
    assert _one_line_error(capsys, [str(demo), "--profile", "smoke", "-p", "seeds", "3"]) == (
        "error: unknown notebook parameter(s) seeds for 00_demo; allowed: overrides, fail; a setting goes into "
        "overrides, e.g. -p overrides '{\"seeds\": ...}'")
    assert _one_line_error(capsys, [str(demo), "--profile", "smoke", "-p", "overrides", "seeds=3"]) == \
        "error: parameter overrides takes a JSON object (its default is {}), got 'seeds=3'"
    assert _one_line_error(capsys, [str(demo), "--profile", "smoke", "-p", "overrides", '{"seeds": 3}']) == \
        "error: overrides['seeds'] must be a non-empty list of integers, e.g. [0, 1], got 3"
    assert _one_line_error(capsys, [str(demo), "--profile", "smoke", "-p", "fail", "1"]) == \
        "error: parameter fail takes true or false (its default is False), got 1"
    assert _one_line_error(capsys, [str(demo.parent / "none.py"), "--profile", "smoke"]).startswith(
        "error: no notebook source at ")
    assert not (demo.parent.parent / "build" / "smoke" / "executed").exists()


def _commit_all(repo: Path) -> None:
    """Make ``repo`` a git clone with everything committed (publishing needs the commit of the sources)."""
    for args in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"], ["add", "-A"],
                 ["commit", "-qm", "demo"]):
        subprocess.run(["git", *args], cwd=repo, check=True)


def test_publishing_from_uncommitted_sources_is_refused(demo, capsys):
    repo = demo.parent.parent
    _commit_all(repo)
    demo.write_text(DEMO.replace("seeds=[0, 1]", "seeds=[0, 2]"))
    err = _one_line_error(capsys, [str(demo), "--profile", "cpu", "--publish"])
    assert err.startswith("error: refusing to publish to figures/00_demo/ from uncommitted sources (commit ")
    assert "-dirty" in err and not (repo / "figures").exists() and not (repo / "build").exists()


def test_where_a_run_lands(demo):
    root = demo.parent.parent
    one_off, made = plan(demo, "cpu"), plan(demo, "cpu", publish=True)
    assert one_off.outputs == root / "build" / "cpu" / "figures" / "00_demo"
    assert one_off.executed == root / "build" / "cpu" / "executed" / "00_demo.ipynb"
    assert made.outputs == root / "figures" / "00_demo" and made.publishes
    assert made.executed == root / "build" / "executed" / "cpu" / "00_demo.ipynb"  # make's target
    smoke = plan(demo, "smoke", publish=True)
    assert smoke.outputs == root / "build" / "smoke" / "figures" / "00_demo" and not smoke.publishes


# --- the check inside the notebook (papermill by hand, Jupyter) -----------------------------------

HISTORY = ["", 'profile = "cpu"\noverrides = {}', '# Parameters\nprofle = "smoke"\n', "check_parameters(globals())"]


def test_one_source_of_truth_for_each_run_parameter_injected_names_checked_in_the_kernel():
    assert injected_parameters(HISTORY) == (["profile", "overrides"], ["profle"])
    with pytest.raises(ValueError) as err:
        check_parameters({"In": HISTORY, "profile": "cpu", "overrides": {}, "profle": "smoke"})
    assert str(err.value) == "unknown notebook parameter(s) profle; allowed: overrides, profile"
    assert err.value._render_traceback_() == [f"SettingError: {err.value}"]  # what IPython shows: one line
    good = HISTORY[:2] + ['# Parameters\nprofile = "smoke"\n', HISTORY[3]]
    check_parameters({"In": good, "profile": "smoke", "overrides": {}})
    check_parameters({"In": ["", 'profile = "cpu"', "x = 1"], "profile": "cpu"})  # Jupyter: nothing injected


def test_one_source_of_truth_for_each_run_parameter_values_and_the_runners_profile(monkeypatch):
    with pytest.raises(ValueError, match=r"^unknown profile 'nonsense'; allowed: smoke, cpu, paper, gpu$"):
        check_parameters({"profile": "nonsense", "overrides": {}})
    with pytest.raises(ValueError, match=r"^overrides must be a dict of setting -> value"):
        check_parameters({"profile": "cpu", "overrides": [1]})
    with pytest.raises(ValueError, match=r"^overrides\['seeds'\] must be distinct, got \[1, 1\]$"):
        check_parameters({"profile": "cpu", "overrides": {"seeds": [1, 1]}})
    monkeypatch.setenv("PAPER_LIB_RUN", json.dumps({"profile": "smoke"}))
    with pytest.raises(ValueError, match=r"^profile 'cpu' differs from the runner's --profile 'smoke'"):
        check_parameters({"profile": "cpu", "overrides": {}})


# --- what a reader gets: tidy streams, a self-contained, deterministic HTML -----------------------

def _executed_like() -> nbformat.NotebookNode:
    png = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                                         "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"))
    bar = ["\rsteps:   0%|          | 0/3 [00:00<?, ?it/s]", "\rsteps: 100%|██████████| 3/3 [00:00<00:00, 1234.56it/s]",
           "\n"]  # the kernel sends each redraw as its own output
    cell = nbformat.v4.new_code_cell("print(1)", outputs=[
        *[nbformat.v4.new_output("stream", name="stderr", text=b) for b in bar],
        nbformat.v4.new_output("stream", name="stdout", text="value 0.123\n"),
        nbformat.v4.new_output("display_data", data={"image/png": png.decode(), "text/plain": "<Figure>"})])
    timing = nbformat.v4.new_code_cell("print(elapsed)", metadata={"tags": ["remove-output"]}, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="ran in 523 s\n")])
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Demo"), cell, timing])


def test_tidy_keeps_the_last_redraw_of_a_bar():
    nb = tidy(_executed_like())
    assert [o.output_type for o in nb.cells[1].outputs] == ["stream", "stream", "display_data"]
    assert nb.cells[1].outputs[0].text == "steps: 100%|██████████| 3/3 [00:00<00:00, 1234.56it/s]\n"
    assert [c.id for c in nb.cells] == ["cell-000", "cell-001", "cell-002"]


def test_html_is_self_contained_without_bars_and_the_same_twice(tmp_path):
    a = render_html(tidy(_executed_like()), tmp_path / "a.html", "00_demo").read_text()
    b = render_html(tidy(_executed_like()), tmp_path / "b.html", "00_demo").read_text()
    assert a == b
    assert "value 0.123" in a and "data:image/png;base64," in a
    assert "it/s" not in a and "steps:" not in a
    assert "elapsed" in a and "ran in 523 s" not in a  # the code stays, its output (tagged remove-output) goes


# --- Jupyter: jupytext pairing that keeps the source as it is, nbstripout -------------------------

@pytest.mark.parametrize("name", ["01_grammar_probe", "02_transfer"])
def test_saving_from_jupyter_leaves_the_source_as_it_was(tmp_path, name):
    pytest.importorskip("jupyter_server")
    import asyncio

    from jupytext import AsyncTextFileContentsManager

    shutil.copy(ROOT / "jupytext.toml", tmp_path / "jupytext.toml")
    (tmp_path / "notebooks").mkdir()
    source = tmp_path / "notebooks" / f"{name}.py"
    shutil.copy(ROOT / "notebooks" / f"{name}.py", source)  # the committed source, byte for byte
    before = source.read_text()

    async def open_run_save():
        cm = AsyncTextFileContentsManager(root_dir=str(tmp_path))
        model = await cm.get(f"notebooks/{name}.py", content=True, type="notebook")
        code = next(c for c in model["content"]["cells"] if c["cell_type"] == "code")
        code["outputs"] = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
        code["execution_count"] = 1
        code["metadata"]["collapsed"] = True
        await cm.save(model, f"notebooks/{name}.py")

    asyncio.run(open_run_save())
    assert source.read_text() == before  # its header (the kernel) as it was, no other Jupyter metadata written back
    paired = nbformat.read(tmp_path / "notebooks" / f"{name}.ipynb", as_version=4)  # outputs live here
    assert any(o.get("text") == "ran\n" for c in paired.cells for o in c.get("outputs", []))
    assert subprocess.run(["git", "check-ignore", "-q", f"notebooks/{name}.ipynb"], cwd=ROOT).returncode == 0


def test_git_strips_notebook_outputs_with_nbstripout():
    out = subprocess.run(["git", "check-attr", "filter", "diff", "--", "notebooks/x.ipynb"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert "filter: nbstripout" in out and "diff: ipynb" in out


# --- real kernels (a few seconds each) ------------------------------------------------------------

@pytest.mark.notebook
def test_outputs_are_safe_and_published_only_by_make(demo, capsys):
    root = demo.parent.parent
    (root / ".gitignore").write_text("build/\nfigures/\n")
    _commit_all(root)
    executed = run_notebook(demo, "cpu", root=root)  # a one-off run: under build/, never figures/
    scratch = root / "build" / "cpu" / "figures" / "00_demo"
    assert executed == root / "build" / "cpu" / "executed" / "00_demo.ipynb" and executed.is_file()
    assert sorted(p.name for p in scratch.iterdir()) == ["figures.json", "line.pdf", "line.png", "metrics.json", "provenance.json"]
    assert not (root / "figures").exists()

    run_notebook(demo, "cpu", publish=True, root=root, stream=True)  # make's run
    shown = capsys.readouterr().out
    assert "[00_demo] cell 4/4 · Results" in shown and "value 0.123" in shown
    figures = root / "figures" / "00_demo"
    assert sorted(p.name for p in figures.iterdir()) == ["00_demo.html", "figures.json", "line.pdf", "line.png",
                                                        "metrics.json", "provenance.json"]
    html = (figures / "00_demo.html").read_text()
    assert "value 0.123" in html and "data:image/png;base64," in html and "it/s" not in html
    assert 'alt="A rising line from 0 to 1."' in html and "No description" not in html  # figures.json's alt text
    assert "00_demo.html" in json.loads((figures / "provenance.json").read_text())
    made = nbformat.read(root / "build" / "executed" / "cpu" / "00_demo.ipynb", as_version=4)
    stderr = [o.text for c in made.cells for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert any(t.startswith("steps: 100%") for t in stderr) and not any("\r" in t for t in stderr)
    published = {p.name: p.read_bytes() for p in figures.iterdir()}

    with pytest.raises(NotebookFailed) as err:  # a failed run: old folder intact, one line
        run_notebook(demo, "cpu", {"fail": True}, publish=True, root=root)
    assert str(err.value).startswith("00_demo failed in cell [4] (Results): AssertionError: asked to fail; traceback in ")
    assert err.value.failed.is_file() and "\n" not in str(err.value)
    assert {p.name: p.read_bytes() for p in figures.iterdir()} == published
    assert sorted(p.name for p in figures.parent.iterdir()) == ["00_demo"]  # no staging folder left

    run_notebook(demo, "cpu", publish=True, root=root)  # the same numbers again: the same bytes
    assert {p.name: p.read_bytes() for p in figures.iterdir()} == published
    assert not err.value.failed.exists()  # the failure's notebook goes once a run succeeds


@pytest.mark.notebook
def test_one_source_of_truth_for_each_run_parameter_plain_papermill_typo_fails(demo, monkeypatch):
    import papermill as pm

    from paper_lib.pipeline.runner import convert

    ipynb = demo.with_suffix(".ipynb")
    convert(demo, ipynb)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    with pytest.raises(pm.PapermillExecutionError) as err:
        pm.execute_notebook(str(ipynb), str(demo.with_suffix(".out.ipynb")), parameters={"profle": "smoke"},
                            progress_bar=False, kernel_name="python3")
    assert err.value.ename == "SettingError"                      # a ValueError, shown in one line
    assert err.value.evalue == "unknown notebook parameter(s) profle; allowed: fail, overrides, profile"
    assert err.value.traceback == [f"SettingError: {err.value.evalue}"]       # no 20-line traceback around it
