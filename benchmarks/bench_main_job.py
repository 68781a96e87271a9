"""The main job against Weka 3.9.7: repeated cross-validation of J48 and IBk (issue 30).

What ensemblekit exists for is ``compare``. This script times it, as whole processes,
against Weka's own repeated cross-validation of the same learners on the same files:

* **Mix 1, the main job.** ``ensemblekit compare c45 knn -d FILE ... --cv 10 --repeats 10``
  over 12 UCI files of the shared folder (anneal, breast-cancer, colic, credit-a,
  diabetes, glass, heart-c, hepatitis, iris, vote, segment, kr-vs-kp), once serial and
  once with ``--n-jobs 2``, against one Java VM per learner running
  ``benchmarks/java/RepeatedCV.java``: for each file, the class is the last attribute and
  ``Evaluation.crossValidateModel(classifier, data, 10, new Random(run))`` runs for
  run = 1..10 (the Experimenter's inner loop). Learners: ``weka.classifiers.trees.J48 -C
  0.25 -M 2`` and ``weka.classifiers.lazy.IBk -K 1 -W 0`` (c45's and knn's defaults).
  Weka's time is the sum of the two VMs. Targets: ours serial at least 3x faster than
  Weka's J48 + IBk; ``--n-jobs 2`` at least 1.7x faster than ours serial. The serial and
  parallel outputs must be byte-identical (checked in every repetition).
* **Mix 2, the seeds' algorithms.** ``k2``, ``bagging`` and ``lazy-bagging``, one
  ``compare`` process each, on 6 of the files (breast-cancer, colic, glass, heart-c,
  hepatitis, vote) with 1 x 10-fold CV (lazy-bagging classifies each test row with trees
  of its own, so 10 repeats would take minutes), against the same Java runner with the
  same protocol and our defaults written as Weka options:
  ``weka.classifiers.bayes.BayesNet -Q weka.classifiers.bayes.net.search.global.K2 --
  -P 2 -S LOO-CV -E weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A 0.5``
  (k2: at most 2 parents, leave-one-out score, alpha 0.5, naive-Bayes start) and
  ``weka.classifiers.meta.Bagging -P 100 -I 10 -num-slots 1 -W weka.classifiers.trees.J48
  -- -U -M 2`` (bagging: 10 bags of 100 %, unpruned J48 with at least 2 per leaf; the
  issue's ``Bagging -W J48`` with our default base tree, which is unpruned). Weka has no
  lazy bagging: ours is recorded alone.

Every repetition runs each command once, interleaved (every other repetition in
reverse order), so that a change of the machine's load falls on all alike. A command's
figure is the median (min-max) of ``--reps`` repetitions; a ratio is taken within a
repetition (Weka / ours, or serial / parallel) and its median reported, which moves less
under drifting load than a ratio of medians. Peak memory is the largest resident set of
the command's process and the children it waited for (``wait4``'s ``ru_maxrss``; for
``--n-jobs 2``, the largest single process, not their sum). Before timing, every command
runs once on iris (uncounted), so that compiled kernels are cached and files are read
from the page cache; the Java class is compiled with ``javac`` against Weka's jar
(``$WEKA_JAR``, else python-weka-wrapper3's). The mean accuracy per file of both sides
is printed beside each other: ours is the mean of the fold accuracies, Weka's the mean
over runs of each run's pooled percentage correct, on different random folds, so they
agree roughly, not exactly.

Run from the repository root::

    python benchmarks/bench_main_job.py [--reps 3] [--data-dir ../shared/datasets] [--quick] [--write]

``--quick`` is a smoke run (4 files, 2 repeats, mix 2 on 3 files). ``--write`` writes
the report, with the command line, date, machine, load average at start and end and the
versions, to ``benchmarks/results/main_job.md``; write it on an idle machine only.
The exit status is 1 when a ``--n-jobs 2`` output differs from the serial one, else 0
(targets missed are verdicts in the report, not failures).
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_startup import (  # noqa: E402
    CHILD_ENV,
    ensemblekit_command,
    java_command,
    load,
    report_header,
    spread,
    weka_jar,
)

RESULT = ROOT / "benchmarks" / "results" / "main_job.md"
RUNNER = ROOT / "benchmarks" / "java" / "RepeatedCV.java"
FILES = ("anneal", "breast-cancer", "colic", "credit-a", "diabetes", "glass", "heart-c",
         "hepatitis", "iris", "vote", "segment", "kr-vs-kp")
SEED_FILES = ("breast-cancer", "colic", "glass", "heart-c", "hepatitis", "vote")
QUICK_FILES, QUICK_SEED_FILES = ("breast-cancer", "glass", "iris", "vote"), ("glass", "iris", "vote")
FOLDS = 10
REPEATS, QUICK_REPEATS = 10, 2
SEED_REPEATS = 1  # mix 2: 1 x 10-fold, on both sides
#: Weka's learner for each of ours, with the options that match our registry defaults.
WEKA = {
    "c45": "weka.classifiers.trees.J48 -C 0.25 -M 2",
    "knn": "weka.classifiers.lazy.IBk -K 1 -W 0",
    "k2": "weka.classifiers.bayes.BayesNet -Q weka.classifiers.bayes.net.search.global.K2 -- "
          "-P 2 -S LOO-CV -E weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A 0.5",
    "bagging": "weka.classifiers.meta.Bagging -P 100 -I 10 -num-slots 1 "
               "-W weka.classifiers.trees.J48 -- -U -M 2",
}
WEKA_NAME = {"c45": "J48", "knn": "IBk", "k2": "BayesNet K2", "bagging": "Bagging J48 -U"}
SEED_ALGORITHMS = ("k2", "bagging", "lazy-bagging")
SERIAL_TARGET = 3.0  # Weka J48 + IBk / ours serial
PARALLEL_TARGET = 1.7  # ours serial / ours --n-jobs 2


# --------------------------------------------------------------------------- running
@dataclass
class Done:
    seconds: float
    peak_mb: float
    stdout: bytes


def run(cmd: list[str], scratch: Path) -> Done:
    """One whole process: wall seconds, peak resident MB, standard output; it must exit 0."""
    out_path, err_path = scratch / "stdout", scratch / "stderr"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=CHILD_ENV)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        last = (err_path.read_text(errors="replace").strip().splitlines() or [""])[-1]
        sys.exit(f"bench_main_job: exit {proc.returncode} from {shlex.join(cmd)}\n  {last}")
    return Done(seconds, usage.ru_maxrss / 1024, out_path.read_bytes())


@dataclass
class Timed:
    """One command, run once per repetition."""

    label: str
    cmd: list[str]
    runs: list[Done] = field(default_factory=list)

    @property
    def seconds(self) -> list[float]:
        return [r.seconds for r in self.runs]


def compile_runner(jar: str, into: Path) -> None:
    javac = shutil.which("javac")
    if javac is None:
        sys.exit("bench_main_job: javac is not on PATH; it compiles benchmarks/java/RepeatedCV.java")
    done = subprocess.run([javac, "-d", str(into), "-cp", jar, str(RUNNER)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"bench_main_job: javac failed: {done.stderr.strip()}")


def ours(ek: list[str], algorithms, paths, repeats: int, n_jobs: int = 1) -> list[str]:
    data = [part for p in paths for part in ("-d", str(p))]
    jobs = ["--n-jobs", str(n_jobs)] if n_jobs != 1 else []
    return [*ek, "compare", *algorithms, *data, "--cv", str(FOLDS), "--repeats", str(repeats),
            *jobs]


def weka(java: list[str], classes: Path, algorithm: str, paths, repeats: int) -> list[str]:
    classpath = java[-1] + os.pathsep + str(classes)
    return [*java[:-1], classpath, "RepeatedCV", str(FOLDS), str(repeats), WEKA[algorithm],
            *map(str, paths)]


# --------------------------------------------------------------------------- accuracies
_ROW = re.compile(r"^│ (\S+)\s+│(.*)│\s*$")
_MEAN = re.compile(r"([0-9.]+) ±")


def our_accuracies(stdout: bytes, algorithms) -> dict[tuple[str, str], float]:
    """Mean accuracy in per cent per (data set, algorithm), from compare's table."""
    found = {}
    for line in stdout.decode().splitlines():
        m = _ROW.match(line)
        if not m or m[1] == "average":
            continue
        means = _MEAN.findall(m[2])
        if len(means) == len(algorithms):
            for algo, mean in zip(algorithms, means):
                found[m[1], algo] = 100 * float(mean)
    return found


def weka_accuracies(stdout: bytes, algorithm: str) -> dict[tuple[str, str], float]:
    found = {}
    for line in stdout.decode().splitlines():
        path, percent, _ = line.split("\t")
        found[Path(path).stem, algorithm] = float(percent)
    return found


# --------------------------------------------------------------------------- the report
def ratio_row(what: str, top: list[float], bottom: list[float], target: float | None) -> str:
    ratios = [a / b for a, b in zip(top, bottom)]
    verdict = "—"
    if target is not None:
        verdict = "**met**" if statistics.median(ratios) >= target else "**not met**"
    shown = f"≥ {target:g}" if target is not None else "—"
    return f"| {what} | {spread(ratios)} | {shown} | {verdict} |"


def time_table(rows: list[Timed]) -> list[str]:
    lines = ["| command | wall s, median (min–max) | peak MB (largest) |", "|---|---:|---:|"]
    for r in rows:
        peak = max(d.peak_mb for d in r.runs) if r.runs else float("nan")
        lines.append(f"| {r.label} | {spread(r.seconds)} | {peak:.0f} |")
    return lines


def accuracy_table(files, pairs, ours_acc, weka_acc) -> list[str]:
    head = "| data set | " + " | ".join(f"{a} (ours) | {WEKA_NAME[a]} (Weka)" for a in pairs) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(pairs)]
    widest = 0.0
    for f in files:
        cells = []
        for a in pairs:
            o, w = ours_acc.get((f, a)), weka_acc.get((f, a))
            cells += [f"{o:.2f}" if o is not None else "—", f"{w:.2f}" if w is not None else "—"]
            if o is not None and w is not None:
                widest = max(widest, abs(o - w))
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    lines += ["", f"Largest difference between the two sides: {widest:.2f} percentage points."]
    return lines


# --------------------------------------------------------------------------- main
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="counted repetitions (default 3)")
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 4 files, 2 repeats, mix 2 on 3 files")
    parser.add_argument("--write", action="store_true",
                        help=f"write the report to {RESULT.relative_to(ROOT)}")
    args = parser.parse_args()
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    data_dir = Path(args.data_dir)
    files = QUICK_FILES if args.quick else FILES
    seed_files = QUICK_SEED_FILES if args.quick else SEED_FILES
    repeats = QUICK_REPEATS if args.quick else REPEATS
    paths = [data_dir / f"{f}.arff" for f in files]
    seed_paths = [data_dir / f"{f}.arff" for f in seed_files]
    missing = [str(p) for p in paths + seed_paths if not p.is_file()]
    if missing:
        sys.exit(f"bench_main_job: data files not found (see --data-dir): {', '.join(missing)}")
    jar = weka_jar()
    java = java_command(jar) if jar else None
    if java is None:
        sys.exit("bench_main_job: Weka is needed: no java on PATH, or no $WEKA_JAR and no "
                 "python-weka-wrapper3 jar")

    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = load()
    ek = ensemblekit_command()
    with tempfile.TemporaryDirectory(prefix="bench-main-job-") as folder:
        tmp = Path(folder)
        classes = tmp / "classes"
        compile_runner(jar, classes)
        def commands(main_paths, seed_paths_, main_repeats, seed_repeats):
            """(label, command) of every timed command, mix 1 first."""
            made = [
                ("`compare c45 knn` serial", ours(ek, ("c45", "knn"), main_paths, main_repeats)),
                ("`compare c45 knn --n-jobs 2`",
                 ours(ek, ("c45", "knn"), main_paths, main_repeats, 2)),
                ("Weka J48 (one VM)", weka(java, classes, "c45", main_paths, main_repeats)),
                ("Weka IBk (one VM)", weka(java, classes, "knn", main_paths, main_repeats)),
            ]
            for algo in SEED_ALGORITHMS:
                made.append((f"`compare {algo}`", ours(ek, (algo,), seed_paths_, seed_repeats)))
                if algo in WEKA:
                    made.append((f"Weka {WEKA_NAME[algo]} (one VM)",
                                 weka(java, classes, algo, seed_paths_, seed_repeats)))
            return made

        everything = [Timed(label, cmd)
                      for label, cmd in commands(paths, seed_paths, repeats, SEED_REPEATS)]
        main_rows, seed_rows = everything[:4], everything[4:]
        iris = [data_dir / "iris.arff"]
        print("warm-up: every command once on iris, 1 x 10-fold", file=sys.stderr)
        for _, cmd in commands(iris, iris, 1, 1):
            run(cmd, tmp)
        for rep in range(args.reps):
            order = everything if rep % 2 == 0 else everything[::-1]
            for i, r in enumerate(order):
                print(f"[rep {rep + 1}/{args.reps}, {i + 1}/{len(order)}] {r.label}",
                      file=sys.stderr)
                r.runs.append(run(r.cmd, tmp))
    load_end = load()

    serial, parallel, j48, ibk = main_rows
    identical = [a.stdout == b.stdout for a, b in zip(serial.runs, parallel.runs)]
    same_across = len({d.stdout for d in serial.runs + parallel.runs}) == 1
    weka_total = [a + b for a, b in zip(j48.seconds, ibk.seconds)]
    ours_acc = our_accuracies(serial.runs[0].stdout, ("c45", "knn"))
    weka_acc = {**weka_accuracies(j48.runs[0].stdout, "c45"),
                **weka_accuracies(ibk.runs[0].stdout, "knn")}
    seed_ours, seed_weka = {}, {}
    by_label = {r.label: r for r in seed_rows}
    for algo in SEED_ALGORITHMS:
        seed_ours.update(our_accuracies(by_label[f"`compare {algo}`"].runs[0].stdout, (algo,)))
        if algo in WEKA:
            seed_weka.update(weka_accuracies(
                by_label[f"Weka {WEKA_NAME[algo]} (one VM)"].runs[0].stdout, algo))

    n_files = len(files)
    lines = [
        *report_header("The main job: ensemblekit `compare` against Weka 3.9.7's repeated "
                       "cross-validation", started, (load_start, load_end), ek, java),
        "",
        f"Whole processes, {args.reps} repetition{'s' if args.reps > 1 else ''}, interleaved "
        "(every other one in reverse order); medians (min–max); each ratio is taken within a "
        "repetition and its median (min–max) shown. How the work is set up: the docstring of "
        "`benchmarks/bench_main_job.py`.",
        "",
        f"## Mix 1: c45 and knn, {repeats} x {FOLDS}-fold stratified CV on {n_files} files",
        "",
        f"Files: {', '.join(files)}. Weka: `{WEKA['c45']}` and `{WEKA['knn']}`, one VM each, "
        f"`Evaluation.crossValidateModel(..., {FOLDS}, new Random(run))` for run = 1..{repeats}.",
        "",
        *time_table(main_rows),
        f"| Weka J48 + IBk (sum per repetition) | {spread(weka_total)} | — |",
        "",
        "| ratio | median (min–max) | target | verdict |",
        "|---|---:|---:|---|",
        ratio_row("Weka J48 + IBk / ours serial", weka_total, serial.seconds, SERIAL_TARGET),
        ratio_row("ours serial / ours `--n-jobs 2`", serial.seconds, parallel.seconds,
                  PARALLEL_TARGET),
        ratio_row("Weka J48 / ours serial (both learners)", j48.seconds, serial.seconds, None),
        "",
        f"Output of `--n-jobs 2` byte-identical to serial: "
        f"{'yes' if all(identical) else '**no**'} in {sum(identical)} of {len(identical)} "
        f"repetitions; every run printed the same bytes: {'yes' if same_across else '**no**'}.",
        "",
        "Mean accuracy (%) per file, first repetition:",
        "",
        *accuracy_table(files, ("c45", "knn"), ours_acc, weka_acc),
        "",
        f"## Mix 2: the seeds' algorithms, {SEED_REPEATS} x {FOLDS}-fold stratified CV on "
        f"{len(seed_files)} files",
        "",
        f"Files: {', '.join(seed_files)}. Weka: `{WEKA['k2']}` and `{WEKA['bagging']}`; "
        "Weka has no lazy bagging.",
        "",
        *time_table(seed_rows),
        "",
        "| ratio | median (min–max) | target | verdict |",
        "|---|---:|---:|---|",
    ]
    for algo in SEED_ALGORITHMS:
        if algo in WEKA:
            lines.append(ratio_row(f"Weka {WEKA_NAME[algo]} / ours {algo}",
                                   by_label[f"Weka {WEKA_NAME[algo]} (one VM)"].seconds,
                                   by_label[f"`compare {algo}`"].seconds, None))
    lines += ["", "Mean accuracy (%) per file, first repetition (lazy-bagging: ours alone):", "",
              *accuracy_table(seed_files, ("k2", "bagging"), seed_ours, seed_weka), ""]
    lazy = [f"{f}: {seed_ours[f, 'lazy-bagging']:.2f}" for f in seed_files
            if (f, "lazy-bagging") in seed_ours]
    lines += [f"lazy-bagging: {', '.join(lazy)}.", ""]
    text = "\n".join(lines)
    print(text)
    if args.write:
        RESULT.write_text(text)
        print(f"wrote {RESULT.relative_to(ROOT)}", file=sys.stderr)
    return 0 if all(identical) else 1



if __name__ == "__main__":
    sys.exit(main())
