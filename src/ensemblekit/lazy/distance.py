"""Gain-ratio weighted distance and the beta-similarity neighbourhood size of the lazy ensembles.

Lazy Bagging (Zhu & Yang 2008) and Lazy Stacking (Homayouni, Hashemi & Hamzeh)
enrich the bags built for a test instance ``x`` with ``x``'s ``K`` nearest
training instances. Two things decide who those neighbours are:

* **K** (Eq. 1 of the Lazy Stacking paper, taken from Lazy Bagging): the
  fraction ``W = K / N`` of the training set is bounded by ``(1 - beta)
  log4(N)``; with beta-similarity ``beta = 0.99`` this gives ``K = round(N (1 -
  beta) log4 N)``, about 50 for ``N = 1000`` (:func:`beta_similarity_k`).
* **the distance** (Eq. 2):
  ``Dis(x_i, x_j) = (1 / R) sqrt(sum_a IR'(A_a) d_a(x_i, x_j)^2)`` over the
  ``R`` attributes, where ``IR'`` is the normalised information gain ratio of
  each attribute with respect to the class (:func:`gain_ratios`,
  :func:`normalise_weights`) and ``d_a`` the per-attribute difference: the
  absolute difference divided by the attribute's training range for a numeric
  attribute, 0 or 1 (equal or not) for a nominal one, and 1 -- the largest
  difference two values within the training range can have -- when either
  value is missing (:class:`WeightedDistance`).

For rows without missing values the weights are folded into the features
(numeric columns times ``sqrt(w) / range``, one indicator column per nominal
value times ``sqrt(w / 2)``), so that the plain Euclidean distance between
folded rows, divided by ``R``, is Eq. 2, and one scikit-learn
:class:`~sklearn.neighbors.NearestNeighbors` index answers every query. A
missing value has no place in that embedding, so every pair involving one is
evaluated with the formula itself, in chunks of whole-array arithmetic.

References
----------
.. [1] X. Zhu and Y. Yang, "A lazy bagging approach to classification",
   Pattern Recognition 41(10), pp. 2980-2992, 2008 (beta-similarity, weighted
   distance).
.. [2] H. Homayouni, S. Hashemi and A. Hamzeh, "A Lazy Ensemble Learning
   Method to Classification", Eq. 1 (K) and Eq. 2 (distance).
.. [3] J. R. Quinlan, *C4.5: Programs for Machine Learning*, Morgan Kaufmann,
   1993 (gain ratio).
.. [4] Weka 3.9, ``weka.attributeSelection.GainRatioAttributeEval`` (MDL
   discretisation with ``useBetterEncoding=true``; missing values spread over
   the observed values in proportion to their frequencies) and
   ``weka.core.ContingencyTables.gainRatio``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ensemblekit.errors import InputError

from ..discretize import MDLDiscretizer, mdl_cut_points
from ..rows import quiet_finite_check
from ..units import in_units, unit_exponents

__all__ = [
    "WeightedDistance",
    "beta_similarity_k",
    "gain_ratios",
    "normalise_weights",
]


# Elements of the (queries, training rows, attributes) block evaluated at once
# by the exact formula: ~32 MB of float64.
_CHUNK_ELEMENTS = 1 << 22


def beta_similarity_k(n_samples, beta=0.99):
    """Number of nearest neighbours K from beta-similarity (Eq. 1).

    ``K = round(N (1 - beta) log4 N)``, rounded half up and kept within
    ``0 .. N``: the largest neighbourhood for which a lazy bag stays
    ``beta``-similar to a plain bootstrap bag (Zhu & Yang 2008). With the
    papers' ``beta = 0.99``: ``N = 1000`` gives 50, ``N = 100`` gives 3,
    ``N = 1`` gives 0.

    Parameters
    ----------
    n_samples : int
        Training set size ``N`` (>= 0).
    beta : float, default=0.99
        Beta-similarity, strictly between 0 and 1.

    Returns
    -------
    k : int
        Number of neighbours, ``0 <= k <= n_samples``.

    Raises
    ------
    ValueError
        If ``n_samples`` is not an integer >= 0 or ``beta`` is not a number in
        the open interval (0, 1).

    References
    ----------
    Homayouni, Hashemi & Hamzeh, Eq. 1 (``W <= (1 - beta) log4 N`` with ``W =
    K / N``); Zhu & Yang, Pattern Recognition 41(10), 2008.

    Examples
    --------
    >>> beta_similarity_k(1000), beta_similarity_k(100), beta_similarity_k(1)
    (50, 3, 0)
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 0:
        raise InputError(f"n_samples must be an integer >= 0, got {n_samples!r}")
    check_beta(beta)
    n = int(n_samples)
    if n < 2:
        return 0
    k = math.floor(n * (1.0 - float(beta)) * math.log(n) / math.log(4.0) + 0.5)
    return int(min(max(k, 0), n))


def check_beta(beta) -> None:
    """Raise ValueError unless ``beta`` is a real number in the open interval (0, 1)."""
    if (
        isinstance(beta, bool)
        or not isinstance(beta, numbers.Real)
        or not np.isfinite(beta)
        or not 0.0 < beta < 1.0
    ):
        raise InputError(f"beta must be a number strictly between 0 and 1, got {beta!r}")


# --------------------------------------------------------------------------
# gain ratio (Weka's GainRatioAttributeEval)
# --------------------------------------------------------------------------
def _gain_ratio_of_table(table):
    """Gain ratio of a (values x classes) table of counts, as ``ContingencyTables.gainRatio``.

    ``(H(C) - H(C | A)) / H(A)``; 0 when the split information ``N H(A)``
    (in nats) is below Weka's tolerance 1e-6, and never negative.
    """

    def xlogx(v):
        v = np.asarray(v, dtype=np.float64)
        out = np.zeros_like(v)
        pos = v > 0
        out[pos] = v[pos] * np.log(v[pos])
        return out

    total = table.sum()
    if total <= 0:
        return 0.0
    rows = table.sum(axis=1)
    cols = table.sum(axis=0)
    pre = xlogx(cols).sum() - xlogx(total)  # -N H(C)
    split = xlogx(rows).sum()
    post = xlogx(table).sum() - split  # -N H(C | A)
    split_info = xlogx(total) - split  # N H(A)
    if abs(split_info) < 1e-6:
        return 0.0
    return max(0.0, float((post - pre) / split_info))


def gain_ratios(X, y, nominal_features=None, n_categories=None):
    """Information gain ratio of every attribute with respect to the class.

    Computed as Weka's ``GainRatioAttributeEval`` with its default options:

    1. every numeric attribute is discretised with Fayyad & Irani's
       supervised MDL cut points learnt on ``(X, y)``, using the better
       encoding of the cut point (see :mod:`ensemblekit.discretize` for the
       recursion);
    2. each attribute gives a table of counts (value x class); the rows whose
       value is missing are spread over the observed values in proportion to
       how often each value occurs (all classes alike: a missing row of class
       ``c`` adds ``n_v / n_known`` to cell ``(v, c)``), unless the attribute is
       missing in every row, which gives 0;
    3. gain ratio = ``(H(C) - H(C | A)) / H(A)`` (Quinlan 1993), 0 when the
       attribute takes a single value.

    On Weka's iris file this gives petal width 0.871, petal length 0.734,
    sepal length 0.381 and sepal width 0.242, as Weka 3.9.7 prints.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric columns raw; the columns in ``nominal_features`` hold integer
        codes ``0 .. r - 1``. NaN marks a missing value.
    y : array-like of shape (n_samples,)
        Class labels (any labels; no missing values).
    nominal_features : array-like of int or None, default=None
        Indices of the nominal columns; all others are numeric.
    n_categories : array-like of int or None, default=None
        Number of categories of each nominal column, in the order of the
        sorted ``nominal_features``; default: the largest code seen plus one.

    Returns
    -------
    ratios : ndarray of shape (n_features,)
        Gain ratios in [0, 1], float64.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, is empty or holds infinite values, ``X`` and
        ``y`` differ in length, ``y`` is not a vector of class labels, or a
        nominal column holds a value that is not a code ``0 .. r - 1``.

    References
    ----------
    Quinlan, *C4.5*, 1993 (gain ratio); Fayyad & Irani, IJCAI 1993 (MDL);
    Weka 3.9 ``GainRatioAttributeEval``; Homayouni et al. and Zhu & Yang
    (gain ratio as the attribute weight of Eq. 2).

    Examples
    --------
    >>> X = np.array([[0, 1.0], [0, 2.0], [1, 1.0], [1, 2.0]])
    >>> gain_ratios(X, ["a", "a", "b", "b"], nominal_features=[0]).round(3).tolist()
    [1.0, 0.0]
    """
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_array, column_or_1d

    with quiet_finite_check():
        X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
    y = column_or_1d(y)
    if y.shape[0] != X.shape[0]:
        raise InputError(f"X and y have different numbers of rows ({X.shape[0]} and {y.shape[0]})")
    check_classification_targets(y)
    classes, y_codes = np.unique(y, return_inverse=True)
    n_classes = classes.size
    shape = MDLDiscretizer(method="equal-frequency", n_bins=1, nominal_features=nominal_features)
    shape.fit(X, n_categories=n_categories)  # checks the nominal codes
    nominal = set(shape.nominal_features_.tolist())
    n = X.shape[0]
    ratios = np.zeros(X.shape[1])
    for f in range(X.shape[1]):
        col = X[:, f]
        if f in nominal:
            codes = col
            n_values = int(shape.n_bins_[f])
        else:
            cuts = mdl_cut_points(col, y_codes, n_classes, better_encoding=True)
            codes = np.searchsorted(cuts, col, side="left").astype(np.float64)
            codes[np.isnan(col)] = np.nan
            n_values = cuts.size + 1
        missing = np.isnan(codes)
        n_missing = int(missing.sum())
        if n_missing == n:
            continue
        table = np.zeros((n_values, n_classes))
        np.add.at(table, (codes[~missing].astype(np.intp), y_codes[~missing]), 1.0)
        if n_missing:
            miss = np.bincount(y_codes[missing], minlength=n_classes).astype(np.float64)
            table += np.outer(table.sum(axis=1) / (n - n_missing), miss)
        ratios[f] = _gain_ratio_of_table(table)
    return ratios


def normalise_weights(ratios):
    """Normalised gain ratios ``IR'`` of Eq. 2: each ratio over their sum.

    The papers weight each attribute by its "normalised" information gain
    ratio without saying which normalisation; dividing by the sum makes the
    weights a distribution over the attributes (they sum to 1). When every
    ratio is 0 all attributes get the same weight ``1 / R``. Any positive
    rescaling of the weights changes distances by a constant factor only, so
    it never changes which instances are nearest.

    Parameters
    ----------
    ratios : array-like of shape (n_features,)
        Non-negative finite attribute scores.

    Returns
    -------
    weights : ndarray of shape (n_features,)
        Non-negative, summing to 1.

    Raises
    ------
    ValueError
        If ``ratios`` is empty, not 1-D, or holds a negative or non-finite value.

    Examples
    --------
    >>> normalise_weights([0.5, 1.5, 0.0]).tolist()
    [0.25, 0.75, 0.0]
    """
    r = np.asarray(ratios, dtype=np.float64)
    if r.ndim != 1 or r.size == 0:
        raise InputError("ratios must be a non-empty one-dimensional array")
    if not np.all(np.isfinite(r)) or np.any(r < 0):
        raise InputError("ratios must be finite and non-negative")
    with np.errstate(over="ignore"):
        total = r.sum()
    if total <= 0:
        return np.full(r.size, 1.0 / r.size)
    if np.isinf(total):  # scores near the float limit (a damaged model's): relative to the largest
        r = r / r.max()
        total = r.sum()
    return r / total


# --------------------------------------------------------------------------
# the distance
# --------------------------------------------------------------------------
class WeightedDistance:
    """Eq. 2 of the lazy ensembles: a weighted, range-normalised Euclidean distance.

    ``Dis(a, b) = (1 / R) sqrt(sum_f w_f d_f(a, b)^2)`` over the ``R``
    attributes, where ``d_f`` is ``|a_f - b_f| / range_f`` for a numeric
    attribute (``range_f`` = training max - min; 0 for a constant attribute),
    ``[a_f != b_f]`` for a nominal one, and 1 when ``a_f`` or ``b_f`` (or both)
    is missing. Values outside the training range are not clipped, so a
    numeric difference can exceed 1.

    Neighbour queries (:meth:`kneighbors`) use one scikit-learn
    :class:`~sklearn.neighbors.NearestNeighbors` index (a k-d tree, whose
    distances are computed pair by pair, so a row's answer never depends on
    the other rows queried with it) over the training rows without missing
    values, embedded so that Euclidean distance / R equals Eq. 2
    (:meth:`embed`). Pairs involving a missing value are evaluated with the
    formula (:meth:`pairwise`), in chunks of whole-array arithmetic.

    A numeric column near the float limits (``|x|`` above ``2**UNIT_LIMIT`` or
    below ``2**-UNIT_LIMIT``) is measured in a power-of-two unit of its own
    (:func:`ensemblekit.units.unit_exponents`), where ``max - min`` and the squares cannot
    overflow; the distances are those of the same data in an ordinary unit, bit
    for bit. A query value so far outside a narrow training range that its
    difference is beyond a float is at an infinite distance (in any unit).

    Parameters
    ----------
    weights : {"gain-ratio", "uniform"} or array-like of shape (n_features,), default="gain-ratio"
        ``"gain-ratio"``: the normalised gain ratios of the attributes on the
        training data (:func:`gain_ratios`, :func:`normalise_weights`), as the
        papers do; ``"uniform"``: ``1 / R`` each (an unweighted distance, as
        Weka's IBk); an array: non-negative weights, normalised to sum to 1.
    nominal_features : array-like of int or None, default=None
        Indices of the nominal columns (integer codes, NaN = missing).
    n_categories : array-like of int or None, default=None
        Categories of each nominal column, in the order of the sorted
        ``nominal_features``; default: the largest code seen plus one.

    Attributes
    ----------
    gain_ratios_ : ndarray of shape (n_features_in_,) or None
        Raw gain ratios (``weights="gain-ratio"`` only).
    weights_ : ndarray of shape (n_features_in_,)
        The normalised weights ``IR'`` used in Eq. 2 (sum 1).
    exponents_ : ndarray of int64 of shape (n_features_in_,)
        The power of two each column is measured in (:func:`ensemblekit.units.unit_exponents`):
        0 but for numeric columns near the float limits, whose values count as
        ``x * 2**-exponents_[f]`` in every distance.
    min_, range_ : ndarray of shape (n_features_in_,)
        Training minimum and range of each numeric column, in its unit (0 for
        nominal columns and for columns with no value).
    nominal_features_ : ndarray of int
        Sorted indices of the nominal columns.
    n_categories_ : ndarray of int
        Categories of each nominal column (same order).
    X_ : ndarray of shape (n_samples, n_features_in_)
        The training rows (needed by the exact formula).
    complete_ : ndarray of int
        Indices of the training rows without missing values (those indexed).
    index_ : sklearn.neighbors.NearestNeighbors or None
        The k-d tree over the embedded complete rows (None when every training
        row has a missing value).
    n_features_in_ : int

    References
    ----------
    Homayouni, Hashemi & Hamzeh, Eq. 2; Zhu & Yang, Pattern Recognition
    41(10), 2008 (the weighted distance of Lazy Bagging).

    Examples
    --------
    >>> X = np.array([[0.0, 0], [1.0, 0], [2.0, 1], [np.nan, 1]])
    >>> dist = WeightedDistance(weights=[1.0, 1.0], nominal_features=[1]).fit(X)
    >>> dist.pairwise(X[:1], X).round(4).tolist()  # weights 1/2 each, R = 2
    [[0.0, 0.1768, 0.5, 0.5]]
    >>> d, i = dist.kneighbors([[0.9, 0]], 2)
    >>> i.tolist()
    [[1, 0]]
    """

    def __init__(self, weights="gain-ratio", nominal_features=None, n_categories=None):
        self.weights = weights
        self.nominal_features = nominal_features
        self.n_categories = n_categories

    def fit(self, X, y=None):
        """Learn ranges, weights and the neighbour index from the training rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows; NaN marks a missing value.
        y : array-like of shape (n_samples,) or None
            Class labels; required by ``weights="gain-ratio"``.

        Returns
        -------
        self : WeightedDistance

        Raises
        ------
        ValueError
            If ``X`` is empty, not 2-D or holds infinite values; ``y`` is
            missing for ``"gain-ratio"``; ``weights`` is not a valid choice or
            array (wrong length, negative or non-finite values); or a nominal
            column holds a value that is not a valid code.
        """
        from sklearn.utils.validation import check_array

        with quiet_finite_check():
            X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
        _n, d = X.shape
        shape = MDLDiscretizer(
            method="equal-frequency", n_bins=1, nominal_features=self.nominal_features
        ).fit(X, n_categories=self.n_categories)
        nominal = shape.nominal_features_
        n_categories = shape.n_bins_[nominal].astype(np.intp)

        w = self.weights
        ratios = None
        if isinstance(w, str):
            if w == "gain-ratio":
                if y is None:
                    raise InputError("weights='gain-ratio' needs the class labels y")
                ratios = gain_ratios(X, y, nominal, n_categories)
                weights = normalise_weights(ratios)
            elif w == "uniform":
                weights = np.full(d, 1.0 / d)
            else:
                raise InputError(f"weights must be 'gain-ratio', 'uniform' or an array, got {w!r}")
        else:
            arr = np.asarray(w, dtype=np.float64)
            if arr.shape != (d,):
                raise InputError(f"weights must have one entry per feature ({d}), got shape {arr.shape}")
            weights = normalise_weights(arr)
        return self._set_rows(X.copy(), weights, nominal, n_categories, ratios)

    @classmethod
    def from_fitted(cls, X, weights, nominal_features, n_categories, gain_ratios=None):
        """The distance a fit with these weights leaves, from its parts (as a model file holds them).

        A lazy ensemble stores its training rows and gain ratios, not this
        object; it rebuilds the distance with this method, which sets every
        attribute exactly as :meth:`fit` does (the same code computes them), so
        the rebuilt distance answers every query as the fitted one.

        Parameters
        ----------
        X : ndarray of float64 of shape (n_samples, n_features)
            Training rows, already checked (nominal codes in range, NaN = missing,
            no infinity); kept, not copied.
        weights : ndarray of float64 of shape (n_features,)
            The normalised weights ``IR'`` (non-negative, sum 1).
        nominal_features : ndarray of int
            Sorted indices of the nominal columns.
        n_categories : ndarray of int
            Categories of each nominal column, in that order.
        gain_ratios : ndarray of float64 of shape (n_features,) or None
            The raw gain ratios the weights come from, kept as ``gain_ratios_``.

        Returns
        -------
        WeightedDistance
            Fitted, with ``weights="gain-ratio"`` when ``gain_ratios`` is given,
            else the weights themselves as its parameter.
        """
        dist = cls("gain-ratio" if gain_ratios is not None else weights, nominal_features,
                   n_categories)
        return dist._set_rows(X, weights, nominal_features, n_categories, gain_ratios)

    def _set_rows(self, X, weights, nominal, n_categories, ratios):
        """Set the fitted state from the (kept) training rows and the weights; returns self."""
        d = X.shape[1]
        is_nominal = np.zeros(d, dtype=bool)
        is_nominal[nominal] = True
        self.nominal_features_ = nominal
        self.n_categories_ = n_categories
        self.n_features_in_ = d
        self.gain_ratios_ = ratios
        self.weights_ = weights
        known = ~np.isnan(X)
        self.exponents_ = unit_exponents(X, np.flatnonzero(~is_nominal))
        scaled = in_units(X, self.exponents_)
        mins = np.zeros(d)
        ranges = np.zeros(d)
        for f in np.flatnonzero(~is_nominal):
            col = scaled[known[:, f], f]
            if col.size:
                mins[f] = col.min()
                ranges[f] = col.max() - col.min()
        self.min_, self.range_ = mins, ranges
        self._is_nominal = is_nominal
        self._numeric = np.flatnonzero(~is_nominal)
        # scale of a numeric difference: 1/range (0 for a constant column)
        inv = np.zeros(d)
        inv[ranges > 0] = 1.0 / ranges[ranges > 0]
        self._inv_range = inv
        self.X_ = X
        self.complete_ = np.flatnonzero(known.all(axis=1))
        self.index_ = None
        if self.complete_.size:
            from sklearn.neighbors import NearestNeighbors

            self.index_ = NearestNeighbors(algorithm="kd_tree").fit(self.embed(X[self.complete_]))
        return self

    # ------------------------------------------------------------------
    def _check(self, X):
        from sklearn.exceptions import NotFittedError
        from sklearn.utils.validation import check_array

        if not hasattr(self, "weights_"):
            raise NotFittedError("this WeightedDistance is not fitted yet; call fit first")
        with quiet_finite_check():
            X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
        if X.shape[1] != self.n_features_in_:
            raise InputError(
                f"X has {X.shape[1]} features, but the distance was fitted with {self.n_features_in_}"
            )
        return X

    def embed(self, X):
        """Fold the weights into the features: Euclidean distance / R = Eq. 2.

        Numeric column ``f`` becomes ``(x_f - min_f) sqrt(w_f) / range_f``;
        nominal column ``f`` becomes one indicator column per category, each
        times ``sqrt(w_f / 2)`` (a mismatch differs in two indicators, adding
        ``w_f``); a code outside ``0 .. r - 1`` gives no indicator, which
        keeps a mismatch with every category but counts ``w_f / 2`` only.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Rows without missing values.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_numeric + sum(n_categories_))
            Numeric columns first (in column order), then the indicator blocks.

        Raises
        ------
        ValueError
            If a row holds a missing value (it has no place in the embedding),
            or ``X`` has the wrong number of columns.
        """
        X = self._check(X)
        if np.isnan(X).any():
            raise InputError("rows with missing values cannot be embedded; use pairwise()")
        w = self.weights_
        num = self._numeric
        values = in_units(X[:, num], self.exponents_[num])
        # a value far outside a narrow training range may lie further than a float holds
        with np.errstate(over="ignore"):
            parts = [(values - self.min_[num]) * (np.sqrt(w[num]) * self._inv_range[num])]
        for f, r in zip(self.nominal_features_, self.n_categories_):
            block = (X[:, f][:, None] == np.arange(r)[None, :]).astype(np.float64)
            parts.append(block * math.sqrt(w[f] / 2.0))
        return np.ascontiguousarray(np.hstack(parts))

    def _squared(self, A, B):
        """``R^2 Dis^2`` for every pair of rows of ``A`` and ``B``, by the formula.

        Whole-array arithmetic over blocks of rows of ``A``; every pair's value
        is summed over the attributes in the same order whatever the block, so
        a row's distances do not depend on the rows computed with it.
        """
        out = np.zeros((A.shape[0], B.shape[0]))
        if A.shape[0] == 0 or B.shape[0] == 0:
            return out
        w = self.weights_
        num, nom = self._numeric, self.nominal_features_
        scale = np.sqrt(w[num]) * self._inv_range[num]
        units = self.exponents_[num]
        au, bu = in_units(A[:, num], units), in_units(B[:, num], units)
        with np.errstate(over="ignore"):  # a value far outside a narrow range: inf
            an, bn = au * scale, bu * scale  # NaN stays NaN
        far = np.isinf(an).any() or np.isinf(bn).any()
        w_num = np.broadcast_to(w[num], (B.shape[0], num.size))
        a_nom, b_nom, w_nom = A[:, nom], B[:, nom], w[nom]
        step = max(1, _CHUNK_ELEMENTS // (B.shape[0] * A.shape[1]))
        for s in range(0, A.shape[0], step):
            block = out[s : s + step]
            if num.size:
                with np.errstate(over="ignore", invalid="ignore"):
                    d = an[s : s + step, None, :] - bn[None, :, :]
                    if far:
                        # a value scaled beyond a float's reach: scale the difference
                        # instead (inf where it too is beyond reach, 0 between equal values)
                        beyond = np.isinf(an[s : s + step, None, :]) | np.isinf(bn[None, :, :])
                        gap = (au[s : s + step, None, :] - bu[None, :, :]) * scale
                        np.copyto(d, gap, where=beyond)
                    np.multiply(d, d, out=d)
                    # a missing value: the largest difference, 1 (times the weight)
                    np.copyto(d, w_num, where=np.isnan(d))
                    block += np.add.reduce(d, axis=-1)
            if nom.size:
                # 0/1 mismatch; NaN != anything, so a missing value is a mismatch
                mismatch = a_nom[s : s + step, None, :] != b_nom[None, :, :]
                block += np.add.reduce(mismatch * w_nom, axis=-1)
        return out

    def pairwise(self, A, B=None):
        """Eq. 2 between every row of ``A`` and every row of ``B`` (the exact formula).

        Parameters
        ----------
        A : array-like of shape (n_a, n_features_in_)
            NaN marks a missing value.
        B : array-like of shape (n_b, n_features_in_) or None
            Default: the training rows.

        Returns
        -------
        D : ndarray of shape (n_a, n_b)
            Distances, ``>= 0``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``A`` or ``B`` has the wrong number of columns or infinite values.
        """
        A = self._check(A)
        B = self.X_ if B is None else self._check(B)
        return np.sqrt(self._squared(A, B)) / self.n_features_in_

    def kneighbors(self, X, n_neighbors):
        """The ``n_neighbors`` training rows nearest to each row of ``X`` under Eq. 2.

        Complete query rows are answered by the k-d tree over the complete
        training rows, merged with the exact distances to the training rows
        that have a missing value; query rows with a missing value are
        compared with every training row by the exact formula. All rows are
        answered in one batch; each row's answer depends on that row only.
        Among candidates at exactly equal distance the lower training index
        comes first where the formula decides; the k-d tree's order is kept
        for ties it returns.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features_in_)
            Query rows; NaN marks a missing value.
        n_neighbors : int
            Number of neighbours, ``0 <= n_neighbors <= n_samples``.

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            Eq. 2 distances, ascending along each row.
        indices : ndarray of int of shape (n_queries, n_neighbors)
            Training row indices.

        Raises
        ------
        ValueError
            If ``n_neighbors`` is not an integer in ``0 .. n_samples``, or ``X``
            has the wrong number of columns or infinite values.
        """
        X = self._check(X)
        n_train = self.X_.shape[0]
        k = n_neighbors
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 0 <= k <= n_train:
            raise InputError(f"n_neighbors must be an integer in 0..{n_train}, got {k!r}")
        k = int(k)
        q = X.shape[0]
        dist = np.empty((q, k))
        ind = np.empty((q, k), dtype=np.intp)
        if k == 0 or q == 0:
            return dist, ind
        R = self.n_features_in_
        complete_q = ~np.isnan(X).any(axis=1)
        rows = np.flatnonzero(complete_q)
        if rows.size and self.index_ is not None:
            embedded = self.embed(X[rows])
            # a value so far outside a narrow training range that its embedding is beyond a
            # float's reach: the exact formula answers that row
            reachable = np.isfinite(embedded).all(axis=1)
            complete_q[rows[~reachable]] = False
            rows, embedded = rows[reachable], embedded[reachable]
        if rows.size and self.index_ is not None:
            kk = min(k, self.complete_.size)
            with quiet_finite_check():
                d1, i1 = self.index_.kneighbors(embedded, kk)
            d1 = d1 / R
            i1 = self.complete_[i1]
            incomplete = np.setdiff1d(np.arange(n_train), self.complete_, assume_unique=True)
            if incomplete.size:
                d2 = np.sqrt(self._squared(X[rows], self.X_[incomplete])) / R
                cand_d = np.hstack([d1, d2])
                cand_i = np.hstack([i1, np.broadcast_to(incomplete, (rows.size, incomplete.size))])
                order = np.lexsort((cand_i, cand_d), axis=-1)[:, :k]
                d1 = np.take_along_axis(cand_d, order, axis=1)
                i1 = np.take_along_axis(cand_i, order, axis=1)
            dist[rows], ind[rows] = d1, i1
            rest = np.flatnonzero(~complete_q)
        else:
            rest = np.arange(q)
        if rest.size:
            step = max(1, _CHUNK_ELEMENTS // (n_train * R))
            for s in range(0, rest.size, step):
                part = rest[s : s + step]
                dd = np.sqrt(self._squared(X[part], self.X_)) / R
                order = np.argsort(dd, axis=1, kind="stable")[:, :k]
                dist[part] = np.take_along_axis(dd, order, axis=1)
                ind[part] = order
        return dist, ind
