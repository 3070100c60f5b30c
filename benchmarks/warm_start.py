"""A class's first clicks on a server just started: with and without the lesson's warm start.

Issue #38 item 5: a fresh student session's first "Show me" took 34.5 s and an Explain link
38.8 s, fitted in front of the class. The server now fits what the lesson shows in the
background after its first run (``pages._shared.lesson.warm_lesson``). This script starts a
fresh Python process per mode (nothing imported, nothing cached; SparseSBLR's compiled solver
loaded from numba's disk cache, as on a server restarted on a machine that ran it before),
drives ``app.py`` with :class:`streamlit.testing.v1.AppTest` as a server does, and times:

* the teacher's first run of the home page (it starts the warm start);
* then, after ``--wait`` seconds (the teacher setting up; the warm start runs meanwhile), one
  fresh student session per lesson step opening the step's link and clicking "Show me"
  (the step's page with its panel), and one opening an Explain link of step 7's view.

Budget: 3 s for each of those on an idle machine. Run from the repo root (sblr importable:
`pip install -e .` in the repository)::

    python -m benchmarks.warm_start [--wait 30]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET = 3.0


def _measure(wait: float) -> dict:
    """In this (fresh) process: the times of the teacher's first run and the students'."""
    from streamlit.testing.v1 import AppTest

    from benchmarks.dashboard_latency import _navigation_mode, _one_script_cache
    from pages._shared.lesson import STEPS

    _navigation_mode()
    _one_script_cache()

    def session(query):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        for name, value in query.items():
            at.query_params[name] = value
        return at

    times = {}
    t0 = time.perf_counter()
    session({}).run()
    times["teacher: home page"] = time.perf_counter() - t0
    time.sleep(wait)
    for step in range(1, len(STEPS) + 1):
        at = session({"step": str(step)})
        at.run()
        at.switch_page("pages/lesson.py")
        at.run()
        t0 = time.perf_counter()
        at.button(key="lesson_show").click()
        at.run()
        at.switch_page(STEPS[step - 1]["page"])
        at.run()
        times[f"student: step {step} Show me"] = time.perf_counter() - t0
        assert not at.exception, [e.value for e in at.exception]
    view = STEPS[-1]["view"]
    at = session(
        {
            "sample": "planted",
            "model": view["model"],
            "gamma": str(view["gamma"]),
            "lam": f"{view['lam']:.4g}",
            "k": str(view["k"]),
        }
    )
    t0 = time.perf_counter()
    at.run()
    at.switch_page("pages/explain.py")
    at.run()
    times["student: an Explain link"] = time.perf_counter() - t0
    assert not at.exception, [e.value for e in at.exception]
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=30.0)
    parser.add_argument("--child", choices=["0", "1"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(_measure(args.wait)))
        return 0
    results = {}
    for warm in ("0", "1"):
        env = {**os.environ, "SBLR_WARM_LESSON": warm}
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.warm_start",
                "--child",
                warm,
                "--wait",
                str(args.wait),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        results[warm] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{'seconds (fresh process each)':<34} {'no warm start':>14} {'warm start':>11}")
    for what in results["1"]:
        cold, warm = results["0"][what], results["1"][what]
        flag = "" if what.startswith("teacher") or warm <= BUDGET else "  over 3 s"
        print(f"{what:<34} {cold:14.2f} {warm:11.2f}{flag}")
    worst = max(v for k, v in results["1"].items() if k.startswith("student"))
    print(f"worst student action with the warm start: {worst:.2f} s = {worst / BUDGET:.2f} × 3 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
