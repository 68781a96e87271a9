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

import csv
import gzip
import io
import math
import numbers
import os
import re
import shlex
import sys
import warnings
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import arff
import numpy as np

from ensemblekit.errors import InputError

__all__ = [
    "Attribute",
    "DataError",
    "Dataset",
    "Schema",
    "known_class",
    "load_dataset",
    "write_arff",
]

KINDS = ("numeric", "nominal", "string")

# Cell values of a CSV file read as missing: the empty field, Weka's '?', and the
# tokens spreadsheets, R and pandas write (NA and NaN in any case).
_CSV_MISSING = frozenset(
    {"?", "", "N/A", "n/a", "null", "None", "-"}
    | {a + b for a in "nN" for b in "aA"}
    | {a + b + c for a in "nN" for b in "aA" for c in "nN"}
)

# A CSV column read as nominal although at least this share of its present values
# are numbers gets a note naming the first value that is not.
_MOSTLY_NUMERIC = 0.9
# Notes of that kind given per file, at most (then one note counts the rest).
_MAX_COLUMN_NOTES = 5

# Compressed input: gzip is recognised by its first two bytes (RFC 1952, 2.3.1).
_GZIP_MAGIC = b"\x1f\x8b"
# Largest decompressed size of a gzip input, so that a small file that inflates
# to gigabytes (a "gzip bomb") is refused instead of filling the memory. The same
# policy as model files (persistence.max_model_bytes): MiB, raised by a variable.
_DEFAULT_MAX_GUNZIP_MB = 1024
_GUNZIP_LIMIT_VARIABLE = "ENSEMBLEKIT_MAX_DATA_MB"

# Byte order marks, longest first (a UTF-32-LE mark starts like a UTF-16-LE one).
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig", "UTF-8"),
    (b"\xff\xfe\x00\x00", "utf-32", "UTF-32"),
    (b"\x00\x00\xfe\xff", "utf-32", "UTF-32"),
    (b"\xff\xfe", "utf-16", "UTF-16"),
    (b"\xfe\xff", "utf-16", "UTF-16"),
)

# Longest piece of input quoted inside an error message.
_SHOW = 60


class _Absent:
    """Marks an attribute left out of a sparse ARFF row (it means value 0)."""

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "<absent>"


_ABSENT = _Absent()


# --------------------------------------------------------------------------
# Public types
# --------------------------------------------------------------------------
class DataError(InputError):
    """A data file cannot be read as a data set.

    ``str(error)`` is one line: the file as it was given (``<stdin>`` for
    standard input), the line number when it is known, and what is wrong,
    for example ``"iris.arff, line 57: value 'foo' is not numeric for
    attribute 'sepallength'"``.

    Parameters
    ----------
    what : str
        What is wrong (one line).
    source : str, optional
        The file as given by the caller.
    line : int, optional
        1-based line number in the file.

    Attributes
    ----------
    what, source, line
        The parts of the message, for callers that format errors themselves.
    """

    def __init__(self, what: str, source: str | None = None, line: int | None = None):
        self.what = what
        self.source = source
        self.line = line
        where = ""
        if source is not None:
            where = source if line is None else f"{source}, line {line}"
        elif line is not None:
            where = f"line {line}"
        message = f"{where}: {what}" if where else what
        super().__init__(" ".join(message.split("\n")))


@dataclass(frozen=True)
class Attribute:
    """One column of a data set.

    Parameters
    ----------
    name : str
        Attribute name as written in the file.
    kind : {"numeric", "nominal", "string"}
        ``"numeric"`` for ARFF numeric/real/integer attributes and CSV columns
        that hold only numbers; ``"nominal"`` for ARFF ``{...}`` attributes and
        other CSV columns; ``"string"`` for ARFF string attributes (kept only
        when the caller allows them).
    values : tuple of str
        For nominal and string attributes, the values whose positions are the
        integer codes: the declared values in declared order (ARFF), or the
        sorted distinct values seen (CSV columns, string attributes). Empty for
        numeric attributes.

    Raises
    ------
    ValueError
        Unknown kind, values given for a numeric attribute, or a value listed
        twice.
    """

    name: str
    kind: str
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"attribute {self.name!r}: kind must be one of {KINDS}, not {self.kind!r}")
        values = tuple(str(v) for v in self.values)
        if self.kind == "numeric" and values:
            raise ValueError(f"attribute {self.name!r}: a numeric attribute has no values")
        if len(set(values)) != len(values):
            seen: set[str] = set()
            twice = next(v for v in values if v in seen or seen.add(v))
            raise ValueError(f"attribute {self.name!r}: value {twice!r} is listed twice")
        object.__setattr__(self, "name", str(self.name))
        object.__setattr__(self, "values", values)

    def to_dict(self) -> dict:
        """Return ``{"name", "kind", "values"}`` (JSON-serialisable)."""
        return {"name": self.name, "kind": self.kind, "values": list(self.values)}


@dataclass(frozen=True)
class Schema:
    """Names and kinds of a data set's attributes, and which one is the class.

    A model keeps the schema of its training data so that new data can be
    checked and coded the same way (``load_dataset(..., schema=...)``).

    Parameters
    ----------
    relation : str
        ARFF ``@relation`` name (for CSV files, the file stem).
    attributes : tuple of Attribute
        Every kept attribute, in file order, the class included.
    class_index : int or None
        Index of the class attribute in ``attributes``; None when the data has
        no class (clustering).

    Raises
    ------
    ValueError
        Two attributes with one name, or ``class_index`` out of range.
    """

    relation: str
    attributes: tuple[Attribute, ...]
    class_index: int | None

    def __post_init__(self) -> None:
        attributes = tuple(self.attributes)
        for a in attributes:
            if not isinstance(a, Attribute):
                raise ValueError(f"schema attributes must be Attribute objects, not {type(a).__name__}")
        names = [a.name for a in attributes]
        if len(set(names)) != len(names):
            seen: set[str] = set()
            twice = next(n for n in names if n in seen or seen.add(n))
            raise ValueError(f"schema: attribute name {twice!r} appears twice")
        ci = self.class_index
        if ci is not None:
            if (isinstance(ci, bool) or not isinstance(ci, numbers.Integral)
                    or not 0 <= ci < len(attributes)):
                raise ValueError(f"schema: class_index {ci!r} is not an index into "
                                 f"{len(attributes)} attributes")
            ci = int(ci)
        object.__setattr__(self, "relation", str(self.relation))
        object.__setattr__(self, "attributes", attributes)
        object.__setattr__(self, "class_index", ci)

    @property
    def features(self) -> tuple[Attribute, ...]:
        """All attributes but the class, in file order (the columns of ``X``)."""
        return tuple(a for i, a in enumerate(self.attributes) if i != self.class_index)

    @property
    def class_attribute(self) -> Attribute | None:
        """The class attribute, or None when the data has no class."""
        return None if self.class_index is None else self.attributes[self.class_index]

    def to_dict(self) -> dict:
        """Return a JSON-serialisable dict with a fixed key order.

        Keys: ``relation``, ``attributes`` (list of ``{name, kind, values}``),
        ``class_index``.
        """
        return {
            "relation": self.relation,
            "attributes": [a.to_dict() for a in self.attributes],
            "class_index": self.class_index,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Schema:
        """Rebuild a schema from :meth:`to_dict` output.

        Raises
        ------
        ValueError
            A key is missing or a value has the wrong form.
        """
        try:
            attributes = tuple(
                Attribute(a["name"], a["kind"], tuple(a.get("values", ()))) for a in d["attributes"]
            )
            return cls(d["relation"], attributes, d["class_index"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a schema dict ({type(exc).__name__}: {exc})") from None


@dataclass
class Dataset:
    """A data file read into arrays.

    Attributes
    ----------
    name : str
        File stem (``"iris"``), or for standard input the ``@relation`` name
        (``"stdin"`` for CSV).
    source : str
        The path as given, or ``"<stdin>"``.
    schema : Schema
        Attribute names, kinds and values; the class attribute.
    X : ndarray of shape (n_instances, len(schema.features)), float64
        Numeric attributes as read; nominal (and allowed string) attributes as
        integer codes 0..r-1 into ``Attribute.values``; NaN marks a missing
        value.
    y : ndarray of shape (n_instances,) or None
        Nominal class: int64 codes into ``schema.class_attribute.values``, -1
        for missing. Numeric class: float64, NaN for missing. None when there
        is no class (or, when conforming to a training schema, when the file
        lacks the class attribute).
    lines : ndarray of shape (n_instances,), int64
        1-based line in the file where each row starts, for messages.
    format : {"arff", "csv"}
        The file format; in CSV the attribute kinds are inferred, not declared.
    """

    name: str
    source: str
    schema: Schema
    X: np.ndarray
    y: np.ndarray | None
    lines: np.ndarray
    format: str = "arff"

    @property
    def n_instances(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    def take(self, rows, name: str | None = None) -> Dataset:
        """The data set of the given rows, in the given order.

        Parameters
        ----------
        rows : array-like of int, shape (n_rows,)
            Row indices.
        name : str, optional
            Name of the new data set (default: this one's).
        """
        rows = np.asarray(rows, dtype=np.intp)
        return replace(self, name=self.name if name is None else name, X=self.X[rows],
                       y=None if self.y is None else self.y[rows], lines=self.lines[rows])

    @property
    def class_values(self) -> tuple[str, ...]:
        """Class labels in code order; ``()`` for a numeric class or no class."""
        ca = self.schema.class_attribute
        return () if ca is None else ca.values

    def class_as_feature(self) -> Dataset:
        """Return the data set with its class attribute turned into an ordinary feature.

        The attribute keeps its place in file order among the features (as
        ``load_dataset(..., no_class=True)`` would read it, without reading the
        file again); a nominal class becomes a nominal feature with its codes
        (missing = NaN).

        Returns
        -------
        Dataset
            ``self`` when there is no class, else a copy with ``y`` None and
            ``X`` of shape (n_instances, n_features + 1).
        """
        ci = self.schema.class_index
        if ci is None:
            return self
        column = np.asarray(self.y, dtype=np.float64).copy()
        if self.schema.attributes[ci].kind != "numeric":
            column[np.asarray(self.y) < 0] = np.nan
        X = np.insert(self.X, ci, column, axis=1)  # ci features precede the class
        schema = Schema(self.schema.relation, self.schema.attributes, None)
        return Dataset(self.name, self.source, schema, X, None, self.lines, self.format)

    def with_nominal_class(self, max_classes: int = 100) -> Dataset:
        """Return the data set with an inferred numeric CSV class turned nominal.

        A CSV column of class labels written as whole numbers (``0``/``1``,
        ``1``/``2``/``3``) is inferred numeric; classifiers need it nominal. Its
        distinct values become the nominal values in increasing numeric order,
        written as integers (``"1"``, not ``"1.0"``). A class *declared*
        numeric (ARFF), or holding fractions or more than ``max_classes``
        distinct values, is a regression target and is left alone.

        Parameters
        ----------
        max_classes : int, default=100
            Most distinct values a column may hold to be read as class labels.

        Returns
        -------
        Dataset
            ``self`` when nothing applies, else a copy with a nominal class
            attribute and int64 codes (-1 = missing).
        """
        ca = self.schema.class_attribute
        if ca is None or ca.kind != "numeric" or self.y is None or self.format != "csv":
            return self
        present = ~np.isnan(self.y)
        distinct = np.unique(self.y[present])
        if distinct.size > max_classes or not np.all(distinct == np.round(distinct)):
            return self
        values = tuple(str(int(v)) for v in distinct)
        codes = np.full(self.y.shape, -1, dtype=np.int64)
        codes[present] = np.searchsorted(distinct, self.y[present])
        attributes = list(self.schema.attributes)
        attributes[self.schema.class_index] = Attribute(ca.name, "nominal", values)
        schema = Schema(self.schema.relation, tuple(attributes), self.schema.class_index)
        return Dataset(self.name, self.source, schema, self.X, codes, self.lines, self.format)

    def split_targets(self, names: Sequence[str]) -> tuple[Dataset, np.ndarray, tuple[str, ...]]:
        """Move some feature attributes out of ``X`` into a numeric target matrix.

        For semi-supervised clustering (SS-ISCA, Akdemir & Jannink 2014, Sect. 3):
        the named attributes become the target matrix ``Y`` and are no longer
        clustered. A numeric attribute gives one column, as it is; a nominal
        one gives one 0/1 indicator column per declared value (``attr=value``).
        A missing value is replaced by its column's mean over the rows that
        have one (for a nominal attribute: each indicator column's mean, i.e.
        the share of each value).

        Parameters
        ----------
        names : sequence of str
            Feature attributes to move, at least one, each once; ``Y``'s columns
            follow this order.

        Returns
        -------
        features : Dataset
            A copy without those attributes (the class, if any, is kept).
        Y : ndarray of shape (n_instances, n_target_columns), float64
            No missing values.
        columns : tuple of str
            Name of each column of ``Y``.

        Raises
        ------
        DataError
            If ``names`` is empty or repeats a name, names an attribute the data
            does not have (the message lists the attributes) or the class
            attribute, or if a named attribute has no value in any row.
        """
        names = [str(n) for n in names]
        if not names:
            raise DataError("no target attributes named", self.source)
        twice = [n for i, n in enumerate(names) if n in names[:i]]
        if twice:
            raise DataError(f"target attribute {twice[0]!r} is named twice", self.source)
        features = self.schema.features
        position = {a.name: j for j, a in enumerate(features)}
        ca = self.schema.class_attribute
        for name in names:
            if ca is not None and name == ca.name:
                raise DataError(f"{name!r} is the class attribute, not a feature; a target must "
                                "be a feature (read the file without a class to use it)", self.source)
            if name not in position:
                raise DataError(f"no attribute {name!r} to use as a target; attributes: "
                                f"{_names(a.name for a in features)}", self.source)
        blocks, columns = [], []
        for name in names:
            attribute, raw = features[position[name]], self.X[:, position[name]]
            missing = np.isnan(raw)
            if missing.all():
                raise DataError(f"target attribute {name!r} has no values", self.source)
            if attribute.kind == "numeric":
                block = raw[:, None].copy()
                columns.append(name)
            else:
                block = (raw[:, None] == np.arange(len(attribute.values))[None, :]).astype(np.float64)
                block[missing] = np.nan
                columns.extend(f"{name}={value}" for value in attribute.values)
            means = np.nanmean(block, axis=0)
            block[missing] = means
            blocks.append(block)
        Y = np.hstack(blocks)
        dropped = {position[name] for name in names}
        keep = [j for j in range(len(features)) if j not in dropped]
        kept_names = {features[j].name for j in keep}
        attributes = tuple(a for i, a in enumerate(self.schema.attributes)
                           if i == self.schema.class_index or a.name in kept_names)
        class_index = None if ca is None else attributes.index(ca)
        schema = Schema(self.schema.relation, attributes, class_index)
        reduced = Dataset(self.name, self.source, schema, self.X[:, keep], self.y, self.lines,
                          self.format)
        return reduced, Y, tuple(columns)


def known_class(y) -> np.ndarray:
    """Mark the rows whose class is known, for a class vector as :class:`Dataset` holds it.

    A nominal class (classification, and the external indices of clustering)
    is an integer array of codes into the class values with -1 for a missing
    value: a row's class is known when its code is ``>= 0``. A numeric class
    (a regression target) is a float array with NaN for a missing value: a
    row's target is known when it is not NaN, whatever its sign. Which of the
    two ``y`` is comes from its dtype.

    Parameters
    ----------
    y : array-like of shape (n_instances,)
        Integer class codes (-1 = missing) or floating-point targets
        (NaN = missing).

    Returns
    -------
    ndarray of shape (n_instances,), bool
        True where the class is known.

    Raises
    ------
    TypeError
        If ``y`` holds neither integers nor floating-point numbers.

    Examples
    --------
    >>> known_class(np.array([0, 2, -1, 1]))
    array([ True,  True, False,  True])
    >>> known_class(np.array([1.5, np.nan, -3.0]))
    array([ True, False,  True])
    """
    y = np.asarray(y)
    if y.dtype.kind in "iu":
        return y >= 0
    if y.dtype.kind == "f":
        return ~np.isnan(y)
    raise TypeError(f"a class vector holds integer codes or float targets, not {y.dtype}")


# --------------------------------------------------------------------------
# Internal table: attribute declarations + raw cell tokens
# --------------------------------------------------------------------------
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


def _show(text: str, limit: int = _SHOW) -> str:
    """Quote a piece of input for a one-line message."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return repr(text)


def _names(names: Iterable[str], limit: int = 20) -> str:
    names = [repr(n) for n in names]
    if len(names) > limit:
        names = names[:limit] + [f"... ({len(names) - limit} more)"]
    return ", ".join(names)


# --------------------------------------------------------------------------
# ARFF
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


def _liac_error_text(exc: Exception) -> str:
    text = str(exc) if isinstance(exc, arff.ArffException) and exc.message else type(exc).__name__
    return re.sub(r",? ?(at|in)? line -?\d+\.?", "", text).strip(" .:")


def _parse_arff_header(lines: list[str], src: str) -> tuple[str, list[_Column], int]:
    """Scan the header; return (relation, columns, index of the @data line)."""
    relation: str | None = None
    columns: list[_Column] = []
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
            raise DataError(f"expected '@relation' to start the ARFF header, found {_show(s)}", src, lineno)
        if keyword == "relation":
            if relation is not None:
                raise DataError("a second @relation line (the header must hold exactly one)", src, lineno)
            if not rest:
                raise DataError("@relation has no name", src, lineno)
            split = _split_quoted(rest)
            if split is None:
                raise DataError(f"unclosed quote in {_show(s)}", src, lineno)
            relation = split[0] if rest[0] in "'\"" else rest
        elif keyword == "attribute":
            split = _split_quoted(rest) if rest else ("", "")
            if split is None:
                raise DataError(f"unclosed quote in the attribute name: {_show(s)}", src, lineno)
            name, spec = split
            if not name:
                raise DataError(f"@attribute without a name: {_show(s)}", src, lineno)
            if name in declared:
                raise DataError(
                    f"attribute {name!r} is declared twice (first on line {declared[name]})", src, lineno
                )
            declared[name] = lineno
            if not spec:
                raise DataError(f"attribute {name!r} has no type", src, lineno)
            if spec.startswith("{"):
                if not spec.endswith("}"):
                    what = f"attribute {name!r}: the value list {_show(spec)} is not closed with '}}'"
                    raise DataError(what, src, lineno)
                if not spec[1:-1].strip():
                    raise DataError(f"attribute {name!r} declares no nominal values", src, lineno)
                nominal_specs[i] = spec
                columns.append(_Column(name, "nominal", (), lineno))
                continue
            tm = _RE_TYPE_WORD.match(spec)
            word = tm.group(1).lower() if tm else ""
            tail = tm.group(2).strip() if tm else spec
            if word in ("numeric", "real", "integer"):
                # Weka reads, and ignores, an old range suffix: integer [1,10]
                if tail and not _RE_RANGE.match(tail):
                    what = f"attribute {name!r}: unexpected {_show(tail)} after the type {word!r}"
                    raise DataError(what, src, lineno)
                columns.append(_Column(name, "numeric", (), lineno))
            elif word == "string" and not tail:
                columns.append(_Column(name, "string", (), lineno))
            elif word == "date":
                columns.append(_Column(name, "date", (), lineno))
            elif word == "relational":
                raise DataError(
                    f"attribute {name!r} is a relational (multi-instance) attribute, "
                    "which ensemblekit does not read",
                    src,
                    lineno,
                )
            else:
                raise DataError(
                    f"attribute {name!r} has unknown type {_show(spec)} "
                    "(expected numeric, real, integer, string, date or {value, ...})",
                    src,
                    lineno,
                )
        elif keyword == "data":
            if rest and not rest.startswith("%"):
                raise DataError(f"unexpected text after @data: {_show(rest)}", src, lineno)
            data_index = i
            break
        elif keyword == "end":
            raise DataError("'@end' outside a relational attribute", src, lineno)
        else:
            raise DataError(
                f"unexpected text in the ARFF header: {_show(s)} (expected @attribute or @data)", src, lineno
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
                what = f"cannot read the nominal values {_show(nominal_specs[bad])}"
            else:
                what = "cannot read a nominal value list"
            raise DataError(f"{what} ({_liac_error_text(exc)})", src,
                            None if lineno is None else lineno + 1) from None
        by_line = {c.line: c for c in columns}
        for (i, _), (_, values) in zip(nominal_specs.items(), parsed):
            col = by_line[i + 1]
            values = tuple(values)
            if len(set(values)) != len(values):
                seen: set[str] = set()
                twice = next(v for v in values if v in seen or seen.add(v))
                raise DataError(f"attribute {col.name!r} declares the value {twice!r} twice", src, i + 1)
            col.values = values
    return relation, columns, data_index


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
                what = f"expected {n_cols} values (one per attribute), found {len(parsed)}: {_show(row)}"
            else:
                what = f"wrong number of values (expected {n_cols}): {_show(row)}"
        elif isinstance(exc, arff.BadLayout):
            what = (
                f"malformed data row {_show(row)} (values must be separated by commas; "
                "quote values that hold spaces, commas or quotes)"
            )
        else:
            detail = _liac_error_text(exc) if isinstance(exc, arff.ArffException) else str(exc)
            what = f"cannot read the data row {_show(row)} ({detail})"
        raise DataError(what, src, lineno) from None


def _parse_arff(text: str, src: str) -> _Table:
    lines = text.split("\n")
    relation, columns, data_index = _parse_arff_header(lines, src)
    m = len(columns)

    # Header of string attributes at the original line positions, so that
    # liac-arff only tokenises and every line number stays right.
    head = [""] * (data_index + 1)
    head[0] = "@relation r"
    for k, c in enumerate(columns):
        head[c.line - 1] = f"@attribute a{k} STRING"
    head[data_index] = "@data"

    data_idx: list[int] = []
    sparse_pos: list[int] = []
    for i in range(data_index + 1, len(lines)):
        s = lines[i].strip()
        if s and s[0] != "%":
            if s[0] == "{":
                sparse_pos.append(len(data_idx))
            data_idx.append(i)
    n = len(data_idx)
    if n == 0:
        raise DataError("no data rows after @data", src, data_index + 1)
    line_numbers = np.asarray(data_idx, dtype=np.int64) + 1

    body = lines[data_index + 1 :]
    if not sparse_pos:
        rows = _decode_rows(head + body, lines, m, False, src)
        if len(rows) != n:  # pragma: no cover - would be a bug in the line scan
            raise DataError(f"internal error: {len(rows)} rows read but {n} data lines found", src)
        cells = np.empty((n, m), dtype=object)
        cells[:, :] = rows
    else:
        sparse_lines = {data_idx[p] for p in sparse_pos}
        offset = data_index + 1
        dense_body = ["" if (offset + j) in sparse_lines else t for j, t in enumerate(body)]
        sparse_body = [t if (offset + j) in sparse_lines else "" for j, t in enumerate(body)]
        is_sparse = np.zeros(n, dtype=bool)
        is_sparse[sparse_pos] = True
        cells = np.empty((n, m), dtype=object)
        if len(sparse_pos) < n:
            cells[~is_sparse, :] = _decode_rows(head + dense_body, lines, m, False, src)
        sparse_rows = _decode_rows(head + sparse_body, lines, m, True, src)
        block = np.empty((len(sparse_rows), m), dtype=object)
        block[:, :] = _ABSENT
        for r, row in enumerate(sparse_rows):
            for k, v in row.items():
                block[r, k] = v
        cells[is_sparse, :] = block
        # An attribute left out of a sparse row has value 0: the number 0, or
        # the first declared value of a nominal attribute (as in Weka). A left
        # out string or date value is read as missing.
        for k, c in enumerate(columns):
            col = cells[:, k]
            absent = np.fromiter((v is _ABSENT for v in col), dtype=bool, count=n)
            if absent.any():
                fill = "0" if c.kind == "numeric" else (c.values[0] if c.kind == "nominal" else None)
                col[absent] = fill
    return _Table(relation, columns, cells, line_numbers, "arff")


# --------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------
_DELIMITERS = (",", ";", "\t")


def _count_outside_quotes(line: str, ch: str) -> int:
    count, quoted = 0, False
    for c in line:
        if c == '"':
            quoted = not quoted
        elif c == ch and not quoted:
            count += 1
    return count


def _guess_delimiter(header: str, following: list[str]) -> str:
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


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parse_csv(text: str, src: str, relation: str, delimiter: str | None, *,
               decimal: str | None = None, missing: frozenset[str] = _CSV_MISSING,
               header: bool | None = None, notify: Callable[[str], None] | None = None) -> _Table:
    """Split CSV text into named columns of str/None cells (None = missing).

    ``decimal``: ``"."``, ``","`` or None (a ``;``-separated file's columns whose
    numbers use ``,`` as decimal mark are read so; said in a note). Numbers read
    with a decimal comma are stored with a point, so that later steps parse them.
    ``header``: True (the first row names the columns), False (it is data; the
    columns are named att1..attN as Weka's CSVLoader names them) or None (data
    when its values fit the columns below; said in a note). ``notify`` receives
    the notes; the note on a mostly numeric column read as nominal is kept on
    the column instead (it is said only if the column is kept).
    """
    lines = text.split("\n")
    first = next((i for i, t in enumerate(lines) if t.strip()), None)
    if first is None:
        raise DataError("the file is empty", src)
    if delimiter is None:
        following = [t for t in lines[first + 1 : first + 40] if t.strip()][:5]
        delimiter = _guess_delimiter(lines[first], following)
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
    return _csv_table(records, record_lines, src, relation, delimiter, decimal=decimal,
                      missing=missing, header=header, notify=say)


def _csv_table(records: list[list[str]], record_lines: list[int], src: str, relation: str,
               delimiter: str, *, decimal: str | None = None,
               missing: frozenset[str] = _CSV_MISSING, header: bool | None = None,
               notify: Callable[[str], None] | None = None) -> _Table:
    """Named columns of str/None cells from CSV records already split into stripped fields.

    ``records`` hold at least one record, all of one length; ``record_lines`` give
    each record's line in the file. The header rule, decimal mark and notes are
    those of :func:`_parse_csv` (which splits the text and calls this); the
    streaming reader calls it with the records of one chunk.
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
                f"no header row: the first row holds only numbers ({_show(delimiter.join(top))}); "
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
    columns = [_Column(h, None, (), None) for h in names]
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
        say(f"note: {src}: read ',' as the decimal mark in {_names(comma_columns, 3)} "
            f"(';'-separated, with numbers such as {_show(value)} on line {line}); "
            "--decimal . reads them otherwise")
    return _Table(relation, columns, cells, lines_arr, "csv")


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
            f"values are numbers: line {line} holds {_show(value)}; {fix}")


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
# Reading the input
# --------------------------------------------------------------------------
def _max_gunzip_bytes(src: str) -> int:
    """Largest decompressed size of a gzip input, in bytes (see ``_DEFAULT_MAX_GUNZIP_MB``)."""
    text = os.environ.get(_GUNZIP_LIMIT_VARIABLE)
    if text is None:
        return _DEFAULT_MAX_GUNZIP_MB << 20
    try:
        value = int(text)
        if value < 1:
            raise ValueError
    except ValueError:
        raise DataError(f"{_GUNZIP_LIMIT_VARIABLE}={text!r}: expected a whole number of MiB >= 1",
                        src) from None
    return value << 20


class _BoundedGunzip(io.RawIOBase):
    """A gzip stream that stops with a :class:`DataError` past a decompressed size.

    Reads every member of a multi-member file (as ``gzip -d`` does); a damaged
    or truncated stream is a :class:`DataError` too.
    """

    def __init__(self, raw: BinaryIO, src: str):
        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self._src = src
        self._limit = _max_gunzip_bytes(src)
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            n = self._gz.readinto(buffer)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(f"cannot decompress the gzip data ({exc})", self._src) from None
        self._count += n
        if self._count > self._limit:
            raise DataError(
                f"the gzip data decompresses to more than {self._limit >> 20} MiB, the limit for "
                f"compressed input (set {_GUNZIP_LIMIT_VARIABLE} to a larger number of MiB to allow it)",
                self._src,
            )
        return n


def _open_input(source: Any, stdin: BinaryIO | None) -> tuple[BinaryIO, str, str | None, str]:
    """Open a data source for reading bytes, decompressing gzip (found by its magic bytes).

    Returns (binary stream, source as shown, format suffix or None for stdin,
    name). For ``x.csv.gz`` the suffix is ``".csv"`` and the name ``"x"``. The
    caller closes the stream.
    """
    if isinstance(source, str) and source == "-":
        if stdin is None and sys.stdin is None:  # descriptor 0 was closed when Python started
            raise DataError("standard input is closed", "<stdin>")
        stream: BinaryIO = stdin if stdin is not None else sys.stdin.buffer
        src, suffix, name = "<stdin>", None, "stdin"
    else:
        try:
            path = os.fspath(source)
        except TypeError:
            raise TypeError(f"source must be a path or '-', not {type(source).__name__}") from None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        try:
            stream = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
        except FileNotFoundError:
            raise DataError("no such file", path) from None
        except IsADirectoryError:
            raise DataError("is a directory, not a data file", path) from None
        except PermissionError:
            raise DataError("permission denied", path) from None
        except OSError as exc:
            raise DataError(f"cannot read the file ({exc.strerror or exc})", path) from None
        base = Path(path[:-3] if path.lower().endswith(".gz") else path)
        src, suffix, name = path, base.suffix.lower(), base.stem
    if not hasattr(stream, "peek"):
        stream = io.BufferedReader(stream)  # type: ignore[arg-type]
    try:
        magic = stream.peek(2)[:2]
    except OSError as exc:
        raise DataError(f"cannot read the input ({exc.strerror or exc})", src) from None
    if magic == _GZIP_MAGIC:
        stream = io.BufferedReader(_BoundedGunzip(stream, src), buffer_size=1 << 16)
    return stream, src, suffix, name


def _read_bytes(source: Any, stdin: BinaryIO | None) -> tuple[bytes | str, str, str | None]:
    """Return (content, source as shown, file suffix or None for stdin); gzip is decompressed."""
    stream, src, suffix, _ = _open_input(source, stdin)
    try:
        content = stream.read()
    except OSError as exc:
        raise DataError(f"cannot read the file ({exc.strerror or exc})", src) from None
    finally:
        if source != "-":
            stream.close()
    return content, src, suffix


def _decode_text(content: bytes | str, src: str = "<input>",
                 notify: Callable[[str], None] | None = None) -> str:
    """Bytes -> text with ``\\n`` line ends.

    A byte order mark selects UTF-8, UTF-16 or UTF-32 (either byte order);
    without one the text is UTF-8, or, when it is not valid UTF-8, Latin-1
    (every byte sequence decodes), which ``notify`` is told.
    """
    if isinstance(content, str):
        text = content[1:] if content.startswith("\ufeff") else content
    else:
        for bom, codec, shown in _BOMS:
            if content.startswith(bom):
                try:
                    text = content.decode(codec)
                except UnicodeDecodeError as exc:
                    raise DataError(f"not valid {shown} text although it starts with a {shown} byte "
                                    f"order mark (bad bytes at offset {exc.start})", src) from None
                text = text[1:] if text.startswith("\ufeff") else text
                break
        else:
            try:
                text = content.decode("utf-8")
            except UnicodeDecodeError as exc:
                # Old Weka files are often Latin-1; every byte sequence decodes.
                text = content.decode("latin-1")
                if notify is not None:
                    line = content.count(b"\n", 0, exc.start) + 1
                    notify(f"note: {src}: not UTF-8 (byte 0x{content[exc.start]:02x} on line {line}), "
                           "so it is read as Latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


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
        raise ValueError(f"name {name!r} cannot be written to ARFF")
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
        raise ValueError("write_arff needs at least one attribute")
    stream.write(f"@relation {_quote_name(relation)}\n\n")
    lookups: list[frozenset[str] | None] = []
    for a in attributes:
        if a.kind == "numeric":
            decl = "numeric"
            lookups.append(None)
        elif a.kind == "nominal":
            if not a.values:
                raise ValueError(f"nominal attribute {a.name!r} has no values")
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
            raise ValueError(f"row {r}: {len(row)} values for {m} attributes")
        tokens = []
        for a, allowed, v in zip(attributes, lookups, row):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                tokens.append("?")
            elif a.kind == "numeric":
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                    raise ValueError(f"row {r}: {v!r} is not a number for numeric attribute {a.name!r}")
                if isinstance(v, numbers.Integral):
                    tokens.append(str(int(v)))
                else:
                    f = float(v)
                    tokens.append("?" if math.isnan(f) else repr(f))
            else:
                if not isinstance(v, str):
                    raise ValueError(f"row {r}: {v!r} is not a string for attribute {a.name!r}")
                if allowed is not None and v not in allowed:
                    raise ValueError(f"row {r}: {v!r} is not a declared value of attribute {a.name!r}")
                tokens.append(_quote_value(v))
        stream.write(",".join(tokens) + "\n")
