"""Read times of sblr's loader against pandas and liac-arff on the same files.

sblr reads CSV rows through pandas' C parser (after sniffing the separator) and plain dense
ARFF data through pandas too; wide files, and dense ARFF with quotes or comments, line by
line; sparse ARFF through its own reader (one value path per file shape: the module
docstrings of sblr/io/_csv.py and _arff.py). This script times, in one run and as the
median of ``--repeats`` reads:

* a generated CSV of 100,000 rows x 22 columns (20 numbers, one text column, the class):
  ``sblr.load_dataset`` against ``pandas.read_csv`` of the same bytes (pandas only parses;
  sblr also encodes, imputes and checks, so the ratio is what the extra work costs);
* wide files (``--wide`` alone): a generated dense ARFF of 100,000 numeric attributes x 5
  rows and a CSV of 50,000 numeric columns x 5 rows, ``sblr.load_dataset`` against the same
  file forced through pandas' parser (what sblr did before wide files were read line by
  line), CPU seconds and the peak of traced memory (tracemalloc: Python and NumPy
  allocations);
* the Mulan ARFF files of ``../shared/datasets/multilabel`` (yeast, scene, genbase,
  emotions; skipped with a note where absent): ``sblr.load_dataset`` (with the label
  file) against ``arff.loads`` of liac-arff (parsing only);
* every ARFF file of that folder (``--mulan`` alone): ``sblr.load_dataset`` of the file as
  Mulan ships it (its data set's XML found beside it), wall seconds and CPU seconds, with
  its shape and label count.

Run from the repo root (with sblr importable: `pip install -e .` in the repository)::

    python -m benchmarks.io_read [--repeats 5] [--wide | --mulan]
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from pathlib import Path

import numpy as np

from sblr import load_dataset

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "multilabel"


def median_seconds(func, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def csv_bytes(n_rows=100_000, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    numbers = rng.normal(size=(n_rows, 20)).round(4)
    colour = rng.choice(["red", "green", "blue"], size=n_rows)
    label = rng.choice(["a", "b", "c"], size=n_rows)
    out = io.StringIO()
    out.write(",".join([f"x{j}" for j in range(20)] + ["colour", "class"]) + "\n")
    for row, c, y in zip(numbers, colour, label, strict=True):
        out.write(",".join(map(str, row)) + f",{c},{y}\n")
    return out.getvalue().encode()


def wide_arff_bytes(n_attributes=100_000, n_rows=5, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    lines = ["@relation wide"] + [f"@attribute a{i} numeric" for i in range(n_attributes)]
    lines += ["@attribute class {x,y}", "@data"]
    for r in range(n_rows):
        values = ",".join(f"{v:.3f}" for v in rng.random(n_attributes))
        lines.append(values + ("," + ("x" if r % 2 else "y")))
    return "\n".join(lines).encode()


def cpu_seconds(func, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        func()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def wide_csv_bytes(n_columns=50_000, n_rows=5, seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    lines = [",".join([f"c{i}" for i in range(n_columns)] + ["class"])]
    for r in range(n_rows):
        values = ",".join(f"{v:.3f}" for v in rng.random(n_columns))
        lines.append(values + ("," + ("x" if r % 2 else "y")))
    return "\n".join(lines).encode()


def peak_mb(func) -> float:
    import tracemalloc

    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def wide_files(repeats):
    """The wide files, read as sblr reads them and forced through pandas' parser."""
    import sblr.io._arff as arff_io
    import sblr.io._csv as csv_io

    files = (
        ("dense ARFF 100,000 attributes x 5 rows", wide_arff_bytes(), "wide.arff", {}),
        ("CSV 50,000 columns x 5 rows", wide_csv_bytes(), "wide.csv", {"target": "class"}),
    )
    for label, data, name, options in files:

        def read(data=data, name=name, options=options):
            load_dataset(data, name=name, **options)

        ours, ours_mb = cpu_seconds(read, repeats), peak_mb(read)
        saved = arff_io.WIDE_COLUMNS_PER_ROW, csv_io.WIDE_COLUMNS_PER_ROW
        arff_io.WIDE_COLUMNS_PER_ROW = csv_io.WIDE_COLUMNS_PER_ROW = 10**9  # pandas, as before
        try:
            forced, forced_mb = cpu_seconds(read, repeats), peak_mb(read)
        finally:
            arff_io.WIDE_COLUMNS_PER_ROW, csv_io.WIDE_COLUMNS_PER_ROW = saved
        print(
            f"{label}: {ours:.2f} CPU-s, {ours_mb:.0f} MB peak (line by line); through pandas' "
            f"parser {forced:.2f} CPU-s, {forced_mb:.0f} MB: {forced / ours:.1f}x the time"
        )


def mulan_files(repeats):
    """Every shared Mulan file, loaded as shipped (the XML found beside it)."""
    files = sorted(DATA.glob("*.arff"), key=lambda p: p.stat().st_size) if DATA.is_dir() else []
    if not files:
        print(f"{DATA}: no ARFF files, skipped")
        return
    load_dataset(files[0])  # the first load imports pandas and SciPy's sparse module
    print(f"{'file':28s} {'MB':>5s} {'wall s':>7s} {'CPU s':>6s}  rows x features, labels")
    for path in files:
        wall = median_seconds(lambda path=path: load_dataset(path), repeats)
        cpu = cpu_seconds(lambda path=path: load_dataset(path), repeats)
        ds = load_dataset(path)
        print(
            f"{path.name:28s} {path.stat().st_size / 2**20:5.2f} {wall:7.2f} {cpu:6.2f}  "
            f"{ds.n_samples:,} x {ds.X.shape[1]:,}, {ds.n_classes:,}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--wide", "--wide-arff", action="store_true", help="the wide files")
    parser.add_argument("--mulan", action="store_true", help="every shared Mulan file")
    args = parser.parse_args()
    if args.mulan:
        mulan_files(args.repeats)
        return
    if args.wide:
        wide_files(args.repeats)
        return
    import arff
    import pandas as pd

    rows = []
    data = csv_bytes()
    sblr_s = median_seconds(
        lambda: load_dataset(data, name="gen.csv", target="class"), args.repeats
    )
    pandas_s = median_seconds(lambda: pd.read_csv(io.BytesIO(data)), args.repeats)
    rows.append(("CSV 100,000 x 22", "pandas.read_csv", sblr_s, pandas_s))
    for name in ("yeast", "scene", "genbase", "emotions"):
        path = DATA / f"{name}.arff"
        if not path.exists():
            print(f"{name}: {path} not found, skipped")
            continue
        raw, xml = path.read_bytes(), (DATA / f"{name}.xml").read_bytes()
        text = raw.decode("utf-8", "replace")
        sblr_s = median_seconds(
            lambda raw=raw, xml=xml, name=name: load_dataset(raw, name=f"{name}.arff", xml=xml),
            args.repeats,
        )
        sparse = "{" in text.split("@data", 1)[-1][:2000].lower()
        liac_s = median_seconds(
            lambda text=text, sparse=sparse: arff.loads(
                text, **({"return_type": arff.COO} if sparse else {})
            ),
            args.repeats,
        )
        what = f"ARFF {name}" + (" (sparse)" if sparse else "")
        rows.append((what, "liac-arff", sblr_s, liac_s))
    print(f"{'file':28s} {'sblr s':>8s} {'other':>16s} {'other s':>8s} {'sblr/other':>10s}")
    for what, other, ours, theirs in rows:
        print(f"{what:28s} {ours:8.3f} {other:>16s} {theirs:8.3f} {ours / theirs:10.2f}")


if __name__ == "__main__":
    main()
