"""Benchmark tables and significance tests, checked against hand-made tables and Demšar (2006)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as ss

from sblr.stats import (
    cd_diagram,
    cliques,
    critical_difference,
    friedman_nemenyi,
    iman_davenport,
    mean_std_table,
    paper_tables_markdown,
    q_alpha,
    rank_table,
)


def _long(table, metric, folds=1):
    """Long results from a {dataset: {method: value}} table (every fold the same value)."""
    rows = [
        {"dataset": d, "method": m, "fold": f, "metric": metric, "value": v}
        for d, row in table.items()
        for m, v in row.items()
        for f in range(folds)
    ]
    return pd.DataFrame(rows)


# Hamming loss (lower is better) with ties; hand-ranked below.
HAMMING = {
    "d1": {"sparse_sblr": 0.10, "sblr": 0.20, "sml": 0.30, "mlknn": 0.40},
    "d2": {"sparse_sblr": 0.20, "sblr": 0.20, "sml": 0.10, "mlknn": 0.30},
    "d3": {"sparse_sblr": 0.50, "sblr": 0.50, "sml": 0.50, "mlknn": 0.10},
}
HAMMING_RANKS = {
    "d1": [1, 2, 3, 4],
    "d2": [2.5, 2.5, 1, 4],
    "d3": [3, 3, 3, 1],
}


def test_rank_table_lower_is_better_with_ties():
    t = rank_table(_long(HAMMING, "hamming_loss", folds=2), "hamming_loss")
    assert list(t.ranks.columns) == ["sparse_sblr", "sblr", "sml", "mlknn"]
    for d, ranks in HAMMING_RANKS.items():
        assert t.ranks.loc[d].tolist() == ranks
    np.testing.assert_allclose(t.average.to_numpy(), [6.5 / 3, 7.5 / 3, 7 / 3, 3])
    assert t.dropped_datasets == []


def test_rank_table_greater_is_better_and_incomplete_rows():
    acc = {
        "a": {"sml": 0.9, "sblr": 0.8, "knn": 0.9},
        "b": {"sml": 0.7, "sblr": 0.75, "knn": 0.6},
        "c": {"sml": 0.7, "sblr": 0.8},  # knn missing: left out
    }
    t = rank_table(_long(acc, "accuracy"), "accuracy")
    assert t.ranks.loc["a"].to_dict() == {"sblr": 3.0, "sml": 1.5, "knn": 1.5}
    assert t.ranks.loc["b"].to_dict() == {"sblr": 1.0, "sml": 2.0, "knn": 3.0}
    assert t.dropped_datasets == ["c"]
    assert t.average.to_dict() == {"sblr": 2.0, "sml": 1.75, "knn": 2.25}


def test_rank_table_rounds_before_ranking():
    acc = {"a": {"sml": 0.9001, "sblr": 0.9004}}
    r = _long(acc, "accuracy")
    assert rank_table(r, "accuracy").ranks.loc["a"].tolist() == [1.0, 2.0]
    assert rank_table(r, "accuracy", decimals=3).ranks.loc["a"].tolist() == [1.5, 1.5]


def test_mean_std_table():
    r = pd.DataFrame(
        {
            "dataset": "d",
            "method": ["sml"] * 2 + ["sblr"] * 2,
            "fold": [0, 1, 0, 1],
            "metric": "accuracy",
            "value": [0.8, 1.0, 0.5, 0.5],
        }
    )
    t = mean_std_table(r)
    assert t.loc[("d", "sblr"), "accuracy"] == "0.500 ± 0.000"
    assert t.loc[("d", "sml"), "accuracy"] == "0.900 ± 0.100"
    assert list(t.index) == [("d", "sblr"), ("d", "sml")]  # the paper's method order


@pytest.mark.slow
def test_friedman_matches_scipy_and_the_textbook_formula():
    rng = np.random.default_rng(3)
    vals = rng.random((6, 4))  # 6 data sets x 4 methods, no ties
    methods = ["sparse_sblr", "sblr", "sml", "mlknn"]
    table = {f"d{i}": dict(zip(methods, row, strict=True)) for i, row in enumerate(vals)}
    fr = friedman_nemenyi(_long(table, "hamming_loss"), "hamming_loss")
    stat, p = ss.friedmanchisquare(*vals.T)
    assert fr.statistic == pytest.approx(stat) and fr.pvalue == pytest.approx(p)
    # Demšar's Eq.: chi2_F = 12 N / (k (k+1)) [sum R_j^2 - k (k+1)^2 / 4]
    n, k = vals.shape
    R = ss.rankdata(vals, axis=1).mean(axis=0)
    assert fr.statistic == pytest.approx(
        12 * n / (k * (k + 1)) * ((R**2).sum() - k * (k + 1) ** 2 / 4)
    )
    np.testing.assert_allclose(fr.average_ranks.to_numpy(), R)
    # greater-is-better: the same values as accuracy give the mirrored ranks, same statistic
    fr_acc = friedman_nemenyi(_long(table, "accuracy"), "accuracy")
    np.testing.assert_allclose(fr_acc.average_ranks.to_numpy(), k + 1 - R)
    assert fr_acc.statistic == pytest.approx(fr.statistic)


def test_friedman_needs_three_methods_and_two_datasets():
    with pytest.raises(ValueError, match="at least 3 methods"):
        friedman_nemenyi(
            _long({"a": {"sml": 1, "sblr": 2}, "b": {"sml": 1, "sblr": 2}}, "coverage"), "coverage"
        )


def test_q_alpha_against_demsar_table_5a():
    # Demšar (2006), Table 5(a): two-tailed Nemenyi critical values, alpha = 0.05 and 0.10
    q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]
    for k, (a, b) in enumerate(zip(q05, q10, strict=True), start=2):
        assert q_alpha(k, 0.05) == pytest.approx(a, abs=2e-3)
        assert q_alpha(k, 0.10) == pytest.approx(b, abs=2e-3)


def test_demsar_worked_example():
    # Demšar (2006), Sec. 3.2.2: four C4.5 variants on 14 data sets; average ranks
    # 3.143, 2.000, 2.893, 1.964; chi2_F = 9.28, F_F = 3.69; CD(0.05) = 1.25, CD(0.10) = 1.12.
    assert critical_difference(4, 14, 0.05) == pytest.approx(1.25, abs=5e-3)
    assert critical_difference(4, 14, 0.10) == pytest.approx(1.12, abs=5e-3)
    ranks = pd.Series({"C4.5": 3.143, "C4.5+m": 2.000, "C4.5+cf": 2.893, "C4.5+m+cf": 1.964})
    n, k = 14, 4
    chi2 = 12 * n / (k * (k + 1)) * ((ranks**2).sum() - k * (k + 1) ** 2 / 4)
    assert chi2 == pytest.approx(9.28, abs=0.01)
    ff, p = iman_davenport(chi2, n, k)
    assert ff == pytest.approx(3.69, abs=0.01)
    # "the critical value of F(3, 39) for alpha = 0.05 is 2.85, so we reject the null-hypothesis"
    assert ss.f.ppf(0.95, 3, 39) == pytest.approx(2.85, abs=0.01)
    assert p < 0.05
    # "C4.5+m+cf is significantly better than C4.5 at 0.10 but not at 0.05"
    diff = ranks["C4.5"] - ranks["C4.5+m+cf"]
    assert critical_difference(4, 14, 0.10) < diff < critical_difference(4, 14, 0.05)


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["ranking_loss", "average_precision"])
def test_nemenyi_pvalues_follow_demsar(metric):
    """Nemenyi p-values (scikit-posthocs) against Demšar's definition worked here from the
    average ranks: q = |R_i - R_j| / sqrt(k (k+1) / 6N), p = P(studentized range > q sqrt 2)."""
    rng = np.random.default_rng(0)
    vals = rng.random((8, 5))
    methods = ["sparse_sblr", "sblr", "sml", "mlknn", "iblr"]
    table = {f"d{i}": dict(zip(methods, row, strict=True)) for i, row in enumerate(vals)}
    fr = friedman_nemenyi(_long(table, metric), metric)
    n, k = vals.shape
    R = fr.average_ranks.to_numpy()
    q = np.abs(R[:, None] - R[None, :]) / np.sqrt(k * (k + 1) / (6.0 * n))
    expected = ss.studentized_range.sf(q * np.sqrt(2.0), k, np.inf)
    np.fill_diagonal(expected, 1.0)
    np.testing.assert_allclose(fr.nemenyi.to_numpy(), expected, rtol=1e-6)
    assert list(fr.nemenyi.index) == list(fr.average_ranks.index)
    assert fr.cd == pytest.approx(critical_difference(5, 8))


def test_cliques_and_cd_diagram(tmp_path):
    ranks = pd.Series({"sparse_sblr": 1.5, "sblr": 2.0, "sml": 3.6, "mlknn": 2.9})
    assert cliques(ranks, 1.0) == [["sparse_sblr", "sblr"], ["sblr", "mlknn"], ["mlknn", "sml"]]
    assert cliques(ranks, 3.0) == [["sparse_sblr", "sblr", "mlknn", "sml"]]
    assert cliques(ranks, 0.1) == []
    fig = cd_diagram(ranks, 1.0, title="Hamming loss")
    texts = [a.text for a in fig.layout.annotations]
    assert "SparseSBLR (1.50)" in texts and "CD = 1.000" in texts
    thick = [s for s in fig.layout.shapes if s.line.width == 5]
    assert len(thick) == 3
    out = tmp_path / "cd.html"
    fig.write_html(out, include_plotlyjs="cdn")
    assert "SparseSBLR" in out.read_text()


@pytest.mark.slow
def test_paper_tables_markdown():
    md = paper_tables_markdown(_long(HAMMING, "hamming_loss"))
    lines = md.splitlines()
    assert lines[0] == "### Hamming loss ↓"
    assert "| dataset | SparseSBLR | SBLR | SML | MLKNN |" in lines
    assert "| d2 | 0.200 (2.5) | 0.200 (2.5) | **0.100 (1)** | 0.300 (4) |" in lines
    assert "| d3 | 0.500 (3) | 0.500 (3) | 0.500 (3) | **0.100 (1)** |" in lines
    assert "| average rank | **2.17** | 2.50 | 2.33 | 3.00 |" in lines
    assert any(line.startswith("Friedman χ² = ") for line in lines)


def test_the_forecast_is_method_by_method_not_one_average():
    """Issue #38: after SML's quick folds the page forecast "about 64 s" for BR-SVM's folds,
    which took 457 s. Oracle: each method's folds left × the mean of its timed folds, by hand."""
    from sblr.stats import fold_forecast

    timed = {"sml": [1.0] * 10, "br_svm": [40.0, 50.0]}
    f = fold_forecast(timed, {"sml": 0, "br_svm": 8, "mlknn": 10})
    assert f.seconds == {"sml": 0.0, "br_svm": 8 * 45.0, "mlknn": None}
    assert f.known == 360.0 and f.untimed == ("mlknn",)
    # a prior stands in only until the method's first fold is timed
    f = fold_forecast(timed, {"br_svm": 8, "mlknn": 10}, prior={"br_svm": 1.0, "mlknn": 2.0})
    assert f.seconds == {"br_svm": 360.0, "mlknn": 20.0} and f.untimed == ()
    with pytest.raises(ValueError, match="must be >= 0"):
        fold_forecast(timed, {"sml": -1})
