"""The device study (benchmarks/device_study.py) and the token file it travels with
(paper_lib.data.token_file): prepare on the CPU side, run offline with a time guard, publish only
from the recorded commit. The end-to-end test runs it all at the smoke profile on the CPU."""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from paper_lib.data.corpus import Corpus
from paper_lib.data.lm_data import prepare_data
from paper_lib.data.token_file import TOKEN_FILE_ENV, load_token_file, save_token_file
from paper_lib.experiments import spen_train

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("device_study", ROOT / "benchmarks" / "device_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tokenizer(words):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(["<unk>", *words])}, unk_token="<unk>"))
    tok.pre_tokenizer = Whitespace()
    return tok


def _data(vocab=("a", "b", "c")):
    rng = np.random.default_rng(0)
    streams = {s: rng.integers(0, len(vocab) + 1, n).astype(np.uint16) for s, n in
               (("train", 500), ("dev", 40), ("val", 60), ("ood", 30))}
    return {"corpus": Corpus("tiny", ["doc one", "doc two", "doc three"], ["val doc"]),
            "tokenizer": _tokenizer(vocab), **streams, "sources": {"train": "tiny"}}


def test_token_file_round_trip_keeps_every_stream_the_tokenizer_and_the_document_counts(tmp_path):
    settings = spen_train.settings_for("smoke").data
    data = _data()
    path = save_token_file(data, settings, tmp_path / "tokens.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokens.npz"]  # nothing half-written beside it
    back = load_token_file(path, settings)
    for split in ("train", "dev", "val", "ood"):
        assert back[split].dtype == np.uint16
        np.testing.assert_array_equal(back[split], data[split])
    assert back["tokenizer"].encode("a c b").ids == [1, 3, 2]
    assert (back["corpus"].name, len(back["corpus"].train), len(back["corpus"].validation)) == ("tiny", 3, 1)
    assert back["sources"] == {"train": "tiny"}


def test_token_file_refuses_other_settings_naming_the_setting_and_a_missing_file(tmp_path):
    settings = spen_train.settings_for("smoke").data
    path = save_token_file(_data(), settings, tmp_path / "tokens.npz")
    other = dataclasses.replace(settings, vocab_size=settings.vocab_size * 2)
    with pytest.raises(ValueError, match=rf"data\.vocab_size = {settings.vocab_size}, this run has {other.vocab_size}"):
        load_token_file(path, other)
    with pytest.raises(FileNotFoundError, match="no token file at .*device_study.py prepare"):
        load_token_file(tmp_path / "absent.npz")


def test_token_file_over_the_size_limit_is_refused_and_not_left_behind(tmp_path, monkeypatch):
    import paper_lib.data.token_file as token_file

    monkeypatch.setattr(token_file, "MAX_BYTES", 100)
    with pytest.raises(ValueError, match="over the 0 MiB that travel to a lent GPU"):
        save_token_file(_data(), spen_train.settings_for("smoke").data, tmp_path / "tokens.npz")
    assert list(tmp_path.iterdir()) == []


def test_prepare_data_reads_the_token_file_the_environment_names(tmp_path, monkeypatch):
    settings = spen_train.settings_for("smoke").data
    data = _data()
    monkeypatch.setenv(TOKEN_FILE_ENV, str(save_token_file(data, settings, tmp_path / "tokens.npz")))
    got = prepare_data(settings)
    np.testing.assert_array_equal(got["train"], data["train"])
    with pytest.raises(ValueError, match=r"data\.max_train_chars"):
        prepare_data(dataclasses.replace(settings, max_train_chars=settings.max_train_chars + 1))


def test_notebook_script_sets_the_parameters_right_after_the_parameters_cell(study, tmp_path):
    src = tmp_path / "nb.py"
    src.write_text('# %% [markdown]\n# text\n\n# %% tags=["parameters"]\nprofile = "cpu"\noverrides = {}\n\n'
                   '# %%\nfrom IPython.display import Markdown, display\ndisplay(Markdown(f"at {profile} {overrides}"))\n',
                   encoding="utf-8")
    script = study.notebook_script(src, "gpu", {"steps": 3})
    lines = script.splitlines()
    assert lines.index("profile = 'gpu'") == lines.index('overrides = {}') + 2  # after the cell, before the next
    out = tmp_path / "nb_run.py"
    out.write_text(script, encoding="utf-8")
    import subprocess

    res = subprocess.run([sys.executable, str(out)], capture_output=True, text=True, check=True)
    assert res.stdout.strip().endswith("at gpu {'steps': 3}")
    src.write_text("# %%\nx = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has no parameters cell"):
        study.notebook_script(src, "gpu", {})


def test_the_time_guard_stops_a_step_and_its_children(study, tmp_path):
    import os

    child = tmp_path / "child.pid"
    cmd = [sys.executable, "-c", "import subprocess, sys, time; "   # a step that cannot end inside its 2 s
           f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)']); "
           f"open({str(child)!r}, 'w').write(str(p.pid)); print('started', flush=True); time.sleep(3600)"]
    status, wall = study.run_step(cmd, tmp_path / "step.log", 2.0, dict(os.environ), cwd=tmp_path)
    assert status == "stopped by the time guard" and wall >= 2.0
    assert "started" in (tmp_path / "step.log").read_text(encoding="utf-8")
    stat = Path(f"/proc/{int(child.read_text())}/stat")  # the grandchild: gone, or a zombie not yet reaped
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    assert study.run_step([sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "f.log", 30, dict(os.environ),
                          cwd=tmp_path)[0] == "failed (exit 3)"


def test_check_sources_names_a_changed_file_and_asks_for_a_record(study, tmp_path):
    with pytest.raises(FileNotFoundError, match="make device-prepare"):
        study.check_sources(tmp_path)
    inputs = study.deps.inputs(ROOT / "notebooks" / "03_spen_train.py", ROOT)
    (tmp_path / "tokens.npz").write_bytes(b"tokens")
    record = {"git_commit": "abc", "notebooks": ["03_spen_train"], "inputs": {"03_spen_train": inputs}, "tools": {},
              "tokens_sha256": study._sha256(tmp_path / "tokens.npz")}
    (tmp_path / "SOURCES.json").write_text(json.dumps(record), encoding="utf-8")
    assert study.check_sources(tmp_path) == record
    inputs["paper_lib/train.py"] = "0" * 64
    (tmp_path / "SOURCES.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ValueError, match=r"^1 source file\(s\) differ .*commit abc\): paper_lib/train.py; "):
        study.check_sources(tmp_path)


def test_a_missing_package_is_one_line_before_anything_runs(study, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(study, "check_sources", lambda out: {"profile": "smoke", "git_commit": "abc", "notebooks": []})
    monkeypatch.setattr(study, "NEEDS", ("numpy", "no_such_package_here"))
    assert study.run(tmp_path, 60, "cpu") == 2
    err = capsys.readouterr().err
    assert err.startswith("device-study: this Python (") and "lacks no_such_package_here;" in err
    assert err.count("\n") == 1 and not (tmp_path / "summary.json").exists()


@pytest.mark.notebook
def test_the_study_end_to_end_at_smoke_on_the_cpu(study, tmp_path, monkeypatch, capsys):
    import paper_lib.pipeline.provenance as provenance

    monkeypatch.setattr(provenance, "source_commit", lambda root=None: ("0123456789ab", None))  # a clean commit
    out = tmp_path / "gpu"
    study.prepare(out, "smoke", allow_dirty=True)
    record = json.loads((out / "SOURCES.json").read_text(encoding="utf-8"))
    assert "paper_lib/lm_recipe.py" in record["inputs"]["03_spen_train"]

    pack = tmp_path / "study.tar.gz"
    assert study.run(out, 400, "cpu", pack=pack) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [s["status"] for s in summary["steps"]] == ["skipped (no CUDA device)", "done", "done"]
    for nb in study.STUDY:
        stamps = json.loads((out / "figures" / nb / "provenance.json").read_text(encoding="utf-8"))
        assert stamps and {v["git_commit"] for v in stamps.values()} == {record["git_commit"]}
    screen = capsys.readouterr().out
    assert "== device study, profile smoke" in screen and "spen_val_ppl" in screen
    with tarfile.open(pack) as tar:
        names = tar.getnames()
    assert "gpu/summary.json" in names and "gpu/tokens.npz" not in names

    # A step that cannot finish inside its budget (03 writes a file, then waits for ever) is stopped by the
    # guard, and 04 never starts: on the guard's clock, 03 starts with all of the budget after the reserve
    # (2 s) and uses it up, however long the machine took to get there. The earlier outputs stay, nothing
    # staged is left.
    before = (out / "figures" / "03_spen_train" / "metrics.json").read_bytes()
    forever = ("import json, os, pathlib, time\nrun = json.loads(os.environ['PAPER_LIB_RUN'])\n"
               "pathlib.Path(run['stage'], 'half_written.csv').write_text('x')\nprint('started', flush=True)\n"
               "time.sleep(10**6)\n")
    real, ran = study.run_notebook, []
    with monkeypatch.context() as m:
        m.setattr(study, "notebook_script", lambda source, profile, overrides: forever)
        m.setattr(study, "run_notebook", lambda *a, **k: ran.append(a[0]) or real(*a, **k))
        m.setattr(study, "_now", lambda: 10.0**6 if ran else 0.0)  # the budget is spent once 03 ran
        assert study.run(out, study.RESERVE_S + 2, "cpu") == 1
    steps = json.loads((out / "summary.json").read_text(encoding="utf-8"))["steps"]
    assert steps[1]["status"] == "stopped by the time guard" and steps[2]["status"].startswith("not started")
    assert "started" in (out / "03_spen_train.log").read_text(encoding="utf-8")
    assert (out / "figures" / "03_spen_train" / "metrics.json").read_bytes() == before
    assert not [p.name for p in (out / "figures").iterdir() if p.name.startswith(".")]

    # Publish: refused from another commit; from the recorded one, into figures/<profile>/ of the checkout.
    monkeypatch.setattr(provenance, "source_commit", lambda root=None: ("ba9876543210", None))
    assert study.publish(pack, report=False) == 2
    assert "the run was made from 0123456789ab, the sources here are at ba9876543210" in capsys.readouterr().err
    checkout = tmp_path / "checkout"
    monkeypatch.setattr(study, "ROOT", checkout)
    monkeypatch.setattr(provenance, "source_commit", lambda root=None: ("0123456789ab", None))
    summary["profile"] = "gpu"
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    assert study.publish(out, report=False) == 0
    for nb in study.STUDY:
        assert (checkout / "figures" / "gpu" / nb / "metrics.json").read_bytes() == \
            (out / "figures" / nb / "metrics.json").read_bytes()
