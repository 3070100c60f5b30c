"""BR-SVM: one RBF support vector machine per label (binary relevance).

:class:`BRSVMClassifier`, the paper's (gamma, C) grid selected with one kernel matrix per
gamma (:func:`brsvm_grid`), and how long that takes (:func:`brsvm_seconds_estimate`).
Public through :mod:`sblr.baselines`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC
from sklearn.utils.validation import validate_data

from sblr._validation import Interval, StrOptions
from sblr.baselines._base import _ScaledClassifier, ovr_target
from sblr.similarity import minmax_transform


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

    #: Its multi-label decision (see :class:`sblr.decision.Decision`).
    _own_rule = "BR-SVM's own rule: a positive margin"

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
            self.ovr_ = OneVsRestClassifier(svm).fit(Xs, ovr_target(target))
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
