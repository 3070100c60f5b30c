"""Hold-out / k-fold evaluation on cached evidence against plain refits."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_wine, make_multilabel_classification

from sblr import (
    SBLRCV,
    SBLRClassifier,
    SMLClassifier,
    SparseSBLRClassifier,
    SparseSBLRCV,
    metrics,
)
from sblr.evaluation import evaluate, evaluate_folds, fold_evidence, make_splits, score_fold
from sblr.exceptions import DataError
from sblr.models import fits_from_evidence


@pytest.mark.slow
def test_cached_evidence_scores_equal_plain_refits():
    X, Y = make_multilabel_classification(n_samples=150, n_features=6, n_classes=4, random_state=2)
    est = SparseSBLRClassifier(gamma=0.5, lam=1e-3)
    splits = make_splits(Y, scheme="kfold", n_splits=3)
    res = evaluate_folds(est, X, Y, fold_evidence(est, X, Y, splits))
    for i, (tr, te) in enumerate(splits):
        ref = clone(est).fit(X[tr], Y[tr])
        expected = metrics.multilabel_report(
            Y[te], ref.predict(X[te]), ref.decision_function(X[te])
        )
        for name, value in expected.items():
            assert res.per_fold.loc[i, name] == pytest.approx(value, nan_ok=True)
    assert res.summary.loc["hamming_loss", "mean"] == pytest.approx(
        res.per_fold.hamming_loss.mean()
    )
    assert res.confusion is None


def test_multiclass_kfold_is_stratified_and_confusion_covers_every_row():
    X, y = load_wine(return_X_y=True)
    splits = make_splits(y, scheme="kfold", n_splits=5)
    for _, te in splits:
        # stratified: each test fold holds about a fifth of every class
        assert np.all(np.abs(np.bincount(y[te], minlength=3) - np.bincount(y) / 5) <= 1)
    res = evaluate(SBLRClassifier(), X, y, scheme="kfold", n_splits=5)
    assert res.confusion.sum() == len(y)
    sizes = np.array([len(te) for _, te in splits])
    pooled = (res.per_fold.accuracy.to_numpy() * sizes).sum() / len(y)
    assert pooled == pytest.approx(np.trace(res.confusion) / len(y))


def test_sml_is_refitted_per_fold():
    X, y = load_wine(return_X_y=True)
    res = evaluate(SMLClassifier(), X, y, scheme="holdout", test_size=0.3)
    ((tr, te),) = make_splits(y, scheme="holdout", test_size=0.3)
    ref = SMLClassifier().fit(X[tr], y[tr])
    assert res.per_fold.loc[0, "accuracy"] == pytest.approx(ref.score(X[te], y[te]))


def test_too_few_rows_for_the_scheme_are_reported():
    y = np.array([0, 1, 0, 1, 0])
    with pytest.raises(DataError, match="2 per fold"):
        make_splits(y, scheme="kfold", n_splits=5)
    with pytest.raises(DataError, match="too few rows"):
        make_splits(y[:2], scheme="holdout", test_size=0.25)


@pytest.mark.parametrize("gamma", ["scale", 1e-3, 0.5, 30.0])
def test_evidence_from_kept_distances_equals_direct(gamma):
    """fold_distances + fold_evidence(distances=...) give the featurizer's own evidence."""
    from sblr.evaluation import fold_distances

    X, y = load_wine(return_X_y=True)
    splits = make_splits(y, scheme="kfold", n_splits=3)
    splits.append((np.arange(len(y)), np.arange(0)))  # every row trains, no test rows
    D = [fold_distances(X, y, tr, te) for tr, te in splits]
    est = SparseSBLRClassifier(gamma=gamma)
    kept = fold_evidence(est, X, y, splits, distances=D)
    direct = fold_evidence(est, X, y, splits[:-1])
    for a, b in zip(kept, direct, strict=False):
        np.testing.assert_allclose(a.F_train, b.F_train, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(a.F_test, b.F_test, rtol=1e-12, atol=1e-14)
    f = kept[-1].featurizer
    np.testing.assert_allclose(kept[-1].F_train, f.training_evidence(), rtol=1e-12, atol=1e-14)
    # other kernels ignore the distances; too large a pair is not kept
    laplacian = SparseSBLRClassifier(kernel="laplacian")
    lap = fold_evidence(laplacian, X, y, splits[:1], distances=D)
    np.testing.assert_array_equal(
        lap[0].F_train, fold_evidence(laplacian, X, y, splits[:1])[0].F_train
    )
    assert not np.allclose(lap[0].F_train, kept[0].F_train)
    assert fold_distances(X, y, splits[0][0], splits[0][1], max_mb=0.01) is None


CV_ESTIMATORS = [
    SparseSBLRCV(gammas=[10.0, 0.1], lams=[1e-1, 1e-3]),
    SBLRCV(gammas=[10.0, 0.1]),
]


def _by_hand(cv_estimator, X, y, splits):
    """Per fold: the CV estimator refitted (selection included) on the training rows."""
    reports = []
    for tr, te in splits:
        est = clone(cv_estimator).fit(X[tr], y[tr])
        if y.ndim == 2:
            reports.append(
                metrics.multilabel_report(y[te], est.predict(X[te]), est.decision_function(X[te]))
            )
        else:
            reports.append(metrics.multiclass_report(y[te], est.predict(X[te])))
    return reports


def _assert_per_fold(result, expected):
    assert len(result.per_fold) == len(expected)
    for i, report in enumerate(expected):
        for name, value in report.items():
            assert result.per_fold.loc[i, name] == pytest.approx(value, nan_ok=True), name


@pytest.mark.slow
@pytest.mark.parametrize("cv_estimator", CV_ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("multilabel", [False, True], ids=["multiclass", "multilabel"])
def test_evaluate_runs_a_cv_estimators_selection_inside_each_training_fold(
    cv_estimator, multilabel
):
    if multilabel:
        X, y = make_multilabel_classification(
            n_samples=120, n_features=6, n_classes=3, random_state=2
        )
    else:
        X, y = load_wine(return_X_y=True)
    splits = make_splits(y, scheme="kfold", n_splits=3)
    res = evaluate(cv_estimator, X, y, scheme="kfold", n_splits=3)
    _assert_per_fold(res, _by_hand(cv_estimator, X, y, splits))


@pytest.mark.parametrize(
    "cv_estimator, plain",
    [
        (
            SparseSBLRCV(gammas=[100.0], lams=[100.0]),
            SparseSBLRClassifier(gamma=100.0, lam=100.0),
        ),
        (SBLRCV(gammas=[100.0]), SBLRClassifier(gamma=100.0)),
    ],
    ids=["SparseSBLRCV", "SBLRCV"],
)
def test_a_single_grid_point_scores_as_that_grid_point(cv_estimator, plain):
    X, y = load_wine(return_X_y=True)
    got = evaluate(cv_estimator, X, y).per_fold.accuracy
    expected = evaluate(plain, X, y).per_fold.accuracy
    np.testing.assert_allclose(got, expected)
    # lambda = 100 zeroes beta (log shares span [-100, 0]: lambda_max is about 20 here)
    if isinstance(plain, SparseSBLRClassifier):
        assert got[0] == pytest.approx(0.386, abs=0.01)


@pytest.mark.slow
@pytest.mark.parametrize("cv_estimator", CV_ESTIMATORS, ids=lambda e: type(e).__name__)
def test_cached_folds_are_not_used_for_cv_estimators(cv_estimator):
    X, y = load_wine(return_X_y=True)
    splits = make_splits(y, scheme="kfold", n_splits=3)
    folds = fold_evidence(SBLRClassifier(), X, y, splits)  # gamma="scale" evidence
    expected = _by_hand(cv_estimator, X, y, splits)
    _assert_per_fold(evaluate_folds(cv_estimator, X, y, folds), expected)
    values, _ = score_fold(cv_estimator, X, y, folds[1])
    assert values == pytest.approx(expected[1])
    with pytest.raises(TypeError, match="raw rows"):
        fold_evidence(cv_estimator, X, y, splits)
    # selection needs the raw rows: a CV estimator has no fit_from_evidence at all
    assert not hasattr(cv_estimator, "fit_from_evidence")


def test_fits_from_evidence_says_which_estimators_reuse_cached_evidence():
    from sklearn.linear_model import LogisticRegression

    assert fits_from_evidence(SBLRClassifier()) and fits_from_evidence(SparseSBLRClassifier())
    for est in (SMLClassifier(), SparseSBLRCV(), SBLRCV(), LogisticRegression()):
        assert not fits_from_evidence(est)


@pytest.mark.slow
def test_fold_probabilities_equal_a_model_fitted_on_the_training_rows():
    """Oracle: the estimator fitted here on the fold's training rows, predict_proba on its
    test rows; multi-class columns in the order of np.unique(y) even when a class is missing
    from the training rows."""
    from sblr import SMLClassifier, SparseSBLRClassifier
    from sblr.evaluation import fold_evidence, fold_probabilities, make_splits
    from sblr.samples import load_sample

    ds = load_sample("planted")
    ((train, test),) = make_splits(ds.y, scheme="holdout", test_size=0.25)
    est = SparseSBLRClassifier(lam=1e-3)
    (fold,) = fold_evidence(est, ds.X, ds.y, [(train, test)])
    rows, P = fold_probabilities(est, ds.X, ds.y, fold)
    np.testing.assert_array_equal(rows, test)
    # one fit for both (the dashboard's fold cache): the same numbers as fitting each time
    from sblr.evaluation import fit_fold, score_fold

    fitted = fit_fold(est, ds.X, ds.y, fold)
    np.testing.assert_array_equal(fold_probabilities(fitted, ds.X, ds.y, fold, prefit=True)[1], P)
    assert (
        score_fold(fitted, ds.X, ds.y, fold, prefit=True)[0] == score_fold(est, ds.X, ds.y, fold)[0]
    )
    expected = (
        SparseSBLRClassifier(lam=1e-3).fit(ds.X[train], ds.y[train]).predict_proba(ds.X[test])
    )
    np.testing.assert_allclose(P, expected, rtol=1e-6, atol=1e-9)
    # multi-class, a class absent from the training rows: a zero column in its place
    X = np.r_[np.random.default_rng(0).normal(size=(30, 2)), [[9.0, 9.0]]]
    y = np.r_[np.repeat(["a", "b", "c"], 10), ["d"]]
    rows, P = fold_probabilities(SMLClassifier(), X, y, (np.arange(30), np.arange(25, 31)))
    assert P.shape == (6, 4) and np.all(P[:, 3] == 0)
    np.testing.assert_allclose(P[:, :3].sum(axis=1), 1.0)


def test_pca_scatter_draws_the_coordinates_it_is_given():
    """pca_coordinates is the model, pca_scatter only draws: given coordinates are drawn as
    they are (oracle: the points of every trace are rows of the given coordinates)."""
    from sblr.plots import pca_coordinates, pca_scatter

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.repeat(["a", "b"], 20)
    Z = rng.normal(size=(40, 2))
    fig = pca_scatter(X, y, coordinates=(Z, np.array([0.6, 0.3]), "given"))
    drawn = {(float(a), float(b)) for t in fig.data for a, b in zip(t.x, t.y, strict=True)}
    assert drawn == {(float(a), float(b)) for a, b in Z}
    assert fig.layout.xaxis.title.text.startswith("PC1 (60.0%")
    own = pca_scatter(X, y)
    Z2, var, _ = pca_coordinates(X)
    drawn = sorted(float(v) for t in own.data for v in t.x)
    assert drawn == pytest.approx(sorted(Z2[:, 0]))


def test_fit_fold_reports_the_layer_then_its_cuts_and_fits_as_cuts_true_does():
    """Oracle: the same model fitted from the fold's evidence in one call (``cuts=True``):
    the same β and cuts; the progress goes class by class through the layer (m problems),
    then through the cuts' 5 out-of-fold layer fits (5 m), never backwards."""
    from sblr.evaluation import fit_fold

    X, Y = make_multilabel_classification(n_samples=90, n_features=5, n_classes=4, random_state=2)
    est = SparseSBLRClassifier(gamma=0.5, lam=1e-3)
    (fold,) = fold_evidence(est, X, Y, make_splits(Y, scheme="holdout", test_size=0.25))
    layer, cuts = [], []
    fitted = fit_fold(
        est,
        X,
        Y,
        fold,
        progress=lambda *c: layer.append(c),
        decision_progress=lambda *c: cuts.append(c),
    )
    oracle = clone(est).fit_from_evidence(fold.featurizer, fold.F_train)
    np.testing.assert_array_equal(fitted.coef_, oracle.coef_)
    np.testing.assert_array_equal(fitted.threshold_, oracle.threshold_)
    assert layer[-1] == (4, 4) and cuts[-1] == (20, 20)
    assert [d for d, _ in cuts] == sorted(d for d, _ in cuts) and {t for _, t in cuts} == {20}
