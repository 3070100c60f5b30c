"""A figure as a standalone HTML page (plotly.js inlined), for the dashboard's downloads."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING

from sblr.exceptions import DataError

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
