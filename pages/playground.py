"""Playground: draw points in the plane and watch the similarity models think.

The page keeps its own data (a :class:`sblr.playground.Board`) and its own model settings;
the data in use elsewhere changes only when asked ("Use these points as the data"). The
points, the classes, the model, γ, λ and the class shown live in the address (``pts``,
``pm``, ``pgamma``, ``plam``, ``pk``), so a link shows everyone the same picture. A click on
the plane places a point of the chosen class (or, on a point, adds that class to it or
removes it); every figure is drawn from arrays: the region and the evidence as one contour,
the points as two traces, the clickable cells as one.
"""

import numpy as np
import streamlit as st

from pages._shared.data import Upload, try_upload
from pages._shared.formatting import esc_md
from pages._shared.questions import Spec
from pages._shared.state import page_context
from sblr import playground as pg
from sblr import plots
from sblr.decision import Decision
from sblr.exceptions import DataError

ds, s, key = page_context(__file__)  # the data in use (untouched here)

K_BOARD, K_UNDO, K_CLICKS, K_NOTE = "_pg_board", "_pg_undo", "_pg_clicks", "_pg_note"
K_CLEAN = "_pg_clean"  # the board before the noise slider's flips
K_INFO = "_pg_info"  # a note on the board the link opened (no fault of the link)
K_OFFER = "_pg_offer"  # the link could not be read: offer the default board
COLOURS = plots.class_colors(pg.MAX_CLASSES)
COLOUR_NAMES = ("blue", "red", "green", "purple", "orange", "cyan")
MODELS = ("SparseSBLR", "SBLR", "SML")
LOG_GAMMAS = [round(v, 2) for v in np.arange(-1.0, 2.01, 0.25)]
LOG_LAMS = [round(v, 2) for v in np.arange(-5.0, 0.01, 0.5)]
GRID = 60  # the region's resolution
CELLS = 29  # clickable cells per axis (841 SVG markers; 41 × 41 cost ~0.1 s a redraw in Chromium)
UNDO_STEPS = 50
DEFAULT_PRESET = "two blobs"


def _number(text, choices, default):
    try:
        value = round(float(text), 2)
    except (TypeError, ValueError):
        return default
    return value if value in choices else default


def _first_board():
    """``(board, note, offer)``: the link's points, else the default preset; a note to show
    (or None), and whether to offer the default board beside it.

    Every board a link can hold opens with its points as they were: one of a single class
    gets an empty second class (the page fits and places two or more; issue #44: a one-class
    link raised an IndexError on every run, the controls never drawn). A link that cannot be
    read leaves the plane empty, says why, and offers the default board.
    """
    text = st.query_params.get("pts")
    if text is None:
        return pg.preset(DEFAULT_PRESET), None, False
    try:
        board = pg.decode_board(text)
    except DataError as exc:
        note = f"The link's points could not be read ({exc}); the plane is empty."
        return pg.Board.empty(2), note, True
    if board.n_classes < 2:
        note = (
            "The link's board has one class (A). A model needs two: class B is added, with no "
            "points yet; place some to see the models at work."
        )
        return board.with_classes(2), note, False
    return board, None, False


if K_BOARD not in st.session_state:
    st.session_state[K_BOARD], note, offer = _first_board()
    st.session_state[K_NOTE if offer else K_INFO] = note
    st.session_state[K_OFFER] = offer
    q = st.query_params
    st.session_state["pg_model"] = q.get("pm") if q.get("pm") in MODELS else MODELS[0]
    st.session_state["pg_gamma"] = _number(q.get("pgamma"), LOG_GAMMAS, 0.0)
    st.session_state["pg_lam"] = _number(q.get("plam"), LOG_LAMS, -3.0)
    st.session_state["_pg_k"] = q.get("pk")
board: pg.Board = st.session_state[K_BOARD]


def _set_board(new, *, noisy=False):
    """Make ``new`` the board (undo keeps the old); a change other than the noise slider's
    makes the new board the clean one (the slider back to 0 %)."""
    if not noisy:
        st.session_state.pop(K_CLEAN, None)
        st.session_state["pg_noise"] = 0
    undo = st.session_state.setdefault(K_UNDO, [])
    undo.append(pg.encode_board(st.session_state[K_BOARD]))
    del undo[:-UNDO_STEPS]
    st.session_state[K_BOARD] = new
    st.session_state["pg_classes"] = new.n_classes  # the "Classes" box follows a preset
    # a new chart key: a fresh plane, without the selection the click left
    st.session_state[K_CLICKS] = st.session_state.get(K_CLICKS, 0) + 1


def _undo():
    undo = st.session_state.get(K_UNDO)
    if undo:
        st.session_state.pop(K_CLEAN, None)
        st.session_state["pg_noise"] = 0
        st.session_state[K_BOARD] = pg.decode_board(undo.pop())
        st.session_state["pg_classes"] = st.session_state[K_BOARD].n_classes
        st.session_state[K_CLICKS] = st.session_state.get(K_CLICKS, 0) + 1


def _noise_changed():
    """The noise slider: the clean board with that share of its labels made wrong."""
    clean = st.session_state.get(K_CLEAN) or st.session_state[K_BOARD]
    share = st.session_state["pg_noise"] / 100
    _set_board(pg.with_label_noise(clean, share, seed=0) if share else clean, noisy=True)
    st.session_state[K_CLEAN] = clean


def _load_preset():
    _set_board(pg.preset(st.session_state["pg_preset"]))


def _default():
    _set_board(pg.preset(DEFAULT_PRESET))


def _clear():
    _set_board(pg.Board.empty(st.session_state[K_BOARD].n_classes))


def _classes_changed():
    _set_board(st.session_state[K_BOARD].with_classes(int(st.session_state["pg_classes"])))


def _class_label(c):
    return f"{pg.CLASS_NAMES[c]} ({COLOUR_NAMES[c]})"


st.header("Playground", anchor=False)
st.caption(
    "Click the plane to place points; the model refits at once. The data in use elsewhere "
    f"({esc_md(ds.name)}) changes only if you send these points there."
)
note = st.session_state.pop(K_NOTE, None)
if note:
    st.warning(esc_md(note), icon=":material/link_off:")
    if st.session_state.pop(K_OFFER, False):  # the default board, one click away
        st.button(f"Open the default board ({DEFAULT_PRESET})", key="pg_default", on_click=_default)
info = st.session_state.pop(K_INFO, None)
if info:
    st.info(esc_md(info), icon=":material/info:")

# ----------------------------------------------------------------------------- a short lesson
OVERLAP = "C where A and B overlap"


def _lesson(step):
    """Set the board and the page's settings for a step of the short lesson."""
    st.session_state["_pg_lesson"] = step
    if step in (1, 3):
        board = pg.preset(OVERLAP)
        _set_board(pg.with_label_noise(board, 0.15, seed=0) if step == 3 else board)
    st.session_state["pg_model"] = "SparseSBLR"
    st.session_state["pg_gamma"] = 0.0
    # on log rates C's weights on A and B fade between 1e-2 and 3e-2: at 10^-1.5 only C's
    # own survives (sblr.playground.fit_board on the preset)
    st.session_state["pg_lam"] = -1.5 if step == 2 else -3.0
    st.session_state["pg_show_k"] = "C"
    st.session_state["pg_layer"] = "πₖ"


LESSON = {
    0: "Three steps on a class that lives where two others overlap. Press 1 to begin.",
    1: "**1.** Every point of C is also a point of A and of B. *Predict:* in row C of β (the "
    "heatmap at the right), which weights are non-zero: C's own, A's, B's? Then press 2.",
    2: "**2.** λ raised to 3.2e-2: which of C's weights survive? C's own evidence says “near C's "
    "points” directly; A's and B's only help at C's edges (“A without B is not C”: a negative "
    "weight), and the L1 penalty drops what adds least. Co-occurring is not being needed.",
    3: "**3.** 15% of all labels flipped at random: move λ and watch the test error and which "
    "of C's weights come and go.",
}
with st.expander("A short lesson: a class that lives where two others overlap"):
    steps = st.columns(3)
    for n, label in enumerate(("1 · C inside A ∩ B", "2 · λ = 3.2e-2", "3 · 15% noise"), 1):
        steps[n - 1].button(label, key=f"pg_lesson_{n}", on_click=_lesson, args=(n,))
    st.markdown(LESSON[st.session_state.get("_pg_lesson", 0)])

# ----------------------------------------------------------------------------- controls
st.session_state.setdefault("pg_classes", board.n_classes)
left, right = st.columns([3, 2])
with right:
    knobs = st.columns([3, 2])
    model_name = knobs[0].selectbox("Playground model", MODELS, key="pg_model")
    traits = Spec.of(model_name, None)  # what the model is, not its name
    k_options = ["all classes"] + [pg.CLASS_NAMES[c] for c in range(board.n_classes)]
    wanted_k = st.session_state.pop("_pg_k", None)
    if wanted_k is not None and wanted_k in k_options:
        st.session_state["pg_show_k"] = wanted_k
    if st.session_state.get("pg_show_k") not in k_options:
        st.session_state["pg_show_k"] = k_options[1] if board.multilabel else k_options[0]
    shown_k = knobs[1].selectbox("Region of", k_options, key="pg_show_k")
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
        ("πₖ", "evidence f̄ₖ"),
        horizontal=True,
        key="pg_layer",
        help="πₖ: the model's probability of the class; f̄ₖ: the class's evidence, a sum of "
        "bumps around its points.",
    )
gamma, lam = 10.0**log_gamma, 10.0**log_lam
k = None if shown_k == "all classes" else k_options.index(shown_k) - 1
if k is None and board.multilabel:
    k = 0  # a multi-label board has no one most probable class: a class's region

# ----------------------------------------------------------------------------- the model
model, problem = None, None
try:
    model = pg.fit_board(board, model_name, gamma=gamma, lam=lam)
except DataError as exc:
    problem = str(exc)


def _act(x, y, *, on_point):
    """What a click at (x, y) does, by the chosen action and class."""
    # the tools are drawn under the plane: on a first run they have no state yet
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
            _set_board(board.add(x, y, c))
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


def _plane():
    import plotly.graph_objects as go

    traces = []
    cut_level = 0.5
    if model is not None:
        what = "evidence" if layer.startswith("evidence") and k is not None else "proba"
        xs, Z = pg.surface(model, board, k, GRID, what=what)
        if k is None:  # multi-class: every class coloured where it is the most probable
            m = board.n_classes
            scale = [[edge, COLOURS[c]] for c in range(m) for edge in (c / m, (c + 1) / m)]
            traces.append(
                go.Heatmap(
                    x=xs,
                    y=xs,
                    z=Z,
                    zmin=-0.5,
                    zmax=m - 0.5,
                    colorscale=scale,
                    opacity=0.35,
                    showscale=False,
                    hoverinfo="skip",
                )
            )
        else:
            top_value = 1.0 if what == "proba" else max(float(Z.max()), 1e-12)
            traces.append(
                go.Contour(
                    x=xs,
                    y=xs,
                    z=Z,
                    zmin=0.0,
                    zmax=top_value,
                    colorscale=[[0.0, "#ffffff"], [1.0, COLOURS[k]]],
                    opacity=0.55,
                    contours={"coloring": "fill", "showlines": False},
                    colorbar={
                        "title": {"text": "π" if what == "proba" else "f̄"},
                        "len": 0.6,
                        "thickness": 12,
                        "yanchor": "top",
                        "y": 1.0,
                    },
                    hoverinfo="skip",
                )
            )
            if what == "proba":
                level = Decision.of(model).cut(k) if board.multilabel else 0.5
                cut_level = level
                traces.append(
                    go.Contour(
                        x=xs,
                        y=xs,
                        z=Z,
                        showscale=False,
                        hoverinfo="skip",
                        contours={"coloring": "none", "start": level, "end": level, "size": 1},
                        line={"color": "#222222", "width": 2, "dash": "dash"},
                        name=f"π = {level:.2f}",
                        showlegend=False,
                    )
                )
    cells = np.linspace(-1.0, 1.0, CELLS)
    cx, cy = np.meshgrid(cells, cells)
    traces.append(
        go.Scatter(
            x=cx.ravel(),
            y=cy.ravel(),
            mode="markers",
            name="cells",
            marker={"size": 14, "color": "rgba(0,0,0,0.01)", "symbol": "square"},
            hovertemplate="click: place here (%{x:.2f}, %{y:.2f})<extra></extra>",
            showlegend=False,
        )
    )
    if len(board):
        # each point's first and second class (the second is the first for a one-class point)
        order = np.argsort(~board.labels, axis=1, kind="stable")
        first = order[:, 0]
        second = np.where(board.labels.sum(axis=1) > 1, order[:, 1], first)
        held = board.held_out
        names = [" + ".join(pg.CLASS_NAMES[c] for c in np.flatnonzero(r)) for r in board.labels]
        palette = np.array(COLOURS)
        fill = palette[first]
        edge = np.where(second != first, palette[second], "#222222")
        width = np.where(second != first, 3.5, 0.8)
        traces.append(
            go.Scatter(
                x=board.points[:, 0],
                y=board.points[:, 1],
                mode="markers",
                name="points",
                marker={
                    "size": np.where(second != first, 12, 10),
                    "color": np.where(held, "rgba(255,255,255,0.9)", fill),
                    "line": {
                        "color": np.where(held, fill, edge),
                        "width": np.where(held, 2.5, width),
                    },
                },
                customdata=np.c_[np.arange(len(board)), np.where(held, "held out", "training")],
                text=names,
                hovertemplate="%{text} · %{customdata[1]} point (%{x:.2f}, %{y:.2f})"
                "<extra></extra>",
                showlegend=False,
            )
        )
    if k is None:
        title = f"{model_name}: where it predicts each class"
    elif layer.startswith("evidence"):
        title = f"{model_name}: evidence f̄ of {pg.CLASS_NAMES[k]}"
    else:
        title = f"{model_name}: π of {pg.CLASS_NAMES[k]} (dashed: π = {cut_level:.2f})"
    fig = go.Figure(traces)
    colour_bar = model is not None and k is not None  # the contour of one class has one
    fig.update_layout(
        title={"text": title, "font": {"size": 15}},
        xaxis={
            "range": [-1.05, 1.05],
            "title": {"text": "x₁"},
            "constrain": "domain",
            "automargin": False,
        },
        yaxis={
            "range": [-1.05, 1.05],
            "title": {"text": "x₂"},
            "scaleanchor": "x",
            "constrain": "domain",
            "constraintoward": "top",  # a narrow column: the square right under the title
            "automargin": False,
        },
        height=470,
        # fixed margins, room for the tick labels, axis titles and the colour bar: Plotly's
        # automatic margins laid the plane out twice a redraw (a fifth of a λ step in Chromium)
        margin={"l": 56, "r": 72 if colour_bar else 12, "t": 40, "b": 58, "autoexpand": False},
        plot_bgcolor="white",
        clickmode="event+select",
        dragmode=False,
        hovermode="closest",
    )
    return fig


with left:
    st.plotly_chart(
        _plane(),
        key=_plane_key(),
        on_select=_clicked,
        selection_mode=("points",),
        config={"displayModeBar": False},
    )
    # the tools under the plane: the plane itself stays on a 1024×768 first screen
    tools = st.columns([2, 3])
    tools[0].radio(
        "Class to place",
        range(board.n_classes),
        format_func=_class_label,
        horizontal=True,
        key="pg_class",
    )
    tools[1].radio(
        "A click on the plane",
        ("adds a point", "adds 20 around", "removes a point"),
        horizontal=True,
        key="pg_action",
        help="On an existing point, “adds a point” gives it the chosen class too (a point of "
        "two classes makes the board multi-label), or takes it off when the point has it (the "
        "point goes with its last class); “adds 20 around” scatters 20 points of the class "
        "around the click.",
    )
    st.caption(
        f"{len(board)} point{'' if len(board) == 1 else 's'} "
        f"({int(board.held_out.sum())} held out, hollow), "
        f"{board.n_classes} classes, {'multi-label' if board.multilabel else 'multi-class'}. "
        "Filled colour: a point's class; a coloured ring: its second class."
    )
    with st.expander("Place or remove a point by its coordinates (keyboard)"):
        typed = st.columns([2, 2, 2], vertical_alignment="bottom")
        typed[0].number_input("x₁", -1.0, 1.0, 0.0, 0.05, key="pg_type_x")
        typed[1].number_input("x₂", -1.0, 1.0, 0.0, 0.05, key="pg_type_y")
        typed[2].button(
            "Do it", key="pg_type_go", on_click=_typed, help="What a click there would do."
        )
    row = st.columns([3, 2, 2, 2, 2], vertical_alignment="bottom")
    row[0].selectbox("Preset", list(pg.PRESETS), key="pg_preset")
    row[1].button("Load", on_click=_load_preset, key="pg_load")
    row[2].button("Undo", on_click=_undo, key="pg_undo", disabled=not st.session_state.get(K_UNDO))
    row[3].button("Clear", on_click=_clear, key="pg_clear")
    row[4].number_input(
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

with right:
    if problem:
        st.info(esc_md(problem))
    else:
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
        if not traits.learns_beta:
            st.caption(f"{model_name} decides from the evidence alone: it has no β.")
        else:
            names = list(pg.CLASS_NAMES[: board.n_classes])
            coef = pg.board_beta(model, board)
            label = model_name + (f", λ = {lam:.2g}" if traits.l1 else "")
            fig_beta = plots.beta_heatmaps(
                {label: coef}, names, lams={label: lam} if traits.l1 else None
            )
            fig_beta.layout.height = 300
            fig_beta.update_layout(title={"text": "β: class t's evidence (column) in class k"})
            st.plotly_chart(fig_beta, key="pg_beta")
            zeros = int((coef == 0).sum())
            st.caption(
                f"β[k, t]: how class t's evidence moves class k's logit; {zeros} of "
                f"{coef.size} exactly 0 (white)."
            )
        if board.n_classes >= 2 and len(board):
            F_board = pg.board_evidence(model, board)  # once a run: the pair and the plot
            t1, t2 = pg.evidence_pair(model, board, k, evidence=F_board)
            others = [t for t in range(board.n_classes) if t != t1]
            t2 = st.selectbox(
                f"Evidence space: {pg.CLASS_NAMES[t1]}'s evidence against",
                others,
                index=others.index(t2),
                format_func=_class_label,
                # keyed by the class and the model: a change of either starts from its own pair
                key=f"pg_space_t2:{t1}:{model_name}",
                help="Each point at (its evidence of the first class, of this class); the "
                "default is the class that moves the first one most (the largest |β|, or for "
                "SML the evidence largest at its points).",
            )
            fig_space = plots.evidence_scatter(
                F_board,
                t1,
                t2,
                board.labels[:, t1],
                list(pg.CLASS_NAMES[: board.n_classes]),
                k=t1,
            )
            fig_space.layout.height = 280
            st.plotly_chart(fig_space, key="pg_space")

# ----------------------------------------------------------------------------- share, send
actions = st.columns(3)
if actions[0].button("Use these points as the data", key="pg_use", disabled=len(board) < 4):
    names = list(pg.CLASS_NAMES[: board.n_classes])
    target = names if board.multilabel else "class"
    error = try_upload(Upload(pg.board_csv(board), "playground.csv", target=target))
    if error:
        st.error(esc_md(error))
    else:
        st.switch_page("pages/coefficients.py")
actions[1].download_button(
    "Download as CSV",
    pg.board_csv(board),
    file_name="playground.csv",
    mime="text/csv",
    key="pg_download",
)
actions[2].caption("The address bar holds these points and settings: send it as a link.")

for name, value in {
    "pts": pg.encode_board(board),
    "pm": model_name,
    "pgamma": f"{log_gamma:g}",
    "plam": f"{log_lam:g}",
    "pk": shown_k,
}.items():
    if value is None:
        st.query_params.pop(name, None)
    elif st.query_params.get(name) != value:
        st.query_params[name] = value
