"""Sparse (CSR) input: the evidence, models and selection of the dense data, never densified."""

import numpy as np
import pytest
import scipy.sparse as sp

from sblr import SBLRClassifier, SimilarityFeaturizer, SMLClassifier, SparseSBLRClassifier
from sblr.tuning import SparseSBLRCV, tune


def _data(n=150, d=40, m=4, density=0.15, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed) * 5.0
    X.data -= 1.0  # negative values too
    W = rng.normal(size=(d, m))
    Y = (X @ W > np.quantile(X @ W, 0.6, axis=0)).astype(int)
    return sp.csr_matrix(X), Y


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("gamma", ["scale", 0.05])
def test_featurizer_sparse_equals_dense(kernel, gamma):
    X, Y = _data()
    Q = _data(n=30, seed=1)[0]
    fs = SimilarityFeaturizer(kernel=kernel, gamma=gamma).fit(X, Y)
    fd = SimilarityFeaturizer(kernel=kernel, gamma=gamma).fit(X.toarray(), Y)
    assert fs.sparse_input_ and not fd.sparse_input_
    assert fs.gamma_ == pytest.approx(fd.gamma_, rel=1e-12)
    np.testing.assert_allclose(fs.training_evidence(), fd.training_evidence(), atol=1e-10)
    np.testing.assert_allclose(fs.transform(Q), fd.transform(Q.toarray()), atol=1e-10)
    # a query in the other format is scaled the way the training rows were
    np.testing.assert_allclose(fs.transform(Q.toarray()), fd.transform(Q), atol=1e-10)


@pytest.mark.slow
def test_training_rows_stay_sparse():
    X, Y = _data()
    f = SimilarityFeaturizer().fit(X, Y)
    assert sp.issparse(f.X_fit_) and f.X_fit_.nnz <= X.nnz
    # 4,000 x 200,000 would be 6.4 GB dense; sparse it has <= 80,000 stored values
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, 4000, 80_000), rng.integers(0, 200_000, 80_000)
    big = sp.csr_matrix((rng.normal(size=80_000), (rows, cols)), shape=(4000, 200_000))
    y = rng.integers(0, 3, size=4000)
    F = SimilarityFeaturizer(gamma=1.0).fit_transform(big, y)
    assert F.shape == (4000, 3) and np.isfinite(F).all()


@pytest.mark.parametrize(
    "model",
    [SMLClassifier(), SBLRClassifier(gamma=0.05), SparseSBLRClassifier(gamma=0.05, lam=1e-3)],
    ids=["SML", "SBLR", "SparseSBLR"],
)
def test_models_sparse_equal_dense(model):
    X, Y = _data()
    Q = _data(n=40, seed=2)[0]
    ms = model.fit(X, Y)
    coef_s = getattr(ms, "coef_", None)
    pred_s, dec_s = ms.predict(Q), ms.decision_function(Q)
    md = model.fit(X.toarray(), Y)
    np.testing.assert_array_equal(pred_s, md.predict(Q.toarray()))
    np.testing.assert_allclose(dec_s, md.decision_function(Q.toarray()), atol=1e-7)
    if coef_s is not None:
        np.testing.assert_allclose(coef_s, md.coef_, atol=1e-7)


@pytest.mark.slow
def test_selection_sparse_equals_dense():
    X, Y = _data(n=200)
    grid = [1.0, 0.1, 0.01]
    rs = tune(SparseSBLRClassifier(), X, Y, gammas=grid, lams=grid)
    rd = tune(SparseSBLRClassifier(), X.toarray(), Y, gammas=grid, lams=grid)
    assert rs.best_params == rd.best_params
    np.testing.assert_allclose(rs.scores.score, rd.scores.score, atol=1e-9)
    cv = SparseSBLRCV(gammas=grid, lams=grid, cv=3).fit(X, Y)
    assert (
        cv.best_params_
        == SparseSBLRCV(gammas=grid, lams=grid, cv=3).fit(X.toarray(), Y).best_params_
    )


def test_nystroem_on_sparse_equals_dense():
    X, Y = _data()
    kw = {"gamma": 0.05, "approx": "nystroem", "n_components": 60}
    fs = SimilarityFeaturizer(**kw).fit(X, Y)
    fd = SimilarityFeaturizer(**kw).fit(X.toarray(), Y)
    np.testing.assert_allclose(fs.training_evidence(), fd.training_evidence(), atol=1e-8)


@pytest.mark.parametrize("kernel", ["linear", "cosine", lambda A, B: A @ B.T])
def test_shift_dependent_kernels_refuse_sparse(kernel):
    X, Y = _data()
    with pytest.raises(TypeError, match="Sparse input works with kernel in"):
        SimilarityFeaturizer(kernel=kernel).fit(X, Y)
    with pytest.raises(TypeError, match="Pass a dense array"):
        SBLRClassifier(kernel=kernel, normalize="mean").fit(X, Y)
