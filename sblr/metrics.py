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

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.metrics import accuracy_score as _sk_accuracy
from sklearn.metrics import f1_score as _sk_f1

from sblr._validation import Interval, Options, StrOptions, validate_params
from sblr.exceptions import DataError

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

#: Default F1 value of a label with no true and no predicted positives (Mulan).
MULAN_ZERO_DIVISION = 1.0

# Parameter constraints (sblr._validation): the arrays' shapes and values are checked below
# and raise DataError, the data being the user's.
_ZERO_DIVISION = [Options(Real, {0.0, 1.0}), "nan"]
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
_PREDICTIONS = {"Y_true": ["array-like"], "Y_pred": ["array-like"]}
_RANKING = {"Y_true": ["array-like"], "scores": ["array-like"]}
_LABELS = {"y_true": ["array-like"], "y_pred": ["array-like"]}


# --------------------------------------------------------------------------- validation


def _as_2d(a, name: str) -> np.ndarray:
    if hasattr(a, "toarray"):  # scipy sparse
        a = a.toarray()
    arr = np.asarray(a)
    if arr.ndim != 2:
        raise DataError(
            f"{name} must be a 2-D (n_samples, n_labels) array, got an array with "
            f"{arr.ndim} dimension(s) and shape {arr.shape}."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise DataError(f"{name} is empty (shape {arr.shape}); need at least one row and label.")
    return arr


def _as_indicator(a, name: str) -> np.ndarray:
    arr = _as_2d(a, name)
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if not (np.issubdtype(arr.dtype, np.number)):
        raise DataError(f"{name} must be a numeric 0/1 indicator matrix, got dtype {arr.dtype}.")
    bad = ~np.isin(arr, (0, 1))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise DataError(
            f"{name} must contain only 0 and 1 (a label indicator matrix); found "
            f"{arr[i, j].item()!r} at row {i}, label {j} ({int(bad.sum())} bad entries in total)."
        )
    return arr.astype(np.int8)


def _as_scores(a, name: str = "scores") -> np.ndarray:
    arr = _as_2d(a, name)
    try:
        arr = arr.astype(float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be real-valued; could not convert to float: {exc}") from None
    if not np.isfinite(arr).all():
        raise DataError(f"{name} contains NaN or infinite values; all scores must be finite.")
    return arr


def _same_shape(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    if a.shape != b.shape:
        raise DataError(
            f"{name_a} has shape {a.shape} but {name_b} has shape {b.shape}; "
            "they must have the same number of rows and labels."
        )


def _pair(Y_true, Y_pred) -> tuple[np.ndarray, np.ndarray]:
    Yt = _as_indicator(Y_true, "Y_true")
    Yp = _as_indicator(Y_pred, "Y_pred")
    _same_shape(Yt, Yp, "Y_true", "Y_pred")
    return Yt, Yp


def _ranked(Y_true, scores) -> tuple[np.ndarray, np.ndarray]:
    Yt = _as_indicator(Y_true, "Y_true")
    S = _as_scores(scores)
    _same_shape(Yt, S, "Y_true", "scores")
    return Yt, S


def _informative_rows(Yt: np.ndarray) -> np.ndarray:
    """Mask of rows whose true set is neither empty nor all labels."""
    n_pos = Yt.sum(axis=1)
    return (n_pos > 0) & (n_pos < Yt.shape[1])


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


# --------------------------------------------------------------------------- bipartition


@validate_params(
    _PREDICTIONS,
    prefer_skip_nested_validation=True,
)
def hamming_loss(Y_true, Y_pred) -> float:
    """Fraction of (instance, label) pairs that are misclassified.

    ``HL = 1/(n m) * sum_i |Y_i xor Yhat_i|``.  All rows count.

    Parameters
    ----------
    Y_true, Y_pred : array-like of shape (n, m)
        0/1 label indicator matrices.

    Returns
    -------
    float
        In ``[0, 1]``; lower is better.

    Raises
    ------
    DataError
        If the matrices are not 2-D 0/1 matrices of the same shape.

    Examples
    --------
    >>> hamming_loss([[1, 0], [0, 1]], [[1, 1], [0, 1]])
    0.25
    """
    Yt, Yp = _pair(Y_true, Y_pred)
    return float(np.mean(Yt != Yp))


@validate_params(
    _PREDICTIONS,
    prefer_skip_nested_validation=True,
)
def subset_accuracy(Y_true, Y_pred) -> float:
    """Fraction of rows whose predicted label set equals the true set exactly.

    Rows with an empty true set count (an empty prediction is then correct).

    Parameters
    ----------
    Y_true, Y_pred : array-like of shape (n, m)
        0/1 label indicator matrices.

    Returns
    -------
    float
        In ``[0, 1]``; higher is better.

    Examples
    --------
    >>> subset_accuracy([[1, 0], [0, 1], [0, 0]], [[1, 0], [1, 1], [0, 0]])
    0.6666666666666666
    """
    Yt, Yp = _pair(Y_true, Y_pred)
    return float(np.mean((Yt == Yp).all(axis=1)))


@validate_params(
    {**_PREDICTIONS, "zero_division": _ZERO_DIVISION},
    prefer_skip_nested_validation=True,
)
def micro_f1(Y_true, Y_pred, *, zero_division: float = MULAN_ZERO_DIVISION) -> float:
    """Micro-averaged F1: F1 of the pooled (tp, fp, fn) counts over all labels.

    ``F1 = 2 tp / (2 tp + fp + fn)`` with the counts summed over every label.
    Equal to :func:`sklearn.metrics.f1_score` (``average="micro"``), computed
    from the counts directly (no per-call validation overhead).

    Parameters
    ----------
    Y_true, Y_pred : array-like of shape (n, m)
        0/1 label indicator matrices.
    zero_division : float, default 1.0
        Value when ``tp + fp + fn == 0`` overall (nothing true, nothing
        predicted).  1.0 is Mulan's convention ("predicted the empty set and
        the truth is empty: perfect").

    Returns
    -------
    float

    Examples
    --------
    >>> micro_f1([[1, 0], [0, 1]], [[1, 1], [0, 1]])  # tp=2, fp=1, fn=0
    0.8
    """
    Yt, Yp = _pair(Y_true, Y_pred)
    tp, fp, fn = _counts(Yt, Yp)
    denom = 2 * tp.sum() + fp.sum() + fn.sum()
    return float(2 * tp.sum() / denom) if denom else float(zero_division)


def _counts(Yt, Yp):
    """Per-label true positives, false positives and false negatives."""
    Yt, Yp = Yt.astype(bool), Yp.astype(bool)
    tp = (Yt & Yp).sum(axis=0)
    return tp, Yp.sum(axis=0) - tp, Yt.sum(axis=0) - tp


@validate_params(
    {**_PREDICTIONS, "zero_division": _ZERO_DIVISION},
    prefer_skip_nested_validation=True,
)
def macro_f1(Y_true, Y_pred, *, zero_division: float = MULAN_ZERO_DIVISION) -> float:
    """Macro-averaged F1: unweighted mean over the ``m`` labels of per-label F1.

    Per label ``F1_j = 2 tp_j / (2 tp_j + fp_j + fn_j)``.  Equal to
    :func:`sklearn.metrics.f1_score` (``average="macro"``), computed from the
    counts directly.

    **Convention for labels with no true and no predicted positives**
    (``tp + fp + fn == 0``): such a label scores ``zero_division``, by default
    **1.0**, and it *is* included in the mean over all ``m`` labels.  This is
    what Mulan does (``MacroFMeasure`` with
    ``InformationRetrievalMeasures.fMeasure`` returns 1 when
    ``tp + fp + fn == 0``): a label that is absent from the test fold and never
    predicted has been handled perfectly.  scikit-learn's own default is 0,
    which penalises a model for correctly never predicting a rare label; pass
    ``zero_division=0.0`` to get it.  A label that is predicted but never
    true (``fp > 0``), or true but never predicted (``fn > 0``), always
    scores 0 regardless of this setting.

    Parameters
    ----------
    Y_true, Y_pred : array-like of shape (n, m)
        0/1 label indicator matrices.
    zero_division : float, default 1.0
        F1 of a label with ``tp + fp + fn == 0``.

    Returns
    -------
    float

    Examples
    --------
    >>> Yt = [[1, 0, 0], [1, 0, 0]]
    >>> Yp = [[1, 1, 0], [0, 0, 0]]
    >>> macro_f1(Yt, Yp)  # labels: F1 = 2/3, 0, 1 (absent and never predicted)
    0.5555555555555555
    >>> macro_f1(Yt, Yp, zero_division=0.0)
    0.2222222222222222
    """
    Yt, Yp = _pair(Y_true, Y_pred)
    tp, fp, fn = _counts(Yt, Yp)
    denom = 2 * tp + fp + fn
    f1 = np.full(len(tp), float(zero_division))
    np.divide(2 * tp, denom, out=f1, where=denom > 0)
    return float(f1.mean())


# --------------------------------------------------------------------------- ranking


@validate_params(
    _RANKING,
    prefer_skip_nested_validation=True,
)
def ranking_loss(Y_true, scores) -> float:
    """Fraction of (relevant, irrelevant) label pairs that are mis-ordered.

    For a row with relevant set ``Y`` and irrelevant set ``Ybar``::

        RL_i = |{(l, l') in Y x Ybar : s_l <= s_l'}| / (|Y| |Ybar|)

    (Zhang & Zhou 2014).  **Ties count as errors**: a relevant and an
    irrelevant label with equal scores form a mis-ordered pair (this is the
    ``<=`` of the definition, and what :func:`sklearn.metrics.label_ranking_loss`
    does).

    **Skipped rows**: rows whose true set is empty or full (all ``m`` labels)
    have no (relevant, irrelevant) pair; they are *excluded* from the average
    (numerator and denominator).  scikit-learn instead averages them in as
    0-loss rows, which would make the number depend on how many unlabelled
    rows the test set has; on the kept rows the value equals scikit-learn's
    (computed here with array operations in row blocks rather than a Python
    loop over rows).  If no row is kept the result is ``nan`` (no warning).

    Parameters
    ----------
    Y_true : array-like of shape (n, m)
        0/1 label indicator matrix.
    scores : array-like of shape (n, m)
        Real-valued, finite label scores; higher means more relevant.

    Returns
    -------
    float
        In ``[0, 1]``, lower is better; ``nan`` if every row was skipped.

    Examples
    --------
    >>> ranking_loss([[1, 0, 0]], [[0.5, 0.9, 0.1]])  # pairs (0,1) wrong, (0,2) right
    0.5
    >>> ranking_loss([[0, 0, 0], [1, 1, 1]], [[1, 2, 3], [1, 2, 3]])
    nan
    """
    Yt, S = _ranked(Y_true, scores)
    keep = _informative_rows(Yt)
    if not keep.any():
        return float("nan")
    Yt, S = Yt[keep].astype(np.float64), S[keep]
    m = S.shape[1]
    wrong = np.empty(len(S))
    step = max(1, 2**22 // (m * m))
    for start in range(0, len(S), step):
        s, y = S[start : start + step], Yt[start : start + step]
        # pairs (relevant r, irrelevant f) with s_f >= s_r
        bad = s[:, None, :] >= s[:, :, None]
        wrong[start : start + step] = np.einsum("ir,irf,if->i", y, bad, 1.0 - y)
    n_pos = Yt.sum(axis=1)
    return float(np.mean(wrong / (n_pos * (m - n_pos))))


@validate_params(
    _RANKING,
    prefer_skip_nested_validation=True,
)
def one_error(Y_true, scores) -> float:
    """Fraction of rows whose top-scored label is not relevant.

    ``OE = 1/n' * sum_i [argmax_l s_il not in Y_i]``.  **Ties** for the top
    score are broken by the **lowest label index** (:func:`numpy.argmax`), so
    the result can depend on label order when scores tie.

    **Skipped rows**: rows whose true set is empty (always an error) or full
    (never an error) are excluded from the average, as for
    :func:`ranking_loss` and :func:`average_precision`; ``n'`` is the number
    of kept rows.  (Mulan averages one-error over all rows.)  If no row is
    kept the result is ``nan`` (no warning).

    Parameters
    ----------
    Y_true : array-like of shape (n, m)
        0/1 label indicator matrix.
    scores : array-like of shape (n, m)
        Real-valued, finite label scores; higher means more relevant.

    Returns
    -------
    float
        In ``[0, 1]``, lower is better; ``nan`` if every row was skipped.

    Examples
    --------
    >>> one_error([[0, 1, 0], [1, 0, 0]], [[0.2, 0.9, 0.1], [0.3, 0.3, 0.0]])
    0.0
    """
    Yt, S = _ranked(Y_true, scores)
    keep = _informative_rows(Yt)
    if not keep.any():
        return float("nan")
    Yk, Sk = Yt[keep], S[keep]
    top = np.argmax(Sk, axis=1)
    return float(np.mean(Yk[np.arange(len(top)), top] == 0))


@validate_params(
    _RANKING,
    prefer_skip_nested_validation=True,
)
def coverage(Y_true, scores) -> float:
    """How far down the ranking one must go, on average, to cover all relevant labels.

    ``cov_i = max_{l in Y_i} rank_i(l) - 1`` where ``rank_i(l) = |{l' :
    s_l' >= s_l}|`` (1 = top).  This is scikit-learn's
    :func:`~sklearn.metrics.coverage_error` **minus 1**, the convention of
    Zhang & Zhou (2014) and Mulan (``Coverage``: a single relevant label
    ranked first has coverage 0).  **Ties** are pessimistic: every label
    tied with the lowest-scored relevant label counts as ranked above it.

    **All rows are averaged**, unlike the other ranking measures.  A row with
    an **empty** true set contributes **0** (as in Mulan, and as
    scikit-learn's ``coverage_error`` which gives such rows 0, not -1); a row
    with a full true set contributes ``m - 1``.  Hence
    ``coverage == coverage_error - 1`` exactly when no row is empty.

    Parameters
    ----------
    Y_true : array-like of shape (n, m)
        0/1 label indicator matrix.
    scores : array-like of shape (n, m)
        Real-valued, finite label scores; higher means more relevant.

    Returns
    -------
    float
        In ``[0, m - 1]``; lower is better.

    Examples
    --------
    >>> coverage([[0, 1, 1]], [[0.9, 0.5, 0.1]])  # lowest relevant label is ranked 3rd
    2.0
    >>> coverage([[0, 0, 0]], [[0.9, 0.5, 0.1]])  # empty row contributes 0
    0.0
    """
    Yt, S = _ranked(Y_true, scores)
    relevant = Yt.astype(bool)
    # Lowest score among relevant labels (+inf for empty rows, so nothing is >= it).
    lowest = np.where(relevant, S, np.inf).min(axis=1, keepdims=True)
    depth = (S >= lowest).sum(axis=1)  # coverage_error's per-row value; 0 for empty rows
    return float(np.mean(np.maximum(depth - 1, 0)))


@validate_params(
    {"Y_true": ["array-like"], "ranking_loss_value": [Interval(Real, 0, 1, closed="both")]},
    prefer_skip_nested_validation=True,
)
def coverage_floor(Y_true, ranking_loss_value) -> float:
    """The least :func:`coverage` any scores with ranking loss ``ranking_loss_value`` can have
    on rows with these true label sets: a check of published (coverage, ranking loss) pairs.

    Per row with ``y`` relevant labels of ``m`` (``0 < y < m``): the lowest relevant label has
    the other ``y - 1`` relevant labels above it, and at least as many irrelevant labels above
    it as any relevant label has, ``a``; the row's misordered pairs are at most ``y · a``, so
    ``a >= RL_i · (m - y)`` and ``cov_i >= y - 1 + RL_i · (m - y)``.  An empty row has
    coverage 0 (= ``y - 1 + 1``), a full one ``m - 1``.  Averaged, with ``RL`` the mean over
    the rows that have one (those neither empty nor full, as :func:`ranking_loss` takes them)::

        coverage >= mean(y) - 1 + share_empty + share_defined · RL · min_defined(m - y)

    Examples
    --------
    >>> Y = [[1, 0, 0, 0], [1, 1, 0, 0]]          # mean y = 1.5, min(m - y) = 2
    >>> coverage_floor(Y, 0.25)                   # 0.5 + 0.25 · 2
    1.0
    >>> S = [[0.2, 0.9, 0.1, 0.0], [0.9, 0.8, 0.7, 0.1]]
    >>> round(ranking_loss(Y, S), 4), coverage(Y, S), round(coverage_floor(Y, 1 / 6), 4)
    (0.1667, 1.0, 0.8333)
    """
    Y = np.asarray(Y_true).astype(bool)
    n, m = Y.shape
    y = Y.sum(axis=1)
    defined = (y > 0) & (y < m)
    if n == 0:
        return float("nan")
    floor = y.mean() - 1.0 + (y == 0).mean()
    if defined.any():
        floor += defined.mean() * float(ranking_loss_value) * (m - y[defined]).min()
    return float(floor)


@validate_params(
    _RANKING,
    prefer_skip_nested_validation=True,
)
def average_precision(Y_true, scores) -> float:
    """Average fraction of relevant labels ranked at or above each relevant label.

    For a row with relevant set ``Y``::

        AP_i = 1/|Y| * sum_{l in Y} |{l' in Y : rank(l') <= rank(l)}| / rank(l)

    with ``rank(l) = |{l' : s_l' >= s_l}|`` (Zhang & Zhou 2014).  **Ties** are
    pessimistic: labels tied with ``l`` count as ranked at or above it, both
    in ``rank(l)`` and in the numerator.  This is exactly
    :func:`sklearn.metrics.label_ranking_average_precision_score` (which uses
    ``rankdata(..., "max")``); we compute it vectorized, which is ~100 times
    faster than scikit-learn's row loop, and test the two agree.

    **Skipped rows**: rows whose true set is empty or full are excluded from
    the average.  (scikit-learn scores them 1 and averages them in; Mulan
    skips only empty rows — a full row always has AP = 1.)  If no row is
    kept the result is ``nan`` (no warning).

    Parameters
    ----------
    Y_true : array-like of shape (n, m)
        0/1 label indicator matrix.
    scores : array-like of shape (n, m)
        Real-valued, finite label scores; higher means more relevant.

    Returns
    -------
    float
        In ``(0, 1]``, higher is better; ``nan`` if every row was skipped.

    Examples
    --------
    >>> average_precision([[1, 0, 1]], [[0.9, 0.5, 0.1]])  # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    Yt, S = _ranked(Y_true, scores)
    keep = _informative_rows(Yt)
    if not keep.any():
        return float("nan")
    return float(np.mean(_average_precision_rows(Yt[keep], S[keep])))


def _average_precision_rows(Y, S, chunk_cells=2**24):
    """Per-row AP with pessimistic ties, vectorized over row chunks.

    Equals scikit-learn's ``label_ranking_average_precision_score`` on rows
    with at least one relevant label (tested), which loops over rows in
    Python and dominated the time of a tuning grid.
    """
    n, m = S.shape
    out = np.empty(n)
    step = max(1, chunk_cells // (m * m))
    for start in range(0, n, step):
        s, y = S[start : start + step], Y[start : start + step].astype(bool)
        ge = s[:, None, :] >= s[:, :, None]  # ge[i, l, l'] = s_il' >= s_il
        rank = ge.sum(axis=2)
        rank_relevant = (ge & y[:, None, :]).sum(axis=2)
        out[start : start + step] = np.where(y, rank_relevant / rank, 0.0).sum(axis=1) / y.sum(
            axis=1
        )
    return out


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
        return float(globals()[metric](y_true, scores))
    if metric == "macro_f1" and not is_multilabel(y_true):
        return float(multiclass_macro_f1(y_true, y_pred))
    return float(globals()[metric](y_true, y_pred))


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
    import pandas as pd

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
    from sklearn.metrics import average_precision_score, precision_recall_curve

    y = np.asarray(y_true).astype(int).ravel()
    p = np.asarray(p, dtype=float).ravel()
    if y.shape != p.shape:
        raise DataError(f"y_true and p differ in length: {y.size} and {p.size}.")
    if not y.any():
        return np.array([1.0]), np.array([0.0]), np.array([]), float("nan")
    precision, recall, thresholds = precision_recall_curve(y, p)
    return precision, recall, thresholds, float(average_precision_score(y, p))
