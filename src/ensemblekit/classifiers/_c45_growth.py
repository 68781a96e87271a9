"""Growing and pruning one C4.5 tree as J48 does, on arrays that are already valid.

The private kernels under :class:`~ensemblekit.classifiers.c45.C45Tree` (see that module
for the rules, after Weka 3.9.7's ``weka.classifiers.trees.j48``): :func:`grow_c45` runs
growth and collapse in one compiled call (:mod:`ensemblekit.classifiers._c45_kernels`,
numba, imported on first use), then prunes the tree in another
(:mod:`ensemblekit.classifiers._c45_pruning`) and returns its flat node arrays. This
module imports numpy alone, so that ``ensemblekit fit c45`` need not import
scikit-learn (:meth:`~ensemblekit.classifiers.c45_model.C45Model.fit_coded`); scipy is
imported only for a confidence factor other than J48's default.
"""

from __future__ import annotations

import math

import numpy as np

from ensemblekit.errors import InputError

from ._c45_nodes import _SMALL

#: Rows a tree can be grown on: the growth kernel indexes rows with 32-bit integers.
_MAX_ROWS = 2**31 - 1
#: Largest class or branch code kept in one signed byte.
_BYTE_CODES = 127

__all__ = ["add_errors", "grow_c45"]

# Phi^-1(0.75), the normal quantile of J48's default confidence factor 0.25, as scipy's
# ndtri gives it (a test checks the two agree): the common fit need not import scipy.special
# (about 0.17 s) for one number.
_NORMAL_INVERSE = {0.75: 0.6744897501960817}


def _normal_inverse(p: float) -> float:
    """Phi^-1(p), the standard normal quantile (scipy's ``ndtri``, as Weka's ``normalInverse``)."""
    if p in _NORMAL_INVERSE:
        return _NORMAL_INVERSE[p]
    from scipy.special import ndtri

    return float(ndtri(p))


def add_errors(n: float, e: float, cf: float) -> float:
    """C4.5's extra pessimistic errors of a leaf with ``n`` instances and ``e`` errors.

    The upper limit ``U`` of the confidence interval of the error rate at confidence
    ``cf`` gives ``n * U - e``: for ``e = 0``, ``U = 1 - cf ** (1 / n)``; for ``0 < e < 1``
    a linear interpolation between 0 and 1 error; for ``e + 0.5 >= n``, ``n - e``; else
    the normal approximation with continuity correction (Wilson's upper limit at
    ``z = Phi^-1(1 - cf)`` for ``(e + 0.5) / n``). As Weka's ``Stats.addErrs``, ``cf`` is
    taken as a 32-bit float (J48 stores it so), and ``cf > 0.5`` adds nothing.

    Parameters
    ----------
    n : float > 0
        Weight of the instances at the leaf.
    e : float in [0, n]
        Weight of those the leaf misclassifies.
    cf : float in (0, 0.5]
        Confidence factor (J48 ``-C``).

    Returns
    -------
    float
        The extra errors, >= 0.

    References
    ----------
    .. [1] J. R. Quinlan, *C4.5: Programs for Machine Learning*, 1993, Sect. 4.2.
    """
    cf32 = np.float32(cf)
    if cf32 > 0.5:
        return 0.0
    cfd = float(cf32)
    if e < 1:
        base = n * (1 - cfd ** (1 / n))
        if e == 0:
            return base
        return base + e * (add_errors(n, 1, cf) - base)
    if e + 0.5 >= n:
        return max(n - e, 0.0)
    z = _normal_inverse(float(np.float32(1) - cf32))
    f = (e + 0.5) / n
    r = (f + (z * z) / (2 * n) + z * math.sqrt((f / n) - (f * f / n) + (z * z / (4 * n * n)))) \
        / (1 + (z * z) / n)
    return (r * n) - e


def _few_values_ok(nominal, n_cats, n_all):
    """Which columns' gains enter the average gain of a node (Weka's ``multiVal`` rule).

    A nominal attribute with at least 0.3 x (number of training instances) values is left
    out of the average, unless every attribute is such a nominal one.
    """
    many = nominal & ~(n_cats < 0.3 * n_all - _SMALL)
    all_many = bool(nominal.size and nominal.all() and many.all())
    return np.ascontiguousarray(~many | all_many)


def _zero_representatives(X, nominal):
    """For each column holding zeros of both signs, the zero ``numpy.unique`` keeps; else NaN.

    The growth kernel moves a numeric cut to the largest distinct training value not
    above it, as ``numpy.unique`` lists them; it forms that list itself from its sorted
    columns, and only which of -0 and +0 stands for a run of both depends on numpy's
    (unstable) sort.
    """
    rep = np.full(X.shape[1], np.nan)
    zeros = X == 0.0
    negative = np.signbit(X) & zeros
    mixed = ~nominal & negative.any(axis=0) & (zeros & ~negative).any(axis=0)
    for j in np.flatnonzero(mixed):
        col = X[:, j]
        vals = np.unique(col[~np.isnan(col)])
        rep[j] = vals[np.searchsorted(vals, 0.0)]
    return rep


_NODE_ARRAYS = ("feature", "threshold", "child_start", "n_children", "value", "bag_value",
                "is_empty")


def grow_c45(X, y, sample_weight, nominal, n_categories, n_classes, *, min_samples_leaf=2,
             confidence_factor=0.25, unpruned=False, subtree_raising=True, collapse_tree=True,
             counts=None, binary_splits=False, mdl_correction=True,
             split_point_actual_value=True, reduced_error_pruning=False, num_folds=3, seed=1,
             weka_sums=True, split_policy=None):
    """Grow (and prune) one J48 tree from arrays that are already valid; the fast path.

    No input is checked: callers that grow many trees (the bagging ensembles) validate once
    and call this per bag.

    Parameters
    ----------
    X : ndarray of float64 of shape (n, d)
        Numeric columns as numbers, nominal columns as codes ``0 .. n_categories[j] - 1``,
        NaN for a missing value.
    y : ndarray of int of shape (n,)
        Class codes ``0 .. n_classes - 1``.
    sample_weight : ndarray of shape (n,) or None
        Instance weights ``> 0`` (rows of weight 0 must be left out by the caller; with
        ``reduced_error_pruning`` they may stay: they take their places in the folds, as
        in J48, and no part in growing or pruning).
    nominal : ndarray of bool of shape (d,)
        Which columns are nominal.
    n_categories : ndarray of int64 of shape (d,)
        Declared values of each nominal column (any value for numeric columns).
    n_classes : int
    counts : ndarray of shape (n,) or None
        How many instances each row stands for in J48's count of known values;
        default: its weight when that is a whole number (copies), else 1.
    binary_splits, mdl_correction, split_point_actual_value : bool
        J48's ``-B``, not ``-J``, not ``-doNotMakeSplitPointActualValue``, as
        :class:`~ensemblekit.classifiers.c45.C45Tree` describes them.
    reduced_error_pruning : bool
        Prune with a hold-out fold instead of the error estimate (J48 ``-R``; see
        :mod:`ensemblekit.classifiers._c45_rep`): the tree is grown, not collapsed, on
        ``num_folds - 1`` folds (``seed``) and pruned on the last; ``confidence_factor``,
        ``unpruned``, ``subtree_raising`` and ``collapse_tree`` play no part.
    num_folds, seed : int
        J48's ``-N`` and ``-Q``, with ``reduced_error_pruning`` only.
    weka_sums : bool, default=True
        Replay J48's bookkeeping where weights are fractional (below). The ensembles,
        which grow a tree per bag or per test row, leave it out: it costs about as much
        as the growth, and their trees' sums then differ from J48's in the last bits only.
    split_policy : tuple or None
        How each node chooses its split: None, J48's; the Inner-Ensemble C4.5 passes
        :func:`ensemblekit.classifiers._c45_kernels.inner_policy`'s tuple.

    Returns
    -------
    dict
        The flat node arrays of :class:`C45Tree` (``feature``, ``threshold``,
        ``child_start``, ``n_children``, ``value``, ``bag_value``, ``is_empty``,
        ``total``, ``bag_total``). Where instance weights are fractional (training rows
        with missing values, or weights that are not whole numbers), the class weights
        and totals are J48's own doubles, replayed in its order of instances
        (:mod:`ensemblekit.classifiers._c45_weka_sums`), so that predictions equal J48's
        to the last bit.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    n = X.shape[0]
    if n >= _MAX_ROWS:  # the growth kernel keeps row indices as 32-bit integers
        raise InputError(f"C4.5 grows a tree on fewer than {_MAX_ROWS} rows, got {n}")
    w = np.ones(n) if sample_weight is None else np.ascontiguousarray(sample_weight, dtype=float)
    if counts is None:
        counts = np.where(w == np.floor(w), w, 1.0)
    nominal = np.ascontiguousarray(nominal, dtype=np.bool_)
    n_cats = np.ascontiguousarray(n_categories, dtype=np.int64)
    counts = np.ascontiguousarray(counts, dtype=float)
    from . import _c45_kernels as kernels

    # class and branch codes are read at random rows: as bytes when they fit, they stay in
    # the processor's cache on large data
    small = n_classes <= _BYTE_CODES and int(n_cats[nominal].max(initial=2)) <= _BYTE_CODES
    code = np.int8 if small else np.int64
    y_codes = y
    y = y.astype(code)
    few_values_ok = _few_values_ok(nominal, n_cats, float(counts.sum()))
    zero_rep = _zero_representatives(X, nominal)
    if reduced_error_pruning:
        from ._c45_rep import holdout, prune_reduced_error

        grow, prune = holdout(y, num_folds, seed)
        grow, prune = grow[w[grow] > 0], prune[w[prune] > 0]
        arrays = kernels.grow_unpruned(
            X[grow], y[grow], w[grow], counts[grow], nominal, n_cats, int(n_classes),
            float(min_samples_leaf), few_values_ok, zero_rep, False,
            np.empty(grow.size, dtype=code), False, bool(mdl_correction),
            bool(split_point_actual_value), X)
        return _with_totals(prune_reduced_error(X[prune], y[prune], w[prune], nominal,
                                                dict(zip(_NODE_ARRAYS, arrays[:7]))))
    grow_args = (X, y, w, counts, nominal, n_cats, int(n_classes), float(min_samples_leaf),
                 few_values_ok, zero_rep)
    options = (bool(binary_splits), bool(mdl_correction), bool(split_point_actual_value),
               np.empty((0, X.shape[1])))
    # fractional instance weights: J48's sums depend on its order of instances; the replay
    # (multiway nominal tests only) takes the grown tree before collapse, so it is grown
    # uncollapsed and collapsed afterwards (the same tree as collapsing while growing)
    replay = weka_sums and not binary_splits and (np.isnan(X).any() or np.any(w != np.floor(w)))
    arrays = grown = kernels.grow_unpruned(
        *grow_args, bool(collapse_tree) and not replay, np.empty(n, dtype=code), *options,
        split_policy)
    if replay and collapse_tree:
        arrays = kernels.collapse_grown(*grown)
    cf32 = np.float32(confidence_factor)
    z = 0.0
    if unpruned:
        tree = dict(zip(_NODE_ARRAYS, arrays[:7]))
    else:
        from ._c45_pruning import prune_tree

        z = _normal_inverse(float(np.float32(1) - cf32)) if cf32 <= 0.5 else 0.0
        pruned = prune_tree(X, y, nominal, n_cats, *arrays, float(cf32), z,
                            bool(subtree_raising))
        tree = dict(zip(_NODE_ARRAYS, pruned))
    _with_totals(tree)
    if replay:
        _take_weka_sums(tree, X, y_codes, w, nominal, n_cats, n_classes, grown,
                        collapse=bool(collapse_tree), prune=not unpruned, cfd=float(cf32), z=z,
                        subtree_raising=bool(subtree_raising))
    return tree


def _with_totals(tree):
    """``tree`` with its nodes' totals (``total``, ``bag_total``) summed from its class weights."""
    tree["total"] = _sum_rows(tree["value"])
    tree["bag_total"] = _sum_rows(tree["bag_value"])
    return tree


def _sum_rows(a):
    """Each row of a 2-d array summed left to right from 0.0 (as J48 totals whole weights)."""
    out = np.zeros(a.shape[0])
    for c in range(a.shape[1]):
        out = out + a[:, c]
    return out


def _take_weka_sums(tree, X, y, w, nominal, n_cats, n_classes, grown, **options):
    """Replace the class weights and totals of ``tree`` by J48's doubles
    (:func:`ensemblekit.classifiers._c45_weka_sums.weka_sums`), when J48's replay ends in
    the same tree (the same nodes, tests and empty leaves; otherwise ``tree`` is kept)."""
    from ._c45_weka_sums import weka_sums

    weka = weka_sums(X, y, w, nominal, n_cats, n_classes,
                     dict(zip(("feature", "threshold", "child_start", "n_children"), grown[:4])),
                     **options)
    same = (weka["feature"].shape == tree["feature"].shape
            and np.array_equal(weka["feature"], tree["feature"])
            and np.array_equal(weka["n_children"], tree["n_children"])
            and np.array_equal(weka["threshold"], tree["threshold"], equal_nan=True)
            and np.array_equal(weka["is_empty"], tree["is_empty"]))
    if same:
        for key in ("value", "bag_value", "total", "bag_total"):
            tree[key] = weka[key]
