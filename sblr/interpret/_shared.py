"""What the interpret modules share: parameter constraints and the checks of their inputs.

Parameter constraints (sblr._validation) are given as functions: the dashboard imports these
modules at start-up, before scikit-learn, which builds them at the first call.  A model argument
is duck-typed (a fitted sblr model, or anything with its attributes, e.g. a SimpleNamespace):
"no_validation", its attributes are checked where they are read.  Indices get their upper bound
(the number of classes) from the data, in ``checked_index``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from sblr import _validation
from sblr.exceptions import DataError

__all__ = [
    "MODEL_PARAM",
    "NAMES_PARAM",
    "between_param",
    "checked_index",
    "class_name_list",
    "coef_of",
    "count_param",
    "dense_array",
    "index_param",
]


# Parameter constraints (sblr._validation), given as functions: the dashboard imports this
# module at start-up, before scikit-learn, which builds them at the first call.  A model
# argument is duck-typed (a fitted sblr model, or anything with its attributes, e.g. a
# SimpleNamespace): "no_validation", its attributes are checked where they are read.
# Indices get their upper bound (the number of classes) from the data, in checked_index.
MODEL_PARAM = "no_validation"


NAMES_PARAM = ["array-like", None]


def index_param():
    return [_validation.Interval(Integral, 0, None, closed="left")]


def count_param():
    return [_validation.Interval(Integral, 1, None, closed="left")]


def between_param(left, right, closed):
    return [_validation.Interval(Real, left, right, closed=closed)]


def dense_array(a) -> np.ndarray:
    if hasattr(a, "toarray"):  # scipy sparse
        a = a.toarray()
    return np.asarray(a)


def checked_index(k, m: int, what: str = "k") -> int:
    if isinstance(k, bool | np.bool_) or not isinstance(k, int | np.integer):
        raise DataError(f"{what} must be an integer class index in [0, {m - 1}], got {k!r}.")
    k = int(k)
    if not 0 <= k < m:
        raise DataError(
            f"{what}={k} is out of range: there are {m} classes, so it must be in [0, {m - 1}]."
        )
    return k


def class_name_list(class_names, m: int, fallback=None) -> list[str]:
    source = class_names if class_names is not None else fallback
    if source is None:
        return [str(t) for t in range(m)]
    names = [str(c) for c in source]
    if len(names) != m:
        raise DataError(f"Got {len(names)} class names for {m} classes; they must match.")
    return names


def coef_of(model_or_coef, what: str = "model") -> np.ndarray:
    coef = getattr(model_or_coef, "coef_", model_or_coef)
    coef = dense_array(coef).astype(float)
    if coef.ndim != 2 or coef.shape[0] != coef.shape[1] or coef.shape[0] == 0:
        raise DataError(
            f"{what} coefficients must be a non-empty square (m, m) matrix, got shape {coef.shape}."
        )
    return coef
