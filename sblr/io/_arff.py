"""ARFF files: the header (via liac-arff) and the ``@data`` section, dense or sparse,
straight into arrays; Mulan's XML label files.

The values of the ``@data`` section come from exactly one path, chosen by its shape before
anything is parsed (:meth:`ArffData.read`):

* sparse rows (``{index value, ...}``): the sparse builder (:meth:`ArffData.read_sparse`);
* dense rows, at most :data:`WIDE_COLUMNS_PER_ROW` attributes per row, without quotes,
  braces, ``%`` comments or string attributes: pandas' C parser
  (:meth:`ArffData.read_dense_parsed`).  When pandas refuses the rows, the line reader reads
  them again only to raise the exact :class:`DataError` (:meth:`ArffData.diagnose`);
* other dense rows (wide, or with quoted values, comments or string attributes): the line
  reader (:meth:`ArffData.read_dense_lines`), the same pass that words pandas' refusals.
"""

from __future__ import annotations

import io
import os
import re
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import arff
import numpy as np
import scipy.sparse as sp

from sblr.exceptions import DataError
from sblr.io._dataset import (
    CHUNK_CELLS,
    MEKA_C,
    MISSING,
    MULTICLASS,
    MULTILABEL,
    Table,
    check_label_count,
    chunks,
    factorize,
    preview,
    read_bytes,
    shorten,
    to_floats,
)
from sblr.io._encoding import (
    targets_from_spec,
)
from sblr.io._limits import (
    WIDE_COLUMNS_PER_ROW,
    check_dense,
    check_sparse,
    describe,
    reading,
)


def read_mulan_xml(source: str | os.PathLike | bytes | Any) -> list[str]:
    """Return the label names of a Mulan XML label file, in file order.

    All ``<label name="...">`` elements are used, including nested
    (hierarchical) ones; XML entities are decoded.

    Parameters
    ----------
    source : str, path-like, bytes or binary file-like
        The XML file.

    Returns
    -------
    list of str

    Examples
    --------
    >>> read_mulan_xml(b'<labels xmlns="http://mulan.sourceforge.net/labels">'
    ...                b'<label name="a&amp;b"></label><label name="c"/></labels>')
    ['a&b', 'c']
    """
    data, _ = read_bytes(source, None, what="XML label file")
    with reading("XML label file"):
        return _mulan_labels(data)


def _mulan_labels(data: bytes) -> list[str]:
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise DataError(
            f"The XML label file is not valid XML ({exc}). A Mulan label file looks like "
            '<labels xmlns="http://mulan.sourceforge.net/labels">'
            '<label name="..."></label>...</labels>.'
        ) from exc
    names: list[str] = []
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag.rsplit("}", 1)[-1] != "label":
            continue
        label = element.get("name")
        if label is None:
            raise DataError('The XML label file has a <label> element without a name="..."')
        if label.strip() not in names:
            names.append(label.strip())
    if not names:
        raise DataError('The XML label file has no <label name="..."> elements.')
    return names


# Tokens of an ARFF data line, as liac-arff reads the header: a value is quoted
# ('...' or "..." with backslash escapes) or has no quote, brace, comma or space.
_QUOTED = r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"


_VALUE = rf"(?:{_QUOTED}|[^,\s\"'{{}}]+)"


_DENSE_FIELD = re.compile(rf"\s*({_VALUE})?\s*(,|$)")


_SPARSE_PAIR = re.compile(rf"\s*([0-9]+)\s+({_VALUE})\s*(,|$)")


_QUOTE_OR_BRACE = re.compile(r"[\"'{}]")


_WHITESPACE = re.compile(r"\s")


_ESCAPE = re.compile(r"\\([0-9]{1,3}|u[0-9a-fA-F]{4}|.)")


_ESCAPES = {
    "\\": "\\",
    '"': '"',
    "'": "'",
    "t": "\t",
    "n": "\n",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "%": "%",
}


def read_arff(text: str, *, header_only: bool = False) -> tuple[Table, str]:
    """Parse ARFF text into a table of columns; return it and the relation name."""
    if "\r" in text:  # Windows and old Mac line ends
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    data_at = next((i for i, line in enumerate(lines) if line.strip()[:5].upper() == "@DATA"), None)
    header = [_header_line(line, i + 1) for i, line in enumerate(lines[:data_at])]
    head = "\n".join(header + ([] if data_at is None else [lines[data_at]]))
    try:
        parsed = arff.loads(head)
    except arff.ArffException as exc:
        raise DataError(_arff_error_message(exc, text)) from exc
    except (ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        raise DataError(
            f"Could not read the ARFF file: {describe(exc)}. Check the file is valid ARFF."
        ) from exc
    attributes = parsed.get("attributes") or []
    if not attributes:
        raise DataError("The ARFF file declares no @attribute lines.")
    names, kinds, categories = [], [], []
    for raw_name, kind in attributes:
        names.append(_unescape(str(raw_name)))
        if isinstance(kind, (list, tuple)):
            if not kind:
                raise DataError(
                    f"The nominal attribute {names[-1]!r} declares no values ({{}}). "
                    "List its values, e.g. {a,b}, or remove the attribute."
                )
            kinds.append("nominal")
            categories.append([str(c) for c in kind])
        else:
            kinds.append("string" if str(kind).upper() == "STRING" else "numeric")
            categories.append(None)
    relation = str(parsed.get("relation") or "")
    if header_only:
        empty = np.empty((0, len(names)))
        return Table(names, kinds, categories, empty, np.empty(0, dtype=np.int64)), relation
    reader = ArffData(names, kinds, categories)
    table = reader.read(lines, data_at + 1)
    return table, relation


def _header_line(line: str, line_no: int) -> str:
    """A header line as liac-arff should see it: without a trailing ``%`` comment (outside
    quotes; Weka allows one), and checked where liac-arff's own check takes exponential
    time: a nominal attribute's value list ``{a,b,...}`` that does not parse (a missing
    ``}``, a value with a space) makes its regular expression try every split, minutes
    for 30 values."""
    if "%" in line and not line.lstrip().startswith("%"):
        line = line[: _comment_at(line)].rstrip()
    stripped = line.strip()
    if stripped[:10].lower() != "@attribute" or "{" not in stripped:
        return line
    parts = stripped.split(" ", 1)
    rest = parts[1].strip() if len(parts) > 1 else ""
    end = _token_end(rest)
    kind = rest[end:].strip()
    if kind.startswith("{") and not _is_value_list(kind):
        name = _unescape(rest[:end].strip("'\""))
        shown = shorten(kind)
        why = (
            "it does not end with '}'"
            if not kind.endswith("}")
            else "a value has a space or a quote in it (quote such values: 'a b'), or a "
            "comma is missing"
        )
        raise DataError(
            f"The ARFF file is malformed: line {line_no} declares the nominal attribute "
            f"{shorten(name)!r} with the value list {shown!r}, which is not a list "
            f"{{a,b,...}}: {why}."
        )
    return line


def _comment_at(line: str) -> int:
    """Where a ``%`` comment starts outside quotes (``len(line)`` if none)."""
    quote = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "%":
            return i
        i += 1
    return len(line)


def _token_end(text: str) -> int:
    """End of the first token of ``text``: a quoted name (backslash escapes) or a word."""
    if text[:1] in ("'", '"'):
        match = re.match(_QUOTED, text)
        return match.end() if match else len(text)
    match = _WHITESPACE.search(text)
    return match.start() if match else len(text)


# A nominal value list as liac-arff parses it (its own pattern, checked in linear time):
# quoted values, or values without spaces, commas, braces and a leading quote; the list is
# read by one path (no alternative splits), so the check takes linear time.
_LISTED = rf"(?:{_QUOTED}|[^\s,{{}}'\"][^\s,{{}}]*)?"  # a value, or nothing (as liac-arff)


_VALUE_LIST = re.compile(rf"\{{\s*{_LISTED}\s*(?:,\s*{_LISTED}\s*)*\}}")


def _is_value_list(kind: str) -> bool:
    return _VALUE_LIST.fullmatch(kind) is not None


def _arff_error_message(exc: arff.ArffException, text: str) -> str:
    message = describe(exc).rstrip(".")
    line_no = getattr(exc, "line", None)
    detail = ""
    if isinstance(line_no, int) and line_no > 0:
        lines = text.splitlines()
        if line_no <= len(lines):
            detail = f" Line {line_no} reads: {shorten(lines[line_no - 1].strip())!r}."
    hint = ""
    if isinstance(exc, arff.BadLayout):
        hint = (
            " The file may be truncated or not be an ARFF file "
            "(it needs @relation, @attribute and @data sections)."
        )
    elif isinstance(exc, arff.BadDataFormat):
        hint = " A data row has the wrong number of values (is the file truncated?)."
    return f"The ARFF file is malformed: {message}.{detail}{hint}"


class ArffData:
    """Reads the ``@data`` section of an ARFF file straight into arrays.

    Dense rows fill a float matrix chunk by chunk; sparse rows give the
    entries of a CSC matrix, so a sparse file never takes its dense size.
    Numeric values become floats, nominal values their position among the
    declared values (checked here, with the row that breaks the rule).
    """

    def __init__(self, names: list[str], kinds: list[str], categories: list) -> None:
        self.names, self.kinds, self.categories = names, kinds, categories
        self.n = len(names)
        self.kind_of = np.array(kinds)
        self.numeric = self.kind_of == "numeric"
        self.nominal = [j for j, k in enumerate(kinds) if k == "nominal"]
        self.string = [j for j, k in enumerate(kinds) if k == "string"]
        self.codes = {j: {c: float(i) for i, c in enumerate(categories[j])} for j in self.nominal}
        # What a sparse row leaves out, as a dense row would spell it.
        self.defaults = [
            categories[j][0] if k == "nominal" else ("0" if k == "numeric" else MISSING)
            for j, k in enumerate(kinds)
        ]

    # ------------------------------------------------------------------ rows

    @staticmethod
    def rows(lines: list[str], start: int) -> Iterator[tuple[int, str]]:
        for i in range(start, len(lines)):
            row = lines[i].strip()
            if row and not row.startswith("%"):
                yield i + 1, row

    def read(self, lines: list[str], start: int) -> Table:
        n_rows = n_entries = 0
        sparse = None
        for _, row in self.rows(lines, start):
            if sparse is None:
                sparse = row.startswith("{")
            n_rows += 1
            n_entries += row.count(",") + 1 if row.startswith("{") else self.n
        if sparse:
            check_sparse(n_entries, n_rows, self.n, "the sparse ARFF data")
            values, strings, line_of = self.read_sparse(lines, start, n_rows)
        else:
            check_dense(n_rows, self.n, "the ARFF data")
            values, strings, line_of = self.read_dense(lines, start, n_rows)
        return Table(
            list(self.names),
            list(self.kinds),
            list(self.categories),
            values,
            line_of,
            strings,
        )

    def fail(self, line_no: int, row: str, problem: str) -> DataError:
        return DataError(
            f"The ARFF file is malformed: {problem}. Line {line_no} reads: {shorten(row)!r}."
        )

    def dense_values(self, line_no: int, row: str) -> list:
        """The values of a row as a list (a sparse row filled in with defaults)."""
        if row.startswith("{"):
            values = list(self.defaults)
            for index, value in self.sparse_pairs(line_no, row):
                values[index] = value
            return values
        plain = not _QUOTE_OR_BRACE.search(row)
        if plain:
            values = [v.strip() for v in row.split(",")]
            plain = not _WHITESPACE.search("".join(values))  # else: an error, found below
        if plain:
            values = [MISSING if v in ("", "?") else v for v in values]
        else:
            values = []
            pos = 0
            while True:
                match = _DENSE_FIELD.match(row, pos)
                if match is None:
                    raise self.fail(line_no, row, f"line {line_no} cannot be split into values")
                values.append(self.token(match.group(1), line_no, row))
                if not match.group(2):
                    break
                pos = match.end()
        if len(values) != self.n:
            raise self.fail(
                line_no,
                row,
                f"line {line_no} has {len(values)} value(s) but the header declares "
                f"{self.n} attributes (is the file truncated?)",
            )
        return values

    def sparse_pairs(self, line_no: int, row: str) -> list[tuple[int, Any]]:
        """The ``(index, value)`` pairs of a sparse row, checked."""
        if not row.endswith("}"):
            raise self.fail(line_no, row, f"the sparse row on line {line_no} does not end with }}")
        inner = row[1:-1]
        pairs: list[tuple[int, Any]] = []
        if not inner.strip():
            return pairs
        if not _QUOTE_OR_BRACE.search(inner):
            for item in inner.split(","):
                parts = item.split()
                if len(parts) != 2 or not (parts[0].isascii() and parts[0].isdigit()):
                    raise self.fail(
                        line_no, row, f"{item.strip()!r} on line {line_no} is not 'index value'"
                    )
                pairs.append((int(parts[0]), MISSING if parts[1] == "?" else parts[1]))
        else:
            pos = 0
            while True:
                match = _SPARSE_PAIR.match(inner, pos)
                if match is None:
                    raise self.fail(
                        line_no, row, f"the sparse row on line {line_no} is not 'index value, ...'"
                    )
                pairs.append((int(match.group(1)), self.token(match.group(2), line_no, row)))
                if not match.group(3):
                    break
                pos = match.end()
        indices = [index for index, _ in pairs]
        if max(indices) >= self.n:
            raise self.fail(
                line_no,
                row,
                f"line {line_no} gives attribute index {max(indices)}, but the header declares "
                f"only {self.n} attributes (indices 0 to {self.n - 1})",
            )
        if len(set(indices)) != len(indices):
            seen: set[int] = set()
            twice = next(i for i in indices if i in seen or seen.add(i))
            raise self.fail(
                line_no,
                row,
                f"line {line_no} gives attribute index {twice} ({self.names[twice]!r}) more "
                "than once; each index may appear once per row",
            )
        return pairs

    def token(self, raw: str | None, line_no: int, row: str) -> Any:
        if raw is None or raw == "?":
            return MISSING
        if raw[0] not in "'\"":
            return raw
        try:
            return _ESCAPE.sub(_unescape_one, raw[1:-1])
        except ValueError as exc:
            raise self.fail(line_no, row, f"{exc} on line {line_no}") from exc

    # ------------------------------------------------------------------ conversion

    def read_dense(self, lines, start, n_rows):
        """The values of dense rows, from the one path the shape of the data section picks:
        pandas' C parser (:meth:`read_dense_parsed`) for a narrow section without quotes,
        braces, ``%`` comments or string attributes, else the line reader
        (:meth:`read_dense_lines`)."""
        if self.n > WIDE_COLUMNS_PER_ROW * max(n_rows, 1):
            # a wide file: pandas' cost per column outweighs its speed per cell
            return self.read_dense_lines(lines, start, n_rows)
        text = "\n".join(lines[start:])
        if _QUOTE_OR_BRACE.search(text) or "%" in text or self.string:
            return self.read_dense_lines(lines, start, n_rows)
        return self.read_dense_parsed(lines, start, n_rows, text)

    def read_dense_lines(self, lines, start, n_rows):
        """Dense rows read line by line: the value path of wide files and of those with
        quoted values, comments or string attributes; for the others, the pass that finds
        why pandas refused them (:meth:`diagnose`)."""
        values = np.empty((n_rows, self.n))
        strings = {j: np.empty(n_rows, dtype=object) for j in self.string}
        line_of = np.empty(n_rows, dtype=np.int64)
        numeric = np.flatnonzero(self.numeric)
        r = 0
        for chunk in chunks(self.rows(lines, start), max(1, CHUNK_CELLS // self.n)):
            cells = np.empty((len(chunk), self.n), dtype=object)
            for i, (line_no, row) in enumerate(chunk):
                cells[i] = self.dense_values(line_no, row)
                line_of[r + i] = line_no
            block = values[r : r + len(chunk)]
            if numeric.size:
                numbers, bad = to_floats(cells[:, numeric])
                if bad.any():
                    i, k = np.argwhere(bad)[0]
                    raise self.not_a_number(numeric[k], cells[i, numeric[k]], r + i, line_of)
                block[:, numeric] = numbers
            for j in self.nominal:
                block[:, j] = self.encode(j, cells[:, j], r, line_of)
            for j in self.string:
                column = cells[:, j]
                strings[j][r : r + len(chunk)] = [
                    None if isinstance(v, float) else v for v in column.tolist()
                ]
                block[:, j] = np.nan
            r += len(chunk)
        return values, strings, line_of

    def read_dense_parsed(self, lines, start, n_rows, text):
        """Dense rows by pandas' C parser (yeast: 0.075 -> 0.03 s).  pandas parses the
        numeric attributes as floats; one it leaves as text is converted value by value as
        the line reader converts it (Python's ``float``).  What pandas cannot take (a row
        without one value per attribute, whitespace inside a value, a value that is not
        declared, ``True`` as a number) is an error, which :meth:`diagnose` words."""
        import pandas as pd

        kept = [i for i, line in enumerate(lines[start:]) if line.strip()]
        if len(kept) != n_rows or any(lines[start + i].count(",") != self.n - 1 for i in kept):
            raise self.diagnose(lines, start, n_rows)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", pd.errors.ParserWarning)
                frame = pd.read_csv(
                    io.BytesIO(text.encode("utf-8")),
                    sep=",",
                    header=None,
                    names=range(self.n),
                    index_col=False,
                    dtype={j: object for j in self.nominal},  # numeric: pandas' inference
                    na_values=["", "?"],
                    keep_default_na=False,
                    skipinitialspace=True,
                    skip_blank_lines=True,
                    low_memory=False,  # a column is numbers or text as a whole
                    engine="c",
                    encoding="utf-8",
                )
        except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError, TypeError):
            raise self.diagnose(lines, start, n_rows) from None
        if len(frame) != n_rows:
            raise self.diagnose(lines, start, n_rows)
        line_of = np.array(kept, dtype=np.int64) + start + 1
        values = np.empty((n_rows, self.n), order="F")  # filled column by column
        for j in np.flatnonzero(self.numeric).tolist():
            column = frame[j]
            if column.dtype.kind in "fiu":
                values[:, j] = column.to_numpy()
                continue
            codes, distinct = self.distinct_values(column, lines, start, n_rows)
            numbers, bad = to_floats(np.array(distinct + [MISSING], dtype=object)[:, None])
            if bad.any():
                raise self.diagnose(lines, start, n_rows)  # not a number: where, it says
            values[:, j] = numbers[codes, 0]  # code -1 (missing) takes the last entry, NaN
        for j in self.nominal:  # each distinct value looked up once
            codes, distinct = self.distinct_values(frame[j], lines, start, n_rows)
            lookup = self.codes[j]
            mapped = np.array([lookup.get(v, -1.0) for v in distinct] + [np.nan])
            if (mapped == -1.0).any():
                raise self.diagnose(lines, start, n_rows)  # not declared: where, it says
            values[:, j] = mapped[codes]  # code -1 (missing) takes the last entry, NaN
        return values, {}, line_of

    def distinct_values(self, column, lines, start, n_rows) -> tuple[np.ndarray, list]:
        """``(codes, distinct)`` of a column pandas left as text, its values as the line
        reader has them: stripped, ``?`` and empty ones missing (code -1)."""
        codes, raw = factorize(column.to_numpy(dtype=object))
        distinct: list = []
        index: dict = {}
        recode = np.empty(len(raw) + 1, dtype=np.intp)
        recode[-1] = -1
        for u, value in enumerate(raw):
            if not isinstance(value, str) or _WHITESPACE.search(value := value.strip()):
                raise self.diagnose(lines, start, n_rows)  # True (pandas' bool), 'a b'
            if value in ("", "?"):
                recode[u] = -1
            else:
                recode[u] = index.setdefault(value, len(distinct))
                if recode[u] == len(distinct):
                    distinct.append(value)
        return recode[codes], distinct

    def diagnose(self, lines, start, n_rows) -> DataError:
        """The error of a data section pandas refused: the line reader's exact one (it
        raises it), else pandas' refusal in general words."""
        self.read_dense_lines(lines, start, n_rows)
        return DataError(
            "The ARFF file is malformed: its data rows could not be read as one value per "
            "attribute. Check the @data section."
        )

    def read_sparse(self, lines, start, n_rows):
        strings = {j: np.full(n_rows, None, dtype=object) for j in self.string}
        line_of = np.empty(n_rows, dtype=np.int64)
        parts = []
        rows: list[int] = []
        cols: list[int] = []
        cells: list[Any] = []
        for i, (line_no, row) in enumerate(self.rows(lines, start)):
            line_of[i] = line_no
            if row.startswith("{"):
                pairs = self.sparse_pairs(line_no, row)
            else:
                pairs = list(enumerate(self.dense_values(line_no, row)))
            rows.extend([i] * len(pairs))
            for index, value in pairs:
                cols.append(index)
                cells.append(value)
            if len(cells) >= CHUNK_CELLS:
                parts.append(self.entries(rows, cols, cells, strings, line_of))
                rows, cols, cells = [], [], []
        parts.append(self.entries(rows, cols, cells, strings, line_of))
        value, row_of, col_of = (np.concatenate([p[k] for p in parts]) for k in range(3))
        values = sp.csc_matrix((value, (row_of, col_of)), shape=(n_rows, self.n))
        values.eliminate_zeros()  # an explicit 0 is an omitted value: 0 or the first category
        return values, strings, line_of

    def entries(self, rows, cols, cells, strings, line_of):
        """Values, rows and columns of parsed sparse entries (string values go to ``strings``)."""
        row_of = np.array(rows, dtype=np.int64)
        col_of = np.array(cols, dtype=np.int64)
        cell_of = np.empty(len(cells), dtype=object)
        cell_of[:] = cells
        value = np.zeros(len(cells))
        kinds = self.kind_of[col_of]
        numeric = np.flatnonzero(kinds == "numeric")
        if numeric.size:
            numbers, bad = to_floats(cell_of[numeric].reshape(-1, 1))
            if bad.any():
                k = numeric[np.flatnonzero(bad)[0]]
                raise self.not_a_number(col_of[k], cell_of[k], row_of[k], line_of)
            value[numeric] = numbers.ravel()
        for k in np.flatnonzero(kinds == "nominal").tolist():
            j, cell = int(col_of[k]), cell_of[k]
            if isinstance(cell, float):
                value[k] = np.nan
            elif (code := self.codes[j].get(cell)) is None:
                raise self.undeclared(j, cell, int(row_of[k]), line_of)
            else:
                value[k] = code
        text = kinds == "string"
        for k in np.flatnonzero(text).tolist():
            cell = cell_of[k]
            strings[int(col_of[k])][row_of[k]] = None if isinstance(cell, float) else cell
        return value[~text], row_of[~text], col_of[~text]

    def encode(self, j: int, cells: np.ndarray, r0: int, line_of: np.ndarray) -> np.ndarray:
        """Codes of the nominal attribute ``j`` (NaN = missing); undeclared values raise."""
        lookup = self.codes[j]
        codes = np.array(
            [np.nan if isinstance(v, float) else lookup.get(v, -1.0) for v in cells.tolist()]
        )
        bad = np.flatnonzero(codes == -1.0)
        if bad.size:
            raise self.undeclared(j, cells[bad[0]], r0 + int(bad[0]), line_of)
        return codes

    def undeclared(self, j: int, value: str, row: int, line_of: np.ndarray) -> DataError:
        return DataError(
            f"The ARFF file has the value {shorten(value)!r} for the nominal attribute "
            f"{self.names[j]!r} in data row {row + 1} (line {int(line_of[row])}), but that value "
            f"is not declared: the declared values are {preview(self.categories[j], 10)}. "
            "Fix the value or add it to the @attribute line."
        )

    def not_a_number(self, j: int, value: str, row: int, line_of: np.ndarray) -> DataError:
        return DataError(
            f"The ARFF file has {shorten(str(value))!r} for the numeric attribute "
            f"{self.names[j]!r} in data row {row + 1} (line {int(line_of[row])}): it is not a "
            "number. Fix the value, or write ? for a missing value."
        )


def _unescape_one(match: re.Match) -> str:
    code = match.group(1)
    if len(code) == 1:
        if code in _ESCAPES:
            return _ESCAPES[code]
        if code.isdigit():
            return chr(int(code))
        raise ValueError(f"unsupported escape sequence \\{code}")
    if code[0] == "u":
        return chr(int(code[1:], 16))
    try:
        return chr(int(code, 8))
    except ValueError:
        raise ValueError(f"unsupported escape sequence \\{code}") from None


def _unescape(name: str) -> str:
    r"""Decode backslash escapes liac-arff leaves in quoted names (``Swainson\'s``)."""
    if "\\" not in name:
        return name
    return re.sub(r"\\(['\"\\%])", r"\1", name)


#: A run of this many attributes declared {0,1} at the end of an ARFF file that says nothing
#: of its labels is refused, not read as one binary class (its last attribute): Mulan's text
#: and image sets, whose features are 0/1 too, end with 522 (tmc2007-500) to 1,995 (bibtex)
#: of them, and delicious read so reported "Accuracy 0.985" for its last tag alone.
#: Single-label files of binary features stay below it: SPECT (22 binary features and a
#: binary class) has 23, boolean benchmarks such as parity5+5, mux6 or corral 7 to 11.
#: Shorter runs of two or more load as one class with a "Warning:" note first (emotions
#: without its XML: 6).
MANY_TRAILING_BINARY = 50


def arff_targets(table: Table, relation: str, target, n_labels, xml, path) -> tuple[str, list[int]]:
    """Decide which ARFF attributes are the labels; return (task, indices)."""
    names = table.names
    if target is not None:
        return targets_from_spec(target, names)
    xml_labels, source = _xml_labels(xml, path)
    if xml_labels is not None:
        if n_labels is not None and int(n_labels) != len(xml_labels):
            raise DataError(
                f"n_labels={n_labels} does not match the {len(xml_labels)} labels of "
                f"{source}. Leave n_labels empty or fix the XML file."
            )
        indices = _label_indices_from_names(xml_labels, names, source, found=xml is None)
        table.notes.append(f"read {len(xml_labels)} label names from {source}")
        return MULTILABEL, indices
    if n_labels is not None:
        count = check_label_count(n_labels, len(names), "n_labels")
        return MULTILABEL, list(range(len(names) - count, len(names)))
    match = MEKA_C.search(relation)
    if match and int(match.group(1)) != 0:
        c = int(match.group(1))
        count = check_label_count(abs(c), len(names), f"MEKA option '-C {c}' in the relation name")
        first = c > 0
        table.notes.append(
            f"MEKA relation option '-C {c}': the {'first' if first else 'last'} "
            f"{count} attributes are the labels"
        )
        indices = range(count) if first else range(len(names) - count, len(names))
        return MULTILABEL, list(indices)
    looked = (
        f"no Mulan XML label file beside it (looked for "
        f"{preview([p.name for p in xml_candidates(path)], 6)})"
        if path is not None
        else "no Mulan XML label file"
    )
    declared = _trailing_declared_binary(table)
    if declared >= MANY_TRAILING_BINARY:
        raise DataError(
            f"This ARFF file ends with {declared:,} attributes declared {{0,1}} "
            f"({preview(names[len(names) - declared :], 3)}), as a Mulan multi-label file's "
            f"labels are, and nothing says which of them are labels: {looked}, no number of "
            "labels, no MEKA '-C N' in the relation name. Reading only the last one as the "
            "class of one binary problem would leave the others out, so the file is not "
            "read. Give its Mulan XML label file (xml=PATH; --xml PATH on the command line; "
            "the XML upload in the dashboard) or the number of labels, the last N "
            "attributes (n_labels=N; --n-labels N); to use the last attribute alone as the "
            "class, target=-1."
        )
    binary = _trailing_binary(table)
    how = (
        f"give its Mulan XML label file or set the number of labels to {binary} (n_labels={binary})"
    )
    if table.kinds[-1] == "nominal":
        if binary >= 2:
            table.warnings.append(
                f"Warning: the last {binary} attributes "
                f"({preview(names[len(names) - binary :], 5)}) hold only 0/1 values, as the "
                "labels of a multi-label file do, but nothing says which attributes are "
                f"labels: {looked}, no number of labels, no MEKA '-C N'. Only the last one, "
                f"{names[-1]!r}, is used, as the class of a multi-class problem. To load the "
                f"file as multi-label, {how}."
            )
        table.notes.append(
            f"no label information (XML file, number of labels or MEKA '-C'): using the last "
            f"attribute '{names[-1]}' as the class of a multi-class problem (Weka convention)"
        )
        return MULTICLASS, [len(names) - 1]
    hint = f" The last {binary} attributes hold only 0/1 values: {how}." if binary else ""
    raise DataError(
        "Cannot tell which attributes of this ARFF file are the labels. For a Mulan multi-label "
        "file, give its XML label file (or put the data set's NAME.xml beside it) or set the "
        "number of labels (the last N attributes). For a single-label file the last attribute "
        "must be nominal." + hint
    )


def _trailing_declared_binary(table: Table) -> int:
    """How many attributes at the end are declared nominal {0,1} (Mulan's label type)."""
    count = 0
    for j in reversed(range(len(table.names))):
        if table.kinds[j] != "nominal" or sorted(table.categories[j] or []) != ["0", "1"]:
            break
        count += 1
    return count


def _trailing_binary(table: Table) -> int:
    """How many attributes at the end hold only 0/1 values (nominal {0,1} or numeric)."""
    count = 0
    for j in reversed(range(len(table.names))):
        kind = table.kinds[j]
        if kind == "nominal" and sorted(table.categories[j] or []) == ["0", "1"]:
            count += 1
            continue
        if kind != "numeric":
            break
        values = table.numbers(j)
        present = values[~np.isnan(values)]
        if not present.size or not np.isin(present, (0.0, 1.0)).all():
            break
        count += 1
    return count


#: What separates the parts of a split file's name from its data set's (Mulan:
#: ``delicious-train``, ``Corel5k-train-sparse``; others write ``yeast_train``).
_NAME_PART = re.compile(r"[-_.][^-_.]*$")


def xml_candidates(path: Path | None) -> list[Path]:
    """The Mulan XML label files an ARFF file at ``path`` may have beside it, nearest first.

    Mulan ships one ``NAME.xml`` for a data set and its split files, so the file's own stem
    comes first, then the stem with its last ``-``, ``_`` or ``.`` part dropped, step by
    step; names keep their case (``Corel5k``).

    Examples
    --------
    >>> [p.name for p in xml_candidates(Path("Corel5k-train-sparse.arff"))]
    ['Corel5k-train-sparse.xml', 'Corel5k-train.xml', 'Corel5k.xml']
    >>> [p.name for p in xml_candidates(Path("tmc2007-500-test.arff"))]
    ['tmc2007-500-test.xml', 'tmc2007-500.xml', 'tmc2007.xml']
    """
    if path is None:
        return []
    stems = [path.stem]
    while (shorter := _NAME_PART.sub("", stems[-1])) and shorter != stems[-1]:
        stems.append(shorter)
    return [path.with_name(f"{stem}.xml") for stem in stems]


def _xml_labels(xml, path: Path | None) -> tuple[list[str] | None, str]:
    """The label names of the XML given, else of the nearest one beside ``path``
    (:func:`xml_candidates`), and where they come from (for notes and errors)."""
    if xml is not None:
        return read_mulan_xml(xml), "the XML label file"
    for candidate in xml_candidates(path):
        if candidate.is_file():
            try:
                return read_mulan_xml(candidate), candidate.name
            except DataError as exc:
                raise DataError(
                    f"{candidate.name}, beside the ARFF file, was read as its Mulan XML label "
                    f"file: {exc} Name the right XML file with xml=, or move this one away."
                ) from exc
    return None, ""


def _label_indices_from_names(
    labels: list[str], names: list[str], source: str, *, found: bool = False
) -> list[int]:
    """The positions of the XML's labels among the ARFF attributes.

    A label matches an attribute as the XML writes it, else with its backslash escapes
    decoded as the ARFF header's names are (:func:`_unescape`): delicious.xml writes
    ``TAG_m\\'usica`` exactly as delicious-train.arff does, and the header's name is read as
    ``TAG_m'usica``.
    """
    position = {n: i for i, n in enumerate(names)}
    position.update({n.strip(): i for i, n in enumerate(names) if n.strip() not in position})
    indices, unknown = [], []
    for label in labels:
        at = position.get(label, position.get(_unescape(label)))
        if at is None:
            unknown.append(label)
        else:
            indices.append(at)
    if unknown:
        remedy = " (found beside it; name another with xml=)" if found else ""
        raise DataError(
            f"Label(s) {preview(unknown, 5)} from {source} are not attributes of the ARFF "
            f"file. Check that the XML file belongs to this ARFF file{remedy}."
        )
    return indices
