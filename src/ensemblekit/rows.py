"""The rows a model class is asked to predict, checked with numpy alone.

A model class (see :mod:`ensemblekit.state`) predicts without scikit-learn, so
it cannot use ``sklearn.utils.validation``; :func:`check_rows` does the part of
it that prediction needs, with the same messages for the same faults: a model
that is not fitted, input that is not a 2-d array of numbers, a width other
than the one the model was fitted on, and infinities (or NaN, unless the model
handles missing values). An estimator may still validate with scikit-learn
first (feature names of a data frame); the model's own check then passes.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.errors import InputError, NotFittedError

__all__ = ["check_rows", "quiet_finite_check"]


def check_rows(model, X, *, allow_nan: bool = True, width_attr: str = "n_features_in_") -> np.ndarray:
    """``X`` as a C-contiguous float64 array of shape (n_samples, n_features_in_).

    Parameters
    ----------
    model : object
        A fitted model; its ``n_features_in_`` (or ``width_attr``) is the width.
    X : array-like of shape (n_samples, n_features)
        Rows to predict; a data frame or nested lists work too.
    allow_nan : bool, default=True
        NaN (a missing value) is allowed; infinity never is.
    width_attr : str
        The attribute holding the expected number of columns.

    Returns
    -------
    ndarray of float64, shape (n_samples, n_features_in_)
        ``X`` itself when it already is one.

    Raises
    ------
    NotFittedError
        The model holds no ``width_attr`` (it was not fitted).
    InputError
        ``X`` is not a 2-d array of real numbers with at least one row, has
        another number of columns, or holds infinity (or NaN when not allowed).
    """
    name = type(model).__name__
    width = getattr(model, width_attr, None)
    if width is None:
        raise NotFittedError(f"This {name} instance is not fitted yet. Call 'fit' with "
                             "appropriate arguments before using this estimator.")
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise TypeError(f"{name} does not accept sparse input; convert it to a dense array")
    try:
        arr = np.asarray(X)
        if arr.dtype.kind == "c":
            raise InputError("Complex data not supported")
        arr = np.ascontiguousarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: X is not an array of numbers ({exc})") from None
    if arr.ndim != 2:
        raise InputError(f"Expected 2D array, got {arr.ndim}D array instead; reshape your data")
    if arr.shape[0] < 1:
        raise InputError(f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum "
                         f"of 1 is required by {name}.")
    if arr.shape[1] != width:
        raise InputError(f"X has {arr.shape[1]} features, but {name} is expecting {width} "
                         "features as input.")
    bad = ~np.isfinite(arr)
    if bad.any():
        if not allow_nan or np.isinf(arr[bad]).any():
            what = "infinity or a value too large for dtype('float64')" if np.isinf(
                arr[bad]).any() else "NaN"
            raise InputError(f"Input X contains {what}.")
    return arr


def quiet_finite_check():
    """A context in which scikit-learn's input checks say nothing of data near the float limits.

    scikit-learn tests that an array is finite by summing it first; finite
    values of both signs near the float limits (``1e308`` and ``-1e308``) make
    that sum ``inf - inf``, which numpy reports as an "invalid value"
    RuntimeWarning before scikit-learn checks the values one by one and finds
    them finite. Wrap ``validate_data`` and ``check_array`` in this context so
    that valid data raises no warning; an infinity is still refused.

    Returns
    -------
    numpy.errstate
        A fresh context (numpy's floating-point error state is per thread).

    Examples
    --------
    >>> with quiet_finite_check():
    ...     total = (np.float64(1e308) + 1e308) + (np.float64(-1e308) - 1e308)
    >>> float(total)
    nan
    """
    return np.errstate(over="ignore", invalid="ignore")
