"""Exceptions raised by :mod:`sblr`."""


class DataError(ValueError):
    """Input data that sblr cannot use, with a message meant for people.

    Raised by :func:`sblr.load_dataset` for unreadable or malformed files and
    by the estimators for label matrices they cannot learn from.  The message
    says what is wrong and, where possible, how to fix it; the dashboard shows
    it verbatim.
    """


class UnsupportedModelError(ValueError):
    """The fitted model's configuration does not support the requested computation.

    For example feature attributions (:func:`sblr.attribution.feature_attributions`)
    of a model with another kernel than rbf, whose gradient is not available in
    closed form.  The message names the setting and what would work.
    """
