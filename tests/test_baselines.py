"""Baselines: ML-kNN by hand, IBLR and BR-SVM against scikit-learn oracles (the standard
checks are in test_common.py)."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_wine, make_blobs, make_multilabel_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import NearestNeighbors
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

from sblr.baselines import (
    BRSVMClassifier,
    IBLRClassifier,
    MLkNNClassifier,
    OneVsRestLRClassifier,
    leave_one_out_neighbors,
)
from sblr.logistic import constant_intercept
from sblr.metrics import average_precision
from sblr.registry import REGISTRY

#: The paper's baselines by key.
BASELINES = {k: REGISTRY[k].factory for k in ("mlknn", "iblr", "br_svm", "knn", "ncm", "lr")}
MULTICLASS_ONLY = [m.key for m in REGISTRY.values() if m.multiclass_only]

# A scikit-learn oracle that stopped short of its optimum would be compared as if it had
# reached it: its ConvergenceWarning fails the test instead.
pytestmark = pytest.mark.filterwarnings("error::sklearn.exceptions.ConvergenceWarning")

# Six training points on a line, two labels A and B (k = 2, s = 1 below).
# Scaling to [-1, 1] is linear in 1-D, so the neighbours are those of x itself.
X_TOY = np.array([[0.0], [1.0], [3.0], [7.0], [8.0], [10.0]])
Y_TOY = np.array(
    [
        [1, 0],  # x = 0
        [1, 0],  # x = 1
        [1, 1],  # x = 3
        [0, 1],  # x = 7
        [0, 1],  # x = 8
        [1, 0],  # x = 10
    ]
)
# Leave-one-out 2 nearest neighbours (no distance ties decide membership):
#   row 0 (x=0):  x=1 (d 1), x=3 (d 3)   -> rows {1, 2}
#   row 1 (x=1):  x=0 (d 1), x=3 (d 2)   -> rows {0, 2}
#   row 2 (x=3):  x=1 (d 2), x=0 (d 3)   -> rows {1, 0}   (x=7 at d 4)
#   row 3 (x=7):  x=8 (d 1), x=10 (d 3)  -> rows {4, 5}   (x=3 at d 4)
#   row 4 (x=8):  x=7 (d 1), x=10 (d 2)  -> rows {3, 5}
#   row 5 (x=10): x=8 (d 2), x=7 (d 3)   -> rows {4, 3}
# Counts c_iA, c_iB of labels among them:
TOY_LOO_COUNTS = np.array([[2, 1], [2, 1], [2, 0], [1, 1], [1, 1], [0, 2]])


@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True)


@pytest.fixture(scope="module")
def multilabel():
    X, Y = make_multilabel_classification(
        n_samples=300, n_features=10, n_classes=6, n_labels=2, random_state=0
    )
    return X, Y


def _scaled(X_train, X):
    lo, hi = X_train.min(axis=0), X_train.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.where(hi > lo, 2.0 * (X - lo) / span - 1.0, 0.0)


# --------------------------------------------------------------------------- ML-kNN
def test_mlknn_posteriors_worked_by_hand():
    clf = MLkNNClassifier(k=2, s=1.0).fit(X_TOY, Y_TOY)
    np.testing.assert_array_equal(clf.neighbour_label_counts(), TOY_LOO_COUNTS)

    # Priors, n = 6, s = 1:  P(A=1) = (1 + 4) / (2 + 6) = 5/8;  P(B=1) = (1 + 3) / 8 = 1/2.
    assert clf.prior_ == pytest.approx([5 / 8, 1 / 2])

    # Label A.  Rows with A = 1: {0, 1, 2, 5}, counts c = 2, 2, 2, 0
    #   -> #(c=j) for j = 0, 1, 2: [1, 0, 3], total 4
    #   -> P(E_j | A=1) = (1 + [1, 0, 3]) / (1 * 3 + 4) = [2/7, 1/7, 4/7].
    # Rows with A = 0: {3, 4}, counts 1, 1 -> [0, 2, 0], total 2
    #   -> P(E_j | A=0) = (1 + [0, 2, 0]) / (3 + 2) = [1/5, 3/5, 1/5].
    # Label B.  Rows with B = 1: {2, 3, 4}, counts 0, 1, 1 -> [1, 2, 0], total 3
    #   -> P(E_j | B=1) = (1 + [1, 2, 0]) / 6 = [1/3, 1/2, 1/6].
    # Rows with B = 0: {0, 1, 5}, counts 1, 1, 2 -> [0, 2, 1], total 3
    #   -> P(E_j | B=0) = (1 + [0, 2, 1]) / 6 = [1/6, 1/2, 1/3].
    np.testing.assert_allclose(clf.cond_prob_true_, [[2 / 7, 1 / 7, 4 / 7], [1 / 3, 1 / 2, 1 / 6]])
    np.testing.assert_allclose(clf.cond_prob_false_, [[1 / 5, 3 / 5, 1 / 5], [1 / 6, 1 / 2, 1 / 3]])

    # Query x = 2: nearest training rows x=1, x=3 (d 1 each; x=0 at d 2)
    #   C_A = 1 + 1 = 2, C_B = 0 + 1 = 1.
    #   r_A = (5/8 * 4/7) / (5/8 * 4/7 + 3/8 * 1/5) = (100/280) / (121/280) = 100/121
    #   r_B = (1/2 * 1/2) / (1/2 * 1/2 + 1/2 * 1/2) = 1/2  -> a tie: NOT predicted (r > 0.5).
    # Query x = 7.5: nearest x=7, x=8 (d 0.5 each; x=10 at d 2.5)
    #   C_A = 0, C_B = 2.
    #   r_A = (5/8 * 2/7) / (5/8 * 2/7 + 3/8 * 1/5) = (50/280) / (71/280) = 50/71
    #   r_B = (1/2 * 1/6) / (1/2 * 1/6 + 1/2 * 1/3) = 1/3
    Xq = np.array([[2.0], [7.5]])
    np.testing.assert_array_equal(clf.neighbour_label_counts(Xq), [[2, 1], [0, 2]])
    expected = np.array([[100 / 121, 1 / 2], [50 / 71, 1 / 3]])
    assert clf.predict_proba(Xq) == pytest.approx(expected)
    assert clf.decision_function(Xq) == pytest.approx(expected - 0.5)  # > 0 <=> predicted
    np.testing.assert_array_equal(clf.predict(Xq), [[1, 0], [1, 0]])


def _mlknn_reference(X, Y, Xq, k, s):
    """Loop-by-loop ML-kNN after Zhang & Zhou's pseudo-code (sklearn's own LOO neighbours)."""
    Xs, Xqs = _scaled(X, X), _scaled(X, Xq)
    n, m = Y.shape
    nn = NearestNeighbors(n_neighbors=k).fit(Xs)
    loo = nn.kneighbors(return_distance=False)  # X=None: each row without itself
    query = nn.kneighbors(Xqs, return_distance=False)
    R = np.zeros((len(Xq), m))
    for lab in range(m):
        prior = (s + Y[:, lab].sum()) / (2 * s + n)
        kj1, kj0 = np.zeros(k + 1), np.zeros(k + 1)
        for i in range(n):
            c = Y[loo[i], lab].sum()
            if Y[i, lab]:
                kj1[c] += 1
            else:
                kj0[c] += 1
        for q in range(len(Xq)):
            c = Y[query[q], lab].sum()
            p1 = prior * (s + kj1[c]) / (s * (k + 1) + kj1.sum())
            p0 = (1 - prior) * (s + kj0[c]) / (s * (k + 1) + kj0.sum())
            R[q, lab] = p1 / (p1 + p0)
    return R


@pytest.mark.parametrize(("k", "s"), [(1, 1.0), (5, 0.5), (10, 2.0)])
def test_mlknn_equals_a_loop_reference(multilabel, k, s):
    X, Y = multilabel
    clf = MLkNNClassifier(k=k, s=s).fit(X[:200], Y[:200])
    expected = _mlknn_reference(X[:200], Y[:200], X[200:], k, s)
    np.testing.assert_allclose(clf.predict_proba(X[200:]), expected, rtol=1e-12)
    np.testing.assert_array_equal(clf.predict(X[200:]), (expected > 0.5).astype(int))


@pytest.mark.slow
def test_leave_one_out_excludes_the_row_by_index_not_its_duplicates():
    # Rows 0, 1, 2 are identical; row 0 alone has label A.
    X = np.array([[0.0], [0.0], [0.0], [5.0], [6.0]])
    Y = np.array([[1, 0], [0, 1], [0, 1], [0, 1], [1, 0]])
    for k in (1, 2, 3):
        ind = leave_one_out_neighbors(NearestNeighbors().fit(X), X, k)
        assert ind.shape == (5, k)
        assert not (ind == np.arange(5)[:, None]).any()
        C = MLkNNClassifier(k=k).fit(X, Y).neighbour_label_counts()
        assert C[0, 0] == 0  # row 0 never counts itself ...
        assert C[0, 1] == k  # ... but does count its duplicates (then x=5, label B)
    C = MLkNNClassifier(k=2).fit(X, Y).neighbour_label_counts()
    np.testing.assert_array_equal(C[:3], [[0, 2], [1, 1], [1, 1]])


def test_mlknn_multiclass_and_binary_conventions(wine):
    X, y = wine
    clf = MLkNNClassifier().fit(X, y)
    R = clf.posterior(X)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[R.argmax(axis=1)])
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_allclose(clf.decision_function(X), R - 0.5)

    Xb, yb = X[y > 0], np.where(y[y > 0] == 2, "b", "a")
    clf = MLkNNClassifier(k=5).fit(Xb, yb)
    P, d = clf.predict_proba(Xb), clf.decision_function(Xb)
    assert d.shape == (len(yb),)
    # The two one-vs-rest models are mirror images: r_0 = 1 - r_1.
    full = MLkNNClassifier(k=5).fit(Xb, np.c_[yb == "a", yb == "b"].astype(int))
    np.testing.assert_allclose(full.predict_proba(Xb)[:, 1], P[:, 1], rtol=1e-12)
    np.testing.assert_allclose(full.predict_proba(Xb)[:, 0], P[:, 0], rtol=1e-12)
    np.testing.assert_allclose(d, P[:, 1] - 0.5)
    np.testing.assert_array_equal(clf.predict(Xb), np.where(d > 0, "b", "a"))


def test_k_larger_than_the_training_set_uses_every_other_row():
    clf = MLkNNClassifier(k=50).fit(X_TOY, Y_TOY)
    assert clf.n_neighbors_ == 5
    np.testing.assert_array_equal(clf.neighbour_label_counts(), Y_TOY.sum(axis=0) - Y_TOY)
    one = IBLRClassifier().fit(X_TOY[:1], ["a"])
    assert one.n_neighbors_ == 0
    np.testing.assert_array_equal(one.predict(X_TOY), ["a"] * 6)


@pytest.mark.parametrize("params", [{"k": 0}, {"k": 2.5}, {"s": 0.0}, {"s": -1}])
def test_mlknn_rejects_bad_parameters(params):
    with pytest.raises(ValueError, match=next(iter(params))):
        MLkNNClassifier(**params).fit(X_TOY, Y_TOY)


# --------------------------------------------------------------------------- IBLR
def test_iblr_features_are_leave_one_out_neighbour_fractions():
    clf = IBLRClassifier(k=2).fit(X_TOY, Y_TOY)
    # TOY_LOO_COUNTS / k, counted by hand above.
    expected = [[1.0, 0.5], [1.0, 0.5], [1.0, 0.0], [0.5, 0.5], [0.5, 0.5], [0.0, 1.0]]
    np.testing.assert_allclose(clf.neighbour_label_fractions(), expected)
    # Query x = 2: neighbours x=1 (A), x=3 (A, B).
    np.testing.assert_allclose(clf.neighbour_label_fractions([[2.0]]), [[1.0, 0.5]])


@pytest.mark.slow
@pytest.mark.parametrize("C", [1.0, 1e4])
def test_iblr_models_equal_sklearn_logistic_regression(multilabel, C):
    X, Y = multilabel
    k = 7
    clf = IBLRClassifier(k=k, C=C).fit(X, Y)
    # Independent features: sklearn's own leave-one-out neighbours (X=None).
    loo = NearestNeighbors(n_neighbors=k).fit(_scaled(X, X)).kneighbors(return_distance=False)
    Z = Y[loo].sum(axis=1) / k
    np.testing.assert_allclose(clf.neighbour_label_fractions(), Z)
    for lab in range(Y.shape[1]):
        lr = LogisticRegression(C=C, l1_ratio=0.0, max_iter=1000).fit(Z, Y[:, lab])
        np.testing.assert_allclose(clf.coef_[lab], lr.coef_[0], rtol=1e-10)
        assert clf.intercept_[lab] == pytest.approx(lr.intercept_[0], rel=1e-10)
    Xq = X[:20] + 0.1
    Zq = Y[NearestNeighbors(n_neighbors=k).fit(_scaled(X, X)).kneighbors(_scaled(X, Xq))[1]]
    eta = Zq.sum(axis=1) / k @ clf.coef_.T + clf.intercept_
    np.testing.assert_allclose(clf.decision_function(Xq), eta)
    np.testing.assert_allclose(clf.predict_proba(Xq), 1 / (1 + np.exp(-eta)))
    np.testing.assert_array_equal(clf.predict(Xq), (eta >= 0).astype(int))


@pytest.mark.slow
def test_iblr_constant_label_gets_a_constant_probability(multilabel):
    X, Y = multilabel
    Y = Y.copy()
    Y[:, 2] = 0
    clf = IBLRClassifier().fit(X, Y)
    assert not clf.coef_[2].any()
    assert clf.intercept_[2] == pytest.approx(constant_intercept(Y[:, 2]))
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P[:, 2], P[0, 2])
    assert not clf.predict(X)[:, 2].any()


def test_iblr_binary_is_one_mirrored_regression(wine):
    X, y = wine
    Xb, yb = X[y > 0], y[y > 0]
    clf = IBLRClassifier().fit(Xb, yb)
    np.testing.assert_array_equal(clf.coef_[0], -clf.coef_[1])
    Z = clf.neighbour_label_fractions()
    lr = LogisticRegression(C=1e4, l1_ratio=0.0, max_iter=1000).fit(Z, yb == 2)
    np.testing.assert_allclose(clf.coef_[1], lr.coef_[0], rtol=1e-10)
    d = clf.decision_function(Xb)
    np.testing.assert_allclose(clf.predict_proba(Xb)[:, 1], 1 / (1 + np.exp(-d / 2)))
    np.testing.assert_array_equal(clf.predict(Xb), np.where(d > 0, 2, 1))


@pytest.mark.slow
def test_iblr_raises_no_convergence_warning_on_separable_data():
    X, y = make_blobs(n_samples=300, centers=4, cluster_std=0.3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = IBLRClassifier().fit(X, y)
    assert clf.score(X, y) == 1.0
    assert np.isfinite(clf.coef_).all()


# --------------------------------------------------------------------------- BR-SVM
def test_br_svm_equals_independent_svms_multilabel(multilabel):
    X, Y = multilabel
    Xtr, Ytr, Xq = X[:200], Y[:200], X[200:]
    clf = BRSVMClassifier(C=2.0, gamma=0.3).fit(Xtr, Ytr)
    S = np.column_stack(
        [
            SVC(C=2.0, gamma=0.3)
            .fit(_scaled(Xtr, Xtr), Ytr[:, lab])
            .decision_function(_scaled(Xtr, Xq))
            for lab in range(Y.shape[1])
        ]
    )
    np.testing.assert_allclose(clf.decision_function(Xq), S, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(Xq), (S > 0).astype(int))


@pytest.fixture(scope="module")
def many_labels():
    """140 distinct labels (more than an int8 holds) on 60 rows: label k is 1 where a random
    direction of the 4 features is above its own cut, so every column differs."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 4))
    W, cuts = rng.normal(size=(4, 140)), rng.uniform(-0.5, 0.5, 140)
    Y = (X @ W > cuts).astype(int)
    assert len({tuple(col) for col in Y.T}) == 140
    return X, Y


@pytest.mark.parametrize("name", ["br_svm", "lr"])
def test_one_vs_rest_baselines_keep_each_label_with_its_model_past_128_labels(many_labels, name):
    """Each label's scores are those of the model fitted on that label's column alone.
    scikit-learn's OneVsRestClassifier given the int8 indicator the baselines build scrambles
    the columns past 128 labels: every label got another label's model (corel5k, 374 labels:
    AP 0.03 instead of 0.27)."""
    X, Y = many_labels
    Xs, some = _scaled(X, X), [0, 1, 64, 127, 128, 129, 139]  # the oracle on a few of them
    if name == "br_svm":
        clf = BRSVMClassifier(C=2.0, gamma=0.3).fit(X, Y)
        got = clf.decision_function(X)[:, some]
        want = np.column_stack(
            [SVC(C=2.0, gamma=0.3).fit(Xs, Y[:, k]).decision_function(Xs) for k in some]
        )
    else:
        clf = OneVsRestLRClassifier(C=1.0).fit(X, Y)
        got = clf.predict_proba(X)[:, some]
        want = np.column_stack(
            [LogisticRegression(C=1.0).fit(Xs, Y[:, k]).predict_proba(Xs)[:, 1] for k in some]
        )
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_br_svm_one_vs_rest_multiclass_and_binary(wine):
    X, y = wine
    clf = BRSVMClassifier().fit(X, y)
    Xs = _scaled(X, X)
    S = np.column_stack([SVC().fit(Xs, y == c).decision_function(Xs) for c in range(3)])
    np.testing.assert_allclose(clf.decision_function(X), S, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), S.argmax(axis=1))
    assert not hasattr(clf, "predict_proba")

    Xb, yb = X[y > 0], y[y > 0]
    clf = BRSVMClassifier().fit(Xb, yb)
    d = SVC().fit(_scaled(Xb, Xb), yb == 2).decision_function(_scaled(Xb, Xb))
    np.testing.assert_allclose(clf.decision_function(Xb), d, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(Xb), np.where(d > 0, 2, 1))


def test_br_svm_constant_labels_score_plus_or_minus_one(multilabel):
    X, Y = multilabel
    Y = Y.copy()
    Y[:, 0], Y[:, 1] = 1, 0
    clf = BRSVMClassifier().fit(X, Y)
    assert clf.estimators_[0] is None and clf.estimators_[1] is None
    S = clf.decision_function(X)
    np.testing.assert_array_equal(S[:, :2], np.tile([1.0, -1.0], (len(X), 1)))
    np.testing.assert_array_equal(clf.predict(X)[:, :2], np.tile([1, 0], (len(X), 1)))
    # a single non-constant label: still its own SVM, the others score +1 / -1
    Y[:, 3:] = 0
    S = BRSVMClassifier().fit(X, Y).decision_function(X)
    np.testing.assert_array_equal(
        S[:, [0, 1, 3, 4, 5]], np.tile([1.0, -1, -1, -1, -1], (len(X), 1))
    )
    d = SVC().fit(_scaled(X, X), Y[:, 2]).decision_function(_scaled(X, X))
    np.testing.assert_allclose(S[:, 2], d, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- all baselines
@pytest.mark.slow
@pytest.mark.parametrize("name", list(BASELINES))
def test_wine_accuracy(wine, name):
    X, y = wine
    assert cross_val_score(BASELINES[name](), X, y, cv=5).mean() >= 0.9


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlknn", "iblr", "br_svm"])
def test_multilabel_average_precision(multilabel, name):
    X, Y = multilabel
    clf = BASELINES[name]().fit(X[:200], Y[:200])
    assert average_precision(Y[200:], clf.decision_function(X[200:])) >= 0.8
    assert clf.predict(X[200:]).shape == Y[200:].shape


@pytest.mark.slow
def test_scaling_is_inside_the_estimators(wine):
    X, y = wine
    for name in BASELINES:
        a = BASELINES[name]().fit(X, y).predict(X)
        b = BASELINES[name]().fit(X * 1000.0 + 7.0, y).predict(X * 1000.0 + 7.0)
        np.testing.assert_array_equal(a, b, err_msg=name)


def test_factories():
    assert set(MULTICLASS_ONLY) <= set(BASELINES)
    for name in MULTICLASS_ONLY:
        pipe = BASELINES[name]()
        assert isinstance(pipe, Pipeline)
        assert pipe.steps[0][1].feature_range == (-1, 1)
        clone(pipe)
    assert BASELINES["knn"](k=3).steps[-1][1].n_neighbors == 3
    assert BASELINES["lr"](C=0.5).steps[-1][1].C == 0.5


def test_frequency_classifier_is_scikit_learns_dummy_on_every_output():
    """Oracle: scikit-learn's DummyClassifier ("prior") on the same targets; for a 0/1
    label matrix, one DummyClassifier per label (a label is predicted when more than half
    the training rows carry it)."""
    from sklearn.dummy import DummyClassifier

    from sblr.baselines import FrequencyClassifier

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = rng.choice(["b", "a", "c"], size=40, p=[0.5, 0.3, 0.2])
    ours = FrequencyClassifier().fit(X, y)
    dummy = DummyClassifier(strategy="prior").fit(X, y)
    Xq = rng.normal(size=(7, 3))
    np.testing.assert_array_equal(ours.predict(Xq), dummy.predict(Xq))
    np.testing.assert_allclose(ours.predict_proba(Xq), dummy.predict_proba(Xq))
    Y = (rng.random((40, 4)) < [0.1, 0.7, 0.3, 0.55]).astype(int)
    ml = FrequencyClassifier().fit(X, Y)
    for j in range(4):
        d = DummyClassifier(strategy="prior").fit(X, Y[:, j])
        np.testing.assert_array_equal(ml.predict(Xq)[:, j], d.predict(Xq))
        np.testing.assert_allclose(ml.predict_proba(Xq)[:, j], d.predict_proba(Xq)[:, 1])
    assert ml.decision_function(Xq).shape == (7, 4)
    two = FrequencyClassifier().fit(X, y == "a")
    assert two.decision_function(Xq).shape == (7,)  # two classes: one score


@pytest.mark.slow
def test_tuned_lr_chooses_c_and_its_cut_as_a_hand_loop_does():
    """Oracle: scikit-learn's one-vs-rest logistic regression on the [-1, 1]-scaled features,
    per C on the same 5 shuffled folds (seed 0), out-of-fold probabilities, one micro-F1 cut
    (sblr.decision.fit_cuts) and its micro-F1; the best C (first on ties) and its cut."""
    from sklearn.datasets import make_multilabel_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold
    from sklearn.multiclass import OneVsRestClassifier

    from sblr.baselines import OneVsRestLRClassifier
    from sblr.decision import decide, fit_cuts
    from sblr.metrics import micro_f1

    X, Y = make_multilabel_classification(n_samples=120, n_features=6, n_classes=4, random_state=1)
    Xs = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
    Cs = (0.01, 1.0, 100.0)
    best = (-1.0, None, None)
    for C in Cs:
        P = np.empty(Y.shape)
        for fit, held in KFold(5, shuffle=True, random_state=0).split(Xs):
            lr = OneVsRestClassifier(LogisticRegression(C=C, max_iter=1000)).fit(Xs[fit], Y[fit])
            P[held] = lr.predict_proba(Xs[held])
        cuts = fit_cuts(P, Y, "micro_f1")
        value = micro_f1(Y, decide(P, cuts))
        if value > best[0]:
            best = (value, C, cuts)
    calls = []
    model = OneVsRestLRClassifier(Cs=Cs, threshold="micro_f1").fit(
        X, Y, progress=lambda done, total: calls.append((done, total))
    )
    assert model.C_ == best[1]
    # label by label: 4 labels × 3 Cs × 5 folds, then the final fit's 4 at once
    assert calls == [(i, 64) for i in range(1, 61)] + [(64, 64)]
    np.testing.assert_allclose(model.threshold_, best[2], rtol=1e-6)
    P = model.predict_proba(X)
    np.testing.assert_array_equal(model.predict(X), decide(P, model.threshold_))
    # without Cs and a rule: the plain model, C = 1 and the cut 0.5
    plain = OneVsRestLRClassifier().fit(X, Y)
    assert plain.C_ == 1.0 and np.all(plain.threshold_ == 0.5)
