"""The Model page's LR yardstick: the tuned logistic regression's CPU time against its estimate.

Issue #47 item 4: on delicious (12,920 rows, 500 features, 983 labels) the Model page's plain
LR took 13 minutes with no estimate. The yardstick is now ``sblr.baselines.tuned_lr_classifier``
(5 Cs × 5 inner folds + the final fit, per label), computed at once below a budget and offered
behind a button above it, by ``sblr.baselines.tuned_lr_seconds_estimate``. This script fits it
on Mulan training files (or a slice of their rows and labels) and prints, per set, the CPU
seconds measured (``time.process_time``: one core, single-threaded BLAS), the estimate, their
ratio, the chosen C and the progress calls, with the load average beside each (CPU time under
load still grows with it: the two cores' caches are shared). Also, with ``--per-c``, one
logistic regression per label at each C on all rows, the measurement that set
``TUNED_LR_SECONDS`` (a + b · n · d per fit).

Run from the repo root (with sblr importable: ``pip install -e .``)::

    PYTHONPATH=. nice python benchmarks/lr_yardstick.py --mulan /work/shared/datasets/multilabel \
        [--sets emotions yeast enron delicious:3000:60] [--per-c]

A set is ``name`` (its ``name-train.arff`` and ``name.xml``) or ``name:rows:labels`` (its
first rows and labels).

Measured 2026-12-07 on this project's 2-core machine shared with three other agents (load 10
to 22): emotions 2.8 CPU-s (estimate 1.3), yeast 6.0 (8.6), enron 135 (195), delicious:3000:60
201 (291); with ``--per-c``
on delicious' 12,920 rows and first 20 labels (load 9) a label's fit took 0.54 s at C = 0.01,
1.0 s at C = 1 and 2.0 s at C = 100 (b = 0.8e-7 to 3.0e-7 s per row·feature). The estimate
for delicious' 25% hold-out (9,690 training rows, 983 labels): 4.2 h of one core.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np


def _load(mulan: Path, spec: str):
    from sblr import load_dataset

    name, *cut = spec.split(":")
    ds = load_dataset(str(mulan / f"{name}-train.arff"))
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=float)
    Y = np.asarray(ds.y)
    if cut:
        X, Y = X[: int(cut[0])], Y[: int(cut[0]), : int(cut[1])]
    return X, Y


def _load_text():
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


def per_c(X, Y):
    """CPU seconds per (label, C) fit on all rows at each of TUNED_LR's Cs."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    from sblr.baselines import TUNED_LR
    from sblr.similarity import minmax_fit, minmax_transform

    Xs = minmax_transform(X, *minmax_fit(X))
    n, d = Xs.shape
    out = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for C in TUNED_LR["Cs"]:
            start, fits = time.process_time(), 0
            for k in range(Y.shape[1]):
                if Y[:, k].min() != Y[:, k].max():
                    LogisticRegression(C=C, max_iter=1000).fit(Xs, Y[:, k])
                    fits += 1
            seconds = time.process_time() - start
            out.append((C, seconds / max(fits, 1), seconds / max(fits, 1) / (n * d)))
    return out


def tuned(X, Y):
    """CPU seconds of the tuned yardstick's fit, its estimate and what it chose."""
    from sblr.baselines import tuned_lr_classifier, tuned_lr_seconds_estimate

    calls = []
    start = time.process_time()
    model = tuned_lr_classifier().fit(X, Y, progress=lambda done, total: calls.append(done))
    seconds = time.process_time() - start
    estimate = tuned_lr_seconds_estimate(*X.shape, Y.shape[1])
    return seconds, estimate, model.C_, len(calls)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mulan", type=Path, required=True)
    parser.add_argument("--sets", nargs="+", default=["emotions", "yeast", "enron"])
    parser.add_argument("--per-c", action="store_true")
    args = parser.parse_args(argv)
    for spec in args.sets:
        X, Y = _load(args.mulan, spec)
        n, d, m = X.shape[0], X.shape[1], Y.shape[1]
        print(f"{spec}: {n:,} rows × {d:,} features, {m} labels ({_load_text()})", flush=True)
        if args.per_c:
            for C, per_fit, b in per_c(X, Y):
                print(
                    f"  C = {C:g}: {per_fit * 1e3:.1f} ms a label's fit, {b:.2e} s per row·feature"
                )
        seconds, estimate, C, calls = tuned(X, Y)
        print(
            f"  tuned LR: {seconds:.1f} CPU-s, estimate {estimate:.1f} s "
            f"(measured/estimate {seconds / estimate:.2f}), C_ = {C:g}, {calls:,} progress "
            f"calls ({_load_text()})",
            flush=True,
        )


if __name__ == "__main__":
    main()
