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

from ensemblekit.readers.bounds import VALUE_CHARS
from ensemblekit.readers.table import Column, Table

__all__ = ["FAST_BYTES", "FastColumn", "fast_arff_table", "fast_csv_table"]

#: Characters of text read before the vectorised engine is used: below this a
#: file is read by the ordinary reader alone (and pyarrow is not imported).
FAST_BYTES = 1 << 20

# Characters the ordinary readers treat specially (quoting, escapes, sparse rows,
# comments) or strip around a value (so that a nominal value would differ).
_SPECIAL = ("'", '"', "\\", "{", "%", " ", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


class FastColumn:
    """One column of a table the vectorised engine parsed, coded as the coder asks.

    A column is given as numbers (an ARFF numeric attribute), as distinct tokens
    and each row's position among them (an ARFF nominal attribute), or as the
    text of its cells (a CSV column, whose kind the training schema gives).

    Parameters
    ----------
    numbers : ndarray of float64 of shape (n_rows,), optional
        NaN for a missing value.
    tokens : tuple of str, optional
        The distinct values as written.
    index : ndarray of int64 of shape (n_rows,), optional
        Position of each row's value in ``tokens``; -1 for a missing value.
    text : pyarrow.Array of str, optional
        The cells, null for a missing value.
    """

    def __init__(self, numbers=None, tokens=None, index=None, text=None):
        self._numbers, self._tokens, self._index, self._text = numbers, tokens, index, text

    def numbers(self) -> np.ndarray | None:
        """float64 values (NaN for missing); None when a value is not a finite number
        (the ordinary reader names it) or the column is not numeric."""
        if self._numbers is None and self._text is not None:
            import pyarrow as pa
            import pyarrow.compute as pc

            try:
                values = pc.cast(self._text, pa.float64()).to_numpy(zero_copy_only=False)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return None
            if not _finite(values):
                return None
            self._numbers = values
        return self._numbers

    def codes(self) -> tuple[tuple[str, ...], np.ndarray] | None:
        """``(tokens, index)``; None for a numeric column."""
        if self._index is None and self._text is not None:
            coded = self._text.dictionary_encode()
            self._tokens = tuple(coded.dictionary.to_pylist())
            self._index = coded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        return None if self._index is None else (self._tokens, self._index)

    def cells(self) -> list:
        """The cells as text, None for a missing value (a numeric column's numbers as
        Python's shortest text; see :func:`ensemblekit.readers.table._cell_text`)."""
        if self._text is not None:
            return self._text.to_pylist()
        if self._index is not None:
            return np.asarray([*self._tokens, None], dtype=object)[self._index].tolist()
        return [None if v != v else repr(v) for v in self._numbers.tolist()]


def _finite(values: np.ndarray) -> bool:
    return bool(np.isfinite(values[~np.isnan(values)]).all())


def _plain(text: str, special: Sequence[str]) -> bool:
    """Whether the lines of ``text`` are ASCII, none empty, and free of ``special``."""
    return bool(text) and text.isascii() and "\n\n" not in text and text[0] != "\n" \
        and text[-1] != "\n" and not any(ch in text for ch in special)


def _short_lines(data: bytes) -> bool:
    """Whether no line of ``data`` is longer than :data:`VALUE_CHARS` (so no value is)."""
    limit = VALUE_CHARS.limit()
    if len(data) <= limit:
        return True
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    edges = np.concatenate(([-1], ends, [len(data)]))
    return bool((np.diff(edges) - 1).max() <= limit)


def _parse(data: bytes, types: dict, delimiter: str, nulls: Sequence[str]):
    """pyarrow's table of the delimited lines ``data``, without quoting; None if it refuses."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    try:
        return pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(column_names=list(types), use_threads=True,
                                           block_size=max(1 << 20, len(data) + 1)),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False,
                                             double_quote=False, escape_char=False,
                                             newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(column_types=types, null_values=list(nulls),
                                                 strings_can_be_null=True,
                                                 quoted_strings_can_be_null=False,
                                                 check_utf8=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def fast_arff_table(text: str, lines: np.ndarray, relation: str, columns: Sequence[Column],
                    slow: Callable[[], Table]) -> Table | None:
    """Parse dense ARFF data lines with pyarrow, or None where the ordinary reader must.

    Parameters
    ----------
    text : str
        The data lines of one chunk, joined by ``\\n``.
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
        A table whose ``fast`` holds a :class:`FastColumn` per column (numbers
        for a numeric attribute, tokens for a nominal one); ``cells`` is None.
        None when the text is not plain (blank or comment lines, quotes,
        escapes, sparse rows, spaces, non-ASCII text, a line longer than
        :data:`~ensemblekit.readers.bounds.VALUE_CHARS`), holds an infinite
        number, or pyarrow refuses it: the caller reads it the ordinary way.
    """
    if any(c.kind not in ("numeric", "nominal") for c in columns) or not _plain(text, (*_SPECIAL, "\t")):
        return None
    data = text.encode("ascii")
    if not _short_lines(data):
        return None
    import pyarrow as pa

    types = {f"c{k}": pa.float64() if c.kind == "numeric" else pa.dictionary(pa.int32(), pa.string())
             for k, c in enumerate(columns)}
    parsed = _parse(data, types, ",", ["?"])
    if parsed is None or parsed.num_rows != len(lines):
        return None
    fast: list[FastColumn] = []
    for k, c in enumerate(columns):
        col = parsed.column(k).combine_chunks()
        if c.kind == "numeric":
            values = col.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
            if not _finite(values):
                return None  # the ordinary reader names the infinite value and its line
            fast.append(FastColumn(numbers=values))
        else:
            index = col.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            fast.append(FastColumn(tokens=tuple(col.dictionary.to_pylist()), index=index))
    return Table(relation, list(columns), None, lines, "arff", fast=fast, slow=slow)


def fast_csv_table(text: str, lines: np.ndarray, relation: str, columns: Sequence[Column],
                   delimiter: str, missing: frozenset[str], slow: Callable[[], Table]
                   ) -> Table | None:
    """Parse CSV data lines (no header) with pyarrow, or None where the ordinary reader must.

    Parameters
    ----------
    text : str
        Data records, one a line, joined by ``\\n``.
    lines : ndarray of shape (n_rows,), int64
        1-based line of each record in the file.
    relation : str
        The name of the data.
    columns : sequence of Column
        The columns as the first chunk named them.
    delimiter : {",", "\\t", ";"}
        The field delimiter.
    missing : frozenset of str
        The tokens read as a missing value.
    slow : callable
        Reads the same records with the ordinary reader.

    Returns
    -------
    Table or None
        A table whose ``fast`` holds the text of each column
        (:class:`FastColumn`); ``cells`` is None. None when the text is not
        plain (quotes, white space the reader strips, empty lines, non-ASCII
        text, a line longer than
        :data:`~ensemblekit.readers.bounds.VALUE_CHARS`) or pyarrow refuses it.
    """
    special = _SPECIAL if delimiter == "\t" else (*_SPECIAL, "\t")
    if not _plain(text, special):
        return None
    data = text.encode("ascii")
    if not _short_lines(data):
        return None
    import pyarrow as pa

    parsed = _parse(data, {f"c{k}": pa.string() for k in range(len(columns))}, delimiter, missing)
    if parsed is None or parsed.num_rows != len(lines):
        return None
    fast = [FastColumn(text=parsed.column(k).combine_chunks()) for k in range(len(columns))]
    return Table(relation, list(columns), None, lines, "csv", fast=fast, slow=slow)
