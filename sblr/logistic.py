"""The logistic layer of SBLR / SparseSBLR: one binary L1/L2 logistic regression.

Each class k gets its own problem (Ma & Chen, Eq. 9)::

    min_{b, beta}  (1/n) sum_i [log(1 + exp(eta_i)) - y_i eta_i]
                   + lam * ||beta||_1 + 1/2 * sum_t ridge_t * beta_t^2,
    eta_i = b + z_i . beta

The intercept ``b`` is never penalized (the SLEP convention).  The features
``z`` are the m class evidences, so the problems are small (m + 1 unknowns) and
a proximal Newton method whose quadratic model is solved by feature-sign search
(Lee et al. 2006/2007, "IRLS with an exact lasso step"; exactly once the Newton
steps are many, after at most four of its steps before) reaches the optimality
(KKT) conditions to 1e-8 in a handful of Newton steps, even on the strongly
correlated evidence features where first-order methods crawl.  Without an L1 term
the step length minimizes the objective along the Newton direction (far from the
optimum of a nearly separable class the best step is several times longer).
``benchmarks/solvers.py`` compares it with scikit-learn's ``saga`` and
``liblinear`` on the same problems: both are slower and neither meets a 1e-4
KKT tolerance reliably on these strongly correlated features (liblinear also
penalizes the intercept).
"""

from __future__ import annotations

import queue
import sys
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log1p

from sblr._newton import (  # noqa: F401 (with_intercept and _MAX_ADDED: public names here)
    _MAX_ADDED,
    _Cancelled,
    _gram,
    _kkt_rows,
    _lasso_qp,
    _newton,
    _row_shares,
    _solve_spd,
    with_intercept,
)
from sblr._threads import single_threaded_blas, worker_budget
from sblr.exceptions import DataError


@dataclass(frozen=True)
class LogisticFit:
    """Solution of one binary problem.

    Attributes
    ----------
    coef : ndarray of shape (m,)
    intercept : float
    n_iter : int
        Newton steps taken.
    kkt : float
        Largest violation of the optimality conditions at the solution.
    converged : bool
        ``kkt <= tol``.
    """

    coef: np.ndarray
    intercept: float
    n_iter: int
    kkt: float
    converged: bool


def kkt_violation(Z, y, beta, b, lam, ridge=0.0):
    """Largest violation of the first-order optimality conditions.

    For the intercept the gradient must vanish; for ``beta_t != 0`` the
    gradient must equal ``-lam * sign(beta_t)``; for ``beta_t == 0`` its
    magnitude must not exceed ``lam``.

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[0.0], [1.0]]); y = np.array([0.0, 1.0])
    >>> float(kkt_violation(Z, y, np.zeros(1), 0.0, lam=0.25))   # |grad| = 0.25 <= lam
    0.0
    """
    r = expit(Z @ beta + b) - y
    g = np.r_[r.mean(), Z.T @ r / len(y) + ridge * beta]
    return float(_kkt_rows(g[None], np.r_[b, beta][None], lam)[0])


def lambda_max(Z, y):
    """Smallest ``lam`` at which every coefficient is zero.

    At ``beta = 0`` the optimal intercept predicts the base rate ``ybar``, so
    ``lam_max = max_t |(1/n) sum_i (ybar - y_i) z_it|``.

    Examples
    --------
    >>> import numpy as np
    >>> lambda_max(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]))
    0.25
    """
    y = np.asarray(y, dtype=np.float64)
    return float(np.abs(Z.T @ (y.mean() - y)).max() / len(y)) if Z.shape[1] else 0.0


def fit_logistic(
    Z,
    y,
    lam=0.0,
    *,
    ridge=0.0,
    tol=1e-8,
    max_iter=100,
    coef_init=None,
    intercept_init=None,
    sample_weight=None,
):
    """Solve one binary L1/L2-penalized logistic regression by proximal Newton.

    Parameters
    ----------
    Z : ndarray of shape (n, m)
        Features (the normalized class evidence).
    y : ndarray of shape (n,)
        0/1 targets.  A constant ``y`` is not handled here; see
        :func:`constant_intercept`.
    lam : float
        L1 strength on the mean log-loss; the intercept is not penalized.
    ridge : float or ndarray of shape (m,)
        L2 strength per coefficient (``1/2 * sum_t ridge_t * beta_t^2``), for
        numerical stability.
    tol : float
        Stop when the KKT violation is at most ``tol``.
    max_iter : int
        Newton steps.
    coef_init, intercept_init : optional
        Warm start.
    sample_weight : ndarray of shape (n,), optional
        Non-negative weights of the rows (positive sum): the loss is their weighted mean,
        so integer weights give the fit on the rows repeated that many times.

    Returns
    -------
    LogisticFit

    Raises
    ------
    DataError
        ``Z`` holds NaN or inf (or values so large that the Newton model
        overflows), ``y`` is not 0/1, or their lengths differ.
    ValueError
        ``lam`` or ``ridge`` is negative or not finite, the warm start is
        not finite or has the wrong shape, or ``sample_weight`` is not valid.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(200, 3))
    >>> y = (Z[:, 0] + 0.5 * rng.normal(size=200) > 0).astype(float)
    >>> fit = fit_logistic(Z, y, lam=0.05)
    >>> fit.converged, bool(fit.coef[0] > 0), fit.coef[1:].tolist()
    (True, True, [0.0, 0.0])
    """
    Z, y, lam, ridge = _checked_problem(Z, y, lam, ridge)
    weight = _checked_weight(sample_weight, len(y))
    n, m = Z.shape
    theta = np.zeros(m + 1)
    if coef_init is not None:
        theta[1:] = _checked_start("coef_init", coef_init, (m,))
    if intercept_init is not None:
        theta[0] = _checked_start("intercept_init", intercept_init, ())
    elif coef_init is None:
        theta[0] = base_rate_logit(y, weight)
    theta, n_iter, kkt = _newton(
        with_intercept(Z), y[:, None], lam, ridge, theta, tol, max_iter, weight=weight
    )
    return LogisticFit(
        theta[0, 1:], float(theta[0, 0]), int(n_iter[0]), float(kkt[0]), bool(kkt[0] <= tol)
    )


def base_rate_logit(y, sample_weight=None):
    """The cold start's intercept: the logit of the (weighted) base rate (clipped away from 0
    and 1)."""
    ybar = np.clip(np.average(y, weights=sample_weight), 1e-12, 1 - 1e-12)
    return float(np.log(ybar / (1 - ybar)))


def _checked_problem(Z, y, lam, ridge, *, many=False):
    """``Z``, ``y``, ``lam`` and ``ridge`` as floats, or a typed error naming what is wrong.
    ``y`` is (n,), or with ``many`` (n, q): one problem per column (the layer).

    NaN or inf in the features would make every candidate of the Newton step
    NaN (no step is ever "better", and the solver would fail deep inside).
    """
    Z = np.asarray(Z, dtype=np.float64)
    y = np.asarray(y)
    if not (many and y.dtype.kind in "biu"):  # the layer's 0/1 targets stay as given (an
        y = y.astype(np.float64, copy=False)  # int copy of 983 labels is 100 MB)
    if Z.ndim != 2 or y.ndim != (2 if many else 1) or len(y) != Z.shape[0]:
        wanted = "(n, q)" if many else "(n,)"
        raise DataError(f"Z must be (n, m) and y {wanted}; got shapes {Z.shape} and {y.shape}.")
    if not np.isfinite(Z).all():
        raise DataError(
            f"The features (evidence) hold {int((~np.isfinite(Z)).sum())} NaN or inf values; "
            "the logistic layer needs finite features."
        )
    if not np.isin(y, (0.0, 1.0)).all():
        raise DataError("y must hold 0/1 targets (no NaN, inf or other values).")
    if isinstance(lam, bool) or not (np.ndim(lam) == 0 and np.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam must be a finite number >= 0; got {lam!r}.")
    ridge = np.asarray(ridge, dtype=np.float64)
    if not (np.isfinite(ridge).all() and (ridge >= 0).all()):
        raise ValueError(f"ridge must be finite and >= 0; got {ridge!r}.")
    return Z, y, float(lam), np.broadcast_to(ridge, (Z.shape[1],))


def _checked_weight(sample_weight, n):
    """``sample_weight`` as floats (None stays None), or a ValueError naming what is wrong."""
    if sample_weight is None:
        return None
    weight = np.asarray(sample_weight, dtype=np.float64)
    if weight.shape != (n,) or not (np.isfinite(weight).all() and (weight >= 0).all()):
        raise ValueError(
            f"sample_weight must hold {n} finite weights >= 0; got shape {weight.shape}."
        )
    if not weight.sum() > 0:
        raise ValueError("sample_weight must have a positive sum.")
    return weight


def _checked_start(name, value, shape):
    value = np.asarray(value, dtype=np.float64)
    if value.shape != shape or not np.isfinite(value).all():
        raise ValueError(f"{name} (warm start) must be finite with shape {shape}; got {value!r}.")
    return value


def prepare_compiled_solver() -> None:
    """Compile or load SparseSBLR's compiled solver (:mod:`sblr._compiled`) now, not in the
    first fit with an L1 term: the first time in an environment numba compiles it (5-10 s,
    then cached on disk), afterwards it loads in about a second with numba's import.  Safe to
    call from any thread and more than once.

    Examples
    --------
    >>> prepare_compiled_solver(); compiled_solver_ready()
    True
    """
    _lasso_qp(np.eye(2), np.array([-1.0, -1.0]), np.array([0.0, 0.5]), np.zeros(2))


def compiled_solver_ready() -> bool:
    """Whether SparseSBLR's compiled solver is loaded: a fit with an L1 term starts at once."""
    kernel = getattr(sys.modules.get("sblr._compiled"), "feature_sign", None)
    return kernel is not None and bool(kernel.signatures)


def constant_intercept(y, sample_weight=None):
    """Logit of a smoothed base rate, for a class that is constant in training.

    A class with only 0s (or only 1s) has no finite maximum-likelihood
    intercept; ``(n_pos + 0.5) / (n + 1)`` (the Jeffreys estimate) gives a
    small (large) but finite probability, with every ``beta`` zero.  With
    ``sample_weight``, ``n_pos`` and ``n`` are sums of weights (integer weights:
    the rows repeated).

    Examples
    --------
    >>> round(constant_intercept(np.zeros(99)), 3)
    -5.293
    """
    y = np.asarray(y, dtype=np.float64)
    weight = np.ones(len(y)) if sample_weight is None else sample_weight
    rate = (weight @ y + 0.5) / (weight.sum() + 1.0)
    return float(np.log(rate) - log1p(-rate))


# --------------------------------------------------------------------------- many classes
def fit_logistic_layer(
    F,
    Y,
    lam=0.0,
    *,
    ridge=0.0,
    tol=1e-6,
    max_iter=100,
    coef_init=None,
    intercept_init=None,
    sample_weight=None,
    exact_steps=False,
    progress=None,
    n_threads=None,
):
    """One logistic regression per class on the evidence ``F``.

    Parameters
    ----------
    F : ndarray of shape (n_samples, m)
        Normalized class evidence of the training rows.
    Y : ndarray of shape (n_samples, q)
        0/1 targets, one column per problem (usually q = m).
    lam, ridge, tol, max_iter
        See :func:`fit_logistic`.
    coef_init, intercept_init : ndarray of shape (q, m) and (q,), optional
        Warm start (e.g. the previous value on a lambda path).
    sample_weight : ndarray of shape (n_samples,), optional
        See :func:`fit_logistic`; a class constant on the rows of positive weight is
        constant (see :func:`constant_intercept`).
    exact_steps : bool, default False
        Solve every Newton step's lasso model exactly, not only the later ones: fewer
        Newton steps from a start near the optimum (a bootstrap resample warm-started from
        the fit on all rows), more solves from a cold start.  The solution is the same
        optimum (the same stopping rule).
    progress : callable, optional
        Called as ``progress(done, q)`` after each class's problem is solved, from the
        calling thread (so it may update a user interface); with threads also every 50 ms
        meanwhile, with the same count, so that a stop is seen soon.  An exception it raises
        stops the layer at once (the classes under way stop at their next Newton step, the
        others are not started) and propagates.
    n_threads : int, optional
        Threads solving chunks of classes at once, each with single-threaded BLAS (the
        problems are independent; NumPy releases the GIL).  Default
        :func:`sblr._threads.worker_budget`, or one thread where the problems are too small
        to gain from more (``n · (m + 1)² < _THREADED_WORK``).  The result does not depend
        on it.

    Returns
    -------
    coef : ndarray of shape (q, m)
    intercept : ndarray of shape (q,)
    n_iter : ndarray of shape (q,)
    kkt : ndarray of shape (q,)
        KKT violation of each solution (0 for constant classes), on every column.

    Notes
    -----
    With an L1 term and at least ``_SCREEN_FROM`` (256) columns each class is solved on a
    working set of columns and checked on all of them (:func:`_screened_layer`: the same
    stopping rule, so the same optimum; ``exact_steps`` does not apply there).  Memory then:
    ``F`` (column-major, as :func:`solve_layer` passes it; else one transposed copy) and
    ``Y`` read in place, plus at most 64 MB for a block of classes' check and
    ``8 n (|W| + 7)`` bytes per thread.
    """
    F, Y, lam, ridge = _checked_problem(F, Y, lam, ridge, many=True)
    weight = _checked_weight(sample_weight, len(F))
    if weight is not None and not weight.all():  # rows of weight 0 are not in the problem
        F, Y, weight = F[weight > 0], Y[weight > 0], weight[weight > 0]
    q, m = Y.shape[1], F.shape[1]
    coef = np.zeros((q, m))
    intercept = np.zeros(q)
    n_iter = np.zeros(q, dtype=int)
    kkt = np.zeros(q)
    live = np.flatnonzero(Y.min(axis=0) != Y.max(axis=0))
    for k in np.setdiff1d(np.arange(q), live):
        intercept[k] = constant_intercept(Y[:, k], weight)
    done = q - len(live)
    if progress is not None:
        progress(done, q)
    if not len(live):
        return coef, intercept, n_iter, kkt
    theta = np.zeros((len(live), m + 1))
    if coef_init is not None:
        theta[:, 1:] = _checked_start("coef_init", coef_init, (q, m))[live]
    if intercept_init is not None:
        theta[:, 0] = _checked_start("intercept_init", intercept_init, (q,))[live]
    elif coef_init is None:
        theta[:, 0] = [base_rate_logit(Y[:, k], weight) for k in live]
    if lam > 0 and m >= _SCREEN_FROM:
        workers = worker_budget() if n_threads is None else int(n_threads)
        tick = None if progress is None else (lambda: progress(done, q))
        for solved in _screened_layer(
            F, Y, live, theta, lam, ridge, tol, max_iter, weight, workers, tick
        ):
            for i, c, b, it, violation in solved:
                k = live[i]  # (i: the class's row of theta)
                coef[k], intercept[k], n_iter[k], kkt[k] = c, b, it, violation
            done += len(solved)
            if progress is not None:
                progress(done, q)
        return coef, intercept, n_iter, kkt
    # Start points of every live class, and their gradients in one product: the classes
    # already optimal there (a warm start at the optimum, every β zero at a large λ) are
    # done without a Newton step; the others are solved from the same point.
    Za = with_intercept(F)
    reg = np.r_[0.0, ridge]
    share = _row_shares(len(F), weight)
    with single_threaded_blas():
        resid = expit(Za @ theta.T) - Y[:, live]
        grads = (Za.T @ (share[:, None] * resid)).T + reg * theta
    violation = _kkt_rows(grads, theta, lam)
    for i in np.flatnonzero(violation <= tol):
        k = live[i]
        coef[k], intercept[k], kkt[k] = theta[i, 1:], theta[i, 0], violation[i]
    todo = np.flatnonzero(violation > tol)
    done += len(live) - len(todo)
    if progress is not None and done > q - len(live):
        progress(done, q)
    if not len(todo):
        return coef, intercept, n_iter, kkt

    with single_threaded_blas():
        gram = _gram(Za, share) if (theta[todo, 1:] == 0).all(axis=1).any() else None

    # The classes are solved in chunks, each chunk's problems in lockstep (see _newton),
    # the chunks in threads.  At most _CHUNK classes each, and as many as keep the chunk's
    # arrays (about 16 of n floats per class) within _CHUNK_BYTES.  Problems large enough
    # for threads (below) get at least _MIN_CHUNKS chunks, for the threads to share; smaller
    # ones, solved in one thread, as few chunks as that allows: each lockstep step costs its
    # Python-level calls once for the chunk (yeast's 14 classes in one chunk, not seven of
    # two: SparseSBLR's layer 40 -> 17-27 ms at λ = 1e-4).  The chunks depend on the problem
    # only, not on the threads, so neither does the result.
    threaded = len(F) * (m + 1) ** 2 >= _THREADED_WORK
    size = min(
        _CHUNK,
        -(-len(todo) // _MIN_CHUNKS) if threaded else len(todo),
        max(1, _CHUNK_BYTES // (16 * 8 * len(F))),
    )
    chunks = [todo[i : i + size] for i in range(0, len(todo), size)]

    def solve(chunk, report, cancel=None):
        _newton(
            Za,
            Y[:, live[chunk]],
            lam,
            ridge,
            theta[chunk],
            tol,
            max_iter,
            gram,
            report,
            cancel,
            weight,
            exact_steps,
        )

    def store(i, solution, steps, violation):
        nonlocal done
        k = live[i]
        coef[k], intercept[k], n_iter[k], kkt[k] = solution[1:], solution[0], steps, violation
        done += 1
        if progress is not None:
            progress(done, q)

    if n_threads is None:
        # a thread per chunk only where a class's Newton step is worth it: below, the
        # threads mostly wait for each other's Python (GIL)
        n_threads = worker_budget() if threaded else 1
    workers = min(int(n_threads), len(chunks))
    with single_threaded_blas():
        if workers <= 1:
            for chunk in chunks:
                solve(chunk, lambda j, *result, chunk=chunk: store(chunk[j], *result))
            return coef, intercept, n_iter, kkt
        # Each class is reported as soon as it is solved: the chunk's threads put it in a
        # queue, and the calling thread stores it and calls progress (and so sees a stop from
        # progress within a step of some chunk, not a whole chunk later).
        solved = queue.SimpleQueue()
        cancel = threading.Event()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(
                    solve, chunk, lambda j, *r, chunk=chunk: solved.put((chunk[j], *r)), cancel
                )
                for chunk in chunks
            ]
            try:
                for _ in range(len(todo)):
                    while True:
                        try:
                            store(*solved.get(timeout=0.05))
                            break
                        except queue.Empty:  # a chunk that failed has nothing more to report
                            for future in futures:
                                if future.done() and future.exception() is not None:
                                    raise future.exception() from None
                            if progress is not None:
                                # the count again, every 50 ms: a stop raised from progress
                                # is seen within that, not only when a class is solved
                                progress(done, q)
            except BaseException:
                # progress raised (a user interface stopping the work) or a class failed: the
                # chunks under way stop at their next step, the others are not started
                cancel.set()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    return coef, intercept, n_iter, kkt


def _screened_layer(F, Y, live, theta, lam, ridge, tol, max_iter, weight, n_threads, tick=None):
    """The layer with an L1 term on many columns: each class's problem solved on a working
    set of columns, checked against the optimality conditions on every column.

    At 983 labels a class's solution keeps a handful of the 983 evidence columns (3-14 at
    λ = 1e-4 on Mulan's delicious), but the lockstep solver (:func:`sblr._newton._newton`)
    forms Hessians over every column whose gradient exceeds λ: nearly all of them, n·m² per
    Newton step and class.  Here (as skglm's working sets, Massias et al. 2020) class k is
    solved on a set ``W_k`` only (:func:`sblr._compiled.restricted_newton`: n·|W_k|² per
    step), then the gradient of its full problem is computed on EVERY column (one product of
    the block's residuals with the evidence, n·m per class); the zero columns whose gradient
    exceeds λ (they break ``|g_t| <= λ``) join the set, the twice as many as it held at most
    (worst first), and the class is solved again from where it stopped.  A class is done
    when the full KKT violation is at most ``tol``: the same stopping rule and so the same
    optimum as the lockstep solver's, never an approximation.  The first sets are the
    columns of a warm start's support and those with the largest gradient at β = 0 (the
    cold start's; from the sparse targets, cheap), ``_WS_START`` and twice the support.

    Yields, per block of classes (sized so that its (classes, n) arrays take at most
    ``_CHUNK_BYTES``), a list of ``(i, coef, intercept, n_iter, kkt)`` (``i`` indexing
    ``live``, the classes solved: columns of ``Y``).  ``tick()``, if given, is called from
    this thread after each restricted solve, and every 50 ms while the threads solve (the
    layer's progress with its count so far: an exception it raises cancels the solves not
    started and propagates).  Memory beyond the evidence ``F`` and
    the targets ``Y`` (read in place; F column-major, else one transposed copy): the start
    points and first gradients, ``2 · 8 q (m + 1)`` bytes; a block's check, at most
    ``_CHUNK_BYTES`` (64 MB) in 4 arrays of ``(block, n)`` and one of ``(block, m)``; per
    thread a restricted problem's ``8 n (|W| + 7)`` bytes (|W| its working set, 33 columns
    at first).
    """
    from scipy import sparse

    from sblr._compiled import restricted_newton  # lazy: numba, only with an L1 term

    n, m = F.shape
    q = len(live)
    FT = np.ascontiguousarray(F.T)  # each evidence column contiguous (a view of F-order F)
    share = _row_shares(n, weight)
    ridge = np.broadcast_to(np.asarray(ridge, dtype=np.float64), (m,))
    # The gradients at β = 0: F'(share (p0 - y)) = p0 F'share - F'(share y), the second from
    # the sparse targets (nnz(Y)·m instead of n·m·q).
    targets = (sparse.diags(share) @ sparse.csc_matrix(Y)[:, live]).T.tocsr()
    cold = np.empty((q, m))
    for start in range(0, m, 64):  # by columns: SciPy copies a dense operand to row-major
        cold[:, start : start + 64] = targets @ np.ascontiguousarray(F[:, start : start + 64])
    cold -= np.outer(expit(theta[:, 0]), share @ F)
    block = max(1, min(q, _CHUNK_BYTES // (4 * 8 * n)))

    def solve(i, cols):
        th = np.r_[theta[i, 0], theta[i, 1 + cols]]
        reg = np.r_[0.0, ridge[cols]]
        steps, _, finite = restricted_newton(
            FT,
            cols,
            Y[:, live[i]].astype(np.float64),  # (one compiled signature)
            share,
            reg,
            lam,
            th,
            inner[i],
            max(1, max_iter - n_iter[i]),
            _DAMPING_SCREENED,
            _MAX_ADDED,
        )
        if not finite:
            raise DataError(
                "The logistic solver's Newton model overflowed: the features are too large "
                f"(largest |z| = {np.abs(F).max():.3g}). Rescale the evidence."
            )
        theta[i, 1:] = 0.0
        theta[i, 0], theta[i, 1 + cols] = th[0], th[1:]
        n_iter[i] += steps

    n_iter = np.zeros(q, dtype=int)
    # Each set's problem is solved to a tolerance of 0.3 times the full problem's last
    # violation (as skglm's inner solver), so a set about to grow is not solved to 1e-6 first;
    # the last, to ``tol``.
    inner = np.maximum(tol, _INNER_SHARE * _kkt_rows(np.c_[np.zeros(q), cold], theta, lam))
    pool = ThreadPoolExecutor(max_workers=n_threads) if n_threads > 1 else None
    try:
        for start in range(0, q, block):
            rows = np.arange(start, min(start + block, q))
            sets = {}
            for i in rows:
                support = np.flatnonzero(theta[i, 1:])
                size = max(_WS_START, 2 * support.size)
                score = np.abs(cold[i])
                score[support] = np.inf
                top = _largest(score, size)
                sets[i] = np.sort(top[(score[top] > lam) | np.isinf(score[top])])
            pending, solved = rows, []
            while pending.size:
                with single_threaded_blas():
                    if pool is None:
                        for i in pending:
                            solve(i, sets[i])
                            if tick is not None:
                                tick()
                    else:
                        _run_ticking(pool, solve, [(i, sets[i]) for i in pending], tick)
                # the check: the full gradient of every pending class, on every column
                coefs = sparse.csr_matrix(theta[pending, 1:])
                eta = np.asarray(coefs @ FT) + theta[pending, :1]
                R = share * (expit(eta) - Y[:, live[pending]].T)
                G = np.empty((pending.size, m + 1))
                G[:, 0] = R.sum(axis=1)
                G[:, 1:] = R @ F + ridge * theta[pending, 1:]
                del eta, R  # not alive while the next check computes its own
                violation = _kkt_rows(G, theta[pending], lam)
                again = []
                for j, i in enumerate(pending):
                    outside = np.abs(G[j, 1:]) - lam
                    outside[sets[i]] = -np.inf
                    if violation[j] <= tol or n_iter[i] >= max_iter:
                        done = True
                    elif outside.max() <= tol:  # the set holds the solution: solve it to tol
                        done, inner[i] = inner[i] <= tol, tol  # (or only rounding is left)
                    else:
                        done, inner[i] = False, max(tol, _INNER_SHARE * violation[j])
                    if done:
                        solved.append(
                            (i, theta[i, 1:].copy(), theta[i, 0], n_iter[i], violation[j])
                        )
                        continue
                    grow = max(_WS_START, sets[i].size)
                    worst = _largest(outside, grow)
                    sets[i] = np.union1d(sets[i], worst[outside[worst] > tol])
                    again.append(i)
                pending = np.asarray(again, dtype=int)
            yield solved
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _run_ticking(pool, fn, calls, tick):
    """``fn(*args)`` for each of ``calls`` in ``pool``, calling ``tick()`` (if given) from this
    thread every 50 ms meanwhile; an exception of a call or of ``tick`` cancels the calls not
    started, waits for those under way, and propagates."""
    futures = [pool.submit(fn, *args) for args in calls]
    try:
        while True:
            _, waiting = wait(futures, timeout=0.05, return_when=FIRST_EXCEPTION)
            for future in futures:
                if future.done() and future.exception() is not None:
                    raise future.exception()
            if not waiting:
                return
            if tick is not None:
                tick()
    except BaseException:
        for future in futures:
            future.cancel()
        wait(futures)
        raise


def _largest(values, size):
    """Indices of the ``size`` largest ``values`` (all of them if fewer), in no order."""
    if size >= values.size:
        return np.arange(values.size)
    return np.argpartition(-values, size - 1)[:size]


def solve_layer(
    F,
    Y,
    coef_init=None,
    intercept_init=None,
    *,
    lam,
    ridge,
    tol=1e-6,
    max_iter=100,
    sample_weight=None,
    exact_steps=False,
    progress=None,
    n_threads=None,
    overwrite_F=False,
):
    """The logistic layer of SBLR (``lam == 0``) or SparseSBLR: one problem per column of ``Y``.

    ``ridge`` is the estimator's parameter: the L2 term is ``ridge · Var(f̄_t)`` per
    coefficient, i.e. on standardized coefficients, so the same ``ridge`` is equally tiny
    whatever the scale of the evidence (which shrinks fast as γ grows).  Without an L1
    term (SBLR) the problem is solved on evidence columns scaled to unit sd and mapped
    back: the same minimizer, but the stopping rule then holds in units of β̃ = β·sd, so
    columns whose scales differ by 1e4 or more are solved as accurately as the others.
    Both are solved on centred evidence columns (the same β; the intercept is mapped back),
    which keeps Newton's system well conditioned when every similarity is near 1 (small γ).
    The KKT violations returned are those of the centred (and for SBLR, scaled) problem.
    With ``sample_weight`` the means, variances and sds are weighted too (integer weights:
    those of the rows repeated).

    Parameters
    ----------
    F : ndarray of shape (n, m)
        Normalized class evidence.
    Y : ndarray of shape (n, q)
        0/1 targets, one problem per column (e.g. a subset of the classes).
    coef_init, intercept_init : ndarray of shape (q, m) and (q,), optional
        Warm start, in the units of β.
    lam : float or ndarray of shape (q,)
        One L1 strength for every problem, or one per problem (SparseSBLR's
        ``lam_scale="relative"``: the problems sharing a value are solved together).
    ridge, tol, max_iter, sample_weight, exact_steps, progress, n_threads
        See :func:`fit_logistic_layer`.
    overwrite_F : bool, default False
        ``F`` may be centred in place (a column-major float64 copy the caller made for this
        call, as the out-of-fold layers' rows: one (n, m) array less, 100 MB at 983 labels).

    Returns
    -------
    coef, intercept, n_iter, kkt
        As :func:`fit_logistic_layer`, ``coef`` in the units of β.
    """
    if np.ndim(lam):
        return _solve_layer_per_lam(
            F,
            Y,
            coef_init,
            intercept_init,
            lam=lam,
            ridge=ridge,
            tol=tol,
            max_iter=max_iter,
            sample_weight=sample_weight,
            exact_steps=exact_steps,
            progress=progress,
            n_threads=n_threads,
        )
    sample_weight = _checked_weight(sample_weight, len(F))
    mean = np.average(F, axis=0, weights=sample_weight)
    # Centred columns: the same β (only the unpenalized intercept moves), but the
    # intercept is no longer nearly collinear with evidence columns whose spread is tiny
    # beside their mean (small γ: every similarity near 1), which would leave Newton's
    # system with a condition number of 1e10 and more.  Column-major: each column
    # contiguous, for the screened layer's restricted problems (no copy there); the
    # variances summed without an (n, m) temporary (100 MB each at 983 labels).
    in_place = overwrite_F and isinstance(F, np.ndarray) and F.dtype == np.float64
    Fc = F if in_place and F.flags.f_contiguous else np.empty(np.shape(F), order="F")
    np.subtract(F, mean, out=Fc)
    share = _row_shares(len(F), sample_weight)
    var = np.einsum("ij,ij,i->j", Fc, Fc, share)
    ridge = ridge * var
    unit = np.ones(F.shape[1])
    sd = np.sqrt(var)
    if lam == 0:
        unit = np.where(sd > 0, sd, 1.0)
        ridge = ridge / unit**2
    Fc /= unit
    shift = mean / unit
    if coef_init is not None:
        # a constant column has no β (0 by convention): a warm start must not put one there
        coef_init = np.where(sd > 0, coef_init * unit, 0.0)
        if intercept_init is not None:
            intercept_init = intercept_init + coef_init @ shift
    coef, intercept, n_iter, kkt = fit_logistic_layer(
        Fc,
        Y,
        lam,
        ridge=ridge,
        tol=tol,
        max_iter=max_iter,
        coef_init=coef_init,
        intercept_init=intercept_init,
        sample_weight=sample_weight,
        exact_steps=exact_steps,
        progress=progress,
        n_threads=n_threads,
    )
    return coef / unit, intercept - coef @ shift, n_iter, kkt


def _solve_layer_per_lam(F, Y, coef_init, intercept_init, *, lam, progress, **opts):
    """:func:`solve_layer` with one ``lam`` per column of ``Y``: each group of columns sharing
    a value solved as one layer, the results put back in column order."""
    Y = np.asarray(Y)
    lam = np.asarray(lam, dtype=np.float64)
    q, m = Y.shape[1], np.shape(F)[1]
    if lam.shape != (q,):
        raise ValueError(f"lam must be one number or one per problem ({q}); got {lam.shape}.")
    coef, intercept = np.zeros((q, m)), np.zeros(q)
    n_iter, kkt = np.zeros(q, dtype=int), np.zeros(q)
    done = 0
    for value in np.unique(lam):
        cols = np.flatnonzero(lam == value)
        tick = None
        if progress is not None:
            tick = lambda d, _t, base=done: progress(base + d, q)  # noqa: E731
        c, b, it, k = solve_layer(
            F,
            Y[:, cols],
            None if coef_init is None else np.asarray(coef_init)[cols],
            None if intercept_init is None else np.asarray(intercept_init)[cols],
            lam=float(value),
            progress=tick,
            **opts,
        )
        coef[cols], intercept[cols], n_iter[cols], kkt[cols] = c, b, it, k
        done += cols.size
    return coef, intercept, n_iter, kkt


#: Most classes a chunk of the layer solves in lockstep (see fit_logistic_layer), and the
#: memory a chunk's (n, classes) arrays may take (per thread; 3 classes at 200,000 rows).
_CHUNK = 22
_MIN_CHUNKS = 8
#: Smallest n·(m+1)² (a Hessian's multiply-adds) at which the layer uses threads by default:
#: on yeast's shape (1,934 × 15: 0.4e6) two threads took the layer 1.5-1.9x as long as one
#: (Python-heavy steps waiting for each other's GIL), from about 2e6 they gain.
_THREADED_WORK = 1_000_000
_CHUNK_BYTES = 64 * 2**20
#: Columns from which a layer with an L1 term is solved on working sets per class
#: (:func:`_screened_layer`) instead of in lockstep on every column.
_SCREEN_FROM = 256
#: A working set's least size (the first holds the columns with the largest gradients).
_WS_START = 32
#: The share of the full problem's KKT violation a working set's problem is solved to.
_INNER_SHARE = 0.3
#: The restricted problems' diagonal damping (as the lockstep solver's, see sblr._newton).
_DAMPING_SCREENED = 1e-12
