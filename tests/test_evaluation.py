"""Hold-out / k-fold evaluation on cached evidence against plain refits."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_wine, make_multilabel_classification

from sblr import SBLRClassifier, SMLClassifier, SparseSBLRClassifier, metrics
from sblr.evaluation import evaluate, evaluate_folds, fold_evidence, make_splits
from sblr.exceptions import DataError


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
