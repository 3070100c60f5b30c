"""The experimental protocol of Ma & Chen: 10-fold CV with hyper-parameters chosen per fold.

For every (data set, method, fold) the hyper-parameters are selected on the
TRAINING rows of the fold only, the model is refitted on the whole training
fold and scored on the test fold:

* ``selection="holdout"`` (the paper's scheme): hold out 10% of the training
  fold (stratified for multi-class data), score every grid point on it, keep
  the best (ties: the first in grid order, i.e. the larger value).  SML, SBLR
  and SparseSBLR use :func:`sblr.tuning.tune` (evidence computed once per
  gamma and split); BR-SVM runs the same scheme over its (gamma, C) grid with
  scikit-learn's ``GridSearchCV`` on that split.
* ``selection="inner_kfold"``: the mean validation score over an inner
  ``inner_folds``-fold split of the training fold (NaN scores ignored);
  :func:`sblr.tuning.tune` with ``cv=inner_folds`` for the similarity models.

The paper's selection metric is average precision (multi-label) or accuracy
(multi-class), :func:`paper_metric`, and its multi-label decision the cut 0.5 (SML: the top
``xi(x)`` classes); ``metric=`` and ``threshold=`` select by another metric and decide by a
fitted cut (:mod:`sblr.decision`), as ``sblr evaluate`` and ``sblr fit`` do by default
(micro-F1, ``"micro_f1"``).  Test folds are scored with
:data:`TASK_METRICS`.  Folds come from :func:`sblr.evaluation.make_splits`
(shuffled ``KFold`` for multi-label data, ``StratifiedKFold`` for multi-class
data when every class has at least ``folds`` rows) with a fixed seed.

:func:`run_benchmark` runs every (data set x method x fold) with joblib (local
processes, or a Dask distributed cluster with ``scheduler=``) and caches each
result as a small JSON file keyed by the data content, the method
and every protocol setting, so a re-run computes only what is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.model_selection import GridSearchCV

from sblr import metrics
from sblr._backends import joblib_backend
from sblr.baselines import BRSVMClassifier, brsvm_grid
from sblr.decision import RULE_WORDS
from sblr.evaluation import make_splits, validation_split
from sblr.exceptions import DataError
from sblr.io import Dataset
from sblr.registry import REGISTRY, Method
from sblr.registry import get as get_method
from sblr.tuning import PAPER_GRID, tune

__all__ = [
    "METHODS",
    "TASK_METRICS",
    "BenchmarkResult",
    "FoldResult",
    "MethodSpec",
    "collect_results",
    "run_benchmark",
    "build_decision",
    "decisions_text",
    "paper_metric",
    "run_fold",
    "select_params",
    "task_y",
]

#: Bump when a change alters results, so old cache entries are not reused.  2: multi-class
#: rows are coded in the data set's class order (classes 2, 9, 10 were coded by their text,
#: "10" < "2" < "9"), which can move rows between stratified folds.  3: SML's multi-label
#: scores keep evidence of very different sizes apart (its ranking metrics and selection).
#: 4: multi-label folds also report micro- and macro-F1 (the decisions beside the rankings).
PROTOCOL_VERSION = 4

#: Metrics reported on the test folds, by task.
TASK_METRICS = {
    "multilabel": (
        "hamming_loss",
        "ranking_loss",
        "one_error",
        "coverage",
        "average_precision",
        "micro_f1",
        "macro_f1",
    ),
    "multiclass": ("accuracy",),
}


#: The methods of the paper's tables, in its column order: :data:`sblr.registry.REGISTRY`
#: (its entries were this module's ``MethodSpec``).
METHODS = REGISTRY
MethodSpec = Method

SELECTIONS = ("holdout", "inner_kfold", "loo")


def paper_metric(multilabel):
    """The paper's selection metric: average precision (multi-label) or accuracy."""
    return "average_precision" if multilabel else "accuracy"


def build_decision(spec, threshold):
    """The decision parameters of ``spec``'s estimator: ``{"threshold": threshold}`` for the
    similarity models; with ``threshold=None`` the paper's model whole (SBLR and SparseSBLR:
    the cut 0.5 on a layer over the mean evidence f̄, ``normalize="mean"``; SML: its own
    rule), so that the paper's protocol reproduces the paper; ``{}`` for a baseline."""
    if not spec.decides_by_cut:
        return {}
    if threshold is None:
        if spec.learns_beta:
            return {"threshold": 0.5, "normalize": "mean"}
        return {"threshold": None}
    return {"threshold": threshold}


def decisions_text(threshold, multilabel=True):
    """How the similarity models decide, in the words of Compare's table and the benchmark's
    tables.md: the choice a comparison was run with, named where its numbers are shown.

    Examples
    --------
    >>> decisions_text("micro_f1")
    'fitted cuts (one cut maximizing micro-F1 on held-out training rows)'
    >>> decisions_text(None)
    "the paper's decisions (π ≥ 0.5 on the mean evidence f̄, SML its top ξ)"
    >>> decisions_text(None, multilabel=False)
    "the paper's models (the mean evidence f̄), the most probable class"
    """
    if not multilabel:
        if threshold is None:
            return "the paper's models (the mean evidence f̄), the most probable class"
        return "the most probable class"
    if threshold is None:
        return "the paper's decisions (π ≥ 0.5 on the mean evidence f̄, SML its top ξ)"
    if isinstance(threshold, str):
        how = RULE_WORDS[threshold].replace("held-out rows", "held-out training rows")
        return f"fitted cuts ({how})"
    return f"a fixed cut, π ≥ {', '.join(f'{t:g}' for t in np.ravel(threshold))}"


@dataclass(frozen=True)
class FoldResult:
    """Outcome of :func:`run_fold`.

    Attributes
    ----------
    rows : list of dict
        One per metric: ``dataset, method, fold, metric, value``.
    params : dict
        The hyper-parameters used for the final fit (selected or fixed).
    select_seconds : float
        Wall time of the selection on the training fold.
    fit_seconds : float
        Wall time of the final fit on the training fold.
    counts : dict
        Multi-label data: ``test_rows``, ``no_label_rows`` (test rows given no label) and
        ``truth_no_label_rows`` (test rows without a true label).
    """

    rows: list
    params: dict
    select_seconds: float
    fit_seconds: float
    counts: dict = field(default_factory=dict)

    def to_json(self):
        return {
            "rows": self.rows,
            "params": self.params,
            "select_seconds": self.select_seconds,
            "fit_seconds": self.fit_seconds,
            "counts": self.counts,
        }

    @classmethod
    def from_json(cls, data):
        return cls(
            data["rows"],
            data["params"],
            data["select_seconds"],
            data["fit_seconds"],
            data.get("counts", {}),
        )


class BenchmarkResult(tuple):
    """``(results, hyperparameters)``: two DataFrames, unpackable as a pair.

    ``results`` has one row per dataset x method x fold x metric (columns
    ``dataset, method, fold, metric, value``); ``hyperparameters`` one row per
    dataset x method x fold with the parameters used and the timings.
    """

    __slots__ = ()

    def __new__(cls, results, hyperparameters):
        return super().__new__(cls, (results, hyperparameters))

    @property
    def results(self):
        return self[0]

    @property
    def hyperparameters(self):
        return self[1]


# --------------------------------------------------------------------------- helpers
def task_y(dataset):
    """y as the protocol uses it: the 0/1 label matrix, or integer class codes in the order of
    ``Dataset.class_names`` (:meth:`sblr.io.Dataset.class_codes`).

    Examples
    --------
    >>> from sblr.samples import load_sample
    >>> task_y(load_sample("wine"))[:3]
    array([0, 0, 0])
    """
    if dataset.task == "multilabel":
        return np.asarray(dataset.y)
    return dataset.class_codes()


def benchmark_splits(dataset, folds=10, seed=0):
    """The outer folds of :func:`run_benchmark` (and of the dashboard's compare page).

    Stratified k-fold of :func:`task_y` (:func:`sblr.evaluation.make_splits`), so the
    command line and the dashboard score the same test rows.

    Examples
    --------
    >>> from sblr.samples import load_sample
    >>> splits = benchmark_splits(load_sample("wine"), folds=3)
    >>> len(splits), sum(len(test) for _, test in splits)
    (3, 178)
    """
    return make_splits(task_y(dataset), scheme="kfold", n_splits=folds, random_state=seed)


def _scores(est, X, multilabel):
    if not multilabel:
        return None
    return np.asarray(est.decision_function(X), dtype=float)


def _metric_values(names, y_true, y_pred, scores):
    return {name: metrics.score(name, y_true, y_pred, scores) for name in names}


def grid_values(grid, name):
    """The values tried for the tuned parameter ``name``: ``grid`` itself (the same values for
    every parameter, as in the paper), or its entry for ``name`` when ``grid`` maps names to
    values.

    Examples
    --------
    >>> grid_values([1.0, 0.1], "lam"), grid_values({"gamma": [1.0], "lam": [1e-3]}, "lam")
    ([1.0, 0.1], [0.001])
    """
    if isinstance(grid, Mapping):
        if name not in grid:
            raise ValueError(f"the grid gives no values for {name!r}; it has {sorted(grid)}.")
        return list(grid[name])
    return list(grid)


def _grid_points(spec, grid):
    """Every combination of the tuned parameters, in grid order (first parameter outer)."""
    points = [{}]
    for name in spec.tuned:
        points = [{**p, name: float(v)} for p in points for v in grid_values(grid, name)]
    return points


def _scorer(metric, checkpoint=None):
    """``scorer(estimator, X, y)``: ``metric`` on (X, y) as :func:`run_fold` scores a test
    fold (from ``decision_function`` scores on multi-label data, else from predictions);
    ``checkpoint()`` first, once a grid point of a split."""

    def scorer(estimator, X, y):
        if checkpoint is not None:
            checkpoint()
        scores = _scores(estimator, X, metrics.is_multilabel(y))
        return metrics.score(metric, y, estimator.predict(X), scores)

    return scorer


def _search_scores(spec, points, X, y, splits, metric, checkpoint=None):
    """Validation score of every grid point (columns) on every split (rows), by GridSearchCV.

    ``splits`` are (fit, validation) row indices, passed as they are rather than as a
    ``PredefinedSplit`` (which gives the fit rows in sorted order): libsvm's solution
    depends on the row order within its tolerance, and the hold-out's order is shuffled.
    """
    if spec.factory is BRSVMClassifier:
        # one kernel matrix per gamma for every C and class: the same scores, 3-4x faster
        multilabel = metrics.is_multilabel(y)  # scores from decision values, as _scorer does
        rows = []
        for fit, val in splits:
            row = []
            for pred, dec in brsvm_grid(X[fit], y[fit], X[val], points):
                if checkpoint is not None:
                    checkpoint()
                row.append(metrics.score(metric, y[val], pred, dec if multilabel else None))
            rows.append(row)
        return np.array(rows, dtype=float)
    search = GridSearchCV(
        spec.build(),
        [{name: [value] for name, value in p.items()} for p in points],  # keeps grid order
        scoring=_scorer(metric, checkpoint),
        n_jobs=None,  # in this thread: a checkpoint's exception reaches the caller
        cv=splits,
        refit=False,  # run_fold refits the chosen point on the whole training fold
        error_score="raise",
    )
    with warnings.catch_warnings():
        # a NaN score (e.g. average precision of validation rows without labels) is
        # handled by select_params: ignored in the mean over inner folds
        warnings.filterwarnings("ignore", "One or more of the test scores are non-finite")
        search.fit(X, y)
    return np.array([search.cv_results_[f"split{i}_test_score"] for i in range(len(splits))])


def select_params(
    method,
    X,
    y,
    *,
    selection="holdout",
    grid=PAPER_GRID,
    inner_folds=3,
    random_state=0,
    metric=None,
    threshold=None,
    checkpoint=None,
):
    """Select ``method``'s tuned hyper-parameters on ``(X, y)`` (pass training rows only).

    Parameters
    ----------
    method : str
        A key of :data:`METHODS` (or its entry, :mod:`sblr.registry`).
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or (n_samples, n_classes)
    selection : {"holdout", "inner_kfold", "loo"}
        ``"loo"``: the similarity models are scored on the leave-one-out evidence of every
        row (see :func:`sblr.tuning.tune`), the baselines on ``inner_folds`` folds.
    grid : sequence of float, or mapping of parameter name to sequence of float
        Values tried for every tuned parameter, or for each by its name (``gamma``,
        ``lam``, ``C``).
    inner_folds : int
        Folds of ``selection="inner_kfold"``.
    random_state : int
    metric : str, optional
        Selection metric (default :func:`paper_metric`).
    threshold : float, str or None
        The similarity models' multi-label decision while selecting (see
        :mod:`sblr.decision`); None: the paper's (0.5; SML its own rule).
    checkpoint : callable, optional
        Called with no arguments after each grid point of each split; an exception it raises
        stops the search and reaches the caller (the dashboard's Cancel).

    Returns
    -------
    dict
        Parameter name -> selected value (empty for untuned methods).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> X, y = load_wine(return_X_y=True)
    >>> select_params("br_svm", X, y, grid=[1.0, 0.1])
    {'gamma': 1.0, 'C': 1.0}
    """
    spec = get_method(method)
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}; got {selection!r}.")
    if not spec.tuned:
        return {}
    X = spec.features(X)
    y = np.asarray(y)
    multilabel = metrics.is_multilabel(y)
    metric = metric or paper_metric(multilabel)
    if spec.decides_by_cut:
        res = tune(
            spec.build(**build_decision(spec, threshold)),
            X,
            y,
            gammas=grid_values(grid, "gamma"),
            # only SparseSBLR tunes λ (SML and SBLR ignore ``lams``)
            lams=grid_values(grid, "lam") if "lam" in spec.tuned else PAPER_GRID,
            metric=metric,
            cv={"holdout": None, "loo": "loo"}.get(selection, inner_folds),
            random_state=random_state,
            progress=None if checkpoint is None else lambda *_: checkpoint(),
        )
        return dict(res.best_params)
    # a baseline has no leave-one-out evidence: "loo" selects it on inner folds
    if selection == "holdout":
        if len(y) < 10:
            raise DataError("Tuning needs at least 10 training rows (a 10% validation split).")
        fit_rows, val_rows, _, _ = validation_split(np.arange(len(y)), y, 0.1, random_state)
        splits = [(fit_rows, val_rows)]
    else:
        splits = make_splits(y, scheme="kfold", n_splits=inner_folds, random_state=random_state)
    points = _grid_points(spec, grid)
    table = _search_scores(spec, points, X, y, splits, metric, checkpoint)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column stays NaN
        scores = np.nanmean(table, axis=0)
    return dict(points[metrics.best_index(metric, scores)])


#: Multiply-adds a selection chosen by default (``selection="auto"``) may cost: the full
#: inner k-fold, else a 10% hold-out split, else none (the estimator's defaults).  Measured:
#: delicious' training evidence (12,920² rows × (500 features + 983 labels) = 2.5e11) took
#: 15 s on this project's busy 2-core machine, about 1.7e10 a second: some two minutes.
SELECTION_BUDGET = 2e12

#: Layer fits per fit with a multi-label cut: the fit and 5 out-of-fold refits (warm-started,
#: about half as long each).
COST_CUT_FITS = 3.5


def fit_cost(method, n_samples, n_features, n_classes, *, n_query=0, cuts=True):
    """Multiply-adds of one fit (and of scoring ``n_query`` rows): the evidence, every row
    against every training row over the features and the classes, ``n (n + n_query) (d +
    m)``, and the layer (:meth:`sblr.registry.Method.layer_cost`), times
    :data:`COST_CUT_FITS` with multi-label cuts (``cuts``)."""
    n, d, m = float(n_samples), float(n_features), float(n_classes)
    layer = get_method(method).layer_cost(n, m) * (COST_CUT_FITS if cuts else 1.0)
    return n * (n + n_query) * (d + m) + layer


def selection_cost(method, n_samples, n_features, n_classes, *, selection, grid, inner_folds):
    """Multiply-adds of selecting ``method``'s parameters on ``n_samples`` rows by
    ``selection`` ("inner_kfold" or "holdout") over ``grid`` (see :func:`select_params`): per
    split, the evidence once per γ and the layer once per (γ, λ) (:func:`fit_cost`)."""
    spec = get_method(method)
    if not spec.tuned:
        return 0.0
    sizes = {name: len(grid_values(grid, name)) for name in spec.tuned}
    gammas = sizes.get("gamma", 1)
    points = int(np.prod(list(sizes.values())))
    if selection == "holdout":
        splits, n_fit = 1, 0.9 * n_samples
    else:
        splits, n_fit = inner_folds, n_samples * (inner_folds - 1) / inner_folds
    n_val = n_samples - n_fit
    evidence = n_fit * n_samples * (float(n_features) + n_classes)
    if spec.decides_by_cut:
        layer = spec.layer_cost(n_fit, n_classes) * COST_CUT_FITS
        return splits * (gammas * evidence + points * layer)
    return splits * points * (evidence + n_fit * n_val * n_classes)  # a baseline's fits


@dataclass(frozen=True)
class SelectionPlan:
    """How ``selection="auto"`` selects a method's parameters on data of a given shape.

    Attributes
    ----------
    selection : {"inner_kfold", "holdout"} or None
        None: no selection; the estimator's defaults (``gamma="scale"``, ``lam=1e-4``).
    cost : float
        Estimated multiply-adds of the inner k-fold selection.
    fit : float
        Estimated multiply-adds of one fit at the defaults (with its test rows).
    note : str
        What was chosen and why, in a sentence (for a command's output).
    """

    selection: str | None
    cost: float
    fit: float
    note: str


def plan_selection(
    method,
    n_samples,
    n_features,
    n_classes,
    *,
    grid,
    inner_folds=5,
    n_query=0,
    budget=None,
):
    """Choose how to select parameters from the data's shape: the inner k-fold over ``grid``
    if its estimated cost (:func:`selection_cost`) is within ``budget`` multiply-adds, else a
    10% hold-out split if that is, else no selection (the defaults), with a note saying which
    and why.  ``budget``: default :data:`SELECTION_BUDGET`.  Depends on the shape only,
    never on a data set's name.

    Examples
    --------
    >>> from sblr.tuning import DECISION_GRID
    >>> plan_selection("sparse_sblr", 391, 72, 6, grid=DECISION_GRID).selection  # emotions
    'inner_kfold'
    >>> plan_selection("sparse_sblr", 12920, 500, 983, grid=DECISION_GRID).selection is None
    True
    """
    budget = SELECTION_BUDGET if budget is None else budget
    shape = dict(n_samples=n_samples, n_features=n_features, n_classes=n_classes)
    full = selection_cost(
        method, **shape, selection="inner_kfold", grid=grid, inner_folds=inner_folds
    )
    one = fit_cost(method, **shape, n_query=n_query)
    ratio = full / one if one else 0.0
    if full <= budget:
        return SelectionPlan("inner_kfold", full, one, "")
    holdout = selection_cost(
        method, **shape, selection="holdout", grid=grid, inner_folds=inner_folds
    )
    why = (
        f"selecting on {inner_folds} inner folds would cost about {full:.1e} multiply-adds "
        f"({ratio:,.0f}x a fit at the defaults), over the budget of {budget:.0e}"
    )
    if holdout <= budget:
        return SelectionPlan(
            "holdout", full, one, f"selected on a 10% hold-out split instead: {why}"
        )
    return SelectionPlan(
        None,
        full,
        one,
        f"the defaults, not selected: {why} (a hold-out split: {holdout:.1e}); give "
        "--gamma/--lam/--C to fix them, or --selection to select anyway",
    )


# --------------------------------------------------------------------------- one fold
def run_fold(
    dataset,
    method,
    fold_index,
    splits,
    *,
    selection="holdout",
    grid=PAPER_GRID,
    inner_folds=3,
    params=None,
    random_state=0,
    metric=None,
    threshold=None,
    checkpoint=None,
):
    """Select on the training fold, refit on it, score the test fold.

    Parameters
    ----------
    dataset : Dataset
    method : str
        A key of :data:`METHODS` (or its entry, :mod:`sblr.registry`).
    fold_index : int
    splits : list of (train, test) index arrays
        E.g. ``make_splits(y, scheme="kfold", n_splits=10)``.
    selection : {"holdout", "inner_kfold"}
    grid : sequence of float, or mapping of parameter name to sequence of float
        See :func:`select_params`.
    inner_folds : int
    params : dict, optional
        Fixed hyper-parameters: no selection is run (parameters not given
        keep the estimator's defaults).
    random_state : int
        Seed of the validation split(s).
    metric, threshold, checkpoint
        See :func:`select_params` (``checkpoint`` is also called before the refit).

    Returns
    -------
    FoldResult

    Examples
    --------
    >>> from sblr import load_dataset
    >>> ds = load_dataset("sample_data/wine.csv", target="class")
    >>> splits = make_splits(ds.y, scheme="kfold", n_splits=3)
    >>> res = run_fold(ds, "sblr", 0, splits, grid=[1.0, 0.1])
    >>> sorted(res.params), [r["metric"] for r in res.rows]
    (['gamma'], ['accuracy'])
    """
    spec = get_method(method)
    if not spec.supports(dataset.task):
        raise DataError(
            f"{spec.label} handles multi-class data only; {dataset.name} is multi-label."
        )
    X = spec.features(dataset.X)
    y = task_y(dataset)
    train, test = (np.asarray(a) for a in splits[fold_index])
    t0 = time.perf_counter()
    if params is None:
        chosen = select_params(
            method,
            X[train],
            y[train],
            selection=selection,
            grid=grid,
            inner_folds=inner_folds,
            random_state=random_state,
            metric=metric,
            threshold=threshold,
            checkpoint=checkpoint,
        )
    else:
        chosen = {k: v if isinstance(v, str) else float(v) for k, v in params.items()}
    if checkpoint is not None:
        checkpoint()
    t1 = time.perf_counter()
    est = spec.build(**chosen, **build_decision(spec, threshold)).fit(X[train], y[train])
    t2 = time.perf_counter()
    multilabel = dataset.task == "multilabel"
    pred = est.predict(X[test])
    values = _metric_values(
        TASK_METRICS[dataset.task], y[test], pred, _scores(est, X[test], multilabel)
    )
    counts = {}
    if multilabel:
        counts = {
            "test_rows": len(test),
            "no_label_rows": int((np.asarray(pred).sum(axis=1) == 0).sum()),
            "truth_no_label_rows": int((np.asarray(y[test]).sum(axis=1) == 0).sum()),
        }
    rows = [
        {
            "dataset": dataset.name,
            "method": spec.key,
            "fold": int(fold_index),
            "metric": m,
            "value": v,
        }
        for m, v in values.items()
    ]
    return FoldResult(rows, {**spec.fixed, **chosen}, t1 - t0, t2 - t1, counts)


# --------------------------------------------------------------------------- benchmark
def _cache_path(cache_dir, data_hash, method, fold, settings):
    key = json.dumps(
        {"data": data_hash, "method": method, "fold": fold, **settings}, sort_keys=True
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return Path(cache_dir) / method / f"{data_hash[:12]}-fold{fold}-{digest}.json"


def _write_json(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _read_json(path):
    try:
        return FoldResult.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or corrupt: recompute


class ProgressBar:
    """A one-line text progress bar on a stream (stderr by default)."""

    def __init__(self, total, *, stream=None, width=30, enabled=True):
        self.total, self.done, self.width = total, 0, width
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.start = time.perf_counter()

    def update(self, n=1, text=""):
        self.done += n
        if not self.enabled:
            return
        frac = self.done / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        elapsed = time.perf_counter() - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        line = (
            f"\r[{'#' * fill}{'.' * (self.width - fill)}] {self.done}/{self.total} "
            f"{_hms(elapsed)} elapsed, ~{_hms(eta)} left  {text[:40]:<40}"
        )
        self.stream.write(line)
        self.stream.flush()

    def close(self):
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _hms(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _as_dataset_list(datasets):
    if isinstance(datasets, Dataset):
        datasets = [datasets]
    elif isinstance(datasets, Mapping):
        datasets = [
            Dataset(d.X, d.y, d.task, d.feature_names, d.class_names, name, d.notes)
            for name, d in datasets.items()
        ]
    datasets = list(datasets)
    names = [d.name for d in datasets]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DataError(f"Data set names must be unique; repeated: {', '.join(dup)}.")
    return datasets


def run_benchmark(
    datasets,
    methods: Sequence[str] = tuple(METHODS),
    *,
    folds=10,
    selection="holdout",
    grid=PAPER_GRID,
    inner_folds=3,
    params=None,
    seed=0,
    n_jobs=1,
    scheduler=None,
    cache_dir=None,
    progress=True,
    metric=None,
    threshold=None,
):
    """Cross-validate every method on every data set with the paper's protocol.

    Multi-class-only methods (kNN, NCM, LR) are skipped on multi-label data.

    Parameters
    ----------
    datasets : Dataset, list of Dataset or dict name -> Dataset
    methods : sequence of str
        Keys of :data:`METHODS` (or their entries, :mod:`sblr.registry`).
    folds : int
        Number of CV folds (:func:`benchmark_splits`).
    selection, grid, inner_folds
        See :func:`run_fold`.
    params : dict, optional
        Method name -> fixed hyper-parameters (no selection for that method).
    seed : int
        Seed of the folds and of the validation splits.
    n_jobs : int
        joblib workers over (data set, method, fold) tasks (local processes;
        with ``scheduler="local"``, the number of Dask workers).
    scheduler : None, "local" or str, optional
        Run the tasks on a Dask distributed cluster through joblib's dask
        backend: ``"local"`` starts a ``LocalCluster`` on 127.0.0.1 with
        ``n_jobs`` single-threaded worker processes (all cores for -1), an
        address such as ``"tcp://HOST:PORT"`` connects to a running scheduler
        (its workers need sblr installed).  Results are collected and cached
        by this process, so workers need no shared disk.
    cache_dir : path, optional
        Directory of cached fold results (one JSON file per fold).
    progress : bool
        Show a progress bar on stderr.
    metric, threshold
        Multi-label selection metric (multi-class data: accuracy) and the similarity models'
        decision (see :func:`select_params`); None: the paper's.

    Returns
    -------
    BenchmarkResult
        ``(results, hyperparameters)``.
    """
    datasets = _as_dataset_list(datasets)
    methods = [get_method(m).key for m in methods]
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}; got {selection!r}.")
    params = dict(params or {})
    if isinstance(grid, Mapping):  # one grid per tuned parameter
        grid = {name: tuple(float(v) for v in grid[name]) for name in sorted(grid)}
        grid_setting = {name: list(values) for name, values in grid.items()}
    else:
        grid = tuple(float(g) for g in grid)
        grid_setting = list(grid)
    tasks, cached = [], {}
    for ds in datasets:
        splits = benchmark_splits(ds, folds, seed)
        # the data set's digest without its name (a renamed file is found in the cache)
        data_hash = ds.content_fingerprint if cache_dir is not None else None
        for m in methods:
            if not METHODS[m].supports(ds.task):
                continue
            fixed = params.get(m)
            opts = {
                "selection": selection,
                "grid": grid,
                "inner_folds": inner_folds,
                "params": fixed,
                "random_state": seed,
                # micro-F1 and its kin are multi-label metrics: multi-class data by accuracy
                "metric": metric if ds.task == "multilabel" else None,
                "threshold": threshold,
            }
            settings = {
                "version": PROTOCOL_VERSION,
                "folds": folds,
                "seed": seed,
                "selection": selection,
                "grid": grid_setting,
                "inner_folds": inner_folds if selection == "inner_kfold" else None,
                "params": fixed,
            }
            # the paper's decisions keep their keys, named or not (--threshold paper
            # --select-by average_precision): the reproduction's cache stays valid
            chosen = None if opts["metric"] == paper_metric(True) else opts["metric"]
            if chosen is not None or threshold is not None:
                settings["decision"] = [chosen, _json_threshold(threshold)]
            for f in range(folds):
                path = None
                if cache_dir is not None:
                    path = _cache_path(cache_dir, data_hash, m, f, settings)
                    hit = _read_json(path) if path.exists() else None
                    if hit is not None:
                        cached[(ds.name, m, f)] = _renamed(hit, ds.name)
                        continue
                tasks.append((ds, m, f, splits, opts, path))
    bar = ProgressBar(len(tasks), enabled=progress and bool(tasks))
    computed = {}
    if tasks:
        with joblib_backend(scheduler, n_jobs) as workers:
            parallel = Parallel(n_jobs=workers, return_as="generator_unordered")
            jobs = (
                delayed(_run_labelled)(ds, m, f, sp, opts, path)
                for ds, m, f, sp, opts, path in tasks
            )
            for (name, m, f, path), res in parallel(jobs):
                if path is not None:
                    _write_json(path, res.to_json())
                computed[(name, m, f)] = res
                bar.update(text=f"{name} {m} fold {f}")
    bar.close()
    everything = {**cached, **computed}
    order = {
        (ds.name, m, f): i
        for i, (ds, m, f) in enumerate(
            (ds, m, f) for ds in datasets for m in methods for f in range(folds)
        )
    }
    keys = sorted(everything, key=order.__getitem__)
    return collect_results((k, everything[k]) for k in keys)


def _json_threshold(threshold):
    if threshold is None or isinstance(threshold, str):
        return threshold
    return np.asarray(threshold, dtype=float).tolist()


def collect_results(folds):
    """The benchmark's two tables from fold results, in the order given.

    Parameters
    ----------
    folds : iterable of ((dataset name, method, fold), FoldResult)

    Returns
    -------
    BenchmarkResult
        ``results`` (``dataset, method, fold, metric, value``, one row per metric) and
        ``hyperparameters`` (``dataset, method, fold``, the chosen parameters, the fold's
        row counts of multi-label data (:class:`FoldResult`), ``select_seconds``,
        ``fit_seconds``).
    """
    rows, hyper = [], []
    for (name, method, fold), res in folds:
        rows.extend(res.rows)
        hyper.append(
            {
                "dataset": name,
                "method": method,
                "fold": fold,
                **res.params,
                **res.counts,
                "select_seconds": res.select_seconds,
                "fit_seconds": res.fit_seconds,
            }
        )
    results = pd.DataFrame(rows, columns=["dataset", "method", "fold", "metric", "value"])
    hyper = pd.DataFrame(hyper)
    lead, timing = ["dataset", "method", "fold"], ["select_seconds", "fit_seconds"]
    if hyper.empty:
        return BenchmarkResult(results, pd.DataFrame(columns=[*lead, *timing]))
    rest = [c for c in hyper.columns if c not in lead + timing]
    return BenchmarkResult(results, hyper[[*lead, *rest, *timing]])


def _run_labelled(ds, method, fold, splits, opts, path):
    return (ds.name, method, fold, path), run_fold(ds, method, fold, splits, **opts)


def _renamed(res, name):
    """A cached result under the current data set name (the cache key ignores names)."""
    rows = [{**r, "dataset": name} for r in res.rows]
    return FoldResult(rows, res.params, res.select_seconds, res.fit_seconds, res.counts)
