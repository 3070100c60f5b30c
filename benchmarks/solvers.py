"""Compare the logistic-layer solver with scikit-learn's L1 solvers on real class evidence.

Usage: python benchmarks/solvers.py [ARFF]   (default: ../shared/datasets/multilabel/yeast.arff,
falling back to the planted sample data; with sblr importable: `pip install -e .` in the repository)

For each lambda it prints, per solver, the time to fit all per-class problems
and the worst KKT violation of the SparseSBLR objective
(1/n) sum logloss + lam ||beta||_1 with an unpenalized intercept.
"""

import sys
import time
import warnings
from pathlib import Path

from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

import sblr
from sblr import SimilarityFeaturizer, load_dataset
from sblr.logistic import fit_logistic, kkt_violation
from sblr.samples import load_sample

#: The package (``python -m sblr``) by its module's name: the same string as SBLR's key, but
#: the package, not the model.
PACKAGE = sblr.__name__
ROOT = Path(__file__).resolve().parents[1]


def main():
    default = ROOT.parent / "shared" / "datasets" / "multilabel" / "yeast.arff"
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    ds = load_dataset(path) if path.exists() else load_sample("planted")
    F = SimilarityFeaturizer(gamma=0.1).fit_transform(ds.X, ds.label_matrix())
    Y = ds.label_matrix()
    n, m = F.shape
    print(f"data: {ds.name}  evidence {n} x {m}  (gamma = 0.1)")
    print(f"{'lambda':>8} {'solver':>10} {'seconds':>9} {'max KKT':>9}")
    for lam in (1e-2, 1e-3, 1e-4):
        solvers = {
            PACKAGE: lambda yk, lam=lam: _ours(F, yk, lam),  # the package's own solver
            "saga": lambda yk, lam=lam: _sklearn(F, yk, lam, "saga"),
            "liblinear": lambda yk, lam=lam: _sklearn(F, yk, lam, "liblinear"),
        }
        for name, solve in solvers.items():
            start = time.perf_counter()
            worst = 0.0
            for k in range(m):
                if Y[:, k].min() == Y[:, k].max():
                    continue
                beta, b = solve(Y[:, k])
                worst = max(worst, kkt_violation(F, Y[:, k], beta, b, lam))
            print(f"{lam:>8.0e} {name:>10} {time.perf_counter() - start:>9.2f} {worst:>9.1e}")


def _ours(F, y, lam):
    fit = fit_logistic(F, y, lam, tol=1e-6)
    return fit.coef, fit.intercept


def _sklearn(F, y, lam, solver):
    # C * sum(loss) + ||w||_1 == n C (mean loss + ||w||_1 / (n C)): C = 1 / (n lam).
    # liblinear also penalizes the intercept; a large intercept_scaling weakens that.
    clf = LogisticRegression(
        C=1 / (len(y) * lam),
        l1_ratio=1.0,
        solver=solver,
        tol=1e-6,
        max_iter=10_000,
        intercept_scaling=1e3,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(F, y)
    return clf.coef_[0], clf.intercept_[0]


if __name__ == "__main__":
    main()
