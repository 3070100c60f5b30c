"""Using the model in the dashboard (issue #26): evaluation on a supplied test file. Oracle:
the model fitted here on every training row, scored with sblr.metrics on the test rows."""

from __future__ import annotations

import html
import io
import re

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import SAMPLE_DIR, goto, keyed, load_multilabel_upload, rerun, start

from sblr import SparseSBLRClassifier, load_dataset
from sblr.display import fmt_value
from sblr.metrics import average_precision, hamming_loss, micro_f1

pytestmark = [
    pytest.mark.usefixtures("navigation_mode", "private_share_store"),
    pytest.mark.slow,
]

LABELS = ["daylight", "birdsong", "rain", "thunder", "frost", "spring_tide", "noise"]


def _csv(frame):
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode()


def test_a_supplied_test_file_is_scored_like_the_library_does():
    frame = pd.read_csv(SAMPLE_DIR / "planted.csv")
    train_bytes, test_bytes = _csv(frame.iloc[:350]), _csv(frame.iloc[350:, ::-1])
    at = load_multilabel_upload(start(), "train.csv", train_bytes, LABELS)
    goto(at, "pages/model.py")
    at.radio(key="eval_scheme").set_value("Supplied test file")
    rerun(at)
    assert "Upload the test file" in " ".join(i.value for i in at.info)
    keyed(at.get("file_uploader"), "eval_test_upload").set_value(
        ("test.csv", test_bytes, "text/csv")
    )
    rerun(at)
    train = load_dataset(train_bytes, name="train.csv", target=LABELS)
    test = load_dataset(test_bytes, name="test.csv", like=train)
    model = SparseSBLRClassifier(lam=1e-3).fit(train.X, train.y)
    pred, scores = model.predict(test.X), model.decision_function(test.X)
    shown = {}
    for m in at.metric:
        shown.setdefault(m.label, m.value)
    assert shown["Hamming loss ↓"] == f"{hamming_loss(test.y, pred):.3f}"
    assert shown["Micro-F1 ↑"] == f"{micro_f1(test.y, pred):.3f}"
    assert shown["Average precision ↑"] == f"{average_precision(test.y, scores):.3f}"
    empty = int((pred.sum(axis=1) == 0).sum())
    assert shown["Rows with no label"] == f"{empty:,} of 150"
    # the threshold and per-class views work on the test rows
    table = [d for d in at.dataframe if "precision" in d.value.columns][0].value
    np.testing.assert_array_equal(table["support"], test.y.sum(axis=0))
    assert "scored on the 150 rows of test" in " ".join(c.value for c in at.caption)
    # one test file: no "held-out rows", no fold, no spread (issue #46, item 13)
    words = " ".join(e.value for e in (*at.caption, *at.markdown, *at.info, *at.warning))
    assert "150 held-out rows" not in words and "each fold" not in words, words
    assert "SparseSBLR predicts no label for 17 of the 150 rows of the test file" in words
    (more,) = [d.value for d in at.dataframe if "yardstick_rule" in d.value.columns]
    assert "std" not in more.columns
    assert not [d for d in at.dataframe if "fold" in [*d.value.columns, d.value.index.name]]


def test_tuning_beside_a_test_file_names_it_as_text():
    """The message beside Tune names the evaluation; with a supplied test file that is the
    file's name, which a stranger chooses: it is shown as text, never as an image or a link.
    Oracle: the message rendered by a Markdown renderer."""
    from apptest_helpers import rendered

    frame = pd.read_csv(SAMPLE_DIR / "planted.csv")
    hostile = "[site](javascript:x)**b**.csv"
    at = load_multilabel_upload(
        start({"model": "SML"}), "train.csv", _csv(frame.iloc[:350]), LABELS
    )
    goto(at, "pages/model.py")
    at.radio(key="eval_scheme").set_value("Supplied test file")
    rerun(at)
    keyed(at.get("file_uploader"), "eval_test_upload").set_value(
        (hostile, _csv(frame.iloc[350:]), "text/csv")
    )
    rerun(at)
    at.button(key="tune").click()
    at.run()
    (message,) = [m.value for m in at.success if "At the top of the page" in m.value]
    shown = rendered(message)  # asserts no image, no link
    assert "test file [site](javascript:x)**b**: " in shown, shown


def test_a_test_file_without_labels_or_with_other_columns_says_why():
    at = goto(start({"sample": "wine"}), "pages/model.py")
    at.radio(key="eval_scheme").set_value("Supplied test file")
    rerun(at)
    wine = pd.read_csv(SAMPLE_DIR / "wine.csv")
    keyed(at.get("file_uploader"), "eval_test_upload").set_value(
        ("rows.csv", _csv(wine.drop(columns="class")), "text/csv")
    )
    at.run()
    assert "has none of the label columns" in " ".join(e.value for e in at.error)
    keyed(at.get("file_uploader"), "eval_test_upload").set_value(
        ("other.csv", _csv(wine.drop(columns="alcohol")), "text/csv")
    )
    at.run()
    errors = " ".join(e.value for e in at.error)
    assert "lacks 1 feature column" in errors and "alcohol" in errors


# ----------------------------------------------------------------------------- predict
def test_predict_a_file_with_the_sidebars_model_then_with_its_downloaded_file(downloads):
    """Rows without labels, columns in another order: the sidebar's model predicts them as
    the library's fitted model does; its downloaded file, opened in a fresh session, gives
    the same table."""
    from apptest_helpers import download

    from sblr.modelfile import load_model

    wine = pd.read_csv(SAMPLE_DIR / "wine.csv")
    rows = _csv(wine.drop(columns="class")[list(reversed(wine.columns[:-1]))].iloc[:20])
    ds = load_dataset(SAMPLE_DIR / "wine.csv", target="class")
    model = SparseSBLRClassifier(lam=1e-3).fit(ds.X, ds.y)
    expected = model.predict_proba(ds.X[:20])

    at = goto(start({"sample": "wine"}), "pages/predict.py")
    keyed(at.get("file_uploader"), "predict_rows_upload").set_value(("new.csv", rows, "text/csv"))
    rerun(at)
    table = [d.value for d in at.dataframe if "predicted" in d.value.columns][0]
    np.testing.assert_allclose(table[[f"p({c})" for c in ds.class_names]], expected, atol=1e-9)
    assert list(table["predicted"]) == [str(v) for v in model.predict(ds.X[:20])]
    assert list(table["row"]) == list(range(20))  # numbered from 0, as Explain's rows
    assert list(table.columns[:3]) == ["row", "predicted", "evidence that counted most"]
    model_file = download(at, downloads, "Download this model (skops file)")
    saved = load_model(model_file)
    np.testing.assert_allclose(saved.estimator.predict_proba(ds.X[:20]), expected, atol=1e-12)

    fresh = goto(start({"sample": "planted"}), "pages/predict.py")  # other data in use
    fresh.radio(key="predict_source").set_value("file")
    rerun(fresh)
    keyed(fresh.get("file_uploader"), "predict_model_upload").set_value(
        ("wine.skops", model_file, "application/octet-stream")
    )
    fresh.run()
    assert "features are not those of the data in use" in " ".join(w.value for w in fresh.warning)
    # the file's own settings and size, and that the sidebar's are not the ones in use
    summary = html.unescape(" ".join(c.value for c in fresh.caption))
    assert f"γ = {fmt_value(model.gamma_)}, λ = 1e-3" in summary, summary
    assert "fitted on wine (178 rows, 13 features, 3 classes)" in summary
    assert "The sidebar's model settings are not in use here." in summary
    # when the file was written, as the file says (oracle: the file's own info)
    assert f"written by sblr {saved.info['sblr_version']} on {saved.info['saved_at']}." in summary
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", saved.info["saved_at"])
    # the sidebar says so above its model controls, where a reader looks
    assert "using the model file's own model" in " ".join(i.value for i in fresh.sidebar.info)
    keyed(fresh.get("file_uploader"), "predict_rows_upload").set_value(
        ("new.csv", rows, "text/csv")
    )
    fresh.run()
    again = [d.value for d in fresh.dataframe if "predicted" in d.value.columns][0]
    pd.testing.assert_frame_equal(again, table)


def test_a_pickle_offered_as_a_model_file_is_refused(tmp_path):
    import pickle

    marker = tmp_path / "ran"

    class Touch:
        def __reduce__(self):
            return (marker.touch, ())

    at = goto(start(), "pages/predict.py")
    at.radio(key="predict_source").set_value("file")
    rerun(at)
    keyed(at.get("file_uploader"), "predict_model_upload").set_value(
        ("model.skops", pickle.dumps(Touch()), "application/octet-stream")
    )
    at.run()
    assert "pickle" in " ".join(e.value for e in at.error)
    assert not marker.exists()


def test_a_model_file_breaking_a_rule_is_refused_in_one_sentence():
    """Issue #44: a 2-D cut in a model file was a traceback at the first prediction (the
    generic box); the page shows the rule it breaks, before any rows are asked for."""
    import skops.io as sio

    from sblr.modelfile import model_bytes

    ds = load_dataset(SAMPLE_DIR / "planted.arff")
    data = model_bytes(SparseSBLRClassifier(gamma=1.0, lam=1e-3).fit(ds.X, ds.y), dataset=ds)
    content = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    content["estimator"].threshold_ = content["estimator"].threshold_[None]
    at = goto(start(), "pages/predict.py")
    at.radio(key="predict_source").set_value("file")
    rerun(at)
    keyed(at.get("file_uploader"), "predict_model_upload").set_value(
        ("model.skops", sio.dumps(content), "application/octet-stream")
    )
    at.run()
    assert not at.exception
    shown = html.unescape(" ".join(e.value for e in at.error))  # the page escapes Markdown
    assert "Could not open model.skops" in shown and "threshold_ must be a 1-D array" in shown


def test_the_result_list_keeps_every_evaluation_of_the_session(downloads):
    """Weka's result list: each evaluation (model, γ, λ, scheme, data, metrics) is kept, side
    by side, and downloadable. Oracle: the metrics the page showed at each setting."""
    from apptest_helpers import download

    at = goto(start({"sample": "wine"}), "pages/model.py")
    shown = []
    for log_lam in (-3.0, -2.0):
        at.select_slider(key="log_lam").set_value(log_lam)
        rerun(at)
        shown.append({m.label: m.value for m in at.metric}["Accuracy ↑"])
    rerun(at)  # the same settings again: not listed twice
    listed = [d.value for d in at.dataframe if "evaluation" in d.value.columns][0]
    assert list(listed["λ"]) == ["1e-3", "1e-2"]
    assert list(listed["Accuracy ↑"]) == shown  # as the metric showed it
    csv = pd.read_csv(io.BytesIO(download(at, downloads, "Download the result list (CSV)")))
    assert len(csv) == 2 and list(csv["evaluation"]) == ["hold-out 25%"] * 2
    # plain headers (no arrows), γ's number beside "scale", a file name that names the data
    assert "accuracy" in csv.columns and not any("↑" in c or "↓" in c for c in csv.columns)
    from sblr import SparseSBLRClassifier

    scale = SparseSBLRClassifier().fit(*_wine_xy()).gamma_
    assert csv["gamma"].tolist() == ["scale"] * 2
    np.testing.assert_allclose(csv["gamma_value"], scale)
    # restore the first setting: the sidebar goes back to λ = 1e-3 and says where it came from
    keyed(at.selectbox, "result_restore_choice").set_value(0)
    at.button(key="result_restore").click()
    at.run()
    at.run()
    assert at.select_slider(key="log_lam").value == -3.0
    assert "λ = 1e-3: from the result list." in " ".join(c.value for c in at.sidebar.caption)


def _wine_xy():
    ds = load_dataset(SAMPLE_DIR / "wine.csv", target="class")
    return ds.X, ds.y


@pytest.mark.parametrize("rows", [31, 200])  # more rows than allowed / more lines than 4 × that
def test_rows_to_predict_and_test_files_have_the_uploads_row_limit(monkeypatch, rows):
    """Issue #35 row 5: 1,000,000 rows on Predict a file took 80 CPU-s and 1.2 GB; now the
    upload's limits (bytes, lines before parsing, rows before parsing too: issue #44 item 9,
    790,000 rows within the lines' margin took 3.5 GB) hold for every upload path, and the
    parser never sees a file over them. The limit is lowered to 30 rows here so the files
    stay small."""
    import sblr.io._csv as csv_reader
    from pages._shared import data as uploads

    monkeypatch.setattr(uploads, "MAX_ROWS", 30)
    wine = pd.read_csv(SAMPLE_DIR / "wine.csv")
    big = _csv(pd.concat([wine.drop(columns="class")] * 2).iloc[:rows])
    at = goto(start({"sample": "wine"}), "pages/predict.py")
    parsed, parse = [], csv_reader.parse_columns

    def spy(text, *args, **kwargs):
        parsed.append(text.count("\n"))
        return parse(text, *args, **kwargs)

    monkeypatch.setattr(csv_reader, "parse_columns", spy)
    keyed(at.get("file_uploader"), "predict_rows_upload").set_value(("big.csv", big, "text/csv"))
    at.run()
    errors = html.unescape(" ".join(e.value for e in at.error))
    assert re.search(r"(more than|far more than the) 30 rows", errors), errors
    assert not [d for d in at.dataframe if "predicted" in d.value.columns]
    # the same for a supplied test file on Model & metrics
    goto(at, "pages/model.py")
    at.radio(key="eval_scheme").set_value("Supplied test file")
    at.run()
    labelled = _csv(pd.concat([wine] * 2).iloc[:rows])
    keyed(at.get("file_uploader"), "eval_test_upload").set_value(("t.csv", labelled, "text/csv"))
    at.run()
    errors = html.unescape(" ".join(e.value for e in at.error))
    assert re.search(r"(more than|far more than the) 30 rows", errors), errors
    assert not [n for n in parsed if n > 30], parsed  # refused before it was parsed
