"""Rows: the share a model predicts, its decision line in the evidence space of two classes,
which rows to pick (right, wrong, a class), and one row's contributions to each logit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from sblr import _validation
from sblr._validation import validate_params
from sblr.decision import Decision
from sblr.exceptions import DataError
from sblr.interpret._shared import (
    MODEL_PARAM,
    checked_index,
    class_name_list,
    coef_of,
    dense_array,
    index_param,
)
from sblr.interpret.coefficients import standardized_coef

__all__ = [
    "InstanceContributions",
    "all_alike_reason",
    "decision_line",
    "instance_contributions",
    "predicted_share",
    "select_rows",
]


@validate_params(
    lambda: {
        "model": [_validation.HasMethods(["predict_from_evidence"])],
        "F": ["array-like"],
        "k": index_param(),
    },
    prefer_skip_nested_validation=True,
)
def predicted_share(model, F, k) -> float:
    """Share of the rows of evidence ``F`` that ``model`` gives class ``k`` (its own decisions,
    :meth:`predict_from_evidence`): 0 when it never predicts k, 1 when always.

    Examples
    --------
    >>> from sblr import SBLRClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = (X[:, 0] > 0).astype(int)
    >>> model = SBLRClassifier(gamma=1.0).fit(X, y)
    >>> 0.3 < predicted_share(model, model.featurizer_.training_evidence(), 1) < 0.7
    True
    """
    pred = np.asarray(model.predict_from_evidence(F))
    k = int(k)
    hit = pred[:, k] == 1 if pred.ndim == 2 else pred == model.classes_[k]
    return float(hit.mean()) if hit.size else 0.0


@validate_params(
    lambda: {
        "model_or_coef": MODEL_PARAM,
        "intercept": ["array-like", None],
        "k": index_param(),
        "t1": index_param(),
        "t2": index_param(),
        "F": ["array-like"],
        "f1_range": ["array-like", None],
        "n": [_validation.Interval(Integral, 2, None, closed="left")],
        "cut": [_validation.Interval(Real, 0, 1, closed="neither"), None],
    },
    prefer_skip_nested_validation=True,
)
def decision_line(model_or_coef, intercept=None, *, k, t1, t2, F, f1_range=None, n=50, cut=None):
    """Where a logistic model decides class k (π_k = its cut) in the plane of two evidences
    (f̄_t1, f̄_t2), the other evidences held at their mean over ``F``.

    ``logit_k = β₀ᵏ + β_t1 f̄_t1 + β_t2 f̄_t2 + Σ_{t ≠ t1, t2} βₜᵏ mean(f̄ₜ) = logit(cut)``,
    solved for f̄_t2 along a grid of f̄_t1 (for ``t1 == t2``: the value of f̄_t1 where it
    crosses).  ``cut``: default the model's ``threshold_[k]`` (multi-label) or 0.5.

    Parameters
    ----------
    model_or_coef : fitted model (``coef_``, ``intercept_``) or ndarray of shape (m, m)
    intercept : ndarray of shape (m,), optional
        With a coefficient matrix.
    k, t1, t2 : int
        Target class and the two evidence axes.
    F : array-like of shape (n_rows, m)
        Evidence whose column means fix the other classes.
    f1_range : (float, float), optional
        Default: the range of ``F[:, t1]``.
    n : int
        Points of the line.

    Returns
    -------
    (f1, f2) : ndarrays, or None
        The line (``f2`` may leave the plotted range); None when k's logit does not depend
        on f̄_t2 (β_t2 = 0) and not on f̄_t1 either, so π_k is the same everywhere in the
        plane.  With β_t2 = 0 but β_t1 ≠ 0 the line is vertical: ``f1`` constant,
        ``f2`` spanning ``F[:, t2]``'s range.

    Examples
    --------
    >>> coef = np.array([[2.0, -1.0], [0.0, 1.0]]); b = np.array([-0.5, 0.0])
    >>> f1, f2 = decision_line(coef, b, k=0, t1=0, t2=1, F=[[0, 0], [1, 1]], n=3)
    >>> f1.tolist(), f2.tolist()      # 2 f1 - f2 - 0.5 = 0
    ([0.0, 0.5, 1.0], [-0.5, 0.5, 1.5])
    """
    coef = coef_of(model_or_coef)
    b = np.asarray(getattr(model_or_coef, "intercept_", intercept), dtype=float)
    m = coef.shape[0]
    k, t1, t2 = (checked_index(v, m, name) for v, name in ((k, "k"), (t1, "t1"), (t2, "t2")))
    F = np.asarray(dense_array(F), dtype=float)
    mean = F.mean(axis=0)
    beta = coef[k]
    if cut is None:
        chosen = Decision.of(model_or_coef) if hasattr(model_or_coef, "coef_") else None
        cut = 0.5 if chosen is None else float(np.clip(chosen.cut(k), 1e-12, 1 - 1e-12))
    at = np.log(cut) - np.log1p(-cut)  # the logit the decision switches at
    rest = b[k] - at + sum(beta[t] * mean[t] for t in range(m) if t not in (t1, t2))
    lo, hi = f1_range if f1_range is not None else (F[:, t1].min(), F[:, t1].max())
    b1, b2 = beta[t1], (beta[t2] if t2 != t1 else 0.0)
    if b2 != 0:
        f1 = np.linspace(lo, hi, n)
        return f1, -(rest + b1 * f1) / b2
    if b1 != 0:
        x = -rest / b1
        return np.full(n, x), np.linspace(F[:, t2].min(), F[:, t2].max(), n)
    return None


@validate_params(
    lambda: {
        "model": [_validation.HasMethods(["proba_from_evidence"])],
        "F": ["array-like"],
        "k": index_param(),
        "every": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def all_alike_reason(model, F, k, every: bool) -> str:
    """Why ``model`` decides every row of evidence ``F`` alike for class ``k`` (``every``:
    gives it to every row; else to none): its probabilities all on one side of its cut, or,
    under an argmax rule, the class always (never) the most probable.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> model = SimpleNamespace(
    ...     proba_from_evidence=lambda F: np.asarray(F, float), classes_=np.arange(2),
    ...     multilabel_=True, threshold=None, threshold_=np.array([0.5, 0.25]))
    >>> all_alike_reason(model, [[0.1, 0.3], [0.2, 0.9]], 1, True)
    'every π from 0.3 to 0.9 is at or above its cut 0.25'
    """
    proba = np.asarray(model.proba_from_evidence(F))
    proba_k = proba[:, k] if proba.ndim == 2 and proba.shape[1] > k else None
    chosen = Decision.of(model)
    if proba_k is None or chosen.kind == "argmax":
        return "the class is its argmax for every row" if every else "never its argmax"
    lo, hi, at = float(proba_k.min()), float(proba_k.max()), chosen.cut(k)
    side = "at or above" if every else "below"
    return f"every π from {lo:.3g} to {hi:.3g} is {side} its cut {at:.3g}"


@validate_params(
    lambda: {
        "y_true": ["array-like"],
        "y_pred": ["array-like"],
        "which": [
            _validation.StrOptions(
                {"all", "misclassified", "false_negative", "false_positive", "true", "predicted"}
            )
        ],
        "k": "no_validation",  # a column index (multi-label) or any class label (multi-class)
    },
    prefer_skip_nested_validation=True,
)
def select_rows(y_true, y_pred, *, which="all", k=None) -> np.ndarray:
    """Row indices for a row picker: all rows, the misclassified ones, or those of a class.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n, m) 0/1, or (n,) class labels
    which : {"all", "misclassified", "false_negative", "false_positive", "true", "predicted"}
        ``"misclassified"``: the predicted label set (or class) differs from the true one
        in any label; ``"false_negative"`` / ``"false_positive"``: wrong for class ``k``
        (it carries ``k`` and was not given it / was given ``k`` and does not carry it);
        ``"true"`` / ``"predicted"``: rows whose true / predicted classes include ``k``.
    k : int or class label, optional
        For every choice but ``"all"`` and ``"misclassified"``: a column index
        (multi-label) or a class label (multi-class).

    Returns
    -------
    ndarray of int, ascending

    Examples
    --------
    >>> select_rows([[1, 0], [0, 1], [1, 1]], [[1, 0], [1, 1], [1, 1]], which="misclassified")
    array([1])
    >>> select_rows([[1, 0], [0, 1], [1, 1]], [[0, 0], [1, 1], [1, 1]], which="false_positive", k=0)
    array([1])
    >>> select_rows(["a", "b", "a"], ["a", "a", "b"], which="predicted", k="a")
    array([0, 1])
    """
    t = np.asarray(dense_array(y_true))
    p = np.asarray(dense_array(y_pred))
    if t.shape != p.shape:
        raise DataError(f"y_true and y_pred differ in shape: {t.shape} and {p.shape}.")
    if which == "all":
        return np.arange(len(t))
    if which == "misclassified":
        wrong = (t != p).any(axis=1) if t.ndim == 2 else t != p
        return np.flatnonzero(wrong)

    def has_k(labels):
        return labels[:, int(k)] == 1 if labels.ndim == 2 else labels == k

    if which == "false_negative":
        return np.flatnonzero(has_k(t) & ~has_k(p))
    if which == "false_positive":
        return np.flatnonzero(has_k(p) & ~has_k(t))
    return np.flatnonzero(has_k(t if which == "true" else p))


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float, copy=True)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class InstanceContributions:
    """Decomposition of one query row's logits into per-class contributions.

    Attributes
    ----------
    evidence : ndarray of shape (m,)
        Normalised class evidence f̄_t(x).
    contributions : ndarray of shape (m, m)
        ``contributions[k, t]`` = beta_t^k * f̄_t(x).
    intercept : ndarray of shape (m,)
    logits : ndarray of shape (m,)
        ``contributions.sum(axis=1) + intercept``.
    proba : ndarray of shape (m,)
        ``1 / (1 + exp(-logits))``.
    coef : ndarray of shape (m, m)
        The model's beta matrix (for the ``beta`` column of :meth:`waterfall`).
    classes : ndarray of shape (m,) or None
        The model's ``classes_`` (default names in :meth:`waterfall`).

    All arrays are read-only copies.
    """

    evidence: np.ndarray
    contributions: np.ndarray
    intercept: np.ndarray
    logits: np.ndarray
    proba: np.ndarray
    coef: np.ndarray
    classes: Any = None

    def waterfall(
        self, k, class_names: Sequence[str] | None = None, *, evidence_sd=None
    ) -> pd.DataFrame:
        """Additive build-up of class ``k``'s logit, for a waterfall chart.

        Parameters
        ----------
        k : int
            Target class index.
        class_names : sequence of str, optional
            Display names; default ``str`` of ``classes`` (or ``"0" ..``).
        evidence_sd : array-like of shape (m,), optional
            :func:`evidence_sd` of the evidence the model was fitted on; adds
            the column ``beta_std`` (β̃ = beta_t^k · sd(f̄_t), NaN for the
            intercept) after ``beta``.

        Returns
        -------
        pandas.DataFrame
            First row ``intercept``, then one row per class ``t`` sorted by
            ``|contribution|`` descending (ties: class index).  Columns
            ``term`` (``"intercept"`` or class name), ``t`` (class index;
            ``<NA>`` for the intercept, nullable ``Int64``), ``evidence``
            (f̄_t; NaN for the intercept), ``beta`` (beta_t^k; NaN for the
            intercept), ``contribution`` and ``cumulative`` (running total;
            the last value equals ``logits[k]`` up to rounding).

        Examples
        --------
        >>> import numpy as np
        >>> from types import SimpleNamespace
        >>> model = SimpleNamespace(
        ...     coef_=np.array([[2.0, -3.0], [0.0, 1.0]]), intercept_=np.array([0.5, 0.0]),
        ...     featurizer_=SimpleNamespace(transform=lambda X: np.asarray(X, float)))
        >>> instance_contributions(model, [0.5, 0.5]).waterfall(0, ["a", "b"])
                term     t  evidence  beta  contribution  cumulative
        0  intercept  <NA>       NaN   NaN           0.5         0.5
        1          b     1       0.5  -3.0          -1.5        -1.0
        2          a     0       0.5   2.0           1.0         0.0
        """
        m = self.logits.shape[0]
        k = checked_index(k, m)
        names = class_name_list(class_names, m, fallback=self.classes)
        contrib = self.contributions[k]
        order = np.argsort(-np.abs(contrib), kind="stable")
        values = np.concatenate([[self.intercept[k]], contrib[order]])
        columns = {
            "term": ["intercept"] + [names[t] for t in order],
            "t": pd.array([None] + order.tolist(), dtype="Int64"),
            "evidence": np.concatenate([[np.nan], self.evidence[order]]),
            "beta": np.concatenate([[np.nan], self.coef[k, order]]),
        }
        if evidence_sd is not None:
            beta_std = standardized_coef(self.coef[k], sd=evidence_sd)
            columns["beta_std"] = np.concatenate([[np.nan], beta_std[order]])
        columns["contribution"] = values
        columns["cumulative"] = np.cumsum(values)
        return pd.DataFrame(columns)


@validate_params(
    lambda: {"model": MODEL_PARAM, "x": ["array-like", None], "evidence": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def instance_contributions(model, x=None, *, evidence=None) -> InstanceContributions:
    """Split each class's logit for one query row into per-class evidence terms.

    Give the row ``x`` (its evidence is computed as for any query: every
    training row counts), or its precomputed normalized ``evidence`` f̄(x) —
    e.g. a training row's leave-one-out evidence, the evidence the model was
    fitted on, to explain a training row without its own similarity.

    Parameters
    ----------
    model : fitted SBLR-like model
        Needs ``coef_`` (m, m), ``intercept_`` (m,), ``featurizer_`` with
        ``transform``; ``classes_`` is optional (used for names).
    x : array-like of shape (d,) or (1, d), or a one-row DataFrame
        The query row, in whatever form ``model.featurizer_.transform``
        accepts (it is passed as a single-row 2-D input; dtype untouched).
    evidence : array-like of shape (m,), optional
        The row's normalized evidence, instead of ``x``.

    Returns
    -------
    InstanceContributions
        ``contributions[k, t] = coef_[k, t] * evidence[t]``,
        ``logits = contributions.sum(1) + intercept``, ``proba =
        sigmoid(logits)`` (computed with :func:`scipy.special.expit`).

    Raises
    ------
    DataError
        If ``x`` is not a single row, or the featurizer output / coefficient
        shapes disagree.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> model = SimpleNamespace(
    ...     coef_=np.array([[2.0, -3.0], [0.0, 1.0]]), intercept_=np.array([0.5, 0.0]),
    ...     featurizer_=SimpleNamespace(transform=lambda X: np.asarray(X, float)))
    >>> ic = instance_contributions(model, [0.5, 0.5])
    >>> ic.contributions
    array([[ 1. , -1.5],
           [ 0. ,  0.5]])
    >>> ic.logits, ic.proba.round(3)
    (array([0. , 0.5]), array([0.5  , 0.622]))
    """
    if (x is None) == (evidence is None):
        raise DataError("Give either the row x or its evidence, not both.")
    if evidence is not None:
        X = None
    elif isinstance(x, pd.DataFrame):
        if len(x) != 1:
            raise DataError(f"x must be a single row; got a DataFrame with {len(x)} rows.")
        X = x
    elif isinstance(x, pd.Series):
        X = x.to_frame().T
    else:
        arr = dense_array(x)
        if arr.ndim == 1:
            X = arr.reshape(1, -1)
        elif arr.ndim == 2 and arr.shape[0] == 1:
            X = arr
        else:
            raise DataError(f"x must be one row, shape (d,) or (1, d); got shape {arr.shape}.")

    coef = coef_of(model)
    m = coef.shape[0]
    intercept = dense_array(model.intercept_).astype(float).reshape(-1)
    if intercept.shape != (m,):
        raise DataError(f"intercept_ has shape {intercept.shape}, expected ({m},).")
    if X is not None:
        evidence = model.featurizer_.transform(X)
    evidence = dense_array(evidence).astype(float)
    if evidence.shape not in ((1, m), (m,)):
        raise DataError(
            f"featurizer_.transform returned shape {evidence.shape} for one row; expected (1, {m})."
        )
    evidence = evidence.reshape(m)
    contributions = coef * evidence[np.newaxis, :]
    logits = contributions.sum(axis=1) + intercept
    classes = getattr(model, "classes_", None)
    return InstanceContributions(
        evidence=_readonly(evidence),
        contributions=_readonly(contributions),
        intercept=_readonly(intercept),
        logits=_readonly(logits),
        proba=_readonly(expit(logits)),
        coef=_readonly(coef),
        classes=None if classes is None else np.asarray(classes).copy(),
    )
