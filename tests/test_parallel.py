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
def test_workers_die_with_their_parent(tmp_path):
    """A process running parallel_map is killed mid-run: its workers must not survive it. Each job
    first writes a file named by its pid (so its worker has passed the initializer, which asks to
    die with the parent); the waits below only bound a hang, nothing depends on their length."""
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "mark_then_sleep.py").write_text(
        "import os, pathlib, time\n"
        "def run(folder):\n"
        "    pathlib.Path(folder, str(os.getpid())).write_text('')\n"
        "    time.sleep(300)\n", encoding="utf-8")
    code = ("from paper_lib.pipeline.parallel import parallel_map\n"
            "import mark_then_sleep\n"
            "if __name__ == '__main__':\n"
            f"    parallel_map(mark_then_sleep.run, [({str(tmp_path)!r},), ({str(tmp_path)!r},)], workers=2, progress=False)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)

    def running() -> list[int]:
        return [int(f.name) for f in tmp_path.iterdir() if f.name.isdigit()]

    def alive(pids: list[int]) -> list[int]:
        return [p for p in pids if os.path.exists(f"/proc/{p}")
                and "Z" not in open(f"/proc/{p}/stat").read().split()[2]]

    deadline = time.time() + 300
    while time.time() < deadline and len(running()) < 2 and proc.poll() is None:
        time.sleep(0.2)
    workers = running()
    assert len(workers) == 2, "the workers did not start their jobs"
    assert set(workers) <= set(_children(proc.pid))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 120
    while time.time() < deadline and alive(workers):
        time.sleep(0.2)
    left = alive(workers)
    for pid in left:                                                   # leave nothing behind on a failure
        os.kill(pid, signal.SIGKILL)
    assert not left, f"workers {left} outlived their parent"


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
