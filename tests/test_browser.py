"""End-to-end tests of the dashboard in a real browser: every page visited after an upload, the
sidebar's settings, a link on a fresh server, names shown as text, accessibility, the report.

Helpers: ``browser_helpers.py``; the server, browser and page fixtures: ``conftest.py``.
"""

from __future__ import annotations

import contextlib
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from browser_helpers import (
    ARTIFACTS,
    LAMBDA_LABEL,
    PAGES,
    ROOT,
    TIMEOUT_MS,
    _upload,
    assert_no_errors,
    go_to,
    heatmap_state,
    open_select,
    screenshot,
    sidebar_values,
    streamlit_server,
    wait_idle,
)

pytestmark = [pytest.mark.slow, pytest.mark.browser]


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


#: The lazily loaded scripts that draw the sidebar's selectboxes, toggle and sliders.
SIDEBAR_WIDGET_SCRIPTS = re.compile(r"/static/js/(Selectbox|Checkbox|Slider)\.[\w-]+\.js$")


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


#: The WCAG levels axe-core checks (2.1 A and AA).
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


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
            result = axe.run(
                pg,
                # violations only: axe does not gather the details of what passes
                options={
                    "runOnly": {"type": "tag", "values": WCAG_TAGS},
                    "resultTypes": ["violations"],
                },
            )
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
