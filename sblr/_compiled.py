"""The compiled kernel of SparseSBLR's logistic layer: feature-sign search (numba).

SparseSBLR's Newton steps each minimize a quadratic model plus the L1 term exactly, by
feature-sign search (:func:`sblr._newton._lasso_qp` says how).  Written in NumPy, each of
its iterations was a few dozen calls on arrays of 20-100 numbers: Python's overhead, not
arithmetic, was about two thirds of a SparseSBLR fit on 174 labels, and it held the GIL, so
the layer's second thread gained little.  Here the same search is compiled by numba
(``nogil``: the layer's threads run it side by side).  Its small systems on the active
coordinates are solved from one Cholesky factor, updated as coordinates enter and leave
(a search usually changes the set by one or a few coordinates per solve, and factoring
each system anew cost O(size³) where an update costs O(size²)).

The first call in a fresh environment compiles the kernel (5-10 s, mostly outside the GIL)
and caches it next to this file, or in numba's user-wide cache when that folder is
read-only (``NUMBA_CACHE_DIR`` chooses another); later processes load it in about 0.4 s.
Importing this module imports numba (about 0.5 s), so :mod:`sblr.logistic` imports it only
when a fit with an L1 term needs it.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numba
import numpy as np
from numba import types
from numba.extending import get_cython_function_address

# LAPACK's Cholesky factorization, as an external symbol (a ctypes function object would
# work as well but keeps the compiled code from being cached).
llvm.add_symbol("sblr_dpotrf", get_cython_function_address("scipy.linalg.cython_lapack", "dpotrf"))
_ptr = types.voidptr
_dpotrf = types.ExternalFunction("sblr_dpotrf", types.void(_ptr, _ptr, _ptr, _ptr, _ptr))
# BLAS's symmetric rank-k product in float32 (half the multiply-adds of a general product):
# the bootstrap's working-set Hessians
llvm.add_symbol("sblr_ssyrk", get_cython_function_address("scipy.linalg.cython_blas", "ssyrk"))
_ssyrk = types.ExternalFunction("sblr_ssyrk", types.void(*([_ptr] * 10)))
# ... and in float64: the Hessians of the screened layer's restricted problems
llvm.add_symbol("sblr_dsyrk", get_cython_function_address("scipy.linalg.cython_blas", "dsyrk"))
_dsyrk = types.ExternalFunction("sblr_dsyrk", types.void(*([_ptr] * 10)))


def _jit(fn=None, **options):
    if fn is None:
        return lambda f: _jit(f, **options)
    try:
        return numba.njit(cache=True, nogil=True, **options)(fn)
    except RuntimeError:  # no writable cache folder: compiled in each process instead
        return numba.njit(nogil=True, **options)(fn)


#: The factor's loops are dot products and updates of rows: reassociating their sums lets
#: them run in SIMD (no other fast-math liberty: a NaN must still fail a pivot).
_LINEAR_ALGEBRA = {"fastmath": {"reassoc", "contract"}}


@_jit(**_LINEAR_ALGEBRA)
def _factor_new(H, L, order, want, shift, ints):
    """Factor ``H[want, want] + shift I`` anew (LAPACK's ``dpotrf``), the coordinates in
    index order; its size, or -1 if it is not numerically positive definite."""
    size = 0
    for j in range(want.shape[0]):
        if want[j]:
            order[size] = j
            size += 1
    for r in range(size):
        for k in range(r + 1):
            L[r, k] = H[order[r], order[k]]
        L[r, r] += shift
    # L is C-ordered: its lower triangle is the upper one of LAPACK's column order ("U"),
    # with the leading dimension of L's rows
    ints[0] = size
    ints[1] = L.shape[1]
    ints[2] = 0  # info
    ints[3] = 85  # "U"
    _dpotrf(ints[3:].ctypes, ints.ctypes, L.ctypes, ints[1:].ctypes, ints[2:].ctypes)
    return size if ints[2] == 0 else -1


@_jit(**_LINEAR_ALGEBRA)
def _factor_add(H, L, order, size, j, shift):
    """Append coordinate ``j`` to the Cholesky factor ``L`` of ``H[order, order] + shift I``
    (its first ``size`` rows): the new row by one forward substitution, O(size²).  False if
    the matrix would not be numerically positive definite (the factor is then unchanged)."""
    for r in range(size):
        v = H[order[r], j]
        for k in range(r):
            v -= L[r, k] * L[size, k]
        L[size, r] = v / L[r, r]
    d2 = H[j, j] + shift
    for k in range(size):
        d2 -= L[size, k] * L[size, k]
    if not d2 > 0:  # (also NaN)
        return False
    L[size, size] = np.sqrt(d2)
    order[size] = j
    return True


@_jit(**_LINEAR_ALGEBRA)
def _factor_remove(L, order, size, i):
    """Remove the ``i``-th coordinate of the factor (of ``size``): its row goes, the rows
    below move up, each with one entry right of its diagonal, which Givens rotations of
    neighbouring columns zero again, O((size - i)²)."""
    for r in range(i, size - 1):
        order[r] = order[r + 1]
        for k in range(r + 2):
            L[r, k] = L[r + 1, k]
    for k in range(i, size - 1):
        h = np.hypot(L[k, k], L[k, k + 1])  # > 0: L[k, k + 1] was a diagonal entry
        cs, sn = L[k, k] / h, L[k, k + 1] / h
        for r in range(k, size - 1):
            u, v = L[r, k], L[r, k + 1]
            L[r, k] = cs * u + sn * v
            L[r, k + 1] = cs * v - sn * u
        L[k, k + 1] = 0.0


@_jit(**_LINEAR_ALGEBRA)
def _factor_to(H, L, order, size, in_factor, want, shift, ints):
    """Make the factor that of the coordinates ``want`` (a mask): remove the others, append
    the missing ones (in index order), or factor anew where that is cheaper.  Returns the
    new size, or -1 if the matrix is not numerically positive definite."""
    changes, wanted = 0, 0
    for j in range(want.shape[0]):
        wanted += want[j]
        changes += want[j] != in_factor[j]
    if _REFACTOR * changes >= wanted:
        in_factor[:] = want
        return _factor_new(H, L, order, want, shift, ints)
    r = size - 1
    while r >= 0:  # from the end: a removal moves only rows already kept
        if not want[order[r]]:
            in_factor[order[r]] = False
            _factor_remove(L, order, size, r)
            size -= 1
        r -= 1
    for j in range(want.shape[0]):
        if want[j] and not in_factor[j]:
            if not _factor_add(H, L, order, size, j, shift):
                return -1
            in_factor[j] = True
            size += 1
    return size


@_jit(**_LINEAR_ALGEBRA)
def _solve(H, c, pen, want, sign, out, fac):
    """``out[j]`` for the coordinates ``want``: the solution of ``(H + shift I) x = -(c + pen
    * sign)`` on them (``out`` is left as it was elsewhere), from the factor ``fac`` (its
    arrays, see :func:`feature_sign`), brought to ``want`` by updates.  The shift is 0, or,
    once a system has been numerically singular, the smallest ``1e-10 (1 + trace) · 100^k``
    that made it definite (refactored from scratch; the Newton model's Hessian already
    carries ``1e-12 (1 + trace)``), kept for the rest of the search."""
    L, order, in_factor, y, state, ints = fac
    size = _factor_to(H, L, order, int(state[0]), in_factor, want, state[1], ints)
    while size < 0:
        if state[1] == 0.0:
            trace = 0.0
            for j in range(want.shape[0]):
                if want[j]:
                    trace += H[j, j]
            state[1] = 1e-10 * (1.0 + trace)
        else:
            state[1] *= 100.0
        in_factor[:] = False
        size = _factor_to(H, L, order, 0, in_factor, want, state[1], ints)
    state[0] = size
    for r in range(size):  # L y = b, then L' x = y
        j = order[r]
        v = -(c[j] + pen[j] * sign[j])
        for k in range(r):
            v -= L[r, k] * y[k]
        y[r] = v / L[r, r]
    for r in range(size - 1, -1, -1):  # (by rows of L: contiguous)
        y[r] /= L[r, r]
        for k in range(r):
            y[k] -= L[r, k] * y[r]
    for r in range(size):
        out[order[r]] = y[r]


@_jit
def _model(H, c, pen, v):
    """``1/2 v'Hv + c'v + sum_j pen_j |v_j|``, over the non-zero entries of ``v``."""
    total = 0.0
    for i in range(v.shape[0]):
        if v[i] != 0:
            hv = 0.0
            for k in range(v.shape[0]):
                if v[k] != 0:
                    hv += H[i, k] * v[k]
            total += v[i] * (0.5 * hv + c[i]) + pen[i] * abs(v[i])
    return total


@_jit
def feature_sign(H, c, pen, x0, max_iter, max_added):
    """Feature-sign search on ``1/2 x'Hx + c'x + sum_j pen_j |x_j|`` from ``x0``, at most
    ``max_iter`` iterations, at most ``max_added`` coordinates entering at once: the
    algorithm of :func:`sblr._newton._lasso_qp`, step for step.  ``H`` is C-ordered and
    symmetric positive (semi)definite; every array is float64.

    Each solve on a set of coordinates updates one Cholesky factor from the last set (a
    coordinate appended or removed in O(size²)) instead of factoring anew (O(size³)): a
    search that moves dozens of coordinates in or out, as the first Newton step of a
    bootstrap resample from the fit on all rows does, took 50 solves of systems of ~85."""
    p = c.shape[0]
    x = x0.copy()
    eps = 0.0
    for j in range(p):
        eps = max(eps, abs(c[j]))
    eps = 1e-12 * (1.0 + eps)
    sign = np.empty(p)  # sign of each penalized coordinate (0 for the unpenalized ones)
    for j in range(p):
        sign[j] = 0.0 if pen[j] == 0 else np.sign(x[j])
    grad, viol, trial = np.empty(p), np.empty(p), np.empty(p)
    active, act, keep = np.empty(p, np.bool_), np.empty(p, np.bool_), np.empty(p, np.bool_)
    cand, added, idx = np.empty(p, np.int64), np.empty(p, np.int64), np.empty(p, np.int64)
    new, old, d, sol = np.empty(p), np.empty(p), np.empty(p), np.empty(p)
    moving, steps, jump = np.empty(p, np.int64), np.empty(p + 1), np.empty(p)
    # the factor: L, its coordinates in order, which are in it, work, (size, shift), LAPACK's
    # integer arguments
    fac = (
        np.empty((p, p)),
        np.empty(p, np.int64),
        np.zeros(p, np.bool_),
        np.empty(p),
        np.zeros(2),
        np.zeros(4, np.int32),
    )
    solved = False  # the last step solved the quadratic on the active set exactly
    for _ in range(max_iter):
        # gradient of the smooth part, and the largest violation on the active set
        for i in range(p):
            grad[i] = c[i]
        for j in range(p):
            if x[j] != 0:
                for i in range(p):
                    grad[i] += H[j, i] * x[j]  # (H is symmetric: its rows are contiguous)
        err = 0.0
        for j in range(p):
            active[j] = x[j] != 0 or pen[j] == 0
            if active[j]:
                err = max(err, abs(grad[j] + pen[j] * sign[j]))
        n_added = 0
        if solved or err <= eps:
            # the violating zero coordinates, worst first (ties in index order)
            n_cand = 0
            for j in range(p):
                if not active[j] and abs(grad[j]) - pen[j] > eps:
                    viol[j] = abs(grad[j]) - pen[j]
                    k = n_cand
                    while k > 0 and viol[cand[k - 1]] < viol[j]:
                        cand[k] = cand[k - 1]
                        k -= 1
                    cand[k] = j
                    n_cand += 1
            if n_cand == 0:
                break
            n_added = min(n_cand, max_added)
            added[:n_added] = cand[:n_added]
        while True:
            # solve on the active set and the added coordinates, each added one with the
            # sign that decreases the objective
            for j in range(p):
                act[j] = active[j]
                trial[j] = sign[j]
            for k in range(n_added):
                act[added[k]] = True
                trial[added[k]] = -np.sign(grad[added[k]])
            _solve(H, c, pen, act, trial, sol, fac)
            a = 0
            for j in range(p):
                if act[j]:
                    idx[a] = j
                    new[a] = sol[j]
                    a += 1
            if n_added <= 1:
                break
            # drop the added coordinates that came out with the wrong sign, and solve again
            kept = 0
            for k in range(n_added):
                if sol[added[k]] * trial[added[k]] > 0:
                    added[kept] = added[k]
                    kept += 1
            if kept == n_added:
                break
            n_added = max(kept, 1)  # none right: the worst violator alone
        # the best point on the segment to the solution: the full step, or a zero crossing
        slope, curv, base, n_mov = 0.0, 0.0, 0.0, 0
        for i in range(a):
            j = idx[i]
            old[i] = x[j]
            d[i] = new[i] - old[i]
            slope += grad[j] * d[i]
            base += pen[j] * abs(old[i])
            if old[i] != 0 and pen[j] > 0 and np.sign(new[i]) != np.sign(old[i]):
                moving[n_mov] = i
                steps[n_mov + 1] = old[i] / (old[i] - new[i])
                n_mov += 1
        steps[0] = 1.0
        for i in range(a):
            hd = 0.0
            for k in range(a):
                hd += H[idx[i], idx[k]] * d[k]
            curv += d[i] * hd
        best, best_value = 0, np.inf
        for s in range(n_mov + 1):
            l1 = 0.0
            for i in range(a):
                l1 += pen[idx[i]] * abs(old[i] + steps[s] * d[i])
            value = slope * steps[s] + 0.5 * curv * steps[s] ** 2 + l1 - base
            if value < best_value:  # ties: the full step (first)
                best, best_value = s, value
        for i in range(a):
            x[idx[i]] = new[i] if best == 0 else old[i] + steps[best] * d[i]
        if best > 0:
            x[idx[moving[best - 1]]] = 0.0
        # a full step whose signs match the assumed ones is the exact optimum on this set
        solved = best == 0
        for i in range(a):
            if solved and trial[idx[i]] != 0 and np.sign(new[i]) != trial[idx[i]]:
                solved = False
        if best > 0 and n_mov > 1:
            # dropping every crossed coordinate: kept if its signs hold and it is lower
            keep[:] = act
            for m in range(n_mov):
                keep[idx[moving[m]]] = False
            _solve(H, c, pen, keep, trial, sol, fac)
            holds = True
            for j in range(p):
                jump[j] = sol[j] if keep[j] else 0.0
                if keep[j] and trial[j] != 0 and np.sign(sol[j]) != trial[j]:
                    holds = False
            if holds and _model(H, c, pen, jump) < _model(H, c, pen, x):
                x[:] = jump
                solved = True
        for j in range(p):
            sign[j] = 0.0 if pen[j] == 0 else np.sign(x[j])
    return x


#: A solve factors its system anew when at least 1/_REFACTOR of its coordinates are new or
#: gone since the last (LAPACK's blocked factorization beats that many updates).
_REFACTOR = 8


@_jit
def working_set_steps32(
    Za32,
    col,
    sqrt_w,
    theta,
    g,
    pen,
    reg,
    row_sq,
    lam,
    screen,
    damping,
    max_added,
    todo,
    target,
    done,
):
    """The Newton steps of :func:`sblr._newton._newton` for the problems ``todo`` whose model
    is formed in float32 (``exact_steps``: the bootstrap's), compiled: per problem the Python
    path made some twenty NumPy calls around the Hessian's product and the search, holding
    the GIL, which kept the layer's second thread waiting.

    Row ``j`` of ``theta``, ``g``, ``target`` and column ``j`` of ``sqrt_w``: the problem's
    coefficients, gradient, the model's minimizer (written) and square-root curvatures.
    The model is the float32 Gram matrix of ``sqrt(w) Za`` on the working set (the
    intercept, the non-zero coefficients, those whose gradient exceeds ``screen · lam``: in
    float32 the set's model is always the cheaper one), its columns scaled to at
    most 1 (``Za32 = Za / col``, the curvatures by their largest) and scaled back in
    float64, BLAS's ``ssyrk`` forming it, plus the damping of the float64 path; then the
    search, exact (without an L1 term it solves the Newton system).  ``done[j]``: 1 when
    solved, -1 when the model is not finite (the caller raises; the others are not done).
    """
    n, p = Za32.shape
    ints = np.zeros(2, np.int32)
    floats = np.zeros(2, np.float32)
    chars = np.zeros(2, np.int8)
    # work arrays for every problem, each used at the size of its working set
    C_all, W_all = np.empty(p, np.int64), np.empty(p * n, np.float32)
    H32_all, H_all = np.empty(p * p, np.float32), np.empty(p * p)
    scale_all, c_all, x0_all, pen_all = np.empty(p), np.empty(p), np.empty(p), np.empty(p)
    for t in range(todo.shape[0]):
        j = todo[t]
        size = 0
        for i in range(p):
            if i == 0 or theta[j, i] != 0 or abs(g[j, i]) > screen * lam:
                C_all[size] = i
                size += 1
        C = C_all[:size]
        top = 0.0
        for r in range(n):
            top = max(top, sqrt_w[r, j])
        div = top if top > 0 else 1.0
        # the set's columns of sqrt(w) Za, scaled, as the rows of W (BLAS's column order)
        W = W_all[: size * n].reshape((size, n))
        for r in range(n):
            root = np.float32(sqrt_w[r, j] / div)
            for a in range(size):
                W[a, r] = Za32[r, C[a]] * root
        H32 = H32_all[: size * size].reshape((size, size))
        ints[0], ints[1] = size, n  # ssyrk's n, k (and lda): H32 = A'A, A = W' (n × size), upper
        floats[0], floats[1] = 1.0, 0.0
        chars[0], chars[1] = 85, 84  # "U", "T": W' W of the n × size matrix W'
        _ssyrk(
            chars[0:].ctypes,
            chars[1:].ctypes,
            ints[0:].ctypes,
            ints[1:].ctypes,
            floats[0:].ctypes,
            W.ctypes,
            ints[1:].ctypes,
            floats[1:].ctypes,
            H32.ctypes,
            ints[0:].ctypes,
        )
        H = H_all[: size * size].reshape((size, size))
        scale = scale_all[:size]
        for a in range(size):
            scale[a] = col[C[a]] * top
        for a in range(size):  # column-major upper = row-major lower: b <= a
            for b in range(a + 1):
                H[a, b] = (np.float64(H32[a, b]) * scale[a]) * scale[b]
                H[b, a] = H[a, b]
        trace = 0.0  # the whole Hessian's, from the rows' squared norms
        for r in range(n):
            trace += (sqrt_w[r, j] ** 2) * row_sq[r]
        finite = np.isfinite(trace)
        for i in range(p):
            finite = finite and np.isfinite(g[j, i])
        if not finite:
            done[j] = -1
            return
        c, x0, pen_C = c_all[:size], x0_all[:size], pen_all[:size]
        for a in range(size):
            H[a, a] += reg[C[a]] + damping * (1.0 + trace)
        for a in range(size):
            hv = 0.0
            for b in range(size):
                hv += H[a, b] * theta[j, C[b]]
            c[a] = g[j, C[a]] - hv
            x0[a] = theta[j, C[a]]
            pen_C[a] = pen[C[a]]
        x = feature_sign(H, c, pen_C, x0, 10 * size + 50, max_added)
        for i in range(p):
            target[j, i] = 0.0
        for a in range(size):
            target[j, C[a]] = x[a]
        done[j] = 1


@_jit(fastmath={"reassoc", "contract"})
def _dot(a, b):
    total = 0.0
    for r in range(a.shape[0]):
        total += a[r] * b[r]
    return total


@_jit
def restricted_newton(FT, cols, y, share, reg, lam, theta, tol, max_iter, damping, max_added):
    """One class's problem restricted to a working set, solved by the proximal Newton steps of
    :func:`sblr._newton._newton` (its Hessian, exact feature-sign search, Armijo backtracking
    and KKT stopping rule), compiled and without the GIL: the screened layer
    (:func:`sblr.logistic._screened_layer`) calls it once per class and working set, where
    the NumPy loop's Python calls on n-long arrays cost more than the set's arithmetic.

    ``FT`` is the evidence transposed (m, n), C-ordered (each column of the evidence
    contiguous); ``cols`` (s,) the working set's columns; ``theta`` (s + 1,) the intercept
    and their coefficients, updated in place; ``reg`` (s + 1,) the ridge, 0 for the
    intercept; ``share`` (n,) each row's share of the loss.  Returns ``(n_iter, kkt,
    finite)``: the Newton steps taken, the KKT violation on the set at the end, and False if
    the Newton model overflowed (the caller raises)."""
    n = FT.shape[1]
    s = cols.shape[0]
    p = s + 1
    pen = np.full(p, lam)
    pen[0] = 0.0
    eta, w, r = np.empty(n), np.empty(n), np.empty(n)
    eta_d, eta_new = np.empty(n), np.empty(n)
    W = np.empty((p, n))  # the rows are the set's columns of sqrt(w) [1, Z]
    H, g, c = np.empty((p, p)), np.empty(p), np.empty(p)
    ints = np.zeros(2, np.int32)
    floats = np.zeros(2)
    chars = np.zeros(2, np.int8)
    for i in range(n):
        eta[i] = theta[0]
    for a in range(s):
        if theta[a + 1] != 0:
            for i in range(n):
                eta[i] += FT[cols[a], i] * theta[a + 1]
    f = _restricted_objective(eta, y, share, reg, pen, theta)
    n_iter = 0
    kkt = 0.0
    while True:
        for i in range(n):  # residuals and curvatures
            e = eta[i]
            if e >= 0:
                prob = 1.0 / (1.0 + np.exp(-e))
            else:
                ex = np.exp(e)
                prob = ex / (1.0 + ex)
            r[i] = share[i] * (prob - y[i])
            w[i] = share[i] * prob * (1.0 - prob)
        g[0] = 0.0
        for i in range(n):
            g[0] += r[i]
        for a in range(s):
            g[a + 1] = _dot(FT[cols[a]], r) + reg[a + 1] * theta[a + 1]
        kkt = abs(g[0])
        for a in range(1, p):
            if theta[a] != 0:
                kkt = max(kkt, abs(g[a] + lam * np.sign(theta[a])))
            else:
                kkt = max(kkt, abs(g[a]) - lam)
        if kkt <= tol or n_iter >= max_iter:
            break
        n_iter += 1
        # the Hessian [1, Z]' diag(w) [1, Z] on the set, by BLAS's dsyrk
        trace = 0.0
        for i in range(n):
            root = np.sqrt(w[i])
            W[0, i] = root
            trace += w[i]
        for a in range(s):
            col = FT[cols[a]]
            for i in range(n):
                W[a + 1, i] = col[i] * W[0, i]
        ints[0], ints[1] = p, n
        floats[0], floats[1] = 1.0, 0.0
        chars[0], chars[1] = 85, 84  # "U", "T": W W' of the n × p matrix W'
        _dsyrk(
            chars[0:].ctypes,
            chars[1:].ctypes,
            ints[0:].ctypes,
            ints[1:].ctypes,
            floats[0:].ctypes,
            W.ctypes,
            ints[1:].ctypes,
            floats[1:].ctypes,
            H.ctypes,
            ints[0:].ctypes,
        )
        for a in range(p):  # column-major upper = row-major lower: b <= a
            for b in range(a):
                H[b, a] = H[a, b]
        for a in range(1, p):
            trace += H[a, a]
        if not np.isfinite(trace):
            return n_iter, kkt, False
        for a in range(p):
            H[a, a] += reg[a] + damping * (1.0 + trace)
        for a in range(p):
            hv = 0.0
            for b in range(p):
                hv += H[a, b] * theta[b]
            c[a] = g[a] - hv
        target = feature_sign(H, c, pen, theta, 10 * p + 50, max_added)
        decrease = 0.0
        for a in range(p):
            decrease += g[a] * (target[a] - theta[a])
            if a > 0:
                decrease += lam * (abs(target[a]) - abs(theta[a]))
        if not decrease < 0:  # numerically flat: nothing left to gain
            break
        for i in range(n):
            eta_d[i] = target[0] - theta[0]
        for a in range(s):
            da = target[a + 1] - theta[a + 1]
            if da != 0:
                for i in range(n):
                    eta_d[i] += FT[cols[a], i] * da
        step = 1.0
        cand = np.empty(p)
        moved = False
        while step >= 1e-12:
            for a in range(p):
                cand[a] = theta[a] + step * (target[a] - theta[a])
            for i in range(n):
                eta_new[i] = eta[i] + step * eta_d[i]
            f_new = _restricted_objective(eta_new, y, share, reg, pen, cand)
            if f_new <= f + 1e-4 * min(step, 1.0) * decrease:
                theta[:] = cand
                eta[:] = eta_new
                f = f_new
                moved = True
                break
            step *= 0.5
        if not moved:  # no step length decreases the objective
            break
    return n_iter, kkt, True


@_jit
def _restricted_objective(eta, y, share, reg, pen, theta):
    total = 0.0
    for i in range(eta.shape[0]):
        e = eta[i]
        total += share[i] * (max(e, 0.0) + np.log1p(np.exp(-abs(e))) - y[i] * e)
    for a in range(theta.shape[0]):
        total += 0.5 * reg[a] * theta[a] * theta[a] + pen[a] * abs(theta[a])
    return total
