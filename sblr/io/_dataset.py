"""What a load produces and the cells it is built from: :class:`Dataset`, its
:class:`Encoding`, the parsed :class:`Table`, and the helpers every reader shares.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import numbers
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from sblr.exceptions import DataError

MULTICLASS = "multiclass"


MULTILABEL = "multilabel"


ARFF_EXTENSIONS = {".arff"}


CSV_EXTENSIONS = {".csv", ".tsv"}


_SNIFF_EXTENSIONS = {".data", ".txt"}  # CSV unless the content is ARFF


KNOWN_EXTENSIONS = ARFF_EXTENSIONS | CSV_EXTENSIONS | _SNIFF_EXTENSIONS


TRUE_TOKENS = {"1", "1.0", "true", "yes", "y", "t"}


FALSE_TOKENS = {"0", "0.0", "false", "no", "n", "f"}


MAX_ONEHOT = 20


NOT_TEXT = (
    "The file does not look like a text ARFF or CSV file (it contains binary data). "
    "Upload the .arff or .csv file itself, not an image, a spreadsheet or a zip archive."
)


MEKA_C = re.compile(r"-C\s+(-?\d+)")


# Missing-value markers of a CSV cell (pandas' defaults and UCI's "?").
NA_TOKENS = frozenset(
    {"", "?", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND"}
    | {"1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
)


# A missing cell while parsing: a float, so that a block of cells converts to
# floats in one call, and never equal to a text or nominal value.
MISSING = math.nan


SAMPLE_ROWS = 100  # rows read by list_columns to settle the header and the columns


CHUNK_CELLS = 1 << 20  # cells converted at a time


TYPO_SHARE = 10  # a numeric column may have at most 1 cell in 10 that is not a number


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
        0/1 int8 array of shape (n_samples, n_labels).
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

    @property
    def is_multilabel(self) -> bool:
        """Whether a row may carry several labels (else exactly one class): what a page asks
        before it words a decision, not ``task == "multilabel"`` in its own words."""
        return self.task == MULTILABEL

    @property
    def class_word(self) -> str:
        """What one of ``class_names`` is called: "label" (multi-label) or "class"."""
        return "label" if self.is_multilabel else "class"

    def label_matrix(self) -> np.ndarray:
        """Return the 0/1 int indicator matrix of shape (n_samples, n_classes).

        Multi-class data get one column per class in ``class_names`` order.
        """
        if self.y is None:
            raise DataError(f"{self.name!r} has no labels: its rows are to be predicted.")
        return self.indicator_of(self.y)

    def indicator_of(self, values) -> np.ndarray:
        """Targets in ``y``'s form (``y`` itself, or a model's predictions) as the 0/1 int
        matrix of :meth:`label_matrix`: one column per class in ``class_names`` order, for
        either task (multi-class: one 1 a row). A page compares truth and predictions column
        by column without asking which task it has.

        Examples
        --------
        >>> ds = Dataset(X=np.zeros((3, 1)), y=np.array([9, 10, 2]), task="multiclass",
        ...              feature_names=["f"], class_names=["2", "9", "10"])
        >>> ds.indicator_of([10, 2])
        array([[0, 0, 1],
               [1, 0, 0]])
        """
        if self.task == MULTILABEL:
            return np.array(values, dtype=int)  # a copy
        codes = self.codes_of(values)
        matrix = np.zeros((len(codes), len(self.class_names)), dtype=int)
        matrix[np.arange(len(codes)), codes] = 1  # no n × m comparison of strings
        return matrix

    def codes_of(self, values) -> np.ndarray:
        """Multi-class: the position in ``class_names`` of each class value (``y``'s own, or a
        model's predictions): the one class coding of sblr, that of :meth:`label_matrix`'s
        columns and of the estimators' ``classes_``.  ``ValueError`` for a value that is not
        a class of the data.

        Examples
        --------
        >>> ds = Dataset(X=np.zeros((3, 1)), y=np.array([9, 10, 2]), task="multiclass",
        ...              feature_names=["f"], class_names=["2", "9", "10"])
        >>> ds.codes_of([10, 2, 2])
        array([2, 0, 0])
        """
        import pandas as pd

        values = np.asarray(values)
        # each distinct value's text looked up once (pandas' hash table, in C): the pages
        # code every row's prediction on each run
        which, distinct = pd.factorize(values.ravel(), use_na_sentinel=False)
        text = np.asarray(distinct).astype(str)
        found = pd.Index(self.class_names).get_indexer(text)
        if (found < 0).any():
            raise ValueError(f"class {text[found < 0][0]!r} is not in class_names")
        return found.astype(np.intp)[which].reshape(values.shape)

    def class_values(self) -> np.ndarray:
        """Multi-class: the class values of ``y`` in ``class_names`` order, which is the order
        of an estimator's ``classes_`` (``np.unique``: numbers by value, text by code point).

        Examples
        --------
        >>> ds = Dataset(X=np.zeros((3, 1)), y=np.array([9, 10, 2]), task="multiclass",
        ...              feature_names=["f"], class_names=["2", "9", "10"])
        >>> ds.class_values()
        array([ 2,  9, 10])
        """
        if self.task == MULTILABEL:
            raise DataError("Multi-label data have labels 0 … m-1, not class values.")
        return np.unique(self.y)

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
        return self.codes_of(self.y)

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest of everything a model or a view computes from: ``X`` (its values, and for
        CSR its structure), ``y``, the task, the names and the encoding; not the notes.
        Two data sets with the same fingerprint give the same fits, so a cache may key on it
        (the dashboard's do). Computed once per data set (BLAKE2b; 0.3 s for 480 MB here).
        """
        return self._digest(self.name)

    @functools.cached_property
    def content_fingerprint(self) -> str:
        """:attr:`fingerprint` without the data set's own name: the same file under another
        name has the same one (the protocol's cache of fold results on disk keys on it).

        >>> from dataclasses import replace
        >>> ds = Dataset(X=np.zeros((2, 1)), y=np.array([0, 1]), task="multiclass",
        ...              feature_names=["f"], class_names=["0", "1"], name="a")
        >>> renamed = replace(ds, name="b")
        >>> renamed.content_fingerprint == ds.content_fingerprint
        True
        >>> renamed.fingerprint == ds.fingerprint
        False
        """
        return self._digest(None)

    def _digest(self, name) -> str:
        h = hashlib.blake2b(digest_size=16)

        def part(data: bytes) -> None:  # length-prefixed: no two layouts share a digest
            h.update(len(data).to_bytes(8, "big"))
            h.update(data)

        about = [self.task, name, list(self.feature_names), list(self.class_names)]
        about.append(None if self.encoding is None else self.encoding.to_dict())
        part(json.dumps(about, default=str).encode("utf-8", "surrogatepass"))
        X = self.X
        arrays = [X.data, X.indices, X.indptr] if sp.issparse(X) else [np.asarray(X)]
        part(repr((sp.issparse(X), X.shape)).encode())
        if self.y is not None:
            arrays.append(np.asarray(self.y))
        for a in arrays:
            part(repr((a.dtype.str, a.shape)).encode())
            if a.dtype.kind == "O":  # class values of mixed or text types
                part(json.dumps(a.tolist(), default=repr).encode("utf-8", "surrogatepass"))
            else:
                part(memoryview(np.ascontiguousarray(a)).cast("B"))
        return h.hexdigest()

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


@dataclass
class Column:
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
class Table:
    """A parsed file: one column per attribute, before encoding.

    ``values`` (n_rows × n_columns, float, NaN = missing) holds the numbers of
    numeric columns and the category codes (positions in ``categories``) of
    nominal and text ones: a dense ndarray, or a CSC matrix for a sparse ARFF
    file, whose implicit zeros are 0 or the first declared category.  ARFF
    string attributes keep their values in ``strings``.  ``lines`` holds the line of the
    file of each data row, or a function that finds them: a CSV file read by pandas looks
    its lines up only when a message names one (:meth:`line`).
    """

    names: list[str]
    kinds: list[str]
    categories: list[list[str] | None]
    values: Any
    lines: np.ndarray | Callable[[], np.ndarray]
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

    def column(self, j: int) -> Column:
        name, kind = self.names[j], self.kinds[j]
        if kind == "string":
            return Column(name, kind, self.strings[j])
        values = self.numbers(j)
        if kind == "numeric":
            return Column(name, kind, values)
        cats = self.categories[j] or []
        holes = np.isnan(values)
        codes = np.where(holes, len(cats), values).astype(np.intp)  # missing: the last entry
        texts = np.empty(len(cats) + 1, dtype=object)
        texts[: len(cats)] = cats
        return Column(name, kind, texts[codes], cats)

    def line(self, row: int) -> int:
        """The line of the file holding data row ``row`` (0-based)."""
        if callable(self.lines):
            self.lines = self.lines()
        return int(self.lines[row])

    def where(self, row: int) -> str:
        return f"data row {row + 1} (line {self.line(row)})"


def read_bytes(source, name, *, what: str) -> tuple[bytes, Path | None]:
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


def to_floats(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
        left, left_bad = to_floats(cells[:, :half])
        right, right_bad = to_floats(cells[:, half:])
        return np.hstack([left, right]), np.hstack([left_bad, right_bad])
    # One column with non-numbers: each distinct cell converted once, mapped back to the
    # cells in C (a text column repeats its few categories; 850,000 text cells took 5.8 s one
    # by one).  Missing cells (NaN) come out of factorize as -1: NaN, and a number.
    codes, distinct = factorize(cells[:, 0])
    numbers = np.full(len(distinct) + 1, np.nan)
    bad = np.zeros(len(distinct) + 1, dtype=bool)
    for u, cell in enumerate(distinct):
        try:
            numbers[u] = float(cell)
        except (ValueError, TypeError):
            bad[u] = True
    return numbers[codes].reshape(cells.shape), bad[codes].reshape(cells.shape)


def factorize(column: np.ndarray) -> tuple[np.ndarray, list]:
    """``(codes, distinct)``: each cell's index into the list of distinct cells, -1 for a
    missing one (NaN or None); pandas' hash table, in C."""
    import pandas as pd  # only for files with text cells

    codes, distinct = pd.factorize(column, use_na_sentinel=True)
    return codes, distinct.tolist()


def chunks(rows: Iterator, size: int) -> Iterator[list]:
    while chunk := list(itertools.islice(rows, size)):
        yield chunk


def shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_label_count(count, n_columns: int, what: str) -> int:
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


def header_names(cells: list[str]) -> tuple[list[str], dict[str, list[int]]]:
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


def preview(items: list[str], limit: int = 20) -> str:
    shown = ", ".join(repr(str(i)) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


# The public classes are sblr.io's (their pickled and skops names, and the documentation).
for _public in (FeatureColumn, Encoding, Dataset):
    _public.__module__ = "sblr.io"
del _public
