"""Class evidence against a direct double loop, blocking, scaling, leave-one-out."""

import numpy as np
import pytest

from sblr import DataError, SimilarityFeaturizer
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


# ------------------------------------------------ tiled, in-place rbf evidence (dense rows)
def _reference_rbf_sums(Xq, Xt, Y, gamma, loo):
    """Plain NumPy: distances from differences, the full kernel matrix, K @ Y."""
    D = ((Xq[:, None, :] - Xt[None, :, :]) ** 2).sum(-1)
    K = np.exp(-gamma * D)
    if loo:
        np.fill_diagonal(K, 0.0)
    return K @ Y


@pytest.fixture
def multilabel_rows():
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(700, 6))
    Y = (rng.uniform(size=(700, 4)) < 0.3).astype(int)
    Q = rng.uniform(-1.5, 1.5, size=(130, 6))
    return X, Y, Q


# 256 MiB: 128 x 1024 tiles (strips of 128 rows, the last one partial; one tile per strip
# here); 1 MiB: 128 x 256 tiles (several per strip); 0.05 MiB: 40 x 40; 1e-6 MiB: 1 x 1.
@pytest.mark.slow
@pytest.mark.parametrize("working_memory", [256, 1.0, 0.05, 1e-6])
@pytest.mark.parametrize("gamma", [0.05, 1.3, 20.0])
def test_tiled_rbf_evidence_equals_plain_reference(multilabel_rows, working_memory, gamma):
    X, Y, Q = multilabel_rows
    if working_memory < 1e-3:  # 1 x 1 tiles: keep the Python loop short
        X, Y, Q = X[:60], Y[:60], Q[:20]
    for Xq, loo in ((X, True), (Q, False)):
        sums, counts = class_evidence(
            Xq, X, Y, gamma=gamma, leave_one_out=loo, working_memory=working_memory
        )
        np.testing.assert_allclose(
            sums, _reference_rbf_sums(Xq, X, Y, gamma, loo), rtol=1e-12, atol=0
        )
        expected_counts = np.broadcast_to(Y.sum(0) - (Y if loo else 0), sums.shape)
        np.testing.assert_array_equal(counts, expected_counts)
    # the training rows as queries without leave-one-out (same object): own terms included
    sums, _ = class_evidence(X, X, Y, gamma=gamma, working_memory=working_memory)
    np.testing.assert_allclose(sums, _reference_rbf_sums(X, X, Y, gamma, False), rtol=1e-12)


def test_tiled_rbf_evidence_equals_the_blocked_path(multilabel_rows):
    # the tiled path against the general row-block path (kernel_block), which is unchanged
    from sblr.similarity._exact import _blocked_evidence

    X, Y, Q = multilabel_rows
    Yf = Y.astype(float)
    for Xq, loo in ((X, True), (Q, False)):
        sums, _ = class_evidence(Xq, X, Y, gamma=0.7, leave_one_out=loo)
        blocked = _blocked_evidence(Xq, X, Yf, "rbf", 0.7, loo, 256)
        np.testing.assert_allclose(sums, blocked, rtol=1e-12, atol=0)


@pytest.mark.slow
def test_tiled_rbf_evidence_does_not_depend_on_the_number_of_threads(monkeypatch):
    from sblr.similarity import _exact

    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(1100, 5))
    Y = (rng.uniform(size=(1100, 3)) < 0.4).astype(int)
    Q = rng.uniform(-1, 1, size=(600, 5))
    results = {}
    for threads in (1, 2, 3, 5):
        monkeypatch.setattr(_exact, "_evidence_threads", lambda n_values, t=threads: t)
        # 0.5 MiB: 128-row strips, so 9 strips over 4 lanes in the symmetric path
        results[threads] = [
            class_evidence(X, X, Y, gamma=2.0, leave_one_out=True, working_memory=0.5)[0],
            class_evidence(Q, X, Y, gamma=2.0, working_memory=0.5)[0],
        ]
    for threads in (2, 3, 5):
        for a, b in zip(results[1], results[threads], strict=True):
            np.testing.assert_array_equal(a, b)  # to the last bit
    np.testing.assert_allclose(results[1][0], _reference_rbf_sums(X, X, Y, 2.0, True), rtol=1e-12)


def test_tiled_rbf_evidence_threads_follow_the_budget(monkeypatch):
    from sblr import _threads

    big = _threads.THREADED_MIN_VALUES
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    assert _threads.evidence_threads(big - 1) == 1  # small work: the calling thread
    monkeypatch.setenv("SBLR_NUM_THREADS", "1")
    assert _threads.evidence_threads(big) == 1
    monkeypatch.setenv("SBLR_NUM_THREADS", "3")
    assert _threads.evidence_threads(big) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # as in a joblib worker process on 2 cores
    assert _threads.evidence_threads(big) == 1


def test_tiled_rbf_evidence_restores_the_blas_threads(monkeypatch, blas_as_loaded):
    # BLAS runs on one thread while tiles run; the setting is process-wide in OpenBLAS, so
    # evidence computed in several threads at once must still restore it at the end
    import threading

    from threadpoolctl import threadpool_info

    from sblr.similarity import _exact

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    monkeypatch.setattr(_exact, "_evidence_threads", lambda n_values: 2)
    before = blas_threads()
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(600, 4))
    Y = (rng.uniform(size=(600, 2)) < 0.5).astype(int)
    expected = class_evidence(X, X, Y, gamma=1.0, leave_one_out=True, working_memory=0.2)[0]
    start = threading.Barrier(3)
    results = []

    def run():
        start.wait()
        for _ in range(3):
            results.append(
                class_evidence(X, X, Y, gamma=1.0, leave_one_out=True, working_memory=0.2)[0]
            )

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 9 and all(np.array_equal(r, expected) for r in results)
    assert blas_threads() == before


def test_tiled_rbf_evidence_with_far_query_rows(multilabel_rows):
    # query rows too large for the expansion (and inf) go through the rescaling path
    X, Y, Q = multilabel_rows
    far = np.vstack([Q[:3], [[1e300] + [0.0] * 5], [[np.inf] + [0.0] * 5], Q[3:5]])
    sums, _ = class_evidence(far, X, Y, gamma=0.5)
    np.testing.assert_array_equal(sums[3:5], 0.0)
    near = np.r_[0:3, 5:7]
    np.testing.assert_allclose(
        sums[near], _reference_rbf_sums(far[near], X, Y, 0.5, False), rtol=1e-12
    )


def test_sparse_rows_give_the_dense_evidence(multilabel_rows):
    # CSR rows keep the row-block path; the featurizer scales them without the shift
    import scipy.sparse as sp

    X, Y, Q = multilabel_rows
    X = np.where(np.abs(X) < 0.6, 0.0, X)  # mostly zeros
    Q = np.where(np.abs(Q) < 0.6, 0.0, Q)
    for Xq, loo in ((X, True), (Q, False)):
        Xq_sparse = sp.csr_matrix(Xq)
        Xq_arg, X_arg = (Xq_sparse, Xq_sparse) if loo else (Xq_sparse, sp.csr_matrix(X))
        sums, _ = class_evidence(Xq_arg, X_arg, Y, gamma=0.9, leave_one_out=loo)
        np.testing.assert_allclose(
            sums, _reference_rbf_sums(Xq, X, Y, 0.9, loo), rtol=1e-12, atol=0
        )
    dense = SimilarityFeaturizer(gamma=0.9).fit(X, Y)
    sparse = SimilarityFeaturizer(gamma=0.9).fit(sp.csr_matrix(X), Y)
    assert sparse.sparse_input_ and not dense.sparse_input_
    np.testing.assert_allclose(
        sparse.training_evidence(), dense.training_evidence(), rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(
        sparse.transform(sp.csr_matrix(Q)), dense.transform(Q), rtol=1e-12, atol=1e-15
    )


def test_tiled_rbf_evidence_memory_is_bounded():
    # no (n, n) block: tiles of 128 x 1024, per-lane sums, the extended rows
    import tracemalloc

    rng = np.random.default_rng(5)
    n = 3_000
    X = rng.uniform(-1, 1, size=(n, 8))
    Y = (rng.uniform(size=(n, 3)) < 0.3).astype(int)
    tracemalloc.start()
    try:
        class_evidence(X, X, Y, gamma=1.0, leave_one_out=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.2 * 8 * n * n  # a full kernel block would take 72 MB


@pytest.mark.slow  # a second or more: the full suite and CI run it
@pytest.mark.parametrize("m, rate", [(3, 0.3), (80, 0.02)])  # dense targets, sparse ones
def test_blocked_sparse_evidence_holds_one_kernel_block_at_a_time(m, rate):
    # sparse rows go by (n_train, rows) blocks of working_memory / 2; two blocks alive at
    # once (the next computed while the last was still held) took 134 MB more on delicious
    import tracemalloc

    import scipy.sparse as sp

    rng = np.random.default_rng(6)
    n = 4_000
    X = sp.csr_matrix((rng.uniform(size=(n, 30)) < 0.2).astype(float))
    Y = (rng.uniform(size=(n, m)) < rate).astype(np.int8)
    working_memory = 64  # MiB: blocks of 1,048 rows, 33.5 MB each
    block = 8 * n * (working_memory * 2**20 // (16 * n))
    tracemalloc.start()
    try:
        sums, _ = class_evidence(
            X, X, Y, gamma=1.0, leave_one_out=True, working_memory=working_memory
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the dense rows given twice as copies: still each row's own term left out
    dense_sums, _ = class_evidence(X.toarray(), X.toarray(), Y, gamma=1.0, leave_one_out=True)
    np.testing.assert_allclose(sums, dense_sums, rtol=1e-10)
    results = 4 * 8 * n * m  # the sums, counts and targets as floats, and their sparse form
    assert peak < 1.5 * block + results, (peak, block)


def test_label_indicators_take_one_byte_a_label():

    Y = np.array([[0, 1, 1], [1, 0, 0]], dtype=np.int64)
    classes, ind = label_indicator(Y)
    assert ind.dtype == np.int8 and np.array_equal(ind, Y) and not np.shares_memory(ind, Y)
    assert label_indicator(np.array(["b", "a", "b"]))[1].dtype == np.int8
    with pytest.raises(DataError, match="0/1"):
        label_indicator(np.array([[0, 2], [1, 0]]))
    with pytest.raises(DataError, match="0/1"):
        label_indicator(np.array([[0.0, 0.5], [1.0, 0.0]]))
    assert label_indicator(np.array([[0.0, 1.0], [True, False]]))[1].tolist() == [[0, 1], [1, 0]]


def test_scalings_sparse_statistics_match_dense_ones():
    """sblr.scaling (the [-1, 1] scaling and γ = "scale") is imported by the dashboard's first
    page, which must not load scikit-learn (tests/test_startup.py checks the import); its
    sparse column mean and variance (implicit zeros included) must equal NumPy's on the
    dense matrix."""
    import scipy.sparse as sp

    from sblr.scaling import _column_mean_variance, scale_gamma

    rng = np.random.default_rng(0)
    S = sp.lil_matrix(sp.random(300, 40, density=0.05, random_state=0) * 100 + sp.eye(300, 40))
    S[:, [0, 39]] = 0.0  # columns without a stored value, first and last
    S = sp.csr_matrix(S)
    means, variances = _column_mean_variance(S)
    dense = S.toarray()
    np.testing.assert_allclose(means, dense.mean(axis=0), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(variances, dense.var(axis=0), rtol=1e-12, atol=1e-15)
    # γ = scale of the sparse data equals that of the same data dense (shifted scaling)
    assert scale_gamma(S) == pytest.approx(scale_gamma(dense), rel=1e-12)
    assert (
        scale_gamma(S) == SimilarityFeaturizer(gamma="scale").fit(S, rng.integers(0, 3, 300)).gamma_
    )


@pytest.mark.parametrize("kernel", ["rbf", "laplacian", "cosine"])
@pytest.mark.parametrize("leave_one_out", [True, False])
def test_wide_sparse_targets_give_the_double_loops_evidence(kernel, leave_one_out):
    """Many classes, few of them per row (as Mulan's 983-label delicious): the kernel blocks
    are multiplied by the sparse targets, block transposed; the sums are the double loop's."""
    import scipy.sparse as sp

    from sblr.similarity import _exact

    rng = np.random.default_rng(5)
    n, m = 40, 80
    X = sp.random(n, 6, density=0.4, format="csr", random_state=1)
    if kernel == "cosine":  # (sparse rows: the rbf and laplacian kernels only)
        X = X.toarray()
    Y = np.zeros((n, m))
    Y[np.arange(n), rng.integers(0, m, n)] = 1.0
    Y[np.arange(n), rng.integers(0, m, n)] = 1.0
    assert _exact._sparse_targets(Y) is not None  # the path under test
    sums, _ = class_evidence(X, X, Y, kernel=kernel, gamma=0.7, leave_one_out=leave_one_out)
    dense = X if kernel == "cosine" else X.toarray()
    K = _exact.kernel_block(dense, dense, kernel, 0.7)
    expected = np.zeros((n, m))
    for i in range(n):
        for j in range(n):
            if not (leave_one_out and i == j):
                expected[i] += K[i, j] * Y[j]
    np.testing.assert_allclose(sums, expected, rtol=1e-12, atol=1e-12)
