"""Independent jobs (seeds, models) in worker processes, one thread each.

Small models on a 2-core laptop are dominated by per-operation overhead, so two of them trained
at once, one thread each, finish sooner than the same two trained one after the other on two
threads. Measured on a 2-core machine: notebook 01's seed at 1000 training
sentences took 74 s as one of two workers, against about 115 s alone on two threads. Every job
seeds itself and runs at one thread whether in a worker or (``workers=1``) in the caller's
process, so the results do not depend on the number of workers. A worker dies with the
process that started it (Linux), so stopping a notebook run leaves no training processes behind.
Our design: the paper is silent.
"""
from __future__ import annotations

import ctypes
import signal
import sys
from typing import Any, Callable, Sequence

from .threads import JOB_THREADS, set_threads, threads_for_jobs


def _die_with_parent() -> bool:
    """Linux: ask the kernel to send this process SIGTERM when its parent dies (``prctl``
    ``PR_SET_PDEATHSIG``), so that killing a notebook run leaves no orphaned training workers.
    Returns False (and changes nothing) elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL("libc.so.6").prctl(1, int(signal.SIGTERM), 0, 0, 0) == 0  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _init_worker() -> None:
    _die_with_parent()
    set_threads(JOB_THREADS)


def parallel_map(fn: Callable[..., Any], jobs: Sequence[tuple], workers: int = 1, desc: str | None = None,
                 progress: bool = True, bar=None, cost: Callable[[tuple], float] | None = None) -> list:
    """``[fn(*job) for job in jobs]``, in job order, computed by ``workers`` processes.

    Args:
        fn: a module-level function (it is pickled by name into spawned workers).
        jobs: one argument tuple per call (each must pickle).
        workers: processes (>= 1); 1 runs the jobs here, in order. Every job runs with
            :data:`~paper_lib.pipeline.threads.JOB_THREADS` (one) torch, BLAS and OpenMP threads,
            in a worker process or here (the caller's counts are restored after), so the numbers
            do not depend on ``workers`` (floating-point sums depend on the thread count).
        desc: label of the tqdm bar. progress: show the bar (one tick per finished job).
        bar: an open tqdm bar to advance instead (a notebook's bar over several calls; not closed here).
        cost: ``cost(job)`` (any unit; only the order matters): with ``workers > 1`` the jobs are handed
            out costliest first (ties in job order), so the workers finish together rather than one
            waiting on a long job handed out last. The results stay in job order.

    Returns:
        the results, in the order of ``jobs``.

    Raises:
        ValueError: ``workers`` not an integer >= 1.
        Exception: the first exception a job raised, after the pending jobs are cancelled.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    from tqdm.auto import tqdm

    jobs = list(jobs)
    own = bar is None
    if own:
        bar = tqdm(total=len(jobs), desc=desc, disable=not progress)
    try:
        if workers == 1 or len(jobs) <= 1:
            out = []
            with threads_for_jobs(JOB_THREADS):
                for job in jobs:
                    out.append(fn(*job))
                    bar.update(1)
            return out
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor, as_completed

        results: list = [None] * len(jobs)
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=mp.get_context("spawn"),
                                 initializer=_init_worker) as pool:
            order = sorted(range(len(jobs)), key=lambda i: -cost(jobs[i])) if cost else range(len(jobs))
            futures = {pool.submit(fn, *jobs[i]): i for i in order}      # handed out in this order
            try:
                for f in as_completed(futures):
                    results[futures[f]] = f.result()
                    bar.update(1)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
        return results
    finally:
        if own:
            bar.close()


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``: with jobs ``(fn, *args)`` one :func:`parallel_map` runs jobs of different functions
    (each module-level), so a notebook's stages share one pool and its workers finish together."""
    return fn(*args)
