"""Helpers shared by the AppTest suites of the dashboard (app.py + pages/).

Test files import them with ``from apptest_helpers import ...``: the suite runs with
``--import-mode=importlib``, which does not put ``tests/`` on ``sys.path``, so
``pyproject.toml`` adds it (``pythonpath = ["tests"]``), and ``tests/conftest.py``
registers this module for pytest's assertion rewriting (detailed assert messages).

Fixtures (``navigation_mode``, ``downloads``) stay in ``tests/conftest.py``.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

import numpy as np
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from sblr.textsafe import WORD_JOINER

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "sample_data"
#: The pages of the navigation menu (the compare page aside), in menu order.
PAGES = [
    "pages/data.py",
    "pages/model.py",
    "pages/coefficients.py",
    "pages/contributions.py",
    "pages/evidence.py",
    "pages/explain.py",
    "pages/predict.py",
    "pages/path.py",
    "pages/lesson.py",
]
#: Seconds one script run may take (AppTest's default_timeout).  Generous: a run that fits
#: SBLR on the 45-class upload of test_coefficients_page.py takes tens of seconds on two cores.
APP_TIMEOUT = 300


# ----------------------------------------------------------------------------- sessions
def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def assert_clean(at: AppTest) -> None:
    """No exception and no st.error on the page."""
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]


#: The λ the page tests open with (a link's lam=): the views their oracles were worked out at,
#: whatever the dashboard's default (tests/test_first_look.py checks the default itself).
PINNED_LAM = "0.001"


def start(query: dict[str, str] | None = None, *, pin_lam: bool = True) -> AppTest:
    """A new session on the home page (optionally opened with URL query parameters); λ pinned
    at :data:`PINNED_LAM` unless the query gives one or ``pin_lam=False``."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APP_TIMEOUT)
    query = dict(query or {})
    if pin_lam and "data" not in query and "step" not in query:
        query.setdefault("lam", PINNED_LAM)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert_clean(at)
    return at


def goto(at: AppTest, page: str, *, errors_ok: bool = False) -> AppTest:
    """Switch to ``page`` as the navigation menu does (app.py runs first, then the page).

    The page must run without an exception; without ``errors_ok`` also without st.error.
    """
    at.switch_page(page)
    at.run()
    if errors_ok:
        assert_no_exception(at)
    else:
        assert_clean(at)
    return at


def rerun(at: AppTest) -> AppTest:
    """Run the script again (after widget changes), which must stay clean."""
    at.run()
    assert_clean(at)
    return at


# ----------------------------------------------------------------------------- widgets
def widget(widgets, label: str):
    """The one widget of ``widgets`` (e.g. ``at.selectbox``) with this label (keys vary)."""
    found = [w for w in widgets if w.label == label]
    assert len(found) == 1, f"{len(found)} widgets labelled {label!r}"
    return found[0]


def keyed(widgets, key: str):
    """The one widget of ``widgets`` whose key is ``key`` or ``key:<file id>`` (per-file keys)."""
    found = [w for w in widgets if w.key == key or str(w.key).startswith(key + ":")]
    assert len(found) == 1, f"{len(found)} widgets keyed {key!r}"
    return found[0]


# ----------------------------------------------------------------------------- uploads
def upload(at: AppTest, name: str, data: bytes, key: str = "upload_file") -> AppTest:
    """Put ``data`` in the sidebar's file uploader ``key`` (not loaded yet: see click_load)."""
    keyed(at.get("file_uploader"), key).set_value((name, data, "application/octet-stream"))
    at.run()
    assert_no_exception(at)
    return at


def click_load(at: AppTest) -> AppTest:
    """Click "Load this file".  Only exceptions fail: a refused file shows an st.error."""
    at.button(key="upload_load").click()
    at.run()
    assert_no_exception(at)
    return at


def load_upload(at: AppTest, name: str, data: bytes, target: str | None = None) -> AppTest:
    """Upload a file, choose its target column (a delimited file's class column), load it."""
    upload(at, name, data)
    if target is not None:
        keyed(at.selectbox, "upload_target").set_value(target)
    return click_load(at)


def load_multilabel_upload(at: AppTest, name: str, data: bytes, labels) -> AppTest:
    """Upload a CSV, choose the multi-label task and its 0/1 label columns, load it."""
    upload(at, name, data)
    at.radio(key="upload_task").set_value("multi-label: several 0/1 label columns")
    at.run()
    widget(at.multiselect, "Label columns (0/1)").set_value(list(labels))
    at.run()
    return click_load(at)


# ----------------------------------------------------------------------------- charts, files
def chart(at: AppTest, key: str) -> dict:
    """The plotly figure (as JSON) of the st.plotly_chart with this key."""
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    assert len(found) == 1, f"no plotly chart with key {key!r}"
    return json.loads(found[0].proto.spec)


def array(value) -> np.ndarray:
    """A plotly array, decoding the binary ``{dtype, bdata, shape}`` form."""
    if isinstance(value, dict) and "bdata" in value:
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        if "shape" in value:
            out = out.reshape([int(n) for n in str(value["shape"]).split(",")])
        return out
    return np.asarray(value)


def shown_numbers(column) -> np.ndarray:
    """A table column as the reader sees its numbers (text, "–" for none) back as floats."""
    return np.array([np.nan if v == "–" else float(v) for v in column], dtype=float)


def button_file(files: dict[str, bytes], button) -> bytes:
    """The bytes a download button offers (``files``: the ``downloads`` fixture), whether
    written at once (the id is in its URL) or made when clicked (its deferred file id)."""
    proto = button.proto
    file_id = proto.deferred_file_id or proto.url.rsplit("/", 1)[1].split(".")[0]
    return files[file_id]


def download(at: AppTest, files: dict[str, bytes], label: str) -> bytes:
    """The bytes of the one download button labelled ``label``."""
    buttons = [b for b in at.get("download_button") if b.proto.label == label]
    assert len(buttons) == 1, f"no download button {label!r}"
    return button_file(files, buttons[0])


# ----------------------------------------------------------------------------- text
_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _plain(rendered_html: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", rendered_html)).replace(WORD_JOINER, "").strip()


def visible(markdown: str) -> str:
    """The text a reader sees of a Markdown string (tags dropped, entities decoded)."""
    return _plain(_MARKDOWN.render(markdown))


def rendered(markdown: str) -> str:
    """As :func:`visible`, asserting that the Markdown made no image and no link (user text
    shown on the page must stay text)."""
    out = _MARKDOWN.render(markdown)
    assert "<img" not in out and "<a " not in out, f"user text became markup: {out!r}"
    return _plain(out)


def texts(elements) -> str:
    """The visible text of Markdown elements (titles, captions, alerts ...), one per line."""
    return "\n".join(visible(str(e.value)) for e in elements)
