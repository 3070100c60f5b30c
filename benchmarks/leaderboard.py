"""The public leaderboard: every method on Mulan's official train/test splits, as a user runs them.

Each method is selected and fitted on the training file as ``sblr evaluate TRAIN --test TEST
--method M`` does at its defaults (5 inner folds; γ and λ in half decades, C in the paper's
decades; micro-F1 as the selection metric; decisions by a cut fitted on held-out training
probabilities) and scored once on the test file. Methods:

* ``sparse_sblr`` — SparseSBLR at the library's defaults (the layer on log evidence shares);
* ``sparse_sblr_paper`` — SparseSBLR on the paper's mean evidence f̄ (``normalize="mean"``);
* ``sblr``, ``sml``, ``mlknn`` (k = 10), ``br_svm`` (γ and C selected);
* ``lr_tuned`` — scikit-learn's one-vs-rest logistic regression on the [-1, 1]-scaled
  features, C and one cut chosen on 5 inner folds for micro-F1 (the plain model a user would
  fit; :class:`sblr.baselines.OneVsRestLRClassifier` with ``Cs``).

Metrics: micro-F1, macro-F1, rows given no label (and the truth's), average precision,
ranking loss, one-error, and the seconds of selection + fit + prediction; then the average
ranks over the splits and a critical-difference diagram (Friedman + Nemenyi) per metric.

Run from the repo root, with sblr installed (``pip install -e .``)::

    python -m benchmarks.leaderboard [--data ../shared/datasets/multilabel]
        [--sets emotions,scene,yeast,genbase] [--methods sparse_sblr,sml,...]
        [--out docs/benchmarks.md] [--csv docs/leaderboard.csv]

The rows already in ``--csv`` are kept (a set or method is run only when missing there, so
the large sets can be added one run at a time); ``--fresh`` starts over.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sblr.registry import BR_SVM, LR_TUNED, MLKNN, SBLR, SML, SPARSE_SBLR, SPARSE_SBLR_PAPER

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "datasets" / "multilabel"

#: Mulan's official splits as Mulan ships them: (name, train file, test file, label XML).
SPLITS = (
    ("emotions", "emotions-train.arff", "emotions-test.arff", "emotions.xml"),
    ("scene", "scene-train.arff", "scene-test.arff", "scene.xml"),
    ("yeast", "yeast-train.arff", "yeast-test.arff", "yeast.xml"),
    ("genbase", "genbase-train.arff", "genbase-test.arff", "genbase.xml"),
    ("enron", "enron-train.arff", "enron-test.arff", "enron.xml"),
    ("corel5k", "Corel5k-train-sparse.arff", "Corel5k-test-sparse.arff", "Corel5k.xml"),
    ("bibtex", "bibtex-train.arff", "bibtex-test.arff", "bibtex.xml"),
    ("tmc2007-500", "tmc2007-500-train.arff", "tmc2007-500-test.arff", "tmc2007-500.xml"),
    ("delicious", "delicious-train.arff", "delicious-test.arff", "delicious.xml"),
)
ORIGINAL = ("emotions", "scene", "yeast", "genbase")

METHODS = tuple(m.key for m in (SPARSE_SBLR, SPARSE_SBLR_PAPER, SBLR, SML, MLKNN, BR_SVM, LR_TUNED))

#: Reported metrics, in table order, and whether lower is better.
METRICS = {
    "micro_f1": False,
    "macro_f1": False,
    "average_precision": False,
    "ranking_loss": True,
    "one_error": True,
}


INTRO = """# The leaderboard: Mulan's official train/test splits

Written by `python -m benchmarks.leaderboard --sets ...` (one run per set, added to
`docs/leaderboard.csv`; the rows there are kept, so a set is rerun only when it is missing).
Each method is selected on the training file as `sblr evaluate TRAIN --test TEST --method M`
selects at its defaults (5 inner folds by micro-F1; γ and λ in half decades; a cut fitted on
held-out training probabilities), fitted on it and scored once on the test file. Seconds are
wall-clock on this 2-core machine for selection, fit and prediction, with other work running
(read them as orders of magnitude). "LR (tuned)" is scikit-learn's one-vs-rest logistic regression
on the [-1, 1]-scaled features with C and one cut chosen on 5 inner folds for micro-F1.

**Why SparseSBLR's default differs from the paper.** The paper's layer reads the mean evidence
f̄, which at the γ where SML is best is tiny and spiky for training rows, so the layer falls to the
base rates there; the default reads the log of each class's kernel-weighted rate among the rows
near x (`normalize="log_rate"`), in which SML's own rule is one point of the layer (β = a·I), so
the layer can only add to SML. "SparseSBLR (paper's f̄)" is the paper's model, selected and
decided the same way.

"""

NOTES = """
### Where it still loses, and why

* **emotions** (391 training rows): SML's AP 0.816 is the best, SparseSBLR's 0.807 is 0.009
  below it: its 5-fold selection chose γ = 0.3 where SML's chose 1, and at γ = 1 its test AP is
  0.808-0.817 for every λ up to 0.03. Selection noise on a small set (3 inner folds chose
  γ = 0.1: AP 0.793).
* **genbase**: BR-SVM's macro-F1 0.889 against 0.852 and AP 0.997 against 0.995; 350 of the
  463 training rows have an exact duplicate.
* **enron** (1,001 sparse 0/1 columns; 115 of 1,123 training rows have an exact duplicate): the
  tuned LR is best (0.606 / 0.703); SparseSBLR is 0.023 / 0.029 behind, the paper's form 0.008 /
  0.011. Both chose γ at the bottom of the grid (0.003 and 0.001): sparse text may want a γ
  below the grid's 0.001 (not measured yet). The leave-one-out criterion (`--selection loo`) was
  optimistic here at large γ (near copies) and chose γ = 3: micro-F1 0.521.
* The larger splits (Corel5k, bibtex, tmc2007-500, delicious) are not in this table yet: 5-fold
  selection over 99 grid points took 474 s for SparseSBLR on enron's 53 labels here, and the
  layer's cost grows with the labels (issue #47: screening and working sets). One fit at the
  defaults (γ = scale, λ = 1e-4) on bibtex: micro-F1 0.442, AP 0.558, 710 of 2,515 test rows
  without a label, 48 s (the paper's form: 0.351, 0.419, 1,046).
"""


def run_one(method, train, test):
    """Select, fit and score ``method`` on one split: a dict of metric values and figures."""
    from sblr import metrics
    from sblr.protocol import METHODS as SPECS
    from sblr.protocol import build_decision, select_params
    from sblr.tuning import DECISION_GRID

    spec = SPECS[method]
    X, X_test = spec.features(train.X), spec.features(test.X)
    Y, Y_test = np.asarray(train.y, dtype=int), np.asarray(test.y, dtype=int)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = select_params(
            method,
            X,
            Y,
            selection="inner_kfold",
            inner_folds=5,
            grid=DECISION_GRID,
            metric="micro_f1",
            threshold="micro_f1",
        )
        est = spec.build(**chosen, **build_decision(spec, "micro_f1")).fit(X, Y)
        pred = np.asarray(est.predict(X_test), dtype=int)
        scores = np.asarray(est.decision_function(X_test), dtype=float)
    seconds = time.perf_counter() - t0
    values = {m: metrics.score(m, Y_test, pred, scores) for m in METRICS}
    values.update(
        no_label_rows=int((pred.sum(axis=1) == 0).sum()),
        truth_no_label_rows=int((Y_test.sum(axis=1) == 0).sum()),
        test_rows=len(Y_test),
        seconds=seconds,
        params=", ".join(f"{k}={v:g}" for k, v in chosen.items()),
    )
    return values


def load_split(folder, train_file, test_file, xml):
    from sblr import load_dataset

    train = load_dataset(folder / train_file, xml=folder / xml)
    test = load_dataset(folder / test_file, like=train)
    return train, test


def ranks(table, metric):
    """Average rank of each method over the splits where every method ran (1 = best)."""
    wide = table.pivot(index="dataset", columns="method", values=metric).dropna()
    r = wide.rank(axis=1, ascending=METRICS[metric], method="average")
    return r.mean().sort_values(), len(wide)


def render(table):
    """docs/benchmarks.md's tables from the leaderboard rows."""
    from sblr.protocol import METHODS as SPECS
    from sblr.stats import critical_difference

    label = {m: SPECS[m].label for m in table["method"].unique()}
    out = []
    for name in [s[0] for s in SPLITS if s[0] in set(table["dataset"])]:
        rows = table[table["dataset"] == name].set_index("method")
        first = rows.iloc[0]
        out.append(
            f"### {name} ({int(first.test_rows):,} test rows; rows with no label in the "
            f"truth: {int(first.truth_no_label_rows):,})\n"
        )
        best = {m: (rows[m].min() if low else rows[m].max()) for m, low in METRICS.items()}
        out.append(
            "| method | micro-F1 | macro-F1 | AP | ranking loss | one-error | rows with no "
            "label | seconds | selected |"
        )
        out.append("|---|---|---|---|---|---|---|---|---|")
        for method in [m for m in METHODS if m in rows.index]:
            r = rows.loc[method]
            cells = [
                f"**{r[m]:.3f}**" if np.isclose(r[m], best[m], atol=5e-4) else f"{r[m]:.3f}"
                for m in METRICS
            ]
            out.append(
                f"| {label[method]} | {' | '.join(cells)} | {int(r.no_label_rows):,} | "
                f"{r.seconds:.1f} | {r.params if isinstance(r.params, str) and r.params else '–'} |"
            )
        out.append("")
    out.append("### Average ranks over the splits where every method ran\n")
    for metric in ("micro_f1", "average_precision"):
        avg, n = ranks(table, metric)
        if n < 2:
            continue
        cd = critical_difference(len(avg), n)
        cells = ", ".join(f"{label[m]} {v:.2f}" for m, v in avg.items())
        out.append(
            f"- {metric.replace('_', ' ')} ({n} splits, Nemenyi critical difference "
            f"{cd:.2f}): {cells}"
        )
    return "\n".join(out) + "\n"


def verdict(table, tolerance=0.02, sml_margin=0.01):
    """The issue's yardsticks per split: SparseSBLR within ``sml_margin`` of SML, and within
    ``tolerance`` of the best method of the table, on micro-F1 and AP."""
    lines = []
    for name, rows in table.groupby("dataset", sort=False):
        rows = rows.set_index("method")
        if SPARSE_SBLR.key not in rows.index:
            continue
        ours = rows.loc[SPARSE_SBLR.key]
        parts = []
        for metric in ("micro_f1", "average_precision"):
            best = rows[metric].max()
            leader = rows[metric].idxmax()
            gap_best = best - ours[metric]
            gap_sml = rows.loc[SML.key, metric] - ours[metric] if SML.key in rows.index else np.nan
            parts.append(
                f"{metric.replace('_', ' ')} {ours[metric]:.3f} (best {best:.3f}, {leader}: "
                f"{gap_best:.3f} behind; SML minus SparseSBLR {gap_sml:+.3f})"
            )
        lines.append(f"- {name}: " + "; ".join(parts))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sets", default=",".join(ORIGINAL))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--csv", type=Path, default=REPO / "docs" / "leaderboard.csv")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"No data folder {args.data}: the leaderboard needs Mulan's splits.")
        return 2
    sets = args.sets.split(",")
    methods = args.methods.split(",")
    done = pd.read_csv(args.csv) if args.csv.exists() and not args.fresh else pd.DataFrame()
    rows = done.to_dict("records")
    for name, train_file, test_file, xml in SPLITS:
        if name not in sets:
            continue
        todo = [
            m
            for m in methods
            if done.empty or done[(done.dataset == name) & (done.method == m)].empty
        ]
        if not todo:
            continue
        t0 = time.perf_counter()
        train, test = load_split(args.data, train_file, test_file, xml)
        print(
            f"{name}: {train.n_samples:,} / {test.n_samples:,} rows, {train.X.shape[1]:,} "
            f"features, {len(train.class_names)} labels (loaded in "
            f"{time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
        for method in todo:
            values = run_one(method, train, test)
            rows = [r for r in rows if not (r["dataset"] == name and r["method"] == method)]
            rows.append({"dataset": name, "method": method, **values})
            print(
                f"  {method:<18} micro-F1 {values['micro_f1']:.3f}  AP "
                f"{values['average_precision']:.3f}  no label {values['no_label_rows']:,}  "
                f"{values['seconds']:.1f} s  {values['params']}",
                flush=True,
            )
            pd.DataFrame(rows).to_csv(args.csv, index=False)
    table = pd.DataFrame(rows)
    text = INTRO + render(table) + "\n### SparseSBLR against SML and the best of each split\n\n"
    text += verdict(table) + "\n" + NOTES
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
