"""One self-contained HTML file of an analysis: its context, tables and figures.

Every piece of text that can come from a user's file (data set, class and column names) is
HTML-escaped: tables through :meth:`pandas.DataFrame.to_html` (``escape=True``), headings and
notes through :func:`html.escape`; figures are plotly figures, their text already escaped by
:mod:`sblr.plots`.  plotly.js is inlined once, so the file opens offline.

Examples
--------
>>> import pandas as pd
>>> page = html_report(
...     "Analysis of <b>x</b>",
...     {"data": "x<y>"},
...     [("Metrics", pd.DataFrame({"metric": ["a<b>"], "value": [0.5]}))],
... )
>>> "&lt;b&gt;x&lt;/b&gt;" in page and "a&lt;b&gt;" in page and "<b>x</b>" not in page
True
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone

import pandas as pd

from sblr.exceptions import DataError

__all__ = ["html_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f5f5f5; }
td:first-child, th:first-child { text-align: left; }
p.note { color: #555; font-size: 13px; }
"""


def html_report(title: str, context: Mapping[str, object], sections: Sequence[tuple]) -> str:
    """A standalone HTML document.

    Parameters
    ----------
    title : str
    context : mapping of str to object
        What the analysis is of (data set, model, γ, λ, split...): a table at the top.
    sections : sequence of (heading, content) or (heading, content, note)
        ``content``: a pandas DataFrame (a table), a plotly Figure, or a str (a paragraph of
        plain text).

    Returns
    -------
    str
    """
    import plotly.graph_objects as go

    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        "<table>",
        *(
            f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
            for k, v in context.items()
        ),
        "</table>",
        f"<p class='note'>Written by sblr on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC.</p>",
    ]
    plotly_js = True
    for section in sections:
        if len(section) not in (2, 3):
            raise DataError("Each section is (heading, content) or (heading, content, note).")
        heading, content = section[0], section[1]
        parts.append(f"<h2>{html.escape(str(heading))}</h2>")
        if isinstance(content, pd.DataFrame):
            parts.append(content.to_html(escape=True, float_format=lambda v: f"{v:.4g}"))
        elif isinstance(content, go.Figure):
            parts.append(content.to_html(include_plotlyjs=plotly_js, full_html=False))
            plotly_js = False
        elif isinstance(content, str):
            parts.append(f"<p>{html.escape(content)}</p>")
        else:
            raise DataError(f"A section holds a DataFrame, a Figure or text; got {type(content)}.")
        if len(section) == 3:
            parts.append(f"<p class='note'>{html.escape(str(section[2]))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
