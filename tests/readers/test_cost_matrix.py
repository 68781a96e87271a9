"""Cost-matrix files in Weka's two text forms, and one-line errors for bad ones."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from ensemblekit.dataset import DataError
from ensemblekit.readers.cost_matrix import parse_cost_matrix, read_cost_matrix

WEKA_FORM = """% Rows\tColumns
3\t3
% Matrix elements
0\t1\t2
5\t0\t1   % a comment after a row

3\t-4.5\t1e-1
"""
EXPECTED = [[0, 1, 2], [5, 0, 1], [3, -4.5, 0.1]]


def test_weka_file_form(tmp_path):
    path = tmp_path / "c.cost"
    path.write_text(WEKA_FORM)
    np.testing.assert_array_equal(read_cost_matrix(path), EXPECTED)
    gz = tmp_path / "c.cost.gz"
    gz.write_bytes(gzip.compress(WEKA_FORM.encode()))
    np.testing.assert_array_equal(read_cost_matrix(gz), EXPECTED)


@pytest.mark.parametrize("text", ["[0 1 2; 5 0 1; 3 -4.5 1e-1]", "% costs\n[0, 1, 2;\n 5 0 1;3 -4.5 .1;]\n"])
def test_matlab_form(text):
    np.testing.assert_array_equal(parse_cost_matrix(text, "x"), EXPECTED)


@pytest.mark.parametrize(("text", "message"), [
    ("", "c.cost: no cost matrix in the file"),
    ("% only a comment\n", "c.cost: no cost matrix in the file"),
    ("0 1 1.0\n1 0 5\n", "c.cost, line 1: the first line must give the numbers of rows and columns"),
    ("3 2\n0 1\n5 0\n3 4\n", "c.cost, line 1: a 3 by 2 matrix: a cost matrix is square"),
    ("2 2\n0 1\n5\n", "c.cost, line 3: a row of 1 costs; the matrix has 2 columns"),
    ("2 2\n0 1\n", "c.cost: 1 rows of costs; the size line says 2"),
    ("2 2\n0 1\n5 0\n7 7\n", "c.cost, line 4: 3 rows of costs; the size line says 2"),
    ("2 2\n0 x\n5 0\n", "c.cost, line 2: cost 'x' is not a number"),
    ("2 2\n0 NaN\n5 0\n", "c.cost, line 2: cost 'NaN' is not a number"),
    ("2 2\n0 1e999\n5 0\n", "c.cost, line 2: cost '1e999' is too large"),
    ("[0 1; 5]", "c.cost: row 2 of the matrix has 1 entries, row 1 has 2"),
    ("[0 1; 5 0", "c.cost: a matrix opened with '[' must end with ']'"),
    ("[]", "c.cost: the matrix [...] is empty"),
])
def test_bad_files_name_the_file_and_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "c.cost"
    path.write_text(text)
    with pytest.raises(DataError) as caught:
        read_cost_matrix(str(path))
    assert str(caught.value).startswith(f"{tmp_path}/{message}")
    assert "\n" not in str(caught.value)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(DataError, match="nope.cost: no such file"):
        read_cost_matrix(tmp_path / "nope.cost")
    with pytest.raises(DataError, match="is a directory"):
        read_cost_matrix(tmp_path)
