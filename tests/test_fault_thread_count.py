"""Fault kind: numbers depend on the thread count, so the thread count is fixed and recorded.

(a) ``parallel_map`` runs every job at one thread, in a worker process or (``workers=1``) in the
caller's process, restoring the caller's count after: ``workers=1`` and ``workers=2`` give the
same numbers. (b) The default thread count of a profile does not depend on the machine's cores.
(c) The thread count is in every stamp and in ``metrics.json``.
"""
from __future__ import annotations

import json
import subprocess

import pytest
import torch

from paper_lib.pipeline import threads
from paper_lib.pipeline.parallel import parallel_map
from paper_lib.pipeline.provenance import Outputs


def toy_training(seed: int, steps: int = 5) -> float:
    """A few steps of a toy regression whose matmuls sum over 32768 terms: the order of those
    float32 sums, so the final loss, depends on the thread count where the BLAS splits them by
    thread (measured on one machine: 16578891 at 1 thread, 16578892 at 2 for seed 0; on an AMD EPYC
    box with MKL both read 16578891)."""
    g = torch.Generator().manual_seed(seed)
    x, w_true = torch.randn(64, 32768, generator=g), torch.randn(32768, 16, generator=g)
    y = x @ w_true
    w = torch.zeros(32768, 16, requires_grad=True)
    opt = torch.optim.SGD([w], lr=1e-6)
    for _ in range(steps):
        loss = ((x @ w - y) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return float(((x @ w - y) ** 2).sum())


def toy_job(seed: int) -> tuple[float, int]:
    """:func:`toy_training`'s loss and the thread count the job ran at."""
    return toy_training(seed), torch.get_num_threads()


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


@pytest.mark.multiprocess
def test_workers_1_and_workers_2_give_the_same_numbers(two_threads):
    jobs = [(0,), (1,)]
    at_two = [toy_job(*job) for job in jobs]  # the caller's own thread count: 2
    with threads.threads_for_jobs(1):
        at_one = [toy_job(*job) for job in jobs]
    assert [n for _, n in at_two] == [2, 2] and [n for _, n in at_one] == [1, 1]
    # where the BLAS splits the sums by thread (not every machine's does), the losses differ too,
    # and the comparisons below check the numbers as well as the thread count
    here = parallel_map(toy_job, jobs, workers=1, progress=False)
    assert torch.get_num_threads() == 2  # the caller's count is given back
    assert here == at_one
    assert parallel_map(toy_job, jobs, workers=2, progress=False) == here  # bit for bit, at 1 thread


def test_the_default_thread_count_is_the_profiles_not_the_machines(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    for cores in (1, 2, 16):
        monkeypatch.setattr(threads.os, "cpu_count", lambda cores=cores: cores)
        monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid, cores=cores: set(range(cores)), raising=False)
        assert [threads.default_threads(p) for p in ("smoke", "cpu", "paper", None)] == [1, 2, 2, 2]


def test_the_thread_count_is_in_every_stamp_and_in_metrics(tmp_path, two_threads):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for args in (["config", "user.email", "t@t"], ["config", "user.name", "t"], ["commit", "-q", "--allow-empty",
                                                                                  "-m", "x"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    import pandas as pd

    with Outputs("99_demo", "cpu", {}, seeds=[0], root=tmp_path, publish=True) as out:
        out.save_data(pd.DataFrame({"x": [1]}), "curve")
        out.write_metrics({"acc": [0.5]})
    assert json.loads((out.dir / "provenance.json").read_text())["curve.csv"]["threads"] == 2
    assert json.loads((out.dir / "metrics.json").read_text())["threads"] == 2
