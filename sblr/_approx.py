"""When evidence is approximated: :data:`AUTO_APPROX_ROWS` and :func:`resolve_approx`.

Both are part of :mod:`sblr.similarity` (imported from there); they live in
this module without scikit-learn so that the dashboard's first page can say
whether the models approximate without importing scikit-learn (and with it
scipy.stats), which takes seconds.
"""

from __future__ import annotations

#: Training-set size from which a caller should switch to approximate evidence
#: (``approx="nystroem"``); ``approx="auto"``, the default of the featurizer and
#: of every classifier, does so from this many training rows on (rbf kernel).  Exact evidence costs
#: O(n_query * n_train * d) time, so leave-one-out evidence of n training rows
#: is quadratic in n: at 20,000 rows it is 4e8 kernel values per pass (seconds),
#: at 200,000 rows 4e10 (many minutes).  Approximate evidence costs
#: O(n * D * (d + m)) with ``D = n_components``.  Below this size exact evidence
#: is fast enough and has no approximation error, so keep it.  See
#: :func:`resolve_approx`.
AUTO_APPROX_ROWS = 20_000


def resolve_approx(approx, kernel, n_train, threshold=AUTO_APPROX_ROWS):
    """The evidence mode actually used: ``None`` (exact), ``"nystroem"`` or ``"rff"``.

    ``"auto"`` means Nystroem from ``threshold`` (:data:`AUTO_APPROX_ROWS`)
    training rows on with the rbf kernel, exact evidence otherwise; any other
    value is returned as it is.

    Examples
    --------
    >>> resolve_approx("auto", "rbf", 1_000), resolve_approx("auto", "rbf", 200_000)
    (None, 'nystroem')
    >>> resolve_approx("rff", "rbf", 10), resolve_approx("auto", "laplacian", 200_000)
    ('rff', None)
    """
    if approx != "auto":
        return approx
    return "nystroem" if kernel == "rbf" and int(n_train) >= threshold else None
