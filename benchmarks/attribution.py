"""Cost of the explain page's feature attributions (integrated gradients) on large data.

For each shape, fits SparseSBLR (λ = 1e-4, so that classes keep weights) and times
``sblr.attribution.feature_attributions`` for a training row (leave-one-out) against the
training mean and against its nearest contrast row, printing the quadrature nodes used and
the completeness gap (sum of the attributions minus the difference of the logits).

Run from the repository root (with sblr importable: ``pip install -e .``)::

    python benchmarks/attribution.py
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp


def _shapes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150_000, 20))
    yield "150,000 × 20, 2 classes (Nystroem evidence)", X, (X[:, 0] + X[:, 1] > 0).astype(int)
    X = rng.normal(size=(19_000, 20))
    yield "19,000 × 20, 2 classes (exact evidence)", X, (X[:, 0] + X[:, 1] > 0).astype(int)
    X = sp.random(978, 1449, density=0.02, random_state=0, format="csr")
    Y = (rng.random((978, 45)) < 0.1).astype(int)
    yield "978 × 1,449 sparse, 45 labels", X, Y


def main():
    from sblr import SparseSBLRClassifier
    from sblr.attribution import feature_attributions, nearest_contrast

    print(f"{'data':46} {'fit s':>7} {'baseline':>9} {'IG ms':>7} {'nodes':>6} {'gap':>9}")
    for name, X, y in _shapes():
        t0 = time.perf_counter()
        model = SparseSBLRClassifier(lam=1e-4).fit(X, y)
        fit = time.perf_counter() - t0
        row = 3
        x = X[row].toarray()[0] if sp.issparse(X) else X[row]
        k = int(np.argmax(np.abs(model.coef_).sum(axis=1)))  # a class with weights
        member = bool(model.featurizer_.Y_fit_[row, k])
        for label in ("mean", "contrast"):
            baseline = None
            if label == "contrast":
                j = nearest_contrast(model, x, k, member=member, exclude=row)
                baseline = X[j].toarray()[0] if sp.issparse(X) else X[j]
            t0 = time.perf_counter()
            fa = feature_attributions(model, x, k, baseline=baseline, leave_out=row)
            ms = 1e3 * (time.perf_counter() - t0)
            print(f"{name:46} {fit:7.1f} {label:>9} {ms:7.1f} {fa.n_nodes:6d} {fa.gap:9.1e}")


if __name__ == "__main__":
    main()
