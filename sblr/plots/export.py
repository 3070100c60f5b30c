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
    return (
        f'<div id="{safe_id}" style="width: 100%; height: {int(height)}px"></div>'
        f"<script>window.sblrPlotly.then(P => {{ if (!P) return; const f = {spec};"
        f"P.newPlot({json.dumps(element_id)}, f.data, f.layout, {{responsive: true}}); }});"
        "</script>"
    )
