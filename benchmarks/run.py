"""Performance figures of sblr, each measured in the same run on this machine.

Usage: python benchmarks/run.py [--quick] [--skip-brute-force] [--skip-large]
(with sblr importable: `pip install -e .` in the repository)

Prints
1. class evidence for yeast (2,417 x 103, 14 labels) at one gamma, and its ratio to one BLAS
   ``X @ X.T`` of the same shape (the hardware floor);
2. the paper's protocol for SparseSBLR on yeast (10 folds, 8 gamma x 8 lambda selected on a
   10% hold-out, refit, test) against (a) brute force: refitting the same estimator at every
   grid point (measured on --brute-folds folds and scaled to 10), and (b) ten folds of
   BR-SVM at ONE fixed (gamma, C);
3. time and peak traced memory of exact evidence at n = 20,000, d = 100 (must stay < 1 GB);
4. time, peak traced memory and error of approximate evidence (Nystroem and random Fourier
   features, D = 500) at n = 200,000, d = 20: relative Frobenius error of the leave-one-out
   evidence of 2,000 random rows against their exact leave-one-out evidence;
5. the dashboard's server-side latency on yeast for λ and γ changes (benchmarks/
   dashboard_latency.py, through the app's own code path), against 0.3 s and 1 s.
Yeast comes from ../shared/datasets; without it a synthetic set of the same shape is used.
"""

import argparse
import time
import tracemalloc
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_multilabel_classification

from sblr import SimilarityFeaturizer, SparseSBLRClassifier, load_dataset
from sblr.baselines import BRSVMClassifier
from sblr.evaluation import make_splits
from sblr.similarity import class_evidence, normalize_evidence
from sblr.tuning import PAPER_GRID, _split, tune

ROOT = Path(__file__).resolve().parents[1]


def _yeast():
    path = ROOT.parent / "shared" / "datasets" / "multilabel" / "yeast.arff"
    if path.exists():
        ds = load_dataset(path)
        return "yeast", ds.X, ds.y
    X, Y = make_multilabel_classification(2417, 103, n_classes=14, n_labels=4, random_state=0)
    return "synthetic yeast-shaped", X.astype(float), Y


def _timed(func, repeat=1):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - start)
    return best, out


def evidence_vs_blas(X, Y, repeat):
    f = SimilarityFeaturizer(gamma=0.1).fit(X, Y)
    t_evidence, _ = _timed(f.training_evidence, repeat)
    Xs = f.X_fit_
    t_blas, _ = _timed(lambda: Xs @ Xs.T, repeat)
    return t_evidence, t_blas


def protocol(X, Y, folds, brute_folds, grid, bench_brute):
    splits = make_splits(Y, scheme="kfold", n_splits=folds)
    start = time.perf_counter()
    for train, test in splits:
        best = tune(SparseSBLRClassifier(), X[train], Y[train], gammas=grid, lams=grid)
        SparseSBLRClassifier(**best.best_params).fit(X[train], Y[train]).decision_function(X[test])
    t_protocol = time.perf_counter() - start

    t_brute = None
    if bench_brute:
        start = time.perf_counter()
        for train, _ in splits[:brute_folds]:
            # the same 10% validation split as tune, every grid point refitted
            X_tr, X_val, y_tr, _ = _split(X[train], Y[train], True, 0.1, 0)
            for g in grid:
                for lam in grid:
                    est = clone(SparseSBLRClassifier()).set_params(gamma=g, lam=lam)
                    est.fit(X_tr, y_tr).decision_function(X_val)
        t_brute = (time.perf_counter() - start) * folds / brute_folds

    start = time.perf_counter()
    for train, test in splits:
        BRSVMClassifier(C=1.0, gamma="scale").fit(X[train], Y[train]).decision_function(X[test])
    t_svm = time.perf_counter() - start
    return t_protocol, t_brute, t_svm


def large_exact(n, d, m):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    Y = (rng.random((n, m)) < 0.3).astype(int)
    tracemalloc.start()
    start = time.perf_counter()
    SimilarityFeaturizer(gamma="scale", approx=None).fit(X, Y).training_evidence()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak


def large_approx(n, d, m, n_components, n_check=2_000):
    """(approx, seconds, peak bytes, relative error) for Nystroem and RFF evidence."""
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(m, d))
    y = rng.integers(0, m, n)
    X = centers[y] + rng.normal(size=(n, d))
    rows = rng.choice(n, n_check, replace=False)
    out, exact = [], None
    for approx in ("nystroem", "rff"):
        tracemalloc.start()
        start = time.perf_counter()
        f = SimilarityFeaturizer(approx=approx, n_components=n_components)
        F = f.fit_transform(X, y)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if exact is None:  # exact leave-one-out evidence of the checked rows
            Xs, Y = f.X_fit_, f.Y_fit_
            sums, counts = class_evidence(Xs[rows], Xs, Y, gamma=f.gamma_)
            exact = normalize_evidence(sums - Y[rows], counts - Y[rows])
        error = np.linalg.norm(F[rows] - exact) / np.linalg.norm(exact)
        out.append((approx, seconds, peak, error))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="2 folds, a 3-point grid, n = 5,000 for the large case"
    )
    parser.add_argument("--brute-folds", type=int, default=1)
    parser.add_argument("--skip-brute-force", action="store_true")
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-dashboard", action="store_true")
    args = parser.parse_args()
    folds, grid = (2, (1.0, 0.1, 0.01)) if args.quick else (10, PAPER_GRID)

    name, X, Y = _yeast()
    print(f"data: {name} {X.shape[0]} x {X.shape[1]}, {Y.shape[1]} labels")
    t_ev, t_blas = evidence_vs_blas(X, Y, repeat=3)
    print(
        f"1. evidence (gamma = 0.1, leave-one-out): {t_ev:.3f} s; X @ X.T: {t_blas:.3f} s; "
        f"ratio {t_ev / t_blas:.1f}"
    )

    t_protocol, t_brute, t_svm = protocol(
        X, Y, folds, args.brute_folds, grid, not args.skip_brute_force
    )
    points = len(grid) ** 2
    print(f"2. SparseSBLR protocol, {folds} folds x {points} grid points: {t_protocol:.1f} s")
    if t_brute is not None:
        print(
            f"   (a) brute-force refits (measured on {args.brute_folds} fold(s), scaled to "
            f"{folds}): {t_brute:.1f} s; ratio protocol / brute force {t_protocol / t_brute:.3f}"
        )
    print(
        f"   (b) BR-SVM at one fixed (gamma, C), {folds} folds: {t_svm:.1f} s; "
        f"ratio protocol / BR-SVM {t_protocol / t_svm:.2f} (target < 1)"
    )

    if not args.skip_large:
        n = 5_000 if args.quick else 20_000
        seconds, peak = large_exact(n, 100, 10)
        print(
            f"3. exact evidence n = {n:,}, d = 100, m = 10: {seconds:.1f} s, "
            f"peak traced memory {peak / 2**20:.0f} MiB (limit 1024 MiB)"
        )
        n = 20_000 if args.quick else 200_000
        for approx, seconds, peak, error in large_approx(n, 20, 5, 500):
            print(
                f"4. {approx} evidence n = {n:,}, d = 20, m = 5, D = 500: {seconds:.1f} s, "
                f"peak traced memory {peak / 2**20:.0f} MiB, relative error {error:.4f}"
            )

    if not args.skip_dashboard:
        import dashboard_latency

        print("5. dashboard latency on yeast (benchmarks/dashboard_latency.py):", flush=True)
        dashboard_latency.main(["--repeats", "2" if args.quick else "4", "--profile-top", "0"])


if __name__ == "__main__":
    main()
