"""Fair job slots under a hog: what other users wait while one user runs long jobs.

A class of ``--students`` users each asks for short computations (a SparseSBLR fit of the
planted sample at one λ, what a λ step costs) one after the other, while one user holds two
"tabs" running Tune-like long jobs (a grid of fits, ``take_turn`` between grid points, as the
dashboard's Tune does). Every computation goes through the dashboard's own job slots
(pages._shared.server: first come, first served, at most PER_USER slots a user). The same
students are measured on an idle server (no hog) in the same run; the script prints their
p50/p95 latency both ways and the ratio (target: p95 with the hog within 2x of idle).

The hog is measured twice more with its two tabs in two browser profiles (two users, one
network address): with long jobs limited per address (the dashboard's ``LONG_PER_ADDRESS``)
and without (each profile a user of its own, as before).

Run from the repo root, as a module (the dashboard's pages/ must be importable; sblr too:
`pip install -e .` in the repository)::

    python -m benchmarks.fair_slots [--students 8] [--seconds 20] [--step-fits 1]
"""

from __future__ import annotations

import argparse
import threading
import time

import numpy as np


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=8)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument(
        "--step-fits",
        type=int,
        default=1,
        help="fits in one step of the hog's grid (a large upload: long steps)",
    )
    args = p.parse_args(argv)

    from pages._shared import server
    from sblr import SparseSBLRClassifier

    # 45 labels, 600 rows: a λ step costs about what it does on such data in the dashboard
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 20))
    Y = (X @ rng.normal(size=(20, 45)) > 1.5).astype(int)
    F_model = SparseSBLRClassifier(lam=1e-3).fit(X, Y)  # warms the compiled solver too
    featurizer, F = F_model.featurizer_, F_model.featurizer_.training_evidence()
    lams = 10.0 ** np.arange(-5, -1, 0.25)

    def fit(lam):
        SparseSBLRClassifier(lam=float(lam)).fit_from_evidence(featurizer, F)

    def run(hog: bool, fair: bool = True, profiles: bool = False, per_address: bool = True):
        # fair=False: the slots as they were (any caller takes a free slot, no limit per user,
        # a long job keeps its slot to the end); profiles: the hog's tabs are two users of
        # one address; per_address: long jobs limited per address
        slots = server.FairSlots(
            server.MAX_JOBS,
            server.PER_USER if fair else server.MAX_JOBS,
            server.LONG_PER_ADDRESS if per_address else None,
        )
        server.job_slots = lambda: slots  # noqa: PLW0108 (this run's slots)
        server.current_user = lambda: threading.current_thread().name
        server.current_address = lambda: (
            "the hog's address"
            if threading.current_thread().name.startswith("hog")
            else threading.current_thread().name
        )
        stop = time.monotonic() + args.seconds
        waits: list[float] = []

        def student(i):
            rng = np.random.default_rng(i)
            while time.monotonic() < stop:
                t0 = time.monotonic()
                with server.job_slot(wait=True):
                    fit(rng.choice(lams))
                waits.append(time.monotonic() - t0)
                time.sleep(rng.uniform(0.2, 0.6))  # a student looks before the next step

        def tab():
            while time.monotonic() < stop:
                with server.job_slot(wait=True, long=True):
                    for lam in np.tile(lams, 4):  # a 64-point grid
                        for _ in range(args.step_fits):
                            fit(lam)
                        if fair:
                            server.take_turn()
                        if time.monotonic() > stop:
                            break

        threads = [
            threading.Thread(target=student, args=(i,), name=f"student{i}")
            for i in range(args.students)
        ]
        if hog:
            names = ("hog 1", "hog 2") if profiles else ("hog", "hog")
            threads += [threading.Thread(target=tab, name=name) for name in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return np.array(waits)

    idle, busy, unfair = run(False), run(True), run(True, fair=False)
    profiles = run(True, profiles=True)
    profiles_free = run(True, profiles=True, per_address=False)
    rows = (
        ("idle server", idle),
        ("a hog, fair slots", busy),
        ("a hog, the old slots", unfair),
        ("a hog in 2 profiles", profiles),
        ("… no per-address limit", profiles_free),
    )
    for name, w in rows:
        print(
            f"{name:24s} {len(w):5d} actions  p50 {np.median(w):.3f} s  "
            f"p95 {np.percentile(w, 95):.3f} s  max {w.max():.3f} s"
        )
    p95 = np.percentile(idle, 95)
    print(
        f"p95 ratio to idle: fair {np.percentile(busy, 95) / p95:.2f} (target <= 2), "
        f"old {np.percentile(unfair, 95) / p95:.2f}, two profiles "
        f"{np.percentile(profiles, 95) / p95:.2f} (without the address limit "
        f"{np.percentile(profiles_free, 95) / p95:.2f})"
    )


if __name__ == "__main__":
    main()
