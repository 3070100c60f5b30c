"""The comparison methods of Ma & Chen: ML-kNN, IBLR-ML, BR-SVM, kNN, NCM and LR.

Every baseline takes sblr's input conventions: ``X`` of shape (n, d); ``y``
either 1-D class labels (multi-class) or a 0/1 (n, m) indicator matrix
(multi-label).  As the paper does for all methods, features are scaled to
[-1, 1] with the training minimum and maximum inside each estimator (a
constant training column maps to 0; query values outside the training range
are not clipped).

* :class:`MLkNNClassifier`, :class:`IBLRClassifier` and
  :class:`BRSVMClassifier` handle both multi-label and multi-class data.
  ``predict`` returns class labels or a 0/1 indicator; ``decision_function``
  returns real (n, m) scores, higher = more relevant (for two classes an
  (n,) score, positive for ``classes_[1]``, as in scikit-learn).
* :func:`knn_classifier`, :func:`ncm_classifier` and :func:`lr_classifier`
  (multi-class only, the paper's MCC table) return scikit-learn Pipelines of
  ``MinMaxScaler(feature_range=(-1, 1))`` and the classifier.

:data:`BASELINES` maps a short name to each factory.

Neighbours are Euclidean on the scaled features (``NearestNeighbors``).  For
the training rows they are found leave-one-out: a row's own index is removed
from its ``k + 1`` nearest rows (if exact duplicates crowd it out of that list,
the last listed row is removed instead), so duplicates of a row still count as
its neighbours.  When ``k`` exceeds ``n_samples - 1`` the models use
``n_neighbors_ = n_samples - 1`` neighbours.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from scipy import sparse
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.neighbors import KNeighborsClassifier, NearestCentroid, NearestNeighbors
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data
from threadpoolctl import threadpool_limits

from sblr._validation import Interval, StrOptions
from sblr.logistic import constant_intercept
from sblr.similarity import label_indicator, minmax_fit, minmax_transform

__all__ = [
    "BASELINES",
    "BRSVM_SECONDS",
    "MULTICLASS_ONLY",
    "BRSVMClassifier",
    "FrequencyClassifier",
    "IBLRClassifier",
    "MLkNNClassifier",
    "OneVsRestLRClassifier",
    "brsvm_grid",
    "brsvm_seconds_estimate",
    "knn_classifier",
    "lr_classifier",
    "ncm_classifier",
]


# --------------------------------------------------------------------------- shared plumbing
class _ScaledClassifier(ClassifierMixin, BaseEstimator):
    """Target handling, [-1, 1] scaling and tags shared by the baselines."""

    def _fit_targets(self, X, y):
        """Validate, scale X on its own range, and build the class indicator."""
        X, y = validate_data(self, X, y, multi_output=True, dtype=np.float64)
        check_classification_targets(y)
        self.multilabel_ = type_of_target(y) == "multilabel-indicator"
        self.classes_, Y = label_indicator(y)
        self.data_min_, self.data_max_ = minmax_fit(X)
        return minmax_transform(X, self.data_min_, self.data_max_), Y

    def _scaled(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return minmax_transform(X, self.data_min_, self.data_max_)

    def _binary(self):
        return not self.multilabel_ and len(self.classes_) == 2

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        tags.target_tags.multi_output = True
        return tags


def leave_one_out_neighbors(nn, X_fit, k):
    """Indices of each training row's ``k`` nearest OTHER training rows.

    The row itself is removed by index from its ``k + 1`` nearest rows (not by
    distance 0, which would also drop its duplicates); when ``k + 1`` or more
    exact duplicates crowd the row out of that list, the last one listed is
    dropped instead.

    Parameters
    ----------
    nn : NearestNeighbors
        Fitted on ``X_fit``.
    X_fit : ndarray of shape (n_samples, n_features)
    k : int
        At most ``n_samples - 1``.

    Returns
    -------
    ind : ndarray of shape (n_samples, k)

    Examples
    --------
    Rows 0 and 1 are duplicates: each is the other's nearest neighbour.

    >>> X = np.array([[0.0], [0.0], [5.0]])
    >>> leave_one_out_neighbors(NearestNeighbors().fit(X), X, 1)
    array([[1],
           [0],
           [0]])
    """
    n = X_fit.shape[0]
    if k == 0:
        return np.empty((n, 0), dtype=np.intp)
    ind = nn.kneighbors(X_fit, n_neighbors=k + 1, return_distance=False)
    own = ind == np.arange(n)[:, None]
    own[~own.any(axis=1), -1] = True
    return ind[~own].reshape(n, k)


def _label_counts(ind, Y):
    """``C[i, l]`` = number of the rows ``ind[i]`` having label l."""
    n, k = ind.shape
    if k == 0:
        return np.zeros((n, Y.shape[1]), dtype=np.int64)
    A = sparse.csr_matrix(
        (np.ones(n * k, dtype=np.int64), ind.ravel(), np.arange(0, n * k + 1, k)),
        shape=(n, Y.shape[0]),
    )
    return np.asarray(A @ Y.astype(np.int64), dtype=np.int64)


class _NeighbourLabelClassifier(_ScaledClassifier):
    """Keeps the scaled training rows and counts labels among the k nearest."""

    def _fit_neighbours(self, X, y):
        Xs, Y = self._fit_targets(X, y)
        self.X_fit_, self.Y_fit_ = Xs, Y
        self.n_neighbors_ = int(min(self.k, Xs.shape[0] - 1))
        self.nn_ = NearestNeighbors(n_neighbors=max(self.n_neighbors_, 1)).fit(Xs)
        return Y

    def neighbour_label_counts(self, X=None):
        """Number of the ``n_neighbors_`` nearest training rows having each label.

        Parameters
        ----------
        X : array-like of shape (n_query, n_features), optional
            Query rows (every training row may be a neighbour).  ``None``: the
            training rows themselves, leave-one-out (a row is not its own
            neighbour; its duplicates are).

        Returns
        -------
        C : ndarray of shape (n_query, n_classes), int
        """
        check_is_fitted(self)
        if X is None:
            ind = leave_one_out_neighbors(self.nn_, self.X_fit_, self.n_neighbors_)
        elif self.n_neighbors_ == 0:
            n = validate_data(self, X, reset=False, dtype=np.float64).shape[0]
            ind = np.empty((n, 0), dtype=np.intp)
        else:
            ind = self.nn_.kneighbors(
                self._scaled(X), n_neighbors=self.n_neighbors_, return_distance=False
            )
        return _label_counts(ind, self.Y_fit_)


# --------------------------------------------------------------------------- ML-kNN
class MLkNNClassifier(_NeighbourLabelClassifier):
    """ML-kNN (Zhang & Zhou 2007): a Bayes rule on the label counts of the k nearest rows.

    For each label l, with ``n`` training rows and smoothing ``s``:

    * prior ``P(H_l = 1) = (s + sum_i y_il) / (2 s + n)``;
    * ``c_il`` = number of training row i's k nearest OTHER training rows
      having label l (leave-one-out), and for ``j = 0..k``::

          P(E_j | H_l = 1) = (s + #{i: y_il = 1, c_il = j}) / (s (k + 1) + #{i: y_il = 1})

      and likewise for ``H_l = 0``;
    * a query with ``C_l`` of its k nearest training rows having label l gets
      the posterior ``r_l = P(H=1) P(E_C | H=1) / (P(H=1) P(E_C | H=1) + P(H=0)
      P(E_C | H=0))``.

    Multi-label: label l is predicted when ``r_l > 0.5`` (a tie at 0.5 gives 0,
    the strict ``>`` of the original); ``predict_proba`` is ``r``.
    Multi-class: the same one-vs-rest model per class, ``predict`` is
    ``argmax_l r_l`` and ``predict_proba`` is ``r`` divided by its row sum.
    Two classes: the two one-vs-rest models are exact mirror images
    (``r_0 = 1 - r_1``), so only ``r_1`` is evaluated.
    ``decision_function`` is ``r - 0.5`` (two classes: ``r_1 - 0.5``): the
    ranking of ``r``, shifted so that, as scikit-learn expects, a label scores
    > 0 exactly when it is predicted.

    Parameters
    ----------
    k : int, default=10
        Number of neighbours (Euclidean on the [-1, 1]-scaled features).
    s : float, default=1.0
        Laplace smoothing of the prior and the count tables (> 0).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels; ``arange(m)`` for a multi-label indicator ``y``.
    multilabel_ : bool
    prior_ : ndarray of shape (n_classes,)
        ``P(H_l = 1)``.
    cond_prob_true_, cond_prob_false_ : ndarray of shape (n_classes, n_neighbors_ + 1)
        ``P(E_j | H_l = 1)`` and ``P(E_j | H_l = 0)``, column j for j = 0..k.
    n_neighbors_ : int
        ``min(k, n_samples - 1)``, the number of neighbours used.
    nn_ : NearestNeighbors
        Fitted on ``X_fit_``.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Scaled training rows.
    Y_fit_ : ndarray of shape (n_samples, n_classes)
        0/1 class indicator of the training rows.
    data_min_, data_max_ : ndarray of shape (n_features,)
        Training range used for scaling.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sblr.baselines import MLkNNClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = MLkNNClassifier(k=10).fit(X[::2], y[::2])
    >>> clf.cond_prob_true_.shape, round(clf.score(X[1::2], y[1::2]), 2)
    ((3, 11), 0.97)
    """

    _parameter_constraints = {
        "k": [Interval(Integral, 1, None, closed="left")],
        "s": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, *, k=10, s=1.0):
        self.k = k
        self.s = s

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Count the labels among each training row's leave-one-out neighbours.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels, or a 0/1 multi-label indicator matrix.

        Returns
        -------
        self
        """
        Y = self._fit_neighbours(X, y)
        s, k, (n, m) = float(self.s), self.n_neighbors_, Y.shape
        self.prior_ = (s + Y.sum(axis=0)) / (2.0 * s + n)
        C = self.neighbour_label_counts()
        cols = np.broadcast_to(np.arange(m), C.shape)
        hits = np.zeros((m, k + 1))  # hits[l, j] = #{i: y_il = 1, c_il = j}
        miss = np.zeros((m, k + 1))  # miss[l, j] = #{i: y_il = 0, c_il = j}
        np.add.at(hits, (cols, C), Y)
        np.add.at(miss, (cols, C), 1 - Y)
        self.cond_prob_true_ = (s + hits) / (s * (k + 1) + hits.sum(axis=1, keepdims=True))
        self.cond_prob_false_ = (s + miss) / (s * (k + 1) + miss.sum(axis=1, keepdims=True))
        return self

    def posterior(self, X):
        """Posterior ``r_l = P(H_l = 1 | C_l(x))`` of every class.

        Returns
        -------
        R : ndarray of shape (n_samples, n_classes)
        """
        C = self.neighbour_label_counts(X)
        labels = np.arange(C.shape[1])[None, :]
        yes = self.prior_ * self.cond_prob_true_[labels, C]
        no = (1.0 - self.prior_) * self.cond_prob_false_[labels, C]
        R = yes / (yes + no)
        if self._binary():
            R[:, 0] = 1.0 - R[:, 1]
        return R

    def predict_proba(self, X):
        """Posteriors ``r`` (multi-label); ``r`` over its row sum (multi-class).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
        """
        R = self.posterior(X)
        if self.multilabel_:
            return R
        return R / R.sum(axis=1, keepdims=True)

    def decision_function(self, X):
        """Posteriors minus one half, ``r - 0.5``; for two classes ``r_1 - 0.5``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
        """
        R = self.posterior(X) - 0.5
        if self._binary():
            return R[:, 1]
        return R

    def predict(self, X):
        """Labels with ``r_l > 0.5`` (multi-label) or ``argmax_l r_l`` (multi-class).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features.

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        R = self.posterior(X)
        if self.multilabel_:
            return (R > 0.5).astype(int)
        return self.classes_[np.argmax(R, axis=1)]


# --------------------------------------------------------------------------- IBLR-ML
class IBLRClassifier(_NeighbourLabelClassifier):
    """IBLR-ML (Cheng & Hüllermeier 2009): logistic regression on neighbour label confidences.

    For each label l, a binary logistic regression of ``y_l`` on the label
    confidences of ALL labels among the k nearest neighbours,
    ``z_t(x) = (1/k) #{neighbours with label t}`` (the fraction, so every
    feature lies in [0, 1]), plus an intercept.  For the training rows the
    neighbours are found leave-one-out.  The regressions are scikit-learn's
    ``LogisticRegression(C=C, l1_ratio=0.0, max_iter=max_iter)``: an L2 penalty
    ``||w||^2 / (2 C)`` on the summed log-loss, intercept not penalized.  The
    default ``C = 1e4`` is nearly maximum likelihood (the original uses
    Weka's almost unpenalized logistic regression) while keeping the
    coefficients finite when a label is separable, and keeps a unique solution
    for multi-class data, whose confidences sum to 1.

    A label constant in training gets coefficients 0 and the intercept
    :func:`sblr.logistic.constant_intercept` (the logit of the smoothed rate
    ``(n_pos + 0.5) / (n + 1)``).  Two classes: one regression for
    ``classes_[1]``; the other is its mirror image (``logit_0 = -logit_1``).

    Multi-label: label l is predicted when ``pi_l >= 0.5``; ``predict_proba``
    is ``pi`` and ``decision_function`` the logits.  Multi-class:
    ``argmax_l pi_l``; ``predict_proba`` is ``pi`` over its row sum;
    ``decision_function`` the logits (3+ classes) or ``logit_1 - logit_0``.

    Parameters
    ----------
    k : int, default=10
        Number of neighbours (Euclidean on the [-1, 1]-scaled features).
    C : float, default=1e4
        Inverse L2 strength of each logistic regression.
    max_iter : int, default=1000
        Iterations of each logistic regression (lbfgs).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    multilabel_ : bool
    coef_ : ndarray of shape (n_classes, n_classes)
        ``coef_[l, t]``: weight of label t's confidence in label l's logit.
    intercept_ : ndarray of shape (n_classes,)
    n_iter_ : ndarray of shape (n_classes,)
        Solver iterations per label (0 for a constant or mirrored label).
    n_neighbors_ : int
        ``min(k, n_samples - 1)``.
    nn_, X_fit_, Y_fit_, data_min_, data_max_, n_features_in_
        As in :class:`MLkNNClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sblr.baselines import IBLRClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = IBLRClassifier(k=10).fit(X[::2], y[::2])
    >>> clf.coef_.shape, round(clf.score(X[1::2], y[1::2]), 2)
    ((3, 3), 0.97)
    """

    _parameter_constraints = {
        "k": [Interval(Integral, 1, None, closed="left")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, k=10, C=1e4, max_iter=1000):
        self.k = k
        self.C = C
        self.max_iter = max_iter

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit one logistic regression per label on the leave-one-out confidences.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels, or a 0/1 multi-label indicator matrix.

        Returns
        -------
        self
        """
        Y = self._fit_neighbours(X, y)
        Z = self.neighbour_label_fractions()
        m = Y.shape[1]
        self.coef_, self.intercept_ = np.zeros((m, m)), np.zeros(m)
        self.n_iter_ = np.zeros(m, dtype=int)
        for label in [1] if self._binary() else range(m):
            yl = Y[:, label]
            if yl.min() == yl.max():
                self.intercept_[label] = constant_intercept(yl)
                continue
            lr = self._logistic().fit(Z, yl)
            self.coef_[label], self.intercept_[label] = lr.coef_[0], lr.intercept_[0]
            self.n_iter_[label] = lr.n_iter_[0]
        if self._binary():
            self.coef_[0], self.intercept_[0] = -self.coef_[1], -self.intercept_[1]
        return self

    def _logistic(self):
        return LogisticRegression(C=self.C, l1_ratio=0.0, max_iter=self.max_iter)

    def neighbour_label_fractions(self, X=None):
        """Confidences ``z_t(x)``: fraction of the nearest training rows with label t.

        Parameters
        ----------
        X : array-like of shape (n_query, n_features), optional
            ``None``: the training rows, leave-one-out (the features the
            regressions are fitted on).

        Returns
        -------
        Z : ndarray of shape (n_query, n_classes)
            0 everywhere when there are no neighbours (a single training row).
        """
        C = self.neighbour_label_counts(X)
        return C / max(self.n_neighbors_, 1)

    def logits(self, X):
        """Per-label logits ``intercept_l + sum_t coef_[l, t] z_t(x)``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features.

        Returns
        -------
        eta : ndarray of shape (n_samples, n_classes)
        """
        return self.neighbour_label_fractions(X) @ self.coef_.T + self.intercept_

    def decision_function(self, X):
        """Logits per label; for two classes ``logit_1 - logit_0``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
        """
        eta = self.logits(X)
        if self._binary():
            return eta[:, 1] - eta[:, 0]
        return eta

    def predict_proba(self, X):
        """``pi_l = sigmoid(logit_l)``; multi-class rows divided by their sum.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
        """
        P = expit(self.logits(X))
        if self.multilabel_:
            return P
        return P / P.sum(axis=1, keepdims=True)

    def predict(self, X):
        """Labels with ``pi_l >= 0.5`` (multi-label) or ``argmax_l pi_l`` (multi-class).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features.

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        eta = self.logits(X)
        if self.multilabel_:
            return (eta >= 0).astype(int)
        return self.classes_[np.argmax(eta, axis=1)]


# --------------------------------------------------------------------------- BR-SVM
class BRSVMClassifier(_ScaledClassifier):
    """Binary relevance with one RBF support vector machine per class.

    ``OneVsRestClassifier(SVC(kernel="rbf", C=C, gamma=gamma))`` on the
    [-1, 1]-scaled features (two classes: one SVM, for ``classes_[1]``), except
    that a class constant in training gets no SVM and scores +1 (always
    present) or -1 (never present), not scikit-learn's warning and 1 or 0.
    ``decision_function`` returns the SVMs' decision values.  Multi-label:
    label l is predicted when its score is > 0; multi-class: ``argmax``.  No
    ``predict_proba`` (SVM scores are not probabilities; Platt scaling would
    change the model).

    Parameters
    ----------
    C : float, default=1.0
        SVM regularization.
    gamma : float, "scale" or "auto", default="scale"
        RBF width; ``"scale"`` is ``1 / (n_features * X.var())`` of the scaled
        training data (the same for every class).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    multilabel_ : bool
    svm_classes_ : ndarray of shape (n_svms,)
        Indices of the classes that have an SVM.
    ovr_ : OneVsRestClassifier or None
        The SVMs of ``svm_classes_``, in that order (None when there are none).
    estimators_ : list of SVC or None
        One per class (``None``: constant class, or class 0 of a binary problem).
    constant_scores_ : ndarray of shape (n_classes,)
        Score of each constant class (+1 / -1; 0 where an SVM is fitted).
    data_min_, data_max_ : ndarray of shape (n_features,)
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sblr.baselines import BRSVMClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = BRSVMClassifier().fit(X[::2], y[::2])
    >>> clf.decision_function(X[1::2]).shape, round(clf.score(X[1::2], y[1::2]), 2)
    ((89, 3), 0.99)
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, *, C=1.0, gamma="scale"):
        self.C = C
        self.gamma = gamma

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit one SVM per (non-constant) class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
            Class labels, or a 0/1 multi-label indicator matrix.

        Returns
        -------
        self
        """
        Xs, Y = self._fit_targets(X, y)
        constant = Y.min(axis=0) == Y.max(axis=0)
        self.constant_scores_ = np.where(constant, 2.0 * Y[0] - 1.0, 0.0)
        # two classes: a single SVM, for classes_[1]
        self.svm_classes_ = np.array([1]) if self._binary() else np.flatnonzero(~constant)
        self.ovr_, self.estimators_ = None, [None] * Y.shape[1]
        if self.svm_classes_.size:
            target = Y[:, self.svm_classes_]
            if target.shape[1] == 1:  # OneVsRestClassifier takes one 0/1 column as 1-D
                target = target[:, 0]
            svm = SVC(kernel="rbf", C=self.C, gamma=self.gamma)
            self.ovr_ = OneVsRestClassifier(svm).fit(Xs, target)
            for label, svc in zip(self.svm_classes_, self.ovr_.estimators_, strict=True):
                self.estimators_[label] = svc
        return self

    def _scores(self, X):
        Xs = self._scaled(X)
        S = np.tile(self.constant_scores_, (Xs.shape[0], 1))
        if self.ovr_ is not None:
            S[:, self.svm_classes_] = self.ovr_.decision_function(Xs).reshape(Xs.shape[0], -1)
        return S

    def decision_function(self, X):
        """SVM decision values per class; for two classes the single SVM's.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
        """
        S = self._scores(X)
        if self._binary():
            return S[:, 1]
        return S

    def predict(self, X):
        """Classes scoring > 0 (multi-label) or the top-scoring class (multi-class).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features.

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        S = self._scores(X)
        if self.multilabel_:
            return (S > 0).astype(int)
        if self._binary():
            return self.classes_[(S[:, 1] > 0).astype(int)]
        return self.classes_[np.argmax(S, axis=1)]


def brsvm_grid(X_fit, y_fit, X_val, points):
    """BR-SVM's validation output at every grid point, one RBF kernel matrix per gamma.

    What ``BRSVMClassifier(gamma=g, C=c).fit(X_fit, y_fit)`` would give on ``X_val`` for
    every point, computed with ``SVC(kernel="precomputed")`` on one kernel matrix per
    gamma (shared by every C and every class) instead of libsvm's own kernel evaluations:
    the same optimization problem, so the same decision values up to rounding (1e-12 on
    the benchmark data), 3-4 times faster.

    Parameters
    ----------
    X_fit, X_val : ndarray of shape (n_fit, n_features) and (n_val, n_features)
    y_fit : ndarray of shape (n_fit,) or (n_fit, n_classes)
    points : sequence of dict
        Each ``{"gamma": float, "C": float}`` (numeric gammas only).

    Yields
    ------
    prediction, decision : ndarray
        ``predict(X_val)`` and ``decision_function(X_val)`` of each point, in the order
        of ``points``.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> pts = [{"gamma": 0.1, "C": 1.0}, {"gamma": 0.1, "C": 10.0}]
    >>> outs = list(brsvm_grid(X[::2], y[::2], X[1::2], pts))
    >>> ref = BRSVMClassifier(gamma=0.1, C=10.0).fit(X[::2], y[::2]).decision_function(X[1::2])
    >>> bool(np.allclose(outs[1][1], ref))
    True
    """
    from sklearn.metrics.pairwise import rbf_kernel

    ref = BRSVMClassifier()  # the targets, scaling and constant classes of fit()
    Xs, Y = ref._fit_targets(X_fit, y_fit)
    Xv = minmax_transform(
        validate_data(ref, X_val, reset=False, dtype=np.float64), ref.data_min_, ref.data_max_
    )
    constant = Y.min(axis=0) == Y.max(axis=0)
    base = np.tile(np.where(constant, 2.0 * Y[0] - 1.0, 0.0), (Xv.shape[0], 1))
    svm_classes = np.array([1]) if ref._binary() else np.flatnonzero(~constant)
    kernels = {}
    for point in points:
        gamma, C = float(point["gamma"]), float(point["C"])
        if gamma not in kernels:
            kernels.clear()  # points come gamma-outer: keep one pair of matrices
            kernels[gamma] = (rbf_kernel(Xs, gamma=gamma), rbf_kernel(Xv, Xs, gamma=gamma))
        K, Kv = kernels[gamma]
        S = base.copy()
        for label in svm_classes:
            S[:, label] = SVC(kernel="precomputed", C=C).fit(K, Y[:, label]).decision_function(Kv)
        if ref.multilabel_:
            yield (S > 0).astype(int), S
        elif ref._binary():
            yield ref.classes_[(S[:, 1] > 0).astype(int)], S[:, 1]
        else:
            yield ref.classes_[np.argmax(S, axis=1)], S


# --------------------------------------------------------------------------- multi-class only
def _scaler():
    # Scales like sblr.similarity.minmax_transform, except that a constant
    # training column maps to -1 (not 0); that shifts no distance, centroid
    # or (up to the intercept) logit.
    return MinMaxScaler(feature_range=(-1, 1))


def knn_classifier(k=10):
    """k-nearest-neighbour majority vote on the [-1, 1]-scaled features (multi-class).

    Returns
    -------
    Pipeline
        ``MinMaxScaler(feature_range=(-1, 1))`` then ``KNeighborsClassifier(n_neighbors=k)``
        (Euclidean, uniform weights).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = knn_classifier(k=5).fit(X[::2], y[::2])
    >>> round(clf.score(X[1::2], y[1::2]), 2)
    0.94
    """
    return Pipeline([("scale", _scaler()), ("knn", KNeighborsClassifier(n_neighbors=k))])


class FrequencyClassifier(ClassifierMixin, BaseEstimator):
    """The trivial yardstick: ignores ``X``, answers with the training frequencies.

    Every row gets the same scores, each class's share of the training rows
    (``predict_proba``; ``decision_function`` ranks the same).  ``predict``: multi-label, the
    labels that more than half the training rows carry (for most data sets: no
    label at all, "predict nothing"); multi-class, the most frequent class (ties:
    the first in ``classes_``).  A model's metric means something only beside
    this one's: with rare labels, predicting nothing already has a small Hamming
    loss, and ranking by frequency a fair average precision.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (multi-label: ``0 .. m - 1``).
    frequency_ : ndarray of shape (n_classes,)
        Share of the training rows in each class.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 0], [1, 0, 1]])
    >>> clf = FrequencyClassifier().fit(np.zeros((4, 2)), Y)
    >>> clf.frequency_
    array([0.75, 0.25, 0.25])
    >>> clf.predict(np.zeros((2, 2)))
    array([[1, 0, 0],
           [1, 0, 0]])
    """

    _parameter_constraints: dict = {}

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse="csr", multi_output=True, reset=True)
        self.multilabel_ = type_of_target(y) == "multilabel-indicator"
        if not self.multilabel_:
            y = column_or_1d(y, warn=True)
        if self.multilabel_:
            Y = np.asarray(y, dtype=np.float64)
            self.classes_ = np.arange(Y.shape[1])
            self.frequency_ = Y.mean(axis=0)
        else:
            check_classification_targets(y)
            self.classes_, counts = np.unique(y, return_counts=True)
            self.frequency_ = counts / counts.sum()
        return self

    def _rows(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        return X.shape[0]

    def predict_proba(self, X):
        n = self._rows(X)
        return np.tile(self.frequency_, (n, 1))

    def decision_function(self, X):
        """The frequencies, shifted so that ``> 0`` is exactly "predicted": multi-label
        ``frequency_ - 0.5``; two classes, one score ``frequency_[1] - 0.5`` (scikit-learn's
        convention); more classes ``frequency_`` itself."""
        P = self.predict_proba(X)
        if self.multilabel_:
            return P - 0.5
        return P[:, 1] - 0.5 if P.shape[1] == 2 else P

    def predict(self, X):
        n = self._rows(X)
        if self.multilabel_:
            return np.tile((self.frequency_ > 0.5).astype(int), (n, 1))
        return np.repeat(self.classes_[np.argmax(self.frequency_)], n)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        tags.input_tags.sparse = True
        return tags


def ncm_classifier():
    """Nearest class mean (Euclidean ``NearestCentroid``) on the scaled features.

    Returns
    -------
    Pipeline
        ``MinMaxScaler(feature_range=(-1, 1))`` then ``NearestCentroid()``.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = ncm_classifier().fit(X[::2], y[::2])
    >>> round(clf.score(X[1::2], y[1::2]), 2)
    0.96
    """
    return Pipeline([("scale", _scaler()), ("ncm", NearestCentroid())])


class OneVsRestLRClassifier(_ScaledClassifier):
    """The plain model a user would fit instead: scikit-learn's logistic regression on the
    features scaled to [-1, 1], one per label (``OneVsRestClassifier``) for multi-label data,
    multinomial for multi-class data, deciding at 0.5 / by the most probable class.

    The yardstick beside which sblr's models are judged (Model & metrics,
    benchmarks/decisions.py).  Fitted with single-threaded BLAS: on a 45-label, 1,449-column
    shape, once, with another job on this 2-core machine, lbfgs took 17 s with BLAS's threads
    competing and 0.8 s with one.

    Parameters
    ----------
    C : float, default=1.0
    max_iter : int, default=1000

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    multilabel_ : bool
    model_ : OneVsRestClassifier or LogisticRegression
    n_iter_ : ndarray
        lbfgs iterations (one per label for multi-label data).
    data_min_, data_max_ : ndarray of shape (n_features,)

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = OneVsRestLRClassifier().fit(X[::2], y[::2])
    >>> round(clf.score(X[1::2], y[1::2]), 2)
    0.96
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, C=1.0, max_iter=1000):
        self.C = C
        self.max_iter = max_iter

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Scale, then fit the logistic regressions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_classes)

        Returns
        -------
        self
        """
        Xs, Y = self._fit_targets(X, y)
        lr = LogisticRegression(C=self.C, max_iter=self.max_iter)
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.filterwarnings("ignore", "Label .* is present in all", UserWarning)
            warnings.filterwarnings("ignore", "Label not .* is present in all", UserWarning)
            if self.multilabel_:
                self.model_ = OneVsRestClassifier(lr).fit(Xs, Y)
                # a label constant in the rows gets scikit-learn's constant predictor: 0 steps
                self.n_iter_ = np.array(
                    [int(getattr(e, "n_iter_", [0])[0]) for e in self.model_.estimators_]
                )
            else:
                self.model_ = lr.fit(Xs, np.argmax(Y, axis=1))
                self.n_iter_ = np.asarray(self.model_.n_iter_)
        return self

    def predict_proba(self, X):
        """Each label's probability (multi-label) or each class's (rows sum to 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
        """
        Xs = np.clip(self._scaled(X), -10.0, 10.0)  # far rows: finite logits
        P = self.model_.predict_proba(Xs)
        if self.multilabel_:
            return P
        full = np.zeros((Xs.shape[0], len(self.classes_)))
        full[:, self.model_.classes_] = P
        return full

    def decision_function(self, X):
        """The probabilities (a ranking for the ranking metrics); two classes: the second's.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
        """
        P = self.predict_proba(X)
        return P[:, 1] - 0.5 if self._binary() else P - 0.5

    def predict(self, X):
        """Multi-label: every label with probability >= 0.5; multi-class: the most probable.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        P = self.predict_proba(X)
        if self.multilabel_:
            return (P >= 0.5).astype(int)
        return self.classes_[np.argmax(P, axis=1)]


def lr_classifier(C=1.0, max_iter=1000):
    """Multinomial logistic regression on the scaled raw features.

    Returns
    -------
    Pipeline
        ``MinMaxScaler(feature_range=(-1, 1))`` then
        ``LogisticRegression(C=C, l1_ratio=0.0, max_iter=max_iter)`` (L2, lbfgs;
        multinomial for 3+ classes).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = lr_classifier().fit(X[::2], y[::2])
    >>> round(clf.score(X[1::2], y[1::2]), 2)
    0.96
    """
    lr = LogisticRegression(C=C, l1_ratio=0.0, max_iter=max_iter)
    return Pipeline([("scale", _scaler()), ("lr", lr)])


#: Baseline factories by short name (``BASELINES[name](**params)`` builds an estimator).
BASELINES = {
    "mlknn": MLkNNClassifier,
    "iblr": IBLRClassifier,
    "br_svm": BRSVMClassifier,
    "knn": knn_classifier,
    "ncm": ncm_classifier,
    "lr": lr_classifier,
}

#: Names in :data:`BASELINES` that handle multi-class data only (no multi-label ``y``).
MULTICLASS_ONLY = ("knn", "ncm", "lr")


#: BR-SVM with the paper's 8 × 8 (γ, C) grid: CPU seconds per fold per class per
#: (training row)², with a margin of 2 (measured on emotions: 0.86 s a fold, 8.6 s for 10
#: folds; before the selection shared a kernel matrix per gamma, 3.1 s a fold).
BRSVM_SECONDS = 1e-6


def brsvm_seconds_estimate(n_samples, n_classes, folds):
    """Rough CPU seconds of BR-SVM with the paper's grid over ``folds`` CV folds: its time
    grows with classes × training rows² (one SVM per class and grid point; the selection
    shares one kernel matrix per gamma, :func:`brsvm_grid`).  About twice the time
    measured on 2 cores (emotions 8.6 s, a 645-row 19-label set 25 s, one worker).

    Examples
    --------
    >>> round(brsvm_seconds_estimate(593, 6, 10))  # emotions: 8.6 s measured
    17
    """
    n_train = n_samples * (folds - 1) / folds
    return folds * BRSVM_SECONDS * n_classes * n_train**2
