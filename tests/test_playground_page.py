"""The Playground page (issue #36): its own board and settings, carried by the link, and sent
to the rest of the dashboard on request. Oracles: sblr.playground on the same board."""

from __future__ import annotations

import html

import numpy as np
import pytest
from apptest_helpers import assert_clean, goto, start, texts

from sblr.playground import (
    MAX_POINTS,
    Board,
    board_scores,
    click_preview,
    decode_board,
    encode_board,
    fit_board,
    preset,
)

pytestmark = [pytest.mark.usefixtures("navigation_mode", "private_share_store"), pytest.mark.slow]


def _open(query):
    return goto(start(query), "pages/playground.py")


def test_a_link_brings_back_the_points_and_the_settings():
    board = preset("C where A and B overlap")
    at = _open({"pts": encode_board(board), "pm": "SBLR", "pgamma": "0.5", "plam": "-2", "pk": "C"})
    assert at.selectbox(key="pg_model").value == "SBLR"
    assert at.select_slider(key="pg_gamma").value == 0.5
    assert at.selectbox(key="pg_show_k").value == "C"
    assert f"{len(board)} points" in texts(at.caption) and "multi-label" in texts(at.caption)
    # the test error shown is the model's on the held-out points (oracle: the library)
    expected = board_scores(fit_board(board, "SBLR", gamma=10**0.5), board)["test"]
    (test_metric,) = [m for m in at.metric if m.label == "Test error"]
    assert test_metric.value == f"{expected['error']:.1%}"
    assert at.query_params["pts"] == encode_board(board)  # the address keeps the board
    assert at.query_params["pk"] == "C" and at.query_params["pm"] == "SBLR"


def test_a_broken_link_gives_a_note_an_empty_plane_and_the_default_board_on_offer():
    at = _open({"pts": "AQI*not-a-board"})
    assert "could not be read" in html.unescape(texts(at.warning))
    assert "0 points" in texts(at.caption)
    assert "two classes" in texts(at.info)  # what to do next, instead of a model
    at.button(key="pg_default").click()
    at.run()
    assert_clean(at)
    assert decode_board(at.query_params["pts"]) == preset("two blobs")


def _board(points, labels):
    return encode_board(Board(np.asarray(points, dtype=float), np.asarray(labels, dtype=bool)))


@pytest.mark.parametrize(
    "text",
    [
        "AQEFBQHIyAE",  # issue #44: one class, two points (an IndexError on every run)
        _board(np.linspace(-0.9, 0.9, 80).reshape(40, 2), np.ones((40, 1))),  # one class
        _board([[0.1, 0.2], [0.3, -0.4], [-0.5, 0.6]], np.ones((3, 6))),  # every class on all
        _board([[0.0, 0.0]], [[False, False, True]]),  # one point, of the third class
        _board(np.zeros((MAX_POINTS, 2)), np.eye(2, dtype=bool)[np.arange(MAX_POINTS) % 2]),
    ],
    ids=["issue-44", "one-class", "six-on-every-point", "one-point", "400-on-one-cell"],
)
def test_every_board_a_link_can_hold_opens_with_its_controls(text):
    """Issue #44 item 5: a link Board accepts opens, its points as they were and every
    control drawn; a one-class board gets an empty second class, and says so."""
    board = decode_board(text)
    at = _open({"pts": text})
    shown = decode_board(at.query_params["pts"])
    assert np.array_equal(shown.points, board.points)
    assert np.array_equal(shown.labels[:, : board.n_classes], board.labels)
    assert not shown.labels[:, board.n_classes :].any()
    assert f"{len(board)} point" in texts(at.caption)
    assert at.number_input(key="pg_classes").value == max(board.n_classes, 2)
    assert len(at.radio(key="pg_class").options) == max(board.n_classes, 2)
    if board.n_classes == 1:
        assert "one class" in html.unescape(texts(at.info))
    at.selectbox(key="pg_preset").set_value("XOR")  # and the controls work: a preset loads
    at.run()
    assert_clean(at)
    assert decode_board(at.query_params["pts"]) == preset("XOR")


def test_a_link_too_long_to_read_says_so_and_the_playground_shows_its_default():
    """Issue #44 item 9: Streamlit reads no query string of over 1,000 parameters (or 512 Ki
    characters) and the session began as if the link had none, unsaid."""
    start({})  # the server's first session (its first run installs the notice)
    query = {"pts": encode_board(preset("XOR")), **{f"x{i}": "" for i in range(1000)}}
    at = start(query, pin_lam=False)
    assert "too long" in html.unescape(texts(at.warning))
    assert "1,001 parameters" in html.unescape(texts(at.warning))
    at = goto(at, "pages/playground.py")
    assert decode_board(at.query_params["pts"]) == preset("two blobs")
    assert "too long" not in html.unescape(texts(at.warning))  # said once


def test_the_points_become_the_data_of_the_other_pages_on_request():
    at = _open({"pts": encode_board(preset("two blobs"))})
    sidebar = texts(at.sidebar.markdown)
    assert "planted" in sidebar  # the playground leaves the data in use alone
    # and says whose settings are whose, above the sidebar's model controls
    assert "the page's own" in texts(at.sidebar.info)
    at.button(key="pg_use").click()
    at.run()
    assert_clean(at)
    sidebar = texts(at.sidebar.markdown)
    assert "playground" in sidebar and "80 × 2" in sidebar, sidebar


def test_points_can_be_placed_and_removed_from_the_keyboard():
    """The plane takes clicks; the same actions by typed coordinates, for a keyboard user.
    Oracle: the board the address carries, decoded."""
    board = preset("two blobs")
    at = _open({"pts": encode_board(board)})
    at.radio(key="pg_class").set_value(1)
    at.number_input(key="pg_type_x").set_value(0.3)
    at.number_input(key="pg_type_y").set_value(-0.2)
    at.button(key="pg_type_go").click()
    at.run()
    assert_clean(at)
    placed = decode_board(at.query_params["pts"])
    assert len(placed) == len(board) + 1
    assert placed.labels[-1].tolist() == [False, True]
    assert placed.points[-1] == pytest.approx([0.3, -0.2], abs=1 / 255)
    at.radio(key="pg_action").set_value("removes a point")
    at.button(key="pg_type_go").click()
    at.run()
    assert decode_board(at.query_params["pts"]) == board


def test_the_short_lesson_sets_the_overlap_and_its_lambda_empties_c_of_a_and_b():
    """Issue #36 item 5: place C only where A and B overlap, predict which β of C are
    non-zero, check with λ, then break it with noise. Oracle: SparseSBLR fitted by the
    library on the same board at each step's settings."""
    from sblr.playground import with_label_noise

    at = _open({"ptab": "Lesson"})  # its buttons are in its tab, drawn when it is open
    at.button(key="pg_lesson_1").click()
    at.run()
    assert_clean(at)
    board = decode_board(at.query_params["pts"])
    assert board == preset("C where A and B overlap")
    assert at.query_params["pk"] == "C" and at.query_params["pm"] == "SparseSBLR"
    small = fit_board(board, "SparseSBLR", gamma=1.0, lam=1e-3).coef_[2]
    assert small[0] != 0 and small[1] != 0  # at λ = 1e-3 C uses A's and B's evidence
    at.button(key="pg_lesson_2").click()
    at.run()
    assert at.query_params["plam"] == "-1.5"
    large = fit_board(board, "SparseSBLR", gamma=1.0, lam=10**-1.5).coef_[2]
    assert large[0] == 0 and large[1] == 0 and large[2] != 0  # only C's own survives
    zeros = int((fit_board(board, "SparseSBLR", gamma=1.0, lam=10**-1.5).coef_ == 0).sum())
    at.session_state["pg_tab"] = "β"  # β beside the plane
    at.run()
    assert f"{zeros} of 9 exactly 0" in texts(at.caption)
    at.session_state["pg_tab"] = "Lesson"
    at.run()
    at.button(key="pg_lesson_3").click()
    at.run()
    assert decode_board(at.query_params["pts"]) == with_label_noise(board, 0.15, seed=0)


def test_a_preset_and_undo_keep_the_classes_box_in_step_with_the_board():
    at = _open({"pts": encode_board(preset("two blobs"))})
    assert at.number_input(key="pg_classes").value == 2
    at.selectbox(key="pg_preset").set_value("C where A and B overlap")
    at.run()
    assert at.number_input(key="pg_classes").value == 3
    assert len(at.radio(key="pg_class").options) == 3
    at.button(key="pg_undo").click()
    at.run()
    assert at.number_input(key="pg_classes").value == 2
    assert at.query_params["pts"] == encode_board(preset("two blobs"))


def _space_axes(at):
    import json

    layout = json.loads(at.get("plotly_chart")[-1].proto.spec)["layout"]
    return layout["xaxis"]["title"]["text"], layout["yaxis"]["title"]["text"]


def test_the_evidence_space_shows_the_class_against_the_one_that_moves_it_and_follows_k():
    """The small evidence-space plot pairs the shown class with the class that moves it most
    (oracle: sblr.playground.evidence_pair on the same fit); a change of the class shown moves
    the pair and the axes, and the reader may choose the other class."""
    from sblr.playground import evidence_pair

    board = preset("C where A and B overlap")
    at = _open({"pts": encode_board(board), "pm": "SBLR", "pgamma": "0", "pk": "C"})
    at.session_state["pg_tab"] = "Evidence"
    at.run()
    model = fit_board(board, "SBLR", gamma=1.0)
    names = "ABC"
    for k in (2, 0):
        if k != 2:
            at.selectbox(key="pg_show_k").set_value(names[k])
            at.run()
        (box,) = [b for b in at.selectbox if b.label.startswith("Evidence space")]
        t2 = evidence_pair(model, board, k)[1]
        assert box.label == f"Evidence space: {names[k]}'s evidence against"
        assert box.value == t2
        assert _space_axes(at) == (f"f̄ of {names[k]}", f"f̄ of {names[t2]}")
    other = next(t for t in (1, 2) if t != box.value)
    box.set_value(other)
    at.run()
    assert_clean(at)
    assert _space_axes(at) == ("f̄ of A", f"f̄ of {names[other]}")


def test_the_noise_slider_makes_a_share_of_labels_wrong_and_gives_them_back_at_zero():
    """Oracle: sblr.playground.with_label_noise on the clean board, and the clean board itself
    when the slider is back at 0 %; an edit afterwards starts from the noisy points."""
    from sblr.playground import with_label_noise

    board = preset("two blobs")
    at = _open({"pts": encode_board(board)})
    at.select_slider(key="pg_noise").set_value(20)
    at.run()
    assert_clean(at)
    noisy = decode_board(at.query_params["pts"])
    assert noisy == with_label_noise(board, 0.2, seed=0) and noisy != board
    at.select_slider(key="pg_noise").set_value(0)
    at.run()
    assert decode_board(at.query_params["pts"]) == board
    at.select_slider(key="pg_noise").set_value(30)
    at.run()
    at.number_input(key="pg_type_x").set_value(0.95)
    at.number_input(key="pg_type_y").set_value(-0.95)
    at.button(key="pg_type_go").click()
    at.run()
    assert at.select_slider(key="pg_noise").value == 0  # the noisy points are the new clean ones
    after = decode_board(at.query_params["pts"])
    assert len(after) == len(board) + 1
    assert (after.labels[: len(board)] == with_label_noise(board, 0.3, seed=0).labels).all()


@pytest.mark.parametrize(
    ("model", "takes_lam"), [("SparseSBLR", True), ("SBLR", False), ("SML", False)]
)
def test_the_lambda_slider_is_live_exactly_for_the_model_that_takes_lambda(model, takes_lam):
    """The page asks the model's traits (Spec.l1), not its name: λ is for SparseSBLR only.
    (A trait read from a Spec made without λ once said "no L1" for SparseSBLR too, and the
    slider went grey: found by the accessibility sweep.)"""
    at = _open({"pts": encode_board(preset("two blobs")), "pm": model})
    assert at.select_slider(key="pg_lam").disabled is (not takes_lam)


# ----------------------------------------------------------------------------- issue #46
def _plane(at):
    """What the page sent its plane to draw (pages/_shared/plane.py)."""
    import json

    (plane,) = at.get("bidi_component")
    return json.loads(plane.proto.json)


def test_region_of_follows_the_class_drawn_when_the_board_turns_multilabel():
    """Issue #46 item 1: a second class on a point made the plane show π of A while "Region
    of" still said "all classes". It now names the class placed, the plane's title with it,
    and "all classes" is gone (a multi-label board has no one most probable class)."""
    board = preset("two blobs")
    at = _open({"pts": encode_board(board)})
    assert at.selectbox(key="pg_show_k").value == "all classes"
    at.radio(key="pg_class").set_value(1)
    at.number_input(key="pg_type_x").set_value(float(board.points[0, 0]))
    at.number_input(key="pg_type_y").set_value(float(board.points[0, 1]))
    at.button(key="pg_type_go").click()
    at.run()
    assert_clean(at)
    assert decode_board(at.query_params["pts"]).multilabel  # oracle: the board itself
    box = at.selectbox(key="pg_show_k")
    assert box.value == "B" and "all classes" not in box.options
    assert "π of B" in _plane(at)["title"]


def test_the_page_explains_the_plane_the_held_out_points_the_cut_and_a_flat_model():
    """Issue #46 item 3. Oracles: the board's held-out points and the library's fitted cut."""
    from sblr.playground import decision_cut

    board = preset("C where A and B overlap")
    at = _open({"pts": encode_board(board), "pk": "C"})
    looking = texts(at.markdown)
    assert "A point" in looking and "colour of the plane" in looking and "dashed line" in looking
    cut = decision_cut(fit_board(board, "SparseSBLR", gamma=1.0, lam=1e-3), board, 2)
    assert f"dashed line at π = {cut:.2f}, not 0.5" in texts(at.caption)
    # a point placed where the fourth point falls is held out, and the page says so at once
    small = Board(board.points[:3], board.labels[:3])
    at = _open({"pts": encode_board(small)})
    at.number_input(key="pg_type_x").set_value(0.9)
    at.button(key="pg_type_go").click()
    at.run()
    assert "held out" in texts(at.toast)
    # the share control: every second point held out, in the address and the count
    at.select_slider(key="pg_test").set_value(2)
    at.run()
    assert_clean(at)
    assert at.query_params["ptest"] == "2"
    shown = decode_board(at.query_params["pts"]).with_holdout(2)
    assert f"({int(shown.held_out.sum())} held out, hollow)" in texts(at.caption)
    # every β at 0: said in words, and no dashed line promised
    at = _open({"pts": encode_board(preset("two blobs")), "pk": "A", "plam": "0"})
    assert fit_board(preset("two blobs"), "SparseSBLR", gamma=1.0, lam=1.0).coef_.any() == 0
    assert "ignores the points" in texts(at.info)
    assert "dashed" not in _plane(at)["title"]


def test_the_error_curve_against_lambda_and_a_preset_with_new_points():
    """Issue #46 item 3: the curve is the library's error at each λ of the slider; 🎲 draws
    the preset again with the next seed."""
    import json

    from sblr.playground import error_along_lambda

    board = preset("noisy labels")
    at = _open({"pts": encode_board(board), "ptab": "Error vs λ"})
    assert_clean(at)
    (curve,) = [c for c in at.get("plotly_chart") if "pg_curve" in c.proto.id]
    data = json.loads(curve.proto.spec)["data"]
    lams = [10.0**v for v in np.arange(-5.0, 0.01, 0.5)]
    want = error_along_lambda(board, "SparseSBLR", gamma=1.0, lams=lams)
    from plotly.io import from_json

    fig = from_json(json.dumps({"data": data}))
    np.testing.assert_allclose(fig.data[0].y, want["train"])
    at.button(key="pg_reseed").click()
    at.run()
    assert decode_board(at.query_params["pts"]) == preset("two blobs", seed=1)


def test_the_link_carries_the_whole_view_and_old_links_open_with_defaults():
    """Issue #46 item 4: the colouring (f̄ vs π), the class to place, the evidence-space
    partner and the open panel come back from the address; a link without them (before
    round 3) opens as it did."""
    board = preset("C where A and B overlap")
    query = {"pts": encode_board(board), "pm": "SBLR", "pk": "A", "pl": "evidence", "pc": "C"}
    at = _open({**query, "pt2": "C", "ptab": "Evidence"})
    assert_clean(at)
    assert at.radio(key="pg_layer").value == "evidence f̄ₖ"
    assert at.radio(key="pg_class").value == 2
    (box,) = [b for b in at.selectbox if b.label.startswith("Evidence space")]
    assert box.value == 2  # C, not the default partner
    assert "evidence f̄ of A" in _plane(at)["title"]
    for name, value in {**query, "pt2": "C", "ptab": "Evidence"}.items():
        assert at.query_params[name] == value, name
    old = _open({"pts": encode_board(board), "pm": "SBLR", "pk": "A"})
    assert old.radio(key="pg_layer").value == "πₖ" and old.radio(key="pg_class").value == 0


def test_use_these_points_keeps_the_playgrounds_model_gamma_and_lambda():
    """Issue #46 item 5: the pages the points go to show the Playground's model, γ and λ
    (it showed 3 of 9 β at 0; Coefficients then 0 of 9 at the sidebar's), and say where they
    came from."""
    from pages._shared.state import K_LOG_GAMMA, K_LOG_LAM, K_MODEL

    board = preset("C where A and B overlap")
    at = _open({"pts": encode_board(board), "pm": "SparseSBLR", "pgamma": "0.5", "plam": "-2"})
    at.button(key="pg_use").click()
    at.run()
    assert_clean(at)
    assert at.session_state[K_MODEL] == "SparseSBLR"
    assert at.session_state[K_LOG_GAMMA] == pytest.approx(0.5)
    assert at.session_state[K_LOG_LAM] == pytest.approx(-2.0)
    assert "from the Playground" in html.unescape(texts(at.sidebar.caption))


def _preview_of(plane, x, y, on_point):
    """What the canvas asks the route with at a click on ``plane`` (as the page sent it)."""
    basis = {k: v for k, v in plane["preview"].items() if k != "url"}
    return {**basis, "click": {"x": x, "y": y, "on_point": on_point}}


def _page_part(plane):
    return {k: v for k, v in plane.items() if k not in ("place", "seq", "preview")}


@pytest.mark.parametrize(
    "action, on_existing, settings",
    [("adds a point", False, False), ("adds a point", True, False),
     ("adds 20 around", False, False), ("removes a point", True, False),
     ("adds a point", False, True)],
    ids=["add", "second-class-on-a-point", "add-20", "remove", "noise-half-held-out-evidence-of-B"],
)  # fmt: skip
def test_the_plane_a_click_previews_is_the_plane_the_page_then_draws(action, on_existing, settings):
    """Issue #46 item 6: the canvas draws the route's answer (sblr.playground.click_preview,
    computed from what the page sent it) before the page's run. Oracle: the page's own run
    after the same click (through its widgets and session state), which must draw the same
    plane and send the same basis for the next click; a second class on a point turns the
    board multi-label and the plane to π of the class placed, in both. The preview is made
    afresh (not the view the page's run left in plane_view's cache)."""
    from sblr import playground as pg

    board = preset("two blobs")
    at = _open({"pts": encode_board(board), "pm": "SparseSBLR"})
    at.radio(key="pg_class").set_value(1)
    at.radio(key="pg_action").set_value(action)
    if settings:  # label noise on, every second point held out, the evidence of B
        at.select_slider(key="pg_noise").set_value(20)
        at.select_slider(key="pg_test").set_value(2)
        at.selectbox(key="pg_show_k").set_value("B")
        at.radio(key="pg_layer").set_value(pg.LAYERS["evidence"])
    at.run()
    x, y = board.points[0].tolist() if on_existing else (0.5, -0.25)
    asked = _preview_of(_plane(at), x, y, on_existing)
    if settings:
        assert asked["every"] == 2 and asked["knobs"][3:] == ["B", pg.LAYERS["evidence"]]
        assert decode_board(asked["board"]) != board  # the noisy board is the one sent
    at.number_input(key="pg_type_x").set_value(float(x))
    at.number_input(key="pg_type_y").set_value(float(y))
    at.button(key="pg_type_go").click()
    at.run()
    assert_clean(at)
    drawn = _plane(at)
    pg._VIEWS.clear()
    preview = click_preview(asked)
    assert preview["plane"] == _page_part(drawn)
    assert preview["basis"] == {k: v for k, v in drawn["preview"].items() if k != "url"}
    assert decode_board(preview["basis"]["board"]) == decode_board(at.query_params["pts"])
    if on_existing and action == "adds a point":
        assert "π of B" in preview["plane"]["title"]
    assert drawn["preview"]["url"] == "_sblr/plane"  # relative to the page (a proxy's prefix)
