"""The dashboard's long jobs: Tune's grid search, the bootstrap stability of β, Compare's
cross-validated folds and the tuned LR yardstick, each seconds to minutes (the yardstick on
983 labels: hours).

They run on the Dask cluster when one is configured (``cluster.runs_on_cluster`` decides),
else here in a job slot that is also counted against the user's network address
(:func:`~pages._shared.server.job_slot` with ``long=True``), reporting progress step by step
and letting whoever waits for a slot go first at each step. Their results are shared by every
session: a stability result in a :class:`~pages._shared.stores.Store` (computed once when a
class asks together), Compare's folds in the compute layer's cache (:func:`cached_compare_fold`,
stopped at its next grid point by a Cancel).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from pages._shared import cluster
from pages._shared.cache import cached_fit, fit_plan, heavy, training_evidence
from pages._shared.questions import HASH_FUNCS, Spec
from pages._shared.server import (
    job_slot,
    stop_if_rerun_requested,
    take_turn,
)
from pages._shared.state import VIEW_SETTINGS
from pages._shared.stores import Progress, Store, solver_ready
from sblr.registry import SPARSE_SBLR
from sblr.registry import get as get_method

# sblr.tuning, sblr.stability, sblr.protocol and sblr.evaluation import scikit-learn (about
# 1 s): imported in the functions that run the jobs, so the first page (app.py imports the
# lesson, which imports this module) opens without it (tests/test_startup.py).

__all__ = [
    "LR_AUTO_SECONDS",
    "LRYardstick",
    "N_RESAMPLES",
    "before_fitting",
    "offer_fit",
    "TUNE_SCHEMES",
    "cached_compare_fold",
    "compare_methods",
    "lr_yardstick",
    "lr_yardstick_seconds",
    "lr_yardstick_shown",
    "stability",
    "stability_with_progress",
    "stored_stability",
    "tune",
]

#: Bootstrap resamples of the stability view.
N_RESAMPLES = 50


@st.cache_resource
def _stabilities() -> Store:
    # the bootstrap is seeded: the same data and settings give the same result for everyone
    return Store(64)


# ----------------------------------------------------------------------------- Tune
#: Tune's selection schemes: label -> (inner folds or None for one 10% split, λ rule).
TUNE_SCHEMES = {
    "inner 5-fold CV": (5, "best"),
    "inner 5-fold CV, one-SE λ (sparser)": (5, "one_se"),
    "one 10% validation split (the paper's)": (None, "best"),
}


def tune(ds, model, search, progress=None):
    """Grid search of ``model`` (a name) over the paper's grid, on the rows ``search`` allows
    (a :class:`Search`: the hold-out split's TRAINING rows, or every row when a supplied test
    file holds the test rows), by its metric (default: micro-F1 of the model's decisions, at
    each fit's own cut; accuracy for multi-class)."""
    tunes_lam = Spec.of(model, "scale").l1  # λ is tuned (and "one SE" applies) with L1
    from sblr import tuning
    from sblr.evaluation import make_splits

    cv, rule = TUNE_SCHEMES[search.how]
    if search.rows.kind == "all":
        train = np.arange(ds.n_samples)
    else:
        ((train, _),) = make_splits(ds.y, scheme="holdout", test_size=search.rows.test_size)
    options = dict(
        gammas=tuning.PAPER_GRID,
        lams=tuning.PAPER_GRID,
        cv=cv,
        rule=rule if tunes_lam else "best",
        metric=search.metric,
    )
    est = Spec.of(model, "scale").estimator()
    work = functools.partial(tuning.tune, est, ds.X[train], ds.y[train], **options)
    return _long_job("tune", work, progress, solver=tunes_lam)


def _long_job(job, work, progress, *, solver=False):
    """``work(progress=...)`` (a partial of the job's function) of a job that takes seconds to
    minutes (Tune's grid, the stability resamples): on the Dask cluster when
    ``cluster.runs_on_cluster`` says so (no step-by-step progress there), else in a job slot
    here (counted against the user's address too), reporting ``progress`` and letting whoever
    waits for a slot go first at each step (server.take_turn: Tune held its slot for its whole
    grid). ``solver``: it fits with SparseSBLR's compiled solver, waited for first (as
    ``heavy``'s ``solver``). ``job`` None: never on the cluster."""
    if job is not None and cluster.runs_on_cluster(job):
        return cluster.run(job, None, work)

    def step(*done):
        if progress is not None:
            progress(*done)
        take_turn()

    if solver:
        solver_ready()
    with job_slot(wait=True, long=True):
        return work(progress=step)


# ----------------------------------------------------------------------------- a fit on request
def offer_fit(ds, plan, instead, key):
    """Where a view shows ``instead`` (a model's label) alone because ``plan`` (a
    :class:`~pages._shared.cache.FitPlan`) does not fit its model without asking: one
    sentence saying why (its estimated time) and, when it is offered, a button that fits it
    as a long job with its progress class by class (shared: every session then finds it, and
    a second click waits for the first), then runs the page again with both."""
    st.info(plan.sentence(instead), icon=":material/schedule:")
    if plan.offered and st.button(plan.button, key=key):
        cached_fit(ds, plan.spec, long=True)
        st.rerun()


def before_fitting(ds, s, key, fits=1):
    """On a page that fits the sidebar's model (``s.spec``): where its fit is past the budget
    of one done without asking and nobody fitted it yet, say what it costs before anything
    starts, offer SparseSBLR in its place and, unless it takes hours, a button to go ahead;
    the page stops here until one is chosen (``fits``: how many fits the page makes)."""
    plan = fit_plan(ds, s.spec)
    agreed = st.session_state.setdefault("_fits_agreed", set())
    if plan.shown or (ds.fingerprint, s.spec) in agreed:
        return
    st.warning(plan.before(SPARSE_SBLR.label, fits), icon=":material/schedule:")
    left, right = st.columns(2)
    if left.button(f"Use {SPARSE_SBLR.label}", key=f"{key}_instead", type="primary"):
        view = dict.fromkeys(VIEW_SETTINGS)
        st.session_state["_pending_view"] = view | {"model": SPARSE_SBLR.label, "source": "here"}
        st.rerun()
    if plan.offered and right.button(f"Go ahead with {s.spec.model}", key=f"{key}_agree"):
        agreed.add((ds.fingerprint, s.spec))
        st.rerun()
    st.stop()


# ----------------------------------------------------------------------------- stability
def stability(ds, gamma, lam, progress=None):
    """Bootstrap stability of SparseSBLR's β on all rows, shared by every session (a class
    that clicks "Estimate stability" on the lesson's step together computes it once: the
    others wait for that computation). ``progress(done, total)`` reports each resample."""

    def make():
        from sblr.stability import bootstrap_coefficients

        model = cached_fit(ds, Spec.of(SPARSE_SBLR, gamma, lam))
        F = training_evidence(ds, gamma)
        work = functools.partial(bootstrap_coefficients, model, F, n_resamples=N_RESAMPLES)
        return _long_job("stability", work, progress)

    return _stabilities().get_or_make((ds.fingerprint, gamma, lam, N_RESAMPLES), make, solver=True)


def stability_with_progress(ds, gamma, lam):
    """:func:`stability`, with a progress bar resample by resample (the button's action)."""
    bar = st.progress(0.0, text="Bootstrapping β…")

    def progress(done, total):
        bar.progress(done / total, text=f"Resample {done} of {total}")

    try:
        return stability(ds, gamma, lam, progress=progress)
    finally:
        bar.empty()


def stored_stability(ds, gamma, lam):
    """The stability result of these settings if it was computed (by anyone), else None."""
    return _stabilities().get((ds.fingerprint, gamma, lam, N_RESAMPLES))


# ----------------------------------------------------------------------------- compare page
@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def _compare_splits(ds, folds):
    """The folds ``protocol.run_benchmark`` uses (seed 0), so results match the CLI's."""
    from sblr import protocol

    return protocol.benchmark_splits(ds, folds)


def _fold_needs_solver(ds, method, *args, **kwargs) -> bool:
    return get_method(method).needs_compiled


@heavy(keep=2048, job="compare", solver=_fold_needs_solver)
def cached_compare_fold(ds, method, fold, run):
    """``protocol.run_fold`` for one (data, method, fold) under ``run`` (a
    :class:`~pages._shared.questions.Protocol`: folds, grid, decisions): selection on the
    training fold's 10% validation split, refit, scores on the test fold. A Cancel stops the
    fold at its next grid point (Streamlit's own stop check), and the slot goes back."""
    from sblr import protocol

    if cluster.runs_on_cluster("compare"):  # the fold runs there (compare_methods submitted it)
        result = _submit_fold(ds, method, fold, run).result()
        _folds_computed().add((ds.fingerprint, method, fold, run))
        return result
    return protocol.run_fold(
        ds,
        method,
        fold,
        _compare_splits(ds, run.folds),
        grid=run.plain_grid,
        metric=run.metric(ds.task),
        threshold=run.threshold,
        checkpoint=stop_if_rerun_requested,
    )


def _submit_fold(ds, method, fold, run):
    """One Compare fold on the cluster, keyed by what identifies it (submitted twice, it runs
    once)."""
    from sblr import protocol

    key = (ds.fingerprint, method, fold, run)
    options = {"grid": run.plain_grid, "metric": run.metric(ds.task), "threshold": run.threshold}
    splits = _compare_splits(ds, run.folds)
    return cluster.submit("fold", key, protocol.run_fold, ds, method, fold, splits, **options)


@st.cache_resource
def _folds_computed():
    """The (data, method, fold, :class:`~pages._shared.questions.Protocol`) of the folds the
    cluster computed: not sent again when a run asks for them (they are cached; one that left
    the cache is computed when it is asked for, on its own)."""
    return set()


def compare_methods(ds, methods, run, progress=None):
    """Cross-validate ``methods`` under ``run`` (a :class:`~pages._shared.questions.Protocol`)
    fold by fold from the cache, as ``run_benchmark`` would with the same folds, grid,
    ``threshold`` and ``metric``.

    ``progress(done, total, method, fold, timed)`` is called before each fold, outside the
    cached function; ``timed`` maps each method to the seconds of its folds done so far (as
    first computed: selection and final fit), for :func:`sblr.stats.fold_forecast`.
    Returns a :class:`sblr.protocol.BenchmarkResult`.
    """
    from sblr.protocol import collect_results

    folds = run.folds
    total = len(methods) * folds
    pending = []  # the futures live until their folds are read below
    if cluster.runs_on_cluster("compare"):  # every fold at once: the workers run them together
        pending = [
            _submit_fold(ds, method, fold, run)
            for method in methods
            for fold in range(folds)
            # most likely in the cache: not again
            if (ds.fingerprint, method, fold, run) not in _folds_computed()
        ]
    done = []
    timed = {method: [] for method in methods}
    for i, method in enumerate(methods):
        for fold in range(folds):
            if progress:
                progress(i * folds + fold, total, method, fold, timed)
            res = cached_compare_fold(ds, method, fold, run)
            timed[method].append(res.select_seconds + res.fit_seconds)
            done.append(((ds.name, method, fold), res))
    del pending  # every fold is read: the cluster may forget them
    if progress:
        progress(total, total, None, None, timed)
    return collect_results(done)


# ----------------------------------------------------------------------------- the LR yardstick
#: CPU seconds (sblr.baselines.tuned_lr_seconds_estimate) within which the Model page, the
#: report and the lesson compute the tuned LR yardstick when they open; above it the Model page
#: offers it behind a button with its estimate. The planted sample's hold-out: about 1 s
#: estimated (1.1 CPU-s measured at load 9); 5-fold CV: 5 s.
LR_AUTO_SECONDS = 10.0
#: Largest dense copy of the features the LR yardstick takes (MB); beyond it, no yardstick.
LR_DENSE_MB = 400


@st.cache_resource
def _lr_yardsticks() -> Store:
    # every session's: a yardstick of hours is computed once per server
    return Store(32)


@dataclass(frozen=True)
class LRYardstick:
    """The tuned LR yardstick on an evaluation's rows: its ``summary`` (``mean`` by metric,
    as :func:`sblr.evaluation.summarize`), the test rows it gives no label (multi-label
    data, else None) and what it chose on each outer fit's training rows (``Cs``; ``cuts``:
    its one micro-F1 cut, multi-label data)."""

    summary: pd.DataFrame
    empty: int | None
    Cs: tuple
    cuts: tuple

    @property
    def label(self) -> str:
        """Its name with its choice: "LR (tuned C = 1, cut 0.31)" (k folds: each fold's)."""
        chosen = "/".join(dict.fromkeys(f"{c:g}" for c in self.Cs))
        cut = "/".join(dict.fromkeys(f"{c:.2f}" for c in self.cuts))
        return f"LR (tuned C = {chosen}" + (f", cut {cut})" if cut else ")")


def _lr_rows(ds, scheme, test):
    """The (training rows, test rows) of each outer fit: the evaluation's splits, or every
    row of the data against the test file's."""
    from pages._shared.cache import _splits

    if test is not None:
        return [(np.arange(ds.n_samples), None)]
    return _splits(ds, scheme)


def _dense(X):
    import scipy.sparse as sp

    if not sp.issparse(X):
        return np.asarray(X, dtype=float)
    if 8.0 * X.shape[0] * X.shape[1] / 2**20 > LR_DENSE_MB:
        return None
    return X.toarray()


def lr_yardstick_seconds(ds, scheme, test=None) -> float:
    """Estimated CPU seconds of :func:`lr_yardstick` (its fits; from the data's shape)."""
    from sblr.baselines import tuned_lr_seconds_estimate

    rows = _lr_rows(ds, scheme, test)
    return tuned_lr_seconds_estimate(
        len(rows[0][0]), ds.n_features, ds.n_classes, fits=len(rows),
        multilabel=ds.is_multilabel,
    )  # fmt: skip


def _fit_lr_yardstick(ds, scheme, test, progress):
    """The yardstick's fits and scores (in a job slot); None when the features are too wide
    to make dense."""
    from sblr.baselines import tuned_lr_classifier
    from sblr.decision import Decision
    from sblr.evaluation import score_fold, score_test, summarize

    X = _dense(ds.X)
    X_test = None if test is None else _dense(test.X)
    if X is None or (test is not None and X_test is None):
        return None
    rows = _lr_rows(ds, scheme, test)
    classes = np.arange(ds.n_classes) if ds.is_multilabel else ds.class_values()
    scores, empty, Cs, cuts = [], 0, [], []
    for i, (train, held) in enumerate(rows):

        def step(done, total, i=i):
            if progress is not None:
                progress(i * total + done, len(rows) * total)

        fitted = tuned_lr_classifier().fit(X[train], ds.y[train], progress=step)
        Cs.append(fitted.C_)
        chosen = Decision.of(fitted)
        if chosen.cuts is not None:
            cuts.append(float(np.max(chosen.cuts)))  # one micro-F1 cut for every label
        if held is None:
            on, summary = X_test, score_test(fitted, X_test, test.y).summary
        else:
            on = X[held]
            scores.append(score_fold(fitted, X, ds.y, (train, held), classes, prefit=True))
        if ds.is_multilabel:
            empty += int((np.asarray(fitted.predict(on)).sum(axis=1) == 0).sum())
    if test is None:
        summary = summarize(scores, classes).summary
    return LRYardstick(summary, empty if ds.is_multilabel else None, tuple(Cs), tuple(cuts))


def lr_yardstick(ds, scheme, test=None, progress=None):
    """The tuned LR yardstick (sblr.baselines.tuned_lr_classifier: C from five decades and one
    micro-F1 cut, chosen on 5 inner folds of each training split) fitted on the training rows
    of ``scheme``'s splits and scored on their test rows, or on every row and scored on the
    rows of ``test``: an :class:`LRYardstick`, or None when the features are too wide to make
    dense. Computed once per server as a long job (a job slot, step by step giving way to
    other users; ``progress(done, total)`` label fit by label fit) and shared by every
    session."""
    key = (ds.fingerprint, scheme if test is None else None, getattr(test, "fingerprint", None))
    work = functools.partial(_fit_lr_yardstick, ds, scheme, test)
    return _lr_yardsticks().get_or_make(key, lambda: _long_job(None, work, progress))


def stored_lr_yardstick(ds, scheme, test=None):
    """:func:`lr_yardstick` if anyone computed it, else None."""
    key = (ds.fingerprint, scheme if test is None else None, getattr(test, "fingerprint", None))
    return _lr_yardsticks().get(key)


def lr_yardstick_shown(ds, scheme, test=None, *, quiet=False):
    """What a view shows of the LR yardstick: ``(LRYardstick or None, estimated seconds)``.
    The yardstick when it was computed or its estimate (:func:`lr_yardstick_seconds`) is
    within :data:`LR_AUTO_SECONDS` (then computed now, with a progress bar unless ``quiet``);
    else None beside the estimate, for the page to offer it; ``(None, None)`` when the
    features are too wide to make dense (the one rule of the Model page, the report and the
    lesson)."""
    widest = max(ds.n_samples, getattr(test, "n_samples", 0)) * ds.n_features
    if 8.0 * widest / 2**20 > LR_DENSE_MB:
        return None, None  # no yardstick: too wide to make dense
    seconds = lr_yardstick_seconds(ds, scheme, test)
    found = stored_lr_yardstick(ds, scheme, test)
    if found is not None or seconds > LR_AUTO_SECONDS:
        return found, seconds
    if quiet:
        return lr_yardstick(ds, scheme, test), seconds
    return lr_yardstick_with_progress(ds, scheme, test), seconds


def lr_yardstick_with_progress(ds, scheme, test=None):
    """:func:`lr_yardstick` with a progress bar label fit by label fit (the button's action;
    drawn only when it computes)."""
    bar = Progress(
        lambda done, total: (
            f"Fitting the tuned LR yardstick: fit {done:,} of {total:,} "
            "(per label, 5 C values × 5 inner folds, then the final fit)"
        )
    )
    try:
        return lr_yardstick(ds, scheme, test, progress=bar)
    finally:
        bar.close()
