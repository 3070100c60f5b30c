"""Bootstrap stability of β (sblr.stability): planted structure, an oracle refit, invariance."""

import copy

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sblr import SBLRClassifier, SMLClassifier, SparseSBLRClassifier
from sblr.samples import load_sample
from sblr.stability import bootstrap_coefficients

# A scikit-learn oracle that stopped short of its optimum would be compared as if it had
# reached it: its ConvergenceWarning fails the test instead.
pytestmark = pytest.mark.filterwarnings("error::sklearn.exceptions.ConvergenceWarning")

#: The documented setting at which the planted structure is stable (README, "Stability").
# on log rates (the default input) L1 leaves the noise label's evidence unused in the
# resamples from about 3e-2 at gamma = 1 (at 1e-2 one class in 14% of them)
PLANTED_GAMMA, PLANTED_LAM = 1.0, 3e-2


@pytest.fixture(scope="module")
def planted():
    return load_sample("planted")


@pytest.mark.slow
def test_planted_pairs_are_stable_and_noise_is_not_used(planted):
    model = SparseSBLRClassifier(gamma=PLANTED_GAMMA, lam=PLANTED_LAM).fit(planted.X, planted.y)
    result = bootstrap_coefficients(model, model.featurizer_.training_evidence(), n_resamples=50)
    S = result.selection_frequency
    i = planted.class_names.index
    # planted: thunder only with rain, birdsong with daylight, frost never with daylight
    assert S[i("thunder"), i("rain")] >= 0.9
    assert S[i("birdsong"), i("daylight")] >= 0.9
    assert S[i("daylight"), i("frost")] >= 0.9
    assert result.upper[i("daylight"), i("frost")] < 0  # frost's evidence lowers daylight
    assert result.lower[i("thunder"), i("rain")] > 0
    # the noise label's evidence is used for no other class
    others = [k for k in range(planted.n_classes) if k != i("noise")]
    assert S[others, i("noise")].max() <= 0.1
    assert "noise" in result.sentence(i("thunder"), i("noise"), planted.class_names)


def test_each_resample_is_the_maximum_likelihood_fit_on_its_rows(planted):
    """Oracle: SBLR on a resample equals scikit-learn's unpenalized logistic regression."""
    model = SBLRClassifier(gamma=1.0).fit(planted.X, planted.y)
    F = model.featurizer_.training_evidence()
    result = bootstrap_coefficients(model, F, n_resamples=3, random_state=7)
    rows = np.random.default_rng(7).integers(0, len(F), size=len(F))  # the first resample
    Y = planted.y[rows]
    Z = (F[rows] - F[rows].mean(0)) / F[rows].std(0)  # standardized: well conditioned
    k = planted.class_names.index("thunder")
    ref = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(Z, Y[:, k])
    np.testing.assert_allclose(result.std_coefs[0, k], ref.coef_[0], rtol=2e-3, atol=2e-3)
    assert np.all(result.selection_frequency == 1.0)  # SBLR never sets β to zero


@pytest.mark.slow
@pytest.mark.parametrize(
    "estimator", [SparseSBLRClassifier(gamma=1.0, lam=3e-4), SBLRClassifier(gamma=1.0)]
)
def test_each_resample_equals_the_plain_refit_on_its_rows(planted, estimator):
    """The bootstrap solves a resample on its distinct rows weighted by their counts, with
    exact Newton steps: resample by resample (the same seed draws the same rows) it must
    give what the plain refit of the layer on the resample's rows gives, within the solver's
    tolerance, and every resample's solution must meet it."""
    model = estimator.fit(planted.X, planted.y)
    F = model.featurizer_.training_evidence()
    Y = model.featurizer_.Y_fit_
    result = bootstrap_coefficients(model, F, n_resamples=3, random_state=11)
    rng = np.random.default_rng(11)
    for b in range(3):
        rows = rng.integers(0, len(F), size=len(F))
        plain = copy.copy(model).fit_layer(F[rows], Y[rows], warm_start=model)
        assert plain.kkt_violation_.max() <= model.tol
        # a KKT tolerance of 1e-6 leaves ~1e-6 of freedom per coefficient; on log rates β
        # are of order 1-10 (nats), so 1e-5 absolute
        np.testing.assert_allclose(result.coefs[b], plain.coef_, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(
            result.std_coefs[b], plain.coef_ * F[rows].std(axis=0), rtol=1e-5, atol=1e-5
        )
        assert np.array_equal(result.coefs[b] != 0, plain.coef_ != 0)


@pytest.mark.slow
def test_standardized_intervals_do_not_depend_on_the_evidence_scale(planted):
    model = SBLRClassifier(gamma=1.0).fit(planted.X, planted.y)
    F = model.featurizer_.training_evidence()
    scaled = F.copy()
    scaled[:, 2] *= 1000.0
    other = SBLRClassifier(gamma=1.0).fit_from_evidence(model.featurizer_, scaled)
    a = bootstrap_coefficients(model, F, n_resamples=5)
    b = bootstrap_coefficients(other, scaled, n_resamples=5)
    np.testing.assert_allclose(b.std_coefs, a.std_coefs, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(b.coefs[:, :, 2] * 1000.0, a.coefs[:, :, 2], rtol=1e-2, atol=1e-2)


def test_progress_and_refusals(planted):
    model = SparseSBLRClassifier(gamma=1.0, lam=1e-2).fit(planted.X, planted.y)
    F = model.featurizer_.training_evidence()
    seen = []
    bootstrap_coefficients(model, F, n_resamples=4, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    with pytest.raises(TypeError, match="SBLRClassifier"):
        bootstrap_coefficients(SMLClassifier().fit(planted.X, planted.y), F)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_coefficients(model, F, n_resamples=1)
    with pytest.raises(ValueError, match="shape"):
        bootstrap_coefficients(model, F[:10])
    # the model itself is left as it was
    before = model.coef_.copy()
    bootstrap_coefficients(model, F, n_resamples=2)
    np.testing.assert_array_equal(model.coef_, before)
