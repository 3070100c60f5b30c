"""The lesson on the planted sample: its steps, and the panel a step puts on the page it opens.

A step names a page, the sidebar settings for it, its question and the figure it talks about.
"Show me" opens the page with those settings; the page then starts with the step's panel:
the question, ◀ step · next ▶, and the figure with the control that moves it (λ beside the
SparseSBLR heatmap), all on the first screen at 1024×768, before the page's own content.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from dataclasses import dataclass

import numpy as np
import streamlit as st

from pages._shared.cache import (
    cached_fit,
    evaluation,
    held_out_cuts,
    held_out_probabilities,
    shared_figure,
    training_evidence,
    yardstick,
)
from pages._shared.data import cached_sample, dataset_key
from pages._shared.formatting import esc_md, grid_value, nearest_point, text_table
from pages._shared.long_jobs import (
    N_RESAMPLES,
    lr_yardstick_shown,
    stability_with_progress,
    stored_stability,
)
from pages._shared.questions import HOLDOUT, Spec
from pages._shared.server import job_slots
from pages._shared.state import K_LOG_LAM, LOG_GRID, log_label, show_view
from pages._shared.stores import solver_ready
from sblr import plots
from sblr.interpret import cooccurrence, evidence_sd, standardized_coef
from sblr.registry import DASHBOARD_MODELS, SBLR, SML, SPARSE_SBLR

# sblr.metrics imports scikit-learn (about 1 s): imported where the per-class step draws, so
# the first page (app.py imports this module) opens without it (tests/test_startup.py).

__all__ = [
    "STEPS",
    "PanelSlot",
    "lesson_panel",
    "open_step",
    "panel_slot",
    "panel_waterfall",
    "remembered_step",
    "warm_lesson",
]

#: The height of a table or a heatmap of β in the panel: with the question and the buttons it
#: stays on the first screen at 1024×768 (the β heatmap's own 545 px ended 100 px below it).
PANEL_FIGURE_HEIGHT = 300
PANEL_HEATMAP_HEIGHT = 400
#: The panel's figures without Plotly's toolbar: at 1024 px it covered their two-line titles
#: (issue #46, item 14); a lesson's figure is read, not zoomed (the page below has the toolbar).
PANEL_CONFIG = {"displayModeBar": False}
#: Step 7's waterfall, lower: the what-if inputs sit under it in the panel.
PANEL_WATERFALL_HEIGHT = 280

#: One step: title, what to read, the question for the class, the view "Show me" opens, and
#: the figure the panel shows there.
STEPS = [
    {
        "title": "Which labels occur together?",
        "text": (
            "The planted data has 500 rows, 8 features and 7 labels a row can carry at once "
            "(daylight, birdsong, rain, thunder, frost, spring_tide, noise). The data was made "
            "with a few rules hidden in it. The Data page counts, for every pair of labels, the "
            "rows that carry both: the co-occurrence matrix."
        ),
        "question": (
            "Which label never occurs without another one? Which two labels almost never occur "
            "together?"
        ),
        "page": "pages/data.py",
        "view": {"model": SPARSE_SBLR.label, "gamma": "scale", "lam": 1e-3, "k": 3},
        "figure": "cooccurrence",
    },
    {
        "title": "SML: decide from the evidence alone",
        "text": (
            "Every row gets one number per class, its evidence f̄ₜ(x): how similar it is, on "
            "average, to the training rows of class t. SML adds these similarities up instead "
            "of averaging them (fₜ = |Dₜ|·f̄ₜ, the mean times the class's size) and predicts the "
            "classes with the largest sums, nothing more. The Model page scores it on rows it "
            "has not seen."
        ),
        "question": (
            "Look at the per-class table: which label does SML get worst? Why could a rare "
            "label such as frost be hard for a rule that compares summed similarities?"
        ),
        "page": "pages/model.py",
        "view": {"model": SML.label, "gamma": "scale", "lam": 1e-3, "k": 4},
        "figure": "per_class",
    },
    {
        "title": "SBLR: every class's evidence in every class's model",
        "text": (
            "SBLR fits, for each class k, a logistic regression whose inputs are the evidences "
            "of ALL classes. Its coefficient βₜᵏ says how much class t's evidence moves the "
            "logit of class k. You know logistic regression: this is it, on 7 made-up features "
            "(the evidences). With no penalty, almost every β is non-zero. And here the page "
            "warns that SBLR's single coefficients cannot be read one by one: some classes' "
            "evidences are near copies of each other (daylight and birdsong), so many different "
            "β fit the data equally well. That warning is part of the lesson."
        ),
        "question": (
            "In the SBLR heatmap, thunder's row gives weight to many classes. If daylight's and "
            "birdsong's evidence are near copies, could the weight move from one to the other "
            "without changing a single prediction? What does that mean for reading the planted "
            "rule off this row?"
        ),
        "page": "pages/coefficients.py",
        "view": {"model": SBLR.label, "gamma": 1.0, "lam": 1e-5, "k": 3},
        "figure": "dense_beta",
    },
    {
        "title": "Raise λ: the L1 penalty sets weights to exactly zero",
        "text": (
            "SparseSBLR adds λ‖βᵏ‖₁ to the loss. A weight that does not earn its keep becomes "
            "exactly 0. The step starts at a small λ, where most weights are still in; move the "
            "λ slider beside the heatmap to the right, step by step, and watch it empty out."
        ),
        "question": (
            "At which λ is every weight zero? Which weights are the last to go? (The "
            "Regularization path page shows the same thing as curves.)"
        ),
        "page": "pages/coefficients.py",
        "view": {"model": SPARSE_SBLR.label, "gamma": 1.0, "lam": 10**-4.5, "k": 3},
        "figure": "sparse",
    },
    {
        "title": "The planted structure appears",
        "text": (
            "At γ = 1 and λ = 3·10⁻⁴ SparseSBLR keeps only a few weights besides each class's "
            "own evidence. Most of them are the rules the data was made with (birdsong copies "
            "daylight, thunder occurs only with rain, frost excludes daylight); a few are not: "
            "the L1 penalty keeps what helps to predict, planted or not."
        ),
        "question": (
            "Read the rules off the heatmap: thunder ← ?, birdsong ← ?, and which weight is "
            "negative? Does the noise label's evidence count for anything?"
        ),
        "page": "pages/coefficients.py",
        "view": {"model": SPARSE_SBLR.label, "gamma": 1.0, "lam": 10**-3.5, "k": 3},
        "figure": "sparse",
    },
    {
        "title": "How sure is each β?",
        "text": (
            "The same model refitted on 50 bootstrap resamples of the rows: a weight that is "
            "non-zero in almost every resample is a stable finding, one that comes and goes is "
            "not. Press “Estimate stability” to see how often each weight is chosen."
        ),
        "question": (
            "Which weights are selected in at least 90% of the resamples? Is the noise label "
            "among them?"
        ),
        "page": "pages/coefficients.py",
        "view": {"model": SPARSE_SBLR.label, "gamma": 1.0, "lam": 10**-3.5, "k": 3},
        "figure": "stability",
    },
    {
        "title": "Explain one prediction",
        "text": (
            "For one row, thunder's logit is the intercept plus one term βₜ · f̄ₜ(x) per class. "
            "The waterfall adds them up; pick a misclassified row with the row picker. Further "
            "down, the same logit is split over the input features (hour, season, wind...), "
            "against the most similar row the model decides the other way, and “What if?” lets "
            "you change the features that count most."
        ),
        "question": (
            "For a row predicted as thunder, which term pushes it over the line? Which feature "
            "would you change to make the model doubt, and does the waterfall agree when you do?"
        ),
        "page": "pages/explain.py",
        "view": {"model": SPARSE_SBLR.label, "gamma": 1.0, "lam": 10**-3.5, "k": 3},
        "figure": "waterfall",
    },
]


def remembered_step(from_url=None) -> int:
    """The step to show: this session's last step, else the link's ``?step=N``, else 1."""
    n = len(STEPS)
    remembered = st.session_state.get("_lesson_step")
    if isinstance(remembered, int) and 1 <= remembered <= n:
        return remembered
    try:
        step = int(str(from_url)) if from_url is not None else 1
    except ValueError:
        step = 1
    return step if 1 <= step <= n else 1


def open_step(step: int):
    """Open step ``step``'s page with its settings; its panel shows there (:func:`lesson_panel`)."""
    st.session_state["_lesson_step"] = st.session_state["_lesson_active"] = int(step)
    info = STEPS[step - 1]
    show_view(info["page"], {"sample": "planted", **info["view"]})


def _close():
    st.session_state["_lesson_active"] = None


@dataclass(frozen=True)
class PanelSlot:
    """The panel's room for a figure the page draws itself, from its own state: ``figure``
    (the figure and its caption) and, under it, ``inputs`` (the controls that move it)."""

    figure: object
    inputs: object


_run = threading.local()  # this script run's panel slot (a run is one thread)


def panel_slot(figure: str) -> PanelSlot | None:
    """The lesson panel's slot for ``figure`` on this run (the page draws it there), or None
    when no lesson panel for that figure is on the page.

    Step 7's waterfall is drawn by Explain itself: the panel above the page drew the row as it
    was before the page's what-if edits, and said "π = 0.858" while the page said 0.023."""
    slot = getattr(_run, "slot", None)
    return slot[1] if slot is not None and slot[0] == figure else None


def lesson_panel(page_path: str):
    """At the top of the page a lesson step opened: the step's question, ◀ step · next ▶, and
    the figure the step talks about with its control. Nothing on any other page."""
    _run.slot = None
    step = st.session_state.get("_lesson_active")
    if not isinstance(step, int) or not 1 <= step <= len(STEPS):
        return
    info = STEPS[step - 1]
    if _stem(info["page"]) != _stem(page_path):
        return
    n = len(STEPS)
    with st.container(border=True, key="lesson_panel"):
        st.markdown(f"**Lesson, step {step} of {n}: {info['title']}**")
        st.markdown(f"**Question for the class.** {info['question']}")
        prev_col, lesson_col, next_col, close_col = st.columns([1, 1, 1, 1])
        if step > 1 and prev_col.button(f"◀ step {step - 1}", key="lesson_prev"):
            open_step(step - 1)
        if lesson_col.button("Lesson text", key="lesson_back"):
            st.session_state["_lesson_step"] = step
            st.switch_page("pages/lesson.py")
        if step < n and next_col.button(f"step {step + 1} ▶", key="lesson_next", type="primary"):
            open_step(step + 1)
        close_col.button("Close the lesson", key="lesson_close", on_click=_close)
        if dataset_key() != "sample:planted":
            st.caption("The lesson works on the planted sample; another data set is in use now.")
            if st.button("Use the planted sample", key="lesson_planted"):
                open_step(step)
            return
        with st.container(key="lesson_figure"):
            if info["figure"] in DRAWN_BY_THE_PAGE:
                _run.slot = (info["figure"], PanelSlot(st.container(), st.container()))
            else:
                FIGURES[info["figure"]](st.session_state["_settings"])


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".py")


def _planted():
    return cached_sample("planted")


def _cooccurrence(s):

    ds = _planted()
    fig = shared_figure(  # every student's is the same: built once
        ("lesson cooccurrence", ds.fingerprint),
        lambda: plots.cooccurrence_heatmap(cooccurrence(ds.label_matrix()), ds.class_names),
    )
    st.plotly_chart(fig, key="lesson_chart", width="content", config=PANEL_CONFIG)


def _per_class(s):
    from sblr import metrics

    ds = _planted()
    y, P = held_out_probabilities(ds, s.spec, HOLDOUT)
    cuts = held_out_cuts(ds, s.spec, HOLDOUT)  # as the page decides
    report = metrics.per_label_report(y, P, threshold=cuts, class_names=ds.class_names)
    st.dataframe(
        text_table(report, formats=dict.fromkeys(("precision", "recall", "f1"), "{:.3f}")),
        hide_index=True,
        key="lesson_chart",
        height=PANEL_FIGURE_HEIGHT,
    )
    st.caption(f"{s.model} on the 25% hold-out rows, as on the page below.")


def _heatmap(s, entry):

    ds = _planted()
    spec = s.spec_for(entry)
    model = cached_fit(ds, spec)
    sd = evidence_sd(training_evidence(ds, s.gamma))
    name = spec.label

    def build():
        fig = plots.beta_heatmaps(
            {name: standardized_coef(model.coef_, sd=sd)},
            ds.class_names,
            lams={name: spec.lam} if spec.l1 else None,
        )
        fig.layout.height = PANEL_HEATMAP_HEIGHT
        return fig

    # every student at this step sees the same heatmap: built once for the class
    key = ("lesson beta", ds.fingerprint, spec.model, str(s.gamma), float(s.lam))
    return model, shared_figure(key, build)


def _dense_beta(s):
    _, fig = _heatmap(s, SBLR)
    st.plotly_chart(fig, key="lesson_chart", config=PANEL_CONFIG)


def _sync_lam():
    st.session_state[K_LOG_LAM] = st.session_state["lesson_lam"]


def _sparse(s):
    model, fig = _heatmap(s, SPARSE_SBLR)
    left, right = st.columns([3, 1])
    left.plotly_chart(fig, key="lesson_chart", config=PANEL_CONFIG)
    # the sidebar's λ, beside the figure it changes (one value: each slider moves the other)
    st.session_state["lesson_lam"] = st.session_state[K_LOG_LAM]
    right.select_slider(
        "λ (log₁₀)",
        LOG_GRID,
        key="lesson_lam",
        format_func=log_label,
        on_change=_sync_lam,
        help="The same λ as the sidebar's: SparseSBLR's L1 strength.",
    )
    zeros = int((model.coef_ == 0).sum())
    right.metric("weights at exactly 0", f"{zeros} of {model.coef_.size}")


def _stability(s):

    ds = _planted()
    result = stored_stability(ds, s.gamma, s.lam)
    if result is None:
        if st.button(f"Estimate stability ({N_RESAMPLES} resamples)", key="lesson_stability"):
            result = stability_with_progress(ds, s.gamma, s.lam)
    if result is None:
        st.caption("A few seconds; the heatmap of how often each β is chosen then shows here.")
        return
    fig = plots.selection_frequency_heatmap(
        result.selection_frequency, ds.class_names, n_resamples=result.n_resamples
    )
    fig.layout.height = PANEL_HEATMAP_HEIGHT
    st.plotly_chart(fig, key="lesson_chart", width="content", config=PANEL_CONFIG)


def panel_waterfall(slot, fig, *, what, name, logit):
    """Step 7's figure, drawn by Explain into the panel's slot: ``fig``, the class waterfall
    of the row the page explains (``what``: "row 5", "row 5 (edited)"), for the class
    ``name`` whose logit it splits."""
    fig.layout.height = PANEL_WATERFALL_HEIGHT
    with slot.figure:
        st.plotly_chart(fig, key="lesson_chart", config=PANEL_CONFIG)
        p = 1.0 / (1.0 + math.exp(-float(np.clip(logit, -700, 700))))
        st.caption(
            f"π = {p:.3f} for {esc_md(name)} on {what}, as on the page below. "
            "Change a feature here (largest credits first) or the row below: it follows."
        )


FIGURES = {
    "cooccurrence": _cooccurrence,
    "per_class": _per_class,
    "dense_beta": _dense_beta,
    "sparse": _sparse,
    "stability": _stability,
}
#: Figures the step's page draws into the panel (:func:`panel_slot`), from the page's own state.
DRAWN_BY_THE_PAGE = ("waterfall",)


# ----------------------------------------------------------------------------- warm start
def _step_view(info):
    """The (model, γ, λ) of a step's view, as the sidebar sets them (λ, γ on their grids)."""
    view = info["view"]
    lam = grid_value(nearest_point(math.log10(view["lam"])))
    gamma = view["gamma"]
    if gamma != "scale":
        gamma = grid_value(nearest_point(math.log10(gamma)))
    return view["model"], gamma, lam


def lesson_views():
    """The (model, γ, λ) of every step's view, as the sidebar sets them (λ on its grid)."""
    return list(dict.fromkeys(_step_view(info) for info in STEPS))


def _warm(log):
    """Fit what the lesson's steps show, once per server, before the class arrives: the
    evidence at each step's γ, the three models at each step's view and step 2's held-out
    probabilities. Each piece takes a job slot and waits while users compute, so a visitor's
    own view never queues behind it."""
    solver_ready(quiet=True)  # SparseSBLR's solver first (compiled or loaded)
    ds = _planted()
    slots = job_slots()
    pieces = []
    evaluated = {_step_view(info) for info in STEPS if info["page"] == "pages/model.py"}
    for model, g, lam in lesson_views():  # γ as the pages ask for it ("scale" or a value)
        pieces.append(("evidence", lambda g=g: training_evidence(ds, g)))
        for entry in DASHBOARD_MODELS:  # every page shows the three
            pieces.append(
                # decided: Model & metrics, Explain and Predict read the decision too
                (
                    entry.label,
                    lambda n=entry, g=g, lam=lam: cached_fit(
                        ds, Spec.of(n, g, lam), decided=True, quiet=True
                    ),
                )
            )
        if (model, g, lam) in evaluated:  # Model & metrics on the hold-out rows, as it opens
            shown = Spec.of(model, g, lam)
            pieces += [
                ("scores", lambda shown=shown: evaluation(ds, shown, HOLDOUT)),
                ("held-out", lambda shown=shown: held_out_cuts(ds, shown, HOLDOUT)),
                ("probabilities", lambda shown=shown: held_out_probabilities(ds, shown, HOLDOUT)),
                # the yardsticks beside every metric (the LR fits took 2 s: a class of 30
                # waited for them at step 2, p50 2.3 s)
                ("LR yardstick", lambda: lr_yardstick_shown(ds, HOLDOUT, quiet=True)),
                ("yardstick", lambda: yardstick(ds, HOLDOUT)),
            ]
    started = time.monotonic()
    for what, piece in pieces:
        deadline = time.monotonic() + 30.0
        while not slots.idle() and time.monotonic() < deadline:
            time.sleep(0.2)  # users first
        try:
            piece()
        except Exception:  # a page computes it again when asked, and shows what fails
            log.exception("warming the lesson's %s failed", what)
    log.info("the lesson's views are warm (%.1f s)", time.monotonic() - started)


WARM_THREAD = "sblr-warm-lesson"


@st.cache_resource
def warm_lesson() -> threading.Thread | None:
    """A thread, started once per server (app.py, after the first run), that computes what
    the lesson shows: a class's first "Show me" and a student's first link then find it done
    (cold, a fresh session's first step took 34.5 s in front of the class). Off with
    ``SBLR_WARM_LESSON=0`` (the test suite, whose sessions clear the caches again and again)."""

    if os.environ.get("SBLR_WARM_LESSON", "1").strip() == "0":
        return None
    # the cached functions it calls look for a session and warn, once a call, that this
    # thread has none ("missing ScriptRunContext"): true and harmless here, so not logged
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(
        lambda record: threading.current_thread().name != WARM_THREAD
    )
    thread = threading.Thread(
        target=_warm,
        args=(logging.getLogger("sblr.dashboard"),),
        name=WARM_THREAD,
        daemon=True,
    )
    thread.start()
    return thread
