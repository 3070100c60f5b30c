"""What the baselines share: validated targets, the class indicator and [-1, 1] scaling.

:class:`_ScaledClassifier` scales ``X`` on the training range inside the estimator, as the
paper does for every method, and declares the multi-label tags.  Internal to
:mod:`sblr.baselines`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from sblr.similarity import label_indicator, minmax_fit, minmax_transform


def ovr_target(Y):
    """The label matrix as ``OneVsRestClassifier`` must get it: of the platform's integer.

    scikit-learn (1.9) binarizes an int8 indicator of more than 128 labels with its columns in
    another order, so every label's model learns another label's rows (corel5k's 374 labels:
    AP 0.03 where the same regressions fitted label by label reach 0.27). The indicators here
    are int8 (:func:`sblr.similarity.label_indicator`): upcast before they reach it.
    """
    return np.asarray(Y, dtype=np.intp)


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
