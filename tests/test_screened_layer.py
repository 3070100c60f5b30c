"""The layer with an L1 term on many columns: working sets per class, checked on every column.

The oracle is the optimality (KKT) conditions written out by hand on ALL columns, and the
lockstep solver on every column (the screening turned off) as a second, independent route
to the same optimum.
"""

import time

import numpy as np
import pytest
from test_logistic import _kkt_by_hand  # the optimality conditions written out by hand

import sblr._compiled as compiled
import sblr.logistic as logistic

TOL = 1e-6  # the layer's default KKT tolerance


def _fit(monkeypatch, F, Y, lam, *, screened, ws_start=4, n_threads=1):
    monkeypatch.setattr(logistic, "_SCREEN_FROM", 0 if screened else 10**9)
    monkeypatch.setattr(logistic, "_WS_START", ws_start)
    return logistic.fit_logistic_layer(F, Y, lam, tol=TOL, n_threads=n_threads)


def _spy_sets(monkeypatch, delay=0.0):
    """Record the columns of every restricted solve, per target column (each taking at least
    ``delay`` seconds)."""
    seen = []
    kernel = compiled.restricted_newton

    def spy(FT, cols, y, *args):
        seen.append((y.copy(), cols.copy()))
        time.sleep(delay)
        return kernel(FT, cols, y, *args)

    monkeypatch.setattr(compiled, "restricted_newton", spy)
    return seen


@pytest.mark.slow  # 20 s
def test_screened_fit_equals_the_full_fit_and_meets_kkt_on_every_column(monkeypatch):
    """60 evidence-like columns (correlated, in a narrow band), 8 classes each planted on 3
    of them: the screened layer solves each class on a working set that starts at 4 columns
    and grows by the full check, and must end where the lockstep solver on all 60 ends.
    Coefficients agree to 1e-3 of the largest (as the lockstep solver's own working sets are
    held to, tests/test_logistic.py: both stop at a KKT violation of 1e-6, and along these
    nearly collinear columns the curvature is ~1e-3, so β may differ by ~1e-3 of its size
    at equal gradients), supports exactly."""
    rng = np.random.default_rng(3)
    n, m, q = 200, 60, 8
    F = rng.uniform(0.2, 0.4, size=(n, 1)) + 0.1 * rng.random((n, m))
    B = np.zeros((m, q))
    for k in range(q):
        B[rng.choice(m, 3, replace=False), k] = rng.normal(scale=60.0, size=3)
    Y = ((F - F.mean(0)) @ B + 0.5 * rng.standard_normal((n, q)) > 0).astype(float)
    lam = 2e-3
    seen = _spy_sets(monkeypatch)
    coef, b, _, kkt = _fit(monkeypatch, F, Y, lam, screened=True)
    assert seen and max(len(cols) for _, cols in seen) < m  # no solve saw every column
    full, b_full, _, _ = _fit(monkeypatch, F, Y, lam, screened=False)
    for k in range(q):
        assert _kkt_by_hand(F, Y[:, k], coef[k], b[k], lam) <= TOL
        assert kkt[k] == pytest.approx(_kkt_by_hand(F, Y[:, k], coef[k], b[k], lam), abs=1e-12)
    np.testing.assert_array_equal(coef != 0, full != 0)
    np.testing.assert_allclose(coef, full, atol=1e-3 * np.abs(full).max())
    np.testing.assert_allclose(b, b_full, atol=1e-3 * np.abs(full).max())
    # the classes are independent problems: threads change nothing, bit for bit
    threaded, b_threaded, _, _ = _fit(monkeypatch, F, Y, lam, screened=True, n_threads=2)
    np.testing.assert_array_equal(threaded, coef)
    np.testing.assert_array_equal(b_threaded, b)


@pytest.mark.slow  # 12 s
def test_screening_keeps_a_planted_column_the_first_working_set_left_out(monkeypatch):
    """Column 1 is pure noise that the class subtracts (y follows column 0 minus column 1):
    alone it is uncorrelated with y, so its gradient at β = 0 is about 0 and the first
    working set (the 2 largest gradients: column 0 and a distractor that copies the signal)
    leaves it out.  The check on every column must bring it in: its coefficient is the full
    fit's, strongly negative, not 0."""
    rng = np.random.default_rng(0)
    n = 400
    signal, noise = rng.normal(size=n), rng.normal(size=n)
    F = np.column_stack(
        [
            signal + noise,  # column 0: the signal, blurred by column 1
            noise,  # column 1: uncorrelated with y alone
            signal + 0.8 * rng.normal(size=n),  # column 2: a distractor
            rng.normal(size=(n, 5)),  # columns 3-7: nothing
        ]
    )
    Y = (3.0 * signal + 0.3 * rng.normal(size=n) > 0).astype(float)[:, None]
    lam = 1e-3
    cold = np.abs(F.T @ (Y[:, 0].mean() - Y[:, 0])) / n
    assert np.argsort(-cold)[:2].tolist() in ([0, 2], [2, 0])  # the plant holds
    seen = _spy_sets(monkeypatch)
    coef, b, _, _ = _fit(monkeypatch, F, Y, lam, screened=True, ws_start=2)
    assert 1 not in seen[0][1]  # the first set left it out...
    assert coef[0, 1] < -1.0  # ...and the check brought it in
    assert _kkt_by_hand(F, Y[:, 0], coef[0], b[0], lam) <= TOL
    full, b_full, _, _ = _fit(monkeypatch, F, Y, lam, screened=False)
    np.testing.assert_allclose(coef, full, atol=1e-4 * np.abs(full).max())


@pytest.mark.parametrize("n_threads", [1, 2])
def test_a_stop_from_progress_ends_the_screened_layer_within_a_solve(monkeypatch, n_threads):
    """The layer's progress is called while the screened classes are solved, not only after a
    block of them: a stop raised from it propagates before the block is done (the count it
    saw never reached the classes), and the block's other classes are never started."""
    rng = np.random.default_rng(1)
    F = rng.random((120, 40))
    Y = (rng.random((120, 40)) < 0.3).astype(float)
    monkeypatch.setattr(logistic, "_SCREEN_FROM", 0)
    seen = _spy_sets(monkeypatch, delay=0.01)  # 40 solves of 10 ms: ticks of 50 ms between
    calls = []

    def progress(done, total):
        calls.append(done)
        if len(seen) >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        logistic.fit_logistic_layer(F, Y, 1e-3, progress=progress, n_threads=n_threads)
    assert max(calls) < 40
    assert len(seen) < 40
