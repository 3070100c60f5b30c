"""The dashboard's stores for work that draws its own progress (fits, λ paths, stability):
a least-recently-used map bounded in items and bytes, computing a missing item once when
several sessions ask at the same time, the progress bar such work draws, and the one wait for
SparseSBLR's compiled solver (:func:`solver_ready`, which ``heavy`` calls too). Streamlit's own
caches (``pages._shared.cache.heavy``) hold everything else: a UI element drawn inside a
cached function would be replayed on every cache hit.
"""

from __future__ import annotations

import threading

import numpy as np
import streamlit as st

from pages._shared import server

__all__ = ["Group", "Progress", "Store", "nbytes"]


def nbytes(value, depth=0):
    """About how many bytes ``value`` holds in arrays: NumPy and SciPy sparse arrays, in
    tuples, lists and dicts, and in the attributes of an object (two levels deep)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if hasattr(value, "data") and hasattr(value, "indices") and hasattr(value, "indptr"):
        return value.data.nbytes + value.indices.nbytes + value.indptr.nbytes
    if depth > 2:
        return 0
    if isinstance(value, (tuple, list)):
        return sum(nbytes(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return sum(nbytes(v, depth + 1) for v in value.values())
    if hasattr(value, "__dict__"):
        return sum(nbytes(v, depth + 1) for v in vars(value).values())
    return 0


class Store:
    """A thread-safe least-recently-used map shared by every session of the server: at most
    ``size`` items and, with ``max_bytes``, at most that many bytes of arrays in all
    (:func:`nbytes`; the newest item is always kept). Items may belong to a named group with
    its own count limit (``keep``): the dashboard keeps every cached array of the server in
    one store, so one number bounds them all (``SBLR_CACHE_MB``, docs/hosting.md), and each
    kind of work (evidence, fits, a cached function) has its own count within it.
    :meth:`get_or_make` computes a missing item once when several sessions ask at the same
    time."""

    def __init__(self, size, max_bytes=None):
        self._size, self._max_bytes = size, max_bytes
        self._items, self._bytes, self._lock = {}, {}, threading.Lock()
        self._groups: dict = {}  # key -> (group, its keep) of a grouped item
        self._total = 0  # sum of self._bytes
        self._making: dict = {}  # key -> threading.Event set when its computation ends

    @property
    def total_bytes(self) -> int:
        """Bytes of arrays held now (as :func:`nbytes` counts them)."""
        return self._total

    def __len__(self):
        return len(self._items)

    def get(self, key):
        with self._lock:
            if key in self._items:
                self._items[key] = self._items.pop(key)  # most recently used last
                return self._items[key]
        return None

    def _drop(self, key):
        del self._items[key]
        self._total -= self._bytes.pop(key)
        self._groups.pop(key, None)

    def put(self, key, value, *, group=None, keep=None):
        """Keep ``value`` under ``key`` (in ``group``, of which at most ``keep`` items are
        kept), then drop the least recently used items beyond the limits."""
        size = nbytes(value) if self._max_bytes is not None else 0
        with self._lock:
            if key in self._items:
                self._drop(key)
            self._items[key], self._bytes[key] = value, size
            self._total += size
            if group is not None:
                self._groups[key] = group
                if keep is not None:
                    mine = [k for k in self._items if self._groups.get(k) == group]
                    for oldest in mine[: max(0, len(mine) - keep)]:
                        self._drop(oldest)
            while len(self._items) > 1 and (
                len(self._items) > self._size
                or (self._max_bytes is not None and self._total > self._max_bytes)
            ):
                self._drop(next(iter(self._items)))
        return value

    def clear(self, group=None):
        """Drop every item (of ``group`` only, when given)."""
        with self._lock:
            for key in [k for k in self._items if group is None or self._groups.get(k) == group]:
                self._drop(key)

    def group(self, name, keep=None) -> Group:
        """A view of this store holding at most ``keep`` items of its own, in this store's
        byte limit."""
        return Group(self, name, keep)

    def get_or_make(self, key, make, *, solver=False, group=None, keep=None):
        """The item of ``key``, made by ``make()`` if missing; a second caller while it is
        made waits for it (a failed make lets the next caller try).  ``solver``: ``make``
        fits with SparseSBLR's compiled solver (:func:`solver_ready` first)."""
        while (found := self.get(key)) is None:
            with self._lock:
                running = self._making.get(key)
                mine = running is None
                if mine:
                    running = self._making[key] = threading.Event()
            if not mine:
                running.wait()
                continue
            try:
                if solver:
                    solver_ready()
                return self.put(key, make(), group=group, keep=keep)
            finally:
                with self._lock:
                    self._making.pop(key, None)
                running.set()
        return found


class Group:
    """The items of one group of a :class:`Store` (see :meth:`Store.group`): its keys are
    the store's keys prefixed with the group's name."""

    def __init__(self, store, name, keep):
        self._store, self._name, self._keep = store, name, keep

    def get(self, key):
        return self._store.get((self._name, key))

    def put(self, key, value):
        return self._store.put((self._name, key), value, group=self._name, keep=self._keep)

    def get_or_make(self, key, make, *, solver=False):
        return self._store.get_or_make(
            (self._name, key), make, solver=solver, group=self._name, keep=self._keep
        )

    def clear(self):
        self._store.clear(self._name)


def solver_ready(quiet=False):
    """Before a computation with SparseSBLR's compiled solver: wait while it is being prepared
    (at once when it is loaded), saying so; ``quiet`` (inside a cached function, which must
    not draw): without a word.  With ``heavy(solver=...)``, the only place the dashboard
    waits for it; a page never does by hand."""
    if quiet:
        server.compiled_solver().join()
    else:
        server.wait_for_compiled_solver()


class Progress:
    """A progress bar drawn only once work actually starts (cache hits draw nothing), removed
    when the work is done; ``text(done, total)`` says what is being done."""

    def __init__(self, text):
        self._text, self._bar = text, None

    def __call__(self, done, total):
        if self._bar is None:
            self._bar = st.progress(0.0)
        self._bar.progress(done / max(total, 1), text=self._text(done, total))

    def close(self):
        if self._bar is not None:
            self._bar.empty()
