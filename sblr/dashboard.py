"""Start the dashboard (``streamlit run app.py`` of a checkout) as a headless server.

The one way the browser tests and the benchmarks start a server: on a free port of
127.0.0.1, waiting until ``/_stcore/health`` answers ``ok``, and stopped with its whole
process group.  The server is a separate process: this module never imports Streamlit.

Examples
--------
>>> from sblr.dashboard import running_dashboard
>>> with running_dashboard("path/to/checkout") as server:  # doctest: +SKIP
...     print(server.url)
http://127.0.0.1:40123
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "DashboardServer",
    "ServerStartError",
    "free_port",
    "running_dashboard",
    "start_dashboard",
    "stop_dashboard",
    "wait_until_healthy",
]

HOST = "127.0.0.1"
#: Debian's Chromium, which the browser tests and benchmarks drive (``.ci/run`` installs it),
#: and the flags they start it with: no sandbox (a container's root), no GPU, nothing fetched
#: (no internet but the package registries).
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


class ServerStartError(RuntimeError):
    """The server exited, or did not answer its health check in time."""


@dataclass
class DashboardServer:
    """A started ``streamlit run app.py``.

    Attributes
    ----------
    url : str
        ``http://127.0.0.1:<port>``, without a trailing slash.
    process : subprocess.Popen
        The server, leader of its own process group.
    log : pathlib.Path
        Where its standard output and error go.
    """

    url: str
    process: subprocess.Popen
    log: Path


def free_port(host: str = HOST) -> int:
    """A TCP port nothing listens on at the moment (the system's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def start_dashboard(app_dir, *, port=None, log, extra_args=()) -> DashboardServer:
    """Start ``streamlit run app.py`` in ``app_dir`` (headless, 127.0.0.1, no usage statistics).

    Returns at once; :func:`wait_until_healthy` waits for it.  From ``app_dir``, so that
    Streamlit reads the checkout's ``.streamlit/config.toml``.

    Parameters
    ----------
    app_dir : path-like
        The folder of ``app.py`` (a checkout of the repository).
    port : int, optional
        Default: :func:`free_port`.
    log : path-like
        The server's output (standard output and error) goes to this file.
    extra_args : sequence of str
        More options for ``streamlit run``.
    """
    port = free_port() if port is None else int(port)
    log = Path(log)
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        HOST,
        "--browser.gatherUsageStats",
        "false",
        *extra_args,
    ]
    with open(log, "wb") as out:
        # Its own process group: stopping it stops the processes it started too.
        process = subprocess.Popen(
            cmd, cwd=app_dir, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    return DashboardServer(f"http://{HOST}:{port}", process, log)


def wait_until_healthy(url, process=None, *, timeout=60.0, interval=0.2, log=None) -> float:
    """Wait until ``url/_stcore/health`` answers ``ok``; the seconds waited.

    Raises :class:`ServerStartError` if ``process`` (when given) exits first or the time is
    up; the message ends with the end of ``log`` when given.
    """
    start = time.perf_counter()
    while True:
        if process is not None and process.poll() is not None:
            raise ServerStartError(f"streamlit exited with {process.returncode}" + _log_tail(log))
        with contextlib.suppress(OSError):  # not listening yet, or a reset connection
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.read().strip() == b"ok":
                    return time.perf_counter() - start
        if time.perf_counter() - start > timeout:
            raise ServerStartError(
                f"{url}/_stcore/health did not answer 'ok' within {timeout:g} s" + _log_tail(log)
            )
        time.sleep(interval)


def stop_dashboard(process: subprocess.Popen, *, grace: float = 10.0) -> None:
    """Stop the server's process group: SIGTERM, then SIGKILL after ``grace`` seconds."""
    if process.poll() is not None:
        return
    if not hasattr(os, "killpg"):  # Windows: no process group to signal
        process.terminate()
        process.wait(timeout=grace)
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=grace)
    except ProcessLookupError:  # exited in the meantime
        pass


@contextlib.contextmanager
def running_dashboard(app_dir, *, port=None, log=None, timeout=60.0, interval=0.2):
    """A healthy dashboard server for the ``with`` block, stopped after it.

    ``log``: the server's output goes there; by default to a temporary file, removed after
    the block.  Other parameters as in :func:`start_dashboard` and :func:`wait_until_healthy`.
    Yields a :class:`DashboardServer`.
    """
    with contextlib.ExitStack() as stack:
        if log is None:
            log = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "streamlit.log"
        server = start_dashboard(app_dir, port=port, log=log)
        stack.callback(stop_dashboard, server.process)
        wait_until_healthy(
            server.url, server.process, timeout=timeout, interval=interval, log=server.log
        )
        yield server


def _log_tail(log, chars: int = 3000) -> str:
    if log is None:
        return ""
    try:
        text = Path(log).read_text(errors="replace")
    except OSError:
        return f"; see {log}"
    return f"; the end of {log}:\n{text[-chars:]}"
