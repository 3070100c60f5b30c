"""Class contributions: the paper's claim about β_t^k, tested on the data, and what a zero means."""

import streamlit as st

from pages._shared.formatting import esc_md, to_csv_bytes
from pages._shared.long_jobs import offer_fit
from pages._shared.state import beta_view, name_columns, page_context
from pages._shared.views import contributions as views
from sblr.registry import SPARSE_SBLR

ds, s, key = page_context(__file__)

st.title(f"Class contributions to “{esc_md(ds.class_names[s.k])}”")
with st.expander("What am I looking at?"):
    st.markdown(views.INTRO)
    st.latex(views.INTRO_LATEX)

standardized = beta_view("contributions")
with st.spinner("Fitting the models on all rows…"):
    view = views.contributions(ds, s, standardized)
if view.multiclass:
    st.info(views.MULTICLASS, icon=":material/info:")
    st.latex(views.MULTICLASS_LATEX)

st.subheader("The claim, tested on this data")
st.markdown(view.hypothesis)
# one row of metrics per model: four in a row cut their labels to "SparseSBL…" in a narrow window
cells = [
    col for i in range(0, len(view.verdicts), view.per_row) for col in st.columns(view.per_row)
]
for col, v in zip(cells, view.verdicts, strict=True):
    col.metric(
        v.label, v.value, delta=v.verdict, delta_color=v.colour, delta_arrow="off", help=v.help
    )
for v in view.verdicts:
    st.markdown(v.line)
if view.sblr_unreliable:
    st.warning(views.UNRELIABLE, icon=":material/warning:")
if not view.beside.shown:  # SBLR's fit is past the budget of one done without asking
    offer_fit(ds, view.beside, SPARSE_SBLR.label, key="contributions_fit_beside")
st.caption(view.caption)

st.subheader("What a zero means")
for paragraph in view.zeros:
    st.markdown(paragraph)
if view.zeros_caption:
    st.caption(view.zeros_caption)

if not view.stability_shown:
    st.caption(views.NO_STABILITY)
st.dataframe(
    view.table.style.format(view.formats, na_rep="–"),
    width="stretch",
    hide_index=True,
    column_config=name_columns("class"),
)
st.download_button(
    "Download table (CSV)",
    lambda: to_csv_bytes(view.download, index=False),  # made when clicked
    file_name=view.file_name,
    mime="text/csv",
    help="Both weights for each model: beta (raw β) and beta_std (β̃ = β · evidence_sd); the "
    "reading of each SparseSBLR zero with its numbers.",
)
