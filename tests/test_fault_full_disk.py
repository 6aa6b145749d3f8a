"""A full disk while training or writing: one line naming the disk and what is kept, never a traceback.

torch's zip writer says only "unexpected pos" when the disk fills under a checkpoint; an
``OSError`` ENOSPC from any atomic write carried a traceback. Every write goes through
:func:`paper_lib.pipeline.atomic.atomic_path`, which turns a failed write into one line
(:class:`~paper_lib.pipeline.atomic.WriteFailed`, ``errno`` ENOSPC) naming the file and the disk;
the training command line exits with status 1 and the checkpoint before stays the latest.
"""
from __future__ import annotations

import errno

import pytest
import torch
from _tiny_lm import SIZES
from _tiny_lm import random_ids as _ids

from paper_lib import lm_recipe
from paper_lib.checkpoint import latest_checkpoint
from paper_lib.models.factory import build_model
from paper_lib.pipeline.atomic import WriteFailed, atomic_path, write_text
from paper_lib.train import TrainConfig, train

FULL = RuntimeError("[enforce fail at inline_container.cc:603] . unexpected pos 4736 vs 4630")


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


@pytest.fixture
def fills_at_second_save(monkeypatch):
    """torch.save fails as on a full disk from its second call on."""
    real, calls = torch.save, []

    def save(*args, **kwargs):
        calls.append(1)
        if len(calls) >= 2:
            raise FULL
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "save", save)


def test_a_write_to_a_full_disk_is_one_line_naming_the_file_and_the_disk(tmp_path, monkeypatch):
    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    target = tmp_path / "out" / "metrics.json"
    with pytest.raises(WriteFailed) as err:
        with atomic_path(target) as tmp:
            full(tmp)
    assert err.value.errno == errno.ENOSPC and "\n" not in str(err.value)
    assert str(err.value).startswith(f"no space left on the disk that holds {target} (mounted at ")
    assert list((tmp_path / "out").iterdir()) == []  # no temporary file left
    monkeypatch.setattr("pathlib.Path.write_text", full)
    with pytest.raises(WriteFailed, match=r"^no space left on the disk that holds .*summary\.txt \(mounted at "):
        write_text(tmp_path / "out" / "summary.txt", "x")


def test_a_checkpoint_on_a_full_disk_is_one_line_and_the_one_before_stays_latest(tmp_path, fills_at_second_save):
    cfg = TrainConfig(steps=6, batch_size=2, seq_len=16, warmup_steps=1, log_every=3, ckpt_every=3, seed=1)
    with pytest.raises(WriteFailed) as err:
        train(build_model("spen", seed=0, **SIZES), _ids(), cfg, out_dir=tmp_path, progress=False)
    message = str(err.value)
    assert err.value.errno == errno.ENOSPC and "\n" not in message and "unexpected pos" not in message
    assert message.startswith("cannot save the checkpoint of step 6: no space left on the disk that holds ")
    assert message.endswith("the checkpoint of step 3 is kept, and rerunning with the same --out resumes from it")
    ck = tmp_path / "checkpoints"
    assert latest_checkpoint(ck) == 3 and sorted(p.name for p in ck.iterdir() if p.name.startswith("step")) == [
        "step0000003.safetensors", "step0000003.state.pt"]  # nothing of step 6, no temporary file


class _Tok:
    def get_vocab_size(self) -> int:
        return 64


def test_the_training_command_line_says_full_disk_in_one_line_with_status_1(tmp_path, monkeypatch, capsys,
                                                                             fills_at_second_save):
    data = {"tokenizer": _Tok(), "train": _ids(), "val": _ids(600, 1), "ood": _ids(600, 2)}
    monkeypatch.setattr(lm_recipe, "prepare_data", lambda settings: dict(data))
    out = tmp_path / "run"
    argv = ["--profile", "smoke", "--steps", "8", "--batch-size", "2", "--out", str(out),
            "--overrides", '{"train": {"ckpt_every": 4}}']
    assert lm_recipe.main(argv) == 1
    errors = [ln for ln in capsys.readouterr().err.replace("\r", "\n").splitlines() if "error" in ln]
    assert len(errors) == 1 and errors[0].startswith("error: cannot save the checkpoint of step 8: no space left on "
                                                     f"the disk that holds {out}/checkpoints/"), errors
    assert "the checkpoint of step 4 is kept" in errors[0] and not (out / "metrics.json").exists()
