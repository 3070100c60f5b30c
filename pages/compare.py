"""Compare methods: the paper's cross-validated comparison, run on the current data.

Every (data, method, fold, folds, grid, decisions) result is cached (``cached_compare_fold``),
so re-running, coming back to the page or adding a method computes only what is new.
The request of the last click is kept in the session, so the results stay on the page.

The similarity models decide multi-label rows by their fitted cut by default, as every other page
does (γ and λ selected by micro-F1); the paper's decisions (π ≥ 0.5, SML its top ξ, the mean
evidence f̄, selection by average precision) are an option, and the tables name the choice.
The choices, their cost and the run's tables and texts come from the page's view
(:mod:`pages._shared.views.compare`); this script reads the widgets and draws.
"""

import time

import streamlit as st

from pages._shared.formatting import esc_md, to_csv_bytes
from pages._shared.long_jobs import compare_methods
from pages._shared.questions import DECISIONS, Protocol
from pages._shared.state import page_context
from pages._shared.views import compare as view
from sblr import DataError
from sblr.stats import fold_forecast, method_label

K_REQUEST = "compare_request"
K_DONE, K_CANCELLED = "_compare_done", "_compare_cancelled"


def _cancel():
    """The Cancel button's callback (before the rerun it asks for): forget the request, so
    the page does not start it again, and say how far it went."""
    st.session_state.pop(K_REQUEST, None)
    st.session_state[K_CANCELLED] = st.session_state.pop(K_DONE, (0, 0))


ds, _, key = page_context(__file__)

st.title("Compare methods")
with st.expander("What am I looking at?"):
    for i, part in enumerate(view.EXPLAINED):
        (st.latex if i % 2 else st.markdown)(part)

request = st.session_state.get(K_REQUEST)
previous = request if request and request["task"] == ds.task else None
choice = view.default_choice(ds)
methods = st.multiselect(
    "Methods",
    choice.options,
    default=list(previous["methods"]) if previous else choice.methods,
    format_func=method_label,
    key=f"compare_methods_{ds.task}",
)
if choice.note_for(methods) and not previous:
    st.caption(choice.note_for(methods))
left, right = st.columns([1, 2])
folds = left.radio(
    "Folds F",
    view.FOLD_CHOICES,
    index=view.FOLD_CHOICES.index(previous["folds"]) if previous else len(view.FOLD_CHOICES) - 1,
    horizontal=True,
    key="compare_folds",
    help="The paper uses 10-fold cross-validation.",
)
grid_name = right.radio(
    "Grid of every tuned hyper-parameter",
    list(view.GRIDS),
    index=list(view.GRIDS).index(previous["grid"]) if previous else 0,
    format_func=view.GRID_LABELS.get,
    key="compare_grid",
)
decisions = st.radio(
    "Decisions of SML, SBLR and SparseSBLR",
    list(DECISIONS),
    index=list(DECISIONS).index(previous["decisions"]) if previous else 0,
    format_func=view.DECISION_LABELS[ds.task].get,
    key="compare_decisions",
    help="The baselines keep their own decision rules either way.",
)
warning, too_slow = view.brsvm_cost(ds, methods, grid_name, folds)
if warning:
    st.warning(warning)
forecast, hours = view.run_forecast(ds, methods, grid_name, folds)  # said before it starts
if forecast:
    st.warning(forecast, icon=":material/schedule:")
too_slow = too_slow or hours

if st.button(
    "Run cross-validation", type="primary", key="compare_run", disabled=not methods or too_slow
):
    chosen = dict(methods=tuple(view.ordered(methods)), folds=int(folds), grid=grid_name)
    request = st.session_state[K_REQUEST] = chosen | dict(
        key=key, task=ds.task, decisions=decisions
    )

cancelled = st.session_state.pop(K_CANCELLED, None)
if cancelled:
    st.info(
        f"Cancelled after {cancelled[0]:,} of {cancelled[1]:,} folds. The folds computed are "
        "kept: **Run cross-validation** goes on from there."
    )
if not request or request["key"] != key:
    st.info(view.waiting_text(methods, too_slow))
    st.stop()

shown_choice = (tuple(view.ordered(methods)), int(folds), grid_name, decisions)
if shown_choice != tuple(request[k] for k in ("methods", "folds", "grid", "decisions")):
    st.caption(
        "Showing the last run; the choices above differ from it. Click **Run "
        "cross-validation** to update (only new (method, fold) pairs are computed)."
    )

n_folds = request["folds"]
bar = st.progress(0.0, text="Cross-validating…")
cancel_slot = st.empty()
cancel_slot.button(
    "Cancel",
    key="compare_cancel",
    on_click=_cancel,
    help="Stops the run at once (inside the fold being computed, at its next grid point); "
    "the folds done are kept, so running again goes on from there.",
)
started = time.monotonic()
prior = view.brsvm_prior(ds, n_folds, request["grid"])


def _progress(done, total, method, fold, timed):
    st.session_state[K_DONE] = (done, total)
    if method is None:
        bar.progress(1.0, text="Done")
        return
    left = {m: n_folds - len(timed[m]) for m in request["methods"]}
    text = view.progress_text(method, fold, n_folds, fold_forecast(timed, left, prior))
    bar.progress(done / total, text=text)


try:
    run = Protocol.of(n_folds, view.GRIDS[request["grid"]], request["decisions"])
    results, hyper = compare_methods(ds, request["methods"], run, progress=_progress)
except (DataError, ValueError) as exc:
    st.session_state.pop(K_REQUEST, None)
    st.error(f"The cross-validation failed: {esc_md(exc)}")
    st.stop()
finally:
    bar.empty()
    cancel_slot.empty()

shown = view.compare_view(ds, request, run, (results, hyper), time.monotonic() - started)
st.subheader(shown.heading)
st.caption(shown.caption)
st.dataframe(shown.table.style.apply(view.bold_best(shown.ranks), axis=0), key="compare_metrics")
st.caption(shown.cost)
if shown.no_label:
    st.caption(shown.no_label)
st.markdown(shown.reading)

st.subheader("Ranks")
st.markdown(shown.best)
st.dataframe(
    shown.ranks.style.apply(view.bold_best(shown.ranks), axis=0)
    .format("{:g}")  # a rank is 1, 2 or 2.5, never 5.000000
    .format("{:.2f}", subset=["Average rank"]),
    key="compare_ranks",
)

st.subheader("Selected hyper-parameters per fold")
number = st.column_config.NumberColumn
st.dataframe(
    shown.hyper,
    hide_index=True,
    key="compare_hyper",
    column_config={
        "select_seconds": number("selection (s)", format="%.2f"),
        "fit_seconds": number("final fit (s)", format="%.2f"),
    },
)
st.caption(view.HYPER_CAPTION)
left, right = st.columns(2)
left.download_button(
    "Download results (CSV)",
    to_csv_bytes(results, index=False),
    file_name=f"{shown.stem}_results.csv",
    mime="text/csv",
    key="compare_download_results",
)
right.download_button(
    "Download hyper-parameters (CSV)",
    to_csv_bytes(hyper, index=False),
    file_name=f"{shown.stem}_hyperparameters.csv",
    mime="text/csv",
    key="compare_download_hyper",
)
