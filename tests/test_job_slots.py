"""The server's job slots are fair (issue #25): first come, first served, at most PER_USER
slots to one user (a browser, all its tabs), and long jobs let waiting users go between
their steps. Oracles: the order in which threads are served, recorded here."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from pages._shared.server import FairSlots


def _start(target, *args):
    t = threading.Thread(target=target, args=args, daemon=True)
    t.start()
    return t


def _wait_until(predicate, timeout=10.0):
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.005)


def test_waiting_callers_are_served_in_arrival_order():
    slots = FairSlots(1, 1)
    assert slots.acquire(user="holder")
    served = []

    def wait(name):
        slots.acquire(user=name)
        served.append(name)
        slots.release(user=name)

    threads = []
    for name in ("a", "b", "c", "d"):
        threads.append(_start(wait, name))
        queued = len(threads)
        _wait_until(lambda queued=queued: slots.waiting() == queued)
    assert not slots.acquire(blocking=False, user="late")  # never passes anyone waiting
    slots.release(user="holder")
    for t in threads:
        t.join(5)
    assert served == ["a", "b", "c", "d"]


def test_one_user_holds_at_most_its_share_and_others_pass_it():
    """Two Tune tabs of one browser held both slots of a 2-core server; now the second tab
    waits and another user's view goes first."""
    slots = FairSlots(2, 1)
    assert slots.acquire(user="hog")
    served = []

    def wait(name):
        slots.acquire(user=name)
        served.append(name)

    hog_tab = _start(wait, "hog")  # the hog's second tab: over its share, it waits ...
    _wait_until(lambda: slots.waiting() == 1)
    other = _start(wait, "student")  # ... and the student, arriving later, passes it
    other.join(5)
    assert served == ["student"]
    slots.release(user="hog")
    hog_tab.join(5)
    assert served == ["student", "hog"]
    slots.release(user="hog")
    slots.release(user="student")
    assert slots.acquire(blocking=False) and slots.acquire(blocking=False)


def test_two_browser_profiles_of_one_address_run_one_long_job_and_leave_a_slot_to_others():
    """Two browser profiles are two users, but one network address: their two Tune grids held
    both slots of a 2-core server (another user's cold view waited 76-111 s). Long jobs now
    count against their address: the second grid waits, a third user's view (another address)
    starts at once, and short views of the same address are not limited by it."""
    slots = FairSlots(2, 1, per_address=1)
    assert slots.acquire(user="profile 1", address="10.0.0.7")  # the first Tune grid
    served = []

    def wait(name, address=None):
        slots.acquire(user=name, address=address)
        served.append(name)

    second_grid = _start(wait, "profile 2", "10.0.0.7")
    _wait_until(lambda: slots.waiting() == 1)
    assert served == []  # a slot is free, but not for this address's second long job
    _start(wait, "other user").join(5)  # a short view of someone else: no wait
    assert served == ["other user"]
    slots.release(user="other user")
    # a short view from the same address (a classmate behind one NAT) is not held back
    _start(wait, "classmate").join(5)
    assert served == ["other user", "classmate"]
    slots.release(user="classmate")
    assert served == ["other user", "classmate"]
    slots.release(user="profile 1", address="10.0.0.7")  # the first grid ends
    second_grid.join(5)
    assert served[-1] == "profile 2"
    slots.release(user="profile 2", address="10.0.0.7")
    assert slots.idle()


def test_the_dashboard_counts_a_long_job_against_its_address(monkeypatch):
    """Oracle: the slots' own count while a long job (job_slot(long=True)) and a short one run
    for two browsers of one address."""
    from pages._shared import server

    slots = FairSlots(2, 1, per_address=1)
    monkeypatch.setattr(server, "job_slots", lambda: slots)
    monkeypatch.setattr(server, "current_user", lambda: threading.current_thread().name)
    monkeypatch.setattr(server, "current_address", lambda: "10.0.0.7")
    with server.job_slot(wait=True, long=True):
        assert not slots.acquire(blocking=False, user="profile 2", address="10.0.0.7")
        assert slots.acquire(blocking=False, user="profile 2")  # a short job is free to go
        slots.release(user="profile 2")
    assert slots.acquire(blocking=False, user="profile 2", address="10.0.0.7")
    slots.release(user="profile 2", address="10.0.0.7")
    assert slots.idle()


@pytest.mark.parametrize(
    ("proxies", "expected"),
    [
        (None, "10.0.0.2"),  # the default: one proxy, which appended the address it saw
        ("1", "10.0.0.2"),
        ("2", "203.0.113.9"),  # two: the outer one appended the client's, the inner one its
        ("0", "10.0.0.3"),  # the header not trusted: the connection's own peer
        ("4", "10.0.0.3"),  # fewer entries than proxies: not through them all, not trusted
    ],
)
def test_a_long_jobs_address_is_the_one_the_trusted_proxies_appended(
    monkeypatch, proxies, expected
):
    """Issue #44 item 6: the first X-Forwarded-For entry is whatever the client wrote, so the
    per-address limit took a new address per request. Each proxy appends the address it saw:
    behind N trusted proxies the client's is the N-th from the right (MDN's "trusted proxy
    count"), the header's lines read as one list. Oracle: the entries written here."""
    from types import SimpleNamespace

    from streamlit.runtime.context import StreamlitHeaders

    from pages._shared import server

    lines = [("X-Forwarded-For", "6.6.6.6, 203.0.113.9"), ("X-Forwarded-For", "10.0.0.2")]
    context = SimpleNamespace(headers=StreamlitHeaders(lines), ip_address="10.0.0.3")
    monkeypatch.setattr(server, "get_script_run_ctx", lambda: object())
    monkeypatch.setattr(server.st, "context", context)
    monkeypatch.setenv("SBLR_CLIENT_ADDRESS_HEADER", "X-Forwarded-For")
    if proxies is None:
        monkeypatch.delenv("SBLR_TRUSTED_PROXIES", raising=False)
    else:
        monkeypatch.setenv("SBLR_TRUSTED_PROXIES", proxies)
    assert server.current_address() == expected
    if proxies != "4":  # (more proxies set than there are: what is left of them is the client's)
        # what the client writes in front changes nothing
        spoofed = [("X-Forwarded-For", "7.7.7.7, 8.8.8.8, 203.0.113.9, 10.0.0.2")]
        monkeypatch.setattr(context, "headers", StreamlitHeaders(spoofed))
        assert server.current_address() == expected
    monkeypatch.delenv("SBLR_CLIENT_ADDRESS_HEADER")  # no header named: never read
    assert server.current_address() == "10.0.0.3"


@pytest.mark.slow
def test_a_long_job_gives_its_slot_to_a_waiting_user_between_steps(monkeypatch):
    """Tune held a slot for its whole grid (another user's 2-3 s view waited 330 s). With
    take_turn after each step, a view that arrives during the job runs before the job ends,
    and the job stands aside while it computes."""
    from pages._shared import server

    slots = FairSlots(1, 1)
    monkeypatch.setattr(server, "job_slots", lambda: slots)
    monkeypatch.setattr(server, "current_user", lambda: threading.current_thread().name)
    events = []
    started = threading.Event()

    def long_job():
        with server.job_slot(wait=True):
            started.set()
            for step in range(30):
                time.sleep(0.01)
                events.append(("tune", step))
                server.take_turn()

    def short_view():
        with server.job_slot(wait=True):
            events.append(("view", None))
            time.sleep(0.1)  # the view computes: the long job stands aside meanwhile
            events.append(("view done", None))

    job = threading.Thread(target=long_job, name="teacher", daemon=True)
    job.start()
    started.wait(5)
    _wait_until(lambda: len(events) >= 3)
    view = threading.Thread(target=short_view, name="student", daemon=True)
    view.start()
    view.join(10)
    job.join(10)
    assert ("view", None) in events
    assert events.index(("view", None)) < len(events) - 1  # served while the grid ran
    # and alone: the long job took no step while the view computed (both cores are its)
    start, end = events.index(("view", None)), events.index(("view done", None))
    assert end == start + 1, events[start : end + 1]
    tune_steps = [e for e in events if e[0] == "tune"]
    assert [s for _, s in tune_steps] == list(range(30))  # the job itself lost nothing


def test_a_caller_without_a_user_is_not_limited_and_release_checks_its_count():
    slots = FairSlots(2, 1)
    assert slots.acquire(blocking=False) and slots.acquire(blocking=False)
    assert not slots.acquire(blocking=False)
    slots.release()
    slots.release()
    with pytest.raises(ValueError):
        slots.release()


class _Rerun(Exception):
    """Streamlit's stop-the-script exception, raised at the next drawing after a rerun request."""


@pytest.mark.slow
@pytest.mark.parametrize("entry", ["job_slot(wait=True)", "waiting_for_worker"])
def test_a_rerun_requested_while_waiting_for_a_slot_gives_the_slot_back(monkeypatch, entry):
    """Found by CI: a student moving the λ slider while the page waited for a slot. The
    waiting spinner removes itself on exit, that drawing meets the rerun request and stops the
    script, right after the slot was taken: it was never given back. Two such leaks left a
    2-core server with no slot and every page waiting for ever."""
    from pages._shared import server

    slots = FairSlots(1, 1)
    monkeypatch.setattr(server, "job_slots", lambda: slots)
    monkeypatch.setattr(server, "current_user", lambda: "student")

    @contextlib.contextmanager
    def spinner(text):
        yield
        raise _Rerun  # the spinner's own drawing on exit stops the script

    monkeypatch.setattr(server.st, "spinner", spinner)
    assert slots.acquire(user="other")
    release = threading.Timer(0.2, lambda: slots.release(user="other"))
    release.start()

    def work():
        with server.job_slot():
            raise AssertionError("the script stopped before its work")

    with pytest.raises(_Rerun):
        if entry == "waiting_for_worker":
            server.waiting_for_worker(work)()
        else:
            with server.job_slot(wait=True):
                raise AssertionError("the script stopped before its work")
    release.join(5)
    assert slots.acquire(blocking=False, user="next")  # the slot is free again


@pytest.mark.slow
@pytest.mark.usefixtures("navigation_mode", "private_share_store")
def test_a_stored_fit_whose_evidence_was_evicted_waits_for_a_worker_instead_of_failing(
    monkeypatch,
):
    """Found by benchmarks/class_load.py (20 students uploading at once): a page whose fit was
    stored but whose evidence had left its cache asked for the evidence without waiting for a
    job slot, and with every slot taken the page failed ("dashboard page failed")."""
    from apptest_helpers import assert_clean, goto, start

    from pages._shared import cache, server

    at = goto(start(), "pages/coefficients.py")
    cache._evidence.clear()
    cache._stores.clear()  # the evidence left both of its stores
    slots = FairSlots(server.MAX_JOBS, server.PER_USER)
    monkeypatch.setattr(server, "job_slots", lambda: slots)
    others = [f"other-{i}" for i in range(server.MAX_JOBS)]
    for user in others:
        assert slots.acquire(blocking=False, user=user)
    released = threading.Event()

    def release_later():
        time.sleep(0.3)
        released.set()
        for user in others:
            slots.release(user=user)

    _start(release_later)
    at.run()
    assert released.is_set()  # it waited for a slot ...
    assert_clean(at)  # ... and then showed the page


def test_the_evidence_store_is_bounded_in_bytes_not_only_in_items():
    """Found by benchmarks/class_load.py: 30 students with files of their own need 30
    evidences of 64 KB, and the store kept 16 whatever their size (the rest were computed
    again, while everyone waited). Oracle: the arrays' own sizes."""
    import numpy as np

    from pages._shared.stores import Store, nbytes

    class Featurizer:  # a fitted featurizer holds its training data
        def __init__(self, n):
            self.X_fit_ = np.zeros((n, 16))

    item = (Featurizer(1024), np.zeros((1024, 8)))  # 128 KiB + 64 KiB
    assert nbytes(item) == 1024 * 16 * 8 + 1024 * 8 * 8
    store = Store(100, max_bytes=5 * nbytes(item))
    for i in range(30):
        store.put(i, item)
    assert [i for i in range(30) if store.get(i) is not None] == [25, 26, 27, 28, 29]
    for _ in range(3):  # the same key again replaces its bytes, it does not add them
        store.put(29, item)
    assert [i for i in range(30) if store.get(i) is not None] == [25, 26, 27, 28, 29]
    small = Store(3)  # only a count: as before
    for i in range(30):
        small.put(i, item)
    assert [i for i in range(30) if small.get(i) is not None] == [27, 28, 29]
    huge = Store(100, max_bytes=10)  # the newest item is kept, however large
    huge.put("a", item)
    assert huge.get("a") is item


def test_every_kept_answer_of_the_server_shares_one_byte_budget(monkeypatch):
    """Found on a 983-label set: each cached function kept its own count of answers (64 fold
    evidences of 140 MB were allowed), so nothing bounded the server's memory. Every
    ``heavy(resource=True)`` answer is now kept in one store bounded in bytes, each function
    within its own count. Oracle: the arrays' own sizes and the calls counted."""
    import numpy as np

    from pages._shared import cache
    from pages._shared.stores import Store

    mib = 2**20
    store = Store(1000, max_bytes=3 * mib)
    monkeypatch.setattr(cache, "_stores", lambda: {"memory": store})
    made = []

    @cache.heavy(keep=100, resource=True)
    def big(i):
        made.append(("big", i))
        return np.zeros(mib // 8)  # 1 MiB

    @cache.heavy(keep=2, resource=True)
    def small(i, _unhashed=None):
        made.append(("small", i))
        return np.zeros(16)

    for i in range(5):
        big(i)
    assert store.total_bytes <= 3 * mib
    made.clear()
    for i in (4, 3, 2):  # the newest three are kept: hits
        big(i)
    assert made == []
    big(0)  # the oldest left to stay within the bytes
    assert made == [("big", 0)]
    made.clear()
    for i in (1, 2, 3):
        small(i, _unhashed=object())  # an argument named _... does not identify a call
    small(3, _unhashed=object())
    small(1)  # its own count: the first of the three left
    assert made == [("small", 1), ("small", 2), ("small", 3), ("small", 1)]
    assert store.total_bytes <= 3 * mib
    big.clear()
    assert (len(store), store.total_bytes) == (2, 2 * 16 * 8)  # small's two are left


def test_a_store_makes_a_missing_item_once_for_callers_asking_together():
    """Store.get_or_make: two sessions asking for the same missing item at once compute it
    once (the second waits for the first); a failed make lets the next caller try. Oracle:
    the makes counted."""
    from pages._shared.stores import Store

    store, made, started = Store(4), [], threading.Event()
    release = threading.Event()

    def slow_make():
        made.append(1)
        started.set()
        release.wait(5)
        return "value"

    results = []
    first = threading.Thread(target=lambda: results.append(store.get_or_make("k", slow_make)))
    first.start()
    started.wait(5)
    second = threading.Thread(target=lambda: results.append(store.get_or_make("k", slow_make)))
    second.start()
    time.sleep(0.05)  # the second caller is waiting, not making
    assert len(made) == 1
    release.set()
    first.join(5)
    second.join(5)
    assert results == ["value", "value"] and len(made) == 1

    def fails():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        store.get_or_make("bad", fails)
    assert store.get_or_make("bad", lambda: 3) == 3


@pytest.mark.slow
def test_heavy_caches_its_answer_and_holds_a_job_slot_only_to_compute_it(monkeypatch):
    """The compute layer's one policy (cache.heavy): a miss runs in a job slot, a hit takes
    none and computes nothing, a busy server makes a miss wait its turn instead of failing,
    an argument named with a leading underscore is not part of the key. Oracles: the
    slots' own count seen from inside the function, the calls counted."""
    from pages._shared import cache, server

    slots = FairSlots(1, 1)
    monkeypatch.setattr(server, "job_slots", lambda: slots)
    monkeypatch.setattr(server, "current_user", lambda: "student")
    calls = []

    @cache.heavy(keep=4)
    def answer(question, _unhashed):
        calls.append((question, slots.idle()))
        return question * 2

    answer.clear()
    assert answer(3, object()) == 6
    assert calls == [(3, False)]  # computed while holding the slot
    assert slots.idle()  # and gave it back
    assert answer(3, object()) == 6 and len(calls) == 1  # a hit: nothing computed
    assert slots.acquire(blocking=False, user="other")  # the server is busy ...
    threading.Timer(0.2, lambda: slots.release(user="other")).start()
    assert answer(4, None) == 8  # ... so the miss waited for the slot, then computed
    assert calls[-1] == (4, False) and slots.idle()


@pytest.mark.slow
def test_the_caches_know_a_data_set_by_its_content_not_by_a_key_beside_it(monkeypatch):
    """Every cached call took ``(ds, key)``: a page that passed the wrong key (or a key of
    other data) got another data set's fits. Now the data set is its own key
    (Dataset.fingerprint, through Streamlit's hash_funcs for its caches): the same content,
    even in another object, finds the stored fit and the cached PCA; one changed value does
    not. Oracles: a fit of the changed data made here, and the library's calls counted."""
    import dataclasses

    import numpy as np

    from pages._shared import cache
    from pages._shared.questions import Spec
    from sblr import SparseSBLRClassifier, plots
    from sblr.samples import load_sample

    ds = load_sample("planted")
    same = dataclasses.replace(ds, X=ds.X.copy(), notes=[])  # another object, same content
    X = ds.X.copy()
    X[0, 0] += 0.5
    other = dataclasses.replace(ds, X=X)
    fit = cache.cached_fit(ds, Spec.of("SparseSBLR", 1.0, 1e-3))
    assert cache.cached_fit(same, Spec.of("SparseSBLR", 1.0, 1e-3)) is fit
    changed = cache.cached_fit(other, Spec.of("SparseSBLR", 1.0, 1e-3))
    oracle = SparseSBLRClassifier(gamma=1.0, lam=1e-3).fit(X, ds.y)
    np.testing.assert_allclose(changed.coef_, oracle.coef_, atol=1e-6)
    assert not np.allclose(changed.coef_, fit.coef_)

    computed = []
    pca = plots.pca_coordinates
    monkeypatch.setattr(plots, "pca_coordinates", lambda X: computed.append(1) or pca(X))
    cache.pca_coordinates.clear()
    cache.pca_coordinates(ds)
    cache.pca_coordinates(same)
    assert len(computed) == 1  # the same content: the cached PCA
    cache.pca_coordinates(other)
    assert len(computed) == 2


@pytest.mark.slow
def test_a_cancel_stops_a_compare_fold_inside_its_grid_search_and_frees_the_slot(monkeypatch):
    """Compare's Cancel waited for the end of the fold being computed (minutes for BR-SVM on
    19 labels). The fold now asks Streamlit's own stop/rerun check at every grid point: a
    rerun requested after the first grid point ends the fold there (nothing cached) and its
    job slot goes back at once. Oracle: the grid points reached, counted by the check, and the
    slots' own count."""
    from pages._shared import long_jobs, server
    from pages._shared.questions import Protocol
    from sblr import load_dataset

    slots = FairSlots(1, 1)
    monkeypatch.setattr(server, "job_slots", lambda: slots)
    monkeypatch.setattr(server, "current_user", lambda: "student")
    checks = []

    def yield_check():
        checks.append(slots.idle())
        if len(checks) == 2:  # the user pressed Cancel during the first grid point
            raise _Rerun

    monkeypatch.setattr(server, "get_run_yield_check", lambda: yield_check)
    ds = load_dataset("sample_data/wine.csv", target="class")
    grid = (("C", (1.0, 0.1)), ("gamma", (1.0, 0.1, 0.01)))  # 6 grid points
    with pytest.raises(_Rerun):
        long_jobs.cached_compare_fold(ds, "br_svm", 0, Protocol(3, grid))
    assert checks == [False, False]  # the slot was held at each check ...
    assert slots.idle()  # ... and is free now, after 2 of the fold's 7 checkpoints
    monkeypatch.setattr(server, "get_run_yield_check", lambda: None)  # no run: no checkpoint
    res = long_jobs.cached_compare_fold(ds, "br_svm", 0, Protocol(3, grid))
    assert res.params and slots.idle()
