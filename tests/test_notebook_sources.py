"""The notebook sources are exactly what jupytext writes under the project's ``jupytext.toml``
(a header holding only the kernel, cell metadata only ``tags``), so a researcher's first save
from Jupyter, or a ``jupytext --to ipynb`` and back, changes no byte of them and no content stamp
(``make`` reruns nothing); every notebook names its kernel, so JupyterLab asks for none."""
from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
import nbformat  # noqa: E402
from jupytext.config import load_jupytext_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("0*.py"))
# what JupyterLab writes back once the kernel has started (ipykernel's own kernelspec, display name included)
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def test_there_are_notebook_sources():
    assert len(SOURCES) >= 6


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_a_jupytext_round_trip_is_byte_identical(source):
    config = load_jupytext_config(str(source))  # the repository's jupytext.toml, as Jupyter and the CLI find it
    assert config is not None and config.notebook_metadata_filter == "kernelspec,-all"
    nb = jupytext.read(source, fmt="py:percent", config=config)
    written = jupytext.writes(nb, fmt="py:percent", config=config)
    assert written.encode() == source.read_bytes()


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_notebook_carries_the_python3_kernel(source):
    nb = jupytext.read(source, fmt="py:percent")
    assert nb.metadata["kernelspec"] == KERNELSPEC
    assert source.read_text().startswith("# ---\n# jupyter:\n#   kernelspec:\n")


def _as_jupyterlab_saves(nb):
    """``nb`` as JupyterLab holds it after a run: outputs, counts, ids, and the metadata it adds."""
    nb = copy.deepcopy(nb)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.2", "mimetype": "text/x-python"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    for i, cell in enumerate(nb.cells):
        cell.metadata["collapsed"] = False
        cell.metadata["scrolled"] = True
        if cell.cell_type == "code":
            cell.execution_count = i + 1
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
    return nb


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_to_ipynb_and_back_as_jupyterlab_saves_changes_no_byte_and_no_stamp(source, tmp_path):
    from paper_lib.pipeline.deps import digest

    config = load_jupytext_config(str(source))
    ipynb = tmp_path / f"{source.stem}.ipynb"  # `jupytext --to ipynb`
    jupytext.write(jupytext.read(source, config=config), ipynb, fmt="ipynb", config=config)
    saved = _as_jupyterlab_saves(jupytext.read(ipynb))
    back = tmp_path / source.name  # back to py:percent, as the paired save writes it
    jupytext.write(saved, back, fmt="py:percent", config=config)
    assert back.read_bytes() == source.read_bytes()
    assert digest(back) == digest(source)  # the same sha256: `make` reruns nothing


@pytest.mark.parametrize("source", SOURCES[:2], ids=lambda p: p.stem)
def test_jupyterlab_opening_and_saving_a_notebook_keeps_its_bytes_and_kernel(tmp_path, source):
    """jupytext's own contents manager (what JupyterLab uses; needs the `notebook` extra)."""
    pytest.importorskip("jupyter_server")
    import asyncio

    from jupytext import AsyncTextFileContentsManager

    shutil.copy(ROOT / "jupytext.toml", tmp_path / "jupytext.toml")
    (tmp_path / "notebooks").mkdir()
    shutil.copy(source, tmp_path / "notebooks" / source.name)
    rel = f"notebooks/{source.name}"

    async def open_run_save():
        cm = AsyncTextFileContentsManager(root_dir=str(tmp_path))
        model = await cm.get(rel, content=True, type="notebook")
        kernel = model["content"]["metadata"].get("kernelspec")
        model["content"] = _as_jupyterlab_saves(nbformat.from_dict(model["content"]))
        await cm.save(model, rel)
        return kernel

    assert asyncio.run(open_run_save()) == KERNELSPEC  # the kernel JupyterLab starts without asking
    assert (tmp_path / rel).read_bytes() == source.read_bytes()
    assert (tmp_path / "notebooks" / f"{source.stem}.ipynb").is_file()  # the outputs go to the paired .ipynb


def test_the_lab_copies_share_the_repositorys_jupytext_filters(tmp_path):
    from paper_lib.pipeline.lab import scratch_copies
    from paper_lib.pipeline.runner import paired_notebook

    (tmp_path / "notebooks").mkdir()
    shutil.copy(SOURCES[0], tmp_path / "notebooks" / SOURCES[0].name)
    scratch_copies(tmp_path)
    ours, lab = load_jupytext_config(str(SOURCES[0])), load_jupytext_config(str(tmp_path / "lab" / "x.py"))
    assert (lab.notebook_metadata_filter, lab.cell_metadata_filter) == \
        (ours.notebook_metadata_filter, ours.cell_metadata_filter)
    copied = tmp_path / "lab" / SOURCES[0].name
    jupytext.write(jupytext.read(copied), copied.with_suffix(".ipynb"), fmt="ipynb")
    assert paired_notebook(copied) == copied.with_suffix(".ipynb")  # paired beside itself, as the runner sees it
    nb = jupytext.read(copied, config=lab)
    assert jupytext.writes(_as_jupyterlab_saves(nb), fmt="py:percent", config=lab).encode() == copied.read_bytes()


def test_git_ignores_the_lab_copies():
    for path in ("lab/02_transfer.py", "lab/02_transfer.ipynb", "lab/jupytext.toml"):
        assert subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0, path
    assert subprocess.run(["git", "check-ignore", "-q", "notebooks/02_transfer.py"], cwd=ROOT).returncode == 1
