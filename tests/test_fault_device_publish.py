"""Fault kind: ``make device-publish`` publishes what it never checked.

A metric edited x10 in 03's ``metrics.json`` was published and ``figures/gpu/REPORT.md`` written from
it; a PNG and 04's ``metrics.json`` removed from the pack were published without a word; a half-copied
archive was a 29-line traceback. Expected: every file of a notebook's outputs is checked against the
sha256 its ``provenance.json`` records (``metrics.json`` among them) before anything is copied; a
tampered, missing or unrecorded file, or an archive that cannot be read, is one line, exit status 2,
and nothing is published.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import paper_lib.pipeline.provenance as provenance  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COMMIT = "0123456789ab"


@pytest.fixture
def study(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("device_study_publish", ROOT / "benchmarks" / "device_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(provenance, "source_commit", lambda root=None: (COMMIT, None))  # a clean commit
    monkeypatch.setattr(module, "ROOT", tmp_path / "checkout")
    return module


def _run(study, tmp_path) -> Path:
    """A device run's folder as ``run`` leaves it: each notebook's stamped outputs, gpu_check.csv, summary.json."""
    out = tmp_path / "gpu"
    for nb in study.STUDY:
        with provenance.Outputs(nb, "gpu", {"steps": 3}, seeds=[0], root=tmp_path / "device", publish=False) as o:
            fig, ax = plt.subplots(figsize=(3, 2))
            ax.plot([0, 1], [1, 0])
            ax.set(title="Loss", xlabel="step", ylabel="nats")
            o.save_figure(fig, "loss", alt="A loss curve falling from 1 to 0.", title="Loss")
            plt.close(fig)
            o.save_table(pd.DataFrame({"model": ["spen"], "ppl": [12.5]}), "ppl")
            o.write_metrics({"spen_val_ppl": [12.5]})
        shutil.copytree(o.dir, out / "figures" / nb)
    (out / "gpu_check.csv").write_text("check,item,metric,value,unit,passed\n", encoding="utf-8")
    steps = [{"step": "gpu_check", "status": "done", "wall_s": 1.0}] + \
        [{"step": nb, "status": "done", "wall_s": 2.0} for nb in study.STUDY]
    summary = {"git_commit": COMMIT, "profile": "gpu", "device": "CPU", "steps": steps,
               "files": {"gpu_check.csv": study._sha256(out / "gpu_check.csv")}}
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return out


def _x10(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["metrics"]["spen_val_ppl"]["mean"] *= 10
    path.write_text(json.dumps(doc), encoding="utf-8")


TAMPER = {  # how the pack was changed -> the start of the one line's reason
    "a metric edited x10": (lambda o: _x10(o / "figures/03_spen_train/metrics.json"),
                            "03_spen_train/metrics.json differs from the sha256 its provenance.json records"),
    "a PNG removed": (lambda o: (o / "figures/03_spen_train/loss.png").unlink(), "03_spen_train/loss.png is missing"),
    "04's metrics.json removed": (lambda o: (o / "figures/04_predictor_ablation/metrics.json").unlink(),
                                  "04_predictor_ablation/metrics.json is missing"),
    "a file added": (lambda o: (o / "figures/04_predictor_ablation/extra.html").write_text("<script>"),
                     "04_predictor_ablation/extra.html is not recorded in its provenance.json"),
    "a notebook's folder removed": (lambda o: shutil.rmtree(o / "figures/04_predictor_ablation"),
                                    "figures/04_predictor_ablation/ is missing, though summary.json says it finished"),
    "gpu_check.csv edited": (lambda o: (o / "gpu_check.csv").write_text("check\nforged\n"),
                             "gpu_check.csv differs from the sha256 summary.json records"),
}


def test_an_intact_pack_is_published_file_for_file(study, tmp_path, capsys):
    out = _run(study, tmp_path)
    pack = tmp_path / "study.tar.gz"
    study.write_pack(out, pack)
    assert study.publish(pack, report=False) == 0
    for nb in study.STUDY:
        for f in (out / "figures" / nb).iterdir():
            assert (tmp_path / "checkout/figures/gpu" / nb / f.name).read_bytes() == f.read_bytes()
    stamps = json.loads((out / "figures/03_spen_train/provenance.json").read_text(encoding="utf-8"))
    assert {"metrics.json", "figures.json", "loss.png", "loss.pdf", "ppl.csv", "ppl.md"} == set(stamps)


@pytest.mark.parametrize("how", list(TAMPER))
def test_a_tampered_pack_is_refused_in_one_line_and_nothing_is_published(study, tmp_path, capsys, how):
    out = _run(study, tmp_path)
    change, why = TAMPER[how]
    change(out)
    pack = tmp_path / "study.tar.gz"
    study.write_pack(out, pack)
    capsys.readouterr()
    assert study.publish(pack, report=False) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("device-publish: ") and f": {why}" in err, err
    assert err.rstrip().endswith("; nothing was published")
    assert not (tmp_path / "checkout").exists()
    assert study.publish(out, report=False) == 2                      # the folder itself, too
    assert not (tmp_path / "checkout").exists()


@pytest.mark.parametrize("kept", [0.5, 0.97])
def test_a_half_copied_archive_is_one_line_and_nothing_is_published(study, tmp_path, capsys, kept):
    out = _run(study, tmp_path)
    pack = tmp_path / "study.tar.gz"
    study.write_pack(out, pack)
    data = pack.read_bytes()
    pack.write_bytes(data[: int(len(data) * kept)])
    capsys.readouterr()
    assert study.publish(pack, report=False) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"device-publish: cannot read {pack} (") and "Traceback" not in err
    assert "a truncated or half-copied archive? copy it from the device again; nothing was published" in err
    assert not (tmp_path / "checkout").exists()


def test_the_report_never_reads_a_metrics_json_edited_after_its_run(tmp_path):
    """The same kind in the report: a verdict is computed from ``metrics.json``, so one that differs from the
    sha256 its folder's ``provenance.json`` records is one ``ValueError`` line, not a report of its numbers."""
    from paper_lib.claims.registry import CLAIMS
    from paper_lib.pipeline.report import write_report

    with provenance.Outputs("05_associative_recall", "smoke", {}, seeds=[0], root=tmp_path) as o:
        o.write_metrics({"recall_acc_spen_8": [0.25], "recall_acc_transformer_8": [0.99]})
    report = write_report("smoke", CLAIMS, root=tmp_path, out=tmp_path / "REPORT.md")
    assert "0.25 (no interval)" in report.read_text(encoding="utf-8")
    metrics = o.dir / "metrics.json"
    doc = json.loads(metrics.read_text(encoding="utf-8"))
    doc["metrics"]["recall_acc_spen_8"]["mean"] = 2.5
    metrics.write_text(json.dumps(doc), encoding="utf-8")
    before = report.read_bytes()
    with pytest.raises(ValueError) as err:
        write_report("smoke", CLAIMS, root=tmp_path, out=report)
    assert str(err.value) == (f"{metrics} differs from the sha256 its provenance.json records (edited or damaged); "
                              "rerun it")
    assert report.read_bytes() == before
