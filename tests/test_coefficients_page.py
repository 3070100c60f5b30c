"""The β pages (Coefficients, Class contributions, Regularization path, Explain) with AppTest.

Every number drawn is checked against models fitted here, independently of the dashboard's
caches, and against β̃ = β · sd computed here with numpy (population sd of the leave-one-out
training evidence).  The AppTest helpers are those of ``tests/apptest_helpers.py``.
"""

from __future__ import annotations

import html
import io
import math
import re

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import (
    array,
    assert_clean,
    chart,
    download,
    goto,
    keyed,
    load_upload,
    rerun,
    start,
    texts,
    widget,
)
from streamlit.testing.v1 import AppTest

from sblr import SBLRClassifier, SparseSBLRClassifier, load_dataset
from sblr.display import fmt_value
from sblr.samples import load_sample

# Every test here starts the app in AppTest: seconds each, so out of the fast suite.
pytestmark = [pytest.mark.usefixtures("navigation_mode"), pytest.mark.slow]


#: The λ slider's grid (pages/_shared/formatting.LOG_GRID), every 4th point: 1e-5, 1e-4, ..., 1e2.
LOG_LAMS = [-5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0]
MANY = 45  # classes of the synthetic upload
TOP_N = 30  # classes the Coefficients page draws by default past 30


# ----------------------------------------------------------------------------- helpers
def many_classes_csv() -> bytes:
    """45 well separated classes, 8 rows each; names with markup characters."""
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(MANY, 4)) * 3
    rows = [
        ",".join(f"{v:.3f}" for v in x) + f",species <{k:02d}> & co"
        for k in range(MANY)
        for x in centers[k] + rng.normal(size=(8, 4))
    ]
    return ("a,b,c,d,label\n" + "\n".join(rows) + "\n").encode()


def upload_many(at: AppTest) -> AppTest:
    load_upload(at, "many.csv", many_classes_csv(), target="label")
    assert_clean(at)
    return at


def dataset(name: str):
    if name == "many":
        return load_dataset(many_classes_csv(), name="many.csv", target="label")
    return load_sample(name)


class Oracle:
    """β of both models fitted on all rows, and β̃ = β · sd(f̄_t) computed here."""

    def __init__(self, ds):
        self.ds = ds
        self.sblr = SBLRClassifier().fit(ds.X, ds.y)
        F = self.sblr.featurizer_.training_evidence()
        self.sd = np.sqrt(((F - F.mean(axis=0)) ** 2).mean(axis=0))  # ddof = 0
        self._sparse: dict[float, np.ndarray] = {}

    def sparse(self, lam: float) -> np.ndarray:
        if lam not in self._sparse:
            model = SparseSBLRClassifier(lam=lam).fit(self.ds.X, self.ds.y)
            self._sparse[lam] = model.coef_
        return self._sparse[lam]

    def std(self, coef: np.ndarray) -> np.ndarray:
        return coef * self.sd[None, :]

    def top_readable(self, sparse, dense, n: int, include: int) -> list[int]:
        """The Coefficients page's rule: SparseSBLR's ranking (as ``top``), SBLR's where it
        ties, the sidebar's class ``include`` always in (a plain loop)."""
        m = sparse.shape[0]

        def scores(B):
            best = max(max(abs(B[a, b]) for b in range(m) if b != a) for a in range(m))
            off = [
                max(max(abs(B[t, j]), abs(B[j, t])) for j in range(m) if j != t) / best
                if best > 0
                else 0.0
                for t in range(m)
            ]
            return off, [abs(B[t, t]) for t in range(m)]

        (off_s, diag_s), (off_d, diag_d) = scores(sparse), scores(dense)
        ranked = sorted(range(m), key=lambda t: (-off_s[t], -off_d[t], -diag_d[t], -diag_s[t], t))
        rest = [t for t in ranked if t != include]
        return sorted([include, *rest[: n - 1]])


@pytest.fixture(scope="module")
def oracles():
    return {}


def oracle_for(oracles, name):
    if name not in oracles:
        oracles[name] = Oracle(dataset(name))
    return oracles[name]


def clustered(coef, classes) -> list[int]:
    """The page's order of the classes shown (related classes together): the library's
    cluster_order, tested against planted groups in tests/test_interpret.py."""
    from sblr.interpret import cluster_order

    return [int(t) for t in cluster_order(coef, classes)]


def open_data(name: str) -> AppTest:
    at = start({"sample": name} if name != "many" else None)
    if name == "many":
        upload_many(at)
    return goto(at, "pages/coefficients.py")


def panels(at: AppTest) -> dict:
    fig = chart(at, "beta_heatmaps")
    return fig, {t["name"]: t for t in fig["data"]}


# ----------------------------------------------------------------------------- heatmaps
@pytest.mark.parametrize("name", ["planted", "wine", "many"])
def test_heatmaps_have_cells_and_names_over_the_whole_lambda_slider(name, oracles):
    oracle = oracle_for(oracles, name)
    ds = oracle.ds
    m = ds.n_classes
    escaped = [html.escape(n, quote=False) for n in ds.class_names]
    at = open_data(name)
    for log_lam in LOG_LAMS:
        at.select_slider(key="log_lam").set_value(log_lam)
        rerun(at)
        lam = 10.0**log_lam
        sparse_name = f"SparseSBLR, λ = {fmt_value(lam)}"
        expected = {
            "SBLR": oracle.std(oracle.sblr.coef_),
            sparse_name: oracle.std(oracle.sparse(lam)),
        }
        fig, traces = panels(at)
        assert set(traces) == set(expected), (log_lam, set(traces))
        k = keyed(at.sidebar.selectbox, "target_class").value
        shown = (
            list(range(m))
            if m <= TOP_N
            else clustered(
                expected[sparse_name],
                oracle.top_readable(expected[sparse_name], expected["SBLR"], TOP_N, include=k),
            )
        )
        N = len(shown)
        notes = [a["text"] for a in fig["layout"]["annotations"]]
        for i, (trace_name, full) in enumerate(expected.items(), start=1):
            trace = traces[trace_name]
            B = full[np.ix_(shown, shown)]
            z = array(trace["z"]).astype(float)
            assert z.shape == (N, N), (log_lam, trace_name, z.shape)
            # every cell: finite, or blank (NaN, drawn white) exactly where β = 0
            np.testing.assert_array_equal(np.isnan(z), B == 0, err_msg=f"{trace_name} λ={lam}")
            top = np.abs(B).max()
            np.testing.assert_allclose(
                np.nan_to_num(z), B, rtol=2e-3, atol=2e-3 * top + 1e-12, err_msg=trace_name
            )
            names = [escaped[t] for t in shown]
            assert list(trace["x"]) == list(trace["y"]) == names
            suffix = "" if i == 1 else str(i)
            for axis in (f"xaxis{suffix}", f"yaxis{suffix}"):
                layout = fig["layout"][axis]
                assert list(layout["categoryarray"]) == names
                assert list(layout["tickvals"]) == names  # N <= 30: every name is a tick
                assert layout.get("showticklabels", True) is not False
            zeros = int((B == 0).sum())
            assert f"{trace_name} ({zeros} of {N * N} β = 0)" in notes
            all_zero_note = f"all β = 0 at λ = {fmt_value(lam)}"
            if trace_name == sparse_name:
                assert (all_zero_note in notes) == (not B.any()), (log_lam, notes)
        assert ("of " + str(m) + " classes shown" in fig["layout"]["title"]["text"]) == (m > TOP_N)
    # the slider reached the all-zero end, and the sparse panel still had its cells there
    assert not oracle.sparse(100.0).any()


def test_many_classes_top_n_and_chosen_classes(oracles):
    oracle = oracle_for(oracles, "many")
    at = open_data("many")
    keyed(at.slider, "beta_top_n").set_value(12)
    rerun(at)
    # ranked by SparseSBLR, the readable model (SBLR's dense β filled the top N with classes
    # SparseSBLR leaves out), with the sidebar's class always among them
    sparse, dense = oracle.std(oracle.sparse(1e-3)), oracle.std(oracle.sblr.coef_)
    escaped = [html.escape(n, quote=False) for n in oracle.ds.class_names]
    for k in (keyed(at.sidebar.selectbox, "target_class").value, 44):
        widget(at.sidebar.selectbox, "Class k").set_value(k)
        rerun(at)
        _, traces = panels(at)
        expected = oracle.top_readable(sparse, dense, 12, include=k)
        assert k in expected
        for trace in traces.values():  # related classes together (on by default)
            assert list(trace["x"]) == [escaped[t] for t in clustered(sparse, expected)]
    keyed(at.multiselect, "beta_classes").set_value([40, 3, 7])
    rerun(at)
    fig, traces = panels(at)
    for trace in traces.values():
        assert list(trace["y"]) == [escaped[t] for t in clustered(sparse, (3, 7, 40))]
        assert array(trace["z"]).shape == (3, 3)
    assert "3 of 45 classes shown" in fig["layout"]["title"]["text"]
    at.toggle(key="beta_clustered").set_value(False)
    rerun(at)
    for trace in panels(at)[1].values():  # off: the data's class order
        assert list(trace["y"]) == [escaped[t] for t in (3, 7, 40)]


def test_data_page_cooccurrence_names_the_most_frequent_classes_or_the_chosen_ones(oracles):
    """45 classes are more than a heatmap can name: the Data page shows the 30 classes with
    the most rows (the counts and the ranking worked out here from the label matrix), a
    slider for N, or exactly the classes chosen; the title says how many are shown."""
    oracle = oracle_for(oracles, "many")
    Y = oracle.ds.label_matrix()
    m = Y.shape[1]
    C = Y.T.astype(int) @ Y.astype(int)  # rows with both classes
    ranking = sorted(range(m), key=lambda t: (-Y[:, t].sum(), t))
    escaped = [html.escape(n, quote=False) for n in oracle.ds.class_names]
    at = goto(open_data("many"), "pages/data.py")
    for n_top, chosen in ((30, None), (5, None), (5, [40, 3, 7])):
        if n_top != 30:
            keyed(at.slider, "cooccurrence_top_n").set_value(n_top)
        if chosen:
            keyed(at.multiselect, "cooccurrence_classes").set_value(chosen)
        rerun(at)
        shown = sorted(chosen) if chosen else sorted(ranking[:n_top])
        fig = chart(at, "cooccurrence")
        trace = fig["data"][0]
        assert list(trace["x"]) == list(trace["y"]) == [escaped[t] for t in shown]
        np.testing.assert_array_equal(array(trace["customdata"]), C[np.ix_(shown, shown)])
        assert f"{len(shown)} of {m} classes shown" in fig["layout"]["title"]["text"]


def test_shared_colour_scale_toggle(oracles):
    oracle = oracle_for(oracles, "planted")
    at = open_data("planted")
    fig, traces = panels(at)
    sblr, sparse = traces["SBLR"], traces["SparseSBLR, λ = 1e-3"]
    assert sblr["coloraxis"] != sparse["coloraxis"]
    ranges = [
        (fig["layout"][t["coloraxis"]]["cmin"], fig["layout"][t["coloraxis"]]["cmax"])
        for t in (sblr, sparse)
    ]
    tops = [np.abs(oracle.std(B)).max() for B in (oracle.sblr.coef_, oracle.sparse(1e-3))]
    for (lo, hi), top in zip(ranges, tops, strict=True):
        assert hi == pytest.approx(top, rel=1e-6) and lo == pytest.approx(-top, rel=1e-6)
    at.toggle(key="beta_shared_scale").set_value(True)
    rerun(at)
    fig, traces = panels(at)
    axes = {t["coloraxis"] for t in traces.values()}
    assert len(axes) == 1
    assert fig["layout"][axes.pop()]["cmax"] == pytest.approx(max(tops), rel=1e-6)


# ----------------------------------------------------------------------------- β̃ vs β
def test_standardized_by_default_and_the_choice_is_shared_by_the_beta_pages(oracles):
    oracle = oracle_for(oracles, "planted")
    raw = {"SBLR": oracle.sblr.coef_, "SparseSBLR, λ = 1e-3": oracle.sparse(1e-3)}
    at = open_data("planted")
    view = keyed(at.radio, "beta_view")
    assert view.value == "std"
    for name, trace in panels(at)[1].items():
        np.testing.assert_allclose(
            np.nan_to_num(array(trace["z"])), oracle.std(raw[name]), rtol=1e-5, atol=1e-6
        )
        assert "β̃ = " in trace["hovertemplate"]
        np.testing.assert_allclose(array(trace["customdata"])[..., 2], raw[name], rtol=1e-5)

    view.set_value("raw")
    rerun(at)
    for name, trace in panels(at)[1].items():
        np.testing.assert_allclose(np.nan_to_num(array(trace["z"])), raw[name], rtol=1e-5)
        assert "β̃" not in trace["hovertemplate"]

    goto(at, "pages/contributions.py")  # the choice follows the user from page to page
    assert keyed(at.radio, "beta_view").value == "raw"
    assert list(at.dataframe[0].value.columns) == [
        "class",
        "co-occurrence",
        "P(k | t)",
        "SBLR β",
        "SparseSBLR β",
        "SparseSBLR zero",
    ]
    goto(at, "pages/path.py")
    assert keyed(at.radio, "beta_view").value == "raw"
    keyed(at.radio, "beta_view").set_value("std")
    rerun(at)
    goto(at, "pages/coefficients.py")
    assert keyed(at.radio, "beta_view").value == "std"
    assert "β̃" in chart(at, "beta_heatmaps")["layout"]["title"]["text"]


def test_beta_csv_holds_raw_and_standardized(oracles, downloads):
    oracle = oracle_for(oracles, "planted")
    names = oracle.ds.class_names
    at = open_data("planted")
    csv = pd.read_csv(
        io.BytesIO(download(at, downloads, "Download β and β̃ (CSV)")), index_col=[0, 1, 2]
    )
    assert list(csv.columns) == names
    assert set(csv.index.get_level_values("coefficient")) == {"beta", "beta_std"}
    for model, coef in (
        ("SBLR", oracle.sblr.coef_),
        ("SparseSBLR, λ = 1e-3", oracle.sparse(1e-3)),
    ):
        beta = csv.loc[(model, "beta")].loc[names].to_numpy()
        beta_std = csv.loc[(model, "beta_std")].loc[names].to_numpy()
        np.testing.assert_allclose(beta, coef, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(beta_std, oracle.std(coef), rtol=1e-6, atol=1e-9)


def test_contributions_standardized_with_both_in_the_csv(oracles, downloads):
    oracle = oracle_for(oracles, "planted")
    k = 3  # thunder
    at = goto(start({"k": str(k)}), "pages/contributions.py")
    table = at.dataframe[0].value
    assert list(table.columns[:5]) == [
        "class",
        "co-occurrence",
        "P(k | t)",
        "SBLR β̃",
        "SparseSBLR β̃",
    ]
    t = [oracle.ds.class_names.index(c) for c in table["class"]]
    np.testing.assert_allclose(table["SBLR β̃"], oracle.std(oracle.sblr.coef_)[k, t], rtol=1e-5)
    np.testing.assert_allclose(
        table["SparseSBLR β̃"], oracle.std(oracle.sparse(1e-3))[k, t], rtol=1e-5, atol=1e-9
    )
    csv = pd.read_csv(io.BytesIO(download(at, downloads, "Download table (CSV)")))
    assert list(csv.columns) == [
        "class",
        "cooccurrence",
        "p_k_given_t",
        "evidence_sd",
        "SBLR beta",
        "SBLR beta_std",
        "SparseSBLR beta",
        "SparseSBLR beta_std",
        "reading",
        "r_with_k",
        "partial_r",
        "r2_selected",
        "closest",
        "closest_r",
    ]
    np.testing.assert_allclose(csv["evidence_sd"], oracle.sd[t], rtol=1e-9)
    np.testing.assert_allclose(csv["SBLR beta"], oracle.sblr.coef_[k, t], rtol=1e-6)
    np.testing.assert_allclose(csv["SBLR beta_std"], table["SBLR β̃"], rtol=1e-9)


def test_path_standardized_by_default(oracles):
    oracle = oracle_for(oracles, "planted")
    k = 2  # rain
    at = goto(start({"k": str(k)}), "pages/path.py")
    fig = chart(at, "path")
    assert "β̃" in fig["layout"]["title"]["text"]
    lines = {
        t["name"]: (array(t["x"]).astype(float), array(t["y"]).astype(float)) for t in fig["data"]
    }
    for lam in (1e-2, 1e-3):
        expected = oracle.std(oracle.sparse(lam))[k]
        for t, name in enumerate(oracle.ds.class_names):
            x, y = lines[name]
            (i,) = np.flatnonzero(np.isclose(x, lam))
            # the path is warm-started along the grid: equal up to the solver's tolerance
            assert y[i] == pytest.approx(expected[t], abs=2e-3 * np.abs(expected).max())


def test_explain_hover_shows_standardized_beta(oracles):
    oracle = oracle_for(oracles, "planted")
    k = 2
    model = oracle.sparse(1e-3)
    at = goto(start({"k": str(k)}), "pages/explain.py")
    (trace,) = chart(at, "waterfall")["data"]
    hovers = dict(zip(trace["y"], trace["hovertext"], strict=True))
    expected = oracle.std(model)[k]
    f0 = oracle.sblr.featurizer_.training_evidence()[0]  # the page explains row 0
    zero = [n for t, n in enumerate(oracle.ds.class_names) if model[k, t] * f0[t] == 0]
    assert zero  # SparseSBLR leaves some out: they share one bar (their terms are 0)
    assert f"{len(zero)} classes adding 0" in hovers or f"{len(zero)} class adding 0" in hovers
    for t, name in enumerate(oracle.ds.class_names):
        if name in zero:
            assert name not in hovers
            continue
        shown = re.search(r"β̃ = (\S+) per sd of f̄", hovers[name])
        assert shown, hovers[name]
        assert float(shown[1]) == pytest.approx(expected[t], rel=5e-3, abs=1e-6)
        assert "contribution β·f̄" in hovers[name]


# ----------------------------------------------------------------------------- stability
def test_stability_view_matches_the_library_bootstrap():
    """Oracle: sblr.stability.bootstrap_coefficients on a SparseSBLR fitted here."""
    from pages._shared import long_jobs
    from sblr.stability import bootstrap_coefficients

    long_jobs._stabilities.clear()  # computed by nobody yet (results are shared by all sessions)
    ds = load_sample("planted")
    at = goto(start({"gamma": "1", "lam": "0.0003162", "k": "3"}), "pages/coefficients.py")
    assert not [c for c in at.get("plotly_chart") if c.proto.id.endswith("-selection_frequency")]
    at.button(key="stability_run").click()
    rerun(at)
    # the button is gone once clicked: the result stands in its place (issue #38 row 13)
    assert not [b for b in at.button if b.key == "stability_run"]
    model = SparseSBLRClassifier(gamma=1.0, lam=10**-3.5).fit(ds.X, ds.y)
    expected = bootstrap_coefficients(model, model.featurizer_.training_evidence())
    drawn = array(chart(at, "selection_frequency")["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(drawn, expected.selection_frequency)
    sentences = html.unescape(" ".join(m.value for m in at.markdown))
    rain = ds.class_names.index("rain")
    share = expected.selection_frequency[3, rain]
    assert f"rain's evidence is used for thunder in {share:.0%} of 50 resamples" in sentences
    table = at.dataframe[-1].value
    assert table["evidence class t"].iloc[0] in {"rain", "thunder"}
    # a second visit shows the stored result without another button press
    goto(at, "pages/data.py")
    goto(at, "pages/coefficients.py")
    assert chart(at, "selection_frequency")


def test_conditioning_warning_names_the_numbers():
    """Oracle: sblr.diagnostics on SBLR fitted here; the page warns exactly when it says so."""
    from sblr.diagnostics import evidence_diagnostics

    ds = load_sample("wine")
    for gamma in ("10", "0.01"):  # 10: nothing to report; 0.01: collinear evidence
        at = goto(start({"sample": "wine", "gamma": gamma}), "pages/coefficients.py")
        model = SBLRClassifier(gamma=float(gamma)).fit(ds.X, ds.y)
        diag = evidence_diagnostics(model, model.featurizer_.training_evidence())
        warnings = [w.value for w in at.warning if "one by one" in w.value]
        assert diag.unreliable == (gamma == "0.01")
        assert bool(warnings) == diag.unreliable, (gamma, diag)
        if warnings:  # it names what the diagnostics found: separated classes, collinearity
            text = html.unescape(warnings[0])
            if diag.separated.any():
                assert "separated" in text
                assert ds.class_names[int(diag.separated.argmax())] in text
            if diag.collinear.size:
                assert "collinear" in text


def test_multiclass_contributions_compare_with_mean_evidence_not_empty_cooccurrence():
    """Oracle: A[k, t] = mean leave-one-out evidence of class t over class k's rows, computed
    here; on multi-class data co-occurrence would be 0 off the diagonal."""
    from scipy.stats import spearmanr

    ds = load_sample("wine")
    at = goto(start({"sample": "wine", "gamma": "1", "k": "1"}), "pages/contributions.py")
    assert any("no two classes ever co-occur" in html.unescape(i.value) for i in at.info)
    model = SBLRClassifier(gamma=1.0).fit(ds.X, ds.y)
    F = model.featurizer_.training_evidence()
    Y = ds.label_matrix()
    A = np.array([F[Y[:, k] == 1].mean(axis=0) for k in range(3)])
    table = at.dataframe[0].value
    assert list(table.columns[:2]) == ["class", "mean evidence on k's rows"]
    shown = dict(zip(table["class"], table["mean evidence on k's rows"], strict=True))
    for t, name in enumerate(ds.class_names):
        assert shown[name] == pytest.approx(A[1, t], rel=1e-9)
    others = [t for t in range(3) if t != 1]
    beta_std = model.coef_[1] * F.std(axis=0)
    rho = spearmanr(np.abs(beta_std[others]), A[1, others]).statistic
    metric = [m for m in at.metric if m.label.startswith("SBLR:")][0]
    assert metric.label == "SBLR: ρ(|β̃|, mean evidence of t on k's rows)"
    assert metric.value == ("n/a" if rho != rho else f"{rho:.2f}")
    assert metric.delta == "too few classes"  # 2 other classes: nothing can be confirmed


# ----------------------------------------------------------------------------- the claim
def test_contributions_test_the_claim_with_the_numbers_of_an_oracle(oracles):
    """Oracle: Spearman (scipy) of |β̃| computed here against co-occurrence and P(k | t),
    and the zero readings worked from least squares on the models fitted here."""
    from scipy.stats import spearmanr

    oracle = oracle_for(oracles, "planted")
    Y = oracle.ds.label_matrix()
    k, lam = 3, 10**-3.5  # thunder
    at = goto(start({"k": str(k), "lam": "0.0003162"}), "pages/contributions.py")
    C = (Y.T @ Y).astype(float)
    P = C / np.diag(C)[None, :]
    o = [t for t in range(Y.shape[1]) if t != k]
    shown = {m.label: m for m in at.metric}
    for model, coef in (("SBLR", oracle.sblr.coef_), ("SparseSBLR", oracle.sparse(lam))):
        w = np.abs(oracle.std(coef)[k, o])
        for label, R in (("co-occurrence", C), ("P(k | t)", P)):
            rho = spearmanr(w, R[k, o]).statistic
            metric = shown[f"{model}: ρ(|β̃|, {label})"]
            assert metric.value == f"{rho:.2f}"
            assert metric.delta in {"supported", "not supported", "contradicted"}
    sentences = html.unescape(" ".join(m.value for m in at.markdown))
    assert "Hypothesis" in sentences and "permutation p = " in sentences
    # every zero of SparseSBLR has a reading, worked out here from least squares
    table = at.dataframe[0].value
    zero = oracle.sparse(lam)[k] == 0
    readings = dict(zip(table["class"], table["SparseSBLR zero"], strict=True))
    for t, name in enumerate(oracle.ds.class_names):
        assert bool(readings[name]) == (bool(zero[t]) and t != k), name
    F = oracle.sblr.featurizer_.training_evidence()
    sel = np.flatnonzero(oracle.sparse(lam)[k])
    X1 = np.c_[np.ones(len(F)), F[:, sel]]
    res = lambda v: v - X1 @ np.linalg.lstsq(X1, v, rcond=None)[0]  # noqa: E731
    tau = 2 / np.sqrt(len(F))
    for t in np.flatnonzero(zero):
        if t == k:
            continue
        r = np.corrcoef(F[:, t], Y[:, k])[0, 1]
        rp = np.corrcoef(res(F[:, t]), res(Y[:, k].astype(float)))[0, 1]
        want = "weak" if abs(rp) >= tau else ("redundant" if abs(r) >= tau else "irrelevant")
        text = readings[oracle.ds.class_names[t]]
        assert text == f"{want} (r = {r:.2f}, r | S = {rp:.2f})", text


def test_contributions_say_undefined_when_every_weight_is_zero():
    at = goto(start({"k": "2", "lam": "1"}), "pages/contributions.py")
    sentences = html.unescape(" ".join(m.value for m in at.markdown))
    assert "every weight of the 6 other classes is exactly zero at this λ" in sentences
    sparse = [m for m in at.metric if m.label.startswith("SparseSBLR")]
    assert sparse and all(m.value == "n/a" and m.delta == "undefined" for m in sparse)


def test_a_stability_one_student_computed_is_every_students(monkeypatch):
    """A class clicking "Estimate stability" on the same data and settings computes the
    bootstrap once (seeded, so the result is the same for everyone): a second session finds it
    without a click, and two sessions asking at once run it once."""
    import threading

    import sblr.stability
    from pages._shared import long_jobs

    long_jobs._stabilities.clear()
    calls, original = [], sblr.stability.bootstrap_coefficients

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(sblr.stability, "bootstrap_coefficients", counted)
    query = {"gamma": "1", "lam": "0.001", "k": "3"}
    first = goto(start(query), "pages/coefficients.py")
    first.button(key="stability_run").click()
    rerun(first)
    assert chart(first, "selection_frequency") and len(calls) == 1
    second = goto(start(query), "pages/coefficients.py")  # another student, no click
    assert chart(second, "selection_frequency") and len(calls) == 1
    # two sessions at once (another λ): one computation, both get it
    ds = load_sample("planted")
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(long_jobs.stability(ds, 1.0, 1e-2)))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(results) == 2 and results[0] is results[1] and len(calls) == 2


def test_contributions_show_stability_once_computed():
    at = goto(start({"k": "3", "gamma": "1", "lam": "0.0003162"}), "pages/coefficients.py")
    at.button(key="stability_run").click()
    rerun(at)
    goto(at, "pages/contributions.py")
    table = at.dataframe[0].value
    assert {"selected in (resamples)", "β̃ 90% low", "β̃ 90% high"} <= set(table.columns)
    assert (table["β̃ 90% low"] <= table["β̃ 90% high"] + 1e-12).all()


def test_path_shows_the_claim_along_lambda(oracles):
    """Oracle: Spearman (scipy) of |β̃| of SparseSBLR fitted here at two λ of the grid."""
    from scipy.stats import spearmanr

    oracle = oracle_for(oracles, "planted")
    Y = oracle.ds.label_matrix()
    k = 3
    at = goto(start({"k": str(k)}), "pages/path.py")
    fig = chart(at, "path_agreement")
    lines = {
        t["name"]: (array(t["x"]).astype(float), array(t["y"]).astype(float)) for t in fig["data"]
    }
    assert set(lines) == {"co-occurrence", "P(k | t)"}
    C = (Y.T @ Y).astype(float)
    o = [t for t in range(Y.shape[1]) if t != k]
    for lam in (1e-2, 1e-3):
        w = np.abs(oracle.std(oracle.sparse(lam))[k, o])
        x, y = lines["co-occurrence"]
        (i,) = np.flatnonzero(np.isclose(x, lam))
        expected = spearmanr(w, C[k, o]).statistic if np.ptp(w) else np.nan
        assert y[i] == pytest.approx(expected, abs=0.05, nan_ok=True)
    x, y = lines["co-occurrence"]
    assert np.isnan(y[np.argmax(x)])  # λ = 100: every β is zero, no ranking
    at.checkbox(key="path_mean_rho").check()
    rerun(at)
    names = {t["name"] for t in chart(at, "path_agreement")["data"]}
    assert "P(k | t) (mean over classes)" in names


# ----------------------------------------------------------------------------- many classes
def test_gamma_waits_for_the_apply_button_on_many_classes():
    at = upload_many(start())  # 45 classes
    goto(at, "pages/coefficients.py")
    assert at.query_params["gamma"] == "scale"
    at.toggle(key="gamma_is_scale").set_value(False)
    rerun(at)
    applied = at.query_params["gamma"]
    at.select_slider(key="log_gamma").set_value(-1.0)
    rerun(at)
    assert at.query_params["gamma"] == applied  # not applied yet
    assert any("waits for the button" in c.value for c in at.sidebar.caption)
    at.button(key="apply_gamma").click()
    rerun(at)
    assert at.query_params["gamma"] == "0.1"
    assert not [b for b in at.button if b.key == "apply_gamma"]
    # the heatmaps are those of γ = 0.1: SBLR's β̃ equal an SBLR fitted here at γ = 0.1
    ds = dataset("many")
    F = SBLRClassifier(gamma=0.1).fit(ds.X, ds.y)
    shown = TOP_N if ds.n_classes > TOP_N else ds.n_classes
    (sblr_trace,) = [t for t in chart(at, "beta_heatmaps")["data"] if t["name"] == "SBLR"]
    assert array(sblr_trace["z"]).shape == (shown, shown)
    sd = F.featurizer_.training_evidence().std(axis=0)
    drawn = np.nanmax(np.abs(array(sblr_trace["z"]).astype(float)))
    assert drawn <= np.abs(F.coef_ * sd).max() * (1 + 1e-5)
    assert drawn >= 0.5 * np.abs(F.coef_ * sd).max()


def test_gamma_applies_at_once_on_few_classes():
    at = goto(start({"gamma": "1"}), "pages/coefficients.py")
    at.select_slider(key="log_gamma").set_value(-1.0)
    rerun(at)
    assert at.query_params["gamma"] == "0.1"
    assert not [b for b in at.button if b.key == "apply_gamma"]


def test_big_downloads_are_made_only_when_clicked(oracles, downloads):
    """A λ step must not write the β files (on many classes they cost more than the page):
    they are deferred, made on click; the click's file is still the right one."""
    at = open_data("many")
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    for label in ("Download β heatmaps (HTML)", "Download β and β̃ (CSV)"):
        assert buttons[label].deferred_file_id and not buttons[label].url, label
    csv = pd.read_csv(
        io.BytesIO(download(at, downloads, "Download β and β̃ (CSV)")), index_col=[0, 1, 2]
    )
    oracle = oracle_for(oracles, "many")
    names = oracle.ds.class_names
    np.testing.assert_allclose(
        csv.loc[("SBLR", "beta")].loc[names, names].to_numpy(), oracle.sblr.coef_, rtol=1e-6
    )


def test_contributions_page_states_the_multiclass_claim_and_warns_of_sblr_where_it_should():
    """Found on public data: a multi-class page said 'the classes that occur together with k'
    under a box saying classes never co-occur, and gave SBLR's ranking a 'supported' verdict
    where the Coefficients page says SBLR's single β cannot be read."""
    for gamma, unreliable in (("10", False), ("0.01", True)):  # as the oracle test above
        at = goto(start({"sample": "wine", "gamma": gamma}), "pages/contributions.py")
        page = texts(at.markdown)
        assert "stated for classes that cannot co-occur" in page
        assert "occur together with" not in page
        warned = [w.value for w in at.warning if "Read SBLR's verdicts with care" in w.value]
        assert bool(warned) is unreliable, gamma
    at = goto(start(), "pages/contributions.py")  # planted: multi-label
    assert "the classes that occur together with “daylight”" in texts(at.markdown)


def test_path_caption_names_the_first_classes_and_lists_the_rest_in_a_table():
    """On 174 labels the caption listed all 73 entering classes; it names the first eight and
    the rest are in a table, in the order they enter."""
    at = goto(open_data("many"), "pages/path.py")
    caption = [c.value for c in at.caption if "First to enter" in c.value][0]
    named = caption.split("non-zero): ", 1)[1]
    table = [d.value for d in at.dataframe if "enters at λ" in d.value.columns]
    if "more (listed below)" in caption:
        (entering,) = table
        more = int(named.rsplit(", and ", 1)[1].split(" more")[0])
        assert len(entering) == 8 + more
        assert named.count(" (λ = ") == 8
    else:
        assert not table and named.count(" (λ = ") <= 8


def test_moving_gamma_while_scale_is_on_keeps_the_scale_gamma_in_use_until_applied():
    """The γ slider is no longer greyed out under "γ = scale": moving it turns scale off. On
    data where γ waits for "Apply γ", the γ in use until then is the scale γ's grid point (as
    when the switch is turned off), not a γ from before "scale". Oracle: the grid point
    nearest to the scale value the sidebar states."""
    at = upload_many(start())  # 45 classes: γ waits for the button
    goto(at, "pages/coefficients.py")
    assert at.query_params["gamma"] == "scale"
    stated = [c.value for c in at.sidebar.caption if c.value.startswith("γ = scale is ")][0]
    scale = float(stated.split("γ = scale is ", 1)[1].split(" ", 1)[0].rstrip(";"))
    nearest = round(math.log10(scale) * 4) / 4
    at.select_slider(key="log_gamma").set_value(-1.0 if nearest != -1.0 else -2.0)
    rerun(at)
    assert not at.toggle(key="gamma_is_scale").value
    assert at.query_params["gamma"] == f"{10**nearest:.4g}"  # in use: scale's grid point
    assert [b for b in at.button if b.key == "apply_gamma"]
