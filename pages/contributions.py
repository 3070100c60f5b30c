"""Class contributions: β_t^k (standardized β̃ by default) against co-occurrence with class k."""

import streamlit as st

from pages import common
from sblr.interpret import class_affinity, contribution_table, rank_correlation

ds, s, key = common.page_context(__file__)
k = s.k

st.title(f"Class contributions to “{common.esc(ds.class_names[k])}”")
with st.expander("What am I looking at?"):
    st.markdown(
        "For the class k chosen in the sidebar, one row per class t: how many rows carry both "
        "k and t (co-occurrence) and the weight each model gives to t's evidence, sorted by "
        "co-occurrence. This is the table of the paper's “Pacific Wren” discussion: classes that "
        "rarely occur with k tend to get small weights, and SparseSBLR sets many of them to "
        "exactly zero. The rank correlation measures that tendency (|weight| against "
        "co-occurrence, class k itself left out). By default the weights are the standardized "
        "β̃ₜᵏ = βₜᵏ · sd(f̄ₜ), the change of k's logit per standard deviation of t's evidence "
        "(population sd over the training rows), which can be compared across classes; raw β "
        "are not, since each evidence column has its own spread."
    )
    st.latex(
        r"C_{kt}=\#\{i: y_{ik}=y_{it}=1\},\qquad "
        r"\tilde\beta_t^k=\beta_t^k\operatorname{sd}(\bar f_t),\qquad "
        r"\rho=\operatorname{Spearman}\big(|\tilde\beta_t^k|,\ C_{kt}\big)_{t\neq k}"
    )

multiclass = ds.task == "multiclass"
if multiclass:
    st.info(
        "Multi-class data: every row has exactly one class, so no two classes ever co-occur. "
        "The table compares the weights with a relation that exists here instead: the **mean "
        "evidence of class t over the rows of class k**, A_kt (how similar, on average, k's "
        "rows are to t's rows; leave-one-out). A large A_kt means the two classes are easily "
        "confused, so t's evidence carries information about k.",
        icon="ℹ️",
    )
    st.latex(r"A_{kt}=\frac{1}{|D_k|}\sum_{x_i\in D_k}\bar f_t(x_i)")
related = "mean evidence on k's rows" if multiclass else "cooccurrence"
related_label = "mean evidence of t on k's rows" if multiclass else "co-occurrence"
standardized = common.beta_view("contributions")
models = {
    "SBLR beta": common.cached_fit(ds, key, "SBLR", s.gamma, s.lam),
    "SparseSBLR beta": common.cached_fit(ds, key, "SparseSBLR", s.gamma, s.lam),
}
F = common.training_evidence(ds, key, s.gamma)
Y = ds.label_matrix()
table = contribution_table(
    models,
    Y,
    k,
    class_names=ds.class_names,
    evidence=F,
    relation=class_affinity(Y, F) if multiclass else None,
    relation_name=related if multiclass else None,
)
# shown: one weight column per model, named with the symbol of the chosen view
sym = "β̃" if standardized else "β"
shown = {(name + "_std" if standardized else name): name.replace("beta", sym) for name in models}
view = table[["class", related, *shown]].rename(columns=shown)
view.attrs.update(table.attrs)
cols = st.columns(2)
for col, name in zip(cols, shown.values(), strict=True):
    rho = rank_correlation(view, name, target=k)
    col.metric(
        f"Spearman(|{name}|, {related_label})",
        "n/a" if rho != rho else f"{rho:.2f}",
        help=f"Over the {ds.n_classes - 1} classes t ≠ k; ties share ranks.",
    )
st.dataframe(
    view.style.format({n: "{:.3g}" for n in [*shown.values(), related] if n != "cooccurrence"}),
    width="stretch",
    hide_index=True,
)
st.download_button(
    "Download table (CSV)",
    common.to_csv_bytes(table, index=False),
    file_name=common.safe_filename(ds.name, "contributions", ds.class_names[k], suffix=".csv"),
    mime="text/csv",
    help="Both weights for each model: beta (raw β) and beta_std (β̃ = β · evidence_sd).",
)
