"""Helpers of the browser tests (``tests/test_browser*.py``): a Streamlit server and
headless Chromium driven through Playwright (Debian's Chromium, never a downloaded browser),
waits for the app to be idle, screenshots to ``test-artifacts/`` at the repo root
(git-ignored), and the page probes several test files share. The fixtures (``server_url``,
``browser``, ``page``) are in ``conftest.py``: a server and a browser per test file, so the
files run on different workers side by side (``-n auto --dist loadfile``).

Without ``/usr/bin/chromium`` the browser tests are skipped, except when the environment
variable ``CI`` is set (e.g. ``CI=true``): then they fail, so CI can never skip them silently.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import pytest

from sblr.dashboard import CHROMIUM, CHROMIUM_ARGS, ServerStartError, running_dashboard

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"


#: Longest wait for any one step (a page's script run, a rerun, the server start).  Every
#: wait is for a state (the app idle, an element drawn), never a fixed time; this is only the
#: ceiling, generous because on a 2-core machine another test's background fits (174 labels)
#: or another job beside the suite can hold the server for over a minute (a fresh clone's run
#: failed at 60 s waiting for the uploader).
TIMEOUT_MS = 180_000
LAMBDA_LABEL = "L1 strength λ (log₁₀)"


#: Sidebar link text -> (screenshot name, the page's st.title).
PAGES = {
    "Choose data": ("choose_data", "Similarity-based classification you can look inside"),
    "Data": ("data", None),
    "Model & metrics": ("model", "Model & metrics"),
    "Compare methods": ("compare", None),
    "Coefficients β": ("coefficients", "Coefficients β"),
    "Class contributions": ("contributions", None),
    "Evidence space": ("evidence", None),
    "Explain a prediction": ("explain", None),
    "Predict a file": ("predict", "Predict a file"),
    "Regularization path": ("path", None),
    "Lesson: the planted data": ("lesson", "Lesson: what the planted data hides"),
    "Playground": ("playground", "Playground"),
}


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(reason: str):
    if _in_ci():
        pytest.fail(f"{reason} (CI is set, so the browser test may not be skipped)")
    pytest.skip(reason)


@contextlib.contextmanager
def streamlit_server(log_name: str):
    """``streamlit run app.py`` on 127.0.0.1:<free port>; yields its URL, stops it after.

    The server's output goes to ``test-artifacts/<log_name>``.
    """
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / log_name
    try:
        with running_dashboard(ROOT, log=log, timeout=TIMEOUT_MS / 1000) as server:
            yield server.url
    except ServerStartError as exc:
        pytest.fail(str(exc))


def watched_page(context):
    """A new page of ``context`` that records its JavaScript errors (``pg.js_errors``, which
    assert_no_errors checks)."""
    pg = context.new_page()
    pg.js_errors = []
    pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
    return pg


def wait_idle(pg, settle_ms: int = 300) -> None:
    """Wait until the script has finished: not running, no status widget, no stale elements.

    Requires the idle state to hold for ``settle_ms`` so that a rerun which is
    just being requested is not mistaken for the end of the previous one.
    """
    pg.wait_for_function(
        """(settle) => {
            const app = document.querySelector('[data-testid="stApp"]');
            const idle = app
                && app.getAttribute('data-test-script-state') === 'notRunning'
                && app.getAttribute('data-test-connection-state') === 'CONNECTED'
                && !document.querySelector('[data-testid="stStatusWidget"]')
                && !document.querySelector('[data-stale="true"]')
                && !document.querySelector('[data-testid="stSpinner"]');
            const now = performance.now();
            if (!idle) { window.__idleSince = undefined; return false; }
            if (window.__idleSince === undefined) window.__idleSince = now;
            return now - window.__idleSince >= settle;
        }""",
        arg=settle_ms,
        polling=50,
        timeout=TIMEOUT_MS,
    )


def assert_no_errors(pg, where: str) -> None:
    exceptions = pg.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, f"{where}: exception shown:\n" + "\n".join(
        exceptions.all_inner_texts()
    )
    alerts = pg.locator('[data-testid="stAlertContentError"]')
    assert alerts.count() == 0, f"{where}: error shown:\n" + "\n".join(alerts.all_inner_texts())
    assert not pg.js_errors, f"{where}: JavaScript errors: {pg.js_errors}"


def screenshot(pg, name: str) -> Path:
    """A full-page screenshot.

    Streamlit scrolls inside ``stMain``, not the document, so ``full_page``
    alone only captures the viewport: grow the viewport to the content first.
    """
    path = ARTIFACTS / f"{name}.png"
    viewport = pg.viewport_size
    height = pg.evaluate(
        """() => Math.max(document.documentElement.clientHeight,
            ...Array.from(document.querySelectorAll('[data-testid="stApp"] *'), el => {
                const overflow = getComputedStyle(el).overflowY;
                return (overflow === 'auto' || overflow === 'scroll') ? el.scrollHeight : 0;
            }))"""
    )
    try:
        if height > viewport["height"]:
            pg.set_viewport_size({"width": viewport["width"], "height": min(height, 12_000)})
            pg.wait_for_timeout(300)  # let the charts re-layout to the new size
        pg.screenshot(path=str(path), full_page=True)
    finally:
        pg.set_viewport_size(viewport)
    return path


def go_to(pg, link_text: str, title: str | None) -> None:
    nav = pg.locator('[data-testid="stSidebarNav"]')
    nav.get_by_role("link", name=re.compile(rf"^\W*\w*\s*{re.escape(link_text)}$")).click()
    if title:
        pg.get_by_role("heading", name=title, exact=False).first.wait_for()
    wait_idle(pg)


def open_select(combobox) -> None:
    """Open a select box's list, the box first brought to the middle of its scrolling pane:
    at the bottom edge of the sidebar (twelve pages in the menu, a two-line data name above
    it) the list had no room below and did not open."""
    combobox.evaluate("(el) => el.scrollIntoView({block: 'center'})")
    combobox.click()


def heatmap_state(pg) -> dict:
    """The β heatmaps as the browser has them: subplot titles and the SparseSBLR z."""
    chart = pg.locator(".st-key-beta_heatmaps .js-plotly-plot")
    chart.wait_for()
    return chart.evaluate(
        """(el) => ({
            titles: (el.layout.annotations || []).map(a => a.text),
            // plotly.js decodes the base64 typed arrays Streamlit sends into _fullData
            traces: el._fullData.map(t => ({
                name: t.name,
                z: Array.from(t.z, row => Array.from(row, v =>
                    (v === null || Number.isNaN(v)) ? null : Number(v))),
            })),
        })"""
    )


def _upload(pg, name: str, data: bytes, mime: str = "text/csv") -> None:
    """Upload a file on the home page (already open) and load it with the defaults: the last
    column as the target of a CSV, the labels an ARFF names."""
    pg.get_by_role("tab", name="Upload ARFF or CSV").click()
    panel = pg.locator('[data-testid="stTabPanel"]:visible')
    panel.locator('[data-testid="stFileUploader"]').first.locator(
        "input[type=file]"
    ).set_input_files({"name": name, "mimeType": mime, "buffer": data})
    panel.get_by_role("button", name="Load this file").wait_for()
    wait_idle(pg)
    panel.get_by_role("button", name="Load this file").click()
    pg.locator('[data-testid="stAlertContentSuccess"]').filter(
        has_text=f"Loaded {name}."
    ).wait_for()
    wait_idle(pg)


GAMMA_LABEL = "RBF width γ (log₁₀)"


def sidebar_values(pg) -> dict:
    sidebar = pg.locator('[data-testid="stSidebarUserContent"]')
    return {
        "model": pg.get_by_role("combobox", name="Model").input_value(),
        "γ = scale": sidebar.locator("input[type=checkbox]").first.is_checked(),
        "γ": pg.get_by_role("slider", name=GAMMA_LABEL).get_attribute("aria-valuetext"),
        "λ": pg.get_by_role("slider", name=LAMBDA_LABEL).get_attribute("aria-valuetext"),
        "class": pg.get_by_role("combobox", name="Class k").input_value(),
    }


#: The λ slider's grid: 10^-5 ... 10^2 in quarter decades.
N_LAMBDA_STEPS = 29


def panel_geometry(pg) -> dict:
    """Both heatmap panels as drawn: their traces, plot areas and tick-label boxes."""
    chart = pg.locator(".st-key-beta_heatmaps .js-plotly-plot")
    chart.wait_for()
    return chart.evaluate(
        """(el) => {
            const box = (n) => { const r = n.getBoundingClientRect();
                return {l: r.left, r: r.right, t: r.top, b: r.bottom}; };
            const ticks = (cls) => [...el.querySelectorAll(`.${cls} text`)]
                .map(t => ({text: t.textContent, box: box(t)}));
            return {
                titles: (el.layout.annotations || []).map(a => a.text),
                traces: el._fullData.map(t => ({
                    name: t.name,
                    rows: t.z.length,
                    cols: t.z.length ? t.z[0].length : 0,
                    allBlank: Array.from(t.z).every(row => Array.from(row).every(
                        v => v === null || Number.isNaN(v))),
                })),
                areas: ['xy', 'x2y2'].map(s => box(el.querySelector(`.draglayer .${s} .nsewdrag`))),
                ticks: [[ticks('xtick'), ticks('ytick')], [ticks('x2tick'), ticks('y2tick')]],
            };
        }"""
    )


def _overlap(a: dict, b: dict) -> bool:
    return (
        a["l"] < b["r"] - 1 and b["l"] < a["r"] - 1 and a["t"] < b["b"] - 1 and b["t"] < a["b"] - 1
    )


def check_panels(geo: dict, n_classes: int, where: str) -> None:
    """Each panel has its n × n cells and n names on both axes, none drawn over the other
    panel; an all-zero panel says so."""
    assert len(geo["traces"]) == 2, (where, geo["traces"])
    for p, trace in enumerate(geo["traces"]):
        assert (trace["rows"], trace["cols"]) == (n_classes, n_classes), (where, trace)
        if trace["allBlank"]:
            assert any(t.startswith("all β = 0 at λ") for t in geo["titles"]), (where, geo)
        for axis in geo["ticks"][p]:
            texts = [t["text"] for t in axis]
            assert len(texts) == n_classes and all(texts), (where, p, texts)
        other = geo["areas"][1 - p]
        for axis in geo["ticks"][p]:
            for tick in axis:
                assert not _overlap(tick["box"], other), (where, p, tick["text"], other)
                for other_axis in geo["ticks"][1 - p]:
                    for o in other_axis:
                        assert not _overlap(tick["box"], o["box"]), (where, tick["text"], o["text"])


def _in_viewport(locator, viewport, what):
    box = locator.bounding_box()
    assert box is not None, f"{what}: not drawn"
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"] + 1, (what, box)
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] + 1, (what, box)


@contextlib.contextmanager
def launched_chromium():
    """Debian's Chromium, headless, through Playwright: skipped without it (failed under CI)."""
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found: install Debian's chromium package to run this test")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    with sync_playwright() as p:
        args = list(CHROMIUM_ARGS)
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=args)
        try:
            yield b
        finally:
            b.close()
