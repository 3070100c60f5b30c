"""Class evidence against a direct double loop, blocking, scaling, leave-one-out."""

import numpy as np
import pytest

from sblr import SimilarityFeaturizer
from sblr.similarity import class_evidence, label_indicator, minmax_fit, minmax_transform


def _phi(a, b, kernel, gamma):
    if kernel == "rbf":
        return np.exp(-gamma * np.sum((a - b) ** 2))
    if kernel == "laplacian":
        return np.exp(-gamma * np.sum(np.abs(a - b)))
    if kernel == "linear":
        return float(a @ b)
    if kernel == "cosine":
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        return float(a @ b / (na * nb)) if na and nb else 0.0
    return kernel(a[None], b[None])[0, 0]


def _double_loop(Xq, Xt, Y, kernel, gamma, loo, normalize):
    """f_k(x_i) = sum over class-k training rows j (j != i when loo) of Phi(x_i, x_j)."""
    out = np.zeros((len(Xq), Y.shape[1]))
    for i in range(len(Xq)):
        for k in range(Y.shape[1]):
            total, count = 0.0, 0
            for j in range(len(Xt)):
                if Y[j, k] and not (loo and i == j):
                    total += _phi(Xq[i], Xt[j], kernel, gamma)
                    count += 1
            out[i, k] = total if normalize == "sum" else (total / count if count else 0.0)
    return out


def _poly(A, B):
    return (1.0 + A @ B.T) ** 2


@pytest.fixture
def toy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(9, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -2.0]
    Y = np.array(
        [
            [1, 0, 1],
            [1, 1, 0],
            [0, 1, 0],
            [1, 0, 0],
            [0, 0, 1],
            [1, 1, 1],
            [0, 1, 0],
            [0, 0, 1],
            [1, 0, 0],
        ]
    )
    Xq = rng.normal(size=(4, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -2.0]
    return X, Y, Xq


@pytest.mark.parametrize("kernel", ["rbf", "laplacian", "linear", "cosine", _poly])
@pytest.mark.parametrize("normalize", ["mean", "sum"])
def test_featurizer_matches_double_loop(toy, kernel, normalize):
    X, Y, Xq = toy
    f = SimilarityFeaturizer(kernel=kernel, gamma=0.7, normalize=normalize)
    train = f.fit_transform(X, Y)
    lo, hi = X.min(0), X.max(0)
    Xs = 2 * (X - lo) / (hi - lo) - 1
    Xqs = 2 * (Xq - lo) / (hi - lo) - 1
    np.testing.assert_allclose(
        train, _double_loop(Xs, Xs, Y, kernel, 0.7, True, normalize), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_allclose(
        f.transform(Xq),
        _double_loop(Xqs, Xs, Y, kernel, 0.7, False, normalize),
        rtol=1e-10,
        atol=1e-12,
    )


@pytest.mark.parametrize("working_memory", [1e-6, 0.0003, 0.001, 256])
def test_blocked_evidence_equals_unblocked(working_memory):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(57, 4))
    Y = (rng.uniform(size=(57, 5)) < 0.4).astype(int)
    K = np.exp(-0.9 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    full = K @ Y
    for loo in (False, True):
        sums, counts = class_evidence(
            X, X, Y, gamma=0.9, leave_one_out=loo, working_memory=working_memory
        )
        expected = full - (Y if loo else 0)  # Phi(x_i, x_i) = 1 for rbf
        np.testing.assert_allclose(sums, expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(
            counts, np.broadcast_to(Y.sum(0) - (Y if loo else 0), Y.shape)
        )


def test_scaling_to_unit_box_with_constant_column():
    X = np.array([[1.0, 3.0, 7.0], [3.0, 3.0, 9.0], [2.0, 3.0, 8.0]])
    lo, hi = minmax_fit(X)
    Z = minmax_transform(X, lo, hi)
    np.testing.assert_array_equal(Z, [[-1, 0, -1], [1, 0, 1], [0, 0, 0]])
    # Query rows use the training range and are not clipped.
    np.testing.assert_array_equal(
        minmax_transform(np.array([[5.0, 4.0, 7.0]]), lo, hi), [[3.0, 0.0, -1.0]]
    )


def test_gamma_scale_is_one_over_d_times_variance():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 4))
    f = SimilarityFeaturizer().fit(X, rng.integers(0, 2, 30))
    assert f.gamma_ == pytest.approx(1.0 / (4 * f.X_fit_.var()))
    assert SimilarityFeaturizer(gamma=0.25).fit(X, rng.integers(0, 2, 30)).gamma_ == 0.25


def test_training_row_leaves_itself_out():
    # Two far-apart rows of different classes: with its own term left out, a
    # row gets no evidence for its own class (no other member), so the
    # training features do not leak the label.
    X = np.array([[0.0], [1.0]])
    y = np.array(["a", "b"])
    f = SimilarityFeaturizer(gamma=100.0, normalize="sum")
    train = f.fit_transform(X, y)
    np.testing.assert_allclose(train, [[0.0, np.exp(-400.0)], [np.exp(-400.0), 0.0]])
    # As a query, the same row counts every training row, itself included.
    np.testing.assert_allclose(f.transform(X), [[1.0, np.exp(-400.0)], [np.exp(-400.0), 1.0]])
    # Mean normalization divides by the rows counted: none for the own class -> 0.
    mean = SimilarityFeaturizer(gamma=100.0).fit_transform(X, y)
    assert mean[0, 0] == 0.0 and mean[1, 1] == 0.0


def test_label_indicator_and_feature_names():
    classes, Y = label_indicator(np.array([3, 1, 3, 2]))
    np.testing.assert_array_equal(classes, [1, 2, 3])
    np.testing.assert_array_equal(Y, [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]])
    f = SimilarityFeaturizer().fit(np.eye(4), np.array([3, 1, 3, 2]))
    assert list(f.get_feature_names_out()) == ["evidence_1", "evidence_2", "evidence_3"]


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"gamma": -1.0}, "gamma"),
        ({"gamma": "auto"}, "gamma"),
        ({"kernel": "poly"}, "kernel"),
        ({"normalize": "max"}, "normalize"),
        ({"working_memory": 0}, "working_memory"),
    ],
)
def test_bad_parameters_are_named(params, match):
    with pytest.raises(ValueError, match=match):
        SimilarityFeaturizer(**params).fit(np.eye(3), [0, 1, 1])


def test_callable_with_wrong_shape_is_reported():
    with pytest.raises(ValueError, match="expected"):
        bad = SimilarityFeaturizer(kernel=lambda A, B: np.ones((len(A), len(B) + 1)))
        bad.fit_transform(np.eye(3)[:, :2], [0, 1, 1])
