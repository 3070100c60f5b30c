"""The simple yardsticks: what do frequencies, centroids, a plain kNN vote or a linear model get?

:class:`FrequencyClassifier` (ignores ``X``), the multi-class Pipelines of the paper's MCC
table (:func:`knn_classifier`, :func:`ncm_classifier`, :func:`lr_classifier`) and
:class:`OneVsRestLRClassifier` (a logistic regression per label on the scaled features).
Public through :mod:`sblr.baselines`.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from sklearn.multiclass import OneVsRestClassifier
from sklearn.neighbors import KNeighborsClassifier, NearestCentroid
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data
from threadpoolctl import threadpool_limits

from sblr._validation import Interval, StrOptions
from sblr.baselines._base import _ScaledClassifier, ovr_target
from sblr.decision import RULES, decide, fit_cuts
from sblr.metrics import micro_f1


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
    return Pipeline([("scale", _scaler()), ("neighbours", KNeighborsClassifier(n_neighbors=k))])


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

    _own_rule = "the labels of more than half the training rows"

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
    return Pipeline([("scale", _scaler()), ("centroids", NearestCentroid())])


class OneVsRestLRClassifier(_ScaledClassifier):
    """The plain model a user would fit instead: scikit-learn's logistic regression on the
    features scaled to [-1, 1], one per label (``OneVsRestClassifier``) for multi-label data,
    multinomial for multi-class data, deciding at 0.5 / by the most probable class.

    The yardstick beside which sblr's models are judged (Model & metrics,
    benchmarks/decisions.py).  Fitted with single-threaded BLAS: on a 45-label, 1,449-column
    shape, once, with another job on this 2-core machine, lbfgs took 17 s with BLAS's threads
    competing and 0.8 s with one.

    With ``Cs`` it is the TUNED yardstick (the leaderboard's, docs/benchmarks.md): ``C`` is
    chosen from ``Cs`` on ``cv`` inner folds, and with a ``threshold`` rule the multi-label cut
    is fitted on the out-of-fold probabilities, both for that rule's micro-F1 (multi-class:
    accuracy), as a user tuning scikit-learn's model for decisions would.

    Parameters
    ----------
    C : float, default=1.0
        Inverse L2 strength (without ``Cs``).
    max_iter : int, default=1000
    Cs : sequence of float or None, default=None
        Candidates for ``C``, chosen on inner folds (ties: the first).
    threshold : float or str, default=0.5
        Multi-label decision: class k is predicted when its probability reaches the cut; a
        rule of :mod:`sblr.decision` (e.g. ``"micro_f1"``) fits it on out-of-fold
        probabilities of the training rows (``cv`` folds).
    cv : int, default=5
        Inner folds of ``Cs`` and of a threshold rule.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    multilabel_ : bool
    model_ : OneVsRestClassifier or LogisticRegression
    n_iter_ : ndarray
        lbfgs iterations (one per label for multi-label data).
    C_ : float
        The ``C`` fitted with (chosen from ``Cs``, or ``C``).
    threshold_ : ndarray of shape (n_classes,) or None
        The cuts (multi-label data).
    data_min_, data_max_ : ndarray of shape (n_features,)

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = OneVsRestLRClassifier().fit(X[::2], y[::2])
    >>> round(clf.score(X[1::2], y[1::2]), 2)
    0.96
    >>> OneVsRestLRClassifier(Cs=[0.01, 1.0]).fit(X[::2], y[::2]).C_
    1.0
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "Cs": ["array-like", None],
        "threshold": [Interval(Real, 0, 1, closed="both"), StrOptions(set(RULES))],
        "cv": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(self, *, C=1.0, max_iter=1000, Cs=None, threshold=0.5, cv=5):
        self.C = C
        self.max_iter = max_iter
        self.Cs = Cs
        self.threshold = threshold
        self.cv = cv

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, progress=None):
        """Scale, then fit the logistic regressions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_classes)
        progress : callable, optional
            ``progress(done, total)`` after each label's fit of the selection (multi-label
            data: one logistic regression per label, per ``C`` and inner fold) and after the
            final fit (counted as one fit per label; multi-class data: one fit each):
            ``total`` is (labels or 1) × (``len(Cs)`` × ``cv`` + 1) with a selection.

        Returns
        -------
        self
        """
        Xs, Y = self._fit_targets(X, y)
        tuned = self.Cs is not None or (self.multilabel_ and isinstance(self.threshold, str))
        candidates = [float(c) for c in (self.Cs if self.Cs is not None else [self.C])]
        if not candidates or not all(np.isfinite(c) and c > 0 for c in candidates):
            raise ValueError(f"Cs must be numbers > 0; got {self.Cs!r}.")
        self.C_, held_P = candidates[0], None
        selects = tuned and len(Y) >= 2 * self.cv
        per_fit = Y.shape[1] if self.multilabel_ else 1  # fits of one C on one fold
        total = per_fit * (len(candidates) * self.cv * selects + 1)
        done = 0

        def tick(fits=1):
            nonlocal done
            done += fits
            if progress is not None:
                progress(done, total)

        if selects:
            folds = list(KFold(self.cv, shuffle=True, random_state=0).split(Xs))
            best = -np.inf
            for C in candidates:
                P = np.empty(Y.shape)
                for fit_rows, held in folds:
                    P[held] = self._held_probabilities(Xs[fit_rows], Y[fit_rows], Xs[held], C, tick)
                value = self._held_out_score(P, Y)
                if value > best:
                    best, self.C_, held_P = value, C, P
        self.model_ = self._fitted(Xs, Y, self.C_)
        tick(per_fit)
        if self.multilabel_:
            # a label constant in the rows gets scikit-learn's constant predictor: 0 steps
            self.n_iter_ = np.array(
                [int(getattr(e, "n_iter_", [0])[0]) for e in self.model_.estimators_]
            )
            self.threshold_ = self._cuts(held_P, Y)
        else:
            self.n_iter_ = np.asarray(self.model_.n_iter_)
            self.threshold_ = None
        return self

    def _fitted(self, Xs, Y, C):
        lr = LogisticRegression(C=C, max_iter=self.max_iter)
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.filterwarnings("ignore", "Label .* is present in all", UserWarning)
            warnings.filterwarnings("ignore", "Label not .* is present in all", UserWarning)
            if self.multilabel_:
                return OneVsRestClassifier(lr).fit(Xs, ovr_target(Y))
            return lr.fit(Xs, np.argmax(Y, axis=1))

    def _held_probabilities(self, X_fit, Y_fit, X_held, C, tick):
        """The held-out rows' probabilities of the model fitted at ``C`` on the fit rows:
        multi-label data label by label, as ``OneVsRestClassifier`` fits them (a label
        constant in the fit rows predicts its value), so that ``tick()`` follows each label
        (delicious: 983 labels, a minute or more each fold's C)."""
        if not self.multilabel_:
            P = self._probabilities(self._fitted(X_fit, Y_fit, C), X_held)
            tick()
            return P
        P = np.empty((len(X_held), Y_fit.shape[1]))
        X_held = np.clip(X_held, -10.0, 10.0)  # as _probabilities: far rows, finite logits
        lr = LogisticRegression(C=C, max_iter=self.max_iter)
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for k in range(Y_fit.shape[1]):
                y = Y_fit[:, k]
                if y.min() == y.max():
                    P[:, k] = y[0]
                else:
                    P[:, k] = clone(lr).fit(X_fit, y).predict_proba(X_held)[:, 1]
                tick()
        return P

    def _probabilities(self, model, Xs):
        P = model.predict_proba(np.clip(Xs, -10.0, 10.0))  # far rows: finite logits
        if self.multilabel_:
            return P
        full = np.zeros((Xs.shape[0], len(self.classes_)))
        full[:, model.classes_] = P
        return full

    def _cuts(self, P, Y):
        """The multi-label cuts: the threshold rule on out-of-fold probabilities ``P``."""
        if not isinstance(self.threshold, str):
            return np.full(Y.shape[1], float(self.threshold))
        if P is None:  # too few rows for inner folds: the paper's 0.5
            return np.full(Y.shape[1], 0.5)
        return fit_cuts(P, Y, self.threshold)

    def _held_out_score(self, P, Y):
        if not self.multilabel_:
            return float((np.argmax(P, axis=1) == np.argmax(Y, axis=1)).mean())
        return micro_f1(Y, decide(P, self._cuts(P, Y)))

    def predict_proba(self, X):
        """Each label's probability (multi-label) or each class's (rows sum to 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
        """
        Xs = self._scaled(X)  # checks that the model is fitted first
        return self._probabilities(self.model_, Xs)

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
        """Multi-label: every label whose probability reaches its cut ``threshold_`` (0.5 by
        default); multi-class: the most probable.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        P = self.predict_proba(X)
        if self.multilabel_:
            return decide(P, self.threshold_)
        return self.classes_[np.argmax(P, axis=1)]


#: The tuned yardstick's settings: C from five decades and one micro-F1 cut, both chosen on 5
#: inner folds (the leaderboard's "LR (tuned)", the Model page's LR).
TUNED_LR = {"Cs": (0.01, 0.1, 1.0, 10.0, 100.0), "threshold": "micro_f1"}


def tuned_lr_classifier(**params):
    """scikit-learn's logistic regression as a user tuning it for decisions fits it:
    :class:`OneVsRestLRClassifier` with :data:`TUNED_LR` (and then ``params``).

    Examples
    --------
    >>> tuned_lr_classifier().Cs
    (0.01, 0.1, 1.0, 10.0, 100.0)
    """
    return OneVsRestLRClassifier(**{**TUNED_LR, **params})


#: CPU seconds of one logistic regression of the tuned yardstick (one label, one C, lbfgs,
#: single-threaded BLAS) on n rows × d features: ``a + b · n · d``, averaged over
#: :data:`TUNED_LR`'s five Cs (large C takes more lbfgs steps: on delicious 43 at C = 0.01, 160
#: at C = 100). Measured by ``python benchmarks/lr_yardstick.py --per-c`` (one label's fit at
#: each C): b from 0.7e-7 (yeast, enron) to 1.8e-7 (delicious' 12,920 rows, 20 labels, load 9
#: on 2 cores); a is what a fit of a tiny problem costs (emotions' 6 labels: 15 ms a fit). The
#: whole tuned fit, measured against this estimate (load 10-22 on 2 cores): emotions 2.8 CPU-s
#: (×2.1 the estimate), yeast 6.0, enron 135, delicious' first 3,000 rows and 60 labels 201 (each
#: ×0.69). The features are dense whatever
#: their sparsity: scaled to [-1, 1], a 0/1 column is ±1. (Warm starts along the Cs would halve
#: the lbfgs steps — delicious' first 3,000 rows, 30 labels: 22.0 → 11.8 CPU-s — but change the
#: probabilities of nearly separable labels at large C by up to 1.0, yeast's by 0.4, so the C
#: and cut chosen could change: not used.)
TUNED_LR_SECONDS = (0.005, 1.5e-7)


def tuned_lr_seconds_estimate(n_samples, n_features, n_classes, *, fits=1, multilabel=True):
    """Rough CPU seconds of ``fits`` fits of :func:`tuned_lr_classifier` on ``n_samples``
    training rows each (one core): per label (multi-class data: per multinomial fit, its cost
    growing with the classes), the 5 Cs × 5 inner folds on 4/5 of the rows and the final fit,
    each at :data:`TUNED_LR_SECONDS`. Within about a factor of 2 of the benchmark's
    measurements; it grows with rows × features × labels (delicious, 983 labels: hours).

    Examples
    --------
    >>> round(tuned_lr_seconds_estimate(391, 72, 6), 1)  # emotions' training file
    1.3
    >>> round(tuned_lr_seconds_estimate(12920, 500, 983) / 3600, 1)  # delicious': hours
    5.6
    """
    a, b = TUNED_LR_SECONDS
    n, d, m = float(n_samples), float(n_features), float(n_classes)
    cv, n_cs = 5, len(TUNED_LR["Cs"])
    inner, final = n_cs * cv * (a + b * n * (cv - 1) / cv * d), a + b * n * d
    if multilabel:
        return fits * m * (inner + final)
    return fits * (n_cs * cv * (a + b * n * (cv - 1) / cv * d * m) + a + b * n * d * m)


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
    return Pipeline([("scale", _scaler()), ("logistic", lr)])
