"""Shared conventions of the figures: colours, scales, sizes, input checks and layout helpers.

The public constants and :func:`class_colors` are re-exported by :mod:`sblr.plots`; the
private helpers are for the figure modules of this package only.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Sequence

import numpy as np

from sblr.textsafe import escape_html as esc_html

# --------------------------------------------------------------------------- conventions

#: Positive beta / contribution (raises class k's logit).
POSITIVE_COLOR = "#b2182b"
#: Negative beta / contribution (lowers class k's logit).
NEGATIVE_COLOR = "#2166ac"
#: Totals (the logit bar of the waterfall).
TOTAL_COLOR = "#4d4d4d"
#: Catch-all groups ("other N classes") and not-predicted bars.
OTHER_COLOR = "#c8c8c8"
#: Classes predicted relevant in :func:`probability_bars`.
PREDICTED_COLOR = "#1a9850"
#: Single-colour count bars.
COUNT_COLOR = "#6a51a3"
#: One colour per model, used wherever models are compared.

#: Diverging scale for signed beta, symmetric around 0.  Exact zeros are drawn
#: as gaps (white background); the jump at 0.5 gives every non-zero value at
#: least a pale blue / pale red tint, so "small" and "exactly zero" differ.
BETA_COLORSCALE = [
    [0.0, "#053061"],
    [0.2, "#2166ac"],
    [0.38, "#92c5de"],
    [0.5, "#d1e5f0"],
    [0.5, "#fddbc7"],
    [0.62, "#f4a582"],
    [0.8, "#b2182b"],
    [1.0, "#67001f"],
]
#: Sequential scale for |beta| (never white: white means exactly zero).
BETA_ABS_COLORSCALE = [
    [0.0, "#fee0d2"],
    [0.35, "#fc9272"],
    [0.7, "#de2d26"],
    [1.0, "#67000d"],
]
#: Sequential scale for counts (never white: white means a zero count).
COUNT_COLORSCALE = [
    [0.0, "#efedf5"],
    [0.4, "#9e9ac8"],
    [0.75, "#6a51a3"],
    [1.0, "#3f007d"],
]

#: Above this many classes, per-class tick labels are hidden (hover names them).
MAX_TICK_LABELS = 30
#: Up to this many classes the class frequencies are bars with every class named: one bar a
#: row, whose height the figure sets whatever the window's width (a matrix's cells shrink
#: with a narrow window, so it keeps MAX_TICK_LABELS).
MAX_NAMED_BARS = 50
#: Largest figure height (px) any function here returns (per panel, for stacked panels).
MAX_HEIGHT = 900
_TICK_CHARS = 18  # tick labels longer than this are shortened with "…"
_MAX_COLOURED = 20  # at most this many colours in a legend; the rest go grey


# --------------------------------------------------------------------------- helpers


def class_colors(m: int) -> list[str]:
    """One colour per class index, the same in every figure for a given ``m``.

    Parameters
    ----------
    m : int
        Number of classes.

    Returns
    -------
    list of str
        Plotly's 10-colour qualitative palette for ``m <= 10``, the 24-colour
        "Dark24" palette for ``m <= 24``; above that the 24 colours repeat
        (figures with many classes colour only the largest groups).

    Examples
    --------
    >>> class_colors(3)
    ['#636EFA', '#EF553B', '#00CC96']
    """
    from plotly.colors import qualitative

    palette = qualitative.Plotly if m <= 10 else qualitative.Dark24
    return [palette[i % len(palette)] for i in range(m)]


def _dense(a) -> np.ndarray:
    if hasattr(a, "toarray"):  # scipy sparse
        a = a.toarray()
    return np.asarray(a)


def _float_array(a, what: str, ndim: int, *, allow_nan: bool = False) -> np.ndarray:
    arr = _dense(a)
    try:
        arr = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numeric.") from None
    if arr.ndim != ndim:
        raise ValueError(f"{what} must be a {ndim}-D array, got shape {arr.shape}.")
    if allow_nan:
        if np.isinf(arr).any():
            raise ValueError(f"{what} contains infinite values.")
    elif not np.isfinite(arr).all():
        raise ValueError(f"{what} contains NaN or infinite values.")
    return arr


def _square(a, what: str) -> np.ndarray:
    arr = _float_array(a, what, 2)
    if arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise ValueError(f"{what} must be a non-empty square (m, m) matrix, got shape {arr.shape}.")
    return arr


def _names(class_names, m: int) -> list[str]:
    if class_names is None:
        return [str(t) for t in range(m)]
    names = [str(c) for c in class_names]
    if len(names) != m:
        raise ValueError(f"Got {len(names)} class names for {m} classes; they must match.")
    return names


def _unique(names: Sequence[str]) -> list[str]:
    """Category labels: HTML-escaped, and distinct (duplicates get their index)."""
    names = [esc_html(name) for name in names]
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    return [f"{name} [{i}]" if seen[name] > 1 else name for i, name in enumerate(names)]


def _short(name: str, width: int = _TICK_CHARS) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def _tick_texts(labels: Sequence[str], width: int = _TICK_CHARS) -> list[str]:
    """Tick texts for escaped, distinct category labels, distinct again once shortened.

    Names longer than ``width`` characters are cut where the names still differ: one rule for
    all of them when one works (keep the start, both ends, or the end: "label_1…",
    "Emo…_Angry", "…ong_name_017"); otherwise the names still shown alike each keep the window
    where they differ from the others ("Mean…_MFCC_3_of_t…" for names sharing a long prefix
    and a suffix), and any still alike get their position ("… [4]"). The cut is made on
    the text as read, never inside an HTML entity such as ``&amp;``; the full name stays in the
    hover.

    Before any cut, the parts every name has at the same place are written once as "…"
    (:func:`_shared_parts`; the figure's subtitle gives the key, :func:`_shared_key`), so the
    parts that differ stay, wherever they are:

    >>> names = ["Mean_Acc1298_%s_Mem40_MFCC_%d_of_the_second_window" % (s, i)
    ...          for s in ("Mean", "Std") for i in (1, 2)]
    >>> _tick_texts(names, 18)
    ['Mean…Mean…1…', 'Mean…Mean…2…', 'Mean…Std…1…', 'Mean…Std…2…']
    """
    text = [html.unescape(x) for x in labels]
    if all(len(x) <= width for x in text):
        return list(labels)
    # the parts every name has in the same place written once ("…", the key in the figure's
    # subtitle, :func:`_shared_key`): "Mean_Acc1298_Std_…" and "…_Mean_…" were cut alike
    text = _shared_parts(text)[0]

    def cut(x: str, head: int) -> str:
        if len(x) <= width:
            return x
        tail = width - 1 - head
        return x[:head] + "…" + (x[-tail:] if tail else "")

    def alike(short: list[str]) -> int:
        return len(short) - len(set(short))

    styles = [[cut(x, head) for x in text] for head in (width - 1, width // 2, 0)]
    short = min(styles, key=alike)  # the first of the fewest collisions
    if alike(short):
        short = _differing_windows(text, short, width)
    return [esc_html(x) for x in short]


_PART_SEPARATORS = re.compile(r"([_\-./: ]+)")


def _shared_parts(text: Sequence[str]) -> tuple[list[str], list[str]]:
    """Names with every part they all have at the same place (between ``_ - . / :`` or
    spaces) but the first written as "…", runs of them as one, and those shared parts; the
    names as they are and no parts when fewer than two are shared or the shortened names
    would collide.

    >>> names = ["Mean_Acc1298_%s_Mem40_MFCC_%d_of_the_second_window" % (s, i)
    ...          for s in ("Mean", "Std") for i in (1, 2)]
    >>> _shared_parts(names)
    (['Mean…Mean…1…', 'Mean…Mean…2…', 'Mean…Std…1…', 'Mean…Std…2…'], ['Acc1298', 'Mem40', 'MFCC', 'of', 'the', 'second', 'window'])
    """  # noqa: E501
    split = [_PART_SEPARATORS.split(x) for x in text]  # parts at even places, separators odd
    if len(split) < 2:
        return list(text), []
    first = split[0]
    places = range(2, min(len(x) for x in split), 2)  # the first part orients the reader
    shared = {i for i in places if first[i] and all(x[i] == first[i] for x in split)}
    if len(shared) < 2:
        return list(text), []
    out = []
    for parts in split:
        kept, gap = [parts[0]], False
        for i in range(2, len(parts), 2):
            if i in shared:
                gap = True
                continue
            kept += ["…" if gap else parts[i - 1], parts[i]]
            gap = False
        out.append("".join(kept) + ("…" if gap else ""))
    if len(set(out)) < len(set(text)):
        return list(text), []
    return out, [first[i] for i in sorted(shared)]


def _shared_key(labels: Sequence[str], width: int = _TICK_CHARS) -> str:
    """The key to :func:`_tick_texts`' "…" for these labels (escaped), or "" when it used
    none: the parts every name shares."""
    text = [html.unescape(x) for x in labels]
    if all(len(x) <= width for x in text):
        return ""
    parts = _shared_parts(text)[1]
    if not parts:
        return ""
    return esc_html("… in the names: " + _short(" ".join(parts), SUBTITLE_CHARS - 16))


def _differing_windows(text: list[str], short: list[str], width: int) -> list[str]:
    """``short`` with every label shown like another replaced by the window of its name where
    it differs from those others (after a 4-character head that says where the name starts),
    and any still alike numbered by position."""
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(short):
        groups.setdefault(s, []).append(i)
    short = list(short)
    head = min(4, max(width - 8, 0))
    for members in groups.values():
        if len(members) < 2:
            continue
        for i in members:
            x = text[i]
            if len(x) <= width:
                continue
            first = max(
                len(os.path.commonprefix([x, text[j]])) for j in members if j != i
            )  # first character where x differs from the names shown like it
            span = width - head - 2  # "head…window…"
            start = max(head, min(first - span // 2, len(x) - span - 1))
            end = start + span
            short[i] = x[:head] + "…" + x[start:end] + ("…" if end < len(x) else x[end:])
    seen: dict[str, int] = {}
    for s in short:
        seen[s] = seen.get(s, 0) + 1
    suffix = lambda i: f" [{i}]"  # noqa: E731
    return [
        s if seen[s] == 1 else s[: max(width - len(suffix(i)) - 1, 1)] + "…" + suffix(i)
        for i, s in enumerate(short)
    ]


_CHAR_PX = 0.62  # average character width of tick text, in font sizes (generous)


def _tick_px(labels: Sequence[str], font: int) -> float:
    """Generous width (px) of the longest tick label as drawn."""
    longest = max((len(html.unescape(x)) for x in _tick_texts(labels)), default=0)
    return longest * _CHAR_PX * font


def _height(n: int, *, base: int, per: int, lo: int, hi: int = MAX_HEIGHT) -> int:
    return int(min(max(base + per * n, lo), hi, MAX_HEIGHT))


#: Characters per title line: a chart in the dashboard's main column can be ~480 px wide (an
#: 800 px window with the sidebar open), about 56 characters of the title's 17 px font and 80
#: of the subtitle's smaller one.  Plotly does not wrap titles; a longer line is cut off.
TITLE_CHARS, SUBTITLE_CHARS = 56, 80
_TAG = re.compile(r"<[^>]*>")


def _wrapped(text: str, width: int) -> list[str]:
    """``text`` (Plotly's title markup) as lines of at most ``width`` visible characters,
    broken at spaces only, never next to an operator (its own ``<br>`` kept).  A tag never
    spans a space in these titles, so no tag is split; an escaped name's ``&lt;`` counts as
    the one character it shows."""
    lines = []
    for line in text.split("<br>"):
        current, length = [], 0
        for word in _glued(line.split(" ")):
            size = len(html.unescape(_TAG.sub("", word)))
            if current and length + 1 + size > width:
                lines.append(" ".join(current))
                current, length = [], 0
            length += size + (1 if current else 0)
            current.append(word)
        lines.append(" ".join(current))
    return lines


def _legend(title: str, names: Sequence[str]) -> dict:
    """A legend that leaves the plot its width: to the right for a few short names, else in
    rows under the plot (at 800 px, 19 names of 50 characters took 60% of the width and
    left the scatter 120 px wide)."""
    longest = max((len(html.unescape(_TAG.sub("", str(n)))) for n in names), default=0)
    legend: dict = {"title": {"text": title}}
    if longest > 16 or len(names) > 8:
        legend.update(orientation="h", x=0.0, xanchor="left", y=-0.24, yanchor="top", yref="paper")
    return legend


def _legend_px(legend: dict, n_entries: int) -> int:
    """Height to add to a figure whose legend sits under the plot (two entries a row in a
    narrow chart), so that the plot keeps its own height; 0 for a legend at the right."""
    return 22 * ((n_entries + 1) // 2) + 20 if legend.get("orientation") == "h" else 0


#: Words that stay on the line of their neighbours: "π = 0.5", "β ≠ 0" never break.
_OPERATORS = frozenset("= ≠ < > ≤ ≥ → ← × · + − - ~ ≈".split())


def _glued(words: list[str]) -> list[str]:
    """``words`` with every operator joined to the words on both sides of it."""
    out: list[str] = []
    glue = False
    for word in words:
        if out and (glue or word in _OPERATORS):
            out[-1] += " " + word
        else:
            out.append(word)
        glue = word in _OPERATORS
    return out


def _titled(main: str, sub: str | None = None, *, extra: int = 0) -> dict:
    """Layout entries for a left-aligned title (+ smaller subtitle lines), wrapped to fit a
    narrow chart, and a top margin tall enough for all its lines (``extra`` px more, e.g.
    for subplot titles)."""
    lines = _wrapped(main, TITLE_CHARS)
    if sub:
        lines += [f"<sup>{line}</sup>" for line in _wrapped(sub, SUBTITLE_CHARS)]
    return {
        "title": {
            "text": "<br>".join(lines),
            "x": 0.0,
            "xanchor": "left",
            "xref": "container",
            "y": 1.0,
            "yanchor": "top",
            "yref": "container",
            "pad": {"t": 12, "l": 12},
        },
        "margin": {"t": 36 + 19 * len(lines) + extra},
        # the toolbar (shown on hover) a column at the right edge, not a row over the title's
        # end (a two-line title at 1024 px lay under it)
        "modebar": {"orientation": "v"},
    }


def _category_axis(labels: Sequence[str], show: bool, *, title: str | None = None) -> dict:
    """Axis settings for one tick per class (shortened) or none at all."""
    axis: dict = {
        "type": "category",
        "showgrid": False,
        "zeroline": False,
        "automargin": True,
        # a thin frame, so that a panel of mostly exact zeros (drawn white) keeps its shape
        "showline": True,
        "mirror": True,
        "linecolor": "#c8c8c8",
    }
    if title is not None:
        axis["title"] = {"text": title}
    if show:
        axis.update(
            tickmode="array",
            tickvals=list(labels),
            ticktext=_tick_texts(labels),
            tickfont={"size": 11 if len(labels) <= 15 else 9},
        )
    else:
        axis.update(showticklabels=False, ticks="")
    return axis


def _matrix_yaxis(labels, show: bool, *, title: str | None, x: str = "x") -> dict:
    """Rows of a square class-by-class matrix: first class on top, square cells."""
    return {
        **_category_axis(labels, show, title=title),
        "autorange": "reversed",
        "scaleanchor": x,
        "scaleratio": 1,
        "constrain": "domain",
        "constraintoward": "top",
    }


# A figure is made in one go.Figure(data=[...], layout={...}) call: plotly's add_trace,
# add_hline and update_layout each check the whole figure again (174 traces added one by one
# took 0.3 s; the constructor validates the same figure in a few ms).  These are the shapes
# add_hline / add_vline would add.
def _hline(y: float, line: dict) -> dict:
    """A horizontal line across the plot at ``y`` (``fig.add_hline(y, line=line)``)."""
    return {
        "type": "line",
        "xref": "x domain",
        "x0": 0,
        "x1": 1,
        "yref": "y",
        "y0": y,
        "y1": y,
        "line": line,
    }


def _vline(x: float, line: dict) -> dict:
    """A vertical line across the plot at ``x`` (``fig.add_vline(x, line=line)``)."""
    return {
        "type": "line",
        "xref": "x",
        "x0": x,
        "x1": x,
        "yref": "y domain",
        "y0": 0,
        "y1": 1,
        "line": line,
    }


def _tick_note(m: int) -> str:
    return (
        f"{m} classes: tick labels hidden — hover for class names, drag to zoom, "
        "double-click to reset"
    )


def _fmt(x: float) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.3g}"


#: Room (px) right of a square matrix for its vertical colour bar, and the narrowest such chart
#: (its title lines are wrapped for 480 px: TITLE_CHARS).
_MATRIX_BAR_PX, _MATRIX_MIN_WIDTH = 120, 480


def _matrix_layout(title, sub, labels, show_ticks, *, x_title, y_title, height) -> dict:
    """The layout of a square class-by-class heatmap (co-occurrence, confusion, selection),
    for ``go.Figure(data=[...], layout=...)``.

    It has a width of its own, about the square's (its side is the height left by the title
    and the column names) plus the row names and the colour bar: the cells stay square, so in
    a chart as wide as the page the matrix stood centred with its colour bar at the far right
    edge (150 px apart in a 1,300 px window, more on wider ones).  The pages draw it at that
    width, or the column's if narrower (``st.plotly_chart(..., width="content")``).
    """
    if not show_ticks:
        sub += "<br>" + _tick_note(len(labels))
    elif key := _shared_key(labels):
        sub += "<br>" + key
    titled = _titled(title, sub)
    font = 11 if len(labels) <= 15 else 9  # as _category_axis
    # names and axis title left of and below the square (plotly's default margins: 80 px)
    axis_px = max(80.0, (_tick_px(labels, font) if show_ticks else 0.0) + 40.0)
    side = height - titled["margin"]["t"] - axis_px
    # column names flat when each fits its cell, else upright: never Plotly's automatic 30°,
    # at which 19 long names overlapped one another
    flat = show_ticks and _tick_px(labels, font) + 4 <= side / max(len(labels), 1)
    return dict(
        **titled,
        xaxis={
            **_category_axis(labels, show_ticks, title=x_title),
            "constrain": "domain",
            "tickangle": 0 if flat else -90,
        },
        yaxis=_matrix_yaxis(labels, show_ticks, title=y_title),
        plot_bgcolor="white",
        height=height,
        width=max(_MATRIX_MIN_WIDTH, int(axis_px + side + _MATRIX_BAR_PX)),
        dragmode="zoom",
    )
