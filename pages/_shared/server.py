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

from pages._shared.formatting import esc
from sblr import DataError

__all__ = [
    "MAX_JOBS",
    "ServerBusy",
    "UserJobs",
    "compiled_solver",
    "error_boundary",
    "job_slot",
    "job_slots",
    "settle_garbage_collector",
    "user_jobs",
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


@st.cache_resource
def job_slots():
    """The server's ``MAX_JOBS`` slots (a semaphore; :func:`job_slot` holds one)."""
    # A resource, not a module global: Streamlit may re-import this module, the slots stay one.
    return threading.BoundedSemaphore(MAX_JOBS)


class UserJobs:
    """How many computations for users hold a job slot (:func:`job_slot`) right now: the
    work-ahead thread starts its next fit only when there are none, so that a user's own fit
    has the cores to itself.  (On 174 labels it used to start the next λ of its ring at once,
    and a λ change the user fitted meanwhile took 0.7-1.0 s instead of 0.45 s.)"""

    def __init__(self):
        self._count = 0
        self._none = threading.Condition()

    def enter(self):
        with self._none:
            self._count += 1

    def leave(self):
        with self._none:
            self._count -= 1
            if not self._count:
                self._none.notify_all()

    def wait_until_none(self, timeout=None) -> bool:
        """Block until no user computation holds a slot; False if ``timeout`` ran out."""
        with self._none:
            return self._none.wait_for(lambda: not self._count, timeout)


@st.cache_resource
def user_jobs() -> UserJobs:
    """The server's one :class:`UserJobs` (a resource, like :func:`job_slots`)."""
    return UserJobs()


_held = threading.local()


@contextlib.contextmanager
def job_slot(*, wait: bool = False):
    """Hold one of the server's ``MAX_JOBS`` job slots for a heavy computation.

    Re-entrant per thread (a cached function calling another holds one slot). Without
    ``wait`` it raises :class:`ServerBusy` when every slot is taken (used inside cached
    functions: :func:`waiting_for_worker` retries them, showing that it waits); with
    ``wait`` it blocks, showing a "waiting for a free worker" spinner.
    """
    if getattr(_held, "depth", 0):
        _held.depth += 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    slots = job_slots()
    if not slots.acquire(blocking=False):
        if not wait:
            raise ServerBusy
        with st.spinner(_BUSY_TEXT):
            slots.acquire()
    _held.depth = 1
    users = user_jobs()
    users.enter()
    try:
        yield
    finally:
        users.leave()
        _held.depth = 0
        slots.release()


_BUSY_TEXT = (
    "Waiting for a free worker: the server is computing for other users "
    f"(at most {MAX_JOBS} computations run at once)…"
)


def waiting_for_worker(func):
    """``func`` (a cached function whose body holds a :func:`job_slot`), retried while the
    server is busy, with a visible "waiting" spinner; cache hits never wait."""

    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except ServerBusy:
            pass
        with st.spinner(_BUSY_TEXT):
            while True:
                slots = job_slots()
                if slots.acquire(timeout=0.5):  # a slot is free: give it back and retry
                    slots.release()
                    try:
                        return func(*args, **kwargs)
                    except ServerBusy:
                        continue

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
        st.error(esc(exc))
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
    from sblr.logistic import prepare_compiled_solver

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
    from sblr.logistic import compiled_solver_ready

    if not compiled_solver_ready():
        with st.spinner(
            "Preparing SparseSBLR's compiled solver (the first time on this machine it is "
            "compiled: 5-10 s, once)…"
        ):
            compiled_solver().join()
