"""Hostile inputs and everyday faults, family by family: what each run ends in (issue 29).

Generates the seven families of issue 29 as a fixed, seeded set of cases, runs each
through the installed ``ensemblekit`` (the console script beside this Python), every
run a fresh process, and prints per family how many cases ended in each outcome:

========== =================================================================
refused    exit 2, one stderr line ``ensemblekit: error: ...`` (after it, nothing;
           before it, at most the ``note:`` lines of work done before the fault
           was found), and the case's own conditions (no file left behind,
           within its deadline)
correct    exit 0 (130/143 for a signal case) with the right output, as the
           case defines it
exit 1     an unexpected failure
signal     the process was killed by a signal (a crash, or a signal it did not
           handle)
over 1 GB  peak RSS over 1 GiB, or a ``MemoryError`` (each run is capped with
           ``RLIMIT_AS``, 2 GiB by default, so that a runaway cannot take the
           machine down)
over 60 s  killed at the wall limit (60 s by default)
silent     exit 0 with a wrong answer: output that differs from the case's
wrong      reference, or a hostile input accepted as if it were sound
other      anything else: exit 2 that is not one clean line, a valid input
           refused, a refusal after its deadline, leftover worker processes,
           another exit code
========== =================================================================

A case is one command (or, for the process family, a short script of commands) on
one generated input. Each case says what it accepts: a refusal only (a directory as
data, a gzip bomb), a correct answer only (a genuine model with thresholds near
1e25, a 250-byte file name), or either (a crafted model file may be refused, or its
predictions must equal those of the genuine model it was made from). "Correct" is
checked against a reference run of the same installed ensemblekit on the genuine
input: the genuine model's predictions, the same data scaled to +-1e8 rather than
+-1e308, an uninterrupted ``compare``. A correct answer is judged by its content,
an outcome by its first failing test in this order: over 60 s, over 1 GB, signal,
exit 1, then the rest.

Families (``--family`` picks some): ``model`` (mutations of real model files of
eight algorithms: arrays and lists one element short, extra keys named like
methods, huge declared counts, a genuine c45 model with thresholds near 1e25),
``data`` (/dev/zero, a directory, gzip bombs, a .csv.gz inflating to 900 MiB, a
10 MB nominal value, one 1000 MiB line under predict, 10**6 declared class values,
malformed ARFF and CSV), ``outputs`` (/dev/full as -o and as stdout of every
command, a 250-byte non-ASCII -o name, FIFOs), ``processes`` (SIGINT and SIGTERM
during lazy-bagging predict, two ``compare --resume`` on one new journal, journals
holding values out of range), ``usage`` (--runs 10**9, a 900k-point --grid, bad
--cv), ``dask`` (listeners that never speak or speak junk, malformed addresses, a
bad ENSEMBLEKIT_DASK_TIMEOUT, every worker of a cluster killed mid-run and the run
resumed without one; each refusal due within 15 s; skipped when dask.distributed is
not installed) and ``silent`` (knn, lazy-bagging and tree-kernel on data near
+-1e308; a tree-kernel model holding 1e308).

Peak RSS is ``ru_maxrss`` from ``os.wait4`` on the command, which includes the
worker processes it waited for; a small ``python -S`` launcher forks and execs the
command so that neither this script's memory nor the launcher's counts. The
launcher puts the command in a session of its own, kills the whole session at the
wall limit, and reports worker processes still alive 3 s after the command ended
(and kills them). Large inputs are generated in the temporary folder just before
their case and deleted after it.

Usage, from the repository root::

    python benchmarks/bench_hostile_inputs.py [--family NAME ...] [--case SUBSTRING ...]
        [--jobs 2] [--limit 60] [--as-limit-mb 2048] [--keep] [--write]

``--write`` writes the tables, with the date, machine, versions and command line, to
``benchmarks/results/hostile_inputs.md``. Exit status: 0 when no case ended in exit
1, signal, over 1 GB, over 60 s, silent wrong or other; 1 otherwise.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import io
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_hostile_models as hm  # noqa: E402  (the model-file builders)
from bench_startup import ensemblekit_command, load, machine, versions  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "sample_data"
RESULT = ROOT / "benchmarks" / "results" / "hostile_inputs.md"
SEED = 29
MIB = 1 << 20
GIB = 1 << 30
OVER_MB = 1024  # "over 1 GB": peak RSS above 1 GiB
DASK_DEADLINE = 15.0  # seconds: a scheduler fault must be refused within this

FAMILIES = ("model", "data", "outputs", "processes", "usage", "dask", "silent")
FAMILY_TITLES = {
    "model": "1. model files",
    "data": "2. data",
    "outputs": "3. outputs",
    "processes": "4. processes",
    "usage": "5. usage",
    "dask": "6. Dask",
    "silent": "7. silent wrong",
}
OUTCOMES = ("refused", "correct", "exit 1", "signal", "over 1 GB", "over 60 s", "silent wrong",
            "other")
GOOD = ("refused", "correct")
# what a case accepts
REFUSE, CORRECT, EITHER = "refuse", "correct", "either"
_MEMORY_WORDS = ("MemoryError", "Unable to allocate", "Cannot allocate memory", "bad_alloc",
                 "out of memory")


# --------------------------------------------------------------------------- one process
# A measured command must not be forked from this process: Linux counts the memory a
# process had before exec in its peak. A small fresh interpreter forks, limits and
# execs the command, watches the wall clock (and sends a signal when asked), and
# prints the command's wait4 usage as JSON.
_LAUNCHER = r"""
import json, os, resource, signal, sys, time
spec = json.loads(sys.argv[1])
start = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.setsid()
        if spec["as_limit"]:
            resource.setrlimit(resource.RLIMIT_AS, (spec["as_limit"], spec["as_limit"]))
        os.dup2(os.open(spec["stdin"] or os.devnull, os.O_RDONLY), 0)
        for fd, path in ((1, spec["stdout"]), (2, spec["stderr"])):
            flags = os.O_WRONLY | (os.O_CREAT | os.O_TRUNC if path.startswith(spec["tmp"]) else 0)
            os.dup2(os.open(path, flags, 0o644), fd)
        os.chdir(spec["cwd"])
        os.execve(spec["argv"][0], spec["argv"], spec["env"])
    except BaseException as exc:
        os.write(2, f"launcher: {exc!r}\n".encode())
    os._exit(127)
tick = os.sysconf("SC_CLK_TCK")

def cpu_seconds():
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick
    except (OSError, IndexError, ValueError):
        return 0.0

sig, sent, timed_out = spec["signal"], None, False
while True:
    got, status, usage = os.wait4(pid, os.WNOHANG)
    if got:
        break
    now = time.monotonic() - start
    if sig and sent is None and (now >= sig["wall"] or cpu_seconds() >= sig["cpu"]):
        (os.killpg if sig["group"] else os.kill)(pid, sig["num"])
        sent = now
    if now > spec["limit"]:
        timed_out = True
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        got, status, usage = os.wait4(pid, 0)
        break
    time.sleep(0.02)
elapsed = time.monotonic() - start
left = False
for _ in range(30):  # workers of the command still alive after it ended?
    try:
        os.killpg(pid, 0)
    except OSError:
        break
    time.sleep(0.1)
else:
    left = True
try:
    os.killpg(pid, signal.SIGKILL)
except OSError:
    pass
print(json.dumps({"maxrss_kb": usage.ru_maxrss, "code": os.waitstatus_to_exitcode(status),
                  "seconds": elapsed, "timed_out": timed_out, "signalled_at": sent,
                  "left_workers": left}))
"""


@dataclass
class Run:
    """What one command did: exit code (negative: killed by that signal), peak RSS, time, output."""

    argv: list
    code: int
    mb: float
    seconds: float
    timed_out: bool
    out_path: Path | None
    stderr: str
    left_workers: bool = False
    signalled_at: float | None = None

    @property
    def stdout(self) -> str:
        if self.out_path is None or not self.out_path.is_file():
            return ""
        with open(self.out_path, "rb") as fh:
            return fh.read(64 * MIB).decode("utf-8", errors="replace")

    @property
    def lines(self) -> list[str]:
        return self.stderr.splitlines()

    @property
    def message(self) -> str:
        """The error line, if there is one, else the first line on stderr."""
        errors = [line for line in self.lines if line.startswith("ensemblekit: error:")]
        return (errors or self.lines or [""])[0]

    def clean_refusal(self) -> bool:
        """Exit 2 with one line ``ensemblekit: error: ...`` last on stderr; before it at most
        the notes the command gave while it still worked (``note: ...``)."""
        *before, last = self.lines or [""]
        return (self.code == 2 and last.startswith("ensemblekit: error:")
                and all(line.startswith("note: ") for line in before))

    def out_of_memory(self) -> bool:
        return self.mb > OVER_MB or any(word in self.stderr for word in _MEMORY_WORDS)

    def json(self):
        try:
            return json.loads(self.stdout)
        except ValueError:
            return None

    def brief(self) -> str:
        status = "killed at the limit" if self.timed_out else (
            f"signal {-self.code}" if self.code < 0 else f"exit {self.code}")
        text = f"{status}, {self.mb:.0f} MB, {self.seconds:.1f} s"
        if self.left_workers:
            text += ", workers left alive"
        message = self.message[:200]
        if len(self.lines) > 1:
            others = list(self.lines)
            others.remove(self.message)
            message += f" (+{len(others)} more stderr lines, the last: {others[-1][:120]})"
        return f"{text}: {message}" if message else text


class Ctx:
    """What every case shares: the command, the limits, the folder, genuine models, references."""

    def __init__(self, folder: Path, limit: float, as_limit_mb: int, keep: bool):
        self.folder = folder
        self.limit = limit
        self.as_limit = as_limit_mb * MIB if as_limit_mb else 0
        self.keep = keep
        self.ek = ensemblekit_command()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ENSEMBLEKIT_")}
        self.models: dict[str, Path] = {}
        self.files: dict[str, Path] = {}
        self._refs: dict = {}
        self._lock = threading.Lock()
        self._counter = 0

    def scratch(self, name: str) -> Path:
        """A new empty folder for one case."""
        with self._lock:
            self._counter += 1
            slug = "".join(c if c.isalnum() else "-" for c in name)[:40]
            path = self.folder / f"{self._counter:03d}-{slug}"
        path.mkdir()
        return path

    def run(self, args, *, cwd=None, stdin=None, stdout=None, env=None, limit=None,
            signal_spec=None) -> Run:
        """Run ``ensemblekit ARGS`` once in a fresh process (see the launcher)."""
        args = [str(a) for a in args]
        handle, err = tempfile.mkstemp(dir=self.folder, prefix="err-")
        os.close(handle)
        out = None
        if stdout is None:
            handle, out = tempfile.mkstemp(dir=self.folder, prefix="out-")
            os.close(handle)
        spec = {"argv": [*self.ek, *args], "stdin": str(stdin) if stdin else None,
                "stdout": str(stdout or out), "stderr": err, "tmp": str(self.folder),
                "cwd": str(cwd or self.folder), "env": {**self.env, **(env or {})},
                "limit": limit or self.limit, "as_limit": self.as_limit, "signal": signal_spec}
        done = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, json.dumps(spec)],
                              capture_output=True, text=True, timeout=(limit or self.limit) + 60)
        try:
            got = json.loads(done.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise RuntimeError(f"the launcher failed: {done.stderr[-500:]}") from None
        stderr = Path(err).read_text(errors="replace")
        os.unlink(err)
        return Run(args, got["code"], got["maxrss_kb"] / 1024, got["seconds"], got["timed_out"],
                   Path(out) if out else None, stderr, got["left_workers"], got["signalled_at"])

    def reference(self, key, args, **kw) -> Run:
        """The run of a genuine command, once per key; it must exit 0."""
        with self._lock:
            slot = self._refs.setdefault(key, [threading.Lock(), None])
        with slot[0]:
            if slot[1] is None:
                got = self.run(args, **kw)
                if got.code != 0:
                    raise RuntimeError(f"reference run {key} failed: {got.brief()}")
                slot[1] = got
            return slot[1]


# --------------------------------------------------------------------------- verdicts
@dataclass
class Verdict:
    outcome: str
    detail: str


class NotApplicable(Exception):
    """The case cannot be built or run here (the reason)."""


def judge(run: Run, accept: str, right: Callable[[Run], bool | str] | None = None,
          deadline: float | None = None, problem: Callable[[], str | None] | None = None,
          ok_code: int = 0) -> Verdict:
    """The outcome of one run, for a case that accepts ``accept``.

    ``right(run)`` says whether an exit-``ok_code`` run's output is right (True, or a
    string saying what is wrong); ``problem()`` finds a fault left behind (a partial
    file); ``deadline`` is the time within which a refusal must come.
    """
    if run.timed_out:
        return Verdict("over 60 s", run.brief())
    if run.out_of_memory():
        return Verdict("over 1 GB", run.brief())
    if run.code < 0:
        return Verdict("signal", run.brief())
    if run.code == 1:
        return Verdict("exit 1", run.brief())
    left = problem() if problem else None
    if run.left_workers:
        left = "worker processes left alive"
    if run.code == ok_code and ok_code != 2:
        if accept == REFUSE:
            return Verdict("silent wrong", f"accepted: {run.brief()}")
        verdict = right(run) if right else True
        if verdict is not True:
            return Verdict("silent wrong", f"{verdict or 'wrong output'}: {run.brief()}")
        if left:
            return Verdict("other", f"{left}: {run.brief()}")
        return Verdict("correct", run.brief())
    if run.code == 2:
        if accept == CORRECT:
            return Verdict("other", f"refused a valid input: {run.brief()}")
        if not run.clean_refusal():
            return Verdict("other", f"not one clean line: {run.brief()}")
        if deadline is not None and run.seconds > deadline:
            return Verdict("other", f"refused after {run.seconds:.1f} s (> {deadline:g} s): {run.brief()}")
        if left:
            return Verdict("other", f"{left}: {run.brief()}")
        return Verdict("refused", run.brief())
    return Verdict("other", run.brief())


_ORDER = ("over 60 s", "over 1 GB", "signal", "exit 1", "silent wrong", "other", "refused", "correct")


def worst(verdicts: list[Verdict]) -> Verdict:
    return min(verdicts, key=lambda v: _ORDER.index(v.outcome))


@dataclass
class Case:
    family: str
    name: str
    run: Callable[[Ctx, Path], Verdict]
    exclusive: bool = False  # timing matters: run alone, after the others


def simple(family, name, build, accept=REFUSE, right=None, *, deadline=None, problem=None,
           **kw) -> Case:
    """A one-command case: ``build(ctx, folder)`` writes the inputs and returns the arguments.

    ``right(ctx, run)`` judges an exit-0 run; ``problem(folder)`` finds a fault left behind.
    """
    def go(ctx: Ctx, folder: Path) -> Verdict:
        args = build(ctx, folder)
        options = {k: (v(ctx, folder) if callable(v) else v) for k, v in kw.items()}
        got = ctx.run(args, cwd=folder, **options)
        return judge(got, accept, (lambda r: right(ctx, r)) if right else None, deadline,
                     (lambda: problem(folder)) if problem else None)
    return Case(family, name, go)


# --------------------------------------------------------------------------- judges
def same_stdout(key, args_fn):
    """Right when stdout equals the reference run's (``args_fn(ctx)`` gives its arguments)."""
    def right(ctx, run):
        ref = ctx.reference(key, args_fn(ctx))
        return True if run.stdout == ref.stdout else "output differs from the reference"
    return right


def same_scores(key, args_fn):
    """Right when ``--format json`` scores equal the reference run's."""
    def right(ctx, run):
        ref = ctx.reference(key, args_fn(ctx)).json()
        got = run.json()
        if not got or "scores" not in got:
            return "no scores in the output"
        return True if got["scores"] == ref["scores"] else "scores differ from the reference"
    return right


def nonempty(ctx, run):
    return True if run.stdout.strip() else "nothing on stdout"


def info_says(instances, attributes=None, values=None):
    """Right when ``info --format json`` reports these counts."""
    def right(ctx, run):
        got = run.json()
        if not isinstance(got, dict):
            return "info printed no JSON"
        if got.get("instances") != instances:
            return f"instances {got.get('instances')}, expected {instances}"
        attrs = got.get("attributes") or []
        if attributes is not None and len(attrs) != attributes:
            return f"{len(attrs)} attributes, expected {attributes}"
        if values is not None and (not attrs or attrs[-1].get("values") != values):
            return f"class values {attrs[-1].get('values') if attrs else None}, expected {values}"
        return True
    return right


def finite_predictions(ctx, run):
    """Right when every predicted value of a regression model is a finite number."""
    rows = run.stdout.splitlines()[1:]
    if not rows:
        return "no predictions"
    for line in rows:
        value = line.split(",")[-1]
        try:
            if not math.isfinite(float(value)):
                return f"non-finite prediction {value!r}"
        except ValueError:
            return f"prediction {value!r} is not a number"
    return True


def no_file(*names):
    def problem(folder):
        left = [n for n in names if (folder / n).exists() or any(folder.glob(f".{n}*"))]
        return f"left behind: {', '.join(left)}" if left else None
    return problem


# --------------------------------------------------------------------------- data files
def iris_rows() -> list[list[str]]:
    rows, seen = [], False
    for line in (DATA / "iris.arff").read_text().splitlines():
        if seen and line.strip() and not line.startswith("%"):
            rows.append(line.strip().split(","))
        seen = seen or line.strip().upper() == "@DATA"
    return rows


IRIS_NAMES = ("sepallength", "sepalwidth", "petallength", "petalwidth", "class")
IRIS_CLASSES = "{Iris-setosa,Iris-versicolor,Iris-virginica}"


def arff_text(rows, *, relation="iris", class_spec=IRIS_CLASSES, names=IRIS_NAMES) -> str:
    head = [f"@relation {relation}", ""]
    head += [f"@attribute {n} numeric" for n in names[:-1]]
    head += [f"@attribute {names[-1]} {class_spec}", "", "@data"]
    return "\n".join(head + [",".join(map(str, r)) for r in rows]) + "\n"


def csv_text(rows, names=IRIS_NAMES) -> str:
    return "\n".join([",".join(names)] + [",".join(map(str, r)) for r in rows]) + "\n"


def write_gzip(path: Path, blocks, level=6) -> Path:
    """Write the byte blocks an iterable yields as one gzip member, without holding them."""
    with open(path, "wb") as fh:
        packer = zlib.compressobj(level, zlib.DEFLATED, 31)
        for block in blocks:
            fh.write(packer.compress(block))
        fh.write(packer.flush())
    return path


def repeated(unit: bytes, total: int, head: bytes = b""):
    """``head`` then ``unit`` repeated up to ``total`` bytes, in blocks of about 4 MiB."""
    yield head
    block = unit * max(1, (4 * MIB) // len(unit))
    left = total - len(head)
    while left > 0:
        part = block[: min(len(block), left)]
        yield part
        left -= len(part)


def scaled_iris(down: int = 0) -> list[list[str]]:
    """iris's features, each centred on its mid-range and scaled by a power of two so that
    its largest magnitude lies between half the largest float and the largest float
    (0.9e308 to 1.8e308: the column's range overflows), then divided by ``2**down``
    (``down=996``: about +-1e8); the class as it is. Powers of two are exact, so two
    values of ``down`` give data that differ only by one exact factor."""
    rows = iris_rows()
    X = np.array([[float(v) for v in r[:4]] for r in rows])
    centred = X - (X.max(axis=0) + X.min(axis=0)) / 2
    top = np.abs(centred).max(axis=0)
    k = np.floor(np.log2(np.finfo(float).max / top)).astype(int)
    scaled = np.ldexp(centred, k - down)
    return [[repr(float(v)) for v in x] + [r[4]] for x, r in zip(scaled, rows)]


# --------------------------------------------------------------------------- models
MODELS = {  # name -> (algorithm, data file, fit options)
    "c45": ("c45", "iris.arff", []),
    "knn": ("knn", "iris.arff", []),
    "kmeans": ("kmeans", "iris.arff", ["-k", "3"]),
    "k2": ("k2", "vote.arff", []),
    "bagged-k2": ("bagged-k2", "vote.arff", ["--set", "n_estimators=5"]),
    "lazy-bagging": ("lazy-bagging", "iris.arff", []),
    "tree-kernel": ("tree-kernel", "iris.arff", ["--target", "petalwidth"]),
    "bagging": ("bagging", "iris.arff", ["--set", "n_estimators=5"]),
}
METHOD_NAMES = ("predict", "predict_proba", "fit", "__class__", "__dict__", "get_params",
                "_check_state", "transform", "__reduce__", "score")


def fit_models(ctx: Ctx, names=tuple(MODELS)) -> None:
    """Fit the genuine models ``names`` (keys of :data:`MODELS`) into ``ctx.models``."""
    for name in names:
        algo, data, extra = MODELS[name]
        path = ctx.folder / f"{name}.ekm"
        got = ctx.run(["fit", algo, DATA / data, "-o", path, "--seed", "1", *extra])
        if got.code != 0:
            raise RuntimeError(f"cannot fit {algo} on {data}: {got.brief()}")
        ctx.models[name] = path


def model_data(name: str) -> Path:
    return DATA / MODELS[name][1]


def predict_args(name):
    return lambda ctx: ["predict", ctx.models[name], model_data(name)]


def evaluate_args(name):
    return lambda ctx: ["evaluate", ctx.models[name], model_data(name), "--format", "json"]


def model_case(name: str, what: str, make: Callable[[Path, Path], None], command: str,
               accept: str = EITHER) -> Case:
    """A crafted model made from the genuine ``name`` model by ``make(good, out)``, then one
    command on it. Exit 0 is right for predict and evaluate when the output equals the
    genuine model's; for show when it prints something (show has no reference)."""
    def build(ctx, folder):
        out = folder / "crafted.ekm"
        try:
            make(ctx.models[name], out)
        except hm.NotBuilt as why:
            raise NotApplicable(str(why)) from None
        if command == "predict":
            return ["predict", out, model_data(name)]
        if command == "evaluate":
            return ["evaluate", out, model_data(name), "--format", "json"]
        return ["show", out]
    right = {"predict": same_stdout(("predict", name), predict_args(name)),
             "evaluate": same_scores(("evaluate", name), evaluate_args(name))}.get(
                 command, lambda ctx, run: nonempty(ctx, run))
    return simple("model", f"{name}: {what} · {command}", build, accept, right)


def shorten(member: str):
    """A model with ``member`` one element short along its first axis (sizes, digest honest)."""
    def make(good, out):
        members = hm.unpack(good)
        arr = np.load(io.BytesIO(members[member]), allow_pickle=False)
        hm.repack(hm.redigest({**members, member: hm.npy(arr[:-1])}), out)
    return make


def edit_meta(change):
    """A model whose metadata ``change(metadata)`` edits in place (digest recomputed)."""
    return hm.edit_metadata(change)


def _schema_one_short(metadata):
    metadata["schema"]["attributes"].pop(0)
    metadata["schema"]["class_index"] -= 1


def _class_values_one_short(metadata):
    schema = metadata["schema"]
    values = schema["attributes"][schema["class_index"]]["values"]
    if not values:
        raise hm.NotBuilt("the class is not nominal")
    values.pop()


def _first_list(tree, path=()):
    """(path, list) of the first non-empty list in a JSON tree, depth first."""
    if isinstance(tree, list) and tree:
        return path, tree
    if isinstance(tree, dict):
        for key in sorted(tree):
            found = _first_list(tree[key], (*path, key))
            if found:
                return found
    return None


def _state_list_one_short(metadata):
    found = _first_list(metadata.get("state"))
    if not found:
        raise hm.NotBuilt("no list in the stored state")
    found[1].pop()


def extra_key(name: str, where: str):
    """A model holding an extra ``name`` (named like a method): in the stored state, at the
    top of metadata.json, or as a recorded array member ``model/<name>.npy``."""
    def make(good, out):
        members = hm.unpack(good)
        if where == "array":
            hm.repack(hm.redigest({**members, f"model/{name}.npy": hm.npy(np.zeros(3))}), out)
            return
        metadata = hm.meta(members)
        if where == "state":
            metadata["state"]["model"][name] = 1.0
        else:
            metadata[name] = {"__class__": "numpy.float64"}
        hm.repack(hm.redigest(hm.with_meta(members, metadata), honest_sizes=False), out)
    return make


_set_path = hm._set  # a metadata edit: set the value at a '/'-separated path


def _many_attributes(count):
    def change(metadata):
        attrs = metadata["schema"]["attributes"]
        filler = [{"kind": "numeric", "name": f"a{i}", "values": []} for i in range(count)]
        metadata["schema"]["attributes"] = filler + attrs
        metadata["schema"]["class_index"] += count
    return change


def _many_class_values(count):
    def change(metadata):
        schema = metadata["schema"]
        schema["attributes"][schema["class_index"]]["values"] += [f"v{i}" for i in range(count)]
    return change


def _many_empty_lists(count):
    def change(metadata):
        metadata["schema"]["attributes"][0]["values"] = [[] for _ in range(count)]
    return change


def compact(make):
    """``make``'s model with metadata.json written without spaces (what the 8 MiB limit counts)."""
    def made(good, out):
        make(good, out)
        members = hm.unpack(out)
        raw = json.dumps(hm.meta(members), separators=(",", ":")).encode()
        hm.repack({**members, hm.METADATA: raw}, out)
    return made


def kmeans_labels_huge(good, out):
    """n_clusters 10**9 and a training label of 999,999,999 (below n_clusters)."""
    members = hm.unpack(good)
    metadata = hm.meta(members)
    metadata["params"]["n_clusters"] = 10**9
    labels = np.load(io.BytesIO(members["model/labels_.npy"]), allow_pickle=False).copy()
    labels[0] = 10**9 - 1
    members = {**hm.with_meta(members, metadata), "model/labels_.npy": hm.npy(labels)}
    hm.repack(hm.redigest(members), out)


def big_bag(distinct: bool):
    """bagged-k2 whose first bag lists 30 million row indices (240 MB, the model limit is
    256 MiB): distinct ones among 2**42 declared training rows, or one row 30 million times."""
    def make(good, out):
        members = hm.unpack(good)
        metadata = hm.meta(members)
        size = 30_000_000
        if distinct:
            metadata["state"]["model"]["n_training_rows_"] = 2**42
            bag = np.arange(size, dtype="<i8") << 16
        else:
            bag = np.zeros(size, dtype="<i8")
        members = {**hm.with_meta(members, metadata), "model/estimators_samples_/0.npy": hm.npy(bag)}
        members = hm.redigest(members, honest_sizes=True)
        with zipfile.ZipFile(out, "w") as archive:  # level 1: 240 MB deflates in seconds
            for name, data in members.items():
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data, compresslevel=1)
    return make


def model_cases(ctx: Ctx) -> list[Case]:
    cases = []
    rng = random.Random(SEED)
    for name in MODELS:
        if name not in ctx.models:  # not fitted (a test fits only what its sample needs)
            continue
        members = hm.unpack(ctx.models[name])
        arrays = sorted(m for m in members if m.endswith(".npy")
                        and np.load(io.BytesIO(members[m]), allow_pickle=False).ndim
                        and np.load(io.BytesIO(members[m]), allow_pickle=False).shape[0])
        mutations = [(f"{m} one element short", shorten(m)) for m in rng.sample(arrays, 2)]
        for what, change in (("schema attributes one short", _schema_one_short),
                             ("class values one short", _class_values_one_short),
                             ("stored state's first list one short", _state_list_one_short)):
            try:  # only where the model has what the change shortens
                change(copy.deepcopy(hm.meta(members)))
            except hm.NotBuilt:
                continue
            mutations.append((what, edit_meta(change)))
        for where in ("state", "metadata", "array"):
            key = rng.choice(METHOD_NAMES)
            mutations.append((f"extra key '{key}' ({where})", extra_key(key, where)))
        for i, (what, make) in enumerate(mutations):
            commands = ("predict", "show", "evaluate") if i == 0 else ("predict", "show")
            cases += [model_case(name, what, make, command) for command in commands]
    huge = [
        ("kmeans", "params n_clusters = 10**9", edit_meta(_set_path("params/n_clusters", 10**9)),
         ("predict", "show", "evaluate")),
        ("kmeans", "n_clusters 10**9 and a label 999,999,999", kmeans_labels_huge, ("predict", "show")),
        ("kmeans", "schema of 90,000 attributes", edit_meta(_many_attributes(90_000)), ("predict", "show")),
        ("c45", "class with 600,000 values", compact(edit_meta(_many_class_values(600_000))),
         ("predict", "show")),
        ("kmeans", "schema holding 2.5 million empty lists", compact(edit_meta(_many_empty_lists(2_500_000))),
         ("predict", "show")),
        ("c45", "training_data instances 10**18",
         edit_meta(_set_path("training_data/instances", 10**18)), ("show", "predict")),
        ("bagged-k2", "state estimators_samples_ = 10**9",
         edit_meta(_set_path("state/model/estimators_samples_", 10**9)), ("show", "predict")),
        ("bagged-k2", "a bag of one row 30 million times", big_bag(False), ("show",)),
        ("bagged-k2", "a bag of 30 million distinct rows of 2**42", big_bag(True), ("show",)),
        ("knn", "n_features_in_ = 10**9", edit_meta(_set_path("state/model/n_features_in_", 10**9)),
         ("predict",)),
    ]
    for name, what, make, commands in huge:
        if name in ctx.models:
            cases += [model_case(name, what, make, command) for command in commands]
    cases += big_threshold_cases()
    return cases


def big_threshold_cases() -> list[Case]:
    """A genuine c45 model fitted on iris times 1e25: show prints its thresholds, predict
    and evaluate give what the model of plain iris gives."""
    def data(folder):
        rows = [[repr(float(v) * 1e25) for v in r[:4]] + [r[4]] for r in iris_rows()]
        path = folder / "iris-1e25.arff"
        path.write_text(arff_text(rows))
        return path

    def fitted(ctx, folder):
        model = folder / "c45-1e25.ekm"
        got = ctx.run(["fit", "c45", data(folder), "-o", model, "--seed", "1"])
        if got.code != 0:
            raise NotApplicable(f"fit on iris x 1e25: {got.brief()}")
        return model

    def show_right(ctx, run):
        ref = ctx.reference(("show", "c45"), ["show", ctx.models["c45"]]).stdout
        splits = [line for line in run.stdout.splitlines() if "<=" in line]
        if len(splits) != sum("<=" in line for line in ref.splitlines()):
            return "not the same tree as on plain iris"
        if any(w in run.stdout.lower() for w in ("nan", "inf")):
            return "a threshold printed as nan or inf"
        return True

    def labels_right(ctx, run):
        ref = ctx.reference(("predict", "c45"), predict_args("c45")(ctx))
        return True if run.stdout == ref.stdout else "predictions differ from plain iris's"

    def scores_right(ctx, run):
        ref = ctx.reference(("evaluate", "c45"), evaluate_args("c45")(ctx)).json()
        got = run.json() or {}
        return True if got.get("scores") == ref["scores"] else "scores differ from plain iris's"

    return [
        simple("model", "c45 fitted on iris x 1e25 (genuine) · show",
               lambda ctx, f: ["show", fitted(ctx, f)], CORRECT, show_right),
        simple("model", "c45 fitted on iris x 1e25 (genuine) · predict",
               lambda ctx, f: ["predict", fitted(ctx, f), f / "iris-1e25.arff"], CORRECT, labels_right),
        simple("model", "c45 fitted on iris x 1e25 (genuine) · evaluate",
               lambda ctx, f: ["evaluate", fitted(ctx, f), f / "iris-1e25.arff", "--format", "json"],
               CORRECT, scores_right),
    ]


# --------------------------------------------------------------------------- data
def _iris_csv(folder, rows=None, name="iris.csv"):
    path = folder / name
    path.write_text(csv_text(rows or iris_rows()))
    return path


def _bomb_zeros(folder, name="bomb.arff.gz"):
    return write_gzip(folder / name, repeated(b"\0" * 4096, 2 * GIB), level=1)


def _bomb_rows(folder, name="bomb.csv.gz"):
    head = csv_text([]).encode()
    return write_gzip(folder / name, repeated(b"5.1,3.5,1.4,0.2,Iris-setosa\n", 2 * GIB, head),
                      level=1)


def _bomb_members(folder, name="members.csv.gz"):
    """Twelve gzip members one after the other, each 100 MiB of rows: 1.2 GiB in all."""
    path = folder / name
    head = csv_text([]).encode()
    with open(path, "wb") as fh:
        for i in range(12):
            packer = zlib.compressobj(1, zlib.DEFLATED, 31)
            for block in repeated(b"5.1,3.5,1.4,0.2,Iris-setosa\n", 100 * MIB, head if i == 0 else b""):
                fh.write(packer.compress(block))
            fh.write(packer.flush())
    return path


BIG_ROW = (",".join(f"{v}00000000000000000000000000001" for v in ("5.1", "3.5", "1.4", "0.2"))
           + ",Iris-setosa\n").encode()
BIG_ROWS = (900 * MIB - len(csv_text([]))) // len(BIG_ROW)


def _big_csv_gz(folder):
    """A .csv.gz of about 3.6 MB that inflates to 900 MiB of valid rows (under the 1 GiB limit)."""
    head = csv_text([]).encode()
    return write_gzip(folder / "big.csv.gz",
                      repeated(BIG_ROW, len(head) + BIG_ROWS * len(BIG_ROW), head), level=9)


def _long_line_gz(folder):
    """A .csv.gz whose second line is 1000 MiB long (its class value)."""
    head = csv_text([]).encode() + b"5.1,3.5,1.4,0.2,"
    return write_gzip(folder / "longline.csv.gz",
                      [*repeated(b"x" * 4096, 1000 * MIB, head), b"\n"], level=9)


def _big_nominal_arff(folder):
    big = "v" * (10 * 1000 * 1000)
    rows = [r[:4] + ["small"] for r in iris_rows()]
    rows[0][4] = big
    path = folder / "bignominal.arff"
    path.write_text(arff_text(rows, class_spec="{small," + big + "}"))
    return path


def _big_cell_csv(folder):
    rows = [list(r) for r in iris_rows()]
    rows[5][4] = "v" * (10 * 1000 * 1000)
    return _iris_csv(folder, rows, "bigcell.csv")


def _million_classes(folder):
    values = ",".join(f"c{i}" for i in range(10**6))
    rows = [r[:4] + [f"c{i % 3}"] for i, r in enumerate(iris_rows())]
    path = folder / "million.arff"
    path.write_text(arff_text(rows, class_spec="{" + values + "}"))
    return path


def _arff_mutations() -> list[tuple[str, str, Callable[[list[str], random.Random], list[str]]]]:
    """(name, kind, change(lines, rng) -> lines) over iris.arff's lines; kind is "valid" (the
    same answers as iris.arff), "invalid" (to be refused) or "class" (invalid in the class
    column only, which predict does not read: refused by info, the same predictions or a
    refusal from predict)."""
    def data_index(lines, rng):
        start = next(i for i, line in enumerate(lines) if line.strip().upper() == "@DATA") + 1
        return rng.randrange(start + 1, len(lines))

    def on_row(edit):
        def change(lines, rng):
            i = data_index(lines, rng)
            lines[i] = edit(lines[i], rng)
            return lines
        return change

    def header(edit):
        def change(lines, rng):
            i = next(i for i, line in enumerate(lines) if line.upper().startswith("@ATTRIBUTE"))
            lines[i] = edit(lines[i])
            return lines
        return change

    def drop_data_tag(lines, rng):
        return [line for line in lines if line.strip().upper() != "@DATA"]

    def duplicate_name(lines, rng):
        attrs = [i for i, line in enumerate(lines) if line.upper().startswith("@ATTRIBUTE")]
        lines[attrs[1]] = lines[attrs[1]].replace("sepalwidth", "sepallength")
        return lines

    def cut_in_header(lines, rng):
        i = next(i for i, line in enumerate(lines) if "class" in line and "{" in line)
        return lines[:i] + [lines[i][: len(lines[i]) // 2]]

    def crlf(lines, rng):
        return [line + "\r" for line in lines]

    def comments(lines, rng):
        out = []
        for line in lines:
            out.append(line)
            if rng.random() < 0.1:
                out.append("% a comment")
        return out

    def quoted_values(lines, rng):
        return [line.replace("Iris-setosa", "'Iris-setosa'") for line in lines]

    return [
        ("a row one field short", "invalid", on_row(lambda line, rng: line.rsplit(",", 1)[0])),
        ("a row with an extra field", "invalid", on_row(lambda line, rng: line + ",5.0")),
        ("an undeclared class value", "class",  # predict does not read the class column
         on_row(lambda line, rng: line.rsplit(",", 1)[0] + ",Iris-nonesuch")),
        ("a word in a numeric column", "invalid", on_row(lambda line, rng: "abc" + line[3:])),
        ("an unterminated quote", "invalid", on_row(lambda line, rng: "'" + line)),
        ("a NUL byte in a number", "invalid", on_row(lambda line, rng: line[:1] + "\0" + line[1:])),
        ("a sparse row left open", "invalid", on_row(lambda line, rng: "{0 5.1, 4 Iris-setosa")),
        ("a number 1e999 (overflows)", "invalid", on_row(lambda line, rng: "1e999" + line[3:])),
        ("@data missing", "invalid", drop_data_tag),
        ("duplicate attribute name", "invalid", duplicate_name),
        ("an unknown attribute type", "invalid", header(lambda line: line.rsplit(None, 1)[0] + " complex")),
        ("cut inside the header", "invalid", cut_in_header),
        ("CRLF line ends", "valid", crlf),
        ("comment lines among the rows", "valid", comments),
        ("quoted class values", "valid", quoted_values),
    ]


def _csv_mutations():
    def row_edit(edit):
        def change(text, rng):
            lines = text.splitlines()
            i = rng.randrange(2, len(lines))
            lines[i] = edit(lines[i])
            return "\n".join(lines) + "\n"
        return change

    return [
        ("csv: a row with an extra field", "invalid", row_edit(lambda line: line + ",7.7")),
        ("csv: a row one field short", "invalid", row_edit(lambda line: line.rsplit(",", 1)[0])),
        ("csv: an unbalanced quote", "invalid", row_edit(lambda line: '"' + line)),
        ("csv: empty file", "invalid", lambda text, rng: ""),
        ("csv: header only", "invalid", lambda text, rng: text.splitlines()[0] + "\n"),
        ("csv: semicolons and decimal commas", "valid",
         lambda text, rng: text.replace(",", ";").replace(".", ",")),
    ]


def malformed_cases() -> list[Case]:
    cases = []
    mutations = [(n, k, c, "arff") for n, k, c in _arff_mutations()]
    mutations += [(n, k, c, "csv") for n, k, c in _csv_mutations()]
    for index, (what, kind, change, fmt) in enumerate(mutations):
        def build(ctx, folder, change=change, fmt=fmt, index=index):
            rng = random.Random(SEED * 1000 + index)
            if fmt == "arff":
                lines = change((DATA / "iris.arff").read_text().splitlines(), rng)
                text = "\n".join(lines) + "\n"
            else:
                text = change(csv_text(iris_rows()), rng)
            path = folder / f"mutated.{fmt}"
            path.write_bytes(text.encode("utf-8"))
            return path

        accept = CORRECT if kind == "valid" else REFUSE
        cases.append(simple("data", f"{what} · info",
                            lambda ctx, f, b=build: ["info", b(ctx, f), "--format", "json"],
                            accept, info_says(150, 5)))
        cases.append(simple("data", f"{what} · predict",
                            lambda ctx, f, b=build: ["predict", ctx.models["c45"], b(ctx, f)],
                            EITHER if kind == "class" else accept,
                            same_stdout(("predict", "c45"), predict_args("c45"))))
    return cases


def data_cases() -> list[Case]:
    c45 = lambda ctx: ctx.models["c45"]  # noqa: E731
    empty_dir = lambda ctx, f: (f / "empty").mkdir() or f / "empty"  # noqa: E731
    cases = [
        simple("data", "/dev/zero · info", lambda ctx, f: ["info", "/dev/zero"]),
        simple("data", "/dev/zero · predict", lambda ctx, f: ["predict", c45(ctx), "/dev/zero"]),
        simple("data", "/dev/zero · fit", lambda ctx, f: ["fit", "c45", "/dev/zero", "-o", f / "m.ekm"],
               problem=no_file("m.ekm")),
        simple("data", "/dev/zero · evaluate", lambda ctx, f: ["evaluate", "c45", "/dev/zero"]),
        simple("data", "/dev/zero as .csv · info", lambda ctx, f: (
            (f / "zero.csv").symlink_to("/dev/zero"), ["info", f / "zero.csv"])[1]),
        simple("data", "a directory · info", lambda ctx, f: ["info", empty_dir(ctx, f)]),
        simple("data", "a directory · predict", lambda ctx, f: ["predict", c45(ctx), empty_dir(ctx, f)]),
        simple("data", "a directory · fit",
               lambda ctx, f: ["fit", "c45", empty_dir(ctx, f), "-o", f / "m.ekm"]),
        simple("data", "an empty directory · compare --data",
               lambda ctx, f: ["compare", "c45", "--data", empty_dir(ctx, f)]),
        simple("data", "gzip bomb, 2 GiB of zeros · info", lambda ctx, f: ["info", _bomb_zeros(f)]),
        simple("data", "gzip bomb, 2 GiB of zeros · predict",
               lambda ctx, f: ["predict", c45(ctx), _bomb_zeros(f)]),
        simple("data", "gzip bomb, 2 GiB of rows · info", lambda ctx, f: ["info", _bomb_rows(f)]),
        simple("data", "gzip bomb, 2 GiB of rows · fit",
               lambda ctx, f: ["fit", "c45", _bomb_rows(f), "-o", f / "m.ekm"], problem=no_file("m.ekm")),
        simple("data", "gzip bomb, 2 GiB of rows on stdin · info", lambda ctx, f: ["info", "-"],
               stdin=lambda ctx, f: _bomb_rows(f)),
        simple("data", "gzip bomb, 12 members of 100 MiB · info", lambda ctx, f: ["info", _bomb_members(f)]),
        simple("data", ".csv.gz inflating to 900 MiB of valid rows · info",
               lambda ctx, f: ["info", _big_csv_gz(f), "--format", "json"], EITHER, info_says(BIG_ROWS, 5)),
        simple("data", "a 10 MB nominal value (ARFF) · info",
               lambda ctx, f: ["info", _big_nominal_arff(f), "--format", "json"], EITHER,
               info_says(150, 5, 2)),
        simple("data", "a 10 MB nominal value (ARFF) · fit",
               lambda ctx, f: ["fit", "c45", _big_nominal_arff(f), "-o", f / "m.ekm"], EITHER,
               lambda ctx, run: True, problem=no_file("m.ekm")),
        simple("data", "a 10 MB cell (CSV) · info",
               lambda ctx, f: ["info", _big_cell_csv(f), "--format", "json"], EITHER, info_says(150, 5, 4)),
        simple("data", "one 1000 MiB line in a .csv.gz · predict",
               lambda ctx, f: ["predict", c45(ctx), _long_line_gz(f)]),
        simple("data", "one 1000 MiB line in a .csv.gz · info", lambda ctx, f: ["info", _long_line_gz(f)]),
        simple("data", "10**6 declared class values · info",
               lambda ctx, f: ["info", _million_classes(f), "--format", "json"], EITHER,
               info_says(150, 5, 10**6)),
        simple("data", "10**6 declared class values · fit",
               lambda ctx, f: ["fit", "c45", _million_classes(f), "-o", f / "m.ekm"], EITHER,
               lambda ctx, run: True, problem=no_file("m.ekm")),
    ]
    return cases + malformed_cases()


# --------------------------------------------------------------------------- outputs
def _full_link(folder, name):
    link = folder / name
    link.symlink_to("/dev/full")
    return link


STDOUT_COMMANDS = {  # label -> arguments (ctx) ; every command that prints on stdout
    "--version": lambda ctx: ["--version"],
    "--help": lambda ctx: ["--help"],
    "algorithms": lambda ctx: ["algorithms"],
    "algorithms c45": lambda ctx: ["algorithms", "c45"],
    "info": lambda ctx: ["info", DATA / "iris.arff"],
    "info --format json": lambda ctx: ["info", DATA / "iris.arff", "--format", "json"],
    "predict": lambda ctx: ["predict", ctx.models["c45"], DATA / "iris.arff"],
    "predict --format json": lambda ctx: ["predict", ctx.models["c45"], DATA / "iris.arff",
                                          "--format", "json"],
    "cluster": lambda ctx: ["cluster", "kmeans", DATA / "iris.arff", "-k", "3"],
    "evaluate": lambda ctx: ["evaluate", "c45", DATA / "iris.arff", "--cv", "3", "--repeats", "1"],
    "evaluate MODEL": lambda ctx: ["evaluate", ctx.models["c45"], DATA / "iris.arff"],
    "compare": lambda ctx: ["compare", "c45", "knn", "--data", DATA / "iris.arff", "--cv", "3",
                            "--repeats", "1"],
    "show": lambda ctx: ["show", ctx.models["c45"]],
    "show --format json": lambda ctx: ["show", ctx.models["c45"], "--format", "json"],
}


class FifoReader:
    """Reads the FIFO ``path`` to its end in a thread, as ``cat FIFO > file`` would.

    The FIFO is opened without blocking, so that the command's open for writing
    succeeds at once; reading ends when a writer has come and gone, or at :meth:`stop`.
    """

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = bytearray()
        self.seen_writer = False
        self.stopped = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while not self.stopped:
            try:
                block = os.read(self.fd, 1 << 16)
            except BlockingIOError:  # a writer is there, with nothing written yet
                self.seen_writer = True
                time.sleep(0.01)
                continue
            if block:
                self.seen_writer = True
                self.data += block
            elif self.seen_writer:
                break  # the writer closed its end
            else:
                time.sleep(0.05)  # no writer yet
        os.close(self.fd)

    def stop(self) -> bytes:
        self.stopped = True
        self.thread.join(5)
        return bytes(self.data)


def fifo_output_case() -> Case:
    def go(ctx, folder):
        fifo = folder / "out.csv"
        os.mkfifo(fifo)
        reader = FifoReader(fifo)
        got = ctx.run(["predict", ctx.models["c45"], DATA / "iris.arff", "-o", fifo], cwd=folder)
        data = reader.stop()
        ref = ctx.reference(("predict", "c45"), predict_args("c45")(ctx)).stdout

        def right(run):
            return True if data.decode(errors="replace") == ref else "the reader did not get the predictions"
        return judge(got, EITHER, right)
    return Case("outputs", "a FIFO (with a reader) as predict -o", go)


LONG_STEM = "ü" * 123  # 246 bytes of UTF-8; with ".ekm" or ".csv", 250


def long_name_cases() -> list[Case]:
    stem = LONG_STEM

    def model_right(ctx, run, folder):
        path = folder / f"{stem}.ekm"
        if not path.is_file():
            return "no model file"
        again = ctx.run(["predict", path, DATA / "iris.arff"])
        ref = ctx.reference(("predict", "c45"), predict_args("c45")(ctx))
        return True if again.stdout == ref.stdout else "the model written predicts otherwise"

    def go_fit(ctx, folder):
        got = ctx.run(["fit", "c45", DATA / "iris.arff", "-o", f"{stem}.ekm", "--seed", "1"], cwd=folder)
        return judge(got, CORRECT, lambda run: model_right(ctx, run, folder))

    def go_predict(ctx, folder):
        got = ctx.run(["predict", ctx.models["c45"], DATA / "iris.arff", "-o", f"{stem}.csv"], cwd=folder)
        ref = ctx.reference(("predict", "c45"), predict_args("c45")(ctx))
        path = folder / f"{stem}.csv"
        return judge(got, CORRECT, lambda run: True if path.is_file() and path.read_text() == ref.stdout
                     else "the file does not hold the predictions")

    def go_compare(ctx, folder):
        name = LONG_STEM + ".csv"
        got = ctx.run(["compare", "c45", "--data", DATA / "iris.arff", "--cv", "3", "--repeats", "1",
                       "--output", name], cwd=folder)
        path = folder / name
        return judge(got, CORRECT, lambda run: True if path.is_file() and path.stat().st_size
                     else "no score file")

    return [Case("outputs", "a 250-byte non-ASCII -o name · fit", go_fit),
            Case("outputs", "a 250-byte non-ASCII -o name · predict", go_predict),
            Case("outputs", "a 250-byte non-ASCII --output name · compare", go_compare)]


def output_cases() -> list[Case]:
    c45 = lambda ctx: ctx.models["c45"]  # noqa: E731
    iris = DATA / "iris.arff"
    cases = [
        simple("outputs", "-o /dev/full · predict",
               lambda ctx, f: ["predict", c45(ctx), iris, "-o", "/dev/full"]),
        simple("outputs", "-o /dev/full · fit", lambda ctx, f: ["fit", "c45", iris, "-o", "/dev/full"]),
        simple("outputs", "-o link to /dev/full · fit",
               lambda ctx, f: ["fit", "c45", iris, "-o", _full_link(f, "m.ekm")]),
        simple("outputs", "--output link to /dev/full · compare",
               lambda ctx, f: ["compare", "c45", "--data", iris, "--cv", "3", "--repeats", "1",
                               "--output", _full_link(f, "scores.csv")]),
        simple("outputs", "--labels-out /dev/full · cluster",
               lambda ctx, f: ["cluster", "kmeans", iris, "-k", "3", "--labels-out", "/dev/full"]),
        simple("outputs", "--graph /dev/full · show k2",
               lambda ctx, f: ["show", ctx.models["k2"], "--graph", "/dev/full"]),
        simple("outputs", "--resume link to /dev/full · compare",
               lambda ctx, f: ["compare", "c45", "--data", iris, "--cv", "3", "--repeats", "1",
                               "--resume", _full_link(f, "run.jsonl")]),
    ]
    for label, args in STDOUT_COMMANDS.items():
        cases.append(simple("outputs", f"stdout on /dev/full · {label}", lambda ctx, f, a=args: a(ctx),
                            stdout="/dev/full"))
    cases.append(simple("outputs", "stdout on /dev/full · fit (prints nothing there)",
                        lambda ctx, f: ["fit", "c45", iris, "-o", f / "m.ekm"], CORRECT,
                        lambda ctx, run: True, stdout="/dev/full"))
    cases += long_name_cases()
    cases.append(fifo_output_case())

    def fifo(ctx, folder, name="fifo"):
        os.mkfifo(folder / name)
        return folder / name
    cases += [
        simple("outputs", "a FIFO (no writer) as the model · show",
               lambda ctx, f: ["show", fifo(ctx, f)], EITHER),
        simple("outputs", "a FIFO (no writer) as the model · predict",
               lambda ctx, f: ["predict", fifo(ctx, f), iris], EITHER),
        simple("outputs", "a FIFO (no writer) as --resume · compare",
               lambda ctx, f: ["compare", "c45", "--data", iris, "--cv", "3", "--repeats", "1",
                               "--resume", fifo(ctx, f, "run.jsonl")], EITHER),
    ]
    return cases


# --------------------------------------------------------------------------- processes
def _lazy_signal_case(sig: int, jobs: int, to_file: bool) -> Case:
    expected = 128 + sig
    name = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}[sig]

    def go(ctx, folder):
        # 9,000 rows: tens of seconds of lazy prediction, so that the signal (after 2.5 s of the
        # parent's CPU, or 6 s of wall time when workers do the work) comes while it runs
        rows = iris_rows() * 60
        data = folder / "iris20.arff"
        data.write_text(arff_text(rows))
        args = ["predict", ctx.models["lazy-bagging"], data, "-j", str(jobs)]
        if to_file:
            args += ["-o", folder / "pred.csv"]
        spec = {"num": int(sig), "cpu": 2.5, "wall": 6.0, "group": sig == signal.SIGINT}
        got = ctx.run(args, cwd=folder, signal_spec=spec)
        if got.signalled_at is None:
            return Verdict("other", f"ended before the signal: {got.brief()}")
        if got.code == 0:
            return Verdict("other", f"finished although signalled at {got.signalled_at:.1f} s: {got.brief()}")
        left = [p.name for p in folder.iterdir() if p.name.startswith(("pred.csv", ".pred.csv"))]

        def right(run):
            if len(run.lines) > 1:
                return f"{len(run.lines)} stderr lines"
            if left:
                return f"left behind: {', '.join(left)}"
            return True
        verdict = judge(got, EITHER, right, ok_code=expected)
        if verdict.outcome == "correct":
            verdict.detail = f"signalled at {got.signalled_at:.1f} s; {verdict.detail}"
        return verdict
    target = " to its group" if sig == signal.SIGINT else ""
    where = " -o FILE" if to_file else ""
    return Case("processes",
                f"{name}{target} during lazy-bagging predict -j {jobs}{where} (expect {expected})",
                go, exclusive=True)


COMPARE_J = ["compare", "c45", "knn", "--data", DATA / "iris.arff", "--cv", "10", "--repeats", "3"]


def _compare_reference(ctx):
    return ctx.reference("compare-j", COMPARE_J)


def concurrent_resume_case(trial: int) -> Case:
    def go(ctx, folder):
        journal = folder / "run.jsonl"
        barrier = threading.Barrier(2)
        runs: list = [None, None]

        def one(i):
            barrier.wait()
            runs[i] = ctx.run([*COMPARE_J, "--resume", journal], cwd=folder)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        again = ctx.run([*COMPARE_J, "--resume", journal], cwd=folder)
        ref = _compare_reference(ctx)
        first = [judge(r, EITHER) for r in runs]
        bad = [v for v in first if v.outcome not in GOOD]
        if bad:
            return worst(bad)
        codes = sorted(r.code for r in runs)
        resumed = judge(again, CORRECT, lambda r: True if r.stdout == ref.stdout
                        else "the resumed table differs from an uninterrupted run's")
        detail = (f"runs: exit {runs[0].code} ({runs[0].seconds:.1f} s) and exit {runs[1].code} "
                  f"({runs[1].seconds:.1f} s); resume: {resumed.detail}")
        if resumed.outcome != "correct":
            outcome = "silent wrong" if resumed.outcome == "other" else resumed.outcome
            return Verdict(outcome, f"journal lost or wrong after two writers; {detail}")
        if codes != [0, 2]:
            return Verdict("other", f"both ran (no lock); {detail}")
        return Verdict("correct", detail)
    return Case("processes", f"two compare --resume J at once on a new journal (trial {trial})", go,
                exclusive=True)


def _journal(ctx, folder) -> Path:
    journal = folder / "run.jsonl"
    got = ctx.run([*COMPARE_J, "--resume", journal], cwd=folder)
    if got.code != 0:
        raise NotApplicable(f"cannot write a journal: {got.brief()}")
    return journal


def journal_value_case(label: str, raw: str) -> Case:
    def go(ctx, folder):
        journal = _journal(ctx, folder)
        lines = journal.read_text().splitlines()
        index = next(i for i, line in enumerate(lines) if i and '"accuracy"' in line)  # a unit
        record = json.loads(lines[index])
        value = json.dumps(record["scores"]["accuracy"])
        lines[index] = lines[index].replace(f'"accuracy": {value}', f'"accuracy": {raw}')
        journal.write_text("\n".join(lines) + "\n")
        got = ctx.run([*COMPARE_J, "--resume", journal], cwd=folder)
        return judge(got, REFUSE)
    return Case("processes", f"a journal holding \"accuracy\": {label}", go)


def torn_journal_case() -> Case:
    def go(ctx, folder):
        journal = _journal(ctx, folder)
        data = journal.read_bytes()
        journal.write_bytes(data[: len(data) - 40])  # the last record cut short, as by a kill
        got = ctx.run([*COMPARE_J, "--resume", journal], cwd=folder)
        ref = _compare_reference(ctx)
        return judge(got, CORRECT, lambda r: True if r.stdout == ref.stdout else "the table differs")
    return Case("processes", "a journal whose last record was torn by a kill (resumes)", go)


def process_cases() -> list[Case]:
    cases = [_lazy_signal_case(s, j, o) for s, j, o in (
        (signal.SIGINT, 1, False), (signal.SIGTERM, 1, False), (signal.SIGINT, 2, False),
        (signal.SIGTERM, 2, True), (signal.SIGINT, 1, True))]
    cases += [concurrent_resume_case(i) for i in (1, 2, 3)]
    cases += [journal_value_case(label, raw) for label, raw in
              (("7.5", "7.5"), ("true", "true"), ("NaN", "NaN"), ("-0.25", "-0.25"),
               ("\"0.9\"", '"0.9"'), ("1e999", "1e999"))]
    cases.append(torn_journal_case())
    return cases


# --------------------------------------------------------------------------- usage
def usage_cases() -> list[Case]:
    iris = DATA / "iris.arff"
    grid = ["--grid", "confidence_factor=0.0005:0.5:0.0005", "--grid", "min_samples_leaf=1:900:1"]
    argsets = [
        ("evaluate kmeans --runs 1000000000", ["evaluate", "kmeans", iris, "--runs", "1000000000"]),
        ("compare kmeans --runs 1000000000", ["compare", "kmeans", "--data", iris, "--runs", "1000000000"]),
        ("evaluate c45 --repeats 1000000000", ["evaluate", "c45", iris, "--repeats", "1000000000"]),
        ("compare c45 --repeats 1000000000", ["compare", "c45", "--data", iris, "--repeats", "1000000000"]),
        ("compare a two-key --grid of 900,000 points",
         ["compare", "c45", "knn", "--data", iris, "--baseline", "knn", *grid]),
        ("compare a one-key --grid of 10**9 points",
         ["compare", "c45", "knn", "--data", iris, "--baseline", "knn", "--grid",
          "min_samples_leaf=1:1000000000:1"]),
        ("evaluate --cv 0", ["evaluate", "c45", iris, "--cv", "0"]),
        ("evaluate --cv 1", ["evaluate", "c45", iris, "--cv", "1"]),
        ("evaluate --cv -3", ["evaluate", "c45", iris, "--cv", "-3"]),
        ("evaluate --cv 151 (150 rows)", ["evaluate", "c45", iris, "--cv", "151"]),
        ("evaluate --cv 1000000000", ["evaluate", "c45", iris, "--cv", "1000000000"]),
        ("compare --cv 1000000000", ["compare", "c45", "--data", iris, "--cv", "1000000000"]),
        ("compare --cv abc", ["compare", "c45", "--data", iris, "--cv", "abc"]),
        ("cluster -k 1000000000", ["cluster", "kmeans", iris, "-k", "1000000000"]),
        ("cluster -k 0", ["cluster", "kmeans", iris, "-k", "0"]),
        ("fit --set n_estimators=1000000000",
         ["fit", "bagging", iris, "-o", "m.ekm", "--set", "n_estimators=1000000000"]),
        ("evaluate --runs 1000000000 on a classifier", ["evaluate", "c45", iris, "--runs", "1000000000"]),
    ]
    cases = [simple("usage", label, lambda ctx, f, a=args: a, problem=no_file("m.ekm"))
             for label, args in argsets]

    def jobs_right(ctx, run):
        ref = ctx.reference("compare-small",
                            ["compare", "c45", "--data", iris, "--cv", "3", "--repeats", "1"])
        return True if run.stdout == ref.stdout else "the table differs"
    cases.append(simple("usage", "compare --n-jobs 1000000000 (refused, or capped with the same table)",
                        lambda ctx, f: ["compare", "c45", "--data", iris, "--cv", "3", "--repeats", "1",
                                        "--n-jobs", "1000000000"], EITHER, jobs_right))
    return cases


# --------------------------------------------------------------------------- Dask
class Listener:
    """A TCP server on 127.0.0.1 for one case: ``talk(conn, rng)`` is what it does on a connection."""

    def __init__(self, talk):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.talk = talk
        self.held: list = []
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        rng = random.Random(SEED)
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.held.append(conn)
            try:
                self.talk(conn, rng)
            except OSError:
                pass

    def close(self):
        self.stop = True
        self.thread.join(2)
        for conn in self.held:
            conn.close()
        self.sock.close()


def _silent(conn, rng):
    pass


def _random_bytes(conn, rng):
    conn.sendall(bytes(rng.getrandbits(8) for _ in range(4096)))


def _huge_prefix(conn, rng):
    conn.sendall(struct.pack("<Q", 1) + struct.pack("<Q", 3 << 61) + bytes(64))


def _http(conn, rng):
    conn.settimeout(1)
    try:
        conn.recv(4096)
    except OSError:
        pass
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    conn.close()


def _closed_port() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"tcp://127.0.0.1:{port}"


def dask_commands(ctx, address):
    return {
        "compare": ["compare", "c45", "--data", DATA / "iris.arff", "--cv", "2", "--repeats", "1",
                    "--scheduler", address],
        "predict": ["predict", ctx.models["c45"], DATA / "iris.arff", "--scheduler", address],
    }


def dask_case(label, command, *, talk=None, address=None, env=None) -> Case:
    def go(ctx, folder):
        listener = Listener(talk) if talk else None
        try:
            where = listener.address if listener else (address() if callable(address) else address)
            got = ctx.run(dask_commands(ctx, where)[command], cwd=folder, env=env)
        finally:
            if listener:
                listener.close()
        return judge(got, REFUSE, deadline=DASK_DEADLINE)
    return Case("dask", f"{label} · {command}", go)


COMPARE_DASK = ["compare", "c45", "lazy-bagging", "--data", DATA / "iris.arff", "--cv", "10",
                "--repeats", "5"]


class DaskCluster:
    """A scheduler and one worker of two threads (a cluster of one thread would run the units
    in the client's process) without a nanny (so that a killed worker stays dead), each a
    process of its own session, found through a scheduler file."""

    def __init__(self, folder: Path, env: dict):
        self.file = folder / "scheduler.json"
        start = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                     env=env, cwd=folder)
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file", str(self.file),
             "--host", "127.0.0.1", "--port", "0", "--no-dashboard"], **start)
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(self.file),
             "--no-nanny", "--nthreads", "2", "--dashboard-address", "127.0.0.1:0"], **start)
        deadline = time.monotonic() + 60
        while not self.file.is_file() or not self.file.read_text().strip():
            if time.monotonic() > deadline:
                self.close()
                raise NotApplicable("the Dask scheduler did not start within 60 s")
            time.sleep(0.2)
        self.address = json.loads(self.file.read_text())["address"]

    def kill_worker(self):
        _kill_session(self.worker)

    def close(self):
        for proc in (self.worker, self.scheduler):
            _kill_session(proc)


def _kill_session(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def dead_workers_case() -> Case:
    """compare on a one-worker cluster whose worker is killed once the journal holds some
    units: exit 2 (not a wait for ever), then ``--resume`` without a scheduler gives the table
    of an uninterrupted run."""
    def go(ctx, folder):
        journal = folder / "run.jsonl"
        cluster = DaskCluster(folder, ctx.env)
        try:
            result: list = []
            thread = threading.Thread(target=lambda: result.append(
                ctx.run([*COMPARE_DASK, "--scheduler", cluster.address, "--resume", journal], cwd=folder)))
            thread.start()
            deadline = time.monotonic() + 10  # a unit saved, or 10 s, whichever comes first
            while time.monotonic() < deadline and thread.is_alive():
                if journal.is_file() and len(journal.read_bytes().splitlines()) >= 2:
                    break
                time.sleep(0.05)
            killed_with = len(journal.read_bytes().splitlines()) - 1 if journal.is_file() else 0
            cluster.kill_worker()
            thread.join()
        finally:
            cluster.close()
        got = result[0]
        if got.code == 0:
            return Verdict("other", f"compare ended before the worker was killed: {got.brief()}")
        first = judge(got, REFUSE)
        if first.outcome != "refused":
            return Verdict(first.outcome, f"worker killed with {killed_with} units in the journal: "
                                          f"{first.detail}")
        ref = ctx.reference("compare-dask", COMPARE_DASK)
        again = ctx.run([*COMPARE_DASK, "--resume", journal], cwd=folder)
        resumed = judge(again, CORRECT, lambda r: True if r.stdout == ref.stdout
                        else "the resumed table differs from an uninterrupted run's")
        detail = f"killed with {killed_with} units saved: {got.brief()}; resume: {resumed.detail}"
        return Verdict(resumed.outcome, detail)
    return Case("dask", "every worker killed mid-run, then --resume without a scheduler · compare",
                go, exclusive=True)


def dask_available() -> bool:
    probe = subprocess.run([sys.executable, "-c", "import distributed"], capture_output=True)
    return probe.returncode == 0


def dask_cases() -> list[Case]:
    cases = []
    for command in ("compare", "predict"):
        cases += [
            dask_case("a listener that accepts and never speaks", command, talk=_silent),
            dask_case("a listener that sends 4 KiB of random bytes", command, talk=_random_bytes),
            dask_case("a listener whose length prefix claims 6.9 EiB", command, talk=_huge_prefix),
            dask_case("an HTTP server", command, talk=_http),
            dask_case("a closed port", command, address=_closed_port),
        ]
    for address in ("tcp://", "tcp://127.0.0.1:notaport", "tcp://127.0.0.1:99999", "nosuchscheme://x:1",
                    "tcp://[::1", "", "tcp://10.0.0.5:8786"):
        cases.append(dask_case(f"address {address!r}", "compare", address=address))
    for value in ("abc", "-5s", "0", "nan", "1e400s"):
        cases.append(dask_case(f"ENSEMBLEKIT_DASK_TIMEOUT={value} (silent listener)", "compare",
                               talk=_silent, env={"ENSEMBLEKIT_DASK_TIMEOUT": value}))
    cases.append(dead_workers_case())
    return cases


# --------------------------------------------------------------------------- silent wrong
def scale_case(algo: str, command: str, extra=()) -> Case:
    """``algo`` on iris scaled to +-1e308 against the same on iris scaled to +-1e8 (exactly
    2**996 apart): the same predictions (or scores), or a clean refusal."""
    regression = "--target" in extra

    def go(ctx, folder):
        outputs = {}
        for tag, down in (("1e8", 996), ("1e308", 0)):
            sub = folder / tag
            sub.mkdir()
            data = sub / "iris.arff"
            data.write_text(arff_text(scaled_iris(down)))
            if command == "evaluate":
                got = ctx.run(["evaluate", algo, data, "--cv", "10", "--repeats", "1", "--format", "json",
                               *extra], cwd=sub)
            elif command == "compare":
                got = ctx.run(["compare", algo, "c45", "--data", data, "--cv", "5", "--repeats", "2", *extra],
                              cwd=sub)
            else:
                model = sub / "m.ekm"
                got = ctx.run(["fit", algo, data, "-o", model, "--seed", "1", *extra], cwd=sub)
                if got.code == 0:
                    got = ctx.run(["predict", model, data], cwd=sub)
            outputs[tag] = got
        ref, run = outputs["1e8"], outputs["1e308"]
        if ref.code != 0:
            return Verdict("other", f"the +-1e8 reference failed: {ref.brief()}")

        def right(r):
            if command == "evaluate":
                a, b = cv_scores(ref), cv_scores(r)
                return True if a == b else f"accuracy {_short(b)} against {_short(a)} at +-1e8"
            if regression:
                return _close_predictions(ref.stdout, r.stdout)
            if r.stdout == ref.stdout:
                return True
            if command == "compare":
                return "the table differs from the one at +-1e8"
            diff = sum(a != b for a, b in zip(ref.stdout.splitlines(), r.stdout.splitlines()))
            return f"{diff} of 150 predictions differ from those at +-1e8"
        return judge(run, EITHER, right)
    return Case("silent", f"{algo} on iris scaled to +-1e308 against +-1e8 · {command}", go)


def cv_scores(run: Run) -> dict | None:
    """{metric: [(data set, {algorithm: mean}) ...]} of ``evaluate ALGO --format json``."""
    got = run.json()
    if not isinstance(got, dict) or not isinstance(got.get("metrics"), dict):
        return None
    return {metric: [(row["dataset"], {a: s["mean"] for a, s in row["scores"].items()})
                     for row in table["rows"]]
            for metric, table in got["metrics"].items()}


def _short(scores):
    if not scores or "accuracy" not in scores:
        return repr(scores)[:80]
    return ", ".join(f"{algo} {mean:.4f}" for _, means in scores["accuracy"] for algo, mean in means.items())


def _close_predictions(ref: str, got: str):
    a, b = ref.splitlines()[1:], got.splitlines()[1:]
    if len(a) != len(b):
        return f"{len(b)} rows against {len(a)}"
    for x, y in zip(a, b):
        try:
            u, v = float(x.split(",")[-1]), float(y.split(",")[-1])
        except ValueError:
            return f"prediction {y!r} is not a number"
        if not (math.isfinite(v) and math.isclose(u, v, rel_tol=1e-6, abs_tol=1e-9)):
            return f"prediction {v!r} against {u!r} at +-1e8"
    return True


def tree_kernel_value_case(what: str, make) -> Case:
    def build(ctx, folder):
        out = folder / "crafted.ekm"
        make(ctx.models["tree-kernel"], out)
        return ["predict", out, DATA / "iris.arff"]
    return simple("silent", f"tree-kernel model holding {what} · predict", build, EITHER, finite_predictions)


def silent_cases() -> list[Case]:
    cases = [scale_case("knn", "predict"), scale_case("knn", "evaluate"), scale_case("knn", "compare"),
             scale_case("lazy-bagging", "predict"),
             scale_case("tree-kernel", "predict", ("--target", "petalwidth"))]
    cases += [
        tree_kernel_value_case("train_target_[0] = 1e308", hm.edit_array("model/train_target_",
                                                                            lambda a: _put(a, 0, 1e308))),
        tree_kernel_value_case("tree_value_[1] = 1e308", hm.edit_array("model/tree_value_",
                                                                          lambda a: _put(a, 1, 1e308))),
        tree_kernel_value_case("train_basis_[0, 0] = 1e308", hm.edit_array("model/train_basis_",
                                                                              lambda a: _put(a, 0, 1e308))),
        tree_kernel_value_case("bandwidth_ = 1e308",
                               hm.edit_metadata(_set_path("state/model/bandwidth_", 1e308))),
        tree_kernel_value_case("bandwidth_ = 1e-308",
                               hm.edit_metadata(_set_path("state/model/bandwidth_", 1e-308))),
    ]
    return cases


def _put(arr, index, value):
    flat = arr.reshape(-1)
    flat[index] = value
    return arr


# --------------------------------------------------------------------------- running
def case_named(family: str, name: str, ctx: Ctx | None = None) -> Case:
    """The case of ``family`` called ``name`` (the model family needs ``ctx`` with its models)."""
    found = [c for c in BUILDERS[family](ctx) if c.name == name]
    if len(found) != 1:
        raise KeyError(f"{len(found)} cases of {family} are called {name!r}")
    return found[0]


BUILDERS = {"model": model_cases, "data": lambda ctx: data_cases(), "outputs": lambda ctx: output_cases(),
            "processes": lambda ctx: process_cases(), "usage": lambda ctx: usage_cases(),
            "dask": lambda ctx: dask_cases(), "silent": lambda ctx: silent_cases()}


@dataclass
class Row:
    case: Case
    verdict: Verdict | None = None
    skipped: str | None = None
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


def run_case(ctx: Ctx, case: Case) -> Row:
    folder = ctx.scratch(f"{case.family}-{case.name}")
    start = time.monotonic()
    try:
        verdict = case.run(ctx, folder)
        row = Row(case, verdict)
    except NotApplicable as why:
        row = Row(case, skipped=str(why))
    except Exception as exc:  # noqa: BLE001 - a fault of this script: report it, run the rest
        print(f"{case.name}: the bench failed: {exc!r}", file=sys.stderr)
        row = Row(case, skipped=f"the bench failed: {type(exc).__name__}: {exc}")
    finally:
        if not ctx.keep:
            shutil.rmtree(folder, ignore_errors=True)
    row.seconds = time.monotonic() - start
    return row


def tables(rows: list[Row], families) -> str:
    lines = ["| family | cases | " + " | ".join(OUTCOMES) + " |",
             "|---|--:|" + "--:|" * len(OUTCOMES)]
    total = dict.fromkeys(OUTCOMES, 0)
    for family in families:
        mine = [r for r in rows if r.case.family == family and r.verdict]
        counts = {o: sum(r.verdict.outcome == o for r in mine) for o in OUTCOMES}
        for o in OUTCOMES:
            total[o] += counts[o]
        lines.append(f"| {FAMILY_TITLES[family]} | {len(mine)} | "
                     + " | ".join(str(counts[o]) if counts[o] else "0" for o in OUTCOMES) + " |")
    lines.append(f"| **total** | {sum(total.values())} | "
                 + " | ".join(f"**{total[o]}**" for o in OUTCOMES) + " |")
    return "\n".join(lines)


def details(rows: list[Row], folder: Path) -> str:
    out = []
    for family in FAMILIES:
        mine = [r for r in rows if r.case.family == family]
        if not mine:
            continue
        out += ["", f"### {FAMILY_TITLES[family]}", "", "| case | outcome | what happened |", "|---|---|---|"]
        for r in mine:
            if r.verdict:
                text = re.sub(re.escape(str(folder)) + r"/[^/ ]+/", "", r.verdict.detail)
                text = text.replace(str(folder) + "/", "").replace(str(ROOT) + "/", "")
                text = text.replace(LONG_STEM, f"ü×{len(LONG_STEM)}")
                text = text.replace("|", "\\|").replace("\n", " ")
                mark = r.verdict.outcome if r.verdict.outcome in GOOD else f"**{r.verdict.outcome}**"
                out.append(f"| {r.case.name.replace('|', '/')} | {mark} | {text} |")
            else:
                out.append(f"| {r.case.name} | not run | {r.skipped} |")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", choices=FAMILIES, default=[],
                        help="only this family (repeatable)")
    parser.add_argument("--case", action="append", default=[], metavar="SUBSTRING",
                        help="only the cases whose name contains SUBSTRING (repeatable)")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("--limit", type=float, default=60.0, help="wall seconds per run (default 60)")
    parser.add_argument("--as-limit-mb", type=int, default=2048,
                        help="RLIMIT_AS of every run in MiB, 0 for none (default 2048)")
    parser.add_argument("--keep", action="store_true", help="keep the generated files (prints where)")
    parser.add_argument("--write", action="store_true",
                        help=f"write the tables to {RESULT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    families = [f for f in FAMILIES if not args.family or f in args.family]
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = load()
    notes = []
    if "dask" in families and not dask_available():
        families.remove("dask")
        notes.append("Dask family skipped: dask.distributed is not installed for this Python.")

    folder = Path(tempfile.mkdtemp(prefix="bench-hostile-inputs-"))
    ctx = Ctx(folder, args.limit, args.as_limit_mb, args.keep)
    try:
        fit_models(ctx)
        cases = [c for f in families for c in BUILDERS[f](ctx)]
        cases = [c for c in cases if not args.case or any(s in c.name for s in args.case)]
        print(f"{len(cases)} cases, {args.jobs} at a time; files under {folder}", file=sys.stderr)
        done: list[Row] = []

        def one(case):
            row = run_case(ctx, case)
            state = row.verdict.outcome if row.verdict else "not run"
            print(f"[{len(done) + 1}/{len(cases)}] {case.family}: {case.name}: {state} "
                  f"({row.seconds:.1f} s)", file=sys.stderr)
            done.append(row)
            return row
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            shared = list(pool.map(one, [c for c in cases if not c.exclusive]))
        alone = [one(c) for c in cases if c.exclusive]
        by_case = {id(r.case): r for r in shared + alone}
        rows = [by_case[id(c)] for c in cases]
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    elapsed = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()

    skipped = [r for r in rows if not r.verdict]
    bad = sum(r.verdict.outcome not in GOOD for r in rows if r.verdict)
    command_line = shlex.join(["python", "benchmarks/bench_hostile_inputs.py", *sys.argv[1:]])
    text = "\n".join([
        "# Hostile inputs and everyday faults (issue 29)",
        "",
        f"- command: `{command_line}` (from the repository root)",
        f"- date: {started:%Y-%m-%d %H:%M} UTC; {elapsed / 60:.1f} minutes, {args.jobs} cases at a time",
        f"- machine: {machine()}",
        f"- load average (1/5/15 min): {load_start} at start, {load()} at end",
        f"- versions: {versions(ctx.ek, None)}",
        f"- limits: {args.limit:g} s wall per run (killed past it: \"over 60 s\"); peak RSS over "
        f"{OVER_MB} MiB or a MemoryError is \"over 1 GB\"; every run under RLIMIT_AS "
        f"{args.as_limit_mb} MiB",
        *(f"- {n}" for n in notes),
        "",
        "Each case is one command (a short script of commands in the process family) on one "
        "generated input, each run a fresh process; `python benchmarks/bench_hostile_inputs.py --help` "
        "and the script's docstring define the outcomes. refused = exit 2 with one error line on "
        "stderr (after the notes of work done before, if any); "
        "correct = exit 0 (130/143 after a signal) with output equal to the case's reference; "
        "silent wrong = exit 0 with a wrong output or a hostile input accepted; other = exit 2 that is "
        "not one clean line, a valid input refused, a refusal past its deadline, workers left alive.",
        "",
        tables(rows, families),
        "",
        f"{bad} of {len(rows) - len(skipped)} cases ended in neither a clean refusal nor a correct answer"
        + (f"; {len(skipped)} could not be run here." if skipped else "."),
        "",
        "## Every case",
        details(rows, folder),
        "",
    ])
    print(text)
    if args.write:
        RESULT.write_text(text)
        print(f"wrote {RESULT.relative_to(ROOT)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
