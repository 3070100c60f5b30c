"""Text from a user's file shown as text and written as data (sblr.textsafe)."""

from __future__ import annotations

import csv
import html
import io
import re

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sblr.textsafe import (
    WORD_JOINER,
    csv_cell,
    csv_safe,
    escape_markdown,
    safe_filename,
    to_csv_bytes,
)

#: CommonMark plus the GFM pieces Streamlit's renderer has (tables, strikethrough).
_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])

HOSTILE_NAMES = [
    "![x](http://127.0.0.1:9/p.png)",
    "Instrument_-_Trombone",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "**bold** and *it*",
    "`code`",
    "# heading",
    "- item",
    "1. item",
    "> quote",
    ":red[boom] :material/home:",
    "$x^2$",
    "a | b",
    "~~gone~~",
    "&amp; &lt;",
    "back\\slash",
    '=HYPERLINK("http://x")',
]


def rendered_text(markdown: str) -> str:
    """What a reader sees: the rendered HTML with tags removed and entities decoded."""
    out = _MD.render(markdown)
    assert "<img" not in out and "<a " not in out, out
    return html.unescape(re.sub(r"<[^>]+>", "", out)).replace(WORD_JOINER, "").strip()


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_escaped_names_render_as_themselves(name):
    assert rendered_text(escape_markdown(name)) == name
    # ... also inside a sentence, as the pages use them.
    assert rendered_text(f"Class contributions to “{escape_markdown(name)}”") == (
        f"Class contributions to “{name}”"
    )


def test_unescaped_names_are_markup():
    """The oracle can fail: without escaping, these names are links, images or emphasis."""
    assert "<img" in _MD.render("![x](http://127.0.0.1:9/p.png)")
    assert rendered_text("Instrument_-_Trombone") == "Instrument_-_Trombone"  # CommonMark ...
    assert "<em>" in _MD.render("a _b_ c")  # ... but underscores around words are emphasis


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")),
        min_size=1,
        max_size=40,
    ).filter(lambda s: s == s.strip() and len(s.splitlines()) == 1)
)
def test_any_name_round_trips_through_markdown(name):
    assert rendered_text(escape_markdown(name)) == name


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_escaped_labels_render_as_themselves(name):
    assert rendered_text(escape_markdown(name, label=True)) == name
    assert rendered_text(f"{escape_markdown(name, label=True)} (training 0 … 1)") == (
        f"{name} (training 0 … 1)"
    )


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp"))
        | st.sampled_from(list("_-.*()[]:1a ")),
        min_size=1,
        max_size=40,
    ).filter(lambda s: s == s.strip() and len(s.splitlines()) == 1)
)
def test_any_label_round_trips_through_markdown(name):
    assert rendered_text(escape_markdown(name, label=True)) == name


@pytest.mark.parametrize(
    "name",
    ["wind_sin", "Mean_Acc1000_Std_Mem40_Centroid", "x-2.5", "BMI (kg/m2)", "a,b;c?d'e\"f%g"],
)
def test_usual_names_are_labels_as_they_are(name):
    """Streamlit gives a widget's raw label as its accessible name: a screen reader read
    "wind&#95;sin". The usual names need no reference at all."""
    assert escape_markdown(name, label=True) == name


def test_line_breaks_cannot_start_a_block():
    assert rendered_text(escape_markdown("a\n# b\n\n- c")) == "a # b  - c"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("+1+2", "'+1+2"),
        ("-1+2", "'-1+2"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-1.5", "-1.5"),
        ("+2e-3", "+2e-3"),
        ("rain", "rain"),
        (-1.5, -1.5),
        (None, None),
    ],
)
def test_csv_cell(value, expected):
    assert csv_cell(value) == expected


def test_csv_safe_covers_cells_header_and_index():
    names = ["=1+1", "@x", "rain"]
    frame = pd.concat(
        {"SBLR": pd.DataFrame([[1.0, -2.0, 0.0]] * 3, index=names, columns=names)},
        names=["model", "+k"],
    )
    frame["note"] = ["-bad", "ok", "=x"]
    rows = list(csv.reader(io.StringIO(to_csv_bytes(frame).decode())))
    cells = [cell for row in rows for cell in row]
    assert "'=1+1" in cells and "'@x" in cells and "'+k" in cells and "'-bad" in cells
    formula = [c for c in cells if c[:1] in ("=", "+", "-", "@") and not _is_number(c)]
    assert formula == []
    # numbers keep their sign and the frame itself is untouched
    assert "-2.0" in cells
    assert frame.index.get_level_values(1)[0] == "=1+1"
    assert list(csv_safe(frame)["note"]) == ["'-bad", "ok", "'=x"]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6))
def test_no_csv_cell_can_start_a_formula(names):
    frame = pd.DataFrame({"class": names, "beta": range(len(names))}, index=names)
    for row in csv.reader(io.StringIO(to_csv_bytes(frame).decode(), newline="")):
        for cell in row:
            assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r") or _is_number(cell), cell


@pytest.mark.parametrize("name", [*HOSTILE_NAMES, "../../etc/passwd", "a\r\nContent-Type: x", ""])
def test_safe_filename(name):
    out = safe_filename("data", name, suffix=".csv")
    assert re.fullmatch(r"[A-Za-z0-9._-]+\.csv", out)
    assert "/" not in out and ".." not in out.split(".csv")[0].split("_")


def test_the_result_list_file_is_named_after_what_it_holds():
    """Issue #46, item 14: the session's result list held rows of four data sets in a file
    named after the one in use. Oracle: the data sets of its rows, counted by hand."""
    from pages._shared.formatting import result_list_filename

    assert result_list_filename(["birds"] * 3) == "birds_result_list.csv"
    rows = ["birds", "yeast", "birds", "emotions", "scene"]
    assert result_list_filename(rows) == "result_list_of_4_data_sets.csv"
    assert result_list_filename(["a/../b"]) == "a_.._b_result_list.csv"  # a user's name, safe
