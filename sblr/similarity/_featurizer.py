"""The estimator: :class:`SimilarityFeaturizer`, class evidence as a scikit-learn transformer.

It scales the training rows, resolves gamma and the evidence mode (exact or approximate),
keeps the class indicator (:func:`label_indicator`) and hands every classifier of
:mod:`sblr.models` its evidence; :func:`featurizer_for` builds one with a classifier's
evidence parameters.  Public through :mod:`sblr.similarity`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from sblr._approx import resolve_approx
from sblr._validation import Interval, StrOptions, validate_params
from sblr.exceptions import DataError
from sblr.scaling import (
    _scale_and_offset,
    minmax_fit,
    resolve_gamma,
    scale_rows,
)
from sblr.similarity._exact import (
    DEFAULT_WORKING_MEMORY_MB,
    KERNELS,
    NONNEGATIVE_KERNELS,
    SPARSE_KERNELS,
    check_evidence,
    class_evidence,
    normalize_evidence,
    with_total,
)
from sblr.similarity._feature_maps import (
    APPROX_METHODS,
    approx_class_evidence,
    approx_class_sums,
    make_feature_map,
)

#: Parameters a classifier passes on to its :class:`SimilarityFeaturizer`.
FEATURIZER_PARAMS = (
    "kernel",
    "gamma",
    "normalize",
    "working_memory",
    "approx",
    "n_components",
    "random_state",
)


def featurizer_for(estimator, **overrides):
    """An unfitted :class:`SimilarityFeaturizer` with ``estimator``'s evidence parameters.

    Examples
    --------
    >>> from sblr import SparseSBLRClassifier
    >>> featurizer_for(SparseSBLRClassifier(gamma=0.5, approx="rff"), gamma=2.0)
    SimilarityFeaturizer(approx='rff', gamma=2.0, normalize='log_rate')
    """
    params = {p: getattr(estimator, p) for p in FEATURIZER_PARAMS if hasattr(estimator, p)}
    return SimilarityFeaturizer(**{**params, **overrides})


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
    normalize : {"mean", "sum", "log_rate"}, default="mean"
        ``"mean"`` divides each class's sum by the number of its rows counted
        (``f̄`` in the paper); ``"sum"`` keeps raw sums (SML's ``f``); ``"log_rate"`` is
        the log of the kernel-weighted rate of the class among the training rows near x,
        ``log(f_k(x) / sum_j Phi(x, x_j))`` (SBLR's and SparseSBLR's default; see
        :func:`normalize_evidence`; the rbf and laplacian kernels, whose evidence is never
        negative).
    working_memory : float, default=None
        Memory budget in MiB for one block of similarities; ``None`` means
        256 MiB.
    approx : {"auto", None, "nystroem", "rff"}, default="auto"
        ``None`` computes exact evidence (O(n_query * n_train) kernel values).
        ``"nystroem"`` (:class:`~sklearn.kernel_approximation.Nystroem`) or
        ``"rff"`` (random Fourier features,
        :class:`~sklearn.kernel_approximation.RBFSampler`) map rows to ``D =
        n_components`` features ``phi`` with ``phi(a) . phi(b) ~ Phi(a, b)``,
        fitted on the scaled training rows, and compute the evidence as
        ``phi(X_query) (phi(X_train)^T Y)`` in O(n * D * (d + m)) time without
        any (n, n) matrix.  Leave-one-out subtracts each training row's own
        approximate term ``phi(x_i) . phi(x_i)``.  rbf kernel only.
        ``"auto"`` uses ``"nystroem"`` from :data:`AUTO_APPROX_ROWS` (20,000)
        training rows on with the rbf kernel and exact evidence below; the
        choice is in ``approx_``.
    n_components : int, default=500
        ``D``, the number of approximate features (ignored without ``approx``).
        More is slower and more accurate.
    random_state : int, RandomState instance or None, default=0
        Seed of the feature map (ignored without ``approx``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels; ``arange(m)`` for a multi-label indicator ``y``.
    X_fit_ : ndarray or CSR matrix of shape (n_samples, n_features)
        Scaled training rows (see :meth:`scale`).
    sparse_input_ : bool
        The training data were sparse: rows are scaled without the shift and
        stay sparse (rbf and laplacian kernels only).
    Y_fit_ : ndarray of shape (n_samples, n_classes)
        0/1 class indicator of the training rows.
    multilabel_ : bool
        ``y`` was a multi-label indicator matrix.
    data_min_, data_max_ : ndarray of shape (n_features,)
        Training range used for scaling.
    gamma_ : float
        The kernel width actually used.
    approx_ : None, "nystroem" or "rff"
        The evidence mode actually used (``approx`` with ``"auto"`` resolved).
    feature_map_ : Nystroem or RBFSampler
        The fitted feature map (only with ``approx``).
    S_ : ndarray of shape (D, n_classes)
        ``phi(X_fit_)^T Y_fit_`` (only with ``approx``).
    S_total_ : ndarray of shape (D,)
        ``phi(X_fit_)^T 1``, for ``normalize="log_rate"`` (only with ``approx``).
    self_sim_ : ndarray of shape (n_samples,)
        ``phi(x_i) . phi(x_i)`` of the training rows (only with ``approx``).
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

    Approximate evidence for large data (here ``D`` = all 4 rows, so Nystroem
    is exact up to rounding):

    >>> Fa = SimilarityFeaturizer(gamma=1.0, approx="nystroem", n_components=4).fit_transform(X, y)
    >>> bool(np.allclose(Fa, F))
    True
    """

    _parameter_constraints = {
        "kernel": [StrOptions(set(KERNELS)), callable],
        "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "normalize": [StrOptions({"mean", "sum", "log_rate"})],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "approx": [StrOptions({"auto", *APPROX_METHODS}), None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        kernel="rbf",
        gamma="scale",
        normalize="mean",
        working_memory=None,
        approx="auto",
        n_components=500,
        random_state=0,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.normalize = normalize
        self.working_memory = working_memory
        self.approx = approx
        self.n_components = n_components
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Scale and store the training rows with their class indicator.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input (converted to CSR) stays sparse; rbf and laplacian kernels.
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels, or a 0/1 multi-label indicator matrix.

        Returns
        -------
        self
        """
        # a rule across two parameters, which _parameter_constraints cannot state
        if self.approx in APPROX_METHODS and not (
            isinstance(self.kernel, str) and self.kernel == "rbf"
        ):
            raise ValueError(
                f"approx={self.approx!r} approximates the rbf kernel only; got "
                f'kernel={self.kernel!r}. Use kernel="rbf" or approx=None.'
            )
        if self.normalize == "log_rate" and not (
            isinstance(self.kernel, str) and self.kernel in NONNEGATIVE_KERNELS
        ):
            raise ValueError(
                f'normalize="log_rate" takes the log of the evidence, which kernel='
                f"{self.kernel!r} can make negative; use a kernel in {NONNEGATIVE_KERNELS} "
                'or normalize="mean" (the paper\'s form).'
            )
        X, y = validate_data(self, X, y, multi_output=True, dtype=np.float64, accept_sparse="csr")
        self.sparse_input_ = sp.issparse(X)
        if self.sparse_input_ and not (
            isinstance(self.kernel, str) and self.kernel in SPARSE_KERNELS
        ):
            raise TypeError(
                f"Sparse input works with kernel in {SPARSE_KERNELS} (they depend on row "
                f"differences only, so the data can stay sparse); got kernel={self.kernel!r}. "
                "Pass a dense array (X.toarray()) for this kernel."
            )
        self.multilabel_ = type_of_target(y) == "multilabel-indicator"
        self.classes_, self.Y_fit_ = label_indicator(y)
        self.data_min_, self.data_max_ = minmax_fit(X)
        self.X_fit_ = self.scale(X)
        self.gamma_ = resolve_gamma(
            self.gamma, self.X_fit_, _scale_and_offset(self.data_min_, self.data_max_)[2]
        )
        self.approx_ = resolve_approx(self.approx, self.kernel, X.shape[0])
        if self.approx_ is not None:
            self.feature_map_ = make_feature_map(
                self.approx_, self.gamma_, self.n_components, self.random_state
            ).fit(self.X_fit_)
            S, self.self_sim_ = approx_class_sums(
                self.feature_map_,
                self.X_fit_,
                with_total(self.Y_fit_, "log_rate"),  # the total too: one pass for both
                self._working_memory(),
            )
            self.S_, self.S_total_ = S[:, :-1], S[:, -1]
        return self

    def _working_memory(self):
        return self.working_memory or DEFAULT_WORKING_MEMORY_MB

    @_fit_context(prefer_skip_nested_validation=True)
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
        normalize : {"mean", "sum", "log_rate"}, optional
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
        X = validate_data(self, X, reset=False, dtype=np.float64, accept_sparse="csr")
        return self._evidence(self.scale(X), Y, normalize, leave_one_out=False)

    def scale(self, X):
        """Rows scaled as the training rows were (see :func:`scale_rows`).

        Dense training data: to [-1, 1] (a sparse query is made dense).
        Sparse training data: each column multiplied by ``2 / (max - min)``
        without the shift, so sparse rows stay sparse; distances, and so the
        evidence, equal those of the dense scaling.
        """
        return scale_rows(X, self.data_min_, self.data_max_, shift=not self.sparse_input_)

    def _evidence(self, Xs, Y, normalize, leave_one_out):
        normalize = normalize or self.normalize
        groups = with_total(self.Y_fit_ if Y is None else Y, normalize)
        if self.approx_ is not None:
            sums, counts = self._approx_evidence(Xs, Y, normalize, leave_one_out)
        else:
            sums, counts = class_evidence(
                Xs,
                self.X_fit_,
                groups,
                kernel=self.kernel,
                gamma=self.gamma_,
                leave_one_out=leave_one_out,
                working_memory=self._working_memory(),
            )
        sizes = np.asarray(groups, dtype=np.float64).sum(axis=0)
        return check_evidence(normalize_evidence(sums, counts, normalize, sizes=sizes))

    def _approx_evidence(self, Xs, Y, normalize, leave_one_out):
        if Y is None:
            Y, S, self_sim = self.Y_fit_, self.S_, self.self_sim_
            if normalize == "log_rate":
                Y, S = with_total(Y, normalize), np.hstack([S, self.S_total_[:, None]])
        else:  # another group indicator: one more O(n D d) pass for its S
            Y = with_total(Y, normalize)
            S, self_sim = approx_class_sums(
                self.feature_map_, self.X_fit_, Y, self._working_memory()
            )
        return approx_class_evidence(
            Xs,
            self.feature_map_,
            S,
            Y,
            self_sim=self_sim,
            leave_one_out=leave_one_out,
            working_memory=self._working_memory(),
        )

    def get_feature_names_out(self, input_features=None):
        """One output feature per class: ``evidence_<class>``."""
        check_is_fitted(self)
        return np.asarray([f"evidence_{c}" for c in self.classes_], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        return tags


@validate_params(
    {"y": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def label_indicator(y):
    """Classes and 0/1 indicator matrix for class labels or a multi-label matrix.

    A 1-D ``y`` of class labels gives one column per sorted unique label (two
    columns for a binary problem); a 2-D 0/1 matrix is returned as a copy with
    ``classes_ = arange(m)``.  The indicator is int8 (983 labels of 12,920 rows: 13 MB).

    Examples
    --------
    >>> label_indicator(np.array(["b", "a", "b"]))
    (array(['a', 'b'], dtype='<U1'), array([[0, 1],
           [1, 0],
           [0, 1]], dtype=int8))
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim == 1:
        classes, codes = np.unique(y, return_inverse=True)
        Y = np.zeros((y.shape[0], classes.shape[0]), dtype=np.int8)
        Y[np.arange(y.shape[0]), codes] = 1
        return classes, Y
    zero_one = ((y == 0) | (y == 1)).all() if y.dtype.kind in "biuf" else np.isin(y, (0, 1)).all()
    if not zero_one:
        raise DataError(
            "A 2-D target must be a 0/1 multi-label indicator matrix "
            "(one column per label, 1 = relevant)."
        )
    return np.arange(y.shape[1]), y.astype(np.int8)  # a copy, never the caller's array
