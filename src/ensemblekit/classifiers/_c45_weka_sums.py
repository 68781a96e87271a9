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
``weka.core.Utils``); the code is ours. All of it is compiled by numba (:func:`_replay`):
the tree is flat arrays, and J48's recursions are loops over a node's subtree taken
breadth first (children are numbered after their parent, so the subtree read backwards
gives every child before its parent). Each floating-point operation is the one J48 does,
in its order: sums one term at a time from 0, a subtree's errors as nested sums (a node's
children added one after another, each child's own sum first), the same comparisons with
``Utils.SMALL``. Python's recursion limit plays no part: a tree as deep as its rows allow
is replayed as any other.
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


# ---- the tree: flat arrays indexed by the grown tree's node numbers
# A node of J48's tree is a node of the grown tree (collapse and pruning only cut
# subtrees off, and subtree raising gives a node the children of one of its children), so
# the replay keeps one entry per grown node: its test (``att`` < 0 for a leaf, ``cut``),
# its children (``cs``, ``nc``: contiguous, numbered after it), its instances (a segment
# ``lo:hi`` of a pool of row numbers and weights) and its ``Distribution``: class weights
# ``pc`` and total ``tot``, and per bag a slot of a pool of bag class weights ``cb`` and
# bag weights ``bw`` (``slot``, ``n_bags``). A new ``Distribution`` takes new slots, new
# instances a new segment; pools grow by doubling.
@njit(cache=True, nogil=True)
def _room(a, used, need):
    """``a`` (1-d) if it holds ``used + need`` entries, else a copy of its first ``used``
    in an array twice as long (or as long as needed)."""
    if used + need <= a.shape[0]:
        return a
    b = np.empty(max(2 * a.shape[0], used + need), dtype=a.dtype)
    b[:used] = a[:used]
    return b


@njit(cache=True, nogil=True)
def _room_rows(a, used, need):
    """:func:`_room` of a 2-d array's rows."""
    if used + need <= a.shape[0]:
        return a
    b = np.empty((max(2 * a.shape[0], used + need), a.shape[1]))
    b[:used] = a[:used]
    return b


@njit(cache=True, nogil=True)
def _bags(X, rows, att, cut, nominal):
    """``C45Split.whichSubset`` of each instance of ``rows``: its bag, -1 if missing."""
    bag = np.empty(rows.shape[0], dtype=np.int64)
    for i in range(rows.shape[0]):
        v = X[rows[i], att]
        if np.isnan(v):
            bag[i] = -1
        elif nominal[att]:
            bag[i] = int(v)
        else:
            bag[i] = 0 if v - cut < _SMALL else 1
    return bag


@njit(cache=True, nogil=True)
def _max_class(pc):
    """``Distribution.maxClass``: the first class clearly above all before it."""
    best = 0.0
    at = 0
    for c in range(pc.shape[0]):
        if pc[c] - best > _SMALL:
            best = pc[c]
            at = c
    return at


@njit(cache=True, nogil=True)
def _errors_for(pc, tot, cfd, z):
    """``getEstimatedErrorsForDistribution``: errors plus C4.5's pessimistic extra."""
    if abs(tot) < _SMALL:
        return 0.0
    e = tot - pc[_max_class(pc)]
    return e + add_errors(tot, e, cfd, z)


@njit(cache=True, nogil=True)
def _leaf_dist(y, rows, w, cb, bw, pc):
    """``new Distribution(instances)``: one bag; returns the total."""
    return _add_known(np.zeros(rows.shape[0], dtype=np.int64), y[rows], w, cb, bw, pc, 0.0)


@njit(cache=True, nogil=True)
def _reset_dist(X, y, nominal, rows, w, att, cut, cb, bw, pc):
    """``ClassifierSplitModel.resetDistribution``: the known values in order, then the
    missing ones spread by the known bags' shares; returns the total and the bags."""
    bag = _bags(X, rows, att, cut, nominal)
    yv = y[rows]
    tot = _add_known(bag, yv, w, cb, bw, pc, 0.0)
    return _add_unknown(bag < 0, yv, w, cb, bw, pc, tot), bag


@njit(cache=True, nogil=True, error_model="numpy")
def _split(bag, bw, tot, rows, w, prow, pw, used, part_lo, part_hi):
    """``ClassifierSplitModel.split``: each bag's instances in order, a missing value's in
    every bag whose share exceeds SMALL, weighted by it; written after ``used`` in the
    pools ``prow``/``pw`` (returned, grown if need be) as ``part_lo[b]:part_hi[b]``."""
    nb = bw.shape[0]
    share = np.empty(nb)
    n_missing = 0
    for i in range(bag.shape[0]):
        if bag[i] < 0:
            n_missing += 1
    need = bag.shape[0] - n_missing
    for b in range(nb):
        share[b] = bw[b] / tot
        if share[b] > _SMALL:
            need += n_missing
    prow = _room(prow, used, need)
    pw = _room(pw, used, need)
    for b in range(nb):
        part_lo[b] = used
        for i in range(bag.shape[0]):
            if bag[i] == b:
                prow[used] = rows[i]
                pw[used] = w[i]
                used += 1
            elif bag[i] < 0 and share[b] > _SMALL:
                prow[used] = rows[i]
                pw[used] = share[b] * w[i]
                used += 1
        part_hi[b] = used
    return prow, pw, used


@njit(cache=True, nogil=True)
def _make_leaf(i, att, cut, cs, nc, n_bags, pc, tot, cb0, bw):
    """``new NoSplit(localModel().distribution())``: node ``i`` a leaf whose one bag holds
    its class weights (in its first slot, ``cb0`` and ``bw[0]``)."""
    att[i] = -1
    cut[i] = np.nan
    cs[i] = -1
    nc[i] = 0
    n_bags[i] = 1
    cb0[:] = pc[i]
    bw[0] = tot[i]


@njit(cache=True, nogil=True)
def _new_dist(u, att, nominal, n_cats, slot, n_bags, cb, bw, n_slots):
    """Node ``u``'s new ``Distribution``: cleared slots for its bags (one for a leaf) after
    the ``n_slots`` taken; returns the pools, the slots now taken and its bags."""
    f = att[u]
    nb = 1 if f < 0 else (n_cats[f] if nominal[f] else 2)
    cb = _room_rows(cb, n_slots, nb)
    bw = _room(bw, n_slots, nb)
    cb[n_slots:n_slots + nb] = 0.0
    bw[n_slots:n_slots + nb] = 0.0
    slot[u] = n_slots
    n_bags[u] = nb
    return cb, bw, n_slots + nb, nb


@njit(cache=True, nogil=True)
def _subtree(root, att, cs, nc, order):
    """The nodes under ``root`` (itself first), breadth first, into ``order``; their number."""
    order[0] = root
    count = 1
    head = 0
    while head < count:
        u = order[head]
        head += 1
        if att[u] >= 0:
            for j in range(nc[u]):
                order[count] = cs[u] + j
                count += 1
    return count


@njit(cache=True, nogil=True)
def _fold(order, count, att, cs, nc, val):
    """Each inner node of ``order`` gets the sum of its children's ``val``, added one
    after another from 0 as a recursion adds them (children come after their parent)."""
    for k in range(count - 1, -1, -1):
        u = order[k]
        if att[u] >= 0:
            s = 0.0
            for j in range(nc[u]):
                s = s + val[cs[u] + j]
            val[u] = s
    return val[order[0]]


@njit(cache=True, nogil=True, error_model="numpy")
def _replay(X, keys, y, w, nominal, n_cats, numeric, n_classes, feature, threshold,
            child_start, n_children, collapse, prune, cfd, z, raising):
    """J48's ``buildTree``, ``collapse`` and ``prune`` on the grown tree (see the module);
    returns the final tree numbered breadth first."""
    K = n_classes
    G = feature.shape[0]
    n = X.shape[0]
    att = feature.copy()
    cut = threshold.copy()
    cs = child_start.copy()
    nc = n_children.copy()
    empty = np.zeros(G, dtype=np.bool_)
    pc = np.zeros((G, K))
    tot = np.zeros(G)
    slot = np.zeros(G, dtype=np.int64)
    n_bags = np.ones(G, dtype=np.int64)
    lo = np.zeros(G, dtype=np.int64)
    hi = np.zeros(G, dtype=np.int64)
    nb_max = 2
    for j in range(nominal.shape[0]):
        if nominal[j] and n_cats[j] > nb_max:
            nb_max = n_cats[j]
    cb = np.zeros((2 * G + 2, K))
    bw = np.zeros(2 * G + 2)
    n_slots = 0
    prow = np.empty(2 * n + 16, dtype=np.int64)
    pw = np.empty(2 * n + 16)
    for i in range(n):
        prow[i] = i
        pw[i] = w[i]
    used = n
    hi[0] = n
    part_lo = np.empty(nb_max, dtype=np.int64)
    part_hi = np.empty(nb_max, dtype=np.int64)

    # -- growth: ClassifierTree.buildTree with C45ModelSelection, parents before children
    for i in range(G):
        rows = prow[lo[i]:hi[i]].copy()
        ws = pw[lo[i]:hi[i]].copy()
        f = att[i]
        cb, bw, n_slots, nb = _new_dist(i, att, nominal, n_cats, slot, n_bags, cb, bw, n_slots)
        cbi = cb[slot[i]:slot[i] + nb]
        bwi = bw[slot[i]:slot[i] + nb]
        if f < 0:  # the NoSplit model's distribution
            att[i] = -1
            cut[i] = np.nan
            nc[i] = 0
            tot[i] = _leaf_dist(y, rows, ws, cbi, bwi, pc[i])
            empty[i] = abs(tot[i]) < _SMALL
            continue
        # selectModel sorts the node's instances by each numeric attribute in turn; the
        # chosen split's class weights are counted in the order of its own turn
        turn, order = _turn_orders(keys, rows, numeric, f, nominal[f])
        t_rows = rows[turn]
        t_w = ws[turn]
        if nominal[f]:  # handleEnumeratedAttribute: the known values one after another
            t = _add_known(_bags(X, t_rows, f, cut[i], nominal), y[t_rows], t_w, cbi, bwi,
                           pc[i], 0.0)
        else:  # handleNumericAttribute: known values at or below the cut, then above
            m = t_rows.shape[0]
            first_miss = m
            for r in range(m):
                if np.isnan(X[t_rows[r], f]):
                    first_miss = r
                    break
            left = 0
            for r in range(first_miss):
                if X[t_rows[r], f] <= cut[i]:
                    left += 1
            t_y = y[t_rows]
            t = _add_range(0, t_y[:left], t_w[:left], cbi, bwi, pc[i], 0.0)
            t = _add_range(1, t_y[left:first_miss], t_w[left:first_miss], cbi, bwi, pc[i], t)
        rows = rows[order]
        ws = ws[order]
        prow[lo[i]:hi[i]] = rows
        pw[lo[i]:hi[i]] = ws
        bag = _bags(X, rows, f, cut[i], nominal)
        tot[i] = _add_unknown(bag < 0, y[rows], ws, cbi, bwi, pc[i], t)
        prow, pw, used = _split(bag, bwi, tot[i], rows, ws, prow, pw, used, part_lo[:nb],
                                part_hi[:nb])
        for b in range(nb):
            lo[cs[i] + b] = part_lo[b]
            hi[cs[i] + b] = part_hi[b]

    # -- collapse (C45PruneableClassifierTree.collapse): the subtrees' training errors,
    # then top down, each node whose subtree errs about as often as itself made a leaf
    if collapse:
        err = np.empty(G)
        for i in range(G - 1, -1, -1):
            if att[i] < 0:
                err[i] = tot[i] - pc[i, _max_class(pc[i])]
            else:
                s = 0.0
                for j in range(nc[i]):
                    s = s + err[cs[i] + j]
                err[i] = s
        alive = np.zeros(G, dtype=np.bool_)
        alive[0] = True
        for i in range(G):
            if not alive[i] or att[i] < 0:
                continue
            if err[i] >= tot[i] - pc[i, _max_class(pc[i])] - 1e-3:
                _make_leaf(i, att, cut, cs, nc, n_bags, pc, tot, cb[slot[i]], bw[slot[i]:])
            else:
                for j in range(nc[i]):
                    alive[cs[i] + j] = True

    # -- pruning (C45PruneableClassifierTree.prune): children first, then the node made a
    # leaf, left, or replaced by its largest branch and pruned again
    if prune:
        st_node = np.empty(G + 1, dtype=np.int64)
        st_k = np.empty(G + 1, dtype=np.int64)
        order = np.empty(G, dtype=np.int64)
        val = np.empty(G)
        # instances sent down a branch that is only being evaluated
        srow = np.empty(2 * n + 16, dtype=np.int64)
        sw = np.empty(2 * n + 16)
        s_lo = np.empty(G, dtype=np.int64)
        s_hi = np.empty(G, dtype=np.int64)
        t_cb = np.empty((nb_max, K))
        t_bw = np.empty(nb_max)
        t_pc = np.empty(K)
        st_node[0] = 0
        st_k[0] = 0
        sp = 1
        while sp > 0:
            v = st_node[sp - 1]
            if att[v] < 0:
                sp -= 1
                continue
            k = st_k[sp - 1]
            if k < nc[v]:
                st_k[sp - 1] = k + 1
                st_node[sp] = cs[v] + k
                st_k[sp] = 0
                sp += 1
                continue
            # Distribution.maxBag (Python's index -1, the last bag, if none qualifies)
            big = -1
            best = 0.0
            for b in range(n_bags[v]):
                if bw[slot[v] + b] - best > -_SMALL:
                    best = bw[slot[v] + b]
                    big = b
            if big < 0:
                big = n_bags[v] - 1
            err_big = _MAX_VALUE
            if raising:  # getEstimatedErrorsForBranch of the largest branch, on all of v's
                m = hi[v] - lo[v]
                srow = _room(srow, 0, m)
                sw = _room(sw, 0, m)
                srow[:m] = prow[lo[v]:hi[v]]
                sw[:m] = pw[lo[v]:hi[v]]
                s_used = m
                count = _subtree(cs[v] + big, att, cs, nc, order)
                s_lo[order[0]] = 0
                s_hi[order[0]] = m
                for q in range(count):
                    u = order[q]
                    rows = srow[s_lo[u]:s_hi[u]].copy()
                    ws = sw[s_lo[u]:s_hi[u]].copy()
                    t_pc[:] = 0.0
                    if att[u] < 0:
                        t_cb[:1] = 0.0
                        t_bw[:1] = 0.0
                        t = _leaf_dist(y, rows, ws, t_cb[:1], t_bw[:1], t_pc)
                        val[u] = _errors_for(t_pc, t, cfd, z)
                        continue
                    nb = n_bags[u]
                    t_cb[:nb] = 0.0
                    t_bw[:nb] = 0.0
                    t, bag = _reset_dist(X, y, nominal, rows, ws, att[u], cut[u], t_cb[:nb],
                                         t_bw[:nb], t_pc)
                    srow, sw, s_used = _split(bag, t_bw[:nb], t, rows, ws, srow, sw, s_used,
                                              part_lo[:nb], part_hi[:nb])
                    for b in range(nb):
                        s_lo[cs[u] + b] = part_lo[b]
                        s_hi[cs[u] + b] = part_hi[b]
                err_big = _fold(order, count, att, cs, nc, val)
            err_leaf = _errors_for(pc[v], tot[v], cfd, z)
            count = _subtree(v, att, cs, nc, order)
            for q in range(count):
                u = order[q]
                if att[u] < 0:
                    val[u] = _errors_for(pc[u], tot[u], cfd, z)
            err_tree = _fold(order, count, att, cs, nc, val)
            if err_leaf - (err_tree + 0.1) < _SMALL and err_leaf - (err_big + 0.1) < _SMALL:
                _make_leaf(v, att, cut, cs, nc, n_bags, pc, tot, cb[slot[v]], bw[slot[v]:])
                sp -= 1
                continue
            if not err_big - (err_tree + 0.1) < _SMALL:
                sp -= 1
                continue
            r = cs[v] + big
            att[v] = att[r]
            cut[v] = cut[r]
            cs[v] = cs[r]
            nc[v] = nc[r]
            # newDistribution: v's instances re-distributed down the raised subtree
            count = _subtree(v, att, cs, nc, order)
            for q in range(count):
                u = order[q]
                rows = prow[lo[u]:hi[u]].copy()
                ws = pw[lo[u]:hi[u]].copy()
                cb, bw, n_slots, nb = _new_dist(u, att, nominal, n_cats, slot, n_bags, cb, bw,
                                                n_slots)
                pc[u] = 0.0
                cbu = cb[slot[u]:slot[u] + nb]
                bwu = bw[slot[u]:slot[u] + nb]
                if att[u] < 0:
                    tot[u] = _leaf_dist(y, rows, ws, cbu, bwu, pc[u])
                    if abs(tot[u]) >= _SMALL:
                        empty[u] = False
                    continue
                tot[u], bag = _reset_dist(X, y, nominal, rows, ws, att[u], cut[u], cbu, bwu,
                                          pc[u])
                prow, pw, used = _split(bag, bwu, tot[u], rows, ws, prow, pw, used,
                                        part_lo[:nb], part_hi[:nb])
                for b in range(nb):
                    lo[cs[u] + b] = part_lo[b]
                    hi[cs[u] + b] = part_hi[b]
            st_k[sp - 1] = 0

    # -- the final tree, numbered breadth first; each node's branch as its parent holds it
    order = np.empty(G, dtype=np.int64)
    count = _subtree(0, att, cs, nc, order)
    position = np.empty(G, dtype=np.int64)
    for q in range(count):
        position[order[q]] = q
    out_bv = np.empty((count, K))
    out_bt = np.empty(count)
    out_bv[0] = pc[0]
    out_bt[0] = tot[0]
    for q in range(count):
        u = order[q]
        if att[u] >= 0:
            for j in range(nc[u]):
                out_bv[position[cs[u] + j]] = cb[slot[u] + j]
                out_bt[position[cs[u] + j]] = bw[slot[u] + j]
    return order[:count], att, cut, nc, empty, pc, tot, out_bv, out_bt


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
        a training value), ``child_start``, ``n_children``; a node's children contiguous
        and numbered after it (as the growth kernel numbers them).
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
    X = np.ascontiguousarray(X, dtype=np.float64)
    nominal = np.ascontiguousarray(nominal, dtype=np.bool_)
    # what Instances.sort compares: a missing value as Double.MAX_VALUE
    keys = np.where(np.isnan(X), _MAX_VALUE, X)
    order, att, cut, nc, empty, pc, tot, bag_value, bag_total = _replay(
        X, keys, np.ascontiguousarray(y, dtype=np.int64),
        np.ascontiguousarray(w, dtype=np.float64), nominal,
        np.ascontiguousarray(n_categories, dtype=np.int64),
        np.flatnonzero(~nominal).astype(np.int64), int(n_classes),
        *(np.ascontiguousarray(grown[key], dtype=dtype) for key, dtype in (
            ("feature", np.int64), ("threshold", np.float64), ("child_start", np.int64),
            ("n_children", np.int64))),
        bool(collapse), bool(prune), float(cfd), float(z), bool(subtree_raising))
    return {"feature": att[order], "threshold": cut[order], "n_children": nc[order],
            "is_empty": empty[order], "value": pc[order], "total": tot[order],
            "bag_value": bag_value, "bag_total": bag_total}
