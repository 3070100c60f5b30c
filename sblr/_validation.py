"""Parameter validation: the one place sblr imports scikit-learn's private ``_param_validation``.

sblr checks the parameters of its public functions and estimators the scikit-learn way:
``@validate_params({...}, prefer_skip_nested_validation=...)`` on a function,
``_parameter_constraints`` on an estimator, with the constraint classes re-exported here
(``Interval``, ``StrOptions``, ``HasMethods`` ...).  A wrong type or value of a parameter (a
programmer's error) raises :class:`InvalidParameterError`, a subclass of both ``ValueError``
and ``TypeError`` whose message names the parameter and the function.  Bad *data* read from
a user's file raises :class:`sblr.DataError` instead.

``sklearn.utils._param_validation`` is private to scikit-learn and may change between its
releases: every sblr module imports these names from here, so such a change is one file.

Importing this module does not import scikit-learn (about half a second): the dashboard's
start-up imports :mod:`sblr.interpret` and :mod:`sblr.diagnostics` and must not
(``tests/test_startup.py``).  :func:`validate_params` builds scikit-learn's decorator at the
first call of the function it decorates, and its constraints may be given as a function
returning the dict, so that a module imported at start-up builds them only then; the
constraint classes are imported when first asked for (``from sblr._validation import
Interval`` imports scikit-learn; ``_validation.Interval`` inside such a function does so at
the first call).
"""

from __future__ import annotations

import functools
import importlib

#: The names re-exported from scikit-learn's ``sklearn.utils._param_validation``.
_SKLEARN_NAMES = (
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "Options",
    "RealNotInt",
    "StrOptions",
    "validate_parameter_constraints",
)

__all__ = [*_SKLEARN_NAMES, "validate_params"]


def __getattr__(name):
    if name in _SKLEARN_NAMES:
        module = importlib.import_module("sklearn.utils._param_validation")
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def validate_params(parameter_constraints, *, prefer_skip_nested_validation):
    """scikit-learn's ``validate_params``, built at the decorated function's first call.

    Parameters
    ----------
    parameter_constraints : dict or callable
        ``{parameter: [constraints]}`` as scikit-learn takes it (every parameter listed;
        ``"no_validation"`` for one checked elsewhere), or a function of no arguments
        returning it (called once, at the first call).
    prefer_skip_nested_validation : bool
        True when the function calls other validated functions with arguments it has
        checked; False when it takes an estimator whose own ``fit`` must still check its
        parameters.

    The decorated function keeps the constraints in ``parameter_constraints()`` (for
    tests) and the undecorated one in ``__wrapped__``.
    """

    def constraints():
        if callable(parameter_constraints):
            return parameter_constraints()
        return parameter_constraints

    def decorator(func):
        validated = None

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            nonlocal validated
            if validated is None:
                # lazy: scikit-learn (about 1 s) at the first call, not at import: the
                # dashboard's first page imports modules that validate their parameters
                from sklearn.utils._param_validation import validate_params as sklearn_validate

                validated = sklearn_validate(
                    constraints(), prefer_skip_nested_validation=prefer_skip_nested_validation
                )(func)
            return validated(*args, **kwargs)

        wrapper.parameter_constraints = constraints
        wrapper.prefer_skip_nested_validation = prefer_skip_nested_validation
        return wrapper

    return decorator
