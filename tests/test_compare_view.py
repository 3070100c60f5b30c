"""The Compare methods page's view (pages/_shared/views/compare.py), called directly: no
AppTest.

A run through the dashboard's compute layer (:func:`pages._shared.long_jobs.compare_methods`)
must give the numbers of the command line's protocol (:func:`sblr.protocol.run_benchmark`,
the same folds and grid), and the view's table and ranks are recomputed here with pandas
and scipy from those results. The page's AppTest tests are in tests/test_compare_page.py.
"""

from __future__ import annotations

import html
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import rankdata

from pages._shared.long_jobs import compare_methods
from pages._shared.questions import Protocol
from pages._shared.views import compare as view
from sblr.baselines import brsvm_seconds_estimate
from sblr.protocol import run_benchmark
from sblr.stats import fold_forecast

METHODS = ("sml", "ncm")  # in the registry's order; SML tunes γ on the quick grid


@pytest.fixture(scope="module")
def run(wine):
    protocol = Protocol.of(3, view.GRIDS["quick"], "fitted")
    results, hyper = compare_methods(wine, METHODS, protocol)
    return protocol, results, hyper


@pytest.mark.slow  # SML and NCM over 3 folds, twice (3 s)
def test_a_run_is_the_command_lines_protocol_and_the_tables_are_its_means_and_ranks(wine, run):
    protocol, results, hyper = run
    cli, _ = run_benchmark(
        wine, list(METHODS), folds=3, grid=protocol.plain_grid, progress=False,
        metric=protocol.metric(wine.task), threshold=protocol.threshold,
    )  # fmt: skip
    key = ["method", "fold", "metric"]
    np.testing.assert_allclose(
        results.sort_values(key)["value"].to_numpy(), cli.sort_values(key)["value"].to_numpy()
    )
    shown = view.compare_view(
        wine, {"methods": METHODS, "grid": "quick"}, protocol, (results, hyper), elapsed=0.0
    )
    assert html.unescape(shown.heading) == "wine: 3-fold cross-validation"
    assert shown.caption.endswith("· from the cache") and "Quick grid" in shown.caption
    means = results.groupby(["method", "metric"])["value"].agg(["mean", "std"])
    for metric in results["metric"].unique():
        column = [c for c in shown.table.columns if c.lower().startswith(metric[:4])][0]
        for method, label in zip(METHODS, ("SML", "NCM"), strict=True):
            mean, sd = means.loc[(method, metric)]
            assert shown.table.loc[label, column].startswith(f"{mean:.3f} ± ")
        # ranks of the printed means (higher is better for wine's metrics), average on ties
        printed = [round(means.loc[(m, metric), "mean"], 3) for m in METHODS]
        np.testing.assert_allclose(shown.ranks[column], rankdata([-v for v in printed]))
    average = shown.ranks.drop(columns="Average rank").mean(axis=1)
    np.testing.assert_allclose(shown.ranks["Average rank"], average)
    best = shown.ranks["Average rank"].idxmin()
    assert shown.best.startswith(f"**Best average rank:** {best} (")
    # the selections: folds from 1, γ as the sliders write it, "–" where a method has none
    assert list(shown.hyper["fold"]) == [1, 2, 3, 1, 2, 3]
    assert set(shown.hyper.loc[shown.hyper["method"] == "NCM", "γ"]) == {"–"}
    assert set(shown.hyper.loc[shown.hyper["method"] == "SML", "γ"]) <= {"1", "1e-1", "1e-2"}
    assert shown.no_label is None  # multi-class: every row gets its class
    assert shown.stem == "wine_compare_3fold_quick"


def test_brsvm_with_the_papers_grid_is_refused_above_the_limit_and_left_out_by_default():
    small = SimpleNamespace(
        name="small", n_samples=200, n_features=8, n_classes=5, task="multilabel"
    )
    large = SimpleNamespace(
        name="large", n_samples=20_000, n_features=50, n_classes=100, task="multilabel"
    )
    warning, refused = view.brsvm_cost(large, ["br_svm"], "paper", 10)
    seconds = brsvm_seconds_estimate(20_000, 100, 10)
    assert refused and seconds > view.BRSVM_LIMIT_SECONDS
    assert f"about {seconds / 60:.0f} min of CPU on large" in warning
    warning, refused = view.brsvm_cost(small, ["br_svm"], "paper", 10)
    assert not refused and warning.startswith("BR-SVM with the paper's grid is slow")
    assert view.brsvm_cost(large, ["br_svm"], "quick", 10) == (None, False)
    assert view.brsvm_cost(large, ["sml"], "paper", 10) == (None, False)
    choice = view.default_choice(large)
    assert "br_svm" in choice.options and "br_svm" not in choice.methods
    assert choice.note_for(choice.methods) and choice.note_for(["br_svm"]) is None
    assert "br_svm" in view.default_choice(small).methods
    assert view.waiting_text(["sml"], True).startswith("**Run cross-validation** waits")


def test_the_progress_line_says_what_runs_and_what_is_left_method_by_method():
    forecast = fold_forecast({"sml": [2.0, 4.0], "ncm": []}, {"sml": 1, "ncm": 3})
    assert view.progress_text("sml", 2, 3, forecast) == (
        "SML, fold 3 of 3 · left: SML 3.0 s, NCM not timed yet · about 3.0 s in all and the untimed"
    )
    assert view.duration(4.23) == "4.2 s" and view.duration(185) == "3 min"
