"""One self-contained HTML file of an analysis: its context, tables and figures.

:func:`html_report` writes any list of sections; :func:`analysis_report` assembles the
dashboard's report (hold-out metrics, both models' β̃, one class's contributions) from fitted
models, so the dashboard and a script write the same file.

Every piece of text that can come from a user's file (data set, class and column names) is
HTML-escaped: tables through :meth:`pandas.DataFrame.to_html` (``escape=True``), headings and
notes through :func:`html.escape`; figures are plotly figures, their text already escaped by
:mod:`sblr.plots`.  plotly.js is inlined once, compressed (:mod:`sblr.plots.export`: the
report went from 4.9 MB to about 2 MB), so the file opens offline.

Examples
--------
>>> import pandas as pd
>>> page = html_report(
...     "Analysis of <b>x</b>",
...     {"data": "x<y>"},
...     [("Metrics", pd.DataFrame({"metric": ["a<b>"], "value": [0.5]}))],
... )
>>> "&lt;b&gt;x&lt;/b&gt;" in page and "a&lt;b&gt;" in page and "<b>x</b>" not in page
True
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from sblr import plots
from sblr.decision import Decision
from sblr.diagnostics import evidence_diagnostics, sparse_conditioning
from sblr.display import fmt_value
from sblr.exceptions import DataError
from sblr.interpret import (
    check_claim,
    class_affinity,
    contribution_table,
    cooccurrence,
    standardized_coef,
    top_classes,
)
from sblr.plots.export import figure_div, plotly_script
from sblr.registry import SBLR, SPARSE_SBLR

__all__ = ["Analysis", "analysis_report", "dashboard_report", "html_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f5f5f5; }
td:first-child, th:first-child { text-align: left; }
p.note { color: #555; font-size: 13px; }
"""


def html_report(title: str, context: Mapping[str, object], sections: Sequence[tuple]) -> str:
    """A standalone HTML document.

    Parameters
    ----------
    title : str
    context : mapping of str to object
        What the analysis is of (data set, model, γ, λ, split...): a table at the top.
    sections : sequence of (heading, content) or (heading, content, note)
        ``content``: a pandas DataFrame (a table), a plotly Figure, or a str (a paragraph of
        plain text).

    Returns
    -------
    str
    """
    import plotly.graph_objects as go  # lazy: writing a report without figures needs no plotly

    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        "<table>",
        *(
            f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
            for k, v in context.items()
        ),
        "</table>",
        f"<p class='note'>Written by sblr on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC.</p>",
    ]
    plotly_js = True
    n_figures = 0
    for section in sections:
        if len(section) not in (2, 3):
            raise DataError("Each section is (heading, content) or (heading, content, note).")
        heading, content = section[0], section[1]
        parts.append(f"<h2>{html.escape(str(heading))}</h2>")
        if isinstance(content, pd.DataFrame):
            # three significant digits, as the dashboard's tables; NaN as "–", never "nan"
            parts.append(
                content.to_html(
                    escape=True, index=False, float_format=lambda v: f"{v:.3g}", na_rep="–"
                )
            )
        elif isinstance(content, go.Figure):
            if plotly_js:
                parts.append(plotly_script())
                plotly_js = False
            n_figures += 1
            parts.append(figure_div(content, f"sblr-figure-{n_figures}"))
        elif isinstance(content, str):
            parts.append(f"<p>{html.escape(content)}</p>")
        else:
            raise DataError(f"A section holds a DataFrame, a Figure or text; got {type(content)}.")
        if len(section) == 3:
            parts.append(f"<p class='note'>{html.escape(str(section[2]))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


#: Above this many classes the report's β̃ heatmaps show the most connected ones only.
REPORT_MAX_CLASSES = 30


#: The dashboard's order of the headline metrics (Model & metrics), then the others.
HEADLINE = ("micro_f1", "macro_f1", "hamming_loss", "average_precision", "ranking_loss")


@dataclass(frozen=True)
class Analysis:
    """What a report says of a data set: the fitted models, their evidence and evaluation.

    Attributes
    ----------
    sblr_model, sparse_model : fitted SBLRClassifier and SparseSBLRClassifier
        Both fitted on every row of the data set, on ``evidence``; ``sblr_model`` None where
        SBLR was not fitted (its fit past the budget of one done without asking:
        :data:`sblr.registry.LAYER_BUDGET`), the report then of SparseSBLR alone.
    evidence : ndarray of shape (n_samples, n_classes)
        The leave-one-out evidence the models were fitted on.
    evaluation : sblr.evaluation.EvaluationResult
        The scores of ``model`` on held-out rows.
    model : str
        The name of the model ``evaluation`` scored.
    context : mapping of str to object
        What the analysis is of (data, model, γ, λ, the evaluation split...): the table at
        the top, followed by the class, the size and the number of classes.
    yardsticks : mapping of str to pandas.DataFrame, optional
        Name -> the summary (``mean`` by metric) of a yardstick on the same rows (the
        dashboard's: scikit-learn's logistic regression tuned as the Model page's, named with
        its choice, and the frequency yardstick): a column each beside the model's value.
    no_label : str, optional
        The rows the model gives no label ("21 of 125; truth 9; LR 29"), a row of the table.
    """

    sblr_model: object
    sparse_model: object
    evidence: object
    evaluation: object
    model: str
    context: Mapping[str, object]
    yardsticks: Mapping[str, object] | None = None
    no_label: str | None = None


def analysis_report(dataset, k, analysis: Analysis) -> str:
    """The report of an analysis of ``dataset`` as one standalone HTML document.

    Sections: the metrics of ``model`` on held-out rows, SBLR's and SparseSBLR's standardized
    coefficients β̃ side by side (with co-occurrence), and the Class contributions table of
    class ``k`` with the paper's claim ("larger dependency, larger |β̃|") tested on it.

    Parameters
    ----------
    dataset : sblr.io.Dataset
    k : int
        The class whose contributions are reported.
    analysis : Analysis
        The models, evidence and evaluation to report.

    Returns
    -------
    str
    """

    a = analysis
    sblr_model, sparse_model, evidence, evaluation = (
        a.sblr_model, a.sparse_model, a.evidence, a.evaluation,
    )  # fmt: skip
    Y = dataset.label_matrix()
    names = dataset.class_names
    sparse_name = f"{SPARSE_SBLR.label}, λ = {fmt_value(sparse_model.lam)}"
    # SparseSBLR first, as on the Coefficients page: the readable model (issue #46, item 14)
    fitted = {sparse_name: sparse_model, SBLR.label: sblr_model}
    fitted = {name: model for name, model in fitted.items() if model is not None}
    stds = {name: standardized_coef(model, evidence) for name, model in fitted.items()}
    fig = plots.beta_heatmaps(
        stds,
        names,
        cooccurrence=cooccurrence(Y),
        raw={name: model.coef_ for name, model in fitted.items()},
        lams={sparse_name: sparse_model.lam},
        # the dashboard's rule: SparseSBLR's readable links rank, SBLR's break its ties,
        # the reported class always among them
        classes=(
            top_classes(
                stds[sparse_name], REPORT_MAX_CLASSES, include=[k], tiebreak=stds.get(SBLR.label)
            )
            if dataset.n_classes > REPORT_MAX_CLASSES
            else None
        ),
    )
    diagnosis = evidence_diagnostics(sblr_model, evidence)  # conditioning only without SBLR
    kept = sparse_conditioning(sparse_model.coef_, evidence)
    # Multi-class rows have one class each, so co-occurrence says nothing: the relation of
    # class t to class k is then the mean evidence of t on k's rows.
    multiclass = not dataset.is_multilabel
    measure = "mean evidence on k's rows" if multiclass else "p_k_given_t"
    weights = {f"{SPARSE_SBLR.label} beta": sparse_model}
    if sblr_model is not None:
        weights[f"{SBLR.label} beta"] = sblr_model
    table = contribution_table(
        weights,
        Y,
        k,
        class_names=names,
        evidence=evidence,
        relation=class_affinity(Y, evidence) if multiclass else None,
        relation_name=measure if multiclass else None,
        dependency=not multiclass,
    )
    at = table.index.get_loc(k)
    claims = " ".join(
        f"{name.removesuffix(' beta')}: "
        + check_claim(
            table[name + "_std"].to_numpy(), table[measure].to_numpy(), target=at
        ).sentence(measure.replace("p_k_given_t", "P(k | t)"))
        for name in weights
    )
    summary = evaluation.summary
    order = [m for m in HEADLINE if m in summary.index]
    order += [m for m in summary.index if m not in order]  # the dashboard's order
    value = "value" if len(evaluation.per_fold) == 1 else "mean"
    metrics = pd.DataFrame(
        {"metric": summary.loc[order, "label"], value: summary.loc[order, "mean"]}
    )
    for name, other in (a.yardsticks or {}).items():
        metrics[name] = other["mean"].reindex(order).to_numpy()
    # the dashboard's format: three decimals, "–" where undefined
    for column in metrics.columns[1:]:
        metrics[column] = ["–" if pd.isna(v) else f"{v:.3f}" for v in metrics[column]]
    if a.no_label is not None:
        row = {"metric": "Rows with no label", value: str(a.no_label)}
        metrics = pd.concat([metrics.iloc[:2], pd.DataFrame([row]), metrics.iloc[2:]])
        metrics = metrics.fillna("–")
    readable = {
        "cooccurrence": "co-occurrence",
        "p_k_given_t": "P(k | t)",
        "evidence_sd": "sd of the evidence",
    }
    for name in (SPARSE_SBLR.label, SBLR.label):
        readable |= {f"{name} beta": f"{name} β", f"{name} beta_std": f"{name} β̃"}
    return html_report(
        f"sblr analysis of {dataset.name}",
        {
            **a.context,
            "class k": names[k],
            "rows × features": f"{dataset.n_samples} × {dataset.n_features}",
            "classes": dataset.n_classes,
        },
        [
            (f"Metrics of {a.model} on held-out rows", metrics.reset_index(drop=True)),
            (
                "Standardized coefficients β̃ ("
                + (
                    "both models"
                    if sblr_model is not None
                    else f"{SPARSE_SBLR.label}; {SBLR.label}"
                    " not fitted: past the dashboard's budget of a fit"
                )
                + ", fitted on all rows)",
                fig,
            ),
            *(
                [
                    (
                        "Read the coefficients with care",
                        # one sentence, the numbers (VIFs, names) in the note below it
                        "SBLR's coefficients cannot be read one by one here; "
                        + (
                            f"SparseSBLR's can at λ = {fmt_value(sparse_model.lam)}: the "
                            "evidence each class keeps is not collinear."
                            if kept.readable
                            else f"nor can SparseSBLR's at λ = {fmt_value(sparse_model.lam)}: "
                            f"it still keeps collinear evidence for {kept.unreadable.size} of "
                            f"{dataset.n_classes} classes. Raise λ."
                        ),
                        " ".join(diagnosis.sentences(names))
                        + " Many different β then fit the data equally well, so single SBLR "
                        "coefficients (even their signs) are not identifiable. "
                        + kept.details(names),
                    )
                ]
                if diagnosis.unreliable or not kept.readable
                else []
            ),
            (
                f"Class contributions to {names[k]}",
                table.rename(columns=readable),
                "β: the raw coefficient; β̃ = β · sd of the evidence column.",
            ),
            ("The paper's claim, tested for this class", claims),
        ],
    )


# --------------------------------------------------------------------------- the dashboard's report
def _decision_context(fitted):
    """The report's line on how the model decides (its fitted cut), for multi-label data."""

    chosen = Decision.of(fitted)
    return {} if chosen.kind == "argmax" else {"decision": chosen.describe()}


def dashboard_report(ds, s, progress=None) -> bytes:
    """The report of the sidebar's settings as HTML bytes (:func:`analysis_report`), from
    the cached work: metrics on a 25% hold-out split, both models' β̃ fitted on all rows, and
    the Class contributions of the sidebar's class. ``progress(done, total, text)``."""
    # lazy: the rest of this module writes reports without Streamlit (scripts, tests)
    from pages._shared.cache import (
        cached_fit,
        evaluation,
        fit_beside,
        held_out_cuts,
        held_out_probabilities,
        training_evidence,
        yardstick,
    )
    from pages._shared.formatting import context
    from pages._shared.long_jobs import lr_yardstick_shown
    from pages._shared.questions import HOLDOUT

    def step(i, text):
        if progress:
            progress(i, 3, text)

    step(0, "Evaluating on a 25% hold-out split…")
    result = evaluation(ds, s.spec, HOLDOUT)
    yardsticks, no_label = {}, None
    lr, _ = lr_yardstick_shown(ds, HOLDOUT)  # the Model page's: tuned, if within budget
    if lr is not None:
        yardsticks[lr.label] = lr.summary
    yardsticks["ignores the features"] = yardstick(ds, HOLDOUT)
    if ds.is_multilabel:
        from sblr.metrics import decision_counts  # lazy: scikit-learn, ~1 s

        y, P = held_out_probabilities(ds, s.spec, HOLDOUT)
        cuts = held_out_cuts(ds, s.spec, HOLDOUT)
        counts = decision_counts(y, P, cuts)
        truth = int((np.asarray(y).sum(axis=1) == 0).sum())
        no_label = f"{counts['empty_rows']:,} of {counts['rows']:,}; truth {truth:,}" + (
            f"; LR {lr.empty:,}" if lr is not None else ""
        )
    step(1, "Fitting the models on all rows…")
    sblr_model, _ = fit_beside(ds, s.spec_for(SBLR))  # None past the budget (hours on 983)
    sparse = cached_fit(ds, s.spec_for(SPARSE_SBLR))
    F = training_evidence(ds, s.gamma)
    step(2, "Drawing β and the class contributions…")
    analysis = Analysis(
        sblr_model=sblr_model,
        sparse_model=sparse,
        evidence=F,
        evaluation=result,
        model=s.model,
        yardsticks=yardsticks,
        no_label=no_label,
        context={
            **context(ds, s, with_lam=True),
            "evaluation": "25% hold-out split (stratified when possible), seed 0",
            **_decision_context(cached_fit(ds, s.spec, decided=True)),
        },
    )
    step(3, "Done")
    return analysis_report(ds, s.k, analysis).encode()
