"""Grid selection on a validation split and the lambda path, against brute force."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_wine, make_multilabel_classification
from sklearn.model_selection import train_test_split

from sblr import (
    SBLRCV,
    SBLRClassifier,
    SimilarityFeaturizer,
    SMLClassifier,
    SparseSBLRClassifier,
    SparseSBLRCV,
)
from sblr import metrics as M
from sblr._validation import InvalidParameterError
from sblr.exceptions import DataError
from sblr.tuning import coefficient_path, tune


def _brute_force(estimator, X, y, gammas, lams, metric, stratify):
    X_tr, X_val, y_tr, y_val = train_test_split(
        X, y, test_size=0.1, random_state=0, stratify=stratify
    )
    table = {}
    for g in gammas:
        for lam in lams:
            est = clone(estimator).set_params(gamma=g, lam=lam).fit(X_tr, y_tr)
            if metric == "accuracy":
                table[g, lam] = M.accuracy(y_val, est.predict(X_val))
            else:
                table[g, lam] = getattr(M, metric)(y_val, est.decision_function(X_val))
    return table


@pytest.mark.slow
def test_multiclass_selection_equals_brute_force_refits():
    X, y = load_wine(return_X_y=True)
    gammas, lams = [10.0, 1.0, 0.1], [1e-1, 1e-2, 1e-3, 1e-4]
    res = tune(SparseSBLRClassifier(), X, y, gammas=gammas, lams=lams)
    table = _brute_force(SparseSBLRClassifier(), X, y, gammas, lams, "accuracy", y)
    got = {(r.gamma, r.lam): r.score for r in res.scores.itertuples()}
    assert got.keys() == table.keys()
    for key in table:
        assert got[key] == pytest.approx(table[key])
    best = max(table.values())
    first_best = next(k for k in ((g, lam) for g in gammas for lam in lams) if table[k] == best)
    assert (res.best_params["gamma"], res.best_params["lam"]) == first_best
    assert res.best_score == best


@pytest.mark.slow
def test_multilabel_selection_uses_ranking_scores_and_lower_is_better():
    X, Y = make_multilabel_classification(n_samples=200, n_features=6, n_classes=4, random_state=1)
    gammas, lams = [1.0, 0.1], [1e-2, 1e-3]
    res = tune(SparseSBLRClassifier(), X, Y, gammas=gammas, lams=lams, metric="ranking_loss")
    table = _brute_force(SparseSBLRClassifier(), X, Y, gammas, lams, "ranking_loss", None)
    assert res.best_score == pytest.approx(min(table.values()))
    assert res.metric == "ranking_loss"


def test_sml_and_sblr_tune_gamma_only():
    X, y = load_wine(return_X_y=True)
    for est in (SMLClassifier(), SBLRClassifier()):
        res = tune(est, X, y, gammas=[1.0, 0.1], lams=[1.0, 2.0])
        assert list(res.best_params) == ["gamma"] and len(res.scores) == 2


def test_progress_is_reported_for_every_grid_point():
    X, y = load_wine(return_X_y=True)
    calls = []
    tune(
        SparseSBLRClassifier(),
        X,
        y,
        gammas=[1.0, 0.1],
        lams=[1e-2, 1e-3, 1e-4],
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls == [(i, 6) for i in range(1, 7)]


def test_coefficient_path_equals_independent_fits():
    X, y = load_wine(return_X_y=True)
    f = SimilarityFeaturizer(normalize="log_rate").fit(X, y)  # the model's input
    lams = [1e-4, 1e-1, 1e-2]
    # a tight tolerance: the evidence features are strongly correlated, so a
    # 1e-6 KKT tolerance still leaves ~1e-2 freedom in the largest coefficients
    est = SparseSBLRClassifier(tol=1e-10)
    coefs, intercepts = coefficient_path(est, f, f.training_evidence(), lams)
    for i, lam in enumerate(lams):
        ref = clone(est).set_params(lam=lam).fit(X, y)
        np.testing.assert_allclose(coefs[i], ref.coef_, atol=1e-4, rtol=1e-4)
        np.testing.assert_allclose(intercepts[i], ref.intercept_, atol=1e-4)


@pytest.mark.parametrize("sample", ["planted", "wine"])
def test_coefficient_path_of_chosen_classes_equals_their_rows_of_the_full_path(sample):
    """Oracle: the full path (every class fitted together, as fit_from_evidence does)."""
    from sblr.samples import load_sample

    ds = load_sample(sample)
    f = SimilarityFeaturizer().fit(ds.X, ds.y)
    F = f.training_evidence()
    lams = 10.0 ** np.arange(-5, 2.01, 0.5)
    full, full_b = coefficient_path(SparseSBLRClassifier(), f, F, lams)
    calls = []
    part, part_b = coefficient_path(
        SparseSBLRClassifier(),
        f,
        F,
        lams,
        targets=[2, 0],
        progress=lambda done, total: calls.append((done, total)),
    )
    assert part.shape == (len(lams), 2, ds.n_classes)
    np.testing.assert_array_equal(part, full[:, [2, 0]])
    np.testing.assert_array_equal(part_b, full_b[:, [2, 0]])
    assert calls == [(i, len(lams)) for i in range(1, len(lams) + 1)]
    with pytest.raises(ValueError, match="targets"):
        coefficient_path(SparseSBLRClassifier(), f, F, lams, targets=[ds.n_classes])


def test_bad_metric_and_tiny_data_are_reported():
    X, y = load_wine(return_X_y=True)
    with pytest.raises(InvalidParameterError, match="'metric' parameter of tune"):
        tune(SparseSBLRClassifier(), X, y, metric="auc")  # not a metric of sblr.metrics
    with pytest.raises(DataError, match="Unknown metric"):
        tune(SparseSBLRClassifier(), X, y, metric="average_precision")  # not for this task
    with pytest.raises(DataError, match="at least 10"):
        tune(SparseSBLRClassifier(), X[:5], y[:5])


def test_metric_names_follow_the_task():
    X, y = load_wine(return_X_y=True)
    res = tune(SBLRClassifier(), X, y, gammas=[1.0, 0.1], metric="macro_f1")
    assert 0.5 < res.best_score <= 1.0
    with pytest.raises(DataError, match="for multi-class data"):
        tune(SBLRClassifier(), X, y, gammas=[1.0], metric="hamming_loss")


def test_all_undefined_validation_scores_are_an_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = np.zeros((30, 3), dtype=int)
    Y[:15] = 1  # every label set is full or empty: ranking metrics skip every row
    with pytest.raises(DataError, match="undefined"):
        tune(
            SparseSBLRClassifier(),
            X,
            Y,
            gammas=[1.0],
            lams=[1e-2],
            metric="average_precision",
            random_state=3,
        )


@pytest.mark.slow
def test_cv_estimator_selects_what_gridsearchcv_selects_on_the_same_split():
    from sklearn.model_selection import GridSearchCV, PredefinedSplit, train_test_split

    from sblr.tuning import SparseSBLRCV

    X, y = load_wine(return_X_y=True)
    gammas, lams = [10.0, 1.0, 0.1], [1e-1, 1e-2, 1e-3, 1e-4]
    cv_est = SparseSBLRCV(gammas=gammas, lams=lams).fit(X, y)
    # the same 10% validation rows as tune (stratified, random_state=0)
    _, val = train_test_split(np.arange(len(y)), test_size=0.1, random_state=0, stratify=y)
    test_fold = np.full(len(y), -1)
    test_fold[val] = 0
    grid = GridSearchCV(
        SparseSBLRClassifier(), {"gamma": gammas, "lam": lams}, cv=PredefinedSplit(test_fold)
    ).fit(X, y)
    assert cv_est.best_params_ == grid.best_params_
    # refitted on all rows at the chosen values, with the path at the chosen gamma
    ref = SparseSBLRClassifier(**grid.best_params_).fit(X, y)
    np.testing.assert_allclose(cv_est.coef_, ref.coef_, atol=1e-4, rtol=1e-4)
    i = lams.index(grid.best_params_["lam"])
    np.testing.assert_allclose(cv_est.coef_path_[i], ref.coef_, atol=1e-4, rtol=1e-4)
    assert cv_est.coef_path_.shape == (4, 3, 3)
    assert np.count_nonzero(cv_est.coef_path_[0]) <= np.count_nonzero(cv_est.coef_path_[-1])


@pytest.mark.slow
@pytest.mark.parametrize("multilabel", [False, True])
def test_inner_kfold_selection_equals_grid_search_cv(multilabel):
    """cv=k scores every grid point on the same folds as GridSearchCV and picks the same one."""
    from sklearn.model_selection import GridSearchCV

    from sblr.evaluation import make_splits
    from sblr.tuning import SparseSBLRCV

    if multilabel:  # the default: micro-F1 of the decisions, each at its own fitted cut
        X, y = make_multilabel_classification(n_samples=120, n_classes=4, random_state=1)
        scoring = "micro_f1"
    else:
        X, y = load_wine(return_X_y=True)
        scoring = "accuracy"
    gammas, lams = [10.0, 1.0, 0.1], [1e-1, 1e-2, 1e-3]
    cv_est = SparseSBLRCV(gammas=gammas, lams=lams, cv=3).fit(X, y)
    folds = make_splits(y, scheme="kfold", n_splits=3, random_state=0)

    def score(est, X_val, y_val):
        if multilabel:
            return M.micro_f1(y_val, est.predict(X_val))
        return M.accuracy(y_val, est.predict(X_val))

    grid = GridSearchCV(
        SparseSBLRClassifier(), {"gamma": gammas, "lam": lams}, cv=folds, scoring=score
    ).fit(X, y)
    assert cv_est.best_params_ == grid.best_params_, scoring
    np.testing.assert_allclose(
        cv_est.cv_results_.score, grid.cv_results_["mean_test_score"], atol=1e-6
    )
    np.testing.assert_allclose(
        cv_est.cv_results_.split1_score, grid.cv_results_["split1_test_score"], atol=1e-6
    )


@pytest.mark.slow
def test_sblr_cv_selects_gamma_like_brute_force():
    from sblr.tuning import SBLRCV

    X, y = load_wine(return_X_y=True)
    gammas = [100.0, 10.0, 1.0, 0.01]
    clf = SBLRCV(gammas=gammas).fit(X, y)
    _, val = train_test_split(np.arange(len(y)), test_size=0.1, random_state=0, stratify=y)
    train = np.setdiff1d(np.arange(len(y)), val)
    acc = [
        M.accuracy(y[val], SBLRClassifier(gamma=g).fit(X[train], y[train]).predict(X[val]))
        for g in gammas
    ]
    best = gammas[int(np.argmax(acc))]  # the first of equal scores, as tune does
    assert clf.best_params_ == {"gamma": best}
    assert clf.cv_results_.lam.isna().all()
    ref = SBLRClassifier(gamma=best).fit(X, y)
    np.testing.assert_allclose(clf.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))


def test_bad_cv_is_refused():
    from sblr.tuning import SparseSBLRCV

    X, y = load_wine(return_X_y=True)
    for bad in (1, 0, 2.5, True, "3"):
        with pytest.raises(ValueError, match="'cv' parameter of SparseSBLRCV"):
            SparseSBLRCV(cv=bad).fit(X, y)
        with pytest.raises(InvalidParameterError, match="'cv' parameter of tune"):
            tune(SparseSBLRClassifier(), X, y, cv=bad)
    with pytest.raises(DataError, match="inner folds needs at least"):
        tune(SparseSBLRClassifier(), X[:7], y[:7], cv=5)


@pytest.mark.parametrize(
    "cv_estimator, base",
    [
        (SparseSBLRCV(gammas=[1.0], lams=[1e-2]), "SparseSBLRClassifier"),
        (SBLRCV(), "SBLRClassifier"),
    ],
    ids=["SparseSBLRCV", "SBLRCV"],
)
def test_tune_and_coefficient_path_refuse_cv_estimators_naming_the_base_model(cv_estimator, base):
    X, y = load_wine(return_X_y=True)
    with pytest.raises(TypeError, match=f"pass {base}"):
        tune(cv_estimator, X, y, gammas=[1.0], lams=[1e-2])
    f = SimilarityFeaturizer().fit(X, y)
    with pytest.raises(TypeError, match="Pass SparseSBLRClassifier"):
        coefficient_path(cv_estimator, f, f.training_evidence(), [1.0, 1e-3])


def test_coefficient_path_and_tune_refuse_models_they_cannot_refit():
    from sklearn.linear_model import LogisticRegression

    X, y = load_wine(return_X_y=True)
    f = SimilarityFeaturizer().fit(X, y)
    with pytest.raises(TypeError, match="Pass SparseSBLRClassifier"):
        coefficient_path(SBLRClassifier(), f, f.training_evidence(), [1.0])
    with pytest.raises(TypeError, match="tune selects"):
        tune(LogisticRegression(), X, y)


@pytest.mark.slow
def test_one_standard_error_rule_picks_the_largest_lambda_within_one_se():
    """Oracle: the rule worked by hand from the per-fold score table."""
    from sblr.samples import load_sample

    ds = load_sample("planted")
    grid = dict(gammas=[1.0, 0.1], lams=[1e-1, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4], cv=5)
    best = tune(SparseSBLRClassifier(), ds.X, ds.y, **grid)
    one_se = tune(SparseSBLRClassifier(), ds.X, ds.y, rule="one_se", **grid)
    table = best.scores
    splits = table[[c for c in table if c.startswith("split")]].to_numpy()
    i = int(table.score.idxmax())
    se = splits[i].std(ddof=1) / np.sqrt(splits.shape[1])
    same = table[(table.gamma == table.gamma[i]) & (table.score >= table.score[i] - se)]
    assert one_se.best_params == {"gamma": table.gamma[i], "lam": same.lam.max()}
    assert one_se.best_params["lam"] > best.best_params["lam"]  # the rule made a difference
    with pytest.raises(ValueError, match="cv=k"):
        tune(SparseSBLRClassifier(), ds.X, ds.y, gammas=[1.0], lams=[1e-2], rule="one_se")


@pytest.mark.slow
def test_cv_takes_a_splitter_or_index_pairs_as_grid_search_cv_does():
    """Any scikit-learn cv: a splitter and the same splits as index pairs give GridSearchCV's
    scores and choice on those splits; the refit on all rows is best_estimator_, a plain
    SBLRClassifier at the chosen gamma, whose predictions the CV estimator gives."""
    from sklearn.model_selection import GridSearchCV, ShuffleSplit

    from sblr.tuning import SBLRCV

    X, y = load_wine(return_X_y=True)
    gammas = [10.0, 1.0, 0.1, 0.01]
    splitter = ShuffleSplit(n_splits=3, test_size=0.3, random_state=4)
    pairs = list(splitter.split(X, y))
    by_splitter = SBLRCV(gammas=gammas, cv=splitter).fit(X, y)
    by_pairs = SBLRCV(gammas=gammas, cv=iter(pairs)).fit(X, y)  # a one-pass iterable too
    grid = GridSearchCV(
        SBLRClassifier(),
        {"gamma": gammas},
        cv=pairs,
        scoring=lambda est, X_val, y_val: M.accuracy(y_val, est.predict(X_val)),
    ).fit(X, y)
    for est in (by_splitter, by_pairs):
        assert est.best_params_ == grid.best_params_
        np.testing.assert_allclose(est.cv_results_.score, grid.cv_results_["mean_test_score"])
        np.testing.assert_allclose(
            est.cv_results_.split2_score, grid.cv_results_["split2_test_score"]
        )
    best = by_splitter.best_estimator_
    assert type(best) is SBLRClassifier and best.gamma == grid.best_params_["gamma"]
    ref = SBLRClassifier(gamma=best.gamma).fit(X, y)
    np.testing.assert_allclose(best.coef_, ref.coef_)
    np.testing.assert_array_equal(by_splitter.predict(X), ref.predict(X))
    np.testing.assert_allclose(by_splitter.coef_, ref.coef_)


@pytest.mark.parametrize(
    "cv, match",
    [
        (1, r"'cv' parameter of tune must be an int in the range \[2, inf\)"),
        ("folds", "'cv' parameter of tune must be .* an object implementing 'split'"),
        ([(np.arange(10), np.arange(10, 20))], "at least 2 splits"),
        ([(np.arange(10), np.array([999]))] * 2, "row indices"),
        ([(np.arange(10), np.array([0.5]))] * 2, "row indices"),
    ],
)
def test_a_bad_cv_is_a_value_error_naming_what_is_wrong(cv, match):
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        tune(SBLRClassifier(), X, y, gammas=[1.0], cv=cv)
