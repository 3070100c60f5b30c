"""Text from a user's file, made safe to show or to write: never markup, never a formula.

Everything a data file can put on a page or into a download (class names,
column names, loader notes, error messages quoting a line) is data.  Two
helpers, one per destination, and every caller uses them:

* :func:`escape_markdown` for text a Markdown renderer will see (Streamlit's
  ``st.markdown``, titles, captions, alerts, widget labels), so that
  ``![x](http://host/p.png)`` is not an image request and ``a_b_c`` keeps its
  underscores;
* :func:`csv_safe` / :func:`to_csv_bytes` for CSV files, neutralizing cells that
  a spreadsheet would run as a formula (OWASP's rule: a cell starting with
  ``=``, ``+``, ``-``, ``@``, tab or carriage return gets a leading ``'``).
"""

from __future__ import annotations

import html
import re

import pandas as pd

__all__ = [
    "WORD_JOINER",
    "csv_cell",
    "csv_safe",
    "escape_markdown",
    "safe_filename",
    "to_csv_bytes",
]

# Every ASCII punctuation character is written as a numeric character reference (&#58;), which
# CommonMark always shows as that character and never reads as syntax.  Backslash escapes would do
# for CommonMark itself, but not for the extensions Streamlit's renderer adds on top: GFM turns a
# backslash-escaped "http\\://x" or "www\\.x" into a link, and :material/icon:, :red[text] and
# $math$ are built from the same characters.
_MARKDOWN_SPECIAL = re.compile(r"[!-/:-@\[-`{-~]")
# GFM also links bare URLs and e-mail addresses *after* parsing, from the decoded text, so no
# escape prevents it: an invisible WORD JOINER (U+2060) breaks the pattern ("http\u2060://").
WORD_JOINER = "\u2060"
_AUTOLINK = re.compile(r"(?i)(?<=https)(?=:)|(?<=http)(?=:)|(?<=ftp)(?=:)|(?<=www)(?=\.)|(?=@)")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_FILENAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def escape_markdown(text: object, *, readable: bool = False, label: bool = False) -> str:
    """``str(text)`` with every ASCII punctuation character written as a character
    reference, so that any Markdown renderer shows it as itself and never as markup.

    Line breaks become spaces (a name never starts a new block), and an invisible
    :data:`WORD_JOINER` goes before the ``:`` of ``http:``/``https:``/``ftp:``, the ``.`` of
    ``www.`` and every ``@``, which Streamlit's renderer would otherwise turn into links.

    ``readable=True`` backslash-escapes instead, for Markdown files people also read as
    text (``tables.md``): safe in CommonMark, but bare URLs may still be linked by GFM.

    ``label=True`` (a widget's label, which Streamlit also gives as the widget's accessible
    name, unrendered) references only the punctuation that could start markup where it
    stands, so the usual names read as themselves to a screen reader too: an underscore
    between two letters or digits, ``-``, ``+``, ``=`` after the first character, ``.``
    and ``)`` unless after a leading number, and ``,;?'"%/()`` stay as they are.

    Examples
    --------
    >>> print(escape_markdown("a_b|c", readable=True))
    a\\_b\\|c
    >>> escape_markdown("Instrument_-_Trombone")
    'Instrument&#95;&#45;&#95;Trombone'
    >>> escape_markdown("![x](http://host)") == (
    ...     "&#33;&#91;x&#93;&#40;http" + WORD_JOINER + "&#58;&#47;&#47;host&#41;")
    True
    >>> escape_markdown("wind_sin (m/s)", label=True), escape_markdown("_a *b*", label=True)
    ('wind_sin (m/s)', '&#95;a &#42;b&#42;')
    """
    flat = " ".join(str(text).splitlines()) if "\n" in str(text) or "\r" in str(text) else str(text)
    if readable:
        return _MARKDOWN_SPECIAL.sub(r"\\\g<0>", flat)
    flat = _AUTOLINK.sub(WORD_JOINER, flat)
    if label:
        return "".join(_label_char(flat, i) for i in range(len(flat)))
    return _MARKDOWN_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", flat)


# in a label, punctuation that may start markup wherever it stands
_LABEL_ALWAYS = frozenset("!#$&*:<>@[\\]^`{|}~")


def _label_char(flat: str, i: int) -> str:
    ch = flat[i]
    if not _MARKDOWN_SPECIAL.match(ch):
        return ch
    inside_word = 0 < i < len(flat) - 1 and flat[i - 1].isalnum() and flat[i + 1].isalnum()
    leading_number = i > 0 and flat[:i].isdigit()
    if (
        ch in _LABEL_ALWAYS
        or (ch == "_" and not inside_word)
        or (ch in "-+=" and i == 0)
        or (ch in ".)" and (i == 0 or leading_number))
    ):
        return f"&#{ord(ch)};"
    return ch


def csv_cell(value: object) -> object:
    """One CSV cell with a spreadsheet formula neutralized (other values unchanged).

    A text cell that starts with ``=``, ``+``, ``-``, ``@``, tab or carriage
    return gets a leading apostrophe, unless it is a plain number such as ``-1.5``.

    Examples
    --------
    >>> csv_cell("=HYPERLINK(\\"http://x\\")"), csv_cell("-1.5"), csv_cell("rain"), csv_cell(-2)
    ('\\'=HYPERLINK("http://x")', '-1.5', 'rain', -2)
    """
    if (
        isinstance(value, str)
        and value.startswith(_FORMULA_START)
        and not _PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def _is_text(values) -> bool:
    return pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)


def _safe_index(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        arrays = [index.get_level_values(i) for i in range(index.nlevels)]
        arrays = [a.map(csv_cell) if _is_text(a) else a for a in arrays]
        return pd.MultiIndex.from_arrays(arrays, names=[csv_cell(n) for n in index.names])
    return (index.map(csv_cell) if _is_text(index) else index).rename(csv_cell(index.name))


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells, column names and index pass :func:`csv_cell`.

    Examples
    --------
    >>> frame = pd.DataFrame({"@class": ["+1+2", "rain"], "beta": [0.5, -1.0]})
    >>> csv_safe(frame).to_csv(index=False).splitlines()
    ["'@class,beta", "'+1+2,0.5", 'rain,-1.0']
    """
    out = frame.copy()
    for column in out.columns:
        if _is_text(out[column]):
            out[column] = out[column].map(csv_cell)
    out.columns = _safe_index(out.columns)
    out.index = _safe_index(out.index)
    return out


def to_csv_bytes(frame: pd.DataFrame, **kwargs) -> bytes:
    """UTF-8 CSV bytes of ``frame`` after :func:`csv_safe`; the one way the app and the
    command line write CSV.  Keyword arguments go to ``DataFrame.to_csv``.

    Lines end with CRLF (RFC 4180): then every cell holding a line break is quoted, so a
    name such as ``"x\\r=cmd"`` cannot start a new row with a formula (with ``\\n`` line
    ends, pandas leaves a lone ``\\r`` unquoted).

    Examples
    --------
    >>> to_csv_bytes(pd.DataFrame({"k": ["=1+1", "a\\r=2"]}), index=False).split(b"\\r\\n")
    [b'k', b"'=1+1", b'"a\\r=2"', b'']
    """
    kwargs.setdefault("lineterminator", "\r\n")
    return csv_safe(frame).to_csv(**kwargs).encode("utf-8")


def safe_filename(*parts: object, suffix: str = "", max_length: int = 120) -> str:
    """A download's file name from parts that may come from a user's file.

    Parts are joined with ``_``; anything but letters, digits, ``.``, ``_`` and ``-``
    becomes ``_`` (no path separators, quotes or control characters reach a
    Content-Disposition header or a file system), and the stem is cut to ``max_length``.

    Examples
    --------
    >>> safe_filename("birds", "contributions", "Pacific Wren/../x", suffix=".csv")
    'birds_contributions_Pacific_Wren_.._x.csv'
    >>> safe_filename("=cmd|' /C calc'!A0", suffix=".csv")
    'cmd_C_calc_A0.csv'
    """
    stem = "_".join(_FILENAME_UNSAFE.sub("_", str(p)).strip("_.-") for p in parts)
    stem = stem.strip("_.-")[:max_length] or "download"
    return stem + suffix


def escape_html(text: object) -> str:
    """``text`` for plotly's pseudo-HTML (hover texts, tick labels, titles): ``&``, ``<`` and
    ``>`` as entities, quotes left readable; the one HTML escaper of the figures.

    Examples
    --------
    >>> escape_html("<b>a & b</b>")
    '&lt;b&gt;a &amp; b&lt;/b&gt;'
    """
    return html.escape(str(text), quote=False)
