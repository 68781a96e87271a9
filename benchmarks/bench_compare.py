"""Wall time of a large ``compare`` serial, with ``--n-jobs 2``, and on a 2-worker Dask cluster.

The job: ``ensemblekit compare c45 knn`` with 10x5 stratified CV (``--cv 5 --repeats 10``)
on letter, pendigits, optdigits, segment and waveform-5000 (the shared UCI folder),
500 units of work in all. Each variant runs as a whole process, as a user would
run it. A Dask cluster (``LocalCluster``, 2 worker processes of 1 thread, on
127.0.0.1) is started before timing and its start-up is reported separately.
The compare runs twice on each cluster: the first run finds fresh workers, which
import scikit-learn and ensemblekit inside the timed run (about 1 s each here);
the second finds them as a long-lived cluster keeps them, with those modules
loaded. Two clusters are timed in each round: one with Dask's default
configuration, and one whose workers do not run Dask's statistical profiler
(``distributed.worker.profile.enabled: False``). That profiler samples the stack
of each task thread every 10 ms; when the workers keep both cores busy, as here,
it slowed this job by 0-10 % (about 4 % typically). All outputs (``--format
json``) must be byte-identical. The machine's speed drifts by several per cent
from one minute to the next here, so the variants run back to back in each of
``--rounds`` rounds (new clusters each round; every other round in reverse
order), and each variant's time is divided by the serial time of its own round.
The verdict takes the median of those paired ratios, which a slow or fast
stretch of minutes moves much less than the ratio of the two medians (also
printed).

Target (issue 3): parallel and Dask wall time at most 0.6x the serial time.

Run from the repository root:
``python benchmarks/bench_compare.py [--rounds 3] [--data-dir ../shared/datasets]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("letter", "pendigits", "optdigits", "segment", "waveform-5000")


#: The environment every timed command gets: this process's as it was at start. A Dask nanny
#: writes its workers' variables (``distributed.nanny.pre-spawn-environ``: MALLOC_TRIM_THRESHOLD_,
#: OMP_NUM_THREADS, ...) into the environment of the process that runs it, which is this one
#: for a LocalCluster; without a copy taken first, every run after the first cluster would
#: inherit them (glibc's trim threshold alone made a serial compare about 3 % slower here).
CLEAN_ENV = dict(os.environ)


def timed(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=CLEAN_ENV).stdout
    return time.perf_counter() - start, out


#: The two cluster configurations timed: Dask's defaults, and workers without the profiler.
CLUSTERS = {"dask": {}, "quiet": {"distributed.worker.profile.enabled": False}}


def one_round(base: list[str], backwards: bool) -> tuple[dict[str, float], list[str], float]:
    """Wall times of every variant, run back to back (in reverse order if ``backwards``,
    so that no variant always runs at the same point of a round), with new Dask clusters."""
    import dask
    from distributed import LocalCluster

    times, outputs, starts = {}, [], []

    def local(name, extra):
        times[name], out = timed(base + extra)
        outputs.append(out)

    def on_cluster(name, config):
        start = time.perf_counter()
        with dask.config.set(config), LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                   host="127.0.0.1", dashboard_address=None) as cluster:
            starts.append(time.perf_counter() - start)
            for key in (name, name + "2"):  # fresh workers, then the same workers again
                times[key], out = timed(base + ["--scheduler", cluster.scheduler_address])
                outputs.append(out)

    steps = [lambda: local("serial", []), lambda: local("parallel", ["--n-jobs", "2"])]
    steps += [lambda name=name, config=config: on_cluster(name, config) for name, config in CLUSTERS.items()]
    for step in reversed(steps) if backwards else steps:
        step()
    return times, outputs, statistics.median(starts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the six variants, interleaved; medians are reported")
    args = parser.parse_args()
    exe = shutil.which("ensemblekit") or str(Path(sys.executable).parent / "ensemblekit")
    data = []
    for name in FILES:
        data += ["--data", str(Path(args.data_dir) / f"{name}.arff")]
    base = [exe, "compare", "c45", "knn", *data, "--cv", "5", "--repeats", str(args.repeats),
            "--seed", "1", "--format", "json"]
    rounds, outputs, starts = [], [], []
    for i in range(args.rounds):
        times, outs, cluster_start = one_round(base, backwards=i % 2 == 1)
        rounds.append(times)
        outputs += outs
        starts.append(cluster_start)
    units = len(FILES) * 2 * 5 * args.repeats
    print(f"compare c45 knn, {args.repeats}x5-fold CV, {len(FILES)} data sets, {units} units; "
          f"{args.rounds} interleaved rounds")
    print(f"{'variant':26s} {'median s':>8s} {'ratio':>6s} {'paired':>7s}  {'per round (x serial)':30s} "
          "target <= 0.6")
    labels = {"serial": "serial (--n-jobs 1)", "parallel": "joblib --n-jobs 2",
              "dask": "dask, fresh workers", "dask2": "dask, second run",
              "quiet": "dask no profiler, fresh", "quiet2": "dask no profiler, second"}
    serial = statistics.median(r["serial"] for r in rounds)
    for key, label in labels.items():
        wall = statistics.median(r[key] for r in rounds)
        ratios = [r[key] / r["serial"] for r in rounds]
        paired = statistics.median(ratios)
        verdict = "" if key == "serial" else ("yes" if paired <= 0.6 else "NO")
        each = " ".join(f"{x:.2f}" for x in ratios)
        print(f"{label:26s} {wall:8.1f} {wall / serial:6.2f} {paired:7.2f}  {each:30s} {verdict}")
    print("ratio: median wall / median serial wall; paired: median over rounds of wall / that "
          "round's serial wall (the verdict)")
    print(f"(new LocalClusters with 2 workers each round; a start took "
          f"{statistics.median(starts):.1f} s, not counted)")
    print(f"outputs byte-identical: {'yes' if len(set(outputs)) == 1 else 'NO'}")


if __name__ == "__main__":
    main()
