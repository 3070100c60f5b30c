"""The command line, end to end on the sample data (3 folds, a small grid)."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sblr.protocol as protocol
from sblr.cli import main
from sblr.protocol import METHODS
from sblr.textsafe import escape_markdown

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


@pytest.mark.slow
def test_benchmark_writes_results(bench):
    _, out = bench
    names = {p.name for p in out.iterdir()}
    expected = {"results.csv", "hyperparameters.csv", "tables.md", "cache"}
    expected |= {f"cd_{m}.html" for m in ["accuracy", "hamming_loss", "average_precision"]}
    assert expected <= names
    results = pd.read_csv(out / "results.csv")
    assert list(results.columns) == ["dataset", "method", "fold", "metric", "value"]
    assert set(results.dataset) == {"wine", "halfwine", "planted", "planted_csv"}
    # 2 multi-class sets x 5 methods x 3 folds x 1 metric + 2 multi-label x 4 x 3 x 7
    assert len(results) == 30 + 168
    assert set(results.query("dataset == 'planted'").metric) == {
        "hamming_loss",
        "ranking_loss",
        "one_error",
        "coverage",
        "average_precision",
        "micro_f1",
        "macro_f1",
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


@pytest.mark.slow
def test_benchmark_tables_md(bench):
    _, out = bench
    md = (out / "tables.md").read_text(encoding="utf-8")
    assert "3-fold CV (seed 0), selection: holdout, grid 1, 0.1." in md
    # the decisions the numbers were made with, named (the fitted cut by default)
    assert (
        "Decisions: multi-label data, SML, SBLR and SparseSBLR: fitted cuts (one cut maximizing "
        "micro-F1 on held-out training rows), selected by micro_f1; the baselines by their own "
        "rules; multi-class data: the most probable class, selected by accuracy." in md
    )
    planted_csv = escape_markdown("planted_csv", readable=True)  # data set names are user text
    assert f"Not run (multi-class only): kNN on planted, kNN on {planted_csv}." in md
    assert "| dataset | SparseSBLR | SML | MLKNN | BR-SVM | kNN |" in md  # accuracy table
    assert md.count("| average rank |") == 8  # accuracy, 5 paper metrics, micro/macro-F1
    assert "Friedman χ² =" in md and "±" in md
    html = (out / "cd_accuracy.html").read_text()
    assert "SparseSBLR" in html and "CD = " in html


@pytest.mark.slow
def test_benchmark_decides_by_the_fitted_cut_unless_told_the_papers(tmp_path):
    """Issue #43, item 3: `sblr benchmark` scored the similarity models at π ≥ 0.5 (the
    paper's decisions) while `sblr evaluate` and the dashboard decide by the fitted cut. Its
    default is now the fitted cut and selection by micro-F1; ``--threshold paper --select-by
    average_precision`` reproduces the paper. Oracle: the rows given no label by
    ``run_benchmark`` called here with each decision; tables.md names the one used."""
    from sblr import load_dataset

    argv = ["benchmark", str(PLANTED), "--methods", "sparse_sblr", "--folds", "2"]
    argv += ["--grid", "1,0.1", "--quiet", "--no-cache"]
    assert main([*argv, "--out", str(tmp_path / "fitted")]) == 0
    paper = ["--threshold", "paper", "--select-by", "average_precision"]
    assert main([*argv, *paper, "--out", str(tmp_path / "paper")]) == 0
    ds = load_dataset(str(PLANTED))
    empty = {}
    for name, decision in [
        ("fitted", {"threshold": "micro_f1", "metric": "micro_f1"}),
        ("paper", {"threshold": None, "metric": None}),
    ]:
        hyper = pd.read_csv(tmp_path / name / "hyperparameters.csv")
        _, want = protocol.run_benchmark(
            ds, ["sparse_sblr"], folds=2, grid=[1.0, 0.1], progress=False, **decision
        )
        assert hyper["no_label_rows"].tolist() == want["no_label_rows"].tolist()
        empty[name] = hyper["no_label_rows"].sum()
    assert empty["fitted"] != empty["paper"]
    fitted_md = (tmp_path / "fitted" / "tables.md").read_text(encoding="utf-8")
    paper_md = (tmp_path / "paper" / "tables.md").read_text(encoding="utf-8")
    assert "SparseSBLR: fitted cuts (one cut maximizing micro-F1" in fitted_md
    assert "selected by micro_f1" in fitted_md
    assert "SparseSBLR: the paper's decisions (π ≥ 0.5 on the mean evidence f̄" in paper_md
    assert "selected by average_precision" in paper_md


@pytest.mark.slow
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


def test_help_and_dashboard_leave_the_protocol_unimported():
    """`sblr --help` and `sblr dashboard` answer without importing scikit-learn, SciPy or pandas
    (2-3 s): only benchmark and evaluate need them.  A fresh process, as a user's."""
    code = (
        "import sys\n"
        "from sblr import cli\n"
        "for argv in (['--help'], ['dashboard', '--help']):\n"
        "    try:\n"
        "        cli.main(argv)\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code == 0\n"
        "print([m for m in ('sklearn', 'scipy', 'pandas', 'sblr.protocol') if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "dashboard" in done.stdout and "Arguments after -- go to streamlit run" in done.stdout


@pytest.mark.slow
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
        (["evaluate", str(WINE), "--grid", "1,nan"], "finite numbers > 0"),
        (["evaluate", str(WINE), "--grid", "inf"], "finite numbers > 0"),
        (["evaluate", str(WINE), "--gamma", "inf"], "argument --gamma: must be a finite number"),
        (["evaluate", str(WINE), "--gamma", "0"], "argument --gamma: must be > 0"),
        (["evaluate", str(WINE), "--lam", "nan"], "argument --lam: must be a finite number"),
        (["evaluate", str(WINE), "--lam", "-1"], "argument --lam: must be >= 0"),
        (["evaluate", str(WINE), "--method", "br_svm", "--C=-inf"], "argument --C: must be"),
        (["evaluate", str(WINE), "--n-jobs", "0"], "argument --n-jobs: must be -1"),
        (["evaluate", str(WINE), "--n-jobs", "-2"], "argument --n-jobs: must be -1"),
        (["evaluate", str(WINE), "--n-jobs", "two"], "argument --n-jobs: not an integer"),
        (["evaluate", str(WINE), "--seed", "-1"], "argument --seed: must be an integer from 0"),
        (["evaluate", str(WINE), "--seed", str(2**32)], "argument --seed: must be an integer"),
        (["evaluate", str(WINE), "--inner-folds", "0"], "argument --inner-folds: need at least 2"),
        (["evaluate", str(WINE), "--method", "sml,sblr"], "--method takes one method"),
        (["evaluate", f"{WINE}::colour=red"], "bad data option 'colour=red'"),
        (["evaluate", str(WINE), "--dask", "cloud"], "invalid choice: 'cloud'"),
        # issue #44: a cut of 0 predicts every label, of 1 none; a baseline has no cut
        (["evaluate", str(WINE), "--threshold", "1"], "a probability between 0 and 1"),
        (["fit", str(WINE), "--threshold", "0", "--out", "m"], "a probability between 0 and 1"),
        (["evaluate", str(WINE), "--threshold", "-0.5"], "a probability between 0 and 1"),
        (["evaluate", str(WINE), "--threshold", "nan"], "argument --threshold: must be a finite"),
        (
            ["evaluate", str(WINE), "--method", "mlknn", "--threshold", "0.3"],
            "mlknn does not use --threshold",
        ),
        (
            ["benchmark", str(WINE), "--out", "x", "--methods", "iblr,br_svm", "--threshold", "f1"],
            "iblr, br_svm do not use --threshold",
        ),
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


@pytest.mark.slow
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


def _one_error_line(capsys):
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp, "No .arff, .csv, .tsv, .data files in the folder"),  # empty folder
        (lambda tmp: _write(tmp / "README.txt", b"notes"), "No .arff, .csv, .tsv, .data files"),
        (lambda tmp: _write(tmp / "x.csv", bytes(range(256)) * 8), "binary data"),
        (lambda tmp: _write(tmp / "empty.csv", b""), "The file is empty"),
        (lambda tmp: _write(tmp / "x.csv", b"class\na\nb\na\nb\n"), "No feature columns"),
    ],
    ids=["empty-folder", "folder-without-data", "binary", "empty-file", "no-features"],
)
def test_odd_inputs_exit_2_with_one_line(make, message, tmp_path, capsys, monkeypatch):
    make(tmp_path)
    monkeypatch.setattr(protocol, "run_fold", _fail)  # refused before any fold runs
    assert main(["evaluate", str(tmp_path), "--target", "class", *FAST]) == 2
    assert message in _one_error_line(capsys)


def _write(path, data):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("out", "cache", "message"),
    [
        ("afile", None, "--out {tmp}/afile is a file, not a folder."),
        ("afile/out", None, "--out {tmp}/afile/out: cannot create the folder or write in it"),
        ("out", "afile", "--cache {tmp}/afile is a file, not a folder."),
        ("out", "afile/cache", "--cache {tmp}/afile/cache: cannot create the folder"),
        ("/proc/sblr-out", None, "--out /proc/sblr-out: cannot create the folder"),
    ],
)
def test_unusable_output_folders_exit_2_before_any_fold(
    out, cache, message, tmp_path, capsys, monkeypatch
):
    if out.startswith("/proc") and not Path("/proc/self").exists():
        pytest.skip("needs Linux's read-only /proc")
    (tmp_path / "afile").write_text("not a folder")
    monkeypatch.setattr(protocol, "run_fold", _fail)
    argv = ["benchmark", str(WINE), "--target", "class", "--methods", "ncm"]
    argv += ["--out", str(tmp_path / out)]  # an absolute `out` replaces tmp_path
    if cache is not None:
        argv += ["--cache", str(tmp_path / cache)]
    assert main([*argv, *FAST]) == 2
    assert message.format(tmp=tmp_path) in _one_error_line(capsys)


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (ValueError("the solver\ndiverged"), "error: the solver diverged\n"),
        (OSError(28, "No space left on device"), "No space left on device"),
        (MemoryError(), "error: not enough memory"),
    ],
)
def test_errors_during_the_run_exit_2_with_one_line(error, message, capsys, monkeypatch):
    def run_fold(*args, **kwargs):
        raise error

    monkeypatch.setattr(protocol, "run_fold", run_fold)
    argv = ["evaluate", str(WINE), "--target", "class", "--method", "ncm", *FAST]
    assert main(argv) == 2
    assert message in _one_error_line(capsys)


def test_a_value_error_of_a_fold_is_one_line(tmp_path, capsys):
    one_class = pd.read_csv(WINE).iloc[:40].assign(**{"class": "only"})
    one_class.to_csv(tmp_path / "one.csv", index=False)
    argv = ["evaluate", str(tmp_path / "one.csv"), "--target", "class", "--method", "ncm"]
    assert main([*argv, *FAST]) == 2
    assert "got 1 class" in _one_error_line(capsys)


@pytest.mark.slow
@pytest.mark.parametrize("method", list(METHODS))
def test_overflowing_values_never_give_a_traceback(method, tmp_path, capsys):
    rng = np.random.default_rng(0)
    data = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    data.loc[0, "a"], data.loc[1, "b"] = 1e308, -1e308
    data["class"] = ["x", "y", "z"] * 10
    data.to_csv(tmp_path / "huge.csv", index=False)
    argv = ["evaluate", str(tmp_path / "huge.csv"), "--target", "class", "--method", method]
    code = main([*argv, "--folds", "3", "--grid", "1", "--quiet"])  # an exception fails the test
    err = capsys.readouterr().err
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        assert err.startswith("error: ") and err.count("\n") == 1


def _headerless(sep):
    """wine without its header row, class in the last column, separated by ``sep``."""
    return pd.read_csv(WINE).to_csv(sep=sep, header=False, index=False)


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".dat", ".txt", ".data", ""])
def test_data_options_apply_to_every_delimited_text_file(suffix, tmp_path, capsys):
    path = tmp_path / f"wine{suffix}"
    path.write_text(_headerless(" "))
    argv = ["evaluate", str(path), "--method", "ncm", *FAST]
    assert main([*argv, "--target", "-1", "--no-header"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"{path.name if suffix == '.dat' or not suffix else 'wine'}: NCM")
    assert main(["evaluate", f"{path}::target=13;header=no;name=vin", *argv[2:]]) == 0
    assert capsys.readouterr().out.startswith("vin: NCM, 3-fold CV")


def test_a_folder_contributes_tsv_files_and_skips_notes(tmp_path, capsys):
    (tmp_path / "wine.tsv").write_text(_headerless("\t"))
    (tmp_path / "README.txt").write_text("where the data comes from")
    argv = ["evaluate", str(tmp_path), "--target", "-1", "--no-header", "--method", "ncm"]
    assert main([*argv, *FAST]) == 0
    assert capsys.readouterr().out.startswith("wine: NCM, 3-fold CV")


def _unescaped_pipes(line):
    return len(re.findall(r"(?<!\\)\|", line))


@pytest.mark.slow
def test_written_files_neutralize_formulas_and_markdown(tmp_path):
    wine = pd.read_csv(WINE)
    for name in ["=cmd", "@sum", "a|b"]:
        wine.iloc[::3].to_csv(tmp_path / f"{name}.csv", index=False)
    out = tmp_path / "out"
    argv = ["benchmark", str(tmp_path), "--target", "class", "--methods", "ncm,knn,lr"]
    assert main([*argv, "--out", str(out), *FAST]) == 0
    for table in ["results.csv", "hyperparameters.csv"]:
        written = pd.read_csv(out / table)
        assert set(written.dataset) == {"'=cmd", "'@sum", "a|b"}, table
    md = (out / "tables.md").read_text(encoding="utf-8")
    for name in ["=cmd", "@sum", "a|b"]:
        assert f"| {escape_markdown(name, readable=True)} |" in md and f"| {name} |" not in md
    for block in md.split("\n\n"):  # every row of a table has as many cells as its header
        rows = [line for line in block.splitlines() if line.startswith("|")]
        assert len({_unescaped_pipes(line) for line in rows}) <= 1, block


def test_evaluate_fixed_params(capsys):
    argv = ["evaluate", str(WINE), "--target", "class", "--method", "sparse_sblr"]
    assert main([*argv, "--gamma", "0.1", "--lam", "0.01", *FAST]) == 0
    out = capsys.readouterr().out
    assert "wine: SparseSBLR, 3-fold CV, parameters: fixed gamma=0.1, lam=0.01" in out
    assert "Accuracy ↑" in out and "mean" in out


@pytest.mark.slow
def test_evaluate_selects_per_fold(capsys):
    assert main(["evaluate", str(PLANTED), "--method", "br_svm", *FAST]) == 0
    out = capsys.readouterr().out
    assert "parameters: inner_kfold" in out  # evaluate's default selection
    for label in ["Hamming loss", "Ranking loss", "One-error", "Coverage", "Average precision"]:
        assert label in out


def _fail(*args, **kwargs):
    raise AssertionError("must not run")


@pytest.mark.slow
@pytest.mark.dask
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


def test_a_file_name_that_is_not_utf8_is_refused_before_any_fold(tmp_path, capsys, monkeypatch):
    """It ran the whole cross-validation, then failed with a codec error."""
    import os

    name = os.fsdecode(b"wine-\xff.csv")
    (tmp_path / name).write_bytes(WINE.read_bytes())
    monkeypatch.setattr(protocol, "run_fold", _fail)
    assert main(["evaluate", str(tmp_path / name), "--target", "class", *FAST]) == 2
    line = _one_error_line(capsys)
    assert "is not valid UTF-8; rename the file" in line and "wine-\\xff.csv" in line


def test_a_pipe_is_not_reported_as_missing(tmp_path, capsys, monkeypatch):
    import os

    fifo = tmp_path / "data.csv"
    os.mkfifo(fifo)
    monkeypatch.setattr(protocol, "run_fold", _fail)
    assert main(["evaluate", str(fifo), "--target", "class", *FAST]) == 2
    assert "is not a regular file (a pipe or a device)" in _one_error_line(capsys)


def test_ctrl_c_ends_with_one_line_and_exit_130(capsys, monkeypatch):
    """Ctrl-C printed a 30-line KeyboardInterrupt traceback."""

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(protocol, "run_fold", interrupted)
    assert main(["evaluate", str(WINE), "--target", "class", "--method", "ncm", *FAST]) == 130
    assert capsys.readouterr().err == "interrupted\n"


@pytest.mark.slow  # starts a process pool (about 1 s)
def test_more_jobs_than_cores_are_capped_with_a_note(capsys, monkeypatch):
    """--n-jobs 64 on 2 cores took 115 s against 14 s with one job."""
    import os

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(protocol, "run_fold", _fail)
    main(["evaluate", str(WINE), "--target", "class", "--method", "ncm", "--n-jobs", "64", *FAST])
    err = capsys.readouterr().err
    assert "note: --n-jobs 64 is more than this machine's 2 cores; using 2." in err


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads Linux's /proc")
def test_sigterm_to_the_dashboard_stops_its_streamlit_child(tmp_path):
    """SIGTERM to `sblr dashboard` left Streamlit serving. A real `sblr dashboard` in a
    subprocess, its child found by its parent pid, then SIGTERM to the parent."""
    import signal
    import time

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sblr",
            "dashboard",
            "--",
            "--server.headless=true",
            "--server.port=0",
            "--browser.gatherUsageStats=false",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        child = None
        for _ in range(200):  # the Streamlit child appears
            kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
            if kids.exists() and kids.read_text().split():
                child = int(kids.read_text().split()[0])
                break
            time.sleep(0.05)
        assert child is not None, "sblr dashboard started no child"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
        for _ in range(200):
            if not Path(f"/proc/{child}").exists() or "Z" in _state(child):
                break
            time.sleep(0.05)
        assert not Path(f"/proc/{child}").exists() or "Z" in _state(child)
    finally:
        if proc.poll() is None:
            proc.kill()


def _state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return "Z"


# ----------------------------------------------------------------------------- use the model
@pytest.mark.slow
def test_fit_then_predict_gives_the_models_probabilities(tmp_path, capsys):
    """Oracle: SparseSBLR with the same fixed parameters fitted here; the CSV written by
    `sblr predict` on the training file with its columns in another order."""
    from sblr import SparseSBLRClassifier, load_dataset

    model_path = tmp_path / "wine.skops"
    assert (
        main(
            [
                "fit",
                str(WINE),
                "--target",
                "class",
                "--gamma",
                "0.5",
                "--lam",
                "0.001",
                "--out",
                str(model_path),
            ]
        )
        == 0
    )
    frame = pd.read_csv(WINE)
    shuffled = tmp_path / "new.csv"
    frame[list(reversed(frame.columns))].drop(columns="class").to_csv(shuffled, index=False)
    out = tmp_path / "pred.csv"
    assert main(["predict", str(model_path), str(shuffled), "--out", str(out)]) == 0
    pred = pd.read_csv(out)
    ds = load_dataset(WINE, target="class")
    oracle = SparseSBLRClassifier(gamma=0.5, lam=1e-3).fit(ds.X, ds.y)
    P = oracle.predict_proba(ds.X)
    np.testing.assert_allclose(pred[[f"p({c})" for c in ds.class_names]], P, atol=1e-12)
    assert list(pred["predicted"]) == [str(v) for v in oracle.predict(ds.X)]
    assert list(pred["row"]) == list(range(len(ds.y))) and "true" not in pred


@pytest.mark.slow
def test_evaluate_on_a_supplied_test_file_scores_every_metric(tmp_path, capsys):
    """Train on one file, every metric on the other. Oracle: sblr.metrics on the same rows
    with SparseSBLR fitted here (parameters given, so nothing is selected)."""
    from sblr import SparseSBLRClassifier, load_dataset
    from sblr.metrics import average_precision, hamming_loss

    frame = pd.read_csv(ROOT / "sample_data" / "planted.csv")
    train_csv, test_csv = tmp_path / "train.csv", tmp_path / "test.csv"
    frame.iloc[:350].to_csv(train_csv, index=False)
    frame.iloc[350:, ::-1].to_csv(test_csv, index=False)  # columns in another order
    labels = "daylight,birdsong,rain,thunder,frost,spring_tide,noise"
    argv = [
        "evaluate",
        str(train_csv),
        "--test",
        str(test_csv),
        "--target",
        labels,
        "--gamma",
        "1",
        "--lam",
        "0.001",
    ]
    assert main(argv) == 0
    shown = capsys.readouterr().out
    train = load_dataset(train_csv, target=labels.split(","))
    test = load_dataset(test_csv, like=train)
    model = SparseSBLRClassifier(gamma=1.0, lam=1e-3).fit(train.X, train.y)
    expected = {
        "Hamming loss ↓": hamming_loss(test.y, model.predict(test.X)),
        "Average precision ↑": average_precision(test.y, model.decision_function(test.X)),
    }
    for label, value in expected.items():
        assert re.search(rf"{re.escape(label)}\s+{value:.4f}", shown), (label, shown)
    assert "trained on 350 rows" in shown and "scored on 150 test rows" in shown


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(  # 3 s: the command line in a fresh process
            ["predict", "{tmp}/none.skops", str(WINE), "--out", "{tmp}/p.csv"],
            "Cannot read",
            marks=pytest.mark.slow,
        ),
        pytest.param(  # 5 s: a pickle file written and refused in a fresh process
            ["predict", "{tmp}/pickle.skops", str(WINE), "--out", "{tmp}/p.csv"],
            "pickle",
            marks=pytest.mark.slow,
        ),
        pytest.param(  # 2 s: the kNN pipeline imported and fitted before the refusal
            ["fit", str(WINE), "--target", "class", "--method", "knn", "--out", "{tmp}/m.skops"],
            "writes sblr estimators",
            marks=pytest.mark.slow,
        ),
        (
            ["evaluate", str(WINE), "--target", "class", "--test", "{tmp}/missing.csv"],
            "No such test file",
        ),
        (
            [
                "evaluate",
                str(WINE),
                "--target",
                "class",
                "--test",
                "{tmp}/nolabels.csv",
                "--gamma",
                "1",
                "--lam",
                "0.001",
            ],
            "has no label columns",
        ),
    ],
    ids=["no-model", "pickle-model", "unsaveable-method", "no-test", "test-without-labels"],
)
def test_use_the_model_errors_exit_2_with_one_line(argv, message, tmp_path, capsys):
    import pickle

    (tmp_path / "pickle.skops").write_bytes(pickle.dumps({"a": 1}))
    pd.read_csv(WINE).drop(columns="class").to_csv(tmp_path / "nolabels.csv", index=False)
    argv = [a.format(tmp=tmp_path) for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: a parameter the method does not take
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    if message is not None:
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


@pytest.mark.slow
def test_fit_with_a_threshold_rule_saves_the_cut_and_predict_decides_by_it(tmp_path, capsys):
    """`sblr fit --threshold pcut`: the model file holds the rule and its fitted cut, and
    `sblr predict` gives every label whose probability reaches it. Oracle: SparseSBLR with the
    same settings fitted here; its cut checked against PCut1's definition in test_decision."""
    from sblr import SparseSBLRClassifier, load_dataset
    from sblr.modelfile import load_model

    model_path = tmp_path / "planted.skops"
    argv = ["fit", str(PLANTED), "--gamma", "1", "--lam", "0.001", "--threshold", "pcut"]
    assert main([*argv, "--out", str(model_path)]) == 0
    assert "decision: π ≥ " in capsys.readouterr().out
    saved = load_model(model_path)
    ds = load_dataset(PLANTED)
    oracle = SparseSBLRClassifier(gamma=1.0, lam=1e-3, threshold="pcut").fit(ds.X, ds.y)
    assert saved.info["params"]["threshold"] == "pcut"
    np.testing.assert_allclose(saved.estimator.threshold_, oracle.threshold_)
    out = tmp_path / "pred.csv"
    assert main(["predict", str(model_path), str(PLANTED), "--out", str(out)]) == 0
    pred = pd.read_csv(out, keep_default_na=False)
    decided = oracle.predict_proba(ds.X) >= oracle.threshold_
    expected = [
        "; ".join(n for n, hit in zip(ds.class_names, row, strict=True) if hit) or "(none)"
        for row in decided
    ]
    assert list(pred["predicted"]) == expected
    assert expected != [  # the cut decides differently from 0.5 on these rows
        "; ".join(n for n, hit in zip(ds.class_names, row, strict=True) if hit) or "(none)"
        for row in oracle.predict_proba(ds.X) >= 0.5
    ]


def _planted_files(folder):
    """The planted sample written as a training file (rows 0-349) and a test file (the rest):
    ``(train_csv, test_csv, labels)``, the labels as ``--target`` takes them."""
    frame = pd.read_csv(ROOT / "sample_data" / "planted.csv")
    train_csv, test_csv = folder / "train.csv", folder / "test.csv"
    frame.iloc[:350].to_csv(train_csv, index=False)
    frame.iloc[350:].to_csv(test_csv, index=False)
    return train_csv, test_csv, "daylight,birdsong,rain,thunder,frost,spring_tide,noise"


def test_evaluate_on_a_test_file_counts_rows_with_no_label(tmp_path, capsys):
    from sblr import SparseSBLRClassifier, load_dataset

    train_csv, test_csv, labels = _planted_files(tmp_path)
    argv = ["evaluate", str(train_csv), "--test", str(test_csv), "--target", labels]
    assert main([*argv, "--gamma", "1", "--lam", "0.01", "--threshold", "0.9"]) == 0
    shown = capsys.readouterr().out
    train = load_dataset(train_csv, target=labels.split(","))
    test = load_dataset(test_csv, like=train)
    pred = SparseSBLRClassifier(gamma=1.0, lam=0.01, threshold=0.9).fit(train.X, train.y)
    empty = int((pred.predict(test.X).sum(axis=1) == 0).sum())
    truth = int((np.asarray(test.y).sum(axis=1) == 0).sum())
    assert empty > 0
    assert f"Rows with no label: {empty:,} of 150 (truth: {truth:,})" in shown


def test_an_unusable_out_or_model_is_refused_before_any_work(tmp_path, capsys):
    """--out a folder: refused before the fit (it used to fit, then fail on a raw errno); a
    pipe as the model: refused at once (reading it used to block forever)."""
    import os

    argv = ["fit", str(PLANTED), "--gamma", "1", "--lam", "0.001", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "is a folder" in capsys.readouterr().err
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    argv = ["predict", str(fifo), str(PLANTED), "--out", str(tmp_path / "p.csv")]
    assert main(argv) == 2
    assert "not a regular file" in capsys.readouterr().err


@pytest.mark.slow
def test_evaluate_counts_rows_with_no_label_over_the_folds(capsys):
    """Oracle: the same folds (benchmark_splits) and fixed model fitted here, counted."""
    from sblr import SparseSBLRClassifier, load_dataset
    from sblr.protocol import benchmark_splits

    argv = ["evaluate", str(PLANTED), "--gamma", "1", "--lam", "0.01", "--threshold", "0.8"]
    assert main([*argv, "--folds", "3", "--quiet"]) == 0
    shown = capsys.readouterr().out
    ds = load_dataset(PLANTED)
    Y = np.asarray(ds.y)
    empty = truth = 0
    for train, test in benchmark_splits(ds, 3, 0):
        model = SparseSBLRClassifier(gamma=1.0, lam=0.01, threshold=0.8).fit(ds.X[train], Y[train])
        empty += int((model.predict(ds.X[test]).sum(axis=1) == 0).sum())
        truth += int((Y[test].sum(axis=1) == 0).sum())
    assert empty > 0
    assert f"Rows with no label: {empty:,} of 500 test rows over the folds (truth: {truth:,})" in (
        shown
    )


# --------------------------------------------------------------------------- Mulan files
LABELS = ["daylight", "birdsong", "rain", "thunder", "frost", "spring_tide", "noise"]
FIXED = ["--gamma", "1", "--lam", "0.01", "--folds", "3", "--quiet"]


def _planted_split(tmp_path):
    """planted.arff as a split file with no XML beside it, and its XML under another name."""
    arff = tmp_path / "planted-train.arff"
    arff.write_bytes(PLANTED.read_bytes())
    xml = tmp_path / "labels" / "planted-labels.xml"
    xml.parent.mkdir()
    xml.write_bytes(PLANTED.with_suffix(".xml").read_bytes())
    return arff, xml


@pytest.mark.slow
@pytest.mark.parametrize(
    "how",
    [["--xml", "{xml}"], ["--n-labels", "7"], ["{arff}::xml={xml}"], ["{arff}::n_labels=7"]],
    ids=["--xml", "--n-labels", "::xml=", "::n_labels="],
)
def test_evaluate_is_told_the_labels_of_an_arff_file(how, tmp_path, capsys):
    """An ARFF file whose XML is not beside it: --xml PATH (or --n-labels N) names its labels,
    for one file, or PATH::xml=/n_labels= for each file of a benchmark."""
    arff, xml = _planted_split(tmp_path)
    given = [h.format(arff=arff, xml=xml) for h in how]
    argv = ["evaluate", *given] if "::" in how[0] else ["evaluate", str(arff), *given]
    assert main([*argv, *FIXED]) == 0
    out = capsys.readouterr()
    assert "Average precision" in out.out and "Accuracy" not in out.out
    assert "warning" not in out.err


def test_an_arff_file_read_as_one_class_says_so_on_stderr(tmp_path, capsys):
    """Without its XML planted reads as one class (its last label, Weka's convention): the
    loader's warning reaches the command line, with how to read it as multi-label."""
    arff, _ = _planted_split(tmp_path)
    assert main(["evaluate", str(arff), *FIXED]) == 0
    out = capsys.readouterr()
    assert "Accuracy" in out.out
    assert "warning: planted-train.arff: the last 7 attributes" in out.err
    assert "n_labels=7" in out.err
    assert "looked for 'planted-train.xml', 'planted.xml'" in out.err


def test_many_binary_attributes_without_labels_exit_2_with_the_remedies(tmp_path, capsys):
    tags = tmp_path / "tags-train.arff"
    header = ["@relation tags", "@attribute x numeric"]
    header += [f"@attribute t{j} {{0,1}}" for j in range(60)]
    rows = [",".join([str(i)] + ["01"[(i + j) % 2] for j in range(60)]) for i in range(6)]
    tags.write_text("\n".join([*header, "@data", *rows, ""]))
    assert main(["evaluate", str(tags), *FIXED]) == 2
    err = _one_error_line(capsys)
    assert "ends with 60 attributes declared {0,1}" in err
    assert "--xml PATH" in err and "--n-labels N" in err
    assert main(["evaluate", f"{tags}::target=-1", *FIXED]) == 0  # one class, if so meant
    assert "Accuracy" in capsys.readouterr().out


def test_xml_and_n_labels_need_one_arff_file(tmp_path, capsys):
    arff, xml = _planted_split(tmp_path)
    other = tmp_path / "other.arff"
    other.write_bytes(PLANTED.read_bytes())
    argv = ["benchmark", str(arff), str(other), "--xml", str(xml), "--out", str(tmp_path / "o")]
    assert main([*argv, "--methods", "sml", *FAST]) == 2
    err = _one_error_line(capsys)
    assert "--xml names the labels of one ARFF file" in err and "PATH::xml=FILE" in err
    argv = ["evaluate", str(WINE), "--target", "class", "--xml", str(xml), *FIXED]
    assert main(argv) == 2
    assert "--xml and --n-labels are for ARFF files" in _one_error_line(capsys)


# --------------------------------------------------------------------------- parameters
@pytest.mark.slow
def test_gamma_takes_every_value_the_library_takes(capsys):
    """``--gamma scale`` (the estimators' default) was refused as "not a number"; BR-SVM also
    takes ``auto``, the similarity models do not (their constraints say so)."""
    argv = ["evaluate", str(WINE), "--target", "class", "--folds", "3", "--quiet"]
    assert main([*argv, "--gamma", "scale", "--lam", "0.01"]) == 0
    assert "parameters: fixed gamma=scale, lam=0.01" in capsys.readouterr().out
    assert main([*argv, "--method", "br_svm", "--gamma", "auto", "--C", "1"]) == 0
    assert "parameters: fixed gamma=auto, C=1" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--gamma", "auto"])
    assert exc.value.code == 2
    assert "sparse_sblr takes --gamma scale or a number > 0, not 'auto'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*argv, "--gamma", "sclae"])
    assert "argument --gamma: a number > 0, scale or auto; got 'sclae'" in capsys.readouterr().err


@pytest.mark.slow
def test_fit_with_gamma_scale_saves_the_resolved_gamma(tmp_path, capsys):
    from sblr.modelfile import load_model

    model = tmp_path / "m.skops"
    argv = ["fit", str(PLANTED), "--gamma", "scale", "--lam", "0.01", "--out", str(model)]
    assert main(argv) == 0
    assert "parameters fixed gamma=scale, lam=0.01" in capsys.readouterr().out
    est = load_model(model).estimator
    assert est.gamma == "scale" and est.gamma_ > 0


@pytest.mark.slow
def test_evaluate_test_keeps_the_defaults_where_selection_is_over_budget(
    tmp_path, capsys, monkeypatch
):
    """At the default ``--selection auto`` a selection whose estimated cost is over the budget
    is not run (select_params must not be called): the model is fitted at the estimator's
    defaults, and the output says so and why (under the budget: test_protocol.py)."""
    import sblr.cli._commands as commands
    import sblr.protocol as protocol
    from sblr import SparseSBLRClassifier, load_dataset
    from sblr.metrics import average_precision

    train_csv, test_csv, labels = _planted_files(tmp_path)
    argv = ["evaluate", str(train_csv), "--test", str(test_csv), "--target", labels]
    monkeypatch.setattr(protocol, "SELECTION_BUDGET", 1.0)
    monkeypatch.setattr(commands, "select_params", _fail)
    assert main(argv) == 0
    shown = capsys.readouterr().out
    assert "the defaults, not selected: selecting on 5 inner folds would cost" in shown
    train = load_dataset(train_csv, target=labels.split(","))
    test = load_dataset(test_csv, like=train)
    model = SparseSBLRClassifier().fit(train.X, train.y)  # gamma "scale", lam 1e-4
    ap = average_precision(test.y, model.decision_function(test.X))
    assert f"Average precision ↑   {ap:.4f}" in shown


def test_sblr_says_what_its_layer_costs_and_names_the_bounded_alternative(capsys, monkeypatch):
    """Above the note's threshold SBLR's commands say, before fitting, the layer's cost from
    the data's shape (8·n·(m+1)²·m) and point at SparseSBLR; below it, and for SparseSBLR, no
    note."""
    from types import SimpleNamespace

    import sblr.cli._commands as commands

    delicious = SimpleNamespace(n_samples=12920, class_names=[f"tag{k}" for k in range(983)])
    commands._cost_note("sblr", delicious)
    out = capsys.readouterr().out
    assert f"costs about {8 * 12920 * 984**2 * 983:.1e} multiply-adds" in out
    assert "--method sparse_sblr is the bounded alternative" in out
    commands._cost_note("sparse_sblr", delicious)
    emotions = SimpleNamespace(n_samples=391, class_names=[f"mood{k}" for k in range(6)])
    commands._cost_note("sblr", emotions)
    assert capsys.readouterr().out == ""
