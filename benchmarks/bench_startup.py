"""Whole-process start-up and small-job times of the ensemblekit command line.

Measures the median wall-clock time of 5 runs of each command (each run a fresh
process, as a user at a shell or a CI script sees it):

* ``ensemblekit --help``                        (target: under 0.3 s)
* ``ensemblekit info sample_data/iris.arff``    (target: under 0.6 s)
* ``ensemblekit fit c45 iris`` + ``ensemblekit predict`` on iris, beside Weka 3.9.7's
  ``java weka.classifiers.trees.J48 -t iris.arff -d m`` + ``-l m -T iris.arff -p 0``
  (Weka's jar from the python-weka-wrapper3 package, or ``$WEKA_JAR``; skipped
  with a note when neither Java nor the jar is found).

Run from the repository root:  ``python benchmarks/bench_startup.py [--runs 5]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IRIS = ROOT / "sample_data" / "iris.arff"


def _exe() -> list[str]:
    found = shutil.which("ensemblekit")
    return [found] if found else [sys.executable, "-m", "ensemblekit.cli"]


def median_seconds(commands: list[list[str]], runs: int) -> float:
    """Median over ``runs`` of the total wall time of running ``commands`` in sequence."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for cmd in commands:
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def weka_jar() -> str | None:
    """Path of Weka's jar: ``$WEKA_JAR``, else the one python-weka-wrapper3 ships."""
    if os.environ.get("WEKA_JAR"):
        return os.environ["WEKA_JAR"]
    import importlib.util

    spec = importlib.util.find_spec("weka")
    if spec and spec.submodule_search_locations:
        jar = Path(list(spec.submodule_search_locations)[0]) / "lib" / "weka.jar"
        if jar.is_file():
            return str(jar)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    ek = _exe()
    rows = []
    rows.append(("ensemblekit --help", median_seconds([ek + ["--help"]], args.runs), 0.3))
    rows.append(("ensemblekit info iris.arff", median_seconds([ek + ["info", str(IRIS)]], args.runs), 0.6))
    with tempfile.TemporaryDirectory() as tmp:
        model = str(Path(tmp) / "m.ekm")
        fit = ek + ["fit", "c45", str(IRIS), "-o", model]
        pred = ek + ["predict", model, str(IRIS)]
        rows.append(("ensemblekit fit c45 iris", median_seconds([fit], args.runs), None))
        rows.append(("ensemblekit predict iris", median_seconds([pred], args.runs), None))
        rows.append(("ensemblekit fit + predict", median_seconds([fit, pred], args.runs), None))
        jar, java = weka_jar(), shutil.which("java")
        if jar and java:
            wmodel = str(Path(tmp) / "j48.model")
            base = [java, "--add-opens", "java.base/java.lang=ALL-UNNAMED", "-cp", jar,
                    "weka.classifiers.trees.J48"]
            wfit = base + ["-t", str(IRIS), "-d", wmodel]
            wpred = base + ["-l", wmodel, "-T", str(IRIS), "-p", "0"]
            rows.append(("weka J48 -t iris -d m", median_seconds([wfit], args.runs), None))
            rows.append(("weka J48 -l m -T iris -p 0", median_seconds([wpred], args.runs), None))
            rows.append(("weka train + predict", median_seconds([wfit, wpred], args.runs), None))
        else:
            print("note: Weka not found (install python-weka-wrapper3 or set WEKA_JAR); skipped",
                  file=sys.stderr)
    print(f"{'command':32s} {'median s':>9s} {'target s':>9s}  ok")
    for name, secs, target in rows:
        ok = "" if target is None else ("yes" if secs < target else "NO")
        tgt = "" if target is None else f"{target:.2f}"
        print(f"{name:32s} {secs:9.3f} {tgt:>9s}  {ok}")


if __name__ == "__main__":
    main()
