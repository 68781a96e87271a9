"""Power-of-two units for values near the float limits, in which squares and sums stay finite.

Values near ``+-1e308`` overflow when squared, summed or subtracted; values near
``1e-308`` lose their digits. Dividing them by a power of two is exact (every bit
of the significand is kept), and any computation that is homogeneous in its
inputs -- a range-normalised distance, a correlation, a ratio of errors -- then
gives the very bits it gives on the same data scaled into the ordinary range.
Ordinary values keep their unit (exponent 0), so their results do not change.
"""

from __future__ import annotations

import numpy as np

__all__ = ["UNIT_LIMIT", "in_units", "unit_exponent", "unit_exponents"]


#: Values whose largest magnitude lies outside ``[2**-UNIT_LIMIT, 2**UNIT_LIMIT]`` are
#: measured in a unit of their own, a power of two: beyond it squares and their sums over
#: many values overflow (or lose their digits). 2**256 is about 1.2e77.
UNIT_LIMIT = 256


def unit_exponent(*arrays) -> int:
    """The power of two shared values are measured in: 0 unless they lie near the float limits.

    Parameters
    ----------
    *arrays : array-like of float64
        Finite values (NaN is skipped).

    Returns
    -------
    int
        0 when the largest magnitude lies within ``[2**-UNIT_LIMIT,
        2**UNIT_LIMIT]`` or is 0; else its binary exponent ``e`` (so that the
        values divided by ``2**e`` lie within ``[-1, 1)``).

    Examples
    --------
    >>> unit_exponent([1e308, 2.0], [-3.0]), unit_exponent([1e300, 5.0])
    (1024, 997)
    >>> unit_exponent([0.5, -1e70])
    0
    """
    largest = max((float(np.fmax.reduce(np.abs(np.ravel(a)), initial=0.0)) for a in arrays),
                  default=0.0)
    if largest == 0 or not np.isfinite(largest) or (
            2.0 ** -UNIT_LIMIT <= largest <= 2.0 ** UNIT_LIMIT):
        return 0
    return int(np.frexp(largest)[1])


def unit_exponents(X, numeric):
    """The power of two each numeric column is measured in, so that no sum of squares overflows.

    Column by column, :func:`unit_exponent`: a column whose known values all
    lie within ``2**-UNIT_LIMIT <= |x| <= 2**UNIT_LIMIT`` (or are 0) keeps its
    unit, exponent 0; any other is divided by ``2**e``, ``e`` the binary
    exponent of its largest magnitude, so that its values then lie within
    ``[-1, 1)``. Dividing by a power of two is exact, and range-normalised
    differences do not depend on the unit, so the distances are the very bits
    those of the same data scaled into the ordinary range give, where in the
    data's own unit they would overflow (values near ``+-1e308``) or lose their
    digits (near ``1e-308``).

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
        Training rows; NaN marks a missing value.
    numeric : array-like of int
        The numeric columns (the others keep exponent 0).

    Returns
    -------
    exponents : ndarray of int64 of shape (n_features,)
        ``e_f``: column ``f`` is measured as ``x * 2**-e_f`` (:func:`in_units`).

    Examples
    --------
    >>> unit_exponents(np.array([[1e308, 3.0], [-1e308, 4.0]]), [0, 1]).tolist()
    [1024, 0]
    """
    exponents = np.zeros(X.shape[1], dtype=np.int64)
    for f in np.asarray(numeric, dtype=np.intp):
        exponents[f] = unit_exponent(X[:, f])
    return exponents


def in_units(X, exponents):
    """``X`` with column ``f`` measured in units of ``2**exponents[f]`` (exact; NaN stays NaN).

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
    exponents : ndarray of int of shape (n_features,)
        As :func:`unit_exponents` gives them.

    Returns
    -------
    ndarray of float64 of shape (n_samples, n_features)
        ``X`` itself when every exponent is 0.
    """
    if not np.any(exponents):
        return X
    return np.ldexp(X, -exponents)
