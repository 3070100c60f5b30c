"""The first look on real-shaped data (issue #24): what a user meets before scrolling,
with the defaults, on many rare labels, a class with no test rows and a model that
predicts (almost) nothing. Driven with AppTest; the data are generated here."""

from __future__ import annotations

import html
import io

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import chart, click_load, goto, keyed, rerun, start, upload, widget

from sblr import SparseSBLRClassifier
from sblr.evaluation import make_splits

pytestmark = [pytest.mark.usefixtures("navigation_mode"), pytest.mark.slow]

N_ROWS, N_LABELS = 240, 19


@pytest.fixture(autouse=True)
def private_share_store(tmp_path, monkeypatch):
    import streamlit as st

    monkeypatch.setenv("SBLR_SHARE_DIR", str(tmp_path / "shared"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def rare_labels(seed=0):
    """19 labels, most rare; label 0 has its two positives in training rows only (the
    hold-out split of a multi-label file is random in the row count alone), and label 5 is
    the most frequent. Returns (csv bytes, X, Y, label names, test rows)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N_ROWS, 6))
    W = rng.normal(size=(6, N_LABELS))
    scores = X @ W + rng.normal(scale=0.5, size=(N_ROWS, N_LABELS))
    rate = np.full(N_LABELS, 0.06)
    rate[5] = 0.4
    cut = np.array([np.quantile(scores[:, j], 1 - rate[j]) for j in range(N_LABELS)])
    Y = (scores > cut).astype(int)
    ((train, test),) = make_splits(np.zeros((N_ROWS, 2)), scheme="holdout", test_size=0.25)
    Y[:, 0] = 0
    Y[train[:2], 0] = 1
    names = [f"tag_{j:02d}" for j in range(N_LABELS)]
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    frame[names] = Y
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode(), X, Y, names, test


def load_rare_labels():
    data, X, Y, names, test = rare_labels()
    at = start()
    upload(at, "tags.csv", data)
    at.radio(key="upload_task").set_value("multi-label: several 0/1 label columns")
    at.run()
    widget(at.multiselect, "Label columns (0/1)").set_value(names)
    at.run()
    click_load(at)
    return at, X, Y, names, test


def _no_nan_or_none(at):
    shown = " ".join(
        [m.label + " " + str(m.value) + " " + str(m.delta) for m in at.metric]
        + [e.value for e in (*at.markdown, *at.caption, *at.info, *at.warning, *at.subheader)]
    )
    for word in ("nan", "None"):
        assert f" {word}" not in html.unescape(shown), shown


def test_model_page_tells_an_empty_model_from_a_good_one_and_starts_on_a_class_it_can_show():
    at, X, Y, names, test = load_rare_labels()
    # the sidebar starts on the most frequent class, not on class 0 (no test row has it)
    assert keyed(at.sidebar.selectbox, "target_class").value == 5
    goto(at, "pages/model.py")
    shown = {}
    for m in at.metric:  # the top rows (the threshold's row below repeats some labels)
        shown.setdefault(m.label, m)
    top = ["Micro-F1 ↑", "Macro-F1 ↑", "Rows with no label"]
    assert [m.label for m in at.metric][:3] == top
    assert {"Hamming loss ↓", "Average precision ↑", "Ranking loss ↓"} <= set(shown)

    # oracle: the model fitted here on the hold-out split's training rows
    train = np.setdiff1d(np.arange(N_ROWS), test)
    model = SparseSBLRClassifier(lam=1e-3).fit(X[train], Y[train])
    empty = int((model.predict(X[test]).sum(axis=1) == 0).sum())
    assert shown["Rows with no label"].value == f"{empty:,} of {len(test):,}"
    # the yardstick: every label is rarer than half the rows, so it predicts nothing, and
    # its Hamming loss is the test rows' label density; micro-F1 0
    assert f"predict nothing: {Y[test].mean():.3f}" in shown["Hamming loss ↓"].delta
    assert "predict nothing: 0.000" in shown["Micro-F1 ↑"].delta
    assert "rank by frequency" in shown["Average precision ↑"].delta
    assert chart(at, "pr_curve")  # class 5 occurs in the test rows: its curve is drawn
    assert "nan" not in chart(at, "pr_curve")["layout"]["title"]["text"]
    _no_nan_or_none(at)

    # class 0 has no test row: one sentence why, and which class to choose instead
    widget(at.sidebar.selectbox, "Class k").set_value(0)
    rerun(at)
    info = html.unescape(" ".join(i.value for i in at.info))
    assert "No test row carries “tag_00”" in info and "“tag_05”" in info
    assert not [c for c in at.get("plotly_chart") if c.proto.id.endswith("-pr_curve")]
    _no_nan_or_none(at)
