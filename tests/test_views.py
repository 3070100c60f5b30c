"""The pages' view functions (pages/_shared/views), called directly: no AppTest, no page run.

Each view's numbers and texts are checked against models fitted here with the library's public
estimators and against numpy (β̃ = β · population sd of the leave-one-out evidence, Spearman's
ρ, counts of zeros and of wrong decisions), independently of the dashboard's caches.  The
pages' own AppTest tests (tests/test_coefficients_page.py, tests/test_app.py, ...) check that
the pages draw these views.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import rankdata

from pages._shared.state import Settings
from pages._shared.views import coefficients as coef_views
from pages._shared.views import contributions as contrib_views
from pages._shared.views import explain as explain_views
from sblr import SBLRClassifier, SparseSBLRClassifier
from sblr.stability import StabilityResult

# each view fits two or three models on a sample (a second or two the first time): the full
# suite and CI run them
pytestmark = pytest.mark.slow

GAMMA, LAM = 1.0, 1e-3
THUNDER, RAIN = 3, 2  # planted: thunder only happens with rain


@pytest.fixture(scope="module")
def oracle(planted):
    """Both models fitted here on all rows, and the population sd of the leave-one-out
    evidence."""
    sblr = SBLRClassifier(gamma=GAMMA).fit(planted.X, planted.y)
    sparse = SparseSBLRClassifier(gamma=GAMMA, lam=LAM).fit(planted.X, planted.y)
    F = sblr.featurizer_.training_evidence()
    return {"SBLR": sblr, "SparseSBLR": sparse, "F": F, "sd": F.std(axis=0)}


def settings(model="SparseSBLR", k=THUNDER):
    return Settings(model=model, gamma=GAMMA, lam=LAM, k=k)


def spearman(a, b):
    return float(np.corrcoef(rankdata(a), rankdata(b))[0, 1])


# ----------------------------------------------------------------------------- contributions
def test_contributions_view_tests_the_claim_with_an_oracles_numbers(planted, oracle):
    view = contrib_views.contributions(planted, settings(), standardized=True)
    assert view.title == "Class contributions to “thunder”" and not view.multiclass
    Y = planted.label_matrix()
    others = [t for t in range(planted.n_classes) if t != THUNDER]
    C = (Y.T @ Y)[THUNDER]
    # one verdict per model and dependency, in that order, each ρ of |β̃| against C_kt
    labels = [v.label for v in view.verdicts]
    assert labels == [
        "SBLR: ρ(|β̃|, co-occurrence)",
        "SBLR: ρ(|β̃|, P(k | t))",
        "SparseSBLR: ρ(|β̃|, co-occurrence)",
        "SparseSBLR: ρ(|β̃|, P(k | t))",
    ]
    for i, name in ((0, "SBLR"), (2, "SparseSBLR")):
        beta_std = np.abs(oracle[name].coef_[THUNDER] * oracle["sd"])
        rho = spearman(beta_std[others], C[others])
        assert view.verdicts[i].value == f"{rho:.2f}", name
    # the table: co-occurrence counted here, β̃ of the oracle, in the page's column names
    table = view.table.set_index("class")
    names = planted.class_names
    assert [table.loc[names[t], "co-occurrence"] for t in others] == [C[t] for t in others]
    np.testing.assert_allclose(
        table.loc[[names[t] for t in range(7)], "SparseSBLR β̃"],
        oracle["SparseSBLR"].coef_[THUNDER] * oracle["sd"],
        atol=1e-6,
    )
    assert not view.stability_shown and "selected in (resamples)" not in view.table
    # the zeros: as many as the oracle's row has, each read in the table
    zeros = [t for t in others if oracle["SparseSBLR"].coef_[THUNDER, t] == 0]
    if zeros:
        assert f"SparseSBLR sets {len(zeros)} of the 6 other classes' weights" in view.zeros[0]
        read = table["SparseSBLR zero"].astype(str)
        assert sorted(read[read != ""].index) == sorted(names[t] for t in zeros)
    assert view.file_name.endswith(".csv") and "thunder" in view.file_name
    assert {"SBLR beta", "SparseSBLR beta_std", "reading"} <= set(view.download.columns)


def test_contributions_view_of_multiclass_data_uses_the_mean_evidence(wine):
    view = contrib_views.contributions(wine, Settings("SBLR", 1.0, LAM, 1), standardized=False)
    assert view.multiclass and view.per_row == 1
    assert [v.label for v in view.verdicts] == [
        "SBLR: ρ(|β|, mean evidence of t on k's rows)",
        "SparseSBLR: ρ(|β|, mean evidence of t on k's rows)",
    ]
    assert "cannot co-occur" in view.hypothesis and "“cultivar&#95;2”" in view.hypothesis
    assert "co-occurrence" not in view.table.columns
    assert {"SBLR β", "SparseSBLR β"} <= set(view.table.columns)


# ----------------------------------------------------------------------------- coefficients
def test_coefficients_view_is_the_oracles_beta(planted, oracle):
    view = coef_views.coefficients(planted, settings(), standardized=True)
    sparse, m = view.sparse_name, planted.n_classes
    assert sparse == "SparseSBLR, λ = 1e-3" and list(view.raw) == [sparse, "SBLR"]
    np.testing.assert_allclose(view.raw["SBLR"], oracle["SBLR"].coef_, atol=1e-6)
    np.testing.assert_allclose(view.raw[sparse], oracle["SparseSBLR"].coef_, atol=1e-6)
    np.testing.assert_allclose(
        view.shown[sparse], oracle["SparseSBLR"].coef_ * oracle["sd"], atol=1e-6
    )
    # the CSV: both kinds of both models, a row per (model, kind, target class)
    assert view.table.shape == (2 * 2 * m, m)
    model, kind = (view.table.index.get_level_values(i) for i in (0, 1))
    np.testing.assert_allclose(
        view.table[(model == "SBLR") & (kind == "beta_std")].to_numpy(),
        oracle["SBLR"].coef_ * oracle["sd"],
        atol=1e-6,
    )  # fmt: skip
    n_zero = int((oracle["SparseSBLR"].coef_ == 0).sum())
    assert view.sparsity.startswith(f"{n_zero} of {m * m} SparseSBLR coefficients are exactly")
    zeros_by_class = (oracle["SparseSBLR"].coef_ == 0).sum(axis=1)
    assert view.summary["β = 0"].tolist() == zeros_by_class.tolist()
    # the ranking keeps the sidebar's class; the clustered order is a permutation of it
    top = [int(t) for t in coef_views.ranked(planted, view, 3, THUNDER)]
    assert THUNDER in top and len(top) == 3
    order = view.ordered(sorted(top))
    assert sorted(order) == sorted(top) if view.readable else order == sorted(top)
    assert view.ordered(None) is None


def test_coefficients_view_says_which_beta_can_be_read(planted):
    view = coef_views.coefficients(planted, settings(), standardized=False)
    assert not view.standardized and view.shown is view.raw
    if view.readable:
        assert view.note.startswith("**SBLR's coefficients cannot be read one by one here")
        assert view.rank_what == "SparseSBLR's top N by |β|"
    else:
        assert view.note.startswith("**Neither SBLR's nor SparseSBLR's")
        assert view.rank_what == "the N most frequent"
    assert len(view.why) == 2 and all(view.why)


def test_stability_view_lists_the_classes_used_most_often_first(planted):
    m = planted.n_classes
    freq = np.zeros((m, m))
    freq[THUNDER] = [0.2, 0.0, 1.0, 0.9, 0.0, 0.5, 0.0]
    low, high = np.full((m, m), -0.5), np.full((m, m), 1.5)
    result = StabilityResult(np.zeros((20, m, m)), np.zeros((20, m, m)), freq, low, high, 0.9)
    view = coef_views.stability(planted, settings(), result)
    assert view.heading == "**For “thunder”** (the sidebar's class k):"
    assert [re.match(r"- (.+?)&#39;s evidence", line).group(1) for line in view.lines] == [
        "rain",
        "thunder",
        "spring&#95;tide",  # Markdown: escaped
        "daylight",
    ]
    assert "in 100% of 20 resamples (90% interval of β̃: -0.5 to 1.5)" in html.unescape(
        view.lines[0]
    )
    assert view.table["evidence class t"].tolist()[:4] == [
        "rain",
        "thunder",
        "spring_tide",
        "daylight",
    ]
    assert view.table["β ≠ 0 in (share of resamples)"].tolist() == sorted(freq[THUNDER])[::-1]
    none = coef_views.stability(planted, settings(k=4), result)  # frost: nothing used
    assert none.lines == ["- no class's evidence is used for it in any resample at λ = 1e-3."]


# ----------------------------------------------------------------------------- explain
def test_explain_rows_count_the_models_errors_for_the_class(planted, oracle):
    rows = explain_views.rows(planted, settings(model="SML"))  # SML learns no β: SparseSBLR
    assert rows.name == "SparseSBLR"
    Y = planted.label_matrix()
    pred = rows.model.predict_from_evidence(oracle["F"])  # the same β: leave-one-out evidence
    np.testing.assert_array_equal(rows.pred, pred)
    n_fn = int(((Y[:, THUNDER] == 1) & (pred[:, THUNDER] == 0)).sum())
    n_fp = int(((Y[:, THUNDER] == 0) & (pred[:, THUNDER] == 1)).sum())
    n_any = int((Y != pred).any(axis=1).sum())
    assert rows.filters["false_negative"] == f"“thunder” missed ({n_fn:,})"
    assert rows.filters["false_positive"] == f"“thunder” wrongly given ({n_fp:,})"
    assert rows.filters["misclassified"] == f"any label wrong ({n_any:,})"
    assert len(rows.matching("false_negative")) == n_fn
    assert rows.matching("true").tolist() == np.flatnonzero(Y[:, THUNDER]).tolist()


def test_explain_rows_of_multiclass_data_are_one_class_a_row(wine):
    rows = explain_views.rows(wine, Settings("SBLR", 1.0, LAM, 1))
    assert rows.pred.shape == (wine.n_samples, 3) and (rows.pred.sum(axis=1) == 1).all()
    proba = rows.model.proba_from_evidence(rows.F)
    np.testing.assert_array_equal(rows.pred.argmax(axis=1), proba.argmax(axis=1))
    n_any = int((rows.pred.argmax(axis=1) != wine.class_codes()).sum())
    assert rows.filters["misclassified"] == f"misclassified ({n_any:,})"


def test_explain_a_training_row_adds_up_and_compares_with_the_other_side(planted, oracle):
    rows = explain_views.rows(planted, settings())
    row = int(rows.matching("true")[0])  # a row with thunder
    start = explain_views.baseline(rows, row, "contrast")
    assert start.contrast is not None and start.contrast != row
    assert rows.pred_k[start.contrast] != rows.pred_k[row]  # the other side of the decision
    assert f"Baseline: training row {start.contrast} (true classes: " in start.caption
    x = np.asarray(planted.X[row], dtype=float)
    from pages._shared.questions import RowQuestion

    original = rows.credits(rows.model, rows.name, RowQuestion(x, start.values, THUNDER, row))
    view = explain_views.explain(rows, row, x, start, original)
    assert not view.edited and view.what == f"row {row}"
    # the logit of thunder from the oracle's β on the row's leave-one-out evidence
    coef, b0 = oracle["SparseSBLR"].coef_[THUNDER], oracle["SparseSBLR"].intercept_[THUNDER]
    logit = b0 + coef @ oracle["F"][row]
    assert view.ic.logits[THUNDER] == pytest.approx(logit, abs=1e-6)
    assert view.waterfall["cumulative"].iloc[-1] == pytest.approx(logit, abs=1e-6)
    assert view.why == f"Why π = {expit(logit):.3f} for “thunder”" and view.why_caption is None
    # the credits add up to the change of the logit from the baseline
    fa = view.fa
    assert fa.attributions.sum() == pytest.approx(fa.output - fa.output_baseline, abs=1e-6)
    assert fa.output == pytest.approx(logit, abs=1e-6)
    assert view.credits_sum.startswith(f"The 8 credits add up to {fa.attributions.sum():.4g};")
    assert view.logit_line.startswith(f"This row: logit {fa.output:.3f} (π = {expit(logit):.3f})")
    # the three models, in their order; the explained one's score is its π
    assert view.models["model"].tolist() == ["SML", "SBLR", "SparseSBLR, λ = 1e-3"]
    assert view.models[view.score].iloc[2] == pytest.approx(view.proba[THUNDER])
    assert list(view.top.columns) == [
        "rank",
        "SML (evidence)",
        "SBLR (logit)",
        "SparseSBLR (logit)",
    ]
    assert view.top.iloc[0, 3].startswith(fa.table(1)["feature"].iloc[0])


def test_explain_an_edited_row_is_a_new_query(planted):
    rows = explain_views.rows(planted, settings())
    start = explain_views.baseline(rows, 0, "zero")
    assert start.values.tolist() == [0.0] * planted.n_features and start.caption is None
    x = np.asarray(planted.X[0], dtype=float).copy()
    x[0] += 1.0
    from pages._shared.questions import RowQuestion

    original = rows.credits(rows.model, rows.name, RowQuestion(x, start.values, THUNDER, 0))
    view = explain_views.explain(rows, 0, x, start, original)
    assert view.edited and view.what == "row 0 (edited)"
    assert "features edited: explained as a new query" in view.truth
    evidence = rows.model.evidence(x[None, :])[0]
    np.testing.assert_allclose(view.ic.evidence, evidence)
    np.testing.assert_allclose(view.proba, rows.model.proba_from_evidence(evidence[None, :])[0])


def test_explain_multiclass_words_the_normalised_probability(wine):
    rows = explain_views.rows(wine, Settings("SBLR", 1.0, LAM, 1))
    start = explain_views.baseline(rows, 0, "mean")
    assert start.values is None
    x = np.asarray(wine.X[0], dtype=float)
    from pages._shared.questions import RowQuestion

    original = rows.credits(rows.model, rows.name, RowQuestion(x, None, 1, 0))
    view = explain_views.explain(rows, 0, x, start, original)
    assert view.why == f"Why “cultivar&#95;2” gets {view.proba[1]:.3f}"  # Markdown: escaped
    assert view.why_caption.startswith("Multi-class: each class's own model gives σ(logit)")
    assert view.proba.sum() == pytest.approx(1.0) and view.cut is None and view.cuts is None
    assert view.models["predicted classes"].str.count(",").eq(0).all()  # one class each
