"""Independent jobs (seeds, models) in worker processes, one thread each: small models train sooner
two at once on one thread each than one after the other on two (2 cores: 74 s against 115 s), and the
results do not depend on the number of workers. Our design: the paper is silent.
"""
from __future__ import annotations

import ctypes
import signal
import sys
from typing import Any, Callable, Sequence

from .threads import JOB_THREADS, set_threads, threads_for_jobs


def _die_with_parent() -> bool:
    """Linux: have this process get SIGTERM when its parent dies (``PR_SET_PDEATHSIG``); False elsewhere."""
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
        fn, jobs: a module-level function (pickled by name) and one argument tuple per call (picklable).
        workers: processes (>= 1); 1 runs the jobs here. Each runs at :data:`~paper_lib.pipeline.threads.JOB_THREADS` (one) thread.
        desc: label of the tqdm bar. progress: show the bar (one tick per finished job).
        bar: an open tqdm bar to advance instead (not closed here).
        cost: ``cost(job)``: with ``workers > 1`` the costliest jobs are handed out first (ties in
            job order), so the workers finish together.

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
    """``fn(*args)``: with jobs ``(fn, *args)``, one :func:`parallel_map` runs jobs of different functions."""
    return fn(*args)
