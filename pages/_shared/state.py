"""The sidebar's settings, the state a link carries, and moving between pages.

The sidebar's widgets own their session-state keys (``K_*``); the URL holds the shareable
part of that state (data, model, γ, λ, class), read once per session and written on every
run.  Pages get ``(dataset, settings, data key)`` from :func:`page_context`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st
import streamlit.runtime.app_session as st_app_session
import streamlit.runtime.state.query_params as st_query_params

from pages._shared.cache import scale_gamma
from pages._shared.data import current_dataset, dataset_key, open_shared, use_sample
from pages._shared.formatting import (
    LOG_GRID,
    esc_md,
    grid_value,
    index_value,
    log_label,
    nearest_point,
)
from pages._shared.questions import Spec
from sblr._approx import AUTO_APPROX_ROWS, resolve_approx
from sblr.exceptions import DataError
from sblr.interpret import starting_class
from sblr.plots import MAX_TICK_LABELS
from sblr.registry import DASHBOARD_MODELS, SPARSE_SBLR, get_model
from sblr.samples import DEFAULT_SAMPLE, SAMPLES

__all__ = [
    "APPLY_GAMMA_CLASSES",
    "BETA_VIEWS",
    "K_APPLIED_GAMMA",
    "K_CLASS",
    "K_GAMMA_SCALE",
    "K_LOG_GAMMA",
    "K_LOG_LAM",
    "K_MODEL",
    "MODEL_NAMES",
    "Settings",
    "apply_pending_view",
    "approx_notice",
    "beta_view",
    "classes_shown",
    "follow_redirect",
    "gamma_needs_apply",
    "init_state_from_url",
    "note_dropped_links",
    "page_context",
    "set_tuned",
    "show_view",
    "sidebar_settings",
    "url_notice",
]

#: The model picker's names: the dashboard's models by label (sblr.registry; no scikit-learn).
MODEL_NAMES = [m.label for m in DASHBOARD_MODELS]

# Session-state keys owned by the sidebar widgets.
#: The λ slider's first point: SparseSBLR's default λ (sblr.models), at which its decisions
#: hold up beside scikit-learn's one-vs-rest logistic regression on rare-label shapes (on log
#: rates at γ = scale: a 45-label medical-shaped set micro-F1 0.889 at 1e-4, 0.495 at 3e-3;
#: LR 0.776: python -m benchmarks.decisions).
DEFAULT_LOG_LAM = -4.0

K_MODEL, K_GAMMA_SCALE, K_LOG_GAMMA, K_LOG_LAM, K_CLASS = (
    "model",
    "gamma_is_scale",
    "log_gamma",
    "log_lam",
    "target_class",
)


#: Every sidebar widget's ``persist_state``.  The server keeps a widget's value, but a browser
#: that has not drawn the sidebar yet (a page link clicked, or a file uploaded, while a run is
#: still rendering on a slow machine) reports no value for it.  Without persistence Streamlit
#: then drops the value on a page change, or sends the widget without it, so the browser draws
#: the first option (SML, γ = scale off, γ = λ = 1e-5) and sends that back as the user's
#: choice.  "session" keeps the value and makes the server send it whenever the browser did not
#: report one.  (These widgets live in app.py and are drawn on every page.)
_PERSIST = "session"

#: The γ in use (the slider's value once applied): on large data (many classes or rows) a
#: γ change recomputes the evidence and every fit, so it waits for the "Apply γ" button.
K_APPLIED_GAMMA = "applied_log_gamma"
#: From this many classes, or AUTO_APPROX_ROWS rows, γ is applied with a button.
APPLY_GAMMA_CLASSES = 30


def _apply_gamma():
    st.session_state[K_APPLIED_GAMMA] = st.session_state[K_LOG_GAMMA]


def _scale_value(ds):
    """γ = "scale" on this data, or None where it has no finite value (e.g. constant data)."""
    try:
        return scale_gamma(ds)
    except (ValueError, DataError):
        return None


def _left_scale(ds):
    """Turning "γ = scale" off puts the slider at the grid point nearest to the scale γ (not
    at its last value, which may be 100 times larger), in use at once."""
    value = None if st.session_state.get(K_GAMMA_SCALE, True) else _scale_value(ds)
    if value is None:  # still on scale, or no finite scale γ: the slider stays
        return
    point = nearest_point(math.log10(value))
    st.session_state[K_LOG_GAMMA] = point
    st.session_state[K_APPLIED_GAMMA] = point


def _chose_gamma(ds):
    """The γ slider moved: a chosen γ, no longer "scale". On data where a γ waits for "Apply
    γ", the γ in use until then is the scale γ's grid point, as when the switch is turned
    off (:func:`_left_scale`), not a value used before "scale"."""
    if st.session_state.get(K_GAMMA_SCALE, True):
        value = _scale_value(ds)
        if value is not None:
            st.session_state[K_APPLIED_GAMMA] = nearest_point(math.log10(value))
    st.session_state[K_GAMMA_SCALE] = False
    _note_source("gamma", "you")


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
        from sblr.models import make_model  # lazy: scikit-learn, ~1 s, not on the first page

        return make_model(self.model, gamma=self.gamma, lam=self.lam)

    @property
    def spec(self) -> Spec:
        """What the pages ask of a model (its traits: ``l1``, ``learns_beta``, ``label``),
        never its name."""
        return Spec.of(self.model, self.gamma, self.lam)

    def spec_for(self, model: str) -> Spec:
        """Another model at the sidebar's γ and λ (λ only if it takes one): what a page that
        shows the three models side by side asks for."""
        return Spec.of(model, self.gamma, self.lam)


#: A link's value this far (in decades) from the slider's nearest point is noted as moved;
#: the app's own links write 4 digits (at most 2e-5 decades off).
_OFF_GRID = 1e-3


#: Characters of a URL value repeated in a note (a 5,000-character gamma= filled the warning).
URL_VALUE_SHOWN = 40


def _shown(text) -> str:
    """A URL value for a note: quoted, cut to ``URL_VALUE_SHOWN`` characters."""
    text = str(text)
    if len(text) <= URL_VALUE_SHOWN:
        return repr(text)
    return repr(text[:URL_VALUE_SHOWN]) + f"… ({len(text):,} characters)"


def _grid_point(text, name, ignored, moved):
    """The slider point nearest to a URL value, or None (noted in ``ignored``) if unusable.
    A usable value between the slider's points is noted in ``moved``: the page shows the
    nearest point's numbers, which differ from the value's."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        ignored.append(f"{name}={_shown(text)} is not a positive number")
        return None
    point = nearest_point(math.log10(value))
    if abs(point - math.log10(value)) > 0.125:
        ignored.append(
            f"{name}={_shown(text)} is outside the slider's range {log_label(LOG_GRID[0])} … "
            f"{log_label(LOG_GRID[-1])}; using {log_label(point)}"
        )
    elif abs(point - math.log10(value)) > _OFF_GRID:
        moved.append(
            f"{name}={_shown(text)} is between the slider's points; using {log_label(point)}"
        )
    return point


#: The parameter a link Streamlit does not read arrives as (:func:`note_dropped_links`): its
#: characters and parameters, ``"600000.2"``. No link the dashboard writes has it.
DROPPED_LINK = "_sblr_link_not_read"


def note_dropped_links() -> None:
    """Have a link Streamlit does not read arrive as one parameter that says so.

    Streamlit reads no query string of more than 524,288 characters or 1,000 parameters
    (its ``CLIENT_STATE_QUERY_STRING_MAX_*``, 1.5x): the session starts as if the link had none (the
    Playground on its default board, the sidebar on its defaults), and nothing told the person
    who followed it. Its check (``sanitize_query_string``, where the server reads a browser's
    request and where a run parses the query) is wrapped here, once per process: such a query
    string becomes ``DROPPED_LINK=<characters>.<parameters>``, which
    :func:`init_state_from_url` turns into a note. app.py calls this at its first run, so a
    link of the very first session of a server is still dropped unsaid. A Streamlit without
    that function (another version) is left as it is.
    """
    for module in (st_app_session, st_query_params):  # a request's check, and a run's
        sanitize = getattr(module, "sanitize_query_string", None)
        if sanitize is None or getattr(sanitize, "notes_dropped_links", False):
            continue
        module.sanitize_query_string = _noting_dropped(sanitize)


def _noting_dropped(sanitize):
    def sanitize_query_string(query_string: str) -> str:
        kept = sanitize(query_string)
        if query_string and not kept:
            return f"{DROPPED_LINK}={len(query_string)}.{query_string.count('&') + 1}"
        return kept

    sanitize_query_string.notes_dropped_links = True
    return sanitize_query_string


def _dropped_note(value) -> str:
    """What a link Streamlit did not read was, for :func:`url_notice`."""
    chars, _, params = str(value).partition(".")
    size = (
        f"{int(chars):,} characters, {int(params):,} parameters"
        if chars.isdigit() and params.isdigit()
        else "its size"
    )
    most = getattr(st_query_params, "CLIENT_STATE_QUERY_STRING_MAX_LENGTH", 512 * 1024)
    fields = getattr(st_query_params, "CLIENT_STATE_QUERY_STRING_MAX_FIELDS", 1000)
    return (
        f"This link is too long to be read ({size}; the dashboard reads links of at most "
        f"{most:,} characters and {fields:,} parameters): it opened as a plain link, without "
        "its data, settings or Playground points."
    )


def init_state_from_url():
    """On a session's first run, take the shareable state from the URL.

    Values that cannot be used are ignored, and :func:`url_notice` says which.
    """
    if st.session_state.get("_url_read"):
        return
    st.session_state["_url_read"] = True
    q = st.query_params
    ignored, moved = [], []
    if DROPPED_LINK in q:  # a link Streamlit did not read (note_dropped_links): say so
        st.session_state["_url_dropped"] = _dropped_note(q[DROPPED_LINK])
        del st.query_params[DROPPED_LINK]
    shared_missing = None
    st.session_state["_url_step"] = q.get("step")  # the lesson's step (pages/lesson.py)
    manage = q.get("manage")
    if manage is not None:
        # the owner's private key never stays in the address bar (which is the shared link)
        del st.query_params["manage"]
    if "data" in q:
        shared_missing = open_shared(q["data"], owner_key=manage)
        if shared_missing is not None:
            st.session_state["_share_missing"] = shared_missing
        elif manage is not None and not st.session_state["upload"].get("owner_key"):
            ignored.append("manage= is not this data's key; the data is open to read only")
    if "sample" in q and "data" not in q:
        if q["sample"] in SAMPLES:
            st.session_state["sample"] = q["sample"]
        else:
            ignored.append(f"sample={_shown(q['sample'])} is not one of {', '.join(SAMPLES)}")
    if "model" in q:
        try:  # a label (what links write), or a key (sparse_sblr)
            st.session_state[K_MODEL] = get_model(q["model"]).label
        except ValueError:
            ignored.append(f"model={_shown(q['model'])} is not one of {', '.join(MODEL_NAMES)}")
    gamma = q.get("gamma")
    if gamma == "scale":
        st.session_state[K_GAMMA_SCALE] = True
    elif gamma is not None:
        point = _grid_point(gamma, "gamma", ignored, moved)
        if point is not None:
            st.session_state[K_LOG_GAMMA] = point
            st.session_state[K_GAMMA_SCALE] = False
            _note_source("gamma", "the link")
    if "lam" in q:
        point = _grid_point(q["lam"], "lam", ignored, moved)
        if point is not None:
            st.session_state[K_LOG_LAM] = point
            _note_source("lam", "the link")
    if "k" in q and shared_missing is None:  # a class index of other data would mislead
        k = index_value(q["k"])
        if k is not None:
            st.session_state[K_CLASS] = k
            st.session_state["_url_k"] = k
        else:
            ignored.append(f"k={_shown(q['k'])} is not a class number")
    st.session_state["_url_ignored"] = ignored
    st.session_state["_url_moved"] = moved


def url_notice(ds):
    """Say which values of the link were ignored (once, on the page the link opened)."""
    dropped = st.session_state.pop("_url_dropped", None)
    if dropped:
        st.warning(esc_md(dropped), icon=":material/link_off:")
    missing = st.session_state.pop("_share_missing", None)
    if missing:
        st.warning(
            esc_md(missing)
            + f" You are looking at the sample data “{esc_md(ds.name)}” instead, with the class "
            "choice reset. Choose a sample, or upload the file again for a new link, on the "
            "Choose data page.",
            icon=":material/warning:",
        )
    ignored = st.session_state.pop("_url_ignored", [])
    k = st.session_state.pop("_url_k", None)
    if k is not None and k >= ds.n_classes:
        ignored.append(f"k={k} is not a class of {ds.name!r} ({ds.n_classes} classes)")
    if ignored:
        st.warning(
            "Some settings in the link could not be used and were ignored: "
            + esc_md("; ".join(ignored))
            + ".",
            icon=":material/warning:",
        )
    moved = st.session_state.pop("_url_moved", [])
    if moved:
        st.info(
            "The sliders take values on a grid, so the page shows the nearest point's "
            "numbers: " + esc_md("; ".join(moved)) + ".",
            icon=":material/info:",
        )


def default_class(ds) -> int:
    """The class the pages start on: the one in the share of rows nearest one half
    (:func:`sblr.interpret.starting_class`), so that every view (test rows, PR curve,
    contributions, an explanation) has something to show."""

    return starting_class(ds.label_matrix())


def sidebar_settings(ds):
    """Model, gamma, lambda and target-class widgets; returns the Settings."""
    _apply_pending_tune()
    st.session_state.setdefault(K_MODEL, SPARSE_SBLR.label)
    st.session_state.setdefault(K_GAMMA_SCALE, True)
    st.session_state.setdefault(K_LOG_GAMMA, 0.0)
    st.session_state.setdefault(K_LOG_LAM, DEFAULT_LOG_LAM)
    # The class widget's key names the data: with one key for every data set, the browser
    # would keep the previous data's choice (a class name not among the new classes).
    class_key = f"{K_CLASS}:{dataset_key()}"
    if class_key not in st.session_state:
        # first look at this data: the link's class, else the most frequent class (class 0
        # may occur in no test row: birds' PR chart said "average precision nan")
        k = st.session_state.get("_url_k")
        if not isinstance(k, (int, np.integer)) or not 0 <= k < ds.n_classes:
            k = default_class(ds)
        st.session_state[class_key] = int(k)
    sb = st.sidebar
    sb.selectbox(
        "Model",
        MODEL_NAMES,
        key=K_MODEL,
        persist_state=_PERSIST,
        help="SML decides from the evidence alone; SBLR and SparseSBLR learn β.",
    )
    scale = sb.toggle(
        "γ = scale",
        key=K_GAMMA_SCALE,
        persist_state=_PERSIST,
        on_change=_left_scale,
        args=(ds,),
        help="γ = 1 / (d · Var X) on the scaled training data, as scikit-learn's SVC. "
        "Turned off, the slider starts at the grid point nearest to it.",
    )
    value = _scale_value(ds) if scale else None
    if value is not None:
        sb.caption(f"γ = scale is {value:.3g} on this data; moving the slider chooses γ yourself.")
        # the slider shows the grid point nearest to it, not a γ not in use (it showed 1e0
        # beside a scale γ of 0.01, and students read γ = 1)
        st.session_state[K_LOG_GAMMA] = nearest_point(math.log10(value))
    sb.select_slider(
        "RBF width γ (log₁₀)",
        LOG_GRID,
        key=K_LOG_GAMMA,
        persist_state=_PERSIST,
        format_func=log_label,
        # not disabled while "γ = scale" is on (its greyed text failed WCAG's contrast on every
        # page): moving it turns "scale" off and uses the value moved to
        on_change=_chose_gamma,
        args=(ds,),
        help="Φ(x, y) = exp(−γ‖x − y‖²). Larger γ: more local.",
    )
    chosen = st.session_state[K_LOG_GAMMA]
    other = settings_from_other_data()
    if not scale and value_source("gamma", None) not in (None, "chosen by you"):
        sb.caption(f"γ = {log_label(chosen)}: " + value_source("gamma", "") + ".")
    if K_APPLIED_GAMMA not in st.session_state or not gamma_needs_apply(ds):
        st.session_state[K_APPLIED_GAMMA] = chosen
    elif not scale and chosen != st.session_state[K_APPLIED_GAMMA]:
        sb.caption(
            f"γ in use: {log_label(st.session_state[K_APPLIED_GAMMA])}. On data this size "
            f"({ds.n_classes} classes, {ds.n_samples:,} rows) a new γ recomputes the evidence "
            "and every fit, so it waits for the button."
        )
        sb.button(
            f"Apply γ = {log_label(chosen)}",
            key="apply_gamma",
            type="primary",
            on_click=_apply_gamma,
        )
    sb.select_slider(
        "L1 strength λ (log₁₀)",
        LOG_GRID,
        key=K_LOG_LAM,
        persist_state=_PERSIST,
        format_func=log_label,
        on_change=_chose_lam,
        help="SparseSBLR's λ‖β‖₁ on the mean log-loss (larger λ: more zeros). The β, "
        "contribution and path pages always show SparseSBLR, so λ applies there whatever "
        f"the model. It starts at the default, {log_label(DEFAULT_LOG_LAM)}; below it the "
        "sidebar says when it came from Tune, a link or the lesson.",
    )
    # said only when λ is not the default (a caption for every value pushed the class
    # selector off a 1000 px sidebar, its list opening below the window)
    if value_source("lam", None) not in (None, "chosen by you") and (
        "λ" in other or st.session_state[K_LOG_LAM] != DEFAULT_LOG_LAM
    ):
        sb.caption(
            f"λ = {log_label(st.session_state[K_LOG_LAM])}: " + value_source("lam", "") + "."
        )
    if other:  # the way back beside the note (issue #46, item 9)
        sb.button(
            f"Reset {' and '.join(other)} to the default" + ("s" if len(other) > 1 else ""),
            key="reset_other_data",
            on_click=_reset_other_data,
            help="γ = scale and λ = " + log_label(DEFAULT_LOG_LAM) + ", as a new session starts.",
        )
    st.session_state[K_CLASS] = sb.selectbox(
        "Class k",
        range(ds.n_classes),
        key=class_key,
        persist_state=_PERSIST,
        format_func=lambda k: ds.class_names[k],
        help="The target class the contributions, explanation and path pages look at.",
    )
    s = Settings(
        model=st.session_state[K_MODEL],
        gamma="scale" if scale else grid_value(st.session_state[K_APPLIED_GAMMA]),
        lam=grid_value(st.session_state[K_LOG_LAM]),
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
    from sblr.similarity import SimilarityFeaturizer  # lazy: scikit-learn, ~1 s

    n_components = SimilarityFeaturizer().n_components
    st.sidebar.info(
        f"**Approximate evidence** ({ds.n_samples:,} rows). Models trained on "
        f"{AUTO_APPROX_ROWS:,} rows or more use Nyström features (D = {n_components}) instead "
        "of the exact sum, so time grows linearly with rows; on benchmark data the evidence "
        "stays within about 1% of exact. Smaller training folds stay exact.",
        icon=":material/info:",
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
    changed = {key: value for key, value in state.items() if st.query_params.get(key) != value}
    if changed:  # one message: the address bar never shows a half-written link
        st.query_params.update(changed)


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


#: What a :func:`show_view` may set (None: left as it is).
VIEW_SETTINGS = ("sample", "model", "gamma", "lam", "k")


def show_view(page, view, *, source="the lesson"):
    """Open ``page`` with the sidebar settings of ``view`` (a mapping of some of
    :data:`VIEW_SETTINGS`; a lesson's "show me", a restored result): they are applied at the
    start of the next run, before any widget is drawn (:func:`apply_pending_view`); the
    sidebar says they came from ``source``."""
    unknown = set(view) - set(VIEW_SETTINGS)
    if unknown:
        raise ValueError(f"not a sidebar setting: {sorted(unknown)}")
    st.session_state["_pending_view"] = {
        **dict.fromkeys(VIEW_SETTINGS),
        **view,
        "source": source,
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
        st.session_state[K_LOG_GAMMA] = nearest_point(math.log10(view["gamma"]))
        st.session_state[K_APPLIED_GAMMA] = st.session_state[K_LOG_GAMMA]
        _note_source("gamma", view.get("source", "the lesson"))
    if view["lam"] is not None:
        st.session_state[K_LOG_LAM] = nearest_point(math.log10(view["lam"]))
        _note_source("lam", view.get("source", "the lesson"))
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
    st.session_state[K_LOG_GAMMA] = nearest_point(math.log10(gamma))
    st.session_state[K_APPLIED_GAMMA] = st.session_state[K_LOG_GAMMA]
    _note_source("gamma", "Tune")
    if lam is not None:
        st.session_state[K_LOG_LAM] = nearest_point(math.log10(lam))
        _note_source("lam", "Tune")


#: Where the sidebar's γ and λ came from: name -> (how, the data set key it was set on).
K_SOURCES = "_value_sources"


def _note_source(name, how):
    """Record that the γ or λ in use was set by ``how`` ("Tune", "the link", ...) on the data
    in use now."""
    st.session_state.setdefault(K_SOURCES, {})[name] = (how, dataset_key())


def _chose_lam():
    _note_source("lam", "you")


def settings_from_other_data() -> dict[str, str]:
    """The sidebar's values set on other data (by Tune, a link, the lesson) that differ from
    the defaults, what set each: ``{"γ": "Tune", "λ": "the link"}`` (a λ set elsewhere equal
    to the default is no news). For the sidebar's reset and the Model page's headline."""
    out = {}
    here = dataset_key()
    sources = st.session_state.get(K_SOURCES, {})
    for name, symbol, is_default in (
        ("gamma", "γ", st.session_state.get(K_GAMMA_SCALE, True)),
        ("lam", "λ", st.session_state.get(K_LOG_LAM, DEFAULT_LOG_LAM) == DEFAULT_LOG_LAM),
    ):
        how, on = sources.get(name, (None, None))
        if how not in (None, "you") and on != here and not is_default:
            out[symbol] = how
    return out


def _reset_other_data():
    """The values set on other data back to the defaults (γ = scale, the default λ)."""
    other = settings_from_other_data()
    sources = st.session_state.setdefault(K_SOURCES, {})
    if "γ" in other:
        st.session_state[K_GAMMA_SCALE] = True
        sources.pop("gamma", None)
    if "λ" in other:
        st.session_state[K_LOG_LAM] = DEFAULT_LOG_LAM
        sources.pop("lam", None)


def value_source(name, default_text):
    """Where the value of ``name`` came from, in words, for the sidebar: the default, the user,
    Tune, a link or the lesson; a value set on another data set says so."""
    how, on = st.session_state.get(K_SOURCES, {}).get(name, (None, None))
    if how is None:
        return default_text
    if how != "you" and on != dataset_key():
        return f"set by {how} on other data: it was not chosen for this one"
    return {"you": "chosen by you"}.get(how, f"from {how}")


#: The β view every β page offers: key -> label.
BETA_VIEWS = {"std": "standardized β̃ (per sd of evidence)", "raw": "raw β"}


def beta_view_choice(page) -> bool:
    """Whether ``page`` will show standardized β̃ (its radio's value, or the choice the user
    made on another page): to describe the view before its radio is drawn."""
    return st.session_state.get(f"beta_view:{page}", st.session_state.get("beta_view", "std")) == (
        "std"
    )


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


def name_columns(*labels):
    """``column_config`` for a table's columns of class names: a medium width, pinned at the
    left. Long names (e.g. 50 characters) otherwise take the whole width of a narrow window
    and push the numbers out of sight; cut to the width, a name shows in full on hover."""
    return {label: st.column_config.TextColumn(width="medium", pinned=True) for label in labels}


def classes_shown(ds, *, prefix, what, rank, help):
    """For a class-by-class heatmap of more classes than it can name (``MAX_TICK_LABELS``):
    a slider "Classes shown (``what``)", the top N by ``rank(n)`` (class indices), and
    "… or exactly these classes". Returns the classes to show, in class order, or None (all
    of them: few enough to name). Widget keys: ``{prefix}_top_n:{key}``,
    ``{prefix}_classes:{key}`` (``key`` the data's, :func:`dataset_key`, so a choice stays
    with its data)."""
    key = dataset_key()

    m = ds.n_classes
    if m <= MAX_TICK_LABELS:
        return None
    col1, col2 = st.columns([1, 2])
    n_top = col1.slider(
        f"Classes shown ({what})", 2, m, MAX_TICK_LABELS, key=f"{prefix}_top_n:{key}", help=help
    )
    picked = col2.multiselect(
        "… or exactly these classes",
        range(m),
        format_func=lambda t: ds.class_names[t],
        key=f"{prefix}_classes:{key}",
    )
    return sorted(picked) if picked else sorted(int(t) for t in rank(n_top))
