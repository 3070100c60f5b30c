"""Evaluation metrics with the conventions of the multi-label literature.

The example-based and ranking-based measures follow the definitions of the
review by Zhang & Zhou (2014, *A review on multi-label learning algorithms*,
IEEE TKDE 26(8)) and, where the literature is ambiguous, the Mulan library
(Tsoumakas et al.).  Every convention that changes a number is stated in the
docstring of the function it affects; the short version is:

* **Ranking loss, one-error, average precision** are averaged over the rows
  whose true label set is neither empty nor full (all ``m`` labels); the
  other rows carry no ranking information and are *skipped* (they count
  neither in the numerator nor in the denominator).  If every row is
  skipped the result is ``nan`` (no warning).
* **Coverage** is averaged over *all* rows and is one less than
  scikit-learn's :func:`~sklearn.metrics.coverage_error` (Mulan's
  convention: a perfect ranking of a single relevant label has coverage 0).
  A row with an empty true set contributes 0.
* **Ties in scores** are resolved pessimistically, as scikit-learn does:
  a relevant and an irrelevant label with equal scores form a mis-ordered
  pair, and a label's rank counts every label scored at least as high.
  One-error alone breaks ties by the lowest label index (``argmax``).
* **F1**: a label that is neither present nor predicted (``tp + fp + fn ==
  0``) has F1 = 1 (Mulan's ``InformationRetrievalMeasures.fMeasure``), i.e.
  scikit-learn's ``zero_division=1.0``.

:data:`LOWER_IS_BETTER`, :data:`GREATER_IS_BETTER` and :data:`METRIC_LABELS`
describe every metric name returned by :func:`multilabel_report` and
:func:`multiclass_report`.

The rooms, by question (every name is imported from here): ``_multilabel`` how good a
label set and a label ranking are, ``_multiclass`` how good class labels are, ``_reports``
the metrics by name (directions, reports, selection) and what a cut on probabilities decides.

Examples
--------
>>> import numpy as np
>>> Y = np.array([[1, 0, 1], [0, 1, 0]])
>>> S = np.array([[0.9, 0.2, 0.4], [0.3, 0.8, 0.1]])
>>> ranking_loss(Y, S), one_error(Y, S), coverage(Y, S), average_precision(Y, S)
(0.0, 0.0, 0.5, 1.0)
>>> report = multilabel_report(Y, (S >= 0.5).astype(int), S)
>>> report["hamming_loss"], report["subset_accuracy"]
(0.16666666666666666, 0.5)
"""

from sblr.metrics._multiclass import accuracy, multiclass_macro_f1
from sblr.metrics._multilabel import (
    MULAN_ZERO_DIVISION,  # noqa: F401 (public, not in __all__)
    average_precision,
    coverage,
    coverage_floor,
    hamming_loss,
    macro_f1,
    micro_f1,
    one_error,
    ranking_loss,
    subset_accuracy,
)
from sblr.metrics._reports import (
    GREATER_IS_BETTER,
    LOWER_IS_BETTER,
    METRIC_LABELS,
    MULTICLASS_METRICS,
    MULTILABEL_METRICS,
    SCORE_METRICS,
    best_index,
    decision_counts,  # noqa: F401 (public, not in __all__)
    is_better,
    is_multilabel,
    macro_f1_seen,  # noqa: F401 (public, not in __all__)
    multiclass_report,
    multilabel_report,
    per_label_report,
    pr_curve,
    score,
    threshold_report,
)

__all__ = [
    "GREATER_IS_BETTER",
    "LOWER_IS_BETTER",
    "METRIC_LABELS",
    "MULTICLASS_METRICS",
    "MULTILABEL_METRICS",
    "SCORE_METRICS",
    "accuracy",
    "average_precision",
    "best_index",
    "coverage",
    "coverage_floor",
    "hamming_loss",
    "is_better",
    "is_multilabel",
    "macro_f1",
    "micro_f1",
    "multiclass_macro_f1",
    "multiclass_report",
    "multilabel_report",
    "one_error",
    "per_label_report",
    "pr_curve",
    "ranking_loss",
    "score",
    "threshold_report",
    "subset_accuracy",
]
