"""Coefficients β: SparseSBLR and SBLR, one above the other (standardized β̃ by default), and
sparsity."""

import pandas as pd
import streamlit as st

from pages._shared.cache import (
    cached_fit,
    diagnostics,
    shared_figure,
    sparse_diagnostics,
    training_evidence,
)
from pages._shared.formatting import (
    LOG_GRID,
    context,
    context_name,
    esc_md,
    fmt_value,
    to_csv_bytes,
)
from pages._shared.long_jobs import N_RESAMPLES, stability_with_progress, stored_stability
from pages._shared.state import (
    beta_view,
    beta_view_choice,
    classes_shown,
    name_columns,
    page_context,
)
from sblr import plots
from sblr.interpret import (
    cluster_order,
    cooccurrence,
    evidence_sd,
    frequent_classes,
    sparsity_summary,
    standardized_coef,
    top_classes,
)

ds, s, key = page_context(__file__)

st.title("Coefficients β")
with st.expander("What am I looking at?"):
    st.markdown(
        "Row k is the logistic model of class k; column t is the weight βₜᵏ it gives to the "
        "evidence of class t. A large positive βₜᵏ: rows similar to class t make class k more "
        "likely; negative: less likely; **exactly zero** (SparseSBLR): class t's evidence is "
        "left out of class k's model, because it is unrelated to k or because another "
        "class's evidence already carries the same information (the Class contributions page "
        "tells which). Both models are fitted on all rows with the sidebar's γ "
        "(SparseSBLR also with its λ). On the planted sample data, thunder's row should lean on "
        "rain's column (thunder only happens with rain), birdsong's on daylight's, and the noise "
        "label's column should be zero in SparseSBLR."
    )
    st.latex(r"\log\frac{\pi_k}{1-\pi_k}=\beta_0^k+\sum_{t=1}^m\beta_t^k\,\bar f_t(x)")
    st.markdown(
        "Raw βₜᵏ depend on how much class t's evidence varies (a column that barely moves gets "
        "a huge β), so by default the page shows the **standardized** β̃ₜᵏ: the change of class "
        "k's logit when class t's evidence moves by one standard deviation (population sd over "
        "the training rows' leave-one-out evidence). β̃ are comparable across classes, γ and "
        "data sets; they are the coefficients of the same model fitted on standardized evidence."
    )
    st.latex(r"\tilde\beta_t^k=\beta_t^k\cdot\operatorname{sd}(\bar f_t)")

sblr_model = cached_fit(ds, s.spec_for("SBLR"))
sparse_model = cached_fit(ds, s.spec_for("SparseSBLR"))
sd = evidence_sd(training_evidence(ds, s.gamma))
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
sparse_name = f"SparseSBLR, λ = {fmt_value(s.lam)}"
# SparseSBLR first: the readable model, and the one the sidebar's λ moves, on the first screen
raw = {sparse_name: sparse_model.coef_, "SBLR": sblr_model.coef_}
std = {name: standardized_coef(c, sd=sd) for name, c in raw.items()}
shown = std if standardized else raw
m = ds.n_classes


def _identifiability_note():
    """One sentence on whether β can be read one by one, the numbers (VIFs, names) in an
    expander (the paragraph of both pushed the β heatmap's reading down: issue #46, item 7)."""
    lam_text = fmt_value(s.lam)
    st.warning(
        f"**SBLR's coefficients cannot be read one by one here; SparseSBLR's can at λ = "
        f"{lam_text}**: the evidence each class keeps is not collinear."
        if kept.readable
        else f"**Neither SBLR's nor SparseSBLR's coefficients can be read one by one at λ = "
        f"{lam_text}**: SparseSBLR still keeps collinear evidence for {kept.unreadable.size} "
        f"of {m} classes. Raise λ until the classes keep less.",
        icon=":material/warning:",
    )
    with st.expander("Why: the conditioning of the evidence"):
        st.markdown(
            " ".join(esc_md(x) for x in diag.sentences(ds.class_names))
            + " Many different β then fit the data equally well, so single SBLR coefficients "
            "(even their signs) are not identifiable; SparseSBLR's are where the evidence "
            "columns it keeps are not collinear."
        )
        st.markdown(esc_md(kept.sentence(lam_text) + " " + kept.details(ds.class_names)).strip())


diag = diagnostics(ds, s.gamma)
kept = sparse_diagnostics(ds, s.spec_for("SparseSBLR"))
# Neither model's β can be read: said before the heatmap; only SBLR's: after it, so the
# heatmap stays in the upper half of a 1024×768 screen (tests/test_browser.py)
if not kept.readable:
    _identifiability_note()

if kept.readable:
    classes = classes_shown(
        ds,
        prefix="beta",
        what="SparseSBLR's top N by |β̃|" if standardized else "SparseSBLR's top N by |β|",
        # ranked by what can be read: SparseSBLR's links (SBLR's dense β is not identifiable
        # with many classes and filled the top 30 with classes SparseSBLR leaves out), SBLR's
        # only where SparseSBLR ties (all zero); the sidebar's class is always among them
        rank=lambda n: top_classes(shown[sparse_name], n, include=[s.k], tiebreak=shown["SBLR"]),
        help="Classes ranked by SparseSBLR's largest |coefficient| in their row or column "
        "(their own weight left out; SBLR's orders the classes SparseSBLR leaves at 0), always "
        f"with the sidebar's class. Up to {plots.MAX_TICK_LABELS} classes the chart names "
        "every row and column. The stability heatmap below shows the same classes.",
    )
else:  # β that cannot be read cannot rank either: a step of λ reshuffled the top N
    classes = classes_shown(
        ds,
        prefix="beta",
        what="the N most frequent",
        rank=lambda n: frequent_classes(ds.label_matrix(), n, include=[s.k]),
        help="Classes ranked by how many rows carry them (SparseSBLR's β cannot be read one by "
        "one at this λ, so they do not rank), always with the sidebar's class. Up to "
        f"{plots.MAX_TICK_LABELS} classes the chart names every row and column. The stability "
        "heatmap below shows the same classes.",
    )
if clustered and classes is not None and kept.readable:  # β that cannot be read: no links
    classes = [int(t) for t in cluster_order(shown[sparse_name], classes)]
C = cooccurrence(ds.label_matrix())
# one figure for every session showing the same β (a class on the lesson): built once
fig = shared_figure(
    (
        "beta",
        ds.fingerprint,
        str(s.gamma),
        float(s.lam),
        standardized,
        signed,
        shared_scale,
        tuple(int(c) for c in classes) if classes is not None else None,  # in their order
    ),
    lambda: plots.beta_heatmaps(
        shown,
        ds.class_names,
        cooccurrence=C,
        signed=signed,
        raw=raw if standardized else None,
        lams={sparse_name: s.lam},
        shared_scale=shared_scale,
        classes=classes,
    ),
)
st.plotly_chart(fig, key="beta_heatmaps")
if kept.readable and diag.unreliable:
    _identifiability_note()
if sparse_model.approx_ is not None:
    st.caption(
        f"Fitted on approximate evidence (Nyström, D = {sparse_model.n_components}): "
        f"{ds.n_samples:,} rows is past the exact method's size limit."
    )

col1, col2 = st.columns(2)
# Downloads are made when clicked (a callable): on many classes the files take longer to
# write than the rest of the page, and most runs (a λ step) never download them.
col1.download_button(
    "Download β heatmaps (HTML)",
    lambda: plots.figure_html(
        fig, context(ds, s, with_lam=True) | {"model": "SBLR and SparseSBLR"}
    ),
    file_name=context_name(ds, s.spec_for("SparseSBLR"), "beta", suffix=".html"),
    mime="text/html",
)
table = pd.concat(
    {
        (name, kind): pd.DataFrame(c, index=ds.class_names, columns=ds.class_names)
        for name in raw
        for kind, c in (("beta", raw[name]), ("beta_std", std[name]))
    },
    names=["model", "coefficient", "target class k"],
)
col2.download_button(
    "Download β and β̃ (CSV)",
    lambda: to_csv_bytes(table),
    file_name=context_name(ds, s.spec_for("SparseSBLR"), "beta", suffix=".csv"),
    mime="text/csv",
    help="Rows: model, coefficient (beta = raw β, beta_std = β̃ = β · sd of the evidence "
    "column), target class k; columns: evidence class t.",
)

st.subheader("Which classes' evidence does SparseSBLR leave out?")
summary = sparsity_summary(sparse_model.coef_, ds.class_names)
n_zero = int(summary.n_zero.sum())
if n_zero == m * m:
    where = (
        "lower λ in the sidebar to let classes in"
        if s.lam > 10 ** min(LOG_GRID)
        else "λ is at its smallest: at this γ the evidence varies too little between rows for "
        "any class to enter; try another γ"
    )
    advice = f"no class's evidence enters any model; {where}."
else:
    advice = "raise λ in the sidebar for more zeros, lower it for fewer."
st.caption(
    f"{n_zero} of {m * m} SparseSBLR coefficients are exactly zero at "
    f"λ = {fmt_value(s.lam)}: "
    f"{advice} A zero means unrelated OR redundant "
    "(another class's evidence carries the same information): the Class contributions page "
    "reads each zero of the sidebar's class."
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
    k = s.k
    freq = result.selection_frequency[k]
    order = sorted(range(m), key=lambda t: -freq[t])
    used = [t for t in order if freq[t] > 0]
    st.markdown(f"**For “{esc_md(ds.class_names[k])}”** (the sidebar's class k):")
    for t in used[:8]:
        st.markdown("- " + esc_md(result.sentence(k, t, ds.class_names)))
    if not used:
        lam_text = fmt_value(s.lam)
        st.markdown(f"- no class's evidence is used for it in any resample at λ = {lam_text}.")
    st.dataframe(
        pd.DataFrame(
            {
                "evidence class t": [ds.class_names[t] for t in order],
                "β ≠ 0 in (share of resamples)": freq[order],
                f"β̃ {result.level:.0%} interval, low": result.lower[k, order],
                "high": result.upper[k, order],
            }
        ).style.format(
            {
                "β ≠ 0 in (share of resamples)": "{:.0%}",
                "high": "{:.3g}",
                f"β̃ {result.level:.0%} interval, low": "{:.3g}",
            }
        ),
        hide_index=True,
        width="stretch",
        key="stability_table",
        column_config=name_columns("evidence class t"),
    )
