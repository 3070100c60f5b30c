"""Evidence space: the rows drawn by two classes' evidence, and where the models decide."""

import numpy as np
import streamlit as st

from pages._shared.cache import cached_fit, training_evidence
from pages._shared.data import dataset_key
from pages._shared.formatting import esc_md, fmt_value
from pages._shared.state import page_context
from sblr import plots
from sblr.decision import Decision
from sblr.interpret import decision_line, predicted_share, standardized_coef
from sblr.registry import SPARSE_SBLR

ds, s, key = page_context(__file__)
k = s.k
name_k = ds.class_names[k]

st.title(f"Evidence space of “{esc_md(name_k)}”")
with st.expander("What am I looking at? (the paper's idea in one picture)"):
    st.markdown(
        "The paper's models never look at the raw features directly. Every row is first "
        "turned into its **evidence**: for each class t, f̄ₜ(x) is the mean RBF similarity of "
        "the row to the training rows of class t. A row of class k tends to be close to other "
        "rows of k, so its f̄ₖ is large. Here every row is a point with two of these evidences "
        "as coordinates, red when it carries the sidebar's class k.\n\n"
        "- **SML** decides from the evidence alone, summed rather than averaged: fₜ(x) = "
        "|Dₜ|·f̄ₜ(x), the mean times the class's size, so large classes are favoured. The class "
        "with the largest sum wins (multi-class), or the ξ(x) classes with the largest "
        "(multi-label).\n"
        "- **SBLR / SparseSBLR** learn, for class k, a logistic regression on ALL evidences: "
        "the solid line is where SparseSBLR's π_k = 0.5, with the evidences not drawn held at "
        "their mean. When the second axis is a class whose evidence helps (β > 0) or hurts "
        "(β < 0) class k, the line tilts: this is how the evidence of other classes enters "
        "the decision for k, which SML cannot do.\n\n"
        "Rows are drawn with their leave-one-out evidence (without their own similarity), as "
        "the models saw them in training."
    )

sparse = cached_fit(ds, s.spec_for(SPARSE_SBLR), decided=True)
F = training_evidence(ds, s.gamma)
beta_std = standardized_coef(sparse, F)[k]
# default second axis: the other class whose evidence counts most for k in SparseSBLR
others = [t for t in range(ds.n_classes) if t != k]
default_t2 = max(others, key=lambda t: abs(beta_std[t])) if others else k
c1, c2 = st.columns(2)
t1 = c1.selectbox(
    "x axis: evidence of",
    range(ds.n_classes),
    index=k,
    format_func=lambda t: ds.class_names[t],
    key=f"evidence_t1:{dataset_key()}:{k}",  # keyed by k: a new class, its own axes
)
t2 = c2.selectbox(
    "y axis: evidence of",
    range(ds.n_classes),
    index=default_t2,
    format_func=lambda t: ds.class_names[t],
    key=f"evidence_t2:{dataset_key()}:{k}",
    help="By default the class whose evidence has the largest |β̃| in k's SparseSBLR model.",
)
member = ds.label_matrix()[:, k].astype(bool)
cut_k = Decision.of(sparse).cut(k)
lines = {
    f"SparseSBLR π = {cut_k:.2f} (λ = {fmt_value(s.lam)})": decision_line(
        sparse, k=k, t1=t1, t2=t2, F=F, cut=min(max(cut_k, 1e-12), 1 - 1e-12)
    )
}
if not ds.is_multilabel and k in (t1, t2) and t1 != t2:
    # SML: k wins where its evidence beats every other; the classes not drawn at their mean
    mean = F.mean(axis=0)
    rest = max((mean[t] for t in range(ds.n_classes) if t not in (t1, t2)), default=0.0)
    lo = min(F[:, t1].min(), F[:, t2].min())
    hi = max(F[:, t1].max(), F[:, t2].max())
    grid = np.linspace(max(lo, rest), hi, 50)
    lines["SML: largest evidence wins"] = (
        np.r_[np.full(10, rest), grid],
        np.r_[np.linspace(lo, rest, 10), grid],
    )
fig = plots.evidence_scatter(F, t1, t2, member, ds.class_names, k=k, lines=lines)
st.plotly_chart(fig, key="evidence_space")
b1, b2 = beta_std[t1], beta_std[t2]
sparse_name = next(iter(lines))  # SparseSBLR's line (the SML line may follow)
sparse_trace = [t for t in fig.data if t.name.startswith(sparse_name)]
if sparse_trace and sparse_trace[0].name.endswith("(outside this view)"):
    given = predicted_share(sparse, F, k)
    if given == 0:
        why = (
            f"SparseSBLR gives “{esc_md(name_k)}” to no training row at λ = "
            f"{fmt_value(s.lam)}: π_k < {cut_k:.2f} wherever the rows are, so the line "
            "where it would switch lies far outside the picture. Lower λ (or choose Tune on the "
            "Model page) to see it."
        )
    elif given == 1:
        why = (
            f"SparseSBLR gives “{esc_md(name_k)}” to every training row at this λ: the line "
            "where it would switch lies far outside the picture."
        )
    else:
        why = (
            "SparseSBLR's line lies far outside the picture in this plane: with the other "
            "evidences at their mean, these two never switch the decision for "
            f"“{esc_md(name_k)}”; other classes' evidence decides it. Try another y axis."
        )
    st.info(why)
st.caption(
    f"SparseSBLR for “{esc_md(name_k)}”: β̃ = {b1:.3g} on "
    f"“{esc_md(ds.class_names[t1])}”, "
    f"{b2:.3g} on “{esc_md(ds.class_names[t2])}” (per sd of the evidence). "
    + (
        "Neither axis enters k's model at this λ: π_k does not change across the picture, "
        "so there is no line."
        if lines[next(iter(lines))] is None
        else "The line may leave the picture where the other evidences alone already decide."
    )
    + (
        " SML on multi-label data predicts the ξ(x) classes with the largest summed evidence: "
        "a rule on all evidences at once, not a line in two of them."
        if ds.is_multilabel
        else ""
    )
)
