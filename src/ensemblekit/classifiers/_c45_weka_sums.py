"""J48's own bookkeeping of a C4.5 tree's class weights, replayed to the last bit.

The growth and pruning kernels (:mod:`._c45_kernels`, :mod:`._c45_pruning`) compute each
node's class weights with the same values as Weka 3.9.7's J48 but not always the same
doubles: where training rows have missing values, instances carry fractional weights,
and J48's ``Distribution`` objects add them one instance at a time, in the order its
``Instances`` happen to be in. That order is set by ``Instances.sort``, which J48's
``C45ModelSelection`` calls on a node's data for every numeric attribute in turn (an
unstable quicksort, ``Utils.sortWithNoMissingValues``), and the sums it gives differ
from ours by a few units in the last place. Those few units split Weka's groups of tied
scores in ROC and PRC areas (issue 33), so this module replays J48's bookkeeping.

:func:`weka_sums` takes the grown, uncollapsed tree the growth kernel chose (which
attribute and threshold each node splits on) and the training rows, and replays what
J48 does with them: the node's instances in J48's order, its ``Distribution`` built as
``C45Split.handleEnumeratedAttribute`` / ``handleNumericAttribute`` and
``Distribution.addInstWithUnknown`` build it, the instances sent down as
``ClassifierSplitModel.split`` sends them, then ``collapse`` and ``prune`` (subtree
raising re-distributes with ``resetDistribution``) decided on those doubles. It returns
the pruned tree with J48's doubles: every node's class weights and total, and each
branch's class weights and total as its parent's split holds them. The caller keeps
them only when this tree is the one its kernels built (it always is but for a tie that
the last bits decide).

The semantics are Weka's (read from ``weka.classifiers.trees.j48`` and
``weka.core.Utils``); the code is ours. It runs in Python over numpy arrays, with the
sorts and the sums one instance at a time compiled by numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._c45_pruning import add_errors

__all__ = ["weka_sums"]

#: Weka's ``Utils.SMALL``.
_SMALL = 1e-6
#: Java's ``Double.MAX_VALUE``: what ``Instances.sort`` puts in place of a missing value.
_MAX_VALUE = np.finfo(np.float64).max


# ---- Weka's quicksort (Utils.quickSort on doubles, with an index array)
@njit(cache=True, nogil=True)
def _cswap(a, idx, i, j):
    if a[idx[i]] > a[idx[j]]:
        t = idx[i]
        idx[i] = idx[j]
        idx[j] = t


@njit(cache=True, nogil=True)
def _weka_sort(a):
    """The permutation Weka's ``Utils.sortWithNoMissingValues`` gives ``a``: median-of-three
    quicksort, ranges of up to three sorted by compare-and-swap (not stable)."""
    n = a.shape[0]
    idx = np.arange(n)
    if n < 2:
        return idx
    lo_st = np.empty(2 * n + 2, dtype=np.int64)
    hi_st = np.empty(2 * n + 2, dtype=np.int64)
    top = 0
    lo_st[0] = 0
    hi_st[0] = n - 1
    top = 1
    while top > 0:
        top -= 1
        left = lo_st[top]
        right = hi_st[top]
        diff = right - left
        if diff <= 0:
            continue
        if diff == 1:
            _cswap(a, idx, left, right)
            continue
        if diff == 2:
            _cswap(a, idx, left, left + 1)
            _cswap(a, idx, left, right)
            _cswap(a, idx, left + 1, right)
            continue
        c = (left + right) // 2
        _cswap(a, idx, left, c)
        _cswap(a, idx, left, right)
        _cswap(a, idx, c, right)
        t = idx[c]
        idx[c] = idx[right - 1]
        idx[right - 1] = t
        pivot = a[idx[right - 1]]
        lo = left
        hi = right - 1
        while True:
            lo += 1
            while a[idx[lo]] < pivot:
                lo += 1
            hi -= 1
            while a[idx[hi]] > pivot:
                hi -= 1
            if lo >= hi:
                break
            t = idx[lo]
            idx[lo] = idx[hi]
            idx[hi] = t
        t = idx[lo]
        idx[lo] = idx[right - 1]
        idx[right - 1] = t
        # (the order the recursion visits the two halves in changes nothing: they are apart)
        lo_st[top] = left
        hi_st[top] = lo - 1
        top += 1
        lo_st[top] = lo + 1
        hi_st[top] = right
        top += 1
    return idx


@njit(cache=True, nogil=True)
def _turn_orders(keys, rows, numeric, f, f_nominal):
    """A node's instances as ``C45ModelSelection`` leaves them, sorted by each numeric
    attribute of ``numeric`` in turn (``keys``: the sort keys of every training row).

    Returns the positions in ``rows`` in the order when attribute ``f``'s distribution is
    counted (right after its own sort when it is numeric; when nominal, before the sort
    by the first numeric attribute after it, or at the end), and in the final order.
    """
    n = rows.shape[0]
    order = np.arange(n)
    turn = order
    found = False
    column = np.empty(n)
    for t in range(numeric.shape[0]):
        j = numeric[t]
        if f_nominal and j > f and not found:
            turn = order.copy()
            found = True
        for r in range(n):
            column[r] = keys[rows[order[r]], j]
        moved = _weka_sort(column)
        sorted_order = np.empty(n, dtype=np.int64)
        for r in range(n):
            sorted_order[r] = order[moved[r]]
        order = sorted_order
        if j == f:
            turn = order.copy()
            found = True
    if not found:
        turn = order.copy()
    return turn, order


# ---- Distribution's bookkeeping, one instance after another
@njit(cache=True, nogil=True)
def _add_known(bag, y, w, pcpb, pb, pc, tot):
    """``Distribution.add`` of each instance with ``bag >= 0``, in order; returns the total."""
    for i in range(bag.shape[0]):
        b = bag[i]
        if b < 0:
            continue
        c = y[i]
        pcpb[b, c] = pcpb[b, c] + w[i]
        pb[b] = pb[b] + w[i]
        pc[c] = pc[c] + w[i]
        tot = tot + w[i]
    return tot


@njit(cache=True, nogil=True)
def _add_range(b, y, w, pcpb, pb, pc, tot):
    """``Distribution.addRange`` of all the instances given into bag ``b``."""
    s = 0.0
    for i in range(y.shape[0]):
        c = y[i]
        s = s + w[i]
        pcpb[b, c] += w[i]
        pc[c] += w[i]
    pb[b] += s
    return tot + s


@njit(cache=True, nogil=True)
def _add_unknown(missing, y, w, pcpb, pb, pc, tot):
    """``Distribution.addInstWithUnknown``: each instance with ``missing`` spread over the
    bags by their shares before any is added; returns the total."""
    nb = pb.shape[0]
    probs = np.empty(nb)
    for j in range(nb):
        probs[j] = 1.0 / nb if abs(tot) < _SMALL else pb[j] / tot
    for i in range(y.shape[0]):
        if not missing[i]:
            continue
        c = y[i]
        pc[c] = pc[c] + w[i]
        tot = tot + w[i]
        for j in range(nb):
            nw = probs[j] * w[i]
            pcpb[j, c] = pcpb[j, c] + nw
            pb[j] = pb[j] + nw
    return tot


@njit(cache=True, nogil=True)
def _seq_sum(w):
    s = 0.0
    for i in range(w.shape[0]):
        s = s + w[i]
    return s


class _Dist:
    """A J48 ``Distribution``: class weights per bag, bag weights, class weights, total."""

    __slots__ = ("pcpb", "pb", "pc", "tot")

    def __init__(self, nb, k):
        self.pcpb = np.zeros((nb, k))
        self.pb = np.zeros(nb)
        self.pc = np.zeros(k)
        self.tot = 0.0

    @classmethod
    def of(cls, y, w, k):
        """``new Distribution(instances)``: one bag."""
        d = cls(1, k)
        d.tot = _add_known(np.zeros(y.shape[0], dtype=np.int64), y, w, d.pcpb, d.pb, d.pc, 0.0)
        return d

    def max_class(self):
        best, at = 0.0, 0
        for c in range(self.pc.shape[0]):
            if self.pc[c] - best > _SMALL:
                best, at = self.pc[c], c
        return at

    def incorrect(self):
        return self.tot - self.pc[self.max_class()]

    def max_bag(self):
        best, at = 0.0, -1
        for b in range(self.pb.shape[0]):
            if self.pb[b] - best > -_SMALL:
                best, at = self.pb[b], b
        return at


class _Node:
    """A node of the replayed ``C45PruneableClassifierTree``."""

    __slots__ = ("att", "cut", "sons", "dist", "rows", "w", "empty")

    def __init__(self, rows, w):
        self.rows, self.w = rows, w
        self.att, self.cut, self.sons, self.dist, self.empty = -1, np.nan, None, None, False


class _Replay:
    def __init__(self, X, y, nominal, n_cats, n_classes, cfd, z, raising):
        self.X, self.y, self.nominal, self.n_cats = X, y, nominal, n_cats
        self.K, self.cfd, self.z, self.raising = n_classes, cfd, z, raising
        self.numeric = np.flatnonzero(~nominal)
        # what Instances.sort compares: a missing value as Double.MAX_VALUE
        self.sort_keys = np.where(np.isnan(X), _MAX_VALUE, X)

    # -- which branch: C45Split.whichSubset (-1 for a missing value)
    def branches(self, rows, att, cut):
        v = self.X[rows, att]
        miss = np.isnan(v)
        if self.nominal[att]:
            b = np.where(miss, -1.0, v).astype(np.int64)
        else:
            b = np.where(miss, -1, np.where(v - cut < _SMALL, 0, 1))
        return b, miss

    def n_bags(self, att):
        return int(self.n_cats[att]) if self.nominal[att] else 2

    # -- growth (ClassifierTree.buildTree with C45ModelSelection)
    def grow(self, g, i, rows, w):
        node = _Node(rows, w)
        y = self.y[rows]
        node.dist = _Dist.of(y, w, self.K)  # the NoSplit model's distribution
        f = int(g["feature"][i])
        if f < 0:
            node.empty = abs(_seq_sum(w)) < _SMALL
            return node
        # selectModel sorts the node's instances by each numeric attribute in turn; the
        # chosen split's class weights are counted in the order of its own turn
        turn, order = _turn_orders(self.sort_keys, rows, self.numeric, f, bool(self.nominal[f]))
        if self.nominal[f]:
            d = self.known_dist(rows[turn], w[turn], f, g["threshold"][i])
        else:
            d = self.range_dist(rows[turn], w[turn], f, g["threshold"][i])
        rows, w = rows[order], w[order]
        node.rows, node.w = rows, w
        _, miss = self.branches(rows, f, g["threshold"][i])
        d.tot = _add_unknown(miss, self.y[rows], w, d.pcpb, d.pb, d.pc, d.tot)
        node.att, node.cut, node.dist = f, g["threshold"][i], d
        start = int(g["child_start"][i])
        node.sons = [self.grow(g, start + b, *part)
                     for b, part in enumerate(self.split(node, rows, w))]
        return node

    def known_dist(self, rows, w, att, cut):
        """handleEnumeratedAttribute (and resetDistribution's known part): the known values
        added one instance after another."""
        d = _Dist(self.n_bags(att), self.K)
        bag, _ = self.branches(rows, att, cut)
        d.tot = _add_known(bag, self.y[rows], w, d.pcpb, d.pb, d.pc, 0.0)
        return d

    def range_dist(self, rows, w, att, cut):
        """handleNumericAttribute's distribution of the chosen cut: ``rows`` sorted by the
        attribute, the known values at or below the cut into bag 0, the others into bag 1."""
        v = self.X[rows, att]
        known = ~np.isnan(v)
        first_miss = int(np.argmin(known)) if not known.all() else rows.size
        left = int(np.count_nonzero(v[:first_miss] <= cut))
        d = _Dist(2, self.K)
        y = self.y[rows]
        d.tot = _add_range(0, y[:left], w[:left], d.pcpb, d.pb, d.pc, d.tot)
        d.tot = _add_range(1, y[left:first_miss], w[left:first_miss], d.pcpb, d.pb, d.pc, d.tot)
        return d

    def split(self, node, rows, w):
        """ClassifierSplitModel.split: each branch's instances in order, a missing value's
        instance in every branch whose share exceeds SMALL, weighted by it."""
        d = node.dist
        bag, miss = self.branches(rows, node.att, node.cut)
        share = d.pb / d.tot
        parts = []
        for b in range(d.pb.shape[0]):
            keep = (bag == b) | (miss & (share[b] > _SMALL))
            parts.append((rows[keep], np.where(miss[keep], share[b] * w[keep], w[keep])))
        return parts

    # -- collapse (C45PruneableClassifierTree.collapse)
    def training_errors(self, node):
        if node.sons is None:
            return node.dist.incorrect()
        e = 0.0
        for s in node.sons:
            e = e + self.training_errors(s)
        return e

    def collapse(self, node):
        if node.sons is None:
            return
        if self.training_errors(node) >= node.dist.incorrect() - 1e-3:
            self.make_leaf(node)
        else:
            for s in node.sons:
                self.collapse(s)

    @staticmethod
    def make_leaf(node):
        """``new NoSplit(localModel().distribution())``: the split's class weights, merged."""
        d = _Dist(1, node.dist.pc.shape[0])
        d.pc[:] = node.dist.pc
        d.pcpb[0] = node.dist.pc
        d.pb[0] = d.tot = node.dist.tot
        node.sons, node.att, node.cut, node.dist = None, -1, np.nan, d

    # -- pruning (C45PruneableClassifierTree.prune)
    def errors_for(self, d):
        if abs(d.tot) < _SMALL:
            return 0.0
        e = d.incorrect()
        return e + add_errors(d.tot, e, self.cfd, self.z)

    def estimated_errors(self, node):
        if node.sons is None:
            return self.errors_for(node.dist)
        e = 0.0
        for s in node.sons:
            e = e + self.estimated_errors(s)
        return e

    def reset_distribution(self, node, rows, w):
        if node.sons is None:
            return _Dist.of(self.y[rows], w, self.K)
        d = self.known_dist(rows, w, node.att, node.cut)
        _, miss = self.branches(rows, node.att, node.cut)
        d.tot = _add_unknown(miss, self.y[rows], w, d.pcpb, d.pb, d.pc, d.tot)
        return d

    def errors_for_branch(self, node, rows, w):
        if node.sons is None:
            return self.errors_for(_Dist.of(self.y[rows], w, self.K))
        saved = node.dist
        node.dist = self.reset_distribution(node, rows, w)
        parts = self.split(node, rows, w)
        node.dist = saved
        e = 0.0
        for s, part in zip(node.sons, parts):
            e = e + self.errors_for_branch(s, *part)
        return e

    def new_distribution(self, node, rows, w):
        node.dist = self.reset_distribution(node, rows, w)
        node.rows, node.w = rows, w
        if node.sons is not None:
            for s, part in zip(node.sons, self.split(node, rows, w)):
                self.new_distribution(s, *part)
        elif abs(_seq_sum(w)) >= _SMALL:
            node.empty = False

    def prune(self, node):
        while node.sons is not None:
            for s in node.sons:
                self.prune(s)
            big = node.dist.max_bag()
            err_big = (self.errors_for_branch(node.sons[big], node.rows, node.w)
                       if self.raising else np.finfo(np.float64).max)
            err_leaf = self.errors_for(node.dist)
            err_tree = self.estimated_errors(node)
            if err_leaf - (err_tree + 0.1) < _SMALL and err_leaf - (err_big + 0.1) < _SMALL:
                self.make_leaf(node)
                return
            if not err_big - (err_tree + 0.1) < _SMALL:
                return
            raised = node.sons[big]
            node.sons, node.att, node.cut = raised.sons, raised.att, raised.cut
            node.dist = raised.dist
            self.new_distribution(node, node.rows, node.w)


def weka_sums(X, y, w, nominal, n_categories, n_classes, grown, *, collapse=True,
              prune=True, cfd=0.25, z=0.6744897501960817, subtree_raising=True):
    """J48's tree and class weights, replayed on the splits the growth kernel chose.

    Parameters
    ----------
    X : ndarray of float64 of shape (n, d)
        Training rows as the growth kernel took them (codes; NaN = missing).
    y : ndarray of int of shape (n,)
        Class codes.
    w : ndarray of float64 of shape (n,)
        Instance weights > 0.
    nominal : ndarray of bool of shape (d,)
    n_categories : ndarray of int64 of shape (d,)
    n_classes : int
    grown : dict
        The grown tree before collapse and pruning: ``feature``, ``threshold`` (moved to
        a training value), ``child_start``, ``n_children``.
    collapse, prune, subtree_raising
        J48's ``-O``, ``-U`` and ``-S``, negated.
    cfd, z
        J48's ``-C`` rounded to a 32-bit float, and the normal quantile of ``1 - cfd``
        (as :func:`ensemblekit.classifiers._c45_pruning.prune_tree` takes them).

    Returns
    -------
    dict
        The final tree numbered breadth first, as the kernels number it: ``feature``,
        ``threshold``, ``n_children``, ``is_empty``; ``value`` and ``total`` (each node's
        class weights and their total as its J48 ``Distribution`` holds them);
        ``bag_value`` and ``bag_total`` (the branch into each node as its parent's
        ``Distribution`` holds it; the root's own).
    """
    replay = _Replay(X, np.asarray(y, dtype=np.int64), np.asarray(nominal, dtype=bool),
                     n_categories, int(n_classes), float(cfd), float(z), subtree_raising)
    n = X.shape[0]
    root = replay.grow(grown, 0, np.arange(n), np.asarray(w, dtype=np.float64))
    if collapse:
        replay.collapse(root)
    if prune:
        replay.prune(root)
    K = int(n_classes)
    feature, threshold, n_children, empty = [], [], [], []
    value, total, bag_value, bag_total = [], [], [], []
    queue = [(root, root.dist.pc, root.dist.tot)]
    head = 0
    while head < len(queue):
        node, bv, bt = queue[head]
        head += 1
        feature.append(node.att)
        threshold.append(node.cut)
        empty.append(node.empty)
        value.append(node.dist.pc)
        total.append(node.dist.tot)
        bag_value.append(bv)
        bag_total.append(bt)
        n_children.append(0 if node.sons is None else len(node.sons))
        for b, s in enumerate(node.sons or ()):
            queue.append((s, node.dist.pcpb[b], node.dist.pb[b]))
    return {
        "feature": np.asarray(feature, dtype=np.int64),
        "threshold": np.asarray(threshold, dtype=np.float64),
        "n_children": np.asarray(n_children, dtype=np.int64),
        "is_empty": np.asarray(empty, dtype=bool),
        "value": np.asarray(value, dtype=np.float64).reshape(-1, K),
        "total": np.asarray(total, dtype=np.float64),
        "bag_value": np.asarray(bag_value, dtype=np.float64).reshape(-1, K),
        "bag_total": np.asarray(bag_total, dtype=np.float64),
    }
