"""The experimental protocol: methods, per-fold selection on training rows only, caching."""

import os
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sblr.protocol as protocol
from sblr import DataError, load_dataset
from sblr.evaluation import make_splits
from sblr.protocol import METHODS, TASK_METRICS, run_benchmark, run_fold, select_params
from sblr.tuning import PAPER_GRID

ROOT = Path(__file__).resolve().parents[1]
GRID = (1.0, 0.1, 0.01)


@pytest.fixture(scope="module")
def wine():
    return load_dataset(ROOT / "sample_data" / "wine.csv", target="class")


@pytest.fixture(scope="module")
def planted():
    return load_dataset(ROOT / "sample_data" / "planted.arff")


def test_methods_and_their_hyperparameters():
    assert list(METHODS) == [
        "sparse_sblr",
        "sblr",
        "sml",
        "sparse_sblr_paper",
        "mlknn",
        "iblr",
        "br_svm",
        "lr_tuned",
        "knn",
        "ncm",
        "lr",
    ]
    assert METHODS["sparse_sblr_paper"].build().normalize == "mean"
    assert METHODS["sparse_sblr"].build().normalize == "log_rate"
    assert METHODS["lr_tuned"].build().Cs is not None
    assert METHODS["sparse_sblr"].tuned == ("gamma", "lam")
    assert METHODS["sblr"].tuned == METHODS["sml"].tuned == ("gamma",)
    assert METHODS["br_svm"].tuned == ("gamma", "C")
    assert METHODS["mlknn"].fixed == METHODS["iblr"].fixed == {"k": 10}
    assert not METHODS["mlknn"].tuned and not METHODS["iblr"].tuned
    assert {m for m, s in METHODS.items() if s.multiclass_only} == {"knn", "ncm", "lr"}
    assert PAPER_GRID == (1e2, 1e1, 1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5)
    assert METHODS["mlknn"].build().k == 10
    assert METHODS["sparse_sblr"].build(gamma=0.1, lam=0.01).lam == 0.01


@pytest.mark.slow
@pytest.mark.parametrize("method", ["sparse_sblr", "br_svm", "mlknn"])
def test_run_fold_multilabel_rows_and_params(planted, method, monkeypatch):
    selections = []  # the wall time of each selection, timed inside it

    def timed_select_params(*args, **kwargs):
        start = time.perf_counter()
        chosen = select_params(*args, **kwargs)
        selections.append(time.perf_counter() - start)
        return chosen

    monkeypatch.setattr(protocol, "select_params", timed_select_params)
    splits = make_splits(planted.y, scheme="kfold", n_splits=3)
    res = run_fold(planted, method, 1, splits, grid=GRID)
    assert [r["metric"] for r in res.rows] == list(TASK_METRICS["multilabel"])
    assert {(r["dataset"], r["method"], r["fold"]) for r in res.rows} == {("planted", method, 1)}
    assert all(np.isfinite(r["value"]) for r in res.rows)
    tuned = METHODS[method].tuned
    assert set(res.params) == set(tuned) | set(METHODS[method].fixed)
    assert all(res.params[p] in GRID for p in tuned)
    assert res.fit_seconds > 0 and len(selections) == 1
    # select_seconds times the selection (the grid search; for an untuned method a call that
    # returns {}), and not the final fit, timed after it
    assert selections[0] <= res.select_seconds < selections[0] + res.fit_seconds
    if not tuned:
        assert res.select_seconds < res.fit_seconds


def test_run_fold_fixed_params_skip_selection(wine, monkeypatch):
    monkeypatch.setattr(protocol, "select_params", _fail)
    splits = make_splits(wine.y, scheme="kfold", n_splits=3)
    res = run_fold(wine, "sparse_sblr", 0, splits, params={"gamma": 0.1, "lam": 0.01})
    assert res.params == {"gamma": 0.1, "lam": 0.01}
    assert res.select_seconds < res.fit_seconds  # nothing was selected
    assert res.rows[0]["metric"] == "accuracy" and res.rows[0]["value"] > 0.8


def test_multiclass_only_method_refuses_multilabel(planted):
    splits = make_splits(planted.y, scheme="kfold", n_splits=3)
    with pytest.raises(ValueError, match="multi-class data only"):
        run_fold(planted, "knn", 0, splits)


def test_unknown_method_and_selection(wine):
    with pytest.raises(ValueError, match="Unknown method"):
        run_benchmark([wine], ["svm"], folds=3)
    with pytest.raises(ValueError, match="selection"):
        run_benchmark([wine], ["sml"], folds=3, selection="test")


# --------------------------------------------------------------------------- test-set hygiene
def _poisoned(ds, test, *, flip=True):
    """A copy whose test rows have absurd features (and, multi-class, shifted labels)."""
    X = ds.X.copy()
    X[test] = 1e6 + np.arange(len(test))[:, None]
    y = ds.y.copy()
    if flip:
        if ds.task == "multilabel":
            y[test] = 1 - y[test]
        else:
            names = np.array(ds.class_names)
            codes = np.searchsorted(names, y[test].astype(str))
            y[test] = names[(codes + 1) % len(names)]
    return replace(ds, X=X, y=y)


@pytest.mark.parametrize("dataset", ["wine", "planted"])
def test_selection_sees_training_rows_only(dataset, request, monkeypatch):
    ds = request.getfixturevalue(dataset)
    splits = make_splits(protocol.task_y(ds), scheme="kfold", n_splits=3)
    train, test = splits[2]
    bad = _poisoned(ds, test)
    seen = []
    real = protocol.tune

    def spy(estimator, X, y, **kw):
        seen.append((np.array(X), np.array(y)))
        return real(estimator, X, y, **kw)

    monkeypatch.setattr(protocol, "tune", spy)
    clean_res = run_fold(ds, "sparse_sblr", 2, splits, grid=GRID)
    bad_res = run_fold(bad, "sparse_sblr", 2, splits, grid=GRID)
    assert len(seen) == 2
    for X_seen, y_seen in seen:
        assert X_seen.shape[0] == len(train)
        assert np.abs(X_seen).max() < 1e5  # no poisoned row reached the selection
        np.testing.assert_array_equal(X_seen, ds.X[train])
        np.testing.assert_array_equal(y_seen, protocol.task_y(ds)[train])
    # the same selection on clean and poisoned data; the poison does reach the test score
    assert bad_res.params == clean_res.params
    assert bad_res.rows != clean_res.rows


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "selection"),
    [("br_svm", "holdout"), ("br_svm", "inner_kfold"), ("sparse_sblr", "inner_kfold")],
)
def test_other_selections_ignore_poisoned_test_rows(wine, method, selection, monkeypatch):
    splits = make_splits(wine.y, scheme="kfold", n_splits=3)
    train, test = splits[0]
    seen = []
    real = protocol._search_scores

    def spy(spec, points, X, y, splits, metric, checkpoint=None):
        seen.append(np.array(X))
        return real(spec, points, X, y, splits, metric, checkpoint)

    real_tune = protocol.tune

    def spy_tune(estimator, X, y, **kw):
        seen.append(np.array(X))
        return real_tune(estimator, X, y, **kw)

    monkeypatch.setattr(protocol, "_search_scores", spy)
    monkeypatch.setattr(protocol, "tune", spy_tune)
    kw = {"grid": GRID, "selection": selection}
    clean = run_fold(wine, method, 0, splits, **kw)
    bad = run_fold(_poisoned(wine, test), method, 0, splits, **kw)
    assert bad.params == clean.params
    assert seen and all(len(s) == len(train) and np.abs(s).max() < 1e5 for s in seen)


@pytest.mark.slow
@pytest.mark.parametrize("selection", ["holdout", "inner_kfold"])
def test_baseline_selection_equals_a_hand_loop(planted, selection):
    """BR-SVM's GridSearchCV selection equals the paper's rule written out: fit every
    (gamma, C) on the fit rows, score average precision on the validation rows, average
    over the splits, keep the first best point in grid order."""
    from sblr.baselines import BRSVMClassifier
    from sblr.evaluation import validation_split
    from sblr.metrics import average_precision

    X, y = planted.X[:120], protocol.task_y(planted)[:120]
    grid = (10.0, 1.0, 0.1, 0.01)
    if selection == "holdout":
        X_fit, X_val, y_fit, y_val = validation_split(X, y, 0.1, 0)
        splits = [(X_fit, y_fit, X_val, y_val)]
    else:
        folds = make_splits(y, scheme="kfold", n_splits=3, random_state=0)
        splits = [(X[tr], y[tr], X[va], y[va]) for tr, va in folds]
    best, best_score = None, -np.inf
    for gamma in grid:
        for C in grid:
            values = []
            for X_fit, y_fit, X_val, y_val in splits:
                svm = BRSVMClassifier(gamma=gamma, C=C).fit(X_fit, y_fit)
                values.append(average_precision(y_val, svm.decision_function(X_val)))
            if np.mean(values) > best_score:
                best, best_score = {"gamma": gamma, "C": C}, np.mean(values)
    assert select_params("br_svm", X, y, selection=selection, grid=grid) == best


@pytest.mark.slow
@pytest.mark.parametrize("task", ["multilabel", "multiclass", "binary"])
def test_brsvm_grid_equals_a_fit_per_point(planted, wine, task):
    """The shared-kernel search gives what BRSVMClassifier gives at each (gamma, C): the
    predictions exactly, the decision values to rounding; a class constant in the fit rows
    keeps its +1/-1 score."""
    from sblr.baselines import BRSVMClassifier, brsvm_grid

    if task == "multilabel":
        X, y = planted.X[:90], protocol.task_y(planted)[:90].copy()
        y[:60, 0] = 1  # constant (always present) in the fit rows
    else:
        X, y = wine.X, protocol.task_y(wine)
        if task == "binary":
            X, y = X[y != y[0]], y[y != y[0]]
    fit, val = np.arange(0, len(y), 3), np.setdiff1d(np.arange(len(y)), np.arange(0, len(y), 3))
    if task == "multilabel":
        fit, val = np.arange(60), np.arange(60, 90)
    points = [{"gamma": g, "C": c} for g in (10.0, 0.1) for c in (100.0, 1.0, 0.01)]
    outs = list(brsvm_grid(X[fit], y[fit], X[val], points))
    assert len(outs) == len(points)
    for point, (pred, dec) in zip(points, outs, strict=True):
        svm = BRSVMClassifier(**point).fit(X[fit], y[fit])
        np.testing.assert_array_equal(pred, svm.predict(X[val]))
        np.testing.assert_allclose(dec, svm.decision_function(X[val]), rtol=0, atol=1e-9)
    if task == "multilabel":
        assert (outs[0][1][:, 0] == 1.0).all()


@pytest.mark.slow
def test_select_params_inner_kfold_is_deterministic(wine):
    a = select_params("sblr", wine.X, protocol.task_y(wine), selection="inner_kfold", grid=GRID)
    b = select_params("sblr", wine.X, protocol.task_y(wine), selection="inner_kfold", grid=GRID)
    assert a == b and a["gamma"] in GRID
    assert select_params("mlknn", wine.X, protocol.task_y(wine)) == {}


# --------------------------------------------------------------------------- benchmark
@pytest.mark.slow
def test_benchmark_tables_and_cache(wine, planted, tmp_path, monkeypatch, capsys):
    methods = ["sml", "mlknn", "knn"]
    results, hyper = run_benchmark(
        [wine, planted], methods, folds=3, grid=GRID, cache_dir=tmp_path, progress=True
    )
    assert "3/3" not in capsys.readouterr().out  # the bar goes to stderr
    # knn is multi-class only: 3 methods x 3 folds x 1 metric + 2 methods x 3 folds x 7 metrics
    assert len(results) == 9 + 42
    assert list(results.columns) == ["dataset", "method", "fold", "metric", "value"]
    assert len(hyper) == 15 and {"dataset", "method", "fold", "gamma", "k"} <= set(hyper.columns)
    assert set(results.query("dataset == 'planted'").method) == {"sml", "mlknn"}
    assert sorted(set(results.fold)) == [0, 1, 2]
    files = sorted(tmp_path.rglob("*.json"))
    assert len(files) == 15

    # A re-run computes nothing (even under another data-set name) and returns the same.
    monkeypatch.setattr(protocol, "run_fold", _fail)
    again, hyper2 = run_benchmark([wine, planted], methods, folds=3, grid=GRID, cache_dir=tmp_path)
    assert again.equals(results) and hyper2.equals(hyper)
    renamed = replace(wine, name="vino")
    r3, _ = run_benchmark([renamed], ["sml"], folds=3, grid=GRID, cache_dir=tmp_path)
    assert set(r3.dataset) == {"vino"}

    # Other protocol settings are cache misses.
    with pytest.raises(AssertionError, match="must not run"):
        run_benchmark([wine], ["sml"], folds=3, grid=(1.0,), cache_dir=tmp_path, progress=False)


def test_corrupt_cache_file_is_recomputed(wine, tmp_path):
    r1, _ = run_benchmark([wine], ["ncm"], folds=3, cache_dir=tmp_path, progress=False)
    path = sorted(tmp_path.rglob("*.json"))[0]
    path.write_text("{not json")
    r2, _ = run_benchmark([wine], ["ncm"], folds=3, cache_dir=tmp_path, progress=False)
    assert r1.equals(r2)
    assert path.read_text().startswith("{")


def test_folds_partition_and_stratify(wine, planted):
    for ds in (wine, planted):
        y = protocol.task_y(ds)
        splits = make_splits(y, scheme="kfold", n_splits=10, random_state=0)
        tests = np.concatenate([te for _, te in splits])
        assert sorted(tests) == list(range(len(y)))
    splits = make_splits(protocol.task_y(wine), scheme="kfold", n_splits=10)
    counts = [np.bincount(protocol.task_y(wine)[te], minlength=3) for _, te in splits]
    assert np.ptp(np.array(counts), axis=0).max() <= 1  # stratified


@pytest.mark.slow
def test_parallel_equals_serial(wine):
    kw = {"folds": 3, "grid": GRID, "progress": False}
    serial, h1 = run_benchmark([wine], ["sblr", "br_svm"], n_jobs=1, **kw)
    parallel, h2 = run_benchmark([wine], ["sblr", "br_svm"], n_jobs=2, **kw)
    # the scores of worker processes (their BLAS threads may sum in another order): to a
    # stated tolerance; what was chosen (the grid points) exactly
    pd.testing.assert_frame_equal(serial, parallel, check_exact=False, rtol=1e-12, atol=1e-15)
    cols = ["dataset", "method", "fold", "gamma", "C"]
    assert h1[cols].equals(h2[cols])  # exact: the grid points chosen, decisions


@pytest.mark.slow
@pytest.mark.dask
def test_dask_cluster_equals_local(wine, planted, tmp_path):
    """The same tasks on a Dask cluster (a LocalCluster on 127.0.0.1 reached by its tcp://
    address, and scheduler="local") give exactly the local results; the cache is written here."""
    distributed = pytest.importorskip("distributed")
    kw = {"folds": 3, "grid": GRID, "progress": False}
    methods = ["sparse_sblr", "mlknn", "ncm"]
    local, h_local = run_benchmark([wine, planted], methods, **kw)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        remote, h_remote = run_benchmark(
            [wine, planted], methods, scheduler=address, cache_dir=tmp_path, **kw
        )
        with distributed.Client(cluster) as client:
            ran = client.run(lambda: __import__("os").getpid())
    assert len(ran) == 2
    # the workers' scores against these: to a stated tolerance (pandas' default is 1e-5)
    pd.testing.assert_frame_equal(local, remote, check_exact=False, rtol=1e-12, atol=1e-15)
    params = ["dataset", "method", "fold", "gamma", "lam"]
    chosen = h_local[params], h_remote[params]
    pd.testing.assert_frame_equal(*chosen, check_exact=True)  # exact: grid points, decisions
    assert len(list(tmp_path.rglob("*.json"))) == 3 * 3 + 2 * 3  # ncm is multi-class only
    own, _ = run_benchmark([wine], ["sblr"], scheduler="local", n_jobs=2, **kw)
    here = run_benchmark([wine], ["sblr"], **kw)[0]
    pd.testing.assert_frame_equal(own, here, check_exact=False, rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_unreachable_or_malformed_scheduler_is_a_clear_error(wine, monkeypatch):
    pytest.importorskip("distributed")
    import sblr._backends

    monkeypatch.setattr(sblr._backends, "SCHEDULER_TIMEOUT", "1s")
    kw = {"folds": 2, "grid": GRID, "progress": False}
    with pytest.raises(DataError, match="looks like tcp://HOST:PORT"):
        run_benchmark([wine], ["ncm"], scheduler="127.0.0.1:8786", **kw)
    with socket.socket() as s:  # a free port on this machine that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DataError, match="Cannot reach the Dask scheduler"):
        run_benchmark([wine], ["ncm"], scheduler=f"tcp://127.0.0.1:{port}", **kw)


@pytest.mark.slow  # starts a scheduler and a worker: 1.1 s in CI
def test_cluster_without_sblr_is_refused_not_waited_on(wine, tmp_path):
    """A scheduler and worker that cannot import sblr would drop the tasks and leave the
    client waiting forever; run_benchmark must say so at once instead."""
    pytest.importorskip("distributed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = [sys.executable, "-c", "import sblr"]
    if subprocess.run(probe, cwd=tmp_path, env=env, capture_output=True).returncode == 0:
        pytest.skip("sblr is installed in this environment, so any cluster can import it")
    common = {
        "cwd": tmp_path,
        "env": env,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
    }
    scheduler = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-dashboard",
        ],
        **common,
    )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            address,
            "--nthreads",
            "1",
            "--host",
            "127.0.0.1",
            "--no-dashboard",
        ],
        **common,
    )
    try:
        kw = {"folds": 2, "grid": GRID, "progress": False}
        with pytest.raises(DataError, match="sblr cannot be imported on the scheduler and 1 work"):
            run_benchmark([wine], ["ncm"], scheduler=address, **kw)
    finally:
        for proc in (worker, scheduler):
            proc.terminate()
            proc.wait(timeout=30)


def _fail(*args, **kwargs):
    raise AssertionError("must not run")


@pytest.mark.slow
def test_sparse_data_give_the_scores_of_their_dense_copy():
    """A sparse ARFF (CSR X) runs every method; scores equal those of the same data dense."""
    import dataclasses

    import scipy.sparse as sp

    from sblr import load_dataset
    from sblr.evaluation import make_splits

    rng = np.random.default_rng(0)
    n, d = 90, 200
    lines = ["@relation sp", *[f"@attribute f{j} numeric" for j in range(d)]]
    lines += [f"@attribute l{k} {{0,1}}" for k in range(3)] + ["@data"]
    for i in range(n):
        k = i % 3
        cols = sorted(set(rng.integers(k * 60, k * 60 + 25, 6).tolist()))
        lines.append(
            "{" + ", ".join([f"{c} {rng.integers(1, 4)}" for c in cols] + [f"{d + k} 1"]) + "}"
        )
    sparse = load_dataset("\n".join(lines).encode(), name="sp.arff", n_labels=3)
    assert sp.issparse(sparse.X)
    dense = dataclasses.replace(sparse, X=sparse.X.toarray())
    splits = make_splits(protocol.task_y(sparse), scheme="kfold", n_splits=3, random_state=0)
    for method, spec in protocol.METHODS.items():
        if not spec.supports(sparse.task):
            continue
        a = protocol.run_fold(sparse, method, 0, splits, grid=(1.0, 0.01))
        b = protocol.run_fold(dense, method, 0, splits, grid=(1.0, 0.01))
        assert a.params == b.params, method
        for ra, rb in zip(a.rows, b.rows, strict=True):
            assert ra["metric"] == rb["metric"]
            assert ra["value"] == pytest.approx(rb["value"], abs=1e-9), (method, ra["metric"])


class _Stop(Exception):
    pass


@pytest.mark.parametrize(
    ("method", "grid", "points"),
    [("sblr", [1.0, 0.1, 0.01], 3), ("br_svm", [1.0, 0.1], 4)],  # BR-SVM: γ × C
)
def test_a_fold_calls_its_checkpoint_at_every_grid_point_and_stops_when_it_raises(
    method, grid, points
):
    """The dashboard's Cancel stops a fold inside its grid search (a BR-SVM fold on 19 labels
    took minutes, and a Cancel waited for its end). Oracle: the number of grid points of the
    one validation split, plus one before the refit; an exception from the checkpoint ends
    the fold at once."""
    from sblr import load_dataset

    ds = load_dataset("sample_data/wine.csv", target="class")
    splits = make_splits(ds.y, scheme="kfold", n_splits=3)
    calls = []
    res = run_fold(ds, method, 0, splits, grid=grid, checkpoint=lambda: calls.append(1))
    assert len(calls) == points + 1 and res.params
    calls.clear()

    def stop_at_second():
        calls.append(1)
        if len(calls) == 2:
            raise _Stop

    with pytest.raises(_Stop):
        run_fold(ds, method, 0, splits, grid=grid, checkpoint=stop_at_second)
    assert len(calls) == 2


def test_selection_plan_follows_the_cost_model_and_the_budget():
    """The plan's costs are the model written out by hand (SparseSBLR: per inner split the
    evidence once per γ, n_fit · n · (d + m), and the layer with its cuts per (γ, λ),
    (3 · n_fit · m² + 4e7 · m) · 3.5), and the budget picks the inner k-fold, the hold-out
    split, or the defaults."""
    from sblr.protocol import plan_selection

    grid = {"gamma": (1.0, 0.1), "lam": (1e-2, 1e-3, 1e-4)}
    n, d, m, k = 100, 7, 5, 5
    n_fit = n * (k - 1) / k
    by_hand = k * (2 * n_fit * n * (d + m) + 6 * (3 * n_fit * m * m + 4e7 * m) * 3.5)
    plan = plan_selection("sparse_sblr", n, d, m, grid=grid, inner_folds=k, budget=by_hand)
    assert plan.selection == "inner_kfold" and plan.cost == pytest.approx(by_hand)
    holdout = 2 * 90 * n * (d + m) + 6 * (3 * 90 * m * m + 4e7 * m) * 3.5
    plan = plan_selection("sparse_sblr", n, d, m, grid=grid, inner_folds=k, budget=holdout)
    assert plan.selection == "holdout" and "10% hold-out split" in plan.note
    plan = plan_selection("sparse_sblr", n, d, m, grid=grid, inner_folds=k, budget=holdout / 2)
    assert plan.selection is None and "the defaults, not selected" in plan.note
