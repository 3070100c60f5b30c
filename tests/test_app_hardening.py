"""The dashboard against hostile and odd input: user text stays text, downloads stay data,
errors never show a traceback, a shared server bounds its work (issue: hardening)."""

from __future__ import annotations

import csv
import html
import io
import threading
import time

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import (
    PAGES,
    SAMPLE_DIR,
    assert_clean,
    assert_no_exception,
    button_file,
    click_load,
    goto,
    keyed,
    load_upload,
    rendered,
    start,
    upload,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

#: Pages whose title or heading names the sidebar's class k.
CLASS_HEADINGS = {
    "pages/contributions.py": "title",
    "pages/path.py": "title",
    "pages/explain.py": "subheader",
}
HOSTILE = [
    "![x](http://127.0.0.1:9/p.png)",
    "Instrument_-_Trombone",
    '=HYPERLINK("http://127.0.0.1:9","x")',
]
MARKDOWN_ELEMENTS = (
    "title",
    "header",
    "subheader",
    "markdown",
    "caption",
    "error",
    "warning",
    "info",
    "success",
)

# Every test here starts the app in AppTest: seconds each, so out of the fast suite.
pytestmark = [pytest.mark.usefixtures("navigation_mode"), pytest.mark.slow]


def visible_texts(at: AppTest) -> list[str]:
    """Every Markdown element's visible text, main area and sidebar (asserting no markup)."""
    out = []
    for kind in MARKDOWN_ELEMENTS:
        for element in at.get(kind):
            out.append(rendered(str(element.value)))
    return out


def classes_csv(names: list[str], seed: int = 0) -> bytes:
    """Three well separated clusters, one per class name, as a CSV with a "class" column."""
    rng = np.random.default_rng(seed)
    rows = []
    for c, name in enumerate(names):
        centre = np.eye(4)[c % 4] * 3 + c
        for x in rng.normal(centre, 0.3, size=(20, 4)):
            rows.append([*x.round(4), name])
    frame = pd.DataFrame(rows, columns=["f1", "f2", "f3", "f4", "class"])
    return frame.to_csv(index=False).encode()


def choose_class(at: AppTest, name: str) -> None:
    """Pick the sidebar's class k by its name (the box shows names, holds indices)."""
    (box,) = [w for w in at.sidebar.selectbox if w.label == "Class k"]
    box.set_value(box.options.index(name))
    at.run()
    assert_no_exception(at)


# ----------------------------------------------------------------------------- markdown
def test_hostile_class_names_are_shown_as_text_on_every_page(downloads):
    names = [*HOSTILE, "plain"]
    at = start()
    load_upload(at, "![d](http:127.0.0.1:9)_x_.csv", classes_csv(names), target="class")
    assert not at.error, [e.value for e in at.error]
    home = "\n".join(visible_texts(at))
    assert "![d](http:127.0.0.1:9)_x_ (your upload)" in home
    for page in PAGES:
        goto(at, page)
        shown = visible_texts(at)  # asserts that nothing rendered as an image or a link
        assert not at.error, [e.value for e in at.error]
        if page in CLASS_HEADINGS:
            for name in names[:3]:
                choose_class(at, name)
                heads = [rendered(e.value) for e in at.get(CLASS_HEADINGS[page])]
                assert any(f"“{name}”" in h for h in heads), (page, name, heads)
        assert shown


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp", "Zs"),
            blacklist_characters=",\"'",  # CSV quoting is the loader's business, tested there
        ),
        min_size=1,
        max_size=16,
    ).filter(
        lambda s: (
            s.strip() == s
            and not _numeric(s)
            and s not in ("plain", "other")
            and s not in _MISSING_MARKERS
        )  # "?", "NA", "null"...: a missing class, refused
    )
)
def test_any_class_name_round_trips_through_the_headings(name):
    at = start()
    load_upload(at, "names.csv", classes_csv([name, "plain", "other"]), target="class")
    assert not at.error, [e.value for e in at.error]
    for page, kind in CLASS_HEADINGS.items():
        goto(at, page)
        choose_class(at, name)
        heads = [rendered(e.value) for e in at.get(kind)]
        assert any(f"“{name}”" in h for h in heads), (page, name, heads)


#: A CSV cell the loader reads as missing (pandas' defaults and UCI's "?"; the README's
#: conventions): a class of that name is a missing class, which the loader refuses.
_MISSING_MARKERS = frozenset(
    {"", "?", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND"}
    | {"1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------- downloads
def _csv_cells(data: bytes) -> list[str]:
    return [c for row in csv.reader(io.StringIO(data.decode())) for c in row]


def _formula_cells(cells: list[str]) -> list[str]:
    return [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r") and not _numeric(c)]


def test_tables_offer_no_export_that_would_carry_a_formula():
    """Streamlit's own table export (a hover on any st.dataframe: CSV download, clipboard
    copy) writes cells as they are, formula-leading class names included; the dashboard's
    configuration turns it off, its download buttons neutralize instead (the test below).
    Oracle: the option as Streamlit reads it from the repository's .streamlit/config.toml."""
    from pathlib import Path

    from streamlit import config

    tomllib = pytest.importorskip("tomllib", reason="Python 3.11's TOML reader, as Streamlit's")
    path = Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml"
    assert tomllib.loads(path.read_text(encoding="utf-8"))["client"]["disableDataExport"] is True
    assert "client.disableDataExport" in config._config_options_template  # Streamlit knows it


def test_csv_downloads_neutralize_formulas(downloads):
    names = ["=cmd|' /C calc'!A0", "@SUM(A1:A2)", "+1+2", "-2+3"]
    at = start()
    load_upload(at, "formulas.csv", classes_csv(names), target="class")
    checked = 0
    for page in ("pages/coefficients.py", "pages/contributions.py", "pages/model.py"):
        goto(at, page)
        for button in at.get("download_button"):
            if not button.proto.label.endswith("(CSV)"):
                continue
            cells = _csv_cells(button_file(downloads, button))
            assert _formula_cells(cells) == [], (button.proto.label, _formula_cells(cells))
            checked += 1
            if page != "pages/model.py":
                assert "'=cmd|' /C calc'!A0" in cells
    assert checked == 4  # β, contributions, metrics, the result list


# ----------------------------------------------------------------------------- errors
def test_arff_text_with_infinite_integer_in_a_txt_upload_shows_a_message():
    arff = b"@relation r\n@attribute a INTEGER\n@attribute c {x,y}\n@data\ninf,x\n1,y\n2,x\n"
    at = upload(start(), "odd.txt", arff)
    if any(b.key == "upload_load" for b in at.button):
        click_load(at)
    assert_no_exception(at)
    (error,) = at.error
    assert "Traceback" not in error.value and "/" not in rendered(error.value).split(":", 1)[0]


def test_unexpected_failure_in_a_page_shows_no_traceback_or_path(monkeypatch):
    from pages._shared.views import contributions  # the page's view calls the library

    def broken(*args, **kwargs):
        raise RuntimeError("boom in /srv/secret/path.py")

    monkeypatch.setattr(contributions, "contribution_table", broken)
    at = goto(start(), "pages/contributions.py", errors_ok=True)
    (error,) = at.error
    assert "RuntimeError" in error.value
    assert "/srv/secret" not in error.value and "boom" not in error.value
    # The sidebar is still there: the user can change settings or data.
    assert any(w.label == "Class k" for w in at.sidebar.selectbox)


def test_data_error_in_a_page_shows_its_message(monkeypatch):
    from pages._shared.views import contributions  # the page's view calls the library
    from sblr import DataError

    def refuse(*args, **kwargs):
        raise DataError("The label **matrix** is odd.")

    monkeypatch.setattr(contributions, "contribution_table", refuse)
    at = goto(start(), "pages/contributions.py", errors_ok=True)
    (error,) = at.error
    assert rendered(error.value) == "The label **matrix** is odd."


# ----------------------------------------------------------------------------- uploads
def test_upload_key_is_length_prefixed():
    from pages._shared.data import Upload

    def upload_digest(*args):
        return Upload(*args).digest()

    # The old key hashed data + xml: these two different uploads had the same key.
    assert upload_digest(b"ab", "f.arff", b"c", None, None) != upload_digest(
        b"a", "f.arff", b"bc", None, None
    )
    assert upload_digest(b"a", "f.arff", None, None, None) != upload_digest(
        b"a", "f.arff", b"", None, None
    )
    assert upload_digest(b"a", "x.csv", None, None, "c") != upload_digest(
        b"a", "y.csv", None, None, "c"
    )
    assert upload_digest(b"a", "x.csv", None, 2, None) == upload_digest(
        b"a", "x.csv", None, 2, None
    )
    # a list and a tuple of labels are the same upload (a link's JSON gives lists)
    assert upload_digest(b"a", "x.arff", None, None, ["a", "b"], ["id"]) == upload_digest(
        b"a", "x.arff", None, None, ("a", "b"), ("id",)
    )


def test_label_options_do_not_carry_over_to_the_next_arff():
    planted = (SAMPLE_DIR / "planted.arff").read_bytes()
    at = upload(start(), "a.arff", planted)
    keyed(at.number_input, "upload_n_labels").set_value(7)
    at.run()
    other = planted.replace(b"@relation", b"% another file\n@relation", 1)
    upload(at, "b.arff", other)
    assert keyed(at.number_input, "upload_n_labels").value == 0


# ----------------------------------------------------------------------------- URL
@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"gamma": "inf"}, "gamma='inf' is not a positive number"),
        ({"lam": "nan"}, "lam='nan' is not a positive number"),
        ({"gamma": "1e9"}, "gamma='1e9' is outside the slider's range"),
        ({"k": "99"}, "k=99 is not a class of 'planted'"),
        ({"model": "GPT"}, "model='GPT' is not one of"),
        # str.isdigit() accepts these, int() refused them: the whole app crashed
        ({"k": "²"}, "k='²' is not a class number"),
        ({"k": "9" * 5000}, "is not a class number"),
        ({"k": "٣"}, "k='٣' is not a class number"),  # not silently class 3
    ],
)
def test_bad_link_values_are_ignored_with_a_note(query, said):
    at = start(query)
    assert not at.error and not at.exception
    notes = " ".join(rendered(w.value) for w in at.warning)
    assert said in notes
    if query.get("gamma") == "1e9":  # clamped to the slider's largest
        assert at.select_slider(key="log_gamma").value == 2.0
    assert at.toggle(key="gamma_is_scale").value is ("1e9" not in query.values())


def test_a_link_value_between_the_sliders_points_is_noted_as_moved():
    """A hand-edited link's γ = 0.012 shows the numbers of the grid point 1e-2; the page says
    so.  The app's own links (4 digits of a grid point, e.g. 10^-1.5 as 0.03162) say nothing."""
    at = start({"gamma": "0.012", "lam": f"{10**-2.5:.4g}"})
    assert not at.error and not at.exception and not at.warning
    notes = [rendered(w.value) for w in at.info]
    moved = [n for n in notes if "between the slider's points" in n]
    assert len(moved) == 1, notes
    assert "gamma='0.012' is between the slider's points; using 1e-2" in moved[0]
    assert "lam=" not in moved[0]  # 0.003162 is the grid point 10^-2.5, written as links do
    assert at.select_slider(key="log_gamma").value == -2.0
    assert at.select_slider(key="log_lam").value == -2.5
    at.run()  # said once, on the page the link opened
    assert not any("between the slider's points" in rendered(w.value) for w in at.info)


@pytest.mark.parametrize("step", ["²", "9" * 5000, "0", "8"])
def test_a_bad_lesson_step_in_a_link_opens_step_one(step):
    at = start({"step": step})
    at.switch_page("pages/lesson.py")
    at.run()
    assert not at.error and not at.exception
    assert [h.value for h in at.subheader][0].startswith("Step 1 of 7")


# ----------------------------------------------------------------------------- server
def test_job_slots_bound_concurrent_work_and_wait_for_a_free_one():
    from pages._shared import server  # the module that holds the slots

    slots = server.job_slots()
    taken = 0
    while slots.acquire(blocking=False):
        taken += 1
    assert taken == server.MAX_JOBS
    try:
        with pytest.raises(server.ServerBusy), server.job_slot():
            pass
        ran = []

        def work():
            with server.job_slot():
                with server.job_slot():  # re-entrant: a cached function calling another
                    ran.append(time.monotonic())
                    return 42

        released_at = []

        def release():
            time.sleep(0.3)
            released_at.append(time.monotonic())
            slots.release()

        threading.Thread(target=release).start()
        assert server.waiting_for_worker(work)() == 42
        assert ran and released_at and ran[0] >= released_at[0]
    finally:
        for _ in range(taken - 1):
            slots.release()
    # every slot is free again
    assert sum(slots.acquire(blocking=False) for _ in range(server.MAX_JOBS)) == server.MAX_JOBS
    for _ in range(server.MAX_JOBS):
        slots.release()


# ----------------------------------------------------------------------------- sparse data
def sparse_arff(n_rows: int = 150, n_features: int = 3000, n_labels: int = 4) -> bytes:
    """A sparse multi-label ARFF: each label owns a block of columns its rows use."""
    rng = np.random.default_rng(1)
    lines = ["@relation wide", *[f"@attribute w{j} numeric" for j in range(n_features)]]
    lines += [f"@attribute tag{k} {{0,1}}" for k in range(n_labels)] + ["@data"]
    block = n_features // n_labels
    for i in range(n_rows):
        labels = {i % n_labels} | ({(i + 1) % n_labels} if i % 5 == 0 else set())
        cols = set()
        for k in labels:
            cols |= set(rng.integers(k * block, k * block + 40, 8).tolist())
        entries = [f"{c} {rng.integers(1, 5)}" for c in sorted(cols)]
        entries += [f"{n_features + k} 1" for k in sorted(labels)]
        lines.append("{" + ", ".join(entries) + "}")
    return "\n".join(lines).encode()


def test_sparse_upload_runs_every_page():
    """A sparse ARFF stays sparse (X is CSR) and every page works on it, without an editor
    listing thousands of columns."""
    import scipy.sparse as sp

    at = upload(start(), "wide.arff", sparse_arff())
    keyed(at.number_input, "upload_n_labels").set_value(4)
    at.run()
    click_load(at)
    assert_clean(at)
    ds = at.session_state["upload"]["dataset"]
    assert sp.issparse(ds.X) and ds.X.shape == (150, 3000)
    for page in [*PAGES, "pages/compare.py"]:
        goto(at, page, errors_ok=True)
        assert not at.error, (page, [e.value for e in at.error])
    goto(at, "pages/explain.py")
    # what-if lists the 10 features with the largest credit, not 3,000 columns
    whatif = [w for w in at.number_input if str(w.key).startswith("explain_whatif_")]
    assert len(whatif) == 10
    assert "The 3,000 credits add up to" in " ".join(rendered(c.value) for c in at.caption)


def test_a_downloads_context_never_lists_its_options():
    """'with_lam: True' reached the report's header whenever the model was SparseSBLR."""
    from types import SimpleNamespace

    from pages._shared.formatting import context
    from pages._shared.state import Settings

    ds = SimpleNamespace(name="d")
    for model in ("SparseSBLR", "SBLR"):
        s = Settings(model=model, gamma="scale", lam=1e-3, k=0)
        assert context(ds, s, with_lam=True) == {
            "data": "d",
            "model": model,
            "gamma": "scale",
            "lambda": "1e-3",
        }


def test_a_share_above_zero_never_shows_as_zero_percent():
    """Found on public data: co-occurrence 1 beside P(k | t) '0%' (1 row of 300)."""
    from pages._shared.formatting import fmt_share

    shares = (0.0, 1 / 300, 0.005, 0.0099, 0.01, 0.5, 1.0)
    assert [fmt_share(v) for v in shares] == ["0%", "<1%", "<1%", "<1%", "1%", "50%", "100%"]
    assert fmt_share(float("nan")) == "–"


def test_a_file_of_millions_of_rows_is_refused_before_it_is_parsed(monkeypatch):
    """Found by an audit: a 48 MB CSV of 12 million short rows was parsed in full (60 s and
    0.8 GB of a worker) before the 200,000-row limit refused it. Its lines are counted first;
    the loader is never called."""
    from pages._shared import data

    def no_parse(*args, **kwargs):
        raise AssertionError("the file was parsed")

    monkeypatch.setattr(data, "cached_upload", no_parse)
    raw = b"f,c\n" + b"0,1\n1,0\n" * 450_001  # 900,003 lines in 3.6 MB
    at = load_upload(start(), "rows.csv", raw, target="c")
    assert any(
        "900,003 lines, far more than the 200,000 rows" in rendered(e.value) for e in at.error
    )


def test_an_upload_is_held_to_the_dashboards_own_size_limit(monkeypatch):
    """The dashboard loads uploads with its own, lower limit (pages/_shared/data.MAX_DENSE_MB,
    a quarter of the library's): a file whose matrix would pass the library's limit but not
    the server's is refused with the numbers, and the previous data stays."""
    import sblr.io
    from pages._shared import data

    assert data.MAX_DENSE_MB < sblr.io.MAX_DENSE_MB
    monkeypatch.setattr(data, "MAX_DENSE_MB", 0.005)  # 7.8 KB needed below
    raw = b"f,c\n" + b"".join(b"%d,%d\n" % (i, i % 2) for i in range(1000))
    at = load_upload(start(), "big.csv", raw, target="c")
    shown = " ".join(rendered(e.value) for e in at.error)
    assert "more than this load's limit of 0.005 MB" in shown
    line = [m.value for m in at.sidebar.markdown if m.value.startswith("**Data:**")][0]
    assert "planted" in line  # the sample stays


def test_the_collector_is_settled_once_then_again_only_after_new_imports(monkeypatch):
    """After a run, long-lived objects go to the collector's permanent generation: a
    collection first (no garbage frozen), then gc.freeze; not again until pages have imported
    _FREEZE_AFTER_MODULES more modules. (The test process itself is not frozen here.)"""
    import gc
    import sys

    from pages._shared import server

    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(server, "_frozen_at", 0)
    assert server.settle_garbage_collector()
    assert calls == ["collect", "freeze"]
    assert not server.settle_garbage_collector()  # nothing imported since
    monkeypatch.setattr(server, "_frozen_at", len(sys.modules) - server._FREEZE_AFTER_MODULES + 1)
    assert not server.settle_garbage_collector()  # one module short
    monkeypatch.setattr(server, "_frozen_at", len(sys.modules) - server._FREEZE_AFTER_MODULES)
    assert server.settle_garbage_collector()
    assert calls == ["collect", "freeze"] * 2


def test_a_run_of_the_app_settles_the_collector():
    """The app calls it at the end of its runs: after one, objects are frozen."""
    import gc

    from pages._shared import server

    server._frozen_at = 0  # as in a fresh server process
    start()
    assert server._frozen_at > 0 and gc.get_freeze_count() > 0


def test_the_app_prepares_the_compiled_solver_in_the_background_after_its_first_run(
    monkeypatch,
):
    """On a fresh install, numba compiles SparseSBLR's solver in 5-10 s: the app starts that
    in a background thread after its first run, not in the first fit a user waits for."""
    import sblr.logistic
    from pages._shared import server

    threads = []
    monkeypatch.setattr(
        sblr.logistic,
        "prepare_compiled_solver",
        lambda: threads.append(threading.current_thread().name),
    )
    server.compiled_solver.clear()  # as in a fresh server process
    start()
    deadline = time.monotonic() + 10
    while not threads and time.monotonic() < deadline:
        time.sleep(0.01)
    assert threads == ["sblr-compiled-solver"]
    server.compiled_solver.clear()


@pytest.fixture
def solver_being_prepared(monkeypatch):
    """The compiled solver not loaded yet, its preparing thread a stand-in that records each
    wait for it (``join``); returns the list of waits."""
    import sblr.logistic
    from pages._shared import server

    joined = []

    class Preparing:
        def join(self):
            joined.append(True)

    monkeypatch.setattr(server, "compiled_solver", Preparing)
    monkeypatch.setattr(sblr.logistic, "compiled_solver_ready", lambda: False)
    return joined


def test_pages_that_fit_sparsesblr_wait_for_the_solver_being_prepared(solver_being_prepared):
    """The Model page (its folds) and the path page fit SparseSBLR (the sidebar's default
    model): while the compiled solver is not loaded they wait for it, saying so, first."""
    for page in ("pages/model.py", "pages/path.py"):
        solver_being_prepared.clear()
        at = goto(start({"sample": "planted"}), page)
        assert_no_exception(at)
        assert solver_being_prepared, page


def test_a_sparse_fit_waits_for_the_solver_being_prepared(solver_being_prepared, monkeypatch):
    """While the solver is not loaded, a page's SparseSBLR fit first waits for the thread
    preparing it (under a spinner saying so); once loaded, it does not wait."""
    import sblr.logistic
    from pages._shared import server

    joined = solver_being_prepared
    server.wait_for_compiled_solver()
    assert joined == [True]
    monkeypatch.setattr(sblr.logistic, "compiled_solver_ready", lambda: True)
    server.wait_for_compiled_solver()
    assert joined == [True]


def test_url_notes_cut_long_values():
    """A 5,000-character gamma= was repeated whole in the warning; notes quote at most 40
    characters and say how long the value was."""
    from apptest_helpers import start

    at = start({"gamma": "x" * 5000, "model": "M" * 300})
    notes = html.unescape(" ".join(w.value for w in at.warning))
    assert "(5,000 characters)" in notes and "(300 characters)" in notes
    assert "x" * 41 not in notes and "M" * 41 not in notes
    assert len(notes) < 1000


@pytest.mark.parametrize("root", ["nosuchprotocol://links", "/proc/sblr-links"])
def test_an_unusable_share_dir_gives_uploads_without_links(monkeypatch, root):
    """Issue #35 row 8: an unusable SBLR_SHARE_DIR broke every upload with the generic error;
    now the upload loads, without a link, and a link opened there says why it cannot open."""
    import streamlit as st

    monkeypatch.setenv("SBLR_SHARE_DIR", root)
    st.cache_resource.clear()
    try:
        at = load_upload(start(), "wine.csv", (SAMPLE_DIR / "wine.csv").read_bytes())
        assert "**Data:** wine" in " ".join(m.value for m in at.sidebar.markdown)
        assert "data" not in at.query_params  # no link to put there
        other = start({"data": "abcdefabcdefabcdef"})
        assert "keeps no shared data" in " ".join(w.value for w in (*other.warning, *other.info))
    finally:
        st.cache_resource.clear()
