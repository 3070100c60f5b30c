"""Coefficients β: SparseSBLR and SBLR, one above the other (standardized β̃ by default), and
sparsity."""

import streamlit as st

from pages._shared.formatting import context, to_csv_bytes
from pages._shared.long_jobs import (
    N_RESAMPLES,
    offer_fit,
    stability_with_progress,
    stored_stability,
)
from pages._shared.state import (
    beta_view,
    beta_view_choice,
    classes_shown,
    name_columns,
    page_context,
)
from pages._shared.views import coefficients as views
from sblr import plots
from sblr.registry import SPARSE_SBLR

ds, s, key = page_context(__file__)

st.title("Coefficients β")
with st.expander("What am I looking at?"):
    for kind, text in views.INTRO:
        getattr(st, kind)(text)

# the display choices in one closed expander, its label saying what is shown: open, they
# filled the first screen at 1024×768 and the heatmap, the page's reason to exist, began at its
# bottom edge (issue #38 row 12)
display = st.expander(
    "Display: "
    + ("standardized β̃" if beta_view_choice("coefficients") else "raw β")
    + (
        ", signed colours"
        if st.session_state.get("beta_colouring", "signed").startswith("signed")
        else ", |β| colours"
    )
    + (", one colour scale" if st.session_state.get("beta_shared_scale") else "")
)
with display:
    standardized = beta_view("coefficients")
    # one under the other: side by side, a narrow window cut the toggle's label
    signed = st.radio(
        "Colouring",
        ["signed β (diverging)", "|β| (as in the paper)"],
        horizontal=True,
        key="beta_colouring",
    ).startswith("signed")
    shared_scale = st.toggle(
        "One colour scale for both panels",
        key="beta_shared_scale",
        help="Off: each panel has its own scale and colour bar, so SparseSBLR's small β stay "
        "visible beside SBLR's large ones.",
    )
    clustered = ds.n_classes > plots.MAX_TICK_LABELS and st.toggle(
        "Related classes together",
        value=True,
        key="beta_clustered",
        help="On: the classes shown are ordered by clustering SparseSBLR's links |βₜᵏ| + "
        "|βₖᵗ|, so classes that use each other's evidence sit side by side (classes without "
        "a link last), while its β can be read. Off: in the data's class order.",
    )
view = views.coefficients(ds, s, standardized)


def _identifiability_note():
    """One sentence on whether β can be read one by one, the numbers (VIFs, names) in an
    expander (the paragraph of both pushed the β heatmap's reading down: issue #46, item 7)."""
    st.warning(view.note, icon=":material/warning:")
    with st.expander("Why: the conditioning of the evidence"):
        for paragraph in view.why:
            st.markdown(paragraph)


# Neither model's β can be read: said before the heatmap; only SBLR's: after it, so the
# heatmap stays in the upper half of a 1024×768 screen (tests/test_browser.py)
if not view.readable:
    _identifiability_note()
classes = classes_shown(
    ds,
    prefix="beta",
    what=view.rank_what,
    rank=lambda n: views.ranked(ds, view, n, s.k),  # the sidebar's class always among them
    help=view.rank_help,
)
if clustered:
    classes = view.ordered(classes)
fig = views.beta_figure(ds, s, view, (signed, shared_scale, classes))
st.plotly_chart(fig, key="beta_heatmaps")
if not view.beside.shown:  # SBLR's fit is past the budget of one done without asking
    offer_fit(ds, view.beside, SPARSE_SBLR.label, key="beta_fit_beside")
if view.readable and view.unreliable:
    _identifiability_note()
if view.approx:
    st.caption(view.approx)

col1, col2 = st.columns(2)
# Downloads are made when clicked (a callable): on many classes the files take longer to
# write than the rest of the page, and most runs (a λ step) never download them.
col1.download_button(
    "Download β heatmaps (HTML)",
    lambda: plots.figure_html(fig, context(ds, s, with_lam=True) | {"model": view.models}),
    file_name=views.download_name(ds, s, ".html"),
    mime="text/html",
)
col2.download_button(
    "Download β and β̃ (CSV)",
    lambda: to_csv_bytes(view.table),
    file_name=views.download_name(ds, s, ".csv"),
    mime="text/csv",
    help="Rows: model, coefficient (beta = raw β, beta_std = β̃ = β · sd of the evidence "
    "column), target class k; columns: evidence class t.",
)

st.subheader("Which classes' evidence does SparseSBLR leave out?")
st.caption(view.sparsity)
st.dataframe(
    view.summary,
    width="stretch",
    hide_index=True,
    column_config=name_columns("target class k"),
)

st.subheader("How sure is each β? (bootstrap stability)")
st.caption(
    f"Refits SparseSBLR's logistic layer on {N_RESAMPLES} bootstrap resamples of the rows "
    "(the evidence is computed once, each fit warm-starts from the fit on all rows) and counts "
    "how often each β is non-zero; with the 90% interval of β̃ over the resamples."
)
result = stored_stability(ds, s.gamma, s.lam)
if result is None:
    button_slot = st.empty()  # the button goes once clicked: the result takes its place
    if button_slot.button(f"Estimate stability ({N_RESAMPLES} resamples)", key="stability_run"):
        button_slot.empty()
        result = stability_with_progress(ds, s.gamma, s.lam)
if result is not None:
    st.plotly_chart(
        plots.selection_frequency_heatmap(
            result.selection_frequency,
            ds.class_names,
            n_resamples=result.n_resamples,
            classes=classes,  # the β heatmaps' classes: one rule for every matrix here
        ),
        key="selection_frequency",
        width="content",  # the figure's own width: its colour bar beside the square matrix
    )
    stable = views.stability(ds, s, result)
    st.markdown(stable.heading)
    for line in stable.lines:
        st.markdown(line)
    st.dataframe(
        stable.table.style.format(stable.formats),
        hide_index=True,
        width="stretch",
        key="stability_table",
        column_config=name_columns("evidence class t"),
    )
