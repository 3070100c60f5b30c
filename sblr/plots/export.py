"""Figures as standalone HTML (plotly.js inlined, compressed), for downloads and reports.

plotly.js is 4.8 MB; inlined as is, a report of two figures was 4.9 MB and took 7-10 s to
open.  Here it is inlined gzip-compressed (1.5 MB, 2.0 MB as base64) and unpacked by the
browser's own ``DecompressionStream`` (every current browser; one older than 2023 gets a
sentence saying so instead of empty boxes): the file still opens offline, from disk, with
nothing fetched.  Each figure is drawn once plotly.js is unpacked.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

# plotly is imported where a figure is drawn (see the package's __init__)
if TYPE_CHECKING:
    import plotly.graph_objects as go


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
    >>> from sblr.plots import probability_bars
    >>> page = figure_html(probability_bars([0.3, 0.7]), {"data": "a<b>", "model": "SML"})
    >>> "<html" in page.lower() and "sblrPlotly" in page and "data: a&lt;b&gt;" in page
    True
    """
    import plotly.graph_objects as go

    if not isinstance(fig, go.Figure):
        raise TypeError(f"figure_html needs a plotly Figure, got {type(fig).__name__}.")
    items = [(html.escape(str(k)), html.escape(str(v))) for k, v in (context or {}).items()]
    meta = "".join(f'<meta name="sblr:{k}" content="{v}">' for k, v in items)
    line = " · ".join(f"{k}: {v}" for k, v in items)
    head = f'<p style="font-family: sans-serif; font-size: 13px">{line}</p>' if line else ""
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'>{meta}</head><body>{head}"
        f"{plotly_script()}{figure_div(fig, 'sblr-figure')}</body></html>"
    )


@functools.cache
def plotly_script() -> str:
    """A ``<script>`` that unpacks the inlined, gzip-compressed plotly.js once per page and
    sets ``window.sblrPlotly``, a promise of the ``Plotly`` object (:func:`figure_div`)."""
    from plotly.offline import get_plotlyjs

    packed = base64.b64encode(gzip.compress(get_plotlyjs().encode(), 9, mtime=0)).decode()
    return (
        "<script>window.sblrPlotly = (async () => {"
        "if (!('DecompressionStream' in window)) {"
        "document.body.insertAdjacentHTML('afterbegin', '<p><b>The figures need a browser "
        "from 2023 or later (Chrome 80, Firefox 113, Safari 16.4).</b></p>'); return null;}"
        f"const bytes = Uint8Array.from(atob('{packed}'), c => c.charCodeAt(0));"
        "const text = await new Response(new Blob([bytes]).stream()"
        ".pipeThrough(new DecompressionStream('gzip'))).text();"
        "const code = document.createElement('script'); code.text = text;"
        "document.head.appendChild(code); return window.Plotly;})();</script>"
    )


def figure_div(fig, element_id: str) -> str:
    """A ``<div>`` and the ``<script>`` that draws ``fig`` in it once plotly.js is unpacked
    (after :func:`plotly_script` on the page). The figure's JSON cannot close the script:
    every ``</`` is written ``<\\/``."""
    import plotly.io as pio

    spec = pio.to_json(fig, validate=False).replace("</", "<\\/")
    height = fig.layout.height or 450
    safe_id = html.escape(element_id, quote=True)
    # a static picture of the heatmaps until plotly.js (2 MB, unpacked in the browser) has
    # drawn the interactive figure over it: the report's first figure took 14.6 s to appear
    return (
        f'<div id="{safe_id}" style="width: 100%; min-height: {int(height)}px">'
        f"{static_preview(fig)}</div>"
        f"<script>window.sblrPlotly.then(P => {{ if (!P) return; const f = {spec};"
        f"const el = document.getElementById({json.dumps(element_id)});"
        "el.innerHTML = ''; el.style.height = el.style.minHeight;"
        f"P.newPlot(el, f.data, f.layout, {{responsive: true}}); }});"
        "</script>"
    )


def _rgb(colour: str):
    """(r, g, b) of a colour as plotly's scales write it: "#rrggbb" or "rgb(r, g, b)"."""
    text = str(colour).strip()
    if text.startswith("#") and len(text) == 7:
        return tuple(int(text[i : i + 2], 16) for i in (1, 3, 5))
    inside = text[text.index("(") + 1 : text.rindex(")")]
    return tuple(float(v) for v in inside.split(",")[:3])


def _trace_colours(fig, trace, z):
    """The fill colour of every cell of a heatmap trace, as plotly picks it (its own colour
    scale and range, or its colour axis's; linear between the scale's stops); NaN cells
    (gaps) white."""
    from plotly.colors import get_colorscale

    axis = getattr(fig.layout, trace.coloraxis) if trace.coloraxis else None
    scale = (axis.colorscale if axis is not None else None) or trace.colorscale or "Viridis"
    if isinstance(scale, str):
        scale = get_colorscale(scale)
    stops = np.array([float(position) for position, _ in scale])
    channels = np.array([_rgb(colour) for _, colour in scale], dtype=float)
    lo = axis.cmin if axis is not None else trace.zmin
    hi = axis.cmax if axis is not None else trace.zmax
    finite = z[np.isfinite(z)]
    lo = float(finite.min()) if lo is None and finite.size else float(lo or 0.0)
    hi = float(finite.max()) if hi is None and finite.size else float(hi or 1.0)
    t = np.clip((np.nan_to_num(z, nan=lo) - lo) / (hi - lo if hi > lo else 1.0), 0.0, 1.0)
    rgb = np.stack([np.interp(t, stops, channels[:, c]) for c in range(3)], axis=-1)
    out = np.empty(z.shape, dtype=object)
    for index in np.ndindex(z.shape):
        r, g, b = (int(round(v)) for v in rgb[index])
        out[index] = f"rgb({r},{g},{b})" if np.isfinite(z[index]) else "rgb(255,255,255)"
    return out


def static_preview(fig) -> str:
    """An inline SVG of a figure's heatmaps (each panel a grid of coloured cells, its title
    above), or "" for a figure without one: what a reader sees before plotly.js has loaded.

    >>> import plotly.graph_objects as go
    >>> svg = static_preview(go.Figure(go.Heatmap(z=[[0.0, 1.0]], zmin=0, zmax=1)))
    >>> svg.count("<rect"), "rgb(" in svg
    (2, True)
    >>> static_preview(go.Figure(go.Bar(y=[1, 2])))
    ''
    """
    panels = []
    for trace in fig.data:
        if trace.type != "heatmap" or trace.z is None:
            continue
        z = np.asarray(trace.z, dtype=float)
        if z.ndim != 2 or z.size == 0 or z.size > 40_000:
            continue
        panels.append((trace, z, _trace_colours(fig, trace, z)))
    if not panels:
        return ""
    cell, gap, top = 14, 24, 18
    width = sum(z.shape[1] * cell for _, z, _ in panels) + gap * (len(panels) - 1)
    height = top + max(z.shape[0] * cell for _, z, _ in panels)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'style="max-width: {min(width * 2, 900)}px; width: 100%" role="img" '
        'aria-label="static preview of the figure">'
    ]
    x0 = 0
    for trace, z, colours in panels:
        name = html.escape(html.unescape(str(trace.name or "")))
        parts.append(f'<text x="{x0}" y="12" font-size="11" font-family="sans-serif">{name}</text>')
        for i in range(z.shape[0]):
            for j in range(z.shape[1]):
                parts.append(
                    f'<rect x="{x0 + j * cell}" y="{top + i * cell}" width="{cell - 1}" '
                    f'height="{cell - 1}" fill="{colours[i, j]}"/>'
                )
        x0 += z.shape[1] * cell + gap
    parts.append(
        "</svg><p style='font: 12px sans-serif; color: #555'>A still picture: the interactive "
        "figure (names, values, zoom) replaces it in a moment.</p>"
    )
    return "".join(parts)
