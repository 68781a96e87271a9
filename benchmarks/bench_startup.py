"""Whole-process times of `predict`, `show` and `fit` against Weka 3.9.7's J48 (issue 28, item 3).

What a user at a shell or a CI loop waits for is the whole process: interpreter
start, imports, reading the model and the data, the answer. This script times
exactly that, from outside, for

* ``ensemblekit predict MODEL DATA`` and ``ensemblekit show MODEL`` with c45, k2,
  knn and kmeans models fitted on iris and vote (``sample_data/``), each row beside
  Weka's whole-process prediction on the same data file,
  ``java weka.classifiers.trees.J48 -l J48MODEL -T DATA`` (target: ours at or
  below Weka's, ratio <= 1);
* ``ensemblekit fit c45 iris.arff -o MODEL`` beside
  ``java weka.classifiers.trees.J48 -t iris.arff -no-cv -d J48MODEL``
  (target: ratio <= 2.5).

The models are fitted once, before any timing (``ensemblekit fit ALGO DATA -o
MODEL --seed 1``; kmeans with ``-k`` the number of classes; J48 with ``-t DATA
-no-cv -d J48MODEL``). Each row then runs one warm-up of both commands and
``--runs`` counted pairs, ours and Weka's in turn (A B A B ...), so that a
change in the machine's load falls on both alike. A row reports each command's
median wall time with its min-max, and the median of the run-by-run ratios
(ours / Weka's) with its min-max. Quote medians and ratios: these machines are
shared, and a wide min-max says the machine was noisy.

Weka's jar is ``$WEKA_JAR``, else the one python-weka-wrapper3 ships; without it
(or without ``java``) the Weka columns are empty and a note says why.

``--profile`` adds where the time of ``ensemblekit predict`` (c45 model, iris)
goes: ``python -X importtime``'s 15 imports of largest cumulative time (median
of three runs), and whether scikit-learn, scipy, numba or skops were imported;
and the phases of ``ensemblekit fit c45 iris.arff`` timed inside one process
(the command line, numpy, numba's import, numba's first use, the command).

Run from the repository root::

    python benchmarks/bench_startup.py [--runs 7] [--profile] [--write]

``--write`` also writes the table, with the command line, date, machine, load
average at start and end, and the versions, to ``benchmarks/results/startup.md``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
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
DATA = ROOT / "sample_data"
RESULT = ROOT / "benchmarks" / "results" / "startup.md"
DATASETS = {"iris": 3, "vote": 2}  # data set -> number of classes (kmeans -k)
ALGORITHMS = ("c45", "k2", "knn", "kmeans")
PREDICT_TARGET = 1.0  # ours at or below Weka's whole-process J48 prediction
FIT_TARGET = 2.5  # fit c45 at most 2.5 x J48's fit
HEAVY = ("sklearn", "scipy", "numba", "skops", "pandas", "joblib")


# --------------------------------------------------------------------------- the commands
def ensemblekit_command() -> list[str]:
    """How a user starts ensemblekit here: the console script beside this Python, if any."""
    script = Path(sys.executable).parent / "ensemblekit"
    if script.is_file():
        return [str(script)]
    found = shutil.which("ensemblekit")
    if found:
        return [found]
    return [sys.executable, "-c", "from ensemblekit.cli import main; main()"]


def weka_jar() -> str | None:
    """Path of Weka's jar: ``$WEKA_JAR``, else the one python-weka-wrapper3 ships."""
    if os.environ.get("WEKA_JAR"):
        return os.environ["WEKA_JAR"] if Path(os.environ["WEKA_JAR"]).is_file() else None
    import importlib.util

    spec = importlib.util.find_spec("weka")
    if spec and spec.submodule_search_locations:
        jar = Path(list(spec.submodule_search_locations)[0]) / "lib" / "weka.jar"
        if jar.is_file():
            return str(jar)
    return None


def java_command(jar: str) -> list[str] | None:
    java = shutil.which("java")
    if java is None:
        return None
    # Weka 3.9.7 on Java 17 prints a warning per run without the --add-opens
    return [java, "--add-opens", "java.base/java.lang=ALL-UNNAMED", "-cp", jar]


def j48(java: list[str]) -> list[str]:
    return [*java, "weka.classifiers.trees.J48"]


def run_checked(cmd: list[str], what: str) -> None:
    """Run a set-up command; stop with its own message if it fails."""
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env=CHILD_ENV)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        sys.exit(f"bench_startup: {what} failed (exit {done.returncode}): {last}\n  {shlex.join(cmd)}")


# --------------------------------------------------------------------------- timing
# The measured processes may write Python's bytecode caches, as an installed copy does: pip
# compiles a package's modules when it installs it, and an editable install writes them on
# its first run (the warm-up). With PYTHONDONTWRITEBYTECODE set, every run would compile
# ensemblekit's sources again, about 50 ms that no user pays.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall_seconds(cmd: list[str]) -> float:
    """Wall time of one whole process, its output thrown away; it must exit 0."""
    start = time.perf_counter()
    code = subprocess.call(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=CHILD_ENV)
    seconds = time.perf_counter() - start
    if code != 0:
        sys.exit(f"bench_startup: exit {code} from {shlex.join(cmd)}")
    return seconds


@dataclass
class Row:
    command: str
    data: str
    ours: list[float] = field(default_factory=list)
    weka: list[float] = field(default_factory=list)
    target: float = PREDICT_TARGET
    weka_label: str = "J48 -l -T"

    @property
    def ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.ours, self.weka)]


def measure(row: Row, ours: list[str], weka: list[str] | None, runs: int, warmup: int) -> Row:
    """Ours and Weka's in turn: ``warmup`` uncounted pairs, then ``runs`` counted ones."""
    for i in range(warmup + runs):
        a = wall_seconds(ours)
        b = wall_seconds(weka) if weka else None
        if i >= warmup:
            row.ours.append(a)
            if b is not None:
                row.weka.append(b)
    return row


def spread(values: list[float], digits: int = 2) -> str:
    if not values:
        return "—"
    return (f"{statistics.median(values):.{digits}f} "
            f"({min(values):.{digits}f}–{max(values):.{digits}f})")


def table(rows: list[Row]) -> str:
    lines = ["| command | data | ensemblekit s | Weka J48 s | Weka command | ratio | target | met |",
             "|---|---|---:|---:|---|---:|---:|---|"]
    for r in rows:
        ratio = spread(r.ratios) if r.weka else "—"
        met = ("yes" if statistics.median(r.ratios) <= r.target else "**no**") if r.weka else "—"
        lines.append(f"| {r.command} | {r.data} | {spread(r.ours)} | {spread(r.weka)} | "
                     f"`{r.weka_label}` | {ratio} | ≤ {r.target:g} | {met} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- where the time goes
_IMPORTTIME = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)")


def import_profile(cmd: list[str], runs: int = 3, top: int = 15) -> str:
    """``python -X importtime`` of ``cmd``: the ``top`` imports by median cumulative time."""
    if cmd[0].endswith("ensemblekit") and not cmd[0].endswith(".py"):
        argv = [sys.executable, "-X", "importtime", *cmd]  # the console script is a Python file
    else:
        argv = [cmd[0], "-X", "importtime", *cmd[1:]]
    cumulative: dict[str, list[int]] = {}
    depth: dict[str, int] = {}
    selfs: dict[str, list[int]] = {}
    walls, totals = [], []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env=CHILD_ENV)
        walls.append(time.perf_counter() - start)
        if done.returncode != 0:
            return f"(the profiled command failed: exit {done.returncode})"
        total = 0
        for line in done.stderr.splitlines():
            m = _IMPORTTIME.match(line)
            if not m:
                continue
            own, cum, indent, name = int(m[1]), int(m[2]), len(m[3]), m[4]
            cumulative.setdefault(name, []).append(cum)
            selfs.setdefault(name, []).append(own)
            depth[name] = (indent - 1) // 2
            if depth[name] == 0:
                total += cum
        totals.append(total)
    loaded = set(cumulative)
    heavy = sorted({n.split(".")[0] for n in loaded if n.split(".")[0] in HEAVY})
    ranked = sorted(cumulative, key=lambda n: statistics.median(cumulative[n]), reverse=True)[:top]
    lines = [
        f"`python -X importtime` of `ensemblekit {' '.join(cmd_tail(cmd))}`, median of {runs} runs: "
        f"whole process {statistics.median(walls):.2f} s, of which imports "
        f"{statistics.median(totals) / 1e6:.2f} s ({len(loaded)} modules).",
        "",
        f"Heavy packages imported: {', '.join(heavy) if heavy else 'none'}.",
        "",
        "| module | nesting depth | cumulative s | self s |",
        "|---|---:|---:|---:|",
    ]
    for name in ranked:
        lines.append(f"| `{name}` | {depth[name]} | {statistics.median(cumulative[name]) / 1e6:.3f} | "
                     f"{statistics.median(selfs[name]) / 1e6:.3f} |")
    return "\n".join(lines)


_FIT_PHASES = r"""
import sys, time
t = [time.perf_counter()]
from ensemblekit.cli import main
t.append(time.perf_counter())
import numpy
t.append(time.perf_counter())
from ensemblekit._imports import plain_scipy_docstrings
plain_scipy_docstrings()  # as main() does first
import numba
t.append(time.perf_counter())
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()  # what numba does before loading the first cached kernel
t.append(time.perf_counter())
sys.argv = ["ensemblekit", "fit", "c45", sys.argv[1], "-o", sys.argv[2], "--seed", "1"]
try:
    main()
except SystemExit as exc:
    assert not exc.code
t.append(time.perf_counter())
import gc
gc.freeze()  # as the console script ends (ensemblekit.cli.console_main)
print(" ".join(f"{b - a:.4f}" for a, b in zip(t, t[1:])))
mods = {m.split(".")[0] for m in sys.modules}
print(" ".join(sorted(mods & {"sklearn", "scipy", "numba"})))
"""
_FIT_PARTS = ("ensemblekit's command line and typer", "numpy",
              "numba's import (with llvmlite)",
              "numba's CPU target on first use (its type registries; this imports scipy.linalg "
              "to look for BLAS)",
              "the command itself: reading iris, loading the cached C4.5 kernel, growing and "
              "pruning, writing the model file")


def fit_phases(ek_python: str, model: str, runs: int = 5) -> str:
    """Where the time of ``fit c45 iris`` goes, in phases timed inside one process."""
    rows, walls, heavy = [], [], ""
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([ek_python, "-c", _FIT_PHASES, str(DATA / "iris.arff"), model],
                              capture_output=True, text=True, env=CHILD_ENV)
        walls.append(time.perf_counter() - start)
        if done.returncode != 0:
            return f"(the phase probe failed: exit {done.returncode})"
        lines = done.stdout.strip().splitlines()
        rows.append([float(x) for x in lines[-2].split()])
        heavy = lines[-1] if len(lines) > 1 else ""
    medians = [statistics.median(col) for col in zip(*rows)]
    lines = [f"Phases of `ensemblekit fit c45 iris.arff` timed inside one process "
             f"(`--profile`; median of {runs} runs; whole process "
             f"{statistics.median(walls):.2f} s; the rest is the interpreter's start and shutdown):",
             "", "| phase | seconds |", "|---|---:|"]
    lines += [f"| {part} | {sec:.3f} |" for part, sec in zip(_FIT_PARTS, medians)]
    lines += ["", f"Heavy packages imported by the fit: {heavy or 'none'} "
              "(no scikit-learn: the model class fits itself, `C45Model.fit_coded`)."]
    return "\n".join(lines)


def cmd_tail(cmd: list[str]) -> list[str]:
    """The arguments after the ensemblekit program, with temporary paths shortened."""
    for i, part in enumerate(cmd):
        if part in ("predict", "show", "fit"):
            return [Path(p).name if os.sep in p else p for p in cmd[i:]]
    return cmd


# --------------------------------------------------------------------------- the record
def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / (1 << 20):.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cores} cores (nproc), {model}{memory}, {platform.system()} {platform.release()}"


def command_line() -> str:
    """This script's command line as typed from the repository root (for a report)."""
    script = Path(sys.argv[0])
    try:
        script = script.resolve().relative_to(ROOT)
    except ValueError:
        pass
    return shlex.join(["python", str(script), *sys.argv[1:]])


def report_header(title: str, started: datetime.datetime, loads: tuple[str, str],
                  ek: list[str], java: list[str] | None) -> list[str]:
    """A report's title and its lines: command line, date, machine, load average, versions."""
    load_start, load_end = loads
    return [
        f"# {title}",
        "",
        f"- command: `{command_line()}` (from the repository root)",
        f"- date: {started:%Y-%m-%d %H:%M} UTC",
        f"- machine: {machine()}",
        f"- load average (1/5/15 min): {load_start} at start, {load_end} at end",
        f"- versions: {versions(ek, java)}",
    ]


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def versions(ek: list[str], java: list[str] | None) -> str:
    probe = ("import sys, numpy, ensemblekit; "
             "print(ensemblekit.__version__, numpy.__version__, sys.version.split()[0], "
             "ensemblekit.__file__)")
    python = sys.executable
    out = subprocess.run([python, "-c", probe], capture_output=True, text=True).stdout.split()
    ek_version, np_version, py_version, where = (out + ["?"] * 4)[:4]
    where = Path(where).parent
    try:
        where = where.relative_to(ROOT)
    except ValueError:
        pass
    commit = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip() or "?"
    parts = [f"ensemblekit {ek_version} (imported from `{where}`, work tree at {commit})",
             f"Python {py_version}", f"numpy {np_version}"]
    if java:
        jv = subprocess.run([java[0], "-version"], capture_output=True, text=True).stderr
        parts.append(jv.splitlines()[0] if jv else "java ?")
        wv = subprocess.run([*java, "weka.core.Version"], capture_output=True, text=True).stdout
        parts.append(f"Weka {wv.strip().splitlines()[0] if wv.strip() else '?'}")
    return ", ".join(parts)


# --------------------------------------------------------------------------- main
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="counted runs of each command (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs first (default 1)")
    parser.add_argument("--profile", action="store_true",
                        help="also show where the time of `predict` (c45, iris) goes")
    parser.add_argument("--write", action="store_true",
                        help=f"write the result to {RESULT.relative_to(ROOT)}")
    args = parser.parse_args()
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")

    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = load()
    ek = ensemblekit_command()
    jar = weka_jar()
    java = java_command(jar) if jar else None
    notes = []
    if jar is None:
        notes.append("Weka not measured: no $WEKA_JAR and no python-weka-wrapper3 jar found.")
    elif java is None:
        notes.append("Weka not measured: no `java` on PATH.")

    rows: list[Row] = []
    profile = phases = ""
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as folder:
        tmp = Path(folder)
        models, weka_models = {}, {}
        for data, k in DATASETS.items():  # fitted once, before any timing
            arff = str(DATA / f"{data}.arff")
            for algo in ALGORITHMS:
                path = tmp / f"{algo}-{data}.ekm"
                extra = ["-k", str(k)] if algo == "kmeans" else []
                run_checked([*ek, "fit", algo, arff, "-o", str(path), "--seed", "1", *extra],
                            f"fit {algo} {data}")
                models[algo, data] = str(path)
            if java:
                weka_models[data] = str(tmp / f"j48-{data}.model")
                run_checked([*j48(java), "-t", arff, "-no-cv", "-d", weka_models[data]],
                            f"J48 on {data}")

        total = len(DATASETS) * len(ALGORITHMS) * 2 + 1
        for command in ("predict", "show"):
            for data in DATASETS:
                arff = str(DATA / f"{data}.arff")
                weka = [*j48(java), "-l", weka_models[data], "-T", arff] if java else None
                for algo in ALGORITHMS:
                    ours = [*ek, command, models[algo, data]]
                    if command == "predict":
                        ours.append(arff)
                    print(f"[{len(rows) + 1}/{total}] {command} {algo} {data}", file=sys.stderr)
                    rows.append(measure(Row(f"{command} {algo}", data), ours, weka,
                                        args.runs, args.warmup))
        print(f"[{total}/{total}] fit c45 iris", file=sys.stderr)
        iris = str(DATA / "iris.arff")
        weka_fit = ([*j48(java), "-t", iris, "-no-cv", "-d", str(tmp / "j48-fit.model")]
                    if java else None)
        rows.append(measure(Row("fit c45", "iris", target=FIT_TARGET, weka_label="J48 -t -no-cv -d"),
                            [*ek, "fit", "c45", iris, "-o", str(tmp / "fit.ekm"), "--seed", "1"],
                            weka_fit, args.runs, args.warmup))
        if args.profile:
            profile = import_profile([*ek, "predict", models["c45", "iris"], iris])
            phases = fit_phases(sys.executable, str(tmp / "phases.ekm"))

    load_end = load()
    header = [
        *report_header("Whole-process start-up: ensemblekit against Weka 3.9.7 J48", started,
                       (load_start, load_end), ek, java),
        "",
        f"Wall seconds of one whole process: median (min–max) of {args.runs} runs after "
        f"{args.warmup} warm-up, ours and Weka's in turn; ratio = ours / Weka's, run by run, "
        "its median (min–max). Weka's prediction is `java weka.classifiers.trees.J48 -l J48MODEL "
        "-T DATA` on the row's data file; the fit row compares with `J48 -t iris.arff -no-cv -d "
        "J48MODEL`. Models were fitted once before timing with `ensemblekit fit ALGO DATA -o MODEL "
        "--seed 1` (kmeans: `-k` = number of classes). Target: ratio ≤ 1 for predict and show, "
        f"≤ {FIT_TARGET:g} for fit. The timed processes may write Python's bytecode caches "
        "(PYTHONDONTWRITEBYTECODE is removed from their environment), as an installed copy has them.",
        "",
    ]
    text = "\n".join(header) + "\n" + table(rows) + "\n"
    measured = [r for r in rows if r.weka]
    if measured:
        met = sum(statistics.median(r.ratios) <= r.target for r in measured)
        text += f"\n{met} of {len(measured)} rows meet their target.\n"
    if notes:
        text += "\n" + "\n".join(f"Note: {n}" for n in notes) + "\n"
    if profile:
        text += "\n## Where the time of `predict` goes\n\n" + profile + "\n"
    if phases:
        text += "\n## Where the time of `fit c45` goes\n\n" + phases + "\n"
    print(text)
    if args.write:
        RESULT.write_text(text)
        print(f"wrote {RESULT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
