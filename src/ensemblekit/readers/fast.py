"""A vectorised reading of plain dense ARFF rows, for large files: pyarrow's CSV engine.

Reading a file of a million rows token by token in Python takes seconds and a
Python object per cell; pyarrow's CSV reader parses the same text into arrays
in a fraction of that. It is used only where it cannot differ from the
ordinary reader (:func:`ensemblekit.readers.arff.parse_arff_rows`):

- every attribute is numeric or nominal;
- the rows are ASCII and hold no character that the ordinary reader treats specially or
  strips (quotes, backslashes, braces of sparse rows, ``%``, spaces, tabs), and
  no blank line;
- every numeric value is a finite number or ``?``, and every nominal value one
  the coder knows (checked when the chunk is coded, see
  :meth:`ensemblekit.readers.table.TableCoder.add`).

A chunk that fails any of these, or that pyarrow refuses, is read again by the
ordinary reader, which gives today's values and today's messages with their
lines. pyarrow is imported only when a file is large enough to use it
(:data:`FAST_BYTES`), so that the start-up of a command on a small file does
not pay for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ensemblekit.readers.table import Column, FastColumn, Table

__all__ = ["FAST_BYTES", "fast_arff_table"]

#: Characters of text read before the vectorised engine is used: below this a
#: file is read by the ordinary reader alone (and pyarrow is not imported).
FAST_BYTES = 4 << 20

# Characters the ordinary ARFF reader treats specially (quoting, escapes, sparse
# rows, comments) or strips around a value (so that a nominal value would differ).
_SPECIAL = ("'", '"', "\\", "{", "%", " ", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e",
            "\x1f")


def fast_arff_table(text: str, lines: np.ndarray, relation: str, columns: Sequence[Column],
                    slow: Callable[[], Table]) -> Table | None:
    """Parse dense ARFF data lines with pyarrow, or None where the ordinary reader must.

    Parameters
    ----------
    text : str
        The data lines of one chunk, joined by ``\\n``; none blank or a comment.
    lines : ndarray of shape (n_rows,), int64
        1-based line of each row in the file.
    relation : str
        The ``@relation`` name.
    columns : sequence of Column
        The header's columns.
    slow : callable
        Reads the same rows with the ordinary reader: the coder calls it when a
        value is one it must refuse or report.

    Returns
    -------
    Table or None
        A table whose ``fast`` holds, per column, float64 values (NaN for
        ``?``) or the distinct tokens and each row's index among them (-1 for
        ``?``); ``cells`` is None. None when the chunk is not plain enough or
        pyarrow refuses it: the caller reads it the ordinary way.
    """
    if not text or any(c.kind not in ("numeric", "nominal") for c in columns):
        return None
    if (not text.isascii() or any(ch in text for ch in _SPECIAL) or "\n\n" in text
            or text[0] == "\n" or text[-1] == "\n"):
        return None
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = [f"c{k}" for k in range(len(columns))]
    types = {name: pa.float64() if c.kind == "numeric" else pa.dictionary(pa.int32(), pa.string())
             for name, c in zip(names, columns)}
    try:
        parsed = pacsv.read_csv(
            pa.py_buffer(text.encode("utf-8")),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False,
                                           block_size=max(1 << 20, len(text) + 1)),
            parse_options=pacsv.ParseOptions(delimiter=",", quote_char=False, double_quote=False,
                                             escape_char=False, newlines_in_values=False,
                                             ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=["?"],
                                                 strings_can_be_null=True,
                                                 quoted_strings_can_be_null=False,
                                                 check_utf8=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if parsed.num_rows != len(lines):
        return None
    fast: list[FastColumn] = []
    for k, c in enumerate(columns):
        col = parsed.column(k).combine_chunks()
        if c.kind == "numeric":
            values = col.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
            if not np.isfinite(values[~np.isnan(values)]).all():
                return None  # the ordinary reader names the infinite value and its line
            fast.append(FastColumn(values, ()))
        else:
            index = col.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            fast.append(FastColumn(index, tuple(col.dictionary.to_pylist())))
    return Table(relation, list(columns), None, lines, "arff", fast=fast, slow=slow)
