"""paper_lib.pipeline.parallel: job order, one thread per worker, errors."""
import pytest

from paper_lib.pipeline.parallel import parallel_map
from paper_lib.pipeline.threads import thread_report


def test_results_in_job_order_with_two_workers():
    jobs = [(2, 10), (3, 4), (5, 3), (7, 2)]
    assert parallel_map(pow, jobs, workers=2, progress=False) == [1024, 81, 125, 49]


def test_one_worker_runs_here_in_order():
    seen = []
    assert parallel_map(lambda x: seen.append(x) or x * 2, [(1,), (2,), (3,)], workers=1, progress=False) == [2, 4, 6]
    assert seen == [1, 2, 3]


def test_each_worker_has_one_torch_thread():
    reports = parallel_map(thread_report, [(), ()], workers=2, progress=False)
    assert [r["torch"] for r in reports] == [1, 1]
    assert {r["wait_policy"] for r in reports} == {"PASSIVE"}


def test_a_job_error_reaches_the_caller():
    with pytest.raises(ValueError, match="invalid literal for int"):
        parallel_map(int, [("1",), ("x",), ("3",)], workers=2, progress=False)


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_bad_worker_count(workers):
    with pytest.raises(ValueError, match=r"workers must be an integer >= 1, got"):
        parallel_map(pow, [(1, 1)], workers=workers)


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (read from /proc, Linux)."""
    import os

    out = []
    for entry in os.listdir("/proc"):
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except (OSError, ValueError):
            continue
        if entry.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_workers_die_with_their_parent():
    """A process running parallel_map is killed mid-run: its workers must not survive it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    code = ("import time\n"
            "from paper_lib.pipeline.parallel import parallel_map\n"
            "if __name__ == '__main__':\n"
            "    parallel_map(time.sleep, [(60,), (60,)], workers=2, progress=False)\n")
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 60
    children: list[int] = []
    while time.time() < deadline and len(children) < 2:
        time.sleep(0.5)
        children = _children(proc.pid)
    assert len(children) >= 2, "the workers did not start"
    time.sleep(3)  # let the workers reach their initializer
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(2)
    alive = [p for p in children if os.path.exists(f"/proc/{p}") and "Z" not in open(f"/proc/{p}/stat").read().split()[2]]
    assert not alive, f"workers {alive} outlived their parent"


def test_with_a_cost_the_costliest_jobs_are_handed_out_first_and_results_stay_in_job_order(monkeypatch):
    import concurrent.futures as cf

    submitted = []

    class InlinePool:                                                  # records the hand-out order
        def __init__(self, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, *args):
            submitted.append(args)
            f = cf.Future()
            f.set_result(fn(*args))
            return f

    monkeypatch.setattr(cf, "ProcessPoolExecutor", InlinePool)
    jobs = [(2, 1), (3, 3), (5, 2), (7, 3)]
    assert parallel_map(pow, jobs, workers=2, progress=False, cost=lambda job: job[1]) == [2, 27, 25, 343]
    assert submitted == [(3, 3), (7, 3), (5, 2), (2, 1)]                # costliest first, ties in job order
    submitted.clear()
    parallel_map(pow, jobs, workers=2, progress=False)
    assert submitted == jobs                                           # no cost: job order
