"""The Playground's plane a click makes, asked of the dashboard's route before the page's run
(issue #46 item 6): :func:`sblr.playground.click_preview` checks every field a stranger can
send, and ``pages._shared.routes.plane`` bounds the request and answers a refusal as text.
(That the answer is the plane the page's run then draws: tests/test_playground_page.py; that
the canvas draws it in a real server and browser: tests/test_browser_playground.py.)"""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.requests import Request

from pages._shared import routes
from sblr.exceptions import DataError
from sblr.playground import (
    ALL,
    K_BOARD,
    LAYERS,
    PREVIEW_MAX_BYTES,
    Board,
    click_preview,
    decode_board,
    encode_board,
    preset,
    preview_basis,
)

KNOBS = ("SML", 0.0, -3.0, ALL, LAYERS["pi"], ())  # SML: no solver to load in a fast test


def _asked(**change):
    basis = preview_basis({K_BOARD: preset("XOR"), "pg_class": 1}, KNOBS)
    return {**basis, "click": {"x": 0.5, "y": -0.5, "on_point": False}, **change}


def test_a_click_preview_adds_the_point_of_the_class_placed_to_the_board_sent():
    """Oracle: the board sent with one point added by Board.add (the library's own edit)."""
    out = click_preview(_asked())
    expected = preset("XOR").add(0.5, -0.5, 1)
    assert decode_board(out["basis"]["board"]) == expected
    assert out["basis"]["knobs"] == list(KNOBS[:5]) and out["basis"]["place"] == 1
    assert len(out["plane"]["points"]) == len(expected)


def _knobs(i, value):
    knobs = list(KNOBS[:5])
    knobs[i] = value
    return knobs


@pytest.mark.parametrize(
    "request_, says",
    [
        ([], "not a JSON object"),
        ({"board": "AQIA_wI"}, "lacks every, knobs, place, action, click"),
        (_asked(knobs=["SML"]), "5 settings"),
        (_asked(knobs=_knobs(0, "SVM")), "model the page does not offer"),
        (_asked(knobs=_knobs(1, 0.3)), "γ the page does not offer"),
        (_asked(knobs=_knobs(1, True)), "γ the page does not offer"),
        (_asked(knobs=_knobs(2, "-3")), "λ the page does not offer"),
        (_asked(knobs=_knobs(3, "Z")), "class shown"),
        (_asked(knobs=_knobs(4, "<b>π</b>")), "colouring"),
        (_asked(place=True), "places a class"),
        (_asked(place=9), "places a class"),
        (_asked(every=7), "holds out a share"),
        (_asked(action="drop all"), "action the page does not offer"),
        (_asked(click={"x": 2.0, "y": 0.0}), "x is not a number from -1 to 1"),
        (_asked(click={"x": 0.0, "y": float("nan")}), "y is not a number from -1 to 1"),
        (_asked(click="here"), "no click"),
        (_asked(board="!!"), "base64url"),
        (_asked(board="A" * 10_000), "characters"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None,
)
def test_a_click_preview_refuses_every_field_the_page_would_not_send(request_, says):
    with pytest.raises(DataError, match=says):
        click_preview(request_)


def _post(body: bytes, *, declared: bool = True, chunk: int | None = None):
    """The route called as the server calls it (an ASGI request), without a network."""
    pieces = [body] if chunk is None else [body[i : i + chunk] for i in range(0, len(body), chunk)]
    pieces = pieces or [b""]

    async def receive():
        piece = pieces.pop(0)
        return {"type": "http.request", "body": piece, "more_body": bool(pieces)}

    headers = [(b"content-type", b"application/json")]
    if declared:
        headers.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "method": "POST", "path": routes.plane_url(), "headers": headers,
             "query_string": b""}  # fmt: skip
    response = asyncio.run(routes.plane(Request(scope, receive)))
    return response.status_code, response.body.decode("utf-8")


def test_the_route_answers_the_preview_as_json():
    asked = _asked()
    status, body = _post(json.dumps(asked).encode())
    assert status == 200
    assert json.loads(body) == json.loads(json.dumps(click_preview(asked)))


@pytest.mark.parametrize("declared, chunk", [(True, None), (False, 1024)], ids=["said", "sent"])
def test_the_route_refuses_a_request_over_its_bound_however_it_comes(declared, chunk):
    big = json.dumps(_asked(pad="x" * PREVIEW_MAX_BYTES)).encode()
    status, body = _post(big, declared=declared, chunk=chunk)
    assert status == 413 and f"{PREVIEW_MAX_BYTES:,} bytes" in body


def test_the_route_says_what_is_wrong_as_text():
    assert _post(b"{not json") == (400, "A click's request is not JSON.")
    status, body = _post(json.dumps(_asked(action="<script>")).encode())
    assert status == 400 and "action the page does not offer" in body


def test_the_route_answers_busy_when_its_slots_are_taken():
    """Never more than AT_ONCE previews computed at once: the canvas then waits for the
    page's run, as without the route."""
    for _ in range(routes.AT_ONCE):
        assert routes._SLOTS.acquire(blocking=False)
    try:
        status, _ = _post(json.dumps(_asked()).encode())
    finally:
        for _ in range(routes.AT_ONCE):
            routes._SLOTS.release()
    assert status == 503
    assert _post(json.dumps(_asked()).encode())[0] == 200


def test_an_empty_board_previews_the_first_point_and_its_note():
    basis = preview_basis({K_BOARD: Board.empty(2)}, KNOBS)
    out = click_preview({**basis, "click": {"x": 0.0, "y": 0.0, "on_point": False}})
    assert len(decode_board(out["basis"]["board"])) == 1
    assert out["plane"]["surface"] is None  # one class: no model, as the page says
    assert out["basis"]["board"] == encode_board(Board.empty(2).add(0.0, 0.0, 0))


def test_streamlit_run_finds_the_app_with_the_route_under_the_base_path(monkeypatch):
    """`streamlit run app.py` serves st.App (found in app.py without running it) with the
    plane's route; under a base path the route is there, and the page sends its address
    relative to its own (tests/test_browser_playground.py asks it through a real server)."""
    from pathlib import Path

    from streamlit import config
    from streamlit.web.server.app_discovery import discover_asgi_app

    from pages._shared.plane import PLANE_PATH

    found = discover_asgi_app(Path(__file__).resolve().parents[1] / "app.py")
    assert found.is_asgi_app and found.app_name == "app"
    assert [r.path for r in routes.routes()] == ["/_sblr/plane"]
    base = {"server.baseUrlPath": "/class/a/"}
    monkeypatch.setattr(config, "get_option", base.get)
    assert [r.path for r in routes.routes()] == ["/class/a/_sblr/plane"] == [routes.plane_url()]
    assert PLANE_PATH == "_sblr/plane"  # resolved against /class/a/playground in the browser
