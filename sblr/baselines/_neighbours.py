"""The neighbour baselines: what do a row's k nearest training rows say about its labels?

:class:`MLkNNClassifier` (ML-kNN: label counts among the neighbours read through Bayes'
rule) and :class:`IBLRClassifier` (IBLR-ML: a logistic regression per label on those
counts), on Euclidean neighbours of the scaled rows, found leave-one-out for the training
rows (:func:`leave_one_out_neighbors`).  Public through :mod:`sblr.baselines`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy import sparse
from scipy.special import expit
from sklearn.base import _fit_context
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted, validate_data

from sblr._validation import Interval
from sblr.baselines._base import _ScaledClassifier
from sblr.logistic import constant_intercept


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

    #: Its multi-label decision (see :class:`sblr.decision.Decision`).
    _own_rule = "ML-kNN's own rule: posterior ≥ 0.5"

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

    _own_rule = "IBLR's own rule: π ≥ 0.5"

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
