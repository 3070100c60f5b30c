"""The playground's board (sblr.playground): its link text, its presets, and what is drawn.
Oracles: the fitted model's own predict_proba at the grid's points, the link text decoded by
hand, the CSV read back by the loader."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from sblr.exceptions import DataError
from sblr.io import load_dataset
from sblr.playground import (
    MAX_ENCODED,
    MAX_POINTS,
    PRESETS,
    Board,
    board_csv,
    board_scores,
    decode_board,
    encode_board,
    fit_board,
    preset,
    surface,
)


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_travels_through_its_link_text_unchanged(name):
    board = preset(name)
    text = encode_board(board)
    assert len(text) <= MAX_ENCODED and decode_board(text) == board
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))  # by hand: 3 bytes a point
    assert raw[:2] == bytes([1, board.n_classes]) and len(raw) == 2 + 3 * len(board)


@pytest.mark.parametrize(
    "text, says",
    [
        ("A" * (MAX_ENCODED + 1), "at most"),
        ("AQI*", "base64url"),
        ("", "base64url"),
        (base64.urlsafe_b64encode(bytes([2, 2, 0, 0, 1])).decode(), "another version"),
        (base64.urlsafe_b64encode(bytes([1, 9, 0, 0, 1])).decode(), "9 classes"),
        (base64.urlsafe_b64encode(bytes([1, 2, 0, 0])).decode(), "cut short"),
        (base64.urlsafe_b64encode(bytes([1, 2, 0, 0, 0])).decode(), "no class"),
        (base64.urlsafe_b64encode(bytes([1, 2, 0, 0, 4])).decode(), "no class"),
        (None, "not text"),
    ],
)
def test_a_broken_or_oversized_link_is_a_clear_data_error(text, says):
    with pytest.raises(DataError, match=says):
        decode_board(text)


def test_a_board_checks_itself():
    with pytest.raises(DataError, match="at least one class"):
        Board([[0.0, 0.0]], [[False, False]])
    with pytest.raises(DataError, match="finite"):
        Board([[np.nan, 0.0]], [[True, False]])
    with pytest.raises(DataError, match=f"at most {MAX_POINTS}"):
        Board(np.zeros((MAX_POINTS + 1, 2)), np.ones((MAX_POINTS + 1, 1), dtype=bool))
    full = preset("two blobs")
    assert len(full.add_cluster(0, 0, 0, n=10_000)) == MAX_POINTS  # bounded, not refused


def test_a_second_class_on_a_point_makes_the_board_multilabel_and_removal_undoes_it():
    board = Board.empty(3).add(0.5, 0.5, 0).add(-0.5, -0.5, 1)
    assert not board.multilabel and len(board) == 2
    board = board.add(0.5, 0.5, 2)  # the same spot: class C added to the point
    assert len(board) == 2 and board.multilabel
    assert board.labels[0].tolist() == [True, False, True]
    assert not board.remove(0).multilabel
    assert board.with_classes(2).labels.tolist() == [[True, False], [False, True]]
    # a click of a class the point has takes it off; of its only class, the point goes
    assert board.add(0.5, 0.5, 2).labels[0].tolist() == [True, False, False]
    assert len(board.add(0.5, 0.5, 2).add(0.5, 0.5, 0)) == 1


@pytest.mark.parametrize("name, k", [("C where A and B overlap", 2), ("XOR", 1), ("rings", 0)])
@pytest.mark.parametrize("model", ["SML", "SBLR", "SparseSBLR"])
def test_the_region_drawn_at_a_grid_point_is_the_models_probability_there(name, k, model):
    board = preset(name)
    fitted = fit_board(board, model, gamma=2.0, lam=1e-3)
    xs, Z = surface(fitted, board, k, n=7)
    i, j = 2, 5  # the point (x1, x2) = (xs[5], xs[2])
    proba = np.asarray(fitted.predict_proba(np.array([[xs[j], xs[i]]])))
    column = k if board.multilabel else list(fitted.classes_).index(k)
    assert Z[i, j] == pytest.approx(proba[0, column], abs=1e-12)
    if not board.multilabel:  # the map of all classes: the most probable one
        _, M = surface(fitted, board, None, n=7)
        assert M[i, j] == fitted.classes_[int(np.argmax(proba[0]))]


def test_the_held_out_points_measure_the_test_error():
    board = preset("noisy labels")
    fitted = fit_board(board, "SBLR", gamma=1.0)
    held = board.held_out
    assert held.sum() == len(board) // 4 and not held[:3].any() and held[3]
    scores = board_scores(fitted, board)
    truth = np.argmax(board.labels[held], axis=1)
    assert scores["test"]["error"] == pytest.approx(
        float((fitted.predict(board.points[held]) != truth).mean())
    )
    assert scores["test"]["points"] == int(held.sum())


def test_too_few_points_or_classes_say_what_to_place():
    with pytest.raises(DataError, match="at least two classes"):
        fit_board(Board.empty(2).add(0, 0, 0).add(0.5, 0.5, 0), "SBLR")


@pytest.mark.parametrize("name", ["two blobs", "C where A and B overlap"])
def test_the_downloaded_csv_loads_back_as_the_same_points_and_classes(name):
    board = preset(name)
    data = board_csv(board)
    names = ["A", "B", "C"][: board.n_classes]
    target = names if board.multilabel else "class"
    ds = load_dataset(data, name="playground.csv", target=target)
    np.testing.assert_allclose(ds.X, board.points, atol=1e-6)
    if board.multilabel:
        assert ds.label_matrix().tolist() == board.labels.astype(int).tolist()
    else:
        assert list(ds.y) == [names[c] for c in np.argmax(board.labels, axis=1)]


def test_beta_and_evidence_come_in_the_boards_class_order_with_a_class_the_model_lacks():
    """A class whose only point is held out is unknown to the model: its β row and column and
    its evidence are 0, the others are the model's own, in the board's order. Oracle: the
    fitted model's coef_ and its leave-one-out training evidence."""
    from sblr.playground import board_beta, board_evidence

    base = preset("two blobs").with_classes(3)
    pts = np.vstack([base.points[:3], [[0.0, 0.9]], base.points[3:]])
    labels = np.vstack([base.labels[:3], [[False, False, True]], base.labels[3:]])
    board = Board(pts, labels)  # the C point sits at position 3: held out
    assert board.held_out[3] and not board.multilabel
    model = fit_board(board, "SBLR", gamma=1.0)
    assert list(model.classes_) == [0, 1]
    B = board_beta(model, board)
    np.testing.assert_array_equal(B[:2, :2], model.coef_)
    assert not B[2].any() and not B[:, 2].any()
    F = board_evidence(model, board)
    np.testing.assert_allclose(F[~board.held_out, :2], model.featurizer_.training_evidence())
    assert not F[:, 2].any()


def test_the_evidence_space_pairs_a_class_with_the_class_that_moves_it_most():
    """Planted: A's points sit at (-0.6, 0), C's right beside them at (-0.4, 0), B's far away at
    (0.8, 0). SML (no β): at A's points C's evidence is the larger, so A is shown against C.
    SBLR: the other class with the largest |β[k, t]|, read from a β set by hand (a negative
    weight counts by its size)."""
    from sblr.playground import evidence_pair

    rng = np.random.default_rng(0)
    pts, labels = [], []
    for c, centre in enumerate(([-0.6, 0.0], [0.8, 0.0], [-0.4, 0.0])):
        pts.append(np.asarray(centre) + rng.normal(0.0, 0.03, size=(12, 2)))
        labels.append(np.eye(3, dtype=bool)[[c] * 12])
    board = Board(np.vstack(pts), np.vstack(labels))
    assert evidence_pair(fit_board(board, "SML", gamma=1.0), board, 0) == (0, 2)
    assert evidence_pair(fit_board(board, "SML", gamma=1.0), board, 1)[0] == 1
    model = fit_board(board, "SBLR", gamma=1.0)
    model.coef_ = np.array([[1.0, 0.2, -3.0], [0.0, 1.0, 0.5], [-0.1, 4.0, 1.0]])
    assert evidence_pair(model, board, 0) == (0, 2)  # |-3| > |0.2|
    assert evidence_pair(model, board, 1) == (1, 2)
    assert evidence_pair(model, board, 2) == (2, 1)
    assert evidence_pair(model, board, None) == (0, 1)
    with pytest.raises(DataError, match="not one of"):
        evidence_pair(model, board, 5)


def test_label_noise_moves_a_share_of_points_to_another_class_or_flips_labels():
    """Multi-class: about the share of points get another class (never their own), the board
    stays multi-class; multi-label: about the share of (point, class) bits flip. Oracle:
    counts against the binomial's spread."""
    from sblr.playground import with_label_noise

    board = preset("two blobs").with_classes(3)
    big = board
    while len(big) < 390:
        big = big.add_cluster(0.0, 0.0, len(big) % 3, n=20, seed=len(big))
    noisy = with_label_noise(big, 0.3, seed=4)
    assert not noisy.multilabel and (noisy.labels.sum(axis=1) == 1).all()
    moved = (noisy.labels != big.labels).any(axis=1)
    sd = np.sqrt(len(big) * 0.3 * 0.7)
    assert abs(moved.sum() - 0.3 * len(big)) < 4 * sd
    assert (np.argmax(noisy.labels[moved], axis=1) != np.argmax(big.labels[moved], axis=1)).all()
    assert with_label_noise(big, 0.0) == big
    multi = preset("C where A and B overlap")
    flipped = with_label_noise(multi, 0.2, seed=3)
    bits = int((flipped.labels != multi.labels).sum())
    sd = np.sqrt(multi.labels.size * 0.2 * 0.8)
    assert abs(bits - 0.2 * multi.labels.size) < 4 * sd + (~flipped.labels.any(axis=1)).sum()


# ----------------------------------------------------------------------------- issue #46
def _drawn_at(fig, x, y):
    """The marker colours drawn at (x, y) by the point traces, and whether hollow."""
    found = []
    for t in fig.data:
        if t.type != "scatter" or t.name == "cells":
            continue
        at = (np.asarray(t.x) == x) & (np.asarray(t.y) == y)
        if at.any():
            found.append((t.marker.color, t.marker.symbol == "circle-open"))
    return found


def test_every_class_of_a_point_is_drawn_and_held_out_points_hollow():
    """Issue #46 item 1: in the overlap preset the A + B + C points showed A and B only. Each
    point now shows one marker per class, in its class's colour (oracle: the board's labels
    and the palette), hollow exactly when held out; one legend line per combination."""
    from sblr.plots import class_colors
    from sblr.plots.playground import playground_plane

    board = preset("C where A and B overlap")
    fig = playground_plane(board.points, board.labels, board.held_out, ["A", "B", "C"])
    palette = class_colors(6)
    assert (board.labels.sum(axis=1) == 3).any()
    for i in range(len(board)):
        drawn = _drawn_at(fig, *board.points[i])
        # other points on the same spot would add theirs: compare against every such point
        same = (board.points == board.points[i]).all(axis=1)
        want = {(palette[c], bool(board.held_out[j])) for j in np.flatnonzero(same)
                for c in np.flatnonzero(board.labels[j])}  # fmt: skip
        assert set(drawn) == want, i
    combos = {" + ".join("ABC"[c] for c in np.flatnonzero(r)) for r in board.labels}
    assert {t.name for t in fig.data if t.showlegend} == combos
    # the page's drawing (the canvas) gets the same from plane_payload: every point with its
    # combination of classes (each a ring of its colour) and held out or not
    from sblr.plots.playground import plane_payload

    out = plane_payload(board.points, board.labels, board.held_out, ["A", "B", "C"])
    assert [[x, y] for x, y, _, _ in out["points"]] == board.points.tolist()
    classes = [out["combos"][c]["classes"] for _, _, c, _ in out["points"]]
    assert classes == [np.flatnonzero(r).tolist() for r in board.labels]
    assert [bool(h) for *_, h in out["points"]] == board.held_out.tolist()
    assert {c["name"] for c in out["combos"]} == combos  # a legend line each
    assert out["colours"] == palette


def test_the_dashed_cut_passes_through_every_crossing_of_the_grid_and_only_those():
    """The cut line drawn by the page (sblr.plots.playground.cut_lines). Oracle: the places
    where the surface crosses the level along each edge of the grid, found edge by edge by
    linear interpolation, and the lines' pieces each lying within one cell."""
    from sblr.plots.playground import cut_lines

    xs = np.linspace(-1.0, 1.0, 25)
    gx, gy = np.meshgrid(xs, xs)
    Z = np.exp(-((gx - 0.3) ** 2 + gy**2) / 0.1) + np.exp(-((gx + 0.4) ** 2 + gy**2) / 0.1)
    level = 0.8  # above the saddle between the bumps (0.59)
    want = set()
    for i in range(25):
        for j in range(25):
            for di, dj in ((0, 1), (1, 0)):
                if i + di < 25 and j + dj < 25 and (Z[i, j] > level) != (Z[i + di, j + dj] > level):
                    t = (level - Z[i, j]) / (Z[i + di, j + dj] - Z[i, j])
                    x = xs[j] + t * (xs[j + dj] - xs[j])
                    y = xs[i] + t * (xs[i + di] - xs[i])
                    want.add((round(x, 9), round(y, 9)))
    lines = cut_lines(xs, Z, level)
    assert len(lines) == 2  # two bumps: two closed lines
    got = {(round(x, 9), round(y, 9)) for line in lines for x, y in line}
    assert got == want
    for line in lines:
        assert np.allclose(line[0], line[-1])  # closed
        step = np.abs(np.diff(line, axis=0)).max(axis=1)
        assert (step <= xs[1] - xs[0] + 1e-12).all()  # each piece within one cell


def test_the_held_out_share_is_every_nth_point_and_survives_edits():
    board = preset("two blobs").with_holdout(3)
    assert np.flatnonzero(board.held_out)[:3].tolist() == [2, 5, 8]
    assert board.add(0.9, -0.9, 1).every == 3 and board.remove(0).every == 3
    assert not Board.empty(2).with_holdout(0).add(0, 0, 0).add(0.5, 0.5, 1).held_out.any()
    assert decode_board(encode_board(board)).every == 4  # the link carries it beside pts
    with pytest.raises(DataError, match="held out"):
        board.with_holdout(7)


def test_multilabel_scores_match_scikit_learn():
    from sklearn.metrics import f1_score

    board = preset("C where A and B overlap")
    fitted = fit_board(board, "SBLR", gamma=1.0)
    scores = board_scores(fitted, board)
    held = board.held_out
    for part, rows in (("train", ~held), ("test", held)):
        pred = fitted.predict(board.points[rows])
        truth = board.labels[rows].astype(int)
        assert scores[part]["micro_f1"] == pytest.approx(
            f1_score(truth, pred, average="micro", zero_division=0)
        )
        assert scores[part]["error"] == pytest.approx(float((pred != truth).mean()))


def test_the_dashed_line_is_where_the_model_decides():
    """The cut drawn for class k splits the plane where the model's own predict does
    (oracle: predict against predict_proba at grid points); π the same everywhere when every
    β is 0, and the title says so instead of promising a dashed line."""
    from sblr.playground import decision_cut, ignores_points, plane_title

    board = preset("C where A and B overlap")
    fitted = fit_board(board, "SparseSBLR", gamma=1.0, lam=1e-3)
    xs, Z = surface(fitted, board, 2, n=9)
    gx, gy = np.meshgrid(xs, xs)
    given = np.asarray(fitted.predict(np.c_[gx.ravel(), gy.ravel()]))[:, 2].reshape(Z.shape)
    cut = decision_cut(fitted, board, 2)
    assert cut != 0.5 and np.array_equal(given == 1, Z >= cut)
    flat = fit_board(board, "SparseSBLR", gamma=1.0, lam=1.0)
    assert ignores_points(flat) and not ignores_points(fitted)
    assert np.ptp(surface(flat, board, 2, n=5)[1]) < 1e-12
    assert "dashed" not in plane_title("SparseSBLR", 2, "proba", cut=cut, flat=True)


def test_the_error_curve_is_the_error_of_the_model_fitted_at_each_lambda():
    from sblr.playground import error_along_lambda

    board = preset("noisy labels")
    lams = [1e-4, 1e-1]
    curve = error_along_lambda(board, "SparseSBLR", gamma=1.0, lams=lams)
    for i, lam in enumerate(lams):
        scores = board_scores(fit_board(board, "SparseSBLR", gamma=1.0, lam=lam), board)
        assert curve["train"][i] == pytest.approx(scores["train"]["error"])
        assert curve["test"][i] == pytest.approx(scores["test"]["error"])


def test_a_preset_with_another_seed_is_new_points_of_the_same_kind():
    one, two = preset("XOR", seed=0), preset("XOR", seed=1)
    assert one != two and len(one) == len(two)
    assert (one.labels.sum(axis=0) == two.labels.sum(axis=0)).all()


# ----------------------------------------------------------------------------- the page's view
# (sblr.playground.plane_view and the state transitions pages/playground.py calls: no Streamlit)


@pytest.mark.slow  # fits
def test_the_view_of_a_board_is_the_libraries_fit_its_surface_cut_and_scores():
    """Oracles: fit_board, surface, decision_cut and board_scores on the same board."""
    from sblr.playground import board_beta, decision_cut, plane_view

    board = preset("C where A and B overlap")
    view = plane_view(board, "SparseSBLR", 0.0, -3.0, "C")
    fitted = fit_board(board, "SparseSBLR", gamma=1.0, lam=1e-3)
    cut = decision_cut(fitted, board, 2)
    assert view.k == 2 and view.problem is None and not view.flat
    assert view.cut == pytest.approx(cut) and f"π = {cut:.2f}" in view.title
    xs, Z = surface(fitted, board, 2, n=60)
    (heat,) = [t for t in view.figure.data if t.type == "heatmap"]
    assert np.allclose(heat.z, Z)
    drawn = view.plane["surface"]  # what the page draws: π of C, to three decimals
    assert drawn["mode"] == "proba" and drawn["k"] == 2 and drawn["n"] == 60
    assert np.allclose(np.reshape(drawn["z"], (60, 60)), Z, atol=5e-4)
    # the dashed line: at π = cut between its grid neighbours (linear on each grid edge)
    assert view.plane["cut"]
    for line in view.plane["cut"]:
        for x, y in np.reshape(line, (-1, 2)):
            i, j = np.abs(xs - y).argmin(), np.abs(xs - x).argmin()
            near = Z[max(i - 1, 0) : i + 2, max(j - 1, 0) : j + 2]
            assert near.min() <= cut + 1e-4 and near.max() >= cut - 1e-4
    metrics, note = view.scores()
    expected = board_scores(fitted, board)
    assert [m["value"] for m in metrics] == [f"{expected[p]['error']:.1%}" for p in expected]
    assert f"dashed line at π = {cut:.2f}" in note  # multi-label: the fitted cut explained
    fig, caption = view.beta()
    zeros = int((board_beta(fitted, board) == 0).sum())
    assert f"{zeros} of 9 exactly 0" in caption and fig is not None
    assert view.caption.startswith(f"{len(board)} points ({int(board.held_out.sum())} held out")
    t1, t2, others = view.evidence_pair()
    assert t1 == 2 and t2 in others and 2 not in others


@pytest.mark.slow  # fits
def test_the_view_says_why_there_is_no_model_and_when_beta_is_all_zero():
    from sblr.playground import plane_view

    empty = plane_view(Board.empty(2), "SBLR", 0.0, -3.0)
    assert empty.model is None and "two classes" in empty.problem
    assert [t.name for t in empty.figure.data] == ["cells"]  # still a plane to click on
    assert empty.plane["surface"] is None and empty.plane["points"] == []
    assert empty.plane["cells"] > 1  # a click places at a cell's centre
    flat = plane_view(preset("two blobs"), "SparseSBLR", 0.0, 0.0, "A")
    assert flat.flat and "ignores the points" in flat.flat_note and "dashed" not in flat.title
    sml = plane_view(preset("two blobs"), "SML", 0.0, -3.0)
    assert sml.beta() == (None, "SML decides from the evidence alone: it has no β.")
    assert not sml.takes_lam and sml.error_curve()[0].endswith("the curve is SparseSBLR's.")


@pytest.mark.slow  # fits
def test_a_link_read_into_the_page_state_is_written_back_unchanged():
    from sblr.playground import K_BOARD, link_params, plane_view, region_options, state_from_link

    link = {"pts": encode_board(preset("XOR")), "pm": "SBLR", "pgamma": "0.5", "plam": "-2",
            "pk": "B", "pl": "evidence", "pc": "B", "ptab": "β", "ptest": "3"}  # fmt: skip
    state = state_from_link(link)
    region_options(state, state[K_BOARD])
    view = plane_view(state[K_BOARD], state["pg_model"], state["pg_gamma"], state["pg_lam"],
                      state["pg_show_k"], state["pg_layer"])  # fmt: skip
    assert view.k == 1 and view.what == "evidence" and view.gamma == pytest.approx(10**0.5)
    assert {k: v for k, v in link_params(state, view, None).items() if v is not None} == link
    # a broken link: an empty board, the note, and the default board on offer
    broken = state_from_link({"pts": "AQI*"})
    assert len(broken[K_BOARD]) == 0 and broken["_pg_offer"] and "could not" in broken["_pg_note"]


def test_the_preset_box_names_the_links_board_not_the_default_preset():
    """Found on a board opened from a link: the preset box read "two blobs" beside the link's
    300 multi-label points. Oracle: the link's own points and the presets' names."""
    from sblr.playground import (
        DEFAULT_PRESET,
        FROM_LINK,
        K_BOARD,
        new_points,
        preset_options,
        state_from_link,
    )

    rings = preset("rings")
    state = state_from_link({"pts": encode_board(rings)})
    assert state["pg_preset"] == FROM_LINK and preset_options(state)[-1] == FROM_LINK
    assert np.array_equal(state[K_BOARD].points, rings.points)
    new_points(state)  # the dice on the link's board: the default preset's new points
    assert state["pg_preset"] == DEFAULT_PRESET and FROM_LINK not in preset_options(state)
    assert len(state[K_BOARD]) == len(preset(DEFAULT_PRESET, seed=1))
    for plain in ({}, {"pts": "AQI*"}):  # no board, or one that could not be read: no entry
        assert state_from_link(plain).get("pg_preset") is None
        assert preset_options(state_from_link(plain)) == list(PRESETS)


def test_a_click_a_class_on_a_point_undo_and_the_noise_slider_change_the_state():
    """What the page's callbacks do, on a plain dict (the session state's stand-in)."""
    from sblr.playground import K_BOARD, PLANE_KEY, click_count, clicked, noise_changed, undo

    three = Board([[0.5, 0.5], [-0.5, -0.5], [0.0, 0.5]], np.eye(2, dtype=bool)[[0, 1, 0]])
    state = {K_BOARD: three, "pg_class": 1}
    assert clicked(state) is None and click_count(state) == 0  # no click yet
    state[PLANE_KEY] = {"click": {"x": 0.9, "y": -0.9, "on_point": False}}
    assert "held out" in clicked(state)  # the fourth point: held out, said at the click
    assert len(state[K_BOARD]) == 4 and state[K_BOARD].held_out[-1]
    assert click_count(state) == 1  # the drawing's cue to redraw (and clear the click's mark)
    state[PLANE_KEY] = {"click": {"x": 0.5, "y": 0.5, "on_point": True}}
    clicked(state)  # class B given to the point of A: multi-label, the plane shows B's π
    assert state[K_BOARD].labels[0].tolist() == [True, True] and state["pg_show_k"] == "B"
    undo(state)
    assert state[K_BOARD].labels[0].tolist() == [True, False] and len(state[K_BOARD]) == 4
    clean = state[K_BOARD]
    state["pg_noise"] = 40
    noise_changed(state)
    assert state[K_BOARD] != clean
    state["pg_noise"] = 0
    noise_changed(state)
    assert state[K_BOARD] == clean


def test_the_playground_page_only_draws():
    """Issue #45: the page is a thin drawing script: no figure built, no model fitted in it
    (sblr.playground.plane_view does both), about 200 lines."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "pages" / "playground.py").read_text()
    for banned in ("go.Figure", "plotly.graph_objects", ".fit(", "import plotly"):
        assert banned not in page, banned
    assert len(page.splitlines()) <= 210
