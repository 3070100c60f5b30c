"""pages._shared.report: the standalone HTML file and the analysis report assembled from fitted
models."""

from __future__ import annotations

import dataclasses
import html

import numpy as np
import pandas as pd
import pytest

from pages._shared.report import Analysis, analysis_report, html_report
from sblr import DataError
from sblr.evaluation import evaluate
from sblr.models import SBLRClassifier, SparseSBLRClassifier
from sblr.samples import load_sample


def analysis(name, k, *, class_names=None):
    """The report of sample ``name`` for class ``k``, with what it was made from."""
    ds = load_sample(name)
    if class_names is not None:
        ds = dataclasses.replace(ds, class_names=class_names)
    sblr_model = SBLRClassifier().fit(ds.X, ds.y)
    sparse = SparseSBLRClassifier(lam=1e-3).fit(ds.X, ds.y)
    F = sparse.featurizer_.training_evidence()
    result = evaluate(SparseSBLRClassifier(lam=1e-3), ds.X, ds.y)
    page = analysis_report(
        ds,
        k,
        Analysis(
            sblr_model=sblr_model,
            sparse_model=sparse,
            evidence=F,
            evaluation=result,
            model="SparseSBLR",
            context={"data": ds.name, "evaluation": "25% hold-out split"},
        ),
    )
    return page, ds, sblr_model, sparse, F, result


@pytest.mark.slow
@pytest.mark.parametrize(("name", "k"), [("wine", 1), ("planted", 2)])
def test_analysis_report_shows_the_numbers_it_was_given(name, k):
    """Oracle: the evaluation's means, and class k's row of β̃ = β · sd(evidence) of both
    models, computed here from the fitted models."""
    page, ds, sblr_model, sparse, F, result = analysis(name, k)
    text = html.unescape(page)
    for value in result.summary["mean"]:  # as the dashboard writes them: three decimals
        assert f"<td>{value:.3f}</td>" in page, value
    sd = F.std(axis=0)
    for model in (sblr_model, sparse):
        for value in model.coef_[k] * sd:
            assert f"<td>{value:.3g}</td>" in page, value
    assert f"Class contributions to {ds.class_names[k]}" in text
    assert "The paper's claim, tested for this class" in text
    measure = "mean evidence on k's rows" if ds.task == "multiclass" else "P(k | t)"
    assert measure in text
    assert page.count("<script") >= 1  # plotly.js inlined: the file opens offline
    for row in ("data", "evaluation", "class k", "rows × features", "classes"):
        assert f"<th>{row}</th>" in text


@pytest.mark.slow
def test_analysis_report_escapes_the_users_text():
    """Class names come from the user's file: text on the page, never markup."""
    names = ["<b>x</b>", "y&z", "<script>alert(1)</script>", "d", "e", "f", "g"]
    page = analysis("planted", 2, class_names=names)[0]  # multi-label: any names
    assert "<script>alert(1)</script>" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_html_report_sections():
    table = pd.DataFrame({"metric": ["a"], "value": [np.pi]})
    page = html_report("t", {"k": "v"}, [("T", table, "a note"), ("P", "plain <i>text</i>")])
    assert "<td>3.14</td>" in page and "a note" in page
    assert "plain &lt;i&gt;text&lt;/i&gt;" in page
    with pytest.raises(DataError, match="DataFrame, a Figure or text"):
        html_report("t", {}, [("bad", 1.0)])
    with pytest.raises(DataError, match="heading, content"):
        html_report("t", {}, [("only a heading",)])


@pytest.mark.slow
def test_analysis_report_tables_have_readable_headers_and_no_index():
    """Found on public data: a pandas index column 0-7, a 'mean' of one hold-out split, and
    code names (beta_std, p_k_given_t) in the report."""
    page, ds, *_ = analysis("planted", 2)
    text = html.unescape(page)
    for header in ("metric", "value", "class", "co-occurrence", "SBLR β", "SparseSBLR β̃"):
        assert f"<th>{header}</th>" in text, header
    for code in ("beta_std", "p_k_given_t", "cooccurrence", "<th>mean</th>", "<th></th>"):
        assert code not in text, code


@pytest.mark.slow
def test_the_report_is_small_names_models_as_the_dashboard_and_carries_its_warnings():
    """4.9 MB (plotly.js inlined as is), "SBLR beta" in its text, and no word of the
    identifiability warning the dashboard shows. Oracle: the library's diagnostics of the
    same SBLR fit."""
    from sblr.diagnostics import evidence_diagnostics

    page, ds, sblr_model, sparse, F, _ = analysis("planted", 2)
    assert len(page.encode()) < 2.6e6
    text = html.unescape(page)
    assert "SBLR beta" not in text and "SparseSBLR beta" not in text
    unreliable = evidence_diagnostics(sblr_model, F).unreliable
    assert ("SBLR's coefficients cannot be read one by one here" in text) == unreliable
    assert unreliable  # the planted sample's near-copies (daylight, birdsong): it shows
    import re

    visible = re.sub(r"<script>.*?</script>", "", text, flags=re.S)
    assert not re.search(r"\bnan\b|\bNone\b", visible)
    # SparseSBLR before SBLR, as on the Coefficients page; the warning one sentence, its
    # numbers in the note below it (issue #46, item 14)
    assert visible.index("<th>SparseSBLR β</th>") < visible.index("<th>SBLR β</th>")
    (warning,) = re.findall(r"<h2>Read the coefficients with care</h2>\s*<p>(.*?)</p>", visible)
    assert "VIF" not in warning and warning.count(". ") == 0, warning


@pytest.mark.slow  # a second or more: the full suite and CI run it
def test_the_reports_heatmaps_are_seen_at_once_as_a_still_picture():
    """Issue #38 row 10: the report's first figure appeared 14.6 s after opening (plotly.js is
    unpacked and run first). Each heatmap now comes with an inline SVG of its cells, which the
    interactive figure replaces. Oracle: plotly's own colour scale sampled at the cell values."""
    import re

    from sblr.plots import BETA_COLORSCALE, beta_heatmaps

    B = np.array([[2.0, 0.0, -1.0], [0.5, 1.0, 0.0], [0.0, -2.0, 1.5]])
    fig = beta_heatmaps({"SparseSBLR": B}, ["a", "b", "<c>"])
    page = html_report("r", {}, [("β", fig)])
    svg = re.search(r"<svg.*?</svg>", page, re.S).group(0)
    fills = re.findall(r'<rect [^>]*fill="([^"]+)"', svg)
    assert len(fills) == 9
    assert fig.layout.coloraxis.cmax == B[0, 0]  # the top of the scale: its last colour
    top = BETA_COLORSCALE[-1][1]
    assert fills[0] == "rgb({},{},{})".format(*(int(top[i : i + 2], 16) for i in (1, 3, 5)))
    assert fills[1] == "rgb(255,255,255)"  # an exact zero is a gap: white, as plotly draws it
    assert "<c>" not in svg  # a name is text, never markup
    # the script clears the picture before drawing the interactive figure into the same place
    assert "el.innerHTML = ''" in page and page.index("<svg") < page.index("newPlot")
