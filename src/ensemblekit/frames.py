"""pandas and polars data frames read as attributes: numbers and nominal codes, and back.

A data frame declares its columns' types, so nothing is guessed as for a CSV file:

* a ``category`` column (pandas) or an ``Enum`` column (polars) is nominal with its
  declared categories, in their declared order, as its values; a polars ``Categorical``
  column, whose categories are not declared per column, is read as a string column;
* a string (``object``, ``str``, ``string``; polars ``String``) column is nominal over
  its sorted distinct values, as a CSV reader codes a column of text;
* a boolean column is nominal with the values ``false``, ``true`` (in that order);
* a numeric column (integer, float, nullable ``Int64`` ...) stays numeric;
* a date or datetime column becomes milliseconds since 1970-01-01 UTC, the number Weka
  stores for an ARFF ``date`` attribute (a naive datetime is taken as UTC);
* ``None``, NaN, ``pandas.NA`` and ``NaT`` (polars: null and NaN) are missing.

Any other column type (durations, intervals, lists, ...) is refused, every such column
named in one message.

The estimators that read nominal columns as codes (``C45Tree``, ``IBk``, ``K2Classifier``
and ``InnerEnsembleK2Classifier``) take a frame's nominal columns from its dtypes through
:func:`fit_input` and code the frames given to ``predict`` by the same values through
:func:`predict_input`, so that nobody counts column positions by hand.

Neither pandas nor polars is a dependency of ensemblekit: they are never imported here
unless a frame of theirs was given (:func:`frame_library` recognises a frame by the
module of its type), and :func:`to_pandas` imports pandas only when asked for a frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ensemblekit.errors import InputError

__all__ = ["FrameColumn", "cell_text", "fit_input", "frame_columns", "frame_library", "is_frame",
           "number_text", "predict_input", "recode", "to_pandas"]

#: The nominal values of a boolean column, in code order.
BOOLEAN_VALUES = ("false", "true")


@dataclass(frozen=True)
class FrameColumn:
    """One column of a data frame, read as an attribute.

    Attributes
    ----------
    name : str
        The column's name (``str()`` of a non-string label).
    kind : {"numeric", "nominal"}
    values : tuple of str
        A nominal column's values, whose positions are its codes; empty for a numeric one.
    data : ndarray of shape (n_rows,), float64
        Numbers, or codes ``0 .. len(values) - 1``; NaN marks a missing value.
    declared : bool
        Whether ``values`` are declared by the column's type (category, enum, boolean)
        rather than found in its cells (strings).
    """

    name: str
    kind: str
    values: tuple[str, ...]
    data: np.ndarray
    declared: bool = False


def frame_library(obj) -> str | None:
    """``"pandas"`` or ``"polars"`` when ``obj`` is a DataFrame of that library, else None.

    Only the module and name of the object's type are looked at, so neither library
    is imported by asking.
    """
    kind = type(obj)
    module = kind.__module__ or ""
    if kind.__name__ != "DataFrame":
        return None
    for library in ("pandas", "polars"):
        if module == library or module.startswith(library + "."):
            return library
    return None


def is_frame(obj) -> bool:
    """Whether ``obj`` is a pandas or polars DataFrame (see :func:`frame_library`)."""
    return frame_library(obj) is not None


def frame_columns(frame) -> list[FrameColumn]:
    """Read every column of a pandas or polars DataFrame as an attribute.

    Parameters
    ----------
    frame : pandas.DataFrame or polars.DataFrame

    Returns
    -------
    list of FrameColumn
        One per column, in the frame's order (see the module docstring for the types).

    Raises
    ------
    ensemblekit.errors.InputError
        ``frame`` is not a DataFrame; a column of a type that is none of those above
        (all such columns named at once); two columns with one name; or an infinite
        number (naming the column and the row, from 1).
    """
    library = frame_library(frame)
    if library is None:
        raise InputError(f"expected a pandas or polars DataFrame, not {type(frame).__name__}")
    read = _pandas_column if library == "pandas" else _polars_column
    columns, refused = [], []
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        twice = next(n for i, n in enumerate(names) if n in names[:i])
        raise InputError(f"the frame has two columns named {twice!r}")
    for j, name in enumerate(names):
        column = read(frame, j, name)
        if isinstance(column, str):
            refused.append(f"{name!r} ({column})")
            continue
        infinite = np.isinf(column.data)
        if infinite.any():
            raise InputError(f"column {name!r} holds {column.data[infinite.argmax()]} in row "
                             f"{int(infinite.argmax()) + 1}, not a finite number")
        columns.append(column)
    if refused:
        raise InputError("columns of a type no algorithm here reads (numbers, strings, "
                         "categories, booleans and dates are read): " + ", ".join(refused)
                         + "; convert or drop them first")
    return columns


def _nominal_of_text(name: str, cells, missing) -> FrameColumn:
    """A nominal column over the sorted distinct texts of ``cells`` (``missing`` marks gaps)."""
    texts = [None if gone else str(v) for v, gone in zip(cells, missing)]
    values = tuple(sorted({t for t in texts if t is not None}))
    position = {v: float(k) for k, v in enumerate(values)}
    data = np.fromiter((np.nan if t is None else position[t] for t in texts), dtype=np.float64,
                       count=len(texts))
    return FrameColumn(name, "nominal", values, data)


def _codes(codes) -> np.ndarray:
    """Integer codes with -1 (or NaN) for missing, as float64 with NaN."""
    out = np.asarray(codes, dtype=np.float64).copy()
    out[out < 0] = np.nan
    return out


def _pandas_column(frame, j: int, name: str):
    """Column ``j`` of a pandas frame as a FrameColumn, or the type's name when refused."""
    import pandas as pd  # imported already: the frame is a pandas object

    s = frame.iloc[:, j]
    dtype = s.dtype
    types = pd.api.types
    if isinstance(dtype, pd.CategoricalDtype):
        values = tuple(str(c) for c in dtype.categories)
        return FrameColumn(name, "nominal", values, _codes(s.cat.codes.to_numpy()), True)
    if types.is_bool_dtype(dtype):
        return FrameColumn(name, "nominal", BOOLEAN_VALUES,
                           s.to_numpy(dtype=np.float64, na_value=np.nan), True)
    if types.is_datetime64_any_dtype(dtype):
        if getattr(dtype, "tz", None) is not None:
            s = s.dt.tz_convert("UTC").dt.tz_localize(None)
        stamps = s.to_numpy(dtype="datetime64[ms]")
        data = stamps.astype(np.int64).astype(np.float64)
        data[np.isnat(stamps)] = np.nan
        return FrameColumn(name, "numeric", (), data)
    if types.is_numeric_dtype(dtype) and not types.is_complex_dtype(dtype):
        return FrameColumn(name, "numeric", (), s.to_numpy(dtype=np.float64, na_value=np.nan))
    if types.is_string_dtype(dtype) or types.is_object_dtype(dtype):
        cells = s.to_numpy(dtype=object)
        return _nominal_of_text(name, cells, pd.isna(cells))
    return str(dtype)


def _polars_column(frame, j: int, name: str):
    """Column ``j`` of a polars frame as a FrameColumn, or the type's name when refused."""
    import polars as pl  # imported already: the frame is a polars object

    s = frame.to_series(j)
    dtype = s.dtype
    if isinstance(dtype, pl.Enum):
        values = tuple(str(c) for c in dtype.categories.to_list())
        return FrameColumn(name, "nominal", values,
                           s.to_physical().cast(pl.Float64).to_numpy(), True)
    if dtype == pl.Boolean:
        return FrameColumn(name, "nominal", BOOLEAN_VALUES, s.cast(pl.Float64).to_numpy(), True)
    if dtype == pl.Date or isinstance(dtype, pl.Datetime):
        return FrameColumn(name, "numeric", (), s.dt.epoch("ms").cast(pl.Float64).to_numpy())
    if dtype.is_numeric() and not isinstance(dtype, pl.Decimal) or dtype == pl.Null:
        return FrameColumn(name, "numeric", (), s.cast(pl.Float64).to_numpy())
    if dtype == pl.String or isinstance(dtype, pl.Categorical):
        cells = s.cast(pl.String).to_list()
        return _nominal_of_text(name, cells, [v is None for v in cells])
    return str(dtype)


def to_pandas(columns, index=None):
    """A pandas DataFrame of attribute columns: numbers as float64, nominal ones as categories.

    Parameters
    ----------
    columns : sequence of FrameColumn
        Each column's data: numbers (NaN missing) or codes into ``values`` (NaN missing).
    index : array-like, optional
        The frame's index (default: 0 .. n_rows - 1).

    Returns
    -------
    pandas.DataFrame
        A numeric column as float64 with NaN; a nominal one as a ``category`` column
        whose categories are ``values`` in order, missing values as NaN.

    Raises
    ------
    ImportError
        pandas is not installed.
    """
    import pandas as pd

    data = {}
    for c in columns:
        if c.kind == "numeric":
            data[c.name] = pd.Series(np.asarray(c.data, dtype=np.float64), index=index)
        else:
            codes = np.where(np.isnan(c.data), -1, c.data).astype(np.int64)
            data[c.name] = pd.Series(pd.Categorical.from_codes(codes, categories=list(c.values)),
                                     index=index)
    return pd.DataFrame(data, index=index)


# --------------------------------------------------------------------------- estimators
def number_text(v: float) -> str:
    """A number as the text of a nominal value: ``1.0`` as ``"1"`` (as a CSV cell reads),
    other numbers as Python writes them."""
    return str(int(v)) if v == np.floor(v) and abs(v) < 2 ** 53 else repr(float(v))


def _like(frame, columns: list[FrameColumn]):
    """A frame of the same library, column names and index holding the columns' numbers."""
    if frame_library(frame) == "pandas":
        import pandas as pd

        data = np.column_stack([c.data for c in columns]) if columns else None
        return pd.DataFrame(data, columns=frame.columns, index=frame.index)
    import polars as pl

    return pl.DataFrame({c.name: c.data for c in columns})


def fit_input(estimator, X):
    """``X`` for an estimator's ``fit``, its nominal columns declared by a frame's dtypes.

    When ``X`` is a pandas or polars DataFrame, the estimator's ``nominal_features``
    is None, and a column of ``X`` is not numeric (a category, string or boolean
    column, or a date), the columns are read as :func:`frame_columns` reads them: the
    nominal ones become codes into their values, and those values are kept on the
    estimator as ``frame_categories_`` (one tuple per column, None for a numeric one)
    to code the frames given to ``predict`` (:func:`predict_input`). Otherwise ``X``
    is returned as it is and ``frame_categories_`` is removed.

    Parameters
    ----------
    estimator : estimator with ``nominal_features`` and ``n_categories`` parameters
    X : array-like or DataFrame of shape (n_samples, n_features)

    Returns
    -------
    X : array-like or DataFrame
        A DataFrame of the same library and column names holding float64 numbers and
        codes (NaN missing), so that scikit-learn records the feature names.
    declared : tuple or None
        ``(nominal_features, n_categories)`` found in the frame (a column without any
        declared or seen value counts one value), or None: the estimator's parameters
        stand.
    """
    estimator.__dict__.pop("frame_categories_", None)
    if estimator.nominal_features is not None or not is_frame(X):
        return X, None
    try:
        columns = frame_columns(X)
    except InputError:
        return X, None  # scikit-learn's checks say what is wrong
    nominal = [j for j, c in enumerate(columns) if c.kind == "nominal"]
    if not nominal and all(_numeric_dtype(X, j) for j in range(len(columns))):
        return X, None
    estimator.frame_categories_ = [c.values if c.kind == "nominal" else None for c in columns]
    counts = [max(len(columns[j].values), 1) for j in nominal]
    return _like(X, columns), (nominal, counts)


def _numeric_dtype(frame, j: int) -> bool:
    """Whether column ``j`` of a frame is stored as numbers (not a date)."""
    if frame_library(frame) == "pandas":
        import pandas as pd

        dtype = frame.iloc[:, j].dtype
        return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    return frame.to_series(j).dtype.is_numeric()


def predict_input(estimator, X):
    """``X`` for a fitted estimator's ``predict``, coded as its training frame was.

    When the estimator was fitted on a frame whose nominal columns it took from their
    dtypes (``frame_categories_``, see :func:`fit_input`) and ``X`` is a frame with as
    many columns, each nominal column's values are coded by their position among the
    training values, matched by text; a value not seen in training becomes missing
    (NaN), as Weka's ``InputMappedClassifier`` and scikit-learn's
    ``handle_unknown="ignore"`` treat it. Anything else is returned as it is, for the
    estimator's own checks.

    Parameters
    ----------
    estimator : fitted estimator
    X : array-like or DataFrame of shape (n_samples, n_features)

    Returns
    -------
    array-like or DataFrame
    """
    categories = getattr(estimator, "frame_categories_", None)
    if categories is None or not is_frame(X) or X.shape[1] != len(categories):
        return X
    try:
        columns = frame_columns(X)
    except InputError:
        return X
    coded = [c if values is None else
             FrameColumn(c.name, "nominal", tuple(values), recode(c, values)[0])
             for c, values in zip(columns, categories)]
    return _like(X, coded)


def recode(column: FrameColumn, values) -> tuple[np.ndarray, int | None]:
    """A column's cells as codes into other nominal ``values``, matched by their text.

    Parameters
    ----------
    column : FrameColumn
        Nominal (its values' texts are matched) or numeric (a number's text, as
        :func:`number_text` writes it, is matched).
    values : sequence of str
        The values to code into (a training attribute's).

    Returns
    -------
    codes : ndarray of shape (n_rows,), float64
        Positions in ``values``; NaN for a missing cell and for a value not in ``values``.
    unseen : int or None
        The row (from 0) of the first value not in ``values``, or None.
    """
    position = {v: float(k) for k, v in enumerate(values)}
    known = ~np.isnan(column.data)
    if column.kind == "numeric":
        texts = [number_text(v) for v in column.data[known]]
    else:
        texts = [column.values[int(k)] for k in column.data[known]]
    found = np.array([position.get(t, np.nan) for t in texts], dtype=np.float64)
    codes = np.full(column.data.shape, np.nan)
    codes[known] = found
    missed = np.flatnonzero(np.isnan(found))
    return codes, (int(np.flatnonzero(known)[missed[0]]) if missed.size else None)


def cell_text(column: FrameColumn, row: int) -> str:
    """The text of a column's known cell, as :func:`recode` matches it."""
    v = column.data[row]
    return number_text(v) if column.kind == "numeric" else column.values[int(v)]
