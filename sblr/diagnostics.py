"""When are SBLR's β identifiable?  Conditioning of the evidence and separated classes.

SBLR fits each class's logistic regression on the evidence of *all* classes.
Two things make the individual coefficients unreliable even when the
predictions are fine:

* **Collinear evidence.** Evidence columns of classes that occur in the same
  regions are strongly correlated; then many combinations of β fit equally
  well and single coefficients (even their signs) are not identifiable.
  Measured by the condition number of the standardized evidence and by the
  variance inflation factor ``VIF_t = 1 / (1 − R²_t)`` of each column (R²_t of
  class t's evidence regressed on the others'; > 10 is the usual warning sign).
* **Separated classes.** When a class's training rows are classified without
  a single error by the fitted logistic layer, the likelihood has no finite
  maximum: SBLR's β are then set by its tiny ridge, and their size means
  nothing.  SparseSBLR's L1 penalty gives such classes finite, sparse β.

Examples
--------
>>> import numpy as np
>>> from sblr import SBLRClassifier
>>> from sblr.samples import load_sample
>>> ds = load_sample("planted")
>>> model = SBLRClassifier(gamma=1.0).fit(ds.X, ds.y)
>>> diag = evidence_diagnostics(model, model.featurizer_.training_evidence())
>>> diag.vif.shape, bool(diag.condition_number > 1)
((7,), True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sblr._threads import single_threaded_blas
from sblr._validation import validate_params
from sblr.display import fmt_number
from sblr.exceptions import DataError

__all__ = [
    "VIF_WARNING",
    "CONDITION_WARNING",
    "EvidenceDiagnostics",
    "SparseConditioning",
    "evidence_diagnostics",
    "sparse_conditioning",
]

#: A column's variance inflation factor above this is reported as collinear.
VIF_WARNING = 10.0
#: A condition number of the standardized evidence above this is reported.
CONDITION_WARNING = 1e3


@dataclass(frozen=True)
class EvidenceDiagnostics:
    """Conditioning of the evidence a model was fitted on, and its separated classes.

    Attributes
    ----------
    condition_number : float
        Ratio of the largest to the smallest singular value of the standardized
        (non-constant) evidence columns; ``inf`` when they are linearly dependent.
    vif : ndarray of shape (m,)
        Variance inflation factor of each evidence column (NaN for a constant column).
    separated : ndarray of shape (m,) of bool
        Classes whose training rows the fitted logistic layer classifies without error.
    """

    condition_number: float
    vif: np.ndarray
    separated: np.ndarray

    @property
    def collinear(self) -> np.ndarray:
        """Indices of the evidence columns with ``VIF > VIF_WARNING``."""
        return np.flatnonzero(np.nan_to_num(self.vif, nan=0.0) > VIF_WARNING)

    @property
    def unreliable(self) -> bool:
        """Whether SBLR's individual coefficients should not be read one by one."""
        return bool(
            self.condition_number > CONDITION_WARNING or self.collinear.size or self.separated.any()
        )

    def sentences(self, class_names: Sequence[str], *, limit: int = 4) -> list[str]:
        """Plain-language findings, one sentence each (empty when all is well); each names at
        most ``limit`` classes, the worst first, then "and N more" (two lists of eight names
        made one paragraph of 16 on 174 labels).

        Examples
        --------
        >>> d = EvidenceDiagnostics(2.5e4, np.array([1.2, 40.0]), np.array([True, False]))
        >>> for s in d.sentences(["wren", "jay"]): print(s)
        The evidence columns are strongly correlated (condition number 25,000 of the standardized evidence).
        1 of 2 classes have collinear evidence (VIF > 10): jay (40).
        1 of 2 classes are separated on the training rows, so SBLR's β for them are set by its tiny ridge, not by the data: wren.
        """  # noqa: E501
        m = len(self.vif)
        out = []
        if self.condition_number > CONDITION_WARNING:
            out.append(
                "The evidence columns are strongly correlated (condition number "
                f"{fmt_number(self.condition_number)} of the standardized evidence)."
            )
        if self.collinear.size:
            worst = self.collinear[np.argsort(-self.vif[self.collinear])][:limit]
            shown = ", ".join(f"{class_names[t]} ({fmt_number(self.vif[t])})" for t in worst)
            more = f" and {self.collinear.size - limit} more" if self.collinear.size > limit else ""
            out.append(
                f"{self.collinear.size} of {m} classes have collinear evidence "
                f"(VIF > {VIF_WARNING:g}): {shown}{more}."
            )
        sep = np.flatnonzero(self.separated)
        if sep.size:
            shown = ", ".join(str(class_names[k]) for k in sep[:limit])
            more = f" and {sep.size - limit} more" if sep.size > limit else ""
            out.append(
                f"{sep.size} of {m} classes are separated on the training rows, so SBLR's β for "
                f"them are set by its tiny ridge, not by the data: {shown}{more}."
            )
        return out


def _standardized(F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sd = F.std(axis=0)
    varying = sd > 1e-12 * max(1.0, float(np.abs(F).max(initial=0.0)))
    Z = (F[:, varying] - F[:, varying].mean(axis=0)) / sd[varying]
    return Z, varying


def _vif(Z: np.ndarray, condition: float) -> np.ndarray:
    """``1 / (1 − R²_t)`` of each standardized column regressed on the others."""
    n, p = Z.shape
    if p == 1:
        return np.ones(1)
    if condition < 1e6:  # well conditioned: the diagonal of the inverse correlation matrix
        return np.diag(np.linalg.inv((Z.T @ Z) / n)).copy()
    out = np.empty(p)
    for t in range(p):  # one least-squares fit per column, exact for dependent columns
        others = np.delete(Z, t, axis=1)
        coef = np.linalg.lstsq(others, Z[:, t], rcond=None)[0]
        unexplained = float(np.sum((Z[:, t] - others @ coef) ** 2)) / n  # 1 − R² (TSS = n)
        out[t] = 1.0 / unexplained if unexplained > 1e-12 else np.inf
    return out


@validate_params(
    # the model is read for featurizer_.Y_fit_, coef_ and intercept_ (duck-typed)
    {"model": "no_validation", "F": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def evidence_diagnostics(model, F) -> EvidenceDiagnostics:
    """Conditioning of ``F`` and the classes ``model`` separates on its training rows.

    Parameters
    ----------
    model : fitted SBLRClassifier or SparseSBLRClassifier, or None
        Fitted on the evidence ``F`` (its ``featurizer_.Y_fit_`` are the labels).  None:
        the conditioning only, no class counted as separated (where SBLR is not fitted:
        its fit on 983 labels takes hours).
    F : ndarray of shape (n_samples, m)
        The training evidence (``featurizer_.training_evidence()``).

    Returns
    -------
    EvidenceDiagnostics
    """
    F = np.asarray(F, dtype=np.float64)
    if F.ndim != 2 or not np.isfinite(F).all():
        raise DataError("The evidence must be a finite 2-D array.")
    Y = np.asarray(model.featurizer_.Y_fit_) if model is not None else np.zeros(F.shape)
    if Y.shape != F.shape:
        raise ValueError(
            f"F must have the shape of the training evidence {Y.shape}; got {F.shape}."
        )
    m = F.shape[1]
    Z, varying = _standardized(F)
    vif = np.full(m, np.nan)
    if Z.shape[1] == 0:
        condition = 1.0
    else:
        s = np.linalg.svd(Z, compute_uv=False)
        condition = float(s[0] / s[-1]) if s[-1] > s[0] * 1e-15 else float("inf")
        vif[varying] = _vif(Z, condition)
    if model is None:
        return EvidenceDiagnostics(float(condition), vif, np.zeros(m, dtype=bool))
    logits = F @ model.coef_.T + model.intercept_
    positive = Y.astype(bool)
    has_both = positive.any(axis=0) & (~positive).any(axis=0)
    errors = ((logits > 0) != positive).sum(axis=0)
    separated = has_both & (errors == 0)
    return EvidenceDiagnostics(float(condition), vif, separated)


@dataclass(frozen=True)
class SparseConditioning:
    """Whether SparseSBLR's non-zero β can be read one by one at its λ: for each class k, the
    evidence columns its model keeps (``β[k, t] ≠ 0``) and how collinear they are.

    L1 makes β identifiable only by leaving columns out: while λ is small every class keeps
    (nearly) every column, and the kept columns are as collinear as SBLR's (CAL500's 174
    classes at λ = 1e-4: all kept, condition number 7,270), so its signs mean no more than
    SBLR's.

    Attributes
    ----------
    n_kept : ndarray of shape (m,)
        Number of non-zero β in each class's row (its own column included).
    condition : ndarray of shape (m,)
        Condition number of the standardized evidence columns each class keeps (1 for one
        column or none; ``inf`` when they are linearly dependent).
    """

    n_kept: np.ndarray
    condition: np.ndarray

    @property
    def unreadable(self) -> np.ndarray:
        """Classes whose kept columns are collinear (condition number > CONDITION_WARNING)."""
        return np.flatnonzero(self.condition > CONDITION_WARNING)

    @property
    def readable(self) -> bool:
        """Whether every class's kept evidence is well conditioned."""
        return self.unreadable.size == 0

    def sentence(self, lam_text: str) -> str:
        """One sentence for a reader (the numbers behind it: :meth:`details`).

        Examples
        --------
        >>> c = SparseConditioning(np.array([3, 1]), np.array([7270.0, 1.0]))
        >>> c.sentence("1e-4")
        "SparseSBLR's β cannot be read one by one either at λ = 1e-4: 1 of 2 classes keep collinear evidence (condition number up to 7,270). Raise λ."
        """  # noqa: E501
        m, bad = len(self.condition), self.unreadable
        if not bad.size:
            return (
                f"SparseSBLR's β can be read at λ = {lam_text}: the evidence each class keeps "
                f"is not collinear (condition number at most {fmt_number(self.condition.max())})."
            )
        return (
            f"SparseSBLR's β cannot be read one by one either at λ = {lam_text}: {bad.size} of "
            f"{m} classes keep collinear evidence (condition number up to "
            f"{fmt_number(self.condition[bad].max())}). Raise λ."
        )

    def details(self, class_names: Sequence[str], *, limit: int = 8) -> str:
        """The worst classes, with how many columns each keeps and their condition number.

        Examples
        --------
        >>> c = SparseConditioning(np.array([3, 1]), np.array([7270.0, 1.0]))
        >>> c.details(["wren", "jay"])
        'SparseSBLR keeps 3 columns for wren (condition number 7,270).'
        """
        bad = self.unreadable
        worst = bad[np.argsort(-self.condition[bad], kind="stable")][:limit]
        shown = "; ".join(
            f"{self.n_kept[k]} columns for {class_names[k]} (condition number "
            f"{fmt_number(self.condition[k])})"
            for k in worst
        )
        more = f" and {bad.size - limit} more classes" if bad.size > limit else ""
        return f"SparseSBLR keeps {shown}{more}." if shown else ""


@validate_params(
    {"coef": ["array-like"], "F": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def sparse_conditioning(coef, F) -> SparseConditioning:
    """How collinear the evidence columns are that each row of ``coef`` keeps.

    Parameters
    ----------
    coef : array-like of shape (m, m)
        SparseSBLR's ``coef_`` at the λ in use.
    F : array-like of shape (n_samples, m)
        The training evidence it was fitted on.

    Returns
    -------
    SparseConditioning

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(size=200)
    >>> F = np.c_[a, a + 1e-4 * rng.normal(size=200), rng.normal(size=200)]
    >>> c = sparse_conditioning([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]], F)
    >>> c.n_kept.tolist(), c.unreadable.tolist()
    ([2, 1, 1], [0])
    """
    B = np.asarray(coef, dtype=np.float64)
    F = np.asarray(F, dtype=np.float64)
    if F.ndim != 2 or not np.isfinite(F).all():
        raise DataError("The evidence must be a finite 2-D array.")
    if B.shape != (F.shape[1], F.shape[1]):
        raise ValueError(f"coef must have shape {(F.shape[1], F.shape[1])}; got {B.shape}.")
    Z, varying = _standardized(F)
    column = np.full(F.shape[1], -1)
    column[varying] = np.arange(Z.shape[1])
    # one Gram matrix, its blocks per kept set: cond(Z_A) = sqrt(cond(Z_Aᵀ Z_A)), an
    # eigenproblem of |A|² instead of an SVD of n × |A| per class
    gram = (Z.T @ Z) / max(len(Z), 1)
    kept = B != 0
    condition = np.ones(len(B))
    seen: dict[bytes, float] = {}
    with single_threaded_blas():  # small eigenproblems: 0.24 CPU-s, threaded 4.6 (174 classes)
        for k in range(len(B)):
            _kept_condition(k, column[kept[k] & (column >= 0)], gram, seen, condition)
    return SparseConditioning(kept.sum(axis=1), condition)


def _kept_condition(k, cols, gram, seen, condition) -> None:
    """``condition[k]``: the condition number of the columns ``cols`` (computed once per
    distinct set, kept in ``seen``)."""
    if cols.size < 2:
        return
    signature = cols.tobytes()
    if signature not in seen:
        eig = np.linalg.eigvalsh(gram[np.ix_(cols, cols)])
        top = max(float(eig[-1]), 0.0)
        seen[signature] = float(np.sqrt(top / eig[0])) if eig[0] > top * 1e-15 else float("inf")
    condition[k] = seen[signature]
