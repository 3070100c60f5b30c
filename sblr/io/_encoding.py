"""From parsed columns to ``X`` and ``y``: which columns are targets, imputation, one-hot
and 0/1 encoding of text and nominal columns, and the typo rule.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from sblr.exceptions import DataError
from sblr.io._dataset import (
    FALSE_TOKENS,
    MAX_ONEHOT,
    MULTICLASS,
    MULTILABEL,
    TRUE_TOKENS,
    Column,
    Dataset,
    Encoding,
    FeatureColumn,
    Table,
    header_names,
    preview,
    shorten,
)
from sblr.io._limits import (
    check_dense,
    check_sparse,
)


def targets_from_spec(spec, names: list[str], repeated=None) -> tuple[str, list[int]]:
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
                f"{preview([names[i] for i in positions], 5)}). Rename the columns in the "
                "file, or choose the column by position or by its new name."
            )
        if spec in names:
            return names.index(spec)
        folded = [i for i, c in enumerate(names) if c.casefold() == spec.strip().casefold()]
        if len(folded) == 1:
            return folded[0]
        raise DataError(f"{what} column {spec!r} not found. Available columns: {preview(names)}.")
    raise DataError(f"{what} column must be a name or a position, not {spec!r}.")


def _drop_indices(drop, names: list[str], repeated=None) -> set[int]:
    if drop is None:
        return set()
    specs = drop if isinstance(drop, (list, tuple, set)) else [drop]
    return {_resolve_column(s, names, "Dropped", repeated) for s in specs}


def build_dataset(table: Table, labels: tuple[str, list[int]], *, drop, missing, name) -> Dataset:
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
        notes.append(f"dropped column(s) {preview([table.names[i] for i in sorted(dropped)])}")
    if task == MULTICLASS:
        y, class_names = class_target(table.column(target_idx[0]), notes)
        # every class gets a column of evidence and of the label matrix (n × m, dense)
        target = table.names[target_idx[0]]
        check_dense(
            len(y),
            len(class_names),
            f"one column per class of {target!r}",
            f"{len(class_names):,} classes in {len(y):,} rows: is {target!r} really a class, "
            "and not an identifier or a number? Choose another target column.",
        )
    else:
        check_dense(table.n_rows, len(target_idx), "the label matrix")
        y, class_names = _label_target(table, target_idx, notes)
    taken = dropped.union(target_idx)
    features = [j for j in range(len(table.names)) if j not in taken]
    X, feature_names, plan = _encode_features(table, features, missing, notes)
    encoding = Encoding(
        features=_feature_columns(table, plan),
        target=tuple(table.names[i] for i in target_idx),
        task=task,
        class_values=(
            tuple(sorted_distinct(y).tolist()) if task == MULTICLASS else tuple(class_names)
        ),
        dropped=tuple(table.names[i] for i in sorted(dropped)),
        means=np.asarray(X.mean(axis=0)).reshape(-1),
        sparse=sp.issparse(X),
    )
    return Dataset(X, y, task, feature_names, class_names, name, notes, encoding)


def _feature_columns(table: Table, plan: _Encoded) -> tuple[FeatureColumn, ...]:
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


def class_target(column: Column, notes: list[str]) -> tuple[np.ndarray, list[str]]:
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
    else:  # each distinct value written once (pandas' hash table, in C)
        import pandas as pd

        codes, distinct = pd.factorize(column.values)
        y = np.asarray(distinct, dtype=str)[codes]
    classes = sorted_distinct(y)
    class_names = [str(c) for c in classes]
    if len(classes) < 2:
        notes.append(f"the class column {column.name!r} has only one class ({class_names[0]})")
    elif len(classes) > max(MAX_ONEHOT, len(y) // 2):
        notes.append(
            f"the class column {column.name!r} has {len(classes)} different values; "
            "is it really a class and not a numeric feature?"
        )
    if column.kind == "nominal":
        present = set(class_names)
        unused = [c for c in column.categories or [] if c not in present]
        if unused:
            notes.append(f"declared class(es) {preview(unused, 5)} have no rows")
    return y, class_names


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``, the distinct values hashed before they are sorted (100,000
    class texts: 5 ms, not 20)."""
    import pandas as pd

    return np.unique(np.asarray(pd.unique(values.ravel()), dtype=values.dtype))


def _label_target(table: Table, indices: list[int], notes: list[str]):
    Y = label_columns(table, indices)
    names = [table.names[j] for j in indices]
    empty = [n for n, count in zip(names, Y.sum(axis=0), strict=True) if count == 0]
    if empty:
        notes.append(f"label(s) {preview(empty, 5)} have no positive rows")
    return Y, names


#: Label columns are decoded this many at a time: a block's category codes are dense (rows ×
#: block floats, 26 MB for delicious's 12,920 rows), whatever the number of labels.
_LABEL_BLOCK = 256


def label_columns(table: Table, indices: list[int]) -> np.ndarray:
    """The 0/1 label matrix (int8, rows × labels) of the columns ``indices`` of ``table``: 983
    labels of 12,920 rows in 13 MB, where int64 took 100.

    A nominal or text column is decoded from its category codes, each declared value read
    once: value by value, delicious-train's 983 labels × 12,920 rows took most of its load
    (10.3 CPU-s, now 1.2: ``python -m benchmarks.io_read --mulan``).  A numeric column, and
    one with a missing value or a value that is not 0/1, goes through
    :func:`binary_labels`, which words the error.
    """
    Y = np.empty((table.n_rows, len(indices)), dtype=np.int8)
    for start in range(0, len(indices), _LABEL_BLOCK):
        block = indices[start : start + _LABEL_BLOCK]
        coded = [k for k, j in enumerate(block) if table.categories[j] is not None]
        codes = table.values[:, [block[k] for k in coded]] if coded else None
        if sp.issparse(codes):
            codes = codes.toarray()
        decoded = set()
        for c, k in enumerate(coded):
            column = codes[:, c]
            if np.isnan(column).any():
                continue
            column = column.astype(np.intp)
            tokens = [str(v).strip().lower() for v in table.categories[block[k]]]
            truth = np.array([t in TRUE_TOKENS for t in tokens], dtype=np.int8)
            known = np.array([t in TRUE_TOKENS | FALSE_TOKENS for t in tokens])
            if not known[column].all():
                continue
            Y[:, start + k] = truth[column]
            decoded.add(k)
        for k, j in enumerate(block):
            if k not in decoded:
                Y[:, start + k] = binary_labels(table.column(j))
    return Y


def binary_labels(column: Column) -> np.ndarray:
    missing = column.missing_mask()
    if missing.any():
        raise DataError(
            f"The label column {column.name!r} has {int(missing.sum())} missing value(s); "
            "labels must be 0 or 1 in every row."
        )
    if column.kind == "numeric":
        values = column.values
        bad = sorted(set(values[~np.isin(values, (0.0, 1.0))].tolist()), key=str)
        if not bad:
            return values.astype(np.int64)
        bad_text = [f"{v:g}" for v in bad]
    else:
        tokens = [str(v).strip().lower() for v in column.values]
        bad_text = sorted({t for t in tokens if t not in TRUE_TOKENS | FALSE_TOKENS})
        if not bad_text:
            return np.array([t in TRUE_TOKENS for t in tokens], dtype=np.int64)
    raise DataError(
        f"The label column {column.name!r} must hold only 0/1 (or true/false, yes/no) values, "
        f"but it also has {preview(bad_text, 5)}. A multi-label target is one 0/1 column per "
        "label; for a single class column use a multi-class target instead."
    )


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
    table: Table, features: list[int], missing: str, notes: list[str]
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
        raise DataError(f"Column(s) {preview(bad, 5)} still have invalid values after loading.")
    return X, plan.names, plan


def _plan_encoding(table: Table, features: list[int], notes: list[str]) -> _Encoded:
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
        if kind == "text" and k > 2 and not (k <= MAX_ONEHOT and k < n_rows / 2):
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
    names, repeated = header_names(plan.names)
    if repeated:  # e.g. the 0/1 column 'colour=red' of one-hot 'colour' beside a 'colour=red'
        renamed = [names[i] for positions in repeated.values() for i in positions[1:]]
        notes.append(
            f"feature name(s) {preview(list(repeated), 5)} were given to more than one "
            f"column: renamed the later ones {preview(renamed, 5)}"
        )
        plan.names = names
    return plan


def _is_counter(table: Table, j: int) -> bool:
    """A number column that counts the rows: a different whole number on every row, in
    increasing (or decreasing) order, such as a row number or a running ID. Kept (a sorted
    measurement looks the same), but noted: in a file sorted by class it gives the class away."""
    if table.n_rows < 10 or table.sparse:
        return False
    values = table.numbers(j)
    if not _monotonic(np.diff(values[:16])):  # most columns are not in order: seen at once
        return False
    steps = np.diff(values)
    if not _monotonic(steps):
        return False
    return bool(np.isfinite(values).all() and np.all(values == np.round(values)))


def _monotonic(steps: np.ndarray) -> bool:
    return bool(np.all(steps > 0) or np.all(steps < 0))


def _is_id_like(table: Table, j: int) -> bool:
    """One distinct value per row (a nominal/text column needs as many categories)."""
    n_rows = table.n_rows
    if n_rows < 3 or len(table.categories[j] or []) < n_rows:
        return False
    codes = table.numbers(j)
    return not np.isnan(codes).any() and len(np.unique(codes)) == n_rows


def _typo_error(table: Table, j: int) -> DataError:
    cells = table.typos[j]
    shown = ", ".join(f"{shorten(value, 30)!r} in {table.where(i)}" for i, value in cells[:5])
    more = f" and {len(cells) - 5} more" if len(cells) > 5 else ""
    return DataError(
        f"Column {table.names[j]!r} holds numbers except for {shown}{more}. Fix these cells, "
        "leave them empty or write ? if they are missing values, or drop the column "
        f"(drop=[{table.names[j]!r}]) if it is not numeric."
    )


def _columns_of_entries(matrix: sp.csc_matrix) -> np.ndarray:
    """The column of each stored value of a CSC matrix."""
    return np.repeat(np.arange(matrix.shape[1]), np.diff(matrix.indptr))


def _missing_counts(table: Table, columns: np.ndarray) -> np.ndarray:
    if table.sparse:
        values = table.values
        holes = np.isnan(values.data)
        per_column = np.bincount(_columns_of_entries(values)[holes], minlength=values.shape[1])
        return per_column[columns]
    return np.count_nonzero(np.isnan(table.values), axis=0)[columns]


def _check_infinite(table: Table, columns: list[int]) -> None:
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
            f"Column(s) {preview(empty, 5)} have no values at all (every value is missing). "
            "Drop them."
        )


def _assemble_dense(table: Table, plan: _Encoded) -> np.ndarray:
    n_rows, values = table.n_rows, table.values
    check_dense(n_rows, len(plan.names), "the feature matrix")
    X = np.zeros((n_rows, len(plan.names)))
    # numeric columns side by side in the table and in X are copied as one block each
    j, at = np.asarray(plan.numeric, dtype=np.intp), np.asarray(plan.numeric_at, dtype=np.intp)
    starts = np.flatnonzero(np.r_[True, (np.diff(j) != 1) | (np.diff(at) != 1)][: j.size])
    counts = np.diff(np.r_[starts, j.size])
    for first, count in zip(starts.tolist(), counts.tolist(), strict=True):
        X[:, at[first] : at[first] + count] = values[:, j[first] : j[first] + count]
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


def _assemble_sparse(table: Table, plan: _Encoded) -> sp.csr_matrix:
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
        check_sparse(n_entries, n_rows, n_columns, "the feature matrix")
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
    if low[0] in TRUE_TOKENS and low[1] in FALSE_TOKENS:
        return categories[0]
    return categories[1]


def _note_encoding(log: dict[str, list[str]], notes: list[str]) -> None:
    if log["string"]:
        notes.append(f"dropped string attribute(s) {preview(log['string'])}")
    if log["id"]:
        notes.append(
            f"dropped ID-like column(s) with one distinct value per row: {preview(log['id'])}"
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
            f"column(s) {preview(log['counter'], 5)} hold a different whole number on every "
            "row, in order (row numbers or IDs?): kept as features, but if the rows are sorted "
            "by class such a column gives the class away. Leave it out if it is an ID"
        )
