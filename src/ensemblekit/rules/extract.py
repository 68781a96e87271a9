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

from ..trust import (
    COUNT_MAX,
    CheckContext,
    count_attr,
    fitted_member,
    flag_value,
    float_array,
    instance_list,
    int_array,
    is_fitted,
    nested_attr,
    real_attr,
)

__all__ = ["Condition", "Rule", "RuleSet", "extract_rules", "node_rule_matrix", "tree_rules"]

# Leaves have this child id in scikit-learn's tree arrays.
_LEAF = -1
# Row-set hashes are sums of 64-bit weights modulo this.
_WRAP = 2**64


def _check_condition(cond, ctx: CheckContext) -> None:
    """``Condition``: ``x[feature] <= threshold`` (or ``>``) with a column and a finite value."""
    ctx.integer(cond, "feature", 0, COUNT_MAX)
    flag_value(ctx, ctx.attr(cond, "greater"), "greater")
    real_attr(ctx, cond, "threshold")


@dataclass(frozen=True)
class Condition:
    """One split condition on a path: ``x[feature] <= threshold`` or ``x[feature] > threshold``.

    Attributes
    ----------
    feature : int
        Column of the estimator's input.
    greater : bool
        True for ``x > threshold`` (the right branch), False for ``<=``.
    threshold : float
        The tree's split value.
    """

    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(_check_condition)

    feature: int
    greater: bool
    threshold: float


def _check_rule(rule, ctx: CheckContext) -> None:
    """``Rule``: a non-root node of one tree and the conditions on its path."""
    ctx.integer(rule, "tree", 0, COUNT_MAX)
    ctx.integer(rule, "node", 1, COUNT_MAX)
    conditions = ctx.attr(rule, "conditions")
    if type(conditions) is not tuple:
        ctx.fail("conditions is not a tuple")
    for i, cond in enumerate(conditions):
        ctx.instance(cond, f"conditions[{i}]", (Condition,))


@dataclass(frozen=True)
class Rule:
    """A conjunctive rule: a tree node and the conditions on the path to it.

    Attributes
    ----------
    tree : int
        Index of the tree in the ensemble.
    node : int
        Node id in that tree (scikit-learn numbering; never 0, the root).
    conditions : tuple of Condition
        From the root down.
    """

    #: ensemblekit classes besides the registry's estimators that the state may hold.
    _state_parts = (Condition,)
    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(_check_rule)

    tree: int
    node: int
    conditions: tuple[Condition, ...]

    @property
    def features(self) -> tuple[int, ...]:
        """The distinct features the rule tests, ascending."""
        return tuple(sorted({c.feature for c in self.conditions}))

    @property
    def length(self) -> int:
        """Number of conditions (the node's depth)."""
        return len(self.conditions)

    def describe(self, feature_names=None, binary_features=()) -> str:
        """The rule in words, one clause per feature, joined by ``and``.

        Conditions on the same numeric feature merge into one interval
        (``2.45 < petal length <= 4.95``). A 0/1 feature (e.g. a one-hot column
        ``colour=red``) reads as an equality: ``colour = red`` / ``colour != red``
        for one-hot names, ``name = 1`` / ``name = 0`` otherwise.

        Parameters
        ----------
        feature_names : sequence of str, optional
            Names of the estimator's input columns (default ``x0, x1, ...``).
        binary_features : collection of int
            Columns that hold only 0 and 1 in the training data.

        Returns
        -------
        str
        """
        binary = set(int(b) for b in binary_features)
        clauses = []
        for j in self.features:
            name = feature_names[j] if feature_names is not None else f"x{j}"
            lows = [c.threshold for c in self.conditions if c.feature == j and c.greater]
            highs = [c.threshold for c in self.conditions if c.feature == j and not c.greater]
            low = max(lows) if lows else None
            high = min(highs) if highs else None
            if j in binary and (low is None) != (high is None):
                is_one = low is not None
                attribute, eq, value = name.partition("=")
                if eq:
                    clauses.append(f"{attribute} {'=' if is_one else '!='} {value}")
                else:
                    clauses.append(f"{name} = {1 if is_one else 0}")
            elif low is not None and high is not None:
                clauses.append(f"{_num(low)} < {name} <= {_num(high)}")
            elif low is not None:
                clauses.append(f"{name} > {_num(low)}")
            else:
                clauses.append(f"{name} <= {_num(high)}")
        return " and ".join(clauses)


def _num(value: float) -> str:
    return f"{value:.6g}"


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


def _check_rule_set(rules, ctx: CheckContext) -> None:
    """``RuleSet``: rule ``k`` is column ``k`` of ``transform``, the node ``nodes`` lists for it.

    ``transform`` keeps, tree by tree, the ``decision_path`` columns ``nodes[j]``
    (non-root node ids of tree ``j``), so the rules, taken in order, name exactly
    those (tree, node) pairs; their conditions test the trees' input columns.
    """
    from sklearn.tree import DecisionTreeRegressor
    from sklearn.tree._tree import Tree

    trees = instance_list(ctx, ctx.attr(rules, "_trees"), "_trees", (DecisionTreeRegressor,))
    node_counts, widths = [], []
    for j, tree in enumerate(trees):
        name = f"_trees[{j}]"
        if not is_fitted(tree):
            ctx.fail(f"{name} is not fitted")
        inner = ctx.instance(nested_attr(ctx, tree, "tree_", f"{name}.tree_"), f"{name}.tree_", (Tree,))
        node_counts.append(ctx.integer(tree, f"{name}.tree_.node_count", 1, value=inner.node_count))
        width = nested_attr(ctx, tree, "n_features_in_", f"{name}.n_features_in_")
        widths.append(ctx.integer(tree, f"{name}.n_features_in_", 1, COUNT_MAX, value=width))
    nodes = ctx.attr(rules, "nodes")
    if type(nodes) is not list or len(nodes) != len(trees):
        ctx.fail("nodes is not a list of node ids per tree")
    pairs = []
    for j, ids in enumerate(nodes):
        ids = int_array(ctx, ids, f"nodes[{j}]", low=1, high=node_counts[j], ndim=1)
        pairs.extend((j, int(i)) for i in ids)
    listed = instance_list(ctx, ctx.attr(rules, "rules"), "rules", (Rule,))
    if len(listed) != len(pairs):
        ctx.fail(f"rules holds {len(listed)} rules for {len(pairs)} listed nodes")
    for k, (rule, (j, node)) in enumerate(zip(listed, pairs)):
        if (ctx.integer(rule, f"rules[{k}].tree", 0, value=nested_attr(ctx, rule, "tree")) != j
                or ctx.integer(rule, f"rules[{k}].node", 1, value=nested_attr(ctx, rule, "node")) != node):
            ctx.fail(f"rules[{k}] is not node {node} of tree {j}, the column nodes gives it")
        conditions = nested_attr(ctx, rule, "conditions", f"rules[{k}].conditions")
        if type(conditions) is not tuple:
            ctx.fail(f"rules[{k}].conditions is not a tuple")
        for cond in conditions:
            ctx.instance(cond, f"rules[{k}].conditions", (Condition,))
            ctx.integer(cond, f"rules[{k}].conditions.feature", 0, widths[j] - 1,
                        value=nested_attr(ctx, cond, "feature"))
    float_array(ctx, ctx.attr(rules, "support"), "support", low=0, high=1, shape=(len(pairs),))
    count_attr(ctx, rules, "n_candidates", len(pairs))


def _rules_of(ctx: CheckContext, rules, d: int, name: str = "rules_") -> int:
    """An owner's ``RuleSet``: trees over its ``d`` columns; returns the number of rules."""
    from sklearn.tree import DecisionTreeRegressor

    ctx.instance(rules, name, (RuleSet,))
    trees = instance_list(ctx, nested_attr(ctx, rules, "_trees", f"{name}._trees"), f"{name}._trees",
                          (DecisionTreeRegressor,))
    for j, tree in enumerate(trees):
        fitted_member(ctx, tree, f"{name}._trees[{j}]", d)
    listed = nested_attr(ctx, rules, "rules", f"{name}.rules")
    if type(listed) is not list:
        ctx.fail(f"{name}.rules is not a list")
    return len(listed)


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

    #: ensemblekit classes besides the registry's estimators that the state may hold.
    _state_parts = (Rule, Condition)
    #: The state check a loaded model passes before use (see ensemblekit.trust.declared_check).
    _check_fitted_state = staticmethod(_check_rule_set)

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
