"""Reading a second file exactly as the training file was read (load_dataset(like=), issue
#26): columns matched by name, the same encodings, classes in the same order. Oracles: the
training file's own rows (a shuffled copy must give them back), the training means worked
out here, and errors that name the column, value or class."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sblr.exceptions import DataError
from sblr.io import Encoding, load_dataset

SAMPLES = Path(__file__).resolve().parents[1] / "sample_data"


def _csv(frame: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode()


def _fruit(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "weight": rng.normal(100, 20, n).round(2),
            "colour": rng.choice(["red", "green", "yellow"], n),
            "organic": rng.choice(["yes", "no"], n),
            "sweet": rng.integers(0, 10, n),
            "kind": rng.choice(["apple", "pear", "plum"], n),
        }
    )


def test_a_shuffled_copy_of_the_training_file_gives_its_rows_back():
    frame = _fruit()
    train = load_dataset(_csv(frame), target="kind", name="fruit.csv")
    shuffled = frame[["kind", "sweet", "colour", "weight", "organic"]].iloc[::-1]
    test = load_dataset(_csv(shuffled), name="test.csv", like=train)
    np.testing.assert_array_equal(test.X, train.X[::-1])
    np.testing.assert_array_equal(test.y, train.y[::-1])
    assert test.feature_names == train.feature_names and test.class_names == train.class_names
    assert test.has_labels and isinstance(test.encoding, Encoding)


def test_numeric_class_values_keep_their_type_and_order():
    frame = _fruit().assign(kind=lambda f: f["kind"].map({"apple": 2, "pear": 9, "plum": 10}))
    train = load_dataset(_csv(frame), target="kind", name="fruit.csv")
    test = load_dataset(_csv(frame.iloc[:7]), name="t.csv", like=train)
    assert train.class_names == ["2", "9", "10"]
    np.testing.assert_array_equal(test.y, train.y[:7])
    np.testing.assert_array_equal(test.label_matrix(), train.label_matrix()[:7])


def test_without_label_columns_the_rows_are_to_be_predicted():
    frame = _fruit()
    train = load_dataset(_csv(frame), target="kind", name="fruit.csv")
    rows = load_dataset(_csv(frame.drop(columns="kind").iloc[:5]), name="new.csv", like=train)
    assert not rows.has_labels and rows.y is None
    np.testing.assert_array_equal(rows.X, train.X[:5])
    with pytest.raises(DataError, match="no labels"):
        rows.label_matrix()
    assert rows.summary()["class_counts"] == {}


def test_missing_and_extra_columns_unseen_values_and_classes():
    frame = _fruit()
    train = load_dataset(_csv(frame), target="kind", name="fruit.csv")
    with pytest.raises(DataError, match="lacks 1 feature column.*'sweet'"):
        load_dataset(_csv(frame.drop(columns="sweet")), name="t.csv", like=train)
    extra = load_dataset(_csv(frame.assign(note="x")), name="t.csv", like=train)
    assert any("left out column(s) 'note'" in n for n in extra.notes)
    np.testing.assert_array_equal(extra.X, train.X)
    # a one-hot value never seen: all its columns 0, with a note
    odd = frame.copy()
    odd.loc[0, "colour"] = "purple"
    test = load_dataset(_csv(odd), name="t.csv", like=train)
    cols = [i for i, n in enumerate(train.feature_names) if n.startswith("colour=")]
    assert len(cols) == 3 and not test.X[0, cols].any()
    np.testing.assert_array_equal(test.X[1:], train.X[1:])
    assert any("'purple'" in n for n in test.notes)
    # a two-valued column: an unseen value is an error naming it
    odd = frame.copy()
    odd.loc[3, "organic"] = "maybe"
    with pytest.raises(DataError, match="'organic'.*'maybe'"):
        load_dataset(_csv(odd), name="t.csv", like=train)
    # a class the training data never had
    odd = frame.copy()
    odd.loc[2, "kind"] = "cherry"
    with pytest.raises(DataError, match="'cherry'"):
        load_dataset(_csv(odd), name="t.csv", like=train)
    # text where the training data had numbers
    odd = frame.astype({"weight": object})
    odd.loc[4, "weight"] = "heavy"
    with pytest.raises(DataError, match="'weight'.*data row 5.*'heavy'"):
        load_dataset(_csv(odd), name="t.csv", like=train)
    with pytest.raises(DataError, match="leave out target"):
        load_dataset(_csv(frame), name="t.csv", like=train, target="kind")


def test_missing_values_take_the_training_means_not_the_files_own():
    frame = _fruit()
    train = load_dataset(_csv(frame), target="kind", name="fruit.csv")
    test_frame = frame.iloc[:4].astype({"weight": object, "colour": object})
    test_frame.iloc[0, 0] = ""  # weight missing
    test_frame.iloc[1, 1] = ""  # colour missing
    test = load_dataset(_csv(test_frame), name="t.csv", like=train)
    means = train.X.mean(axis=0)
    assert test.X[0, 0] == pytest.approx(means[0])  # not the mean of the test rows
    cols = [i for i, n in enumerate(train.feature_names) if n.startswith("colour=")]
    np.testing.assert_allclose(test.X[1, cols], means[cols])


def test_multilabel_arff_with_its_xml_and_partial_labels():
    train = load_dataset(SAMPLES / "planted.arff", xml=SAMPLES / "planted.xml")
    again = load_dataset(SAMPLES / "planted.arff", like=train)
    np.testing.assert_array_equal(again.X, train.X)
    np.testing.assert_array_equal(again.y, train.y)
    frame = pd.read_csv(SAMPLES / "planted.csv")
    labels = train.class_names
    test = load_dataset(_csv(frame.iloc[:10]), name="t.csv", like=train)
    np.testing.assert_allclose(test.X, train.X[:10])
    np.testing.assert_array_equal(test.y, train.y[:10])
    with pytest.raises(DataError, match="some label columns"):
        load_dataset(_csv(frame.drop(columns=labels[:2]).iloc[:10]), name="t.csv", like=train)
    unlabeled = load_dataset(_csv(frame.drop(columns=labels)), name="u.csv", like=train)
    assert not unlabeled.has_labels


def test_a_sparse_arff_is_read_like_into_a_sparse_matrix():
    import scipy.sparse as sp

    header = (
        b"@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute c numeric\n"
        b"@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n"
    )
    rows = [b"{0 1, 3 1}", b"{1 2, 4 1}", b"{2 3, 3 1, 4 1}", b"{0 4}"]
    train = load_dataset(header + b"\n".join(rows) + b"\n", name="r.arff", n_labels=2)
    assert sp.issparse(train.X)
    test = load_dataset(header + b"\n".join(rows[::-1]) + b"\n", name="t.arff", like=train)
    assert sp.issparse(test.X)
    np.testing.assert_array_equal(test.X.toarray(), train.X.toarray()[::-1])
    np.testing.assert_array_equal(test.y, train.y[::-1])


def test_class_codes_follow_the_class_order_everywhere():
    """#29: for classes 2, 9 and 10 the protocol coded rows by the classes' text ("10" < "2"
    < "9") while the dataset's class order is 2, 9, 10. Oracle: the label matrix's columns."""
    from sblr.protocol import task_y

    frame = pd.DataFrame({"a": np.arange(10.0), "c": [9, 10, 9, 10, 2, 2, 9, 10, 2, 9]})
    ds = load_dataset(_csv(frame), target="c", name="codes.csv")
    assert ds.class_names == ["2", "9", "10"]
    np.testing.assert_array_equal(ds.class_codes(), ds.label_matrix().argmax(axis=1))
    np.testing.assert_array_equal(task_y(ds), [1, 2, 1, 2, 0, 0, 1, 2, 0, 1])
    # "1" and "1.0" are one class; so are text classes with and without spaces around them
    frame = pd.DataFrame({"a": np.arange(6.0), "c": ["1", "1.0", "2", "2.0", "1", "2"]})
    ds = load_dataset(_csv(frame), target="c", name="same.csv")
    assert ds.n_classes == 2
    np.testing.assert_array_equal(task_y(ds), [0, 0, 1, 1, 0, 1])
    text = b"a,c\n1,x\n2, x\n3,y\n4,y \n"
    ds = load_dataset(text, target="c", name="spaces.csv")
    assert ds.class_names == ["x", "y"] and list(task_y(ds)) == [0, 0, 1, 1]
