"""The mathematics of the logistic layer: proximal Newton steps, solved in lockstep for many
problems, and the exact lasso step (feature-sign search) of each.

:mod:`sblr.logistic` is the layer's public face and its driver (checks, chunks of classes,
threads, progress, cancellation); this module is the solver those call, readable on its own,
in named steps: :func:`_newton` (the loop over the problems of a chunk, each with its own
Hessian, step and stopping rule), :class:`_Layer` (the objective, its gradient and the work
arrays), :func:`_targets` (each problem's Newton model and its minimizer:
:func:`_working_set_target`, :func:`_full_target`), :func:`_line_search` (the step length:
:func:`_best_step` for SBLR, then sufficient decrease), :func:`_lasso_qp` (the model's exact
minimizer) and :func:`_kkt_rows` (the optimality conditions every stop is judged by).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import lapack
from scipy.special import expit

from sblr.exceptions import DataError

_DAMPING = 1e-12  # keeps a coordinate's curvature positive for an all-zero column


def _solve_spd(H, rhs):
    """Solve ``H x = rhs`` for a symmetric positive (semi)definite ``H``: NumPy's Cholesky,
    which lets other threads run meanwhile (the layer solves its classes in threads; SciPy's
    ``potrf`` holds the GIL for its ~0.2 ms on the layer's 175 × 175 systems, which measured
    as no gain at all from a second thread), then LAPACK's ``potrs`` (O(m²), ~10 µs), falling
    back to least squares when ``H`` is numerically singular."""
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(H, rhs, rcond=None)[0]
    # L is C-ordered: its transpose, the upper factor U = L' with H = U'U, is the
    # Fortran-ordered array LAPACK wants, without a copy.
    return lapack.dpotrs(L.T, rhs, lower=0)[0]


def with_intercept(Z):
    """``[1, Z]``, column-major (as BLAS wants it): the design of :func:`_newton`."""
    return np.asfortranarray(np.hstack([np.ones((len(Z), 1)), Z]))


@dataclass
class _Layer:
    """What every step of one :func:`_newton` call shares: the design ``Za`` and the terms of
    the objective (fixed), and the Hessian's work arrays (reused across problems and steps: a
    fresh array of this size per step costs more in page faults than the product itself)."""

    Za: np.ndarray
    share: np.ndarray  # (n, 1): each row's share of the loss
    reg: np.ndarray  # (m + 1,): the ridge, 0 for the intercept
    pen: np.ndarray  # (m + 1,): the L1 weights, 0 for the intercept
    lam: float
    exact_steps: bool
    gram: np.ndarray | None  # Za' diag(share) Za, made when first needed
    row_sq: np.ndarray | None  # |row|², for trace(H) = w · row_sq
    Za32: np.ndarray | None = None  # exact_steps: the scaled float32 design
    col: np.ndarray | None = None  # exact_steps: its columns' scales
    work: np.ndarray = field(init=False)
    H: np.ndarray = field(init=False)
    H_work: np.ndarray = field(init=False)

    def __post_init__(self):
        n, p = self.Za.shape
        self.work = np.empty_like(self.Za)
        self.H = np.empty((p, p))
        self.H_work = np.empty(p * p)  # for the working sets
        # With exact_steps (a start near the optimum) the Hessians are formed in float32
        # (half the time of the products, a third of the bootstrap's), then used in float64:
        # an inexact Newton model, but every problem still stops by the same float64 KKT test
        # (_kkt_rows), so the solution is the same optimum to the same tolerance.  The
        # columns and the curvatures are scaled to at most 1 in size first (and scaled back
        # in float64), so that float32's range loses nothing, whatever the scale of the
        # evidence.  Measured on the bootstrap of 174 labels at λ = 1e-5: 8,936 -> 8,937
        # Newton steps, 4.4 -> 3.6 s (one thread).
        if self.exact_steps:
            col = np.abs(self.Za).max(axis=0)
            col[~(col > 0)] = 1.0  # (a zero column; a NaN is caught later, as in float64)
            self.col = col
            self.Za32 = (self.Za / col).astype(np.float32, order="F")

    def objective(self, eta, theta, y):
        """Per column: the (weighted) mean of log(1 + e^eta) - y eta, without overflow, plus
        the ridge and the L1 term."""
        loss = np.logaddexp(0.0, eta)
        loss -= y * eta
        penalty = 0.5 * ((self.reg * theta) * theta).sum(axis=1)
        penalty += self.lam * np.abs(theta[:, 1:]).sum(1)
        return self.share[:, 0] @ loss + penalty

    def gradient(self, eta, theta, y):
        """The smooth part's gradient of each problem (rows), from its linear predictors."""
        return (self.Za.T @ (self.share * (expit(eta) - y))).T + self.reg * theta


def _newton(
    Za,
    Y,
    lam,
    ridge,
    theta,
    tol,
    max_iter,
    gram=None,
    report=None,
    cancel=None,
    weight=None,
    exact_steps=False,
):
    """Proximal Newton on the design ``Za = [1, Z]`` (checked inputs) for the problems of the
    columns of ``Y`` (n, q) at once, in lockstep from the rows of ``theta`` (q, m + 1).

    The loss is the mean over the rows, or with ``weight`` (n,) (checked: >= 0, positive
    sum) the weighted mean ``sum_i weight_i loss_i / sum_i weight_i``: integer weights give
    the problem of the rows repeated that many times (a bootstrap resample solved on its
    distinct rows).

    With an L1 term each Newton step minimizes its quadratic model by feature-sign search:
    exactly once the steps are many, and before that, unless ``exact_steps``, with at most
    four of its iterations (see :func:`_targets`).  ``exact_steps`` pays from a start near
    the optimum (a bootstrap resample from the fit on all rows: about 5 Newton steps instead
    of 8, whose first model moves dozens of coefficients in and out of the active set); from
    a cold start, which must grow the active set by a hundred, the capped steps take fewer
    solves.

    Each problem is solved exactly as alone: its own Hessian, Newton direction, step length
    and stopping rule.  What is shared is the work around them: the gradients, the
    directions' images ``Za d`` and the line searches of all the problems not yet solved
    are one matrix product or one vectorized pass per step, instead of one small product and
    a dozen Python-level calls per problem per step (which held the GIL for about a third of
    the layer's time on 174 labels, so that a second thread gained little).

    ``gram`` is ``Za' diag(r) Za`` (``r`` the rows' shares of the loss: ``1/n``, or the
    weights over their sum) if the caller has it (the layer computes it once for all its
    classes); it gives the Hessian wherever every coefficient is zero (a cold start):
    there every row has the same curvature ``w = p (1 - p)``, so ``H = w · gram``.

    Returns ``(theta, n_iter, kkt)``: the solutions (q, m + 1), the Newton steps taken and
    the KKT violation of each solution (recomputed from scratch).  ``report(j, theta_j,
    n_iter_j, kkt_j)``, if given, is called as soon as problem ``j`` is solved (the others
    go on); once the event ``cancel`` is set, the solver stops at its next step, raising
    :class:`_Cancelled`.
    """
    n, p = Za.shape
    q = Y.shape[1]
    pen = np.full(p, float(lam))
    pen[0] = 0.0
    layer = _Layer(
        Za,
        _row_shares(n, weight)[:, None],
        np.r_[0.0, ridge],
        pen,
        lam,
        exact_steps,
        gram,
        np.einsum("ij,ij->i", Za, Za) if lam or exact_steps else None,
    )
    theta = np.array(theta, dtype=np.float64).reshape(q, p)
    eta = Za @ theta.T  # (n, q), column-major like Y's columns taken below
    f = layer.objective(eta, theta, Y)
    n_iter = np.zeros(q, dtype=int)
    kkt = np.zeros(q)
    stopped = np.zeros(q, dtype=bool)  # no further progress possible (see _line_search)
    # A problem whose float32 model gives no descent (numerically flat, or no step length
    # decreases the objective: the model's rounding, near a tight tolerance) goes on in
    # float64 (low[k] = False) rather than stopping.
    low = np.full(q, bool(exact_steps))

    def finish(done):
        # KKT of these solutions, from scratch (not from the updated linear predictors)
        g = layer.gradient(Za @ theta[done].T, theta[done], Y[:, done])
        kkt[done] = _kkt_rows(g, theta[done], lam)
        if report is not None:
            for j in done:
                report(j, theta[j], n_iter[j], kkt[j])

    act = np.arange(q)  # the problems not solved yet
    while act.size:
        if cancel is not None and cancel.is_set():
            raise _Cancelled
        y = Y[:, act]
        g = layer.gradient(eta[:, act], theta[act], y)  # (a, p)
        going = (_kkt_rows(g, theta[act], lam) > tol) & (n_iter[act] < max_iter)
        if not going.all():
            finish(act[~going])
            act, y, g = act[going], y[:, going], g[going]
            if not act.size:
                break
        n_iter[act] += 1
        target = _targets(layer, theta, eta, act, g, n_iter, low)
        d = target - theta[act]
        decrease = np.einsum("ij,ij->i", g, d)
        if lam:
            decrease += lam * (np.abs(target[:, 1:]).sum(1) - np.abs(theta[act, 1:]).sum(1))
        going = decrease < 0  # else numerically flat: nothing left to gain
        redo = ~going & low[act]
        if redo.any():  # the model in float32: the same step again, in float64
            low[act[redo]] = False
            d[redo], decrease[redo], going[redo] = 0.0, 0.0, True
        if not going.all():
            finish(act[~going])
            act, y, d, decrease = act[going], y[:, going], d[going], decrease[going]
            redo = redo[going]
        _line_search(layer, theta, eta, f, act, y, d, decrease, redo, low, stopped)
        if stopped[act].any():
            finish(act[stopped[act]])
            act = act[~stopped[act]]
    return theta, n_iter, kkt


def _targets(layer, theta, eta, act, g, n_iter, low):
    """Where each problem's Newton step goes (rows, absolute coordinates): the minimizer of
    its quadratic model of the smooth part around ``theta``, plus the L1 term.

    Solved exactly once the Newton steps are many; before, four steps of feature-sign search
    (each lowers the model, so the step is still a descent direction): an inexact proximal
    Newton step, half the solves in all when a warm start from a larger λ must grow its
    active set by a hundred.  The stopping rule is unchanged.  Problems past a cold start
    whose model is in float32 (``low``) go through the compiled steps, the others one by
    one, on a working set where it is small."""
    p_hat = expit(eta[:, act])
    sqrt_w = np.sqrt(p_hat * (1.0 - p_hat) * layer.share)
    target = np.empty_like(g)
    solved = np.zeros(act.size, dtype=np.int64)
    if layer.exact_steps:
        # The float32 models of the problems past a cold start, each on its working set,
        # compiled (sblr._compiled.working_set_steps32): the same steps as the float64 path
        # below (without an L1 term, the search solves the Newton system), without Python's
        # per-problem calls, so that the layer's threads are not held by the GIL (the
        # bootstrap on 174 labels at λ = 1e-5: 11.2 -> 9 s with two threads).
        theta_act = theta[act]
        todo = np.flatnonzero(low[act] & theta_act[:, 1:].any(axis=1))
        if todo.size:
            from sblr._compiled import working_set_steps32  # lazy: numba, only with an L1 term

            working_set_steps32(
                layer.Za32,
                layer.col,
                np.ascontiguousarray(sqrt_w),
                theta_act,
                g,
                layer.pen,
                layer.reg,
                layer.row_sq,
                float(layer.lam),
                _SCREEN,
                _DAMPING,
                _MAX_ADDED,
                todo,
                target,
                solved,
            )
            if (solved < 0).any():
                _overflow(layer.Za)
    for j, k in enumerate(act):
        if solved[j]:
            continue
        first_steps = not layer.exact_steps and n_iter[k] <= 10  # the capped search
        found = None
        if layer.lam and theta[k, 1:].any() and _SCREEN > 0:
            found = _working_set_target(layer, theta[k], g[j], sqrt_w[:, j], first_steps)
        if found is None:
            found = _full_target(layer, theta[k], g[j], p_hat[0, j], sqrt_w[:, j], first_steps)
        target[j] = found
    return target


def _working_set_target(layer, theta_k, g_j, sqrt_w_j, first_steps):
    """One problem's target with its model minimized over a working set: the intercept, the
    non-zero coefficients and those whose gradient exceeds ``_SCREEN`` λ, the others held
    at zero; None when the set is too large to pay (``_SET_SHARE``).

    The Hessian is needed on that set only (n·|C|² multiply-adds instead of n·(m+1)²); any
    decrease of the model is still a descent direction, and a zero coefficient left out has
    |g| <= λ: it meets its optimality condition, and if it stops doing so it is in the next
    step's set."""
    Za = layer.Za
    n, p = Za.shape
    ws = (theta_k != 0) | (np.abs(g_j) > _SCREEN * layer.lam)
    ws[0] = True
    C = np.flatnonzero(ws)
    if C.size > _SET_SHARE * p:  # its Hessian would cost nearly as much as the whole
        return None
    size = C.size
    # the set's columns of sqrt(w) Za, in the work array (a fresh array per step took 3x as
    # long: page faults)
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        H_C = layer.H_work[: size * size].reshape(size, size)
        w_C = np.take(Za, C, axis=1, out=layer.work.reshape(-1)[: n * size].reshape(n, size))
        w_C *= sqrt_w_j[:, None]
        np.matmul(w_C.T, w_C, out=H_C)
        trace = (sqrt_w_j**2) @ layer.row_sq  # the whole H's, as in _full_target
    H_C.reshape(-1)[:: size + 1] += layer.reg[C] + _DAMPING * (1.0 + trace)
    if not (np.isfinite(trace) and np.isfinite(g_j).all()):
        _overflow(Za)
    target = np.zeros(p)
    target[C] = _lasso_qp(
        H_C,
        g_j[C] - H_C @ theta_k[C],
        layer.pen[C],
        theta_k[C],
        max_iter=4 if first_steps else None,
    )
    return target


def _full_target(layer, theta_k, g_j, p_hat_j0, sqrt_w_j, first_steps):
    """One problem's target with its model on every coefficient: the Newton step -H⁻¹g by
    Cholesky without an L1 term (SBLR), else the model's minimizer by feature-sign search."""
    Za, H = layer.Za, layer.H
    p = Za.shape[1]
    H_diag = H.reshape(-1)[:: p + 1]  # a view of H's diagonal
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        # H = Za' diag(w r) Za, by NumPy (which, unlike SciPy's BLAS wrappers, lets other
        # threads run meanwhile: the layer solves its classes in threads)
        if not theta_k[1:].any():  # every eta (so every w) is the same
            if layer.gram is None:
                layer.gram = _gram(Za, layer.share[:, 0])
            np.multiply(layer.gram, p_hat_j0 * (1.0 - p_hat_j0), out=H)
        else:
            np.multiply(Za, sqrt_w_j[:, None], out=layer.work)
            np.matmul(layer.work.T, layer.work, out=H)
        trace = H_diag.sum()
        H_diag += layer.reg + _DAMPING * (1.0 + trace)
    if not (np.isfinite(trace) and np.isfinite(g_j).all()):
        # (an entry of a Gram matrix is at most its diagonal's largest in size, so a finite
        # trace means a finite H)
        _overflow(Za)
    if layer.lam == 0:
        return theta_k - _solve_spd(H, g_j)
    return _lasso_qp(H, g_j - H @ theta_k, layer.pen, theta_k, max_iter=4 if first_steps else None)


def _line_search(layer, theta, eta, f, act, y, d, decrease, redo, low, stopped):
    """Move each problem ``act`` along its direction ``d`` (rows) by a step that decreases its
    objective enough (Armijo), updating ``theta``, ``eta`` and ``f`` in place; a problem no
    step length improves is ``stopped`` (or, with a float32 model, ``low`` no more: the step
    again in float64).  ``redo``: problems whose step is taken again, not now.

    Without an L1 term the first step length minimizes the objective along d (a 1-D Newton
    on O(n) sums): far from the optimum of a nearly separable problem the best step is
    1.5-4, and taking it saves about a third of the n (m+1)² Newton steps."""
    eta_d = layer.Za @ d.T  # the linear predictors move along eta + step * eta_d
    eta_a = eta[:, act]
    if layer.lam == 0:
        rt = layer.reg * theta[act]
        step = _best_step(
            eta_a,
            eta_d,
            y,
            layer.share,
            (rt * d).sum(1),
            ((layer.reg * d) * d).sum(1),
            decrease,
        )
    else:
        step = np.ones(act.size)
    trying = np.flatnonzero(~redo)  # backtracking, on the problems whose step fails
    while trying.size:
        s = step[trying]
        cand = theta[act[trying]] + s[:, None] * d[trying]
        eta_new = eta_a[:, trying] + s * eta_d[:, trying]
        f_new = layer.objective(eta_new, cand, y[:, trying])
        ok = f_new <= f[act[trying]] + 1e-4 * np.minimum(s, 1.0) * decrease[trying]
        done = trying[ok]
        theta[act[done]] = cand[ok]
        eta[:, act[done]] = eta_new[:, ok]
        f[act[done]] = f_new[ok]
        trying = trying[~ok]
        step[trying] = np.where(step[trying] > 1.0, 1.0, step[trying] * 0.5)
        stuck = step[trying] < 1e-12
        if stuck.any():  # no step length decreases the objective: the problem stops
            again = act[trying[stuck]]
            stopped[again[~low[again]]] = True
            low[again] = False  # (with a float32 model: the step again, in float64)
            trying = trying[~stuck]


def _overflow(Za):
    raise DataError(
        f"The logistic solver's Newton model overflowed: the features are too "
        f"large (largest |z| = {np.abs(Za[:, 1:]).max():.3g}). Rescale the evidence."
    )


class _Cancelled(Exception):
    """Raised in a solver thread of the layer once the layer is stopping (see _newton)."""


def _best_step(eta, eta_d, y, share, a, c, slope0):
    """For each column, the step ``t`` that minimizes the smooth objective along its
    direction (no L1 term), to a hundredth of its initial slope, by a safeguarded 1-D
    Newton from ``t = 1``.

    Along the line the objective is ``phi(t) = mean(log(1 + e^(eta + t eta_d)) - y (eta +
    t eta_d)) + 1/2 (theta + t d)' R (theta + t d)``, convex, with
    ``phi'(t) = mean((p_t - y) eta_d) + a + t c`` (``a = theta' R d``, ``c = d' R d``) and
    ``phi''(t) = mean(p_t (1 - p_t) eta_d^2) + c``, the means weighted by the rows' shares
    ``share`` (n, 1).  ``slope0 = phi'(0) < 0``.  ``eta``, ``eta_d`` and ``y`` are (n, k);
    ``a``, ``c``, ``slope0`` and the result (k,).  A root is kept bracketed; the caller still
    checks sufficient decrease.
    """
    k = eta.shape[1]
    eta_d_r = share * eta_d  # the directions' images times the rows' shares
    lo, hi, t = np.zeros(k), np.full(k, np.inf), np.ones(k)
    cols = np.arange(k)  # the columns still searching
    for _ in range(12):
        e_d, e_d_r = eta_d[:, cols], eta_d_r[:, cols]
        p_t = expit(eta[:, cols] + t[cols] * e_d)
        slope = np.einsum("ij,ij->j", p_t - y[:, cols], e_d_r) + a[cols] + t[cols] * c[cols]
        searching = np.abs(slope) > 1e-2 * np.abs(slope0[cols])
        cols, slope, p_t, e_d, e_d_r = (
            cols[searching],
            slope[searching],
            p_t[:, searching],
            e_d[:, searching],
            e_d_r[:, searching],
        )
        if not cols.size:
            break
        below = slope < 0
        lo[cols[below]] = t[cols[below]]
        hi[cols[~below]] = t[cols[~below]]
        curv = np.einsum("ij,ij->j", p_t * (1.0 - p_t), e_d * e_d_r) + c[cols]
        tc, lc, hc = t[cols], lo[cols], hi[cols]
        with np.errstate(divide="ignore"):
            t_new = np.where(curv > 0, tc - slope / curv, np.inf)
        bad = ~((lc < t_new) & (t_new < hc)) | (t_new > 4.0 * tc)
        fallback = np.where(np.isfinite(hc), np.minimum(0.5 * (lc + hc), 4.0 * tc), 4.0 * tc)
        t[cols] = np.where(bad, fallback, t_new)
    return t


def _row_shares(n, weight):
    """Each row's share of the loss: ``1/n``, or ``weight`` over its sum."""
    if weight is None:
        return np.full(n, 1.0 / n)
    return weight / weight.sum()


def _gram(Za, share):
    """``Za' diag(share) Za``: the Hessian at a cold start, up to the rows' common curvature."""
    root = Za * np.sqrt(share)[:, None]
    return root.T @ root


def _kkt_rows(g, theta, lam):
    """KKT violation of each row of ``theta`` (intercept first) from its gradient ``g``."""
    beta, gb = theta[:, 1:], g[:, 1:]
    viol = np.where(beta != 0, np.abs(gb + lam * np.sign(beta)), np.maximum(np.abs(gb) - lam, 0.0))
    return np.maximum(np.abs(g[:, 0]), viol.max(axis=1, initial=0.0))


#: Most coordinates feature-sign search adds at once (the worst violators first).  From a
#: cold start on 174 labels about 110 of 175 violate, and adding all of them took 14 solves
#: of the quadratic per Newton step on systems of ~30 (most come out with the wrong sign and
#: are dropped again); at most 32 took SparseSBLR's layer 0.60 -> 0.50 s at λ = 1e-4 and
#: 1.8 -> 1.5 s at λ = 1e-5 (benchmarks/many_labels.py's set, one thread), and a warm-started
#: λ path as long as before.
_MAX_ADDED = 32


#: A zero coefficient joins a Newton step's working set (see _newton) when its gradient is
#: above this share of lam; 0 turns the working set off.
_SCREEN = 0.8


#: The working set is used only when it holds at most this share of the coefficients: a
#: larger one saved little and cost Newton steps (174 labels, λ = 1e-5: 1,069 -> 1,117
#: steps, 10-20% slower).
_SET_SHARE = 0.7


def _lasso_qp(H, c, pen, x0, max_iter=None):
    """Minimize 1/2 x'Hx + c'x + sum_j pen_j |x_j| exactly, by feature-sign search (or,
    stopped by ``max_iter``, return a point whose objective is below ``x0``'s).

    Lee, Battle, Raina & Ng (2007): keep an active set with fixed signs, solve
    the unconstrained quadratic on it, and step to the best point on the
    segment where a coefficient crosses zero; when the active ones are optimal,
    add the zero coordinates that violate optimality.  Coordinates with
    ``pen_j == 0`` (the intercept) are always active.  Warm-started at ``x0``.

    Lee et al. add one coordinate at a time, which costs one linear solve per
    coordinate when a warm start from a larger lambda has to grow its active set
    by a hundred.  Here the violating coordinates are added at once (the worst
    ``_MAX_ADDED`` of them, the rest when these are settled), each with the sign
    that decreases the objective (``-sign(grad_j)``); that is safe when the solve
    gives every added coordinate its assumed sign (then the objective along the
    segment equals the sign-consistent quadratic up to the first zero crossing,
    as in the one-at-a-time proof).  Added coordinates that come out with the
    wrong sign are dropped and the solve is repeated; a single added coordinate
    always comes out right, so this ends, and the minimizer is the same (the
    problem is strictly convex).  When a step stops at a zero crossing, dropping
    every crossed coordinate at once is also tried (kept only if it lowers the
    objective further; after a Newton step dozens cross, one per solve otherwise).
    The objective along the segment is a 1-D piecewise quadratic, evaluated in
    closed form at every candidate step.

    The search runs compiled (:mod:`sblr._compiled`, numba, without the GIL): in NumPy its
    Python overhead was two thirds of a SparseSBLR fit on 174 labels.  A numerically singular
    system on the active set is solved with a small diagonal shift (``1e-10 (1 + trace)``,
    grown until Cholesky succeeds).
    """
    if not pen.any():  # no L1 term (SBLR): one linear solve
        return _solve_spd(H, -c)
    try:  # imports numba: only when an L1 term is fitted
        from sblr._compiled import feature_sign
    except ImportError as exc:  # e.g. NumPy upgraded past what the installed numba supports
        raise ImportError(
            f"SparseSBLR's solver needs numba, which failed to import ({exc}). "
            "Reinstall it to match NumPy: pip install --upgrade numba"
        ) from exc

    c, pen, x0 = (np.ascontiguousarray(v, dtype=np.float64) for v in (c, pen, x0))
    H = np.ascontiguousarray(H, dtype=np.float64)
    return feature_sign(H, c, pen, x0, int(max_iter or 10 * len(c) + 50), _MAX_ADDED)
