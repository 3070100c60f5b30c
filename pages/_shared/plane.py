"""The Playground's plane as a canvas component of its own (``st.components.v2``): the page
sends :func:`sblr.plots.playground.plane_payload` (the grid's values and the points, ~25 kB),
``plane.js`` draws it and sends a click back.

Why not the Plotly chart it was: a click went through Plotly's selection (a new chart key a
board, to drop the selection), and each new board was a new chart laid out and drawn by
Plotly.js, inside the fragment's run as the page sees it (issue #46 item 6;
``python -m benchmarks.playground --browser --against`` compares the two). The canvas is
drawn in a few milliseconds, and marks the click at once while the fragment refits.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

_CSS = """
.sblr-plane { position: relative; width: 100%; height: 100%; }
.sblr-plane-canvas { display: block; width: 100%; height: 100%; cursor: crosshair; }
.sblr-plane-tip {
  display: none; position: absolute; pointer-events: none; z-index: 2; max-width: 260px;
  padding: 2px 6px; border-radius: 4px; background: rgba(255, 255, 255, 0.92);
  border: 1px solid #c8c8c8; color: #222222; font-size: 12px; white-space: nowrap;
}
"""
# trusted code of this repository (never a user's text): the payload is drawn as numbers and
# with the canvas's fillText, never parsed as markup
_COMPONENT = st.components.v2.component(
    "sblr_plane",
    js=(Path(__file__).with_name("plane.js")).read_text(encoding="utf-8"),
    css=_CSS,
    isolate_styles=False,
)


def plane(payload: dict, *, key: str, on_click, place: int = 0, seq: int = 0):
    """Draw the plane; ``on_click`` runs (before the script) at a click, whose
    ``{"x", "y", "on_point"}`` is then ``st.session_state[key]["click"]``. ``place``: the
    class a click places (the click's mark is drawn in its colour); ``seq``: a number new
    at every click, so that a click that changes nothing still redraws (and clears its
    mark)."""
    return _COMPONENT(
        key=key,
        data={**payload, "place": int(place), "seq": int(seq)},
        height="stretch",
        on_click_change=on_click,
    )
