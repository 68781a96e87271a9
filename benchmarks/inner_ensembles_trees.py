"""Inner Ensembles (issue 34): more stable, as comprehensible and more accurate than their bases?

Protocol (Abbasian, Drummond, Japkowicz & Matwin, ECML PKDD 2013, Sect. 4 names the claims;
issue 34 "A reproduction" the experiment). Three comparisons, each a base learner against its
inner ensemble(s), on the 14 classification files of the paper's Table 1 found in the shared
data folder (the list of ``inner_ensembles_table1.py``):

* trees: ``c45`` (J48) against ``iec45:combine=average`` and ``iec45:combine=vote``, with
  ``bagging`` (of unpruned c45 trees, Weka's Bagging) beside them as the classic ensemble;
  r x k-fold stratified CV (default 10 x 10);
* Bayesian networks: ``k2`` against ``iebn``; the same CV;
* clusterers: ``kmeans`` against ``iekm``; seeded clustering runs on every row (default 30,
  the paper's, run r of both from the same initial centres), k = number of classes, a data
  set of more than 500 rows subsampled to 500 (Sect. 3.2).

Every algorithm runs with its registry defaults, at the noise levels 0, 0.2, 0.4 and 0.6
(``compare --noise``: that share of the values in the most significant half of the attributes
of each training fold, or clustering run, replaced by draws from the attribute's training
distribution; the test folds stay clean). Metrics: accuracy (classifiers) or NMI and purity
(clusterers), ``model-size`` (tree nodes, network arcs, cluster prototypes) and
``structure-stability`` (how alike the models of one repeat's training folds are: (attribute,
depth) split multisets for trees, arc sets for networks, ARI of the partitions for clusterers).
``bagging`` declares neither a model size nor a structure (it is E trees, not one model), so it
runs with accuracy only and its other cells stay empty.

Each comparison is one call of ``ensemblekit.app.comparing.compare`` (what ``ensemblekit
compare ... --noise 0 --noise 0.2 ... --resume JOURNAL`` runs), with one resume journal per
call under ``--cache-dir``: a stopped run continues from the units it finished, and the same
seed gives the same numbers, serial or with ``--n-jobs``.

Verdicts, computed from the table means over data sets, for each pair (base, inner ensemble)
and noise level, by the two-sided Wilcoxon signed-rank test over data sets
(``ensemblekit.stats.wilcoxon_signed_rank``, Demsar's handling of zero differences) at
``--alpha`` (0.05):

* more stable: the inner ensemble's structure stability is higher and p < alpha;
* as comprehensible: the geometric mean over data sets of (inner model size / base model size)
  is at most 1 + ``--size-tolerance`` (0.10: at most 10 % larger);
* more accurate: its accuracy (clusterers: NMI) is higher and p < alpha.

The ``--quick`` estimate of the full run's time scales the median unit time linearly in rows;
K2 and IEBN grow faster than that with the number of attributes, so take it as a lower bound.

Run from the repository root:
    python benchmarks/inner_ensembles_trees.py [--repeats 10] [--cv 10] [--runs 30]
        [--noise 0 0.2 0.4 0.6] [--n-jobs 2] [--data-dir ../shared/datasets]
        [--cache-dir benchmarks/results/inner_ensembles_trees_journals]
        [--out benchmarks/results/inner_ensembles_trees.md]
    python benchmarks/inner_ensembles_trees.py --quick --out /tmp/ie_trees_quick.md \\
        --cache-dir /tmp/ie_trees_quick   # smoke test: 2 files, 3-fold CV x 1, noise 0 and 0.2
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FILES = ("breast-w", "credit-a", "ecoli", "glass", "heart-c", "heart-statlog", "hepatitis",
         "iris", "labor", "liver-disorders", "lymph", "diabetes", "tic-tac-toe", "vote")
QUICK_FILES = ("iris", "labor")
NOISE = (0.0, 0.2, 0.4, 0.6)
CLASSIFIER_METRICS = ("accuracy", "model-size", "structure-stability")
CLUSTER_METRICS = ("nmi", "purity", "model-size", "structure-stability")
MAX_CLUSTER_ROWS = 500

#: name, title, the compare calls (journal name, algorithms, metrics), task, pairs (base, inner)
COMPARISONS = (
    ("trees", "Decision trees: C4.5 against Inner-Ensemble C4.5 (bagging beside them)",
     (("trees", ("c45", "iec45:combine=average", "iec45:combine=vote"), CLASSIFIER_METRICS),
      ("trees-bagging", ("bagging",), ("accuracy",))),
     "classification", (("c45", "iec45:combine=average"), ("c45", "iec45:combine=vote"))),
    ("bn", "Bayesian networks: K2 against IEBN",
     (("bn", ("k2", "iebn"), CLASSIFIER_METRICS),), "classification", (("k2", "iebn"),)),
    ("km", "Clustering: K-means against IEK-means",
     (("km", ("kmeans", "iekm"), CLUSTER_METRICS),), "clustering", (("kmeans", "iekm"),)),
)


def run_call(journal: Path, algorithms, metrics, files, task: str, args):
    """One ``compare`` over every noise level, resumed from (and recorded in) ``journal``."""
    from ensemblekit.app.comparing import compare

    protocol = ({"cv": args.cv, "repeats": args.repeats} if task == "classification" else
                {"runs": args.runs, "max_instances": MAX_CLUSTER_ROWS})
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.touch()
    notes = []
    start = time.perf_counter()
    result = compare(list(algorithms), [str(f) for f in files], metrics=list(metrics),
                     seed=args.seed, n_jobs=args.n_jobs, resume=str(journal),
                     noise=list(args.noise), notify=notes.append, **protocol)
    wall = time.perf_counter() - start
    print(f"{journal.name}: {result.computed} of {result.units} units computed in {wall:.1f} s",
          file=sys.stderr)
    return result, notes


def unit_seconds(result) -> list[float]:
    """Wall time of each of the comparison's units (whether computed now or read from the
    journal)."""
    units = {(s.dataset, s.algorithm, s.repeat, s.fold): s.seconds for s in result.scores}
    return [float(v) for v in units.values()]


def label(algorithm: str, level: float) -> str:
    return f"{algorithm}@noise={level:g}"


def _fmt(metric: str, value: float) -> str:
    if value != value:
        return "-"
    if metric == "accuracy":
        return f"{100 * value:.2f}"
    if metric == "model-size":
        return f"{value:.1f}"
    return f"{value:.3f}"


_SHORT = {"accuracy": "acc %", "model-size": "size", "structure-stability": "stab",
          "nmi": "NMI", "purity": "purity"}


def table(results, datasets, level: float) -> list[str]:
    """One Markdown table: a row per data set (and their mean), a column per (algorithm, metric)."""
    columns = [(a, m, summary) for summary, algos, metrics in results for a in algos
               for m in metrics]
    lines = ["| data set | " + " | ".join(f"{a} {_SHORT[m]}" for a, m, _ in columns) + " |",
             "|---|" + "---|" * len(columns)]
    means = {k: [] for k in range(len(columns))}
    for name in datasets:
        cells = []
        for k, (a, m, summary) in enumerate(columns):
            mean = summary.get((name, label(a, level), m), (float("nan"),))[0]
            means[k].append(mean)
            cells.append(_fmt(m, mean))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| **mean** | " + " | ".join(
        _fmt(m, float(np.mean(means[k]))) for k, (_, m, _) in enumerate(columns)) + " |")
    return lines


def _per_dataset(summary, algorithm, metric, datasets, level) -> np.ndarray:
    return np.array([summary.get((d, label(algorithm, level), metric), (float("nan"),))[0]
                     for d in datasets])


def verdict_row(summary, base: str, inner: str, quality: str, datasets, level: float,
                alpha: float, tolerance: float) -> str:
    """One row of the verdicts table, from the per-data-set means."""
    from ensemblekit.stats import wilcoxon_signed_rank

    def test(metric):
        a = _per_dataset(summary, inner, metric, datasets, level)
        b = _per_dataset(summary, base, metric, datasets, level)
        keep = np.isfinite(a) & np.isfinite(b)
        a, b = a[keep], b[keep]
        if a.size < 2:
            return None, "too few data sets"
        res = wilcoxon_signed_rank(a, b)
        diff = float(np.mean(a - b))
        better = diff > 0 and res.pvalue < alpha
        worse = diff < 0 and res.pvalue < alpha
        word = "**yes**" if better else ("no (worse)" if worse else "no (no significant difference)")
        return better, f"{word}: mean diff {diff:+.3f}, p = {res.pvalue:.3g}"

    _, stable = test("structure-stability")
    _, accurate = test(quality)
    inner_size = _per_dataset(summary, inner, "model-size", datasets, level)
    base_size = _per_dataset(summary, base, "model-size", datasets, level)
    ok = np.isfinite(inner_size) & np.isfinite(base_size) & (base_size > 0) & (inner_size > 0)
    ratio = float(np.exp(np.mean(np.log(inner_size[ok] / base_size[ok])))) if ok.any() else math.nan
    as_small = ratio <= 1 + tolerance
    size = (f"{'**yes**' if as_small else 'no'}: size ratio {ratio:.3f} (geometric mean), "
            f"{int(np.sum(inner_size[ok] <= (1 + tolerance) * base_size[ok]))} of {int(ok.sum())} "
            "data sets within the tolerance")
    return f"| {base} vs {inner} | {level:g} | {stable} | {size} | {accurate} |"


def estimate(timings, quick_files, args) -> str:
    """Extrapolate the full run's time from this run's units.

    The median unit time (the first units of a process also compile numba kernels, tens of
    seconds, which the median leaves out) per row of the data sets run, times the full run's
    units and rows: a rough, linear-in-rows estimate.
    """
    from ensemblekit.data import load_dataset

    def rows(names):
        return {n: load_dataset(Path(args.data_dir) / f"{n}.arff").X.shape[0] for n in names}

    here, full = rows(quick_files), rows(FILES)
    mean_rows = sum(here.values()) / len(here)
    parts, total = [], 0.0
    for name, task, seconds in timings:
        per_row = float(np.median(seconds)) / mean_rows
        algorithms = len(seconds) // (len(here) * len(args.noise)
                                      * (args.cv * args.repeats if task == "classification"
                                         else args.runs))
        if task == "classification":
            units, size = 10 * 10, sum(full.values())
        else:
            units, size = 30, sum(min(r, MAX_CLUSTER_ROWS) for r in full.values())
        est = per_row * size * units * len(NOISE) * algorithms
        total += est
        parts.append(f"{name} {est / 60:.1f} min")
    return (f"Estimated full run (defaults: 14 files, 10 x 10 CV, 30 runs, 4 noise levels; median "
            f"unit time per row here, scaled linearly in rows; one core): {total / 60:.1f} min "
            f"({', '.join(parts)}), plus about a minute of numba compilation per worker.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--files", nargs="*", default=None)
    parser.add_argument("--cv", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--noise", type=float, nargs="*", default=list(NOISE))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--size-tolerance", type=float, default=0.10)
    parser.add_argument("--only", choices=[c[0] for c in COMPARISONS], nargs="*", default=None)
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 2 files, --cv 3 --repeats 1 --runs 3, noise 0 and 0.2")
    parser.add_argument("--cache-dir",
                        default=str(ROOT / "benchmarks" / "results" / "inner_ensembles_trees_journals"))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "inner_ensembles_trees.md"))
    args = parser.parse_args()
    if args.quick:
        args.cv, args.repeats, args.runs, args.noise = 3, 1, 3, [0.0, 0.2]
        args.files = args.files or list(QUICK_FILES)
    names = args.files or list(FILES)
    files = [Path(args.data_dir) / f"{n}.arff" for n in names]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise SystemExit(f"data files not found: {', '.join(missing)}")
    cache = Path(args.cache_dir)

    out = ["# Inner Ensembles beyond the paper: trees, networks, clusterers, with noise", "",
           f"Produced by `python benchmarks/inner_ensembles_trees.py"
           f"{' --quick' if args.quick else ''}`: classifiers {args.repeats} x {args.cv}-fold "
           f"stratified CV, clusterers {args.runs} runs (at most {MAX_CLUSTER_ROWS} rows), seed "
           f"{args.seed}, noise levels {', '.join(f'{x:g}' for x in args.noise)}, on "
           f"{len(names)} data sets. See the script's docstring for the protocol. Accuracy in %; "
           "size = model size (tree nodes, network arcs, clusters); stab = structure stability. "
           "`bagging` declares no model size or structure: accuracy only.", ""]
    verdicts = ["## Verdicts", "",
                f"Wilcoxon signed-rank over the {len(names)} data sets, two-sided, alpha "
                f"{args.alpha:g}. More stable / more accurate: the inner ensemble is higher and "
                f"p < alpha. As comprehensible: geometric mean of (inner / base model size) <= "
                f"{1 + args.size_tolerance:g}. Accuracy means NMI for the clusterers.", "",
                "| pair | noise | more stable | as comprehensible | more accurate |",
                "|---|---|---|---|---|"]
    timings = []
    all_notes = []
    for key, title, calls, task, pairs in COMPARISONS:
        if args.only and key not in args.only:
            continue
        results, merged = [], {}
        for journal_name, algorithms, metrics in calls:
            result, notes = run_call(cache / f"{journal_name}.jsonl", algorithms, metrics, files,
                                     task, args)
            all_notes += [f"{journal_name}: {n}" for n in notes if "units computed now" not in n]
            results.append((result.summary, algorithms, metrics))
            merged.update(result.summary)
            timings.append((journal_name, task, unit_seconds(result)))
            for f in result.failures:
                all_notes.append(f"{journal_name}: {f.algorithm} failed on {f.dataset}: {f.error}")
        datasets = [n for n in names if any(k[0] == n for k in merged)]
        quality = "accuracy" if task == "classification" else "nmi"
        for level in args.noise:
            out += [f"## {title}, noise {level:g}", ""]
            out += table(results, datasets, level)
            out.append("")
            for base, inner in pairs:
                verdicts.append(verdict_row(merged, base, inner, quality, datasets, level,
                                            args.alpha, args.size_tolerance))
    text = "\n".join(out + verdicts) + "\n"
    if all_notes:
        text += "\n## Notes\n\n" + "\n".join(f"- {n}" for n in sorted(set(all_notes))) + "\n"
    text += ("\nUnit times (fit and score, first units of a worker include numba compilation): "
             + "; ".join(f"{n} {len(s)} units, {sum(s):.0f} s in all, median {np.median(s) * 1000:.1f} ms"
                         for n, _, s in timings) + ".\n")
    if args.quick:
        text += "\n" + estimate(timings, names, args) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
