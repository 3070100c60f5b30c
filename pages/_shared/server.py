"""What every session of the server shares: the job slots that bound the heavy computations
running at once, and the error boundary around each part of a run."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import sys
import threading

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

try:  # Streamlit's own stop/rerun check of a run (1.5x and later); without it, no checkpoint
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check
except ImportError:  # pragma: no cover - an older Streamlit
    get_run_yield_check = None

from pages._shared.formatting import esc_md
from sblr import DataError

__all__ = [
    "MAX_JOBS",
    "PER_USER",
    "FairSlots",
    "current_address",
    "current_user",
    "forwarded_client",
    "take_turn",
    "ServerBusy",
    "compiled_solver",
    "error_boundary",
    "job_slot",
    "job_slots",
    "settle_garbage_collector",
    "stop_if_rerun_requested",
    "wait_for_compiled_solver",
    "waiting_for_worker",
]

_log = logging.getLogger("sblr.dashboard")

#: Heavy computations (loading an upload, distances, evidence, fits, folds, paths, tuning) that
#: may run at once in this server process, whatever the number of sessions: each holds one
#: slot, so a class of 20 students cannot start 20 fits on a 2-core machine at once.
MAX_JOBS = max(1, int(os.environ.get("SBLR_MAX_JOBS", 0)) or (os.cpu_count() or 1))


class ServerBusy(Exception):
    """Every job slot is taken; raised inside a cached function, so nothing is cached."""


#: Slots one user (one browser: all its tabs) may hold at once; the rest stay free for others.
#: One session with two Tune tabs on a 150,000-row upload held both slots of a 2-core server,
#: and another user's 2-3 s Coefficients view waited 330 s (found by an audit).
PER_USER = max(1, int(os.environ.get("SBLR_JOBS_PER_USER", 0)) or MAX_JOBS - 1)


#: Long jobs (Tune's grid, the stability resamples) that one network address may run at
#: once, whatever the number of browsers (or browser profiles) behind it: one person with two
#: profiles held both slots of a 2-core server with two Tune tabs, and another user's cold view
#: waited 76-111 s (an audit). Short views are not limited by address, so a class behind one
#: NAT address still has every slot for them.
LONG_PER_ADDRESS = max(1, int(os.environ.get("SBLR_LONG_JOBS_PER_ADDRESS", 0)) or PER_USER)


class FairSlots:
    """The job slots, handed out first come, first served, at most ``per_user`` to one user.

    A semaphore's interface (``acquire(blocking, timeout)``, ``release()``) plus ``user=``: a
    caller that names its user joins a queue in arrival order and gets a slot when it is the
    first waiting caller whose user holds fewer than ``per_user`` slots (a user at its limit
    lets the others behind it pass). A caller without a user (no session: a test, a script) is never
    limited, and a non-blocking request never passes anyone waiting. :meth:`waiting` tells a
    new caller its place; :meth:`step_aside` lets a long job (Tune's grid, through
    :func:`take_turn`) leave the machine to other users between two steps.

    A long job also names its network ``address``: one address holds at most
    ``per_address`` slots for long jobs, however many browsers it has (None: no limit).
    """

    def __init__(self, n: int, per_user: int, per_address: int | None = None):
        self.n, self.per_user = int(n), int(per_user)
        self.per_address = None if per_address is None else int(per_address)
        self._cond = threading.Condition()
        self._busy = 0
        self._held: dict = {}  # user -> slots held
        self._long: dict = {}  # address -> slots held by its long jobs
        self._queue: list = []  # [ticket, user, address], arrival order

    def _free_for(self, user, address=None) -> bool:
        if self._busy >= self.n:
            return False
        if user is not None and self._held.get(user, 0) >= self.per_user:
            return False
        return (
            address is None
            or self.per_address is None
            or self._long.get(address, 0) < self.per_address
        )

    @staticmethod
    def _count(counts: dict, key, step: int) -> None:
        if key is None:
            return
        counts[key] = counts.get(key, 0) + step
        if counts[key] <= 0:
            del counts[key]

    def _next(self):
        """The first waiting ticket that may take a free slot now, or None."""
        for ticket, user, address in self._queue:
            if self._free_for(user, address):
                return ticket
        return None

    def acquire(self, blocking: bool = True, timeout=None, *, user=None, address=None) -> bool:
        with self._cond:
            if not self._queue and self._free_for(user, address):
                self._take(user, address)
                return True
            if not blocking:
                return False
            ticket = object()
            self._queue.append((ticket, user, address))
            ok = self._cond.wait_for(lambda: self._next() is ticket, timeout)
            self._queue.remove(next(e for e in self._queue if e[0] is ticket))
            if ok:
                self._take(user, address)
            self._cond.notify_all()  # the next one may be free to go too
            return ok

    def _take(self, user, address=None):
        self._busy += 1
        self._count(self._held, user, 1)
        self._count(self._long, address, 1)

    def release(self, *, user=None, address=None) -> None:
        with self._cond:
            if self._busy <= 0:
                raise ValueError("released more job slots than were taken")
            self._busy -= 1
            if user is not None and self._held.get(user):
                self._count(self._held, user, -1)
            if address is not None and self._long.get(address):
                self._count(self._long, address, -1)
            self._cond.notify_all()

    def idle(self) -> bool:
        """Whether no slot is held and nobody waits: background work may start a piece."""
        with self._cond:
            return self._busy == 0 and not self._queue

    def waiting(self) -> int:
        """Callers waiting for a slot."""
        with self._cond:
            return len(self._queue)

    def others_active(self, user) -> bool:
        """Whether anybody but ``user`` holds a slot or waits for one."""
        with self._cond:
            return bool(self._queue) or self._busy > self._held.get(user, 0)

    def step_aside(self, user, max_wait: float, address=None) -> None:
        """For a long job between two steps: give the slot back and take one again only when
        nobody else holds or waits for one (their short jobs then have the machine, not only
        a slot: a fit uses both cores), or after ``max_wait`` seconds (the long job still
        moves on a busy server)."""
        self.release(user=user, address=address)
        with self._cond:
            self._cond.wait_for(
                lambda: not self._queue and self._busy <= self._held.get(user, 0), max_wait
            )
        self.acquire(user=user, address=address)


@st.cache_resource
def job_slots() -> FairSlots:
    """The server's ``MAX_JOBS`` slots (:class:`FairSlots`; :func:`job_slot` holds one)."""
    # A resource, not a module global: Streamlit may re-import this module, the slots stay one.
    return FairSlots(MAX_JOBS, PER_USER, LONG_PER_ADDRESS)


def current_user():
    """Who a computation is for: the browser (its XSRF cookie, the same in all its tabs), else
    the session; None outside a session's script."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    try:
        cookie = st.context.cookies.get("_streamlit_xsrf")
    except Exception:  # no request context (tests): the session alone
        cookie = None
    return ("browser", cookie) if cookie else ("session", ctx.session_id)


def current_address():
    """The network address a computation is for; None outside a session's script.

    Behind proxies (``SBLR_CLIENT_ADDRESS_HEADER`` names the header they write, e.g.
    ``X-Forwarded-For``): the address the trusted proxies appended
    (:func:`forwarded_client`, ``SBLR_TRUSTED_PROXIES`` of them, default 1), never an entry
    the client wrote. Else, or when the header does not hold as many entries, the
    connection's own peer ("local" for localhost).
    """
    if get_script_run_ctx() is None:
        return None
    header = os.environ.get("SBLR_CLIENT_ADDRESS_HEADER", "").strip()
    try:
        if header:
            address = forwarded_client(st.context.headers.get_all(header), _trusted_proxies())
            if address:
                return address
        return st.context.ip_address or "local"
    except Exception:  # no request context (tests): every session one address
        return "local"


def _trusted_proxies() -> int:
    """``SBLR_TRUSTED_PROXIES``: the proxies in front of the server that append to the header
    (default 1, the one proxy of docs/hosting.md; 0: the header is not trusted)."""
    text = os.environ.get("SBLR_TRUSTED_PROXIES", "").strip() or "1"
    try:
        return max(0, int(text))
    except ValueError:  # a setting that says nothing usable: trust no header
        _log.error("SBLR_TRUSTED_PROXIES=%r is not a number of proxies; trusting none", text)
        return 0


def forwarded_client(values, proxies: int) -> str | None:
    """The client's address in a forwarding header (``X-Forwarded-For``) that ``proxies``
    trusted proxies wrote, or None when it cannot be told.

    Each proxy appends the address it received the request from, so the client's address is
    the ``proxies``-th entry from the right, appended by the outermost trusted proxy; every
    entry left of it was written by the client, who can write anything (MDN's "trusted proxy
    count"). ``values``: the header's lines, in order, read as one list. Fewer entries than
    proxies (a request that did not pass them all), or ``proxies`` 0: None.

    >>> forwarded_client(["6.6.6.6, 203.0.113.9", "10.0.0.2"], 2)
    '203.0.113.9'
    >>> forwarded_client(["203.0.113.9"], 2) is None
    True
    """
    entries = [entry.strip() for value in values for entry in str(value).split(",")]
    if proxies <= 0 or len(entries) < proxies:
        return None
    return entries[-proxies] or None


_held = threading.local()


@contextlib.contextmanager
def job_slot(*, wait: bool = False, long: bool = False):
    """Hold one of the server's ``MAX_JOBS`` job slots for a heavy computation.

    Re-entrant per thread (a cached function calling another holds one slot). Without
    ``wait`` it raises :class:`ServerBusy` when every slot is taken (used inside cached
    functions: :func:`waiting_for_worker` retries them, showing that it waits); with
    ``wait`` it blocks, showing a "waiting for a free worker" spinner. ``long``: a job of
    seconds to minutes (Tune, stability), counted against its network address too
    (``LONG_PER_ADDRESS``), so more browser profiles do not give one person more slots.
    """
    if getattr(_held, "depth", 0):
        _held.depth += 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    slots = job_slots()
    user = current_user()
    address = current_address() if long else None
    if not slots.acquire(blocking=False, user=user, address=address):
        if not wait:
            raise ServerBusy
        _wait_for_slot(slots, user, address)
    _held.depth, _held.user, _held.address = 1, user, address
    try:
        yield
    finally:
        _held.depth = 0
        slots.release(user=user, address=address)


def _busy_text(ahead: int) -> str:
    place = (
        f"{ahead} computation{'s' if ahead != 1 else ''} of other users before yours"
        if ahead
        else "yours is next"
    )
    return (
        f"Waiting for a free worker: the server is computing for other users (at most "
        f"{MAX_JOBS} computations run at once, first come first served; {place})…"
    )


def _wait_for_slot(slots, user, address=None):
    """Block until ``user`` gets a slot, showing its place in the queue.

    The spinner's exit draws (it removes itself), and a script that draws while a rerun is
    requested stops right there: a slot taken just before that must go back, or it is held
    forever. (A user moving the λ slider while waiting did exactly this; two such leaks left
    the server with no slot and every page waiting.)"""
    taken = False
    try:
        with st.spinner(_busy_text(slots.waiting())):  # all of them arrived first
            taken = slots.acquire(user=user, address=address)
    except BaseException:
        if taken:
            slots.release(user=user, address=address)
        raise


def stop_if_rerun_requested() -> None:
    """A checkpoint inside a long computation that draws nothing (a Compare fold's grid
    search): when the user has asked for another run (Cancel, a widget moved), end this run
    here, as the next drawing would, so the computation stops at once and its job slot goes
    back (the ``with job_slot()`` around it exits). Nothing outside a script run."""
    check = get_run_yield_check() if get_run_yield_check is not None else None
    if check is not None:
        check()


#: Longest a long job stands aside at one step while other users compute (seconds).
STEP_ASIDE_SECONDS = 2.0


def take_turn() -> None:
    """Between two steps of a long job that holds a slot (Tune's grid points, stability's
    resamples): while other users compute or wait, give the slot back and go on only when
    they are done (at most ``STEP_ASIDE_SECONDS`` a step), so a short view of another user
    neither waits for a whole grid nor shares the cores with it. Nothing happens when the
    server is otherwise idle."""
    if getattr(_held, "depth", 0) != 1:
        return
    slots = job_slots()
    user = getattr(_held, "user", None)
    if slots.others_active(user):
        slots.step_aside(user, STEP_ASIDE_SECONDS, getattr(_held, "address", None))


def waiting_for_worker(func):
    """``func`` (a cached function whose body holds a :func:`job_slot`), with a slot taken in
    turn (first come, first served) when the server is busy, and a visible "waiting" spinner
    that says the place in the queue; cache hits never wait."""

    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except ServerBusy:
            pass
        slots, user = job_slots(), current_user()
        _wait_for_slot(slots, user)
        # the slot is this thread's now: the job_slot inside func takes it over (re-entrant)
        _held.depth, _held.user, _held.address = 1, user, None
        try:
            return func(*args, **kwargs)
        finally:
            _held.depth = 0
            slots.release(user=user)

    return call


@contextlib.contextmanager
def error_boundary(*, stop: bool = False):
    """Show what went wrong in the page's body as text, never as a traceback.

    A :class:`~sblr.DataError` (a problem with the data or the settings) shows its message;
    anything else a generic message, the traceback going to the server log. Streamlit's own
    control flow (``st.stop``, ``st.rerun``, ``st.switch_page``) is not an ``Exception`` and
    passes through. ``stop=True`` ends the run after showing the error.
    """
    try:
        yield
    except DataError as exc:
        st.error(esc_md(exc))
        if stop:
            st.stop()
    except Exception as exc:
        _log.exception("dashboard page failed")
        st.error(
            f"Something went wrong while computing this page ({type(exc).__name__}). "
            "Try other settings or other data; the details are in the server's log."
        )
        if stop:
            st.stop()


#: Modules imported since the last freeze (a page's first visit imports its libraries) that
#: make :func:`settle_garbage_collector` freeze again.
_FREEZE_AFTER_MODULES = 100
_frozen_at = 0  # modules imported at the last freeze
_freeze_lock = threading.Lock()


def settle_garbage_collector() -> bool:
    """Move every object alive now to the collector's permanent generation (``gc.freeze``),
    once after start-up and again whenever pages have imported ``_FREEZE_AFTER_MODULES`` more
    modules; returns whether it did.

    A full collection walks every tracked object. After a visit of four pages the server holds
    about 190,000 of them, nearly all the imported libraries' and never garbage, and a full
    collection took 0.18-0.30 s: it fell, now and then, into a slider move whose budget is
    0.3 s. Frozen objects are no longer walked (a full collection then takes milliseconds).
    A collection first, so that no garbage is frozen; a frozen object that later becomes
    garbage in a reference cycle is not reclaimed, which bounds what this may keep to what was
    alive at a few moments early in the server's life. That collection (0.2-0.3 s, holding the
    GIL) is paid at those moments only: the end of the first run and of a page's first visit,
    which import libraries and are slow anyway.
    """
    global _frozen_at
    with _freeze_lock:
        modules = len(sys.modules)
        if modules - _frozen_at < _FREEZE_AFTER_MODULES:
            return False
        _frozen_at = modules
        gc.collect()
        gc.freeze()
        return True


def _prepare_compiled_solver():
    from sblr.logistic import prepare_compiled_solver  # lazy: numba's compile, in a thread

    try:
        prepare_compiled_solver()
    except Exception:  # the first SparseSBLR fit will try again, and show what fails
        _log.exception("preparing SparseSBLR's compiled solver failed")


@st.cache_resource
def compiled_solver() -> threading.Thread:
    """A thread, started once per server, that compiles or loads SparseSBLR's compiled solver
    (:func:`sblr.logistic.prepare_compiled_solver`): app.py starts it after its first run,
    so that the first SparseSBLR fit does not wait for it (on a fresh install the compilation
    takes 5-10 s, once; numba releases the GIL for most of it)."""
    thread = threading.Thread(
        target=_prepare_compiled_solver, name="sblr-compiled-solver", daemon=True
    )
    thread.start()
    return thread


def wait_for_compiled_solver() -> None:
    """Before a SparseSBLR fit that a page waits for: if the compiled solver is not loaded
    yet (a fresh install, seconds after the server started), say so while it is prepared."""
    from sblr.logistic import compiled_solver_ready  # lazy: as _prepare_compiled_solver

    if not compiled_solver_ready():
        with st.spinner(
            "Preparing SparseSBLR's compiled solver (the first time on this machine it is "
            "compiled: 5-10 s, once)…"
        ):
            compiled_solver().join()
