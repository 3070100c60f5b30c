"""Issue #28: why SparseSBLR's ranking metrics on sparse data with many rare labels miss the paper.

Reruns the decisive experiments of ``docs/fidelity.md`` on genbase and on two generated sets of
the same shape (sparse 0/1 features, 27 and 45 labels, many with a handful of positives) and
prints, per metric, SparseSBLR with the library's defaults, SparseSBLR with each candidate
change (one at a time), SML for reference, and the paper's value.

Usage (from the repository root, with sblr importable: `pip install -e .` in the repository)::

    python -m benchmarks.fidelity            # 10 folds, all variants (~9 min on one core)
    python -m benchmarks.fidelity --quick    # decisive variants, genbase + gen27 (5-fold), < 2 min

Protocol: :func:`sblr.protocol.benchmark_splits` folds (seed 0); per fold, gamma and lambda are
chosen on the 10% hold-out of the training fold that :func:`sblr.tuning.tune` uses
(``validation_split(arange(n), y, 0.1, seed)``), over the paper's grid, by average precision
(ties: first in grid order), then the model is refitted on the whole training fold.  The default
variant reproduces ``run_fold(ds, "sparse_sblr", ...)`` exactly (checked at start-up on fold 0).
Nothing in the library is changed: the variants are built from its public API
(``SimilarityFeaturizer``, ``SparseSBLRClassifier.fit_from_evidence``, ``sblr.metrics``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sblr import SimilarityFeaturizer, SMLClassifier, SparseSBLRClassifier, load_dataset, metrics
from sblr.evaluation import make_splits, validation_split
from sblr.logistic import lambda_max
from sblr.protocol import benchmark_splits, run_fold
from sblr.registry import SML, SPARSE_SBLR
from sblr.tuning import PAPER_GRID

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "datasets" / "multilabel" / "genbase.arff"
PAPER = REPO.parent / "shared" / "paper" / "results.csv"
RANKING = ("coverage", "one_error", "ranking_loss", "average_precision")
METRICS = ("hamming_loss", *RANKING)


# --------------------------------------------------------------------------- data
def genbase():
    ds = load_dataset(str(DATA))
    return np.asarray(ds.X, dtype=float), np.asarray(ds.y, dtype=int), ds


def generated(n, d, m, *, seed, n_informative, motif, keep, noise, cardinality=1.25):
    """Sparse 0/1 rows with ``m`` labels, many of them with a handful of positives.

    Label weights are log-uniform over [1, n/4]; each row draws a primary label by weight
    (the first ``m`` rows take labels 0..m-1, so every label has a positive) and, with
    probability ``cardinality - 1``, its primary label's fixed "parent" (one of the five most
    frequent labels), as in genbase's family hierarchy.  Each label owns ``motif`` columns among
    the first ``n_informative``; a row sets each column of its labels' motifs with probability
    ``keep`` plus Poisson(``noise``) random informative columns; the other ``d -
    n_informative`` columns are all zero (genbase: 1,073 of 1,185).
    """
    rng = np.random.default_rng(seed)
    w = np.exp(rng.uniform(0.0, np.log(n / 4), m))
    primary = rng.choice(m, size=n, p=w / w.sum())
    primary[:m] = np.arange(m)
    top = np.argsort(-w)[:5]
    parent = rng.choice(top, size=m)
    Y = np.zeros((n, m), dtype=int)
    Y[np.arange(n), primary] = 1
    second = rng.random(n) < cardinality - 1.0
    Y[np.flatnonzero(second), parent[primary[second]]] = 1
    motifs = [rng.choice(n_informative, size=motif, replace=False) for _ in range(m)]
    X = np.zeros((n, d))
    for i in range(n):
        for k in np.flatnonzero(Y[i]):
            cols = motifs[k][rng.random(motif) < keep]
            X[i, cols] = 1.0
        X[i, rng.integers(0, n_informative, rng.poisson(noise))] = 1.0
        if X[i].sum() == 0:  # no empty row (genbase has none)
            X[i, motifs[primary[i]][0]] = 1.0
    return X, Y


def datasets(quick):
    X, Y, ds = genbase()
    out = {"genbase": (X, Y, ds)}
    if quick:  # genbase (10 folds) and the genbase-shaped set (5 folds) only
        out["gen27"] = (
            *generated(662, 1185, 27, seed=1, n_informative=112, motif=3, keep=0.8, noise=0.5),
            None,
        )
        return out
    # genbase-shaped: 662 rows, 1,185 columns (112 ever set), 27 labels
    out["gen27"] = (
        *generated(662, 1185, 27, seed=1, n_informative=112, motif=3, keep=0.8, noise=0.5),
        None,
    )
    # medical-shaped (the paper's 45-label text set): 978 rows, 1,449 columns, 45 labels
    out["gen45"] = (
        *generated(978, 1449, 45, seed=2, n_informative=1449, motif=6, keep=0.5, noise=4.0),
        None,
    )
    return out


# --------------------------------------------------------------------------- kernels
def _binary(A):
    """The 0/1 rows back from rows scaled to [-1, 1] (1 -> 1, 0 -> -1, constant -> 0)."""
    return (np.asarray(A) > 0).astype(float)


def cosine01(A, B):
    """Cosine similarity of the original 0/1 rows."""
    A, B = _binary(A), _binary(B)
    na = np.sqrt(A.sum(1))
    nb = np.sqrt(B.sum(1))
    na[na == 0] = 1.0
    nb[nb == 0] = 1.0
    return (A @ B.T) / na[:, None] / nb[None, :]


def jaccard01(A, B):
    """Jaccard similarity of the original 0/1 rows (0 for two empty rows)."""
    A, B = _binary(A), _binary(B)
    inter = A @ B.T
    union = A.sum(1)[:, None] + B.sum(1)[None, :] - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


# --------------------------------------------------------------------------- one model
def fit_scores(Xtr, Ytr, Xte, *, gamma, lam, kernel="rbf", training="loo", lam_mode="absolute"):
    """SparseSBLR fitted on (Xtr, Ytr); its logits on Xte.

    ``training="loo"`` is the library (each training row's own term left out of its evidence);
    ``"self"`` is the paper's Eq. 2 read literally (training rows' evidence sums over D_k,
    own row included: ``featurizer.transform(Xtr)``).
    ``lam_mode="relative"`` reads ``lam`` as a ratio of each label's own ``lambda_max`` (SLEP's
    ``opts.rFlag = 1``): label k is fitted with ``lam * lambda_max(F, y_k)``, one
    ``fit_layer`` per label; ``"absolute"`` is the library (one ``lam`` for every label).
    """
    est = SparseSBLRClassifier(gamma=gamma, lam=lam, kernel=kernel, approx=None)
    feat = SimilarityFeaturizer(kernel=kernel, gamma=gamma, normalize="mean", approx=None)
    feat.fit(Xtr, Ytr)
    F = feat.training_evidence() if training == "loo" else feat.transform(Xtr)
    est.fit_from_evidence(feat, F)
    Fte = feat.transform(Xte)
    if lam_mode == "absolute":
        return est.decision_from_evidence(Fte)
    S = np.empty((Fte.shape[0], Ytr.shape[1]))
    for k in range(Ytr.shape[1]):
        y = Ytr[:, [k]]
        lam_k = lam * lambda_max(F, y[:, 0]) if 0 < y.sum() < len(y) else lam
        est.set_params(lam=lam_k).fit_layer(F, y)
        S[:, k] = Fte @ est.coef_[0] + est.intercept_[0]
    return S


def sml_scores(Xtr, Ytr, Xte, *, gamma, kernel="rbf"):
    """SML's ranking scores (raw class sums; its set-size rule shifts rows, ranks unchanged)."""
    feat = SimilarityFeaturizer(kernel=kernel, gamma=gamma, normalize="sum", approx=None)
    return feat.fit(Xtr, Ytr).transform(Xte)


def score_all(Y, S, pred=None):
    pred = (S >= 0).astype(int) if pred is None else pred
    out = {name: metrics.score(name, Y, pred, S) for name in METRICS}
    out["coverage_index_ties"] = coverage_index_ties(Y, S)
    return out


#: Buckets of "training positives of the row's lowest-ranked relevant label".
BUCKETS = ((0, 0), (1, 1), (2, 5), (6, 10**9))


def coverage_floor(Y, splits):
    """Lowest coverage of any scorer that ranks labels without a training positive (in the row's
    fold) last: such a row costs m - 1, every other row |Y_i| - 1."""
    cov = np.maximum(Y.sum(axis=1) - 1, 0).astype(float)
    for tr, te in splits:
        unseen = Y[tr].sum(axis=0) == 0
        cov[te[(Y[te][:, unseen] > 0).any(axis=1)]] = Y.shape[1] - 1
    return float(cov.mean())


def excess_by_rarity(Y, S, train_counts):
    """Coverage above each row's minimum (|Y_i| - 1), summed per bucket of the training
    positives of the row's lowest-scored relevant label, divided by the number of rows: the
    buckets add up to coverage - (cardinality - 1)."""
    lowest = np.where(Y > 0, S, np.inf).min(axis=1, keepdims=True)
    cov = np.maximum((S >= lowest).sum(axis=1) - 1, 0)
    excess = cov - np.maximum(Y.sum(axis=1) - 1, 0)
    worst = np.argmin(np.where(Y > 0, S, np.inf), axis=1)
    n_worst = train_counts[worst]
    return {
        f"excess[{lo}-{hi if hi < 10**9 else ''}]": float(
            excess[(n_worst >= lo) & (n_worst <= hi)].sum()
        )
        for lo, hi in BUCKETS
    }


def coverage_index_ties(Y, S):
    """Coverage as Zhang's MATLAB ``Coverage.m`` computes it: ascending ``sort`` (stable), so a
    tie is broken by label index, not pessimistically; ``mean(m - min position + 1) - 1``."""
    m = S.shape[1]
    order = np.argsort(S, axis=1, kind="stable")  # ascending, ties by index
    pos = np.empty_like(order)
    pos[np.arange(len(S))[:, None], order] = np.arange(1, m + 1)
    lowest = np.where(Y > 0, pos, m + 1).min(axis=1)
    return float(np.mean(m - lowest + 1) - 1)


# --------------------------------------------------------------------------- one fold
def method_scores(method, Xfit, Yfit, Xeval, *, gamma, lam, kernel, training, lam_mode):
    """Scores on ``Xeval`` of ``method`` fitted on (Xfit, Yfit), and SML's own predictions
    (None for SparseSBLR, whose predictions are its scores >= 0).  SML is scored by its
    decision_function, as sblr.tuning.tune scores it."""
    if method == SML.key:
        sml = SMLClassifier(gamma=gamma, kernel=kernel, approx=None).fit(Xfit, Yfit)
        return sml.decision_function(Xeval), sml.predict(Xeval)
    S = fit_scores(
        Xfit,
        Yfit,
        Xeval,
        gamma=gamma,
        lam=lam,
        kernel=kernel,
        training=training,
        lam_mode=lam_mode,
    )
    return S, None


def select(Xtr, Ytr, *, gammas, lams, kernel, training, metric, seed, method, lam_mode="absolute"):
    """The paper's 10% hold-out selection (the split of sblr.tuning.tune, ties: grid order)."""
    fit_rows, val_rows = validation_split(np.arange(len(Ytr)), Ytr, 0.1, seed)[:2]
    best, best_params = None, None
    for g in gammas:
        for lam in lams if method == SPARSE_SBLR.key else [None]:
            S, _ = method_scores(
                method,
                Xtr[fit_rows],
                Ytr[fit_rows],
                Xtr[val_rows],
                gamma=g,
                lam=lam,
                kernel=kernel,
                training=training,
                lam_mode=lam_mode,
            )
            v = metrics.score(metric, Ytr[val_rows], (S >= 0).astype(int), S)
            if np.isnan(v):
                continue
            if best is None or metrics.is_better(metric, v, best):
                best, best_params = v, (g, lam)
    return best_params


#: The variants: one candidate change each against "default".
VARIANTS = {
    "default": {},
    "finer gamma grid (1e1..1e-5, 3/decade)": {
        "gammas": tuple(10.0 ** np.arange(1, -5.01, -1 / 3))
    },
    "cosine (0/1 rows)": {"kernel": cosine01, "gammas": (1.0,)},
    "jaccard (0/1 rows)": {"kernel": jaccard01, "gammas": (1.0,)},
    "select by coverage": {"metric": "coverage"},
    "train w/o leave-one-out (Eq. 2)": {"training": "self"},
    "lambda relative to each label's lambda_max": {"lam_mode": "relative"},
    "Eq. 2 training + relative lambda": {"training": "self", "lam_mode": "relative"},
    "SML (reference)": {"method": SML.key},
}
QUICK = (
    "default",
    "cosine (0/1 rows)",
    "train w/o leave-one-out (Eq. 2)",
    "lambda relative to each label's lambda_max",
    "SML (reference)",
)


def run_variant(
    X,
    Y,
    splits,
    *,
    gammas=PAPER_GRID,
    lams=PAPER_GRID,
    kernel="rbf",
    training="loo",
    metric="average_precision",
    method=SPARSE_SBLR.key,
    seed=0,
    lam_mode="absolute",
):
    per_fold, chosen = [], []
    for tr, te in splits:
        g, lam = select(
            X[tr],
            Y[tr],
            gammas=gammas,
            lams=lams,
            kernel=kernel,
            training=training,
            metric=metric,
            seed=seed,
            method=method,
            lam_mode=lam_mode,
        )
        S, pred = method_scores(
            method,
            X[tr],
            Y[tr],
            X[te],
            gamma=g,
            lam=lam,
            kernel=kernel,
            training=training,
            lam_mode=lam_mode,
        )
        row = score_all(Y[te], S, pred)
        for k, v in excess_by_rarity(Y[te], S, Y[tr].sum(axis=0)).items():
            row[k] = v / len(Y)  # summed over folds below: a share of coverage over all rows
        per_fold.append(row)
        chosen.append((g, lam))
    df = pd.DataFrame(per_fold)
    out = df.mean()
    excess = [c for c in df.columns if c.startswith("excess")]
    out[excess] = df[excess].sum()
    return out, chosen


def check_default(ds, splits):
    """The default variant is the library's protocol: fold 0 agrees with run_fold."""
    X, Y = np.asarray(ds.X, float), np.asarray(ds.y, int)
    lib = {r["metric"]: r["value"] for r in run_fold(ds, SPARSE_SBLR.key, 0, splits).rows}
    ours, _ = run_variant(X, Y, splits[:1])
    for name in METRICS:
        if not np.isclose(lib[name], ours[name], atol=1e-9):
            raise SystemExit(
                f"default variant differs from run_fold on {name}: {ours[name]} vs {lib[name]}"
            )


def paper_values():
    p = pd.read_csv(PAPER)
    out = {}
    for ds, key in (("genbase", "genbase"), ("medical", "gen45")):
        sub = p[p.dataset == ds].set_index("metric")
        out[key] = {m.label: sub[m.label].to_dict() for m in (SPARSE_SBLR, SML)}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="decisive variants only; 5 folds on the generated sets"
    )
    ap.add_argument(
        "--folds", type=int, default=10, help="folds (genbase; generated sets too unless --quick)"
    )
    args = ap.parse_args(argv)
    names = QUICK if args.quick else tuple(VARIANTS)
    paper = paper_values()
    t0 = time.perf_counter()
    for key, (X, Y, ds) in datasets(args.quick).items():
        folds = 5 if (args.quick and ds is None) else args.folds
        splits = make_splits(Y, scheme="kfold", n_splits=folds, random_state=0)
        if ds is not None:
            splits = benchmark_splits(ds, folds, 0)
            check_default(ds, splits)
        counts = Y.sum(0)
        print(
            f"\n## {key}: {X.shape[0]} rows, {X.shape[1]} columns ({int((X.std(0) > 0).sum())} "
            f"non-constant), {Y.shape[1]} labels ({int((counts <= 6).sum())} with <= 6 "
            f"positives, {int((counts == 1).sum())} with 1), cardinality {Y.sum(1).mean():.3f}, "
            f"{folds}-fold CV; minimum possible coverage {Y.sum(1).mean() - 1:.3f}, "
            f"{coverage_floor(Y, splits):.3f} if labels never seen in training rank last"
        )
        table = {}
        for name in names:
            res, chosen = run_variant(X, Y, splits, **VARIANTS[name])
            table[name] = res
        df = pd.DataFrame(table).T
        excess = [c for c in df.columns if c.startswith("excess")]
        df = df[[*METRICS, "coverage_index_ties", *excess]]
        ref = paper.get(key)
        if ref:
            label = f"paper {SPARSE_SBLR.label}" + ("" if key == "genbase" else " (medical)")
            pad = [np.nan] * (1 + len(excess))
            df.loc[label] = [ref[SPARSE_SBLR.label].get(m, np.nan) for m in METRICS] + pad
            df.loc[label.replace(SPARSE_SBLR.label, SML.label)] = [
                ref[SML.label].get(m, np.nan) for m in METRICS
            ] + pad
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print(df.round(3).to_string())
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
