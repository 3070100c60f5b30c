"""Playground: draw points in the plane and watch the similarity models think.

The page keeps its own data (a :class:`sblr.playground.Board`) and its own model settings;
the data in use elsewhere changes only when asked ("Use these points as the data", which
takes the page's model, γ and λ along). The whole view lives in the address (``pts`` the
points, ``pm`` ``pgamma`` ``plam`` the model, ``pk`` the class shown, ``pl`` the colouring,
``pc`` the class to place, ``pt2`` the evidence-space partner, ``ptest`` the held-out share,
``ptab`` the panel open beside the plane),
so a link shows everyone the same picture; a link without the newer ones opens with their
defaults. A click on the plane places a point of the chosen class (or, on a point, adds that
class to it or removes it). Figures come from :mod:`sblr.plots.playground`; only the panel
open beside the plane is computed and drawn (tabs that run lazily).
"""

import numpy as np
import streamlit as st

from pages._shared.data import Upload, try_upload
from pages._shared.formatting import esc_md
from pages._shared.questions import Spec
from pages._shared.state import page_context, show_view
from sblr import playground as pg
from sblr import plots
from sblr.exceptions import DataError

ds, s, key = page_context(__file__)  # the data in use (untouched here)

K_BOARD, K_UNDO, K_CLICKS, K_NOTE = "_pg_board", "_pg_undo", "_pg_clicks", "_pg_note"
K_CLEAN = "_pg_clean"  # the board before the noise slider's flips
K_INFO = "_pg_info"  # a note on the board the link opened (no fault of the link)
K_OFFER = "_pg_offer"  # the link could not be read: offer the default board
K_SEED = "_pg_seed"  # the seed of the preset's last new points
COLOUR_NAMES = ("blue", "red", "green", "purple", "orange", "cyan")
MODELS = ("SparseSBLR", "SBLR", "SML")
LOG_GAMMAS = [round(v, 2) for v in np.arange(-1.0, 2.01, 0.25)]
LOG_LAMS = [round(v, 2) for v in np.arange(-5.0, 0.01, 0.5)]
LAYERS = {"pi": "πₖ", "evidence": "evidence f̄ₖ"}  # link value -> the radio's option
SHARES = {0: "none", 5: "20%", 4: "25%", 3: "33%", 2: "50%"}  # every n-th held out
TABS = ("Scores", "β", "Error vs λ", "Evidence", "Lesson")
GRID = 60  # the region's resolution
UNDO_STEPS = 50
DEFAULT_PRESET = "two blobs"
PRESET_LABELS = {"C where A and B overlap": "C in A ∩ B"}  # short enough for its box
# px: the plane at 1024×768 with the sidebar open takes the whole width (564 px) and, under
# the header and the tools, the rest of the first screen; the panel beside it at 1440×900
PLANE_WIDTH, PLANE_HEIGHT, PANEL_WIDTH = 500, 470, 400


def _number(text, choices, default):
    try:
        value = round(float(text), 2)
    except (TypeError, ValueError):
        return default
    return value if value in choices else default


def _from_link():
    """The session's first run: the board and every setting from the address."""
    q = st.query_params
    board, note, offer = pg.board_from_link(q.get("pts"), DEFAULT_PRESET)
    every = _number(q.get("ptest"), list(SHARES), pg.HOLDOUT_EVERY)
    st.session_state[K_BOARD] = board.with_holdout(int(every))
    st.session_state[K_NOTE if offer else K_INFO] = note
    st.session_state[K_OFFER] = offer
    st.session_state["pg_test"] = int(every)
    st.session_state["pg_model"] = q.get("pm") if q.get("pm") in MODELS else MODELS[0]
    st.session_state["pg_gamma"] = _number(q.get("pgamma"), LOG_GAMMAS, 0.0)
    st.session_state["pg_lam"] = _number(q.get("plam"), LOG_LAMS, -3.0)
    st.session_state["pg_layer"] = LAYERS.get(q.get("pl"), LAYERS["pi"])
    names = pg.CLASS_NAMES[: st.session_state[K_BOARD].n_classes]
    st.session_state["pg_class"] = names.index(q["pc"]) if q.get("pc") in names else 0
    st.session_state["_pg_k"] = q.get("pk")
    st.session_state["_pg_t2"] = q.get("pt2")
    if q.get("ptab") in TABS:
        st.session_state["pg_tab"] = q["ptab"]


if K_BOARD not in st.session_state:
    _from_link()
board: pg.Board = st.session_state[K_BOARD]


def _set_board(new, *, noisy=False):
    """Make ``new`` the board (undo keeps the old); a change other than the noise slider's
    makes the new board the clean one (the slider back to 0 %)."""
    if not noisy:
        st.session_state.pop(K_CLEAN, None)
        st.session_state["pg_noise"] = 0
    old = st.session_state[K_BOARD]
    undo = st.session_state.setdefault(K_UNDO, [])
    undo.append(pg.encode_board(old))
    del undo[:-UNDO_STEPS]
    new = new.with_holdout(old.every)
    st.session_state[K_BOARD] = new
    st.session_state["pg_classes"] = new.n_classes  # the "Classes" box follows a preset
    if new.multilabel and st.session_state.get("pg_show_k", "all classes") == "all classes":
        # a multi-label board has no one most probable class: the box names the class whose
        # π the plane shows, the class just placed
        placed = int(st.session_state.get("pg_class", 0))
        st.session_state["pg_show_k"] = pg.CLASS_NAMES[min(placed, new.n_classes - 1)]
    # a new chart key: a fresh plane, without the selection the click left
    st.session_state[K_CLICKS] = st.session_state.get(K_CLICKS, 0) + 1


def _undo():
    undo = st.session_state.get(K_UNDO)
    if undo:
        st.session_state.pop(K_CLEAN, None)
        st.session_state["pg_noise"] = 0
        every = st.session_state[K_BOARD].every
        st.session_state[K_BOARD] = pg.decode_board(undo.pop()).with_holdout(every)
        st.session_state["pg_classes"] = st.session_state[K_BOARD].n_classes
        st.session_state[K_CLICKS] = st.session_state.get(K_CLICKS, 0) + 1


def _noise_changed():
    """The noise slider: the clean board with that share of its labels made wrong."""
    clean = st.session_state.get(K_CLEAN) or st.session_state[K_BOARD]
    share = st.session_state["pg_noise"] / 100
    _set_board(pg.with_label_noise(clean, share, seed=0) if share else clean, noisy=True)
    st.session_state[K_CLEAN] = clean


def _load_preset():
    st.session_state[K_SEED] = 0  # the preset as everyone sees it first
    board = pg.preset(st.session_state["pg_preset"])
    # the class a preset is about: every class's region, or on a multi-label board its last
    st.session_state["pg_show_k"] = (
        pg.CLASS_NAMES[board.n_classes - 1] if board.multilabel else "all classes"
    )
    _set_board(board)


def _new_points():
    """The chosen preset again, drawn with the next seed."""
    st.session_state[K_SEED] = st.session_state.get(K_SEED, 0) + 1
    _set_board(pg.preset(st.session_state["pg_preset"], seed=st.session_state[K_SEED]))


def _default():
    _set_board(pg.preset(DEFAULT_PRESET))


def _clear():
    _set_board(pg.Board.empty(st.session_state[K_BOARD].n_classes))


def _classes_changed():
    _set_board(st.session_state[K_BOARD].with_classes(int(st.session_state["pg_classes"])))


def _share_changed():
    st.session_state[K_BOARD] = st.session_state[K_BOARD].with_holdout(st.session_state["pg_test"])
    st.session_state[K_CLICKS] = st.session_state.get(K_CLICKS, 0) + 1


def _class_label(c):
    return f"{pg.CLASS_NAMES[c]} ({COLOUR_NAMES[c]})"


def _act(x, y, *, on_point):
    """What a click at (x, y) does, by the chosen action and class."""
    board = st.session_state[K_BOARD]  # a callback: the board of the session, not of a run
    c = int(st.session_state.get("pg_class", 0))
    action = st.session_state.get("pg_action", "adds a point")
    try:
        if action == "removes a point":
            i = board.nearest(x, y, radius=0.06)
            if i is not None:
                _set_board(board.remove(i))
        elif action == "adds 20 around":
            _set_board(board.add_cluster(x, y, c, seed=len(board)))
        elif len(board) < pg.MAX_POINTS or on_point:
            new = board.add(x, y, c)
            _set_board(new)
            if len(new) > len(board) and new.held_out[-1]:  # said at the click
                st.toast(pg.held_out_note(new), icon=":material/visibility_off:")
    except DataError as exc:
        st.session_state[K_NOTE] = str(exc)


def _plane_key():
    return f"pg_plane_{st.session_state.get(K_CLICKS, 0)}"


def _clicked():
    """The plane's selection callback: a click acts before the script runs (one run a click);
    the acting board change gives the plane a new key, so the next plane has no selection."""
    event = st.session_state.get(_plane_key()) or {}
    points = event.get("selection", {}).get("points", [])
    if points:
        point = points[0]
        on_point = point.get("curve_number") is not None and point.get("customdata")
        _act(float(point["x"]), float(point["y"]), on_point=bool(on_point))


def _typed():
    _act(float(st.session_state["pg_type_x"]), float(st.session_state["pg_type_y"]), on_point=False)


# ----------------------------------------------------------------------------- a short lesson
OVERLAP = "C where A and B overlap"


def _lesson(step):
    """Set the board and the page's settings for a step of the short lesson."""
    st.session_state["_pg_lesson"] = step
    st.session_state["pg_preset"] = OVERLAP
    if step in (1, 3):
        board = pg.preset(OVERLAP)
        _set_board(pg.with_label_noise(board, 0.15, seed=0) if step == 3 else board)
    st.session_state["pg_model"] = "SparseSBLR"
    st.session_state["pg_gamma"] = 0.0
    # on log rates C's weights on A and B fade between 1e-2 and 3e-2: at 10^-1.5 only C's
    # own survives (sblr.playground.fit_board on the preset)
    st.session_state["pg_lam"] = -1.5 if step == 2 else -3.0
    st.session_state["pg_show_k"] = "C"
    st.session_state["pg_layer"] = LAYERS["pi"]


# ----------------------------------------------------------------------------- header, tools
# the header row holds the edit buttons too: at 1024×768 a row of its own would push the
# plane's lower edge under the screen's
head = st.container(horizontal=True, vertical_alignment="center", gap="medium")
head.subheader("Playground", anchor=False, width="content")
with head.popover("What am I looking at?", icon=":material/help:"):
    st.markdown(pg.WHAT_YOU_SEE)
    st.caption(
        pg.held_out_note(board) + f" The data in use elsewhere ({esc_md(ds.name)}) changes only "
        "if you send these points there (below the plane)."
    )
note = st.session_state.pop(K_NOTE, None)
if note:
    st.warning(esc_md(note), icon=":material/link_off:")
    if st.session_state.pop(K_OFFER, False):  # the default board, one click away
        st.button(f"Open the default board ({DEFAULT_PRESET})", key="pg_default", on_click=_default)
info = st.session_state.pop(K_INFO, None)
if info:
    st.info(esc_md(info), icon=":material/info:")

st.session_state.setdefault("pg_classes", board.n_classes)
if st.session_state.get("pg_class", 0) >= board.n_classes:
    st.session_state["pg_class"] = 0
# the tools in one row that wraps on a narrow screen (fixed column shares cut them to "L…")
tools = st.container(horizontal=True, vertical_alignment="bottom", gap="small")
tools.radio(
    "Class to place",
    range(board.n_classes),
    format_func=lambda c: pg.CLASS_NAMES[c],
    horizontal=True,
    key="pg_class",
    help="The class a click places: "
    + ", ".join(_class_label(c) for c in range(board.n_classes))
    + ". A click on a point gives it this class too, or takes it off.",
)
tools.radio(
    "A click",
    ("adds a point", "adds 20 around", "removes a point"),
    format_func={
        "adds a point": ":material/add: 1",
        "adds 20 around": ":material/grain: 20",
        "removes a point": ":material/remove:",
    }.get,
    horizontal=True,
    key="pg_action",
    help="+ 1 places a point (on an existing point: gives it the chosen class too — a point of "
    "two classes makes the board multi-label — or takes it off); + 20 scatters 20 points of "
    "the class around the click; − removes the point clicked.",
)
tools.selectbox(
    "Preset",
    list(pg.PRESETS),
    format_func=lambda name: PRESET_LABELS.get(name, name),
    label_visibility="collapsed",
    icon=":material/dashboard:",
    key="pg_preset",
    width=160,
    on_change=_load_preset,
)
tools.button(
    ":material/casino:",
    key="pg_reseed",
    on_click=_new_points,
    help="New points of this preset (the box at the left loads a preset)",
)
icons = head.container(horizontal=True, gap="small", width="content")
icons.button(
    ":material/undo:",
    key="pg_undo",
    on_click=_undo,
    disabled=not st.session_state.get(K_UNDO),
    help="Undo the last change",
)
icons.button(":material/delete:", key="pg_clear", on_click=_clear, help="Clear the plane")
with icons.popover(":material/tune:", help="Classes, label noise, held-out share"):
    st.number_input(
        "Classes",
        min_value=2,
        max_value=pg.MAX_CLASSES,
        key="pg_classes",
        on_change=_classes_changed,
    )
    st.select_slider(
        "Label noise",
        list(range(0, 45, 5)),
        key="pg_noise",
        format_func=lambda v: f"{v}%",
        on_change=_noise_changed,
        help="Makes this share of the labels wrong, at random, on the points as they were "
        "before the slider moved (multi-class: a point gets another class; multi-label: a "
        "point's class is flipped on or off). Back at 0% they return; placing or loading "
        "points starts again from those points.",
    )
    st.select_slider(
        "Held out for testing",
        list(SHARES),
        key="pg_test",
        format_func=SHARES.get,
        on_change=_share_changed,
        help="Every n-th point (by the order placed) is kept from the model and drawn hollow; "
        "the test error is measured on them.",
    )

# ----------------------------------------------------------------------------- settings
# the plane and its panel side by side where both fit (1440 px), the panel under the plane
# where they do not (1024 px with the sidebar open): the plane keeps its size either way
row = st.container(horizontal=True, gap="medium")
left, right = row.container(width=PLANE_WIDTH), row.container(width=PANEL_WIDTH)
with right:
    knobs = st.columns(2)
    model_name = knobs[0].selectbox("Model", MODELS, key="pg_model", help="The page's own model.")
    traits = Spec.of(model_name, None)  # what the model is, not its name
    k_options = (["all classes"] if not board.multilabel else []) + list(
        pg.CLASS_NAMES[: board.n_classes]
    )
    wanted_k = st.session_state.pop("_pg_k", None)
    if wanted_k is not None and wanted_k in k_options:
        st.session_state["pg_show_k"] = wanted_k
    if st.session_state.get("pg_show_k") not in k_options:
        st.session_state["pg_show_k"] = k_options[0]
    shown_k = knobs[1].selectbox(
        "Region of",
        k_options,
        key="pg_show_k",
        help="All classes: each coloured where the model predicts it (multi-class boards); "
        "a class: its π or evidence.",
    )
    log_gamma = st.select_slider(
        "Playground γ (log₁₀)",
        LOG_GAMMAS,
        key="pg_gamma",
        format_func=lambda v: f"{10**v:.3g}",
        help="The RBF width of the playground's model (the sidebar's is for the data in use).",
    )
    log_lam = st.select_slider(
        "Playground λ (log₁₀)",
        LOG_LAMS,
        key="pg_lam",
        format_func=lambda v: f"1e{v:g}" if float(v).is_integer() else f"{10**v:.2g}",
        disabled=not traits.l1,
        help="SparseSBLR's L1 penalty on β (SML and SBLR have none); the sidebar's λ is for "
        "the data in use.",
    )
    layer = st.radio(
        "Colour the plane by",
        tuple(LAYERS.values()),
        horizontal=True,
        key="pg_layer",
        help="πₖ: the model's probability of the class; f̄ₖ: the class's evidence, a sum of "
        "bumps around its points.",
    )
gamma, lam = 10.0**log_gamma, 10.0**log_lam
k = None if shown_k == "all classes" else pg.CLASS_NAMES.index(shown_k)
what = "evidence" if layer == LAYERS["evidence"] and k is not None else "proba"

# ----------------------------------------------------------------------------- the model
model, problem = None, None
try:
    model = pg.fit_board(board, model_name, gamma=gamma, lam=lam)
except DataError as exc:
    problem = str(exc)
flat = model is not None and pg.ignores_points(model)
cut = pg.decision_cut(model, board, k) if model is not None and k is not None else None
names = list(pg.CLASS_NAMES[: board.n_classes])

surface = None if model is None else pg.surface(model, board, k, GRID, what=what)
if surface is not None and cut is not None and not surface[1].min() < cut < surface[1].max():
    cut = None  # π on one side of the cut everywhere: no line to draw, none promised
with left:
    st.plotly_chart(
        plots.playground_plane(
            board.points,
            board.labels,
            board.held_out,
            names,
            surface=surface,
            k=k,
            what=what,
            cut=None if flat or what != "proba" else cut,
            title=pg.plane_title(model_name, k, what, cut=cut, flat=flat),
            height=PLANE_HEIGHT,
        ),
        width=PLANE_WIDTH,
        key=_plane_key(),
        on_select=_clicked,
        selection_mode=("points",),
        config={"displayModeBar": False, "doubleClick": False, "doubleClickDelay": 20},
    )


def _beta(chart_key):
    """β of the page's model, its zeros counted (the β tab and the lesson's)."""
    if not traits.learns_beta:
        st.caption(f"{model_name} decides from the evidence alone: it has no β.")
        return
    coef = pg.board_beta(model, board)
    label = model_name + (f", λ = {lam:.2g}" if traits.l1 else "")
    fig_beta = plots.beta_heatmaps({label: coef}, names, lams={label: lam} if traits.l1 else None)
    st.plotly_chart(fig_beta, key=chart_key)  # sized by its own rule (a squeezed height cut it)
    st.caption(
        f"β[k, t]: how class t's evidence moves class k's logit; {int((coef == 0).sum())} of "
        f"{coef.size} exactly 0 (white)."
    )


with right:
    if problem:
        st.info(esc_md(problem))
    elif flat:
        st.info(
            f"Every β is 0 at λ = {lam:.2g}: **the model now ignores the points** and gives "
            "every place the same π. Lower λ to bring them back.",
            icon=":material/block:",
        )
    tab_objects = st.tabs(TABS, key="pg_tab", on_change="rerun")
    panels = dict(zip(TABS, tab_objects, strict=True))
    with panels["Scores"]:
        if panels["Scores"].open and model is not None:
            scores = pg.board_scores(model, board)
            cols = st.columns(2)
            for col, part, label in ((cols[0], "train", "Train"), (cols[1], "test", "Test")):
                sc = scores[part]
                if sc is None:
                    col.metric(f"{label} error", "–")
                    continue
                col.metric(
                    f"{label} error",
                    f"{sc['error']:.1%}",
                    f"micro-F1 {sc['micro_f1']:.2f}" if "micro_f1" in sc else None,
                    delta_color="off",
                    help=f"On the {sc['points']} {part} points"
                    + (": the share of wrong label decisions" if board.multilabel else ""),
                )
            if cut is not None and what == "proba" and not flat and board.multilabel:
                st.caption(
                    f"Why is the dashed line at π = {cut:.2f}, not 0.5? With several classes "
                    "a point may have, the model fits its cut on the training points, the π "
                    "that gives the best micro-F1 there."
                )
            st.caption(pg.held_out_note(board))
    with panels["β"]:
        if panels["β"].open and model is not None:
            _beta("pg_beta")
    with panels["Error vs λ"]:
        if panels["Error vs λ"].open and model is not None:
            if not traits.l1:
                st.caption(f"{model_name} has no λ: the curve is SparseSBLR's.")
            with st.spinner(f"Fitting SparseSBLR at {len(LOG_LAMS)} values of λ…"):
                curve = pg.error_along_lambda(
                    board, "SparseSBLR", gamma=gamma, lams=[10.0**v for v in LOG_LAMS]
                )
            st.plotly_chart(
                plots.error_curve(curve["lams"], curve["train"], curve["test"], lam=lam),
                key="pg_curve",
                config={"displayModeBar": False},
            )
    t2_shown = None
    with panels["Evidence"]:
        if panels["Evidence"].open and model is not None and len(board):
            F_board = pg.board_evidence(model, board)  # once a run: the pair and the plot
            t1, t2 = pg.evidence_pair(model, board, k, evidence=F_board)
            others = [t for t in range(board.n_classes) if t != t1]
            # keyed by the class and the model: a change of either starts from its own pair
            box = f"pg_space_t2:{t1}:{model_name}"
            wanted = st.session_state.pop("_pg_t2", None)
            if wanted in names and names.index(wanted) in others:
                st.session_state[box] = names.index(wanted)
            t2_shown = st.selectbox(
                f"Evidence space: {pg.CLASS_NAMES[t1]}'s evidence against",
                others,
                index=others.index(t2),
                format_func=_class_label,
                key=box,
                help="Each point at (its evidence of the first class, of this class); the "
                "default is the class that moves the first one most (the largest |β|, or for "
                "SML the evidence largest at its points).",
            )
            fig_space = plots.evidence_scatter(
                F_board, t1, t2_shown, board.labels[:, t1], names, k=t1
            )
            fig_space.layout.height = 300
            st.plotly_chart(fig_space, key="pg_space")
    with panels["Lesson"]:
        steps = st.columns(3)
        for n, label in enumerate(("1 · C in A ∩ B", "2 · λ = 3.2e-2", "3 · 15% noise"), 1):
            steps[n - 1].button(label, key=f"pg_lesson_{n}", on_click=_lesson, args=(n,))
        st.markdown(pg.LESSON_STEPS[st.session_state.get("_pg_lesson", 0)])
        if panels["Lesson"].open and st.session_state.get("_pg_lesson") and model is not None:
            _beta("pg_lesson_beta")  # the step's question is about β: beside it

# ----------------------------------------------------------------------------- under the plane
st.caption(
    f"{len(board)} point{'' if len(board) == 1 else 's'} "
    f"({int(board.held_out.sum())} held out, hollow), "
    f"{board.n_classes} classes, {'multi-label' if board.multilabel else 'multi-class'}. "
    "A point's colour is its class; a point of several classes has a ring for each."
)
with st.expander("Place or remove a point by its coordinates (keyboard)"):
    typed = st.columns([2, 2, 2], vertical_alignment="bottom")
    typed[0].number_input("x₁", -1.0, 1.0, 0.0, 0.05, key="pg_type_x")
    typed[1].number_input("x₂", -1.0, 1.0, 0.0, 0.05, key="pg_type_y")
    typed[2].button("Do it", key="pg_type_go", on_click=_typed, help="What a click there would do.")

actions = st.container(horizontal=True, vertical_alignment="center")
if actions.button("Use these points as the data", key="pg_use", disabled=len(board) < 4):
    target = names if board.multilabel else "class"
    error = try_upload(Upload(pg.board_csv(board), "playground.csv", target=target))
    if error:
        st.error(esc_md(error))
    else:  # the pages it opens show what the Playground showed: its model, γ and λ
        show_view(
            "pages/coefficients.py",
            {"model": model_name, "gamma": gamma, "lam": lam if traits.l1 else None},
            source="the Playground",
        )
actions.download_button(
    "Download as CSV",
    pg.board_csv(board),
    file_name="playground.csv",
    mime="text/csv",
    key="pg_download",
)
actions.caption("The address bar holds these points and this view: send it as a link.")

tab_open = st.session_state.get("pg_tab", TABS[0])
for name, value in {
    "pts": pg.encode_board(board),
    "pm": model_name,
    "pgamma": f"{log_gamma:g}",
    "plam": f"{log_lam:g}",
    "pk": shown_k,
    "pl": next(v for v, label in LAYERS.items() if label == layer),
    "pc": pg.CLASS_NAMES[int(st.session_state.get("pg_class", 0))],
    "pt2": None if t2_shown is None else pg.CLASS_NAMES[t2_shown],
    "ptab": None if tab_open == TABS[0] else tab_open,
    "ptest": None if board.every == pg.HOLDOUT_EVERY else str(board.every),
}.items():
    if value is None:
        if name != "pt2":  # the partner stays while its panel is closed
            st.query_params.pop(name, None)
    elif st.query_params.get(name) != value:
        st.query_params[name] = value
