"""Feature attributions: which input features move one class's logit for one row.

The waterfall of :func:`sblr.interpret.instance_contributions` splits class k's
logit into one term per evidence class.  Here the same logit is split into one
term per INPUT feature, exactly for the fitted model, by integrated gradients
(Sundararajan, Taly & Yan, 2017) along the straight line from a baseline row
``x'`` to the row ``x``::

    a_i = (x_i - x'_i) * integral_0^1  d logit_k / d x_i (x' + alpha (x - x')) d alpha

The attributions add up to ``logit_k(x) - logit_k(x')`` (completeness); a
feature with the same value in ``x`` and ``x'`` gets exactly 0.

Why this can be exact here.  On the scaled rows ``s`` (features mapped to
[-1, 1] by an affine map fitted on the training data), the logit of every model
of this package with the rbf kernel is a weighted sum of Gaussians::

    logit_k(s) = c + sum_j w_j exp(-gamma ||s - z_j||^2),
    w_j = sum_t beta_t^k Y_jt / n_t                       (exact evidence),

with ``z_j`` the scaled training rows (a Nystroem model: its landmarks, and the
weights through its normalization), so its gradient is closed form,
``-2 gamma sum_j w_j exp(...) (s - z_j)``.  Along the path
``s(alpha) = s' + alpha delta`` the squared distance to ``z_j`` is the quadratic
``A_j + 2 alpha B_j + alpha^2 C`` with ``C = ||delta||^2`` the same for every
``j``: every term is a Gaussian in alpha of width ``1 / sqrt(gamma C)``, and the
two integrals the attributions need, ``int_0^1 K_j`` and ``int_0^1 alpha K_j``, are
closed form through erf (``erfcx`` where the path stays on one side of ``z_j``, so
nothing cancels).  On a short path (``gamma C < 1``, every Gaussian wider than the
path) 16 Gauss-Legendre nodes take them to rounding instead.  Either way the
attributions add up to the difference of the logits to rounding
(:attr:`FeatureAttribution.gap` reports it), and the cost is O(n d) for n
training rows whatever the row's values: a value of 1e6 costs what the row's own
value does (the quadrature this replaced asked for segments in proportion to
``sqrt(gamma C)``: minutes of CPU and gigabytes for one what-if value).  No (n, n)
matrix is formed.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import erf, erfcx
from sklearn.utils.validation import check_is_fitted

from sblr._validation import Interval, validate_params
from sblr.exceptions import DataError, UnsupportedModelError
from sblr.similarity import normalize_evidence, with_total

# Parameter constraints (sblr._validation).  The model is checked where it is read (a fitted
# sblr model with an rbf featurizer_, else UnsupportedModelError); class and row indices get
# their upper bound from it.
_MODEL = "no_validation"
_INDEX = [Interval(Integral, 0, None, closed="left")]

#: Gauss-Legendre nodes on a short path.
_NODES_PER_SEGMENT = 16
#: ``gamma ||delta||^2`` from which the path integrals are taken in closed form.  Below it
#: every Gaussian along the path is at least as wide as the path (width ``1 / r``, r < 1)
#: and 16 Gauss-Legendre nodes integrate it to rounding; from it on, the erf form has no
#: cancellation (``_path_integrals_closed_form``).
_CLOSED_FORM_FROM = 1.0
#: Values held at once in a block of training rows (rows x features): 32 MiB.
_BLOCK_VALUES = 2**22


@dataclass(frozen=True)
class FeatureAttribution:
    """Integrated-gradients attribution of one row's class-k output to its features.

    Attributes
    ----------
    attributions : ndarray of shape (n_features,)
        ``a_i``; they add up to ``output - output_baseline`` (up to :attr:`gap`).
    x, baseline : ndarray of shape (n_features,)
        The row and the baseline row, in the data's own units.
    output, output_baseline : float
        The attributed quantity at ``x`` and at the baseline: class k's logit
        (SBLR, SparseSBLR) or its evidence (SML, see :func:`feature_attributions`).
    k : int
        Class index.
    quantity : str
        ``"logit"`` or ``"evidence"``.
    gap : float
        ``attributions.sum() - (output - output_baseline)``: the rounding error.
    n_nodes : int
        Gauss-Legendre nodes used along a short path; 0 when the path integrals
        were taken in closed form.
    feature_names : list of str or None
    scaled_change : ndarray of shape (n_features,) or None
        ``x - baseline`` on the scaled features (each training range mapped to
        a width of 2), for ordering features whose attributions tie.
    """

    attributions: np.ndarray
    x: np.ndarray
    baseline: np.ndarray
    output: float
    output_baseline: float
    k: int
    quantity: str
    gap: float
    n_nodes: int
    feature_names: list | None = None
    scaled_change: np.ndarray | None = None

    def top(self, n=10) -> np.ndarray:
        """Indices of the ``n`` features with the largest ``|attribution|``.

        Ties (e.g. all 0, when the output does not depend on the row) go to the
        feature that differs most from the baseline on the scaled features
        (:attr:`scaled_change`), then to the lower index.
        """
        change = (
            np.zeros_like(self.attributions)
            if self.scaled_change is None
            else np.abs(self.scaled_change)
        )
        order = np.lexsort((np.arange(change.shape[0]), -change, -np.abs(self.attributions)))
        return order[: max(0, int(n))]

    def table(self, n=None) -> pd.DataFrame:
        """One row per feature, largest ``|attribution|`` first.

        Columns ``feature`` (name, or ``"x<i>"``), ``i`` (column index),
        ``value`` (in ``x``), ``baseline``, ``attribution`` and ``share``
        (``|attribution|`` over the sum of all ``|attribution|``; 0 when all
        are 0).  ``n`` keeps the first ``n`` rows.
        """
        d = self.attributions.shape[0]
        idx = self.top(d if n is None else n)
        names = self.feature_names or [f"x{i}" for i in range(d)]
        total = float(np.abs(self.attributions).sum())
        a = self.attributions[idx]
        return pd.DataFrame(
            {
                "feature": [str(names[i]) for i in idx],
                "i": idx,
                "value": self.x[idx],
                "baseline": self.baseline[idx],
                "attribution": a,
                "share": np.abs(a) / total if total > 0 else np.zeros(len(idx)),
            }
        )


@validate_params(
    {
        "model": _MODEL,
        "x": ["array-like"],
        "k": _INDEX,
        "baseline": ["array-like", None],
        "leave_out": _INDEX + [None],
        "feature_names": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def feature_attributions(
    model, x, k, *, baseline=None, leave_out=None, feature_names=None
) -> FeatureAttribution:
    """Attribute class ``k``'s output for the row ``x`` to its features (integrated gradients).

    SBLR and SparseSBLR: the output is the logit ``beta_0^k + sum_t beta_t^k
    f̄_t(x)`` (:meth:`~sblr.SBLRClassifier.logits`).  SML has no logit: the
    output is its evidence ``f_k(x)`` for the class (:meth:`~sblr.SMLClassifier.evidence`,
    sums or means as the model's ``normalize``), the score SML ranks classes by.
    Exact up to rounding (module docstring), at the cost of one prediction
    whatever ``x`` holds; rbf kernel, exact or Nystroem evidence.

    Parameters
    ----------
    model : fitted SMLClassifier, SBLRClassifier or SparseSBLRClassifier
    x : array-like of shape (n_features,)
        The row, in the data's own units.
    k : int
        Class index (column of ``coef_``).
    baseline : array-like of shape (n_features,), optional
        The reference row ``x'``; default the mean of the training rows.
    leave_out : int, optional
        ``x`` is the training row with this index, explained as the model saw
        it in training: the row's own similarity is left out of the evidence
        along the whole path (so ``output`` is its leave-one-out logit).
    feature_names : sequence of str, optional
        For :meth:`FeatureAttribution.table`.

    Returns
    -------
    FeatureAttribution

    Raises
    ------
    UnsupportedModelError
        Another kernel than rbf, random Fourier features, or a model without
        a featurizer.
    DataError
        ``x`` or ``baseline`` of the wrong length or not finite, or so far from
        the training range (around 1e150 training ranges) that the path's length
        overflows.

    Examples
    --------
    >>> import numpy as np
    >>> from sblr import SBLRClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)
    >>> model = SBLRClassifier(gamma=1.0).fit(X, y)
    >>> fa = feature_attributions(model, X[0], 1)
    >>> logit = model.logits(X[:1])[0, 1] - model.logits(fa.baseline[None, :])[0, 1]
    >>> bool(abs(fa.attributions.sum() - logit) < 1e-9)    # completeness
    True
    >>> int(fa.top(1)[0])   # the feature the classes differ in
    0
    """
    check_is_fitted(model)
    f = getattr(model, "featurizer_", None)
    if f is None:
        raise UnsupportedModelError("The model has no fitted featurizer_ (an sblr model).")
    d = f.n_features_in_
    m = f.Y_fit_.shape[1]
    k = int(k)
    if not 0 <= k < m:
        raise DataError(f"k must be a class index in 0 … {m - 1}; got {k}.")
    x = _row(x, d, "x")
    if leave_out is not None:
        leave_out = int(leave_out)
        if not 0 <= leave_out < f.Y_fit_.shape[0]:
            raise DataError(
                f"leave_out must be a training row in 0 … {f.Y_fit_.shape[0] - 1}; got {leave_out}."
            )
    z_base = _scaled_mean(f) if baseline is None else None
    baseline = _unscale(f, z_base) if baseline is None else _row(baseline, d, "baseline")
    s_x = _scale(f, x)
    s_b = z_base if z_base is not None else _scale(f, baseline)
    quantity = "evidence" if getattr(model, "coef_", None) is None else "logit"
    if quantity == "logit" and f.normalize == "log_rate":
        centres, W, offset, const, sizes = _rate_expansion(model, f, k, leave_out)
        beta = np.asarray(model.coef_[k], dtype=np.float64)
        values, out_x, out_b, gap, n_nodes = _integrate_log_rate(
            centres, W, offset, sizes, beta, const, f.gamma_, s_b, s_x
        )
    else:
        centres, w, const = _expansion(model, f, k, leave_out)
        values, out_x, out_b, gap, n_nodes = _integrate(centres, w, const, f.gamma_, s_b, s_x)
    return FeatureAttribution(
        attributions=values,
        x=x,
        baseline=baseline,
        output=out_x,
        output_baseline=out_b,
        k=k,
        quantity=quantity,
        gap=gap,
        n_nodes=n_nodes,
        feature_names=None if feature_names is None else [str(n) for n in feature_names],
        scaled_change=s_x - s_b,
    )


@validate_params(
    {
        "model": _MODEL,
        "x": ["array-like"],
        "k": _INDEX,
        "member": ["boolean", None],
        "among": ["array-like", None],
        "exclude": _INDEX + [None],
    },
    prefer_skip_nested_validation=True,
)
def nearest_contrast(model, x, k, *, member=None, among=None, exclude=None):
    """The training row most similar to ``x`` whose membership of class ``k`` is the other.

    A baseline on the data, for :func:`feature_attributions`: the credits then
    answer "why does this row's logit for k differ from that of the nearest row
    that does (not) have k?".  The training mean can lie where no data is (the
    mean of angles on a circle is its centre), and the logit there says little.

    Parameters
    ----------
    model : fitted sblr model (its ``featurizer_``)
    x : array-like of shape (n_features,)
        The row, in the data's own units.
    k : int
        Class index.
    member : bool, optional
        Whether the row itself belongs to class k; the contrast row does not
        (``member=False``: it does).  Membership by the training labels.
    among : array-like of bool of shape (n_train,), optional
        Instead of ``member``: the training rows a contrast may be, e.g. those the
        model decides the other way for k than for ``x`` (the other side of the
        model's decision rather than of the labels).
    exclude : int, optional
        A training row never chosen (the row itself, when ``x`` is one).

    Returns
    -------
    int or None
        Index of the nearest training row (squared Euclidean distance on the
        scaled features, as the rbf kernel measures it; ties: the lowest
        index), or None when no training row has the other membership.

    Examples
    --------
    >>> import numpy as np
    >>> from sblr import SMLClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> model = SMLClassifier(gamma=1.0).fit(X, y)
    >>> nearest_contrast(model, X[0], 1, member=False, exclude=0)   # nearest row of class 1
    2
    """
    check_is_fitted(model)
    f = model.featurizer_
    x = _row(x, f.n_features_in_, "x")
    if (member is None) == (among is None):
        raise TypeError("Give exactly one of member= and among=.")
    if among is not None:
        other = np.array(among, dtype=bool).reshape(-1)
        if other.shape != (f.Y_fit_.shape[0],):
            raise DataError(
                f"among must have one entry per training row ({f.Y_fit_.shape[0]}); "
                f"got {other.shape[0]}."
            )
    else:
        other = np.asarray(f.Y_fit_[:, int(k)], dtype=bool) != bool(member)
    if exclude is not None:
        other[int(exclude)] = False
    candidates = np.flatnonzero(other)
    if candidates.size == 0:
        return None
    Z = f.X_fit_[candidates]
    s = _scale(f, x)
    z_sq = (
        np.asarray(Z.multiply(Z).sum(axis=1)).reshape(-1) if sp.issparse(Z) else (Z * Z).sum(axis=1)
    )
    dist = z_sq - 2.0 * np.asarray(Z @ s).reshape(-1)  # + ||s||^2, the same for all
    return int(candidates[np.argmin(dist)])


#: Work of :func:`class_feature_importance` in training-row × feature products (each row
#: attributed costs one pass over the training rows): about 2 s on this project's 2-core
#: machine; fewer rows are sampled on larger data, never fewer than ``_MIN_IMPORTANCE_ROWS``.
_IMPORTANCE_BUDGET = 2e9
_MIN_IMPORTANCE_ROWS = 20


@validate_params(
    {
        "model": _MODEL,
        "X": ["array-like", "sparse matrix"],
        "k": _INDEX,
        "n_rows": [Interval(Integral, 1, None, closed="left")],
        "feature_names": ["array-like", None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def class_feature_importance(
    model, X, k, *, n_rows=200, feature_names=None, random_state=0
) -> pd.DataFrame:
    """Which input features matter for class ``k`` over the data: the mean ``|a_i|`` of the
    integrated-gradients attributions of a seeded sample of rows, each walked from the
    training mean (:func:`feature_attributions`; training rows as in training, their own
    similarity left out).

    Where :func:`feature_attributions` answers "why this row", this answers "which features
    move class k's logit (SML: its evidence) across the rows", the global view of an
    explainer.  The sample is ``n_rows`` rows, fewer on large data so that the work stays
    within about ``_IMPORTANCE_BUDGET`` row-feature products (``attrs["n_rows"]`` says how
    many were used).

    Parameters
    ----------
    model : fitted SMLClassifier, SBLRClassifier or SparseSBLRClassifier (rbf kernel)
    X : array-like or sparse matrix of shape (n_train, n_features)
        The model's training rows, in the data's own units.
    k : int
    n_rows : int, default 200
    feature_names : sequence of str, optional
    random_state : int, default 0

    Returns
    -------
    pandas.DataFrame
        One row per feature, most important first: ``feature``, ``i``, ``mean_abs``
        (mean |a_i|), ``mean`` (mean signed a_i: + raises k on average), ``share``
        (``mean_abs`` over its sum; 0 when all are 0).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = (X[:, 1] > 0).astype(int)
    >>> from sblr import SBLRClassifier
    >>> model = SBLRClassifier(gamma=1.0).fit(X, y)
    >>> class_feature_importance(model, X, 1, n_rows=30)["feature"].iloc[0]
    'x1'
    """
    check_is_fitted(model)
    f = model.featurizer_
    n, d = f.Y_fit_.shape[0], f.n_features_in_
    if X.shape != (n, d):
        raise DataError(
            f"X must be the model's {n} training rows of {d} features; got shape {X.shape}."
        )
    affordable = int(_IMPORTANCE_BUDGET // max(1, n * d))
    n_rows = int(min(n, max(_MIN_IMPORTANCE_ROWS, min(int(n_rows), affordable))))
    rows = np.sort(np.random.default_rng(random_state).choice(n, size=n_rows, replace=False))
    total = np.zeros(d)
    signed = np.zeros(d)
    for r in rows:
        x = np.asarray(X[r].toarray() if sp.issparse(X) else X[r], dtype=np.float64).ravel()
        a = feature_attributions(model, x, k, leave_out=int(r)).attributions
        total += np.abs(a)
        signed += a
    mean_abs, mean = total / n_rows, signed / n_rows
    order = np.lexsort((np.arange(d), -mean_abs))
    names = [str(v) for v in feature_names] if feature_names is not None else None
    names = names or [f"x{i}" for i in range(d)]
    overall = mean_abs.sum()
    table = pd.DataFrame(
        {
            "feature": [names[i] for i in order],
            "i": order,
            "mean_abs": mean_abs[order],
            "mean": mean[order],
            "share": mean_abs[order] / overall if overall > 0 else np.zeros(d),
        }
    )
    table.attrs["n_rows"] = n_rows
    return table


@dataclass(frozen=True)
class FeatureInputs:
    """What values each feature can take in the training data, for a what-if editor.

    Attributes
    ----------
    low, high : ndarray of shape (n_features,)
        Each column's training minimum and maximum.
    binary : ndarray of bool, shape (n_features,)
        Columns whose training values are all 0 or 1 (a flag: a checkbox, not 0.5).
    groups : list of (str, list of int)
        One-hot groups: columns named ``"<attr>=<value>"`` with the same ``attr``, all
        0/1, and exactly one of them 1 in every training row (how the loader encodes a
        nominal column): one choice, never two at once.
    group_of : ndarray of int, shape (n_features,)
        Index into ``groups`` of each column, -1 when it is in none.
    """

    low: np.ndarray
    high: np.ndarray
    binary: np.ndarray
    groups: list
    group_of: np.ndarray

    def outside(self, x) -> np.ndarray:
        """Indices of the features of ``x`` outside their training range."""
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        return np.flatnonzero((x < self.low) | (x > self.high))


@validate_params(
    {"X": ["array-like", "sparse matrix"], "feature_names": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def feature_inputs(X, feature_names=None) -> FeatureInputs:
    """The training range, 0/1 flags and one-hot groups of the columns of ``X``.

    Examples
    --------
    >>> X = np.array([[0, 1, 0, 2.5], [1, 0, 1, -1.0], [0, 0, 1, 4.0]])
    >>> fi = feature_inputs(X, ["c=red", "c=blue", "wet", "t"])
    >>> fi.binary.tolist(), fi.groups
    ([True, True, True, False], [])
    >>> X = np.array([[1, 0, 0, 2.5], [0, 1, 1, -1.0], [0, 1, 0, 4.0]])
    >>> fi = feature_inputs(X, ["c=red", "c=blue", "wet", "t"])
    >>> fi.groups, fi.group_of.tolist(), fi.outside([1, 0, 0, 9.0]).tolist()
    ([('c', [0, 1])], [0, 0, -1, -1], [3])
    """
    if sp.issparse(X):
        X = sp.csc_matrix(X)
        low = np.asarray(X.min(axis=0).toarray()).reshape(-1).astype(np.float64)
        high = np.asarray(X.max(axis=0).toarray()).reshape(-1).astype(np.float64)
        nonbinary = np.zeros(X.shape[1], dtype=bool)
        for j in range(X.shape[1]):
            v = X.data[X.indptr[j] : X.indptr[j + 1]]
            nonbinary[j] = bool(((v != 0) & (v != 1)).any())
        binary = ~nonbinary
    else:
        X = np.asarray(X, dtype=np.float64)
        low, high = X.min(axis=0), X.max(axis=0)
        binary = ((X == 0) | (X == 1)).all(axis=0)
    d = X.shape[1]
    names = [str(n) for n in feature_names] if feature_names is not None else [""] * d
    by_attr: dict = {}
    for j, name in enumerate(names):
        if binary[j] and "=" in name:
            by_attr.setdefault(name.split("=", 1)[0], []).append(j)
    groups = []
    group_of = np.full(d, -1, dtype=int)
    for attr, cols in by_attr.items():
        if len(cols) < 2:
            continue
        sums = np.asarray(X[:, cols].sum(axis=1)).reshape(-1)
        if (sums == 1).all():
            group_of[cols] = len(groups)
            groups.append((attr, cols))
    return FeatureInputs(low, high, binary, groups, group_of)


def _row(v, d, what):
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    if v.shape != (d,):
        raise DataError(f"{what} must have one value per feature ({d}); got {v.shape[0]}.")
    if not np.isfinite(v).all():
        raise DataError(f"{what} holds NaN or inf; every feature needs a finite value.")
    return v


def _scale(f, v):
    s = np.asarray(f.scale(v[None, :]), dtype=np.float64).reshape(-1)
    if not np.isfinite(s).all():
        raise DataError("A value is so far outside the training range that scaling overflows.")
    return s


def _scaled_mean(f):
    return np.asarray(f.X_fit_.mean(axis=0), dtype=np.float64).reshape(-1)


def _unscale(f, s):
    """Data units of a scaled row (for display: the inverse of :meth:`scale`)."""
    lo, hi = f.data_min_, f.data_max_
    with np.errstate(over="ignore", invalid="ignore"):
        half = (hi - lo) / 2.0
        x = s * half if f.sparse_input_ else lo + (s + 1.0) * half
    return np.where(hi > lo, x, lo if not f.sparse_input_ else 0.0)


def _supported(f):
    if not (isinstance(f.kernel, str) and f.kernel == "rbf"):
        raise UnsupportedModelError(
            f"Feature attributions need the rbf kernel (closed-form gradient); the model uses "
            f"kernel={f.kernel!r}."
        )
    if f.approx_ not in (None, "nystroem"):
        raise UnsupportedModelError(
            f"Feature attributions work with exact or Nystroem evidence; the model uses "
            f"approx={f.approx_!r}."
        )


def _rate_expansion(model, f, k, leave_out):
    """``(centres, W, offset, const, sizes)`` of a model on log rates: ``S(s) = exp(-gamma
    ||s - centres||^2) @ W - offset`` holds the class sums and, last, the total over every
    training row, a left-out row's own term replaced by an average row's as
    :func:`sblr.similarity.normalize_evidence` does (a share ``1 / (n - 1)`` of the total,
    for the row's classes and the total: still a sum of Gaussians); class k's logit is
    ``const + beta . max(log(S_t / S_total), floor)``; ``sizes`` the full row counts (class
    sizes, then n), whose rates a row with no evidence gets."""
    _supported(f)
    Y = with_total(np.asarray(f.Y_fit_, dtype=np.float64), "log_rate")
    sizes = Y.sum(axis=0)
    const = float(model.intercept_[k])
    if f.approx_ is None:
        centres, W, offset = f.X_fit_, Y.copy(), np.zeros(Y.shape[1])
        if leave_out is not None:
            W[leave_out] = 0.0
    else:
        fm = f.feature_map_  # sums(x) = K(x, landmarks) @ normalization.T @ S
        W = fm.normalization_.T @ np.hstack([f.S_, f.S_total_[:, None]])
        offset = np.zeros(Y.shape[1])
        if leave_out is not None:  # its own approximate term (see approx_class_evidence)
            offset = f.self_sim_[leave_out] * Y[leave_out]
        landmarks = fm.components_
        centres = landmarks if sp.issparse(landmarks) else np.asarray(landmarks, float)
    if leave_out is not None and sizes[-1] > 1:
        share = Y[leave_out] / (sizes[-1] - 1.0)
        W = W + W[:, -1:] * share[None, :]
        offset = offset + offset[-1] * share
    return centres, W, offset, const, sizes


def _expansion(model, f, k, leave_out):
    """``(centres, w, c)`` with ``output_k(s) = c + sum_j w_j exp(-gamma ||s - centres_j||^2)``."""
    _supported(f)
    Y = np.asarray(f.Y_fit_, dtype=np.float64)
    m = Y.shape[1]
    coef = getattr(model, "coef_", None)
    if coef is None:  # SML: its evidence for k
        beta, const = np.eye(m)[k], 0.0
    else:
        beta, const = np.asarray(coef, dtype=np.float64)[k], float(model.intercept_[k])
    counts = Y.sum(axis=0)
    if leave_out is not None:
        counts = counts - Y[leave_out]
    if f.normalize == "mean":
        per_class = np.divide(beta, counts, out=np.zeros(m), where=counts > 0)
    else:
        per_class = beta.copy()
    if f.approx_ is None:
        w = Y @ per_class
        if leave_out is not None:
            w[leave_out] = 0.0
        return f.X_fit_, w, const
    fm = f.feature_map_  # sums(x) = K(x, landmarks) @ normalization.T @ S
    w = fm.normalization_.T @ (f.S_ @ per_class)
    if leave_out is not None:  # its own approximate term, a constant (see approx_class_evidence)
        const -= f.self_sim_[leave_out] * float(Y[leave_out] @ per_class)
    landmarks = fm.components_  # sparse when the training rows are
    return (landmarks if sp.issparse(landmarks) else np.asarray(landmarks, float)), w, const


def _integrate(Z, w, const, gamma, s_b, s_x):
    """Integrated gradients of ``c + sum_j w_j exp(-gamma ||s - z_j||^2)`` from s_b to s_x.

    Returns ``(attributions, output(s_x), output(s_b), gap, n_nodes)``; ``n_nodes`` is 0
    when the integrals were taken in closed form.  The cost is O(n d) (a few passes over
    the training rows, held ``_BLOCK_VALUES`` values at a time) whatever the row's values:
    no number of quadrature nodes grows with ``||s_x - s_b||``.
    """
    keep = np.flatnonzero(w)
    Z, w = Z[keep], w[keep]
    delta = s_x - s_b
    with np.errstate(over="ignore", invalid="ignore"):
        C = float(delta @ delta)
        r2 = gamma * C
    if not (np.isfinite(C) and np.isfinite(r2)):
        raise DataError(
            "A value is so far outside the training range that the path from the baseline "
            "to it cannot be measured; enter a value nearer the training range."
        )
    d = delta.shape[0]
    step = max(1, _BLOCK_VALUES // max(1, d))
    A = np.empty(w.shape[0])  # ||s_b - z_j||^2, directly (an expansion loses digits far out)
    B = np.empty(w.shape[0])  # delta . (s_b - z_j)
    E = np.empty(w.shape[0])  # ||s_x - z_j||^2
    for start in range(0, w.shape[0], step):
        block = Z[start : start + step]
        block = block.toarray() if sp.issparse(block) else np.asarray(block, dtype=np.float64)
        diff = s_b[None, :] - block
        A[start : start + step] = np.einsum("ij,ij->i", diff, diff)
        B[start : start + step] = diff @ delta
        diff += delta[None, :]
        E[start : start + step] = np.einsum("ij,ij->i", diff, diff)
    K0, K1 = np.exp(-gamma * A), np.exp(-gamma * E)
    out_b, out_x = const + float(K0 @ w), const + float(K1 @ w)
    if C == 0.0:  # x is the baseline: nothing changes along the path
        return np.zeros(d), out_x, out_b, 0.0, 0
    if r2 < _CLOSED_FORM_FROM:
        I0, I1, n_nodes = _path_integrals_quadrature(A, B, C, gamma)
    else:
        I0, I1, n_nodes = _path_integrals_closed_form(A, B, C, K0, K1, gamma, Z, s_b, delta)
    # grad along the path: -2 gamma sum_j w_j K_j(alpha) (s_b + alpha delta - z_j)
    v = w * I0
    a0, a1 = float(v.sum()), float(w @ I1)
    grad = -2.0 * gamma * (a0 * s_b + a1 * delta - np.asarray(Z.T @ v).reshape(-1))
    values = delta * grad
    gap = float(values.sum() - (out_x - out_b))
    return values, out_x, out_b, gap, n_nodes


#: Gauss-Legendre segments of a path on log rates, doubled until the attributions add up to
#: the logits' difference within this share of it (or of 1) ...
_RATE_GAP = 1e-9
#: ... or until this many kernel evaluations per centre were spent (a path with a kink: a
#: class's share crossing the floor of the log share).
_RATE_MAX_NODES = 1024


def _integrate_log_rate(Z, W, offset, sizes, beta, const, gamma, s_b, s_x):
    """Integrated gradients of ``c + beta . log_rate(K(s) @ W - offset)`` from s_b to s_x.

    The logit of a model on log rates is not a sum of Gaussians (a ratio of sums sits inside
    the log), so the path integral is taken by Gauss-Legendre quadrature on segments, doubled
    until the attributions add up to the difference of the logits (the completeness gap,
    reported) within :data:`_RATE_GAP`.  At each node ``grad = sum_t (beta_t / S_t) grad S_t
    - (sum of beta over the classes above the floor) / S_total grad S_total`` (a class at the
    floor of the log rate contributes none).  A path that leaves the data so far that every
    similarity underflows (a what-if value far outside the training range) crosses a jump
    of the logit itself, to the base rates: no integral of the gradient holds it, and the
    gap reports it.
    """
    from sblr.similarity import LOG_RATE_FLOOR

    delta = s_x - s_b
    with np.errstate(over="ignore", invalid="ignore"):
        C = float(delta @ delta)
    if not np.isfinite(C):
        raise DataError(
            "A value is so far outside the training range that the path from the baseline "
            "to it cannot be measured; enter a value nearer the training range."
        )
    keep = np.flatnonzero(np.abs(W).sum(axis=1))
    Z, W = Z[keep], W[keep]
    Zd = Z.toarray() if sp.issparse(Z) else np.asarray(Z, dtype=np.float64)
    z_sq = np.einsum("ij,ij->i", Zd, Zd)
    d = delta.shape[0]
    sizes = np.asarray(sizes, dtype=np.float64)[None, :]  # S holds every term already

    def kernel(s):
        return np.exp(-gamma * np.maximum(z_sq - 2.0 * (Zd @ s) + float(s @ s), 0.0))

    def logit(s):
        S = kernel(s) @ W - offset
        rates = normalize_evidence(S[None, :], sizes, "log_rate", sizes=sizes[0])
        return const + float(beta @ rates[0])

    def gradient(s):
        K = kernel(s)
        S = K @ W - offset
        classes, total = S[:-1], S[-1]
        if total <= 0.0:  # no evidence at all: the base rates, a constant
            return np.zeros(d)
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.log(np.maximum(classes, 1e-320) / total)
        active = (classes > 0) & (rate > LOG_RATE_FLOOR)
        g = np.append(
            np.where(active, beta / np.where(classes > 0, classes, 1.0), 0.0),
            -beta[active].sum() / total,
        )
        u = K * (W @ g)
        return -2.0 * gamma * (u.sum() * s - Zd.T @ u)

    out_x, out_b = logit(s_x), logit(s_b)
    if C == 0.0:
        return np.zeros(d), out_x, out_b, 0.0, 0
    t, wt = np.polynomial.legendre.leggauss(_NODES_PER_SEGMENT)
    segments = 1
    tolerance = _RATE_GAP * max(1.0, abs(out_x - out_b))
    while True:
        edges = np.linspace(0.0, 1.0, segments + 1)
        total = np.zeros(d)
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            nodes, weights = a + (t + 1.0) * (b - a) / 2.0, wt * (b - a) / 2.0
            for node, weight in zip(nodes, weights, strict=True):
                total += weight * gradient(s_b + node * delta)
        values = delta * total
        gap = float(values.sum() - (out_x - out_b))
        if abs(gap) <= tolerance or segments * _NODES_PER_SEGMENT >= _RATE_MAX_NODES:
            return values, out_x, out_b, gap, segments * _NODES_PER_SEGMENT
        segments *= 2


def _path_integrals_quadrature(A, B, C, gamma):
    """``I0_j = int_0^1 K_j``, ``I1_j = int_0^1 alpha K_j`` by Gauss-Legendre, for a short
    path (``gamma C`` below ``_CLOSED_FORM_FROM``: every Gaussian wider than the path)."""
    t, wt = np.polynomial.legendre.leggauss(_NODES_PER_SEGMENT)
    alpha, omega = (t + 1.0) / 2.0, wt / 2.0
    I0, I1 = np.zeros(A.shape[0]), np.zeros(A.shape[0])
    for al, om in zip(alpha, omega, strict=True):
        K = np.exp(-gamma * np.maximum(A + 2.0 * al * B + al * al * C, 0.0))
        I0 += om * K
        I1 += (om * al) * K
    return I0, I1, _NODES_PER_SEGMENT


def _path_integrals_closed_form(A, B, C, K0, K1, gamma, Z, s_b, delta):
    """``I0_j``, ``I1_j`` exactly, through erf.

    Along the path ``K_j(alpha) = exp(-gamma p_j) exp(-r^2 (alpha - mu_j)^2)`` with
    ``r^2 = gamma C``, ``mu_j = -B_j / C`` (where the path passes nearest ``z_j``) and
    ``p_j`` the squared distance of ``z_j`` from the path's line.  With
    ``t0 = -r mu_j`` and ``t1 = r (1 - mu_j)``::

        I0 = exp(-gamma p) sqrt(pi) / (2 r) (erf(t1) - erf(t0))
        I1 = mu I0 + (K_j(0) - K_j(1)) / (2 r^2)

    When ``t0`` and ``t1`` have the same sign the erf difference is written with
    ``erfcx`` and the end values ``K_j(0) = exp(-gamma p - t0^2)``, ``K_j(1)`` (no
    cancellation: ``r >= 1`` keeps ``erfc(t1) / erfc(t0)`` below ``erfc(1)``).
    """
    r = np.sqrt(gamma * C)
    mu = -B / C
    t0, t1 = -r * mu, r * (1.0 - mu)
    diff = np.empty_like(A)
    right, left = t0 >= 0.0, t1 <= 0.0
    both = ~(right | left)
    diff[right] = erfcx(t0[right]) * K0[right] - erfcx(t1[right]) * K1[right]
    diff[left] = erfcx(-t1[left]) * K1[left] - erfcx(-t0[left]) * K0[left]
    if both.any():  # the path passes z_j's nearest point: exp(-gamma p) from that distance
        idx = np.flatnonzero(both)
        p = np.empty(idx.shape[0])
        step = max(1, _BLOCK_VALUES // max(1, delta.shape[0]))
        for start in range(0, idx.shape[0], step):
            rows = idx[start : start + step]
            block = Z[rows]
            block = block.toarray() if sp.issparse(block) else np.asarray(block, dtype=np.float64)
            q = s_b[None, :] + mu[rows, None] * delta[None, :] - block
            p[start : start + step] = np.einsum("ij,ij->i", q, q)
        diff[both] = np.exp(-gamma * p) * (erf(t1[both]) - erf(t0[both]))
    I0 = np.maximum(diff, 0.0) * (np.sqrt(np.pi) / (2.0 * r))
    I1 = mu * I0 + (K0 - K1) / (2.0 * r * r)
    return I0, I1, 0
