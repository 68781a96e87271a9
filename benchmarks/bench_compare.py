"""Wall time of a large ``compare`` serial, with ``--n-jobs 2``, and on a 2-worker Dask cluster.

The job: ``ensemblekit compare c45 knn`` with 10x5 stratified CV (``--cv 5 --repeats 10``)
on letter, pendigits, optdigits, segment and waveform-5000 (the shared UCI folder),
500 units of work in all. Each variant runs as a whole process, as a user would
run it; the Dask cluster (``LocalCluster``, 2 worker processes of 1 thread, on
127.0.0.1, Dask's default configuration) is started before timing and its
start-up is reported separately. The compare runs twice on that cluster: the
first run finds fresh workers, which import scikit-learn and ensemblekit inside
the timed run (about 1 s each here); the second finds them as a long-lived
cluster keeps them, with those modules loaded. All outputs (``--format json``)
must be byte-identical. The machine's speed drifts by several per cent from one
minute to the next here, so the four variants run back to back in each of
``--rounds`` rounds (a new cluster each round) and the medians are compared.

Target (issue 3): parallel and Dask wall time at most 0.6x the serial time.

Run from the repository root:  ``python benchmarks/bench_compare.py [--rounds 3] [--data-dir ../shared/datasets]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("letter", "pendigits", "optdigits", "segment", "waveform-5000")


def timed(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, out


def one_round(base: list[str]) -> tuple[dict[str, float], list[str], float]:
    """Wall times of the four variants, run back to back, with a new Dask cluster."""
    from distributed import LocalCluster

    times, outputs = {}, []
    times["serial"], out = timed(base)
    outputs.append(out)
    times["parallel"], out = timed(base + ["--n-jobs", "2"])
    outputs.append(out)
    start = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        cluster_start = time.perf_counter() - start
        times["dask"], out = timed(base + ["--scheduler", cluster.scheduler_address])
        outputs.append(out)
        times["dask2"], out = timed(base + ["--scheduler", cluster.scheduler_address])
        outputs.append(out)
    return times, outputs, cluster_start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the four variants, interleaved; medians are reported")
    args = parser.parse_args()
    exe = shutil.which("ensemblekit") or str(Path(sys.executable).parent / "ensemblekit")
    data = []
    for name in FILES:
        data += ["--data", str(Path(args.data_dir) / f"{name}.arff")]
    base = [exe, "compare", "c45", "knn", *data, "--cv", "5", "--repeats", str(args.repeats),
            "--seed", "1", "--format", "json"]
    rounds, outputs, starts = [], [], []
    for _ in range(args.rounds):
        times, outs, cluster_start = one_round(base)
        rounds.append(times)
        outputs += outs
        starts.append(cluster_start)
    units = len(FILES) * 2 * 5 * args.repeats
    print(f"compare c45 knn, {args.repeats}x5-fold CV, {len(FILES)} data sets, {units} units; "
          f"{args.rounds} interleaved rounds")
    print(f"{'variant':28s} {'median s':>9s} {'x serial':>9s}  {'per round (x serial)':24s} target <= 0.6")
    labels = {"serial": "serial (--n-jobs 1)", "parallel": "joblib --n-jobs 2",
              "dask": "dask, fresh workers", "dask2": "dask, second run"}
    serial = statistics.median(r["serial"] for r in rounds)
    for key, label in labels.items():
        wall = statistics.median(r[key] for r in rounds)
        each = " ".join(f"{r[key] / r['serial']:.2f}" for r in rounds)
        verdict = "" if key == "serial" else ("yes" if wall / serial <= 0.6 else "NO")
        print(f"{label:28s} {wall:9.1f} {wall / serial:9.2f}  {each:24s} {verdict}")
    print(f"(a new LocalCluster with 2 workers each round; its start took "
          f"{statistics.median(starts):.1f} s, not counted)")
    print(f"outputs byte-identical: {'yes' if len(set(outputs)) == 1 else 'NO'}")


if __name__ == "__main__":
    main()
