"""Hold-out and k-fold evaluation, with the class evidence of each fold computed once.

The evidence is the expensive part (O(d n^2)); the logistic layer is cheap.
:func:`fold_evidence` computes each fold's training (leave-one-out) and test
evidence for one gamma; :func:`evaluate_folds` then fits and scores any
SBLR / SparseSBLR on them in a fraction of the time, which is what lets the
dashboard's lambda slider answer at once.  Only estimators for which
:func:`sblr.models.fits_from_evidence` holds reuse the evidence; every other
one (SML, the CV estimators, which select gamma inside each training fold,
baselines) is refitted on the fold's raw training rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.metrics import confusion_matrix
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split
from sklearn.utils import check_array

from sblr import metrics
from sblr._validation import HasMethods, Interval, StrOptions, validate_params
from sblr.exceptions import DataError
from sblr.metrics import is_multilabel
from sblr.models import fits_from_evidence
from sblr.similarity import (
    SimilarityFeaturizer,
    featurizer_for,
    rbf_evidence_from_sq_distances,
    sq_distances,
)


@dataclass(frozen=True)
class Fold:
    """One train/test split with its class evidence.

    Attributes
    ----------
    train, test : ndarray of int
        Row indices.
    featurizer : SimilarityFeaturizer
        Fitted on the training rows.
    F_train : ndarray of shape (n_train, n_classes)
        Leave-one-out evidence of the training rows.
    F_test : ndarray of shape (n_test, n_classes)
        Evidence of the test rows (every training row counts).
    """

    train: np.ndarray
    test: np.ndarray
    featurizer: SimilarityFeaturizer
    F_train: np.ndarray
    F_test: np.ndarray


@dataclass(frozen=True)
class EvaluationResult:
    """Scores of one model under one evaluation scheme.

    Attributes
    ----------
    per_fold : pandas.DataFrame
        One row per fold, one column per metric.
    summary : pandas.DataFrame
        Index: metric name; columns ``label``, ``mean``, ``std``, ``lower_is_better``.
    confusion : ndarray of shape (n_classes, n_classes) or None
        Multi-class: confusion counts summed over folds (rows: true class).
    classes : ndarray
    """

    per_fold: pd.DataFrame
    summary: pd.DataFrame
    confusion: np.ndarray | None
    classes: np.ndarray


# Parameter constraints (sblr._validation).  The functions that take an estimator validate
# with prefer_skip_nested_validation=False, so that its own fit still checks its parameters.
_X = ["array-like", "sparse matrix"]
_ESTIMATOR = [HasMethods(["fit", "predict"])]
_FOLD = [Fold, "array-like"]
_SHARE = [Interval(Real, 0, 1, closed="neither")]
_SPLIT_PARAMS = {
    "scheme": [StrOptions({"holdout", "kfold"})],
    "test_size": _SHARE,
    "n_splits": [Interval(Integral, 2, None, closed="left")],
    "random_state": ["random_state"],
}


def _stratify(y, n_test):
    """The stratified hold-out rule: multi-class labels are stratified when every class has
    at least 2 rows and the test part can hold one row of each class; else ``None``."""
    if is_multilabel(y):
        return None
    _, counts = np.unique(y, return_counts=True)
    return y if counts.min() >= 2 and n_test >= len(counts) else None


@validate_params(
    {"X": _X, "y": ["array-like"], "val_size": _SHARE, "random_state": ["random_state"]},
    prefer_skip_nested_validation=True,
)
def validation_split(X, y, val_size, random_state):
    """``train_test_split(X, y, test_size=val_size)`` with the stratified hold-out rule of
    :func:`make_splits` (the paper's 10% validation split inside a training fold).

    Examples
    --------
    >>> X_fit, X_val, y_fit, y_val = validation_split(np.arange(20), np.arange(20) % 2, 0.1, 0)
    >>> len(X_fit), sorted(y_val.tolist())
    (18, [0, 1])
    """
    y = np.asarray(y)
    stratify = _stratify(y, round(val_size * len(y)))
    return train_test_split(X, y, test_size=val_size, random_state=random_state, stratify=stratify)


@validate_params(
    {"y": ["array-like"], **_SPLIT_PARAMS},
    prefer_skip_nested_validation=True,
)
def make_splits(y, *, scheme="holdout", test_size=0.25, n_splits=5, random_state=0):
    """Train/test index pairs: one stratified hold-out split, or k folds.

    Multi-class data are stratified when every class has enough rows
    (``StratifiedKFold`` / a stratified split), otherwise split at random;
    multi-label data use a shuffled ``KFold`` / random split.

    Parameters
    ----------
    y : ndarray of shape (n_samples,) or (n_samples, n_classes)
    scheme : {"holdout", "kfold"}
    test_size : float
        Hold-out share of the rows.
    n_splits : int
        Number of folds.
    random_state : int

    Returns
    -------
    list of (train, test) index arrays

    Examples
    --------
    >>> y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> [(len(tr), len(te)) for tr, te in make_splits(y, scheme="kfold", n_splits=4)]
    [(6, 2), (6, 2), (6, 2), (6, 2)]
    """
    y = np.asarray(y)
    n = len(y)
    idx = np.arange(n)
    multilabel = is_multilabel(y)
    if scheme == "holdout":
        n_test = int(round(test_size * n))
        if n_test < 1 or n - n_test < 2:
            raise DataError(
                f"A {test_size:.0%} hold-out split of {n} rows leaves too few rows to "
                "train or test on; use more data or a different test share."
            )
        train, test = train_test_split(
            idx, test_size=n_test, random_state=random_state, stratify=_stratify(y, n_test)
        )
        return [(np.sort(train), np.sort(test))]
    if n < 2 * n_splits:
        raise DataError(
            f"{n_splits}-fold cross-validation needs at least {2 * n_splits} rows "
            f"(2 per fold); this data has {n}. Use fewer folds or a hold-out split."
        )
    if not multilabel and np.unique(y, return_counts=True)[1].min() >= n_splits:
        folds = StratifiedKFold(n_splits, shuffle=True, random_state=random_state)
        return list(folds.split(idx, y))
    return list(KFold(n_splits, shuffle=True, random_state=random_state).split(idx))


#: Largest pair of distance matrices :func:`fold_distances` returns, in MiB (yeast's
#: 2,417 rows take 45 MiB; above that the evidence is recomputed for each gamma).
DISTANCE_CACHE_MB = 64


@validate_params(
    {
        "X": _X,
        "y": ["array-like"],
        "train": ["array-like"],
        "test": ["array-like"],
        "max_mb": [Interval(Real, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def fold_distances(X, y, train, test, *, max_mb=DISTANCE_CACHE_MB):
    """Squared distances of one fold's scaled rows, to get its rbf evidence at any gamma.

    Distances do not depend on gamma, so a caller that keeps them (the
    dashboard, for its gamma slider) pays only ``exp`` and one product with
    the label matrix per gamma: see ``distances`` of :func:`fold_evidence`.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    y : ndarray
    train, test : ndarray of int
        Row indices (``test`` may be empty).
    max_mb : float
        Return None when the two matrices would take more memory than this.

    Returns
    -------
    (D_train, D_test) or None
        ``D_train[i, j] = ||x_i - x_j||^2`` over the scaled training rows and
        ``D_test`` of shape (n_test, n_train), scaled as the training rows.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0]]); y = np.array([0, 1, 1])
    >>> D_train, D_test = fold_distances(X, y, np.array([0, 2]), np.array([1]))
    >>> D_train, D_test
    (array([[0., 4.],
           [4., 0.]]), array([[1., 1.]]))
    """
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    n_train, n_test = len(train), len(test)
    if 8 * n_train * (n_train + n_test) > max_mb * 2**20:
        return None
    f = SimilarityFeaturizer(approx=None).fit(X[train], np.asarray(y)[train])
    return sq_distances(f.X_fit_, f.X_fit_), sq_distances(f.scale(X[test]), f.X_fit_)


@validate_params(
    {
        "estimator": _ESTIMATOR,
        "X": _X,
        "y": ["array-like"],
        "splits": ["array-like"],
        "distances": ["array-like", None],
        "progress": [callable, None],
    },
    prefer_skip_nested_validation=False,
)
def fold_evidence(estimator, X, y, splits, *, distances=None, progress=None):
    """Fit a featurizer per split (with the estimator's kernel, gamma, normalize).

    Parameters
    ----------
    estimator : SBLRClassifier or SparseSBLRClassifier
        Supplies the evidence parameters (kernel, gamma, normalize, approx, ...).
        An estimator that cannot be fitted from cached evidence
        (:func:`sblr.models.fits_from_evidence`) raises ``TypeError``: its
        evidence parameters would not be the ones its ``fit`` uses.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    y : ndarray
    splits : list of (train, test)
        ``test`` may be empty (evidence of the training rows only).
    distances : list, optional
        Per split, :func:`fold_distances` of that split or None.  Used for
        exact rbf evidence (the same numbers, without recomputing distances).
    progress : callable, optional
        ``progress(done, total)`` after each fold.

    Returns
    -------
    list of Fold
    """
    if not fits_from_evidence(estimator):
        raise TypeError(
            f"fold_evidence computes the evidence SBLRClassifier / SparseSBLRClassifier are "
            f"fitted from; {type(estimator).__name__} is fitted from the raw rows "
            "(score it with score_fold or evaluate on plain (train, test) splits)."
        )
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    y = np.asarray(y)
    folds = []
    for i, (train, test) in enumerate(splits):
        f = featurizer_for(estimator).fit(X[train], y[train])
        D = distances[i] if distances is not None else None
        if D is not None and isinstance(f.kernel, str) and f.kernel == "rbf" and f.approx_ is None:
            F_train = rbf_evidence_from_sq_distances(
                D[0], f.Y_fit_, f.gamma_, leave_one_out=True, normalize=f.normalize
            )
            F_test = rbf_evidence_from_sq_distances(D[1], f.Y_fit_, f.gamma_, normalize=f.normalize)
        else:
            F_train = f.training_evidence()
            F_test = f.transform(X[test]) if len(test) else np.empty((0, F_train.shape[1]))
        folds.append(Fold(train, test, f, F_train, F_test))
        if progress:
            progress(i + 1, len(splits))
    return folds


def _scores(y_true, y_pred, scores, multilabel):
    if multilabel:
        return metrics.multilabel_report(y_true, y_pred, scores)
    # macro-F1 over the classes present in this fold (true or predicted): a class absent
    # from a small test fold and never predicted would otherwise count as F1 = 1
    return metrics.multiclass_report(y_true, y_pred)


def _rows(fold):
    """``(train, test)`` row indices of a :class:`Fold` or a plain pair."""
    return (fold.train, fold.test) if isinstance(fold, Fold) else fold


@validate_params(
    {
        "estimator": _ESTIMATOR,
        "X": _X,
        "y": ["array-like"],
        "fold": _FOLD,
        "progress": [callable, None],
        "decision_progress": [callable, None],
    },
    prefer_skip_nested_validation=False,
)
def fit_fold(estimator, X, y, fold, *, progress=None, decision_progress=None):
    """A clone of ``estimator`` fitted on one fold's training rows.

    An estimator that can be fitted from cached evidence
    (:func:`sblr.models.fits_from_evidence`: SBLR, SparseSBLR) reuses a
    :class:`Fold`'s evidence (only the logistic layer is fitted, then its decision;
    ``progress(done, total)`` after each class's problem of the layer,
    ``decision_progress(done, total)`` of its cuts' out-of-fold layer fits); any other
    estimator (SML, the CV estimators, whose own selection then runs inside
    the fold), or a plain ``(train, test)`` pair, is fitted on ``X[train]``.
    """
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    y = np.asarray(y)
    train, _ = _rows(fold)
    est = clone(estimator)
    if isinstance(fold, Fold) and fits_from_evidence(est):
        # the layer, then its decision (as cuts=True does), each with its own progress
        est.fit_from_evidence(fold.featurizer, fold.F_train, progress=progress, cuts=False)
        est.fit_decision(fold.F_train, progress=decision_progress)
    else:
        est.fit(X[train], y[train])
    return est


def _on_test_rows(est, X, fold, method):
    """``est.<method>`` of the fold's test rows (``X`` checked by the caller): from the
    Fold's evidence when ``est`` was fitted from it (``predict``, ``decision_function`` or
    ``predict_proba``)."""
    if isinstance(fold, Fold) and fits_from_evidence(est):
        by_evidence = {
            "predict": est.predict_from_evidence,
            "decision_function": est.decision_from_evidence,
            "predict_proba": est.proba_from_evidence,
        }
        return by_evidence[method](fold.F_test)
    return getattr(est, method)(X[_rows(fold)[1]])


@validate_params(
    {
        "estimator": _ESTIMATOR,
        "X": _X,
        "y": ["array-like"],
        "fold": _FOLD,
        "classes": ["array-like", None],
        "prefit": ["boolean"],
    },
    prefer_skip_nested_validation=False,
)
def score_fold(estimator, X, y, fold, classes=None, *, prefit=False):
    """Fit ``estimator`` on one fold's training rows (:func:`fit_fold`) and score it on its
    test rows.

    ``prefit=True``: ``estimator`` is already :func:`fit_fold`'s result for this fold (one
    fit for both the scores and :func:`fold_probabilities`).

    Returns
    -------
    scores : dict
        Metric name -> value.
    confusion : ndarray of shape (n_classes, n_classes) or None
        Multi-class only, over ``classes`` (default: the classes of ``y``).
    """
    y = np.asarray(y)
    multilabel = is_multilabel(y)
    if classes is None:
        classes = np.arange(y.shape[1]) if multilabel else np.unique(y)
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    _, test = _rows(fold)
    est = estimator if prefit else fit_fold(estimator, X, y, fold)
    y_pred = _on_test_rows(est, X, fold, "predict")
    scores = _on_test_rows(est, X, fold, "decision_function")
    values = _scores(y[test], y_pred, scores, multilabel)
    cm = None if multilabel else confusion_matrix(y[test], y_pred, labels=classes)
    return values, cm


@validate_params(
    {
        "estimator": _ESTIMATOR,
        "X": _X,
        "y": ["array-like"],
        "fold": _FOLD,
        "prefit": ["boolean"],
    },
    prefer_skip_nested_validation=False,
)
def fold_probabilities(estimator, X, y, fold, *, prefit=False):
    """Fit ``estimator`` on one fold's training rows; its ``predict_proba`` of the test rows.

    As :func:`score_fold` (``prefit`` too).  For threshold and per-class views
    (:func:`sblr.metrics.per_label_report`), which then need no refit.

    Returns
    -------
    test : ndarray of int
        The test rows.
    P : ndarray of shape (n_test, n_classes)
        Columns in the order of the classes (``np.unique(y)`` for multi-class labels).
    """
    y = np.asarray(y)
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    _, test = _rows(fold)
    est = estimator if prefit else fit_fold(estimator, X, y, fold)
    P = np.asarray(_on_test_rows(est, X, fold, "predict_proba"), dtype=float)
    if not is_multilabel(y):  # a class missing from the training rows gets a column of 0
        classes = np.unique(y)
        full = np.zeros((len(test), len(classes)))
        full[:, np.searchsorted(classes, est.classes_)] = P
        P = full
    return np.asarray(test), P


@validate_params(
    {"fold_scores": ["array-like"], "classes": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def summarize(fold_scores, classes):
    """Combine :func:`score_fold` results into an :class:`EvaluationResult`."""
    per_fold = pd.DataFrame([values for values, _ in fold_scores])
    per_fold.index.name = "fold"
    cms = [cm for _, cm in fold_scores if cm is not None]
    summary = pd.DataFrame(
        {
            "label": [metrics.METRIC_LABELS[c] for c in per_fold.columns],
            "mean": per_fold.mean(),
            "std": per_fold.std(ddof=0),
            "lower_is_better": [metrics.LOWER_IS_BETTER[c] for c in per_fold.columns],
        }
    )
    summary.index.name = "metric"
    return EvaluationResult(per_fold, summary, sum(cms) if cms else None, np.asarray(classes))


@validate_params(
    {
        "estimator": _ESTIMATOR,
        "X_test": _X,
        "y_test": ["array-like"],
        "classes": ["array-like", None],
    },
    prefer_skip_nested_validation=False,
)
def score_test(estimator, X_test, y_test, classes=None):
    """Score a FITTED estimator on a supplied test set (a test file read ``like=`` the
    training data): the same metrics as a fold of :func:`score_fold`, as an
    :class:`EvaluationResult` of one "fold".

    Parameters
    ----------
    estimator : fitted classifier
    X_test : array-like or sparse matrix
    y_test : ndarray
        Multi-class labels (as the estimator's ``classes_``) or a 0/1 matrix.
    classes : array-like, optional
        The confusion matrix's classes (default the estimator's ``classes_``).

    Examples
    --------
    >>> from sblr import SMLClassifier
    >>> X = np.array([[0.0], [0.2], [1.0], [1.2]]); y = np.array([0, 0, 1, 1])
    >>> model = SMLClassifier(gamma=1.0).fit(X, y)
    >>> result = score_test(model, np.array([[0.1], [1.1]]), np.array([0, 1]))
    >>> float(result.summary.loc["accuracy", "mean"])
    1.0
    """
    y_test = np.asarray(y_test)
    multilabel = is_multilabel(y_test)
    y_pred = estimator.predict(X_test)
    scores = estimator.decision_function(X_test)
    values = _scores(y_test, y_pred, scores, multilabel)
    cm = None
    if not multilabel:
        classes = np.asarray(estimator.classes_ if classes is None else classes)
        cm = confusion_matrix(y_test, y_pred, labels=classes)
    else:
        classes = np.arange(y_test.shape[1])
    return summarize([(values, cm)], classes)


@validate_params(
    {
        "estimator": _ESTIMATOR,
        "X": _X,
        "y": ["array-like"],
        "folds": ["array-like"],
        "progress": [callable, None],
    },
    prefer_skip_nested_validation=False,
)
def evaluate_folds(estimator, X, y, folds, *, progress=None):
    """:func:`score_fold` on every fold, summarized.

    ``folds`` may be :class:`Fold` objects (an estimator that
    :func:`~sblr.models.fits_from_evidence` then reuses their evidence; any
    other is refitted on the fold's training rows) or plain ``(train, test)``
    pairs.

    Returns
    -------
    EvaluationResult
    """
    y = np.asarray(y)
    classes = np.arange(y.shape[1]) if is_multilabel(y) else np.unique(y)
    results = []
    for i, fold in enumerate(folds):
        results.append(score_fold(estimator, X, y, fold, classes))
        if progress:
            progress(i + 1, len(folds))
    return summarize(results, classes)


@validate_params(
    {
        "estimator": _ESTIMATOR,
        "X": _X,
        "y": ["array-like"],
        **_SPLIT_PARAMS,
        "progress": [callable, None],
    },
    prefer_skip_nested_validation=False,
)
def evaluate(
    estimator, X, y, *, scheme="holdout", test_size=0.25, n_splits=5, random_state=0, progress=None
):
    """Hold-out or k-fold evaluation of one estimator.

    The evidence of each fold is computed once when the estimator can be
    fitted from it (:func:`sblr.models.fits_from_evidence`); any other
    estimator is refitted on each fold's training rows, so a CV estimator
    (:class:`~sblr.SparseSBLRCV`, :class:`~sblr.SBLRCV`) runs its own
    selection inside every training fold, as ``cross_val_score`` does with
    ``LogisticRegressionCV``.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sblr import SparseSBLRClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> res = evaluate(SparseSBLRClassifier(), X, y, scheme="kfold", n_splits=5)
    >>> res.summary.loc["accuracy", "mean"] > 0.95, res.confusion.sum()
    (np.True_, np.int64(178))
    """
    splits = make_splits(
        y, scheme=scheme, test_size=test_size, n_splits=n_splits, random_state=random_state
    )
    folds = splits
    if fits_from_evidence(estimator):
        folds = fold_evidence(estimator, X, y, splits)
    return evaluate_folds(estimator, X, y, folds, progress=progress)
