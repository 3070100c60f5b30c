"""Approximate class evidence: the same question answered through a random feature map.

A Nystroem or random-Fourier map ``phi`` with ``phi(a) . phi(b) ~ exp(-gamma ||a - b||^2)``
(:func:`make_feature_map`, applied safely far from the data by :func:`apply_feature_map`)
turns the evidence into ``phi(X_query) (phi(X_train)^T Y)`` (:func:`approx_class_sums`,
:func:`approx_class_evidence`): O(n * D) time and no (n, n) matrix, for large training
sets.  Public through :mod:`sblr.similarity`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.utils.extmath import safe_sparse_dot

from sblr._validation import Interval, StrOptions, validate_params
from sblr.similarity._exact import (
    _ROWS,
    _WORKING_MEMORY,
    DEFAULT_WORKING_MEMORY_MB,
    _sq_norms,
    kernel_block,
)

APPROX_METHODS = ("nystroem", "rff")


_FEATURE_MAP = [Nystroem, RBFSampler]


@validate_params(
    {
        "approx": [StrOptions(set(APPROX_METHODS))],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_feature_map(approx, gamma, n_components, random_state):
    """Unfitted random feature map approximating ``exp(-gamma ||a - b||^2)``.

    ``"nystroem"`` gives :class:`~sklearn.kernel_approximation.Nystroem`
    (``n_components`` training rows as landmarks), ``"rff"`` gives random
    Fourier features, :class:`~sklearn.kernel_approximation.RBFSampler`.
    """
    if approx == "nystroem":
        return Nystroem(
            kernel="rbf", gamma=gamma, n_components=n_components, random_state=random_state
        )
    return RBFSampler(gamma=gamma, n_components=n_components, random_state=random_state)


@validate_params(
    {"feature_map": _FEATURE_MAP, "X": _ROWS},
    prefer_skip_nested_validation=True,
)
def apply_feature_map(feature_map, X):
    """``phi(X)`` of a fitted Nystroem or RBFSampler from :func:`make_feature_map`.

    The formulas of scikit-learn's ``transform``, with the rbf values of
    Nystroem from :func:`kernel_block`, so a row far outside the training range
    (even ``±inf`` after scaling) gets kernel 0 to every landmark instead of
    NaN.  For random Fourier features, a row whose projection ``x . w``
    overflows is so far from every training row (``w`` has scale
    ``sqrt(2 gamma)``, so ``gamma ||x - x_j||^2`` overflows too) that its exact
    kernel values are all 0: it gets ``phi = 0``.

    Examples
    --------
    >>> X = np.array([[0.0], [0.5], [1.0]])
    >>> phi = make_feature_map("nystroem", 1.0, 3, 0).fit(X)
    >>> bool(np.allclose(apply_feature_map(phi, X), phi.transform(X)))
    True
    >>> apply_feature_map(phi, np.array([[1e300]]))   # infinitely far: no similarity
    array([[0., 0., 0.]])
    """
    if isinstance(feature_map, Nystroem):
        K = kernel_block(X, feature_map.components_, "rbf", feature_map.gamma)
        return K @ feature_map.normalization_.T
    with np.errstate(over="ignore", invalid="ignore"):
        projection = np.asarray(
            safe_sparse_dot(X, feature_map.random_weights_, dense_output=True), dtype=np.float64
        )
        projection += feature_map.random_offset_
        far = ~np.isfinite(projection).all(axis=1)
        np.cos(projection, out=projection)
    projection *= (2.0 / feature_map.n_components) ** 0.5
    projection[far] = 0.0
    return projection


def _approx_block_rows(n_components, working_memory):
    # A block holds its (rows, D) feature matrix plus the feature map's own
    # temporaries of that size (Nystroem: distances, kernel, normalized product).
    return max(1, int(working_memory * 2**20 // (32 * max(n_components, 1))))


@validate_params(
    {
        "feature_map": _FEATURE_MAP,
        "X_train": _ROWS,
        "Y": ["array-like"],
        "working_memory": _WORKING_MEMORY,
    },
    prefer_skip_nested_validation=True,
)
def approx_class_sums(feature_map, X_train, Y, working_memory=DEFAULT_WORKING_MEMORY_MB):
    """``S = phi(X_train)^T Y`` and the self-similarities ``phi(x_i) . phi(x_i)``.

    Computed in row blocks: memory O(block * D), no (n, n) matrix.

    Returns
    -------
    S : ndarray of shape (D, m)
    self_sim : ndarray of shape (n_train,)
    """
    Yf = np.asarray(Y, dtype=np.float64)
    n = X_train.shape[0]
    D = _n_features_out(feature_map)
    S = np.zeros((D, Yf.shape[1]))
    self_sim = np.empty(n)
    step = _approx_block_rows(D, working_memory)
    for start in range(0, n, step):
        stop = min(start + step, n)
        P = apply_feature_map(feature_map, X_train[start:stop])
        S += P.T @ Yf[start:stop]
        self_sim[start:stop] = _sq_norms(P)
        del P  # not alive while the next block's is computed
    return S, self_sim


def _n_features_out(feature_map):
    # Nystroem caps n_components at the number of training rows.
    if hasattr(feature_map, "components_") and hasattr(feature_map, "normalization_"):
        return feature_map.normalization_.shape[1]
    return feature_map.random_weights_.shape[1]


@validate_params(
    {
        "X_query": _ROWS,
        "feature_map": _FEATURE_MAP,
        "S": ["array-like"],
        "Y": ["array-like"],
        "self_sim": ["array-like", None],
        "leave_one_out": ["boolean"],
        "working_memory": _WORKING_MEMORY,
    },
    prefer_skip_nested_validation=True,
)
def approx_class_evidence(
    X_query,
    feature_map,
    S,
    Y,
    *,
    self_sim=None,
    leave_one_out=False,
    working_memory=DEFAULT_WORKING_MEMORY_MB,
):
    """Approximate :func:`class_evidence`: ``sums = phi(X_query) S``.

    ``phi`` is a fitted random feature map of the rbf kernel (see
    :func:`make_feature_map`) and ``S = phi(X_train)^T Y`` from
    :func:`approx_class_sums`; time O(n_query * D * (d + m)), memory
    O(block * D).

    Parameters
    ----------
    X_query : ndarray of shape (n_query, d)
        Scaled query rows.
    feature_map : fitted Nystroem or RBFSampler
    S : ndarray of shape (D, m)
    Y : ndarray of shape (n_train, m)
        The indicator ``S`` was built from (for the counts).
    self_sim : ndarray of shape (n_train,), optional
        ``phi(x_i) . phi(x_i)`` of the training rows; needed for
        ``leave_one_out``.
    leave_one_out : bool
        ``X_query`` IS the training data (same rows, same order); each row's
        own approximate term ``self_sim[i] * Y[i]`` is subtracted, so the
        result is exactly the query evidence of the row minus its self-term.
    working_memory : float
        Memory budget of one block in MiB.

    Returns
    -------
    sums, counts : ndarray of shape (n_query, m)
        As in :func:`class_evidence`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [0.1], [1.0]]); Y = np.array([[1, 0], [1, 0], [0, 1]])
    >>> phi = make_feature_map("nystroem", 1.0, 3, 0).fit(X)
    >>> S, self_sim = approx_class_sums(phi, X, Y)
    >>> sums, counts = approx_class_evidence(X, phi, S, Y, self_sim=self_sim, leave_one_out=True)
    >>> from sblr.similarity import class_evidence
    >>> exact, _ = class_evidence(X, X, Y, gamma=1.0, leave_one_out=True)
    >>> bool(np.allclose(sums, exact))   # D = n landmarks: Nystroem is exact
    True
    >>> counts
    array([[1., 1.],
           [1., 1.],
           [2., 0.]])
    """
    Yf = np.asarray(Y, dtype=np.float64)
    n_query = X_query.shape[0]
    if leave_one_out and (self_sim is None or n_query != Yf.shape[0]):
        raise ValueError(
            "leave_one_out needs the training rows themselves as queries and their self_sim."
        )
    sums = np.empty((n_query, S.shape[1]))
    step = _approx_block_rows(S.shape[0], working_memory)
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        sums[start:stop] = apply_feature_map(feature_map, X_query[start:stop]) @ S
    counts = np.broadcast_to(Yf.sum(axis=0), sums.shape).copy()
    if leave_one_out:
        sums -= self_sim[:, None] * Yf
        counts -= Yf
    return sums, counts
