"""Cached calls into :mod:`sblr`: the only place the dashboard starts expensive work.

Evidence is cached per (data, γ), so moving the λ slider refits only the logistic layer;
folds, fits and λ paths are kept per data set and shared by every session of the server: a
data set is identified by its content (``Dataset.fingerprint``, Streamlit's ``hash_funcs``),
not by a key passed beside it.
Each computation holds a job slot (:mod:`pages._shared.server`); progress is drawn outside
the cached functions (a UI element drawn inside one would be replayed on every cache hit).
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import streamlit as st

from pages._shared import cluster
from pages._shared import data as uploads
from pages._shared.data import MAX_DENSE_MB
from pages._shared.formatting import (
    LOG_GRID,
    context,
    esc_md,
    fmt_gamma,
    fmt_value,
    grid_value,
)
from pages._shared.report import analysis_report as html_analysis_report
from pages._shared.server import (
    job_slot,
    stop_if_rerun_requested,
    take_turn,
    wait_for_compiled_solver,
    waiting_for_worker,
)
from sblr import DataError, plots
from sblr.decision import describe
from sblr.diagnostics import evidence_diagnostics
from sblr.io import Dataset, load_dataset
from sblr.modelfile import load_model
from sblr.scaling import scale_gamma as value_of_scale

# The sblr modules that import scikit-learn (evaluation, models, baselines, attribution,
# metrics, tuning, stability, protocol: about 1 s at the first import) are imported in the
# functions that use them: a page that needs none of them (the home page, Data, the sidebar)
# opens without it (benchmarks/startup.py; tests/test_startup.py keeps it so).

__all__ = [
    "HOLDOUT",
    "N_RESAMPLES",
    "Scheme",
    "TUNE_SCHEMES",
    "analysis_report",
    "cached_compare_fold",
    "cached_fit",
    "cached_path",
    "compare_methods",
    "diagnostics",
    "evaluation",
    "stability_with_progress",
    "attribution",
    "read_like",
    "open_model_file",
    "predictions",
    "yardstick_predicts_nothing",
    "test_scores",
    "class_importance",
    "feature_inputs_cached",
    "yardstick",
    "decision_cuts",
    "lr_test_yardstick",
    "lr_yardstick",
    "held_out_cuts",
    "held_out_probabilities",
    "path_lams",
    "pca_coordinates",
    "Spec",
    "shared_figure",
    "sml_without_row",
    "stability",
    "stored_stability",
    "training_evidence",
    "tune",
]


# ----------------------------------------------------------------------------- shared figures
@st.cache_resource(max_entries=16, show_spinner=False)
def shared_figure(key: tuple, _build):
    """The figure ``_build()`` makes, built once per ``key`` in this server and shared by every
    session that asks with the same key (a class on the lesson: 30 students, one β heatmap).

    ``key`` names everything the figure shows (``ds.fingerprint``, the model's settings, the
    display choices); ``_build`` is not hashed. The figure is shared: draw it, never change
    it (a change goes into ``_build``). Building a Plotly figure was a third of a lesson step's
    run; ``st.plotly_chart`` still copies and serializes it for each session. Sixteen are kept:
    a class shares a handful, and a β heatmap of all 174 classes is 1.6 MB as JSON, in the one
    process that serves everyone."""
    return _build()


# ----------------------------------------------------------------------------- what is fitted
@functools.cache
def _model_traits(model: str) -> tuple[bool, bool]:
    """(takes λ, fits from the cached evidence) of a model, as its estimator says: asked once
    per model name (each page run asks for several fits)."""
    from sblr.models import fits_from_evidence, make_model

    est = make_model(model)
    return "lam" in est.get_params(), fits_from_evidence(est)


@dataclass(frozen=True)
class Spec:
    """What a stored fit is: a model of :data:`sblr.models.MODELS` by name, at γ, and at λ only
    where the model takes one (the key of the fits store, and what the pages ask for).  What
    a model needs -- the cached evidence, the compiled solver -- the library's estimator says
    (:func:`sblr.models.fits_from_evidence`, its ``lam`` parameter), not a test on its name."""

    model: str
    gamma: object
    lam: float | None = None

    @classmethod
    def of(cls, model, gamma, lam=None):
        takes_lam = _model_traits(model)[0]
        return cls(model, gamma, float(lam) if takes_lam and lam is not None else None)

    def estimator(self):
        from sblr.models import make_model

        return make_model(
            self.model, gamma=self.gamma, **({} if self.lam is None else {"lam": self.lam})
        )

    @property
    def from_evidence(self) -> bool:
        """Fitted from the cached evidence (SBLR, SparseSBLR), not from the rows (SML)."""
        return _model_traits(self.model)[1]

    @property
    def l1(self) -> bool:
        """Has an L1 term (SparseSBLR: the estimator takes λ): its fits need the compiled
        solver, its label says λ. A trait of the model, whether or not λ was given."""
        return _model_traits(self.model)[0]

    @property
    def learns_beta(self) -> bool:
        """Learns β (SBLR, SparseSBLR: a logistic layer on the evidence); SML decides from
        the evidence alone, its scores ranks rather than probabilities."""
        return self.from_evidence

    @property
    def label(self) -> str:
        """The model as the pages name it: "SparseSBLR, λ = 1e-3", "SBLR", "SML"."""
        return self.model + (f", λ = {fmt_value(self.lam)}" if self.lam is not None else "")


@dataclass(frozen=True)
class Scheme:
    """How an evaluation splits the rows: ``kind`` "holdout" (one split, ``test_size`` of the
    rows tested), "kfold" (``n_splits`` folds) or "all" (every row trains; no test rows).
    Hashable, and what the fold functions take beside the data and the :class:`Spec`."""

    kind: str
    test_size: float = 0.25
    n_splits: int = 5


#: The evaluation the pages default to (Model & metrics, the lesson, the report).
HOLDOUT = Scheme("holdout", 0.25, 5)

#: Streamlit's caches hash a data set by its fingerprint (its content; computed once per data
#: set), not by its values on every call; a Spec and a Scheme by their fields.
_BY_DATA = {
    Dataset: lambda ds: ds.fingerprint,
    Spec: lambda spec: (spec.model, str(spec.gamma), spec.lam),
    Scheme: lambda scheme: (scheme.kind, float(scheme.test_size), int(scheme.n_splits)),
}


# ----------------------------------------------------------------------------- shared stores
def _nbytes(value, depth=0):
    """About how many bytes ``value`` holds in arrays: NumPy and SciPy sparse arrays, in
    tuples, lists and dicts, and in the attributes of an object (two levels deep)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if hasattr(value, "data") and hasattr(value, "indices") and hasattr(value, "indptr"):
        return value.data.nbytes + value.indices.nbytes + value.indptr.nbytes
    if depth > 2:
        return 0
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v, depth + 1) for v in value.values())
    if hasattr(value, "__dict__"):
        return sum(_nbytes(v, depth + 1) for v in vars(value).values())
    return 0


class _Store:
    """A small thread-safe least-recently-used map shared by every session of the server
    (work done survives leaving a page, and is shared by users of the same data).

    At most ``size`` items and, with ``max_bytes``, at most that many bytes of arrays in all
    (:func:`_nbytes`; the newest item is always kept): a class of 30 students with 1,000-row
    files of their own needs 30 evidences of 64 KB each, one user of a 20,000-row file a few
    of 28 MB."""

    def __init__(self, size, max_bytes=None):
        self._size, self._max_bytes = size, max_bytes
        self._items, self._bytes, self._lock = {}, {}, threading.Lock()
        self._total = 0  # sum of self._bytes

    def get(self, key):
        with self._lock:
            if key in self._items:
                self._items[key] = self._items.pop(key)  # most recently used last
                return self._items[key]
        return None

    def put(self, key, value):
        size = _nbytes(value) if self._max_bytes is not None else 0
        with self._lock:
            self._items.pop(key, None)
            self._total += size - self._bytes.pop(key, 0)
            self._items[key], self._bytes[key] = value, size
            while len(self._items) > 1 and (
                len(self._items) > self._size
                or (self._max_bytes is not None and self._total > self._max_bytes)
            ):
                oldest = next(iter(self._items))
                del self._items[oldest]
                self._total -= self._bytes.pop(oldest)
        return value


@st.cache_resource
def _fits():
    # a SparseSBLR fit on 174 classes holds ~0.25 MB of its own (the evidence is shared)
    return _Store(128)


@st.cache_resource
def _paths():
    return _Store(256)


class _Progress:
    """A progress bar drawn only once work actually starts (cache hits draw nothing), removed
    when the work is done; ``text(done, total)`` says what is being done."""

    def __init__(self, text):
        self._text, self._bar = text, None

    def __call__(self, done, total):
        if self._bar is None:
            self._bar = st.progress(0.0)
        self._bar.progress(done / max(total, 1), text=self._text(done, total))

    def close(self):
        if self._bar is not None:
            self._bar.empty()


# ----------------------------------------------------------------------------- evidence and fits
# Featurizers, evidence and models are cached as shared resources (not copied on each read,
# as st.cache_data would): they are read-only here, and every key holds the data's fingerprint.
@st.cache_resource(max_entries=8, show_spinner="Computing distances…", hash_funcs=_BY_DATA)
def _cached_distances(ds, scheme, i):
    """Squared distances of a split's scaled rows (``scheme.kind == "all"``: every row
    trains), kept so that a γ change costs only exp(-γD); None for data too large to keep
    them."""
    from sblr.evaluation import fold_distances

    if scheme.kind == "all":
        train, test = np.arange(ds.n_samples), np.arange(0)
    else:
        train, test = _cached_splits(ds, scheme)[i]
    with job_slot():
        return fold_distances(ds.X, ds.y, train, test)


#: From this many rows an upload's evidence is computed on the Dask cluster, when one is
#: configured (pages/_shared/cluster.py): exact evidence at 5,000 rows takes about 0.3 s here.
CLUSTER_EVIDENCE_ROWS = 5_000


def _runs_on_cluster(job: str, ds=None) -> bool:
    """Where a heavy job runs: the one place that decides. With a Dask cluster configured
    (pages/_shared/cluster.py), Compare's folds, Tune's grid and the stability resamples run
    there, and the evidence of uploads from CLUSTER_EVIDENCE_ROWS rows; every other
    computation (fits, paths, explanations: tenths of a second) runs here, in a job slot."""
    if job not in ("compare", "tune", "stability", "evidence"):
        raise ValueError(f"unknown job {job!r}")
    if not cluster.on_cluster():
        return False
    return job != "evidence" or ds.n_samples >= CLUSTER_EVIDENCE_ROWS


#: Bytes of evidence (and the featurizers' training data) kept for all users together.
EVIDENCE_BYTES = 512 * 2**20


@st.cache_resource
def _evidences():
    return _Store(256, max_bytes=EVIDENCE_BYTES)


# The evidences are kept (bounded in bytes) in _evidences(); this cache adds the spinner and
# computes each one once when several sessions ask at the same time (few entries).
@st.cache_resource(max_entries=8, show_spinner="Computing class evidence…", hash_funcs=_BY_DATA)
def _cached_evidence(ds, gamma):
    """Featurizer fitted on all rows and its leave-one-out evidence, per (data, gamma)."""
    store = _evidences()
    found = store.get((ds.fingerprint, gamma))
    if found is not None:
        return found
    from sblr.evaluation import fold_evidence
    from sblr.models import make_model

    every = (np.arange(ds.n_samples), np.arange(0))
    if _runs_on_cluster("evidence", ds):
        # a large upload's evidence on the cluster (its distances computed there too)
        (fold,) = cluster.submit(
            "evidence", None, fold_evidence, make_model("SBLR", gamma=gamma), ds.X, ds.y, [every]
        ).result()
        return store.put((ds.fingerprint, gamma), (fold.featurizer, fold.F_train))
    with job_slot():
        D = _cached_distances(ds, Scheme("all"), 0)
        (fold,) = fold_evidence(make_model("SBLR", gamma=gamma), ds.X, ds.y, [every], distances=[D])
        return store.put((ds.fingerprint, gamma), (fold.featurizer, fold.F_train))


def training_evidence(ds, gamma):
    """Leave-one-out evidence of every row (all rows as training data), per (data, gamma)."""
    return waiting_for_worker(_cached_evidence)(ds, gamma)[1]


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_scale_gamma(ds):

    return float(value_of_scale(ds.X))


def scale_gamma(ds):
    """The value of γ = "scale" on this data: 1 / (d · Var X) of the scaled rows."""
    return _cached_scale_gamma(ds)


def cached_fit(ds, model, gamma, lam):
    """A model fitted on all rows; SBLR/SparseSBLR reuse the cached evidence. A fit that is
    not stored yet shows a progress bar, class by class."""
    spec = Spec.of(model, gamma, lam)
    found = _fits().get((ds.fingerprint, spec))
    if found is not None:
        return found
    if spec.l1:
        wait_for_compiled_solver()
    est = spec.estimator()
    if not spec.from_evidence:
        with st.spinner(f"Fitting {model}…"), job_slot(wait=True):
            return _fits().put((ds.fingerprint, spec), est.fit(ds.X, ds.y))
    f, F = waiting_for_worker(_cached_evidence)(ds, gamma)
    where = f"γ = {fmt_gamma(gamma)}" + (f", λ = {fmt_value(spec.lam)}" if spec.l1 else "")
    bar = _Progress(lambda done, total: f"Fitting {model} ({where}): class {done} of {total}")
    try:
        with job_slot(wait=True):
            est.fit_from_evidence(f, F, progress=bar)
    finally:
        bar.close()
    return _fits().put((ds.fingerprint, spec), est)


def _stored_fit(ds, model, gamma, lam):
    """For cached functions (which must not draw): the stored fit, or a fit without progress."""
    spec = Spec.of(model, gamma, lam)
    found = _fits().get((ds.fingerprint, spec))
    if found is not None:
        return found
    with job_slot():
        est = spec.estimator()
        if not spec.from_evidence:
            return _fits().put((ds.fingerprint, spec), est.fit(ds.X, ds.y))
        f, F = _cached_evidence(ds, gamma)
        return _fits().put((ds.fingerprint, spec), est.fit_from_evidence(f, F))


@st.cache_resource(
    max_entries=16, show_spinner="Fitting SML without this row…", hash_funcs=_BY_DATA
)
def _cached_sml_without_row(ds, gamma, row):
    from sblr.models import make_model

    keep = np.arange(ds.n_samples) != row
    with job_slot():
        return make_model("SML", gamma=gamma).fit(ds.X[keep], ds.y[keep])


def sml_without_row(ds, gamma, row):
    """SML fitted on every row but ``row`` (SML has no leave-one-out evidence of its own:
    its set sizes come from similarity sums by label-set size); kept per (data, γ, row), so
    a λ or class change on the explain page does not refit it."""
    return waiting_for_worker(_cached_sml_without_row)(ds, gamma, row)


# ----------------------------------------------------------------------------- evaluation
@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_splits(ds, scheme):
    from sblr.evaluation import make_splits

    return make_splits(
        ds.y, scheme=scheme.kind, test_size=scheme.test_size, n_splits=scheme.n_splits
    )


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_fold(ds, gamma, scheme, i):
    from sblr.evaluation import fold_evidence
    from sblr.models import make_model

    split = _cached_splits(ds, scheme)[i]
    with job_slot():
        D = _cached_distances(ds, scheme, i)
        model = make_model("SBLR", gamma=gamma)
        return fold_evidence(model, ds.X, ds.y, [split], distances=[D])[0]


def _fold_of(ds, spec, scheme, i):
    """The fold as a model fits it: SML on its rows, SBLR/SparseSBLR on its cached evidence."""
    if not spec.from_evidence:
        return _cached_splits(ds, scheme)[i]
    return _cached_fold(ds, spec.gamma, scheme, i)


@st.cache_resource(max_entries=128, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_fold_model(ds, spec, scheme, i):
    """One fold's model, fitted once for both its scores and its probabilities."""
    from sblr.evaluation import fit_fold

    with job_slot():
        return fit_fold(spec.estimator(), ds.X, ds.y, _fold_of(ds, spec, scheme, i))


@st.cache_data(max_entries=512, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_fold_score(ds, spec, scheme, i):
    """One fold's scores."""
    from sblr.evaluation import score_fold

    with job_slot():
        fitted = _cached_fold_model(ds, spec, scheme, i)
        fold = _fold_of(ds, spec, scheme, i)
        return score_fold(fitted, ds.X, ds.y, fold, _classes(ds), prefit=True)


@st.cache_data(max_entries=512, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_fold_proba(ds, spec, scheme, i):
    """One fold's test rows and their probabilities (for the threshold and per-class views)."""
    from sblr.evaluation import fold_probabilities

    with job_slot():
        fitted = _cached_fold_model(ds, spec, scheme, i)
        fold = _fold_of(ds, spec, scheme, i)
        test, P = fold_probabilities(fitted, ds.X, ds.y, fold, prefit=True)
        return test, P, decision_cuts(fitted, P.shape[1])


def decision_cuts(fitted, n_classes):
    """The cut of each class a fitted model decides by (``threshold_``; 0.5 where it has none:
    SML's own rule, at which its probabilities are 0.5, and multi-class data)."""
    cuts = getattr(fitted, "threshold_", None)
    return np.full(n_classes, 0.5) if cuts is None else np.asarray(cuts, dtype=float)


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_yardstick(ds, scheme):
    from sblr.baselines import FrequencyClassifier
    from sblr.evaluation import evaluate_folds

    splits = _cached_splits(ds, scheme)
    return evaluate_folds(FrequencyClassifier(), ds.X, ds.y, splits).summary


def yardstick(ds, scheme):
    """The scores of the frequency yardstick on the evaluation's folds: what a model that
    ignores the rows scores (sblr.baselines.FrequencyClassifier)."""
    return _cached_yardstick(ds, scheme)


#: Largest dense copy of the features the LR yardstick takes (MB); beyond it, no yardstick.
LR_DENSE_MB = 400


def _dense_features(X):

    if not sp.issparse(X):
        return X
    if 8.0 * X.shape[0] * X.shape[1] / 2**20 > LR_DENSE_MB:
        return None
    return X.toarray()


def _lr_yardstick_of(fitted_on, X_test, y_test):
    """(scores of each metric, rows given no label) of an LR yardstick on test rows."""
    from sblr.evaluation import score_test

    result = score_test(fitted_on, X_test, y_test)
    pred = np.asarray(fitted_on.predict(X_test))
    empty = int((pred.sum(axis=1) == 0).sum()) if pred.ndim == 2 else 0
    return result.summary, empty


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_lr_yardstick(ds, scheme):
    from sblr.baselines import OneVsRestLRClassifier
    from sblr.evaluation import fit_fold, score_fold, summarize

    X = _dense_features(ds.X)
    if X is None:
        return None
    splits = _cached_splits(ds, scheme)
    scores, empty = [], 0
    with job_slot():
        for fold in splits:  # one fit per fold, for its scores and its empty rows
            fitted = fit_fold(OneVsRestLRClassifier(), X, ds.y, fold)
            scores.append(score_fold(fitted, X, ds.y, fold, _classes(ds), prefit=True))
            if ds.task == "multilabel":
                pred = np.asarray(fitted.predict(X[fold[1]]))
                empty += int((pred.sum(axis=1) == 0).sum())
    return summarize(scores, _classes(ds)).summary, empty


def lr_yardstick(ds, scheme):
    """What scikit-learn's plain logistic regression (one-vs-rest for multi-label data;
    sblr.baselines.OneVsRestLRClassifier) scores on the same folds: ``(summary, rows given
    no label)``, or None when the features are too wide to make dense."""
    return waiting_for_worker(_cached_lr_yardstick)(ds, scheme)


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_lr_test_yardstick(ds, test):
    from sblr.baselines import OneVsRestLRClassifier

    X, X_test = _dense_features(ds.X), _dense_features(test.X)
    if X is None or X_test is None:
        return None
    with job_slot():
        return _lr_yardstick_of(OneVsRestLRClassifier().fit(X, ds.y), X_test, test.y)


def lr_test_yardstick(ds, test):
    """:func:`lr_yardstick` of a model fitted on every row, scored on a test file."""
    return waiting_for_worker(_cached_lr_test_yardstick)(ds, test)


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_predicts_nothing(ds) -> bool:
    if ds.task != "multilabel":
        return False
    return bool((np.asarray(ds.y).mean(axis=0) <= 0.5).all())


def yardstick_predicts_nothing(ds) -> bool:
    """Whether the yardstick's decisions are "no label": multi-label data whose every label is
    carried by at most half the rows (FrequencyClassifier's rule). Once per data set: not on
    every slider move."""
    return _cached_predicts_nothing(ds)


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_feature_inputs(ds):
    from sblr.attribution import feature_inputs

    return feature_inputs(ds.X, ds.feature_names)


def feature_inputs_cached(ds):
    """Training ranges, 0/1 flags and one-hot groups of the data's columns (what-if editor)."""
    return _cached_feature_inputs(ds)


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_importance(_model, ds, model_name, gamma, lam, k):
    from sblr.attribution import class_feature_importance

    with job_slot():
        return class_feature_importance(_model, ds.X, k, feature_names=ds.feature_names)


def class_importance(model, ds, model_name, gamma, lam, k):
    """Which input features matter for class k over the rows (mean |integrated-gradients
    credit| on a seeded sample; sblr.attribution.class_feature_importance), per (data, model,
    γ, λ, k)."""
    return waiting_for_worker(_cached_importance)(model, ds, model_name, gamma, lam, k)


# ----------------------------------------------------------------------------- other files
@st.cache_resource(max_entries=8, show_spinner="Reading the file…")
def _cached_read_like(digest, _data: bytes, name: str, _like, like_id):

    with job_slot():
        return load_dataset(_data, name=name, like=_like, max_dense_mb=MAX_DENSE_MB)


def read_like(like, like_id, data: bytes, name: str):
    """A file read as ``like`` was (a Dataset in use, or a model file's Encoding;
    load_dataset(like=)): a test file, or rows to predict. Cached per its bytes and
    ``like_id`` (what it is read like: a Dataset's fingerprint, a model file's digest), in a
    job slot, within the dashboard's size limit."""

    problem = uploads.size_problem(data)  # the upload's limits, before anything is parsed
    if problem is not None:
        raise DataError(problem)
    if getattr(like, "encoding", like) is None:
        raise DataError(
            f"{like.name!r} does not record how its file was encoded, so another file cannot "
            "be read like it."
        )
    digest = uploads.upload_digest(data, name, None, None, None) + str(like_id)
    rows = waiting_for_worker(_cached_read_like)(digest, data, name, like, like_id)
    if rows.n_samples > uploads.MAX_ROWS:
        raise DataError(uploads.rows_problem(rows.n_samples))
    return rows


@st.cache_data(max_entries=32, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_test_scores(_fitted, ds, test, model, gamma, lam):
    """The model fitted on all rows, scored on the test file: (result, true codes, P, the
    yardstick's summary)."""
    from sblr.baselines import FrequencyClassifier
    from sblr.evaluation import score_test

    with job_slot():
        X = test.X
        result = score_test(_fitted, X, test.y)
        P = np.asarray(_fitted.predict_proba(X), dtype=float)
        y = np.asarray(test.y, dtype=int) if ds.task == "multilabel" else test.class_codes()
        yard = score_test(FrequencyClassifier().fit(ds.X, ds.y), X, test.y).summary
        return result, y, P, yard


#: The most a model file opened in the dashboard may unpack to (MB): its sessions share one
#: process, which keeps the last few files opened; the library allows 1,024 MB (a 50 MB upload
#: could otherwise hold 1 GB in the server, four of them 4 GB).
MODEL_FILE_BUDGET_MB = 256


@st.cache_resource(max_entries=4, show_spinner="Opening the model file…")
def _cached_model_file(digest, _data: bytes):

    with job_slot():
        return load_model(_data, max_unpacked_mb=MODEL_FILE_BUDGET_MB)


def open_model_file(data: bytes):
    """A model file's SavedModel (sblr.modelfile.load_model: anything but an sblr model file
    is refused unrun), opened once per its bytes, in a job slot."""

    return waiting_for_worker(_cached_model_file)(hashlib.sha256(data).hexdigest(), data)


@st.cache_data(max_entries=32, show_spinner=False)
def _cached_predictions(_saved, model_id, _rows, rows_id):
    with job_slot():
        return _saved.predictions(_rows)


def predictions(saved, model_id, rows, rows_id):
    """``saved.predictions(rows)`` (sblr.modelfile.SavedModel), in a job slot and cached per
    (model, rows): a rerun of the page does not predict the file again."""
    return waiting_for_worker(_cached_predictions)(saved, model_id, rows, rows_id)


def test_scores(fitted, ds, test, model, gamma, lam):
    """The model of the sidebar, fitted on all rows of the data in use, scored on a test file:
    ``(EvaluationResult, true class codes or 0/1 matrix, probabilities, yardstick summary)``."""
    return waiting_for_worker(_cached_test_scores)(fitted, ds, test, model, gamma, lam)


@st.cache_data(max_entries=256, show_spinner=False)
def _cached_attribution(
    _fitted, fitted_id, data_id, _x, x_digest, _baseline, baseline_digest, k, leave_out, _names
):
    from sblr.attribution import feature_attributions

    with job_slot():
        return feature_attributions(
            _fitted, _x, k, baseline=_baseline, leave_out=leave_out, feature_names=_names
        )


def attribution(fitted, fitted_id, ds, x, baseline, k, leave_out=None):
    """Feature attributions of a row (sblr.attribution.feature_attributions), in a job slot
    and cached per (model, data, row values, baseline, class, leave-out): a rerun that
    changes nothing computes nothing. ``fitted_id`` names the fitted model (its kind and
    settings)."""

    def digest(v):
        return None if v is None else hashlib.sha256(np.asarray(v, float).tobytes()).hexdigest()

    return waiting_for_worker(_cached_attribution)(
        fitted,
        fitted_id,
        ds.fingerprint,
        x,
        digest(x),
        baseline,
        digest(baseline),
        int(k),
        leave_out,
        ds.feature_names,
    )


def _classes(ds):
    return np.arange(ds.n_classes) if ds.task == "multilabel" else ds.class_values()


def evaluation(ds, spec, scheme, progress=None):
    """Hold-out / k-fold scores of the model ``spec`` (a :class:`Spec`) on the splits of
    ``scheme`` (a :class:`Scheme`), fold by fold from the cache, reporting progress.

    ``progress(done, total)`` is called outside the cached functions (a UI
    element drawn inside one would be replayed on every cache hit).
    """
    if spec.l1:
        wait_for_compiled_solver()
    from sblr.evaluation import summarize

    n = len(_cached_splits(ds, scheme))
    fold_score = waiting_for_worker(_cached_fold_score)
    results = []
    for i in range(n):
        results.append(fold_score(ds, spec, scheme, i))
        if progress:
            progress(i + 1, n)
    return summarize(results, _classes(ds))


def held_out_probabilities(ds, spec, scheme):
    """(true labels, probabilities) of every test row of the evaluation (k-fold: every row
    once), from the fold cache: the threshold slider never refits. Multi-class labels come
    as class codes 0 .. m-1."""
    if spec.l1:
        wait_for_compiled_solver()
    n = len(_cached_splits(ds, scheme))
    fold = waiting_for_worker(_cached_fold_proba)
    parts = [fold(ds, spec, scheme, i) for i in range(n)]
    rows = np.concatenate([test for test, _, _ in parts])
    P = np.vstack([p for _, p, _ in parts])
    if ds.task == "multilabel":
        return ds.label_matrix()[rows], P
    # codes in the order of np.unique(y): the columns of P and Dataset.class_names
    return ds.class_codes()[rows], P


def held_out_cuts(ds, spec, scheme):
    """Per held-out row (the rows of :func:`held_out_probabilities`, in their order) the cuts
    of the model that held it out: its decisions are ``P >= cuts``."""
    n = len(_cached_splits(ds, scheme))
    fold = waiting_for_worker(_cached_fold_proba)
    parts = [fold(ds, spec, scheme, i) for i in range(n)]
    return np.vstack([np.broadcast_to(c, p.shape) for _, p, c in parts])


# ----------------------------------------------------------------------------- λ path
def path_lams():
    """The λ grid of the slider (ascending), where the path is computed."""
    return np.array([grid_value(v) for v in LOG_GRID])


def cached_path(ds, gamma, targets):
    """SparseSBLR's β along the slider's λ grid (all rows) for the target classes ``targets``
    (each class's path is stored on its own, so the sidebar's class comes first and the
    others only when asked). Returns (lams, coefs of shape (n_lams, len(targets), m))."""
    wait_for_compiled_solver()
    from sblr.models import make_model
    from sblr.tuning import coefficient_path

    lams = path_lams()
    targets = [int(t) for t in targets]
    missing = [t for t in targets if _paths().get((ds.fingerprint, gamma, t)) is None]
    if missing:
        f, F = waiting_for_worker(_cached_evidence)(ds, gamma)
        what = (
            f"class “{esc_md(ds.class_names[missing[0]])}”"  # progress text is Markdown
            if len(missing) == 1
            else f"{len(missing)} classes"
        )
        bar = _Progress(
            lambda done, total: (
                f"Computing the λ path of {what} (γ = {fmt_gamma(gamma)}): λ {done} of {total}"
            )
        )
        try:
            with job_slot(wait=True):
                model = make_model("SparseSBLR", gamma=gamma)
                coefs, _ = coefficient_path(
                    model,
                    f,
                    F,
                    lams,
                    targets=missing if len(missing) < ds.n_classes else None,
                    progress=bar,
                )
        finally:
            bar.close()
        if coefs.shape[1] != len(missing):  # two-class data: one problem, every row
            coefs = coefs[:, missing]
        for j, t in enumerate(missing):
            _paths().put((ds.fingerprint, gamma, t), coefs[:, j])
    return lams, np.stack([_paths().get((ds.fingerprint, gamma, t)) for t in targets], axis=1)


# ------------------------------------------------------------------- tuning, diagnostics, stability
#: Tune's selection schemes: label -> (inner folds or None for one 10% split, λ rule).
TUNE_SCHEMES = {
    "inner 5-fold CV": (5, "best"),
    "inner 5-fold CV, one-SE λ (sparser)": (5, "one_se"),
    "one 10% validation split (the paper's)": (None, "best"),
}


def tune(ds, model, test_size, progress, scheme="inner 5-fold CV", *, all_rows=False, metric=None):
    """Grid search over the paper's grid on the hold-out split's TRAINING rows only (every
    row with ``all_rows``: a supplied test file holds the test rows), by ``metric`` (default:
    micro-F1 of the model's decisions, at each fit's own cut; accuracy for multi-class)."""
    tunes_lam = Spec.of(model, "scale", 1.0).l1  # λ is tuned (and "one SE" applies) with L1
    if tunes_lam:
        wait_for_compiled_solver()
    from sblr import tuning
    from sblr.evaluation import make_splits
    from sblr.models import make_model

    cv, rule = TUNE_SCHEMES[scheme]
    if all_rows:
        train = np.arange(ds.n_samples)
    else:
        ((train, _),) = make_splits(ds.y, scheme="holdout", test_size=test_size)
    options = dict(
        gammas=tuning.PAPER_GRID,
        lams=tuning.PAPER_GRID,
        cv=cv,
        rule=rule if tunes_lam else "best",
        metric=metric,
    )
    X, y = ds.X[train], ds.y[train]
    return _long_job("tune", tuning.tune, make_model(model), X, y, progress=progress, **options)


def _long_job(job, func, *args, progress=None, **kwargs):
    """``func(*args, **kwargs)`` of a job that takes seconds to minutes (Tune's grid, the
    stability resamples): on the Dask cluster when :func:`_runs_on_cluster` says so (no
    step-by-step progress there), else in a job slot here, reporting ``progress`` and taking
    turns with waiting users at each step."""
    if _runs_on_cluster(job):
        return cluster.run(job, None, func, *args, **kwargs)
    with job_slot(wait=True, long=True):
        return func(*args, progress=_taking_turns(progress), **kwargs)


def _taking_turns(progress):
    """``progress`` of a long job, which also lets whoever waits for a job slot go first at
    each step (server.take_turn): Tune held its slot for its whole grid."""

    def step(*args):
        if progress is not None:
            progress(*args)
        take_turn()

    return step


@st.cache_data(
    max_entries=32, show_spinner="Checking the conditioning of the evidence…", hash_funcs=_BY_DATA
)
def _cached_diagnostics(ds, gamma):
    with job_slot():
        f, F = _cached_evidence(ds, gamma)
        model = _stored_fit(ds, "SBLR", gamma, None)
        return evidence_diagnostics(model, F)


def diagnostics(ds, gamma):
    """Condition number, VIF and separated classes of SBLR on all rows (sblr.diagnostics)."""
    return waiting_for_worker(_cached_diagnostics)(ds, gamma)


#: Bootstrap resamples of the stability view.
N_RESAMPLES = 50


@st.cache_resource
def _stabilities():
    # the bootstrap is seeded: the same data and settings give the same result for everyone
    return _Store(64)


_computing: dict = {}  # wanted -> threading.Event set when its computation ends
_computing_lock = threading.Lock()


def stability(ds, gamma, lam, progress=None):
    """Bootstrap stability of SparseSBLR's β on all rows, shared by every session (a class
    that clicks "Estimate stability" on the lesson's step together computes it once: the
    others wait for that computation). ``progress(done, total)`` reports each resample."""
    wanted = (ds.fingerprint, gamma, lam, N_RESAMPLES)
    while (found := _stabilities().get(wanted)) is None:
        with _computing_lock:
            running = _computing.get(wanted)
            if running is None:
                running = _computing[wanted] = threading.Event()
                mine = True
            else:
                mine = False
        if not mine:  # another session computes it: wait, then read it from the store
            running.wait()
            continue
        try:
            _stabilities().put(wanted, _bootstrap(ds, gamma, lam, progress))
        finally:
            with _computing_lock:
                _computing.pop(wanted, None)
            running.set()
    return found


def _bootstrap(ds, gamma, lam, progress):
    wait_for_compiled_solver()
    from sblr.stability import bootstrap_coefficients

    model = cached_fit(ds, "SparseSBLR", gamma, lam)
    F = training_evidence(ds, gamma)
    return _long_job(
        "stability", bootstrap_coefficients, model, F, progress=progress, n_resamples=N_RESAMPLES
    )


def stability_with_progress(ds, gamma, lam):
    """:func:`stability`, with a progress bar resample by resample (the button's action)."""
    bar = st.progress(0.0, text="Bootstrapping β…")
    try:
        return stability(
            ds,
            gamma,
            lam,
            progress=lambda done, total: bar.progress(
                done / total, text=f"Resample {done} of {total}"
            ),
        )
    finally:
        bar.empty()


def stored_stability(ds, gamma, lam):
    """The stability result of these settings if it was computed (by anyone), else None."""
    return _stabilities().get((ds.fingerprint, gamma, lam, N_RESAMPLES))


# ----------------------------------------------------------------------------- data page
@st.cache_data(max_entries=8, show_spinner="Computing the PCA…", hash_funcs=_BY_DATA)
def _cached_pca(ds):
    with job_slot():
        return plots.pca_coordinates(ds.X)


def pca_coordinates(ds):
    """The data page's 2-D PCA of the rows, per data set (sblr.plots.pca_coordinates)."""
    return waiting_for_worker(_cached_pca)(ds)


# ----------------------------------------------------------------------------- compare page
@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=_BY_DATA)
def _cached_compare_splits(ds, folds):
    """The folds ``protocol.run_benchmark`` uses (seed 0), so results match the CLI's."""
    from sblr import protocol

    return protocol.benchmark_splits(ds, folds)


@st.cache_data(max_entries=2048, show_spinner=False, hash_funcs=_BY_DATA)
def cached_compare_fold(ds, method, fold, folds, grid):
    """``protocol.run_fold`` for one (data, method, fold, folds, grid): selection on the
    training fold's 10% validation split, refit, scores on the test fold."""
    from sblr import protocol

    if _runs_on_cluster("compare"):  # the fold runs there (compare_methods submitted it)
        result = _submit_fold(ds, method, fold, folds, grid).result()
        _folds_computed().add((ds.fingerprint, method, fold, folds, grid))
        return result
    splits = _cached_compare_splits(ds, folds)
    with job_slot():  # a Cancel stops the fold at its next grid point, the slot goes back
        return protocol.run_fold(
            ds, method, fold, splits, grid=_plain_grid(grid), checkpoint=stop_if_rerun_requested
        )


def _plain_grid(grid):
    """The protocol's grid from its hashable form: (name, values) pairs -> a dict."""
    return dict(grid) if grid and isinstance(grid[0], tuple) else grid


def _submit_fold(ds, method, fold, folds, grid):
    """One Compare fold on the cluster, keyed by what identifies it (submitted twice, it runs
    once)."""
    from sblr import protocol

    splits = _cached_compare_splits(ds, folds)
    return cluster.submit(
        "fold",
        (ds.fingerprint, method, fold, folds, grid),
        protocol.run_fold,
        ds,
        method,
        fold,
        splits,
        grid=_plain_grid(grid),
    )


@st.cache_resource
def _folds_computed():
    """The (data, method, fold, folds, grid) of the folds the cluster computed: not sent
    again when a run asks for them (they are cached; one that left the cache is computed
    when it is asked for, on its own)."""
    return set()


def compare_methods(ds, methods, folds, grid, progress=None):
    """Cross-validate ``methods`` fold by fold from the cache, as ``run_benchmark`` would.

    ``progress(done, total, method, fold, timed)`` is called before each fold, outside the
    cached function; ``timed`` maps each method to the seconds of its folds done so far (as
    first computed: selection and final fit), for :func:`sblr.stats.fold_forecast`.
    Returns a :class:`sblr.protocol.BenchmarkResult`.
    """
    from sblr.protocol import collect_results

    if "sparse_sblr" in methods:
        wait_for_compiled_solver()
    if isinstance(grid, Mapping):  # one grid per parameter, as hashable (name, values) pairs
        grid = tuple((name, tuple(float(v) for v in grid[name])) for name in sorted(grid))
    else:
        grid = tuple(float(g) for g in grid)
    total = len(methods) * folds
    pending = []  # the futures live until their folds are read below
    if _runs_on_cluster("compare"):  # every fold at once: the workers run them together
        pending = [
            _submit_fold(ds, method, fold, folds, grid)
            for method in methods
            for fold in range(folds)
            # most likely in the cache: not again
            if (ds.fingerprint, method, fold, folds, grid) not in _folds_computed()
        ]
    done = []
    timed = {method: [] for method in methods}
    for i, method in enumerate(methods):
        for fold in range(folds):
            if progress:
                progress(i * folds + fold, total, method, fold, timed)
            res = waiting_for_worker(cached_compare_fold)(ds, method, fold, folds, grid)
            timed[method].append(res.select_seconds + res.fit_seconds)
            done.append(((ds.name, method, fold), res))
    del pending  # every fold is read: the cluster may forget them
    if progress:
        progress(total, total, None, None, timed)
    return collect_results(done)


# ----------------------------------------------------------------------------- report
def _decision_context(fitted):
    """The report's line on how the model decides (its fitted cut), for multi-label data."""

    cuts = getattr(fitted, "threshold_", None)
    if cuts is None:
        own = getattr(fitted, "multilabel_", False)
        return {"decision": "top ξ(x) classes (SML's own rule)"} if own else {}
    return {"decision": "π ≥ " + describe(getattr(fitted, "threshold", None), cuts)}


def analysis_report(ds, s, progress=None):
    """The report of the sidebar's settings as HTML bytes (report.analysis_report), from
    the cached work: metrics on a 25% hold-out split, both models' β̃ fitted on all rows, and
    the Class contributions of the sidebar's class. ``progress(done, total, text)``."""
    wait_for_compiled_solver()  # both models are fitted

    def step(i, text):
        if progress:
            progress(i, 3, text)

    step(0, "Evaluating on a 25% hold-out split…")
    result = evaluation(ds, s.spec, HOLDOUT)
    yardsticks, no_label = {}, None
    lr = lr_yardstick(ds, HOLDOUT)
    if lr is not None:
        yardsticks["LR (scikit-learn)"] = lr[0]
    yardsticks["ignores the features"] = yardstick(ds, HOLDOUT)
    if ds.task == "multilabel":
        from sblr.metrics import decision_counts

        y, P = held_out_probabilities(ds, s.spec, HOLDOUT)
        cuts = held_out_cuts(ds, s.spec, HOLDOUT)
        counts = decision_counts(y, P, cuts)
        truth = int((np.asarray(y).sum(axis=1) == 0).sum())
        no_label = f"{counts['empty_rows']:,} of {counts['rows']:,}; truth {truth:,}" + (
            f"; LR {lr[1]:,}" if lr is not None else ""
        )
    step(1, "Fitting SBLR and SparseSBLR on all rows…")
    sblr_model = cached_fit(ds, "SBLR", s.gamma, s.lam)
    sparse = cached_fit(ds, "SparseSBLR", s.gamma, s.lam)
    F = training_evidence(ds, s.gamma)
    step(2, "Drawing β and the class contributions…")
    page = html_analysis_report(
        ds,
        s.k,
        sblr_model=sblr_model,
        sparse_model=sparse,
        evidence=F,
        evaluation=result,
        model=s.model,
        yardsticks=yardsticks,
        no_label=no_label,
        context={
            **context(ds, s, with_lam=True),
            "evaluation": "25% hold-out split (stratified when possible), seed 0",
            **_decision_context(cached_fit(ds, s.model, s.gamma, s.lam)),
        },
    )
    step(3, "Done")
    return page.encode()
