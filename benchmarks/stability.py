"""Time the bootstrap stability of β (sblr.stability) on a bird-song-sized multi-label set.

Usage: python benchmarks/stability.py [--resamples B] [--lam LAM] [--shape birds|cal500]
(with sblr importable: `pip install -e .` in the repository)

Synthetic data of the shape of a 19-label bird-song data set (645 rows, 260
features, 19 labels) or, with ``--shape cal500``, of a 174-label song-annotation set
(502 rows, 68 features, 174 labels, about 26 per row); scikit-learn's
make_multilabel_classification, seed 0.
Prints the time of the evidence (computed once), of the fit on all rows, and
of B bootstrap refits of the logistic layer, for SBLR and SparseSBLR; the
issue's budget is B = 50 in <= 10 s on 2 cores.
"""

import argparse
import time

from sklearn.datasets import make_multilabel_classification

from sblr import SBLRClassifier, SimilarityFeaturizer, SparseSBLRClassifier
from sblr.stability import bootstrap_coefficients

SHAPES = {"birds": (645, 260, 19, 2), "cal500": (502, 68, 174, 26)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=50)
    parser.add_argument("--lam", type=float, default=1e-4)  # 1e-3 zeroes every β here
    parser.add_argument("--shape", choices=sorted(SHAPES), default="birds")
    args = parser.parse_args()
    n, d, m, per_row = SHAPES[args.shape]
    X, Y = make_multilabel_classification(
        n_samples=n, n_features=d, n_classes=m, n_labels=per_row, random_state=0
    )
    t0 = time.perf_counter()
    featurizer = SimilarityFeaturizer(gamma="scale").fit(X, Y)
    F = featurizer.training_evidence()
    t_evidence = time.perf_counter() - t0
    print(f"data: {n} rows x {d} features, {m} labels; evidence once: {t_evidence:.2f} s")
    for model in (SparseSBLRClassifier(gamma="scale", lam=args.lam), SBLRClassifier(gamma="scale")):
        t0 = time.perf_counter()
        model.fit_from_evidence(featurizer, F)
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = bootstrap_coefficients(model, F, n_resamples=args.resamples)
        t_boot = time.perf_counter() - t0
        name = type(model).__name__
        print(
            f"{name:22s} fit on all rows {t_fit:6.2f} s; {args.resamples} resamples "
            f"{t_boot:6.2f} s ({t_boot / args.resamples * 1000:.0f} ms each; budget 10 s: "
            f"{'met' if t_boot <= 10 else 'MISSED'}); selected in >= 90%: "
            f"{int((result.selection_frequency >= 0.9).sum())} of {m * m}"
        )


if __name__ == "__main__":
    main()
