"""Tests for :mod:`sblr.io` (load_dataset, Dataset, read_mulan_xml)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sblr.exceptions import DataError
from sblr.io import Dataset, load_dataset, read_mulan_xml

DATA = Path(__file__).resolve().parent / "data"


def load_text(text: str, name: str, **kwargs) -> Dataset:
    return load_dataset(text.encode("utf-8"), name=name, **kwargs)


# --------------------------------------------------------------------------- ARFF


def test_dense_arff_with_companion_xml():
    ds = load_dataset(DATA / "dense.arff")
    np.testing.assert_array_equal(ds.X, [[1.5, 2.0], [0.0, -1.0], [3.0, 4.25]])
    np.testing.assert_array_equal(ds.y, [[1, 0], [0, 1], [1, 1]])
    assert ds.X.dtype == np.float64 and ds.y.dtype.kind == "i"
    assert ds.task == "multilabel"
    assert ds.feature_names == ["f1", "f2"]
    assert ds.class_names == ["lab1", "lab2"]
    assert ds.name == "dense"
    assert any("dense.xml" in note for note in ds.notes)


def test_sparse_arff_fills_zeros():
    ds = load_dataset(DATA / "sparse.arff", n_labels=2)
    assert sp.isspmatrix_csr(ds.X) and ds.X.dtype == np.float64  # sparse file -> CSR
    np.testing.assert_array_equal(
        ds.X.toarray(), [[1.5, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 7.0]]
    )
    np.testing.assert_array_equal(ds.y, [[1, 0], [0, 1], [0, 0], [1, 1]])
    assert ds.feature_names == ["a", "b", "c"]
    assert ds.class_names == ["l1", "l2"]


def test_nominal_features_id_and_string_dropped_last_attribute_is_class():
    ds = load_dataset(DATA / "nominal.arff")
    assert ds.task == "multiclass"
    assert ds.feature_names == [
        "num",
        "bin",
        "colour=red",
        "colour=green",
        "colour=blue",
        "flag",
    ]
    # bin {yes,no}: yes -> 1 (boolean pair); flag {a,b}: declared order, b -> 1
    np.testing.assert_array_equal(
        ds.X,
        [
            [1, 1, 1, 0, 0, 0],
            [2, 0, 0, 1, 0, 1],
            [3, 0, 0, 0, 1, 0],
            [4, 1, 1, 0, 0, 1],
            [5, 1, 0, 1, 0, 0],
        ],
    )
    np.testing.assert_array_equal(ds.y, ["pos", "neg", "pos", "neg", "pos"])
    assert ds.class_names == ["neg", "pos"]
    notes = " | ".join(ds.notes)
    assert "ID-like" in notes and "'id'" in notes
    assert "string attribute" in notes and "'comment'" in notes
    assert "one-hot encoded column 'colour' into 3 columns" in notes
    assert "Weka convention" in notes
    assert "'other'" in notes  # declared class without rows is a note, not an error


def test_escaped_quoted_names_and_labels_in_middle_follow_xml_order():
    ds = load_dataset(DATA / "quoted.arff")  # quoted.xml: nested labels, &apos; entity
    assert ds.class_names == ["Hermit Thrush", "Swainson's Thrush"]
    assert ds.feature_names == ["feat one", 'x"y', "f3"]
    np.testing.assert_array_equal(ds.X, [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    np.testing.assert_array_equal(ds.y, [[1, 0], [1, 1], [0, 1]])


def test_xml_passed_explicitly_as_bytes_with_arff_bytes():
    xml = b'<labels xmlns="http://mulan.sourceforge.net/labels"><label name="lab2"/></labels>'
    ds = load_dataset(io.BytesIO((DATA / "dense.arff").read_bytes()), xml=xml, name="up.arff")
    assert ds.class_names == ["lab2"]
    assert ds.feature_names == ["f1", "f2", "lab1"]
    assert ds.name == "up"


def test_missing_values_imputed_with_mean():
    ds = load_dataset(DATA / "missing.arff", n_labels=1)
    assert ds.feature_names == ["a", "b=x", "b=y", "b=z", "c"]
    expected = np.array(
        [
            [1, 1, 0, 0, 1],
            [4, 0, 1, 0, 0],
            [4, 2 / 3, 1 / 3, 0, 2 / 3],
            [7, 1, 0, 0, 1],
        ]
    )
    np.testing.assert_allclose(ds.X, expected)
    note = next(n for n in ds.notes if n.startswith("imputed"))
    assert "3 missing value(s)" in note and "'a' (1)" in note and "'b' (1)" in note


def test_missing_values_error_names_columns():
    with pytest.raises(DataError, match=r"Missing values.*'a' \(1\), 'b' \(1\), 'c' \(1\)"):
        load_dataset(DATA / "missing.arff", n_labels=1, missing="error")


def test_n_labels_last_attributes():
    ds = load_dataset((DATA / "dense.arff").read_bytes(), name="d.arff", n_labels=1)
    assert ds.class_names == ["lab2"]
    assert ds.feature_names == ["f1", "f2", "lab1"]


def test_meka_c_first_attributes():
    ds = load_dataset(DATA / "meka.arff")
    assert ds.class_names == ["y1", "y2"]
    assert ds.feature_names == ["f1", "f2"]
    np.testing.assert_array_equal(ds.y, [[1, 0], [0, 1], [1, 1]])
    np.testing.assert_array_equal(ds.X, [[0.5, 10], [1.5, 20], [2.5, 30]])


def test_meka_c_negative_takes_last_attributes():
    text = (
        "@relation 'T: -C -1'\n@attribute f numeric\n@attribute g {a,b}\n"
        "@attribute lab {0,1}\n@data\n1,a,1\n2,b,0\n3,a,1\n"
    )
    ds = load_text(text, "t.arff")
    assert ds.class_names == ["lab"]
    assert ds.feature_names == ["f", "g"]
    np.testing.assert_array_equal(ds.y, [[1], [0], [1]])
    np.testing.assert_array_equal(ds.X, [[1, 0], [2, 1], [3, 0]])


def test_arff_target_overrides_label_detection():
    ds = load_dataset(DATA / "dense.arff", target="lab2")
    assert ds.task == "multiclass"
    np.testing.assert_array_equal(ds.y, ["0", "1", "1"])
    assert ds.feature_names == ["f1", "f2", "lab1"]


def test_arff_label_without_positive_rows_is_a_note():
    text = "@relation r\n@attribute f numeric\n@attribute l {0,1}\n@data\n1,0\n2,0\n"
    ds = load_text(text, "r.arff", n_labels=1)
    np.testing.assert_array_equal(ds.y, [[0], [0]])
    assert any("no positive rows" in n for n in ds.notes)


def test_arff_sniffed_without_extension():
    text = "% comment\n\n@RELATION r\n@attribute f numeric\n@attribute c {u,v}\n@data\n1,u\n2,v\n"
    ds = load_text(text, "upload")
    assert ds.task == "multiclass" and ds.name == "upload"
    np.testing.assert_array_equal(ds.y, ["u", "v"])


# --------------------------------------------------------------------------- CSV


def test_csv_multiclass_by_name_with_id_drop_and_one_hot():
    ds = load_dataset(DATA / "animals.csv", target="class")
    assert ds.task == "multiclass"
    assert ds.feature_names == [
        "legs",
        "habitat=air",
        "habitat=land",
        "habitat=sea",
        "size=large",
        "size=medium",
        "size=small",
    ]
    np.testing.assert_array_equal(ds.X[0], [4, 0, 1, 0, 0, 0, 1])  # cat, land, small
    np.testing.assert_array_equal(ds.X[2], [2, 1, 0, 0, 0, 1, 0])  # eagle, air, medium
    assert ds.class_names == ["amphibian", "bird", "fish", "mammal"]
    assert ds.y[1] == "fish"
    notes = " | ".join(ds.notes)
    assert "'name'" in notes and "ID-like" in notes
    assert "one-hot encoded column 'habitat' into 3 columns" in notes


def test_csv_headerless_target_by_position():
    ds = load_dataset(DATA / "headerless.data", header=False, target=0)
    np.testing.assert_array_equal(ds.y, [1, 2, 1, 3])
    assert ds.y.dtype.kind == "i"
    assert ds.class_names == ["1", "2", "3"]
    assert ds.feature_names == ["1", "2"]
    np.testing.assert_array_equal(ds.X, [[0.5, 2], [1.5, 3], [2.5, 4], [3.5, 5]])
    np.testing.assert_array_equal(ds.label_matrix(), [[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1]])


def test_csv_negative_position_and_drop():
    ds = load_dataset(DATA / "headerless.data", header=False, target=-1, drop=[0])
    assert ds.feature_names == ["1"]
    np.testing.assert_array_equal(ds.y, [2, 3, 4, 5])


def test_csv_multilabel_semicolon_decimal_comma_and_boolean_words():
    ds = load_dataset(DATA / "labels.csv", target=["sports", "politics", "arts"])
    assert ds.task == "multilabel"
    np.testing.assert_allclose(ds.X, [[1.5, 2], [0.5, 3], [2, 4], [3, 1]])
    np.testing.assert_array_equal(ds.y, [[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0]])
    assert ds.class_names == ["sports", "politics", "arts"]


def test_csv_n_labels_last_columns():
    ds = load_dataset(DATA / "labels.csv", n_labels=3)
    assert ds.class_names == ["sports", "politics", "arts"]


def test_csv_tab_separated_and_file_like_with_name():
    raw = b"a\tb\tc\n1\t2\tx\n3\t4\ty\n5\t6\tx\n"
    ds = load_dataset(io.BytesIO(raw), target="c", name="t.tsv")
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(ds.y, ["x", "y", "x"])
    assert ds.name == "t"


def test_csv_uci_missing_question_mark_imputed():
    ds = load_text("1,2,a\n?,4,b\n3,?,a\n", "m.data", header=False, target=2)
    np.testing.assert_allclose(ds.X, [[1, 2], [2, 4], [3, 3]])


def test_summary_and_properties():
    ds = load_dataset(DATA / "sparse.arff", n_labels=2)
    assert (ds.n_samples, ds.n_features, ds.n_classes) == (4, 3, 2)
    summary = ds.summary()
    assert summary["instances"] == 4 and summary["features"] == 3 and summary["classes"] == 2
    assert summary["task"] == "multilabel"
    assert summary["label_cardinality"] == pytest.approx(1.0)  # (1 + 1 + 0 + 2) / 4
    assert summary["label_density"] == pytest.approx(0.5)
    assert summary["class_counts"] == {"l1": 2, "l2": 2}
    multiclass = load_dataset(DATA / "animals.csv", target="class").summary()
    assert multiclass["label_cardinality"] == 1.0
    assert multiclass["class_counts"] == {"amphibian": 1, "bird": 2, "fish": 2, "mammal": 3}


def test_dataset_is_frozen():
    ds = load_dataset(DATA / "dense.arff")
    with pytest.raises(AttributeError):
        ds.task = "multiclass"


def test_read_mulan_xml_nested_and_entities():
    assert read_mulan_xml(DATA / "quoted.xml") == ["Hermit Thrush", "Swainson's Thrush"]
    xml = b'<labels><label name="a&amp;b"><label name="c &lt; d"/></label></labels>'
    assert read_mulan_xml(io.BytesIO(xml)) == ["a&b", "c < d"]


# --------------------------------------------------------------------------- errors


ARFF_HEAD = "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute l {0,1}\n@data\n"


@pytest.mark.parametrize(
    ("raw", "kwargs", "match"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", {}, "does not look like a text ARFF or CSV"),
        (b"PK\x03\x04\x14\x00\x00\x00\x08\x00", {"name": "x.csv"}, "does not look like a text"),
        (bytes(range(1, 256)) * 8, {"name": "x.csv"}, "does not look like a text"),
        (b"", {"name": "x.csv"}, "empty"),
        (b" \n\n\t\n", {"name": "x.arff"}, "empty"),
        (ARFF_HEAD.encode()[:40], {"name": "x.arff"}, r"malformed.*line \d"),
        ((ARFF_HEAD + "1,2,0\n3\n").encode(), {"name": "x.arff", "n_labels": 1}, "line 7"),
        ((ARFF_HEAD + "1,2,0\n").encode(), {"name": "x.arff", "n_labels": 1}, "at least 2"),
        (
            (ARFF_HEAD + "1,2,0\n3,4,1\n").encode(),
            {"name": "x.arff", "n_labels": 5},
            "only 3 attributes",
        ),
        (
            (ARFF_HEAD + "1,2,0\n3,4,1\n").encode(),
            {"name": "x.arff", "n_labels": 3},
            "no feature columns",
        ),
        (
            (ARFF_HEAD + "1,2,0\n3,4,1\n").encode(),
            {"name": "x.arff", "n_labels": 0},
            "positive whole number",
        ),
        (
            (ARFF_HEAD + "1,2,0\n3,4,?\n").encode(),
            {"name": "x.arff", "n_labels": 1},
            "label column 'l' has 1 missing",
        ),
        (
            (ARFF_HEAD.replace("{0,1}", "{0,1,2}") + "1,2,0\n3,4,2\n").encode(),
            {"name": "x.arff", "n_labels": 1},
            r"'l' must hold only 0/1.*'2'",
        ),
        (
            (ARFF_HEAD.replace("{0,1}", "numeric") + "1,2,0\n3,4,1\n").encode(),
            {"name": "x.arff"},
            "Cannot tell which attributes.*XML label file",
        ),
        (
            (ARFF_HEAD + "1,inf,0\n3,4,1\n").encode(),
            {"name": "x.arff", "n_labels": 1},
            "'b' contains infinite",
        ),
        (
            (ARFF_HEAD + "?,1,0\n?,4,1\n").encode(),
            {"name": "x.arff", "n_labels": 1},
            "'a' have no values",
        ),
        (b"@relation r\n@attribute d date\n@data\n1\n", {"name": "x.arff"}, "malformed"),
        (b"a,b\n1,2\n3,4\n", {"name": "x.csv"}, r"Choose the target.*'a', 'b'"),
        (b"a,b\n1,2\n3,4\n", {"name": "x.csv", "target": "c"}, r"'c' not found.*'a', 'b'"),
        (b"a,b\n1,2\n3,4\n", {"name": "x.csv", "target": 5}, "out of range"),
        (b"a\n1\n2\n", {"name": "x.csv", "target": "a"}, "No feature columns"),
        (b"id,b\nx,1\ny,2\nz,1\n", {"name": "x.csv", "target": "b"}, "No feature columns"),
        (
            b"a,b\n1,x\n2,\n3,y\n",
            {"name": "x.csv", "target": "b"},
            "class column 'b' has 1 missing",
        ),
        (
            b"a,b,c\n1,0,0\n2,1,2\n3,2,0\n",
            {"name": "x.csv", "target": ["b", "c"]},
            r"label column 'b' must hold only 0/1.*'2'",
        ),
        (b"a,b\n1,inf\n2,3\n", {"name": "x.csv", "target": "a"}, "'b' contains infinite"),
        (b"a,b\n1,2,3,4\n5,6\n", {"name": "x.csv", "target": "a"}, "more values than"),
        (b"a,b\n1,2\n5,6,7\n", {"name": "x.csv", "target": "a"}, "Could not read the CSV.*line 3"),
        (b"a,b\n1,2\n3,4\n", {"name": "x.csv", "target": "a", "format": "xlsx"}, "Unknown format"),
        (
            b"a,b\n1,2\n3,4\n",
            {"name": "x.csv", "target": "a", "drop": "a"},
            "both a target and dropped",
        ),
    ],
)
def test_bad_input_raises_data_error(raw, kwargs, match):
    with pytest.raises(DataError, match=match):
        load_dataset(raw, **kwargs)


def test_missing_path():
    with pytest.raises(DataError, match="'.*nope.csv' was not found"):
        load_dataset(DATA / "nope.csv", target="a")


def test_folder_instead_of_file():
    with pytest.raises(DataError, match="is a folder"):
        load_dataset(DATA)


def test_xml_label_not_in_arff():
    xml = b'<labels><label name="lab1"/><label name="ghost"/></labels>'
    with pytest.raises(DataError, match="'ghost' from the XML label file"):
        load_dataset(DATA / "dense.arff", xml=xml)


def test_xml_count_disagrees_with_n_labels():
    with pytest.raises(DataError, match="does not match the 2 labels"):
        load_dataset(DATA / "dense.arff", n_labels=1)


@pytest.mark.parametrize(
    ("xml", "match"),
    [
        (b"<labels><label name='a'>", "not valid XML"),
        (b"<labels></labels>", "no <label"),
        (b"<labels><label/></labels>", "without a name"),
        (b"", "not valid XML"),
    ],
)
def test_bad_xml(xml, match):
    with pytest.raises(DataError, match=match):
        read_mulan_xml(xml)


def test_free_text_column_is_an_error_naming_it():
    rows = "\n".join(f"{i},word{i % 9} text,{i % 2}" for i in range(12))
    with pytest.raises(DataError, match="'t' holds text with 9 different values"):
        load_text("n,t,c\n" + rows, "x.csv", target="c")


def test_wrong_source_type_is_type_error():
    with pytest.raises(TypeError):
        load_dataset(12345)


# --------------------------------------------------------------------------- fuzz


FORMATS = st.sampled_from([None, "arff", "csv"])
FUZZ_SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
SEEDS = [
    (DATA / name).read_text()
    for name in ("dense.arff", "sparse.arff", "nominal.arff", "quoted.arff", "missing.arff")
] + [(DATA / name).read_text() for name in ("animals.csv", "labels.csv", "headerless.data")]
SPECIAL = st.sampled_from(list("{},?'\"%@\n \\-0123456789.e\t;") + ["@data", "{0 1}", "?"])


def _only_data_error(raw: bytes, **kwargs) -> str:
    """Load ``raw``: a valid Dataset ("loaded") or a DataError ("refused"), nothing else."""
    try:
        result = load_dataset(raw, **kwargs)
    except DataError:
        return "refused"
    assert isinstance(result, Dataset)
    assert result.X.shape[0] == len(result.y)
    assert np.isfinite(result.X.data if sp.issparse(result.X) else result.X).all()
    return "loaded"


OUTCOMES = {"loaded", "refused"}


@st.composite
def mutated_text(draw) -> bytes:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["truncate", "delete", "insert", "replace"]))
        if action == "truncate":
            text = text[:pos]
        elif action == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 20)) :]
        elif action == "insert":
            text = text[:pos] + draw(SPECIAL) + text[pos:]
        else:
            text = text[:pos] + draw(st.text(max_size=5)) + text[pos + 1 :]
    return text.encode("utf-8", errors="surrogatepass")


@pytest.mark.slow
@FUZZ_SETTINGS
@given(raw=st.binary(max_size=2000), fmt=FORMATS)
def test_fuzz_random_bytes(raw, fmt):
    assert _only_data_error(raw, format=fmt, target=0) in OUTCOMES
    assert _only_data_error(raw, format=fmt, name="f.arff") in OUTCOMES


@pytest.mark.slow
@FUZZ_SETTINGS
@given(raw=mutated_text(), fmt=FORMATS, n_labels=st.sampled_from([None, 1, 2]))
def test_fuzz_mutated_fixtures(raw, fmt, n_labels):
    assert _only_data_error(raw, format=fmt, n_labels=n_labels, target=None) in OUTCOMES
    assert _only_data_error(raw, format=fmt, target=-1, header=False) in OUTCOMES


@pytest.mark.slow
@FUZZ_SETTINGS
@given(
    text=st.text(alphabet=st.sampled_from(list("ab01,;?\n\t .-{}@'\"")), max_size=300), fmt=FORMATS
)
def test_fuzz_csv_like_text(text, fmt):
    assert _only_data_error(text.encode(), format=fmt, target=0, name="x.csv") in OUTCOMES
    assert _only_data_error(text.encode(), format=fmt, target=[0, 1], name="x.txt") in OUTCOMES


@pytest.mark.slow
@FUZZ_SETTINGS
@given(raw=st.binary(max_size=500))
def test_fuzz_read_mulan_xml(raw):
    try:
        names = read_mulan_xml(raw)
    except DataError:
        return
    assert names and all(isinstance(n, str) for n in names)


# --------------------------------------------------------------------------- benchmark data


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "shape", "n_labels", "cardinality"),
    [
        ("emotions", (593, 72), 6, 1.868),
        ("scene", (2407, 294), 6, 1.074),
        ("yeast", (2417, 103), 14, 4.237),
        # README lists 1186 features, which counts the `protein` ID attribute;
        # after dropping it 1185 {YES,NO} features remain, one 0/1 column each.
        ("genbase", (662, 1185), 27, 1.252),
    ],
)
def test_shared_multilabel(name, shape, n_labels, cardinality, shared_datasets):
    path = shared_datasets / "multilabel" / f"{name}.arff"
    ds = load_dataset(path)
    assert ds.task == "multilabel"
    assert ds.X.shape == shape
    assert ds.y.shape == (shape[0], n_labels)
    assert ds.class_names == read_mulan_xml(path.with_suffix(".xml"))
    assert round(ds.summary()["label_cardinality"], 3) == cardinality
    assert np.isfinite(ds.X).all()


@pytest.mark.slow
def test_shared_yeast_label_columns_follow_xml_order(shared_datasets):
    path = shared_datasets / "multilabel" / "yeast.arff"
    by_xml = load_dataset(path)
    by_header = load_dataset(path.read_bytes(), name="yeast.arff", n_labels=14)
    assert by_xml.class_names != by_header.class_names
    for j, label in enumerate(by_xml.class_names):
        k = by_header.class_names.index(label)
        np.testing.assert_array_equal(by_xml.y[:, j], by_header.y[:, k])


@pytest.mark.slow
def test_shared_genbase_drops_protein(shared_datasets):
    ds = load_dataset(shared_datasets / "multilabel" / "genbase.arff")
    assert "protein" not in ds.feature_names
    assert set(np.unique(ds.X)) == {0.0, 1.0}
    assert any("'protein'" in note for note in ds.notes)


@pytest.mark.parametrize(
    ("name", "kwargs", "shape", "n_classes"),
    [
        ("balance-scale", {"target": 0}, (625, 4), 3),
        ("tae", {"target": -1}, (151, 5), 3),
        ("wine", {"target": 0}, (178, 13), 3),
        ("new-thyroid", {"target": 0}, (215, 5), 3),
        ("glass", {"target": -1, "drop": [0]}, (214, 9), 6),
        ("zoo", {"target": -1, "drop": [0]}, (101, 16), 7),
    ],
)
def test_shared_multiclass(name, kwargs, shape, n_classes, shared_datasets):
    ds = load_dataset(shared_datasets / "multiclass" / f"{name}.data", header=False, **kwargs)
    assert ds.task == "multiclass"
    assert ds.X.shape == shape
    assert ds.n_classes == n_classes
    assert ds.label_matrix().sum() == shape[0]


def test_latin1_csv_is_decoded_with_a_note():
    raw = "city,t,c\nMünchen,1,a\nZürich,2,b\nMünchen,3,a\nZürich,4,b\nWien,5,a\n"
    rows = raw + "Wien,6,b\nMünchen,7,a\n"
    ds = load_dataset(rows.encode("latin-1"), name="x.csv", target="c")
    assert "city=München" in ds.feature_names
    # Windows-1252 reads Latin-1's letters the same
    assert any("not valid UTF-8; decoded it as Windows-1252" in n for n in ds.notes)
    # bytes Windows-1252 leaves undefined (0x81) fall back to Latin-1
    ds = load_dataset(rows.replace("Wien", "W\x81en").encode("latin-1"), name="x.csv", target="c")
    assert "city=W\x81en" in ds.feature_names
    assert any("decoded it as Latin-1" in n for n in ds.notes)


def test_windows_1252_csv_keeps_its_quotes_dashes_and_euro_signs():
    """Excel's CSV on Western Windows: curly quotes, dashes and € are bytes 0x80-0x9F, which
    Latin-1 reads as control codes (the file was then refused as binary)."""
    names = ["Köln “Nord”", "Zürich – Süd", "Preis €"]
    rows = "team,x\n" + "".join(f"{names[i % 3]},{i % 7}\n" for i in range(60))
    ds = load_dataset(rows.encode("cp1252"), name="teams.csv", target="team")
    assert ds.class_names == sorted(names)
    assert ds.notes == ["the file is not valid UTF-8; decoded it as Windows-1252"]


def test_numeric_header_row_gets_a_note():
    # A .data file (UCI style, no header) reads an all-number first row as data;
    # a .csv file keeps it as column names, with a note.
    ds = load_dataset(DATA / "headerless.data", target=0)
    assert ds.n_samples == 4 and ds.feature_names == ["1", "2"]
    assert any("read it as data" in n for n in ds.notes)
    as_csv = load_dataset((DATA / "headerless.data").read_bytes(), name="h.csv", target=0)
    assert as_csv.n_samples == 3
    assert any("header=False" in n for n in as_csv.notes)


def test_trailing_delimiters_are_ignored():
    ds = load_dataset(b"a,b,c,\n1,2,x,\n3,4,y,\n", name="t.csv", target="c")
    assert ds.feature_names == ["a", "b"]
    assert any("empty column" in n for n in ds.notes)


def test_drop_by_name_in_arff():
    ds = load_dataset(DATA / "dense.arff", drop="f1")
    assert ds.feature_names == ["f2"]
    assert any("dropped column(s) 'f1'" in n for n in ds.notes)


def test_cells_to_floats_equal_float_cell_by_cell():
    """Oracle: Python's float() on each cell (NaN and a not-a-number mark where it fails), on
    columns that convert as a block, columns with text repeated many times (converted once
    per distinct cell) and missing cells (NaN objects, each its own)."""
    from sblr.io._dataset import to_floats

    rng = np.random.default_rng(0)
    pool = ["1.5", " 2 ", "-3e2", "inf", "nan", "x", "cat", "1,5", "", "0x10", float("nan")]
    cells = np.empty((400, 3), dtype=object)
    cells[:, 0] = [f"{v:g}" for v in rng.normal(size=400)]  # numbers only
    cells[:, 1] = [pool[i] for i in rng.integers(0, len(pool), 400)]
    cells[:, 2] = [float("nan") if i % 7 == 0 else str(i) for i in range(400)]
    numbers, bad = to_floats(cells)
    for (i, j), cell in np.ndenumerate(cells):
        try:
            expected, failed = float(cell), False
        except (ValueError, TypeError):
            expected, failed = np.nan, True
        assert bad[i, j] == failed, (i, j, cell)
        np.testing.assert_equal(numbers[i, j], expected)
    assert bad[:, 1].any() and not bad[:, 0].any() and not bad[:, 2].any()


def _random_csv(rng):
    """A small CSV text with what files hold: numbers written many ways, categories, missing
    tokens, spaces, quotes, blank lines, short rows, CRLF, decimal commas with ';'."""
    sep = str(rng.choice([",", ";", "\t", "|"]))
    n_cols, n_rows = int(rng.integers(1, 6)), int(rng.integers(1, 40))

    def number():
        v = rng.normal() * 10.0 ** int(rng.integers(-3, 4))
        text = str(rng.choice([f"{v:.6g}", f"{v:.3e}", f"{int(v)}", f"+{abs(v):.2f}", repr(v)]))
        return text.replace(".", ",") if sep == ";" and rng.random() < 0.7 else text

    kinds = rng.choice(["num", "cat", "mixed", "bool"], size=n_cols)
    cells = {
        "num": number,
        "cat": lambda: str(rng.choice(["red", "green", "blue", "New York"])),
        "mixed": lambda: number() if rng.random() < 0.9 else "oops",
        "bool": lambda: str(rng.choice(["True", "False", "true", "yes"])),
    }
    rows = []
    if rng.random() < 0.7:
        rows.append(sep.join(f"c{j}" for j in range(n_cols)))
    for _ in range(n_rows):
        row = []
        for kind in kinds:
            cell = cells[kind]()
            r = rng.random()
            if r < 0.08:
                cell = str(rng.choice(["", "NA", "?", "nan", "NULL"]))
            elif r < 0.14:
                cell = f" {cell} "
            elif r < 0.18 and sep not in cell:
                cell = f'"{cell}"'
            row.append(cell)
        if rng.random() < 0.05 and len(row) > 1:
            row = row[:-1]  # a short row
        rows.append(sep.join(row))
        if rng.random() < 0.05:
            rows.append(str(rng.choice(["", "   "])))  # a blank line
    end = "\r\n" if rng.random() < 0.2 else "\n"
    return end.join(rows) + (end if rng.random() < 0.8 else ""), sep


def _same_tables(a, b, text):
    """Two Tables hold the same cells: values (NaN = missing), kinds, categories, lines,
    typos and notes."""
    np.testing.assert_array_equal(a.values, b.values, err_msg=repr(text))
    assert (a.names, a.kinds, a.categories) == (b.names, b.kinds, b.categories), repr(text)
    assert a.typos == b.typos and a.notes == b.notes, repr(text)
    assert [a.line(r) for r in range(a.n_rows)] == [b.line(r) for r in range(b.n_rows)]


@pytest.mark.slow
def test_the_fast_csv_parser_gives_what_the_line_by_line_reader_gives(monkeypatch):
    """pandas' C parser reads every file that is not wide, the line-by-line reader (oracle:
    csv.reader, cell by cell) the wide ones and finds what makes pandas refuse a file. Over
    400 generated files: a file the line reader reads, pandas reads too, to the same cells
    (numbers, text, missing values, typos, notes) and the same line of every row; a file the
    line reader refuses, pandas refuses with the same message."""
    import sblr.io as sio

    def read(text, header, wide):
        monkeypatch.setattr(sio._csv, "WIDE_COLUMNS_PER_ROW", 0 if wide else 10**9)
        return sio._csv.read_csv(text, header=header, ext=".csv")

    rng = np.random.default_rng(7)
    fast_used = 0
    for _ in range(400):
        text, sep = _random_csv(rng)
        header = bool(rng.random() < 0.5)
        try:
            slow = read(text, header, wide=True)
        except DataError as exc:
            with pytest.raises(DataError) as caught:
                read(text, header, wide=False)
            assert str(caught.value) == str(exc), repr(text)
            continue
        fast = read(text, header, wide=False)
        fast_used += 1
        _same_tables(fast, slow, text)
    assert fast_used >= 300  # the files the line reader reads (309 of these)


def test_a_column_that_turns_text_after_pandas_first_chunk_keeps_its_cells_as_written():
    """pandas reads chunk by chunk (262,144 rows of two columns): a column of numbers that
    turns text in a later chunk comes out as half floats, half texts, "1.50" as 1.5. The file
    is then read again whole, so the text column holds the cells as written (the oracle)."""
    import sblr.io as sio

    text = "x,y\n" + "1.50,0\n" * 300_000 + "007,1\nabc,1\n"
    table = sio._csv.read_csv(text, header=True, ext=".csv")
    assert table.kinds == ["text", "numeric"]
    assert table.categories[0] == ["007", "1.50", "abc"]
    assert table.typos == {0: [(300_001, "abc")]}


def _random_dense_arff(rng):
    n_num, n_nom = int(rng.integers(0, 5)), int(rng.integers(1, 4))
    n_rows = int(rng.integers(1, 30))
    head = ["@relation r"]
    head += [f"@attribute x{j} numeric" for j in range(n_num)]
    head += [f"@attribute c{j} {{a, b, YES, NO}}" for j in range(n_nom)]
    rows = []
    for _ in range(n_rows):
        numbers = (f"{rng.normal():.5g}", "?", f"{rng.integers(-9, 9)}", f"{rng.normal():.2e}")
        cells = [str(rng.choice(numbers)) for _ in range(n_num)]
        cells += [str(rng.choice(["a", "b", "YES", "NO", "?"])) for _ in range(n_nom)]
        sep = ", " if rng.random() < 0.3 else ","
        rows.append(sep.join(cells))
        if rng.random() < 0.1:
            rows.append("")
    return "\n".join(head + ["@data"] + rows) + "\n"


@pytest.mark.slow
def test_the_fast_dense_arff_reader_gives_what_the_line_by_line_reader_gives(monkeypatch):
    """Dense ARFF data through pandas' C parser (yeast 0.075 -> 0.03 s), the one value path
    of narrow plain data sections; the line-by-line reader (the oracle) reads wide ones and
    finds what makes pandas refuse a file. On 300 generated files (and 100 with some text
    put in their rows), the values (numbers, nominal codes, missing) and the line of every row equal
    the line-by-line reader's, and a file it refuses pandas refuses with the same message."""
    import sblr.io as sio

    def read(text, wide):
        monkeypatch.setattr(sio._arff, "WIDE_COLUMNS_PER_ROW", 0 if wide else 10**9)
        return sio._arff.read_arff(text)[0]

    rng = np.random.default_rng(11)
    texts = [_random_dense_arff(rng) for _ in range(300)]
    spoiled = [  # text put somewhere in the rows: most such files are refused
        t[:i] + str(rng.choice(["z", "1_000", "True", "a b", "1,", "TRUE "])) + t[i:]
        for t in texts[:100]
        for i in [
            t.index("@data") + 6 + int(rng.integers(0, max(1, len(t) - t.index("@data") - 6)))
        ]
    ]
    refused = 0
    for text in texts + spoiled:
        try:
            slow = read(text, wide=True)
        except DataError as exc:
            refused += 1
            with pytest.raises(DataError) as caught:
                read(text, wide=False)
            assert str(caught.value) == str(exc), text
            continue
        table = read(text, wide=False)
        np.testing.assert_array_equal(table.values, slow.values, err_msg=text)
        np.testing.assert_array_equal(table.lines, slow.lines, err_msg=text)
    assert refused >= 80  # (95 of these)


@pytest.mark.parametrize(
    "column, names, codes",
    [
        (["2", "9", "2", "10", "9", "10"], ["2", "9", "10"], [0, 1, 0, 2, 1, 2]),  # by value
        (["1", "1.0", " 2", "2 ", "1", "2"], ["1", "2"], [0, 0, 1, 1, 0, 1]),  # 1 = 1.0
        (["b", "a", "B", "a", " b", "B"], ["B", "a", "b"], [2, 1, 0, 1, 2, 0]),  # code point
        (["1", "x", "1.0", "x", "2", "2"], ["1", "1.0", "2", "x"], [0, 3, 1, 3, 2, 2]),  # text
    ],
)
def test_one_class_coding_for_the_data_the_models_and_the_pages(column, names, codes):
    """Class coding has one home, Dataset.codes_of: the label matrix's columns, the protocol's
    codes and a model's classes_ agree (before, the protocol coded classes 2, 9, 10 by their
    text order "10" < "2" < "9"). Oracle: the class of each row, by hand."""
    from sblr import SBLRClassifier
    from sblr.protocol import task_y

    f = list(range(len(column)))
    text = "f,c\n" + "".join(f"{a},{c}\n" for a, c in zip(f, column, strict=True))
    ds = load_dataset(text.encode(), name="c.csv", target="c")
    assert ds.class_names == names
    by_hand = codes
    np.testing.assert_array_equal(ds.class_codes(), by_hand)
    np.testing.assert_array_equal(task_y(ds), by_hand)
    np.testing.assert_array_equal(ds.label_matrix().argmax(axis=1), by_hand)
    model = SBLRClassifier(gamma=1.0).fit(ds.X, ds.y)
    np.testing.assert_array_equal(model.classes_, ds.class_values())
    pred = model.predict(ds.X)
    np.testing.assert_array_equal(ds.codes_of(pred), model.predict_proba(ds.X).argmax(axis=1))
    with pytest.raises(ValueError, match="not in class_names"):
        ds.codes_of(["no such class"])


def test_the_task_agnostic_questions_a_page_asks_of_a_dataset():
    """Pages branched on ``ds.task == "multilabel"`` (27 times) to word a class, to code a
    model's predictions and to compare them with the truth; Dataset answers for either task.
    Oracle: the one-hot matrix of each row's class, written out by hand."""
    multi = Dataset(
        X=np.zeros((4, 1)), y=np.array([9, 10, 2, 9]), task="multiclass",
        feature_names=["f"], class_names=["2", "9", "10"],
    )  # fmt: skip
    assert not multi.is_multilabel and multi.class_word == "class"
    np.testing.assert_array_equal(multi.indicator_of([10, 2]), [[0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(
        multi.label_matrix(), [[0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0]]
    )
    with pytest.raises(ValueError, match="not in class_names"):
        multi.indicator_of([3])
    y = np.array([[1, 0], [1, 1], [0, 0]])
    labels = Dataset(
        X=np.zeros((3, 1)), y=y, task="multilabel", feature_names=["f"], class_names=["a", "b"]
    )
    assert labels.is_multilabel and labels.class_word == "label"
    given = labels.indicator_of(np.array([[0, 1]], dtype=bool))
    np.testing.assert_array_equal(given, [[0, 1]])
    assert given.dtype == int
    np.testing.assert_array_equal(labels.label_matrix(), y)
    assert labels.label_matrix() is not labels.y  # a copy: the pages may write into it


def test_the_fingerprint_follows_what_fits_are_computed_from():
    """The dashboard's caches key on Dataset.fingerprint: equal for data that give the same
    fits (the notes aside), different as soon as a value, a label, a name or the sparsity
    differs, and computed once per data set."""
    import scipy.sparse as sp

    def make(X=None, y=None, **kw):
        X = np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 0.5]]) if X is None else X
        y = np.array(["a", "b", "a"], dtype=object) if y is None else y
        options = dict(task="multiclass", feature_names=["u", "v"], class_names=["a", "b"])
        return Dataset(X=X, y=y, **{**options, **kw})

    base = make()
    assert make(notes=["read from a file"]).fingerprint == base.fingerprint
    X = np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 0.5]])
    X2 = X.copy()
    X2[2, 1] = 0.25
    others = [
        make(X=X2),
        make(y=np.array(["a", "b", "b"], dtype=object)),
        make(feature_names=["u", "w"]),
        make(class_names=["b", "a"]),
        make(name="other"),
        make(X=sp.csr_matrix(X)),
        make(X=X.T.copy().T),  # same values in Fortran order: the same data
    ]
    digests = [d.fingerprint for d in others]
    assert digests[-1] == base.fingerprint
    assert len(set(digests[:-1]) | {base.fingerprint}) == len(digests)
    assert base.__dict__["fingerprint"] == base.fingerprint  # kept: computed once


def test_a_wide_dense_arff_reads_its_values_line_by_line():
    """Issue #35 row 10: 100,000 attributes × 5 rows took 33 CPU-s through pandas (a Series
    per attribute); a file with more than 50 columns a row is now read line by line (its cost:
    python -m benchmarks.io_read --wide). Oracle: the numbers written."""
    from sblr.io._limits import WIDE_COLUMNS_PER_ROW

    rng = np.random.default_rng(0)
    n_attr = 3 * WIDE_COLUMNS_PER_ROW
    values = rng.random((2, n_attr)).round(3)
    header = ["@relation wide"] + [f"@attribute a{i} numeric" for i in range(n_attr)]
    header += ["@attribute class {x,y}", "@data"]
    rows = [
        ",".join(f"{v:.3f}" for v in row) + f",{c}" for row, c in zip(values, "xy", strict=True)
    ]
    ds = load_dataset("\n".join(header + rows).encode(), name="wide.arff")
    np.testing.assert_array_equal(np.asarray(ds.X), values)
    assert list(ds.y) == ["x", "y"]


def test_a_wide_csv_is_read_line_by_line_not_through_pandas(monkeypatch):
    """Issue #35 row 10: 50,000 CSV columns × 5 rows took 9.7 CPU-s and 152 MB at its peak
    through pandas (a Series per column), 0.8 CPU-s and 31 MB line by line
    (python -m benchmarks.io_read --wide). A file with more than WIDE_COLUMNS_PER_ROW columns a
    row never reaches pandas' parser; a narrow one still does. Oracle: the numbers written."""
    import sblr.io._csv as csv_io
    from sblr.io._limits import WIDE_COLUMNS_PER_ROW

    calls, line_reads = [], []
    real, line_reader = csv_io.parse_columns, csv_io.read_rows
    monkeypatch.setattr(csv_io, "parse_columns", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(
        csv_io, "read_rows", lambda *a, **k: line_reads.append(1) or line_reader(*a, **k)
    )
    rng = np.random.default_rng(1)
    n_cols = 3 * WIDE_COLUMNS_PER_ROW
    values = rng.random((2, n_cols)).round(3)
    lines = [",".join([f"c{i}" for i in range(n_cols)] + ["class"])]
    lines += [
        ",".join(f"{v:.3f}" for v in row) + f",{c}" for row, c in zip(values, "xy", strict=True)
    ]
    ds = load_dataset("\n".join(lines).encode(), name="wide.csv", target="class")
    np.testing.assert_array_equal(np.asarray(ds.X), values)
    assert list(ds.y) == ["x", "y"] and calls == [] and line_reads == [1]
    narrow = "a,b,class\n" + "\n".join(f"{i},{i / 2},{'xy'[i % 2]}" for i in range(20))
    load_dataset(narrow.encode(), name="narrow.csv", target="class")
    assert calls == [1] and line_reads == [1]  # one value path: pandas alone


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize(
    ("text", "sep"),
    [
        ("a,b,c\n1,2,x\n\u00a0\u00a0\n3,4,y\n5,6,x\n", ","),
        ("a;b;c\n1;2;x\n\u3000\n3;4;y\n5;6;x\n", ";"),
        ("a\tb\tc\n1\t2\tx\n\u00a0\n3\t4\ty\n5\t6\tx\n", "\t"),
    ],
)
def test_a_line_of_other_blanks_is_no_row_on_either_value_path(text, sep, wide, monkeypatch):
    """Found when the CSV reader became one value path per file shape: a line of no-break (or
    ideographic) spaces, no row for the line reader as a line of spaces is, was a row of
    missing values to pandas, and the file was refused ("its 3 rows were read as 4"). Oracle:
    the three rows written, on both value paths."""
    import sblr.io as sio

    monkeypatch.setattr(sio._csv, "WIDE_COLUMNS_PER_ROW", 0 if wide else 10**9)
    ds = load_dataset(text.encode(), name="t.csv", target="c")
    np.testing.assert_array_equal(np.asarray(ds.X), [[1, 2], [3, 4], [5, 6]])
    assert list(ds.y) == ["x", "y", "x"]


def test_a_line_of_tabs_stays_a_row_of_missing_values():
    """Tabs separate a TSV's values: a line of them is a row whose values are all missing
    (imputed), not a blank line, whichever blanks are elsewhere in the file."""
    text = "a\tb\tc\n1\t2\tx\n\t\tx\n3\t4\ty\u00a0\n"
    ds = load_dataset(text.encode(), name="t.tsv", target="c")
    assert ds.n_samples == 3
    np.testing.assert_array_equal(np.asarray(ds.X)[1], [2, 3])  # the column means


def test_io_modules_import_only_plain_names_from_each_other():
    """One sblr/io module takes from another only names without a leading underscore: what a
    module shares is its plain names (the package's __all__ decides the public API); a
    ``_name`` stays inside its module. Parsed with ast: ``from sblr.io._x import _y``,
    ``from ._x import _y`` and ``from sblr.io import _y`` are each a failure."""
    import ast

    import sblr.io

    folder = Path(sblr.io.__file__).parent
    files = sorted(folder.glob("*.py"))
    assert len(files) >= 5
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            inside = node.level > 0 or (node.module or "").split(".")[:2] == ["sblr", "io"]
            for alias in node.names if inside else ():
                if alias.name.startswith("_") and alias.name != "__future__":
                    found.append(f"{path.name}:{node.lineno} imports {alias.name}")
    assert found == []
