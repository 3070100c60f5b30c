"""Explain a prediction: probabilities for every class and the waterfall of one logit."""

import numpy as np
import pandas as pd
import streamlit as st

from pages._shared.cache import (
    attribution,
    cached_fit,
    class_importance,
    feature_inputs_cached,
    sml_without_row,
    training_evidence,
)
from pages._shared.formatting import (
    context,
    context_name,
    dense_row,
    esc_md,
    fmt_value,
    to_csv_bytes,
)
from pages._shared.lesson import panel_slot, panel_waterfall
from pages._shared.questions import RowQuestion, Spec
from pages._shared.state import MODEL_NAMES, page_context
from sblr import plots
from sblr.attribution import nearest_contrast
from sblr.decision import Decision
from sblr.interpret import evidence_sd, instance_contributions, select_rows

ds, s, key = page_context(__file__)
#: Logits closer than this (row and baseline) are called "almost the same": the credits
#: then split a change of less than a tenth of a logit (planted row 0: 0.07).
SMALL_LOGIT_GAP = 0.1


def _sigmoid(z):
    return float(1.0 / (1.0 + np.exp(-np.clip(z, -700, 700))))


# the model explained: the sidebar's, or SparseSBLR when it learns no β (SML)
spec = s.spec if s.spec.learns_beta else Spec.of("SparseSBLR", s.gamma, s.lam)
model_name = spec.model

st.title("Explain a prediction")
with st.expander("What am I looking at?"):
    st.markdown(
        "Pick a row (or edit its feature values). The bars show the posterior πₖ of every class; "
        "a class is predicted when πₖ reaches the model's cut, fitted on its training rows "
        "(multi-label: the dashed line), or when it is the largest "
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
if not s.spec.learns_beta:
    st.info(
        f"{s.model} has no coefficients to explain; showing SparseSBLR with the sidebar's γ and λ."
    )

model = cached_fit(ds, s.spec_for(model_name), decided=True)
F_train = training_evidence(ds, s.gamma)
# in-sample predictions from the leave-one-out evidence (each row without itself)
y_pred = model.predict_from_evidence(F_train)
Y = ds.label_matrix()  # once a run: a copy of n × m for many labels
# multi-class rows as class codes (positions in class_names), sblr's one class coding
y_true = Y if ds.task == "multilabel" else ds.class_codes()
y_pred = y_pred if ds.task == "multilabel" else ds.codes_of(y_pred)
k = s.k
name_k = esc_md(ds.class_names[k])  # for Markdown (labels, captions, radio options)
pred_k = y_pred[:, k] == 1 if ds.task == "multilabel" else y_pred == k
true_k = y_true[:, k] == 1 if ds.task == "multilabel" else y_true == k
n_fn, n_fp = int((true_k & ~pred_k).sum()), int((pred_k & ~true_k).sum())
n_any = len(select_rows(y_true, y_pred, which="misclassified"))
plain_k = ds.class_names[k]  # a select box shows its options as plain text: not escaped
FILTERS = {
    "all": "all rows",
    "false_negative": f"“{plain_k}” missed ({n_fn:,})",
    "false_positive": f"“{plain_k}” wrongly given ({n_fp:,})",
    "misclassified": (
        f"any label wrong ({n_any:,})" if ds.task == "multilabel" else f"misclassified ({n_any:,})"
    ),
    "true": f"true class includes “{plain_k}”",
    "predicted": f"predicted as “{plain_k}”",
}
pick, more = st.columns([3, 1], vertical_alignment="bottom")
# a select box: six radio lines with a long class name took half of a 1024x768 screen
which = pick.selectbox(
    "Rows to pick from",
    list(FILTERS),
    format_func=FILTERS.get,
    key="explain_which",
)
matching = select_rows(y_true, y_pred, which=which, k=k)


def _random_row():
    if len(matching):
        rng = np.random.default_rng()
        st.session_state["explain_row"] = int(rng.choice(matching))


more.button(
    "Random row",
    key="explain_random",
    on_click=_random_row,
    disabled=not len(matching),
    help="Rows are predicted with their leave-one-out evidence (without their own similarity). "
    f"“Missed” and “wrongly given” are {model_name}'s errors for the sidebar's class only.",
)
shown = ", ".join(str(i) for i in matching[:12]) + (" …" if len(matching) > 12 else "")
st.caption(f"{len(matching):,} of {ds.n_samples:,} rows: {shown or 'none'}")
if not 0 <= st.session_state.get("explain_row", 0) < ds.n_samples:  # other data before
    st.session_state["explain_row"] = 0
st.session_state.setdefault("explain_row", 0)
if st.session_state.get("_explain_rows_of") != which:
    # a new choice of rows: show one of them (the row shown may not be among them)
    st.session_state["_explain_rows_of"] = which
    if len(matching) and st.session_state["explain_row"] not in set(matching.tolist()):
        st.session_state["explain_row"] = int(matching[0])
row = st.number_input(
    f"Row number (0 … {ds.n_samples - 1})",
    min_value=0,
    max_value=ds.n_samples - 1,
    step=1,
    key="explain_row",
)
x_row = dense_row(ds.X, row)
truth = Y[row]
row_pred_k = bool(pred_k[row])
BASELINES = {
    "contrast": (
        f"the most similar training row {model_name} does not give “{name_k}”"
        if row_pred_k
        else f"the most similar training row {model_name} gives “{name_k}”"
    ),
    "mean": "the average training row",
    "zero": "an all-zero row",
}
baseline_choice = st.session_state.get("explain_baseline", "contrast")
contrast, contrast_by_labels = None, False
if baseline_choice == "contrast":
    # the other side of the MODEL's decision for k: the credits then say why the model
    # decides differently here (by the labels, the row and its baseline were often decided
    # alike, and the credits explained almost nothing)
    contrast = nearest_contrast(model, x_row, k, among=pred_k != row_pred_k, exclude=row)
    if contrast is None:  # the model decides every training row alike: the labels' side
        contrast_by_labels = True
        contrast = nearest_contrast(model, x_row, k, member=bool(truth[k]), exclude=row)
baseline = {"mean": None, "zero": np.zeros(ds.n_features)}.get(baseline_choice)
if contrast is not None:
    baseline = dense_row(ds.X, contrast)


def _all_alike_reason(fitted, F, k, every):
    """Why a model decides every training row alike for class k: its probabilities all on one
    side of the cut."""
    proba = fitted.proba_from_evidence(F)
    proba_k = proba[:, k] if proba.ndim == 2 and proba.shape[1] > k else None
    chosen = Decision.of(fitted)
    if proba_k is None or chosen.kind == "argmax":
        return "the class is its argmax for every row" if every else "never its argmax"
    lo, hi, at = float(proba_k.min()), float(proba_k.max()), chosen.cut(k)
    return (
        f"every π from {lo:.3g} to {hi:.3g} is {'at or above' if every else 'below'} its cut "
        f"{at:.3g}"
    )


def attributions(fitted, fitted_id, x, *, leave_out=None):
    """Integrated gradients of class k's output (logit; SML: evidence) for the row x, in a
    job slot and cached (``fitted_id`` names the model: kind, γ, λ)."""
    return attribution(fitted, fitted_id, ds, RowQuestion(x, baseline, k, leave_out))


def model_id(name, row_left_out=None):
    other = Spec.of(name, s.gamma, s.lam)  # λ only where the model takes one
    return (name, s.gamma, other.lam, row_left_out)


# the unedited row's attributions order the features offered for editing
original_fa = attributions(model, model_id(model_name), x_row, leave_out=row)
MAX_LISTED = min(100, ds.n_features)
if not 1 <= st.session_state.get("explain_n_edit", 1) <= MAX_LISTED:  # other data before
    st.session_state["explain_n_edit"] = min(10, MAX_LISTED)
st.session_state.setdefault("explain_n_edit", min(10, MAX_LISTED))
names = ds.feature_names
prefix = f"explain_whatif_{key}_{row}_"
inputs = feature_inputs_cached(ds)
x = x_row.copy()
done_groups = set()


def whatif_input(col, i):
    """Feature i's what-if widget in ``col``, its value written into x (a nominal column's
    one-hot group once, as one choice)."""
    name = str(names[i])
    g = int(inputs.group_of[i])
    if g >= 0:  # a nominal column's one-hot group: one choice among its values
        if g in done_groups:
            return
        done_groups.add(g)
        attr, members = inputs.groups[g]
        values = [str(names[c]).split("=", 1)[1] for c in members]
        current = int(np.argmax(x_row[members]))
        choice = col.selectbox(
            esc_md(attr, label=True),  # the label is its accessible name too
            range(len(members)),
            index=current,
            format_func=lambda v, values=values: values[v],
            key=prefix + "group_" + str(g),
        )
        x[members] = 0.0
        x[members[choice]] = 1.0
    elif inputs.binary[i]:  # a 0/1 flag: yes or no, never 0.5
        flag = col.checkbox(esc_md(name, label=True), value=bool(x_row[i]), key=prefix + str(i))
        x[i] = float(flag)
    else:
        lo, hi = inputs.low[i], inputs.high[i]
        x[i] = col.number_input(
            f"{esc_md(name, label=True)} (training {lo:.4g} … {hi:.4g})",
            value=float(x_row[i]),
            format="%g",
            key=prefix + str(i),
        )


# lesson step 7: the features that matter most are edited in the lesson panel, beside its
# waterfall of this very row (the rest stay in the expander below)
panel = panel_slot("waterfall")
in_panel = [int(i) for i in original_fa.top(min(3, MAX_LISTED))] if panel else []
if panel:
    with panel.inputs:
        for col, i in zip(st.columns(len(in_panel)), in_panel, strict=True):
            whatif_input(col, i)
with st.expander("What if? Edit the values of the features that matter most"):
    n_list = st.number_input(
        "Features listed (largest credit for this class first)",
        min_value=1,
        max_value=MAX_LISTED,
        key="explain_n_edit",
    )
    listed = [int(i) for i in original_fa.top(n_list) if int(i) not in in_panel]
    cols = st.columns(2)
    for j, i in enumerate(listed):
        whatif_input(cols[j % 2], i)

    def _reset():
        for i in [*in_panel, *listed]:
            st.session_state.pop(prefix + str(i), None)
        for g in done_groups:
            st.session_state.pop(prefix + "group_" + str(g), None)

    far = [i for i in inputs.outside(x) if np.isfinite(x[i])]
    if far:
        shown_far = ", ".join(esc_md(str(names[i])) for i in far[:5])
        more_far = f" and {len(far) - 5} more" if len(far) > 5 else ""
        st.warning(
            f"Outside the training range: {shown_far}{more_far}. The model has seen no row "
            "there; its evidence fades to 0 away from the data, so read the answer as “far "
            "from everything”, not as a measurement."
        )
    st.button("Back to the row's own values", on_click=_reset, key="explain_whatif_reset")
    st.caption(
        "Listed by the size of their credit for this class on the unedited row (see “Which "
        "features drive it” below; equal credits, e.g. all 0: the features that differ most "
        "from the baseline first). Change a value and every chart on the page follows: the "
        "row is then explained as a new query (every training row counts)."
    )
if not np.isfinite(x).all():
    st.warning("Every edited feature needs a finite number.")
    st.stop()
is_edited = not np.array_equal(x, x_row)
st.caption(
    "True classes of this row: "
    + (", ".join(esc_md(n) for n, t in zip(ds.class_names, truth, strict=True) if t) or "none")
    + (
        " · features edited: explained as a new query (every training row counts)"
        if is_edited
        else " · explained with its leave-one-out evidence, as the model saw it in training"
    )
)

if is_edited:
    evidence = model.evidence(x[None, :])[0]
else:
    evidence = F_train[row]
ic = instance_contributions(model, evidence=evidence)
# The bars are the terms β·f̄, whichever view of β: the hover gives both β and β̃ (a
# "β̃ / raw β" choice here changed nothing a user could see).
table = ic.waterfall(k, ds.class_names, evidence_sd=evidence_sd(F_train))
chosen = Decision.of(model)
cut = chosen.cut(k) if chosen.kind != "argmax" else None
if panel:
    what = f"row {row}" + (" (edited)" if is_edited else "")
    fig = plots.waterfall(  # the model's cut drawn, as on the page below
        table, title=f"{what}: logit of {ds.class_names[k]} = {ic.logits[k]:.3f}", cut=cut
    )
    panel_waterfall(panel, fig, what=what, name=ds.class_names[k], logit=ic.logits[k])
proba = model.proba_from_evidence(evidence[None, :])[0]
st.plotly_chart(
    plots.probability_bars(
        proba,
        ds.class_names,
        threshold=chosen.cuts if chosen.kind != "argmax" else None,
        true_classes=np.flatnonzero(truth),
    ),
    key="probabilities",
)

st.subheader("The three models on this row")
side = []
by_model = {}  # each model's feature attributions for class k on this row
for other in MODEL_NAMES:
    fitted = model if other == model_name else cached_fit(ds, s.spec_for(other), decided=True)
    other_spec = Spec.of(other, s.gamma, s.lam)
    if not other_spec.learns_beta:  # SML: from the rows, not from the cached evidence
        if not is_edited:  # a training row: SML without it, as the others see it
            fitted = sml_without_row(ds, s.gamma, row)
        P, pred = fitted.predict_proba(x[None, :]), fitted.predict(x[None, :])[0]
        by_model[other] = attributions(fitted, model_id(other, None if is_edited else row), x)
    else:
        e = evidence[None, :]
        P, pred = fitted.proba_from_evidence(e), fitted.predict_from_evidence(e)[0]
        if other == model_name and not is_edited:
            by_model[other] = original_fa
        else:
            by_model[other] = attributions(
                fitted, model_id(other), x, leave_out=None if is_edited else row
            )
    if ds.task == "multilabel":
        names = [ds.class_names[t] for t in np.flatnonzero(pred)]
    else:
        names = [ds.class_names[int(ds.codes_of([pred])[0])]]
    side.append(
        {
            "model": other_spec.label,
            "predicted classes": ", ".join(names) or "none",
            f"score of “{ds.class_names[k]}”": float(P[0, k]),
        }
    )
st.dataframe(
    pd.DataFrame(side).style.format({f"score of “{ds.class_names[k]}”": "{:.3f}"}),
    hide_index=True,
    width="stretch",
    key="explain_models",
)
st.caption(
    "SBLR and SparseSBLR: the posterior πₖ; SML: its score for the class (a rank, not a "
    "probability). Same γ for all three."
)

if ds.task == "multilabel":
    st.subheader(f"Why π = {ic.proba[k]:.3f} for “{esc_md(ds.class_names[k])}”")
else:
    st.subheader(f"Why “{esc_md(ds.class_names[k])}” gets {proba[k]:.3f}")
    st.caption(
        f"Multi-class: each class's own model gives σ(logit) ({ic.proba[k]:.3f} for this "
        f"class); the bars and the table divide these by their sum, so they add up to 1 "
        f"({proba[k]:.3f} here). The class with the largest logit is predicted. The waterfall "
        "splits the logit."
    )
if not model.coef_[k].any():  # a waterfall of m bars of +0 says nothing
    st.info(
        f"{model_name} keeps no class for “{name_k}” at λ = {fmt_value(s.lam)}: every "
        f"β of its logit is 0, so the logit is the intercept β₀ = {ic.logits[k]:.3f} for every "
        "row and no class's evidence moves it. Lower λ in the sidebar, or choose SBLR, to see "
        "which classes push it up or down."
    )
else:
    fig = plots.waterfall(
        table, title=f"logit of {ds.class_names[k]} = {ic.logits[k]:.3f}", cut=cut
    )
    st.plotly_chart(fig, key="waterfall")
    st.download_button(
        "Download waterfall (HTML)",
        lambda: plots.figure_html(  # made when clicked
            fig,
            context(ds, s, with_lam=spec.l1)
            | {"model": model_name, "row": row, "class": ds.class_names[k]},
        ),
        file_name=context_name(
            ds, s.spec_for(model_name), f"row{row}", ds.class_names[k], suffix=".html"
        ),
        mime="text/html",
    )

st.subheader(f"Which features drive the logit of “{esc_md(ds.class_names[k])}”")
with st.expander("How are features credited?"):
    st.markdown(
        "**Integrated gradients.** Walk in a straight line from a baseline row x′ to this "
        "row x and add up, for every feature, how much the logit rises or falls while that "
        "feature changes: aᵢ = (xᵢ − x′ᵢ) · ∫₀¹ ∂logitₖ/∂xᵢ (x′ + α(x − x′)) dα. The "
        "credits add up exactly to logitₖ(x) − logitₖ(x′), and a feature with the same value "
        "in both rows gets 0. Through the RBF evidence the gradient is known in closed form, "
        "and the integral along the path is taken in closed form (through erf): the numbers "
        "are exact for this model up to rounding, not a sampled estimate, and cost one "
        "prediction whatever values you type. A training row keeps its own similarity out "
        "along the whole path, as in training. SML has no logit: its credits split its "
        "evidence fₖ for the class, the score it ranks classes by."
    )
st.radio(
    "Compare this row with",
    list(BASELINES),
    format_func=BASELINES.get,
    horizontal=True,
    key="explain_baseline",
    help="The baseline x′: where the walk starts. Credits answer “why this logit rather "
    "than the baseline's?”",
)
if baseline_choice == "contrast" and contrast is None:
    st.caption(
        f"No training row is on the other side for “{name_k}”: compared with the average row."
    )
elif contrast is not None:
    other_classes = [ds.class_names[t] for t in np.flatnonzero(Y[contrast])]
    shown_classes = ", ".join(esc_md(n) for n in other_classes[:8]) or "none"
    if len(other_classes) > 8:
        shown_classes += f" and {len(other_classes) - 8} more"
    why = (
        f"{model_name} gives “{name_k}” to {'every' if pred_k.all() else 'no'} training row "
        f"({_all_alike_reason(model, F_train, k, bool(pred_k.all()))}), so this is the "
        f"nearest row whose true classes {'lack' if truth[k] else 'include'} it"
        if contrast_by_labels
        else f"the nearest row that {model_name} decides the other way for “{name_k}”"
    )
    st.caption(
        f"Baseline: training row {contrast} (true classes: {shown_classes}), {why}, on the "
        "scaled features as the RBF kernel measures distance."
    )
fa = by_model[model_name]
if not model.coef_[k].any():
    st.info(
        f"{model_name} keeps no class for “{name_k}” at λ = {fmt_value(s.lam)}: its "
        "logit is the intercept for every row, so no feature moves it and every credit is 0. "
        "Lower λ in the sidebar, or choose SBLR, to see features at work."
    )
elif not fa.attributions.any():
    st.info(
        "Every credit is 0: the logit is the same for this row and the baseline all along "
        "the path (the evidence is 0 there: every training row is far away at this γ)."
    )
else:
    fig_features = plots.attribution_waterfall(
        fa, title=f"{model_name}: features behind the logit of {ds.class_names[k]}"
    )
    st.plotly_chart(fig_features, key="feature_waterfall")
base = fa.output_baseline
if fa.quantity == "logit":
    st.markdown(
        f"This row: logit {fa.output:.3f} (π = {_sigmoid(fa.output):.3f}) · baseline x′: logit "
        f"{base:.3f} (π = {_sigmoid(base):.3f})"
    )
if abs(fa.output - base) < SMALL_LOGIT_GAP and model.coef_[k].any():
    st.info(
        f"The row and its baseline get almost the same logit (they differ by "
        f"{abs(fa.output - base):.3f}), so every credit is small: the features explain little "
        "here. Compare with another row (the average row, or a row the model decides the "
        "other way) for a larger contrast."
    )
base_text = f"({base:.4g})" if base < 0 else f"{base:.4g}"  # "5.41 − (−1.93)", not "− -1.93"
st.caption(
    f"The {ds.n_features:,} credits add up to {fa.attributions.sum():.4g}; logit(x) − "
    f"logit(x′) = {fa.output:.4g} − {base_text} = {fa.output - base:.4g} "
    f"(rounding error {abs(fa.gap):.1e})."
)
RANKS = ["largest", "2nd", "3rd", "4th", "5th"]
# one column per model, one row per rank: with a row per model, five long feature names side
# by side ran off the right edge of the page
columns = {"rank": RANKS}
for other, other_fa in by_model.items():
    top = other_fa.table(len(RANKS))
    # credits below the display's precision (three digits of the largest) are 0 to a reader,
    # not "+3.29e-10": they are not listed
    largest = float(np.abs(other_fa.attributions).max(initial=0.0))
    top = top[top["attribution"].abs() > 5e-4 * largest]
    cells = {
        RANKS[i]: f"{name} ({a:+.3g})"
        for i, (name, a) in enumerate(zip(top["feature"], top["attribution"], strict=True))
    }
    cells = cells or {RANKS[0]: "none: no feature moves it"}
    credited = "logit" if Spec.of(other, s.gamma).learns_beta else "evidence"
    columns[f"{other} ({credited})"] = [cells.get(rank, "") for rank in RANKS]
st.dataframe(pd.DataFrame(columns), hide_index=True, width="stretch", key="explain_top_features")
st.caption(
    "The three models on the same row and baseline: the features with the largest credit "
    "(signed: + raises the class's logit or evidence, − lowers it)."
)
st.subheader(f"Which features matter for “{esc_md(ds.class_names[k])}” overall")
if model.coef_[k].any():
    with st.spinner("Crediting the features of a sample of rows…"):
        importance = class_importance(ds, s.spec_for(model_name), k)
    st.plotly_chart(
        plots.feature_importance_bars(
            importance, title=f"{model_name}: which features matter for {ds.class_names[k]} overall"
        ),
        key="feature_importance",
    )
    st.caption(
        f"The same credits as above, for {importance.attrs['n_rows']:,} rows (a seeded sample, "
        "each walked from the average row, training rows without their own similarity), "
        "averaged as |credit|: a feature that moves the logit up for some rows and down for "
        "others still counts. The mark at a bar's end is the sign of the mean credit: + raises "
        "the class on average, − lowers it, ± both about as much."
    )
else:
    st.caption(
        f"{model_name} keeps no class for “{name_k}” at this λ: no feature moves its logit, "
        "so there is nothing to rank."
    )
st.download_button(
    "Download feature credits (CSV)",
    lambda: to_csv_bytes(
        fa.table().assign(
            row=row,
            edited=is_edited,
            **{
                "class": ds.class_names[k],
                "model": model_name,
                "compared with": BASELINES[baseline_choice],
            },
        ),
        index=False,
    ),
    file_name=context_name(
        ds, s.spec_for(model_name), f"row{row}", ds.class_names[k], "features", suffix=".csv"
    ),
    mime="text/csv",
)
