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
   as Mulan ships it: the file's own stem (``emotions.arff`` → ``emotions.xml``),
   else its data set's, the stem's last ``-``/``_``/``.`` part dropped step by
   step (``delicious-train.arff`` → ``delicious.xml``, ``Corel5k-train-sparse.arff``
   → ``Corel5k.xml``; the nearest wins).  The labels may sit anywhere in the
   header and ``class_names`` follows the XML order.  A label matches its
   attribute as written, else with backslash escapes decoded as the header's
   names are (delicious.xml's ``TAG_m\\'usica`` is the attribute ``TAG_m'usica``);
3. ``n_labels=N``: the LAST ``N`` attributes;
4. MEKA's ``-C N`` in the relation name: the FIRST ``N`` attributes
   (``-C -N``: the last ``N``);
5. otherwise, if the last attribute is nominal, it is the class of a
   multi-class problem (Weka convention).  When two or more trailing
   attributes hold only 0/1 values, the first note starts with "Warning:" and
   says the file looks multi-label and how to load it so; a file that ends
   with :data:`MANY_TRAILING_BINARY` (50) or more attributes
   declared ``{0,1}`` (Mulan's text and image sets) is refused with a
   :class:`~sblr.exceptions.DataError` that asks for the XML file or the label
   count (``target=-1`` still reads it as one class).

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

import io
import math
import numbers
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from sblr.exceptions import DataError
from sblr.io._arff import (
    MANY_TRAILING_BINARY,
    arff_targets,
    read_arff,
    read_mulan_xml,
)
from sblr.io._csv import (
    csv_names,
    csv_targets,
    read_csv,
)
from sblr.io._dataset import (
    ARFF_EXTENSIONS,
    CSV_EXTENSIONS,
    KNOWN_EXTENSIONS,
    MULTILABEL,
    NOT_TEXT,
    Dataset,
    Encoding,
    FeatureColumn,
    Table,
    preview,
    read_bytes,
    shorten,
)
from sblr.io._encoding import (
    build_dataset,
    class_target,
    label_columns,
)
from sblr.io._limits import (
    MAX_DENSE_MB,
    check_dense,
    check_sparse,
    reading,
    size_limit,
    valid_max_rows,
)

__all__ = [
    "MANY_TRAILING_BINARY",
    "MAX_DENSE_MB",
    "Dataset",
    "Encoding",
    "FeatureColumn",
    "list_columns",
    "load_dataset",
    "read_mulan_xml",
]


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
    max_rows: int | None = None,
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
        Mulan XML label file for an ARFF source.  By default the nearest of
        ``NAME.xml`` and its data set's XML beside an ARFF path is used
        (``delicious-train.arff`` → ``delicious-train.xml``, ``delicious.xml``).
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
    max_rows : int, optional
        The most rows the file may hold (default: no limit): a file with more is refused,
        counted before its values are parsed (a server sets one: parsing a file only to refuse
        its rows took the dashboard 13 s and 3.5 GB).

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
    max_rows = valid_max_rows(max_rows)
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
        data, path = read_bytes(source, name, what="data file")
        file_name = name or (path.name if path else _source_name(source))
        with reading("data file"), size_limit(max_dense_mb, max_rows):
            return _load_like(
                data, path, file_name, encoding, like, fmt=format, name=name, header=header
            )
    data, path = read_bytes(source, name, what="data file")
    xml_data = None if xml is None else read_bytes(xml, None, what="XML label file")[0]
    file_name = name or (path.name if path else _source_name(source))
    with reading("data file"), size_limit(max_dense_mb, max_rows):
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
    data, path = read_bytes(source, name, what="data file")
    with reading("data file"):
        text, _ = _decode(data)
        ext = _extension(name, path)
        if _infer_format(format, ext, text) == "arff":
            return read_arff(text, header_only=True)[0].names
        return csv_names(text, header=header, ext=ext)


def _load(
    data: bytes, path, file_name, *, target, n_labels, xml, fmt, name, header, drop, missing
) -> Dataset:
    text, notes = _decode(data)
    ext = _extension(name, path)
    fmt = _infer_format(fmt, ext, text)
    if fmt == "arff":
        table, relation = read_arff(text)
        labels = arff_targets(table, relation, target, n_labels, xml, path)
    else:
        table = read_csv(text, header=header, ext=ext)
        labels = csv_targets(table, target, n_labels)
    table.notes[:0] = notes
    ds = build_dataset(table, labels, drop=drop, missing=missing, name=_dataset_name(file_name))
    _check_characters(ds.class_names, "class named")
    _check_characters(ds.feature_names, "column named")
    _check_characters(ds.notes, "value (in the note)")
    return ds


def _load_like(data: bytes, path, file_name, encoding: Encoding, like, *, fmt, name, header):
    """A file read as the training data ``encoding`` describes (``load_dataset(like=)``)."""
    text, notes = _decode(data)
    ext = _extension(name, path)
    fmt = _infer_format(fmt, ext, text)
    table = read_arff(text)[0] if fmt == "arff" else read_csv(text, header=header, ext=ext)
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
            f"{preview(lacking, 8)}. Columns are matched by name; the file has "
            f"{preview(table.names, 8)}."
        )
    used = {f.name for f in encoding.features} | set(encoding.target) | set(encoding.dropped)
    extra = [c for c in table.names if c not in used]
    if extra:
        notes.append(f"left out column(s) {preview(extra, 8)}: not features of {training}")
    n = table.n_rows
    widths = [len(f.categories) if f.kind == "onehot" else 1 for f in encoding.features]
    width = int(sum(widths))
    if not encoding.sparse:
        check_dense(n, width, "the feature matrix")
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
                        f"Column {spec.name!r} has value(s) {preview(bad, 5)} that {training} "
                        f"never had: it knew only {preview(list(spec.categories), 5)}."
                    )
                codes = np.array(
                    [-2 if v is None else (0 if v == spec.positive else -1) for v in values]
                )
            else:
                index = {c: i for i, c in enumerate(spec.categories)}
                bad = sorted({v for v in values if v is not None and v not in index})
                if bad:
                    unseen_notes.append(f"{spec.name!r}: {preview(bad, 5)}")
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
        check_sparse(vals.size, n, width, "the feature matrix")
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


def _numeric_like(table: Table, j: int, name: str) -> np.ndarray:
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
                f"of this file has {shorten(str(v), 40)!r}."
            ) from None
    if not np.isfinite(out[~np.isnan(out)]).all():
        raise DataError(f"Column {name!r} has an infinite value.")
    return out


def _texts_like(table: Table, j: int) -> list:
    """Column ``j`` as text values (None = missing), numbers written as the training file
    would have read them ("1" for 1.0)."""
    column = table.column(j)
    if column.kind == "numeric":
        return [None if math.isnan(v) else (f"{v:g}") for v in column.values]
    return [None if v is None else str(v) for v in column.values]


def _labels_like(table: Table, where: dict, encoding: Encoding, training: str, notes: list):
    """``y`` of the file coded as the training data's, or None when it has no label column."""
    present = [t for t in encoding.target if t in where]
    if not present:
        notes.append("no label column: the rows are to be predicted")
        return None
    if len(present) < len(encoding.target):
        absent = [t for t in encoding.target if t not in where]
        raise DataError(
            f"The file has some label columns of {training} but not {preview(absent, 5)}: "
            "give every label column, or none (rows to predict)."
        )
    if encoding.task == MULTILABEL:
        return label_columns(table, [where[t] for t in encoding.target])
    y, _ = class_target(table.column(where[encoding.target[0]]), [])
    known = {str(v): v for v in encoding.class_values}
    new = sorted({str(v) for v in y.tolist()} - set(known))
    if new:
        raise DataError(
            f"The class column {encoding.target[0]!r} has class(es) {preview(new, 5)} that "
            f"{training} never had (it knew {preview(list(known), 8)})."
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
            shown = shorten(text.encode("utf-8", "backslashreplace").decode("ascii"))
            raise DataError(
                f"The file has a {what} '{shown}': an escape \\uD800-\\uDFFF there is half "
                "of a UTF-16 surrogate pair, not a character. Write the character itself "
                "(save the file as UTF-8) or remove the escape."
            )


def _source_name(source) -> str | None:
    raw = getattr(source, "name", None)
    return Path(raw).name if isinstance(raw, str) and raw else None


def _extension(name: str | None, path: Path | None) -> str:
    for candidate in (name, path.name if path else None):
        if candidate:
            suffix = Path(candidate).suffix.lower()
            if suffix in KNOWN_EXTENSIONS:
                return suffix
    return ""


def _dataset_name(file_name: str | None) -> str:
    if not file_name:
        return "dataset"
    stem = Path(file_name)
    return stem.stem if stem.suffix.lower() in KNOWN_EXTENSIONS else file_name


def _decode(data: bytes) -> tuple[str, list[str]]:
    """Decode file bytes as text, rejecting binary files."""
    notes: list[str] = []
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DataError(NOT_TEXT) from exc
    elif b"\x00" in data:
        raise DataError(NOT_TEXT)
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
    if not text or text.isspace():  # text.strip() copied all of it (10 ms a 9 MB file)
        raise DataError("The file is empty. Choose a file with data in it.")
    if _looks_binary(text):
        raise DataError(NOT_TEXT)
    return text, notes


# Control characters: below 32 but for \t\n\v\f\r, and 127-159.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def _looks_binary(text: str) -> bool:
    sample = text[:65536]
    return len(_CONTROL.findall(sample)) > max(2, len(sample) // 100)


def _infer_format(fmt: str | None, ext: str, text: str) -> str:
    if fmt is not None:
        chosen = str(fmt).lower().lstrip(".")
        if chosen not in ("arff", "csv"):
            raise DataError(f"Unknown format {fmt!r}: use 'arff', 'csv' or None to infer it.")
        return chosen
    if ext in ARFF_EXTENSIONS:
        return "arff"
    if ext in CSV_EXTENSIONS:
        return "csv"
    return "arff" if _looks_like_arff(text) else "csv"


def _looks_like_arff(text: str) -> bool:
    for line in io.StringIO(text):
        stripped = line.strip()
        if stripped and not stripped.startswith("%"):
            return stripped.lower().startswith("@relation")
    return False
