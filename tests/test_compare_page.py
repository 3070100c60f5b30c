"""The "Compare methods" page (pages/compare.py), driven headless with AppTest.

As in test_app.py, every test starts its own session on app.py and reaches the
page with ``switch_page``.  ``run_fold`` is spied on, and the page's fold cache
cleared first, so the tests can tell computed folds from cached ones.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import (
    assert_clean,
    download,
    goto,
    load_upload,
    shown_numbers,
    start,
)
from streamlit.testing.v1 import AppTest

from pages._shared import long_jobs
from sblr import protocol
from sblr.metrics import LOWER_IS_BETTER, METRIC_LABELS
from sblr.protocol import TASK_METRICS, run_benchmark
from sblr.samples import load_sample
from sblr.stats import mean_std_table, method_label

PAGE = "pages/compare.py"
QUICK = {"gamma": (1.0, 0.1, 0.01), "C": (1.0, 0.1, 0.01), "lam": (1e-3, 1e-4, 1e-5)}
FAST = {"planted": ["sparse_sblr", "sblr", "sml", "mlknn"], "wine": ["sblr", "knn", "ncm"]}
TASK = {"planted": "multilabel", "wine": "multiclass"}
#: The page's default decisions, as run_benchmark takes them (the metric applies to
#: multi-label data; multi-class data are selected by accuracy).
FITTED = {"threshold": "micro_f1", "metric": "micro_f1"}


# Every test here starts the app in AppTest: seconds each, so out of the fast suite.
pytestmark = [pytest.mark.usefixtures("navigation_mode"), pytest.mark.slow]


@pytest.fixture
def fold_calls(monkeypatch):
    """(method, fold, n_folds) of every ``protocol.run_fold`` call, from an empty cache."""
    long_jobs.cached_compare_fold.clear()
    calls: list[tuple[str, int, int]] = []
    original = protocol.run_fold

    def spy(dataset, method, fold_index, splits, **kwargs):
        calls.append((method, fold_index, len(splits)))
        return original(dataset, method, fold_index, splits, **kwargs)

    monkeypatch.setattr(protocol, "run_fold", spy)
    return calls


# ----------------------------------------------------------------------------- helpers
def open_page(sample: str = "planted") -> AppTest:
    at = goto(start({"sample": sample}), PAGE)
    assert at.title[0].value == "Compare methods"
    return at


def choose(at: AppTest, methods, folds=3, grid="quick", task="multilabel") -> AppTest:
    at.multiselect(key=f"compare_methods_{task}").set_value(methods)
    at.radio(key="compare_folds").set_value(folds)
    at.radio(key="compare_grid").set_value(grid)
    at.run()
    assert_clean(at)
    return at


def click_run(at: AppTest) -> AppTest:
    at.button(key="compare_run").click()
    at.run()
    assert_clean(at)
    return at


#: The page's tables, in page order.
FRAMES = ["compare_metrics", "compare_ranks", "compare_hyper"]


def frame(at: AppTest, name: str) -> pd.DataFrame:
    """One of the page's tables (st.dataframe has no id to find it by, so by position)."""
    assert len(at.dataframe) == len(FRAMES)
    return at.dataframe[FRAMES.index(name)].value


def shown_values(element) -> pd.DataFrame:
    """The cells of a styled st.dataframe as text, as the browser draws them (the Styler's
    display values, which Streamlit sends beside the data)."""
    import pyarrow as pa

    styler = element.proto.arrow_data.styler
    table = pa.ipc.open_stream(styler.display_values).read_all().to_pandas()
    return table.loc[:, [c for c in table.columns if not str(c).startswith("__")]]


def download_csv(at: AppTest, files: dict[str, bytes], label: str) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(download(at, files, label)))


def means(table: pd.DataFrame) -> pd.DataFrame:
    """The printed means of a "mean ± std" table, as floats."""
    return table.map(lambda cell: float(cell.split(" ± ")[0]))


# ----------------------------------------------------------------------------- tests
def test_page_runs_before_anything_is_computed(fold_calls):
    at = open_page()
    assert "click **Run cross-validation**" in at.info[0].value
    assert not at.dataframe
    assert not at.get("download_button")
    assert at.multiselect(key="compare_methods_multilabel").value == [
        "sparse_sblr",
        "sblr",
        "sml",
        "mlknn",
        "iblr",
        "br_svm",
    ]
    assert at.radio(key="compare_folds").value == 10
    # the similarity models decide by their fitted cut unless the paper's decisions are chosen
    assert at.radio(key="compare_decisions").value == "fitted"
    assert at.radio(key="compare_grid").value == "paper"
    # The quick grid says it is not the paper's.
    assert "NOT the paper's" in at.radio(key="compare_grid").options[1]
    # BR-SVM with the paper's grid: warned, but small enough to run.
    assert "BR-SVM with the paper's grid is slow" in at.warning[0].value
    assert not at.button(key="compare_run").disabled
    assert fold_calls == []


@pytest.mark.parametrize("sample", ["planted", "wine"])
def test_run_shows_metrics_ranks_and_hyperparameters(sample, fold_calls, downloads):
    methods, task, folds = FAST[sample], TASK[sample], 3
    at = open_page(sample)
    if task == "multiclass":
        assert at.multiselect(key="compare_methods_multiclass").value == [
            "sparse_sblr",
            "sblr",
            "sml",
            "knn",
            "ncm",
            "lr",
        ]
    choose(at, methods, folds, "quick", task)
    assert not at.warning  # no BR-SVM
    click_run(at)
    assert sorted(fold_calls) == sorted((m, f, folds) for m in methods for f in range(folds))

    labels = [method_label(m) for m in methods]
    metric_names = TASK_METRICS[task]
    table = frame(at, "compare_metrics")
    assert list(table.index) == labels
    assert list(table.columns) == [METRIC_LABELS[m] for m in metric_names]
    # what each method cost: its selection and final fits summed over the folds, in a line
    hyper = frame(at, "compare_hyper")
    spent = hyper.groupby("method")[["select_seconds", "fit_seconds"]].sum().sum(axis=1)
    (line,) = [c.value for c in at.caption if c.value.startswith("Time per method")]
    for label in labels:
        seconds = spent[label]
        written = f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
        assert f"{label} {written}" in line
    full_table = table

    # The same numbers as the library's run_benchmark (which the CLI uses), at the page's
    # default decisions: the fitted cut, selection by micro-F1 (multi-class: accuracy)
    expected_results, expected_hyper = run_benchmark(
        load_sample(sample), methods, folds=folds, grid=QUICK, progress=False, **FITTED
    )
    expected = mean_std_table(expected_results).droplevel("dataset")
    assert (
        table.to_numpy().tolist() == expected.loc[methods, list(metric_names)].to_numpy().tolist()
    )
    if task == "multilabel":  # the rows given no label, summed over the folds, per method
        (line,) = [c.value for c in at.caption if c.value.startswith("Rows given no label")]
        counts = expected_hyper.groupby("method")[["no_label_rows", "test_rows"]].sum()
        for m in methods:
            written = (
                f"{int(counts.loc[m, 'no_label_rows']):,} of {int(counts.loc[m, 'test_rows']):,}"
            )
            assert f"{method_label(m)} {written}" in line, line

    # Ranks follow the printed values: rank 1 for the best, lower-is-better respected.
    ranks = frame(at, "compare_ranks")
    # as the browser shows them: 1, 2, 2.5 (not 1.000000), the average with two decimals
    shown = shown_values(at.dataframe[FRAMES.index("compare_ranks")])
    for i, column in enumerate(ranks.columns):
        written = "{:.2f}" if column == "Average rank" else "{:g}"
        assert list(shown.iloc[:, i]) == [written.format(v) for v in ranks[column]], column
    assert list(ranks.index) == labels
    assert list(ranks.columns) == [*table.columns, "Average rank"]
    printed = means(table)
    for name in metric_names:
        col = METRIC_LABELS[name]
        lower = LOWER_IS_BETTER[name]
        expected_rank = printed[col].rank(method="average", ascending=lower)
        np.testing.assert_allclose(ranks[col], expected_rank)
        best = printed[col].min() if lower else printed[col].max()
        assert (ranks.loc[printed[col] == best, col] == ranks[col].min()).all()
        assert ranks[col].min() == (printed[col] == best).sum() / 2 + 0.5
    np.testing.assert_allclose(ranks["Average rank"], ranks[list(table.columns)].mean(axis=1))
    # every method at the best average rank is named; a tie is called one
    average = ranks["Average rank"].round(9)
    tied = [m for m in average.index if average[m] == average.min()]
    lead = "**Best average rank:** " if len(tied) == 1 else "**Best average rank, tied:** "
    assert lead + " and ".join(tied) + " (" in "\n".join(m.value for m in at.markdown)
    # a short reading: who is first on how many metrics (from the printed table, by hand),
    # and that one data set cannot test the differences
    (reading,) = [m.value for m in at.markdown if m.value.startswith("**Reading it.**")]
    firsts = {}
    for name in metric_names:
        col = METRIC_LABELS[name]
        column = printed[col]
        firsts.setdefault(column.idxmin() if LOWER_IS_BETTER[name] else column.idxmax(), 0)
    for label in firsts:
        assert f"{label} is best on " in reading
    assert "Ranks over one data set only summarize this table" in reading

    # Hyper-parameters: one row per method and fold, as selected by the protocol.
    hyper = frame(at, "compare_hyper")
    assert len(hyper) == len(methods) * folds
    assert sorted(zip(hyper["method"], hyper["fold"], strict=True)) == sorted(
        (label, f + 1) for label in labels for f in range(folds)
    )
    sblr_gammas = shown_numbers(hyper.loc[hyper["method"] == "SBLR", "γ"]).tolist()
    assert sblr_gammas == expected_hyper.loc[expected_hyper["method"] == "sblr", "gamma"].tolist()
    assert set(sblr_gammas) <= set(QUICK["gamma"])
    if "sparse_sblr" in methods:
        # λ from its own quick grid (a grid shared with γ, {1, 0.1, 0.01}, left SparseSBLR
        # no weights on many data sets and made it look like the worst method)
        chosen = shown_numbers(hyper.loc[hyper["method"] == "SparseSBLR", "λ"])
        assert len(chosen) == folds and set(chosen) <= set(QUICK["lam"])
        # written as the sliders write them, "–" where a method has no such parameter
        lam_shown = hyper["λ"]
        assert set(lam_shown[hyper["method"] == "SparseSBLR"]) <= {"1e-3", "1e-4", "1e-5"}
        assert set(lam_shown[hyper["method"] != "SparseSBLR"]) == {"–"}

    # CSV downloads: the long results and the hyper-parameters, in the CLI's format.
    results_csv = download_csv(at, downloads, "Download results (CSV)")
    assert list(results_csv.columns) == ["dataset", "method", "fold", "metric", "value"]
    assert len(results_csv) == len(methods) * folds * len(metric_names)
    np.testing.assert_allclose(results_csv["value"], expected_results["value"])
    hyper_csv = download_csv(at, downloads, "Download hyper-parameters (CSV)")
    assert len(hyper_csv) == len(methods) * folds
    assert set(hyper_csv["fold"]) == set(range(folds))

    # A second click is served from the cache: no fold is computed again (the spy on
    # protocol.run_fold sees no call), and the per-fold results are the stored ones -- their
    # measured selection and fit times, which a recomputation could not reproduce to the bit,
    # are those of the first click.
    n_calls = len(fold_calls)
    first_hyper = frame(at, "compare_hyper")
    assert (first_hyper[["select_seconds", "fit_seconds"]] > 0).all().all()
    click_run(at)
    assert len(fold_calls) == n_calls
    pd.testing.assert_frame_equal(frame(at, "compare_hyper"), first_hyper, check_exact=True)
    pd.testing.assert_frame_equal(frame(at, "compare_metrics"), full_table)


def test_results_stay_after_navigating_and_adding_a_method_computes_only_it(fold_calls):
    at = open_page()
    choose(at, ["sml", "mlknn"], 3, "quick")
    click_run(at)
    table = frame(at, "compare_metrics")
    assert len(fold_calls) == 6

    goto(at, "pages/model.py")
    goto(at, PAGE)
    # The last results are back, from the cache, with the choices that produced them.
    pd.testing.assert_frame_equal(frame(at, "compare_metrics"), table)
    assert at.multiselect(key="compare_methods_multilabel").value == ["sml", "mlknn"]
    assert at.radio(key="compare_folds").value == 3
    assert at.radio(key="compare_grid").value == "quick"
    assert len(fold_calls) == 6

    # Changing the choice does not run anything until the button is clicked.
    at.multiselect(key="compare_methods_multilabel").set_value(["sml", "mlknn", "sblr"])
    at.run()
    assert "Showing the last run" in "\n".join(c.value for c in at.caption)
    assert len(fold_calls) == 6
    click_run(at)
    assert sorted(fold_calls[6:]) == [("sblr", f, 3) for f in range(3)]
    # Rows in the paper's method order, whatever the order of the choice.
    assert list(frame(at, "compare_metrics").index) == ["SBLR", "SML", "MLKNN"]
    assert len(frame(at, "compare_hyper")) == 9


def test_brsvm_paper_grid_is_refused_on_large_data():
    # 5,000 rows and 5 classes: BR-SVM over the paper's grid would take ~17 min with 10 folds.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 2))
    data = pd.DataFrame(X, columns=["a", "b"]).assign(y=rng.integers(0, 5, size=5000))
    at = load_upload(start(), "big.csv", data.to_csv(index=False).encode(), target="y")
    assert_clean(at)
    goto(at, PAGE)
    at.multiselect(key="compare_methods_multiclass").set_value(["sblr", "br_svm"])
    at.run()
    assert "more than the page runs" in at.warning[0].value
    assert at.button(key="compare_run").disabled
    # and the box below says what to change, not "click Run" (found on public data)
    assert "waits for a lighter choice: the quick grid" in at.info[-1].value
    assert "then click" not in at.info[-1].value
    # The quick grid is allowed, and so is the paper's grid without BR-SVM.
    at.radio(key="compare_grid").set_value("quick")
    at.run()
    assert not at.warning
    assert not at.button(key="compare_run").disabled
    assert "then click **Run cross-validation**" in at.info[-1].value
    at.radio(key="compare_grid").set_value("paper")
    at.multiselect(key="compare_methods_multiclass").set_value(["sblr"])
    at.run()
    assert not at.button(key="compare_run").disabled


@pytest.mark.parametrize("n, m, with_svm", [(645, 19, True), (2000, 45, False)])
def test_the_default_choice_runs_on_a_birds_sized_upload(n, m, with_svm):
    """On birds (645 rows, 19 labels) the default choice, BR-SVM with the paper's grid
    included, runs: the selection shares one kernel matrix per gamma (about 25 s measured
    there). On 2,000 rows and 45 labels it would not: the default leaves BR-SVM out there
    (and says so); the estimate is the library's."""
    from apptest_helpers import load_multilabel_upload

    from sblr.baselines import brsvm_seconds_estimate

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 6))
    Y = (X @ rng.normal(size=(6, m)) > 1.2).astype(int)
    names = [f"bird_{j}" for j in range(m)]
    frame_ = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    frame_[names] = Y
    assert (brsvm_seconds_estimate(n, m, 10) <= 300) == with_svm
    at = load_multilabel_upload(
        start(), "birds_like.csv", frame_.to_csv(index=False).encode(), names
    )
    goto(at, PAGE)
    chosen = at.multiselect(key="compare_methods_multilabel").value
    assert ("br_svm" in chosen) == with_svm and {"sparse_sblr", "sblr", "sml"} <= set(chosen)
    assert not at.button(key="compare_run").disabled
    left_out = "BR-SVM is left out of the default choice" in " ".join(c.value for c in at.caption)
    assert left_out != with_svm


@pytest.mark.slow
def test_with_a_dask_scheduler_the_folds_run_on_the_cluster_and_give_the_local_results(
    monkeypatch,
):
    """SBLR_DASK_SCHEDULER set: Compare's folds run on the cluster's worker processes (the
    server only sends them and caches the results) and the tables equal the library's local
    run_benchmark; the stability resamples too (against bootstrap_coefficients here)."""
    distributed = pytest.importorskip("distributed")
    import streamlit as st

    from pages._shared import cluster
    from sblr import SparseSBLRClassifier
    from sblr.stability import bootstrap_coefficients

    methods, folds = FAST["planted"], 3
    expected, _ = run_benchmark(
        load_sample("planted"), methods, folds=folds, grid=QUICK, progress=False, **FITTED
    )
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as local_cluster:
        address = local_cluster.scheduler_address
        monkeypatch.setenv("SBLR_DASK_SCHEDULER", address)
        st.cache_data.clear()
        ran_here, run_fold = [], protocol.run_fold

        def spy(*a, **k):  # records calls in the process that runs it
            ran_here.append(a)
            return run_fold(*a, **k)

        monkeypatch.setattr(protocol, "run_fold", spy)
        at = choose(open_page(), methods, folds, "quick")
        click_run(at)
        table = frame(at, "compare_metrics")
        want = mean_std_table(expected).droplevel("dataset")
        # computed in the workers' processes and here: compared as the page writes them,
        # "mean ± std" to 3 decimals, which is the tolerance
        assert (
            table.to_numpy().tolist()
            == want.loc[
                methods,
                list(table.columns.map({METRIC_LABELS[m]: m for m in TASK_METRICS["multilabel"]})),
            ]
            .to_numpy()
            .tolist()
        )
        assert not ran_here  # every fold ran in the workers (their own copy of the spy)
        client = cluster._client(address)
        assert client.run(lambda: __import__("os").getpid())  # worker processes answered
        # the stability resamples on the cluster, as the Coefficients page asks for them
        ds = load_sample("planted")
        model = SparseSBLRClassifier(gamma=1.0, lam=3e-4).fit(ds.X, ds.y)
        F = model.featurizer_.training_evidence()
        remote = cluster.run("stability", None, bootstrap_coefficients, model, F, n_resamples=5)
        here = bootstrap_coefficients(model, F, n_resamples=5)
        # β of each resample fitted in a worker's process and here: their BLAS kernels and
        # threads may sum in another order, hence a tolerance (not the last bit)
        np.testing.assert_allclose(remote.coefs, here.coefs, rtol=1e-12, atol=1e-15)
        # a large upload's evidence there too (here: every upload), as the pages ask for it
        from pages._shared import cache

        monkeypatch.setattr(cluster, "CLUSTER_EVIDENCE_ROWS", 0)
        cache._evidence.clear()
        cache._stores.clear()
        import sblr.evaluation

        local_evidence = []
        fold_evidence = sblr.evaluation.fold_evidence
        monkeypatch.setattr(
            sblr.evaluation,
            "fold_evidence",
            lambda *a, **k: local_evidence.append(1) or fold_evidence(*a, **k),
        )
        featurizer, F_remote = cache._evidence(ds, 1.0)
        assert not local_evidence  # computed by the worker
        ref = SparseSBLRClassifier(gamma=1.0).fit(ds.X, ds.y).featurizer_.training_evidence()
        np.testing.assert_allclose(F_remote, ref, rtol=1e-12)
        cluster._forget_clients()
    st.cache_data.clear()


def _no_label_counts(at: AppTest) -> str:
    (line,) = [c.value for c in at.caption if c.value.startswith("Rows given no label")]
    return line


def _cells(at: AppTest) -> list[str]:
    """Every cell of the page's tables as the reader sees it (a Styler's display values)."""
    cells = []
    for name in FRAMES:
        element = at.dataframe[FRAMES.index(name)]
        table = shown_values(element) if element.proto.arrow_data.styler.uuid else element.value
        cells += [str(v) for v in table.to_numpy().ravel()]
    return cells


def test_compare_decides_by_the_fitted_cut_and_the_papers_decisions_are_an_option(fold_calls):
    """Issue #43, item 3: Compare scored the similarity models at π ≥ 0.5 while every other
    page decides by the fitted cut (489 of 645 rows without a label on Compare, against the
    Model page's cut). Oracle: SparseSBLR's rows with no label, fold by fold from
    ``protocol.run_fold`` called here with the fitted cut (and with the paper's decisions,
    ``threshold=None``); the heading and the caption name the decisions; no cell of the
    tables says "None" or "nan" (issue #46, item 13)."""
    run_fold = protocol.run_fold  # the spy: it passes every call on
    ds = load_sample("planted")
    splits = protocol.benchmark_splits(ds, 3)

    def empty_rows(**decision):
        return sum(
            run_fold(ds, "sparse_sblr", f, splits, grid=QUICK, **decision).counts["no_label_rows"]
            for f in range(3)
        )

    fitted, paper = empty_rows(**FITTED), empty_rows(threshold=None)
    assert fitted != paper  # the choice matters here
    calls = len(fold_calls)
    at = choose(open_page(), ["sparse_sblr", "sml", "mlknn"], 3, "quick")
    click_run(at)
    assert len(fold_calls) == calls + 9
    assert at.subheader[0].value == "planted: 3-fold cross-validation, fitted cuts"
    caption = " ".join(c.value for c in at.caption)
    assert "Decisions: fitted cuts (one cut maximizing micro-F1 on held-out training rows)" in (
        caption
    )
    assert "ML-kNN by their own rules" in caption
    assert f"SparseSBLR {fitted:,} of 500" in _no_label_counts(at)
    for cell in _cells(at):
        assert cell not in ("None", "nan", "NaN", "<NA>"), cell

    at.radio(key="compare_decisions").set_value("paper")
    at.run()
    assert "Showing the last run" in " ".join(c.value for c in at.caption)
    click_run(at)
    assert len(fold_calls) == calls + 18  # the other decisions: computed, not the cached folds
    assert at.subheader[0].value == "planted: 3-fold cross-validation, the paper's decisions"
    assert "Decisions: the paper's decisions (π ≥ 0.5" in " ".join(c.value for c in at.caption)
    line = _no_label_counts(at)
    assert f"SparseSBLR {paper:,} of 500" in line and "the paper's decisions" in line
