"""The Explain a prediction page's view, in the page's three steps: the model explained and the
rows to pick from (:func:`rows`), the baseline a row's credits start from (:func:`baseline`),
and the row explained (:func:`explain`): its probabilities, waterfall, the three models on it
and the features behind its logit (``pages/explain.py`` draws it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from pages._shared.cache import (
    attribution,
    cached_fit,
    fit_plan,
    sml_without_row,
    training_evidence,
)
from pages._shared.formatting import context_name, dense_row, esc_md, fmt_value
from pages._shared.questions import RowQuestion, Spec
from pages._shared.state import MODEL_NAMES
from sblr.attribution import nearest_contrast
from sblr.decision import Decision
from sblr.interpret import all_alike_reason, evidence_sd, instance_contributions, select_rows
from sblr.registry import SPARSE_SBLR

__all__ = [
    "CREDITS",
    "EXPLAINED_INSTEAD",
    "INTRO",
    "INTRO_LATEX",
    "SMALL_LOGIT_GAP",
    "Baseline",
    "Explanation",
    "Rows",
    "baseline",
    "explain",
    "rows",
    "top_credits",
]

#: Logits closer than this (row and baseline) are called "almost the same": the credits
#: then split a change of less than a tenth of a logit (planted row 0: 0.07).
SMALL_LOGIT_GAP = 0.1
#: The ranks of the table of the three models' largest credits.
RANKS = ["largest", "2nd", "3rd", "4th", "5th"]

INTRO = (
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
INTRO_LATEX = (
    r"\text{logit}_k(x)=\beta_0^k+\sum_t \beta_t^k\,\bar f_t(x),\qquad"
    r"\pi_k=\frac{1}{1+e^{-\text{logit}_k(x)}}"
)
#: "How are features credited?"
CREDITS = (
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


#: The model explained where the sidebar's learns no β.
EXPLAINED_INSTEAD = f"{SPARSE_SBLR.label} with the sidebar's γ and λ"


# ----------------------------------------------------------------------------- the rows
@dataclass(frozen=True, eq=False)
class Rows:
    """The model explained (the sidebar's, or SparseSBLR where it learns no β), fitted on all
    rows with its decision, and its in-sample decisions (leave-one-out evidence ``F``): the
    truth ``Y`` and the predictions ``pred`` as 0/1 matrices for either task."""

    ds: object
    s: object
    spec: Spec
    model: object
    F: np.ndarray
    Y: np.ndarray
    pred: np.ndarray
    filters: dict  # the row picker's choices: key -> text (plain: a select box's options)

    @property
    def name(self) -> str:
        return self.spec.model

    @property
    def pred_k(self) -> np.ndarray:
        """Whether the model gives each row the sidebar's class."""
        return self.pred[:, self.s.k] == 1

    def matching(self, which) -> np.ndarray:
        """The rows of the picker's choice ``which`` (a key of ``filters``)."""
        return select_rows(self.Y, self.pred, which=which, k=self.s.k)

    def fit(self, name):
        """Model ``name`` at the sidebar's γ and λ, with its decision (the one explained:
        itself)."""
        if name == self.name:
            return self.model
        return cached_fit(self.ds, self.s.spec_for(name), decided=True)

    def credits(self, fitted, name, question, fit_without=None):
        """Feature credits of ``question`` (a :class:`RowQuestion`) for the fitted model
        ``name``, in a job slot and cached (named by its kind, γ, λ and ``fit_without``, the
        row its fit left out: SML's of a training row)."""
        lam = Spec.of(name, self.s.gamma, self.s.lam).lam  # λ only where the model takes one
        return attribution(fitted, (name, self.s.gamma, lam, fit_without), self.ds, question)


def rows(ds, s) -> Rows:
    """The model the page explains at the sidebar's settings ``s`` and the row picker's
    choices for the sidebar's class."""
    spec = s.spec if s.spec.learns_beta else Spec.of(SPARSE_SBLR, s.gamma, s.lam)
    model = cached_fit(ds, s.spec_for(spec.model), decided=True)
    F = training_evidence(ds, s.gamma)
    # in-sample predictions from the leave-one-out evidence (each row without itself)
    Y, pred = ds.label_matrix(), ds.indicator_of(model.predict_from_evidence(F))
    k, plain_k = s.k, ds.class_names[s.k]  # a select box shows its options as plain text
    true_k, pred_k = Y[:, k] == 1, pred[:, k] == 1
    n_fn, n_fp = int((true_k & ~pred_k).sum()), int((pred_k & ~true_k).sum())
    n_any = len(select_rows(Y, pred, which="misclassified"))
    filters = {
        "all": "all rows",
        "false_negative": f"“{plain_k}” missed ({n_fn:,})",
        "false_positive": f"“{plain_k}” wrongly given ({n_fp:,})",
        "misclassified": (
            f"any label wrong ({n_any:,})" if ds.is_multilabel else f"misclassified ({n_any:,})"
        ),
        "true": f"true class includes “{plain_k}”",
        "predicted": f"predicted as “{plain_k}”",
    }
    return Rows(ds, s, spec, model, F, Y, pred, filters)


# ----------------------------------------------------------------------------- the baseline
@dataclass(frozen=True, eq=False)
class Baseline:
    """Where a row's credits start: the ``choices`` (key -> text), the row ``values`` (None:
    the training mean), the training row ``contrast`` it is (or None), and the ``caption``
    that says which row that is and why (None: no caption)."""

    choices: dict
    values: np.ndarray | None
    contrast: int | None
    caption: str | None


def baseline(rows, row, choice) -> Baseline:
    """The baseline ``choice`` ("contrast", "mean", "zero") for training row ``row``."""
    ds, k, name = rows.ds, rows.s.k, rows.name
    name_k = esc_md(ds.class_names[k])  # Markdown: the radio's options and the caption
    given = bool(rows.pred_k[row])
    choices = {
        "contrast": (
            f"the most similar training row {name} does not give “{name_k}”"
            if given
            else f"the most similar training row {name} gives “{name_k}”"
        ),
        "mean": "the average training row",
        "zero": "an all-zero row",
    }
    if choice != "contrast":
        values = None if choice == "mean" else np.zeros(ds.n_features)
        return Baseline(choices, values, None, None)
    # the other side of the MODEL's decision for k: the credits then say why the model
    # decides differently here (by the labels, the row and its baseline were often decided
    # alike, and the credits explained almost nothing)
    x_row, truth = dense_row(ds.X, row), rows.Y[row]
    contrast = nearest_contrast(rows.model, x_row, k, among=rows.pred_k != given, exclude=row)
    if contrast is None:  # the model decides every training row alike: the labels' side
        contrast = nearest_contrast(rows.model, x_row, k, member=bool(truth[k]), exclude=row)
        every = bool(rows.pred_k.all())
        reason = all_alike_reason(rows.model, rows.F, k, every)
        why = (
            f"{name} gives “{name_k}” to {'every' if every else 'no'} training row "
            f"({reason}), so this is the nearest row whose true classes "
            f"{'lack' if truth[k] else 'include'} it"
        )
    else:
        why = f"the nearest row that {name} decides the other way for “{name_k}”"
    if contrast is None:
        caption = (
            f"No training row is on the other side for “{name_k}”: compared with the average row."
        )
        return Baseline(choices, None, None, caption)
    other = [ds.class_names[t] for t in np.flatnonzero(rows.Y[contrast])]
    shown = ", ".join(esc_md(n) for n in other[:8]) or "none"
    if len(other) > 8:
        shown += f" and {len(other) - 8} more"
    caption = (
        f"Baseline: training row {contrast} (true classes: {shown}), {why}, on the "
        "scaled features as the RBF kernel measures distance."
    )
    return Baseline(choices, dense_row(ds.X, contrast), contrast, caption)


# ----------------------------------------------------------------------------- the row explained
@dataclass(frozen=True, eq=False)
class Explanation:
    """One row explained for the sidebar's class k: by the model explained (``ic``, its
    ``waterfall`` and probabilities), by the three models side by side (``models``), and the
    features behind k's logit (``credits``: each model's; ``fa``: the explained model's)."""

    what: str  # "row 3", "row 3 (edited)"
    edited: bool
    truth: str  # the caption of the row's true classes (Markdown)
    ic: object  # sblr.interpret.InstanceContributions
    waterfall: pd.DataFrame
    proba: np.ndarray  # as the bars show them (multi-class: divided by their sum)
    cut: float | None  # the cut of class k (None: an argmax rule)
    cuts: np.ndarray | None
    models: pd.DataFrame  # the three models on this row
    score: str  # the models table's score column
    why: str  # the heading over the waterfall (Markdown)
    why_caption: str | None
    keeps_none: str | None  # the model keeps no class for k: the waterfall's note
    credits: dict  # model name -> sblr.attribution.FeatureAttribution
    no_credit: str | None  # why the feature waterfall is not drawn
    logit_line: str | None  # this row's and the baseline's logit and π
    small_gap: str | None
    credits_sum: str  # the credits add up to logit(x) − logit(x′)
    top: pd.DataFrame  # the three models' largest credits, one column per model
    fa: object  # the explained model's credits (sblr.attribution.FeatureAttribution)


def explain(rows, row, x, start, original) -> Explanation:
    """Training row ``row`` with the values ``x`` (edited, or its own), its credits from the
    baseline ``start`` (a :class:`Baseline`); ``original``: the explained model's credits of
    the unedited row (computed for the what-if editor's order, not again)."""
    ds, s, model, k = rows.ds, rows.s, rows.model, rows.s.k
    x_row, truth = dense_row(ds.X, row), rows.Y[row]
    edited = not np.array_equal(x, x_row)
    evidence = model.evidence(x[None, :])[0] if edited else rows.F[row]
    ic = instance_contributions(model, evidence=evidence)
    proba = model.proba_from_evidence(evidence[None, :])[0]
    chosen = Decision.of(model)
    name_k = esc_md(ds.class_names[k])
    true_names = ", ".join(esc_md(n) for n, t in zip(ds.class_names, truth, strict=True) if t)
    how = (
        " · features edited: explained as a new query (every training row counts)"
        if edited
        else " · explained with its leave-one-out evidence, as the model saw it in training"
    )
    models, credits = _three_models(rows, row, x, start, (evidence, edited, original))
    fa = credits[rows.name]
    keeps = bool(model.coef_[k].any())
    base = fa.output_baseline
    if ds.is_multilabel:
        why, why_caption = f"Why π = {ic.proba[k]:.3f} for “{name_k}”", None
    else:
        why = f"Why “{name_k}” gets {proba[k]:.3f}"
        why_caption = (
            f"Multi-class: each class's own model gives σ(logit) ({ic.proba[k]:.3f} for this "
            f"class); the bars and the table divide these by their sum, so they add up to 1 "
            f"({proba[k]:.3f} here). The class with the largest logit is predicted. The "
            "waterfall splits the logit."
        )
    lam, name = fmt_value(s.lam), rows.name
    no_credit = None
    if not keeps:
        no_credit = (
            f"{name} keeps no class for “{name_k}” at λ = {lam}: its logit is the intercept "
            "for every row, so no feature moves it and every credit is 0. Lower λ in the "
            "sidebar, or choose SBLR, to see features at work."
        )
    elif not fa.attributions.any():
        no_credit = (
            "Every credit is 0: the logit is the same for this row and the baseline all along "
            "the path (the evidence is 0 there: every training row is far away at this γ)."
        )
    gap = abs(fa.output - base)
    base_text = f"({base:.4g})" if base < 0 else f"{base:.4g}"  # "5.41 − (−1.93)", not "− -1.93"
    return Explanation(
        what=f"row {row}" + (" (edited)" if edited else ""),
        edited=edited,
        truth="True classes of this row: " + (true_names or "none") + how,
        ic=ic,
        waterfall=ic.waterfall(k, ds.class_names, evidence_sd=evidence_sd(rows.F)),
        proba=proba,
        cut=chosen.cut(k) if chosen.kind != "argmax" else None,
        cuts=chosen.cuts if chosen.kind != "argmax" else None,
        models=models,
        score=f"score of “{ds.class_names[k]}”",
        why=why,
        why_caption=why_caption,
        keeps_none=None
        if keeps
        else (
            f"{name} keeps no class for “{name_k}” at λ = {lam}: every β of its logit is 0, so "
            f"the logit is the intercept β₀ = {ic.logits[k]:.3f} for every row and no class's "
            "evidence moves it. Lower λ in the sidebar, or choose SBLR, to see which classes "
            "push it up or down."
        ),
        credits=credits,
        no_credit=no_credit,
        logit_line=(
            f"This row: logit {fa.output:.3f} (π = {expit(fa.output):.3f}) · baseline x′: "
            f"logit {base:.3f} (π = {expit(base):.3f})"
        )
        if fa.quantity == "logit"
        else None,
        small_gap=(
            f"The row and its baseline get almost the same logit (they differ by {gap:.3f}), "
            "so every credit is small: the features explain little here. Compare with another "
            "row (the average row, or a row the model decides the other way) for a larger "
            "contrast."
        )
        if gap < SMALL_LOGIT_GAP and keeps
        else None,
        credits_sum=f"The {ds.n_features:,} credits add up to {fa.attributions.sum():.4g}; "
        f"logit(x) − logit(x′) = {fa.output:.4g} − {base_text} = {fa.output - base:.4g} "
        f"(rounding error {abs(fa.gap):.1e}).",
        top=top_credits(credits, s.gamma),
        fa=fa,
    )


def _three_models(rows, row, x, start, seen):
    """The three models on the row (predicted classes, score of class k) and each one's
    credits for class k, in the models' order; a model beside the explained one whose fit is
    past the budget of one done without asking (SBLR on 983 labels: hours) is not fitted,
    its row saying so, and has no credits."""
    ds, s, k = rows.ds, rows.s, rows.s.k
    evidence, edited, original = seen
    leave_out = None if edited else row
    side, credits = [], {}
    score = f"score of “{ds.class_names[k]}”"
    for other in MODEL_NAMES:
        spec = Spec.of(other, s.gamma, s.lam)
        plan = fit_plan(ds, spec)
        if other != rows.name and not plan.shown:
            not_fitted = f"not fitted: {plan.cost}"
            side.append({"model": spec.label, "predicted classes": not_fitted, score: np.nan})
            continue
        fitted = rows.fit(other)
        if not spec.learns_beta:  # SML: from the rows, not from the cached evidence
            if not edited:  # a training row: SML without it, as the others see it
                fitted = sml_without_row(ds, s.gamma, row)
            P, pred = fitted.predict_proba(x[None, :]), fitted.predict(x[None, :])
            question = RowQuestion(x, start.values, k)  # the row is out of the fit itself
            credits[other] = rows.credits(fitted, other, question, fit_without=leave_out)
        else:
            e = evidence[None, :]
            P, pred = fitted.proba_from_evidence(e), fitted.predict_from_evidence(e)
            if other == rows.name and not edited:
                credits[other] = original
            else:
                question = RowQuestion(x, start.values, k, leave_out)
                credits[other] = rows.credits(fitted, other, question)
        given = np.flatnonzero(ds.indicator_of(pred)[0])
        side.append(
            {
                "model": spec.label,
                "predicted classes": ", ".join(ds.class_names[t] for t in given) or "none",
                score: float(P[0, k]),
            }
        )
    return pd.DataFrame(side), credits


def top_credits(credits, gamma) -> pd.DataFrame:
    """The largest credits of each model (``credits``: name -> FeatureAttribution), one
    column per model and a row per rank: with a row per model, five long feature names side
    by side ran off the right edge of the page. Credits below the display's precision (three
    digits of the largest) are 0 to a reader, not "+3.29e-10": not listed."""
    columns = {"rank": RANKS}
    for name in (name for name in MODEL_NAMES if name in credits):
        fa = credits[name]
        top = fa.table(len(RANKS))
        largest = float(np.abs(fa.attributions).max(initial=0.0))
        top = top[top["attribution"].abs() > 5e-4 * largest]
        cells = {
            RANKS[i]: f"{feature} ({a:+.3g})"
            for i, (feature, a) in enumerate(zip(top["feature"], top["attribution"], strict=True))
        }
        cells = cells or {RANKS[0]: "none: no feature moves it"}
        credited = "logit" if Spec.of(name, gamma).learns_beta else "evidence"
        columns[f"{name} ({credited})"] = [cells.get(rank, "") for rank in RANKS]
    return pd.DataFrame(columns)


def credits_file(view, rows, row, choice):
    """The explained model's credits of the row as the CSV download has them."""
    ds, k = rows.ds, rows.s.k
    return view.fa.table().assign(
        row=row,
        edited=view.edited,
        **{"class": ds.class_names[k], "model": rows.name, "compared with": choice},
    )


def file_name(rows, row, *what, suffix):
    """A download's file name: the data, the model explained, the row and the class."""
    ds, k = rows.ds, rows.s.k
    spec = rows.s.spec_for(rows.name)
    return context_name(ds, spec, f"row{row}", ds.class_names[k], *what, suffix=suffix)


def importance_caption(importance) -> str:
    """The caption under the bars of a class's feature importance."""
    return (
        f"The same credits as above, for {importance.attrs['n_rows']:,} rows (a seeded "
        "sample, each walked from the average row, training rows without their own "
        "similarity), averaged as |credit|: a feature that moves the logit up for some rows "
        "and down for others still counts. The mark at a bar's end is the sign of the mean "
        "credit: + raises the class on average, − lowers it, ± both about as much."
    )
