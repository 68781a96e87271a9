"""Reading a large ARFF or CSV file in chunks of rows, against a training schema.

``ensemblekit predict`` must not hold a whole file in memory: it reads a chunk
of rows, conforms it to the model's schema, predicts it and writes its
predictions before it reads the next. This module is the reading half. It
uses the readers of :mod:`ensemblekit.readers` that
:func:`ensemblekit.data.load_dataset` uses for a whole file, so a chunk is read
exactly as the same rows would be in a whole file:

* the input is opened as :func:`ensemblekit.data.load_dataset` opens it (gzip
  found by its magic bytes, ``"-"`` for standard input) and decoded the same way
  (byte order marks, UTF-8, Latin-1 when the text is not UTF-8, ``\\r\\n`` and
  ``\\r`` read as line ends), block by block (:mod:`ensemblekit.readers.text`);
* an ARFF header is read by the same header parser, and each chunk of ``@data``
  lines is tokenised by liac-arff, dense and sparse rows alike
  (:mod:`ensemblekit.readers.arff`);
* a CSV chunk is split by the same CSV parser, after the delimiter is guessed
  from the first lines as it is for a whole file (:mod:`ensemblekit.readers.csv`);
* each chunk is conformed to the schema by the same checks
  (:func:`ensemblekit.readers.table.conform_to_schema`), and every error
  names the line of the file where it is (line numbers count from the top of
  the file, not of the chunk).

A file with more than one error may have a different one reported than the
whole-file reader reports, since a chunk is checked before later rows are read.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO

import numpy as np

from ensemblekit.data import input_format, starts_like_arff
from ensemblekit.dataset import DataError, Dataset, Schema
from ensemblekit.errors import InputError
from ensemblekit.readers import fast as _fast
from ensemblekit.readers.arff import arff_block_tables, parse_arff_rows, read_arff_header
from ensemblekit.readers.columns import type_requests
from ensemblekit.readers.csv import (
    MISSING_VALUES,
    check_fields,
    csv_records,
    parse_csv_records,
    stripped,
    widened,
    with_delimiter,
)
from ensemblekit.readers.table import Column, Table, conform_to_schema
from ensemblekit.readers.text import Lines, decoded_blocks, iter_lines, line_units, open_input

#: Rows per chunk read by :func:`iter_chunks`. Small chunks are the fastest: the
#: strings and row lists of a chunk of a few thousand rows stay in the processor's
#: caches while they are parsed and converted (on 1,000,000 rows x 10 columns, reading
#: takes 3.0 s with 2,000-row chunks, 7.8 s with 10,000 and 9.4 s with 20,000).
CHUNK_ROWS = 2000
#: Rows of the first chunk (at most ``chunk_rows``): small, so that the first
#: predictions reach a pipe at once.
FIRST_CHUNK_ROWS = 1000

# Allocations between two young-generation collections while chunks are read.
_GC_THRESHOLD = 10000
# Lines looked at to tell ARFF from CSV (as data.starts_like_arff does) and to guess the delimiter.
_SNIFF_LINES = 200

Notify = Callable[[str], None]


# --------------------------------------------------------------------------- chunks
def _arff_chunks(lines: Iterator[str], src: str, chunk_rows: int, fast_bytes: int | None = None
                 ) -> Iterator[Table]:
    """Tables of ``chunk_rows`` data rows each (the first of at most :data:`FIRST_CHUNK_ROWS`).

    Once ``fast_bytes`` characters of rows are read (default
    :data:`ensemblekit.readers.fast.FAST_BYTES`), the rest of a file is read a
    block of text at a time (:func:`ensemblekit.readers.arff.arff_block_tables`):
    a table per block of about 1 MiB, its plain rows parsed by the vectorised
    engine.
    """
    limit = min(chunk_rows, FIRST_CHUNK_ROWS)
    fast_bytes = _fast.FAST_BYTES if fast_bytes is None else fast_bytes
    header, relation, columns, data_index = read_arff_header(lines, src)
    lineno = data_index + 1
    rows: list[str] = []
    row_lines: list[int] = []
    seen = False
    read = 0
    for raw in itertools.chain(header[data_index + 1:], lines):
        lineno += 1
        s = raw.strip()
        if s and s[0] != "%":
            rows.append(raw)
            row_lines.append(lineno)
            read += len(raw)
            if len(rows) >= limit:
                yield parse_arff_rows(rows, row_lines, relation, columns, src)
                seen, limit = True, chunk_rows
                rows, row_lines = [], []
                if read >= fast_bytes and isinstance(lines, Lines):
                    yield from arff_block_tables(lines.rest(), lineno + 1, relation, columns, src)
                    return
    if rows:
        yield parse_arff_rows(rows, row_lines, relation, columns, src)
    elif not seen:
        raise DataError("no data rows after @data", src, data_index + 1)


def _csv_stream(lines: Iterator[str], src: str, relation: str, delimiter: str | None,
                chunk_rows: int, csv_options: dict, notify: Notify | None,
                fast_bytes: int | None = None) -> Iterator[Table]:
    """Tables of ``chunk_rows`` records each (the first of at most :data:`FIRST_CHUNK_ROWS`).

    One pass of :mod:`csv` over the lines splits the records (a quoted field may
    hold line ends) and checks the number of fields, with the whole file's
    message and line; :func:`ensemblekit.readers.csv.parse_csv_records` then reads
    each chunk of records. The first chunk decides the header (or its absence), the decimal mark and the
    notes as for a whole file; later chunks get the header record in front (when
    there is a header) and no notes.

    Once ``fast_bytes`` characters are read (default
    :data:`ensemblekit.readers.fast.FAST_BYTES`), a file with ``,`` or tab
    delimiters and no decimal comma is read a block of text at a time: a
    plain block (no quotes, no white space to strip, no blank line) is parsed
    by the vectorised engine, and from the first block that is not plain on,
    the rest is read as above.
    """
    lines, delimiter = with_delimiter(lines, src, delimiter, notify)  # as read_csv guesses it
    options = {k: v for k, v in csv_options.items()
               if k in ("decimal", "missing", "header", "types")}
    fast_bytes = _fast.FAST_BYTES if fast_bytes is None else fast_bytes
    can_switch = (isinstance(lines, Lines) and delimiter in (",", "\t")
                  and options.get("decimal") != ",")

    records: list[list[str]] = []
    record_lines: list[int] = []

    header_record: list[str] | None = None
    header_line = 0
    header_used: bool | None = None  # None until the first chunk is read
    index_used = False  # the first chunk left out a row index (its first field)
    columns: list = []

    def table(records: list[list[str]], record_lines: list[int]) -> Table:
        nonlocal header_used, index_used, columns
        chunk = stripped(records, delimiter)
        if header_used is None:
            out = parse_csv_records(chunk, list(record_lines), src, relation, delimiter,
                                   notify=notify, **options)
            header_used = int(out.lines[0]) != record_lines[0]
            index_used = len(out.columns) < len(chunk[0])
            columns = out.columns
            return out
        if header_used:
            head = [[f.strip() for f in header_record]]
            return parse_csv_records(head + chunk, [header_line, *record_lines], src, relation,
                                    delimiter, **{**options, "header": True, "index": index_used})
        return parse_csv_records(chunk, list(record_lines), src, relation, delimiter,
                                **{**options, "header": False})

    def unit_table(text: str, first: int) -> Table:  # a plain block, the ordinary way
        found = list(csv_records(text.split("\n"), delimiter, src, first))
        return table([f for f, _, _ in found], [line for _, line, _ in found])

    where = "the first row" if csv_options.get("header") is False else "the header"
    n_fields = 0
    limit = min(chunk_rows, FIRST_CHUNK_ROWS) + 1  # the first chunk may hold the header
    read = 0

    def chunks(text_lines: Iterator[str], first_line: int, switch: bool):
        """Tables of the records of the lines; with ``switch``, ``int`` (the next line)
        once the rest can go a block at a time."""
        nonlocal n_fields, header_line, header_record, limit, read
        for fields, lineno, last in csv_records(text_lines, delimiter, src, first_line):
            if not n_fields:
                check_fields(len(fields), src, lineno)
                n_fields, header_line, header_record = len(fields), lineno, fields
            elif len(records) == 1 and record_lines[0] == header_line:  # the second record
                header_record = records[0] = widened(header_record, len(fields),
                                                     csv_options.get("header"))
                n_fields = len(header_record)
            if len(fields) != n_fields:
                raise DataError(f"expected {n_fields} fields (as in {where} on line "
                                f"{header_line}), found {len(fields)}", src, lineno)
            records.append(fields)
            record_lines.append(lineno)
            read += len(fields) + sum(map(len, fields))
            if len(records) < limit:
                continue
            yield table(records, record_lines)
            limit = chunk_rows
            records.clear()
            record_lines.clear()
            if switch and read >= fast_bytes:
                yield last + 1
                return

    next_line = None
    for out in chunks(lines, 1, can_switch):
        if isinstance(out, int):
            next_line = out
        else:
            yield out
    if next_line is not None:
        units = line_units(lines.rest(), next_line)
        missing = options.get("missing", MISSING_VALUES)
        for text, first, n_lines in units:
            if not text:
                continue  # a blank line, which holds no record
            quick = _fast.fast_csv_table(
                text, np.arange(first, first + n_lines, dtype=np.int64), relation,
                [Column("", None, (), None)] * index_used + columns, delimiter, missing,
                lambda t=text, f=first: unit_table(t, f))
            if quick is not None:
                if index_used:  # the row index parsed, and left out (``slow`` leaves it out)
                    quick = Table(relation, columns, None, quick.lines, "csv",
                                  fast=quick.fast[1:], slow=quick.slow)
                yield quick
                continue
            rest = itertools.chain([text], ("\n" + u for u, _, _ in units))
            yield from chunks(iter_lines(rest), first, False)
            break
    if header_used is None:  # a file shorter than one chunk, or with no data rows
        if not records:
            raise DataError("the file is empty", src)
        yield table(records, record_lines)
    elif records:
        yield table(records, record_lines)


# --------------------------------------------------------------------------- public
def _open_text(source: Any, stdin: BinaryIO | None, notify: Notify | None):
    stream, src, suffix, name = open_input(source, stdin)
    return stream, src, suffix, name, iter_lines(decoded_blocks(stream, src, notify))


def iter_chunks(source: Any, schema: Schema, *, fmt: str | None = None, read_class: bool = True,
                chunk_rows: int | None = None, stdin: BinaryIO | None = None,
                notify: Notify | None = None, unknown: str = "error", copy: Sequence[str] = (),
                **csv_options) -> Iterator[Dataset]:
    """Read a data file in chunks of rows, each conformed to a training schema.

    Parameters
    ----------
    source : str or os.PathLike
        Path of an ARFF or CSV file (gzip-compressed or not), or ``"-"`` for
        standard input.
    schema : Schema
        Training schema each chunk is conformed to, as
        :func:`ensemblekit.data.load_dataset` does with ``schema=``.
    fmt : {"arff", "csv"}, optional
        As in :func:`ensemblekit.data.load_dataset` (by extension, else sniffed).
    read_class : bool, default True
        Read and check the class column when the file has it. False leaves it
        unread (``y`` is None): prediction does not use it, so unknown or
        missing class values, or no class column at all, change nothing.
    chunk_rows : int, optional
        Rows per chunk (default :data:`CHUNK_ROWS`); the first holds at most
        :data:`FIRST_CHUNK_ROWS` and the last may hold fewer.
    stdin : binary stream, optional
        Where ``"-"`` reads from (default ``sys.stdin.buffer``).
    notify : callable, optional
        Receives the reader's notes (encoding, decimal mark, header).
    unknown : {"error", "missing"}, default "error"
        A nominal value not seen in training is an error, or is read as
        missing, its rows given in each chunk's ``unseen``.
    copy : sequence of str, default ()
        Columns of the file also kept as text, in each chunk's ``texts``.
    **csv_options
        ``decimal``, ``missing_values``, ``header`` and ``date`` of
        :func:`ensemblekit.data.load_dataset`, for CSV input (the schema
        gives every other column its kind).

    Yields
    ------
    Dataset
        One per chunk, in file order, each with at least one row: ``X`` of
        shape (n_chunk, n_features), ``lines`` the file's line numbers.

    Raises
    ------
    DataError
        As :func:`ensemblekit.data.load_dataset` with ``schema``, with the
        file's line numbers; raised when the chunk that holds the fault is read
        (earlier chunks have been yielded by then).
    """
    if fmt not in (None, "arff", "csv"):
        raise InputError(f"fmt must be 'arff', 'csv' or None, not {fmt!r}")
    chunk_rows = CHUNK_ROWS if chunk_rows is None else int(chunk_rows)
    if chunk_rows < 1:
        raise InputError(f"chunk_rows must be at least 1, not {chunk_rows}")
    missing = csv_options.pop("missing_values", ())
    if isinstance(missing, str):
        missing = (missing,)
    if missing:
        csv_options["missing"] = MISSING_VALUES | frozenset(str(v).strip() for v in missing)
    csv_options["types"] = type_requests(date=csv_options.pop("date", ()))
    csv_options = {k: v for k, v in csv_options.items() if v is not None}

    stream, src, suffix, name, lines = _open_text(source, stdin, notify)
    # Reading makes and drops a list per row, chunk after chunk: with the default
    # thresholds the cyclic garbage collector runs every 700 of them and often walks
    # every object of the imported libraries, which cost a fifth of the reading time
    # of a large file. Rarer collections while the chunks are read (restored after).
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], _GC_THRESHOLD), thresholds[1], max(thresholds[2], 100))
    try:
        sniffed = list(itertools.islice(lines, _SNIFF_LINES))
        if not any(t.strip() for t in sniffed):
            sniffed += [t for t in lines if t.strip()][:1]
            if not any(t.strip() for t in sniffed):
                raise DataError("the input is empty", src)
        lines.unread(sniffed)
        delimiter = None
        if fmt is None:
            fmt, delimiter = input_format(suffix, lambda: starts_like_arff("\n".join(sniffed)))
        if fmt == "arff":
            tables = _arff_chunks(lines, src, chunk_rows)
        else:
            relation = name if suffix is not None else "stdin"
            tables = _csv_stream(lines, src, relation, delimiter, chunk_rows, csv_options, notify)
        for table in tables:
            ds = conform_to_schema(table, src, name if suffix is not None else table.relation, schema,
                                read_class=read_class, unknown=unknown, copy=copy)
            ds.format = fmt
            yield ds
    finally:
        gc.set_threshold(*thresholds)
        if source != "-":
            stream.close()
