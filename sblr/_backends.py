"""Where the paper's protocol runs its folds: joblib's local processes, or its Dask backend on
a distributed cluster (``sblr benchmark --scheduler``; the dashboard's cluster checks the same
way that every machine of it can import sblr)."""

from __future__ import annotations

import os
from contextlib import ExitStack, contextmanager

from joblib import parallel_config

from sblr.exceptions import DataError

__all__ = ["SCHEDULER_TIMEOUT", "check_cluster", "joblib_backend"]

#: How long to try to reach a Dask scheduler before giving up.
SCHEDULER_TIMEOUT = "10s"


@contextmanager
def joblib_backend(scheduler, n_jobs):
    """joblib's default (local processes) or its dask backend on a distributed cluster.

    Yields the ``n_jobs`` to give ``Parallel``.
    """
    if scheduler is None:
        yield n_jobs
        return
    try:
        from distributed import Client, LocalCluster  # lazy: Dask, only with a scheduler
    except ImportError:  # pragma: no cover - distributed is in requirements.txt
        raise DataError(
            "Running on a Dask cluster needs the distributed package: pip install distributed"
        ) from None
    with ExitStack() as stack:
        if scheduler == "local":
            if n_jobs in (None, -1):
                workers = os.cpu_count() or 1
            else:
                workers = max(1, int(n_jobs))
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                )
            )
            client = stack.enter_context(Client(cluster))
        else:
            if "://" not in str(scheduler):
                raise DataError(
                    f"A Dask scheduler address looks like tcp://HOST:PORT (or use 'local'); "
                    f"got {scheduler!r}."
                )
            try:
                client = stack.enter_context(Client(scheduler, timeout=SCHEDULER_TIMEOUT))
            except OSError as exc:
                raise DataError(f"Cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        try:
            client.wait_for_workers(1, timeout=60)
        except (OSError, TimeoutError):
            raise DataError(f"The Dask scheduler at {scheduler} has no workers.") from None
        check_cluster(client, scheduler)
        stack.enter_context(parallel_config(backend="dask"))
        yield -1


def check_cluster(client, scheduler):
    """Fail fast unless the scheduler and every worker can import sblr.

    The scheduler unpickles the tasks too; without sblr it drops them and the
    client would wait forever.
    """

    def _sblr_importable():  # nested: pickled by value, so it runs where sblr is missing
        import importlib.util  # inside: the function travels to the worker by value

        return importlib.util.find_spec(__package__) is not None  # "sblr"; by value too

    where = []
    if not client.run_on_scheduler(_sblr_importable):
        where.append("the scheduler")
    missing = [w for w, ok in client.run(_sblr_importable).items() if not ok]
    if missing:
        where.append(f"{len(missing)} worker(s) ({', '.join(sorted(missing)[:3])})")
    if where:
        raise DataError(
            f"sblr cannot be imported on {' and '.join(where)} of the Dask cluster at "
            f"{scheduler}: start them where sblr is installed (pip install -e . in the "
            "repository) or with PYTHONPATH set to the repository."
        )
