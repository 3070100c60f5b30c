"""Hostile numbers: overflowing ranges, far query rows, NaN/inf wherever the pipeline meets them.

The oracles are independent computations: exact rational arithmetic for the
scaling, the same data without the overflowing factor for the evidence and the
models (min-max scaling makes every method scale-invariant), a direct
difference loop for the distances, and mpmath for probabilities.
"""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_multilabel_classification

from sblr import (
    SBLRCV,
    DataError,
    SBLRClassifier,
    SimilarityFeaturizer,
    SMLClassifier,
    SparseSBLRClassifier,
    SparseSBLRCV,
)
from sblr.logistic import fit_logistic
from sblr.similarity import (
    kernel_block,
    minmax_fit,
    minmax_transform,
    resolve_gamma,
    scale_rows,
    sq_distances,
)

MODELS = (SMLClassifier, SBLRClassifier, SparseSBLRClassifier)
HUGE = 1e300  # times features of about 1e8: max - min exceeds the float range


def _separable(multilabel):
    """Features in [-1.5e8, 1.5e8] (30% zeros), so that HUGE * (max - min) overflows."""
    rng = np.random.default_rng(0)
    if multilabel:
        X, y = make_multilabel_classification(
            n_samples=120, n_features=5, n_classes=3, n_labels=2, random_state=1
        )
        X = X.astype(float)
    else:
        X, y = make_blobs(
            n_samples=120, centers=[[-3, -3, 0], [3, 3, 0], [3, -3, 3]], random_state=1
        )
    X = X - X.mean(axis=0)
    X *= 1.5e8 / np.abs(X).max(axis=0)
    X[rng.random(X.shape) < 0.3] = 0.0
    with np.errstate(over="ignore"):
        assert np.isinf((X * HUGE).max(axis=0) - (X * HUGE).min(axis=0)).all()
    return X, y


@pytest.mark.slow
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("multilabel", [False, True], ids=["multiclass", "multilabel"])
def test_overflowing_range_gives_the_evidence_of_the_unscaled_data(multilabel, sparse):
    X, y = _separable(multilabel)
    wrap = sp.csr_matrix if sparse else np.asarray
    plain = SimilarityFeaturizer().fit(X, y)
    huge = SimilarityFeaturizer().fit(wrap(X * HUGE), y)
    assert huge.gamma_ == pytest.approx(plain.gamma_, rel=1e-12)
    np.testing.assert_allclose(
        huge.training_evidence(), plain.training_evidence(), rtol=1e-10, atol=1e-12
    )
    Xq = X[::3] * 0.5
    np.testing.assert_allclose(
        huge.transform(wrap(Xq * HUGE)), plain.transform(Xq), rtol=1e-10, atol=1e-12
    )


@pytest.mark.slow
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("multilabel", [False, True], ids=["multiclass", "multilabel"])
@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_models_on_an_overflowing_range_predict_as_on_the_unscaled_data(model, multilabel, sparse):
    X, y = _separable(multilabel)
    wrap = sp.csr_matrix if sparse else np.asarray
    expected = model().fit(X, y).predict(X)
    got = model().fit(wrap(X * HUGE), y).predict(wrap(X * HUGE))
    np.testing.assert_array_equal(got, expected)
    assert len(np.unique(got, axis=0)) > 1  # not one constant prediction


def _exact_scaled(x, lo, hi, shift=True):
    """2 (x - lo) / (hi - lo) - 1 (or 2 x / (hi - lo)) in exact rational arithmetic."""
    x, lo, hi = Fraction(x), Fraction(lo), Fraction(hi)
    return float(2 * (x - lo) / (hi - lo) - 1) if shift else float(2 * x / (hi - lo))


def test_scaling_of_huge_ranges_is_exact_up_to_rounding():
    X = np.array(
        [
            [-1.7e308, 1.0e308, 0.0, 3.0],
            [1.7e308, 1.7e308, 1e-300, 3.0],
            [2.5e307, 1.3e308, -1e-300, 3.0],
            [-1e308, 1.1e308, 5e-301, 3.0],
        ]
    )
    lo, hi = minmax_fit(X)
    Z = minmax_transform(X, lo, hi)
    assert np.all((Z >= -1) & (Z <= 1))
    S = scale_rows(sp.csr_matrix(X), lo, hi, shift=False).toarray()
    for i in range(X.shape[0]):
        for j in range(3):  # the last column is constant: 0
            assert Z[i, j] == pytest.approx(_exact_scaled(X[i, j], lo[j], hi[j]), abs=1e-15)
            assert S[i, j] == pytest.approx(
                _exact_scaled(X[i, j], lo[j], hi[j], shift=False), rel=1e-15
            )
    np.testing.assert_array_equal(Z[:, 3], 0.0)
    np.testing.assert_array_equal(S[:, 3], 0.0)


def _direct_sq_distances(A, B):
    with np.errstate(over="ignore", invalid="ignore"):
        return ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2)


def test_squared_distances_of_far_rows_are_never_nan():
    A = np.array([[1e308, 1e308], [1.2e154, 0.0], [np.inf, 0.0], [0.5, -0.5]])
    B = np.array([[1.0, 1.0], [1.0, 0.0], [-1.0, 0.5]])
    expected = _direct_sq_distances(A, B)  # inf where the distance exceeds the float range
    for a, b in [(A, B), (sp.csr_matrix(A[[0, 1, 3]]), sp.csr_matrix(B))]:
        D = sq_distances(a, b)
        rows = slice(None) if a.shape[0] == 4 else [0, 1, 3]
        np.testing.assert_allclose(D, expected[rows], rtol=1e-12)
    np.testing.assert_allclose(sq_distances(B, A), expected.T, rtol=1e-12)  # far columns
    # the far-but-finite row with a tiny gamma: a real, non-zero similarity
    K = kernel_block(A, B, "rbf", gamma=1e-308)
    np.testing.assert_allclose(K, np.exp(-1e-308 * expected), rtol=1e-12)
    assert 0 < K[1, 0] < 1
    with np.errstate(over="ignore"):
        l1 = np.abs(A[:, None, :] - B[None, :, :]).sum(axis=2)
    np.testing.assert_allclose(kernel_block(A, B, "laplacian", gamma=1.0), np.exp(-l1))


def _direct_evidence(Zq, Zt, Y, gamma):
    """Mean rbf evidence from explicit differences (inf distance -> similarity 0)."""
    K = np.exp(-gamma * _direct_sq_distances(Zq, Zt))
    return (K @ Y) / Y.sum(axis=0)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_far_query_rows_get_finite_evidence_equal_to_a_direct_loop(sparse):
    rng = np.random.default_rng(3)
    X = rng.random((40, 2))
    y = (X[:, 0] > 0.5).astype(int)
    Xq = np.array([[1e308, 0.5], [-1e308, 0.2], [1e300, 0.9], [0.3, 0.7]])
    wrap = sp.csr_matrix if sparse else np.asarray
    f = SimilarityFeaturizer(gamma=2.0).fit(wrap(X), y)
    F = f.transform(wrap(Xq))
    Zt = minmax_transform(X, *minmax_fit(X))
    Zq = minmax_transform(Xq, *minmax_fit(X))
    assert np.isinf(Zq[:2, 0]).all()  # beyond the float range after scaling
    np.testing.assert_allclose(F, _direct_evidence(Zq, Zt, f.Y_fit_, 2.0), rtol=1e-10, atol=1e-300)
    np.testing.assert_array_equal(F[:3], 0.0)
    for model in (SBLRClassifier, SparseSBLRClassifier):
        clf = model().fit(wrap(X), y)
        P = clf.predict_proba(wrap(Xq))
        assert np.isfinite(P).all()
        # a far row has no evidence: the model answers as for all-zero evidence
        np.testing.assert_array_equal(
            clf.predict(wrap(Xq[:3])), clf.predict_from_evidence(np.zeros((3, 2)))
        )


def test_kernels_without_a_far_limit_raise_instead_of_returning_nan():
    rng = np.random.default_rng(6)
    X = rng.random((20, 2))
    y = (X[:, 0] > 0.5).astype(int)
    far = np.array([[1e308, 0.5]])
    for kernel in ("linear", "cosine"):
        f = SimilarityFeaturizer(kernel=kernel).fit(X, y)
        with pytest.raises(DataError, match="NaN or inf"):
            f.transform(far)
        with pytest.raises(DataError, match="NaN or inf"):
            SBLRClassifier(kernel=kernel, normalize="mean").fit(X, y).predict(far)
    nan_kernel = SimilarityFeaturizer(kernel=lambda A, B: np.full((len(A), len(B)), np.nan))
    with pytest.raises(DataError, match="callable"):
        nan_kernel.fit_transform(X, y)


@pytest.mark.parametrize("approx", ["nystroem", "rff"])
def test_approximate_evidence_of_far_query_rows(approx):
    rng = np.random.default_rng(4)
    X = rng.random((300, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    f = SimilarityFeaturizer(gamma=1.0, approx=approx, n_components=100).fit(X, y)
    near = X[:5] * 0.9
    far = np.array([[1e308, 0.5, 0.5], [0.5, -1e308, 0.5]])
    F = f.transform(np.vstack([far, near]))
    np.testing.assert_array_equal(F[:2], 0.0)  # kernel 0 to every training row: exact
    np.testing.assert_allclose(F[2:], f.transform(near), rtol=1e-12)
    if approx == "nystroem":  # a huge but finite scaled row: also exactly no similarity
        np.testing.assert_array_equal(f.transform(np.array([[1e300, 0.5, 0.5]])), 0.0)


def test_nan_or_inf_evidence_is_refused_by_the_logistic_layer():
    X, y = make_blobs(n_samples=60, centers=3, random_state=0)
    f = SimilarityFeaturizer().fit(X, y)
    F = f.training_evidence()
    for bad in (np.nan, np.inf, -np.inf):
        G = F.copy()
        G[7, 1] = bad
        for est in (SBLRClassifier(), SparseSBLRClassifier(lam=1e-2)):
            with pytest.raises(DataError, match="NaN or inf"):
                est.fit_from_evidence(f, G)
            fitted = est.fit_from_evidence(f, F)
            with pytest.raises(DataError, match="NaN or inf"):
                fitted.predict_from_evidence(G[:10])
        with pytest.raises(DataError, match="NaN or inf"):
            fit_logistic(G, (y == 1).astype(float), lam=1e-2)
    with pytest.raises(ValueError, match="shape"):
        SBLRClassifier().fit_from_evidence(f, F[:-1])


def test_solver_refuses_bad_labels_penalties_and_warm_starts():
    rng = np.random.default_rng(5)
    Z = rng.random((30, 2))
    y = (Z[:, 0] > 0.5).astype(float)
    for bad_y in (np.where(y == 1, np.nan, 0.0), y * 2.0):
        with pytest.raises(DataError, match="0/1"):
            fit_logistic(Z, bad_y, lam=1e-2)
    for lam in (np.nan, np.inf, -1.0):
        with pytest.raises(ValueError, match="lam"):
            fit_logistic(Z, y, lam=lam)
    with pytest.raises(ValueError, match="warm start"):
        fit_logistic(Z, y, lam=1e-2, coef_init=np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="warm start"):
        fit_logistic(Z, y, lam=1e-2, intercept_init=np.inf)
    with pytest.raises(DataError, match="overflow"):
        fit_logistic(Z * 1e300, y, lam=0.0)


def test_bad_gamma_values_raise_and_zero_variance_gives_one():
    X = np.array([[-1.0, 0.0], [1.0, 0.0]])
    for gamma in (np.inf, np.nan, 0.0, -1.0, True, "auto"):
        with pytest.raises(ValueError, match="gamma"):
            resolve_gamma(gamma, X)
    with pytest.raises(DataError, match="not finite"):
        resolve_gamma("scale", np.array([[np.inf, 0.0], [0.0, 1.0]]))
    assert resolve_gamma("scale", np.zeros((4, 3))) == 1.0  # scikit-learn's SVC convention
    assert resolve_gamma("scale", X) == pytest.approx(1.0 / (2 * 0.5))
    for gamma in (np.inf, np.nan, -1.0):
        with pytest.raises(ValueError, match="gamma"):
            SBLRClassifier(gamma=gamma).fit(X, [0, 1])
    # a training set of constant columns: gamma does not matter, evidence stays finite
    f = SimilarityFeaturizer().fit(np.ones((4, 2)), [0, 0, 1, 1])
    assert f.gamma_ == 1.0 and np.isfinite(f.training_evidence()).all()


@pytest.mark.parametrize(
    "params, match",
    [
        ({"gammas": []}, "gammas"),
        ({"gammas": [1.0, np.nan]}, "gammas"),
        ({"gammas": [-1.0]}, "gammas"),
        ({"gammas": [np.inf]}, "gammas"),
        ({"lams": [np.inf]}, "lams"),
        ({"lams": [-1e-3]}, "lams"),
        ({"lams": []}, "lams"),
    ],
)
def test_cv_estimators_refuse_non_finite_or_empty_grids(params, match):
    X, y = make_blobs(n_samples=60, centers=2, random_state=0)
    with pytest.raises(ValueError, match=match):
        SparseSBLRCV(**params).fit(X, y)
    if "gammas" in params:
        with pytest.raises(ValueError, match=match):
            SBLRCV(**params).fit(X, y)


@pytest.mark.parametrize("model", [*MODELS, SparseSBLRCV, SimilarityFeaturizer])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_inf_in_x_is_refused(model, bad):
    X, y = make_blobs(n_samples=40, centers=2, random_state=0)
    kwargs = {"gammas": [1.0], "lams": [1e-2]} if model is SparseSBLRCV else {}
    Xbad = X.copy()
    Xbad[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        model(**kwargs).fit(Xbad, y)
    fitted = model(**kwargs).fit(X, y)
    with pytest.raises(ValueError, match="NaN|infinity"):
        fitted.transform(Xbad) if model is SimilarityFeaturizer else fitted.predict(Xbad)


def test_probabilities_stay_defined_when_every_logit_is_very_negative():
    X, y = make_blobs(n_samples=90, centers=3, random_state=0)
    clf = SBLRClassifier().fit(X, y)
    # evidence along a direction that lowers every logit: all pi_k underflow in float
    v = np.linalg.solve(clf.coef_, -np.ones(3))
    F = np.outer([1.0, 2000.0], v / np.abs(v).max())
    eta = clf.logits_from_evidence(F)
    assert (eta[1] < -800).all()
    P = clf.proba_from_evidence(F)
    for row, logits in zip(P, eta, strict=True):
        pi = [mpmath.mpf(1) / (1 + mpmath.exp(-mpmath.mpf(float(t)))) for t in logits]
        total = sum(pi)
        np.testing.assert_allclose(row, [float(p / total) for p in pi], rtol=1e-9)
