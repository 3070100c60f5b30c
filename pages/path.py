"""Regularization path: every β_t^k (standardized β̃ by default) of SparseSBLR along λ."""

import numpy as np
import pandas as pd
import streamlit as st

from pages._shared.cache import cached_path, training_evidence
from pages._shared.formatting import context_name, esc_md, fmt_gamma, fmt_value
from pages._shared.questions import Spec
from pages._shared.state import beta_view, name_columns, page_context
from sblr import plots
from sblr.interpret import (
    class_affinity,
    conditional_frequency,
    cooccurrence,
    entry_lambdas,
    evidence_sd,
    rank_agreement_path,
    standardized_coef,
)
from sblr.registry import SPARSE_SBLR

ds, s, key = page_context(__file__)
k = s.k

st.title(f"Regularization path of “{esc_md(ds.class_names[k])}”")
with st.expander("What am I looking at?"):
    st.markdown(
        "SparseSBLR's coefficients βₜᵏ of the sidebar's class k, fitted on all rows for each λ "
        "of the slider's grid (10⁻⁵ … 10², warm-started from large λ to small). At large λ every "
        "coefficient is zero; as λ decreases, the evidence classes that matter most for class k "
        "enter first. The dashed line marks the sidebar's λ. By default the lines are the "
        "standardized β̃ₜᵏ = βₜᵏ · sd(f̄ₜ): the change of k's logit per standard deviation of "
        "t's evidence (population sd over the training rows), comparable across classes t."
    )
    st.latex(r"\min_{\beta_0^k,\beta^k}\ \frac1n\sum_i \ell_i + \lambda\lVert\beta^k\rVert_1")

standardized = beta_view("path")
lams, coefs_k = cached_path(ds, s.gamma, [k])
coefs_k = coefs_k[:, 0, :]
path_k = coefs_k
if standardized:
    path_k = standardized_coef(path_k, training_evidence(ds, s.gamma))
fig = plots.regularization_path(
    lams,
    path_k,
    ds.class_names,
    current_lam=s.lam,
    target_name=ds.class_names[k],
    standardized=standardized,
)
st.plotly_chart(fig, key="path")
nonzero = np.count_nonzero(coefs_k, axis=1)
entered = [
    f"{esc_md(ds.class_names[t])} (λ = {fmt_value(lam)})"
    for t, lam in entry_lambdas(lams, coefs_k).items()
]
SHOWN_ENTERING = 8  # a caption listed all 73 entering classes on 174 labels
more = len(entered) - SHOWN_ENTERING
st.caption(
    f"Non-zero coefficients: {nonzero.min()} at λ = {fmt_value(lams.max())} to "
    f"{nonzero.max()} at λ = {fmt_value(lams.min())}. First to enter (the largest λ at "
    "which each is non-zero): "
    + (", ".join(entered[:SHOWN_ENTERING]) or "none")
    + (f", and {more} more (listed below)." if more > 0 else ".")
)
if more > 0:
    with st.expander(f"All {len(entered)} classes in the order they enter"):
        st.dataframe(
            pd.DataFrame(
                {
                    "class": [ds.class_names[t] for t in entry_lambdas(lams, coefs_k)],
                    "enters at λ": [fmt_value(v) for v in entry_lambdas(lams, coefs_k).values()],
                }
            ),
            hide_index=True,
            width="stretch",
            column_config=name_columns("class"),
        )

st.subheader("Where does the paper's claim hold?")
st.markdown(
    "The claim: classes that depend more on k get larger weights |β̃ₜᵏ|. Each line is "
    "Spearman's ρ between the standardized weights of k (t ≠ k) and a dependency of k on t, "
    "at every λ of the path. Above 0 the weights lean the claim's way at that λ, near 0 they "
    "ignore the dependency, below 0 they go against it; whether a single ρ is more than chance "
    "is what the Class contributions page tests (a permutation test at the sidebar's λ). "
    "A gap means every weight is zero there."
)
F = training_evidence(ds, s.gamma)
Y = ds.label_matrix()
sd = evidence_sd(F)
if not ds.is_multilabel:
    relations = {"mean evidence of t on k's rows": class_affinity(Y, F)}
    st.caption(
        "Multi-class data: no two classes co-occur, so the dependency is the mean evidence of "
        "class t over the rows of class k (see the Class contributions page)."
    )
else:
    C = cooccurrence(Y)
    relations = {"co-occurrence": C, "P(k | t)": conditional_frequency(counts=C)}
# rank_agreement_path wants (n_lams, m, m): class k's row in place, the others unused
one = np.zeros((len(lams), ds.n_classes, ds.n_classes))
one[:, k] = coefs_k
curves = {name: rank_agreement_path(one, R, sd=sd, target=k) for name, R in relations.items()}
if st.checkbox(
    "Also show the mean over all classes k",
    key="path_mean_rho",
    help="Computes the λ path of every class (once per γ; kept for the next visit).",
):
    _, every = cached_path(ds, s.gamma, range(ds.n_classes))
    for name, R in relations.items():
        mean = rank_agreement_path(every, R, sd=sd, average=True)
        curves[f"{name} (mean over classes)"] = mean
others_nonzero = nonzero - (coefs_k[:, k] != 0)
agreement = plots.rank_agreement_figure(
    lams,
    curves,
    current_lam=s.lam,
    target_name=ds.class_names[k],
    nonzero=others_nonzero,
)
st.plotly_chart(agreement, key="path_agreement")
at = int(np.argmin(np.abs(np.log(lams) - np.log(s.lam))))
parts = []
for name, rho in curves.items():
    if name.endswith("(mean over classes)"):
        continue
    here = "undefined" if np.isnan(rho[at]) else f"{rho[at]:.2f}"
    if np.all(np.isnan(rho)):
        parts.append(f"with {name}: undefined at every λ")
        continue
    best = int(np.nanargmax(rho))
    parts.append(
        f"with {name}: ρ = {here} at the sidebar's λ; highest {rho[best]:.2f} at "
        f"λ = {fmt_value(lams[best])}"
    )
st.caption(esc_md("; ".join(parts) + "."))
st.download_button(
    "Download path (HTML)",
    lambda: plots.figure_html(  # made when clicked
        fig,
        {
            "data": ds.name,
            "model": SPARSE_SBLR.label,
            "gamma": fmt_gamma(s.gamma),
            "lambda": "the slider's grid",
            "class": ds.class_names[k],
        },
    ),
    file_name=context_name(
        ds, Spec.of(SPARSE_SBLR, s.gamma), "path", ds.class_names[k], suffix=".html"
    ),
    mime="text/html",
)
