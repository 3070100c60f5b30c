"""How the dashboard, its figures and its report write γ and λ: one notation everywhere.

The sliders move on quarter decades (10^-5, 10^-4.75, ...), so a value is written as the
slider writes it: ``1e-3`` at a whole decade, ``5.6e-4`` between (two digits; "1e-3.25" is
no number notation).  A value off that grid (a library user's own λ) keeps three digits.
"""

from __future__ import annotations

import math

__all__ = ["fmt_value", "log_label"]


def log_label(log10):
    """A point of the slider grid, given by its log10, as the sliders write it.

    Examples
    --------
    >>> log_label(-3.0), log_label(-3.25), log_label(0.5)
    ('1e-3', '5.6e-4', '3.2e0')
    """
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
    """
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        return f"{value:g}"
    quarters = math.log10(value) * 4
    if abs(quarters - round(quarters)) < 1e-9:
        return log_label(round(quarters) / 4)
    exponent = math.floor(math.log10(value))
    mantissa = value / 10.0**exponent
    if round(mantissa, 2) >= 10:  # 9.996e-3 rounds up to the next decade
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.3g}e{exponent}"
