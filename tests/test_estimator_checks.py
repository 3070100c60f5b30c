"""scikit-learn's standard estimator checks on every sblr estimator."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sblr import SBLRClassifier, SimilarityFeaturizer, SMLClassifier, SparseSBLRClassifier
from sblr.tuning import SBLRCV, SparseSBLRCV

pytestmark = pytest.mark.slow

# Expected failures, each with its reason.
FEATURIZER_XFAIL = {
    "check_transformer_general": (
        "fit_transform returns leave-one-out evidence for the training rows (a row's own "
        "similarity is left out), which differs from fit().transform() by design, as "
        "scikit-learn's TargetEncoder does with cross fitting"
    ),
    "check_transformer_data_not_an_array": "same leave-one-out fit_transform as above",
}


def _expected_failed_checks(estimator):
    if isinstance(estimator, SimilarityFeaturizer):
        return FEATURIZER_XFAIL
    return {}


@parametrize_with_checks(
    [
        SMLClassifier(),
        SBLRClassifier(),
        SparseSBLRClassifier(lam=1e-4),
        SimilarityFeaturizer(),
        SparseSBLRCV(gammas=(1.0, 0.1), lams=(1e-2, 1e-4)),
        SparseSBLRCV(gammas=(1.0, 0.1), lams=(1e-2, 1e-4), cv=3),
        SBLRCV(gammas=(1.0, 0.1)),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
