"""The dashboard's compute layer: the only place it starts expensive work in :mod:`sblr`.

Pages ask typed questions (:mod:`pages._shared.questions`: a data set, a :class:`Spec`, a
:class:`Scheme`...) and get answers cached for every session of the server: a data set is
identified by its content (``Dataset.fingerprint``, through Streamlit's ``hash_funcs``), not
by a key passed beside it. Evidence is cached per (data, γ), so moving the λ slider refits
only the logistic layer.

One policy for a computation, applied by :func:`heavy`: it is cached (``st.cache_data``, or
``st.cache_resource`` for read-only objects kept rather than copied), runs in a job slot
(:mod:`pages._shared.server`) on a miss, and waits its turn, saying so, when the server is
busy. Work that draws its own progress (fits, the λ path) is kept in a
:class:`~pages._shared.stores.Store` instead: a UI element drawn inside a cached function
would be replayed on every cache hit. Jobs of seconds to minutes (Tune, stability, Compare)
are in :mod:`pages._shared.long_jobs`.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import pickle
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import streamlit as st

from pages._shared import cluster
from pages._shared import data as uploads
from pages._shared.data import MAX_DENSE_MB
from pages._shared.formatting import LOG_GRID, esc_md, fmt_gamma, grid_value
from pages._shared.questions import HASH_FUNCS, Scheme, Spec
from pages._shared.server import (
    job_slot,
    take_turn,
    waiting_for_worker,
)
from pages._shared.stores import Progress, Store, solver_ready
from sblr import DataError, plots
from sblr.diagnostics import evidence_diagnostics, sparse_conditioning
from sblr.display import duration, settings_label
from sblr.io import load_dataset
from sblr.modelfile import load_model
from sblr.registry import SBLR, SML, SPARSE_SBLR
from sblr.scaling import scale_gamma as value_of_scale

# The sblr modules that import scikit-learn (evaluation, models, baselines, attribution,
# metrics, tuning, stability, protocol: about 1 s at the first import) are imported in the
# functions that use them: a page that needs none of them (the home page, Data, the sidebar)
# opens without it (benchmarks/startup.py; tests/test_startup.py keeps it so).

__all__ = [
    "FitPlan",
    "attribution",
    "cached_fit",
    "cached_path",
    "class_importance",
    "decision_cuts",
    "diagnostics",
    "evaluation",
    "feature_inputs_cached",
    "fit_beside",
    "fit_plan",
    "heavy",
    "held_out_cuts",
    "held_out_probabilities",
    "label_sets",
    "open_model_file",
    "path_lams",
    "pca_coordinates",
    "predictions",
    "read_like",
    "scale_gamma",
    "shared_figure",
    "sml_without_row",
    "stored_fit",
    "test_scores",
    "training_evidence",
    "yardstick",
    "yardstick_predicts_nothing",
]


# ----------------------------------------------------------------------------- the policy
def heavy(*, keep: int, resource: bool = False, spinner: str | bool = False, job=None, solver=None):
    """Decorate a function that answers a question from :mod:`sblr` with the layer's policy.

    The answer is cached, ``keep`` answers at most (``st.cache_data``: each caller gets a
    copy; ``resource=True``: one object shared read-only, its arrays made read-only, kept in
    the server's one store of arrays, bounded in bytes for every function together by
    :data:`CACHE_BYTES`: for models, evidence and anything large), its arguments hashed by
    :data:`~pages._shared.questions.HASH_FUNCS` (an argument whose name starts with ``_`` is
    not hashed: pass what identifies it beside it).
    On a miss the function runs in a job slot; when every slot is taken the caller waits its
    turn with a spinner that says its place (:func:`~pages._shared.server.waiting_for_worker`),
    and ``spinner`` (a text) says what is computed. A cache hit never waits. A heavy function
    may call another: the slot is re-entrant. ``job`` names a job that may run on the Dask
    cluster (``cluster.runs_on_cluster``, asked of the first argument, the data set): there it
    holds no slot here while it waits. ``solver`` (a function of the call's arguments) says
    whether the call needs SparseSBLR's compiled solver: while it is being prepared the call
    waits for it first, saying so (:func:`~pages._shared.server.wait_for_compiled_solver`),
    outside the cache (nothing is drawn inside a cached function); a page never waits for it
    by hand. ``.clear()`` empties its cache.
    """

    def decorate(func):
        @functools.wraps(func)
        def in_slot(*args, **kwargs):
            if job is not None and cluster.runs_on_cluster(job, args[0]):
                return func(*args, **kwargs)
            with job_slot():
                return func(*args, **kwargs)

        if resource:
            cached = _kept(in_slot, keep, spinner)
        else:
            cached = st.cache_data(max_entries=keep, show_spinner=spinner, hash_funcs=HASH_FUNCS)(
                in_slot
            )
        waited = waiting_for_worker(cached)

        @functools.wraps(func)
        def call(*args, **kwargs):
            if solver is not None and solver(*args, **kwargs):
                solver_ready()  # at once when it is loaded
            return waited(*args, **kwargs)

        call.clear = cached.clear
        return call

    return decorate


def _kept(func, keep, spinner):
    """``func`` with its answers kept in the server's one store of arrays (:func:`_stores`,
    bounded by :data:`CACHE_BYTES` for all of them together), at most ``keep`` of its own;
    its arguments identified as Streamlit's caches would (:func:`_argument_key`)."""
    group = f"{func.__module__}.{func.__qualname__}"
    signature = inspect.signature(func.__wrapped__)

    def call(*args, **kwargs):
        key = (group, _argument_key(signature, args, kwargs))

        def make():
            with st.spinner(spinner) if isinstance(spinner, str) else nullcontext():
                return _read_only(func(*args, **kwargs))

        return _stores()["memory"].get_or_make(key, make, group=group, keep=keep)

    call.clear = lambda: _stores()["memory"].clear(group)
    return call


def _read_only(value, depth=0):
    """``value`` with the arrays in it (in tuples, lists and dicts) made read-only: a kept
    answer is shared by every session, so a caller that changed it in place would change it
    for all (it fails loudly instead)."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif depth < 3 and isinstance(value, (tuple, list)):
        for v in value:
            _read_only(v, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for v in value.values():
            _read_only(v, depth + 1)
    return value


def _argument_key(signature, args, kwargs) -> tuple:
    """What identifies a call: its arguments by name (those starting with ``_`` left out, as
    Streamlit's caches do), each by :data:`~pages._shared.questions.HASH_FUNCS`, bytes and
    arrays by a digest of their content, other hashable values as they are."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(
        (name, _identity(value))
        for name, value in bound.arguments.items()
        if not name.startswith("_")
    )


def _identity(value):
    for kind, identify in HASH_FUNCS.items():
        if isinstance(value, kind):
            return (kind.__name__, identify(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("bytes", hashlib.blake2b(value, digest_size=16).hexdigest())
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value).view(np.uint8).tobytes()
        return ("array", value.dtype.str, value.shape, hashlib.blake2b(data).hexdigest())
    try:
        hash(value)
    except TypeError:
        return ("pickled", hashlib.blake2b(pickle.dumps(value), digest_size=16).hexdigest())
    return value


@st.cache_resource(max_entries=16, show_spinner=False)
def shared_figure(key: tuple, _build):
    """The figure ``_build()`` makes, built once per ``key`` in this server and shared by every
    session that asks with the same key (a class on the lesson: 30 students, one β heatmap).

    ``key`` names everything the figure shows (``ds.fingerprint``, the model's settings, the
    display choices); ``_build`` is not hashed. The figure is shared: draw it, never change
    it (a change goes into ``_build``). Sixteen are kept: a β heatmap of all 174 classes is
    1.6 MB as JSON, in the one process that serves everyone."""
    return _build()


#: Bytes of arrays the server keeps for all sessions together (``SBLR_CACHE_MB``, default 1024
#: MiB): evidence, fits, λ paths and every ``heavy(resource=True)`` answer, in one store; the
#: least recently used go first. docs/hosting.md states the server's whole budget.
CACHE_BYTES = int(float(os.environ.get("SBLR_CACHE_MB", "1024")) * 2**20)


@st.cache_resource
def _stores() -> dict:
    """The server's one store of kept arrays (a resource: one for the server, however often
    Streamlit re-imports this module), and its groups for work that draws its own progress
    (fits, folds' models, λ paths). A SparseSBLR fit on 174 classes holds ~0.25 MB of its own
    (plus its featurizer's training rows, shared with the evidence); a λ path is one class's
    β along the grid."""
    memory = Store(8192, max_bytes=CACHE_BYTES)
    return {
        "memory": memory,
        "fits": memory.group("fits", 128),
        "folds": memory.group("folds", 128),  # an evaluation's fold models
        "paths": memory.group("paths", 256),
    }


# ----------------------------------------------------------------------------- evidence and fits
@heavy(keep=8, resource=True, spinner="Computing distances…")
def _distances(ds, scheme, i):
    """Squared distances of a split's scaled rows (``scheme.kind == "all"``: every row
    trains), kept so that a γ change costs only exp(-γD)."""
    from sblr.evaluation import fold_distances

    if scheme.kind == "all":
        train, test = np.arange(ds.n_samples), np.arange(0)
    else:
        train, test = _splits(ds, scheme)[i]
    return fold_distances(ds.X, ds.y, train, test)


# Kept in the server's one store of arrays, bounded in bytes: a class of 30 with 1,000-row files
# of their own needs 30 evidences of 64 KB, one user of a 20,000-row file a few of 28 MB.
@heavy(keep=256, resource=True, spinner="Computing class evidence…", job="evidence")
def _evidence(ds, gamma):
    """Featurizer fitted on all rows and its leave-one-out evidence, per (data, γ)."""
    from sblr.evaluation import fold_evidence

    every = (np.arange(ds.n_samples), np.arange(0))
    model = Spec.of(SBLR, gamma).estimator()
    if cluster.runs_on_cluster("evidence", ds):  # its distances computed there too
        job = cluster.submit("evidence", None, fold_evidence, model, ds.X, ds.y, [every])
        (fold,) = job.result()
    else:
        D = _distances(ds, Scheme("all"), 0)
        (fold,) = fold_evidence(model, ds.X, ds.y, [every], distances=[D])
    return fold.featurizer, fold.F_train


def training_evidence(ds, gamma):
    """Leave-one-out evidence of every row (all rows as training data), per (data, γ)."""
    return _evidence(ds, gamma)[1]


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def scale_gamma(ds):
    """The value of γ = "scale" on this data: 1 / (d · Var X) of the scaled rows."""
    return float(value_of_scale(ds.X))


def cached_fit(ds, spec, *, decided=False, quiet=False, long=False):
    """The model ``spec`` fitted on all rows, stored for every session; SBLR/SparseSBLR reuse
    the cached evidence. ``decided``: with its decision (the cuts of a multi-label model,
    fitted on out-of-fold probabilities of its rows: five more layer fits), for a page that
    predicts; without, only β (a λ move on Coefficients never pays for the cuts). A fit not
    stored yet shows its progress class by class, waiting for a job slot; ``quiet``: inside a
    cached function, which must not draw (no progress, no spinner, and
    :class:`~pages._shared.server.ServerBusy` when every slot is taken). ``long``: a fit
    offered behind a button (:class:`FitPlan` "ask": minutes), made once when several
    sessions ask (the others wait for it), in a long job's slot, standing aside at each class
    while other users compute (as Tune and stability do)."""
    if decided and spec.from_evidence:
        return _decided_fit(ds, spec, quiet)
    key, fits = (ds.fingerprint, spec), _stores()["fits"]
    found = fits.get(key)
    if found is not None:
        return found
    if spec.l1:  # its compiled solver first (prepared since the server started)
        solver_ready(quiet)
    if long:
        return fits.get_or_make(key, lambda: _fit(ds, spec, quiet, long=True))
    return fits.put(key, _fit(ds, spec, quiet))


def _fit(ds, spec, quiet, long=False):
    """``spec`` fitted on all rows (β only), its progress drawn class by class unless
    ``quiet``."""
    est = spec.estimator()
    evidence = _evidence(ds, spec.gamma) if spec.from_evidence else None
    where = settings_label(spec.gamma, spec.lam)
    bar = None if quiet else Progress(
        lambda done, total: f"Fitting {spec.model} ({where}): class {done} of {total}"
    )  # fmt: skip

    def step(done, total):
        if bar is not None:
            bar(done, total)
        if long:
            take_turn()

    saying = st.spinner(f"Fitting {spec.model}…") if bar and evidence is None else nullcontext()
    try:
        with saying, job_slot(wait=not quiet, long=long):
            if evidence is None:
                est.fit(ds.X, ds.y)
            else:
                est.fit_from_evidence(*evidence, progress=step, cuts=False)
    finally:
        if bar is not None:
            bar.close()
    return est


def stored_fit(ds, spec):
    """The model ``spec`` if anyone fitted it on ``ds`` (β only), else None; never fits."""
    return _stores()["fits"].get((ds.fingerprint, spec))


@dataclass(frozen=True)
class FitPlan:
    """Whether the model ``spec`` is fitted on a data set without asking: its layer's
    :meth:`~sblr.registry.Method.layer_plan` (one budget with the command line,
    :data:`sblr.registry.LAYER_BUDGET`): ``plan`` "auto" (fitted when a view asks), "ask"
    (offered behind a button, its time said) or "refuse" (hours: not offered); ``stored``:
    fitted already, by anyone (then shown whatever its plan)."""

    spec: Spec
    plan: str
    seconds: float  # its layer's estimated time (sblr.registry.Method.layer_seconds)
    n_rows: int
    n_classes: int
    stored: bool

    @property
    def shown(self) -> bool:
        """Whether a view fits it (or finds it) without asking."""
        return self.plan == "auto" or self.stored

    @property
    def offered(self) -> bool:
        """Whether a button offers to fit it (its plan "ask", not fitted yet)."""
        return self.plan == "ask" and not self.stored

    @property
    def cost(self) -> str:
        """Its time and why, in a clause (Markdown-free): "at least" where it is refused, the
        cost model's rate being a floor at that size (delicious: 1.8 h by it, 16 h measured)."""
        m = self.n_classes
        about = "at least" if self.plan == "refuse" else "about"
        return (
            f"{about} {duration(self.seconds)} on these {self.n_rows:,} rows (each of its "
            f"{m:,} classes solved on all {m:,} classes' evidence: 8·n·(m+1)²·m multiply-adds, "
            f"cubic in the classes)"
        )

    def sentence(self, instead) -> str:
        """Why a view shows ``instead`` (a model's label) without this model (Markdown)."""
        name = self.spec.model
        if self.plan == "refuse":
            return (
                f"**{name} is not fitted here**: its fit would take {self.cost}, too long for "
                f"the dashboard, so {instead} is shown alone (`sblr fit --method "
                f"{self.spec.entry.key}` fits it from the command line)."
            )
        return (
            f"**{name} is not fitted automatically here**: its fit takes {self.cost}. "
            f"{instead} is shown alone; fit {name} below to see both."
        )

    @property
    def button(self) -> str:
        return f"Fit {self.spec.model} (about {duration(self.seconds)})"

    def before(self, instead, fits=1) -> str:
        """What fitting this model, the sidebar's, costs, said before anything starts
        (Markdown); ``fits``: how many fits the page makes of it (an evaluation's splits and
        cuts), ``instead`` the model offered in its place."""
        name = self.spec.model
        more = ""
        if fits > 1:
            would = "would fit" if self.plan == "refuse" else "fits"
            more = f" The page {would} it about {fits:g} times (its splits and cuts)."
        if self.plan == "refuse":
            return (
                f"**{name}, the sidebar's model, is not fitted here**: one fit would take "
                f"{self.cost}, too long for the dashboard.{more} Choose {instead}, which "
                f"keeps a few columns per class, or run `sblr fit --method {self.spec.entry.key}`."
            )
        return (
            f"**{name}, the sidebar's model, takes long to fit here**: one fit takes "
            f"{self.cost}.{more} Choose {instead}, which keeps a few columns per class, or go "
            "ahead."
        )


def fit_plan(ds, spec) -> FitPlan:
    """The :class:`FitPlan` of ``spec`` on ``ds``: from the data's shape, never its name."""
    entry, n, m = spec.entry, ds.n_samples, ds.n_classes
    return FitPlan(
        spec,
        entry.layer_plan(n, m),
        entry.layer_seconds(n, m),
        n,
        m,
        stored_fit(ds, spec) is not None,
    )


def fit_beside(ds, spec):
    """``(model, plan)`` of a model a view shows beside the sidebar's (SBLR beside
    SparseSBLR): the model fitted (:func:`cached_fit`) where its :class:`FitPlan` shows it,
    else None (the view says why with ``plan.sentence`` and, when ``plan.offered``, offers
    :func:`cached_fit` with ``long=True`` behind a button)."""
    plan = fit_plan(ds, spec)
    return (cached_fit(ds, spec) if plan.shown else None), plan


def _decided_fit(ds, spec, quiet):
    """:func:`cached_fit` with its decision: a copy of the β-only fit with ``fit_decision``
    (the β fit is shared, not refitted)."""
    import copy

    key, fits = (ds.fingerprint, spec, "decided"), _stores()["fits"]
    found = fits.get(key)
    if found is not None:
        return found
    base = cached_fit(ds, spec, quiet=quiet)
    est = copy.copy(base)  # shares β, the featurizer and the evidence; gets its own cuts
    F = _evidence(ds, spec.gamma)[1]
    bar = None if quiet else Progress(
        lambda done, total: f"Fitting {spec.model}'s decision: its cuts on out-of-fold "
        f"probabilities (5 folds), class fit {done:,} of {total:,}"
    )  # fmt: skip
    try:
        with job_slot(wait=not quiet):
            est.fit_decision(F, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    return fits.put(key, est)


@heavy(keep=16, resource=True, spinner="Fitting SML without this row…")
def sml_without_row(ds, gamma, row):
    """SML fitted on every row but ``row`` (SML has no leave-one-out evidence of its own:
    its set sizes come from similarity sums by label-set size); kept per (data, γ, row), so
    a λ or class change on the explain page does not refit it."""
    keep = np.arange(ds.n_samples) != row
    return Spec.of(SML, gamma).estimator().fit(ds.X[keep], ds.y[keep])


# ----------------------------------------------------------------------------- evaluation
def _needs_solver(ds, spec, *args, **kwargs) -> bool:
    """Whether a question of ``spec`` needs the compiled solver (``heavy``'s ``solver``)."""
    return spec.l1


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def _splits(ds, scheme):
    from sblr.evaluation import make_splits

    return make_splits(
        ds.y, scheme=scheme.kind, test_size=scheme.test_size, n_splits=scheme.n_splits
    )


@heavy(keep=64, resource=True)
def _evidence_fold(ds, gamma, scheme, i):
    """A split's evidence (training rows leave-one-out, test rows against the training rows)."""
    from sblr.evaluation import fold_evidence

    model = Spec.of(SBLR, gamma).estimator()
    D = _distances(ds, scheme, i)
    return fold_evidence(model, ds.X, ds.y, [_splits(ds, scheme)[i]], distances=[D])[0]


def _fold_of(ds, spec, scheme, i):
    """The fold as a model fits it: SML on its rows, SBLR/SparseSBLR on its cached evidence."""
    if not spec.from_evidence:
        return _splits(ds, scheme)[i]
    return _evidence_fold(ds, spec.gamma, scheme, i)


def _fold_model(ds, spec, scheme, i, progress=None):
    """One fold's model, fitted once for both its scores and its probabilities and kept for
    every session. ``progress(fraction, text)`` (of this fold, 0 to 1) when it is fitted:
    the evidence, the layer class by class, then its cuts; without it (inside a cached
    function) it draws nothing."""
    key, folds = (ds.fingerprint, spec, scheme, i), _stores()["folds"]
    found = folds.get(key)
    if found is not None:
        return found

    def make():
        from sblr.evaluation import fit_fold

        say = progress or (lambda fraction, text: None)
        if spec.l1:
            solver_ready(quiet=progress is None)
        say(0.0, "the class evidence of its rows…" if spec.from_evidence else f"{spec.model}…")
        fold = _fold_of(ds, spec, scheme, i)

        def layer(done, total):
            say(0.2 + 0.5 * done / total, f"{spec.model}'s layer, class {done:,} of {total:,}")

        def cuts(done, total):  # 5 layer fits, warm-started: about half as long each
            say(
                0.7 + 0.3 * done / total,
                f"{spec.model}'s cuts on out-of-fold probabilities, class fit {done:,} of "
                f"{total:,}",
            )

        with job_slot(wait=progress is not None):
            estimator = spec.estimator()
            return fit_fold(estimator, ds.X, ds.y, fold, progress=layer, decision_progress=cuts)

    return folds.get_or_make(key, make)


@heavy(keep=512, solver=_needs_solver)
def _fold_score(ds, spec, scheme, i):
    """One fold's scores."""
    from sblr.evaluation import score_fold

    fitted, fold = _fold_model(ds, spec, scheme, i), _fold_of(ds, spec, scheme, i)
    return score_fold(fitted, ds.X, ds.y, fold, _classes(ds), prefit=True)


@heavy(keep=512, resource=True, solver=_needs_solver)
def _fold_proba(ds, spec, scheme, i):
    """One fold's test rows, their probabilities and the fold model's cuts."""
    from sblr.evaluation import fold_probabilities

    fitted, fold = _fold_model(ds, spec, scheme, i), _fold_of(ds, spec, scheme, i)
    test, P = fold_probabilities(fitted, ds.X, ds.y, fold, prefit=True)
    return test, P, decision_cuts(fitted, P)


def decision_cuts(fitted, P):
    """The cut of every entry of probabilities ``P`` at which ``P >= cuts`` decides as the
    fitted model (its :class:`~sblr.decision.Decision`: its class cuts, lowered where its
    fill cut gives an empty row its top class; 0.5 for an own rule, at which its
    probabilities are 0.5, and for multi-class data)."""
    from sblr.decision import Decision

    P = np.asarray(P, dtype=float)
    chosen = Decision.of(fitted, P.shape[1])
    if chosen.kind == "argmax" or chosen.cuts is None:
        return np.full(P.shape, 0.5)
    return chosen.entry_cuts(P)


def _classes(ds):
    return np.arange(ds.n_classes) if ds.is_multilabel else ds.class_values()


def evaluation(ds, spec, scheme, progress=None):
    """Hold-out / k-fold scores of the model ``spec`` on the splits of ``scheme``, fold by
    fold from the cache; ``progress(fraction, text)`` as each fold's model is fitted (its
    evidence, its layer class by class, its cuts: a hold-out is one fold) and between folds
    (outside the cached functions)."""
    from sblr.evaluation import summarize

    n = len(_splits(ds, scheme))
    results = []
    for i in range(n):
        if progress:

            def within(fraction, text, i=i):
                progress((i + fraction) / n, f"Evaluating: fold {i + 1} of {n}, {text}")

            _fold_model(ds, spec, scheme, i, progress=within)
        results.append(_fold_score(ds, spec, scheme, i))
        if progress:
            progress((i + 1) / n, f"Evaluating: fold {i + 1} of {n} done")
    return summarize(results, _classes(ds))


def _held_out(ds, spec, scheme):
    return [_fold_proba(ds, spec, scheme, i) for i in range(len(_splits(ds, scheme)))]


def held_out_probabilities(ds, spec, scheme):
    """(true labels, probabilities) of every test row of the evaluation (k-fold: every row
    once), from the fold cache: the threshold slider never refits. Multi-class labels come
    as class codes 0 .. m-1 (the order of the columns of P and ``Dataset.class_names``)."""
    parts = _held_out(ds, spec, scheme)
    rows = np.concatenate([test for test, _, _ in parts])
    P = np.vstack([p for _, p, _ in parts])
    truth = ds.label_matrix() if ds.is_multilabel else ds.class_codes()
    return truth[rows], P


def held_out_cuts(ds, spec, scheme):
    """Per held-out row (the rows of :func:`held_out_probabilities`, in their order) the cuts
    of the model that held it out, entry by entry: its decisions are ``P >= cuts``."""
    parts = _held_out(ds, spec, scheme)
    return np.vstack([c for _, _, c in parts])


@heavy(keep=64)
def yardstick(ds, scheme):
    """The scores of the frequency yardstick on the evaluation's folds: what a model that
    ignores the rows scores (sblr.baselines.FrequencyClassifier)."""
    from sblr.baselines import FrequencyClassifier
    from sblr.evaluation import evaluate_folds

    return evaluate_folds(FrequencyClassifier(), ds.X, ds.y, _splits(ds, scheme)).summary


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def yardstick_predicts_nothing(ds) -> bool:
    """Whether the yardstick's decisions are "no label": multi-label data whose every label is
    carried by at most half the rows (FrequencyClassifier's rule). Once per data set: not on
    every slider move."""
    if ds.task != "multilabel":
        return False
    return bool((np.asarray(ds.y).mean(axis=0) <= 0.5).all())


@heavy(keep=16, spinner="Counting the label sets…")
def label_sets(ds, top):
    """The data's ``top`` most frequent label sets and how many there are
    (sblr.interpret.label_sets: 0.5 s for 150,000 rows of 174 labels)."""
    from sblr.interpret import label_sets as label_sets_of

    return label_sets_of(ds.label_matrix(), ds.class_names, top=top)


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=HASH_FUNCS)
def feature_inputs_cached(ds):
    """Training ranges, 0/1 flags and one-hot groups of the data's columns (what-if editor)."""
    from sblr.attribution import feature_inputs

    return feature_inputs(ds.X, ds.feature_names)


@heavy(keep=64)
def class_importance(ds, spec, k):
    """Which input features matter for class k over the rows (mean |integrated-gradients
    credit| on a seeded sample; sblr.attribution.class_feature_importance), per (data, model,
    k)."""
    from sblr.attribution import class_feature_importance

    model = cached_fit(ds, spec, quiet=True)
    return class_feature_importance(model, ds.X, k, feature_names=ds.feature_names)


@heavy(keep=256)
def attribution(_fitted, fitted_id, ds, question):
    """Feature credits of a row (sblr.attribution.feature_attributions; a
    :class:`RowQuestion`), cached per (model, data, question): a rerun that changes nothing
    computes nothing. ``fitted_id`` names the fitted model (its kind and settings)."""
    from sblr.attribution import feature_attributions

    q = question
    return feature_attributions(
        _fitted, q.x, q.k, baseline=q.baseline, leave_out=q.leave_out,
        feature_names=ds.feature_names,
    )  # fmt: skip


# ----------------------------------------------------------------------------- other files
@heavy(keep=8, resource=True, spinner="Reading the file…")
def read_like(_like, like_id, data: bytes, name: str):
    """A file read as ``_like`` was (a Dataset in use, or a model file's Encoding;
    load_dataset(like=)): a test file, or rows to predict; cached per its bytes and
    ``like_id`` (what it is read like: a Dataset's fingerprint, a model file's digest),
    within the dashboard's size limits."""
    problem = uploads.size_problem(data)  # the upload's limits, before anything is parsed
    if problem is not None:
        raise DataError(problem)
    if getattr(_like, "encoding", _like) is None:
        raise DataError(
            f"{_like.name!r} does not record how its file was encoded, so another file cannot "
            "be read like it."
        )
    # the row limit counted before the values are parsed: 790,000 rows of empty cells (within
    # size_problem's four lines a row) were parsed first, 13 s and 3.5 GB (issue #44)
    return load_dataset(
        data, name=name, like=_like, max_dense_mb=MAX_DENSE_MB, max_rows=uploads.MAX_ROWS
    )


@heavy(
    keep=32,
    resource=True,
    spinner="Scoring the model on the rows of the test file…",
    solver=_needs_solver,
)
def test_scores(ds, spec, test):
    """The model ``spec`` fitted on all rows of the data in use, scored on a test file:
    ``(EvaluationResult, true class codes or 0/1 matrix, probabilities, yardstick summary)``."""
    from sblr.baselines import FrequencyClassifier
    from sblr.evaluation import score_test

    fitted = cached_fit(ds, spec, decided=True, quiet=True)
    result = score_test(fitted, test.X, test.y)
    P = np.asarray(fitted.predict_proba(test.X), dtype=float)
    y = np.asarray(test.y, dtype=int) if ds.is_multilabel else test.class_codes()
    yard = score_test(FrequencyClassifier().fit(ds.X, ds.y), test.X, test.y).summary
    return result, y, P, yard


#: The most a model file opened in the dashboard may unpack to (MB): its sessions share one
#: process, which keeps the last few files opened; the library allows 1,024 MB (a 50 MB upload
#: could otherwise hold 1 GB in the server, four of them 4 GB).
MODEL_FILE_BUDGET_MB = 256


@heavy(keep=4, resource=True, spinner="Opening the model file…")
def open_model_file(data: bytes):
    """A model file's SavedModel (sblr.modelfile.load_model: anything but an sblr model file
    is refused unrun), opened once per its bytes."""
    return load_model(data, max_unpacked_mb=MODEL_FILE_BUDGET_MB)


@heavy(keep=32, resource=True)
def predictions(_saved, model_id, _rows, rows_id):
    """``saved.predictions(rows)`` (sblr.modelfile.SavedModel), cached per (model, rows): a
    rerun of the page does not predict the file again."""
    return _saved.predictions(_rows)


# ----------------------------------------------------------------------------- λ path
def path_lams():
    """The λ grid of the slider (ascending), where the path is computed."""
    return np.array([grid_value(v) for v in LOG_GRID])


def cached_path(ds, gamma, targets):
    """SparseSBLR's β along the slider's λ grid (all rows) for the target classes ``targets``
    (each class's path is stored on its own, so the sidebar's class comes first and the
    others only when asked). Returns (lams, coefs of shape (n_lams, len(targets), m))."""
    from sblr.tuning import coefficient_path

    lams, paths = path_lams(), _stores()["paths"]
    targets = [int(t) for t in targets]
    missing = [t for t in targets if paths.get((ds.fingerprint, gamma, t)) is None]
    if missing:
        solver_ready()
        f, F = _evidence(ds, gamma)
        what = (
            f"class “{esc_md(ds.class_names[missing[0]])}”"  # progress text is Markdown
            if len(missing) == 1
            else f"{len(missing)} classes"
        )
        bar = Progress(
            lambda done, total: (
                f"Computing the λ path of {what} (γ = {fmt_gamma(gamma)}): λ {done} of {total}"
            )
        )
        some = missing if len(missing) < ds.n_classes else None
        try:
            with job_slot(wait=True):
                model = Spec.of(SPARSE_SBLR, gamma).estimator()
                coefs, _ = coefficient_path(model, f, F, lams, targets=some, progress=bar)
        finally:
            bar.close()
        if coefs.shape[1] != len(missing):  # two-class data: one problem, every row
            coefs = coefs[:, missing]
        for j, t in enumerate(missing):
            paths.put((ds.fingerprint, gamma, t), coefs[:, j])
    return lams, np.stack([paths.get((ds.fingerprint, gamma, t)) for t in targets], axis=1)


# ------------------------------------------------------------------- tuning, diagnostics, stability
def diagnostics(ds, gamma):
    """Condition number, VIF and separated classes of SBLR on all rows (sblr.diagnostics);
    where SBLR is not fitted without asking (:func:`fit_plan`), the conditioning only."""
    return _diagnostics(ds, gamma, fit_plan(ds, Spec.of(SBLR, gamma)).shown)


@heavy(keep=32, spinner="Checking the conditioning of the evidence…")
def _diagnostics(ds, gamma, dense):
    model = cached_fit(ds, Spec.of(SBLR, gamma), quiet=True) if dense else None
    return evidence_diagnostics(model, _evidence(ds, gamma)[1])


@heavy(keep=32, spinner="Checking the conditioning of the evidence SparseSBLR keeps…")
def sparse_diagnostics(ds, spec):
    """How collinear the evidence columns are that SparseSBLR keeps at ``spec``'s λ, class by
    class (sblr.diagnostics.sparse_conditioning)."""
    model = cached_fit(ds, spec, quiet=True)
    return sparse_conditioning(model.coef_, _evidence(ds, spec.gamma)[1])


@heavy(keep=8, spinner="Computing the PCA…")
def pca_coordinates(ds):
    """The data page's 2-D PCA of the rows, per data set (sblr.plots.pca_coordinates)."""
    return plots.pca_coordinates(ds.X)
