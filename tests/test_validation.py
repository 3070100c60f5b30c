"""Parameter validation of the public functions (sblr._validation, scikit-learn's style).

Every public function of the modules below is decorated with
:func:`sblr._validation.validate_params`, declaring a constraint for every parameter, or is
listed in EXEMPT with its reason: a new public function without validation fails
``test_every_public_function_is_validated_or_exempt``.  One bad parameter per decorated
function raises InvalidParameterError naming the parameter and the function.
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pandas as pd
import pytest

from sblr import playground as _playground
from sblr._validation import InvalidParameterError

MODULES = (
    "sblr.metrics",
    "sblr.similarity",
    "sblr.interpret",
    "sblr.evaluation",
    "sblr.attribution",
    "sblr.tuning",
    "sblr.diagnostics",
    "sblr.stats",
    "sblr.stability",
    "sblr.logistic",
    "sblr.playground",
)

EXEMPT = {
    "sblr.similarity.exp_in_place": (
        "the exponential of one 128-row tile of the kernel matrix, called thousands of times "
        "per evidence computation; class_evidence and rbf_evidence_from_sq_distances, which "
        "call it, are validated"
    ),
    "sblr.similarity.featurizer_for": (
        "builds a SimilarityFeaturizer from an estimator's attributes and **overrides; the "
        "featurizer validates every parameter in fit"
    ),
    "sblr.interpret.frequent_classes": (
        "checks n and Y by hand (DataError), as starting_class beside it does"
    ),
    "sblr.interpret.starting_class": (
        "every dashboard page calls it at start-up (the sidebar's default class), before "
        "scikit-learn is imported (tests/test_startup.py); it checks Y by hand"
    ),
    "sblr.stats.method_label": "takes any method name (an unknown one prints as str(name))",
    # the logistic layer's parameters are checked together with its data in one place
    # (logistic._checked_problem: λ and ridge finite and >= 0 beside the shapes and the 0/1
    # targets, which validate_params cannot express); a decorator would be a second check
    **{
        f"sblr.logistic.{name}": "checked with its data by logistic._checked_problem"
        for name in ("fit_logistic", "fit_logistic_layer", "solve_layer", "kkt_violation")
    },
    "sblr.logistic.lambda_max": "two arrays: a shape or finiteness is not a parameter error",
    "sblr.logistic.base_rate_logit": "called once per class by the layer, on checked data",
    "sblr.logistic.constant_intercept": "called once per class by the layer, on checked data",
    "sblr.logistic.prepare_compiled_solver": "takes no parameters",
    "sblr.logistic.compiled_solver_ready": "takes no parameters",
    **{
        f"sblr.playground.{name}": (
            "takes a Board, which checks itself (DataError naming what is wrong), link text, "
            "which decode_board checks field by field, or the page's state holding a Board"
        )
        for name in _playground.__all__
        if inspect.isfunction(getattr(_playground, name))
    },
}


def _public_functions():
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            # a package's (sblr.interpret) are its modules' functions, by its public path
            if not inspect.isfunction(obj) or attr.startswith("_"):
                continue
            if obj.__module__ == name or obj.__module__.startswith(name + "."):
                yield f"{name}.{attr}", obj


PUBLIC = dict(_public_functions())


def _is_validated(func):
    return callable(getattr(func, "parameter_constraints", None))


def test_every_public_function_is_validated_or_exempt():
    missing = sorted(n for n, f in PUBLIC.items() if not _is_validated(f) and n not in EXEMPT)
    assert not missing, f"public functions without @validate_params and not exempt: {missing}"
    stale = sorted(n for n in EXEMPT if n not in PUBLIC or _is_validated(PUBLIC[n]))
    assert not stale, f"exempt but gone or validated: {stale}"


@pytest.mark.parametrize("name", sorted(n for n, f in PUBLIC.items() if _is_validated(f)))
def test_every_parameter_has_a_constraint(name):
    func = PUBLIC[name]
    params = {
        p.name
        for p in inspect.signature(func).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    assert set(func.parameter_constraints()) == params, name


Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
S = np.array([[0.9, 0.2, 0.4], [0.3, 0.8, 0.1], [0.6, 0.7, 0.2], [0.1, 0.2, 0.9]])
y = np.array([0, 1, 2, 1])
RESULTS = pd.DataFrame(
    {"dataset": "d", "method": "sml", "fold": [0, 1], "metric": "accuracy", "value": [0.9, 1]}
)

#: (function, args, kwargs, the parameter made bad): one bad parameter per call, the others
#: valid, so the error must name that one.
CASES = [
    ("sblr.metrics.hamming_loss", (Y, 3), {}, "Y_pred"),
    ("sblr.metrics.subset_accuracy", (None, Y), {}, "Y_true"),
    ("sblr.metrics.micro_f1", (Y, Y), {"zero_division": 0.5}, "zero_division"),
    ("sblr.metrics.macro_f1", (Y, Y), {"zero_division": "1"}, "zero_division"),
    ("sblr.metrics.ranking_loss", (Y, 0.5), {}, "scores"),
    ("sblr.metrics.one_error", (Y, None), {}, "scores"),
    ("sblr.metrics.coverage", (1, S), {}, "Y_true"),
    ("sblr.metrics.coverage_floor", (Y, 2.0), {}, "ranking_loss_value"),
    ("sblr.metrics.average_precision", (Y, "S"), {}, "scores"),
    ("sblr.metrics.accuracy", (y, 1), {}, "y_pred"),
    ("sblr.metrics.multiclass_macro_f1", (y, y), {"labels": 3}, "labels"),
    ("sblr.metrics.multilabel_report", (Y, Y, None), {}, "scores"),
    ("sblr.metrics.multiclass_report", (y, y), {"labels": "abc"}, "labels"),
    ("sblr.metrics.is_multilabel", (None,), {}, "y"),
    ("sblr.metrics.score", ("auc", y, y), {}, "metric"),
    ("sblr.metrics.is_better", ("accuracy", "a", 0.5), {}, "a"),
    ("sblr.metrics.best_index", ("accuracy", 0.5), {}, "values"),
    ("sblr.metrics.per_label_report", (Y, S), {"threshold": 1.5}, "threshold"),
    ("sblr.metrics.threshold_report", (Y, S), {"threshold": -0.1}, "threshold"),
    ("sblr.metrics.decision_counts", (Y, S), {"threshold": "0.5"}, "threshold"),
    ("sblr.metrics.macro_f1_seen", (Y, S), {"threshold": 1.5}, "threshold"),
    ("sblr.metrics.pr_curve", (Y[:, 0], None), {}, "p"),
    ("sblr.similarity.kernel_block", (S, S), {"kernel": "poly"}, "kernel"),
    ("sblr.similarity.class_evidence", (S, S, Y), {"leave_one_out": "yes"}, "leave_one_out"),
    ("sblr.similarity.make_feature_map", ("pca", 1.0, 10, 0), {}, "approx"),
    ("sblr.similarity.apply_feature_map", (None, S), {}, "feature_map"),
    ("sblr.similarity.approx_class_sums", ("phi", S, Y), {}, "feature_map"),
    (
        "sblr.similarity.approx_class_evidence",
        (S, None, S, Y),
        {},
        "feature_map",
    ),
    ("sblr.similarity.sq_distances", (S, 2.0), {}, "B"),
    ("sblr.similarity.rbf_evidence_from_sq_distances", (S, Y, -1.0), {}, "gamma"),
    ("sblr.similarity.normalize_evidence", (S, S), {"normalize": "max"}, "normalize"),
    ("sblr.similarity.with_total", (S,), {"normalize": "max"}, "normalize"),
    ("sblr.similarity.check_evidence", (None,), {}, "F"),
    ("sblr.similarity.label_indicator", (3,), {}, "y"),
    ("sblr.interpret.evidence_sd", (None,), {}, "F"),
    ("sblr.interpret.label_sets", (None, ["a"]), {}, "Y"),
    ("sblr.interpret.standardized_coef", (S,), {"sd": 1.0}, "sd"),
    ("sblr.interpret.top_classes", (S, 0), {}, "n"),
    ("sblr.interpret.cluster_order", (None,), {}, "coef"),
    ("sblr.interpret.cooccurrence", (Y,), {"classes": 3}, "classes"),
    ("sblr.interpret.class_affinity", (Y, None), {}, "F"),
    ("sblr.interpret.contribution_table", (None, Y, -1), {}, "k"),
    ("sblr.interpret.conditional_frequency", (), {"counts": 3}, "counts"),
    ("sblr.interpret.spearman", ([1, 2], None), {}, "y"),
    ("sblr.interpret.check_claim", (S[0], S[1]), {"alpha": 2.0}, "alpha"),
    ("sblr.interpret.rank_agreement_path", (S, S), {"average": "no"}, "average"),
    ("sblr.interpret.entry_lambdas", (None, S), {}, "lams"),
    ("sblr.interpret.predicted_share", (object(), S, 0), {}, "model"),
    ("sblr.interpret.decision_line", (S,), {"k": 0, "t1": 0, "t2": 1, "F": S, "n": 1}, "n"),
    ("sblr.interpret.select_rows", (Y, Y), {"which": "wrong"}, "which"),
    ("sblr.interpret.all_alike_reason", (object(), S, 0, True), {}, "model"),
    ("sblr.interpret.family_threshold", (0, 3), {}, "n_rows"),
    ("sblr.interpret.readings_at", (S, 0.2), {}, "zeros"),
    ("sblr.interpret.zero_readings", (S[0], S, Y, 0), {"threshold": -1.0}, "threshold"),
    ("sblr.interpret.sparsity_summary", (S,), {"tol": -1.0}, "tol"),
    ("sblr.interpret.instance_contributions", (None,), {"evidence": 1.0}, "evidence"),
    ("sblr.evaluation.validation_split", (S, y, 1.5, 0), {}, "val_size"),
    ("sblr.evaluation.make_splits", (y,), {"scheme": "loo"}, "scheme"),
    ("sblr.evaluation.fold_distances", (S, y, [0], [1]), {"max_mb": -1}, "max_mb"),
    ("sblr.evaluation.fold_evidence", (None, S, y, []), {}, "estimator"),
    ("sblr.evaluation.fit_fold", ("SBLR", S, y, ([0], [1])), {}, "estimator"),
    ("sblr.evaluation.score_fold", (None, S, y, ([0], [1])), {}, "estimator"),
    ("sblr.evaluation.fold_probabilities", (None, S, y, ([0], [1])), {}, "estimator"),
    ("sblr.evaluation.summarize", (None, [0, 1]), {}, "fold_scores"),
    ("sblr.evaluation.score_test", (None, S, y), {}, "estimator"),
    ("sblr.evaluation.evaluate_folds", (None, S, y, []), {}, "estimator"),
    ("sblr.evaluation.evaluate", (None, S, y), {}, "estimator"),
    ("sblr.attribution.feature_attributions", (None, S[0], -1), {}, "k"),
    ("sblr.attribution.nearest_contrast", (None, S[0], 0), {"member": "yes"}, "member"),
    ("sblr.attribution.class_feature_importance", (None, S, 0), {"n_rows": 0}, "n_rows"),
    ("sblr.attribution.feature_inputs", (None,), {}, "X"),
    ("sblr.tuning.default_metric", ("yes",), {}, "multilabel"),
    ("sblr.tuning.coefficient_path", (None, None, S, [1.0]), {}, "featurizer"),
    ("sblr.tuning.tune", (None, S, y), {"rule": "worst"}, "rule"),
    ("sblr.diagnostics.evidence_diagnostics", (None, 1.0), {}, "F"),
    ("sblr.diagnostics.sparse_conditioning", (None, S), {}, "coef"),
    ("sblr.stats.mean_std_table", (RESULTS,), {"decimals": -1}, "decimals"),
    ("sblr.stats.one_dataset_reading", (RESULTS, None), {}, "metrics"),
    ("sblr.stats.mean_table", (S, "accuracy"), {}, "results"),
    ("sblr.stats.rank_table", (RESULTS, "auc"), {}, "metric"),
    ("sblr.stats.metric_ranks", (RESULTS, ["accuracy"]), {"labels": 1}, "labels"),
    ("sblr.stats.q_alpha", (1,), {}, "k"),
    ("sblr.stats.critical_difference", (4, 0), {}, "n"),
    ("sblr.stats.nemenyi_pvalues", (S,), {}, "values"),
    ("sblr.stats.iman_davenport", (-1.0, 14, 4), {}, "chi2"),
    ("sblr.stats.friedman_nemenyi", (RESULTS, "accuracy"), {"alpha": 0}, "alpha"),
    ("sblr.stats.cliques", (pd.Series([1.0, 2.0]), -1.0), {}, "cd"),
    ("sblr.stats.cd_diagram", (pd.Series([1.0, 2.0]), 1.0), {"labels": "x"}, "labels"),
    ("sblr.stats.markdown_table", (S,), {}, "df"),
    ("sblr.stats.leaders", ("x",), {}, "values"),
    ("sblr.stats.fold_forecast", ([], {}), {}, "timed"),
    ("sblr.stats.paper_tables_markdown", (RESULTS,), {"alpha": 1.0}, "alpha"),
    ("sblr.stability.bootstrap_coefficients", (None, S), {"n_resamples": 1}, "n_resamples"),
]


def test_every_validated_function_has_a_bad_parameter_case():
    validated = {n for n, f in PUBLIC.items() if _is_validated(f)}
    assert validated == {case[0] for case in CASES}


@pytest.mark.parametrize("name, args, kwargs, param", CASES, ids=[c[0] for c in CASES])
def test_a_bad_parameter_is_named(name, args, kwargs, param):
    func = PUBLIC[name]
    short = name.rpartition(".")[2]
    with pytest.raises(InvalidParameterError, match=f"'{param}' parameter of {short} must be"):
        func(*args, **kwargs)


def test_invalid_parameter_error_is_a_value_and_a_type_error():
    """Code that caught the hand checks' ValueError or TypeError still catches it."""
    assert issubclass(InvalidParameterError, ValueError)
    assert issubclass(InvalidParameterError, TypeError)
