"""Coefficients β: SBLR and SparseSBLR side by side on one colour scale, and sparsity."""

import pandas as pd
import streamlit as st

from pages import common
from sblr import plots
from sblr.interpret import cooccurrence, sparsity_summary

ds, s, key = common.page_context(__file__)

st.title("Coefficients β")
with st.expander("What am I looking at?"):
    st.markdown(
        "Row k is the logistic model of class k; column t is the weight βₜᵏ it gives to the "
        "evidence of class t. A large positive βₜᵏ: rows similar to class t make class k more "
        "likely; negative: less likely; **exactly zero** (SparseSBLR): class t's evidence is "
        "irrelevant to class k. Both models are fitted on all rows with the sidebar's γ "
        "(SparseSBLR also with its λ). On the planted sample data, thunder's row should lean on "
        "rain's column (thunder only happens with rain), birdsong's on daylight's, and the noise "
        "label's column should be zero in SparseSBLR."
    )
    st.latex(r"\log\frac{\pi_k}{1-\pi_k}=\beta_0^k+\sum_{t=1}^m\beta_t^k\,\bar f_t(x)")

sblr_model = common.cached_fit(ds, key, "SBLR", s.gamma, s.lam)
sparse_model = common.cached_fit(ds, key, "SparseSBLR", s.gamma, s.lam)
signed = st.radio(
    "Colouring",
    ["signed β (diverging)", "|β| (as in the paper)"],
    horizontal=True,
    key="beta_colouring",
).startswith("signed")
C = cooccurrence(ds.label_matrix())
coefs = {"SBLR": sblr_model.coef_, f"SparseSBLR, λ = {s.lam:.3g}": sparse_model.coef_}
fig = plots.beta_heatmaps(coefs, ds.class_names, cooccurrence=C, signed=signed)
st.plotly_chart(fig, key="beta_heatmaps")
if sparse_model.approx_ is not None:
    st.caption(
        f"Fitted on approximate evidence (Nyström, D = {sparse_model.n_components}): "
        f"{ds.n_samples:,} rows is past the exact method's size limit."
    )

col1, col2 = st.columns(2)
col1.download_button(
    "Download β heatmaps (HTML)",
    plots.figure_html(fig),
    file_name=common.safe_filename(ds.name, "beta", suffix=".html"),
    mime="text/html",
)
table = pd.concat(
    {
        name: pd.DataFrame(c, index=ds.class_names, columns=ds.class_names)
        for name, c in coefs.items()
    },
    names=["model", "target class k"],
)
col2.download_button(
    "Download β (CSV)",
    common.to_csv_bytes(table),
    file_name=common.safe_filename(ds.name, "beta", suffix=".csv"),
    mime="text/csv",
)

st.subheader("Which classes does SparseSBLR find irrelevant?")
summary = sparsity_summary(sparse_model.coef_, ds.class_names)
m = ds.n_classes
st.caption(
    f"{int(summary.n_zero.sum())} of {m * m} SparseSBLR coefficients are exactly zero at "
    f"λ = {s.lam:.3g}; raise λ in the sidebar for more."
)
st.dataframe(
    summary.rename(
        columns={
            "class": "target class k",
            "n_zero": "β = 0",
            "n_nonzero": "β ≠ 0",
            "irrelevant": "classes whose evidence is ignored",
        }
    ),
    width="stretch",
    hide_index=True,
)
