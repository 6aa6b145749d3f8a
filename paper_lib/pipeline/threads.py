"""One place that sets every CPU thread pool a notebook or the training CLI uses.

A researcher's laptop is rarely idle. Measured on a 2-core machine, notebook 01 at
the smoke profile beside two single-threaded busy loops: with the default threads it took 4.5x
its idle wall time and 3.9x its idle CPU seconds (OpenMP threads spinning while they wait for a
core); with 2 threads told to sleep while they wait (``OMP_WAIT_POLICY=PASSIVE``) 1.8x the wall
time. ``make bench-contention`` repeats the measurement (``figures/bench/contention.csv``). So
:func:`set_threads` sets, once:

- ``torch``'s intra-op pool (``torch.set_num_threads``);
- the pools of numpy's and scipy's BLAS (OpenBLAS or MKL) and of scikit-learn's OpenMP, through
  ``threadpoolctl`` (they otherwise start one spinning thread per core);
- the environment for any process started afterwards (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``,
  ``OPENBLAS_NUM_THREADS`` and ``OMP_WAIT_POLICY=PASSIVE``, threads sleep instead of spinning);
- glibc's allocator, so that large tensors are reused from the heap instead of being mapped and
  zero-filled by the kernel at every step (:func:`tune_allocator`: a page-fault cost that showed
  up as ``aten::fill_`` in the profile of a SPEN step).

The OpenMP wait policy is read once, when the OpenMP runtime starts (at ``import torch``), so it
must be in the environment of the process before that: the notebook runner puts it in the
kernel's environment (:data:`WAIT_POLICY_ENV`); a script sets it in its shell
(``OMP_WAIT_POLICY=PASSIVE python -m paper_lib.lm_recipe ...``). Our design: the paper is silent.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from typing import Iterator

from .profiles import PROFILES

WAIT_POLICY_ENV: dict[str, str] = {"OMP_WAIT_POLICY": "PASSIVE"}
"""Environment a process needs *before* its OpenMP runtime starts: waiting threads sleep."""

_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_LIMITER = None  # the threadpoolctl limiter, kept alive so its limits hold


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


JOB_THREADS = 1
"""Threads of each job of :func:`paper_lib.pipeline.parallel.parallel_map`, in a worker process or
(``workers=1``) in the caller's, so its numbers do not depend on ``workers``."""


def default_threads(profile: str | None = None) -> int:
    """The thread count ``n_threads=None`` means: ``OMP_NUM_THREADS`` when the environment sets
    it (``torchrun`` sets 1 per worker; it is recorded in every stamp), else
    ``profile``'s :attr:`~paper_lib.pipeline.profiles.Profile.threads` (``cpu``'s for None or a
    name it lacks), never the machine's core count: results (the order of floating-point sums)
    depend on it, so two machines must not publish different numbers under one stamp. Raises nothing."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) >= 1:
        return int(env)
    return PROFILES.get(profile or "cpu", PROFILES["cpu"]).threads


@contextlib.contextmanager
def threads_for_jobs(n: int = JOB_THREADS) -> Iterator[int]:
    """Run the block with ``n`` torch, BLAS and OpenMP threads, then give the caller back its own
    counts: how :func:`paper_lib.pipeline.parallel.parallel_map` runs jobs in this process
    (``workers=1``) at the thread count of its worker processes. Our design: the paper is silent."""
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        with threadpool_limits(limits=n):
            yield n
    finally:
        torch.set_num_threads(before)


def threads_in_use() -> int:
    """Torch's intra-op thread count in this process now (what :func:`set_threads` set), for the
    provenance stamp: results are identical only at equal thread counts."""
    import torch

    return torch.get_num_threads()


def machine() -> dict[str, str]:
    """The processor of this run, for the stamps: ``cpu`` (the OS's model name) and ``cpu_capability``
    (torch's kernel dispatch level, ``ATEN_CPU_CAPABILITY`` included). Bit-identical results need the
    same kind of machine at equal thread counts (README, "Reproducibility"). Our design."""
    import platform

    import torch

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        cpu = ""
    return {"cpu": cpu or platform.processor() or platform.machine(), "cpu_capability": torch.backends.cpu.get_cpu_capability()}


def tune_allocator() -> bool:
    """Keep large freed blocks in glibc's heap for reuse (``mallopt``: mmap threshold 1 GiB, trim
    threshold 2 GiB) instead of returning them to the OS and page-faulting them back, zero-filled,
    at the next step. Our measurement: the zero-filling showed up as ``aten::fill_``, up
    to 9% of a SPEN training step. Returns False (and changes nothing) without glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 1 << 30)) and bool(libc.mallopt(m_trim_threshold, 1 << 31))
    except (OSError, AttributeError):
        return False


def set_threads(n: int | None = None, profile: str | None = None, allocator: bool = True) -> int:
    """Set every CPU thread pool of this process to ``n`` threads; return ``n``.

    Args:
        n: threads (>= 1), or ``None`` for :func:`default_threads` of ``profile`` (fixed per
            profile, not the machine's cores).
        profile: the run's profile, used only when ``n`` is None.
        allocator: also call :func:`tune_allocator`.

    Sets torch's intra-op threads, the BLAS and OpenMP pools that ``threadpoolctl`` finds
    (numpy, scipy, scikit-learn), and the thread-count and ``OMP_WAIT_POLICY=PASSIVE`` variables
    for processes started later. The wait policy of *this* process's OpenMP runtime is whatever
    its environment held when torch was imported (see the module docstring).

    Raises:
        ValueError: ``n`` not None and not an integer >= 1.
    """
    global _LIMITER
    if n is None:
        n = default_threads(profile)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n_threads must be None (automatic) or an integer >= 1, got {n!r}")
    import torch
    from threadpoolctl import threadpool_limits

    for key in _THREAD_ENV:
        os.environ[key] = str(n)
    os.environ.update(WAIT_POLICY_ENV)
    torch.set_num_threads(n)
    _LIMITER = threadpool_limits(limits=n)
    if allocator:
        tune_allocator()
    return n


def thread_report() -> dict:
    """What this process runs with: torch threads, the BLAS/OpenMP pools and the wait policy."""
    import torch
    from threadpoolctl import threadpool_info

    return {"torch": torch.get_num_threads(), "wait_policy": os.environ.get("OMP_WAIT_POLICY", "(default)"),
            "pools": sorted({(p["internal_api"], p["num_threads"]) for p in threadpool_info()})}
