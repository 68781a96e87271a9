"""K2 (global, leave-one-out score) against Weka 3.9.7's BayesNet on large files.

For each of kr-vs-kp, nursery, adult and letter (the shared UCI folder):

(a) build time inside one process, data already loaded: ``k2`` (MDL discretisation,
    mode imputation, structure search, CPTs) against Weka's own "Time taken to build
    model" (target: at least 20x faster);
(b) whole process: ``ensemblekit fit k2 FILE -o M`` against the Weka command line
    (target: faster on every file, at least 5x on letter);
(c) ``iebn`` with E = 10 (when registered): its in-process build time against Weka's
    single K2 build time (target: no slower).

Weka runs as ``java weka.classifiers.bayes.BayesNet -t FILE -no-cv -Q
weka.classifiers.bayes.net.search.global.K2 -- -P 2 -S LOO-CV -E
weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A 0.5`` with the jar shipped by
the python-weka-wrapper3 package (or ``$WEKA_JAR``). Times are the best of ``--runs``.

Run from the repository root:  ``python benchmarks/bench_k2.py [--data-dir ../shared/datasets] [--runs 3]``
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_startup import weka_jar  # noqa: E402

FILES = ("kr-vs-kp", "nursery", "adult", "letter")


def weka_times(jar: str, path: Path) -> tuple[float, float]:
    """(Weka's printed build time, whole-process wall time) of one BayesNet K2 run."""
    cmd = ["java", "--add-opens", "java.base/java.lang=ALL-UNNAMED", "-cp", jar,
           "weka.classifiers.bayes.BayesNet", "-t", str(path), "-no-cv", "-Q",
           "weka.classifiers.bayes.net.search.global.K2", "--", "-P", "2", "-S", "LOO-CV", "-E",
           "weka.classifiers.bayes.net.estimate.SimpleEstimator", "--", "-A", "0.5"]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - start
    match = re.search(r"Time taken to build model:\s*([0-9.]+)\s*seconds", out)
    return float(match.group(1)) if match else float("nan"), wall


def our_build(name: str, ds, **params) -> float:
    from ensemblekit import registry

    model = registry.make_estimator(name, ds.schema, params, 1)
    keep = ds.y >= 0
    start = time.perf_counter()
    model.fit(ds.X[keep], ds.y[keep])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", nargs="*", default=list(FILES))
    args = parser.parse_args()
    from ensemblekit import registry
    from ensemblekit.data import load_dataset

    jar = weka_jar()
    if jar is None or shutil.which("java") is None:
        sys.exit("needs Java and Weka's jar (pip install python-weka-wrapper3, or set WEKA_JAR)")
    exe = shutil.which("ensemblekit") or str(Path(sys.executable).parent / "ensemblekit")
    has_iebn = "iebn" in registry.ALGORITHMS
    print(f"{'file':10s} {'weka build':>10s} {'ours build':>10s} {'x':>6s} | {'weka proc':>9s} "
          f"{'ours proc':>9s} {'x':>6s} | {'iebn E=10':>9s} {'<= weka':>7s}")
    for name in args.files:
        path = Path(args.data_dir) / f"{name}.arff"
        ds = load_dataset(path)
        weka = [weka_times(jar, path) for _ in range(args.runs)]
        weka_build = min(w[0] for w in weka)
        weka_wall = min(w[1] for w in weka)
        ours = min(our_build("k2", ds) for _ in range(args.runs))
        with tempfile.TemporaryDirectory() as tmp:
            walls = []
            for _ in range(args.runs):
                start = time.perf_counter()
                subprocess.run([exe, "fit", "k2", str(path), "-o", str(Path(tmp) / "m.ekm")], check=True,
                               capture_output=True)
                walls.append(time.perf_counter() - start)
        ours_wall = min(walls)
        iebn = min(our_build("iebn", ds, n_estimators=10) for _ in range(args.runs)) if has_iebn \
            else float("nan")
        print(f"{name:10s} {weka_build:10.2f} {ours:10.3f} {weka_build / ours:6.1f} | {weka_wall:9.2f} "
              f"{ours_wall:9.2f} {weka_wall / ours_wall:6.1f} | {iebn:9.2f} "
              f"{'yes' if iebn <= weka_build else ('-' if iebn != iebn else 'NO'):>7s}")


if __name__ == "__main__":
    main()
