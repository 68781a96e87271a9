"""Reading ARFF and CSV data files into numeric arrays with a schema.

A data file becomes a :class:`Dataset`: a float matrix ``X`` of the features,
a class vector ``y`` and a :class:`Schema` that records every attribute's name,
kind (numeric, nominal or string) and, for nominal attributes, the declared
values whose positions are the integer codes used in ``X`` and ``y``.

Formats
-------
ARFF
    Weka's Attribute-Relation File Format (Witten, Frank, Hall & Pal, *Data
    Mining: Practical Machine Learning Tools and Techniques*, 4th ed., 2016,
    section 2.4; the format page of the Weka wiki). Tokenising (quoting,
    escapes, ``?`` for missing, sparse rows) is done by liac-arff. Before
    that, a fix-up that keeps every line in place accepts what Weka accepts
    and liac-arff does not: a UTF-8 byte order mark, CRLF or CR line ends,
    old range suffixes (``integer [1,10]``), and ``@attribute name{a,b}``
    with no space before the brace.
CSV
    Comma separated values (RFC 4180); the delimiter is one of comma, semicolon
    or TAB, found from the first line. The first row names the columns unless
    its values fit the columns below (then the columns are att1..attN, as
    Weka's CSVLoader names them). A column is numeric when every present value
    is a number; in a ``;``-separated file, numbers written with a decimal
    comma (``5,1``) count. The empty field, ``?``, ``NA``, ``N/A``, ``n/a``,
    ``NaN``, ``null``, ``None`` and ``-`` are missing.

Text is UTF-8, or UTF-16/UTF-32 with a byte order mark, or else Latin-1; input
compressed with gzip (``.arff.gz``, ``.csv.gz``, or on standard input) is
decompressed up to a size limit. What the reader decides on its own (decimal
commas, a first row of data, a column that is mostly numbers read as nominal,
Latin-1) is told to a ``notify`` callback, one line per note naming the file.

Every problem with the input raises :class:`DataError`, whose text is one line
naming the file, the line number when it is known, and what is wrong.

This module imports only the standard library, numpy and liac-arff, so that
commands which only read data (``ensemblekit info``) start quickly.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from ensemblekit.dataset import Attribute, DataError, Dataset, Schema, _names, known_class
from ensemblekit.readers.arff import _parse_arff, write_arff
from ensemblekit.readers.csv import _CSV_MISSING, _parse_csv
from ensemblekit.readers.table import _build, _conform
from ensemblekit.readers.text import _decode_text, _read_bytes

__all__ = [
    "Attribute",
    "DataError",
    "Dataset",
    "Schema",
    "known_class",
    "load_dataset",
    "write_arff",
]

# Notes of that kind given per file, at most (then one note counts the rest).
_MAX_COLUMN_NOTES = 5


def _input_format(suffix: str | None, looks_like_arff: Callable[[], bool]
                  ) -> tuple[str, str | None]:
    """``(format, fixed delimiter or None)`` of an input: by its file suffix (``.arff``;
    ``.csv``, ``.tsv``, ``.txt``), else ARFF when ``looks_like_arff()`` says so, else CSV."""
    if suffix == ".arff":
        return "arff", None
    if suffix in (".csv", ".tsv", ".txt"):
        return "csv", "\t" if suffix == ".tsv" else None
    return ("arff" if looks_like_arff() else "csv"), None


def _sniff_arff(text: str) -> bool:
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
    no_class: bool = False,
    stdin: BinaryIO | None = None,
    decimal: str | None = None,
    missing_values: Iterable[str] = (),
    header: bool | None = None,
    notify: Callable[[str], None] | None = None,
) -> Dataset:
    """Read an ARFF or CSV file (gzip-compressed or not) into a :class:`Dataset`.

    Parameters
    ----------
    source : str or os.PathLike
        Path of the file, or ``"-"`` for standard input. Gzip-compressed input
        (found by its first bytes) is decompressed as it is read, up to 1024 MiB
        (the variable ``ENSEMBLEKIT_MAX_DATA_MB`` sets another limit); the
        format then comes from the name without ``.gz`` (``x.arff.gz`` is ARFF).
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
        Keep ARFF string attributes, coded against their sorted distinct values
        (for ``info``); otherwise they are an error.
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
        (the empty field, ``?``, ``NA``, ``N/A``, ``n/a``, ``NaN``, ``null``,
        ``None``, ``-``; ``NA`` and ``NaN`` in any case).
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
        below; no data rows; damaged gzip data, or more of it than the limit;
        a byte order mark the text does not match; unknown ``target`` or
        ``ignore`` name; a string attribute (unless ``allow_string``); a date
        attribute; with ``schema``, a missing feature, a changed attribute type
        or a nominal value unseen in training.
    ValueError
        Bad arguments (unknown ``fmt`` or ``decimal``, ``target`` together with
        ``no_class`` or contradicting ``schema``).

    Notes
    -----
    ARFF follows Weka's format: ``?`` is missing; in a sparse row
    (``{index value, ...}``) a left-out attribute is 0, which for a nominal
    attribute is its first declared value. A CSV column is numeric when every
    present value parses as a number, otherwise nominal with the sorted
    distinct values; the tokens listed under ``missing_values`` are missing.
    Infinite numbers are rejected. The CSV options do not apply to ARFF, where
    ``?`` is the only missing value and ``.`` the decimal mark.
    """
    if fmt not in (None, "arff", "csv"):
        raise ValueError(f"fmt must be 'arff', 'csv' or None, not {fmt!r}")
    if decimal not in (None, ".", ","):
        raise ValueError(f"decimal must be '.', ',' or None, not {decimal!r}")
    if isinstance(missing_values, str):
        missing_values = (missing_values,)
    missing = _CSV_MISSING | frozenset(str(v).strip() for v in missing_values)
    if notify is None:
        def notify(message: str) -> None:
            warnings.warn(message, UserWarning, stacklevel=3)
    if no_class and target is not None:
        raise ValueError("give either target or no_class=True, not both")
    if schema is not None:
        ca = schema.class_attribute
        if target is not None and (ca is None or ca.name != target):
            raise ValueError(f"target {target!r} contradicts the schema's class attribute")
        if no_class and ca is not None:
            raise ValueError("no_class=True contradicts a schema that has a class attribute")
    if isinstance(ignore, str):
        ignore = (ignore,)
    ignore = tuple(ignore)

    content, src, suffix = _read_bytes(source, stdin)
    text = _decode_text(content, src, notify)
    if not text.strip():
        raise DataError("the input is empty", src)

    delimiter = None
    if fmt is None:
        fmt, delimiter = _input_format(suffix, lambda: _sniff_arff(text))

    if fmt == "arff":
        table = _parse_arff(text, src)
    else:
        stem = _stem(src) if suffix is not None else "stdin"
        table = _parse_csv(text, src, stem, delimiter, decimal=decimal, missing=missing,
                           header=header, notify=notify)
    name = _stem(src) if suffix is not None else table.relation

    if ignore:
        names = [c.name for c in table.columns]
        unknown = [g for g in ignore if g not in names]
        if unknown:
            what = f"cannot ignore {_names(unknown)}: no such attribute; attributes are: {_names(names, 50)}"
            raise DataError(what, src)
        keep = [k for k, c in enumerate(table.columns) if c.name not in set(ignore)]
        if not keep:
            raise DataError("no attributes left after ignoring " + _names(ignore), src)
        table.columns = [table.columns[k] for k in keep]
        table.cells = table.cells[:, keep]

    if schema is not None:
        ds = _conform(table, src, name, schema)
    else:
        ds = _build(table, src, name, target, no_class, allow_string)
        column_notes = [c.note for c in table.columns if c.note is not None]
        for note in column_notes[:_MAX_COLUMN_NOTES]:
            notify(note)
        if len(column_notes) > _MAX_COLUMN_NOTES:
            notify(f"note: {src}: {len(column_notes) - _MAX_COLUMN_NOTES} more columns are read as "
                   "nominal although most of their values are numbers")
    ds.format = fmt
    return ds


def _stem(path: str) -> str:
    """File name without its format suffix and a ``.gz`` after it (``x.csv.gz`` -> ``x``)."""
    return Path(path[:-3] if path.lower().endswith(".gz") else path).stem
