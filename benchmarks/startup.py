"""Start-up cost of the library, the CLI and the dashboard's first page ("Fast start").

The requirement: the first page after ``streamlit run app.py`` starts is shown
within 3 s, so heavy modules (Dask/distributed, statsmodels via
scikit-posthocs, scipy.stats, plotly where nothing is drawn) are imported only
where they are used.  This script measures, each in fresh Python processes
(``--runs`` times, median):

1. ``import sblr``, ``import pages._shared.state`` (from the repo root, as app.py
   does) and ``python -m sblr --help``: the wall time of the whole process
   (interpreter start-up included), and which of the heavy modules are in
   ``sys.modules`` afterwards;
2. ``streamlit run app.py --server.headless true`` on a free port: the time
   until ``/_stcore/health`` answers ``ok`` (the server is up; Streamlit runs
   app.py only when a browser session connects);
3. the first page without a browser: ``AppTest.from_file("app.py").run()`` in
   a fresh process, from interpreter start to the end of ``run()`` -- the
   server-side cost of the first page (the imports of app.py and its pages,
   and the first script run of the home page), with streamlit's own import.
   The "run()" column is the part after streamlit is imported; "server up +
   run()" estimates the time until a real server has the first page ready.

The 3 s target is checked on the AppTest figure (3).  Timings are wall-clock
and depend on the machine's load; the module lists do not.

Run from the repo root (with sblr importable: `pip install -e .` in the repository)::

    python benchmarks/startup.py [--runs 3] [--timeout 120]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sblr
from sblr.dashboard import ServerStartError, start_dashboard, stop_dashboard, wait_until_healthy

#: The package (``python -m sblr``) by its module's name: the same string as SBLR's key, but
#: the package, not the model.
PACKAGE = sblr.__name__
#: The checkout: app.py and pages/ (the app, not part of the sblr package).
ROOT = Path(__file__).resolve().parents[1]
#: Modules that must not be imported at start-up (scipy.stats: ~2-3 s under load).
HEAVY = ("dask", "distributed", "statsmodels", "scikit_posthocs", "scipy.stats", "plotly")
#: Seconds until the first page is shown (issue "Fast start").
TARGET = 3.0

# Each child prints one JSON line (after a marker) with the heavy modules it has loaded.
_MARK = "@@startup@@"
_REPORT = (
    "import json, sys\n"
    f"print({_MARK!r} + json.dumps({{'heavy': [m for m in {HEAVY!r} if m in sys.modules],"
    " **_extra}), flush=True)\n"
)
_IMPORT = "_extra = {}\nimport MODULE\n" + _REPORT
_CLI_HELP = (
    "import contextlib, io, runpy, sys\n"
    "sys.argv = ['sblr', '--help']\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    try:\n"
    "        runpy.run_module('sblr', run_name='__main__', alter_sys=True)\n"
    "    except SystemExit:\n"
    "        pass\n"
    "_extra = {}\n" + _REPORT
)
_APPTEST = (
    "import time\n"
    "t0 = time.perf_counter()\n"
    "import streamlit.logger\n"
    "streamlit.logger.set_log_level('error')\n"
    "from streamlit.testing.v1 import AppTest\n"
    "t1 = time.perf_counter()\n"
    "at = AppTest.from_file('app.py', default_timeout=TIMEOUT).run(timeout=TIMEOUT)\n"
    "t2 = time.perf_counter()\n"
    "problems = [str(e.value) for e in at.exception] + [str(e.value) for e in at.error]\n"
    "_extra = {'end': time.time(), 'run': t2 - t1, 'streamlit': t1 - t0,"
    " 'problems': problems, 'title': [t.value for t in at.title]}\n" + _REPORT
)


def child(args: list[str], timeout: float) -> tuple[float, dict]:
    """(wall seconds from spawn to exit, the child's report or {}) of ``python *args`` at ROOT."""
    start = time.time()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    seconds = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(_MARK)]
    if proc.returncode != 0 or (args[0] == "-c" and not lines):
        raise SystemExit(f"child failed ({proc.returncode}): {args}\n{proc.stderr[-3000:]}")
    report = json.loads(lines[-1][len(_MARK) :]) if lines else {}
    report["start"] = start
    return seconds, report


def server_up(timeout: float) -> float:
    """Seconds from starting ``streamlit run app.py`` until /_stcore/health answers ok."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        server = start_dashboard(ROOT, log=Path(tmp) / "streamlit.log")
        try:
            wait_until_healthy(
                server.url, server.process, timeout=timeout, interval=0.02, log=server.log
            )
            return time.perf_counter() - t0
        except ServerStartError as exc:
            raise SystemExit(str(exc)) from None
        finally:
            stop_dashboard(server.process)


# ----------------------------------------------------------------------------- main
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per measurement")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per process")
    args = parser.parse_args(argv)
    runs = max(1, args.runs)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {runs} runs each (median)")
    print()

    rows = []  # (what, seconds of each run, heavy modules)
    imports = [
        ("import sblr", ["-c", _IMPORT.replace("MODULE", PACKAGE)], None),
        (
            "import pages._shared.state",
            ["-c", _IMPORT.replace("MODULE", "pages._shared.state")],
            None,
        ),
        # timed as typed; the modules it loads from the same run through runpy
        ("python -m sblr --help", ["-m", PACKAGE, "--help"], ["-c", _CLI_HELP]),
    ]
    for what, cmd, modules_cmd in imports:
        results = [child(cmd, args.timeout) for _ in range(runs)]
        report = child(modules_cmd, args.timeout)[1] if modules_cmd else results[-1][1]
        rows.append((what, [s for s, _ in results], report["heavy"]))

    health = [server_up(args.timeout) for _ in range(runs)]

    first = []  # (interpreter start -> end of run(), run() alone, streamlit import, report)
    for _ in range(runs):
        _, rep = child(["-c", _APPTEST.replace("TIMEOUT", repr(args.timeout))], args.timeout)
        if rep["problems"]:
            raise SystemExit("the first page showed an error:\n" + "\n".join(rep["problems"]))
        first.append((rep["end"] - rep["start"], rep["run"], rep["streamlit"], rep))

    width = 42
    header = f"{'measurement':<{width}} {'median s':>9} {'runs s':>22}  heavy modules loaded"
    print(header)
    print("-" * len(header))

    def line(what, times, heavy="") -> None:
        runs_text = " ".join(f"{t:.2f}" for t in times)
        print(f"{what:<{width}} {statistics.median(times):>9.2f} {runs_text:>22}  {heavy}")

    for what, times, heavy in rows:
        line(what, times, ", ".join(heavy) or "none")
    line("streamlit run: /_stcore/health ok", health)
    line("first page: streamlit + AppTest imports", [f[2] for f in first])
    line("first page: run() (app imports + script)", [f[1] for f in first])
    line(
        "first page: interpreter start -> run() end",
        [f[0] for f in first],
        ", ".join(first[-1][3]["heavy"]) or "none",
    )
    estimate = statistics.median(health) + statistics.median([f[1] for f in first])
    print(f"{'estimate: server up + run()':<{width}} {estimate:>9.2f}")
    print()
    first_page = statistics.median([f[0] for f in first])
    ok = "met" if first_page <= TARGET else "NOT met"
    print(
        f"target: first page within {TARGET:g} s -> {ok} "
        f"(AppTest, interpreter start to the end of the first run: {first_page:.2f} s; "
        f"title: {first[-1][3]['title'][:1]})"
    )
    print("(wall-clock seconds on this machine; other load on it makes them noisy)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
