"""The Model & metrics page's view: an evaluation's numbers and texts (the metric tiles, the
tables, the session's result list), the decision threshold's, and Tune's (``pages/model.py``
draws it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pages._shared.cache import (
    cached_fit,
    decision_cuts,
    evaluation,
    held_out_cuts,
    held_out_probabilities,
    read_like,
    test_scores,
    yardstick,
    yardstick_predicts_nothing,
)
from pages._shared.formatting import (
    duration,
    esc_md,
    fmt_gamma,
    result_list_filename,
    text_table,
)
from pages._shared.long_jobs import TUNE_SCHEMES, LRYardstick, lr_yardstick_shown
from pages._shared.questions import Scheme
from sblr import DataError, metrics
from sblr.decision import Decision
from sblr.display import fmt_value, settings_label
from sblr.protocol import COST_CUT_FITS
from sblr.tuning import PAPER_GRID

__all__ = [
    "EXPLAINED",
    "HELP",
    "SCHEMES",
    "EXPLAINED_LATEX",
    "METRICS_EXPLAINED",
    "RESULT_LIST_MAX",
    "Evaluated",
    "Tile",
    "evaluate",
    "fits_of",
    "headline",
    "record",
    "remember",
    "result_list",
    "test_file",
    "threshold_view",
    "tiles",
    "lr_caption",
    "tune_view",
    "tuned_view",
]

EXPLAINED = (
    "The model in the sidebar is trained on the training rows and scored on rows it has "
    "not seen. For SBLR and SparseSBLR a class k is predicted when its posterior "
    "πₖ ≥ 0.5 (multi-label) or when πₖ is the largest (multi-class). The evidence of each "
    "split is computed once per γ, so moving λ only refits the logistic layer."
)
EXPLAINED_LATEX = (
    r"\pi_k(x)=\sigma\Big(\beta_0^k+\sum_t\beta_t^k\bar f_t(x)\Big),\quad"
    r"\min_{\beta^k}\ \frac1n\sum_i \ell_i(\beta^k)+\lambda\lVert\beta^k\rVert_1"
)
#: The multi-label metrics in words (multi-class data have a confusion matrix instead).
METRICS_EXPLAINED = (
    "Multi-label metrics (↓ lower is better, ↑ higher is better): **Hamming loss** is the "
    "share of wrong label decisions; **ranking loss** the share of (relevant, "
    "irrelevant) label pairs ordered wrongly; **one-error** how often the top-ranked "
    "label is wrong; **coverage** how far down the ranking one must go to cover all "
    "relevant labels; **average precision** the mean precision at each relevant "
    "label. Ranking loss, one-error and average precision skip rows whose label set "
    "is empty or full."
)
#: Evaluations kept in the session's result list.
RESULT_LIST_MAX = 50
#: The headline metrics of multi-label data, F1 first: with rare labels a model that predicts
#: (almost) nothing still gets a small Hamming loss and a fair average precision; F1 and the
#: empty rows (None: "Rows with no label") tell it apart.
MULTILABEL_TILES = (
    "micro_f1",
    "macro_f1",
    None,
    "hamming_loss",
    "average_precision",
    "ranking_loss",
)
#: What Tune may select multi-label models by.
SELECT_BY = ("micro_f1", "macro_f1", "average_precision", "ranking_loss", "hamming_loss")
#: The columns of the result list that say what was evaluated (a new one is added only when
#: they differ from every listed one).
SETTINGS = ("data", "model", "γ", "λ", "evaluation")
#: The evaluations the page offers, as its radio names them.
SCHEMES = {
    "Hold-out split": "holdout",
    "k-fold cross-validation": "kfold",
    "Supplied test file": "test",
}
#: The widgets' help texts.
HELP = {
    "test file": "Columns are matched by name, nominal values coded as in the data in use, "
    "classes in its order; it needs the label columns.",
    "own cut": "Off: each held-out row is decided by the cuts of the model that held it out "
    "(its threshold_, fitted on its training rows' out-of-fold probabilities), as in the "
    "metrics above. On: one cut of your own for every class.",
    "cancel LR": "Stops the fit at its next label (what it did is lost); leaving the page "
    "stops it too.",
    "threshold": "Lower: more labels predicted (recall up, precision down), higher: fewer.",
    "selection": "Inner 5-fold CV scores every grid point on five splits of the training rows "
    "and averages: less noisy than the paper's single 10% validation split. One-SE takes the "
    "largest λ whose score is within one standard error of the best: sparser, more stable β.",
    "select by": "Micro-F1 (the default) judges the decisions, each grid point at its own "
    "fitted cut; average precision and ranking loss judge only how the labels are ranked "
    "(the paper selected by average precision).",
}
RESULT_LIST_CAPTION = (
    "Every evaluation shown on this page in this session (the latest last, at most "
    f"{RESULT_LIST_MAX}); change λ, γ, the model or the evaluation and it is added."
)
NO_TEST_FILE = (
    "Upload the test file that goes with the data in use (e.g. Mulan's *-test.arff): the "
    "model of the sidebar is fitted on all rows of the data in use and scored on every row of "
    "the test file."
)


def test_file(ds, upload):
    """``(test data set, None)`` of an uploaded test file (anything with ``getvalue()`` and
    ``name``), read like ``ds``; else ``(None, why not)`` (Markdown): none uploaded, unreadable,
    or without the label columns."""
    if upload is None:
        return None, NO_TEST_FILE
    try:
        test = read_like(ds, ds.fingerprint, upload.getvalue(), upload.name)
    except DataError as exc:
        return None, f"Could not use {esc_md(upload.name)} as a test file: {esc_md(exc)}"
    if not test.has_labels:
        return None, (
            f"{esc_md(upload.name)} has none of the label columns of {esc_md(ds.name)}: there "
            "is nothing to score. Its rows can be predicted on the Predict page."
        )
    return test, None


@dataclass(frozen=True)
class Evaluated:
    """An evaluation of the sidebar's model: its scores (``result``, an
    :class:`~sblr.evaluation.EvaluationResult`), every held-out row's ``truth`` (0/1 matrix
    or class codes), probabilities and cuts (its decisions are ``proba >= cuts``), the
    yardsticks on the same rows (the frequency rule's summary; the tuned LR's,
    :class:`~pages._shared.long_jobs.LRYardstick`, None when it is not computed — its
    estimate ``lr_seconds`` above the budget — or the features are too wide: then
    ``lr_seconds`` is None), what the held-out rows are, the evaluation's name (the result
    list's) and its tag (the download's)."""

    result: object
    truth: np.ndarray
    proba: np.ndarray
    cuts: np.ndarray
    yard: pd.DataFrame
    lr_yard: LRYardstick | None
    lr_seconds: float | None
    folds: int
    held_rows: str
    name: str
    tag: str
    caption: str | None = None

    @property
    def lr(self) -> pd.DataFrame | None:
        """The tuned LR's summary (None: not computed)."""
        return None if self.lr_yard is None else self.lr_yard.summary

    @property
    def lr_empty(self) -> int | None:
        """The held-out rows the tuned LR gives no label (None: not computed)."""
        return None if self.lr_yard is None else self.lr_yard.empty

    @property
    def lr_offer(self) -> str | None:
        """The button that fits the tuned LR yardstick when its estimate was above the
        budget ("Fit the tuned LR yardstick (about 4.3 h)"), else None."""
        if self.lr_yard is not None or self.lr_seconds is None:
            return None
        return f"Fit the tuned LR yardstick (about {duration(self.lr_seconds)})"

    @property
    def summary(self) -> pd.DataFrame:
        return self.result.summary

    @property
    def kfold(self) -> bool:
        """Several folds: each metric a mean with its sd, the folds listed."""
        return self.folds > 1

    @property
    def one_split(self) -> bool:
        """One split (a hold-out or the test file): no spread and no folds to list (issue
        #46, item 13)."""
        return not self.kfold


@dataclass(frozen=True)
class Tile:
    """A metric as ``st.metric`` shows it: ``label``, ``value``, the ``beside`` line (a
    delta, uncoloured unless ``colour``), its ``help``."""

    label: str
    value: str
    beside: str | None = None
    help: str | None = None
    colour: str = "off"


def headline(ds, spec, other=None) -> str:
    """The line above the metrics (Markdown): the model, its γ and λ, the data, and which of
    them were set on other data (``other``: symbol -> what set it)."""
    other = {k: v for k, v in (other or {}).items() if k == "γ" or spec.l1}
    return (
        f"**{spec.model}** with {settings_label(spec.gamma, spec.lam)} on **{esc_md(ds.name)}**"
        + "".join(f" · {k} set by {how} on other data" for k, how in other.items())
        + (" (reset in the sidebar)" if other else "")
    )


def fits_of(ds, scheme) -> float:
    """Layer fits of the model an evaluation by ``scheme`` makes, for what it costs said
    before it starts: one a split and one on all rows (the decision the page reads), each
    with its cuts on multi-label data (:data:`sblr.protocol.COST_CUT_FITS` fits)."""
    splits = {"holdout": 1, "kfold": scheme.n_splits}.get(scheme.kind, 0)
    return (splits + 1) * (COST_CUT_FITS if ds.is_multilabel else 1.0)


def evaluate(ds, spec, scheme, test=None, progress=None) -> Evaluated:
    """The sidebar's model ``spec`` evaluated on the splits of ``scheme`` (a hold-out or
    k-fold :class:`Scheme`; ``progress(fraction, text)`` as the work goes, within a fold too),
    or fitted on every row and scored on the rows of ``test``, a data set read like ``ds``;
    beside it the yardsticks on the same rows (the tuned LR when its estimate is within the
    budget or it was computed: :func:`~pages._shared.long_jobs.lr_yardstick_shown`)."""
    if test is not None:
        fitted = cached_fit(ds, spec, decided=True)  # first: its progress drawn class by class
        result, truth, proba, yard = test_scores(ds, spec, test)
        lr, seconds = lr_yardstick_shown(ds, scheme, test)
        cuts = decision_cuts(fitted, proba)
        return Evaluated(
            result, truth, proba, cuts, yard, lr, seconds,
            folds=1,
            held_rows="rows of the test file",
            name=f"test file {test.name}",
            tag=f"test-{test.name}",
            caption=f"Trained on all {ds.n_samples:,} rows of {esc_md(ds.name)}, scored on "
            f"the {test.n_samples:,} rows of {esc_md(test.name)}.",
        )  # fmt: skip
    result = evaluation(ds, spec, scheme, progress=progress)
    truth, proba = held_out_probabilities(ds, spec, scheme)
    lr, seconds = lr_yardstick_shown(ds, scheme)
    kfold = scheme.kind == "kfold"
    return Evaluated(
        result, truth, proba, held_out_cuts(ds, spec, scheme), yardstick(ds, scheme), lr, seconds,
        folds=scheme.n_splits if kfold else 1,
        held_rows="held-out rows",
        name=f"{scheme.n_splits}-fold CV" if kfold else f"hold-out {scheme.test_size:.0%}",
        tag=f"{scheme.n_splits}fold" if kfold else f"holdout-{scheme.test_size:.0%}",
    )  # fmt: skip


def lr_caption(ds, ev: Evaluated) -> str:
    """What the LR beside every metric is (its choice), or what fitting it would cost."""
    chosen = (
        "C chosen from 0.01, 0.1, 1, 10, 100 and one cut on the probabilities, both for micro-F1"
        if ds.is_multilabel
        else "C chosen from 0.01, 0.1, 1, 10, 100 for accuracy"
    )
    if ev.lr_yard is not None:
        return (
            f"{ev.lr_yard.label}: scikit-learn's logistic regression as a user tuning it fits "
            f"it, {chosen} on 5 inner folds of the training rows."
        )
    if ev.lr_seconds is None:
        return "No LR yardstick: the features are too wide to make dense."
    return (
        f"The LR yardstick (scikit-learn's logistic regression, {chosen} on 5 inner folds of "
        f"the training rows: {'26 fits per label' if ds.is_multilabel else '26 fits'} and "
        f"training split) would take about {duration(ev.lr_seconds)} of one core here, so it "
        "is fitted only when asked. Once fitted it is kept for every user of this server."
    )


def yardstick_rules(ds, summary) -> dict[str, str]:
    """What the trivial yardstick does, metric by metric."""
    nothing = yardstick_predicts_nothing(ds)
    return {
        name: (
            "rank by frequency"
            if ds.is_multilabel and name in metrics.SCORE_METRICS
            else "predict nothing"
            if ds.is_multilabel and nothing
            else "frequent labels only"
            if ds.is_multilabel
            else "majority class"
        )
        for name in summary.index
    }


def shown_metrics(ds, summary) -> list:
    """The headline metrics in order (None: the tile of rows given no label)."""
    return list(MULTILABEL_TILES) if ds.is_multilabel else list(summary.index)


def _empty_tile(ds, ev) -> Tile:
    empty = metrics.decision_counts(ev.truth, ev.proba, ev.cuts)
    truth_empty = int((np.asarray(ev.truth).sum(axis=1) == 0).sum())
    return Tile(
        "Rows with no label",
        f"{empty['empty_rows']:,} of {empty['rows']:,}",
        f"truth: {truth_empty:,}"
        + (f" · LR (tuned): {ev.lr_empty:,}" if ev.lr_empty is not None else ""),
        "Test rows for which the model predicts no class at all, beside the test rows that "
        "truly have none and LR's count (scikit-learn's one-vs-rest logistic regression, C "
        "and its cut tuned on the training rows). Many more than the truth: the model is close "
        "to predicting nothing, whatever its Hamming loss says.",
    )


def tiles(ds, ev: Evaluated) -> list[Tile]:
    """The metric tiles at the top of the page, in their order: the model's mean (± its sd
    over k folds) beside LR's and the yardstick's on the same rows; multi-label data also the
    rows given no label, and a macro-F1 over the classes seen where some were not (issue
    #46, item 11)."""
    summary, rules, out = ev.summary, yardstick_rules(ds, ev.summary), []
    for name in shown_metrics(ds, summary):
        if name is None:
            out.append(_empty_tile(ds, ev))
            continue
        row = summary.loc[name]
        spread = f" ± {row['std']:.3f}" if ev.kfold else ""
        label, value, beside = row["label"], f"{row['mean']:.3f}{spread}", ""
        if name == "macro_f1" and ev.one_split and ds.is_multilabel:
            # classes in no held-out row and never predicted count as F1 = 1 in Mulan's
            # macro-F1 (0.736 above a micro-F1 of 0.715 on a small hold-out)
            seen, n_seen = metrics.macro_f1_seen(ev.truth, ev.proba, ev.cuts)
            if n_seen < ds.n_classes:
                label = f"Macro-F1 ↑ over the {n_seen} classes seen"
                value = f"{seen:.3f}" if n_seen else "–"
                beside = f"all {ds.n_classes}, unseen = 1: {row['mean']:.3f} · "
        lr = f"LR (tuned): {ev.lr.loc[name, 'mean']:.3f} · " if ev.lr is not None else ""
        out.append(
            Tile(
                label,
                value,
                f"{beside}{lr}{rules[name]}: {ev.yard.loc[name, 'mean']:.3f}",
                _tile_help(ds, ev, bool(beside)),
            )
        )
    return out


def _tile_help(ds, ev, seen) -> str:
    return (
        "Beside it, on the same rows: LR, scikit-learn's logistic regression on the features "
        "scaled to [-1, 1] (one-vs-rest per label), the model one would fit instead, tuned as "
        "a user would (C and one micro-F1 cut chosen on 5 inner folds of the training rows)"
        + (f": {ev.lr_yard.label}" if ev.lr_yard is not None else ", when it is fitted")
        + "; and a yardstick that ignores the features: "
        + (
            "every row gets the training frequency of each label as its score, and only "
            "labels that more than half the training rows carry are predicted."
            if ds.is_multilabel
            else "always the training rows' most frequent class."
        )
        + (f" ± is the sd over the {ev.folds} folds (not a change)." if ev.kfold else "")
        + (
            " Macro-F1 over the classes seen: the mean F1 of the classes that are true or "
            f"predicted in some of the {ev.held_rows}; the others (neither) count as F1 = 1 in "
            "Mulan's macro-F1, given beside it, as are LR's and the yardstick's."
            if seen
            else ""
        )
    )


def more_metrics(ds, ev) -> pd.DataFrame:
    """Every metric beside the yardstick's (and its rule) and LR's, as text (multi-label
    data's "More metrics"; no sd column for one split)."""
    rules = yardstick_rules(ds, ev.summary)
    table = ev.summary.assign(
        yardstick=ev.yard["mean"], yardstick_rule=[rules[n] for n in ev.summary.index]
    )
    if ev.lr is not None:
        table = table.assign(**{ev.lr_yard.label: ev.lr["mean"].reindex(table.index)})
    if ev.one_split:
        table = table.drop(columns="std", errors="ignore")
    return text_table(table, precision=4)


# ----------------------------------------------------------------------------- result list
def record(ds, s, ev, data_key) -> dict:
    """The evaluation ``ev`` of the sidebar's settings ``s`` as a row of the session's result
    list (Weka's: every evaluation of the session side by side, so a student shows how λ
    changed the scores without writing them down), its metrics in the headline's order;
    ``_setting`` (hidden) restores it."""
    spec = s.spec
    model = cached_fit(ds, spec, decided=True)
    summary = ev.summary
    first = [m for m in shown_metrics(ds, summary) if m is not None and m in summary.index]
    ordered = first + [m for m in summary.index if m not in first]
    out = {
        "data": ds.name,
        "model": spec.model,
        "γ": fmt_gamma(spec.gamma),
        "γ value": float(getattr(model, "gamma_", float("nan"))),  # "scale" resolved
        "λ": fmt_value(spec.lam) if spec.l1 else "–",
        "evaluation": ev.name,
    } | {summary.loc[m, "label"]: float(summary.loc[m, "mean"]) for m in ordered}
    if ds.is_multilabel:
        empty = metrics.decision_counts(ev.truth, ev.proba, ev.cuts)
        out["rows with no label"] = f"{empty['empty_rows']:,} of {empty['rows']:,}"
        out["decision"] = Decision.of(model).describe()
    out["_setting"] = (data_key, s.model, s.gamma, s.lam)
    return out


def remember(results: list, new: dict) -> list:
    """``results`` (the session's list, changed in place) with ``new`` added last unless an
    evaluation of the same settings is listed, at most :data:`RESULT_LIST_MAX`."""
    if not any(all(r.get(c) == new[c] for c in SETTINGS) for r in results):
        results.append(new)
        del results[:-RESULT_LIST_MAX]
    return results


@dataclass(frozen=True)
class ResultList:
    """The session's result list as the page shows it (``table``, text), as its download
    writes it (``plain``: plain headers, no arrows, no Greek) and the settings of this data
    that can be restored (``restorable``: list index -> its label)."""

    table: pd.DataFrame
    plain: pd.DataFrame
    restorable: dict
    file_name: str


def result_list(results, data_key) -> ResultList:
    listed = pd.DataFrame(results).drop(columns="_setting", errors="ignore")
    numeric = [c for c in listed.columns if c not in SETTINGS and listed[c].dtype.kind == "f"]
    table = text_table(listed, formats={c: "{:.3f}" for c in numeric} | {"γ value": "{:.4g}"})
    plain = {label: name for name, label in metrics.METRIC_LABELS.items()}
    plain |= {"γ": "gamma", "γ value": "gamma_value", "λ": "lambda"}
    restorable = {
        i: f"{i + 1}: {r['model']}, "
        + settings_label(r["_setting"][2], r["_setting"][3] if r["λ"] != "–" else None)
        + f" ({r['evaluation']})"
        for i, r in enumerate(results)
        if r.get("_setting", (None,))[0] == data_key
    }
    plain_table = listed.rename(columns=plain).astype(object).fillna("–")
    return ResultList(table, plain_table, restorable, result_list_filename(listed["data"]))


# ----------------------------------------------------------------------------- the threshold
@dataclass(frozen=True)
class ThresholdView:
    """The per-class section: the metrics at the threshold (multi-label), what the decisions
    leave out, every class's report, and class k's precision-recall curve (its arrays and
    the cut marked on it) or why it has none."""

    tiles: list[Tile]
    warning: str | None
    notes: list[str]
    report: pd.DataFrame
    curve: dict | None  # sblr.plots.pr_curve_figure's arguments
    curve_caption: str


def threshold_intro(spec) -> str:
    """What the threshold does (multi-label data)."""
    return (
        "Every test row's probabilities are kept, so moving the threshold recomputes these "
        "numbers at once, without refitting. Class k is predicted when πₖ ≥ threshold"
        + ("." if spec.learns_beta else f" ({spec.model}'s scores are ranks, not probabilities).")
    )


def decision_caption(ds, spec, ev) -> str:
    """What decides a held-out row (multi-label data; before the threshold is moved), or
    that multi-class data have no threshold to move."""
    if not ds.is_multilabel:
        return (
            "Multi-class: the predicted class is the one with the largest π, so there is no "
            "threshold to move; the curve below shows how class k alone would trade precision "
            "for recall."
        )
    decision = Decision.of(cached_fit(ds, spec, decided=True))
    if decision.kind != "cut":
        return f"The model's decision: {decision.describe()} (π ≥ 0.5 on its scores)."
    return f"The model's decision: {decision.describe()} (fitted on all rows" + (
        "; each fold's model fitted its own on its training rows)." if ev.kfold else ")."
    )


def threshold_view(ds, spec, ev, k, threshold=None) -> ThresholdView:
    """The section at class ``k`` with ``threshold`` (a cut of the user's for every class;
    None: each held-out row decided by its model's cuts)."""
    tiles_, warning, notes, cut = [], None, [], None
    decide = ev.cuts if threshold is None else threshold
    if ds.is_multilabel:
        tiles_ = _threshold_tiles(ev, threshold)
        warning, notes = _left_out(ds, spec, ev, decide)
        model_cut = Decision.of(cached_fit(ds, spec, decided=True)).cut(k)
        cut = model_cut if threshold is None else threshold
    report = metrics.per_label_report(
        ev.truth, ev.proba, threshold=decide if ds.is_multilabel else 0.5,
        class_names=ds.class_names,
    )  # fmt: skip
    truth = np.asarray(ev.truth)
    Y = truth if truth.ndim == 2 else np.eye(ds.n_classes, dtype=int)[truth]  # 0/1 columns
    name, carries = esc_md(ds.class_names[k]), Y[:, k] == 1
    if not carries.any():
        best = int(np.argmax(Y.sum(axis=0)))
        return ThresholdView(
            tiles_, warning, notes, report, None,
            f"No test row carries “{name}”, so its precision-recall curve has nothing to show. "
            f"Choose another class k in the sidebar, e.g. “{esc_md(ds.class_names[best])}” "
            f"({int(Y[:, best].sum())} of {len(Y)} test rows carry it).",
        )  # fmt: skip
    precision, recall, cuts, ap = metrics.pr_curve(carries, ev.proba[:, k])
    curve = dict(
        precision=precision, recall=recall, thresholds=cuts, class_name=ds.class_names[k],
        average_precision=ap, threshold=cut,
    )  # fmt: skip
    return ThresholdView(
        tiles_, warning, notes, report, curve,
        f"For the sidebar's class “{name}”: {int(carries.sum())} of {len(Y)} test rows carry "
        "it. An empty cell (–) in the table is undefined: a class never predicted has no "
        "precision, one that never occurs has no recall.",
    )  # fmt: skip


def _threshold_tiles(ev, threshold) -> list[Tile]:
    """The multi-label decision metrics at ``threshold`` (None: the models' cuts), each with
    its change from the models' cuts when the user moved it."""
    at = metrics.threshold_report(ev.truth, ev.proba, ev.cuts if threshold is None else threshold)
    at_model = metrics.threshold_report(ev.truth, ev.proba, ev.cuts)
    out = []
    for name, value in at.items():
        change = value - at_model[name]
        moved = threshold is not None and round(change, 3) != 0  # no arrow for "+0.000"
        beside = f"{change:+.3f} vs the model's cut".replace("+0.000", "±0.000")
        colour = "inverse" if metrics.LOWER_IS_BETTER[name] else "normal"
        out.append(
            Tile(
                metrics.METRIC_LABELS[name],
                f"{value:.3f}",
                None if threshold is None else beside,
                colour=colour if moved else "off",
            )
        )
    return out


def _left_out(ds, spec, ev, decide):
    """The warning when nothing is predicted, and the notes of rows and classes left out."""
    counts = metrics.decision_counts(ev.truth, ev.proba, decide)
    warning, notes = None, []
    if counts["empty_rows"] == counts["rows"]:
        warning = (
            f"At this threshold {spec.model} predicts no label for any of the "
            f"{counts['rows']:,} {ev.held_rows}, so nothing is predicted (micro-F1 is 0 and "
            "precision undefined). Lower the threshold"
            + (", or λ (or let Tune choose it)." if spec.l1 else ".")
        )
    elif counts["empty_rows"]:
        notes.append(
            f"{spec.model} predicts no label for {counts['empty_rows']:,} of the "
            f"{counts['rows']:,} {ev.held_rows} at this threshold."
        )
    if counts["absent_labels"]:
        notes.append(
            f"{counts['absent_labels']} of {ds.n_classes} classes occur in none of the "
            f"{ev.held_rows} and are never predicted: macro-F1 counts each as F1 = 1 (Mulan's "
            "convention, so micro- and macro-F1 can differ a lot; the tile at the top leaves "
            "them out); the table below leaves their F1 empty."
        )
    return warning, notes


# ----------------------------------------------------------------------------- Tune
def tune_schemes(spec) -> list[str]:
    """Tune's selections for the model: one-SE picks the largest λ within one standard
    error, so it is offered with λ only."""
    return [x for x in TUNE_SCHEMES if spec.l1 or "one-SE" not in x]


def tune_view(ds, spec, scheme: Scheme, how: str) -> tuple[str, Scheme, int]:
    """What Tune searches, said under its button, the rows it searches on (the hold-out's
    training rows, or every row when ``scheme`` is "all": a supplied test file holds the test
    rows) and the number of its grid points (over its folds)."""
    on_all = scheme.kind == "all"
    caption = (
        "Searches the paper's grid {10², 10¹, …, 10⁻⁵} for γ"
        + (" and λ" if spec.l1 else "")
        + (
            f" on all {ds.n_samples:,} rows of the data in use (the test file is kept apart) ("
            if on_all
            else f" on the {1 - scheme.test_size:.0%} training rows of the hold-out split ("
        )
        + ("one 10% validation split" if "10%" in how else "inner 5-fold CV")
        + "), never on test rows, then moves the sliders to the choice."
        + (
            " (With k-fold evaluation every row is a test row once, so scores after tuning are "
            "slightly optimistic; use the hold-out split for an unbiased estimate.)"
            if scheme.kind == "kfold"
            else ""
        )
    )
    rows = Scheme("all") if on_all else Scheme("holdout", scheme.test_size)
    points = (TUNE_SCHEMES[how][0] or 1) * len(PAPER_GRID) * (len(PAPER_GRID) if spec.l1 else 1)
    return caption, rows, points


@dataclass(frozen=True)
class TunedView:
    """What the page says after Tune: a warning when the hold-out changed since, the result
    (its score and choice, and the headline now beside the one before), what lies at the
    grid's edge, and the scores of every grid point."""

    stale: str | None
    message: str
    edges: str | None
    scores: pd.DataFrame
    metric_label: str
    best: dict


def tuned_view(tuning, ev, test_size, before=None) -> TunedView:
    """The view of ``tuning``, ``(model, share, how, res)``: the result ``res`` of tuning
    ``model`` by ``how`` on the training rows of a hold-out of ``share``, under the evaluation
    ``ev`` of a hold-out of ``test_size`` (None: not a hold-out); ``before``: the headline
    metric's (label, value) before tuning."""
    model, share, how, res = tuning
    stale = None
    if test_size is not None and share != test_size:
        stale = (
            f"The sliders were tuned on the training rows of a {share:.0%} hold-out split; "
            f"with a {test_size:.0%} test share some of those rows are now test rows, so these "
            "scores are optimistic. Tune again."
        )
    now = ""
    labels = list(ev.summary["label"])
    if before and before[0] in labels:
        row = ev.summary.index[labels.index(before[0])]
        now = (
            f" At the top of the page, {esc_md(ev.name)}: {before[0].rstrip(' ↑↓')} "
            f"{float(ev.summary.loc[row, 'mean']):.3f} (before tuning {before[1]:.3f})."
        )
    metric = metrics.METRIC_LABELS[res.metric]
    message = (
        f"{model}, {how}: validation {metric.rstrip(' ↑↓')} {res.best_score:.3f} at "
        f"{settings_label(**res.best_params)}; the sliders now show it.{now}"
    )
    edges = [
        settings_label(**{k: v})
        + " is the grid's "
        + ("largest" if v == max(PAPER_GRID) else "smallest")
        for k, v in res.best_params.items()
        if v in (max(PAPER_GRID), min(PAPER_GRID))
    ]
    edge = (
        f"{'; '.join(edges)}: the best value may lie beyond the grid, so read the tuned model "
        "as the best of these values, not the best there is."
        if edges
        else None
    )
    return TunedView(stale, message, edge, res.scores, metric, res.best_params)


def headline_metric(ds, ev) -> tuple[str, float]:
    """The first headline metric's (label, value): said again after tuning, beside the
    value it then has."""
    shown = [m for m in shown_metrics(ds, ev.summary) if m is not None and m in ev.summary.index]
    first = shown[0] if shown else ev.summary.index[0]
    return ev.summary.loc[first, "label"], float(ev.summary.loc[first, "mean"])
