"""Performance figures of sblr, each measured in the same run on this machine.

Usage: python benchmarks/run.py [--quick] [--skip-brute-force] [--skip-large] [--evidence-only]
       python benchmarks/run.py --scaling [--quick]
(with sblr importable: `pip install -e .` in the repository)

Prints
1. class evidence for yeast (2,417 x 103, 14 labels) at one gamma, and its ratio to one BLAS
   ``X @ X.T`` of the same shape (the hardware floor; the best of 3 alternating rounds of 4
   runs of each; target <= 1.5); ``--evidence-only`` stops here;
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

``--scaling`` prints instead how the cost grows (see :func:`scaling`): time and peak memory of
the evidence, the logistic layers of SBLR and SparseSBLR and prediction against n, m and d,
one fresh subprocess per point, with the fitted growth exponents; ``--quick`` makes it smaller.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_multilabel_classification

from sblr import SBLRClassifier, SimilarityFeaturizer, SparseSBLRClassifier, load_dataset
from sblr.baselines import BRSVMClassifier
from sblr.evaluation import make_splits, validation_split
from sblr.registry import BR_SVM, SBLR, SPARSE_SBLR
from sblr.similarity import class_evidence, normalize_evidence
from sblr.tuning import PAPER_GRID, tune

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


def evidence_vs_blas(X, Y, repeat, rounds=3):
    """Best times of the leave-one-out evidence and of ``X @ X.T`` (scaled rows).

    ``rounds`` rounds of ``repeat`` back-to-back runs of each, alternating, so that both
    see the same load of a shared machine; within a round each runs after itself (right
    after a threaded BLAS call, its idle threads still spin for a while and take a core
    from whatever runs next).
    """
    f = SimilarityFeaturizer(gamma=0.1).fit(X, Y)
    Xs = f.X_fit_
    t_evidence = t_blas = np.inf
    for _ in range(rounds):
        t_evidence = min(t_evidence, _timed(f.training_evidence, repeat)[0])
        t_blas = min(t_blas, _timed(lambda: Xs @ Xs.T, repeat)[0])
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
            X_tr, X_val, y_tr, _ = validation_split(X[train], Y[train], 0.1, 0)
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


def sklearn_user(X, Y, folds, user_folds, grid):
    """What a scikit-learn user would write for the same protocol, on ``user_folds`` folds.

    ``GridSearchCV`` over ``Pipeline(SimilarityFeaturizer, OneVsRestClassifier(
    LogisticRegression(l1_ratio=1, solver="liblinear")))`` with the same grid (C = 1 /
    (n_fit · λ): the same L1 strength on a summed instead of a mean log-loss), the same
    10% hold-out and the same selection metric, refit on the training fold, scored on the
    test fold.  Returns (our protocol's seconds on those folds, the user's seconds, number
    of folds where both selected the same (gamma, lambda), the differing selections).
    liblinear penalizes the intercept (SparseSBLR does not) and stops at its own tolerance,
    so the two can select differently on near-ties.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import Pipeline

    from sblr.protocol import _scorer

    splits = make_splits(Y, scheme="kfold", n_splits=folds)[:user_folds]
    t_ours = t_user = 0.0
    same, differ = 0, []
    for train, test in splits:
        start = time.perf_counter()
        best = tune(SparseSBLRClassifier(), X[train], Y[train], gammas=grid, lams=grid)
        SparseSBLRClassifier(**best.best_params).fit(X[train], Y[train]).decision_function(X[test])
        t_ours += time.perf_counter() - start

        start = time.perf_counter()
        idx = np.arange(len(train))
        fit, val = validation_split(idx, Y[train], 0.1, 0)[:2]
        n_fit = len(fit)
        pipe = Pipeline(
            [
                ("sim", SimilarityFeaturizer()),
                (
                    "logistic",
                    OneVsRestClassifier(LogisticRegression(l1_ratio=1, solver="liblinear")),
                ),
            ]
        )
        search = GridSearchCV(
            pipe,
            {
                "sim__gamma": list(grid),
                "logistic__estimator__C": [1 / (n_fit * lam) for lam in grid],
            },
            scoring=_scorer(best.metric),
            cv=[(fit, val)],
            refit=True,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # liblinear's convergence notes at tiny lambda
            search.fit(X[train], Y[train])
        search.decision_function(X[test])
        t_user += time.perf_counter() - start
        chosen = search.best_params_
        theirs = (chosen["sim__gamma"], 1 / (n_fit * chosen["logistic__estimator__C"]))
        ours = (best.best_params["gamma"], best.best_params["lam"])
        if np.allclose(theirs, ours, rtol=1e-6):
            same += 1
        else:
            differ.append((ours, theirs))
    return t_ours, t_user, same, differ


def brsvm_selection(X, Y, grid):
    """BR-SVM's selection on one training fold: the protocol's (one kernel per gamma)
    against scikit-learn's ``GridSearchCV`` over ``BRSVMClassifier`` (the protocol before)."""
    from sblr.protocol import METHODS, _grid_points, _search_scores

    spec = METHODS[BR_SVM.key]
    train = make_splits(Y, scheme="kfold", n_splits=10)[0][0]
    idx = np.arange(len(train))
    splits = [validation_split(idx, Y[train], 0.1, 0)[:2]]
    points = _grid_points(spec, grid)
    start = time.perf_counter()
    shared = _search_scores(spec, points, X[train], Y[train], splits, "average_precision")
    t_shared = time.perf_counter() - start
    start = time.perf_counter()
    plain = _search_scores(
        replace(spec, factory=lambda **p: BRSVMClassifier(**p)),  # not BRSVMClassifier itself
        points,
        X[train],
        Y[train],
        splits,
        "average_precision",
    )
    t_plain = time.perf_counter() - start
    return t_shared, t_plain, float(np.max(np.abs(shared - plain)))


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


# --------------------------------------------------------------------------- scaling
#: Query rows predicted at every scaling point.
SCALING_QUERY_ROWS = 1_000
#: lambda of the SparseSBLR layer in the scaling table.
SCALING_LAM = 1e-3
#: Parts of a scaling point, in the order they run, with the names printed.
SCALING_PARTS = {
    "evidence": "evidence (fit + training)",
    SBLR.key: f"{SBLR.label} layer",
    "sparse": f"{SPARSE_SBLR.label} layer",
    "predict": f"predict {SCALING_QUERY_ROWS:,} rows",
    "exact": "exact evidence (approx=None)",
}


def scaling_plan(quick):
    """Base point and the three sweeps; each sweep varies one size, the others at the base.

    Returns ``(base, sweeps, exact_cap)``: ``sweeps`` maps "n", "m", "d" to a list of points
    (dicts n, m, d, sparse); ``exact_cap`` is the largest n at which exact evidence is ALSO
    timed with ``approx=None`` above the automatic switch to Nystroem.
    """
    from sblr.similarity import AUTO_APPROX_ROWS

    base = {"n": 2_000 if quick else 5_000, "m": 14, "d": 100, "sparse": False}
    below = AUTO_APPROX_ROWS - 1
    ns = [1_000, 2_000, 5_000, 10_000, below, AUTO_APPROX_ROWS]
    ns += [50_000] if quick else [50_000, 100_000, 200_000]
    ms = [5, 14, 45, 100, 174] if quick else [5, 14, 28, 45, 100, 174]
    ds = [(10, False), (30, False), (100, False), (300, False)]
    ds += (
        [(1_449, False), (1_449, True)]
        if quick
        else [(1_000, False), (1_449, False), (1_449, True)]
    )
    sweeps = {
        "n": [{**base, "n": n} for n in ns],
        "m": [{**base, "m": m} for m in ms],
        "d": [{**base, "d": d, "sparse": sparse} for d, sparse in ds],
    }
    return base, sweeps, (AUTO_APPROX_ROWS if quick else 100_000)


def scaling_data(n, m, d, sparse, seed=0):
    """``make_multilabel_classification`` (about 3 labels per row; count features, CSR when
    ``sparse``): n training rows and :data:`SCALING_QUERY_ROWS` query rows."""
    X, Y = make_multilabel_classification(
        n + SCALING_QUERY_ROWS, d, n_classes=m, n_labels=3, sparse=sparse, random_state=seed
    )
    X = X.astype(np.float64)
    q = SCALING_QUERY_ROWS
    return X[q:], Y[q:], X[:q]


def _part_runs(X, Y, Xq, exact):
    """The parts of a point as (key, callable) in order; later parts use earlier results."""
    state = {}

    def evidence():
        state["f"] = f = SimilarityFeaturizer().fit(X, Y)
        state["F"] = f.training_evidence()

    def sblr():
        SBLRClassifier().fit_from_evidence(state["f"], state["F"])

    def sparse():
        model = SparseSBLRClassifier(lam=SCALING_LAM)
        state["model"] = model.fit_from_evidence(state["f"], state["F"])

    def predict():
        state["model"].predict(Xq)

    def exact_evidence():
        SimilarityFeaturizer(approx=None).fit(X, Y).training_evidence()

    runs = [("evidence", evidence), (SBLR.key, sblr), ("sparse", sparse), ("predict", predict)]
    return state, runs + ([("exact", exact_evidence)] if exact else [])


def scaling_point(n, m, d, sparse, exact):
    """One point, run in its own process: time and peak traced memory of every part.

    Time: the best of up to 3 runs (a further run only while the part's runs so far took
    < 1 s in all), with tracemalloc off.  Memory: a second pass with tracemalloc on, the
    peak of traced memory during the part minus the traced memory when it starts
    (``reset_peak``).  Not ``ru_maxrss`` per part: a process's high-water mark cannot
    separate parts that run one after another; it is returned for the whole point.
    """
    start = time.perf_counter()
    X, Y, Xq = scaling_data(n, m, d, sparse)
    out = {"data_s": time.perf_counter() - start, "seconds": {}, "mib": {}}
    out["density"] = X.nnz / max(X.shape[0] * X.shape[1], 1) if sparse else 1.0
    warnings.simplefilter("ignore")  # ConvergenceWarning of the logistic layer, if any
    state, runs = _part_runs(X, Y, Xq, exact)
    for key, run in runs:
        times = [_timed(run)[0]]
        while len(times) < 3 and sum(times) < 1.0:
            times.append(_timed(run)[0])
        out["seconds"][key] = min(times)
    out["approx"] = state["f"].approx_
    state, runs = _part_runs(X, Y, Xq, exact)
    tracemalloc.start()
    for key, run in runs:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        run()
        out["mib"][key] = (tracemalloc.get_traced_memory()[1] - before) / 2**20
    tracemalloc.stop()
    out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10  # KiB on Linux
    return out


def _run_point(point, exact, timeout=900):
    spec = json.dumps({**point, "exact": exact})
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--scaling-point", spec],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode:
        raise RuntimeError(f"scaling point {spec} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cell(result, key):
    if key not in result["seconds"]:
        return "–"
    return f"{result['seconds'][key]:.3g} s · {result['mib'][key]:.0f} MiB"


def _slope(sizes, seconds):
    """Least-squares slope of log(time) against log(size): the growth exponent."""
    if len(sizes) < 2:
        return float("nan")
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def _exponents(points):
    """'all-points slope (slope between the two largest sizes)' of (size, seconds) pairs."""
    points = sorted(points)
    if len(points) < 2:
        return "–"
    overall = _slope([p[0] for p in points], [p[1] for p in points])
    if len(points) == 2:
        return f"{overall:.2f}"
    return f"{overall:.2f} ({_slope(*zip(*points[-2:], strict=True)):.2f})"


def _dominant(results, label):
    """'part at sizes' runs of the part taking the most time, over a sweep's points."""
    runs = []
    for size, result in results:
        parts = {k: v for k, v in result["seconds"].items() if k != "exact"}
        top = max(parts, key=parts.get)
        if runs and runs[-1][0] == top:
            runs[-1][2] = size
        else:
            runs.append([top, size, size])
    return "; ".join(
        f"{SCALING_PARTS[top]} at {label} = {lo:,}" + (f"–{hi:,}" if hi != lo else "")
        for top, lo, hi in runs
    )


def scaling(quick):
    """Print the scaling tables (markdown) and the growth exponents."""
    from sblr.similarity import AUTO_APPROX_ROWS

    started = time.perf_counter()
    base, sweeps, exact_cap = scaling_plan(quick)
    print(
        f"## How cost grows ({'--quick' if quick else 'full'}; {os.cpu_count()} cores)\n\n"
        f"Synthetic data: `make_multilabel_classification` (seed 0, about 3 labels per row, "
        f"count features). Base point n = {base['n']:,} training rows, m = {base['m']} labels, "
        f"d = {base['d']} dense features; each sweep varies one of them. Parts: evidence = "
        "`SimilarityFeaturizer().fit` + leave-one-out training evidence (gamma = scale); "
        f"SBLR / SparseSBLR (lambda = {SCALING_LAM:g}) layer = `fit_from_evidence` on that "
        f"evidence; predict = SparseSBLR `predict` on {SCALING_QUERY_ROWS:,} new rows (their "
        "evidence + logits). Each cell: best time of up to 3 runs · peak traced memory "
        "(tracemalloc, reset per part: the peak of NumPy/Python allocations during the part "
        "above what was allocated when it started; BLAS's own buffers are not traced). One "
        "fresh subprocess per point; RSS = that process's peak resident memory (ru_maxrss), "
        "data included. The evidence is exact below "
        f"{AUTO_APPROX_ROWS:,} training rows and Nystroem (D = 500) from {AUTO_APPROX_ROWS:,} "
        f"on (`approx='auto'`); exact evidence is also timed with approx=None above the switch "
        f"up to n = {exact_cap:,} (capped there for time).\n",
        flush=True,
    )
    cache, tables = {}, {}
    for sweep, points in sweeps.items():
        label = {"n": "n", "m": "m", "d": "d"}[sweep]
        results = []
        header = [label, "evidence mode", *(SCALING_PARTS[k] for k in SCALING_PARTS)]
        header.append("RSS")
        if sweep != "n":
            header.remove(SCALING_PARTS["exact"])
        print(f"### {label} varied\n")
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for point in points:
            exact = sweep == "n" and AUTO_APPROX_ROWS <= point["n"] <= exact_cap
            key = (json.dumps(point, sort_keys=True), exact)
            if key not in cache:
                cache[key] = _run_point(point, exact)
            result = cache[key]
            size = point[sweep]
            shown = f"{size:,}" + (" sparse" if sweep == "d" and point["sparse"] else "")
            mode = result["approx"] or "exact"
            keys = [k for k in SCALING_PARTS if sweep == "n" or k != "exact"]
            cells = [shown, mode, *(_cell(result, k) for k in keys)]
            cells.append(f"{result['rss_mib']:.0f} MiB")
            print("| " + " | ".join(cells) + " |", flush=True)
            results.append((point, result))
        tables[sweep] = results
        print()

    print(
        "### Growth exponents\n\nSlope of log time against log size over the sweep's points "
        "(least squares); in brackets the slope between its two largest sizes, which is "
        "closer to the asymptotic growth when fixed costs weigh on the small sizes.\n"
    )
    print("| sweep | " + " | ".join(SCALING_PARTS[k] for k in SCALING_PARTS) + " |")
    print("|---|" + "---|" * len(SCALING_PARTS))
    exps = {}
    for sweep, results in tables.items():
        groups = {"all": results}
        if sweep == "n":
            groups = {
                f"n < {AUTO_APPROX_ROWS:,} (exact)": [
                    r for r in results if r[0]["n"] < AUTO_APPROX_ROWS
                ],
                f"n >= {AUTO_APPROX_ROWS:,} (Nystroem)": [
                    r for r in results if r[0]["n"] >= AUTO_APPROX_ROWS
                ],
            }
        elif sweep == "d":
            groups = {"dense points": [r for r in results if not r[0]["sparse"]]}
        for group, rows in groups.items():
            cells = []
            for k in SCALING_PARTS:
                if k == "exact":
                    rows_k = [r for r in results if sweep == "n" and r[0]["n"] <= exact_cap]
                    if sweep != "n" or "Nystroem" in group:
                        cells.append("–")
                        continue
                    pts = [
                        (r[0]["n"], r[1]["seconds"].get("exact", r[1]["seconds"]["evidence"]))
                        for r in rows_k
                    ]
                else:
                    pts = [(r[0][sweep], r[1]["seconds"][k]) for r in rows]
                exps[(sweep, group, k)] = _exponents(pts)
                cells.append(exps[(sweep, group, k)])
            print(f"| {sweep}: {group} | " + " | ".join(cells) + " |")
    print(
        "\n(exact evidence column: over n = 1,000 to "
        f"{exact_cap:,}, with the automatic exact evidence below {AUTO_APPROX_ROWS:,}.)\n"
    )
    print("### Which part dominates (largest time; the approx=None column left out)\n")
    for sweep, results in tables.items():
        sized = [(r[0][sweep], r[1]) for r in results if not r[0]["sparse"]]
        print(f"- {sweep} varied: " + _dominant(sized, sweep))
    sparse_rows = [r for r in tables["d"] if r[0]["sparse"]]
    for point, result in sparse_rows:
        dense = [r for p, r in tables["d"] if p["d"] == point["d"] and not p["sparse"]]
        if dense:
            ratio = result["seconds"]["evidence"] / dense[0]["seconds"]["evidence"]
            print(
                f"- d = {point['d']:,} sparse (CSR, {result['density']:.1%} non-zero): "
                f"evidence {ratio:.2f} x the time of the same data dense"
            )
    print(f"\nscaling run: {time.perf_counter() - started:.0f} s wall time")
    return exps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="2 folds, a 3-point grid, n = 5,000 for the large case"
    )
    parser.add_argument("--brute-folds", type=int, default=1)
    parser.add_argument("--skip-brute-force", action="store_true")
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-dashboard", action="store_true")
    parser.add_argument("--evidence-only", action="store_true", help="only figure 1")
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="only the scaling table (time and memory against n, m, d); smaller with --quick",
    )
    parser.add_argument("--scaling-point", help=argparse.SUPPRESS)  # internal: one point
    args = parser.parse_args()
    if args.scaling_point:
        print(json.dumps(scaling_point(**json.loads(args.scaling_point))))
        return
    if args.scaling:
        scaling(args.quick)
        return
    folds, grid = (2, (1.0, 0.1, 0.01)) if args.quick else (10, PAPER_GRID)

    name, X, Y = _yeast()
    print(f"data: {name} {X.shape[0]} x {X.shape[1]}, {Y.shape[1]} labels")
    t_ev, t_blas = evidence_vs_blas(X, Y, repeat=4)
    print(
        f"1. evidence (gamma = 0.1, leave-one-out): {t_ev:.4f} s; X @ X.T: {t_blas:.4f} s; "
        f"ratio {t_ev / t_blas:.2f} (target <= 1.5)"
    )
    if args.evidence_only:
        return

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
    if not args.skip_brute_force:
        t_ours, t_user, same, differ = sklearn_user(X, Y, folds, args.brute_folds, grid)
        print(
            f"   (c) what a scikit-learn user would write (GridSearchCV over Pipeline("
            f"SimilarityFeaturizer, OneVsRest(L1 LogisticRegression)), same grid, hold-out and "
            f"metric), {args.brute_folds} fold(s): {t_user:.1f} s against the protocol's "
            f"{t_ours:.1f} s on the same folds; ratio {t_ours / t_user:.3f} (target <= 0.1); "
            f"same (gamma, lambda) selected on {same} of {args.brute_folds} fold(s)"
            + "".join(f"; differs: ours {o}, theirs {t}" for o, t in differ)
        )
        t_shared, t_plain, diff = brsvm_selection(X, Y, grid)
        print(
            f"   (d) BR-SVM selection on one training fold, {points} (gamma, C) points: one "
            f"kernel matrix per gamma {t_shared:.1f} s, GridSearchCV {t_plain:.1f} s; ratio "
            f"{t_shared / t_plain:.2f} (largest score difference {diff:.1e})"
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
