"""How the dashboard, its figures and its report write γ, λ and label sets: one notation
everywhere.

The sliders move on quarter decades (10^-5, 10^-4.75, ...), so a value is written as the
slider writes it: ``1e-3`` at a whole decade, ``5.6e-4`` between (two digits; "1e-3.25" is
no number notation), and from 1 on as a plain number (``1``, ``3.2``, ``18``, ``100``).  A
value off that grid (a library user's own λ) keeps three digits.
"""

from __future__ import annotations

import math

__all__ = [
    "duration",
    "fmt_gamma",
    "fmt_number",
    "fmt_value",
    "label_set",
    "log_label",
    "settings_label",
]

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt_number(value) -> str:
    """A statistic for a reader (a VIF, a condition number): three significant digits with
    thousands separators, "× 10ⁿ" only from a million on or below 0.001, never "2.87e+05".

    Examples
    --------
    >>> fmt_number(287034.2), fmt_number(38.46), fmt_number(2.5e12), fmt_number(0.00012)
    ('287,000', '38.5', '2.5 × 10¹²', '1.2 × 10⁻⁴')
    """
    value = float(value)
    if not math.isfinite(value):
        return "∞" if value > 0 else "−∞" if value < 0 else "–"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e6:
        decimals = 2 - math.floor(math.log10(magnitude))  # three significant digits
        rounded = round(value, decimals)
        if decimals <= 0:
            return f"{rounded:,.0f}"
        return f"{rounded:,.{decimals}f}".rstrip("0").rstrip(".")
    exponent = math.floor(math.log10(magnitude))
    mantissa = value / 10.0**exponent
    if round(abs(mantissa), 1) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.2g} × 10" + str(exponent).translate(_SUPERSCRIPT)


def log_label(log10):
    """A point of the slider grid, given by its log10, as the sliders write it.

    Examples
    --------
    >>> log_label(-3.0), log_label(-3.25), log_label(0.0), log_label(0.5), log_label(2.0)
    ('1e-3', '5.6e-4', '1', '3.2', '100')
    """
    if log10 >= 0:  # 1, 3.2, 10, 100: plain numbers read better than "1e0" (a walkthrough)
        value = 10.0**log10
        return f"{value:.0f}" if value >= 9.95 else f"{value:.2g}"
    if log10 == round(log10):
        return f"1e{int(round(log10))}"
    exponent = math.floor(log10)
    mantissa = 10.0 ** (log10 - exponent)
    return f"{mantissa:.2g}e{exponent}"


def fmt_value(value):
    """A positive γ or λ as the sliders write it (``1e-2``, ``5.6e-4``); off their quarter-decade
    grid, three digits in the same notation (``3.45e-3``).

    Examples
    --------
    >>> fmt_value(0.001), fmt_value(10**-3.25), fmt_value(0.00345), fmt_value(0.0)
    ('1e-3', '5.6e-4', '3.45e-3', '0')
    >>> fmt_value(1.0), fmt_value(3.0), fmt_value(12.5)
    ('1', '3', '12.5')
    """
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        return f"{value:g}"
    quarters = math.log10(value) * 4
    if abs(quarters - round(quarters)) < 1e-9:
        return log_label(round(quarters) / 4)
    if value >= 1:
        return f"{value:.3g}"
    exponent = math.floor(math.log10(value))
    mantissa = value / 10.0**exponent
    if round(mantissa, 2) >= 10:  # 9.996e-3 rounds up to the next decade
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.3g}e{exponent}"


def label_set(names, relevant) -> str:
    """A set of classes as every table writes it (predictions, label sets): the names of the
    ``relevant`` ones (a 0/1 or boolean row) joined by "; ", "(none)" for the empty set.

    >>> label_set(["a", "b", "c"], [1, 0, 1]), label_set(["a", "b"], [0, 0])
    ('a; c', '(none)')
    """
    return "; ".join(str(n) for n, hit in zip(names, relevant, strict=True) if hit) or "(none)"


def fmt_gamma(gamma) -> str:
    """γ as the sidebar writes it: "scale" (the median heuristic, resolved by the fit) or a
    value as :func:`fmt_value` writes it.

    >>> fmt_gamma("scale"), fmt_gamma(0.01)
    ('scale', '1e-2')
    """
    return "scale" if isinstance(gamma, str) and gamma == "scale" else fmt_value(gamma)


#: The symbols of the hyper-parameters as pages, tables and figures write them.
SYMBOLS = {"gamma": "γ", "lam": "λ", "C": "C", "k": "k"}


def settings_label(gamma=None, lam=None, **others) -> str:
    """A model's settings as every page writes them: "γ = scale, λ = 1e-4", each value as
    the sliders write it; one left None is left out (a model without λ), ``others`` (C)
    follow.

    >>> settings_label("scale", 1e-4), settings_label(0.1), settings_label(lam=1e-5)
    ('γ = scale, λ = 1e-4', 'γ = 1e-1', 'λ = 1e-5')
    >>> settings_label(gamma=1.0, C=10.0)
    'γ = 1, C = 10'
    """
    values = {"gamma": gamma, "lam": lam, **others}
    return ", ".join(
        f"{SYMBOLS.get(name, name)} = {fmt_gamma(v) if name == 'gamma' else fmt_value(v)}"
        for name, v in values.items()
        if v is not None
    )


def duration(seconds) -> str:
    """Seconds as the dashboard and the command line say them: "4.2 s", "31 s", "3 min",
    "1.8 h".

    Examples
    --------
    >>> duration(4.23), duration(31.4), duration(185), duration(6561)
    ('4.2 s', '31 s', '3 min', '1.8 h')
    """
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"
