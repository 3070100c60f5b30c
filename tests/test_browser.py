"""End-to-end test of the dashboard in a real browser (Streamlit server + headless Chromium).

The test starts ``streamlit run app.py`` on a free port of 127.0.0.1, drives
Debian's Chromium through Playwright (never a downloaded browser), uploads the
planted ARFF + XML sample data through the home page, visits every page from
the sidebar navigation, and moves the λ slider on the Coefficients page with
the keyboard.  Full-page screenshots go to ``test-artifacts/`` at the repo
root (git-ignored) so a person can look at them.

Without ``/usr/bin/chromium`` the test is skipped, except when the environment
variable ``CI`` is set (e.g. ``CI=true``): then it fails, so CI can never skip
it silently.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from sblr.dashboard import ServerStartError, running_dashboard

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
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


@pytest.fixture(scope="module")
def server_url():
    with streamlit_server("streamlit-server.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found: install Debian's chromium package to run this test")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright Python package is not installed")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def watched_page(context):
    """A new page of ``context`` that records its JavaScript errors (``pg.js_errors``, which
    assert_no_errors checks)."""
    pg = context.new_page()
    pg.js_errors = []
    pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
    return pg


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        yield watched_page(context)
    finally:
        context.close()


# ----------------------------------------------------------------------------- helpers
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


def sparse_zeros(state: dict) -> int:
    (title,) = [t for t in state["titles"] if t.startswith("SparseSBLR")]
    match = re.search(r"\((\d+) of (\d+) β = 0\)", title)
    assert match, f"unexpected subplot title {title!r}"
    assert int(match.group(2)) == 49, title
    n_title = int(match.group(1))
    (trace,) = [t for t in state["traces"] if t["name"].startswith("SparseSBLR")]
    n_z = sum(v is None for row in trace["z"] for v in row)
    assert n_z == n_title, f"title says {n_title} zeros, the heatmap has {n_z} blank cells"
    return n_title


# ----------------------------------------------------------------------------- test
def test_upload_and_visit_every_page(server_url, page):
    pg = page
    ARTIFACTS.mkdir(exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()

    pg.goto(server_url + "/")
    pg.get_by_role("heading", name=PAGES["Choose data"][1]).wait_for()
    wait_idle(pg)
    assert_no_errors(pg, "home page")

    # Upload the planted data under another name, with its Mulan XML label file.
    pg.get_by_role("tab", name="Upload ARFF or CSV").click()
    panel = pg.locator('[data-testid="stTabPanel"]:visible')
    panel.locator("input[type=file]").first.set_input_files(
        {
            "name": "birds_like.arff",
            "mimeType": "application/octet-stream",
            "buffer": (ROOT / "sample_data" / "planted.arff").read_bytes(),
        }
    )
    xml_uploader = panel.locator('[data-testid="stFileUploader"]').filter(
        has_text="Mulan XML label file"
    )
    xml_uploader.wait_for()
    wait_idle(pg)
    xml_uploader.locator("input[type=file]").set_input_files(
        {
            "name": "planted.xml",
            "mimeType": "text/xml",
            "buffer": (ROOT / "sample_data" / "planted.xml").read_bytes(),
        }
    )
    xml_uploader.get_by_text("planted.xml").wait_for()
    wait_idle(pg)
    panel.get_by_role("button", name="Load this file").click()
    success = pg.locator('[data-testid="stAlertContentSuccess"]')
    success.filter(has_text="Loaded birds_like.arff.").wait_for()
    wait_idle(pg)
    assert_no_errors(pg, "after the upload")
    pg.get_by_role("heading", name="birds_like (your upload)").wait_for()
    instances = pg.locator('[data-testid="stMetric"]').filter(has_text="Instances")
    assert instances.locator('[data-testid="stMetricValue"]').inner_text().strip() == "500"
    sidebar = pg.locator('[data-testid="stSidebarUserContent"]')
    assert "500 × 8 · 7 labels" in sidebar.inner_text()
    screenshot(pg, "01_choose_data")

    # Every page from the sidebar; the upload must stay in use on all of them.
    lam_slider = pg.get_by_role("slider", name=LAMBDA_LABEL)
    for n, (link, (name, title)) in enumerate(PAGES.items(), start=2):
        go_to(pg, link, title)
        assert_no_errors(pg, f"page {link!r}")
        assert "birds_like" in sidebar.inner_text(), f"page {link!r} lost the upload"
        screenshot(pg, f"{n:02d}_{name}")
        if name == "data":
            # the square co-occurrence matrix keeps its colour bar beside it (drawn as wide
            # as the page, the bar stood 150 px and more to the right of the matrix)
            # Plotly draws after the script ends: wait for both parts, then measure them
            plot = pg.locator(".st-key-cooccurrence .js-plotly-plot")
            plot.locator(".hm").first.wait_for()
            plot.locator(".colorbar").first.wait_for()
            boxes = plot.evaluate(
                """(plot) => {
                    const box = s => plot.querySelector(s).getBoundingClientRect();
                    return {matrix: box('.hm'), bar: box('.colorbar')};
                }"""
            )
            gap = boxes["bar"]["left"] - boxes["matrix"]["right"]
            assert 0 <= gap <= 60, boxes
        if name != "coefficients":
            continue

        # Move λ with the keyboard; SparseSBLR must re-render with more zeros.
        before = heatmap_state(pg)
        zeros_before = sparse_zeros(before)
        old_value = lam_slider.get_attribute("aria-valuetext")
        lam_slider.focus()
        for _ in range(4):  # 4 quarter decades: the default 1e-4 -> 1e-3
            pg.keyboard.press("ArrowRight")
        pg.wait_for_function(
            """([label, old]) => {
                const el = document.querySelector(`input[aria-label="${label}"]`);
                return el && el.getAttribute('aria-valuetext') !== old;
            }""",
            arg=[LAMBDA_LABEL, old_value],
        )
        new_value = lam_slider.get_attribute("aria-valuetext")
        pg.wait_for_function(
            """(oldTitles) => {
                const el = document.querySelector('.st-key-beta_heatmaps .js-plotly-plot');
                const now = el && el.layout && (el.layout.annotations || []).map(a => a.text);
                return now && JSON.stringify(now) !== JSON.stringify(oldTitles);
            }""",
            arg=before["titles"],
        )
        wait_idle(pg)
        assert_no_errors(pg, f"Coefficients after λ {old_value} -> {new_value}")
        after = heatmap_state(pg)
        zeros_after = sparse_zeros(after)
        assert after["traces"] != before["traces"], "the heatmap data did not change"
        assert zeros_after > zeros_before, (old_value, new_value, zeros_before, zeros_after)
        assert new_value == "1e-3", new_value
        screenshot(pg, f"{n:02d}_{name}_lambda_{new_value}")


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


def test_the_home_page_formulas_fit_a_narrow_window(server_url, browser):
    """At 800 px (a laptop with the sidebar open) no formula of the home page needs sideways
    scrolling: each display fits the width it is given."""
    context = browser.new_context(viewport={"width": 800, "height": 900})
    try:
        pg = context.new_page()
        pg.goto(server_url + "/")
        pg.get_by_role("heading", name=PAGES["Choose data"][1]).wait_for()
        wait_idle(pg)
        pg.locator(".katex-display").first.wait_for()  # KaTeX draws after the script ends
        wait_idle(pg)
        widths = pg.locator(".katex-display").evaluate_all(
            "els => els.map(e => [e.scrollWidth, e.clientWidth])"
        )
    finally:
        context.close()
    assert widths
    assert all(scroll <= client + 1 for scroll, client in widths), widths


def test_new_data_resets_class_and_column_choices(server_url, page):
    """The browser keeps a widget's choice per key: after new data, the class and the target
    column must come from the new data (a stale class name once crashed every page)."""
    pg = page
    pg.goto(server_url + "/")
    pg.get_by_role("heading", name=PAGES["Choose data"][1]).wait_for()
    wait_idle(pg)
    sidebar = pg.locator('[data-testid="stSidebarUserContent"]')
    class_k = pg.get_by_role("combobox", name="Class k")
    assert class_k.input_value() == "daylight"  # the planted sample's first class
    _upload(pg, "cellar.csv", (ROOT / "sample_data" / "wine.csv").read_bytes())
    assert "cellar · 178 × 13 · 3 classes" in sidebar.inner_text()
    assert class_k.input_value() == "cultivar_2"  # new data start on their most frequent class
    assert_no_errors(pg, "after loading cellar.csv")
    go_to(pg, "Class contributions", None)
    assert_no_errors(pg, "Class contributions on cellar.csv")
    # another CSV with other columns: its own last column is the default target
    go_to(pg, "Choose data", PAGES["Choose data"][1])
    rows = "".join(f"{i % 7},{(i * 3) % 5},{'ab'[i % 2]}\n" for i in range(40))
    _upload(pg, "tiny.csv", ("x,z,colour\n" + rows).encode())
    assert "tiny · 40 × 2 · 2 classes" in sidebar.inner_text()
    assert class_k.input_value() == "a"
    go_to(pg, "Explain a prediction", None)
    assert_no_errors(pg, "Explain a prediction on tiny.csv")
    screenshot(pg, "new_data_explain")


GAMMA_LABEL = "RBF width γ (log₁₀)"
#: The lazily loaded scripts that draw the sidebar's selectboxes, toggle and sliders.
SIDEBAR_WIDGET_SCRIPTS = re.compile(r"/static/js/(Selectbox|Checkbox|Slider)\.[\w-]+\.js$")


def sidebar_values(pg) -> dict:
    sidebar = pg.locator('[data-testid="stSidebarUserContent"]')
    return {
        "model": pg.get_by_role("combobox", name="Model").input_value(),
        "γ = scale": sidebar.locator("input[type=checkbox]").first.is_checked(),
        "γ": pg.get_by_role("slider", name=GAMMA_LABEL).get_attribute("aria-valuetext"),
        "λ": pg.get_by_role("slider", name=LAMBDA_LABEL).get_attribute("aria-valuetext"),
        "class": pg.get_by_role("combobox", name="Class k").input_value(),
    }


@pytest.mark.parametrize("action", ["one page link", "two page links", "an upload"])
def test_sidebar_keeps_its_settings_when_the_browser_is_slow_to_draw_it(server_url, page, action):
    """The user acts before the browser has drawn the sidebar's widgets (a slow or loaded
    machine, a page link clicked early). Regression test: the browser then reported no
    value for them, so Streamlit dropped the settings on a page change, or the widgets
    were drawn at their first option (SML, γ = scale off, γ = λ = 1e-5) and that was
    sent back as the user's choice. Holding the widgets' scripts makes the race certain."""
    pg = page
    held, holding = [], [True]
    pg.route(
        SIDEBAR_WIDGET_SCRIPTS,
        lambda route: held.append(route) if holding[0] else route.continue_(),
    )
    pg.goto(server_url + "/?model=SBLR&gamma=0.01&lam=0.01&k=2")
    pg.get_by_role("heading", name=PAGES["Choose data"][1]).wait_for()
    wait_idle(pg)
    expected_k = "2"
    if action == "an upload":
        _upload(pg, "cellar.csv", (ROOT / "sample_data" / "wine.csv").read_bytes())
        # new data start on their most frequent class (class 0 may have no test row); the
        # link's k=2 was a class of the data it opened, not of this one
        expected_class, expected_k = "cultivar_2", "1"
    else:
        go_to(pg, "Model & metrics", PAGES["Model & metrics"][1])
        if action == "two page links":
            go_to(pg, "Class contributions", None)
        expected_class = "rain"
    assert held, "the sidebar's widget scripts were not requested: the test holds nothing"
    holding[0] = False
    for route in held:
        route.continue_()
    pg.get_by_role("combobox", name="Model").wait_for()
    wait_idle(pg)
    # One more run sends the browser's values to the server, as any next click would.
    go_to(pg, "Data", None)
    assert_no_errors(pg, f"after {action}")
    assert sidebar_values(pg) == {
        "model": "SBLR",
        "γ = scale": False,
        "γ": "1e-2",
        "λ": "1e-2",
        "class": expected_class,
    }
    # the address bar follows the run a moment later (a loaded machine: after the check)
    expected = {"model": ["SBLR"], "gamma": ["0.01"], "lam": ["0.01"], "k": [expected_k]}

    def link_of(url):
        query = parse_qs(urlsplit(url).query)
        return {key: query.get(key) for key in expected}

    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    try:
        pg.wait_for_url(lambda url: link_of(url) == expected, timeout=30_000)
    except PlaywrightTimeoutError:
        pass  # the assertion below says what the address bar holds
    assert link_of(pg.url) == expected, pg.url


def test_shared_link_on_a_fresh_server(browser):
    """A shared link (page + query parameters) must work as the server's very first visit.

    Regression test: with a folder named ``pages/`` beside app.py, a fresh
    server runs its first session in Streamlit's legacy pages-folder mode, so
    a deep link used to run the page file without app.py (KeyError
    '_settings', and the sidebar listed app/common/... as pages).
    """
    with streamlit_server("streamlit-server-fresh.log") as url:
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        context.set_default_timeout(TIMEOUT_MS)
        try:
            pg = context.new_page()
            pg.goto(url + "/coefficients?model=SparseSBLR&gamma=scale&lam=0.01&k=0")
            pg.locator('[data-testid="stApp"]').wait_for()
            wait_idle(pg)
            pg.wait_for_selector(
                '[data-testid="stException"], .st-key-beta_heatmaps .js-plotly-plot'
            )
            wait_idle(pg)
            screenshot(pg, "00_fresh_server_deep_link")
            exceptions = pg.locator('[data-testid="stException"]')
            assert exceptions.count() == 0, "\n".join(exceptions.all_inner_texts())
            links = pg.locator('[data-testid="stSidebarNav"] a').all_inner_texts()
            assert [t.split("\n")[-1] for t in links] == list(PAGES), links
            (sparse_title,) = [t for t in heatmap_state(pg)["titles"] if t.startswith("SparseSBLR")]
            assert "λ = 1e-2" in sparse_title, sparse_title
            slider = pg.get_by_role("slider", name=LAMBDA_LABEL)
            assert slider.get_attribute("aria-valuetext") == "1e-2"
            pg.wait_for_url(re.compile(r"/coefficients\?(.*&)?lam=0\.01(&|$)"))
        finally:
            context.close()


@contextlib.contextmanager
def request_recorder():
    """A local HTTP server that records every request it gets; yields (port, paths)."""
    import http.server
    import socketserver
    import threading

    paths: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            paths.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    with socketserver.TCPServer(("127.0.0.1", 0), Recorder) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield server.server_address[1], paths
        finally:
            server.shutdown()


def test_names_from_a_file_are_shown_as_text(server_url, page):
    """Class and file names holding Markdown, HTML, URLs and formulas are shown as
    themselves on every page: no image fetched, no link made, nothing dropped."""
    pg = page
    with request_recorder() as (port, requests):
        names = [
            f"![x](http://127.0.0.1:{port}/img.png)",
            "Instrument_-_Trombone",
            "**bold** :red[x] $y$ <b>tag</b>",
            "www.example.com a@b.co",
        ]
        rows = [
            f'{c + (i % 5) * 0.1:.2f},{(c * 7 + i) % 4 * 0.2:.2f},"{n}"'
            for c, n in enumerate(names)
            for i in range(20)
        ]
        data = ("f1,f2,class\n" + "\n".join(rows) + "\n").encode()
        pg.goto(server_url + "/")
        pg.get_by_role("heading", name=PAGES["Choose data"][1]).wait_for()
        wait_idle(pg)
        _upload(pg, "odd_*name*_.csv", data)
        assert_no_errors(pg, "after loading odd names")
        pg.get_by_role("heading", name="odd_*name*_ (your upload)").wait_for()
        class_k = pg.get_by_role("combobox", name="Class k")
        for link, heading in [
            ("Class contributions", "Class contributions to “{}”"),
            ("Regularization path", "Regularization path of “{}”"),
        ]:
            go_to(pg, link, None)
            for name in names:
                open_select(class_k)
                pg.get_by_role("option", name=name, exact=True).click()
                pg.wait_for_function(
                    """(want) => {
                        const h = document.querySelector('[data-testid="stMain"] h1');
                        return h && h.innerText.replaceAll('\\u2060', '').trim() === want;
                    }""",
                    arg=heading.format(name),
                )
                wait_idle(pg)
                title = pg.locator('[data-testid="stMain"] h1').first
                assert title.locator('a:not([href^="#"]), img').count() == 0
                pg.wait_for_timeout(200)
                assert requests == [], f"{link} with class {name!r} fetched {requests}"
            assert_no_errors(pg, link)
            assert pg.locator('[data-testid="stMain"] img').count() == 0
        screenshot(pg, "odd_names_path")
        for link in (
            "Data",
            "Coefficients β",
            "Evidence space",
            "Explain a prediction",
            "Model & metrics",
            "Lesson: the planted data",
        ):
            go_to(pg, link, None)
            assert_no_errors(pg, link)
            assert pg.locator('[data-testid="stMain"] a[href*="127.0.0.1"]').count() == 0
            pg.wait_for_timeout(200)
            assert requests == [], f"{link} fetched {requests}"
        pg.wait_for_timeout(500)
    assert requests == [], f"the page fetched {requests}"


# ----------------------------------------------------------------------------- λ sweep
#: The λ slider's grid: 10^-5 ... 10^2 in quarter decades.
N_LAMBDA_STEPS = 29


def _long_label_arff(n_labels: int = 19, n_rows: int = 240) -> bytes:
    """A MEKA ARFF (labels first, ``-C n`` in the relation name) with long, bird-like class
    names: long tick labels are what used to spill over the neighbouring panel."""
    from sklearn.datasets import make_multilabel_classification

    X, Y = make_multilabel_classification(
        n_samples=n_rows, n_features=12, n_classes=n_labels, n_labels=3, random_state=7
    )
    names = [f"Long-tailed Species {t:02d} (Genus speciosus var. {t})" for t in range(n_labels)]
    lines = [f"@relation 'birdsong_like: -C {n_labels}'"]
    lines += [f"@attribute '{name}' {{0,1}}" for name in names]
    lines += [f"@attribute f{j} numeric" for j in range(X.shape[1])]
    lines.append("@data")
    lines += [",".join([*map(str, y), *(f"{v:g}" for v in x)]) for x, y in zip(X, Y, strict=True)]
    return ("\n".join(lines) + "\n").encode()


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


def sweep_lambda(pg, n_classes: int, label: str, *, every_step: bool = True) -> None:
    """Move λ from the slider's smallest value to its largest, one step at a time (or, with
    ``every_step=False``, straight from the smallest to the largest)."""
    slider = pg.get_by_role("slider", name=LAMBDA_LABEL)
    slider.focus()
    seen = []
    steps = N_LAMBDA_STEPS if every_step else 2
    for step in range(steps):
        before = panel_geometry(pg)["titles"]
        old = slider.get_attribute("aria-valuetext")
        pg.keyboard.press("Home" if step == 0 else ("ArrowRight" if every_step else "End"))
        if not (step == 0 and old == "1e-5"):
            pg.wait_for_function(
                """([label, old]) => {
                    const el = document.querySelector(`input[aria-label="${label}"]`);
                    return el && el.getAttribute('aria-valuetext') !== old;
                }""",
                arg=[LAMBDA_LABEL, old],
            )
            pg.wait_for_function(
                """(oldTitles) => {
                    const el = document.querySelector('.st-key-beta_heatmaps .js-plotly-plot');
                    const now = el && el.layout && (el.layout.annotations || []).map(a => a.text);
                    return now && JSON.stringify(now) !== JSON.stringify(oldTitles);
                }""",
                arg=before,
            )
        wait_idle(pg)
        value = slider.get_attribute("aria-valuetext")
        assert_no_errors(pg, f"{label}, λ = {value}")
        check_panels(panel_geometry(pg), n_classes, f"{label}, λ = {value}")
        seen.append(value)
        if step in (0, steps - 1):
            screenshot(pg, f"sweep_{label}_lambda_{value}")
    assert seen[0] == "1e-5" and seen[-1] == "100", seen
    assert len(set(seen)) == steps, seen


def _upload_arff(pg, server_url, name: str, data: bytes) -> None:
    """Open the home page, upload one ARFF file (labels named in it) and load it."""
    pg.goto(server_url + "/")
    pg.get_by_role("heading", name=PAGES["Choose data"][1]).wait_for()
    wait_idle(pg)
    _upload(pg, name, data, mime="application/octet-stream")


@pytest.mark.parametrize("data", ["planted", "wine", "upload"])
def test_heatmaps_keep_cells_and_names_over_the_whole_lambda_slider(server_url, page, data):
    pg = page
    if data == "upload":
        _upload_arff(pg, server_url, "birdsong_like.arff", _long_label_arff())
        go_to(pg, "Coefficients β", "Coefficients β")
        n_classes = 19
    else:
        pg.goto(server_url + f"/coefficients?sample={data}")
        pg.get_by_role("heading", name="Coefficients β").first.wait_for()
        wait_idle(pg)
        n_classes = {"planted": 7, "wine": 3}[data]
    assert_no_errors(pg, f"{data}: Coefficients")
    # every step once, on the hardest case (19 long class names); the samples at both ends
    sweep_lambda(pg, n_classes, data, every_step=data == "upload")


def test_a_long_fit_on_many_labels_shows_its_progress(server_url, page):
    """174 labels: the first Coefficients view fits 2 × 174 logistic problems; the page
    must say what it is doing (class i of m) while it works, never sit silent."""
    pg = page
    _upload_arff(pg, server_url, "many_labels.arff", _long_label_arff(n_labels=174, n_rows=502))
    nav = pg.locator('[data-testid="stSidebarNav"]')
    nav.get_by_role("link", name=re.compile(r"Coefficients β$")).click()
    progress = pg.locator('[data-testid="stProgress"]').filter(
        has_text=re.compile(r"Fitting (SBLR|SparseSBLR) \(γ = .*\): class \d+ of 174")
    )
    heatmaps = pg.locator(".st-key-beta_heatmaps .js-plotly-plot")
    # the fits started in the background after the upload: their progress, or already done
    progress.or_(heatmaps).first.wait_for(timeout=TIMEOUT_MS)
    wait_idle(pg)
    heatmaps.wait_for()
    # λ moved eight steps at once, to 1e-5: 174 classes fitted while the page waits, showing
    # them class by class
    slider = pg.get_by_role("slider", name=LAMBDA_LABEL)
    slider.focus()
    for _ in range(8):
        pg.keyboard.press("ArrowLeft")
    # its progress, class by class; or, on a fast machine, at once the heatmap at 1e-5: never
    # a silent page either way
    done_at_1e5 = pg.locator(".st-key-beta_heatmaps").get_by_text("λ = 1e-5")
    progress.first.or_(done_at_1e5.first).wait_for(timeout=TIMEOUT_MS)
    assert slider.get_attribute("aria-valuetext") == "1e-5"
    screenshot(pg, "many_labels_progress")
    wait_idle(pg)
    assert_no_errors(pg, "Coefficients on 174 labels")
    assert pg.locator('[data-testid="stProgress"]').count() == 0  # removed when done
    heatmaps.wait_for()
    screenshot(pg, "many_labels_coefficients")


def data_summary(pg) -> str:
    """The sidebar's "Data: name · rows × columns · classes" line."""
    sidebar = pg.locator('[data-testid="stSidebarUserContent"]')
    return sidebar.locator("p").filter(has_text="Data:").first.inner_text()


def test_an_uploaded_data_set_travels_by_link(server_url, browser):
    """Issue #13: upload in one browser, open the page's link in another (a session of its
    own): the same data and the same view. Once the data has expired, the link says so and
    shows a sample with the class choice reset, never other data under the old class."""
    share_dir = Path(os.environ["SBLR_SHARE_DIR"])
    contexts = []

    def new_page():  # a browser context of its own: another person, another session
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        pg = watched_page(context)
        return pg

    try:
        teacher = new_page()
        _upload_arff(teacher, server_url, "birdsong_like.arff", _long_label_arff())
        go_to(teacher, "Coefficients β", "Coefficients β")
        open_select(teacher.get_by_role("combobox", name="Class k"))
        teacher.get_by_role("option", name=re.compile("^Long-tailed Species 03 ")).click()
        wait_idle(teacher)
        teacher.wait_for_url(re.compile(r"[?&]k=3(&|$)"))  # the link carries the view
        link = teacher.url
        token = parse_qs(urlsplit(link).query)["data"][0]
        view = sidebar_values(teacher)
        data_line = data_summary(teacher)
        assert "birdsong_like" in data_line, data_line

        student = new_page()
        student.goto(link)
        student.get_by_role("heading", name="Coefficients β").first.wait_for()
        wait_idle(student)
        assert_no_errors(student, "the shared link")
        assert data_summary(student) == data_line
        assert sidebar_values(student) == view, (link, student.url)
        assert heatmap_state(student)["titles"] == heatmap_state(teacher)["titles"]

        item = share_dir / token / "item.json"
        info = json.loads(item.read_text(encoding="utf-8"))
        info["created"] -= 8 * 86400  # a week and a day ago: past the 7 days
        item.write_text(json.dumps(info), encoding="utf-8")
        late = new_page()
        late.goto(link)
        late.locator('[data-testid="stApp"]').wait_for()
        wait_idle(late)
        try:
            late.get_by_text(re.compile("This link's data has expired")).first.wait_for()
        except Exception:
            screenshot(late, "shared_link_expired_FAILED")  # what the page showed instead
            raise
        assert "birdsong_like" not in data_summary(late)
        assert sidebar_values(late)["class"] != view["class"]
        screenshot(late, "shared_link_expired")
    finally:
        for context in contexts:
            context.close()


def _in_viewport(locator, viewport, what):
    box = locator.bounding_box()
    assert box is not None, f"{what}: not drawn"
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"] + 1, (what, box)
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] + 1, (what, box)


@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)], ids=["1440x900", "1024x768"])
def test_every_lesson_step_fits_the_first_screen(server_url, browser, size):
    """A teacher walks the lesson with ◀ step · next ▶ on the pages it opens: each step's
    question, the figure it talks about and its control (λ beside the SparseSBLR heatmap)
    are in the first screen, at 1440×900 and at 1024×768, without scrolling."""
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        pg = watched_page(context)
        pg.goto(server_url + "/lesson?step=1")
        wait_idle(pg)
        pg.get_by_role("button", name=re.compile(r"^Show me")).click()
        viewport = pg.viewport_size
        for step in range(1, 8):
            panel = pg.locator(".st-key-lesson_panel")
            panel.get_by_text(f"Lesson, step {step} of 7").wait_for()
            wait_idle(pg)
            assert_no_errors(pg, f"lesson step {step}")
            _in_viewport(
                panel.get_by_text("Question for the class."), viewport, f"{step}: question"
            )
            figure = pg.locator(".st-key-lesson_figure")
            if step == 6:  # stability: the button that computes the figure, then the figure
                button = panel.get_by_role("button", name=re.compile("^Estimate stability"))
                if button.count():  # else another session computed it: shown at once
                    button.click()
                figure.locator(".js-plotly-plot").wait_for()
                wait_idle(pg)
            figure.first.wait_for()
            _in_viewport(figure.first, viewport, f"step {step}: figure")
            if step in (4, 5):
                slider = panel.get_by_role("slider", name="λ (log₁₀)")
                _in_viewport(slider, viewport, f"step {step}: λ")
            if step < 7:
                _in_viewport(
                    panel.get_by_role("button", name=f"step {step + 1} ▶"), viewport, "next"
                )
            pg.screenshot(path=str(ARTIFACTS / f"lesson_{width}_step{step}.png"))
            if step < 7:
                panel.get_by_role("button", name=f"step {step + 1} ▶").click()
                pg.get_by_text(f"Lesson, step {step + 1} of 7").wait_for()
    finally:
        context.close()


#: The WCAG levels axe-core checks (2.1 A and AA).
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def test_every_page_has_no_serious_accessibility_violation(server_url, browser):
    """A teaching tool is used by whole classes: axe-core (WCAG 2.1 A/AA) finds no serious or
    critical violation on any page (it found 16-17 serious colour-contrast nodes: captions
    at 3.9:1 and the greyed γ slider at 2.3:1). axe-core comes with axe-playwright-python;
    it runs inside the page, nothing is downloaded."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    found = {}
    try:
        pg = context.new_page()
        for link, (name, _) in PAGES.items():
            pg.goto(server_url + ("/" if name == "choose_data" else f"/{name}"))
            wait_idle(pg)
            pg.wait_for_timeout(500)  # charts draw after the script ends
            wait_idle(pg)
            result = axe.run(pg, options={"runOnly": {"type": "tag", "values": WCAG_TAGS}})
            bad = [
                (v["id"], [n["target"] for n in v["nodes"]][:3])
                for v in result.response["violations"]
                if v["impact"] in ("serious", "critical")
            ]
            if bad:
                found[link] = bad
    finally:
        context.close()
    assert not found, found


def test_a_downloaded_report_opens_offline_and_draws_its_figures(browser, tmp_path):
    """plotly.js is inlined compressed and unpacked by the browser: the file opened from
    disk, with the network cut, draws every figure."""
    from pages._shared.report import Analysis, analysis_report
    from sblr import SBLRClassifier, SparseSBLRClassifier
    from sblr.evaluation import evaluate
    from sblr.samples import load_sample

    ds = load_sample("planted")
    sparse = SparseSBLRClassifier(lam=1e-3).fit(ds.X, ds.y)
    page = analysis_report(
        ds,
        3,
        Analysis(
            sblr_model=SBLRClassifier().fit(ds.X, ds.y),
            sparse_model=sparse,
            evidence=sparse.featurizer_.training_evidence(),
            evaluation=evaluate(SparseSBLRClassifier(lam=1e-3), ds.X, ds.y),
            model="SparseSBLR",
            context={"data": ds.name},
        ),
    )
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    context = browser.new_context(offline=True)
    try:
        pg = context.new_page()
        errors = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.goto(path.as_uri())
        pg.locator("#sblr-figure-1 .main-svg").first.wait_for(timeout=TIMEOUT_MS)
        assert pg.locator("#sblr-figure-1 .heatmaplayer, #sblr-figure-1 image").count() > 0
        assert not errors, errors
    finally:
        context.close()


def test_train_test_predict_and_a_model_file_in_a_fresh_session(server_url, browser):
    """Issue #26 in a real browser: upload a training file, score it on a test file, predict
    a file without labels, download the model, and open that model in a fresh session to
    predict the same file there."""
    import io

    import pandas as pd

    wine = pd.read_csv(ROOT / "sample_data" / "wine.csv")

    def csv(frame):
        buf = io.StringIO()
        frame.to_csv(buf, index=False)
        return buf.getvalue().encode()

    train = csv(wine.sample(frac=0.7, random_state=0))
    test = csv(wine.drop(wine.sample(frac=0.7, random_state=0).index).iloc[:, ::-1])
    rows = csv(wine.drop(columns="class").iloc[:12])

    def uploader(pg, label):
        return (
            pg.locator('[data-testid="stFileUploader"]')
            .filter(has_text=label)
            .locator("input[type=file]")
        )

    contexts = []
    try:
        first = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
        contexts.append(first)
        first.set_default_timeout(TIMEOUT_MS)
        pg = watched_page(first)
        pg.goto(server_url + "/")
        wait_idle(pg)
        _upload(pg, "vineyard.csv", train)
        go_to(pg, "Model & metrics", PAGES["Model & metrics"][1])
        pg.get_by_test_id("stRadioGroup").get_by_text("Supplied test file").click()
        wait_idle(pg)
        uploader(pg, "Test file").set_input_files(
            {"name": "vineyard_test.csv", "mimeType": "text/csv", "buffer": test}
        )
        pg.get_by_text(re.compile(r"scored on the \d+ rows of vineyard_test")).wait_for()
        wait_idle(pg)
        assert_no_errors(pg, "the supplied test file")
        screenshot(pg, "model_on_a_test_file")

        go_to(pg, "Predict a file", PAGES["Predict a file"][1])
        uploader(pg, "Rows to predict").set_input_files(
            {"name": "new_rows.csv", "mimeType": "text/csv", "buffer": rows}
        )
        pg.get_by_role("heading", name="12 rows of new_rows").wait_for()
        wait_idle(pg)
        assert_no_errors(pg, "predicting a file")
        with pg.expect_download() as info:
            pg.get_by_role("button", name="Download this model (skops file)").click()
        model_file = Path(info.value.path()).read_bytes()
        assert model_file[:2] == b"PK"  # a skops archive

        fresh = browser.new_context(viewport={"width": 1440, "height": 1000})
        contexts.append(fresh)
        fresh.set_default_timeout(TIMEOUT_MS)
        other = watched_page(fresh)
        other.goto(server_url + "/predict")
        wait_idle(other)
        other.get_by_test_id("stRadioGroup").get_by_text("a model file").click()
        wait_idle(other)
        uploader(other, "Model file").set_input_files(
            {"name": "vineyard.skops", "mimeType": "application/octet-stream", "buffer": model_file}
        )
        other.get_by_text(re.compile("fitted on vineyard")).wait_for()
        uploader(other, "Rows to predict").set_input_files(
            {"name": "new_rows.csv", "mimeType": "text/csv", "buffer": rows}
        )
        other.get_by_role("heading", name="12 rows of new_rows").wait_for()
        wait_idle(other)
        assert_no_errors(other, "a model file in a fresh session")
        screenshot(other, "predict_with_a_model_file")
    finally:
        for context in contexts:
            context.close()


@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)], ids=["1440x900", "1024x768"])
def test_the_first_screen_of_model_and_metrics_on_19_labels(server_url, browser, size):
    """A researcher's 19-label upload: before scrolling, Model & metrics shows micro-F1,
    macro-F1 and the rows given no label, each beside its yardstick; no "nan" or "None"
    anywhere on the page."""
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        pg = watched_page(context)
        _upload_arff(pg, server_url, "birdsong_like.arff", _long_label_arff())
        go_to(pg, "Model & metrics", PAGES["Model & metrics"][1])
        metrics = pg.locator('[data-testid="stMetric"]')
        metrics.filter(has_text="Rows with no label").first.wait_for()
        wait_idle(pg)
        assert_no_errors(pg, "Model & metrics on 19 labels")
        viewport = pg.viewport_size
        # the first screen is the top of the page: a page opened from the home page's upload
        # (scrolled down to it) may keep that scroll position; a fresh visit starts at the top
        pg.evaluate(
            'document.querySelectorAll(\'[data-testid="stMain"], '
            '[data-testid="stAppScrollToBottomContainer"], section.main\')'
            ".forEach(e => e.scrollTo(0, 0)); window.scrollTo(0, 0)"
        )
        wait_idle(pg)
        for label in ("Micro-F1", "Macro-F1", "Rows with no label"):
            metric = metrics.filter(has_text=label).first
            _in_viewport(metric, viewport, f"{label} at {width}x{height}")
        assert "predict nothing:" in metrics.filter(has_text="Micro-F1").first.inner_text()
        text = pg.locator('[data-testid="stMain"]').inner_text()
        assert not re.search(r"\bnan\b|\bNone\b", text), re.findall(r".{30}(?:nan|None).{30}", text)
        pg.screenshot(path=str(ARTIFACTS / f"model_19_labels_{width}.png"))
    finally:
        context.close()


def test_the_coefficient_heatmap_is_on_the_first_screen_at_1024x768(server_url, browser):
    """Issue #38 row 12: the page's display choices filled the first screen at 1024×768 and
    the heatmap began at its bottom edge; now they wait in one closed expander and the
    heatmap starts in the upper half of the window."""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        pg = watched_page(context)
        pg.goto(server_url + "/coefficients?sample=planted")
        pg.get_by_role("heading", name="Coefficients β").first.wait_for()
        heatmap = pg.locator(".st-key-beta_heatmaps .js-plotly-plot")
        heatmap.wait_for()
        wait_idle(pg)
        assert_no_errors(pg, "Coefficients at 1024x768")
        box = heatmap.bounding_box()
        assert box is not None and 0 <= box["y"] < 0.5 * 768, box
        pg.screenshot(path=str(ARTIFACTS / "coefficients_1024.png"))
    finally:
        context.close()


def test_compare_forecasts_method_by_method_and_cancel_stops_the_run(server_url, page):
    """Issue #38: Compare forecast "about 64 s" for a run that took 457 s (one average over
    quick and slow methods) and could not be stopped. Its progress now names what each method
    still needs, and Cancel ends the run at the fold being computed, keeping the folds done."""
    pg = page
    pg.goto(server_url + "/compare?sample=planted")
    pg.get_by_role("heading", name="Compare methods").wait_for()
    wait_idle(pg)
    pg.get_by_role("button", name="Run cross-validation").click()
    progress = pg.locator('[data-testid="stProgress"]')
    # a fold of the second method or later (SparseSBLR's folds done and timed), the rest not
    # yet: the method's label opens the progress text
    progress.filter(has_text=re.compile(r"(^|\s)(SBLR|SML|MLKNN|IBLR), fold")).first.wait_for()
    text = progress.first.inner_text()
    assert re.search(r"not timed yet|in all", text), text
    screenshot(pg, "compare_running")
    pg.get_by_role("button", name="Cancel").click()
    cancelled = pg.locator('[data-testid="stAlertContentInfo"]').filter(has_text="Cancelled after")
    cancelled.wait_for()
    wait_idle(pg)
    assert progress.count() == 0
    shown = re.search(r"Cancelled after (\d+) of (\d+) folds", cancelled.inner_text())
    assert shown and 0 < int(shown[1]) < int(shown[2]), cancelled.inner_text()
    assert pg.get_by_role("button", name="Cancel").count() == 0
    assert_no_errors(pg, "Compare after Cancel")


def test_the_playground_draws_clicks_moves_lambda_travels_by_link_and_sends_its_points(
    server_url, browser
):
    """Issue #36: points of two classes clicked into an empty plane make a region; λ moved
    empties β cells; the address opened in a fresh browser shows the same picture; the points
    go to Coefficients on request."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    pg = watched_page(context)
    pg.goto(server_url + "/playground")
    pg.get_by_role("heading", name="Playground").wait_for()
    wait_idle(pg)
    pg.locator(".st-key-pg_clear button").first.click()
    counts = re.compile(r"^\d+ points? \(")  # the caption under the plane
    caption = pg.locator('[data-testid="stCaptionContainer"]').filter(has_text=counts)
    caption.filter(has_text=re.compile(r"^0 points")).wait_for()
    wait_idle(pg)
    plane = pg.locator(PLANE)

    def click(fx, fy, points):
        # the buttons under the plane (Clear) scroll the page: the plane back in view first
        plane.first.evaluate("(el) => el.scrollIntoView({block: 'center'})")
        x, y, w, h = plane.first.evaluate(_PLANE_AREA)
        pg.mouse.click(x + fx * w, y + (1 - fy) * h)
        caption.filter(has_text=re.compile(rf"^{points} points")).wait_for()
        wait_idle(pg)

    def region():  # the surface drawn (the payload the canvas drew), [] without one
        return plane.first.evaluate(_SURFACE)

    pg.locator(".st-key-pg_action [role=radiogroup] label").nth(1).click()  # + 20 around
    wait_idle(pg)
    click(0.25, 0.25, 20)  # class A, lower left
    assert not region()  # one class: no model, no region
    # the main area's note (the sidebar has its own box: the page's model is its own)
    main_info = pg.locator('[data-testid="stMain"] [data-testid="stAlertContentInfo"]')
    assert "two classes" in main_info.inner_text()
    pg.locator(".st-key-pg_class [role=radiogroup] label").nth(1).click()  # class B
    wait_idle(pg)
    click(0.75, 0.75, 40)  # class B, upper right
    first = region()
    assert first, "no region drawn for two classes"
    click(0.25, 0.75, 60)  # more B, upper left: the region moves
    assert region() != first
    screenshot(pg, "playground_clicked")

    pg.get_by_role("tab", name="β").click()  # β beside the plane, one tab away
    wait_idle(pg)
    zeros = re.compile(r"(\d+) of 4 exactly 0")
    beta = pg.locator('[data-testid="stCaptionContainer"]').filter(has_text=zeros)
    before = int(zeros.search(beta.inner_text())[1])
    slider = pg.get_by_role("slider", name="Playground λ (log₁₀)")
    slider.focus()
    pg.keyboard.press("End")  # the largest λ
    assert slider.get_attribute("aria-valuetext") == "1e0"
    more = "|".join(str(n) for n in range(before + 1, 5))
    beta.filter(has_text=re.compile(rf"(?:{more}) of 4 exactly 0")).wait_for()
    wait_idle(pg)

    link = pg.url
    shown = region()
    other = browser.new_context(viewport={"width": 1024, "height": 768})
    other.set_default_timeout(TIMEOUT_MS)
    try:
        fresh = watched_page(other)
        fresh.goto(link)
        fresh.get_by_role("heading", name="Playground").wait_for()
        wait_idle(fresh)
        fresh_caption = fresh.locator('[data-testid="stCaptionContainer"]').filter(has_text=counts)
        assert fresh_caption.inner_text().startswith("60 points")
        fresh_plane = fresh.locator(PLANE).first
        fresh_plane.wait_for()
        again = fresh_plane.evaluate(_SURFACE)
        assert again == shown
        # at 1024×768, with the short lesson open, the whole plane is on the first screen
        fresh.get_by_role("tab", name="Lesson").click()
        wait_idle(fresh)
        fresh.get_by_role("button", name="1 · C in A ∩ B").click()
        wait_idle(fresh)
        fresh.get_by_text("Every point of C is also a point of A and of B").wait_for()
        # the lesson tab is under the plane at 1024 px: back to the first screen
        fresh.locator('[data-testid="stMain"]').evaluate("(el) => el.scrollTo(0, 0)")
        fresh.wait_for_timeout(200)
        box = fresh_plane.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 768, box
        # its colour bar, title and legend are drawn inside the canvas, not cut off
        parts, outside = fresh_plane.evaluate(_PARTS_OUTSIDE)
        assert "colorbar" in parts and outside == [], (parts, outside)  # π of C, nothing cut
    finally:
        other.close()

    pg.get_by_role("button", name="Use these points as the data").click()
    pg.get_by_role("heading", name="Coefficients β").first.wait_for()
    wait_idle(pg)
    assert "playground" in pg.locator('[data-testid="stSidebarUserContent"]').inner_text()
    assert_no_errors(pg, "Coefficients on the playground's points")
    context.close()


#: The Playground's plane: a canvas (pages/_shared/plane.js) that keeps what it drew on the
#: element: ``__plane`` (the payload), ``__layout`` (the plotting square), ``__parts`` (the
#: title's, legend's and colour bar's boxes, px in the canvas).
PLANE = "canvas.sblr-plane-canvas"
#: The plotting square on the page (x, y, width, height): x₁ and x₂ from -1.05 to 1.05.
_PLANE_AREA = """(el) => { const r = el.getBoundingClientRect(), L = el.__layout;
    return [r.left + L.x0, r.top + L.y0, L.side, L.side]; }"""
_SURFACE = "(el) => el.__plane.surface ? [el.__plane.surface.z] : []"
#: The parts drawn, and those outside the canvas (cut off).
_PARTS_OUTSIDE = """(el) => { const parts = el.__parts || {};
    return [Object.keys(parts), Object.entries(parts).filter(([, [x, y, w, h]]) =>
        x < -1 || y < -1 || x + w > el.clientWidth + 1 || y + h > el.clientHeight + 1)
        .map(([name]) => name)]; }"""
#: The Playground's presets as its preset box names them.
PLAYGROUND_PRESETS = ("two blobs", "XOR", "rings", "C in A ∩ B", "noisy labels")
#: Text cut by its box ("L…", "two l"): an element with text that overflows a box hiding
#: the overflow.
_CUT_TEXT = """() => [...document.querySelectorAll('[data-testid="stMain"] *')].filter(el => {
    if (!el.offsetParent || el.closest('.js-plotly-plot') || !el.textContent.trim()) return false;
    const style = getComputedStyle(el);
    const hides = style.textOverflow === 'ellipsis' || style.overflowX === 'hidden';
    return hides && el.scrollWidth > el.clientWidth + 1;
}).map(el => el.textContent.trim().slice(0, 40))"""


@pytest.mark.parametrize("size", [(1440, 900), (1024, 768)], ids=["1440x900", "1024x768"])
def test_the_playground_fits_a_classroom_screen_with_every_preset(server_url, browser, size):
    """Issue #46 items 2 and 6: with the sidebar open, at 1440×900 and 1024×768, the whole
    plane (its title, legend and colour bar) is on the first screen with every preset, no
    tool, caption or title is cut ("L…", "two l"), and β is one tab away; the plane is the
    one chart drawn at a click (three were: the plane, β and the WebGL evidence space), a
    canvas with its surface drawn. Screenshots: test-artifacts/playground_*.png."""
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        pg = watched_page(context)
        pg.goto(server_url + "/playground")
        pg.get_by_role("heading", name="Playground").wait_for()
        wait_idle(pg)
        sidebar = pg.locator('[data-testid="stSidebar"]').bounding_box()
        assert sidebar and sidebar["width"] > 200, sidebar  # the sidebar open
        viewport = pg.viewport_size
        plane = pg.locator(PLANE).first
        for name in PLAYGROUND_PRESETS:
            if name != "two blobs":
                before = pg.url
                open_select(pg.locator(".st-key-pg_preset [role='combobox']"))
                pg.get_by_role("option", name=name, exact=True).click()
                pg.wait_for_function("(u) => location.href !== u", arg=before)
                wait_idle(pg)
            assert_no_errors(pg, f"the {name} preset")
            plane.wait_for()
            _in_viewport(plane, viewport, f"{name}: the plane with its legend")
            assert pg.evaluate(_CUT_TEXT) == [], name
            parts, cut = plane.evaluate(_PARTS_OUTSIDE)
            assert "title" in parts and "legend" in parts, (name, parts)
            assert cut == [], f"{name}: the plane's {cut} cut"
            if width > 1100:  # beside the plane; at 1024 px under it, one scroll away
                _in_viewport(pg.get_by_role("tab", name="β"), viewport, "the β tab")
            # the plane is the one chart drawn at a click: no Plotly chart beside it
            assert pg.locator(f'[data-testid="stMain"] {PLANE}').count() == 1
            assert pg.locator('[data-testid="stMain"] .js-plotly-plot').count() == 0
            assert plane.evaluate(_SURFACE), name  # the surface drawn
            slug = name.replace(" ", "_").replace("∩", "and")
            pg.screenshot(path=str(ARTIFACTS / f"playground_{slug}_{width}x{height}.png"))
        pg.get_by_role("tab", name="Lesson").click()
        wait_idle(pg)
        pg.get_by_role("button", name="1 · C in A ∩ B").click()
        pg.get_by_text("Every point of C is also a point of A and of B").wait_for()
        wait_idle(pg)
        if width < 1100:  # the lesson's tab is under the plane here: back to the first screen
            pg.locator('[data-testid="stMain"]').evaluate("(el) => el.scrollTo(0, 0)")
            pg.wait_for_timeout(200)
        _in_viewport(plane, viewport, "the plane in the lesson")
        pg.screenshot(path=str(ARTIFACTS / f"playground_lesson_{width}x{height}.png"))
        screenshot(pg, f"playground_lesson_full_{width}x{height}")
    finally:
        context.close()
