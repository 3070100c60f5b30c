"""The compiled kernel of SparseSBLR's logistic layer: feature-sign search (numba).

SparseSBLR's Newton steps each minimize a quadratic model plus the L1 term exactly, by
feature-sign search (:func:`sblr._newton._lasso_qp` says how).  Written in NumPy, each of
its iterations was a few dozen calls on arrays of 20-100 numbers: Python's overhead, not
arithmetic, was about two thirds of a SparseSBLR fit on 174 labels, and it held the GIL, so
the layer's second thread gained little.  Here the same search is compiled by numba
(``nogil``: the layer's threads run it side by side), solving its small systems with
LAPACK's ``dpotrf``/``dpotrs`` (SciPy's, called through their C addresses, so that the
compiled code can be cached on disk).

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

# LAPACK's Cholesky factorization and solve, as external symbols (a ctypes function object
# would work as well but keeps the compiled code from being cached).
for _name in ("dpotrf", "dpotrs"):
    llvm.add_symbol(
        f"sblr_{_name}", get_cython_function_address("scipy.linalg.cython_lapack", _name)
    )
_ptr = types.voidptr
_dpotrf = types.ExternalFunction("sblr_dpotrf", types.void(_ptr, _ptr, _ptr, _ptr, _ptr))
_dpotrs = types.ExternalFunction(
    "sblr_dpotrs", types.void(_ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr)
)


def _jit(fn):
    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except RuntimeError:  # no writable cache folder: compiled in each process instead
        return numba.njit(nogil=True)(fn)


@_jit
def _solve_active(H, c, pen, idx, a, s, shift, work, out, ints):
    """``out[:a]`` = the solution of ``(H[idx, idx] + shift I) x = -(c + pen * s)[idx]``
    (``idx`` and ``s`` of length at least ``a``), by Cholesky; False if the matrix is not
    numerically positive definite.  ``work`` holds at least ``a * a`` floats, ``ints`` 4
    int32."""
    for i in range(a):
        row = idx[i]
        for j in range(a):
            work[i * a + j] = H[row, idx[j]]
        work[i * a + i] += shift
        out[i] = -(c[row] + pen[row] * s[i])
    ints[0] = a  # order, leading dimensions
    ints[1] = 1  # right-hand sides
    ints[2] = 0  # info
    ints[3] = 85  # "U": the upper triangle in LAPACK's column order is the lower one here
    _dpotrf(ints[3:].ctypes, ints.ctypes, work.ctypes, ints.ctypes, ints[2:].ctypes)
    if ints[2] != 0:
        return False
    _dpotrs(
        ints[3:].ctypes,
        ints.ctypes,
        ints[1:].ctypes,
        work.ctypes,
        ints.ctypes,
        out.ctypes,
        ints.ctypes,
        ints[2:].ctypes,
    )
    return ints[2] == 0


@_jit
def _solve(H, c, pen, idx, a, s, work, out, ints):
    """:func:`_solve_active` without a shift, or, when ``H[idx, idx]`` is numerically
    singular, with the smallest shift of ``1e-10 (1 + trace) · 100^k`` that is not (the
    Newton model's Hessian already carries ``1e-12 (1 + trace)``; NumPy's version of this
    search took the least-squares solution there)."""
    if _solve_active(H, c, pen, idx, a, s, 0.0, work, out, ints):
        return
    trace = 0.0
    for i in range(a):
        trace += H[idx[i], idx[i]]
    shift = 1e-10 * (1.0 + trace)
    while not _solve_active(H, c, pen, idx, a, s, shift, work, out, ints):
        shift *= 100.0


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
    symmetric positive (semi)definite; every array is float64."""
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
    active, act = np.empty(p, np.bool_), np.empty(p, np.bool_)
    cand, added, idx = np.empty(p, np.int64), np.empty(p, np.int64), np.empty(p, np.int64)
    s_a, new, old, d = np.empty(p), np.empty(p), np.empty(p), np.empty(p)
    moving, steps = np.empty(p, np.int64), np.empty(p + 1)
    rest, s_r, sol, jump = np.empty(p, np.int64), np.empty(p), np.empty(p), np.empty(p)
    work, ints = np.empty(p * p), np.zeros(4, np.int32)
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
            a = 0
            for j in range(p):
                if act[j]:
                    idx[a] = j
                    s_a[a] = trial[j]
                    a += 1
            _solve(H, c, pen, idx, a, s_a, work, new, ints)
            if n_added <= 1:
                break
            # drop the added coordinates that came out with the wrong sign, and solve again
            kept, i = 0, 0
            for k in range(n_added):
                while idx[i] != added[k]:
                    i += 1
                if new[i] * trial[added[k]] > 0:
                    added[kept] = added[k]
                    kept += 1
                i = 0
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
            if solved and s_a[i] != 0 and np.sign(new[i]) != s_a[i]:
                solved = False
        if best > 0 and n_mov > 1:
            # dropping every crossed coordinate: kept if its signs hold and it is lower
            r, m = 0, 0
            for i in range(a):
                if m < n_mov and moving[m] == i:
                    m += 1
                else:
                    rest[r] = idx[i]
                    s_r[r] = s_a[i]
                    r += 1
            _solve(H, c, pen, rest, r, s_r, work, sol, ints)
            holds = True
            for i in range(r):
                if s_r[i] != 0 and np.sign(sol[i]) != s_r[i]:
                    holds = False
            if holds:
                jump[:] = 0.0
                for i in range(r):
                    jump[rest[i]] = sol[i]
                if _model(H, c, pen, jump) < _model(H, c, pen, x):
                    x[:] = jump
                    solved = True
        for j in range(p):
            sign[j] = 0.0 if pen[j] == 0 else np.sign(x[j])
    return x
