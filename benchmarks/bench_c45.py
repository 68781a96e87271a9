"""``fit c45`` against Weka's ``J48 -t FILE -no-cv``, whole process and model building (issue 20).

For each file (adult, letter, kr-vs-kp, nursery from ../shared/datasets by default) and each
repeat, in interleaved order:

* **whole process**: wall time of ``ensemblekit fit ALGORITHM FILE -o TMP`` (import, read the
  ARFF file, fit, write the model file) and of ``java -cp weka.jar
  weka.classifiers.trees.J48 -t FILE -no-cv`` (JVM start, read, build, and the evaluation
  on the training data that ``-no-cv`` still prints);
* **model building**: our in-process ``C45Tree.fit`` on the rows as the registry passes them
  (codes, NaN; the data read once beforehand, the compiled kernels loaded by a warm-up fit)
  against J48's "Time taken to build model" (Weka prints it to 2 decimals);
* the same for the unpruned tree (``unpruned=true`` / ``J48 -U``), the base tree of the
  bagging ensembles.

A last table splits one fresh process of ours into its phases (imports, reading the file,
loading numba and the compiled kernels, the fit, writing the model file), which shows the
start-up floor that a Python process pays and a JVM does not. Medians over the repeats
are reported. The machine is shared, so the numbers are noisy:
interleaving keeps the two tools under the same load.

Usage::

    python benchmarks/bench_c45.py [--algorithm c45] [--repeats 5] [--out FILE.md] [FILE ...]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from weka_tools import WEKA_JAR  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets"
FILES = ["adult", "letter", "kr-vs-kp", "nursery"]
JAVA = ["java", "--add-opens", "java.base/java.lang=ALL-UNNAMED", "-cp", str(WEKA_JAR)]


def _ours_process(algorithm, path, unpruned, out):
    cmd = [sys.executable, "-c", "from ensemblekit.cli import main; main()", "fit", algorithm,
           str(path), "-o", out]
    if unpruned:
        cmd += ["--set", "unpruned=true"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t0


def _weka_process(path, unpruned):
    cmd = [*JAVA, "weka.classifiers.trees.J48", "-t", str(path), "-no-cv"]
    if unpruned:
        cmd.append("-U")
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    build = float(re.search(r"Time taken to build model: ([\d.]+) seconds", out).group(1))
    return wall, build


# one fresh process, timed phase by phase, as `fit c45` runs them
_PHASES = """
import sys, time
t0 = time.perf_counter()
from ensemblekit import registry
from ensemblekit.data import load_dataset
import sklearn.pipeline
t1 = time.perf_counter()
ds = load_dataset(sys.argv[1])
t2 = time.perf_counter()
model = registry.make_estimator("c45", ds.schema, None, 1)
keep = ds.y >= 0
model.fit(ds.X[keep], ds.y[keep])
t3 = time.perf_counter()
model.fit(ds.X[keep], ds.y[keep])
t4 = time.perf_counter()
from ensemblekit import state
from ensemblekit.persistence import save_model
scalars, arrays = state.collect(model[-1], "model/")
save_model(sys.argv[2], {"prep": None, "model": scalars}, arrays, {"algorithm": "c45"})
t5 = time.perf_counter()
print(t1 - t0, t2 - t1, (t3 - t2) - (t4 - t3), t4 - t3, t5 - t4)
"""
PHASES = ("imports (ensemblekit, scikit-learn)", "read ARFF", "numba: import, load compiled kernels",
          "fit (pruned)", "save (.npy arrays)")


def _phases(path, out):
    got = subprocess.run([sys.executable, "-c", _PHASES, str(path), out], check=True,
                         capture_output=True, text=True).stdout.split()
    return [float(v) for v in got]


def _coded(path):
    from ensemblekit.data import load_dataset

    ds = load_dataset(str(path))
    nominal = [i for i, a in enumerate(ds.schema.features) if a.kind != "numeric"]
    n_cat = [len(ds.schema.features[i].values) for i in nominal]
    keep = ds.y >= 0
    return ds.X[keep], ds.y[keep], nominal, n_cat, len(ds.schema.class_attribute.values)


def _ours_fit(data, unpruned):
    from ensemblekit.classifiers.c45 import C45Tree

    X, y, nominal, n_cat, k = data
    tree = C45Tree(unpruned=unpruned, nominal_features=nominal, n_categories=n_cat, n_classes=k)
    t0 = time.perf_counter()
    tree.fit(X, y)
    return time.perf_counter() - t0, tree.n_leaves_


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", default=FILES)
    parser.add_argument("--algorithm", default="c45", help="registry name run by `fit`")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows, phases = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "model.ekm")
        for name in args.files:
            path = Path(name) if name.endswith(".arff") else DATASETS / f"{name}.arff"
            data = _coded(path)
            runs = [_phases(path, out) for _ in range(args.repeats)]
            phases.append((path.stem, [statistics.median(r[i] for r in runs)
                                       for i in range(len(PHASES))]))
            for unpruned in (False, True):
                _ours_fit(data, unpruned)  # load the compiled kernels
                ours_p, weka_p, ours_f, weka_f = [], [], [], []
                leaves = None
                for _ in range(args.repeats):
                    ours_p.append(_ours_process(args.algorithm, path, unpruned, out))
                    wall, build = _weka_process(path, unpruned)
                    weka_p.append(wall)
                    weka_f.append(build)
                    fit, leaves = _ours_fit(data, unpruned)
                    ours_f.append(fit)
                med = statistics.median
                rows.append((path.stem, "-U" if unpruned else "pruned", len(data[1]), leaves,
                             med(ours_p), med(weka_p), med(ours_f), med(weka_f)))
                r = rows[-1]
                print(f"{r[0]:10s} {r[1]:6s} n={r[2]:6d} leaves={r[3]:5d}  process: ours "
                      f"{r[4]:.2f}s weka {r[5]:.2f}s   build: ours {r[6]:.3f}s weka {r[7]:.2f}s",
                      flush=True)
    lines = [
        "# `fit c45` against Weka 3.9.7's J48",
        "",
        f"`python benchmarks/bench_c45.py --algorithm {args.algorithm} --repeats {args.repeats}`"
        f" on {platform.machine()} ({os.cpu_count()} cores, shared with other jobs), Python "
        f"{platform.python_version()}; medians of {args.repeats} interleaved runs.",
        "",
        "Whole process: `ensemblekit fit c45 FILE -o TMP` against `java -cp weka.jar "
        "weka.classifiers.trees.J48 -t FILE -no-cv` (plus `-U` / `--set unpruned=true`). "
        "Build: `C45Tree.fit` in-process against J48's \"Time taken to build model\".",
        "",
        "| file | tree | rows | leaves | process ours (s) | process J48 (s) | build ours (s) "
        "| build J48 (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.2f} | {r[5]:.2f} | "
                     f"{r[6]:.3f} | {r[7]:.2f} |")
    lines += [
        "",
        "Where our process spends its time (one fresh process per run, phase by phase, "
        "medians; the numba line is the first fit less a second one):",
        "",
        "| file | " + " | ".join(PHASES) + " |",
        "|---|" + "---:|" * len(PHASES),
    ]
    for name, values in phases:
        lines.append(f"| {name} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
