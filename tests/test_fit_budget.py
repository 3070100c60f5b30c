"""The budget of a fit done without asking (issue #47 item 4: SBLR on 983 labels takes hours).

``sblr.registry.Method.layer_plan`` decides from the data's shape whether a model's layer is
fitted without asking ("auto"), offered behind a button ("ask") or not offered ("refuse"),
against ``LAYER_BUDGET`` and ``LAYER_LIMIT``; the views of Coefficients, Class contributions
and Explain show SBLR beside SparseSBLR only where it is "auto" or already fitted.  The oracle
is the cost model written out here (8·n·(m+1)²·m + 4e7·m multiply-adds for SBLR's layer) and
the fits store itself: a view past the budget must leave no SBLR fit behind.  A synthetic
60-label set (120 rows) with the budget lowered between SparseSBLR's and SBLR's costs stands
in for delicious: never 983 labels here.
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import sblr.registry as registry
from pages._shared import cache
from pages._shared.questions import RowQuestion, Spec
from pages._shared.state import Settings
from pages._shared.views import coefficients as coef_views
from pages._shared.views import contributions as contrib_views
from pages._shared.views import explain as explain_views
from sblr import load_dataset, plots
from sblr.registry import LR_TUNED, SBLR, SML, SPARSE_SBLR

N_ROWS, N_LABELS = 120, 60


def sblr_cost(n, m):
    """SBLR's layer, written out: Newton steps on all m + 1 columns for each of m classes,
    8 of them, and 4e7 a class of solver overhead."""
    return 8.0 * n * (m + 1) ** 2 * m + 4e7 * m


@pytest.fixture(scope="module")
def many():
    """120 rows, 6 features, 60 labels driven by the features (each row 2-6 labels)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ROWS, 6))
    W = rng.normal(size=(6, N_LABELS))
    scores = X @ W + rng.normal(size=(N_ROWS, N_LABELS))
    Y = (scores > np.quantile(scores, 0.93, axis=1, keepdims=True)).astype(int)
    names = [f"f{j}" for j in range(6)] + [f"tag<{k:02d}>" for k in range(N_LABELS)]
    lines = [",".join(names)] + [
        ",".join([*(f"{v:.4f}" for v in x), *(str(v) for v in y)])
        for x, y in zip(X, Y, strict=True)
    ]
    data = ("\n".join(lines) + "\n").encode()
    return load_dataset(data, name="many.csv", target=names[6:])


@pytest.fixture
def between(monkeypatch, many):
    """The budget between SparseSBLR's cost and SBLR's on ``many``: SBLR offered, not fitted."""
    n, m = many.n_samples, many.n_classes
    budget = (SPARSE_SBLR.layer_cost(n, m) + SBLR.layer_cost(n, m)) / 2
    monkeypatch.setattr(registry, "LAYER_BUDGET", budget)
    return budget


def settings(gamma, model=SPARSE_SBLR.label, k=0):
    return Settings(model=model, gamma=gamma, lam=1e-3, k=k)


# ----------------------------------------------------------------------------- the rule
def test_the_layer_plan_follows_the_written_out_cost_and_the_budget(monkeypatch):
    """delicious' shape (12,920 × 983) is refused by default; a budget or limit moved across
    a shape's cost moves its plan, and models without a layer are always fitted."""
    assert SBLR.layer_cost(12920, 983) == pytest.approx(sblr_cost(12920, 983))
    assert SBLR.layer_plan(12920, 983) == "refuse"
    assert SPARSE_SBLR.layer_plan(12920, 983) == "auto"
    cost = sblr_cost(4500, 374)  # Corel5k's
    monkeypatch.setattr(registry, "LAYER_BUDGET", cost)
    assert SBLR.layer_plan(4500, 374) == "auto"
    monkeypatch.setattr(registry, "LAYER_BUDGET", cost * 0.999)
    assert SBLR.layer_plan(4500, 374) == "ask"
    monkeypatch.setattr(registry, "LAYER_LIMIT", cost * 0.999)
    assert SBLR.layer_plan(4500, 374) == "refuse"
    monkeypatch.setattr(registry, "LAYER_BUDGET", 0.0)
    assert SML.layer_plan(10**6, 10**4) == "auto"
    assert SBLR.layer_seconds(4500, 374) == pytest.approx(cost / registry.LAYER_RATE)


def test_the_command_line_notes_the_cost_past_the_same_budget(capsys, monkeypatch):
    """One budget: the command line's note on SBLR's cost appears exactly where the dashboard
    stops fitting it without asking."""
    from types import SimpleNamespace

    import sblr.cli._commands as commands

    shape = SimpleNamespace(n_samples=500, class_names=[f"c{k}" for k in range(50)])
    monkeypatch.setattr(registry, "LAYER_BUDGET", sblr_cost(500, 50))
    commands._cost_note(SBLR.key, shape)
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(registry, "LAYER_BUDGET", sblr_cost(500, 50) * 0.999)
    commands._cost_note(SBLR.key, shape)
    assert f"about {plots_free_duration(500, 50)} here" in capsys.readouterr().out


def plots_free_duration(n, m):
    from sblr.display import duration

    return duration(sblr_cost(n, m) / registry.LAYER_RATE)


@pytest.mark.slow  # a second or more: the full suite and CI run it
# ----------------------------------------------------------------------------- the views
def test_below_the_budget_coefficients_fit_and_show_both_models(many):
    view = coef_views.coefficients(many, settings(0.5), standardized=True)
    assert view.beside.plan == "auto" and view.beside.shown
    assert list(view.raw) == [view.sparse_name, SBLR.label]
    fitted = cache.stored_fit(many, Spec.of(SBLR, 0.5))
    np.testing.assert_array_equal(view.raw[SBLR.label], fitted.coef_)


def test_past_the_budget_coefficients_show_sparse_sblr_alone_and_fit_nothing_more(many, between):
    view = coef_views.coefficients(many, settings(0.6), standardized=True)
    assert list(view.raw) == [view.sparse_name]
    assert cache.stored_fit(many, Spec.of(SBLR, 0.6)) is None  # not fitted, not even quietly
    plan = view.beside
    assert plan.plan == "ask" and plan.offered and not plan.shown
    sentence = plan.sentence(SPARSE_SBLR.label)
    assert sentence.startswith("**SBLR is not fitted automatically here**")
    seconds = sblr_cost(N_ROWS, N_LABELS) / registry.LAYER_RATE
    assert f"about {seconds:.1f} s on these 120 rows" in sentence
    assert plan.button == f"Fit SBLR (about {seconds:.1f} s)"
    assert view.models == SPARSE_SBLR.label
    assert set(view.table.index.get_level_values("model")) == {view.sparse_name}
    # the slider's ranking without SBLR's tie-break, the sidebar's class among them
    top = coef_views.ranked(many, view, plots.MAX_TICK_LABELS, 7)
    assert 7 in top and len(top) == plots.MAX_TICK_LABELS


@pytest.mark.slow  # a second or two: the full suite and CI run it
def test_a_fit_on_request_is_shown_to_every_later_view(many, between):
    spec = Spec.of(SBLR, 0.7)
    fitted = cache.cached_fit(many, spec, long=True)
    view = coef_views.coefficients(many, settings(0.7), standardized=False)
    assert view.beside.stored and view.beside.shown and not view.beside.offered
    np.testing.assert_array_equal(view.raw[SBLR.label], fitted.coef_)


def test_hours_are_not_offered(many, between, monkeypatch):
    monkeypatch.setattr(registry, "LAYER_LIMIT", between)
    plan = cache.fit_plan(many, Spec.of(SBLR, 0.8))
    assert plan.plan == "refuse" and not plan.offered and not plan.shown
    assert "too long for the dashboard" in plan.sentence(SPARSE_SBLR.label)
    assert "sblr fit --method sblr" in plan.sentence(SPARSE_SBLR.label)
    before = plan.before(SPARSE_SBLR.label, fits=7.0)
    assert "the sidebar's model, is not fitted here" in before and "7 times" in before


@pytest.mark.slow  # a second or two: the full suite and CI run it
def test_contributions_past_the_budget_test_the_claim_for_sparse_sblr_alone(many, between):
    view = contrib_views.contributions(many, settings(0.6, k=3), standardized=True)
    assert {v.label.split(":")[0] for v in view.verdicts} == {SPARSE_SBLR.label}
    assert not view.sblr_unreliable and view.beside.offered
    assert not any(c.startswith(SBLR.label + " ") for c in view.table.columns)
    assert any(c.startswith(SPARSE_SBLR.label + " ") for c in view.table.columns)
    assert len(view.table) == N_LABELS  # a table, one row a class: no figure
    assert cache.stored_fit(many, Spec.of(SBLR, 0.6)) is None


@pytest.mark.slow  # a second or two: the full suite and CI run it
def test_explain_past_the_budget_says_sblr_is_not_fitted_on_the_row(many, between):
    s = settings(0.6, k=3)
    rows = explain_views.rows(many, s)
    start = explain_views.baseline(rows, 0, "zero")
    x = np.asarray(many.X[0], dtype=float)
    original = rows.credits(rows.model, rows.name, RowQuestion(x, start.values, 3, 0))
    view = explain_views.explain(rows, 0, x, start, original)
    by_model = view.models.set_index("model")
    assert by_model.loc[SBLR.label, "predicted classes"].startswith("not fitted: about")
    assert np.isnan(by_model.loc[SBLR.label, view.score])
    assert list(view.top.columns) == ["rank", "SML (evidence)", "SparseSBLR (logit)"]
    assert cache.stored_fit(many, Spec.of(SBLR, 0.6)) is None


def test_no_default_beta_figure_has_more_than_n_by_n_cells(many, between):
    """At 60 classes the heatmaps show the slider's default top N (plots.MAX_TICK_LABELS)."""
    s = settings(0.6, k=3)
    view = coef_views.coefficients(many, s, standardized=True)
    n = plots.MAX_TICK_LABELS
    classes = view.ordered(coef_views.ranked(many, view, n, s.k))
    fig = coef_views.beta_figure(many, s, view, (True, False, classes))
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    assert heatmaps and all(np.asarray(t.z).size <= n * n for t in heatmaps)


# ----------------------------------------------------------------------------- the button
def _offer_page():
    import streamlit as st

    from pages._shared import cache
    from pages._shared.long_jobs import offer_fit

    plan = st.session_state["plan"]
    offer_fit(st.session_state["ds"], plan, "SparseSBLR", key="fit")
    st.write("stored" if cache.stored_fit(st.session_state["ds"], plan.spec) else "absent")


@pytest.mark.slow
def test_the_button_fits_the_model_and_the_page_runs_again_with_it(many, between):
    spec = Spec.of(SBLR, 0.9)
    at = AppTest.from_function(_offer_page, default_timeout=60)
    at.session_state["ds"] = many
    at.session_state["plan"] = cache.fit_plan(many, spec)
    at.run()
    assert at.info[0].value == cache.fit_plan(many, spec).sentence("SparseSBLR")
    assert at.button[0].label.startswith("Fit SBLR (about ") and at.markdown[-1].value == "absent"
    at.button[0].click().run()
    assert not at.exception and cache.stored_fit(many, spec) is not None


# ----------------------------------------------------------------------------- Compare
def shape(name, n, d, m):
    from types import SimpleNamespace

    return SimpleNamespace(
        name=name, n_samples=n, n_features=d, n_classes=m, task="multilabel", is_multilabel=True
    )


def test_compare_says_what_a_run_costs_and_starts_no_hours_of_work():
    """delicious' shape: SBLR's folds take longer than its layer fits alone (one a fold at
    least, 8·n·(m+1)²·m each: hours), so a run with it is refused, and the default choice
    leaves out what would take over an hour, saying so; emotions' shape runs as before."""
    from pages._shared.views import compare

    delicious = shape("delicious", 12920, 500, 983)
    n_train = 12920 * 2 / 3
    floor = 3 * sblr_cost(n_train, 983) / registry.LAYER_RATE
    assert compare.method_seconds(delicious, SBLR.key, 3, "quick") > floor > 3600
    text, refused = compare.run_forecast(delicious, [SPARSE_SBLR.key, SBLR.key], "quick", 3)
    assert refused and text.startswith("**Not run here: SBLR would take over an hour**")
    text, refused = compare.run_forecast(delicious, [SPARSE_SBLR.key, SML.key], "quick", 3)
    assert not refused and text.startswith("This run may take long: up to about ")
    choice = compare.default_choice(delicious)
    assert SBLR.key not in choice.methods and SPARSE_SBLR.key not in choice.methods
    assert "SparseSBLR, SBLR are left out of the default choice" in choice.note_for(choice.methods)
    assert choice.note_for([SBLR.key]) is None  # chosen again: the forecast speaks instead
    emotions = shape("emotions", 391, 72, 6)
    assert compare.run_forecast(
        emotions, compare.default_choice(emotions).methods, "paper", 10
    ) == (
        None,
        False,
    )


def test_compare_forecasts_the_tuned_logistic_regression_by_its_own_estimate():
    """The tuned LR (C and cut on inner folds) had no forecast in Compare (None): a run of it
    on delicious' shape, hours a fold, started unannounced. Its folds now cost what
    tuned_lr_seconds_estimate says of each training share, and past an hour it is refused."""
    from pages._shared.views import compare
    from sblr.baselines import tuned_lr_seconds_estimate

    delicious = shape("delicious", 12920, 500, 983)
    n_train = 12920 * 2 / 3
    expected = tuned_lr_seconds_estimate(n_train, 500, 983, fits=3)
    assert compare.method_seconds(delicious, LR_TUNED.key, 3, "quick") == expected > 3600
    text, refused = compare.run_forecast(delicious, [SPARSE_SBLR.key, LR_TUNED.key], "quick", 3)
    assert refused and f"{LR_TUNED.label} would take over an hour" in text
    emotions = shape("emotions", 391, 72, 6)
    assert compare.method_seconds(emotions, LR_TUNED.key, 10, "paper") < 60


def _guarded_page():
    import streamlit as st

    from pages._shared.long_jobs import before_fitting

    before_fitting(st.session_state["ds"], st.session_state["s"], "guard", fits=7.0)
    st.write("fitting now")


@pytest.mark.slow
def test_a_page_says_what_the_sidebars_model_costs_before_it_starts(many, between):
    """The sidebar's model past the budget: the page stops before fitting, says the cost and
    offers SparseSBLR (which becomes the sidebar's on the next run) and SBLR on a click."""
    at = AppTest.from_function(_guarded_page, default_timeout=60)
    at.session_state["ds"] = many
    at.session_state["s"] = settings(0.95, model=SBLR.label)
    at.run()
    plan = cache.fit_plan(many, Spec.of(SBLR, 0.95))
    assert at.warning[0].value == plan.before("SparseSBLR", 7.0)
    assert "fits it about 7 times" in at.warning[0].value
    assert [b.label for b in at.button] == ["Use SparseSBLR", "Go ahead with SBLR"]
    assert not any(m.value == "fitting now" for m in at.markdown)
    at.button[1].click().run()
    assert any(m.value == "fitting now" for m in at.markdown) and not at.warning
    assert cache.stored_fit(many, Spec.of(SBLR, 0.95)) is None  # the page fits it, not the guard
    at.session_state["_fits_agreed"] = set()
    at.run()
    at.button[0].click().run()
    assert at.session_state["_pending_view"]["model"] == "SparseSBLR"
