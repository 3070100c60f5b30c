"""scikit-learn's standard checks on every sblr estimator (imbalanced-learn's test_common style).

Two tests: ``parametrize_with_checks`` (slow: about half of the suite's test count) and
``check_param_validation``, which ``parametrize_with_checks`` does not run, once per class.
Every expected failure carries its reason.
"""

import pytest
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from sblr import SBLRClassifier, SimilarityFeaturizer, SMLClassifier, SparseSBLRClassifier
from sblr.baselines import (
    BRSVMClassifier,
    FrequencyClassifier,
    IBLRClassifier,
    MLkNNClassifier,
    OneVsRestLRClassifier,
)
from sblr.tuning import SBLRCV, SparseSBLRCV

ESTIMATORS = [
    SMLClassifier(),
    SBLRClassifier(),
    SparseSBLRClassifier(lam=1e-4),
    # the paper's decisions (SML's own rule, the cut 0.5) pass every check, the multi-output
    # one included
    SMLClassifier(threshold=None),
    SBLRClassifier(threshold=0.5),
    SparseSBLRClassifier(lam=1e-4, threshold=0.5),
    SimilarityFeaturizer(),
    SparseSBLRCV(gammas=(1.0, 0.1), lams=(1e-2, 1e-4)),
    SparseSBLRCV(gammas=(1.0, 0.1), lams=(1e-2, 1e-4), cv=3),
    SBLRCV(gammas=(1.0, 0.1)),
    # The baselines pass every check (MLkNN's decision_function is ``r - 0.5`` rather than
    # ``r`` because check_classifier_multioutput requires ``decision > 0 <=> predicted``).
    MLkNNClassifier(),
    IBLRClassifier(),
    BRSVMClassifier(),
    FrequencyClassifier(),
    OneVsRestLRClassifier(),
]

# Expected failures, each with its reason.
FEATURIZER_XFAIL = {
    "check_transformer_general": (
        "fit_transform returns leave-one-out evidence for the training rows (a row's own "
        "similarity is left out), which differs from fit().transform() by design, as "
        "scikit-learn's TargetEncoder does with cross fitting"
    ),
    "check_transformer_data_not_an_array": "same leave-one-out fit_transform as above",
}


YARDSTICK_REASON = (
    "the frequency yardstick ignores X by design, so it cannot reach the training accuracy "
    "the check asks of a classifier (scikit-learn exempts its DummyClassifier likewise)"
)
YARDSTICK_XFAIL = {
    "check_classifiers_train": YARDSTICK_REASON,
}


#: A fitted decision cut (the default threshold rule) is not predict_proba's 0.5.
CUT_XFAIL = {
    "check_classifier_multioutput": (
        "predict decides at the cut threshold_ fitted on out-of-fold probabilities (micro-F1), "
        "not at predict_proba >= 0.5, which the check asks; predict_proba stays the model's "
        "probability, as in scikit-learn's own TunedThresholdClassifierCV (decision_function "
        "is shifted by the cut's logit: positive exactly where predicted)"
    ),
}


#: Probabilities that round to 0 or 1 where the logits still rank the rows.
SATURATION_XFAIL = {
    "check_classifier_multioutput": (
        "on log rates (the default input) the check's separable multi-output data give logits "
        "beyond +-37, where predict_proba rounds to exactly 0 or 1 in float64 while "
        "decision_function (the logits) still orders the rows; the check compares the ranks "
        "of the two (on the paper's mean evidence the logits stayed smaller)"
    ),
}


def _expected_failed_checks(estimator):
    if isinstance(estimator, SimilarityFeaturizer):
        return FEATURIZER_XFAIL
    if isinstance(getattr(estimator, "threshold", None), str):
        return CUT_XFAIL
    if getattr(estimator, "normalize", None) == "log_rate":
        return SATURATION_XFAIL
    if isinstance(estimator, FrequencyClassifier):
        return YARDSTICK_XFAIL
    return {}


@pytest.mark.slow
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "estimator",
    [pytest.param(e, id=type(e).__name__) for e in {type(e): e for e in ESTIMATORS}.values()],
)
def test_parameter_constraints(estimator):
    # every parameter has a declared constraint (scikit-learn's check below raises on any
    # parameter whose invalid values are accepted, or whose valid ones are refused)
    params = set(estimator.get_params(deep=False))
    assert params == set(type(estimator)._parameter_constraints), type(estimator).__name__
    check_param_validation(type(estimator).__name__, estimator)
