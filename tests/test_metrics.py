"""Tests for :mod:`sblr.metrics`: hand-worked values, skip rules, ties, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import coverage_error

from sblr.exceptions import DataError
from sblr.metrics import (
    GREATER_IS_BETTER,
    LOWER_IS_BETTER,
    METRIC_LABELS,
    MULTILABEL_METRICS,
    accuracy,
    average_precision,
    coverage,
    hamming_loss,
    macro_f1,
    macro_f1_seen,
    micro_f1,
    multiclass_macro_f1,
    multiclass_report,
    multilabel_report,
    one_error,
    ranking_loss,
    subset_accuracy,
)

# --------------------------------------------------------------------------- hand example
#
# 3 rows x 4 labels.
#
#          labels:  0    1    2    3
# Y  row 0:         1    0    1    0        Y0 = {0, 2}      Ybar0 = {1, 3}
#    row 1:         0    1    0    0        Y1 = {1}         Ybar1 = {0, 2, 3}
#    row 2:         1    1    1    0        Y2 = {0, 1, 2}   Ybar2 = {3}
#
# S  row 0:        .9   .8   .3   .1
#    row 1:        .6   .5   .4   .7
#    row 2:        .2   .6   .6   .2        (relevant 0 ties irrelevant 3; relevant 1 ties 2)
#
# P  row 0:         1    1    0    0
#    row 1:         0    1    0    0
#    row 2:         1    1    1    1

Y = np.array([[1, 0, 1, 0], [0, 1, 0, 0], [1, 1, 1, 0]])
S = np.array([[0.9, 0.8, 0.3, 0.1], [0.6, 0.5, 0.4, 0.7], [0.2, 0.6, 0.6, 0.2]])
P = np.array([[1, 1, 0, 0], [0, 1, 0, 0], [1, 1, 1, 1]])

# Rows that carry no ranking information.
EMPTY_Y, EMPTY_S = [0, 0, 0, 0], [0.1, 0.9, 0.5, 0.3]
FULL_Y, FULL_S = [1, 1, 1, 1], [0.4, 0.2, 0.8, 0.6]
Y5 = np.vstack([Y, EMPTY_Y, FULL_Y])
S5 = np.vstack([S, EMPTY_S, FULL_S])


def test_hamming_loss_by_hand():
    # row 0 differs at labels 1 and 2 (2), row 1 at none (0), row 2 at label 3 (1):
    # 3 wrong cells of 3 * 4 = 12  ->  0.25
    assert hamming_loss(Y, P) == pytest.approx(3 / 12)


def test_subset_accuracy_by_hand():
    # only row 1 is predicted exactly  ->  1/3
    assert subset_accuracy(Y, P) == pytest.approx(1 / 3)
    # an empty true set predicted empty counts as exact
    assert subset_accuracy([[0, 0], [1, 0]], [[0, 0], [0, 1]]) == pytest.approx(1 / 2)


def test_micro_f1_by_hand():
    # pooled over all cells: tp = 5 (r0: l0; r1: l1; r2: l0, l1, l2),
    # fp = 2 (r0: l1; r2: l3), fn = 1 (r0: l2)
    # F1 = 2*5 / (2*5 + 2 + 1) = 10/13
    assert micro_f1(Y, P) == pytest.approx(10 / 13)


def test_macro_f1_by_hand():
    # per label, F1 = 2tp / (2tp + fp + fn):
    # label 0: Y col 1,0,1  P col 1,0,1  tp=2 fp=0 fn=0 -> 1
    # label 1: Y col 0,1,1  P col 1,1,1  tp=2 fp=1 fn=0 -> 4/5
    # label 2: Y col 1,0,1  P col 0,0,1  tp=1 fp=0 fn=1 -> 2/3
    # label 3: Y col 0,0,0  P col 0,0,1  tp=0 fp=1 fn=0 -> 0 (fp > 0: 0 under any convention)
    # macro = (1 + 4/5 + 2/3 + 0) / 4 = 37/60
    assert macro_f1(Y, P) == pytest.approx(37 / 60)
    assert macro_f1(Y, P, zero_division=0.0) == pytest.approx(37 / 60)


def test_macro_f1_label_absent_and_never_predicted_mulan_convention():
    # add label 4: never true, never predicted (tp + fp + fn = 0)
    Y_ = np.hstack([Y, np.zeros((3, 1), int)])
    P_ = np.hstack([P, np.zeros((3, 1), int)])
    # default (Mulan): that label scores 1 and is averaged in: (37/15 + 1) / 5 = 52/75
    assert macro_f1(Y_, P_) == pytest.approx(52 / 75)
    # scikit-learn's default convention: scores 0: (37/15 + 0) / 5 = 37/75
    assert macro_f1(Y_, P_, zero_division=0.0) == pytest.approx(37 / 75)
    # micro is unaffected (the label adds no counts)
    assert micro_f1(Y_, P_) == pytest.approx(10 / 13)


def test_micro_f1_nothing_true_nothing_predicted():
    Z = np.zeros((2, 3), int)
    assert micro_f1(Z, Z) == 1.0
    assert macro_f1(Z, Z) == 1.0
    assert micro_f1(Z, Z, zero_division=0.0) == 0.0


def test_ranking_loss_by_hand():
    # RL_i = |{(l, l') in Y x Ybar : s_l <= s_l'}| / (|Y| |Ybar|)
    # row 0: (0,1) .9<=.8 no; (0,3) .9<=.1 no; (2,1) .3<=.8 YES; (2,3) .3<=.1 no -> 1/4
    # row 1: (1,0) .5<=.6 YES; (1,2) .5<=.4 no; (1,3) .5<=.7 YES             -> 2/3
    # row 2: (0,3) .2<=.2 YES (tie counts as error); (1,3) no; (2,3) no       -> 1/3
    # mean = (1/4 + 2/3 + 1/3) / 3 = 5/12
    assert ranking_loss(Y, S) == pytest.approx(5 / 12)


def test_one_error_by_hand():
    # row 0: top = label 0 (.9), relevant      -> 0
    # row 1: top = label 3 (.7), irrelevant    -> 1
    # row 2: labels 1, 2 tie at .6; argmax -> label 1, relevant -> 0
    # mean = 1/3
    assert one_error(Y, S) == pytest.approx(1 / 3)


def test_one_error_ties_broken_by_lowest_index():
    # labels 0 and 1 tie for the top score; argmax picks label 0
    assert one_error([[0, 1, 0]], [[0.5, 0.5, 0.1]]) == 1.0
    assert one_error([[1, 0, 0]], [[0.5, 0.5, 0.1]]) == 0.0


def test_coverage_by_hand():
    # rank(l) = |{l' : s_l' >= s_l}|; cov_i = max_{l in Y_i} rank(l) - 1
    # row 0: lowest relevant = label 2 (.3); scores >= .3: .9 .8 .3 -> rank 3 -> 2
    # row 1: only relevant = label 1 (.5); scores >= .5: .6 .5 .7 -> rank 3 -> 2
    # row 2: lowest relevant = label 0 (.2); tied with label 3 -> rank 4 -> 3
    # mean = 7/3
    assert coverage(Y, S) == pytest.approx(7 / 3)
    # scikit-learn's coverage_error is one more (no empty rows here)
    assert coverage(Y, S) == pytest.approx(coverage_error(Y, S) - 1)


def test_average_precision_by_hand():
    # AP_i = 1/|Y| sum_{l in Y} |{l' in Y : rank(l') <= rank(l)}| / rank(l)
    # row 0: rank(0) = 1, rank(2) = 3
    #        l=0: {0} -> 1/1;  l=2: {0, 2} -> 2/3;           AP = (1 + 2/3)/2 = 5/6
    # row 1: rank(1) = 3 (.6, .7 above it)    l=1: {1} -> 1/3;  AP = 1/3
    # row 2: rank(1) = rank(2) = 2 (tie: both count), rank(0) = 4 (tie with label 3)
    #        l=1: {1, 2} -> 2/2;  l=2: {1, 2} -> 2/2;  l=0: {0, 1, 2} -> 3/4
    #        AP = (1 + 1 + 3/4) / 3 = 11/12
    # mean = (5/6 + 1/3 + 11/12) / 3 = 25/36
    assert average_precision(Y, S) == pytest.approx(25 / 36)


def test_empty_and_full_rows_are_skipped_by_ranking_measures():
    assert ranking_loss(Y5, S5) == pytest.approx(5 / 12)
    assert one_error(Y5, S5) == pytest.approx(1 / 3)
    assert average_precision(Y5, S5) == pytest.approx(25 / 36)


def test_coverage_averages_all_rows_empty_row_contributes_zero():
    # empty row -> 0 (not -1); full row -> m - 1 = 3; (7 + 0 + 3) / 5 = 2
    assert coverage(Y5, S5) == pytest.approx(2.0)
    assert coverage([EMPTY_Y], [EMPTY_S]) == 0.0
    assert coverage([FULL_Y], [FULL_S]) == 3.0


def test_all_rows_skipped_gives_nan():
    Yd = np.array([EMPTY_Y, FULL_Y])
    Sd = np.array([EMPTY_S, FULL_S])
    for metric in (ranking_loss, one_error, average_precision):
        assert math.isnan(metric(Yd, Sd))
    # a single label: every row is empty or full
    assert math.isnan(ranking_loss([[1], [0]], [[0.3], [0.2]]))


def test_ranking_loss_all_tied_scores_is_one():
    # every (relevant, irrelevant) pair is tied -> every pair is an error
    assert ranking_loss([[1, 0, 1, 0]], [[0.5] * 4]) == 1.0
    # AP with everything tied: rank(l) = 4 for all, numerator |Y| = 2 -> 2/4
    assert average_precision([[1, 0, 1, 0]], [[0.5] * 4]) == pytest.approx(0.5)
    # coverage with everything tied: rank 4 -> 3
    assert coverage([[1, 0, 0, 0]], [[0.5] * 4]) == 3.0


def test_perfect_ranking():
    Yp = np.array([[1, 0, 0], [0, 1, 1]])
    Sp = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    assert ranking_loss(Yp, Sp) == 0.0
    assert one_error(Yp, Sp) == 0.0
    assert average_precision(Yp, Sp) == 1.0
    # coverage = mean(|Y_i|) - 1 for a perfect ranking: (0 + 1) / 2
    assert coverage(Yp, Sp) == pytest.approx(0.5)


def test_multilabel_report_matches_functions():
    r = multilabel_report(Y, P, S)
    assert tuple(r) == MULTILABEL_METRICS
    assert list(r) == [
        "hamming_loss",
        "ranking_loss",
        "one_error",
        "coverage",
        "average_precision",
        "subset_accuracy",
        "micro_f1",
        "macro_f1",
    ]
    expected = {
        "hamming_loss": 3 / 12,
        "ranking_loss": 5 / 12,
        "one_error": 1 / 3,
        "coverage": 7 / 3,
        "average_precision": 25 / 36,
        "subset_accuracy": 1 / 3,
        "micro_f1": 10 / 13,
        "macro_f1": 37 / 60,
    }
    assert r == pytest.approx(expected)
    assert all(type(v) is float for v in r.values())


def test_multiclass_by_hand():
    yt = ["a", "b", "c", "a", "b"]
    yp = ["a", "b", "a", "a", "c"]
    # correct: positions 0, 1, 3 -> 3/5
    assert accuracy(yt, yp) == pytest.approx(3 / 5)
    # a: tp=2 fp=1 fn=0 -> 4/5;  b: tp=1 fp=0 fn=1 -> 2/3;  c: tp=0 fp=1 fn=1 -> 0
    # macro = (4/5 + 2/3 + 0) / 3 = 22/45
    assert multiclass_macro_f1(yt, yp) == pytest.approx(22 / 45)
    # listing an absent, never-predicted class "d" adds an F1 of 1 (Mulan): (22/15 + 1)/4
    assert multiclass_macro_f1(yt, yp, labels=["a", "b", "c", "d"]) == pytest.approx(37 / 60)
    assert multiclass_report(yt, yp) == pytest.approx({"accuracy": 3 / 5, "macro_f1": 22 / 45})


def test_direction_and_label_dicts_cover_every_metric():
    names = set(multilabel_report(Y, P, S)) | set(multiclass_report([0, 1], [0, 1]))
    assert set(LOWER_IS_BETTER) == names
    assert set(GREATER_IS_BETTER) == names
    assert set(METRIC_LABELS) == names
    assert all(GREATER_IS_BETTER[k] is (not LOWER_IS_BETTER[k]) for k in names)
    assert LOWER_IS_BETTER["hamming_loss"] and LOWER_IS_BETTER["coverage"]
    assert GREATER_IS_BETTER["average_precision"] and GREATER_IS_BETTER["macro_f1"]
    for k, label in METRIC_LABELS.items():
        assert label.endswith("↓" if LOWER_IS_BETTER[k] else "↑")


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "call",
    [
        lambda: hamming_loss(Y, P[:, :3]),  # shape mismatch
        lambda: ranking_loss(Y, S[:2]),  # shape mismatch
        lambda: hamming_loss(Y * 2, P),  # not 0/1
        lambda: ranking_loss([[1, -1, 0]], [[0.1, 0.2, 0.3]]),  # not 0/1
        lambda: micro_f1(Y, P + 0.5),  # Y_pred not 0/1
        lambda: coverage(Y, np.where(S > 0.5, np.nan, S)),  # NaN scores
        lambda: one_error([1, 0, 1], [0.2, 0.1, 0.3]),  # 1-D
        lambda: average_precision(np.zeros((0, 3)), np.zeros((0, 3))),  # empty
        lambda: subset_accuracy([["a", "b"]], [["a", "b"]]),  # non-numeric
        lambda: multilabel_report(Y, P, S[:, :2]),  # scores shape
        lambda: accuracy([0, 1, 1], [0, 1]),  # length mismatch
        lambda: multiclass_macro_f1([[0, 1]], [[0, 1]]),  # 2-D
    ],
)
def test_invalid_inputs_raise_data_error(call):
    with pytest.raises(DataError):
        call()


def test_data_error_message_is_specific():
    with pytest.raises(ValueError, match=r"only 0 and 1.*found 2 at row 0, label 0"):
        hamming_loss([[2, 0]], [[1, 0]])
    with pytest.raises(DataError, match=r"Y_true has shape \(3, 4\) but scores has shape"):
        ranking_loss(Y, S[:, :3])


def test_boolean_and_float_indicators_accepted():
    assert hamming_loss(Y.astype(bool), P.astype(float)) == pytest.approx(0.25)
    assert ranking_loss(Y.astype(float), S) == pytest.approx(5 / 12)


# --------------------------------------------------------------------------- properties
#
# Slow reference implementations written straight from Zhang & Zhou (2014), with the
# tie convention of sblr.metrics: rank(l) = |{l' : s_l' >= s_l}| (ties pessimistic),
# a (relevant, irrelevant) pair is an error iff s_l <= s_l', rows whose true set is
# empty or full are skipped, nan if none remain; one-error takes the first index
# among tied maxima; coverage averages all rows, empty rows contributing 0.


def _slow_rank(s, lab):
    return sum(1 for j in range(len(s)) if s[j] >= s[lab])


def _slow_ranking_metrics(Yt, Sc):
    n, m = Yt.shape
    rl, ap, oe = [], [], []
    cov = []
    for i in range(n):
        rel = [j for j in range(m) if Yt[i, j] == 1]
        irr = [j for j in range(m) if Yt[i, j] == 0]
        s = Sc[i]
        cov.append(max((_slow_rank(s, a) for a in rel), default=1) - 1)
        if not rel or not irr:
            continue
        bad = sum(1 for a in rel for b in irr if s[a] <= s[b])
        rl.append(bad / (len(rel) * len(irr)))
        total = 0.0
        for a in rel:
            r_l = _slow_rank(s, a)
            total += sum(1 for lp in rel if _slow_rank(s, lp) <= r_l) / r_l
        ap.append(total / len(rel))
        top = max(range(m), key=lambda j: (s[j], -j))  # highest score, then lowest index
        oe.append(0.0 if Yt[i, top] == 1 else 1.0)

    def mean(v):
        return sum(v) / len(v) if v else math.nan

    return mean(rl), mean(ap), mean(oe), mean(cov)


@st.composite
def _ranking_problem(draw):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(1, 6))
    cells = n * m
    y = draw(st.lists(st.integers(0, 1), min_size=cells, max_size=cells))
    # few distinct values so that ties are frequent
    s = draw(st.lists(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 2.0]), min_size=cells, max_size=cells))
    return np.array(y).reshape(n, m), np.array(s).reshape(n, m)


def _same(a, b):
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_ranking_problem())
def test_ranking_metrics_match_slow_definitions(problem):
    Yt, Sc = problem
    rl, ap, oe, cov = _slow_ranking_metrics(Yt, Sc)
    assert _same(ranking_loss(Yt, Sc), rl)
    assert _same(average_precision(Yt, Sc), ap)
    assert _same(one_error(Yt, Sc), oe)
    assert _same(coverage(Yt, Sc), cov)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_ranking_problem())
def test_coverage_is_sklearn_minus_one_without_empty_rows(problem):
    Yt, Sc = problem
    Yt = Yt.copy()
    Yt[Yt.sum(axis=1) == 0, 0] = 1  # make every row non-empty
    if Yt.shape[1] < 2:
        Yt = np.hstack([Yt, np.zeros_like(Yt)])
        Sc = np.hstack([Sc, Sc])
    assert coverage(Yt, Sc) == pytest.approx(coverage_error(Yt, Sc) - 1)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(_ranking_problem(), st.integers(0, 5))
def test_ranking_metrics_invariant_to_adding_uninformative_rows(problem, seed):
    Yt, Sc = problem
    rng = np.random.default_rng(seed)
    m = Yt.shape[1]
    extra_Y = np.array([[0] * m, [1] * m])
    extra_S = rng.normal(size=(2, m))
    Y2, S2 = np.vstack([Yt, extra_Y]), np.vstack([Sc, extra_S])
    for metric in (ranking_loss, one_error, average_precision):
        assert _same(metric(Y2, S2), metric(Yt, Sc))


@pytest.mark.slow
def test_vectorized_average_precision_equals_scikit_learn_with_ties():
    from sklearn.metrics import label_ranking_average_precision_score

    rng = np.random.default_rng(3)
    Y = (rng.random((300, 9)) < 0.35).astype(int)
    Y[Y.sum(1) == 0, 0] = 1
    Y[Y.sum(1) == 9, 1] = 0
    S = rng.integers(0, 4, size=(300, 9)).astype(float)  # many ties
    assert average_precision(Y, S) == pytest.approx(label_ranking_average_precision_score(Y, S))


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 30).flatmap(
        lambda n: st.integers(2, 6).flatmap(
            lambda m: st.tuples(
                st.lists(
                    st.lists(st.integers(0, 1), min_size=m, max_size=m), min_size=n, max_size=n
                ),
                st.lists(
                    st.lists(st.integers(0, 1), min_size=m, max_size=m), min_size=n, max_size=n
                ),
            )
        )
    ),
    st.sampled_from([0.0, 1.0]),
)
def test_f1_equals_scikit_learn(pair, zero_division):
    from sklearn.metrics import f1_score

    Yt, Yp = (np.array(a) for a in pair)
    for average, ours in (("micro", micro_f1), ("macro", macro_f1)):
        expected = f1_score(Yt, Yp, average=average, zero_division=zero_division)
        assert ours(Yt, Yp, zero_division=zero_division) == pytest.approx(expected, abs=1e-12)


def test_ranking_loss_equals_scikit_learn_across_row_blocks():
    """174 labels (CAL500's size): rows are processed in blocks; ties and all kinds of rows."""
    from sklearn.metrics import label_ranking_loss

    rng = np.random.default_rng(0)
    Y = (rng.random((400, 174)) < 0.15).astype(int)
    S = rng.integers(0, 6, size=Y.shape).astype(float)  # many ties
    Y[:5] = 0
    Y[5:8] = 1
    keep = (Y.sum(axis=1) > 0) & (Y.sum(axis=1) < 174)
    assert ranking_loss(Y, S) == pytest.approx(label_ranking_loss(Y[keep], S[keep]), abs=1e-12)


# --------------------------------------------------------------------------- per label, threshold
def _proba_case(seed=0, n=120, m=5):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, m)) < 0.35).astype(int)
    P = np.clip(0.6 * Y + 0.5 * rng.random((n, m)) - 0.05, 0, 1)
    Y[:, 4] = 0  # a class that never occurs
    return Y, P


@pytest.mark.parametrize("threshold", [0.2, 0.5, 0.8])
def test_per_label_report_equals_scikit_learn_at_a_threshold(threshold):
    from sklearn.metrics import precision_recall_fscore_support

    from sblr.metrics import per_label_report

    Y, P = _proba_case()
    pred = (P >= threshold).astype(int)
    got = per_label_report(Y, P, threshold=threshold, class_names=list("abcde"))
    precision, recall, f1, support = precision_recall_fscore_support(
        Y, pred, average=None, zero_division=np.nan
    )
    np.testing.assert_allclose(got["precision"], precision, equal_nan=True)
    np.testing.assert_allclose(got["recall"], recall, equal_nan=True)
    np.testing.assert_array_equal(got["support"], support)
    np.testing.assert_array_equal(got["predicted"], pred.sum(axis=0))
    both = ~np.isnan(precision) & ~np.isnan(recall)
    np.testing.assert_allclose(got["f1"][both], f1[both])
    assert np.isnan(got["recall"].iloc[4])  # never occurs: no recall
    assert list(got["class"]) == list("abcde")


def test_per_label_report_multiclass_decides_by_the_largest_probability():
    from sklearn.metrics import precision_recall_fscore_support

    from sblr.metrics import per_label_report

    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(4), size=90)
    y = np.where(rng.random(90) < 0.7, P.argmax(axis=1), rng.integers(0, 4, 90))
    got = per_label_report(y, P, threshold=0.99)  # the threshold plays no part
    precision, recall, _, support = precision_recall_fscore_support(
        y, P.argmax(axis=1), labels=range(4), average=None, zero_division=np.nan
    )
    np.testing.assert_allclose(got["precision"], precision, equal_nan=True)
    np.testing.assert_allclose(got["recall"], recall, equal_nan=True)
    np.testing.assert_array_equal(got["support"], support)


def test_threshold_report_at_each_threshold_equals_the_metrics_of_thresholded_labels():
    from sblr.metrics import threshold_report

    Y, P = _proba_case(seed=1)
    for t in (0.1, 0.5, 0.9):
        pred = (P >= t).astype(int)
        got = threshold_report(Y, P, t)
        assert got["hamming_loss"] == pytest.approx(np.mean(pred != Y))
        assert got["subset_accuracy"] == pytest.approx(np.mean((pred == Y).all(axis=1)))
        tp, fp, fn = (
            (pred & Y).sum(),
            (pred & ~Y.astype(bool)).sum(),
            (~pred.astype(bool) & Y).sum(),
        )
        assert got["micro_f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    lower = threshold_report(Y, P, 0.1)
    higher = threshold_report(Y, P, 0.9)
    assert lower != higher  # the threshold matters


def test_pr_curve_and_its_marker_point_agree_with_the_thresholded_counts():
    from sblr.metrics import pr_curve
    from sblr.plots import pr_curve_figure

    Y, P = _proba_case(seed=3)
    y, p = Y[:, 0], P[:, 0]
    precision, recall, thresholds, ap = pr_curve(y, p)
    from sklearn.metrics import average_precision_score

    assert ap == pytest.approx(average_precision_score(y, p))
    for t in (0.25, 0.5, 0.75):
        fig = pr_curve_figure(precision, recall, thresholds, threshold=t)
        pred = p >= t
        exp_precision = (pred & (y == 1)).sum() / pred.sum()
        exp_recall = (pred & (y == 1)).sum() / (y == 1).sum()
        assert fig.data[1].x[0] == pytest.approx(exp_recall)
        assert fig.data[1].y[0] == pytest.approx(exp_precision)
        assert fig.data[1].name == f"threshold {t:.2f}"
    # above every probability nothing is predicted: recall 0 and precision 0/0, which the
    # marker must say (the curve's end point sits at precision 1 by convention only)
    t = float(p.max()) + 0.01
    fig = pr_curve_figure(precision, recall, thresholds, threshold=t)
    assert not (p >= t).any() and fig.data[1].x[0] == 0.0
    assert fig.data[1].name == f"threshold {t:.2f}: no row predicted"
    assert "precision undefined" in fig.data[1].hovertemplate
    assert "%{y" not in fig.data[1].hovertemplate  # no precision figure to read
    nothing = pr_curve(np.zeros(5), np.linspace(0, 1, 5))
    assert np.isnan(nothing[3])


@pytest.mark.slow
def test_coverage_never_falls_below_its_floor_given_the_ranking_loss():
    """The floor is a theorem about every ranking: checked on random label sets and scores
    (ties, empty and full rows included), where it must hold, and reached by a ranking that
    puts the same number of irrelevant labels above every relevant one."""
    from sblr.metrics import coverage, coverage_floor, ranking_loss

    rng = np.random.default_rng(0)
    for _ in range(300):
        n, m = rng.integers(1, 12), rng.integers(2, 9)
        Y = (rng.random((n, m)) < rng.random()).astype(int)
        S = rng.integers(0, 4, size=(n, m)).astype(float)  # many ties
        rl = ranking_loss(Y, S)
        floor = coverage_floor(Y, 0.0 if np.isnan(rl) else rl)
        assert coverage(Y, S) >= floor - 1e-12, (Y, S)
    # one row, 2 relevant of 5, both below exactly one irrelevant label: RL = 1/3, cov = 2
    Y, S = np.array([[1, 1, 0, 0, 0]]), np.array([[0.8, 0.7, 0.9, 0.1, 0.0]])
    assert ranking_loss(Y, S) == pytest.approx(1 / 3)
    assert coverage(Y, S) == pytest.approx(coverage_floor(Y, 1 / 3)) == pytest.approx(2.0)


def test_macro_f1_seen_leaves_out_only_the_labels_neither_true_nor_predicted():
    """Issue #46, item 11. Oracle: scikit-learn's macro F1 over the labels chosen by hand
    (true or predicted in some row); Mulan's macro-F1 counts the others as 1 and is larger."""
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(3)
    Y = (rng.random((30, 12)) < 0.15).astype(int)
    Y[:, 8:] = 0  # four labels no row carries
    P = rng.random((30, 12))
    P[:, 10:] = 0.0  # two of them never predicted either
    pred = (P >= 0.7).astype(int)
    seen = [j for j in range(12) if Y[:, j].any() or pred[:, j].any()]
    value, n = macro_f1_seen(Y, P, 0.7)
    assert n == len(seen) == 10
    assert value == pytest.approx(f1_score(Y, pred, average="macro", labels=seen))
    assert macro_f1(Y, pred) > value  # the two absent labels count as 1 there
