"""Tests for :mod:`sblr.plots`: assertions on the figure objects (no rendering)."""

from __future__ import annotations

import html
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from sblr.interpret import cooccurrence, instance_contributions
from sblr.plots import (
    MAX_HEIGHT,
    MAX_TICK_LABELS,
    beta_heatmaps,
    class_colors,
    confusion_matrix_figure,
    cooccurrence_heatmap,
    figure_html,
    label_frequency_bar,
    pca_scatter,
    probability_bars,
    regularization_path,
    waterfall,
)

NAMES6 = ["wren", "jay", "owl", "finch", "robin", "crow"]


def _coefs(m, seed=0, sparsity=0.5):
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(m, m))
    sparse = np.where(rng.random((m, m)) < sparsity, 0.0, dense * 0.5)
    return dense, sparse


def _model(coef, intercept, evidence):
    return SimpleNamespace(
        coef_=np.asarray(coef, float),
        intercept_=np.asarray(intercept, float),
        featurizer_=SimpleNamespace(transform=lambda X: np.asarray(evidence, float)[None, :]),
    )


def _ticks_shown(axis) -> bool:
    return axis.showticklabels is not False and axis.tickvals is not None


def _subplot_title(fig, model: str) -> str:
    (title,) = [a.text for a in fig.layout.annotations if a.text.startswith(model + " (")]
    return title


def _colour_range(fig, trace) -> tuple[float, float]:
    axis = fig.layout[trace.coloraxis]
    return axis.cmin, axis.cmax


# --------------------------------------------------------------------------- beta heatmaps


class TestBetaHeatmaps:
    def test_shared_signed_scale_is_symmetric_max_abs(self):
        dense, sparse = _coefs(6)
        dense[2, 3] = -7.5  # the largest |beta| is negative and in the first model
        fig = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, NAMES6, shared_scale=True)
        top = np.abs(dense).max()
        assert top == 7.5
        assert len(fig.data) == 2
        assert fig.layout.coloraxis.cmin == -top
        assert fig.layout.coloraxis.cmax == top
        for trace in fig.data:
            assert trace.coloraxis == "coloraxis"
            assert (trace.zmin, trace.zmax) == (-top, top)
        # one colour bar: the shared colour axis, none on the traces
        assert all(trace.showscale is None for trace in fig.data)

    def test_absolute_scale_from_zero(self):
        dense, sparse = _coefs(6, seed=1)
        fig = beta_heatmaps(
            {"SBLR": dense, "SparseSBLR": sparse}, NAMES6, signed=False, shared_scale=True
        )
        top = max(np.abs(dense).max(), np.abs(sparse).max())
        assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, top)
        for trace, B in zip(fig.data, (dense, sparse), strict=True):
            nonzero = B != 0
            np.testing.assert_allclose(np.asarray(trace.z)[nonzero], np.abs(B)[nonzero], rtol=1e-6)
        assert "|β" in fig.layout.title.text

    def test_exact_zeros_are_gaps_and_customdata_keeps_beta(self):
        _, sparse = _coefs(6, seed=2)
        assert (sparse == 0).any() and (sparse != 0).any()
        fig = beta_heatmaps({"SparseSBLR": sparse}, NAMES6)
        z = np.asarray(fig.data[0].z, dtype=float)
        np.testing.assert_array_equal(np.isnan(z), sparse == 0)
        np.testing.assert_allclose(np.asarray(fig.data[0].customdata)[..., 0], sparse, rtol=1e-6)
        assert fig.layout.plot_bgcolor == "white"
        n_zero = int((sparse == 0).sum())
        assert _subplot_title(fig, "SparseSBLR") == f"SparseSBLR ({n_zero} of 36 β = 0)"

    def test_hover_customdata_holds_cooccurrence(self):
        rng = np.random.default_rng(3)
        Y = (rng.random((40, 6)) < 0.4).astype(int)
        C = cooccurrence(Y)
        dense, sparse = _coefs(6)
        fig = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, NAMES6, cooccurrence=C)
        for trace in fig.data:
            cd = np.asarray(trace.customdata)
            assert cd.shape == (6, 6, 2)
            k, t = 1, 4  # row = target k, column = evidence t
            assert cd[k, t, 1] == C[k, t]
            expected = (dense if trace.name == "SBLR" else sparse)[k, t]
            assert cd[k, t, 0] == pytest.approx(expected, rel=1e-6)
            assert "co-occurrence = %{customdata[1]" in trace.hovertemplate
            assert "target k: %{y}" in trace.hovertemplate
            assert "evidence t: %{x}" in trace.hovertemplate
            assert list(trace.y) == NAMES6 and list(trace.x) == NAMES6
        no_c = beta_heatmaps({"SBLR": dense}, NAMES6)
        assert "co-occurrence" not in no_c.data[0].hovertemplate

    def test_axes_reversed_with_fixed_categories_and_titles_once(self):
        dense, sparse = _coefs(6)
        fig = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, NAMES6)
        for x_name, y_name in (("xaxis", "yaxis"), ("xaxis2", "yaxis2")):
            xaxis, yaxis = fig.layout[x_name], fig.layout[y_name]
            assert list(yaxis.range) == [5.5, -0.5]  # class 0 at the top
            assert list(xaxis.range) == [-0.5, 5.5]
            for axis in (xaxis, yaxis):
                assert list(axis.categoryarray) == NAMES6
                assert _ticks_shown(axis)  # both panels name their rows and columns
        texts = [a.text for a in fig.layout.annotations]
        axis_titles = [fig.layout[a].title.text for a in ("xaxis", "yaxis", "xaxis2", "yaxis2")]
        everything = texts + axis_titles
        assert everything.count("class k (predicted)") == 1
        assert everything.count("evidence of class t") == 1
        # the model titles come last (the browser test reads the SparseSBLR title last)
        assert texts[-2:] == [_subplot_title(fig, "SBLR"), _subplot_title(fig, "SparseSBLR")]

    def test_tick_labels_present_for_six_classes(self):
        dense, sparse = _coefs(6)
        fig = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, NAMES6)
        assert _ticks_shown(fig.layout.xaxis) and _ticks_shown(fig.layout.yaxis)
        assert list(fig.layout.xaxis.ticktext) == NAMES6
        assert "hidden" not in fig.layout.title.text

    def test_tick_labels_hidden_and_height_capped_for_174_classes(self):
        m = 174
        dense, sparse = _coefs(m, seed=4, sparsity=0.9)
        names = [f"label-{i}-with-a-longish-name" for i in range(m)]
        fig = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, names)
        for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
            assert fig.layout[axis].showticklabels is False
        assert "tick labels hidden" in fig.layout.title.text
        assert fig.layout.height <= MAX_HEIGHT * len(fig.data)  # per panel, stacked
        small = beta_heatmaps({"SBLR": dense[:6, :6]}, NAMES6)
        assert small.layout.height < fig.layout.height
        assert all(trace.hovertemplate for trace in fig.data)  # hover still names classes

    def test_duplicate_names_get_distinct_categories(self):
        fig = beta_heatmaps({"SBLR": np.eye(3)}, ["a", "a", "b"])
        assert len(set(fig.data[0].x)) == 3

    def test_all_zero_matrix_gets_a_usable_scale(self):
        fig = beta_heatmaps({"SparseSBLR": np.zeros((3, 3))})
        assert fig.layout.coloraxis.cmax > 0

    def test_each_panel_has_its_own_colour_scale_by_default(self):
        dense = np.array([[300.0, -40.0], [20.0, 150.0]])  # SBLR-like: large
        sparse = np.array([[0.0, 0.02], [-0.5, 0.0]])  # SparseSBLR-like: small
        fig = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, ["a", "b"])
        a, b = fig.data
        assert a.coloraxis != b.coloraxis
        assert _colour_range(fig, a) == (-300.0, 300.0) == (a.zmin, a.zmax)
        assert _colour_range(fig, b) == (-0.5, 0.5) == (b.zmin, b.zmax)
        bars = [fig.layout[t.coloraxis] for t in fig.data]
        assert all(bar.showscale is not False for bar in bars)
        # each colour bar beside its own panel, right of it, at the panel's height: the panels
        # are stacked, so no colour bar can reach the other panel's row names
        for i, bar in enumerate(bars, start=1):
            x_dom = fig.layout["xaxis" if i == 1 else f"xaxis{i}"].domain
            y_dom = fig.layout["yaxis" if i == 1 else f"yaxis{i}"].domain
            assert bar.colorbar.x > x_dom[1]
            assert bar.colorbar.y == pytest.approx((y_dom[0] + y_dom[1]) / 2)
        assert fig.layout.yaxis2.domain[1] < fig.layout.yaxis.domain[0]  # one above the other

        shared = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, ["a", "b"], shared_scale=True)
        a, b = shared.data
        assert a.coloraxis == b.coloraxis
        assert _colour_range(shared, a) == _colour_range(shared, b) == (-300.0, 300.0)
        assert (a.zmin, a.zmax) == (b.zmin, b.zmax) == (-300.0, 300.0)
        absolute = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, signed=False)
        assert [_colour_range(absolute, t) for t in absolute.data] == [(0, 300), (0, 0.5)]

    def test_all_zero_panel_keeps_its_cells_names_and_says_why(self):
        dense, _ = _coefs(6)
        zeros = np.zeros((6, 6))
        name = "SparseSBLR, λ = 1e-1"
        fig = beta_heatmaps({"SBLR": dense, name: zeros}, NAMES6, lams={name: 0.1})
        sblr, sparse = fig.data
        assert np.isfinite(np.asarray(sblr.z, dtype=float)).all()  # SBLR's panel is intact
        z = np.asarray(sparse.z, dtype=float)
        assert z.shape == (6, 6) and np.isnan(z).all()  # white cells, hover still works
        assert sparse.hoverongaps is True
        (note,) = [a for a in fig.layout.annotations if a.text.startswith("all β = 0")]
        assert note.text == "all β = 0 at λ = 1e-1"  # as the slider writes it
        assert (note.xref, note.yref) == ("x2 domain", "y2 domain")
        assert fig.layout[sparse.coloraxis].showscale is False  # no colours to explain
        assert fig.layout[sblr.coloraxis].showscale is not False
        for axis in ("xaxis2", "yaxis2"):  # categories fixed, not inferred from the data
            assert list(fig.layout[axis].categoryarray) == NAMES6
            assert list(fig.layout[axis].ticktext) == NAMES6
        assert _subplot_title(fig, name) == f"{name} (36 of 36 β = 0)"
        no_lam = beta_heatmaps({"SparseSBLR": zeros}, NAMES6)
        assert "all β = 0" in [a.text for a in no_lam.layout.annotations]

    def test_long_and_html_names_are_shortened_distinctly_with_full_hover(self):
        names = [f"Emotion-<Angry>_&_Aggressive_{i:02d}" for i in range(8)]
        dense, _ = _coefs(8)
        fig = beta_heatmaps({"SBLR": dense, "SparseSBLR": dense}, names)
        escaped = [html.escape(n, quote=False) for n in names]
        for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
            ax = fig.layout[axis]
            assert list(ax.tickvals) == escaped
            shown = [html.unescape(t) for t in ax.ticktext]
            assert len(set(shown)) == 8  # the names differ at the end: the end is kept
            assert all(len(t) <= 18 for t in shown)
            for t, n in zip(shown, names, strict=True):
                head, tail = t.split("…")
                assert n.startswith(head) and n.endswith(tail) and tail.endswith(n[-2:])
            assert all("<" not in t for t in ax.ticktext)  # escaped, never cut inside "&lt;"
        assert list(fig.data[0].x) == escaped  # the hover's %{x} is the full name

    def test_subset_of_classes(self):
        dense, sparse = _coefs(6, seed=5)
        fig = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, NAMES6, classes=[4, 1, 0][::-1])
        keep = [0, 1, 4]
        for trace, B in zip(fig.data, (dense, sparse), strict=True):
            assert list(trace.x) == list(trace.y) == [NAMES6[i] for i in keep]
            z = np.asarray(trace.z, dtype=float)
            sub = B[np.ix_(keep, keep)]
            np.testing.assert_allclose(np.nan_to_num(z), sub, rtol=1e-6)
            np.testing.assert_array_equal(np.isnan(z), sub == 0)
        assert "3 of 6 classes shown" in fig.layout.title.text
        n_zero = int((sparse[np.ix_(keep, keep)] == 0).sum())
        assert _subplot_title(fig, "SparseSBLR") == f"SparseSBLR ({n_zero} of 9 β = 0)"
        with pytest.raises(ValueError, match="classes"):
            beta_heatmaps({"SBLR": dense}, classes=[0, 6])

    def test_standardized_panels_show_raw_beta_in_the_hover(self):
        raw = np.array([[300.0, 0.0], [-20.0, 150.0]])
        std = raw * np.array([0.01, 0.05])
        fig = beta_heatmaps({"SBLR": std}, ["a", "b"], raw={"SBLR": raw})
        (trace,) = fig.data
        cd = np.asarray(trace.customdata)
        assert cd.shape == (2, 2, 3)
        np.testing.assert_allclose(cd[..., 0], std, rtol=1e-6)
        np.testing.assert_allclose(cd[..., 2], raw, rtol=1e-6)
        assert "β̃ = %{customdata[0]" in trace.hovertemplate
        assert "β = %{customdata[2]" in trace.hovertemplate
        assert "β̃" in fig.layout.title.text and "sd" in fig.layout.title.text
        assert fig.layout.coloraxis.colorbar.title.text == "β̃"
        with pytest.raises(ValueError, match="raw"):
            beta_heatmaps({"SBLR": std}, raw={"other": raw})

    def test_hover_keeps_beta_beyond_float32s_range(self):
        """β on the evidence's scale reaches 1e40 and 1e-45 at a large γ: the hover must show
        them (float32 would make them inf and 0); ordinary values stay float32 (payload)."""
        raw = np.array([[2.5e40, 0.0], [-3e-45, 1.5]])
        std = np.array([[0.5, 0.0], [-0.2, 0.1]])
        fig = beta_heatmaps({"SBLR": std}, ["a", "b"], raw={"SBLR": raw})
        cd = np.asarray(fig.data[0].customdata)
        np.testing.assert_allclose(cd[..., 2], raw, rtol=1e-6)
        plain = beta_heatmaps({"SBLR": std}, ["a", "b"], raw={"SBLR": std * 10})
        assert np.asarray(plain.data[0].customdata).dtype == np.float32

    def test_16_to_30_classes_stack_the_panels_full_width(self):
        m = 24
        dense, sparse = _coefs(m, seed=6)
        names = [f"class number {i}" for i in range(m)]
        fig = beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, names)
        top, bottom = fig.layout.yaxis.domain, fig.layout.yaxis2.domain
        assert list(fig.layout.xaxis.domain) == list(fig.layout.xaxis2.domain) == [0.0, 1.0]
        assert bottom[1] < top[0]  # one above the other, with a gap for the column names
        gap_px = (top[0] - bottom[1]) * (
            fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
        )
        assert gap_px > 0.7 * max(len(n) for n in names) * 9  # 9 px font at -45°
        for trace, (y0, y1) in zip(fig.data, (top, bottom), strict=True):
            bar = fig.layout[trace.coloraxis].colorbar
            assert bar.y == pytest.approx((y0 + y1) / 2) and bar.len == pytest.approx(y1 - y0)
        for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
            assert _ticks_shown(fig.layout[axis])

    @pytest.mark.parametrize(
        "kwargs, match",
        [
            ({"coefs": {}}, "empty"),
            ({"coefs": {"a": np.eye(3), "b": np.eye(4)}}, "same classes"),
            ({"coefs": {"a": np.ones((2, 3))}}, "square"),
            ({"coefs": {"a": np.eye(3)}, "class_names": ["x", "y"]}, "2 class names for 3"),
            ({"coefs": {"a": np.eye(3)}, "cooccurrence": np.eye(4)}, "cooccurrence"),
            ({"coefs": {"a": np.eye(3)}, "titles": ["one", "two"]}, "titles"),
            ({"coefs": {"a": np.full((2, 2), np.nan)}}, "NaN"),
        ],
    )
    def test_validation(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            beta_heatmaps(**kwargs)


# --------------------------------------------------------------------------- co-occurrence / counts


def test_cooccurrence_heatmap_counts_in_hover():
    Y = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 1, 1]])
    C = cooccurrence(Y)
    fig = cooccurrence_heatmap(C, ["a", "b", "c"])
    trace = fig.data[0]
    np.testing.assert_array_equal(np.asarray(trace.customdata), C)
    assert "%{customdata" in trace.hovertemplate and "%{x}" in trace.hovertemplate
    assert trace.zmax == C[~np.eye(3, dtype=bool)].max()  # capped at the off-diagonal max
    assert fig.layout.yaxis.autorange == "reversed"
    assert "diagonal = class size" in fig.layout.title.text
    with pytest.raises(ValueError, match=">= 0"):
        cooccurrence_heatmap(-np.eye(2))


def test_cooccurrence_heatmap_many_classes_hides_ticks():
    fig = cooccurrence_heatmap(np.eye(174, dtype=int) * 3)
    assert fig.layout.xaxis.showticklabels is False
    assert fig.layout.height <= MAX_HEIGHT
    assert fig.data[0].zmax == 3  # no off-diagonal counts: not capped


def test_label_frequency_bar_sorted_with_shares():
    fig = label_frequency_bar([5, 20, 10], ["a", "b", "c"], total=25)
    bar = fig.data[0]
    assert bar.orientation == "h"
    assert list(bar.y) == ["b", "c", "a"] and list(bar.x) == [20, 10, 5]
    assert fig.layout.yaxis.autorange == "reversed"  # largest at the top
    np.testing.assert_allclose(np.asarray(bar.customdata)[:, 1], [0.8, 0.4, 0.2])
    assert "share of rows" in bar.hovertemplate


def test_label_frequency_bar_names_every_class_of_a_45_label_set():
    """45 classes (a common multi-label size): still one named bar a row, each at least 14 px
    high (room for the 9 px names) within the figure height limit."""
    names = [f"label{k}" for k in range(45)]
    fig = label_frequency_bar(np.arange(45), names)
    bar = fig.data[0]
    assert bar.orientation == "h" and sorted(bar.y) == sorted(names)
    assert list(fig.layout.yaxis.tickvals) == list(bar.y)  # every name drawn
    assert fig.layout.height <= MAX_HEIGHT
    assert (fig.layout.height - 140) / 45 >= 14


def test_label_frequency_bar_many_classes_vertical_without_ticks():
    counts = np.arange(174)
    fig = label_frequency_bar(counts)
    bar = fig.data[0]
    assert bar.orientation in (None, "v")
    assert list(bar.y) == sorted(counts, reverse=True)
    assert fig.layout.xaxis.showticklabels is False
    assert fig.layout.height <= MAX_HEIGHT
    assert "share of all class assignments" in bar.hovertemplate
    with pytest.raises(ValueError, match="class names"):
        label_frequency_bar([1, 2], ["a"])


# --------------------------------------------------------------------------- PCA


def _blobs(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 4)) + 3 * y[:, None]
    return X, y


def test_pca_scatter_subsamples_and_says_so():
    X, y = _blobs(3000)
    fig = pca_scatter(X, y, class_names=["a", "b", "c"], max_points=500)
    assert sum(len(trace.x) for trace in fig.data) == 500
    assert "showing 500 of 3,000 rows" in fig.layout.title.text.replace("<br>", " ")
    assert fig.layout.xaxis.title.text.startswith("PC1 (")
    assert "% of variance" in fig.layout.yaxis.title.text
    assert [trace.name for trace in fig.data] == ["a", "b", "c"]
    # deterministic
    again = pca_scatter(X, y, class_names=["a", "b", "c"], max_points=500)
    np.testing.assert_array_equal(fig.data[0].x, again.data[0].x)


def test_pca_scatter_all_rows_and_integer_codes():
    X, y = _blobs(100)
    fig = pca_scatter(X, y, class_names=["x", "y", "z"])  # integer codes into class_names
    assert sum(len(trace.x) for trace in fig.data) == 100
    assert "all 100 rows" in fig.layout.title.text
    assert {trace.name for trace in fig.data} == {"x", "y", "z"}
    with pytest.raises(ValueError, match="rows"):
        pca_scatter(X, y[:-1])


def test_pca_scatter_multilabel_colours_by_most_frequent_label():
    rng = np.random.default_rng(1)
    Y = (rng.random((200, 30)) < 0.2).astype(int)
    Y[:, 5] = 1  # label 5 is present everywhere and the most frequent
    Y[0] = 0  # ... except in one empty row
    X = rng.normal(size=(200, 5))
    fig = pca_scatter(X, Y, class_names=[f"L{i}" for i in range(30)])
    names = [trace.name for trace in fig.data]
    assert names == ["L5", "(no labels)"]
    assert "most frequent label" in fig.layout.title.text
    sized = pca_scatter(X, Y, color_by="set_size")
    assert len(sized.data) == 1 and "number of labels" in sized.layout.title.text


def test_pca_scatter_many_classes_limits_legend():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 50, size=600)
    fig = pca_scatter(rng.normal(size=(600, 3)), y)
    assert len(fig.data) <= 20
    assert fig.data[-1].name.startswith("other")
    assert sum(len(trace.x) for trace in fig.data) == 600


# --------------------------------------------------------------------------- waterfall


def _relative_sum(trace) -> float:
    return float(sum(v for v, m in zip(trace.x, trace.measure, strict=True) if m == "relative"))


def test_waterfall_measures_and_sum_equals_logit():
    model = _model(
        [[1.5, 0.7, -0.4], [0.2, 2.0, 0.0], [-0.3, 0.0, 1.0]],
        [-1.0, 0.5, -0.2],
        [0.8, 0.1, 0.5],
    )
    ic = instance_contributions(model, [0.0])
    table = ic.waterfall(0, ["wren", "jay", "owl"])
    fig = waterfall(table)
    trace = fig.data[0]
    assert isinstance(trace, go.Waterfall)
    assert list(trace.measure) == ["relative"] * 4 + ["total"]
    assert list(trace.y)[0] == "intercept" and list(trace.y)[-1] == "logit"
    assert _relative_sum(trace) == pytest.approx(ic.logits[0])
    assert trace.x[-1] == pytest.approx(ic.logits[0])
    assert list(trace.y)[1:-1] == list(table["term"][1:])  # largest |contribution| first
    assert "β = 1.5" in trace.hovertext[1] and "f̄ = 0.8" in trace.hovertext[1]
    assert "contribution" in trace.hovertext[1]
    assert trace.increasing.marker.color != trace.decreasing.marker.color
    assert fig.layout.yaxis.autorange == "reversed"
    assert f"{ic.proba[0]:.3f}" in fig.layout.title.text


def test_waterfall_x_range_leaves_room_for_the_values_beside_the_bars():
    """Oracle worked by hand (below): the bars run from 0 to 4 at most, so the range must hold
    [0, 4] and leave at least 15% of that span free on each side (the values are written
    outside the bars; beyond the plot area they were cut off at the figure's edge)."""
    model = _model([[3.0, -2.5], [0.0, 1.0]], [1.0, 0.0], [1.0, 1.0])
    ic = instance_contributions(model, [0.0])
    fig = waterfall(ic.waterfall(0, ["a", "b"]))
    trace = fig.data[0]
    # bars: intercept 1 (0 → 1), a +3 (1 → 4), b -2.5 (4 → 1.5), total 1.5 (0 → 1.5)
    assert list(trace.x) == pytest.approx([1.0, 3.0, -2.5, 1.5])
    lo, hi = fig.layout.xaxis.range
    span = 4.0 - 0.0
    assert lo <= 0.0 - 0.15 * span and hi >= 4.0 + 0.15 * span
    assert hi - lo <= 1.5 * span  # and not so wide that the bars shrink


def test_waterfall_hover_shows_standardized_beta_beside_the_contribution():
    model = _model([[2.0, -3.0], [0.0, 1.0]], [0.5, 0.0], [0.5, 0.5])
    ic = instance_contributions(model, evidence=[0.5, 0.5])
    fig = waterfall(ic.waterfall(0, ["a", "b"], evidence_sd=[0.1, 0.02]))
    hovers = dict(zip(fig.data[0].y, fig.data[0].hovertext, strict=True))
    # beta~ = beta * sd: a: 2 * 0.1 = 0.2, b: -3 * 0.02 = -0.06
    assert "contribution β·f̄ = 1<br>β̃ = 0.2 per sd of f̄" in hovers["a"]
    assert "contribution β·f̄ = -1.5<br>β̃ = -0.06 per sd of f̄" in hovers["b"]
    plain = waterfall(ic.waterfall(0, ["a", "b"]))
    assert not any("β̃" in h for h in plain.data[0].hovertext)


def test_waterfall_merges_many_classes_into_other():
    m = 60
    rng = np.random.default_rng(5)
    model = _model(rng.normal(size=(m, m)), rng.normal(size=m), rng.random(m))
    ic = instance_contributions(model, [0.0])
    fig = waterfall(ic.waterfall(3), title="Why class 3?")
    trace = fig.data[0]
    labels = list(trace.y)
    assert len(labels) == 1 + 20 + 1 + 1
    assert labels[-2] == f"other {m - 20} classes"
    assert list(trace.measure) == ["relative"] * 22 + ["total"]
    assert _relative_sum(trace) == pytest.approx(ic.logits[3])
    assert trace.x[-1] == pytest.approx(ic.logits[3])
    assert fig.layout.title.text.startswith("Why class 3?")
    assert fig.layout.height <= MAX_HEIGHT


def test_waterfall_keeps_25_classes_unmerged():
    m = 25
    rng = np.random.default_rng(6)
    model = _model(rng.normal(size=(m, m)), np.zeros(m), rng.random(m))
    fig = waterfall(instance_contributions(model, [0.0]).waterfall(0))
    assert len(fig.data[0].y) == 1 + 25 + 1
    assert not any(str(label).startswith("other") for label in fig.data[0].y)


def test_waterfall_class_named_intercept_is_not_the_intercept():
    model = _model([[1.0, 2.0], [0.0, 1.0]], [0.5, 0.0], [0.5, 0.25])
    ic = instance_contributions(model, [0.0])
    trace = waterfall(ic.waterfall(0, ["intercept", "b"])).data[0]
    assert len(trace.y) == 4 and len(set(trace.y)) == 4
    assert _relative_sum(trace) == pytest.approx(ic.logits[0])


def test_waterfall_validation():
    with pytest.raises(ValueError, match="contribution"):
        waterfall(pd.DataFrame({"term": ["intercept"]}))
    with pytest.raises(TypeError, match="DataFrame"):
        waterfall([1, 2, 3])


# --------------------------------------------------------------------------- regularization path


def test_regularization_path_one_trace_per_class_and_current_lambda():
    lams = np.array([1e-3, 1e-1, 1e1, 1e-2, 1.0])  # unsorted on purpose
    rng = np.random.default_rng(0)
    coefs_k = rng.normal(size=(5, 6))
    fig = regularization_path(lams, coefs_k, NAMES6, current_lam=1e-2, target_name="owl")
    assert len(fig.data) == 6
    assert [trace.name for trace in fig.data] == NAMES6
    assert all(trace.showlegend is not False for trace in fig.data)
    order = np.argsort(lams)
    np.testing.assert_allclose(fig.data[2].x, lams[order])
    np.testing.assert_allclose(fig.data[2].y, coefs_k[order, 2])
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.xaxis.autorange == "reversed"
    vlines = [s for s in fig.layout.shapes if s.x0 == s.x1 and s.xref == "x"]
    assert len(vlines) == 1 and vlines[0].x0 == pytest.approx(1e-2)
    assert vlines[0].line.dash == "dash"
    assert fig.layout.annotations[0].x == pytest.approx(-2.0)  # log10 on a log axis
    assert "owl" in fig.layout.title.text
    assert "λ = %{text}" in fig.data[0].hovertemplate and "wren" in fig.data[0].hovertemplate
    # the hover writes λ as the slider does, point by point (sorted with x)
    assert list(fig.data[0].text) == ["1e-3", "1e-2", "1e-1", "1", "10"]
    assert fig.layout.annotations[0].text == "current λ = 1e-2"


def test_regularization_path_standardized_labels():
    coefs_k = np.array([[0.0, 0.0], [0.5, 0.0], [1.0, -0.2]])
    raw = regularization_path([1.0, 0.1, 0.01], coefs_k, ["a", "b"])
    std = regularization_path([1.0, 0.1, 0.01], coefs_k, ["a", "b"], standardized=True)
    assert "β̃" not in raw.layout.title.text + raw.layout.yaxis.title.text
    assert "β̃" in std.layout.title.text and "sd" in std.layout.yaxis.title.text
    assert all("β̃ = %{y" in trace.hovertemplate for trace in std.data)
    np.testing.assert_allclose(std.data[0].y, raw.data[0].y)  # the values are the caller's


def test_regularization_path_many_classes_limits_legend():
    m = 174
    rng = np.random.default_rng(1)
    coefs_k = rng.normal(size=(8, m)) * np.linspace(0.1, 3, m)  # later classes larger
    fig = regularization_path(np.logspace(2, -5, 8), coefs_k)
    # the others in one grey trace, line after line (class order), each ended by a gap
    assert len(fig.data) == 21
    grey = fig.data[0]
    assert grey.showlegend is False and grey.name == f"{m - 20} other classes"
    others = sorted(set(range(m)) - set(np.argsort(-np.abs(coefs_k).max(axis=0))[:20]))
    lines = np.asarray(grey.y, dtype=float).reshape(m - 20, 9)
    assert np.isnan(lines[:, -1]).all()
    np.testing.assert_array_equal(lines[:, :-1], coefs_k[::-1, others].T)  # λ ascending
    assert list(grey.customdata[:9]) == [str(others[0])] * 9
    in_legend = [trace for trace in fig.data if trace.showlegend is not False]
    assert len(in_legend) == 20
    top20 = set(np.argsort(-np.abs(coefs_k).max(axis=0))[:20])
    assert {int(trace.name) for trace in in_legend} == top20
    assert not fig.layout.shapes or all(s.y0 == s.y1 for s in fig.layout.shapes)  # only y=0


def test_regularization_path_validation():
    with pytest.raises(ValueError, match="rows but there are"):
        regularization_path([1.0, 0.1], np.zeros((3, 2)))
    with pytest.raises(ValueError, match="> 0"):
        regularization_path([1.0, 0.0], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="current_lam"):
        regularization_path([1.0, 0.1], np.zeros((2, 2)), current_lam=-1)


# --------------------------------------------------------------------------- confusion, probas


def test_confusion_matrix_text_and_axes():
    cm = np.array([[5, 1, 0], [2, 7, 1], [0, 0, 4]])
    fig = confusion_matrix_figure(cm, ["a", "b", "c"])
    trace = fig.data[0]
    assert np.asarray(trace.text).tolist() == [["5", "1", "0"], ["2", "7", "1"], ["0", "0", "4"]]
    assert trace.texttemplate == "%{text}"
    assert fig.layout.xaxis.title.text == "predicted class"
    assert fig.layout.yaxis.title.text == "true class"
    assert fig.layout.yaxis.autorange == "reversed"
    assert "accuracy = 80.0%" in fig.layout.title.text
    norm = confusion_matrix_figure(cm, ["a", "b", "c"], normalize=True)
    np.testing.assert_allclose(np.asarray(norm.data[0].z).sum(axis=1), 1.0)
    assert norm.data[0].text[0][0] == "5<br>(83%)"  # 5 of the 6 rows of class a


def test_confusion_matrix_many_classes_has_no_cell_text():
    fig = confusion_matrix_figure(np.eye(40, dtype=int))
    assert fig.data[0].text is None
    assert fig.layout.xaxis.showticklabels is False
    with pytest.raises(ValueError, match="square"):
        confusion_matrix_figure(np.ones((2, 3)))


def test_probability_bars_sorted_with_threshold_line():
    fig = probability_bars([0.2, 0.9, 0.6, 0.4], ["a", "b", "c", "d"], true_classes=[1, 3])
    bar = fig.data[0]
    assert list(bar.y) == ["b", "c", "d", "a"]
    colors = list(bar.marker.color)
    assert colors[0] == colors[1] != colors[2] == colors[3]  # >= 0.5 vs < 0.5
    assert list(bar.marker.line.width) == [2, 0, 2, 0]
    (line,) = fig.layout.shapes
    assert line.x0 == line.x1 == 0.5 and line.line.dash == "dash"
    assert tuple(fig.layout.xaxis.range)[0] == 0


def test_probability_bars_many_classes_and_multiclass_mode():
    p = np.linspace(0, 1, 174)
    fig = probability_bars(p, threshold=None)
    assert len(fig.data[0].y) == MAX_TICK_LABELS
    assert "30 most probable of 174" in fig.layout.title.text
    assert not fig.layout.shapes
    assert fig.layout.height <= MAX_HEIGHT
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        probability_bars([0.5, 1.5])


# --------------------------------------------------------------------------- misc


#: Oracle for the class colours, spelled out here: Plotly's qualitative palettes "Plotly"
#: (up to 10 classes) and "Dark24" (up to 24; repeated past 24).
PLOTLY10 = ["#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A"]
PLOTLY10 += ["#19D3F3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52"]
DARK24 = ["#2E91E5", "#E15F99", "#1CA71C", "#FB0D0D", "#DA16FF", "#222A2A", "#B68100"]
DARK24 += ["#750D86", "#EB663B", "#511CFB", "#00A08B", "#FB00D1", "#FC0080", "#B2828D"]
DARK24 += ["#6C7C32", "#778AAE", "#862A16", "#A777F1", "#620042", "#1616A7", "#DA60CA"]
DARK24 += ["#6C4516", "#0D2A63", "#AF0038"]


def test_class_colors_consistent():
    assert class_colors(6) == PLOTLY10[:6]
    assert class_colors(10) == PLOTLY10
    assert class_colors(11) == DARK24[:11]
    assert class_colors(24) == DARK24 and len(set(DARK24)) == 24
    assert class_colors(30) == DARK24 + DARK24[:6]
    # Every figure draws class t in colour t of its palette: the PCA scatter ...
    for m, palette in ((6, PLOTLY10), (12, DARK24)):
        names = [f"c{t}" for t in range(m)]
        y = np.arange(5 * m) % m  # every class present, in code order
        X = np.random.default_rng(m).normal(size=(5 * m, 3))
        fig = pca_scatter(X, y, class_names=names)
        colours = {trace.name: trace.marker.color for trace in fig.data}
        assert colours == {names[t]: palette[t] for t in range(m)}
    # ... and the regularization path (one line per class).
    coefs_k = np.random.default_rng(0).normal(size=(3, 6))
    fig = regularization_path([1e-2, 1e-1, 1.0], coefs_k, NAMES6)
    colours = {trace.name: trace.line.color for trace in fig.data}
    assert colours == {NAMES6[t]: PLOTLY10[t] for t in range(6)}


@pytest.mark.slow
def test_figure_html_is_standalone():
    page = figure_html(confusion_matrix_figure([[1, 0], [0, 1]]))
    assert "<html" in page.lower()
    assert "plotly" in page.lower()
    with pytest.raises(TypeError, match="plotly Figure"):
        figure_html("not a figure")


@pytest.mark.slow
def test_pca_scatter_keeps_sparse_data_sparse():
    """A sparse matrix whose dense form would need 32 GB is projected without densifying."""
    import scipy.sparse as sp

    from sblr.plots import pca_scatter

    n, d = 2000, 2_000_000
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(n), 3)
    cols = rng.integers(0, 50, size=rows.size) + 1000 * (rows % 2)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, d))
    y = rows[::3] % 2  # the two classes use disjoint columns
    fig = pca_scatter(X, y, max_points=500)
    assert "Truncated SVD" in fig.layout.title.text
    assert sum(len(t.x) for t in fig.data) == 500
    # the two components are the two column blocks: each class lies along its own axis
    a, b = (np.abs(np.c_[t.x, t.y]) for t in fig.data)
    on_y, on_x = (a[:, 1] > a[:, 0]).mean(), (b[:, 0] > b[:, 1]).mean()
    assert min(on_y, on_x) > 0.95 or max(on_y, on_x) < 0.05


def test_pca_of_values_near_the_float_limit_is_that_of_the_same_data_rescaled():
    """A column of ±1e308 overflowed the standardization's variance: the Data page showed
    only 'coordinates contains NaN or infinite values.' Standardizing does not depend on a
    column's scale, so the coordinates must be those of the column divided by 1e308."""
    from sblr.plots.data import pca_coordinates

    rng = np.random.default_rng(0)
    other = rng.normal(size=(30, 2))
    signs = np.tile([1.0, -1.0], 15)
    Z, var, _ = pca_coordinates(np.column_stack([1e308 * signs, other]))
    Z_small, var_small, _ = pca_coordinates(np.column_stack([signs, other]))
    assert np.isfinite(Z).all()
    np.testing.assert_allclose(Z, Z_small, atol=1e-12)
    np.testing.assert_allclose(var, var_small)


def test_waterfalls_give_exact_zeros_one_bar_not_one_each():
    """Found on public data: SparseSBLR's class waterfall showed about 15 bars of '+0' before
    'other 7 classes', and the feature waterfall listed features of credit 0 as drivers."""
    from sblr.attribution import FeatureAttribution
    from sblr.plots import attribution_waterfall, waterfall

    contrib = [0.4, 0.0, -1.0, 0.0, 0.25, 0.0]
    table = pd.DataFrame(
        {
            "term": ["intercept", *"abcdef"],
            "evidence": [np.nan, 0.5, 0.0, 0.5, 0.3, 0.5, 0.2],
            "beta": [np.nan, 0.8, 3.0, -2.0, 0.0, 0.5, 0.0],
            "contribution": [-0.5, *contrib],
        }
    )
    trace = waterfall(table).data[0]
    assert list(trace.y) == ["intercept", "c", "a", "e", "3 classes adding 0", "logit"]
    np.testing.assert_allclose(trace.x, [-0.5, -1.0, 0.4, 0.25, 0.0, -0.85])
    # with more classes than max_classes, the zeros still do not take the kept places
    wide = pd.DataFrame(
        {
            "term": ["intercept", *map(str, range(40))],
            "contribution": [0.0] + [0.0] * 30 + [1.0] * 10,
        }
    )
    assert list(waterfall(wide, max_classes=5, keep=3).data[0].y)[-3:] == [
        "other 7 classes",
        "30 classes adding 0",
        "logit",
    ]
    fa = FeatureAttribution(
        np.array([0.5, 0.0, -2.0, 0.0, 0.0]),
        np.zeros(5),
        np.ones(5),
        output=-0.5,
        output_baseline=1.0,
        k=0,
        quantity="logit",
        gap=0.0,
        n_nodes=16,
        feature_names=list("pqrst"),
    )
    trace = attribution_waterfall(fa).data[0]
    assert list(trace.y) == ["baseline row", "r", "p", "3 features with credit 0", "this row"]
    np.testing.assert_allclose(trace.x, [1.0, -2.0, 0.5, 0.0, -0.5])


def test_rank_agreement_curves_that_coincide_stay_visible():
    """Found on public data: the co-occurrence curve was drawn exactly under the P(k | t) one."""
    from sblr.plots import rank_agreement_figure

    rho = [0.2, 0.5, 0.7]
    fig = rank_agreement_figure([1.0, 0.1, 0.01], {"co-occurrence": rho, "P(k | t)": rho})
    first, second = fig.data
    assert first.line.width > second.line.width  # the first shows as a band around the second
    assert (first.line.dash, first.marker.symbol) != (second.line.dash, second.marker.symbol)


def test_long_titles_wrap_to_fit_a_narrow_chart_without_splitting_markup():
    """Plotly cuts a title line that is wider than the chart (found at 800 px with the sidebar
    open: the β heatmaps' title lost its second half). Lines are broken at spaces to at most
    TITLE_CHARS / SUBTITLE_CHARS visible characters; the words, their order, the markup and
    the user's escaped text are kept, and the top margin grows with the lines."""
    import html
    import re

    from sblr.plots._style import SUBTITLE_CHARS, TITLE_CHARS, _titled

    name = html.escape("Genus <speciosus> & var. 7")
    main = (
        f"Standardized coefficients β̃<sub>t</sub><sup>k</sup> of {name}: change of class k's "
        "logit per sd"
    )
    sub = "red raises, blue lowers, white = 0 (ignored); each panel its own colour scale<br>3 of 6"
    short = _titled("Short", "tiny")
    layout = _titled(main, sub)
    lines = layout["title"]["text"].split("<br>")
    body = [line for line in lines if not line.startswith("<sup>")]
    subs = [line[5:-6] for line in lines if line.startswith("<sup>")]
    assert all(line.endswith("</sup>") for line in lines if line.startswith("<sup>"))

    def visible(line):
        return html.unescape(re.sub(r"<[^>]*>", "", line))

    assert len(body) >= 2 and all(len(visible(line)) <= TITLE_CHARS for line in body)
    assert all(len(visible(line)) <= SUBTITLE_CHARS for line in subs)
    assert " ".join(body) == main  # same words, same order, markup and escapes intact
    assert subs[-1] == "3 of 6" and " ".join(subs[:-1]) == sub.split("<br>")[0]
    for line in lines:  # no tag cut in two, none left open
        assert line.count("<sub>") == line.count("</sub>") and "<" not in re.sub(
            r"<[^>]*>", "", line
        )
    assert layout["margin"]["t"] - short["margin"]["t"] == 19 * (len(lines) - 2)
    # an expression is never broken at its operator: "(π = 0.5)" stays on one line
    sub = "x" * (SUBTITLE_CHARS - 6) + " (π = 0.5); white = exactly 0, β ≠ 0"
    sub_lines = _titled("t", sub)["title"]["text"].split("<br>")[1:]
    assert any("(π = 0.5);" in line for line in sub_lines), sub_lines
    assert any("β ≠ 0" in line for line in sub_lines), sub_lines


def test_long_legends_go_under_the_plot_and_the_figure_grows_for_them():
    """At 800 px a legend of 19 names of 50 characters at the right took 60% of the width and
    left the scatter 120 px wide: many or long names go in rows under the plot, and the
    figure grows by their rows so that the plot keeps its height; a few short names stay at
    the right."""
    names = [f"Long-tailed Species {t:02d} (Genus speciosus var. {t})" for t in range(19)]
    rng = np.random.default_rng(0)
    lams = 10.0 ** np.arange(-5, 2.01, 0.5)
    long = regularization_path(lams, rng.normal(size=(lams.size, 19)), names)
    short = regularization_path(lams, rng.normal(size=(lams.size, 3)), ["a", "b", "c"])
    assert long.layout.legend.orientation == "h" and long.layout.legend.y < 0
    assert short.layout.legend.orientation != "h"
    assert long.layout.height >= short.layout.height + 22 * 10
    # legend names are cut where the names differ, so each stays distinct
    shown = [t.name for t in long.data if t.showlegend is not False]
    assert len(set(shown)) == 19 and all(len(n) <= 28 for n in shown)


def test_selection_frequency_heatmap_shows_the_chosen_classes_and_says_so():
    """174 classes drew 174 x 174 unnamed cells; the page now passes the β heatmaps'
    classes. Oracle: the sub-matrix taken here."""
    from sblr.plots import selection_frequency_heatmap

    rng = np.random.default_rng(0)
    S = rng.random((40, 40))
    names = [f"c{i}" for i in range(40)]
    fig = selection_frequency_heatmap(S, names, n_resamples=50, classes=[30, 2, 7])
    np.testing.assert_allclose(np.asarray(fig.data[0].z), S[np.ix_([30, 2, 7], [30, 2, 7])])
    assert list(fig.data[0].x) == ["c30", "c2", "c7"]  # the order given (a clustered order)
    assert "3 of 40 classes shown" in fig.layout.title.text
    with pytest.raises(ValueError):
        selection_frequency_heatmap(S, names, classes=[3, 3])


def test_waterfall_names_are_cut_where_they_differ():
    """Every CAL500 feature bar read "Mean_Acc1000_Std_Mem40_…": the names were cut to 24
    characters from the start. They are now cut where they still differ, as the path legend
    does, and every bar keeps a distinct name."""
    from sblr.attribution import FeatureAttribution
    from sblr.plots import attribution_waterfall

    names = [f"Mean_Acc1000_Std_Mem40_{s}" for s in ("Centroid", "Rolloff", "Flux", "MFCC_1")]
    fa = FeatureAttribution(
        attributions=np.array([0.5, -0.3, 0.2, 0.1]),
        x=np.zeros(4),
        baseline=np.zeros(4),
        output=0.5,
        output_baseline=0.0,
        k=0,
        quantity="logit",
        gap=0.0,
        n_nodes=0,
        feature_names=names,
    )
    fig = attribution_waterfall(fa)
    ticks = list(fig.layout.yaxis.ticktext)
    assert len(set(ticks)) == len(ticks)
    assert all(len(t) <= 24 for t in ticks)
    assert any(t.endswith("Centroid") for t in ticks)


def test_beta_heatmaps_mark_negative_cells_so_the_sign_reads_without_colour():
    """The two arms of the diverging scale darken alike: in grey print (or for a reader who
    does not tell red from blue) a strong negative looked like a strong positive, and the
    |β| colouring has no sign at all. Every negative cell carries a "−"; no other cell."""
    from sblr.plots import beta_heatmaps

    B = np.array([[2.0, -1.0, 0.0], [0.5, 1.5, -0.2], [0.0, -3.0, 1.0]])
    for signed in (True, False):
        fig = beta_heatmaps({"SparseSBLR": B}, ["a", "b", "c"], signed=signed)
        text = np.asarray(fig.data[0].text, dtype=str)
        np.testing.assert_array_equal(np.char.startswith(text, "−"), B < 0)
        assert fig.data[0].texttemplate == "%{text}"
    # up to 12 classes each cell prints its value (issue #46, item 14): read back, it is β
    # to two digits; an exact zero prints nothing
    written = np.array([[float(t.replace("−", "-")) if t else 0.0 for t in row] for row in text])
    np.testing.assert_allclose(written, B, rtol=0.05)
    assert (text == "").tolist() == (B == 0).tolist()
    mid = beta_heatmaps({"m": np.eye(20) - 0.01}, [f"c{i}" for i in range(20)])
    assert set(np.asarray(mid.data[0].text).ravel()) == {"−", ""}  # 20 classes: the sign only
    many = beta_heatmaps({"m": np.eye(40) - 0.01}, [f"c{i}" for i in range(40)])
    assert many.data[0].text is None  # too many cells to write in: no marks


def test_probability_bars_decide_at_each_classs_own_cut():
    """One cut per class: a bar is green when π reaches its own class's cut (not 0.5), each
    cut drawn as a tick; one cut for all stays a dashed line at it."""
    from sblr.plots.explain import PREDICTED_COLOR, probability_bars

    fig = probability_bars([0.2, 0.9, 0.45], ["a", "b", "c"], threshold=[0.1, 0.95, 0.4])
    colours = dict(zip(fig.data[0].y, fig.data[0].marker.color, strict=True))
    assert [n for n, c in colours.items() if c == PREDICTED_COLOR] == ["c", "a"]
    assert list(fig.data[1].x) == [0.95, 0.4, 0.1] and not fig.layout.shapes
    one = probability_bars([0.2, 0.9, 0.45], ["a", "b", "c"], threshold=[0.3, 0.3, 0.3])
    assert one.layout.shapes[0].x0 == 0.3 and len(one.data) == 1


def test_the_class_waterfall_draws_the_models_cut_where_the_decision_switches():
    """With a cut of 0.3 the decision switches at logit(0.3) = -0.847, not at 0: a second
    line there, and the subtitle says which is which; 0.5 (or none) keeps the one line."""
    import math

    import pandas as pd

    from sblr.plots.explain import waterfall

    table = pd.DataFrame(
        {
            "term": ["intercept", "a", "b"],
            "evidence": [float("nan"), 0.5, 0.2],
            "beta": [float("nan"), 2.0, -1.0],
            "contribution": [-1.0, 1.0, -0.2],
        }
    )
    fig = waterfall(table, cut=0.3)
    xs = sorted(s.x0 for s in fig.layout.shapes)
    assert xs == pytest.approx([math.log(0.3 / 0.7), 0.0])
    assert "the model's cut, logit -0.847 (π = 0.3)" in fig.layout.title.text
    assert len(waterfall(table, cut=0.5).layout.shapes) == 1
    assert len(waterfall(table).layout.shapes) == 1


def _shown_names(fig) -> list[list[str]]:
    """What a reader sees as names: each axis's tick texts (or its categories when Plotly
    draws them as they are) and the legend's entries."""
    shown = []
    layout = fig.layout
    for name in dir(layout):
        if not (name.startswith("xaxis") or name.startswith("yaxis")):
            continue
        axis = getattr(layout, name)
        if axis is None or axis.showticklabels is False:
            continue
        if axis.ticktext is not None:
            shown.append([html.unescape(str(t)) for t in axis.ticktext])
    legend = [html.unescape(t.name) for t in fig.data if t.showlegend is not False and t.name]
    if len(legend) > 1:
        shown.append(legend)
    return shown


def test_names_sharing_a_long_prefix_stay_distinct_in_every_chart():
    """Issue #38: 19 bird names and ten audio feature names, cut at their end, read as nine
    identical stubs ("Pacific-slope Fly…", "Mean_Acc1000_Std_Mem40_…"). Names sharing a
    25-character prefix, and some also their last 20 characters, must be told apart in every
    chart that names classes or features."""
    from sblr.attribution import FeatureAttribution
    from sblr.plots import attribution_waterfall, waterfall

    prefix = "Pacific-slope Flycatcher " + "x"  # 25 characters in common, then one more
    tails = ["call", "song", "chip", "alarm call"]
    names = [f"{prefix}{t} {i} from the northern recording sites" for i, t in enumerate(tails)]
    names += [f"{prefix}{t}" for t in tails]  # short variants, prefix-only differences
    names += [f"Mean_Acc1000_Std_Mem40_MFCC_{i}" for i in range(4)]
    m = len(names)
    assert len({n[:25] for n in names[:8]}) == 1
    dense, sparse = _coefs(m)
    C = cooccurrence(np.random.default_rng(0).random((50, m)) < 0.3)
    counts = np.arange(1, m + 1)
    figures = {
        "β heatmaps": beta_heatmaps({"SBLR": dense, "SparseSBLR": sparse}, names),
        "co-occurrence": cooccurrence_heatmap(C, names),
        "label frequency": label_frequency_bar(counts, names, total=60),
        "probabilities": probability_bars(np.linspace(0.05, 0.95, m), names),
        "confusion": confusion_matrix_figure(np.eye(m, dtype=int) * 3, names),
        "path": regularization_path(
            np.logspace(-3, 0, 5), np.random.default_rng(1).normal(size=(5, m)), names
        ),
        "class waterfall": waterfall(
            pd.DataFrame(
                {
                    "term": ["intercept", *names],
                    "contribution": [0.1, *np.linspace(-1, 1, m) + 0.05],
                }
            )
        ),
        "feature waterfall": attribution_waterfall(
            FeatureAttribution(
                np.linspace(-1, 1, m) + 0.05,
                np.zeros(m),
                np.ones(m),
                output=0.5,
                output_baseline=0.0,
                k=0,
                quantity="logit",
                gap=0.0,
                n_nodes=16,
                feature_names=names,
            ),
            keep=m,
        ),
    }
    for what, fig in figures.items():
        lists = _shown_names(fig)
        for trace in fig.data:  # bars drawn with shortened categories as their y values
            if trace.type in ("bar", "waterfall") and trace.orientation == "h":
                lists.append([html.unescape(str(v)) for v in trace.y])
        assert lists, f"{what}: no names shown"
        for shown in lists:
            fixed = ("intercept", "logit", "baseline row", "this row")
            named = [s for s in shown if s not in fixed]
            assert len(set(named)) == len(named), f"{what}: names shown alike: {named}"


def test_matrix_column_names_are_flat_when_they_fit_else_upright():
    """Issue #38: Plotly tilted 19 long co-occurrence column names to 30°, where they overlap.
    Oracle: a name fits its cell when its drawn width (characters × font) is below the cell's."""
    short = cooccurrence_heatmap(np.eye(3, dtype=int) * 4, ["a", "b", "c"])
    assert short.layout.xaxis.tickangle == 0
    names = [f"Long-tailed Species {t:02d} (Genus)" for t in range(19)]
    long = cooccurrence_heatmap(np.eye(19, dtype=int) * 4, names)
    assert long.layout.xaxis.tickangle == -90
    assert confusion_matrix_figure(np.eye(19, dtype=int), names).layout.xaxis.tickangle == -90


def test_selection_frequencies_are_printed_in_the_cells_of_a_small_matrix():
    """Issue #38: lesson step 6 asks which weights are selected in at least 90% of the
    resamples, and the heatmap had no numbers. Up to 12 classes each cell prints its share;
    174 classes stay unprinted (hover)."""
    from sblr.plots import selection_frequency_heatmap

    S = np.array([[1.0, 0.9, 0.0], [0.12, 1.0, 0.895], [0.5, 0.0, 1.0]])
    trace = selection_frequency_heatmap(S, ["a", "b", "c"]).data[0]
    assert [list(r) for r in trace.text] == [
        ["100%", "90%", "0%"],
        ["12%", "100%", "89%"],  # rounded down: 89.5% is not "at least 90%"
        ["50%", "0%", "100%"],
    ]
    assert trace.texttemplate == "%{text}"
    big = selection_frequency_heatmap(np.eye(174), [f"c{i}" for i in range(174)]).data[0]
    assert big.text is None


def test_tuning_heatmap_puts_each_score_in_its_cell_and_rings_the_choice():
    """Issue #46, item 10. Oracle: the scores table read cell by cell (pandas' pivot)."""
    from sblr.plots import tuning_heatmap

    rng = np.random.default_rng(0)
    gammas, lams = [10.0, 1.0, 0.1], [1e-5, 1e-4, 1e-3, 1e-2]
    table = pd.DataFrame(
        [(g, lam, rng.random()) for g in gammas for lam in lams], columns=["gamma", "lam", "score"]
    ).sample(frac=1.0, random_state=0)  # in no particular order
    fig = tuning_heatmap(table, "Micro-F1 ↑", best={"gamma": 0.1, "lam": 1e-5})
    expected = table.pivot(index="gamma", columns="lam", values="score")
    expected = expected.sort_index(ascending=False)  # the largest γ first (on top)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), expected.to_numpy())
    assert fig.data[0].y == ("10", "1", "1e-1") and fig.data[0].x[0] == "1e-5"
    assert (fig.data[1].x, fig.data[1].y) == (("1e-5",), ("1e-1",))  # the choice, at the edge
    no_lam = tuning_heatmap(table[table.lam == 1e-5].drop(columns="lam"), "Micro-F1 ↑")
    assert no_lam.data[0].x == ("–",) and len(no_lam.data) == 1


def test_long_names_alike_but_for_a_middle_part_keep_that_part_on_the_bars():
    """Issue #46, item 8: CAL500-like feature names share a long prefix and differ in a part
    in the middle (Std / Mean) and one near the end (the MFCC index): cut at the window
    they looked alike. Oracle: the parts that differ, read off the names by hand, are each in
    the name's tick, the ticks are distinct, and the subtitle gives the key to the "…"."""
    from sblr.plots import feature_importance_bars

    stats, index = ("Std", "Mean"), (1, 2, 3)
    names = [f"Mean_Acc1298_{s}_Mem40_MFCC{i}_of_the_second_window" for s in stats for i in index]
    table = pd.DataFrame(
        {"feature": names, "mean_abs": np.linspace(1, 0.5, 6), "mean": 0.1, "share": 1 / 6}
    )
    fig = feature_importance_bars(table)
    ticks = list(fig.layout.yaxis.ticktext)
    assert len(set(ticks)) == 6
    for tick, (s, i) in zip(ticks, [(s, i) for s in stats for i in index], strict=True):
        assert s in tick and f"MFCC{i}" in tick, tick
    assert "… in the names: Acc1298 Mem40" in fig.layout.title.text
