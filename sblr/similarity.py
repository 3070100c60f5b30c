"""Class evidence: the similarity features every sblr model is built on.

For a row ``x`` and a class ``k`` the evidence is the summed similarity of ``x``
to the training rows of that class (Ma & Chen, Eq. 2)::

    f_k(x) = sum_{j in D_k} Phi(x, x_j)

The module keeps the math in small pure functions (:func:`minmax_fit`,
:func:`minmax_transform`, :func:`resolve_gamma`, :func:`kernel_block`,
:func:`class_evidence`) and wraps them in a scikit-learn transformer,
:class:`SimilarityFeaturizer`, that the classifiers in :mod:`sblr.models` use.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from sblr.exceptions import DataError

KERNELS = ("rbf", "laplacian", "linear", "cosine")
DEFAULT_WORKING_MEMORY_MB = 256


# --------------------------------------------------------------------------- math
def minmax_fit(X):
    """Per-column minimum and maximum of the training data.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    lo, hi : ndarray of shape (n_features,)
    """
    return X.min(axis=0), X.max(axis=0)


def minmax_transform(X, lo, hi):
    """Scale columns to [-1, 1] with the training ``lo`` / ``hi``.

    Constant training columns (``hi == lo``) map to 0.  Query values outside
    the training range fall outside [-1, 1]; they are not clipped.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 5.0], [10.0, 5.0]])
    >>> lo, hi = minmax_fit(X)
    >>> minmax_transform(np.array([[5.0, 5.0], [20.0, 1.0]]), lo, hi)
    array([[0., 0.],
           [3., 0.]])
    """
    span = hi - lo
    constant = span == 0
    safe = np.where(constant, 1.0, span)
    Z = 2.0 * (X - lo) / safe - 1.0
    Z[:, constant] = 0.0
    return Z


def resolve_gamma(gamma, X_scaled):
    """The RBF width as a number: ``"scale"`` means ``1 / (d * Var(X))``.

    ``Var`` is the variance of all entries of the scaled training data, as in
    scikit-learn's ``SVC(gamma="scale")``; a zero variance gives 1.0.
    """
    if isinstance(gamma, str):
        var = float(X_scaled.var()) if X_scaled.size else 0.0
        d = X_scaled.shape[1]
        return 1.0 / (d * var) if var > 0 else 1.0
    return float(gamma)


def _sq_norms(A):
    return np.einsum("ij,ij->i", A, A)


def kernel_block(A, B, kernel="rbf", gamma=1.0, B_sq_norms=None):
    """Similarity matrix ``Phi(A_i, B_j)`` of shape (len(A), len(B)).

    Parameters
    ----------
    A, B : ndarray of shape (n_a, d), (n_b, d)
    kernel : {"rbf", "laplacian", "linear", "cosine"} or callable
        ``rbf``: ``exp(-gamma ||a - b||^2)``; ``laplacian``:
        ``exp(-gamma ||a - b||_1)``; ``linear``: ``a . b``; ``cosine``:
        ``a . b / (||a|| ||b||)`` (0 for a zero vector).  A callable gets
        ``(A, B)`` and returns the matrix.
    gamma : float
    B_sq_norms : ndarray of shape (n_b,), optional
        Precomputed squared norms of the rows of ``B`` (rbf only).

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
        if B_sq_norms is None:
            B_sq_norms = _sq_norms(B)
        K = A @ B.T
        K *= -2.0
        K += _sq_norms(A)[:, None]
        K += B_sq_norms[None, :]
        np.maximum(K, 0.0, out=K)
        K *= -gamma
        np.exp(K, out=K)
        return K
    if kernel == "laplacian":
        D = np.abs(A[:, None, :] - B[None, :, :]).sum(axis=2)
        return np.exp(-gamma * D)
    if kernel == "linear":
        return A @ B.T
    if kernel == "cosine":
        na = np.sqrt(_sq_norms(A))
        nb = np.sqrt(_sq_norms(B))
        na[na == 0] = 1.0
        nb[nb == 0] = 1.0
        return (A @ B.T) / na[:, None] / nb[None, :]
    raise ValueError(f"Unknown kernel {kernel!r}; choose one of {KERNELS} or a callable.")


def _block_rows(n_train, d, kernel, working_memory):
    # Bytes held per query row while a block is alive: the similarity row, the
    # laplacian's (n_train, d) difference tensor when that kernel is used.
    row_bytes = 8 * n_train * (d + 1 if kernel == "laplacian" else 2)
    return max(1, int(working_memory * 2**20 // row_bytes))


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

    Computed in row blocks, so memory is O(block * n_train), never a full
    (n_query, n_train) matrix for large inputs.

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
        Memory budget of one block in MiB.

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
    sums = np.empty((n_query, Yf.shape[1]))
    B_sq = _sq_norms(X_train) if kernel == "rbf" else None
    step = _block_rows(n_train, X_train.shape[1], kernel, working_memory)
    for start in range(0, n_query, step):
        stop = min(start + step, n_query)
        K = kernel_block(X_query[start:stop], X_train, kernel, gamma, B_sq)
        if leave_one_out:
            rows = np.arange(stop - start)
            K[rows, start + rows] = 0.0
        sums[start:stop] = K @ Yf
    counts = np.broadcast_to(Yf.sum(axis=0), sums.shape).copy()
    if leave_one_out:
        counts -= Yf
    return sums, counts


def sq_distances(A, B):
    """Squared Euclidean distances ``||a - b||^2`` through BLAS, clipped at 0.

    The same arithmetic as the rbf branch of :func:`kernel_block`, so
    ``exp(-gamma * sq_distances(A, B))`` equals ``kernel_block(A, B, "rbf", gamma)``
    to the last bit.
    """
    D = A @ B.T
    D *= -2.0
    D += _sq_norms(A)[:, None]
    D += _sq_norms(B)[None, :]
    np.maximum(D, 0.0, out=D)
    return D


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
    K = -gamma * D
    np.exp(K, out=K)
    Yf = np.asarray(Y, dtype=np.float64)
    if leave_one_out:
        np.fill_diagonal(K, 0.0)
    sums = K @ Yf
    counts = np.broadcast_to(Yf.sum(axis=0), sums.shape).copy()
    if leave_one_out:
        counts -= Yf
    return normalize_evidence(sums, counts, normalize)


def normalize_evidence(sums, counts, normalize="mean"):
    """Turn evidence sums into features.

    ``"mean"`` divides by the number of rows counted (so RBF evidence lies in
    [0, 1]; a class with no row counted gives 0); ``"sum"`` keeps raw sums.
    """
    if normalize == "sum":
        return sums
    out = np.zeros_like(sums)
    np.divide(sums, counts, out=out, where=counts > 0)
    return out


# --------------------------------------------------------------------------- estimator
class SimilarityFeaturizer(TransformerMixin, BaseEstimator):
    """Class-evidence features ``f̄_k(x)`` for similarity-based classification.

    ``fit(X, y)`` scales the training data to [-1, 1] per column and keeps it
    with its class indicator.  ``transform(X)`` gives query rows the evidence
    of every training row; ``fit_transform(X, y)`` gives each TRAINING row the
    evidence of all other training rows (its own term ``Phi(x_i, x_i)`` is left
    out, otherwise a row would vote for its own label).  So, as with
    scikit-learn's ``TargetEncoder``, ``fit(X, y).transform(X)`` differs from
    ``fit_transform(X, y)`` on purpose.

    Parameters
    ----------
    kernel : {"rbf", "laplacian", "linear", "cosine"} or callable, default="rbf"
        Similarity ``Phi``.  A callable takes two arrays of scaled rows
        ``(A, B)`` and returns the (len(A), len(B)) similarity matrix.
    gamma : float or "scale", default="scale"
        Width of the rbf and laplacian kernels.  ``"scale"`` uses
        ``1 / (n_features * X.var())`` on the scaled training data.
    normalize : {"mean", "sum"}, default="mean"
        ``"mean"`` divides each class's sum by the number of its rows counted
        (``f̄`` in the paper); ``"sum"`` keeps raw sums (SML's ``f``).
    working_memory : float, default=None
        Memory budget in MiB for one block of similarities; ``None`` means
        256 MiB.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels; ``arange(m)`` for a multi-label indicator ``y``.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Scaled training rows.
    Y_fit_ : ndarray of shape (n_samples, n_classes)
        0/1 class indicator of the training rows.
    multilabel_ : bool
        ``y`` was a multi-label indicator matrix.
    data_min_, data_max_ : ndarray of shape (n_features,)
        Training range used for scaling.
    gamma_ : float
        The kernel width actually used.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sblr import SimilarityFeaturizer
    >>> X = np.array([[0.0], [0.1], [1.0], [0.9]])
    >>> y = np.array([0, 0, 1, 1])
    >>> F = SimilarityFeaturizer(gamma=1.0).fit_transform(X, y)
    >>> F.round(3)   # scaled x = -1, -0.8, 1, 0.8; row 0 vs its one class-0 peer: exp(-0.04)
    array([[0.961, 0.029],
           [0.961, 0.058],
           [0.029, 0.961],
           [0.058, 0.961]])
    """

    def __init__(self, *, kernel="rbf", gamma="scale", normalize="mean", working_memory=None):
        self.kernel = kernel
        self.gamma = gamma
        self.normalize = normalize
        self.working_memory = working_memory

    def fit(self, X, y):
        """Scale and store the training rows with their class indicator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels, or a 0/1 multi-label indicator matrix.

        Returns
        -------
        self
        """
        check_featurizer_params(self.kernel, self.gamma, self.normalize, self.working_memory)
        X, y = validate_data(self, X, y, multi_output=True, dtype=np.float64)
        self.multilabel_ = type_of_target(y) == "multilabel-indicator"
        self.classes_, self.Y_fit_ = label_indicator(y)
        self.data_min_, self.data_max_ = minmax_fit(X)
        self.X_fit_ = minmax_transform(X, self.data_min_, self.data_max_)
        self.gamma_ = resolve_gamma(self.gamma, self.X_fit_)
        return self

    def fit_transform(self, X, y):
        """Fit, then return the leave-one-out evidence of the training rows.

        Returns
        -------
        F : ndarray of shape (n_samples, n_classes)
        """
        return self.fit(X, y).training_evidence()

    def training_evidence(self, Y=None, normalize=None):
        """Leave-one-out evidence of the training rows (own term left out).

        Parameters
        ----------
        Y : ndarray of shape (n_samples, q), optional
            Group indicator to sum over instead of the classes (SML uses the
            label-set-size groups).
        normalize : {"mean", "sum"}, optional
            Overrides the ``normalize`` parameter.
        """
        check_is_fitted(self)
        return self._evidence(self.X_fit_, Y, normalize, leave_one_out=True)

    def transform(self, X):
        """Evidence of query rows: every training row counts.

        Returns
        -------
        F : ndarray of shape (n_query, n_classes)
        """
        return self.query_evidence(X)

    def query_evidence(self, X, Y=None, normalize=None):
        """Evidence of query rows, optionally over another group indicator."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Xs = minmax_transform(X, self.data_min_, self.data_max_)
        return self._evidence(Xs, Y, normalize, leave_one_out=False)

    def _evidence(self, Xs, Y, normalize, leave_one_out):
        Y = self.Y_fit_ if Y is None else Y
        sums, counts = class_evidence(
            Xs,
            self.X_fit_,
            Y,
            kernel=self.kernel,
            gamma=self.gamma_,
            leave_one_out=leave_one_out,
            working_memory=self.working_memory or DEFAULT_WORKING_MEMORY_MB,
        )
        return normalize_evidence(sums, counts, normalize or self.normalize)

    def get_feature_names_out(self, input_features=None):
        """One output feature per class: ``evidence_<class>``."""
        check_is_fitted(self)
        return np.asarray([f"evidence_{c}" for c in self.classes_], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        return tags


def check_featurizer_params(kernel, gamma, normalize, working_memory):
    """Raise ``ValueError`` naming the parameter when one is out of range."""
    if not (callable(kernel) or kernel in KERNELS):
        raise ValueError(f"kernel must be one of {KERNELS} or a callable; got {kernel!r}.")
    if isinstance(gamma, str):
        if gamma != "scale":
            raise ValueError(f'gamma must be a positive number or "scale"; got {gamma!r}.')
    elif not (isinstance(gamma, Real) and np.isfinite(gamma) and gamma > 0):
        raise ValueError(f'gamma must be a positive number or "scale"; got {gamma!r}.')
    if normalize not in ("mean", "sum"):
        raise ValueError(f'normalize must be "mean" or "sum"; got {normalize!r}.')
    if working_memory is not None and not (isinstance(working_memory, Real) and working_memory > 0):
        raise ValueError(
            f"working_memory must be a positive number of MiB; got {working_memory!r}."
        )


def label_indicator(y):
    """Classes and 0/1 indicator matrix for class labels or a multi-label matrix.

    A 1-D ``y`` of class labels gives one column per sorted unique label (two
    columns for a binary problem); a 2-D 0/1 matrix is returned as integers
    with ``classes_ = arange(m)``.

    Examples
    --------
    >>> label_indicator(np.array(["b", "a", "b"]))
    (array(['a', 'b'], dtype='<U1'), array([[0, 1],
           [1, 0],
           [0, 1]]))
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim == 1:
        classes, codes = np.unique(y, return_inverse=True)
        Y = np.zeros((y.shape[0], classes.shape[0]), dtype=int)
        Y[np.arange(y.shape[0]), codes] = 1
        return classes, Y
    if not np.isin(y, (0, 1)).all():
        raise DataError(
            "A 2-D target must be a 0/1 multi-label indicator matrix "
            "(one column per label, 1 = relevant)."
        )
    return np.arange(y.shape[1]), y.astype(int)
