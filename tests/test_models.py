"""SML, SBLR and SparseSBLR: oracles, decision rules, edge cases, sklearn plumbing."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_wine, make_multilabel_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sblr import SBLRClassifier, SimilarityFeaturizer, SMLClassifier, SparseSBLRClassifier
from sblr.logistic import fit_logistic_layer, lambda_max

# A scikit-learn oracle that stopped short of its optimum would be compared as if it had
# reached it: its ConvergenceWarning fails the test instead.
pytestmark = pytest.mark.filterwarnings("error::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True)


@pytest.fixture(scope="module")
def multilabel():
    X, Y = make_multilabel_classification(
        n_samples=240, n_features=8, n_classes=5, n_labels=2, random_state=0
    )
    return X, Y


# ----------------------------------------------------------------- SBLR / SparseSBLR oracles
@pytest.mark.slow
def test_sblr_equals_sklearn_logistic_regression_on_the_evidence(multilabel):
    X, Y = multilabel
    ridge = 1e-3
    clf = SBLRClassifier(gamma=0.5, ridge=ridge, tol=1e-10, threshold=0.5).fit(X, Y)
    # leave-one-out evidence, the layer's input (log shares, the default)
    F = SimilarityFeaturizer(gamma=0.5, normalize="log_rate").fit_transform(X, Y)
    sd = F.std(axis=0)
    n = len(Y)
    for k in range(Y.shape[1]):
        # ridge * Var(f_t) * beta_t^2 == ridge * (sd_t beta_t)^2: plain ridge on F / sd,
        # and scikit-learn's C * sum(loss) + 1/2 ||w||^2 == n C (mean loss + ||w||^2 / (2 n C)).
        sk = LogisticRegression(C=1 / (n * ridge), tol=1e-12, max_iter=100_000)
        sk.fit(F / sd, Y[:, k])
        np.testing.assert_allclose(clf.coef_[k], sk.coef_[0] / sd, rtol=1e-4, atol=1e-3)
        assert clf.intercept_[k] == pytest.approx(sk.intercept_[0], abs=1e-3)
    # and the logits are beta_0^k + sum_t beta_t^k f_t(x) on query evidence
    Fq = clf.featurizer_.transform(X[:5])
    np.testing.assert_allclose(clf.decision_function(X[:5]), Fq @ clf.coef_.T + clf.intercept_)


@pytest.mark.parametrize("lam", [1e-2, 1e-3, 1e-4])
def test_sparse_sblr_meets_the_l1_kkt_conditions(multilabel, lam):
    X, Y = multilabel
    clf = SparseSBLRClassifier(gamma=0.5, lam=lam).fit(X, Y)
    F = clf.featurizer_.training_evidence()
    for k in range(Y.shape[1]):
        beta, b = clf.coef_[k], clf.intercept_[k]
        p = 1 / (1 + np.exp(-(F @ beta + b)))
        grad = F.T @ (p - Y[:, k]) / len(Y)
        assert abs(np.mean(p - Y[:, k])) < 1e-4  # intercept is not penalized
        nz = beta != 0
        assert np.all(np.abs(grad[nz] + lam * np.sign(beta[nz])) < 1e-4)
        assert np.all(np.abs(grad[~nz]) <= lam + 1e-4)


def test_lambda_at_or_above_lambda_max_gives_zero_beta(multilabel):
    X, Y = multilabel
    F = SimilarityFeaturizer(gamma=0.5, normalize="log_rate").fit_transform(X, Y)
    lmax = max(lambda_max(F, Y[:, k]) for k in range(Y.shape[1]))
    clf = SparseSBLRClassifier(gamma=0.5, lam=lmax).fit(X, Y)
    assert np.all(clf.coef_ == 0)
    # only intercepts remain: every row gets the base rates
    np.testing.assert_allclose(clf.predict_proba(X[:3]), np.tile(Y.mean(0), (3, 1)), atol=1e-6)
    assert np.count_nonzero(SparseSBLRClassifier(gamma=0.5, lam=lmax / 2).fit(X, Y).coef_)


def test_sparsity_grows_with_lambda(wine):
    X, y = wine
    nnz = [
        np.count_nonzero(SparseSBLRClassifier(lam=lam).fit(X, y).coef_)
        for lam in (1e-5, 1e-3, 1e-2, 1e-1)
    ]
    assert nnz == sorted(nnz, reverse=True) and nnz[0] > nnz[-1]


@pytest.mark.slow
def test_leave_one_out_prevents_label_leakage(wine):
    """Without leaving a training row out of its own evidence, accuracy collapses at large gamma."""
    X, y = wine
    gamma = 6.0
    with_loo, without = [], []
    for tr, te in StratifiedKFold(10, shuffle=True, random_state=0).split(X, y):
        f = SimilarityFeaturizer(gamma=gamma).fit(X[tr], y[tr])
        for train_evidence, scores in (
            (f.training_evidence(), with_loo),
            (f.transform(X[tr]), without),
        ):
            coef, b, _, _ = fit_logistic_layer(
                train_evidence, f.Y_fit_, ridge=1e-6 * train_evidence.var(0)
            )
            pred = f.classes_[np.argmax(f.transform(X[te]) @ coef.T + b, axis=1)]
            scores.append(np.mean(pred == y[te]))
    assert np.mean(with_loo) > 0.93
    assert np.mean(with_loo) - np.mean(without) > 0.1
    # and the estimator does leave it out
    clf = SBLRClassifier(gamma=gamma).fit(X, y)
    np.testing.assert_allclose(
        clf.featurizer_.training_evidence(),
        SimilarityFeaturizer(gamma=gamma, normalize="log_rate").fit_transform(X, y),
    )


# ----------------------------------------------------------------- decision rules
def test_multilabel_decision_rule_and_force_top1(multilabel):
    X, Y = multilabel
    clf = SparseSBLRClassifier(gamma=0.5, lam=1e-3, threshold=0.5).fit(X, Y)
    P = clf.predict_proba(X)
    np.testing.assert_array_equal(clf.predict(X), (P >= 0.5).astype(int))
    np.testing.assert_array_equal(clf.threshold_, np.full(Y.shape[1], 0.5))
    # a far-away query gets low probabilities everywhere -> empty set unless forced
    far = np.full((1, X.shape[1]), 1e3)
    strict = clf.set_params(lam=0.05).fit(X, Y)
    forced = clone(strict).set_params(force_top1=True).fit(X, Y)
    assert strict.predict(far).sum() == 0
    np.testing.assert_array_equal(
        forced.predict(far)[0], np.eye(5, dtype=int)[np.argmax(strict.predict_proba(far))]
    )


def test_multiclass_decision_is_argmax_and_proba_rows_sum_to_one(wine):
    X, y = wine
    clf = SBLRClassifier().fit(X, y)
    eta = clf.logits(X)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(eta, axis=1)])
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    pi = 1 / (1 + np.exp(-eta))
    np.testing.assert_allclose(clf.predict_proba(X), pi / pi.sum(1, keepdims=True))


def test_class_constant_in_training_gets_a_constant_probability(multilabel):
    X, Y = multilabel
    Y = Y.copy()
    Y[:, 1] = 0
    Y[:, 3] = 1
    clf = SparseSBLRClassifier(gamma=0.5, lam=1e-3).fit(X, Y)
    assert np.all(clf.coef_[[1, 3]] == 0)
    P = clf.predict_proba(X)
    n = len(Y)
    assert np.allclose(P[:, 1], 0.5 / (n + 1)) and np.allclose(P[:, 3], (n + 0.5) / (n + 1))
    assert clf.predict(X)[:, 3].all() and not clf.predict(X)[:, 1].any()


def test_binary_problem_mirrors_the_two_rows(wine):
    X, y = wine
    keep = y < 2
    Xb, yb = X[keep], np.where(y[keep] == 0, "red", "white")
    clf = SparseSBLRClassifier(lam=1e-3).fit(Xb, yb)
    np.testing.assert_array_equal(clf.coef_[0], -clf.coef_[1])
    assert clf.decision_function(Xb).shape == (len(yb),)
    assert set(clf.predict(Xb)) <= {"red", "white"}
    assert clf.score(Xb, yb) > 0.95


# ----------------------------------------------------------------- SML
def _window(A, B):
    """Similarity 1 within 0.4 on the scaled axis, else 0: easy to work by hand."""
    return (np.abs(A[:, :1] - B[:, :1].T) <= 0.4).astype(float)


def test_sml_multilabel_set_size_rule_worked_by_hand():
    # x = 0, 1, 10, 11, 12 scale to -1, -0.833, 0.667, 0.833, 1.
    X = np.array([[0.0], [1.0], [10.0], [11.0], [12.0]])
    Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [0, 1, 1], [1, 1, 1]])  # set sizes 1,2,2,2,3
    clf = SMLClassifier(kernel=_window, threshold=None).fit(X, Y)
    # Query 11 (0.833) sees rows 2, 3, 4: f = [1, 3, 3]; set-size groups: size 2 -> 2
    # (rows 2, 3), size 3 -> 1 (row 4), size 1 -> 0, so xi = 2 and labels 1, 2 are predicted.
    # Query 0 (-1) sees rows 0, 1: f = [2, 1, 0]; sizes 1 and 2 tie at 1 -> the smaller
    # size wins, xi = 1: label 0.
    Xq = np.array([[11.0], [0.0]])
    np.testing.assert_array_equal(clf.evidence(Xq), [[1, 3, 3], [2, 1, 0]])
    np.testing.assert_array_equal(clf.predict_set_size(Xq), [2, 1])
    np.testing.assert_array_equal(clf.predict(Xq), [[0, 1, 1], [1, 0, 0]])
    # decision_function keeps each row's order and is positive exactly on the predicted set
    D = clf.decision_function(Xq)
    np.testing.assert_array_equal((D > 0).astype(int), clf.predict(Xq))
    # a callable kernel may give negative evidence: the evidence itself, less the cut midway
    # between the xi-th and (xi+1)-th largest
    np.testing.assert_allclose(D - clf.evidence(Xq), [[-2.0] * 3, [-1.5] * 3])
    # the rbf kernel: the same on the log scale (0 -> log = -800)
    rbf = SMLClassifier(gamma=1.0, approx=None, threshold=None).fit(X, Y)
    F = rbf.evidence(Xq)
    logs = np.where(F > 0, np.log(np.where(F > 0, F, 1.0)), -800.0)
    desc = -np.sort(-logs, axis=1)
    xi = rbf.predict_set_size(Xq)
    cut = [0.5 * (desc[i, xi[i] - 1] + desc[i, xi[i]]) for i in range(len(Xq))]
    np.testing.assert_allclose(rbf.decision_function(Xq), logs - np.array(cut)[:, None])


def test_sml_decision_keeps_evidence_of_very_different_sizes_apart():
    """Found on genbase (issue #28): f - t rounded evidence 6e-78 and 2e-174 to the same
    -0.5 beside a cut of 0.5, a tie that coverage counted against SML (0.672 from the
    decision against 0.493 from the evidence at gamma = 10 on a fold). Oracle: the ranking
    metrics of the evidence itself."""
    from sblr import metrics

    clf = SMLClassifier(gamma=100, approx=None, threshold=None).fit(
        [[0], [1], [2], [3]], [[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    )
    F, D = clf.evidence([[0]]), clf.decision_function([[0]])
    assert F[0, 1] > F[0, 2] > 0 and F[0, 1] < 1e-70  # tiny, and apart
    assert D[0, 0] > 0 > D[0, 1] > D[0, 2]  # the order of F, positive where predicted
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    Y = (X @ rng.normal(size=(3, 6)) + rng.normal(size=(120, 6)) > 0.8).astype(int)
    for gamma in (30.0, 300.0):  # evidence over hundreds of orders of magnitude
        clf = SMLClassifier(gamma=gamma, approx=None).fit(X[:80], Y[:80])
        F, D = clf.evidence(X[80:]), clf.decision_function(X[80:])
        # every pair of a row's classes keeps its order, unless the two evidences agree to 13
        # digits (rounding noise of sums of the same terms, which the log scale may merge)
        a, b = F[:, :, None], F[:, None, :]
        apart = np.abs(a - b) > 1e-13 * np.maximum(np.abs(a), np.abs(b))
        da, db = D[:, :, None], D[:, None, :]
        assert ((a > b) == (da > db))[apart].all() and ((a < b) == (da < db))[apart].all()
        if gamma == 30.0:  # no such near ties here: the ranking metrics of the evidence
            for name in ("coverage", "ranking_loss", "one_error", "average_precision"):
                assert metrics.score(name, Y[80:], None, D) == metrics.score(name, Y[80:], None, F)
        old = F - np.sort(F, axis=1)[:, -2:-1]  # the old f - t: ties where F had none
        assert ((old[:, :, None] == old[:, None, :]) & apart).any()


def test_sml_multiclass_is_argmax_of_evidence(wine):
    X, y = wine
    clf = SMLClassifier(gamma=1.0).fit(X[::2], y[::2])
    F = clf.evidence(X[1::2])
    np.testing.assert_array_equal(clf.predict(X[1::2]), clf.classes_[np.argmax(F, axis=1)])
    np.testing.assert_allclose(clf.predict_proba(X[1::2]), F / F.sum(1, keepdims=True))
    assert clf.score(X[1::2], y[1::2]) > 0.9


# ----------------------------------------------------------------- scikit-learn plumbing
@pytest.mark.slow
def test_pipeline_gridsearch_clone_and_dataframes(wine):
    X, y = wine
    Xdf = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    pipe = make_pipeline(FunctionTransformer(np.log1p), SparseSBLRClassifier())
    search = GridSearchCV(
        pipe,
        {"sparsesblrclassifier__gamma": [0.1, 1.0], "sparsesblrclassifier__lam": [1e-3, 1e-2]},
        cv=3,
    )
    search.fit(Xdf, y)
    assert search.best_score_ > 0.9
    best = search.best_estimator_[-1]
    assert best.coef_.shape == (3, 3)
    assert list(best.feature_names_in_) == list(Xdf.columns)
    # clone keeps parameters, drops fitted state; "scale" is resolved into gamma_ only
    c = clone(SparseSBLRClassifier(lam=0.01))
    assert c.get_params()["lam"] == 0.01 and not hasattr(c, "coef_")
    fitted = SparseSBLRClassifier().fit(X, y)
    assert fitted.gamma == "scale" and isinstance(fitted.gamma_, float)
    assert cross_val_score(SMLClassifier(), X, y, cv=3).mean() > 0.85


@pytest.mark.slow
def test_sml_scores_a_row_the_same_whatever_rows_come_with_it():
    """The log scale of SML's multi-label decision is chosen by the kernel, not by the rows of
    the call: with the linear kernel (evidence may be negative) a row asked alone scored on the
    log scale and the same row in a batch holding a negative evidence on the linear one."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    Y = (X @ rng.normal(size=(3, 4)) > 0).astype(int)
    Y[Y.sum(axis=1) == 0, 0] = 1
    Xq = rng.normal(size=(30, 3))
    for kernel in ("linear", "rbf"):
        clf = SMLClassifier(kernel=kernel, gamma=1.0, approx=None).fit(X, Y)
        F, D = clf.evidence(Xq), clf.decision_function(Xq)
        if kernel == "linear":
            assert (F < 0).any() and (F >= 0).all(axis=1).any()  # both kinds of row
        for i in range(len(Xq)):
            np.testing.assert_allclose(clf.decision_function(Xq[i : i + 1])[0], D[i], rtol=1e-12)
        np.testing.assert_array_equal((D > 0).astype(int), clf.predict(Xq))
