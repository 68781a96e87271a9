"""Nominal attributes as codes in a float matrix: which columns, how many values, checked.

The classifiers that read nominal attributes as they are (``c45``, ``knn``, ``bagging`` and
the lazy ensembles; registry entries with ``encode="codes"``) receive one float matrix: numeric
columns as numbers, the columns listed in ``nominal_features`` as the codes ``0 .. r - 1`` of
their values, NaN for a missing value. This module is the one place that reads that layout and
checks the codes, at fit and at predict time.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.errors import InputError

__all__ = ["check_codes", "check_coded_training", "coded_layout", "numeric_columns"]


def coded_layout(X, nominal_features, n_categories):
    """Check the nominal codes of ``X``; return its nominal and numeric columns.

    Parameters
    ----------
    X : ndarray of float of shape (n_samples, n_features)
        Numeric columns as numbers, nominal ones as codes ``0 .. r - 1``; NaN = missing.
    nominal_features : array-like of int or bool, or None
        Indices of the nominal columns, or a boolean mask of length ``n_features``
        (None: every column is numeric).
    n_categories : array-like of int or None
        Number of values of each nominal column, in the order of ``nominal_features``
        (None: the largest code seen plus one, 1 for a column with no known value).

    Returns
    -------
    nominal : ndarray of intp
        Sorted indices of the nominal columns.
    n_categories : ndarray of intp
        The number of values of each, in that order (>= 1).
    numeric : ndarray of intp
        Sorted indices of the other columns.

    Raises
    ------
    ValueError
        Indices that repeat or fall outside ``0 .. n_features - 1``, a count per nominal
        column missing or below 1, or a nominal column holding a value that is not one of
        its codes (negative, fractional, or not below its number of values).
    """
    d = X.shape[1]
    if nominal_features is None:
        nominal = np.zeros(0, dtype=np.intp)
    else:
        nominal = np.asarray(nominal_features)
        if nominal.dtype == bool:
            nominal = np.flatnonzero(nominal)
        nominal = nominal.astype(np.intp).reshape(-1)
        if np.unique(nominal).size != nominal.size or (
                nominal.size and (nominal.min() < 0 or nominal.max() >= d)):
            raise InputError(f"nominal_features must be distinct column indices in 0..{d - 1}")
    order = np.argsort(nominal, kind="stable")
    nominal = nominal[order]
    if n_categories is None:
        for j in nominal:  # codes must be whole and >= 0 before they can be counted
            col = X[:, j]
            col = col[~np.isnan(col)]
            if col.size and (np.any(col < 0) or np.any(col != np.floor(col))):
                raise InputError(f"nominal column {j} holds a value that is not a code >= 0")
        cats = np.array([int(np.nanmax(X[:, j])) + 1 if np.any(~np.isnan(X[:, j])) else 1
                         for j in nominal], dtype=np.intp)
    else:
        cats = np.asarray(n_categories, dtype=np.intp).reshape(-1)
        if cats.size != nominal.size or np.any(cats < 1):
            raise InputError("n_categories must give a count >= 1 for each nominal feature")
        cats = cats[order]
        check_codes(X, nominal, cats)
    return nominal, cats, numeric_columns(d, nominal)


def numeric_columns(n_features: int, nominal) -> np.ndarray:
    """Sorted indices of the columns that are not nominal.

    What ``np.setdiff1d(np.arange(n_features), nominal)`` gives, without the
    ``np.unique`` behind it, which imports ``numpy.ma`` (about 8 ms of a model's
    ``predict`` in a fresh process).

    Parameters
    ----------
    n_features : int >= 0
    nominal : array-like of int
        Indices of the nominal columns, each in ``0 .. n_features - 1``.

    Returns
    -------
    ndarray of intp
    """
    is_numeric = np.ones(n_features, dtype=bool)
    is_numeric[np.asarray(nominal, dtype=np.intp)] = False
    return np.flatnonzero(is_numeric)


def check_codes(X, nominal, n_categories) -> None:
    """Refuse a nominal column of ``X`` holding a value that is not one of its codes.

    Parameters
    ----------
    X : ndarray of float of shape (n_samples, n_features)
    nominal : sequence of int
        Indices of the nominal columns.
    n_categories : sequence of int
        Number of values of each (codes ``0 .. r - 1``).

    Raises
    ------
    ValueError
        Naming the first column that holds a negative, fractional or too large code
        (NaN, a missing value, is allowed).
    """
    nominal = np.asarray(nominal, dtype=np.intp).reshape(-1)
    if nominal.size == 0 or X.shape[0] == 0:
        return
    counts = np.asarray(n_categories).reshape(-1)
    codes = X[:, nominal]
    # all columns at once: a code is whole and in 0 .. r - 1; NaN (missing) passes
    bad = ~((codes >= 0) & (codes < counts) & (codes == np.floor(codes))) & ~np.isnan(codes)
    bad_columns = np.flatnonzero(bad.any(axis=0))
    if bad_columns.size:
        i = bad_columns[0]
        raise InputError(f"nominal column {nominal[i]} holds a value that is not one of its "
                         f"{counts[i]} codes")


def check_coded_training(X, y) -> np.ndarray:
    """Refuse training rows and labels that are not already in the coded layout.

    The check of a model class's ``fit_coded``, which fits on the arrays the readers
    (and the experiment runner) give, without scikit-learn's conversion of array-likes.

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
        Numeric columns as numbers, nominal columns as codes; NaN marks a missing value.
    y : array-like of shape (n_samples,)
        One class label per row.

    Returns
    -------
    y : ndarray of shape (n_samples,)
        ``y`` as an array.

    Raises
    ------
    ensemblekit.errors.InputError
        If ``X`` is not a 2-D float64 array with at least one row and one column, holds
        infinity, or ``y`` does not have one label per row. The nominal codes are
        checked by :func:`coded_layout`.
    """
    if not isinstance(X, np.ndarray) or X.dtype != np.float64 or X.ndim != 2:
        raise InputError("X must be a 2-D float64 array")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise InputError(f"X has shape {X.shape}: no rows or no columns to learn from")
    if np.isinf(X).any():
        raise InputError("X holds infinity")
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise InputError(f"y has shape {y.shape}; expected ({X.shape[0]},), one label per row")
    return y
