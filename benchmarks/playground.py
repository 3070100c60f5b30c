"""Redraw time of the Playground page (issue #36: ≤ 0.3 s p95 with up to 300 points and a
60 × 60 grid), through the app's own code path.

Drives ``app.py`` and ``pages/playground.py`` with :class:`streamlit.testing.v1.AppTest` (the
whole server-side script run: the fit, the grid, the figures and their serialisation; no
browser) on boards of 300 points, multi-class and multi-label, and times ``AppTest.run()``
after each change a user makes: a point placed (the board in the session changed, as a click
does), λ moved, γ moved, the model switched. Prints p50 and p95 per change and the size of
the plane's payload as sent.

``--browser`` measures what a student waits for in Chromium instead (budget: 200 ms p95,
issue #46) (``/usr/bin/chromium``, Playwright; the dashboard started as ``sblr dashboard``
starts it): from the click on the plane, or the ← / → key on the λ slider, until the new
plane is drawn in the page (the p50 / p95 columns: the canvas drew the plane the click makes
as the dashboard's route answered, before the page's run, or the page's run's plane; for a
checkout before issue #46 item 6, Plotly drew the new chart after the run), and until the
page settled: the script idle (one run of the plane's fragment: the click's callback, then
the new plane, the scores, β), split into the wait for the run, the run as the page sees it
(its start and end messages; the page draws what arrives meanwhile, so a plane drawn before
the end message is in it), and the drawing after it; and the load average before and after
(on a busy 2-core machine the timings follow the load). Its last
rows are the floor: a one-button fragment of nothing else, clicked and timed the same way, what
Streamlit's own round trip costs on the machine, with its default ``gc.collect()`` after each
run and without it (``runner.postScriptGC = false``).
``--against CHECKOUT`` serves another checkout beside this one (e.g. a worktree of the
commit before) and alternates their clicks and λ steps, so old and new are timed under the
same load in one run.

``--draw`` times Plotly.js alone drawing the plane in Chromium (no Streamlit, no server:
less at the mercy of a busy machine), as :func:`sblr.plots.playground.playground_plane`
builds it and with the surface as the filled contour it was before issue #46, and the time
to build the figure in Python (the page now draws :func:`~sblr.plots.playground.plane_payload`
on a canvas instead).

Run from the repo root (with sblr importable: `pip install -e .` in the repository)::

    python -m benchmarks.playground [--repeats 20] [--browser [--against CHECKOUT] | --draw]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from benchmarks.dashboard_latency import _navigation_mode, _one_script_cache
from sblr.registry import SBLR, SPARSE_SBLR

ROOT = Path(__file__).resolve().parents[1]


def _board(kind: str):
    from sblr.playground import Board, preset

    if kind == "multi-label":
        base = preset("C where A and B overlap")
    else:
        base = preset("XOR")
    rng = np.random.default_rng(0)
    board = base
    while len(board) < 300:
        x, y = rng.uniform(-0.9, 0.9, 2)
        k = int(rng.integers(0, board.n_classes))
        board = board.add_cluster(x, y, k, n=min(20, 300 - len(board)), seed=len(board))
    return Board(board.points[:300], board.labels[:300])


CHANGES = ("place a point", "move λ", "move γ", "switch model")
LAMS = [-4.0, -3.5, -3.0, -2.5, -2.0]
GAMMAS = [0.0, 0.25, 0.5, 0.75, 1.0]
MODELS = [SBLR.label, SPARSE_SBLR.label]


def _change(at, name, i, rng):
    """One change a user makes, the ``i``-th of its kind (each to a new value)."""
    if name == "place a point":  # as a click does: the session's board changes
        board = at.session_state["_pg_board"]
        at.session_state["_pg_board"] = board.remove(0).add(*rng.uniform(-1, 1, 2), i % 2)
    elif name == "move λ":
        at.select_slider(key="pg_lam").set_value(LAMS[i % len(LAMS)])
    elif name == "move γ":
        at.select_slider(key="pg_gamma").set_value(GAMMAS[i % len(GAMMAS)])
    else:
        at.selectbox(key="pg_model").set_value(MODELS[i % len(MODELS)])


# The plane as drawn: the canvas component (pages/_shared/plane.js), or a Plotly chart (the
# page before issue #46 item 6, for --against). "Drawn" = a new payload drawn on the canvas
# (its counter), or a new Plotly chart node or new data in it. The script's state is logged
# as it changes (the run's start and end after the click).
_MARK = """() => { const c = document.querySelector('canvas.sblr-plane-canvas');
    const el = document.querySelector('.js-plotly-plot');
    window.__plane = el; window.__planeData = el && el.data;
    window.__drawn = c && c.dataset.drawn; window.__previewed = c && c.dataset.previewed;
    const app = document.querySelector('[data-testid="stApp"]');
    window.__states = [];
    if (!window.__watch) {
        window.__watch = new MutationObserver(() => window.__states.push(
            [app.getAttribute('data-test-script-state'), performance.now()]));
        window.__watch.observe(app, {attributes: true,
                                     attributeFilter: ['data-test-script-state']});
    }
    window.__t0 = performance.now(); }"""
# (ms) the click to the script's run starting, the run (server), its end to the plane drawn
_PARTS = """() => { const s = window.__states, t0 = window.__t0, now = performance.now();
    const run = s.find(x => x[0] === 'running'), end = [...s].reverse()
        .find(x => x[0] === 'notRunning');
    if (!run || !end) return [NaN, NaN, NaN];
    return [run[1] - t0, end[1] - run[1], now - end[1]]; }"""
_REDRAWN = """(first) => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-stale="true"]')) return false;
    const c = document.querySelector('canvas.sblr-plane-canvas');
    if (c) return c.dataset.drawn !== undefined && (first || c.dataset.drawn !== window.__drawn);
    const el = document.querySelector('.js-plotly-plot');
    if (!el || !el._fullLayout || !el.querySelector('.main-svg')) return false;
    return first || el !== window.__plane || el.data !== window.__planeData;
}"""
# The new plane drawn, whoever sent it: the dashboard's route (a click's preview, before the
# page's run) or the page's run (a λ step; a checkout without the route); on a Plotly page,
# as _REDRAWN.
_PLANE_NEW = """() => {
    const c = document.querySelector('canvas.sblr-plane-canvas');
    if (!c) return false;
    return (c.dataset.previewed !== undefined && c.dataset.previewed !== window.__previewed)
        || (c.dataset.drawn !== undefined && c.dataset.drawn !== window.__drawn);
}"""
# the plane's plotting area on the page: [left, top, width, height]
_AREA = """() => { const c = document.querySelector('canvas.sblr-plane-canvas');
    if (c) { const r = c.getBoundingClientRect(), L = c.__layout;
             return [r.left + L.x0, r.top + L.y0, L.side, L.side]; }
    const r = document.querySelector('.js-plotly-plot .nsewdrag').getBoundingClientRect();
    return [r.left, r.top, r.width, r.height]; }"""
CHANGES_BROWSER = ("click a point", "λ one step")


def _open_board(browser, url, kind):
    from sblr.playground import encode_board

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{url}/playground?pts={encode_board(_board(kind))}&pm=SparseSBLR")
    page.wait_for_function(_REDRAWN, arg=True, timeout=180_000)
    page.wait_for_timeout(1000)
    return page


def _one_change(page, name, i, rng):
    """One click on the plane or one λ step; returns its times (s) to the new plane drawn
    and to the page settled (the script idle, the page's own plane drawn), and the parts
    (ms) of the latter."""
    if name == "click a point":
        box = page.evaluate(_AREA)
        fx, fy = rng.uniform(0.1, 0.9, 2)
        act = lambda: page.mouse.click(box[0] + fx * box[2], box[1] + fy * box[3])  # noqa: E731
    else:
        slider = page.get_by_role("slider", name="Playground λ (log₁₀)")
        act = lambda: slider.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")  # noqa: E731
    page.evaluate(_MARK)
    before = page.url
    t0 = time.perf_counter()
    act()
    canvas = page.evaluate("() => !!document.querySelector('canvas.sblr-plane-canvas')")
    if canvas:
        page.wait_for_function(_PLANE_NEW, polling="raf", timeout=60_000)
    drawn = time.perf_counter() - t0
    page.wait_for_function(_REDRAWN, arg=False, polling="raf", timeout=60_000)
    settled = time.perf_counter() - t0
    parts = page.evaluate(_PARTS)
    page.wait_for_function("(u) => location.href !== u", arg=before)  # a new board or λ
    page.wait_for_timeout(300)
    return (drawn if canvas else settled), settled, parts


def _browser(repeats: int, against: str | None = None, ports=(None, None)) -> dict:
    """p50/p95 in Chromium of a click on the plane and of a λ step; returns the worst p95 (of
    this checkout) of each change, to the plane drawn. ``against``: another checkout (the page
    before) served beside this one, its changes alternating with this one's, so both see the
    same load."""
    from contextlib import ExitStack

    from playwright.sync_api import sync_playwright

    from sblr.dashboard import CHROMIUM, CHROMIUM_ARGS, running_dashboard

    worst = dict.fromkeys(CHANGES_BROWSER, 0.0)
    with ExitStack() as stack, sync_playwright() as p:
        apps = {"now": stack.enter_context(running_dashboard(str(ROOT), port=ports[0])).url}
        if against:
            apps["before"] = stack.enter_context(running_dashboard(against, port=ports[1])).url
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        for kind in ("multi-class", "multi-label"):
            pages = {app: _open_board(browser, url, kind) for app, url in apps.items()}
            rngs = {app: np.random.default_rng(2) for app in apps}  # the same clicks
            times = {(a, n): [] for a in apps for n in CHANGES_BROWSER}
            settled = {key: [] for key in times}
            parts = {key: [] for key in times}
            for i in range(repeats):
                for app in apps if i % 2 == 0 else reversed(apps):  # alternate who goes first
                    for name in CHANGES_BROWSER:
                        took, whole, split = _one_change(pages[app], name, i, rngs[app])
                        times[app, name].append(took)
                        settled[app, name].append(whole)
                        parts[app, name].append(split)
            for (app, name), values in times.items():
                p50, p95 = np.percentile(values, [50, 95]) * 1000
                s50, s95 = np.percentile(settled[app, name], [50, 95]) * 1000
                if app == "now":
                    worst[name] = max(worst[name], p95)
                split = np.nanmedian(np.asarray(parts[app, name], dtype=float), axis=0)
                print(
                    f"{kind:<12} {app:<7} {name:<14} {p50:8.0f} {p95:8.0f}  page settled "
                    f"{s50:.0f} / {s95:.0f} (p50 of: to the run {split[0]:.0f}, the run "
                    f"{split[1]:.0f}, to drawn {split[2]:.0f})"
                )
            for page in pages.values():
                page.close()
        for gc_after_run, name in ((True, "one button"), (False, "… no GC")):
            floor = _floor(browser, repeats, gc_after_run=gc_after_run)
            p50, p95 = np.percentile([took for took, _ in floor], [50, 95])
            split = np.nanmedian(np.asarray([parts for _, parts in floor], dtype=float), axis=0)
            print(
                f"{'floor':<12} {'-':<7} {name:<14} {p50:8.0f} {p95:8.0f}  (p50 of: to the run "
                f"{split[0]:.0f}, the run {split[1]:.0f}; Streamlit's round trip, nothing drawn)"
            )
        browser.close()
    return worst


# The floor: a one-button fragment (nothing computed, one line written), clicked and timed as
# the plane is, in the same browser: what Streamlit's own round trip costs on this machine.
_FLOOR_APP = """import streamlit as st
st.session_state.setdefault("n", 0)
@st.fragment
def clicks():
    st.button("go", key="go", on_click=lambda: st.session_state.update(n=st.session_state.n + 1))
    st.write(f"clicks: {st.session_state.n}")
clicks()
"""


def _floor(browser, repeats: int, *, gc_after_run: bool = True) -> list:
    """(ms) click → its fragment run ended, of ``repeats`` clicks on a one-button fragment,
    with their parts (to the run, the run) as for the plane; ``gc_after_run=False``: with
    Streamlit's ``runner.postScriptGC`` off (no ``gc.collect()`` after each run)."""
    import tempfile

    from sblr.dashboard import running_dashboard

    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "app.py").write_text(_FLOOR_APP, encoding="utf-8")
        if not gc_after_run:
            Path(folder, ".streamlit").mkdir()
            Path(folder, ".streamlit", "config.toml").write_text(
                "[runner]\npostScriptGC = false\n", encoding="utf-8"
            )
        with running_dashboard(folder) as server:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(server.url)
            button = page.get_by_role("button", name="go")
            button.wait_for()
            page.wait_for_timeout(1000)
            out = []
            for i in range(repeats):
                page.evaluate(_MARK)
                t0 = time.perf_counter()
                button.click()
                page.get_by_text(f"clicks: {i + 1}").wait_for()
                page.wait_for_function(_IDLE, polling="raf")
                out.append(((time.perf_counter() - t0) * 1000, page.evaluate(_PARTS)))
                page.wait_for_timeout(300)
            page.close()
    return out


_IDLE = """() => document.querySelector('[data-testid="stApp"]')
    .getAttribute('data-test-script-state') === 'notRunning'"""

_DRAW = """async ([spec, n]) => {
    const el = document.getElementById('plane'); const times = [];
    for (let i = 0; i < n; i++) {
        const fig = JSON.parse(spec); Plotly.purge(el); const t0 = performance.now();
        await Plotly.newPlot(el, fig.data, fig.layout);
        await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
        times.push(performance.now() - t0);
    }
    return times; }"""


def _draw(repeats: int) -> None:
    """Plotly.js drawing the plane alone (newPlot, as a new chart key does at a click)."""
    import plotly
    import plotly.io as pio
    from playwright.sync_api import sync_playwright

    from sblr import playground as pg
    from sblr.dashboard import CHROMIUM, CHROMIUM_ARGS
    from sblr.plots import playground_plane

    script = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_content("<div id='plane' style='width:500px;height:470px'></div>")
        page.add_script_tag(path=str(script))
        for kind in ("multi-class", "multi-label"):
            board = _board(kind)
            k = 0  # one class's π: the surface and the dashed cut
            model = pg.fit_board(board, SPARSE_SBLR.label, gamma=1.0, lam=1e-3)
            surface = pg.surface(model, board, k, 60)
            names = list(pg.CLASS_NAMES[: board.n_classes])

            plane = dict(surface=surface, k=k, cut=pg.decision_cut(model, board, k), title="p")
            arrays = (board.points, board.labels, board.held_out, names)
            playground_plane(*arrays, **plane)
            t0 = time.perf_counter()
            for _ in range(repeats):
                fig = playground_plane(*arrays, **plane)
            built = (time.perf_counter() - t0) / repeats * 1000
            spec = json.loads(pio.to_json(fig, validate=False))
            contour = json.loads(json.dumps(spec))
            for trace in contour["data"]:
                if trace.get("name") == "surface":  # the surface as it was drawn before
                    trace.update(type="contour", contours={"coloring": "fill", "showlines": False})
                    trace.pop("zsmooth", None)
            variants = {"heatmap (now)": spec, "filled contour": contour}
            for smooth in (False, "best"):
                variants[f"heatmap {smooth}"] = json.loads(json.dumps(spec))
                for trace in variants[f"heatmap {smooth}"]["data"]:
                    if trace.get("name") == "surface":
                        trace["zsmooth"] = smooth
            for name, variant in variants.items():
                times = page.evaluate(_DRAW, [json.dumps(variant), repeats + 2])[2:]
                p50, p95 = np.percentile(times, [50, 95])
                print(f"{kind:<12} {name:<15} draw p50 {p50:5.0f}  p95 {p95:5.0f} ms")
            print(f"{kind:<12} building the figure in Python: {built:.0f} ms")
        browser.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--browser", action="store_true", help="time it in Chromium")
    parser.add_argument("--draw", action="store_true", help="time Plotly.js drawing the plane")
    parser.add_argument(
        "--against", metavar="CHECKOUT",
        help="with --browser: another checkout of the dashboard (e.g. the page before) timed "
        "beside this one, alternating",
    )  # fmt: skip
    parser.add_argument(
        "--ports",
        type=int,
        nargs=2,
        default=(None, None),
        help="with --browser: the servers' ports (this one's, --against's)",
    )
    args = parser.parse_args(argv)
    from sblr.playground import encode_board

    if args.draw:
        _draw(args.repeats)
        return 0

    if args.browser:
        # issue #46: click → drawn p95 ≤ 200 ms (round 2 measured 314 ms p50 / 422 ms p95, idle)
        print(f"{'board':<12} {'page':<7} {'change':<14} {'p50 ms':>8} {'p95 ms':>8}  "
              "(budget 200 ms p95)")  # fmt: skip
        load = os.getloadavg()
        worst = _browser(args.repeats, args.against, args.ports)
        for name, p95 in worst.items():  # the budget is the click's (issue #46 item 6)
            print(f"worst p95, {name}: {p95:.0f} ms = {p95 / 200:.2f} × the 200 ms budget")
        # the timings swing with the machine's load: say what it was (1-min average, 2 cores)
        print(f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")
        return 0

    _navigation_mode()
    _one_script_cache()

    print(f"{'board':<12} {'change':<14} {'p50 ms':>8} {'p95 ms':>8}  (budget 300 ms p95)")
    worst = 0.0
    for kind in ("multi-class", "multi-label"):
        board = _board(kind)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.query_params["pts"] = encode_board(board)
        at.run()
        at.switch_page("pages/playground.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        rng = np.random.default_rng(1)
        for name in CHANGES:
            times = []
            for i in range(args.repeats):
                _change(at, name, i, rng)
                t0 = time.perf_counter()
                at.run()
                times.append(time.perf_counter() - t0)
                assert not at.exception, [e.value for e in at.exception]
            p50, p95 = np.percentile(times, [50, 95]) * 1000
            worst = max(worst, p95)
            print(f"{kind:<12} {name:<14} {p50:8.0f} {p95:8.0f}")
        (plane,) = at.get("bidi_component")  # the plane (pages/_shared/plane.py)
        payload = json.loads(plane.proto.json)
        print(f"{kind:<12} plane payload: {len(plane.proto.json) / 1024:.0f} kB as sent, "
              f"{len(payload['points'])} points, {len(payload['cut'])} cut lines")  # fmt: skip
    print(f"worst p95: {worst:.0f} ms = {worst / 300:.2f} × the 300 ms budget")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
