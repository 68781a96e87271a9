"""Fixtures shared by the whole suite; plain helpers are in ``ektesting/support.py``.

Markers (registered in pyproject.toml): ``slow`` (deselect with ``-m "not slow"`` for
the fast subset), ``weka`` (compares with Weka itself; skipped without Java and its jar),
``dask`` (starts a Dask cluster).
"""

from __future__ import annotations

import os
import sys

# OpenBLAS picks its kernels by CPU, and kernels of different widths sum in different
# orders; k-means seeding and the lasso path then break near-ties differently in the
# last bits. The README golden outputs and the reference-loop tests compare exactly, so
# the suite pins one kernel family (AVX2 "Haswell", which every x86-64 CPU this project
# runs on has; other architectures ignore the variable). It must be set before numpy
# loads OpenBLAS; subprocesses inherit it.
if "numpy" not in sys.modules:
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import pytest  # noqa: E402

from ektesting import support


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
