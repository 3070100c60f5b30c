"""How sure is each β?  Bootstrap stability of the logistic layer's coefficients.

The rows of a fitted SBLR / SparseSBLR model are resampled with replacement
``n_resamples`` times and the logistic layer is refitted on each resample's
evidence (warm-started from the fit on all rows).  A resample repeats about a
third of its rows: it is solved on its distinct rows (about 63% of them), each
weighted by how often it was drawn, which is the same problem with the same
optimum, and with every Newton step's lasso model solved exactly (from this near
start that takes the fewest steps).  The evidence itself is the
model's leave-one-out training evidence, computed once: the bootstrap measures
how much β depends on *which rows* it was fitted on, given the evidence
features (a pairs bootstrap conditional on the evidence), which is what makes
it cheap enough for a slider.

For every coefficient ``β[k, t]``:

* the **selection frequency**, the share of resamples with ``β[k, t] ≠ 0``
  (SparseSBLR; SBLR's coefficients are never exactly zero, so it is 1);
* an equal-tailed **interval** of the standardized coefficient
  ``β̃[k, t] = β[k, t] · sd(f̄_t)`` (population sd over the resample's rows):
  the change of class k's logit per standard deviation of class t's evidence,
  comparable across classes whatever the evidence scale.

Examples
--------
>>> import numpy as np
>>> from sblr import SparseSBLRClassifier
>>> from sblr.samples import load_sample
>>> ds = load_sample("planted")
>>> model = SparseSBLRClassifier(gamma=1.0, lam=3e-4).fit(ds.X, ds.y)
>>> result = bootstrap_coefficients(model, model.featurizer_.training_evidence(),
...                                 n_resamples=20, random_state=0)
>>> result.selection_frequency.shape
(7, 7)
>>> rain, thunder = ds.class_names.index("rain"), ds.class_names.index("thunder")
>>> float(result.selection_frequency[thunder, rain])
1.0
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from sblr import _validation
from sblr._validation import validate_params
from sblr.exceptions import DataError
from sblr.models import fits_from_evidence

__all__ = ["StabilityResult", "bootstrap_coefficients"]


@dataclass(frozen=True)
class StabilityResult:
    """Coefficients of the logistic layer over bootstrap resamples of the rows.

    Attributes
    ----------
    coefs : ndarray of shape (B, m, m)
        Raw ``β`` of each resample.
    std_coefs : ndarray of shape (B, m, m)
        Standardized ``β̃ = β · sd(f̄_t)`` of each resample.
    selection_frequency : ndarray of shape (m, m)
        Share of resamples with ``β[k, t] ≠ 0``.
    lower, upper : ndarray of shape (m, m)
        Equal-tailed ``level`` interval of ``β̃[k, t]`` over the resamples.
    level : float
        Coverage of the interval (0.9 by default).
    """

    coefs: np.ndarray
    std_coefs: np.ndarray
    selection_frequency: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: float

    @property
    def n_resamples(self) -> int:
        """Number of bootstrap resamples ``B``."""
        return int(self.coefs.shape[0])

    def sentence(self, k: int, t: int, class_names: Sequence[str]) -> str:
        """One plain sentence about ``β[k, t]``, e.g. for the dashboard.

        Examples
        --------
        >>> r = StabilityResult(np.zeros((4, 2, 2)), np.zeros((4, 2, 2)),
        ...                     np.array([[1.0, 0.75], [0.0, 1.0]]),
        ...                     np.full((2, 2), -0.1), np.full((2, 2), 0.2), 0.9)
        >>> r.sentence(0, 1, ["wren", "jay"])
        "jay's evidence is used for wren in 75% of 4 resamples (90% interval of β̃: -0.1 to 0.2)."
        """
        freq = self.selection_frequency[k, t]
        return (
            f"{class_names[t]}'s evidence is used for {class_names[k]} in {freq:.0%} of "
            f"{self.n_resamples} resamples ({self.level:.0%} interval of β̃: "
            f"{self.lower[k, t]:.3g} to {self.upper[k, t]:.3g})."
        )


@validate_params(
    lambda: {
        "model": "no_validation",  # a fitted SBLR / SparseSBLR: checked below, by its traits
        "F": ["array-like"],
        "n_resamples": [_validation.Interval(Integral, 2, None, closed="left")],
        "level": [_validation.Interval(Real, 0, 1, closed="neither")],
        "random_state": [_validation.Interval(Integral, 0, None, closed="left"), None],
        "progress": [callable, None],
    },
    prefer_skip_nested_validation=True,
)
def bootstrap_coefficients(
    model,
    F,
    *,
    n_resamples: int = 50,
    level: float = 0.9,
    random_state: int | None = 0,
    progress: Callable[[int, int], None] | None = None,
) -> StabilityResult:
    """Refit the logistic layer of ``model`` on ``n_resamples`` bootstrap resamples of its rows.

    Parameters
    ----------
    model : fitted SBLRClassifier or SparseSBLRClassifier
        Fitted on all rows (its coefficients warm-start every resample).
    F : ndarray of shape (n_samples, m)
        The evidence ``model`` was fitted on (``featurizer_.training_evidence()``).
    n_resamples : int, default 50
        Number of resamples ``B``.
    level : float, default 0.9
        Coverage of the interval of ``β̃``.
    random_state : int or None, default 0
        Seed of the resamples.
    progress : callable, optional
        ``progress(done, total)`` after each resample.

    Returns
    -------
    StabilityResult

    Raises
    ------
    TypeError
        ``model`` cannot be refitted from evidence (SML, the CV estimators).
    ValueError
        ``F`` of the wrong shape; ``InvalidParameterError`` (a ``ValueError``) for a bad
        ``n_resamples``, ``level``, ``random_state`` or ``progress``.
    """
    if not fits_from_evidence(model) or not hasattr(model, "coef_"):
        raise TypeError(
            "bootstrap_coefficients needs a fitted SBLRClassifier or SparseSBLRClassifier."
        )
    F = np.asarray(F, dtype=np.float64)
    Y = model.featurizer_.Y_fit_
    if F.shape != Y.shape:
        raise ValueError(
            f"F must have the shape of the training evidence {Y.shape}; got {F.shape}."
        )
    if not np.isfinite(F).all():
        raise DataError("The evidence holds NaN or infinite values.")
    n, m = F.shape
    rng = np.random.default_rng(random_state)
    coefs = np.empty((n_resamples, m, m))
    std_coefs = np.empty((n_resamples, m, m))
    refit = copy.copy(model)  # shares the fitted featurizer; fit_layer replaces coef_ only
    for b in range(n_resamples):
        rows = rng.integers(0, n, size=n)
        counts = np.bincount(rows, minlength=n)
        drawn = np.flatnonzero(counts)
        Fb, weight = F[drawn], counts[drawn].astype(np.float64)
        refit.fit_layer(
            Fb, Y[drawn], sample_weight=weight, warm_start=model, exact_steps=True, cuts=False
        )
        coefs[b] = refit.coef_
        centred = Fb - np.average(Fb, axis=0, weights=weight)
        sd = np.sqrt(np.average(centred**2, axis=0, weights=weight))  # over the resample
        std_coefs[b] = refit.coef_ * sd[None, :]
        if progress is not None:
            progress(b + 1, n_resamples)
    tail = (1 - level) / 2
    lower, upper = np.quantile(std_coefs, [tail, 1 - tail], axis=0)
    return StabilityResult(
        coefs=coefs,
        std_coefs=std_coefs,
        selection_frequency=(coefs != 0).mean(axis=0),
        lower=lower,
        upper=upper,
        level=float(level),
    )
