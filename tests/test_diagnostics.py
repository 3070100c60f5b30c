"""Identifiability diagnostics of SBLR's β (sblr.diagnostics) against independent oracles."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from sblr import SBLRClassifier, SimilarityFeaturizer, SparseSBLRClassifier
from sblr.diagnostics import CONDITION_WARNING, evidence_diagnostics
from sblr.samples import load_sample


def _fitted(F, Y, model=None):
    """A model fitted on given evidence (a featurizer supplies the labels)."""
    featurizer = SimilarityFeaturizer(gamma=1.0).fit(np.zeros((len(Y), 1)), Y)
    model = model or SBLRClassifier()
    return model.fit_from_evidence(featurizer, F)


def test_vif_equals_one_over_one_minus_r2_of_each_column():
    ds = load_sample("planted")
    model = SBLRClassifier(gamma=1.0).fit(ds.X, ds.y)
    F = model.featurizer_.training_evidence()
    diag = evidence_diagnostics(model, F)
    for t in range(F.shape[1]):
        others = np.delete(F, t, axis=1)
        r2 = LinearRegression().fit(others, F[:, t]).score(others, F[:, t])
        assert diag.vif[t] == pytest.approx(1 / (1 - r2), rel=1e-6)
    Z = (F - F.mean(0)) / F.std(0)
    assert diag.condition_number == pytest.approx(np.linalg.cond(Z), rel=1e-6)


def test_duplicated_evidence_is_collinear_and_unreliable():
    rng = np.random.default_rng(0)
    n = 300
    Y = (rng.random((n, 3)) < 0.4).astype(int)
    F = rng.random((n, 3))
    F[:, 2] = 0.5 * F[:, 0] + 0.5 * F[:, 1]  # class 2's evidence adds nothing new
    diag = evidence_diagnostics(_fitted(F, Y), F)
    assert np.isinf(diag.condition_number) or diag.condition_number > CONDITION_WARNING
    assert np.isinf(diag.vif).all()
    assert diag.unreliable
    assert "collinear" in " ".join(diag.sentences(["a", "b", "c"]))


def test_independent_evidence_is_fine():
    rng = np.random.default_rng(1)
    n = 400
    F = rng.random((n, 3))
    Y = (rng.random((n, 3)) < 0.5).astype(int)  # labels unrelated: nothing is separated
    diag = evidence_diagnostics(_fitted(F, Y), F)
    assert diag.vif == pytest.approx(np.ones(3), abs=0.1)
    assert not diag.separated.any() and not diag.unreliable
    assert diag.sentences(["a", "b", "c"]) == []


def test_a_class_separated_by_its_evidence_is_reported():
    rng = np.random.default_rng(2)
    n = 200
    F = rng.random((n, 2))
    Y = np.c_[F[:, 0] > 0.5, rng.random(n) < 0.5].astype(int)  # class 0: a threshold on f0
    sblr = _fitted(F, Y)
    diag = evidence_diagnostics(sblr, F)
    assert diag.separated.tolist() == [True, False]
    assert np.abs(sblr.coef_[0]).max() > 50  # the ridge, not the data, sets its size
    sentences = " ".join(diag.sentences(["edge", "coin"]))
    assert "separated" in sentences and "edge" in sentences and "coin" not in sentences
    sparse = _fitted(F, Y, SparseSBLRClassifier(lam=0.05))
    assert np.abs(sparse.coef_[0]).max() < np.abs(sblr.coef_[0]).max()


def test_findings_name_a_few_classes_and_count_the_rest():
    """174 labels: the warning was one paragraph of 16 names; each finding names at most 4
    classes (the worst VIF first) and says how many more."""
    from sblr.diagnostics import EvidenceDiagnostics

    vif = np.linspace(11, 50, 20)
    diag = EvidenceDiagnostics(5e3, vif, np.ones(20, dtype=bool))
    names = [f"class_{i:02d}" for i in range(20)]
    collinear, separated = diag.sentences(names)[1:]
    assert collinear.count("class_") == 4 and "class_19 (50)" in collinear
    assert "and 16 more" in collinear and "and 16 more" in separated


def test_sparse_conditioning_is_the_condition_number_of_the_columns_each_class_keeps():
    """Issue #46, item 7. Oracle: numpy's condition number (an SVD) of the standardized
    evidence columns a row of β keeps, class by class; a pair of near-duplicate columns
    kept together is collinear, either of them alone is not."""
    from sblr.diagnostics import CONDITION_WARNING, sparse_conditioning

    rng = np.random.default_rng(1)
    F = rng.normal(size=(80, 6))
    F[:, 1] = F[:, 0] + 1e-5 * rng.normal(size=80)  # class 1's evidence ~ class 0's
    B = np.zeros((6, 6))
    B[0, [0, 1, 2]] = 1.0  # keeps the pair
    B[1, [1, 3]] = -2.0
    B[2, [2, 3, 4, 5]] = 0.5
    B[3, 3] = 1.0  # one column
    result = sparse_conditioning(B, F)
    Z = (F - F.mean(axis=0)) / F.std(axis=0)
    for k in range(6):
        kept = np.flatnonzero(B[k])
        expected = np.linalg.cond(Z[:, kept]) if kept.size > 1 else 1.0
        # through the Gram matrix, whose condition number is the square: ~cond² · 1e-16 off
        assert result.condition[k] == pytest.approx(expected, rel=1e-4), k
    assert result.n_kept.tolist() == [3, 2, 4, 1, 0, 0]
    assert result.unreadable.tolist() == [0] and result.condition[0] > CONDITION_WARNING
    assert "1 of 6 classes keep collinear evidence" in result.sentence("1e-4")
