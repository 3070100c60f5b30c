"""Interpreting fitted SBLR / SparseSBLR models: pure functions for the dashboard.

A fitted model exposes ``coef_`` (m, m) with ``coef_[k, t]`` = beta_t^k, the
weight of class ``t``'s normalised evidence in class ``k``'s logit,
``intercept_`` (m,), ``classes_`` (m,) and ``featurizer_.transform(X)`` giving
the normalised class evidence f̄ (n, m).  The logits are
``Z = f̄ @ coef_.T + intercept_`` and the probabilities ``sigmoid(Z)``.

Nothing here imports :mod:`sblr.models`; any object with those attributes
works, which is how the examples below build a stand-in model.

Examples
--------
>>> import numpy as np
>>> from types import SimpleNamespace
>>> Y = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1]])
>>> cooccurrence(Y)
array([[2, 1, 0],
       [1, 2, 1],
       [0, 1, 1]])
>>> featurizer = SimpleNamespace(transform=lambda X: np.asarray(X, dtype=float))
>>> model = SimpleNamespace(
...     coef_=np.array([[2.0, 0.5, 0.0], [0.5, 2.0, 1.0], [0.0, -1.0, 3.0]]),
...     intercept_=np.array([-1.0, -1.0, -2.0]),
...     classes_=np.arange(3),
...     featurizer_=featurizer,
... )
>>> contribution_table(model, Y, 1, class_names=["wren", "jay", "owl"])
  class  cooccurrence  beta
t
1   jay             2   2.0
0  wren             1   0.5
2   owl             1   1.0
>>> ic = instance_contributions(model, [1.0, 0.5, 0.0])
>>> ic.logits
array([ 1.25,  0.5 , -2.5 ])

Scale-free coefficients: beta times the spread of the evidence it multiplies.

>>> F = np.array([[0.1, 0.0, 0.3], [0.3, 1.0, 0.5]])   # two training rows; sd = 0.1, 0.5, 0.1
>>> standardized_coef(model, F)
array([[ 0.2 ,  0.25,  0.  ],
       [ 0.05,  1.  ,  0.1 ],
       [ 0.  , -0.5 ,  0.3 ]])
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from sblr import _validation
from sblr._validation import validate_params
from sblr.exceptions import DataError

# Parameter constraints (sblr._validation), given as functions: the dashboard imports this
# module at start-up, before scikit-learn, which builds them at the first call.  A model
# argument is duck-typed (a fitted sblr model, or anything with its attributes, e.g. a
# SimpleNamespace): "no_validation", its attributes are checked where they are read.
# Indices get their upper bound (the number of classes) from the data, in _check_index.
_MODEL = "no_validation"
_NAMES = ["array-like", None]


def _index():
    return [_validation.Interval(Integral, 0, None, closed="left")]


def _count():
    return [_validation.Interval(Integral, 1, None, closed="left")]


def _between(left, right, closed):
    return [_validation.Interval(Real, left, right, closed=closed)]


__all__ = [
    "ClaimCheck",
    "InstanceContributions",
    "check_claim",
    "class_affinity",
    "conditional_frequency",
    "contribution_table",
    "cooccurrence",
    "decision_line",
    "entry_lambdas",
    "rank_agreement_path",
    "spearman",
    "zero_readings",
    "evidence_sd",
    "instance_contributions",
    "family_threshold",
    "predicted_share",
    "readings_at",
    "select_rows",
    "sparsity_summary",
    "standardized_coef",
    "frequent_classes",
    "starting_class",
    "top_classes",
]


# --------------------------------------------------------------------------- helpers


def _dense(a) -> np.ndarray:
    if hasattr(a, "toarray"):  # scipy sparse
        a = a.toarray()
    return np.asarray(a)


def _check_index(k, m: int, what: str = "k") -> int:
    if isinstance(k, bool | np.bool_) or not isinstance(k, int | np.integer):
        raise DataError(f"{what} must be an integer class index in [0, {m - 1}], got {k!r}.")
    k = int(k)
    if not 0 <= k < m:
        raise DataError(
            f"{what}={k} is out of range: there are {m} classes, so it must be in [0, {m - 1}]."
        )
    return k


def _names(class_names, m: int, fallback=None) -> list[str]:
    source = class_names if class_names is not None else fallback
    if source is None:
        return [str(t) for t in range(m)]
    names = [str(c) for c in source]
    if len(names) != m:
        raise DataError(f"Got {len(names)} class names for {m} classes; they must match.")
    return names


def _coef(model_or_coef, what: str = "model") -> np.ndarray:
    coef = getattr(model_or_coef, "coef_", model_or_coef)
    coef = _dense(coef).astype(float)
    if coef.ndim != 2 or coef.shape[0] != coef.shape[1] or coef.shape[0] == 0:
        raise DataError(
            f"{what} coefficients must be a non-empty square (m, m) matrix, got shape {coef.shape}."
        )
    return coef


# --------------------------------------------------------------------------- standardized beta


@validate_params(
    lambda: {"F": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def evidence_sd(F) -> np.ndarray:
    """Population standard deviation (``ddof=0``) of each class's evidence column.

    Parameters
    ----------
    F : array-like of shape (n, m)
        The evidence f̄ the model was fitted on: the leave-one-out training
        evidence (``featurizer.training_evidence()``), one column per class.

    Returns
    -------
    ndarray of shape (m,)
        ``sqrt(mean((F[:, t] - mean(F[:, t]))**2))``.  A constant column gets
        exactly 0 (not the rounding noise ``np.std`` can leave).

    Raises
    ------
    DataError
        ``F`` is not 2-D, has no rows, or holds NaN or inf.

    Examples
    --------
    >>> evidence_sd([[0.1, 0.2], [0.3, 0.2], [0.5, 0.2]]).round(4)
    array([0.1633, 0.    ])
    """
    F = _dense(F)
    try:
        F = F.astype(float)
    except (TypeError, ValueError):
        raise DataError("The evidence F must be numeric.") from None
    if F.ndim != 2 or F.shape[0] == 0:
        raise DataError(f"The evidence F must be an (n, m) matrix with n >= 1, got {F.shape}.")
    if not np.isfinite(F).all():
        raise DataError("The evidence F holds NaN or inf.")
    sd = F.std(axis=0)
    sd[np.ptp(F, axis=0) == 0] = 0.0
    return sd


@validate_params(
    lambda: {"model_or_coef": _MODEL, "F": ["array-like", None], "sd": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def standardized_coef(model_or_coef, F=None, *, sd=None) -> np.ndarray:
    """Scale-free coefficients: beta_t^k times the standard deviation of f̄_t.

    ``β̃[k, t] = β[k, t] · sd(f̄_t)`` is the change of class k's logit when
    class t's evidence moves by one standard deviation, over the rows the
    model was fitted on.  Raw beta depend on the scale of each evidence
    column, which shrinks fast as gamma grows (SBLR's beta reach hundreds or
    thousands); β̃ do not: scaling a column by c divides its beta by c and
    multiplies its sd by c.  β̃ equal the coefficients of the same logistic
    model fitted on standardized evidence ``(f̄_t - mean) / sd`` (SBLR's ridge
    is on exactly these coefficients, so the fit is the same problem).  A
    constant evidence column (sd 0) gets β̃ = 0.

    Parameters
    ----------
    model_or_coef : fitted model or array-like of shape (..., m)
        A model's ``coef_`` (m, m), or any array whose last axis is the
        evidence class t: one row beta^k (m,), or a path (L, m, m) from
        :func:`sblr.tuning.coefficient_path`.
    F : array-like of shape (n, m), optional
        The evidence the model was fitted on (the leave-one-out training
        evidence; in the dashboard ``common.training_evidence``).
    sd : array-like of shape (m,), optional
        :func:`evidence_sd` of that evidence, instead of ``F`` (to reuse it).

    Returns
    -------
    ndarray, the shape of the coefficients
        ``coef * sd`` broadcast over the last axis.

    Raises
    ------
    DataError
        Neither or both of ``F`` and ``sd`` given, or their number of classes
        differs from the coefficients'.

    Examples
    --------
    >>> standardized_coef([[200.0, -3.0], [50.0, 40.0]], [[0.01, 0.0], [0.03, 1.0]])
    array([[ 2. , -1.5],
           [ 0.5, 20. ]])
    """
    if (F is None) == (sd is None):
        raise DataError("Give either the evidence F the model was fitted on or its sd, not both.")
    coef = getattr(model_or_coef, "coef_", model_or_coef)
    coef = _dense(coef).astype(float)
    if coef.ndim == 0 or coef.shape[-1] == 0:
        raise DataError(f"Coefficients need a last axis of classes, got shape {coef.shape}.")
    sd = evidence_sd(F) if sd is None else _dense(sd).astype(float).reshape(-1)
    if sd.shape != (coef.shape[-1],):
        raise DataError(
            f"The evidence has {sd.shape[0]} classes but the coefficients have "
            f"{coef.shape[-1]}; give the evidence the model was fitted on."
        )
    return coef * sd


def frequent_classes(Y, n: int, *, include=()) -> np.ndarray:
    """The ``n`` classes relevant to the most rows (ties: the lower class index first).

    Parameters
    ----------
    Y : array-like of shape (n_samples, m)
        0/1 label matrix (:meth:`sblr.io.Dataset.label_matrix`).
    n : int
        Number of classes to keep (``n >= m`` keeps all).
    include : sequence of int, default ()
        Classes always kept, in place of the least frequent others.

    Returns
    -------
    ndarray of int, shape (min(n, m),)
        Class indices in increasing order (a heatmap keeps class order).

    Examples
    --------
    >>> Y = np.array([[1, 0, 1], [0, 1, 1], [0, 1, 0]])
    >>> frequent_classes(Y, 2)   # sizes 1, 2, 2
    array([1, 2])
    >>> frequent_classes(Y, 2, include=[0])
    array([0, 1])
    """
    # Not @validate_params: every page's sidebar calls it at start-up (the default class),
    # before scikit-learn, whose validation would import it there (tests/test_startup.py).
    if isinstance(n, bool | np.bool_) or not isinstance(n, int | np.integer) or n < 1:
        raise DataError(f"n must be a positive integer, got {n!r}.")
    Y = np.asarray(Y)
    if Y.ndim != 2:
        raise DataError(f"Y must be a 2-D label matrix; got shape {Y.shape}.")
    sizes = (Y != 0).sum(axis=0)
    return _keep(np.argsort(-sizes, kind="stable"), n, include)


def starting_class(Y) -> int:
    """The class a view starts on: the one relevant to the share of rows nearest one half
    (ties: the more frequent, then the lower index).

    A model decides such a class both ways, so its first views (an explanation, a
    contribution table, a precision-recall curve) show something: the most frequent class of a
    174-label set, relevant to 90% of the rows, was given to every row, and its explanation
    explained nothing. On multi-class data (every class in fewer than half the rows) this is
    the most frequent class.

    Parameters
    ----------
    Y : array-like of shape (n_samples, m)
        0/1 label matrix (:meth:`sblr.io.Dataset.label_matrix`).

    Returns
    -------
    int

    Examples
    --------
    >>> Y = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [1, 0, 0]])
    >>> starting_class(Y)   # shares 1, 1/2, 1/4
    1
    >>> starting_class(np.eye(3)[[0, 1, 1, 2]])   # multi-class: the most frequent
    1
    """
    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[1] == 0:
        raise DataError(f"Y must be a 2-D label matrix with a class; got shape {Y.shape}.")
    n = max(Y.shape[0], 1)
    sizes = (Y != 0).sum(axis=0)
    # nearest to n/2 in exact integer arithmetic: |2·size − n|, then the larger size
    return int(np.lexsort((-sizes, np.abs(2 * sizes - n)))[0])


def _keep(order, n, include):
    """The first ``n`` of ``order`` (class indices, best first) with ``include`` always in,
    sorted (a heatmap keeps class order)."""
    m = len(order)
    kept = list(dict.fromkeys(int(_check_index(t, m, "include")) for t in include))
    taken = set(kept)
    rest = [int(t) for t in order if int(t) not in taken]
    return np.sort(np.array((kept + rest)[: min(max(n, len(kept)), m)], dtype=int))


@validate_params(
    lambda: {
        "coefs": ["array-like", Mapping],
        "n": _count(),
        "include": ["array-like"],
        "tiebreak": ["array-like", Mapping, None],
    },
    prefer_skip_nested_validation=True,
)
def top_classes(coefs, n: int, *, include=(), tiebreak=None) -> np.ndarray:
    """The ``n`` classes with the largest off-diagonal |beta| in their row or column.

    For a heatmap of many classes: in each matrix B, class t scores
    ``max(|B[t, j]|, |B[j, t]|)`` over ``j != t`` (how strongly it weighs, or
    is weighed by, another class), divided by the largest score of that
    matrix; a class's score is its largest over the matrices.  So a sparse
    model's few links count as much as a dense model's many, as they do on
    heatmaps with one colour scale per panel.  The diagonal (a class's weight
    on its own evidence, large for almost every class) is left out of the
    score, which would otherwise rank classes by their self-weight; it only
    breaks ties, then the class index does.

    Parameters
    ----------
    coefs : array-like of shape (m, m), or a dict / sequence of them
        Coefficient matrices (e.g. β̃ of SBLR and of SparseSBLR).
    n : int
        Number of classes to keep (``n >= m`` keeps all).
    include : sequence of int, default ()
        Classes always kept (e.g. the class the user is looking at), in place of the
        lowest-ranked others.
    tiebreak : array-like of shape (m, m), or a dict / sequence of them, optional
        Matrices scored the same way that order classes whose score in ``coefs`` ties
        (e.g. SBLR's dense β̃ behind SparseSBLR's: the readable model ranks, and where it
        has set everything to 0 the dense one still orders the classes).

    Returns
    -------
    ndarray of int, shape (min(n, m),)
        Class indices in increasing order (the heatmap keeps class order).

    Examples
    --------
    >>> B = np.array([[9.0, 0.0, 0.1], [0.0, 1.0, -2.0], [0.3, 0.0, 5.0]])
    >>> top_classes(B, 2, include=[0])   # class 0 always, then the best of the rest
    array([0, 2])
    >>> top_classes(B, 2)   # class 0: 0.3 (its column), 1: 2.0, 2: 2.0
    array([1, 2])
    >>> top_classes([B, np.diag([1.0, 1.0, 1.0]) + np.eye(3, k=-1) * 1e-3], 2)
    array([0, 2])
    """
    off, diag = _link_scores(coefs)
    m = off.shape[0]
    keys = [np.arange(m), -diag]
    if tiebreak is not None:
        off_t, diag_t = _link_scores(tiebreak)
        if off_t.shape[0] != m:
            raise DataError("tiebreak must have as many classes as coefs.")
        keys += [-diag_t, -off_t]
    return _keep(np.lexsort((*keys, -off)), n, include)


def _link_scores(coefs):
    """``(off, diag)`` of :func:`top_classes`: each class's largest off-diagonal |β| in its
    row or column, over each matrix's largest (the maximum over the matrices), and its
    largest |diagonal| weight."""
    if isinstance(coefs, Mapping):
        mats = list(coefs.values())
    elif isinstance(coefs, list | tuple) and coefs and np.ndim(coefs[0]) == 2:
        mats = list(coefs)
    else:
        mats = [coefs]
    mats = [_coef(B, "coefs") for B in mats]
    if not mats:
        raise DataError("coefs is empty; give at least one (m, m) matrix.")
    m = mats[0].shape[0]
    if any(B.shape[0] != m for B in mats):
        raise DataError("All coefficient matrices must have the same number of classes.")
    off = np.zeros(m)
    diag = np.zeros(m)
    for B in mats:
        A = np.abs(B)
        diag = np.maximum(diag, np.diag(A))
        np.fill_diagonal(A, 0.0)
        score = np.maximum(A.max(axis=0), A.max(axis=1))
        if score.max() > 0:
            off = np.maximum(off, score / score.max())
    return off, diag


# --------------------------------------------------------------------------- co-occurrence


@validate_params(
    lambda: {"Y": ["array-like"], "classes": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def cooccurrence(Y, classes=None) -> np.ndarray:
    """Number of rows relevant to both classes, for every pair of classes.

    Parameters
    ----------
    Y : array-like of shape (n, m) or (n,)
        Either a 0/1 label indicator matrix (multi-label), or a 1-D vector of
        class labels (multi-class).  A 1-D vector is one-hot encoded against
        ``classes``; its co-occurrence matrix is diagonal (each row has exactly
        one class).
    classes : array-like of shape (m,), optional
        Only for 1-D ``Y``: the class order (e.g. ``model.classes_``); a class
        that never occurs gets a zero row and column.  Defaults to the sorted
        unique values of ``Y`` (the order scikit-learn's ``classes_`` uses).
        Labels of ``Y`` not in ``classes`` raise :class:`DataError`.

    Returns
    -------
    ndarray of shape (m, m), dtype int64
        ``C[a, b]`` = number of rows in which classes ``a`` and ``b`` are both
        relevant; the diagonal holds the class sizes.  Symmetric.

    Raises
    ------
    DataError
        If ``Y`` is not 0/1 (2-D case), has another number of dimensions, or
        holds labels outside ``classes``.

    Examples
    --------
    >>> cooccurrence([[1, 0, 1], [1, 1, 1], [0, 0, 1]])
    array([[2, 1, 2],
           [1, 1, 1],
           [2, 1, 3]])
    >>> cooccurrence(["b", "a", "b"])
    array([[1, 0],
           [0, 2]])
    """
    arr = _dense(Y)
    if arr.ndim == 1:
        cls = np.unique(arr) if classes is None else np.asarray(classes)
        lookup = {c: i for i, c in enumerate(cls.tolist())}
        try:
            idx = np.array([lookup[v] for v in arr.tolist()], dtype=np.intp)
        except KeyError as exc:
            raise DataError(
                f"Label {exc.args[0]!r} in Y is not one of the classes {cls.tolist()!r}."
            ) from None
        counts = np.bincount(idx, minlength=len(cls)).astype(np.int64)
        return np.diag(counts)
    if arr.ndim != 2:
        raise DataError(
            f"Y must be a 2-D 0/1 indicator matrix or a 1-D label vector, got shape {arr.shape}."
        )
    if arr.dtype != bool and not (
        np.issubdtype(arr.dtype, np.number) and np.isin(arr, (0, 1)).all()
    ):
        raise DataError("Y must be a 0/1 label indicator matrix (only 0 and 1 allowed).")
    # by BLAS in float64 (exact: counts stay far below 2**53); an int64 product has no BLAS and
    # took 46 s for 5,000 rows × 1,000 classes, where this takes a fraction of a second
    Yf = arr.astype(np.float64)
    return np.rint(Yf.T @ Yf).astype(np.int64)


# --------------------------------------------------------------------------- coefficient tables


@validate_params(
    lambda: {"Y": ["array-like"], "F": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def class_affinity(Y, F) -> np.ndarray:
    """Mean evidence of class t over the rows of class k: a class-to-class relation for
    multi-class data, where co-occurrence is empty (every row has one class).

    ``A[k, t] = mean_{i: y_ik = 1} f̄_t(x_i)``: how similar, on average, class k's rows are to
    class t's rows (leave-one-out evidence: a row's own similarity is left out).  A class
    with no rows gets a row of NaN.

    Parameters
    ----------
    Y : array-like of shape (n, m)
        0/1 class indicator (``Dataset.label_matrix()``).
    F : array-like of shape (n, m)
        Normalized evidence of the same rows.

    Returns
    -------
    ndarray of shape (m, m)

    Examples
    --------
    >>> class_affinity([[1, 0], [1, 0], [0, 1]], [[0.8, 0.1], [0.6, 0.3], [0.2, 0.9]])
    array([[0.7, 0.2],
           [0.2, 0.9]])
    """
    Y = _dense(Y).astype(float)
    F = np.asarray(F, dtype=float)
    if Y.ndim != 2 or Y.shape != F.shape:
        raise DataError(f"Y and F must have the same (n, m) shape; got {Y.shape} and {F.shape}.")
    counts = Y.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (Y.T @ F) / counts[:, None]


@validate_params(
    lambda: {
        "models": _MODEL,
        "Y": ["array-like"],
        "k": _index(),
        "class_names": _NAMES,
        "evidence": ["array-like", None],
        "relation": ["array-like", None],
        "relation_name": [str, None],
        "dependency": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def contribution_table(
    models,
    Y,
    k,
    class_names=None,
    *,
    evidence=None,
    relation=None,
    relation_name=None,
    dependency=False,
) -> pd.DataFrame:
    """Coefficients beta_t^k of every class t for target class k, next to co-occurrence.

    This is the table behind the paper's "Pacific Wren" discussion: do the
    classes that most often co-occur with ``k`` get the largest weights in
    ``k``'s logit?

    Parameters
    ----------
    models : model or dict of str to model
        One fitted model (column ``"beta"``) or ``{display name: model}`` (one
        column per entry, named by the key, in dict order).  All models need
        the same number of classes ``m``.
    Y : array-like of shape (n, m) or (n,)
        Training labels, as for :func:`cooccurrence`.  For a 1-D label vector
        the first model's ``classes_`` fixes the class order.
    k : int
        Index (0-based, into ``classes_``) of the target class.
    class_names : sequence of str, optional
        Display names, length ``m``.  Default: ``str`` of the first model's
        ``classes_`` (or ``"0" .. "m-1"`` without ``classes_``).
    evidence : array-like of shape (n, m), optional
        The evidence the models were fitted on (leave-one-out training
        evidence).  Adds the column ``evidence_sd`` (:func:`evidence_sd`) and,
        after each beta column ``name``, the standardized β̃ column
        ``name + "_std"`` (:func:`standardized_coef`).
    relation : array-like of shape (m, m), optional
        A class-to-class relation used instead of co-occurrence (row ``k`` is
        shown), e.g. :func:`class_affinity` for multi-class data; the table is
        sorted by it.
    relation_name : str, optional
        Its column name (default ``"relation"``).
    dependency : bool, default False
        Add the column ``p_k_given_t`` after the co-occurrence: the share of
        t's rows that also carry k, P(k | t) = C[k, t] / C[t, t]
        (:func:`conditional_frequency`; NaN for a class without rows).

    Returns
    -------
    pandas.DataFrame
        One row per class ``t`` (including ``k`` itself), index ``t`` (named
        ``"t"``), columns ``class`` (name), ``cooccurrence`` (rows relevant to
        both ``t`` and ``k``; for ``t == k`` the size of ``k``), then (with
        ``evidence``) ``evidence_sd``, then the beta column(s) (each followed
        by its ``_std`` column with ``evidence``).  Sorted by co-occurrence
        descending; ties keep class-index order (stable).  ``table.attrs["target"]`` holds ``k`` and
        ``table.attrs["target_name"]`` its name.

    Raises
    ------
    DataError
        If ``k`` is not an integer in ``[0, m)``, the models disagree on
        ``m``, ``Y`` or ``evidence`` has another number of classes, or a
        column name would repeat (a model named ``"class"``, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> a = SimpleNamespace(coef_=np.array([[1.0, 0.0], [0.3, 2.0]]))
    >>> b = SimpleNamespace(coef_=np.array([[0.9, 0.1], [0.0, 1.5]]))
    >>> contribution_table({"SBLR": a, "SparseSBLR": b}, [[1, 1], [0, 1]], 1)
      class  cooccurrence  SBLR  SparseSBLR
    t
    1     1             2   2.0         1.5
    0     0             1   0.3         0.0
    >>> contribution_table(a, [[1, 1], [0, 1]], 1, evidence=[[0.1, 0.5], [0.3, 0.5]])
      class  cooccurrence  evidence_sd  beta  beta_std
    t
    1     1             2          0.0   2.0       0.0
    0     0             1          0.1   0.3       0.03
    """
    if isinstance(models, Mapping):
        if not models:
            raise DataError("models is an empty dict; give at least one fitted model.")
        named = {str(name): mdl for name, mdl in models.items()}
        if len(named) != len(models):
            raise DataError("Model display names must be distinct after conversion to str.")
    else:
        named = {"beta": models}
    columns = ["class", "cooccurrence"] + (["p_k_given_t"] if dependency else [])
    if evidence is not None:
        columns += ["evidence_sd"]
        columns += [c for name in named for c in (name, name + "_std")]
    else:
        columns += list(named)
    clash = sorted({c for c in columns if columns.count(c) > 1})
    if clash:
        raise DataError(f"Model display name(s) {clash} clash with other table columns.")

    coefs = {name: _coef(mdl, f"model {name!r}") for name, mdl in named.items()}
    first = next(iter(named.values()))
    m = next(iter(coefs.values())).shape[0]
    for name, coef in coefs.items():
        if coef.shape[0] != m:
            raise DataError(
                f"Model {name!r} has {coef.shape[0]} classes but the first model has {m}."
            )
    k = _check_index(k, m)

    classes = getattr(first, "classes_", None)
    C = cooccurrence(Y, classes=classes if np.ndim(Y) == 1 else None)
    if C.shape[0] != m:
        raise DataError(f"Y has {C.shape[0]} classes but the model(s) have {m}.")
    names = _names(class_names, m, fallback=classes)

    related = "cooccurrence"
    values = C[k].astype(np.int64)
    if relation is not None:  # another class-to-class relation (e.g. class_affinity)
        R = np.asarray(relation, dtype=float)
        if R.shape != (m, m):
            raise DataError(f"relation must be an ({m}, {m}) matrix; got shape {R.shape}.")
        related, values = relation_name or "relation", R[k]
    table = pd.DataFrame({"class": names, related: values}, index=pd.RangeIndex(m, name="t"))
    if dependency:
        table["p_k_given_t"] = conditional_frequency(counts=C)[k]
    if evidence is None:
        for name, coef in coefs.items():
            table[name] = coef[k]
    else:
        sd = evidence_sd(evidence)
        if sd.shape[0] != m:
            raise DataError(f"The evidence has {sd.shape[0]} classes but the model(s) have {m}.")
        table["evidence_sd"] = sd
        for name, coef in coefs.items():
            table[name] = coef[k]
            table[name + "_std"] = standardized_coef(coef[k], sd=sd)
    table = table.sort_values(related, ascending=False, kind="stable")
    table.attrs["relation"] = related
    table.attrs["target"] = k
    table.attrs["target_name"] = names[k]
    return table


# ---------------------------------------------- does |β| follow the dependency?


@validate_params(
    lambda: {"Y": ["array-like", None], "counts": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def conditional_frequency(Y=None, *, counts=None) -> np.ndarray:
    """P(k | t): the share of class t's rows that also carry class k, for every pair.

    ``D[k, t] = C[k, t] / C[t, t]`` with ``C`` = :func:`cooccurrence`.  This is the
    chance-corrected dependency the dashboard compares |β̃| with.  Raw co-occurrence
    counts grow with the size of class t, so a frequent class co-occurs with
    everything; dividing by t's size removes that.  For a fixed target ``k``, ranking
    the classes t by P(k | t) is the same as ranking them by lift
    ``P(k, t) / (P(k) P(t))`` or by pointwise mutual information (log lift): they
    differ by the factor ``1 / P(k)``, constant over t, and a log.  So a rank
    correlation per target does not depend on which of the three is used.

    Parameters
    ----------
    Y : array-like of shape (n, m) or (n,), optional
        Labels as for :func:`cooccurrence`.
    counts : array-like of shape (m, m), optional
        Instead of ``Y``: an already computed co-occurrence matrix (diagonal = class sizes).

    Returns
    -------
    ndarray of shape (m, m)
        ``D[k, t]`` in [0, 1]; ``D[t, t] = 1``; a class without rows has a NaN column.

    Examples
    --------
    >>> conditional_frequency([[1, 1], [1, 0], [1, 0], [0, 1]]).round(2)
    array([[1.  , 0.5 ],
           [0.33, 1.  ]])
    """
    if (Y is None) == (counts is None):
        raise DataError("Give exactly one of Y (labels) and counts (a co-occurrence matrix).")
    C = cooccurrence(Y) if counts is None else np.asarray(counts, dtype=float)
    if C.ndim != 2 or C.shape[0] != C.shape[1]:
        raise DataError(f"counts must be a square (m, m) matrix; got shape {C.shape}.")
    size = np.diag(C).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(size[None, :] > 0, C / size[None, :], np.nan)


def _average_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n along the last axis, ties sharing their average rank."""
    a = np.asarray(a, dtype=float)
    order = np.argsort(a, axis=-1, kind="stable")
    ranks = np.empty_like(a)
    flat_a = a.reshape(-1, a.shape[-1])
    flat_o = order.reshape(-1, a.shape[-1])
    flat_r = ranks.reshape(-1, a.shape[-1])
    for row, o, r in zip(flat_a, flat_o, flat_r, strict=True):
        sorted_vals = row[o]
        # start of each run of equal values
        new = np.r_[True, sorted_vals[1:] != sorted_vals[:-1]]
        starts = np.flatnonzero(new)
        ends = np.r_[starts[1:], len(row)]
        avg = (starts + ends + 1) / 2.0  # mean of 1-based positions start+1 .. end
        r[o] = np.repeat(avg, ends - starts)
    return ranks


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    x = x - x.mean()
    y = y - y.mean()
    den = math.sqrt(float(x @ x) * float(y @ y))
    return math.nan if den == 0 else float(np.clip((x @ y) / den, -1.0, 1.0))


@validate_params(
    lambda: {"x": ["array-like"], "y": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def spearman(x, y) -> float:
    """Spearman's rank correlation (Pearson on average ranks; ties share ranks).

    The same number as :func:`scipy.stats.spearmanr`, without importing
    :mod:`scipy.stats` (slow to import: the dashboard's start-up avoids it).
    NaN when fewer than two pairs or either variable is constant.

    Examples
    --------
    >>> spearman([1, 2, 3, 4], [10, 20, 20, 40])
    0.9486832980505138
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise DataError(f"x and y must have the same length; got {x.size} and {y.size}.")
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return _pearson(_average_ranks(x), _average_ranks(y))


@dataclass(frozen=True)
class ClaimCheck:
    """The paper's claim for one target class, tested on the data.

    The claim (a hypothesis): the classes t that depend more on k get larger
    weights |β̃ₜᵏ| in k's logit (and the unrelated ones small or zero weights).

    Attributes
    ----------
    rho : float
        Spearman(|β̃ₜᵏ|, dependency) over the classes t ≠ k (NaN if undefined).
    p_value : float
        Two-sided permutation p-value of ``rho`` (NaN if undefined).
    n : int
        Number of classes t compared.
    verdict : str
        ``"supported"`` (rho > 0, p < alpha), ``"contradicted"`` (rho < 0, p < alpha),
        ``"not supported"`` (p ≥ alpha), ``"too few classes"`` (even a perfect ranking
        could not reach p < alpha: fewer than 5 classes), ``"untestable"`` (too few
        non-zero weights: with the zeros tied, no arrangement of these weights could reach
        p < alpha, so the test has no power and gives no verdict) or ``"undefined"``.
    alpha : float
        The significance level used.
    all_zero : bool
        Every weight compared is zero (a sparse model at a large λ).
    n_nonzero : int or None
        Non-zero weights among the ``n`` compared.
    """

    rho: float
    p_value: float
    n: int
    verdict: str
    alpha: float = 0.05
    all_zero: bool = False
    n_nonzero: int | None = None

    def sentence(self, measure: str = "the dependency") -> str:
        """One plain sentence with the numbers, e.g. for the dashboard."""
        if self.verdict == "undefined":
            if self.all_zero:
                return (
                    f"Undefined: every weight of the {self.n} other classes is exactly zero at "
                    "this λ, so there is nothing to rank (a smaller λ lets classes in)."
                )
            return (
                f"Undefined: over the {self.n} other classes either every weight or every value "
                f"of {measure} is the same, so there is no ranking to compare."
            )
        if self.verdict == "untestable":
            return (
                f"Untestable here: only {self.n_nonzero} of the {self.n} weights are not zero, "
                f"and with the zeros tied no arrangement of them could reach p < "
                f"{self.alpha:.0%}, so the test cannot support or contradict anything (a "
                "smaller λ lets more classes in)."
            )
        if self.verdict == "too few classes":
            return (
                f"Too few classes to tell (ρ = {self.rho:.2f} over {self.n}): with so few, "
                f"even a perfect ranking arises by chance more than {self.alpha:.0%} of the time."
            )
        nums = f"ρ = {self.rho:.2f} over {self.n} classes, permutation p = {self.p_value:.3f}"
        if self.verdict == "supported":
            return f"Supported ({nums}): larger {measure} goes with larger |weight|."
        if self.verdict == "contradicted":
            return (
                f"Contradicted ({nums}): larger {measure} goes with SMALLER |weight|, the "
                "opposite of the claim."
            )
        return (
            f"Not supported ({nums}): shuffling the weights among the classes gives a rank "
            f"correlation at least this far from 0 in {self.p_value:.0%} of shuffles, so these "
            f"data do not confirm that the weights follow {measure}."
        )


@validate_params(
    lambda: {
        "weights": ["array-like"],
        "dependency": ["array-like"],
        "target": [*_index(), None],
        "n_permutations": _count(),
        "alpha": _between(0, 1, "neither"),
        "seed": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=True,
)
def check_claim(
    weights, dependency, *, target=None, n_permutations: int = 9999, alpha: float = 0.05, seed=0
) -> ClaimCheck:
    """Test "larger dependency, larger |weight|" for one target class.

    Parameters
    ----------
    weights : array-like of shape (m,)
        The weights of every class t in k's logit (β̃ₜᵏ; the sign is ignored).
    dependency : array-like of shape (m,)
        The dependency of k on every t (co-occurrence, P(k | t), class affinity...).
    target : int, optional
        The index k, left out (its own weight and dependency say nothing about the others).
    n_permutations : int, default 9999
        Random permutations of the weights for the two-sided p-value
        ``(1 + #{|ρ_perm| ≥ |ρ|}) / (1 + n_permutations)``.  With few classes the
        p-value is large, as it should be: 5 classes cannot confirm anything.
    alpha : float, default 0.05
    seed : int, default 0
        The permutations are reproducible.

    Returns
    -------
    ClaimCheck

    Examples
    --------
    >>> c = check_claim([9.0, 4, 3, 2, 1, 0, 0, 0], [0, 50, 40, 30, 20, 10, 5, 1], target=0)
    >>> c.verdict, round(c.rho, 2), c.n
    ('supported', 0.96, 7)
    >>> check_claim([0.0] * 17 + [3.0], list(range(18))).verdict   # one non-zero of 18
    'untestable'
    """
    w = np.abs(np.asarray(weights, dtype=float).ravel())
    d = np.asarray(dependency, dtype=float).ravel()
    if w.shape != d.shape:
        raise DataError(f"weights and dependency differ in length: {w.size} and {d.size}.")
    keep = np.ones(w.size, dtype=bool)
    if target is not None:
        keep[_check_index(target, w.size, "target")] = False
    keep &= np.isfinite(w) & np.isfinite(d)
    w, d = w[keep], d[keep]
    n = int(w.size)
    rho = spearman(w, d) if n >= 2 else math.nan
    if not math.isfinite(rho):
        all_zero = n > 0 and not np.any(w)
        return ClaimCheck(math.nan, math.nan, n, "undefined", alpha, all_zero)
    # the smallest two-sided p any ranking can reach, 2 / n!, in logs: n! passes the float
    # range from n = 171 (174 labels: an OverflowError on the contributions page)
    if math.exp(math.log(2.0) - math.lgamma(n + 1)) >= alpha:
        return ClaimCheck(float(rho), math.nan, n, "too few classes", alpha)
    # Ties shrink what a permutation test can show: the weights take only
    # n! / prod(c_i!) distinct arrangements (c_i the sizes of their tied groups: the zeros
    # of a sparse model), and the smallest two-sided p is about 2 over that number. One
    # non-zero weight among 18 has 18 arrangements: p >= 0.11 whatever the data.
    _, tie_sizes = np.unique(w, return_counts=True)
    log_arrangements = math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in tie_sizes)
    n_nonzero = int(np.count_nonzero(w))
    if math.exp(math.log(2.0) - log_arrangements) >= alpha:
        return ClaimCheck(float(rho), math.nan, n, "untestable", alpha, False, n_nonzero)
    rw = _average_ranks(w)
    rd = _average_ranks(d)
    rd = (rd - rd.mean()) / np.linalg.norm(rd - rd.mean())
    perms = rw[_permutations(n, n_permutations, seed)]
    perms -= perms.mean(axis=1, keepdims=True)
    null = (perms @ rd) / np.linalg.norm(perms, axis=1)
    p = float((1 + np.count_nonzero(np.abs(null) >= abs(rho) - 1e-12)) / (1 + n_permutations))
    if p < alpha:
        verdict = "supported" if rho > 0 else "contradicted"
    else:
        verdict = "not supported"
    return ClaimCheck(float(rho), p, n, verdict, alpha, False, n_nonzero)


def _permutations(n, n_permutations, seed):
    """The ``(n_permutations, n)`` index permutations of :func:`check_claim`: row i is the i-th
    permutation that ``default_rng(seed).permuted`` makes of n values (the draws do not depend
    on the values, so ``values[_permutations(...)]`` is what it makes of ``values``).  They do
    not depend on the data either, so they are made once per (n, n_permutations, seed): a
    page tests the claim for two models and two dependencies, and 9,999 permutations of 173
    values took 49 ms each time.  Only an integer seed's are stored (None asks for new
    permutations at every call; a Generator's state moves on)."""
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        return _stored_permutations(int(n), int(n_permutations), int(seed))
    return _make_permutations(n, n_permutations, seed)


def _make_permutations(n, n_permutations, seed):
    index = np.arange(n, dtype=np.int16 if n < 2**15 else np.intp)  # 3.5 MB at 9,999 x 173
    return np.random.default_rng(seed).permuted(np.broadcast_to(index, (n_permutations, n)), axis=1)


@functools.lru_cache(maxsize=4)
def _stored_permutations(n, n_permutations, seed):
    index = _make_permutations(n, n_permutations, seed)
    index.flags.writeable = False
    return index


@validate_params(
    lambda: {
        "coefs": ["array-like"],
        "relation": ["array-like"],
        "sd": ["array-like", None],
        "target": [*_index(), None],
        "average": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def rank_agreement_path(coefs, relation, *, sd=None, target=None, average=False) -> np.ndarray:
    """Spearman(|β̃ₜᵏ|, relation[k, t]) over t ≠ k at every λ of a coefficient path.

    Parameters
    ----------
    coefs : array-like of shape (n_lams, m, m)
        ``coefs[i, k, t]`` = βₜᵏ at the i-th λ (:func:`sblr.tuning.coefficient_path`).
    relation : array-like of shape (m, m)
        ``relation[k, t]``: co-occurrence, :func:`conditional_frequency`,
        :func:`class_affinity`...
    sd : array-like of shape (m,), optional
        :func:`evidence_sd` of the training evidence: correlate the standardized
        β̃ = β · sd (scale-free, the default in the dashboard).  Without it, raw β.
    target : int, optional
        Only this class k: returns shape (n_lams,).  Default: every class,
        shape (n_lams, m).
    average : bool, default False
        Without ``target``: return the mean over the classes k whose ρ is defined at
        each λ, shape (n_lams,) (NaN where none is).

    Returns
    -------
    ndarray
        NaN where undefined (e.g. every βₜᵏ, t ≠ k, is zero at that λ).

    Examples
    --------
    >>> coefs = np.zeros((2, 3, 3))
    >>> coefs[1, 0] = [1.0, 0.5, 0.1]                 # at the second λ, class 0 uses 1 more than 2
    >>> rank_agreement_path(coefs, [[5, 3, 1], [3, 4, 0], [1, 0, 2]], target=0)
    array([nan,  1.])
    """
    B = np.abs(np.asarray(coefs, dtype=float))
    if B.ndim != 3 or B.shape[1] != B.shape[2]:
        raise DataError(f"coefs must have shape (n_lams, m, m); got {B.shape}.")
    m = B.shape[1]
    R = np.asarray(relation, dtype=float)
    if R.shape != (m, m):
        raise DataError(f"relation must be ({m}, {m}); got {R.shape}.")
    if sd is not None:
        sd = np.asarray(sd, dtype=float)
        if sd.shape != (m,):
            raise DataError(f"sd must have shape ({m},); got {sd.shape}.")
        B = B * sd[None, None, :]
    targets = range(m) if target is None else [_check_index(target, m, "target")]
    out = np.full((B.shape[0], len(targets)), np.nan)
    for j, k in enumerate(targets):
        others = np.flatnonzero((np.arange(m) != k) & np.isfinite(R[k]))
        if others.size < 2 or np.ptp(R[k, others]) == 0:
            continue
        rr = _average_ranks(R[k, others])
        for i in range(B.shape[0]):
            b = B[i, k, others]
            if np.ptp(b) > 0:
                out[i, j] = _pearson(_average_ranks(b), rr)
    if target is not None:
        return out[:, 0]
    if average:
        defined = np.isfinite(out)
        count = defined.sum(axis=1)
        total = np.where(defined, out, 0.0).sum(axis=1)
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return out


@validate_params(
    lambda: {"lams": ["array-like"], "coefs_k": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def entry_lambdas(lams, coefs_k) -> dict:
    """Where each class enters a lasso path: the largest λ at which its βₜᵏ is non-zero.

    Parameters
    ----------
    lams : array-like of shape (L,)
    coefs_k : array-like of shape (L, m)
        βₜᵏ of one target k along the path.

    Returns
    -------
    dict
        ``{t: λ}`` for the classes non-zero somewhere, ordered from the first to enter
        (largest λ) to the last; ties keep class order.

    Examples
    --------
    >>> entry_lambdas([1.0, 0.1, 0.01], [[0, 0, 0], [0.5, 0, 0], [0.7, 0, -0.1]])
    {0: 0.1, 2: 0.01}
    """
    lams = np.asarray(lams, dtype=float)
    B = np.asarray(coefs_k, dtype=float)
    if B.ndim != 2 or B.shape[0] != lams.size:
        raise DataError(f"coefs_k must have shape ({lams.size}, m); got {B.shape}.")
    entry = {
        t: float(lams[np.flatnonzero(B[:, t])].max()) for t in range(B.shape[1]) if B[:, t].any()
    }
    return dict(sorted(entry.items(), key=lambda item: -item[1]))


@validate_params(
    lambda: {
        "model": [_validation.HasMethods(["predict_from_evidence"])],
        "F": ["array-like"],
        "k": _index(),
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
        "model_or_coef": _MODEL,
        "intercept": ["array-like", None],
        "k": _index(),
        "t1": _index(),
        "t2": _index(),
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
    coef = _coef(model_or_coef)
    b = np.asarray(getattr(model_or_coef, "intercept_", intercept), dtype=float)
    m = coef.shape[0]
    k, t1, t2 = (_check_index(v, m, name) for v, name in ((k, "k"), (t1, "t1"), (t2, "t2")))
    F = np.asarray(_dense(F), dtype=float)
    mean = F.mean(axis=0)
    beta = coef[k]
    if cut is None:
        cuts = getattr(model_or_coef, "threshold_", None)
        cut = 0.5 if cuts is None else float(np.clip(cuts[k], 1e-12, 1 - 1e-12))
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
    t = np.asarray(_dense(y_true))
    p = np.asarray(_dense(y_pred))
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


@validate_params(
    lambda: {
        "n_rows": _count(),
        "n_tests": [_validation.Interval(Integral, 0, None, closed="left")],
        "alpha": _between(0, 1, "neither"),
    },
    prefer_skip_nested_validation=True,
)
def family_threshold(n_rows: int, n_tests: int, alpha: float = 0.05) -> float:
    """τ for :func:`zero_readings` when ``n_tests`` correlations are read at once: the
    two-sided Bonferroni level ``z(1 - alpha / (2 n_tests)) / sqrt(n_rows)``, so that all of
    them together cross it by chance with probability at most ``alpha`` (the default
    ``2 / sqrt(n)`` holds each one alone at about 5%).

    Examples
    --------
    >>> round(family_threshold(400, 1), 4), round(family_threshold(400, 17), 4)
    (0.098, 0.1487)
    """
    from scipy.stats import norm

    n_tests = max(1, n_tests)
    return float(norm.ppf(1.0 - alpha / (2.0 * n_tests)) / math.sqrt(n_rows))


def _reading(r, partial, tau) -> str:
    """The rule of :func:`zero_readings` for one zero: weak, redundant or irrelevant."""
    if abs(partial) >= tau:
        return "weak"
    if abs(r) >= tau:
        return "redundant"
    return "irrelevant"


@validate_params(
    lambda: {"zeros": [pd.DataFrame], "threshold": _between(0, None, "left")},
    prefer_skip_nested_validation=True,
)
def readings_at(zeros: pd.DataFrame, threshold: float) -> pd.Series:
    """The readings of :func:`zero_readings`'s table at another τ (e.g.
    :func:`family_threshold`), from its correlations: nothing is refitted.

    Examples
    --------
    >>> t = pd.DataFrame({"r_with_k": [0.3, 0.3, 0.05], "partial_r": [0.25, 0.1, 0.02]})
    >>> readings_at(t, 0.2).tolist(), readings_at(t, 0.28).tolist()
    (['weak', 'redundant', 'irrelevant'], ['redundant', 'redundant', 'irrelevant'])
    """
    return pd.Series(
        [
            _reading(r, p, float(threshold))
            for r, p in zip(zeros["r_with_k"], zeros["partial_r"], strict=True)
        ],
        index=zeros.index,
        name="reading",
    )


@validate_params(
    lambda: {
        "coef_k": ["array-like"],
        "F": ["array-like"],
        "Y": ["array-like"],
        "k": _index(),
        "class_names": _NAMES,
        "threshold": [*_between(0, None, "left"), None],
    },
    prefer_skip_nested_validation=True,
)
def zero_readings(coef_k, F, Y, k, class_names=None, *, threshold=None) -> pd.DataFrame:
    """What each zero weight βₜᵏ = 0 of a sparse model means: irrelevant, redundant or weak.

    A zero does not say "t has nothing to do with k".  With ``S`` the classes whose
    evidence the model does use (βₛᵏ ≠ 0), ``r`` the correlation of f̄ₜ with the label
    yₖ over the rows, and ``r | S`` the partial correlation given the evidence of ``S``
    (both residualised on it by least squares with an intercept):

    - **weak**: ``|r | S| ≥ τ``: t's evidence still tells something about k beyond the
      selected classes, but not enough to pay the L1 price at this λ (it may enter at a
      smaller λ);
    - **redundant**: ``|r | S| < τ ≤ |r|``: related to k on its own, but the selected
      classes' evidence already carries that information (a correlated class took its
      place; ``closest`` names the selected class most correlated with it);
    - **irrelevant**: ``|r| < τ`` and ``|r | S| < τ``: no detectable relation to k.

    τ defaults to ``2 / sqrt(n)``, about the two-sided 5% level of a zero correlation
    over ``n`` rows, so with many rows small relations count as detectable.

    Parameters
    ----------
    coef_k : array-like of shape (m,)
        βₜᵏ of one target k for every t.
    F : array-like of shape (n, m)
        The evidence the model was fitted on (leave-one-out training evidence).
    Y : array-like of shape (n, m)
        0/1 labels of the same rows.
    k : int
    class_names : sequence of str, optional
    threshold : float, optional
        τ (default ``2 / sqrt(n)``).

    Returns
    -------
    pandas.DataFrame
        One row per zero weight (t ≠ k), index ``t``: ``class``, ``reading``,
        ``r_with_k`` (r), ``partial_r`` (r | S), ``r2_selected`` (share of f̄ₜ's variance
        explained by the selected columns; 0 when none is selected), ``closest`` (name
        of the selected class whose evidence correlates most with f̄ₜ, "" if none) and
        ``closest_r``.  ``attrs["threshold"]`` holds τ.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> a = y + 0.3 * rng.standard_normal(400)           # selected, strongly related to k
    >>> F = np.c_[y * 0.5 + 0.1, a, a + 0.01 * rng.standard_normal(400), rng.random(400)]
    >>> Y = np.c_[y, y, y, rng.integers(0, 2, 400)]
    >>> zero_readings([1.0, 2.0, 0.0, 0.0], F, Y, 0)["reading"].tolist()
    ['redundant', 'irrelevant']
    """
    F = np.asarray(_dense(F), dtype=float)
    Y = np.asarray(_dense(Y), dtype=float)
    beta = np.asarray(coef_k, dtype=float).ravel()
    m = beta.size
    if F.ndim != 2 or F.shape[1] != m or Y.shape != F.shape:
        raise DataError(f"F and Y must both have shape (n, {m}); got {F.shape} and {Y.shape}.")
    k = _check_index(k, m)
    names = _names(class_names, m)
    n = F.shape[0]
    tau = 2.0 / math.sqrt(max(n, 1)) if threshold is None else float(threshold)
    selected = np.flatnonzero(beta != 0)
    zeros = np.flatnonzero((beta == 0) & (np.arange(m) != k))
    Fc = F - F.mean(axis=0)
    norms = np.linalg.norm(Fc, axis=0)
    yk = Y[:, k] - Y[:, k].mean()

    def corr(a, b):
        na, nb = np.linalg.norm(a, axis=0), np.linalg.norm(b)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((na > 0) & (nb > 0), (a.T @ b) / (na * nb), 0.0)

    r_k = corr(Fc[:, zeros], yk)
    if selected.size:
        # an orthonormal basis of the directions the selected columns actually span
        U, sv, _ = np.linalg.svd(Fc[:, selected], full_matrices=False)
        Q = U[:, : int(np.count_nonzero(sv > sv.max() * 1e-10))]
        resid = Fc[:, zeros] - Q @ (Q.T @ Fc[:, zeros])
        yres = yk - Q @ (Q.T @ yk)
        left = np.linalg.norm(resid, axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            r2 = np.where(norms[zeros] > 0, 1.0 - (left / norms[zeros]) ** 2, 0.0)
        partial = corr(resid, yres)
        partial[left <= 1e-8 * norms[zeros]] = 0.0  # an exact copy adds nothing
        r2 = np.clip(r2, 0.0, 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            cross = (Fc[:, zeros].T @ Fc[:, selected]) / np.outer(norms[zeros], norms[selected])
        cross = np.nan_to_num(cross)
    else:
        r2, partial = np.zeros(zeros.size), r_k.copy()
    rows = []
    for j, t in enumerate(zeros):
        if selected.size:
            s_idx = int(np.argmax(np.abs(cross[j])))
            closest, closest_r = names[selected[s_idx]], float(cross[j, s_idx])
        else:
            closest, closest_r = "", math.nan
        reading = _reading(r_k[j], partial[j], tau)
        rows.append(
            (names[t], reading, float(r_k[j]), float(partial[j]), float(r2[j]), closest, closest_r)
        )
    out = pd.DataFrame(
        rows,
        columns=[
            "class",
            "reading",
            "r_with_k",
            "partial_r",
            "r2_selected",
            "closest",
            "closest_r",
        ],
        index=pd.Index(zeros, name="t"),
    )
    out.attrs["threshold"] = tau
    return out


@validate_params(
    lambda: {"coef": _MODEL, "class_names": _NAMES, "tol": _between(0, None, "left")},
    prefer_skip_nested_validation=True,
)
def sparsity_summary(coef, class_names=None, *, tol: float = 0.0) -> pd.DataFrame:
    """Per target class, which classes' evidence the model ignores (beta_t^k == 0).

    Parameters
    ----------
    coef : array-like of shape (m, m) or fitted model
        ``coef[k, t]`` = beta_t^k; a model's ``coef_`` is used if given a model.
    class_names : sequence of str, optional
        Display names, length ``m``; default ``"0" .. "m-1"``.
    tol : float, default 0.0
        A coefficient counts as zero when ``|beta| <= tol`` (default: exactly
        zero, which is what the L1 solvers produce).

    Returns
    -------
    pandas.DataFrame
        Index ``k`` (named ``"k"``), one row per target class, columns
        ``class`` (name of ``k``), ``n_zero`` (number of ``t``, **including**
        ``t == k``, with beta_t^k zero), ``n_nonzero`` (``m - n_zero``) and
        ``irrelevant`` (comma-and-space-joined names of those ``t``, in class
        order; ``""`` if none).

    Examples
    --------
    >>> sparsity_summary([[1.0, 0.0, 0.0], [0.5, 2.0, -1.0], [0.0, 0.0, 0.0]], ["a", "b", "c"])
      class  n_zero  n_nonzero irrelevant
    k
    0     a       2          1       b, c
    1     b       0          3
    2     c       3          0    a, b, c
    """
    B = _coef(coef, "coef")
    m = B.shape[0]
    names = _names(class_names, m)
    zero = np.abs(B) <= tol
    n_zero = zero.sum(axis=1).astype(np.int64)
    name_array = np.array(names, dtype=object)  # a row's names in one indexing (174 classes)
    return pd.DataFrame(
        {
            "class": names,
            "n_zero": n_zero,
            "n_nonzero": m - n_zero,
            "irrelevant": [", ".join(name_array[row]) for row in zero],
        },
        index=pd.RangeIndex(m, name="k"),
    )


# --------------------------------------------------------------------------- one instance


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
        k = _check_index(k, m)
        names = _names(class_names, m, fallback=self.classes)
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
    lambda: {"model": _MODEL, "x": ["array-like", None], "evidence": ["array-like", None]},
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
        arr = _dense(x)
        if arr.ndim == 1:
            X = arr.reshape(1, -1)
        elif arr.ndim == 2 and arr.shape[0] == 1:
            X = arr
        else:
            raise DataError(f"x must be one row, shape (d,) or (1, d); got shape {arr.shape}.")

    coef = _coef(model)
    m = coef.shape[0]
    intercept = _dense(model.intercept_).astype(float).reshape(-1)
    if intercept.shape != (m,):
        raise DataError(f"intercept_ has shape {intercept.shape}, expected ({m},).")
    if X is not None:
        evidence = model.featurizer_.transform(X)
    evidence = _dense(evidence).astype(float)
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
