"""Choosing gamma and lambda, and the lambda path, with the evidence computed once per gamma.

The paper selects the RBF width gamma and the L1 strength lambda from
``{10^2, 10^1, ..., 10^-5}`` on a 10% validation split of the training data.
:func:`tune_holdout` does exactly that, computing the class evidence once per
gamma and running lambda from large to small with warm starts, so an 8 x 8
grid costs 8 evidence computations rather than 64.  :func:`coefficient_path`
gives ``beta`` along a lambda grid for the regularization-path view.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import train_test_split
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from sblr import metrics
from sblr.exceptions import DataError
from sblr.models import SMLClassifier, SparseSBLRClassifier, _LogisticSimilarityClassifier
from sblr.similarity import (
    DEFAULT_WORKING_MEMORY_MB,
    SimilarityFeaturizer,
    minmax_transform,
    rbf_evidence_from_sq_distances,
    sq_distances,
)

#: The paper's grid for both gamma and lambda.
PAPER_GRID = (1e2, 1e1, 1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5)

_RANKING = {"ranking_loss", "one_error", "coverage", "average_precision"}


@dataclass(frozen=True)
class TuningResult:
    """Outcome of :func:`tune_holdout`.

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


def default_metric(multilabel):
    """Average precision for multi-label data, accuracy for multi-class."""
    return "average_precision" if multilabel else "accuracy"


def score_predictions(metric, y_true, y_pred, scores):
    """Value of ``metric`` (a name in :data:`sblr.metrics.MULTILABEL_METRICS` or
    :data:`~sblr.metrics.MULTICLASS_METRICS`) for the task of ``y_true``."""
    multilabel = np.ndim(y_true) == 2 and np.shape(y_true)[1] > 1
    if not multilabel and metric == "macro_f1":
        return float(metrics.multiclass_macro_f1(y_true, y_pred))
    func = getattr(metrics, metric)
    if metric in _RANKING:
        return float(func(y_true, scores))
    return float(func(y_true, y_pred))


def _is_better(metric, a, b):
    if np.isnan(b):
        return not np.isnan(a)
    return a < b if metrics.LOWER_IS_BETTER[metric] else a > b


def coefficient_path(estimator, featurizer, F, lams):
    """``coef_`` and ``intercept_`` of ``estimator`` along a grid of lambdas.

    Lambdas are solved from the largest to the smallest, each warm-started at
    the previous solution; results come back in the order given.

    Parameters
    ----------
    estimator : SparseSBLRClassifier
        Supplies every parameter but ``lam`` (not modified).
    featurizer : SimilarityFeaturizer
        Fitted on the training data.
    F : ndarray of shape (n_samples, n_classes)
        ``featurizer.training_evidence()``.
    lams : sequence of float

    Returns
    -------
    coefs : ndarray of shape (n_lams, n_classes, n_classes)
    intercepts : ndarray of shape (n_lams, n_classes)

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> f = SimilarityFeaturizer().fit(X, y)
    >>> coefs, _ = coefficient_path(SparseSBLRClassifier(), f, f.training_evidence(), [1.0, 1e-3])
    >>> [int(np.count_nonzero(c)) for c in coefs]
    [0, 8]
    """
    lams = np.asarray(lams, dtype=float)
    m = F.shape[1]
    coefs = np.zeros((len(lams), m, m))
    intercepts = np.zeros((len(lams), m))
    previous = None
    for i in np.argsort(-lams, kind="stable"):
        est = clone(estimator).set_params(lam=float(lams[i]))
        est.fit_from_evidence(featurizer, F, warm_start=previous)
        coefs[i], intercepts[i] = est.coef_, est.intercept_
        previous = est
    return coefs, intercepts


def _fits(n_train, n_total, estimator):
    """Whether the training and validation distance matrices fit the memory budget (x2)."""
    budget = 2 * (estimator.working_memory or DEFAULT_WORKING_MEMORY_MB) * 2**20
    return 8 * n_train * n_total <= budget


def _split(X, y, multilabel, val_size, random_state):
    stratify = None
    if not multilabel:
        _, counts = np.unique(y, return_counts=True)
        if counts.min() >= 2 and round(val_size * len(y)) >= len(counts):
            stratify = y
    return train_test_split(X, y, test_size=val_size, random_state=random_state, stratify=stratify)


def tune_holdout(
    estimator,
    X,
    y,
    *,
    gammas=PAPER_GRID,
    lams=PAPER_GRID,
    metric=None,
    val_size=0.1,
    random_state=0,
    progress=None,
):
    """Select gamma (and lambda for SparseSBLR) on a validation split of the training data.

    The paper's scheme: hold out ``val_size`` of ``(X, y)`` (stratified for
    multi-class data), fit on the rest for every grid point, score on the
    held-out part, keep the best (ties: the first in grid order, i.e. the
    larger gamma / lambda).  Only ``(X, y)`` is touched: pass training data.

    Parameters
    ----------
    estimator : SMLClassifier, SBLRClassifier or SparseSBLRClassifier
        Supplies every other parameter (not modified).
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or (n_samples, n_classes)
    gammas, lams : sequence of float
        Grids; ``lams`` is used by SparseSBLR only.
    metric : str, optional
        A metric name of :mod:`sblr.metrics` (default: average precision for
        multi-label data, accuracy for multi-class data).
    val_size : float
    random_state : int
    progress : callable, optional
        Called as ``progress(done, total)`` after each grid point.

    Returns
    -------
    TuningResult

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> res = tune_holdout(SparseSBLRClassifier(), X, y, gammas=[1.0, 0.1], lams=[1e-2, 1e-3])
    >>> sorted(res.best_params), res.metric, len(res.scores)
    (['gamma', 'lam'], 'accuracy', 4)
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:  # a column vector of class labels
        y = y.ravel()
    multilabel = y.ndim == 2 and y.shape[1] > 1
    metric = metric or default_metric(multilabel)
    allowed = metrics.MULTILABEL_METRICS if multilabel else metrics.MULTICLASS_METRICS
    if metric not in allowed:
        task = "multi-label" if multilabel else "multi-class"
        raise DataError(
            f"Unknown metric {metric!r} for {task} data; choose one of {list(allowed)}."
        )
    if len(y) < 10:
        raise DataError(
            f"Tuning needs at least 10 training rows (a 10% validation split); got {len(y)} "
            f"sample{'s' if len(y) != 1 else ''}."
        )
    X_tr, X_val, y_tr, y_val = _split(X, y, multilabel, val_size, random_state)
    sparse = isinstance(estimator, SparseSBLRClassifier)
    lam_grid = list(lams) if sparse else [np.nan]
    total = len(gammas) * len(lam_grid)
    rows, done = [], 0
    distances = None
    for gi, gamma in enumerate(gammas):
        est = clone(estimator).set_params(gamma=float(gamma))
        if isinstance(estimator, _LogisticSimilarityClassifier):
            f = SimilarityFeaturizer(
                kernel=est.kernel,
                gamma=float(gamma),
                normalize=est.normalize,
                working_memory=est.working_memory,
            ).fit(X_tr, y_tr)
            if distances is None and est.kernel == "rbf" and _fits(len(X_tr), len(y), est):
                # one distance computation for the whole gamma grid
                Xv = minmax_transform(np.asarray(X_val, dtype=np.float64), f.data_min_, f.data_max_)
                distances = (sq_distances(f.X_fit_, f.X_fit_), sq_distances(Xv, f.X_fit_))
            if distances is not None:
                F_tr = rbf_evidence_from_sq_distances(
                    distances[0], f.Y_fit_, f.gamma_, leave_one_out=True, normalize=est.normalize
                )
                F_val = rbf_evidence_from_sq_distances(
                    distances[1], f.Y_fit_, f.gamma_, normalize=est.normalize
                )
            else:
                F_tr, F_val = f.training_evidence(), f.transform(X_val)
            previous = None
            for li in sorted(range(len(lam_grid)), key=lambda i: -lam_grid[i]):
                lam = lam_grid[li]
                if sparse:
                    est = clone(est).set_params(lam=float(lam))
                est.fit_from_evidence(f, F_tr, warm_start=previous)
                previous = est
                score = score_predictions(
                    metric,
                    y_val,
                    est.predict_from_evidence(F_val),
                    est.decision_from_evidence(F_val),
                )
                rows.append(
                    {
                        "gamma": float(gamma),
                        "lam": float(lam),
                        "score": score,
                        "_order": gi * len(lam_grid) + li,
                    }
                )
                done += 1
                if progress:
                    progress(done, total)
        else:
            if not isinstance(estimator, SMLClassifier):
                raise DataError(f"Cannot tune {type(estimator).__name__}.")
            est.fit(X_tr, y_tr)
            score = score_predictions(
                metric, y_val, est.predict(X_val), est.decision_function(X_val)
            )
            rows.append({"gamma": float(gamma), "lam": np.nan, "score": score, "_order": gi})
            done += 1
            if progress:
                progress(done, total)
    # grid order (gammas outer, lams inner, as given) decides ties
    scores = pd.DataFrame(rows)
    scores = scores.sort_values("_order").drop(columns="_order").reset_index(drop=True)
    if scores.score.isna().all():
        raise DataError(
            f"Every validation score ({metric}) is undefined: the validation rows' label sets are "
            "all empty or full. Use more data or a metric computed from predictions "
            "(e.g. hamming_loss)."
        )
    best = None
    for i, s in enumerate(scores.score):
        if best is None or _is_better(metric, s, scores.score[best]):
            best = i
    params = {"gamma": float(scores.gamma[best])}
    if sparse:
        params["lam"] = float(scores.lam[best])
    return TuningResult(params, float(scores.score[best]), metric, scores)


class SparseSBLRCV(SparseSBLRClassifier):
    """SparseSBLR with gamma and lambda chosen on a validation split, as the paper does.

    In the spirit of scikit-learn's ``LogisticRegressionCV``: :func:`tune_holdout`
    selects ``(gamma, lambda)`` on a ``val_size`` split of the training data
    (evidence computed once per gamma, lambda warm-started from large to
    small), then the model is refitted on all the training data with the
    chosen values, and the whole coefficient path at the chosen gamma is kept.

    Parameters
    ----------
    gammas, lams : sequence of float, default=PAPER_GRID
    metric : str, optional
        Selection metric (default: average precision for multi-label data,
        accuracy for multi-class data).
    val_size : float, default=0.1
    random_state : int, default=0
    kernel, normalize, ridge, tol, max_iter, force_top1, working_memory
        As in :class:`~sblr.SparseSBLRClassifier`.

    Attributes
    ----------
    best_params_ : dict
        ``{"gamma": ..., "lam": ...}``.
    best_score_ : float
    cv_results_ : pandas.DataFrame
        One row per grid point: ``gamma``, ``lam``, ``score``.
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

    def __init__(
        self,
        *,
        gammas=PAPER_GRID,
        lams=PAPER_GRID,
        metric=None,
        val_size=0.1,
        random_state=0,
        kernel="rbf",
        normalize="mean",
        ridge=0.0,
        tol=1e-6,
        max_iter=100,
        force_top1=False,
        working_memory=None,
    ):
        self.gammas = gammas
        self.lams = lams
        self.metric = metric
        self.val_size = val_size
        self.random_state = random_state
        self.kernel = kernel
        self.normalize = normalize
        self.ridge = ridge
        self.tol = tol
        self.max_iter = max_iter
        self.force_top1 = force_top1
        self.working_memory = working_memory

    def _base(self, **params):
        return SparseSBLRClassifier(
            kernel=self.kernel,
            normalize=self.normalize,
            ridge=self.ridge,
            tol=self.tol,
            max_iter=self.max_iter,
            force_top1=self.force_top1,
            working_memory=self.working_memory,
            **params,
        )

    def fit(self, X, y):
        """Select (gamma, lambda) on a validation split, then refit on all rows.

        Returns
        -------
        self
        """
        self._check_logistic_params()
        X, y = validate_data(self, X, y, multi_output=True, dtype=np.float64)
        check_classification_targets(y)
        result = tune_holdout(
            self._base(),
            X,
            y,
            gammas=self.gammas,
            lams=self.lams,
            metric=self.metric,
            val_size=self.val_size,
            random_state=self.random_state,
        )
        self.best_params_, self.best_score_ = result.best_params, result.best_score
        self.cv_results_ = result.scores
        best = self._base(**self.best_params_)
        featurizer = SimilarityFeaturizer(
            kernel=self.kernel,
            gamma=best.gamma,
            normalize=self.normalize,
            working_memory=self.working_memory,
        ).fit(X, y)
        F = featurizer.training_evidence()
        self.lams_ = np.asarray(self.lams, dtype=float)
        self.coef_path_, self.intercept_path_ = coefficient_path(best, featurizer, F, self.lams_)
        self.fit_from_evidence(featurizer, F)
        return self

    def _lam_value(self):
        # the logistic layer is fitted at the selected lambda
        return float(getattr(self, "best_params_", {}).get("lam", 0.0))
