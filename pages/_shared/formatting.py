"""The sliders' grid, and how values, downloads and file names are written (no Streamlit)."""

from __future__ import annotations

import re

import numpy as np

from sblr.display import duration, fmt_gamma, fmt_value, log_label
from sblr.textsafe import escape_markdown as esc_md
from sblr.textsafe import safe_filename, to_csv_bytes

__all__ = [
    "LOG_GRID",
    "context",
    "context_name",
    "dense_row",
    "duration",
    "esc_md",
    "fmt_corr",
    "fmt_gamma",
    "fmt_value",
    "grid_value",
    "index_value",
    "log_label",
    "nearest_point",
    "result_list_filename",
    "safe_filename",
    "text_table",
    "to_csv_bytes",
]

#: Slider grid: 10^-5 ... 10^2 in quarter decades (the paper's grid is every 4th point).
LOG_GRID = [round(x, 2) for x in np.arange(-5.0, 2.0001, 0.25)]


def index_value(text):
    """A link's class or step number: ASCII digits only, at most six of them, else None.
    (``str.isdigit`` also accepts "²" and "٣", which ``int`` rejects or reads as 3, and
    ``int`` refuses more than 4,300 digits: either crashed every page opened from the link.)

    >>> index_value("3"), index_value("²"), index_value("٣"), index_value("9" * 5000)
    (3, None, None, None)
    """
    return int(text) if re.fullmatch(r"[0-9]{1,6}", text, flags=re.ASCII) else None


def grid_value(log10):
    """The value of a grid point (10^log10)."""
    return float(10.0**log10)


def nearest_point(log10, grid=LOG_GRID):
    """The grid point nearest to ``log10``."""
    return min(grid, key=lambda g: abs(g - log10))


def fmt_share(value):
    """A share as a whole percentage, except that one above 0 never shows as 0%: "<1%" (a
    co-occurrence of 1 beside "0%" reads as a contradiction). Missing: "–"."""
    if value is None or value != value:
        return "–"
    return "<1%" if 0 < value < 0.01 else f"{value:.0%}"


def fmt_corr(r):
    """A correlation to two decimals; one that rounds to zero reads 0.00, never -0.00.

    >>> fmt_corr(-0.004), fmt_corr(0.256)
    ('0.00', '0.26')
    """
    return f"{r:.2f}" if round(r, 2) != 0 else "0.00"


def context(ds, s, **extra):
    """What a download is of: data set, model, γ, λ (and e.g. the evaluation split)."""
    out = {"data": ds.name, "model": s.model, "gamma": fmt_gamma(s.gamma)}
    with_lam = extra.pop("with_lam", False)  # an option, never a line of the context
    if s.spec.l1 or with_lam:
        out["lambda"] = fmt_value(s.lam)
    out.update(extra)
    return out


def context_name(ds, spec, what, *extra, suffix):
    """A download's file name carrying its context: data, what, the model of ``spec`` (a
    :class:`~pages._shared.questions.Spec`), its γ and its λ where it has one."""
    parts = [ds.name, what, spec.model, f"gamma-{fmt_gamma(spec.gamma)}"]
    if spec.lam is not None:
        parts.append(f"lam-{fmt_value(spec.lam)}")
    return safe_filename(*parts, *extra, suffix=suffix)


def dense_row(X, i):
    """Row ``i`` of a dense or sparse feature matrix as a 1-D float array."""
    row = X[i]
    return np.asarray(row.toarray() if hasattr(row, "toarray") else row, dtype=float).ravel()


def text_table(df, *, precision=None, formats=None, na="–"):
    """``df`` as ``st.dataframe`` should show it, its numbers already written as text: the
    float columns with ``precision`` decimals (or by ``formats``, column -> "{:.3f}"), every
    missing value as ``na`` (never "None" or "nan"). What a pandas Styler's ``format`` did,
    at a fraction of its cost: Streamlit marshals a Styler cell by cell, and four such tables
    were half of the Model & metrics page's run (a class of 30 waited for it at the lesson's
    step 2).

    >>> import pandas as pd
    >>> text_table(pd.DataFrame({"f1": [0.5, float("nan")], "n": [3, 4]}), precision=3)
          f1  n
    0  0.500  3
    1      –  4
    """
    import pandas as pd

    formats = dict(formats or {})
    out = df.copy()
    for col in out.columns:
        values = out[col]
        fmt = formats.get(col)
        if fmt is None and precision is not None and values.dtype.kind == "f":
            fmt = f"{{:.{precision}f}}"
        missing = pd.isna(values).to_numpy()
        if fmt is None and not missing.any():
            continue
        out[col] = [
            na if gone else (fmt.format(v) if fmt is not None else str(v))
            for v, gone in zip(values, missing, strict=True)
        ]
    return out


def result_list_filename(data_names) -> str:
    """The file of the session's result list: named after its data set when every row is of
    one, else after how many it holds (it held rows of four data sets under the name of the
    one in use).

    >>> result_list_filename(["birds", "birds"]), result_list_filename(["birds", "yeast"])
    ('birds_result_list.csv', 'result_list_of_2_data_sets.csv')
    """
    distinct = list(dict.fromkeys(str(n) for n in data_names))
    if len(distinct) == 1:
        return safe_filename(distinct[0], "result_list", suffix=".csv")
    return safe_filename(f"result_list_of_{len(distinct)}_data_sets", suffix=".csv")
