"""Loading a whole ARFF or CSV file into a :class:`~ensemblekit.dataset.Dataset`.

:func:`load_dataset` opens the input (a path, or ``"-"`` for standard input;
gzip is decompressed), decodes its text, chooses the reader, ARFF or CSV, by
the file's suffix or else by its first line, and codes the cells either as read
or against a training schema. The readers are in :mod:`ensemblekit.readers`:
``text`` (opening, gzip, byte order marks, UTF-8 or Latin-1), ``arff`` and
``csv``; the data set's types are in :mod:`ensemblekit.dataset`. What the
reader decides on its own (decimal commas, a first row of data, a column that
is mostly numbers read as nominal, Latin-1) is told to a ``notify`` callback,
one line per note naming the file.

Every problem with the input raises :class:`DataError`, whose text is one line
naming the file, the line number when it is known, and what is wrong.

``Attribute``, ``Schema``, ``Dataset``, ``DataError`` and ``known_class`` (of
:mod:`ensemblekit.dataset`) and ``write_arff`` (of
:mod:`ensemblekit.readers.arff`) can be imported from here too.

This module imports only the standard library, numpy and liac-arff, so that
commands which only read data (``ensemblekit info``) start quickly.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from ensemblekit.dataset import Attribute, DataError, Dataset, Schema, known_class, quote_names
from ensemblekit.errors import InputError
from ensemblekit.names import did_you_mean, resolve
from ensemblekit.readers.arff import read_arff, write_arff
from ensemblekit.readers.columns import type_requests
from ensemblekit.readers.csv import MISSING_VALUES, read_csv
from ensemblekit.readers.table import TableCoder
from ensemblekit.readers.text import MixedEncodingError, decoded_blocks, iter_lines, open_input

__all__ = [
    "Attribute",
    "DataError",
    "Dataset",
    "Schema",
    "input_format",
    "known_class",
    "load_dataset",
    "starts_like_arff",
    "write_arff",
]

# Notes on CSV columns read as nominal although most of their values are numbers
# given per file, at most (then one note counts the rest).
_MAX_COLUMN_NOTES = 5
# Rows read, split and coded at a time: the cells of one chunk are all that is held
# besides the file's text and the data matrix (chunks of a few thousand rows are also
# the fastest, see ensemblekit.streaming.CHUNK_ROWS).
_CHUNK_ROWS = 2000
# Lines looked at to tell ARFF from CSV (the lines starts_like_arff reads).
_SNIFF_LINES = 200


def input_format(suffix: str | None, looks_like_arff: Callable[[], bool]
                 ) -> tuple[str, str | None]:
    """Choose the reader of an input: by its file suffix, else by how its text starts.

    Parameters
    ----------
    suffix : str or None
        The lower-case file suffix without ``.gz`` (as
        :func:`ensemblekit.readers.text.open_input` gives it); None for
        standard input.
    looks_like_arff : callable
        Called with no argument, only when the suffix does not decide: True
        when the text looks like ARFF (see :func:`starts_like_arff`).

    Returns
    -------
    fmt : {"arff", "csv"}
        ``"arff"`` for ``.arff``; ``"csv"`` for ``.csv``, ``.tsv`` and
        ``.txt``; otherwise ``"arff"`` when ``looks_like_arff()`` says so,
        else ``"csv"``.
    delimiter : str or None
        TAB for ``.tsv``; None (to be guessed) otherwise.
    """
    if suffix == ".arff":
        return "arff", None
    if suffix in (".csv", ".tsv", ".txt"):
        return "csv", "\t" if suffix == ".tsv" else None
    return ("arff" if looks_like_arff() else "csv"), None


def starts_like_arff(text: str) -> bool:
    """Tell whether text looks like ARFF: its first line that counts starts with ``@relation``.

    Parameters
    ----------
    text : str
        The text, or its beginning, with ``\\n`` line ends. Blank lines and
        ``%`` comments are passed over; only the first 200 lines are looked at.

    Returns
    -------
    bool
        True when the first line that is neither blank nor a comment starts
        with ``@relation`` (in any case).
    """
    for raw in text.split("\n", 200)[:200]:
        s = raw.strip()
        if s and not s.startswith("%"):
            return s[:9].lower() == "@relation"
    return False


def load_dataset(
    source: str | os.PathLike,
    *,
    target: str | None = None,
    fmt: str | None = None,
    schema: Schema | None = None,
    ignore: Iterable[str] = (),
    allow_string: bool = False,
    string_to_nominal: bool = False,
    no_class: bool = False,
    stdin: BinaryIO | None = None,
    decimal: str | None = None,
    missing_values: Iterable[str] = (),
    header: bool | None = None,
    notify: Callable[[str], None] | None = None,
    nominal: Iterable[str] | str = (),
    numeric: Iterable[str] | str = (),
    string: Iterable[str] | str = (),
    date: Iterable[str] | str = (),
) -> Dataset:
    """Read an ARFF or CSV file (gzip-compressed or not) into a :class:`Dataset`.

    Parameters
    ----------
    source : str or os.PathLike
        Path of the file (a regular file or a FIFO), or ``"-"`` for standard
        input. Gzip-compressed input (found by its first bytes) is
        decompressed as it is read; the format then comes from the name
        without ``.gz`` (``x.arff.gz`` is ARFF). The input is read within the
        bounds of :mod:`ensemblekit.readers.bounds` (decompressed data, and
        standard input or a FIFO, 128 MiB; a line; a value; attributes;
        nominal values), each raised by its environment variable.
    target : str, optional
        Name of the class attribute. Default: the last attribute (Weka's
        convention).
    fmt : {"arff", "csv"}, optional
        File format. Default: from the extension (``.arff``; ``.csv``,
        ``.tsv``, ``.txt``); for standard input or another extension, ARFF
        when the first line that is neither blank nor a ``%`` comment starts
        with ``@relation``, otherwise CSV.
    schema : Schema, optional
        Training schema to conform to (for prediction). Attributes are matched
        by name; file attributes not in the schema are dropped; nominal values
        are coded in the schema's value order; CSV columns take the schema's
        kinds. The class attribute may be absent (``y`` is then None). The
        returned dataset carries this schema.
    ignore : iterable of str
        Attributes to drop before anything else (so a string or date attribute
        can be dropped this way).
    allow_string : bool, default False
        Keep ARFF string attributes as attributes of kind ``"string"``, coded
        against their sorted distinct values (for ``info``).
    string_to_nominal : bool, default False
        Read ARFF string attributes as nominal ones over their sorted distinct
        values (as Weka's ``StringToNominal`` filter, which orders them by first
        appearance instead). When neither this nor ``allow_string`` is set, string
        features are left out, all of them with one note that names them, and a
        string class is an error.
    no_class : bool, default False
        Make every attribute a feature; ``y`` is None.
    stdin : binary stream, optional
        Where ``"-"`` reads from (default ``sys.stdin.buffer``).
    decimal : {".", ","}, optional
        CSV: the decimal mark. Default: ``"."``, except that in a
        ``;``-separated file a column whose values are numbers when ``,`` is the
        decimal mark (``5,1``) is read so, with a note.
    missing_values : iterable of str
        CSV: more cell values to read as missing, added to the standard ones
        (:data:`ensemblekit.readers.csv.MISSING_VALUES`: the empty field, ``?``,
        ``NA``, ``N/A``, ``n/a``, ``NaN``, ``null``, ``NULL``, ``None``, ``-``,
        ``#N/A``, ``#N/A N/A``, ``#NA``, ``<NA>``; ``NA`` and ``NaN`` in any
        case, so ``nan`` too).
    header : bool, optional
        CSV: whether the first row names the columns. Default: it does, unless
        its values fit the columns below (numbers in numeric columns, values
        seen below in nominal ones, at least one number), in which case it is
        read as data and the columns are named ``att1`` .. ``attN`` (as Weka's
        CSVLoader names them), with a note.
    notify : callable, optional
        Receives each note on what was decided (one line starting ``"note: "``
        and naming the file): decimal commas, a first row read as data, a column
        read as nominal although mostly numbers, text read as Latin-1. Default:
        a :class:`UserWarning` per note.
    nominal, numeric, string : str or iterable of str
        CSV: columns to read as nominal, numeric or string whatever their cells
        look like, as Weka's ``CSVLoader -N``/``-R``/``-S``: lists such as
        ``"1,3-5"``, ``"first"``, ``"last"`` or attribute names (case-insensitive
        when unambiguous), see :mod:`ensemblekit.readers.columns`. Positions
        count the columns read (a pandas row index left out is not counted), before
        ``ignore``. A nominal column of numbers orders its values as numbers; a
        numeric class stays numeric (a classifier then refuses it); string
        columns are string attributes (left out, made nominal, or kept, as for
        ARFF). Ignored for ARFF, which declares its types, and against a
        ``schema``, which decides them.
    date : str or iterable of str
        CSV: ``COLS`` or ``COLS:FORMAT``, columns read as dates in a Java
        ``SimpleDateFormat`` pattern (default Weka's ``yyyy-MM-dd'T'HH:mm:ss``)
        into numeric attributes, milliseconds since the epoch, as Weka reads
        dates (:mod:`ensemblekit.readers.dates`; local time zone unless the
        pattern reads one). Applies with a ``schema`` too, whose attribute is
        then numeric.

    Returns
    -------
    Dataset
        ``X`` of shape (n_instances, n_features), float64 with NaN for missing
        values; ``y`` of shape (n_instances,) (int64 codes, -1 missing, for a
        nominal class; float64 for a numeric class) or None.

    Raises
    ------
    DataError
        The input cannot be read: missing or unreadable file; ``"-"`` while
        standard input is closed (``sys.stdin`` is None); malformed ARFF
        header or row (with its line); a value not numeric for a numeric
        attribute or not declared for a nominal one; wrong number of values in
        a row; CSV whose first row holds only numbers but does not fit the rows
        below; no data rows; damaged gzip data; a device or a directory; input
        past one of the bounds;
        a byte order mark the text does not match; unknown ``target`` or
        ``ignore`` name; a string class (unless ``allow_string`` or
        ``string_to_nominal``); an ARFF date
        attribute; a CSV value not a date in its ``date`` format; a column of
        ``nominal``/``numeric``/``string``/``date`` the file does not have, or
        given two kinds; with ``schema``, a missing feature, a changed attribute type
        or a nominal value unseen in training.
    ValueError
        Bad arguments (unknown ``fmt`` or ``decimal``, ``target`` together with
        ``no_class`` or contradicting ``schema``, a column list or date format
        that cannot be read).

    Notes
    -----
    ARFF follows Weka's format: ``?`` is missing; in a sparse row
    (``{index value, ...}``) a left-out attribute is 0, which for a nominal
    attribute is its first declared value. A CSV column is numeric when every
    present value parses as a number, otherwise nominal with the sorted
    distinct values (unless ``nominal`` ... say otherwise); the tokens listed under
    ``missing_values`` are missing. Columns separated by runs of spaces (no
    comma, semicolon or TAB in the first line) are read so, with a note; an
    unnamed first column that numbers the rows (pandas' index) is left out, with
    a note.
    Infinite numbers are rejected. The CSV options do not apply to ARFF, where
    ``?`` is the only missing value and ``.`` the decimal mark.
    """
    if fmt not in (None, "arff", "csv"):
        raise InputError(f"fmt must be 'arff', 'csv' or None, not {fmt!r}")
    if decimal not in (None, ".", ","):
        raise InputError(f"decimal must be '.', ',' or None, not {decimal!r}")
    if isinstance(missing_values, str):
        missing_values = (missing_values,)
    missing = MISSING_VALUES | frozenset(str(v).strip() for v in missing_values)
    types = type_requests(nominal=nominal, numeric=numeric, string=string, date=date)
    warned: list[str] | None = None
    if notify is None:  # said as warnings once the file is read, as from this call
        warned = []
        notify = warned.append
    if no_class and target is not None:
        raise InputError("give either target or no_class=True, not both")
    if schema is not None:
        ca = schema.class_attribute
        if target is not None and (ca is None or ca.name != target):
            raise InputError(f"target {target!r} contradicts the schema's class attribute")
        if no_class and ca is not None:
            raise InputError("no_class=True contradicts a schema that has a class attribute")
    if isinstance(ignore, str):
        ignore = (ignore,)
    ignore = tuple(ignore)

    options = dict(target=target, fmt=fmt, schema=schema, ignore=ignore,
                   allow_string=allow_string or string_to_nominal, strings_nominal=string_to_nominal,
                   no_class=no_class, stdin=stdin, decimal=decimal, missing=missing, header=header,
                   notify=notify, types=types)
    try:
        return _load(source, **options)
    except MixedEncodingError as exc:
        if source == "-" or not os.path.isfile(source):
            raise  # standard input or a FIFO cannot be read again
        notify(f"note: {exc.source}: not UTF-8 (byte 0x{exc.byte:02x} on line {exc.byte_line}), "
               "so it is read as Latin-1")
        return _load(source, latin1=True, **options)
    finally:
        for message in warned or ():
            warnings.warn(message, UserWarning, stacklevel=2)


def _load(source, *, target, fmt, schema, ignore, allow_string, strings_nominal, no_class, stdin,
          decimal, missing, header, notify, types, latin1: bool = False) -> Dataset:
    """:func:`load_dataset` once its arguments are checked: read the text in two passes
    (``readers.arff.read_arff``, ``readers.csv.read_csv``), coding each chunk of rows as
    the second pass gives it, so that the cells of the whole file are never held at once."""
    stream, src, suffix, stem = open_input(source, stdin, whole=True)
    try:
        lines = iter_lines(decoded_blocks(stream, src, notify, latin1=latin1))
        sniffed = list(itertools.islice(lines, _SNIFF_LINES))
        if not any(t.strip() for t in sniffed):
            more = next((t for t in lines if t.strip()), None)
            if more is None:
                raise DataError("the input is empty", src)
            sniffed.append(more)
        lines.unread(sniffed)
        delimiter = None
        if fmt is None:
            head = "\n".join(sniffed)
            fmt, delimiter = input_format(suffix, lambda: starts_like_arff(head))
        if fmt == "arff":
            relation, columns, n_rows, tables = read_arff(lines, src, _CHUNK_ROWS)
            kinds, typed = [c.kind for c in columns], []
        else:
            relation = _stem(src) if suffix is not None else "stdin"
            layout, n_rows, tables = read_csv(lines, src, relation, delimiter, decimal=decimal,
                                              missing=missing, header=header, notify=notify,
                                              chunk_rows=_CHUNK_ROWS, types=types)
            columns, kinds, typed = layout.columns, layout.kinds, layout.typed
        kinds = ["nominal" if strings_nominal and kind == "string" else kind for kind in kinds]
        name = _stem(src) if suffix is not None else relation

        keep, problem = list(range(len(columns))), None
        if ignore:
            names = [c.name for c in columns]
            unknown = [g for g in ignore if g not in names]
            if unknown:
                problem = DataError(f"cannot ignore {quote_names(unknown)}: no such attribute"
                                    f"{did_you_mean(unknown[0], names)}; attributes are: "
                                    f"{quote_names(names, 50)}", src)
            else:
                keep = [k for k, c in enumerate(columns) if c.name not in set(ignore)]
                if not keep:
                    problem = DataError("no attributes left after ignoring " + quote_names(ignore),
                                        src)
                    keep = list(range(len(columns)))
        if schema is None and not allow_string and problem is None:
            keep = _without_strings(columns, keep, target, no_class, src, notify)
        kept = [columns[k] for k in keep]
        if schema is not None:
            coder = TableCoder.for_schema(kept, src, n_rows, schema, True)
        else:
            coder = TableCoder.for_build(kept, src, n_rows, target, no_class, allow_string,
                                         [kinds[k] for k in keep])
        if problem is not None:  # raised once every row is read, as a parse error comes first
            coder.errors.append(((0,), problem))
        for table in tables:
            if len(keep) < len(columns):
                table = table.select(keep)
            coder.add(table)
        ds = coder.dataset(name, relation)
    finally:
        if source != "-":
            stream.close()
    if schema is None:
        column_notes = [c.note for c in kept if c.note is not None]
        for note in column_notes[:_MAX_COLUMN_NOTES]:
            notify(note)
        if len(column_notes) > _MAX_COLUMN_NOTES:
            notify(f"note: {src}: {len(column_notes) - _MAX_COLUMN_NOTES} more columns are read as "
                   "nominal although most of their values are numbers")
    ds.format = fmt
    ds.typed = frozenset(typed) & {a.name for a in ds.schema.attributes}
    return ds


def _without_strings(columns, keep: list[int], target: str | None, no_class: bool, src: str,
                     notify) -> list[int]:
    """``keep`` without the string features (free text, which no algorithm here reads), with
    one note naming them all; the class column stays, to be refused by the coder."""
    names = [c.name for c in columns]
    if no_class:
        class_index = None
    elif target is None:
        class_index = keep[-1]
    else:
        found = resolve(target, names)
        class_index = None if found is None else names.index(found)
    strings = [k for k in keep if columns[k].kind == "string" and k != class_index]
    if not strings or len(strings) == len(keep):
        return keep  # nothing to leave out, or nothing would be left: the coder says so
    notify(f"note: {src}: string attributes are left out (free text, which no algorithm here "
           f"reads): {quote_names([names[k] for k in strings], 20)}; --string-to-nominal reads "
           "them as nominal")
    return [k for k in keep if k not in set(strings)]


def _stem(path: str) -> str:
    """File name without its format suffix and a ``.gz`` after it (``x.csv.gz`` -> ``x``)."""
    return Path(path[:-3] if path.lower().endswith(".gz") else path).stem
