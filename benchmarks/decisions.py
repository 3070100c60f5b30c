"""What the models DECIDE on multi-label data, beside the plain model a user would fit instead.

One run, one table: on Mulan's train/test splits (emotions 391/202, scene 1211/1196, yeast
1500/917, genbase 463/199, read from ../shared/datasets when there) and two generated
rare-label shapes (19 labels with about half the rows unlabelled, 260 dense features; 45
labels on 1,449 sparse 0/1 columns), each method is trained on the training rows and scored
on the test rows: micro-F1, macro-F1 (scikit-learn's, an absent label scoring 0), rows given
no label (and the truth's), Hamming loss, average precision, seconds (selection where there is
one, the fit, the decision cuts and the test rows' predictions).

Methods: SparseSBLR at the library's defaults (γ = scale, λ = 1e-4, the micro-F1 cut) and at
the paper's decision (λ = 1e-3, cut 0.5); SparseSBLR selected as ``sblr evaluate`` selects
(inner 3-fold by micro-F1, the micro-F1 cut); SparseSBLR with λ = 0.05 of each class's own
λ_max (``lam_scale="relative"``); SBLR and SML at their defaults; ML-kNN and
BR-SVM (C = 1, γ = scale); scikit-learn's ``OneVsRestClassifier(LogisticRegression())`` on
the features scaled to [-1, 1] (cut 0.5), the yardstick.

    python -m benchmarks.decisions            # everything (about 30 s on 2 cores)
    python -m benchmarks.decisions --quick    # the generated shapes and emotions
    python -m benchmarks.decisions --cut-cost # a fit and its cuts on a 174-label shape
    python -m benchmarks.decisions --fill     # rows left empty: force_top1 False, True, "auto"

from the repository root, with sblr installed (``pip install -e .``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score

from benchmarks.fidelity import generated
from sblr import SBLRClassifier, SMLClassifier, SparseSBLRClassifier, load_dataset
from sblr import metrics as sm
from sblr.baselines import BRSVMClassifier, MLkNNClassifier, OneVsRestLRClassifier
from sblr.decision import decide
from sblr.protocol import METHODS, select_params
from sblr.registry import BR_SVM, MLKNN, SBLR, SML, SPARSE_SBLR
from sblr.stats import markdown_table

DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "multilabel"
#: Mulan's train/test splits: the files hold the training rows first.
SPLITS = {"emotions": 391, "scene": 1211, "yeast": 1500, "genbase": 463}


def birds_like(seed=3, n=645, d=260, m=19):
    """19 labels (log-uniform frequencies, 3 .. n/6), about half the rows unlabelled, dense
    features with a sparse label signature each, 20 skewed columns."""
    rng = np.random.default_rng(seed)
    w = np.exp(rng.uniform(np.log(3), np.log(n / 6), m))
    w /= w.sum()
    Y = np.zeros((n, m), int)
    for i in np.flatnonzero(rng.random(n) < 0.53):
        Y[i, rng.choice(m, p=w)] = 1
        if rng.random() < 0.5:
            Y[i, rng.choice(m, p=w)] = 1
    centres = rng.normal(size=(m, d)) * (rng.random((m, d)) < 0.15) * 1.2
    X = rng.normal(size=(n, d)) + Y @ centres
    X[:, :20] = np.exp(X[:, :20])
    return X, Y


def splits(quick):
    out = {}
    X, Y = birds_like()
    out["gen19 (birds-shaped)"] = (X[:322], Y[:322], X[322:], Y[322:])
    X, Y = generated(978, 1449, 45, seed=2, n_informative=1449, motif=6, keep=0.5, noise=4.0)
    out["gen45 (medical-shaped)"] = (X[:333], Y[:333], X[333:], Y[333:])
    for name, n_train in SPLITS.items():
        if quick and name != "emotions":
            continue
        path = DATA / f"{name}.arff"
        if not path.exists():
            print(f"({name}: {path} not found, left out)", file=sys.stderr)
            continue
        ds = load_dataset(str(path))
        X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, float)
        Y = np.asarray(ds.y, int)
        out[name] = (X[:n_train], Y[:n_train], X[n_train:], Y[n_train:])
    return out


def _selected(Xtr, Ytr):
    params = select_params(
        SPARSE_SBLR.key,
        Xtr,
        Ytr,
        selection="inner_kfold",
        metric="micro_f1",
        threshold="micro_f1",
    )
    return METHODS[SPARSE_SBLR.key].build(**params, threshold="micro_f1")


MODELS = {
    f"{SPARSE_SBLR.label} (defaults)": lambda X, Y: SparseSBLRClassifier(),
    f"{SPARSE_SBLR.label} (paper: λ 1e-3, cut 0.5)": lambda X, Y: SparseSBLRClassifier(
        lam=1e-3, threshold=0.5
    ),
    f"{SPARSE_SBLR.label} (selected, as sblr evaluate)": _selected,
    f"{SPARSE_SBLR.label} (relative λ: 0.05 λ_max,k)": lambda X, Y: SparseSBLRClassifier(
        lam=0.05, lam_scale="relative"
    ),
    f"{SBLR.label} (defaults)": lambda X, Y: SBLRClassifier(),
    SML.label: lambda X, Y: SMLClassifier(),
    MLKNN.spoken: lambda X, Y: MLkNNClassifier(),
    BR_SVM.label: lambda X, Y: BRSVMClassifier(),
    "one-vs-rest LR (scikit-learn)": lambda X, Y: OneVsRestLRClassifier(),
}


def cut_cost():
    """Seconds of a SparseSBLR fit from cached evidence (what a λ move costs) and of its
    micro-F1 cuts (``fit_decision``, what ``fit`` adds to a β-only fit), on a CAL500-sized
    shape: 502 rows, 68 features, 174 labels; best of 3 runs each."""
    from sblr import SimilarityFeaturizer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(502, 68))
    S = X @ rng.normal(size=(68, 174))
    Y = ((S + 2 * rng.normal(size=S.shape)) > np.quantile(S, 0.85, axis=0)).astype(int)
    feat = SimilarityFeaturizer(normalize="mean").fit(X, Y)
    F = feat.training_evidence()
    SparseSBLRClassifier().fit_from_evidence(feat, F, cuts=False).fit_decision(F)  # compile
    for lam in (1e-3, 1e-4, 1e-5):
        fits, cuts = [], []
        for _ in range(3):
            t0 = time.perf_counter()
            est = SparseSBLRClassifier(lam=lam).fit_from_evidence(feat, F, cuts=False)
            t1 = time.perf_counter()
            est.fit_decision(F)
            fits.append(t1 - t0)
            cuts.append(time.perf_counter() - t1)
        print(f"λ = {lam:g}: fit {min(fits):.2f} s, its cuts {min(cuts):.2f} s more")


#: Mulan's train/test split files for ``--fill`` (read with their XML where present).
FILL_SPLITS = ("emotions", "scene", "yeast", "genbase", "enron", "bibtex")


def fill_table():
    """SparseSBLR at the library's defaults on each split, its test rows decided three ways
    from one fit: the micro-F1 cut alone (``force_top1=False``), every empty row given its
    most probable class (``True``), and the fitted fill cut (``"auto"``, the default)."""
    data = {}
    for seed, name in ((3, "gen19 (birds-shaped)"), (4, "gen19, seed 4"), (5, "gen19, seed 5")):
        X, Y = birds_like(seed=seed)
        data[name] = (X[:322], Y[:322], X[322:], Y[322:])
    for name in FILL_SPLITS:
        train, test = DATA / f"{name}-train.arff", DATA / f"{name}-test.arff"
        if not (train.exists() and test.exists()):
            print(f"({name}: its split files are not in {DATA}, left out)", file=sys.stderr)
            continue
        a = load_dataset(str(train))
        b = load_dataset(str(test), like=a)
        data[name] = (a.X, np.asarray(a.y, int), b.X, np.asarray(b.y, int))
    rows = []
    for name, (Xtr, Ytr, Xte, Yte) in data.items():
        t0 = time.perf_counter()
        est = SparseSBLRClassifier().fit(Xtr, Ytr)
        P = est.predict_proba(Xte)
        seconds = time.perf_counter() - t0
        ways = {
            "cut only (False)": decide(P, est.threshold_),
            "every empty row (True)": decide(P, est.threshold_, force_top1=True),
            "fill cut (auto)": est.predict(Xte),
        }
        for way, pred in ways.items():
            rows.append(
                {
                    "data": name,
                    "rows left empty": way,
                    "micro_f1": f"{f1_score(Yte, pred, average='micro', zero_division=0):.4f}",
                    "macro_f1": f"{f1_score(Yte, pred, average='macro', zero_division=0):.4f}",
                    "no label (truth)": f"{int((pred.sum(1) == 0).sum())} of {len(Yte)} "
                    f"({int((Yte.sum(1) == 0).sum())})",
                    "fill cut": "–" if est.fill_cut_ is None else f"{est.fill_cut_:.3g}",
                    "seconds": f"{seconds:.1f}",
                }
            )
            print(" | ".join(str(v) for v in rows[-1].values()), flush=True)
    print()
    print(markdown_table(pd.DataFrame(rows)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cut-cost", action="store_true")
    parser.add_argument("--fill", action="store_true")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.cut_cost:
        cut_cost()
        return
    if args.fill:
        fill_table()
        return
    rows = []
    for data, (Xtr, Ytr, Xte, Yte) in splits(args.quick).items():
        for model, make in MODELS.items():
            t0 = time.perf_counter()  # selection, fit, the cuts and the test rows' decisions
            est = make(Xtr, Ytr).fit(Xtr, Ytr)
            pred = np.asarray(est.predict(Xte), dtype=int)
            seconds = time.perf_counter() - t0
            scores = np.asarray(est.decision_function(Xte), dtype=float)
            rows.append(
                {
                    "data": data,
                    "model": model,
                    "micro_f1": f1_score(Yte, pred, average="micro", zero_division=0),
                    "macro_f1": f1_score(Yte, pred, average="macro", zero_division=0),
                    "no_label": int((pred.sum(1) == 0).sum()),
                    "truth_no_label": int((Yte.sum(1) == 0).sum()),
                    "rows": len(Yte),
                    "hamming": sm.hamming_loss(Yte, pred),
                    "avg_precision": sm.average_precision(Yte, scores),
                    "seconds": seconds,
                }
            )
            r = rows[-1]
            print(
                f"{data:24s} {model:42s} micro {r['micro_f1']:.3f} macro {r['macro_f1']:.3f} "
                f"no label {r['no_label']:4d}/{r['rows']} (truth {r['truth_no_label']}) "
                f"hamming {r['hamming']:.4f} AP {r['avg_precision']:.3f} {seconds:6.2f} s",
                flush=True,
            )
    table = pd.DataFrame(rows)
    table["no label (truth)"] = [
        f"{r.no_label} of {r.rows} ({r.truth_no_label})" for r in table.itertuples()
    ]
    shown = table[
        ["data", "model", "micro_f1", "macro_f1", "no label (truth)", "hamming", "avg_precision"]
    ].copy()
    for c in ("micro_f1", "macro_f1", "avg_precision"):
        shown[c] = shown[c].map(lambda v: f"{v:.3f}")
    shown["hamming"] = shown["hamming"].map(lambda v: f"{v:.4f}")
    shown["seconds"] = table["seconds"].map(lambda v: f"{v:.2f}")
    print()
    print(markdown_table(shown))


if __name__ == "__main__":
    main()
