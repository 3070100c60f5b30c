"""The typed questions the pages ask of the compute layer (:mod:`pages._shared.cache`).

A question is a frozen, hashable value: :class:`Spec` (which model, at which γ and λ),
:class:`Scheme` (how an evaluation splits the rows), :class:`Search` (what Tune searches on),
:class:`Protocol` (the settings of a Compare run) and :class:`RowQuestion` (which row's
credits, against which baseline, for which class).
Streamlit's caches hash them, and a data set, by :data:`HASH_FUNCS`: by their fields, and a
data set by its content (``Dataset.fingerprint``), never by passing a key beside them.

Adding a view: write the question (one of these, or a new frozen dataclass with its entry in
:data:`HASH_FUNCS`), one ``@heavy`` function in :mod:`pages._shared.cache` that answers it
from :mod:`sblr`, and the page function that draws the answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from sblr.display import settings_label
from sblr.io import Dataset
from sblr.registry import Method, get_model

__all__ = [
    "DECISIONS",
    "HASH_FUNCS",
    "HOLDOUT",
    "Protocol",
    "RowQuestion",
    "Scheme",
    "Search",
    "Spec",
]


@dataclass(frozen=True)
class Spec:
    """What a fit is: one of the dashboard's models (:data:`sblr.registry.DASHBOARD_MODELS`)
    by its label, at γ, and at λ only where the model takes one (the key of the fits store,
    and what the pages ask for).  :meth:`of` takes the model's entry, its label or its key.
    What a model is -- fitted from the cached evidence, needing the compiled solver -- its
    registry entry says (:attr:`entry`), not a test on its name."""

    model: str
    gamma: object
    lam: float | None = None

    @classmethod
    def of(cls, model, gamma, lam=None):
        entry = get_model(model)
        takes_lam = entry.takes_lam
        return cls(entry.label, gamma, float(lam) if takes_lam and lam is not None else None)

    @property
    def entry(self) -> Method:
        """The model's entry in :mod:`sblr.registry`: its traits."""
        return get_model(self.model)

    def estimator(self):
        return self.entry.build(gamma=self.gamma, **({} if self.lam is None else {"lam": self.lam}))

    @property
    def from_evidence(self) -> bool:
        """Fitted from the cached evidence (SBLR, SparseSBLR), not from the rows (SML)."""
        return self.entry.learns_beta

    @property
    def l1(self) -> bool:
        """Has an L1 term (SparseSBLR: the model takes λ): its fits need the compiled
        solver, its label says λ. A trait of the model, whether or not λ was given."""
        return self.entry.needs_compiled

    @property
    def learns_beta(self) -> bool:
        """Learns β (SBLR, SparseSBLR: a logistic layer on the evidence); SML decides from
        the evidence alone, its scores ranks rather than probabilities."""
        return self.entry.learns_beta

    @property
    def label(self) -> str:
        """The model as the pages name it: "SparseSBLR, λ = 1e-3", "SBLR", "SML"."""
        return ", ".join(filter(None, (self.model, settings_label(lam=self.lam))))


@dataclass(frozen=True)
class Scheme:
    """How an evaluation splits the rows: ``kind`` "holdout" (one split, ``test_size`` of the
    rows tested), "kfold" (``n_splits`` folds) or "all" (every row trains; no test rows).
    Hashable, and what the fold functions take beside the data and the :class:`Spec`."""

    kind: str
    test_size: float = 0.25
    n_splits: int = 5


#: The evaluation the pages default to (Model & metrics, the lesson, the report).
HOLDOUT = Scheme("holdout", 0.25, 5)


@dataclass(frozen=True)
class Search:
    """What Tune searches on: the rows of ``rows`` it may train on (a hold-out
    :class:`Scheme`: its training rows; ``Scheme("all")``: every row, a supplied test file
    holding the test rows), the selection ``how`` (a key of ``cache.TUNE_SCHEMES``) and the
    ``metric`` (None: micro-F1 of the decisions; accuracy for multi-class data)."""

    rows: Scheme
    how: str = "inner 5-fold CV"
    metric: str | None = None


#: Compare's decisions, by the name a :class:`Protocol` takes: the similarity models' multi-label
#: decision (``threshold`` of :func:`sblr.protocol.run_fold`) and selection metric. "fitted"
#: decides as every other page does; "paper" is the paper's protocol whole (π ≥ 0.5, SML its
#: top ξ, the mean evidence f̄, selection by average precision).
DECISIONS = {"fitted": ("micro_f1", "micro_f1"), "paper": (None, None)}


@dataclass(frozen=True)
class Protocol:
    """The settings of a Compare run, beside the data and the method: the outer ``folds``,
    the ``grid`` (the protocol's grid in a hashable form: values, or (name, values) pairs)
    and the ``decisions`` (a key of :data:`DECISIONS`)."""

    folds: int
    grid: tuple
    decisions: str = "fitted"

    @classmethod
    def of(cls, folds, grid, decisions="fitted"):
        """The settings with ``grid`` in its hashable form: a mapping of parameter names to
        values becomes sorted (name, values) pairs, a sequence a tuple of floats."""
        if decisions not in DECISIONS:
            raise ValueError(f"decisions must be one of {sorted(DECISIONS)}; got {decisions!r}.")
        if isinstance(grid, Mapping):
            grid = tuple((name, tuple(float(v) for v in grid[name])) for name in sorted(grid))
        else:
            grid = tuple(float(g) for g in grid)
        return cls(int(folds), grid, decisions)

    @property
    def plain_grid(self):
        """The grid as the protocol takes it: a dict per parameter, or the values."""
        grid = self.grid
        return dict(grid) if grid and isinstance(grid[0], tuple) else grid

    @property
    def threshold(self):
        """The similarity models' multi-label decision, as :func:`sblr.protocol.run_fold`
        takes it (None: the paper's)."""
        return DECISIONS[self.decisions][0]

    def metric(self, task):
        """The selection metric of a ``task`` data set (None: the paper's; multi-class data
        are selected by accuracy either way)."""
        return DECISIONS[self.decisions][1] if task == "multilabel" else None


def _digest(values) -> str | None:
    if values is None:
        return None
    return hashlib.sha256(np.asarray(values, float).tobytes()).hexdigest()


@dataclass(frozen=True, eq=False)
class RowQuestion:
    """Whose feature credits (integrated gradients, :func:`sblr.attribution.feature_attributions`):
    the row's values ``x``, the ``baseline`` row (None: the training mean), the class ``k``
    and the training row to leave out of the evidence (None: none). Hashed by its values."""

    x: np.ndarray
    baseline: np.ndarray | None
    k: int
    leave_out: int | None = None

    def key(self) -> tuple:
        return (_digest(self.x), _digest(self.baseline), int(self.k), self.leave_out)


#: How Streamlit's caches hash the questions: a data set by its fingerprint (its content,
#: computed once per data set), not by its values on every call; the others by their fields.
HASH_FUNCS = {
    Dataset: lambda ds: ds.fingerprint,
    Spec: lambda spec: (spec.model, str(spec.gamma), spec.lam),
    Scheme: lambda scheme: (scheme.kind, float(scheme.test_size), int(scheme.n_splits)),
    Protocol: lambda run: (int(run.folds), run.grid, run.decisions),
    RowQuestion: RowQuestion.key,
}
