"""Tests of benchmarks/reproduction.py (the report beside the paper's numbers)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from benchmarks import reproduction as rep  # the script (benchmarks/ from the repository root)

REPO = Path(__file__).resolve().parent.parent
PAPER = REPO.parent / "shared" / "paper" / "results.csv"
DOCS = REPO / "docs"

pytestmark = pytest.mark.skipif(
    not PAPER.exists(), reason=f"the paper's results are not available ({PAPER} is absent)"
)


def _rows(dataset, method, metric, values):
    return [
        {"dataset": dataset, "method": method, "fold": i, "metric": metric, "value": v}
        for i, v in enumerate(values)
    ]


@pytest.fixture
def tiny(tmp_path):
    rows = (
        _rows("emotions", "sparse_sblr", "hamming_loss", [0.18, 0.20])  # 0.190 vs 0.190
        + _rows("emotions", "sml", "hamming_loss", [0.20, 0.20])  # 0.200 vs 0.238: gap
        + _rows("emotions", "sparse_sblr", "coverage", [1.79, 1.79])  # +0.080 < 0.1
        + _rows("emotions", "sml", "coverage", [1.90, 1.90])  # +0.141 > 0.1: gap
        + _rows("balance-scale", "sparse_sblr", "accuracy", [0.94, 0.96])  # +0.037: gap
        + _rows("balance-scale", "sml", "accuracy", [0.887, 0.887])  # +0.010
        + _rows("balance-scale", "mlknn", "accuracy", [0.9, 0.9])  # no paper value
        + _rows("zoo", "sblr", "accuracy", [0.93, 0.93])  # -0.020 exactly: not a gap
    )
    path = tmp_path / "results.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_comparison_flags_exactly_the_gaps(tiny):
    comp = rep.comparison(rep.read_results([tiny]), rep.read_paper(PAPER))
    gaps = {(r.metric, r.paper_dataset, r.label) for r in comp[comp["gap"]].itertuples()}
    assert gaps == {
        ("hamming_loss", "emotions", "SML"),
        ("coverage", "emotions", "SML"),
        ("accuracy", "balance", "SparseSBLR"),
    }
    mlknn = comp[(comp["method"] == "mlknn")].iloc[0]
    assert pd.isna(mlknn["paper"]) and not mlknn["gap"]


@pytest.mark.slow
def test_report_rows_and_discussion(tiny, tmp_path):
    discussion = tmp_path / "discussion.md"
    discussion.write_text("Hand-written DISCUSSION-MARKER.\n", encoding="utf-8")
    out = tmp_path / "report.md"
    rep.main(
        [
            "--results",
            str(tiny),
            "--paper",
            str(PAPER),
            "--discussion",
            str(discussion),
            "--runtime",
            "1 s",
            "--out",
            str(out),
        ]
    )
    text = out.read_text(encoding="utf-8")
    expected = [
        "| emotions | SparseSBLR | 0.190 ± 0.010 | 0.190 | +0.000 |  |",
        "| emotions | SML | 0.200 ± 0.000 | 0.238 | -0.038 | **gap** |",
        "| emotions | SparseSBLR | 1.790 ± 0.000 | 1.710 | +0.080 |  |",
        "| emotions | SML | 1.900 ± 0.000 | 1.759 | +0.141 | **gap** |",
        "| balance | SparseSBLR | 0.950 ± 0.010 | 0.913 | +0.037 | **gap** |",
        "| balance | SML | 0.887 ± 0.000 | 0.877 | +0.010 |  |",
        "| balance | MLKNN | 0.900 ± 0.000 | n/a |  |  |",
        "| zoo | SBLR | 0.930 ± 0.000 | 0.950 | -0.020 |  |",
    ]
    lines = text.splitlines()
    for row in expected:
        assert row in lines
    assert text.count("**gap**") - text.count("**gap** marks") == 3
    assert "| coverage | emotions | SML | 1.900 | 0.000 | 1.759 | +0.141 | — | worse |" in lines
    assert (
        "| accuracy | balance | SparseSBLR | 0.950 | 0.010 | 0.913 | +0.037 | 5.2 | better |"
        in lines
    )
    assert "Run time: 1 s." in lines
    assert "## Discussion" in lines and "Hand-written DISCUSSION-MARKER." in lines
    assert re.search(r"^- BR-SVM .*not finished", text, re.M)
    assert "cmc" in text  # data sets of the paper not run are listed
    assert "--methods sparse_sblr,sml,mlknn,sblr" not in text
    # the paper's decisions, named: the benchmark's default is the fitted cut
    assert (
        "--methods sparse_sblr,sblr,sml,mlknn --folds 2 --threshold paper "
        "--select-by average_precision --out /tmp/repro" in text
    )


def test_br_svm_merged_from_a_second_run(tiny, tmp_path):
    svm = tmp_path / "svm"
    svm.mkdir()
    pd.DataFrame(_rows("balance-scale", "br_svm", "accuracy", [0.88, 0.88])).to_csv(
        svm / "results.csv", index=False
    )
    text = rep.render(
        rep.read_results([tiny, svm]), rep.read_paper(PAPER), runtime="1 s", discussion=None
    )
    assert "| balance | BR-SVM | 0.880 ± 0.000 | 0.882 | -0.002 |  |" in text.splitlines()
    assert not re.search(r"^- BR-SVM", text, re.M)
    assert "--methods br_svm" in text


@pytest.fixture
def tiny_inner(tmp_path):
    """An inner-selection run of SparseSBLR and SBLR beside ``tiny`` (the 10%-split run)."""
    rows = (
        _rows("emotions", "sparse_sblr", "hamming_loss", [0.17, 0.19])  # 0.180 vs 0.190
        + _rows("emotions", "sparse_sblr", "coverage", [1.70, 1.80])  # 1.750 vs 1.790
        + _rows("balance-scale", "sparse_sblr", "accuracy", [0.90, 0.94])  # 0.920 vs 0.950
        + _rows("zoo", "sblr", "accuracy", [0.93, 0.93])  # 0.930 vs 0.930
        + _rows("wine", "sparse_sblr", "accuracy", [1.0, 1.0])  # not in the 10%-split run
    )
    path = tmp_path / "inner.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _report(tmp_path, *extra):
    out = tmp_path / "report.md"
    rep.main(
        ["--paper", str(PAPER), "--discussion", str(tmp_path / "none.md"), "--out", str(out)]
        + list(extra)
    )
    return out.read_text(encoding="utf-8")


SELECTION_HEADING = "## Hyper-parameter selection: the paper's 10% split vs inner 5-fold CV"


@pytest.mark.slow
def test_selection_section_only_with_inner_results(tiny, tiny_inner, tmp_path):
    without = _report(tmp_path, "--results", str(tiny), "--runtime", "1 s")
    assert SELECTION_HEADING not in without
    assert "--inner-results" not in without and "inner_kfold" not in without
    assert "Inner 5-fold run time" not in without
    assert '--runtime "1 s" --out docs/reproduction.md' in without
    with_inner = _report(
        tmp_path,
        *("--results", str(tiny), "--runtime", "1 s"),
        *("--inner-results", str(tiny_inner), "--inner-runtime", "3 min"),
    )
    lines = with_inner.splitlines()
    assert SELECTION_HEADING in lines
    # everything before the new section is unchanged but for the regeneration commands
    head = with_inner.split(SELECTION_HEADING)[0]
    assert head.split("## Not run")[1].rstrip() == without.split("## Not run")[1].rstrip()
    assert "Inner 5-fold run time: 3 min." in lines
    assert (
        '--runtime "1 s" --inner-results docs/reproduction_results_inner_kfold.csv '
        '--inner-runtime "3 min" --out docs/reproduction.md' in with_inner
    )
    command = next(x for x in lines if "--selection inner_kfold" in x)
    assert command.startswith("python -m sblr benchmark ../shared/datasets/multilabel/emotions")
    assert command.endswith(
        "--methods sparse_sblr,sblr --folds 2 --selection inner_kfold --inner-folds 5 "
        "--threshold paper --select-by average_precision --out /tmp/repro_inner --n-jobs 1"
    )
    assert '"../shared/datasets/multiclass/wine.data::target=0;header=no"' in command
    assert "cp /tmp/repro_inner/results.csv docs/reproduction_results_inner_kfold.csv" in lines
    with pytest.raises(SystemExit):
        _report(tmp_path, "--results", str(tiny), "--inner-runtime", "3 min")


@pytest.mark.slow
def test_selection_numbers_worked_by_hand(tiny, tiny_inner, tmp_path):
    text = _report(
        tmp_path,
        *("--results", str(tiny), "--inner-results", str(tiny_inner)),
    )
    lines = text.splitlines()
    section = text.split(SELECTION_HEADING)[1]
    rows = [x for x in section.splitlines() if x.startswith("| ") and "---" not in x][1:]
    assert rows == [
        # mean ± population std of the folds; Δ = inner - split; |Δ| / the split's std
        "| hamming_loss | emotions | SparseSBLR | 0.190 ± 0.010 | 0.180 ± 0.010 | -0.010 | 1.0 "
        "| better | 0.190 | split |",
        "| coverage | emotions | SparseSBLR | 1.790 ± 0.000 | 1.750 ± 0.050 | -0.040 | — "
        "| better | 1.710 | inner |",
        "| accuracy | balance | SparseSBLR | 0.950 ± 0.010 | 0.920 ± 0.020 | -0.030 | 3.0 "
        "| worse | 0.913 | inner |",
        "| accuracy | zoo | SBLR | 0.930 ± 0.000 | 0.930 ± 0.000 | +0.000 | — | equal | 0.950 "
        "| tie |",
    ]
    assert (
        "- **SparseSBLR** (3 cells, data set × metric): inner 5-fold better on 2, worse on 1, "
        "equal on 0 (at 3 decimals). Nearer the paper's value on 2, farther on 1, tied on 0 of "
        "the 3 cells with a paper value; gaps to the paper: 1 with the 10% split, 0 with inner "
        "5-fold. Mean fold std on the [0, 1] metrics (2 cells): 0.010 with the 10% split, "
        "0.015 with inner 5-fold; on coverage (1 cell): 0.000 and 0.050. Fold std lower with "
        "inner 5-fold on 0, higher on 2, equal on 1 (at 3 decimals)." in lines
    )
    assert (
        "- **SBLR** (1 cell, data set × metric): inner 5-fold better on 0, worse on 0, equal on "
        "1 (at 3 decimals). Nearer the paper's value on 0, farther on 0, tied on 1 of the 1 cell "
        "with a paper value; gaps to the paper: 0 with the 10% split, 0 with inner 5-fold. "
        "Mean fold std on the [0, 1] metrics (1 cell): 0.000 with the 10% split, 0.000 with "
        "inner 5-fold. Fold std lower with inner 5-fold on 0, higher on 0, equal on 1 "
        "(at 3 decimals)." in lines
    )
    assert "SML" not in section and "MLKNN" not in section  # not in the inner run
    assert "Only in the inner run (no 10%-split result to compare): SparseSBLR on wine." in lines
    assert "Inner 5-fold run time: not recorded." in lines


@pytest.mark.slow
def test_selection_verdict_follows_the_metric_direction(tiny, tiny_inner):
    split, inner = rep.read_results([tiny]), rep.read_results([tiny_inner])
    paper = rep.read_paper(PAPER)
    verdicts = {
        (r.metric, r.paper_dataset, r.label): r.verdict
        for r in rep.selection_comparison(split, inner, paper).itertuples()
    }
    # a lower loss is better, a lower accuracy is worse
    assert verdicts[("hamming_loss", "emotions", "SparseSBLR")] == "better"
    assert verdicts[("coverage", "emotions", "SparseSBLR")] == "better"
    assert verdicts[("accuracy", "balance", "SparseSBLR")] == "worse"
    assert verdicts[("accuracy", "zoo", "SBLR")] == "equal"
    # the runs swapped: every verdict flips
    swapped = {
        (r.metric, r.paper_dataset, r.label): r.verdict
        for r in rep.selection_comparison(inner, split, paper).itertuples()
    }
    flip = {"better": "worse", "worse": "better", "equal": "equal"}
    assert swapped == {k: flip[v] for k, v in verdicts.items()}


def test_selection_equal_means_equal_at_three_decimals(tmp_path):
    split, inner = tmp_path / "split.csv", tmp_path / "inner.csv"
    pd.DataFrame(
        _rows("wine", "sblr", "accuracy", [0.9]) + _rows("tae", "sblr", "accuracy", [0.5])
    ).to_csv(split, index=False)
    pd.DataFrame(
        _rows("wine", "sblr", "accuracy", [0.9004]) + _rows("tae", "sblr", "accuracy", [0.5006])
    ).to_csv(inner, index=False)
    sel = rep.selection_comparison(
        rep.read_results([split]), rep.read_results([inner]), rep.read_paper(PAPER)
    )
    assert dict(zip(sel["dataset"], sel["verdict"], strict=True)) == {
        "tae": "better",
        "wine": "equal",
    }


@pytest.mark.slow
def test_committed_report_is_up_to_date(tmp_path):
    report, results = DOCS / "reproduction.md", DOCS / "reproduction_results.csv"
    inner = DOCS / "reproduction_results_inner_kfold.csv"
    if not (report.exists() and results.exists()):
        pytest.fail("docs/reproduction.md or docs/reproduction_results.csv is missing")
    if not rep.DEFAULT_DATA.is_dir():  # its check of the published pairs reads the label sets
        pytest.skip(
            "../shared/datasets not found: benchmark data is only on the development machines"
        )
    committed = report.read_text(encoding="utf-8")
    runtime = re.search(r"^Run time: (.*)\.$", committed, re.M).group(1)
    out = tmp_path / "reproduction.md"
    args = ["--results", str(results), "--paper", str(PAPER), "--out", str(out)]
    if runtime != "not recorded":
        args += ["--runtime", runtime]
    if inner.exists():
        args += ["--inner-results", str(inner)]
        inner_runtime = re.search(r"^Inner 5-fold run time: (.*)\.$", committed, re.M)
        if inner_runtime and inner_runtime.group(1) != "not recorded":
            args += ["--inner-runtime", inner_runtime.group(1)]
    rep.main(args)
    assert out.read_text(encoding="utf-8") == committed, (
        "docs/reproduction.md is stale; regenerate it with the command in its "
        '"How to regenerate" section'
    )


@pytest.mark.slow
def test_friedman_section_worked_by_hand():
    """Three data sets on which SparseSBLR, SBLR and SML always come 1st, 2nd, 3rd: average
    ranks 1, 2, 3; Friedman's chi-square 12 / (n k (k + 1)) * sum R_j^2 - 3 n (k + 1) =
    12 / 36 * (3² + 6² + 9²) - 36 = 6 on 2 degrees of freedom, p = exp(-3) = 0.0498; the
    critical difference q_0.05 sqrt(k (k + 1) / (6 n)) = 2.343 * sqrt(12 / 18) = 1.91."""
    rows = []
    for data in ("emotions", "scene", "yeast"):
        for method, loss in (("sparse_sblr", 0.1), ("sblr", 0.2), ("sml", 0.3)):
            rows += _rows(data, method, "hamming_loss", [loss, loss])
    lines = rep.friedman_section(pd.DataFrame(rows))
    (row,) = [line for line in lines if line.startswith("| hamming_loss")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:7] == ["3", "3", "0.050", "1.91", "1.00 (1 of 3)", "SparseSBLR (1.00)"]
    # SML is 2 ranks behind, more than the critical difference; SBLR 1 rank, less
    assert cells[8] == "SparseSBLR is significantly better than SML"


def test_published_coverage_below_what_its_ranking_loss_allows_is_flagged():
    """A 45-label text set's shape (978 rows, 1 to 3 labels a row, cardinality about 1.25):
    coverage 0.409 beside ranking loss 0.020 needs at least 0.25 + 0.02 · 42 ≈ 1.09 (every
    row has at least 42 irrelevant labels); a pair that respects the floor is not flagged."""
    import numpy as np

    repro = rep
    rng = np.random.default_rng(0)
    Y = np.zeros((978, 45), dtype=int)
    Y[np.arange(978), rng.integers(0, 45, 978)] = 1
    Y[rng.random(978) < 0.22, 7] = 1
    Y[:20, 8] = 1
    assert Y.sum(axis=1).max() <= 3
    paper = pd.DataFrame(
        [
            ["mlc", "textlike", "coverage", 0.409, 1.2],
            ["mlc", "textlike", "ranking_loss", 0.020, 0.020],
        ],
        columns=["table", "dataset", "metric", "A", "B"],
    )
    cells = repro.impossible_cells(paper, {"textlike": Y}).set_index("method")
    assert cells.loc["A", "impossible"] and not cells.loc["B", "impossible"]
    assert cells.loc["A", "floor"] == pytest.approx(Y.sum(1).mean() - 1 + 0.0195 * 42)
    text = "\n".join(repro.impossible_section(paper, {"textlike": Y}))
    assert "| textlike | A | 0.409 | 0.020 |" in text and "impossible: 1" in text
