"""A model file's table of contents (``schema.json``) bounded before it is parsed (issue #44
row 1): parsed whole, a 62 kB file whose schema is 63 MB of ``[],`` took the server to
1,988 MB; now its size, its values and its nesting are counted on its bytes first.

The fast tests build small files that cross one limit each (many values in few bytes, a
directory stating too many bytes, deep nesting) and check the count against an oracle
(``json.loads`` and a walk of what it returns); the slow ones open the issue's files in a
child process under a cap of its address space and measure its peak.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sblr.modelfile as mf
from sblr.modelfile import ModelFileError, load_model

ROOT = Path(__file__).resolve().parents[1]


def _zip(schema_parts, others=None):
    """A deflated zip whose schema.json is ``head + chunk * times + tail`` (written chunk by
    chunk), beside ``others`` (name: bytes)."""
    head, chunk, times, tail = schema_parts
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("schema.json", "w", force_zip64=True) as member:
            member.write(head)
            for _ in range(times):
                member.write(chunk)
            member.write(tail)
        for name, content in (others or {}).items():
            zf.writestr(name, content)
    return buf.getvalue()


def _refusal_cost(data):
    """``(message, MB)``: the ModelFileError that ``load_model(data)`` raises and the memory
    allocated beyond the file itself while refusing it (traced by tracemalloc)."""
    import skops.io  # noqa: F401 (imported before the count: an import is not the file's cost)

    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError) as refused:
            load_model(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return str(refused.value), (peak - len(data)) / 2**20


def test_a_schema_of_too_many_values_in_few_bytes_is_refused_before_it_is_parsed():
    """A 5 kB file unpacking to 4.5 MB of ``[],``: 3 million values (each a Python list once
    parsed, ~200 MB) -- refused as it is unpacked, within a few MB."""
    data = _zip((b"[", b"[]," * 1000, mf.MAX_SCHEMA_VALUES // 2000 + 1, b"[]]"))
    assert len(data) < 64 * 2**10
    message, mb = _refusal_cost(data)
    assert "more than 3,000,000 values" in message and mb < 8, (message, mb)


def test_a_schema_larger_than_the_limit_is_refused_from_the_directory(monkeypatch):
    """The size the zip directory states is read before any byte is unpacked."""
    monkeypatch.setattr(mf, "MAX_SCHEMA_MB", 1)
    data = _zip((b'"', b" " * 2**16, 20, b'"'))  # one text of 1.25 MB: few values, too large
    message, mb = _refusal_cost(data)
    assert "table of contents of 1 MB, more than a model file's 1 MB" in message, message
    assert mb < 1, mb


def test_a_schema_nested_too_deep_is_refused():
    deep = mf.MAX_SCHEMA_DEPTH + 1
    data = _zip((b"[" * deep, b"", 0, b"]" * deep))
    with pytest.raises(ModelFileError, match=f"nested {deep} levels deep"):
        load_model(data)
    text = b"[" * mf.MAX_SCHEMA_DEPTH + b"]" * mf.MAX_SCHEMA_DEPTH  # at the limit: parsed,
    with pytest.raises(ModelFileError, match="damaged or truncated"):  # and not a model file
        load_model(_zip((text, b"", 0, b"")))


def test_a_file_without_a_schema_is_damaged():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("other.json", "{}")
    with pytest.raises(ModelFileError, match="has no schema.json"):
        load_model(buf.getvalue())


def _depth(value):
    """Oracle: the nesting of what json.loads returned (a scalar: 0)."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _values(value):
    """Oracle: the values and keys of a parsed JSON document."""
    if isinstance(value, dict):
        return 1 + len(value) + sum(map(_values, value.values()))
    if isinstance(value, list):
        return 1 + sum(map(_values, value))
    return 1


#: Texts with what a scan of the bytes could mistake for structure: brackets, quotes,
#: backslashes (escaped in the JSON), colons and commas.
_TEXT = st.text(alphabet=st.sampled_from('ab[]{}"\\:,\n\u00e9'), max_size=8)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=30,
)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(_JSON, st.booleans())
def test_nesting_and_values_counted_on_the_bytes_match_the_parsed_document(document, indent):
    """The depth counted on the bytes is the parsed document's exactly, whatever brackets,
    quotes and backslashes its texts hold; the values counted are an upper bound."""
    text = json.dumps(document, indent=2 if indent else None).encode()
    assert mf._nesting_depth(text) == _depth(document)
    counted = 1 + sum(text.count(c) for c in (b"[", b"{", b",", b":"))
    assert counted >= _values(document)


@pytest.mark.slow
def test_what_sblr_writes_is_far_inside_the_limits():
    """A saved model's schema: its values, nesting and size, counted as load_model counts
    them, at most a fraction of the limits (benchmarks/model_schema.py: 20,000 features, 38.9
    MB and 1.76 million values)."""
    import numpy as np

    from sblr import SparseSBLRCV
    from sblr.modelfile import model_bytes
    from sblr.samples import load_sample

    ds = load_sample("planted")
    model = SparseSBLRCV(gammas=(1.0, 0.1), lams=(1e-2, 1e-4)).fit(ds.X, ds.y)
    text = zipfile.ZipFile(io.BytesIO(model_bytes(model, dataset=ds))).read("schema.json")
    values = 1 + sum(text.count(c) for c in (b"[", b"{", b",", b":"))
    assert values < mf.MAX_SCHEMA_VALUES / 100
    assert len(text) < mf.MAX_SCHEMA_MB * 2**20 / 100
    assert mf._nesting_depth(text) == _depth(json.loads(text)) <= mf.MAX_SCHEMA_DEPTH / 4
    assert np.isfinite(values)


#: The child's address space: Python with NumPy, SciPy, scikit-learn and skops maps about
#: 1.2 GB of virtual memory (thread stacks, BLAS buffers) before it opens anything; the
#: issue's file parsed whole needs 2 GB more.
_ADDRESS_SPACE_MB = 2048


def _open_in_a_capped_child(path, tmp_path):
    """Open ``path`` in a fresh interpreter whose address space is capped; its outcome, its
    peak resident memory (MB) and the peak after its imports."""
    script = tmp_path / "child.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, resource
            from pathlib import Path
            resource.setrlimit(resource.RLIMIT_AS, ({_ADDRESS_SPACE_MB} * 2**20,) * 2)

            def peak():
                # VmHWM starts afresh at exec; getrusage's ru_maxrss keeps the peak of the
                # process that forked this one (here: pytest's)
                for line in Path("/proc/self/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
                return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

            import skops.io, sklearn, sblr.baselines  # not the file's cost
            from sblr.modelfile import ModelFileError, load_model
            imports = peak()
            try:
                load_model({str(path)!r})
                outcome = "opened"
            except ModelFileError as exc:
                outcome = "refused: " + str(exc)
            print(json.dumps({{"outcome": outcome, "peak": peak(), "imports": imports}}))
            """
        )
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory read from /proc")
@pytest.mark.parametrize(
    "largest_mb, parts, others, match",
    [
        (0.1, (b"[", b"[]," * (2**20 // 3), 63, b"[]]"), None, "values"),
        (
            3.5,
            (b"[", b"[]," * (2**20 // 3), 250, b"[]]"),
            {"noise.npy": os.urandom(3 * 2**20)},
            "table of contents of 250 MB",
        ),
    ],
    ids=["62 kB of 63 MB of '[],'", "3.3 MB of a 250 MB schema beside noise"],
)
def test_the_files_of_issue_44_are_refused_below_600_mb(largest_mb, parts, others, match, tmp_path):
    """The 62 kB file of 63 MB of ``[],`` (1,988 MB in the server before), and a 3.3 MB file
    of a 250 MB schema beside 3 MB of noise, whose ratio of 77 passes the archive check."""
    data = _zip(parts, others)
    assert len(data) < largest_mb * 2**20
    path = tmp_path / "crafted.skops"
    path.write_bytes(data)
    result = _open_in_a_capped_child(path, tmp_path)
    assert result["outcome"].startswith("refused") and match in result["outcome"], result
    assert result["peak"] < 600, result
