"""Interpreting fitted SBLR / SparseSBLR models: pure functions for the dashboard.

A fitted model exposes ``coef_`` (m, m) with ``coef_[k, t]`` = beta_t^k, the
weight of class ``t``'s normalised evidence in class ``k``'s logit,
``intercept_`` (m,), ``classes_`` (m,) and ``featurizer_.transform(X)`` giving
the normalised class evidence f̄ (n, m).  The logits are
``Z = f̄ @ coef_.T + intercept_`` and the probabilities ``sigmoid(Z)``.

Nothing here imports :mod:`sblr.models`; any object with those attributes
works, which is how the examples below build a stand-in model.

Examples
--------
>>> import numpy as np
>>> from types import SimpleNamespace
>>> Y = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1]])
>>> cooccurrence(Y)
array([[2, 1, 0],
       [1, 2, 1],
       [0, 1, 1]])
>>> featurizer = SimpleNamespace(transform=lambda X: np.asarray(X, dtype=float))
>>> model = SimpleNamespace(
...     coef_=np.array([[2.0, 0.5, 0.0], [0.5, 2.0, 1.0], [0.0, -1.0, 3.0]]),
...     intercept_=np.array([-1.0, -1.0, -2.0]),
...     classes_=np.arange(3),
...     featurizer_=featurizer,
... )
>>> contribution_table(model, Y, 1, class_names=["wren", "jay", "owl"])
  class  cooccurrence  beta
t
1   jay             2   2.0
0  wren             1   0.5
2   owl             1   1.0
>>> ic = instance_contributions(model, [1.0, 0.5, 0.0])
>>> ic.logits
array([ 1.25,  0.5 , -2.5 ])

Scale-free coefficients: beta times the spread of the evidence it multiplies.

>>> F = np.array([[0.1, 0.0, 0.3], [0.3, 1.0, 0.5]])   # two training rows; sd = 0.1, 0.5, 0.1
>>> standardized_coef(model, F)
array([[ 0.2 ,  0.25,  0.  ],
       [ 0.05,  1.  ,  0.1 ],
       [ 0.  , -0.5 ,  0.3 ]])
"""

from sblr.interpret.claims import (
    ClaimCheck,
    check_claim,
    family_threshold,
    rank_agreement_path,
    readings_at,
    spearman,
    zero_readings,
)
from sblr.interpret.coefficients import (
    class_affinity,
    cluster_order,
    conditional_frequency,
    contribution_table,
    cooccurrence,
    entry_lambdas,
    evidence_sd,
    frequent_classes,
    label_sets,
    sparsity_summary,
    standardized_coef,
    starting_class,
    top_classes,
)
from sblr.interpret.rows import (
    InstanceContributions,
    all_alike_reason,
    decision_line,
    instance_contributions,
    predicted_share,
    select_rows,
)

__all__ = [
    "ClaimCheck",
    "InstanceContributions",
    "all_alike_reason",
    "check_claim",
    "class_affinity",
    "conditional_frequency",
    "contribution_table",
    "cooccurrence",
    "decision_line",
    "entry_lambdas",
    "evidence_sd",
    "family_threshold",
    "frequent_classes",
    "label_sets",
    "instance_contributions",
    "predicted_share",
    "rank_agreement_path",
    "readings_at",
    "select_rows",
    "sparsity_summary",
    "spearman",
    "standardized_coef",
    "starting_class",
    "top_classes",
    "cluster_order",
    "zero_readings",
]
