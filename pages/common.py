"""What every page shares: the current dataset, the model settings, cached calls into sblr.

Pages read the session through :func:`current_dataset` and :func:`settings`
and get their numbers from the ``cached_*`` functions, which are the only
place the dashboard calls into :mod:`sblr` for expensive work.  Evidence is
cached per (data, gamma), so moving the lambda slider refits only the
logistic layer.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

# Only modules without scikit-learn here (it imports scipy.stats: seconds at start-up); the
# first page does not need it, the functions that compute import what they use.
from sblr import DataError, plots
from sblr._approx import AUTO_APPROX_ROWS, resolve_approx
from sblr.diagnostics import evidence_diagnostics
from sblr.io import list_columns, load_dataset
from sblr.samples import DEFAULT_SAMPLE, SAMPLES, load_sample
from sblr.textsafe import escape_markdown as esc
from sblr.textsafe import safe_filename, to_csv_bytes  # noqa: F401 (the pages use them from here)

_log = logging.getLogger("sblr.dashboard")

#: Largest upload accepted (also set as server.maxUploadSize in .streamlit/config.toml).
MAX_UPLOAD_MB = 50
#: Rows above which uploads are refused.  From AUTO_APPROX_ROWS (20,000) training rows on the
#: models use approximate (Nystroem) evidence, O(n D d) instead of O(n^2 d); see approx_notice.
MAX_ROWS = 200_000
#: Slider grid: 10^-5 ... 10^2 in quarter decades (the paper's grid is every 4th point).
LOG_GRID = [round(x, 2) for x in np.arange(-5.0, 2.0001, 0.25)]
#: The names of sblr.models.MODELS (tested), written out: sblr.models imports scikit-learn.
MODEL_NAMES = ["SML", "SBLR", "SparseSBLR"]

# Session-state keys owned by the sidebar widgets.
K_MODEL, K_GAMMA_SCALE, K_LOG_GAMMA, K_LOG_LAM, K_CLASS = (
    "model",
    "gamma_is_scale",
    "log_gamma",
    "log_lam",
    "target_class",
)


#: The γ in use (the slider's value once applied): on large data (many classes or rows) a
#: γ change recomputes the evidence and every fit, so it waits for the "Apply γ" button.
K_APPLIED_GAMMA = "applied_log_gamma"
#: From this many classes, or AUTO_APPROX_ROWS rows, γ is applied with a button.
APPLY_GAMMA_CLASSES = 30


def _apply_gamma():
    st.session_state[K_APPLIED_GAMMA] = st.session_state[K_LOG_GAMMA]


def gamma_needs_apply(ds):
    """True for data on which a γ change is applied with a button, not on every slider step."""
    return ds.n_classes >= APPLY_GAMMA_CLASSES or ds.n_samples >= AUTO_APPROX_ROWS


@dataclass(frozen=True)
class Settings:
    """The model the user has chosen in the sidebar."""

    model: str
    gamma: float | str
    lam: float
    k: int

    def estimator(self):
        from sblr.models import make_model

        return make_model(self.model, gamma=self.gamma, lam=self.lam)


# ----------------------------------------------------------------------------- shared server
#: Heavy computations (loading an upload, distances, evidence, fits, folds, paths, tuning) that
#: may run at once in this server process, whatever the number of sessions: each holds one
#: slot, so a class of 20 students cannot start 20 fits on a 2-core machine at once.
MAX_JOBS = max(1, int(os.environ.get("SBLR_MAX_JOBS", 0)) or (os.cpu_count() or 1))


class ServerBusy(Exception):
    """Every job slot is taken; raised inside a cached function, so nothing is cached."""


@st.cache_resource
def _job_slots():
    # A resource, not a module global: Streamlit may re-import this module, the slots stay one.
    return threading.BoundedSemaphore(MAX_JOBS)


_held = threading.local()


@contextlib.contextmanager
def job_slot(*, wait: bool = False):
    """Hold one of the server's ``MAX_JOBS`` job slots for a heavy computation.

    Re-entrant per thread (a cached function calling another holds one slot). Without
    ``wait`` it raises :class:`ServerBusy` when every slot is taken (used inside cached
    functions: :func:`waiting_for_worker` retries them, showing that it waits); with
    ``wait`` it blocks, showing a "waiting for a free worker" spinner.
    """
    if getattr(_held, "depth", 0):
        _held.depth += 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    slots = _job_slots()
    if not slots.acquire(blocking=False):
        if not wait:
            raise ServerBusy
        with st.spinner(_BUSY_TEXT):
            slots.acquire()
    _held.depth = 1
    try:
        yield
    finally:
        _held.depth = 0
        slots.release()


_BUSY_TEXT = (
    "Waiting for a free worker: the server is computing for other users "
    f"(at most {MAX_JOBS} computations run at once)…"
)


def waiting_for_worker(func):
    """``func`` (a cached function whose body holds a :func:`job_slot`), retried while the
    server is busy, with a visible "waiting" spinner; cache hits never wait."""

    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except ServerBusy:
            pass
        with st.spinner(_BUSY_TEXT):
            while True:
                slots = _job_slots()
                if slots.acquire(timeout=0.5):  # a slot is free: give it back and retry
                    slots.release()
                    try:
                        return func(*args, **kwargs)
                    except ServerBusy:
                        continue

    return call


@contextlib.contextmanager
def error_boundary(*, stop: bool = False):
    """Show what went wrong in the page's body as text, never as a traceback.

    A :class:`~sblr.DataError` (a problem with the data or the settings) shows its message;
    anything else a generic message, the traceback going to the server log. Streamlit's own
    control flow (``st.stop``, ``st.rerun``, ``st.switch_page``) is not an ``Exception`` and
    passes through. ``stop=True`` ends the run after showing the error.
    """
    try:
        yield
    except DataError as exc:
        st.error(esc(exc))
        if stop:
            st.stop()
    except Exception as exc:
        _log.exception("dashboard page failed")
        st.error(
            f"Something went wrong while computing this page ({type(exc).__name__}). "
            "Try other settings or other data; the details are in the server's log."
        )
        if stop:
            st.stop()


# ----------------------------------------------------------------------------- data
@st.cache_data(max_entries=8, show_spinner=False)
def cached_sample(name):
    return load_sample(name)


@st.cache_data(max_entries=8, show_spinner="Computing the PCA…")
def _cached_pca(_ds, key):
    with job_slot():
        return plots.pca_coordinates(_ds.X)


def pca_coordinates(ds, key):
    """The data page's 2-D PCA of the rows, per data set (sblr.plots.pca_coordinates)."""
    return waiting_for_worker(_cached_pca)(ds, key)


@st.cache_resource(max_entries=8, show_spinner="Reading the file…")
def cached_upload(digest, _data: bytes, name: str, _xml: bytes | None, n_labels, target):
    """The loaded upload, keyed by the digest of its bytes (hashing 50 MB on every rerun
    would eat the slider's time budget). Shared read-only: pages never modify a Dataset."""
    with job_slot():
        return load_dataset(_data, name=name, xml=_xml, n_labels=n_labels, target=target)


def upload_digest(data: bytes, name: str, xml: bytes | None, n_labels, target) -> str:
    """SHA-256 of an upload and its options, each part length-prefixed: two different
    uploads (data, XML, name, options) can never share a key by moving bytes across parts."""
    h = hashlib.sha256()
    for part in (data, b"" if xml is None else b"x" + xml, repr((name, n_labels, target)).encode()):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()


@st.cache_data(max_entries=8, show_spinner=False)
def list_columns_cached(data: bytes, name: str):
    return list_columns(data, name=name)


def dataset_key():
    """A string that identifies the current data (sample name or upload hash)."""
    upload = st.session_state.get("upload")
    if upload is not None:
        return upload["key"]
    return "sample:" + st.session_state.get("sample", DEFAULT_SAMPLE)


def current_dataset():
    """The dataset every page works on (a sample until the user uploads one)."""
    upload = st.session_state.get("upload")
    if upload is not None:
        # Kept in the session: the shared cache holds only the last few uploads of the whole
        # server, and re-reading a file on a rerun would cost a job slot and time.
        return upload["dataset"]
    return cached_sample(st.session_state.get("sample", DEFAULT_SAMPLE))


#: Shared links keep their data this many days (env ``SBLR_SHARE_DAYS``).
SHARE_DAYS = float(os.environ.get("SBLR_SHARE_DAYS", "7"))
#: All shared uploads together at most this many MB (env ``SBLR_SHARE_MAX_MB``); the least
#: recently used go first.
SHARE_MAX_MB = float(os.environ.get("SBLR_SHARE_MAX_MB", "2048"))


@st.cache_resource
def share_store():
    """The server's store of uploads behind ``?data=<id>`` links (sblr.sharing)."""
    import tempfile

    from sblr.sharing import UploadStore

    root = os.environ.get("SBLR_SHARE_DIR") or os.path.join(
        tempfile.gettempdir(), "sblr-shared-uploads"
    )
    return UploadStore(
        root,
        max_item_mb=MAX_UPLOAD_MB + 10,
        max_total_mb=SHARE_MAX_MB,
        ttl_seconds=SHARE_DAYS * 86400,
    )


def _share(data, name, xml, n_labels, target):
    """Keep an upload in the share store; its id, or None if the store cannot take it."""
    parts = {"data": data} if xml is None else {"data": data, "xml": xml}
    meta = {"name": name, "n_labels": n_labels, "target": target}
    try:
        return share_store().put(parts, meta)
    except (DataError, OSError):
        _log.exception("could not keep an upload for a shared link")
        return None


def open_shared(token):
    """Load the data of a ``?data=<id>`` link into the session; the reason for the user if it
    cannot be (expired, unknown, or no longer loading), else None."""
    from sblr.sharing import SharedDataMissing

    try:
        parts, meta = share_store().get(token)
    except SharedDataMissing as exc:
        return str(exc)
    target = meta.get("target")
    target = tuple(target) if isinstance(target, list) else target
    error = try_upload(
        parts["data"], meta["name"], parts.get("xml"), meta.get("n_labels"), target, share=token
    )
    return None if error is None else f"This link's data no longer loads: {error}"


def forget_shared():
    """Remove the session's upload from the share store (its link stops working)."""
    upload = st.session_state.get("upload")
    if upload is not None and upload.get("share_id"):
        share_store().delete(upload["share_id"])
        upload["share_id"] = None


def try_upload(data: bytes, name: str, xml: bytes | None, n_labels, target, share=True):
    """Load an upload; keep it only if it loads, so the previous data stays usable.

    ``share``: True keeps it in the share store under a new id (put in the URL, so a reload
    or the link brings it back); an id: it came from that link.

    Returns the error message for the user, or None on success.
    """
    if len(data) > MAX_UPLOAD_MB * 2**20:
        size = len(data) / 2**20
        return f"The file is {size:.0f} MB; the dashboard accepts up to {MAX_UPLOAD_MB} MB."
    target = tuple(target) if isinstance(target, list) else target
    key = "upload:" + upload_digest(data, name, xml, n_labels, target)
    try:
        ds = waiting_for_worker(cached_upload)(key, data, name, xml, n_labels, target)
    except DataError as exc:
        return str(exc)
    if ds.task == "multilabel" and ds.n_classes < 2:
        return (
            f"Only one label column ({ds.class_names[0]!r}) was found. A multi-label data set "
            "needs at least two labels; for a single 0/1 column choose it as the target of a "
            "multi-class (two-class) problem instead."
        )
    if ds.n_samples > MAX_ROWS:
        return (
            f"The file has {ds.n_samples:,} rows; the dashboard accepts up to {MAX_ROWS:,} "
            "(every page refits on all rows). Use the sblr library for larger data "
            "(approximate evidence scales linearly in rows), or subsample."
        )
    share_id = share if isinstance(share, str) else None
    if share is True:
        share_id = _share(
            data, name, xml, n_labels, list(target) if isinstance(target, tuple) else target
        )
    st.session_state["upload"] = {
        "data": data,
        "name": name,
        "xml": xml,
        "n_labels": n_labels,
        "target": target,
        "key": key,
        "dataset": ds,
        "share_id": share_id,
    }
    return None


#: The explain page offers a row's values for editing up to this many features.
MAX_EDIT_FEATURES = 200


def dense_row(X, i):
    """Row ``i`` of a dense or sparse feature matrix as a 1-D float array."""
    row = X[i]
    return np.asarray(row.toarray() if hasattr(row, "toarray") else row, dtype=float).ravel()


def use_sample(name):
    st.session_state.pop("upload", None)
    st.session_state["sample"] = name


# ----------------------------------------------------------------------------- settings
def _fmt(log10):
    return f"1e{log10:g}"


def fmt_value(value):
    """A grid value as the sliders write it (1e-2, 1e-3.25)."""
    return _fmt(round(math.log10(value) * 4) / 4)


def context(ds, s, **extra):
    """What a download is of: data set, model, γ, λ (and e.g. the evaluation split)."""
    out = {"data": ds.name, "model": s.model, "gamma": fmt_gamma(s.gamma)}
    if s.model == "SparseSBLR" or extra.pop("with_lam", False):
        out["lambda"] = fmt_value(s.lam)
    out.update(extra)
    return out


def context_name(ds, s, what, *extra, suffix, model=None, with_lam=True):
    """A download's file name carrying its context: data, what, model, γ and λ."""
    model = model or s.model
    parts = [ds.name, what, model, f"gamma-{fmt_gamma(s.gamma)}"]
    if with_lam and model == "SparseSBLR":
        parts.append(f"lam-{fmt_value(s.lam)}")
    return safe_filename(*parts, *extra, suffix=suffix)


def analysis_report(ds, s, key, progress=None):
    """One HTML file of the current analysis (sblr.report): the context, the hold-out metrics
    of the sidebar's model, both models' β̃ heatmaps, and the Class contributions table and
    claim for the sidebar's class."""
    from sblr.interpret import (
        check_claim,
        class_affinity,
        contribution_table,
        cooccurrence,
        standardized_coef,
    )
    from sblr.report import html_report

    def step(i, text):
        if progress:
            progress(i, 4, text)

    step(0, "Evaluating on a 25% hold-out split…")
    result = evaluation(ds, key, s.model, s.gamma, s.lam, "holdout", 0.25, 5)
    step(1, "Fitting SBLR and SparseSBLR on all rows…")
    sblr_model = cached_fit(ds, key, "SBLR", s.gamma, s.lam)
    sparse = cached_fit(ds, key, "SparseSBLR", s.gamma, s.lam)
    F = training_evidence(ds, key, s.gamma)
    Y = ds.label_matrix()
    step(2, "Drawing β…")
    sparse_name = f"SparseSBLR, λ = {s.lam:.3g}"
    stds = {"SBLR": standardized_coef(sblr_model, F), sparse_name: standardized_coef(sparse, F)}
    classes = None
    if ds.n_classes > 30:
        from sblr.interpret import top_classes

        classes = top_classes(list(stds.values()), 30)
    fig = plots.beta_heatmaps(
        stds,
        ds.class_names,
        cooccurrence=cooccurrence(Y),
        raw={"SBLR": sblr_model.coef_, sparse_name: sparse.coef_},
        lams={sparse_name: s.lam},
        classes=classes,
    )
    step(3, "Class contributions…")
    multiclass = ds.task == "multiclass"
    table = contribution_table(
        {"SBLR beta": sblr_model, "SparseSBLR beta": sparse},
        Y,
        s.k,
        class_names=ds.class_names,
        evidence=F,
        relation=class_affinity(Y, F) if multiclass else None,
        relation_name="mean evidence on k's rows" if multiclass else None,
        dependency=not multiclass,
    )
    measure = "mean evidence on k's rows" if multiclass else "p_k_given_t"
    at = table.index.get_loc(s.k)
    claims = " ".join(
        f"{name}: "
        + check_claim(
            table[name + "_std"].to_numpy(), table[measure].to_numpy(), target=at
        ).sentence(measure.replace("p_k_given_t", "P(k | t)"))
        for name in ("SBLR beta", "SparseSBLR beta")
    )
    summary = result.summary[["label", "mean"]].rename(columns={"label": "metric"})
    page = html_report(
        f"sblr analysis of {ds.name}",
        {
            **context(ds, s, with_lam=True),
            "class k": ds.class_names[s.k],
            "rows × features": f"{ds.n_samples} × {ds.n_features}",
            "classes": ds.n_classes,
            "evaluation": "25% hold-out split (stratified when possible), seed 0",
        },
        [
            ("Metrics of " + s.model + " on the hold-out rows", summary.reset_index(drop=True)),
            ("Standardized coefficients β̃ (both models, fitted on all rows)", fig),
            (
                f"Class contributions to {ds.class_names[s.k]}",
                table.reset_index(drop=True),
                "beta: raw β; beta_std: β̃ = β · sd of the evidence column.",
            ),
            ("The paper's claim, tested for this class", claims),
        ],
    )
    step(4, "Done")
    return page.encode()


def fmt_gamma(gamma):
    """γ as the sidebar shows it: "scale" or a grid value (1e-2)."""
    return "scale" if gamma == "scale" else fmt_value(gamma)


def _value(log10):
    return float(10.0**log10)


def _nearest(grid, log10):
    return min(grid, key=lambda g: abs(g - log10))


def _grid_point(text, name, ignored):
    """The slider point nearest to a URL value, or None (noted in ``ignored``) if unusable."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        ignored.append(f"{name}={text!r} is not a positive number")
        return None
    point = _nearest(LOG_GRID, math.log10(value))
    if abs(point - math.log10(value)) > 0.125:
        ignored.append(
            f"{name}={text!r} is outside the slider's range {_fmt(LOG_GRID[0])} … "
            f"{_fmt(LOG_GRID[-1])}; using {_fmt(point)}"
        )
    return point


def init_state_from_url():
    """On a session's first run, take the shareable state from the URL.

    Values that cannot be used are ignored, and :func:`url_notice` says which.
    """
    if st.session_state.get("_url_read"):
        return
    st.session_state["_url_read"] = True
    q = st.query_params
    ignored = []
    shared_missing = None
    st.session_state["_url_step"] = q.get("step")  # the lesson's step (pages/lesson.py)
    if "data" in q:
        shared_missing = open_shared(q["data"])
        if shared_missing is not None:
            st.session_state["_share_missing"] = shared_missing
    if "sample" in q and "data" not in q:
        if q["sample"] in SAMPLES:
            st.session_state["sample"] = q["sample"]
        else:
            ignored.append(f"sample={q['sample']!r} is not one of {', '.join(SAMPLES)}")
    if "model" in q:
        if q["model"] in MODEL_NAMES:
            st.session_state[K_MODEL] = q["model"]
        else:
            ignored.append(f"model={q['model']!r} is not one of {', '.join(MODEL_NAMES)}")
    gamma = q.get("gamma")
    if gamma == "scale":
        st.session_state[K_GAMMA_SCALE] = True
    elif gamma is not None:
        point = _grid_point(gamma, "gamma", ignored)
        if point is not None:
            st.session_state[K_LOG_GAMMA] = point
            st.session_state[K_GAMMA_SCALE] = False
    if "lam" in q:
        point = _grid_point(q["lam"], "lam", ignored)
        if point is not None:
            st.session_state[K_LOG_LAM] = point
    if "k" in q and shared_missing is None:  # a class index of other data would mislead
        if q["k"].isdigit():
            st.session_state[K_CLASS] = int(q["k"])
            st.session_state["_url_k"] = int(q["k"])
        else:
            ignored.append(f"k={q['k']!r} is not a class number")
    st.session_state["_url_ignored"] = ignored


def url_notice(ds):
    """Say which values of the link were ignored (once, on the page the link opened)."""
    missing = st.session_state.pop("_share_missing", None)
    if missing:
        st.warning(
            esc(missing)
            + f" You are looking at the sample data “{esc(ds.name)}” instead, with the class "
            "choice reset. Choose a sample, or upload the file again for a new link, on the "
            "Choose data page.",
            icon="⚠️",
        )
    ignored = st.session_state.pop("_url_ignored", [])
    k = st.session_state.pop("_url_k", None)
    if k is not None and k >= ds.n_classes:
        ignored.append(f"k={k} is not a class of {ds.name!r} ({ds.n_classes} classes)")
    if ignored:
        st.warning(
            "Some settings in the link could not be used and were ignored: "
            + esc("; ".join(ignored))
            + ".",
            icon="⚠️",
        )


def sidebar_settings(ds):
    """Model, gamma, lambda and target-class widgets; returns the Settings."""
    _apply_pending_tune()
    st.session_state.setdefault(K_MODEL, "SparseSBLR")
    st.session_state.setdefault(K_GAMMA_SCALE, True)
    st.session_state.setdefault(K_LOG_GAMMA, 0.0)
    st.session_state.setdefault(K_LOG_LAM, -3.0)
    k = st.session_state.get(K_CLASS, 0)
    if not isinstance(k, (int, np.integer)) or not 0 <= k < ds.n_classes:
        k = 0
    # The class widget's key names the data: with one key for every data set, the browser
    # would keep the previous data's choice (a class name not among the new classes).
    class_key = f"{K_CLASS}:{dataset_key()}"
    st.session_state.setdefault(class_key, int(k))
    sb = st.sidebar
    sb.selectbox(
        "Model",
        MODEL_NAMES,
        key=K_MODEL,
        help="SML decides from the evidence alone; SBLR and SparseSBLR learn β.",
    )
    scale = sb.toggle(
        "γ = scale",
        key=K_GAMMA_SCALE,
        help="γ = 1 / (d · Var X) on the scaled training data, as scikit-learn's SVC.",
    )
    sb.select_slider(
        "RBF width γ (log₁₀)",
        LOG_GRID,
        key=K_LOG_GAMMA,
        format_func=_fmt,
        disabled=scale,
        help="Φ(x, y) = exp(−γ‖x − y‖²). Larger γ: more local.",
    )
    chosen = st.session_state[K_LOG_GAMMA]
    if K_APPLIED_GAMMA not in st.session_state or not gamma_needs_apply(ds):
        st.session_state[K_APPLIED_GAMMA] = chosen
    elif not scale and chosen != st.session_state[K_APPLIED_GAMMA]:
        sb.caption(
            f"γ in use: {_fmt(st.session_state[K_APPLIED_GAMMA])}. On data this size "
            f"({ds.n_classes} classes, {ds.n_samples:,} rows) a new γ recomputes the evidence "
            "and every fit, so it waits for the button."
        )
        sb.button(
            f"Apply γ = {_fmt(chosen)}", key="apply_gamma", type="primary", on_click=_apply_gamma
        )
    sb.select_slider(
        "L1 strength λ (log₁₀)",
        LOG_GRID,
        key=K_LOG_LAM,
        format_func=_fmt,
        help="SparseSBLR's λ‖β‖₁ on the mean log-loss (larger λ: more zeros). The β, "
        "contribution and path pages always show SparseSBLR, so λ applies there whatever "
        "the model.",
    )
    st.session_state[K_CLASS] = sb.selectbox(
        "Class k",
        range(ds.n_classes),
        key=class_key,
        format_func=lambda k: ds.class_names[k],
        help="The target class the contributions, explanation and path pages look at.",
    )
    s = Settings(
        model=st.session_state[K_MODEL],
        gamma="scale" if scale else _value(st.session_state[K_APPLIED_GAMMA]),
        lam=_value(st.session_state[K_LOG_LAM]),
        k=int(st.session_state[K_CLASS]),
    )
    _write_url(s)
    approx_notice(ds)
    return s


def approx_notice(ds):
    """Say so in the sidebar when the models use approximate evidence (large data)."""
    mode = resolve_approx("auto", "rbf", ds.n_samples)
    if mode is None:
        return
    from sblr.similarity import SimilarityFeaturizer

    n_components = SimilarityFeaturizer().n_components
    st.sidebar.info(
        f"**Approximate evidence** ({ds.n_samples:,} rows). Models trained on "
        f"{AUTO_APPROX_ROWS:,} rows or more use Nyström features (D = {n_components}) instead "
        "of the exact sum, so time grows linearly with rows; on benchmark data the evidence "
        "stays within about 1% of exact. Smaller training folds stay exact.",
        icon="ℹ️",
    )


def _write_url(s):
    state = {
        "model": s.model,
        "gamma": "scale" if s.gamma == "scale" else f"{s.gamma:.4g}",
        "lam": f"{s.lam:.4g}",
        "k": str(s.k),
    }
    upload = st.session_state.get("upload")
    if upload is None:
        state["sample"] = st.session_state.get("sample", DEFAULT_SAMPLE)
    else:
        if "sample" in st.query_params:
            del st.query_params["sample"]
        if upload.get("share_id"):
            state["data"] = upload["share_id"]
    if "data" not in state and "data" in st.query_params:
        del st.query_params["data"]
    if "step" in st.query_params:  # the lesson page puts it back; no other page has steps
        del st.query_params["step"]
    for key, value in state.items():
        if st.query_params.get(key) != value:
            st.query_params[key] = value


def page_context(page_file):
    """``(dataset, settings, data key)`` for a page; app.py draws the sidebar before it.

    A folder named ``pages/`` beside the entry script makes Streamlit serve the
    very first request of a fresh server in its legacy multipage mode, which
    runs a linked page WITHOUT app.py.  Such a run goes through app.py (which
    switches Streamlit to the st.navigation mode) and comes back to the page,
    keeping the link's query parameters.
    """
    if "_settings" not in st.session_state:
        st.session_state["_redirect"] = f"pages/{Path(page_file).name}"
        st.switch_page("app.py", query_params=st.query_params.to_dict())
    return current_dataset(), st.session_state["_settings"], dataset_key()


def follow_redirect():
    """In app.py after st.navigation: finish a redirect started by :func:`page_context`."""
    target = st.session_state.pop("_redirect", None)
    if target is not None:
        st.switch_page(target, query_params=st.query_params.to_dict())


def show_view(page, *, sample=None, model=None, gamma=None, lam=None, k=None):
    """Open ``page`` with these sidebar settings (a lesson's "show me"): they are applied at
    the start of the next run, before any widget is drawn (:func:`apply_pending_view`)."""
    st.session_state["_pending_view"] = {
        "sample": sample,
        "model": model,
        "gamma": gamma,
        "lam": lam,
        "k": k,
    }
    st.switch_page(page)


def apply_pending_view():
    """In app.py before the sidebar: the settings a :func:`show_view` asked for."""
    view = st.session_state.pop("_pending_view", None)
    if view is None:
        return
    if view["sample"] is not None:
        use_sample(view["sample"])
    if view["model"] is not None:
        st.session_state[K_MODEL] = view["model"]
    if view["gamma"] == "scale":
        st.session_state[K_GAMMA_SCALE] = True
    elif view["gamma"] is not None:
        st.session_state[K_GAMMA_SCALE] = False
        st.session_state[K_LOG_GAMMA] = _nearest(LOG_GRID, math.log10(view["gamma"]))
        st.session_state[K_APPLIED_GAMMA] = st.session_state[K_LOG_GAMMA]
    if view["lam"] is not None:
        st.session_state[K_LOG_LAM] = _nearest(LOG_GRID, math.log10(view["lam"]))
    if view["k"] is not None:
        st.session_state[K_CLASS] = int(view["k"])
        st.session_state[f"{K_CLASS}:{dataset_key()}"] = int(view["k"])


def set_tuned(gamma, lam):
    """Move the sliders to a tuning result on the next run (widgets are already drawn)."""
    st.session_state["_pending_tune"] = (gamma, lam)


def _apply_pending_tune():
    pending = st.session_state.pop("_pending_tune", None)
    if pending is None:
        return
    gamma, lam = pending
    st.session_state[K_GAMMA_SCALE] = False
    st.session_state[K_LOG_GAMMA] = _nearest(LOG_GRID, math.log10(gamma))
    st.session_state[K_APPLIED_GAMMA] = st.session_state[K_LOG_GAMMA]
    if lam is not None:
        st.session_state[K_LOG_LAM] = _nearest(LOG_GRID, math.log10(lam))


# ----------------------------------------------------------------------------- cached work
# Fitted featurizers, evidence and models are cached as shared resources (not copied on each
# read, as st.cache_data would): they are read-only here, and every key holds the data key.
@st.cache_resource(max_entries=8, show_spinner="Computing distances…")
def _cached_distances(_ds, key, scheme, test_size, n_splits, i):
    """Squared distances of a split's scaled rows (``scheme="all"``: every row trains), kept
    so that a γ change costs only exp(-γD); None for data too large to keep them."""
    from sblr.evaluation import fold_distances

    if scheme == "all":
        train, test = np.arange(_ds.n_samples), np.arange(0)
    else:
        train, test = _cached_splits(_ds, key, scheme, test_size, n_splits)[i]
    with job_slot():
        return fold_distances(_ds.X, _ds.y, train, test)


@st.cache_resource(max_entries=16, show_spinner="Computing class evidence…")
def _cached_evidence(_ds, key, gamma):
    """Featurizer fitted on all rows and its leave-one-out evidence, per (data, gamma)."""
    from sblr.evaluation import fold_evidence
    from sblr.models import make_model

    with job_slot():
        D = _cached_distances(_ds, key, "all", None, None, 0)
        every = (np.arange(_ds.n_samples), np.arange(0))
        model = make_model("SBLR", gamma=gamma)
        fold = fold_evidence(model, _ds.X, _ds.y, [every], distances=[D])
    return fold[0].featurizer, fold[0].F_train


def training_evidence(ds, key, gamma):
    """Leave-one-out evidence of every row (all rows as training data), per (data, gamma)."""
    return waiting_for_worker(_cached_evidence)(ds, key, gamma)[1]


class _Store:
    """A small thread-safe least-recently-used map shared by every session of the server
    (work done survives leaving a page, and is shared by users of the same data)."""

    def __init__(self, size):
        self._size, self._items, self._lock = size, {}, threading.Lock()

    def get(self, key):
        with self._lock:
            if key in self._items:
                self._items[key] = self._items.pop(key)  # most recently used last
                return self._items[key]
        return None

    def put(self, key, value):
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.pop(next(iter(self._items)))
        return value


@st.cache_resource
def _fits():
    return _Store(64)


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


def cached_fit(ds, key, model, gamma, lam):
    """A model fitted on all rows; SBLR/SparseSBLR reuse the cached evidence. A fit that is
    not stored yet shows a progress bar, class by class."""
    lam = lam if model == "SparseSBLR" else None
    wanted = (key, model, gamma, lam)
    found = _fits().get(wanted)
    if found is not None:
        return found
    from sblr.models import make_model

    est = make_model(model, gamma=gamma, lam=lam)
    if model == "SML":
        with st.spinner("Fitting SML…"), job_slot(wait=True):
            return _fits().put(wanted, est.fit(ds.X, ds.y))
    f, F = waiting_for_worker(_cached_evidence)(ds, key, gamma)
    where = f"γ = {fmt_gamma(gamma)}" + (f", λ = {fmt_value(lam)}" if lam is not None else "")
    bar = _Progress(lambda done, total: f"Fitting {model} ({where}): class {done} of {total}")
    try:
        with job_slot(wait=True):
            est.fit_from_evidence(f, F, progress=bar)
    finally:
        bar.close()
    return _fits().put(wanted, est)


@st.cache_resource(max_entries=16, show_spinner="Fitting SML without this row…")
def _cached_sml_without_row(_ds, key, gamma, row):
    from sblr.models import make_model

    keep = np.arange(_ds.n_samples) != row
    with job_slot():
        return make_model("SML", gamma=gamma).fit(_ds.X[keep], _ds.y[keep])


def sml_without_row(ds, key, gamma, row):
    """SML fitted on every row but ``row`` (SML has no leave-one-out evidence of its own:
    its set sizes come from similarity sums by label-set size); kept per (data, γ, row), so
    a λ or class change on the explain page does not refit it."""
    return waiting_for_worker(_cached_sml_without_row)(ds, key, gamma, row)


def _stored_fit(_ds, key, model, gamma, lam):
    """For cached functions (which must not draw): the stored fit, or a fit without progress."""
    lam = lam if model == "SparseSBLR" else None
    wanted = (key, model, gamma, lam)
    found = _fits().get(wanted)
    if found is not None:
        return found
    from sblr.models import make_model

    with job_slot():
        est = make_model(model, gamma=gamma, lam=lam)
        if model == "SML":
            return _fits().put(wanted, est.fit(_ds.X, _ds.y))
        f, F = _cached_evidence(_ds, key, gamma)
        return _fits().put(wanted, est.fit_from_evidence(f, F))


@st.cache_data(max_entries=16, show_spinner=False)
def _cached_splits(_ds, key, scheme, test_size, n_splits):
    from sblr.evaluation import make_splits

    return make_splits(_ds.y, scheme=scheme, test_size=test_size, n_splits=n_splits)


@st.cache_resource(max_entries=64, show_spinner=False)
def _cached_fold(_ds, key, gamma, scheme, test_size, n_splits, i):
    from sblr.evaluation import fold_evidence
    from sblr.models import make_model

    split = _cached_splits(_ds, key, scheme, test_size, n_splits)[i]
    with job_slot():
        D = _cached_distances(_ds, key, scheme, test_size, n_splits, i)
        model = make_model("SBLR", gamma=gamma)
        return fold_evidence(model, _ds.X, _ds.y, [split], distances=[D])[0]


@st.cache_data(max_entries=512, show_spinner=False)
def _cached_fold_score(_ds, key, model, gamma, lam, scheme, test_size, n_splits, i):
    """One fold's scores; SBLR/SparseSBLR reuse the fold's cached evidence."""
    from sblr.evaluation import score_fold
    from sblr.models import make_model

    with job_slot():
        if model == "SML":
            fold = _cached_splits(_ds, key, scheme, test_size, n_splits)[i]
        else:
            fold = _cached_fold(_ds, key, gamma, scheme, test_size, n_splits, i)
        est = make_model(model, gamma=gamma, lam=lam)
        return score_fold(est, _ds.X, _ds.y, fold, _classes(_ds))


@st.cache_data(max_entries=512, show_spinner=False)
def _cached_fold_proba(_ds, key, model, gamma, lam, scheme, test_size, n_splits, i):
    """One fold's test rows and their probabilities (for the threshold and per-class views)."""
    from sblr.evaluation import fold_probabilities
    from sblr.models import make_model

    with job_slot():
        if model == "SML":
            fold = _cached_splits(_ds, key, scheme, test_size, n_splits)[i]
        else:
            fold = _cached_fold(_ds, key, gamma, scheme, test_size, n_splits, i)
        return fold_probabilities(make_model(model, gamma=gamma, lam=lam), _ds.X, _ds.y, fold)


def held_out_probabilities(ds, key, model, gamma, lam, scheme, test_size, n_splits):
    """(true labels, probabilities) of every test row of the evaluation (k-fold: every row
    once), from the fold cache: the threshold slider never refits. Multi-class labels come
    as class codes 0 .. m-1."""
    lam = lam if model == "SparseSBLR" else None
    n = len(_cached_splits(ds, key, scheme, test_size, n_splits))
    fold = waiting_for_worker(_cached_fold_proba)
    parts = [fold(ds, key, model, gamma, lam, scheme, test_size, n_splits, i) for i in range(n)]
    rows = np.concatenate([test for test, _ in parts])
    P = np.vstack([p for _, p in parts])
    if ds.task == "multilabel":
        return ds.label_matrix()[rows], P
    # codes in the order of np.unique(y): the columns of P and Dataset.class_names
    return np.unique(ds.y, return_inverse=True)[1][rows], P


def _classes(ds):
    return np.arange(ds.n_classes) if ds.task == "multilabel" else np.unique(ds.y)


def evaluation(ds, key, model, gamma, lam, scheme, test_size, n_splits, progress=None):
    """Hold-out / k-fold scores, fold by fold from the cache, reporting progress.

    ``progress(done, total)`` is called outside the cached functions (a UI
    element drawn inside one would be replayed on every cache hit).
    """
    from sblr.evaluation import summarize

    lam = lam if model == "SparseSBLR" else None
    n = len(_cached_splits(ds, key, scheme, test_size, n_splits))
    fold_score = waiting_for_worker(_cached_fold_score)
    results = []
    for i in range(n):
        results.append(fold_score(ds, key, model, gamma, lam, scheme, test_size, n_splits, i))
        if progress:
            progress(i + 1, n)
    return summarize(results, _classes(ds))


def path_lams():
    """The λ grid of the slider (ascending), where the path is computed."""
    return np.array([_value(v) for v in LOG_GRID])


def cached_path(ds, key, gamma, targets):
    """SparseSBLR's β along the slider's λ grid (all rows) for the target classes ``targets``
    (each class's path is stored on its own, so the sidebar's class comes first and the
    others only when asked). Returns (lams, coefs of shape (n_lams, len(targets), m))."""
    from sblr.models import make_model
    from sblr.tuning import coefficient_path

    lams = path_lams()
    targets = [int(t) for t in targets]
    missing = [t for t in targets if _paths().get((key, gamma, t)) is None]
    if missing:
        f, F = waiting_for_worker(_cached_evidence)(ds, key, gamma)
        what = (
            f"class “{esc(ds.class_names[missing[0]])}”"  # progress text is Markdown
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
            _paths().put((key, gamma, t), coefs[:, j])
    return lams, np.stack([_paths().get((key, gamma, t)) for t in targets], axis=1)


#: Tune's selection schemes: label -> (inner folds or None for one 10% split, λ rule).
TUNE_SCHEMES = {
    "inner 5-fold CV": (5, "best"),
    "inner 5-fold CV, one-SE λ (sparser)": (5, "one_se"),
    "one 10% validation split (the paper's)": (None, "best"),
}


def tune(ds, model, test_size, progress, scheme="inner 5-fold CV"):
    """Grid search over the paper's grid on the hold-out split's TRAINING rows only."""
    from sblr import tuning
    from sblr.evaluation import make_splits
    from sblr.models import make_model

    cv, rule = TUNE_SCHEMES[scheme]
    ((train, _),) = make_splits(ds.y, scheme="holdout", test_size=test_size)
    with job_slot(wait=True):
        return tuning.tune(
            make_model(model),
            ds.X[train],
            ds.y[train],
            gammas=tuning.PAPER_GRID,
            lams=tuning.PAPER_GRID,
            cv=cv,
            rule=rule if model == "SparseSBLR" else "best",
            progress=progress,
        )


@st.cache_data(max_entries=32, show_spinner="Checking the conditioning of the evidence…")
def _cached_diagnostics(_ds, key, gamma):
    with job_slot():
        f, F = _cached_evidence(_ds, key, gamma)
        model = _stored_fit(_ds, key, "SBLR", gamma, None)
        return evidence_diagnostics(model, F)


def diagnostics(ds, key, gamma):
    """Condition number, VIF and separated classes of SBLR on all rows (sblr.diagnostics)."""
    return waiting_for_worker(_cached_diagnostics)(ds, key, gamma)


#: Bootstrap resamples of the stability view.
N_RESAMPLES = 50


def stability(ds, key, gamma, lam, progress=None):
    """Bootstrap stability of SparseSBLR's β on all rows; kept in the session (last 4 settings)
    so a revisit is instant. ``progress(done, total)`` reports each resample."""
    from sblr.stability import bootstrap_coefficients

    store = st.session_state.setdefault("_stability", {})
    wanted = (key, gamma, lam, N_RESAMPLES)
    if wanted not in store:
        model = cached_fit(ds, key, "SparseSBLR", gamma, lam)
        F = training_evidence(ds, key, gamma)
        with job_slot(wait=True):
            result = bootstrap_coefficients(model, F, n_resamples=N_RESAMPLES, progress=progress)
        while len(store) >= 4:
            store.pop(next(iter(store)))
        store[wanted] = result
    return store[wanted]


def stored_stability(key, gamma, lam):
    """The stability result of these settings if this session computed it, else None."""
    return st.session_state.get("_stability", {}).get((key, gamma, lam, N_RESAMPLES))


#: The β view every β page offers: key -> label.
BETA_VIEWS = {"std": "standardized β̃ (per sd of evidence)", "raw": "raw β"}


def beta_view(page):
    """The "standardized β̃ / raw β" radio of a page; the choice follows the user between
    pages (one radio key per page, the last choice under ``beta_view``). True for β̃."""
    key = f"beta_view:{page}"
    if key not in st.session_state:
        st.session_state[key] = st.session_state.get("beta_view", "std")
    st.radio(
        "Coefficients shown",
        list(BETA_VIEWS),
        format_func=BETA_VIEWS.get,
        key=key,
        horizontal=True,
    )
    st.session_state["beta_view"] = st.session_state[key]
    return st.session_state[key] == "std"


def label_frequency_chart(ds):
    st.plotly_chart(
        plots.label_frequency_bar(
            ds.label_matrix().sum(axis=0), ds.class_names, total=ds.n_samples
        ),
        key="home_frequencies",
    )


def show_notes(ds):
    for note in ds.notes:
        if note.startswith("Warning:"):  # the loader's loud notes: shown, not folded away
            st.warning(esc(note))
    if ds.notes:
        label = "note" if len(ds.notes) == 1 else "notes"
        with st.expander(f"What the loader did ({len(ds.notes)} {label})"):
            for note in ds.notes:
                st.markdown(f"- {esc(note)}")


# --- compare page
@st.cache_data(max_entries=16, show_spinner=False)
def _cached_compare_splits(_ds, key, folds):
    """The folds ``protocol.run_benchmark`` uses (seed 0), so results match the CLI's."""
    from sblr import protocol
    from sblr.evaluation import make_splits

    return make_splits(protocol.task_y(_ds), scheme="kfold", n_splits=folds, random_state=0)


@st.cache_data(max_entries=2048, show_spinner=False)
def cached_compare_fold(_ds, key, method, fold, folds, grid):
    """``protocol.run_fold`` for one (data, method, fold, folds, grid): selection on the
    training fold's 10% validation split, refit, scores on the test fold."""
    from sblr import protocol

    splits = _cached_compare_splits(_ds, key, folds)
    with job_slot():
        return protocol.run_fold(_ds, method, fold, splits, grid=grid)


def compare_methods(ds, key, methods, folds, grid, progress=None):
    """Cross-validate ``methods`` fold by fold from the cache, as ``run_benchmark`` would.

    ``progress(done, total, method, fold)`` is called before each fold, outside the
    cached function.  Returns a :class:`sblr.protocol.BenchmarkResult`.
    """
    from sblr.protocol import collect_results

    grid = tuple(float(g) for g in grid)
    total = len(methods) * folds
    done = []
    for i, method in enumerate(methods):
        for fold in range(folds):
            if progress:
                progress(i * folds + fold, total, method, fold)
            res = waiting_for_worker(cached_compare_fold)(ds, key, method, fold, folds, grid)
            done.append(((ds.name, method, fold), res))
    if progress:
        progress(total, total, None, None)
    return collect_results(done)
