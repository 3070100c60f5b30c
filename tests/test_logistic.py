"""The logistic layer: KKT conditions, lambda_max, and scikit-learn as an oracle."""

import threading
import time

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import sblr._newton as _newton
from sblr.logistic import (
    constant_intercept,
    fit_logistic,
    fit_logistic_layer,
    kkt_violation,
    lambda_max,
    solve_layer,
)

# A scikit-learn oracle that stopped short of its optimum would be compared as if it had
# reached it: its ConvergenceWarning fails the test instead.
pytestmark = pytest.mark.filterwarnings("error::sklearn.exceptions.ConvergenceWarning")


def _kkt_by_hand(Z, y, beta, b, lam):
    """Optimality conditions written out, independently of sblr.logistic.kkt_violation."""
    p = 1.0 / (1.0 + np.exp(-(Z @ beta + b)))
    grad = Z.T @ (p - y) / len(y)
    worst = abs(np.mean(p - y))  # unpenalized intercept: gradient zero
    for t in range(len(beta)):
        if beta[t] != 0:
            worst = max(worst, abs(grad[t] + lam * np.sign(beta[t])))
        else:
            worst = max(worst, abs(grad[t]) - lam)
    return worst


def _correlated(n=300, m=6, seed=0):
    """Features like class evidence: strongly correlated, in a narrow positive band."""
    rng = np.random.default_rng(seed)
    common = rng.uniform(0.2, 0.4, size=(n, 1))
    Z = common + 0.03 * rng.normal(size=(n, m))
    logit = 40 * (Z[:, 0] - Z[:, 1]) + 15 * (Z[:, 2] - common[:, 0])
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(float)
    return Z, y


@pytest.mark.parametrize("lam", [1e-1, 1e-2, 1e-3, 1e-4, 1e-5])
def test_solution_satisfies_l1_kkt_conditions(lam):
    Z, y = _correlated()
    fit = fit_logistic(Z, y, lam)
    assert fit.converged
    assert _kkt_by_hand(Z, y, fit.coef, fit.intercept, lam) < 1e-6
    assert fit.kkt == pytest.approx(kkt_violation(Z, y, fit.coef, fit.intercept, lam))


def test_lambda_max_is_the_threshold_for_an_all_zero_beta():
    Z, y = _correlated(seed=3)
    lmax = lambda_max(Z, y)
    at = fit_logistic(Z, y, lmax * 1.0001)
    assert np.all(at.coef == 0)
    # with beta = 0 the intercept is the logit of the base rate
    assert at.intercept == pytest.approx(np.log(y.mean() / (1 - y.mean())))
    below = fit_logistic(Z, y, lmax * 0.9)
    assert np.count_nonzero(below.coef) >= 1


def test_l1_objective_is_no_worse_than_sklearn_saga():
    """Same objective, solved by scikit-learn: ours must be at least as low."""
    Z, y = _correlated(seed=5)
    n, lam = len(y), 1e-3

    def objective(beta, b):
        eta = Z @ beta + b
        return np.mean(np.logaddexp(0, eta) - y * eta) + lam * np.abs(beta).sum()

    ours = fit_logistic(Z, y, lam)
    # scikit-learn: C * sum(loss) + ||w||_1  ==  n*C * (mean loss + lam ||w||_1) for C = 1/(n lam)
    sk = LogisticRegression(
        C=1 / (n * lam), l1_ratio=1.0, solver="saga", tol=1e-10, max_iter=200_000
    ).fit(Z, y)
    assert objective(ours.coef, ours.intercept) <= objective(sk.coef_[0], sk.intercept_[0]) + 1e-9


@pytest.mark.parametrize("lam", [1e-3, 1e-5])
def test_integer_weights_give_the_fit_on_the_rows_repeated(lam):
    """A bootstrap resample is solved on its distinct rows weighted by their counts: the
    optimum must be the one on the rows repeated (both solved to a tight tolerance), and meet
    the weighted optimality conditions written out by hand; at lam > 0 with every Newton step
    exact too, and at least as low as scikit-learn's saga given the same weights."""
    Z, y = _correlated(n=120, seed=3)
    rng = np.random.default_rng(0)
    rows = rng.integers(0, len(y), size=len(y))
    counts = np.bincount(rows, minlength=len(y))
    drawn = np.flatnonzero(counts)
    repeated = fit_logistic(Z[rows], y[rows], lam, tol=1e-10)
    weighted = fit_logistic(Z[drawn], y[drawn], lam, tol=1e-10, sample_weight=counts[drawn])
    np.testing.assert_allclose(weighted.coef, repeated.coef, rtol=1e-6, atol=1e-6)
    assert weighted.intercept == pytest.approx(repeated.intercept, abs=1e-6)
    assert _kkt_by_hand(Z[rows], y[rows], weighted.coef, weighted.intercept, lam) < 1e-9
    # the layer (several problems in lockstep, a row of weight 0 left out) and exact steps
    Y = np.column_stack([y, 1 - y, (Z[:, 3] > np.median(Z[:, 3])).astype(float)])
    coef, intercept, _, kkt = fit_logistic_layer(
        Z, Y, lam, tol=1e-10, sample_weight=counts, exact_steps=True
    )
    assert kkt.max() <= 1e-10
    for k in range(Y.shape[1]):
        assert _kkt_by_hand(Z[rows], Y[rows, k], coef[k], intercept[k], lam) < 1e-9
    np.testing.assert_allclose(coef[0], repeated.coef, rtol=1e-6, atol=1e-6)
    if lam:
        n = counts.sum()

        def objective(beta, b):
            eta = Z[rows] @ beta + b
            return np.mean(np.logaddexp(0, eta) - y[rows] * eta) + lam * np.abs(beta).sum()

        sk = LogisticRegression(
            C=1 / (n * lam), l1_ratio=1.0, solver="saga", tol=1e-10, max_iter=100_000
        ).fit(Z[drawn], y[drawn], sample_weight=counts[drawn])
        assert (
            objective(weighted.coef, weighted.intercept)
            <= objective(sk.coef_[0], sk.intercept_[0]) + 1e-9
        )


def test_sample_weights_are_checked():
    Z, y = _correlated(n=40)
    for bad in (np.ones(39), -np.ones(40), np.zeros(40), np.full(40, np.nan)):
        with pytest.raises(ValueError, match="sample_weight"):
            fit_logistic(Z, y, 1e-3, sample_weight=bad)
    # a class constant on the rows of positive weight: the smoothed intercept of those rows
    Y = np.column_stack([y, np.r_[np.zeros(20), np.ones(20)]])
    weight = np.r_[np.ones(20), np.zeros(20)]
    _, intercept, _, _ = fit_logistic_layer(Z, Y, 1e-3, sample_weight=weight)
    assert intercept[1] == pytest.approx(constant_intercept(np.zeros(20)))


def test_ridge_solution_matches_sklearn_lbfgs():
    Z, y = _correlated(seed=7)
    n, ridge = len(y), 1e-3
    ours = fit_logistic(Z, y, 0.0, ridge=ridge, tol=1e-10)
    # scikit-learn: C * sum(loss) + 1/2 ||w||^2  ==  n*C * (mean loss + 1/(2 n C) ||w||^2)
    sk = LogisticRegression(C=1 / (n * ridge), solver="lbfgs", tol=1e-12, max_iter=100_000)
    sk.fit(Z, y)
    np.testing.assert_allclose(ours.coef, sk.coef_[0], rtol=1e-4, atol=1e-4)
    assert ours.intercept == pytest.approx(sk.intercept_[0], abs=1e-4)


def test_warm_start_reaches_the_same_solution():
    Z, y = _correlated(seed=9)
    cold = fit_logistic(Z, y, 1e-4)
    warm = fit_logistic(Z, y, 1e-4, coef_init=fit_logistic(Z, y, 1e-3).coef)
    np.testing.assert_allclose(warm.coef, cold.coef, atol=1e-5)


def test_constant_class_gets_a_finite_smoothed_intercept():
    # (0 + 0.5) / (9 + 1) = 0.05 -> logit = log(0.05 / 0.95)
    assert constant_intercept(np.zeros(9)) == pytest.approx(np.log(0.05 / 0.95))
    assert constant_intercept(np.ones(9)) == pytest.approx(-np.log(0.05 / 0.95))


# --------------------------------------------------------------------------- many classes, threads
def _many_class_problem(q=23, n=150, seed=4):
    rng = np.random.default_rng(seed)
    F = rng.random((n, 9))
    Y = (F - 0.5) @ rng.standard_normal((9, q)) + 0.3 * rng.standard_normal((n, q)) > 0
    Y = Y.astype(float)
    Y[:, 3] = 0.0  # a constant class
    return F, Y


@pytest.mark.slow
@pytest.mark.parametrize("lam", [0.0, 1e-3])
def test_layer_result_does_not_depend_on_the_number_of_threads(lam):
    """Oracle: each class solved alone by fit_logistic (the serial definition)."""
    import threading

    from sblr.logistic import fit_logistic_layer

    F, Y = _many_class_problem()
    calls = []
    caller = threading.get_ident()
    serial = fit_logistic_layer(F, Y, lam, ridge=1e-6, n_threads=1)
    threaded = fit_logistic_layer(
        F,
        Y,
        lam,
        ridge=1e-6,
        n_threads=3,
        progress=lambda done, total: calls.append((done, total, threading.get_ident())),
    )
    for a, b in zip(serial, threaded, strict=True):
        np.testing.assert_array_equal(a, b)
    for k in range(Y.shape[1]):
        if Y[:, k].min() == Y[:, k].max():
            continue
        # the layer solves its classes in lockstep chunks: the same steps as alone, with
        # the sums done in one product for the chunk (so equal up to rounding)
        alone = fit_logistic(F, Y[:, k], lam, ridge=1e-6, tol=1e-6)
        np.testing.assert_allclose(threaded[0][k], alone.coef, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(threaded[0][k] == 0, alone.coef == 0)
        assert threaded[2][k] == alone.n_iter
    # progress: from the calling thread, every count once (the constant class first), to q
    assert [c[0] for c in calls] == list(range(1, Y.shape[1] + 1))
    assert {c[1] for c in calls} == {Y.shape[1]} and {c[2] for c in calls} == {caller}


def test_single_threaded_blas_is_restored_by_the_last_of_overlapping_users(blas_as_loaded):
    """Two threads hold it at once and the first leaves first: BLAS stays on one thread
    until the second leaves (from a thread that is not the main one), then the limit the
    process had comes back (a set/restore per thread left it at 1 for good)."""
    import threading

    from threadpoolctl import threadpool_info

    from sblr._threads import _thread_local_blas_setters, single_threaded_blas

    if not _thread_local_blas_setters():
        pytest.skip("this BLAS has no openblas_set_num_threads_local (not OpenBLAS >= 0.3.27)")

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    loaded = np.linalg.solve(np.eye(3), np.ones(3))  # loads both BLAS
    assert loaded.shape == (3,)
    before = blas_threads()
    seen = {}
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with single_threaded_blas():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second():
        first_in.wait(10)
        with single_threaded_blas():
            second_in.set()
            first_out.wait(10)
            seen["after the first left"] = blas_threads()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert set(seen["after the first left"]) == {1}
    assert blas_threads() == before


def test_worker_budget_follows_the_environment(monkeypatch):
    from sblr._threads import worker_budget

    monkeypatch.setenv("SBLR_NUM_THREADS", "3")
    assert worker_budget() == 3
    monkeypatch.setenv("SBLR_NUM_THREADS", "zero")
    with pytest.raises(ValueError, match="SBLR_NUM_THREADS"):
        worker_budget()
    monkeypatch.delenv("SBLR_NUM_THREADS")
    assert 1 <= worker_budget() <= 8


def _lasso_by_sklearn(H, c, lam):
    """min 1/2 x'Hx + c'x + lam |x|_1 as scikit-learn's Lasso: with H = L L',
    1/2 |L'x + L^-1 c|^2 = 1/2 x'Hx + c'x + const, and Lasso's objective is
    1/(2p) |y - A w|^2 + alpha |w|_1 (p rows), so A = L', y = -L^-1 c, alpha = lam / p."""
    from sklearn.linear_model import Lasso

    L = np.linalg.cholesky(H)
    A, target = L.T, -np.linalg.solve(L, c)
    fit = Lasso(alpha=lam / len(c), fit_intercept=False, tol=1e-14, max_iter=1_000_000)
    return fit.fit(A, target).coef_


def _qp_kkt_violation(H, c, lam, x):
    """Largest violation of the optimality conditions of min 1/2 x'Hx + c'x + lam |x|_1:
    with g = Hx + c, g_j = -lam sign(x_j) where x_j != 0 and |g_j| <= lam where x_j = 0."""
    g = H @ x + c
    return float(
        np.where(x != 0, np.abs(g + lam * np.sign(x)), np.maximum(np.abs(g) - lam, 0.0)).max()
    )


@pytest.mark.parametrize(("seed", "p"), [(0, 30), (1, 30), (2, 30), (3, 30), (4, 120), (5, 120)])
def test_feature_sign_qp_meets_the_lasso_optimality_conditions_on_correlated_quadratics(seed, p):
    """The exact lasso step of the Newton method, checked by the optimality (KKT) conditions
    of the quadratic -- strictly convex here, so they hold at its one minimizer only -- from
    cold and warm starts, with many coordinates entering at once (at p = 120 more than the
    _MAX_ADDED that enter together, so some wait for a later round); at p = 30 also against
    scikit-learn's coordinate descent on the same quadratic (at p = 120 it needs seconds to
    reach 1e-7)."""
    from sblr._newton import _MAX_ADDED, _lasso_qp

    rng = np.random.default_rng(seed)
    common = rng.normal(size=(400, 1))
    A = common + 0.2 * rng.normal(size=(400, p))  # strongly correlated columns
    H = A.T @ A / 400
    c = rng.normal(size=p)
    lam = 0.05 * np.abs(c).max()
    if p > _MAX_ADDED:  # from zero, more coordinates violate than enter at once
        assert np.count_nonzero(np.abs(c) > lam) > _MAX_ADDED
    oracle = _lasso_by_sklearn(H, c, lam) if p <= 30 else None
    first = None
    for start in (np.zeros(p), rng.normal(size=p), None):
        if start is None:  # warm: half of the solution's coordinates
            start = first * (rng.uniform(size=p) < 0.5)
        x = _lasso_qp(H, c, np.full(p, lam), start)
        assert _qp_kkt_violation(H, c, lam, x) < 1e-9
        assert 3 <= np.count_nonzero(x) < p  # a non-trivial active set
        if oracle is not None:
            np.testing.assert_allclose(x, oracle, atol=1e-7)
            assert np.array_equal(np.sign(x), np.sign(np.round(oracle, 9)))
        first = x if first is None else first


def test_feature_sign_qp_drops_an_added_coordinate_that_comes_out_with_the_wrong_sign():
    """Two violating coordinates added together: the joint solve gives the second the
    wrong sign (x = (5.2, -4.8), objective 4.45 > 0 at the start).  Feature-sign search
    must decrease the objective at every step, so that step may not be taken.  The
    optimum, worked by hand, keeps only the first: x1 = (1 - 0.5) / 1 = 0.5, and then
    |grad_2| = |0.99 * 0.5 - 0.9| = 0.405 <= 0.5."""
    from sblr._newton import _lasso_qp

    H = np.array([[1.0, 0.99], [0.99, 1.0]])
    c = np.array([-1.0, -0.9])
    pen = np.full(2, 0.5)

    def objective(x):
        return 0.5 * x @ H @ x + c @ x + pen @ np.abs(x)

    values = [objective(_lasso_qp(H, c, pen, np.zeros(2), max_iter=k)) for k in range(1, 6)]
    assert values[0] < 0.0 and np.all(np.diff(values) <= 1e-15)
    np.testing.assert_allclose(_lasso_qp(H, c, pen, np.zeros(2)), [0.5, 0.0], atol=1e-12)


def test_feature_sign_qp_solves_a_singular_active_system():
    """Two identical coordinates, both violating by the same amount from zero, enter
    together: their 2 × 2 system [[1, 1], [1, 1]] is singular, and Cholesky fails on it
    (its second pivot is exactly 1 - 1 = 0).  The search must still reach the optimum,
    worked by hand: with s = x1 + x2 (both >= 0 at best), 1/2 s² - s + 1/2 s is least at
    s = 1/2, objective -1/8; the split between x1 and x2 is free."""
    from sblr._newton import _lasso_qp

    H = np.ones((2, 2))
    c = np.array([-1.0, -1.0])
    pen = np.full(2, 0.5)
    x = _lasso_qp(H, c, pen, np.zeros(2))
    assert np.isfinite(x).all() and (x >= 0).all()
    assert x.sum() == pytest.approx(0.5, abs=1e-9)
    assert 0.5 * x @ H @ x + c @ x + pen @ np.abs(x) == pytest.approx(-0.125, abs=1e-12)


def test_compiled_kernel_releases_the_gil_and_caches_where_it_can():
    """The layer's threads run feature-sign search side by side only if the compiled kernel
    releases the GIL.  Where numba finds no folder to cache compiled code in (here: a function
    without a source file), the kernel is compiled in memory instead of failing."""
    from sblr import _compiled

    for kernel in (_compiled.feature_sign, _compiled._solve, _compiled._model):
        assert kernel.targetoptions.get("nogil") is True
    namespace = {}
    exec("def twice(v):\n    return 2 * v\n", namespace)  # no file: nothing to cache in
    assert _compiled._jit(namespace["twice"])(21) == 42


def test_working_set_steps_reach_the_optimum_that_full_steps_reach(monkeypatch):
    """With an L1 term a Newton step minimizes its model over a working set only (the
    non-zero coefficients and those whose gradient is near lam): the Hessian is formed on
    that set.  On 40 correlated features with planted sparse classes, the steps must still end
    at the optimum: the KKT conditions written out by hand on every class, and the same
    solution as full steps (the working set turned off), zero for zero."""
    import sblr.logistic as logistic

    rng = np.random.default_rng(7)
    common = rng.uniform(0.2, 0.4, size=(300, 1))
    F = common + 0.1 * rng.random((300, 40))  # correlated, like class evidence
    W = np.zeros((40, 12))
    for k in range(12):
        W[rng.choice(40, 3, replace=False), k] = rng.normal(scale=60.0, size=3)
    Y = ((F - F.mean(0)) @ W + 0.5 * rng.standard_normal((300, 12)) > 0).astype(float)
    lam = 2e-3
    sizes = []
    qp = _newton._lasso_qp
    monkeypatch.setattr(
        _newton, "_lasso_qp", lambda H, *a, **k: sizes.append(len(H)) or qp(H, *a, **k)
    )
    coef, b, _, _ = logistic.fit_logistic_layer(F, Y, lam, ridge=0.0, n_threads=1)
    assert min(sizes) < 41 and max(sizes) == 41  # the working set was smaller, at times
    for k in range(12):
        assert _kkt_by_hand(F, Y[:, k], coef[k], b[k], lam) <= 1e-6
        assert 1 <= np.count_nonzero(coef[k]) < 30
    sizes.clear()
    monkeypatch.setattr(_newton, "_SCREEN", 0.0)
    full, b_full, _, _ = logistic.fit_logistic_layer(F, Y, lam, ridge=0.0, n_threads=1)
    assert set(sizes) == {41}
    np.testing.assert_array_equal(coef != 0, full != 0)
    np.testing.assert_allclose(coef, full, atol=1e-3 * np.abs(full).max())
    np.testing.assert_allclose(b, b_full, atol=1e-3 * np.abs(full).max())


def test_layer_skips_classes_already_optimal_at_their_start():
    """At lam >= lambda_max of a class (computed by the formula), its solution is beta = 0
    with the base rate's logit as intercept: no Newton step.  Below, Newton steps."""
    from sblr.logistic import fit_logistic_layer

    F, Y = _many_class_problem()
    live = [k for k in range(Y.shape[1]) if 0 < Y[:, k].sum() < len(Y)]
    lam_k = np.array([lambda_max(F, Y[:, k]) for k in live])
    lam = float(np.median(lam_k))
    coef, b, n_iter, kkt = fit_logistic_layer(F, Y, lam, ridge=0.0)
    for k, lmax in zip(live, lam_k, strict=True):
        if lmax <= lam:
            rate = Y[:, k].mean()
            assert n_iter[k] == 0 and not coef[k].any()
            assert b[k] == pytest.approx(np.log(rate / (1 - rate)), abs=1e-12)
        else:
            assert n_iter[k] > 0 and coef[k].any()
        assert _kkt_by_hand(F, Y[:, k], coef[k], b[k], lam) <= 1e-6
    # a warm start at the layer's own solution needs no step either
    again = fit_logistic_layer(F, Y, lam, ridge=0.0, coef_init=coef, intercept_init=b)
    assert not again[2].any()
    np.testing.assert_array_equal(again[0], coef)


@pytest.mark.slow
def test_small_problems_are_solved_in_as_few_lockstep_chunks_as_allowed(monkeypatch):
    """Below the size worth threads, one thread solves the classes in chunks as large as
    allowed (each lockstep step pays its Python-level calls once per chunk); above, at least
    _MIN_CHUNKS chunks share the threads.  Either way each class gets the solution it gets
    alone."""
    import sblr.logistic as logistic

    F, Y = _many_class_problem(q=40)  # 150 x 9: n (m + 1)^2 = 15,000, far below the threshold
    live = [k for k in range(Y.shape[1]) if Y[:, k].min() != Y[:, k].max()]
    newton = logistic._newton
    handed = []
    monkeypatch.setattr(
        logistic, "_newton", lambda *a, **kw: handed.append(a[1].shape[1]) or newton(*a, **kw)
    )
    small = logistic.fit_logistic_layer(F, Y, 1e-3)
    most = logistic._CHUNK
    assert handed == [most] * (len(live) // most) + [len(live) % most] * (len(live) % most > 0)
    handed.clear()
    monkeypatch.setattr(logistic, "_THREADED_WORK", 0)  # the same classes as a large problem
    large = logistic.fit_logistic_layer(F, Y, 1e-3, n_threads=1)
    size = min(most, -(-len(live) // logistic._MIN_CHUNKS))
    assert handed == [size] * (len(live) // size) + [len(live) % size] * (len(live) % size > 0)
    for k in live:
        alone = fit_logistic(F, Y[:, k], 1e-3, tol=1e-6)
        for coef in (small[0][k], large[0][k]):
            np.testing.assert_allclose(coef, alone.coef, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_an_exception_from_progress_stops_the_layer_at_once(monkeypatch, n_threads):
    """A user interface stops a long fit by raising from ``progress`` (Streamlit's rerun):
    the exception comes through, the chunks of classes not started are not solved, and the
    chunks under way stop at their next Newton step (each class's step is one solve of its
    Newton model, counted here)."""
    import sblr.logistic as logistic

    F, Y = _many_class_problem(q=40)
    # chunks as for a problem large enough for threads (at least 8 of them; this one would
    # otherwise be solved in chunks of 16)
    monkeypatch.setattr(logistic, "_THREADED_WORK", 0)
    handed, steps = [], []
    stopped = threading.Event()
    newton, qp = logistic._newton, _newton._lasso_qp
    # classes handed to the solver (it takes them in chunks: the columns of its Y)
    monkeypatch.setattr(logistic, "_newton", lambda *a: handed.append(a[1].shape[1]) or newton(*a))

    def counted_qp(*args, **kwargs):
        steps.append(stopped.is_set())
        time.sleep(0.002)  # a step takes longer than the calling thread takes to see a class
        return qp(*args, **kwargs)

    monkeypatch.setattr(_newton, "_lasso_qp", counted_qp)

    class Stop(Exception):
        pass

    def progress(done, total):
        if done > 1:  # after the constant class and the first solved one
            stopped.set()
            raise Stop

    with pytest.raises(Stop):
        logistic.fit_logistic_layer(F, Y, 1e-5, ridge=1e-6, n_threads=n_threads, progress=progress)
    live = sum(Y[:, k].min() != Y[:, k].max() for k in range(Y.shape[1]))
    # chunks of 5 classes (at least 8 chunks): the first class solved comes from one of the
    # chunks taken up first, and at most the chunks running then were started
    assert live >= 30 and max(handed) == 5 and sum(handed) <= 5 * n_threads
    # after the stop, at most the step each running chunk was taking is finished (they
    # would take 26 more steps to the end; the calling thread raised, so 0 with one thread)
    assert steps.count(True) <= (5 * n_threads if n_threads > 1 else 0)


def test_layer_rejects_bad_targets_and_shapes_with_a_typed_error():
    from sblr.exceptions import DataError
    from sblr.logistic import fit_logistic_layer

    F, Y = _many_class_problem()
    with pytest.raises(DataError, match="0/1"):
        fit_logistic_layer(F, np.where(Y == 1, 2.0, 0.0))
    with pytest.raises(DataError, match="shapes"):
        fit_logistic_layer(F, Y[:, 0])
    with pytest.raises(DataError, match="shapes"):
        fit_logistic_layer(F[:-1], Y)
    with pytest.raises(DataError, match="NaN or inf"):
        fit_logistic_layer(np.where(F > 0.99, np.nan, F), Y)
    with pytest.raises(ValueError, match="warm start"):
        fit_logistic_layer(F, Y, coef_init=np.zeros((2, F.shape[1])))


def _separable(n=200, m=5, seed=3):
    """A nearly separable problem: far from its optimum the best Newton step is longer than 1."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, m))
    y = (Z @ rng.normal(size=m) + 0.3 * rng.normal(size=n) > 0).astype(float)
    return Z, y


def test_first_newton_step_is_the_exact_newton_direction_at_the_best_length():
    """Oracle, worked by hand: from the cold start (b = logit of the base rate, β = 0) the
    Hessian Za' diag(w) Za / n + ridge and the Newton direction d = -H⁻¹g, and the length t
    that minimizes the objective along d (SciPy's bounded scalar minimizer).  One step of
    the solver (max_iter=1) must move along d (the Hessian there is taken from the Gram
    matrix, every row having the same weight), to a length where the slope along d is 1% of
    its start; the best length here is well above 1 (a plain backtracking search stops at 1)."""
    from scipy.optimize import minimize_scalar

    Z, y = _separable()
    ridge = 1e-3
    n, m = Z.shape
    Za = np.hstack([np.ones((n, 1)), Z])
    theta0 = np.r_[np.log(y.mean() / (1 - y.mean())), np.zeros(m)]
    reg = np.r_[0.0, np.full(m, ridge)]

    def objective(theta):
        eta = Za @ theta
        return np.mean(np.logaddexp(0, eta) - y * eta) + 0.5 * reg @ theta**2

    p = 1 / (1 + np.exp(-(Za @ theta0)))
    grad = Za.T @ (p - y) / n + reg * theta0
    hess = (Za * (p * (1 - p))[:, None]).T @ Za / n + np.diag(reg)
    d = -np.linalg.solve(hess, grad)
    best = minimize_scalar(lambda t: objective(theta0 + t * d), bounds=(0, 50), method="bounded")
    assert best.x > 1.2

    fit = fit_logistic(Z, y, 0.0, ridge=ridge, max_iter=1)
    step = np.r_[fit.intercept, fit.coef] - theta0
    t = step @ d / (d @ d)
    np.testing.assert_allclose(step, t * d, rtol=0, atol=1e-9 * np.abs(step).max())

    # the length: the slope along d is at most 1% of its value at t = 0 (the stopping rule),
    # so the objective is within 0.1% of the whole decrease from the best point on the line
    def slope(t):
        q = 1 / (1 + np.exp(-(Za @ (theta0 + t * d))))
        return (Za.T @ (q - y) / n + reg * (theta0 + t * d)) @ d

    assert abs(slope(t)) <= 0.01 * abs(slope(0.0))
    gain = objective(theta0) - best.fun
    assert objective(theta0 + step) - best.fun <= 1e-3 * gain


def test_longer_newton_steps_keep_the_solution_and_take_fewer_steps(monkeypatch):
    """The same solution (KKT, and scikit-learn's lbfgs on the same ridge problem) as with the
    plain backtracking search it replaces (forced here by a best step of 1), in fewer steps."""

    Z, y = _separable(n=400, m=8, seed=5)
    ridge = 1e-4
    fast = fit_logistic(Z, y, 0.0, ridge=ridge, tol=1e-9)
    monkeypatch.setattr(_newton, "_best_step", lambda eta, *a: np.ones(eta.shape[1]))
    plain = fit_logistic(Z, y, 0.0, ridge=ridge, tol=1e-9)
    assert fast.converged and plain.converged
    assert fast.n_iter < plain.n_iter
    np.testing.assert_allclose(fast.coef, plain.coef, rtol=1e-6)
    sk = LogisticRegression(C=1 / (ridge * len(y)), tol=1e-12, max_iter=10_000).fit(Z, y)
    np.testing.assert_allclose(fast.coef, sk.coef_[0], rtol=1e-4)


@pytest.mark.slow  # a fresh Python importing sblr: about 2 s
def test_the_compiled_solver_loads_only_when_asked_for():
    """Importing sblr and fitting SBLR (no L1 term) leave numba unimported (about 0.5 s of
    start-up); prepare_compiled_solver loads the compiled solver, and says so."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "import sblr, sblr.logistic as L\n"
        "from sblr import SBLRClassifier\n"
        "X = np.r_[np.zeros((5, 2)), np.ones((5, 2))]; y = np.r_[np.zeros(5), np.ones(5)]\n"
        "SBLRClassifier().fit(X, y)\n"
        "print('numba' in sys.modules, L.compiled_solver_ready())\n"
        "L.prepare_compiled_solver()\n"
        "print('numba' in sys.modules, L.compiled_solver_ready())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.split() == ["False", "False", "True", "True"]


@pytest.mark.slow
def test_the_layer_repeats_its_count_to_progress_while_classes_take_long(monkeypatch):
    """With threads, progress hears the count again every 50 ms while no class is solved
    (a user interface stopping the fit from progress is then heard within that), not only
    when a class is solved; the counts never go back and end at q."""
    import sblr.logistic as logistic

    F, Y = _many_class_problem(q=8)
    monkeypatch.setattr(logistic, "_THREADED_WORK", 0)  # chunked for threads, as a large problem
    qp = _newton._lasso_qp
    monkeypatch.setattr(_newton, "_lasso_qp", lambda *a, **k: time.sleep(0.03) or qp(*a, **k))
    calls = []
    logistic.fit_logistic_layer(F, Y, 1e-3, n_threads=2, progress=lambda d, t: calls.append(d))
    assert any(a == b for a, b in zip(calls, calls[1:], strict=False))
    assert calls == sorted(calls) and calls[-1] == Y.shape[1]


def test_a_numba_that_fails_to_import_is_named_with_its_remedy(monkeypatch):
    """SparseSBLR's solver is compiled by numba; if numba cannot be imported (say NumPy was
    upgraded past what it supports), the error says what and how to mend it."""
    import sys

    from sblr._newton import _lasso_qp

    monkeypatch.setitem(sys.modules, "sblr._compiled", None)  # import fails
    with pytest.raises(ImportError, match=r"needs numba.*pip install --upgrade numba"):
        _lasso_qp(np.eye(2), np.array([-1.0, -1.0]), np.array([0.0, 0.5]), np.zeros(2))


def test_solve_layer_may_centre_a_callers_copy_in_place():
    # the out-of-fold layers gather their rows into a column-major copy that the solver
    # centres in place (one (n, m) array less): the same solution as from the evidence itself
    rng = np.random.default_rng(3)
    F = rng.uniform(size=(120, 6))
    Y = (F[:, :3] + 0.3 * rng.normal(size=(120, 3)) > 0.5).astype(np.int8)
    kept = solve_layer(np.asfortranarray(F), Y, lam=1e-3, ridge=1e-8)
    copy = np.asfortranarray(F)
    centred = solve_layer(copy, Y, lam=1e-3, ridge=1e-8, overwrite_F=True)
    for a, b in zip(kept, centred, strict=True):
        np.testing.assert_array_equal(a, b)  # the same arithmetic on the same layout
    np.testing.assert_allclose(copy.mean(axis=0), 0.0, atol=1e-12)  # it was centred in place
    untouched = F.copy()
    solve_layer(F, Y, lam=1e-3, ridge=1e-8, overwrite_F=True)  # row-major: never written
    np.testing.assert_array_equal(F, untouched)
