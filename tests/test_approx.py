"""Approximate (Nystroem / random Fourier feature) class evidence."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from sblr.similarity import (
    AUTO_APPROX_ROWS,
    SimilarityFeaturizer,
    approx_class_evidence,
    minmax_transform,
    resolve_approx,
)

# Measured relative errors at D=800 on the data below (seeds 0-2): nystroem
# 1e-4 to 4e-4, rff 0.06 to 0.07.  The limits leave a wide margin.
LIMIT_800 = {"nystroem": 2e-3, "rff": 0.12}


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=1500, n_features=10, n_informative=6, n_classes=3, random_state=0
    )
    return X, y


@pytest.fixture(scope="module")
def exact(data):
    X, y = data
    f = SimilarityFeaturizer().fit(X, y)
    return f.training_evidence(), f.transform(X[:300])


def _rel(A, B):
    return np.linalg.norm(A - B) / np.linalg.norm(B)


@pytest.mark.slow
@pytest.mark.parametrize("approx", ["nystroem", "rff"])
def test_error_shrinks_with_n_components(data, exact, approx):
    X, y = data
    train_exact, query_exact = exact
    train_err, query_err = [], []
    for D in (50, 200, 800):
        f = SimilarityFeaturizer(approx=approx, n_components=D).fit(X, y)
        train_err.append(_rel(f.training_evidence(), train_exact))
        query_err.append(_rel(f.transform(X[:300]), query_exact))
    assert train_err[0] > train_err[1] > train_err[2]
    assert query_err[0] > query_err[1] > query_err[2]
    assert train_err[2] < LIMIT_800[approx]
    assert query_err[2] < LIMIT_800[approx]


@pytest.mark.slow
@pytest.mark.parametrize("approx", ["nystroem", "rff"])
@pytest.mark.parametrize("normalize", ["mean", "sum"])
def test_leave_one_out_identity(data, approx, normalize):
    X, y = data
    f = SimilarityFeaturizer(approx=approx, n_components=200, normalize=normalize).fit(X, y)
    Y = f.Y_fit_.astype(float)
    # Raw sums: LOO evidence == query evidence of the same rows minus phi(x_i).phi(x_i) y_i.
    loo = f.training_evidence(normalize="sum")
    full = f.query_evidence(X, normalize="sum")
    phi = f.feature_map_.transform(f.X_fit_)
    self_term = np.einsum("ij,ij->i", phi, phi)[:, None] * Y
    np.testing.assert_allclose(loo, full - self_term, rtol=0, atol=1e-10)
    np.testing.assert_allclose(f.self_sim_, np.einsum("ij,ij->i", phi, phi), atol=1e-12)
    # Counts as in the exact mode; "mean" divides by them.
    if normalize == "mean":
        counts = Y.sum(axis=0) - Y
        np.testing.assert_allclose(f.fit_transform(X, y), loo / counts, atol=1e-12)
    else:
        np.testing.assert_allclose(f.fit_transform(X, y), loo, atol=1e-12)


@pytest.mark.slow
def test_block_size_does_not_change_result(data):
    X, y = data
    big = SimilarityFeaturizer(approx="rff", n_components=100).fit(X, y)
    small = clone(big).set_params(working_memory=0.05).fit(X, y)  # blocks of ~30 rows
    np.testing.assert_allclose(small.fit_transform(X, y), big.fit_transform(X, y), atol=1e-10)
    np.testing.assert_allclose(small.transform(X[:50]), big.transform(X[:50]), atol=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("approx", ["nystroem", "rff"])
def test_shapes_and_other_group_indicator(data, approx):
    X, y = data
    f = SimilarityFeaturizer(approx=approx, n_components=64).fit(X, y)
    assert f.S_.shape == (64, 3)
    assert f.self_sim_.shape == (1500,)
    assert f.fit_transform(X, y).shape == (1500, 3)
    assert f.transform(X[:7]).shape == (7, 3)
    # A different group indicator goes through its own phi(X)^T Y.
    G = np.stack([y == 0, y != 0, np.ones_like(y, bool), y == 2], axis=1).astype(int)
    Fg = f.training_evidence(Y=G, normalize="sum")
    assert Fg.shape == (1500, 4)
    Ft = f.training_evidence(normalize="sum")
    np.testing.assert_allclose(Fg[:, 0], Ft[:, 0], atol=1e-10)
    np.testing.assert_allclose(Fg[:, 2], Ft.sum(axis=1), atol=1e-10)
    Xs = minmax_transform(X[:5], f.data_min_, f.data_max_)
    sums, counts = approx_class_evidence(Xs, f.feature_map_, f.S_, f.Y_fit_)
    np.testing.assert_allclose(sums, f.query_evidence(X[:5], normalize="sum"))
    np.testing.assert_array_equal(counts, np.broadcast_to(f.Y_fit_.sum(axis=0), (5, 3)))


@pytest.mark.slow
def test_uses_scaled_rows_and_resolved_gamma(data):
    X, y = data
    f = SimilarityFeaturizer(approx="nystroem", n_components=50, gamma=0.3).fit(X * 1e3, y)
    assert f.feature_map_.gamma == 0.3
    g = SimilarityFeaturizer(approx="rff", n_components=50).fit(X * 1e3 + 7, y)
    assert g.feature_map_.gamma == g.gamma_
    h = SimilarityFeaturizer(approx="rff", n_components=50).fit(X, y)
    np.testing.assert_allclose(g.fit_transform(X * 1e3 + 7, y), h.fit_transform(X, y), atol=1e-8)


def test_default_is_auto_exact_on_small_data_and_params_stored():
    f = SimilarityFeaturizer()
    assert (f.approx, f.n_components, f.random_state) == ("auto", 500, 0)
    p = SimilarityFeaturizer(approx="rff", n_components=7, random_state=3).get_params()
    assert (p["approx"], p["n_components"], p["random_state"]) == ("rff", 7, 3)
    X = np.random.default_rng(0).normal(size=(20, 3))
    f = SimilarityFeaturizer().fit(X, np.arange(20) % 2)
    assert f.approx_ is None and not hasattr(f, "S_")


@pytest.mark.slow
def test_auto_switches_to_nystroem_at_the_documented_size():
    """From AUTO_APPROX_ROWS training rows on, "auto" approximates; the result stays close."""
    from sblr import SparseSBLRClassifier

    n = AUTO_APPROX_ROWS
    X, y = make_classification(
        n_samples=n + 100, n_features=4, n_informative=3, n_redundant=0, random_state=0
    )
    X_tr, y_tr, X_q = X[:n], y[:n], X[n:]
    auto = SimilarityFeaturizer(gamma=1.0).fit(X_tr, y_tr)
    exact = SimilarityFeaturizer(gamma=1.0, approx=None).fit(X_tr, y_tr)
    assert auto.approx_ == "nystroem" and exact.approx_ is None
    F_auto, F_exact = auto.transform(X_q), exact.transform(X_q)
    assert np.linalg.norm(F_auto - F_exact) / np.linalg.norm(F_exact) < 1e-2
    below = SimilarityFeaturizer(gamma=1.0).fit(X_tr[:-1], y_tr[:-1])
    assert below.approx_ is None
    clf = SparseSBLRClassifier(gamma=1.0, lam=1e-3).fit(X_tr, y_tr)
    assert clf.approx_ == "nystroem" and clf.featurizer_.approx_ == "nystroem"
    assert SparseSBLRClassifier(approx=None).fit(X_tr[:50], y_tr[:50]).approx_ is None


def test_resolve_approx():
    assert AUTO_APPROX_ROWS == 20_000
    assert resolve_approx("auto", "rbf", AUTO_APPROX_ROWS - 1) is None
    assert resolve_approx("auto", "rbf", AUTO_APPROX_ROWS) == "nystroem"
    assert resolve_approx("auto", "cosine", 10**6) is None
    assert resolve_approx(None, "rbf", 10**6) is None
    assert resolve_approx("rff", "rbf", 5) == "rff"


@pytest.mark.parametrize("kernel", ["laplacian", "linear", "cosine", lambda A, B: A @ B.T])
def test_non_rbf_kernel_with_approx_raises(kernel):
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="approx='nystroem'.*rbf kernel only"):
        SimilarityFeaturizer(kernel=kernel, approx="nystroem").fit(X, np.arange(20) % 2)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"approx": "pca"}, "'approx' parameter"),
        ({"approx": "rff", "n_components": 0}, "n_components"),
        ({"approx": "rff", "n_components": 2.5}, "n_components"),
        ({"approx": "rff", "n_components": "10"}, "n_components"),
    ],
)
def test_bad_approx_params(params, match):
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match=match):
        SimilarityFeaturizer(**params).fit(X, np.arange(20) % 2)
