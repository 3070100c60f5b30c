"""Explain a prediction: probabilities for every class and the waterfall of one logit."""

import numpy as np
import streamlit as st

from pages._shared.cache import class_importance
from pages._shared.formatting import context, dense_row, esc_md, to_csv_bytes
from pages._shared.lesson import panel_slot, panel_waterfall
from pages._shared.long_jobs import before_fitting
from pages._shared.questions import RowQuestion
from pages._shared.state import page_context
from pages._shared.views import explain as views
from pages._shared.whatif import WhatIf
from sblr import plots

ds, s, key = page_context(__file__)
k, name_k, label_k = s.k, ds.class_names[s.k], esc_md(ds.class_names[s.k])

st.title("Explain a prediction")
with st.expander("What am I looking at?"):
    st.markdown(views.INTRO)
    st.latex(views.INTRO_LATEX)
if not s.spec.learns_beta:
    st.info(f"{s.model} has no coefficients to explain; showing {views.EXPLAINED_INSTEAD}.")
before_fitting(ds, s, "explain")  # SBLR on 983 labels: hours, said before it starts
rows = views.rows(ds, s)
pick, more = st.columns([3, 1], vertical_alignment="bottom")
# a select box: six radio lines with a long class name took half of a 1024x768 screen
which = pick.selectbox(
    "Rows to pick from", list(rows.filters), format_func=rows.filters.get, key="explain_which"
)
matching = rows.matching(which)


def _random_row():
    if len(matching):
        st.session_state["explain_row"] = int(np.random.default_rng().choice(matching))


more.button(
    "Random row",
    key="explain_random",
    on_click=_random_row,
    disabled=not len(matching),
    help="Rows are predicted with their leave-one-out evidence (without their own similarity). "
    f"“Missed” and “wrongly given” are {rows.name}'s errors for the sidebar's class only.",
)
shown = ", ".join(str(i) for i in matching[:12]) + (" …" if len(matching) > 12 else "")
st.caption(f"{len(matching):,} of {ds.n_samples:,} rows: {shown or 'none'}")
if not 0 <= st.session_state.get("explain_row", 0) < ds.n_samples:  # other data before
    st.session_state["explain_row"] = 0
st.session_state.setdefault("explain_row", 0)
if st.session_state.get("_explain_rows_of") != which:
    # a new choice of rows: show one of them (the row shown may not be among them)
    st.session_state["_explain_rows_of"] = which
    if len(matching) and st.session_state["explain_row"] not in set(matching.tolist()):
        st.session_state["explain_row"] = int(matching[0])
row = st.number_input(
    f"Row number (0 … {ds.n_samples - 1})",
    min_value=0,
    max_value=ds.n_samples - 1,
    step=1,
    key="explain_row",
)
baseline_choice = st.session_state.get("explain_baseline", "contrast")
start = views.baseline(rows, row, baseline_choice)
edit = WhatIf(ds, dense_row(ds.X, row), f"explain_whatif_{key}_{row}_")
# the unedited row's credits order the features offered for editing
question = RowQuestion(edit.x_row, start.values, k, row)
original = rows.credits(rows.model, rows.name, question)
MAX_LISTED = min(100, ds.n_features)
if not 1 <= st.session_state.get("explain_n_edit", 1) <= MAX_LISTED:  # other data before
    st.session_state["explain_n_edit"] = min(10, MAX_LISTED)
st.session_state.setdefault("explain_n_edit", min(10, MAX_LISTED))
# lesson step 7: the features that matter most are edited in the lesson panel, beside its
# waterfall of this very row (the rest stay in the expander below)
panel = panel_slot("waterfall")
in_panel = [int(i) for i in original.top(min(3, MAX_LISTED))] if panel else []
if panel:
    with panel.inputs:
        for col, i in zip(st.columns(len(in_panel)), in_panel, strict=True):
            edit.input(col, i)
with st.expander("What if? Edit the values of the features that matter most"):
    n_list = st.number_input(
        "Features listed (largest credit for this class first)",
        min_value=1,
        max_value=MAX_LISTED,
        key="explain_n_edit",
    )
    cols = st.columns(2)
    listed = [int(i) for i in original.top(n_list) if int(i) not in in_panel]
    for j, i in enumerate(listed):
        edit.input(cols[j % 2], i)
    if far := edit.far():
        st.warning(far)
    st.button("Back to the row's own values", on_click=edit.reset, key="explain_whatif_reset")
    st.caption(
        "Listed by the size of their credit for this class on the unedited row (see “Which "
        "features drive it” below; equal credits, e.g. all 0: the features that differ most "
        "from the baseline first). Change a value and every chart on the page follows: the "
        "row is then explained as a new query (every training row counts)."
    )
if not np.isfinite(edit.x).all():
    st.warning("Every edited feature needs a finite number.")
    st.stop()
view = views.explain(rows, row, edit.x, start, original)
st.caption(view.truth)
logit_k = view.ic.logits[k]
if panel:
    fig = plots.waterfall(  # the model's cut drawn, as on the page below
        view.waterfall, title=f"{view.what}: logit of {name_k} = {logit_k:.3f}", cut=view.cut
    )
    panel_waterfall(panel, fig, what=view.what, name=name_k, logit=logit_k)
bars = plots.probability_bars(
    view.proba, ds.class_names, threshold=view.cuts, true_classes=np.flatnonzero(rows.Y[row])
)
st.plotly_chart(bars, key="probabilities")

st.subheader("The three models on this row")
st.dataframe(
    view.models.style.format({view.score: "{:.3f}"}, na_rep="–"),
    hide_index=True,
    width="stretch",
    key="explain_models",
)
st.caption(
    "SBLR and SparseSBLR: the posterior πₖ; SML: its score for the class (a rank, not a "
    "probability). Same γ for all three."
)

st.subheader(view.why)
if view.why_caption:
    st.caption(view.why_caption)
if view.keeps_none:  # a waterfall of m bars of +0 says nothing
    st.info(view.keeps_none)
else:
    fig = plots.waterfall(view.waterfall, title=f"logit of {name_k} = {logit_k:.3f}", cut=view.cut)
    st.plotly_chart(fig, key="waterfall")
    st.download_button(
        "Download waterfall (HTML)",
        lambda: plots.figure_html(  # made when clicked
            fig,
            context(ds, s, with_lam=rows.spec.l1)
            | {"model": rows.name, "row": row, "class": name_k},
        ),
        file_name=views.file_name(rows, row, suffix=".html"),
        mime="text/html",
    )

st.subheader(f"Which features drive the logit of “{label_k}”")
with st.expander("How are features credited?"):
    st.markdown(views.CREDITS)
st.radio(
    "Compare this row with",
    list(start.choices),
    format_func=start.choices.get,
    horizontal=True,
    key="explain_baseline",
    help="The baseline x′: where the walk starts. Credits answer “why this logit rather "
    "than the baseline's?”",
)
if start.caption:
    st.caption(start.caption)
if view.no_credit:
    st.info(view.no_credit)
else:
    title = f"{rows.name}: features behind the logit of {name_k}"
    st.plotly_chart(plots.attribution_waterfall(view.fa, title=title), key="feature_waterfall")
if view.logit_line:
    st.markdown(view.logit_line)
if view.small_gap:
    st.info(view.small_gap)
st.caption(view.credits_sum)
st.dataframe(view.top, hide_index=True, width="stretch", key="explain_top_features")
st.caption(
    "The three models on the same row and baseline: the features with the largest credit "
    "(signed: + raises the class's logit or evidence, − lowers it)."
)
st.subheader(f"Which features matter for “{label_k}” overall")
if view.keeps_none:
    st.caption(
        f"{rows.name} keeps no class for “{label_k}” at this λ: no feature moves its logit, "
        "so there is nothing to rank."
    )
else:
    with st.spinner("Crediting the features of a sample of rows…"):
        importance = class_importance(ds, s.spec_for(rows.name), k)
    title = f"{rows.name}: which features matter for {name_k} overall"
    st.plotly_chart(
        plots.feature_importance_bars(importance, title=title), key="feature_importance"
    )
    st.caption(views.importance_caption(importance))
st.download_button(
    "Download feature credits (CSV)",
    lambda: to_csv_bytes(
        views.credits_file(view, rows, row, start.choices[baseline_choice]), index=False
    ),
    file_name=views.file_name(rows, row, "features", suffix=".csv"),
    mime="text/csv",
)
