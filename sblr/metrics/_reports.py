"""Metrics by name: which are there, which value is better, and what does a cut decide?

The metric names with their directions and labels (:data:`LOWER_IS_BETTER`,
:data:`METRIC_LABELS`...), the reports of every metric at once (:func:`multilabel_report`,
:func:`multiclass_report`), one metric by name for selection (:func:`score`,
:func:`is_better`, :func:`best_index`, :func:`is_multilabel`), and the per-label and
threshold views of probabilities (:func:`per_label_report`, :func:`threshold_report`,
:func:`decision_counts`, :func:`pr_curve`).  Public through :mod:`sblr.metrics`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, precision_recall_curve

from sblr._validation import Interval, StrOptions, validate_params
from sblr.exceptions import DataError
from sblr.metrics._multiclass import _LABELS, accuracy, multiclass_macro_f1
from sblr.metrics._multilabel import (
    _PREDICTIONS,
    _as_indicator,
    _as_scores,
    _pair,
    _same_shape,
    average_precision,
    coverage,
    hamming_loss,
    macro_f1,
    micro_f1,
    one_error,
    ranking_loss,
    subset_accuracy,
)

#: Metric name -> ``True`` if a smaller value is better.
LOWER_IS_BETTER: dict[str, bool] = {
    "hamming_loss": True,
    "ranking_loss": True,
    "one_error": True,
    "coverage": True,
    "average_precision": False,
    "subset_accuracy": False,
    "micro_f1": False,
    "macro_f1": False,
    "accuracy": False,
}

#: Metric name -> ``True`` if a larger value is better (negation of LOWER_IS_BETTER).
GREATER_IS_BETTER: dict[str, bool] = {name: not low for name, low in LOWER_IS_BETTER.items()}

#: The metrics of :func:`multilabel_report` and :func:`multiclass_report`, in report order.
MULTILABEL_METRICS = (
    "hamming_loss",
    "ranking_loss",
    "one_error",
    "coverage",
    "average_precision",
    "subset_accuracy",
    "micro_f1",
    "macro_f1",
)
MULTICLASS_METRICS = ("accuracy", "macro_f1")

#: The metrics computed from scores (``decision_function``), not from predicted labels.
SCORE_METRICS = frozenset({"ranking_loss", "one_error", "coverage", "average_precision"})

#: Metric name -> display name with an arrow giving the better direction.
METRIC_LABELS: dict[str, str] = {
    "hamming_loss": "Hamming loss ↓",
    "ranking_loss": "Ranking loss ↓",
    "one_error": "One-error ↓",
    "coverage": "Coverage ↓",
    "average_precision": "Average precision ↑",
    "subset_accuracy": "Subset accuracy ↑",
    "micro_f1": "Micro-F1 ↑",
    "macro_f1": "Macro-F1 ↑",
    "accuracy": "Accuracy ↑",
}


#: A decision cut: one probability, or one per class (or per row and class: each held-out row
#: decided by the cuts of the fold that held it out).
_THRESHOLD = [Interval(Real, 0, 1, closed="both"), "array-like"]


def _cuts(threshold, P):
    """``threshold`` broadcast against ``P`` (a number, one per class, or one per entry)."""
    cuts = np.asarray(threshold, dtype=np.float64)
    try:
        return np.broadcast_to(cuts, P.shape)
    except ValueError:
        raise DataError(
            f"threshold has shape {cuts.shape}: give one number, one per class ({P.shape[1]}) "
            f"or one per row and class {P.shape}."
        ) from None


_METRIC = [StrOptions(set(LOWER_IS_BETTER))]


# --------------------------------------------------------------------------- reports


@validate_params(
    {**_PREDICTIONS, "scores": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def multilabel_report(Y_true, Y_pred, scores) -> dict[str, float]:
    """All multi-label metrics in one dict (Python floats, fixed key order).

    Keys: ``hamming_loss, ranking_loss, one_error, coverage,
    average_precision, subset_accuracy, micro_f1, macro_f1``.  Ranking
    metrics use ``scores``; bipartition metrics use ``Y_pred``.  Conventions
    are those of the individual functions (defaults).

    Examples
    --------
    >>> r = multilabel_report([[1, 0], [0, 1]], [[1, 0], [1, 1]], [[0.8, 0.1], [0.6, 0.7]])
    >>> list(r) == ["hamming_loss", "ranking_loss", "one_error", "coverage",
    ...             "average_precision", "subset_accuracy", "micro_f1", "macro_f1"]
    True
    >>> r["hamming_loss"], r["ranking_loss"]
    (0.25, 0.0)
    """
    Yt, Yp = _pair(Y_true, Y_pred)
    S = _as_scores(scores)
    _same_shape(Yt, S, "Y_true", "scores")
    return {
        "hamming_loss": hamming_loss(Yt, Yp),
        "ranking_loss": ranking_loss(Yt, S),
        "one_error": one_error(Yt, S),
        "coverage": coverage(Yt, S),
        "average_precision": average_precision(Yt, S),
        "subset_accuracy": subset_accuracy(Yt, Yp),
        "micro_f1": micro_f1(Yt, Yp),
        "macro_f1": macro_f1(Yt, Yp),
    }


@validate_params(
    {**_LABELS, "labels": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def multiclass_report(y_true, y_pred, *, labels=None) -> dict[str, float]:
    """Multi-class metrics: ``{"accuracy": ..., "macro_f1": ...}``.

    ``labels`` is passed to :func:`multiclass_macro_f1`.

    Examples
    --------
    >>> multiclass_report([0, 1, 1], [0, 1, 0])
    {'accuracy': 0.6666666666666666, 'macro_f1': 0.6666666666666666}
    """
    return {
        "accuracy": accuracy(y_true, y_pred),
        "macro_f1": multiclass_macro_f1(y_true, y_pred, labels=labels),
    }


# --------------------------------------------------------------------------- one metric by name


@validate_params(
    {"y": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def is_multilabel(y) -> bool:
    """True for a 2-D label indicator with more than one column (the multi-label task).

    Examples
    --------
    >>> is_multilabel([[0, 1], [1, 1]]), is_multilabel([0, 1, 1])
    (True, False)
    """
    return np.ndim(y) == 2 and np.shape(y)[1] > 1


#: The function of each metric name (every key of LOWER_IS_BETTER), for :func:`score`.
_BY_NAME = {
    "hamming_loss": hamming_loss,
    "ranking_loss": ranking_loss,
    "one_error": one_error,
    "coverage": coverage,
    "average_precision": average_precision,
    "subset_accuracy": subset_accuracy,
    "micro_f1": micro_f1,
    "macro_f1": macro_f1,
    "accuracy": accuracy,
}


@validate_params(
    {
        "metric": _METRIC,
        "y_true": ["array-like"],
        "y_pred": ["array-like", None],
        "scores": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def score(metric, y_true, y_pred, scores=None) -> float:
    """The value of ``metric`` (a name of :data:`MULTILABEL_METRICS` or
    :data:`MULTICLASS_METRICS`) for the task of ``y_true``: the metrics of
    :data:`SCORE_METRICS` read ``scores``, the others ``y_pred``; ``"macro_f1"`` of
    multi-class labels is :func:`multiclass_macro_f1`.

    Examples
    --------
    >>> score("accuracy", [0, 1, 1], [0, 1, 0])
    0.6666666666666666
    >>> score("one_error", [[1, 0], [0, 1]], None, [[0.9, 0.1], [0.8, 0.2]])
    0.5
    """
    if metric in SCORE_METRICS:
        if scores is None:
            raise DataError(f"{metric} is computed from scores; none were given.")
        return float(_BY_NAME[metric](y_true, scores))
    if metric == "macro_f1" and not is_multilabel(y_true):
        return float(multiclass_macro_f1(y_true, y_pred))
    return float(_BY_NAME[metric](y_true, y_pred))


@validate_params(
    {"metric": _METRIC, "a": [Real], "b": [Real]},
    prefer_skip_nested_validation=True,
)
def is_better(metric, a, b) -> bool:
    """True when value ``a`` of ``metric`` beats ``b`` (NaN never beats a number; a number
    beats NaN).

    Examples
    --------
    >>> is_better("hamming_loss", 0.1, 0.2), is_better("accuracy", 0.1, 0.2)
    (True, False)
    """
    if np.isnan(b):
        return not np.isnan(a)
    return bool(a < b) if LOWER_IS_BETTER[metric] else bool(a > b)


@validate_params(
    {"metric": _METRIC, "values": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def best_index(metric, values) -> int:
    """Index of the best of ``values`` for ``metric``; the first one on ties.

    Examples
    --------
    >>> best_index("hamming_loss", [0.3, 0.1, 0.1]), best_index("accuracy", [float("nan"), 0.5])
    (1, 1)
    """
    best = 0
    for i, v in enumerate(values):
        if i and is_better(metric, v, values[best]):
            best = i
    return best


# --------------------------------------------------------------------------- per label, threshold


def _labels_from_proba(y_true, P):
    """(Y_true indicator, P) as float arrays of one shape; multi-class labels become one-hot
    over ``range(P.shape[1])`` (class codes)."""
    P = np.asarray(P, dtype=float)
    if P.ndim != 2:
        raise DataError(f"P must be (n_samples, n_classes); got shape {P.shape}.")
    Y = np.asarray(y_true)
    if Y.ndim == 1:
        codes = Y.astype(int)
        if codes.min(initial=0) < 0 or codes.max(initial=0) >= P.shape[1]:
            raise DataError("Multi-class y_true must hold class codes 0 .. n_classes - 1.")
        Y = np.eye(P.shape[1], dtype=float)[codes]
    Y = _as_indicator(Y, "y_true").astype(float)
    _same_shape(Y, P, "y_true", "P")
    return Y, P


@validate_params(
    {
        "y_true": ["array-like"],
        "P": ["array-like"],
        "threshold": _THRESHOLD,
        "class_names": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def per_label_report(y_true, P, *, threshold=0.5, class_names=None):
    """Precision, recall, F1 and support of every class, deciding from probabilities.

    Multi-label (``y_true`` a 0/1 matrix): class k is predicted for a row when
    ``P[i, k] >= threshold``.  Multi-class (``y_true`` 1-D class codes 0 .. m-1): the
    predicted class is the row's largest ``P`` (``threshold`` is not used).

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_classes) or (n_samples,)
    P : array-like of shape (n_samples, n_classes)
        Probabilities (``predict_proba``) of rows the model was not fitted on.
    threshold : float or array-like, default 0.5
        One cut, one per class, or one per row and class.
    class_names : sequence of str, optional

    Returns
    -------
    pandas.DataFrame
        One row per class: ``class``, ``precision`` (NaN when the class is never
        predicted), ``recall`` (NaN when it never occurs), ``f1`` (NaN when both are
        undefined; 0 when one is 0), ``support`` (true rows), ``predicted`` (predicted rows).

    Examples
    --------
    >>> per_label_report([[1, 0], [1, 1], [0, 1]], [[0.9, 0.2], [0.4, 0.7], [0.1, 0.6]])
      class  precision  recall   f1  support  predicted
    0     0        1.0     0.5  0.666667        2          1
    1     1        1.0     1.0  1.000000        2          2
    """
    multiclass = np.ndim(y_true) == 1
    Y, P = _labels_from_proba(y_true, P)
    if multiclass:
        pred = np.zeros_like(P)
        pred[np.arange(len(P)), P.argmax(axis=1)] = 1.0
    else:
        pred = (P >= _cuts(threshold, P)).astype(float)
    tp = (Y * pred).sum(axis=0)
    support, predicted = Y.sum(axis=0), pred.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(predicted > 0, tp / predicted, np.nan)
        recall = np.where(support > 0, tp / support, np.nan)
        f1 = np.where(support + predicted > 0, 2 * tp / (support + predicted), np.nan)
    names = [str(c) for c in (class_names if class_names is not None else range(P.shape[1]))]
    if len(names) != P.shape[1]:
        raise DataError(f"Got {len(names)} class names for {P.shape[1]} classes.")
    return pd.DataFrame(
        {
            "class": names,
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": support.astype(int),
            "predicted": predicted.astype(int),
        }
    )


@validate_params(
    {"Y_true": ["array-like"], "P": ["array-like"], "threshold": _THRESHOLD},
    prefer_skip_nested_validation=True,
)
def threshold_report(Y_true, P, threshold=0.5) -> dict[str, float]:
    """The label-decision metrics of multi-label data when class k is predicted at
    ``P[:, k] >= threshold``: Hamming loss, subset accuracy, micro- and macro-F1 (the ranking
    metrics do not depend on a threshold).

    Examples
    --------
    >>> threshold_report([[1, 0], [0, 1]], [[0.6, 0.4], [0.3, 0.45]], 0.4)["hamming_loss"]
    0.25
    """
    Y, P = _labels_from_proba(Y_true, P)
    pred = (P >= _cuts(threshold, P)).astype(int)
    Y = Y.astype(int)
    return {
        "hamming_loss": hamming_loss(Y, pred),
        "subset_accuracy": subset_accuracy(Y, pred),
        "micro_f1": micro_f1(Y, pred),
        "macro_f1": macro_f1(Y, pred),
    }


@validate_params(
    {"Y_true": ["array-like"], "P": ["array-like"], "threshold": _THRESHOLD},
    prefer_skip_nested_validation=True,
)
def decision_counts(Y_true, P, threshold=0.5) -> dict[str, int]:
    """What the label decisions at ``threshold`` leave out, for the user to be told:
    ``rows`` (all rows), ``empty_rows`` (rows given no label at all) and
    ``absent_labels`` (labels neither true nor predicted in any row: macro-F1 scores each
    of them 1, Mulan's convention, see :func:`macro_f1`).

    Examples
    --------
    >>> decision_counts([[1, 0, 0], [0, 1, 0]], [[0.6, 0.1, 0.2], [0.3, 0.45, 0.1]])
    {'rows': 2, 'empty_rows': 1, 'absent_labels': 1}
    """
    Y, P = _labels_from_proba(Y_true, P)
    pred = P >= _cuts(threshold, P)
    return {
        "rows": int(len(pred)),
        "empty_rows": int((~pred.any(axis=1)).sum()),
        "absent_labels": int((~pred.any(axis=0) & ~Y.astype(bool).any(axis=0)).sum()),
    }


@validate_params(
    {"Y_true": ["array-like"], "P": ["array-like"], "threshold": _THRESHOLD},
    prefer_skip_nested_validation=True,
)
def macro_f1_seen(Y_true, P, threshold=0.5) -> tuple[float, int]:
    """Macro-F1 over the labels that are true or predicted in some row, and their number:
    the labels :func:`macro_f1` scores 1 by Mulan's convention (neither true nor predicted
    anywhere, :func:`decision_counts`' ``absent_labels``) left out of the mean.  On a small
    hold-out that misses half of the labels, Mulan's macro-F1 is mostly those 1s (it read
    0.736 above a micro-F1 of 0.715); this one says how the labels that were there went.
    ``(nan, 0)`` when no label is true or predicted.

    Examples
    --------
    >>> Yt = [[1, 0, 0], [1, 0, 0]]
    >>> P = [[0.9, 0.8, 0.1], [0.2, 0.1, 0.1]]
    >>> macro_f1_seen(Yt, P)  # labels 0 (F1 = 2/3) and 1 (0); label 2 left out
    (0.3333333333333333, 2)
    """
    Y, P = _labels_from_proba(Y_true, P)
    pred = P >= _cuts(threshold, P)
    truth = Y.astype(bool)
    tp = (truth & pred).sum(axis=0)
    denom = truth.sum(axis=0) + pred.sum(axis=0)  # 2 tp + fp + fn
    seen = denom > 0
    if not seen.any():
        return float("nan"), 0
    return float(np.mean(2 * tp[seen] / denom[seen])), int(seen.sum())


@validate_params(
    {"y_true": ["array-like"], "p": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def pr_curve(y_true, p):
    """Precision-recall curve of one class from its probabilities (scikit-learn's
    ``precision_recall_curve``) and its average precision.

    Returns
    -------
    precision, recall, thresholds : ndarray
        As :func:`sklearn.metrics.precision_recall_curve` (``thresholds`` one shorter).
    average_precision : float
        :func:`sklearn.metrics.average_precision_score` (NaN without a positive row).
    """
    y = np.asarray(y_true).astype(int).ravel()
    p = np.asarray(p, dtype=float).ravel()
    if y.shape != p.shape:
        raise DataError(f"y_true and p differ in length: {y.size} and {p.size}.")
    if not y.any():
        return np.array([1.0]), np.array([0.0]), np.array([]), float("nan")
    precision, recall, thresholds = precision_recall_curve(y, p)
    return precision, recall, thresholds, float(average_precision_score(y, p))
