"""Cost-matrix files, in the two text forms Weka's ``CostMatrix`` reads.

1. The file form of ``CostMatrix(Reader)`` (what ``-m FILE`` reads): ``%`` starts a
   comment that runs to the end of its line, blank lines are skipped, the first line
   holds the number of rows and of columns, and each following line one row::

       % Rows   Columns
       2        2
       % Matrix elements
       0        1
       5        0

2. The one-line form of ``CostMatrix.parseMatlab`` (as in ``CostSensitiveClassifier
   -cost-matrix "[0 1; 5 0]"``): rows separated by ``;``, entries by spaces (or
   commas), in brackets.

Rows are actual classes and columns predicted classes, in the order the class
attribute declares its values. Entries are finite decimal numbers, negative ones
included; Weka's expressions over attribute values are not supported. Whether the
matrix fits a data set's class is the caller's check
(:func:`ensemblekit.scores.costs.check_cost_matrix`).
"""

from __future__ import annotations

import re

import numpy as np

from ensemblekit.dataset import DataError, quote_input
from ensemblekit.readers.text import read_small_text

__all__ = ["parse_cost_matrix", "read_cost_matrix"]

#: A decimal number as Java's ``Double.parseDouble`` reads the usual ones (no NaN, no Infinity).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
#: A cost file larger than this is not a cost matrix.
_MAX_CHARS = 16 << 20
_FORMS = "expected 'ROWS COLUMNS' then one line per row, or [a b; c d]"


def _number(token: str, source: str, line: int | None) -> float:
    if not _NUMBER.fullmatch(token):
        raise DataError(f"cost {quote_input(token)} is not a number", source, line)
    value = float(token)
    if not np.isfinite(value):
        raise DataError(f"cost {quote_input(token)} is too large", source, line)
    return value


def _matlab(text: str, source: str) -> np.ndarray:
    body = text.strip()
    if not body.endswith("]"):
        raise DataError("a matrix opened with '[' must end with ']'", source)
    rows = [row.replace(",", " ").split() for row in body[1:-1].split(";")]
    if len(rows) > 1 and not rows[-1]:
        rows.pop()  # a ';' before the closing bracket
    width = len(rows[0])
    if width == 0:
        raise DataError("the matrix [...] is empty", source)
    for k, row in enumerate(rows, start=1):
        if len(row) != width:
            raise DataError(f"row {k} of the matrix has {len(row)} entries, row 1 has {width}",
                            source)
    return np.array([[_number(t, source, None) for t in row] for row in rows])


def parse_cost_matrix(text: str, source: str) -> np.ndarray:
    """A cost matrix from the text of a cost file (either form; see the module notes).

    Parameters
    ----------
    text : str
        The whole text.
    source : str
        The file as shown in messages.

    Returns
    -------
    ndarray of float64, shape (R, R)
        Actual class in rows, predicted class in columns.

    Raises
    ------
    ensemblekit.dataset.DataError
        One line naming ``source`` (and the line) and what is wrong: no matrix, a size
        line that is not two whole numbers, a matrix that is not square, a row of the
        wrong length, too few or too many rows, an entry that is not a finite number.
    """
    lines = [(k, raw.split("%", 1)[0].split()) for k, raw in enumerate(text.splitlines(), 1)]
    lines = [(k, tokens) for k, tokens in lines if tokens]
    if not lines:
        raise DataError(f"no cost matrix in the file ({_FORMS})", source)
    if lines[0][1][0].startswith("["):
        return _matlab("\n".join(" ".join(tokens) for _, tokens in lines), source)
    line, size = lines[0]
    if len(size) != 2 or not all(t.isdigit() for t in size):
        raise DataError(f"the first line must give the numbers of rows and columns ({_FORMS}), "
                        f"got {quote_input(' '.join(size))}", source, line)
    n_rows, n_columns = int(size[0]), int(size[1])
    if n_rows != n_columns or n_rows == 0:
        raise DataError(f"a {n_rows} by {n_columns} matrix: a cost matrix is square, one row "
                        "and one column per class", source, line)
    rows = lines[1:]
    for line, tokens in rows:
        if len(tokens) != n_columns:
            raise DataError(f"a row of {len(tokens)} costs; the matrix has {n_columns} columns",
                            source, line)
    if len(rows) != n_rows:
        where = rows[n_rows][0] if len(rows) > n_rows else None
        raise DataError(f"{len(rows)} rows of costs; the size line says {n_rows}", source, where)
    return np.array([[_number(t, source, line) for t in tokens] for line, tokens in rows])


def read_cost_matrix(path) -> np.ndarray:
    """Read a cost-matrix file (see :func:`parse_cost_matrix`).

    Parameters
    ----------
    path : str or os.PathLike
        A file (gzip-compressed or not, any of the encodings data files may have),
        or ``"-"`` for standard input.

    Returns
    -------
    ndarray of float64, shape (R, R)

    Raises
    ------
    ensemblekit.dataset.DataError
        The file cannot be read (missing, a folder, no permission), is larger than
        16 MiB of text, or does not hold a cost matrix.
    """
    text, src = read_small_text(path, _MAX_CHARS, "a cost matrix")
    return parse_cost_matrix(text, src)
