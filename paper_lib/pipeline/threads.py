"""One place that sets every CPU thread pool a notebook or the training CLI uses.

A laptop is rarely idle: on 2 cores beside two busy loops, notebook 01 at smoke took 4.5x its idle wall time
with the default threads (OpenMP threads spinning for a core), 1.8x with 2 threads that sleep while they wait
(``make bench-contention``, ``figures/bench/contention.csv``). So :func:`set_threads` sets torch's pool, the
BLAS/OpenMP pools (``threadpoolctl``), the environment of later processes and glibc's allocator
(:func:`tune_allocator`). The OpenMP wait policy is read when the runtime starts (``import torch``), so the
runner puts :data:`WAIT_POLICY_ENV` in the kernel's environment and a script sets it in its shell
(``OMP_WAIT_POLICY=PASSIVE python -m paper_lib.lm_recipe ...``). Our design: the paper is silent.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import os
import sys
from pathlib import Path
from typing import Iterator

from .profiles import PROFILES

WAIT_POLICY_ENV: dict[str, str] = {"OMP_WAIT_POLICY": "PASSIVE"}
"""Environment a process needs *before* its OpenMP runtime starts: waiting threads sleep."""

_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_LIMITER = None  # the threadpoolctl limiter, kept alive so its limits hold


JOB_THREADS = 1
"""Threads of each job of :func:`paper_lib.pipeline.parallel.parallel_map`, whatever its ``workers``."""


def default_threads(profile: str | None = None) -> int:
    """The threads ``n_threads=None`` means: ``OMP_NUM_THREADS`` where set (``torchrun`` sets 1), else
    ``profile``'s :attr:`~paper_lib.pipeline.profiles.Profile.threads` (``cpu``'s for None or an unknown
    name), never the core count: results depend on it. Raises nothing."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) >= 1:
        return int(env)
    return PROFILES.get(profile or "cpu", PROFILES["cpu"]).threads


@contextlib.contextmanager
def threads_for_jobs(n: int = JOB_THREADS) -> Iterator[int]:
    """Run the block with ``n`` torch, BLAS and OpenMP threads, then restore the caller's counts (how
    :func:`paper_lib.pipeline.parallel.parallel_map` runs jobs in-process at its workers' thread count)."""
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
    """Torch's intra-op thread count now (what :func:`set_threads` set), for the provenance stamp."""
    import torch

    return torch.get_num_threads()


@functools.cache
def machine() -> dict:
    """For the stamps, what the numbers depend on besides the code and threads: ``cpu`` (the model), ``cpu_capability``
    (torch's dispatch level), ``versions`` of torch, numpy, scipy, scikit-learn, pandas and ``blas``: each BLAS loaded
    with numpy's and scipy's (threadpoolctl's library, version, owner; torch's is in its build)."""
    import platform
    from importlib import metadata

    import scipy.linalg  # noqa: F401  (loads scipy's BLAS beside numpy's)
    import torch
    from threadpoolctl import threadpool_info

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        cpu = ""
    versions = {n: metadata.version(n) for n in ("torch", "numpy", "scipy", "scikit-learn", "pandas")
                if importlib.util.find_spec(n.replace("scikit-learn", "sklearn"))}
    blas = {f"{p['internal_api']} {p['version']} ({Path(p['filepath']).parent.name.removesuffix('.libs')})"
            for p in threadpool_info() if p["user_api"] == "blas"}
    return {"cpu": cpu or platform.processor() or platform.machine(), "cpu_capability":
            torch.backends.cpu.get_cpu_capability(), "versions": {**versions, "blas": "; ".join(sorted(blas))}}


def tune_allocator() -> bool:
    """Keep large freed blocks in glibc's heap (``mallopt``: mmap threshold 1 GiB, trim threshold 2 GiB) rather
    than page-fault them back zero-filled (up to 9% of a SPEN step). Returns False, changing nothing, without glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 1 << 30)) and bool(libc.mallopt(m_trim_threshold, 1 << 31))
    except (OSError, AttributeError):
        return False


def set_threads(n: int | None = None, profile: str | None = None, allocator: bool = True) -> int:
    """Set torch's, BLAS's and OpenMP's thread pools and the environment of later processes to ``n`` threads
    (``None``: :func:`default_threads` of ``profile``); ``allocator``: also :func:`tune_allocator`. Returns ``n``.
    Raises ValueError: ``n`` not None and not an integer >= 1."""
    global _LIMITER
    n = default_threads(profile) if n is None else n
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
