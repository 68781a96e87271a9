"""``c45``: C4.5 release 8 as Weka 3.9.7's J48 builds, prunes, prints and applies it.

The tree follows J48's semantics (read from Weka's ``weka.classifiers.trees.j48`` package
and re-expressed here; no Weka code is used):

* the split of a node is chosen by gain ratio among the candidate splits whose information
  gain reaches the average gain of the candidates (less 1e-3); a nominal attribute splits
  into one branch per declared value, a numeric one into ``<= t`` / ``> t``, with release
  8's penalty ``log2(#candidate thresholds) / N`` on the gain; ``t`` is then moved to the
  largest training value not above the cut;
* a node is split only when at least two branches get ``min_samples_leaf`` (``-M``)
  instances' weight, and a numeric threshold keeps at least
  ``clip(0.1 * known weight / n_classes, M, 25)`` on each side;
* an instance whose value is missing goes down every branch with a weight proportional to
  the branch's training weight, in training and in prediction;
* the grown tree is collapsed (a subtree that does not reduce the training error becomes a
  leaf), then pruned by C4.5's pessimistic error estimate with confidence
  ``confidence_factor`` (``-C``) and subtree raising (replacing a node by its largest branch
  and re-distributing the node's data down it).

Growth (split search, routing of instances, collapse) runs in one compiled call
(:mod:`ensemblekit.classifiers._c45_kernels`, numba, imported on first use); pruning, which
re-reads each node's training instances, is plain numpy. :func:`grow_c45` grows a tree from
arrays that are already valid, with no per-tree checks: the path of the bagging ensembles,
which grow many small unpruned trees.

The fitted tree is a set of flat numpy arrays (one entry per node, children of a node
stored contiguously), held, checked, applied and printed by the numpy-only model class
:class:`~ensemblekit.classifiers.c45_model.C45Model`, the first base of :class:`C45Tree`:
a model file rebuilds that class, without numba or scikit-learn.

Weights: J48 weighs instances everywhere (``-M``, the minimum split, the error
estimates), so a weight of 3 grows the same tree as the row written three times. The one
place where J48 counts instances rather than weights (the known values a numeric split
needs) counts a row of whole-number weight ``k`` as ``k`` instances, and any other row as
one, as Weka does.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ensemblekit.errors import InputError

from ..class_domain import declared_classes
from ..constraints import validate_params
from .c45_model import _SMALL, C45Model, _depth, _first_max, weka_number
from .coded import coded_layout

__all__ = ["C45Tree", "add_errors", "grow_c45", "weka_number"]

def _normal_inverse(p: float) -> float:
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



class C45Tree(C45Model, ClassifierMixin, BaseEstimator):
    """C4.5 release 8 decision tree, as Weka 3.9.7's J48 (``c45``, alias ``j48``).

    Multiway splits on nominal attributes, binary splits on numeric ones chosen by gain
    ratio with release 8's threshold penalty, fractional instances for missing values, and
    error-based pruning with subtree raising. Fitted on the same data, the tree, its text
    (:meth:`export_text`) and its class probabilities equal J48's (``J48 -t FILE`` and
    ``-p 0 -distribution``); see the module docstring for the rules.

    Parameters
    ----------
    confidence_factor : float in (0, 0.5], default=0.25
        Confidence of the pessimistic error estimate used in pruning (J48 ``-C``); smaller
        prunes more. Used as a 32-bit float, as in Weka.
    min_samples_leaf : int >= 1, default=2
        Minimum total weight of instances in at least two branches of a split (J48 ``-M``).
    unpruned : bool, default=False
        Do not prune (J48 ``-U``); the tree is still collapsed unless ``collapse_tree`` is
        False.
    subtree_raising : bool, default=True
        Consider replacing a node by its largest branch while pruning (J48 ``-S`` turns it
        off).
    collapse_tree : bool, default=True
        Replace subtrees that do not reduce the training error by leaves (J48 ``-O`` turns
        it off).
    nominal_features : array-like of int or None, default=None
        Indices of the nominal columns of ``X`` (their values are codes); None: every
        column is numeric.
    n_categories : array-like of int or None, default=None
        Number of declared values of each nominal column (in the order of
        ``nominal_features``); a nominal split has one branch per declared value. None:
        the largest code seen plus one.
    n_classes : int >= 1 or None, default=None
        Number of declared classes: ``y`` holds codes ``0 .. n_classes - 1``. None: the
        distinct labels of ``y``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (``arange(n_classes)`` when declared).
    n_features_in_ : int
    nominal_features_, n_categories_ : ndarray of int64
        The nominal columns (sorted) and the declared values of each.
    feature_, threshold_, child_start_, n_children_, value_, bag_value_, is_empty_ : ndarray
        The tree's node arrays (node 0 is the root, the children of a node stored
        contiguously after it), as :class:`~ensemblekit.classifiers.c45_model.C45Model`
        describes them.

    References
    ----------
    .. [1] J. R. Quinlan, *C4.5: Programs for Machine Learning*, Morgan Kaufmann, 1993.
    .. [2] J. R. Quinlan, "Improved use of continuous attributes in C4.5", *Journal of
       Artificial Intelligence Research* 4, 77-90, 1996 (release 8's threshold penalty).
    .. [3] Weka 3.9.7, ``weka.classifiers.trees.J48`` (the semantics matched here).

    Examples
    --------
    >>> import numpy as np
    >>> from ensemblekit.classifiers.c45 import C45Tree
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> tree = C45Tree().fit(X, y)
    >>> print(tree.export_text())
    x0 <= 3: 0 (3.0)
    x0 > 3: 1 (3.0)
    """

    # ---- fitting
    def fit(self, X, y, sample_weight=None):
        """Grow the tree on training data, then collapse and prune it as J48 does.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric columns as numbers, nominal columns as codes; NaN marks a missing value.
        y : array-like of shape (n_samples,)
            Class labels (codes ``0 .. n_classes - 1`` when ``n_classes`` is given).
        sample_weight : array-like of shape (n_samples,) or None
            Instance weights >= 0 (Weka's instance weights): a row of weight 3 counts as
            three copies of the row, a row of weight 0 as absent.

        Returns
        -------
        self : C45Tree

        Raises
        ------
        ValueError
            If ``X`` is not 2-D or holds infinity, ``y`` is not class labels, a weight is
            negative or not finite, every weight is zero, a nominal column holds a value
            that is not one of its codes, or a parameter is out of range.
        """
        validate_params(self)
        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan", dtype=np.float64)
        from sklearn.utils.multiclass import check_classification_targets

        check_classification_targets(y)
        classes, codes = declared_classes(y, self.n_classes)
        n = X.shape[0]
        if sample_weight is None:
            w = np.ones(n)
        else:
            w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            if w.shape[0] != n:
                raise InputError(f"sample_weight has {w.shape[0]} entries for {n} rows")
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise InputError("sample_weight must be finite and >= 0")
            if n and not np.any(w > 0):
                raise InputError("sample_weight is zero for every row: nothing to learn from")
        nominal, cats, _ = coded_layout(X, self.nominal_features, self.n_categories)
        return self._grow(X, codes, w, nominal, cats, classes)

    def _grow(self, X, codes, w, nominal, cats, classes):
        """Grow (and prune, as the parameters say) on arrays already checked; set the fitted state.

        The one growing path of :meth:`fit` and of the bagging ensembles
        (:func:`ensemblekit.classifiers.bagging.fit_weighted_c45`), which check their
        arrays once for all their trees. ``w`` are instance weights >= 0 (rows of weight
        0 take no part); ``nominal`` and ``cats`` the sorted nominal columns and their
        numbers of values; ``classes`` the ``classes_`` to set (``codes`` index them).
        """
        keep = w > 0
        if not keep.all():
            X, codes, w = X[keep], codes[keep], w[keep]
        d = X.shape[1]
        mask = np.zeros(d, dtype=bool)
        mask[nominal] = True
        n_cats = np.zeros(d, dtype=np.int64)
        n_cats[nominal] = cats
        state = grow_c45(X, codes, w, mask, n_cats, classes.size,
                         min_samples_leaf=self.min_samples_leaf,
                         confidence_factor=self.confidence_factor, unpruned=self.unpruned,
                         subtree_raising=self.subtree_raising, collapse_tree=self.collapse_tree)
        self.classes_ = classes
        self.n_features_in_ = d
        self.nominal_features_ = np.asarray(nominal, dtype=np.int64)
        self.n_categories_ = np.asarray(cats, dtype=np.int64)
        self.feature_ = state["feature"]
        self.threshold_ = state["threshold"]
        self.child_start_ = state["child_start"]
        self.n_children_ = state["n_children"]
        self.value_ = state["value"]
        self.bag_value_ = state["bag_value"]
        self.is_empty_ = state["is_empty"]
        return self

    # ---- prediction (computed by C45Model; here scikit-learn's checks of the input)
    def predict_proba(self, X):
        """Class probabilities as J48's ``distributionForInstance`` (no Laplace correction).

        :meth:`C45Model.predict_proba <ensemblekit.classifiers.c45_model.C45Model.predict_proba>`
        after scikit-learn's checks of ``X`` (feature names of a data frame).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            As in :meth:`fit`; NaN marks a missing value.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If ``X`` has another number of columns than in ``fit`` or a nominal column holds
            a value that is not one of its codes.
        """
        check_is_fitted(self, "feature_")
        X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan", dtype=np.float64)
        return super().predict_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
