"""The registry (sblr/registry.py): one entry per model and method, its traits checked against
the estimator it builds, and the names older links, results and code wrote still open."""

from __future__ import annotations

import pytest

from sblr.models import MODELS, SparseSBLRClassifier, fits_from_evidence, make_model
from sblr.registry import (
    BR_SVM,
    DASHBOARD_MODELS,
    REGISTRY,
    SBLR,
    SML,
    SPARSE_SBLR,
    Method,
    get,
    get_model,
)


def test_keys_and_labels_name_one_entry_each():
    keys = [m.key for m in REGISTRY.values()]
    labels = [m.label for m in REGISTRY.values()]
    assert list(REGISTRY) == keys
    assert len(set(keys)) == len(keys) and len(set(labels)) == len(labels)
    assert not set(keys) & set(labels)  # a name is a key or a label, never both
    for m in REGISTRY.values():
        assert get(m.key) is get(m.label) is get(m) is m


@pytest.mark.parametrize("entry", list(REGISTRY.values()), ids=lambda m: m.key)
def test_traits_are_what_the_estimator_is(entry: Method):
    """The traits are data, said once; the estimator agrees with them."""
    est = entry.build()
    params = est.get_params()
    assert set(entry.tuned) <= set(params)
    assert entry.takes_lam == ("lam" in params)
    assert entry.decides_by_cut == ("threshold" in params and entry.takes_sparse)
    assert entry.learns_beta == fits_from_evidence(est)
    assert entry.needs_compiled == (entry.learns_beta and "lam" in params)
    if isinstance(entry.factory, type):  # a class: its parameters are the entry's (not a
        for name, value in entry.fixed.items():  # pipeline's, named by its steps)
            assert params[name] == value


def test_the_dashboards_models_are_the_models():
    assert DASHBOARD_MODELS == (SML, SBLR, SPARSE_SBLR)
    assert MODELS == {m.label: m.factory for m in DASHBOARD_MODELS}
    assert get_model("sparse_sblr") is get_model("SparseSBLR") is SPARSE_SBLR
    for name in (BR_SVM.key, BR_SVM.label, "SVM", None, ["SBLR"]):
        with pytest.raises(ValueError, match="Unknown model"):
            get_model(name)
    with pytest.raises(ValueError, match="Unknown method 'SVM'"):
        get("SVM")


def test_old_names_still_open():
    """Links (``?model=SparseSBLR``), the dashboard's fits and ``make_model`` named a model by
    its label; the protocol's results by its key: either opens the same entry, and the
    dashboard's question names it by its label whichever it was given."""
    from pages._shared.questions import Spec

    a = Spec.of("SparseSBLR", 1.0, 1e-3)
    assert a == Spec.of("sparse_sblr", 1.0, 1e-3) == Spec.of(SPARSE_SBLR, 1.0, 1e-3)
    assert a.model == "SparseSBLR" and a.l1 and a.learns_beta
    assert Spec.of("SBLR", 1.0, 1e-3) == Spec(SBLR.label, 1.0, None)  # no λ: it takes none
    assert not Spec.of("sml", "scale").learns_beta
    assert isinstance(make_model("SparseSBLR", lam=0.1), SparseSBLRClassifier)
    assert make_model("sparse_sblr", lam=0.1).lam == 0.1


@pytest.mark.slow
def test_a_link_may_name_the_model_by_its_label_or_its_key():
    from apptest_helpers import start

    at = start({"model": "sparse_sblr"})
    assert at.session_state["model"] == SPARSE_SBLR.label
    assert not at.exception
    at = start({"model": "SBLR"})
    assert at.session_state["model"] == SBLR.label
    at = start({"model": "br_svm"})
    assert at.session_state["model"] == SPARSE_SBLR.label  # not a dashboard model: ignored


def test_layer_costs_follow_the_layer():
    assert SML.layer_cost(1000, 10) == BR_SVM.layer_cost(1000, 10) == 0.0
    assert SBLR.layer_cost(12920, 983) > 1000 * SPARSE_SBLR.layer_cost(12920, 983) > 0
