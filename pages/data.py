"""Data: label frequencies, label co-occurrence and a 2-D PCA view of the rows."""

import streamlit as st

from pages._shared.cache import label_sets, pca_coordinates
from pages._shared.formatting import esc_md, safe_filename, text_table
from pages._shared.state import classes_shown, page_context
from sblr import plots
from sblr.interpret import cooccurrence, frequent_classes

ds, s, key = page_context(__file__)

st.title(f"Data: {esc_md(ds.name)}")
with st.expander("What am I looking at?"):
    st.markdown(
        "**Label frequencies**: how many rows carry each class. **Co-occurrence**: the number "
        "of rows relevant to both class k and class t (the diagonal is the class size); these "
        "counts are what the paper compares the learned β with. **PCA**: the rows projected on "
        "their first two principal components (features standardized), coloured by class. "
        "**Label sets** (multi-label data): the distinct combinations of classes the rows carry."
    )
    st.latex(r"C_{kt} = \#\{\, i : y_{ik} = 1 \wedge y_{it} = 1 \,\}")

Y = ds.label_matrix()
st.plotly_chart(
    plots.label_frequency_bar(Y.sum(axis=0), ds.class_names, total=ds.n_samples), key="frequencies"
)
C = cooccurrence(Y)
classes = classes_shown(
    ds,
    prefix="cooccurrence",
    what="the N most frequent",
    rank=lambda n: frequent_classes(Y, n, include=[s.k]),
    help="Classes ranked by the number of rows they are relevant to, always with the "
    f"sidebar's class. Up to {plots.MAX_TICK_LABELS} classes the chart names every row and "
    "column.",
)
fig = plots.cooccurrence_heatmap(C, ds.class_names, classes=classes)
# the figure's own width: its colour bar beside the square matrix
st.plotly_chart(fig, key="cooccurrence", width="content")
st.download_button(
    "Download co-occurrence heatmap (HTML)",
    lambda: plots.figure_html(fig, {"data": ds.name}),  # made when clicked
    file_name=safe_filename(ds.name, "cooccurrence", suffix=".html"),
    mime="text/html",
)
if ds.is_multilabel:
    top = label_sets(ds, 10)
    cardinality = float(Y.sum(axis=1).mean())
    st.subheader("Label sets")
    st.caption(
        f"{top.attrs['n_sets']:,} distinct label sets over {ds.n_samples:,} rows, "
        f"{cardinality:.2f} labels a row on average. A row's whole set is what subset accuracy "
        "asks a model to give exactly; co-occurrence above counts only pairs. The "
        f"{len(top)} most frequent:"
    )
    st.dataframe(
        text_table(top, formats={"share": "{:.1%}"}),
        hide_index=True,
        key="label_sets",
    )
st.plotly_chart(
    plots.pca_scatter(ds.X, ds.y, class_names=ds.class_names, coordinates=pca_coordinates(ds)),
    key="pca",
)
