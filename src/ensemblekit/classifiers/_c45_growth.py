"""Growing and pruning one C4.5 tree as J48 does, on arrays that are already valid.

The private kernels under :class:`~ensemblekit.classifiers.c45.C45Tree` (see that module
for the rules, after Weka 3.9.7's ``weka.classifiers.trees.j48``): :func:`grow_c45` runs
growth in one compiled call (:mod:`ensemblekit.classifiers._c45_kernels`, numba, imported
on first use), then collapses and prunes the tree in numpy and returns its flat node
arrays. This module imports numpy alone, so that ``ensemblekit fit c45`` need not import
scikit-learn (:meth:`~ensemblekit.classifiers.c45_model.C45Model.fit_coded`); scipy is
imported only for a confidence factor other than J48's default.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ._c45_nodes import _SMALL, _depth, _first_max

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


class _Node:
    """A node of the tree while it is grown and pruned (flattened to arrays afterwards)."""

    __slots__ = ("rows", "wts", "att", "cut", "bags", "children", "is_empty")

    def __init__(self, rows, wts):
        self.rows = rows
        self.wts = wts
        self.att = -1
        self.cut = np.nan
        self.bags = None  # (n_branches, K) class weights per branch; (1, K) at a leaf
        self.children = []
        self.is_empty = False

    @property
    def is_leaf(self) -> bool:
        return not self.children


def _few_values_ok(nominal, n_cats, n_all):
    """Which columns' gains enter the average gain of a node (Weka's ``multiVal`` rule).

    A nominal attribute with at least 0.3 x (number of training instances) values is left
    out of the average, unless every attribute is such a nominal one.
    """
    many = nominal & ~(n_cats < 0.3 * n_all - _SMALL)
    all_many = bool(nominal.size and nominal.all() and many.all())
    return np.ascontiguousarray(~many | all_many)


def _distinct_values(X, nominal):
    """Sorted distinct training values of each numeric column, concatenated, and offsets."""
    parts, start = [], [0]
    for j in range(X.shape[1]):
        if nominal[j]:
            vals = np.zeros(0)
        else:
            col = X[:, j]
            vals = np.unique(col[~np.isnan(col)])
        parts.append(vals)
        start.append(start[-1] + vals.size)
    return np.concatenate(parts) if parts else np.zeros(0), np.array(start, dtype=np.int64)


class _Pruner:
    """Collapses and prunes one grown tree (Weka's ``C45PruneableClassifierTree``)."""

    def __init__(self, X, y, nominal, n_cats, n_classes, cf, raising):
        self.X, self.y = X, y
        self.nominal, self.n_cats, self.K = nominal, n_cats, n_classes
        self.cf, self.raising = cf, raising

    # ---- class weights and routing of instances
    def _class_dist(self, rows, wts):
        return np.bincount(self.y[rows], weights=wts, minlength=self.K).astype(float)

    def _route(self, node, rows, wts, frac):
        """The instances of each branch: known values by the test, missing ones weighted."""
        col = self.X[rows, node.att]
        miss = np.isnan(col)
        if self.nominal[node.att]:
            branch = np.where(miss, -1, np.nan_to_num(col, nan=-1)).astype(np.int64)
        else:
            branch = np.where(miss, -1, (col > node.cut).astype(np.int64))
        out = []
        mrows, mw = rows[miss], wts[miss]
        for j in range(len(frac)):
            sel = branch == j
            if mrows.size and frac[j] > _SMALL:
                out.append((np.concatenate([rows[sel], mrows]),
                            np.concatenate([wts[sel], mw * frac[j]])))
            else:
                out.append((rows[sel], wts[sel]))
        return out

    def _bags(self, node, rows, wts):
        """Class weights per branch, the missing values spread as the known ones fall.

        Weka's ``addInstWithUnknown`` (at growth) and ``C45Split.resetDistribution`` (when
        pruning re-distributes data): each instance with a missing value adds its weight to
        every branch in proportion to the branch's known weight (equally if none is known).
        """
        nb = int(self.n_cats[node.att]) if self.nominal[node.att] else 2
        col = self.X[rows, node.att]
        miss = np.isnan(col)
        known = ~miss
        if self.nominal[node.att]:
            branch = col[known].astype(np.int64)
        else:
            branch = (col[known] > node.cut).astype(np.int64)
        yk = self.y[rows]
        bags = np.bincount(branch * self.K + yk[known], weights=wts[known],
                           minlength=nb * self.K).reshape(nb, self.K)
        if miss.any():
            kb = bags.sum(axis=1)
            ktot = kb.sum()
            probs = kb / ktot if abs(ktot) >= _SMALL else np.full(nb, 1.0 / nb)
            mclass = np.bincount(yk[miss], weights=wts[miss], minlength=self.K)
            bags += np.outer(probs, mclass)
        return bags

    # ---- collapse and pruning
    @staticmethod
    def _incorrect(bags):
        per_class = bags.sum(axis=0).tolist()
        return float(sum(per_class) - per_class[_first_max(per_class)])

    def _make_leaf(self, node):
        node.bags = node.bags.sum(axis=0)[None, :]
        node.children = []
        node.att = -1
        node.cut = np.nan

    def collapse(self, root):
        """Weka's ``collapse``: top-down, a subtree that does not reduce the training error
        (by more than 1e-3) becomes a leaf. The subtree errors are those of the grown tree
        (a node decides before its descendants change), so they are summed once, bottom-up.
        """
        errors = {}
        order = []
        stack = [root]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(node.children)
        for node in reversed(order):
            if node.is_leaf:
                errors[id(node)] = self._incorrect(node.bags)
            else:
                total = 0.0
                for c in node.children:
                    total = total + errors[id(c)]
                errors[id(node)] = total
        stack = [root]
        while stack:
            node = stack.pop()
            if node.is_leaf:
                continue
            if errors[id(node)] >= self._incorrect(node.bags) - 1e-3:
                self._make_leaf(node)
            else:
                stack.extend(node.children)

    def _estimated(self, bags):
        """Weka's ``getEstimatedErrorsForDistribution``: errors plus the pessimistic extra."""
        per_class = bags.sum(axis=0).tolist()
        total = sum(per_class)
        if abs(total) < _SMALL:
            return 0.0
        e = total - per_class[_first_max(per_class)]
        return e + add_errors(total, e, self.cf)

    def _estimated_branch(self, node, rows, wts):
        """Estimated errors of the subtree ``node`` if it received the instances given."""
        if node.is_leaf:
            return self._estimated(self._class_dist(rows, wts)[None, :])
        bags = self._bags(node, rows, wts)
        frac = bags.sum(axis=1) / bags.sum()
        errors = 0.0
        for c, (r, w) in zip(node.children, self._route(node, rows, wts, frac)):
            errors = errors + self._estimated_branch(c, r, w)
        return errors

    def _new_distribution(self, node, rows, wts):
        node.rows, node.wts = rows, wts
        if node.is_leaf:
            node.bags = self._class_dist(rows, wts)[None, :]
            if abs(float(wts.sum())) >= _SMALL:
                node.is_empty = False
            return
        node.bags = self._bags(node, rows, wts)
        frac = node.bags.sum(axis=1) / node.bags.sum()
        for c, (r, w) in zip(node.children, self._route(node, rows, wts, frac)):
            self._new_distribution(c, r, w)

    def prune(self, node):
        """Weka's C4.5 pruning of the subtree ``node``; returns its estimated errors.

        Children first; then the node becomes a leaf if that does not add more than 0.1
        estimated errors to the subtree's or to its largest branch's (raised in its place,
        with the node's instances); else the largest branch replaces the node if it adds no
        more than 0.1 to the subtree's, and the result is pruned again. The estimated errors
        of a subtree are the sum of its leaves', summed child by child as Weka does.
        """
        if node.is_leaf:
            return self._estimated(node.bags)
        err_tree = 0.0
        for c in node.children:
            err_tree = err_tree + self.prune(c)
        per_bag = node.bags.sum(axis=1).tolist()
        largest, top = -1, 0.0
        for i, v in enumerate(per_bag):
            if top - v < _SMALL:
                largest, top = i, v
        if self.raising:
            err_largest = self._estimated_branch(node.children[largest], node.rows, node.wts)
        else:
            err_largest = math.inf
        err_leaf = self._estimated(node.bags)
        if err_leaf - (err_tree + 0.1) < _SMALL and err_leaf - (err_largest + 0.1) < _SMALL:
            self._make_leaf(node)
            return err_leaf
        if err_largest - (err_tree + 0.1) < _SMALL:
            big = node.children[largest]
            node.children, node.att, node.cut, node.bags = big.children, big.att, big.cut, big.bags
            self._new_distribution(node, node.rows, node.wts)
            return self.prune(node)
        return err_tree


_NODE_ARRAYS = ("feature", "threshold", "child_start", "n_children", "value", "bag_value",
                "is_empty")


def _nodes(feature, threshold, child_start, n_children, value, bag_value, is_empty, lo, hi,
           rows, weights):
    """The grown tree as linked nodes holding their training instances (for pruning)."""
    nodes = []
    for i in range(feature.size):
        node = _Node(rows[lo[i]:hi[i]], weights[lo[i]:hi[i]])
        node.is_empty = bool(is_empty[i])
        if feature[i] >= 0:
            node.att = int(feature[i])
            node.cut = float(threshold[i])
            s, k = int(child_start[i]), int(n_children[i])
            node.bags = bag_value[s:s + k].copy()
        else:
            node.bags = value[i:i + 1].copy()
        nodes.append(node)
    for i in np.flatnonzero(feature >= 0).tolist():
        s, k = int(child_start[i]), int(n_children[i])
        nodes[i].children = nodes[s:s + k]
    return nodes[0]


def _flatten(root, n_classes):
    """Preorder node arrays; the children of a node are stored contiguously."""
    nodes = [root]
    parent_bag = [root.bags.sum(axis=0)]
    child_start = [-1]
    i = 0
    while i < len(nodes):
        node = nodes[i]
        if not node.is_leaf:
            child_start[i] = len(nodes)
            for j, c in enumerate(node.children):
                nodes.append(c)
                parent_bag.append(node.bags[j])
                child_start.append(-1)
        i += 1
    n = len(nodes)
    return {
        "feature": np.array([nd.att for nd in nodes], dtype=np.int64),
        "threshold": np.array([nd.cut for nd in nodes], dtype=float),
        "child_start": np.array(child_start, dtype=np.int64),
        "n_children": np.array([len(nd.children) for nd in nodes], dtype=np.int64),
        "value": np.array([nd.bags.sum(axis=0) for nd in nodes], dtype=float).reshape(n, n_classes),
        "bag_value": np.array(parent_bag, dtype=float).reshape(n, n_classes),
        "is_empty": np.array([nd.is_empty for nd in nodes], dtype=bool),
    }


def grow_c45(X, y, sample_weight, nominal, n_categories, n_classes, *, min_samples_leaf=2,
             confidence_factor=0.25, unpruned=False, subtree_raising=True, collapse_tree=True,
             counts=None):
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
        Instance weights ``> 0`` (rows of weight 0 must be left out by the caller).
    nominal : ndarray of bool of shape (d,)
        Which columns are nominal.
    n_categories : ndarray of int64 of shape (d,)
        Declared values of each nominal column (any value for numeric columns).
    n_classes : int
    counts : ndarray of shape (n,) or None
        How many instances each row stands for in J48's count of known values;
        default: its weight when that is a whole number (copies), else 1.

    Returns
    -------
    dict
        The flat node arrays of :class:`C45Tree` (``feature``, ``threshold``,
        ``child_start``, ``n_children``, ``value``, ``bag_value``, ``is_empty``).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.ascontiguousarray(sample_weight, dtype=float)
    if counts is None:
        counts = np.where(w == np.floor(w), w, 1.0)
    nominal = np.ascontiguousarray(nominal, dtype=np.bool_)
    n_cats = np.ascontiguousarray(n_categories, dtype=np.int64)
    counts = np.ascontiguousarray(counts, dtype=float)
    from . import _c45_kernels as kernels

    values, start = _distinct_values(X, nominal)
    arrays = kernels.grow_unpruned(
        X, y, w, counts, nominal, n_cats, int(n_classes), float(min_samples_leaf),
        _few_values_ok(nominal, n_cats, float(counts.sum())), values, start,
        bool(collapse_tree and unpruned))
    if unpruned:
        return dict(zip(_NODE_ARRAYS, arrays[:7]))
    pruner = _Pruner(X, y, nominal, n_cats, int(n_classes), confidence_factor,
                     subtree_raising)
    root = _nodes(*arrays)
    if collapse_tree:
        pruner.collapse(root)
    # pruning recurses along the tree's depth (as Weka does); make room for deep trees
    depth = _depth(arrays[2], arrays[3])
    limit = sys.getrecursionlimit()
    if 4 * depth + 200 > limit:
        sys.setrecursionlimit(4 * depth + 200)
    try:
        pruner.prune(root)
    finally:
        sys.setrecursionlimit(limit)
    return _flatten(root, int(n_classes))
