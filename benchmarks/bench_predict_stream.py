"""Memory, first-row latency and total time of ``ensemblekit predict`` on a large file,
against Weka's J48 on the same rows (issue 30, acceptance 3 and 4).

Generates a 1,000,000-row, 10-column data set (9 numeric features and a nominal
class ``class`` with 3 values; seed 0) as CSV and as ARFF, fits ``c45`` (and
Weka's J48) on its first 2,000 rows, and measures for each file:

* the whole-process wall time and peak resident set size of ``ensemblekit
  predict MODEL DATA`` (to ``/dev/null``; targets: at most 2 s and 300 MB), and
  of Weka's ``J48 -l MODEL -T DATA -classifications CSV`` in the same run;
* the time until the first 5 rows come out of ``ensemblekit predict MODEL DATA |
  head -5`` (target: at most 1 s), and the same minus the start-up of
  ``ensemblekit --help``;
* for the ARFF file, ``ensemblekit info`` (targets: at most 1.5 s and 400 MB);
  with ``--fit``, also ``ensemblekit fit c45`` on all the rows against Weka's
  ``J48 -t DATA -no-cv`` (targets: at most a sixth of Weka's time, 1 GB).

Every measurement is the median of ``--runs`` fresh processes; ensemblekit and
Weka are run one after the other, paired, in the same run. Weka's jar is found
as ``benchmarks/bench_startup.py`` finds it; without Java the Weka columns are
empty.

Run from the repository root:  ``python benchmarks/bench_predict_stream.py [--rows 1000000]
[--runs 3] [--fit] [--out benchmarks/results/predict_stream.md] [--label TEXT]``
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
N_FEATURES = 9
CLASSES = ("low", "mid", "high")

_RSS_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)\n"
    "t = time.perf_counter() - t\n"
    "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"  # KiB on Linux
)
PREDICT_SECONDS, PREDICT_MB, FIRST_SECONDS = 2.0, 300, 1.0
INFO_SECONDS, INFO_MB = 1.5, 400
FIT_RATIO, FIT_MB = 1 / 6, 1000


def _exe() -> list[str]:
    found = shutil.which("ensemblekit") or str(Path(sys.executable).with_name("ensemblekit"))
    return [found] if Path(found).exists() else [sys.executable, "-m", "ensemblekit.cli"]


def generate(folder: Path, rows: int, seed: int = 0) -> tuple[Path, Path, Path]:
    """Write ``big.csv``, ``big.arff`` (the same rows), ``sample.csv`` and ``sample.arff`` (first 2,000)."""
    rng = np.random.default_rng(seed)
    names = [f"x{j + 1}" for j in range(N_FEATURES)]
    csv_path, arff_path, sample_path = folder / "big.csv", folder / "big.arff", folder / "sample.csv"
    with open(csv_path, "w") as fc, open(arff_path, "w") as fa, open(sample_path, "w") as fs:
        fc.write(",".join(names + ["class"]) + "\n")
        fs.write(",".join(names + ["class"]) + "\n")
        fa.write("@relation big\n\n")
        for n in names:
            fa.write(f"@attribute {n} numeric\n")
        fa.write("@attribute class {" + ",".join(CLASSES) + "}\n\n@data\n")
        block = 100_000
        for start in range(0, rows, block):
            m = min(block, rows - start)
            X = rng.normal(size=(m, N_FEATURES))
            score = X[:, 0] + 0.5 * X[:, 1] - 0.3 * X[:, 2] + rng.normal(scale=0.5, size=m)
            y = np.digitize(score, [-0.5, 0.5])
            lines = [",".join(f"{v:.6f}" for v in X[i]) + "," + CLASSES[y[i]] for i in range(m)]
            text = "\n".join(lines) + "\n"
            fc.write(text)
            fa.write(text)
            if start == 0:
                fs.write("\n".join(lines[:2000]) + "\n")
                sample_rows = "\n".join(lines[:2000]) + "\n"
    # Weka needs the class values in the order the tested file declares them
    header = arff_path.read_text()[:4096].split("@data\n")[0]
    (folder / "sample.arff").write_text(header + "@data\n" + sample_rows)
    return csv_path, arff_path, sample_path


def measured(cmd: list[str]) -> tuple[float, float]:
    """Whole-process wall seconds and peak RSS (MB) of ``cmd``, output discarded."""
    out = subprocess.run([sys.executable, "-c", _RSS_WRAPPER, *cmd], check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024


def paired(ours: list[str], weka: list[str] | None, runs: int):
    """Medians of (seconds, MB) of ours and of Weka's command (None without Weka), interleaved."""
    a, b = [], []
    for _ in range(runs):
        a.append(measured(ours))
        if weka:
            b.append(measured(weka))

    def med(xs):
        return (statistics.median(x[0] for x in xs), statistics.median(x[1] for x in xs))
    return med(a), (med(b) if b else None)


def seconds(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def first_rows_seconds(cmd: list[str], rows: int = 5) -> tuple[float, str]:
    """Wall time until ``CMD | head -ROWS`` has delivered its rows (head has exited)."""
    import shlex

    line = " ".join(shlex.quote(c) for c in cmd) + f" 2>/dev/null | head -{rows}"
    start = time.perf_counter()
    proc = subprocess.Popen(["sh", "-c", line], stdout=subprocess.PIPE, text=True)
    got = proc.stdout.read()  # EOF once head exits (it is the only writer of this pipe)
    elapsed = time.perf_counter() - start
    proc.wait()
    return elapsed, got


def median(f, runs: int):
    return statistics.median(f() for _ in range(runs))


def _weka() -> list[str] | None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_startup import j48, java_command, weka_jar

    jar = weka_jar()
    java = java_command(jar) if jar else None
    return j48(java) if java else None


def _met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--fit", action="store_true",
                        help="Also time fit c45 on all the rows against Weka's J48 -t -no-cv.")
    parser.add_argument("--out", type=Path, default=None, help="Also append the table here.")
    parser.add_argument("--label", default="this checkout", help="Name of the code measured.")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="Keep the generated files here (reused when present).")
    args = parser.parse_args(argv)

    exe = _exe()
    j48 = _weka()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.workdir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        csv_path, arff_path = folder / "big.csv", folder / "big.arff"
        if not all((folder / f).exists() for f in ("big.csv", "big.arff", "sample.arff")):
            t = time.perf_counter()
            generate(folder, args.rows)
            print(f"generated {args.rows} rows in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        model = folder / "c45.ekm"
        subprocess.run([*exe, "fit", "c45", str(folder / "sample.csv"), "-o", str(model)],
                       check=True, stdout=subprocess.DEVNULL)
        weka_models = {}
        for kind in ("csv", "arff") if j48 else ():  # one per format: Weka's CSV loader orders
            weka_models[kind] = folder / f"j48-{kind}.model"  # the class values as it meets them
            subprocess.run([*j48, "-t", str(folder / f"sample.{kind}"), "-no-cv", "-d",
                            str(weka_models[kind])], check=True, stdout=subprocess.DEVNULL)
        startup = median(lambda: seconds([*exe, "--help"]), max(args.runs, 3))
        table = [
            f"### {args.label}",
            "",
            f"{args.rows:,} rows x 10 columns, c45 model fitted on 2,000 rows; "
            f"{platform.machine()}, Python {platform.python_version()}; median of {args.runs} "
            f"runs, ensemblekit and Weka interleaved; start-up (`ensemblekit --help`) "
            f"{startup:.2f} s; load average before: {os.getloadavg()[0]:.2f}.",
            "",
            "| command | file | size (MB) | ensemblekit s | peak RSS (MB) | first 5 rows (s) | "
            "Weka J48 s | Weka MB | targets | met |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|---|",
        ]
        for path in (csv_path, arff_path):
            cmd = [*exe, "predict", str(model), str(path)]
            weka = None
            if j48:
                weka = [*j48, "-l", str(weka_models[path.suffix[1:]]), "-T", str(path),
                        "-classifications",
                        "weka.classifiers.evaluation.output.prediction.CSV"]
            (sec, mb), w = paired(cmd, weka, args.runs)
            first = median(lambda c=cmd: first_rows_seconds(c)[0], args.runs)
            size = path.stat().st_size / 1e6
            ok = sec <= PREDICT_SECONDS and mb <= PREDICT_MB and first <= FIRST_SECONDS
            table.append(f"| predict | {path.suffix[1:].upper()} | {size:.0f} | {sec:.2f} | {mb:.0f} | "
                         f"{first:.2f} | {w[0] if w else float('nan'):.2f} | "
                         f"{w[1] if w else float('nan'):.0f} | ≤ {PREDICT_SECONDS:g} s, "
                         f"≤ {PREDICT_MB} MB, first ≤ {FIRST_SECONDS:g} s | {_met(ok)} |")
            print(table[-1], file=sys.stderr)
        (sec, mb), _ = paired([*exe, "info", str(arff_path)], None, args.runs)
        table.append(f"| info | ARFF | {arff_path.stat().st_size / 1e6:.0f} | {sec:.2f} | {mb:.0f} | "
                     f"— | — | — | ≤ {INFO_SECONDS:g} s, ≤ {INFO_MB} MB | "
                     f"{_met(sec <= INFO_SECONDS and mb <= INFO_MB)} |")
        print(table[-1], file=sys.stderr)
        if args.fit:
            ours = [*exe, "fit", "c45", str(arff_path), "-o", str(folder / "big.ekm")]
            weka = [*j48, "-t", str(arff_path), "-no-cv"] if j48 else None
            (sec, mb), w = paired(ours, weka, 1)
            ok = mb <= FIT_MB and (w is None or sec <= FIT_RATIO * w[0])
            table.append(f"| fit c45 | ARFF | {arff_path.stat().st_size / 1e6:.0f} | {sec:.2f} | "
                         f"{mb:.0f} | — | {w[0] if w else float('nan'):.2f} | "
                         f"{w[1] if w else float('nan'):.0f} | ≤ Weka/6, ≤ {FIT_MB} MB | {_met(ok)} |")
            print(table[-1], file=sys.stderr)
    text = "\n".join(table) + "\n"
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
