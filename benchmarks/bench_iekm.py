"""Speed and memory of Inner Ensemble K-means (IEK-m) against scikit-learn's K-means.

For each data set (default: letter and pendigits, class attribute dropped,
k = number of classes):

1. choose k initial centres with ``initial_centers(X, k, "random", seed)``;
2. run scikit-learn's ``KMeans(init=centres, n_init=1, tol=0, algorithm="lloyd")``
   to its natural end and take its iteration count N;
3. time that same K-means fit, and IEK-m (``n_estimators=10``,
   ``max_features=0.5``, ``resample="each-iteration"``, same centres) with
   ``max_iter=N``, so both run the same number of iterations.

Seconds per iteration = wall time of the whole ``fit`` / ``n_iter_`` (best of
``--repeats`` fits in one process). Both include their set-up (validation,
centring); IEK-m's also includes the one extra assignment step it makes when
it stops at ``max_iter`` (so its figure is slightly pessimistic). The two
measurements alternate for ``--rounds`` rounds (scikit-learn, IEK-m,
scikit-learn, ...), so that a change in the machine's load hits both; the
table shows the medians over the rounds, and the ratio is the median of the
rounds' ratios.

IEK-m's assignment kernel is compiled with numba; every IEK-m process first
imports numba and loads the compiled kernels (from numba's on-disk cache,
once per machine compiled), before any timing or memory reset, like the
imports of the estimators. That one-time cost per process is printed
separately (first round).

Peak memory: every measurement runs in a fresh subprocess that loads the data
(from a ``.npz`` copy written by the parent, so that parsing the ARFF does not
set the peak) and imports the estimators. Just before the first fit it resets
the kernel's high-water mark of the resident set (``5`` written to
``/proc/self/clear_refs``) and notes the current RSS (``VmRSS``); after the fit
it reads the high-water mark ``VmHWM`` from ``/proc/self/status`` -- the
counter behind ``getrusage().ru_maxrss``, which itself cannot be used here
because it also keeps the peak of already-exited threads (reached while
importing). Reported: the peak RSS during the fit and its increase over the
RSS before the fit, i.e. the extra memory the fit needed, numpy arrays *and*
scikit-learn's C/OpenMP buffers alike (tracemalloc would miss the latter).
Without Linux's /proc, ``ru_maxrss`` (whole-life peak) is shown, flagged ``*``.

Threads: by default both run single-threaded (``--threads 1``, set with
threadpoolctl for BLAS and OpenMP after the estimators are imported: a limit
only reaches the libraries already loaded, and scikit-learn's OpenMP runtime
is loaded by ``import sklearn.cluster``), which gives per-core figures;
``--threads 0`` keeps the libraries' defaults. The threads each library
actually had are printed.

The NMI (geometric normalisation, as in the paper) of each clustering with
the classes is printed for context.

Usage, from the repository root::

    python benchmarks/bench_iekm.py [--data-dir ../shared/datasets] [--seed 0] [--repeats 5]
                                    [--rounds 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = ROOT.parent / "shared" / "datasets"


def load_xy(path):
    """Numeric attributes (class dropped), class codes and number of classes."""
    try:
        from ensemblekit.data import load_dataset
    except ImportError:  # data module not there: read with liac-arff
        import arff

        with open(path) as fh:
            rows = arff.load(fh)["data"]
        X = np.array([r[:-1] for r in rows], dtype=np.float64)
        _, y = np.unique([r[-1] for r in rows], return_inverse=True)
    else:
        ds = load_dataset(str(path))
        X, y = np.asarray(ds.X, dtype=np.float64), np.asarray(ds.y)
    return X, y, int(np.unique(y).size)


def _reset_peak_rss():
    """Reset the peak-RSS mark of this process (Linux >= 4.0); False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _status_kib(field):
    """A ``Vm...`` field of /proc/self/status in KiB; ru_maxrss (KiB on Linux) without /proc."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _measure(args):
    """Subprocess entry: one kind of fit, printed as JSON on stdout."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score
    from threadpoolctl import threadpool_info, threadpool_limits

    from ensemblekit.clustering.inner_kmeans import InnerEnsembleKMeans

    data = np.load(args.path)
    X, y = data["X"], data["y"]
    k = int(np.unique(y).size)
    centres = np.array(json.loads(args.centres), dtype=np.float64)
    load = {}
    if args.kind == "sklearn":
        def make():
            return KMeans(k, init=centres, n_init=1, tol=0.0, algorithm="lloyd",
                          max_iter=args.max_iter)
    else:
        def make():
            return InnerEnsembleKMeans(k, n_estimators=args.n_estimators,
                                       max_features=args.max_features, init=centres,
                                       max_iter=args.max_iter, random_state=args.seed)
        # One-time cost: import numba and load the compiled kernels (a fit on a
        # few rows of the same types).
        rss0 = _status_kib("VmRSS")
        t0 = time.perf_counter()
        InnerEnsembleKMeans(2, n_estimators=2, max_iter=2, random_state=0).fit(X[:20])
        load = {"load_seconds": time.perf_counter() - t0,
                "load_kib": _status_kib("VmRSS") - rss0}
    # After the imports: a limit only reaches the libraries already loaded.
    limiter = threadpool_limits(args.threads) if args.threads > 0 else None
    threads = sorted({f"{i['internal_api']}={i['num_threads']}" for i in threadpool_info()})

    reset = _reset_peak_rss()
    rss_before = _status_kib("VmRSS")
    times = []
    for rep in range(args.repeats):
        model = make()
        t0 = time.perf_counter()
        model.fit(X)
        times.append(time.perf_counter() - t0)
        if rep == 0:
            rss_after = _status_kib("VmHWM")
            n_iter = int(model.n_iter_)
            nmi = normalized_mutual_info_score(y, model.labels_, average_method="geometric")
    del limiter
    print(json.dumps({
        "seconds": min(times), "n_iter": n_iter, "nmi": nmi, "threads": threads,
        "rss_kib": rss_after, "rss_increase_kib": rss_after - rss_before, "reset": reset,
        **load,
    }))


def _run_measure(kind, path, centres, max_iter, args):
    cmd = [sys.executable, __file__, "--_measure", kind, "--_path", str(path),
           "--_centres", json.dumps(centres.tolist()), "--_max-iter", str(max_iter),
           "--seed", str(args.seed), "--repeats", str(args.repeats),
           "--threads", str(args.threads),
           "--n-estimators", str(args.n_estimators), "--max-features", str(args.max_features)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _mib(result):
    return f"{result['rss_kib'] / 1024:.1f}" + ("" if result["reset"] else "*")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                        help="directory holding the ARFF files (default: ../shared/datasets "
                             "relative to the repository root)")
    parser.add_argument("--datasets", nargs="+", default=["letter", "pendigits"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=5, help="fits per timing (best is kept)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="alternating scikit-learn / IEK-m measurements (medians shown)")
    parser.add_argument("--n-estimators", type=int, default=10)
    parser.add_argument("--max-features", type=float, default=0.5)
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads for both (0: library defaults)")
    parser.add_argument("--_measure", dest="kind", help=argparse.SUPPRESS)
    parser.add_argument("--_path", dest="path", help=argparse.SUPPRESS)
    parser.add_argument("--_centres", dest="centres", help=argparse.SUPPRESS)
    parser.add_argument("--_max-iter", dest="max_iter", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.kind:
        _measure(args)
        return

    import os
    import tempfile

    from sklearn.cluster import KMeans

    from ensemblekit.clustering.kmeans import initial_centers

    print(f"IEK-m E={args.n_estimators} max_features={args.max_features} vs scikit-learn "
          f"KMeans (lloyd, tol=0); seed {args.seed}; best of {args.repeats} fits per "
          f"measurement, {args.rounds} alternating rounds (medians); "
          f"threads limit: {args.threads or 'library defaults'}")
    print("same initial centres; iterations = scikit-learn's natural count N, "
          "IEK-m run with max_iter=N; memory = peak RSS (VmHWM) during the first fit, fresh process per fit")
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f}")
    header = (f"{'data':<10} {'n':>6} {'d':>3} {'k':>3} {'N':>4} | {'sk s/it':>9} "
              f"{'iekm s/it':>9} {'ratio':>6} | {'sk peak MiB':>11} {'(+fit)':>7} "
              f"{'iekm peak MiB':>13} {'(+fit)':>7} | {'NMI sk':>6} {'NMI iekm':>8}")
    print(header)
    print("-" * len(header))
    notes = []
    tmp = tempfile.TemporaryDirectory()
    for name in args.datasets:
        X, y, k = load_xy(Path(args.data_dir) / f"{name}.arff")
        path = Path(tmp.name) / f"{name}.npz"
        np.savez(path, X=np.ascontiguousarray(X), y=y)
        centres = initial_centers(X, k, "random", random_state=args.seed)
        natural = KMeans(k, init=centres, n_init=1, tol=0.0, algorithm="lloyd",
                         max_iter=10_000).fit(X).n_iter_
        rounds = []
        for _ in range(args.rounds):
            rounds.append((_run_measure("sklearn", path, centres, natural, args),
                           _run_measure("iekm", path, centres, natural, args)))
        sk, ie = rounds[0]
        sk_its = [r[0]["seconds"] / r[0]["n_iter"] for r in rounds]
        ie_its = [r[1]["seconds"] / r[1]["n_iter"] for r in rounds]
        sk_it, ie_it = float(np.median(sk_its)), float(np.median(ie_its))
        ratio = float(np.median(np.divide(ie_its, sk_its)))
        print(f"{name:<10} {X.shape[0]:>6} {X.shape[1]:>3} {k:>3} {natural:>4} | "
              f"{sk_it:>9.5f} {ie_it:>9.5f} {ratio:>6.1f} | "
              f"{_mib(sk):>11} {sk['rss_increase_kib'] / 1024:>7.1f} "
              f"{_mib(ie):>13} {ie['rss_increase_kib'] / 1024:>7.1f} | "
              f"{sk['nmi']:>6.3f} {ie['nmi']:>8.3f}")
        notes.append(f"  {name}: ratio per round " + " ".join(f"{i / s:.1f}" for i, s in
                                                             zip(ie_its, sk_its))
                     + f"; IEK-m first use (numba import + cached kernels) {ie['load_seconds']:.2f} s, "
                     f"+{ie['load_kib'] / 1024:.0f} MiB; threads sk {','.join(sk['threads'])}, "
                     f"iekm {','.join(ie['threads'])}")
        if ie["n_iter"] != natural:
            notes.append(f"  {name}: IEK-m stopped after {ie['n_iter']} iterations "
                         "(no assignment change)")
    tmp.cleanup()
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.2f}")
    print("\n".join(notes))


if __name__ == "__main__":
    main()
