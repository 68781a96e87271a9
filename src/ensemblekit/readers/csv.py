"""CSV text read into a table of cells: delimiter, header row, decimal mark, column kinds.

Comma separated values (RFC 4180); the delimiter is one of comma, semicolon or
TAB, found from the first line. The first row names the columns unless its
values fit the columns below (then the columns are att1..attN, as Weka's
CSVLoader names them). A column is numeric when every present value is a
number; in a ``;``-separated file, numbers written with a decimal comma
(``5,1``) count. The empty field, ``?``, ``NA``, ``N/A``, ``n/a``, ``NaN``,
``null``, ``None`` and ``-`` are missing.
"""

from __future__ import annotations

import csv
import itertools
import operator
import shlex
from collections import deque
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from ensemblekit.dataset import DataError, quote_input, quote_names
from ensemblekit.readers.bounds import ATTRIBUTES, VALUE_CHARS
from ensemblekit.readers.columns import TypeRequest, resolve_types
from ensemblekit.readers.table import Column, Table, _is_number, _to_float

__all__ = ["MISSING_VALUES", "ColumnScan", "CsvLayout", "CsvScan", "check_fields",
           "csv_error", "csv_records", "guess_delimiter", "parse_csv_records",
           "read_csv", "stripped", "widened", "with_delimiter"]

#: Cell values of a CSV file read as missing: the empty field, Weka's '?', and the
#: tokens spreadsheets, databases, R and pandas write (NA and NaN in any case; Excel's
#: #N/A, SQL's NULL and pandas' <NA>, as in the default ``na_values`` of pandas.read_csv).
MISSING_VALUES = frozenset(
    {"?", "", "N/A", "n/a", "null", "NULL", "None", "-", "#N/A", "#N/A N/A", "#NA", "<NA>"}
    | {a + b for a in "nN" for b in "aA"}
    | {a + b + c for a in "nN" for b in "aA" for c in "nN"}
)

# Names of a first column that may be a row index (pandas' to_csv() leaves it unnamed,
# and names it so when it reads such a file back).
_INDEX_NAMES = ("", "Unnamed: 0")

# A CSV column read as nominal although at least this share of its present values
# are numbers gets a note naming the first value that is not.
_MOSTLY_NUMERIC = 0.9


_DELIMITERS = (",", ";", "\t")


def _count_outside_quotes(line: str, ch: str) -> int:
    count, quoted = 0, False
    for c in line:
        if c == '"':
            quoted = not quoted
        elif c == ch and not quoted:
            count += 1
    return count


def guess_delimiter(header: str, following: list[str]) -> str:
    """Guess the delimiter of CSV text from its first line and a few lines after it.

    The delimiter is the one of comma, semicolon and TAB found most often
    outside double quotes in the first line. On a tie, the one found as often
    in the most following lines wins; a full tie between comma and semicolon
    means semicolons with decimal commas.

    Parameters
    ----------
    header : str
        The first line that is not blank.
    following : list of str
        A few lines after it that are not blank.

    Returns
    -------
    {",", ";", "\\t", " "}
        The delimiter. When the first line holds none of comma, semicolon and
        TAB: a space when runs of spaces split it into two fields or more and
        split every following line into as many (or one more: a row index
        without a name, as ``DataFrame.to_string()`` and R's ``write.table``
        write it); else comma (one column).
    """
    counts = {d: _count_outside_quotes(header, d) for d in _DELIMITERS}
    best = max(counts.values())
    if best == 0:
        return " " if _space_separated(header, following) else ","
    tied = [d for d in _DELIMITERS if counts[d] == best]
    if len(tied) == 1:
        return tied[0]
    # Tie on the header: prefer the delimiter that splits the next rows alike.
    # A full tie between comma and semicolon is a ';'-separated file with decimal commas.
    agree = {d: sum(_count_outside_quotes(t, d) == best for t in following) for d in tied}
    return max(tied, key=lambda d: (agree[d], d == ";"))


def _space_fields(line: str) -> int:
    """Fields of a line split on runs of spaces (double quotes kept together)."""
    return len(next(csv.reader([line.strip()], delimiter=" ", skipinitialspace=True), []))


def _space_separated(header: str, following: list[str]) -> bool:
    """Whether runs of spaces separate the columns (see :func:`guess_delimiter`)."""
    n = _space_fields(header)
    if n < 2 or not following:
        return False
    counts = {_space_fields(t) for t in following}
    return len(counts) == 1 and counts <= {n, n + 1}


def widened(top: list[str], n_next: int, header: bool | None) -> list[str]:
    """The first record, with an empty name in front when it may be a header and the
    record after it has one field more (a header over unnamed row names)."""
    if header is not False and n_next == len(top) + 1:
        return ["", *top]
    return top


def check_fields(n_fields: int, src: str, line: int) -> None:
    """Refuse a first record of more fields than :data:`ATTRIBUTES` allows."""
    if n_fields > ATTRIBUTES.limit():
        raise DataError(ATTRIBUTES.exceeded(f"the first row has {n_fields:,} fields,"), src, line)


def csv_error(exc: csv.Error, src: str, line: int) -> DataError:
    """The :class:`DataError` for an error of :mod:`csv` on a line (a field past the bound
    on a value, or broken quoting)."""
    if "field larger than field limit" in str(exc):
        return DataError(VALUE_CHARS.exceeded(f"a value on line {line} holds"), src, line or None)
    return DataError(f"cannot read the CSV text ({exc})", src, line or None)


def stripped(records: list[list[str]], delimiter: str) -> list[list[str]]:
    """The records with each field stripped of surrounding white space (as every CSV
    reader here strips them); records without any (a machine-written file) are returned as they are,
    without a pass over every field."""
    spaces = " \r\x0b\x0c" + ("" if delimiter == "\t" else "\t")
    text = "\x00".join(itertools.chain.from_iterable(records))
    if text.isascii() and not any(c in text for c in spaces):
        return records
    return [[f.strip() for f in fields] for fields in records]


def with_delimiter(lines: Iterator[str], src: str, delimiter: str | None,
                   notify: Callable[[str], None] | None = None) -> tuple[Iterator[str], str]:
    """The lines again and the delimiter, guessed from the first lines
    (:func:`guess_delimiter`) when it is not given; a guess of spaces is said to
    ``notify``, since a file whose one column holds spaces would look the same."""
    lookahead = list(itertools.islice(lines, 41))
    if delimiter is None:
        first = next((i for i, t in enumerate(lookahead) if t.strip()), None)
        if first is None:
            raise DataError("the file is empty", src)
        following = [t for t in lookahead[first + 1: first + 40] if t.strip()][:5]
        delimiter = guess_delimiter(lookahead[first], following)
        if delimiter == " " and notify is not None:
            notify(f"note: {src}: line {first + 1} holds no comma, semicolon or TAB, so the "
                   "columns are read as separated by runs of spaces")
    if hasattr(lines, "unread"):  # a Lines: it stays one, its rest readable in blocks
        lines.unread(lookahead)
        return lines, delimiter
    return itertools.chain(lookahead, lines), delimiter


def csv_records(text_lines: Iterator[str], delimiter: str, src: str, first_line: int = 1
                ) -> Iterator[tuple[list[str], int, int]]:
    """``(fields, first line, last line)`` of each record that is not blank, read by
    :mod:`csv` from lines (without their ends; a quoted field may span lines) that start at
    ``first_line``, with the field size limit set to :data:`VALUE_CHARS` (restored after)."""
    if delimiter == " ":  # runs of spaces: none before the first field or after the last
        ended = (t.strip(" ") + "\n" for t in text_lines)
    else:
        ended = map(operator.add, text_lines, itertools.repeat("\n"))
    reader = csv.reader(ended, delimiter=delimiter, skipinitialspace=True)
    offset = first_line - 1
    start = 1
    old = csv.field_size_limit(VALUE_CHARS.limit())
    try:
        for fields in reader:
            lineno, start = start, reader.line_num + 1
            if fields and (len(fields) > 1 or fields[0].strip()):
                yield fields, lineno + offset, start - 1 + offset
    except csv.Error as exc:
        raise csv_error(exc, src, reader.line_num + offset) from None
    finally:
        csv.field_size_limit(old)


def read_csv(lines: Iterator[str], src: str, relation: str, delimiter: str | None, *,
             decimal: str | None = None, missing: frozenset[str] = MISSING_VALUES,
             header: bool | None = None, notify: Callable[[str], None] | None = None,
             chunk_rows: int = 2000, types: Sequence[TypeRequest] = ()
             ) -> tuple[CsvLayout, int, Iterator[Table]]:
    """Read CSV text in two passes, holding only the text between them, not its cells.

    The first pass splits the records, checks their number of fields and
    counts what decides the columns (:class:`CsvScan`); the second splits the
    text again, chunk by chunk, into tables whose cells are those of one table
    of every row (the columns are decided once, from all of them). Each chunk's
    text is let go once its table is made.

    Parameters
    ----------
    lines : iterator of str
        The lines of the text, without their ends.
    src : str
        The input as shown in messages.
    relation : str
        Name for the tables (the file stem, or ``"stdin"``).
    delimiter : str or None
        The field delimiter; None to guess it (:func:`guess_delimiter`).
    decimal : {".", ","} or None
        The decimal mark. None: a ``;``-separated file's columns whose numbers
        use ``,`` as the decimal mark are read so, said in a note. Numbers read
        with a decimal comma are stored with a point, so that later steps
        parse them.
    missing : frozenset of str, default=MISSING_VALUES
        Cell values read as missing.
    header : bool or None
        True: the first row names the columns. False: it is data, and the
        columns are named att1..attN as Weka's CSVLoader names them. None:
        data when its values fit the columns below, said in a note.
    notify : callable or None
        Receives the notes (one line each). The note on a mostly numeric
        column read as nominal is kept on the column instead
        (:attr:`Column.note`), to be said only if the column is kept.
    chunk_rows : int, default=2000
        Records per table.
    types : sequence of TypeRequest
        Columns given a kind (``--nominal`` ...), instead of the guessed one
        (:mod:`ensemblekit.readers.columns`).

    Returns
    -------
    layout : CsvLayout
        The columns and what was decided about them (the notes are given).
    n_rows : int
        Data rows of the file.
    tables : iterator of Table
        The data rows, ``chunk_rows`` at a time, in file order.

    Raises
    ------
    DataError
        The text is empty, a record has another number of fields than the
        first, the quoting is broken, the header has an empty or repeated
        name or (when guessed) holds only numbers, or there are no data rows
        (with the line when it is known); a first row of more fields than
        :data:`ATTRIBUTES`, or a value longer than :data:`VALUE_CHARS`; a
        column of ``types`` that the file does not have, or given two kinds.

    Notes
    -----
    A header of one field fewer than the rows names every column but the first
    (R's ``write.table`` and pandas' ``DataFrame.to_string()`` write row names
    so). A first column without a name (empty, or pandas' ``Unnamed: 0``) that
    holds 0..n-1 or 1..n, row by row, is a row index: it is left out, with a
    note.
    """
    lines, delimiter = with_delimiter(lines, src, delimiter, notify)
    texts: deque[tuple[str, int]] = deque()  # (text of some lines, line of the first)
    held: list[str] = []  # lines read and not yet in texts, from line held_from
    held_from = 1

    def batches() -> Iterator[list[str]]:
        while batch := list(itertools.islice(lines, 4096)):
            held.extend(batch)
            yield batch

    def hold_text(last: int) -> None:
        """Move the held lines up to line ``last`` into ``texts``."""
        nonlocal held_from
        k = last - held_from + 1
        texts.append(("\n".join(held[:k]), held_from))
        del held[:k]
        held_from = last + 1

    where = "the first row" if header is False else "the header"
    scan: CsvScan | None = None
    top: tuple[list[str], int] | None = None  # the first record, until the second is read
    n_fields = 0
    chunk: list[list[str]] = []
    chunk_lines: list[int] = []
    records = csv_records(itertools.chain.from_iterable(batches()), delimiter, src)

    def first_scan(n_next: int) -> CsvScan:
        fields, lineno = top
        head = widened(stripped([fields], delimiter)[0], n_next, header)
        return CsvScan(head, lineno, src, delimiter, decimal=decimal, missing=missing)

    for fields, lineno, last in records:
        if top is None:
            check_fields(len(fields), src, lineno)
            n_fields = len(fields)
            top = (fields, lineno)
            continue
        if scan is None:
            scan = first_scan(len(fields))
            n_fields = len(scan.top)
        if len(fields) != n_fields:
            raise DataError(f"expected {n_fields} fields (as in {where} on line {scan.top_line}), "
                            f"found {len(fields)}", src, lineno)
        chunk.append(fields)
        chunk_lines.append(lineno)
        if len(chunk) >= chunk_rows:
            scan.add(stripped(chunk, delimiter), chunk_lines)
            hold_text(last)  # the csv reader never reads past the record it returns
            chunk, chunk_lines = [], []
    if top is None:
        raise DataError("the file is empty", src)
    if scan is None:
        scan = first_scan(n_fields)
    scan.add(stripped(chunk, delimiter), chunk_lines)
    hold_text(held_from + len(held) - 1)
    layout = scan.decide(header, notify, types)
    n_rows = scan.n_rest + layout.top_is_data

    def tables() -> Iterator[Table]:
        skip = not layout.top_is_data  # the header record
        while texts:
            text, first_line = texts.popleft()
            records, record_lines = [], []
            for fields, lineno, _ in csv_records(iter(text.split("\n")), delimiter, src,
                                                 first_line):
                if skip:
                    skip = False
                    continue
                records.append(fields)
                record_lines.append(lineno)
            del text
            if records:
                yield layout.table(relation, stripped(records, delimiter), record_lines)
    return layout, n_rows, tables()


def parse_csv_records(records: list[list[str]], record_lines: list[int], src: str, relation: str,
                      delimiter: str, *, decimal: str | None = None,
                      missing: frozenset[str] = MISSING_VALUES, header: bool | None = None,
                      notify: Callable[[str], None] | None = None,
                      types: Sequence[TypeRequest] = (), index: bool | None = None) -> Table:
    """Named columns of str/None cells from CSV records already split into stripped fields.

    The reader of one chunk (``predict``'s streaming path) calls this with the
    records of that chunk.

    Parameters
    ----------
    records : list of list of str
        At least one record, all of one length, each field stripped of
        surrounding white space.
    record_lines : list of int
        1-based line of each record in the file.
    src, relation, decimal, missing, header, notify, types
        As in :func:`read_csv`.
    index : bool or None
        Whether an unnamed first column is a row index to leave out; None to
        tell from its values (0..n-1 or 1..n), with a note. Later chunks of a
        file are given the first chunk's answer.
    delimiter : str
        The delimiter the records were split on (it decides whether decimal
        commas are looked for, and is named in messages).

    Returns
    -------
    Table
        One column per field (but a row index left out), kinds not set (None)
        but for string and date columns; one row per record.

    Raises
    ------
    DataError
        As :func:`read_csv`, for what is decided from the records.
    """
    scan = CsvScan(records[0], record_lines[0], src, delimiter, decimal=decimal, missing=missing)
    scan.add(records[1:], record_lines[1:])
    layout = scan.decide(header, notify, types, index)
    rows = records if layout.top_is_data else records[1:]
    lines = record_lines if layout.top_is_data else record_lines[1:]
    return layout.table(relation, rows, lines)


class ColumnScan:
    """What the CSV reader decides about one column, gathered over its rows chunk by chunk.

    Counts are kept for both readings of a number (with ``.`` and, where it
    may be, with ``,`` as the decimal mark), so that the column's kind, its
    decimal mark and the note on a mostly numeric column come out the same
    however the rows are cut into chunks.
    """

    def __init__(self) -> None:
        self.rows = 0
        self.present = 0
        self.all_dot = True  # every present value reads as a number with "."
        self.dot_numbers = 0
        self.dot_bad = 0
        self.dot_first_bad: tuple[str, int] | None = None  # (value, line)
        self.comma_numbers = 0
        self.comma_first_bad: tuple[str, int] | None = None
        self.comma_example: tuple[str, int] | None = None  # first present value holding ","
        self.either_numbers = 0  # present values that are numbers with either mark allowed
        self.holds_top = False  # the first record's value occurs among these rows

    def add(self, col: np.ndarray, lines: np.ndarray, rule: tuple[bool, bool],
            top: str | None = None) -> None:
        """Count one chunk of the column (str or None cells) with the file lines of its rows.

        ``rule`` is (a "." number counts, a "," number counts); ``top`` is the first
        record's value, looked for among the chunk's values.
        """
        dot_ok, comma_ok = rule
        self.rows += len(col)
        if top is not None and not self.holds_top:
            self.holds_top = top in col.tolist()
        mask = np.not_equal(col, None)  # one comparison a cell, in C
        values = col[mask]
        n = len(values)
        self.present += n
        if not n:
            return
        dot_all = _to_float(values) is not None
        kinds: dict[str, tuple[bool, bool]] | None = None
        if not dot_all or comma_ok:
            kinds = {v: (_is_number(v), _comma_number(v)) for v in set(values.tolist())}
        if dot_all:
            self.dot_numbers += n
        else:
            self.all_dot = False
            dot = np.fromiter((kinds[v][0] for v in values), dtype=bool, count=n)
            good = int(dot.sum())
            self.dot_numbers += good
            self.dot_bad += n - good
            if self.dot_first_bad is None:
                i = int(np.argmin(dot))
                self.dot_first_bad = (values[i], int(lines[mask][i]))
        if comma_ok:
            comma = np.fromiter((kinds[v][1] for v in values), dtype=bool, count=n)
            good = int(comma.sum())
            self.comma_numbers += good
            if good < n and self.comma_first_bad is None:
                i = int(np.argmin(comma))
                self.comma_first_bad = (values[i], int(lines[mask][i]))
            if self.comma_example is None:
                i = next((i for i, v in enumerate(values) if "," in v), None)
                if i is not None:
                    self.comma_example = (values[i], int(lines[mask][i]))
            either = comma | (np.fromiter((kinds[v][0] for v in values), dtype=bool, count=n)
                              if dot_ok else False)
            self.either_numbers += int(either.sum())
        elif dot_ok:
            self.either_numbers += n if dot_all else int(dot.sum())

    def then(self, rest: ColumnScan) -> ColumnScan:
        """The scan of these rows followed by ``rest``'s."""
        out = ColumnScan()
        for name in ("rows", "present", "dot_numbers", "dot_bad", "comma_numbers",
                     "either_numbers"):
            setattr(out, name, getattr(self, name) + getattr(rest, name))
        out.all_dot = self.all_dot and rest.all_dot
        for name in ("dot_first_bad", "comma_first_bad", "comma_example"):
            mine = getattr(self, name)
            setattr(out, name, mine if mine is not None else getattr(rest, name))
        return out

    def verdict(self, decimal: str | None, delimiter: str
                ) -> tuple[str, bool, int, tuple[str, int] | None]:
        """The column's kind over the rows scanned.

        Returns (kind, whether its numbers are read with a decimal comma, count of
        present values that are numbers, (value, line) of the first that is not or None).
        """
        if decimal != "," and self.all_dot:
            return "numeric", False, 0, None
        comma: tuple[int, tuple[str, int] | None] = (-1, None)
        if decimal == "," or (decimal is None and delimiter == ";"):
            if self.comma_first_bad is None:
                changed = decimal == "," or self.comma_example is not None
                return "numeric", changed, self.comma_numbers, None
            if decimal == ",":
                return "nominal", False, self.comma_numbers, self.comma_first_bad
            comma = (self.comma_numbers, self.comma_first_bad)
        # past this many text cells the column cannot be mostly numeric
        hopeless = self.rows - _MOSTLY_NUMERIC * self.rows + 1e-9
        numbers = 0 if self.dot_bad > hopeless else self.dot_numbers
        first_bad = self.dot_first_bad
        if comma[0] > numbers:  # ';'-separated: the column is closer to decimal-comma numbers
            numbers, first_bad = comma
        return "nominal", False, numbers, first_bad


class CsvScan:
    """The first pass of the CSV reader: the first record, then the rest in chunks.

    :meth:`decide` then says, as :func:`parse_csv_records` does for records
    held at once, whether the first record names the columns, each column's
    kind and decimal mark, and the notes.

    Parameters
    ----------
    top : list of str
        The first record, its fields stripped.
    top_line : int
        Its line in the file.
    src, delimiter, decimal, missing
        As in :func:`read_csv`.
    """

    def __init__(self, top: list[str], top_line: int, src: str, delimiter: str, *,
                 decimal: str | None = None, missing: frozenset[str] = MISSING_VALUES):
        self.top, self.top_line, self.src = top, top_line, src
        self.delimiter, self.decimal, self.missing = delimiter, decimal, missing
        self.rule = (decimal != ",", decimal == "," or (decimal is None and delimiter == ";"))
        self.rest = [ColumnScan() for _ in top]
        self.n_rest = 0
        # where the rows of an unnamed first column may count from (a row index)
        self.index_from = {0, 1} if top and top[0] in _INDEX_NAMES else set()

    def add(self, records: list[list[str]], record_lines: list[int]) -> None:
        """Count a chunk of the records after the first (their fields stripped)."""
        if not records:
            return
        if self.index_from:
            col = [r[0] for r in records]
            start, n = self.n_rest, len(records)
            self.index_from = {f for f in self.index_from
                               if col == list(map(str, range(f + start, f + start + n)))}
        cells = _csv_cells(records, self.missing)
        lines = np.asarray(record_lines, dtype=np.int64)
        for k, scan in enumerate(self.rest):
            scan.add(cells[:, k], lines, self.rule, self.top[k])
        self.n_rest += len(records)

    def _top_scans(self) -> list[ColumnScan]:
        cells = _csv_cells([self.top], self.missing)
        lines = np.asarray([self.top_line], dtype=np.int64)
        out = []
        for k in range(len(self.top)):
            scan = ColumnScan()
            scan.add(cells[:, k], lines, self.rule)
            out.append(scan)
        return out

    def decide(self, header: bool | None, notify: Callable[[str], None] | None,
               types: Sequence[TypeRequest] = (), index: bool | None = None) -> CsvLayout:
        """Decide the header, a row index to leave out, the columns' kinds and decimal
        marks (``types`` overriding the guess), and give the notes.

        Raises
        ------
        DataError
            The header holds only numbers (when guessed), has an empty or
            repeated name, or no data rows follow it; ``types`` names a column
            the file does not have, or gives one two kinds.
        """
        say = notify if notify is not None else (lambda message: None)
        src, top, m = self.src, self.top, len(self.top)
        scans = self.rest
        auto = header is None
        if auto and self.n_rest:
            kinds = [s.verdict(self.decimal, self.delimiter)[0] for s in scans]
            header = not self._fits_below(kinds)
            if not header:
                say(f"note: {src}: the first row (line {self.top_line}) holds data, not column "
                    f"names (its values fit the columns below), so the columns are named "
                    f"att1..att{m}; --header reads it as names")
        drop = 0
        if header is not False and top[0] in _INDEX_NAMES:
            drop = int(bool(self.index_from) if index is None else index)
        if header is not False:
            shown = {",": "comma", ";": "semicolon", "\t": "TAB", " ": "space"}[self.delimiter]
            if auto and all(_is_number(h) for h in top):
                raise DataError(
                    f"no header row: the first row holds only numbers "
                    f"({quote_input(self.delimiter.join(top))}); add a first row of column names "
                    f"({shown}-separated), or give --no-header", src, self.top_line)
            seen: dict[str, int] = {}
            for k, h in enumerate(top):
                if k < drop:
                    continue
                if not h:
                    raise DataError(f"column {k + 1} of the header has no name", src, self.top_line)
                if h in seen:
                    what = (f"column name {h!r} appears twice in the header (columns "
                            f"{seen[h] + 1} and {k + 1})")
                    raise DataError(what, src, self.top_line)
                seen[h] = k
            names = list(top[drop:])
            if not self.n_rest:
                raise DataError("no data rows after the header", src, self.top_line)
            if drop and index is None:
                say(f"note: {src}: the first column ({repr(top[0]) if top[0] else 'unnamed'}) "
                    f"numbers the rows from {min(self.index_from)}: a row index, as pandas' "
                    "to_csv() and R's write.table() write one, so it is left out")
        else:
            names = [f"att{k + 1}" for k in range(m)]
            scans = [t.then(r) for t, r in zip(self._top_scans(), scans)]
        scans = scans[drop:]
        given = resolve_types(types, names, src) if types else [None] * len(names)
        columns = [Column(h, None, (), None) for h in names]
        changed: list[bool] = []
        kinds: list[str] = []
        comma_columns: list[str] = []
        comma_example: tuple[str, int] | None = None
        for c, scan, asked in zip(columns, scans, given):
            kind, comma, numbers, first_bad = scan.verdict(self.decimal, self.delimiter)
            if asked is not None:
                comma = comma and kind == "numeric" and asked.kind == "numeric"
                kind, first_bad, c.given = asked.kind, None, True
                if kind in ("string", "date"):
                    c.kind, c.date_format = kind, asked.date_format
            kinds.append(kind)
            changed.append(comma)
            if comma and self.decimal is None:
                comma_columns.append(c.name)
                if comma_example is None:
                    comma_example = scan.comma_example
            if kind == "nominal" and first_bad is not None:
                if numbers >= _MOSTLY_NUMERIC * scan.present:
                    c.note = _mostly_numeric_note(src, c.name, numbers, scan.present, *first_bad)
        if comma_example is not None:
            value, line = comma_example
            say(f"note: {src}: read ',' as the decimal mark in {quote_names(comma_columns, 3)} "
                f"(';'-separated, with numbers such as {quote_input(value)} on line {line}); "
                "--decimal . reads them otherwise")
        return CsvLayout(columns, header is False, changed, kinds, self.missing, drop,
                         [c.name for c, asked in zip(columns, given) if asked is not None])

    def _fits_below(self, kinds: list[str]) -> bool:
        """Whether the first record looks like data rather than column names.

        It does when at least one of its cells is a number in a numeric column
        and every cell fits its column: a number in a numeric column, a value
        that occurs below (or a number, in a mostly numeric column) in a nominal
        one, or a missing-value token.
        """
        some_number = False
        for value, kind, scan in zip(self.top, kinds, self.rest):
            if value in self.missing:
                continue
            if kind == "numeric":
                if not _csv_number(value, self.decimal, self.delimiter):
                    return False
                some_number = True
                continue
            if scan.holds_top:
                continue
            if not (_csv_number(value, self.decimal, self.delimiter) and scan.present
                    and scan.either_numbers >= _MOSTLY_NUMERIC * scan.present):
                return False
        return some_number


class CsvLayout:
    """What the first pass decided: the columns, whether the first record is data, the
    columns read with a decimal comma, and (for a whole file) the kind of each column.

    Attributes
    ----------
    columns : list of Column
        Named from the header, or att1..attN; kinds not set (None), notes set.
    top_is_data : bool
        The first record is a data row (no header).
    comma : list of bool
        Per column: its numbers are read with ``,`` as the decimal mark.
    kinds : list of {"numeric", "nominal", "string", "date"}
        Per column: the kind given (``types``), else numeric when every
        present value is a number (after the decimal comma), else nominal.
    skip : int
        Fields left out at the front of each record (1 for a row index).
    typed : list of str
        The columns whose kind was given, not guessed.
    """

    def __init__(self, columns: list[Column], top_is_data: bool, comma: list[bool],
                 kinds: list[str], missing: frozenset[str], skip: int = 0,
                 typed: Sequence[str] = ()):
        self.columns, self.top_is_data = columns, top_is_data
        self.comma, self.kinds, self.missing = comma, kinds, missing
        self.skip, self.typed = skip, list(typed)

    def table(self, relation: str, records: list[list[str]], record_lines: list[int]) -> Table:
        """The table of some data records (fields stripped), numbers with a decimal comma
        written with a point so that later steps parse them."""
        cells = _csv_cells(records, self.missing)
        if self.skip:
            cells = cells[:, self.skip:]
        for k, comma in enumerate(self.comma):
            if comma:
                col = cells[:, k]
                for i, v in enumerate(col):
                    if v is not None:
                        col[i] = _comma_to_point(v)
        return Table(relation, self.columns, cells, np.asarray(record_lines, dtype=np.int64), "csv")


def _csv_cells(records: list[list[str]], missing: frozenset[str]) -> np.ndarray:
    """Rows of fields -> (n, m) object array of str, None where a token means missing."""
    cells = np.empty((len(records), len(records[0]) if records else 0), dtype=object)
    cells[:, :] = records
    for k in range(cells.shape[1]):
        col = cells[:, k]
        if missing.isdisjoint(col.tolist()):  # one pass in C; most columns have no token
            continue
        miss = np.fromiter((v in missing for v in col), dtype=bool, count=len(col))
        col[miss] = None
    return cells


def _comma_to_point(value: str) -> str | None:
    """``'5,1'`` -> ``'5.1'``; None when the text cannot be a decimal-comma number."""
    if "." in value or value.count(",") > 1:
        return None
    return value.replace(",", ".")


def _comma_number(value: str) -> bool:
    """Whether a cell reads as a number with ``,`` as the decimal mark."""
    point = _comma_to_point(value)
    return point is not None and _is_number(point)


def _csv_number(value: str, decimal: str | None, delimiter: str) -> bool:
    """Whether a cell reads as a number under the decimal rule (None: either mark)."""
    if decimal != "," and _is_number(value):
        return True
    if decimal == "," or (decimal is None and delimiter == ";"):
        return _comma_number(value)
    return False


def _mostly_numeric_note(src: str, name: str, numbers: int, present: int, value: str,
                         line: int) -> str:
    """The note on a column read as nominal because of a few values that are not numbers."""
    if "," in value and _is_number(value.replace(",", "")):
        fix = "a number with a thousands separator, which is not read as a number; write it without"
    else:
        fix = f"if it means missing, add --missing-values {shlex.quote(value)}"
    return (f"note: {src}: column {name!r} is read as nominal, although {numbers} of its {present} "
            f"values are numbers: line {line} holds {quote_input(value)}; {fix}")
