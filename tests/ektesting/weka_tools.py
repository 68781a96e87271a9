"""Finding and running Weka 3.9.7 for the agreement tests (shared by the test modules).

The jar comes with the PyPI package python-weka-wrapper3 (a test dependency); it is
found without importing the package. Tests that need it are decorated ``@needs_weka``:
they carry the ``weka`` marker and skip where Java or the jar is missing, and the ``slow``
marker too, since each starts Java once or more (about a second a run).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
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


def run_weka(main_class: str, *args: str, timeout: float = 300) -> str:
    """Standard output of ``java -cp weka.jar MAIN_CLASS ARGS...`` (raises on failure)."""
    cmd = ["java", "--add-opens", "java.base/java.lang=ALL-UNNAMED", "-cp", str(WEKA_JAR),
           main_class, *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=timeout).stdout


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
