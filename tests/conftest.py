"""Shared fixtures.  Plain AppTest helper functions are in ``apptest_helpers.py`` beside this
file (importable as ``apptest_helpers``: pyproject.toml puts ``tests/`` on ``sys.path``)."""

import os
import sys
import tempfile
from pathlib import Path

import pytest
import scipy.linalg  # noqa: F401  (SciPy's own OpenBLAS: loaded, so the limit below covers it)
from threadpoolctl import threadpool_info, threadpool_limits

# The dashboard keeps uploads for their links in SBLR_SHARE_DIR: during the tests, a folder of
# this run, not the machine's shared one (the browser tests' servers inherit it).
os.environ.setdefault("SBLR_SHARE_DIR", tempfile.mkdtemp(prefix="sblr-test-shared-"))
# The lesson's warm start fits in the background of every fresh server: the suite's sessions
# clear the caches again and again, and each would start it anew beside the tests (its own
# test runs it in the foreground: tests/test_teaching_pages.py).
os.environ.setdefault("SBLR_WARM_LESSON", "0")
# The servers and AppTest runs of the tests never reload the code: a file saved while a
# server runs (a developer editing beside the suite) re-imported sblr under it, and a cached
# object of the old class then failed an isinstance check of the new one.
os.environ.setdefault("STREAMLIT_SERVER_FILE_WATCHER_TYPE", "none")

# Cache the compiled test modules (pytest's assertion rewriting) and the package's bytecode
# even where the environment says not to (PYTHONDONTWRITEBYTECODE=1 on this project's
# machines): without the cache every run rewrote and compiled 183 modules again, 10 of the
# fast suite's 48 CPU-seconds (cProfile of `pytest --collect-only`). The files go to the
# __pycache__ folders git ignores.
sys.dont_write_bytecode = False

# BLAS on one thread in the test process. The tests' matrices are small, and a threaded
# OpenBLAS spends more CPU spinning than it saves on them: the fast suite took 41.4
# CPU-seconds with the machine's two BLAS threads and 35.4 with one (same run, same load).
# The library's own threads (the logistic layer's classes, the evidence's tiles) are not
# BLAS threads and still run. Tests of the BLAS thread count itself ask for the process's
# count as it was (the ``blas_as_loaded`` fixture). Servers and commands started by tests
# are separate processes and keep the machine's setting.
_BLAS_AS_LOADED = max(
    (i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=1
)
_ONE_BLAS_THREAD = threadpool_limits(1, user_api="blas")

# Plain ``assert`` in the helpers gets pytest's detailed messages, as in a test module (must
# run before the first import of the module).
pytest.register_assert_rewrite("apptest_helpers")


@pytest.fixture(scope="session", autouse=True)
def _compiled_solver():
    """Compile (or load from numba's cache) SparseSBLR's solver once, before the first test:
    on a fresh environment the compile landed inside whichever test came first (108 s in
    one browser test, past its wait)."""
    from sblr.logistic import prepare_compiled_solver

    prepare_compiled_solver()


@pytest.fixture
def blas_as_loaded():
    """The process's BLAS thread count as it was at start (the suite runs on one thread),
    for a test of how the library sets and restores it: the test must start where a user's
    process starts, not at 1, or it could not fail."""
    if _BLAS_AS_LOADED < 2:
        pytest.skip("BLAS runs on one thread on this machine: there is no count to restore")
    with threadpool_limits(_BLAS_AS_LOADED, user_api="blas"):
        yield _BLAS_AS_LOADED


@pytest.fixture(autouse=True)
def _main_module_kept():
    """Put ``sys.modules["__main__"]`` back after each test. Streamlit's AppTest runs its script
    as ``__main__`` and leaves it there (a temporary file of ``from_function``); a later test
    in the same process that starts worker processes by spawn (Dask's LocalCluster) then had
    each child re-run that file, which failed (NameError: '__args'), and the cluster did not
    start: found by the CI when test order put an AppTest first."""
    main = sys.modules.get("__main__")
    yield
    if main is not None and sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main


#: Public benchmark data on the development machines (not part of the project).
SHARED_DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


@pytest.fixture
def shared_datasets() -> Path:
    """``../shared/datasets``, or skip: the benchmark data is not on users' machines."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip(
            "../shared/datasets not found: benchmark data is only on the development machines"
        )
    return SHARED_DATASETS


@pytest.fixture
def navigation_mode(monkeypatch):
    """Run app.py's st.navigation on every AppTest run, as a running server does.

    A ``pages/`` folder beside the entry point makes Streamlit start in the old
    "pages directory" mode until the first ``st.navigation`` call switches it
    off for the rest of the process.  AppTest resets that switch before every
    run, so without this a ``switch_page`` would execute the page file alone,
    without app.py's sidebar.  (A real server's first request is handled by
    ``pages._shared.state.page_context``; the browser test covers it.)
    """
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)
    # Streamlit's script runner leaves sys.modules["__main__"] pointing at the last script it
    # ran (app.py or a page); processes spawned later in this pytest process (Dask workers,
    # joblib) would re-import it as their main module and run the app.  Put it back.
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])


@pytest.fixture
def downloads(monkeypatch):
    """Bytes of every file a download button offered, by the media file id in its URL."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    files: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        if isinstance(path_or_data, bytes):
            files[file_id] = path_or_data
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", load_and_get_id)

    # A download made when clicked (data=callable) is registered as a deferred file: make it
    # now, as a click would, under the same id (the button's deferred_file_id).
    from streamlit.runtime.media_file_manager import MediaFileManager

    original_deferred = MediaFileManager.add_deferred

    def add_deferred(self, data, *args, **kwargs):
        file_id = original_deferred(self, data, *args, **kwargs)
        made = data()
        files[file_id] = made.encode() if isinstance(made, str) else made
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return files


@pytest.fixture
def private_share_store(tmp_path, monkeypatch):
    """A test's uploads go to a share store of its own (the store is a cached resource)."""
    import streamlit as st

    monkeypatch.setenv("SBLR_SHARE_DIR", str(tmp_path / "shared"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


#: A test at least this long (its call, on this machine, this run) belongs in the slow suite.
SLOW_SECONDS = 1.0
_unmarked_slow: list[tuple[str, float]] = []


def pytest_runtest_logreport(report):
    """Note the unmarked tests whose call took SLOW_SECONDS or more."""
    if report.when == "call" and report.duration >= SLOW_SECONDS:
        if "slow" not in report.keywords:
            _unmarked_slow.append((report.nodeid, report.duration))


def pytest_terminal_summary(terminalreporter):
    """List them at the end of the run: the fast suite (-m "not slow") must stay fast. A list,
    not a failure: a duration depends on the machine and its load, so it is a finding to
    act on, not a test result."""
    if not _unmarked_slow:
        return
    terminalreporter.section(f"unmarked tests of {SLOW_SECONDS:g} s or more: mark them slow")
    for nodeid, seconds in sorted(_unmarked_slow, key=lambda x: -x[1]):
        terminalreporter.write_line(f"{seconds:6.2f} s  {nodeid}")


@pytest.fixture(scope="session")
def planted():
    """The bundled multi-label sample (read once; tests must not change it)."""
    from sblr.samples import load_sample

    return load_sample("planted")


@pytest.fixture(scope="session")
def wine():
    """The bundled multi-class sample (read once; tests must not change it)."""
    from sblr.samples import load_sample

    return load_sample("wine")


# ------------------------------------------------------------- the browser tests' fixtures
# (tests/test_browser*.py; helpers in browser_helpers.py). Module-scoped: a server and a
# browser per test file, so the files run side by side on the workers of `-n auto --dist
# loadfile`; each server writes its own log, test-artifacts/streamlit-server-<file>.log.
@pytest.fixture(scope="module")
def server_url(request):
    """``streamlit run app.py`` of this test file, on a free port of 127.0.0.1: its URL."""
    from browser_helpers import streamlit_server

    # and a share store of its own: the suite's AppTest sessions in other workers share the
    # run's SBLR_SHARE_DIR, and a test that ages this file's link must age only its own
    before = os.environ["SBLR_SHARE_DIR"]
    os.environ["SBLR_SHARE_DIR"] = tempfile.mkdtemp(prefix=f"sblr-test-{request.path.stem}-")
    try:
        with streamlit_server(f"streamlit-server-{request.path.stem}.log") as url:
            yield url
    finally:
        os.environ["SBLR_SHARE_DIR"] = before


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through Playwright (skipped without it, failed under CI)."""
    from browser_helpers import launched_chromium

    with launched_chromium() as chromium:
        yield chromium


@pytest.fixture
def page(browser):
    """A page of a fresh browser context (another person, another session), 1440×1000."""
    from browser_helpers import TIMEOUT_MS, watched_page

    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        yield watched_page(context)
    finally:
        context.close()
