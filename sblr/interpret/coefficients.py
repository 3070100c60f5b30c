"""β read as a table: standardized coefficients, the classes worth showing, label co-occurrence
and the per-class contribution tables, the λ at which a class enters, sparsity."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from sblr._validation import validate_params
from sblr.display import label_set
from sblr.exceptions import DataError
from sblr.interpret._shared import (
    MODEL_PARAM,
    NAMES_PARAM,
    between_param,
    checked_index,
    class_name_list,
    coef_of,
    count_param,
    dense_array,
    index_param,
)

__all__ = [
    "class_affinity",
    "cluster_order",
    "conditional_frequency",
    "contribution_table",
    "cooccurrence",
    "entry_lambdas",
    "evidence_sd",
    "frequent_classes",
    "label_sets",
    "sparsity_summary",
    "standardized_coef",
    "starting_class",
    "top_classes",
]


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
    F = dense_array(F)
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
    lambda: {"model_or_coef": MODEL_PARAM, "F": ["array-like", None], "sd": ["array-like", None]},
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
    coef = dense_array(coef).astype(float)
    if coef.ndim == 0 or coef.shape[-1] == 0:
        raise DataError(f"Coefficients need a last axis of classes, got shape {coef.shape}.")
    sd = evidence_sd(F) if sd is None else dense_array(sd).astype(float).reshape(-1)
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


@validate_params(
    lambda: {"Y": ["array-like"], "class_names": ["array-like"], "top": "no_validation"},
    prefer_skip_nested_validation=True,
)
def label_sets(Y, class_names, *, top=None) -> pd.DataFrame:
    """The distinct label sets of a multi-label data set, the most frequent first.

    Co-occurrence counts pairs; a label set is a row's whole combination of classes, what
    a model must give exactly for subset accuracy.

    Parameters
    ----------
    Y : array-like of shape (n_samples, m)
        0/1 label matrix (:meth:`sblr.io.Dataset.label_matrix`).
    class_names : sequence of str, length m
    top : int, optional
        Only the ``top`` most frequent sets (all of them by default).

    Returns
    -------
    pandas.DataFrame
        One row per distinct label set (ties: in class order, the empty set last):
        ``label set`` (as :func:`sblr.display.label_set` writes it: the names joined by "; ",
        "(none)" for the empty set),
        ``labels`` (its size), ``rows`` (how many rows carry exactly it) and ``share`` (of
        all rows). ``attrs["n_sets"]`` is the number of distinct sets, listed or not.

    Raises
    ------
    DataError
        If ``Y`` is not a 2-D 0/1 matrix with one column per name.

    Examples
    --------
    >>> Y = [[1, 0, 1], [1, 0, 1], [0, 1, 0], [0, 0, 0]]
    >>> label_sets(Y, ["a", "b", "c"])
      label set  labels  rows  share
    0      a; c       2     2   0.50
    1         b       1     1   0.25
    2    (none)       0     1   0.25
    >>> label_sets(Y, ["a", "b", "c"], top=1).attrs["n_sets"]
    3
    """
    Y = np.asarray(Y)
    if Y.ndim != 2 or Y.shape[1] != len(class_names):
        raise DataError(
            f"Y must be a 2-D label matrix with {len(class_names)} columns (one per class "
            f"name); got shape {Y.shape}."
        )
    if Y.size and not np.isin(Y, (0, 1)).all():
        raise DataError("Y must hold only 0 and 1 (a label indicator matrix).")
    if top is not None and (
        isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1
    ):
        raise DataError(f"top must be a positive whole number of sets, got {top!r}.")
    if Y.shape[0] == 0:
        table = pd.DataFrame({"label set": [], "labels": [], "rows": [], "share": []})
        table.attrs["n_sets"] = 0
        return table
    if Y.shape[1] == 0:  # no classes: every row's set is the empty one
        Y = np.zeros((Y.shape[0], 1), dtype=bool)
        class_names = [""]
    # each row's set as bytes, class 0 the highest bit: sorted bytes are sets in class order
    packed = np.packbits(Y.astype(bool), axis=1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    sets = Y[first].astype(bool)
    sizes = sets.sum(axis=1)
    # most rows first; ties in class order (np.unique's order reversed: 1 before 0), empty last
    order = np.lexsort((-np.arange(len(first)), sizes == 0, -counts))[:top]
    table = pd.DataFrame(
        {
            "label set": [label_set(class_names, sets[i]) for i in order],
            "labels": sizes[order].astype(int),
            "rows": counts[order].astype(int),
            "share": counts[order] / Y.shape[0],
        }
    )
    table.attrs["n_sets"] = len(first)
    return table


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
    kept = list(dict.fromkeys(int(checked_index(t, m, "include")) for t in include))
    taken = set(kept)
    rest = [int(t) for t in order if int(t) not in taken]
    return np.sort(np.array((kept + rest)[: min(max(n, len(kept)), m)], dtype=int))


@validate_params(
    lambda: {"coef": ["array-like"], "classes": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def cluster_order(coef, classes=None) -> np.ndarray:
    """``classes`` (default: all) ordered so that classes linked by β sit together, for a
    class-by-class heatmap of many classes: average-linkage clustering on the links
    ``|β[k, t]| + |β[t, k]|`` among them (a class's own weight left out; distance: the largest
    link minus the link), leaves in scipy's optimal order (neighbours as similar as the tree
    allows).  Classes without any link keep their class order, after the linked ones.

    Examples
    --------
    >>> B = np.zeros((4, 4)); B[0, 2] = B[2, 0] = 1.0; B[1, 3] = 0.5
    >>> cluster_order(B).tolist()      # 0 beside 2, 1 beside 3
    [0, 2, 3, 1]
    """
    from scipy.cluster.hierarchy import leaves_list, linkage  # lazy: scipy's clustering
    from scipy.spatial.distance import squareform

    B = np.abs(np.asarray(coef, dtype=np.float64))
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"coef must be a square class-by-class matrix; got shape {B.shape}.")
    m = B.shape[0]
    idx = np.arange(m) if classes is None else np.asarray(classes, dtype=np.intp).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= m or np.unique(idx).size != idx.size):
        raise ValueError(f"classes must be distinct class indices in [0, {m - 1}].")
    idx = np.sort(idx)
    S = B[np.ix_(idx, idx)]
    S = S + S.T
    np.fill_diagonal(S, 0.0)
    S[~np.isfinite(S)] = 0.0
    linked = S.any(axis=1)
    if linked.sum() < 3:
        return np.r_[idx[linked], idx[~linked]]
    sub = S[np.ix_(linked, linked)]
    D = sub.max() - sub
    np.fill_diagonal(D, 0.0)
    tree = linkage(squareform(D, checks=False), method="average", optimal_ordering=True)
    return np.r_[idx[linked][leaves_list(tree)], idx[~linked]]


@validate_params(
    lambda: {
        "coefs": ["array-like", Mapping],
        "n": count_param(),
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
    mats = [coef_of(B, "coefs") for B in mats]
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
    arr = dense_array(Y)
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
    Y = dense_array(Y).astype(float)
    F = np.asarray(F, dtype=float)
    if Y.ndim != 2 or Y.shape != F.shape:
        raise DataError(f"Y and F must have the same (n, m) shape; got {Y.shape} and {F.shape}.")
    counts = Y.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (Y.T @ F) / counts[:, None]


@validate_params(
    lambda: {
        "models": MODEL_PARAM,
        "Y": ["array-like"],
        "k": index_param(),
        "class_names": NAMES_PARAM,
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

    coefs = {name: coef_of(mdl, f"model {name!r}") for name, mdl in named.items()}
    first = next(iter(named.values()))
    m = next(iter(coefs.values())).shape[0]
    for name, coef in coefs.items():
        if coef.shape[0] != m:
            raise DataError(
                f"Model {name!r} has {coef.shape[0]} classes but the first model has {m}."
            )
    k = checked_index(k, m)

    classes = getattr(first, "classes_", None)
    C = cooccurrence(Y, classes=classes if np.ndim(Y) == 1 else None)
    if C.shape[0] != m:
        raise DataError(f"Y has {C.shape[0]} classes but the model(s) have {m}.")
    names = class_name_list(class_names, m, fallback=classes)

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
        "coef": MODEL_PARAM,
        "class_names": NAMES_PARAM,
        "tol": between_param(0, None, "left"),
    },
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
    B = coef_of(coef, "coef")
    m = B.shape[0]
    names = class_name_list(class_names, m)
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
