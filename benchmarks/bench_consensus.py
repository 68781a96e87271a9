"""Time and peak memory of the cluster-ensemble consensus functions on letter (20,000 rows).

What is measured (defaults: letter.arff, class dropped, k = 26 classes, E = 30
members, seed 0):

1. The members are built once, as the ``cspa``/``mcla``/``hgpa``/``hac-*``
   estimators build them: K-means (scikit-learn Lloyd) from the seeded initial
   centres shared with ``kmeans``/``iekm``, each on a random half of the 16
   attributes drawn as IEK-m draws them. Their time is reported separately.
2. Each consensus function then runs on those same members in a fresh
   subprocess: ``hac-single``, ``hac-average``, ``hac-complete``
   (:func:`~ensemblekit.clustering.consensus.consensus_hac`), ``mcla``,
   ``hgpa`` with the paper's cut objective and with ``km1``, and ``cspa`` --
   which refuses at once above ``CSPA_MAX_SAMPLES`` (10,000) rows; the
   message and the time to refuse are reported. CSPA is then also measured
   at its limit: on the first 10,000 rows of the same members, and on a
   worst case of that size (30 random 2-cluster members, so that nearly every
   pair of rows shares a cluster somewhere and the graph has ~10^8 edges).
3. With ``--ec-python PATH``, the ``ensembleclustering`` package (PyPI,
   CSPA/HGPA/MCLA of Strehl & Ghosh with pymetis and kahypar) runs on the same
   members in that interpreter. It pins numpy < 2 and scikit-learn < 1.1 and
   fails on newer scipy (1.11 and later return dense matrices where it expects
   sparse ones), so it cannot share ensemblekit's environment; a
   separate one works::

       python3.11 -m venv /tmp/ec-venv
       /tmp/ec-venv/bin/pip install "numpy<2" "scipy<1.11" "scikit-learn<1.6" pymetis kahypar
       /tmp/ec-venv/bin/pip install --no-deps ensembleclustering

   (its ``hgpa`` uses KaHyPar's km1 direct k-way configuration with flow
   refinement, its ``mcla`` and ``cspa`` pymetis with default balance).

Peak memory: every measurement runs in a fresh process that loads the members
from a ``.npz`` file and imports what it needs, then resets the kernel's
high-water mark of the resident set (``5`` written to
``/proc/self/clear_refs``) and notes ``VmRSS``; after the call it reads
``VmHWM``. Reported: that peak (MiB) and its increase over the RSS before the
call. Each process is limited to ``--memory-limit-gb`` of address space
(``RLIMIT_AS``) and ``--timeout`` seconds, so a runaway method fails instead
of taking the machine down; such a run is reported as failed with its last
error line.

NMI (geometric, Strehl & Ghosh's) of each consensus with the classes and the
number of non-empty clusters are printed for context.

Usage, from the repository root (about 6 minutes without ensembleclustering)::

    python benchmarks/bench_consensus.py [--data-dir ../shared/datasets] [--dataset letter]
        [--n-estimators 30] [--seed 0] [--ec-python /tmp/ec-venv/bin/python]
        [--output benchmarks/results/consensus_letter.md]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = ROOT.parent / "shared" / "datasets"

OURS = ("hac-single", "hac-average", "hac-complete", "mcla", "hgpa", "hgpa-km1", "cspa")
THEIRS = ("cspa", "hgpa", "mcla")

# Code run by every measuring subprocess: peak-RSS helpers (no ensemblekit import,
# so that it also runs in ensembleclustering's interpreter).
_PRELUDE = r'''
import json, sys, time, resource
import numpy as np

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False

def kib(field):
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

data = np.load(sys.argv[1])
members = np.ascontiguousarray(data["members"])
k = int(sys.argv[3])
seed = int(sys.argv[4])
'''

_OURS_CALL = r'''
from ensemblekit.clustering import consensus as C
method = sys.argv[2]
funcs = {
    "hac-single": lambda: C.consensus_hac(members, k, linkage="single"),
    "hac-average": lambda: C.consensus_hac(members, k, linkage="average"),
    "hac-complete": lambda: C.consensus_hac(members, k, linkage="complete"),
    "mcla": lambda: C.consensus_mcla(members, k, random_state=seed),
    "hgpa": lambda: C.consensus_hgpa(members, k, random_state=seed, objective="cut"),
    "hgpa-km1": lambda: C.consensus_hgpa(members, k, random_state=seed, objective="km1"),
    "cspa": lambda: C.consensus_cspa(members, k, random_state=seed),
}
import kahypar, pymetis, scipy.cluster.hierarchy, scipy.spatial.distance, sklearn.cluster  # noqa: F401
call = funcs[method]
'''

_THEIRS_CALL = r'''
import ensembleclustering
method = sys.argv[2]
base = members.T.astype(np.float64)  # (members, instances), as the package expects

def call():
    return ensembleclustering.cluster_ensembles(base, nclass=k, solver=method, random_state=seed)
'''

_MEASURE = r'''
reset = reset_peak()
before = kib("VmRSS")
t0 = time.perf_counter()
try:
    labels = np.asarray(call())
    error = None
except Exception as exc:  # a refusal (cspa) or a failure, reported
    labels, error = None, f"{type(exc).__name__}: {' '.join(str(exc).split())}"
seconds = time.perf_counter() - t0
peak = kib("VmHWM")
print(json.dumps({"seconds": seconds, "peak_kib": peak, "increase_kib": peak - before,
                  "reset": reset, "error": error,
                  "labels": None if labels is None else labels.astype(int).tolist()}))
'''


from ensemblekit.clustering.consensus import CSPA_MAX_SAMPLES  # noqa: E402


def load_xy(path):
    """Numeric attributes (class dropped) and class codes."""
    from ensemblekit.data import load_dataset

    ds = load_dataset(str(path))
    return np.asarray(ds.X, dtype=np.float64), np.asarray(ds.y)


def build_members(X, k, n_estimators, max_features, seed):
    """Members exactly as the consensus estimators build them (same random stream)."""
    from ensemblekit.clustering.consensus import kmeans_members
    from ensemblekit.clustering.inner_kmeans import _draw_feature_weights, _n_subset_features
    from ensemblekit.clustering.kmeans import _initial_center_indices

    rng = np.random.RandomState(seed)
    init_seed = rng.randint(np.iinfo(np.int32).max)
    centres = X[_initial_center_indices(X, k, "random", init_seed)]
    W = _draw_feature_weights(rng, n_estimators, X.shape[1],
                              _n_subset_features(max_features, X.shape[1]), False)
    return kmeans_members(X, centres, W).astype(np.int32)


def measure(python, body, method, path, k, seed, limit_gb, timeout):
    """Run one consensus in a fresh process; the parsed JSON line, or an error record."""
    limit = int(limit_gb * 2**30)

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    code = _PRELUDE + body + _MEASURE
    cmd = [python, "-c", code, str(path), method, str(k), str(seed)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=cap, cwd=str(ROOT))
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout} s", "labels": None}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        return {"error": f"exit {done.returncode}: {tail}", "labels": None}
    return json.loads(lines[-1])


def nmi(y, labels):
    from ensemblekit.scores.clustering import nmi as _nmi

    return _nmi(y, labels)


def row(who, method, result, y):
    if result.get("labels") is None:
        mem = (f"{result['peak_kib'] / 1024:,.0f}" if "peak_kib" in result else "-")
        return (f"| {who} | {method} | {result.get('seconds', float('nan')):.2f} | {mem} | - | - | "
                f"{result['error']} |")
    labels = np.asarray(result["labels"])
    star = "" if result["reset"] else "*"
    score = f"{nmi(y, labels):.3f}" if np.unique(y).size > 1 else "-"
    return (f"| {who} | {method} | {result['seconds']:.2f} | {result['peak_kib'] / 1024:,.0f}{star} "
            f"(+{result['increase_kib'] / 1024:,.0f}) | {score} | "
            f"{np.unique(labels).size} | |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--dataset", default="letter")
    parser.add_argument("--n-estimators", type=int, default=30)
    parser.add_argument("--max-features", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+", default=list(OURS), choices=OURS)
    parser.add_argument("--ec-python", help="interpreter with the ensembleclustering package")
    parser.add_argument("--ec-methods", nargs="+", default=list(THEIRS), choices=THEIRS)
    parser.add_argument("--memory-limit-gb", type=float, default=12.0)
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per run")
    parser.add_argument("--output", help="also write the Markdown report here")
    args = parser.parse_args(argv)

    X, y = load_xy(Path(args.data_dir) / f"{args.dataset}.arff")
    k = int(np.unique(y).size)
    t0 = time.perf_counter()
    members = build_members(X, k, args.n_estimators, args.max_features, args.seed)
    member_seconds = time.perf_counter() - t0
    member_nmi = float(np.mean([nmi(y, members[:, e]) for e in range(members.shape[1])]))

    lines = [
        f"# Consensus functions on {args.dataset} ({X.shape[0]:,} rows, {X.shape[1]} attributes, "
        f"k = {k}), E = {args.n_estimators} members",
        "",
        f"Command: `python benchmarks/bench_consensus.py --dataset {args.dataset} --n-estimators "
        f"{args.n_estimators} --seed {args.seed}"
        + (" --ec-python ..." if args.ec_python else "") + "`",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, "
        f"{__import__('os').cpu_count()} cores (shared); numpy {np.__version__}. Members "
        f"(K-means on random halves of the attributes, built once): {member_seconds:.1f} s, "
        f"mean member NMI {member_nmi:.3f}. Each run: fresh process, address space capped at "
        f"{args.memory_limit_gb:g} GB, time limit {args.timeout} s. Peak = VmHWM during the call "
        "(MiB), in brackets its increase over the RSS before the call.",
        "",
        "| package | method | seconds | peak MiB (+call) | NMI | clusters | note |",
        "|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "members.npz"
        np.savez(path, members=members, y=y)
        for method in args.methods:
            result = measure(sys.executable, _OURS_CALL, method, path, k, args.seed,
                             args.memory_limit_gb, args.timeout)
            lines.append(row("ensemblekit", method, result, y))
            print(lines[-1], flush=True)
        if args.ec_python:
            for method in args.ec_methods:
                result = measure(args.ec_python, _THEIRS_CALL, method, path, k, args.seed,
                                 args.memory_limit_gb, args.timeout)
                lines.append(row("ensembleclustering", method, result, y))
                print(lines[-1], flush=True)
        if "cspa" in args.methods and X.shape[0] > CSPA_MAX_SAMPLES:
            # CSPA where it is allowed: the first CSPA_MAX_SAMPLES rows of the same members,
            # and a worst case of that size (random 2-cluster members: nearly every pair
            # shares a cluster in some member, so the graph has about n^2 edges)
            lines += ["", f"CSPA at its limit ({CSPA_MAX_SAMPLES:,} rows):", "",
                      "| package | case | seconds | peak MiB (+call) | NMI | clusters | note |",
                      "|---|---|---|---|---|---|---|"]
            part = Path(tmp) / "first.npz"
            np.savez(part, members=members[:CSPA_MAX_SAMPLES], y=y[:CSPA_MAX_SAMPLES])
            worst = Path(tmp) / "worst.npz"
            rand = np.random.RandomState(args.seed).randint(0, 2, (CSPA_MAX_SAMPLES,
                                                                   args.n_estimators))
            np.savez(worst, members=rand.astype(np.int32), y=np.zeros(CSPA_MAX_SAMPLES, int))
            cases = [("first rows of the members", part, k, y[:CSPA_MAX_SAMPLES]),
                     ("worst case: random 2-cluster members, k = 2", worst, 2,
                      np.zeros(CSPA_MAX_SAMPLES, int))]
            for who, python, body in (("ensemblekit", sys.executable, _OURS_CALL),
                                      ("ensembleclustering", args.ec_python, _THEIRS_CALL)):
                if python is None:
                    continue
                for case, file, kk, yy in cases:
                    result = measure(python, body, "cspa", file, kk, args.seed,
                                     args.memory_limit_gb, args.timeout)
                    lines.append(row(who, case, result, yy))
                    print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.output:
        Path(args.output).write_text(text)


if __name__ == "__main__":
    main()
