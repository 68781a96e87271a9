"""Compiled pruning of one grown C4.5 tree, as Weka 3.9.7's ``C45PruneableClassifierTree``.

Imported on first use by :func:`ensemblekit.classifiers._c45_growth.grow_c45`, like the
growth kernels of :mod:`ensemblekit.classifiers._c45_kernels` (numba; a fitted tree
predicts without it). :func:`prune_tree` takes the collapsed tree as the growth kernel
returns it, node arrays plus each node's training instances, and prunes it in one call:
children first, then each node is replaced by a leaf, or by its largest branch (subtree
raising, which re-distributes the node's instances down the raised branch), when that
does not add more than 0.1 to the pessimistic error estimate.

The arithmetic adds the same numbers in the same order as the numpy code this replaces,
so trees, counts and distributions are equal to the last bit: class weights are summed
row by row in the order of a node's instances; a sum over one branch's classes, over the
branches and over the whole branch-by-class table is numpy's pairwise sum (eight partial
sums, :func:`_numpy_sum`); a sum over the branches of each class, and the total of a
class distribution, add one term after another from 0.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._c45_kernels import SMALL, _frozen, _grow_nodes, _incorrect

__all__ = ["add_errors", "prune_tree"]


@njit(cache=True, nogil=True)
def _block(a, start, n, stride):
    # numpy's sum of at most 128 terms a[start], a[start + stride], ...: fewer than 8 one
    # after another, else in eight partial sums and the rest one after another
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[start + i * stride]
        return res
    r0 = a[start]
    r1 = a[start + stride]
    r2 = a[start + 2 * stride]
    r3 = a[start + 3 * stride]
    r4 = a[start + 4 * stride]
    r5 = a[start + 5 * stride]
    r6 = a[start + 6 * stride]
    r7 = a[start + 7 * stride]
    i = 8
    while i < n - (n % 8):
        p = start + i * stride
        r0 += a[p]
        r1 += a[p + stride]
        r2 += a[p + 2 * stride]
        r3 += a[p + 3 * stride]
        r4 += a[p + 4 * stride]
        r5 += a[p + 5 * stride]
        r6 += a[p + 6 * stride]
        r7 += a[p + 7 * stride]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[start + i * stride]
        i += 1
    return res


@njit(cache=True, nogil=True)
def _pairwise(a, start, n, stride):
    # numpy's pairwise summation: more than 128 terms are split in two halves (the first a
    # multiple of 8 long) summed apart and added; here on an explicit stack, as numba's
    # cache does not keep recursive functions safely
    if n <= 128:
        return _block(a, start, n, stride)
    s_start = np.empty(128, dtype=np.int64)
    s_n = np.empty(128, dtype=np.int64)
    s_left = np.empty(128)  # the first half's sum, once known
    s_done = np.zeros(128, dtype=np.bool_)
    s_start[0] = start
    s_n[0] = n
    top = 1
    result = 0.0
    have = False  # `result` holds the sum of the range just finished
    while top > 0:
        f = top - 1
        m = s_n[f]
        half = m // 2
        half -= half % 8
        if have:
            if s_done[f]:  # both halves known
                result = s_left[f] + result
                top -= 1
                continue
            s_left[f] = result
            s_done[f] = True
            have = False
        elif half <= 128:
            s_left[f] = _block(a, s_start[f], half, stride)
            s_done[f] = True
        else:
            s_start[top] = s_start[f]
            s_n[top] = half
            s_done[top] = False
            top += 1
            continue
        # the first half is known: the second
        rest = m - half
        if rest <= 128:
            result = s_left[f] + _block(a, s_start[f] + half * stride, rest, stride)
            have = True
            top -= 1
        else:
            s_start[top] = s_start[f] + half * stride
            s_n[top] = rest
            s_done[top] = False
            top += 1
    return result


@njit(cache=True, nogil=True)
def _numpy_sum(a, start, n):
    """``a[start:start + n].sum()`` as numpy adds it (from 0, pairwise)."""
    return 0.0 + _pairwise(a, start, n, 1)


@njit(cache=True, nogil=True)
def _normal_errors(n, e, z):
    # extra errors for e >= 1: the normal approximation, or n - e near the top
    if e + 0.5 >= n:
        return max(n - e, 0.0)
    f = (e + 0.5) / n
    r = (f + (z * z) / (2 * n) + z * math.sqrt((f / n) - (f * f / n) + (z * z / (4 * n * n)))) \
        / (1 + (z * z) / n)
    return (r * n) - e


@njit(cache=True, nogil=True)
def add_errors(n, e, cfd, z):
    """:func:`ensemblekit.classifiers._c45_growth.add_errors` compiled.

    ``cfd`` is the confidence factor already rounded to a 32-bit float, ``z`` the normal
    quantile of ``1 - cfd`` (computed in 32 bits, as Weka does); a ``cfd`` above 0.5 adds
    nothing.
    """
    if cfd > 0.5:
        return 0.0
    if e < 1:
        base = n * (1 - cfd ** (1 / n))
        if e == 0:
            return base
        return base + e * (_normal_errors(n, 1.0, z) - base)
    return _normal_errors(n, e, z)


@njit(cache=True, nogil=True)
def _estimated(dist, cfd, z):
    # Weka's getEstimatedErrorsForDistribution of one class distribution
    total = 0.0
    for c in range(dist.shape[0]):
        total += dist[c]
    if abs(total) < SMALL:
        return 0.0
    e = _incorrect(dist)
    return e + add_errors(total, e, cfd, z)


@njit(cache=True, nogil=True)
def _class_dist(out, y, rows, w, lo, hi):
    out[:] = 0.0
    for p in range(lo, hi):
        out[y[rows[p]]] += w[p]


@njit(cache=True, nogil=True)
def _branch(v, nominal, cut):
    # the branch of a known value; -1 for a missing one (a nominal split with a code as
    # its cut is binary: that value, then the others)
    if v != v:
        return -1
    if nominal:
        if cut != cut:
            return int(v)
        return 0 if int(v) == int(cut) else 1
    return 1 if v > cut else 0


@njit(cache=True, nogil=True)
def _width(nominal, n_cat, cut):
    # the number of branches of a split: one per value of a multiway nominal split, else 2
    return n_cat if nominal and cut != cut else 2


@njit(cache=True, nogil=True, error_model="numpy")
def _split_bags(X, y, att, cut, nominal, nb, K, rows, w, lo, hi, bags, frac, count):
    """Class weights per branch of the instances ``rows[lo:hi]`` (missing values spread
    as the known ones fall, Weka's ``resetDistribution``) in ``bags[:nb * K]`` (branch by
    branch, row-major), each branch's share in ``frac[:nb]``, the known instances of each
    branch in ``count[:nb]``; returns the number of missing values."""
    bags[:nb * K] = 0.0
    count[:nb] = 0
    n_miss = 0
    for p in range(lo, hi):
        r = rows[p]
        b = _branch(X[r, att], nominal, cut)
        if b < 0:
            n_miss += 1
        else:
            bags[b * K + y[r]] += w[p]
            count[b] += 1
    if n_miss > 0:
        kb = np.empty(nb)
        for b in range(nb):
            kb[b] = _numpy_sum(bags, b * K, K)
        ktot = _numpy_sum(kb, 0, nb)
        mclass = np.zeros(K)
        for p in range(lo, hi):
            r = rows[p]
            if X[r, att] != X[r, att]:
                mclass[y[r]] += w[p]
        for b in range(nb):
            prob = kb[b] / ktot if abs(ktot) >= SMALL else 1.0 / nb
            for c in range(K):
                bags[b * K + c] += prob * mclass[c]
    total = _numpy_sum(bags, 0, nb * K)
    for b in range(nb):
        frac[b] = _numpy_sum(bags, b * K, K) / total
    return n_miss


@njit(cache=True, nogil=True)
def _route(X, att, cut, nominal, nb, rows, w, lo, hi, frac, count, n_miss, dst_rows, dst_w,
           start, bounds):
    """Write the instances of each branch after ``start`` (the known ones in order, then
    the missing ones weighted by the branch's share when it exceeds 1e-6); the branch
    ``b`` gets ``dst[bounds[b]:bounds[b + 1]]``. Returns the end."""
    pos = np.empty(nb, dtype=np.int64)
    mpos = np.empty(nb, dtype=np.int64)
    at = start
    for b in range(nb):
        bounds[b] = at
        pos[b] = at
        at += count[b]
        mpos[b] = at
        if n_miss > 0 and frac[b] > SMALL:
            at += n_miss
    bounds[nb] = at
    for p in range(lo, hi):
        r = rows[p]
        b = _branch(X[r, att], nominal, cut)
        if b >= 0:
            dst_rows[pos[b]] = r
            dst_w[pos[b]] = w[p]
            pos[b] += 1
        else:
            for j in range(nb):
                if frac[j] > SMALL:
                    dst_rows[mpos[j]] = r
                    dst_w[mpos[j]] = w[p] * frac[j]
                    mpos[j] += 1
    return at


@njit(cache=True, nogil=True)
def _grown(rows, w, used, need):
    # the buffers with room for `need` entries (the first `used` kept)
    if need <= rows.shape[0]:
        return rows, w
    cap = max(2 * rows.shape[0], need)
    r2 = np.empty(cap, dtype=np.int64)
    w2 = np.empty(cap)
    r2[:used] = rows[:used]
    w2[:used] = w[:used]
    return r2, w2


def prune_tree(X, y, *rest):
    """:func:`_prune_tree` with ``X`` read-only, as the growth kernel takes it: one compiled
    signature (:func:`ensemblekit.classifiers._c45_kernels._frozen`)."""
    return _prune_tree(_frozen(X), y, *rest)


@njit(cache=True, nogil=True, error_model="numpy")
def _prune_tree(X, y, nominal, n_cats, feature, threshold, child_start, n_children, value,
                bag_value, is_empty, seg_lo, seg_hi, rows, weights, cfd, z, raising):
    """Weka's C4.5 pruning of a grown (and collapsed) tree; the pruned node arrays.

    Parameters
    ----------
    X, y, nominal, n_cats
        The training rows, class codes, nominal mask and declared values per column, as
        :func:`ensemblekit.classifiers._c45_kernels.grow_unpruned` took them.
    feature, threshold, child_start, n_children, value, bag_value, is_empty, seg_lo, \
seg_hi, rows, weights
        What ``grow_unpruned`` returns: the node arrays (children of a node contiguous,
        after it; ``threshold`` moved to a training value) and the instances of node
        ``i``, ``rows[seg_lo[i]:seg_hi[i]]`` weighted ``weights[...]``.
    cfd : float
        The confidence factor rounded to a 32-bit float.
    z : float
        The normal quantile of ``1 - cfd``.
    raising : bool
        Whether to consider subtree raising.

    Returns
    -------
    tuple of ndarray
        ``feature, threshold, child_start, n_children, value, bag_value, is_empty`` of
        the pruned tree, numbered breadth first.

    Notes
    -----
    The recursion of Weka's ``prune`` runs on an explicit stack: a node's children are
    pruned first and their estimated errors summed in order; then, with ``E`` the
    node's errors as a leaf, ``T`` the subtree's and ``L`` those of its largest branch fed
    with the node's instances, the node becomes a leaf when ``E <= T + 0.1`` and
    ``E <= L + 0.1`` (within 1e-6), else takes the largest branch's place when
    ``L <= T + 0.1`` and is pruned again.
    """
    K = value.shape[1]
    N = feature.shape[0]
    att = feature.copy()
    cut = threshold.copy()
    cs = child_start.copy()
    nc = n_children.copy()
    val = value.copy()
    bagv = bag_value.copy()
    emp = is_empty.copy()
    slo = seg_lo.copy()
    shi = seg_hi.copy()
    blen = rows.shape[0]
    brows = np.empty(blen + blen // 2 + 16, dtype=np.int64)
    bw = np.empty(brows.shape[0])
    brows[:blen] = rows
    bw[:blen] = weights
    maxnb = 2
    for j in range(n_cats.shape[0]):
        if nominal[j] and n_cats[j] > maxnb:
            maxnb = n_cats[j]
    bags = np.zeros(maxnb * K)
    frac = np.empty(maxnb)
    count = np.empty(maxnb, dtype=np.int64)
    dist = np.empty(K)
    # depth of the grown tree: a bound on both stacks (pruning never deepens the tree)
    depth = np.zeros(N, dtype=np.int64)
    max_depth = 0
    for i in range(N):
        for j in range(nc[i]):
            depth[cs[i] + j] = depth[i] + 1
            if depth[i] + 1 > max_depth:
                max_depth = depth[i] + 1
    # the prune stack
    p_node = np.empty(max_depth + 2, dtype=np.int64)
    p_next = np.empty(max_depth + 2, dtype=np.int64)
    p_acc = np.empty(max_depth + 2)
    # the stack of the estimate of a raised branch: instances in a scratch buffer
    e_node = np.empty(max_depth + 2, dtype=np.int64)
    e_next = np.empty(max_depth + 2, dtype=np.int64)
    e_acc = np.empty(max_depth + 2)
    e_base = np.empty(max_depth + 2, dtype=np.int64)
    e_bounds = np.empty((max_depth + 2, maxnb + 1), dtype=np.int64)
    srows = np.empty(16, dtype=np.int64)
    sw = np.empty(16)
    # the stack of re-distributing instances after raising
    d_stack = np.empty(N + 1, dtype=np.int64)
    cbounds = np.empty(maxnb + 1, dtype=np.int64)
    top = 0
    if nc[0] > 0:
        p_node[0] = 0
        p_next[0] = 0
        p_acc[0] = 0.0
        top = 1
    while top > 0:
        f = top - 1
        node = p_node[f]
        result = 0.0
        if nc[node] == 0:  # a raised leaf
            result = _estimated(val[node], cfd, z)
        elif p_next[f] < nc[node]:
            ch = cs[node] + p_next[f]
            p_next[f] += 1
            if nc[ch] == 0:
                p_acc[f] = p_acc[f] + _estimated(val[ch], cfd, z)
            else:
                p_node[top] = ch
                p_next[top] = 0
                p_acc[top] = 0.0
                top += 1
            continue
        else:
            err_tree = p_acc[f]
            s = cs[node]
            nb = nc[node]
            largest = -1
            best = 0.0
            for b in range(nb):
                v = _numpy_sum(bagv[s + b], 0, K)
                if best - v < SMALL:
                    largest = b
                    best = v
            big = s + largest
            err_largest = np.inf
            if raising:
                err_largest, srows, sw = _estimated_branch(
                    X, y, nominal, n_cats, att, cut, cs, nc, big, brows, bw, slo[node],
                    shi[node], cfd, z, bags, frac, count, dist, e_node, e_next, e_acc,
                    e_base, e_bounds, srows, sw)
            for c in range(K):
                dist[c] = 0.0
            for b in range(nb):
                for c in range(K):
                    dist[c] += bagv[s + b, c]
            err_leaf = _estimated(dist, cfd, z)
            if err_leaf - (err_tree + 0.1) < SMALL and err_leaf - (err_largest + 0.1) < SMALL:
                val[node] = dist
                att[node] = -1
                cut[node] = np.nan
                cs[node] = -1
                nc[node] = 0
                result = err_leaf
            elif err_largest - (err_tree + 0.1) < SMALL:
                att[node] = att[big]
                cut[node] = cut[big]
                cs[node] = cs[big]
                nc[node] = nc[big]
                val[node] = val[big]
                # re-distribute the node's instances down the raised subtree
                d_top = 1
                d_stack[0] = node
                while d_top > 0:
                    d_top -= 1
                    at = d_stack[d_top]
                    lo = slo[at]
                    hi = shi[at]
                    if nc[at] == 0:
                        _class_dist(val[at], y, brows, bw, lo, hi)
                        if abs(_numpy_sum(bw, lo, hi - lo)) >= SMALL:
                            emp[at] = False
                        continue
                    a = att[at]
                    nb2 = _width(nominal[a], n_cats[a], cut[at])
                    n_miss = _split_bags(X, y, a, cut[at], nominal[a], nb2, K, brows, bw, lo,
                                         hi, bags, frac, count)
                    need = blen + (hi - lo) + n_miss * nb2
                    if need > brows.shape[0]:
                        brows, bw, blen = _compacted(cs, nc, slo, shi, brows, bw, need - blen)
                        lo = slo[at]
                        hi = shi[at]
                    blen = _route(X, a, cut[at], nominal[a], nb2, brows, bw, lo, hi, frac,
                                  count, n_miss, brows, bw, blen, cbounds)
                    for b in range(nb2):
                        ch = cs[at] + b
                        slo[ch] = cbounds[b]
                        shi[ch] = cbounds[b + 1]
                        bagv[ch] = bags[b * K:(b + 1) * K]
                        d_stack[d_top] = ch
                        d_top += 1
                p_next[f] = 0
                p_acc[f] = 0.0
                continue
            else:
                result = err_tree
        top -= 1
        if top > 0:
            p_acc[top - 1] = p_acc[top - 1] + result
    return _flattened(att, cut, cs, nc, val, bagv, emp, K)


@njit(cache=True, nogil=True)
def _compacted(cs, nc, slo, shi, brows, bw, extra):
    """The instance buffers with only the segments of the nodes still in the tree (reached
    from the root), and room for ``extra`` more entries after them; ``slo``/``shi`` updated
    and the length used returned. Branches cut off by raising leave their segments behind.
    """
    live = 0
    stack = np.empty(cs.shape[0] + 1, dtype=np.int64)
    stack[0] = 0
    n = 1
    while n > 0:
        n -= 1
        i = stack[n]
        live += shi[i] - slo[i]
        for j in range(nc[i]):
            stack[n] = cs[i] + j
            n += 1
    cap = max(2 * live + 2 * extra, 16)
    r2 = np.empty(cap, dtype=np.int64)
    w2 = np.empty(cap)
    used = 0
    stack[0] = 0
    n = 1
    while n > 0:
        n -= 1
        i = stack[n]
        lo = slo[i]
        hi = shi[i]
        r2[used:used + hi - lo] = brows[lo:hi]
        w2[used:used + hi - lo] = bw[lo:hi]
        slo[i] = used
        shi[i] = used + hi - lo
        used += hi - lo
        for j in range(nc[i]):
            stack[n] = cs[i] + j
            n += 1
    return r2, w2, used


@njit(cache=True, nogil=True, error_model="numpy")
def _estimated_branch(X, y, nominal, n_cats, att, cut, cs, nc, start, rows, w, lo, hi, cfd, z,
                      bags, frac, count, dist, e_node, e_next, e_acc, e_base, e_bounds, srows,
                      sw):
    """Estimated errors of the subtree ``start`` if it received ``rows[lo:hi]``: the sum,
    child by child, of its leaves' estimates for the instances routed to them; and the
    scratch buffers ``srows``, ``sw`` (grown if they had to be)."""
    if nc[start] == 0:
        _class_dist(dist, y, rows, w, lo, hi)
        return _estimated(dist, cfd, z), srows, sw
    stop = 0
    top = 0
    node = start
    src_rows, src_w = rows, w
    while True:
        # enter `node` with instances src[lo:hi]: write its branches' instances to scratch
        a = att[node]
        nb = _width(nominal[a], n_cats[a], cut[node])
        n_miss = _split_bags(X, y, a, cut[node], nominal[a], nb, dist.shape[0], src_rows, src_w,
                             lo, hi, bags, frac, count)
        srows, sw = _grown(srows, sw, stop, stop + (hi - lo) + n_miss * nb)
        if top > 0:
            src_rows, src_w = srows, sw
        e_node[top] = node
        e_next[top] = 0
        e_acc[top] = 0.0
        e_base[top] = stop
        stop = _route(X, a, cut[node], nominal[a], nb, src_rows, src_w, lo, hi, frac, count,
                      n_miss, srows, sw, stop, e_bounds[top])
        top += 1
        # descend to the next split child, summing leaves on the way back up
        entered = False
        while top > 0 and not entered:
            f = top - 1
            nd = e_node[f]
            j = e_next[f]
            if j < nc[nd]:
                e_next[f] = j + 1
                ch = cs[nd] + j
                clo = e_bounds[f, j]
                chi = e_bounds[f, j + 1]
                if nc[ch] == 0:
                    _class_dist(dist, y, srows, sw, clo, chi)
                    e_acc[f] = e_acc[f] + _estimated(dist, cfd, z)
                else:
                    node = ch
                    lo = clo
                    hi = chi
                    src_rows, src_w = srows, sw
                    entered = True
            else:
                result = e_acc[f]
                stop = e_base[f]
                top -= 1
                if top == 0:
                    return result, srows, sw
                e_acc[top - 1] = e_acc[top - 1] + result


@njit(cache=True, nogil=True)
def _flattened(att, cut, cs, nc, val, bagv, emp, K):
    # the nodes left, numbered breadth first from the root (children contiguous, after it);
    # a split's class weights summed over its branches, class by class
    N = att.shape[0]
    order = np.empty(N, dtype=np.int64)
    new_cs = np.full(N, -1, dtype=np.int64)
    order[0] = 0
    count = 1
    head = 0
    while head < count:
        i = order[head]
        head += 1
        if nc[i] > 0:
            new_cs[head - 1] = count
        for j in range(nc[i]):
            order[count] = cs[i] + j
            count += 1
    f_out, t_out, cs_out, nc_out, v_out, bv_out, e_out, _, _ = _grow_nodes(count, K)
    cs_out[:] = new_cs[:count]
    for k in range(count):
        i = order[k]
        f_out[k], t_out[k], nc_out[k], e_out[k] = att[i], cut[i], nc[i], emp[i]
        bv_out[k] = bagv[i]
        if nc[i] > 0:
            for c in range(K):
                v_out[k, c] = 0.0
            for j in range(nc[i]):
                for c in range(K):
                    v_out[k, c] += bagv[cs[i] + j, c]
        else:
            v_out[k] = val[i]
    bv_out[0] = v_out[0]
    return f_out, t_out, cs_out, nc_out, v_out, bv_out, e_out
