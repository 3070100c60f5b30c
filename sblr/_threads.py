"""Threads, in one place: how many the library may use, and BLAS kept on one thread while
they run.

The logistic layer solves its classes in threads and the exact evidence computes its tiles in
threads (NumPy's exp and BLAS release the GIL); both keep OpenBLAS on one thread meanwhile
(:func:`single_threaded_blas`): their matrices are small, and threaded BLAS inside threads
spends more on synchronisation than it saves.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from threadpoolctl import threadpool_info

__all__ = ["evidence_threads", "run_in_threads", "single_threaded_blas", "worker_budget"]

#: Below this many kernel values the evidence is computed in the calling thread.
THREADED_MIN_VALUES = 2**21


def worker_budget() -> int:
    """Threads the logistic layer may use: the environment variable ``SBLR_NUM_THREADS`` if
    set (a positive integer), else the CPU cores this process may run on, at most 8."""
    env = os.environ.get("SBLR_NUM_THREADS", "").strip()
    if env:
        try:
            value = int(env)
        except ValueError:
            value = 0
        if value < 1:
            raise ValueError(f"SBLR_NUM_THREADS must be a positive integer; got {env!r}.")
        return value
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


@functools.cache
def _thread_local_blas_setters():
    """OpenBLAS's ``openblas_set_num_threads_local`` of every loaded OpenBLAS (0.3.27+): it
    sets the number of BLAS threads for the CALLING thread only.  Empty for other BLAS."""
    setters = []
    for info in threadpool_info():
        if info.get("internal_api") != "openblas":
            continue
        try:
            fn = ctypes.CDLL(info["filepath"]).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
        setters.append(fn)
    return tuple(setters)


_blas_lock = threading.Lock()
_blas_users = 0
_blas_saved: tuple = ()


@contextmanager
def single_threaded_blas():
    """OpenBLAS on one thread while the block runs (re-entrant, safe from many threads).

    The logistic layer's matrices and the evidence's tiles are small: threaded BLAS spends
    more on synchronisation than it saves there, 10x and more on a busy machine, so the
    work runs in our own threads instead.  The setter (``openblas_set_num_threads_local``)
    acts on the whole process in the OpenBLAS wheels of NumPy and SciPy, so two threads
    setting and restoring it each on their own can leave it at 1 (the second saves the
    first's 1 and restores it last; measured).  Here it is set by the first user, counted
    under a lock, and restored by the last one to leave, from whichever thread.  Does
    nothing with another BLAS.
    """
    global _blas_users, _blas_saved
    setters = _thread_local_blas_setters()
    with _blas_lock:
        if _blas_users == 0:
            _blas_saved = tuple(fn(1) for fn in setters)
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                for fn, value in zip(setters, _blas_saved, strict=True):
                    fn(value)


def evidence_threads(n_values):
    """Threads for ``n_values`` kernel values: 1 below :data:`THREADED_MIN_VALUES`, else the
    logistic layer's budget (``SBLR_NUM_THREADS``, else the cores, at most 8), at most
    ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS`` when set (joblib's
    and Dask's worker processes set them to their share of the cores)."""
    if n_values < THREADED_MIN_VALUES:
        return 1
    budget = worker_budget()
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            budget = min(budget, int(value))
    return max(1, budget)


def run_in_threads(tasks, n_threads):
    """Call every task, in ``n_threads`` threads, BLAS on one thread meanwhile."""
    queue, lock = iter(tasks), threading.Lock()

    def next_task():
        with lock:
            return next(queue, None)

    def worker():
        while (task := next_task()) is not None:
            task()

    with single_threaded_blas():
        if n_threads <= 1:
            worker()
            return
        with ThreadPoolExecutor(n_threads) as pool:
            for future in [pool.submit(worker) for _ in range(n_threads)]:
                future.result()
