"""Redraw time of the Playground page (issue #36: ≤ 0.3 s p95 with up to 300 points and a
60 × 60 grid), through the app's own code path.

Drives ``app.py`` and ``pages/playground.py`` with :class:`streamlit.testing.v1.AppTest` (the
whole server-side script run: the fit, the grid, the figures and their serialisation; no
browser) on boards of 300 points, multi-class and multi-label, and times ``AppTest.run()``
after each change a user makes: a point placed (the board in the session changed, as a click
does), λ moved, γ moved, the model switched. Prints p50 and p95 per change and the size of
the plane's figure as sent.

Run from the repo root (with sblr importable: `pip install -e .` in the repository)::

    python -m benchmarks.playground [--repeats 20]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from benchmarks.dashboard_latency import _navigation_mode, _one_script_cache

ROOT = Path(__file__).resolve().parents[1]


def _board(kind: str):
    from sblr.playground import Board, preset

    if kind == "multi-label":
        base = preset("C where A and B overlap")
    else:
        base = preset("XOR")
    rng = np.random.default_rng(0)
    board = base
    while len(board) < 300:
        x, y = rng.uniform(-0.9, 0.9, 2)
        k = int(rng.integers(0, board.n_classes))
        board = board.add_cluster(x, y, k, n=min(20, 300 - len(board)), seed=len(board))
    return Board(board.points[:300], board.labels[:300])


CHANGES = ("place a point", "move λ", "move γ", "switch model")
LAMS = [-4.0, -3.5, -3.0, -2.5, -2.0]
GAMMAS = [0.0, 0.25, 0.5, 0.75, 1.0]
MODELS = ["SBLR", "SparseSBLR"]


def _change(at, name, i, rng):
    """One change a user makes, the ``i``-th of its kind (each to a new value)."""
    if name == "place a point":  # as a click does: the session's board changes
        board = at.session_state["_pg_board"]
        at.session_state["_pg_board"] = board.remove(0).add(*rng.uniform(-1, 1, 2), i % 2)
    elif name == "move λ":
        at.select_slider(key="pg_lam").set_value(LAMS[i % len(LAMS)])
    elif name == "move γ":
        at.select_slider(key="pg_gamma").set_value(GAMMAS[i % len(GAMMAS)])
    else:
        at.selectbox(key="pg_model").set_value(MODELS[i % len(MODELS)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    from sblr.playground import encode_board

    _navigation_mode()
    _one_script_cache()

    print(f"{'board':<12} {'change':<14} {'p50 ms':>8} {'p95 ms':>8}  (budget 300 ms p95)")
    worst = 0.0
    for kind in ("multi-class", "multi-label"):
        board = _board(kind)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.query_params["pts"] = encode_board(board)
        at.run()
        at.switch_page("pages/playground.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        rng = np.random.default_rng(1)
        for name in CHANGES:
            times = []
            for i in range(args.repeats):
                _change(at, name, i, rng)
                t0 = time.perf_counter()
                at.run()
                times.append(time.perf_counter() - t0)
                assert not at.exception, [e.value for e in at.exception]
            p50, p95 = np.percentile(times, [50, 95]) * 1000
            worst = max(worst, p95)
            print(f"{kind:<12} {name:<14} {p50:8.0f} {p95:8.0f}")
        plane = [c for c in at.get("plotly_chart") if "pg_plane_" in c.proto.id][0]
        size = len(plane.proto.spec.encode())
        traces = [t["type"] for t in json.loads(plane.proto.spec)["data"]]
        print(f"{kind:<12} plane figure: {size / 1024:.0f} kB as sent, traces {traces}")
    print(f"worst p95: {worst:.0f} ms = {worst / 300:.2f} × the 300 ms budget")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
