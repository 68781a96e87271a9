"""Discretisation of numeric attributes: supervised MDL and equal-frequency bins.

The supervised method is the recursive entropy minimisation of Fayyad & Irani
(1993) with their minimum-description-length stopping rule, computed the way
Weka's ``weka.filters.supervised.attribute.Discretize`` computes it with its
default options (Fayyad & Irani's criterion, not Kononenko's; the "worse"
split-point encoding, i.e. ``useBetterEncoding=false``). Weka's BayesNet applies
that filter to every numeric attribute before the structure search, so matching
it cut for cut is what lets our Bayesian networks match Weka's.

References
----------
.. [1] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of
   continuous-valued attributes for classification learning", Proc. 13th
   IJCAI, pp. 1022-1027, 1993.
.. [2] Weka 3.9, ``weka.filters.supervised.attribute.Discretize``
   (``cutPointsForSubset`` and ``FayyadAndIranisMDL``), University of Waikato.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ensemblekit.discretize_model import bin_codes
from ensemblekit.errors import InputError
from ensemblekit.rows import quiet_finite_check

__all__ = ["MDLDiscretizer", "equal_frequency_cut_points", "mdl_cut_points"]

_LN2 = math.log(2.0)


def _midpoint(a, b):
    """``(a + b) / 2``, element by element, also where ``a + b`` overflows.

    Two finite values of one sign near the float limits overflow when added;
    there the midpoint is ``a/2 + b/2``, which halving makes exact for numbers
    that large: the bits the plain form gives on the same values scaled down
    by a power of two. Elsewhere the plain form, Weka's, is kept.

    Parameters
    ----------
    a, b : float or ndarray of float64
        Finite values (broadcast together).

    Returns
    -------
    float or ndarray of float64
        The midpoints, always finite.

    Examples
    --------
    >>> _midpoint(1.0, 2.0), _midpoint(1.5e308, 1.7e308)
    (1.5, 1.6e+308)
    """
    with np.errstate(over="ignore"):
        mid = (np.asarray(a, dtype=np.float64) + b) / 2.0
    mid = np.where(np.isinf(mid), np.divide(a, 2.0) + np.divide(b, 2.0), mid)
    return float(mid) if mid.ndim == 0 else mid


def _xlogx_table(n):
    """``t[c] = c * ln(c)`` for the integer counts ``c = 0..n`` (``t[0] = 0``).

    Weka's ``ContingencyTables.lnFunc`` evaluates exactly this product for
    integer counts (from a cache), so entropies built from this table follow
    the same floating-point arithmetic as Weka's.
    """
    c = np.arange(n + 1, dtype=np.float64)
    t = np.zeros(n + 1)
    t[1:] = c[1:] * np.log(c[1:])
    return t


class _WeightedXLogX:
    """``c * ln(c)`` (0 for 0) of weighted counts, indexed like :func:`_xlogx_table`'s table:
    Weka's ``ContingencyTables.lnFunc`` of a count that is a sum of instance weights."""

    def __getitem__(self, counts):
        c = np.asarray(counts, dtype=np.float64)
        out = np.zeros(c.shape)
        positive = c > 0
        out[positive] = c[positive] * np.log(c[positive])
        return out if out.ndim else float(out)


def _entropy(counts, xlogx):
    """Class entropy in bits of one count vector, in Weka's order of operations."""
    acc = 0.0
    total = 0
    for c in counts:
        acc -= xlogx[c]
        total += c
    if total == 0:
        return 0.0
    return (acc + xlogx[total]) / (total * _LN2)


def _split_entropy(left, right, xlogx):
    """Class entropy (bits) after a binary split, for many candidate splits at once.

    ``left`` and ``right`` are integer count matrices of shape
    ``(n_candidates, n_classes)``. The sum runs row by row, cell by cell, as in
    Weka's ``ContingencyTables.entropyConditionedOnRows``, so that exactly equal
    candidates stay exactly equal and the first one wins as in Weka.
    """
    acc = np.zeros(left.shape[0])
    for part in (left, right):
        for j in range(part.shape[1]):
            acc += xlogx[part[:, j]]
        acc -= xlogx[part.sum(axis=1)]
    total = left.sum(axis=1) + right.sum(axis=1)
    return -acc / (total * _LN2)


def _log2(v):
    return math.log(v) / _LN2


def _fayyad_irani_accepts(prior, left, right, xlogx, n_candidates=None, n_rows=None):
    """Fayyad & Irani's MDL test for one binary split (Weka's ``FayyadAndIranisMDL``).

    Accept when ``gain > (log2(N - 1) + delta) / N`` (with ``n_candidates``,
    Weka's better encoding: ``log2(n_candidates)`` in place of ``log2(N - 1)``) with
    ``delta = log2(3**k - 2) - (k E(S) - k2 E(S2) - k1 E(S1))``, where ``N`` is the
    number of instances of ``S``, ``k``, ``k1``, ``k2`` the numbers of classes
    present in ``S``, ``S1`` (left), ``S2`` (right), and ``E`` entropies in bits. With
    instance weights, ``N`` is the weight of ``S`` and the cost of the cut ``log2`` of its
    rows less one (``n_rows``), as in Weka.
    """
    n = prior.sum() if n_rows is not None else int(prior.sum())
    e_prior = _entropy(prior, xlogx)
    e_split = float(_split_entropy(left[None, :], right[None, :], xlogx)[0])
    gain = e_prior - e_split
    k = int(np.count_nonzero(prior))
    k1 = int(np.count_nonzero(left))
    k2 = int(np.count_nonzero(right))
    e1 = _entropy(left, xlogx)
    e2 = _entropy(right, xlogx)
    delta = _log2(math.pow(3.0, k) - 2.0) - ((k * e_prior) - (k2 * e2) - (k1 * e1))
    # Weka's default ("worse") encoding charges log2 of N - 1 possible cut
    # points, whatever the number of distinct values; the better encoding
    # charges log2 of the number of candidate cut points of the interval.
    rows = n if n_rows is None else n_rows
    cost = _log2(rows - 1) if n_candidates is None else _log2(n_candidates)
    return gain > (cost + delta) / n


def mdl_cut_points(x, y, n_classes, *, better_encoding=False, weights=None):
    """Supervised MDL cut points of one numeric column (Fayyad & Irani 1993).

    The instances are sorted by ``x``. Every midpoint between two adjacent
    distinct values is a candidate; the candidate with the smallest weighted
    class entropy of the two halves is chosen (on exact ties, the first in
    ascending order, as in Weka). It is kept only if it lowers the entropy and
    passes Fayyad & Irani's MDL criterion ([1]_, eq. in section 3; Weka's
    ``FayyadAndIranisMDL``)::

        gain > (log2(N - 1) + log2(3**k - 2) - (k E(S) - k1 E(S1) - k2 E(S2))) / N

    where ``N`` is the number of instances in the interval and ``k``, ``k1``,
    ``k2`` the numbers of classes present in the interval and its two halves.
    Both halves are then split again the same way, until no cut is accepted.
    The result equals Weka's ``weka.filters.supervised.attribute.Discretize``
    with its default options ([2]_). With ``better_encoding`` the cost of naming
    the cut is ``log2`` of the number of candidate cut points of the interval
    (adjacent distinct values) instead of ``log2(N - 1)``, as Weka's
    ``Discretize -E`` (``useBetterEncoding``), which its ``GainRatioAttributeEval``
    and ``InfoGainAttributeEval`` use; it accepts every cut the default accepts,
    and sometimes more (iris sepal length: 5.55, 6.15, 7.05 instead of 5.55, 6.15).

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        Numeric values. NaN marks a missing value; such instances are ignored
        (as Weka ignores missing values when it looks for cuts).
    y : array-like of shape (n_samples,)
        Class codes, integers in ``0 .. n_classes - 1``.
    n_classes : int
        Number of classes (at least 1).
    better_encoding : bool, default=False
        Use Weka's better encoding of the cut point in the MDL test (see above).
    weights : array-like of shape (n_samples,), optional
        Instance weights, finite and >= 0: the class counts, the entropies and ``N`` are
        sums of weights, and the cost of a cut ``log2`` of the interval's rows less one,
        as Weka's ``Discretize.cutPointsForSubset`` weighs instances.

    Returns
    -------
    cuts : ndarray of shape (n_cuts,)
        The accepted cut points, sorted ascending, float64; empty when the
        column is not split. A value ``v`` falls in bin ``j`` when
        ``cuts[j - 1] < v <= cuts[j]``.

    Raises
    ------
    ValueError
        If ``x`` or ``y`` is not one-dimensional, their lengths differ, ``x``
        holds an infinite value, ``n_classes < 1``, or ``y`` holds a value that
        is not an integer in ``0 .. n_classes - 1``.

    References
    ----------
    .. [1] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of
       continuous-valued attributes for classification learning", IJCAI 1993.
    .. [2] Weka, ``weka.filters.supervised.attribute.Discretize``.

    Examples
    --------
    >>> mdl_cut_points([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0, 0, 0, 1, 1, 1], 2)
    array([3.5])
    """
    x = np.asarray(x, dtype=np.float64)
    y_arr = np.asarray(y)
    if x.ndim != 1 or y_arr.ndim != 1:
        raise InputError("x and y must be one-dimensional arrays")
    if x.shape[0] != y_arr.shape[0]:
        raise InputError(
            f"x and y have different lengths ({x.shape[0]} and {y_arr.shape[0]})"
        )
    if int(n_classes) != n_classes or n_classes < 1:
        raise InputError(f"n_classes must be a positive integer, got {n_classes!r}")
    n_classes = int(n_classes)
    if np.isinf(x).any():
        raise InputError("x contains an infinite value")
    y_float = y_arr.astype(np.float64)
    codes = y_float.astype(np.int64) if y_arr.size else np.zeros(0, dtype=np.int64)
    if y_arr.size and (
        not np.all(np.isfinite(y_float))
        or np.any(codes != y_float)
        or codes.min() < 0
        or codes.max() >= n_classes
    ):
        raise InputError(f"y must hold integer class codes in 0..{n_classes - 1}")

    present = ~np.isnan(x)
    x, codes = x[present], codes[present]
    w = None if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)[present]
    n = x.shape[0]
    if n < 2:
        return np.empty(0)
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], codes[order]

    # prefix[i, c] = number (weight) of class-c instances among the first i sorted ones.
    kind = np.int64 if w is None else np.float64
    onehot = np.zeros((n, n_classes), dtype=kind)
    onehot[np.arange(n), ys] = 1 if w is None else w[order]
    prefix = np.zeros((n + 1, n_classes), dtype=kind)
    np.cumsum(onehot, axis=0, out=prefix[1:])
    # A candidate cut "after position i" lies between xs[i] and xs[i + 1].
    boundaries = np.flatnonzero(xs[:-1] < xs[1:])
    xlogx = _xlogx_table(n) if w is None else _WeightedXLogX()

    cuts = []
    stack = [(0, n)]  # half-open intervals [lo, hi) of sorted positions
    while stack:
        lo, hi = stack.pop()
        if hi - lo < 2:
            continue
        start, stop = np.searchsorted(boundaries, [lo, hi - 1])
        cand = boundaries[start:stop]
        if cand.size == 0:
            continue
        prior = prefix[hi] - prefix[lo]
        left = prefix[cand + 1] - prefix[lo]
        right = prior - left
        ent = _split_entropy(left, right, xlogx)
        best = int(np.argmin(ent))  # first minimum = Weka's strict '<' scan
        if not ent[best] < _entropy(prior, xlogx):
            continue
        if not _fayyad_irani_accepts(prior, left[best], right[best], xlogx,
                                     cand.size if better_encoding else None,
                                     None if w is None else hi - lo):
            continue
        i = int(cand[best])
        cuts.append(_midpoint(xs[i], xs[i + 1]))
        stack.append((lo, i + 1))
        stack.append((i + 1, hi))
    return np.sort(np.asarray(cuts, dtype=np.float64))


def equal_frequency_cut_points(x, n_bins):
    """Unsupervised equal-frequency cut points of one numeric column.

    Rule: sort the ``n`` non-missing values; for ``j = 1 .. n_bins - 1`` the
    ideal cut leaves ``t_j = j * n / n_bins`` values on its left. Cuts may only
    fall between two adjacent *distinct* values, so each ``t_j`` moves to the
    nearest such position (on a tie, the one with fewer values on the left); the
    cut is the midpoint of the two values there. Duplicate cuts are merged, so
    heavy ties can give fewer than ``n_bins`` bins. (This is not Weka's ``-F``
    rule, which fills bins greedily.)

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        Numeric values; NaN (missing) values are ignored.
    n_bins : int
        Wanted number of bins, at least 1.

    Returns
    -------
    cuts : ndarray of shape (n_cuts,)
        Sorted, distinct cut points, ``n_cuts <= n_bins - 1``.

    Raises
    ------
    ValueError
        If ``x`` is not one-dimensional or holds an infinite value, or
        ``n_bins`` is not a positive integer.

    Examples
    --------
    >>> equal_frequency_cut_points(np.arange(1.0, 11.0), 2)
    array([5.5])
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise InputError("x must be a one-dimensional array")
    if isinstance(n_bins, bool) or int(n_bins) != n_bins or n_bins < 1:
        raise InputError(f"n_bins must be a positive integer, got {n_bins!r}")
    if np.isinf(x).any():
        raise InputError("x contains an infinite value")
    xs = np.sort(x[~np.isnan(x)])
    n = xs.shape[0]
    # Number of values left of each admissible cut position.
    left_counts = np.flatnonzero(xs[:-1] < xs[1:]) + 1
    if n_bins < 2 or left_counts.size == 0:
        return np.empty(0)
    targets = np.arange(1, int(n_bins)) * n / int(n_bins)
    pos = np.searchsorted(left_counts, targets)  # first admissible count >= target
    below = np.clip(pos - 1, 0, left_counts.size - 1)
    above = np.clip(pos, 0, left_counts.size - 1)
    take_below = np.abs(targets - left_counts[below]) <= np.abs(
        left_counts[above] - targets
    )
    chosen = np.unique(np.where(take_below, left_counts[below], left_counts[above]))
    return _midpoint(xs[chosen - 1], xs[chosen])


class MDLDiscretizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Discretise numeric columns into integer bin codes.

    ``method="mdl"`` (default) learns, for every numeric column, the supervised
    cut points of Fayyad & Irani (1993) exactly as Weka's
    ``weka.filters.supervised.attribute.Discretize`` does with its default
    options (see :func:`mdl_cut_points`); ``method="equal-frequency"`` learns
    ``n_bins`` quantile bins without looking at ``y`` (see
    :func:`equal_frequency_cut_points` for the rule on ties). Columns listed in
    ``nominal_features`` already hold integer codes and pass through unchanged.

    Parameters
    ----------
    method : {"mdl", "equal-frequency"}, default="mdl"
        Supervised MDL discretisation (needs ``y``) or unsupervised
        equal-frequency bins (ignores ``y``).
    n_bins : int, default=10
        Number of bins for ``method="equal-frequency"`` (at least 1); unused
        by ``"mdl"``.
    nominal_features : array-like of int or None, default=None
        Indices of the columns that are nominal, coded ``0, 1, 2, ...`` (NaN for
        missing). They are neither discretised nor changed.

    Attributes
    ----------
    cut_points_ : list of ndarray
        One sorted array of cut points per column (length ``n_features_in_``);
        empty for nominal columns and for columns left as a single bin (Weka's
        "All"). A value ``v`` gets code ``j`` when
        ``cut_points_[f][j - 1] < v <= cut_points_[f][j]``.
    n_bins_ : ndarray of int of shape (n_features_in_,)
        Number of distinct codes each column can take after ``transform``:
        ``len(cut_points_[f]) + 1`` for numeric columns; for nominal columns the
        ``n_categories`` given to :meth:`fit`, else the largest code seen in
        fit plus one (1 when the column is entirely missing).
    nominal_features_ : ndarray of int
        Sorted non-negative indices of the nominal columns.
    classes_ : ndarray of shape (n_classes,)
        Class labels seen in fit (``method="mdl"`` only).
    n_features_in_ : int
        Number of columns seen in fit.
    feature_names_in_ : ndarray of str
        Column names, when ``X`` had string column names.

    References
    ----------
    .. [1] U. M. Fayyad and K. B. Irani, "Multi-interval discretization of
       continuous-valued attributes for classification learning", Proc. 13th
       IJCAI, pp. 1022-1027, 1993.
    .. [2] Weka, ``weka.filters.supervised.attribute.Discretize`` (default
       options: Fayyad & Irani's MDL, ``useBetterEncoding=false``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0], [2.0, 1], [3.0, 0], [4.0, 2], [5.0, 1], [6.0, 0]])
    >>> d = MDLDiscretizer(nominal_features=[1]).fit(X, [0, 0, 0, 1, 1, 1])
    >>> d.cut_points_[0], d.n_bins_
    (array([3.5]), array([2, 3]))
    >>> d.transform([[3.5, 2], [np.nan, 1]])
    array([[ 0.,  2.],
           [nan,  1.]])
    """

    def __init__(self, method="mdl", n_bins=10, nominal_features=None):
        self.method = method
        self.n_bins = n_bins
        self.nominal_features = nominal_features

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.required = self.method == "mdl"
        return tags

    def _nominal_indices(self, n_features):
        if self.nominal_features is None:
            return np.empty(0, dtype=np.intp)
        idx = np.asarray(self.nominal_features)
        if idx.size == 0:
            return np.empty(0, dtype=np.intp)
        if idx.ndim != 1 or idx.dtype.kind not in "iu":
            raise InputError(
                "nominal_features must be a sequence of integer column indices"
            )
        if idx.min() < -n_features or idx.max() >= n_features:
            raise InputError(
                f"nominal_features holds an index outside 0..{n_features - 1}: {idx.tolist()}"
            )
        idx = np.where(idx < 0, idx + n_features, idx)
        if np.unique(idx).size != idx.size:
            raise InputError(f"nominal_features repeats a column: {idx.tolist()}")
        return np.sort(idx).astype(np.intp)

    def fit(self, X, y=None, n_categories=None, instance_weights=None):
        """Learn the cut points of every numeric column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; NaN marks a missing value (ignored when learning
            cuts). Infinite values are rejected.
        y : array-like of shape (n_samples,), default=None
            Class labels, required for ``method="mdl"``; ignored otherwise.
        n_categories : array-like of int or None, default=None
            Number of categories of each nominal column, in the order of the
            sorted ``nominal_features`` indices (e.g. from the ARFF schema, so
            that categories absent from this sample are counted). Default: the
            largest code seen plus one.
        instance_weights : array-like of shape (n_samples,), default=None
            Weka's instance weights of the MDL cuts (see :func:`mdl_cut_points`; not
            scikit-learn's ``sample_weight``, since a weight of 2 is not two rows in the
            cost of a cut); equal-frequency bins do not take them.

        Returns
        -------
        self : MDLDiscretizer

        Raises
        ------
        ValueError
            If ``method`` or ``n_bins`` is invalid; ``y`` is missing for
            ``"mdl"`` or is not a vector of class labels; ``X`` is empty, not
            2-D, holds infinite values; a nominal column holds a value that is
            not a non-negative integer code, or a code ``>= n_categories``; or
            ``n_categories`` has the wrong length.
        """
        if self.method not in ("mdl", "equal-frequency"):
            raise InputError(
                f"method must be 'mdl' or 'equal-frequency', got {self.method!r}"
            )
        if (
            isinstance(self.n_bins, bool)
            or not isinstance(self.n_bins, (int, np.integer))
            or self.n_bins < 1
        ):
            raise InputError(f"n_bins must be a positive integer, got {self.n_bins!r}")
        if self.method == "mdl":
            if y is None:
                raise InputError(
                    f"This {type(self).__name__} estimator requires y to be passed, "
                    "but the target y is None (method='mdl' is supervised)."
                )
            with quiet_finite_check():
                X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
            check_classification_targets(y)
            self.classes_, y_codes = np.unique(y, return_inverse=True)
        else:
            with quiet_finite_check():
                X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan")

        n_features = X.shape[1]
        nominal = self._nominal_indices(n_features)
        if n_categories is not None:
            n_categories = np.asarray(n_categories)
            if n_categories.shape != nominal.shape:
                raise InputError(
                    f"n_categories has {n_categories.size} entries for "
                    f"{nominal.size} nominal features"
                )

        cut_points = []
        n_bins = np.empty(n_features, dtype=np.intp)
        for f in range(n_features):
            col = X[:, f]
            if f in nominal:
                seen = col[~np.isnan(col)]
                if seen.size and (np.any(seen < 0) or np.any(seen != np.floor(seen))):
                    raise InputError(
                        f"nominal feature {f} must hold non-negative integer codes"
                    )
                n_seen = int(seen.max()) + 1 if seen.size else 1
                if n_categories is None:
                    n_bins[f] = n_seen
                else:
                    given = int(n_categories[np.searchsorted(nominal, f)])
                    if given < n_seen:
                        raise InputError(
                            f"nominal feature {f} holds code {n_seen - 1} but "
                            f"n_categories gives {given} categories"
                        )
                    n_bins[f] = given
                cut_points.append(np.empty(0))
                continue
            if self.method == "mdl":
                cuts = mdl_cut_points(col, y_codes, self.classes_.size, weights=instance_weights)
            else:
                cuts = equal_frequency_cut_points(col, self.n_bins)
            cut_points.append(cuts)
            n_bins[f] = cuts.size + 1
        self.nominal_features_ = nominal
        self.cut_points_ = cut_points
        self.n_bins_ = n_bins
        return self

    def transform(self, X):
        """Replace each numeric value by the index of its bin.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Data to discretise; NaN (missing) stays NaN.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_features_in_), float64
            Bin codes ``0 .. n_bins_[f] - 1`` (as floats) for numeric columns,
            nominal columns unchanged, NaN where ``X`` was NaN. Values beyond
            the training range fall into the first or last bin.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If called before :meth:`fit`.
        ValueError
            If ``X`` has a different number of columns than in fit, or holds
            infinite values.
        """
        check_is_fitted(self, "cut_points_")
        with quiet_finite_check():
            X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        return bin_codes(X, self.cut_points_, self.nominal_features_)
