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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import spearmanr

from sblr.exceptions import DataError

__all__ = [
    "InstanceContributions",
    "class_affinity",
    "contribution_table",
    "cooccurrence",
    "evidence_sd",
    "instance_contributions",
    "rank_correlation",
    "sparsity_summary",
    "standardized_coef",
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


def top_classes(coefs, n: int) -> np.ndarray:
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

    Returns
    -------
    ndarray of int, shape (min(n, m),)
        Class indices in increasing order (the heatmap keeps class order).

    Examples
    --------
    >>> B = np.array([[9.0, 0.0, 0.1], [0.0, 1.0, -2.0], [0.3, 0.0, 5.0]])
    >>> top_classes(B, 2)   # class 0: 0.3 (its column), 1: 2.0, 2: 2.0
    array([1, 2])
    >>> top_classes([B, np.diag([1.0, 1.0, 1.0]) + np.eye(3, k=-1) * 1e-3], 2)
    array([0, 2])
    """
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
    if isinstance(n, bool | np.bool_) or not isinstance(n, int | np.integer) or n < 1:
        raise DataError(f"n must be a positive integer, got {n!r}.")
    off = np.zeros(m)
    diag = np.zeros(m)
    for B in mats:
        A = np.abs(B)
        diag = np.maximum(diag, np.diag(A))
        np.fill_diagonal(A, 0.0)
        score = np.maximum(A.max(axis=0), A.max(axis=1))
        if score.max() > 0:
            off = np.maximum(off, score / score.max())
    order = np.lexsort((np.arange(m), -diag, -off))
    return np.sort(order[: min(int(n), m)])


# --------------------------------------------------------------------------- co-occurrence


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
    Yi = arr.astype(np.int64)
    return Yi.T @ Yi


# --------------------------------------------------------------------------- coefficient tables


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


def contribution_table(
    models, Y, k, class_names=None, *, evidence=None, relation=None, relation_name=None
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
        sorted by it and :func:`rank_correlation` compares against it.
    relation_name : str, optional
        Its column name (default ``"relation"``).

    Returns
    -------
    pandas.DataFrame
        One row per class ``t`` (including ``k`` itself), index ``t`` (named
        ``"t"``), columns ``class`` (name), ``cooccurrence`` (rows relevant to
        both ``t`` and ``k``; for ``t == k`` the size of ``k``), then (with
        ``evidence``) ``evidence_sd``, then the beta column(s) (each followed
        by its ``_std`` column with ``evidence``).  Sorted by co-occurrence
        descending; ties keep class-index order (stable).  ``table.attrs["target"]`` holds ``k`` and
        ``table.attrs["target_name"]`` its name (used by
        :func:`rank_correlation`).

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
    columns = ["class", "cooccurrence"]
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


def rank_correlation(table: pd.DataFrame, column: str = "beta", *, target=None) -> float:
    """Spearman correlation between |beta| in ``column`` and ``cooccurrence``.

    The target class's own row is **excluded**: its co-occurrence is its
    class size (always the largest) and its beta is the self-weight, which
    would inflate the correlation without saying anything about the other
    classes.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`contribution_table` (or any frame with a
        ``cooccurrence`` column and ``column``; index = class index ``t``).
    column : str, default "beta"
        The beta column to correlate.
    target : int, optional
        Index label of the row to exclude.  Defaults to
        ``table.attrs["target"]`` (set by :func:`contribution_table`); if
        neither is available no row is excluded.

    Returns
    -------
    float
        Spearman's rho (average ranks for ties; :func:`scipy.stats.spearmanr`).
        ``nan`` when undefined: fewer than two rows remain after dropping the
        target and rows with a missing value, or either variable is constant.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"cooccurrence": [9, 5, 3, 1], "beta": [2.0, -0.8, 0.5, 0.1]})
    >>> rank_correlation(t, target=0)  # |beta| 0.8, 0.5, 0.1 vs 5, 3, 1
    1.0
    """
    if column not in table.columns:
        raise DataError(f"Column {column!r} is not in the table; columns: {list(table.columns)}.")
    related = table.attrs.get("relation", "cooccurrence")
    if related not in table.columns:
        raise DataError(f"The table needs a {related!r} column (see contribution_table).")
    if target is None:
        target = table.attrs.get("target")
    rows = table if target is None else table[table.index != target]
    x = np.abs(pd.to_numeric(rows[column], errors="coerce").to_numpy(dtype=float))
    y = pd.to_numeric(rows[related], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(spearmanr(x, y).statistic)


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
    return pd.DataFrame(
        {
            "class": names,
            "n_zero": n_zero,
            "n_nonzero": m - n_zero,
            "irrelevant": [", ".join(names[t] for t in np.flatnonzero(row)) for row in zero],
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
