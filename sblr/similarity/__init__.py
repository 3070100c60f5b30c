"""Class evidence: the similarity features every sblr model is built on.

For a row ``x`` and a class ``k`` the evidence is the summed similarity of ``x``
to the training rows of that class (Ma & Chen, Eq. 2)::

    f_k(x) = sum_{j in D_k} Phi(x, x_j)

The package keeps the math in small pure functions and wraps them in a scikit-learn
transformer, :class:`SimilarityFeaturizer`, that the classifiers in :mod:`sblr.models` use.
Its rooms, by question (every name below is imported from here):

* ``_exact``: the exact evidence -- kernels (:func:`kernel_block`), blocked and tiled sums
  with the leave-one-out term (:func:`class_evidence`), distances, normalization, checks;
* ``_feature_maps``: the approximate evidence through a Nystroem or random-Fourier map
  (:func:`make_feature_map`, :func:`approx_class_evidence`);
* ``_featurizer``: the estimator, :class:`SimilarityFeaturizer`, and the class coding
  (:func:`label_indicator`).

The scaling (:func:`minmax_fit`, :func:`minmax_transform`, :func:`resolve_gamma`) is in
:mod:`sblr.scaling` and when to approximate (:data:`AUTO_APPROX_ROWS`) in :mod:`sblr._approx`,
both free of scikit-learn for the dashboard's first page; their names are importable from
here too.
"""

from sblr._approx import AUTO_APPROX_ROWS, resolve_approx
from sblr.scaling import (  # noqa: F401 (private names some callers import from here)
    _column_frame,
    _scale_and_offset,
    minmax_fit,
    minmax_transform,
    resolve_gamma,
    scale_rows,
)
from sblr.similarity._exact import (
    DEFAULT_WORKING_MEMORY_MB,
    KERNELS,
    LOG_RATE_FLOOR,
    NONNEGATIVE_KERNELS,
    SPARSE_KERNELS,
    check_evidence,
    class_evidence,
    exp_in_place,
    kernel_block,
    normalize_evidence,
    rbf_evidence_from_sq_distances,
    sq_distances,
    with_total,
)
from sblr.similarity._feature_maps import (
    APPROX_METHODS,
    apply_feature_map,
    approx_class_evidence,
    approx_class_sums,
    make_feature_map,
)
from sblr.similarity._featurizer import (
    FEATURIZER_PARAMS,
    SimilarityFeaturizer,
    featurizer_for,
    label_indicator,
)

__all__ = [
    "APPROX_METHODS",
    "AUTO_APPROX_ROWS",
    "DEFAULT_WORKING_MEMORY_MB",
    "FEATURIZER_PARAMS",
    "KERNELS",
    "LOG_RATE_FLOOR",
    "NONNEGATIVE_KERNELS",
    "SPARSE_KERNELS",
    "SimilarityFeaturizer",
    "apply_feature_map",
    "approx_class_evidence",
    "approx_class_sums",
    "check_evidence",
    "class_evidence",
    "exp_in_place",
    "featurizer_for",
    "kernel_block",
    "label_indicator",
    "make_feature_map",
    "minmax_fit",
    "minmax_transform",
    "normalize_evidence",
    "rbf_evidence_from_sq_distances",
    "resolve_approx",
    "resolve_gamma",
    "scale_rows",
    "sq_distances",
    "with_total",
]
