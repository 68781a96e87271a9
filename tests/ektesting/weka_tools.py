"""Finding and running Weka 3.9.7 for the agreement tests (shared by the test modules).

The jar comes with the PyPI package python-weka-wrapper3 (a test dependency); it is
found without importing the package. Tests that need it are decorated ``@needs_weka``:
they carry the ``weka`` marker and skip where Java or the jar is missing, and the ``slow``
marker too, since they run Java.

``run_weka`` hands each command line to a Java VM that stays up for the test session
(``WekaBatch.java`` beside this module; one VM per core, shared among pytest-xdist's
workers, started on first use): starting
Java and loading Weka's classes took longer than most runs themselves. Each command still
runs Weka's own ``main``, with the arguments a command line would give it, and returns
what it printed. Without Java's source launcher (a runtime without ``jdk.compiler``),
every command starts its own ``java`` as before.
"""

from __future__ import annotations

import atexit
import importlib.util
import locale
import os
import queue
import select
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest


def weka_jar() -> Path | None:
    """Path of ``weka.jar`` inside the installed python-weka-wrapper3 package, or None."""
    spec = importlib.util.find_spec("weka")  # locates the package, imports nothing
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        jar = Path(location) / "lib" / "weka.jar"
        if jar.is_file():
            return jar
    return None


WEKA_JAR = weka_jar()

_skip_without_weka = pytest.mark.skipif(
    shutil.which("java") is None or WEKA_JAR is None,
    reason="needs java and Weka's weka.jar (PyPI python-weka-wrapper3)",
)


def needs_weka(test):
    """Mark ``test`` (a function or class) ``weka`` and ``slow``; skip it without Java or the jar.

    ``pytest -m "not weka"`` then leaves out every comparison with Weka itself, and so does
    the fast subset, ``pytest -m "not slow"``: each test starts a Java virtual machine.
    """
    return pytest.mark.slow(pytest.mark.weka(_skip_without_weka(test)))


# The serial collector: a parallel one spends more CPU than it saves on heaps this small
# (Weka's K2 runs of test_bn_classifier.py: about a tenth less CPU); it changes no result.
_JAVA = ["java", "-XX:+UseSerialGC", "--add-opens", "java.base/java.lang=ALL-UNNAMED",
         "-cp", str(WEKA_JAR)]
_BATCH_SOURCE = Path(__file__).resolve().with_name("WekaBatch.java")


class _WekaVM:
    """One Java VM running ``WekaBatch.java``: Weka command lines, one after another."""

    def __init__(self):
        self.proc = subprocess.Popen([*_JAVA, str(_BATCH_SOURCE)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self._pending = b""
        if self._line(time.monotonic() + 120) != b"ready":
            raise OSError("WekaBatch.java did not start")

    def _read(self, deadline: float) -> bytes:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
            raise subprocess.TimeoutExpired(_BATCH_SOURCE.name, 0)
        data = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not data:
            raise EOFError("the Java VM running Weka ended")
        return data

    def _line(self, deadline: float) -> bytes:
        while b"\n" not in self._pending:
            self._pending += self._read(deadline)
        line, _, self._pending = self._pending.partition(b"\n")
        return line

    def _bytes(self, n: int, deadline: float) -> bytes:
        while len(self._pending) < n:
            self._pending += self._read(deadline)
        data, self._pending = self._pending[:n], self._pending[n:]
        return data

    def run(self, command: list[str], timeout: float) -> tuple[int, bytes, bytes]:
        """(status, stdout, stderr) of ``command``: a main class and its arguments."""
        if any("\t" in part or "\n" in part for part in command):
            raise ValueError("arguments with tabs or line breaks cannot be sent to the VM")
        deadline = time.monotonic() + timeout
        self.proc.stdin.write(("\t".join(command) + "\n").encode("utf-8"))
        status, n_out, n_err = (int(v) for v in self._line(deadline).split(b"\t"))
        return status, self._bytes(n_out, deadline), self._bytes(n_err, deadline)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class _WekaVMs:
    """Up to one idle :class:`_WekaVM` per core, lent to one ``run_weka`` call at a time."""

    def __init__(self, size: int):
        self.size, self.started, self.usable = size, 0, True
        self.idle: queue.LifoQueue = queue.LifoQueue()
        self.every: list[_WekaVM] = []
        self.lock = threading.Lock()
        atexit.register(self.close)

    def borrow(self) -> _WekaVM | None:
        """An idle VM, else a new one while fewer than ``size`` run, else the next one freed;
        None where no VM can start (the caller then runs ``java`` itself)."""
        while True:
            try:
                return self.idle.get_nowait()
            except queue.Empty:
                pass
            with self.lock:
                if not self.usable:
                    return None
                start = self.started < self.size
                if start:
                    self.started += 1
            if start:
                try:
                    vm = _WekaVM()
                except (OSError, EOFError, subprocess.TimeoutExpired):
                    with self.lock:
                        self.started -= 1
                        self.usable = False  # no source launcher here: one java per command
                    return None
                self.every.append(vm)
                return vm
            try:
                return self.idle.get(timeout=0.5)
            except queue.Empty:
                continue

    def give_back(self, vm: _WekaVM, healthy: bool):
        if healthy:
            self.idle.put(vm)
            return
        vm.proc.kill()
        vm.proc.wait()
        with self.lock:
            self.started -= 1

    def close(self):
        for vm in self.every:
            vm.close()


def _pool_size() -> int:
    """VMs per test process: the cores, shared among pytest-xdist's workers where it runs.

    Every VM compiles Weka's hot code for itself; two workers with a VM per core each
    would run four VMs on two cores and pay that warm-up twice over for no extra speed.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    return max(1, (os.cpu_count() or 1) // max(1, workers))


_VMS = _WekaVMs(_pool_size())


def _text(data: bytes) -> str:
    """Bytes Java printed, decoded as ``subprocess.run(..., text=True)`` decodes them."""
    decoded = data.decode(locale.getpreferredencoding(False))
    return decoded.replace("\r\n", "\n").replace("\r", "\n")


def run_weka(main_class: str, *args: str, timeout: float = 300) -> str:
    """Standard output of ``java -cp weka.jar MAIN_CLASS ARGS...``.

    Raises
    ------
    subprocess.CalledProcessError
        If the main method threw (a VM of its own would have exited with status 1).
    subprocess.TimeoutExpired
        If the command took longer than ``timeout`` seconds.
    """
    command = [main_class, *args]
    vm = _VMS.borrow()
    if vm is None:
        return subprocess.run([*_JAVA, *command], capture_output=True, text=True, check=True,
                              timeout=timeout).stdout
    healthy = False
    try:
        status, out, err = vm.run(command, timeout)
        healthy = True
    except EOFError:
        raise subprocess.CalledProcessError(vm.proc.wait(), [*_JAVA, *command]) from None
    finally:
        _VMS.give_back(vm, healthy)
    if status:
        raise subprocess.CalledProcessError(status, [*_JAVA, *command], _text(out), _text(err))
    return _text(out)


#: Weka's ``-classifications`` option printing every class distribution exactly: 40 places
#: hold every digit of Java's shortest form of a probability, which reads back as the same
#: double (compare with ``==`` or ``tobytes``).
CSV_EXACT = "weka.classifiers.evaluation.output.prediction.CSV -distribution -decimals 40"


def split_alternate(source: Path, folder: Path, missing: float = 0.0, seed: int = 0,
                    train_missing: bool = True) -> tuple[Path, Path]:
    """Write the odd data rows of the ARFF file ``source`` to ``folder``/train.arff and the
    even ones to test.arff; each feature value (every column but the last) becomes ``?``
    with probability ``missing`` (a seeded draw), in the test rows only when
    ``train_missing`` is false."""
    import random

    lines = source.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower().startswith("@data"))
    rows = [line for line in lines[at + 1:] if line.strip() and not line.lstrip().startswith("%")]
    draw = random.Random(seed)
    gappy = [",".join([v if draw.random() >= missing else "?" for v in row.split(",")[:-1]]
                      + row.split(",")[-1:]) for row in rows]
    train, test = folder / "train.arff", folder / "test.arff"
    train.write_text("\n".join(lines[:at + 1] + (gappy if train_missing else rows)[0::2]) + "\n",
                     encoding="utf-8")
    test.write_text("\n".join(lines[:at + 1] + gappy[1::2]) + "\n", encoding="utf-8")
    return train, test


def weka_distributions(classifier: str, train: Path, test: Path, options) -> list[list[float]]:
    """The class distribution Weka's ``classifier`` (a class name), trained on ``train``
    with ``options``, gives each row of ``test``, to the last bit (:data:`CSV_EXACT`)."""
    out = run_weka(classifier, "-t", str(train), "-T", str(test), *options,
                   "-classifications", CSV_EXACT)
    rows = []
    for line in out.splitlines():
        parts = line.split(",")
        if len(parts) > 4 and parts[0].isdigit():
            rows.append([float(p.lstrip("*")) for p in parts[4:]])
    return rows


def k2_options(max_parents: int, scoring: str) -> list[str]:
    """BayesNet options for global K2 with the LOO score and SimpleEstimator -A 0.5."""
    return [
        "-Q", "weka.classifiers.bayes.net.search.global.K2", "--",
        "-P", str(max_parents), "-S", "LOO-CV",
        *(["-Q"] if scoring == "loo-accuracy" else []),  # GlobalScoreSearchAlgorithm: 0/1 score
        "-E", "weka.classifiers.bayes.net.estimate.SimpleEstimator", "--", "-A", "0.5",
    ]  # fmt: skip


def bayesnet_k2(path: Path, max_parents: int, scoring: str):
    """Weka's K2 network and training-file class distributions for an ARFF file.

    Returns
    -------
    parents : dict
        ``{node name: (number of values, (parent names in the order added))}``,
        from the "Network structure" block Weka prints.
    distributions : ndarray of shape (n, C)
        ``-p 0 -distribution`` on the training file (3 printed decimals).
    """
    import re
    import tempfile

    import numpy as np

    opts = k2_options(max_parents, scoring)
    with tempfile.TemporaryDirectory() as tmp:
        # build once (-d saves the model), then predict the training file with it
        model = str(Path(tmp) / "k2.model")
        out = run_weka("weka.classifiers.bayes.BayesNet", "-t", str(path), "-no-cv", "-d", model,
                       *opts)
        pred = run_weka("weka.classifiers.bayes.BayesNet", "-l", model, "-T", str(path), "-p", "0",
                        "-distribution")
    block = out.split("Network structure (nodes followed by parents)\n")[1].split("LogScore")[0]
    parents = {}
    for line in block.strip().splitlines():
        m = re.fullmatch(r"(.+)\((\d+)\):\s*(.*?)\s*", line)
        parents[m.group(1)] = (int(m.group(2)), tuple(m.group(3).split()))
    dist = [[float(v.lstrip("*")) for v in line.split()[-1].split(",")]
            for line in pred.splitlines() if re.match(r"\s+\d+\s+\d+:", line)]
    return parents, np.array(dist)


_REP_SOURCE = Path(__file__).resolve().with_name("J48ReducedErrorPruning.java")


def j48_reduced_error(train: Path, test: Path, settings, timeout: float = 300):
    """J48 ``-R -N K -Q S`` trained on ``train``, for each ``(K, S)`` of ``settings``: its
    printed tree (below J48's "----" line, up to "Number of Leaves"), its numbers of leaves
    and nodes, and the class distribution of every row of ``test``, to the last bit.

    Weka 3.9.7's J48 refuses ``-R`` (a regression: "Model selection method not
    implemented"); ``J48ReducedErrorPruning.java`` beside this module builds J48's -R tree
    from Weka 3.9.7's own classes with that one call answered as Weka 3.8 answered it. One
    Java VM for all the settings.
    """
    import re

    args = [f"{k}:{s}" for k, s in settings]
    out = subprocess.run([*_JAVA, str(_REP_SOURCE), str(train), str(test), *args],
                         capture_output=True, text=True, check=True, timeout=timeout).stdout
    results = []
    for block in out.split("end\n")[:-1]:
        head, rest = block.split("\n", 1)
        text, dists = rest.split("distributions\n")
        tree = text.split("\n\nNumber of Leaves", 1)[0].strip("\n")
        leaves = int(re.search(r"Number of Leaves\s*:\s*(\d+)", text).group(1))
        size = int(re.search(r"Size of the tree\s*:\s*(\d+)", text).group(1))
        proba = [[float(v) for v in line.split()] for line in dists.splitlines()]
        results.append((tree, leaves, size, proba))
    return results
