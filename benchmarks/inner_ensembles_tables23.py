"""The protocol of the Inner Ensembles paper's Tables 2 (NMI) and 3 (purity), beside the paper's numbers.

Abbasian, Drummond, Japkowicz, Matwin, *Inner Ensembles*, ECML PKDD 2013,
Sect. 3.2: K-means, IEK-m and cluster ensembles (the graph-based CSPA, MCLA,
HGPA and the co-association HAC with single, average and complete linkage)
on 15 UCI data sets; a data set with more than 500 instances is subsampled
to 500 (without replacement); every configuration runs 30 times from 30
initial centres, K-means from the same centres as IEK-m; the ensemble
members are K-means runs on feature subsets drawn as IEK-m draws them; the
grid is ensemble size E = 10..100 x sample size (fraction of the features)
10%..100%, drawn *with* replacement (the tables report that regimen).

How it runs here (the ``ensemblekit.experiment`` API, i.e. what
``ensemblekit compare kmeans iekm cspa ... --runs 30 --max-instances 500
--grid n_estimators=... --grid max_features=... --set bootstrap_features=true
--baseline kmeans`` runs): one protocol of 30 clustering runs, seed 1; run r
of every algorithm gets the same estimator seed, so kmeans, iekm and every
consensus algorithm start run r from the same initial centres; k = number of
classes; raw attributes (no scaling), as the paper (its K-means NMI on wine,
0.43, needs raw attributes). Each configuration's score is the mean over the
30 runs.

Columns, as in the paper: for IEK-m the ranges of S-Size (max_features, in %)
and En-Size (n_estimators) over the grid points whose mean beats K-means, the
percentage of such points, and the average and best mean over them. For
G-Based and HAC the paper reports "the best performance of CSPA, MCLA and
HGPA" (resp. of the three linkages) without saying over which grid points it
averages; here, at every grid point the best member of the family is taken,
then "Avrg" is the mean of that over *all* grid points and "Best" its
maximum. Each cell shows ours, then the paper's number in brackets.

Cost: at every grid point the six consensus functions use the same members
(same seed, E and S); they are listed side by side, so that a worker builds
the members once and the five others take them from the estimators' member
cache. Run time: before the run the script times one unit of every algorithm at the
smallest and the largest E on every data set (one core) and extrapolates; when
the estimate exceeds ``--budget-minutes`` (40) the full grid is refused and
the estimate printed; ``--grid reduced`` then runs the documented smaller grid
(E in {10, 50, 100}, S in {0.1, 0.3, 0.5, 0.7, 0.9}: 15 of the 100 points),
``--force`` runs the full one anyway. A journal (``--resume FILE``) keeps
finished units, so an interrupted run continues where it stopped.

Usage, from the repository root::

    python benchmarks/inner_ensembles_tables23.py [--data-dir ../shared/datasets]
        [--grid full|reduced] [--n-jobs 2] [--estimate-only] [--force]
        [--output benchmarks/results/inner_ensembles_tables23.md]
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
DEFAULT_DATA_DIR = ROOT.parent / "shared" / "datasets"

#: (paper's name, file stem, load options): the 15 data sets of Tables 2-3.
DATASETS = (
    ("Ecoli", "ecoli", {}),
    ("Glass", "glass", {}),
    ("Heart-s", "heart-statlog", {}),
    ("Iris", "iris", {}),
    ("Letter", "letter", {}),
    ("Optdig", "optdigits", {}),
    ("Pendig", "pendigits", {}),
    ("Pima", "diabetes", {}),
    ("Segment", "segment", {}),
    ("Sonar", "sonar", {}),
    ("Vehicle", "vehicle", {}),
    # the paper clusters numeric attributes: vowel's three nominal ones are dropped
    ("Vowel", "vowel", {"ignore": ("Train or Test", "Speaker Number", "Sex")}),
    ("Wavef", "waveform-5000", {}),
    ("Wine", "wine", {"target": "class"}),  # class is the first attribute in this copy
    ("Yeast", "yeast", {}),
)

G_BASED = ("cspa", "mcla", "hgpa")
HAC = ("hac-single", "hac-average", "hac-complete")
GRIDS = {
    "full": (list(range(10, 101, 10)), [round(0.1 * i, 1) for i in range(1, 11)]),
    "reduced": ([10, 50, 100], [0.1, 0.3, 0.5, 0.7, 0.9]),
}

# The paper's Tables 2 and 3: K-means, IEK-m S-Size, En-Size, Perc, Avrg, Best,
# G-Based Avrg, Best, HAC Avrg, Best.
PAPER = {
    "nmi": {
        "Ecoli": (0.59, "-", "-", 0, 0.59, 0.59, 0.57, 0.57, 0.61, 0.62),
        "Glass": (0.38, "40-90", "10-100", 49, 0.4, 0.42, 0.34, 0.34, 0.38, 0.38),
        "Heart-s": (0.02, "20-90", "10-100", 88, 0.11, 0.31, 0.04, 0.05, 0.02, 0.02),
        "Iris": (0.71, "50-90", "10-100", 48, 0.75, 0.8, 0.77, 0.82, 0.77, 0.79),
        "Letter": (0.44, "30-90", "10-100", 63, 0.45, 0.46, 0.47, 0.47, 0.47, 0.48),
        "Optdig": (0.72, "20-90", "10-100", 86, 0.74, 0.75, 0.75, 0.76, 0.75, 0.77),
        "Pendig": (0.67, "40-90", "10-100", 54, 0.68, 0.7, 0.68, 0.69, 0.69, 0.7),
        "Pima": (0.02, "30-90", "10-100", 68, 0.05, 0.09, 0.11, 0.11, 0.02, 0.02),
        "Segment": (0.54, "20-90", "10-100", 67, 0.59, 0.63, 0.56, 0.58, 0.61, 0.62),
        "Sonar": (0.01, "10-90", "10-100", 66, 0.01, 0.02, 0.01, 0.01, 0.02, 0.02),
        "Vehicle": (0.19, "20-90", "10-100", 80, 0.19, 0.2, 0.19, 0.19, 0.19, 0.2),
        "Vowel": (0.2, "20-80", "10-100", 34, 0.24, 0.29, 0.21, 0.21, 0.21, 0.21),
        "Wavef": (0.36, "20-90", "10-100", 53, 0.37, 0.38, 0.36, 0.37, 0.36, 0.37),
        "Wine": (0.43, "20-90", "10-100", 69, 0.55, 0.72, 0.45, 0.51, 0.43, 0.43),
        "Yeast": (0.28, "90-90", "70-70", 1, 0.28, 0.28, 0.27, 0.27, 0.28, 0.28),
        "Average": (0.37, "", "", 55, 0.4, 0.44, 0.39, 0.4, 0.39, 0.39),
    },
    "purity": {
        "Ecoli": (0.81, "90-90", "30-90", 6, 0.81, 0.82, 0.8, 0.8, 0.81, 0.82),
        "Glass": (0.57, "30-90", "10-100", 49, 0.58, 0.6, 0.6, 0.62, 0.57, 0.57),
        "Heart-s": (0.59, "20-90", "10-100", 88, 0.68, 0.81, 0.62, 0.63, 0.59, 0.59),
        "Iris": (0.83, "50-90", "10-100", 56, 0.86, 0.9, 0.91, 0.94, 0.9, 0.92),
        "Letter": (0.32, "20-90", "10-100", 76, 0.34, 0.35, 0.34, 0.35, 0.34, 0.35),
        "Optdig": (0.74, "10-90", "10-100", 96, 0.77, 0.79, 0.81, 0.82, 0.78, 0.8),
        "Pendig": (0.69, "40-90", "10-100", 62, 0.71, 0.73, 0.72, 0.73, 0.7, 0.71),
        "Pima": (0.66, "30-80", "10-100", 48, 0.67, 0.7, 0.68, 0.69, 0.66, 0.66),
        "Segment": (0.57, "20-90", "10-100", 79, 0.61, 0.64, 0.62, 0.66, 0.64, 0.65),
        "Sonar": (0.55, "10-90", "10-100", 66, 0.56, 0.58, 0.55, 0.56, 0.55, 0.56),
        "Vehicle": (0.45, "20-90", "10-100", 84, 0.46, 0.47, 0.47, 0.47, 0.47, 0.47),
        "Vowel": (0.23, "20-80", "10-100", 46, 0.26, 0.31, 0.24, 0.24, 0.23, 0.23),
        "Wavef": (0.56, "10-90", "10-100", 40, 0.56, 0.59, 0.55, 0.55, 0.56, 0.56),
        "Wine": (0.7, "20-90", "10-100", 71, 0.81, 0.92, 0.75, 0.78, 0.7, 0.7),
        "Yeast": (0.52, "50-90", "50-80", 8, 0.52, 0.52, 0.52, 0.52, 0.54, 0.54),
        "Average": (0.59, "", "", 58, 0.61, 0.65, 0.61, 0.62, 0.6, 0.61),
    },
}


def load(data_dir, max_instances, seed, names):
    from ensemblekit.data import load_dataset
    from ensemblekit.experiment.protocol import subsample

    out = []
    for label, stem, options in DATASETS:
        if names and label not in names and stem not in names:
            continue
        ds = load_dataset(str(Path(data_dir) / f"{stem}.arff"), **options).with_nominal_class()
        out.append((label, subsample(ds, max_instances, seed)))
    return out


def candidates(grid):
    from ensemblekit import registry
    from ensemblekit.experiment.protocol import expand_grid

    estimators, features = grid
    axes = {"n_estimators": estimators, "max_features": features}
    out = [expand_grid("kmeans", registry.get("kmeans").resolve({}), {})[0]]
    out += expand_grid("iekm", registry.get("iekm").resolve({"bootstrap_features": "true"}), axes)
    # the six consensus functions of one grid point side by side: they build the
    # same members, which a worker then computes once (consensus._MemberCache)
    per_algo = [expand_grid(a, registry.get(a).resolve({"bootstrap_features": "true"}), axes)
                for a in G_BASED + HAC]
    for point in zip(*per_algo):
        out += point
    return out


def estimate_seconds(datasets, cands, runs, n_jobs):
    """Pilot: one unit per (data set, algorithm) at the smallest and largest E, one core."""
    from threadpoolctl import threadpool_limits

    from ensemblekit import registry

    cost = {}
    estimators = sorted({c.params["n_estimators"] for c in cands if "n_estimators" in c.grid})
    lo, hi = estimators[0], estimators[-1]
    algos = list(dict.fromkeys(c.algorithm for c in cands))
    def fit_seconds(algo, ds, E, k, seed):
        params = registry.get(algo).resolve({"bootstrap_features": "true"}
                                            if algo != "kmeans" else {})
        params["n_clusters"] = k
        if E is not None:
            params.update(n_estimators=E, max_features=0.5)
        model = registry.make_estimator(algo, ds.schema, params, seed)
        t0 = time.perf_counter()
        model.fit_predict(ds.X)
        return time.perf_counter() - t0

    with threadpool_limits(1):
        label, ds = datasets[0]  # warm-up: imports and first-call costs are not per unit
        for algo in algos:
            fit_seconds(algo, ds, None if algo == "kmeans" else lo, 2, 1)
        # two repetitions with other seeds (other members), the faster kept: the machine
        # may be shared, and a burst of other work should not set the estimate. Within a
        # repetition the consensus algorithms share members, as in the run.
        for label, ds in datasets:
            k = int(np.unique(ds.y[ds.y >= 0]).size)
            for seed in (12345, 12346):
                for algo in algos:
                    for E in ((None,) if algo == "kmeans" else (lo, hi)):
                        sec = fit_seconds(algo, ds, E, k, seed)
                        key = (label, algo, E)
                        cost[key] = min(cost.get(key, np.inf), sec)
    total = 0.0
    for label, _ in datasets:
        for c in cands:
            if c.algorithm == "kmeans":
                total += cost[(label, "kmeans", None)]
                continue
            E = c.params["n_estimators"]
            a, b = cost[(label, c.algorithm, lo)], cost[(label, c.algorithm, hi)]
            total += a + (b - a) * (E - lo) / max(1, hi - lo)
    return total * runs / max(1, n_jobs), cost


def family_summary(summary, cands, names, metric, family):
    """Per data set: mean over grid points of the family's best mean, and the best of those."""
    points = {}
    for c in cands:
        if c.algorithm in family:
            key = (c.params["n_estimators"], c.params["max_features"])
            points.setdefault(key, []).append(c.label)
    out = {}
    for d in names:
        best = [max(summary[(d, lab, metric)][0] for lab in labels if (d, lab, metric) in summary)
                for labels in points.values()
                if any((d, lab, metric) in summary for lab in labels)]
        which = {}
        for labels in points.values():
            present = [(summary[(d, lab, metric)][0], lab) for lab in labels
                       if (d, lab, metric) in summary]
            if present:
                winner = max(present)[1].split("[")[0]
                which[winner] = which.get(winner, 0) + 1
        out[d] = (float(np.mean(best)), float(np.max(best)), which) if best else None
    return out


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def table(metric, summary, cands, names, paper_names):
    from ensemblekit.experiment.analysis import grid_summary

    iekm = {r["dataset"]: r for r in grid_summary(summary, [c for c in cands
                                                            if c.algorithm in ("kmeans", "iekm")],
                                                  "kmeans", names, metric, True)}
    g = family_summary(summary, cands, names, metric, G_BASED)
    h = family_summary(summary, cands, names, metric, HAC)
    paper = PAPER[metric]
    lines = [
        "| Dataset | K-means | IEK-m S-Size | En-Size | Perc | Avrg | Best | G-Based Avrg | Best "
        "| HAC Avrg | Best |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    cols = {k: [] for k in ("km", "perc", "ia", "ib", "ga", "gb", "ha", "hb")}
    for d, label in zip(names, paper_names):
        p = paper[label]
        r = iekm.get(d)
        km = summary[(d, "kmeans", metric)][0]
        if r is not None and r["ranges"]:
            s = r["ranges"]["max_features"]
            e = r["ranges"]["n_estimators"]
            s_size = f"{round(100 * s[0])}-{round(100 * s[1])}"
            e_size = f"{e[0]}-{e[1]}"
        else:
            s_size = e_size = "-"
        perc = r["percent"] if r else 0.0
        ia, ib = (r["average"], r["best"]) if r else (None, None)
        ga, gb, _ = g[d] or (None, None, None)
        ha, hb, _ = h[d] or (None, None, None)
        for key, v in zip(cols, (km, perc, ia if ia is not None else km, ib if ib is not None else km,
                                 ga, gb, ha, hb)):
            cols[key].append(v)
        lines.append(
            f"| {label} | {fmt(km)} ({p[0]}) | {s_size} ({p[1]}) | {e_size} ({p[2]}) | "
            f"{perc:.0f}% ({p[3]}%) | {fmt(ia)} ({p[4]}) | {fmt(ib)} ({p[5]}) | {fmt(ga)} ({p[6]}) | "
            f"{fmt(gb)} ({p[7]}) | {fmt(ha)} ({p[8]}) | {fmt(hb)} ({p[9]}) |")
    p = paper["Average"]
    mean = {k: float(np.mean([v for v in vals if v is not None])) for k, vals in cols.items()}
    lines.append(
        f"| Average | {mean['km']:.2f} ({p[0]}) | | | {mean['perc']:.0f}% ({p[3]}%) | "
        f"{mean['ia']:.2f} ({p[4]}) | {mean['ib']:.2f} ({p[5]}) | {mean['ga']:.2f} ({p[6]}) | "
        f"{mean['gb']:.2f} ({p[7]}) | {mean['ha']:.2f} ({p[8]}) | {mean['hb']:.2f} ({p[9]}) |")
    return lines, cols, g, h


def friedman_lines(cols, case):
    """Friedman / Nemenyi over K-means, IEK-m, G-Based, HAC (the paper's 4-model comparison)."""
    from ensemblekit import stats

    keys = ("km", "ia", "ga", "ha") if case == "average" else ("km", "ib", "gb", "hb")
    M = np.column_stack([cols[k] for k in keys]).astype(float)
    ok = ~np.isnan(M).any(axis=1)
    M = M[ok]
    f = stats.friedman_test(M, True)
    ranks = stats.average_ranks(M, True)
    cd = stats.critical_difference(4, M.shape[0], 0.05)
    names = ("K-means", "IEK-m", "G-Based", "HAC")
    return (f"{case} case: Friedman chi2 = {f.chi2:.2f} (p = {f.chi2_pvalue:.3g}); average ranks "
            + ", ".join(f"{n} {r:.2f}" for n, r in zip(names, ranks))
            + f"; Nemenyi CD = {cd:.2f} (N = {M.shape[0]})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--datasets", nargs="*", help="subset (paper names or file stems)")
    parser.add_argument("--grid", choices=tuple(GRIDS), default="full")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--max-instances", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--budget-minutes", type=float, default=40.0)
    parser.add_argument("--estimate-only", action="store_true")
    parser.add_argument("--full-estimate", help="text for the report: the full grid's estimate "
                        "(from an --estimate-only run)")
    parser.add_argument("--force", action="store_true", help="run even above the budget")
    parser.add_argument("--resume", help="journal of finished units (each unit is then its own "
                        "task, which shares members between workers less well)")
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "results" /
                                                 "inner_ensembles_tables23.md"))
    args = parser.parse_args(argv)

    from ensemblekit import experiment

    # Load the estimators' libraries before any thread limit is set: threadpoolctl can
    # only limit an OpenMP runtime that is already loaded (scikit-learn's K-means
    # would otherwise run 2 OpenMP threads per unit on 2 busy cores).
    experiment.runner._warm_worker()
    datasets = load(args.data_dir, args.max_instances, args.seed, args.datasets)
    grid = GRIDS[args.grid]
    cands = candidates(grid)
    n_units = len(datasets) * len(cands) * args.runs
    t0 = time.perf_counter()
    estimate, pilot = estimate_seconds(datasets, cands, args.runs, args.n_jobs)
    per_algo = {}
    for (_, algo, E), sec in pilot.items():
        per_algo[(algo, E)] = per_algo.get((algo, E), 0.0) + sec
    print("pilot, seconds per unit summed over the data sets: "
          + ", ".join(f"{a}{'' if E is None else f'[E={E}]'} {v:.2f}"
                      for (a, E), v in per_algo.items()), flush=True)
    print(f"{args.grid} grid: {len(grid[0])} x {len(grid[1])} points, {len(cands)} configurations, "
          f"{len(datasets)} data sets, {args.runs} runs: {n_units:,} units; estimated "
          f"{estimate / 60:.0f} min on {args.n_jobs} worker(s) (pilot took "
          f"{time.perf_counter() - t0:.0f} s)", flush=True)
    if args.estimate_only:
        return
    if estimate > args.budget_minutes * 60 and not args.force:
        print(f"above the {args.budget_minutes:g}-minute budget: not run; use --grid reduced "
              "(or --force)")
        sys.exit(3)

    runner = experiment.Runner(args.n_jobs)
    warm = runner.prestart()  # workers import before their first unit
    if warm is not None:
        warm.join()
    protocol = experiment.Protocol("runs", repeats=args.runs, seed=args.seed)
    dsets = [ds for _, ds in datasets]
    work = experiment.plan(dsets, cands, protocol)
    done = [0]
    start = time.perf_counter()

    def tick():
        done[0] += 1
        if done[0] % 2000 == 0:
            elapsed = time.perf_counter() - start
            print(f"  {done[0]:,}/{n_units:,} units, {elapsed / 60:.1f} min", flush=True)

    result = runner.run(dsets, work, protocol, ("nmi", "purity"), resume=args.resume,
                        on_unit_done=tick)
    wall = time.perf_counter() - start
    if result.failures:
        print(f"{len(result.failures)} units failed; first: {result.failures[0].error}")
    summary = experiment.summarize(result.scores)
    unit_hours = sum(sc.seconds for sc in result.scores if sc.metric == "nmi") / 3600
    names = [ds.name for ds in dsets]
    labels = [label for label, _ in datasets]

    out = [
        "# Inner Ensembles, Tables 2 and 3: K-means, IEK-m and cluster ensembles",
        "",
        "Reproduction of the protocol of Abbasian et al. (ECML PKDD 2013), Sect. 3.2, with "
        "`benchmarks/inner_ensembles_tables23.py` (see its docstring). Each cell: ours, then "
        "the paper's value in brackets.",
        "",
        f"- Grid: **{args.grid}** - n_estimators (En-Size) in {grid[0]}, max_features (S-Size) in "
        f"{grid[1]}, features drawn with replacement (`bootstrap_features=true`); "
        + ("the paper's full 10 x 10 grid." if args.grid == "full" else
           "a reduced grid (15 of the paper's 100 points), because the full grid was estimated "
           "above the 40-minute budget on this 2-core machine (see the estimate below)."),
        f"- {args.runs} runs per configuration, seed {args.seed}, shared initial centres "
        "(run r of every algorithm starts from the same k instances); k = number of classes; "
        f"data sets over {args.max_instances} rows subsampled to {args.max_instances} "
        "(`--max-instances`); raw attributes.",
        "- IEK-m: ranges, share and average/best over the grid points whose mean beats "
        "K-means (`experiment.grid_summary`, as `compare --grid --baseline kmeans`). "
        "G-Based = best of cspa, mcla, hgpa at each grid point, HAC = best of the three linkages; their Avrg "
        "is the mean over all grid points, Best the maximum.",
        f"- {n_units:,} units, wall time {wall / 60:.1f} min with {args.n_jobs} workers "
        + (f"for the {result.computed:,} computed in this invocation, the rest read from the "
           f"journal (`--resume`; a run stopped and resumed keeps every finished unit); the "
           f"units' own times add up to {unit_hours:.1f} h on one core "
           if args.resume else "")
        + f"(pilot estimate {estimate / 60:.0f} min); {platform.machine()}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores shared with other jobs."
        + (f" The full 10 x 10 grid was estimated at {args.full_estimate} by the same pilot."
           if args.full_estimate else ""),
        "",
    ]
    for metric, title in (("nmi", "Table 2: NMI"), ("purity", "Table 3: purity")):
        lines, cols, g, h = table(metric, summary, cands, names, labels)
        out += [f"## {title}", ""] + lines + [""]
        out += [f"- {friedman_lines(cols, 'average')}", f"- {friedman_lines(cols, 'best')}"]
        g_wins = {}
        h_wins = {}
        for d in names:
            for src, dst in ((g[d], g_wins), (h[d], h_wins)):
                if src:
                    for k, v in src[2].items():
                        dst[k] = dst.get(k, 0) + v
        out.append("- grid points where each method was its family's best: "
                   + ", ".join(f"{k} {v}" for k, v in sorted(g_wins.items()))
                   + "; " + ", ".join(f"{k} {v}" for k, v in sorted(h_wins.items())))
        out.append("")
    text = "\n".join(out)
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
