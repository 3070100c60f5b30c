"""Figures along the λ grid: the regularization path of β and the rank agreement of |β̃|
with the label dependencies.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from sblr.display import fmt_value
from sblr.plots._style import (
    _MAX_COLOURED,
    OTHER_COLOR,
    _float_array,
    _hline,
    _legend,
    _legend_px,
    _names,
    _tick_texts,
    _titled,
    _vline,
    class_colors,
    esc_html,
)

# plotly is imported where a figure is drawn (see the package's __init__)
if TYPE_CHECKING:
    import plotly.graph_objects as go


def regularization_path(
    lams,
    coefs_k,
    class_names: Sequence[str] | None = None,
    *,
    current_lam: float | None = None,
    target_name: str | None = None,
    max_legend: int = _MAX_COLOURED,
    standardized: bool = False,
) -> go.Figure:
    """Coefficients beta_t^k of one target class k along a lambda grid (lasso path).

    Parameters
    ----------
    lams : array-like of shape (L,)
        Penalty values lambda > 0 (any order; e.g. :data:`sblr.tuning.PAPER_GRID`).
    coefs_k : array-like of shape (L, m)
        ``coefs_k[i, t]`` = beta_t^k at ``lams[i]`` (e.g.
        ``coefficient_path(...)[0][:, k, :]``).
    class_names : sequence of str, optional
        Names of the evidence classes t, length ``m``.
    current_lam : float, optional
        Draws a dashed vertical line at this lambda (the fitted model's).
    target_name : str, optional
        Name of the target class k, for the title.
    standardized : bool, default False
        ``coefs_k`` are the standardized β̃ = beta · sd(f̄_t)
        (:func:`sblr.interpret.standardized_coef`): titles and hover say β̃.
    max_legend : int, default 20
        With more classes, only the ``max_legend`` classes with the largest
        max |beta| along the path (and only those non-zero somewhere on it) are
        coloured and named in the legend; the others are thin grey lines (hover
        still names them).

    Returns
    -------
    plotly.graph_objects.Figure
        One line trace per evidence class (``m`` traces; grey ones first so
        the coloured ones are drawn on top); log-scale x axis with **lambda
        decreasing from left to right** (strong penalty, few non-zero beta
        on the left); the current lambda is ``layout.shapes`` line with
        ``x0 == x1 == current_lam``.

    Examples
    --------
    >>> fig = regularization_path([1.0, 0.1, 0.01], [[0, 0], [0.5, 0], [1.0, -0.2]], ["a", "b"],
    ...                           current_lam=0.1)
    >>> len(fig.data), fig.layout.shapes[-1].x0
    (2, 0.1)
    """
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    lams = _float_array(lams, "lams", 1)
    B = _float_array(coefs_k, "coefs_k", 2)
    if lams.size == 0:
        raise ValueError("lams is empty.")
    if B.shape[0] != lams.size:
        raise ValueError(
            f"coefs_k has {B.shape[0]} rows but there are {lams.size} lambda values; "
            "expected shape (n_lams, n_classes)."
        )
    if (lams <= 0).any():
        raise ValueError("All lambda values must be > 0 to be drawn on a log axis.")
    m = B.shape[1]
    if m == 0:
        raise ValueError("coefs_k has no classes (0 columns).")
    names = _names(class_names, m)
    order = np.argsort(lams, kind="stable")
    x, B = lams[order], B[order]
    importance = np.abs(B).max(axis=0)
    rank = np.argsort(-importance, kind="stable")
    if m <= max_legend:
        coloured, grey = list(range(m)), []
        colours = dict(zip(range(m), class_colors(m), strict=True))
    else:
        # only classes that are non-zero somewhere earn a colour and a legend entry
        n_named = min(max_legend, max(1, int(np.count_nonzero(importance))))
        coloured, grey = rank[:n_named].tolist(), rank[n_named:].tolist()
        cols = qualitative.Dark24
        colours = {t: cols[j % len(cols)] for j, t in enumerate(coloured)}
    sym = "β̃" if standardized else "β"
    mode = "lines+markers" if x.size <= 30 else "lines"
    lam_text = [fmt_value(v) for v in x]  # the hover writes λ as the slider does
    # cut where the names differ ("Long-tail… var. 7)", not "Long-tailed Species 0…")
    legend_names = _tick_texts([esc_html(str(n)) for n in names], 28)
    traces = []
    if grey:
        # the grey lines as ONE trace, each line ended by a gap (NaN): one trace per class
        # took 10 s to build and 1.2 MB to send on 983 labels (delicious), for thin grey lines
        grey = sorted(grey)
        gap = np.full((len(grey), 1), np.nan)
        # arrays, not lists: plotly checks a list's 28,000 strings one by one (6 s)
        hover = np.repeat(np.array([esc_html(names[t]) for t in grey]), x.size + 1)
        traces.append(
            dict(
                type="scatter",
                x=np.hstack([np.tile(x, (len(grey), 1)), gap]).ravel(),
                y=np.hstack([B[:, grey].T, gap]).ravel(),
                mode="lines",
                name=f"{len(grey)} other classes",
                line={"color": OTHER_COLOR, "width": 1},
                showlegend=False,
                connectgaps=False,
                customdata=hover,
                text=np.tile(np.array([*lam_text, ""]), len(grey)),
                hovertemplate=f"evidence t: %{{customdata}}<br>λ = %{{text}}"
                f"<br>{sym} = %{{y:.3g}}<extra></extra>",
            )
        )
    for t in coloured:
        traces.append(
            dict(
                type="scatter",
                x=x,
                y=B[:, t],
                mode=mode,
                name=legend_names[t],
                line={"color": colours[t], "width": 2},
                marker={"size": 5},
                text=lam_text,
                hovertemplate=f"evidence t: {esc_html(names[t])}<br>λ = %{{text}}"
                f"<br>{sym} = %{{y:.3g}}<extra></extra>",
            )
        )
    shapes = [_hline(0, {"color": "#888888", "width": 1})]
    annotations = []
    if current_lam is not None:
        lam = float(current_lam)
        if not (np.isfinite(lam) and lam > 0):
            raise ValueError(f"current_lam must be a positive number, got {current_lam!r}.")
        shapes.append(_vline(lam, {"color": "black", "width": 1.5, "dash": "dash"}))
        annotations.append(
            {
                "x": math.log10(lam),  # annotations on log axes take log10 positions
                "y": 1.0,
                "yref": "paper",
                "text": f"current λ = {fmt_value(lam)}",
                "showarrow": False,
                "yanchor": "bottom",
                "font": {"size": 11},
            }
        )
    target = f"class k = {esc_html(str(target_name))}" if target_name is not None else "class k"
    sub = "each line = evidence class t; λ decreases to the right (weaker penalty, more β ≠ 0)"
    if standardized:
        sub += "<br>β̃ = β·sd(f̄<sub>t</sub>): change of the logit per sd of class t's evidence"
    if grey:
        sub += (
            f"<br>the {len(coloured)} of {m} classes with the largest |{sym}| are coloured and "
            "named; the rest are grey (hover names them)"
        )
    sym_tk = f"{sym}<sub>t</sub><sup>k</sup>"
    entries = [t["name"] for t in traces if t.get("showlegend", True)]
    legend = _legend("evidence class t", entries)
    layout = dict(
        **_titled(f"Regularization path of {sym_tk} for target {target}", sub),
        xaxis={
            "type": "log",
            "autorange": "reversed",
            "title": {"text": "λ (L1 penalty, log scale, decreasing →)"},
            "exponentformat": "power",
        },
        yaxis={"title": {"text": sym_tk + (" (per sd of f̄<sub>t</sub>)" if standardized else "")}},
        legend=legend,
        hovermode="closest",
        height=520 + _legend_px(legend, len(entries)),
        shapes=shapes,
    )
    if annotations:
        layout["annotations"] = annotations
    return go.Figure(data=traces, layout=layout)


def rank_agreement_figure(
    lams,
    curves: Mapping[str, object],
    *,
    current_lam: float | None = None,
    target_name: str | None = None,
    nonzero=None,
) -> go.Figure:
    """Spearman(|β̃ₜᵏ|, a dependency of k on t) along λ: where does the paper's claim hold?

    Parameters
    ----------
    lams : array-like of shape (L,)
        Penalty values λ > 0.
    curves : mapping of str to array-like of shape (L,)
        One line per entry, e.g. ``{"co-occurrence": rho1, "P(k | t)": rho2}``
        (:func:`sblr.interpret.rank_agreement_path`); NaN (undefined) leaves a gap.
        A name ending in ``"(mean over classes)"`` is drawn dotted.
    current_lam : float, optional
        Dashed vertical line at the sidebar's λ.
    target_name : str, optional
        Name of class k, for the title.
    nonzero : array-like of shape (L,), optional
        Number of non-zero βₜᵏ (t ≠ k) at each λ, shown in the hover (a ρ over two
        non-zero weights means little).

    Returns
    -------
    plotly.graph_objects.Figure
        One trace per curve (x = λ, log axis decreasing to the right as on the path
        plot, y = ρ in [-1, 1]) and a zero line.

    Examples
    --------
    >>> fig = rank_agreement_figure([1.0, 0.1, 0.01], {"co-occurrence": [np.nan, 0.5, 0.2]})
    >>> len(fig.data), [float(v) for v in fig.data[0].y]  # sorted by λ: 0.01, 0.1, 1
    (1, [0.2, 0.5, nan])
    """
    import plotly.graph_objects as go

    lams = _float_array(lams, "lams", 1)
    if lams.size == 0 or (lams <= 0).any():
        raise ValueError("lams must be a non-empty array of positive values.")
    order = np.argsort(lams, kind="stable")
    x = lams[order]
    nz = None if nonzero is None else np.asarray(nonzero)[order]
    traces = []
    palette = ["#1b7837", "#762a83", "#b35806", "#2166ac"]
    for j, (name, rho) in enumerate(curves.items()):
        y = _float_array(rho, f"curve {name!r}", 1, allow_nan=True)
        if y.size != lams.size:
            raise ValueError(f"Curve {name!r} has {y.size} values for {lams.size} λ values.")
        y = y[order]
        dotted = str(name).endswith("(mean over classes)")
        traces.append(
            dict(
                type="scatter",
                x=x,
                y=y,
                mode="lines+markers" if x.size <= 30 else "lines",
                name=esc_html(str(name)),
                # each line its own width, dash and marker: two curves that coincide (two
                # dependencies can rank the classes alike) both stay visible
                line={
                    "color": palette[j % len(palette)],
                    "width": 5 if j == 0 else 2,
                    "dash": "dot" if dotted else ("solid" if j % 2 == 0 else "dash"),
                },
                marker={"symbol": ["circle", "x", "diamond", "square"][j % 4], "size": 7},
                customdata=None if nz is None else nz,
                text=[fmt_value(v) for v in x],
                hovertemplate=f"{esc_html(str(name))}<br>λ = %{{text}}<br>ρ = %{{y:.2f}}"
                + ("<br>non-zero β: %{customdata}" if nz is not None else "")
                + "<extra></extra>",
                connectgaps=False,
            )
        )
    shapes = [_hline(0, {"color": "#888888", "width": 1})]
    if current_lam is not None:
        lam = float(current_lam)
        if not (np.isfinite(lam) and lam > 0):
            raise ValueError(f"current_lam must be a positive number, got {current_lam!r}.")
        shapes.append(_vline(lam, {"color": "black", "width": 1.5, "dash": "dash"}))
    target = f"class k = {esc_html(str(target_name))}" if target_name is not None else "class k"
    layout = dict(
        **_titled(
            f"Does |β̃| follow the dependency? Spearman ρ along λ, target {target}",
            "ρ > 0: classes that depend more on k get larger weights (the paper's claim); "
            "gaps: undefined (all β = 0)",
        ),
        xaxis={
            "type": "log",
            "autorange": "reversed",
            "title": {"text": "λ (L1 penalty, log scale, decreasing →)"},
            "exponentformat": "power",
        },
        yaxis={"title": {"text": "Spearman ρ over t ≠ k"}, "range": [-1.05, 1.05]},
        legend={"title": {"text": "dependency of k on t"}},
        hovermode="closest",
        height=380,
        shapes=shapes,
    )
    return go.Figure(data=traces, layout=layout)
