"""Tests for :mod:`sblr.interpret`: stand-in models, and real SBLR/SparseSBLR fits (against
scikit-learn) for the standardized coefficients."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from sblr._validation import InvalidParameterError
from sblr.exceptions import DataError
from sblr.interpret import (
    InstanceContributions,
    check_claim,
    conditional_frequency,
    contribution_table,
    cooccurrence,
    evidence_sd,
    instance_contributions,
    label_sets,
    rank_agreement_path,
    sparsity_summary,
    spearman,
    standardized_coef,
    top_classes,
    zero_readings,
)

# A scikit-learn oracle that stopped short of its optimum would be compared as if it had
# reached it: its ConvergenceWarning fails the test instead.
pytestmark = pytest.mark.filterwarnings("error::sklearn.exceptions.ConvergenceWarning")

# 5 rows x 4 classes
Y = np.array(
    [
        [1, 1, 0, 0],
        [1, 0, 1, 0],
        [1, 1, 1, 0],
        [0, 0, 1, 1],
        [1, 0, 0, 1],
    ]
)
# By hand, C[a, b] = #rows with both a and b:
#   C00 = rows 0,1,2,4 = 4   C01 = rows 0,2 = 2   C02 = rows 1,2 = 2   C03 = row 4 = 1
#   C11 = rows 0,2 = 2       C12 = row 2 = 1      C13 = none = 0
#   C22 = rows 1,2,3 = 3     C23 = row 3 = 1
#   C33 = rows 3,4 = 2
C_HAND = np.array(
    [
        [4, 2, 2, 1],
        [2, 2, 1, 0],
        [2, 1, 3, 1],
        [1, 0, 1, 2],
    ]
)
NAMES = ["wren", "jay", "owl", "finch"]
COEF = np.array(
    [
        [1.5, 0.7, -0.4, 0.0],
        [0.2, 2.0, 0.0, 0.0],
        [-0.3, 0.0, 1.0, 0.9],
        [0.0, 0.0, 0.0, 0.0],
    ]
)
INTERCEPT = np.array([-1.0, 0.5, -0.2, 0.1])
EVIDENCE = np.array([0.8, 0.1, 0.5, 0.25])


class FixedFeaturizer:
    """Returns the same evidence for any one-row input; records what it was given."""

    def __init__(self, evidence):
        self.evidence = np.asarray(evidence, dtype=float)
        self.seen = []

    def transform(self, X):
        self.seen.append(X)
        n = X.shape[0]
        return np.tile(self.evidence, (n, 1))


def make_model(coef=COEF, intercept=INTERCEPT, evidence=EVIDENCE, classes=None):
    m = np.asarray(coef).shape[0]
    return SimpleNamespace(
        coef_=np.asarray(coef, dtype=float),
        intercept_=np.asarray(intercept, dtype=float),
        classes_=np.arange(m) if classes is None else np.asarray(classes),
        featurizer_=FixedFeaturizer(evidence),
    )


# --------------------------------------------------------------------------- cooccurrence


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 40).flatmap(
        lambda n: st.integers(1, 5).flatmap(
            lambda m: st.lists(
                st.lists(st.integers(0, 1), min_size=m, max_size=m), min_size=n, max_size=n
            ).map(lambda rows, m=m: (rows, m))
        )
    )
)
def test_label_sets_count_each_rows_whole_set(data):
    """Oracle: the rows' sets counted one by one with a dict; the order by count, then class
    order, the empty set last among equals; shares sum to 1."""
    rows, m = data
    names = [f"c{j}" for j in range(m)]
    table = label_sets(np.array(rows, dtype=int).reshape(len(rows), m), names)
    counted: dict[tuple, int] = {}
    for row in rows:
        counted[tuple(row)] = counted.get(tuple(row), 0) + 1
    expected = sorted(counted.items(), key=lambda kv: (-kv[1], not any(kv[0]), [-b for b in kv[0]]))
    written = [
        "; ".join(n for n, b in zip(names, s, strict=True) if b) or "(none)" for s, _ in expected
    ]
    assert table["label set"].tolist() == written
    assert table["rows"].tolist() == [c for _, c in expected]
    assert table["labels"].tolist() == [sum(s) for s, _ in expected]
    if rows:
        assert table["share"].sum() == pytest.approx(1.0)
    assert table.attrs["n_sets"] == len(counted)
    top = label_sets(np.array(rows, dtype=int).reshape(len(rows), m), names, top=2)
    assert top["label set"].tolist() == written[:2] and top.attrs["n_sets"] == len(counted)


def test_label_sets_refuse_what_is_not_a_label_matrix():
    with pytest.raises(DataError, match="2 columns"):
        label_sets(np.zeros((3, 3)), ["a", "b"])
    with pytest.raises(DataError, match="only 0 and 1"):
        label_sets(np.array([[2, 0]]), ["a", "b"])
    with pytest.raises(DataError, match="positive whole number"):
        label_sets(np.array([[1, 0]]), ["a", "b"], top=0)


def test_cooccurrence_by_hand():
    C = cooccurrence(Y)
    np.testing.assert_array_equal(C, C_HAND)
    assert np.issubdtype(C.dtype, np.integer)
    np.testing.assert_array_equal(np.diag(C), Y.sum(axis=0))
    np.testing.assert_array_equal(C, C.T)


def test_cooccurrence_bool_input():
    np.testing.assert_array_equal(cooccurrence(Y.astype(bool)), C_HAND)


def test_cooccurrence_multiclass_vector_is_diagonal():
    y = np.array([2, 0, 2, 2, 0])
    np.testing.assert_array_equal(cooccurrence(y), np.diag([2, 3]))
    # explicit class order, including a class that never occurs
    np.testing.assert_array_equal(cooccurrence(y, classes=[0, 1, 2]), np.diag([2, 0, 3]))
    with pytest.raises(DataError, match="not one of the classes"):
        cooccurrence(y, classes=[0, 1])


@pytest.mark.parametrize("bad", [Y * 2, np.zeros((2, 2, 2)), [["a", "b"]]])
def test_cooccurrence_rejects_non_indicator(bad):
    with pytest.raises(DataError):
        cooccurrence(bad)


# --------------------------------------------------------------------------- contribution_table


def test_contribution_table_single_model_order_and_values():
    table = contribution_table(make_model(), Y, 0, class_names=NAMES)
    assert list(table.columns) == ["class", "cooccurrence", "beta"]
    assert table.index.name == "t"
    # co-occurrence with class 0 = C_HAND[0] = [4, 2, 2, 1]; descending, ties by index:
    #   t=0 (4), t=1 (2), t=2 (2), t=3 (1)
    assert list(table.index) == [0, 1, 2, 3]
    assert list(table["cooccurrence"]) == [4, 2, 2, 1]
    assert list(table["class"]) == ["wren", "jay", "owl", "finch"]
    # beta_t^0 = COEF[0, t]
    np.testing.assert_array_equal(table["beta"].to_numpy(), [1.5, 0.7, -0.4, 0.0])
    assert table.attrs["target"] == 0
    assert table.attrs["target_name"] == "wren"


def test_contribution_table_sorted_desc_with_stable_ties():
    # target k=2: co-occurrence C_HAND[2] = [2, 1, 3, 1]
    #   -> t=2 (3), t=0 (2), then the tie t=1 (1), t=3 (1) in index order
    table = contribution_table(make_model(), Y, 2, class_names=NAMES)
    assert list(table.index) == [2, 0, 1, 3]
    assert list(table["cooccurrence"]) == [3, 2, 1, 1]
    assert list(table["class"]) == ["owl", "wren", "jay", "finch"]
    np.testing.assert_array_equal(table["beta"].to_numpy(), COEF[2, [2, 0, 1, 3]])


def test_contribution_table_several_models():
    sparse = make_model(coef=np.where(np.abs(COEF) < 0.5, 0.0, COEF))
    table = contribution_table({"SBLR": make_model(), "SparseSBLR": sparse}, Y, 1)
    assert list(table.columns) == ["class", "cooccurrence", "SBLR", "SparseSBLR"]
    # k=1: co-occurrence [2, 2, 1, 0] -> order t = 0, 1, 2, 3
    assert list(table.index) == [0, 1, 2, 3]
    np.testing.assert_array_equal(table["SBLR"].to_numpy(), [0.2, 2.0, 0.0, 0.0])
    np.testing.assert_array_equal(table["SparseSBLR"].to_numpy(), [0.0, 2.0, 0.0, 0.0])
    # default names come from classes_
    assert list(table["class"]) == ["0", "1", "2", "3"]


def test_contribution_table_default_names_from_classes():
    model = make_model(classes=np.array(["a", "b", "c", "d"]))
    table = contribution_table(model, Y, 3)
    # k=3: co-occurrence [1, 0, 1, 2] -> t = 3, 0, 2, 1
    assert list(table["class"]) == ["d", "a", "c", "b"]


def test_contribution_table_multiclass_labels_use_model_classes():
    y = np.array(["b", "a", "b", "c"])
    model = make_model(
        coef=np.eye(3),
        intercept=np.zeros(3),
        evidence=np.ones(3),
        classes=np.array(["a", "b", "c"]),
    )
    table = contribution_table(model, y, 1)
    # diagonal co-occurrence: only t == k is non-zero; ties (0) keep index order
    assert list(table.index) == [1, 0, 2]
    assert list(table["cooccurrence"]) == [2, 0, 0]


@pytest.mark.parametrize(
    "k, error",
    # not a class index at all: a parameter error; past the data's classes: DataError
    [
        (4, DataError),
        (-1, InvalidParameterError),
        (1.0, InvalidParameterError),
        (True, DataError),
        ("wren", InvalidParameterError),
    ],
)
def test_contribution_table_bad_k(k, error):
    with pytest.raises(error, match="k"):
        contribution_table(make_model(), Y, k)


def test_contribution_table_shape_mismatches():
    with pytest.raises(DataError, match="Y has 3 classes"):
        contribution_table(make_model(), Y[:, :3], 0)
    with pytest.raises(DataError, match="class names"):
        contribution_table(make_model(), Y, 0, class_names=["a", "b"])
    small = make_model(coef=np.eye(3), intercept=np.zeros(3), evidence=np.ones(3))
    with pytest.raises(DataError, match="3 classes"):
        contribution_table({"a": make_model(), "b": small}, Y, 0)
    with pytest.raises(DataError, match="clash"):
        contribution_table({"class": make_model()}, Y, 0)


# --------------------------------------------------------------------------- instance_contributions


def test_instance_contributions_sum_to_independent_logits():
    model = make_model()
    ic = instance_contributions(model, np.zeros(7))
    logits = EVIDENCE @ COEF.T + INTERCEPT  # computed independently
    np.testing.assert_allclose(ic.logits, logits)
    np.testing.assert_allclose(ic.contributions.sum(axis=1) + ic.intercept, logits)
    np.testing.assert_allclose(ic.contributions, COEF * EVIDENCE[None, :])
    assert ic.contributions[0, 1] == pytest.approx(0.7 * 0.1)  # beta_1^0 * f_1
    np.testing.assert_allclose(ic.proba, 1 / (1 + np.exp(-logits)))
    np.testing.assert_array_equal(ic.evidence, EVIDENCE)
    np.testing.assert_array_equal(ic.intercept, INTERCEPT)
    # the featurizer received a single 2-D row
    assert model.featurizer_.seen[0].shape == (1, 7)


def test_instance_contributions_accepts_row_matrix_and_rejects_many_rows():
    model = make_model()
    ic = instance_contributions(model, np.zeros((1, 7)))
    assert ic.logits.shape == (4,)
    with pytest.raises(DataError, match="one row"):
        instance_contributions(model, np.zeros((2, 7)))


def test_instance_contributions_is_frozen_and_readonly():
    ic = instance_contributions(make_model(), np.zeros(3))
    assert isinstance(ic, InstanceContributions)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ic.logits = np.zeros(4)
    with pytest.raises(ValueError):
        ic.logits[0] = 1.0


def test_instance_contributions_checks_featurizer_shape():
    model = make_model(evidence=np.ones(3))  # 3 evidence columns for 4 classes
    with pytest.raises(DataError, match="featurizer_"):
        instance_contributions(model, np.zeros(2))


def test_waterfall_running_total_ends_at_logit():
    ic = instance_contributions(make_model(), np.zeros(3))
    for k in range(4):
        wf = ic.waterfall(k, class_names=NAMES)
        assert list(wf.columns) == ["term", "t", "evidence", "beta", "contribution", "cumulative"]
        assert wf["term"].iloc[0] == "intercept"
        assert wf["contribution"].iloc[0] == INTERCEPT[k]
        assert pd.isna(wf["t"].iloc[0])
        assert len(wf) == 5
        assert wf["cumulative"].iloc[-1] == pytest.approx(ic.logits[k])
        np.testing.assert_allclose(wf["cumulative"], np.cumsum(wf["contribution"]))
        body = wf.iloc[1:]
        mags = body["contribution"].abs().to_numpy()
        assert np.all(mags[:-1] >= mags[1:])
        assert sorted(body["t"].tolist()) == [0, 1, 2, 3]


def test_waterfall_order_by_hand():
    ic = instance_contributions(make_model(), np.zeros(3))
    wf = ic.waterfall(0, class_names=NAMES)
    # k=0 contributions: 1.5*.8 = 1.2, .7*.1 = .07, -.4*.5 = -.2, 0*.25 = 0
    assert wf["term"].tolist() == ["intercept", "wren", "owl", "jay", "finch"]
    np.testing.assert_allclose(wf["contribution"], [-1.0, 1.2, -0.2, 0.07, 0.0])
    np.testing.assert_allclose(wf["cumulative"], [-1.0, 0.2, 0.0, 0.07, 0.07], atol=1e-12)
    np.testing.assert_allclose(wf["beta"].iloc[1:], [1.5, -0.4, 0.7, 0.0])
    np.testing.assert_allclose(wf["evidence"].iloc[1:], [0.8, 0.5, 0.1, 0.25])
    # default names come from the model's classes_
    assert ic.waterfall(0)["term"].tolist() == ["intercept", "0", "2", "1", "3"]
    with pytest.raises(DataError):
        ic.waterfall(4)


# --------------------------------------------------------------------------- sparsity_summary


def test_sparsity_summary_counts_zeros():
    s = sparsity_summary(COEF, NAMES)
    assert list(s.columns) == ["class", "n_zero", "n_nonzero", "irrelevant"]
    assert s.index.name == "k"
    # row 0: [1.5, .7, -.4, 0] -> 1 zero (finch)
    # row 1: [.2, 2, 0, 0]     -> 2 zeros (owl, finch)
    # row 2: [-.3, 0, 1, .9]   -> 1 zero (jay)
    # row 3: all zero          -> 4 zeros
    assert s["n_zero"].tolist() == [1, 2, 1, 4]
    assert s["n_nonzero"].tolist() == [3, 2, 3, 0]
    assert s["irrelevant"].tolist() == ["finch", "owl, finch", "jay", "wren, jay, owl, finch"]
    assert s["class"].tolist() == NAMES


def test_sparsity_summary_accepts_model_and_tolerance():
    s = sparsity_summary(make_model(), tol=0.25)
    # |beta| <= .25 counts as zero: row 0 -> finch; row 1 -> 0, 2, 3; row 2 -> 1; row 3 -> all
    assert s["n_zero"].tolist() == [1, 3, 1, 4]
    assert s["irrelevant"].iloc[1] == "0, 2, 3"
    no_zeros = sparsity_summary(np.ones((2, 2)))
    assert no_zeros["irrelevant"].tolist() == ["", ""]
    with pytest.raises(DataError):
        sparsity_summary(np.ones((2, 3)))


# --------------------------------------------------------------------------- standardized beta


@pytest.fixture(scope="module")
def planted_evidence():
    """The planted sample's featurizer and leave-one-out evidence (what the models fit on)."""
    from sblr import SimilarityFeaturizer
    from sblr.samples import load_sample

    ds = load_sample("planted")
    f = SimilarityFeaturizer(normalize="mean").fit(ds.X, ds.y)
    return f, f.training_evidence()


def _fit(model, featurizer, F):
    return model.fit_from_evidence(featurizer, F)


def test_evidence_sd_is_the_population_sd_and_exact_zero_when_constant():
    F = np.array([[0.1, 0.7, 3.0], [0.3, 0.7, 1.0], [0.8, 0.7, 2.0], [0.2, 0.7, 2.0]])
    by_hand = np.sqrt(((F - F.mean(axis=0)) ** 2).mean(axis=0))  # ddof = 0
    np.testing.assert_allclose(evidence_sd(F), by_hand, rtol=1e-12)
    assert evidence_sd(F)[1] == 0.0
    assert evidence_sd(np.full((7, 1), 0.1))[0] == 0.0  # np.std gives ~1.4e-17 here
    with pytest.raises(DataError, match="NaN"):
        evidence_sd([[np.nan, 1.0]])
    with pytest.raises(DataError, match="n >= 1"):
        evidence_sd(np.zeros((0, 3)))


def test_standardized_coef_multiplies_each_column_by_its_sd():
    F = np.array([[0.0, 1.0, 5.0], [0.2, 1.0, 7.0]])  # sd = 0.1, 0 (constant), 1
    B = np.array([[10.0, 3.0, -1.0], [-20.0, 4.0, 0.5], [0.0, 9.0, 2.0]])
    expected = np.array([[1.0, 0.0, -1.0], [-2.0, 0.0, 0.5], [0.0, 0.0, 2.0]])
    np.testing.assert_allclose(standardized_coef(B, F), expected)
    np.testing.assert_allclose(standardized_coef(SimpleNamespace(coef_=B), F), expected)
    np.testing.assert_allclose(standardized_coef(B, sd=[0.1, 0.0, 1.0]), expected)
    # a path (L, m, m) and one row (m,) broadcast over the last axis
    path = np.stack([B, 2 * B])
    np.testing.assert_allclose(standardized_coef(path, F), np.stack([expected, 2 * expected]))
    np.testing.assert_allclose(standardized_coef(B[1], F), expected[1])
    with pytest.raises(DataError, match="either"):
        standardized_coef(B)
    with pytest.raises(DataError, match="3"):
        standardized_coef(np.eye(2), F)


@pytest.mark.parametrize(
    "scales",
    [
        [0.1, 1.0, 10.0, 1.0, 0.5, 3.0, 1.0],
        [1e3] * 7,
        # columns 4e4 apart: SBLR solves on unit-sd evidence, so this is as accurate as the rest
        pytest.param([1e-3, 1.0, 40.0, 1.0, 0.2, 7.0, 1.0], id="scales-4e4-apart"),
    ],
)
def test_sblr_standardized_coef_does_not_depend_on_the_evidence_scale(planted_evidence, scales):
    """Scaling evidence column t by c divides SBLR's beta_t by c; beta~ stays (the ridge is on
    the standardized coefficients, so the fit on scaled evidence is the same problem)."""
    from sblr import SBLRClassifier

    f, F = planted_evidence
    c = np.asarray(scales)
    base = _fit(SBLRClassifier(tol=1e-9), f, F)
    scaled = _fit(SBLRClassifier(tol=1e-9), f, F * c)
    expected = standardized_coef(base, F)
    assert np.abs(base.coef_).max() > 100  # raw beta are large on this data ...
    assert np.abs(expected).max() < 20  # ... beta~ are not
    # the solver stops at a KKT tolerance, so "equal" is up to ~1e-4 of the largest beta~
    tol = 2e-4 * np.abs(expected).max()
    np.testing.assert_allclose(standardized_coef(scaled, F * c), expected, rtol=1e-3, atol=tol)
    np.testing.assert_allclose(scaled.coef_ * c, base.coef_, rtol=1e-3, atol=tol / F.std(0).min())


def test_sparse_sblr_standardized_coef_with_lambda_scaled_alike(planted_evidence):
    """L1 penalizes raw beta: scaling every column by c needs lambda * c for the same fit."""
    from sblr import SparseSBLRClassifier

    f, F = planted_evidence
    c = 0.05
    base = _fit(SparseSBLRClassifier(lam=1e-3, tol=1e-9), f, F)
    scaled = _fit(SparseSBLRClassifier(lam=1e-3 * c, tol=1e-9), f, F * c)
    np.testing.assert_array_equal(scaled.coef_ == 0, base.coef_ == 0)
    assert (base.coef_ == 0).any() and (base.coef_ != 0).any()
    np.testing.assert_allclose(
        standardized_coef(scaled, F * c), standardized_coef(base, F), rtol=1e-4, atol=1e-6
    )


@pytest.mark.parametrize("normalize", ["log_rate", "mean"])
@pytest.mark.parametrize("sample", ["planted", "wine"])
def test_sblr_standardized_coef_equals_sklearn_on_standardized_evidence(sample, normalize):
    """beta~ are the coefficients of the same model fitted on standardized evidence: SBLR's
    ridge (ridge/2) sum Var(f_t) beta_t^2 on the mean log-loss is scikit-learn's L2 with
    C = 1 / (n * ridge) on (f - mean) / sd (this also covers wine's separable class)."""
    from sklearn.linear_model import LogisticRegression

    from sblr import SBLRClassifier
    from sblr.samples import load_sample

    ds = load_sample(sample)
    model = SBLRClassifier(normalize=normalize).fit(ds.X, ds.y)
    F = model.featurizer_.training_evidence()
    Z = (F - F.mean(axis=0)) / F.std(axis=0)
    Y = model.featurizer_.Y_fit_
    oracle = np.vstack(
        [
            LogisticRegression(C=1 / (len(F) * model.ridge), solver="newton-cg", tol=1e-10)
            .fit(Z, Y[:, k])
            .coef_[0]
            for k in range(Y.shape[1])
        ]
    )
    ours = standardized_coef(model, F)
    np.testing.assert_allclose(ours, oracle, atol=5e-3 * np.abs(oracle).max())
    if sample == "planted" and normalize == "mean":  # the paper's f̄ has tiny spreads
        assert np.abs(model.coef_).max() > 100 > 20 > np.abs(ours).max()  # raw vs scale-free


def test_maximum_likelihood_sblr_equals_unpenalized_sklearn(planted_evidence):
    """Without the ridge: scikit-learn's unpenalized fit (C = inf, i.e. penalty=None, which
    scikit-learn 1.8 deprecates) on the standardized evidence gives beta~ exactly."""
    from sklearn.linear_model import LogisticRegression

    from sblr import SBLRClassifier

    f, F = planted_evidence
    model = _fit(SBLRClassifier(ridge=0.0, tol=1e-9), f, F)
    Z = (F - F.mean(axis=0)) / F.std(axis=0)
    for k in range(F.shape[1]):
        lr = LogisticRegression(C=np.inf, solver="newton-cg", tol=1e-10).fit(Z, f.Y_fit_[:, k])
        np.testing.assert_allclose(
            standardized_coef(model.coef_[k], F), lr.coef_[0], rtol=1e-4, atol=1e-4
        )


def test_contribution_table_with_evidence_has_both_betas():
    F = np.array([[0.1, 0.0, 0.5, 0.2], [0.5, 0.2, 0.5, 0.6]])  # sd = 0.2, 0.1, 0, 0.2
    sd = np.array([0.2, 0.1, 0.0, 0.2])
    b = SimpleNamespace(coef_=COEF * 2)
    table = contribution_table({"A beta": make_model(), "B beta": b}, Y, 2, NAMES, evidence=F)
    assert list(table.columns) == [
        "class",
        "cooccurrence",
        "evidence_sd",
        "A beta",
        "A beta_std",
        "B beta",
        "B beta_std",
    ]
    t = table.index.to_numpy()
    np.testing.assert_allclose(table["evidence_sd"], sd[t])
    np.testing.assert_allclose(table["A beta"], COEF[2, t])
    np.testing.assert_allclose(table["A beta_std"], COEF[2, t] * sd[t])
    np.testing.assert_allclose(table["B beta_std"], 2 * COEF[2, t] * sd[t])
    assert table.attrs["target"] == 2
    with pytest.raises(DataError, match="clash"):
        contribution_table({"x": make_model(), "x_std": b}, Y, 0, evidence=F)
    with pytest.raises(DataError, match="3 classes"):
        contribution_table(make_model(), Y, 0, evidence=F[:, :3])


def test_waterfall_with_evidence_sd_adds_beta_std():
    ic = instance_contributions(make_model(), np.zeros(3))
    sd = np.array([0.5, 2.0, 0.0, 1.0])
    wf = ic.waterfall(0, NAMES, evidence_sd=sd)
    assert list(wf.columns) == [
        "term",
        "t",
        "evidence",
        "beta",
        "beta_std",
        "contribution",
        "cumulative",
    ]
    assert np.isnan(wf["beta_std"].iloc[0])
    t = wf["t"].iloc[1:].to_numpy(dtype=int)
    np.testing.assert_allclose(wf["beta_std"].iloc[1:], COEF[0, t] * sd[t])


def test_top_classes_ranks_by_largest_off_diagonal_weight():
    A = np.array(
        [
            [50.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0, -3.0],
            [0.0, 0.0, 9.0, 0.0, 0.0],
            [0.2, 0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 2.0],
        ]
    )
    B = np.zeros((5, 5))
    B[2, 3] = 0.5
    # off-diagonal score (row or column) / the matrix's largest, then the max over matrices:
    #   A (largest 3): 0: 0.2/3, 1: 1, 2: 0, 3: 0.2/3, 4: 1;  B (largest 0.5): 2: 1, 3: 1
    #   -> 1, 2, 3, 4 tie at 1; by diagonal: 2 (9), 4 (2), then 1 and 3 (1) by index; 0 last
    by_hand = [2, 4, 1, 3, 0]
    for n in range(1, 6):
        np.testing.assert_array_equal(top_classes({"A": A, "B": B}, n), sorted(by_hand[:n]))
    np.testing.assert_array_equal(top_classes([A, B], 99), np.arange(5))
    np.testing.assert_array_equal(top_classes(A, 1), [4])  # 1 and 4 tie at 3; diag 2 > 1
    with pytest.raises(InvalidParameterError, match="'n' parameter of top_classes"):
        top_classes(A, 0)


def test_contribution_table_with_another_relation_sorts_by_it():
    from types import SimpleNamespace

    from sblr.interpret import class_affinity, contribution_table

    Y = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    F = np.array([[0.5, 0.4, 0.1], [0.7, 0.2, 0.1], [0.3, 0.9, 0.0], [0.1, 0.1, 0.8]])
    A = class_affinity(Y, F)
    np.testing.assert_allclose(A[0], [0.6, 0.3, 0.1])  # means over class 0's two rows
    model = SimpleNamespace(coef_=np.array([[1.0, -2.0, 0.5], [0, 1, 0], [0, 0, 1]]))
    table = contribution_table(model, Y, 0, relation=A, relation_name="affinity")
    assert list(table.index) == [0, 1, 2] and list(table.columns) == ["class", "affinity", "beta"]
    with pytest.raises(DataError, match=r"\(3, 3\)"):
        contribution_table(model, Y, 0, relation=A[:2])


# --------------------------------------------------------------------------- the claim, tested


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(-3, 3)), min_size=2, max_size=30
    )  # small integer ranges: many ties
)
def test_spearman_equals_scipy_with_ties(pairs):
    x, y = (np.array(v, dtype=float) for v in zip(*pairs, strict=True))
    expected = spearmanr(x, y).statistic if np.ptp(x) and np.ptp(y) else math.nan
    got = spearman(x, y)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_conditional_frequency_by_hand_and_ranks_like_lift():
    D = conditional_frequency(Y)
    # P(k | t) = C[k, t] / C[t, t], from the hand-made C above the file's first tests
    assert D[0, 1] == pytest.approx(2 / 2)  # both rows of class 1 carry class 0
    assert D[1, 0] == pytest.approx(2 / 4)
    assert D[3, 2] == pytest.approx(1 / 3)
    assert D[1, 3] == 0.0
    np.testing.assert_allclose(np.diag(D), 1.0)
    # per target k, P(k | t) ranks the classes t exactly as lift = n C_kt / (C_kk C_tt) does
    rng = np.random.default_rng(3)
    Yr = (rng.random((300, 9)) < rng.uniform(0.05, 0.6, 9)).astype(int)
    C = cooccurrence(Yr).astype(float)
    n = len(Yr)
    lift = n * C / np.outer(np.diag(C), np.diag(C))
    D = conditional_frequency(Yr)
    for k in range(9):
        others = np.arange(9) != k
        assert spearman(D[k, others], lift[k, others]) == pytest.approx(1.0)
    np.testing.assert_allclose(conditional_frequency(counts=C), D)
    with pytest.raises(DataError, match="exactly one"):
        conditional_frequency(Yr, counts=C)


def test_conditional_frequency_of_an_empty_class_is_nan():
    D = conditional_frequency([[1, 0], [1, 0]])
    assert np.isnan(D[:, 1]).all() and D[0, 0] == 1.0 and D[1, 0] == 0.0


def exact_permutation_p(w, d):
    """Oracle: the two-sided p-value over ALL permutations (small n)."""
    from itertools import permutations

    rho = spearman(w, d)
    null = [spearman(np.array(p), d) for p in permutations(w)]
    return np.mean(np.abs(null) >= abs(rho) - 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_check_claim_p_value_matches_the_exact_permutation_distribution(seed):
    rng = np.random.default_rng(seed)
    w, d = rng.random(7), rng.random(7)
    c = check_claim(np.r_[99.0, w], np.r_[99.0, d], target=0)  # the target is left out
    assert c.n == 7 and c.rho == pytest.approx(spearman(w, d))
    assert c.p_value == pytest.approx(exact_permutation_p(w, d), abs=0.012)  # 9,999 draws
    if c.verdict == "not supported":  # the sentence says what the p-value is, not "chance"
        assert f"at least this far from 0 in {c.p_value:.0%} of shuffles" in c.sentence()


def test_check_claim_permutations_are_the_seeds_whatever_came_before():
    """The permutations are made once per (n, count, seed) and reused: row i must be the
    seed's i-th shuffle of the values (as permuting the values themselves), and a p-value
    must not depend on the calls before it (nor on a Generator seed, which is not stored)."""
    from sblr.interpret import claims as interpret

    rng = np.random.default_rng(5)
    w, d = rng.random(30), rng.random(30)
    P = interpret._permutations(30, 99, 3)
    shuffled = np.random.default_rng(3).permuted(np.broadcast_to(w, (99, 30)), axis=1)
    np.testing.assert_array_equal(w[P], shuffled)
    check_claim(rng.random(31), rng.random(31), target=0, n_permutations=999, seed=1)
    after = check_claim(w, d, target=0, n_permutations=999, seed=1)  # stored permutations
    interpret._stored_permutations.cache_clear()
    fresh = check_claim(w, d, target=0, n_permutations=999, seed=1)
    generator = check_claim(w, d, target=0, n_permutations=999, seed=np.random.default_rng(1))
    assert after == fresh == generator
    assert fresh != check_claim(w, d, target=0, n_permutations=999, seed=2)  # the seed counts
    # seed=None: new permutations at every call, as before (not stored)
    assert not np.array_equal(
        interpret._permutations(30, 99, None), interpret._permutations(30, 99, None)
    )


@pytest.mark.slow
def test_check_claim_verdicts_on_planted_orderings():
    d = np.arange(12.0)
    assert check_claim(d + 1, d).verdict == "supported"
    assert check_claim(-(d + 1), d).verdict == "supported"  # |weight| counts, not the sign
    assert check_claim(12 - d, d).verdict == "contradicted"
    flat = check_claim(np.zeros(12), d)
    assert flat.verdict == "undefined" and flat.all_zero and "exactly zero" in flat.sentence()
    few = check_claim([3.0, 2, 1, 0], [3.0, 2, 1, 0])  # 4 classes: p >= 2/24 for any ranking
    assert few.verdict == "too few classes" and few.rho == 1.0
    assert check_claim([4.0, 3, 2, 1, 0], [4.0, 3, 2, 1, 0]).verdict == "supported"
    # 174 labels (173 others): n! is beyond floats from 171 on; the test still runs
    big = np.arange(174.0)
    assert check_claim(big + 1, big, target=0).verdict == "supported"
    assert check_claim(200 - big, big, target=0, n_permutations=99).verdict == "contradicted"
    # independent weights: "not supported" about 95% of the time at alpha = 0.05
    rng = np.random.default_rng(0)
    verdicts = [check_claim(rng.random(15), rng.random(15), seed=i).verdict for i in range(200)]
    assert 0.90 <= verdicts.count("not supported") / 200 <= 0.99


def test_rank_agreement_path_equals_spearman_of_each_slice():
    rng = np.random.default_rng(1)
    L, m = 5, 6
    coefs = rng.standard_normal((L, m, m)) * (rng.random((L, m, m)) < 0.6)
    coefs[0] = 0.0  # the first λ: all zero, undefined
    R = rng.integers(0, 30, (m, m)).astype(float)
    sd = rng.uniform(0.1, 2.0, m)
    every = rank_agreement_path(coefs, R, sd=sd)
    assert every.shape == (L, m) and np.isnan(every[0]).all()
    for i in range(1, L):
        for k in range(m):
            o = np.arange(m) != k
            b = np.abs(coefs[i, k, o] * sd[o])
            expected = spearmanr(b, R[k, o]).statistic if np.ptp(b) else math.nan
            if np.isnan(expected):
                assert np.isnan(every[i, k])
            else:
                assert every[i, k] == pytest.approx(expected)
    np.testing.assert_allclose(rank_agreement_path(coefs, R, sd=sd, target=2), every[:, 2])
    mean = rank_agreement_path(coefs, R, sd=sd, average=True)
    assert np.isnan(mean[0])
    np.testing.assert_allclose(mean[1:], np.nanmean(every[1:], axis=1))


def test_zero_readings_find_a_planted_copy_planted_noise_and_a_weak_class():
    """Oracle: R², marginal and partial correlations worked with scikit-learn's
    LinearRegression residuals on the selected columns."""
    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 2, n)
    a = y + 0.4 * rng.standard_normal(n)
    F = np.c_[
        0.5 * y + 0.2 * rng.standard_normal(n),  # 0: k itself, selected
        a,  # 1: selected
        a + 0.05 * rng.standard_normal(n),  # 2: a copy of 1 -> redundant
        rng.standard_normal(n),  # 3: noise -> irrelevant
        0.3 * y + rng.standard_normal(n),  # 4: independent extra signal -> weak
    ]
    Y = np.c_[y, y, y, rng.integers(0, 2, n), y]
    # make column 4 carry information the selected columns do not: y's residual part
    S = F[:, [0, 1]]
    resid_y = y - LinearRegression().fit(S, y).predict(S)
    F[:, 4] = resid_y + 0.5 * rng.standard_normal(n)
    names = ["k", "a", "copy", "noise", "weak"]
    got = zero_readings([1.0, 0.7, 0.0, 0.0, 0.0], F, Y, 0, class_names=names)
    assert got.attrs["threshold"] == pytest.approx(2 / math.sqrt(n))
    assert got.index.tolist() == [2, 3, 4]
    assert got["reading"].tolist() == ["redundant", "irrelevant", "weak"]
    assert got.loc[2, "closest"] == "a"
    ry = y - LinearRegression().fit(S, y).predict(S)
    for t in (2, 3, 4):
        fit = LinearRegression().fit(S, F[:, t])
        assert got.loc[t, "r2_selected"] == pytest.approx(fit.score(S, F[:, t]), abs=1e-9)
        assert got.loc[t, "r_with_k"] == pytest.approx(np.corrcoef(F[:, t], y)[0, 1])
        rt = F[:, t] - fit.predict(S)
        assert got.loc[t, "partial_r"] == pytest.approx(np.corrcoef(rt, ry)[0, 1], abs=1e-9)
    none = zero_readings(np.zeros(5), F, Y, 0)
    assert (none["r2_selected"] == 0).all() and (none["closest"] == "").all()
    np.testing.assert_allclose(none["partial_r"], none["r_with_k"])
    assert "redundant" not in set(none["reading"])  # nothing selected, nothing to copy


@pytest.mark.parametrize("bad", ["a", 2.5, 0, -1, True, None])
def test_class_choosers_reject_a_bad_count_with_a_typed_error(bad):
    """frequent_classes and top_classes take the same n: a positive integer.  top_classes
    validates it with the library's validate_params (InvalidParameterError naming n; a bool
    is an int there, True is n = 1); frequent_classes, which the dashboard calls at start-up
    before scikit-learn is imported, checks it by hand (DataError; a text n used to escape
    it as a bare ValueError)."""
    from sblr.interpret import frequent_classes, top_classes

    with pytest.raises(DataError, match="positive integer"):
        frequent_classes(np.eye(3), bad)
    if bad is not True:
        with pytest.raises(InvalidParameterError, match="'n' parameter of top_classes"):
            top_classes(np.eye(3), bad)


def test_frequent_classes_ranks_by_rows_then_index():
    """Oracle worked by hand: sizes (2, 3, 3, 1), so the two largest are classes 1 and 2,
    then class 0; between equal sizes the lower index goes first."""
    from sblr.interpret import frequent_classes

    Y = np.array([[1, 1, 1, 0], [1, 1, 1, 0], [0, 1, 1, 1]])
    assert frequent_classes(Y, 2).tolist() == [1, 2]
    assert frequent_classes(Y, 3).tolist() == [0, 1, 2]
    assert frequent_classes(Y, 10).tolist() == [0, 1, 2, 3]
    assert frequent_classes(np.array([[1, 1, 0]]), 1).tolist() == [0]  # tie: lower index


@pytest.mark.slow
def test_claim_without_power_is_untestable_not_a_verdict():
    """One non-zero weight of 18 gave "p = 1.000 ... not supported": a verdict from a test
    that could never reject. Oracle: the exact permutation distribution over all 7! orders
    of a small case, computed here with itertools."""
    import itertools

    from sblr.interpret import check_claim, spearman

    def exact_min_p(w):
        d = np.arange(len(w), dtype=float)
        null = np.array([spearman(np.array(p), d) for p in itertools.permutations(w)])
        best = np.abs(null).max()
        return np.mean(np.abs(null) >= best - 1e-12)

    one = [0.0] * 6 + [2.0]
    assert exact_min_p(one) >= 0.05  # no arrangement could be significant ...
    c = check_claim(one, np.arange(7.0))
    assert c.verdict == "untestable" and c.n_nonzero == 1  # ... so no verdict is given
    assert "only 1 of the 7 weights" in c.sentence()
    three = [0.0] * 4 + [1.0, 2.0, 3.0]
    assert exact_min_p(three) < 0.05
    c = check_claim(three, np.arange(7.0))
    assert c.verdict == "supported" and c.n_nonzero == 3
    assert check_claim([0.0] * 17 + [3.0], np.arange(18.0)).verdict == "untestable"


def test_readings_at_another_threshold_agree_with_reading_again():
    """The contributions page reads the zeros at a Bonferroni τ from the first table's
    correlations; oracle: zero_readings computed again at that τ."""
    from sblr.interpret import family_threshold, readings_at, zero_readings

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    a = y + 0.5 * rng.standard_normal(300)
    F = np.c_[y * 0.5 + 0.1, a, a + 0.3 * rng.standard_normal(300), rng.random((300, 5))]
    Y = np.c_[y, y, y, rng.integers(0, 2, (300, 5))]
    coef = np.array([1.0, 2.0, 0, 0, 0, 0, 0, 0])
    first = zero_readings(coef, F, Y, 0)
    tau = family_threshold(300, len(first))
    again = zero_readings(coef, F, Y, 0, threshold=tau)["reading"]
    pd.testing.assert_series_equal(readings_at(first, tau), again)


def test_decision_line_is_where_the_model_switches_at_its_own_cut():
    """Oracle: the model's own probabilities at the line's points (the other evidences at
    their mean) equal its fitted cut threshold_[k], not 0.5."""
    from sklearn.datasets import make_multilabel_classification

    from sblr import SparseSBLRClassifier
    from sblr.interpret import decision_line

    X, Y = make_multilabel_classification(300, 8, n_classes=4, random_state=2)
    model = SparseSBLRClassifier(lam=1e-4, threshold="pcut").fit(X, Y)
    F = model.featurizer_.training_evidence()
    k, t1, t2 = 1, 1, 2
    f1, f2 = decision_line(model, k=k, t1=t1, t2=t2, F=F)
    points = np.tile(F.mean(axis=0), (len(f1), 1))
    points[:, t1], points[:, t2] = f1, f2
    P = model.proba_from_evidence(points)[:, k]
    assert not np.isclose(model.threshold_[k], 0.5)
    np.testing.assert_allclose(P, model.threshold_[k], rtol=1e-9)
    # an explicit cut wins over the model's
    f1, f2 = decision_line(model, k=k, t1=t1, t2=t2, F=F, cut=0.5)
    points[:, t1], points[:, t2] = f1, f2
    np.testing.assert_allclose(model.proba_from_evidence(points)[:, k], 0.5, rtol=1e-9)


def test_cluster_order_puts_planted_groups_of_linked_classes_together():
    """Three groups of 5 classes linked within (|β| ~ 1) and barely across (~0.05), their
    indices shuffled: the order runs through each group in one piece; unlinked classes come
    last in class order."""
    from sblr.interpret import cluster_order

    rng = np.random.default_rng(1)
    m = 18
    group = rng.permutation(np.repeat([0, 1, 2, -1], [5, 5, 5, 3]))
    B = rng.random((m, m)) * 0.05 * (group[:, None] >= 0) * (group[None, :] >= 0)
    same = (group[:, None] == group[None, :]) & (group[:, None] >= 0)
    B[same] = rng.uniform(0.8, 1.2, same.sum()) * rng.choice([-1, 1], same.sum())
    order = cluster_order(B)
    assert sorted(order.tolist()) == list(range(m))
    runs = [g for i, g in enumerate(group[order]) if i == 0 or g != group[order][i - 1]]
    assert runs == [runs[0], runs[1], runs[2], -1] and sorted(runs[:3]) == [0, 1, 2]
    np.testing.assert_array_equal(order[-3:], np.flatnonzero(group < 0))
    sub = cluster_order(B, classes=np.flatnonzero(group == 1)[::-1])
    np.testing.assert_array_equal(np.sort(sub), np.flatnonzero(group == 1))
