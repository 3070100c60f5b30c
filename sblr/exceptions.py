"""Exceptions raised by :mod:`sblr`."""


class DataError(ValueError):
    """Input data that sblr cannot use, with a message meant for people.

    Raised by :func:`sblr.load_dataset` for unreadable or malformed files and
    by the estimators for label matrices they cannot learn from.  The message
    says what is wrong and, where possible, how to fix it; the dashboard shows
    it verbatim.
    """
