"""Model & metrics: evaluate the chosen model by hold-out or k-fold, and tune γ and λ."""

import numpy as np
import pandas as pd
import streamlit as st

from pages._shared.cache import (
    cached_fit,
    decision_cuts,
    evaluation,
    held_out_cuts,
    held_out_probabilities,
    lr_test_yardstick,
    lr_yardstick,
    read_like,
    test_scores,
    yardstick,
    yardstick_predicts_nothing,
)
from pages._shared.data import dataset_key, show_notes
from pages._shared.formatting import (
    context_name,
    esc_md,
    fmt_gamma,
    fmt_value,
    result_list_filename,
    text_table,
    to_csv_bytes,
)
from pages._shared.long_jobs import TUNE_SCHEMES, tune
from pages._shared.questions import Scheme, Search
from pages._shared.state import (
    name_columns,
    page_context,
    set_tuned,
    settings_from_other_data,
    show_view,
)
from sblr import DataError, metrics, plots
from sblr.decision import Decision
from sblr.tuning import PAPER_GRID

ds, s, key = page_context(__file__)
#: Evaluations kept in the session's result list.
RESULT_LIST_MAX = 50

st.title("Model & metrics")
with st.expander("What am I looking at?"):
    st.markdown(
        "The model in the sidebar is trained on the training rows and scored on rows it has "
        "not seen. For SBLR and SparseSBLR a class k is predicted when its posterior "
        "πₖ ≥ 0.5 (multi-label) or when πₖ is the largest (multi-class). The evidence of each "
        "split is computed once per γ, so moving λ only refits the logistic layer."
    )
    st.latex(
        r"\pi_k(x)=\sigma\Big(\beta_0^k+\sum_t\beta_t^k\bar f_t(x)\Big),\quad"
        r"\min_{\beta^k}\ \frac1n\sum_i \ell_i(\beta^k)+\lambda\lVert\beta^k\rVert_1"
    )
    if ds.task == "multilabel":
        st.markdown(
            "Multi-label metrics (↓ lower is better, ↑ higher is better): **Hamming loss** is the "
            "share of wrong label decisions; **ranking loss** the share of (relevant, "
            "irrelevant) label pairs ordered wrongly; **one-error** how often the top-ranked "
            "label is wrong; **coverage** how far down the ranking one must go to cover all "
            "relevant labels; **average precision** the mean precision at each relevant "
            "label. Ranking loss, one-error and average precision skip rows whose label set "
            "is empty or full."
        )

left, right = st.columns([2, 1])
SCHEMES = {
    "Hold-out split": "holdout",
    "k-fold cross-validation": "kfold",
    "Supplied test file": "test",
}
scheme_label = left.radio("Evaluation", list(SCHEMES), horizontal=True, key="eval_scheme")
scheme = SCHEMES[scheme_label]
test = None
if scheme == "test":
    upload = right.file_uploader(
        "Test file (read like the data in use)",
        type=["arff", "csv", "tsv", "data", "txt"],
        key="eval_test_upload",
        help="Columns are matched by name, nominal values coded as in the data in use, "
        "classes in its order; it needs the label columns.",
    )
    test_size, n_splits = 0.25, 5
    if upload is None:
        st.info(
            "Upload the test file that goes with the data in use (e.g. Mulan's *-test.arff): "
            "the model of the sidebar is fitted on all rows of the data in use and scored on "
            "every row of the test file."
        )
        st.stop()
    try:
        test = read_like(ds, ds.fingerprint, upload.getvalue(), upload.name)
    except DataError as exc:
        st.error(f"Could not use {esc_md(upload.name)} as a test file: {esc_md(exc)}")
        st.stop()
    if not test.has_labels:
        st.error(
            f"{esc_md(upload.name)} has none of the label columns of "
            f"{esc_md(ds.name)}: "
            "there is nothing to score. Its rows can be predicted on the Predict page."
        )
        st.stop()
    show_notes(test)
elif scheme == "holdout":
    test_size = right.select_slider(
        "Test share",
        [0.1, 0.2, 0.25, 0.3, 0.4, 0.5],
        value=0.25,
        key="eval_test_size",
        format_func=lambda v: f"{v:.0%}",
    )
    n_splits = 5
else:
    n_splits = right.select_slider("Folds k", [3, 5, 10], value=5, key="eval_folds")
    test_size = 0.25

gamma_text = fmt_gamma(s.gamma)
lam_text = f", λ = {fmt_value(s.lam)}" if s.spec.l1 else ""
other = {k: v for k, v in settings_from_other_data().items() if k == "γ" or s.spec.l1}
st.markdown(
    f"**{s.model}** with γ = {gamma_text}{lam_text} on **{esc_md(ds.name)}**"
    + "".join(f" · {k} set by {how} on other data" for k, how in other.items())
    + (" (reset in the sidebar)" if other else "")
)

if test is not None:  # fitted on every row of the data in use, scored on the test file
    fitted = cached_fit(ds, s.spec, decided=True)
    with st.spinner(f"Scoring {s.model} on the {test.n_samples:,} rows of the test file…"):
        result, y_held, P_held, yard = test_scores(ds, s.spec, test)
    cuts_held = decision_cuts(fitted, P_held)
    st.caption(
        f"Trained on all {ds.n_samples:,} rows of {esc_md(ds.name)}, scored on the "
        f"{test.n_samples:,} rows of {esc_md(test.name)}."
    )
else:
    bar = st.progress(0.0, text="Evaluating…")
    split = Scheme(scheme, test_size, n_splits)
    try:
        result = evaluation(
            ds,
            s.spec,
            split,
            progress=lambda done, total: bar.progress(done / total, text=f"Fold {done} of {total}"),
        )
    except DataError as exc:
        st.error(esc_md(exc))
        st.stop()
    finally:
        bar.empty()
    y_held, P_held = held_out_probabilities(ds, s.spec, split)
    cuts_held = held_out_cuts(ds, s.spec, split)
    yard = yardstick(ds, split)
summary = result.summary
# one split (a hold-out or the test file) has no spread and no folds to list: its std was
# "0.0000" and its one row "fold 0" (issue #46, item 13)
one_split = scheme != "kfold"
held_rows = "rows of the test file" if test is not None else "held-out rows"
with st.spinner("Fitting scikit-learn's logistic regression on the same rows (the yardstick)…"):
    lr_yard = lr_test_yardstick(ds, test) if test is not None else lr_yardstick(ds, split)
lr_summary, lr_empty = lr_yard if lr_yard is not None else (None, None)
yard_nothing = yardstick_predicts_nothing(ds)
YARD_NAME = {  # what the trivial yardstick does, per metric
    name: (
        "majority class"
        if ds.task == "multiclass"
        else "rank by frequency"
        if name in metrics.SCORE_METRICS
        else "predict nothing"
        if yard_nothing
        else "frequent labels only"
    )
    for name in summary.index
}
if ds.task == "multiclass":
    shown = list(summary.index)
else:
    # F1 first: with rare labels a model that predicts (almost) nothing still gets a small
    # Hamming loss and a fair average precision; F1 and the empty rows tell it apart
    shown = ["micro_f1", "macro_f1", None, "hamming_loss", "average_precision", "ranking_loss"]
# at most three metrics a row: five in a row cut their labels to "Hamming l…" at 800 px
cols = [col for i in range(0, len(shown), 3) for col in st.columns(3)]
for col, name in zip(cols, shown, strict=False):
    if name is None:  # rows the model gives no label at all (its own decisions)
        empty = metrics.decision_counts(y_held, P_held, cuts_held)
        truth_empty = int((np.asarray(y_held).sum(axis=1) == 0).sum())
        col.metric(
            "Rows with no label",
            f"{empty['empty_rows']:,} of {empty['rows']:,}",
            f"truth: {truth_empty:,}" + (f" · LR: {lr_empty:,}" if lr_empty is not None else ""),
            delta_color="off",
            delta_arrow="off",
            help="Test rows for which the model predicts no class at all, beside the test "
            "rows that truly have none and LR's count (scikit-learn's one-vs-rest logistic "
            "regression on the same rows). Many more than the truth: the model is close to "
            "predicting nothing, whatever its Hamming loss says.",
        )
        continue
    row = summary.loc[name]
    spread = f" ± {row['std']:.3f}" if scheme == "kfold" else ""
    label, value, beside = row["label"], f"{row['mean']:.3f}{spread}", ""
    if name == "macro_f1" and one_split and ds.task == "multilabel":
        # classes in no held-out row and never predicted count as F1 = 1 in Mulan's macro-F1
        # (0.736 above a micro-F1 of 0.715 on a small hold-out): the tile shows the classes
        # seen, Mulan's value beside it (issue #46, item 11)
        seen, n_seen = metrics.macro_f1_seen(y_held, P_held, cuts_held)
        if n_seen < ds.n_classes:
            label = f"Macro-F1 ↑ over the {n_seen} classes seen"
            value = f"{seen:.3f}" if n_seen else "–"
            beside = f"all {ds.n_classes}, unseen = 1: {row['mean']:.3f} · "
    col.metric(
        label,
        value,
        beside
        + (f"LR: {lr_summary.loc[name, 'mean']:.3f} · " if lr_summary is not None else "")
        + f"{YARD_NAME[name]}: {yard.loc[name, 'mean']:.3f}",
        delta_color="off",
        delta_arrow="off",
        help="Beside it, on the same rows: LR, scikit-learn's logistic regression on the "
        "features scaled to [-1, 1] (one-vs-rest per label, cut 0.5), the plain model one "
        "would fit instead; and a yardstick that ignores the features: "
        + (
            "always the training rows' most frequent class."
            if ds.task == "multiclass"
            else "every row gets the training frequency of each label as its score, and only "
            "labels that more than half the training rows carry are predicted."
        )
        + (f" ± is the sd over the {n_splits} folds (not a change)." if scheme == "kfold" else "")
        + (
            " Macro-F1 over the classes seen: the mean F1 of the classes that are true or "
            f"predicted in some of the {held_rows}; the others (neither) count as F1 = 1 in "
            "Mulan's macro-F1, given beside it, as are LR's and the yardstick's."
            if beside
            else ""
        ),
    )
if ds.task == "multilabel":
    with st.expander("More metrics" if one_split else "More metrics and per-fold values"):
        table = summary.assign(
            yardstick=yard["mean"], yardstick_rule=[YARD_NAME[n] for n in summary.index]
        )
        if lr_summary is not None:
            table = table.assign(LR=lr_summary["mean"].reindex(table.index))
        # an undefined value (a metric with no row to score) is "–", as the captions say,
        # never the "None" a NaN shows as in a table
        if one_split:
            table = table.drop(columns="std", errors="ignore")
        st.dataframe(text_table(table, precision=4), width="stretch", key="more_metrics")
        if not one_split:
            st.dataframe(text_table(result.per_fold, precision=4), width="stretch")
else:
    st.plotly_chart(
        plots.confusion_matrix_figure(result.confusion, ds.class_names),
        key="confusion",
        width="content",  # the figure's own width: its colour bar beside the square matrix
    )
    if not one_split:
        with st.expander("Per-fold values"):
            st.dataframe(text_table(result.per_fold, precision=4), width="stretch")
st.download_button(
    "Download metrics (CSV)",
    to_csv_bytes(summary),
    file_name=context_name(
        ds,
        s.spec,
        "metrics",
        {
            "holdout": f"holdout-{test_size:.0%}",
            "kfold": f"{n_splits}fold",
            "test": f"test-{test.name}" if test is not None else "test",
        }[scheme],
        suffix=".csv",
    ),
    mime="text/csv",
)

# Weka's result list: every evaluation of this session, side by side (a student can show how
# λ changed the scores without writing them down)
evaluation_name = {
    "holdout": f"hold-out {test_size:.0%}",
    "kfold": f"{n_splits}-fold CV",
    "test": f"test file {test.name}" if test is not None else "test file",
}[scheme]
whole_model = cached_fit(ds, s.spec, decided=True)
shown_first = [m for m in shown if m is not None and m in summary.index]  # the headline order
ordered = shown_first + [m for m in summary.index if m not in shown_first]
record = {
    "data": ds.name,
    "model": s.model,
    "γ": fmt_gamma(s.gamma),
    "γ value": float(getattr(whole_model, "gamma_", float("nan"))),  # "scale" resolved
    "λ": fmt_value(s.lam) if s.spec.l1 else "–",
    "evaluation": evaluation_name,
} | {summary.loc[m, "label"]: float(summary.loc[m, "mean"]) for m in ordered}
if ds.task == "multilabel":
    record["rows with no label"] = f"{empty['empty_rows']:,} of {empty['rows']:,}"
    record["decision"] = Decision.of(whole_model).describe()
record["_setting"] = (dataset_key(), s.model, s.gamma, s.lam)  # to restore it (hidden)
results = st.session_state.setdefault("_result_list", [])
SETTINGS = ("data", "model", "γ", "λ", "evaluation")
if not any(all(r.get(c) == record[c] for c in SETTINGS) for r in results):
    results.append(record)
    del results[:-RESULT_LIST_MAX]
with st.expander(f"Results of this session ({len(results)})"):
    listed = pd.DataFrame(results).drop(columns="_setting", errors="ignore")
    numeric = [c for c in listed.columns if c not in SETTINGS and listed[c].dtype.kind == "f"]
    st.dataframe(
        text_table(listed, formats={c: "{:.3f}" for c in numeric} | {"γ value": "{:.4g}"}),
        hide_index=True,
        width="stretch",
        key="result_list",
    )
    st.caption(
        "Every evaluation shown on this page in this session (the latest last, at most "
        f"{RESULT_LIST_MAX}); change λ, γ, the model or the evaluation and it is added."
    )
    # plain headers in the file (no arrows, no Greek): a spreadsheet's and a script's names
    plain = {label: name for name, label in metrics.METRIC_LABELS.items()}
    plain |= {"γ": "gamma", "γ value": "gamma_value", "λ": "lambda"}
    here = dataset_key()
    restorable = [i for i, r in enumerate(results) if r.get("_setting", (None,))[0] == here]
    if restorable:
        pick, go_back = st.columns([3, 1], vertical_alignment="bottom")
        chosen = pick.selectbox(
            "Restore a setting of this data",
            restorable,
            format_func=lambda i: (
                f"{i + 1}: {results[i]['model']}, γ = {results[i]['γ']}"
                + (f", λ = {results[i]['λ']}" if results[i]["λ"] != "–" else "")
                + f" ({results[i]['evaluation']})"
            ),
            key="result_restore_choice",
        )
        if go_back.button("Restore this setting", key="result_restore"):
            _, model_r, gamma_r, lam_r = results[chosen]["_setting"]
            show_view(
                "pages/model.py",
                {"model": model_r, "gamma": gamma_r, "lam": lam_r},
                source="the result list",
            )
    st.download_button(
        "Download the result list (CSV)",
        to_csv_bytes(listed.rename(columns=plain).astype(object).fillna("–"), index=False),
        file_name=result_list_filename(listed["data"]),
        mime="text/csv",
        key="result_list_download",
    )

st.subheader("Per class, and the decision threshold")
k = s.k
if ds.task == "multilabel":
    st.caption(
        "Every test row's probabilities are kept, so moving the threshold recomputes these "
        "numbers at once, without refitting. Class k is predicted when πₖ ≥ threshold"
        + ("." if s.spec.learns_beta else f" ({s.model}'s scores are ranks, not probabilities).")
    )
    whole = cached_fit(ds, s.spec, decided=True)
    whole_decision = Decision.of(whole)
    own = st.toggle(
        "Move the cut myself",
        key="own_threshold",
        help="Off: each held-out row is decided by the cuts of the model that held it out "
        "(its threshold_, fitted on its training rows' out-of-fold probabilities), as in the "
        "metrics above. On: one cut of your own for every class.",
    )
    if own:
        threshold = st.slider(
            "Decision threshold",
            min_value=0.05,
            max_value=0.95,
            value=0.5,
            step=0.05,
            key="threshold",
            help="Lower: more labels predicted (recall up, precision down), higher: fewer.",
        )
    else:
        threshold = cuts_held
        st.caption(
            f"The model's decision: {whole_decision.describe()} (fitted on all rows"
            + (
                "; each fold's model fitted its own on its training rows)."
                if not one_split
                else ")."
            )
            if whole_decision.kind == "cut"
            else f"The model's decision: {whole_decision.describe()} (π ≥ 0.5 on its scores)."
        )
    at_threshold = metrics.threshold_report(y_held, P_held, threshold)
    at_model = metrics.threshold_report(y_held, P_held, cuts_held)
    cols = st.columns(len(at_threshold))
    for col, (name, value) in zip(cols, at_threshold.items(), strict=True):
        change = value - at_model[name]
        unchanged = not own or round(change, 3) == 0  # no arrow for "+0.000"
        col.metric(
            metrics.METRIC_LABELS[name],
            f"{value:.3f}",
            None if not own else f"{change:+.3f} vs the model's cut".replace("+0.000", "±0.000"),
            delta_color="off"
            if unchanged
            else "inverse"
            if metrics.LOWER_IS_BETTER[name]
            else "normal",
            delta_arrow="off" if unchanged else "auto",
        )
    counts = metrics.decision_counts(y_held, P_held, threshold)
    if counts["empty_rows"] == counts["rows"]:
        st.warning(
            f"At this threshold {s.model} predicts no label for any of the {counts['rows']:,} "
            f"{held_rows}, so nothing is predicted (micro-F1 is 0 and precision undefined). "
            "Lower the threshold" + (", or λ (or let Tune choose it)." if s.spec.l1 else ".")
        )
    elif counts["empty_rows"]:
        st.caption(
            f"{s.model} predicts no label for {counts['empty_rows']:,} of the {counts['rows']:,} "
            f"{held_rows} at this threshold."
        )
    if counts["absent_labels"]:
        st.caption(
            f"{counts['absent_labels']} of {ds.n_classes} classes occur in none of the "
            f"{held_rows} and "
            "are never predicted: macro-F1 counts each as F1 = 1 (Mulan's convention, so "
            "micro- and macro-F1 can differ a lot; the tile at the top leaves them out); the "
            "table below leaves their F1 empty."
        )
else:
    threshold = None
    st.caption(
        "Multi-class: the predicted class is the one with the largest π, so there is no "
        "threshold to move; the curve below shows how class k alone would trade precision "
        "for recall."
    )
report = metrics.per_label_report(
    y_held, P_held, threshold=0.5 if threshold is None else threshold, class_names=ds.class_names
)
st.dataframe(
    text_table(report, formats=dict.fromkeys(("precision", "recall", "f1"), "{:.3f}")),
    width="stretch",
    hide_index=True,
    key="per_label",
    column_config=name_columns("class"),
)
truth_k = y_held[:, k] if ds.task == "multilabel" else (y_held == k)
if not truth_k.any():
    occurs = (
        y_held.sum(axis=0)
        if ds.task == "multilabel"
        else np.bincount(y_held, minlength=ds.n_classes)
    )
    best = int(np.argmax(occurs))
    st.info(
        f"No test row carries “{esc_md(ds.class_names[k])}”, so its precision-recall curve "
        f"has nothing to show. Choose another class k in the sidebar, e.g. "
        f"“{esc_md(ds.class_names[best])}” ({int(occurs[best])} of {len(truth_k)} test "
        "rows carry it)."
    )
else:
    precision, recall, thresholds, ap = metrics.pr_curve(truth_k, P_held[:, k])
    st.plotly_chart(
        plots.pr_curve_figure(
            precision,
            recall,
            thresholds,
            class_name=ds.class_names[k],
            average_precision=ap,
            threshold=(threshold if own else whole_decision.cut(k))
            if ds.task == "multilabel"
            else None,
        ),
        key="pr_curve",
    )
    st.caption(
        f"For the sidebar's class “{esc_md(ds.class_names[k])}”: {int(truth_k.sum())} of "
        f"{len(truth_k)} test rows carry it. An empty cell (–) in the table is undefined: a "
        "class never predicted has no precision, one that never occurs has no recall."
    )

st.subheader("Tune γ and λ")
schemes = list(TUNE_SCHEMES)
if not s.spec.l1:  # one-SE picks the largest λ within one standard error: λ only
    schemes = [x for x in schemes if "one-SE" not in x]
tune_scheme = st.radio(
    "Selection",
    schemes,
    horizontal=True,
    key="tune_scheme",
    help="Inner 5-fold CV scores every grid point on five splits of the training rows and "
    "averages: less noisy than the paper's single 10% validation split. One-SE takes the "
    "largest λ whose score is within one standard error of the best: sparser, more stable β.",
)
tune_metric = None
if ds.task == "multilabel":
    SELECT_BY = ["micro_f1", "macro_f1", "average_precision", "ranking_loss", "hamming_loss"]
    tune_metric = st.selectbox(
        "Select by",
        SELECT_BY,
        format_func=lambda m: metrics.METRIC_LABELS[m],
        key="tune_metric",
        help="Micro-F1 (the default) judges the decisions, each grid point at its own fitted "
        "cut; average precision and ranking loss judge only how the labels are ranked (the "
        "paper selected by average precision).",
    )
st.caption(
    "Searches the paper's grid {10², 10¹, …, 10⁻⁵} for γ"
    + (" and λ" if s.spec.l1 else "")
    + (
        f" on all {ds.n_samples:,} rows of the data in use (the test file is kept apart) ("
        if scheme == "test"
        else f" on the {1 - test_size:.0%} training rows of the hold-out split ("
    )
    + ("one 10% validation split" if "10%" in tune_scheme else "inner 5-fold CV")
    + "), never on test rows, then moves the sliders to the choice."
    + (
        " (With k-fold evaluation every row is a test row once, so scores after tuning are "
        "slightly optimistic; use the hold-out split for an unbiased estimate.)"
        if scheme == "kfold"
        else ""
    )
)
if st.button(f"Tune {s.model}", key="tune"):
    folds = TUNE_SCHEMES[tune_scheme][0] or 1
    n_points = folds * len(PAPER_GRID) * (len(PAPER_GRID) if s.spec.l1 else 1)
    tune_bar = st.progress(0.0, text="Tuning…")
    try:
        rows = Scheme("all") if scheme == "test" else Scheme("holdout", test_size)
        res = tune(
            ds,
            s.model,
            Search(rows, tune_scheme, tune_metric),
            lambda done, total: tune_bar.progress(
                done / total, text=f"Grid point {done} of {n_points}"
            ),
        )
    except DataError as exc:
        st.error(f"Could not tune: {esc_md(exc)}")
        res = None
    finally:
        tune_bar.empty()
    if res is not None:
        st.session_state["tuning_result"] = (key, s.model, test_size, tune_scheme, res)
        # the headline before tuning: said again beside the button after it (the page stays
        # scrolled here, the new metrics at its top out of view)
        first = shown_first[0] if shown_first else summary.index[0]
        st.session_state["_tuned_from"] = (
            key,
            summary.loc[first, "label"],
            float(summary.loc[first, "mean"]),
            (s.model, s.gamma, s.lam),  # the way back (issue #46, item 10)
        )
        set_tuned(res.best_params["gamma"], res.best_params.get("lam"))
        st.rerun()

stored = st.session_state.get("tuning_result")
if stored and stored[0] == key:
    _, model, tuned_share, tuned_by, res = stored
    if scheme == "holdout" and tuned_share != test_size:
        st.warning(
            f"The sliders were tuned on the training rows of a {tuned_share:.0%} hold-out split; "
            f"with a {test_size:.0%} test share some of those rows are now test rows, so these "
            "scores are optimistic. Tune again."
        )
    chosen = ", ".join(
        f"{'γ' if k == 'gamma' else 'λ'} = {fmt_value(v)}" for k, v in res.best_params.items()
    )
    now = ""
    before = st.session_state.get("_tuned_from")
    if before and before[0] == key and before[1] in set(summary["label"]):
        row = summary.index[list(summary["label"]).index(before[1])]
        now = (
            f" At the top of the page, {esc_md(evaluation_name)}: {before[1].rstrip(' ↑↓')} "
            f"{float(summary.loc[row, 'mean']):.3f} (before tuning {before[2]:.3f})."
        )
    st.success(
        f"{model}, {tuned_by}: validation {metrics.METRIC_LABELS[res.metric].rstrip(' ↑↓')} "
        f"{res.best_score:.3f} "
        f"at {chosen}; the sliders now show it.{now}"
    )
    if before and before[0] == key and len(before) > 3:
        # tuning can lower the test score (a choice at the grid's edge): the way back beside
        # the message, not in the result list's closed expander
        if st.button(
            "Restore the setting before tuning",
            key="restore_before_tuning",
            help="The model, γ and λ in use before Tune ran.",
        ):
            model_b, gamma_b, lam_b = before[3]
            st.session_state.pop("tuning_result", None)  # its message would say "now show it"
            show_view(
                "pages/model.py",
                {"model": model_b, "gamma": gamma_b, "lam": lam_b},
                source="the setting before tuning",
            )
    edges = [
        f"{'γ' if k == 'gamma' else 'λ'} = {fmt_value(v)} is the grid's "
        + ("largest" if v == max(PAPER_GRID) else "smallest")
        for k, v in res.best_params.items()
        if v in (max(PAPER_GRID), min(PAPER_GRID))
    ]
    if edges:
        st.warning(
            f"{'; '.join(edges)}: the best value may lie beyond the grid, so read the tuned "
            "model as the best of these values, not the best there is."
        )
    st.plotly_chart(
        plots.tuning_heatmap(res.scores, metrics.METRIC_LABELS[res.metric], best=res.best_params),
        key="tuning_heatmap",
    )
    with st.expander("All grid points"):
        st.dataframe(res.scores, width="stretch")
