"""Claims about β tested on the data: does |β| follow the label dependency (rank agreement
with a permutation test), and what an exact zero of β means for a class (its readings)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd

from sblr import _validation
from sblr._validation import validate_params
from sblr.exceptions import DataError
from sblr.interpret._shared import (
    NAMES_PARAM,
    between_param,
    checked_index,
    class_name_list,
    count_param,
    dense_array,
    index_param,
)

__all__ = [
    "ClaimCheck",
    "check_claim",
    "family_threshold",
    "rank_agreement_path",
    "readings_at",
    "spearman",
    "zero_readings",
]


def _average_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n along the last axis, ties sharing their average rank."""
    a = np.asarray(a, dtype=float)
    order = np.argsort(a, axis=-1, kind="stable")
    ranks = np.empty_like(a)
    flat_a = a.reshape(-1, a.shape[-1])
    flat_o = order.reshape(-1, a.shape[-1])
    flat_r = ranks.reshape(-1, a.shape[-1])
    for row, o, r in zip(flat_a, flat_o, flat_r, strict=True):
        sorted_vals = row[o]
        # start of each run of equal values
        new = np.r_[True, sorted_vals[1:] != sorted_vals[:-1]]
        starts = np.flatnonzero(new)
        ends = np.r_[starts[1:], len(row)]
        avg = (starts + ends + 1) / 2.0  # mean of 1-based positions start+1 .. end
        r[o] = np.repeat(avg, ends - starts)
    return ranks


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    x = x - x.mean()
    y = y - y.mean()
    den = math.sqrt(float(x @ x) * float(y @ y))
    return math.nan if den == 0 else float(np.clip((x @ y) / den, -1.0, 1.0))


@validate_params(
    lambda: {"x": ["array-like"], "y": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def spearman(x, y) -> float:
    """Spearman's rank correlation (Pearson on average ranks; ties share ranks).

    The same number as :func:`scipy.stats.spearmanr`, without importing
    :mod:`scipy.stats` (slow to import: the dashboard's start-up avoids it).
    NaN when fewer than two pairs or either variable is constant.

    Examples
    --------
    >>> spearman([1, 2, 3, 4], [10, 20, 20, 40])
    0.9486832980505138
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise DataError(f"x and y must have the same length; got {x.size} and {y.size}.")
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return _pearson(_average_ranks(x), _average_ranks(y))


@dataclass(frozen=True)
class ClaimCheck:
    """The paper's claim for one target class, tested on the data.

    The claim (a hypothesis): the classes t that depend more on k get larger
    weights |β̃ₜᵏ| in k's logit (and the unrelated ones small or zero weights).

    Attributes
    ----------
    rho : float
        Spearman(|β̃ₜᵏ|, dependency) over the classes t ≠ k (NaN if undefined).
    p_value : float
        Two-sided permutation p-value of ``rho`` (NaN if undefined).
    n : int
        Number of classes t compared.
    verdict : str
        ``"supported"`` (rho > 0, p < alpha), ``"contradicted"`` (rho < 0, p < alpha),
        ``"not supported"`` (p ≥ alpha), ``"too few classes"`` (even a perfect ranking
        could not reach p < alpha: fewer than 5 classes), ``"untestable"`` (too few
        non-zero weights: with the zeros tied, no arrangement of these weights could reach
        p < alpha, so the test has no power and gives no verdict) or ``"undefined"``.
    alpha : float
        The significance level used.
    all_zero : bool
        Every weight compared is zero (a sparse model at a large λ).
    n_nonzero : int or None
        Non-zero weights among the ``n`` compared.
    """

    rho: float
    p_value: float
    n: int
    verdict: str
    alpha: float = 0.05
    all_zero: bool = False
    n_nonzero: int | None = None

    def sentence(self, measure: str = "the dependency") -> str:
        """One plain sentence with the numbers, e.g. for the dashboard."""
        if self.verdict == "undefined":
            if self.all_zero:
                return (
                    f"Undefined: every weight of the {self.n} other classes is exactly zero at "
                    "this λ, so there is nothing to rank (a smaller λ lets classes in)."
                )
            return (
                f"Undefined: over the {self.n} other classes either every weight or every value "
                f"of {measure} is the same, so there is no ranking to compare."
            )
        if self.verdict == "untestable":
            return (
                f"Untestable here: only {self.n_nonzero} of the {self.n} weights are not zero, "
                f"and with the zeros tied no arrangement of them could reach p < "
                f"{self.alpha:.0%}, so the test cannot support or contradict anything (a "
                "smaller λ lets more classes in)."
            )
        if self.verdict == "too few classes":
            return (
                f"Too few classes to tell (ρ = {self.rho:.2f} over {self.n}): with so few, "
                f"even a perfect ranking arises by chance more than {self.alpha:.0%} of the time."
            )
        nums = f"ρ = {self.rho:.2f} over {self.n} classes, permutation p = {self.p_value:.3f}"
        if self.verdict == "supported":
            return f"Supported ({nums}): larger {measure} goes with larger |weight|."
        if self.verdict == "contradicted":
            return (
                f"Contradicted ({nums}): larger {measure} goes with SMALLER |weight|, the "
                "opposite of the claim."
            )
        return (
            f"Not supported ({nums}): shuffling the weights among the classes gives a rank "
            f"correlation at least this far from 0 in {self.p_value:.0%} of shuffles, so these "
            f"data do not confirm that the weights follow {measure}."
        )


@validate_params(
    lambda: {
        "weights": ["array-like"],
        "dependency": ["array-like"],
        "target": [*index_param(), None],
        "n_permutations": count_param(),
        "alpha": between_param(0, 1, "neither"),
        "seed": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=True,
)
def check_claim(
    weights, dependency, *, target=None, n_permutations: int = 9999, alpha: float = 0.05, seed=0
) -> ClaimCheck:
    """Test "larger dependency, larger |weight|" for one target class.

    Parameters
    ----------
    weights : array-like of shape (m,)
        The weights of every class t in k's logit (β̃ₜᵏ; the sign is ignored).
    dependency : array-like of shape (m,)
        The dependency of k on every t (co-occurrence, P(k | t), class affinity...).
    target : int, optional
        The index k, left out (its own weight and dependency say nothing about the others).
    n_permutations : int, default 9999
        Random permutations of the weights for the two-sided p-value
        ``(1 + #{|ρ_perm| ≥ |ρ|}) / (1 + n_permutations)``.  With few classes the
        p-value is large, as it should be: 5 classes cannot confirm anything.
    alpha : float, default 0.05
    seed : int, default 0
        The permutations are reproducible.

    Returns
    -------
    ClaimCheck

    Examples
    --------
    >>> c = check_claim([9.0, 4, 3, 2, 1, 0, 0, 0], [0, 50, 40, 30, 20, 10, 5, 1], target=0)
    >>> c.verdict, round(c.rho, 2), c.n
    ('supported', 0.96, 7)
    >>> check_claim([0.0] * 17 + [3.0], list(range(18))).verdict   # one non-zero of 18
    'untestable'
    """
    w = np.abs(np.asarray(weights, dtype=float).ravel())
    d = np.asarray(dependency, dtype=float).ravel()
    if w.shape != d.shape:
        raise DataError(f"weights and dependency differ in length: {w.size} and {d.size}.")
    keep = np.ones(w.size, dtype=bool)
    if target is not None:
        keep[checked_index(target, w.size, "target")] = False
    keep &= np.isfinite(w) & np.isfinite(d)
    w, d = w[keep], d[keep]
    n = int(w.size)
    rho = spearman(w, d) if n >= 2 else math.nan
    if not math.isfinite(rho):
        all_zero = n > 0 and not np.any(w)
        return ClaimCheck(math.nan, math.nan, n, "undefined", alpha, all_zero)
    # the smallest two-sided p any ranking can reach, 2 / n!, in logs: n! passes the float
    # range from n = 171 (174 labels: an OverflowError on the contributions page)
    if math.exp(math.log(2.0) - math.lgamma(n + 1)) >= alpha:
        return ClaimCheck(float(rho), math.nan, n, "too few classes", alpha)
    # Ties shrink what a permutation test can show: the weights take only
    # n! / prod(c_i!) distinct arrangements (c_i the sizes of their tied groups: the zeros
    # of a sparse model), and the smallest two-sided p is about 2 over that number. One
    # non-zero weight among 18 has 18 arrangements: p >= 0.11 whatever the data.
    _, tie_sizes = np.unique(w, return_counts=True)
    log_arrangements = math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in tie_sizes)
    n_nonzero = int(np.count_nonzero(w))
    if math.exp(math.log(2.0) - log_arrangements) >= alpha:
        return ClaimCheck(float(rho), math.nan, n, "untestable", alpha, False, n_nonzero)
    rw = _average_ranks(w)
    rd = _average_ranks(d)
    rd = (rd - rd.mean()) / np.linalg.norm(rd - rd.mean())
    perms = rw[_permutations(n, n_permutations, seed)]
    perms -= perms.mean(axis=1, keepdims=True)
    null = (perms @ rd) / np.linalg.norm(perms, axis=1)
    p = float((1 + np.count_nonzero(np.abs(null) >= abs(rho) - 1e-12)) / (1 + n_permutations))
    if p < alpha:
        verdict = "supported" if rho > 0 else "contradicted"
    else:
        verdict = "not supported"
    return ClaimCheck(float(rho), p, n, verdict, alpha, False, n_nonzero)


def _permutations(n, n_permutations, seed):
    """The ``(n_permutations, n)`` index permutations of :func:`check_claim`: row i is the i-th
    permutation that ``default_rng(seed).permuted`` makes of n values (the draws do not depend
    on the values, so ``values[_permutations(...)]`` is what it makes of ``values``).  They do
    not depend on the data either, so they are made once per (n, n_permutations, seed): a
    page tests the claim for two models and two dependencies, and 9,999 permutations of 173
    values took 49 ms each time.  Only an integer seed's are stored (None asks for new
    permutations at every call; a Generator's state moves on)."""
    if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
        return _stored_permutations(int(n), int(n_permutations), int(seed))
    return _make_permutations(n, n_permutations, seed)


def _make_permutations(n, n_permutations, seed):
    index = np.arange(n, dtype=np.int16 if n < 2**15 else np.intp)  # 3.5 MB at 9,999 x 173
    return np.random.default_rng(seed).permuted(np.broadcast_to(index, (n_permutations, n)), axis=1)


@functools.lru_cache(maxsize=4)
def _stored_permutations(n, n_permutations, seed):
    index = _make_permutations(n, n_permutations, seed)
    index.flags.writeable = False
    return index


@validate_params(
    lambda: {
        "coefs": ["array-like"],
        "relation": ["array-like"],
        "sd": ["array-like", None],
        "target": [*index_param(), None],
        "average": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def rank_agreement_path(coefs, relation, *, sd=None, target=None, average=False) -> np.ndarray:
    """Spearman(|β̃ₜᵏ|, relation[k, t]) over t ≠ k at every λ of a coefficient path.

    Parameters
    ----------
    coefs : array-like of shape (n_lams, m, m)
        ``coefs[i, k, t]`` = βₜᵏ at the i-th λ (:func:`sblr.tuning.coefficient_path`).
    relation : array-like of shape (m, m)
        ``relation[k, t]``: co-occurrence, :func:`conditional_frequency`,
        :func:`class_affinity`...
    sd : array-like of shape (m,), optional
        :func:`evidence_sd` of the training evidence: correlate the standardized
        β̃ = β · sd (scale-free, the default in the dashboard).  Without it, raw β.
    target : int, optional
        Only this class k: returns shape (n_lams,).  Default: every class,
        shape (n_lams, m).
    average : bool, default False
        Without ``target``: return the mean over the classes k whose ρ is defined at
        each λ, shape (n_lams,) (NaN where none is).

    Returns
    -------
    ndarray
        NaN where undefined (e.g. every βₜᵏ, t ≠ k, is zero at that λ).

    Examples
    --------
    >>> coefs = np.zeros((2, 3, 3))
    >>> coefs[1, 0] = [1.0, 0.5, 0.1]                 # at the second λ, class 0 uses 1 more than 2
    >>> rank_agreement_path(coefs, [[5, 3, 1], [3, 4, 0], [1, 0, 2]], target=0)
    array([nan,  1.])
    """
    B = np.abs(np.asarray(coefs, dtype=float))
    if B.ndim != 3 or B.shape[1] != B.shape[2]:
        raise DataError(f"coefs must have shape (n_lams, m, m); got {B.shape}.")
    m = B.shape[1]
    R = np.asarray(relation, dtype=float)
    if R.shape != (m, m):
        raise DataError(f"relation must be ({m}, {m}); got {R.shape}.")
    if sd is not None:
        sd = np.asarray(sd, dtype=float)
        if sd.shape != (m,):
            raise DataError(f"sd must have shape ({m},); got {sd.shape}.")
        B = B * sd[None, None, :]
    targets = range(m) if target is None else [checked_index(target, m, "target")]
    out = np.full((B.shape[0], len(targets)), np.nan)
    for j, k in enumerate(targets):
        others = np.flatnonzero((np.arange(m) != k) & np.isfinite(R[k]))
        if others.size < 2 or np.ptp(R[k, others]) == 0:
            continue
        rr = _average_ranks(R[k, others])
        for i in range(B.shape[0]):
            b = B[i, k, others]
            if np.ptp(b) > 0:
                out[i, j] = _pearson(_average_ranks(b), rr)
    if target is not None:
        return out[:, 0]
    if average:
        defined = np.isfinite(out)
        count = defined.sum(axis=1)
        total = np.where(defined, out, 0.0).sum(axis=1)
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return out


@validate_params(
    lambda: {
        "n_rows": count_param(),
        "n_tests": [_validation.Interval(Integral, 0, None, closed="left")],
        "alpha": between_param(0, 1, "neither"),
    },
    prefer_skip_nested_validation=True,
)
def family_threshold(n_rows: int, n_tests: int, alpha: float = 0.05) -> float:
    """τ for :func:`zero_readings` when ``n_tests`` correlations are read at once: the
    two-sided Bonferroni level ``z(1 - alpha / (2 n_tests)) / sqrt(n_rows)``, so that all of
    them together cross it by chance with probability at most ``alpha`` (the default
    ``2 / sqrt(n)`` holds each one alone at about 5%).

    Examples
    --------
    >>> round(family_threshold(400, 1), 4), round(family_threshold(400, 17), 4)
    (0.098, 0.1487)
    """
    from scipy.stats import norm  # lazy: scipy.stats takes seconds to import

    n_tests = max(1, n_tests)
    return float(norm.ppf(1.0 - alpha / (2.0 * n_tests)) / math.sqrt(n_rows))


def _reading(r, partial, tau) -> str:
    """The rule of :func:`zero_readings` for one zero: weak, redundant or irrelevant."""
    if abs(partial) >= tau:
        return "weak"
    if abs(r) >= tau:
        return "redundant"
    return "irrelevant"


@validate_params(
    lambda: {"zeros": [pd.DataFrame], "threshold": between_param(0, None, "left")},
    prefer_skip_nested_validation=True,
)
def readings_at(zeros: pd.DataFrame, threshold: float) -> pd.Series:
    """The readings of :func:`zero_readings`'s table at another τ (e.g.
    :func:`family_threshold`), from its correlations: nothing is refitted.

    Examples
    --------
    >>> t = pd.DataFrame({"r_with_k": [0.3, 0.3, 0.05], "partial_r": [0.25, 0.1, 0.02]})
    >>> readings_at(t, 0.2).tolist(), readings_at(t, 0.28).tolist()
    (['weak', 'redundant', 'irrelevant'], ['redundant', 'redundant', 'irrelevant'])
    """
    return pd.Series(
        [
            _reading(r, p, float(threshold))
            for r, p in zip(zeros["r_with_k"], zeros["partial_r"], strict=True)
        ],
        index=zeros.index,
        name="reading",
    )


@validate_params(
    lambda: {
        "coef_k": ["array-like"],
        "F": ["array-like"],
        "Y": ["array-like"],
        "k": index_param(),
        "class_names": NAMES_PARAM,
        "threshold": [*between_param(0, None, "left"), None],
    },
    prefer_skip_nested_validation=True,
)
def zero_readings(coef_k, F, Y, k, class_names=None, *, threshold=None) -> pd.DataFrame:
    """What each zero weight βₜᵏ = 0 of a sparse model means: irrelevant, redundant or weak.

    A zero does not say "t has nothing to do with k".  With ``S`` the classes whose
    evidence the model does use (βₛᵏ ≠ 0), ``r`` the correlation of f̄ₜ with the label
    yₖ over the rows, and ``r | S`` the partial correlation given the evidence of ``S``
    (both residualised on it by least squares with an intercept):

    - **weak**: ``|r | S| ≥ τ``: t's evidence still tells something about k beyond the
      selected classes, but not enough to pay the L1 price at this λ (it may enter at a
      smaller λ);
    - **redundant**: ``|r | S| < τ ≤ |r|``: related to k on its own, but the selected
      classes' evidence already carries that information (a correlated class took its
      place; ``closest`` names the selected class most correlated with it);
    - **irrelevant**: ``|r| < τ`` and ``|r | S| < τ``: no detectable relation to k.

    τ defaults to ``2 / sqrt(n)``, about the two-sided 5% level of a zero correlation
    over ``n`` rows, so with many rows small relations count as detectable.

    Parameters
    ----------
    coef_k : array-like of shape (m,)
        βₜᵏ of one target k for every t.
    F : array-like of shape (n, m)
        The evidence the model was fitted on (leave-one-out training evidence).
    Y : array-like of shape (n, m)
        0/1 labels of the same rows.
    k : int
    class_names : sequence of str, optional
    threshold : float, optional
        τ (default ``2 / sqrt(n)``).

    Returns
    -------
    pandas.DataFrame
        One row per zero weight (t ≠ k), index ``t``: ``class``, ``reading``,
        ``r_with_k`` (r), ``partial_r`` (r | S), ``r2_selected`` (share of f̄ₜ's variance
        explained by the selected columns; 0 when none is selected), ``closest`` (name
        of the selected class whose evidence correlates most with f̄ₜ, "" if none) and
        ``closest_r``.  ``attrs["threshold"]`` holds τ.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> a = y + 0.3 * rng.standard_normal(400)           # selected, strongly related to k
    >>> F = np.c_[y * 0.5 + 0.1, a, a + 0.01 * rng.standard_normal(400), rng.random(400)]
    >>> Y = np.c_[y, y, y, rng.integers(0, 2, 400)]
    >>> zero_readings([1.0, 2.0, 0.0, 0.0], F, Y, 0)["reading"].tolist()
    ['redundant', 'irrelevant']
    """
    F = np.asarray(dense_array(F), dtype=float)
    Y = np.asarray(dense_array(Y), dtype=float)
    beta = np.asarray(coef_k, dtype=float).ravel()
    m = beta.size
    if F.ndim != 2 or F.shape[1] != m or Y.shape != F.shape:
        raise DataError(f"F and Y must both have shape (n, {m}); got {F.shape} and {Y.shape}.")
    k = checked_index(k, m)
    names = class_name_list(class_names, m)
    n = F.shape[0]
    tau = 2.0 / math.sqrt(max(n, 1)) if threshold is None else float(threshold)
    selected = np.flatnonzero(beta != 0)
    zeros = np.flatnonzero((beta == 0) & (np.arange(m) != k))
    Fc = F - F.mean(axis=0)
    norms = np.linalg.norm(Fc, axis=0)
    yk = Y[:, k] - Y[:, k].mean()

    def corr(a, b):
        na, nb = np.linalg.norm(a, axis=0), np.linalg.norm(b)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((na > 0) & (nb > 0), (a.T @ b) / (na * nb), 0.0)

    r_k = corr(Fc[:, zeros], yk)
    if selected.size:
        # an orthonormal basis of the directions the selected columns actually span
        U, sv, _ = np.linalg.svd(Fc[:, selected], full_matrices=False)
        Q = U[:, : int(np.count_nonzero(sv > sv.max() * 1e-10))]
        resid = Fc[:, zeros] - Q @ (Q.T @ Fc[:, zeros])
        yres = yk - Q @ (Q.T @ yk)
        left = np.linalg.norm(resid, axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            r2 = np.where(norms[zeros] > 0, 1.0 - (left / norms[zeros]) ** 2, 0.0)
        partial = corr(resid, yres)
        partial[left <= 1e-8 * norms[zeros]] = 0.0  # an exact copy adds nothing
        r2 = np.clip(r2, 0.0, 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            cross = (Fc[:, zeros].T @ Fc[:, selected]) / np.outer(norms[zeros], norms[selected])
        cross = np.nan_to_num(cross)
    else:
        r2, partial = np.zeros(zeros.size), r_k.copy()
    rows = []
    for j, t in enumerate(zeros):
        if selected.size:
            s_idx = int(np.argmax(np.abs(cross[j])))
            closest, closest_r = names[selected[s_idx]], float(cross[j, s_idx])
        else:
            closest, closest_r = "", math.nan
        reading = _reading(r_k[j], partial[j], tau)
        rows.append(
            (names[t], reading, float(r_k[j]), float(partial[j]), float(r2[j]), closest, closest_r)
        )
    out = pd.DataFrame(
        rows,
        columns=[
            "class",
            "reading",
            "r_with_k",
            "partial_r",
            "r2_selected",
            "closest",
            "closest_r",
        ],
        index=pd.Index(zeros, name="t"),
    )
    out.attrs["threshold"] = tau
    return out
