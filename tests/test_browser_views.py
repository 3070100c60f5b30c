"""End-to-end tests of the dashboard's views in a real browser: the β heatmaps over the λ
slider, a long fit's progress, data travelling by link, the first screens on 19 labels,
Compare's forecast and Cancel, and a model file used in a fresh session.

Helpers: ``browser_helpers.py``; the server, browser and page fixtures: ``conftest.py``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from browser_helpers import (
    ARTIFACTS,
    LAMBDA_LABEL,
    N_LAMBDA_STEPS,
    PAGES,
    ROOT,
    TIMEOUT_MS,
    _in_viewport,
    _upload,
    assert_no_errors,
    check_panels,
    go_to,
    heatmap_state,
    open_select,
    panel_geometry,
    screenshot,
    sidebar_values,
    wait_idle,
    watched_page,
)

pytestmark = [pytest.mark.slow, pytest.mark.browser]


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


def data_summary(pg) -> str:
    """The sidebar's "Data: name · rows × columns · classes" line."""
    sidebar = pg.locator('[data-testid="stSidebarUserContent"]')
    return sidebar.locator("p").filter(has_text="Data:").first.inner_text()


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
