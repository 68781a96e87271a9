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
must be byte-identical.

Target (issue 3): parallel and Dask wall time at most 0.6x the serial time.

Run from the repository root:  ``python benchmarks/bench_compare.py [--data-dir ../shared/datasets]``
"""

from __future__ import annotations

import argparse
import shutil
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    exe = shutil.which("ensemblekit") or str(Path(sys.executable).parent / "ensemblekit")
    data = []
    for name in FILES:
        data += ["--data", str(Path(args.data_dir) / f"{name}.arff")]
    base = [exe, "compare", "c45", "knn", *data, "--cv", "5", "--repeats", str(args.repeats),
            "--seed", "1", "--format", "json"]
    serial_s, serial_out = timed(base)
    parallel_s, parallel_out = timed(base + ["--n-jobs", "2"])
    from distributed import LocalCluster

    start = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        cluster_start = time.perf_counter() - start
        dask_s, dask_out = timed(base + ["--scheduler", cluster.scheduler_address])
        warm_s, warm_out = timed(base + ["--scheduler", cluster.scheduler_address])
    units = len(FILES) * 2 * 5 * args.repeats
    print(f"compare c45 knn, {args.repeats}x5-fold CV, {len(FILES)} data sets, {units} units")
    print(f"{'variant':28s} {'wall s':>8s} {'x serial':>9s}  target <= 0.6")
    print(f"{'serial (--n-jobs 1)':28s} {serial_s:8.1f} {1.0:9.2f}")
    print(f"{'joblib --n-jobs 2':28s} {parallel_s:8.1f} {parallel_s / serial_s:9.2f}  "
          f"{'yes' if parallel_s / serial_s <= 0.6 else 'NO'}")
    for label, seconds in (("dask, fresh workers", dask_s), ("dask, second run", warm_s)):
        print(f"{label:28s} {seconds:8.1f} {seconds / serial_s:9.2f}  "
              f"{'yes' if seconds / serial_s <= 0.6 else 'NO'}")
    print(f"(LocalCluster with 2 workers; its start took {cluster_start:.1f} s, not counted)")
    same = serial_out == parallel_out == dask_out == warm_out
    print(f"outputs byte-identical: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
