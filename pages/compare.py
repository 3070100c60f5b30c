"""Compare methods: the paper's cross-validated comparison, run on the current data.

Every (data, method, fold, folds, grid, decisions) result is cached (``cached_compare_fold``),
so re-running, coming back to the page or adding a method computes only what is new.
The request of the last click is kept in the session, so the results stay on the page.

BR-SVM with the paper's grid tries 8 x 8 (γ, C) pairs, one SVM per class each, on every
training fold; its time grows roughly with classes x training rows².  The page shows an
estimate (:func:`sblr.baselines.brsvm_seconds_estimate`; emotions, 10 folds: about 9 s CPU)
and refuses that combination above :data:`BRSVM_LIMIT_SECONDS`; the quick grid or ``python -m sblr
benchmark --n-jobs -1`` are the way out.

The similarity models decide multi-label rows by their fitted cut by default, as every other page
does (γ and λ selected by micro-F1); the paper's decisions (π ≥ 0.5, SML its top ξ, the mean
evidence f̄, selection by average precision) are an option, and the tables name the choice.
"""

import time

import pandas as pd
import streamlit as st

from pages._shared.formatting import (
    esc_md,
    fmt_value,
    safe_filename,
    text_table,
    to_csv_bytes,
)
from pages._shared.long_jobs import compare_methods
from pages._shared.questions import DECISIONS, Protocol
from pages._shared.state import page_context
from sblr import DataError
from sblr.baselines import brsvm_seconds_estimate
from sblr.metrics import METRIC_LABELS
from sblr.protocol import METHODS, TASK_METRICS, decisions_text
from sblr.registry import BR_SVM
from sblr.stats import (
    fold_forecast,
    leaders,
    mean_std_table,
    method_label,
    metric_ranks,
    one_dataset_reading,
)
from sblr.tuning import PAPER_GRID

#: Three values per tuned parameter. λ has its own: at 1e-2 and above SparseSBLR keeps few or
#: no weights on many data sets (on 45 labels it chose λ = 1 in every fold, kept no β, and
#: predicted nothing), so a quick grid shared with γ made it look like the worst method.
QUICK_GRID = {"gamma": (1.0, 0.1, 0.01), "C": (1.0, 0.1, 0.01), "lam": (1e-3, 1e-4, 1e-5)}
GRIDS = {"paper": tuple(PAPER_GRID), "quick": QUICK_GRID}
GRID_LABELS = {
    "paper": "The paper's grid {1e2, 1e1, …, 1e-5} (8 values)",
    "quick": "Quick grid: γ and C in {1, 1e-1, 1e-2}, λ in {1e-3, 1e-4, 1e-5} "
    "(NOT the paper's, for a first look)",
}
#: LR (tuned), scikit-learn's one-vs-rest LR with C and one micro-F1 cut chosen on inner folds,
#: can be chosen (1.2 s a fold on the planted sample, 4.9 s on 645 rows and 19 labels;
#: SparseSBLR 1.4 s and 7.0 s); not in the default choice, which the browser test's forecast
#: and the page's first run are timed on.
DEFAULT_METHODS = {
    task: [m.key for m in METHODS.values() if m.default_for(task)]
    for task in ("multilabel", "multiclass")
}
FOLD_CHOICES = [3, 5, 10]
#: The decisions' choice on the page, by task (multi-class data: the most probable class
#: either way; "paper" fits SBLR and SparseSBLR on the paper's input there too).
DECISION_LABELS = {
    "multilabel": {
        "fitted": "Fitted cuts (micro-F1 on held-out training rows; γ, λ selected by "
        "micro-F1), as the other pages decide",
        "paper": "The paper's decisions (π ≥ 0.5, SML its top ξ; the mean evidence f̄; "
        "selected by average precision)",
    },
    "multiclass": {
        "fitted": "The models as the other pages fit them",
        "paper": "The paper's models (SBLR and SparseSBLR on the mean evidence f̄)",
    },
}
#: The decisions as the table's heading names them.
HEADINGS = {
    "multilabel": {"fitted": ", fitted cuts", "paper": ", the paper's decisions"},
    "multiclass": {"fitted": "", "paper": ", the paper's models"},
}
#: Above this estimate the page does not run BR-SVM with the paper's grid.
BRSVM_LIMIT_SECONDS = 300
#: Decimals of the printed means; ranks use the printed values, as the paper's tables.
DECIMALS = 3
K_REQUEST = "compare_request"
K_DONE, K_CANCELLED = "_compare_done", "_compare_cancelled"
PARAM_LABELS = {"gamma": "γ", "lam": "λ", "C": "C", "k": "k"}


def _cancel():
    """The Cancel button's callback (before the rerun it asks for): forget the request, so
    the page does not start it again, and say how far it went."""
    st.session_state.pop(K_REQUEST, None)
    st.session_state[K_CANCELLED] = st.session_state.pop(K_DONE, (0, 0))


def _order(methods):
    return [m for m in METHODS if m in methods]


def _bold_best(ranks):
    """Styler function: bold and shade the cells of the best (lowest) rank in a column."""

    def style(col):
        best = ranks[col.name].min()
        return [
            "font-weight: bold; background-color: rgba(33, 195, 84, 0.18)" if r == best else ""
            for r in ranks[col.name]
        ]

    return style


ds, _, key = page_context(__file__)
task_metrics = TASK_METRICS[ds.task]

st.title("Compare methods")
with st.expander("What am I looking at?"):
    st.markdown(
        "The paper's protocol on the data chosen on the home page: the rows are split into "
        "F folds (shuffled k-fold for multi-label data, stratified for multi-class data, "
        "seed 0, the same folds as `python -m sblr benchmark`). For every method and fold, "
        "the hyper-parameters (γ; λ for SparseSBLR; γ and C for BR-SVM) are chosen on the "
        "**training rows of that fold only**: 10% of them are held out, every grid point is "
        "trained on the other 90% and scored on the held-out 10% by average precision "
        "(multi-label) or accuracy (multi-class); ties go to the first grid point. The "
        "method is then refitted on the whole training fold and scored on the test fold. "
        "ML-kNN, IBLR and kNN use k = 10; NCM and LR have nothing to tune; LR (tuned) "
        "chooses its C (and, multi-label, one cut) on 5 inner folds of the training fold.\n\n"
        "**Decisions.** By default SML, SBLR and SparseSBLR decide a multi-label row as on "
        "every other page: a class is given when its probability reaches a cut fitted on "
        "held-out training rows (the one cut maximizing micro-F1), and γ and λ are selected "
        "by micro-F1. **The paper's decisions** (an option) are the paper's protocol whole: "
        "π ≥ 0.5 (SML: its own top ξ classes), SBLR and SparseSBLR on the paper's mean "
        "evidence f̄, selection by average precision. The baselines (ML-kNN, IBLR, BR-SVM, "
        "LR (tuned)) keep their own decision rules either way. Multi-class data: the most "
        "probable class."
    )
    st.latex(
        r"\hat\theta_f=\arg\max_{\theta\in G^{p}}\ \mathrm{score}"
        r"\big(\theta;\,D^{\mathrm{train}}_{f,90\%}\to D^{\mathrm{train}}_{f,10\%}\big),"
        r"\qquad \mathrm{result}=\frac1F\sum_{f=1}^F \mathrm{metric}"
        r"\big(\hat\theta_f;\,D^{\mathrm{train}}_f\to D^{\mathrm{test}}_f\big)"
    )
    st.markdown(
        "The table shows mean ± standard deviation over the folds (↓ lower is better, "
        "↑ higher is better). The **rank** of a method on a metric is 1 for the best mean "
        f"(as printed, {DECIMALS} decimals, so equal printed values share the average rank); "
        "the **average rank** is the mean of a method's ranks over the metrics:"
    )
    st.latex(r"\bar R_j=\frac1M\sum_{m=1}^M r_j^m")
    st.markdown(
        "The paper ranks over many data sets (and tests the differences with Friedman and "
        "Nemenyi); on one data set the ranks only summarise this table. The quick grid "
        "(γ and C in {1, 1e-1, 1e-2}, λ in {1e-3, 1e-4, 1e-5}) is not the paper's grid: use "
        "it for a first look, and the paper's "
        "grid for numbers to report. Every (method, fold) result is cached, so running again, "
        "coming back to this page or adding a method only computes what is new.\n\n"
        "**BR-SVM is slow with the paper's grid:** 8 × 8 (γ, C) pairs, each one SVM per "
        "class, on every training fold; the time grows about with classes × training rows² "
        "(emotions, 593 rows and 6 labels, 10 folds: about 9 s CPU, more than all other "
        f"methods together). When the estimate exceeds {BRSVM_LIMIT_SECONDS // 60} minutes "
        "the page does not run BR-SVM with the paper's grid: use the quick grid, or "
        "`python -m sblr benchmark DATA --methods br_svm --n-jobs -1` (parallel, cached on "
        "disk)."
    )

options = [m for m, spec in METHODS.items() if spec.supports(ds.task)]
request = st.session_state.get(K_REQUEST)
previous = request if request and request["task"] == ds.task else None
default_methods = DEFAULT_METHODS[ds.task]
default_slow = (
    BR_SVM.key in default_methods
    and brsvm_seconds_estimate(ds.n_samples, ds.n_classes, FOLD_CHOICES[-1]) > BRSVM_LIMIT_SECONDS
)
if default_slow:  # the default must run: BR-SVM with the paper's grid would not, here
    default_methods = [m for m in default_methods if m != BR_SVM.key]
methods = st.multiselect(
    "Methods",
    options,
    default=list(previous["methods"]) if previous else default_methods,
    format_func=method_label,
    key=f"compare_methods_{ds.task}",
)
if default_slow and not previous and BR_SVM.key not in methods:
    st.caption(
        "BR-SVM is left out of the default choice: with the paper's grid it would take longer "
        "here than the page runs. Add it with the quick grid, or run it from the command line."
    )
left, right = st.columns([1, 2])
folds = left.radio(
    "Folds F",
    FOLD_CHOICES,
    index=FOLD_CHOICES.index(previous["folds"]) if previous else len(FOLD_CHOICES) - 1,
    horizontal=True,
    key="compare_folds",
    help="The paper uses 10-fold cross-validation.",
)
grid_name = right.radio(
    "Grid of every tuned hyper-parameter",
    list(GRIDS),
    index=list(GRIDS).index(previous["grid"]) if previous else 0,
    format_func=GRID_LABELS.get,
    key="compare_grid",
)
decisions = st.radio(
    "Decisions of SML, SBLR and SparseSBLR",
    list(DECISIONS),
    index=list(DECISIONS).index(previous["decisions"]) if previous else 0,
    format_func=DECISION_LABELS[ds.task].get,
    key="compare_decisions",
    help="The baselines keep their own decision rules either way.",
)

too_slow = False
if BR_SVM.key in methods and grid_name == "paper":
    seconds = brsvm_seconds_estimate(ds.n_samples, ds.n_classes, folds)
    too_slow = seconds > BRSVM_LIMIT_SECONDS
    estimate = f"about {seconds:.0f} s" if seconds < 120 else f"about {seconds / 60:.0f} min"
    if too_slow:
        st.warning(
            f"BR-SVM with the paper's grid would take {estimate} of CPU on "
            f"{esc_md(ds.name)} "
            f"({ds.n_samples:,} rows, {ds.n_classes} classes, {folds} folds), more than the "
            f"page runs ({BRSVM_LIMIT_SECONDS // 60} min). Choose the quick grid, leave "
            "BR-SVM out, or run `python -m sblr benchmark` (parallel, cached on disk)."
        )
    else:
        st.warning(
            f"BR-SVM with the paper's grid is slow: it tries 64 (γ, C) pairs on every "
            f"fold, {estimate} of CPU here (emotions, 10 folds: about 9 s). The "
            "results are cached, so this is paid once."
        )

run = st.button(
    "Run cross-validation",
    type="primary",
    key="compare_run",
    disabled=not methods or too_slow,
)
if run:
    request = {
        "key": key,
        "task": ds.task,
        "methods": tuple(_order(methods)),
        "folds": int(folds),
        "grid": grid_name,
        "decisions": decisions,
    }
    st.session_state[K_REQUEST] = request

cancelled = st.session_state.pop(K_CANCELLED, None)
if cancelled:
    done, total = cancelled
    st.info(
        f"Cancelled after {done:,} of {total:,} folds. The folds computed are kept: **Run "
        "cross-validation** goes on from there."
    )
if not request or request["key"] != key:
    if not methods:
        st.info("Choose at least one method, then click **Run cross-validation**.")
    elif too_slow:
        st.info(
            "**Run cross-validation** waits for a lighter choice: the quick grid, or the "
            "methods without BR-SVM (see the warning above)."
        )
    else:
        st.info("Choose methods, folds and a grid, then click **Run cross-validation**.")
    st.stop()

shown_choice = (tuple(_order(methods)), int(folds), grid_name, decisions)
if shown_choice != tuple(request[k] for k in ("methods", "folds", "grid", "decisions")):
    st.caption(
        "Showing the last run; the choices above differ from it. Click **Run "
        "cross-validation** to update (only new (method, fold) pairs are computed)."
    )

n_folds = request["folds"]
bar = st.progress(0.0, text="Cross-validating…")
cancel_slot = st.empty()
cancel_slot.button(
    "Cancel",
    key="compare_cancel",
    on_click=_cancel,
    help="Stops the run at once (inside the fold being computed, at its next grid point); "
    "the folds done are kept, so running again goes on from there.",
)
started = time.monotonic()
# BR-SVM's first fold can take minutes: until it is timed, the paper grid's estimate
prior = (
    {BR_SVM.key: brsvm_seconds_estimate(ds.n_samples, ds.n_classes, n_folds) / n_folds}
    if request["grid"] == "paper"
    else {}
)


def _progress(done, total, method, fold, timed):
    st.session_state[K_DONE] = (done, total)
    if method is None:
        bar.progress(1.0, text="Done")
        return
    text = f"{method_label(method)}, fold {fold + 1} of {n_folds}"
    forecast = fold_forecast(timed, {m: n_folds - len(timed[m]) for m in request["methods"]}, prior)
    left = [f"{method_label(m)} {_duration(sec)}" for m, sec in forecast.seconds.items() if sec] + [
        f"{method_label(m)} not timed yet" for m in forecast.untimed
    ]
    if left:  # from the folds timed on this machine, method by method
        text += " · left: " + ", ".join(left)
        text += f" · about {_duration(forecast.known)} in all" + (
            " and the untimed" if forecast.untimed else ""
        )
    bar.progress(done / total, text=text)


def _duration(seconds):
    if seconds < 10:
        return f"{seconds:.1f} s"
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


try:
    run = Protocol.of(n_folds, GRIDS[request["grid"]], request["decisions"])
    results, hyper = compare_methods(ds, request["methods"], run, progress=_progress)
except (DataError, ValueError) as exc:
    st.session_state.pop(K_REQUEST, None)
    st.error(f"The cross-validation failed: {esc_md(exc)}")
    st.stop()
finally:
    bar.empty()
    cancel_slot.empty()

labels = [method_label(m) for m in request["methods"]]
metric_labels = {m: METRIC_LABELS.get(m, m) for m in task_metrics}

ranks = metric_ranks(
    results, task_metrics, methods=request["methods"], decimals=DECIMALS, labels=metric_labels
)
ranks.index = labels
ranks.index.name = "method"

table = mean_std_table(results, decimals=DECIMALS).droplevel("dataset")
table = table.reindex(list(request["methods"]))[list(task_metrics)]
table.index = labels
table.index.name = "method"
table.columns = [metric_labels[m] for m in table.columns]

multilabel = ds.task == "multilabel"
decided = decisions_text(run.threshold, multilabel)
st.subheader(
    f"{esc_md(ds.name)}: {n_folds}-fold cross-validation" + HEADINGS[ds.task][request["decisions"]]
)
elapsed = time.monotonic() - started
# the baselines' own rules, said in one phrase under the table (multi-label ones: the others
# are not shown multi-label data)
own = [
    METHODS[m].spoken
    for m in request["methods"]
    if not METHODS[m].decides_by_cut and not METHODS[m].multiclass_only
]
st.caption(
    f"Decisions: {decided}"
    + (f"; {', '.join(own)} by their own rules" if own and multilabel else "")
    + " · "
    + GRID_LABELS[request["grid"]]
    + (" · from the cache" if elapsed < 0.1 else f" · computed in {_duration(elapsed)}")
)
st.dataframe(table.style.apply(_bold_best(ranks), axis=0), key="compare_metrics")
# what each method cost: selection and final fits over the folds (as first computed); a line,
# not a column: the table already fills 1024 px
cost = hyper.groupby("method")[["select_seconds", "fit_seconds"]].sum().sum(axis=1)
st.caption(
    "Time per method (selection and final fits over the folds, as first computed): "
    + " · ".join(f"{method_label(m)} {_duration(cost[m])}" for m in request["methods"])
)
if {"no_label_rows", "test_rows"} <= set(hyper.columns):  # multi-label: the decisions' gaps
    counts = hyper.groupby("method")[["no_label_rows", "test_rows", "truth_no_label_rows"]].sum()
    truth = int(counts["truth_no_label_rows"].iloc[0])
    st.caption(
        "Rows given no label over the folds (the truth: "
        + f"{truth:,}; decisions: {decided}): "
        + " · ".join(
            f"{method_label(m)} {int(counts.loc[m, 'no_label_rows']):,} of "
            f"{int(counts.loc[m, 'test_rows']):,}"
            for m in request["methods"]
            if m in counts.index
        )
    )
st.markdown("**Reading it.** " + " ".join(one_dataset_reading(results, task_metrics)))

st.subheader("Ranks")
tied = leaders(ranks["Average rank"])
st.markdown(
    ("**Best average rank:** " if len(tied) == 1 else "**Best average rank, tied:** ")
    + " and ".join(tied)
    + f" ({ranks['Average rank'].min():.2f} over {len(task_metrics)} "
    f"metric{'s' if len(task_metrics) > 1 else ''})."
)
st.dataframe(
    ranks.style.apply(_bold_best(ranks), axis=0)
    .format("{:g}")  # a rank is 1, 2 or 2.5, never 5.000000
    .format("{:.2f}", subset=["Average rank"]),
    key="compare_ranks",
)

st.subheader("Selected hyper-parameters per fold")
# the tuned and counted parameters only: a fixed setting (LR (tuned)'s Cs and cut rule, the
# paper's input of "SparseSBLR (paper's f̄)") is in the method's name or the text above
params = [p for p in PARAM_LABELS if p in hyper]
shown = hyper[["method", "fold", *params, "select_seconds", "fit_seconds"]].copy()
shown["method"] = shown["method"].map(method_label)
shown["fold"] = shown["fold"] + 1
# γ, λ and C as the sliders write them (1e-2, 5.6e-4); k, a count, as a whole number; "–"
# where a method has no such parameter, written here as text: with a Styler's na_rep the
# browser showed "None" in k and C of the similarity models (issue #46, item 13)
for p in ("gamma", "lam", "C"):
    if p in shown:
        shown[p] = shown[p].map(lambda v: "–" if pd.isna(v) else fmt_value(v))
shown = text_table(shown.rename(columns=PARAM_LABELS), formats={"k": "{:.0f}"})
number = st.column_config.NumberColumn
st.dataframe(
    shown,
    hide_index=True,
    key="compare_hyper",
    column_config={
        "select_seconds": number("selection (s)", format="%.2f"),
        "fit_seconds": number("final fit (s)", format="%.2f"),
    },
)
st.caption(
    "Folds are numbered from 1 here and from 0 in the CSV files, which have the columns of "
    "`python -m sblr benchmark`'s results.csv and hyperparameters.csv (method keys, e.g. "
    "sparse_sblr), so sblr.stats can read them. Times are those of the first computation."
)
stem = safe_filename(ds.name, "compare", f"{n_folds}fold", request["grid"])
left, right = st.columns(2)
left.download_button(
    "Download results (CSV)",
    to_csv_bytes(results, index=False),
    file_name=f"{stem}_results.csv",
    mime="text/csv",
    key="compare_download_results",
)
right.download_button(
    "Download hyper-parameters (CSV)",
    to_csv_bytes(hyper, index=False),
    file_name=f"{stem}_hyperparameters.csv",
    mime="text/csv",
    key="compare_download_hyper",
)
