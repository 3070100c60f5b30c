"""Class-by-class heatmaps: the coefficients β, label co-occurrence, SparseSBLR's selection
frequency.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from sblr.display import fmt_value
from sblr.plots._style import (
    BETA_ABS_COLORSCALE,
    BETA_COLORSCALE,
    COUNT_COLORSCALE,
    MAX_HEIGHT,
    MAX_TICK_LABELS,
    _category_axis,
    _height,
    _matrix_layout,
    _names,
    _square,
    _tick_note,
    _tick_px,
    _titled,
    _unique,
    esc_html,
)

# plotly is imported where a figure is drawn (see the package's __init__)
if TYPE_CHECKING:
    import plotly.graph_objects as go


# --------------------------------------------------------------------------- beta heatmaps

_COLORBAR_PX = 80  # a vertical colour bar with its tick labels


def beta_heatmaps(
    coefs,
    class_names: Sequence[str] | None = None,
    *,
    cooccurrence=None,
    signed: bool = True,
    titles: Sequence[str] | None = None,
    raw=None,
    lams: Mapping[str, float] | None = None,
    shared_scale: bool = False,
    classes: Sequence[int] | None = None,
) -> go.Figure:
    """Side-by-side heatmaps of the coefficient matrices beta_t^k, one per model.

    Parameters
    ----------
    coefs : dict of str to array-like of shape (m, m), or one (m, m) array
        ``{model name: matrix}`` with ``matrix[k, t]`` the weight of class
        ``t``'s normalised evidence in class ``k``'s logit: raw beta
        (``coef_``) or, with ``raw``, the standardized β̃
        (:func:`sblr.interpret.standardized_coef`).  Same ``m`` for all.
    class_names : sequence of str, optional
        Length ``m``; default ``"0" .. "m-1"``.
    cooccurrence : array-like of shape (m, m), optional
        Label co-occurrence counts (:func:`sblr.interpret.cooccurrence`),
        shown in the hover of every cell.
    signed : bool, default True
        True: a diverging scale symmetric around 0 (red positive, blue
        negative).  False: absolute values on a sequential scale (as the
        paper's figures).  In both, exact zeros are white.
    titles : sequence of str, optional
        One subplot title per model; default: the model name and how many of
        the drawn coefficients are exactly zero, "name (z of N² β = 0)".
    raw : dict of str to array-like of shape (m, m), optional
        The raw beta of the same models, when ``coefs`` are β̃: the labels
        then say β̃ and every cell's hover shows both.
    lams : dict of str to float, optional
        The L1 strength lambda of a model (by name): a panel whose drawn
        coefficients are all zero says "all β = 0 at λ = …" (without lambda:
        "all β = 0").
    shared_scale : bool, default False
        False: every panel has its own colour scale (±its largest |value|)
        and its own colour bar, so a sparse model's small coefficients stay
        visible next to a dense model's large ones.  True: one scale (±the
        largest over all panels) and one colour bar.
    classes : sequence of int, optional
        Draw only these classes (rows and columns, in the order given), e.g.
        :func:`sblr.interpret.top_classes`; the subtitle says how many of
        ``m`` are drawn.  Default: all.

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap per model (N = number of classes drawn).  Colour axes: ``layout.coloraxis``,
        ``coloraxis2``, ...  one per panel (one shared ``coloraxis`` with ``shared_scale``),
        ``cmin``/``cmax`` = -M/+M signed or 0/M absolute, M = the largest |value| of the panel (of
        all panels when shared; 1 when all are zero); every trace also has ``zmin``/``zmax``.  ``z``
        is (N, N), NaN exactly where the value is 0 (drawn white).  Rows = target class k (first
        class at the top), columns = evidence class t; every axis has the N class names as its
        categories (``categoryarray``) and a fixed range, so a panel of zeros keeps its cells.
        ``customdata[k][t]`` = ``[value, co-occurrence (NaN if not given)]`` plus ``raw beta`` with
        ``raw`` (float32, to keep the figure small, unless a value would not survive it).  Up to
        :data:`MAX_TICK_LABELS` drawn classes, every panel names its rows and columns (cut to 18
        characters where the names still differ; the hover has the full name); with more, tick
        labels are hidden.  Panels are stacked, each the full width (up to :data:`MAX_HEIGHT` per
        panel), so every column name stays readable and no colour bar can reach the next panel's
        row names, however narrow the chart (Plotly sizes the gap between panels side by side as a
        share of the width; at 800-1000 px windows the colour bar covered the row names).  The axis
        titles appear once: "class k (predicted)" on the first y axis, "evidence of class t" as one
        annotation under the panels.  ``layout.annotations`` lists such notes first and the subplot
        titles last, in model order.

    Raises
    ------
    ValueError
        Empty ``coefs``, non-square or mismatched matrices, NaN values,
        ``class_names``/``cooccurrence``/``titles``/``raw`` of the wrong
        length, or ``classes`` out of range.

    Examples
    --------
    >>> import numpy as np
    >>> fig = beta_heatmaps({"SBLR": np.array([[1.0, -3.0], [0.5, 2.0]])}, signed=False)
    >>> fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax
    (0.0, 3.0)
    >>> fig = beta_heatmaps({"SparseSBLR": np.zeros((2, 2))}, lams={"SparseSBLR": 0.1})
    >>> [a.text for a in fig.layout.annotations if a.text.startswith("all")]
    ['all β = 0 at λ = 0.1']
    """
    import plotly.graph_objects as go

    items = list(coefs.items()) if isinstance(coefs, Mapping) else [("β", coefs)]
    if not items:
        raise ValueError("coefs is empty; give at least one (m, m) coefficient matrix.")
    mats = [(str(name), _square(B, f"coefs[{name!r}]")) for name, B in items]
    m = mats[0][1].shape[0]
    for name, B in mats:
        if B.shape[0] != m:
            raise ValueError(
                f"coefs[{name!r}] is {B.shape[0]}x{B.shape[0]} but the first matrix is {m}x{m}; "
                "all models must have the same classes."
            )
    standardized = raw is not None
    if standardized:
        raw_items = dict(raw.items()) if isinstance(raw, Mapping) else {mats[0][0]: raw}
        raws = []
        for name, _ in mats:
            if name not in raw_items:
                raise ValueError(f"raw has no matrix for the model {name!r}.")
            R = _square(raw_items[name], f"raw[{name!r}]")
            if R.shape[0] != m:
                raise ValueError(f"raw[{name!r}] is {R.shape[0]}x{R.shape[0]}, expected {m}x{m}.")
            raws.append(R)
    all_labels = _unique(_names(class_names, m))
    if cooccurrence is not None:
        C = _square(cooccurrence, "cooccurrence")
        if C.shape[0] != m:
            raise ValueError(f"cooccurrence is {C.shape[0]}x{C.shape[0]} but beta is {m}x{m}.")
    else:
        C = np.full((m, m), np.nan)
    if classes is None:
        idx = np.arange(m)
    else:
        idx = np.asarray(classes, dtype=np.intp).reshape(-1)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= m or np.unique(idx).size != idx.size:
            raise ValueError(f"classes must be distinct class indices in [0, {m - 1}].")
    sub_ix = np.ix_(idx, idx)
    N = idx.size
    labels = [all_labels[i] for i in idx]
    shown_mats = [(name, B[sub_ix]) for name, B in mats]
    if titles is None:
        titles = [f"{name} ({int((B == 0).sum())} of {N * N} β = 0)" for name, B in shown_mats]
    else:
        titles = [str(t) for t in titles]
        if len(titles) != len(mats):
            raise ValueError(f"Got {len(titles)} titles for {len(mats)} models.")
    lams = {str(k): float(v) for k, v in (lams or {}).items()}

    def scale(top: float) -> tuple[float, float]:
        top = top if top > 0 else 1.0
        return (-top, top) if signed else (0.0, top)

    tops = [float(np.abs(B).max()) for _, B in shown_mats]
    shared = scale(max(tops))
    show_ticks = N <= MAX_TICK_LABELS
    font = 11 if N <= 15 else 9
    label_px = _tick_px(labels, font) if show_ticks else 0.0
    n = len(mats)
    # One panel per row, the full width each: side by side, the gap between them (a colour bar
    # and the next panel's row names) is a share of a width the figure cannot know, and in a
    # narrow window the colour bar covered the row names.  x labels at -45° hang below a
    # panel by about drop_px.
    drop_px = 0.71 * (label_px + font) + 8 if show_ticks else 4.0
    plot_px = min(max(18 * N, 300), 560) if n > 1 else min(max(28 * N, 300), 520)
    # below each upper panel: its column names, then the next panel's title
    gap_px = drop_px + 44
    spacing = gap_px / (n * plot_px + (n - 1) * gap_px)
    # the panels' y domains, the first at the top (as plotly's make_subplots with n rows)
    share = (1.0 - (n - 1) * spacing) / n
    y_domains = [
        (max(0.0, 1.0 - i * share - (i - 1) * spacing), 1.0 - (i - 1) * (share + spacing))
        for i in range(1, n + 1)
    ]
    sym = "β̃" if standardized else "β"
    hover = f"target k: %{{y}}<br>evidence t: %{{x}}<br>{sym} = %{{customdata[0]:.3g}}"
    if standardized:
        hover += " (per sd of f̄<sub>t</sub>)<br>β = %{customdata[2]:.3g}"
    if cooccurrence is not None:
        hover += "<br>co-occurrence = %{customdata[1]:.0f}"
    gap = 1 if show_ticks else 0
    notes = []
    # The figure is made in one call from its traces and one layout dict: plotly's
    # update_layout (and make_subplots, which calls it) checks every path of an update
    # against the whole figure, 90 ms of a λ change on 174 classes; the constructor
    # validates the same layout in 10 ms.
    panels: dict = {}
    traces = []
    for i, (name, B) in enumerate(shown_mats, start=1):
        suffix = "" if i == 1 else str(i)
        shown = B if signed else np.abs(B)
        zmin, zmax = shared if shared_scale else scale(tops[i - 1])
        axis_name = "coloraxis" if shared_scale or i == 1 else f"coloraxis{i}"
        layers = [B, C[sub_ix]] + ([raws[i - 1][sub_ix]] if standardized else [])
        traces.append(
            dict(
                type="heatmap",
                # float32 halves the payload (174 classes: ~1 MB per model); hover shows 3 digits
                z=_compact(np.where(B == 0, np.nan, shown)),
                x=labels,
                y=labels,
                customdata=_compact(np.stack(layers, axis=-1)),
                coloraxis=axis_name,
                zmin=zmin,
                zmax=zmax,
                xgap=gap,
                ygap=gap,
                hoverongaps=True,
                hovertemplate=hover + f"<extra>{esc_html(name)}</extra>",
                name=name,
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                # a "−" in every negative cell: the sign reads in grey print and for readers
                # who do not tell red from blue (both arms of the scale darken alike), and
                # on the |β| colouring, which has no sign at all; up to CELL_TEXT_CLASSES
                # classes the value itself, "−" first (the lesson's steps asked to read
                # numbers off cells without any: issue #46, item 14)
                **(
                    {
                        "text": _cell_texts(B)
                        if N <= CELL_TEXT_CLASSES
                        else np.where(B < 0, "−", ""),
                        "texttemplate": "%{text}",
                        "textfont": {"size": 11},
                    }
                    if show_ticks
                    else {}
                ),
            )
        )
        all_zero = not B.any()
        if all_zero:
            at = f" at λ = {fmt_value(lams[name])}" if name in lams else ""
            notes.append(
                {
                    "text": f"all β = 0{at}",
                    "xref": f"x{suffix} domain",
                    "yref": f"y{suffix} domain",
                    "x": 0.5,
                    "y": 0.5,
                    "showarrow": False,
                    "font": {"size": 13, "color": "#555555"},
                    "bgcolor": "rgba(255,255,255,0.85)",
                }
            )
        x_axis = {**_category_axis(labels, show_ticks), "tickangle": -45}
        y_axis = _category_axis(labels, show_ticks, title="class k (predicted)" if i == 1 else None)
        for axis, rng in ((x_axis, [-0.5, N - 0.5]), (y_axis, [N - 0.5, -0.5])):
            # fixed categories and range: a panel of zeros (all gaps) keeps its cells and names
            axis.update(categoryorder="array", categoryarray=labels, range=rng, autorange=False)
        panels[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "domain": [0.0, 1.0], **x_axis}
        panels[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "domain": y_domains[i - 1], **y_axis}
        if not shared_scale or i == n:
            x_dom = (0.0, 1.0)
            y_dom = (0.0, 1.0) if shared_scale else y_domains[i - 1]
            panels[axis_name] = {
                "colorscale": BETA_COLORSCALE if signed else BETA_ABS_COLORSCALE,
                "cmin": zmin,
                "cmax": zmax,
                # an all-zero panel has no colours to explain
                "showscale": shared_scale or not all_zero,
                "colorbar": {
                    "title": {"text": sym if signed else f"|{sym}|", "side": "top"},
                    "x": x_dom[1] + 0.01,
                    "xanchor": "left",
                    "y": (y_dom[0] + y_dom[1]) / 2,
                    "yanchor": "middle",
                    "len": y_dom[1] - y_dom[0],
                    "thickness": 12,
                },
            }
    notes.append(  # the one x-axis title, under the lowest column names
        {
            "text": "evidence of class t",
            "xref": "paper",
            "yref": "paper",
            "x": 0.5,
            "y": 0.0,
            "yanchor": "top",
            "yshift": -(drop_px + 6),
            "showarrow": False,
            "font": {"size": 14},
        }
    )
    # subplot titles: clear of the panel frame; the notes first (pages and tests find each
    # model's subplot title by its name)
    subplot_titles = [
        {
            "text": title,
            "x": 0.5,
            "xanchor": "center",
            "xref": "paper",
            "y": y_domains[i - 1][1],
            "yanchor": "bottom",
            "yref": "paper",
            "yshift": 4,
            "showarrow": False,
            "font": {"size": 13},
        }
        for i, title in enumerate(titles, start=1)
    ]
    panels["annotations"] = notes + subplot_titles

    t = "<sub>t</sub><sup>k</sup>"
    if standardized:
        main = (
            f"Standardized coefficients β̃{t} = β{t}·sd(f̄<sub>t</sub>): change of class k's "
            "logit per standard deviation of class t's evidence"
        )
    else:
        main = f"Coefficients β{t}: weight of class t's evidence in class k's logit"
    if signed:
        sub = "red = raises class k's probability, blue = lowers it, white = exactly 0 (ignored)"
    else:
        main = main.replace(f"{sym}{t}", f"|{sym}{t}|", 1)
        sub = f"darker = larger |{sym}|, white = exactly 0 (evidence ignored)"
    if show_ticks:
        sub += "; − marks a negative cell"
    sub += (
        "; one colour scale for all panels"
        if shared_scale
        else "; each panel has its own colour scale"
    )
    if N < m:
        sub += f"<br>{N} of {m} classes shown"
    if not show_ticks:
        sub += "<br>" + _tick_note(N)
    layout = _titled(main, sub, extra=24)
    bottom = int(drop_px + 40)
    # room on the right for the last colour bar, whether or not it is drawn
    layout["margin"].update(b=bottom, r=_COLORBAR_PX)
    rows = n  # one panel a row
    height = layout["margin"]["t"] + rows * plot_px + (rows - 1) * gap_px + bottom
    layout.update(
        panels,
        plot_bgcolor="white",
        height=int(min(height, MAX_HEIGHT * rows)),
        dragmode="zoom",
    )
    return go.Figure(data=traces, layout=layout)


# --------------------------------------------------------------------------- co-occurrence


def cooccurrence_heatmap(
    C,
    class_names: Sequence[str] | None = None,
    *,
    cap_diagonal: bool = True,
    classes: Sequence[int] | None = None,
) -> go.Figure:
    """Heatmap of label co-occurrence counts (diagonal = class sizes).

    Parameters
    ----------
    C : array-like of shape (m, m)
        ``C[a, b]`` = number of rows in which classes ``a`` and ``b`` are both
        relevant (:func:`sblr.interpret.cooccurrence`).
    class_names : sequence of str, optional
        Length ``m``.
    cap_diagonal : bool, default True
        Cap the colour scale at the largest off-diagonal count, so the class
        sizes on the diagonal do not wash out the pairs (the hover still shows
        the exact count).  Ignored when all off-diagonal counts are 0
        (multi-class data).
    classes : sequence of int, optional
        Show only these classes (distinct indices; e.g. the most frequent, from
        :func:`sblr.interpret.frequent_classes`), in the order given; the subtitle says how
        many of the m are shown, and the colour cap is the shown pairs' largest count.

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap; zero counts are white; ``customdata`` holds the counts.

    Examples
    --------
    >>> fig = cooccurrence_heatmap([[3, 1], [1, 2]], ["a", "b"])
    >>> fig.data[0].zmax
    1.0
    >>> C = [[3, 1, 0], [1, 2, 2], [0, 2, 5]]
    >>> fig = cooccurrence_heatmap(C, ["a", "b", "c"], classes=[2, 1])
    >>> list(fig.data[0].x), fig.data[0].zmax
    (['c', 'b'], 2.0)
    """
    import plotly.graph_objects as go

    C = _square(C, "C")
    if (C < 0).any():
        raise ValueError("Co-occurrence counts must be >= 0.")
    m_all = C.shape[0]
    C, labels = _shown_classes(C, class_names, classes)
    m = C.shape[0]
    off = C[~np.eye(m, dtype=bool)]
    capped = cap_diagonal and off.size > 0 and off.max() > 0
    zmax = float(off.max()) if capped else float(max(C.max(), 1.0))
    show_ticks = m <= MAX_TICK_LABELS
    gap = 1 if show_ticks else 0
    heatmap = dict(
        type="heatmap",
        z=np.where(C == 0, np.nan, C),
        x=labels,
        y=labels,
        customdata=C,
        zmin=0.0,
        zmax=zmax,
        colorscale=COUNT_COLORSCALE,
        colorbar={"title": {"text": "rows" + ("<br>(capped)" if capped else "")}},
        xgap=gap,
        ygap=gap,
        hoverongaps=True,
        hovertemplate="%{y} & %{x}<br>rows with both = %{customdata:.0f}<extra></extra>",
    )
    sub = "diagonal = class size, white = never together"
    if capped:
        sub += "; colours capped at the largest off-diagonal count"
    if m < m_all:
        sub += f"<br>{m} of {m_all} classes shown"
    layout = _matrix_layout(
        "Label co-occurrence: number of rows in which both classes are relevant",
        sub,
        labels,
        show_ticks,
        x_title="class",
        y_title="class",
        height=_height(m, base=400, per=10, lo=460, hi=780),
    )
    return go.Figure(data=[heatmap], layout=layout)


#: Up to this many classes, the selection-frequency heatmap prints each cell's share.
CELL_TEXT_CLASSES = 12


def selection_frequency_heatmap(
    frequency,
    class_names: Sequence[str] | None = None,
    *,
    n_resamples: int | None = None,
    classes: Sequence[int] | None = None,
) -> go.Figure:
    """Share of bootstrap resamples in which each ``β[k, t]`` is non-zero.

    Parameters
    ----------
    frequency : array-like of shape (m, m)
        ``StabilityResult.selection_frequency`` (values in [0, 1]).
    class_names : sequence of str, optional
    n_resamples : int, optional
        Named in the title.
    classes : sequence of int, optional
        Show only these classes (distinct indices, e.g. from
        :func:`sblr.interpret.top_classes` on the frequencies), in the order given; the
        subtitle says how many of the m are shown.

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap, rows = class k, columns = evidence class t, 0 white to 1 dark; up to
        :data:`CELL_TEXT_CLASSES` classes each cell prints its share.

    Examples
    --------
    >>> fig = selection_frequency_heatmap([[1.0, 0.2], [0.0, 0.9]], ["wren", "jay"])
    >>> fig.data[0].zmax, fig.data[0].x
    (1.0, ('wren', 'jay'))
    >>> fig.data[0].text
    (['100%', '20%'], ['0%', '90%'])
    """
    import plotly.graph_objects as go

    S = _square(frequency, "frequency")
    if S.min() < 0 or S.max() > 1:
        raise ValueError("Selection frequencies must lie in [0, 1].")
    m_all = S.shape[0]
    S, labels = _shown_classes(S, class_names, classes)
    m = S.shape[0]
    show_ticks = m <= MAX_TICK_LABELS
    gap = 1 if show_ticks else 0
    heatmap = dict(
        type="heatmap",
        z=S,
        x=labels,
        y=labels,
        zmin=0.0,
        zmax=1.0,
        colorscale=COUNT_COLORSCALE,
        colorbar={"title": {"text": "share of<br>resamples"}, "tickformat": ".0%"},
        xgap=gap,
        ygap=gap,
        hovertemplate="class k: %{y}<br>evidence of t: %{x}<br>β ≠ 0 in %{z:.0%} of "
        "resamples<extra></extra>",
    )
    if m <= CELL_TEXT_CLASSES:  # the share in each cell: "≥ 90%" is read off, not guessed
        heatmap.update(
            # rounded down: 89.5% must not read as the "90%" a question asks for
            text=[[f"{int(np.floor(v * 100 + 1e-9))}%" for v in row] for row in S],
            texttemplate="%{text}",
            textfont={"size": 11 if m <= 8 else 9},
        )
    times = f" ({n_resamples} bootstrap resamples)" if n_resamples else ""
    sub = "how often β[k, t] ≠ 0 when the rows are resampled; dark = always used"
    if m < m_all:
        sub += f"<br>{m} of {m_all} classes shown"
    layout = _matrix_layout(
        f"Selection frequency of SparseSBLR's β{times}",
        sub,
        labels,
        show_ticks,
        x_title="evidence of class t",
        y_title="class k",
        height=_height(m, base=400, per=10, lo=460, hi=780),
    )
    return go.Figure(data=[heatmap], layout=layout)


def _cell_texts(B: np.ndarray) -> np.ndarray:
    """Each coefficient as a cell prints it: two significant digits (whole numbers from 10),
    "−" for a negative one, nothing for an exact zero (a white cell).

    >>> _cell_texts(np.array([[1.234, -0.0456], [0.0, -12.6]])).tolist()
    [['1.2', '−0.046'], ['', '−13']]
    """

    def written(v: float) -> str:
        if v == 0:
            return ""
        size = f"{abs(v):.0f}" if abs(v) >= 10 else f"{abs(v):.2g}"
        return ("−" if v < 0 else "") + size

    return np.array([[written(float(v)) for v in row] for row in B], dtype=object)


def _shown_classes(M, class_names, classes):
    """A class-by-class matrix and its (escaped, distinct) labels, cut to ``classes`` if given."""
    labels = _unique(_names(class_names, M.shape[0]))
    if classes is None:
        return M, labels
    idx = _class_subset(classes, M.shape[0])
    return M[np.ix_(idx, idx)], [labels[i] for i in idx]


def _class_subset(classes, m_all):
    """``classes`` as distinct indices in ``[0, m_all)``, in the order given (a page's class
    order or its clustered order, :func:`sblr.interpret.cluster_order`), or a ValueError."""
    idx = np.asarray(classes, dtype=np.intp).reshape(-1)
    if idx.size == 0 or idx.min() < 0 or idx.max() >= m_all or np.unique(idx).size != idx.size:
        raise ValueError(f"classes must be distinct class indices in [0, {m_all - 1}].")
    return idx


def _compact(values):
    """``values`` as float32 (half the payload) when that keeps every value's three digits,
    else as float64: β on the evidence's own scale can pass float32's range (1e-38 to 3e38)
    when the evidence is tiny (a large γ), and would show as inf or 0."""
    values = np.asarray(values, dtype=np.float64)
    mags = np.abs(values[np.isfinite(values) & (values != 0)])
    fits = mags.size == 0 or (mags.min() >= np.finfo(np.float32).tiny and mags.max() <= 3e38)
    return values.astype(np.float32) if fits else values
