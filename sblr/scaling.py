"""Scaling to [-1, 1] and the value of γ = "scale": NumPy and SciPy only (no scikit-learn), so
the dashboard's sidebar can state the scale γ without importing scikit-learn on its first
page. :mod:`sblr.similarity` uses these functions for its featurizer."""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.sparse as sp

from sblr.exceptions import DataError


def minmax_fit(X):
    """Per-column minimum and maximum of the training data.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Implicit zeros of a sparse matrix count as values.

    Returns
    -------
    lo, hi : ndarray of shape (n_features,)
    """
    if sp.issparse(X):  # SciPy's min and max count the implicit zeros
        X = sp.csr_matrix(X)
        if X.shape[0] == 0:
            return np.full(X.shape[1], np.nan), np.full(X.shape[1], np.nan)
        lo = X.min(axis=0).toarray().ravel()
        hi = X.max(axis=0).toarray().ravel()
        return lo.astype(np.float64), hi.astype(np.float64)
    return X.min(axis=0), X.max(axis=0)


def minmax_transform(X, lo, hi):
    """Scale columns to [-1, 1] with the training ``lo`` / ``hi``.

    Constant training columns (``hi == lo``) map to 0.  Query values outside
    the training range fall outside [-1, 1]; they are not clipped (a value so
    far out that its scaled value exceeds the float range becomes ``±inf``,
    which the distance kernels treat as infinitely far).  Each column is first
    divided by a power of two that brings its training values into (-1, 1), so
    ``hi - lo`` cannot overflow even for values near ``±1e308``; the division
    is exact, so ordinary data give the same numbers as ``2 (x - lo) / (hi - lo) - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 5.0], [10.0, 5.0]])
    >>> lo, hi = minmax_fit(X)
    >>> minmax_transform(np.array([[5.0, 5.0], [20.0, 1.0]]), lo, hi)
    array([[0., 0.],
           [3., 0.]])
    >>> big = np.array([[-1.5e308], [1.5e308]])   # hi - lo overflows
    >>> minmax_transform(np.array([[-1.5e308], [0.0], [1.5e308]]), *minmax_fit(big))
    array([[-1.],
           [ 0.],
           [ 1.]])
    """
    e, lo2, span, constant = _column_frame(lo, hi)
    with np.errstate(over="ignore"):  # beyond the float range after scaling: inf, on purpose
        Z = (np.ldexp(X, -e) - lo2) / np.where(constant, 1.0, span)
        Z *= 2.0
    Z -= 1.0
    Z[:, constant] = 0.0
    return Z


def _column_frame(lo, hi):
    """Per column: exponent ``e``, ``lo / 2**e``, ``(hi - lo) / 2**e`` and ``hi == lo``.

    ``2**e`` is the smallest power of two above ``max(|lo|, |hi|)`` (1 for a
    constant column), so the training values divided by it lie in (-1, 1) and
    their range in (0, 2]: nothing overflows, and the division is exact.
    """
    constant = hi == lo
    e = np.where(constant, 0, np.frexp(np.maximum(np.abs(lo), np.abs(hi)))[1])
    lo2 = np.ldexp(lo, -e)
    return e, lo2, np.ldexp(hi, -e) - lo2, constant


def _scale_and_offset(lo, hi):
    """Per column ``e``, ``s``, ``o`` with the [-1, 1] scaling ``x -> (x / 2**e) * s - o``.

    ``s`` is ``2 / (hi - lo)`` times ``2**e`` (finite even when ``hi - lo``
    overflows), 0 for a constant column.
    """
    e, lo2, span, constant = _column_frame(lo, hi)
    scale = np.where(constant, 0.0, 2.0 / np.where(constant, 1.0, span))
    offset = np.where(constant, 0.0, scale * lo2 + 1.0)
    return e, scale, offset


def scale_rows(X, lo, hi, *, shift=True):
    """Scale rows as the training rows were: to [-1, 1], or without the shift for sparse data.

    ``shift=True`` is :func:`minmax_transform` (dense result).  ``shift=False``
    multiplies each column by ``2 / (hi - lo)`` only (constant columns by 0;
    computed with the power of two of :func:`minmax_transform`, so a range
    that overflows still scales correctly),
    which keeps a sparse matrix sparse; squared Euclidean and L1 distances,
    and so the rbf and laplacian kernels, are the same either way.  A sparse
    ``X`` with ``shift=True`` is made dense.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[0.0, 4.0], [2.0, 0.0]]))
    >>> lo, hi = minmax_fit(X)
    >>> scale_rows(X, lo, hi, shift=False).toarray()
    array([[0., 2.],
           [2., 0.]])
    >>> scale_rows(X, lo, hi)
    array([[-1.,  1.],
           [ 1., -1.]])
    """
    if shift:
        return minmax_transform(X.toarray() if sp.issparse(X) else X, lo, hi)
    e, scale, _ = _scale_and_offset(lo, hi)
    with np.errstate(over="ignore"):  # beyond the float range after scaling: inf, on purpose
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64, copy=True)
            X.data = np.ldexp(X.data, -e[X.indices]) * scale[X.indices]
            X.eliminate_zeros()
            return X
        return np.ldexp(X, -e) * scale


def resolve_gamma(gamma, X_scaled, offset=None):
    """The RBF width as a number: ``"scale"`` means ``1 / (d * Var(X))``.

    ``Var`` is the variance of all entries of the scaled training data, as in
    scikit-learn's ``SVC(gamma="scale")``; a zero variance (every column
    constant, so every distance is 0 and gamma does not matter) gives 1.0.  For a
    sparse ``X_scaled`` scaled without the shift (:func:`scale_rows`),
    ``offset`` is the per-column shift the dense scaling subtracts, so the
    value equals the dense one: ``Var = mean_j Var(col_j) + Var_j(mean(col_j))``.

    Raises
    ------
    ValueError
        ``gamma`` is neither ``"scale"`` nor a positive finite number.
    DataError
        ``X_scaled`` holds NaN or inf, so ``"scale"`` has no finite value.

    Examples
    --------
    >>> resolve_gamma("scale", np.array([[-1.0, 0.0], [1.0, 0.0]]))   # Var = 0.5, d = 2
    1.0
    >>> resolve_gamma("scale", np.zeros((3, 2))), resolve_gamma(0.5, None)
    (1.0, 0.5)
    """
    if isinstance(gamma, str):
        if gamma != "scale":
            raise ValueError(f'gamma must be a positive number or "scale"; got {gamma!r}.')
        d = X_scaled.shape[1]
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            if sp.issparse(X_scaled):
                means, variances = _column_mean_variance(X_scaled)
                means = means - (0.0 if offset is None else offset)
                var = float(variances.mean() + means.var()) if d else 0.0
            else:
                var = float(X_scaled.var()) if X_scaled.size else 0.0
        if not np.isfinite(var):
            raise DataError(
                'gamma="scale" needs the variance of the scaled training data, which is '
                "not finite (the data hold NaN or inf)."
            )
        value = 1.0 / (d * var) if var > 0 else 1.0
        if not np.isfinite(value):  # a variance so small that its inverse overflows
            raise DataError(
                f'gamma="scale" is 1 / (d * Var) = 1 / ({d} * {var:.3g}), which overflows; '
                "pass a number for gamma."
            )
        return value
    if isinstance(gamma, bool) or not (
        isinstance(gamma, Real) and np.isfinite(gamma) and gamma > 0
    ):
        raise ValueError(f'gamma must be a positive number or "scale"; got {gamma!r}.')
    return float(gamma)


def _column_mean_variance(X):
    """Per-column mean and (population) variance of a sparse matrix, implicit zeros included,
    in two passes (the mean first, then the squared deviations: no cancellation)."""
    X = sp.csc_matrix(X, dtype=np.float64)
    n, d = X.shape
    nnz = np.diff(X.indptr)
    column = np.repeat(np.arange(d), nnz)  # the column of each stored value
    means = np.bincount(column, weights=X.data, minlength=d) / n
    dev = X.data - means[column]
    squares = np.bincount(column, weights=dev * dev, minlength=d) + (n - nnz) * means**2
    return means, squares / n


def scale_gamma(X):
    """The value of ``gamma="scale"`` for training data ``X`` (dense or sparse): 1 / (d · Var)
    of the rows scaled as :class:`sblr.SimilarityFeaturizer` scales them.

    Examples
    --------
    >>> scale_gamma(np.array([[0.0, 3.0], [2.0, 3.0]]))   # scaled: [[-1, 0], [1, 0]]
    1.0
    """
    lo, hi = minmax_fit(X)
    sparse = sp.issparse(X)
    X_scaled = scale_rows(
        sp.csr_matrix(X, dtype=np.float64) if sparse else X, lo, hi, shift=not sparse
    )
    return resolve_gamma("scale", X_scaled, _scale_and_offset(lo, hi)[2])
