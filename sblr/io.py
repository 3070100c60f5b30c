"""Load ARFF and CSV files into a :class:`Dataset`.

:func:`load_dataset` reads

* **ARFF** files (Weka, Mulan, MEKA) with dense or sparse (``{index value, ...}``)
  rows, numeric, nominal and string attributes, via ``liac-arff``;
* **CSV-like** text (``.csv``, ``.tsv``, ``.data``, ``.txt``; the separator
  ``,``, ``;``, tab, ``|`` or runs of spaces is detected), via pandas.

The source may be a path, ``bytes`` or a binary file-like object (an upload),
and the result is a :class:`Dataset` holding a float feature matrix ``X``, the
targets ``y`` and notes about what the loader did to the file.

Conventions
-----------
Which ARFF attributes are labels, in this order of precedence:

1. ``target=`` (a name/position: multi-class; a list: multi-label);
2. a Mulan XML label file, passed as ``xml=`` or lying beside the ARFF file
   with the same stem (``emotions.arff`` → ``emotions.xml``); the labels may
   sit anywhere in the header and ``class_names`` follows the XML order;
3. ``n_labels=N``: the LAST ``N`` attributes;
4. MEKA's ``-C N`` in the relation name: the FIRST ``N`` attributes
   (``-C -N``: the last ``N``);
5. otherwise, if the last attribute is nominal, it is the class of a
   multi-class problem (Weka convention).

ARFF label attributes always give a ``"multilabel"`` dataset, even with a
single label.  Label values must be 0/1 (``true``/``false`` and
``yes``/``no`` are accepted too); a missing label value is an error.

Feature encoding (ARFF and CSV alike):

* numeric columns are used as they are;
* two-valued nominal/text columns become one 0/1 column.  A recognisable
  boolean pair (0/1, no/yes, false/true, n/y, f/t) maps the "true" value to 1,
  any other pair maps the second declared value (CSV: in sorted order) to 1;
* nominal columns with more values are one-hot encoded into columns named
  ``attr=value`` (declared order for ARFF, sorted order for CSV).  Text
  columns of a CSV file are one-hot encoded only when they have at most 20
  distinct values and fewer than half as many values as rows;
* ID-like columns (text/nominal with one distinct value per row) and ARFF
  ``string`` attributes are dropped;
* missing values (``?`` or empty) are replaced by the column mean (for encoded
  nominal columns: the mean of each 0/1 column), or raise with
  ``missing="error"``.

Every problem with the content of a file raises
:class:`~sblr.exceptions.DataError` with a message that says what is wrong and
how to fix it.
"""

from __future__ import annotations

import csv
import io
import numbers
import os
import re
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import arff
import numpy as np
import pandas as pd

from sblr.exceptions import DataError

__all__ = ["Dataset", "list_columns", "load_dataset", "read_mulan_xml"]

MULTICLASS = "multiclass"
MULTILABEL = "multilabel"

_ARFF_EXTENSIONS = {".arff"}
_CSV_EXTENSIONS = {".csv", ".tsv"}
_SNIFF_EXTENSIONS = {".data", ".txt"}  # CSV unless the content is ARFF
_KNOWN_EXTENSIONS = _ARFF_EXTENSIONS | _CSV_EXTENSIONS | _SNIFF_EXTENSIONS
_TRUE_TOKENS = {"1", "1.0", "true", "yes", "y", "t"}
_FALSE_TOKENS = {"0", "0.0", "false", "no", "n", "f"}
_MAX_ONEHOT = 20
_NOT_TEXT = (
    "The file does not look like a text ARFF or CSV file (it contains binary data). "
    "Upload the .arff or .csv file itself, not an image, a spreadsheet or a zip archive."
)
_MEKA_C = re.compile(r"-C\s+(-?\d+)")


# --------------------------------------------------------------------------- Dataset


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded classification data set.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Encoded features (float64).
    y : ndarray
        Multi-class: 1-D array of the original class values.  Multi-label:
        0/1 int array of shape (n_samples, n_labels).
    task : {"multiclass", "multilabel"}
        Kind of problem.
    feature_names : list of str
        One name per column of ``X`` (one-hot columns are ``attr=value``).
    class_names : list of str
        Multi-class: ``str`` of each sorted distinct class value.  Multi-label:
        the label names, one per column of ``y``.
    name : str
        Name of the data set (file stem unless given).
    notes : list of str
        Human-readable notes about what the loader did.

    Examples
    --------
    >>> import numpy as np
    >>> ds = Dataset(X=np.zeros((3, 1)), y=np.array(["b", "a", "b"]),
    ...              task="multiclass", feature_names=["f"], class_names=["a", "b"])
    >>> ds.label_matrix()
    array([[0, 1],
           [1, 0],
           [0, 1]])
    >>> ds.summary()["class_counts"]
    {'a': 1, 'b': 2}
    """

    X: np.ndarray
    y: np.ndarray
    task: str
    feature_names: list[str]
    class_names: list[str]
    name: str = "dataset"
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.task not in (MULTICLASS, MULTILABEL):
            raise ValueError(f"task must be 'multiclass' or 'multilabel', not {self.task!r}")
        if self.X.ndim != 2 or self.X.shape[1] != len(self.feature_names):
            raise ValueError("X must be 2-D with one column per feature name")
        if len(self.y) != self.X.shape[0]:
            raise ValueError("X and y must have the same number of rows")
        if self.task == MULTILABEL and (
            self.y.ndim != 2 or self.y.shape[1] != len(self.class_names)
        ):
            raise ValueError("multilabel y must be 2-D with one column per class name")

    @property
    def n_samples(self) -> int:
        """Number of rows (instances)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        """Number of classes (multi-class) or labels (multi-label)."""
        return len(self.class_names)

    def label_matrix(self) -> np.ndarray:
        """Return the 0/1 int indicator matrix of shape (n_samples, n_classes).

        Multi-class data get one column per class in ``class_names`` order.
        """
        if self.task == MULTILABEL:
            return np.asarray(self.y, dtype=int).copy()
        as_text = np.asarray(self.y).astype(str)
        matrix = (as_text[:, None] == np.asarray(self.class_names, dtype=str)[None, :]).astype(int)
        unknown = matrix.sum(axis=1) == 0
        if unknown.any():
            raise ValueError(f"class {as_text[unknown][0]!r} is not in class_names")
        return matrix

    def summary(self) -> dict[str, Any]:
        """Return a dict describing the data set.

        Keys: ``name``, ``instances``, ``features``, ``classes``, ``task``,
        ``label_cardinality`` (mean number of labels per row),
        ``label_density`` (cardinality / classes) and ``class_counts``
        (class/label name → number of rows having it).
        """
        matrix = self.label_matrix()
        cardinality = float(matrix.sum(axis=1).mean()) if self.n_samples else 0.0
        return {
            "name": self.name,
            "instances": self.n_samples,
            "features": self.n_features,
            "classes": self.n_classes,
            "task": self.task,
            "label_cardinality": cardinality,
            "label_density": cardinality / self.n_classes if self.n_classes else 0.0,
            "class_counts": {
                name: int(count)
                for name, count in zip(self.class_names, matrix.sum(axis=0), strict=True)
            },
        }

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, task={self.task!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features}, n_classes={self.n_classes})"
        )


# --------------------------------------------------------------------------- columns


@dataclass
class _Column:
    """One parsed column before encoding.

    ``kind`` is "numeric" (float values, NaN = missing), "nominal" (declared
    ``categories``), "text" (CSV text, categories inferred) or "string" (ARFF
    STRING attribute).  Non-numeric values are str, ``None`` = missing.
    """

    name: str
    kind: str
    values: np.ndarray
    categories: list[str] | None = None

    def missing_mask(self) -> np.ndarray:
        if self.kind == "numeric":
            return np.isnan(self.values)
        return np.array([v is None for v in self.values], dtype=bool)


@dataclass
class _Table:
    columns: list[_Column]
    n_rows: int
    notes: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


# --------------------------------------------------------------------------- public API


def load_dataset(
    source: str | os.PathLike | bytes | Any,
    *,
    target: str | int | list | None = None,
    n_labels: int | None = None,
    xml: str | os.PathLike | bytes | Any | None = None,
    format: str | None = None,
    name: str | None = None,
    header: bool = True,
    drop: str | int | list | None = None,
    missing: str = "impute",
) -> Dataset:
    """Load an ARFF or CSV file into a :class:`Dataset`.

    Parameters
    ----------
    source : str, path-like, bytes or binary file-like
        The file to read.
    target : str, int or list, optional
        Class column (name or position, negative counts from the end) for a
        multi-class problem, or a list of 0/1 label columns for a multi-label
        problem.  Required for CSV unless ``n_labels`` is given.  For ARFF it
        overrides the label detection described in the module docstring.
    n_labels : int, optional
        Number of label attributes/columns: the LAST ``n_labels`` columns are
        0/1 labels (multi-label).  With an XML file it must match its count.
    xml : str, path-like, bytes or binary file-like, optional
        Mulan XML label file for an ARFF source.  By default ``NAME.xml``
        beside an ARFF path is used when it exists.
    format : {"arff", "csv"}, optional
        File format; inferred from the file name and content when omitted.
    name : str, optional
        File name of a bytes/file-like source (used to infer the format) and
        the data set name (its stem when it has a data file extension).
    header : bool, default True
        CSV only: whether the first row holds column names.  Without one the
        columns are named "0", "1", ...
    drop : str, int or list, optional
        Columns (names or positions) to leave out, e.g. an ID column.
    missing : {"impute", "error"}, default "impute"
        Replace missing feature values by the column mean, or raise.

    Returns
    -------
    Dataset

    Raises
    ------
    DataError
        For any problem with the file or its content.
    TypeError
        When ``source`` is not a path, bytes or file-like object.

    Examples
    --------
    >>> import io
    >>> raw = b"colour,size,label\\nred,1,a\\nblue,2,b\\nred,3,a\\nblue,6,b\\n"
    >>> ds = load_dataset(io.BytesIO(raw), target="label", name="toy.csv")
    >>> ds.X
    array([[1., 1.],
           [0., 2.],
           [1., 3.],
           [0., 6.]])
    >>> ds.y, ds.class_names, ds.task, ds.name
    (array(['a', 'b', 'a', 'b'], dtype='<U1'), ['a', 'b'], 'multiclass', 'toy')
    >>> ds.feature_names
    ['colour', 'size']
    >>> ds.notes
    ["encoded 1 two-valued column(s) as one 0/1 column each (value that is 1: 'colour'=red)"]
    """
    if missing not in ("impute", "error"):
        raise DataError(f"missing must be 'impute' or 'error', not {missing!r}")
    try:
        return _load(
            source,
            target=target,
            n_labels=n_labels,
            xml=xml,
            fmt=format,
            name=name,
            header=header,
            drop=drop,
            missing=missing,
        )
    except DataError:
        raise
    except (
        UnicodeError,
        ValueError,
        KeyError,
        IndexError,
        OverflowError,
        arff.ArffException,
        csv.Error,
    ) as exc:  # last resort: never leak parser internals to the user
        raise DataError(f"Could not read the data file: {_describe(exc)}") from exc


def list_columns(
    source: str | os.PathLike | bytes | Any,
    *,
    name: str | None = None,
    format: str | None = None,
    header: bool = True,
) -> list[str]:
    r"""Column (attribute) names of a CSV or ARFF file, for choosing targets.

    Headerless CSV files give ``"0", "1", ...``.

    Examples
    --------
    >>> list_columns(b"a,b,label\n1,2,x\n3,4,y\n", name="t.csv")
    ['a', 'b', 'label']
    """
    try:
        data, path = _read_bytes(source, name, what="data file")
        text, _ = _decode(data)
        fmt = _infer_format(format, _extension(name, path), text)
        table = (
            _read_arff(text)[0]
            if fmt == "arff"
            else _read_csv(text, header=header, ext=_extension(name, path))
        )
    except DataError:
        raise
    except (UnicodeError, ValueError, KeyError, IndexError, arff.ArffException, csv.Error) as exc:
        raise DataError(f"Could not read the data file: {_describe(exc)}") from exc
    return table.names


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
    data, _ = _read_bytes(source, None, what="XML label file")
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


# --------------------------------------------------------------------------- loading


def _load(source, *, target, n_labels, xml, fmt, name, header, drop, missing) -> Dataset:
    data, path = _read_bytes(source, name, what="data file")
    file_name = name or (path.name if path else _source_name(source))
    text, notes = _decode(data)
    fmt = _infer_format(fmt, _extension(name, path), text)
    if fmt == "arff":
        table, relation = _read_arff(text)
        labels = _arff_targets(table, relation, target, n_labels, xml, path)
    else:
        table = _read_csv(text, header=header, ext=_extension(name, path))
        labels = _csv_targets(table, target, n_labels)
    table.notes[:0] = notes
    return _build_dataset(table, labels, drop=drop, missing=missing, name=_dataset_name(file_name))


def _read_bytes(source, name, *, what: str) -> tuple[bytes, Path | None]:
    """Return the raw bytes of ``source`` and its path (``None`` if not a path)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            found = path.is_file()
        except (OSError, ValueError):
            found = False
        if not found:
            hint = " (to load text directly, pass it as bytes)" if "\n" in str(source) else ""
            kind = "is a folder, not a file" if _is_dir(path) else "was not found"
            raise DataError(f"The {what} '{source}' {kind}. Check the path{hint}.")
        try:
            return path.read_bytes(), path
        except OSError as exc:
            raise DataError(f"Could not read the {what} '{source}': {exc.strerror or exc}") from exc
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None
    if callable(getattr(source, "read", None)):
        try:
            data = source.read()
        except (OSError, ValueError) as exc:
            raise DataError(f"Could not read the {what}: {exc}") from exc
        if isinstance(data, str):
            data = data.encode("utf-8")
        if isinstance(data, (bytes, bytearray, memoryview)):
            return bytes(data), None
    raise TypeError(
        f"{what} must be a path, bytes or a binary file-like object, not {type(source).__name__}"
    )


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _source_name(source) -> str | None:
    raw = getattr(source, "name", None)
    return Path(raw).name if isinstance(raw, str) and raw else None


def _extension(name: str | None, path: Path | None) -> str:
    for candidate in (name, path.name if path else None):
        if candidate:
            suffix = Path(candidate).suffix.lower()
            if suffix in _KNOWN_EXTENSIONS:
                return suffix
    return ""


def _dataset_name(file_name: str | None) -> str:
    if not file_name:
        return "dataset"
    stem = Path(file_name)
    return stem.stem if stem.suffix.lower() in _KNOWN_EXTENSIONS else file_name


def _decode(data: bytes) -> tuple[str, list[str]]:
    """Decode file bytes as text, rejecting binary files."""
    notes: list[str] = []
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DataError(_NOT_TEXT) from exc
    elif b"\x00" in data:
        raise DataError(_NOT_TEXT)
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
            notes.append("the file is not valid UTF-8; decoded it as Latin-1")
    if not text.strip():
        raise DataError("The file is empty. Choose a file with data in it.")
    if _looks_binary(text):
        raise DataError(_NOT_TEXT)
    return text, notes


def _looks_binary(text: str) -> bool:
    sample = text[:65536]
    odd = sum(
        1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f\v") or 127 <= ord(ch) < 160
    )
    return odd > max(2, len(sample) // 100)


def _infer_format(fmt: str | None, ext: str, text: str) -> str:
    if fmt is not None:
        chosen = str(fmt).lower().lstrip(".")
        if chosen not in ("arff", "csv"):
            raise DataError(f"Unknown format {fmt!r}: use 'arff', 'csv' or None to infer it.")
        return chosen
    if ext in _ARFF_EXTENSIONS:
        return "arff"
    if ext in _CSV_EXTENSIONS:
        return "csv"
    return "arff" if _looks_like_arff(text) else "csv"


def _looks_like_arff(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("%"):
            return stripped.lower().startswith("@relation")
    return False


# --------------------------------------------------------------------------- ARFF


def _read_arff(text: str) -> tuple[_Table, str]:
    """Parse ARFF text into a table of columns; return it and the relation name."""
    try:
        parsed = arff.loads(text)
    except arff.ArffException as exc:
        raise DataError(_arff_error_message(exc, text)) from exc
    except (ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        raise DataError(
            f"Could not read the ARFF file: {_describe(exc)}. Check the file is valid ARFF."
        ) from exc
    attributes = parsed.get("attributes") or []
    rows = parsed.get("data") or []
    if not attributes:
        raise DataError("The ARFF file declares no @attribute lines.")
    values = list(zip(*rows, strict=True)) if rows else [()] * len(attributes)
    columns = [_arff_column(attr, col) for attr, col in zip(attributes, values, strict=True)]
    return _Table(columns, len(rows)), str(parsed.get("relation") or "")


def _arff_error_message(exc: arff.ArffException, text: str) -> str:
    message = _describe(exc).rstrip(".")
    line_no = getattr(exc, "line", None)
    detail = ""
    if isinstance(line_no, int) and line_no > 0:
        lines = text.splitlines()
        if line_no <= len(lines):
            content = lines[line_no - 1].strip()
            content = content if len(content) <= 80 else content[:77] + "..."
            detail = f" Line {line_no} reads: {content!r}."
    hint = ""
    if isinstance(exc, arff.BadLayout):
        hint = (
            " The file may be truncated or not be an ARFF file "
            "(it needs @relation, @attribute and @data sections)."
        )
    elif isinstance(exc, arff.BadDataFormat):
        hint = " A data row has the wrong number of values (is the file truncated?)."
    return f"The ARFF file is malformed: {message}.{detail}{hint}"


def _arff_column(attribute: tuple, values: tuple) -> _Column:
    name, kind = attribute
    name = _unescape(str(name))
    if isinstance(kind, (list, tuple)):
        cats = [str(c) for c in kind]
        vals = np.array([None if v is None else str(v) for v in values], dtype=object)
        return _Column(name, "nominal", vals, cats)
    if str(kind).upper() == "STRING":
        vals = np.array([None if v is None else str(v) for v in values], dtype=object)
        return _Column(name, "string", vals)
    nums = np.array([np.nan if v is None else v for v in values], dtype=float)
    return _Column(name, "numeric", nums)


def _unescape(name: str) -> str:
    r"""Decode backslash escapes liac-arff leaves in quoted names (``Swainson\'s``)."""
    return re.sub(r"\\(['\"\\%])", r"\1", name)


def _arff_targets(
    table: _Table, relation: str, target, n_labels, xml, path
) -> tuple[str, list[int]]:
    """Decide which ARFF attributes are the labels; return (task, indices)."""
    names = table.names
    if target is not None:
        return _targets_from_spec(target, names)
    xml_labels, source = _xml_labels(xml, path)
    if xml_labels is not None:
        if n_labels is not None and int(n_labels) != len(xml_labels):
            raise DataError(
                f"n_labels={n_labels} does not match the {len(xml_labels)} labels of the XML "
                "label file. Leave n_labels empty or fix the XML file."
            )
        table.notes.append(f"read {len(xml_labels)} label names from {source}")
        return MULTILABEL, _label_indices_from_names(xml_labels, names)
    if n_labels is not None:
        count = _check_label_count(n_labels, len(names), "n_labels")
        return MULTILABEL, list(range(len(names) - count, len(names)))
    match = _MEKA_C.search(relation)
    if match and int(match.group(1)) != 0:
        c = int(match.group(1))
        count = _check_label_count(abs(c), len(names), f"MEKA option '-C {c}' in the relation name")
        first = c > 0
        table.notes.append(
            f"MEKA relation option '-C {c}': the {'first' if first else 'last'} "
            f"{count} attributes are the labels"
        )
        indices = range(count) if first else range(len(names) - count, len(names))
        return MULTILABEL, list(indices)
    if table.columns[-1].kind == "nominal":
        table.notes.append(
            f"no label information (XML file, number of labels or MEKA '-C'): using the last "
            f"attribute '{names[-1]}' as the class of a multi-class problem (Weka convention)"
        )
        return MULTICLASS, [len(names) - 1]
    raise DataError(
        "Cannot tell which attributes of this ARFF file are the labels. For a Mulan multi-label "
        "file, upload its XML label file (or put NAME.xml beside it) or set the number of labels "
        "(the last N attributes). For a single-label file the last attribute must be nominal."
    )


def _xml_labels(xml, path: Path | None) -> tuple[list[str] | None, str]:
    if xml is not None:
        return read_mulan_xml(xml), "the XML label file"
    if path is not None:
        companion = path.with_suffix(".xml")
        if companion.is_file():
            return read_mulan_xml(companion), companion.name
    return None, ""


def _label_indices_from_names(labels: list[str], names: list[str]) -> list[int]:
    position = {n: i for i, n in enumerate(names)}
    position.update({n.strip(): i for i, n in enumerate(names) if n.strip() not in position})
    unknown = [label for label in labels if label not in position]
    if unknown:
        raise DataError(
            f"Label(s) {_preview(unknown, 5)} from the XML label file are not attributes of the "
            "ARFF file. Check that the XML file belongs to this ARFF file."
        )
    return [position[label] for label in labels]


def _check_label_count(count, n_columns: int, what: str) -> int:
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
        raise DataError(f"{what} must be a positive whole number, not {count!r}.")
    if count > n_columns:
        raise DataError(
            f"{what} asks for {count} labels but the file has only {n_columns} attributes/columns."
        )
    if count == n_columns:
        raise DataError(
            f"{what} makes all {n_columns} attributes/columns labels: no feature columns are left."
        )
    return int(count)


# --------------------------------------------------------------------------- CSV


def _read_csv(text: str, *, header: bool, ext: str) -> _Table:
    sep = "\t" if ext == ".tsv" else _detect_separator(text)
    advice = (
        "Check that every row has the same number of values, separated by commas, "
        "semicolons or tabs."
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.StringIO(text),
                sep=sep,
                header=0 if header else None,
                index_col=False,
                skipinitialspace=True,
                na_values=["?"],
                decimal="," if sep == ";" else ".",
                skip_blank_lines=True,
                low_memory=False,
            )
    except pd.errors.ParserWarning as exc:
        raise DataError(
            f"Some rows of the CSV file have more values than there are column names. {advice}"
        ) from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, csv.Error) as exc:
        raise DataError(f"Could not read the CSV file: {_describe(exc).strip()}. {advice}") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    notes = _drop_trailing_empty(frame, header)
    if header and all(_is_number(c) for c in frame.columns):
        notes.append(
            "the first row, used as column names, holds only numbers: if the file has no "
            "header row, load it with header=False"
        )
    columns = [_frame_column(frame.iloc[:, i], n) for i, n in enumerate(frame.columns)]
    return _Table(columns, len(frame), notes)


def _drop_trailing_empty(frame: pd.DataFrame, header: bool) -> list[str]:
    """Drop empty last columns left by delimiters at the end of every line."""
    dropped = []
    while frame.shape[1] > 1 and frame.iloc[:, -1].isna().all():
        last = frame.columns[-1]
        if header and not last.startswith("Unnamed:"):
            break
        dropped.append(last)
        del frame[last]
    return (
        [f"dropped empty column(s) {_preview(dropped)} (delimiters at line ends)"]
        if dropped
        else []
    )


def _detect_separator(text: str) -> str:
    """Pick the separator used consistently on the first lines (``\\s+`` if none)."""
    lines = [ln for ln in text.splitlines() if ln.strip()][:30]
    for sep in ("\t", ";", ",", "|"):
        counts = {ln.count(sep) for ln in lines}
        if len(counts) == 1 and counts.pop() > 0:
            return sep
    for sep in (",", ";", "\t"):
        if sum(sep in ln for ln in lines) > len(lines) / 2:
            return sep
    return r"\s+" if any(len(ln.split()) > 1 for ln in lines) else ","


def _frame_column(series: pd.Series, name: str) -> _Column:
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return _Column(name, "numeric", series.to_numpy(dtype=float, na_value=np.nan))
    missing = series.isna().to_numpy()
    texts = [
        None if m else str(v).strip() for v, m in zip(series.astype(object), missing, strict=True)
    ]
    numbers_ = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
    present = np.array([t is not None for t in texts], dtype=bool)
    if not np.isnan(numbers_[present]).any():
        return _Column(name, "numeric", numbers_)
    lowered = {t.lower() for t in texts if t is not None}
    if lowered <= _TRUE_TOKENS | _FALSE_TOKENS and len(lowered) <= 2:
        texts = [None if t is None else t.lower() for t in texts]
    return _Column(name, "text", np.array(texts, dtype=object))


def _csv_targets(table: _Table, target, n_labels) -> tuple[str, list[int]]:
    names = table.names
    if target is not None:
        return _targets_from_spec(target, names)
    if n_labels is not None:
        count = _check_label_count(n_labels, len(names), "n_labels")
        return MULTILABEL, list(range(len(names) - count, len(names)))
    raise DataError(
        "Choose the target of this CSV file: one class column (target='name' or a position, "
        "multi-class) or a list of 0/1 label columns (multi-label). "
        f"Available columns: {_preview(names)}."
    )


# --------------------------------------------------------------------------- column choice


def _targets_from_spec(spec, names: list[str]) -> tuple[str, list[int]]:
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise DataError("The list of label columns is empty: name at least one column.")
        indices = [_resolve_column(s, names, "Label") for s in spec]
        if len(set(indices)) != len(indices):
            raise DataError("The same label column is listed twice in target.")
        return MULTILABEL, indices
    return MULTICLASS, [_resolve_column(spec, names, "Target")]


def _resolve_column(spec, names: list[str], what: str) -> int:
    n = len(names)
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        if not -n <= int(spec) < n:
            raise DataError(
                f"{what} column position {spec} is out of range: the file has {n} columns "
                f"(positions 0 to {n - 1}, or -1 for the last)."
            )
        return int(spec) % n
    if isinstance(spec, str):
        if spec in names:
            return names.index(spec)
        folded = [i for i, c in enumerate(names) if c.casefold() == spec.strip().casefold()]
        if len(folded) == 1:
            return folded[0]
        raise DataError(f"{what} column {spec!r} not found. Available columns: {_preview(names)}.")
    raise DataError(f"{what} column must be a name or a position, not {spec!r}.")


def _drop_indices(drop, names: list[str]) -> set[int]:
    if drop is None:
        return set()
    specs = drop if isinstance(drop, (list, tuple, set)) else [drop]
    return {_resolve_column(s, names, "Dropped") for s in specs}


# --------------------------------------------------------------------------- building


def _build_dataset(table: _Table, labels: tuple[str, list[int]], *, drop, missing, name) -> Dataset:
    task, target_idx = labels
    notes = list(table.notes)
    if table.n_rows < 2:
        raise DataError(
            f"The file has {table.n_rows} data row(s); at least 2 are needed to learn anything."
        )
    dropped = _drop_indices(drop, table.names)
    clash = dropped.intersection(target_idx)
    if clash:
        raise DataError(f"Column {table.names[min(clash)]!r} is both a target and dropped.")
    if dropped:
        notes.append(f"dropped column(s) {_preview([table.names[i] for i in sorted(dropped)])}")
    targets = [table.columns[i] for i in target_idx]
    if task == MULTICLASS:
        y, class_names = _class_target(targets[0], notes)
    else:
        y, class_names = _label_target(targets, notes)
    features = [c for i, c in enumerate(table.columns) if i not in dropped and i not in target_idx]
    X, feature_names = _encode_columns(features, table.n_rows, missing, notes)
    return Dataset(X, y, task, feature_names, class_names, name, notes)


def _class_target(column: _Column, notes: list[str]) -> tuple[np.ndarray, list[str]]:
    missing = column.missing_mask()
    if column.kind == "numeric":
        missing |= ~np.isfinite(column.values)
    if missing.any():
        rows = ", ".join(str(i + 1) for i in np.flatnonzero(missing)[:10])
        raise DataError(
            f"The class column {column.name!r} has {int(missing.sum())} missing value(s) "
            f"(data rows {rows}). Every row needs a class: fill them in or remove those rows."
        )
    if column.kind == "numeric":
        values = column.values
        y = values.astype(np.int64) if np.all(values == np.round(values)) else values
    else:
        y = np.array(list(column.values), dtype=str)
    classes = np.unique(y)
    class_names = [str(c) for c in classes]
    if len(classes) < 2:
        notes.append(f"the class column {column.name!r} has only one class ({class_names[0]})")
    elif len(classes) > max(_MAX_ONEHOT, len(y) // 2):
        notes.append(
            f"the class column {column.name!r} has {len(classes)} different values; "
            "is it really a class and not a numeric feature?"
        )
    if column.kind == "nominal":
        unused = [c for c in column.categories or [] if c not in set(class_names)]
        if unused:
            notes.append(f"declared class(es) {_preview(unused, 5)} have no rows")
    return y, class_names


def _label_target(columns: list[_Column], notes: list[str]) -> tuple[np.ndarray, list[str]]:
    Y = np.column_stack([_binary_labels(c) for c in columns]).astype(np.int64)
    names = [c.name for c in columns]
    empty = [n for n, count in zip(names, Y.sum(axis=0), strict=True) if count == 0]
    if empty:
        notes.append(f"label(s) {_preview(empty, 5)} have no positive rows")
    return Y, names


def _binary_labels(column: _Column) -> np.ndarray:
    missing = column.missing_mask()
    if missing.any():
        raise DataError(
            f"The label column {column.name!r} has {int(missing.sum())} missing value(s); "
            "labels must be 0 or 1 in every row."
        )
    if column.kind == "numeric":
        values = column.values
        bad = sorted({float(v) for v in values if v not in (0.0, 1.0)}, key=str)
        if not bad:
            return values.astype(np.int64)
        bad_text = [f"{v:g}" for v in bad]
    else:
        tokens = [str(v).strip().lower() for v in column.values]
        bad_text = sorted({t for t in tokens if t not in _TRUE_TOKENS | _FALSE_TOKENS})
        if not bad_text:
            return np.array([t in _TRUE_TOKENS for t in tokens], dtype=np.int64)
    raise DataError(
        f"The label column {column.name!r} must hold only 0/1 (or true/false, yes/no) values, "
        f"but it also has {_preview(bad_text, 5)}. A multi-label target is one 0/1 column per "
        "label; for a single class column use a multi-class target instead."
    )


# --------------------------------------------------------------------------- encoding


def _encode_columns(
    columns: list[_Column], n_rows: int, missing: str, notes: list[str]
) -> tuple[np.ndarray, list[str]]:
    """Encode feature columns into a float matrix, appending notes about it."""
    blocks: list[np.ndarray] = []
    names: list[str] = []
    log: dict[str, list[str]] = {"id": [], "string": [], "binary": [], "onehot": []}
    missing_counts: dict[str, int] = {}
    for column in columns:
        encoded = _encode_column(column, n_rows, log)
        if encoded is None:
            continue
        block, block_names = encoded
        n_missing = int(column.missing_mask().sum())
        if n_missing:
            missing_counts[column.name] = n_missing
        blocks.append(block)
        names.extend(block_names)
    _note_encoding(log, notes)
    if not blocks:
        raise DataError(
            "No feature columns are left after taking out the target/labels and dropped or "
            "ID-like columns. Check the target choice and the columns to drop."
        )
    if missing_counts:
        _handle_missing(blocks, columns, missing_counts, missing, n_rows, notes)
    X = np.hstack(blocks).astype(np.float64)
    bad = sorted({names[j] for j in np.flatnonzero(~np.isfinite(X).all(axis=0))})
    if bad:
        raise DataError(f"Column(s) {_preview(bad, 5)} still have invalid values after loading.")
    return np.ascontiguousarray(X), names


def _encode_column(column: _Column, n_rows: int, log: dict) -> tuple[np.ndarray, list[str]] | None:
    if column.kind == "numeric":
        if np.isinf(column.values).any():
            raise DataError(
                f"Column {column.name!r} contains infinite values (inf) in "
                f"{int(np.isinf(column.values).sum())} row(s). Replace them by numbers or "
                "drop the column."
            )
        return column.values.astype(np.float64).reshape(-1, 1), [column.name]
    if column.kind == "string":
        log["string"].append(column.name)
        return None
    present = [v for v in column.values if v is not None]
    if n_rows >= 3 and len(present) == n_rows and len(set(present)) == n_rows:
        log["id"].append(column.name)
        return None
    categories = column.categories
    if categories is None:
        categories = sorted(set(present))
        k = len(categories)
        if k > 2 and not (k <= _MAX_ONEHOT and k < n_rows / 2):
            raise DataError(
                f"Column {column.name!r} holds text with {k} different values in {n_rows} rows, "
                "too many to encode as categories (free text or an ID?). Drop it "
                f"(drop=[{column.name!r}]) or convert it to numbers."
            )
    if len(categories) <= 2:
        positive = _positive_category(categories)
        log["binary"].append(f"{column.name!r}={positive}")
        return _indicator(column.values, [positive]), [column.name]
    log["onehot"].append(f"{column.name!r} into {len(categories)} columns")
    return _indicator(column.values, categories), [f"{column.name}={c}" for c in categories]


def _positive_category(categories: list[str]) -> str:
    """The category encoded as 1 in a one-column (binary) encoding."""
    if len(categories) == 1:
        return categories[0]
    low = [c.strip().lower() for c in categories]
    if low[0] in _TRUE_TOKENS and low[1] in _FALSE_TOKENS:
        return categories[0]
    return categories[1]


def _indicator(values: np.ndarray, categories: list[str]) -> np.ndarray:
    """0/1 columns ``values == category``; NaN rows where the value is missing."""
    block = np.zeros((len(values), len(categories)))
    index = {c: j for j, c in enumerate(categories)}
    for i, value in enumerate(values):
        if value is None:
            block[i] = np.nan
        elif value in index:
            block[i, index[value]] = 1.0
    return block


def _handle_missing(blocks, columns, counts, missing, n_rows, notes) -> None:
    listing = ", ".join(f"{name!r} ({count})" for name, count in list(counts.items())[:10])
    if len(counts) > 10:
        listing += f" and {len(counts) - 10} more columns"
    if missing == "error":
        raise DataError(
            f"Missing values ('?' or empty) in {len(counts)} column(s): {listing}. Fill them in, "
            "drop those columns, or let the loader impute them (missing='impute')."
        )
    empty = [name for name, count in counts.items() if count == n_rows]
    if empty:
        raise DataError(
            f"Column(s) {_preview(empty, 5)} have no values at all (every value is missing). "
            "Drop them."
        )
    for block in blocks:
        holes = np.isnan(block)
        if holes.any():
            means = np.nanmean(block, axis=0)
            block[holes] = np.take(means, np.nonzero(holes)[1])
    notes.append(
        f"imputed {sum(counts.values())} missing value(s) with the column mean in "
        f"{len(counts)} column(s): {listing}"
    )


def _note_encoding(log: dict[str, list[str]], notes: list[str]) -> None:
    if log["string"]:
        notes.append(f"dropped string attribute(s) {_preview(log['string'])}")
    if log["id"]:
        notes.append(
            f"dropped ID-like column(s) with one distinct value per row: {_preview(log['id'])}"
        )
    if log["binary"]:
        shown = ", ".join(log["binary"][:5]) + (", ..." if len(log["binary"]) > 5 else "")
        notes.append(
            f"encoded {len(log['binary'])} two-valued column(s) as one 0/1 column each "
            f"(value that is 1: {shown})"
        )
    for entry in log["onehot"]:
        notes.append(f"one-hot encoded column {entry}")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _describe(exc: BaseException) -> str:
    """``str(exc)``, which liac-arff exceptions can fail to produce."""
    try:
        return str(exc)
    except (TypeError, ValueError):
        return type(exc).__name__


def _preview(items: list[str], limit: int = 20) -> str:
    shown = ", ".join(repr(str(i)) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
