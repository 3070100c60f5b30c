"""Fast start: heavy modules are imported where they are used, not at start-up.

Each import runs in a fresh interpreter (``sys.executable -c``, from the repo
root as ``streamlit run app.py`` does) and the test reads ``sys.modules``
afterwards.  Structure only, no timings: ``benchmarks/startup.py`` measures
the seconds.  scikit-learn imports scipy.stats itself, so "no scipy.stats"
means "no scikit-learn" for ``import sblr`` and the dashboard's start.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
#: Seconds each to import (scipy.stats ~2-3 s under load); statsmodels comes with
#: scikit-posthocs, distributed with dask.
HEAVY = ("dask", "distributed", "statsmodels", "scikit_posthocs", "scipy.stats")
WATCHED = (*HEAVY, "plotly", "sklearn")


def loaded_after(code: str) -> set[str]:
    """The WATCHED modules in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    report = f"\nimport json, sys\nprint(json.dumps([m for m in {WATCHED!r} if m in sys.modules]))"
    proc = subprocess.run(
        [sys.executable, "-c", code + report],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    ("code", "absent"),
    [
        ("import sblr", HEAVY),
        # what app.py imports before its first page
        ("import pages._shared.cache, pages._shared.state, pages._shared.lesson", HEAVY),
        ("import sblr.stats", ("plotly",)),  # the statistics (and the CLI's) do not draw
        ("import sblr.scaling", ("sklearn",)),  # the sidebar's "γ = scale is …" on any page
        # the library without drawing; the figure builders import plotly when they draw
        (
            "import sblr, sblr.stats, sblr.protocol, sblr.models, sblr.plots, pages._shared.report",
            ("plotly",),
        ),
        ("import sblr.cli", ("plotly", "dask", "distributed", "statsmodels", "scikit_posthocs")),
    ],
)
def test_heavy_modules_not_imported_at_start(code, absent):
    present = loaded_after(code) & set(absent)
    assert not present, f"`{code}` imports {sorted(present)}"


def test_first_page_needs_no_scikit_learn():
    """The home page's first script run (AppTest: no browser) draws plotly, nothing heavier."""
    code = (
        "import streamlit.logger\n"
        "streamlit.logger.set_log_level('error')\n"
        "from streamlit.testing.v1 import AppTest\n"
        "at = AppTest.from_file('app.py', default_timeout=120).run()\n"
        "assert not at.exception and not at.error, [*at.exception, *at.error]\n"
        "assert at.title, 'the home page was not drawn'"
    )
    loaded = loaded_after(code)
    assert "plotly" in loaded  # the label-frequency chart is drawn
    assert not loaded & {*HEAVY, "sklearn"}, sorted(loaded)


def test_lazy_public_names_are_the_modules_objects():
    """``sblr``'s names, imported on first use, are the same objects as before."""
    import sblr
    from sblr import io, models, similarity, tuning

    assert sblr.SBLRClassifier is models.SBLRClassifier
    assert sblr.SparseSBLRCV is tuning.SparseSBLRCV
    assert sblr.SimilarityFeaturizer is similarity.SimilarityFeaturizer
    assert sblr.load_dataset is io.load_dataset
    assert sblr.metrics.__name__ == "sblr.metrics" and sblr.interpret.__name__ == "sblr.interpret"
    assert set(sblr.__all__) <= set(dir(sblr))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        sblr.no_such_name  # noqa: B018


def test_dashboard_model_names_are_the_models():
    """The sidebar writes the model names out (sblr.models imports scikit-learn)."""
    from pages._shared import state as common
    from sblr.models import MODELS

    assert common.MODEL_NAMES == list(MODELS)


def test_approx_decision_is_the_similarity_modules():
    from sblr import _approx, similarity

    assert similarity.resolve_approx is _approx.resolve_approx
    assert similarity.AUTO_APPROX_ROWS == _approx.AUTO_APPROX_ROWS == 20_000
