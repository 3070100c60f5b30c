"""Why a row gets its prediction: logit and feature-attribution waterfalls, the class
probabilities of one row, the rows in the evidence space of two classes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sblr.plots._style import (
    MAX_TICK_LABELS,
    NEGATIVE_COLOR,
    OTHER_COLOR,
    POSITIVE_COLOR,
    PREDICTED_COLOR,
    TOTAL_COLOR,
    _category_axis,
    _float_array,
    _fmt,
    _height,
    _names,
    _shared_key,
    _short,
    _tick_texts,
    _titled,
    _unique,
    _vline,
    esc_html,
)

# plotly is imported where a figure is drawn (see the package's __init__)
if TYPE_CHECKING:
    import plotly.graph_objects as go


# --------------------------------------------------------------------------- waterfall


_WATERFALL_COLOURS = {
    "increasing": {"marker": {"color": POSITIVE_COLOR}},
    "decreasing": {"marker": {"color": NEGATIVE_COLOR}},
    "totals": {"marker": {"color": TOTAL_COLOR}},
    "connector": {"line": {"color": "#999999", "width": 1}},
}


#: A step this small beside the largest one is written "±0": "+3.29e-10" read as a number that
#: mattered (a round-off remainder of a term that is zero).
_NEGLIGIBLE = 1e-6


def _step_texts(values):
    """Signed labels of waterfall steps, "±0" for those negligible beside the largest.

    Examples
    --------
    >>> _step_texts([1.5, -0.25, 3.29e-10])
    ['+1.5', '-0.25', '±0']
    """
    values = [float(v) for v in values]
    largest = max((abs(v) for v in values), default=0.0)
    return ["±0" if abs(v) <= _NEGLIGIBLE * largest or v == 0 else f"{v:+.3g}" for v in values]


def _waterfall_range(values, measures) -> list[float]:
    """An x range holding every bar of the waterfall with room on both sides for the value
    written outside a bar's end (``textposition="outside"``: drawn beyond the plot area it was
    cut off at the figure's edge)."""
    running = lo = hi = 0.0
    for v, measure in zip(values, measures, strict=True):
        v = float(v)
        if measure == "absolute":
            start, running = 0.0, v
        elif measure == "total":
            start = 0.0
        else:
            start, running = running, running + v
        lo, hi = min(lo, start, running), max(hi, start, running)
    pad = 0.18 * (hi - lo) if hi > lo else 1.0
    return [lo - pad, hi + pad]


def _waterfall_layout(trace, labels, titled, x_title, max_height, shapes):
    """The layout both waterfalls share: one bar per row named on the left (first at the
    top), the title block ``titled``, the x axis ``x_title`` (wide enough for the values
    written beside the bars), a height that follows the rows; ``shapes`` drawn over it."""
    layout = dict(
        **titled,
        xaxis={
            "title": {"text": x_title},
            "zeroline": False,
            "range": _waterfall_range(trace["x"], trace["measure"]),
        },
        yaxis={
            **_category_axis(labels, True),  # automargin: the names take the room they need
            "autorange": "reversed",
            "ticktext": _tick_texts(labels, 24),
        },
        height=_height(len(labels), base=160, per=26, lo=320, hi=max_height),
        showlegend=False,
        shapes=shapes,
    )
    layout["margin"] = {**layout["margin"], "l": 10}
    return layout


def waterfall(
    table: pd.DataFrame,
    *,
    title: str | None = None,
    max_classes: int = 25,
    keep: int = 20,
    cut: float | None = None,
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
    cut : float, optional
        The model's decision cut for the class (its ``threshold_[k]``): a second dashed line
        at its logit, where the decision switches (without it, only logit 0 is drawn).
    keep : int, default 20
        ... and the rest are merged into one "other N classes" bar, so the
        bars still add up to the logit.

    Returns
    -------
    plotly.graph_objects.Figure
        One horizontal ``go.Waterfall`` trace, top to bottom: intercept,
        class contributions (largest |contribution| first), possibly "other
        N classes", one bar "N classes adding 0" for the contributions that are
        exactly 0 (β = 0 or no evidence), and a ``"total"`` bar "logit".  ``measure`` is
        ``"relative"`` for every bar except the last; the relative values
        (``trace.x``) sum to the logit.  Red bars raise the logit, blue lower
        it; the dashed line at 0 is logit 0, i.e. probability 0.5.

    Raises
    ------
    ValueError
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
        raise TypeError("table must be the DataFrame of InstanceContributions.waterfall(k).")
    missing = {"term", "contribution"} - set(table.columns)
    if missing:
        raise ValueError(
            f"table lacks column(s) {sorted(missing)}; expected the output of "
            "InstanceContributions.waterfall(k, class_names)."
        )
    if len(table) == 0:
        raise ValueError("table has no rows.")
    if keep < 1 or max_classes < keep:
        raise ValueError("Need 1 <= keep <= max_classes.")
    df = table.reset_index(drop=True)
    terms = df["term"].astype(str)
    contrib = pd.to_numeric(df["contribution"], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(contrib).all():
        raise ValueError("table's contribution column has missing or non-finite values.")
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
    cls, nil = cls[contrib[cls] != 0], cls[contrib[cls] == 0]  # β = 0 or f̄ = 0: one bar

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
                f"evidence of {esc_html(terms[i])}<br>contribution β·f̄ = {_fmt(contrib[i])}"
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
    if nil.size:
        bars.append(
            (
                f"{nil.size} class{'es' if nil.size != 1 else ''} adding 0",
                0.0,
                f"{nil.size} classes whose contribution is exactly 0 (β = 0, or no evidence "
                f"of them in this row)<br>running total = {_fmt(running)}",
            )
        )
    logit = float(sum(v for _, v, _ in bars))
    proba = 1.0 / (1.0 + math.exp(-logit)) if logit > -700 else 0.0
    labels = _unique([b[0] for b in bars] + ["logit"])
    values = [b[1] for b in bars] + [logit]
    hovers = [b[2] for b in bars] + [f"logit = {_fmt(logit)}<br>π = sigmoid(logit) = {proba:.3f}"]
    trace = dict(
        type="waterfall",
        orientation="h",
        y=labels,
        x=values,
        measure=["relative"] * len(bars) + ["total"],
        text=_step_texts(values[:-1]) + [f"{logit:.3g}"],
        textposition="outside",
        cliponaxis=False,
        hovertext=hovers,
        hovertemplate="%{hovertext}<extra></extra>",
        **_WATERFALL_COLOURS,
    )
    shapes = [_vline(0, {"color": "black", "width": 1, "dash": "dash"})]
    main = title or (
        "Logit of class k = β<sub>0</sub><sup>k</sup> + Σ<sub>t</sub> "
        "β<sub>t</sub><sup>k</sup>·f̄<sub>t</sub>(x)"
    )
    sub = (
        f"logit = {logit:.3g} → π = {proba:.3f}; red raises, blue lowers; "
        "dashed line = logit 0 (π = 0.5)"
    )
    if cut is not None and 0 < cut < 1 and not math.isclose(cut, 0.5):
        at = math.log(cut) - math.log1p(-cut)
        shapes.append(_vline(at, {"color": PREDICTED_COLOR, "width": 2, "dash": "dot"}))
        sub = sub.replace(
            "dashed line = logit 0 (π = 0.5)",
            f"dashed: logit 0; green dotted: the model's cut, logit {at:.3g} (π = {cut:.3g}), "
            "where the decision switches",
        )
    if rest.size:
        sub += f"; {rest.size} smallest contributions merged"
    layout = _waterfall_layout(
        trace,
        labels,
        _titled(esc_html(main) if title else main, sub),
        "contribution to the logit",
        820,
        shapes,
    )
    return go.Figure(data=[trace], layout=layout)


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
        (largest ``|attribution|`` first), maybe "other N features", one bar
        "N features with credit 0" for the exact zeros, and the total: the row's
        output (its logit, or SML's evidence).

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
    order, nil = order[fa.attributions[order] != 0], order[fa.attributions[order] == 0]
    n = len(order)
    shown, rest = (order[:keep], order[keep:]) if n > keep + 1 else (order, order[:0])
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
                f"{esc_html(str(names[i]))}: {_fmt(fa.x[i])} here, {_fmt(fa.baseline[i])} in the "
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
    if nil.size:
        bars.append(
            (
                f"{nil.size} feature{'s' if nil.size != 1 else ''} with credit 0",
                0.0,
                f"{nil.size} features whose credit is exactly 0 (e.g. the same value here and "
                f"in the baseline)<br>running total = {_fmt(running)}",
            )
        )
    labels = _unique([b[0] for b in bars] + ["this row"])
    values = [b[1] for b in bars] + [fa.output]
    trace = dict(
        type="waterfall",
        orientation="h",
        y=labels,
        x=values,
        measure=["absolute"] + ["relative"] * (len(bars) - 1) + ["total"],
        # the two outputs as they are, the steps between them signed
        text=[f"{fa.output_baseline:.3g}"] + _step_texts(values[1:-1]) + [f"{fa.output:.3g}"],
        textposition="outside",
        cliponaxis=False,
        hovertext=[b[2] for b in bars] + [f"{what} of this row = {_fmt(fa.output)}"],
        hovertemplate="%{hovertext}<extra></extra>",
        **_WATERFALL_COLOURS,
    )
    shapes = []
    if what == "logit":
        shapes.append(_vline(0, {"color": "black", "width": 1, "dash": "dash"}))
    main = title or f"Features behind the {what}"
    sub = (
        f"{what}: {fa.output_baseline:.3g} for the baseline row → {fa.output:.3g} for this row; "
        "red raises, blue lowers"
    )
    if rest.size:
        sub += f"; {rest.size} smallest merged"
    if key := _shared_key(labels, 24):
        sub += "<br>" + key
    layout = _waterfall_layout(trace, labels, _titled(esc_html(main), sub), what, 620, shapes)
    return go.Figure(data=[trace], layout=layout)


# --------------------------------------------------------------------------- probabilities


def probability_bars(
    proba,
    class_names: Sequence[str] | None = None,
    *,
    threshold=0.5,
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
    threshold : float, array-like of shape (m,) or None, default 0.5
        Multi-label decision: class k is predicted relevant when pi_k >= its cut
        (green bars; one cut for all: a dashed line; one per class: a tick on each bar).
        ``None`` (multi-class): only the most probable class is green and no line is drawn.
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
        raise ValueError("proba is empty.")
    if (p < -1e-9).any() or (p > 1 + 1e-9).any():
        raise ValueError("Probabilities must lie in [0, 1].")
    m = p.size
    labels = _unique(_names(class_names, m))
    cuts = None
    if threshold is not None:
        cuts = np.broadcast_to(np.asarray(threshold, dtype=float), (m,))
        if not ((cuts >= 0) & (cuts <= 1 + 1e-9)).all():
            raise ValueError(f"threshold must be in [0, 1], got {threshold!r}.")
        predicted = p >= cuts
        threshold = float(cuts[0]) if np.all(cuts == cuts[0]) else None
    else:
        predicted = np.zeros(m, dtype=bool)
        predicted[int(np.argmax(p))] = True
    true = np.zeros(m, dtype=bool)
    if true_classes is not None:
        idx = np.asarray(list(true_classes), dtype=np.intp)
        if idx.size and (idx.min() < 0 or idx.max() >= m):
            raise ValueError(f"true_classes must be class indices in [0, {m - 1}].")
        true[idx] = True
    order = np.argsort(-p, kind="stable")[: max(1, int(max_bars))]
    y = [labels[i] for i in order]
    hover = [
        f"{labels[i]}<br>π = {p[i]:.3f}"
        + ("<br>predicted" if predicted[i] else "")
        + ("<br>true class" if true[i] else "")
        for i in order
    ]
    bar = dict(
        type="bar",
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
    shapes = []
    data = [bar]
    if threshold is not None:
        shapes.append(_vline(threshold, {"color": "black", "width": 1.5, "dash": "dash"}))
        sub = f"green = predicted relevant (π ≥ {threshold:.3g}, dashed line)"
    elif cuts is not None:  # a cut per class: a tick at each bar's own cut
        data.append(
            dict(
                type="scatter",
                x=cuts[order],
                y=y,
                mode="markers",
                marker={"symbol": "line-ns-open", "size": 16, "color": "black"},
                hovertext=[f"{labels[i]}: cut {cuts[i]:.3f}" for i in order],
                hovertemplate="%{hovertext}<extra></extra>",
                name="cut",
            )
        )
        sub = "green = predicted relevant (π at or past the class's own cut, the black tick)"
    else:
        sub = "green = predicted class (the most probable)"
    if true.any():
        sub += "; outlined ✓ = true class"
    if len(order) < m:
        sub += f"<br>showing the {len(order)} most probable of {m} classes"
    layout = dict(
        **_titled("Predicted probabilities π<sub>k</sub>(x) for this row", sub),
        xaxis={"range": [0, 1.08], "title": {"text": "predicted probability"}},
        yaxis={**_category_axis(y, True), "autorange": "reversed"},
        height=_height(len(order), base=150, per=24, lo=280, hi=860),
        showlegend=False,
        shapes=shapes,
    )
    return go.Figure(data=data, layout=layout)


# --------------------------------------------------------------------------- evidence space


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
        Decision lines to draw, by name (e.g. :func:`sblr.interpret.decision_line`).  The
        y axis spans the rows' range, grown to take in a line that passes within one such
        range of it; a line further away is named "(outside this view)".
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
    >>> lines = {"SBLR": ([0.1, 0.5], [0.15, 0.18]), "SML": ([0.1, 0.5], [5.0, 6.0])}
    >>> fig = evidence_scatter([[0.1, 0.2], [0.5, 0.1]], 0, 1, [False, True], ["a", "b"], k=0,
    ...                        lines=lines)
    >>> [t.name for t in fig.data[2:]]
    ['SBLR', 'SML (outside this view)']
    >>> near = {"SBLR": ([0.1, 0.5], [0.22, 0.25])}   # just above the rows: the view grows
    >>> fig = evidence_scatter([[0.1, 0.2], [0.5, 0.1]], 0, 1, [False, True], ["a", "b"], k=0,
    ...                        lines=near)
    >>> fig.data[2].name, bool(fig.layout.yaxis.range[1] >= 0.22)
    ('SBLR', True)
    """
    import plotly.graph_objects as go

    F = _float_array(F, "F", 2)
    member = np.asarray(member, dtype=bool)
    if member.shape != (F.shape[0],):
        raise ValueError(f"member must have one value per row ({F.shape[0]}).")
    names = _names(class_names, F.shape[1])
    ids = np.arange(F.shape[0]) if rows is None else np.asarray(rows)
    keep = np.arange(F.shape[0])
    if F.shape[0] > max_points:
        keep = np.sort(np.random.default_rng(random_state).choice(F.shape[0], max_points, False))
    traces = []
    for flag, colour, label in (
        (False, OTHER_COLOR, f"not {names[k]}"),
        (True, POSITIVE_COLOR, names[k]),
    ):
        sel = keep[member[keep] == flag]
        traces.append(
            dict(
                type="scattergl",
                x=F[sel, t1],
                y=F[sel, t2],
                mode="markers",
                marker={"size": 6, "color": colour, "opacity": 0.7 if flag else 0.45},
                name=esc_html(label),
                customdata=ids[sel],
                hovertemplate=f"row %{{customdata}}<br>f̄ of {esc_html(names[t1])}: %{{x:.3g}}"
                f"<br>f̄ of {esc_html(names[t2])}: %{{y:.3g}}<extra>{esc_html(label)}</extra>",
            )
        )
    dashes = ["solid", "dash", "dot"]
    y_lo, y_hi = F[:, t2].min(), F[:, t2].max()
    span = y_hi - y_lo or 1.0
    pad = 0.05 * span
    view_lo, view_hi = y_lo - pad, y_hi + pad
    for j, (name, line) in enumerate((lines or {}).items()):
        if line is None:
            continue
        f1, f2 = (np.asarray(v, dtype=float) for v in line)
        # the y axis spans the rows' range, grown to take in a line that passes within one
        # such range of it (at the defaults on birds the line sat just above every row and
        # read "outside this view"); a line further away stays out, and its legend entry
        # says so (the model does not switch class k near these rows in this plane)
        finite = f2[np.isfinite(f2)]
        shown = bool(finite.size) and finite.min() <= y_hi + pad and finite.max() >= y_lo - pad
        if finite.size and not shown:
            nearest = finite.min() if finite.min() > y_hi else finite.max()
            if abs(nearest - (y_hi if nearest > y_hi else y_lo)) <= span:
                shown = True
                view_lo = min(view_lo, nearest - pad)
                view_hi = max(view_hi, nearest + pad)
        traces.append(
            dict(
                type="scatter",
                x=f1,
                y=f2,
                mode="lines",
                line={"color": "black", "width": 2, "dash": dashes[j % len(dashes)]},
                name=esc_html(str(name)) + ("" if shown else " (outside this view)"),
                hoverinfo="skip",
            )
        )
    sub = "each point is a row (leave-one-out evidence); lines: where the model switches class k"
    if keep.size < F.shape[0]:
        sub += f"<br>{keep.size:,} of {F.shape[0]:,} rows drawn (a seeded sample)"
    layout = dict(
        **_titled(f"Rows in evidence space, coloured by {esc_html(names[k])}", sub),
        xaxis={"title": {"text": f"f̄ of {esc_html(_short(names[t1], 40))}"}},
        yaxis={
            "title": {"text": f"f̄ of {esc_html(_short(names[t2], 40))}"},
            "range": [view_lo, view_hi],
        },
        height=560,
        legend={"title": {"text": ""}},
    )
    return go.Figure(data=traces, layout=layout)


def _sign_mark(mean, mean_abs):
    """ "+" / "−" for a feature that raises / lowers a class on average, "±" when its mean
    credit is small beside its mean |credit| (it raises some rows and lowers others)."""
    if abs(mean) < 0.1 * mean_abs or mean == 0:
        return "±"
    return "+" if mean > 0 else "−"


def feature_importance_bars(table, *, title: str | None = None, keep: int = 20) -> go.Figure:
    """Horizontal bars of the features that matter most for a class over the rows.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`sblr.attribution.class_feature_importance` (most important first).
    title : str, optional
        Main title (shown as text).
    keep : int, default 20
        Bars drawn: the ``keep`` most important features (the subtitle says how many of
        all); names cut where they still differ, the hover has the full name.

    Returns
    -------
    plotly.graph_objects.Figure
        One bar trace of ``mean_abs`` in one neutral colour (how much a feature matters,
        whatever its direction), its sign as a marker at the bar's end: ``+`` where it raises
        the class on average (``mean`` > 0), ``−`` where it lowers it, ``±`` where it does both
        about as much.  (Coloured by sign, every bar of a class the rows mostly lack came out
        blue and read as "every feature lowers this class".)

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"feature": ["b", "a", "c"], "i": [1, 0, 2],
    ...                   "mean_abs": [0.5, 0.2, 0.0], "mean": [-0.4, 0.1, 0.0],
    ...                   "share": [0.714, 0.286, 0.0]})
    >>> fig = feature_importance_bars(t, keep=2)
    >>> list(fig.data[0].y), list(fig.data[0].text)
    (['b', 'a'], ['−', '+'])
    """
    import plotly.graph_objects as go

    if not {"feature", "mean_abs", "mean", "share"} <= set(table.columns):
        raise ValueError("table must come from sblr.attribution.class_feature_importance.")
    top = table.head(max(1, int(keep)))
    labels = _unique([str(f) for f in top["feature"]])
    bar = dict(
        type="bar",
        x=top["mean_abs"].to_numpy(dtype=float),
        y=labels,
        orientation="h",
        marker={"color": TOTAL_COLOR},
        text=[_sign_mark(m, a) for m, a in zip(top["mean"], top["mean_abs"], strict=True)],
        textposition="outside",
        cliponaxis=False,
        customdata=np.c_[top["mean"].to_numpy(dtype=float), top["share"].to_numpy(dtype=float)],
        hovertemplate="%{y}<br>mean |credit| %{x:.3g}<br>mean credit %{customdata[0]:+.3g}"
        "<br>%{customdata[1]:.0%} of all credit<extra></extra>",
    )
    n_rows = table.attrs.get("n_rows")
    sub = "mean |credit| over " + (f"{n_rows:,} rows" if n_rows else "the rows")
    sub += "; + raises the class on average, − lowers it, ± both about as much"
    if len(top) < len(table):
        sub += f"<br>the {len(top)} most important of {len(table):,} features"
    if key := _shared_key(labels, 28):
        sub += "<br>" + key
    layout = dict(
        **_titled(title or "Which features matter for this class overall", sub),
        xaxis={"title": {"text": "mean |credit| (integrated gradients)"}, "rangemode": "tozero"},
        yaxis={
            **_category_axis(labels, True),
            "autorange": "reversed",
            "ticktext": _tick_texts(labels, 28),
        },
        height=_height(len(labels), base=150, per=24, lo=280, hi=700),
        showlegend=False,
    )
    return go.Figure(data=[bar], layout=layout)
