"""Memory, first-row latency and total time of ``ensemblekit predict`` on a large file.

Generates a 1,000,000-row, 10-column data set (9 numeric features and a nominal
class ``class`` with 3 values; seed 0) as CSV and as ARFF, fits ``c45`` on its
first 2,000 rows, and measures for each file:

* the peak resident set size of the ``ensemblekit predict MODEL DATA`` process
  (``ru_maxrss`` of the child, read in a small wrapper process so that nothing
  else is counted; target: at most 300 MB);
* the time until the first 5 rows come out of ``ensemblekit predict MODEL DATA |
  head -5`` (wall time until ``head`` has written its 5 lines and exited), and the
  same minus the start-up of ``ensemblekit --help`` (target: at most 1 s beyond
  start-up);
* the total wall time of the whole prediction written to ``/dev/null`` (target:
  at most that of the whole-file reader, 17.8 s for the CSV on the machine of
  issue 19).

Every measurement is the median of ``--runs`` fresh processes.

Run from the repository root:  ``python benchmarks/bench_predict_stream.py [--rows 1000000]
[--runs 3] [--out benchmarks/results/predict_stream.md] [--label TEXT]``
"""

from __future__ import annotations

import argparse
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
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"  # KiB on Linux
)


def _exe() -> list[str]:
    found = shutil.which("ensemblekit") or str(Path(sys.executable).with_name("ensemblekit"))
    return [found] if Path(found).exists() else [sys.executable, "-m", "ensemblekit.cli"]


def generate(folder: Path, rows: int, seed: int = 0) -> tuple[Path, Path, Path]:
    """Write ``big.csv``, ``big.arff`` (the same rows) and ``sample.csv`` (first 2,000 rows)."""
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
    return csv_path, arff_path, sample_path


def peak_rss_mb(cmd: list[str]) -> float:
    out = subprocess.run([sys.executable, "-c", _RSS_WRAPPER, *cmd], check=True,
                         capture_output=True, text=True).stdout
    return int(out.strip()) / 1024


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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="Also append the table here.")
    parser.add_argument("--label", default="this checkout", help="Name of the code measured.")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="Keep the generated files here (reused when present).")
    args = parser.parse_args(argv)

    exe = _exe()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.workdir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        csv_path, arff_path = folder / "big.csv", folder / "big.arff"
        if not (csv_path.exists() and arff_path.exists()):
            t = time.perf_counter()
            generate(folder, args.rows)
            print(f"generated {args.rows} rows in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        model = folder / "c45.ekm"
        subprocess.run([*exe, "fit", "c45", str(folder / "sample.csv"), "-o", str(model)],
                       check=True, stdout=subprocess.DEVNULL)
        startup = median(lambda: seconds([*exe, "--help"]), max(args.runs, 3))
        rows = []
        for path in (csv_path, arff_path):
            cmd = [*exe, "predict", str(model), str(path)]
            size = path.stat().st_size / 1e6
            rss = median(lambda c=cmd: peak_rss_mb(c), args.runs)
            first = median(lambda c=cmd: first_rows_seconds(c)[0], args.runs)
            total = median(lambda c=cmd: seconds(c), args.runs)
            rows.append((path.suffix[1:].upper(), size, rss, first, first - startup, total))
            print(f"{path.name}: peak RSS {rss:.0f} MB, first 5 rows {first:.2f} s "
                  f"({first - startup:.2f} s beyond start-up), total {total:.2f} s", file=sys.stderr)

    table = [
        f"### {args.label}",
        "",
        f"{args.rows:,} rows x 10 columns, c45 model; {platform.machine()}, Python "
        f"{platform.python_version()}; median of {args.runs} runs; "
        f"start-up (`ensemblekit --help`) {startup:.2f} s.",
        "",
        "| file | size (MB) | peak RSS (MB) | first 5 rows (s) | beyond start-up (s) | total (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    table += [f"| {f} | {s:.0f} | {r:.0f} | {a:.2f} | {b:.2f} | {t:.2f} |" for f, s, r, a, b, t in rows]
    text = "\n".join(table) + "\n"
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
