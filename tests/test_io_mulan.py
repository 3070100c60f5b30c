"""Mulan files load as Mulan and MEKA load them (:mod:`sblr.io`): label names with backslash
escapes, the data set's XML found beside its split files, and a file of many trailing {0,1}
attributes without label information refused rather than read as one binary class.

The last tests read every file of ``../shared/datasets/multilabel/`` (skipped where that
folder is absent) and check it against the folder's README.
"""

from __future__ import annotations

import numpy as np
import pytest

from sblr.exceptions import DataError
from sblr.io import MANY_TRAILING_BINARY, load_dataset, read_mulan_xml
from sblr.io._arff import xml_candidates


def arff(attributes: list[tuple[str, str]], rows: list[str], relation: str = "r") -> bytes:
    header = [f"@relation {relation}"] + [f"@attribute {n} {t}" for n, t in attributes]
    return ("\n".join(header + ["@data"] + rows) + "\n").encode()


def mulan_xml(labels: list[str]) -> bytes:
    body = "".join(f'<label name="{label}"></label>' for label in labels)
    return f'<labels xmlns="http://mulan.sourceforge.net/labels">{body}</labels>'.encode()


# --------------------------------------------------------------------------- escapes


#: As delicious-train.arff and delicious.xml write them: unquoted, a backslash before ' and ~.
ESCAPED = [("f", "numeric"), (r"TAG_m\'usica", "{0,1}"), (r"TAG_dise\~no", "{0,1}")]
ESCAPED_ROWS = ["1,0,1", "2,1,0", "3,1,1"]


def test_xml_labels_with_backslash_escapes_match_their_attributes(tmp_path):
    """delicious: the XML writes a label exactly as the ARFF header does (``TAG_m\\'usica``);
    both sides decode the escape the same way (the ARFF reader unescapes names as Weka's
    does), so the label is found and named ``TAG_m'usica``.  ``\\~`` is no escape: kept."""
    xml = mulan_xml([r"TAG_m\'usica", r"TAG_dise\~no"])
    ds = load_dataset(arff(ESCAPED, ESCAPED_ROWS), name="d.arff", xml=xml)
    assert ds.task == "multilabel"
    assert ds.class_names == ["TAG_m'usica", r"TAG_dise\~no"]
    np.testing.assert_array_equal(ds.y, [[0, 1], [1, 0], [1, 1]])
    # the same in a quoted name (Weka's own writing), and an XML that writes the name decoded
    quoted = [("f", "numeric"), (r"'TAG_m\'usica'", "{0,1}"), (r"TAG_dise\~no", "{0,1}")]
    for xml in (mulan_xml([r"TAG_m\'usica", r"TAG_dise\~no"]), mulan_xml(["TAG_m'usica"])):
        ds = load_dataset(arff(quoted, ESCAPED_ROWS), name="q.arff", xml=xml)
        assert ds.class_names[0] == "TAG_m'usica"
    # the split's test file is read as its training file was: the same names
    (tmp_path / "d-train.arff").write_bytes(arff(ESCAPED, ESCAPED_ROWS))
    (tmp_path / "d-test.arff").write_bytes(arff(ESCAPED, ESCAPED_ROWS[::-1]))
    (tmp_path / "d.xml").write_bytes(mulan_xml([r"TAG_m\'usica", r"TAG_dise\~no"]))
    train = load_dataset(tmp_path / "d-train.arff")
    test = load_dataset(tmp_path / "d-test.arff", like=train)
    np.testing.assert_array_equal(test.y, train.y[::-1])


# --------------------------------------------------------------------------- finding the XML

LABELLED = [("f", "numeric"), ("g", "numeric"), ("a", "{0,1}"), ("b", "{0,1}")]
LABELLED_ROWS = ["1,2,0,1", "3,4,1,0", "5,6,1,1"]


@pytest.mark.parametrize(
    ("arff_name", "xml_name"),
    [
        ("delicious-train.arff", "delicious.xml"),
        ("delicious-test.arff", "delicious.xml"),
        ("Corel5k-train-sparse.arff", "Corel5k.xml"),
        ("tmc2007-500-test.arff", "tmc2007-500.xml"),
        ("yeast_train.arff", "yeast.xml"),
        ("emotions.arff", "emotions.xml"),
    ],
)
def test_a_split_file_finds_its_data_sets_xml(tmp_path, arff_name, xml_name):
    """Mulan ships one ``NAME.xml`` for ``NAME-train.arff`` and ``NAME-test.arff``: the
    reader tries the file's own stem, then drops its last ``-``/``_``/``.`` part step by
    step, the case kept as on disk (``Corel5k``); the note names the file it read."""
    (tmp_path / arff_name).write_bytes(arff(LABELLED, LABELLED_ROWS))
    (tmp_path / xml_name).write_bytes(mulan_xml(["b", "a"]))
    ds = load_dataset(tmp_path / arff_name)
    assert ds.task == "multilabel" and ds.class_names == ["b", "a"]
    assert f"read 2 label names from {xml_name}" in ds.notes


def test_the_nearest_xml_wins_and_an_explicit_one_beats_them_all(tmp_path):
    path = tmp_path / "toy-500-train.arff"
    path.write_bytes(arff(LABELLED, LABELLED_ROWS))
    assert [p.name for p in xml_candidates(path)] == [
        "toy-500-train.xml",
        "toy-500.xml",
        "toy.xml",
    ]
    (tmp_path / "toy.xml").write_bytes(mulan_xml(["a"]))
    (tmp_path / "toy-500.xml").write_bytes(mulan_xml(["b", "a"]))
    assert load_dataset(path).class_names == ["b", "a"]  # toy-500.xml, not toy.xml
    other = tmp_path / "elsewhere.xml"
    other.write_bytes(mulan_xml(["a", "b"]))
    assert load_dataset(path, xml=other).class_names == ["a", "b"]


def test_a_wrong_xml_found_beside_the_file_says_which_file_it_was(tmp_path):
    path = tmp_path / "toy-train.arff"
    path.write_bytes(arff(LABELLED, LABELLED_ROWS))
    (tmp_path / "toy.xml").write_bytes(mulan_xml(["a", "ghost"]))
    with pytest.raises(DataError, match=r"'ghost' from toy\.xml.*xml="):
        load_dataset(path)


# --------------------------------------------------------------------------- no label information


def binary_tail(n_binary: int, n_rows: int = 4) -> bytes:
    """A numeric feature, then ``n_binary`` attributes declared {0,1} (the last one included)."""
    attributes = [("x", "numeric")] + [(f"t{j}", "{0,1}") for j in range(n_binary)]
    rng = np.random.default_rng(0)
    rows = [
        ",".join([str(i)] + [str(v) for v in rng.integers(0, 2, n_binary)]) for i in range(n_rows)
    ]
    return arff(attributes, rows)


def test_many_trailing_binary_attributes_without_labels_are_refused():
    """delicious without its XML was read as ONE binary class, its last tag ("Accuracy
    0.985"): a run of many {0,1} attributes at the end is a Mulan file's labels, so the
    loader asks which they are; the message says how many and how to tell it."""
    n = MANY_TRAILING_BINARY
    with pytest.raises(DataError) as exc:
        load_dataset(binary_tail(n), name="tags-train.arff")
    message = str(exc.value)
    assert f"ends with {n} attributes declared {{0,1}}" in message
    for remedy in ("XML label file", "xml=", "n_labels=", "target=-1"):
        assert remedy in message
    # told, it loads
    ds = load_dataset(binary_tail(n), name="tags-train.arff", n_labels=n - 1)
    assert ds.task == "multilabel" and ds.n_classes == n - 1
    ds = load_dataset(binary_tail(n), name="tags-train.arff", target=-1)
    assert ds.task == "multiclass" and ds.class_names == ["0", "1"]


def test_a_few_binary_features_and_a_binary_class_still_load():
    """SPECT (22 {0,1} features and a {0,1} class, 23 in a row) and boolean benchmarks
    (parity, mux6, corral: 7-11) are single-label files: below the refusal they load as
    before, the last attribute the class, with the loud "Warning:" note first."""
    ds = load_dataset(binary_tail(MANY_TRAILING_BINARY - 1), name="spect.arff")
    assert ds.task == "multiclass" and ds.class_names == ["0", "1"]
    assert ds.notes[0].startswith(f"Warning: the last {MANY_TRAILING_BINARY - 1} attributes")


# --------------------------------------------------------------------------- many labels


@pytest.mark.parametrize("sparse", [False, True])
def test_label_columns_are_decoded_from_their_codes(sparse, monkeypatch):
    """delicious-train's 983 labels took 5 of its 10 s, each value of each label turned into
    text and back. Oracle: :func:`binary_labels` column by column, as before; nominal labels
    never go through it (a spy on ``Table.column``), whatever their declared order ({1,0}:
    an omitted sparse value is the first, 1) or words (yes/no)."""
    from sblr.io._arff import read_arff
    from sblr.io._dataset import Table
    from sblr.io._encoding import binary_labels, label_columns

    kinds = ["{0,1}", "{1,0}", "{no,yes}", "{0,1,2}", "numeric"]
    rng = np.random.default_rng(1)
    values = rng.integers(0, 2, size=(40, len(kinds)))
    words = [["0", "1"], ["0", "1"], ["no", "yes"], ["0", "1"], ["0", "1"]]
    if sparse:
        rows = [
            "{0 1, "
            + ", ".join(
                f"{k + 1} {words[k][v]}" for k, v in enumerate(r) if kinds[k] != "{1,0}" or v == 0
            )
            + "}"
            for r in values
        ]
    else:
        rows = ["1," + ",".join(words[k][v] for k, v in enumerate(r)) for r in values]
    attributes = [("x", "numeric")] + [(f"l{k}", kind) for k, kind in enumerate(kinds)]
    table = read_arff(arff(attributes, rows).decode())[0]
    expected = np.column_stack([binary_labels(table.column(j)) for j in range(1, 6)])
    np.testing.assert_array_equal(expected, values)
    asked = []
    original = Table.column
    monkeypatch.setattr(Table, "column", lambda t, j: asked.append(j) or original(t, j))
    np.testing.assert_array_equal(label_columns(table, list(range(1, 6))), values)
    assert asked == [5]  # the numeric one only


def test_a_label_value_that_is_not_0_or_1_is_still_named():
    attributes = [("x", "numeric"), ("a", "{0,1,2}"), ("b", "{0,1}")]
    with pytest.raises(DataError, match=r"label column 'a' must hold only 0/1.*'2'"):
        load_dataset(arff(attributes, ["1,0,1", "2,2,0"]), name="l.arff", n_labels=2)
    with pytest.raises(DataError, match=r"label column 'b' has 1 missing value"):
        load_dataset(arff(attributes, ["1,0,1", "2,1,?"]), name="l.arff", n_labels=2)


# --------------------------------------------------------------------------- the shared files

#: ``../shared/datasets/multilabel/README.md``: the data set's XML (as Mulan
#: ships it), then rows, features and labels of every file.  The
#: README counts genbase's `protein` ID among its 1186 features; the loader drops it (1185).
#: The four small sets' splits are their full file's rows in two parts (Mulan's split:
#: train + test = all rows).
SHARED = {
    "emotions.arff": ("emotions.xml", 593, 72, 6),
    "emotions-train.arff": ("emotions.xml", 391, 72, 6),
    "emotions-test.arff": ("emotions.xml", 202, 72, 6),
    "scene.arff": ("scene.xml", 2407, 294, 6),
    "scene-train.arff": ("scene.xml", 1211, 294, 6),
    "scene-test.arff": ("scene.xml", 1196, 294, 6),
    "yeast.arff": ("yeast.xml", 2417, 103, 14),
    "yeast-train.arff": ("yeast.xml", 1500, 103, 14),
    "yeast-test.arff": ("yeast.xml", 917, 103, 14),
    "genbase.arff": ("genbase.xml", 662, 1185, 27),
    "genbase-train.arff": ("genbase.xml", 463, 1185, 27),
    "genbase-test.arff": ("genbase.xml", 199, 1185, 27),
    "enron-train.arff": ("enron.xml", 1123, 1001, 53),
    "enron-test.arff": ("enron.xml", 579, 1001, 53),
    "Corel5k-train-sparse.arff": ("Corel5k.xml", 4500, 499, 374),
    "Corel5k-test-sparse.arff": ("Corel5k.xml", 500, 499, 374),
    "bibtex-train.arff": ("bibtex.xml", 4880, 1836, 159),
    "bibtex-test.arff": ("bibtex.xml", 2515, 1836, 159),
    "tmc2007-500-train.arff": ("tmc2007-500.xml", 21519, 500, 22),
    "tmc2007-500-test.arff": ("tmc2007-500.xml", 7077, 500, 22),
    "delicious-train.arff": ("delicious.xml", 12920, 500, 983),
    "delicious-test.arff": ("delicious.xml", 3185, 500, 983),
}
#: Files that take a second or more to load on the 2-core development machine when four
#: people share it (0.35 CPU-s or more; `python -m benchmarks.io_read --mulan` prints every
#: file's time): the slow suite reads them.
SLOW_TO_LOAD = {
    "genbase.arff",
    "genbase-train.arff",
    "bibtex-train.arff",
    "bibtex-test.arff",
    "tmc2007-500-train.arff",
    "tmc2007-500-test.arff",
    "delicious-train.arff",
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "file_name",
    [pytest.param(f, marks=pytest.mark.slow) if f in SLOW_TO_LOAD else f for f in SHARED],
)
def test_every_shared_mulan_file_loads_with_its_xml(file_name, shared_datasets):
    folder = shared_datasets / "multilabel"
    path = folder / file_name
    if not path.is_file():
        pytest.skip(f"{file_name} is not in {folder}")
    xml, rows, features, labels = SHARED[file_name]
    ds = load_dataset(path)  # the XML found beside it, as Mulan ships it
    assert ds.task == "multilabel"
    assert ds.X.shape == (rows, features) and ds.y.shape == (rows, labels)
    assert f"read {labels} label names from {xml}" in ds.notes
    assert len(read_mulan_xml(folder / xml)) == labels


def test_the_shared_multilabel_folder_holds_no_file_this_test_misses(shared_datasets):
    """Every ARFF file of the folder is in :data:`SHARED` (a file added later is checked)."""
    on_disk = {p.name for p in (shared_datasets / "multilabel").glob("*.arff")}
    assert on_disk <= set(SHARED), sorted(on_disk - set(SHARED))
