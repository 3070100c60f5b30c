"""Rerun time of a page's own controls: what ``st.fragment`` could save.

A fragment reruns only part of a page when a control inside it moves.  The sidebar's γ and
λ change every figure of a page (no fragment helps there); the candidates are the controls
that change one part: the decision threshold on Model & metrics and the row on Explain a
prediction.  This script times ``AppTest.run()`` (the whole script run, server side) after
each such move on the planted sample, the caches warm from the first visit: the most a
fragment could save per move.

Run from the repo root (with sblr importable: `pip install -e .` in the repository)::

    python -m benchmarks.local_controls
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parent.parent / "app.py"


def _page(path: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=300)
    at.run()
    at.switch_page(path)
    at.run()
    return at


def _timed(at: AppTest) -> float:
    t0 = time.perf_counter()
    at.run()
    return time.perf_counter() - t0


#: (page title, script, widget kind, widget key, values it is moved to)
CONTROLS = (
    ("Model & metrics", "pages/model.py", "slider", "threshold", (0.3, 0.4, 0.6, 0.7, 0.5)),
    ("Explain a prediction", "pages/explain.py", "number_input", "explain_row", (1, 2, 3, 4, 5)),
)


def main():
    rows = []
    for page, script, kind, key, values in CONTROLS:
        at = _page(script)
        times = []
        for value in values:
            getattr(at, kind)(key=key).set_value(value)
            times.append(_timed(at))
        rows.append((page, key, times))
    print(f"{'page':22s} {'control':12s} {'n':>2s} {'median s':>9s} {'max s':>7s}")
    for page, control, times in rows:
        print(
            f"{page:22s} {control:12s} {len(times):2d} {statistics.median(times):9.3f} "
            f"{max(times):7.3f}"
        )


if __name__ == "__main__":
    main()
