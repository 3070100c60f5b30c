"""Load ARFF and CSV files into a :class:`Dataset`.

:func:`load_dataset` reads

* **ARFF** files (Weka, Mulan, MEKA) with dense or sparse (``{index value, ...}``)
  rows, numeric, nominal and string attributes (the header via ``liac-arff``,
  the ``@data`` section by this module, straight into arrays);
* **CSV-like** text (``.csv``, ``.tsv``, ``.data``, ``.txt``; the separator
  ``,``, ``;``, tab, ``|`` or runs of spaces is detected).

The source may be a path, ``bytes`` or a binary file-like object (an upload),
and the result is a :class:`Dataset` holding the float feature matrix ``X``,
the targets ``y`` and notes about what the loader did to the file.

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
   multi-class problem (Weka convention).  When two or more trailing
   attributes hold only 0/1 values, the first note starts with "Warning:" and
   says the file looks multi-label and how to load it so.

ARFF label attributes always give a ``"multilabel"`` dataset, even with a
single label.  Label values must be 0/1 (``true``/``false`` and
``yes``/``no`` are accepted too); a missing label value is an error.

ARFF values:

* a file whose data rows are sparse gives ``X`` as a ``scipy.sparse`` CSR
  float64 matrix (the estimators take it as it is); a dense file gives a dense
  ndarray.  ``y`` is dense either way;
* in a sparse row an omitted value is 0 for a numeric attribute and the FIRST
  declared value for a nominal one (Weka's convention); an omitted string
  value is missing.  An index given twice in one row is an error;
* ``INTEGER`` and ``REAL`` attributes are read as ``NUMERIC``, as Weka does
  (``2.5`` stays 2.5).  ``nan`` is a missing value like ``?``; ``inf``,
  ``-inf`` and numbers beyond the float range (``1e309``) are an error;
* a nominal value must be one of the declared values.

CSV values:

* a missing value is an empty cell, ``?`` or a usual marker (``NA``, ``N/A``,
  ``NaN``, ``null``, ``None``, ...); a column is numeric when all its other
  cells are numbers; ``;``-separated files may use a decimal comma;
* a column of numbers with a few non-numbers (at most one cell in ten) is a
  numeric column with typos: using it as a feature raises an error that names
  the cells (it is not guessed to be text);
* repeated column names get ``.1``, ``.2`` suffixes, with a note; naming a
  repeated name as target or column to drop is an error (it is ambiguous);
* a first row that looks like data (numbers over numeric columns, a column's
  own values over text columns) gets a note when used as column names; in a
  ``.data`` file (UCI style, normally without a header row) it is read as
  data and the columns are named ``0, 1, ...``.

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
* missing values are replaced by the column mean over all rows (implicit
  zeros of a sparse file included; for encoded nominal columns: the mean of
  each 0/1 column), or raise with ``missing="error"``.

Size: a file is refused, before anything big is allocated, when a matrix
built from it would exceed :data:`MAX_DENSE_MB`: ``rows × columns × 8`` bytes
for a dense one, 16 bytes per stored value for a sparse one.

Every problem with the content of a file raises
:class:`~sblr.exceptions.DataError` with a message that says what is wrong and
how to fix it; :func:`load_dataset`, :func:`list_columns` and
:func:`read_mulan_xml` turn any parser failure into one too.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import numbers
import os
import re
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import arff
import numpy as np
import scipy.sparse as sp

from sblr.exceptions import DataError

__all__ = [
    "MAX_DENSE_MB",
    "Dataset",
    "Encoding",
    "FeatureColumn",
    "list_columns",
    "load_dataset",
    "read_mulan_xml",
]

#: Memory budget of the loader in MiB.  A file is refused with a DataError when a
#: matrix built from it would need more: ``rows × columns × 8`` bytes for a dense
#: matrix, 16 bytes per stored value (value, row and column) for a sparse one.
MAX_DENSE_MB = 2048

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
# Missing-value markers of a CSV cell (pandas' defaults and UCI's "?").
_NA_TOKENS = frozenset(
    {"", "?", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND"}
    | {"1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
)
# A missing cell while parsing: a float, so that a block of cells converts to
# floats in one call, and never equal to a text or nominal value.
_MISSING = math.nan
_SAMPLE_ROWS = 100  # rows read by list_columns to settle the header and the columns
_CHUNK_CELLS = 1 << 20  # cells converted at a time
_TYPO_SHARE = 10  # a numeric column may have at most 1 cell in 10 that is not a number
_SPARSE_ENTRY_BYTES = 16
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


# --------------------------------------------------------------------------- Dataset


@dataclass(frozen=True)
class FeatureColumn:
    """How one column of the file became columns of ``X``.

    ``kind`` is ``"numeric"`` (one column, as it is), ``"binary"`` (one 0/1 column: 1 where
    the value is ``positive``, 0 for the other of ``categories``) or ``"onehot"`` (one 0/1
    column per value of ``categories``, named ``"<name>=<value>"``).
    """

    name: str
    kind: str
    categories: tuple[str, ...] = ()
    positive: str | None = None


@dataclass(frozen=True, eq=False)
class Encoding:
    """How a file's columns became ``X`` and ``y``: what reads another file the same way
    (``load_dataset(..., like=dataset)``) and what a saved model records.

    Attributes
    ----------
    features : tuple of FeatureColumn
        In the order their columns appear in ``X``.
    target : tuple of str
        The class column (multi-class) or the label columns (multi-label), by name.
    task : {"multiclass", "multilabel"}
    class_values : tuple
        Multi-class: the class values as they are in ``y`` (numbers or text), in
        ``class_names`` order; multi-label: the label names.
    dropped : tuple of str
        Columns left out by request.
    means : ndarray of shape (n_features,)
        Each column of ``X``'s training mean: a missing value of another file is imputed
        with it, never with that file's own mean.
    sparse : bool
        ``X`` was a CSR matrix.
    """

    features: tuple
    target: tuple
    task: str
    class_values: tuple
    dropped: tuple = ()
    means: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sparse: bool = False

    def to_dict(self) -> dict:
        """Plain lists and strings (for a model file)."""
        return {
            "features": [[f.name, f.kind, list(f.categories), f.positive] for f in self.features],
            "target": list(self.target),
            "task": self.task,
            "class_values": [
                v.item() if isinstance(v, np.generic) else v for v in self.class_values
            ],
            "dropped": list(self.dropped),
            "means": [float(v) for v in self.means],
            "sparse": bool(self.sparse),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Encoding:
        return cls(
            features=tuple(
                FeatureColumn(str(n), str(k), tuple(str(c) for c in cats), p)
                for n, k, cats, p in d["features"]
            ),
            target=tuple(str(t) for t in d["target"]),
            task=str(d["task"]),
            class_values=tuple(d["class_values"]),
            dropped=tuple(str(t) for t in d.get("dropped", ())),
            means=np.asarray(d["means"], dtype=np.float64),
            sparse=bool(d.get("sparse", False)),
        )


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded classification data set.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n_samples, n_features)
        Encoded features (float64); CSR for a sparse ARFF file.
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

    X: np.ndarray | sp.csr_matrix
    y: np.ndarray | None
    task: str
    feature_names: list[str]
    class_names: list[str]
    name: str = "dataset"
    notes: list[str] = field(default_factory=list)
    encoding: Encoding | None = None

    def __post_init__(self) -> None:
        if self.task not in (MULTICLASS, MULTILABEL):
            raise ValueError(f"task must be 'multiclass' or 'multilabel', not {self.task!r}")
        shape = getattr(self.X, "shape", ())
        if len(shape) != 2 or shape[1] != len(self.feature_names):
            raise ValueError("X must be 2-D with one column per feature name")
        if self.y is None:  # rows to predict, read like= a training file: no labels
            return
        if len(self.y) != shape[0]:
            raise ValueError("X and y must have the same number of rows")
        if self.task == MULTILABEL and (
            self.y.ndim != 2 or self.y.shape[1] != len(self.class_names)
        ):
            raise ValueError("multilabel y must be 2-D with one column per class name")

    @property
    def has_labels(self) -> bool:
        """False for rows to predict (a file without its label columns, read ``like=``)."""
        return self.y is not None

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
        if self.y is None:
            raise DataError(f"{self.name!r} has no labels: its rows are to be predicted.")
        if self.task == MULTILABEL:
            return np.asarray(self.y, dtype=int).copy()
        as_text = np.asarray(self.y).astype(str)
        index = {name: j for j, name in enumerate(self.class_names)}
        codes = np.array([index.get(v, -1) for v in as_text], dtype=np.intp)
        if (codes < 0).any():
            raise ValueError(f"class {as_text[codes < 0][0]!r} is not in class_names")
        matrix = np.zeros((len(codes), len(self.class_names)), dtype=int)
        matrix[np.arange(len(codes)), codes] = 1  # no n × m comparison of strings
        return matrix

    def class_codes(self) -> np.ndarray:
        """Multi-class: each row's class as its position in ``class_names`` (0 … m-1), the
        coding of :meth:`label_matrix`'s columns: the one class coding of sblr (classes 2, 9
        and 10 are coded 0, 1, 2, not by their text order "10" < "2" < "9").

        Examples
        --------
        >>> ds = Dataset(X=np.zeros((4, 1)), y=np.array([9, 10, 2, 9]), task="multiclass",
        ...              feature_names=["f"], class_names=["2", "9", "10"])
        >>> ds.class_codes()
        array([1, 2, 0, 1])
        """
        if self.task == MULTILABEL:
            raise DataError("Multi-label data have a label matrix, not class codes.")
        return self.label_matrix().argmax(axis=1)

    def summary(self) -> dict[str, Any]:
        """Return a dict describing the data set.

        Keys: ``name``, ``instances``, ``features``, ``classes``, ``task``,
        ``label_cardinality`` (mean number of labels per row),
        ``label_density`` (cardinality / classes) and ``class_counts``
        (class/label name → number of rows having it; empty without labels).
        """
        base = {
            "name": self.name,
            "instances": self.n_samples,
            "features": self.n_features,
            "classes": self.n_classes,
            "task": self.task,
        }
        if self.y is None:
            return base | {
                "label_cardinality": math.nan,
                "label_density": math.nan,
                "class_counts": {},
            }
        matrix = self.label_matrix()
        cardinality = float(matrix.sum(axis=1).mean()) if self.n_samples else 0.0
        return base | {
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
    """One target column, dense.

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
    """A parsed file: one column per attribute, before encoding.

    ``values`` (n_rows × n_columns, float, NaN = missing) holds the numbers of
    numeric columns and the category codes (positions in ``categories``) of
    nominal and text ones: a dense ndarray, or a CSC matrix for a sparse ARFF
    file, whose implicit zeros are 0 or the first declared category.  ARFF
    string attributes keep their values in ``strings``.
    """

    names: list[str]
    kinds: list[str]
    categories: list[list[str] | None]
    values: Any
    lines: np.ndarray  # line of the file holding each data row
    strings: dict[int, np.ndarray] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    repeated: dict[str, list[int]] = field(default_factory=dict)  # CSV names used twice
    typos: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # (row, cell)

    @property
    def n_rows(self) -> int:
        return int(self.values.shape[0])

    @property
    def sparse(self) -> bool:
        return sp.issparse(self.values)

    def numbers(self, j: int) -> np.ndarray:
        """Column ``j`` of ``values`` as a dense float array."""
        if self.sparse:
            return self.values[:, [j]].toarray().ravel()
        return np.asarray(self.values[:, j], dtype=np.float64)

    def column(self, j: int) -> _Column:
        name, kind = self.names[j], self.kinds[j]
        if kind == "string":
            return _Column(name, kind, self.strings[j])
        values = self.numbers(j)
        if kind == "numeric":
            return _Column(name, kind, values)
        cats = self.categories[j] or []
        texts = [None if math.isnan(c) else cats[int(c)] for c in values.tolist()]
        return _Column(name, kind, np.array(texts, dtype=object), cats)

    def where(self, row: int) -> str:
        return f"data row {row + 1} (line {int(self.lines[row])})"


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
    max_dense_mb: float | None = None,
    like: Dataset | Encoding | None = None,
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
        columns are named "0", "1", ...  A ``.data`` file whose first row
        looks like data is read without header (see the module docstring).
    drop : str, int or list, optional
        Columns (names or positions) to leave out, e.g. an ID column.
    missing : {"impute", "error"}, default "impute"
        Replace missing feature values by the column mean, or raise.
    max_dense_mb : float, optional
        The size limit of this load (default :data:`MAX_DENSE_MB`): a matrix built from the
        file that would be larger is refused before it is allocated. A server taking files
        from many users (the dashboard) sets a lower one.
    like : Dataset or Encoding, optional
        Read a second file (a test file, or rows to predict) exactly as this training data
        was read: its features, encodings, class names and order.  Columns are matched by
        NAME (a CSV with its columns in another order gives the same rows); the target
        options are taken from the training data (``target``, ``n_labels``, ``xml`` and
        ``drop`` must not be given).  What is checked, and what is done:

        * a feature column of the training data that the file lacks: :class:`DataError`;
        * a column the training data did not use: left out, with a note;
        * a value of a one-hot column the training data never had: all its 0/1 columns 0,
          with a note; of a two-valued column: :class:`DataError`;
        * text in a column that was numeric: :class:`DataError` naming the cell;
        * a missing value: the training column's mean (never this file's);
        * the label columns absent: rows to predict (``y`` is None, ``has_labels`` False);
          some present and some not, or a class the training data never had:
          :class:`DataError`.

    Returns
    -------
    Dataset
        ``X`` is a CSR matrix for a sparse ARFF file, else a dense ndarray.

    Raises
    ------
    DataError
        For any problem with the file or its content.
    TypeError
        When ``source`` or ``xml`` is not a path, bytes or file-like object.

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

    A sparse ARFF file gives a CSR matrix:

    >>> sparse = (b"@relation r\\n@attribute a numeric\\n@attribute b {x,y}\\n"
    ...           b"@attribute c {p,q}\\n@data\\n{0 2, 2 q}\\n{1 y}\\n")
    >>> ds = load_dataset(sparse, name="r.arff")
    >>> ds.X.format, ds.X.toarray(), ds.y.tolist()
    ('csr', array([[2., 0.],
           [0., 1.]]), ['q', 'p'])

    A test file, its columns in another order, read like the training file:

    >>> train = load_dataset(io.BytesIO(raw), target="label", name="toy.csv")
    >>> test = load_dataset(b"size,label,colour\\n5,b,blue\\n2,a,red\\n", name="t.csv", like=train)
    >>> test.X, test.y.tolist()
    (array([[0., 5.],
           [1., 2.]]), ['b', 'a'])
    >>> load_dataset(b"colour,size\\nred,7\\n", name="new.csv", like=train).has_labels
    False
    """
    if missing not in ("impute", "error"):
        raise DataError(f"missing must be 'impute' or 'error', not {missing!r}")
    if max_dense_mb is not None and not (
        isinstance(max_dense_mb, numbers.Real)
        and not isinstance(max_dense_mb, bool)
        and math.isfinite(max_dense_mb)
        and max_dense_mb > 0
    ):
        raise ValueError(f"max_dense_mb must be a positive number; got {max_dense_mb!r}.")
    if like is not None:
        encoding = like.encoding if isinstance(like, Dataset) else like
        if not isinstance(encoding, Encoding):
            raise DataError(
                "like= needs a Dataset read by load_dataset (or its encoding): this one does "
                "not record how its file was encoded."
            )
        given = [
            k
            for k, v in (("target", target), ("n_labels", n_labels), ("xml", xml), ("drop", drop))
            if v is not None
        ]
        if given:
            raise DataError(
                f"With like=, the columns come from the training data; leave out "
                f"{', '.join(given)}."
            )
        data, path = _read_bytes(source, name, what="data file")
        file_name = name or (path.name if path else _source_name(source))
        with _reading("data file"), _size_limit(max_dense_mb):
            return _load_like(
                data, path, file_name, encoding, like, fmt=format, name=name, header=header
            )
    data, path = _read_bytes(source, name, what="data file")
    xml_data = None if xml is None else _read_bytes(xml, None, what="XML label file")[0]
    file_name = name or (path.name if path else _source_name(source))
    with _reading("data file"), _size_limit(max_dense_mb):
        return _load(
            data,
            path,
            file_name,
            target=target,
            n_labels=n_labels,
            xml=xml_data,
            fmt=format,
            name=name,
            header=header,
            drop=drop,
            missing=missing,
        )


def list_columns(
    source: str | os.PathLike | bytes | Any,
    *,
    name: str | None = None,
    format: str | None = None,
    header: bool = True,
) -> list[str]:
    r"""Column (attribute) names of a CSV or ARFF file, for choosing targets.

    Reads only what the names depend on: the ARFF header up to ``@data``, or
    the first rows of a CSV file.  Headerless CSV files give ``"0", "1", ...``.

    Examples
    --------
    >>> list_columns(b"a,b,label\n1,2,x\n3,4,y\n", name="t.csv")
    ['a', 'b', 'label']
    """
    data, path = _read_bytes(source, name, what="data file")
    with _reading("data file"):
        text, _ = _decode(data)
        ext = _extension(name, path)
        if _infer_format(format, ext, text) == "arff":
            return _read_arff(text, header_only=True)[0].names
        return _csv_names(text, header=header, ext=ext)


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
    with _reading("XML label file"):
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


@contextmanager
def _reading(what: str) -> Iterator[None]:
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
        raise DataError(f"Could not read the {what}: {_describe(exc)}") from exc
    # Raised outside the handler so that the MemoryError's frames (and arrays) are freed.
    raise DataError(message)


_FEWER = "Use fewer rows or columns, or store sparse data as sparse ARFF ({index value, ...} rows)."


#: The size limit of the load running now, if :func:`load_dataset` was given one.
_LIMIT_MB: ContextVar[float | None] = ContextVar("sblr_io_limit_mb", default=None)


@contextmanager
def _size_limit(limit_mb: float | None) -> Iterator[None]:
    token = _LIMIT_MB.set(limit_mb)
    try:
        yield
    finally:
        _LIMIT_MB.reset(token)


def _check_memory(n_bytes: float, what: str, advice: str = _FEWER) -> None:
    """Refuse, before allocating, a matrix larger than the load's limit (:data:`MAX_DENSE_MB`
    unless :func:`load_dataset` was given ``max_dense_mb``)."""
    needed = n_bytes / 2**20
    limit = _LIMIT_MB.get()
    if limit is None:
        limit, which = MAX_DENSE_MB, "the loader's limit"
        source = " (sblr.io.MAX_DENSE_MB)"
    else:
        which, source = "this load's limit", ""
    if needed > limit:
        raise DataError(
            f"The file is too large to load: {what} would need {needed:,.1f} MB, more than "
            f"{which} of {limit:,g} MB{source}. {advice}"
        )


def _check_dense(n_rows: int, n_columns: int, what: str, advice: str = _FEWER) -> None:
    _check_memory(
        8.0 * n_rows * n_columns,
        f"{what} ({n_rows:,} rows × {n_columns:,} columns, dense)",
        advice,
    )


def _check_sparse(n_entries: int, n_rows: int, n_columns: int, what: str) -> None:
    _check_memory(
        float(_SPARSE_ENTRY_BYTES) * n_entries,
        f"{what} ({n_rows:,} rows × {n_columns:,} columns, {n_entries:,} stored values)",
    )


# --------------------------------------------------------------------------- loading


def _load(
    data: bytes, path, file_name, *, target, n_labels, xml, fmt, name, header, drop, missing
) -> Dataset:
    text, notes = _decode(data)
    ext = _extension(name, path)
    fmt = _infer_format(fmt, ext, text)
    if fmt == "arff":
        table, relation = _read_arff(text)
        labels = _arff_targets(table, relation, target, n_labels, xml, path)
    else:
        table = _read_csv(text, header=header, ext=ext)
        labels = _csv_targets(table, target, n_labels)
    table.notes[:0] = notes
    ds = _build_dataset(table, labels, drop=drop, missing=missing, name=_dataset_name(file_name))
    _check_characters(ds.class_names, "class named")
    _check_characters(ds.feature_names, "column named")
    _check_characters(ds.notes, "value (in the note)")
    return ds


def _load_like(data: bytes, path, file_name, encoding: Encoding, like, *, fmt, name, header):
    """A file read as the training data ``encoding`` describes (``load_dataset(like=)``)."""
    text, notes = _decode(data)
    ext = _extension(name, path)
    fmt = _infer_format(fmt, ext, text)
    table = _read_arff(text)[0] if fmt == "arff" else _read_csv(text, header=header, ext=ext)
    notes = notes + list(table.warnings) + list(table.notes)
    if table.n_rows < 1:
        raise DataError("The file has no data rows.")
    where = {}
    for j, col in enumerate(table.names):
        where.setdefault(col, j)
    training = f"the training data {like.name!r}" if isinstance(like, Dataset) else "training"
    lacking = [f.name for f in encoding.features if f.name not in where]
    if lacking:
        raise DataError(
            f"The file lacks {len(lacking)} feature column(s) of {training}: "
            f"{_preview(lacking, 8)}. Columns are matched by name; the file has "
            f"{_preview(table.names, 8)}."
        )
    used = {f.name for f in encoding.features} | set(encoding.target) | set(encoding.dropped)
    extra = [c for c in table.names if c not in used]
    if extra:
        notes.append(f"left out column(s) {_preview(extra, 8)}: not features of {training}")
    n = table.n_rows
    widths = [len(f.categories) if f.kind == "onehot" else 1 for f in encoding.features]
    width = int(sum(widths))
    if not encoding.sparse:
        _check_dense(n, width, "the feature matrix")
    rows_parts, cols_parts, data_parts = [], [], []  # the entries of X, column by column
    at = 0
    unseen_notes = []
    for spec, w in zip(encoding.features, widths, strict=True):
        j = where[spec.name]
        if spec.kind == "numeric":
            column = _numeric_like(table, j, spec.name)
            hit = np.flatnonzero(column != 0)  # NaN (missing) included: imputed below
            rows_parts.append(hit)
            cols_parts.append(np.full(hit.size, at))
            data_parts.append(column[hit])
        else:
            values = _texts_like(table, j)
            if spec.kind == "binary":
                bad = sorted({v for v in values if v is not None} - set(spec.categories))
                if bad:
                    raise DataError(
                        f"Column {spec.name!r} has value(s) {_preview(bad, 5)} that {training} "
                        f"never had: it knew only {_preview(list(spec.categories), 5)}."
                    )
                codes = np.array(
                    [-2 if v is None else (0 if v == spec.positive else -1) for v in values]
                )
            else:
                index = {c: i for i, c in enumerate(spec.categories)}
                bad = sorted({v for v in values if v is not None and v not in index})
                if bad:
                    unseen_notes.append(f"{spec.name!r}: {_preview(bad, 5)}")
                codes = np.array([-2 if v is None else index.get(v, -1) for v in values])
            hit = np.flatnonzero(codes >= 0)
            rows_parts.append(hit)
            cols_parts.append(at + codes[hit])
            data_parts.append(np.ones(hit.size))
            holes = np.flatnonzero(codes == -2)  # missing: every column of the group, NaN
            rows_parts.append(np.repeat(holes, w))
            cols_parts.append(np.tile(np.arange(at, at + w), holes.size))
            data_parts.append(np.full(holes.size * w, np.nan))
        at += w
    if unseen_notes:
        notes.append(
            "value(s) the training data never had, encoded as all 0 in their one-hot columns: "
            + "; ".join(unseen_notes)
        )
    rows = np.concatenate(rows_parts) if rows_parts else np.zeros(0, dtype=np.intp)
    cols = np.concatenate(cols_parts) if cols_parts else np.zeros(0, dtype=np.intp)
    vals = np.concatenate(data_parts) if data_parts else np.zeros(0)
    holes = np.isnan(vals)
    if holes.any():  # the training column's mean, never this file's
        vals[holes] = encoding.means[cols[holes]]
        notes.append(
            f"imputed {int(holes.sum())} missing value(s) with the training data's column means"
        )
    if encoding.sparse:
        _check_sparse(vals.size, n, width, "the feature matrix")
        X = sp.csr_matrix((vals, (rows, cols)), shape=(n, width), dtype=np.float64)
        X.eliminate_zeros()
    else:
        X = np.zeros((n, width))
        X[rows, cols] = vals
    y = _labels_like(table, where, encoding, training, notes)
    feature_names = (
        list(like.feature_names) if isinstance(like, Dataset) else _feature_names(encoding)
    )
    class_names = (
        list(like.class_names)
        if isinstance(like, Dataset)
        else [str(v) for v in encoding.class_values]
    )
    ds = Dataset(
        X, y, encoding.task, feature_names, class_names, _dataset_name(file_name), notes, encoding
    )
    _check_characters(ds.notes, "value (in the note)")
    return ds


def _feature_names(encoding: Encoding) -> list[str]:
    """The names of X's columns an encoding makes (one-hot: ``attr=value``)."""
    names: list[str] = []
    for f in encoding.features:
        if f.kind == "onehot":
            names.extend(f"{f.name}={c}" for c in f.categories)
        else:
            names.append(f.name)
    return names


def _numeric_like(table: _Table, j: int, name: str) -> np.ndarray:
    """Column ``j`` as numbers for a numeric training column (NaN = missing)."""
    if table.kinds[j] == "numeric":
        return table.numbers(j)
    values = table.column(j).values
    out = np.full(len(values), np.nan)
    for r, v in enumerate(values):
        if v is None:
            continue
        try:
            out[r] = float(str(v).strip())
        except ValueError:
            raise DataError(
                f"Column {name!r} holds numbers in the training data, but {table.where(r)} "
                f"of this file has {_shorten(str(v), 40)!r}."
            ) from None
    if not np.isfinite(out[~np.isnan(out)]).all():
        raise DataError(f"Column {name!r} has an infinite value.")
    return out


def _texts_like(table: _Table, j: int) -> list:
    """Column ``j`` as text values (None = missing), numbers written as the training file
    would have read them ("1" for 1.0)."""
    column = table.column(j)
    if column.kind == "numeric":
        return [None if math.isnan(v) else (f"{v:g}") for v in column.values]
    return [None if v is None else str(v) for v in column.values]


def _labels_like(table: _Table, where: dict, encoding: Encoding, training: str, notes: list):
    """``y`` of the file coded as the training data's, or None when it has no label column."""
    present = [t for t in encoding.target if t in where]
    if not present:
        notes.append("no label column: the rows are to be predicted")
        return None
    if len(present) < len(encoding.target):
        absent = [t for t in encoding.target if t not in where]
        raise DataError(
            f"The file has some label columns of {training} but not {_preview(absent, 5)}: "
            "give every label column, or none (rows to predict)."
        )
    if encoding.task == MULTILABEL:
        return np.column_stack(
            [_binary_labels(table.column(where[t])) for t in encoding.target]
        ).astype(np.int64)
    y, _ = _class_target(table.column(where[encoding.target[0]]), [])
    known = {str(v): v for v in encoding.class_values}
    new = sorted({str(v) for v in y.tolist()} - set(known))
    if new:
        raise DataError(
            f"The class column {encoding.target[0]!r} has class(es) {_preview(new, 5)} that "
            f"{training} never had (it knew {_preview(list(known), 8)})."
        )
    values = [known[str(v)] for v in y.tolist()]
    return np.asarray(values)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_characters(texts: list[str], what: str) -> None:
    """Reject names that are not text: an escape such as ``\\ud800`` in an ARFF file gives half
    of a UTF-16 surrogate pair, which no page, file or browser can show (it cannot be
    written as UTF-8)."""
    for text in texts:
        if _SURROGATE.search(text):
            shown = _shorten(text.encode("utf-8", "backslashreplace").decode("ascii"))
            raise DataError(
                f"The file has a {what} '{shown}': an escape \\uD800-\\uDFFF there is half "
                "of a UTF-16 surrogate pair, not a character. Write the character itself "
                "(save the file as UTF-8) or remove the escape."
            )


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
            # Windows-1252 (Excel's "CSV" on Western Windows) before Latin-1: the same
            # letters, plus curly quotes, dashes and € where Latin-1 has control codes
            try:
                text = data.decode("cp1252")
                notes.append("the file is not valid UTF-8; decoded it as Windows-1252")
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
    for line in io.StringIO(text):
        stripped = line.strip()
        if stripped and not stripped.startswith("%"):
            return stripped.lower().startswith("@relation")
    return False


def _to_floats(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Convert a 2-D object array of cells (str, or NaN = missing) to floats.

    Returns the numbers and the mask of cells that are not numbers (NaN there).
    Blocks are converted in one call; only the columns that fail are split up,
    and only the cells of a failing single column go through Python one by one.
    """
    try:
        return cells.astype(np.float64), np.zeros(cells.shape, dtype=bool)
    except (ValueError, TypeError):
        pass
    if cells.shape[1] > 1:
        half = cells.shape[1] // 2
        left, left_bad = _to_floats(cells[:, :half])
        right, right_bad = _to_floats(cells[:, half:])
        return np.hstack([left, right]), np.hstack([left_bad, right_bad])
    # One column with non-numbers: each distinct cell converted once, mapped back to the
    # cells in C (a text column repeats its few categories; 850,000 text cells took 5.8 s one
    # by one).  Missing cells (NaN) come out of factorize as -1: NaN, and a number.
    codes, distinct = _factorize(cells[:, 0])
    numbers = np.full(len(distinct) + 1, np.nan)
    bad = np.zeros(len(distinct) + 1, dtype=bool)
    for u, cell in enumerate(distinct):
        try:
            numbers[u] = float(cell)
        except (ValueError, TypeError):
            bad[u] = True
    return numbers[codes].reshape(cells.shape), bad[codes].reshape(cells.shape)


def _factorize(column: np.ndarray) -> tuple[np.ndarray, list]:
    """``(codes, distinct)``: each cell's index into the list of distinct cells, -1 for a
    missing one (NaN or None); pandas' hash table, in C."""
    import pandas as pd  # only for files with text cells

    codes, distinct = pd.factorize(column, use_na_sentinel=True)
    return codes, distinct.tolist()


def _chunks(rows: Iterator, size: int) -> Iterator[list]:
    while chunk := list(itertools.islice(rows, size)):
        yield chunk


# --------------------------------------------------------------------------- ARFF

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


def _read_arff(text: str, *, header_only: bool = False) -> tuple[_Table, str]:
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
            f"Could not read the ARFF file: {_describe(exc)}. Check the file is valid ARFF."
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
        return _Table(names, kinds, categories, empty, np.empty(0, dtype=np.int64)), relation
    reader = _ArffData(names, kinds, categories)
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
        shown = _shorten(kind)
        why = (
            "it does not end with '}'"
            if not kind.endswith("}")
            else "a value has a space or a quote in it (quote such values: 'a b'), or a "
            "comma is missing"
        )
        raise DataError(
            f"The ARFF file is malformed: line {line_no} declares the nominal attribute "
            f"{_shorten(name)!r} with the value list {shown!r}, which is not a list "
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
    message = _describe(exc).rstrip(".")
    line_no = getattr(exc, "line", None)
    detail = ""
    if isinstance(line_no, int) and line_no > 0:
        lines = text.splitlines()
        if line_no <= len(lines):
            detail = f" Line {line_no} reads: {_shorten(lines[line_no - 1].strip())!r}."
    hint = ""
    if isinstance(exc, arff.BadLayout):
        hint = (
            " The file may be truncated or not be an ARFF file "
            "(it needs @relation, @attribute and @data sections)."
        )
    elif isinstance(exc, arff.BadDataFormat):
        hint = " A data row has the wrong number of values (is the file truncated?)."
    return f"The ARFF file is malformed: {message}.{detail}{hint}"


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _ArffData:
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
            categories[j][0] if k == "nominal" else ("0" if k == "numeric" else _MISSING)
            for j, k in enumerate(kinds)
        ]

    # ------------------------------------------------------------------ rows

    @staticmethod
    def rows(lines: list[str], start: int) -> Iterator[tuple[int, str]]:
        for i in range(start, len(lines)):
            row = lines[i].strip()
            if row and not row.startswith("%"):
                yield i + 1, row

    def read(self, lines: list[str], start: int) -> _Table:
        n_rows = n_entries = 0
        sparse = None
        for _, row in self.rows(lines, start):
            if sparse is None:
                sparse = row.startswith("{")
            n_rows += 1
            n_entries += row.count(",") + 1 if row.startswith("{") else self.n
        if sparse:
            _check_sparse(n_entries, n_rows, self.n, "the sparse ARFF data")
            values, strings, line_of = self.read_sparse(lines, start, n_rows)
        else:
            _check_dense(n_rows, self.n, "the ARFF data")
            values, strings, line_of = self.read_dense(lines, start, n_rows)
        return _Table(
            list(self.names),
            list(self.kinds),
            list(self.categories),
            values,
            line_of,
            strings,
        )

    def fail(self, line_no: int, row: str, problem: str) -> DataError:
        return DataError(
            f"The ARFF file is malformed: {problem}. Line {line_no} reads: {_shorten(row)!r}."
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
            values = [_MISSING if v in ("", "?") else v for v in values]
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
                pairs.append((int(parts[0]), _MISSING if parts[1] == "?" else parts[1]))
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
            return _MISSING
        if raw[0] not in "'\"":
            return raw
        try:
            return _ESCAPE.sub(_unescape_one, raw[1:-1])
        except ValueError as exc:
            raise self.fail(line_no, row, f"{exc} on line {line_no}") from exc

    # ------------------------------------------------------------------ conversion

    def read_dense(self, lines, start, n_rows):
        fast = self.read_dense_parsed(lines, start, n_rows)
        if fast is not None:
            return fast
        values = np.empty((n_rows, self.n))
        strings = {j: np.empty(n_rows, dtype=object) for j in self.string}
        line_of = np.empty(n_rows, dtype=np.int64)
        numeric = np.flatnonzero(self.numeric)
        r = 0
        for chunk in _chunks(self.rows(lines, start), max(1, _CHUNK_CELLS // self.n)):
            cells = np.empty((len(chunk), self.n), dtype=object)
            for i, (line_no, row) in enumerate(chunk):
                cells[i] = self.dense_values(line_no, row)
                line_of[r + i] = line_no
            block = values[r : r + len(chunk)]
            if numeric.size:
                numbers, bad = _to_floats(cells[:, numeric])
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

    def read_dense_parsed(self, lines, start, n_rows):
        """:meth:`read_dense` by pandas' C parser (yeast: 0.075 -> 0.03 s), or None where the
        line-by-line reading is needed for its checks and messages: quotes, braces, comments,
        whitespace inside a value, a row without exactly one value per attribute, a numeric
        value that is not a number (each such file is read line by line, which says where)."""
        import pandas as pd

        data = lines[start:]
        text = "\n".join(data)
        if _QUOTE_OR_BRACE.search(text) or "%" in text or self.string:
            return None
        kept = [i for i, line in enumerate(data) if line.strip()]
        if len(kept) != n_rows or any(data[i].count(",") != self.n - 1 for i in kept):
            return None
        numeric = np.flatnonzero(self.numeric)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", pd.errors.ParserWarning)
                frame = pd.read_csv(
                    io.StringIO(text),
                    sep=",",
                    header=None,
                    names=range(self.n),
                    index_col=False,
                    dtype={j: (np.float64 if self.numeric[j] else object) for j in range(self.n)},
                    na_values=["", "?"],
                    keep_default_na=False,
                    skipinitialspace=True,
                    skip_blank_lines=True,
                    engine="c",
                )
        except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError, TypeError):
            return None
        if len(frame) != n_rows:
            return None
        line_of = np.array(kept, dtype=np.int64) + start + 1
        values = np.empty((n_rows, self.n))
        if numeric.size:
            values[:, numeric] = frame[list(numeric)].to_numpy(dtype=np.float64)
        for j in self.nominal:  # each distinct value looked up once
            codes, distinct = _factorize(frame[j].to_numpy(dtype=object))
            if any(_WHITESPACE.search(v) for v in distinct):
                return None  # a value with a space: the line-by-line reader says where
            lookup = self.codes[j]
            mapped = np.array([lookup.get(v, -1.0) for v in distinct] + [np.nan])
            if (mapped == -1.0).any():
                return None  # an undeclared value: the line-by-line reader says where
            values[:, j] = mapped[codes]  # code -1 (missing) takes the last entry, NaN
        return values, {}, line_of

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
            if len(cells) >= _CHUNK_CELLS:
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
            numbers, bad = _to_floats(cell_of[numeric].reshape(-1, 1))
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
            f"The ARFF file has the value {_shorten(value)!r} for the nominal attribute "
            f"{self.names[j]!r} in data row {row + 1} (line {int(line_of[row])}), but that value "
            f"is not declared: the declared values are {_preview(self.categories[j], 10)}. "
            "Fix the value or add it to the @attribute line."
        )

    def not_a_number(self, j: int, value: str, row: int, line_of: np.ndarray) -> DataError:
        return DataError(
            f"The ARFF file has {_shorten(str(value))!r} for the numeric attribute "
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
    binary = _trailing_binary(table)
    how = (
        "upload its Mulan XML label file (or put NAME.xml beside the ARFF file) or set the "
        f"number of labels to {binary} (n_labels={binary})"
    )
    if table.kinds[-1] == "nominal":
        if binary >= 2:
            table.warnings.append(
                f"Warning: the last {binary} attributes "
                f"({_preview(names[len(names) - binary :], 5)}) hold only 0/1 values, as the "
                "labels of a multi-label file do, but nothing says which attributes are labels: "
                f"only the last one, {names[-1]!r}, is used, as the class of a multi-class "
                f"problem. To load the file as multi-label, {how}."
            )
        table.notes.append(
            f"no label information (XML file, number of labels or MEKA '-C'): using the last "
            f"attribute '{names[-1]}' as the class of a multi-class problem (Weka convention)"
        )
        return MULTICLASS, [len(names) - 1]
    hint = f" The last {binary} attributes hold only 0/1 values: {how}." if binary else ""
    raise DataError(
        "Cannot tell which attributes of this ARFF file are the labels. For a Mulan multi-label "
        "file, upload its XML label file (or put NAME.xml beside it) or set the number of labels "
        "(the last N attributes). For a single-label file the last attribute must be nominal."
        + hint
    )


def _trailing_binary(table: _Table) -> int:
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

_CSV_ADVICE = (
    "Check that every row has the same number of values, separated by commas, semicolons or tabs."
)


@dataclass
class _CsvLayout:
    """Separator, column names and the first rows of a CSV file (read once)."""

    sep: str
    names: list[str]
    has_header: bool
    head: list[tuple[int, list[str]]]  # the data rows read so far: (line, cells)
    rest: Iterator[tuple[int, list[str]]]
    notes: list[str]
    repeated: dict[str, list[int]]
    spans: list[tuple[int, int]]  # (first, last) lines of the rows read that span lines


def _csv_layout(text: str, *, header: bool, ext: str) -> _CsvLayout:
    """Read the header and up to ``_SAMPLE_ROWS`` rows: enough to name the columns."""
    sep = "\t" if ext == ".tsv" else _detect_separator(text)
    spans: list[tuple[int, int]] = []
    rows = _csv_rows(text, sep, spans)
    head = list(itertools.islice(rows, _SAMPLE_ROWS + 1))
    if not head:
        raise DataError("The file is empty. Choose a file with data in it.")
    notes: list[str] = []
    first = head[0][1]
    has_header = header
    if header and _first_row_is_data(first, [cells for _, cells in head[1:]], sep):
        shown = _preview(first, 5)
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
        names, repeated = _header_names(first)
        head = head[1:]
        if repeated:
            renamed = [names[i] for positions in repeated.values() for i in positions[1:]]
            notes.append(
                f"column name(s) {_preview(list(repeated), 5)} appear more than once in the "
                f"header: renamed the repeats {_preview(renamed, 5)}"
            )
    else:
        names, repeated = [str(i) for i in range(len(first))], {}
    return _CsvLayout(sep, names, has_header, head, rows, notes, repeated, spans)


def _csv_names(text: str, *, header: bool, ext: str) -> list[str]:
    """Column names of a CSV file from its first rows (all rows only if the last
    column may be an empty one left by delimiters at line ends)."""
    layout = _csv_layout(text, header=header, ext=ext)
    if _may_be_empty_last(layout):
        return _read_csv(text, header=header, ext=ext).names
    return layout.names


def _may_be_empty_last(layout: _CsvLayout) -> bool:
    if len(layout.names) < 2:
        return False
    if layout.has_header and not layout.names[-1].startswith("Unnamed:"):
        return False
    last = len(layout.names) - 1
    return all(len(cells) <= last or cells[last] in _NA_TOKENS for _, cells in layout.head)


def _read_csv(text: str, *, header: bool, ext: str) -> _Table:
    layout = _csv_layout(text, header=header, ext=ext)
    names, width = layout.names, len(layout.names)
    decimal_comma = layout.sep == ";"
    n_lines = text.count("\n") + text.count("\r") + 1  # at least the number of rows
    _check_dense(n_lines, width, "the CSV data")
    parsed = _parsed_columns(text, layout, decimal_comma)
    if parsed is not None:
        values, texts, line_of = parsed
    else:  # the line-by-line reader: exact messages and notes for unusual files
        values, texts, line_of = _read_rows(text, layout, n_lines, decimal_comma)
    table = _Table(
        list(names),
        ["numeric"] * width,
        [None] * width,
        values,
        line_of,
        notes=layout.notes,
        repeated=layout.repeated,
    )
    for j, parts in texts.items():
        _text_column(table, j, np.concatenate(parts), decimal_comma)
    _drop_trailing_empty(table, layout.has_header)
    if layout.spans:
        shown = ", ".join(f"{a}–{b}" for a, b in layout.spans[:5])
        shown += " and more" if len(layout.spans) > 5 else ""
        table.notes.append(
            f"{len(layout.spans)} quoted value(s) run over several lines (lines {shown}), each "
            'read as one value: if that is not meant, look for a stray quote (")'
        )
    return table


def _read_rows(text: str, layout: _CsvLayout, n_lines: int, decimal_comma: bool):
    """``(values, texts, line_of)`` of every row, read line by line (:func:`_csv_rows`)."""
    width = len(layout.names)
    values = np.empty((n_lines, width))
    line_of = np.empty(n_lines, dtype=np.int64)
    texts: dict[int, list[np.ndarray]] = {}  # cells of the text columns, chunk by chunk
    late: set[int] = set()  # columns found to be text after their first chunk
    r = 0
    size = max(64, _CHUNK_CELLS // max(width, 1))
    for cells, lines in _row_blocks(itertools.chain(layout.head, layout.rest), width, size):
        line_of[r : r + len(lines)] = lines
        numbers, bad = _to_floats(_decimal_points(cells) if decimal_comma else cells)
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
    return values, texts, line_of


def _row_blocks(rows: Iterator, width: int, size: int) -> Iterator[tuple[np.ndarray, list]]:
    """Blocks of ``size`` rows from :func:`_csv_rows`: their cells (missing = NaN) and lines."""
    for chunk in _chunks(rows, size):
        cells = np.full((len(chunk), width), _MISSING, dtype=object)
        for i, (line_no, row) in enumerate(chunk):
            if len(row) > width:
                raise DataError(
                    f"Could not read the CSV file: line {line_no} has {len(row)} values, more "
                    f"values than there are column names ({width}). {_CSV_ADVICE}"
                )
            cells[i, : len(row)] = [_MISSING if c in _NA_TOKENS else c for c in row]
        yield cells, [line_no for line_no, _ in chunk]


def _parsed_columns(text: str, layout: _CsvLayout, decimal_comma: bool):
    """:func:`_read_rows`'s ``(values, texts, line_of)`` from pandas' C parser (15 times
    faster on 100,000 rows), or None when the file needs the line-by-line reader: a
    whitespace separator, a row with more values than column names, a quote never closed, a
    quoted value over several lines (each has its own message or note there), or rows that
    do not map one to one to non-blank lines.

    Columns pandas reads as numbers are taken as they are (its conversion equals Python's
    ``float`` on every value tried, 400,000 of them); the others are read again as text and
    converted cell by cell as the line-by-line reader does (the same notes, the typo rule)."""
    import pandas as pd

    if layout.sep not in (",", ";", "\t", "|") or not layout.names or layout.spans:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    width = len(layout.names)
    options = dict(
        sep=layout.sep,
        header=None,
        names=range(width),
        index_col=False,
        skipinitialspace=True,
        skip_blank_lines=True,
        engine="c",
    )
    skip = 1 if layout.has_header else 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)  # read again as text below
            # more values than names: pandas drops them with a warning; the line-by-line
            # reader says which line
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.StringIO(text),
                skiprows=_header_lines(text, skip),
                na_values=sorted(_NA_TOKENS),
                keep_default_na=False,
                decimal="," if decimal_comma else ".",
                **options,
            )
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError, IndexError):
        return None
    # each row's line: the non-blank lines in order (csv.reader's line_num, one line a row)
    lines = np.array([i for i, line in enumerate(text.split("\n"), 1) if line.strip()])
    lines = lines[skip:]
    if len(lines) != len(frame):
        return None
    numeric = [j for j in range(width) if frame[j].dtype.kind in "fiu"]
    others = [j for j in range(width) if j not in set(numeric)]
    values = np.full((len(frame), width), np.nan)
    if numeric:
        values[:, numeric] = frame[numeric].to_numpy(dtype=np.float64)
    texts: dict[int, list[np.ndarray]] = {}
    if others:
        try:
            cells = pd.read_csv(
                io.StringIO(text),
                skiprows=_header_lines(text, skip),
                usecols=others,
                dtype=object,
                na_filter=False,
                **options,
            )[others].to_numpy(dtype=object, copy=True)
        except (pd.errors.ParserError, ValueError, IndexError):
            return None
        if any("\n" in c for c in cells.ravel() if isinstance(c, str)):
            return None  # a quoted value over several lines: the spans note comes from csv
        cells = _strip_cells(cells)  # the line-by-line reader strips every cell
        cells[pd.DataFrame(cells).isin(_NA_TOKENS).to_numpy()] = _MISSING
        numbers, bad = _to_floats(_decimal_points(cells) if decimal_comma else cells)
        values[:, others] = numbers
        texts = {j: [cells[:, i]] for i, j in enumerate(others) if bad[:, i].any()}
    return values, texts, lines


def _header_lines(text: str, skip: int) -> list[int]:
    """The 0-based lines before the first data row: blank lines and ``skip`` header rows."""
    out, seen = [], 0
    if not skip:
        return out
    for i, line in enumerate(text.split("\n", 1000)):
        out.append(i)
        if line.strip():
            seen += 1
            if seen == skip:
                return out
    return out


_strip_cells = np.frompyfunc(lambda c: c.strip() if isinstance(c, str) else c, 1, 1)


def _csv_columns(text: str, layout: _CsvLayout, columns: list[int], n_rows: int) -> dict:
    """All cells of some columns, read again (columns that turned out text late)."""
    found = {j: np.full(n_rows, _MISSING, dtype=object) for j in columns}
    rows = _csv_rows(text, layout.sep)
    if layout.has_header:
        next(rows)
    for i, (_, row) in enumerate(rows):
        for j in columns:
            if j < len(row) and row[j] not in _NA_TOKENS:
                found[j][i] = row[j]
    return {j: [cells] for j, cells in found.items()}


def _csv_rows(text: str, sep: str, spans=None) -> Iterator[tuple[int, list[str]]]:
    """Rows of CSV text as (line number, stripped cells); blank lines are skipped. The first
    and last lines of rows with a quoted value over several lines go to ``spans``."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if sep == r"\s+":
        for line_no, line in enumerate(io.StringIO(text), 1):
            if cells := line.split():
                yield line_no, cells
        return
    if not text.endswith("\n"):
        text += "\n"  # so that a quote never closed keeps the last line end in its cell
    n_lines = text.count("\n")
    reader = csv.reader(io.StringIO(text), delimiter=sep, skipinitialspace=True)
    end = 0
    for row in reader:
        start, end = end + 1, reader.line_num
        if end > start and end >= n_lines and any(c.endswith("\n") for c in row):
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
        if cell in _NA_TOKENS:
            continue
        if _is_number(cell, decimal_comma):
            if not evidence:
                below = [r[j] for r in rows if j < len(r) and r[j] not in _NA_TOKENS]
                evidence = all(_is_number(v, decimal_comma) for v in below)
        elif not any(j < len(r) and r[j] == cell for r in rows):
            return False
    return evidence


def _header_names(cells: list[str]) -> tuple[list[str], dict[str, list[int]]]:
    """Column names from a header row: empty ones are ``Unnamed: i`` and repeats
    get ``.1``, ``.2`` suffixes (as pandas names them)."""
    names = [cell or f"Unnamed: {i}" for i, cell in enumerate(cells)]
    if len(set(names)) == len(names):
        return names, {}
    positions: dict[str, list[int]] = {}
    for i, base in enumerate(names):
        positions.setdefault(base, []).append(i)
    used: set[str] = set()
    last: dict[str, int] = {}  # the suffix a base name had last: the next is larger
    for i, base in enumerate(names):
        name, k = base, last.get(base, 0)
        if k:
            name = f"{base}.{k}"
        while name in used:
            k += 1
            name = f"{base}.{k}"
        used.add(name)
        last[base] = k
        names[i] = name
    repeated = {n: p for n, p in positions.items() if len(p) > 1 and not n.startswith("Unnamed:")}
    return names, repeated


def _text_column(table: _Table, j: int, cells: np.ndarray, decimal_comma: bool) -> None:
    """Turn column ``j`` of a CSV table into a text column (codes in ``values``).

    A column of numbers with a few non-numbers is recorded in ``table.typos``.
    """
    codes, texts = _factorize(cells)  # the distinct texts; -1: a missing cell
    n_present = int((codes >= 0).sum())
    column = cells.reshape(-1, 1)
    not_numbers = np.flatnonzero(
        _to_floats(_decimal_points(column) if decimal_comma else column)[1]
    )
    if n_present - len(not_numbers) >= 2 and len(not_numbers) <= max(1, n_present // _TYPO_SHARE):
        table.typos[j] = [(i, cells[i]) for i in not_numbers.tolist()]
    lowered = {t.lower() for t in texts}
    if lowered <= _TRUE_TOKENS | _FALSE_TOKENS and len(lowered) <= 2:
        texts = [t.lower() for t in texts]
    categories = sorted(set(texts))
    code = {c: float(k) for k, c in enumerate(categories)}
    table.values[:, j] = np.array([code[t] for t in texts] + [np.nan])[codes]
    table.kinds[j] = "text"
    table.categories[j] = categories


def _drop_trailing_empty(table: _Table, has_header: bool) -> None:
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
        table.notes.append(f"dropped empty column(s) {_preview(dropped)} (delimiters at line ends)")


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


def _csv_targets(table: _Table, target, n_labels) -> tuple[str, list[int]]:
    names = table.names
    if target is not None:
        return _targets_from_spec(target, names, table.repeated)
    if n_labels is not None:
        count = _check_label_count(n_labels, len(names), "n_labels")
        return MULTILABEL, list(range(len(names) - count, len(names)))
    raise DataError(
        "Choose the target of this CSV file: one class column (target='name' or a position, "
        "multi-class) or a list of 0/1 label columns (multi-label). "
        f"Available columns: {_preview(names)}."
    )


# --------------------------------------------------------------------------- column choice


def _targets_from_spec(spec, names: list[str], repeated=None) -> tuple[str, list[int]]:
    if isinstance(spec, (list, tuple)):
        if not spec:
            raise DataError("The list of label columns is empty: name at least one column.")
        indices = [_resolve_column(s, names, "Label", repeated) for s in spec]
        if len(set(indices)) != len(indices):
            raise DataError("The same label column is listed twice in target.")
        return MULTILABEL, indices
    return MULTICLASS, [_resolve_column(spec, names, "Target", repeated)]


def _resolve_column(spec, names: list[str], what: str, repeated=None) -> int:
    n = len(names)
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        if not -n <= int(spec) < n:
            raise DataError(
                f"{what} column position {spec} is out of range: the file has {n} columns "
                f"(positions 0 to {n - 1}, or -1 for the last)."
            )
        return int(spec) % n
    if isinstance(spec, str):
        if repeated and spec in repeated:
            positions = repeated[spec]
            raise DataError(
                f"{what} column {spec!r} is ambiguous: {len(positions)} columns of the header "
                f"are named so (positions {', '.join(map(str, positions))}, now named "
                f"{_preview([names[i] for i in positions], 5)}). Rename the columns in the "
                "file, or choose the column by position or by its new name."
            )
        if spec in names:
            return names.index(spec)
        folded = [i for i, c in enumerate(names) if c.casefold() == spec.strip().casefold()]
        if len(folded) == 1:
            return folded[0]
        raise DataError(f"{what} column {spec!r} not found. Available columns: {_preview(names)}.")
    raise DataError(f"{what} column must be a name or a position, not {spec!r}.")


def _drop_indices(drop, names: list[str], repeated=None) -> set[int]:
    if drop is None:
        return set()
    specs = drop if isinstance(drop, (list, tuple, set)) else [drop]
    return {_resolve_column(s, names, "Dropped", repeated) for s in specs}


# --------------------------------------------------------------------------- building


def _build_dataset(table: _Table, labels: tuple[str, list[int]], *, drop, missing, name) -> Dataset:
    task, target_idx = labels
    notes = list(table.warnings) + list(table.notes)
    if table.n_rows < 2:
        raise DataError(
            f"The file has {table.n_rows} data row(s); at least 2 are needed to learn anything."
        )
    dropped = _drop_indices(drop, table.names, table.repeated)
    clash = dropped.intersection(target_idx)
    if clash:
        raise DataError(f"Column {table.names[min(clash)]!r} is both a target and dropped.")
    if dropped:
        notes.append(f"dropped column(s) {_preview([table.names[i] for i in sorted(dropped)])}")
    if task == MULTICLASS:
        y, class_names = _class_target(table.column(target_idx[0]), notes)
        # every class gets a column of evidence and of the label matrix (n × m, dense)
        target = table.names[target_idx[0]]
        _check_dense(
            len(y),
            len(class_names),
            f"one column per class of {target!r}",
            f"{len(class_names):,} classes in {len(y):,} rows: is {target!r} really a class, "
            "and not an identifier or a number? Choose another target column.",
        )
    else:
        _check_dense(table.n_rows, len(target_idx), "the label matrix")
        y, class_names = _label_target([table.column(i) for i in target_idx], notes)
    taken = dropped.union(target_idx)
    features = [j for j in range(len(table.names)) if j not in taken]
    X, feature_names, plan = _encode_features(table, features, missing, notes)
    encoding = Encoding(
        features=_feature_columns(table, plan),
        target=tuple(table.names[i] for i in target_idx),
        task=task,
        class_values=tuple(np.unique(y).tolist()) if task == MULTICLASS else tuple(class_names),
        dropped=tuple(table.names[i] for i in sorted(dropped)),
        means=np.asarray(X.mean(axis=0)).reshape(-1),
        sparse=sp.issparse(X),
    )
    return Dataset(X, y, task, feature_names, class_names, name, notes, encoding)


def _feature_columns(table: _Table, plan: _Encoded) -> tuple[FeatureColumn, ...]:
    """The plan as FeatureColumns, in the order of X's columns."""
    cols = [
        (at, FeatureColumn(table.names[j], "numeric"))
        for j, at in zip(plan.numeric, plan.numeric_at, strict=True)
    ]
    for j, at, positive in zip(plan.nominal, plan.nominal_at, plan.positive, strict=True):
        categories = tuple(str(c) for c in table.categories[j] or [])
        if positive >= 0:
            cols.append(
                (at, FeatureColumn(table.names[j], "binary", categories, categories[positive]))
            )
        else:
            cols.append((at, FeatureColumn(table.names[j], "onehot", categories)))
    return tuple(c for _, c in sorted(cols, key=lambda item: item[0]))


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
        integral = values == np.round(values)
        huge = integral & (np.abs(values) >= 2**53)
        if huge.any():
            raise DataError(
                f"The class column {column.name!r} holds whole numbers too long to be read "
                f"exactly (2⁵³ ≈ 9.0e15 or more; the first at data row "
                f"{int(np.flatnonzero(huge)[0]) + 1}): read as numbers, different codes this "
                "long can become equal, which would merge their classes. Write the classes as "
                "text (e.g. a letter before each code) or as shorter codes."
            )
        y = values.astype(np.int64) if integral.all() else values
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
        present = set(class_names)
        unused = [c for c in column.categories or [] if c not in present]
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


@dataclass
class _Encoded:
    """Where the encoded feature columns go in ``X``."""

    numeric: list[int] = field(default_factory=list)  # table columns, kept as they are
    numeric_at: list[int] = field(default_factory=list)  # their column in X
    nominal: list[int] = field(default_factory=list)  # table columns, encoded as 0/1
    nominal_at: list[int] = field(default_factory=list)  # their first column in X
    width: list[int] = field(default_factory=list)  # 1 (two values) or number of values
    positive: list[int] = field(default_factory=list)  # code that is 1; -1 = one-hot
    names: list[str] = field(default_factory=list)


def _encode_features(
    table: _Table, features: list[int], missing: str, notes: list[str]
) -> tuple[np.ndarray | sp.csr_matrix, list[str], _Encoded]:
    """Encode the feature columns into a float matrix, appending notes about it.

    Numeric columns are copied as one block; only nominal and text columns are
    handled one by one.  A sparse table gives a CSR matrix.
    """
    plan = _plan_encoding(table, features, notes)
    if not plan.names:
        raise DataError(
            "No feature columns are left after taking out the target/labels and dropped or "
            "ID-like columns. Check the target choice and the columns to drop."
        )
    _check_infinite(table, plan.numeric)
    encoded = np.sort(np.array(plan.numeric + plan.nominal, dtype=np.intp))
    per_column = _missing_counts(table, encoded)
    holed = per_column > 0
    counts = {
        table.names[j]: c
        for j, c in zip(encoded[holed].tolist(), per_column[holed].tolist(), strict=True)
    }
    if counts:
        _check_missing(counts, missing, table.n_rows)
    if table.sparse:
        X = _assemble_sparse(table, plan)
    else:
        X = _assemble_dense(table, plan)
    if counts:
        _impute(X)
        listing = _missing_listing(counts)
        notes.append(
            f"imputed {sum(counts.values())} missing value(s) with the column mean in "
            f"{len(counts)} column(s): {listing}"
        )
    finite = np.isfinite(X.data if sp.issparse(X) else X)
    if not finite.all():
        at = X.indices[~finite] if sp.issparse(X) else np.flatnonzero(~finite.all(axis=0))
        bad = sorted({plan.names[j] for j in np.unique(at)})
        raise DataError(f"Column(s) {_preview(bad, 5)} still have invalid values after loading.")
    return X, plan.names, plan


def _plan_encoding(table: _Table, features: list[int], notes: list[str]) -> _Encoded:
    plan = _Encoded()
    log: dict[str, list[str]] = {
        "id": [],
        "string": [],
        "binary": [],
        "onehot": [],
        "counter": [],
    }
    n_rows = table.n_rows
    for j in features:
        name, kind = table.names[j], table.kinds[j]
        if kind == "numeric":
            plan.numeric.append(j)
            plan.numeric_at.append(len(plan.names))
            plan.names.append(name)
            if _is_counter(table, j):
                log["counter"].append(name)
            continue
        if kind == "string":
            log["string"].append(name)
            continue
        if j in table.typos:
            raise _typo_error(table, j)
        categories = table.categories[j] or []
        k = len(categories)
        if _is_id_like(table, j):
            log["id"].append(name)
            continue
        if kind == "text" and k > 2 and not (k <= _MAX_ONEHOT and k < n_rows / 2):
            raise DataError(
                f"Column {name!r} holds text with {k} different values in {n_rows} rows, "
                "too many to encode as categories (free text or an ID?). Drop it "
                f"(drop=[{name!r}]) or convert it to numbers."
            )
        plan.nominal.append(j)
        plan.nominal_at.append(len(plan.names))
        if k <= 2:
            positive = _positive_category(categories)
            log["binary"].append(f"{name!r}={positive}")
            plan.width.append(1)
            plan.positive.append(categories.index(positive))
            plan.names.append(name)
        else:
            log["onehot"].append(f"{name!r} into {k} columns")
            plan.width.append(k)
            plan.positive.append(-1)
            plan.names.extend(f"{name}={c}" for c in categories)
    _note_encoding(log, notes)
    names, repeated = _header_names(plan.names)
    if repeated:  # e.g. the 0/1 column 'colour=red' of one-hot 'colour' beside a 'colour=red'
        renamed = [names[i] for positions in repeated.values() for i in positions[1:]]
        notes.append(
            f"feature name(s) {_preview(list(repeated), 5)} were given to more than one "
            f"column: renamed the later ones {_preview(renamed, 5)}"
        )
        plan.names = names
    return plan


def _is_counter(table: _Table, j: int) -> bool:
    """A number column that counts the rows: a different whole number on every row, in
    increasing (or decreasing) order, such as a row number or a running ID. Kept (a sorted
    measurement looks the same), but noted: in a file sorted by class it gives the class away."""
    if table.n_rows < 10 or table.sparse:
        return False
    values = table.numbers(j)
    if not np.isfinite(values).all() or not np.all(values == np.round(values)):
        return False
    steps = np.diff(values)
    return bool(np.all(steps > 0) or np.all(steps < 0))


def _is_id_like(table: _Table, j: int) -> bool:
    """One distinct value per row (a nominal/text column needs as many categories)."""
    n_rows = table.n_rows
    if n_rows < 3 or len(table.categories[j] or []) < n_rows:
        return False
    codes = table.numbers(j)
    return not np.isnan(codes).any() and len(np.unique(codes)) == n_rows


def _typo_error(table: _Table, j: int) -> DataError:
    cells = table.typos[j]
    shown = ", ".join(f"{_shorten(value, 30)!r} in {table.where(i)}" for i, value in cells[:5])
    more = f" and {len(cells) - 5} more" if len(cells) > 5 else ""
    return DataError(
        f"Column {table.names[j]!r} holds numbers except for {shown}{more}. Fix these cells, "
        "leave them empty or write ? if they are missing values, or drop the column "
        f"(drop=[{table.names[j]!r}]) if it is not numeric."
    )


def _columns_of_entries(matrix: sp.csc_matrix) -> np.ndarray:
    """The column of each stored value of a CSC matrix."""
    return np.repeat(np.arange(matrix.shape[1]), np.diff(matrix.indptr))


def _missing_counts(table: _Table, columns: np.ndarray) -> np.ndarray:
    if table.sparse:
        values = table.values
        holes = np.isnan(values.data)
        per_column = np.bincount(_columns_of_entries(values)[holes], minlength=values.shape[1])
        return per_column[columns]
    return np.count_nonzero(np.isnan(table.values), axis=0)[columns]


def _check_infinite(table: _Table, columns: list[int]) -> None:
    if not columns:
        return
    if table.sparse:
        values = table.values
        infinite = np.isinf(values.data)
        per_column = np.bincount(_columns_of_entries(values)[infinite], minlength=values.shape[1])
    else:
        per_column = np.count_nonzero(np.isinf(table.values), axis=0)
    for j in columns:
        if per_column[j]:
            raise DataError(
                f"Column {table.names[j]!r} contains infinite values (inf) in "
                f"{int(per_column[j])} row(s). Replace them by numbers or drop the column."
            )


def _missing_listing(counts: dict[str, int]) -> str:
    listing = ", ".join(f"{name!r} ({count})" for name, count in list(counts.items())[:10])
    if len(counts) > 10:
        listing += f" and {len(counts) - 10} more columns"
    return listing


def _check_missing(counts: dict[str, int], missing: str, n_rows: int) -> None:
    if missing == "error":
        raise DataError(
            f"Missing values ('?' or empty) in {len(counts)} column(s): "
            f"{_missing_listing(counts)}. Fill them in, drop those columns, or let the loader "
            "impute them (missing='impute')."
        )
    empty = [name for name, count in counts.items() if count == n_rows]
    if empty:
        raise DataError(
            f"Column(s) {_preview(empty, 5)} have no values at all (every value is missing). "
            "Drop them."
        )


def _assemble_dense(table: _Table, plan: _Encoded) -> np.ndarray:
    n_rows, values = table.n_rows, table.values
    _check_dense(n_rows, len(plan.names), "the feature matrix")
    X = np.zeros((n_rows, len(plan.names)))
    if plan.numeric:
        step = max(1, _CHUNK_CELLS // len(plan.numeric))
        for r in range(0, n_rows, step):
            X[r : r + step, plan.numeric_at] = values[r : r + step, plan.numeric]
    rows = np.arange(n_rows)
    for j, at, width, positive in zip(
        plan.nominal, plan.nominal_at, plan.width, plan.positive, strict=True
    ):
        codes = values[:, j]
        holes = np.isnan(codes)
        if positive >= 0:
            X[:, at] = codes == positive
        else:
            X[rows[~holes], at + codes[~holes].astype(np.intp)] = 1.0
        X[holes, at : at + width] = np.nan
    return X


def _assemble_sparse(table: _Table, plan: _Encoded) -> sp.csr_matrix:
    """The encoded features of a sparse table as CSR, never densified.

    A nominal value omitted from a sparse row is the first category (code 0):
    it is 1 in the encoding only for one-hot columns and for two-valued columns
    whose first category is the positive one.
    """
    n_rows, n_columns = table.n_rows, len(plan.names)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []  # rows, cols, values
    if plan.numeric:
        block = table.values[:, plan.numeric].tocoo()
        at = np.asarray(plan.numeric_at)
        parts.append((block.row, at[block.col], block.data))
    if plan.nominal:
        block = table.values[:, plan.nominal].tocsc()
        block.sort_indices()
        rows, cols, codes = block.indices, _columns_of_entries(block), block.data
        at = np.asarray(plan.nominal_at)
        width = np.asarray(plan.width)
        positive = np.asarray(plan.positive)
        holes = np.isnan(codes)
        onehot = ~holes & (positive[cols] < 0)
        hit = ~holes & (positive[cols] >= 0) & (codes == positive[cols])
        first_is_one = np.flatnonzero(positive <= 0)  # columns where code 0 gives a 1
        stored = np.diff(block.indptr)
        n_implicit = int(np.sum(n_rows - stored[first_is_one]))
        n_entries = sum(len(p[0]) for p in parts) + int(onehot.sum() + hit.sum())
        n_entries += int(width[cols[holes]].sum()) + n_implicit
        _check_sparse(n_entries, n_rows, n_columns, "the feature matrix")
        parts.append((rows[onehot], at[cols[onehot]] + codes[onehot].astype(np.intp), None))
        parts.append((rows[hit], at[cols[hit]], None))
        w = width[cols[holes]]
        offsets = np.arange(w.sum()) - np.repeat(np.cumsum(w) - w, w)
        parts.append(
            (
                np.repeat(rows[holes], w),
                np.repeat(at[cols[holes]], w) + offsets,
                np.full(int(w.sum()), np.nan),
            )
        )
        everyone = np.ones(n_rows, dtype=bool)
        for t in first_is_one.tolist():
            implicit = everyone.copy()
            implicit[block.indices[block.indptr[t] : block.indptr[t + 1]]] = False
            found = np.flatnonzero(implicit)
            parts.append((found, np.full(found.size, at[t]), None))
    rows = np.concatenate([p[0] for p in parts])
    cols = np.concatenate([p[1] for p in parts])
    data = np.concatenate([np.ones(len(p[0])) if p[2] is None else p[2] for p in parts])
    X = sp.csr_matrix((data, (rows, cols)), shape=(n_rows, n_columns), dtype=np.float64)
    X.sum_duplicates()
    return X


def _impute(X: np.ndarray | sp.csr_matrix) -> None:
    """Replace NaN by the mean of its column over the other rows (implicit zeros count)."""
    if sp.issparse(X):
        holes = np.isnan(X.data)
        cols = X.indices
        n_missing = np.bincount(cols[holes], minlength=X.shape[1])
        sums = np.bincount(cols[~holes], weights=X.data[~holes], minlength=X.shape[1])
        means = sums / np.maximum(X.shape[0] - n_missing, 1)
        X.data[holes] = means[cols[holes]]
        X.eliminate_zeros()
        return
    holed = np.flatnonzero(np.isnan(X).any(axis=0))
    block = X[:, holed]
    holes = np.isnan(block)
    block[holes] = np.take(np.nanmean(block, axis=0), np.nonzero(holes)[1])
    X[:, holed] = block


def _positive_category(categories: list[str]) -> str:
    """The category encoded as 1 in a one-column (binary) encoding."""
    if len(categories) == 1:
        return categories[0]
    low = [c.strip().lower() for c in categories]
    if low[0] in _TRUE_TOKENS and low[1] in _FALSE_TOKENS:
        return categories[0]
    return categories[1]


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
    if log["counter"]:
        notes.append(
            f"column(s) {_preview(log['counter'], 5)} hold a different whole number on every "
            "row, in order (row numbers or IDs?): kept as features, but if the rows are sorted "
            "by class such a column gives the class away. Leave it out if it is an ID"
        )


def _describe(exc: BaseException) -> str:
    """``str(exc)`` for a message: short, without server paths (liac-arff exceptions
    can fail to produce one)."""
    try:
        text = str(exc).strip()
    except (TypeError, ValueError):
        text = ""
    text = _shorten(_SERVER_PATH.sub("<path>", text), 300)
    return text or type(exc).__name__


def _preview(items: list[str], limit: int = 20) -> str:
    shown = ", ".join(repr(str(i)) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
