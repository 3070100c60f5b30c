"""The Playground's plane: a model's view of the plane under the points drawn on it, and the
Playground's small curve of error against λ.

A point of several classes is drawn as concentric discs, one per class in class order (the
first outside), so a point of A, B and C shows three colours, not two; a held-out point as
rings of the same colours, hollow. The legend has one line per combination of classes on
the board. Under the points lies a grid of invisible cells that takes the clicks (a click on
an empty spot of the plane selects the nearest cell).

The surface is a heatmap image (smoothed by the browser), not a filled contour: drawn alone
in Chromium (Plotly.js, 300 points, 60 × 60 grid, a loaded 2-core machine) the filled contour
took 212–251 ms p50 a redraw, the heatmap 143–169 ms (``python -m benchmarks.playground
--draw`` compares them; its figures swing with the machine's load). The points and cells stay
SVG: as WebGL (``scattergl``) the same plane took 820–845 ms, each new chart opening a WebGL
context (software GL here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sblr.plots._style import _float_array, class_colors

if TYPE_CHECKING:
    import plotly.graph_objects as go

#: Clickable cells per axis under the points (their centres are where a click places a point).
CELLS = 29
#: Size (px) of a one-class point; each further class adds a ring this much wider.
POINT_SIZE, RING_STEP = 10, 6


def point_rings(labels) -> list[tuple[tuple[int, ...], int, np.ndarray]]:
    """How the points are drawn: for each combination of classes on the board (in order of
    first appearance), for each of its classes (ring 0 outside), the points of that
    combination. Returns ``[(combination, ring, rows), ...]``, the class of the ring being
    ``combination[ring]``.

    >>> [(c, r, rows.tolist()) for c, r, rows in point_rings([[1, 0], [1, 1], [1, 0]])]
    [((0,), 0, [0, 2]), ((0, 1), 0, [1]), ((0, 1), 1, [1])]
    """
    labels = np.asarray(labels, dtype=bool)
    combos: dict[tuple[int, ...], list[int]] = {}
    for i, row in enumerate(labels):
        combos.setdefault(tuple(int(c) for c in np.flatnonzero(row)), []).append(i)
    return [
        (combo, ring, np.asarray(rows))
        for combo, rows in combos.items()
        for ring in range(len(combo))
    ]


def playground_plane(
    points,
    labels,
    held_out,
    class_names: Sequence[str],
    *,
    surface=None,
    k: int | None = None,
    what: str = "proba",
    cut: float | None = None,
    title: str = "",
    height: int = 470,
) -> go.Figure:
    """The plane: the model's surface, the cut as a dashed line, the points, the click cells.

    Parameters
    ----------
    points : array-like of shape (n, 2)
    labels : array-like of bool, shape (n, m)
    held_out : array-like of bool, shape (n,)
        Drawn hollow.
    class_names : sequence of str
        One per class (``m``); class c is drawn in ``class_colors(6)[c]``.
    surface : (xs, Z) or None
        :func:`sblr.playground.surface`: ``Z[i, j]`` at (xs[j], xs[i]). With ``k=None`` Z holds
        the most probable class (every class coloured where it wins), else class ``k``'s π
        (``what="proba"``) or evidence f̄ (``"evidence"``), white to the class's colour.
    cut : float, optional
        π of class ``k`` at which the model decides: drawn dashed where the surface crosses it.
    title : str
        Plain text (the figure escapes nothing: pass no user text).

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: the surface (a heatmap) and the cut (a contour) if given, ``cells``, then the
        points, one ``scatter`` per (combination, ring, training/held out).

    Examples
    --------
    >>> fig = playground_plane([[0, 0], [0.5, 0.5]], [[1, 1, 1], [0, 1, 0]], [False, True],
    ...                        ["A", "B", "C"])
    >>> [(t.name, t.marker.color) for t in fig.data if t.name != "cells"][:3]
    [('A + B + C', '#636EFA'), ('A + B + C', '#EF553B'), ('A + B + C', '#00CC96')]
    """
    import plotly.graph_objects as go

    P = _float_array(points, "points", 2).reshape(-1, 2)
    L = np.asarray(labels, dtype=bool)
    L = L.reshape(P.shape[0], len(class_names)) if L.size == 0 else L.reshape(P.shape[0], -1)
    held = np.asarray(held_out, dtype=bool).reshape(P.shape[0])
    m = len(class_names)
    colours = class_colors(6)  # the Playground's six, whatever the board's number of classes
    traces = []
    if surface is not None:
        xs, Z = surface
        Z = np.asarray(Z, dtype=float)
        if k is None:  # multi-class: every class coloured where it is the most probable
            scale = [[edge, colours[c]] for c in range(m) for edge in (c / m, (c + 1) / m)]
            traces.append(
                dict(
                    type="heatmap",
                    x=xs, y=xs, z=Z, zmin=-0.5, zmax=m - 0.5, colorscale=scale, opacity=0.35,
                    showscale=False, hoverinfo="skip", name="region",
                )
            )  # fmt: skip
        else:
            # π from 0 to 1; f̄ (centred: it may be negative everywhere) over its own range
            lo, top = (0.0, 1.0) if what == "proba" else (min(float(Z.min()), 0.0), float(Z.max()))
            traces.append(
                dict(
                    type="heatmap",
                    x=xs,
                    y=xs,
                    z=Z,
                    zmin=lo,
                    zmax=max(top, lo + 1e-12),
                    zsmooth="fast",  # the browser smooths the image; "best" is per pixel in JS
                    colorscale=[[0.0, "#ffffff"], [1.0, colours[k]]],
                    opacity=0.55,
                    colorbar={
                        "title": {"text": "π" if what == "proba" else "f̄"},
                        "len": 0.6,
                        "thickness": 12,
                        "yanchor": "top",
                        "y": 1.0,
                    },
                    hoverinfo="skip",
                    name="surface",
                )
            )
            if cut is not None and Z.min() < cut < Z.max():
                traces.append(
                    dict(
                        type="contour",
                        x=xs,
                        y=xs,
                        z=Z,
                        showscale=False,
                        hoverinfo="skip",
                        contours={"coloring": "none", "start": cut, "end": cut, "size": 1},
                        line={"color": "#222222", "width": 2, "dash": "dash"},
                        name=f"π = {cut:.2f}",
                        showlegend=False,
                    )
                )
    cells = np.linspace(-1.0, 1.0, CELLS)
    cx, cy = np.meshgrid(cells, cells)
    traces.append(
        dict(
            type="scatter",
            x=cx.ravel(),
            y=cy.ravel(),
            mode="markers",
            name="cells",
            # one marker drawn, not CELLS²: Plotly finds the cell under a click (hover, select)
            # from the data, not from the SVG, and 841 invisible SVG paths took two thirds of
            # drawing the plane (benchmarks.playground --draw: 202 -> 69 ms p50, loaded)
            marker={"size": 14, "color": "rgba(0,0,0,0.01)", "symbol": "square", "maxdisplayed": 1},
            hovertemplate="click: place here (x₁ %{x:.2f}, x₂ %{y:.2f})<extra></extra>",
            showlegend=False,
        )
    )
    for combo, ring, rows in point_rings(L):
        name = " + ".join(class_names[c] for c in combo)
        size = POINT_SIZE + RING_STEP * (len(combo) - 1 - ring)
        colour = colours[combo[ring]]
        for hollow in (False, True):
            sel = rows[held[rows] == hollow]
            if not sel.size:
                continue
            kind = "held out" if hollow else "training"
            marker = (
                {"size": size, "color": colour, "symbol": "circle-open", "line": {"width": 2.5}}
                if hollow
                else {"size": size, "color": colour, "line": {"color": "#ffffff", "width": 1}}
            )
            traces.append(
                dict(
                    type="scatter",
                    x=P[sel, 0],
                    y=P[sel, 1],
                    mode="markers",
                    name=name,
                    legendgroup=name,
                    # one legend line per combination: its outer ring, training points first
                    showlegend=ring == 0 and (not hollow or not (~held[rows]).any()),
                    marker=marker,
                    customdata=np.c_[sel, np.full(sel.size, kind)],
                    hovertemplate=f"{name} · %{{customdata[1]}} point "
                    "(x₁ %{x:.2f}, x₂ %{y:.2f})<extra></extra>",
                    # the outer ring alone answers a click on the point (the inner ones lie
                    # on it and would select the same point twice)
                    hoverinfo=None if ring == 0 else "skip",
                )
            )
    colour_bar = surface is not None and k is not None
    # traces and layout as plain dicts given to the constructor, validated once there:
    # update_layout on the built figure took 48 ms of a 62 ms plane (300 points), and each
    # trace built as its graph object and then copied into the figure 26 ms a multi-label
    # board (13 ms as dicts)
    layout = dict(
        title={"text": title, "font": {"size": 14}},
        xaxis={
            "range": [-1.05, 1.05],
            "constrain": "domain",
            "automargin": False,
        },
        yaxis={
            "range": [-1.05, 1.05],
            "scaleanchor": "x",
            "constrain": "domain",
            "constraintoward": "top",  # a narrow column: the square right under the title
            "automargin": False,
        },
        height=height,
        # fixed margins, room for the tick labels, the legend and the colour bar (no axis
        # titles: x₁ and x₂ are in the hover; the height they took is the plane's at 1024×768):
        # Plotly's automatic margins laid the plane out twice a redraw (a fifth of a λ step)
        margin={"l": 44, "r": 64 if colour_bar else 10, "t": 34, "b": 64, "autoexpand": False},
        legend={
            "orientation": "h",
            "x": 0.0,
            # at the figure's foot, under the tick labels whatever the plane's height (a
            # fraction of the plot's height met the labels on the 410 px plane at 1024 px)
            "yref": "container",
            "y": 0.0,
            "yanchor": "bottom",
            "font": {"size": 11},
            "itemclick": False,
            "itemdoubleclick": False,
        },
        plot_bgcolor="white",
        clickmode="event+select",
        dragmode=False,
        hovermode="closest",
        showlegend=bool(len(P)),
    )
    return go.Figure(data=traces, layout=layout)


def cut_lines(xs, Z, level: float) -> list[np.ndarray]:
    """Where the surface ``Z`` (``Z[i, j]`` at (xs[j], xs[i])) crosses ``level``: polylines
    through the crossings on the grid's edges (linear between two grid values; marching
    squares, a saddle split by the mean of its four corners), each an array of shape (p, 2).

    >>> [line.round(2).tolist() for line in cut_lines([0, 1], [[0, 0], [1, 1]], 0.25)]
    [[[1.0, 0.25], [0.0, 0.25]]]
    """
    xs = np.asarray(xs, dtype=float)
    Z = np.asarray(Z, dtype=float)
    above = Z > level

    def along(i, j, di, dj):  # the crossing on the edge (i, j) -> (i + di, j + dj)
        t = (level - Z[i, j]) / (Z[i + di, j + dj] - Z[i, j])
        return xs[j] + t * (xs[j + dj] - xs[j]), xs[i] + t * (xs[i + di] - xs[i])

    segments = []  # pairs of edges, an edge ("h" | "v", i, j) starting at grid node (i, j)
    corners = above[:-1, :-1], above[:-1, 1:], above[1:, 1:], above[1:, :-1]
    mixed = ~(corners[0] == corners[1]) | ~(corners[1] == corners[2]) | ~(corners[2] == corners[3])
    for i, j in zip(*np.nonzero(mixed), strict=True):
        a, b, c, d = (bool(corner[i, j]) for corner in corners)
        edges = {"bottom": ("h", i, j), "right": ("v", i, j + 1), "top": ("h", i + 1, j),
                 "left": ("v", i, j)}  # fmt: skip
        crossed = [name for name, (p, q) in
                   (("bottom", (a, b)), ("right", (b, c)), ("top", (d, c)), ("left", (a, d)))
                   if p != q]  # fmt: skip
        if len(crossed) == 2:
            pairs = [crossed]
        elif (Z[i : i + 2, j : j + 2].mean() > level) == a:  # a and c joined: b, d cut off
            pairs = [["bottom", "right"], ["top", "left"]]
        else:  # b and d joined: a and c cut off
            pairs = [["left", "bottom"], ["right", "top"]]
        segments += [(edges[p], edges[q]) for p, q in pairs]
    ends: dict[tuple, list[int]] = {}
    for n, (p, q) in enumerate(segments):
        ends.setdefault(p, []).append(n)
        ends.setdefault(q, []).append(n)
    used = [False] * len(segments)
    lines = []
    # open lines from their ends first (an end: an edge of one segment), then the loops
    for start in sorted(ends, key=lambda e: len(ends[e])):
        edge, line = start, [start]
        while True:
            nxt = next((n for n in ends[edge] if not used[n]), None)
            if nxt is None:
                break
            used[nxt] = True
            p, q = segments[nxt]
            edge = q if p == edge else p
            line.append(edge)
        if len(line) > 1:
            pts = [along(i, j, *((0, 1) if kind == "h" else (1, 0))) for kind, i, j in line]
            lines.append(np.asarray(pts, dtype=float))
    return lines


def plane_payload(
    points,
    labels,
    held_out,
    class_names: Sequence[str],
    *,
    surface=None,
    k: int | None = None,
    what: str = "proba",
    cut: float | None = None,
    title: str = "",
) -> dict:
    """The plane as a small JSON-ready dict for a drawing of its own in the browser (the
    dashboard's canvas component): what :func:`playground_plane` draws, as numbers, not as a
    figure. The parameters are :func:`playground_plane`'s.

    Returns
    -------
    dict
        ``title``; ``colours`` (the six classes'); ``surface``: None, or ``mode`` ("region":
        ``z`` the most probable class; "proba" / "evidence": ``z`` the value from ``lo`` (0)
        to ``top`` as 0 to 1, three decimals), ``n``, ``z`` row by row from x₂ = -1 (``n *
        n`` numbers), ``k``, ``lo``, ``top`` and ``bar`` (the colour bar's title); ``cut``:
        the dashed line as polylines ``[x, y, x, y, ...]``; ``combos``: each combination of
        classes on the board ``{"name", "classes"}`` in order of first appearance;
        ``points``: ``[x, y, combination, held out (0/1)]`` a point; ``cells`` (a click off
        the points places at the nearest of ``cells`` × ``cells`` centres), ``size`` and
        ``ring`` (px).

    Examples
    --------
    >>> out = plane_payload([[0, 0], [0.5, 0.5]], [[1, 1, 1], [0, 1, 0]], [False, True],
    ...                     ["A", "B", "C"])
    >>> out["combos"], out["points"]
    ([{'name': 'A + B + C', 'classes': [0, 1, 2]}, {'name': 'B', 'classes': [1]}], \
[[0.0, 0.0, 0, 0], [0.5, 0.5, 1, 1]])
    """
    P = _float_array(points, "points", 2).reshape(-1, 2)
    L = np.asarray(labels, dtype=bool)
    L = L.reshape(P.shape[0], len(class_names)) if L.size == 0 else L.reshape(P.shape[0], -1)
    held = np.asarray(held_out, dtype=bool).reshape(P.shape[0])
    combos: dict[tuple[int, ...], int] = {}
    rows = []
    for (x, y), row, hollow in zip(P.tolist(), L, held.tolist(), strict=True):
        combo = tuple(int(c) for c in np.flatnonzero(row))
        rows.append([x, y, combos.setdefault(combo, len(combos)), int(hollow)])
    out = {
        "title": title,
        "colours": class_colors(6),
        "surface": None,
        "cut": [],
        "combos": [
            {"name": " + ".join(class_names[c] for c in combo), "classes": list(combo)}
            for combo in combos
        ],
        "points": rows,
        "cells": CELLS,
        "size": POINT_SIZE,
        "ring": RING_STEP,
    }
    if surface is not None:
        xs, Z = surface
        Z = np.asarray(Z, dtype=float)
        if k is None:
            out["surface"] = {"mode": "region", "z": Z.astype(int).ravel().tolist()}
        else:
            # π from 0 to 1; f̄ (centred: it may be negative everywhere) over its own range
            lo, top = (0.0, 1.0) if what == "proba" else (min(float(Z.min()), 0.0), float(Z.max()))
            top = max(top, lo + 1e-12)
            z = np.clip((Z - lo) / (top - lo), 0.0, 1.0).round(3).ravel().tolist()
            out["surface"] = {"mode": what, "z": z, "k": int(k), "lo": lo, "top": top,
                              "bar": "π" if what == "proba" else "f̄"}  # fmt: skip
            if cut is not None and Z.min() < cut < Z.max():
                out["cut"] = [line.round(4).ravel().tolist() for line in cut_lines(xs, Z, cut)]
        out["surface"]["n"] = len(xs)
    return out


def error_curve(lams, train, test, *, lam=None, title="Error against λ") -> go.Figure:
    """Train and test error along λ (log axis), the λ in use marked.

    >>> fig = error_curve([1e-3, 1e-2], [0.1, 0.2], [0.3, None])
    >>> [t.name for t in fig.data]
    ['train', 'test']
    """
    import plotly.graph_objects as go

    lams = np.asarray(lams, dtype=float)
    test = [np.nan if v is None else v for v in test]
    fig = go.Figure(
        [
            go.Scatter(x=lams, y=train, mode="lines+markers", name="train",
                       line={"color": "#555555"}),
            go.Scatter(x=lams, y=test, mode="lines+markers", name="test",
                       line={"color": "#d62728", "dash": "dash"}),
        ]
    )  # fmt: skip
    if lam is not None:
        fig.add_vline(x=lam, line={"color": "#888888", "width": 1, "dash": "dot"})
    fig.update_layout(
        title={"text": title, "font": {"size": 13}},
        xaxis={"type": "log", "title": {"text": "λ"}, "exponentformat": "power"},
        yaxis={"title": {"text": "error"}, "tickformat": ".0%", "rangemode": "tozero"},
        height=220,
        margin={"l": 50, "r": 10, "t": 30, "b": 40},
        legend={"orientation": "h", "x": 1.0, "xanchor": "right", "y": 1.15},
        hovermode="x unified",
    )
    return fig
