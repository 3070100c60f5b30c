"""Model & metrics: evaluate the chosen model by hold-out or k-fold, and tune γ and λ.

The numbers and texts come from the page's view (:mod:`pages._shared.views.model`); this
script reads the widgets and draws."""

import streamlit as st

from pages._shared.data import show_notes
from pages._shared.formatting import context_name, esc_md, text_table, to_csv_bytes
from pages._shared.long_jobs import before_fitting, lr_yardstick_with_progress, tune
from pages._shared.questions import Scheme, Search
from pages._shared.result_list import draw_result_list
from pages._shared.state import name_columns, page_context, set_tuned, show_view
from pages._shared.state import settings_from_other_data as set_elsewhere
from pages._shared.views import model as view
from sblr import DataError, metrics, plots

ds, s, key = page_context(__file__)
spec = s.spec

st.title("Model & metrics")
with st.expander("What am I looking at?"):
    st.markdown(view.EXPLAINED)
    st.latex(view.EXPLAINED_LATEX)
    if ds.is_multilabel:
        st.markdown(view.METRICS_EXPLAINED)

left, right = st.columns([2, 1])
chosen_scheme = left.radio("Evaluation", list(view.SCHEMES), horizontal=True, key="eval_scheme")
kind = view.SCHEMES[chosen_scheme]
test, test_size, n_splits = None, 0.25, 5
if kind == "test":
    upload = right.file_uploader(
        "Test file (read like the data in use)",
        type=["arff", "csv", "tsv", "data", "txt"],
        key="eval_test_upload",
        help=view.HELP["test file"],
    )
    test, problem = view.test_file(ds, upload)
    if problem:
        (st.info if upload is None else st.error)(problem)
        st.stop()
    show_notes(test)
elif kind == "holdout":
    test_size = right.select_slider(
        "Test share",
        [0.1, 0.2, 0.25, 0.3, 0.4, 0.5],
        value=0.25,
        key="eval_test_size",
        format_func="{:.0%}".format,
    )
else:
    n_splits = right.select_slider("Folds k", [3, 5, 10], value=5, key="eval_folds")
scheme = Scheme("all" if kind == "test" else kind, test_size, n_splits)

st.markdown(view.headline(ds, spec, set_elsewhere()))
before_fitting(ds, s, "model", fits=view.fits_of(ds, scheme))  # SBLR on 983 labels: hours
bar = st.progress(0.0, text="Evaluating…")
try:
    ev = view.evaluate(ds, spec, scheme, test, lambda done, text: bar.progress(done, text=text))
except DataError as exc:
    st.error(esc_md(exc))
    st.stop()
finally:
    bar.empty()
if ev.caption:
    st.caption(ev.caption)
tiles = view.tiles(ds, ev)
# at most three metrics a row: five in a row cut their labels to "Hamming l…" at 800 px
cols = [col for _ in range(0, len(tiles), 3) for col in st.columns(3)]
for col, t in zip(cols, tiles, strict=False):
    col.metric(t.label, t.value, t.beside, delta_color="off", delta_arrow="off", help=t.help)
st.caption(view.lr_caption(ds, ev))
if ev.lr_offer and st.button(ev.lr_offer, key="fit_lr_yardstick"):
    st.button("Cancel", key="cancel_lr_yardstick", help=view.HELP["cancel LR"])
    lr_yardstick_with_progress(ds, scheme, test)
    st.rerun()
if ds.is_multilabel:
    with st.expander("More metrics" if ev.one_split else "More metrics and per-fold values"):
        st.dataframe(view.more_metrics(ds, ev), width="stretch", key="more_metrics")
        if ev.kfold:
            st.dataframe(text_table(ev.result.per_fold, precision=4), width="stretch")
else:
    st.plotly_chart(
        plots.confusion_matrix_figure(ev.result.confusion, ds.class_names),
        key="confusion",
        width="content",  # the figure's own width: its colour bar beside the square matrix
    )
    if ev.kfold:
        with st.expander("Per-fold values"):
            st.dataframe(text_table(ev.result.per_fold, precision=4), width="stretch")
st.download_button(
    "Download metrics (CSV)",
    to_csv_bytes(ev.summary),
    file_name=context_name(ds, spec, "metrics", ev.tag, suffix=".csv"),
    mime="text/csv",
)

draw_result_list(ds, s, ev)

st.subheader("Per class, and the decision threshold")
threshold = None
if ds.is_multilabel:
    st.caption(view.threshold_intro(spec))
    if st.toggle("Move the cut myself", key="own_threshold", help=view.HELP["own cut"]):
        cut_help = view.HELP["threshold"]
        threshold = st.slider(
            "Decision threshold", 0.05, 0.95, 0.5, 0.05, key="threshold", help=cut_help
        )
if threshold is None:
    st.caption(view.decision_caption(ds, spec, ev))
at = view.threshold_view(ds, spec, ev, s.k, threshold)
for col, t in zip(st.columns(len(at.tiles)) if at.tiles else [], at.tiles, strict=True):
    arrow = "off" if t.colour == "off" else "auto"
    col.metric(t.label, t.value, t.beside, delta_color=t.colour, delta_arrow=arrow)
if at.warning:
    st.warning(at.warning)
for note in at.notes:
    st.caption(note)
report = text_table(at.report, formats=dict.fromkeys(("precision", "recall", "f1"), "{:.3f}"))
st.dataframe(
    report, width="stretch", hide_index=True, key="per_label", column_config=name_columns("class")
)
if at.curve is not None:
    st.plotly_chart(plots.pr_curve_figure(**at.curve), key="pr_curve")
(st.info if at.curve is None else st.caption)(at.curve_caption)

st.subheader("Tune γ and λ")
how = st.radio(
    "Selection",
    view.tune_schemes(spec),
    horizontal=True,
    key="tune_scheme",
    help=view.HELP["selection"],
)
by = None
if ds.is_multilabel:
    by = st.selectbox(
        "Select by",
        view.SELECT_BY,
        format_func=metrics.METRIC_LABELS.get,
        key="tune_metric",
        help=view.HELP["select by"],
    )
caption, rows, points = view.tune_view(ds, spec, scheme, how)
st.caption(caption)
if st.button(f"Tune {s.model}", key="tune"):
    tune_bar = st.progress(0.0, text="Tuning…")
    try:
        res = tune(
            ds,
            s.model,
            Search(rows, how, by),
            lambda done, n: tune_bar.progress(done / n, text=f"Grid point {done} of {points}"),
        )
    except DataError as exc:
        st.error(f"Could not tune: {esc_md(exc)}")
        res = None
    finally:
        tune_bar.empty()
    if res is not None:
        st.session_state["tuning_result"] = (key, s.model, test_size, how, res)
        # the headline before tuning, said again beside the button after it (the page stays
        # scrolled here), and the way back (issue #46, item 10)
        before = (key, *view.headline_metric(ds, ev), (s.model, s.gamma, s.lam))
        st.session_state["_tuned_from"] = before
        set_tuned(res.best_params["gamma"], res.best_params.get("lam"))
        st.rerun()

stored = st.session_state.get("tuning_result")
if stored and stored[0] == key:
    before = st.session_state.get("_tuned_from")
    before = before if before and before[0] == key else None
    holdout = test_size if kind == "holdout" else None
    tuned = view.tuned_view(stored[1:], ev, holdout, before[1:3] if before else None)
    if tuned.stale:
        st.warning(tuned.stale)
    st.success(tuned.message)
    # tuning can lower the test score (a choice at the grid's edge): the way back beside the
    # message, not in the result list's closed expander
    help_back = "The model, γ and λ in use before Tune ran."
    if before and st.button(
        "Restore the setting before tuning", key="restore_before_tuning", help=help_back
    ):
        st.session_state.pop("tuning_result", None)  # its message would say "now show it"
        setting = dict(zip(("model", "gamma", "lam"), before[3], strict=True))
        show_view("pages/model.py", setting, source="the setting before tuning")
    if tuned.edges:
        st.warning(tuned.edges)
    heatmap = plots.tuning_heatmap(tuned.scores, tuned.metric_label, best=tuned.best)
    st.plotly_chart(heatmap, key="tuning_heatmap")
    with st.expander("All grid points"):
        st.dataframe(tuned.scores, width="stretch")
