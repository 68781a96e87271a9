"""Weka's ARFF format: reading a file's header and rows into a table, and writing a file.

Weka's Attribute-Relation File Format (Witten, Frank, Hall & Pal, *Data Mining:
Practical Machine Learning Tools and Techniques*, 4th ed., 2016, section 2.4;
the format page of the Weka wiki). Tokenising (quoting, escapes, ``?`` for
missing, sparse rows) is done by liac-arff. The header is read here, line by
line, so that every error names its line, and so that what Weka accepts and
liac-arff does not is accepted too: old range suffixes (``integer [1,10]``) and
``@attribute name{a,b}`` with no space before the brace.
"""

from __future__ import annotations

import itertools
import math
import numbers
import re
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import TextIO

import arff
import numpy as np

from ensemblekit.dataset import Attribute, DataError, quote_input
from ensemblekit.errors import InputError
from ensemblekit.readers import fast as _fast
from ensemblekit.readers.bounds import (
    ATTRIBUTES,
    NOMINAL_TOTAL,
    NOMINAL_VALUES,
    SPARSE_VALUES,
    VALUE_CHARS,
)
from ensemblekit.readers.table import Column, Table
from ensemblekit.readers.text import Lines, iter_lines, line_units

__all__ = ["arff_block_tables", "parse_arff_rows", "read_arff", "read_arff_header", "write_arff"]


class _Absent:
    """Marks an attribute left out of a sparse ARFF row (it means value 0)."""

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "<absent>"


_ABSENT = _Absent()


# --------------------------------------------------------------------------
# Reading ARFF
# --------------------------------------------------------------------------
_RE_KEYWORD = re.compile(r"@([A-Za-z]+)(.*)$", re.S)
_RE_RANGE = re.compile(r"^[\[(][^\])]*[\])]$")
_RE_UNQUOTED_NAME = re.compile(r"([^\s{]+)\s*(.*)$", re.S)
_RE_TYPE_WORD = re.compile(r"([A-Za-z]+)\s*(.*)$", re.S)


def _unescape(text: str) -> str:
    table = {"n": "\n", "t": "\t", "r": "\r"}
    return re.sub(r"\\(.)", lambda m: table.get(m.group(1), m.group(1)), text)


def _split_quoted(rest: str) -> tuple[str, str] | None:
    """Split ``'name' tail`` / ``name tail``; None if a quote is not closed."""
    if rest[:1] in ("'", '"'):
        quote = rest[0]
        i = 1
        while i < len(rest):
            if rest[i] == "\\":
                i += 2
                continue
            if rest[i] == quote:
                return _unescape(rest[1:i]), rest[i + 1 :].strip()
            i += 1
        return None
    m = _RE_UNQUOTED_NAME.match(rest)
    return (m.group(1), m.group(2).strip()) if m else ("", "")


def _date_format(name: str, tail: str, src: str, lineno: int) -> str:
    """The Java date pattern after ``date`` (quoted or bare; Weka's default when none),
    checked: a pattern ensemblekit cannot read is refused on the declaration's line."""
    from ensemblekit.errors import InputError
    from ensemblekit.readers.dates import DEFAULT_DATE_FORMAT, DateFormat

    if not tail:
        return DEFAULT_DATE_FORMAT
    split = _split_quoted(tail)
    pattern, rest = split if split is not None and tail[:1] in ("'", '"') else (tail, "")
    if split is None or rest or not pattern:
        raise DataError(f"attribute {name!r}: unexpected {quote_input(tail)} after the type "
                        "'date' (expected a date format, such as \"yyyy-MM-dd HH:mm:ss\")",
                        src, lineno)
    try:
        DateFormat(pattern)
    except InputError as exc:
        raise DataError(f"attribute {name!r}: {exc}", src, lineno) from None
    return pattern


def _liac_error_text(exc: Exception) -> str:
    text = str(exc) if isinstance(exc, arff.ArffException) and exc.message else type(exc).__name__
    return re.sub(r",? ?(at|in)? line -?\d+\.?", "", text).strip(" .:")


def _parse_arff_header(lines: list[str], src: str) -> tuple[str, list[Column], int]:
    """Scan the header; return (relation, columns, index of the @data line)."""
    relation: str | None = None
    columns: list[Column] = []
    nominal_specs: dict[int, str] = {}  # line index -> '{...}'
    declared: dict[str, int] = {}
    data_index = None
    for i, raw in enumerate(lines):
        s = raw.strip()
        if not s or s.startswith("%"):
            continue
        lineno = i + 1
        m = _RE_KEYWORD.match(s)
        keyword = m.group(1).lower() if m else ""
        rest = m.group(2).strip() if m else ""
        if relation is None and keyword != "relation":
            raise DataError(f"expected '@relation' to start the ARFF header, found {quote_input(s)}",
                            src, lineno)
        if keyword == "relation":
            if relation is not None:
                raise DataError("a second @relation line (the header must hold exactly one)", src, lineno)
            if not rest:
                raise DataError("@relation has no name", src, lineno)
            split = _split_quoted(rest)
            if split is None:
                raise DataError(f"unclosed quote in {quote_input(s)}", src, lineno)
            relation = split[0] if rest[0] in "'\"" else rest
        elif keyword == "attribute":
            split = _split_quoted(rest) if rest else ("", "")
            if split is None:
                raise DataError(f"unclosed quote in the attribute name: {quote_input(s)}", src, lineno)
            name, spec = split
            if not name:
                raise DataError(f"@attribute without a name: {quote_input(s)}", src, lineno)
            if name in declared:
                raise DataError(
                    f"attribute {name!r} is declared twice (first on line {declared[name]})", src, lineno
                )
            declared[name] = lineno
            if len(declared) > ATTRIBUTES.limit():
                raise DataError(ATTRIBUTES.exceeded("the header declares"), src, lineno)
            if not spec:
                raise DataError(f"attribute {name!r} has no type", src, lineno)
            if spec.startswith("{"):
                if not spec.endswith("}"):
                    what = f"attribute {name!r}: the value list {quote_input(spec)} is not closed with '}}'"
                    raise DataError(what, src, lineno)
                if not spec[1:-1].strip():
                    raise DataError(f"attribute {name!r} declares no nominal values", src, lineno)
                _refuse_long_pieces(spec, src, lineno)
                nominal_specs[i] = spec
                columns.append(Column(name, "nominal", (), lineno))
                continue
            tm = _RE_TYPE_WORD.match(spec)
            word = tm.group(1).lower() if tm else ""
            tail = tm.group(2).strip() if tm else spec
            if word in ("numeric", "real", "integer"):
                # Weka reads, and ignores, an old range suffix: integer [1,10]
                if tail and not _RE_RANGE.match(tail):
                    what = f"attribute {name!r}: unexpected {quote_input(tail)} after the type {word!r}"
                    raise DataError(what, src, lineno)
                columns.append(Column(name, "numeric", (), lineno))
            elif word == "string" and not tail:
                columns.append(Column(name, "string", (), lineno))
            elif word == "date":
                columns.append(Column(name, "date", (), lineno,
                                      date_format=_date_format(name, tail, src, lineno)))
            elif word == "relational":
                raise DataError(
                    f"attribute {name!r} is a relational (multi-instance) attribute, "
                    "which ensemblekit does not read",
                    src,
                    lineno,
                )
            else:
                raise DataError(
                    f"attribute {name!r} has unknown type {quote_input(spec)} "
                    "(expected numeric, real, integer, string, date or {value, ...})",
                    src,
                    lineno,
                )
        elif keyword == "data":
            if rest and not rest.startswith("%"):
                raise DataError(f"unexpected text after @data: {quote_input(rest)}", src, lineno)
            data_index = i
            break
        elif keyword == "end":
            raise DataError("'@end' outside a relational attribute", src, lineno)
        else:
            raise DataError(
                f"unexpected text in the ARFF header: {quote_input(s)} (expected @attribute or @data)",
                src,
                lineno,
            )
    if relation is None:
        raise DataError("no '@relation' line: not an ARFF file", src)
    if data_index is None:
        raise DataError("no '@data' line after the attribute declarations", src)
    if not columns:
        raise DataError("no @attribute declarations before @data", src, data_index + 1)

    if nominal_specs:
        # liac-arff reads the value lists (quotes, escapes); each list keeps its
        # own line so its errors point at the right place.
        doc = [""] * (max(nominal_specs) + 2)
        doc[0] = "@relation r"  # the real @relation line precedes every @attribute
        for k, (i, spec) in enumerate(nominal_specs.items()):
            doc[i] = f"@attribute a{k} {spec}"
        doc[-1] = "@data"
        decoder = arff.ArffDecoder()
        try:
            parsed = decoder.decode(doc)["attributes"]
        except Exception as exc:  # liac-arff raises several types
            bad = getattr(exc, "line", getattr(decoder, "_current_line", 0)) - 1
            lineno = bad if bad in nominal_specs else None
            if lineno is not None:
                what = f"cannot read the nominal values {quote_input(nominal_specs[bad])}"
            else:
                what = "cannot read a nominal value list"
            raise DataError(f"{what} ({_liac_error_text(exc)})", src,
                            None if lineno is None else lineno + 1) from None
        by_line = {c.line: c for c in columns}
        per_attribute, total, value_limit = NOMINAL_VALUES.limit(), 0, VALUE_CHARS.limit()
        for (i, spec), (_, values) in zip(nominal_specs.items(), parsed):
            col = by_line[i + 1]
            # liac-arff reads a declared ? as None; Weka keeps it as a value named "?" (a ? in
            # the data stays a missing value either way)
            values = tuple("?" if v is None else v for v in values)
            if len(values) > per_attribute:
                raise DataError(NOMINAL_VALUES.exceeded(f"attribute {col.name!r} declares"), src,
                                i + 1)
            total += len(values)
            if total > NOMINAL_TOTAL.limit():
                raise DataError(NOMINAL_TOTAL.exceeded("the header declares"), src, i + 1)
            if len(spec) > value_limit:
                _check_values(values, src, i + 1)
            if len(set(values)) != len(values):
                seen: set[str] = set()
                twice = next(v for v in values if v in seen or seen.add(v))
                raise DataError(f"attribute {col.name!r} declares the value {twice!r} twice", src, i + 1)
            col.values = values
    return relation, columns, data_index


def _check_values(values: Iterable, src: str, line: int) -> None:
    """Refuse a value longer than :data:`VALUE_CHARS` (None is a missing value)."""
    limit = VALUE_CHARS.limit()
    if any(v is not None and len(v) > limit for v in values):
        raise DataError(VALUE_CHARS.exceeded(f"a value on line {line} holds"), src, line)


def _refuse_long_pieces(text: str, src: str, line: int) -> None:
    """Refuse, before liac-arff reads it, text that surely holds a value longer than
    :data:`VALUE_CHARS`: its tokeniser takes about a hundred times a value's length.

    A piece between two commas lies within one value, quotes, escapes (at most two
    characters for one), an index and spaces; the exact check follows the tokeniser.
    """
    limit = VALUE_CHARS.limit()
    if len(text) > 2 * limit + 16 and max(map(len, text.split(","))) > 2 * limit + 16:
        raise DataError(VALUE_CHARS.exceeded(f"a value on line {line} holds"), src, line)


def _decode_rows(doc: list[str], lines: list[str], n_cols: int, sparse: bool, src: str) -> list:
    """Run liac-arff over a header of string attributes + data lines."""
    decoder = arff.ArffDecoder()
    try:
        return decoder.decode(doc, return_type=arff.LOD if sparse else arff.DENSE)["data"]
    except Exception as exc:  # liac-arff raises ArffException and ValueError
        lineno = getattr(exc, "line", -1)
        if not isinstance(lineno, int) or lineno < 1:
            lineno = getattr(decoder, "_current_line", 0) or None
        row = lines[lineno - 1].strip() if lineno and lineno <= len(lines) else ""
        if isinstance(exc, arff.BadDataFormat):
            try:
                parsed = arff._parse_values(row)
            except Exception:
                parsed = None
            if isinstance(parsed, dict) and parsed:
                what = (
                    f"sparse index {max(parsed)} is out of range: the file declares {n_cols} attributes "
                    f"(indices 0 to {n_cols - 1})"
                )
            elif isinstance(parsed, list):
                what = (f"expected {n_cols} values (one per attribute), found {len(parsed)}: "
                        f"{quote_input(row)}")
            else:
                what = f"wrong number of values (expected {n_cols}): {quote_input(row)}"
        elif isinstance(exc, arff.BadLayout):
            what = (
                f"malformed data row {quote_input(row)} (values must be separated by commas; "
                "quote values that hold spaces, commas or quotes)"
            )
        else:
            detail = _liac_error_text(exc) if isinstance(exc, arff.ArffException) else str(exc)
            what = f"cannot read the data row {quote_input(row)} ({detail})"
        raise DataError(what, src, lineno) from None


def read_arff_header(lines: Iterator[str], src: str) -> tuple[list[str], str, list[Column], int]:
    """Read an ARFF header from an iterator of lines, up to and including its ``@data`` line.

    The iterator is left at the line after ``@data``, so that the rows can be
    read from it next (see :func:`parse_arff_rows`).

    Parameters
    ----------
    lines : iterator of str
        The lines of the file, without their line ends, from the first.
    src : str
        The input as shown in messages.

    Returns
    -------
    header : list of str
        The lines read.
    relation : str
        The ``@relation`` name.
    columns : list of Column
        One per ``@attribute``, with its declared kind and values.
    data_index : int
        Index of the ``@data`` line in ``header`` (its line number minus 1).

    Raises
    ------
    DataError
        The header is malformed: no ``@relation`` first, no ``@data``, no
        attribute, an attribute declared twice or of an unknown or relational
        type, or a nominal value list that cannot be read; with its line.
    """
    header: list[str] = []
    for raw in lines:
        header.append(raw)
        s = raw.strip()
        if s and not s.startswith("%"):
            m = _RE_KEYWORD.match(s)
            if m and m.group(1).lower() == "data":
                break
    relation, columns, data_index = _parse_arff_header(header, src)
    return header, relation, columns, data_index


def read_arff(lines: Iterator[str], src: str, chunk_rows: int = 2000, *,
              fast_bytes: int | None = None) -> tuple[str, list[Column], int, Iterator[Table]]:
    """Read an ARFF file in two passes, holding only the text of its rows between them.

    The first pass reads the header and counts the data rows; the second
    reads the rows chunk by chunk (:func:`parse_arff_rows`). Each chunk's text
    is let go once its table is made.

    Parameters
    ----------
    lines : iterator of str
        The lines of the file, without their ends, from the first.
    src : str
        The input as shown in messages.
    chunk_rows : int, default=2000
        Data rows per table.
    fast_bytes : int, optional
        Characters of data rows from which the plain dense chunks are parsed
        by the vectorised engine (:mod:`ensemblekit.readers.fast`); default
        :data:`~ensemblekit.readers.fast.FAST_BYTES`. Either way the tables
        code to the same data set and the same errors.

    Returns
    -------
    relation : str
        The ``@relation`` name.
    columns : list of Column
        One per attribute, as declared.
    n_rows : int
        Data rows of the file.
    tables : iterator of Table
        The data rows, ``chunk_rows`` at a time, in file order.

    Raises
    ------
    DataError
        A malformed header (see :func:`read_arff_header`) or no data rows; a
        row that cannot be read (wrong number of values, a sparse index out of
        range, bad quoting), with its line, when the row is read; or
        sparse rows that expand to more values than
        :data:`~ensemblekit.readers.bounds.SPARSE_VALUES` (checked before
        any is read).
    """
    header, relation, columns, data_index = read_arff_header(lines, src)
    # (text of some whole lines, line of the first, number of lines)
    texts: deque[tuple[str, int, int]] = deque()
    rest: Iterator[str] = itertools.chain(header[data_index + 1:], lines)
    fast = False
    if isinstance(lines, Lines):
        # A large file is held block by block: no string per line.
        limit = _fast.FAST_BYTES if fast_bytes is None else fast_bytes
        blocks, first_blocks, size = lines.rest(), [], 0
        for block in blocks:
            first_blocks.append(block)
            size += len(block)
            if size >= limit:
                break
        fast = size >= limit
        if not fast:
            rest = iter_lines(first_blocks)
        else:
            n_rows = _hold_blocks(itertools.chain(first_blocks, blocks), texts, data_index + 2)
            del first_blocks
    if not fast:
        n_rows = _hold_lines(rest, texts, data_index + 2, chunk_rows)
    if not n_rows:
        raise DataError("no data rows after @data", src, data_index + 1)
    values = n_rows * len(columns)
    if values > SPARSE_VALUES.limit() and values > sum(len(t) for t, _, _ in texts):
        raise DataError(SPARSE_VALUES.exceeded(f"{n_rows:,} rows x {len(columns):,} attributes "
                                               f"make {values:,} values,"), src)

    def tables() -> Iterator[Table]:
        if not fast or len(texts) < 2:
            while texts:
                table = _unit_table(*texts.popleft(), relation, columns, src, fast)
                if table is not None:
                    yield table
            return
        # pyarrow parses without the interpreter's lock: the next block is parsed by a
        # second thread while this one codes the last (issue 30); tables, and the first
        # error, come in file order, and at most one block is read ahead
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ensemblekit-arff") as pool:
            def submit():
                return pool.submit(_unit_table, *texts.popleft(), relation, columns, src, fast)

            ahead = submit()
            while ahead is not None:
                current, ahead = ahead, (submit() if texts else None)
                table = current.result()
                if table is not None:
                    yield table
    return relation, columns, n_rows, tables()


def _hold_lines(lines: Iterable[str], texts: deque, first_line: int, chunk_rows: int) -> int:
    """Hold the data lines as texts of ``chunk_rows`` data rows each; return the data rows."""
    held: list[str] = []
    n_rows = in_chunk = 0
    for raw in lines:
        held.append(raw)
        s = raw.strip()
        if s and s[0] != "%":
            n_rows += 1
            in_chunk += 1
            if in_chunk >= chunk_rows:
                texts.append(("\n".join(held), first_line, len(held)))
                first_line += len(held)
                held, in_chunk = [], 0
    texts.append(("\n".join(held), first_line, len(held)))
    return n_rows


# Whitespace that str.strip() removes (ASCII), and the comment mark: a block
# without them, and without an empty line, holds only data rows.
_NOT_PLAIN = (" ", "\t", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "%")


def _data_rows(text: str, n_lines: int) -> int:
    """Data rows (not blank, not a ``%`` comment) among the ``n_lines`` lines of ``text``."""
    if (text and text.isascii() and text[0] != "\n" and text[-1] != "\n" and "\n\n" not in text
            and not any(ch in text for ch in _NOT_PLAIN)):
        return n_lines
    return sum(1 for raw in text.split("\n") if (s := raw.strip()) and s[0] != "%")


def _hold_blocks(blocks: Iterable[str], texts: deque, first_line: int) -> int:
    """Hold the data lines as the texts of whole lines the blocks hold; return the data rows."""
    n_rows = 0
    for unit in line_units(blocks, first_line):
        n_rows += _data_rows(unit[0], unit[2])
        texts.append(unit)
    return n_rows


def _ordinary_table(text: str, first_line: int, relation: str, columns: list[Column], src: str
                    ) -> Table | None:
    """The data rows among the lines of ``text`` read the ordinary way (None if there is none)."""
    rows, row_lines = [], []
    for lineno, raw in enumerate(text.split("\n"), first_line):
        s = raw.strip()
        if s and s[0] != "%":
            rows.append(raw)
            row_lines.append(lineno)
    return parse_arff_rows(rows, row_lines, relation, columns, src) if rows else None


def _unit_table(text: str, first_line: int, n_lines: int, relation: str, columns: list[Column],
                src: str, fast: bool) -> Table | None:
    """The data rows among the ``n_lines`` lines of ``text``: by the vectorised engine when
    ``fast`` and the text is plain, else the ordinary way (None if there is no row)."""
    if fast:
        lines = np.arange(first_line, first_line + n_lines, dtype=np.int64)
        table = _fast.fast_arff_table(
            text, lines, relation, columns,
            lambda: _ordinary_table(text, first_line, relation, columns, src))
        if table is not None:
            return table
    return _ordinary_table(text, first_line, relation, columns, src)


def arff_block_tables(blocks: Iterable[str], first_line: int, relation: str,
                      columns: list[Column], src: str) -> Iterator[Table]:
    """Tables of the data lines that blocks of text hold, a block at a time, for a large file.

    Plain blocks are parsed by the vectorised engine
    (:func:`ensemblekit.readers.fast.fast_arff_table`), the others the ordinary
    way (:func:`parse_arff_rows`); either way the tables code to the same values
    and errors.

    Parameters
    ----------
    blocks : iterable of str
        The text of the data lines, from the start of a line, as
        :meth:`ensemblekit.readers.text.Lines.rest` gives it.
    first_line : int
        1-based line of the first line of the text.
    relation : str
        The ``@relation`` name.
    columns : list of Column
        The header's columns.
    src : str
        The input as shown in messages.

    Yields
    ------
    Table
        The rows of each block that holds one, in file order.

    Raises
    ------
    DataError
        A row that cannot be read, with its line, as :func:`parse_arff_rows`.
    """
    for unit in line_units(blocks, first_line):
        table = _unit_table(*unit, relation, columns, src, True)
        if table is not None:
            yield table


def _put_sparse(cells: np.ndarray, is_sparse: np.ndarray, sparse_rows: list[dict],
                columns: list[Column]) -> None:
    """Write the decoded sparse rows into their places in ``cells`` (``is_sparse`` marks them).

    An attribute left out of a sparse row has value 0: the number 0, or the
    first declared value of a nominal attribute (as in Weka). A left out
    string or date value is read as missing.
    """
    n, m = cells.shape
    block = np.empty((len(sparse_rows), m), dtype=object)
    block[:, :] = _ABSENT
    for r, row in enumerate(sparse_rows):
        for k, v in row.items():
            block[r, k] = v
    cells[is_sparse, :] = block
    for k, c in enumerate(columns):
        col = cells[:, k]
        absent = np.fromiter((v is _ABSENT for v in col), dtype=bool, count=n)
        if absent.any():
            col[absent] = "0" if c.kind == "numeric" else (c.values[0] if c.kind == "nominal" else None)


def _shifted(exc: DataError, line: int | None) -> DataError:
    return DataError(exc.what, exc.source, line)


# A character that makes an unquoted value something other than itself to liac-arff
# (whitespace inside it, a quote, a brace): such a row is left to liac-arff.
_RE_NOT_BARE = re.compile(r"[\s'\"{}]")


def _plain_cells(rows: list[str], m: int) -> list[list] | None:
    """The cells of dense rows of ``m`` plain values each, as liac-arff reads them, or None.

    A plain value is empty or ``?`` (missing), bare (no whitespace, quote or brace),
    or quoted with ``'`` or ``"`` around text that holds no quote; values are
    separated by commas, with any whitespace around them; no row holds a backslash
    or a brace. liac-arff reads such rows through a regular expression, a few
    microseconds a value (most of reading a small file, issue 30); splitting
    them gives the same cells. None when a row is not plain (an escape, a quoted
    comma, a sparse row, a wrong number of values): the caller then lets
    liac-arff read them all, with its messages.
    """
    cells = []
    known: dict[str, object] = {}  # piece -> its cell (nominal values repeat row after row)
    for raw in rows:
        s = raw.strip()
        if not s or s[0] == "%" or "\\" in s or "{" in s or "}" in s:
            return None  # (liac-arff skips a blank or comment line)
        pieces = s.split(",")
        if len(pieces) != m:
            return None
        row = [known[p] if p in known else known.setdefault(p, _plain_cell(p)) for p in pieces]
        if _NOT_PLAIN_CELL in row:
            return None
        cells.append(row)
    return cells


_NOT_PLAIN_CELL = object()


def _plain_cell(piece: str):
    """The cell of one piece of a row between commas (see :func:`_plain_cells`)."""
    v = piece.strip()
    if not v or v == "?":
        return None
    if v[0] == "'" or v[0] == '"':
        inner = v[1:-1]
        if len(v) < 2 or v[-1] != v[0] or "'" in inner or '"' in inner:
            return _NOT_PLAIN_CELL
        return inner  # a quoted ? is the text "?", as for liac-arff
    return _NOT_PLAIN_CELL if _RE_NOT_BARE.search(v) else v


#: An instance weight after a row's values, as Weka writes it: ``..., {0.5}`` (dense) or
#: ``{...}, {0.5}`` (sparse).
_RE_WEIGHT = re.compile(r"^(?P<row>.*?)\s*,\s*\{(?P<weight>[^{}]*)\}\s*$")


def _split_weights(rows: list[str], row_lines: list[int], src: str
                   ) -> tuple[list[str], np.ndarray | None]:
    """The rows without their instance weights, and the weights (None when no row has one;
    else 1 for a row without one).

    Weka's ARFF reader takes a weight in braces after the last value of a row, dense or
    sparse (``weka.core.converters.ArffLoader``, instance weights); ours reads it as a
    number, finite and >= 0.
    """
    weights = None
    out = rows
    for i, raw in enumerate(rows):
        if "{" not in raw:
            continue
        s = raw.strip()
        if s[0] == "{" and s.count("{") == 1:
            continue  # a sparse row without a weight
        match = _RE_WEIGHT.match(s)
        if match is None:
            continue  # left to the row's own reading, which says what is wrong
        text = match.group("weight").strip()
        try:
            weight = float(text)
        except ValueError:
            weight = float("nan")
        if not (np.isfinite(weight) and weight >= 0):
            raise DataError(f"instance weight {quote_input(text)} is not a finite number >= 0",
                            src, row_lines[i])
        if weights is None:
            weights, out = np.ones(len(rows)), list(rows)
        weights[i] = weight
        out[i] = match.group("row")
    return out, weights


def parse_arff_rows(rows: list[str], row_lines: list[int], relation: str, columns: list[Column],
                    src: str) -> Table:
    """Read some of an ARFF file's data lines into a table of cells.

    For reading a file in chunks: the header is read once by
    :func:`read_arff_header`, then each chunk of data lines by this function.

    Parameters
    ----------
    rows : list of str
        Data lines, dense or sparse, none blank or a ``%`` comment; at least one.
    row_lines : list of int
        1-based line of each row in the file, for messages.
    relation : str
        The ``@relation`` name.
    columns : list of Column
        The header's columns.
    src : str
        The input as shown in messages.

    Returns
    -------
    Table
        One column per attribute as declared; one row per data line, each
        cell a ``str`` or None for ``?``. In a sparse row (``{index value,
        ...}``) a left-out attribute is 0: ``"0"`` for a numeric attribute, the
        first declared value of a nominal one, missing for a string or date.
        ``lines`` is ``row_lines``; ``weights`` holds the rows' instance weights
        (``{w}`` after a row's values) when any row has one.

    Raises
    ------
    DataError
        A row that cannot be read, with its line in the file; a weight that is not a
        finite number >= 0.
    """
    rows, weights = _split_weights(rows, row_lines, src)
    n, m = len(rows), len(columns)
    head = ["@relation r", *(f"@attribute a{k} STRING" for k in range(m)), "@data"]

    def decode(body: list[str], sparse: bool) -> list:
        doc = head + body
        try:
            return _decode_rows(doc, doc, m, sparse, src)
        except DataError as exc:
            k = (exc.line or 0) - len(head) - 1
            raise _shifted(exc, row_lines[k] if 0 <= k < n else None) from None

    value_limit = VALUE_CHARS.limit()
    for t, line in zip(rows, row_lines):
        if len(t) > value_limit:
            _refuse_long_pieces(t, src, line)
    sparse_pos = [i for i, t in enumerate(rows) if t.lstrip()[0] == "{"]
    cells = np.empty((n, m), dtype=object)
    if not sparse_pos:
        plain = _plain_cells(rows, m)
        cells[:, :] = decode(rows, False) if plain is None else plain
    else:
        is_sparse = np.zeros(n, dtype=bool)
        is_sparse[sparse_pos] = True
        if len(sparse_pos) < n:
            cells[~is_sparse, :] = decode(["" if s else t for t, s in zip(rows, is_sparse)], False)
        _put_sparse(cells, is_sparse, decode([t if s else "" for t, s in zip(rows, is_sparse)], True),
                    columns)
    for i, t in enumerate(rows):
        if len(t) > value_limit:  # only a line this long can hold a value this long
            _check_values(cells[i], src, row_lines[i])
    return Table(relation, columns, cells, np.asarray(row_lines, dtype=np.int64), "arff",
                 weights=weights)


# --------------------------------------------------------------------------
# Writing ARFF
# --------------------------------------------------------------------------
_RE_NEEDS_QUOTES = re.compile(r"[\s,'\"%{}\\]|^\?$|^$")
_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _quote_value(value: str) -> str:
    """ARFF token for a nominal/string value (liac-arff reads it back unchanged)."""
    if not _RE_NEEDS_QUOTES.search(value):
        return value
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 32:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def _quote_name(name: str) -> str:
    """ARFF token for a relation or attribute name (read back by stripping quotes)."""
    if name and not re.search(r"[\s,'\"%{}]", name):
        return name
    if "\n" in name or "\r" in name or ("'" in name and '"' in name) or name.endswith(("'", '"')):
        raise InputError(f"name {name!r} cannot be written to ARFF")
    return f'"{name}"' if "'" in name else f"'{name}'"


def write_arff(stream: TextIO, relation: str, attributes: Sequence[Attribute],
               rows: Iterable[Sequence]) -> None:
    """Write rows as an ARFF file that :func:`load_dataset` reads back unchanged.

    Parameters
    ----------
    stream : text stream
        Where to write (opened by the caller; not closed).
    relation : str
        ``@relation`` name.
    attributes : sequence of Attribute
        Column declarations. Numeric attributes are written as ``numeric``,
        nominal ones with their values in order, string ones as ``string``.
    rows : iterable of sequences
        One value per attribute: a str for nominal/string attributes (a nominal
        value must be declared), an int or float for numeric ones; None (or a
        float NaN) for missing. Floats are written in Python's shortest
        round-trip form, so reading back gives the same float64.

    Raises
    ------
    ValueError
        A row of the wrong length, an undeclared nominal value, a non-number
        for a numeric attribute, a non-string for a nominal one, or a name
        that cannot be quoted.
    """
    attributes = tuple(attributes)
    if not attributes:
        raise InputError("write_arff needs at least one attribute")
    stream.write(f"@relation {_quote_name(relation)}\n\n")
    lookups: list[frozenset[str] | None] = []
    for a in attributes:
        if a.kind == "numeric":
            decl = "numeric"
            lookups.append(None)
        elif a.kind == "nominal":
            if not a.values:
                raise InputError(f"nominal attribute {a.name!r} has no values")
            decl = "{" + ",".join(_quote_value(v) for v in a.values) + "}"
            lookups.append(frozenset(a.values))
        else:
            decl = "string"
            lookups.append(None)
        stream.write(f"@attribute {_quote_name(a.name)} {decl}\n")
    stream.write("\n@data\n")
    m = len(attributes)
    for r, row in enumerate(rows):
        if len(row) != m:
            raise InputError(f"row {r}: {len(row)} values for {m} attributes")
        tokens = []
        for a, allowed, v in zip(attributes, lookups, row):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                tokens.append("?")
            elif a.kind == "numeric":
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                    raise InputError(f"row {r}: {v!r} is not a number for numeric attribute {a.name!r}")
                if isinstance(v, numbers.Integral):
                    tokens.append(str(int(v)))
                else:
                    f = float(v)
                    tokens.append("?" if math.isnan(f) else repr(f))
            else:
                if not isinstance(v, str):
                    raise InputError(f"row {r}: {v!r} is not a string for attribute {a.name!r}")
                if allowed is not None and v not in allowed:
                    raise InputError(f"row {r}: {v!r} is not a declared value of attribute {a.name!r}")
                tokens.append(_quote_value(v))
        stream.write(",".join(tokens) + "\n")
