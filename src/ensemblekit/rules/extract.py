"""Conjunctive rules from the nodes of regression trees, as a sparse 0/1 feature matrix.

Every node of a tree except the root is a conjunctive rule: the product of the
split conditions on the path from the root to it (Friedman & Popescu,
*Predictive learning via rule ensembles*, 2008, Sect. 3; Akdemir & Jannink
2014, Sect. 1.2). A tree with J leaves has 2J - 1 nodes and so gives 2(J - 1)
rules -- internal nodes as well as leaves. A rule fires for an instance when
the instance passes through its node, so the rule matrix of a tree is the
node-indicator matrix of scikit-learn's ``decision_path`` without its root
column: sparse, built without a Python loop over rows.

Rules that fire on exactly the same training rows as an earlier rule
(duplicates), or on exactly the other rows (complements -- the two children of
a root are always complements), add nothing to a linear model and are dropped,
as are rules that fire on every training row or on none. Each kept rule keeps
its conditions, so it can be printed in words.

Numpy and scipy arrays in and out; nothing here reads files or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .extract_model import Condition, Rule, flatten_rules

__all__ = ["Condition", "Rule", "RuleSet", "extract_rules", "flatten_rules", "node_rule_matrix",
           "tree_rules"]

# Leaves have this child id in scikit-learn's tree arrays.
_LEAF = -1
# Row-set hashes are sums of 64-bit weights modulo this.
_WRAP = 2**64


def tree_rules(tree, tree_index: int = 0) -> list[Rule]:
    """The rules of every non-root node of one fitted tree, in node-id order.

    Parameters
    ----------
    tree : sklearn.tree.DecisionTreeRegressor or DecisionTreeClassifier
        A fitted tree (anything with a ``tree_`` attribute).
    tree_index : int, default=0
        Stored in each rule's ``tree``.

    Returns
    -------
    list of Rule
        ``node_count - 1`` rules (2(J - 1) for J leaves); rule ``i`` is node ``i + 1``.
    """
    t = tree.tree_
    left, right = t.children_left, t.children_right
    paths: list[tuple[Condition, ...] | None] = [None] * t.node_count
    paths[0] = ()
    for node in range(t.node_count):  # parents have smaller ids than their children
        if left[node] == _LEAF:
            continue
        feature, threshold = int(t.feature[node]), float(t.threshold[node])
        paths[left[node]] = paths[node] + (Condition(feature, False, threshold),)
        paths[right[node]] = paths[node] + (Condition(feature, True, threshold),)
    return [Rule(tree_index, node, paths[node]) for node in range(1, t.node_count)]


def node_rule_matrix(trees, X, nodes=None) -> sp.csc_matrix:
    """Rule matrix of tree nodes: which instances pass through which nodes.

    Parameters
    ----------
    trees : sequence of fitted scikit-learn trees
    X : ndarray of shape (n_samples, n_features)
    nodes : sequence of ndarray of int, optional
        For each tree, the node ids to keep as columns (in that order);
        default every non-root node, ascending.

    Returns
    -------
    scipy.sparse.csc_matrix of shape (n_samples, n_rules), float64
        1 where instance ``i`` satisfies rule ``k``; columns tree by tree.
    """
    blocks = []
    for j, tree in enumerate(trees):
        path = tree.decision_path(X).tocsc()
        keep = np.arange(1, path.shape[1]) if nodes is None else np.asarray(nodes[j], dtype=np.intp)
        blocks.append(path[:, keep])
    if not blocks:
        return sp.csc_matrix((X.shape[0], 0), dtype=np.float64)
    out = sp.hstack(blocks, format="csc").astype(np.float64)
    out.sort_indices()
    return out


@dataclass
class RuleSet:
    """The kept rules of an ensemble of trees, and how to compute them on new data.

    Built by :func:`extract_rules`. Column ``k`` of :meth:`transform` is
    ``rules[k]``.

    Attributes
    ----------
    rules : list of Rule
        Kept rules, tree by tree, in node-id order within a tree.
    nodes : list of ndarray of int
        For each tree, the node ids of its kept rules.
    support : ndarray of shape (n_rules,)
        Fraction of the training rows each rule fires for, in (0, 1).
    n_candidates : int
        Rules before duplicates, complements and constant rules were dropped.
    """

    rules: list
    nodes: list
    support: np.ndarray
    n_candidates: int = 0
    _trees: list = field(default_factory=list, repr=False)

    @property
    def n_rules(self) -> int:
        """Number of kept rules."""
        return len(self.rules)

    def transform(self, X) -> sp.csc_matrix:
        """The 0/1 rule matrix of ``X``, shape (n_samples, n_rules), sparse float64."""
        return node_rule_matrix(self._trees, X, self.nodes)


def _column_hashes(R: sp.csc_matrix, weights: np.ndarray) -> np.ndarray:
    """Sum of per-row random 64-bit weights over each column's rows (wrapping), shape (n_rules,)."""
    counts = np.diff(R.indptr)
    sums = np.zeros(R.shape[1], dtype=np.uint64)
    nonempty = counts > 0
    if R.indices.size:
        reduced = np.add.reduceat(weights[R.indices], R.indptr[:-1][nonempty])
        sums[nonempty] = reduced
    return sums


def extract_rules(trees, X) -> RuleSet:
    """Rules of all non-root nodes of ``trees``, without duplicates, complements or constants.

    Two rules are duplicates when they fire on the same rows of ``X`` and
    complements when each fires exactly where the other does not; the first in
    tree/node order is kept. Candidates are matched by two random 64-bit hashes
    of their row sets and then compared exactly, so the cost is linear in the
    number of non-zeros.

    Parameters
    ----------
    trees : sequence of fitted scikit-learn trees
    X : ndarray of shape (n_samples, n_features)
        The training rows that decide supports, duplicates and complements.

    Returns
    -------
    RuleSet

    References
    ----------
    Friedman & Popescu 2008, Sect. 3 (rules from every node); Akdemir & Jannink
    2014, Sect. 1.2 (the rule matrix R).
    """
    X = np.asarray(X)
    n = X.shape[0]
    all_rules = [tree_rules(tree, j) for j, tree in enumerate(trees)]
    R = node_rule_matrix(trees, X)
    counts = np.diff(R.indptr)
    rng = np.random.default_rng(20140605)
    weights = [rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)
               for _ in range(2)]
    hashes = [_column_hashes(R, w) for w in weights]
    totals = [int(np.add.reduce(w, dtype=np.uint64)) for w in weights]
    seen: dict[tuple[int, int, int], int] = {}

    def rows(k):
        return R.indices[R.indptr[k]:R.indptr[k + 1]]

    keep = []
    flat = [rule for rules in all_rules for rule in rules]
    for k in range(R.shape[1]):
        c = int(counts[k])
        if c == 0 or c == n:
            continue
        key = (int(hashes[0][k]), int(hashes[1][k]), c)
        if key in seen and np.array_equal(rows(seen[key]), rows(k)):
            continue
        complement = ((totals[0] - int(hashes[0][k])) % _WRAP,
                      (totals[1] - int(hashes[1][k])) % _WRAP, n - c)
        if complement in seen:
            other = rows(seen[complement])
            if other.size + c == n and not np.intersect1d(other, rows(k), assume_unique=True).size:
                continue
        seen.setdefault(key, k)
        keep.append(k)
    kept = [flat[k] for k in keep]
    nodes = [np.array([r.node for r in kept if r.tree == j], dtype=np.intp)
             for j in range(len(trees))]
    support = counts[keep].astype(np.float64) / max(n, 1)
    return RuleSet(kept, nodes, support, R.shape[1], list(trees))
