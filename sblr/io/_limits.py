"""How much a load may take: the memory limit of the matrices a file would build, the
number of rows it may hold, and the error boundary that turns whatever a parser raises into a
:class:`~sblr.DataError`.
"""

from __future__ import annotations

import csv
import numbers
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import arff

from sblr.exceptions import DataError
from sblr.io._dataset import (
    shorten,
)

#: Memory budget of the loader in MiB.  A file is refused with a DataError when a
#: matrix built from it would need more: ``rows × columns × 8`` bytes for a dense
#: matrix, 16 bytes per stored value (value, row and column) for a sparse one.
MAX_DENSE_MB = 2048


_SPARSE_ENTRY_BYTES = 16

#: Columns per row beyond which a dense file (CSV, dense ARFF) is read line by line, not by
#: pandas: pandas builds one Series per column (about 50 µs each), the line reader costs about
#: 1 µs per cell, so pandas pays from about 50 rows per column up. 100,000 attributes × 5 rows
#: of ARFF: 4.8 CPU-s through pandas, 0.6 line by line; 50,000 CSV columns × 5 rows: 9.7 and
#: 0.8 (python -m benchmarks.io_read --wide).
WIDE_COLUMNS_PER_ROW = 50


# Failures of parsers on hostile input; the public functions turn them into DataError.
_PARSER_ERRORS = (
    ValueError,
    KeyError,
    IndexError,
    OverflowError,
    TypeError,
    UnicodeError,
    arff.ArffException,
    csv.Error,
)


_SERVER_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?[\\/](?:[\w.-]+[\\/])+[\w.-]*")


@contextmanager
def reading(what: str) -> Iterator[None]:
    """The error boundary of the public functions: whatever a parser raises on a
    hostile file becomes a DataError (its message never holds a server path)."""
    try:
        yield
        return
    except DataError:
        raise
    except MemoryError:
        message = (
            f"Not enough memory to read the {what}: it is too large for this machine. "
            "Use a smaller file (fewer rows or columns), or store sparse data as sparse ARFF."
        )
    except RecursionError:
        message = f"The {what} is nested too deeply to be read. Check that it is a valid file."
    except _PARSER_ERRORS as exc:
        raise DataError(f"Could not read the {what}: {describe(exc)}") from exc
    # Raised outside the handler so that the MemoryError's frames (and arrays) are freed.
    raise DataError(message)


_FEWER = "Use fewer rows or columns, or store sparse data as sparse ARFF ({index value, ...} rows)."


#: The size limit of the load running now, if :func:`load_dataset` was given one.
_LIMIT_MB: ContextVar[float | None] = ContextVar("sblr_io_limit_mb", default=None)
#: The row limit of the load running now, if :func:`load_dataset` was given one.
_MAX_ROWS: ContextVar[int | None] = ContextVar("sblr_io_max_rows", default=None)


def valid_max_rows(max_rows) -> int | None:
    """``max_rows`` of :func:`load_dataset` as an int (None: no limit), else ValueError."""
    if max_rows is None:
        return None
    if isinstance(max_rows, bool) or not isinstance(max_rows, numbers.Integral) or max_rows < 1:
        raise ValueError(f"max_rows must be a positive whole number; got {max_rows!r}.")
    return int(max_rows)


@contextmanager
def size_limit(limit_mb: float | None, max_rows: int | None = None) -> Iterator[None]:
    """The limits of one load: ``limit_mb`` for the matrices it builds, ``max_rows`` for the
    rows of its file (None: no limit)."""
    token, rows_token = _LIMIT_MB.set(limit_mb), _MAX_ROWS.set(max_rows)
    try:
        yield
    finally:
        _MAX_ROWS.reset(rows_token)
        _LIMIT_MB.reset(token)


def row_limit() -> int | None:
    """The most rows the load running now may read (:func:`size_limit`), or None."""
    return _MAX_ROWS.get()


def check_rows(n_rows: int, what: str) -> None:
    """Refuse, before its values are parsed, a file with more rows than the load's
    ``max_rows`` (``n_rows``: its rows, or as many as were counted before the count stopped
    past the limit)."""
    limit = _MAX_ROWS.get()
    if limit is not None and n_rows > limit:
        raise DataError(
            f"The file is too long to load: {what} has more than {limit:,} rows, this load's "
            "limit. Use fewer rows, or a sample of them."
        )


def _package_limit() -> float:
    """:data:`MAX_DENSE_MB` as set on :mod:`sblr.io` (users set ``sblr.io.MAX_DENSE_MB``)."""
    import sblr.io

    return sblr.io.MAX_DENSE_MB


def _check_memory(n_bytes: float, what: str, advice: str = _FEWER) -> None:
    """Refuse, before allocating, a matrix larger than the load's limit (:data:`MAX_DENSE_MB`
    unless :func:`load_dataset` was given ``max_dense_mb``)."""
    needed = n_bytes / 2**20
    limit = _LIMIT_MB.get()
    if limit is None:
        limit, which = _package_limit(), "the loader's limit"
        source = " (sblr.io.MAX_DENSE_MB)"
    else:
        which, source = "this load's limit", ""
    if needed > limit:
        raise DataError(
            f"The file is too large to load: {what} would need {needed:,.1f} MB, more than "
            f"{which} of {limit:,g} MB{source}. {advice}"
        )


def check_dense(n_rows: int, n_columns: int, what: str, advice: str = _FEWER) -> None:
    """Refuse, before allocating, a dense matrix over the load's limits: more rows than
    ``max_rows`` (``n_rows`` is the number of rows, never a bound on it), or more memory."""
    check_rows(n_rows, what)
    _check_memory(
        8.0 * n_rows * n_columns,
        f"{what} ({n_rows:,} rows × {n_columns:,} columns, dense)",
        advice,
    )


def check_sparse(n_entries: int, n_rows: int, n_columns: int, what: str) -> None:
    """As :func:`check_dense`, for a sparse matrix of ``n_entries`` stored values."""
    check_rows(n_rows, what)
    _check_memory(
        float(_SPARSE_ENTRY_BYTES) * n_entries,
        f"{what} ({n_rows:,} rows × {n_columns:,} columns, {n_entries:,} stored values)",
    )


def describe(exc: BaseException) -> str:
    """``str(exc)`` for a message: short, without server paths (liac-arff exceptions
    can fail to produce one)."""
    try:
        text = str(exc).strip()
    except (TypeError, ValueError):
        text = ""
    text = shorten(_SERVER_PATH.sub("<path>", text), 300)
    return text or type(exc).__name__
