"""Multi-label decisions (sblr.decision) and the ``threshold`` of every sblr classifier.

Oracles: cuts worked by hand; MEKA's PCut1 definition (the cut whose predicted label
cardinality is nearest the true one) by brute force over every cut; micro-F1 by brute force
with scikit-learn's ``f1_score``; per-class F1 against scikit-learn's
``TunedThresholdClassifierCV`` on the same probabilities; out-of-fold probabilities against
layers refitted by hand without the held-out rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import make_multilabel_classification
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import f1_score
from sklearn.model_selection import KFold, TunedThresholdClassifierCV

from sblr import SBLRClassifier, SMLClassifier, SparseSBLRClassifier, decision
from sblr.logistic import lambda_max, solve_layer


def _probabilities(seed, n=60, m=4):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, m)) < [0.5, 0.3, 0.1, 0.08]).astype(int)
    P = np.clip(0.35 * Y + rng.random((n, m)) * 0.6, 0, 1).round(3)  # ties on purpose
    return P, Y


def test_cuts_worked_by_hand():
    P = np.array([[0.9, 0.40], [0.35, 0.2], [0.30, 0.45], [0.1, 0.05]])
    Y = np.array([[1, 0], [1, 0], [0, 1], [0, 0]])
    # 3 labels in all: the 3 largest of the 8 values are 0.9, 0.45, 0.40 -> halfway to 0.35
    np.testing.assert_allclose(decision.fit_cuts(P, Y, "pcut"), [0.375, 0.375])
    # class 0 has 2 positives: halfway between 0.35 and 0.30; class 1 has 1: 0.45 | 0.40
    np.testing.assert_allclose(decision.fit_cuts(P, Y, "pcut_per_class"), [0.325, 0.425])
    # pooled, by the top j values (0.9+ 0.45+ 0.40- 0.35+ 0.30- ...): F1 = 2·tp / (j + 3) is
    # 2/4, 4/5, 4/6, 6/7, 6/8 ...: the top 4, cut halfway between 0.35 and 0.30
    np.testing.assert_allclose(decision.fit_cuts(P, Y, "micro_f1"), [0.325, 0.325])
    # a cut never splits a tie: [0.5, 0.5, 0.2] with 1 positive can only take 0 or 2 or 3 rows
    cut = decision.fit_cuts(np.array([[0.5], [0.5], [0.2]]), np.array([[1], [0], [0]]), "pcut")
    assert (np.array([0.5, 0.5, 0.2]) >= cut[0]).sum() in (0, 2)


@pytest.mark.parametrize("seed", range(5))
def test_pcut_is_mekas_pcut1(seed):
    P, Y = _probabilities(seed)
    cut = decision.fit_cuts(P, Y, "pcut")[0]
    truth = Y.sum(axis=1).mean()
    # MEKA's PCut1: the cut whose predicted label cardinality is nearest the true one
    candidates = np.r_[np.unique(P), np.nextafter(P.max(), 2)]
    gaps = [abs((P >= t).sum(axis=1).mean() - truth) for t in candidates]
    assert abs((P >= cut).sum(axis=1).mean() - truth) == pytest.approx(min(gaps))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_micro_f1_cut_is_the_best_cut(seed):
    P, Y = _probabilities(seed)
    cut = decision.fit_cuts(P, Y, "micro_f1")[0]
    best = max(
        f1_score(Y, (P >= t).astype(int), average="micro", zero_division=0) for t in np.unique(P)
    )
    assert f1_score(Y, (P >= cut).astype(int), average="micro") == pytest.approx(best)


class _Lookup(ClassifierMixin, BaseEstimator):
    """A 'classifier' whose probability of row i is p[i] (X holds the row numbers)."""

    def __init__(self, p=None):
        self.p = p

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        q = np.asarray(self.p)[np.asarray(X, dtype=int).ravel()]
        return np.c_[1 - q, q]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_f1_cut_of_a_class_matches_tunedthresholdclassifiercv(seed):
    P, Y = _probabilities(seed)
    k = 0  # a class with enough positives to have a cut of its own
    assert Y[:, k].sum() >= decision._MIN_POSITIVES
    cut = decision.fit_cuts(P, Y, "f1")[k]
    X = np.arange(len(P))[:, None]
    lookup = _Lookup(P[:, k]).fit(X, Y[:, k])
    every_row = [(np.arange(len(P)), np.arange(len(P)))]
    tuned = TunedThresholdClassifierCV(
        FrozenEstimator(lookup), scoring="f1", thresholds=np.unique(P[:, k]), cv=every_row
    ).fit(X, Y[:, k])
    theirs = f1_score(Y[:, k], (P[:, k] >= tuned.best_threshold_).astype(int))
    assert f1_score(Y[:, k], (P[:, k] >= cut).astype(int)) == pytest.approx(theirs)


def test_f1_rule_gives_rare_classes_the_pooled_cut():
    P, Y = _probabilities(1)
    rare = np.flatnonzero(Y.sum(axis=0) < decision._MIN_POSITIVES)
    assert rare.size
    cuts = decision.fit_cuts(P, Y, "f1")
    np.testing.assert_allclose(cuts[rare], decision.fit_cuts(P, Y, "micro_f1")[0])


def test_decide_and_force_top1():
    P = np.array([[0.2, 0.1], [0.7, 0.4], [0.3, 0.9]])
    np.testing.assert_array_equal(decision.decide(P, [0.5, 0.5]), [[0, 0], [1, 0], [0, 1]])
    np.testing.assert_array_equal(
        decision.decide(P, [0.5, 0.5], force_top1=True), [[1, 0], [1, 0], [0, 1]]
    )
    with pytest.raises(ValueError, match="one per class"):
        decision.checked_threshold([0.1, 0.2, 0.3], 2)
    with pytest.raises(ValueError, match="probability"):
        decision.checked_threshold(1.5, 2)


@pytest.fixture
def rare_labels():
    X, Y = make_multilabel_classification(
        300, 12, n_classes=8, n_labels=1, allow_unlabeled=True, random_state=4
    )
    return X, Y


def test_threshold_rule_is_fitted_on_out_of_fold_probabilities(rare_labels):
    X, Y = rare_labels
    clf = SparseSBLRClassifier(lam=1e-3, threshold="pcut").fit(X, Y)
    F = clf.featurizer_.training_evidence()
    # the oracle: each fold's layer refitted by hand without its rows, from a cold start
    P = np.empty(Y.shape)
    for fit_rows, held in KFold(5, shuffle=True, random_state=0).split(F):
        coef, intercept, _, _ = solve_layer(F[fit_rows], Y[fit_rows], lam=1e-3, ridge=0.0)
        P[held] = 1 / (1 + np.exp(-(F[held] @ coef.T + intercept)))
    np.testing.assert_allclose(clf.threshold_, decision.fit_cuts(P, Y, "pcut"), atol=1e-4)
    # ... and NOT on the in-sample probabilities of the layer fitted on every row
    in_sample = decision.fit_cuts(clf.proba_from_evidence(F), Y, "pcut")
    assert not np.allclose(clf.threshold_, in_sample, atol=1e-4)
    # predict uses it
    Pq = clf.predict_proba(X[:50])
    np.testing.assert_array_equal(clf.predict(X[:50]), (Pq >= clf.threshold_).astype(int))
    assert "threshold='pcut'" in repr(clf)


@pytest.mark.slow
def test_sml_threshold_rule_uses_leave_one_out_probabilities(rare_labels):
    X, Y = rare_labels
    native = SMLClassifier(gamma=0.5, threshold=None).fit(X, Y)
    assert native.threshold_ is None
    cut = SMLClassifier(gamma=0.5, threshold="micro_f1").fit(X, Y)
    # leave-one-out by hand: drop row i and refit, score row i
    rows = np.arange(0, 300, 37)
    P_loo = np.array(
        [
            SMLClassifier(gamma=0.5)
            .fit(np.delete(X, i, 0), np.delete(Y, i, 0))
            .predict_proba(X[i : i + 1])[0]
            for i in rows
        ]
    )
    # the same set sizes and evidence as the model's own leave-one-out (score_scale_ is
    # refitted on a sample: compare the decisions' ranking through the logit, not the scale)
    own = cut._loo_proba()[rows]
    np.testing.assert_array_equal(np.argsort(-own, axis=1), np.argsort(-P_loo, axis=1))
    np.testing.assert_array_equal(
        cut.predict(X[:40]), (cut.predict_proba(X[:40]) >= cut.threshold_).astype(int)
    )


def test_multiclass_keeps_argmax_whatever_the_threshold():
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    a = SBLRClassifier(threshold="pcut").fit(X, y)
    assert a.threshold_ is None
    np.testing.assert_array_equal(a.predict(X), a.classes_[np.argmax(a.logits(X), axis=1)])


@pytest.mark.slow
def test_relative_lambda_is_a_share_of_each_class_lambda_max(rare_labels):
    X, Y = rare_labels
    clf = SparseSBLRClassifier(lam=0.3, lam_scale="relative", threshold=0.5).fit(X, Y)
    F = clf.featurizer_.training_evidence()
    expected = [0.3 * lambda_max(F, Y[:, k]) for k in range(Y.shape[1])]
    np.testing.assert_allclose(clf.lams_, expected)
    # each class solved alone with its own λ gives the same β (the grouping is exact)
    for k in (0, Y.shape[1] - 1):
        coef, _, _, _ = solve_layer(F, Y[:, [k]], lam=expected[k], ridge=0.0)
        np.testing.assert_allclose(clf.coef_[k], coef[0], atol=1e-5)
    # λ = λ_max,k zeroes every β of every class
    full = SparseSBLRClassifier(lam=1.0, lam_scale="relative").fit(X, Y)
    assert not full.coef_.any()


@pytest.mark.slow  # a second or more: the full suite and CI run it
def test_the_decision_is_a_value_fit_sets_and_predict_only_reads(rare_labels):
    """``fit`` sets ``threshold_`` like any fitted attribute: predict changes nothing on the
    model; a β-only fit (``cuts=False``) says it cannot decide and ``fit_decision`` gives it
    exactly the cuts ``fit`` fits; a model file carries them, a β-only model is refused."""
    from sklearn.exceptions import NotFittedError

    from sblr import SimilarityFeaturizer
    from sblr.decision import Decision
    from sblr.modelfile import ModelFileError, model_bytes

    X, Y = rare_labels[0][:160], rare_labels[1][:160]
    clf = SparseSBLRClassifier(lam=1e-3, threshold="micro_f1").fit(X, Y)
    before = dict(vars(clf))
    clf.predict(X[:5]), clf.decision_function(X[:5]), Decision.of(clf).describe()
    assert vars(clf).keys() == before.keys()
    assert all(vars(clf)[k] is v for k, v in before.items())
    assert clf.threshold_.shape == (Y.shape[1],)

    feat = SimilarityFeaturizer(gamma=clf.gamma, normalize=clf.normalize).fit(X, Y)
    F = feat.training_evidence()
    bare = SparseSBLRClassifier(lam=1e-3).fit_from_evidence(feat, F, cuts=False)
    assert "threshold_" not in vars(bare)
    np.testing.assert_array_equal(bare.coef_, clf.coef_)  # exact: same process, same path
    with pytest.raises(NotFittedError, match="cuts=False"):
        bare.predict(X[:2])
    with pytest.raises(NotFittedError, match="fit_decision"):
        Decision.of(bare)
    with pytest.raises(ModelFileError, match="without its decision"):
        model_bytes(bare)
    bare.fit_decision(F)
    np.testing.assert_array_equal(bare.threshold_, clf.threshold_)  # exact: same process


@pytest.mark.slow
def test_a_model_file_carries_the_fitted_decision(rare_labels):
    """The cuts and the fill cut travel in a model file and decide as before."""
    from sblr.modelfile import load_model, model_bytes

    X, Y = rare_labels[0][:160], rare_labels[1][:160]
    clf = SparseSBLRClassifier(lam=1e-3).fit(X, Y)
    saved = load_model(model_bytes(clf)).estimator
    np.testing.assert_array_equal(saved.threshold_, clf.threshold_)  # exact: the bytes
    assert saved.fill_cut_ == clf.fill_cut_
    np.testing.assert_array_equal(saved.predict(X), clf.predict(X))


def test_a_model_file_from_before_the_decision_was_an_attribute_opens(rare_labels):
    """Files written while SBLR kept its cuts as ``_threshold`` open with them as
    ``threshold_`` (the rule check renames them) and decide as before."""
    from sblr._fitted import check_fitted

    X, Y = rare_labels
    clf = SBLRClassifier(threshold="micro_f1").fit(X, Y)
    expected = clf.predict(X)
    clf.__dict__["_threshold"] = clf.__dict__.pop("threshold_")
    check_fitted(clf)
    assert "_threshold" not in vars(clf)
    np.testing.assert_array_equal(clf.predict(X), expected)


# ----------------------------------------------------------------------------- the fill cut
@pytest.mark.parametrize("seed", range(4))
def test_the_fill_cut_leaves_as_many_rows_empty_as_are_unlabelled(seed):
    """Oracle: every fill cut tried by hand (each row's top probability, and 0), the one whose
    empty-row count is nearest the number of unlabelled rows; fewest fills among ties."""
    rng = np.random.default_rng(seed)
    P = rng.random((60, 5)) ** 3
    Y = (rng.random((60, 5)) < 0.15).astype(int)
    cuts = np.full(5, 0.6)
    fill = decision.fit_fill_cut(P, Y, cuts)
    target = int((Y.sum(axis=1) == 0).sum())

    def empties(t):
        return int((decision.decide(P, cuts, fill_cut=t).sum(axis=1) == 0).sum())

    base = int((decision.decide(P, cuts).sum(axis=1) == 0).sum())
    if base <= target:
        assert fill is None
        return
    tried = [0.0, *np.unique(P.max(axis=1)), 1.1]
    best = min(abs(empties(t) - target) for t in tried)
    assert abs(empties(fill) - target) == best
    assert empties(fill) >= min(empties(t) for t in tried if abs(empties(t) - target) == best)


@pytest.mark.slow
def test_auto_fills_exactly_the_empty_rows_above_the_fitted_fill_cut(rare_labels):
    """force_top1="auto": the same cuts as False; the fill cut is fit_fill_cut of the
    out-of-fold probabilities the cuts came from (oracle: the model's own folds, recomputed);
    a row changes only if it was empty, and then gains exactly its most probable class."""
    X, Y = rare_labels[0][:200], rare_labels[1][:200]
    plain = SparseSBLRClassifier(lam=1e-3, force_top1=False).fit(X, Y)
    auto = SparseSBLRClassifier(lam=1e-3).fit(X, Y)
    np.testing.assert_array_equal(auto.threshold_, plain.threshold_)  # exact: same process
    F = auto.featurizer_.training_evidence()
    P_oof = auto._out_of_fold_proba(F, auto.featurizer_.Y_fit_)
    assert auto.fill_cut_ == decision.fit_fill_cut(P_oof, Y, auto.threshold_)
    P, before, after = auto.predict_proba(X), plain.predict(X), auto.predict(X)
    changed = np.flatnonzero((before != after).any(axis=1))
    assert changed.size > 0  # this data: 74 rows empty under the cut, 77 unlabelled in truth
    assert (before[changed].sum(axis=1) == 0).all()
    assert (after[changed].sum(axis=1) == 1).all()
    np.testing.assert_array_equal(after[changed].argmax(axis=1), P[changed].argmax(axis=1))
    if auto.fill_cut_ is not None:
        assert (P[changed].max(axis=1) >= auto.fill_cut_).all()
    assert "as many rows left empty" in decision.Decision.of(auto).describe() or (
        auto.fill_cut_ in (None, 0.0)
    )


def test_a_cv_estimator_decides_by_its_refit(rare_labels):
    """SparseSBLRCV's decision is its best_estimator_'s (its threshold_ is the refit's)."""
    from sblr import SparseSBLRCV
    from sblr.decision import Decision

    X, Y = rare_labels[0][:120], rare_labels[1][:120]
    cv = SparseSBLRCV(gammas=[0.1], lams=[1e-3], cv=2).fit(X, Y)
    chosen = Decision.of(cv)
    assert chosen.kind == "cut" and chosen.rule == "micro_f1"
    np.testing.assert_array_equal(chosen.cuts, cv.best_estimator_.threshold_)
    np.testing.assert_array_equal(chosen.decide(cv.predict_proba(X)), cv.predict(X))


@pytest.mark.parametrize("fill_cut", [None, 0.0, 0.2])
def test_entry_cuts_decide_as_the_decision(fill_cut):
    """``P >= entry_cuts(P)`` is the decision (the fill included), on random probabilities;
    entries the fill does not touch keep their class's cut."""
    from sblr.decision import Decision

    rng = np.random.default_rng(0)
    P = rng.random((200, 6)) ** 3
    d = Decision("cut", rng.uniform(0.3, 0.7, 6), rule="f1", fill_cut=fill_cut)
    cuts = d.entry_cuts(P)
    np.testing.assert_array_equal((P >= cuts).astype(int), d.decide(P))
    untouched = d.decide(P) == decision.decide(P, d.cuts)
    np.testing.assert_array_equal(cuts[untouched], np.broadcast_to(d.cuts, P.shape)[untouched])


def _best_f1_cut_by_every_boundary(p, y):
    """The F1-best cut tried at every boundary between distinct values (the rule as first
    written: every top-j set that does not split a tie, the fewest predicted among ties)."""
    order = np.argsort(-p, kind="stable")
    s, t = p[order], y[order]
    n = s.size
    js = np.r_[0, np.flatnonzero(s[:-1] > s[1:]) + 1, n]
    cuts = np.r_[np.nextafter(s[0], np.inf), 0.5 * (s[js[1:-1] - 1] + s[js[1:-1]]), s[-1]]
    tp = np.r_[0, np.cumsum(t)][js]
    f1 = np.where(js + t.sum() > 0, 2.0 * tp / (js + t.sum()), 0.0)
    return float(cuts[int(np.argmax(f1))])


@pytest.mark.parametrize("seed", range(6))
def test_the_f1_cut_tried_at_positives_only_is_the_cut_of_every_boundary(seed):
    """The memory-light search (positives' values only) finds the same cut as trying every
    boundary, with ties, coarse values and rare positives."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(400) ** 2, [1, 2, 3, 6, 6, 6][seed])
    y = (rng.random(400) < [0.01, 0.05, 0.2, 0.5, 0.02, 0.0][seed]).astype(int)
    assert decision._best_f1_cut(p, y) == _best_f1_cut_by_every_boundary(p, y)
