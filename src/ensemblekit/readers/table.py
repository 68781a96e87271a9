"""The table of cells a reader returns, and coding its cells into a Dataset.

A reader (ARFF or CSV) turns text into a table: one column per attribute, as
declared (ARFF) or named (CSV), and the raw cell tokens, a ``str`` or None for
a missing value, with the line of the file where each row starts. Coding then
turns the cells into numbers: numeric attributes as floats, nominal ones as
integer codes into their values, either as read (:func:`_build`) or against a
training schema (:func:`_conform`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ensemblekit.dataset import Attribute, DataError, Dataset, Schema, _names, _show


@dataclass
class _Column:
    name: str
    kind: str | None  # numeric | nominal | string | date; None = CSV (not typed yet)
    values: tuple[str, ...]
    line: int | None  # declaration line (ARFF) or None
    note: str | None = None  # CSV: why a mostly numeric column is nominal (said when it is kept)


@dataclass
class _Table:
    relation: str
    columns: list[_Column]
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


def _numeric(col: np.ndarray, name: str, table: _Table, src: str,
             schema_kind: str | None = None) -> np.ndarray:
    out = _to_float(col)
    if out is None:
        for i, v in enumerate(col):
            if v is not None and not _is_number(v):
                if schema_kind is not None:
                    what = (
                        f"attribute {name!r} is numeric in the training data "
                        f"but here holds the non-number {_show(v)}"
                    )
                else:
                    what = f"value {_show(v)} is not numeric for attribute {name!r}"
                raise DataError(what, src, int(table.lines[i]))
        raise AssertionError("unreachable")  # pragma: no cover
    inf = np.isinf(out)
    if inf.any():
        i = int(np.argmax(inf))
        raise DataError(f"value {_show(col[i])} of attribute {name!r} is not a finite number", src,
                        int(table.lines[i]))
    return out


def _codes(col: np.ndarray, values: Sequence[str], name: str, table: _Table, src: str,
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
                f"value {_show(col[i])} of attribute {name!r} was not seen in the training data "
                f"(known values: {_names(values)})"
            )
        else:
            what = (f"value {_show(col[i])} is not declared for nominal attribute {name!r} "
                    f"(declared: {_names(values)})")
        raise DataError(what, src, int(table.lines[i]))
    return codes


def _sorted_distinct(col: np.ndarray) -> tuple[str, ...]:
    return tuple(sorted({v for v in col if v is not None}))


# --------------------------------------------------------------------------
# Building the Dataset
# --------------------------------------------------------------------------
def _check_usable(c: _Column, src: str, allow_string: bool) -> None:
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


def _build(table: _Table, src: str, name: str, target: str | None, no_class: bool,
           allow_string: bool) -> Dataset:
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
            what = f"no attribute named {target!r} to use as the class; attributes are: {_names(names, 50)}"
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


def _conform(table: _Table, src: str, name: str, schema: Schema, *, read_class: bool = True) -> Dataset:
    """Code a table's cells against a training schema (attributes matched by name).

    ``read_class=False`` leaves the class column unread (``y`` is None), so any
    value in it, or its absence, gives the same features: prediction does not
    use it. With True, a class value unseen in training is an error, as for
    any nominal attribute.
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
                f"(the file has: {_names([c.name for c in table.columns])})",
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
