"""Figures of a model's evaluation: precision-recall curve and confusion matrix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sblr.plots._style import (
    COUNT_COLORSCALE,
    MAX_TICK_LABELS,
    POSITIVE_COLOR,
    _float_array,
    _height,
    _matrix_layout,
    _names,
    _square,
    _titled,
    _unique,
    esc_html,
)

# plotly is imported where a figure is drawn (see the package's __init__)
if TYPE_CHECKING:
    import plotly.graph_objects as go


# --------------------------------------------------------------------------- precision-recall


def pr_curve_figure(
    precision, recall, thresholds, *, class_name=None, average_precision=None, threshold=None
) -> go.Figure:
    """Precision against recall of one class as its decision threshold moves.

    Parameters
    ----------
    precision, recall, thresholds : array-like
        :func:`sblr.metrics.pr_curve` (``thresholds`` one shorter than the others).
    class_name : str, optional
    average_precision : float, optional
        Shown in the title.
    threshold : float, optional
        Marks the point of this threshold (rows with probability ≥ threshold are
        predicted: the point of the smallest curve threshold at or above it).

    Returns
    -------
    plotly.graph_objects.Figure
        A step line (trace 0) and, with ``threshold``, a marker (trace 1).

    Examples
    --------
    >>> fig = pr_curve_figure([0.5, 1.0, 1.0], [1.0, 0.5, 0.0], [0.3, 0.8], threshold=0.5)
    >>> [float(v) for v in fig.data[1].x], [float(v) for v in fig.data[1].y]
    ([0.5], [1.0])
    >>> pr_curve_figure([0.5, 1.0, 1.0], [1.0, 0.5, 0.0], [0.3, 0.8], threshold=0.9).data[1].name
    'threshold 0.90: no row predicted'
    """
    import plotly.graph_objects as go

    precision = _float_array(precision, "precision", 1)
    recall = _float_array(recall, "recall", 1)
    thresholds = _float_array(thresholds, "thresholds", 1)
    if precision.shape != recall.shape or thresholds.size not in (0, precision.size - 1):
        raise ValueError("precision, recall and thresholds do not come from one curve.")
    class_text = esc_html(str(class_name)) if class_name is not None else "class k"
    traces = [
        dict(
            type="scatter",
            x=recall,
            y=precision,
            mode="lines",
            line={"shape": "hv", "color": POSITIVE_COLOR, "width": 2},
            name="precision-recall",
            customdata=np.r_[thresholds, np.nan] if thresholds.size else None,
            hovertemplate="recall %{x:.3f}<br>precision %{y:.3f}"
            + ("<br>threshold %{customdata:.3f}" if thresholds.size else "")
            + "<extra></extra>",
        )
    ]
    if threshold is not None and thresholds.size:
        # rows with p >= threshold are predicted: the curve's point of the smallest curve
        # threshold at or above it (none: nothing predicted, the curve's last point)
        above = np.flatnonzero(thresholds >= float(threshold))
        i = int(above.min()) if above.size else len(thresholds)
        t_text = f"threshold {float(threshold):.2f}"
        if above.size:
            name, hover = t_text, f"{t_text}<br>recall %{{x:.3f}}<br>precision %{{y:.3f}}"
        else:
            # no row reaches it: recall 0, precision undefined (0/0); the curve's end point
            # is drawn at precision 1 only by convention, and must not read as "precision 1"
            name = f"{t_text}: no row predicted"
            hover = (
                f"{t_text}<br>no row has a probability this high:<br>recall 0, precision "
                "undefined (drawn at the curve's end)"
            )
        traces.append(
            dict(
                type="scatter",
                x=[recall[i]],
                y=[precision[i]],
                mode="markers",
                marker={
                    "size": 12,
                    "color": "black",
                    "symbol": "circle-open" if above.size else "x-open",
                    "line": {"width": 3},
                },
                name=name,
                hovertemplate=hover + "<extra></extra>",
            )
        )
    if average_precision is None:
        ap = ""
    elif np.isfinite(average_precision):
        ap = f" (average precision {average_precision:.3f})"
    else:  # no positive row: AP is undefined, never "nan" to a reader
        ap = " (no row carries it: average precision undefined)"
    layout = dict(
        **_titled(f"Precision-recall of {class_text}{ap}", "each point: one decision threshold"),
        xaxis={"title": {"text": "recall"}, "range": [-0.02, 1.02]},
        yaxis={"title": {"text": "precision"}, "range": [-0.02, 1.05]},
        height=420,
        showlegend=threshold is not None,
    )
    return go.Figure(data=traces, layout=layout)


# --------------------------------------------------------------------------- confusion matrix


def confusion_matrix_figure(
    cm, class_names: Sequence[str] | None = None, *, normalize: bool = False
) -> go.Figure:
    """Heatmap of a multi-class confusion matrix (rows = true, columns = predicted).

    Parameters
    ----------
    cm : array-like of shape (m, m)
        ``cm[i, j]`` = number of rows of true class i predicted as class j
        (as :func:`sklearn.metrics.confusion_matrix`).
    class_names : sequence of str, optional
        Length ``m``.
    normalize : bool, default False
        Colour by the share of each true class (row) instead of the count;
        cells then read "count (share)".

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap; for m <= 20 each cell shows its number (``trace.text``);
        ``customdata[i][j]`` = ``[count, share of true class i]``.

    Examples
    --------
    >>> fig = confusion_matrix_figure([[5, 1], [0, 4]], ["no", "yes"])
    >>> fig.data[0].text.tolist()
    [['5', '1'], ['0', '4']]
    """
    import plotly.graph_objects as go

    cm = _square(cm, "cm")
    if (cm < 0).any():
        raise ValueError("Confusion-matrix counts must be >= 0.")
    m = cm.shape[0]
    labels = _unique(_names(class_names, m))
    rows = cm.sum(axis=1, keepdims=True)
    share = np.divide(cm, rows, out=np.zeros_like(cm), where=rows > 0)
    z = share if normalize else cm
    show_ticks = m <= MAX_TICK_LABELS
    with_text = m <= 20
    text = None
    if with_text:
        if normalize:
            text = np.array(
                [
                    [f"{c:,.0f}<br>({s:.0%})" for c, s in zip(r, q, strict=True)]
                    for r, q in zip(cm, share, strict=True)
                ]
            )
        else:
            text = np.array([[f"{c:,.0f}" for c in r] for r in cm])
    total = cm.sum()
    acc = np.trace(cm) / total if total > 0 else float("nan")
    heatmap = dict(
        type="heatmap",
        z=z,
        x=labels,
        y=labels,
        customdata=np.stack([cm, share], axis=-1),
        text=text,
        texttemplate="%{text}" if with_text else None,
        zmin=0.0,
        zmax=1.0 if normalize else float(max(cm.max(), 1.0)),
        colorscale=COUNT_COLORSCALE,
        colorbar={"title": {"text": "share of<br>true class" if normalize else "rows"}},
        xgap=1 if show_ticks else 0,
        ygap=1 if show_ticks else 0,
        hovertemplate="true class: %{y}<br>predicted class: %{x}<br>rows = "
        "%{customdata[0]:,.0f}<br>share of true class = %{customdata[1]:.1%}<extra></extra>",
    )
    sub = f"diagonal = correct; accuracy = {acc:.1%}" if total > 0 else "no rows"
    layout = _matrix_layout(
        "Confusion matrix: rows = true class, columns = predicted class",
        sub,
        labels,
        show_ticks,
        x_title="predicted class",
        y_title="true class",
        height=_height(m, base=360, per=12, lo=420, hi=780),
    )
    return go.Figure(data=[heatmap], layout=layout)


# --------------------------------------------------------------------------- metrics


# --------------------------------------------------------------------------- tuning grid


def tuning_heatmap(scores, metric_label: str, *, best: dict | None = None) -> go.Figure:
    """The validation score of every (γ, λ) point a tuning tried, so a choice at the grid's
    edge shows as one: rows γ, columns λ (one column "–" for a model without λ), each cell
    printing its score, the chosen point ringed.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``TuningResult.scores``: columns ``gamma``, ``score`` and, for SparseSBLR, ``lam``.
    metric_label : str
        The score's name on screen ("Micro-F1 ↑").
    best : dict, optional
        ``TuningResult.best_params`` (``gamma``, ``lam``): the cell ringed.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"gamma": [1.0, 1.0, 0.1, 0.1], "lam": [1e-3, 1e-2] * 2,
    ...                       "score": [0.5, 0.6, 0.4, 0.3]})
    >>> fig = tuning_heatmap(table, "Micro-F1 ↑", best={"gamma": 1.0, "lam": 1e-2})
    >>> fig.data[0].x, fig.data[0].y, fig.data[0].text
    (('1e-3', '1e-2'), ('1', '1e-1'), (['0.500', '0.600'], ['0.400', '0.300']))
    >>> fig.data[1].x, fig.data[1].y
    (('1e-2',), ('1',))
    """
    import plotly.graph_objects as go

    from sblr.display import fmt_value

    has_lam = "lam" in scores.columns and scores["lam"].notna().any()
    table = scores.assign(lam=scores["lam"] if has_lam else np.nan)
    gammas = sorted(table["gamma"].unique(), reverse=True)  # the largest γ on top
    lams = sorted(table["lam"].unique()) if has_lam else [np.nan]
    z = np.full((len(gammas), len(lams)), np.nan)
    for g, lam, value in zip(table["gamma"], table["lam"], table["score"], strict=True):
        z[gammas.index(g), 0 if not has_lam else lams.index(lam)] = value
    x = [fmt_value(v) for v in lams] if has_lam else ["–"]
    y = [fmt_value(v) for v in gammas]
    text = [["–" if np.isnan(v) else f"{v:.3f}" for v in row] for row in z]
    traces = [
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            text=text,
            texttemplate="%{text}",
            textfont={"size": 10},
            colorscale=COUNT_COLORSCALE,
            colorbar={"title": {"text": esc_html(metric_label)}},
            xgap=1,
            ygap=1,
            hovertemplate="γ = %{y}, λ = %{x}: %{text}<extra></extra>",
        )
    ]
    if best is not None:
        at_x = fmt_value(best["lam"]) if has_lam and best.get("lam") is not None else x[0]
        traces.append(
            go.Scatter(
                x=[at_x],
                y=[fmt_value(best["gamma"])],
                mode="markers",
                marker={
                    "symbol": "square-open",
                    "size": 26,
                    "color": POSITIVE_COLOR,
                    "line": {"width": 3},
                },
                name="chosen",
                hoverinfo="skip",
                showlegend=False,
            )
        )
    layout = {
        **_titled(
            f"Validation {metric_label} at every grid point",
            "scored on validation rows taken from the training rows; the ringed cell is the "
            "choice: at the grid's edge, the best value may lie beyond it",
        ),
        "xaxis": {"title": {"text": "λ" if has_lam else "(a model without λ)"}, "type": "category"},
        "yaxis": {"title": {"text": "γ"}, "type": "category", "autorange": "reversed"},
        "height": _height(len(gammas), base=160, per=30, lo=320, hi=520),
    }
    return go.Figure(data=traces, layout=layout)
