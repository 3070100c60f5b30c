"""The dashboard's own address on its server, beside Streamlit's: the Playground's plane a
click makes, drawn by the canvas before the page's run (``app.py`` serves it as ``st.App``'s
route; :func:`sblr.playground.click_preview` computes it).

Why: a run of the page, however small, is 3-5 renders of Streamlit's frontend (issue #46
item 6: p95 ~400 ms from a click to the plane redrawn, measured with ``python -m
benchmarks.playground --browser``); the canvas asks here first, draws the answer, and then
asks for the page's run, which draws the same view (kept by :func:`sblr.playground.plane_view`).
A request is a stranger's data: bounded in size, every field checked, a refusal a 4xx with
the reason as text; at most :data:`AT_ONCE` computed at a time (else 503: the canvas then
waits for the page's run, as it would without this address). Not in the job slots of
:mod:`pages._shared.server` (a preview is one small fit, ≤ 400 points); the view it makes is
kept in :func:`sblr.playground.plane_view`'s cache of 16 like a page's.
"""

from __future__ import annotations

import json
import threading

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from streamlit import config

from sblr import playground as pg
from sblr.exceptions import DataError

#: The plane's address, under the server's base path (the canvas asks it relative to its
#: page's address, so a proxy's prefix is kept).
PLANE_PATH = "_sblr/plane"
#: Previews computed at once (the machine's cores are the page runs' too).
AT_ONCE = 2
_SLOTS = threading.BoundedSemaphore(AT_ONCE)


def plane_url() -> str:
    """The plane's address as the page's canvas asks it (the server's base path first)."""
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return "/" + "/".join(part for part in (base, PLANE_PATH) if part)


def _refuse(status: int, why: str) -> PlainTextResponse:
    return PlainTextResponse(why, status_code=status)


async def plane(request: Request):
    """POST a JSON object (:func:`sblr.playground.click_preview`'s request): the plane as
    JSON, or a refusal as text."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > pg.PREVIEW_MAX_BYTES:
        return _refuse(413, f"A click's request is at most {pg.PREVIEW_MAX_BYTES:,} bytes.")
    body = bytearray()
    async for chunk in request.stream():  # read no more than the bound, whatever was declared
        body += chunk
        if len(body) > pg.PREVIEW_MAX_BYTES:
            return _refuse(413, f"A click's request is at most {pg.PREVIEW_MAX_BYTES:,} bytes.")
    try:
        asked = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # (nested past Python's stack)
        return _refuse(400, "A click's request is not JSON.")
    if not _SLOTS.acquire(blocking=False):
        return _refuse(503, "Busy: the page's own run draws this click.")
    try:
        answer = await run_in_threadpool(pg.click_preview, asked)
    except DataError as exc:
        return _refuse(400, str(exc))
    finally:
        _SLOTS.release()
    return JSONResponse(answer, headers={"Cache-Control": "no-store"})


def routes() -> list[Route]:
    """The routes ``app.py`` gives ``st.App``."""
    return [Route(plane_url(), plane, methods=["POST"])]
