"""Tables and significance tests over benchmark results (Demšar 2006).

Every function takes the long results table of
:func:`sblr.protocol.run_benchmark`: columns ``dataset, method, fold, metric,
value``.  A method's score on a data set is its mean over the folds.

* :func:`mean_std_table`: "mean ± std" over folds (population std, ``ddof=0``,
  as :func:`sblr.evaluation.summarize`).
* :func:`rank_table`: per data set, rank 1 for the best method (respecting
  :data:`sblr.metrics.LOWER_IS_BETTER`), ties sharing the average rank; the
  average rank of each method over the data sets.  Only data sets on which
  every ranked method has a value are used (methods with no value anywhere,
  e.g. kNN on multi-label metrics, are left out first).
* :func:`friedman_nemenyi`: Friedman's test (``scipy.stats.friedmanchisquare``,
  which corrects for ties), the Iman-Davenport F variant, Nemenyi's pairwise
  p-values (scikit-posthocs' ``posthoc_nemenyi_friedman``) and the critical
  difference ``CD = q_alpha sqrt(k (k+1) / (6 N))`` with ``q_alpha =
  studentized_range.ppf(1 - alpha, k, inf) / sqrt 2`` (scipy), Demšar's Eq. 5.
* :func:`cd_diagram`: a plotly critical-difference diagram.
* :func:`paper_tables_markdown`: the paper's tables, value (rank), best in bold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd

# plotly (cd_diagram), scipy.stats (the tests) and scikit-posthocs (Nemenyi; it imports
# statsmodels) are imported where they are used: the tables and the CLI's statistics do not
# draw, and scipy.stats and statsmodels take seconds to import.
from sblr._validation import Interval, StrOptions, validate_params
from sblr.metrics import LOWER_IS_BETTER, METRIC_LABELS
from sblr.registry import REGISTRY
from sblr.textsafe import escape_markdown

__all__ = [
    "Forecast",
    "FriedmanResult",
    "RankTable",
    "cd_diagram",
    "critical_difference",
    "fold_forecast",
    "friedman_nemenyi",
    "iman_davenport",
    "leaders",
    "markdown_table",
    "mean_std_table",
    "method_label",
    "one_dataset_reading",
    "paper_tables_markdown",
    "metric_ranks",
    "q_alpha",
    "rank_table",
]


# Parameter constraints (sblr._validation).  ``results`` is the long table of
# ``dataset, method, fold, metric, value`` rows; whether it holds what a function needs
# (a metric's rows, enough methods and data sets) is a property of the data, checked there.
_RESULTS = [pd.DataFrame]
_METRIC = [StrOptions(set(LOWER_IS_BETTER))]
_DECIMALS = [Interval(Integral, 0, None, closed="left"), None]
_ALPHA = [Interval(Real, 0, 1, closed="neither")]
_METHODS = [Interval(Integral, 2, None, closed="left")]  # k: at least 2 methods
_DATASETS = [Interval(Integral, 1, None, closed="left")]  # n: at least 1 data set


def method_label(name):
    """The paper's column name of a method (``"sparse_sblr"`` -> ``"SparseSBLR"``)."""
    return REGISTRY[name].label if name in REGISTRY else str(name)


def _order(values, reference):
    """Distinct ``values`` in the order of ``reference`` (others appended, sorted)."""
    present = list(dict.fromkeys(values))
    known = [v for v in reference if v in present]
    return known + sorted(v for v in present if v not in known)


def _method_order(methods):
    return _order(methods, list(REGISTRY))


@validate_params(
    {"results": _RESULTS, "decimals": [Interval(Integral, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def mean_std_table(results, *, decimals=3):
    """``"mean ± std"`` over folds, rows (dataset, method), one column per metric.

    Examples
    --------
    >>> r = pd.DataFrame({"dataset": "d", "method": "sml", "fold": [0, 1],
    ...                   "metric": "accuracy", "value": [0.9, 1.0]})
    >>> mean_std_table(r).loc[("d", "sml"), "accuracy"]
    '0.950 ± 0.050'
    """
    g = results.groupby(["dataset", "method", "metric"], sort=False)["value"]
    mean, std = g.mean(), g.std(ddof=0)
    cells = mean.map(lambda v: f"{v:.{decimals}f}") + " ± " + std.map(lambda v: f"{v:.{decimals}f}")
    cells[~np.isfinite(mean.to_numpy(dtype=float))] = "–"  # undefined: never "nan ± nan"
    table = cells.unstack("metric").fillna("–")
    metrics = _order(results["metric"], list(LOWER_IS_BETTER))
    table = table[[m for m in metrics if m in table.columns]]
    datasets = list(dict.fromkeys(results["dataset"]))
    methods = _method_order(results["method"])
    index = [(d, m) for d in datasets for m in methods if (d, m) in table.index]
    table = table.loc[index]
    table.columns.name = None
    return table


@validate_params(
    {"results": _RESULTS, "metrics": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def one_dataset_reading(results, metrics) -> list[str]:
    """A short reading of a comparison on ONE data set, as sentences for a reader.

    Which method is best on how many metrics; on how many metrics the best two differ by
    less than the larger of their standard deviations over the folds (the folds' own
    variation: this data set alone does not separate them); and that ranks over one data
    set only summarize, the paper's Friedman/Nemenyi test needing several.

    Examples
    --------
    >>> r = pd.DataFrame({"dataset": "d", "method": ["sml"] * 2 + ["sblr"] * 2,
    ...                   "fold": [0, 1] * 2, "metric": "accuracy",
    ...                   "value": [0.88, 0.94, 0.905, 0.895]})
    >>> for line in one_dataset_reading(r, ["accuracy"])[:2]: print(line)
    SML is best on 1 of 1 metric (accuracy).
    On 1 of 1 metric the best two differ by less than one standard deviation over the folds: this data set alone does not separate them.
    """  # noqa: E501
    metrics = [m for m in metrics if m in set(results["metric"])]
    g = results.groupby(["method", "metric"], sort=False)["value"]
    mean, std = g.mean().unstack("metric"), g.std(ddof=0).unstack("metric")
    firsts: dict = {}
    close = []
    for m in metrics:
        col = mean[m].dropna()
        if col.empty:
            continue
        order = col.sort_values(ascending=LOWER_IS_BETTER.get(m, False)).index
        firsts.setdefault(order[0], []).append(m)
        if len(order) > 1:
            gap = abs(col[order[0]] - col[order[1]])
            if gap < max(std.loc[order[0], m], std.loc[order[1], m]):
                close.append(m)
    n = len(metrics)
    noun = "metric" if n == 1 else "metrics"
    lines = []
    for method, won in sorted(firsts.items(), key=lambda kv: -len(kv[1])):
        names = ", ".join(METRIC_LABELS.get(m, m).rstrip(" ↑↓").lower() for m in won)
        lines.append(f"{method_label(method)} is best on {len(won)} of {n} {noun} ({names}).")
    if close:
        lines.append(
            f"On {len(close)} of {n} {noun} the best two differ by less than one standard "
            "deviation over the folds: this data set alone does not separate them."
        )
    lines.append(
        "Ranks over one data set only summarize this table. Whether a method is better in "
        "general is what the paper tests over many data sets (Friedman, then Nemenyi's "
        "critical difference): `python -m sblr benchmark DATA1 DATA2 … --methods …` runs "
        "the same protocol on several files and draws the critical-difference diagram."
    )
    return lines


@validate_params(
    {"results": _RESULTS, "metric": [str], "decimals": _DECIMALS},
    prefer_skip_nested_validation=True,
)
def mean_table(results, metric, *, decimals=None):
    """Mean over folds of ``metric``: rows data sets, columns methods (NaN where not run)."""
    sub = results[results["metric"] == metric]
    if sub.empty:
        raise ValueError(f"No results for metric {metric!r}.")
    means = sub.groupby(["dataset", "method"], sort=False)["value"].mean().unstack("method")
    means = means.reindex(
        index=list(dict.fromkeys(sub["dataset"])), columns=_method_order(sub["method"])
    )
    means.columns.name = None
    if decimals is not None:
        means = means.round(decimals)
    return means


@dataclass(frozen=True)
class RankTable:
    """Outcome of :func:`rank_table`.

    Attributes
    ----------
    values : DataFrame
        Mean score per data set (rows) and method (columns), complete blocks only.
    ranks : DataFrame
        Rank of each method on each data set (1 = best, ties averaged).
    average : Series
        Mean rank of each method over the data sets.
    metric : str
    dropped_datasets : list of str
        Data sets left out because some ranked method has no value there.
    """

    values: pd.DataFrame
    ranks: pd.DataFrame
    average: pd.Series
    metric: str
    dropped_datasets: list


@validate_params(
    {"results": _RESULTS, "metric": _METRIC, "decimals": _DECIMALS},
    prefer_skip_nested_validation=True,
)
def rank_table(results, metric, *, decimals=None):
    """Per-data-set ranks (1 = best, ties averaged) and average ranks for ``metric``.

    Parameters
    ----------
    results : DataFrame
        Long results (``dataset, method, fold, metric, value``).
    metric : str
    decimals : int, optional
        Round the mean scores before ranking (the paper ranks the printed
        3-decimal values, so equal printed values tie).

    Returns
    -------
    RankTable

    Examples
    --------
    >>> r = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "method": ["sml", "sblr"] * 2,
    ...                   "fold": 0, "metric": "hamming_loss", "value": [0.1, 0.2, 0.3, 0.3]})
    >>> rank_table(r, "hamming_loss").average.to_dict()
    {'sblr': 1.75, 'sml': 1.25}
    """
    means = mean_table(results, metric, decimals=decimals)
    means = means.dropna(axis=1, how="all")
    complete = means.notna().all(axis=1)
    dropped = [str(d) for d in means.index[~complete]]
    means = means[complete]
    ranks = means.rank(axis=1, method="average", ascending=LOWER_IS_BETTER[metric])
    return RankTable(means, ranks, ranks.mean(axis=0), metric, dropped)


@validate_params(
    {
        "results": _RESULTS,
        "metrics": ["array-like"],
        "methods": ["array-like", None],
        "decimals": _DECIMALS,
        "labels": [Mapping, None],
    },
    prefer_skip_nested_validation=True,
)
def metric_ranks(results, metrics, *, methods=None, decimals=None, labels=None):
    """Ranks of the methods on each metric of one data set, and their average rank.

    Parameters
    ----------
    results : pandas.DataFrame
        ``dataset, method, fold, metric, value`` rows of ONE data set.
    metrics : sequence of str
        The metrics, in column order.
    methods : sequence of str, optional
        Row order (default: :func:`rank_table`'s).
    decimals : int, optional
        Rank the means as printed with this many decimals (equal printed values share the
        average rank, as in the paper's tables).
    labels : mapping of str to str, optional
        Column names for the metrics (default: the metric names).

    Returns
    -------
    pandas.DataFrame
        Index ``method``; one rank column per metric (1 = best), then ``"Average rank"``.
    """
    labels = dict(labels or {})
    columns = {
        labels.get(m, m): rank_table(results, m, decimals=decimals).ranks.iloc[0] for m in metrics
    }
    ranks = pd.DataFrame(columns)
    if methods is not None:
        ranks = ranks.reindex(list(methods))
    ranks.index.name = "method"
    ranks["Average rank"] = ranks[list(columns)].mean(axis=1)
    return ranks


@validate_params(
    {"k": _METHODS, "alpha": _ALPHA},
    prefer_skip_nested_validation=True,
)
def q_alpha(k, alpha=0.05):
    """Critical value of the two-tailed Nemenyi test for ``k`` methods (Demšar's Table 5a).

    ``studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)``.

    Examples
    --------
    >>> round(q_alpha(4), 3), round(q_alpha(10, 0.10), 3)
    (2.569, 2.92)
    """
    from scipy import stats as ss

    return float(ss.studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0))


@validate_params(
    {"k": _METHODS, "n": _DATASETS, "alpha": _ALPHA},
    prefer_skip_nested_validation=True,
)
def critical_difference(k, n, alpha=0.05):
    """Nemenyi critical difference ``q_alpha sqrt(k (k + 1) / (6 N))`` for k methods, N data sets.

    Examples
    --------
    >>> round(critical_difference(4, 14), 2)
    1.25
    """
    return q_alpha(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n)))


@dataclass(frozen=True)
class FriedmanResult:
    """Outcome of :func:`friedman_nemenyi`.

    Attributes
    ----------
    statistic, pvalue : float
        Friedman's chi-square (scipy, tie-corrected) and its p-value.
    iman_davenport, iman_davenport_pvalue : float
        ``F_F = (N - 1) chi2 / (N (k - 1) - chi2)`` with (k - 1, (k - 1)(N - 1))
        degrees of freedom (Demšar's recommended form).
    average_ranks : Series
    nemenyi : DataFrame
        Pairwise Nemenyi p-values (1 on the diagonal).
    cd : float
        Critical difference at ``alpha``.
    q_alpha : float
    alpha : float
    n_datasets, n_methods : int
    """

    statistic: float
    pvalue: float
    iman_davenport: float
    iman_davenport_pvalue: float
    average_ranks: pd.Series
    nemenyi: pd.DataFrame
    cd: float
    q_alpha: float
    alpha: float
    n_datasets: int
    n_methods: int


@validate_params(
    {"values": [pd.DataFrame]},
    prefer_skip_nested_validation=True,
)
def nemenyi_pvalues(values):
    """Pairwise Nemenyi p-values after a Friedman test, by scikit-posthocs.

    Parameters
    ----------
    values : DataFrame of shape (n_datasets, n_methods)
        One score per data set and method, oriented so that smaller is better
        (the direction does not change the p-values).

    Returns
    -------
    DataFrame
        Indexed and columned by the methods (``posthoc_nemenyi_friedman``).
    """
    import scikit_posthocs

    p = scikit_posthocs.posthoc_nemenyi_friedman(np.asarray(values, dtype=float))
    return pd.DataFrame(np.asarray(p, dtype=float), index=values.columns, columns=values.columns)


@validate_params(
    {"chi2": [Interval(Real, 0, None, closed="left")], "n": _DATASETS, "k": _METHODS},
    prefer_skip_nested_validation=True,
)
def iman_davenport(chi2, n, k):
    """Iman-Davenport ``F_F = (N - 1) chi2 / (N (k - 1) - chi2)`` and its p-value.

    ``F_F`` follows the F distribution with ``k - 1`` and ``(k - 1)(N - 1)``
    degrees of freedom; it is infinite (p = 0) when every data set ranks the
    methods alike.

    Examples
    --------
    >>> f, p = iman_davenport(9.28, 14, 4)  # Demšar (2006), Section 3.2.2
    >>> round(f, 2)
    3.69
    """
    denom = n * (k - 1) - chi2
    if denom <= 1e-9 * n * (k - 1):
        return np.inf, 0.0
    ff = (n - 1) * chi2 / denom
    from scipy import stats as ss

    return float(ff), float(ss.f.sf(ff, k - 1, (k - 1) * (n - 1)))


@validate_params(
    {"results": _RESULTS, "metric": _METRIC, "alpha": _ALPHA, "decimals": _DECIMALS},
    prefer_skip_nested_validation=True,
)
def friedman_nemenyi(results, metric, *, alpha=0.05, decimals=None):
    """Friedman test, Nemenyi post-hoc p-values and the critical difference for ``metric``.

    Needs at least 3 methods and 2 data sets with values for all of them.

    Returns
    -------
    FriedmanResult
    """
    table = rank_table(results, metric, decimals=decimals)
    n, k = table.ranks.shape
    if k < 3 or n < 2:
        raise ValueError(
            f"The Friedman test needs at least 3 methods and 2 data sets with a {metric} "
            f"value for every method; got {k} method(s) on {n} data set(s)."
        )
    # scipy ranks ascending; negate greater-is-better scores so rank 1 is best either way.
    sign = 1.0 if LOWER_IS_BETTER[metric] else -1.0
    oriented = sign * table.values
    from scipy import stats as ss

    stat, pvalue = ss.friedmanchisquare(*(oriented[c].to_numpy() for c in oriented))
    stat = float(stat)
    ff, ff_p = iman_davenport(stat, n, k)
    return FriedmanResult(
        statistic=stat,
        pvalue=float(pvalue),
        iman_davenport=float(ff),
        iman_davenport_pvalue=ff_p,
        average_ranks=table.average,
        nemenyi=nemenyi_pvalues(oriented),
        cd=critical_difference(k, n, alpha),
        q_alpha=q_alpha(k, alpha),
        alpha=alpha,
        n_datasets=n,
        n_methods=k,
    )


@validate_params(
    {"average_ranks": [pd.Series], "cd": [Interval(Real, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def cliques(average_ranks, cd):
    """Maximal groups of methods whose average ranks differ by less than ``cd``.

    Returns
    -------
    list of list of str
        Each group in rank order; single methods are not listed.

    Examples
    --------
    >>> cliques(pd.Series({"a": 1.0, "b": 1.5, "c": 2.8, "d": 3.1}), 1.0)
    [['a', 'b'], ['c', 'd']]
    """
    s = pd.Series(average_ranks, dtype=float).sort_values(kind="stable")
    names, r = list(s.index), s.to_numpy()
    groups, reach = [], -1
    for i in range(len(r)):
        j = i
        while j + 1 < len(r) and r[j + 1] - r[i] < cd:
            j += 1
        if j > i and j > reach:
            groups.append(names[i : j + 1])
            reach = j
    return groups


@validate_params(
    {
        "average_ranks": [pd.Series],
        "cd": [Interval(Real, 0, None, closed="left")],
        "title": [str, None],
        "labels": [callable, None],
    },
    prefer_skip_nested_validation=True,
)
def cd_diagram(average_ranks, cd, *, title=None, labels=None):
    """Critical-difference diagram (Demšar 2006, Fig. 1) as a plotly figure.

    Methods sit on a rank axis (1 = best, on the left); a bar above the axis
    shows the CD, and thick lines join methods not significantly different.

    Parameters
    ----------
    average_ranks : Series
        Method -> average rank.
    cd : float
    title : str, optional
    labels : callable, optional
        Method name -> display name (default :func:`method_label`).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    import plotly.graph_objects as go

    labels = labels or method_label
    s = pd.Series(average_ranks, dtype=float).sort_values(kind="stable")
    k = len(s)
    lo, hi = 1, max(k, int(np.ceil(s.max())))
    # the lines and labels are gathered and the figure made in one go.Figure call: each
    # add_shape / add_annotation checks the whole figure again
    shapes, annotations = [], []
    axis_y, line = 0.0, {"color": "black", "width": 1}
    shapes.append(dict(type="line", x0=lo, x1=hi, y0=axis_y, y1=axis_y, line=line))
    for t in range(lo, hi + 1):
        shapes.append(dict(type="line", x0=t, x1=t, y0=axis_y, y1=axis_y + 0.15, line=line))
        annotations.append(
            dict(x=t, y=axis_y + 0.2, text=str(t), showarrow=False, yanchor="bottom")
        )
    # CD bar above the axis, starting at rank 1
    cd_y = axis_y + 0.8
    shapes.append(dict(type="line", x0=lo, x1=lo + cd, y0=cd_y, y1=cd_y, line={"width": 2}))
    for x in (lo, lo + cd):
        shapes.append(dict(type="line", x0=x, x1=x, y0=cd_y - 0.08, y1=cd_y + 0.08, line=line))
    annotations.append(
        dict(x=lo + cd / 2, y=cd_y + 0.1, text=f"CD = {cd:.3f}", showarrow=False, yanchor="bottom")
    )
    # methods: the better half labelled on the left, the rest on the right
    half = (k + 1) // 2
    for i, (name, r) in enumerate(s.items()):
        left = i < half
        depth = -0.6 - 0.35 * (i if left else k - 1 - i)
        end_x = lo - 0.2 if left else hi + 0.2
        shapes.append(dict(type="line", x0=r, x1=r, y0=axis_y, y1=depth, line=line))
        shapes.append(dict(type="line", x0=r, x1=end_x, y0=depth, y1=depth, line=line))
        annotations.append(
            dict(
                x=end_x,
                y=depth,
                text=f"{labels(name)} ({r:.2f})",
                showarrow=False,
                xanchor="right" if left else "left",
            )
        )
    # cliques: thick bars just below the axis
    for g, group in enumerate(cliques(s, cd)):
        y = axis_y - 0.15 - 0.12 * g
        shapes.append(
            dict(
                type="line",
                x0=s[group[0]] - 0.03,
                x1=s[group[-1]] + 0.03,
                y0=y,
                y1=y,
                line={"color": "black", "width": 5},
            )
        )
    bottom = -0.6 - 0.35 * max(half, k - half)
    layout = dict(
        xaxis={"visible": False, "range": [lo - 2.2, hi + 2.2]},
        yaxis={"visible": False, "range": [bottom - 0.3, cd_y + 0.6]},
        plot_bgcolor="white",
        height=max(260, int(120 + 45 * k)),
        showlegend=False,
        margin={"l": 20, "r": 20, "t": 60 if title else 20, "b": 20},
        shapes=shapes,
        annotations=annotations,
    )
    if title is not None:
        layout["title"] = title
    return go.Figure(layout=layout)


@validate_params(
    {"values": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def leaders(values):
    """The names holding the smallest value (a tie lists them all, in order): the best
    average rank, where two methods on 1.60 are both first.

    Examples
    --------
    >>> leaders(pd.Series({"SML": 1.6, "BR-SVM": 1.6000000000000003, "SBLR": 2.8}))
    ['SML', 'BR-SVM']
    """
    rounded = pd.Series(values, dtype=float).round(9)  # a float's last bit is not a lead
    return [str(name) for name in rounded.index[rounded == rounded.min()]]


@dataclass(frozen=True)
class Forecast:
    """Seconds a cross-validation still needs, method by method (:func:`fold_forecast`).

    Attributes
    ----------
    seconds : dict
        Method -> seconds left (0 when done), or None when none of its folds is timed yet
        and there is no prior for it.
    known : float
        The sum of the known seconds left.
    untimed : tuple
        The methods with work left whose time is unknown.
    """

    seconds: dict
    known: float
    untimed: tuple


@validate_params(
    {"timed": [Mapping], "remaining": [Mapping], "prior": [Mapping, None]},
    prefer_skip_nested_validation=True,
)
def fold_forecast(timed, remaining, prior=None):
    """Seconds each method still needs: its folds left times the mean of its folds timed on
    this machine (selection and final fit of each), updated after every fold.

    One average over all methods misleads: BR-SVM's folds took 40 times SML's, so a run
    forecast "about 64 s" after the quick methods and took 457 s. A method none of whose
    folds is timed yet takes its ``prior`` seconds per fold when given (an estimate, e.g.
    :func:`sblr.baselines.brsvm_seconds_estimate` / folds), else it is unknown.

    Parameters
    ----------
    timed : mapping
        Method -> sequence of seconds of its folds computed so far.
    remaining : mapping
        Method -> number of its folds still to compute.
    prior : mapping, optional
        Method -> seconds per fold to assume until one of its folds is timed.

    Returns
    -------
    Forecast

    Examples
    --------
    >>> f = fold_forecast({"sml": [1.0, 3.0], "br_svm": []}, {"sml": 3, "br_svm": 10, "lr": 2})
    >>> f.seconds, f.known, f.untimed
    ({'sml': 6.0, 'br_svm': None, 'lr': None}, 6.0, ('br_svm', 'lr'))
    >>> fold_forecast({"sml": [2.0]}, {"sml": 0, "br_svm": 4}, prior={"br_svm": 30.0}).known
    120.0
    """
    prior = prior or {}
    seconds = {}
    for method, left in remaining.items():
        left = int(left)
        if left < 0:
            raise ValueError(f"{method!r} has {left} folds left; it must be >= 0.")
        times = [float(t) for t in timed.get(method, ())]
        if not left:
            seconds[method] = 0.0
        elif times:
            seconds[method] = left * float(np.mean(times))
        elif method in prior:
            seconds[method] = left * float(prior[method])
        else:
            seconds[method] = None
    known = float(sum(v for v in seconds.values() if v is not None))
    untimed = tuple(m for m, v in seconds.items() if v is None)
    return Forecast(seconds, known, untimed)


@validate_params(
    {"df": [pd.DataFrame]},
    prefer_skip_nested_validation=True,
)
def markdown_table(df):
    """A DataFrame as a Markdown table (no index; cells as ``str``; NaN as empty).

    Cells are written as they are: pass text from a user's file (data set
    names) through :func:`sblr.textsafe.escape_markdown` first.

    Examples
    --------
    >>> print(markdown_table(pd.DataFrame({"a": [1, None], "b": ["x", "y"]})))
    | a | b |
    |---|---|
    | 1.0 | x |
    |  | y |
    """
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "---|" * len(df.columns)
    body = [
        "| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |"
        for row in df.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body])


@validate_params(
    {
        "results": _RESULTS,
        "metrics": ["array-like", None],
        "decimals": [Interval(Integral, 0, None, closed="left")],
        "alpha": _ALPHA,
    },
    prefer_skip_nested_validation=True,
)
def paper_tables_markdown(results, *, metrics=None, decimals=3, alpha=0.05):
    """The paper's tables in Markdown: one per metric, "value (rank)", best in bold.

    Rows are data sets, columns methods (the paper's names); the last row is
    the average rank.  Ranks use the values as printed (rounded to
    ``decimals``).  Below each table, the Friedman test when there are at least
    3 methods and 2 data sets.  Data set names are escaped
    (:func:`sblr.textsafe.escape_markdown`), so a name cannot break a table.

    Returns
    -------
    str
    """
    if metrics is None:
        metrics = _order(results["metric"], list(LOWER_IS_BETTER))
    out = []
    for metric in metrics:
        t = rank_table(results, metric, decimals=decimals)
        if t.values.empty:
            continue
        cols = list(t.values.columns)
        out.append(f"### {METRIC_LABELS.get(metric, metric)}\n")
        out.append("| dataset | " + " | ".join(method_label(c) for c in cols) + " |")
        out.append("|---|" + "---:|" * len(cols))
        for d, row in t.values.iterrows():
            best = row.min() if LOWER_IS_BETTER[metric] else row.max()
            cells = []
            for c in cols:
                cell = f"{row[c]:.{decimals}f} ({t.ranks.loc[d, c]:g})"
                cells.append(f"**{cell}**" if row[c] == best else cell)
            out.append(f"| {escape_markdown(d, readable=True)} | " + " | ".join(cells) + " |")
        best_avg = t.average.min()
        avg = [
            f"**{t.average[c]:.2f}**" if t.average[c] == best_avg else f"{t.average[c]:.2f}"
            for c in cols
        ]
        out.append("| average rank | " + " | ".join(avg) + " |")
        if t.dropped_datasets:
            left_out = ", ".join(escape_markdown(d, readable=True) for d in t.dropped_datasets)
            out.append(f"\nLeft out (a method has no value): {left_out}.")
        n, k = t.ranks.shape
        if k >= 3 and n >= 2:
            fr = friedman_nemenyi(results, metric, alpha=alpha, decimals=decimals)
            out.append(
                f"\nFriedman χ² = {fr.statistic:.3f} (p = {fr.pvalue:.3g}); "
                f"Iman-Davenport F = {fr.iman_davenport:.3f} (p = {fr.iman_davenport_pvalue:.3g}); "
                f"Nemenyi CD (α = {alpha:g}) = {fr.cd:.3f} over {n} data sets."
            )
        out.append("")
    return "\n".join(out)
