"""Feature attributions by integrated gradients (sblr.attribution).

Oracles: the models' own public logits / evidence (completeness), an
independent integral of finite-difference gradients of those public outputs
(scipy's adaptive quadrature), exact Shapley values of the one-baseline game
computed by ``shap``'s KernelExplainer, and planted data whose class depends on
one feature.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import quad

from sblr import SBLRClassifier, SMLClassifier, SparseSBLRClassifier
from sblr.attribution import feature_attributions
from sblr.exceptions import DataError, UnsupportedModelError


def _data(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.array([1.0, 3.0, 0.5, 10.0][:d])  # unequal units
    y = (X[:, 0] + 0.2 * X[:, 1] > 0).astype(int)
    return X, y


def _multilabel(n=80, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 5, size=(n, 3))
    Y = np.column_stack([X[:, 0] > 1, X[:, 1] > 2, (X[:, 0] > 1) & (X[:, 2] < 1)]).astype(int)
    return X, Y


def _output(model, X, k):
    """The attributed quantity through the public API: logit, or SML's evidence."""
    X = np.atleast_2d(X)
    if isinstance(model, SMLClassifier):
        return model.evidence(X)[:, k]
    return model.logits(X)[:, k]


def _numeric_ig(model, x, baseline, k):
    """Integrated gradients by adaptive quadrature of central finite differences."""
    delta = x - baseline
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        if delta[i] == 0:
            out[i] = 0.0
            continue
        h = 1e-5 * max(1.0, abs(x[i]), abs(baseline[i]))

        def grad_i(alpha, i=i, h=h):
            p = baseline + alpha * delta
            up, down = p.copy(), p.copy()
            up[i] += h
            down[i] -= h
            return (_output(model, up, k)[0] - _output(model, down, k)[0]) / (2 * h)

        out[i] = delta[i] * quad(grad_i, 0.0, 1.0, epsabs=1e-11, epsrel=1e-10, limit=200)[0]
    return out


MODELS = {
    "SBLR": lambda g: SBLRClassifier(gamma=g),
    "SparseSBLR": lambda g: SparseSBLRClassifier(gamma=g, lam=1e-3),
    "SML": lambda g: SMLClassifier(gamma=g),
}


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("gamma", [0.05, 1.0, 20.0])
def test_completeness_against_the_public_outputs(name, gamma):
    X, Y = _multilabel()
    model = MODELS[name](gamma).fit(X, Y)
    for k in range(Y.shape[1]):
        fa = feature_attributions(model, X[5], k)
        expected = _output(model, X[5], k)[0] - _output(model, fa.baseline, k)[0]
        assert fa.output == pytest.approx(_output(model, X[5], k)[0], rel=1e-12, abs=1e-12)
        assert fa.output_baseline == pytest.approx(
            _output(model, fa.baseline, k)[0], rel=1e-12, abs=1e-12
        )
        assert abs(fa.attributions.sum() - expected) <= 1e-6 * max(1.0, abs(expected))
        assert abs(fa.gap) <= 1e-9 * max(1.0, np.abs(fa.attributions).sum())
        assert fa.quantity == ("evidence" if name == "SML" else "logit")


@pytest.mark.slow
@pytest.mark.parametrize("gamma", [0.1, 2.0, 30.0])
def test_each_attribution_equals_an_independent_integral_of_finite_differences(gamma):
    X, y = _data()
    model = SBLRClassifier(gamma=gamma).fit(X, y)
    x, baseline = X[7], X[30]
    fa = feature_attributions(model, x, 1, baseline=baseline)
    ref = _numeric_ig(model, x, baseline, 1)
    scale = max(1.0, np.abs(ref).max())
    np.testing.assert_allclose(fa.attributions, ref, rtol=0, atol=1e-6 * scale)
    np.testing.assert_array_equal(fa.baseline, baseline)


def test_sml_evidence_attribution_equals_the_independent_integral():
    X, Y = _multilabel()
    model = SMLClassifier(gamma=0.5).fit(X, Y)
    fa = feature_attributions(model, X[3], 2, baseline=X[40])
    np.testing.assert_allclose(
        fa.attributions, _numeric_ig(model, X[3], X[40], 2), rtol=0, atol=1e-7
    )


@pytest.mark.parametrize("normalize", ["mean", "log_rate"])
def test_leave_one_out_row_is_explained_as_in_training(normalize):
    """The path's output at x is the row's leave-one-out logit; at the baseline the
    evidence without the row (its class counts one fewer; for log rates the row counts as
    an average row, total / (n - 1), in its own classes and the total, worked by hand)."""
    X, Y = _multilabel()
    model = SparseSBLRClassifier(gamma=1.0, lam=1e-3, normalize=normalize).fit(X, Y)
    f = model.featurizer_
    F_train = f.training_evidence()
    row = 11
    Y_without = f.Y_fit_.copy()
    Y_without[row] = 0
    for k in range(Y.shape[1]):
        fa = feature_attributions(model, X[row], k, leave_out=row)
        loo = model.logits_from_evidence(F_train[row : row + 1])[0, k]
        sums = f.query_evidence(fa.baseline[None, :], Y=Y_without, normalize="sum")[0]
        if normalize == "mean":
            evidence = sums / Y_without.sum(axis=0)
        else:
            without_row = np.ones((len(Y_without), 1))
            without_row[row] = 0
            total = f.query_evidence(fa.baseline[None, :], Y=without_row, normalize="sum")[0, 0]
            average = total / (len(Y_without) - 1)  # the row counts as an average row
            rates = (sums + f.Y_fit_[row] * average) / (total + average)
            evidence = np.maximum(np.log(rates), -100.0)
        base = model.logits_from_evidence(evidence[None, :])[0, k]
        assert fa.output == pytest.approx(loo, abs=1e-12)
        assert fa.output_baseline == pytest.approx(base, abs=1e-12)
        assert fa.attributions.sum() == pytest.approx(loo - base, abs=1e-9)
    # leaving the row out changes the answer (its own similarity would count for it)
    with_row = feature_attributions(model, X[row], 0)
    without = feature_attributions(model, X[row], 0, leave_out=row)
    assert not np.allclose(with_row.attributions, without.attributions)


def test_sparse_training_data_gives_the_attributions_of_the_dense_data():
    X, y = _data(d=3)
    X[np.abs(X) < 0.5] = 0.0
    Xs = sp.csr_matrix(X)
    dense = SBLRClassifier(gamma=0.7).fit(X, y)
    sparse = SBLRClassifier(gamma=0.7).fit(Xs, y)
    baseline = np.zeros(3)
    a = feature_attributions(dense, X[4], 1, baseline=baseline)
    b = feature_attributions(sparse, X[4], 1, baseline=baseline)
    np.testing.assert_allclose(b.attributions, a.attributions, atol=1e-9)
    assert b.output == pytest.approx(sparse.logits(Xs[4])[0, 1], abs=1e-10)
    # default baseline of sparse data: the training mean, in the data's units
    np.testing.assert_allclose(
        feature_attributions(sparse, X[4], 1).baseline, X.mean(axis=0), atol=1e-12
    )


@pytest.mark.parametrize("sparse", [False, True])
def test_nystroem_evidence_completeness_and_leave_one_out_end(sparse):
    X, Y = _multilabel(n=120)
    X[X < 0] = 0.0  # zeros, for the sparse variant's sake
    data = sp.csr_matrix(X) if sparse else X
    model = SBLRClassifier(gamma=0.3, approx="nystroem", n_components=40).fit(data, Y)
    assert sp.issparse(model.featurizer_.feature_map_.components_) == sparse
    fa = feature_attributions(model, X[9], 0)
    expected = model.logits(data[9:10])[0, 0] - model.logits(fa.baseline[None, :])[0, 0]
    assert fa.attributions.sum() == pytest.approx(expected, abs=1e-9)
    loo = feature_attributions(model, X[9], 0, leave_out=9)
    F_train = model.featurizer_.training_evidence()
    assert loo.output == pytest.approx(model.logits_from_evidence(F_train[9:10])[0, 0], abs=1e-10)


def test_unchanged_feature_gets_exactly_zero_and_planted_feature_ranks_first():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(200, 5))
    y = (X[:, 2] > 0).astype(int)  # only feature 2 decides the class
    model = SparseSBLRClassifier(gamma=2.0, lam=1e-3).fit(X, y)
    baseline = X.mean(axis=0)
    x = baseline.copy()
    x[[0, 2, 4]] = [0.5, 0.9, -0.6]  # features 1 and 3 at their baseline values
    fa = feature_attributions(model, x, 1, baseline=baseline)
    assert fa.attributions[1] == 0.0 and fa.attributions[3] == 0.0
    assert int(fa.top(1)[0]) == 2 and fa.attributions[2] > 0
    # over many rows, the planted feature carries most of the attribution
    shares = [
        feature_attributions(model, X[i], 1).table().set_index("i").loc[2, "share"]
        for i in range(0, 200, 10)
    ]
    assert np.median(shares) > 0.5


@pytest.mark.slow
def test_ranking_agrees_with_shap_kernel_explainer():
    """Exact Shapley values of the one-baseline game (all 2^d coalitions) rank the
    features as integrated gradients do on a case with one strong, one weak and
    two irrelevant features."""
    shap = pytest.importorskip("shap", reason="shap is a test dependency (requirements-test.txt)")
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(150, 4))
    y = (1.0 * X[:, 0] + 0.35 * X[:, 1] > 0).astype(int)
    model = SBLRClassifier(gamma=1.0).fit(X, y)
    baseline = X.mean(axis=0)
    explainer = shap.KernelExplainer(lambda Z: model.logits(Z)[:, 1], baseline[None, :])
    agree = 0
    rows = [i for i in range(150) if abs(X[i, 0]) > 0.4][:12]
    for i in rows:
        fa = feature_attributions(model, X[i], 1, baseline=baseline)
        phi = np.asarray(explainer.shap_values(X[i : i + 1], nsamples=2**4, silent=True))[0]
        # the Shapley values are complete too: same total as integrated gradients
        assert phi.sum() == pytest.approx(fa.attributions.sum(), abs=1e-8)
        agree += list(fa.top(2)) == list(np.argsort(-np.abs(phi), kind="stable")[:2])
    assert agree >= len(rows) - 1


def test_table_is_sorted_and_shares_add_to_one():
    X, y = _data()
    model = SBLRClassifier(gamma=1.0).fit(X, y)
    fa = feature_attributions(model, X[0], 1, feature_names=["a", "b", "=c", "d"])
    t = fa.table()
    assert list(t.columns) == ["feature", "i", "value", "baseline", "attribution", "share"]
    assert (np.diff(t["attribution"].abs().to_numpy()) <= 0).all()
    assert t["share"].sum() == pytest.approx(1.0)
    assert set(t["feature"]) == {"a", "b", "=c", "d"}
    assert len(fa.table(2)) == 2


def test_bad_input_raises_typed_errors():
    X, y = _data()
    model = SBLRClassifier(gamma=1.0).fit(X, y)
    with pytest.raises(DataError, match="one value per feature"):
        feature_attributions(model, X[0, :3], 1)
    with pytest.raises(DataError, match="NaN or inf"):
        feature_attributions(model, np.r_[np.nan, X[0, 1:]], 1)
    with pytest.raises(DataError, match="class index"):
        feature_attributions(model, X[0], 5)
    with pytest.raises(DataError, match="training row"):
        feature_attributions(model, X[0], 1, leave_out=len(X))
    lap = SBLRClassifier(gamma=1.0, kernel="laplacian").fit(X, y)
    with pytest.raises(UnsupportedModelError, match="rbf kernel"):
        feature_attributions(lap, X[0], 1)
    rff = SBLRClassifier(gamma=1.0, approx="rff", n_components=20).fit(X, y)
    with pytest.raises(UnsupportedModelError, match="Nystroem"):
        feature_attributions(rff, X[0], 1)


def test_a_model_whose_logit_ignores_the_row_credits_nothing_and_lists_by_change():
    """SparseSBLR at a λ above every class's λ_max keeps no weight: the logit is the
    intercept for every row, every credit is exactly 0, and the features are listed by how
    much the row differs from the baseline (scaled)."""
    X, y = _data()
    model = SparseSBLRClassifier(gamma=1.0, lam=10.0).fit(X, y)
    assert not model.coef_.any()
    baseline = X[0].copy()
    baseline[3] += 0.9 * np.ptp(X[:, 3])  # the largest scaled change
    baseline[1] += 0.5 * np.ptp(X[:, 1])
    fa = feature_attributions(model, X[0], 1, baseline=baseline)
    assert not fa.attributions.any()
    assert fa.output == fa.output_baseline == pytest.approx(model.intercept_[1])
    assert list(fa.top(4)) == [3, 1, 0, 2]


def _windowed_ig(model, x, baseline, k, gamma, width=40.0):
    """Integrated gradients of the public logits for a path far longer than the kernel's
    width: central finite differences integrated by scipy's adaptive quadrature on windows
    around the points where the path passes nearest each training row (elsewhere every
    kernel value underflows).  Independent of the module's closed form."""
    f = model.featurizer_
    s_b, s_x = f.scale(baseline[None, :])[0], f.scale(x[None, :])[0]
    d = s_x - s_b
    Z = np.asarray(f.X_fit_)
    mu = np.clip(-((s_b - Z) @ d) / (d @ d), 0.0, 1.0)
    half = width / np.sqrt(gamma * (d @ d))
    windows = []
    for lo, hi in sorted((max(0.0, q - half), min(1.0, q + half)) for q in mu):
        if windows and lo <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(hi, windows[-1][1]))
        else:
            windows.append((lo, hi))
    X_fit_range = f.data_max_ - f.data_min_
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        h = 1e-7 * X_fit_range[i]

        def grad_i(alpha, i=i, h=h):
            p = baseline + alpha * (x - baseline)
            up, down = p.copy(), p.copy()
            up[i] += h
            down[i] -= h
            return (_output(model, up, k)[0] - _output(model, down, k)[0]) / (2 * h)

        integral = sum(
            quad(grad_i, lo, hi, epsabs=1e-12, epsrel=1e-10, limit=500)[0] for lo, hi in windows
        )
        out[i] = (x[i] - baseline[i]) * integral
    return out


@pytest.mark.slow
@pytest.mark.parametrize("value", [1e6, -3e5])
def test_a_value_far_outside_the_training_range_is_attributed_exactly_at_fixed_cost(value):
    """A what-if value of 1e6 at gamma = 100 asked the old quadrature for ~1e8 segments (722
    CPU-seconds on the server). The path integrals are now closed form: the cost does not
    grow with the value, and each credit equals an independent windowed integral of the
    public logits' finite-difference gradient."""
    X, y = _data(d=2)
    gamma = 100.0
    model = SBLRClassifier(gamma=gamma, normalize="mean").fit(X, y)  # a sum of Gaussians
    x = X[0].copy()
    x[0], x[1] = value, -value / 3
    baseline = X[5]
    fa = feature_attributions(model, x, 1, baseline=baseline)
    assert fa.n_nodes <= 16  # no node count that grows with ||x - x'||
    expected = _output(model, x, 1)[0] - _output(model, baseline, 1)[0]
    assert fa.attributions.sum() == pytest.approx(expected, rel=1e-9, abs=1e-12)
    ref = _windowed_ig(model, x, baseline, 1, gamma)
    np.testing.assert_allclose(fa.attributions, ref, rtol=1e-7, atol=1e-9)


def test_the_all_zero_baseline_far_from_the_data_is_bounded_too():
    """The "all-zero row" baseline on columns far from 0 made the same unbounded path."""
    X, y = _data(d=2)
    X = X + np.array([5e4, -2e5])
    model = SBLRClassifier(gamma=50.0, normalize="mean").fit(X, y)
    fa = feature_attributions(model, X[3], 1, baseline=np.zeros(2))
    assert fa.n_nodes <= 16
    expected = _output(model, X[3], 1)[0] - _output(model, np.zeros(2), 1)[0]
    assert fa.attributions.sum() == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("normalize", ["mean", "log_rate"])
@pytest.mark.parametrize("value", [1e20, 1e150])
def test_huge_values_give_numbers_not_a_numpy_size_error(value, normalize):
    """>= 1e20 raised numpy's "Maximum allowed size exceeded" from the node count; the row
    is now simply far from every training row: its logit is the intercept (the paper's
    mean evidence: all 0), or the intercept plus beta times the log base rates (log rates:
    with no evidence the training rates), at a bounded number of nodes."""
    X, y = _data(d=3)
    model = SparseSBLRClassifier(gamma=1.0, lam=1e-3, normalize=normalize).fit(X, y)
    x = X[0].copy()
    x[2] = value
    fa = feature_attributions(model, x, 1, baseline=X[1])
    assert np.isfinite(fa.attributions).all()
    rates = np.log(model.featurizer_.Y_fit_.mean(axis=0))
    far = 0.0 if normalize == "mean" else float(model.coef_[1] @ rates)
    assert fa.output == pytest.approx(model.intercept_[1] + far)
    assert fa.n_nodes <= 1024
    expected = fa.output - _output(model, X[1], 1)[0]
    if normalize == "log_rate":  # the logit jumps where the evidence underflows: gap says so
        assert fa.attributions.sum() - expected == pytest.approx(fa.gap)
        return
    assert fa.attributions.sum() == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_a_value_whose_path_length_overflows_is_refused_with_a_data_error():
    """>= 1e300 raised a bare OverflowError; it is a DataError naming the cause."""
    X, y = _data(d=2)
    model = SBLRClassifier(gamma=1.0).fit(X, y)
    x = X[0].copy()
    x[0] = 1e300
    with pytest.raises(DataError, match="far outside the training range"):
        feature_attributions(model, x, 1)


def test_class_feature_importance_finds_the_planted_feature_and_gives_constants_zero():
    """The global view: over the rows, the feature the class is planted on ranks first, a
    constant column gets exactly 0, and the mean |credit| of each feature is the mean of the
    per-row attributions' absolute values (computed here row by row through the public
    function, leave-one-out as in training)."""
    from sblr.attribution import class_feature_importance

    rng = np.random.default_rng(4)
    X = np.c_[rng.normal(size=(80, 3)), np.full(80, 2.5)]
    y = (X[:, 2] > 0.2).astype(int)
    model = SBLRClassifier(gamma=1.0).fit(X, y)
    table = class_feature_importance(model, X, 1, n_rows=25, feature_names=list("abcd"))
    assert table["feature"].iloc[0] == "c"
    assert table.set_index("feature").loc["d", "mean_abs"] == 0.0
    assert table["share"].sum() == pytest.approx(1.0)
    rows = np.sort(np.random.default_rng(0).choice(80, size=25, replace=False))
    by_hand = np.mean(
        [np.abs(feature_attributions(model, X[r], 1, leave_out=r).attributions) for r in rows],
        axis=0,
    )
    np.testing.assert_allclose(table.sort_values("i")["mean_abs"], by_hand, rtol=1e-12)
    assert table.attrs["n_rows"] == 25


def test_class_feature_importance_samples_fewer_rows_on_large_data(monkeypatch):
    """Its cost is bounded before it runs: on data past the budget fewer rows are
    attributed (never fewer than 20), and the table says how many."""
    import sblr.attribution as attribution

    monkeypatch.setattr(attribution, "_IMPORTANCE_BUDGET", 60 * 4 * 30)
    X, y = _data(n=60)
    model = SBLRClassifier(gamma=1.0).fit(X, y)
    table = attribution.class_feature_importance(model, X, 1, n_rows=200)
    assert table.attrs["n_rows"] == 30
    with pytest.raises(DataError, match="training rows"):
        attribution.class_feature_importance(model, X[:10], 1)
