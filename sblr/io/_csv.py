"""CSV-like text: the separator, the header row, and the rows.

The separator and the header row are settled first, from the first rows read by
``csv.reader`` (:func:`csv_layout`).  Then the values come from exactly one path, chosen by
the shape of the file before anything is parsed:

* a file with at most :data:`WIDE_COLUMNS_PER_ROW` columns per row: pandas' C parser
  (:func:`parse_columns`).  When pandas refuses the file, the line reader reads it again
  only to raise the exact :class:`DataError` (:func:`diagnose`), never for its values;
* a wider file: the line reader (:func:`read_rows`, ``csv.reader`` line by line), the same
  pass that words pandas' refusals.

Both give the same cells for the same file (tests/test_io.py compares them on 400
generated files).
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from sblr.exceptions import DataError
from sblr.io._dataset import (
    CHUNK_CELLS,
    FALSE_TOKENS,
    MISSING,
    MULTILABEL,
    NA_TOKENS,
    SAMPLE_ROWS,
    TRUE_TOKENS,
    TYPO_SHARE,
    Table,
    check_label_count,
    chunks,
    factorize,
    header_names,
    preview,
    to_floats,
)
from sblr.io._encoding import (
    targets_from_spec,
)
from sblr.io._limits import (
    WIDE_COLUMNS_PER_ROW,
    check_dense,
    describe,
    row_limit,
)

_CSV_ADVICE = (
    "Check that every row has the same number of values, separated by commas, semicolons or tabs."
)


@dataclass
class CsvLayout:
    """Separator, column names and the first rows of a CSV file (read once)."""

    sep: str
    names: list[str]
    has_header: bool
    head: list[tuple[int, list[str]]]  # the data rows read so far: (line, cells)
    rest: Iterator[tuple[int, list[str]]]
    notes: list[str]
    repeated: dict[str, list[int]]
    spans: list[tuple[int, int]]  # (first, last) lines of the rows read that span lines


def csv_layout(text: str, *, header: bool, ext: str) -> CsvLayout:
    """Read the header and up to ``SAMPLE_ROWS`` rows: enough to name the columns."""
    sep = "\t" if ext == ".tsv" else _detect_separator(text)
    spans: list[tuple[int, int]] = []
    rows = csv_rows(text, sep, spans)
    head = list(itertools.islice(rows, SAMPLE_ROWS + 1))
    if not head:
        raise DataError("The file is empty. Choose a file with data in it.")
    notes: list[str] = []
    first = head[0][1]
    has_header = header
    if header and _first_row_is_data(first, [cells for _, cells in head[1:]], sep):
        shown = preview(first, 5)
        if ext == ".data":
            has_header = False
            notes.append(
                f"the first row ({shown}) looks like data, not column names, and .data files "
                "(UCI style) have no header row: read it as data and named the columns 0, 1, ... "
                "(if it is a header row, save the file as .csv)"
            )
        else:
            notes.append(
                f"the first row, used as column names, looks like data ({shown}): if the file "
                "has no header row, load it with header=False"
            )
    if has_header:
        names, repeated = header_names(first)
        head = head[1:]
        if repeated:
            renamed = [names[i] for positions in repeated.values() for i in positions[1:]]
            notes.append(
                f"column name(s) {preview(list(repeated), 5)} appear more than once in the "
                f"header: renamed the repeats {preview(renamed, 5)}"
            )
    else:
        names, repeated = [str(i) for i in range(len(first))], {}
    return CsvLayout(sep, names, has_header, head, rows, notes, repeated, spans)


def csv_names(text: str, *, header: bool, ext: str) -> list[str]:
    """Column names of a CSV file from its first rows (all rows only if the last
    column may be an empty one left by delimiters at line ends)."""
    layout = csv_layout(text, header=header, ext=ext)
    if _may_be_empty_last(layout):
        return read_csv(text, header=header, ext=ext).names
    return layout.names


def _may_be_empty_last(layout: CsvLayout) -> bool:
    if len(layout.names) < 2:
        return False
    if layout.has_header and not layout.names[-1].startswith("Unnamed:"):
        return False
    last = len(layout.names) - 1
    return all(len(cells) <= last or cells[last] in NA_TOKENS for _, cells in layout.head)


def read_csv(text: str, *, header: bool, ext: str) -> Table:
    """The cells of a CSV file as a :class:`Table`, from one value path chosen by the shape
    of the file (see the module docstring): pandas' C parser, or for a wide file the line
    reader."""
    layout = csv_layout(text, header=header, ext=ext)
    names, width = layout.names, len(layout.names)
    decimal_comma = layout.sep == ";"
    n_lines = _line_bound(text)
    check_dense(_rows_at_most(text, layout, n_lines), width, "the CSV data")
    if is_wide(width, n_lines):
        values, texts, line_of = read_rows(text, layout, n_lines, decimal_comma)
    else:
        values, texts, line_of = parse_columns(text, layout, decimal_comma)
    table = Table(
        list(names),
        ["numeric"] * width,
        [None] * width,
        values,
        line_of,
        notes=layout.notes,
        repeated=layout.repeated,
    )
    for j, (codes, distinct) in texts.items():
        _text_column(table, j, codes, distinct, decimal_comma)
    _drop_trailing_empty(table, layout.has_header)
    if layout.spans:
        shown = ", ".join(f"{a}–{b}" for a, b in layout.spans[:5])
        shown += " and more" if len(layout.spans) > 5 else ""
        table.notes.append(
            f"{len(layout.spans)} quoted value(s) run over several lines (lines {shown}), each "
            'read as one value: if that is not meant, look for a stray quote (")'
        )
    return table


def _rows_at_most(text: str, layout: CsvLayout, n_lines: int) -> int:
    """The number the limits checked before parsing are given: the file's data lines, or,
    when they are more than the load's row limit (``max_rows``), its rows counted one by one
    (a quoted value over several lines is one row), the count stopping one past the limit:
    790,000 rows of empty cells were parsed (13 s, 3.5 GB) before the dashboard could refuse
    them; counted, they are refused in under a second."""
    lines = n_lines - (1 if layout.has_header else 0)
    limit = row_limit()
    if limit is None or lines <= limit:
        return lines
    rows = csv_rows(text, layout.sep)
    if layout.has_header:
        next(rows, None)
    return sum(1 for _ in itertools.islice(rows, limit + 1))


def _line_bound(text: str) -> int:
    """At least the number of rows of ``text``: its lines, old Mac line ends counted."""
    return text.count("\n") + (text.count("\r") if "\r" in text else 0) + 1


def is_wide(width: int, n_lines: int) -> bool:
    """Whether a file with ``width`` columns over ``n_lines`` lines is read line by line: more
    than :data:`WIDE_COLUMNS_PER_ROW` columns per row (pandas' cost per column outweighs its
    speed per cell)."""
    return width > WIDE_COLUMNS_PER_ROW * max(n_lines - 1, 1)


def read_rows(text: str, layout: CsvLayout, n_lines: int, decimal_comma: bool):
    """``(values, texts, line_of)`` of every row, read line by line (:func:`csv_rows`): the
    value path of wide files, and the pass that finds what makes pandas refuse a file
    (:func:`diagnose`): it raises the exact :class:`DataError`.  ``texts`` holds the text
    columns as ``(codes, distinct)``: each cell's index into the column's distinct texts, -1
    for a missing cell."""
    width = len(layout.names)
    values = np.empty((n_lines, width))
    line_of = np.empty(n_lines, dtype=np.int64)
    texts: dict[int, list[np.ndarray]] = {}  # cells of the text columns, chunk by chunk
    late: set[int] = set()  # columns found to be text after their first chunk
    r = 0
    size = max(64, CHUNK_CELLS // max(width, 1))
    for cells, lines in _row_blocks(itertools.chain(layout.head, layout.rest), width, size):
        line_of[r : r + len(lines)] = lines
        numbers, bad = to_floats(_decimal_points(cells) if decimal_comma else cells)
        values[r : r + len(lines)] = numbers
        for j in np.flatnonzero(bad.any(axis=0)).tolist():
            if j not in texts and j not in late:
                if r:
                    late.add(j)
                else:
                    texts[j] = []
        for j, parts in texts.items():
            parts.append(cells[:, j])
        r += len(lines)
    values, line_of = values[:r], line_of[:r]
    if late:
        texts.update(_csv_columns(text, layout, sorted(late), r))
    return values, {j: factorize(np.concatenate(parts)) for j, parts in texts.items()}, line_of


def _row_blocks(rows: Iterator, width: int, size: int) -> Iterator[tuple[np.ndarray, list]]:
    """Blocks of ``size`` rows from :func:`csv_rows`: their cells (missing = NaN) and lines."""
    for chunk in chunks(rows, size):
        cells = np.full((len(chunk), width), MISSING, dtype=object)
        for i, (line_no, row) in enumerate(chunk):
            if len(row) > width:
                raise DataError(
                    f"Could not read the CSV file: line {line_no} has {len(row)} values, more "
                    f"values than there are column names ({width}). {_CSV_ADVICE}"
                )
            cells[i, : len(row)] = [MISSING if c in NA_TOKENS else c for c in row]
        yield cells, [line_no for line_no, _ in chunk]


def parse_columns(text: str, layout: CsvLayout, decimal_comma: bool):
    """:func:`read_rows`'s ``(values, texts, line_of)`` from pandas' C parser: the value path
    of every CSV file that is not wide.  A file it refuses (a row with more values than
    column names, a quote never closed) goes to :func:`diagnose`, which raises the exact
    :class:`DataError`.

    pandas parses the numeric columns as floats (the missing-value markers are its NA
    values); a column it leaves as text is converted as :func:`read_rows` converts it (cells
    stripped, then the markers, the decimal comma, the typo rule), each distinct cell once.
    ``line_of`` is a function: the lines are looked up only when a message names one."""
    import pandas as pd

    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii():
        # a line of other blanks (no-break spaces...) is no row, as a line of spaces is and as
        # the line reader has it; pandas would read a row of missing values (a line of tabs
        # stays one: tabs separate its values)
        text = (_OTHER_BLANKS_TSV if layout.sep == "\t" else _OTHER_BLANKS).sub("", text)
    width = len(layout.names)
    options: dict[str, Any] = dict(
        sep=layout.sep,
        header=0 if layout.has_header else None,  # the header row, replaced by `names`
        names=range(width),
        index_col=False,
        # spaces after a separator are stripped below; skipped here only where a quote may
        # follow them (as csv.reader skips them): skipping costs pandas a fifth of its time.
        # A space first: one character is found at memchr's speed, the pair took 37 ms (9 MB)
        skipinitialspace=" " in text and f"{layout.sep} " in text,
        skip_blank_lines=True,
        na_values=sorted(NA_TOKENS),
        keep_default_na=False,
        decimal="," if decimal_comma else ".",
        low_memory=True,  # chunk by chunk; a column whose chunks differ is read again whole
        engine="c",
        encoding="utf-8",
    )
    if layout.sep == r"\s+":
        options["quoting"] = csv.QUOTE_NONE  # the line reader splits on spaces only
    # bytes: pandas reads a StringIO chunk by chunk, encoding each (0.04 s here)
    data = text.encode("utf-8")
    try:
        frame = _pandas_frame(pd, data, options)
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError, IndexError) as exc:
        raise diagnose(text, layout, decimal_comma, exc) from None
    n_rows = len(frame)
    values = np.empty((n_rows, width), order="F")  # filled column by column
    numeric = [j for j in range(width) if frame[j].dtype.kind in "fiu"]
    for j in numeric:
        values[:, j] = frame[j].to_numpy()
    texts: dict[int, tuple[np.ndarray, list[str]]] = {}
    over_lines = False  # a quoted value over several lines
    for j in sorted(set(range(width)) - set(numeric)):
        codes, distinct, multiline = _clean_cells(frame[j])
        over_lines = over_lines or multiline
        numbers, bad = _distinct_numbers(distinct, decimal_comma)
        values[:, j] = numbers[codes]
        if bad[codes].any():
            texts[j] = (codes, distinct)
    # pandas reads a line of spaces as no row, like csv.reader, but one of other blanks
    # (no-break spaces) as a row of missing values: such rows are counted
    empty_rows = n_rows and np.isnan(values).all(axis=1).any()
    if over_lines or layout.spans or (empty_rows and _count_rows(text, layout) != n_rows):
        # the exact lines of the rows (csv.reader's), with those over several lines
        del layout.spans[:]
        line_of = [line for line, _ in csv_rows(text, layout.sep, layout.spans)]
        line_of = np.array(line_of[1:] if layout.has_header else line_of, dtype=np.int64)
        if len(line_of) != n_rows:
            raise DataError(
                f"Could not read the CSV file: its {len(line_of)} rows were read as {n_rows}. "
                f"{_CSV_ADVICE}"
            )
        return values, texts, line_of
    return values, texts, lambda: _nonblank_lines(text, 1 if layout.has_header else 0)


def diagnose(text: str, layout: CsvLayout, decimal_comma: bool, exc: Exception) -> DataError:
    """The error of a file pandas refused: the line reader's exact one, found by reading the
    file again line by line (:func:`read_rows` raises it), else pandas' own words."""
    read_rows(text, layout, _line_bound(text), decimal_comma)
    return DataError(f"Could not read the CSV file: {describe(exc)} {_CSV_ADVICE}")


def _pandas_frame(pd, data: bytes, options: dict):
    """pandas' parse of ``data``, chunk by chunk (a quarter faster than whole, 100,000 × 22):
    a column whose chunks came out of different types (numbers in one, text in another,
    which would be object cells half floats, "007" read as 7.0) is what pandas warns of
    (``DtypeWarning``), and then the file is read again whole, each column typed once."""
    with warnings.catch_warnings():
        # more values than names: pandas drops them with a warning
        warnings.simplefilter("error", pd.errors.ParserWarning)
        warnings.simplefilter("error", pd.errors.DtypeWarning)
        try:
            return pd.read_csv(io.BytesIO(data), **options)
        except pd.errors.DtypeWarning:
            return pd.read_csv(io.BytesIO(data), **(options | {"low_memory": False}))


def _clean_cells(column) -> tuple[np.ndarray, list[str], bool]:
    """A text column from pandas as :func:`read_rows` has it, factorized: ``(codes,
    distinct, multiline)``, each cell's index into the distinct cleaned texts (-1: missing)
    and whether a cell runs over several lines.  Cleaned as the line reader cleans: each cell
    stripped, a missing value marker (also with spaces around it) missing, ``True``/``False``
    (which pandas turns into booleans) as ``true``/``false``.  Each distinct cell is cleaned
    once (pandas' hash table; the column is never turned into Python strings)."""
    codes, found = column.factorize(use_na_sentinel=True)
    index: dict[str, int] = {}
    remap = np.full(len(found) + 1, -1, dtype=np.intp)  # code -1 (missing) stays -1
    multiline = False
    for u, cell in enumerate(found.tolist()):
        text = str(cell).lower() if isinstance(cell, (bool, np.bool_)) else str(cell).strip()
        if text not in NA_TOKENS:
            remap[u] = index.setdefault(text, len(index))
            multiline = multiline or "\n" in text
    return remap[codes], list(index), multiline


def _distinct_numbers(distinct: list[str], decimal_comma: bool) -> tuple[np.ndarray, np.ndarray]:
    """The number of each distinct text and whether it is none, each with one more entry
    (NaN, not bad) that code -1 (a missing cell) picks."""
    cells = np.array([*distinct, MISSING], dtype=object)[:, None]
    numbers, bad = to_floats(_decimal_points(cells) if decimal_comma else cells)
    return numbers[:, 0], bad[:, 0]


_BLANK_LINE = re.compile(r"\n[^\S\n]*(?=\n)")  # a line of spaces, or empty
_OTHER_BLANKS = re.compile(r"^[^\S\n]+$", re.MULTILINE)  # a line of blanks: emptied
_OTHER_BLANKS_TSV = re.compile(r"^[^\S\n\t]+$", re.MULTILINE)


def _count_rows(text: str, layout: CsvLayout) -> int:
    """The number of data rows, one per non-blank line (what pandas should have read)."""
    if layout.sep == "\t":  # a line of tabs is a row of missing values
        blank = len(re.findall(r"\n[^\S\n\t]*(?=\n)", f"\n{text}\n"))
    else:
        blank = len(_BLANK_LINE.findall(f"\n{text}\n"))
    return text.count("\n") + 1 - blank - (1 if layout.has_header else 0)


def _nonblank_lines(text: str, skip: int) -> np.ndarray:
    """The line of each data row when each non-blank line is one row (after ``skip``)."""
    lines = [i for i, line in enumerate(text.split("\n"), 1) if line.strip()]
    return np.array(lines[skip:], dtype=np.int64)


def _csv_columns(text: str, layout: CsvLayout, columns: list[int], n_rows: int) -> dict:
    """All cells of some columns, read again (columns that turned out text late)."""
    found = {j: np.full(n_rows, MISSING, dtype=object) for j in columns}
    rows = csv_rows(text, layout.sep)
    if layout.has_header:
        next(rows)
    for i, (_, row) in enumerate(rows):
        for j in columns:
            if j < len(row) and row[j] not in NA_TOKENS:
                found[j][i] = row[j]
    return {j: [cells] for j, cells in found.items()}


def csv_rows(text: str, sep: str, spans=None) -> Iterator[tuple[int, list[str]]]:
    """Rows of CSV text as (line number, stripped cells); blank lines are skipped. The first
    and last lines of rows with a quoted value over several lines go to ``spans``."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if sep == r"\s+":
        for line_no, line in enumerate(_lines(text), 1):
            if cells := line.split():
                yield line_no, cells
        return
    reader = csv.reader(_lines(text), delimiter=sep, skipinitialspace=True)
    end = 0
    for row in reader:
        start, end = end + 1, reader.line_num
        if end > start and end >= _count_lines(text) and any(c.endswith("\n") for c in row):
            # a quote opened on line `start` is never closed: the rest of the file is one cell
            raise DataError(
                f'Could not read the CSV file: line {start} opens a quoted value (") that is '
                f"never closed, so the {end - start} lines after it would be read as part of "
                "that one value. Remove the stray quote or close it."
            )
        if end > start and spans is not None:
            spans.append((start, end))
        if len(row) > 1 or (row and row[0].strip()):
            yield reader.line_num, [c.strip() for c in row]


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with their line ends (the last one given one, so that a quote
    never closed keeps it in its cell), each cut when it is needed: ``io.StringIO`` copied
    all of a 10 MB file to read its first rows."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:] + "\n"
            return
        yield text[start : end + 1]
        start = end + 1


def _count_lines(text: str) -> int:
    """The number of lines of ``text`` as :func:`_lines` gives them."""
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _decimal_points(cells: np.ndarray) -> np.ndarray:
    """Cells with a decimal comma written with a point (for ``;``-separated files)."""
    swap = np.frompyfunc(lambda c: c.replace(",", ".") if isinstance(c, str) else c, 1, 1)
    return swap(cells)


def _is_number(text: str, decimal_comma: bool = False) -> bool:
    try:
        return math.isfinite(float(text.replace(",", ".") if decimal_comma else text))
    except ValueError:
        return False


def _first_row_is_data(first: list[str], rows: list[list[str]], sep: str) -> bool:
    """Whether a first row holds data rather than names, judged on the next rows.

    It does when every cell is a number, a missing value or (over a text column)
    one of the column's own values, and a number stands over a numeric column.
    """
    decimal_comma = sep == ";"
    evidence = not rows  # alone, a row of numbers is data
    for j, cell in enumerate(first):
        if cell in NA_TOKENS:
            continue
        if _is_number(cell, decimal_comma):
            if not evidence:
                below = [r[j] for r in rows if j < len(r) and r[j] not in NA_TOKENS]
                evidence = all(_is_number(v, decimal_comma) for v in below)
        elif not any(j < len(r) and r[j] == cell for r in rows):
            return False
    return evidence


def _text_column(
    table: Table, j: int, codes: np.ndarray, texts: list[str], decimal_comma: bool
) -> None:
    """Turn column ``j`` of a CSV table into a text column (codes in ``values``), given each
    cell's index into the distinct texts ``texts`` (-1: a missing cell).

    A column of numbers with a few non-numbers is recorded in ``table.typos``.
    """
    n_present = int((codes >= 0).sum())
    not_numbers = np.flatnonzero(_distinct_numbers(texts, decimal_comma)[1][codes])
    if n_present - len(not_numbers) >= 2 and len(not_numbers) <= max(1, n_present // TYPO_SHARE):
        table.typos[j] = [(i, texts[codes[i]]) for i in not_numbers.tolist()]
    lowered = {t.lower() for t in texts}
    if lowered <= TRUE_TOKENS | FALSE_TOKENS and len(lowered) <= 2:
        texts = [t.lower() for t in texts]
    categories = sorted(set(texts))
    code = {c: float(k) for k, c in enumerate(categories)}
    table.values[:, j] = np.array([code[t] for t in texts] + [np.nan])[codes]
    table.kinds[j] = "text"
    table.categories[j] = categories


def _drop_trailing_empty(table: Table, has_header: bool) -> None:
    """Drop empty last columns left by delimiters at the end of every line."""
    dropped = []
    while len(table.names) > 1 and np.isnan(table.values[:, -1]).all():
        if has_header and not table.names[-1].startswith("Unnamed:"):
            break
        dropped.append(table.names.pop())
        table.kinds.pop()
        table.categories.pop()
        table.values = table.values[:, :-1]
    if dropped:
        table.notes.append(f"dropped empty column(s) {preview(dropped)} (delimiters at line ends)")


def _first_lines(text: str, n: int) -> list[str]:
    """The first ``n`` non-blank lines (with their line ends), read from the start of the
    text only (``io.StringIO`` of a 10 MB file copied all of it first)."""
    size = 1 << 16
    while True:
        head = text[:size]
        lines = [ln for ln in io.StringIO(head) if ln.strip()]
        if len(head) < len(text):
            lines = lines[:-1]  # the last may be cut
            if len(lines) < n:
                size *= 4
                continue
        return lines[:n]


def _detect_separator(text: str) -> str:
    """Pick the separator used consistently on the first lines (``\\s+`` if none)."""
    lines = _first_lines(text, 30)
    for sep in ("\t", ";", ",", "|"):
        counts = {ln.count(sep) for ln in lines}
        if len(counts) == 1 and counts.pop() > 0:
            return sep
    for sep in (",", ";", "\t"):
        if sum(sep in ln for ln in lines) > len(lines) / 2:
            return sep
    return r"\s+" if any(len(ln.split()) > 1 for ln in lines) else ","


def csv_targets(table: Table, target, n_labels) -> tuple[str, list[int]]:
    names = table.names
    if target is not None:
        return targets_from_spec(target, names, table.repeated)
    if n_labels is not None:
        count = check_label_count(n_labels, len(names), "n_labels")
        return MULTILABEL, list(range(len(names) - count, len(names)))
    raise DataError(
        "Choose the target of this CSV file: one class column (target='name' or a position, "
        "multi-class) or a list of 0/1 label columns (multi-label). "
        f"Available columns: {preview(names)}."
    )
