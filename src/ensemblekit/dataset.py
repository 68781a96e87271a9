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
                Attribute(a["name"], a["kind"], tuple(a.get("values", ()))) for a in d["attributes"]
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
    format : {"arff", "csv"}
        The file format; in CSV the attribute kinds are inferred, not declared.
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
        return Dataset(self.name, self.source, schema, X, None, self.lines, self.format, self.typed)

    def with_nominal_class(self, max_classes: int = 100) -> Dataset:
        """Return the data set with an inferred numeric CSV class turned nominal.

        A CSV column of class labels written as whole numbers (``0``/``1``,
        ``1``/``2``/``3``) is inferred numeric; classifiers need it nominal. Its
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
        if (ca is None or ca.kind != "numeric" or self.y is None or self.format != "csv"
                or ca.name in self.typed):
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
        return Dataset(self.name, self.source, schema, self.X, codes, self.lines, self.format,
                       self.typed)

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
        reduced = Dataset(self.name, self.source, schema, self.X[:, keep], self.y, self.lines,
                          self.format, self.typed)
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
