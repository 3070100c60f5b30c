"""The Playground's plane as a canvas component of its own (``st.components.v2``): the page
sends :func:`sblr.plots.playground.plane_payload` (the grid's values and the points, ~25 kB),
``plane.js`` draws it and sends a click back.

Why not the Plotly chart it was: a click went through Plotly's selection (a new chart key a
board, to drop the selection), and each new board was a new chart laid out and drawn by
Plotly.js, inside the fragment's run as the page sees it (issue #46 item 6;
``python -m benchmarks.playground --browser --against`` compares the two). The canvas is
drawn in a few milliseconds, and marks the click at once; it then draws the plane the click makes
as the dashboard's route answers (:mod:`pages._shared.routes`), before the page's run.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from pages._shared.routes import PLANE_PATH
from sblr import playground as pg

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


def plane(payload: dict, *, key: str, on_click, basis=None, seq: int = 0):
    """Draw the plane; ``on_click`` runs (before the script) at a click, whose
    ``{"x", "y", "on_point"}`` is then ``st.session_state[key]["click"]``. ``basis``:
    :func:`sblr.playground.preview_basis`, with which the canvas asks the dashboard's route
    (:mod:`pages._shared.routes`) for the plane a click makes and draws it before the page's
    run (None: it waits for the run), and whose class to place colours the click's mark;
    ``seq``: the clicks so far (:func:`sblr.playground.click_count`), new at every click, so
    that a click that changes nothing still redraws (and clears its mark)."""
    # the route's address relative to the page's (its base path, a proxy's prefix included)
    preview = None if basis is None else {**basis, "url": PLANE_PATH}
    place = 0 if basis is None else int(basis["place"])
    return _COMPONENT(
        key=key,
        data={**payload, "place": place, "seq": int(seq), "preview": preview},
        height="stretch",
        on_click_change=on_click,
    )


def _beta(view, chart_key):
    """β of the page's model, its zeros counted (the β tab and the lesson's)."""
    fig, caption = view.beta()
    if fig is not None:
        st.plotly_chart(fig, key=chart_key)  # sized by its own rule (a squeezed height cut it)
    st.caption(caption)


def panel(view, tabs, panels, state, *, on_step):
    """The Playground's tabs beside the plane: what ``view`` (:func:`sblr.playground.plane_view`)
    shows in the open one (``tabs``: the tabs, for which is open; ``panels``: a container in
    each, written now), only there (fewer elements at a click); ``on_step(n)``: the callback of
    the lesson's step n. Returns the evidence space's partner class shown, or None."""
    ready, board, t2_shown = view.model is not None, view.board, None
    with panels["Scores"]:
        if tabs["Scores"].open and ready:
            metrics, cut_note = view.scores()
            for col, metric in zip(st.columns(2), metrics, strict=True):
                col.metric(**metric, delta_color="off")
            st.caption((f"{cut_note}\n\n" if cut_note else "") + pg.held_out_note(board))
    with panels["β"]:
        if tabs["β"].open and ready:
            _beta(view, "pg_beta")
    with panels["Error vs λ"]:
        if tabs["Error vs λ"].open and ready:
            with st.spinner(f"Fitting SparseSBLR at {len(pg.LOG_LAMS)} values of λ…"):
                curve_note, fig_curve = view.error_curve()
            st.caption(curve_note or "")
            st.plotly_chart(fig_curve, key="pg_curve", config={"displayModeBar": False})
    with panels["Evidence"]:
        if tabs["Evidence"].open and ready and len(board):
            t1, t2, others, box = view.evidence_box(state)  # (the link's partner, once)
            t2_shown = st.selectbox(
                f"Evidence space: {pg.CLASS_NAMES[t1]}'s evidence against", others,
                index=others.index(t2), format_func=pg.class_label, key=box, help=pg.HELP["t2"],
            )  # fmt: skip
            st.plotly_chart(view.evidence_space(t1, t2_shown), key="pg_space")
    with panels["Lesson"]:
        if tabs["Lesson"].open:
            steps = enumerate(pg.LESSON_BUTTONS, 1)
            for col, (n, label) in zip(st.columns(3), steps, strict=True):
                col.button(label, key=f"pg_lesson_{n}", on_click=on_step(n))
            st.markdown(pg.LESSON_STEPS[state.get("_pg_lesson", 0)])
            if state.get("_pg_lesson") and ready:
                _beta(view, "pg_lesson_beta")  # the step's question is about β: beside it
    return t2_shown
