"""Tests of benchmarks/reproduction.py (the report beside the paper's numbers)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parent.parent
PAPER = REPO.parent / "shared" / "paper" / "results.csv"
DOCS = REPO / "docs"

pytestmark = pytest.mark.skipif(
    not PAPER.exists(), reason=f"the paper's results are not available ({PAPER} is absent)"
)


def _load_script():
    spec = importlib.util.spec_from_file_location(
        "reproduction", REPO / "benchmarks" / "reproduction.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rep = _load_script()


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
    assert "--methods sparse_sblr,sblr,sml,mlknn --folds 2" in text


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


def test_committed_report_is_up_to_date(tmp_path):
    report, results = DOCS / "reproduction.md", DOCS / "reproduction_results.csv"
    if not (report.exists() and results.exists()):
        pytest.fail("docs/reproduction.md or docs/reproduction_results.csv is missing")
    committed = report.read_text(encoding="utf-8")
    runtime = re.search(r"^Run time: (.*)\.$", committed, re.M).group(1)
    out = tmp_path / "reproduction.md"
    args = ["--results", str(results), "--paper", str(PAPER), "--out", str(out)]
    if runtime != "not recorded":
        args += ["--runtime", runtime]
    rep.main(args)
    assert out.read_text(encoding="utf-8") == committed, (
        "docs/reproduction.md is stale; regenerate it with the command in its "
        '"How to regenerate" section'
    )
