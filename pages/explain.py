"""Explain a prediction: probabilities for every class and the waterfall of one logit."""

import numpy as np
import pandas as pd
import streamlit as st

from pages import common
from sblr import plots
from sblr.interpret import evidence_sd, instance_contributions

ds, s, key = common.page_context(__file__)
model_name = s.model if s.model != "SML" else "SparseSBLR"

st.title("Explain a prediction")
with st.expander("What am I looking at?"):
    st.markdown(
        "Pick a row (or edit its feature values). The bars show the posterior πₖ of every class; "
        "a class is predicted when πₖ ≥ 0.5 (multi-label) or when it is the largest "
        "(multi-class). The waterfall splits the logit of the sidebar's class k into the "
        "intercept and one term βₜᵏ · f̄ₜ(x) per evidence class t; the terms add up to the "
        "logit. The model is fitted on all rows; an unedited row is explained with its "
        "leave-one-out evidence (without its own similarity, as in training), an edited row as a "
        "new query. Hover a bar for its standardized β̃ₜᵏ = βₜᵏ · sd(f̄ₜ), the change of the "
        "logit per standard deviation of t's evidence (population sd over the training rows): "
        "unlike β, it can be compared across classes."
    )
    st.latex(
        r"\text{logit}_k(x)=\beta_0^k+\sum_t \beta_t^k\,\bar f_t(x),\qquad"
        r"\pi_k=\frac{1}{1+e^{-\text{logit}_k(x)}}"
    )
if s.model == "SML":
    st.info("SML has no coefficients to explain; showing SparseSBLR with the sidebar's γ and λ.")

model = common.cached_fit(ds, key, model_name, s.gamma, s.lam)
row = st.number_input(
    f"Row (0 … {ds.n_samples - 1})",
    min_value=0,
    max_value=ds.n_samples - 1,
    value=0,
    step=1,
    key="explain_row",
)
x_row = common.dense_row(ds.X, row)
if ds.n_features <= common.MAX_EDIT_FEATURES:
    original = pd.DataFrame([x_row], columns=ds.feature_names)
    with st.expander("Edit the feature values of this row"):
        edited = st.data_editor(original, key=f"explain_edit_{key}_{row}", hide_index=True)
    x = edited.to_numpy(dtype=float)[0]
    if not np.isfinite(x).all():
        st.warning("Every feature needs a number; fill in the empty cells.")
        st.stop()
else:
    st.caption(
        f"This data has {ds.n_features:,} features; editing a row's values is offered for up "
        f"to {common.MAX_EDIT_FEATURES}."
    )
    x = x_row
is_edited = not np.array_equal(x, x_row)
truth = ds.label_matrix()[row]
st.caption(
    "True classes of this row: "
    + (", ".join(common.esc(n) for n, t in zip(ds.class_names, truth, strict=True) if t) or "none")
    + (
        " · features edited: explained as a new query (every training row counts)"
        if is_edited
        else " · explained with its leave-one-out evidence, as the model saw it in training"
    )
)

if is_edited:
    evidence = model.evidence(x[None, :])[0]
else:
    evidence = common.training_evidence(ds, key, s.gamma)[row]
ic = instance_contributions(model, evidence=evidence)
proba = model.proba_from_evidence(evidence[None, :])[0]
st.plotly_chart(
    plots.probability_bars(
        proba,
        ds.class_names,
        threshold=0.5 if ds.task == "multilabel" else None,
        true_classes=np.flatnonzero(truth),
    ),
    key="probabilities",
)
k = s.k
standardized = common.beta_view("explain")
sd = evidence_sd(common.training_evidence(ds, key, s.gamma)) if standardized else None
table = ic.waterfall(k, ds.class_names, evidence_sd=sd)
if ds.task == "multilabel":
    st.subheader(f"Why π = {ic.proba[k]:.3f} for “{common.esc(ds.class_names[k])}”")
else:
    st.subheader(f"Why σ(logit) = {ic.proba[k]:.3f} for “{common.esc(ds.class_names[k])}”")
    st.caption(
        f"Multi-class: the bars show each σ(logit) divided by their sum "
        f"({proba[k]:.3f} for this class); the class with the largest logit is predicted."
    )
fig = plots.waterfall(table, title=f"logit of {ds.class_names[k]} = {ic.logits[k]:.3f}")
st.plotly_chart(fig, key="waterfall")
st.download_button(
    "Download waterfall (HTML)",
    plots.figure_html(fig),
    file_name=common.safe_filename(ds.name, f"row{row}", ds.class_names[k], suffix=".html"),
    mime="text/html",
)
