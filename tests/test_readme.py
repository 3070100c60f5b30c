"""The README's commands and example are the ones that work."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_opens_with_the_two_fresh_machine_commands():
    blocks = re.findall(r"```\n(.*?)```", README, flags=re.S)
    assert blocks[0].strip() == "pip install -r requirements.txt && streamlit run app.py"
    assert blocks[1].strip() == (
        "pip install -r requirements-test.txt && python -m pytest -n auto --dist loadfile"
    )
    # .ci/run runs the README's test command itself (read from the README)
    ci = (ROOT / ".ci" / "run").read_text()
    assert "grep -m1 -E '^pip install -r requirements-test.txt && ' README.md" in ci
    assert 'eval "$test_command"' in ci


@pytest.mark.slow
def test_library_example_runs(tmp_path):
    code = re.search(r"```python\n(.*?)```", README, flags=re.S).group(1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "average_precision" in out.stdout and "cooccurrence" in out.stdout


def test_the_readme_links_only_to_pages_that_exist():
    """The README is the contract; the tour, hosting, evaluation and layout live in docs/
    pages it links to. A link to a page that is gone is a broken promise."""
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert {"docs/dashboard.md", "docs/hosting.md", "docs/evaluation.md", "docs/layout.md"} <= set(
        links
    )
    missing = [link for link in links if not link.startswith("http") and not (ROOT / link).exists()]
    assert not missing, missing
