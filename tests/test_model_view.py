"""The Model & metrics page's view (pages/_shared/views/model.py), called directly: no AppTest.

The oracle is independent of the dashboard's caches: the hold-out split's model fitted here
with the public estimator (its probabilities must be the view's), and every tile's number
recomputed with scikit-learn's metrics from the view's own held-out probabilities and cuts.
The page's AppTest tests (tests/test_teaching_pages.py, tests/test_use_model_pages.py, ...)
check that the page draws this view.
"""

from __future__ import annotations

import html
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    hamming_loss,
    label_ranking_average_precision_score,
    precision_recall_fscore_support,
)

from pages._shared import cache, long_jobs
from pages._shared.questions import Scheme, Spec
from pages._shared.state import Settings
from pages._shared.views import model as view
from sblr import SMLClassifier, SparseSBLRClassifier
from sblr.baselines import TUNED_LR, tuned_lr_classifier
from sblr.evaluation import make_splits
from sblr.io import Dataset

GAMMA, LAM = 1.0, 1e-3
HOLDOUT = Scheme("holdout", 0.25, 5)


@pytest.fixture(scope="module")
def sparse_holdout(planted):
    """The view's hold-out evaluation of SparseSBLR on planted, and the split's model fitted
    here on the same training rows."""
    spec = Spec.of("SparseSBLR", GAMMA, LAM)
    ((train, test),) = make_splits(planted.y, scheme="holdout", test_size=0.25)
    model = SparseSBLRClassifier(gamma=GAMMA, lam=LAM).fit(planted.X[train], planted.y[train])
    return spec, view.evaluate(planted, spec, HOLDOUT), model, test


def _tile(tiles, start):
    (found,) = [t for t in tiles if t.label.startswith(start)]
    return found


@pytest.mark.slow  # two SparseSBLR fits of the hold-out and all rows' decision (3 s)
def test_the_holdout_tiles_are_scikit_learns_numbers_of_the_held_out_decisions(
    planted, sparse_holdout
):
    spec, ev, model, test = sparse_holdout
    # the view's probabilities are those of the split's model fitted here
    np.testing.assert_allclose(ev.proba, model.predict_proba(planted.X[test]), atol=1e-6)
    np.testing.assert_array_equal(ev.truth, planted.y[test])
    decided = (ev.proba >= ev.cuts).astype(int)
    tiles = view.tiles(planted, ev)
    assert [t.label[:8] for t in tiles[:3]] == ["Micro-F1", "Macro-F1", "Rows wit"]
    micro = f1_score(ev.truth, decided, average="micro")
    assert _tile(tiles, "Micro-F1").value == f"{micro:.3f}"
    assert _tile(tiles, "Hamming loss").value == f"{hamming_loss(ev.truth, decided):.3f}"
    # Mulan's average precision skips rows with no or every label; scikit-learn's LRAP on
    # the other rows is the same number
    kept = (ev.truth.sum(axis=1) > 0) & (ev.truth.sum(axis=1) < planted.n_classes)
    ap = label_ranking_average_precision_score(ev.truth[kept], ev.proba[kept])
    assert _tile(tiles, "Average precision").value == f"{ap:.3f}"
    empty = _tile(tiles, "Rows with no label")
    assert empty.value == f"{int((decided.sum(axis=1) == 0).sum())} of {len(test)}"
    assert empty.beside.startswith(f"truth: {int((ev.truth.sum(axis=1) == 0).sum())}")
    # one split: no spread, and the yardstick's rule by metric
    assert "±" not in _tile(tiles, "Micro-F1").value
    assert "rank by frequency" in _tile(tiles, "Average precision").beside
    assert view.headline(planted, spec) == "**SparseSBLR** with γ = 1, λ = 1e-3 on **planted**"
    assert ev.name == "hold-out 25%" and ev.tag == "holdout-25%" and ev.one_split
    # the result list's row: the same numbers, the decision in words, the way back
    row = view.record(planted, Settings("SparseSBLR", GAMMA, LAM, 3), ev, "key")
    assert row["Micro-F1 ↑"] == pytest.approx(micro, abs=1e-12) and row["λ"] == "1e-3"
    assert row["rows with no label"] == empty.value and row["decision"].startswith("π ≥ ")
    assert row["_setting"] == ("key", "SparseSBLR", GAMMA, LAM)


@pytest.mark.slow  # as above (the fits are cached by the module's fixture)
def test_the_threshold_view_recomputes_every_decision_metric_at_the_users_cut(
    planted, sparse_holdout
):
    spec, ev, _, _ = sparse_holdout
    at = view.threshold_view(planted, spec, ev, 3, threshold=0.8)
    decided = (ev.proba >= 0.8).astype(int)
    values = {t.label: t.value for t in at.tiles}
    assert values["Micro-F1 ↑"] == f"{f1_score(ev.truth, decided, average='micro'):.3f}"
    assert values["Hamming loss ↓"] == f"{hamming_loss(ev.truth, decided):.3f}"
    assert all(t.beside.endswith("vs the model's cut") for t in at.tiles)
    precision, recall, *_ = precision_recall_fscore_support(ev.truth, decided, zero_division=0)
    thunder = at.report.set_index("class").loc["thunder"]
    assert thunder["precision"] == pytest.approx(precision[3]) and thunder["recall"] == (
        pytest.approx(recall[3])
    )
    assert at.curve["threshold"] == 0.8 and at.curve["class_name"] == "thunder"
    carried = int(ev.truth[:, 3].sum())
    assert f"“thunder”: {carried} of {len(ev.truth)} test rows carry it" in at.curve_caption
    # a cut above every probability predicts nothing, and the page says so
    assert not (ev.proba >= 1.0).any()
    nothing = view.threshold_view(planted, spec, ev, 3, threshold=1.0)
    assert nothing.warning.startswith(
        f"At this threshold SparseSBLR predicts no label for any of the {len(ev.truth)} "
        "held-out rows"
    )
    assert "or λ (or let Tune choose it)" in nothing.warning
    # the model's own cuts: no change to show
    own = view.threshold_view(planted, spec, ev, 3)
    assert all(t.beside is None and t.colour == "off" for t in own.tiles)


def test_multiclass_kfold_tiles_are_means_and_sds_and_the_report_decides_by_the_largest_pi(
    wine, monkeypatch
):
    monkeypatch.setattr(long_jobs, "LR_AUTO_SECONDS", 0.0)  # LR is not this test's (1 s)
    spec = Spec.of("SML", GAMMA)
    ev = view.evaluate(wine, spec, Scheme("kfold", 0.25, 3))
    assert ev.kfold and ev.folds == 3 and ev.name == "3-fold CV"
    # every row held out once: the view's probabilities are those of each fold's SML
    y = wine.class_codes()
    P = np.zeros((wine.n_samples, wine.n_classes))
    for train, test in make_splits(wine.y, scheme="kfold", n_splits=3):
        P[test] = (
            SMLClassifier(gamma=GAMMA).fit(wine.X[train], wine.y[train]).predict_proba(wine.X[test])
        )
    order = np.argsort(
        np.concatenate([t for _, t in make_splits(wine.y, scheme="kfold", n_splits=3)])
    )
    np.testing.assert_allclose(ev.proba[order], P, atol=1e-9)
    np.testing.assert_array_equal(ev.truth[order], y)
    tiles = view.tiles(wine, ev)
    accuracy = _tile(tiles, "Accuracy")
    per_fold = [
        accuracy_score(y[test], P[test].argmax(axis=1))
        for _, test in make_splits(wine.y, scheme="kfold", n_splits=3)
    ]
    assert accuracy.value == f"{np.mean(per_fold):.3f} ± {np.std(per_fold):.3f}"
    assert "majority class" in accuracy.beside and "sd over the 3 folds" in accuracy.help
    at = view.threshold_view(wine, spec, ev, 1)
    assert at.tiles == [] and at.warning is None and at.curve["threshold"] is None
    precision, recall, f1, support = precision_recall_fscore_support(
        ev.truth, ev.proba.argmax(axis=1), zero_division=0
    )
    np.testing.assert_allclose(at.report["f1"].astype(float), f1)
    assert view.decision_caption(wine, spec, ev).startswith("Multi-class: the predicted class")


def test_tuned_view_says_the_choice_its_score_the_grids_edge_and_the_score_before():
    summary = pd.DataFrame(
        {"label": ["Micro-F1 ↑", "Hamming loss ↓"], "mean": [0.8123, 0.1]},
        index=["micro_f1", "hamming_loss"],
    )
    ev = SimpleNamespace(summary=summary, name="hold-out 25%")
    res = SimpleNamespace(
        metric="micro_f1",
        best_score=0.7779,
        best_params={"gamma": 100.0, "lam": 1e-4},
        scores=pd.DataFrame({"score": [0.7779]}),
    )
    tuned = view.tuned_view(
        ("SparseSBLR", 0.25, "inner 5-fold CV", res), ev, 0.3, ("Micro-F1 ↑", 0.75)
    )
    assert html.unescape(tuned.message) == (
        "SparseSBLR, inner 5-fold CV: validation Micro-F1 0.778 at γ = 100, λ = 1e-4; the "
        "sliders now show it. At the top of the page, hold-out 25%: Micro-F1 0.812 (before "
        "tuning 0.750)."
    )
    assert tuned.edges.startswith("γ = 100 is the grid's largest: the best value may lie")
    assert tuned.stale.startswith("The sliders were tuned on the training rows of a 25% hold-out")
    assert view.tuned_view(("SBLR", 0.25, "x", res), ev, 0.25).stale is None


def test_the_result_list_keeps_one_row_per_setting_and_offers_this_datas_to_restore():
    def row(i, data="planted", lam="1e-3"):
        return {
            "data": data, "model": "SparseSBLR", "γ": "1", "γ value": 1.0, "λ": lam,
            "evaluation": f"hold-out {i}%", "Micro-F1 ↑": 0.5 + i / 1000,
            "_setting": (f"key-{data}", "SparseSBLR", 1.0, 1e-3),
        }  # fmt: skip

    results = []
    for i in range(view.RESULT_LIST_MAX + 5):
        view.remember(results, row(i))
    view.remember(results, row(view.RESULT_LIST_MAX + 4))  # listed: not again
    assert len(results) == view.RESULT_LIST_MAX and results[0]["evaluation"] == "hold-out 5%"
    view.remember(results, row(99, data="wine", lam="–"))
    listed = view.result_list(results, "key-planted")
    assert list(listed.restorable)[:1] == [0] and len(listed.restorable) == view.RESULT_LIST_MAX - 1
    assert listed.restorable[0] == "1: SparseSBLR, γ = 1, λ = 1e-3 (hold-out 6%)"
    assert listed.table["Micro-F1 ↑"].iloc[0] == "0.506"
    assert {"gamma", "lambda", "micro_f1"} <= set(listed.plain.columns)
    assert listed.file_name == "result_list_of_2_data_sets.csv"


class _Upload:
    def __init__(self, name, data):
        self.name, self._data = name, data

    def getvalue(self):
        return self._data


def test_a_test_file_is_read_like_the_data_or_says_why_not(wine):
    test, why = view.test_file(wine, None)
    assert test is None and why == view.NO_TEST_FILE
    header = ",".join(wine.feature_names)
    test, why = view.test_file(
        wine, _Upload("rows.csv", f"{header}\n{','.join(['1'] * 13)}\n".encode())
    )
    assert test is None and html.unescape(why).startswith(
        "rows.csv has none of the label columns of wine"
    )


# ----------------------------------------------------------------------------- the LR yardstick
@pytest.fixture(scope="module")
def small(planted):
    """Planted's first 160 rows and 3 labels: a tuned LR of 3 × 26 fits (0.3 s)."""
    return Dataset(
        X=np.asarray(planted.X)[:160], y=np.asarray(planted.y)[:160, :3], task="multilabel",
        feature_names=list(planted.feature_names), class_names=list(planted.class_names[:3]),
        name="planted-small",
    )  # fmt: skip


@pytest.mark.slow  # 2 × 78 logistic regressions (1.1 s)
def test_the_lr_yardstick_is_the_tuned_lr_fitted_on_the_training_rows(small):
    """Oracle: sblr.baselines.tuned_lr_classifier fitted here on the hold-out split's training
    rows, its decisions scored with scikit-learn's metrics on the test rows."""
    scheme = Scheme("holdout", 0.25, 5)
    ((train, test),) = make_splits(small.y, scheme="holdout", test_size=0.25)
    lr, seconds = long_jobs.lr_yardstick_shown(small, scheme, quiet=True)
    oracle = tuned_lr_classifier().fit(small.X[train], small.y[train])
    decided = oracle.predict(small.X[test])
    assert lr.Cs == (oracle.C_,) and oracle.C_ in TUNED_LR["Cs"]
    assert lr.cuts == (pytest.approx(float(oracle.threshold_[0])),)
    micro = f1_score(small.y[test], decided, average="micro", zero_division=0)
    assert lr.summary.loc["micro_f1", "mean"] == pytest.approx(micro, abs=1e-12)
    assert lr.summary.loc["hamming_loss", "mean"] == pytest.approx(
        hamming_loss(small.y[test], decided), abs=1e-12
    )
    assert lr.empty == int((decided.sum(axis=1) == 0).sum())
    assert lr.label == f"LR (tuned C = {oracle.C_:g}, cut {oracle.threshold_[0]:.2f})"
    assert 0 < seconds <= long_jobs.LR_AUTO_SECONDS  # why it was computed without asking
    # the page's tiles and table name it
    ev = view.Evaluated(
        None, small.y[test], oracle.predict_proba(small.X[test]), np.full((len(test), 3), 0.5),
        lr.summary, lr, seconds, 1, "held-out rows", "hold-out 25%", "holdout-25%",
    )  # fmt: skip
    assert ev.lr_offer is None and view.lr_caption(small, ev).startswith(f"{lr.label}: ")


@pytest.mark.slow  # 2 × 78 logistic regressions (1.6 s)
def test_the_lr_yardstick_of_a_test_file_is_the_tuned_lr_fitted_on_every_row(small, planted):
    """Oracle: tuned_lr_classifier fitted here on every row of the data in use, scored on the
    test file's rows (here planted's rows 160-239)."""
    test = Dataset(
        X=np.asarray(planted.X)[160:240], y=np.asarray(planted.y)[160:240, :3], task="multilabel",
        feature_names=list(planted.feature_names), class_names=list(planted.class_names[:3]),
        name="planted-test",
    )  # fmt: skip
    lr, _ = long_jobs.lr_yardstick_shown(small, Scheme("all"), test, quiet=True)
    oracle = tuned_lr_classifier().fit(small.X, small.y)
    decided = oracle.predict(test.X)
    assert lr.Cs == (oracle.C_,)
    micro = f1_score(test.y, decided, average="micro", zero_division=0)
    assert lr.summary.loc["micro_f1", "mean"] == pytest.approx(micro, abs=1e-12)
    assert lr.empty == int((decided.sum(axis=1) == 0).sum())


def test_the_lr_yardstick_is_fitted_without_asking_only_within_the_budget(small, monkeypatch):
    """Above the budget the view gets the estimate and no yardstick (nothing fitted), and the
    page's button says the estimate; within it (or once anyone fitted it) the yardstick."""
    fits = []

    def fake(ds, scheme, test, progress):
        fits.append(scheme)
        return long_jobs.LRYardstick(pd.DataFrame({"mean": [0.5]}, ["micro_f1"]), 0, (1.0,), ())

    monkeypatch.setattr(long_jobs, "_fit_lr_yardstick", fake)
    scheme = Scheme("holdout", 0.4, 5)  # no other test's: nothing stored
    seconds = long_jobs.lr_yardstick_seconds(small, scheme)
    monkeypatch.setattr(long_jobs, "LR_AUTO_SECONDS", seconds * 0.99)
    assert long_jobs.lr_yardstick_shown(small, scheme) == (None, seconds) and fits == []
    ev = SimpleNamespace(lr_yard=None, lr_seconds=seconds)
    assert view.Evaluated.lr_offer.fget(ev) == (
        f"Fit the tuned LR yardstick (about {view.duration(seconds)})"
    )
    assert "fitted only when asked" in view.lr_caption(small, ev)
    monkeypatch.setattr(long_jobs, "LR_AUTO_SECONDS", seconds * 1.01)
    lr, _ = long_jobs.lr_yardstick_shown(small, scheme, quiet=True)
    assert lr.Cs == (1.0,) and lr.label == "LR (tuned C = 1)" and fits == [scheme]
    # once fitted (the button's work, by anyone) it is shown whatever the budget, not refitted
    monkeypatch.setattr(long_jobs, "LR_AUTO_SECONDS", 0.0)
    assert long_jobs.lr_yardstick_shown(small, scheme)[0] is lr and fits == [scheme]
    # the estimate grows with rows, features and labels: delicious' 983 labels take hours
    assert long_jobs.lr_yardstick_seconds(small, Scheme("kfold", 0.25, 5)) > seconds
    from sblr.baselines import tuned_lr_seconds_estimate

    assert tuned_lr_seconds_estimate(9690, 500, 983) > 3600


def test_the_model_view_the_report_and_the_lesson_ask_one_function_for_the_lr_yardstick():
    import inspect

    from pages._shared import lesson, report

    assert view.lr_yardstick_shown is lesson.lr_yardstick_shown is long_jobs.lr_yardstick_shown
    # the report imports it where it runs (it writes reports without Streamlit too)
    assert "lr_yardstick_shown(ds, HOLDOUT)" in inspect.getsource(report.dashboard_report)


def test_evaluation_progress_moves_within_the_one_fold_of_a_holdout(planted):
    """A hold-out is one fold: the progress goes through its evidence, its layer class by
    class and its cuts (delicious sat at 0 for 183 s), never backwards, before it ends."""
    calls = []
    spec = Spec.of("SBLR", 0.7)  # no other test's γ: fitted here
    cache.evaluation(planted, spec, HOLDOUT, progress=lambda f, text: calls.append((f, text)))
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    inside = [text for f, text in calls if 0 < f < 1]
    assert any("class evidence" in text for _, text in calls)
    classes = [t for t in inside if "SBLR's layer, class" in t]
    m = planted.n_classes  # classes 0 .. m done, then the cuts' 5 out-of-fold layer fits
    assert [t.rsplit("class ", 1)[1] for t in classes] == [f"{k} of {m}" for k in range(m + 1)]
    cuts = [t.rsplit("class fit ", 1)[1] for t in inside if "cuts" in t]
    assert cuts[-1] == f"{5 * m - 1} of {5 * m}" and len(cuts) >= 5 * m - 1
    assert all(text.startswith("Evaluating: fold 1 of 1") for _, text in calls)
    # computed once: asked again, nothing to report within the fold
    calls.clear()
    cache.evaluation(planted, spec, HOLDOUT, progress=lambda f, text: calls.append((f, text)))
    assert [f for f, _ in calls] == [1.0]
