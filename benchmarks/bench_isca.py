"""Time, peak memory and NMI of ISCA on letter as the number of rows grows (issue 21).

For each size n (default 2,000, 5,000, 10,000 and 20,000 rows of letter, 16
numeric attributes, 26 classes) a fresh subprocess:

1. loads the rows from a ``.npz`` copy the parent wrote (the first n rows of a
   seeded random permutation of the file; letter has no missing values and
   no nominal attributes, so the registry's preprocessing would change
   nothing and the estimator is fitted directly);
2. fits ``ISCA(n_clusters=26, random_state=seed)`` with the default settings
   (M = 50 stages, m = 20 rules, no memory, average linkage) and any
   ``--set key=value`` given;
3. prints the fit's wall time, the part of it spent gathering the rules
   (``(rules)``: the stages, with their projections and lasso selections, if
   any; the rest is the blocked distances and the linkage), and the NMI
   (geometric normalisation) of the labels with the classes.

With ``--repeats R`` every size is measured R times, each in a fresh process,
the sizes interleaved (2k, 5k, ..., 2k, 5k, ...); the fastest time and the
largest peak are kept (the fits are deterministic: same rules, labels, NMI).

Peak memory is the child's whole-life peak resident set (``ru_maxrss`` of the
child, read by the parent with ``os.wait4``: imports, data and fit alike), the
figure the 4 GB bound of issue 21 is about; ``(+fit)`` is its increase over
the resident set just before the fit (``VmRSS``), the memory the fit itself
needed. The growth exponents are least-squares slopes of log(seconds) and
log(peak increase) against log(n).

Threads: one BLAS/OpenMP thread by default (``--threads 1``, threadpoolctl),
so the figures are per core and do not depend on other load; ``--threads 0``
keeps the libraries' defaults.

Usage, from the repository root::

    python benchmarks/bench_isca.py [--data-dir ../shared/datasets] [--sizes 2000 5000 10000 20000]
        [--seed 0] [--threads 1] [--repeats 1] [--set rule_selection=lasso ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = ROOT.parent / "shared" / "datasets"


def _status_kib(field):
    """A ``Vm...`` field of /proc/self/status in KiB (None without /proc)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _parse_settings(pairs):
    out = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        for cast in (int, float):
            try:
                value = cast(value)
                break
            except ValueError:
                continue
        out[key] = value
    return out


def _measure(args):
    """Subprocess entry: one fit, printed as JSON on stdout."""
    from sklearn.metrics import normalized_mutual_info_score
    from threadpoolctl import threadpool_limits

    from ensemblekit.rules.isca import ISCA

    if args.threads > 0:
        threadpool_limits(args.threads)
    data = np.load(args.path)
    X, y = data["X"][:args.n], data["y"][:args.n]
    model = ISCA(n_clusters=int(np.unique(y).size), random_state=args.seed,
                 **_parse_settings(args.settings))
    gather = []
    run_stages = model._gather_rules

    def timed_stages(*a):  # the rule gathering (stages, projections, selection), timed apart
        start = time.perf_counter()
        out = run_stages(*a)
        gather.append(time.perf_counter() - start)
        return out

    model._gather_rules = timed_stages
    rss_before = _status_kib("VmRSS")
    t0 = time.perf_counter()
    model.fit(X)
    seconds = time.perf_counter() - t0
    nmi = normalized_mutual_info_score(y, model.labels_, average_method="geometric")
    print(json.dumps({"seconds": seconds, "gather_seconds": gather[0], "nmi": nmi,
                      "rss_before_kib": rss_before,
                      "n_rules": int(model.n_rules_),
                      "model_bytes": int(model.rule_matrix_.nbytes)}))


def _run_measure(n, path, args):
    cmd = [sys.executable, __file__, "--_n", str(n), "--_path", str(path), "--seed",
           str(args.seed), "--threads", str(args.threads)]
    for pair in args.settings:
        cmd += ["--set", pair]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"n={n}: the measuring process failed (exit {proc.returncode})")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_kib"] = usage.ru_maxrss  # KiB on Linux
    return result


def _slope(x, y):
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                        help="directory holding letter.arff (default: ../shared/datasets "
                             "relative to the repository root)")
    parser.add_argument("--sizes", nargs="+", type=int, default=[2000, 5000, 10000, 20000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads (0: library defaults)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="fresh processes per size, interleaved (fastest time kept)")
    parser.add_argument("--set", dest="settings", action="append", default=[],
                        metavar="KEY=VALUE", help="an ISCA parameter (repeatable)")
    parser.add_argument("--_n", dest="n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--_path", dest="path", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.n:
        _measure(args)
        return

    import tempfile

    from ensemblekit.data import load_dataset

    ds = load_dataset(str(Path(args.data_dir) / "letter.arff"))
    X, y = np.asarray(ds.X, dtype=np.float64), np.asarray(ds.y)
    order = np.random.RandomState(args.seed).permutation(X.shape[0])
    settings = ", ".join(args.settings) or "defaults"
    print(f"ISCA on letter ({X.shape[0]} rows x {X.shape[1]}, k = {np.unique(y).size}); "
          f"{settings}; seed {args.seed}; threads: {args.threads or 'library defaults'}; "
          f"best of {max(1, args.repeats)}")
    print("rows: first n of a seeded permutation; peak = child's whole-life max RSS "
          "(os.wait4 ru_maxrss); +fit = peak - RSS before fit; fresh process per size")
    header = (f"{'n':>6} {'rules':>5} | {'fit s':>8} {'(rules)':>8} | {'peak MiB':>9} {'(+fit)':>8} | "
              f"{'T packed KiB':>12} | {'NMI':>6}")
    print(header)
    print("-" * len(header))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "letter.npz"
        np.savez(path, X=X[order], y=y[order])
        runs = {n: [] for n in args.sizes}
        for _ in range(max(1, args.repeats)):
            for n in args.sizes:
                runs[n].append(_run_measure(n, path, args))
        for n in args.sizes:
            r = dict(runs[n][0])
            r["seconds"] = min(x["seconds"] for x in runs[n])
            r["gather_seconds"] = min(x["gather_seconds"] for x in runs[n])
            r["peak_kib"] = max(x["peak_kib"] for x in runs[n])
            increase = r["peak_kib"] - (r["rss_before_kib"] or 0)
            rows.append((n, r["seconds"], increase))
            print(f"{n:>6} {r['n_rules']:>5} | {r['seconds']:>8.1f} {r['gather_seconds']:>8.1f} | "
                  f"{r['peak_kib'] / 1024:>9.0f} "
                  f"{increase / 1024:>8.0f} | {r['model_bytes'] / 1024:>12.0f} | {r['nmi']:>6.3f}",
                  flush=True)
    if len(rows) >= 2:
        n, seconds, increase = map(np.array, zip(*rows))
        print(f"growth exponents (log-log least squares over n = {n.min()}..{n.max()}): "
              f"time {_slope(n, seconds):.2f}, peak increase {_slope(n, increase):.2f}")
        if len(rows) >= 3:
            print(f"  over the two largest sizes: time {_slope(n[-2:], seconds[-2:]):.2f}, "
                  f"peak increase {_slope(n[-2:], increase[-2:]):.2f}")


if __name__ == "__main__":
    main()
