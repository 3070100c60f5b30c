"""What one server holds, measured without browsers: a class as sessions in threads of one process.

A Streamlit server runs every session's script in a thread of its one process, sharing its
caches (``st.cache_data`` / ``st.cache_resource``), the dashboard's job slots and its
work-ahead thread.  This script does the same with :class:`streamlit.testing.v1.AppTest`:
each student is one AppTest session driven from its own thread, all in this process, so
the figures are the server's own (no browser shares the cores; the websocket and the
browser's drawing are not measured).  Two scenarios:

* ``lesson``: every student follows the lesson on the planted sample -- opens it, "Show
  me" step 1, then "step n ▶" through all seven steps, at the SparseSBLR step moves the
  panel's λ slider three times and at the stability step clicks "Estimate stability"; a
  student reads 0.5-2 s between actions (seeded);
* ``upload``: every student uploads a 1,000-row CSV of their own (seeded; 20 features,
  every other one multi-label with 8 label columns, the others 5 classes), then opens
  Coefficients, Model & metrics and Explain.

Per action the table gives p50 / p95 / max seconds of its script run (a "step ▶" click's
run also runs the page it opens, as on a server), and errors (an exception or an
``st.error`` on the page).  The class sizes are run one after the other
(caches emptied between them), and the script reports the largest class whose lesson
actions keep p95 <= 2 s, and the process's peak RSS.

Run from the repo root, as a module (the dashboard's pages/ must be importable; sblr too:
`pip install -e .` in the repository)::

    python -m benchmarks.class_load --quick            # 2 and 4 students
    python -m benchmarks.class_load                    # 5, 10, 20, 30 students, both scenarios
    python -m benchmarks.class_load --sizes 30 --scenario upload
    python -m benchmarks.class_load --sizes 30 --scenario lesson --by-step  # which step waits

Each session is identified as its own user by the job slots (a browser's XSRF cookie on a
server; here the session's own id).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from unittest.mock import MagicMock

import numpy as np
import pandas as pd
import streamlit as st
import streamlit.logger

ROOT = Path(__file__).resolve().parents[1]
streamlit.logger.set_log_level("error")

LESSON_BUDGET = 2.0
#: "step ▶" timed per step ("step 3 ▶"), to find the step a class waits at (--by-step).
BY_STEP = False
#: Seconds one script run may take before AppTest gives up on it.
RUN_TIMEOUT = 300


# ----------------------------------------------------------------------------- sessions
def _shared_runtime():
    """AppTest sets and clears a process-wide mock Runtime around every run, and patches the
    global config for it: fine one run at a time, not for 30 sessions at once.  Here one
    runtime is set for the whole process (as a server has one), the per-run swaps go to a
    stand-in, and each session gets an id of its own (AppTest gives every session the same
    one, which would make the whole class one user of the job slots)."""
    from streamlit import config
    from streamlit.runtime import Runtime
    from streamlit.runtime.caching.storage.dummy_cache_storage import (
        MemoryCacheStorageManager,
    )
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    runtime = MagicMock(spec=Runtime)
    runtime.media_file_mgr = MediaFileManager(MemoryMediaFileStorage("/mock/media"))
    runtime.cache_storage_manager = MemoryCacheStorageManager()
    with contextlib.suppress(Exception):
        from streamlit.runtime.dataframe_source_manager import DataframeSourceManager

        runtime.dataframe_source_mgr = DataframeSourceManager()
    Runtime._instance = runtime

    class _StandIn:  # receives AppTest's per-run Runtime._instance swaps
        _instance = None

    app_test.Runtime = _StandIn
    config.set_option("global.appTest", True)
    app_test.patch_config_options = lambda options: contextlib.nullcontext()
    shared = ScriptCache()  # compiled once, as a server does
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared

    # app.py's st.navigation on every run, as on a server (AppTest resets Streamlit's
    # "pages directory" switch before each run: a switch_page would run the page alone)
    from streamlit.runtime.pages_manager import PagesManager

    pages_init = PagesManager.__init__

    def pages_manager_init(self, *args, **kwargs):
        pages_init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = pages_manager_init

    # AppTest discovers custom components (reading every installed package's metadata) once
    # per session, a cost of the test client that a server pays once: here once too
    from streamlit.components.v2.component_manager import BidiComponentManager

    components = BidiComponentManager()
    components.discover_and_register_components(start_file_watching=False)
    app_test_init = app_test.AppTest.__init__

    def app_test_init_shared(self, *args, **kwargs):
        app_test_init(self, *args, **kwargs)
        self._bidi_component_manager = components

    app_test.AppTest.__init__ = app_test_init_shared

    ids = threading.local()
    init = local_script_runner.LocalScriptRunner.__init__

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._session_id = getattr(ids, "value", self._session_id)

    local_script_runner.LocalScriptRunner.__init__ = __init__
    return ids


class Student:
    """One session, its timings and errors."""

    def __init__(self, index, ids, times, errors, think):
        from streamlit.testing.v1 import AppTest

        self.index, self.times, self.errors = index, times, errors
        self.rng = np.random.default_rng(index)
        self.think = think
        ids.value = f"student-{index}"
        self.at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=RUN_TIMEOUT)

    def pause(self):
        if self.think:
            time.sleep(float(self.rng.uniform(0.5, 2.0)))

    def run(self, action, *page):
        """One script run (and the page it switches to, if given), timed as ``action``."""
        start = time.perf_counter()
        self.at.run()
        self.times[action].append(time.perf_counter() - start)
        if page:  # the run switched pages itself; AppTest's next run stays there, as a browser
            self.at.switch_page(page[0])
        self.check(action)

    def check(self, action):
        """An exception or an st.error on the page is an error of ``action``."""
        problems = [e.value for e in self.at.exception] + [e.value for e in self.at.error]
        if problems:
            self.errors[action].append(f"student {self.index}: {str(problems[0])[:160]}")
            raise RuntimeError(problems[0])

    def goto(self, action, page):
        self.at.switch_page(page)
        self.run(action)


def lesson(student):
    from pages._shared.lesson import STEPS

    at = student.at
    at.query_params["step"] = "1"
    student.run("open the app")
    student.pause()
    student.goto("open the lesson", "pages/lesson.py")
    student.pause()
    at.button(key="lesson_show").click()
    student.run("show me step 1", STEPS[0]["page"])
    for step in range(1, len(STEPS)):
        student.pause()
        at.button(key="lesson_next").click()
        student.run(f"step {step + 1} ▶" if BY_STEP else "step ▶", STEPS[step]["page"])
        if [b for b in at.button if b.key == "lesson_stability"]:  # the class clicks it too
            student.pause()
            at.button(key="lesson_stability").click()
            student.run("estimate stability")
        lam = [s for s in at.select_slider if s.key == "lesson_lam"]
        if lam:
            options = list(lam[0].options)
            for _ in range(3):
                student.pause()
                value = options[int(student.rng.integers(len(options)))]
                lam[0].set_value(float(value) if _is_number(value) else value)
                student.run("λ move")
                lam = [s for s in at.select_slider if s.key == "lesson_lam"]


def _is_number(text):
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def upload(student):
    rng = student.rng
    n, d = 1000, 20
    X = rng.normal(size=(n, d))
    frame = pd.DataFrame(X.round(4), columns=[f"x{i}" for i in range(d)])
    multilabel = student.index % 2 == 0
    at = student.at
    student.run("open the app")
    student.pause()
    if multilabel:
        labels = [f"label_{j}" for j in range(8)]
        Y = (X @ rng.normal(size=(d, 8)) + rng.normal(size=(n, 8)) > 2.0).astype(int)
        frame[labels] = Y
    else:
        frame["y"] = np.argmax(X[:, :5] + rng.normal(scale=0.5, size=(n, 5)), axis=1)
    data = frame.to_csv(index=False).encode()
    start = time.perf_counter()
    (uploader,) = [u for u in at.get("file_uploader") if str(u.key).startswith("upload_file")]
    uploader.set_value((f"student{student.index}.csv", data, "text/csv"))
    at.run()
    if multilabel:  # the task, then its 0/1 label columns
        at.radio(key="upload_task").set_value("multi-label: several 0/1 label columns")
        at.run()
        (columns,) = [m for m in at.multiselect if m.label == "Label columns (0/1)"]
        columns.set_value(labels)
    else:
        (target,) = [b for b in at.selectbox if str(b.key).startswith("upload_target")]
        target.set_value("y")
    at.run()
    at.button(key="upload_load").click()
    at.run()
    student.times["upload and load"].append(time.perf_counter() - start)
    student.check("upload and load")
    for action, page in (
        ("open Coefficients", "pages/coefficients.py"),
        ("open Model & metrics", "pages/model.py"),
        ("open Explain", "pages/explain.py"),
    ):
        student.pause()
        student.goto(action, page)


# ----------------------------------------------------------------------------- the class
def run_class(scenario, size, ids, think=True):
    st.cache_data.clear()
    st.cache_resource.clear()
    times, errors = defaultdict(list), defaultdict(list)
    students = [Student(i, ids, times, errors, think) for i in range(size)]
    walk = {"lesson": lesson, "upload": upload}[scenario]

    def go(student):
        ids.value = f"student-{student.index}"
        time.sleep(float(student.rng.uniform(0, 2.0)))  # a class starts within two seconds
        try:
            walk(student)
        except Exception as exc:  # noqa: BLE001 -- reported in the table, the student stops
            if not any(str(exc)[:40] in e for es in errors.values() for e in es):
                errors["(stopped)"].append(f"student {student.index}: {exc!r}"[:200])

    start = time.perf_counter()
    threads = [threading.Thread(target=go, args=(s,), name=f"student-{s.index}") for s in students]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times, errors, time.perf_counter() - start


def table(times, errors):
    rows = []
    for action, values in times.items():
        rows.append(
            {
                "action": action,
                "n": len(values),
                "p50 s": statistics.median(values),
                "p95 s": float(np.percentile(values, 95)),
                "max s": max(values),
                "errors": len(errors.get(action, [])),
            }
        )
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="classes of 2 and 4 students")
    parser.add_argument("--sizes", type=int, nargs="+", help="class sizes (default 5 10 20 30)")
    parser.add_argument("--scenario", choices=["lesson", "upload", "both"], default="both")
    parser.add_argument("--no-think", action="store_true", help="no reading time between actions")
    parser.add_argument("--by-step", action="store_true", help="time each lesson step apart")
    args = parser.parse_args(argv)
    global BY_STEP
    BY_STEP = args.by_step
    sizes = args.sizes or ([2, 4] if args.quick else [5, 10, 20, 30])
    scenarios = ["lesson", "upload"] if args.scenario == "both" else [args.scenario]
    store = tempfile.TemporaryDirectory(prefix="sblr-class-load-")
    os.environ["SBLR_SHARE_DIR"] = store.name  # the students' uploads: not the real store
    ids = _shared_runtime()
    from sblr.logistic import prepare_compiled_solver

    prepare_compiled_solver()
    held = {}
    pd.set_option("display.width", 120)
    for scenario in scenarios:
        for size in sizes:
            times, errors, wall = run_class(scenario, size, ids, think=not args.no_think)
            frame = table(times, errors)
            print(f"\n{scenario}, {size} students ({wall:.0f} s wall):")
            print(frame.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
            for es in errors.values():
                for e in es[:3]:
                    print("  error:", e)
            if scenario == "lesson":
                held[size] = (frame["p95 s"].max() <= LESSON_BUDGET) and not any(errors.values())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of the process: {peak:.0f} MiB")
    if held:
        ok = [s for s, good in held.items() if good]
        print(
            f"largest class whose lesson actions keep p95 <= {LESSON_BUDGET:.0f} s without "
            f"errors: {max(ok) if ok else 'none of ' + str(sorted(held))}"
        )


if __name__ == "__main__":
    main()
