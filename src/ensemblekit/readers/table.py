"""The table of cells a reader returns, and coding its cells into a Dataset.

A reader (ARFF or CSV) turns text into a table: one column per attribute, as
declared (ARFF) or named (CSV), and the raw cell tokens, a ``str`` or None for
a missing value, with the line of the file where each row starts. Coding then
turns the cells into numbers: numeric attributes as floats, nominal ones as
integer codes into their values, either as read (:meth:`TableCoder.for_build`,
which :func:`ensemblekit.data.load_dataset` feeds chunk by chunk) or against a
training schema (:func:`conform_to_schema`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ensemblekit.dataset import Attribute, DataError, Dataset, Schema, quote_input, quote_names
from ensemblekit.names import did_you_mean, resolve
from ensemblekit.readers.bounds import NOMINAL_TOTAL, NOMINAL_VALUES
from ensemblekit.readers.dates import DateFormat

__all__ = ["Column", "Table", "TableCoder", "conform_to_schema", "number_text"]


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
    date_format : str or None
        A date column's Java date pattern (CSV ``--date``); a date column
        without one cannot be read.
    given : bool
        CSV: the column's kind was given (``--nominal`` ...), not guessed; a
        nominal column of numbers then orders its values as numbers.
    """

    name: str
    kind: str | None  # numeric | nominal | string | date; None = CSV (not typed yet)
    values: tuple[str, ...]
    line: int | None  # declaration line (ARFF) or None
    note: str | None = None  # CSV: why a mostly numeric column is nominal (said when it is kept)
    date_format: str | None = None
    given: bool = False


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
    fast : list of ensemblekit.readers.fast.FastColumn or None
        The columns as the vectorised engine parsed them (``cells`` is then
        None); None for cells read the ordinary way.
    slow : callable or None
        With ``fast``: reads the same rows the ordinary way, for a chunk whose
        values must be refused or reported with today's message.
    weights : ndarray of shape (n_rows,) or None
        ARFF instance weights (``{w}`` after a row), 1 for a row without one; None when
        no row of the chunk has one.
    """

    relation: str
    columns: list[Column]
    cells: np.ndarray | None  # (n, m) object: str or None (missing); None when ``fast``
    lines: np.ndarray  # (n,) int64
    fmt: str
    fast: list | None = field(default=None, repr=False)
    slow: Callable[[], Table] | None = field(default=None, repr=False)
    weights: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_rows(self) -> int:
        """Rows of the table."""
        return len(self.lines)

    def select(self, keep: Sequence[int]) -> Table:
        """The table of the columns at positions ``keep`` (in that order)."""
        columns = [self.columns[k] for k in keep]
        if self.fast is not None:
            slow = self.slow
            return Table(self.relation, columns, None, self.lines, self.fmt,
                         fast=[self.fast[k] for k in keep],
                         slow=None if slow is None else (lambda: slow().select(keep)))
        return Table(self.relation, columns, self.cells[:, keep], self.lines, self.fmt)


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


def _declared(c: Column) -> str:
    """`` (line N)`` of an ARFF declaration; empty for a CSV column."""
    return "" if c.line is None else f" (line {c.line})"


def _check_usable(c: Column, src: str, allow_string: bool) -> DataError | None:
    """The error for a column no algorithm can read (a date without a format, or a string
    unless allowed)."""
    if c.kind == "date" and c.date_format is None:
        return DataError(
            f"attribute {c.name!r}{_declared(c)} is a date attribute, which ensemblekit does not read; "
            f"drop it with --ignore {c.name!r} (or Weka's RemoveType filter), "
            "or convert it to a number first",
            src,
        )
    if c.kind == "string" and not allow_string:
        return DataError(
            f"attribute {c.name!r}{_declared(c)} is a string attribute, which no algorithm here can use; "
            f"--string-to-nominal reads it as nominal, or drop it with --ignore {c.name!r}",
            src,
        )
    return None


def number_text(v: float) -> str | None:
    """A number as text: whole numbers without a decimal point, others in Python's
    shortest round-trip form; None for NaN (missing)."""
    if v != v:
        return None
    return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


def _cell_text(column: Column, cells: np.ndarray | None, fast=None) -> list:
    """The cells of one column as text (None where missing), the same from either engine.

    A column the file declares numeric (ARFF) is written from its numbers
    (:func:`number_text`), since the vectorised engine keeps no text of them;
    any other column keeps its cells as read. ``cells`` from the ordinary
    reader, or ``fast`` (an :class:`ensemblekit.readers.fast.FastColumn`).
    """
    if column.kind == "numeric":
        numbers = fast.numbers() if fast is not None else _to_float(cells)
        if numbers is not None:
            return [number_text(v) for v in numbers.tolist()]
    if fast is not None:
        return fast.cells()
    return list(cells)


class _Slot:
    """One attribute being coded: where its cells come from and where its numbers go.

    ``how`` is ``"numeric"`` (floats), ``"date"`` (milliseconds of dates in
    ``date_format``), ``"codes"`` (positions in ``values``) or ``"distinct"``
    (positions in the sorted distinct values, found as the rows are read;
    with ``by_number``, values that are all numbers are sorted as numbers);
    ``out`` is a column of X, or None for the class.
    """

    def __init__(self, key: tuple, col: int, name: str, how: str, out: int | None, *,
                 values: tuple[str, ...] = (), schema_kind: str | None = None,
                 training: bool = False, lenient: bool = False, date_format: str | None = None,
                 by_number: bool = False):
        self.key, self.col, self.name, self.how, self.out = key, col, name, how, out
        self.values, self.schema_kind, self.training = values, schema_kind, training
        self.lenient = lenient  # a value not seen in training is read as missing
        self.unseen: np.ndarray | None = None  # lenient: rows whose value was unseen
        self.dates = None if date_format is None else DateFormat(date_format)
        self.by_number = by_number
        self.lut: dict[Any, int] = {}
        if how == "codes":
            self.lut = {v: k for k, v in enumerate(values)}
            self.lut[None] = -1
        self.seen: dict[str, int] = {}  # "distinct": value -> position of first sight
        self.not_number: DataError | None = None  # the first, which outranks ...
        self.infinite: DataError | None = None  # ... the first infinite number
        self.undeclared: DataError | None = None

    @property
    def error(self) -> DataError | None:
        return self.not_number or self.infinite or self.undeclared


class TableCoder:
    """Codes the cells of a table, one chunk of rows after another, into a Dataset.

    Cells are coded as they are read (:meth:`for_build`) or against a training
    schema (:meth:`for_schema`), into arrays of the file's size allocated once.
    What is wrong with the data is kept, not raised at once, and the first
    problem in attribute order is raised by :meth:`dataset`, so that a file
    read in chunks gives the error a whole file read at once gives.

    Parameters
    ----------
    src : str
        The input as shown in messages.
    n_rows : int
        Rows of all the chunks together.
    """

    def __init__(self, src: str, n_rows: int):
        self.src = src
        self.n_rows = n_rows
        self.slots: list[_Slot] = []
        self.errors: list[tuple[tuple, DataError]] = []  # found from the columns alone
        self.lines = np.empty(n_rows, dtype=np.int64)
        self.weights: np.ndarray | None = None  # made when a chunk holds an instance weight
        self.X = np.empty((0, 0))
        self.y: np.ndarray | None = None
        self.class_slot: _Slot | None = None
        self.done = 0
        self.attributes: list[Attribute] = []
        self.schema: Schema | None = None
        self.class_index: int | None = None
        self.relation = ""
        self.copies: dict[str, tuple[int, np.ndarray]] = {}  # name -> (column, text of each row)

    # ------------------------------------------------------------------ plans
    @classmethod
    def for_build(cls, columns: Sequence[Column], src: str, n_rows: int, target: str | None,
                  no_class: bool, allow_string: bool, kinds: Sequence[str]) -> TableCoder:
        """A coder of cells as they are read, each attribute keeping its own values; ``kinds``
        gives the kind of each column (a CSV column's is inferred from all its rows)."""
        coder = cls(src, n_rows)
        for k, c in enumerate(columns):
            error = _check_usable(c, src, allow_string)
            if error is not None:
                coder.errors.append(((1, k), error))
        if no_class:
            class_index = None
        elif target is None:
            class_index = len(columns) - 1
        else:
            names = [c.name for c in columns]
            found = resolve(target, names)  # "Species" finds species when only one matches
            class_index = None if found is None else names.index(found)
            if class_index is None:
                what = (f"no attribute named {target!r} to use as the class"
                        f"{did_you_mean(target, names)}; attributes are: {quote_names(names, 50)}")
                coder.errors.append(((1, len(columns)), DataError(what, src)))
        coder.class_index = class_index
        j = 0
        for k, c in enumerate(columns):
            kind = kinds[k]
            out = None if k == class_index else j
            j += out is not None
            if kind == "numeric":
                coder.attributes.append(Attribute(c.name, "numeric"))
                slot = _Slot((2, k), k, c.name, "numeric", out)
            elif kind == "date" and c.date_format is not None:
                # Weka: a date is a number; the schema keeps its pattern for the data read later
                coder.attributes.append(Attribute(c.name, "numeric", date_format=c.date_format))
                slot = _Slot((2, k), k, c.name, "date", out, date_format=c.date_format)
            elif c.kind == "nominal":
                coder.attributes.append(Attribute(c.name, "nominal", c.values))
                slot = _Slot((2, k), k, c.name, "codes", out, values=c.values)
            else:
                coder.attributes.append(None)  # values known once every row is read
                slot = _Slot((2, k), k, c.name, "distinct", out, schema_kind=kind,
                             by_number=c.given and kind == "nominal")
            coder._place(slot)
        coder.X = np.empty((n_rows, j), dtype=np.float64)
        return coder

    @classmethod
    def for_schema(cls, columns: Sequence[Column], src: str, n_rows: int, schema: Schema,
                   read_class: bool, unknown: str = "error",
                   copy: Sequence[str] = ()) -> TableCoder:
        """A coder of cells against a training schema (see :func:`conform_to_schema`)."""
        coder = cls(src, n_rows)
        coder.schema = schema
        by_name = {c.name: k for k, c in enumerate(columns)}
        for i, name in enumerate(copy):
            if name in by_name:
                coder.copies[name] = (by_name[name], np.empty(n_rows, dtype=object))
            else:
                names = [c.name for c in columns]
                coder.errors.append(((0, i), DataError(
                    f"no attribute named {name!r} to copy to the output{did_you_mean(name, names)}; "
                    f"attributes are: {quote_names(names, 50)}", src)))
        j = 0
        for k, a in enumerate(schema.attributes):
            is_class = k == schema.class_index
            out = None if is_class else j
            j += not is_class
            if is_class and (not read_class or a.name not in by_name):
                continue
            if a.name not in by_name:
                coder.errors.append(((1, k), DataError(
                    f"attribute {a.name!r} of the training data is missing "
                    f"(the file has: {quote_names([c.name for c in columns])})", src)))
                continue
            c = columns[by_name[a.name]]
            if c.kind is None and a.date_format is not None:  # a CSV column: the training dates
                c = dataclasses.replace(c, kind="date", date_format=a.date_format)
            error = _check_usable(c, src, False) if c.kind == "date" else None
            dated = c.kind == "date" and c.date_format is not None  # read into numbers
            if (error is None and c.kind is not None
                    and (c.kind == "numeric" or dated) != (a.kind == "numeric")):
                error = DataError(f"attribute {a.name!r}{_declared(c)} is {c.kind} here but "
                                  f"{a.kind} in the training data", src)
            if error is not None:
                coder.errors.append(((1, k), error))
                continue
            if dated:
                slot = _Slot((1, k), by_name[a.name], a.name, "date", out, schema_kind=a.kind,
                             date_format=c.date_format)
            elif a.kind == "numeric":
                slot = _Slot((1, k), by_name[a.name], a.name, "numeric", out, schema_kind=a.kind)
            else:
                slot = _Slot((1, k), by_name[a.name], a.name, "codes", out, values=a.values,
                             training=True, lenient=unknown == "missing")
            coder._place(slot)
        coder.X = np.empty((n_rows, j), dtype=np.float64)
        return coder

    def _place(self, slot: _Slot) -> None:
        self.slots.append(slot)
        if slot.out is None:
            self.class_slot = slot
            numbers = slot.how in ("numeric", "date")
            self.y = np.empty(self.n_rows, dtype=np.float64 if numbers else np.int64)

    # ------------------------------------------------------------------ coding
    def add(self, table: Table) -> None:
        """Code the next chunk of rows (a table with the columns the coder was planned for).

        Raises
        ------
        DataError
            A CSV column or string attribute with more distinct values than
            :data:`~ensemblekit.readers.bounds.NOMINAL_VALUES` (or all of them
            more than :data:`~ensemblekit.readers.bounds.NOMINAL_TOTAL`).
        """
        if table.fast is not None and self._add_fast(table):
            return
        if table.fast is not None:
            table = table.slow()
        n = table.cells.shape[0]
        rows = slice(self.done, self.done + n)
        if rows.stop > self.n_rows:  # pragma: no cover - would be a bug in a reader
            raise DataError(f"internal error: more than {self.n_rows} rows", self.src)
        self.lines[rows] = table.lines
        if table.weights is not None:
            if self.weights is None:
                self.weights = np.ones(self.n_rows)
            self.weights[rows] = table.weights
        first = min([key for key, _ in self.errors], default=None)
        for slot in self.slots:
            if first is not None and slot.key > first:
                continue  # an earlier problem is raised whatever this column holds
            col = table.cells[:, slot.col]
            if slot.how == "numeric":
                values = self._numeric(slot, col, table)
            elif slot.how == "date":
                values = self._date(slot, col, table)
            elif slot.how == "codes":
                values = self._unseen(slot, rows, self._codes(slot, col, table))
            else:
                values = self._distinct(slot, col)
            self._put(rows, slot, values)
        for k, text in self.copies.values():
            text[rows] = _cell_text(table.columns[k], table.cells[:, k])
        self.done += n

    def _unseen(self, slot: _Slot, rows: slice, codes: np.ndarray) -> np.ndarray:
        """``codes`` with a value not seen in training (-2) read as missing (-1) when the slot
        is lenient, its rows marked in ``slot.unseen``; else ``codes`` unchanged."""
        if not slot.lenient:
            return codes
        bad = codes == -2
        if bad.any():
            if slot.unseen is None:
                slot.unseen = np.zeros(self.n_rows, dtype=bool)
            slot.unseen[rows] = bad
            codes = np.where(bad, -1, codes)
        return codes

    def _put(self, rows: slice, slot: _Slot, values: np.ndarray) -> None:
        if slot.out is None:
            self.y[rows] = values
        elif slot.how in ("numeric", "date"):
            self.X[rows, slot.out] = values
        else:
            self.X[rows, slot.out] = np.where(values < 0, np.nan, values)

    def _add_fast(self, table: Table) -> bool:
        """Code a table the vectorised engine parsed; False, coding nothing, when a value
        must be refused or reported (the rows are then read again the ordinary way)."""
        first = min([key for key, _ in self.errors], default=None)
        coded = []
        for slot in self.slots:
            column = table.fast[slot.col]
            if first is not None and slot.key > first:
                coded.append(None)
            elif slot.how == "numeric":
                values = column.numbers()
                if values is None:
                    return False
                coded.append(values)
            elif slot.how == "codes" and column.codes() is not None:
                tokens, index = column.codes()
                lut = slot.lut
                known = np.array([lut.get(v, -2) for v in tokens] + [-1], dtype=np.int64)
                if not slot.lenient and (known == -2).any() and (known[index] == -2).any():
                    return False
                coded.append(known[index])
            else:
                return False
        n = table.n_rows
        if self.done + n > self.n_rows:  # pragma: no cover - would be a bug in a reader
            raise DataError(f"internal error: more than {self.n_rows} rows", self.src)
        rows = slice(self.done, self.done + n)
        self.lines[rows] = table.lines
        if table.weights is not None:
            if self.weights is None:
                self.weights = np.ones(self.n_rows)
            self.weights[rows] = table.weights
        for slot, values in zip(self.slots, coded):
            if values is not None:
                self._put(rows, slot, self._unseen(slot, rows, values))
        for k, text in self.copies.values():
            text[rows] = _cell_text(table.columns[k], None, table.fast[k])
        self.done += n
        return True

    def _numeric(self, slot: _Slot, col: np.ndarray, table: Table) -> np.ndarray:
        out = _to_float(col)
        if out is None:
            if slot.not_number is None:
                i = next(i for i, v in enumerate(col) if v is not None and not _is_number(v))
                v = col[i]
                if slot.schema_kind is not None:
                    what = (f"attribute {slot.name!r} is numeric in the training data "
                            f"but here holds the non-number {quote_input(v)}")
                else:
                    what = f"value {quote_input(v)} is not numeric for attribute {slot.name!r}"
                slot.not_number = DataError(what, self.src, int(table.lines[i]))
            return np.full(len(col), np.nan)
        inf = np.isinf(out)
        if slot.infinite is None and inf.any():
            i = int(np.argmax(inf))
            slot.infinite = DataError(f"value {quote_input(col[i])} of attribute {slot.name!r} is "
                                      "not a finite number", self.src, int(table.lines[i]))
        return out

    def _date(self, slot: _Slot, col: np.ndarray, table: Table) -> np.ndarray:
        out, bad = slot.dates.parse_many(col)
        if bad >= 0 and slot.not_number is None:
            slot.not_number = DataError(
                f"value {quote_input(col[bad])} of attribute {slot.name!r} is not a date in the "
                f"format {slot.dates.pattern!r}", self.src, int(table.lines[bad]))
        return out

    def _codes(self, slot: _Slot, col: np.ndarray, table: Table) -> np.ndarray:
        lut = slot.lut
        codes = np.fromiter((lut.get(v, -2) for v in col), dtype=np.int64, count=len(col))
        bad = codes == -2
        if slot.undeclared is None and not slot.lenient and bad.any():
            i = int(np.argmax(bad))
            if slot.training:
                what = (f"value {quote_input(col[i])} of attribute {slot.name!r} was not seen in the "
                        f"training data (known values: {quote_names(slot.values)})")
            else:
                what = (f"value {quote_input(col[i])} is not declared for nominal attribute "
                        f"{slot.name!r} (declared: {quote_names(slot.values)})")
            slot.undeclared = DataError(what, self.src, int(table.lines[i]))
        return codes

    def _distinct(self, slot: _Slot, col: np.ndarray) -> np.ndarray:
        seen = slot.seen
        before = len(seen)
        ids = np.fromiter((-1 if v is None else seen.setdefault(v, len(seen)) for v in col),
                          dtype=np.int64, count=len(col))
        if len(seen) > before:
            if len(seen) > NOMINAL_VALUES.limit():
                raise DataError(NOMINAL_VALUES.exceeded(f"attribute {slot.name!r} holds"), self.src)
            total = sum(len(s.seen) + len(s.values) for s in self.slots)
            if total > NOMINAL_TOTAL.limit():
                raise DataError(NOMINAL_TOTAL.exceeded("the attributes hold"), self.src)
        return ids

    # ------------------------------------------------------------------ the result
    def dataset(self, name: str, relation: str) -> Dataset:
        """The data set of every row added.

        Raises
        ------
        DataError
            The first problem in attribute order: a date attribute, a string
            attribute unless allowed, an unknown target, a feature of the schema
            missing from the file or of another type, a value that is not a
            number for a numeric attribute, not declared (or not seen in
            training) for a nominal one, or not finite; with its line when it
            is known.
        """
        problems = list(self.errors)
        problems += [(slot.key, slot.error) for slot in self.slots if slot.error is not None]
        if problems:
            raise min(problems, key=lambda p: p[0])[1]
        if self.done != self.n_rows:  # pragma: no cover - would be a bug in a reader
            raise DataError(f"internal error: {self.done} rows read but {self.n_rows} found",
                            self.src)
        for k, slot in enumerate(self.slots):
            if slot.how != "distinct":
                continue
            values = sorted(slot.seen)
            if slot.by_number and all(map(_is_number, values)):
                values.sort(key=lambda v: (float(v), v))
            rank = np.empty(len(values) + 1, dtype=np.int64)
            rank[[slot.seen[v] for v in values]] = np.arange(len(values))
            rank[-1] = -1  # a missing value (-1) stays missing
            if slot.out is None:
                self.y = rank[self.y]
            else:
                col = self.X[:, slot.out]
                known = ~np.isnan(col)
                col[known] = rank[col[known].astype(np.int64)]
            self.attributes[k] = Attribute(slot.name, slot.schema_kind, tuple(values))
        if self.schema is None:
            schema = Schema(relation, tuple(self.attributes), self.class_index)
            y = self.y if self.class_slot is not None else None
        else:
            schema = self.schema
            y = self.y
        ds = Dataset(name, self.src, schema, self.X, y, self.lines, weights=self.weights)
        unseen = {s.name: s.unseen for s in self.slots if s.unseen is not None and s.unseen.any()}
        if unseen:
            ds.unseen = unseen
        if self.copies:
            ds.texts = {name: text for name, (_, text) in self.copies.items()}
        return ds


def conform_to_schema(table: Table, src: str, name: str, schema: Schema, *,
                      read_class: bool = True, unknown: str = "error",
                      copy: Sequence[str] = ()) -> Dataset:
    """Code a table's cells against a training schema (attributes matched by name).

    Columns the schema does not name are dropped; nominal values are coded in
    the schema's value order; a CSV column takes the schema's kind.

    Parameters
    ----------
    table : Table
        The cells, as a reader returns them.
    src : str
        The input as shown in messages.
    name : str
        Name of the data set.
    schema : Schema
        The training schema; the returned data set carries it.
    read_class : bool, default=True
        False leaves the class column unread (``y`` is None), so any value in
        it, or its absence, gives the same features: prediction does not use
        it. With True, a class value unseen in training is an error, as for
        any nominal attribute (unless ``unknown`` is ``"missing"``), and a
        file without the class column gives ``y`` None.
    unknown : {"error", "missing"}, default="error"
        A nominal value not seen in training is an error, or is read as
        missing (as Weka's InputMappedClassifier reads it); the rows it was
        read so in are then in ``Dataset.unseen``, by attribute.
    copy : sequence of str, default=()
        Names of columns of the file (in the schema or not) whose cells are
        also kept as text, in ``Dataset.texts`` (see :func:`_cell_text`).

    Returns
    -------
    Dataset
        ``X`` of shape (n_rows, len(schema.features)), float64 with NaN for
        missing, in the schema's order; ``y`` int64 codes (-1 missing) for a
        nominal class, float64 for a numeric one, or None.

    Raises
    ------
    DataError
        A feature of the schema is missing, an attribute is numeric in one and
        not in the other, a date attribute, a value that is not a finite
        number, or a nominal value not seen in training; each with the line it
        is on when it is known. A name in ``copy`` that is not a column of the
        file.
    """
    if unknown not in ("error", "missing"):
        raise DataError(f"unknown must be 'error' or 'missing', not {unknown!r}", src)
    coder = TableCoder.for_schema(table.columns, src, table.n_rows, schema, read_class,
                                  unknown, copy)
    coder.add(table)
    return coder.dataset(name, table.relation)
