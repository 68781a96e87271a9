"""The replay of J48's bookkeeping as plain recursive Python: a test oracle.

:mod:`ensemblekit.classifiers._c45_weka_sums` replays J48's tree building, collapse and
pruning over flat arrays with explicit stacks, compiled. This is the same replay written
the direct way, over node objects with recursion (the module's first form), so that a test
can check the compiled one adds the same numbers in the same order: its results must be
equal to the last bit. It shares the compiled sorts and one-instance-at-a-time sums.
"""

from __future__ import annotations

import numpy as np

from ensemblekit.classifiers._c45_pruning import add_errors
from ensemblekit.classifiers._c45_weka_sums import (
    _MAX_VALUE,
    _SMALL,
    _add_known,
    _add_range,
    _add_unknown,
    _turn_orders,
)


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


def oracle_weka_sums(X, y, w, nominal, n_categories, n_classes, grown, *, collapse=True,
                     prune=True, cfd=0.25, z=0.6744897501960817, subtree_raising=True):
    """:func:`ensemblekit.classifiers._c45_weka_sums.weka_sums`, recursively in Python."""
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
