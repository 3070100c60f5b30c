"""Exact class evidence: how much each class resembles a row, one kernel value at a time.

The kernels (:func:`kernel_block`), the blocked and tiled sums over the training rows with
their leave-one-out term (:func:`class_evidence`; memory bounded by ``working_memory``,
results independent of the thread count), the squared distances that stay finite far from
the data (:func:`sq_distances`), and the normalization and checks every evidence passes
(:func:`normalize_evidence`, :func:`check_evidence`).  Public through :mod:`sblr.similarity`.
"""

from __future__ import annotations

import functools
import math
import threading
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import manhattan_distances
from sklearn.utils.extmath import row_norms, safe_sparse_dot

from sblr._threads import evidence_threads as _evidence_threads
from sblr._threads import run_in_threads as _run
from sblr._validation import Interval, StrOptions, validate_params
from sblr.exceptions import DataError

KERNELS = ("rbf", "laplacian", "linear", "cosine")


#: Kernels that accept sparse input: they depend on differences of rows only, so the
#: shift of the [-1, 1] scaling (which sparse data skip to stay sparse) does not matter.
SPARSE_KERNELS = ("rbf", "laplacian")
DEFAULT_WORKING_MEMORY_MB = 256


# Parameter constraints of the public functions (sblr._validation); SimilarityFeaturizer
# declares the same ones in _parameter_constraints.
_ROWS = ["array-like", "sparse matrix"]
_KERNEL = [StrOptions(set(KERNELS)), callable]
_GAMMA = [Interval(Real, 0, None, closed="left")]
#: Kernels whose evidence is never negative: ``normalize="log_rate"`` and SML's multi-label
#: scores take its log.
NONNEGATIVE_KERNELS = ("rbf", "laplacian")

_NORMALIZE = [StrOptions({"log_rate", "mean", "sum"})]

#: The log rate of a class with no evidence at all (``log(0)``): e^-100 ~ 4e-44.  Measured on
#: Mulan's scene split (SparseSBLR on log shares of the class sums, gamma = 10, lam = 3e-4):
#: floors of -5, -30, -100 and -745 gave test AP 0.786, 0.793, 0.815 and 0.799; at gamma <= 1
#: every floor below -20 gave the same numbers to 3 digits (evidence that small only occurs
#: in the local regime).
LOG_RATE_FLOOR = -100.0
_WORKING_MEMORY = [Interval(Real, 0, None, closed="neither")]


# --------------------------------------------------------------------------- math
def _sq_norms(A):
    if sp.issparse(A):
        return row_norms(A, squared=True)
    return np.einsum("ij,ij->i", A, A)


#: Kernel values below ``exp(_EXP_FLOOR)`` (about 1e-304) are taken as 0.  NumPy's exp
#: leaves its vectorized path for arguments near and below -708 (results that underflow or
#: are subnormal) and is then 5-12 times slower: at gamma >= 10 most of a kernel matrix.
_EXP_FLOOR = -700.0


def exp_in_place(K):
    """``exp(K)`` into ``K`` (arguments <= 0), values below ``exp(-700)`` ≈ 1e-304 set to 0.

    Examples
    --------
    >>> K = np.array([-1.0, -700.0, -701.0, -np.inf])
    >>> exp_in_place(K).tolist() == [np.exp(-1.0), np.exp(-700.0), 0.0, 0.0]
    True
    """
    if K.size == 0 or K.min() >= _EXP_FLOOR:
        return np.exp(K, out=K)
    kept = K >= _EXP_FLOOR
    np.maximum(K, _EXP_FLOOR, out=K)
    np.exp(K, out=K)
    K *= kept
    return K


@validate_params(
    {
        "A": _ROWS,
        "B": _ROWS,
        "kernel": _KERNEL,
        "gamma": _GAMMA,
        "B_sq_norms": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def kernel_block(A, B, kernel="rbf", gamma=1.0, B_sq_norms=None):
    """Similarity matrix ``Phi(A_i, B_j)`` of shape (len(A), len(B)).

    Parameters
    ----------
    A, B : ndarray or CSR matrix of shape (n_a, d), (n_b, d)
        Sparse rows for the rbf and laplacian kernels only.
    kernel : {"rbf", "laplacian", "linear", "cosine"} or callable
        ``rbf``: ``exp(-gamma ||a - b||^2)``; ``laplacian``:
        ``exp(-gamma ||a - b||_1)``; ``linear``: ``a . b``; ``cosine``:
        ``a . b / (||a|| ||b||)`` (0 for a zero vector).  A callable gets
        ``(A, B)`` and returns the matrix.
    gamma : float
    B_sq_norms : ndarray of shape (n_b,), optional
        Precomputed squared norms of the rows of ``B`` (rbf only).

    A row far outside the others (a query far outside the training range,
    even ``±inf`` after scaling) gets the distance it has, possibly ``inf``,
    so similarity ``exp(-gamma * inf) = 0`` with the rbf and laplacian kernels,
    never NaN (see :func:`sq_distances`).  The linear and cosine kernels
    have no such limit: their values for such rows may overflow.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.0, 0.0]]); B = np.array([[1.0, 1.0], [0.0, 0.0]])
    >>> kernel_block(A, B, "rbf", gamma=0.5)
    array([[0.36787944, 1.        ]])
    """
    if callable(kernel):
        K = np.asarray(kernel(A, B), dtype=np.float64)
        if K.shape != (A.shape[0], B.shape[0]):
            raise ValueError(
                f"The similarity callable returned shape {K.shape}; expected "
                f"{(A.shape[0], B.shape[0])} (one row per query row, one column "
                "per training row)."
            )
        return K
    if kernel == "rbf":
        K = sq_distances(A, B, B_sq_norms)
        K *= -gamma
        return exp_in_place(K)
    if kernel == "laplacian":
        return np.exp(-gamma * _l1_distances(A, B))
    if kernel == "linear":
        return A @ B.T
    # "cosine"
    na = np.sqrt(_sq_norms(A))
    nb = np.sqrt(_sq_norms(B))
    na[na == 0] = 1.0
    nb[nb == 0] = 1.0
    return (A @ B.T) / na[:, None] / nb[None, :]


def _cross(A, B):
    """``A @ B.T`` as a dense array (through BLAS for dense rows, sparse products otherwise)."""
    if sp.issparse(A) or sp.issparse(B):
        return np.asarray(safe_sparse_dot(A, B.T, dense_output=True), dtype=np.float64)
    return A @ B.T


def _max_abs_rows(A):
    """Largest absolute entry of each row (0 for a row without entries)."""
    if A.shape[1] == 0:
        return np.zeros(A.shape[0])
    if sp.issparse(A):
        return np.asarray(abs(A).max(axis=1).todense(), dtype=np.float64).ravel()
    return np.abs(A).max(axis=1)


def _l1_distances(A, B):
    """``||a - b||_1`` for every pair; ``inf`` for a row holding ``±inf``."""
    if not (sp.issparse(A) or sp.issparse(B)):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.abs(A[:, None, :] - B[None, :, :]).sum(axis=2)
    # scikit-learn refuses ±inf; a row holding it is infinitely far from every finite row
    finite_a, finite_b = np.isfinite(_max_abs_rows(A)), np.isfinite(_max_abs_rows(B))
    D = np.full((A.shape[0], B.shape[0]), np.inf)
    if finite_a.any() and finite_b.any():
        D[np.ix_(finite_a, finite_b)] = manhattan_distances(A[finite_a], B[finite_b])
    return D


def _block_rows(n_train, d, kernel, working_memory):
    # Bytes held per query row while a block is alive: the similarity row, the
    # laplacian's (n_train, d) difference tensor when that kernel is used.
    row_bytes = 8 * n_train * (d + 1 if kernel == "laplacian" else 2)
    return max(1, int(working_memory * 2**20 // row_bytes))


@validate_params(
    {
        "X_query": _ROWS,
        "X_train": _ROWS,
        "Y": ["array-like"],
        "kernel": _KERNEL,
        "gamma": _GAMMA,
        "leave_one_out": ["boolean"],
        "working_memory": _WORKING_MEMORY,
    },
    prefer_skip_nested_validation=True,
)
def class_evidence(
    X_query,
    X_train,
    Y,
    *,
    kernel="rbf",
    gamma=1.0,
    leave_one_out=False,
    working_memory=DEFAULT_WORKING_MEMORY_MB,
):
    """Summed similarity of each query row to the training rows of each class.

    Never a full (n_query, n_train) matrix for large inputs.  The rbf kernel
    on dense rows is computed by cache-sized tiles in place, in threads, with
    leave-one-out using the symmetry of the kernel matrix (half the work; see
    :func:`_rbf_evidence`): memory O(tile + (n_query + n_train) * (d + m)).
    Other kernels and sparse rows are computed in row blocks of
    :func:`kernel_block`: memory O(block * n_train).

    Parameters
    ----------
    X_query : ndarray of shape (n_query, d)
    X_train : ndarray of shape (n_train, d)
    Y : ndarray of shape (n_train, m)
        0/1 class indicator of the training rows.
    kernel, gamma
        See :func:`kernel_block`.
    leave_one_out : bool
        ``X_query`` IS ``X_train`` (same rows, same order) and each row's own
        term ``Phi(x_i, x_i)`` is left out of its evidence.
    working_memory : float
        Memory budget in MiB of one row block (tiled path: of four tiles,
        one per thread).

    Returns
    -------
    sums : ndarray of shape (n_query, m)
        ``sums[i, k] = sum_{j in D_k, j != i if leave_one_out} Phi(x_i, x_j)``.
    counts : ndarray of shape (n_query, m)
        Number of class-k rows counted for row i.

    Examples
    --------
    Three training rows on a line, two classes; row 0 left out of itself:

    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> Y = np.array([[1, 0], [1, 0], [0, 1]])
    >>> sums, counts = class_evidence(X, X, Y, kernel="linear", leave_one_out=True)
    >>> sums
    array([[0., 0.],
           [0., 3.],
           [3., 0.]])
    >>> counts
    array([[1., 1.],
           [1., 1.],
           [2., 0.]])
    """
    Yf = np.asarray(Y, dtype=np.float64)
    n_query, n_train = X_query.shape[0], X_train.shape[0]
    if leave_one_out and n_query != n_train:
        raise ValueError("leave_one_out needs the training rows themselves as queries.")
    counts = np.broadcast_to(Yf.sum(axis=0), (n_query, Yf.shape[1])).copy()
    if leave_one_out:
        counts -= Yf
    if _dense_rbf(kernel, X_query, X_train):
        # leave-one-out means the query rows ARE the training rows, a copy of them included
        # (the non-symmetric tiles know nothing of a row's own term)
        symmetric = leave_one_out or X_query is X_train
        sums = _rbf_evidence(X_query, X_train, Yf, gamma, leave_one_out, symmetric, working_memory)
        if sums is not None:
            return sums, counts
    return _blocked_evidence(
        X_query, X_train, Yf, kernel, gamma, leave_one_out, working_memory
    ), counts


def _blocked_evidence(X_query, X_train, Yf, kernel, gamma, leave_one_out, working_memory):
    """Evidence sums by query-row blocks of :func:`kernel_block` (every kernel, sparse rows)."""
    n_query, n_train = X_query.shape[0], X_train.shape[0]
    sums = np.empty((n_query, Yf.shape[1]))
    B_sq = _sq_norms(X_train) if kernel == "rbf" else None
    step = _block_rows(n_train, X_train.shape[1], kernel, working_memory)
    targets = _sparse_targets(Yf) if isinstance(kernel, str) else None
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        rows = np.arange(stop - start)
        if targets is not None:
            # the block transposed (the named kernels are symmetric), so that the sparse
            # targets multiply it without a copy: (classes, n_train) @ (n_train, rows)
            Kt = kernel_block(X_train, X_query[start:stop], kernel, gamma)
            if leave_one_out:
                Kt[start + rows, rows] = 0.0
            sums[start:stop] = (targets @ Kt).T
            del Kt  # else the next block is computed while this one is alive: twice the memory
            continue
        K = kernel_block(X_query[start:stop], X_train, kernel, gamma, B_sq)
        if leave_one_out:
            K[rows, start + rows] = 0.0
        sums[start:stop] = K @ Yf
        del K
    return sums


#: Class indicators at most this dense (and at least _SPARSE_TARGETS_FROM classes) multiply
#: the kernel blocks as a sparse matrix: on Mulan's delicious (983 labels, 1.9% of entries
#: 1) a block of 1,300 rows took 3.7 s dense and 1.3 s sparse (benchmarks/many_labels.py).
_SPARSE_TARGETS_DENSITY = 0.05
_SPARSE_TARGETS_FROM = 64


def _sparse_targets(Yf):
    """``Yf`` transposed as a CSR matrix where it is sparse and wide, else None."""
    n, m = Yf.shape
    if m < _SPARSE_TARGETS_FROM or np.count_nonzero(Yf) > _SPARSE_TARGETS_DENSITY * n * m:
        return None
    from scipy import sparse

    return sparse.csr_matrix(Yf.T)


# ----------------------------------------------------- exact rbf evidence of dense rows
# The rbf evidence is the hot path of every exact fit.  Written as "distances, then kernel,
# then K @ Y" over (rows, n_train) blocks, it streams each block through memory about seven
# times (BLAS product, -2x, + norms twice, clip, -gamma x, exp, product with Y) and cost
# ~2.5 x one BLAS ``X @ X.T``.  Here the same operations run on tiles that stay in a core's
# cache, in place: the squared distances come out of ONE BLAS product of the rows extended by
# their squared norms, ``[-2a, ||a||^2, 1] . [b, 1, ||b||^2] = ||a - b||^2`` (the -2 is exact:
# a power of two), then clip at 0, times -gamma and exp in place, and the class sums of a
# tile are one small BLAS product ``K_tile @ Y``.  Leave-one-out evidence (the training rows
# against themselves) uses the symmetry of the kernel matrix: only tiles on and above the
# diagonal are computed, and an off-diagonal tile ``K_IJ`` gives ``K_IJ @ Y_J`` to rows I and
# ``K_IJ^T @ Y_I`` to rows J: half the distances and exponentials of the full matrix.  Tiles
# run in threads (NumPy's exp and BLAS release the GIL), BLAS itself on one thread; the
# summation order does not depend on the number of threads (see :func:`_rbf_evidence`).

#: Rows of a tile (the tiles on the diagonal compute their lower triangle for nothing:
#: ``n * _TILE_ROWS / 2`` values, 5% of the ``n^2 / 2`` at n = 2,417).
_TILE_ROWS = 128
#: Kernel values of a tile: 128 x 1024 float64 = 1 MiB, about a core's L2 cache.
_TILE_VALUES = 128 * 1024
#: Fixed number of partial sums of the symmetric path's mirrored terms (so of threads there).
_LANES = 4


def _dense_rbf(kernel, X_query, X_train):
    return (
        isinstance(kernel, str)
        and kernel == "rbf"
        and all(
            isinstance(A, np.ndarray) and A.dtype == np.float64 and A.ndim == 2
            for A in (X_query, X_train)
        )
    )


def _tile_shape(n_rows, n_cols, working_memory):
    """Rows and columns of a tile: about :data:`_TILE_VALUES` values, and :data:`_LANES`
    tiles within ``working_memory``; fewer rows than :data:`_TILE_ROWS` only when the
    budget or ``n_rows`` is smaller."""
    values = max(1, min(_TILE_VALUES, int(working_memory * 2**20) // (8 * _LANES)))
    rows = max(1, min(_TILE_ROWS, n_rows, math.isqrt(values)))
    cols = max(1, min(n_cols, values // rows))
    return rows, cols


def _extended(X, sq, query):
    """``[-2 X, ||x||^2, 1]`` (query side) or ``[X, 1, ||x||^2]``: their products are the
    squared distances (see the comment above)."""
    n, d = X.shape
    out = np.empty((n, d + 2))
    if query:
        np.multiply(X, -2.0, out=out[:, :d])
        out[:, d], out[:, d + 1] = sq, 1.0
    else:
        out[:, :d] = X
        out[:, d], out[:, d + 1] = 1.0, sq
    return out


def _rbf_tile(A_ext, B_ext, gamma, out):
    """``exp(-gamma * max(||a - b||^2, 0))`` of extended rows (:func:`_extended`) into ``out``."""
    np.matmul(A_ext, B_ext.T, out=out)
    np.maximum(out, 0.0, out=out)
    out *= -gamma
    return exp_in_place(out)


def _rbf_evidence(X_query, X_train, Yf, gamma, leave_one_out, symmetric, working_memory):
    """Exact rbf evidence sums of dense rows by cache-sized tiles (``None``: not applicable).

    ``None`` when a training row is too large for the expansion of the squared distance
    (squared norm 2**1020 or more, see :func:`sq_distances`); query rows that large are
    computed by :func:`_blocked_evidence`, which rescales them.

    With ``symmetric`` (``leave_one_out`` or ``X_query is X_train``) only the tiles on and
    above the diagonal are computed.  Row strip ``I`` adds ``K_IJ @ Y_J`` for ``J >= I`` to
    its own rows (in order of ``J``) and the mirrored terms ``K_IJ^T @ Y_I`` to one of
    :data:`_LANES` partial sums (strips are dealt to the lanes in pairs, ``I`` with
    ``N - 1 - I``, so the lanes carry equal work; a lane adds its strips in order of ``I``
    in one thread); the result is the own sums plus the lanes in order.  So the summation
    order, and the result to the last bit, depend on the data and ``working_memory`` only,
    not on the number of threads.  The lanes take ``_LANES * n * m`` floats (fewer lanes if
    that exceeds half of ``working_memory``).  Memory besides the result: one tile per
    thread, the lanes, and the training rows extended by two columns (see
    :func:`_extended`), ``n_train * (d + 2)`` floats; never an ``(n, n)`` block.
    """
    n_query, n_train = X_query.shape[0], X_train.shape[0]
    B_sq = _sq_norms(X_train)
    if not (B_sq < _SAFE_SQ_NORM).all():
        return None
    if symmetric:
        return _symmetric_rbf_evidence(X_train, B_sq, Yf, gamma, leave_one_out, working_memory)

    A_sq = _sq_norms(X_query)
    near = A_sq < _SAFE_SQ_NORM
    if not near.all():  # far query rows: the blocked path rescales them
        sums = np.empty((n_query, Yf.shape[1]))
        sums[~near] = _blocked_evidence(
            X_query[~near], X_train, Yf, "rbf", gamma, False, working_memory
        )
        if near.any():
            sums[near] = _rbf_evidence(
                X_query[near], X_train, Yf, gamma, False, False, working_memory
            )
        return sums
    B_ext = _extended(X_train, B_sq, False)
    rows, cols = _tile_shape(n_query, n_train, working_memory)
    sums = np.zeros((n_query, Yf.shape[1]))
    buffers = threading.local()

    def strip(i0):
        i1 = min(i0 + rows, n_query)
        if (buf := getattr(buffers, "tile", None)) is None:
            buf = buffers.tile = np.empty(rows * cols)
        A, acc = _extended(X_query[i0:i1], A_sq[i0:i1], True), sums[i0:i1]
        for j0 in range(0, n_train, cols):
            j1 = min(j0 + cols, n_train)
            K = _rbf_tile(A, B_ext[j0:j1], gamma, _view(buf, i1 - i0, j1 - j0))
            acc += K @ Yf[j0:j1]

    n_threads = min(_evidence_threads(n_query * n_train), -(-n_query // rows))
    _run((functools.partial(strip, i0) for i0 in range(0, n_query, rows)), n_threads)
    return sums


def _view(buf, rows, cols):
    return buf[: rows * cols].reshape(rows, cols)


def _symmetric_rbf_evidence(X, sq, Yf, gamma, leave_one_out, working_memory):
    """Evidence of the training rows against themselves from the tiles on and above the
    diagonal (see :func:`_rbf_evidence`)."""
    n, m = X.shape[0], Yf.shape[1]
    B_ext = _extended(X, sq, False)
    rows, cols = _tile_shape(n, n, working_memory)
    starts = range(0, n, rows)
    n_strips = len(starts)
    lane_bytes = 8 * max(n * m, 1)
    n_lanes = max(1, min(_LANES, n_strips, int(working_memory * 2**20) // 2 // lane_bytes))
    own = np.zeros((n, m))
    lanes = [np.zeros((n, m)) for _ in range(n_lanes)]
    buffers = threading.local()

    def strip(i0, mirrored):
        i1 = min(i0 + rows, n)
        if (buf := getattr(buffers, "tile", None)) is None:
            buf = buffers.tile = np.empty(rows * cols)
        A, Y_i, acc = _extended(X[i0:i1], sq[i0:i1], True), Yf[i0:i1], own[i0:i1]
        for j0 in range(i0, n, cols):
            j1 = min(j0 + cols, n)
            K = _rbf_tile(A, B_ext[j0:j1], gamma, _view(buf, i1 - i0, j1 - j0))
            if j0 == i0 and leave_one_out:
                # the rows' own terms Phi(x_i, x_i) = 1 (the tile starts on the diagonal)
                np.fill_diagonal(K, 0.0)
            acc += K @ Yf[j0:j1]
            skip = max(0, i1 - j0)  # columns of rows I themselves: counted in acc only
            if skip < j1 - j0:
                mirrored[j0 + skip : j1] += K[:, skip:].T @ Y_i

    def lane_task(lane):
        def run():
            for k, i0 in enumerate(starts):
                if min(k, n_strips - 1 - k) % n_lanes == lane:
                    strip(i0, lanes[lane])

        return run

    n_threads = min(_evidence_threads(n * n // 2), n_lanes)
    _run((lane_task(lane) for lane in range(n_lanes)), n_threads)
    for lane in lanes:
        own += lane
    return own


#: Rows whose squared norms stay below this keep every term of the expansion
#: ``||a||^2 + ||b||^2 - 2 a.b`` below 2**1022, far from overflow.
_SAFE_SQ_NORM = 2.0**1020


@validate_params(
    {"A": _ROWS, "B": _ROWS, "B_sq_norms": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def sq_distances(A, B, B_sq_norms=None):
    """Squared Euclidean distances ``||a - b||^2`` through BLAS, clipped at 0.

    The rbf branch of :func:`kernel_block` is ``exp(-gamma * sq_distances(A, B))``,
    so cached distances give the same kernel values to the last bit (the tiled
    evidence of dense rows in :func:`class_evidence` sums the same terms in
    another order, and its distance expansion rounds differently: equal to
    about 1e-13 relative, see ``tests/test_similarity.py``).  Rows whose
    squared norm reaches 2**1020 (or overflows) would turn the expansion
    ``||a||^2 + ||b||^2 - 2 a.b`` into ``inf - inf = NaN``; their distances are
    recomputed after dividing both sides by a power of two, and come out as
    the true value, or ``inf`` when that exceeds the float range (a row
    holding ``±inf`` is at distance ``inf`` from every finite row).

    Parameters
    ----------
    A, B : ndarray or CSR matrix of shape (n_a, d), (n_b, d)
    B_sq_norms : ndarray of shape (n_b,), optional
        Precomputed squared norms of the rows of ``B``.

    Returns
    -------
    D : ndarray of shape (n_a, n_b)

    Examples
    --------
    >>> sq_distances(np.array([[0.0, 0.0], [1e300, 0.0]]), np.array([[3.0, 4.0]]))
    array([[25.],
           [inf]])
    """
    with np.errstate(over="ignore", invalid="ignore"):  # far rows are recomputed below
        A_sq = _sq_norms(A)
        B_sq = _sq_norms(B) if B_sq_norms is None else B_sq_norms
        D = _cross(A, B)
        D *= -2.0
        D += A_sq[:, None]
        D += B_sq[None, :]
    np.maximum(D, 0.0, out=D)
    far_a, far_b = ~(A_sq < _SAFE_SQ_NORM), ~(B_sq < _SAFE_SQ_NORM)
    if far_a.any():
        D[far_a] = _far_sq_distances(A[far_a], B)
    if far_b.any():
        D[:, far_b] = _far_sq_distances(A, B[far_b])
    return D


def _far_sq_distances(A, B):
    """:func:`sq_distances` for rows too large for the plain expansion.

    Both sides are divided by the power of two ``2**e`` above their largest
    finite entry (exact), expanded there, where nothing overflows, and the
    result is multiplied by ``2**(2e)``: ``inf`` when the distance is beyond
    the float range.  A row holding ``±inf`` is at distance ``inf``.
    """
    top_a, top_b = _max_abs_rows(A), _max_abs_rows(B)
    finite = np.r_[top_a[np.isfinite(top_a)], top_b[np.isfinite(top_b)], 0.0]
    e = int(np.frexp(finite.max())[1])
    with np.errstate(over="ignore", invalid="ignore"):
        As, Bs = _ldexp(A, -e), _ldexp(B, -e)
        D = _cross(As, Bs)
        D *= -2.0
        D += _sq_norms(As)[:, None]
        D += _sq_norms(Bs)[None, :]
        np.maximum(D, 0.0, out=D)
        D = np.ldexp(D, 2 * e)
    D[~np.isfinite(top_a)] = np.inf
    D[:, ~np.isfinite(top_b)] = np.inf
    return D


def _ldexp(A, e):
    """``A * 2**e`` (exact unless it over- or underflows), dense or CSR."""
    if sp.issparse(A):
        A = sp.csr_matrix(A, dtype=np.float64, copy=True)
        A.data = np.ldexp(A.data, e)
        return A
    return np.ldexp(A, e)


@validate_params(
    {
        "D": ["array-like"],
        "Y": ["array-like"],
        "gamma": _GAMMA,
        "leave_one_out": ["boolean"],
        "normalize": _NORMALIZE,
    },
    prefer_skip_nested_validation=True,
)
def rbf_evidence_from_sq_distances(D, Y, gamma, *, leave_one_out=False, normalize="mean"):
    """Normalized rbf evidence from precomputed squared distances (one gamma of a grid).

    Computing the (n_query, n_train) distances once and exponentiating them for
    every gamma avoids recomputing them per grid point; the caller decides
    whether they fit in memory.  ``leave_one_out`` needs ``D`` square with the
    training rows as queries, in order.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [3.0]]); Y = np.array([[1, 0], [1, 0], [0, 1]])
    >>> F = rbf_evidence_from_sq_distances(sq_distances(X, X), Y, 0.5, leave_one_out=True)
    >>> sums, counts = class_evidence(X, X, Y, gamma=0.5, leave_one_out=True)
    >>> bool(np.array_equal(F, normalize_evidence(sums, counts)))
    True
    """
    Yf = with_total(np.asarray(Y, dtype=np.float64), normalize)
    D = np.asarray(D, dtype=np.float64)
    sums = np.empty((D.shape[0], Yf.shape[1]))
    rows = _TILE_ROWS

    def strip(i0):  # rows i0 .. i0 + rows: their kernel values, then their class sums
        K = np.multiply(D[i0 : i0 + rows], -gamma)
        exp_in_place(K)
        if leave_one_out:
            r = np.arange(K.shape[0])
            K[r, i0 + r] = 0.0
        np.matmul(K, Yf, out=sums[i0 : i0 + rows])

    n_threads = min(_evidence_threads(D.size), -(-D.shape[0] // rows))
    _run((functools.partial(strip, i0) for i0 in range(0, D.shape[0], rows)), n_threads)
    sizes = Yf.sum(axis=0)
    counts = np.broadcast_to(sizes, sums.shape).copy()
    if leave_one_out:
        counts -= Yf
    return normalize_evidence(sums, counts, normalize, sizes=sizes)


@validate_params(
    {
        "sums": ["array-like"],
        "counts": ["array-like"],
        "normalize": _NORMALIZE,
        "sizes": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def normalize_evidence(sums, counts, normalize="mean", *, sizes=None):
    """Turn evidence sums into features.

    ``"log_rate"`` is the log of the kernel-weighted rate of class k among the training
    rows near x, ``log(f_k(x) / f_all(x))`` with ``f_all(x) = sum_j Phi(x, x_j)`` over EVERY
    training row (unlabelled ones too; the caller sums over :func:`with_total`'s indicator,
    whose last column is that total): the Nadaraya-Watson estimate of ``P(y_k = 1 | x)``.
    SML ranks a row's classes by ``f_k``, so a logistic layer on log rates holds SML's rule
    as the point ``beta = a * I`` at every gamma, including the local regime where the
    evidence itself is tiny and spiky; and a row among unlabelled rows gets low rates for
    every class (shares of the class sums alone would still add up to 1).  At most 0;
    :data:`LOG_RATE_FLOOR` for a class with no evidence; a row with no evidence at all
    (every similarity underflows) gets the training base rates ``log(n_k / n)``.  A
    training row's left-out own term is replaced by an average row's (``total / (n - 1)``,
    for its classes and in the total), so it gives its label away at no gamma (``sizes``:
    the full row count of each column, default the largest count; pass it for leave-one-out
    sums, whose total column is one short in every row).
    ``"mean"`` divides by the number of rows counted (the paper's
    ``f̄``: RBF evidence lies in [0, 1]; a class with no row counted gives 0); ``"sum"``
    keeps raw sums.

    Examples
    --------
    >>> sums = np.array([[3.0, 1.0, 0.0, 8.0]]); counts = np.array([[2, 1, 4, 10]])
    >>> normalize_evidence(sums, counts, "log_rate").round(3)   # log(3/8), log(1/8), floor
    array([[  -0.981,   -2.079, -100.   ]])
    >>> normalize_evidence(sums[:, :3], counts[:, :3], "mean")
    array([[1.5, 1. , 0. ]])
    """
    if normalize == "sum":
        return sums
    if normalize == "log_rate":
        return _log_rate(np.asarray(sums, dtype=np.float64), counts, sizes)
    out = np.zeros_like(sums)
    np.divide(sums, counts, out=out, where=counts > 0)
    return out


@validate_params(
    {"Y": ["array-like"], "normalize": _NORMALIZE},
    prefer_skip_nested_validation=True,
)
def with_total(Y, normalize):
    """The indicator to sum the evidence over: ``Y``, with a last column of ones for
    ``normalize="log_rate"`` (the total similarity to every training row)."""
    if normalize != "log_rate":
        return Y
    Y = np.asarray(Y, dtype=np.float64)
    return np.hstack([Y, np.ones((Y.shape[0], 1))])


def _log_rate(sums, counts, sizes=None):
    """``log`` of each class's sum over the last column's (the total), floored at
    :data:`LOG_RATE_FLOOR`.

    A training row's sums leave its own term out (counts one short of ``sizes``); in its
    place the row counts as an AVERAGE row, the mean similarity of the others to it,
    ``total / (n - 1)``, for its own classes and in the total.  Then the left-out term gives
    nothing away at any gamma: with every similarity 1 (small gamma) raw leave-one-out rates
    put a row's own classes at ``(n_k - 1) / (n - 1)`` against ``n_k / (n - 1)`` and the layer
    read the label off that (inner-fold micro-F1 0.85, test 0.03 on Mulan's emotions), while
    rescaling the sums by ``n_k / (n_k - 1)`` instead lifted a rare class's own rate at large
    gamma, where a row's neighbours do not depend on its label (+0.22 nats at 5 rows).
    """
    counts = np.broadcast_to(np.asarray(counts, dtype=np.float64), sums.shape)
    full = counts.max(axis=0, initial=0.0) if sizes is None else np.asarray(sizes, float).ravel()
    others = counts[:, -1:]
    mean_similarity = np.divide(
        sums[:, -1:], others, out=np.zeros((len(sums), 1)), where=others > 0
    )

    def adjusted(cols):
        # sums + own · mean similarity, own = 1 where a training row's own term is missing,
        # floored at 0 (approximate evidence); in one (n, columns) array, the classes' the
        # output itself (at 983 labels each temporary was 100 MB)
        out = np.subtract(full[cols], counts[:, cols])
        np.clip(out, 0.0, None, out=out)
        out *= mean_similarity
        out += sums[:, cols]
        return np.maximum(out, 0.0, out=out)

    out, total = adjusted(slice(None, -1)), adjusted(slice(-1, None))
    with np.errstate(divide="ignore"):
        np.log(out, out=out)
        out -= np.log(np.where(total > 0, total, 1.0))
        prior = np.log(full[:-1]) - np.log(full[-1]) if full[-1] > 0 else np.zeros(len(full) - 1)
    np.maximum(out, LOG_RATE_FLOOR, out=out)
    out[total[:, 0] <= 0] = np.maximum(prior, LOG_RATE_FLOOR)
    return out


@validate_params(
    {"F": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def check_evidence(F):
    """Return ``F`` as a float array, or raise :class:`~sblr.DataError` if it holds NaN or inf.

    The rbf and laplacian kernels give finite evidence for any finite input
    (a row infinitely far from the training rows gets 0); the linear and
    cosine kernels, and a callable, can overflow for rows far outside the
    training range.  Non-finite evidence would otherwise turn into a silent
    constant prediction (``argmax`` of NaN is 0).

    Examples
    --------
    >>> check_evidence(np.array([[0.5, np.nan], [0.1, 0.2]]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sblr.exceptions.DataError: The class evidence of 1 row (the first: row 0) holds NaN or inf...
    """
    F = np.asarray(F, dtype=np.float64)
    bad = ~np.isfinite(F).all(axis=tuple(range(1, F.ndim)))  # per row
    if bad.any():
        n_bad = int(bad.sum())
        raise DataError(
            f"The class evidence of {n_bad} row{'s' if n_bad != 1 else ''} (the first: row "
            f"{int(np.argmax(bad))}) holds NaN or inf: the kernel overflowed, typically for "
            "features far outside the training range with the linear or cosine kernel, or the "
            "similarity callable returned such values. Rescale those features, or use the rbf "
            "or laplacian kernel, which give a far row zero similarity."
        )
    return F
