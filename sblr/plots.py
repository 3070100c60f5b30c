"""Plotly figures for the dashboard: pure functions from arrays to figures.

Nothing here fits a model: every function takes arrays (or the tables of
:mod:`sblr.interpret`) and returns a :class:`plotly.graph_objects.Figure`.
The figures are meant to stay readable from 6 to ~174 classes (CAL500):
with more than :data:`MAX_TICK_LABELS` classes the per-class tick labels are
hidden (hover a cell or bar for its name; drag to zoom, double-click to
reset) and heights grow with the number of classes up to a cap.

Colour conventions, shared by all figures
-----------------------------------------
* Coefficients beta_t^k and logit contributions: **red = positive** (raises
  class k's logit/probability), **blue = negative** (lowers it), **white =
  exactly zero** (the evidence of class t is ignored -- SparseSBLR's point).
  Non-zero values, however small, get at least a pale tint.
* |beta| (``signed=False``): light orange -> dark red, white = exactly zero.
* Counts (co-occurrence, confusion matrix, class frequency): purples; in the
  co-occurrence heatmap, white = never together.
* Matrices: rows = target / true class k (class 0 at the top), columns =
  evidence / predicted class t.
* Models: :data:`MODEL_COLORS`; classes: :func:`class_colors`; the catch-all
  "other" group is light grey.

Examples
--------
>>> import numpy as np
>>> B = np.array([[2.0, -0.5], [0.0, 1.0]])
>>> fig = beta_heatmaps({"SBLR": B, "SparseSBLR": np.diag([1.5, 0.8])}, ["cat", "dog"])
>>> [trace.type for trace in fig.data]
['heatmap', 'heatmap']
>>> fig.layout.coloraxis.cmax, fig.layout.coloraxis2.cmax   # one colour scale per panel
(2.0, 1.5)
>>> list(fig.layout.yaxis.range)   # class 0 at the top
[1.5, -0.5]
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from sblr.exceptions import DataError

# plotly is imported by the functions that draw (a second or so): the statistics, the report's
# tables and the command line import this package's modules without drawing anything.
if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "BETA_ABS_COLORSCALE",
    "BETA_COLORSCALE",
    "COUNT_COLORSCALE",
    "MAX_TICK_LABELS",
    "MODEL_COLORS",
    "NEGATIVE_COLOR",
    "OTHER_COLOR",
    "POSITIVE_COLOR",
    "PREDICTED_COLOR",
    "beta_heatmaps",
    "class_colors",
    "confusion_matrix_figure",
    "evidence_scatter",
    "cooccurrence_heatmap",
    "figure_html",
    "label_frequency_bar",
    "metric_bars",
    "pca_coordinates",
    "pca_scatter",
    "pr_curve_figure",
    "probability_bars",
    "rank_agreement_figure",
    "regularization_path",
    "waterfall",
]

# --------------------------------------------------------------------------- conventions

#: Positive beta / contribution (raises class k's logit).
POSITIVE_COLOR = "#b2182b"
#: Negative beta / contribution (lowers class k's logit).
NEGATIVE_COLOR = "#2166ac"
#: Totals (the logit bar of the waterfall).
TOTAL_COLOR = "#4d4d4d"
#: Catch-all groups ("other N classes") and not-predicted bars.
OTHER_COLOR = "#c8c8c8"
#: Classes predicted relevant in :func:`probability_bars`.
PREDICTED_COLOR = "#1a9850"
#: Single-colour count bars.
COUNT_COLOR = "#6a51a3"
#: One colour per model, used wherever models are compared.
MODEL_COLORS = {"SML": "#7570b3", "SBLR": "#1b9e77", "SparseSBLR": "#d95f02"}

#: Diverging scale for signed beta, symmetric around 0.  Exact zeros are drawn
#: as gaps (white background); the jump at 0.5 gives every non-zero value at
#: least a pale blue / pale red tint, so "small" and "exactly zero" differ.
BETA_COLORSCALE = [
    [0.0, "#053061"],
    [0.2, "#2166ac"],
    [0.38, "#92c5de"],
    [0.5, "#d1e5f0"],
    [0.5, "#fddbc7"],
    [0.62, "#f4a582"],
    [0.8, "#b2182b"],
    [1.0, "#67001f"],
]
#: Sequential scale for |beta| (never white: white means exactly zero).
BETA_ABS_COLORSCALE = [
    [0.0, "#fee0d2"],
    [0.35, "#fc9272"],
    [0.7, "#de2d26"],
    [1.0, "#67000d"],
]
#: Sequential scale for counts (never white: white means a zero count).
COUNT_COLORSCALE = [
    [0.0, "#efedf5"],
    [0.4, "#9e9ac8"],
    [0.75, "#6a51a3"],
    [1.0, "#3f007d"],
]

#: Above this many classes, per-class tick labels are hidden (hover names them).
MAX_TICK_LABELS = 30
#: Largest figure height (px) any function here returns (per panel, for stacked panels).
MAX_HEIGHT = 900
_TICK_CHARS = 18  # tick labels longer than this are shortened with "…"
_MAX_COLOURED = 20  # at most this many colours in a legend; the rest go grey


# --------------------------------------------------------------------------- helpers


def class_colors(m: int) -> list[str]:
    """One colour per class index, the same in every figure for a given ``m``.

    Parameters
    ----------
    m : int
        Number of classes.

    Returns
    -------
    list of str
        Plotly's 10-colour qualitative palette for ``m <= 10``, the 24-colour
        "Dark24" palette for ``m <= 24``; above that the 24 colours repeat
        (figures with many classes colour only the largest groups).

    Examples
    --------
    >>> class_colors(3)
    ['#636EFA', '#EF553B', '#00CC96']
    """
    from plotly.colors import qualitative

    palette = qualitative.Plotly if m <= 10 else qualitative.Dark24
    return [palette[i % len(palette)] for i in range(m)]


def _dense(a) -> np.ndarray:
    if hasattr(a, "toarray"):  # scipy sparse
        a = a.toarray()
    return np.asarray(a)


def _float_array(a, what: str, ndim: int, *, allow_nan: bool = False) -> np.ndarray:
    arr = _dense(a)
    try:
        arr = arr.astype(float)
    except (TypeError, ValueError):
        raise DataError(f"{what} must be numeric.") from None
    if arr.ndim != ndim:
        raise DataError(f"{what} must be a {ndim}-D array, got shape {arr.shape}.")
    if allow_nan:
        if np.isinf(arr).any():
            raise DataError(f"{what} contains infinite values.")
    elif not np.isfinite(arr).all():
        raise DataError(f"{what} contains NaN or infinite values.")
    return arr


def _square(a, what: str) -> np.ndarray:
    arr = _float_array(a, what, 2)
    if arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise DataError(f"{what} must be a non-empty square (m, m) matrix, got shape {arr.shape}.")
    return arr


def _names(class_names, m: int) -> list[str]:
    if class_names is None:
        return [str(t) for t in range(m)]
    names = [str(c) for c in class_names]
    if len(names) != m:
        raise DataError(f"Got {len(names)} class names for {m} classes; they must match.")
    return names


def _unique(names: Sequence[str]) -> list[str]:
    """Category labels: HTML-escaped, and distinct (duplicates get their index)."""
    names = [_esc(name) for name in names]
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    return [f"{name} [{i}]" if seen[name] > 1 else name for i, name in enumerate(names)]


def _esc(text: str) -> str:
    """Escape &, < and > for plotly's pseudo-HTML (quotes stay readable)."""
    return html.escape(str(text), quote=False)


def _short(name: str, width: int = _TICK_CHARS) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def _tick_texts(labels: Sequence[str], width: int = _TICK_CHARS) -> list[str]:
    """Tick texts for escaped, distinct category labels: names longer than ``width``
    characters are cut where the names still differ (end, middle or start: "label_1…",
    "Emo…_Angry", "…ong_name_017"), the cut made on the text as read, never inside an
    HTML entity such as ``&amp;``."""
    text = [html.unescape(x) for x in labels]
    if all(len(x) <= width for x in text):
        return list(labels)

    def cut(x: str, head: int) -> str:
        if len(x) <= width:
            return x
        tail = width - 1 - head
        return x[:head] + "…" + (x[-tail:] if tail else "")

    for head in (width - 1, width // 2, 0):  # keep the start, both ends, the end
        short = [cut(x, head) for x in text]
        if len(set(short)) == len(short):
            break
    else:
        short = [cut(x, width - 1) for x in text]
    return [_esc(x) for x in short]


def _height(n: int, *, base: int, per: int, lo: int, hi: int = MAX_HEIGHT) -> int:
    return int(min(max(base + per * n, lo), hi, MAX_HEIGHT))


def _titled(main: str, sub: str | None = None, *, extra: int = 0) -> dict:
    """Layout entries for a left-aligned title (+ smaller subtitle lines) and a top
    margin tall enough for all its lines (``extra`` px more, e.g. for subplot titles)."""
    text = main if not sub else f"{main}<br><sup>{sub}</sup>"
    lines = text.count("<br>") + 1
    return {
        "title": {
            "text": text,
            "x": 0.0,
            "xanchor": "left",
            "xref": "container",
            "y": 1.0,
            "yanchor": "top",
            "yref": "container",
            "pad": {"t": 12, "l": 12},
        },
        "margin": {"t": 36 + 19 * lines + extra},
    }


def _category_axis(labels: Sequence[str], show: bool, *, title: str | None = None) -> dict:
    """Axis settings for one tick per class (shortened) or none at all."""
    axis: dict = {
        "type": "category",
        "showgrid": False,
        "zeroline": False,
        "automargin": True,
        # a thin frame, so that a panel of mostly exact zeros (drawn white) keeps its shape
        "showline": True,
        "mirror": True,
        "linecolor": "#c8c8c8",
    }
    if title is not None:
        axis["title"] = {"text": title}
    if show:
        axis.update(
            tickmode="array",
            tickvals=list(labels),
            ticktext=_tick_texts(labels),
            tickfont={"size": 11 if len(labels) <= 15 else 9},
        )
    else:
        axis.update(showticklabels=False, ticks="")
    return axis


def _matrix_yaxis(labels, show: bool, *, title: str | None, x: str = "x") -> dict:
    """Rows of a square class-by-class matrix: first class on top, square cells."""
    return {
        **_category_axis(labels, show, title=title),
        "autorange": "reversed",
        "scaleanchor": x,
        "scaleratio": 1,
        "constrain": "domain",
        "constraintoward": "top",
    }


def _tick_note(m: int) -> str:
    return (
        f"{m} classes: tick labels hidden — hover for class names, drag to zoom, "
        "double-click to reset"
    )


def _fmt(x: float) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.3g}"


# --------------------------------------------------------------------------- beta heatmaps

#: Width (px) of the plot area the heatmap layout assumes at least: the gap between panels
#: (the left panel's colour bar, the right panel's row names) is a share of the width.
_ASSUMED_PLOT_WIDTH = 800
_CHAR_PX = 0.62  # average character width of tick text, in font sizes (generous)
_COLORBAR_PX = 80  # a vertical colour bar with its tick labels


def _tick_px(labels: Sequence[str], font: int) -> float:
    """Generous width (px) of the longest tick label as drawn."""
    longest = max((len(html.unescape(x)) for x in _tick_texts(labels)), default=0)
    return longest * _CHAR_PX * font


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
        Draw only these classes (rows and columns, in class order), e.g.
        :func:`sblr.interpret.top_classes`; the subtitle says how many of
        ``m`` are drawn.  Default: all.

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap per model (N = number of classes drawn).  Colour axes:
        ``layout.coloraxis``, ``coloraxis2``, ... one per panel (one shared
        ``coloraxis`` with ``shared_scale``), ``cmin``/``cmax`` = -M/+M signed
        or 0/M absolute, M = the largest |value| of the panel (of all panels
        when shared; 1 when all are zero); every trace also has
        ``zmin``/``zmax``.  ``z`` is (N, N), NaN exactly where the value is 0
        (drawn white).  Rows = target class k (first class at the top),
        columns = evidence class t; every axis has the N class names as its
        categories (``categoryarray``) and a fixed range, so a panel of zeros
        keeps its cells.  ``customdata[k][t]`` = ``[value, co-occurrence (NaN
        if not given)]`` plus ``raw beta`` with ``raw`` (float32, to keep the
        figure small).  Up to :data:`MAX_TICK_LABELS` drawn classes, every
        panel names its rows and columns (cut to 18 characters where the
        names still differ; the hover has the full name); with more, tick
        labels are hidden.  Panels sit side by side, the gap between them
        holding a colour bar and the next panel's row names; with 16 to 30
        drawn classes they are stacked, each the full width (up to
        :data:`MAX_HEIGHT` per panel), so every column name stays readable.
        The axis titles appear once: "class k (predicted)" on the first y
        axis, "evidence of class t" as one annotation under the panels.
        ``layout.annotations`` lists such notes first and the subplot titles
        last, in model order.

    Raises
    ------
    DataError
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
    from plotly.subplots import make_subplots

    items = list(coefs.items()) if isinstance(coefs, Mapping) else [("β", coefs)]
    if not items:
        raise DataError("coefs is empty; give at least one (m, m) coefficient matrix.")
    mats = [(str(name), _square(B, f"coefs[{name!r}]")) for name, B in items]
    m = mats[0][1].shape[0]
    for name, B in mats:
        if B.shape[0] != m:
            raise DataError(
                f"coefs[{name!r}] is {B.shape[0]}x{B.shape[0]} but the first matrix is {m}x{m}; "
                "all models must have the same classes."
            )
    standardized = raw is not None
    if standardized:
        raw_items = dict(raw.items()) if isinstance(raw, Mapping) else {mats[0][0]: raw}
        raws = []
        for name, _ in mats:
            if name not in raw_items:
                raise DataError(f"raw has no matrix for the model {name!r}.")
            R = _square(raw_items[name], f"raw[{name!r}]")
            if R.shape[0] != m:
                raise DataError(f"raw[{name!r}] is {R.shape[0]}x{R.shape[0]}, expected {m}x{m}.")
            raws.append(R)
    all_labels = _unique(_names(class_names, m))
    if cooccurrence is not None:
        C = _square(cooccurrence, "cooccurrence")
        if C.shape[0] != m:
            raise DataError(f"cooccurrence is {C.shape[0]}x{C.shape[0]} but beta is {m}x{m}.")
    else:
        C = np.full((m, m), np.nan)
    if classes is None:
        idx = np.arange(m)
    else:
        idx = np.asarray(classes, dtype=np.intp).reshape(-1)
        if idx.size == 0 or idx.min() < 0 or idx.max() >= m or np.unique(idx).size != idx.size:
            raise DataError(f"classes must be distinct class indices in [0, {m - 1}].")
    sub_ix = np.ix_(idx, idx)
    N = idx.size
    labels = [all_labels[i] for i in idx]
    shown_mats = [(name, B[sub_ix]) for name, B in mats]
    if titles is None:
        titles = [f"{name} ({int((B == 0).sum())} of {N * N} β = 0)" for name, B in shown_mats]
    else:
        titles = [str(t) for t in titles]
        if len(titles) != len(mats):
            raise DataError(f"Got {len(titles)} titles for {len(mats)} models.")
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
    # Past 15 named classes, panels side by side get too narrow to name every column:
    # one panel per row, the full width each.
    stacked = n > 1 and 15 < N <= MAX_TICK_LABELS
    # x labels at -45° hang below a panel by about this much
    drop_px = 0.71 * (label_px + font) + 8 if show_ticks else 4.0
    plot_px = min(max(18 * N, 300), 560) if stacked else min(max(28 * N, 300), 520)
    if stacked:
        # below each upper panel: its column names, then the next panel's title
        gap_px = drop_px + 44
        spacing = gap_px / (n * plot_px + (n - 1) * gap_px)
        fig = make_subplots(rows=n, cols=1, subplot_titles=titles, vertical_spacing=spacing)
    else:
        # between panels: the left panel's colour bar and the right panel's row names
        gap_px = (label_px + 12 if show_ticks else 0) + (0 if shared_scale else _COLORBAR_PX) + 20
        spacing = min(0.35, gap_px / _ASSUMED_PLOT_WIDTH) if n > 1 else 0.0
        fig = make_subplots(rows=1, cols=n, subplot_titles=titles, horizontal_spacing=spacing)
    sym = "β̃" if standardized else "β"
    hover = f"target k: %{{y}}<br>evidence t: %{{x}}<br>{sym} = %{{customdata[0]:.3g}}"
    if standardized:
        hover += " (per sd of f̄<sub>t</sub>)<br>β = %{customdata[2]:.3g}"
    if cooccurrence is not None:
        hover += "<br>co-occurrence = %{customdata[1]:.0f}"
    gap = 1 if show_ticks else 0
    notes = []
    for i, (name, B) in enumerate(shown_mats, start=1):
        suffix = "" if i == 1 else str(i)
        shown = B if signed else np.abs(B)
        zmin, zmax = shared if shared_scale else scale(tops[i - 1])
        axis_name = "coloraxis" if shared_scale or i == 1 else f"coloraxis{i}"
        layers = [B, C[sub_ix]] + ([raws[i - 1][sub_ix]] if standardized else [])
        fig.add_trace(
            go.Heatmap(
                # float32 halves the payload (174 classes: ~1 MB per model); hover shows 3 digits
                z=np.where(B == 0, np.nan, shown).astype(np.float32),
                x=labels,
                y=labels,
                customdata=np.stack(layers, axis=-1).astype(np.float32),
                coloraxis=axis_name,
                zmin=zmin,
                zmax=zmax,
                xgap=gap,
                ygap=gap,
                hoverongaps=True,
                hovertemplate=hover + f"<extra>{_esc(name)}</extra>",
                name=name,
            ),
            row=i if stacked else 1,
            col=1 if stacked else i,
        )
        all_zero = not B.any()
        if all_zero:
            at = f" at λ = {lams[name]:.3g}" if name in lams else ""
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
        fig.update_layout({f"xaxis{suffix}": x_axis, f"yaxis{suffix}": y_axis})
        if not shared_scale or i == n:
            x_dom = fig.layout[f"xaxis{suffix}"].domain
            y_dom = (0.0, 1.0) if shared_scale else fig.layout[f"yaxis{suffix}"].domain
            fig.update_layout(
                {
                    axis_name: {
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
                }
            )
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
    for title in fig.layout.annotations:  # subplot titles: clear of the panel frame
        title.update(yshift=4, font={"size": 13})
    # the notes first: pages and tests find each model's subplot title by its name
    fig.layout.annotations = tuple(notes) + tuple(fig.layout.annotations)

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
    rows = n if stacked else 1
    height = layout["margin"]["t"] + rows * plot_px + (rows - 1) * gap_px + bottom
    fig.update_layout(
        **layout,
        plot_bgcolor="white",
        height=int(min(height, MAX_HEIGHT * rows)),
        dragmode="zoom",
    )
    return fig


# --------------------------------------------------------------------------- co-occurrence


def _matrix_layout(fig, title, sub, labels, show_ticks, *, x_title, y_title, height):
    """The layout of a square class-by-class heatmap (co-occurrence, confusion, selection)."""
    if not show_ticks:
        sub += "<br>" + _tick_note(len(labels))
    fig.update_layout(
        **_titled(title, sub),
        xaxis={**_category_axis(labels, show_ticks, title=x_title), "constrain": "domain"},
        yaxis=_matrix_yaxis(labels, show_ticks, title=y_title),
        plot_bgcolor="white",
        height=height,
        dragmode="zoom",
    )
    return fig


def cooccurrence_heatmap(
    C, class_names: Sequence[str] | None = None, *, cap_diagonal: bool = True
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

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap; zero counts are white; ``customdata`` holds the counts.

    Examples
    --------
    >>> fig = cooccurrence_heatmap([[3, 1], [1, 2]], ["a", "b"])
    >>> fig.data[0].zmax
    1.0
    """
    import plotly.graph_objects as go

    C = _square(C, "C")
    if (C < 0).any():
        raise DataError("Co-occurrence counts must be >= 0.")
    m = C.shape[0]
    labels = _unique(_names(class_names, m))
    off = C[~np.eye(m, dtype=bool)]
    capped = cap_diagonal and off.size > 0 and off.max() > 0
    zmax = float(off.max()) if capped else float(max(C.max(), 1.0))
    show_ticks = m <= MAX_TICK_LABELS
    gap = 1 if show_ticks else 0
    fig = go.Figure(
        go.Heatmap(
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
    )
    sub = "diagonal = class size, white = never together"
    if capped:
        sub += "; colours capped at the largest off-diagonal count"
    return _matrix_layout(
        fig,
        "Label co-occurrence: number of rows in which both classes are relevant",
        sub,
        labels,
        show_ticks,
        x_title="class",
        y_title="class",
        height=_height(m, base=400, per=10, lo=460, hi=780),
    )


def selection_frequency_heatmap(
    frequency, class_names: Sequence[str] | None = None, *, n_resamples: int | None = None
) -> go.Figure:
    """Share of bootstrap resamples in which each ``β[k, t]`` is non-zero.

    Parameters
    ----------
    frequency : array-like of shape (m, m)
        ``StabilityResult.selection_frequency`` (values in [0, 1]).
    class_names : sequence of str, optional
    n_resamples : int, optional
        Named in the title.

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap, rows = class k, columns = evidence class t, 0 white to 1 dark.

    Examples
    --------
    >>> fig = selection_frequency_heatmap([[1.0, 0.2], [0.0, 0.9]], ["wren", "jay"])
    >>> fig.data[0].zmax, fig.data[0].x
    (1.0, ('wren', 'jay'))
    """
    import plotly.graph_objects as go

    S = _square(frequency, "frequency")
    if S.min() < 0 or S.max() > 1:
        raise DataError("Selection frequencies must lie in [0, 1].")
    m = S.shape[0]
    labels = _unique(_names(class_names, m))
    show_ticks = m <= MAX_TICK_LABELS
    gap = 1 if show_ticks else 0
    fig = go.Figure(
        go.Heatmap(
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
    )
    times = f" ({n_resamples} bootstrap resamples)" if n_resamples else ""
    return _matrix_layout(
        fig,
        f"Selection frequency of SparseSBLR's β{times}",
        "how often β[k, t] ≠ 0 when the rows are resampled; dark = always used",
        labels,
        show_ticks,
        x_title="evidence of class t",
        y_title="class k",
        height=_height(m, base=400, per=10, lo=460, hi=780),
    )


# --------------------------------------------------------------------------- class frequencies


def label_frequency_bar(
    counts, class_names: Sequence[str] | None = None, *, total: int | None = None
) -> go.Figure:
    """Bar chart of the number of rows per class, sorted descending.

    Parameters
    ----------
    counts : array-like of shape (m,)
        Rows per class (e.g. ``Dataset.label_matrix().sum(axis=0)``).
    class_names : sequence of str, optional
        Length ``m``.
    total : int, optional
        Number of rows, for the "share of rows" in the hover (multi-label rows
        count once per label, so this is not ``counts.sum()``).  Default: the
        sum of ``counts`` (then the share is of all class assignments).

    Returns
    -------
    plotly.graph_objects.Figure
        Up to :data:`MAX_TICK_LABELS` classes: horizontal bars, largest at the
        top, every name shown.  More classes: vertical bars in rank order
        with the class names in the hover only.  ``customdata`` per bar =
        ``[count, share]``.

    Examples
    --------
    >>> fig = label_frequency_bar([5, 20, 10], ["a", "b", "c"], total=30)
    >>> list(fig.data[0].y), fig.data[0].orientation
    (['b', 'c', 'a'], 'h')
    """
    import plotly.graph_objects as go

    counts = _float_array(counts, "counts", 1)
    if counts.size == 0:
        raise DataError("counts is empty.")
    if (counts < 0).any():
        raise DataError("counts must be >= 0.")
    m = counts.size
    labels = _unique(_names(class_names, m))
    denom = float(counts.sum()) if total is None else float(total)
    if total is not None and (not np.isfinite(denom) or denom <= 0):
        raise DataError(f"total must be a positive number of rows, got {total!r}.")
    denom = denom if denom > 0 else 1.0
    order = np.argsort(-counts, kind="stable")
    y_vals, x_names = counts[order], [labels[i] for i in order]
    custom = np.stack([y_vals, y_vals / denom], axis=-1)
    share_of = "rows" if total is not None else "all class assignments"
    hover = (
        "%{hovertext}<br>rows = %{customdata[0]:,.0f}<br>"
        f"share of {share_of} = %{{customdata[1]:.1%}}<extra></extra>"
    )
    horizontal = m <= MAX_TICK_LABELS
    if horizontal:
        bar = go.Bar(
            x=y_vals,
            y=x_names,
            orientation="h",
            customdata=custom,
            hovertext=x_names,
            hovertemplate=hover,
            marker_color=COUNT_COLOR,
            text=[f"{v:,.0f}" for v in y_vals],
            textposition="outside",
            cliponaxis=False,
        )
        layout = {
            "xaxis": {"title": {"text": "rows"}, "rangemode": "tozero"},
            "yaxis": {**_category_axis(x_names, True), "autorange": "reversed"},
            "height": _height(m, base=140, per=24, lo=280, hi=860),
        }
        sub = None
    else:
        bar = go.Bar(
            x=x_names,
            y=y_vals,
            customdata=custom,
            hovertext=x_names,
            hovertemplate=hover,
            marker_color=COUNT_COLOR,
        )
        layout = {
            "xaxis": _category_axis(x_names, False, title="classes, most frequent first"),
            "yaxis": {"title": {"text": "rows"}, "rangemode": "tozero"},
            "height": 460,
        }
        sub = _tick_note(m)
    fig = go.Figure(bar)
    fig.update_layout(
        **_titled("Class frequencies: number of rows in which each class is relevant", sub),
        bargap=0.15,
        **layout,
    )
    return fig


# --------------------------------------------------------------------------- PCA


def _group_codes(codes: np.ndarray, order: np.ndarray, m_colours: int):
    """Keep the first ``m_colours - 1`` groups of ``order`` (if there are more), rest "other"."""
    present = [g for g in order if (codes == g).any()]
    if len(present) <= m_colours:
        return present, None
    keep = present[: m_colours - 1]
    rest = [g for g in present if g not in set(keep)]
    return keep, rest


def pca_coordinates(X, *, random_state: int = 0):
    """The 2-D PCA coordinates :func:`pca_scatter` draws (the model fit, apart from the
    drawing, so a caller can compute or cache them).

    Dense data: PCA of the standardized columns.  Sparse data (never densified): a
    truncated SVD of the columns scaled to [-1, 1] (centring would fill in the zeros).

    Returns
    -------
    Z : ndarray of shape (n, 2)
        The second column is 0 when only one component exists.
    explained : ndarray of shape (2,)
        Share of variance of each component.
    method : str
        What was computed, for the title.

    Examples
    --------
    >>> Z, var, method = pca_coordinates(np.random.default_rng(0).normal(size=(30, 3)))
    >>> Z.shape, method
    ((30, 2), 'PCA of the standardized features')
    """
    from sklearn.decomposition import PCA, TruncatedSVD
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler

    sparse = sp.issparse(X)
    X = sp.csr_matrix(X, dtype=np.float64) if sparse else _float_array(X, "X", 2)
    n, d = X.shape
    if n < 2 or d < 1:
        raise DataError(f"PCA needs at least 2 rows and 1 column; X has shape {X.shape}.")
    n_comp = min(2, n, d)
    if sparse and d > 2:
        method = "Truncated SVD of the max-abs scaled sparse features"
        pca = TruncatedSVD(n_components=n_comp, random_state=random_state)
        Z = pca.fit_transform(MaxAbsScaler().fit_transform(X))
    else:
        method = "PCA of the standardized features"
        pca = PCA(n_components=n_comp, random_state=random_state)
        Z = pca.fit_transform(StandardScaler().fit_transform(X.toarray() if sparse else X))
    var = np.asarray(pca.explained_variance_ratio_, dtype=float)
    if n_comp == 1:
        Z = np.column_stack([Z[:, 0], np.zeros(n)])
        var = np.r_[var, 0.0]
    return Z, var, method


def pca_scatter(
    X,
    labels,
    *,
    class_names: Sequence[str] | None = None,
    max_points: int = 2000,
    random_state: int = 0,
    color_by: str = "label",
    coordinates=None,
) -> go.Figure:
    """2-D PCA of the standardized features, one colour per class.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Encoded features (e.g. ``Dataset.X``); standardized (zero mean, unit
        variance per column) before PCA.
    labels : array-like of shape (n,) or (n, m)
        Multi-class labels (class values, or integer indices into
        ``class_names``), or a 0/1 multi-label indicator matrix.
    class_names : sequence of str, optional
        Class order and names.  1-D labels: default the sorted distinct
        labels.  Indicator matrix: length ``m``.
    max_points : int, default 2000
        Larger data are subsampled (without replacement, ``random_state``) to
        this many rows; PCA itself is fitted on all rows.
    random_state : int, default 0
        Seed of the subsample (and of a randomized PCA solver, if used).
    color_by : {"label", "set_size"}, default "label"
        Multi-label only.  "label": each row is coloured by the most frequent
        label (over the whole data) among its own labels.  "set_size": by
        the number of labels of the row.
    coordinates : tuple, optional
        The output of :func:`pca_coordinates` for ``X`` (computed here when not given).

    Returns
    -------
    plotly.graph_objects.Figure
        One scatter trace per colour group (legend-toggleable; at most 20
        groups, the least frequent merged into "other"), axes "PC1 (x% of
        variance)".  The title says what the colour means and, when
        subsampled, "showing N of M rows".

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> fig = pca_scatter(rng.normal(size=(50, 3)), np.repeat(["a", "b"], 25), max_points=20)
    >>> sum(len(trace.x) for trace in fig.data)
    20
    """
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    sparse = sp.issparse(X)
    if sparse:  # never densified: a sparse file can be far larger as a dense matrix
        X = sp.csr_matrix(X, dtype=np.float64)
        if not np.isfinite(X.data).all():
            raise DataError("X contains NaN or infinite values.")
    else:
        X = _float_array(X, "X", 2)
    n, d = X.shape
    if n < 2 or d < 1:
        raise DataError(f"PCA needs at least 2 rows and 1 column; X has shape {X.shape}.")
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 1:
        raise DataError(f"max_points must be a positive integer, got {max_points!r}.")
    if color_by not in ("label", "set_size"):
        raise DataError(f"color_by must be 'label' or 'set_size', got {color_by!r}.")
    lab = _dense(labels)
    if lab.shape[0] != n:
        raise DataError(f"labels has {lab.shape[0]} rows but X has {n}.")

    set_sizes = None
    if lab.ndim == 1:
        multilabel = False
        if class_names is None:
            names = [str(c) for c in np.unique(lab)]
        else:
            names = [str(c) for c in class_names]
        lookup = {name: i for i, name in enumerate(names)}
        text = lab.astype(str)
        if all(t in lookup for t in text.tolist()):
            codes = np.array([lookup[t] for t in text.tolist()], dtype=np.intp)
        elif np.issubdtype(lab.dtype, np.integer) and lab.min() >= 0 and lab.max() < len(names):
            codes = lab.astype(np.intp)
        else:
            bad = next(t for t in text.tolist() if t not in lookup)
            raise DataError(f"Label {bad!r} is not one of the class names {names[:10]!r}….")
        m = len(names)
        freq = np.bincount(codes, minlength=m)
        row_text = [f"class: {_esc(names[c])}" for c in codes]
        what = "class"
    elif lab.ndim == 2:
        multilabel = True
        Y = _float_array(lab, "labels", 2)
        if not np.isin(Y, (0, 1)).all():
            raise DataError("A 2-D labels array must be a 0/1 indicator matrix.")
        Y = Y.astype(bool)
        m = Y.shape[1]
        names = _names(class_names, m)
        freq = Y.sum(axis=0)
        rank = np.empty(m, dtype=np.intp)
        rank[np.argsort(-freq, kind="stable")] = np.arange(m)
        score = np.where(Y, rank[np.newaxis, :], m)
        codes = np.where(Y.any(axis=1), np.argmin(score, axis=1), m).astype(np.intp)
        set_sizes = Y.sum(axis=1)
        row_text = []
        for row in Y:
            present = [_esc(names[t]) for t in np.flatnonzero(row)]
            shown = ", ".join(present[:5]) + (
                f", … (+{len(present) - 5})" if len(present) > 5 else ""
            )
            row_text.append(f"{len(present)} labels: {shown or '(none)'}")
        what = "the row's most frequent label"
    else:
        raise DataError(f"labels must be 1-D or a 2-D indicator matrix, got shape {lab.shape}.")

    if coordinates is None:
        coordinates = pca_coordinates(X, random_state=random_state)
    Z, var, method = coordinates
    Z = _float_array(Z, "coordinates", 2)
    if Z.shape != (n, 2):
        raise DataError(f"coordinates must have shape ({n}, 2); got {Z.shape}.")
    n_comp = min(2, n, d)

    if n > max_points:
        rows = np.sort(np.random.default_rng(random_state).choice(n, max_points, replace=False))
        sample_note = (
            f"showing {max_points:,} of {n:,} rows (random subsample, seed {random_state})"
        )
    else:
        rows = np.arange(n)
        sample_note = f"all {n:,} rows"
    size = 5 if len(rows) > 500 else 7
    fig = go.Figure()

    def add(mask, name, color, show=True):
        idx = rows[mask[rows]]
        if idx.size == 0:
            return
        fig.add_trace(
            go.Scattergl(
                x=Z[idx, 0],
                y=Z[idx, 1],
                mode="markers",
                name=_esc(name),
                marker={"size": size, "color": color, "opacity": 0.75},
                hovertext=[f"row {i}<br>{row_text[i]}" for i in idx],
                hovertemplate="%{hovertext}<extra>" + _esc(name) + "</extra>",
                showlegend=show,
            )
        )

    if multilabel and color_by == "set_size":
        idx = rows
        fig.add_trace(
            go.Scattergl(
                x=Z[idx, 0],
                y=Z[idx, 1],
                mode="markers",
                name="rows",
                marker={
                    "size": size,
                    "color": set_sizes[idx],
                    "colorscale": "Viridis",
                    "opacity": 0.75,
                    "colorbar": {"title": {"text": "labels<br>per row"}},
                },
                hovertext=[f"row {i}<br>{row_text[i]}" for i in idx],
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
        colour_note = "colour = number of labels of the row"
    else:
        order = np.argsort(-np.r_[freq, -1], kind="stable")  # code m (no labels) last
        if not multilabel and m <= 24:
            keep, rest = _group_codes(codes, np.arange(m), 24)
            palette = dict(zip(range(m), class_colors(m), strict=True))
        else:
            keep, rest = _group_codes(codes, order, _MAX_COLOURED)
            cols = qualitative.Dark24
            palette = {g: cols[j % len(cols)] for j, g in enumerate(keep)}
        for g in keep:
            label = names[g] if g < m else "(no labels)"
            add(codes == g, label, palette[g] if g < m else OTHER_COLOR)
        if rest:
            add(np.isin(codes, rest), f"other ({len(rest)} groups)", OTHER_COLOR)
        colour_note = f"colour = {what}"
        if multilabel:
            colour_note += " (the label present in the row that is most common in the data)"

    fig.update_layout(
        **_titled(f"{method} — {sample_note}", _esc(colour_note)),
        xaxis={"title": {"text": f"PC1 ({var[0]:.1%} of variance)"}, "zeroline": False},
        yaxis={
            "title": {
                "text": f"PC2 ({var[1]:.1%} of variance)" if n_comp == 2 else "(only 1 component)"
            },
            "zeroline": False,
        },
        legend={
            "title": {"text": "class" if not multilabel else "label"},
            "itemsizing": "constant",
        },
        height=560,
        dragmode="zoom",
    )
    return fig


# --------------------------------------------------------------------------- waterfall


def waterfall(
    table: pd.DataFrame,
    *,
    title: str | None = None,
    max_classes: int = 25,
    keep: int = 20,
) -> go.Figure:
    """Waterfall of one class's logit: intercept + each class's contribution.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :meth:`sblr.interpret.InstanceContributions.waterfall`:
        columns ``term``, ``evidence`` (f̄_t(x)), ``beta`` (beta_t^k),
        ``contribution`` (beta_t^k * f̄_t(x)); first row the intercept
        (``term == "intercept"``).  With a ``beta_std`` column
        (``waterfall(k, names, evidence_sd=...)``) each bar's hover also shows
        the standardized β̃ = beta · sd(f̄_t) beside its contribution.
    title : str, optional
        Main title (e.g. "Why 'Pacific Wren' for this recording?").  A line
        with the logit and probability is always added below it.
    max_classes : int, default 25
        With more class rows than this, only the ``keep`` largest
        |contributions| get their own bar ...
    keep : int, default 20
        ... and the rest are merged into one "other N classes" bar, so the
        bars still add up to the logit.

    Returns
    -------
    plotly.graph_objects.Figure
        One horizontal ``go.Waterfall`` trace, top to bottom: intercept,
        class contributions (largest |contribution| first), possibly "other
        N classes", and a ``"total"`` bar "logit".  ``measure`` is
        ``"relative"`` for every bar except the last; the relative values
        (``trace.x``) sum to the logit.  Red bars raise the logit, blue lower
        it; the dashed line at 0 is logit 0, i.e. probability 0.5.

    Raises
    ------
    DataError
        Missing columns, or no rows.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"term": ["intercept", "b", "a"], "evidence": [float("nan"), 0.5, 0.5],
    ...                   "beta": [float("nan"), -3.0, 2.0], "contribution": [0.5, -1.5, 1.0]})
    >>> fig = waterfall(t)
    >>> list(fig.data[0].measure), list(fig.data[0].x)
    (['relative', 'relative', 'relative', 'total'], [0.5, -1.5, 1.0, 0.0])
    """
    import plotly.graph_objects as go

    if not isinstance(table, pd.DataFrame):
        raise DataError("table must be the DataFrame of InstanceContributions.waterfall(k).")
    missing = {"term", "contribution"} - set(table.columns)
    if missing:
        raise DataError(
            f"table lacks column(s) {sorted(missing)}; expected the output of "
            "InstanceContributions.waterfall(k, class_names)."
        )
    if len(table) == 0:
        raise DataError("table has no rows.")
    if keep < 1 or max_classes < keep:
        raise DataError("Need 1 <= keep <= max_classes.")
    df = table.reset_index(drop=True)
    terms = df["term"].astype(str)
    contrib = pd.to_numeric(df["contribution"], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(contrib).all():
        raise DataError("table's contribution column has missing or non-finite values.")
    beta = (
        pd.to_numeric(df["beta"], errors="coerce").to_numpy(dtype=float)
        if "beta" in df
        else np.full(len(df), np.nan)
    )
    evid = (
        pd.to_numeric(df["evidence"], errors="coerce").to_numpy(dtype=float)
        if "evidence" in df
        else np.full(len(df), np.nan)
    )
    beta_std = (
        pd.to_numeric(df["beta_std"], errors="coerce").to_numpy(dtype=float)
        if "beta_std" in df
        else None
    )
    if "t" in df:  # the intercept row has no class index (robust to a class named "intercept")
        is_intercept = df["t"].isna().to_numpy()
    else:
        is_intercept = (terms == "intercept").to_numpy()
    intercept = float(contrib[is_intercept].sum())
    cls = np.flatnonzero(~is_intercept)
    cls = cls[np.argsort(-np.abs(contrib[cls]), kind="stable")]

    bars: list[tuple[str, float, str]] = []  # (label, value, hover)
    running = 0.0
    if is_intercept.any():
        running += intercept
        bars.append(
            (
                "intercept",
                intercept,
                f"intercept β<sub>0</sub><sup>k</sup> = {_fmt(intercept)}"
                f"<br>running total = {_fmt(running)}",
            )
        )
    shown, rest = (cls[:keep], cls[keep:]) if len(cls) > max_classes else (cls, cls[:0])
    for i in shown:
        running += contrib[i]
        bars.append(
            (
                terms[i],
                float(contrib[i]),
                f"evidence of {_esc(terms[i])}<br>contribution β·f̄ = {_fmt(contrib[i])}"
                + (
                    ""
                    if beta_std is None
                    else f"<br>β̃ = {_fmt(beta_std[i])} per sd of f̄ (standardized β)"
                )
                + f"<br>β = {_fmt(beta[i])}, f̄ = {_fmt(evid[i])}"
                f"<br>running total = {_fmt(running)}",
            )
        )
    if rest.size:
        other = float(contrib[rest].sum())
        running += other
        bars.append(
            (
                f"other {rest.size} classes",
                other,
                f"{rest.size} classes with smaller |contribution|"
                f"<br>summed contribution = {_fmt(other)}"
                f"<br>largest single |contribution| = {_fmt(np.abs(contrib[rest]).max())}"
                f"<br>running total = {_fmt(running)}",
            )
        )
    logit = float(sum(v for _, v, _ in bars))
    proba = 1.0 / (1.0 + math.exp(-logit)) if logit > -700 else 0.0
    labels = _unique([b[0] for b in bars] + ["logit"])
    values = [b[1] for b in bars] + [logit]
    hovers = [b[2] for b in bars] + [f"logit = {_fmt(logit)}<br>π = sigmoid(logit) = {proba:.3f}"]
    fig = go.Figure(
        go.Waterfall(
            orientation="h",
            y=labels,
            x=values,
            measure=["relative"] * len(bars) + ["total"],
            text=[f"{v:+.3g}" for v in values[:-1]] + [f"{logit:.3g}"],
            textposition="outside",
            cliponaxis=False,
            hovertext=hovers,
            hovertemplate="%{hovertext}<extra></extra>",
            increasing={"marker": {"color": POSITIVE_COLOR}},
            decreasing={"marker": {"color": NEGATIVE_COLOR}},
            totals={"marker": {"color": TOTAL_COLOR}},
            connector={"line": {"color": "#999999", "width": 1}},
        )
    )
    fig.add_vline(x=0, line={"color": "black", "width": 1, "dash": "dash"})
    main = title or (
        "Logit of class k = β<sub>0</sub><sup>k</sup> + Σ<sub>t</sub> "
        "β<sub>t</sub><sup>k</sup>·f̄<sub>t</sub>(x)"
    )
    sub = (
        f"logit = {logit:.3g} → π = {proba:.3f}; red raises, blue lowers; "
        "dashed line = logit 0 (π = 0.5)"
    )
    if rest.size:
        sub += f"; {rest.size} smallest contributions merged"
    fig.update_layout(
        **_titled(_esc(main) if title else main, sub),
        xaxis={"title": {"text": "contribution to the logit"}, "zeroline": False},
        yaxis={
            **_category_axis(labels, True),
            "autorange": "reversed",
            "ticktext": [_short(x, 24) for x in labels],
        },
        height=_height(len(labels), base=160, per=26, lo=320, hi=820),
        showlegend=False,
    )
    fig.update_layout(margin_l=10)
    fig.update_yaxes(automargin=True)
    return fig


# --------------------------------------------------------------------------- regularization path


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
        raise DataError("lams is empty.")
    if B.shape[0] != lams.size:
        raise DataError(
            f"coefs_k has {B.shape[0]} rows but there are {lams.size} lambda values; "
            "expected shape (n_lams, n_classes)."
        )
    if (lams <= 0).any():
        raise DataError("All lambda values must be > 0 to be drawn on a log axis.")
    m = B.shape[1]
    if m == 0:
        raise DataError("coefs_k has no classes (0 columns).")
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
    fig = go.Figure()
    for t in sorted(grey):
        fig.add_trace(
            go.Scatter(
                x=x,
                y=B[:, t],
                mode="lines",
                name=_esc(names[t]),
                line={"color": OTHER_COLOR, "width": 1},
                showlegend=False,
                hovertemplate=f"evidence t: {_esc(names[t])}<br>λ = %{{x:.3g}}"
                f"<br>{sym} = %{{y:.3g}}<extra></extra>",
            )
        )
    for t in coloured:
        fig.add_trace(
            go.Scatter(
                x=x,
                y=B[:, t],
                mode=mode,
                name=_esc(_short(names[t], 28)),
                line={"color": colours[t], "width": 2},
                marker={"size": 5},
                hovertemplate=f"evidence t: {_esc(names[t])}<br>λ = %{{x:.3g}}"
                f"<br>{sym} = %{{y:.3g}}<extra></extra>",
            )
        )
    fig.add_hline(y=0, line={"color": "#888888", "width": 1})
    if current_lam is not None:
        lam = float(current_lam)
        if not (np.isfinite(lam) and lam > 0):
            raise DataError(f"current_lam must be a positive number, got {current_lam!r}.")
        fig.add_vline(x=lam, line={"color": "black", "width": 1.5, "dash": "dash"})
        fig.add_annotation(
            x=math.log10(lam),  # annotations on log axes take log10 positions
            y=1.0,
            yref="paper",
            text=f"current λ = {lam:.3g}",
            showarrow=False,
            yanchor="bottom",
            font={"size": 11},
        )
    target = f"class k = {_esc(str(target_name))}" if target_name is not None else "class k"
    sub = "each line = evidence class t; λ decreases to the right (weaker penalty, more β ≠ 0)"
    if standardized:
        sub += "<br>β̃ = β·sd(f̄<sub>t</sub>): change of the logit per sd of class t's evidence"
    if grey:
        sub += (
            f"<br>the {len(coloured)} of {m} classes with the largest |{sym}| are coloured and "
            "named; the rest are grey (hover names them)"
        )
    sym_tk = f"{sym}<sub>t</sub><sup>k</sup>"
    fig.update_layout(
        **_titled(f"Regularization path of {sym_tk} for target {target}", sub),
        xaxis={
            "type": "log",
            "autorange": "reversed",
            "title": {"text": "λ (L1 penalty, log scale, decreasing →)"},
            "exponentformat": "power",
        },
        yaxis={"title": {"text": sym_tk + (" (per sd of f̄<sub>t</sub>)" if standardized else "")}},
        legend={"title": {"text": "evidence class t"}},
        hovermode="closest",
        height=520,
    )
    return fig


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
        raise DataError("lams must be a non-empty array of positive values.")
    order = np.argsort(lams, kind="stable")
    x = lams[order]
    nz = None if nonzero is None else np.asarray(nonzero)[order]
    fig = go.Figure()
    palette = ["#1b7837", "#762a83", "#b35806", "#2166ac"]
    for j, (name, rho) in enumerate(curves.items()):
        y = _float_array(rho, f"curve {name!r}", 1, allow_nan=True)
        if y.size != lams.size:
            raise DataError(f"Curve {name!r} has {y.size} values for {lams.size} λ values.")
        y = y[order]
        dotted = str(name).endswith("(mean over classes)")
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines+markers" if x.size <= 30 else "lines",
                name=_esc(str(name)),
                line={
                    "color": palette[j % len(palette)],
                    "width": 2,
                    "dash": "dot" if dotted else "solid",
                },
                customdata=None if nz is None else nz,
                hovertemplate=f"{_esc(str(name))}<br>λ = %{{x:.3g}}<br>ρ = %{{y:.2f}}"
                + ("<br>non-zero β: %{customdata}" if nz is not None else "")
                + "<extra></extra>",
                connectgaps=False,
            )
        )
    fig.add_hline(y=0, line={"color": "#888888", "width": 1})
    if current_lam is not None:
        lam = float(current_lam)
        if not (np.isfinite(lam) and lam > 0):
            raise DataError(f"current_lam must be a positive number, got {current_lam!r}.")
        fig.add_vline(x=lam, line={"color": "black", "width": 1.5, "dash": "dash"})
    target = f"class k = {_esc(str(target_name))}" if target_name is not None else "class k"
    fig.update_layout(
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
    )
    return fig


# --------------------------------------------------------------------------- confusion matrix


def evidence_scatter(
    F,
    t1: int,
    t2: int,
    member,
    class_names: Sequence[str],
    *,
    k: int,
    lines: Mapping[str, object] | None = None,
    rows=None,
    max_points: int = 5000,
    random_state: int = 0,
) -> go.Figure:
    """Rows in the evidence space of two classes, coloured by membership of class k.

    Parameters
    ----------
    F : array-like of shape (n, m)
        Evidence of the rows.
    t1, t2 : int
        The classes on the x and y axis.
    member : array-like of bool, shape (n,)
        Whether each row carries class k.
    class_names : sequence of str
    k : int
        The class the colours and lines are about.
    lines : mapping of str to (f1, f2) or None, optional
        Decision lines to draw, by name (e.g. :func:`sblr.interpret.decision_line`).
    rows : array-like of int, optional
        Row ids for the hover (default ``0 .. n-1``).
    max_points : int, default 5000
        More rows are subsampled (seeded) for drawing; the subtitle says so.

    Returns
    -------
    plotly.graph_objects.Figure
        Trace 0: rows without k, trace 1: rows with k, then one line per entry of ``lines``.

    Examples
    --------
    >>> fig = evidence_scatter([[0.1, 0.2], [0.5, 0.1]], 0, 1, [False, True], ["a", "b"], k=0)
    >>> [t.name for t in fig.data]
    ['not a', 'a']
    """
    import plotly.graph_objects as go

    F = _float_array(F, "F", 2)
    member = np.asarray(member, dtype=bool)
    if member.shape != (F.shape[0],):
        raise DataError(f"member must have one value per row ({F.shape[0]}).")
    names = _names(class_names, F.shape[1])
    ids = np.arange(F.shape[0]) if rows is None else np.asarray(rows)
    keep = np.arange(F.shape[0])
    if F.shape[0] > max_points:
        keep = np.sort(np.random.default_rng(random_state).choice(F.shape[0], max_points, False))
    fig = go.Figure()
    for flag, colour, label in (
        (False, OTHER_COLOR, f"not {names[k]}"),
        (True, POSITIVE_COLOR, names[k]),
    ):
        sel = keep[member[keep] == flag]
        fig.add_trace(
            go.Scattergl(
                x=F[sel, t1],
                y=F[sel, t2],
                mode="markers",
                marker={"size": 6, "color": colour, "opacity": 0.7 if flag else 0.45},
                name=_esc(label),
                customdata=ids[sel],
                hovertemplate=f"row %{{customdata}}<br>f̄ of {_esc(names[t1])}: %{{x:.3g}}"
                f"<br>f̄ of {_esc(names[t2])}: %{{y:.3g}}<extra>{_esc(label)}</extra>",
            )
        )
    dashes = ["solid", "dash", "dot"]
    y_lo, y_hi = F[:, t2].min(), F[:, t2].max()
    pad = 0.05 * (y_hi - y_lo or 1.0)
    for j, (name, line) in enumerate((lines or {}).items()):
        if line is None:
            continue
        f1, f2 = (np.asarray(v, dtype=float) for v in line)
        fig.add_trace(
            go.Scatter(
                x=f1,
                y=f2,
                mode="lines",
                line={"color": "black", "width": 2, "dash": dashes[j % len(dashes)]},
                name=_esc(str(name)),
                hoverinfo="skip",
            )
        )
    sub = "each point is a row (leave-one-out evidence); lines: where the model switches class k"
    if keep.size < F.shape[0]:
        sub += f"<br>{keep.size:,} of {F.shape[0]:,} rows drawn (a seeded sample)"
    fig.update_layout(
        **_titled(f"Rows in evidence space, coloured by {_esc(names[k])}", sub),
        xaxis={"title": {"text": f"f̄ of {_esc(_short(names[t1], 40))}"}},
        yaxis={
            "title": {"text": f"f̄ of {_esc(_short(names[t2], 40))}"},
            "range": [y_lo - pad, y_hi + pad],
        },
        height=560,
        legend={"title": {"text": ""}},
    )
    return fig


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
    """
    import plotly.graph_objects as go

    precision = _float_array(precision, "precision", 1)
    recall = _float_array(recall, "recall", 1)
    thresholds = _float_array(thresholds, "thresholds", 1)
    if precision.shape != recall.shape or thresholds.size not in (0, precision.size - 1):
        raise DataError("precision, recall and thresholds do not come from one curve.")
    name = _esc(str(class_name)) if class_name is not None else "class k"
    fig = go.Figure(
        go.Scatter(
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
    )
    if threshold is not None and thresholds.size:
        # rows with p >= threshold are predicted: the curve's point of the smallest curve
        # threshold at or above it (none: nothing predicted, the curve's last point)
        above = np.flatnonzero(thresholds >= float(threshold))
        i = int(above.min()) if above.size else len(thresholds)
        fig.add_trace(
            go.Scatter(
                x=[recall[i]],
                y=[precision[i]],
                mode="markers",
                marker={
                    "size": 12,
                    "color": "black",
                    "symbol": "circle-open",
                    "line": {"width": 3},
                },
                name=f"threshold {float(threshold):.2f}",
                hovertemplate=f"threshold {float(threshold):.2f}<br>recall %{{x:.3f}}"
                "<br>precision %{y:.3f}<extra></extra>",
            )
        )
    ap = "" if average_precision is None else f" (average precision {average_precision:.3f})"
    fig.update_layout(
        **_titled(f"Precision-recall of {name}{ap}", "each point: one decision threshold"),
        xaxis={"title": {"text": "recall"}, "range": [-0.02, 1.02]},
        yaxis={"title": {"text": "precision"}, "range": [-0.02, 1.05]},
        height=420,
        showlegend=threshold is not None,
    )
    return fig


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
        raise DataError("Confusion-matrix counts must be >= 0.")
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
    fig = go.Figure(
        go.Heatmap(
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
    )
    sub = f"diagonal = correct; accuracy = {acc:.1%}" if total > 0 else "no rows"
    return _matrix_layout(
        fig,
        "Confusion matrix: rows = true class, columns = predicted class",
        sub,
        labels,
        show_ticks,
        x_title="predicted class",
        y_title="true class",
        height=_height(m, base=360, per=12, lo=420, hi=780),
    )


# --------------------------------------------------------------------------- probabilities


def probability_bars(
    proba,
    class_names: Sequence[str] | None = None,
    *,
    threshold: float | None = 0.5,
    true_classes: Iterable[int] | None = None,
    max_bars: int = MAX_TICK_LABELS,
) -> go.Figure:
    """Horizontal bars of one row's predicted class probabilities, highest first.

    Parameters
    ----------
    proba : array-like of shape (m,)
        Predicted probabilities pi_k(x) in [0, 1].
    class_names : sequence of str, optional
        Length ``m``.
    threshold : float or None, default 0.5
        Multi-label decision: class k is predicted relevant when pi_k >= 0.5
        (green bars; dashed line).  ``None`` (multi-class): only the most
        probable class is green and no line is drawn.
    true_classes : iterable of int, optional
        Indices of the row's true classes: their bars get a black outline and
        "true class" in the hover.
    max_bars : int, default 30
        Show only the ``max_bars`` most probable classes (the title says so).

    Returns
    -------
    plotly.graph_objects.Figure
        One horizontal bar trace; x axis fixed to [0, 1].

    Examples
    --------
    >>> fig = probability_bars([0.2, 0.9, 0.6], ["a", "b", "c"])
    >>> list(fig.data[0].y), fig.layout.shapes[0].x0
    (['b', 'c', 'a'], 0.5)
    """
    import plotly.graph_objects as go

    p = _float_array(proba, "proba", 1)
    if p.size == 0:
        raise DataError("proba is empty.")
    if (p < -1e-9).any() or (p > 1 + 1e-9).any():
        raise DataError("Probabilities must lie in [0, 1].")
    m = p.size
    labels = _unique(_names(class_names, m))
    if threshold is not None:
        threshold = float(threshold)
        if not 0 <= threshold <= 1:
            raise DataError(f"threshold must be in [0, 1], got {threshold!r}.")
        predicted = p >= threshold
    else:
        predicted = np.zeros(m, dtype=bool)
        predicted[int(np.argmax(p))] = True
    true = np.zeros(m, dtype=bool)
    if true_classes is not None:
        idx = np.asarray(list(true_classes), dtype=np.intp)
        if idx.size and (idx.min() < 0 or idx.max() >= m):
            raise DataError(f"true_classes must be class indices in [0, {m - 1}].")
        true[idx] = True
    order = np.argsort(-p, kind="stable")[: max(1, int(max_bars))]
    y = [labels[i] for i in order]
    hover = [
        f"{labels[i]}<br>π = {p[i]:.3f}"
        + ("<br>predicted" if predicted[i] else "")
        + ("<br>true class" if true[i] else "")
        for i in order
    ]
    fig = go.Figure(
        go.Bar(
            x=p[order],
            y=y,
            orientation="h",
            marker={
                "color": [PREDICTED_COLOR if predicted[i] else OTHER_COLOR for i in order],
                "line": {"color": "black", "width": [2 if true[i] else 0 for i in order]},
            },
            text=[f"{p[i]:.2f}" + (" ✓" if true[i] else "") for i in order],
            textposition="outside",
            cliponaxis=False,
            hovertext=hover,
            hovertemplate="%{hovertext}<extra></extra>",
        )
    )
    if threshold is not None:
        fig.add_vline(x=threshold, line={"color": "black", "width": 1.5, "dash": "dash"})
        sub = f"green = predicted relevant (π ≥ {threshold:g}, dashed line)"
    else:
        sub = "green = predicted class (the most probable)"
    if true.any():
        sub += "; outlined ✓ = true class"
    if len(order) < m:
        sub += f"<br>showing the {len(order)} most probable of {m} classes"
    fig.update_layout(
        **_titled("Predicted probabilities π<sub>k</sub>(x) for this row", sub),
        xaxis={"range": [0, 1.08], "title": {"text": "predicted probability"}},
        yaxis={**_category_axis(y, True), "autorange": "reversed"},
        height=_height(len(order), base=150, per=24, lo=280, hi=860),
        showlegend=False,
    )
    return fig


# --------------------------------------------------------------------------- metrics


def metric_bars(
    values: Mapping[str, float] | Mapping[str, Mapping[str, float]],
    *,
    lower_is_better: Mapping[str, bool] | None = None,
) -> go.Figure:
    """Bar chart of evaluation metrics, optionally one group of bars per model.

    Parameters
    ----------
    values : dict of str to float, or dict of str to dict of str to float
        ``{metric: value}`` for one model, or ``{model: {metric: value}}``
        to compare models (colours from :data:`MODEL_COLORS`).
    lower_is_better : dict of str to bool, optional
        Metrics for which lower is better get "(↓ better)" in their label,
        the others "(↑ better)".

    Returns
    -------
    plotly.graph_objects.Figure
        One bar trace (single model) or one per model (grouped).

    Examples
    --------
    >>> fig = metric_bars({"accuracy": 0.9, "hamming loss": 0.1},
    ...                   lower_is_better={"hamming loss": True})
    >>> list(fig.data[0].x)
    ['accuracy (↑ better)', 'hamming loss (↓ better)']
    """
    import plotly.graph_objects as go
    from plotly.colors import qualitative

    if not values:
        raise DataError("values is empty.")
    nested = all(isinstance(v, Mapping) for v in values.values())
    groups = {str(k): dict(v) for k, v in values.items()} if nested else {"": dict(values)}
    metrics: list[str] = []
    for g in groups.values():
        metrics += [str(k) for k in g if str(k) not in metrics]
    lower = {str(k): bool(v) for k, v in (lower_is_better or {}).items()}

    def label(name: str) -> str:
        if not lower:
            return name
        return f"{name} ({'↓' if lower.get(name, False) else '↑'} better)"

    fig = go.Figure()
    fallback = qualitative.Plotly
    for j, (model, vals) in enumerate(groups.items()):
        ys = []
        for name in metrics:
            v = vals.get(name, np.nan)
            try:
                ys.append(float(v))
            except (TypeError, ValueError):
                raise DataError(f"Metric {name!r} of {model!r} is not a number: {v!r}.") from None
        color = MODEL_COLORS.get(model, fallback[j % len(fallback)]) if nested else COUNT_COLOR
        fig.add_trace(
            go.Bar(
                x=[label(n) for n in metrics],
                y=ys,
                name=model or "value",
                marker_color=color,
                text=[_fmt(v) for v in ys],
                textposition="outside",
                cliponaxis=False,
                hovertemplate="%{x}<br>%{y:.4g}<extra>" + _esc(model) + "</extra>",
            )
        )
    fig.update_layout(
        **_titled("Evaluation metrics" + (" by model" if nested else "")),
        barmode="group",
        yaxis={"title": {"text": "value"}, "rangemode": "tozero"},
        showlegend=nested,
        height=420,
    )
    return fig


# --------------------------------------------------------------------------- export


def figure_html(fig: go.Figure, context: Mapping[str, object] | None = None) -> str:
    """Standalone HTML page for one figure (plotly.js inlined, works offline).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    context : mapping of str to object, optional
        What the figure is of (data set, model, γ, λ, evaluation split...): written as a
        line of text above the figure and as ``<meta name="sblr:KEY">`` tags, every value
        HTML-escaped (a data set's name is the user's text, shown as text).

    Returns
    -------
    str
        A full HTML document, suitable for ``st.download_button``.

    Examples
    --------
    >>> page = figure_html(probability_bars([0.3, 0.7]), {"data": "a<b>", "model": "SML"})
    >>> "<html" in page.lower() and "plotly" in page and "data: a&lt;b&gt;" in page
    True
    """
    import plotly.graph_objects as go

    if not isinstance(fig, go.Figure):
        raise DataError(f"figure_html needs a plotly Figure, got {type(fig).__name__}.")
    page = fig.to_html(include_plotlyjs=True, full_html=True)
    if not context:
        return page
    items = [(html.escape(str(k)), html.escape(str(v))) for k, v in context.items()]
    meta = "".join(f'<meta name="sblr:{k}" content="{v}">' for k, v in items)
    line = " · ".join(f"{k}: {v}" for k, v in items)
    page = page.replace("<head>", "<head>" + meta, 1)
    return page.replace(
        "<body>", f'<body><p style="font-family: sans-serif; font-size: 13px">{line}</p>', 1
    )


# --------------------------------------------------------------------------- feature attributions


def attribution_waterfall(fa, *, title: str | None = None, keep: int = 10) -> go.Figure:
    """Waterfall from the baseline row's output to this row's, one bar per feature.

    Parameters
    ----------
    fa : sblr.attribution.FeatureAttribution
        From :func:`sblr.attribution.feature_attributions`.
    title : str, optional
        Main title (shown as text); a line with the two outputs is added below.
    keep : int, default 10
        Features with the largest ``|attribution|`` that get their own bar; the
        others are merged into one "other N features" bar, so the bars still add
        up to the output.

    Returns
    -------
    plotly.graph_objects.Figure
        One horizontal ``go.Waterfall``: the baseline's output (an ``"absolute"``
        bar, grey like the total), the features
        (largest ``|attribution|`` first), maybe "other N features", and the
        total: the row's output (its logit, or SML's evidence).

    Examples
    --------
    >>> import numpy as np
    >>> from sblr.attribution import FeatureAttribution
    >>> fa = FeatureAttribution(np.array([0.5, -2.0, 0.1, 0.2]), np.zeros(4), np.ones(4),
    ...                         output=-0.2, output_baseline=1.0, k=0, quantity="logit",
    ...                         gap=0.0, n_nodes=16, feature_names=["a", "b", "c", "d"])
    >>> trace = attribution_waterfall(fa, keep=2).data[0]
    >>> list(trace.y), [round(v, 6) for v in trace.x]
    (['baseline row', 'b', 'a', 'other 2 features', 'this row'], [1.0, -2.0, 0.5, 0.3, -0.2])
    """
    import plotly.graph_objects as go

    d = fa.attributions.shape[0]
    names = fa.feature_names or [f"x{i}" for i in range(d)]
    order = fa.top(d)
    shown, rest = (order[:keep], order[keep:]) if d > keep + 1 else (order, order[:0])
    what = "logit" if fa.quantity == "logit" else "evidence"
    running = fa.output_baseline
    bars = [
        (
            "baseline row",
            fa.output_baseline,
            f"{what} of the baseline row = {_fmt(fa.output_baseline)}",
        )
    ]
    for i in shown:
        a = float(fa.attributions[i])
        running += a
        bars.append(
            (
                str(names[i]),
                a,
                f"{_esc(str(names[i]))}: {_fmt(fa.x[i])} here, {_fmt(fa.baseline[i])} in the "
                f"baseline<br>attribution = {_fmt(a)}<br>running total = {_fmt(running)}",
            )
        )
    if rest.size:
        other = float(fa.attributions[rest].sum())
        running += other
        bars.append(
            (
                f"other {rest.size} feature{'s' if rest.size != 1 else ''}",
                other,
                f"{rest.size} features with smaller |attribution|<br>summed = {_fmt(other)}"
                f"<br>running total = {_fmt(running)}",
            )
        )
    labels = _unique([b[0] for b in bars] + ["this row"])
    values = [b[1] for b in bars] + [fa.output]
    fig = go.Figure(
        go.Waterfall(
            orientation="h",
            y=labels,
            x=values,
            measure=["absolute"] + ["relative"] * (len(bars) - 1) + ["total"],
            text=[f"{v:+.3g}" for v in values[1:-1]],
            textposition="outside",
            cliponaxis=False,
            hovertext=[b[2] for b in bars] + [f"{what} of this row = {_fmt(fa.output)}"],
            hovertemplate="%{hovertext}<extra></extra>",
            increasing={"marker": {"color": POSITIVE_COLOR}},
            decreasing={"marker": {"color": NEGATIVE_COLOR}},
            totals={"marker": {"color": TOTAL_COLOR}},
            connector={"line": {"color": "#999999", "width": 1}},
        )
    )
    fig.data[0].text = (f"{fa.output_baseline:.3g}", *fig.data[0].text, f"{fa.output:.3g}")
    if what == "logit":
        fig.add_vline(x=0, line={"color": "black", "width": 1, "dash": "dash"})
    main = title or f"Features behind the {what}"
    sub = (
        f"{what}: {fa.output_baseline:.3g} for the baseline row → {fa.output:.3g} for this row; "
        "red raises, blue lowers"
    )
    if rest.size:
        sub += f"; {rest.size} smallest merged"
    fig.update_layout(
        **_titled(_esc(main), sub),
        xaxis={"title": {"text": what}, "zeroline": False},
        yaxis={
            **_category_axis(labels, True),
            "autorange": "reversed",
            "ticktext": [_short(x, 24) for x in labels],
        },
        height=_height(len(labels), base=160, per=26, lo=320, hi=620),
        showlegend=False,
    )
    fig.update_layout(margin_l=10)
    fig.update_yaxes(automargin=True)
    return fig
