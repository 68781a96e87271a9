"""`random-forest` against scikit-learn's RandomForestRegressor on housing, by 10-fold CV.

Issue 21, acceptance 4: ``random-forest`` (Breiman's forest grown as an ISLE
ensemble: bootstrap samples, deep trees, equal weights) must be within 3 % RMSE
of scikit-learn's ``RandomForestRegressor`` with the same number of trees.

Both run on the same repeated 10-fold splits (scikit-learn's ``RepeatedKFold``,
as ``ensemblekit compare`` cuts them for regression) and on the same columns:
the forest is put in place of our model at the end of the registry's own
pipeline (CHAS one-hot, missing values imputed), so only the forests differ.
Each fold's two forests get the same seed; ours derives its trees' seeds from it
(the ISLE seed), so the two are different draws of the same kind of forest,
not the same trees (``tests/rules/test_random_forest.py`` checks that the trees
are equal when the seeds are). Settings: scikit-learn's regression defaults
(``max_features=1.0``, ``min_samples_leaf=1``) at 100, 200 (our default) and 500
trees, and Breiman's ``max_features`` of a third of the attributes at 200 trees.
The last table is ``ensemblekit compare random-forest --cv 10`` itself, through
the API, for the command the issue names.

Run from the repository root:
    python benchmarks/bench_random_forest.py [--data sample_data/housing.arff] [--repeats 3]
        [--out benchmarks/results/bench_random_forest.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT / "sample_data" / "housing.arff"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bench_random_forest.md"
#: (number of trees, max_features) settings compared
SETTINGS = ((100, 1.0), (200, 1.0), (500, 1.0), (200, 0.33))
#: the acceptance bound on |ours - scikit-learn's| / scikit-learn's mean RMSE
TOLERANCE = 0.03


def _pipelines(ds, n_estimators: int, max_features: float, seed: int):
    """Our registry pipeline and the same pipeline ending in scikit-learn's forest."""
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestRegressor

    from ensemblekit import registry

    spec = registry.get("random-forest")
    params = spec.resolve({"n_estimators": str(n_estimators), "max_features": str(max_features)})
    ours = registry.make_estimator("random-forest", ds.schema, params, seed)
    theirs = clone(ours)
    theirs.steps[-1] = ("model", RandomForestRegressor(n_estimators=n_estimators,
                                                       max_features=max_features,
                                                       random_state=seed))
    return ours, theirs


def paired_rmse(ds, n_estimators: int, max_features: float, repeats: int, seed: int, log):
    """Per-fold test RMSE of our forest and scikit-learn's on the same splits, shape (2, folds)."""
    from sklearn.model_selection import RepeatedKFold

    from ensemblekit.metrics import METRICS

    rmse = METRICS["rmse"]
    out = []
    splits = RepeatedKFold(n_splits=10, n_repeats=repeats, random_state=seed).split(ds.X)
    for f, (train, test) in enumerate(splits):
        ours, theirs = _pipelines(ds, n_estimators, max_features, seed + f)
        row = []
        for model in (ours, theirs):
            model.fit(ds.X[train], ds.y[train])
            row.append(rmse.score(np.asarray(model.predict(ds.X[test]), dtype=float),
                                  truth=ds.y[test]))
        out.append(row)
    log(f"{n_estimators} trees, max_features={max_features}: done")
    return np.array(out).T


def compare_rmse(data: Path, repeats: int, seed: int) -> tuple[float, float, int]:
    """``ensemblekit compare random-forest --data DATA --cv 10 --repeats R -m rmse`` via the API."""
    from ensemblekit import api

    result = api.compare(["random-forest"], [str(data)], metrics=["rmse"], cv=10,
                         repeats=repeats, seed=seed)
    (value,) = [v for (_, label, metric), v in result.summary.items()
                if label == "random-forest" and metric == "rmse"]
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="regression ARFF file")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of the 10-fold CV")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="Markdown file to write")
    args = parser.parse_args(argv)

    from ensemblekit.data import load_dataset

    def log(message):
        print(message, file=sys.stderr, flush=True)

    start = time.time()
    ds = load_dataset(args.data)
    rows, worst = [], 0.0
    for n_estimators, max_features in SETTINGS:
        ours, theirs = paired_rmse(ds, n_estimators, max_features, args.repeats, args.seed, log)
        gap = (ours.mean() - theirs.mean()) / theirs.mean()
        worst = max(worst, abs(gap))
        diff = ours - theirs
        rows.append(f"| {n_estimators} | {max_features} | {ours.mean():.4f} ± {ours.std(ddof=1):.4f} "
                    f"| {theirs.mean():.4f} ± {theirs.std(ddof=1):.4f} | {100 * gap:+.2f} % | "
                    f"{diff.mean():+.4f} ± {diff.std(ddof=1) / np.sqrt(diff.size):.4f} | "
                    f"{int((diff < 0).sum())}/{diff.size} |")
    mean, sd, n = compare_rmse(Path(args.data), args.repeats, args.seed)
    elapsed = time.time() - start
    name = Path(args.data).name
    lines = [
        "# `random-forest` against scikit-learn's RandomForestRegressor",
        "",
        f"{name} ({ds.X.shape[0]} rows), {args.repeats} x 10-fold CV (RepeatedKFold, seed "
        f"{args.seed}), the same splits and columns for both forests. Test RMSE, mean ± sd over "
        f"the {10 * args.repeats} folds; gap = (ours - scikit-learn's) / scikit-learn's mean; "
        "paired difference = mean ± standard error of the per-fold differences; the last "
        "column counts the folds where ours is lower.",
        "",
        "| trees | max_features | ours | scikit-learn | gap | paired difference | ours lower |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Largest gap {100 * worst:.2f} % (acceptance: within {100 * TOLERANCE:.0f} %): "
        + ("met." if worst <= TOLERANCE else "NOT met."),
        "",
        f"`ensemblekit compare random-forest --data {name} --cv 10 --repeats {args.repeats} -m "
        f"rmse` (200 trees, registry defaults): RMSE {mean:.4f} ± {sd:.4f} over {n} folds.",
        "",
        f"Run: `python benchmarks/bench_random_forest.py --repeats {args.repeats}`, "
        f"{elapsed:.0f} s, serial, on {platform.machine()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}, scikit-learn {_sklearn_version()}, {os.cpu_count()} cores.",
        "",
    ]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    print("\n".join(lines))
    log(f"wrote {out}")
    return 0 if worst <= TOLERANCE else 1


def _sklearn_version() -> str:
    import sklearn

    return sklearn.__version__


if __name__ == "__main__":
    sys.exit(main())
