"""The command line, end to end on the sample data (3 folds, a small grid)."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import sblr.protocol as protocol
from sblr.cli import main

ROOT = Path(__file__).resolve().parents[1]
WINE = ROOT / "sample_data" / "wine.csv"
PLANTED = ROOT / "sample_data" / "planted.arff"
FAST = ["--folds", "3", "--grid", "1,0.1", "--quiet"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """One benchmark run: wine, a second multi-class set, planted (ARFF) and planted (CSV)."""
    tmp = tmp_path_factory.mktemp("bench")
    wine = pd.read_csv(WINE)
    wine.iloc[::2].to_csv(tmp / "halfwine.csv", index=False)
    labels = "daylight,birdsong,rain,thunder,frost,spring_tide,noise"
    out = tmp / "out"
    argv = [
        "benchmark",
        str(WINE),
        str(tmp / "halfwine.csv"),
        str(PLANTED),
        f"{ROOT / 'sample_data' / 'planted.csv'}::target={labels};name=planted_csv",
        "--target",
        "class",
        "--methods",
        "sparse_sblr,sml,mlknn,br_svm,knn",
        "--out",
        str(out),
        *FAST,
    ]
    assert main(argv) == 0
    return argv, out


def test_benchmark_writes_results(bench):
    _, out = bench
    names = {p.name for p in out.iterdir()}
    expected = {"results.csv", "hyperparameters.csv", "tables.md", "cache"}
    expected |= {f"cd_{m}.html" for m in ["accuracy", "hamming_loss", "average_precision"]}
    assert expected <= names
    results = pd.read_csv(out / "results.csv")
    assert list(results.columns) == ["dataset", "method", "fold", "metric", "value"]
    assert set(results.dataset) == {"wine", "halfwine", "planted", "planted_csv"}
    # 2 multi-class sets x 5 methods x 3 folds x 1 metric + 2 multi-label x 4 x 3 x 5
    assert len(results) == 30 + 120
    assert set(results.query("dataset == 'planted'").metric) == {
        "hamming_loss",
        "ranking_loss",
        "one_error",
        "coverage",
        "average_precision",
    }
    assert "knn" not in set(results.query("dataset == 'planted'").method)
    # the same data read from ARFF and from CSV give the same numbers
    a = results.query("dataset == 'planted'").drop(columns="dataset").reset_index(drop=True)
    b = results.query("dataset == 'planted_csv'").drop(columns="dataset").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    hyper = pd.read_csv(out / "hyperparameters.csv")
    assert len(hyper) == 2 * 5 * 3 + 2 * 4 * 3
    assert set(hyper.query("method == 'br_svm'").C) <= {1.0, 0.1}
    assert set(hyper.query("method == 'sparse_sblr'").lam) <= {1.0, 0.1}
    assert hyper.query("method == 'mlknn'").k.eq(10).all()


def test_benchmark_tables_md(bench):
    _, out = bench
    md = (out / "tables.md").read_text(encoding="utf-8")
    assert "3-fold CV (seed 0), selection: holdout, grid 1, 0.1." in md
    assert "Not run (multi-class only): kNN on planted, kNN on planted_csv." in md
    assert "| dataset | SparseSBLR | SML | MLKNN | BR-SVM | kNN |" in md  # accuracy table
    assert md.count("| average rank |") == 6
    assert "Friedman χ² =" in md and "±" in md
    html = (out / "cd_accuracy.html").read_text()
    assert "SparseSBLR" in html and "CD = " in html


def test_benchmark_rerun_uses_the_cache(bench, monkeypatch):
    argv, out = bench
    before = (out / "results.csv").read_text()
    monkeypatch.setattr(protocol, "run_fold", _fail)
    assert main(argv) == 0
    assert (out / "results.csv").read_text() == before


def test_help_exits_zero(capsys):
    for argv in (["--help"], ["benchmark", "--help"], ["evaluate", "--help"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "--methods" in text and "--target" in text and "--gamma" in text
    assert "--grid" not in text  # hidden test option
    assert "--scheduler ADDRESS" in text and "--dask {local}" in text


def test_python_dash_m(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "sblr", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0 and "benchmark" in done.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["benchmark", str(WINE), "--out", "x", "--methods", "sml,svm"], "unknown method(s) svm"),
        (["benchmark", str(WINE), "--target", "class"], "--out"),
        (["evaluate", str(WINE), "--folds", "1"], "at least 2 folds"),
        (["evaluate", str(WINE), "--method", "sml", "--lam", "0.1"], "does not take --lam"),
        (["evaluate", str(WINE), "--grid", "1,x"], "comma-separated list"),
        (["evaluate", str(WINE), "--dask", "cloud"], "invalid choice: 'cloud'"),
        (
            ["evaluate", str(WINE), "--dask", "local", "--scheduler", "tcp://127.0.0.1:1"],
            "not allowed with argument",
        ),
    ],
)
def test_bad_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evaluate", str(WINE)], "needs --target"),
        (["evaluate", "nowhere.csv", "--target", "class"], "No such file"),
        (["evaluate", str(WINE), "--target", "colour"], "colour"),
        (["evaluate", str(PLANTED), "--method", "knn"], "multi-class data only"),
        (["evaluate", str(PLANTED), "--scheduler", "127.0.0.1:8786"], "tcp://HOST:PORT"),
    ],
)
def test_data_errors_exit_2_with_one_line(argv, message, capsys, tmp_path):
    assert main([*argv, *FAST]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_evaluate_fixed_params(capsys):
    argv = ["evaluate", str(WINE), "--target", "class", "--method", "sparse_sblr"]
    assert main([*argv, "--gamma", "0.1", "--lam", "0.01", *FAST]) == 0
    out = capsys.readouterr().out
    assert "wine: SparseSBLR, 3-fold CV, parameters: fixed gamma=0.1, lam=0.01" in out
    assert "Accuracy ↑" in out and "mean" in out


def test_evaluate_selects_per_fold(capsys):
    assert main(["evaluate", str(PLANTED), "--method", "br_svm", *FAST]) == 0
    out = capsys.readouterr().out
    assert "parameters: holdout" in out
    for label in ["Hamming loss", "Ranking loss", "One-error", "Coverage", "Average precision"]:
        assert label in out


def _fail(*args, **kwargs):
    raise AssertionError("must not run")


def test_evaluate_on_a_local_dask_cluster(capsys):
    pytest.importorskip("distributed")
    argv = ["evaluate", str(WINE), "--target", "class", "--method", "ncm", *FAST]
    assert main(argv) == 0
    here = capsys.readouterr().out
    assert main([*argv, "--dask", "local", "--n-jobs", "2"]) == 0
    there = capsys.readouterr().out

    def accuracies(out):  # per fold and the summary line; the timing columns differ
        lines = out.splitlines()
        return [line.split()[:2] for line in lines[3:6]] + [lines[-1]]

    assert accuracies(there) == accuracies(here)
    assert accuracies(here)[-1].startswith("Accuracy")
