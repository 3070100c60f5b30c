"""Multi-class metrics: how good are predicted class labels?

:func:`accuracy` and :func:`multiclass_macro_f1` (scikit-learn's, with Mulan's F1 of a
class neither present nor predicted), on checked 1-D label vectors.  Public through
:mod:`sblr.metrics`.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score as _sk_accuracy
from sklearn.metrics import f1_score as _sk_f1

from sblr._validation import validate_params
from sblr.exceptions import DataError
from sblr.metrics._multilabel import _ZERO_DIVISION, MULAN_ZERO_DIVISION

_LABELS = {"y_true": ["array-like"], "y_pred": ["array-like"]}


def _as_labels(a, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise DataError(
            f"{name} must be a 1-D vector of class labels, got shape {arr.shape}. "
            "For multi-label indicator matrices use the multi-label metrics."
        )
    if arr.shape[0] == 0:
        raise DataError(f"{name} is empty; need at least one sample.")
    return arr


def _label_pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    yt = _as_labels(y_true, "y_true")
    yp = _as_labels(y_pred, "y_pred")
    if yt.shape != yp.shape:
        raise DataError(
            f"y_true has {yt.shape[0]} samples but y_pred has {yp.shape[0]}; they must match."
        )
    return yt, yp


# --------------------------------------------------------------------------- multi-class


@validate_params(
    _LABELS,
    prefer_skip_nested_validation=True,
)
def accuracy(y_true, y_pred) -> float:
    """Fraction of samples whose predicted class equals the true class.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Class labels.

    Returns
    -------
    float

    Examples
    --------
    >>> accuracy(["a", "b", "c", "a"], ["a", "b", "a", "a"])
    0.75
    """
    yt, yp = _label_pair(y_true, y_pred)
    return float(_sk_accuracy(yt, yp))


@validate_params(
    {**_LABELS, "labels": ["array-like", None], "zero_division": _ZERO_DIVISION},
    prefer_skip_nested_validation=True,
)
def multiclass_macro_f1(
    y_true, y_pred, *, labels=None, zero_division: float = MULAN_ZERO_DIVISION
) -> float:
    """Macro-averaged F1 over classes of a single-label multi-class problem.

    One-vs-rest F1 per class, unweighted mean over classes.  By default the
    classes are those occurring in ``y_true`` or ``y_pred`` (scikit-learn's
    rule); every such class has ``tp + fp + fn > 0``, so ``zero_division``
    only matters when ``labels`` lists a class absent from both, which then
    scores ``zero_division`` (default 1.0, as in :func:`macro_f1`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Class labels.
    labels : array-like, optional
        Classes to average over (e.g. ``model.classes_``).
    zero_division : float, default 1.0
        F1 of a listed class that is neither present nor predicted.

    Returns
    -------
    float

    Examples
    --------
    >>> multiclass_macro_f1([0, 0, 1, 2], [0, 1, 1, 2])  # F1 = 2/3, 2/3, 1
    0.7777777777777777
    """
    yt, yp = _label_pair(y_true, y_pred)
    return float(_sk_f1(yt, yp, labels=labels, average="macro", zero_division=zero_division))
