"""The Coefficients β page's view: both models' β and β̃, whether they can be read, the
sparsity of SparseSBLR and the stability of its β (``pages/coefficients.py`` draws it)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from pages._shared.cache import (
    FitPlan,
    cached_fit,
    diagnostics,
    fit_beside,
    shared_figure,
    sparse_diagnostics,
    training_evidence,
)
from pages._shared.formatting import LOG_GRID, context_name, esc_md, fmt_value
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
from sblr.registry import SBLR, SPARSE_SBLR

__all__ = [
    "INTRO",
    "CoefficientsView",
    "StabilityView",
    "beta_figure",
    "coefficients",
    "download_name",
    "ranked",
    "stability",
]

#: "What am I looking at?": Markdown and LaTeX, in their order.
INTRO = (
    (
        "markdown",
        "Row k is the logistic model of class k; column t is the weight βₜᵏ it gives to the "
        "evidence of class t. A large positive βₜᵏ: rows similar to class t make class k more "
        "likely; negative: less likely; **exactly zero** (SparseSBLR): class t's evidence is "
        "left out of class k's model, because it is unrelated to k or because another "
        "class's evidence already carries the same information (the Class contributions page "
        "tells which). Both models are fitted on all rows with the sidebar's γ "
        "(SparseSBLR also with its λ). On the planted sample data, thunder's row should lean on "
        "rain's column (thunder only happens with rain), birdsong's on daylight's, and the noise "
        "label's column should be zero in SparseSBLR.",
    ),
    ("latex", r"\log\frac{\pi_k}{1-\pi_k}=\beta_0^k+\sum_{t=1}^m\beta_t^k\,\bar f_t(x)"),
    (
        "markdown",
        "Raw βₜᵏ depend on how much class t's evidence varies (a column that barely moves gets "
        "a huge β), so by default the page shows the **standardized** β̃ₜᵏ: the change of class "
        "k's logit when class t's evidence moves by one standard deviation (population sd over "
        "the training rows' leave-one-out evidence). β̃ are comparable across classes, γ and "
        "data sets; they are the coefficients of the same model fitted on standardized evidence.",
    ),
    ("latex", r"\tilde\beta_t^k=\beta_t^k\cdot\operatorname{sd}(\bar f_t)"),
)


@dataclass(frozen=True)
class CoefficientsView:
    """What the Coefficients page shows at the sidebar's γ and λ."""

    sparse_name: str  # SparseSBLR's panel: "SparseSBLR, λ = 1e-4"
    raw: dict  # panel name -> raw β (SparseSBLR first; SBLR's only where it is fitted)
    std: dict  # panel name -> β̃
    standardized: bool
    readable: bool  # SparseSBLR's β can be read one by one
    unreliable: bool  # SBLR's cannot
    note: str  # the identifiability warning (Markdown)
    why: list[str]  # its reasons, Markdown paragraphs
    rank_what: str  # the class slider's "(what)"
    rank_help: str
    approx: str | None  # the caption on approximate evidence
    summary: pd.DataFrame  # SparseSBLR's zeros class by class, with the page's column names
    sparsity: str  # the caption above it
    beside: FitPlan  # SBLR's: fitted here without asking, or why not (plan.sentence)
    class_names: list

    @property
    def shown(self) -> dict:
        return self.std if self.standardized else self.raw

    @property
    def models(self) -> str:
        """The models shown, in words ("SBLR and SparseSBLR", or SparseSBLR alone)."""
        return f"{SBLR.label} and {SPARSE_SBLR.label}" if len(self.raw) > 1 else SPARSE_SBLR.label

    @cached_property
    def table(self) -> pd.DataFrame:
        """β and β̃ of the models shown, the CSV download: made when asked (the download's
        click), not on every run (2 × 2 × 983² numbers on delicious)."""
        names = self.class_names
        return pd.concat(
            {
                (name, kind): pd.DataFrame(c, index=names, columns=names)
                for name in self.raw
                for kind, c in (("beta", self.raw[name]), ("beta_std", self.std[name]))
            },
            names=["model", "coefficient", "target class k"],
        )

    def ordered(self, classes):
        """The classes shown, related ones together (SparseSBLR's links clustered); as they
        are where its β cannot be read (no links)."""
        if classes is None or not self.readable:
            return classes
        return [int(t) for t in cluster_order(self.shown[self.sparse_name], classes)]


def coefficients(ds, s, standardized: bool) -> CoefficientsView:
    """The view of the sidebar's settings ``s``, β̃ if ``standardized``. SBLR's β beside
    SparseSBLR's only where its fit is within the budget of a fit done without asking, or
    fitted already (:func:`~pages._shared.cache.fit_beside`): on 983 labels it takes hours."""
    sblr_model, beside = fit_beside(ds, s.spec_for(SBLR))
    sparse_model = cached_fit(ds, s.spec_for(SPARSE_SBLR))
    sd = evidence_sd(training_evidence(ds, s.gamma))
    sparse_name = f"{SPARSE_SBLR.label}, λ = {fmt_value(s.lam)}"
    # SparseSBLR first: the readable model, and the one the sidebar's λ moves
    raw = {sparse_name: sparse_model.coef_}
    if sblr_model is not None:
        raw[SBLR.label] = sblr_model.coef_
    std = {name: standardized_coef(c, sd=sd) for name, c in raw.items()}
    diag = diagnostics(ds, s.gamma)
    kept = sparse_diagnostics(ds, s.spec_for(SPARSE_SBLR))
    lam_text, m = fmt_value(s.lam), ds.n_classes
    dense = sblr_model is not None
    if kept.readable:
        note = (
            f"**SBLR's coefficients cannot be read one by one here; SparseSBLR's can at λ = "
            f"{lam_text}**: the evidence each class keeps is not collinear."
            if dense
            else f"**SparseSBLR's coefficients can be read one by one at λ = {lam_text}**: "
            "the evidence each class keeps is not collinear."
        )
        rank_what = "SparseSBLR's top N by |β̃|" if standardized else "SparseSBLR's top N by |β|"
        rank_help = (
            "Classes ranked by SparseSBLR's largest |coefficient| in their row or column "
            "(their own weight left out"
            + ("; SBLR's orders the classes SparseSBLR leaves at 0" if dense else "")
            + f"), always with the sidebar's class. Up to {plots.MAX_TICK_LABELS} classes the "
            "chart names every row and column. The stability heatmap below shows the same "
            "classes."
        )
    else:
        note = (
            (
                "**Neither SBLR's nor SparseSBLR's coefficients can"
                if dense
                else "**SparseSBLR's coefficients cannot"
            )
            + f" be read one by one at λ = {lam_text}**: SparseSBLR still keeps collinear "
            f"evidence for {kept.unreadable.size} of {m} classes. Raise λ until the classes "
            "keep less."
        )
        rank_what = "the N most frequent"
        rank_help = (
            "Classes ranked by how many rows carry them (SparseSBLR's β cannot be read one by "
            "one at this λ, so they do not rank), always with the sidebar's class. Up to "
            f"{plots.MAX_TICK_LABELS} classes the chart names every row and column. The "
            "stability heatmap below shows the same classes."
        )
    why = [
        " ".join(esc_md(x) for x in diag.sentences(ds.class_names))
        + " Many different β then fit the data equally well, so single SBLR coefficients "
        "(even their signs) are not identifiable; SparseSBLR's are where the evidence "
        "columns it keeps are not collinear.",
        esc_md(kept.sentence(lam_text) + " " + kept.details(ds.class_names)).strip(),
    ]
    approx = None
    if sparse_model.approx_ is not None:
        approx = (
            f"Fitted on approximate evidence (Nyström, D = {sparse_model.n_components}): "
            f"{ds.n_samples:,} rows is past the exact method's size limit."
        )
    summary = sparsity_summary(sparse_model.coef_, ds.class_names)
    return CoefficientsView(
        sparse_name=sparse_name,
        raw=raw,
        std=std,
        standardized=standardized,
        readable=bool(kept.readable),
        unreliable=bool(diag.unreliable),
        note=note,
        why=why,
        rank_what=rank_what,
        rank_help=rank_help,
        approx=approx,
        summary=summary.rename(
            columns={
                "class": "target class k",
                "n_zero": "β = 0",
                "n_nonzero": "β ≠ 0",
                "irrelevant": "classes whose evidence is ignored",
            }
        ),
        sparsity=_sparsity(int(summary.n_zero.sum()), m, s.lam),
        beside=beside,
        class_names=list(ds.class_names),
    )


def ranked(ds, view, n, k):
    """The top ``n`` classes of the class slider, with class ``k``: by SparseSBLR's links
    where its β can be read (SBLR's only where SparseSBLR ties: its dense β is not
    identifiable with many classes and filled the top 30 with classes SparseSBLR leaves out),
    else by how many rows carry them (β that cannot be read cannot rank: a step of λ
    reshuffled the top N)."""
    if view.readable:
        shown = view.shown
        tiebreak = shown.get(SBLR.label)  # None where SBLR is not fitted
        return top_classes(shown[view.sparse_name], n, include=[k], tiebreak=tiebreak)
    return frequent_classes(ds.label_matrix(), n, include=[k])


def _sparsity(n_zero, m, lam) -> str:
    if n_zero == m * m:
        where = (
            "lower λ in the sidebar to let classes in"
            if lam > 10 ** min(LOG_GRID)
            else "λ is at its smallest: at this γ the evidence varies too little between rows "
            "for any class to enter; try another γ"
        )
        advice = f"no class's evidence enters any model; {where}."
    else:
        advice = "raise λ in the sidebar for more zeros, lower it for fewer."
    return (
        f"{n_zero} of {m * m} SparseSBLR coefficients are exactly zero at λ = {fmt_value(lam)}: "
        f"{advice} A zero means unrelated OR redundant (another class's evidence carries the "
        "same information): the Class contributions page reads each zero of the sidebar's class."
    )


def beta_figure(ds, s, view, display):
    """The β heatmaps of ``view`` as ``display`` = (signed colours, one colour scale, the
    classes shown in their order or None), built once for every session showing the same."""
    signed, shared_scale, classes = display
    key = (
        "beta",
        ds.fingerprint,
        str(s.gamma),
        float(s.lam),
        view.standardized,
        signed,
        shared_scale,
        tuple(int(c) for c in classes) if classes is not None else None,  # in their order
    )
    return shared_figure(
        key,
        lambda: plots.beta_heatmaps(
            view.shown,
            ds.class_names,
            cooccurrence=cooccurrence(ds.label_matrix()),
            signed=signed,
            raw=view.raw if view.standardized else None,
            lams={view.sparse_name: s.lam},
            shared_scale=shared_scale,
            classes=classes,
        ),
    )


@dataclass(frozen=True)
class StabilityView:
    """The stability of SparseSBLR's β for the sidebar's class: the heading, one line per
    class whose evidence it uses (Markdown, eight at most) and the table of every class."""

    heading: str
    lines: list[str]
    table: pd.DataFrame
    formats: dict


def stability(ds, s, result) -> StabilityView:
    """What the bootstrap ``result`` says of class ``s.k``."""
    k, names = s.k, ds.class_names
    freq = result.selection_frequency[k]
    order = sorted(range(ds.n_classes), key=lambda t: -freq[t])
    used = [t for t in order if freq[t] > 0]
    lines = ["- " + esc_md(result.sentence(k, t, names)) for t in used[:8]]
    if not used:
        lines = [f"- no class's evidence is used for it in any resample at λ = {fmt_value(s.lam)}."]
    low = f"β̃ {result.level:.0%} interval, low"
    table = pd.DataFrame(
        {
            "evidence class t": [names[t] for t in order],
            "β ≠ 0 in (share of resamples)": np.asarray(freq)[order],
            low: result.lower[k, order],
            "high": result.upper[k, order],
        }
    )
    formats = {"β ≠ 0 in (share of resamples)": "{:.0%}", "high": "{:.3g}", low: "{:.3g}"}
    heading = f"**For “{esc_md(names[k])}”** (the sidebar's class k):"
    return StabilityView(heading, lines, table, formats)


def download_name(ds, s, suffix):
    """The β downloads' file name."""
    return context_name(ds, s.spec_for(SPARSE_SBLR), "beta", suffix=suffix)
