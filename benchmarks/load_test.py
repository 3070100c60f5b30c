"""Load test of the dashboard as a shared server for a class: N concurrent browser sessions.

The dashboard is meant to be hosted for a class.  This script starts
``streamlit run app.py`` on 127.0.0.1 (or uses ``--url`` of a running server),
opens ONE headless Chromium (Debian's ``/usr/bin/chromium`` through
Playwright; never a downloaded browser) and drives ``--sessions`` browser
contexts at once (asyncio.gather), each a separate Streamlit session on its own
websocket.  Each session makes a short scripted visit:

* most sessions upload their own CSV, generated here with numpy from a
  per-session seed (300-800 rows, 10-20 features, 3-6 classes; every other one
  multi-label with 0/1 label columns chosen in the multiselect, some
  multi-class ones with the target column first so that it has to be chosen in
  the select box), and click "Load this file";
* every 5th session uses the sample data instead (the planted sample from a
  shared deep link to the Coefficients page, or the wine sample chosen on the
  home page);
* then: open Model & metrics, click "Tune SparseSBLR", open Coefficients β,
  move the λ slider three steps and the γ slider one step with the keyboard.

Response time of an action = from the action (click, key press, navigation) until
the Streamlit run it triggered has finished: the text the run should produce is
there (a success message, the page's heading and a caption written after its
chart, the new λ in the URL and in the sparsity caption, ...), the sidebar's
Model and λ widgets are drawn, and the app is idle (script state
``notRunning``, connected, no status widget, no spinner, no stale elements)
for 300 ms; the time is taken at the start of that idle period.  Charts are
not waited for (20 pages parsing Plotly on 2 cores would time the browser);
the β heatmaps are checked once, untimed, at the end of each visit.  For
"open" the report also gives the part until DOMContentLoaded (HTML + scripts).

Errors: a Streamlit exception element, an ``st.error`` alert, a JavaScript
error, a page crash, an action timeout (``--timeout`` s each), the sidebar's
Model no longer SparseSBLR (lost widget state), and tracebacks in the server's
log (when this script started the server).  After an exception, an st.error or
a timeout the session stops.  A message "waiting for a free worker" (the
server-wide limit of concurrent heavy computations) is normal; the script
counts the actions during which it was seen.

The server's peak memory is sampled from /proc/<pid>/status (VmRSS of the
server process and all its descendants, every 0.2 s); VmHWM of the server
process is read at the end.

Run from the repo root (with sblr importable: `pip install -e .` in the repository; it
starts the server with :mod:`sblr.dashboard`)::

    python benchmarks/load_test.py --quick          # 4 sessions
    python benchmarks/load_test.py                  # 20 sessions
    python benchmarks/load_test.py --sessions 30 --timeout 240
    python benchmarks/load_test.py --url http://127.0.0.1:8501 [--server-pid PID]
    python benchmarks/load_test.py --screenshots test-artifacts/load --server-log server.log

The machine's load average is printed too: the browser runs on the same cores
as the server (at niceness ``--browser-nice``, 10), so figures taken while other
work runs are slower than a class would see.

The exit code is 1 when there was any error, 0 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sblr.dashboard import (
    CHROMIUM,
    CHROMIUM_ARGS,
    start_dashboard,
    stop_dashboard,
    wait_until_healthy,
)
from sblr.display import log_label
from sblr.registry import SPARSE_SBLR

ROOT = Path(__file__).resolve().parents[1]
# 20 pages in one browser: keep timers of pages in background running at full speed
BROWSER_ARGS = [
    *CHROMIUM_ARGS,
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]
LAMBDA_LABEL = "L1 strength λ (log₁₀)"
GAMMA_LABEL = "RBF width γ (log₁₀)"
HOME_TITLE = "Similarity-based classification you can look inside"
CAPTION = '[data-testid="stCaptionContainer"]'
#: Every action also waits until the sidebar's widgets are drawn: a page link clicked before
#: then makes Streamlit drop their state on the page change (Model falls back to SML).
SIDEBAR_READY = [
    {"sel": 'input[aria-label="Model"]'},
    {"sel": f'input[aria-label="{LAMBDA_LABEL}"]'},
]
MODEL = SPARSE_SBLR.label
WAIT_PATTERN = r"waiting for a free worker"
SETTLE_MS = 300
POLL_MS = 100
SAMPLE_EVERY = 5  # every 5th session uses the sample data (sessions 3, 8, 13, ...)


def is_sample_session(index: int) -> bool:
    return index % SAMPLE_EVERY == 3


# Counts the websocket messages from the server and the script runs the browser sees
# (data-test-script-state -> running), so that an action whose result is not visible
# otherwise (a select box pick) can wait for the server's answer.
INIT_JS = """
(() => {
    window.__lt = {runs: 0, messages: 0, idleSince: undefined, sawWait: false};
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
        constructor(...args) {
            super(...args);
            this.addEventListener('message', () => { window.__lt.messages += 1; });
        }
    };
    const observer = new MutationObserver((records) => {
        for (const r of records) {
            const state = r.target.getAttribute && r.target.getAttribute('data-test-script-state');
            if (state === 'running') window.__lt.runs += 1;
        }
    });
    observer.observe(document, {subtree: true, attributes: true,
                                attributeFilter: ['data-test-script-state']});
})();
"""

# Polled in the page: resolves when the expected result is there (or an exception is shown)
# and the app has been idle for `settle` ms.  Returns the idle start (epoch ms).
WAIT_JS = """
([settle, sinceMessages, needRun, expect, waitRe]) => {
    const lt = window.__lt;
    const app = document.querySelector('[data-testid="stApp"]');
    if (!lt || !app) return false;
    if (waitRe && !lt.sawWait && new RegExp(waitRe, 'i').test(app.textContent)) lt.sawWait = true;
    const visible = (el) => el && el.getClientRects().length > 0;
    const has = (c) => {
        if (c.url !== undefined) return new RegExp(c.url).test(location.href);
        const els = Array.from(document.querySelectorAll(c.sel)).filter(visible);
        if (c.text === undefined) return els.length >= (c.count || 1);
        return els.filter(el => el.textContent.includes(c.text)).length >= (c.count || 1);
    };
    // an exception or an unexpected st.error drawn by this action's run ends the wait too
    const answered = lt.messages > sinceMessages;
    const failed = answered && (document.querySelector('[data-testid="stException"]')
        || Array.from(document.querySelectorAll('[data-testid="stAlertContentError"]')).some(
            el => visible(el) && !(waitRe && new RegExp(waitRe, 'i').test(el.textContent))));
    const done = (failed || expect.every(has)) && (!needRun || answered);
    const idle = done
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && !document.querySelector('[data-testid="stStatusWidget"]')
        && !document.querySelector('[data-stale="true"]')
        && !document.querySelector('[data-testid="stSpinner"]');
    const now = performance.now();
    if (!idle) { lt.idleSince = undefined; return false; }
    if (lt.idleSince === undefined) lt.idleSince = now;
    if (now - lt.idleSince < settle) return false;
    return {idle: performance.timeOrigin + lt.idleSince, sawWait: lt.sawWait};
}
"""

# What is missing, for the message of a timed-out action.
DIAG_JS = """
([expect]) => {
    const app = document.querySelector('[data-testid="stApp"]');
    const visible = (el) => el && el.getClientRects().length > 0;
    const missing = expect.filter(c => {
        if (c.url !== undefined) return !new RegExp(c.url).test(location.href);
        const els = Array.from(document.querySelectorAll(c.sel)).filter(visible);
        const n = c.text === undefined ? els.length
            : els.filter(el => el.textContent.includes(c.text)).length;
        return n < (c.count || 1);
    }).map(c => c.url !== undefined ? `url ~ ${c.url}`
                                     : `${c.sel}${c.text ? ' "' + c.text + '"' : ''}`);
    return {
        state: app && app.getAttribute('data-test-script-state'),
        connection: app && app.getAttribute('data-test-connection-state'),
        status: !!document.querySelector('[data-testid="stStatusWidget"]'),
        spinner: !!document.querySelector('[data-testid="stSpinner"]'),
        stale: document.querySelectorAll('[data-stale="true"]').length,
        runs: window.__lt ? window.__lt.runs : null,
        messages: window.__lt ? window.__lt.messages : null,
        missing,
        url: location.href,
        model: (document.querySelector('input[aria-label="Model"]') || {}).value,
        alerts: Array.from(document.querySelectorAll('[data-testid="stAlert"]'),
                           el => el.innerText.slice(0, 120)),
    };
}
"""


# ----------------------------------------------------------------------------- data
@dataclass
class Upload:
    name: str
    data: bytes
    multilabel: bool
    target: str  # the target column (multi-class); "" for multi-label
    labels: list[str]  # the label columns (multi-label)
    target_first: bool
    summary: str  # the sidebar's data line, e.g. "class03_mc · 512 × 14 · 4 classes"


def make_upload(i: int) -> Upload:
    """A synthetic CSV for session i: 300-800 rows, 10-20 features, 3-6 classes."""
    rng = np.random.default_rng(1000 + i)
    n = int(rng.integers(300, 801))
    d = int(rng.integers(10, 21))
    m = int(rng.integers(3, 7))
    multilabel = i % 2 == 1
    features = [f"x{j}" for j in range(d)]
    if multilabel:
        X = rng.normal(size=(n, d))
        W = rng.normal(size=(d, m))
        scores = X @ W + rng.normal(scale=0.5, size=(n, m))
        q = rng.uniform(0.5, 0.8, size=m)
        cuts = np.array([np.quantile(scores[:, k], q[k]) for k in range(m)])
        Y = (scores > cuts).astype(int)
        labels = [f"lab{k}" for k in range(m)]
        header = features + labels
        rows = [",".join([f"{v:.4f}" for v in X[r]] + [str(v) for v in Y[r]]) for r in range(n)]
        target, target_first = "", False
        stem = f"class{i:02d}_ml"
    else:
        y = rng.integers(0, m, size=n)
        y[:m] = np.arange(m)  # every class present
        centers = rng.normal(scale=1.5, size=(m, d))
        X = centers[y] + rng.normal(size=(n, d))
        names = np.array([f"group_{chr(97 + k)}" for k in range(m)])
        labels = []
        target_first = i % 4 == 2
        target = "cls" if target_first else "target"
        stem = f"class{i:02d}_mc"
        if target_first:
            header = [target] + features
            rows = [",".join([names[y[r]]] + [f"{v:.4f}" for v in X[r]]) for r in range(n)]
        else:
            header = features + [target]
            rows = [",".join([f"{v:.4f}" for v in X[r]] + [names[y[r]]]) for r in range(n)]
    data = (",".join(header) + "\n" + "\n".join(rows) + "\n").encode()
    kind = "labels" if multilabel else "classes"
    return Upload(
        name=f"{stem}.csv",
        data=data,
        multilabel=multilabel,
        target=target,
        labels=labels,
        target_first=target_first,
        summary=f"{stem} · {n} × {d} · {m} {kind}",
    )


# ----------------------------------------------------------------------------- server
def _status_kb(pid: int, field_name: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    """pid and all its descendants (through /proc/<pid>/task/<tid>/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                try:
                    with open(f"/proc/{p}/task/{tid}/children") as f:
                        todo.extend(int(c) for c in f.read().split())
                except OSError:
                    pass
        except OSError:
            pass
    return out


class RssSampler(threading.Thread):
    """Peak VmRSS of a process tree, sampled every `interval` seconds."""

    def __init__(self, pid: int, interval: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = self.peak_main_kb = self.samples = self.max_procs = 0
        self.hwm_kb: int | None = None
        self._stop_event = threading.Event()

    def sample(self) -> None:
        pids = _descendants(self.pid)
        rss = [_status_kb(p, "VmRSS") for p in pids]
        self.peak_kb = max(self.peak_kb, sum(rss))
        self.peak_main_kb = max(self.peak_main_kb, rss[0])
        self.max_procs = max(self.max_procs, len(pids))
        self.samples += 1

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)
        self.sample()
        self.hwm_kb = sum(_status_kb(p, "VmHWM") for p in _descendants(self.pid)) or None


# ----------------------------------------------------------------------------- sessions
class ActionFailed(Exception):
    """The session cannot go on (timeout, crash)."""


@dataclass
class Record:
    session: int
    action: str
    seconds: float | None
    ok: bool
    saw_wait: bool = False


@dataclass
class Run:
    timeout: float
    deadline: float  # time.monotonic() after which sessions stop
    wait_re: str
    records: list[Record] = field(default_factory=list)
    warmup_seconds: float | None = None
    page_loads: list[float] = field(default_factory=list)  # goto until DOMContentLoaded
    screenshots: Path | None = None  # where to save a screenshot of each error
    load: tuple = ()  # the machine's load averages before and after
    errors: list[str] = field(default_factory=list)


def _slider_value(text: str) -> float:
    """The grid value a slider's aria-valuetext ("1e-2", "5.6e-3") stands for."""
    for quarter in range(-20, 9):  # the sliders' grid: 10^-5 ... 10^2 in quarter decades
        if log_label(quarter / 4) == text:
            return 10.0 ** (quarter / 4)
    raise ValueError(f"{text!r} is not a point of the sliders' grid")


def _url_value(text: str) -> str:
    """A slider's aria-valuetext ("5.6e-3") as the app writes it in the URL (f"{v:.4g}")."""
    return re.escape(f"{_slider_value(text):.4g}")


class Session:
    def __init__(self, run: Run, index: int, page, upload: Upload | None, variant: str):
        self.run, self.i, self.page, self.upload, self.variant = run, index, page, upload, variant
        self.js_errors: list[str] = []
        self.crashed = False
        self.page_broken = False  # an exception or an st.error is shown
        self.settings_lost = False
        self.last_error = -1
        self.pending_shots: list[str] = []
        page.on("pageerror", lambda exc: self.js_errors.append(str(exc).splitlines()[0][:200]))
        page.on("crash", lambda _page: setattr(self, "crashed", True))

    # --- helpers
    def error(self, action: str, message: str) -> None:
        self.run.errors.append(f"s{self.i:02d} {action}: {message}")
        self.last_error = len(self.run.errors) - 1
        if self.run.screenshots is not None:
            self.pending_shots.append(f"s{self.i:02d}_{len(self.run.errors):03d}_{action}")

    async def take_screenshots(self) -> None:
        for name in self.pending_shots:
            path = self.run.screenshots / (re.sub(r"[^\w.-]+", "_", name) + ".png")
            try:
                await self.page.screenshot(path=str(path), timeout=30_000)
            except Exception:
                pass
        self.pending_shots.clear()

    async def act(self, action: str, do, expect: list[dict], need_run: bool = False) -> None:
        """Do `do()` and wait until its rerun has finished with `expect` on the page."""
        if time.monotonic() > self.run.deadline:
            self.error(action, "not started: the run's overall deadline passed")
            raise ActionFailed
        page = self.page
        messages = 0
        try:
            messages = await page.evaluate("() => (window.__lt ? window.__lt.messages : 0)")
            await page.evaluate("() => { if (window.__lt) window.__lt.sawWait = false; }")
        except Exception:  # a navigation in flight
            pass
        t0 = time.time()
        try:
            await do()
            handle = await page.wait_for_function(
                WAIT_JS,
                arg=[SETTLE_MS, messages, need_run, expect + SIDEBAR_READY, self.run.wait_re],
                polling=POLL_MS,
                timeout=self.run.timeout * 1000,
            )
            res = await handle.json_value()
        except Exception as exc:  # timeout, crash, closed page
            if self.crashed:
                message = "the page crashed"
            elif "Timeout" in type(exc).__name__ or "Timeout" in str(exc)[:100]:
                try:
                    diag = await page.evaluate(DIAG_JS, [expect + SIDEBAR_READY])
                except Exception:
                    diag = "no diagnostics"
                message = f"timeout ({diag})"
            else:
                message = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            self.run.records.append(Record(self.i, action, None, False))
            self.error(action, message)
            raise ActionFailed from exc
        now = time.time()
        seconds = min(max(res["idle"] / 1000 - t0, 0.0), now - t0)
        ok = await self.check(action)
        self.run.records.append(Record(self.i, action, seconds, ok, bool(res["sawWait"])))
        if self.page_broken or self.settings_lost:
            # the page may lack what the next step needs: stop rather than wait for timeouts
            i = self.last_error
            self.run.errors[i] += " [session stopped here]"
            raise ActionFailed

    async def check(self, action: str) -> bool:
        """Record exceptions, unexpected error alerts and JavaScript errors now on the page."""
        ok = True
        exceptions = await self.page.locator('[data-testid="stException"]').all_inner_texts()
        if exceptions:
            ok = False
            for text in exceptions:
                lines = [ln for ln in text.splitlines() if ln.strip()]
                self.error(action, "exception shown: " + " | ".join(lines[:4])[:400])
        alerts = await self.page.evaluate(
            """() => Array.from(document.querySelectorAll('[data-testid="stAlertContentError"]'))
                .filter(el => !el.closest('[data-testid="stException"]'))
                .map(el => el.innerText)"""
        )
        alerts = [a for a in alerts if not re.search(self.run.wait_re, a, re.IGNORECASE)]
        self.page_broken = bool(exceptions or alerts)
        if alerts:
            ok = False
            for text in alerts:
                self.error(action, "st.error shown: " + " ".join(text.split())[:300])
        box = self.page.locator('input[aria-label="Model"]')
        model = await box.first.input_value() if await box.count() else MODEL
        if model != MODEL:
            self.settings_lost = True
            ok = False
            self.error(action, f"the sidebar's Model is {model}, not {MODEL}: its state was lost")
        if self.js_errors:
            ok = False
            for text in self.js_errors:
                self.error(action, "JavaScript error: " + text)
            self.js_errors.clear()
        return ok

    def sidebar_link(self, text: str):
        nav = self.page.locator('[data-testid="stSidebarNav"]')
        return nav.get_by_role("link", name=re.compile(rf"^\W*\w*\s*{re.escape(text)}$"))

    async def goto(self, url: str) -> None:
        """Load the page (HTML and scripts); the part of "open" before the websocket."""
        t0 = time.monotonic()
        await self.page.goto(url, wait_until="domcontentloaded")
        self.run.page_loads.append(time.monotonic() - t0)

    async def go(self, action: str, link: str, expect: list[dict]) -> None:
        await self.act(action, lambda: self.sidebar_link(link).click(), expect)

    async def move_slider(self, action: str, label: str, param: str) -> None:
        """One keyboard step of a sidebar slider; done when the URL (and, for λ, the
        Coefficients page's sparsity caption) shows the new value and the run is over."""
        slider = self.page.get_by_role("slider", name=label)
        old = await slider.get_attribute("aria-valuetext")
        key = "ArrowRight" if float(old[2:]) < 0 else "ArrowLeft"
        await slider.focus()
        expect: list[dict] = []  # known only after the key press

        async def do():
            await self.page.keyboard.press(key)
            await self.page.wait_for_function(
                """([label, old]) => {
                    const el = document.querySelector(`input[aria-label="${label}"]`);
                    return el && el.getAttribute('aria-valuetext') !== old;
                }""",
                arg=[label, old],
                polling=POLL_MS,
                timeout=30_000,
            )
            text = await slider.get_attribute("aria-valuetext")
            expect.append({"url": rf"[?&]{param}={_url_value(text)}(&|$)"})
            if param == "lam":
                expect.append({"sel": CAPTION, "text": f"exactly zero at λ = {text}"})

        await self.act(action, do, expect)

    # --- the visit
    async def visit(self, base: str) -> None:
        # Each action waits for text the run writes (cheap to render) rather than for charts:
        # 20 pages parsing Plotly on the server's 2 cores would time the browser, not the
        # server.  The charts are checked once, untimed, at the end.
        page = self.page
        h1 = lambda text: {"sel": "h1", "text": text}  # noqa: E731
        sidebar = '[data-testid="stSidebarUserContent"]'
        zeros = {"sel": CAPTION, "text": "coefficients are exactly zero at"}
        if self.variant == "deeplink":
            # a shared link to the Coefficients page, on the planted sample
            url = base + "/coefficients?model=SparseSBLR&gamma=scale&lam=0.01&k=0"
            await self.act(
                "open",
                lambda: self.goto(url),
                [h1("Coefficients β"), {"sel": CAPTION, "text": "exactly zero at λ = 0.01"}],
            )
        else:
            await self.act(
                "open",
                lambda: self.goto(base + "/"),
                [h1(HOME_TITLE), {"sel": sidebar, "text": "Data:"}],
            )
        if self.variant == "wine":
            await self.act(
                "form",
                lambda: page.get_by_text("wine: UCI Wine", exact=False).click(),
                [{"sel": sidebar, "text": "wine · 178 × 13 · 3 classes"}],
            )
        if self.upload is not None:
            await self.upload_file()
        await self.go(
            "model page",
            "Model & metrics",
            [
                h1("Model & metrics"),
                {"sel": '[data-testid="stButton"] button', "text": "Tune SparseSBLR"},
            ],
        )
        await self.act(
            "tune",
            lambda: page.get_by_role("button", name="Tune SparseSBLR").click(),
            [{"sel": '[data-testid="stAlertContentSuccess"]', "text": "the sliders now show it"}],
        )
        await self.go("coefficients page", "Coefficients β", [h1("Coefficients β"), zeros])
        for _ in range(3):
            await self.move_slider("λ slider", LAMBDA_LABEL, "lam")
        await self.move_slider("γ slider", GAMMA_LABEL, "gamma")
        # untimed: the β heatmaps have been drawn in the browser
        try:
            await page.locator(".st-key-beta_heatmaps .js-plotly-plot").wait_for(
                timeout=self.run.timeout * 1000
            )
        except Exception:
            self.error("render check", "the β heatmaps were not drawn")
        await self.check("render check")

    async def upload_file(self) -> None:
        page, up = self.page, self.upload
        await page.get_by_role("tab", name="Upload ARFF or CSV").click()
        panel = page.locator('[data-testid="stTabPanel"]:visible')
        load_button = {"sel": '[data-testid="stButton"] button', "text": "Load this file"}
        await self.act(
            "upload",
            lambda: panel.locator(
                '[data-testid="stFileUploader"] input[type=file]'
            ).first.set_input_files({"name": up.name, "mimeType": "text/csv", "buffer": up.data}),
            [load_button, {"sel": '[data-testid="stRadio"]', "text": "multi-label"}],
        )
        if up.multilabel:
            await self.act(
                "form",
                lambda: panel.get_by_text("multi-label: several 0/1 label columns").click(),
                [{"sel": '[data-testid="stAlertContentInfo"]', "text": "Choose the label columns"}],
            )
            # The multiselect commits its value when its list closes: type each label + Enter,
            # then Escape; one action from the first key to the rerun with the Load button.
            box = panel.get_by_role("combobox", name="Label columns (0/1)")

            async def pick():
                await box.click()
                for label in up.labels:
                    await box.press_sequentially(label, delay=20)
                    await page.get_by_role("option", name=label, exact=True).wait_for()
                    await box.press("Enter")
                await box.press("Escape")

            await self.act("form", pick, [load_button], need_run=True)
        elif up.target_first:
            box = panel.get_by_role("combobox", name="Target column")

            async def choose():
                await box.click()
                await box.press_sequentially(up.target, delay=20)
                await page.get_by_role("option", name=up.target, exact=True).wait_for()
                await box.press("Enter")

            await self.act("form", choose, [load_button], need_run=True)
        await self.act(
            "load",
            lambda: panel.get_by_role("button", name="Load this file").click(),
            [
                {"sel": '[data-testid="stAlertContentSuccess"]', "text": f"Loaded {up.name}."},
                {"sel": '[data-testid="stSidebarUserContent"]', "text": up.summary},
            ],
        )


async def run_session(run: Run, browser, base: str, index: int, start_delay: float) -> None:
    try:
        await _run_session(run, browser, base, index, start_delay)
    except Exception as exc:  # never lose a session silently
        run.errors.append(f"s{index:02d}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")


async def _run_session(run: Run, browser, base: str, index: int, start_delay: float) -> None:
    await asyncio.sleep(start_delay)
    if is_sample_session(index):
        upload, variant = None, ("deeplink" if (index // SAMPLE_EVERY) % 2 == 0 else "wine")
    else:
        upload, variant = make_upload(index), "upload"
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        context.set_default_timeout(run.timeout * 1000)
        await context.add_init_script(INIT_JS)
        page = await context.new_page()
        session = Session(run, index, page, upload, variant)
        try:
            await session.visit(base)
        except ActionFailed:
            pass
        except Exception as exc:  # a locator step outside act() failed
            session.error("visit", f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        await session.take_screenshots()
    finally:
        try:
            await asyncio.wait_for(context.close(), 30)
        except Exception:
            pass


async def warm_up(run: Run, browser, base: str) -> None:
    """One untimed visit of the home page, so that the sessions meet a warm server (the
    first script run of a fresh server imports sblr, scikit-learn, plotly, ...)."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    t0 = time.monotonic()
    try:
        context.set_default_timeout(run.timeout * 1000)
        await context.add_init_script(INIT_JS)
        page = await context.new_page()
        await page.goto(base + "/", wait_until="domcontentloaded")
        await page.wait_for_function(
            WAIT_JS,
            arg=[SETTLE_MS, 0, False, [{"sel": "h1", "text": HOME_TITLE}], run.wait_re],
            polling=POLL_MS,
            timeout=run.timeout * 1000,
        )
        run.warmup_seconds = time.monotonic() - t0
    except Exception as exc:
        run.errors.append(f"warm-up: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    finally:
        await context.close()


async def drive(run: Run, base: str, n_sessions: int, ramp: float, nice: int, warmup: bool) -> None:
    from playwright.async_api import async_playwright

    if nice:
        # The browser stands in for the students' own machines: let the server have the CPU
        # first (Playwright's driver and Chromium inherit this process's niceness).
        os.nice(nice)

    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=BROWSER_ARGS
        )
        try:
            if warmup:
                await warm_up(run, browser, base)
                run.deadline += run.warmup_seconds or 0
            delays = [ramp * i / max(n_sessions - 1, 1) for i in range(n_sessions)]
            tasks = [
                asyncio.ensure_future(run_session(run, browser, base, i, delays[i]))
                for i in range(n_sessions)
            ]
            budget = run.deadline - time.monotonic() + run.timeout + 60
            done, pending = await asyncio.wait(tasks, timeout=max(budget, 1))
            for t in pending:
                t.cancel()
                run.errors.append("a session did not finish before the overall deadline")
            if pending:
                await asyncio.wait(pending, timeout=30)
        finally:
            await browser.close()


# ----------------------------------------------------------------------------- report
def server_tracebacks(log: Path, start: int) -> list[str]:
    """One line per traceback in the server log after byte `start`."""
    try:
        with open(log, "rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    out = []
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last)"):
            last = next((ln for ln in lines[n + 1 :] if ln and not ln.startswith((" ", "\t"))), "?")
            out.append(last.strip()[:300])
    return out


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else math.nan


def report(run: Run, args, wall: float, sampler: RssSampler | None, server: str) -> int:
    recs = run.records
    ok = [r for r in recs if r.seconds is not None]
    order = [
        "open",
        "upload",
        "form",
        "load",
        "model page",
        "tune",
        "coefficients page",
        "λ slider",
        "γ slider",
    ]
    n_sample = sum(map(is_sample_session, range(args.sessions)))
    print()
    print(f"Load test of {server}")
    print(
        f"sessions: {args.sessions} ({args.sessions - n_sample} uploads, {n_sample} sample data), "
        f"started over {args.ramp:.0f} s; per-action timeout {args.timeout:.0f} s"
    )
    print(f"actions: {len(recs)} ({len(ok)} finished), errors: {len(run.errors)}")
    waits = sum(r.saw_wait for r in recs)
    print(f"'waiting for a free worker' seen during {waits} action(s)")
    print(f"{'action':<18}{'n':>5}{'p50 s':>9}{'p95 s':>9}{'max s':>9}{'wait':>6}")
    names = [a for a in order if any(r.action == a for r in recs)]
    names += sorted({r.action for r in recs} - set(order))
    for name in names + ["overall"]:
        sel = [r for r in recs if name == "overall" or r.action == name]
        secs = [r.seconds for r in sel if r.seconds is not None]
        print(
            f"{name:<18}{len(sel):>5}{percentile(secs, 50):>9.2f}{percentile(secs, 95):>9.2f}"
            f"{max(secs, default=math.nan):>9.2f}{sum(r.saw_wait for r in sel):>6}"
        )
    warm = f"; untimed warm-up visit {run.warmup_seconds:.1f} s" if run.warmup_seconds else ""
    if run.page_loads:
        print(
            f"(of 'open': loading the page's HTML and scripts until DOMContentLoaded took "
            f"p50 {percentile(run.page_loads, 50):.2f} s, max {max(run.page_loads):.2f} s)"
        )
    print(f"wall time: {wall:.1f} s{warm}")
    if run.load:
        (b1, _, _), (a1, a5, _) = run.load
        print(
            f"machine load average: {b1:.1f} before, {a1:.1f} (1 min) / {a5:.1f} (5 min) after "
            f"on {os.cpu_count()} CPUs (other processes share the CPU with this test)"
        )
    if sampler is not None:
        hwm = f"{sampler.hwm_kb / 1024:.0f} MiB" if sampler.hwm_kb else "n/a"
        print(
            f"server peak RSS: {sampler.peak_kb / 1024:.0f} MiB (process tree of up to "
            f"{sampler.max_procs} process(es), {sampler.samples} samples every 0.2 s; "
            f"main process {sampler.peak_main_kb / 1024:.0f} MiB); VmHWM at the end: {hwm}"
        )
    else:
        print("server peak RSS: n/a (pass --server-pid with --url)")
    if run.errors:
        print("errors:")
        for e in run.errors:
            print("  " + e)
    return 1 if run.errors else 0


# ----------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=20, help="concurrent sessions (default 20)")
    ap.add_argument("--quick", action="store_true", help="4 sessions")
    ap.add_argument("--url", help="use this running server instead of starting one")
    ap.add_argument("--server-pid", type=int, help="with --url: the server's pid, for its RSS")
    ap.add_argument("--port", type=int, help="port of the server to start (default: a free one)")
    ap.add_argument("--timeout", type=float, default=180, help="per-action timeout, s (180)")
    ap.add_argument("--deadline", type=float, default=840, help="no new action after this, s")
    ap.add_argument("--ramp", type=float, default=5, help="start the sessions over this many s")
    ap.add_argument(
        "--no-warmup", action="store_true", help="no untimed first visit before the sessions"
    )
    ap.add_argument(
        "--browser-nice",
        type=int,
        default=10,
        help="run Chromium at this niceness so the server gets the CPU first (10; 0: off)",
    )
    ap.add_argument("--wait-pattern", default=WAIT_PATTERN, help="the 'waiting' message (regex)")
    ap.add_argument("--server-log", type=Path, help="server output (default: a temp file)")
    ap.add_argument("--screenshots", type=Path, help="save a screenshot of each error here")
    ap.add_argument(
        "--app-dir", type=Path, default=ROOT, help="where app.py is (default: this repo)"
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.sessions = 4
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} not found", file=sys.stderr)
        return 2

    proc, sampler, log, log_start = None, None, None, 0
    tmp = tempfile.TemporaryDirectory(prefix="sblr-load-")

    def on_term(signum, frame):  # make SIGTERM run the finally blocks
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    try:
        if args.url:
            base = args.url.rstrip("/")
            wait_until_healthy(base, timeout=10)
            pid = args.server_pid
        else:
            log = args.server_log or Path(tmp.name) / "streamlit-server.log"
            server = start_dashboard(args.app_dir, port=args.port or None, log=log)
            base, proc, pid = server.url, server.process, server.process.pid
            wait_until_healthy(base, proc, timeout=90, log=log)
        if pid is not None:
            sampler = RssSampler(pid)
            sampler.start()
        if log is not None:
            log_start = log.stat().st_size
        run = Run(
            timeout=args.timeout,
            deadline=time.monotonic() + args.deadline,
            wait_re=args.wait_pattern,
            screenshots=args.screenshots,
        )
        if args.screenshots is not None:
            args.screenshots.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        load_before = os.getloadavg()
        asyncio.run(
            drive(run, base, args.sessions, args.ramp, args.browser_nice, not args.no_warmup)
        )
        run.load = (load_before, os.getloadavg())
        wall = time.monotonic() - t0
        if sampler is not None:
            sampler.stop()
        if log is not None:
            lines = server_tracebacks(log, log_start)
            for line in dict.fromkeys(lines):
                run.errors.append(f"server log: {lines.count(line)} × traceback ending {line}")
            if proc is not None and proc.poll() is not None:
                run.errors.append(f"the server exited during the run ({proc.returncode})")
        return report(run, args, wall, sampler, base)
    finally:
        if sampler is not None and sampler.is_alive():
            sampler.stop()
        if proc is not None:
            stop_dashboard(proc)
        tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
