"""Class contributions: β_t^k of SBLR and SparseSBLR against co-occurrence with class k."""

import streamlit as st

from pages import common
from sblr.interpret import contribution_table, rank_correlation

ds, s, key = common.page_context(__file__)
k = s.k

st.title(f"Class contributions to “{common.esc(ds.class_names[k])}”")
with st.expander("What am I looking at?"):
    st.markdown(
        "For the class k chosen in the sidebar, one row per class t: how many rows carry both "
        "k and t (co-occurrence) and the weight βₜᵏ each model gives to t's evidence, sorted by "
        "co-occurrence. This is the table of the paper's “Pacific Wren” discussion: classes that "
        "rarely occur with k tend to get small weights, and SparseSBLR sets many of them to "
        "exactly zero. The rank correlation measures that tendency (|β| against co-occurrence, "
        "class k itself left out)."
    )
    st.latex(
        r"C_{kt}=\#\{i: y_{ik}=y_{it}=1\},\qquad "
        r"\rho=\operatorname{Spearman}\big(|\beta_t^k|,\ C_{kt}\big)_{t\neq k}"
    )

models = {
    "SBLR β": common.cached_fit(ds, key, "SBLR", s.gamma, s.lam),
    "SparseSBLR β": common.cached_fit(ds, key, "SparseSBLR", s.gamma, s.lam),
}
table = contribution_table(models, ds.label_matrix(), k, class_names=ds.class_names)
cols = st.columns(2)
for col, name in zip(cols, models, strict=True):
    rho = rank_correlation(table, name, target=k)
    col.metric(
        f"Spearman(|{name}|, co-occurrence)",
        "n/a" if rho != rho else f"{rho:.2f}",
        help=f"Over the {ds.n_classes - 1} classes t ≠ k; ties share ranks.",
    )
st.dataframe(table.style.format({n: "{:.3f}" for n in models}), width="stretch", hide_index=True)
st.download_button(
    "Download table (CSV)",
    common.to_csv_bytes(table, index=False),
    file_name=common.safe_filename(ds.name, "contributions", ds.class_names[k], suffix=".csv"),
    mime="text/csv",
)
