"""How large a model file's table of contents is, and what opening one costs: the figures
behind ``sblr.modelfile.MAX_SCHEMA_MB``, ``MAX_SCHEMA_VALUES`` and ``MAX_SCHEMA_DEPTH``.

A skops model file is a zip of one ``schema.json`` (every object, field and list element of
the model, each a JSON object of six fields) and one ``.npy`` member per array.  Two parts:

* ``written``: what sblr itself writes for large models -- every estimator the dashboard
  fits on ``--rows`` rows of ``--features`` features and ``--classes`` labels (BR-SVM: one
  SVM per class, the widest schema per class), and a SparseSBLR on a wide file
  (``--wide`` features, 300 rows: the feature names, the encoding and its column means
  are the widest schema per feature).  Per file: its size, its schema's MB, values and
  nesting, and the peak memory and seconds of ``load_model`` in a fresh process;
* ``crafted``: files made to cost the most at the limits -- the 62 kB file whose schema is
  63 MB of ``[],`` (issue #44), a 250 MB schema beside a 3 MB random member (its ratio
  passes the archive check), and schemas just inside the limits built of empty lists, of
  short texts, of keys, and of skops's own nodes (which skops turns into a tree of Python
  objects before it refuses them) -- with the same measurements.

Run from the repository root, as a module (sblr must be importable: ``pip install -e .`` in
the repository)::

    python -m benchmarks.model_schema                 # both parts (BR-SVM's fit: ~2 min)
    python -m benchmarks.model_schema --part crafted  # seconds
    python -m benchmarks.model_schema --rows 2000 --features 100 --classes 300 --wide 20000

Peak memory is the child process's maximum resident set (``getrusage``), after importing
sblr, scikit-learn and skops (given separately): what opening the file adds to a server.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def peak_mb():
    """This process's peak resident memory (MB): ``VmHWM``, which starts afresh at ``exec``
    (``getrusage``'s ``ru_maxrss`` keeps the peak of the process that forked it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource  # not Linux: the rusage peak

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _open_and_measure(path):
    """In this (child) process: import, then open ``path``; print the outcome and the peak."""
    import sklearn  # noqa: F401
    import skops.io  # noqa: F401 (imported before the measurement: not the file's cost)

    import sblr.baselines  # noqa: F401
    from sblr.modelfile import ModelFileError, load_model

    before = peak_mb()
    start = time.perf_counter()
    try:
        load_model(path)
        outcome = "opened"
    except ModelFileError as exc:
        outcome = "refused: " + str(exc)[:110]
    seconds = time.perf_counter() - start
    peak = peak_mb()
    print(json.dumps({"outcome": outcome, "seconds": seconds, "peak": peak, "imports": before}))


def _measure(path):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.model_schema", "--open", str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def schema_figures(data):
    """(MB, values, depth) of a model file's schema, counted as load_model counts them."""
    from sblr.modelfile import _nesting_depth

    text = zipfile.ZipFile(io.BytesIO(data)).read("schema.json")
    values = 1 + sum(text.count(c) for c in (b"[", b"{", b",", b":"))
    return len(text) / 2**20, values, _nesting_depth(text)


def _report(label, path):
    data = Path(path).read_bytes()
    mb, values, depth = schema_figures(data)
    m = _measure(path)
    print(
        f"{label:<44} {len(data) / 2**20:8.2f} {mb:8.2f} {values:>11,} {depth:>7,} "
        f"{m['peak']:7.0f} {m['peak'] - m['imports']:7.0f} {m['seconds']:6.1f}  {m['outcome']}",
        flush=True,
    )


def _header():
    print(
        f"{'file':<44} {'file MB':>8} {'schema':>8} {'values':>11} {'depth':>7} "
        f"{'peak MB':>7} {'+MB':>7} {'s':>6}  outcome"
    )


def _wide_csv(n, d, m, seed=0):
    """A CSV of ``n`` rows, ``d`` numeric features and ``m`` 0/1 label columns."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).round(3)
    Y = (rng.random((n, m)) < 0.1).astype(int)
    Y[np.arange(n), rng.integers(0, m, n)] = 1
    out = io.StringIO()
    out.write(",".join([*(f"feature_{j}" for j in range(d)), *(f"label_{k}" for k in range(m))]))
    out.write("\n")
    for i in range(n):
        out.write(",".join([*(f"{v:g}" for v in X[i]), *(str(v) for v in Y[i])]) + "\n")
    return out.getvalue().encode()


def written(args, folder):
    from sblr import SBLRClassifier, SMLClassifier, SparseSBLRClassifier
    from sblr.baselines import BRSVMClassifier, IBLRClassifier, MLkNNClassifier
    from sblr.io import load_dataset
    from sblr.modelfile import save_model
    from sblr.registry import BR_SVM, IBLR, MLKNN, SBLR, SML, SPARSE_SBLR

    n, d, m = args.rows, args.features, args.classes
    ds = load_dataset(_wide_csv(n, d, m), name="large.csv", n_labels=m)
    models = {
        SPARSE_SBLR.label: lambda: SparseSBLRClassifier(lam=1e-3),
        SBLR.label: SBLRClassifier,
        SML.label: SMLClassifier,
        MLKNN.spoken: MLkNNClassifier,
        IBLR.label: IBLRClassifier,
        BR_SVM.label: BRSVMClassifier,
    }
    for name, make in models.items():
        path = folder / f"{name}.skops"
        save_model(make().fit(ds.X, ds.y), path, dataset=ds)
        _report(f"{name}, {n:,} x {d:,}, {m:,} classes", path)
    wide = load_dataset(_wide_csv(300, args.wide, 20), name="wide.csv", n_labels=20)
    path = folder / "wide.skops"
    save_model(SparseSBLRClassifier(lam=1e-3).fit(wide.X, wide.y), path, dataset=wide)
    _report(f"{SPARSE_SBLR.label}, 300 x {args.wide:,}, 20 classes", path)


def _zip(members, level=9):
    """A zip of ``{name: bytes or (chunk, times)}``, deflated (a chunk repeated is written
    chunk by chunk, never held whole)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as zf:
        for name, content in members.items():
            with zf.open(name, "w", force_zip64=True) as member:
                if isinstance(content, bytes):
                    member.write(content)
                    continue
                head, chunk, times, tail = content
                member.write(head)
                for _ in range(times):
                    member.write(chunk)
                member.write(tail)
    return buf.getvalue()


def _skops_nodes(count):
    """A schema skops reads as a list of ``count`` small texts (compact: no indent)."""
    leaf = (
        b'{"__class__":"str","__module__":"builtins","__loader__":"JsonNode",'
        b'"content":"\\"x\\"","is_json":true,"__id__":1},'
    )
    head = (
        b'{"__class__":"dict","__module__":"builtins","__loader__":"DictNode","__id__":0,'
        b'"protocol":2,"_skops_version":"0.16.0","key_types":{"__class__":"list",'
        b'"__module__":"builtins","__loader__":"ListNode","__id__":3,"content":[{"__class__":'
        b'"str","__module__":"builtins","__loader__":"TypeNode","__id__":4}]},'
        b'"content":{"info":{"__class__":"list","__module__":"builtins","__loader__":'
        b'"ListNode","__id__":2,"content":['
    )
    tail = leaf[:-1] + b"]}}}"
    return head, leaf, count, tail


def crafted(folder):
    from sblr.modelfile import MAX_SCHEMA_DEPTH, MAX_SCHEMA_MB, MAX_SCHEMA_VALUES

    files = {
        "62 kB: 63 MB of '[],' (issue #44)": _zip(
            {"schema.json": (b"[", b"[]," * (2**20 // 3), 63, b"[]]")}
        ),
        "3.3 MB: 250 MB schema + 3 MB random member": _zip(
            {
                "schema.json": (b"[", b"[]," * (2**20 // 3), 250, b"[]]"),
                "noise.npy": np.random.default_rng(0).bytes(3 * 2**20),
            }
        ),
        "empty lists, at the value limit": _zip(
            {"schema.json": (b"[", b"[],", MAX_SCHEMA_VALUES // 2 - 2, b"[]]")}
        ),
        "short texts, at the value limit": _zip(
            {"schema.json": (b"[", b'"ab",', MAX_SCHEMA_VALUES - 2, b'"ab"]')}
        ),
        "long texts, at the size and value limits": _zip(
            {
                "schema.json": (
                    b"[",
                    b'"' + b"a" * (MAX_SCHEMA_MB * 2**20 // MAX_SCHEMA_VALUES - 3) + b'",',
                    MAX_SCHEMA_VALUES - 2,
                    b'"a"]',
                )
            }
        ),
        "skops nodes, at the value limit": _zip(
            {"schema.json": _skops_nodes(MAX_SCHEMA_VALUES // 13 - 10)}
        ),
        "nested lists, at the depth limit": _zip(
            {"schema.json": b"[" * MAX_SCHEMA_DEPTH + b"]" * MAX_SCHEMA_DEPTH}
        ),
        "nested lists, 100,000 deep": _zip({"schema.json": b"[" * 100_000 + b"]" * 100_000}),
    }
    for label, data in files.items():
        path = folder / "crafted.skops"
        path.write_bytes(data)
        _report(label, path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=("written", "crafted", "both"), default="both")
    p.add_argument("--rows", type=int, default=2000)
    p.add_argument("--features", type=int, default=100)
    p.add_argument("--classes", type=int, default=300)
    p.add_argument("--wide", type=int, default=20_000, help="features of the wide file")
    p.add_argument("--open", help=argparse.SUPPRESS)  # the child: open one file, measure
    args = p.parse_args(argv)
    if args.open:
        return _open_and_measure(args.open)
    with tempfile.TemporaryDirectory() as tmp:
        _header()
        if args.part in ("crafted", "both"):
            crafted(Path(tmp))
        if args.part in ("written", "both"):
            written(args, Path(tmp))


if __name__ == "__main__":
    main()
