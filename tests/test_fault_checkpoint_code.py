"""Fault kind: resuming from a checkpoint folder someone else made runs their code.

A ``state.pt`` holding the real state plus one object whose unpickling calls a function (here it
writes a marker file) passed every damage check and was loaded with ``weights_only=False``: the
resume went on with rc 0 and the function ran (pytorch#87443). Expected: the state is loaded as
data only; such a file is one ``CheckpointError`` line naming what it would call and the way out,
and nothing of it runs; a genuine state, including one written before the RNG state was plain
data, still resumes.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from _tiny_lm import SIZES
from _tiny_lm import random_ids as _ids

from paper_lib import checkpoint
from paper_lib.checkpoint import CheckpointError, load_checkpoint
from paper_lib.models.factory import build_model
from paper_lib.train import TrainConfig, make_optimizer, train

CFG = TrainConfig(steps=6, batch_size=2, seq_len=16, warmup_steps=1, log_every=1, ckpt_every=3, seed=1)


class WritesAMarker:
    """Unpickled by ``pickle``, it calls ``exec``, which writes ``path``: what a shell command would do."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return exec, (f"open({self.path!r}, 'w').write('ran')",)


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
    checkpoint._WARNED.clear()


def _killed_run(out):
    train(build_model("spen", seed=0, **SIZES), _ids(), CFG, out_dir=out, stop_after=4, progress=False)
    ck = out / "checkpoints"
    return ck, ck / "step0000003.state.pt"


def _replace_state(ck, state_path, state):
    """Write ``state`` as the checkpoint's state file and record its size, so every damage check passes."""
    torch.save(state, state_path)
    index = json.loads((ck / "latest.json").read_text(encoding="utf-8"))
    index["state_bytes"] = state_path.stat().st_size
    (ck / "latest.json").write_text(json.dumps(index), encoding="utf-8")


def test_a_state_file_that_would_run_code_is_refused_in_one_line_and_nothing_runs(tmp_path):
    ck, state_path = _killed_run(tmp_path)
    marker = tmp_path / "marker"
    state = torch.load(state_path, weights_only=True)
    _replace_state(ck, state_path, {**state, "extra": WritesAMarker(marker)})
    torch.load(state_path, weights_only=False)          # the trial: a plain load does run it
    assert marker.read_text() == "ran"
    marker.unlink()
    with pytest.raises(CheckpointError) as err:
        train(build_model("spen", seed=5, **SIZES), _ids(), CFG, out_dir=tmp_path, progress=False)
    msg = str(err.value)
    assert "\n" not in msg and isinstance(err.value, ValueError)
    assert msg.startswith(f"refusing checkpoint {state_path}: it names builtins.exec, which loading would call; ")
    assert msg.endswith("rerun with --no-resume to start over (it replaces the folder's checkpoints))")
    assert not marker.exists()


def test_a_genuine_state_is_plain_data_and_resumes_with_the_same_rng(tmp_path):
    ck, state_path = _killed_run(tmp_path)
    assert torch.serialization.get_unsafe_globals_in_checkpoint(state_path) == []
    saved = torch.load(state_path, weights_only=True)["rng"]["numpy"]
    model = build_model("spen", seed=0, **SIZES)
    np.random.seed(123)
    assert load_checkpoint(ck, model, make_optimizer(model, CFG))[0] == 3
    assert np.random.get_state(legacy=True)[1].tolist() == saved[1]   # numpy's generator put back


def test_a_state_written_with_numpys_array_still_resumes(tmp_path):
    ck, state_path = _killed_run(tmp_path)
    state = torch.load(state_path, weights_only=True)
    np.random.seed(7)
    old = np.random.get_state()                          # the array form older checkpoints hold
    _replace_state(ck, state_path, {**state, "rng": {**state["rng"], "numpy": old}})
    np.random.seed(0)
    model = build_model("spen", seed=0, **SIZES)
    assert load_checkpoint(ck, model, make_optimizer(model, CFG))[0] == 3
    assert np.array_equal(np.random.get_state()[1], old[1])
