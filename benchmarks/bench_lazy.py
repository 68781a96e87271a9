"""Prediction speed of ``lazy-bagging`` (L = 10) against its physical floor.

Lazy bagging grows L trees for every test row, so a row can never cost less than
fitting L trees on the N training rows. For kr-vs-kp (all 3,196 rows: 2,557 training,
the rest for testing) and letter (5,000 training rows), this prints:

* ``fit s``: the lazy fit (gain-ratio weights, neighbour index, tree encoding);
* ``floor ms``: growing L = 10 of lazy-bagging's own trees (``--tree``: unpruned ``c45``,
  J48 -U, by default, or ``cart-entropy``) on all N training rows (best of 3), i.e. the
  least a row can cost;
* test rows per second with ``n_jobs=1`` and ``n_jobs=2`` (workers started before
  timing), the serial cost of a row over the floor (1.00 = nothing but the trees)
  and the speed-up of 2 jobs;
* whether the serial and parallel predictions are identical (they must be).

Data through :func:`ensemblekit.data.load_dataset`, estimators through
:func:`ensemblekit.registry.make_estimator` (seed 1).

Run from the repository root:
``python benchmarks/bench_lazy.py [--data-dir ../shared/datasets] [--rows 100]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# file, training rows (None: 80% of the file), test rows
CASES = (("kr-vs-kp", None), ("letter", 5000))


def split(ds, n_train, seed=0):
    """Stratification is not needed here: a seeded shuffle, then the first n_train rows."""
    idx = np.flatnonzero(ds.y >= 0)
    idx = np.random.default_rng(seed).permutation(idx)
    n_train = int(0.8 * idx.size) if n_train is None else n_train
    return np.sort(idx[:n_train]), idx[n_train:]


def floor_seconds(lazy, n_trees, runs=3):
    """Best time of growing ``n_trees`` of a fitted lazy model's trees on all its training rows.

    Each tree is grown as a row's trees are (the model's ``_grow_tree``), on a bag that
    holds every training row once (encoding excluded).
    """
    context = lazy._chunk_context(lazy.distance_.X_[:1])
    counts = np.ones(lazy.y_codes_.size)
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for seed in range(n_trees):
            lazy._grow_tree(context, counts, seed)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--rows", type=int, default=100, help="test rows timed per file")
    parser.add_argument("--estimators", type=int, default=10)
    parser.add_argument("--tree", default="c45", choices=("c45", "cart-entropy"),
                        help="lazy-bagging's trees")
    args = parser.parse_args()
    from ensemblekit import registry
    from ensemblekit.data import load_dataset

    L = args.estimators
    print(f"lazy-bagging, L = {L}, tree = {args.tree}, {args.rows} test rows per file")
    print(f"{'file':10s} {'N':>5s} {'K':>4s} {'fit s':>6s} {'floor ms':>9s} {'rows/s 1 job':>12s} "
          f"{'rows/s 2 jobs':>13s} {'x floor':>7s} {'2 jobs x':>8s} {'same':>5s}")
    for name, n_train in CASES:
        ds = load_dataset(Path(args.data_dir) / f"{name}.arff")
        train, test = split(ds, n_train)
        test = test[: args.rows]
        model = registry.make_estimator("lazy-bagging", ds.schema,
                                        {"n_estimators": L, "tree": args.tree}, 1)
        start = time.perf_counter()
        model.fit(ds.X[train], ds.y[train])
        fit_s = time.perf_counter() - start
        floor = floor_seconds(model["model"], L)
        timings, outputs = {}, {}
        for jobs in (1, 2):
            model.set_params(model__n_jobs=jobs)
            model.predict_proba(ds.X[test[:4]])  # warm up (and start joblib's workers)
            start = time.perf_counter()
            outputs[jobs] = model.predict_proba(ds.X[test])
            timings[jobs] = time.perf_counter() - start
        per_row = timings[1] / test.size
        same = outputs[1].tobytes() == outputs[2].tobytes()
        print(f"{name:10s} {train.size:5d} {model['model'].k_:4d} {fit_s:6.2f} {floor * 1e3:9.1f} "
              f"{test.size / timings[1]:12.1f} {test.size / timings[2]:13.1f} {per_row / floor:7.2f} "
              f"{timings[1] / timings[2]:8.2f} {'yes' if same else 'NO':>5s}")


if __name__ == "__main__":
    main()
