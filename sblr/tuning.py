"""Choosing gamma and lambda, and the lambda path, with the evidence computed once per gamma.

The paper selects the RBF width gamma and the L1 strength lambda from
``{10^2, 10^1, ..., 10^-5}`` on a 10% validation split of the training data.
:func:`tune` does exactly that (or uses an inner k-fold split), computing the
squared distances once per split, the class evidence once per gamma, and
running lambda from large to small with warm starts, so an 8 x 8 grid costs 8
exponentiations of one distance matrix rather than 64 evidence computations.
:class:`SparseSBLRCV` and :class:`SBLRCV` wrap it as estimators;
:func:`coefficient_path` gives ``beta`` along a lambda grid for the
regularization-path view.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from sblr import decision, metrics
from sblr._validation import Interval, StrOptions, validate_params
from sblr.evaluation import fold_distances, fold_evidence, make_splits, validation_split
from sblr.exceptions import DataError
from sblr.logistic import solve_layer
from sblr.models import (
    SBLRClassifier,
    SMLClassifier,
    SparseSBLRClassifier,
    fits_from_evidence,
)
from sblr.similarity import (
    DEFAULT_WORKING_MEMORY_MB,
    SimilarityFeaturizer,
    featurizer_for,
)

#: The paper's grid for both gamma and lambda.
PAPER_GRID = (1e2, 1e1, 1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5)

#: gamma in half decades from 100 to 0.001: the similarity models peak within a factor of 3
#: of 1 on Mulan's emotions, yeast and scene splits, where the paper's decades skip 0.3 and 3
#: (emotions: SparseSBLR's leave-one-out choice moved from 0.1 to 0.3, test micro-F1 0.697
#: -> 0.709); below 0.001 every similarity is within 1% of 1 on data scaled to [-1, 1].
GAMMA_GRID = (1e2, 3e1, 1e1, 3e0, 1e0, 3e-1, 1e-1, 3e-2, 1e-2, 3e-3, 1e-3)

#: lambda in half decades from 0.1 to 1e-5: on log rates (in nats) lambda >= 0.1 leaves about
#: the base rates, and emotions' leave-one-out choice moved from (0.3, 1e-5) to (0.3, 1e-3)
#: once 3e-3 and its neighbours were on the grid (test AP 0.805 -> 0.807; SML 0.816).
LAMBDA_GRID = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5)

#: The grid of ``sblr evaluate`` and ``sblr fit`` (decisions), by parameter name: gamma and
#: lambda in half decades, C in the paper's decades.
DECISION_GRID = {"gamma": GAMMA_GRID, "lam": LAMBDA_GRID, "C": PAPER_GRID}


# Parameter constraints (sblr._validation), shared with the CV estimators.  The estimator
# argument of tune and coefficient_path is checked by what it can do (fits_from_evidence,
# with a hint naming the model to pass), and both validate with
# prefer_skip_nested_validation=False, so that its own fit still checks its parameters.
_METRIC = [StrOptions(set(metrics.LOWER_IS_BETTER)), None]
_CV = ["cv_object", StrOptions({"loo"})]  # an int >= 2, a splitter, splits, None or "loo"
_VAL_SIZE = [Interval(Real, 0, 1, closed="neither")]


@dataclass(frozen=True)
class TuningResult:
    """Outcome of :func:`tune`.

    Attributes
    ----------
    best_params : dict
        ``{"gamma": ...}`` and, for SparseSBLR, ``"lam"``.
    best_score : float
    metric : str
    scores : pandas.DataFrame
        One row per grid point: ``gamma``, ``lam`` (NaN when not tuned), ``score``.
    """

    best_params: dict
    best_score: float
    metric: str
    scores: pd.DataFrame


@validate_params(
    {"multilabel": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def default_metric(multilabel):
    """Micro-F1 for multi-label data (the model's decisions, at its ``threshold``), accuracy
    for multi-class.  The paper selected by average precision
    (:func:`sblr.protocol.paper_metric`)."""
    return "micro_f1" if multilabel else "accuracy"


@validate_params(
    {
        "estimator": "no_validation",
        "featurizer": [SimilarityFeaturizer],
        "F": ["array-like"],
        "lams": ["array-like"],
        "targets": ["array-like", None],
        "progress": [callable, None],
    },
    prefer_skip_nested_validation=False,
)
def coefficient_path(estimator, featurizer, F, lams, *, targets=None, progress=None):
    """``coef_`` and ``intercept_`` of ``estimator`` along a grid of lambdas.

    Lambdas are solved from the largest to the smallest, each warm-started at
    the previous solution; results come back in the order given.

    Parameters
    ----------
    estimator : SparseSBLRClassifier
        Supplies every parameter but ``lam`` (not modified).  Anything that
        cannot be fitted from cached evidence with a ``lam`` parameter (see
        :func:`sblr.models.fits_from_evidence`) raises ``TypeError``; for
        :class:`SparseSBLRCV`, pass ``SparseSBLRClassifier`` with its settings
        (a fitted ``SparseSBLRCV`` keeps its own path in ``coef_path_``).
    featurizer : SimilarityFeaturizer
        Fitted on the training data.
    F : ndarray of shape (n_samples, n_classes)
        ``featurizer.training_evidence()``.
    lams : sequence of float
    targets : sequence of int, optional
        Only these target classes k (rows of ``coef_``): their problems are solved
        alone, with the estimator's settings, giving the same β as the full path (each
        class's problem is independent of the others').  Ignored for two-class data
        (one problem, mirrored).  Default: every class.
    progress : callable, optional
        ``progress(done, n_lams)`` after each λ.

    Returns
    -------
    coefs : ndarray of shape (n_lams, n_targets, n_classes)
        ``n_targets`` = ``len(targets)`` or ``n_classes``.
    intercepts : ndarray of shape (n_lams, n_targets)

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> from sblr import SimilarityFeaturizer
    >>> f = SimilarityFeaturizer().fit(X, y)
    >>> coefs, _ = coefficient_path(SparseSBLRClassifier(), f, f.training_evidence(), [1.0, 1e-3])
    >>> [int(np.count_nonzero(c)) for c in coefs]
    [0, 8]
    """
    if not (fits_from_evidence(estimator) and "lam" in estimator.get_params()):
        raise TypeError(
            f"coefficient_path refits SparseSBLRClassifier along lambda on cached evidence; got "
            f"{type(estimator).__name__}. Pass SparseSBLRClassifier(...) with the same settings "
            "(a fitted SparseSBLRCV keeps its own path in coef_path_)."
        )
    lams = _checked_grid("lams", lams, positive=False)
    m = F.shape[1]
    Y = featurizer.Y_fit_
    binary = not featurizer.multilabel_ and m == 2
    rows = np.arange(m) if targets is None or binary else np.asarray(targets, dtype=int)
    if rows.ndim != 1 or rows.size == 0 or rows.min() < 0 or rows.max() >= m:
        raise ValueError(f"targets must be class indices in [0, {m - 1}]; got {targets!r}.")
    coefs = np.zeros((len(lams), len(rows), m))
    intercepts = np.zeros((len(lams), len(rows)))
    previous = None
    for done, i in enumerate(np.argsort(-lams, kind="stable"), start=1):
        est = clone(estimator).set_params(lam=float(lams[i]))
        if len(rows) == m:
            est.fit_from_evidence(featurizer, F, warm_start=previous, cuts=False)
            coefs[i], intercepts[i] = est.coef_, est.intercept_
            previous = est
        else:
            start = (None, None) if previous is None else previous
            c, b, _, _ = solve_layer(
                np.asarray(F, dtype=np.float64),
                Y[:, rows],
                *start,
                lam=float(lams[i]),
                ridge=est.ridge,
                tol=est.tol,
                max_iter=est.max_iter,
            )
            coefs[i], intercepts[i] = c, b
            previous = (c, b)
        if progress is not None:
            progress(done, len(lams))
    return coefs, intercepts


def _split_scores(estimator, X, y, train, val, gammas, lam_grid, metric, tick):
    """Validation score of every grid point on one split, in grid order (gammas outer).

    The squared distances are computed once for the whole gamma grid (when
    they fit twice the estimator's memory budget), the evidence once per
    gamma, and lambda runs from large to small with warm starts.
    """
    sparse = isinstance(estimator, SparseSBLRClassifier)
    decides = metric not in metrics.SCORE_METRICS
    out = np.full(len(gammas) * len(lam_grid), np.nan)
    y_val = y[val]
    distances = None
    for gi, gamma in enumerate(gammas):
        est = clone(estimator).set_params(gamma=float(gamma))
        if not fits_from_evidence(estimator):
            est.fit(X[train], y[train])
            out[gi] = metrics.score(
                metric, y_val, est.predict(X[val]), est.decision_function(X[val])
            )
            tick()
            continue
        if gi == 0 and est.kernel == "rbf":
            budget = 2 * (est.working_memory or DEFAULT_WORKING_MEMORY_MB)
            distances = fold_distances(X, y, train, val, max_mb=budget)
        fold = fold_evidence(est, X, y, [(train, val)], distances=[distances])[0]
        previous = None
        for li in sorted(range(len(lam_grid)), key=lambda i: -lam_grid[i]):
            if sparse:
                est = clone(est).set_params(lam=float(lam_grid[li]))
            # a ranking metric needs no decision: its cuts (5 more layer fits) are not fitted
            est.fit_from_evidence(fold.featurizer, fold.F_train, warm_start=previous, cuts=decides)
            previous = est
            out[gi * len(lam_grid) + li] = metrics.score(
                metric,
                y_val,
                est.predict_from_evidence(fold.F_test) if decides else None,
                est.decision_from_evidence(fold.F_test)
                if decides
                else est.proba_from_evidence(fold.F_test),
            )
            tick()
    return out


def _loo_scores(estimator, X, y, gammas, lam_grid, metric, tick):
    """Score of every grid point from the leave-one-out evidence of ALL rows (``cv="loo"``).

    Per gamma the evidence is computed once, each row's own term left out (as every fit
    does); SBLR and SparseSBLR are scored on the out-of-fold probabilities of their layer
    (5 folds of the rows, each warm-started from the fit on all rows, as their cuts are
    fitted), SML on its leave-one-out probabilities.  Decisions take the estimator's own
    rule: cuts fitted on those same probabilities.  Nothing is held out of the evidence, so
    small data keep every row for the choice, at the cost of one evidence per gamma.  It is
    optimistic where training rows have near copies of themselves (a local gamma on sparse
    0/1 text: 10% of enron's training rows have an exact duplicate): on Mulan's emotions,
    scene, yeast and genbase splits it chose as well as inner folds, on enron and on the
    generated rare-label shapes of ``benchmarks/decisions.py`` worse (a birds-shaped set:
    test micro-F1 0.878 against 0.960 by 3 inner folds), so ``sblr evaluate`` selects on
    inner folds by default.
    """
    out = np.full(len(gammas) * len(lam_grid), np.nan)
    sparse = isinstance(estimator, SparseSBLRClassifier)
    multilabel = metrics.is_multilabel(y)
    for gi, gamma in enumerate(gammas):
        est = clone(estimator).set_params(gamma=float(gamma))
        if not fits_from_evidence(estimator):  # SML: its own leave-one-out probabilities
            est.fit(X, y)
            out[gi] = _held_out_score(est, est._loo_proba(), y, multilabel, metric)
            tick()
            continue
        featurizer = featurizer_for(est).fit(X, y)
        F = featurizer.training_evidence()
        Y = featurizer.Y_fit_
        previous = None
        for li in sorted(range(len(lam_grid)), key=lambda i: -lam_grid[i]):
            if sparse:
                est = clone(est).set_params(lam=float(lam_grid[li]))
            est.fit_from_evidence(featurizer, F, warm_start=previous, cuts=False)
            previous = est
            P = est._out_of_fold_proba(F, Y)
            out[gi * len(lam_grid) + li] = _held_out_score(est, P, y, multilabel, metric)
            tick()
    return out


def _held_out_score(est, P, y, multilabel, metric):
    """``metric`` of probabilities ``P`` of held-out rows, decided by ``est``'s own rule."""
    if not multilabel:
        return metrics.score(metric, y, est.classes_[np.argmax(P, axis=1)], P)
    if est.threshold is None:  # SML's own rule: its decisions are where P >= 0.5
        cuts = np.full(P.shape[1], 0.5)
    elif isinstance(est.threshold, str):
        cuts = decision.fit_cuts(P, y, est.threshold)
    else:
        cuts = decision.checked_threshold(est.threshold, P.shape[1])
    fill = None
    if isinstance(est.threshold, str) and est.force_top1 == "auto":
        fill = decision.fit_fill_cut(P, y, cuts)
    return metrics.score(metric, y, decision.decide(P, cuts, est.force_top1 is True, fill), P)


def _checked_grid(name, values, *, positive):
    """A grid as a 1-D float array, or ``ValueError``: non-empty, finite, > 0 (or >= 0)."""
    try:
        grid = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        grid = np.empty((0, 0))
    ok = grid.ndim == 1 and grid.size > 0 and np.isfinite(grid).all()
    if not (ok and ((grid > 0) if positive else (grid >= 0)).all()):
        raise ValueError(
            f"{name} must be a non-empty sequence of finite numbers "
            f"{'> 0' if positive else '>= 0'}; got {values!r}."
        )
    return grid


def _inner_splits(cv, X, y, random_state):
    """The (fit, validation) row indices of ``cv`` (validated by :func:`tune`): ``None`` for
    the hold-out scheme, an int k for sblr's k-fold split (shuffled ``KFold`` for multi-label
    data, ``StratifiedKFold`` for multi-class), a scikit-learn splitter (its
    ``split(X, y)``) or an iterable of (fit, validation) index arrays; ``ValueError`` for a
    bad split."""
    if cv is None:
        return None
    n = len(y)
    if isinstance(cv, Integral):
        if n < 2 * cv:
            raise DataError(
                f"Tuning with {cv} inner folds needs at least {2 * cv} training rows; got "
                f"{n} sample{'s' if n != 1 else ''}."
            )
        return make_splits(y, scheme="kfold", n_splits=int(cv), random_state=random_state)
    splits = list(cv.split(X, y)) if hasattr(cv, "split") else list(cv)
    out = []
    for i, split in enumerate(splits):
        try:
            fit, val = (np.asarray(part) for part in split)
        except (TypeError, ValueError):
            fit = val = np.empty((0, 0))
        ok = all(
            a.ndim == 1 and a.size and a.dtype.kind in "iu" and a.min() >= 0 and a.max() < n
            for a in (fit, val)
        )
        if not ok:
            raise ValueError(
                f"Split {i} of cv is not a pair of non-empty 1-D arrays of row indices in "
                f"[0, {n - 1}]."
            )
        out.append((fit, val))
    if len(out) < 2:
        raise ValueError(f"cv must give at least 2 splits; it gave {len(out)}.")
    return out


@validate_params(
    {
        "estimator": "no_validation",
        "X": ["array-like", "sparse matrix"],
        "y": ["array-like"],
        "gammas": ["array-like"],
        "lams": ["array-like"],
        "metric": _METRIC,
        "cv": _CV,
        "val_size": _VAL_SIZE,
        "random_state": ["random_state"],
        "progress": [callable, None],
        "rule": [StrOptions({"best", "one_se"})],
    },
    prefer_skip_nested_validation=False,
)
def tune(
    estimator,
    X,
    y,
    *,
    gammas=PAPER_GRID,
    lams=PAPER_GRID,
    metric=None,
    cv=None,
    val_size=0.1,
    random_state=0,
    progress=None,
    rule="best",
):
    """Select gamma (and lambda for SparseSBLR) on validation data drawn from the training rows.

    With ``cv=None`` this is the paper's scheme: hold out ``val_size`` of
    ``(X, y)`` (stratified for multi-class data), fit on the rest for every
    grid point, score on the held-out part.  With ``cv=k`` every grid point is
    scored on each fold of an inner k-fold split (shuffled ``KFold`` for
    multi-label data, ``StratifiedKFold`` for multi-class) and the mean is
    used (folds where the metric is undefined are ignored).  The best point
    wins; ties go to the first in grid order, i.e. the larger gamma / lambda.
    Only ``(X, y)`` is touched: pass training data.

    Parameters
    ----------
    estimator : SMLClassifier, SBLRClassifier or SparseSBLRClassifier
        Supplies every other parameter (not modified).  The CV estimators
        raise ``TypeError``: they tune themselves (their ``fit`` calls this
        function with their own grids); pass the underlying model instead.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or (n_samples, n_classes)
    gammas, lams : sequence of float
        Grids; ``lams`` is used by SparseSBLR only.
    metric : str, optional
        A metric name of :mod:`sblr.metrics` (default: micro-F1 for
        multi-label data, accuracy for multi-class data).
    cv : None, "loo", int, cross-validation splitter or iterable, default=None
        ``None``: one validation split of ``val_size``; ``"loo"``: every row, scored on its
        leave-one-out evidence (SBLR and SparseSBLR: their layer's out-of-fold
        probabilities; SML: its leave-one-out probabilities), the evidence computed once per
        gamma for all rows; an int k: sblr's inner k-fold
        split (shuffled ``KFold`` for multi-label data, ``StratifiedKFold`` for
        multi-class); a scikit-learn splitter (``cv.split(X, y)``) or an iterable of
        (fit, validation) row-index pairs, as ``GridSearchCV`` takes them.
    val_size : float
    random_state : int
    progress : callable, optional
        Called as ``progress(done, total)`` after each grid point of each split.
    rule : {"best", "one_se"}, default="best"
        ``"one_se"`` (SparseSBLR with ``cv=k``): at the best point's gamma, the
        LARGEST lambda whose mean score is within one standard error of the best
        mean (the standard error of the best point's scores over the k folds):
        sparser, more stable β at a score indistinguishable from the best.

    Returns
    -------
    TuningResult
        With ``cv=k`` the scores table also has ``split0_score`` ...
        ``split{k-1}_score``.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> res = tune(SparseSBLRClassifier(), X, y, gammas=[1.0, 0.1], lams=[1e-2, 1e-3])
    >>> sorted(res.best_params), res.metric, len(res.scores)
    (['gamma', 'lam'], 'accuracy', 4)
    >>> tune(SBLRClassifier(), X, y, gammas=[1.0, 0.1], cv=3).scores.columns.tolist()
    ['gamma', 'lam', 'score', 'split0_score', 'split1_score', 'split2_score']
    """
    if rule == "one_se" and (cv is None or cv == "loo"):
        raise ValueError("rule='one_se' needs inner folds (cv=k): one split has no standard error.")
    X = check_array(X, accept_sparse="csr", dtype=np.float64)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:  # a column vector of class labels
        y = y.ravel()
    multilabel = metrics.is_multilabel(y)
    metric = metric or default_metric(multilabel)
    allowed = metrics.MULTILABEL_METRICS if multilabel else metrics.MULTICLASS_METRICS
    if metric not in allowed:
        task = "multi-label" if multilabel else "multi-class"
        raise DataError(
            f"Unknown metric {metric!r} for {task} data; choose one of {list(allowed)}."
        )
    if not (isinstance(estimator, SMLClassifier) or fits_from_evidence(estimator)):
        hint = (
            f" {type(estimator).__name__} selects its own hyper-parameters: pass "
            f"{estimator._model.__name__}(...) with its settings to tune, or fit it and "
            "read cv_results_."
            if isinstance(estimator, _SelectionCV)
            else ""
        )
        raise TypeError(
            "tune selects gamma (and lambda) of SMLClassifier, SBLRClassifier or "
            f"SparseSBLRClassifier; got {type(estimator).__name__}.{hint}"
        )
    gammas = _checked_grid("gammas", gammas, positive=True)
    if isinstance(estimator, SparseSBLRClassifier):
        lams = _checked_grid("lams", lams, positive=False)
    splits = None if isinstance(cv, str) else _inner_splits(cv, X, y, random_state)
    if cv == "loo":
        if len(y) < 10:
            raise DataError(
                f"Tuning needs at least 10 training rows; got {len(y)} "
                f"sample{'s' if len(y) != 1 else ''}."
            )
    elif splits is None:
        if len(y) < 10:
            raise DataError(
                f"Tuning needs at least 10 training rows (a 10% validation split); got "
                f"{len(y)} sample{'s' if len(y) != 1 else ''}."
            )
        idx = np.arange(len(y))
        tr, va = validation_split(idx, y, val_size, random_state)[:2]
        splits = [(tr, va)]
    lam_grid = list(lams) if isinstance(estimator, SparseSBLRClassifier) else [np.nan]
    total = 0
    done = 0

    def tick():
        nonlocal done
        done += 1
        if progress:
            progress(done, total)

    if cv == "loo":
        total = len(gammas) * len(lam_grid)
        table = _loo_scores(estimator, X, y, gammas, lam_grid, metric, tick)[None]
    else:
        total = len(splits) * len(gammas) * len(lam_grid)
        table = np.array(
            [
                _split_scores(estimator, X, y, tr, va, gammas, lam_grid, metric, tick)
                for tr, va in splits
            ]
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column stays NaN
        mean = np.nanmean(table, axis=0)
    scores = pd.DataFrame(
        {
            "gamma": np.repeat(np.asarray(gammas, dtype=float), len(lam_grid)),
            "lam": np.tile(np.asarray(lam_grid, dtype=float), len(gammas)),
            "score": mean,
        }
    )
    if cv is not None and cv != "loo":
        for i, column in enumerate(table):
            scores[f"split{i}_score"] = column
    if scores.score.isna().all():
        raise DataError(
            f"Every validation score ({metric}) is undefined: the validation rows' label sets are "
            "all empty or full. Use more data or a metric computed from predictions "
            "(e.g. hamming_loss)."
        )
    best = metrics.best_index(metric, scores.score.to_numpy())
    if rule == "one_se" and isinstance(estimator, SparseSBLRClassifier):
        best = _one_standard_error(scores, table, best, metric)
    params = {"gamma": float(scores.gamma[best])}
    if isinstance(estimator, SparseSBLRClassifier):
        params["lam"] = float(scores.lam[best])
    return TuningResult(params, float(scores.score[best]), metric, scores)


def _one_standard_error(scores, table, best, metric):
    """Row of the largest lambda, at the best point's gamma, whose mean score is within one
    standard error (over the inner folds) of the best mean score."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        column = table[:, best]
        column = column[~np.isnan(column)]
        se = column.std(ddof=1) / np.sqrt(len(column)) if len(column) > 1 else 0.0
    sign = -1.0 if metrics.LOWER_IS_BETTER[metric] else 1.0
    limit = sign * scores.score[best] - se
    same_gamma = np.flatnonzero(scores.gamma.to_numpy() == scores.gamma[best])
    ok = [i for i in same_gamma if sign * scores.score[i] >= limit - 1e-12]
    return max(ok, key=lambda i: scores.lam[i])


class _SelectionCV(ClassifierMixin, BaseEstimator):
    """What the ``*CV`` estimators share: :func:`tune`, a refit on all rows, delegation.

    ``fit`` selects the hyper-parameters with :func:`tune` and refits the
    underlying model (``_model``) on all rows as ``best_estimator_``; the
    predictions and fitted attributes (``coef_``, ``featurizer_`` ...) are
    ``best_estimator_``'s, as in scikit-learn's ``GridSearchCV``.  A CV
    estimator is not an ``_model``: selection needs inner splits of the raw
    rows, so it has no ``fit_from_evidence`` (:func:`sblr.models.fits_from_evidence`
    is False) and a fold of an evaluation refits it, selection included.
    """

    #: The model whose gamma (and lam) are selected; every other parameter is shared.
    _model: type

    def _model_with(self, **params):
        """``_model`` with every parameter it shares with this estimator, plus ``params``."""
        own = self.get_params(deep=False)
        shared = {k: own[k] for k in self._model._get_param_names() if k in own}
        return self._model(**shared, **params)

    def _select_and_refit(self, X, y, **grids):
        """Select on inner splits, refit ``best_estimator_`` on all rows; the training
        evidence of the refit."""
        Xc, yc = validate_data(self, X, y, multi_output=True, dtype=np.float64, accept_sparse="csr")
        check_classification_targets(yc)
        result = tune(
            self._model_with(),
            Xc,
            yc,
            gammas=self.gammas,
            metric=self.metric,
            cv=self.cv,
            val_size=self.val_size,
            random_state=self.random_state,
            **grids,
        )
        self.best_params_, self.best_score_ = result.best_params, result.best_score
        self.cv_results_ = result.scores
        best = self._model_with(**self.best_params_)
        # the rows as given, so that the refit records their feature names as fit(X, y) would
        featurizer = featurizer_for(best).fit(X, y)
        F = featurizer.training_evidence()
        self.best_estimator_ = best.fit_from_evidence(featurizer, F)
        return F

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Select the hyper-parameters on validation data, then refit on all rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_classes)

        Returns
        -------
        self
        """
        self._select_and_refit(X, y)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_label = True
        tags.target_tags.multi_output = True
        return tags


def _of_best_estimator(name):
    """A read-only attribute that is ``best_estimator_``'s (AttributeError before ``fit``)."""
    return property(
        lambda self: getattr(self.best_estimator_, name), doc=f"``best_estimator_.{name}``."
    )


def _by_best_estimator(name):
    """A method that checks the fit and calls ``best_estimator_``'s method ``name``."""

    def method(self, X):
        check_is_fitted(self)
        return getattr(self.best_estimator_, name)(X)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``best_estimator_.{name}``: see the model's method of that name."
    return method


# What the CV estimators give is their refit's, as GridSearchCV's is its best_estimator_'s.
for _name in (
    "coef_",
    "intercept_",
    "classes_",
    "featurizer_",
    "gamma_",
    "approx_",
    "multilabel_",
    "n_iter_",
    "kkt_violation_",
    "threshold_",
):
    setattr(_SelectionCV, _name, _of_best_estimator(_name))
for _name in (
    "predict",
    "predict_proba",
    "decision_function",
    "evidence",
    "logits",
    "logits_from_evidence",
    "decision_from_evidence",
    "proba_from_evidence",
    "predict_from_evidence",
):
    setattr(_SelectionCV, _name, _by_best_estimator(_name))
del _name


def _cv_constraints(base, *grids):
    """The base model's parameter constraints with its gamma (and lam) replaced by grids."""
    out = {k: v for k, v in base._parameter_constraints.items() if k not in ("gamma", "lam")}
    out.update({grid: ["array-like"] for grid in grids})
    out.update(metric=_METRIC, cv=_CV, val_size=_VAL_SIZE)
    return out


_CV_PARAMETERS = """
    metric : str, optional
        Selection metric (default: micro-F1 for multi-label data,
        accuracy for multi-class data).
    cv : None, int, cross-validation splitter or iterable, default=None
        ``None``: the paper's scheme, one validation split of ``val_size``;
        an int ``k``: the mean score over an inner k-fold split; a scikit-learn
        splitter or an iterable of (fit, validation) index pairs: those splits.
    val_size : float, default=0.1
    random_state : int, default=0
        Seed of the validation split(s) and of an approximate feature map."""


class SparseSBLRCV(_SelectionCV):
    """SparseSBLR with gamma and lambda chosen on validation data, as the paper does.

    In the spirit of scikit-learn's ``LogisticRegressionCV``: :func:`tune`
    selects ``(gamma, lambda)`` on a ``val_size`` split of the training data
    (or an inner k-fold split with ``cv=k``; evidence computed once per gamma
    and split, lambda warm-started from large to small), then the model is
    refitted on all the training data with the chosen values, and the whole
    coefficient path at the chosen gamma is kept.

    Parameters
    ----------
    gammas, lams : sequence of float, default=PAPER_GRID
    {cv_parameters}
    lam_scale, kernel, normalize, ridge, tol, max_iter, force_top1, threshold, working_memory, \
approx, n_components
        As in :class:`~sblr.SparseSBLRClassifier` (``threshold`` is also the decision of
        every grid point while selecting).

    Attributes
    ----------
    best_estimator_ : SparseSBLRClassifier
        The model refitted on all rows at ``best_params_`` (this estimator's ``coef_``,
        ``intercept_``, ``featurizer_`` ... are its).
    best_params_ : dict
        ``{{"gamma": ..., "lam": ...}}``.
    best_score_ : float
    cv_results_ : pandas.DataFrame
        One row per grid point: ``gamma``, ``lam``, ``score`` (and
        ``split<i>_score`` with ``cv=k``).
    lams_ : ndarray of shape (n_lams,)
    coef_path_ : ndarray of shape (n_lams, n_classes, n_classes)
        ``coef_`` for every lambda of ``lams_`` at the chosen gamma (all rows).
    intercept_path_ : ndarray of shape (n_lams, n_classes)
    coef_, intercept_, classes_, gamma_, featurizer_, ...
        Of the refitted model at the chosen (gamma, lambda).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = SparseSBLRCV(gammas=[1.0, 0.1], lams=[1e-2, 1e-3]).fit(X, y)
    >>> sorted(clf.best_params_), clf.coef_path_.shape
    (['gamma', 'lam'], (2, 3, 3))
    """

    _model = SparseSBLRClassifier
    _parameter_constraints = _cv_constraints(SparseSBLRClassifier, "gammas", "lams")

    def __init__(
        self,
        *,
        gammas=PAPER_GRID,
        lams=PAPER_GRID,
        metric=None,
        cv=None,
        val_size=0.1,
        random_state=0,
        lam_scale="absolute",
        kernel="rbf",
        normalize="log_rate",
        ridge=0.0,
        tol=1e-6,
        max_iter=100,
        force_top1="auto",
        threshold="micro_f1",
        working_memory=None,
        approx="auto",
        n_components=500,
    ):
        self.gammas = gammas
        self.lams = lams
        self.metric = metric
        self.cv = cv
        self.val_size = val_size
        self.random_state = random_state
        self.lam_scale = lam_scale
        self.kernel = kernel
        self.normalize = normalize
        self.ridge = ridge
        self.tol = tol
        self.max_iter = max_iter
        self.force_top1 = force_top1
        self.threshold = threshold
        self.working_memory = working_memory
        self.approx = approx
        self.n_components = n_components

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Select gamma and lambda on validation data, refit on all rows, keep the path.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_classes)

        Returns
        -------
        self
        """
        F = self._select_and_refit(X, y, lams=self.lams)
        best = self.best_estimator_
        self.lams_ = np.asarray(self.lams, dtype=float)
        self.coef_path_, self.intercept_path_ = coefficient_path(
            best, best.featurizer_, F, self.lams_
        )
        return self


class SBLRCV(_SelectionCV):
    """SBLR with gamma chosen on validation data (the paper's grid by default).

    :func:`tune` scores every gamma on a ``val_size`` split of the training
    data (or an inner k-fold split with ``cv=k``), then the model is refitted
    on all the training data with the best gamma.

    Parameters
    ----------
    gammas : sequence of float, default=PAPER_GRID
    {cv_parameters}
    kernel, normalize, ridge, tol, max_iter, force_top1, threshold, working_memory, approx, \
n_components
        As in :class:`~sblr.SBLRClassifier` (``threshold`` is also the decision of every
        grid point while selecting).

    Attributes
    ----------
    best_estimator_ : SBLRClassifier
        The model refitted on all rows at ``best_params_`` (this estimator's ``coef_``,
        ``intercept_``, ``featurizer_`` ... are its).
    best_params_ : dict
        ``{{"gamma": ...}}``.
    best_score_ : float
    cv_results_ : pandas.DataFrame
        One row per gamma: ``gamma``, ``lam`` (NaN), ``score`` (and
        ``split<i>_score`` with ``cv=k``).
    coef_, intercept_, classes_, gamma_, featurizer_, ...
        Of the refitted model at the chosen gamma.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = SBLRCV(gammas=[10.0, 1.0, 0.1], cv=3).fit(X, y)
    >>> clf.best_params_["gamma"] in (10.0, 1.0, 0.1), clf.coef_.shape
    (True, (3, 3))
    """

    _model = SBLRClassifier
    _parameter_constraints = _cv_constraints(SBLRClassifier, "gammas")

    def __init__(
        self,
        *,
        gammas=PAPER_GRID,
        metric=None,
        cv=None,
        val_size=0.1,
        random_state=0,
        kernel="rbf",
        normalize="log_rate",
        ridge=1e-6,
        tol=1e-6,
        max_iter=100,
        force_top1="auto",
        threshold="micro_f1",
        working_memory=None,
        approx="auto",
        n_components=500,
    ):
        self.gammas = gammas
        self.metric = metric
        self.cv = cv
        self.val_size = val_size
        self.random_state = random_state
        self.kernel = kernel
        self.normalize = normalize
        self.ridge = ridge
        self.tol = tol
        self.max_iter = max_iter
        self.force_top1 = force_top1
        self.threshold = threshold
        self.working_memory = working_memory
        self.approx = approx
        self.n_components = n_components


SparseSBLRCV.__doc__ = SparseSBLRCV.__doc__.format(cv_parameters=_CV_PARAMETERS.strip())
SBLRCV.__doc__ = SBLRCV.__doc__.format(cv_parameters=_CV_PARAMETERS.strip())
