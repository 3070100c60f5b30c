"""Every model and method by one entry: its key, its name, how to build it, what it is.

One vocabulary for the models of the dashboard, the command line, Compare and the benchmark:
an entry (:class:`Method`) has the ``key`` the protocol, the command line's ``--method`` and
the result tables use (``"sparse_sblr"``), the ``label`` people read (the paper's column name,
the dashboard's model picker, links and ``--model``: ``"SparseSBLR"``), the estimator it
builds, the parameters the protocol selects and those it holds fixed, and its traits as data
(after scikit-learn's estimator tags): whether it takes λ or γ, decides by a fitted cut, has
a logistic layer (and which: the L1 layer needs the compiled solver), keeps sparse features
sparse, handles multi-class data only, where the dashboard's model picker shows it, and the
cost of its layer.  Code asks an entry what a model is, never which it is by name, and refers
to an entry by its constant (:data:`SPARSE_SBLR`), never by writing its key or label out
(``tests/test_packaging.py`` finds such a literal outside this module and the tests).

Importing this module imports no estimator (the dashboard's first page needs no
scikit-learn): an entry names its factory, imported when it builds.

Examples
--------
>>> get("SparseSBLR") is get("sparse_sblr") is SPARSE_SBLR
True
>>> SPARSE_SBLR.takes_lam, SBLR.takes_lam, SML.layer, BR_SVM.decides_by_cut
(True, False, None, False)
>>> [m.label for m in DASHBOARD_MODELS]
['SML', 'SBLR', 'SparseSBLR']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "BR_SVM",
    "DASHBOARD_MODELS",
    "IBLR",
    "KNN",
    "LR",
    "LR_TUNED",
    "MLKNN",
    "NCM",
    "REGISTRY",
    "SBLR",
    "SML",
    "SPARSE_SBLR",
    "SPARSE_SBLR_PAPER",
    "LAYER_BUDGET",
    "LAYER_LIMIT",
    "LAYER_RATE",
    "Method",
    "get",
    "get_model",
]

#: Newton steps of a class's problem, and KKT checks of a screened one, in the cost model.
COST_NEWTON_STEPS = 8
COST_CHECKS = 3
#: What a class's problem costs beyond its arithmetic (the solver's Python steps, the cut's
#: share), in multiply-adds: enron's inner 5-fold selection (53 labels, 99 grid points, a fit
#: and 5 cut refits each) took 330 s for 157,000 class fits, 2 ms each, which at 1.7e10 a
#: second is about 4e7.
COST_PER_CLASS = 4e7
#: Multiply-adds a second of the logistic layer, to say a fit's cost in time.  Measured with
#: :func:`sblr.logistic.solve_layer` at λ = 0 (SBLR's layer) on random evidence, this
#: project's 2-core machine shared with other jobs (load 3): 502 × 174 in 2.0 s (1.4e10 a
#: second), 2,000 × 174 in 4.0 s (2.3e10), 5,000 × 174 at 0.07 s a class (1.8e10), 2,000 ×
#: 400 at 0.26 s a class (1.0e10); the evidence of delicious ran at 1.7e10
#: (:data:`sblr.protocol.SELECTION_BUDGET`).  A floor for the largest shapes: 12,920 × 983
#: took 58 s a class (1.7e9 a second, load 9; 16 hours for the fit).
LAYER_RATE = 1.5e10
#: Multiply-adds of one layer fit done without asking (about 7 s at :data:`LAYER_RATE`):
#: the dashboard fits a model beside the one chosen only within it (SBLR on Coefficients,
#: Contributions, Explain and the report) and offers it behind a button beyond it, and the
#: command line says what a fit beyond it costs before starting.  The one budget for both.
LAYER_BUDGET = 1e11
#: Multiply-adds of one layer fit beyond which it is not offered at all: an hour at
#: :data:`LAYER_RATE` (SBLR on delicious, 12,920 rows × 983 labels, is 1.0e14: two hours).
LAYER_LIMIT = 3600 * LAYER_RATE

_TASKS = frozenset({"multilabel", "multiclass"})


@dataclass(frozen=True, eq=False)
class Method:
    """A model or method: one entry of :data:`REGISTRY`.

    Attributes
    ----------
    key : str
        The short name: the key in :data:`REGISTRY`, the protocol's and the command line's
        ``--method``, the ``method`` column of benchmark results.
    label : str
        The name people read: the paper's column name; for the dashboard's models the name of
        its model picker, its links and of ``sblr fit --model``.
    factory_path : str
        ``"module:attribute"`` of the factory: ``factory(**params)`` builds an unfitted
        estimator (imported when first used, see :attr:`factory`).
    tuned : tuple of str
        Hyper-parameters the protocol selects per fold over its grid (``gamma``, ``lam``,
        ``C``).
    fixed : mapping
        Hyper-parameters held fixed.
    cut : bool
        Decides by a cut on its probabilities (``threshold``, :mod:`sblr.decision`): the
        similarity models; the baselines decide by their own rules.
    layer : {None, "l2", "l1"}
        Its logistic layer on the class evidence: L2 (SBLR: Newton steps on every evidence
        column), L1 (SparseSBLR: screened working sets, the compiled solver), or none.
    sparse : bool
        Keeps sparse features sparse (the similarity models); others take them dense.
    multiclass_only : bool
        Handles multi-class data only (no multi-label ``y``).
    picker : int or None
        Position in the dashboard's model picker (:data:`DASHBOARD_MODELS`); None: not there.
    defaults : frozenset of str
        The tasks ("multilabel", "multiclass") whose comparison runs it by default (Compare's
        first choice, ``sblr benchmark``'s ``--methods`` on multi-label data).
    words : str
        Its name in a sentence, where that differs from the table's ``label`` ("ML-kNN").
    """

    key: str
    label: str
    factory_path: str
    tuned: tuple = ()
    fixed: Mapping = field(default_factory=dict)
    cut: bool = False
    layer: str | None = None
    sparse: bool = False
    multiclass_only: bool = False
    picker: int | None = None
    defaults: frozenset = _TASKS
    words: str = ""

    def __post_init__(self):
        object.__setattr__(self, "fixed", MappingProxyType(dict(self.fixed)))

    def __repr__(self):
        return f"<Method {self.key} ({self.label})>"

    def __reduce__(self):
        """Pickled by its key: an entry is one of :data:`REGISTRY`, the same one unpickled."""
        return get, (self.key,)

    # ---------------------------------------------------------------- building
    @property
    def factory(self) -> Callable:
        """The estimator class or function (imported now)."""
        module, _, name = self.factory_path.partition(":")
        return getattr(importlib.import_module(module), name)

    def build(self, **params):
        """The estimator with ``fixed`` and then ``params`` applied."""
        return self.factory(**{**self.fixed, **params})

    def features(self, X):
        """``X`` as the method takes it: sparse stays sparse where it keeps sparse features
        (:attr:`sparse`); the others (the baselines, which scale with a shift to [-1, 1]) get
        it dense, within :data:`sblr.io.MAX_DENSE_MB`, else a :class:`DataError` with the
        numbers."""
        import numpy as np  # lazy: this module imports no numerical library
        import scipy.sparse as sp

        from sblr.exceptions import DataError
        from sblr.io import MAX_DENSE_MB

        if not sp.issparse(X):
            return np.asarray(X, dtype=np.float64)
        if self.sparse:
            return sp.csr_matrix(X, dtype=np.float64)
        needed = 8.0 * X.shape[0] * X.shape[1] / 2**20
        if needed > MAX_DENSE_MB:
            raise DataError(
                f"{self.label} needs dense features: these sparse data ({X.shape[0]:,} rows × "
                f"{X.shape[1]:,} columns) would need {needed:,.0f} MB, more than the limit of "
                f"{MAX_DENSE_MB:,} MB (sblr.io.MAX_DENSE_MB). Leave {self.key} out."
            )
        return X.toarray().astype(np.float64, copy=False)

    # ---------------------------------------------------------------- traits
    @property
    def takes_lam(self) -> bool:
        """Takes λ (an L1 layer's weight): selected by the protocol, a slider on the pages."""
        return "lam" in self.tuned

    @property
    def takes_gamma(self) -> bool:
        """Takes a kernel width γ."""
        return "gamma" in self.tuned

    @property
    def decides_by_cut(self) -> bool:
        """Decides by a cut on its probabilities (takes ``threshold``)."""
        return self.cut

    @property
    def learns_beta(self) -> bool:
        """Learns β, a logistic layer on the evidence (fitted from the cached evidence)."""
        return self.layer is not None

    @property
    def needs_compiled(self) -> bool:
        """Its fits need the compiled solver (:mod:`sblr._compiled`): the L1 layer."""
        return self.layer == "l1"

    @property
    def takes_sparse(self) -> bool:
        """Keeps sparse features sparse."""
        return self.sparse

    @property
    def in_dashboard(self) -> bool:
        """One of the dashboard's models (its model picker)."""
        return self.picker is not None

    @property
    def spoken(self) -> str:
        """Its name in a sentence."""
        return self.words or self.label

    def supports(self, task) -> bool:
        """Whether the method runs on a ``task`` ("multiclass"/"multilabel") data set."""
        return task == "multiclass" or not self.multiclass_only

    def default_for(self, task) -> bool:
        """Whether a comparison on ``task`` data runs it by default."""
        return task in self.defaults and self.supports(task)

    # ---------------------------------------------------------------- cost
    def layer_cost(self, n_samples, n_classes) -> float:
        """Multiply-adds of one fit of the logistic layer (0 without one): the L2 layer
        solves each of the m classes by Newton steps on all m evidence columns,
        ``8 · n · (m + 1)² · m``; the L1 layer (screened: each class on a working set of its
        few active columns, checked on every column, :mod:`sblr.logistic`) about
        ``3 · n · m · m``; each plus :data:`COST_PER_CLASS` per class.

        Examples
        --------
        >>> f"{SBLR.layer_cost(12920, 983):.1e}", f"{SPARSE_SBLR.layer_cost(12920, 983):.1e}"
        ('1.0e+14', '7.7e+10')
        """
        n, m = float(n_samples), float(n_classes)
        if self.layer == "l2":
            return COST_NEWTON_STEPS * n * (m + 1) ** 2 * m + COST_PER_CLASS * m
        if self.layer == "l1":
            return COST_CHECKS * n * m * m + COST_PER_CLASS * m
        return 0.0

    def layer_seconds(self, n_samples, n_classes) -> float:
        """Estimated seconds of one fit of the layer: :meth:`layer_cost` at
        :data:`LAYER_RATE`."""
        return self.layer_cost(n_samples, n_classes) / LAYER_RATE

    def layer_plan(self, n_samples, n_classes) -> str:
        """Whether one fit of its layer on this shape is done without asking: ``"auto"``
        within :data:`LAYER_BUDGET`, ``"ask"`` (offered, with its cost) up to
        :data:`LAYER_LIMIT`, else ``"refuse"`` (hours).  By shape, never by name.

        Examples
        --------
        >>> SBLR.layer_plan(502, 60), SBLR.layer_plan(4500, 374), SBLR.layer_plan(12920, 983)
        ('auto', 'ask', 'refuse')
        >>> SPARSE_SBLR.layer_plan(12920, 983), SML.layer_plan(12920, 983)
        ('auto', 'auto')
        """
        cost = self.layer_cost(n_samples, n_classes)
        if cost <= LAYER_BUDGET:
            return "auto"
        return "ask" if cost <= LAYER_LIMIT else "refuse"


_MODELS = "sblr.models"
_BASELINES = "sblr.baselines"
_SIMILARITY = dict(cut=True, sparse=True)

SPARSE_SBLR = Method(
    "sparse_sblr", "SparseSBLR", f"{_MODELS}:SparseSBLRClassifier", ("gamma", "lam"),
    layer="l1", picker=2, **_SIMILARITY,
)  # fmt: skip
SBLR = Method(
    "sblr", "SBLR", f"{_MODELS}:SBLRClassifier", ("gamma",), layer="l2", picker=1, **_SIMILARITY
)
SML = Method("sml", "SML", f"{_MODELS}:SMLClassifier", ("gamma",), picker=0, **_SIMILARITY)
#: SparseSBLR on the paper's layer input (the mean evidence f̄) beside the default log shares.
SPARSE_SBLR_PAPER = Method(
    "sparse_sblr_paper", "SparseSBLR (paper's f̄)", f"{_MODELS}:SparseSBLRClassifier",
    ("gamma", "lam"), {"normalize": "mean"}, layer="l1", defaults=frozenset(), **_SIMILARITY,
)  # fmt: skip
_MULTILABEL = frozenset({"multilabel"})
MLKNN = Method(
    "mlknn", "MLKNN", f"{_BASELINES}:MLkNNClassifier", (), {"k": 10}, defaults=_MULTILABEL,
    words="ML-kNN",
)  # fmt: skip
IBLR = Method("iblr", "IBLR", f"{_BASELINES}:IBLRClassifier", (), {"k": 10}, defaults=_MULTILABEL)
BR_SVM = Method(
    "br_svm", "BR-SVM", f"{_BASELINES}:BRSVMClassifier", ("gamma", "C"), defaults=_MULTILABEL
)
#: The leaderboard's yardstick: scikit-learn's model as a user tuning it for decisions fits it
#: (C and, multi-label, one cut chosen on 5 inner folds inside fit).
LR_TUNED = Method(
    "lr_tuned", "LR (tuned)", f"{_BASELINES}:tuned_lr_classifier", defaults=frozenset()
)
KNN = Method("knn", "kNN", f"{_BASELINES}:knn_classifier", (), {"k": 10}, multiclass_only=True)
NCM = Method("ncm", "NCM", f"{_BASELINES}:ncm_classifier", multiclass_only=True)
LR = Method("lr", "LR", f"{_BASELINES}:lr_classifier", multiclass_only=True)

#: Every method by key, in the column order of the paper's tables.
REGISTRY: Mapping[str, Method] = MappingProxyType(
    {
        m.key: m
        for m in (SPARSE_SBLR, SBLR, SML, SPARSE_SBLR_PAPER, MLKNN, IBLR, BR_SVM, LR_TUNED)
        + (KNN, NCM, LR)
    }
)

#: The dashboard's models, in its model picker's order.
DASHBOARD_MODELS: tuple[Method, ...] = tuple(
    sorted((m for m in REGISTRY.values() if m.in_dashboard), key=lambda m: m.picker)
)

_BY_LABEL = {m.label: m for m in REGISTRY.values()}


def get(name) -> Method:
    """The entry of ``name``: a :class:`Method`, a key or a label (model files, links and
    results written with either still open).

    Examples
    --------
    >>> get("sblr").label, get("BR-SVM").key
    ('SBLR', 'br_svm')
    >>> get("SVM")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Unknown method 'SVM'; choose from sparse_sblr, sblr, sml, ..., ncm, lr.
    """
    if isinstance(name, Method):
        return name
    entry = REGISTRY.get(name) or _BY_LABEL.get(name)
    if entry is None:
        raise ValueError(f"Unknown method {name!r}; choose from {', '.join(REGISTRY)}.")
    return entry


def get_model(name) -> Method:
    """The entry of one of the dashboard's models (:data:`DASHBOARD_MODELS`) by its entry,
    label or key: the names the dashboard's picker, its links and ``sblr fit --model`` use.

    Examples
    --------
    >>> get_model("SparseSBLR") is get_model("sparse_sblr") is SPARSE_SBLR
    True
    >>> get_model("BR-SVM")
    Traceback (most recent call last):
    ...
    ValueError: Unknown model 'BR-SVM'; choose one of SML, SBLR, SparseSBLR.
    """
    try:
        entry = get(name)
    except (TypeError, ValueError):  # unhashable, or no method at all
        entry = None
    if entry is None or not entry.in_dashboard:
        labels = ", ".join(m.label for m in DASHBOARD_MODELS)
        raise ValueError(f"Unknown model {name!r}; choose one of {labels}.")
    return entry
