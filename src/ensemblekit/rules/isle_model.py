"""ISLE regression trees as flat node arrays, walked with numpy alone.

The trees of an ISLE ensemble (:mod:`ensemblekit.rules.isle`) are fitted as
scikit-learn ``DecisionTreeRegressor``\\ s; a fitted model keeps only their
node arrays, tree after tree: how many nodes each tree has, and per node its
left and right child (numbered within the tree, -1 for a leaf), the feature
and threshold of its split, and its value. :func:`tree_outputs` routes rows
through them as scikit-learn's ``Tree.apply`` does -- the row cast to float32,
``x[feature] <= threshold`` (a float64 threshold) going left -- so every tree
predicts the same bits as the scikit-learn tree it came from.
"""

from __future__ import annotations

import numpy as np

from ..constraints import MAX_TREES, Constraint
from .extract_model import as_float32

__all__ = ["ISLE_CONSTRAINTS", "TREE_SIZES", "FittedTrees", "StoredTree", "check_tree_arrays",
           "tree_outputs"]

#: How tree sizes are chosen: every tree ``max_depth`` deep, or RuleFit's random sizes.
TREE_SIZES = ("fixed", "random")

#: What the parameters of :func:`generate_isle` accept; the estimators that grow ISLE
#: trees declare theirs from these.
ISLE_CONSTRAINTS = {
    "n_estimators": Constraint("int", "ISLE trees M", low=1, high=MAX_TREES),
    "max_depth": Constraint("int", "tree depth (mean leaves 2**max_depth with "
                            "tree_size=random)", low=1, none_ok=True),
    "max_samples": Constraint("float", "subsample fraction per tree, without replacement "
                              "(none: min(N/2, 100 + 6 sqrt N) rows, Friedman & Popescu)",
                              low=0, high=1, closed="right", none_ok=True),
    "bootstrap": Constraint("bool", "draw each tree's sample with replacement, max_samples x N "
                            "rows (N when none: Breiman's bootstrap), instead of subsampling"),
    "learning_rate": Constraint("float", "ISLE memory nu: 0 fits every tree to y, > 0 to the "
                                "residuals of the trees before it", low=0, high=1),
    "max_features": Constraint("float", "fraction of the attributes tried per split", low=0,
                               high=1, closed="right"),
    "min_samples_leaf": Constraint("int", "minimum instances per leaf", low=1),
    "tree_size": Constraint("choice", "every tree max_depth deep, or RuleFit's random sizes",
                            choices=TREE_SIZES),
}


def _global_children(node_count, left, right):
    """Children as indices into the concatenated arrays (-1 stays -1), and each tree's root."""
    roots = np.concatenate(([0], np.cumsum(node_count)[:-1])).astype(np.int64)
    offset = np.repeat(roots, node_count)
    leaf = left == -1
    return (np.where(leaf, -1, left + offset), np.where(leaf, -1, right + offset), roots)


def tree_outputs(X32, node_count, left, right, feature, threshold, value) -> np.ndarray:
    """Every tree's prediction for every row, shape (n_samples, n_trees), float64.

    Parameters
    ----------
    X32 : ndarray of float32, shape (n_samples, n_features)
        Rows as scikit-learn's trees read them (finite).
    node_count : ndarray of int64, shape (n_trees,)
        Nodes per tree; tree ``j``'s nodes follow tree ``j - 1``'s.
    left, right : ndarray of int64, shape (n_nodes,)
        Children of each node, numbered within its tree; -1 marks a leaf.
    feature : ndarray of int64, shape (n_nodes,)
        Column tested at each internal node.
    threshold : ndarray of float64, shape (n_nodes,)
        A row goes left when ``float32(x[feature]) <= threshold``.
    value : ndarray of float64, shape (n_nodes,)
        Prediction of each node (read at the leaves).

    Returns
    -------
    ndarray of shape (n_samples, n_trees), float64, C order
        Column ``j`` equals ``trees[j].predict(X)`` of the scikit-learn tree.
    """
    glob_left, glob_right, roots = _global_children(node_count, left, right)
    n = X32.shape[0]
    at = np.broadcast_to(roots, (n, roots.size)).copy()
    rows = np.broadcast_to(np.arange(n)[:, None], at.shape)
    moving = glob_left[at] != -1
    while moving.any():
        node = at[moving]
        goes_left = X32[rows[moving], feature[node]] <= threshold[node]
        at[moving] = np.where(goes_left, glob_left[node], glob_right[node])
        moving = glob_left[at] != -1
    return value[at]


def check_tree_arrays(ctx, node_count, left, right, feature) -> None:
    """Fail through ``ctx`` unless the arrays hold one well-formed binary tree per entry.

    Every tree's nodes add up to the arrays' length; a node is a leaf (both
    children -1) or has two children after it in its own tree; every node but
    a tree's root has exactly one parent (so a walk from the root ends at a
    leaf and visits no node twice); an internal node tests a feature (>= 0).
    Feature and index ranges are checked by the declaration.

    Parameters
    ----------
    ctx : ensemblekit.trust.CheckContext
    node_count, left, right, feature : ndarray of int64
        As :func:`tree_outputs` takes them.
    """
    n_nodes = left.size
    if int(node_count.sum()) != n_nodes:
        ctx.fail(f"tree_node_count_ adds up to {int(node_count.sum())} nodes, the node arrays "
                 f"hold {n_nodes}")
    roots = np.concatenate(([0], np.cumsum(node_count)[:-1])).astype(np.int64)
    tree = np.repeat(np.arange(node_count.size), node_count)
    local = np.arange(n_nodes) - roots[tree]
    size = node_count[tree]
    leaf = left == -1
    if np.any(leaf != (right == -1)):
        ctx.fail("a tree node has one child")
    inner = ~leaf
    for name, child in (("tree_children_left_", left), ("tree_children_right_", right)):
        c = child[inner]
        if np.any(c <= local[inner]) or np.any(c >= size[inner]):
            ctx.fail(f"{name} points to a node outside its tree or not after its parent")
    if np.any(feature[inner] < 0):
        ctx.fail("tree_feature_ has an internal node without a feature")
    children = np.concatenate((left[inner] + roots[tree[inner]],
                               right[inner] + roots[tree[inner]]))
    non_roots = np.setdiff1d(np.arange(n_nodes), roots, assume_unique=True)
    if not np.array_equal(np.sort(children), non_roots):
        ctx.fail("a tree node has no parent or two parents")


class StoredTree:
    """One tree of a fitted model, read from its node arrays (a slice of them).

    Attributes
    ----------
    node_count : int
    children_left, children_right, feature : ndarray of int64, shape (node_count,)
    threshold, value : ndarray of float64, shape (node_count,)
    """

    def __init__(self, node_count, left, right, feature, threshold, value):
        self.node_count = int(node_count)
        self.children_left, self.children_right = left, right
        self.feature, self.threshold, self.value = feature, threshold, value

    def predict(self, X) -> np.ndarray:
        """The tree's prediction for each row of ``X`` (shape (n_samples,), float64)."""
        X32 = as_float32(np.asarray(X, dtype=np.float64))
        count = np.array([self.node_count], dtype=np.int64)
        return tree_outputs(X32, count, self.children_left, self.children_right, self.feature,
                            self.threshold, self.value)[:, 0]


class FittedTrees:
    """The trees of a fitted model, read from its node arrays: their number, and each tree.

    What a model rebuilt from a file offers in place of the list of
    scikit-learn trees a fit leaves. A model of rules stores its rules, not
    its trees: it only knows how many there were.

    Parameters
    ----------
    model : object
        Holding ``n_trees_`` and, for tree outputs, ``tree_node_count_``,
        ``tree_children_left_``, ``tree_children_right_``, ``tree_feature_``,
        ``tree_threshold_`` and ``tree_value_``.
    """

    def __init__(self, model):
        self._model = model

    def __len__(self) -> int:
        return int(self._model.n_trees_)

    def __getitem__(self, j) -> StoredTree:
        m = self._model
        if m.tree_node_count_ is None:
            raise LookupError("the model stores its rules, not the trees they came from")
        j = range(len(self))[j]
        start = int(m.tree_node_count_[:j].sum())
        stop = start + int(m.tree_node_count_[j])
        return StoredTree(m.tree_node_count_[j], m.tree_children_left_[start:stop],
                          m.tree_children_right_[start:stop], m.tree_feature_[start:stop],
                          m.tree_threshold_[start:stop], m.tree_value_[start:stop])

    def __iter__(self):
        return (self[j] for j in range(len(self)))
