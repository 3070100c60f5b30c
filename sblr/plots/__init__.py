"""Plotly figures for the dashboard: pure functions from arrays to figures.

Nothing here fits a classifier: every function takes arrays (or the tables of
:mod:`sblr.interpret`) and returns a :class:`plotly.graph_objects.Figure`; the one
computation is :func:`pca_coordinates`, the 2-D projection the PCA scatter draws.
The figures are meant to stay readable from 6 to ~174 classes (CAL500):
with more than :data:`MAX_TICK_LABELS` classes the per-class tick labels are
hidden (hover a cell or bar for its name; drag to zoom, double-click to
reset) and heights grow with the number of classes up to a cap.

Colour conventions, shared by all figures
-----------------------------------------
* Coefficients beta_t^k and logit contributions: **red = positive** (raises
  class k's logit/probability), **blue = negative** (lowers it), **white =
  exactly zero** (the evidence of class t is ignored -- SparseSBLR's point).
  Non-zero values, however small, get at least a pale tint.
* |beta| (``signed=False``): light orange -> dark red, white = exactly zero.
* Counts (co-occurrence, confusion matrix, class frequency): purples; in the
  co-occurrence heatmap, white = never together.
* Matrices: rows = target / true class k (class 0 at the top), columns =
  evidence / predicted class t.
* Classes: :func:`class_colors`; the catch-all
  "other" group is light grey.

Modules
-------
* ``heatmaps``: β, label co-occurrence, selection frequency (class by class).
* ``data``: class frequencies, the PCA of the rows.
* ``explain``: one row's logit and feature attributions (waterfalls), its class
  probabilities, the rows in the evidence space of two classes.
* ``paths``: along the λ grid (regularization path, rank agreement).
* ``evaluation``: precision-recall curve, confusion matrix, metric bars.
* ``playground``: the Playground's plane (a ring per class of a point) and its error curve.
* ``export``: :func:`figure_html`.
* ``_style``: the colours and sizes above, input checks and layout helpers.

Every public name is importable from here (``from sblr.plots import waterfall``).

Examples
--------
>>> import numpy as np
>>> B = np.array([[2.0, -0.5], [0.0, 1.0]])
>>> fig = beta_heatmaps({"SBLR": B, "SparseSBLR": np.diag([1.5, 0.8])}, ["cat", "dog"])
>>> [trace.type for trace in fig.data]
['heatmap', 'heatmap']
>>> fig.layout.coloraxis.cmax, fig.layout.coloraxis2.cmax   # one colour scale per panel
(2.0, 1.5)
>>> list(fig.layout.yaxis.range)   # class 0 at the top
[1.5, -0.5]
"""

from __future__ import annotations

# plotly is imported by the functions that draw (a second or so): the statistics, the report's
# tables and the command line import this package's modules without drawing anything.
# The names marked noqa are public (pages, tests) but were never listed in __all__.
from sblr.plots._style import (
    BETA_ABS_COLORSCALE,
    BETA_COLORSCALE,
    COUNT_COLOR,  # noqa: F401 (public, not in __all__)
    COUNT_COLORSCALE,
    MAX_HEIGHT,  # noqa: F401 (public, not in __all__)
    MAX_TICK_LABELS,
    NEGATIVE_COLOR,
    OTHER_COLOR,
    POSITIVE_COLOR,
    PREDICTED_COLOR,
    TOTAL_COLOR,  # noqa: F401 (public, not in __all__)
    class_colors,
)
from sblr.plots.data import label_frequency_bar, pca_coordinates, pca_scatter
from sblr.plots.evaluation import confusion_matrix_figure, pr_curve_figure, tuning_heatmap
from sblr.plots.explain import (
    attribution_waterfall,  # noqa: F401 (public, not in __all__)
    evidence_scatter,
    feature_importance_bars,
    probability_bars,
    waterfall,
)
from sblr.plots.export import figure_html
from sblr.plots.heatmaps import (
    beta_heatmaps,
    cooccurrence_heatmap,
    selection_frequency_heatmap,  # noqa: F401 (public, not in __all__)
)
from sblr.plots.paths import rank_agreement_figure, regularization_path
from sblr.plots.playground import error_curve, playground_plane

__all__ = [
    "BETA_ABS_COLORSCALE",
    "BETA_COLORSCALE",
    "COUNT_COLORSCALE",
    "MAX_TICK_LABELS",
    "NEGATIVE_COLOR",
    "OTHER_COLOR",
    "POSITIVE_COLOR",
    "PREDICTED_COLOR",
    "beta_heatmaps",
    "class_colors",
    "confusion_matrix_figure",
    "evidence_scatter",
    "feature_importance_bars",
    "cooccurrence_heatmap",
    "error_curve",
    "figure_html",
    "label_frequency_bar",
    "pca_coordinates",
    "pca_scatter",
    "playground_plane",
    "pr_curve_figure",
    "probability_bars",
    "rank_agreement_figure",
    "regularization_path",
    "tuning_heatmap",
    "waterfall",
]
