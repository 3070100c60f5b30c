"""Where the dashboard's heavy jobs run: in this server's threads, or on a Dask cluster.

One decision in one place.  Without a scheduler configured nothing changes: every job runs in
the server (bounded by its job slots).  With ``SBLR_DASK_SCHEDULER=tcp://HOST:8786`` in the
server's environment (or ``dask_scheduler = "tcp://HOST:8786"`` in ``.streamlit/secrets.toml``)
the jobs that take seconds to minutes -- Compare's folds (all of them submitted at once), Tune's
grid, the stability resamples and the evidence of uploads of ``CLUSTER_EVIDENCE_ROWS``
rows or more -- run on the cluster's workers through ``distributed``; the
server only sends them, waits (saying so) and caches the results.  The workers (and the
scheduler, which unpickles the tasks) need sblr importable, as for ``sblr benchmark
--scheduler``; a cluster without it is refused with a message.  A job on the cluster reports
no step-by-step progress: the page says it runs there.
"""

from __future__ import annotations

import hashlib
import os
import threading

import streamlit as st

from sblr.exceptions import DataError

__all__ = [
    "CLUSTER_EVIDENCE_ROWS",
    "on_cluster",
    "run",
    "runs_on_cluster",
    "scheduler_address",
    "submit",
]

#: The environment variable naming the Dask scheduler of the heavy jobs.
SCHEDULER_ENV = "SBLR_DASK_SCHEDULER"


def scheduler_address() -> str | None:
    """The configured scheduler (environment first, then the app's secrets), or None."""
    address = os.environ.get(SCHEDULER_ENV, "").strip()
    if not address:
        try:
            address = str(st.secrets.get("dask_scheduler", "") or "").strip()
        except Exception:  # no secrets file: the usual case
            address = ""
    return address or None


def on_cluster() -> bool:
    """Whether heavy jobs run on a Dask cluster."""
    return scheduler_address() is not None


_clients: dict = {}
_clients_lock = threading.Lock()


#: From this many rows an upload's evidence is computed on the Dask cluster, when one is
#: configured : exact evidence at 5,000 rows takes about 0.3 s here.
CLUSTER_EVIDENCE_ROWS = 5_000


def runs_on_cluster(job: str, ds=None) -> bool:
    """Where a heavy job runs: the one place that decides. With a Dask cluster configured
    , Compare's folds, Tune's grid and the stability resamples run
    there, and the evidence of uploads from CLUSTER_EVIDENCE_ROWS rows; every other
    computation (fits, paths, explanations: tenths of a second) runs here, in a job slot."""
    if job not in ("compare", "tune", "stability", "evidence"):
        raise ValueError(f"unknown job {job!r}")
    if not on_cluster():
        return False
    return job != "evidence" or ds.n_samples >= CLUSTER_EVIDENCE_ROWS


def _client(address: str):
    """One client per server process and scheduler, checked once: sblr must import there.
    (Not an ``st.cache_resource``: a distributed Client is awaitable, which Streamlit's caches
    refuse.)"""
    with _clients_lock:
        client = _clients.get(address)
        if client is None or client.status == "closed":
            client = _clients[address] = _connect(address)
        return client


def _forget_clients() -> None:
    """Close every client (tests, and a server that changes its scheduler)."""
    with _clients_lock:
        for client in _clients.values():
            client.close()
        _clients.clear()


def _connect(address: str):
    # lazy: Dask's client costs seconds; only with a cluster configured
    from distributed import Client

    from sblr._backends import SCHEDULER_TIMEOUT, check_cluster

    if "://" not in address:
        raise DataError(f"{SCHEDULER_ENV} must look like tcp://HOST:PORT; got {address[:40]!r}.")
    try:
        client = Client(address, timeout=SCHEDULER_TIMEOUT)
    except OSError as exc:
        raise DataError(f"Cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        client.wait_for_workers(1, timeout=60)
    except (OSError, TimeoutError):
        client.close()
        raise DataError(f"The Dask scheduler at {address} has no workers.") from None
    check_cluster(client, address)
    return client


def _key(name: str, parts) -> str:
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:24]
    return f"sblr-{name}-{digest}"


def submit(name: str, parts, func, *args, **kwargs):
    """Start ``func(*args, **kwargs)`` on the cluster and return its future.  With ``parts``
    (what identifies the result: the data key and the settings) the job gets a key made of
    them, so that the same job submitted twice runs once (every Compare fold is submitted
    first, then waited for one by one); ``parts=None``: a job of its own."""
    client = _client(scheduler_address())
    if parts is None:
        return client.submit(func, *args, pure=False, **kwargs)
    return client.submit(func, *args, key=_key(name, parts), pure=False, **kwargs)


def run(name: str, parts, func, *args, **kwargs):
    """``func(*args, **kwargs)``: on the cluster when one is configured (waiting for it there,
    with a spinner that says so), else here.  ``name`` and ``parts`` identify the job (see
    :func:`submit`)."""
    if not on_cluster():
        return func(*args, **kwargs)
    with st.spinner(f"Running on the Dask cluster at {scheduler_address()}…"):
        return submit(name, parts, func, *args, **kwargs).result()
