"""Attribute, Schema and Dataset: what a data file becomes once it is read.

A :class:`Dataset` holds a float matrix ``X`` of the features, a class vector
``y`` and a :class:`Schema` that records every attribute's name, kind (numeric,
nominal or string) and, for nominal attributes, the declared values whose
positions are the integer codes used in ``X`` and ``y``. The readers
(:mod:`ensemblekit.readers`) build it; every problem with the input is a
:class:`DataError`, whose text is one line naming the file, the line number
when it is known, and what is wrong.

This module imports only the standard library and numpy.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ensemblekit.errors import InputError

__all__ = ["Attribute", "DataError", "Dataset", "Schema", "known_class", "quote_input", "quote_names"]

KINDS = ("numeric", "nominal", "string")

# Longest piece of input quoted inside an error message.
_SHOW = 60


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


def quote_input(text: str, limit: int = _SHOW) -> str:
    """Quote a piece of input for a one-line :class:`DataError` message.

    Parameters
    ----------
    text : str
        The piece of input (anything else is turned into a string first).
    limit : int, default=60
        Most characters kept; a longer text is cut to ``limit - 3`` characters
        followed by ``"..."``.

    Returns
    -------
    str
        The (cut) text as Python writes a string literal, quotes and escapes
        included, so that line ends and control characters stay on one line.

    Examples
    --------
    >>> quote_input("5,1")
    "'5,1'"
    >>> quote_input("abcdefgh", limit=6)
    "'abc...'"
    """
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return repr(text)


def quote_names(names: Iterable[str], limit: int = 20) -> str:
    """List names for a one-line :class:`DataError` message, each quoted.

    Parameters
    ----------
    names : iterable of str
        The names, in the order to show.
    limit : int, default=20
        Most names shown; the rest are counted (``"... (3 more)"``).

    Returns
    -------
    str
        The quoted names joined by ``", "``.

    Examples
    --------
    >>> quote_names(["a", "b", "c"], limit=2)
    "'a', 'b', ... (1 more)"
    """
    names = [repr(n) for n in names]
    if len(names) > limit:
        names = names[:limit] + [f"... ({len(names) - limit} more)"]
    return ", ".join(names)


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
    date_format : str or None
        A numeric attribute read from dates: their Java pattern (ARFF ``date``, CSV
        ``--date``), so that data read against the schema reads its dates the same way.

    Raises
    ------
    ValueError
        Unknown kind, values given for a numeric attribute, a date pattern for another
        kind or one that cannot be read, or a value listed twice.
    """

    name: str
    kind: str
    values: tuple[str, ...] = ()
    date_format: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"attribute {self.name!r}: kind must be one of {KINDS}, not {self.kind!r}")
        values = tuple(str(v) for v in self.values)
        if self.kind == "numeric" and values:
            raise InputError(f"attribute {self.name!r}: a numeric attribute has no values")
        if len(set(values)) != len(values):
            seen: set[str] = set()
            twice = next(v for v in values if v in seen or seen.add(v))
            raise InputError(f"attribute {self.name!r}: value {twice!r} is listed twice")
        object.__setattr__(self, "name", str(self.name))
        object.__setattr__(self, "values", values)
        if self.date_format is not None:
            from ensemblekit.readers.dates import DateFormat

            if self.kind != "numeric" or not isinstance(self.date_format, str):
                raise InputError(f"attribute {self.name!r}: only a numeric attribute has a date "
                                 "pattern, as text")
            DateFormat(self.date_format)  # a pattern that cannot be read is refused here

    def to_dict(self) -> dict:
        """Return ``{"name", "kind", "values"}`` (JSON-serialisable), with ``date_format``
        for an attribute read from dates."""
        out = {"name": self.name, "kind": self.kind, "values": list(self.values)}
        if self.date_format is not None:
            out["date_format"] = self.date_format
        return out


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
                raise InputError(f"schema attributes must be Attribute objects, not {type(a).__name__}")
        names = [a.name for a in attributes]
        if len(set(names)) != len(names):
            seen: set[str] = set()
            twice = next(n for n in names if n in seen or seen.add(n))
            raise InputError(f"schema: attribute name {twice!r} appears twice")
        ci = self.class_index
        if ci is not None:
            if (isinstance(ci, bool) or not isinstance(ci, numbers.Integral)
                    or not 0 <= ci < len(attributes)):
                raise InputError(f"schema: class_index {ci!r} is not an index into "
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
                Attribute(a["name"], a["kind"], tuple(a.get("values", ())), a.get("date_format"))
                for a in d["attributes"]
            )
            return cls(d["relation"], attributes, d["class_index"])
        except (KeyError, TypeError) as exc:
            raise InputError(f"not a schema dict ({type(exc).__name__}: {exc})") from None


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
    format : {"arff", "csv", "frame"}
        The file format, or ``"frame"`` for a data frame (:meth:`from_frame`); in
        CSV the attribute kinds are inferred, not declared.
    weights : ndarray of shape (n_instances,), float64, or None
        Instance weights (ARFF ``{w}`` after a row, as Weka reads them), each finite and
        >= 0; None when the file gives none (every weight 1).
    unseen : dict of str to ndarray of shape (n_instances,), bool, or None
        Read against a training schema with unseen values as missing: for each
        attribute that had one, the rows whose value was not seen in training
        (it is missing in ``X`` or ``y``). None when there were none.
    texts : dict of str to ndarray of shape (n_instances,), object, or None
        Columns of the file kept as text on request (``str``, None where
        missing), by name; None when none were asked for.
    typed : frozenset of str
        CSV: the attributes whose kind was given (``--nominal``, ``--numeric``
        ...), not inferred; :meth:`with_nominal_class` leaves such a class alone.
    """

    name: str
    source: str
    schema: Schema
    X: np.ndarray
    y: np.ndarray | None
    lines: np.ndarray
    format: str = "arff"
    weights: np.ndarray | None = None
    unseen: dict | None = None
    texts: dict | None = None
    typed: frozenset = frozenset()

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
                       y=None if self.y is None else self.y[rows], lines=self.lines[rows],
                       weights=None if self.weights is None else self.weights[rows],
                       unseen=None if self.unseen is None else {
                           k: v[rows] for k, v in self.unseen.items()},
                       texts=None if self.texts is None else {
                           k: v[rows] for k, v in self.texts.items()})

    @property
    def weighted(self) -> bool:
        """Whether some instance weight differs from 1."""
        return self.weights is not None and bool(np.any(self.weights != 1.0))

    @property
    def first_weighted_line(self) -> int | None:
        """The file line of the first row whose weight is not 1; None when there is none."""
        if not self.weighted:
            return None
        return int(self.lines[np.flatnonzero(self.weights != 1.0)[0]])

    @classmethod
    def from_frame(cls, frame, target: str | None = None, *, name: str = "frame",
                   ignore: Iterable[str] = (), no_class: bool = False,
                   schema: Schema | None = None, read_class: bool = True,
                   unknown: str = "error") -> Dataset:
        """Read a pandas or polars DataFrame as a data set, each column typed by its dtype.

        ``category`` (polars ``Enum``) columns are nominal with their declared
        categories in order; string and boolean columns are nominal (sorted
        distinct values; ``false``, ``true``); numeric columns stay numeric; dates
        become milliseconds since 1970-01-01 UTC, as Weka reads ARFF dates (see
        :mod:`ensemblekit.frames`). The index is not read.

        Parameters
        ----------
        frame : pandas.DataFrame or polars.DataFrame
        target : str, optional
            The class column, matched as ``--target`` is (exactly, or else the one
            column equal to it but for case). Default: the last column (Weka's
            convention).
        name : str, default="frame"
            The data set's name (in results) and source (in messages).
        ignore : iterable of str
            Columns dropped before anything else.
        no_class : bool, default=False
            Every column is a feature; ``y`` is None.
        schema : Schema, optional
            A training schema to code the frame against, as a file is read for
            prediction: columns matched by name (others dropped), nominal values
            coded in the schema's order, a numeric column of whole numbers read as
            the text of a nominal attribute's values (``1`` as ``"1"``).
        read_class : bool, default=True
            With ``schema``: False leaves the class column unread (``y`` None).
        unknown : {"error", "missing"}, default="error"
            With ``schema``: a nominal value not seen in training is refused, or read as
            missing with its rows in :attr:`unseen` (``predict --unknown``).

        Returns
        -------
        Dataset
            ``X`` of shape (n_rows, n_features), float64 with NaN for missing
            values; ``y`` int64 codes (-1 missing) for a nominal class, float64
            (NaN missing) for a numeric one, or None; ``lines`` the row numbers
            from 1; ``format`` ``"frame"``.

        Raises
        ------
        DataError
            A column of a type that cannot be read, an infinite number, an unknown
            ``target`` or ``ignore`` name (with a "did you mean"), a column of the
            schema missing or of another kind, or a nominal value not seen in
            training.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"x": [1.0, 2.0], "y": pd.Categorical(["b", "a"])})
        >>> Dataset.from_frame(df, target="Y").class_values
        ('a', 'b')
        """
        from ensemblekit.frames import frame_columns
        from ensemblekit.names import did_you_mean, resolve

        try:
            columns = frame_columns(frame)
        except InputError as exc:
            raise DataError(str(exc), name) from None
        names = [c.name for c in columns]
        ignore = (ignore,) if isinstance(ignore, str) else tuple(ignore)
        absent = [g for g in ignore if g not in names]
        if absent:
            raise DataError(f"cannot ignore {quote_names(absent)}: no such column"
                            f"{did_you_mean(absent[0], names)}; columns are: "
                            f"{quote_names(names, 50)}", name)
        columns = [c for c in columns if c.name not in set(ignore)]
        if not columns:
            raise DataError("the frame has no columns" if not ignore else
                            "no columns left after ignoring " + quote_names(ignore), name)
        n = int(frame.shape[0])
        lines = np.arange(1, n + 1, dtype=np.int64)
        if schema is not None:
            unseen = {} if unknown == "missing" else None
            X, y = _conformed(columns, schema, name, read_class, unseen)
            return cls(name, name, schema, X, y, lines, "frame", unseen=unseen or None)
        names = [c.name for c in columns]
        if no_class:
            class_index = None
        else:
            found = names[-1] if target is None else resolve(str(target), names)
            if found is None:
                raise DataError(f"no column named {target!r} to use as the class"
                                f"{did_you_mean(str(target), names)}; columns are: "
                                f"{quote_names(names, 50)}", name)
            class_index = names.index(found)
        attributes = tuple(Attribute(c.name, c.kind, c.values) for c in columns)
        features = [c.data for k, c in enumerate(columns) if k != class_index]
        X = np.column_stack(features) if features else np.empty((n, 0))
        y = None if class_index is None else _class_vector(columns[class_index].data,
                                                           columns[class_index].kind)
        return cls(name, name, Schema(name, attributes, class_index), X, y, lines, "frame")

    def to_frame(self):
        """The data set as a pandas DataFrame: what :meth:`from_frame` reads back.

        Returns
        -------
        pandas.DataFrame
            One column per attribute, the class at its place among them: numeric
            attributes as float64 (NaN missing), nominal and string ones as
            ``category`` columns whose categories are the attribute's values in
            order (missing as NaN).

        Raises
        ------
        ImportError
            pandas is not installed.
        """
        from ensemblekit.frames import FrameColumn, to_pandas

        columns, j = [], 0
        for k, a in enumerate(self.schema.attributes):
            if k == self.schema.class_index:
                data = np.asarray(self.y, dtype=np.float64).copy()
                if a.kind != "numeric":
                    data[np.asarray(self.y) < 0] = np.nan
            else:
                data, j = self.X[:, j], j + 1
            columns.append(FrameColumn(a.name, "numeric" if a.kind == "numeric" else "nominal",
                                       a.values, data))
        return to_pandas(columns)

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
        return replace(self, schema=schema, X=X, y=None)

    def with_nominal_class(self, max_classes: int = 100) -> Dataset:
        """Return the data set with an inferred numeric CSV class turned nominal.

        A CSV column of class labels written as whole numbers (``0``/``1``,
        ``1``/``2``/``3``) is inferred numeric, as is a data frame's integer
        column; classifiers need it nominal. Its
        distinct values become the nominal values in increasing numeric order,
        written as integers (``"1"``, not ``"1.0"``). A class *declared*
        numeric (ARFF, or CSV with ``--numeric``), or holding fractions or more
        than ``max_classes`` distinct values, is a regression target and is left
        alone.

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
        if (ca is None or ca.kind != "numeric" or self.y is None
                or self.format not in ("csv", "frame") or ca.name in self.typed):
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
        return replace(self, schema=schema, y=codes)

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
                                f"{quote_names(a.name for a in features)}", self.source)
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
        reduced = replace(self, schema=schema, X=self.X[:, keep])
        return reduced, Y, tuple(columns)


def _class_vector(data: np.ndarray, kind: str) -> np.ndarray:
    """A class column as :class:`Dataset` holds it: codes with -1 missing, or float targets."""
    if kind == "numeric":
        return np.asarray(data, dtype=np.float64)
    return np.where(np.isnan(data), -1, data).astype(np.int64)


def _recoded(column, attribute: Attribute, src: str, unseen: dict | None = None) -> np.ndarray:
    """A frame column (:class:`ensemblekit.frames.FrameColumn`) coded as a training
    attribute codes it: numbers as they are, nominal values by their text. A value not
    seen in training is refused, or, with an ``unseen`` dict, read as missing and its rows
    recorded there under the attribute's name."""
    from ensemblekit.frames import cell_text, recode

    if attribute.kind == "numeric":
        if column.kind != "numeric":
            raise DataError(f"column {attribute.name!r} is nominal here but numeric in the "
                            "training data", src)
        return column.data
    codes, first = recode(column, attribute.values)
    if first is not None and unseen is None:
        raise DataError(f"row {first + 1}: value {quote_input(cell_text(column, first))} of "
                        f"column {attribute.name!r} was not seen in the training data (known "
                        f"values: {quote_names(attribute.values)})", src)
    if first is not None:
        unseen[attribute.name] = ~np.isnan(column.data) & np.isnan(codes)
    return codes


def _conformed(columns, schema: Schema, src: str, read_class: bool, unseen: dict | None = None):
    """``(X, y)`` of frame columns coded against a training schema (matched by name)."""
    by_name = {c.name: c for c in columns}
    n = len(columns[0].data)
    X = np.empty((n, len(schema.features)), dtype=np.float64)
    y, j = None, 0
    for k, a in enumerate(schema.attributes):
        is_class = k == schema.class_index
        column = by_name.get(a.name)
        if not is_class:
            j += 1
            if column is None:
                raise DataError(f"column {a.name!r} of the training data is missing (the frame "
                                f"has: {quote_names(by_name)})", src)
            X[:, j - 1] = _recoded(column, a, src, unseen)
        elif read_class and column is not None:
            y = _class_vector(_recoded(column, a, src, unseen), a.kind)
    return X, y


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
