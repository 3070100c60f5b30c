"""The dashboard's long jobs: Tune's grid search, the bootstrap stability of β and Compare's
cross-validated folds, each seconds to minutes.

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

import numpy as np
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
from pages._shared.stores import Store, solver_ready
from sblr.registry import SPARSE_SBLR
from sblr.registry import get as get_method

# sblr.tuning, sblr.stability, sblr.protocol and sblr.evaluation import scikit-learn (about
# 1 s): imported in the functions that run the jobs, so the first page (app.py imports the
# lesson, which imports this module) opens without it (tests/test_startup.py).

__all__ = [
    "N_RESAMPLES",
    "before_fitting",
    "offer_fit",
    "TUNE_SCHEMES",
    "cached_compare_fold",
    "compare_methods",
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
    ``heavy``'s ``solver``)."""
    if cluster.runs_on_cluster(job):
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
