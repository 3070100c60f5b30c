"""The Compare methods page's view: the choices it offers and what they cost (BR-SVM's
estimate), the progress line of a run, and the run's tables and texts (``pages/compare.py``
draws it).

BR-SVM with the paper's grid tries 8 x 8 (γ, C) pairs, one SVM per class each, on every
training fold; its time grows roughly with classes x training rows².  The page shows an
estimate (:func:`sblr.baselines.brsvm_seconds_estimate`; emotions, 10 folds: about 9 s CPU)
and refuses that combination above :data:`BRSVM_LIMIT_SECONDS`; the quick grid or ``python -m
sblr benchmark --n-jobs -1`` are the way out.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pages._shared.formatting import esc_md, safe_filename, text_table
from pages._shared.questions import Protocol
from sblr import registry
from sblr.baselines import tuned_lr_seconds_estimate
from sblr.display import SYMBOLS, duration, fmt_value
from sblr.metrics import METRIC_LABELS
from sblr.protocol import METHODS, TASK_METRICS, decisions_text, fit_cost, selection_cost
from sblr.registry import BR_SVM, LR, LR_TUNED
from sblr.stats import leaders, mean_std_table, method_label, metric_ranks, one_dataset_reading
from sblr.tuning import PAPER_GRID

__all__ = [
    "BRSVM_LIMIT_SECONDS",
    "DECISION_LABELS",
    "EXPLAINED",
    "FOLD_CHOICES",
    "GRIDS",
    "GRID_LABELS",
    "Choice",
    "CompareView",
    "bold_best",
    "brsvm_cost",
    "compare_view",
    "default_choice",
    "method_seconds",
    "run_forecast",
    "duration",
    "progress_text",
]

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
#: The hyper-parameters the table of selections lists (tuned or counted; a fixed setting
#: such as LR (tuned)'s Cs is in the method's name or the text above).
PARAMS = ("gamma", "lam", "C", "k")

#: "What am I looking at?": Markdown and formulas, in their order.
EXPLAINED = (
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
    "probable class.",
    r"\hat\theta_f=\arg\max_{\theta\in G^{p}}\ \mathrm{score}"
    r"\big(\theta;\,D^{\mathrm{train}}_{f,90\%}\to D^{\mathrm{train}}_{f,10\%}\big),"
    r"\qquad \mathrm{result}=\frac1F\sum_{f=1}^F \mathrm{metric}"
    r"\big(\hat\theta_f;\,D^{\mathrm{train}}_f\to D^{\mathrm{test}}_f\big)",
    "The table shows mean ± standard deviation over the folds (↓ lower is better, "
    "↑ higher is better). The **rank** of a method on a metric is 1 for the best mean "
    f"(as printed, {DECIMALS} decimals, so equal printed values share the average rank); "
    "the **average rank** is the mean of a method's ranks over the metrics:",
    r"\bar R_j=\frac1M\sum_{m=1}^M r_j^m",
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
    "disk).",
)
HYPER_CAPTION = (
    "Folds are numbered from 1 here and from 0 in the CSV files, which have the columns of "
    "`python -m sblr benchmark`'s results.csv and hyperparameters.csv (method keys, e.g. "
    "sparse_sblr), so sblr.stats can read them. Times are those of the first computation."
)


def ordered(methods) -> list[str]:
    """``methods`` (keys) in the registry's order, the order of the paper's tables."""
    return [m for m in METHODS if m in methods]


def _brsvm_seconds(ds, folds) -> float:
    from sblr.baselines import brsvm_seconds_estimate  # lazy: scikit-learn

    return brsvm_seconds_estimate(ds.n_samples, ds.n_classes, folds)


def method_seconds(ds, method, folds, grid) -> float | None:
    """Estimated CPU seconds of ``method``'s ``folds`` folds on ``ds`` with the grid named
    ``grid``, from the data's shape: per fold the selection on a 10% split of the training
    fold and the refit with its test rows (:func:`sblr.protocol.selection_cost` and
    :func:`~sblr.protocol.fit_cost`, at :data:`sblr.registry.LAYER_RATE`); BR-SVM by its own
    estimate (the paper's grid only), the tuned logistic regression by its own
    (:func:`sblr.baselines.tuned_lr_seconds_estimate`); None for the plain one. Pessimistic
    for small data (it counts 4e7 multiply-adds a class of solver overhead), right in size
    for SBLR and SparseSBLR on hundreds of labels, where the layer's n·m² and n·m³ terms
    rule."""
    entry = registry.get(method)
    if entry is BR_SVM:
        return _brsvm_seconds(ds, folds) if grid == "paper" else None
    if entry is LR:
        return None
    n_train = ds.n_samples * (folds - 1) / folds
    if entry is LR_TUNED:  # its own C and cut, chosen on inner folds: its own estimate
        return tuned_lr_seconds_estimate(
            n_train, ds.n_features, ds.n_classes, fits=folds, multilabel=ds.is_multilabel
        )
    shape = (n_train, ds.n_features, ds.n_classes)
    select = selection_cost(method, *shape, selection="holdout", grid=GRIDS[grid], inner_folds=5)
    refit = fit_cost(method, *shape, n_query=ds.n_samples - n_train)
    return folds * (select + refit) / registry.LAYER_RATE


def _limit_seconds() -> float:
    """A method's folds longer than this are not run here: an hour, the dashboard's limit of
    a fit offered at all (:data:`sblr.registry.LAYER_LIMIT`)."""
    return registry.LAYER_LIMIT / registry.LAYER_RATE


def run_forecast(ds, methods, grid, folds) -> tuple[str | None, bool]:
    """What a run of ``methods`` would cost on ``ds``, said before it starts (Markdown; None
    when it is quick), and whether the page refuses it: a method whose folds would take
    over an hour (:func:`method_seconds`; SBLR on 983 labels: weeks) is not run here.
    BR-SVM's own warning is :func:`brsvm_cost`'s."""
    seconds = {m: method_seconds(ds, m, folds, grid) for m in ordered(methods)}
    known = {m: sec for m, sec in seconds.items() if sec is not None and m != BR_SVM.key}
    hours = [m for m, sec in known.items() if sec > _limit_seconds()]
    each = ", ".join(f"{method_label(m)} {duration(sec)}" for m, sec in known.items())
    if hours:
        names = ", ".join(method_label(m) for m in hours)
        return (
            f"**Not run here: {names} would take over an hour** on {esc_md(ds.name)} "
            f"({ds.n_samples:,} rows, {ds.n_classes} classes, {folds} folds; estimated from "
            f"the data's shape: {each}). Leave {'them' if len(hours) > 1 else 'it'} out, "
            "choose fewer folds or the quick grid, or run `python -m sblr benchmark` "
            "(parallel, cached on disk).",
            True,
        )
    total = sum(known.values())
    if total <= BRSVM_LIMIT_SECONDS:
        return None, False
    return (
        f"This run may take long: up to about {duration(total)} of CPU by a rough estimate "
        f"from the data's shape ({each}; computed once, then cached).",
        False,
    )


@dataclass(frozen=True)
class Choice:
    """The page's choice before a click: the methods it can run on the data, those chosen
    by default (BR-SVM left out where the paper's grid would be too slow at the most folds,
    and any method whose folds would take over an hour) and what the page says of that."""

    options: list[str]
    methods: list[str]
    note: str | None
    left_out: tuple = (BR_SVM.key,)

    def note_for(self, methods) -> str | None:
        """The note while the methods left out are not chosen."""
        return self.note if not set(self.left_out) & set(methods) else None


def default_choice(ds) -> Choice:
    """The methods the page offers on ``ds`` and its default choice (10 folds, the paper's
    grid)."""
    options = [m for m, entry in METHODS.items() if entry.supports(ds.task)]
    methods = [m for m, entry in METHODS.items() if entry.default_for(ds.task)]
    slow = BR_SVM.key in methods and _brsvm_seconds(ds, FOLD_CHOICES[-1]) > BRSVM_LIMIT_SECONDS
    notes, left_out = [], []
    if slow:  # the default must run: BR-SVM with the paper's grid would not, here
        left_out.append(BR_SVM.key)
        notes.append(
            "BR-SVM is left out of the default choice: with the paper's grid it would take "
            "longer here than the page runs. Add it with the quick grid, or run it from the "
            "command line."
        )
    hours = [
        m
        for m in methods
        if m != BR_SVM.key
        and (method_seconds(ds, m, FOLD_CHOICES[-1], "paper") or 0.0) > _limit_seconds()
    ]
    if hours:
        left_out += hours
        notes.append(
            f"{', '.join(method_label(m) for m in hours)} "
            f"{'are' if len(hours) > 1 else 'is'} left out of the default choice: with "
            f"{FOLD_CHOICES[-1]} folds and the paper's grid "
            f"{'each' if len(hours) > 1 else 'it'} would take over an hour here. Add one with "
            "fewer folds or the quick grid: the page says what it costs before it runs."
        )
    chosen = [m for m in methods if m not in left_out]
    return Choice(options, chosen, " ".join(notes) or None, tuple(left_out) or (BR_SVM.key,))


def brsvm_cost(ds, methods, grid, folds) -> tuple[str | None, bool]:
    """What BR-SVM with the paper's grid would cost on ``ds`` (a warning, Markdown; None
    when it is not chosen with that grid) and whether the page refuses to run it."""
    if BR_SVM.key not in methods or grid != "paper":
        return None, False
    seconds = _brsvm_seconds(ds, folds)
    estimate = f"about {seconds:.0f} s" if seconds < 120 else f"about {seconds / 60:.0f} min"
    if seconds > BRSVM_LIMIT_SECONDS:
        return (
            f"BR-SVM with the paper's grid would take {estimate} of CPU on {esc_md(ds.name)} "
            f"({ds.n_samples:,} rows, {ds.n_classes} classes, {folds} folds), more than the "
            f"page runs ({BRSVM_LIMIT_SECONDS // 60} min). Choose the quick grid, leave "
            "BR-SVM out, or run `python -m sblr benchmark` (parallel, cached on disk).",
            True,
        )
    return (
        f"BR-SVM with the paper's grid is slow: it tries 64 (γ, C) pairs on every fold, "
        f"{estimate} of CPU here (emotions, 10 folds: about 9 s). The results are cached, so "
        "this is paid once.",
        False,
    )


def waiting_text(methods, too_slow) -> str:
    """What the page says before a run (Markdown)."""
    if not methods:
        return "Choose at least one method, then click **Run cross-validation**."
    if too_slow:
        return (
            "**Run cross-validation** waits for a lighter choice: the quick grid, fewer "
            "folds, or without the methods the warning above names."
        )
    return "Choose methods, folds and a grid, then click **Run cross-validation**."


def brsvm_prior(ds, folds, grid) -> dict:
    """Seconds a fold of BR-SVM will take before one is timed (the paper grid's estimate:
    its first fold can take minutes), for :func:`sblr.stats.fold_forecast`."""
    return {BR_SVM.key: _brsvm_seconds(ds, folds) / folds} if grid == "paper" else {}


def progress_text(method, fold, folds, forecast) -> str:
    """The progress bar's line before ``method``'s ``fold``: what runs, and what is left by
    ``forecast`` (a :class:`sblr.stats.FoldForecast`, from the folds timed on this machine,
    method by method)."""
    text = f"{method_label(method)}, fold {fold + 1} of {folds}"
    left = [f"{method_label(m)} {duration(sec)}" for m, sec in forecast.seconds.items() if sec]
    left += [f"{method_label(m)} not timed yet" for m in forecast.untimed]
    if left:
        text += " · left: " + ", ".join(left)
        text += f" · about {duration(forecast.known)} in all" + (
            " and the untimed" if forecast.untimed else ""
        )
    return text


def bold_best(ranks):
    """Styler function (``Styler.apply(..., axis=0)``): bold and shade the cells of the best
    (lowest) rank in each column of ``ranks``."""

    def style(col):
        best = ranks[col.name].min()
        return [
            "font-weight: bold; background-color: rgba(33, 195, 84, 0.18)" if r == best else ""
            for r in ranks[col.name]
        ]

    return style


@dataclass(frozen=True)
class CompareView:
    """A run's tables and texts: the heading, the caption of its decisions, grid and time,
    the mean ± sd ``table`` and the ``ranks`` (methods by label, metrics by label), the time
    per method, the rows given no label (multi-label), the reading, the best average rank,
    the selected hyper-parameters (text), and the downloads' file stem."""

    heading: str
    caption: str
    table: pd.DataFrame
    ranks: pd.DataFrame
    cost: str
    no_label: str | None
    reading: str
    best: str
    hyper: pd.DataFrame
    stem: str


def compare_view(ds, request, run: Protocol, benchmark, elapsed) -> CompareView:
    """The view of a run of the ``request`` (the page's: its ``methods``, keys in order, and
    the name of its ``grid``) under ``run``: its ``benchmark``, ``(results, hyper)`` of
    :func:`pages._shared.long_jobs.compare_methods`, computed in ``elapsed`` seconds."""
    methods, grid = request["methods"], request["grid"]
    results, hyper = benchmark
    task_metrics = TASK_METRICS[ds.task]
    labels = [method_label(m) for m in methods]
    metric_labels = {m: METRIC_LABELS.get(m, m) for m in task_metrics}
    ranks = metric_ranks(
        results, task_metrics, methods=methods, decimals=DECIMALS, labels=metric_labels
    )
    ranks.index = pd.Index(labels, name="method")
    table = mean_std_table(results, decimals=DECIMALS).droplevel("dataset")
    table = table.reindex(list(methods))[list(task_metrics)]
    table.index = pd.Index(labels, name="method")
    table.columns = [metric_labels[m] for m in table.columns]

    decided = decisions_text(run.threshold, ds.is_multilabel)
    # the baselines' own rules in one phrase (multi-label ones: the others see no such data)
    own = [
        METHODS[m].spoken
        for m in methods
        if not METHODS[m].decides_by_cut and not METHODS[m].multiclass_only
    ]
    caption = (
        f"Decisions: {decided}"
        + (f"; {', '.join(own)} by their own rules" if own and ds.is_multilabel else "")
        + f" · {GRID_LABELS[grid]}"
        + (" · from the cache" if elapsed < 0.1 else f" · computed in {duration(elapsed)}")
    )
    # what each method cost: selection and final fits over the folds (as first computed); a
    # line, not a column: the table already fills 1024 px
    cost = hyper.groupby("method")[["select_seconds", "fit_seconds"]].sum().sum(axis=1)
    tied = leaders(ranks["Average rank"])
    n = len(task_metrics)
    return CompareView(
        heading=f"{esc_md(ds.name)}: {run.folds}-fold cross-validation"
        + HEADINGS[ds.task][run.decisions],
        caption=caption,
        table=table,
        ranks=ranks,
        cost="Time per method (selection and final fits over the folds, as first computed): "
        + " · ".join(f"{method_label(m)} {duration(cost[m])}" for m in methods),
        no_label=_no_label(hyper, methods, decided),
        reading="**Reading it.** " + " ".join(one_dataset_reading(results, task_metrics)),
        best=("**Best average rank:** " if len(tied) == 1 else "**Best average rank, tied:** ")
        + " and ".join(tied)
        + f" ({ranks['Average rank'].min():.2f} over {n} metric{'s' if n > 1 else ''}).",
        hyper=_hyper_table(hyper),
        stem=safe_filename(ds.name, "compare", f"{run.folds}fold", grid),
    )


def _no_label(hyper, methods, decided) -> str | None:
    """The rows each method gave no label over the folds, beside the truth's (multi-label
    data: the decisions' gaps)."""
    if not {"no_label_rows", "test_rows"} <= set(hyper.columns):
        return None
    counts = hyper.groupby("method")[["no_label_rows", "test_rows", "truth_no_label_rows"]].sum()
    truth = int(counts["truth_no_label_rows"].iloc[0])
    return f"Rows given no label over the folds (the truth: {truth:,}; decisions: {decided}): " + (
        " · ".join(
            f"{method_label(m)} {int(counts.loc[m, 'no_label_rows']):,} of "
            f"{int(counts.loc[m, 'test_rows']):,}"
            for m in methods
            if m in counts.index
        )
    )


def _hyper_table(hyper) -> pd.DataFrame:
    """The selected hyper-parameters per fold as text: γ, λ and C as the sliders write them
    (1e-2, 5.6e-4), k as a whole number, "–" where a method has none (written here: with a
    Styler's na_rep the browser showed "None", issue #46, item 13); folds from 1."""
    params = [p for p in PARAMS if p in hyper]
    shown = hyper[["method", "fold", *params, "select_seconds", "fit_seconds"]].copy()
    shown["method"] = shown["method"].map(method_label)
    shown["fold"] = shown["fold"] + 1
    for p in ("gamma", "lam", "C"):
        if p in shown:
            shown[p] = shown[p].map(lambda v: "–" if pd.isna(v) else fmt_value(v))
    return text_table(shown.rename(columns=SYMBOLS), formats={"k": "{:.0f}"})
