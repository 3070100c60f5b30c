"""Multi-label metrics: how good is a predicted label set, and a ranking of the labels?

The bipartition measures (:func:`hamming_loss`, :func:`subset_accuracy`, :func:`micro_f1`,
:func:`macro_f1`) and the ranking measures (:func:`ranking_loss`, :func:`one_error`,
:func:`coverage`, :func:`average_precision`, and :func:`coverage_floor`), with Mulan's
conventions (see :mod:`sblr.metrics`), and the checks of the indicator and score matrices
they take.  Public through :mod:`sblr.metrics`.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from sblr._validation import Interval, Options, validate_params
from sblr.exceptions import DataError

#: Default F1 value of a label with no true and no predicted positives (Mulan).
MULAN_ZERO_DIVISION = 1.0


# Parameter constraints (sblr._validation): the arrays' shapes and values are checked below
# and raise DataError, the data being the user's.
_ZERO_DIVISION = [Options(Real, {0.0, 1.0}), "nan"]


_PREDICTIONS = {"Y_true": ["array-like"], "Y_pred": ["array-like"]}
_RANKING = {"Y_true": ["array-like"], "scores": ["array-like"]}


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
