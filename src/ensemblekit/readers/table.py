"""The table of cells a reader returns, and coding its cells into a Dataset.

A reader (ARFF or CSV) turns text into a table: one column per attribute, as
declared (ARFF) or named (CSV), and the raw cell tokens, a ``str`` or None for
a missing value, with the line of the file where each row starts. Coding then
turns the cells into numbers: numeric attributes as floats, nominal ones as
integer codes into their values, either as read (:func:`build_dataset`) or
against a training schema (:func:`conform_to_schema`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ensemblekit.dataset import Attribute, DataError, Dataset, Schema, quote_input, quote_names

__all__ = ["Column", "Table", "build_dataset", "conform_to_schema"]


@dataclass
class Column:
    """One column of a :class:`Table`: an attribute as the file declares or names it.

    Attributes
    ----------
    name : str
        Attribute name as written in the file.
    kind : {"numeric", "nominal", "string", "date"} or None
        The declared type (ARFF); None for a CSV column, whose kind is
        inferred from its cells when it is coded.
    values : tuple of str
        Declared values of an ARFF nominal attribute, in order; else empty.
    line : int or None
        1-based line of the ARFF declaration; None for CSV.
    note : str or None
        CSV: the note on why a column of mostly numbers is read as nominal,
        given only if the column is kept.
    """

    name: str
    kind: str | None  # numeric | nominal | string | date; None = CSV (not typed yet)
    values: tuple[str, ...]
    line: int | None  # declaration line (ARFF) or None
    note: str | None = None  # CSV: why a mostly numeric column is nominal (said when it is kept)


@dataclass
class Table:
    """What a reader makes of a file or of a chunk of it: columns and raw cells.

    Attributes
    ----------
    relation : str
        ARFF ``@relation`` name; for CSV the name the caller gave (file stem
        or ``"stdin"``).
    columns : list of Column
        One per attribute, in file order.
    cells : ndarray of shape (n_rows, len(columns)), object
        Each cell a ``str`` as read, or None for a missing value.
    lines : ndarray of shape (n_rows,), int64
        1-based line of the file where each row starts.
    fmt : {"arff", "csv"}
        The format read.
    """

    relation: str
    columns: list[Column]
    cells: np.ndarray  # (n, m) object: str or None (missing)
    lines: np.ndarray  # (n,) int64
    fmt: str


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------
# Coding columns
# --------------------------------------------------------------------------
def _to_float(col: np.ndarray) -> np.ndarray | None:
    """Column of str/None -> float64 (None -> NaN); None if a value is not a number."""
    try:
        return col.astype(np.float64)
    except (ValueError, TypeError):
        return None


def _numeric(col: np.ndarray, name: str, table: Table, src: str,
             schema_kind: str | None = None) -> np.ndarray:
    out = _to_float(col)
    if out is None:
        for i, v in enumerate(col):
            if v is not None and not _is_number(v):
                if schema_kind is not None:
                    what = (
                        f"attribute {name!r} is numeric in the training data "
                        f"but here holds the non-number {quote_input(v)}"
                    )
                else:
                    what = f"value {quote_input(v)} is not numeric for attribute {name!r}"
                raise DataError(what, src, int(table.lines[i]))
        raise AssertionError("unreachable")  # pragma: no cover
    inf = np.isinf(out)
    if inf.any():
        i = int(np.argmax(inf))
        raise DataError(f"value {quote_input(col[i])} of attribute {name!r} is not a finite number", src,
                        int(table.lines[i]))
    return out


def _codes(col: np.ndarray, values: Sequence[str], name: str, table: Table, src: str,
           training: bool) -> np.ndarray:
    """Column of str/None -> int64 codes into ``values`` (-1 = missing)."""
    lut: dict[Any, int] = {v: k for k, v in enumerate(values)}
    lut[None] = -1
    codes = np.fromiter((lut.get(v, -2) for v in col), dtype=np.int64, count=len(col))
    bad = codes == -2
    if bad.any():
        i = int(np.argmax(bad))
        if training:
            what = (
                f"value {quote_input(col[i])} of attribute {name!r} was not seen in the training data "
                f"(known values: {quote_names(values)})"
            )
        else:
            what = (f"value {quote_input(col[i])} is not declared for nominal attribute {name!r} "
                    f"(declared: {quote_names(values)})")
        raise DataError(what, src, int(table.lines[i]))
    return codes


def _sorted_distinct(col: np.ndarray) -> tuple[str, ...]:
    return tuple(sorted({v for v in col if v is not None}))


# --------------------------------------------------------------------------
# Building the Dataset
# --------------------------------------------------------------------------
def _check_usable(c: Column, src: str, allow_string: bool) -> None:
    if c.kind == "date":
        raise DataError(
            f"attribute {c.name!r} (line {c.line}) is a date attribute, which ensemblekit does not read; "
            f"drop it with --ignore {c.name!r} (or Weka's RemoveType filter), "
            "or convert it to a number first",
            src,
        )
    if c.kind == "string" and not allow_string:
        raise DataError(
            f"attribute {c.name!r} (line {c.line}) is a string attribute, which no algorithm here can use; "
            f"drop it with --ignore {c.name!r} (or Weka's RemoveType filter)",
            src,
        )


def build_dataset(table: Table, src: str, name: str, target: str | None, no_class: bool,
                  allow_string: bool) -> Dataset:
    """Code a table's cells as they are read, each attribute keeping its own values.

    A column without a declared kind (CSV) is numeric when every present cell
    is a number, otherwise nominal with its sorted distinct values; an ARFF
    nominal attribute keeps its declared values, a kept string attribute its
    sorted distinct ones.

    Parameters
    ----------
    table : Table
        The cells, as a reader returns them.
    src : str
        The input as shown in messages.
    name : str
        Name of the data set.
    target : str or None
        Name of the class attribute; None for the last one.
    no_class : bool
        Make every attribute a feature (``y`` is None); ``target`` is then
        not used.
    allow_string : bool
        Keep string attributes instead of refusing them.

    Returns
    -------
    Dataset
        ``X`` of shape (n_rows, n_features), float64 with NaN for missing;
        ``y`` int64 codes (-1 missing) for a nominal class, float64 for a
        numeric one, or None.

    Raises
    ------
    DataError
        A date attribute, a string attribute unless ``allow_string``, an
        unknown ``target``, a value that is not a number in a numeric
        attribute or not declared for a nominal one, or an infinite number;
        each with the line it is on when it is known.
    """
    columns = table.columns
    for c in columns:
        _check_usable(c, src, allow_string)
    if no_class:
        class_index = None
    elif target is None:
        class_index = len(columns) - 1
    else:
        names = [c.name for c in columns]
        if target not in names:
            what = (f"no attribute named {target!r} to use as the class; "
                    f"attributes are: {quote_names(names, 50)}")
            raise DataError(what, src)
        class_index = names.index(target)

    n = table.cells.shape[0]
    attributes: list[Attribute] = []
    X = np.empty((n, len(columns) - (class_index is not None)), dtype=np.float64)
    y = None
    j = 0
    for k, c in enumerate(columns):
        col = table.cells[:, k]
        kind = c.kind
        if kind is None:  # CSV: numeric when every present value is a number
            kind = "numeric" if _to_float(col) is not None else "nominal"
        if kind == "numeric":
            attributes.append(Attribute(c.name, "numeric"))
            values_f = _numeric(col, c.name, table, src)
            codes = None
        else:
            values = c.values if c.kind == "nominal" else _sorted_distinct(col)
            attributes.append(Attribute(c.name, kind, values))
            codes = _codes(col, values, c.name, table, src, training=False)
            values_f = codes.astype(np.float64)
            values_f[codes < 0] = np.nan
        if k == class_index:
            y = values_f if codes is None else codes
        else:
            X[:, j] = values_f
            j += 1
    schema = Schema(table.relation, tuple(attributes), class_index)
    return Dataset(name, src, schema, X, y, table.lines.copy())


def conform_to_schema(table: Table, src: str, name: str, schema: Schema, *,
                      read_class: bool = True) -> Dataset:
    """Code a table's cells against a training schema (attributes matched by name).

    Columns the schema does not name are dropped; nominal values are coded in
    the schema's value order; a CSV column takes the schema's kind.

    Parameters
    ----------
    table, src, name
        As in :func:`build_dataset`.
    schema : Schema
        The training schema; the returned data set carries it.
    read_class : bool, default=True
        False leaves the class column unread (``y`` is None), so any value in
        it, or its absence, gives the same features: prediction does not use
        it. With True, a class value unseen in training is an error, as for
        any nominal attribute, and a file without the class column gives
        ``y`` None.

    Returns
    -------
    Dataset
        ``X`` of shape (n_rows, len(schema.features)), float64 with NaN for
        missing, in the schema's order; ``y`` as in :func:`build_dataset`.

    Raises
    ------
    DataError
        A feature of the schema is missing, an attribute is numeric in one and
        not in the other, a date attribute, a value that is not a finite
        number, or a nominal value not seen in training; each with the line it
        is on when it is known.
    """
    by_name = {c.name: k for k, c in enumerate(table.columns)}
    n = table.cells.shape[0]
    X = np.empty((n, len(schema.features)), dtype=np.float64)
    y = None
    j = 0
    for k, a in enumerate(schema.attributes):
        is_class = k == schema.class_index
        if is_class and not read_class:
            continue
        if a.name not in by_name:
            if is_class:
                continue
            raise DataError(
                f"attribute {a.name!r} of the training data is missing "
                f"(the file has: {quote_names([c.name for c in table.columns])})",
                src,
            )
        c = table.columns[by_name[a.name]]
        if c.kind == "date":
            _check_usable(c, src, False)
        col = table.cells[:, by_name[a.name]]
        file_kind = c.kind
        if file_kind is not None and (file_kind == "numeric") != (a.kind == "numeric"):
            raise DataError(
                f"attribute {a.name!r} (line {c.line}) is {file_kind} here but {a.kind} in the training data",
                src,
            )
        if a.kind == "numeric":
            values_f = _numeric(col, a.name, table, src, schema_kind=a.kind)
            codes = None
        else:
            codes = _codes(col, a.values, a.name, table, src, training=True)
            values_f = codes.astype(np.float64)
            values_f[codes < 0] = np.nan
        if is_class:
            y = values_f if codes is None else codes
        else:
            X[:, j] = values_f
            j += 1
    return Dataset(name, src, schema, X, y, table.lines.copy())
