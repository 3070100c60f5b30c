"""Playground: draw points in the plane and watch the similarity models think.

The state, the link (the whole view lives in the address), the fit, the plane and every
text are :mod:`sblr.playground` (:func:`~sblr.playground.plane_view`); this script draws them.
"""

from pathlib import Path

import streamlit as st

from pages._shared.data import Upload, try_upload
from pages._shared.formatting import esc_md
from pages._shared.plane import panel, plane
from pages._shared.state import page_context, show_view
from sblr import playground as pg

ds, s, key = page_context(__file__)  # the data in use (untouched here)
S = st.session_state
if pg.K_BOARD not in S:
    S.update(pg.state_from_link(st.query_params))
board: pg.Board = S[pg.K_BOARD]
PLANE_WIDTH, PLANE_HEIGHT, PANEL_WIDTH = 500, 470, 400  # px at 1440×900 (1024: playground.css)


def _call(transition, *args):
    """A widget's callback: ``transition`` of :mod:`sblr.playground` on the session state."""
    return lambda: transition(S, *args)


def _said(note):  # a point placed held out: said at the click
    if note:
        st.toast(note, icon=":material/visibility_off:")


def _clicked():  # before the script runs: one run a click
    _said(pg.clicked(S))


def _typed():  # the keyboard's way: what a click there would do
    _said(pg.act(S, float(S["pg_type_x"]), float(S["pg_type_y"]), on_point=False))


# the header row holds the edit buttons too (at 1024×768 a row of its own cost the plane room)
head = st.container(horizontal=True, vertical_alignment="center", gap="medium")
head.subheader("Playground", anchor=False, width="content")
with head.popover("What am I looking at?", icon=":material/help:"):
    st.markdown(pg.WHAT_YOU_SEE)
    st.caption(
        pg.held_out_note(board) + f" The data in use elsewhere ({esc_md(ds.name)}) changes only "
        "if you send these points there (below the plane)."
    )
if note := S.pop(pg.K_NOTE, None):
    st.warning(esc_md(note), icon=":material/link_off:")
    if S.pop(pg.K_OFFER, False):  # the default board, one click away
        label = f"Open the default board ({pg.DEFAULT_PRESET})"
        st.button(label, key="pg_default", on_click=_call(pg.default_board))
if info := S.pop(pg.K_INFO, None):
    st.info(esc_md(info), icon=":material/info:")

pg.region_options(S, board)  # the boxes' values made the board's
# the tools in one row that wraps on a narrow screen (fixed column shares cut them to "L…")
tools = st.container(horizontal=True, vertical_alignment="bottom", gap="small")
classes = range(board.n_classes)
tools.radio(
    "Class to place", classes, format_func=lambda c: pg.CLASS_NAMES[c], horizontal=True,
    key="pg_class", help="The class a click places: " + ", ".join(map(pg.class_label, classes))
    + ". A click on a point gives it this class too, or takes it off.",
)  # fmt: skip
tools.radio("A click", tuple(pg.ACTIONS), format_func=pg.ACTIONS.get, horizontal=True,
            key="pg_action", help=pg.HELP["action"])  # fmt: skip
tools.selectbox(
    "Preset", pg.preset_options(S), format_func=lambda name: pg.PRESET_LABELS.get(name, name),
    label_visibility="collapsed", icon=":material/dashboard:", key="pg_preset", width=160,
    on_change=_call(pg.load_preset),
)  # fmt: skip
tools.button(":material/casino:", key="pg_reseed", on_click=_call(pg.new_points),
             help="New points of this preset (the box at the left loads a preset)")  # fmt: skip
icons = head.container(horizontal=True, gap="small", width="content")
icons.button(":material/undo:", key="pg_undo", on_click=_call(pg.undo),
             disabled=not S.get(pg.K_UNDO), help="Undo the last change")  # fmt: skip
icons.button(":material/delete:", key="pg_clear", on_click=_call(pg.clear), help="Clear the plane")
with icons.popover(":material/tune:", help="Classes, label noise, held-out share"):
    st.number_input("Classes", min_value=2, max_value=pg.MAX_CLASSES, key="pg_classes",
                    on_change=_call(pg.classes_changed))  # fmt: skip
    st.select_slider("Label noise", list(range(0, 45, 5)), key="pg_noise",
                     format_func=lambda v: f"{v}%", on_change=_call(pg.noise_changed),
                     help=pg.HELP["noise"])  # fmt: skip
    st.select_slider("Held out for testing", list(pg.SHARES), key="pg_test",
                     format_func=pg.SHARES.get, on_change=_call(pg.share_changed),
                     help=pg.HELP["test"])  # fmt: skip

st.html(Path(__file__).parent / "_shared" / "playground.css")
drawn = pg.page_drawn(S)  # what a full run drew: classes, undo, preset, actions (4 points)


last = S.setdefault("_pg_last", {})  # the view the plane drew last (the actions under it read it)


def _redraw_all() -> bool:  # a change the parts above show (or a note to show)
    return pg.page_drawn(S) != drawn or pg.K_NOTE in S


@st.fragment
def _plane_and_panel():
    """The plane's settings, its panel's tabs and the actions under it, and the room for the
    rest (:func:`_plane`): a setting, a tab or an action reruns this."""
    if _redraw_all():
        st.rerun(scope="app")
    board = S[pg.K_BOARD]
    # the plane and its panel side by side where both fit (1440 px); narrower (1024 px with the
    # sidebar open) a smaller plane, its settings beside it, the tabs under both (playground.css)
    row = st.container(horizontal=True, gap="medium", key="pg_row")
    left = row.container(width=PLANE_WIDTH, height=PLANE_HEIGHT, border=False, key="pg_left")
    right = row.container(width=PANEL_WIDTH, key="pg_right")
    with right.container(key="pg_knobs"):
        knobs = st.container(horizontal=True, gap="small")
        model_name = knobs.selectbox("Model", pg.MODELS, key="pg_model", help=pg.HELP["model"],
                                     width=160)  # fmt: skip
        regions = pg.region_options(S, board)  # a click may have made the board multi-label
        knobs.selectbox("Region of", regions, key="pg_show_k", width=160,
                        help=pg.HELP["region"])  # fmt: skip
        st.select_slider("Playground γ (log₁₀)", pg.LOG_GAMMAS, key="pg_gamma",
                         format_func=lambda v: f"{10**v:.3g}", help=pg.HELP["gamma"])  # fmt: skip
        st.select_slider("Playground λ (log₁₀)", pg.LOG_LAMS, key="pg_lam",
                         format_func=pg.lam_label, disabled=not pg.model_traits(model_name)[0],
                         help=pg.HELP["lam"])  # fmt: skip
        st.radio("Colour the plane by", tuple(pg.LAYERS.values()), horizontal=True,
                 key="pg_layer", help=pg.HELP["layer"])  # fmt: skip
    alert = right.container()  # a note on the model (none fitted, every β 0), above the tabs
    panels = dict(zip(pg.TABS, right.tabs(pg.TABS, key="pg_tab", on_change="rerun"), strict=True))
    below = st.container()  # the board's line
    _plane(left, alert, panels, below, pg.knob_values(S, regions))
    actions = st.container(horizontal=True, vertical_alignment="center")
    if actions.button("Use these points as the data", key="pg_use", disabled=len(board) < 4):
        view = last["view"]  # the points and the settings the plane shows
        target = view.names if view.board.multilabel else "class"
        error = try_upload(Upload(pg.board_csv(view.board), "playground.csv", target=target))
        if error:
            st.error(esc_md(error))
        else:  # the pages it opens show what the Playground showed: its model, γ and λ
            shown = {"model": view.model_name, "gamma": view.gamma, "lam": view.lam_if_taken}
            show_view("pages/coefficients.py", shown, source="the Playground")
    # the CSV written when asked (a click neither formats nor sends it), of the board drawn
    # last: the callable runs in a thread of its own, without the session state
    actions.download_button("Download as CSV", lambda: pg.board_csv(last["view"].board),
                            mime="text/csv", file_name="playground.csv",
                            key="pg_download")  # fmt: skip
    actions.caption("The address bar holds these points and this view: send it as a link.")


@st.fragment
def _plane(left, alert, tabs, below, knobs):
    """The plane and what it shows beside and under it: a click reruns only this; one that
    changes a setting (``knobs``: as drawn) or the parts above, the whole page."""
    board = S[pg.K_BOARD]
    if pg.knob_values(S, pg.region_options(S, board)) != knobs or _redraw_all():
        st.rerun(scope="app")
    view = last["view"] = pg.plane_view(board, *knobs[: len(pg.KNOBS)])  # the settings as drawn
    if view.model is not None:  # the scores before anything is drawn: the parts then arrive
        view.scores()  # together (one redraw, not three)
    with left:
        plane(view.plane, key=pg.PLANE_KEY, on_click=_clicked, basis=pg.preview_basis(S, knobs),
              seq=pg.click_count(S))  # fmt: skip
    # every container of the settings' written at every run, if only empty (as Streamlit asks)
    note, panels = alert.empty(), {name: tab.container() for name, tab in tabs.items()}
    if view.problem:
        note.info(esc_md(view.problem))
    elif view.flat:
        note.info(view.flat_note, icon=":material/block:")
    t2_shown = panel(view, tabs, panels, S, on_step=lambda n: _call(pg.lesson, n))
    below.caption(view.caption)  # under the plane
    pg.sync_link(st.query_params, pg.link_params(S, view, t2_shown))


_plane_and_panel()  # the keyboard's way under it, outside: a click does not redraw it
with st.expander("Place or remove a point by its coordinates (keyboard)"):
    typed = st.columns([2, 2, 2], vertical_alignment="bottom")
    typed[0].number_input("x₁", -1.0, 1.0, 0.0, 0.05, key="pg_type_x")
    typed[1].number_input("x₂", -1.0, 1.0, 0.0, 0.05, key="pg_type_y")
    typed[2].button("Do it", key="pg_type_go", on_click=_typed, help=pg.HELP["typed"])
