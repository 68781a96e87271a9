"""J48's reduced-error pruning (``-R -N -Q``): the hold-out split and the pruning itself.

The semantics of Weka 3.9.7's ``PruneableClassifierTree`` with the data handling of
``Instances.stratify``, ``trainCV`` and ``testCV``, re-expressed here (no Weka code):

* the rows (labelled, in the order given) are shuffled by ``java.util.Random(seed)``
  (Weka's ``randomize``: for ``j = n - 1 .. 1``, swap place ``j`` with ``nextInt(j + 1)``),
  then grouped by class: the class of the first row is gathered first, each later row of that
  class swapped into the next place, then
  the first row not gathered starts the next group (Weka's ``stratify``, which is not a
  stable sort); the grouped rows are dealt round-robin into ``num_folds`` folds, laid one
  after another (row ``s``, ``s + k``, ``s + 2k``, ... for ``s = 0 .. k - 1``);
* the last fold, ``n // k`` rows at the end, is the pruning set, in that order; the rest is
  the growing set, shuffled again by the same generator;
* the tree is grown on the growing set as J48 grows it (no collapse; a numeric cut moves to
  the largest value of *all* the rows not above it), and every node counts the pruning
  rows that reach it, a row with a missing value going down every branch weighted by the
  branch's share of the node's training weight;
* bottom up, a split becomes a leaf when its errors on the pruning rows as a leaf (those
  not of its training majority class) are at most (within 1e-6) the errors of its
  subtree: the sum over its branches of each child's errors, where a branch without
  training weight counts the pruning rows sent into it that are not of the node's
  majority class.

The pruning set changes only which splits stay: the leaves keep their training counts,
which J48 prints and predicts from, so a pruned tree is held in the same node arrays as any
other. Sums over pruning rows add one term after another in the rows' order, as Weka's
``Distribution`` accumulates them.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.errors import InputError
from ensemblekit.java_random import JavaRandom

from ._c45_nodes import _SMALL, _first_max

__all__ = ["holdout", "prune_reduced_error"]


def _shuffle(order: list, rng: JavaRandom) -> None:
    """Shuffle ``order`` in place as Weka's ``Instances.randomize``."""
    for j in range(len(order) - 1, 0, -1):
        k = rng.next_int(j + 1)
        order[j], order[k] = order[k], order[j]


def _stratified(order: list, y) -> list[int]:
    """The rows ``order`` grouped by class as Weka's ``stratify`` groups them (before it
    deals them into folds): see the module docstring."""
    order = list(order)
    cls = [int(c) for c in y]
    n = len(order)
    index = 1
    while index < n:  # one pass per class present
        head = cls[order[index - 1]]
        for j in range(index, n):
            if cls[order[j]] == head:
                order[index], order[j] = order[j], order[index]
                index += 1
        index += 1
    return order


def holdout(y, num_folds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The growing and pruning rows of J48's reduced-error pruning, in Weka's order.

    Parameters
    ----------
    y : ndarray of int of shape (n,)
        Class codes of the training rows, in their order (rows with a missing class left
        out, as J48 leaves them out).
    num_folds : int >= 2
        J48's ``-N``: one fold prunes, the others grow.
    seed : int
        J48's ``-Q``: the seed of the ``java.util.Random`` that shuffles the rows.

    Returns
    -------
    grow, prune : ndarray of int64
        Indices into ``y``: the growing rows (``n - n // num_folds`` of them) and the
        pruning rows (``n // num_folds``).

    Raises
    ------
    ensemblekit.errors.InputError
        If there are fewer rows than folds (J48: "Can't have more folds than instances").
    """
    n = len(y)
    if n < num_folds:
        raise InputError(f"reduced-error pruning with num_folds={num_folds} needs at least "
                         f"{num_folds} labelled rows, got {n}")
    rng = JavaRandom(seed)
    order = list(range(n))
    _shuffle(order, rng)
    grouped = _stratified(order, y)
    dealt = [r for start in range(num_folds) for r in grouped[start::num_folds]]
    first = (num_folds - 1) * (n // num_folds) + n % num_folds
    grow = dealt[:first]
    _shuffle(grow, rng)
    return np.asarray(grow, dtype=np.int64), np.asarray(dealt[first:], dtype=np.int64)


def _in_order(values) -> float:
    """The sum of ``values`` adding one after another from 0 (as a running total)."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def _pruning_counts(X, y, w, nominal, tree, n_classes):
    """Each node's counts of the pruning rows: ``total``, ``per_class`` (node by class),
    and for a split ``per_bag[i]`` and ``per_bag_class[i]`` (branch, branch by class)."""
    feature, threshold, child_start, n_children, bag_value = (
        tree["feature"], tree["threshold"], tree["child_start"], tree["n_children"],
        tree["bag_value"])
    n_nodes = feature.size
    total = np.zeros(n_nodes)
    per_class = np.zeros((n_nodes, n_classes))
    per_bag, per_bag_class = {}, {}
    reach = {0: (np.arange(y.size), w)}  # rows reaching each node, in order, and weights
    for i in range(n_nodes):  # parents come before their children
        rows, wt = reach.pop(i)
        att = int(feature[i])
        if att < 0:
            bag = np.zeros(rows.size, dtype=np.int64)
            cls, contrib, branch_of, frac = y[rows], wt, None, None
            nb = 1
        else:
            nb = int(n_children[i])
            kids = int(child_start[i]) + np.arange(nb)
            bag_w = np.array([_in_order(bag_value[k]) for k in kids])
            frac = bag_w / _in_order(bag_w)
            v = X[rows, att]
            miss = np.isnan(v)
            branch_of = np.full(rows.size, -1, dtype=np.int64)
            if nominal[att]:
                branch_of[~miss] = v[~miss].astype(np.int64)
            else:
                branch_of[~miss] = np.where(v[~miss] <= threshold[i], 0, 1)
            # a row with a missing value counts in every branch, with the branch's share
            reps = np.where(miss, nb, 1)
            src = np.repeat(np.arange(rows.size), reps)
            first = np.repeat(np.cumsum(reps) - reps, reps)
            bag = np.where(miss[src], np.arange(src.size) - first, branch_of[src])
            cls = y[rows][src]
            contrib = np.where(miss[src], wt[src] * frac[bag], wt[src])
        total[i] = _in_order(contrib)
        for c in range(n_classes):
            per_class[i, c] = _in_order(contrib[cls == c])
        if att < 0:
            continue
        per_bag[i] = np.array([_in_order(contrib[bag == b]) for b in range(nb)])
        per_bag_class[i] = np.array([[_in_order(contrib[(bag == b) & (cls == c)])
                                      for c in range(n_classes)] for b in range(nb)])
        for b in range(nb):
            sent = (branch_of == b) | ((branch_of < 0) & (frac[b] > _SMALL))
            reach[int(child_start[i]) + b] = (rows[sent],
                                              np.where(branch_of[sent] < 0, wt[sent] * frac[b],
                                                       wt[sent]))
    return total, per_class, per_bag, per_bag_class


def prune_reduced_error(X, y, w, nominal, tree):
    """Prune a grown J48 tree with a pruning set, as ``PruneableClassifierTree.prune``.

    Parameters
    ----------
    X : ndarray of float64 of shape (m, d)
        The pruning rows (NaN = missing), in Weka's order (:func:`holdout`).
    y : ndarray of int of shape (m,)
        Their class codes.
    w : ndarray of float64 of shape (m,)
        Their weights.
    nominal : ndarray of bool of shape (d,)
    tree : dict
        The grown tree's node arrays (``feature``, ``threshold``, ``child_start``,
        ``n_children``, ``value``, ``bag_value``, ``is_empty``; children of a node after
        it), thresholds already at their final values.

    Returns
    -------
    dict
        The pruned tree's node arrays, numbered breadth first.
    """
    from ._c45_pruning import _flattened

    value, child_start, n_children = tree["value"], tree["child_start"], tree["n_children"]
    n_classes = value.shape[1]
    total, per_class, per_bag, per_bag_class = _pruning_counts(X, y, w, nominal, tree,
                                                               n_classes)
    feature = tree["feature"].copy()
    threshold = tree["threshold"].copy()
    starts = child_start.copy()
    counts = n_children.copy()
    errors = np.zeros(feature.size)  # each subtree's errors on the pruning rows
    for i in range(feature.size - 1, -1, -1):  # children before their parents
        majority = _first_max(value[i])
        as_leaf = total[i] - per_class[i, majority]
        if counts[i] == 0:
            errors[i] = as_leaf
            continue
        subtree = 0.0
        for b in range(int(counts[i])):
            child = int(starts[i]) + b
            if abs(_in_order(tree["bag_value"][child])) < _SMALL:  # no training weight
                subtree += per_bag[i][b] - per_bag_class[i][b, majority]
            else:
                subtree += errors[child]
        if as_leaf - subtree < _SMALL:
            feature[i], threshold[i], starts[i], counts[i] = -1, np.nan, -1, 0
            errors[i] = as_leaf
        else:
            errors[i] = subtree
    arrays = _flattened(feature, threshold, starts, counts, value.copy(), tree["bag_value"],
                        tree["is_empty"], n_classes)
    return dict(zip(("feature", "threshold", "child_start", "n_children", "value",
                     "bag_value", "is_empty"), arrays))
