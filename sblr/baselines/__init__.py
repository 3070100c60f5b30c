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

:data:`sblr.registry.REGISTRY` names each, with its factory and traits.

Neighbours are Euclidean on the scaled features (``NearestNeighbors``).  For
the training rows they are found leave-one-out: a row's own index is removed
from its ``k + 1`` nearest rows (if exact duplicates crowd it out of that list,
the last listed row is removed instead), so duplicates of a row still count as
its neighbours.  When ``k`` exceeds ``n_samples - 1`` the models use
``n_neighbors_ = n_samples - 1`` neighbours.

The rooms, by question (every public name is imported from here): ``_neighbours`` what a
row's nearest training rows say (ML-kNN, IBLR-ML), ``_svm`` BR-SVM and its grid, ``_simple``
the yardsticks (frequencies, kNN, NCM, logistic regression), ``_base`` the scaling they share.
"""

from sblr.baselines._neighbours import (
    IBLRClassifier,
    MLkNNClassifier,
    leave_one_out_neighbors,  # noqa: F401 (public, not in __all__)
)
from sblr.baselines._simple import (
    TUNED_LR,
    TUNED_LR_SECONDS,
    FrequencyClassifier,
    OneVsRestLRClassifier,
    knn_classifier,
    lr_classifier,
    ncm_classifier,
    tuned_lr_classifier,
    tuned_lr_seconds_estimate,
)
from sblr.baselines._svm import (
    BRSVM_SECONDS,
    BRSVMClassifier,
    brsvm_grid,
    brsvm_seconds_estimate,
)

__all__ = [
    "BRSVM_SECONDS",
    "TUNED_LR",
    "TUNED_LR_SECONDS",
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
    "tuned_lr_classifier",
    "tuned_lr_seconds_estimate",
]
