"""Fixtures shared by the whole suite; plain helpers are in ``ektesting/support.py``.

Markers (registered in pyproject.toml): ``slow`` (deselect with ``-m "not slow"`` for
the fast subset), ``weka`` (compares with Weka itself; skipped without Java and its jar),
``dask`` (starts a Dask cluster).
"""

from __future__ import annotations

import os
import signal
import sys

# OpenBLAS picks its kernels by CPU, and kernels of different widths sum in different
# orders; k-means seeding and the lasso path then break near-ties differently in the
# last bits. The README golden outputs and the reference-loop tests compare exactly, so
# the suite pins one kernel family (AVX2 "Haswell", which every x86-64 CPU this project
# runs on has; other architectures ignore the variable). It must be set before numpy
# loads OpenBLAS; subprocesses inherit it.
if "numpy" not in sys.modules:
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

# A suite started in the background of a non-interactive shell (``.ci/run &``) inherits
# SIGINT as ignored, and so would every process the tests start: Ctrl-C and the signal
# tests would then test nothing. Python's own handler is put back, so the tests (and their
# children, which start with the default action) see SIGINT as a user's shell sends it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import subprocess  # noqa: E402

import pytest  # noqa: E402

from ektesting import numba_warmup, support

# pytest-xdist's workers start with COLUMNS=80 and LINES=24 in their environment, and
# ensemblekit lays out tables written to a pipe to the width COLUMNS gives (issue 32). The
# suite removes both, so every command (in-process or a subprocess) runs as in a pipe with
# no declared width, however the tests were started; the tests of COLUMNS set it themselves.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


def pytest_sessionstart(session):
    """Under pytest-xdist, fill numba's cache before the workers start (ektesting/numba_warmup.py).

    Only in the process that starts the workers, and only when the cache is older than the
    kernels (a fresh checkout, or an edited kernel); the two halves run side by side.
    """
    config = session.config
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    if numba_warmup.cache_is_current():
        return
    halves = [subprocess.Popen([sys.executable, numba_warmup.__file__, half],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
              for half in numba_warmup.HALVES]
    # a half that fails only leaves its kernels to be compiled where used (and no stamp)
    codes = [process.wait() for process in halves]
    if all(code == 0 for code in codes):
        numba_warmup.mark_current()


@pytest.fixture
def cli():
    """``cli("fit", "c45", path, "-o", out)`` runs the command in-process; see support.run_cli."""
    return support.run_cli


@pytest.fixture
def sample_path():
    """``sample_path("iris.arff")``: a data file of sample_data/ or tests/data/."""
    return support.data_path


@pytest.fixture
def iris():
    """iris as an ensemblekit Dataset."""
    from ensemblekit.data import load_dataset

    return load_dataset(support.data_path("iris.arff"))
