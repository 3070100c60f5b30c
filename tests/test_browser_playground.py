"""End-to-end tests of the lesson and the Playground in a real browser: every lesson step on
the first screen, the Playground's clicks, λ, link and points, at classroom screen sizes.

Helpers: ``browser_helpers.py``; the server, browser and page fixtures: ``conftest.py``.
"""

from __future__ import annotations

import re
import time

import pytest
from browser_helpers import (
    ARTIFACTS,
    TIMEOUT_MS,
    _in_viewport,
    assert_no_errors,
    open_select,
    screenshot,
    wait_idle,
    watched_page,
)

pytestmark = [pytest.mark.slow, pytest.mark.browser]


#: The Playground's plane: a canvas (pages/_shared/plane.js) that keeps what it drew on the
#: element: ``__plane`` (the payload), ``__layout`` (the plotting square), ``__parts`` (the
#: title's, legend's and colour bar's boxes, px in the canvas).
PLANE = "canvas.sblr-plane-canvas"
#: The plotting square on the page (x, y, width, height): x₁ and x₂ from -1.05 to 1.05.
_PLANE_AREA = """(el) => { const r = el.getBoundingClientRect(), L = el.__layout;
    return [r.left + L.x0, r.top + L.y0, L.side, L.side]; }"""
_SURFACE = "(el) => el.__plane.surface ? [el.__plane.surface.z] : []"
#: The planes the dashboard's route answered the canvas with (a click's, drawn at once unless
#: the page's run came first; the benchmark times those drawn).
_ANSWERED = "(el) => Number(el.dataset.answered || 0)"
#: The last of them is the plane the page's run then sent (its own keys aside).
_ANSWER_IS_PAGES = """(el) => { const page = {...el.__plane};
    delete page.place; delete page.seq; delete page.preview;
    return JSON.stringify(page) === JSON.stringify(el.__answer); }"""


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
        answered = plane.first.evaluate(_ANSWERED)
        pg.mouse.click(x + fx * w, y + (1 - fy) * h)
        caption.filter(has_text=re.compile(rf"^{points} points")).wait_for()
        wait_idle(pg)
        # issue #46 item 6: the dashboard's route (the server as `streamlit run app.py` starts
        # it) answered the click with the plane the page's run then drew
        assert plane.first.evaluate(_ANSWERED) == answered + 1
        assert plane.first.evaluate(_ANSWER_IS_PAGES)

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
    # the CSV holds the points drawn now (written when asked, after the clicks' runs)
    with pg.expect_download() as download:
        pg.get_by_role("button", name="Download as CSV").click()
    rows = download.value.path().read_text(encoding="utf-8").strip().splitlines()
    assert rows[0] == "x1,x2,class" and len(rows) == 61, rows[:2]
    screenshot(pg, "playground_clicked")

    # two clicks faster than the route answers (held 0.6 s here): both reach the page, each
    # its own message (sent in one task, the page kept only the last: one point, or none)
    def slow(route):
        time.sleep(0.6)
        route.continue_()

    pg.route("**/_sblr/plane", slow)
    pg.locator(".st-key-pg_action [role=radiogroup] label").nth(0).click()  # + 1
    wait_idle(pg)
    plane.first.evaluate("(el) => el.scrollIntoView({block: 'center'})")
    x, y, w, h = plane.first.evaluate(_PLANE_AREA)
    pg.mouse.click(x + 0.9 * w, y + 0.9 * h)  # the lower right, away from the points
    pg.mouse.click(x + 0.7 * w, y + 0.9 * h)
    caption.filter(has_text=re.compile(r"^62 points")).wait_for()
    wait_idle(pg)
    pg.unroute("**/_sblr/plane")

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
        assert fresh_caption.inner_text().startswith("62 points")
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
