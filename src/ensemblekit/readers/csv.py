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
import io
import shlex
from collections.abc import Callable

import numpy as np

from ensemblekit.dataset import DataError, quote_input, quote_names
from ensemblekit.readers.table import Column, Table, _is_number, _to_float

__all__ = ["MISSING_VALUES", "guess_delimiter", "parse_csv", "parse_csv_records"]

#: Cell values of a CSV file read as missing: the empty field, Weka's '?', and the
#: tokens spreadsheets, R and pandas write (NA and NaN in any case).
MISSING_VALUES = frozenset(
    {"?", "", "N/A", "n/a", "null", "None", "-"}
    | {a + b for a in "nN" for b in "aA"}
    | {a + b + c for a in "nN" for b in "aA" for c in "nN"}
)

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
    {",", ";", "\\t"}
        The delimiter; comma when the first line holds none of them.
    """
    counts = {d: _count_outside_quotes(header, d) for d in _DELIMITERS}
    best = max(counts.values())
    if best == 0:
        return ","
    tied = [d for d in _DELIMITERS if counts[d] == best]
    if len(tied) == 1:
        return tied[0]
    # Tie on the header: prefer the delimiter that splits the next rows alike.
    # A full tie between comma and semicolon is a ';'-separated file with decimal commas.
    agree = {d: sum(_count_outside_quotes(t, d) == best for t in following) for d in tied}
    return max(tied, key=lambda d: (agree[d], d == ";"))


def parse_csv(text: str, src: str, relation: str, delimiter: str | None, *,
              decimal: str | None = None, missing: frozenset[str] = MISSING_VALUES,
              header: bool | None = None, notify: Callable[[str], None] | None = None) -> Table:
    """Split CSV text into named columns of str/None cells (None = missing).

    Parameters
    ----------
    text : str
        The file's text, with ``\\n`` line ends.
    src : str
        The input as shown in messages.
    relation : str
        Name for the table (the file stem, or ``"stdin"``).
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

    Returns
    -------
    Table
        One column per field, kinds not set (None); one row per record.

    Raises
    ------
    DataError
        The text is empty, a record has another number of fields than the
        first, the quoting is broken, the header has an empty or repeated
        name or (when guessed) holds only numbers, or there are no data rows;
        with the line when it is known.
    """
    lines = text.split("\n")
    first = next((i for i, t in enumerate(lines) if t.strip()), None)
    if first is None:
        raise DataError("the file is empty", src)
    if delimiter is None:
        following = [t for t in lines[first + 1 : first + 40] if t.strip()][:5]
        delimiter = guess_delimiter(lines[first], following)
    say = notify if notify is not None else (lambda message: None)

    reader = csv.reader(io.StringIO(text), delimiter=delimiter, skipinitialspace=True)
    records: list[list[str]] = []
    record_lines: list[int] = []
    where = "the first row" if header is False else "the header"
    # fields are stripped of surrounding white space; a text without any (the common
    # case of a machine-written file) skips that pass over every field
    spaces = " \r\x0b\x0c" + ("" if delimiter == "\t" else "\t")
    strip = not text.isascii() or any(c in text for c in spaces)
    start = 1
    try:
        for fields in reader:
            lineno, start = start, reader.line_num + 1
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if strip:
                fields = [f.strip() for f in fields]
            if records and len(fields) != len(records[0]):
                raise DataError(
                    f"expected {len(records[0])} fields (as in {where} on line {record_lines[0]}), "
                    f"found {len(fields)}",
                    src,
                    lineno,
                )
            records.append(fields)
            record_lines.append(lineno)
    except csv.Error as exc:
        raise DataError(f"cannot read the CSV text ({exc})", src, reader.line_num or None) from None
    return parse_csv_records(records, record_lines, src, relation, delimiter, decimal=decimal,
                      missing=missing, header=header, notify=say)


def parse_csv_records(records: list[list[str]], record_lines: list[int], src: str, relation: str,
                      delimiter: str, *, decimal: str | None = None,
                      missing: frozenset[str] = MISSING_VALUES, header: bool | None = None,
                      notify: Callable[[str], None] | None = None) -> Table:
    """Named columns of str/None cells from CSV records already split into stripped fields.

    :func:`parse_csv` splits the text and calls this; a reader of chunks calls
    it with the records of one chunk.

    Parameters
    ----------
    records : list of list of str
        At least one record, all of one length, each field stripped of
        surrounding white space.
    record_lines : list of int
        1-based line of each record in the file.
    src, relation, decimal, missing, header, notify
        As in :func:`parse_csv`.
    delimiter : str
        The delimiter the records were split on (it decides whether decimal
        commas are looked for, and is named in messages).

    Returns
    -------
    Table
        As :func:`parse_csv` returns it.

    Raises
    ------
    DataError
        As :func:`parse_csv`, for what is decided from the records.
    """
    say = notify if notify is not None else (lambda message: None)
    m = len(records[0])
    top, header_line = records[0], record_lines[0]
    auto = header is None
    below = None
    if auto and len(records) > 1:
        below = _csv_cells(records[1:], missing)
        analysis = [_csv_column(below[:, k], decimal, delimiter) for k in range(m)]
        kinds = [a[0] for a in analysis]
        header = not _fits_below(top, below, kinds, missing, decimal, delimiter)
        if not header:
            say(f"note: {src}: the first row (line {header_line}) holds data, not column names "
                f"(its values fit the columns below), so the columns are named att1..att{m}; "
                "--header reads it as names")
    if header is not False:
        shown = {",": "comma", ";": "semicolon", "\t": "TAB"}[delimiter]
        if auto and all(_is_number(h) for h in top):
            raise DataError(
                f"no header row: the first row holds only numbers ({quote_input(delimiter.join(top))}); "
                f"add a first row of column names ({shown}-separated), or give --no-header",
                src,
                header_line,
            )
        seen: dict[str, int] = {}
        for k, h in enumerate(top):
            if not h:
                raise DataError(f"column {k + 1} of the header has no name", src, header_line)
            if h in seen:
                what = f"column name {h!r} appears twice in the header (columns {seen[h] + 1} and {k + 1})"
                raise DataError(what, src, header_line)
            seen[h] = k
        names = top
        records, record_lines = records[1:], record_lines[1:]
        if not records:
            raise DataError("no data rows after the header", src, header_line)
    else:
        names = [f"att{k + 1}" for k in range(m)]

    if below is not None and header:
        cells = below  # the rows below the header, already split
    elif below is not None:
        cells = np.concatenate([_csv_cells([top], missing), below])
    else:
        cells = _csv_cells(records, missing)
    lines_arr = np.asarray(record_lines, dtype=np.int64)
    columns = [Column(h, None, (), None) for h in names]
    comma_columns: list[str] = []
    comma_example: tuple[str, int] | None = None
    for k, c in enumerate(columns):
        if cells is below:
            kind, converted, numbers, first_bad = analysis[k]
        else:
            kind, converted, numbers, first_bad = _csv_column(cells[:, k], decimal, delimiter)
        if converted is not None:
            if decimal is None:
                comma_columns.append(c.name)
                if comma_example is None:
                    i = next(i for i, v in enumerate(cells[:, k]) if v is not None and "," in v)
                    comma_example = (cells[i, k], int(lines_arr[i]))
            cells[:, k] = converted
        if kind == "nominal" and first_bad is not None:
            present = int(sum(v is not None for v in cells[:, k]))
            if numbers >= _MOSTLY_NUMERIC * present:
                c.note = _mostly_numeric_note(src, c.name, numbers, present, cells[first_bad, k],
                                              int(lines_arr[first_bad]))
    if comma_example is not None:
        value, line = comma_example
        say(f"note: {src}: read ',' as the decimal mark in {quote_names(comma_columns, 3)} "
            f"(';'-separated, with numbers such as {quote_input(value)} on line {line}); "
            "--decimal . reads them otherwise")
    return Table(relation, columns, cells, lines_arr, "csv")


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


def _csv_number(value: str, decimal: str | None, delimiter: str) -> bool:
    """Whether a cell reads as a number under the decimal rule (None: either mark)."""
    if decimal != "," and _is_number(value):
        return True
    if decimal == "," or (decimal is None and delimiter == ";"):
        point = _comma_to_point(value)
        return point is not None and _is_number(point)
    return False


def _csv_column(col: np.ndarray, decimal: str | None, delimiter: str
                ) -> tuple[str, np.ndarray | None, int, int | None]:
    """Infer one CSV column's kind.

    Returns (kind, cells with decimal commas turned into points or None when
    nothing changes, count of present cells that are numbers, index of the first
    present cell that is not a number or None).
    """
    if decimal != "," and _to_float(col) is not None:
        return "numeric", None, 0, None
    comma: tuple[int, int | None] = (-1, None)
    if decimal == "," or (decimal is None and delimiter == ";"):
        converted = col.copy()
        numbers, first_bad = 0, None
        for i, v in enumerate(col):
            if v is None:
                continue
            point = _comma_to_point(v)
            if point is not None and _is_number(point):
                converted[i] = point
                numbers += 1
            elif first_bad is None:
                first_bad = i
        if first_bad is None:
            changed = decimal == "," or any(v is not None and "," in v for v in col)
            return "numeric", converted if changed else None, numbers, None
        if decimal == ",":
            return "nominal", None, numbers, first_bad
        comma = (numbers, first_bad)
    numbers, first_bad, bad = 0, None, 0
    # past this many text cells the column cannot be mostly numeric: stop counting
    hopeless = len(col) - _MOSTLY_NUMERIC * len(col) + 1e-9
    for i, v in enumerate(col):
        if v is None:
            continue
        if _is_number(v):
            numbers += 1
            continue
        if first_bad is None:
            first_bad = i
        bad += 1
        if bad > hopeless:
            numbers = 0
            break
    if comma[0] > numbers:  # ';'-separated: the column is closer to decimal-comma numbers
        numbers, first_bad = comma
    return "nominal", None, numbers, first_bad


def _fits_below(top: list[str], below: np.ndarray, kinds: list[str], missing: frozenset[str],
                decimal: str | None, delimiter: str) -> bool:
    """Whether a first CSV row looks like data rather than column names.

    It does when at least one of its cells is a number in a numeric column and
    every cell fits its column: a number in a numeric column, a value that
    occurs below (or a number, in a mostly numeric column) in a nominal one, or
    a missing-value token.
    """
    some_number = False
    for k, (value, kind) in enumerate(zip(top, kinds)):
        if value in missing:
            continue
        if kind == "numeric":
            if not _csv_number(value, decimal, delimiter):
                return False
            some_number = True
            continue
        col = below[:, k]
        if value in set(col.tolist()):
            continue
        present = [v for v in col if v is not None]
        numbers = sum(_csv_number(v, decimal, delimiter) for v in present)
        if not (_csv_number(value, decimal, delimiter) and present
                and numbers >= _MOSTLY_NUMERIC * len(present)):
            return False
    return some_number


def _mostly_numeric_note(src: str, name: str, numbers: int, present: int, value: str,
                         line: int) -> str:
    """The note on a column read as nominal because of a few values that are not numbers."""
    if "," in value and _is_number(value.replace(",", "")):
        fix = "a number with a thousands separator, which is not read as a number; write it without"
    else:
        fix = f"if it means missing, add --missing-values {shlex.quote(value)}"
    return (f"note: {src}: column {name!r} is read as nominal, although {numbers} of its {present} "
            f"values are numbers: line {line} holds {quote_input(value)}; {fix}")
