"""The Streamlit dashboard (app.py + pages/), driven headless with AppTest.

Every test starts its own AppTest session, so no widget or session state leaks
between tests; Streamlit's data cache is shared, which only makes later tests
faster.  Pages are reached with ``switch_page`` exactly as the navigation
menu does: app.py (shared sidebar, URL state) runs first, then the page.
"""

from __future__ import annotations

import io
import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import (
    PAGES,
    SAMPLE_DIR,
    array,
    assert_clean,
    chart,
    click_load,
    download,
    goto,
    keyed,
    load_upload,
    start,
    texts,
    upload,
    visible,
    widget,
)
from streamlit.testing.v1 import AppTest

from sblr import SparseSBLRClassifier
from sblr.display import fmt_value
from sblr.interpret import cooccurrence
from sblr.samples import load_sample

#: The main chart each page must draw (its st.plotly_chart key).
PAGE_CHART = {
    "pages/data.py": "cooccurrence",
    "pages/coefficients.py": "beta_heatmaps",
    "pages/explain.py": "waterfall",
    "pages/path.py": "path",
}
PLANTED_LABELS = ["daylight", "birdsong", "rain", "thunder", "frost", "spring_tide", "noise"]
SETTINGS_KEYS = {"model", "gamma", "lam", "k"}
#: An upload's link: the settings and ``data``, a random id of the server's copy (never the data).
UPLOAD_KEYS = SETTINGS_KEYS | {"data"}


def link_id(at: AppTest) -> str:
    """The URL's ``data`` id: 128 random bits as 22 URL-safe base64 characters."""
    token = at.query_params["data"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", token), token
    return token


# Every test here starts the app in AppTest: seconds each, so out of the fast suite.
pytestmark = [pytest.mark.usefixtures("navigation_mode"), pytest.mark.slow]


# ----------------------------------------------------------------------------- helpers
# Shared AppTest helpers (start, goto, chart, upload ...) are in tests/apptest_helpers.py.
def sidebar_data(at: AppTest) -> str:
    """The sidebar's data line, e.g. ``**Data:** planted · 500 × 8 · 7 labels``."""
    lines = [m.value for m in at.sidebar.markdown if m.value.startswith("**Data:**")]
    assert len(lines) == 1, "the sidebar data summary is missing"
    return lines[0]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def upload_wine_as_cellar(at: AppTest) -> AppTest:
    """Load wine.csv as an upload named cellar.csv (multi-class, target "class")."""
    load_upload(at, "cellar.csv", (SAMPLE_DIR / "wine.csv").read_bytes(), target="class")
    assert_clean(at)
    assert sidebar_data(at) == "**Data:** cellar · 178 × 13 · 3 classes"
    return at


def zero_count(at: AppTest) -> int:
    """The number of exact zeros the coefficients page reports in its caption."""
    match = re.search(r"(\d+) of (\d+) SparseSBLR coefficients are exactly zero", texts(at.caption))
    assert match, texts(at.caption)
    return int(match.group(1))


def betas(at: AppTest) -> dict[str, np.ndarray]:
    """Heatmap name -> the β matrix drawn on the coefficients page (exact zeros are blank)."""
    fig = chart(at, "beta_heatmaps")
    return {trace["name"]: np.nan_to_num(array(trace["z"]), nan=0.0) for trace in fig["data"]}


# ----------------------------------------------------------------------------- 1. smoke
@pytest.mark.parametrize("model", ["SML", "SBLR", "SparseSBLR"])
@pytest.mark.parametrize(
    ("sample", "summary"),
    [
        pytest.param("planted", "**Data:** planted · 500 × 8 · 7 labels", id="planted"),
        pytest.param("wine", "**Data:** wine · 178 × 13 · 3 classes", id="wine"),
    ],
)
def test_every_page_runs(sample, summary, model):
    at = start()
    if sample != "planted":
        at.radio(key="sample_choice").set_value(sample)
        at.run()
        assert_clean(at)
    at.selectbox(key="model").set_value(model)
    at.run()
    assert_clean(at)
    assert sidebar_data(at) == summary
    for page in PAGES:
        goto(at, page)
        # app.py drew the shared sidebar for this page, with the chosen settings.
        assert sidebar_data(at) == summary
        assert at.selectbox(key="model").value == model
        assert at.title, f"{page} has no title"
        if page in PAGE_CHART:
            chart(at, PAGE_CHART[page])
    # The explain page stands in SparseSBLR for SML, which has no β.
    goto(at, "pages/explain.py")
    has_note = "SML has no coefficients" in texts(at.info)
    assert has_note == (model == "SML")


def test_home_page_summary_of_the_default_sample():
    at = start()
    assert metrics(at) == {
        "Instances": "500",
        "Features": "8",
        "Classes": "7",
        "Task": "multi-label",
        "Label cardinality": "2.342",
    }
    assert "planted (sample data)" in texts(at.subheader)
    freq = chart(at, "home_frequencies")
    counts = load_sample("planted").label_matrix().sum(axis=0)
    assert sorted(array(freq["data"][0]["x"]).tolist()) == sorted(counts.tolist())


# ----------------------------------------------------------------------------- 2. uploads
def test_arff_with_xml_upload():
    at = start()
    upload(at, "mine.arff", (SAMPLE_DIR / "planted.arff").read_bytes())
    upload(at, "planted.xml", (SAMPLE_DIR / "planted.xml").read_bytes(), key="upload_xml")
    click_load(at)
    assert_clean(at)
    assert "Loaded mine.arff." in texts(at.success)
    assert metrics(at)["Instances"] == "500"
    assert metrics(at)["Classes"] == "7"
    assert metrics(at)["Task"] == "multi-label"
    assert "mine (your upload)" in texts(at.subheader)
    # The sidebar and the URL follow the upload on the same click.
    assert sidebar_data(at) == "**Data:** mine · 500 × 8 · 7 labels"
    assert set(at.query_params) == UPLOAD_KEYS
    link = link_id(at)
    for page in PAGES:
        goto(at, page)
        assert sidebar_data(at) == "**Data:** mine · 500 × 8 · 7 labels"
        lesson = {"step"} if page.endswith("lesson.py") else set()  # the lesson's own step
        assert set(at.query_params) == UPLOAD_KEYS | lesson, (
            "only the upload's id may reach the URL"
        )
        assert link_id(at) == link
    goto(at, "pages/data.py")
    assert at.title[0].value == "Data: mine"


def test_the_data_page_lists_the_label_sets_of_multilabel_data_only():
    """A view added as one typed question and one page call (cache.label_sets): the Data page
    shows the 10 most frequent label sets of multi-label data, counted against the label
    matrix here; multi-class data (one class a row) gets none."""
    at = goto(start(), "pages/data.py")
    ds = load_sample("planted")
    Y = ds.label_matrix()
    (table,) = at.dataframe  # the page's one table
    shown = table.value
    assert list(shown.columns) == ["label set", "labels", "rows", "share"]
    assert len(shown) == 10
    for _, listed in shown.iterrows():  # each count, against the rows carrying exactly it
        names = [] if listed["label set"] == "(none)" else listed["label set"].split("; ")
        members = [ds.class_names.index(n) for n in names]
        carried = (Y[:, members] == 1).all(axis=1) & (Y.sum(axis=1) == len(members))
        assert int(listed["rows"]) == int(carried.sum()) > 0
    assert all(int(a) >= int(b) for a, b in zip(shown["rows"][:-1], shown["rows"][1:], strict=True))
    assert any("distinct label sets" in c.value for c in at.caption)
    at.session_state["sample"] = "wine"  # what the home page's sample choice sets
    goto(at, "pages/data.py")
    assert at.title[0].value == "Data: wine" and not at.dataframe


def test_arff_with_number_of_labels():
    at = start()
    upload(at, "counted.arff", (SAMPLE_DIR / "planted.arff").read_bytes())
    keyed(at.number_input, "upload_n_labels").set_value(7)
    click_load(at)
    assert_clean(at)
    assert sidebar_data(at) == "**Data:** counted · 500 × 8 · 7 labels"
    assert metrics(at)["Task"] == "multi-label"
    goto(at, "pages/contributions.py")
    table = at.dataframe[0].value
    assert sorted(table["class"]) == sorted(PLANTED_LABELS)


def test_csv_multiclass_upload():
    at = start()
    upload_wine_as_cellar(at)
    assert metrics(at)["Instances"] == "178"
    assert metrics(at)["Task"] == "multi-class"
    assert "cellar (your upload)" in texts(at.subheader)
    assert set(at.query_params) == UPLOAD_KEYS
    link_id(at)
    goto(at, "pages/model.py")
    assert {"Accuracy ↑", "Macro-F1 ↑"} <= set(metrics(at))


def test_csv_multilabel_upload():
    at = start()
    upload(at, "weather.csv", (SAMPLE_DIR / "planted.csv").read_bytes())
    at.radio(key="upload_task").set_value("multi-label: several 0/1 label columns")
    at.run()
    assert "Choose the label columns" in texts(at.info)
    assert not [b for b in at.button if b.key == "upload_load"], (
        "nothing to load before label columns are chosen"
    )
    widget(at.multiselect, "Label columns (0/1)").set_value(PLANTED_LABELS)
    at.run()
    click_load(at)
    assert_clean(at)
    assert sidebar_data(at) == "**Data:** weather · 500 × 8 · 7 labels"
    assert metrics(at)["Label cardinality"] == "2.342"
    goto(at, "pages/coefficients.py")
    assert set(betas(at)) == {"SBLR", "SparseSBLR, λ = 1e-3"}


def _truncated_arff() -> bytes:
    data = (SAMPLE_DIR / "planted.arff").read_bytes()
    return data[: data.index(b"@data") + 300]  # cut inside the fourth data row


def _tags_without_labels() -> bytes:
    """A Mulan-like file whose 60 trailing {0,1} attributes say nothing of which are labels."""
    header = ["@relation tags", "@attribute x numeric"]
    header += [f"@attribute t{j} {{0,1}}" for j in range(60)]
    rows = [",".join([str(i)] + ["01"[(i + j) % 2] for j in range(60)]) for i in range(4)]
    return "\n".join([*header, "@data", *rows, ""]).encode()


def _choose_non_binary_label(at: AppTest) -> None:
    at.radio(key="upload_task").set_value("multi-label: several 0/1 label columns")
    at.run()
    widget(at.multiselect, "Label columns (0/1)").set_value(["alcohol"])
    at.run()


def _too_many_labels(at: AppTest) -> None:
    keyed(at.number_input, "upload_n_labels").set_value(20)
    at.run()


@pytest.mark.parametrize(
    ("name", "data", "prepare", "expected"),
    [
        pytest.param(
            "x.csv",
            bytes(range(256)) * 8,
            None,
            ["Could not read x.csv", "binary data"],
            id="binary-garbage",
        ),
        pytest.param(
            "cut.arff",
            _truncated_arff(),
            None,
            ["Could not use cut.arff", "but the header declares 15 attributes", "truncated"],
            id="truncated-arff",
        ),
        pytest.param(
            "labels.csv",
            (SAMPLE_DIR / "wine.csv").read_bytes(),
            _choose_non_binary_label,
            ["Could not use labels.csv", "label column 'alcohol' must hold only 0/1"],
            id="non-binary-label-column",
        ),
        pytest.param(
            "many.arff",
            (SAMPLE_DIR / "planted.arff").read_bytes(),
            _too_many_labels,
            ["Could not use many.arff", "asks for 20 labels but the file has only 15"],
            id="more-labels-than-attributes",
        ),
        pytest.param(
            "tags-train.arff",
            _tags_without_labels(),
            None,
            [
                "Could not use tags-train.arff",
                "ends with 60 attributes declared {0,1} ('t0', 't1', 't2' and 57 more)",
                "the XML upload in the dashboard",
                "(n_labels=N; --n-labels N)",
            ],
            id="many-binary-attributes-without-labels",
        ),
    ],
)
def test_bad_upload_keeps_previous_data(name, data, prepare, expected):
    at = start()
    upload_wine_as_cellar(at)
    upload(at, name, data)
    if prepare is not None:
        prepare(at)
    if any(b.key == "upload_load" for b in at.button):
        click_load(at)
    assert not at.exception
    assert len(at.error) == 1
    message = visible(at.error[0].value)
    for part in expected:
        assert part in message
    # The previous upload is still what the app (and every page) uses.
    assert sidebar_data(at) == "**Data:** cellar · 178 × 13 · 3 classes"
    assert "cellar (your upload)" in texts(at.subheader)
    assert metrics(at)["Instances"] == "178"
    assert not at.success
    goto(at, "pages/data.py")
    assert at.title[0].value == "Data: cellar"


# ----------------------------------------------------------------------------- 3. sliders
def test_lambda_and_gamma_sliders_change_beta():
    at = goto(start(), "pages/coefficients.py")
    before = betas(at)
    sparse_before = before["SparseSBLR, λ = 1e-3"]
    zeros_before = zero_count(at)
    assert zeros_before == int(np.sum(sparse_before == 0))

    at.select_slider(key="log_lam").set_value(-2.0)  # λ = 0.01
    at.run()
    assert_clean(at)
    assert at.query_params["lam"] == "0.01"
    after = betas(at)
    sparse_after = after["SparseSBLR, λ = 1e-2"]
    assert not np.allclose(sparse_after, sparse_before)
    assert zero_count(at) == int(np.sum(sparse_after == 0))
    assert zero_count(at) > zeros_before
    assert np.any(sparse_after), "λ = 0.01 must leave some β non-zero for the γ check below"
    np.testing.assert_array_equal(after["SBLR"], before["SBLR"])  # SBLR has no λ

    # γ: moving the slider while "scale" is on leaves "scale" and uses the value moved to
    # (the slider is not greyed out: its faded text failed WCAG's contrast)
    assert at.toggle(key="gamma_is_scale").value
    assert not at.select_slider(key="log_gamma").disabled
    at.select_slider(key="log_gamma").set_value(1.0)  # γ = 10
    at.run()
    assert_clean(at)
    assert not at.toggle(key="gamma_is_scale").value
    assert at.query_params["gamma"] == "10"
    moved = betas(at)
    assert not np.allclose(moved["SBLR"], after["SBLR"])
    assert not np.allclose(moved["SparseSBLR, λ = 1e-2"], sparse_after)
    assert zero_count(at) == int(np.sum(moved["SparseSBLR, λ = 1e-2"] == 0))


def test_lambda_moves_the_sparse_coefficients_whatever_the_model():
    # The coefficient pages always show SparseSBLR, so λ stays live with SBLR chosen.
    at = start({"model": "SBLR"})
    assert not at.select_slider(key="log_lam").disabled
    at.switch_page("pages/coefficients.py")
    at.run()
    before = zero_count(at)
    at.select_slider(key="log_lam").set_value(-1.0)
    at.run()
    assert zero_count(at) > before


# ----------------------------------------------------------------------------- 4. tuning
@pytest.mark.parametrize("model", ["SparseSBLR", "SML"])
def test_tune_moves_the_sliders(model):
    at = start({"model": model})
    goto(at, "pages/model.py")
    assert at.toggle(key="gamma_is_scale").value is True
    headline_before = at.metric[0].value
    at.button(key="tune").click()
    at.run()
    assert_clean(at)
    stored_key, stored_model, _, scheme, result = at.session_state["tuning_result"]
    assert scheme == "inner 5-fold CV"  # the default: less noisy than the paper's 10% split
    assert (stored_key, stored_model) == ("sample:planted", model)
    best = result.best_params
    assert set(best) == ({"gamma", "lam"} if model == "SparseSBLR" else {"gamma"})

    assert at.session_state["gamma_is_scale"] is False
    assert at.toggle(key="gamma_is_scale").value is False
    assert at.session_state["log_gamma"] == pytest.approx(math.log10(best["gamma"]))
    assert at.select_slider(key="log_gamma").value == pytest.approx(math.log10(best["gamma"]))
    assert at.query_params["gamma"] == f"{best['gamma']:.4g}"
    # a value at an end of the grid is said to be one (the best may lie beyond)
    at_edge = [v for v in best.values() if v in (1e2, 1e-5)]
    warned = [w.value for w in at.warning if "may lie beyond the grid" in w.value]
    assert bool(warned) == bool(at_edge), (best, warned)
    if model == "SparseSBLR":
        assert at.session_state["log_lam"] == pytest.approx(math.log10(best["lam"]))
        assert at.query_params["lam"] == f"{best['lam']:.4g}"
    else:
        assert at.session_state["log_lam"] == -3.0  # untouched

    message = texts(at.success)
    assert f"{model}, inner 5-fold CV: validation Micro-F1" in message  # the default metric
    assert f"γ = {fmt_value(best['gamma'])}" in message  # as the sliders write it
    assert ("λ = " in message) == (model == "SparseSBLR")
    if model == "SparseSBLR":
        assert f"λ = {fmt_value(best['lam'])}" in message
    # The metrics above were recomputed with the tuned values, and the message beside the
    # button (where the page stays scrolled) gives the new headline and the one before
    assert f"{model} with γ = {fmt_value(best['gamma'])}" in texts(at.markdown)
    label, value = at.metric[0].label.rstrip(" ↑↓"), at.metric[0].value
    assert f"At the top of the page, hold-out 25%: {label} {value} " in message
    assert f"(before tuning {headline_before})" in message
    # the sidebar says where the values came from, and that they were not chosen for other data
    sidebar = texts(at.sidebar.caption)
    assert f"γ = {fmt_value(best['gamma'])}: from Tune." in sidebar
    if model == "SparseSBLR":
        assert f"λ = {fmt_value(best['lam'])}: from Tune." in sidebar
    at.session_state["sample"] = "wine"  # what the home page's sample choice sets
    at.run()
    assert "set by Tune on other data: it was not chosen for this one" in texts(at.sidebar.caption)


@pytest.mark.parametrize(
    ("scheme", "cv", "rule"),
    [
        ("inner 5-fold CV, one-SE λ (sparser)", 5, "one_se"),
        ("one 10% validation split (the paper's)", None, "best"),
    ],
)
def test_tune_selection_schemes_match_the_library(scheme, cv, rule):
    """Oracle: sblr.tuning.tune on the hold-out split's training rows with the same scheme."""
    from sblr.evaluation import make_splits
    from sblr.models import make_model
    from sblr.tuning import PAPER_GRID, tune

    ds = load_sample("planted")
    at = goto(start(), "pages/model.py")
    at.radio(key="tune_scheme").set_value(scheme)
    at.run()
    at.button(key="tune").click()
    at.run()
    assert_clean(at)
    *_, stored_scheme, result = at.session_state["tuning_result"]
    ((train, _),) = make_splits(ds.y, scheme="holdout", test_size=0.25)
    expected = tune(
        make_model("SparseSBLR"),
        ds.X[train],
        ds.y[train],
        gammas=PAPER_GRID,
        lams=PAPER_GRID,
        cv=cv,
        rule=rule,
    )
    assert stored_scheme == scheme
    assert result.best_params == expected.best_params
    assert at.session_state["log_lam"] == pytest.approx(math.log10(expected.best_params["lam"]))


# ----------------------------------------------------------------------------- 5. URL state
def test_url_holds_the_settings():
    at = start()
    assert at.query_params == {
        "sample": "planted",
        "model": "SparseSBLR",
        "gamma": "scale",
        "lam": "0.001",
        "k": "0",
    }
    widget(at.sidebar.selectbox, "Class k").set_value(3)
    at.selectbox(key="model").set_value("SBLR")
    at.run()
    assert at.query_params["k"] == "3"
    assert at.query_params["model"] == "SBLR"
    at.radio(key="sample_choice").set_value("wine")
    at.run()
    assert at.query_params["sample"] == "wine"
    # planted's class 3 means nothing in wine: wine starts on its most frequent class
    wine_counts = np.bincount(np.unique(load_sample("wine").y, return_inverse=True)[1])
    assert at.query_params["k"] == str(int(np.argmax(wine_counts)))


def test_url_restores_the_settings():
    query = {"sample": "wine", "model": "SBLR", "gamma": "0.1", "lam": "0.01", "k": "2"}
    at = start(query)
    assert sidebar_data(at) == "**Data:** wine · 178 × 13 · 3 classes"
    assert at.radio(key="sample_choice").value == "wine"
    assert at.selectbox(key="model").value == "SBLR"
    assert at.toggle(key="gamma_is_scale").value is False
    assert at.select_slider(key="log_gamma").value == pytest.approx(-1.0)
    assert at.select_slider(key="log_lam").value == pytest.approx(-2.0)
    assert widget(at.sidebar.selectbox, "Class k").value == 2
    assert at.query_params == query
    goto(at, "pages/contributions.py")
    assert visible(at.title[0].value) == "Class contributions to “cultivar_3”"


def test_url_restores_class_of_planted():
    at = start({"k": "3", "lam": "1"})
    assert widget(at.sidebar.selectbox, "Class k").value == 3
    assert at.select_slider(key="log_lam").value == pytest.approx(0.0)
    goto(at, "pages/path.py")
    assert at.title[0].value == "Regularization path of “thunder”"


def test_bad_url_values_fall_back_to_defaults():
    query = {"sample": "nope", "model": "GPT", "gamma": "-1", "lam": "abc", "k": "99"}
    at = start(query)
    assert sidebar_data(at) == "**Data:** planted · 500 × 8 · 7 labels"
    assert at.query_params == {
        "sample": "planted",
        "model": "SparseSBLR",
        "gamma": "scale",
        "lam": "0.0001",  # the default: a bad lam= is not the pinned one
        "k": "0",
    }
    assert "λ = " not in texts(at.sidebar.caption)  # the default goes without saying
    assert "It starts at the default, 1e-4" in at.select_slider(key="log_lam").help


def test_upload_keeps_data_out_of_the_url():
    at = start({"sample": "wine", "model": "SML"})
    upload(at, "weather.csv", (SAMPLE_DIR / "planted.csv").read_bytes())
    at.radio(key="upload_task").set_value("multi-label: several 0/1 label columns")
    at.run()
    widget(at.multiselect, "Label columns (0/1)").set_value(PLANTED_LABELS)
    at.run()
    click_load(at)
    assert_clean(at)
    link_id(at)  # the upload's id, not its data
    settings = {k: v for k, v in at.query_params.items() if k != "data"}
    assert settings == {"model": "SML", "gamma": "scale", "lam": "0.001", "k": "0"}
    # Back to a sample: it returns to the URL.
    # "Use this sample instead of my upload" (wine is still chosen)
    widget(at.button, "Use this sample instead of my upload").click()
    at.run()
    assert_clean(at)
    assert sidebar_data(at) == "**Data:** wine · 178 × 13 · 3 classes"
    assert at.query_params["sample"] == "wine"


# ----------------------------------------------------------------------------- 6. pages
def test_contributions_table_sorted_and_downloadable(downloads):
    at = start({"k": "2"})  # rain
    goto(at, "pages/contributions.py")
    assert at.title[0].value == "Class contributions to “rain”"
    table = at.dataframe[0].value
    assert list(table.columns) == [
        "class",
        "co-occurrence",
        "P(k | t)",
        "SBLR β̃",
        "SparseSBLR β̃",
        "SparseSBLR zero",
    ]
    assert table["co-occurrence"].is_monotonic_decreasing
    Y = load_sample("planted").label_matrix()
    C = cooccurrence(Y)
    expected = {name: C[2, t] for t, name in enumerate(PLANTED_LABELS)}
    assert dict(zip(table["class"], table["co-occurrence"], strict=True)) == expected
    shares = {name: C[2, t] / C[t, t] for t, name in enumerate(PLANTED_LABELS)}
    assert dict(zip(table["class"], table["P(k | t)"], strict=True)) == pytest.approx(shares)
    assert table["class"].iloc[0] == "rain"  # a class co-occurs most with itself
    assert table.loc[table["class"] == "thunder", "co-occurrence"].item() == Y[:, 3].sum()

    csv = pd.read_csv(io.BytesIO(download(at, downloads, "Download table (CSV)")))
    assert list(csv["class"]) == list(table["class"])
    np.testing.assert_allclose(csv["SparseSBLR beta_std"], table["SparseSBLR β̃"])
    assert {m.label for m in at.metric} == {
        "SBLR: ρ(|β̃|, co-occurrence)",
        "SBLR: ρ(|β̃|, P(k | t))",
        "SparseSBLR: ρ(|β̃|, co-occurrence)",
        "SparseSBLR: ρ(|β̃|, P(k | t))",
    }
    # in a narrow window the names column keeps a medium width at the left, so long class
    # names do not push the numbers out of sight (found at 800 px with 50-character names)
    config = json.loads(at.dataframe[0].proto.columns)
    assert config["class"]["width"] == "medium" and config["class"]["pinned"] is True
    # two metrics to a row (four cut their labels to "SparseSBL…"): one row per model
    rows = [
        [m.label.split(":")[0] for column in block.children.values() for m in column.get("metric")]
        for block in at.main.children.values()
        if block.type == "flex_container" and block.get("metric")
    ]
    assert rows == [["SBLR", "SBLR"], ["SparseSBLR", "SparseSBLR"]]


def test_explain_a_chosen_row():
    ds = load_sample("planted")
    at = start({"k": "2"})  # rain
    goto(at, "pages/explain.py")
    at.number_input(key="explain_row").set_value(3)
    at.run()
    assert_clean(at)
    truth = [n for n, t in zip(ds.class_names, ds.label_matrix()[3], strict=True) if t]
    assert f"True classes of this row: {', '.join(truth)}" in texts(at.caption)

    bars = chart(at, "probabilities")["data"][0]
    proba = dict(zip(bars["y"], array(bars["x"]).tolist(), strict=True))
    assert set(proba) == set(PLANTED_LABELS)
    assert all(0.0 <= p <= 1.0 for p in proba.values())
    heading = texts(at.subheader)
    assert f"Why π = {proba['rain']:.3f} for “rain”" in heading

    fig = chart(at, "waterfall")
    (trace,) = fig["data"]
    steps = array(trace["y"] if trace.get("orientation") != "h" else trace["x"]).astype(float)
    measures = list(trace["measure"])
    assert measures[-1] == "total"
    logit = float(re.search(r"logit of rain = (-?[\d.]+)", fig["layout"]["title"]["text"])[1])
    assert steps[:-1].sum() == pytest.approx(logit, abs=2e-3)
    assert 1 / (1 + math.exp(-logit)) == pytest.approx(proba["rain"], abs=2e-3)


def test_path_marks_the_current_lambda():
    at = start({"lam": "0.01"})
    goto(at, "pages/path.py")
    fig = chart(at, "path")
    assert sorted(trace["name"] for trace in fig["data"]) == sorted(PLANTED_LABELS)
    dashed = [s for s in fig["layout"]["shapes"] if s.get("line", {}).get("dash") == "dash"]
    assert [s["x0"] for s in dashed] == [pytest.approx(0.01)]
    assert "Non-zero coefficients: 0 at λ = 100" in texts(at.caption)


def test_wine_model_page_metrics_and_confusion_matrix():
    at = start({"sample": "wine"})
    goto(at, "pages/model.py")
    shown = metrics(at)
    assert set(shown) == {"Accuracy ↑", "Macro-F1 ↑"}
    cm = array(chart(at, "confusion")["data"][0]["z"])
    assert cm.shape == (3, 3)
    # Hold-out: accuracy is the confusion matrix's diagonal share of the test rows.
    assert float(shown["Accuracy ↑"]) == pytest.approx(np.trace(cm) / cm.sum(), abs=5e-4)
    assert 0 < cm.sum() < 178

    import sblr.evaluation

    fits = []
    original = sblr.evaluation.fit_fold

    def counted(estimator, *args, **kwargs):
        from sblr.baselines import FrequencyClassifier, OneVsRestLRClassifier

        # the yardsticks are not the model
        if not isinstance(estimator, (FrequencyClassifier, OneVsRestLRClassifier)):
            fits.append(1)
        return original(estimator, *args, **kwargs)

    sblr.evaluation.fit_fold = counted
    try:
        at.radio(key="eval_scheme").set_value("k-fold cross-validation")
        at.run()
    finally:
        sblr.evaluation.fit_fold = original
    assert_clean(at)
    cm = array(chart(at, "confusion")["data"][0]["z"])
    assert cm.sum() == 178  # every row is a test row once
    # the spread beside the mean, said what it is in the help (as a delta it looked like a
    # change, with an arrow); the delta is the yardstick's score, without an arrow
    assert all(re.fullmatch(r"\d\.\d{3} ± \d\.\d{3}", m.value) for m in at.metric)
    assert all("sd over the 5 folds" in m.help for m in at.metric)
    assert all(re.match(r"LR \(tuned\): \d\.\d{3} · majority class: ", m.delta) for m in at.metric)
    assert all(m.proto.direction == m.proto.MetricDirection.NONE for m in at.metric)
    # scores and probabilities (threshold view) from one fit per fold, not two
    assert len(fits) == at.select_slider(key="eval_folds").value == 5


# ----------------------------------------------------------------------------- 7. review fixes
def test_single_label_column_is_refused_with_advice():
    at = upload_wine_as_cellar(start())
    csv = "a,b,lab\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(30))
    upload(at, "one.csv", csv.encode())
    at.radio(key="upload_task").set_value("multi-label: several 0/1 label columns")
    at.run()
    widget(at.multiselect, "Label columns (0/1)").set_value(["lab"])
    at.run()
    click_load(at)
    assert "needs at least two labels" in texts(at.error)
    assert sidebar_data(at) == "**Data:** cellar · 178 × 13 · 3 classes"


def test_tune_on_tiny_data_reports_instead_of_crashing():
    at = start()
    rows = "".join(f"{i},{(i * 7) % 5},{'ab'[i % 2]}\n" for i in range(12))
    upload(at, "tiny.csv", ("x,z,c\n" + rows).encode())
    widget(at.selectbox, "Target column").set_value("c")
    click_load(at)
    goto(at, "pages/model.py")
    at.button(key="tune").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Could not tune" in texts(at.error) and "at least 10" in texts(at.error)


def test_explained_training_row_uses_its_leave_one_out_evidence():
    at = start()
    goto(at, "pages/explain.py")
    assert "leave-one-out evidence" in texts(at.caption)


def test_large_upload_uses_approximate_evidence_and_says_so():
    """From AUTO_APPROX_ROWS rows on the sidebar says the evidence is approximated, and the
    models fitted on all rows really are (Nystroem); small data shows no such notice."""
    from sblr.similarity import AUTO_APPROX_ROWS

    at = start()
    assert not [i for i in at.sidebar.info if "Approximate evidence" in i.value]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(AUTO_APPROX_ROWS, 8)).round(3)
    cls = np.where(X[:, 0] + 0.3 * rng.normal(size=len(X)) > 0, "up", "down")
    body = "\n".join(",".join(map(str, x)) + f",{k}" for x, k in zip(X, cls, strict=True))
    upload(at, "big.csv", ("a,b,c,d,e,f,g,h,side\n" + body + "\n").encode())
    widget(at.selectbox, "Target column").set_value("side")
    click_load(at)
    assert_clean(at)
    notice = [i.value for i in at.sidebar.info if "Approximate evidence" in i.value]
    assert len(notice) == 1 and "20,000 rows" in notice[0] and "Nyström" in notice[0]
    goto(at, "pages/coefficients.py")
    (view,) = [w for w in at.radio if str(w.key).startswith("beta_view")]
    view.set_value("raw")  # the raw β of the approximate fit, as compared below
    at.run()
    assert [i for i in at.sidebar.info if "Approximate evidence" in i.value]
    # the β drawn are those of the Nystroem model, not of the exact one
    shown = betas(at)["SparseSBLR, λ = 1e-3"]
    nystroem = SparseSBLRClassifier(lam=1e-3, approx="nystroem").fit(X, cls)
    exact = SparseSBLRClassifier(lam=1e-3, approx=None).fit(X, cls)
    np.testing.assert_allclose(shown, nystroem.coef_, rtol=1e-6)  # plotly sends float32
    assert np.abs(shown - exact.coef_).max() > 0.05
    assert "approximate evidence (Nyström" in texts(at.caption)


@pytest.mark.parametrize("sample", ["planted", "wine"])
def test_gamma_scale_shows_its_value_and_leaving_it_starts_near_it(sample):
    """'γ = scale' is a number the user never saw, and turning it off jumped to the slider's
    γ = 1 (on genbase, 100 times the scale γ): the sidebar states the value, and the slider
    starts at the grid point nearest to it."""
    ds = load_sample(sample)
    X = np.asarray(ds.X, dtype=float)
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    scaled = np.where(hi > lo, 2 * (X - lo) / span - 1, 0.0)  # [-1, 1], constant columns 0
    by_hand = 1.0 / (X.shape[1] * scaled.var())
    grid = np.arange(-5.0, 2.0001, 0.25)  # the slider's points, 1e-5 ... 1e2
    nearest = float(grid[np.argmin(np.abs(grid - math.log10(by_hand)))])
    at = start({"sample": sample, "gamma": "100"})  # the slider's own γ far from it
    at.toggle(key="gamma_is_scale").set_value(True)
    at.run()
    captions = texts(at.sidebar.caption)
    assert f"γ = scale is {by_hand:.3g} on this data;" in captions
    # the slider shows the grid point of the γ in use, not one not in use
    assert at.select_slider(key="log_gamma").value == pytest.approx(nearest)
    at.toggle(key="gamma_is_scale").set_value(False)
    at.run()
    assert_clean(at)
    assert at.select_slider(key="log_gamma").value == pytest.approx(nearest)
    assert float(at.query_params["gamma"]) == pytest.approx(10**nearest, rel=1e-3)
    assert "γ = scale is" not in texts(at.sidebar.caption)


def test_the_zero_count_advises_the_way_that_changes_it():
    """At a λ where every β is zero the page said 'raise λ for more' (found on public data)."""
    at = start({"sample": "wine", "lam": "100"})
    goto(at, "pages/coefficients.py")
    caption = texts(at.caption)
    assert "9 of 9 SparseSBLR coefficients are exactly zero at λ = 100: no class's evidence " in (
        caption
    )
    assert "lower λ in the sidebar to let classes in" in caption
    assert "raise λ" not in caption
    at.select_slider(key="log_lam").set_value(-3.0)
    at.run()
    match = re.search(
        r"(\d+) of 9 SparseSBLR coefficients are exactly zero at λ = 1e-3: ", texts(at.caption)
    )
    assert match and int(match.group(1)) < 9
    assert "raise λ in the sidebar for more zeros, lower it for fewer." in texts(at.caption)


def test_an_id_column_gets_a_note_and_can_be_left_out_also_through_the_link():
    """A UCI-style file sorted by class with a row-number column: the column predicted the
    class (glass: 91% hold-out accuracy with it, 63% without) and the upload form had no way
    to leave it out."""
    rng = np.random.default_rng(0)
    classes = np.repeat(["a", "b", "c"], 20)  # sorted by class
    X = rng.normal(size=(60, 3))
    rows = "".join(
        f"{i + 1},{x[0]:.4f},{x[1]:.4f},{x[2]:.4f},{c}\n"
        for i, (x, c) in enumerate(zip(X, classes, strict=True))
    )
    data = ("row,f1,f2,f3,kind\n" + rows).encode()
    at = start()
    load_upload(at, "sorted.csv", data, target="kind")
    assert_clean(at)
    assert sidebar_data(at) == "**Data:** sorted · 60 × 4 · 3 classes"
    notes = texts(at.markdown) + texts(at.caption) + texts(at.info) + texts(at.warning)
    assert "'row' hold a different whole number on every row, in order" in notes
    upload(at, "sorted.csv", data)
    keyed(at.selectbox, "upload_target").set_value("kind")
    keyed(at.multiselect, "upload_drop").set_value(["row"])
    click_load(at)
    assert_clean(at)
    assert sidebar_data(at) == "**Data:** sorted · 60 × 3 · 3 classes"
    assert at.session_state["upload"]["dataset"].feature_names == ["f1", "f2", "f3"]
    # the link brings back the data with the column left out
    again = start({"data": link_id(at)})
    assert_clean(again)
    assert sidebar_data(again) == "**Data:** sorted · 60 × 3 · 3 classes"


def test_tuning_says_when_its_choice_is_at_an_end_of_the_grid(monkeypatch):
    """Found on public data: Tune chose λ = 1e-5, the grid's smallest, without a word."""
    import sblr.tuning

    real = sblr.tuning.tune

    def only_the_largest_gamma(estimator, X, y, *, gammas, lams, **kwargs):
        return real(estimator, X, y, gammas=(1e2,), lams=lams, **kwargs)

    monkeypatch.setattr(sblr.tuning, "tune", only_the_largest_gamma)
    at = goto(start({"model": "SML"}), "pages/model.py")
    at.button(key="tune").click()
    at.run()
    assert_clean(at)
    (warned,) = [w.value for w in at.warning if "may lie beyond the grid" in w.value]
    assert warned.startswith("γ = 100 is the grid's largest")


def test_sblr_verdicts_get_no_colour_where_its_coefficients_are_not_identifiable():
    """A walkthrough found SBLR's green 'supported' badge beside the warning that its single
    coefficients are not identifiable. On planted (collinear evidence: the warning is shown)
    frost's SBLR verdicts are 'contradicted': grey, not red; the caption says that one test
    in twenty comes out by chance."""
    from streamlit.proto.Metric_pb2 import Metric

    at = start({"k": "4"})  # frost
    goto(at, "pages/contributions.py")
    assert any("Read SBLR's verdicts with care" in w.value for w in at.warning)
    sblr = [m for m in at.metric if m.label.startswith("SBLR:")]
    assert [m.proto.delta for m in sblr] == ["contradicted", "contradicted"]
    assert all(m.proto.color == Metric.MetricColor.GRAY for m in sblr)
    assert "about one test in twenty" in texts(at.caption)
