"""What the three models share: the evidence, the targets, the multi-label decision.

:class:`_SimilarityClassifier` validates the data, fits the :class:`~sblr.SimilarityFeaturizer`
and turns probabilities into label sets with the ``threshold`` rule; :func:`fits_from_evidence`
says which estimators can be refitted from cached evidence.  Public through :mod:`sblr.models`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from sblr import decision
from sblr._validation import Interval, StrOptions
from sblr.similarity import (
    SimilarityFeaturizer,
    featurizer_for,
)

#: The ``force_top1`` parameter's constraints: always, never, or by a fitted fill cut.
_FORCE_TOP1_CONSTRAINT = ["boolean", StrOptions({"auto"})]

#: The ``threshold`` parameter's constraints: a probability, one per class, or a rule.
_THRESHOLD_CONSTRAINT = [
    Interval(Real, 0, 1, closed="both"),
    "array-like",
    StrOptions(set(decision.RULES)),
]


def fits_from_evidence(estimator):
    """Whether ``estimator`` can be fitted from cached class evidence.

    True when ``estimator.fit(X, y)`` is exactly
    ``estimator.fit_from_evidence(f, f.training_evidence())`` with
    ``f = featurizer_for(estimator).fit(X, y)``: SBLRClassifier and
    SparseSBLRClassifier.  Callers that compute the evidence of a fold once
    and refit only the logistic layer (:func:`sblr.evaluation.evaluate`,
    :func:`~sblr.evaluation.score_fold`, :func:`sblr.tuning.tune`,
    :func:`~sblr.tuning.coefficient_path`) do so only for these; any other
    estimator is fitted on the raw training rows.  False for SML (no
    logistic layer), for estimators from elsewhere and for the CV estimators
    :class:`~sblr.SparseSBLRCV` and :class:`~sblr.SBLRCV`, which choose gamma
    on inner splits of the raw rows, so a fold must refit them with
    ``fit(X_train, y_train)`` (as ``cross_val_score`` does with
    ``LogisticRegressionCV``).

    Examples
    --------
    >>> from sblr import SBLRCV, SMLClassifier, SparseSBLRClassifier
    >>> [fits_from_evidence(e) for e in (SparseSBLRClassifier(), SMLClassifier(), SBLRCV())]
    [True, False, False]
    """
    return getattr(estimator, "_fits_from_evidence", False) is True


class _SimilarityClassifier(ClassifierMixin, BaseEstimator):
    """Shared plumbing: target handling, evidence, tags."""

    # the evidence parameters are the featurizer's, declared there
    _parameter_constraints = dict(SimilarityFeaturizer._parameter_constraints)

    def _fit_featurizer(self, X, y):
        """Validate the data and fit the featurizer (scaling, gamma, class indicator)."""
        X, y = validate_data(self, X, y, multi_output=True, dtype=np.float64, accept_sparse="csr")
        check_classification_targets(y)
        self.featurizer_ = featurizer_for(self).fit(X, y)
        self.approx_ = self.featurizer_.approx_
        self.multilabel_ = self.featurizer_.multilabel_
        self.classes_ = self.featurizer_.classes_
        self.gamma_ = self.featurizer_.gamma_

    def evidence(self, X):
        """Normalized class evidence ``f̄(x)`` of query rows (every training row counts).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Query rows, with the training data's features (scaled by the training
            data's ranges inside).

        Returns
        -------
        F : ndarray of shape (n_samples, n_classes)
        """
        X = self._validated(X)
        return self.featurizer_.transform(X)

    def _validated(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=np.float64, accept_sparse="csr")

    def _binary(self):
        return not self.multilabel_ and len(self.classes_) == 2

    def _fit_decision_from(self, P_held, Y):
        """Set ``threshold_`` and ``fill_cut_`` of multi-label data from probabilities of
        held-out rows (``P_held()``: out-of-fold or leave-one-out) and their labels ``Y``:
        None for multi-class data and an own rule; a rule's cuts and, with
        ``force_top1="auto"``, the fill cut of the rows they leave empty
        (:func:`sblr.decision.fit_fill_cut`); a number's cuts as given, no fill cut."""
        self.threshold_, self.fill_cut_ = None, None
        if not self.multilabel_ or self.threshold is None:
            return
        if not isinstance(self.threshold, str):
            self.threshold_ = decision.checked_threshold(self.threshold, Y.shape[1])
            return
        P = P_held()
        self.threshold_ = decision.fit_cuts(P, Y, self.threshold)
        if self.force_top1 == "auto":
            self.fill_cut_ = decision.fit_fill_cut(P, Y, self.threshold_)

    def _cuts(self):
        """``threshold_``; ``NotFittedError`` when the fit left the decision out
        (``fit_from_evidence(..., cuts=False)``)."""
        try:
            return self.__dict__["threshold_"]
        except KeyError:
            raise NotFittedError(
                f"{type(self).__name__} was fitted without its decision (cuts=False): "
                "fit_decision(F) fits it, or fit the model again."
            ) from None

    def _decide(self, P):
        """Multi-label decisions from probabilities: ``P >= threshold_`` (``force_top1``: a row
        given no label gets its most probable one)."""
        cuts = self._cuts()
        return decision.decide(P, cuts, self.force_top1 is True, vars(self).get("fill_cut_"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_label = True
        tags.target_tags.multi_output = True
        return tags


def _logit(p):
    """``log(p / (1 - p))`` of cuts, kept finite (a cut above every probability: 1 - 1e-12)."""
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-12, 1.0 - 1e-12)
    return np.log(p) - np.log1p(-p)
