"""The coded layout's column helpers (``ensemblekit.classifiers.coded``)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ensemblekit.classifiers.coded import numeric_columns


@pytest.mark.parametrize("d, nominal", [(0, []), (4, []), (4, [0, 1, 2, 3]), (6, [5, 0, 3]),
                                        (1, [0]), (9, np.array([2, 7], dtype=np.int64))])
def test_numeric_columns_are_the_set_difference(d, nominal):
    got = numeric_columns(d, nominal)
    want = np.setdiff1d(np.arange(d), np.asarray(nominal, dtype=np.intp))
    assert got.dtype == np.intp and got.tolist() == want.tolist()


def test_numeric_columns_leave_numpy_ma_unimported():
    code = ("import sys; from ensemblekit.classifiers.coded import numeric_columns; "
            "numeric_columns(5, [1, 3]); print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
