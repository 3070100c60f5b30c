"""Class contributions: the paper's claim about β_t^k, tested on the data, and what a zero means."""

import pandas as pd
import streamlit as st

from pages._shared.cache import cached_fit, diagnostics, training_evidence
from pages._shared.formatting import (
    context_name,
    esc_md,
    fmt_corr,
    fmt_gamma,
    fmt_share,
    fmt_value,
    to_csv_bytes,
)
from pages._shared.long_jobs import stored_stability
from pages._shared.questions import Spec
from pages._shared.state import beta_view, name_columns, page_context
from sblr.interpret import (
    check_claim,
    class_affinity,
    contribution_table,
    family_threshold,
    readings_at,
    zero_readings,
)

ds, s, key = page_context(__file__)
k = s.k
name_k = ds.class_names[k]

st.title(f"Class contributions to “{esc_md(name_k)}”")
with st.expander("What am I looking at?"):
    st.markdown(
        "Each model's logit for the class k chosen in the sidebar is a weighted sum of every "
        "class t's evidence. The weight βₜᵏ says how much t's evidence moves k. By default the "
        "weights are the standardized β̃ₜᵏ = βₜᵏ · sd(f̄ₜ): the change of k's logit per standard "
        "deviation of t's evidence (population sd over the training rows). They can be compared "
        "across classes; raw β cannot, since each evidence column has its own spread.\n\n"
        "**How the claim is tested.** The weights are ranked against a dependency of k on t "
        "with Spearman's ρ (class k itself left out). The p-value is the share of 9,999 random "
        "shufflings of the weights that give a |ρ| at least as large: a small p means the "
        "agreement is unlikely to be chance. With few classes nothing can be confirmed, and "
        "that is what the p-value then says.\n\n"
        "**Two dependencies.** Co-occurrence C_kt counts the rows with both labels; it grows "
        "with the size of t, so a frequent class 'co-occurs' with everything. P(k | t) = "
        "C_kt / C_tt, the share of t's rows that also carry k, removes that. For a fixed k it "
        "ranks the classes exactly as lift and pointwise mutual information do."
    )
    st.latex(
        r"\tilde\beta_t^k=\beta_t^k\operatorname{sd}(\bar f_t),\qquad "
        r"C_{kt}=\#\{i: y_{ik}=y_{it}=1\},\qquad P(k\mid t)=\frac{C_{kt}}{C_{tt}},\qquad "
        r"\rho=\operatorname{Spearman}\big(|\tilde\beta_t^k|,\ D_{kt}\big)_{t\neq k}"
    )

multiclass = ds.task == "multiclass"
standardized = beta_view("contributions")
with st.spinner("Fitting SBLR and SparseSBLR on all rows…"):
    models = {
        "SBLR beta": cached_fit(ds, s.spec_for("SBLR")),
        "SparseSBLR beta": cached_fit(ds, s.spec_for("SparseSBLR")),
    }
F = training_evidence(ds, s.gamma)
Y = ds.label_matrix()
if multiclass:
    st.info(
        "Multi-class data: every row has exactly one class, so no two classes ever co-occur "
        "and the paper's claim cannot be stated with co-occurrence. The dependency used here "
        "is the **mean evidence of class t over the rows of class k**, A_kt (how similar, on "
        "average, k's rows are to t's rows; leave-one-out). A large A_kt means the two classes "
        "are easily confused, so t's evidence carries information about k.",
        icon=":material/info:",
    )
    st.latex(r"A_{kt}=\frac{1}{|D_k|}\sum_{x_i\in D_k}\bar f_t(x_i)")
    related = "mean evidence on k's rows"
    measures = {related: "mean evidence of t on k's rows"}
else:
    related = "cooccurrence"
    measures = {"cooccurrence": "co-occurrence", "p_k_given_t": "P(k | t)"}
table = contribution_table(
    models,
    Y,
    k,
    class_names=ds.class_names,
    evidence=F,
    relation=class_affinity(Y, F) if multiclass else None,
    relation_name=related if multiclass else None,
    dependency=not multiclass,
)
sym = "β̃" if standardized else "β"
weight = {name: (name + "_std" if standardized else name) for name in models}
shown = {weight[name]: name.replace("beta", sym) for name in models}

st.subheader("The claim, tested on this data")
if multiclass:
    st.markdown(
        "**Hypothesis** (the paper's “Pacific Wren” discussion, stated for classes that cannot "
        f"co-occur): the classes whose rows are most like the rows of “{esc_md(name_k)}” "
        "(large A_kt) get the largest weights in its logit; classes unlike them get small "
        "weights, and SparseSBLR sets them to exactly zero."
    )
else:
    st.markdown(
        "**Hypothesis** (the paper's “Pacific Wren” discussion): the classes that occur "
        f"together with “{esc_md(name_k)}” get the largest weights in its logit; classes "
        "that rarely occur with it get small weights, and SparseSBLR sets them to exactly zero."
    )
checks = []
for name in models:
    for column, label in measures.items():
        c = check_claim(
            table[weight[name]].to_numpy(), table[column].to_numpy(), target=table.index.get_loc(k)
        )
        checks.append((name.replace(" beta", ""), label, c))
# one row of metrics per model: four in a row cut their labels to "SparseSBL…" in a narrow window
per_row = len(measures)
cells = [col for i in range(0, len(checks), per_row) for col in st.columns(per_row)]
unreliable = diagnostics(ds, s.gamma).unreliable
for col, (model_name, label, c) in zip(cells, checks, strict=True):
    # no green or red for SBLR where its single coefficients are not identifiable (below)
    grey = unreliable and not Spec.of(model_name, s.gamma, s.lam).l1  # dense β
    col.metric(
        f"{model_name}: ρ(|{sym}|, {label})",
        "n/a" if c.verdict in ("undefined", "untestable") else f"{c.rho:.2f}",
        delta=c.verdict,
        delta_color="off"
        if grey
        else {"supported": "normal", "contradicted": "inverse"}.get(c.verdict, "off"),
        delta_arrow="off",
        help=c.sentence(label),
    )
for model_name, label, c in checks:
    st.markdown(f"- **{esc_md(model_name)}, {esc_md(label)}**: " + esc_md(c.sentence(label)))
if unreliable:
    st.warning(
        "**Read SBLR's verdicts with care here:** at this γ SBLR's single coefficients are not "
        "identifiable (the Coefficients page says why), so its ranking of the classes, and "
        "any agreement of it with the data, may change with the solver's start. SparseSBLR's "
        "are the ones to read.",
        icon=":material/warning:",
    )
st.caption(
    f"At γ = {fmt_gamma(s.gamma)}, λ = {fmt_value(s.lam)} (λ applies to SparseSBLR). "
    "The path page shows how ρ changes along λ. Each verdict is one test at the 5% level: "
    "browsing many classes, expect about one test in twenty to come out “supported” or "
    "“contradicted” by chance alone."
)

sparse = models["SparseSBLR beta"]
zeros = zero_readings(sparse.coef_[k], F, Y, k, class_names=ds.class_names)
st.subheader("What a zero means")
if zeros.empty:
    st.markdown(
        f"SparseSBLR uses every class's evidence for “{esc_md(name_k)}” at λ = "
        f"{fmt_value(s.lam)}: there is no zero to read. Raise λ to see some."
    )
else:
    counts = zeros["reading"].value_counts()
    tau = zeros.attrs["threshold"]
    st.markdown(
        f"SparseSBLR sets {len(zeros)} of the {ds.n_classes - 1} other classes' weights to "
        "exactly zero. A zero does not always mean *unrelated*. Each is read from two "
        "correlations with k's label over the rows: r, of t's evidence on its own, and r | S, "
        "of what is left of t's evidence once the classes the model does use (S) are "
        f"accounted for; a correlation counts when it reaches τ = 2/√n = {tau:.3f}.\n"
        f"- **irrelevant** ({counts.get('irrelevant', 0)}): no detectable relation to k, "
        "on its own or beyond S;\n"
        f"- **redundant** ({counts.get('redundant', 0)}): related to k on its own, but S "
        "already carries that information (a correlated class took its place); t may well "
        "matter for k;\n"
        f"- **weak** ({counts.get('weak', 0)}): it still tells something beyond S, but not "
        "enough to pay the L1 price at this λ (a smaller λ may let it in; see the path page)."
    )
    if len(zeros) > 1 and len(counts) == 1:
        st.markdown(
            f"All {len(zeros)} zeros get the same reading, “{counts.index[0]}”: here the "
            "reading tells more about λ and the data as a whole than about any one class"
            + (
                " (every class still says something about k beyond S: λ is cutting classes "
                "the data support; a smaller λ, or Tune, keeps more)."
                if counts.index[0] == "weak"
                else "."
            )
        )
    if len(zeros) > 1:
        tau_all = family_threshold(len(F), len(zeros))
        together = readings_at(zeros, tau_all).value_counts()  # the same correlations
        st.caption(
            f"{len(zeros)} zeros are {len(zeros)} tests read at once: at τ = {tau:.3f} about "
            "one in twenty crosses it by chance. Held to 5% all together (Bonferroni, "
            f"τ = {tau_all:.3f}): {together.get('weak', 0)} weak, "
            f"{together.get('redundant', 0)} redundant, {together.get('irrelevant', 0)} "
            "irrelevant."
        )


view = table[["class", *measures, *shown]].rename(columns=shown)
view = view.rename(columns={"cooccurrence": "co-occurrence", "p_k_given_t": "P(k | t)"})
view["SparseSBLR zero"] = pd.Series(
    [
        f"{r} (r = {fmt_corr(v)}, r | S = {fmt_corr(p)})"
        for r, v, p in zip(zeros["reading"], zeros["r_with_k"], zeros["partial_r"], strict=True)
    ],
    index=zeros.index,
    dtype="string",
).reindex(view.index, fill_value="")
result = stored_stability(ds, s.gamma, s.lam)
if result is not None:
    view["selected in (resamples)"] = result.selection_frequency[k][view.index]
    view[f"β̃ {result.level:.0%} low"] = result.lower[k][view.index]
    view[f"β̃ {result.level:.0%} high"] = result.upper[k][view.index]
else:
    st.caption(
        "Run “Estimate stability” on the Coefficients page (same γ and λ) to add each weight's "
        "selection frequency and interval to this table."
    )
numeric = [c for c in view.columns if c not in ("class", "SparseSBLR zero", "co-occurrence")]
fmt = {c: "{:.3g}" for c in numeric}
if "selected in (resamples)" in view.columns:
    fmt["selected in (resamples)"] = "{:.0%}"
if "P(k | t)" in view.columns:
    fmt["P(k | t)"] = fmt_share
st.dataframe(
    view.style.format(fmt, na_rep="–"),
    width="stretch",
    hide_index=True,
    column_config=name_columns("class"),
)
download = table.join(zeros.drop(columns="class"))
st.download_button(
    "Download table (CSV)",
    lambda: to_csv_bytes(download, index=False),  # made when clicked
    file_name=context_name(ds, s.spec_for("SparseSBLR"), "contributions", name_k, suffix=".csv"),
    mime="text/csv",
    help="Both weights for each model: beta (raw β) and beta_std (β̃ = β · evidence_sd); the "
    "reading of each SparseSBLR zero with its numbers.",
)
