"""sblr.dashboard: starting, waiting for and stopping a server (without Streamlit here; the
browser tests start the real dashboard with it)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sblr.dashboard import ServerStartError, free_port, stop_dashboard, wait_until_healthy


class _Health(BaseHTTPRequestHandler):
    #: Health checks answered "starting" before the first "ok" (a server still starting).
    not_yet = 0
    asked = 0

    def do_GET(self):  # noqa: N802 (the name http.server calls)
        type(self).asked += 1
        ready = self.path == "/_stcore/health" and type(self).asked > type(self).not_yet
        body = b"ok" if ready else b"starting"
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # no request lines in the test output
        pass


@pytest.mark.slow
def test_waits_until_the_health_check_answers_ok(monkeypatch):
    """A server that answers "starting" twice: the wait asks again until "ok" (three checks,
    two pauses), not at the first answer."""
    monkeypatch.setattr(_Health, "not_yet", 2)
    monkeypatch.setattr(_Health, "asked", 0)
    with ThreadingHTTPServer(("127.0.0.1", 0), _Health) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}"
            waited = wait_until_healthy(url, timeout=10, interval=0.05)
        finally:
            server.shutdown()
    assert _Health.asked == 3
    assert waited >= 2 * 0.05  # it paused between the checks


@pytest.mark.slow
def test_nothing_listening_times_out_with_the_log(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("the last words of the server")
    with pytest.raises(ServerStartError, match="(?s)did not answer 'ok'.*last words"):
        wait_until_healthy(f"http://127.0.0.1:{free_port()}", timeout=0.3, interval=0.05, log=log)


@pytest.mark.slow
def test_an_exited_server_is_an_error_at_once():
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    process.wait(timeout=30)
    with pytest.raises(ServerStartError, match="exited with 3"):
        wait_until_healthy(f"http://127.0.0.1:{free_port()}", process, timeout=30)


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_stop_ends_the_whole_process_group():
    """As Streamlit's own worker processes: a child of the server goes with it."""
    code = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(child.pid, flush=True)\n"
        "child.wait()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    child = int(process.stdout.readline())
    assert _alive(child)
    stop_dashboard(process, grace=10)
    process.stdout.close()
    assert process.poll() is not None
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)
    stop_dashboard(process)  # stopping a stopped server does nothing
