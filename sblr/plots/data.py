"""Figures of the data, before any model: class frequencies and a 2-D PCA of the rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from sblr.plots._style import (
    _MAX_COLOURED,
    COUNT_COLOR,
    MAX_HEIGHT,
    MAX_NAMED_BARS,
    OTHER_COLOR,
    _category_axis,
    _dense,
    _float_array,
    _height,
    _legend,
    _legend_px,
    _names,
    _tick_note,
    _titled,
    _unique,
    class_colors,
    esc_html,
)

# plotly is imported where a figure is drawn (see the package's __init__)
if TYPE_CHECKING:
    import plotly.graph_objects as go


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
        Up to :data:`MAX_NAMED_BARS` classes: horizontal bars, largest at the
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
        raise ValueError("counts is empty.")
    if (counts < 0).any():
        raise ValueError("counts must be >= 0.")
    m = counts.size
    labels = _unique(_names(class_names, m))
    denom = float(counts.sum()) if total is None else float(total)
    if total is not None and (not np.isfinite(denom) or denom <= 0):
        raise ValueError(f"total must be a positive number of rows, got {total!r}.")
    denom = denom if denom > 0 else 1.0
    order = np.argsort(-counts, kind="stable")
    y_vals, x_names = counts[order], [labels[i] for i in order]
    custom = np.stack([y_vals, y_vals / denom], axis=-1)
    share_of = "rows" if total is not None else "all class assignments"
    hover = (
        "%{hovertext}<br>rows = %{customdata[0]:,.0f}<br>"
        f"share of {share_of} = %{{customdata[1]:.1%}}<extra></extra>"
    )
    horizontal = m <= MAX_NAMED_BARS
    if horizontal:
        bar = dict(
            type="bar",
            x=y_vals,
            y=x_names,
            orientation="h",
            customdata=custom,
            hovertext=x_names,
            hovertemplate=hover,
            marker={"color": COUNT_COLOR},
            text=[f"{v:,.0f}" for v in y_vals],
            textposition="outside",
            cliponaxis=False,
        )
        layout = {
            "xaxis": {"title": {"text": "rows"}, "rangemode": "tozero"},
            "yaxis": {**_category_axis(x_names, True), "autorange": "reversed"},
            # 24 px a bar, less from 31 classes so that 50 fit in MAX_HEIGHT (15 px at 50: still
            # room for the 9 px names)
            "height": _height(
                m, base=140, per=min(24, (MAX_HEIGHT - 140) // m), lo=280, hi=MAX_HEIGHT
            ),
        }
        sub = None
    else:
        bar = dict(
            type="bar",
            x=x_names,
            y=y_vals,
            customdata=custom,
            hovertext=x_names,
            hovertemplate=hover,
            marker={"color": COUNT_COLOR},
        )
        layout = {
            "xaxis": _category_axis(x_names, False, title="classes, most frequent first"),
            "yaxis": {"title": {"text": "rows"}, "rangemode": "tozero"},
            "height": 460,
        }
        sub = _tick_note(m)
    layout.update(
        **_titled("Class frequencies: number of rows in which each class is relevant", sub),
        bargap=0.15,
    )
    return go.Figure(data=[bar], layout=layout)


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
    # lazy: scikit-learn, about 1 s, for this figure only
    from sklearn.decomposition import PCA, TruncatedSVD
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler

    sparse = sp.issparse(X)
    X = sp.csr_matrix(X, dtype=np.float64) if sparse else _float_array(X, "X", 2)
    n, d = X.shape
    if n < 2 or d < 1:
        raise ValueError(f"PCA needs at least 2 rows and 1 column; X has shape {X.shape}.")
    n_comp = min(2, n, d)
    if sparse and d > 2:
        method = "Truncated SVD of the max-abs scaled sparse features"
        pca = TruncatedSVD(n_components=n_comp, random_state=random_state)
        Z = pca.fit_transform(MaxAbsScaler().fit_transform(X))
    else:
        method = "PCA of the standardized features"
        pca = PCA(n_components=n_comp, random_state=random_state)
        # scaled by max |x| first (standardizing does not depend on it): the squares of
        # values near the float limit (1e308) would overflow the variance
        dense = X.toarray() if sparse else X
        top = np.abs(dense).max(axis=0)
        Z = pca.fit_transform(StandardScaler().fit_transform(dense / np.where(top > 0, top, 1.0)))
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
            raise ValueError("X contains NaN or infinite values.")
    else:
        X = _float_array(X, "X", 2)
    n, d = X.shape
    if n < 2 or d < 1:
        raise ValueError(f"PCA needs at least 2 rows and 1 column; X has shape {X.shape}.")
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 1:
        raise ValueError(f"max_points must be a positive integer, got {max_points!r}.")
    if color_by not in ("label", "set_size"):
        raise ValueError(f"color_by must be 'label' or 'set_size', got {color_by!r}.")
    lab = _dense(labels)
    if lab.shape[0] != n:
        raise ValueError(f"labels has {lab.shape[0]} rows but X has {n}.")

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
            raise ValueError(f"Label {bad!r} is not one of the class names {names[:10]!r}….")
        m = len(names)
        freq = np.bincount(codes, minlength=m)
        row_text = [f"class: {esc_html(names[c])}" for c in codes]
        what = "class"
    elif lab.ndim == 2:
        multilabel = True
        Y = _float_array(lab, "labels", 2)
        if not np.isin(Y, (0, 1)).all():
            raise ValueError("A 2-D labels array must be a 0/1 indicator matrix.")
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
            present = [esc_html(names[t]) for t in np.flatnonzero(row)]
            shown = ", ".join(present[:5]) + (
                f", … (+{len(present) - 5})" if len(present) > 5 else ""
            )
            row_text.append(f"{len(present)} labels: {shown or '(none)'}")
        what = "the row's most frequent label"
    else:
        raise ValueError(f"labels must be 1-D or a 2-D indicator matrix, got shape {lab.shape}.")

    if coordinates is None:
        coordinates = pca_coordinates(X, random_state=random_state)
    Z, var, method = coordinates
    Z = _float_array(Z, "coordinates", 2)
    if Z.shape != (n, 2):
        raise ValueError(f"coordinates must have shape ({n}, 2); got {Z.shape}.")
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
    traces = []

    def add(mask, name, color, show=True):
        idx = rows[mask[rows]]
        if idx.size == 0:
            return
        traces.append(
            dict(
                type="scattergl",
                x=Z[idx, 0],
                y=Z[idx, 1],
                mode="markers",
                name=esc_html(name),
                marker={"size": size, "color": color, "opacity": 0.75},
                hovertext=[f"row {i}<br>{row_text[i]}" for i in idx],
                hovertemplate="%{hovertext}<extra>" + esc_html(name) + "</extra>",
                showlegend=show,
            )
        )

    if multilabel and color_by == "set_size":
        idx = rows
        traces.append(
            dict(
                type="scattergl",
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

    entries = [t["name"] for t in traces if t.get("showlegend", True)]
    legend = _legend("class" if not multilabel else "label", entries)
    layout = dict(
        **_titled(f"{method} — {sample_note}", esc_html(colour_note)),
        xaxis={"title": {"text": f"PC1 ({var[0]:.1%} of variance)"}, "zeroline": False},
        yaxis={
            "title": {
                "text": f"PC2 ({var[1]:.1%} of variance)" if n_comp == 2 else "(only 1 component)"
            },
            "zeroline": False,
        },
        legend={**legend, "itemsizing": "constant"},
        height=560 + _legend_px(legend, len(entries)),
        dragmode="zoom",
    )
    return go.Figure(data=traces, layout=layout)
