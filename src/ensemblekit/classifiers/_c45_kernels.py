"""Compiled kernels of :mod:`ensemblekit.classifiers.c45`: split selection and prediction.

Imported lazily by ``c45`` (numba's import and the first compilation cost time, and the
command line must start fast), and only to fit: a loaded model predicts with the numpy
walk of :mod:`ensemblekit.classifiers.c45_model`, which gives the same bits. The compiled
:func:`predict_proba` serves trees grown in this process (the model class takes it once
this module is loaded, as in cross-validation) and the lazy ensembles, which apply each
tree they grow to one row while fitting (:func:`ensemblekit.classifiers.bagging.c45_proba`).

Every function is a plain loop over arrays compiled with ``numba.njit``; the arithmetic
follows the order of Weka 3.9.7's J48 (C4.5 release 8) where the order decides ties:
entropies as sums of ``x ln x`` divided by ``ln 2`` at the end, Weka's ``Utils`` tolerance
``1e-6`` in comparisons, ``1e-5`` between distinct numeric values.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Weka's ``Utils.SMALL``: two doubles closer than this compare equal.
SMALL = 1e-6
LN2 = math.log(2.0)


@njit(cache=True, nogil=True)
def _xlnx(x):
    # entropy term x ln x, 0 for weights below 1e-6 (as J48)
    if x < 1e-6:
        return 0.0
    return x * math.log(x)


@njit(cache=True, nogil=True)
def _xlnx_table(n):
    """``_xlnx(k)`` for ``k = 0 .. n``: the entropy terms of whole-number weights.

    Sums of whole-number weights are whole numbers (exactly, below 2**53), so a node whose
    weights are all whole looks its terms up here instead of taking a logarithm per cell:
    the same function gives the same bits. The argument is carried as a running float sum
    so that the loop is not vectorised (a vector logarithm might round differently).
    """
    out = np.empty(n + 1)
    x = 0.0
    for k in range(n + 1):
        out[k] = _xlnx(x)
        x += 1.0
    return out


@njit(cache=True, nogil=True)
def _info_gain(bags, per_bag, per_class, known, total, old_ent, whole):
    """C4.5's gain of a split (bits per known instance), scaled by the known fraction.

    ``bags`` (n_bags, K) holds the known instances' class weights per branch, ``known`` their
    total, ``total`` the node's total weight (missing values included); ``old_ent`` is the
    entropy term of the unsplit known instances, or NaN to compute it here. ``whole`` is
    :func:`_xlnx_table` when every weight in the node is a whole number, else empty.
    """
    if old_ent != old_ent:
        old_ent = _entropy_term(per_class, known)
    s = 0.0
    if whole.shape[0] > 0:
        # every weight is a whole number: the terms come from the table (same bits)
        for b in range(bags.shape[0]):
            for c in range(bags.shape[1]):
                s += whole[int(bags[b, c])]
            s -= whole[int(per_bag[b])]
    else:
        for b in range(bags.shape[0]):
            for c in range(bags.shape[1]):
                s += _xlnx(bags[b, c])
            s -= _xlnx(per_bag[b])
    return _gain_of_sum(s, old_ent, known, total)


@njit(cache=True, nogil=True)
def _entropy_term(per_class, known):
    # the unsplit known instances' entropy term (bits), from their class weights
    s = 0.0
    for c in range(per_class.shape[0]):
        s += _xlnx(float(per_class[c]))
    return (_xlnx(known) - s) / LN2


@njit(cache=True, nogil=True)
def _gain_of_sum(s, old_ent, known, total):
    # the gain from the sum of the split's x ln x terms (cells less branch totals)
    new_ent = -(s / LN2)
    unknown_rate = (total - known) / total
    numerator = (1.0 - unknown_rate) * (old_ent - new_ent)
    if abs(numerator) < SMALL:
        return 0.0
    return numerator / known


@njit(cache=True, nogil=True)
def _gain_ratio(per_bag, known, total, gain):
    """Gain divided by the split information (the unknown weight is a branch of its own)."""
    s = 0.0
    if known > SMALL:
        for b in range(per_bag.shape[0]):
            s -= _xlnx(per_bag[b])
        s -= _xlnx(total - known)
        s += _xlnx(total)
    s /= LN2
    if abs(s) < SMALL:
        return 0.0
    return gain / (s / total)


@njit(cache=True, nogil=True)
def _value_bags(col, y, w, n_cat, n_classes):
    # the known values' class weights per value, their weight per value and per class,
    # and their total, added row by row
    bags = np.zeros((n_cat, n_classes))
    per_bag = np.zeros(n_cat)
    per_class = np.zeros(n_classes)
    known = 0.0
    for i in range(col.shape[0]):
        v = col[i]
        if v == v:
            b = int(v)
            bags[b, y[i]] += w[i]
            per_bag[b] += w[i]
            per_class[y[i]] += w[i]
            known += w[i]
    return bags, per_bag, per_class, known


@njit(cache=True, nogil=True)
def _nominal_split(col, y, w, n_cat, n_classes, min_obj, total, whole):
    # -> (valid, gain, gain ratio)
    bags, per_bag, per_class, known = _value_bags(col, y, w, n_cat, n_classes)
    enough = 0
    for b in range(n_cat):
        if min_obj - per_bag[b] < SMALL:
            enough += 1
    if enough <= 1:
        return False, 0.0, 0.0
    gain = _info_gain(bags, per_bag, per_class, known, total, np.nan, whole)
    return True, gain, _gain_ratio(per_bag, known, total, gain)


@njit(cache=True, nogil=True)
def _binary_nominal_split(col, y, w, n_cat, n_classes, min_obj, total, whole):
    """The best two-way split ``= v`` / ``!= v`` of a nominal column (J48 ``-B``).

    Each value ``v`` whose known weight reaches ``min_obj`` is tried against all the
    other known values together (which must reach ``min_obj`` too); the first value so
    tried is taken, then a later one only when its gain ratio exceeds the best by more
    than 1e-6, as Weka's ``BinC45Split`` chooses. The second branch's class weights are
    the node's known ones less the first branch's. Returns ``(valid, gain, gain ratio,
    v)``: valid when some value could be tried, with gain and ratio 0 (and ``v`` = -1)
    when none was taken.
    """
    bags, per_bag, per_class, known = _value_bags(col, y, w, n_cat, n_classes)
    two = np.zeros((2, n_classes))
    two_bag = np.zeros(2)
    valid = False
    best_gain, best_ratio, best_value = 0.0, 0.0, -1
    for b in range(n_cat):
        if min_obj - per_bag[b] >= SMALL:
            continue
        two_bag[0] = per_bag[b]
        two_bag[1] = known - per_bag[b]
        if min_obj - two_bag[1] >= SMALL:
            continue
        for c in range(n_classes):
            two[0, c] = bags[b, c]
            two[1, c] = per_class[c] - bags[b, c]
        valid = True
        gain = _info_gain(two, two_bag, per_class, known, total, np.nan, whole)
        ratio = _gain_ratio(two_bag, known, total, gain)
        if b == 0 or ratio - best_ratio > SMALL:
            best_gain, best_ratio, best_value = gain, ratio, b
    return valid, best_gain, best_ratio, best_value


@njit(cache=True, nogil=True)
def _min_split(known, n_classes, min_obj):
    # the least weight on each side of a numeric threshold
    min_split = 0.1 * known / n_classes
    if min_split - min_obj < SMALL:
        min_split = min_obj
    elif min_split - 25.0 > SMALL:
        min_split = 25.0
    return min_split


@njit(cache=True, nogil=True)
def _numeric_result(vals, split_index, n_thresholds, best_gain, left, right, total, mdl):
    # -> (valid, gain, gain ratio, cut) once the best threshold is known; ``left`` and
    # ``right`` are the known weights on its two sides; ``mdl``: release 8's penalty
    # log2(#thresholds) / N on the gain (J48 -J leaves it out)
    if n_thresholds == 0:
        return False, 0.0, 0.0, 0.0
    gain = best_gain
    if mdl:
        gain = best_gain - (math.log(n_thresholds) / LN2) / total
    if gain < SMALL:
        return False, 0.0, 0.0, 0.0
    lo = vals[split_index]
    hi = vals[split_index + 1]
    cut = (hi + lo) / 2.0
    if math.isinf(cut):
        # the sum of two values near the float limits overflowed: halve first (exact for
        # numbers that large), else every row would go left and the split never end
        cut = hi / 2.0 + lo / 2.0
    if cut == hi:
        cut = lo
    sums = np.empty(2)
    sums[0] = left
    sums[1] = right
    return True, gain, _gain_ratio(sums, left + right, total, gain), cut


@njit(cache=True, nogil=True)
def _numeric_split(vals, order, cls, wmap, cnt, unit_w, unit_cnt, n_classes, min_obj, total,
                   whole, mdl):
    # -> (valid, gain after the log2(#thresholds)/N penalty when ``mdl``, gain ratio, cut),
    # from the
    # node's rows with a known value of one column sorted by it (``order``, the values
    # ``vals`` and classes ``cls`` beside them; weights wmap[row], or all 1 when ``unit_w``,
    # counts cnt[row], or all 1 when ``unit_cnt``: the same sums without reading those
    # arrays)
    if whole.shape[0] > 0:
        return _numeric_split_whole(vals, order, cls, wmap, cnt, unit_w, unit_cnt, n_classes,
                                    min_obj, total, whole, mdl)
    k = order.shape[0]
    bags = np.zeros((2, n_classes))
    per_bag = np.zeros(2)
    per_class = np.zeros(n_classes)
    known = 0.0
    known_count = 0.0
    for i in range(k):
        r = order[i]
        c = cls[i]
        wr = 1.0 if unit_w else wmap[r]
        bags[1, c] += wr
        per_bag[1] += wr
        per_class[c] += wr
        known += wr
        known_count += 1.0 if unit_cnt else cnt[r]
    min_split = _min_split(known, n_classes, min_obj)
    if 2.0 * min_split - known_count > SMALL:
        return False, 0.0, 0.0, 0.0
    old_ent = _entropy_term(per_class, known)
    best_gain, split_index, n_thresholds, last = 0.0, -1, 0, 0
    prev = vals[0] if k > 0 else 0.0
    for nxt in range(1, k):
        cur = vals[nxt]
        if prev + 1e-5 < cur:
            for i in range(last, nxt):
                c = cls[i]
                wr = 1.0 if unit_w else wmap[order[i]]
                bags[1, c] -= wr
                bags[0, c] += wr
                per_bag[1] -= wr
                per_bag[0] += wr
            if min_split - per_bag[0] < SMALL and min_split - per_bag[1] < SMALL:
                gain = _info_gain(bags, per_bag, per_class, known, total, old_ent, whole)
                if gain - best_gain > SMALL:
                    best_gain = gain
                    split_index = nxt - 1
                n_thresholds += 1
            last = nxt
        prev = cur
    left = 0.0
    right = 0.0
    if n_thresholds > 0:
        for i in range(k):
            wr = 1.0 if unit_w else wmap[order[i]]
            if i <= split_index:
                left += wr
            else:
                right += wr
    return _numeric_result(vals, split_index, n_thresholds, best_gain, left, right, total, mdl)


@njit(cache=True, nogil=True)
def _numeric_split_whole(vals, order, cls, wmap, cnt, unit_w, unit_cnt, n_classes, min_obj,
                         total, whole, mdl):
    # _numeric_split where every weight is a whole number: the class weights are counted
    # in integers (exact in any order, as the floating sums are) and their x ln x terms
    # read from the table ``whole``
    k = order.shape[0]
    n0 = np.zeros(n_classes, dtype=np.int64)
    n1 = np.zeros(n_classes, dtype=np.int64)
    known_n = 0
    known_count = 0.0
    for i in range(k):
        r = order[i]
        wi = 1 if unit_w else int(wmap[r])
        n1[cls[i]] += wi
        known_n += wi
        known_count += 1.0 if unit_cnt else cnt[r]
    known = float(known_n)
    min_split = _min_split(known, n_classes, min_obj)
    if 2.0 * min_split - known_count > SMALL:
        return False, 0.0, 0.0, 0.0
    old_ent = _entropy_term(n1, known)
    best_gain, split_index, best_left, n_thresholds, p0 = 0.0, -1, 0, 0, 0
    i = 0  # the rows before i are left of the threshold
    for nxt in range(1, k):
        if vals[nxt - 1] + 1e-5 < vals[nxt]:
            while i < nxt:
                wi = 1 if unit_w else int(wmap[order[i]])
                n1[cls[i]] -= wi
                n0[cls[i]] += wi
                p0 += wi
                i += 1
            if min_split - float(p0) < SMALL and min_split - float(known_n - p0) < SMALL:
                # the terms in the order of _info_gain: branch 0's cells, less its
                # total, then branch 1's
                s = 0.0
                for c in range(n_classes):
                    s += whole[n0[c]]
                s -= whole[p0]
                for c in range(n_classes):
                    s += whole[n1[c]]
                s -= whole[known_n - p0]
                gain = _gain_of_sum(s, old_ent, known, total)
                if gain - best_gain > SMALL:
                    best_gain = gain
                    split_index = nxt - 1
                    best_left = p0
                n_thresholds += 1
    return _numeric_result(vals, split_index, n_thresholds, best_gain, float(best_left),
                           float(known_n - best_left), total, mdl)


@njit(cache=True, nogil=True)
def select_split(X, rows, wts, y, cnt, unit_cnt, wmap, srow, sval, scls, s_lo, s_hi,
                 num_index, nominal, n_cats, n_classes, min_obj, few_values_ok, table, binary,
                 mdl):
    """Weka's ``C45ModelSelection.selectModel`` on one node's instances.

    :func:`split_measures` of every candidate, then the best by :func:`best_split`.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        All training rows (nominal columns as codes, NaN missing).
    rows, wts : ndarray of shape (m,)
        The node's rows and their weights (fractions of instances below a missing-value
        split).
    y : ndarray of int64 of shape (n,)
        Class codes ``0 .. n_classes - 1``.
    cnt : ndarray of shape (n,)
        How many instances each row stands for (its original count), for the rule
        "at least twice the minimum split of known instances".
    unit_cnt : bool
        Whether every entry of ``cnt`` is 1.
    wmap : ndarray of shape (n,)
        The node's weight of each of its rows (indexed by row).
    srow, sval, scls, s_lo, s_hi, num_index
        The node's rows with a known value of numeric column ``j``, sorted by it, are
        ``srow[k, s_lo[k]:s_hi[k]]`` with ``k = num_index[j]``; ``sval`` and ``scls`` hold
        their values of column ``j`` and their classes beside them.
    nominal : ndarray of bool of shape (d,)
    n_cats : ndarray of int64 of shape (d,)
        Declared values of each nominal column.
    n_classes : int
    min_obj : float
        ``-M``.
    few_values_ok : ndarray of bool of shape (d,)
        Whether a nominal column's gain counts in the average gain (Weka leaves out
        attributes with at least 0.3 x n values, unless all attributes are such).
    table : ndarray of shape (t,)
        :func:`_xlnx_table` of the tree's total weight when every training weight is a
        whole number (used in nodes where every weight still is), else empty.
    binary : bool
        Split nominal columns in two, one value against the others (Weka's
        ``BinC45ModelSelection``, J48 ``-B``), instead of one branch per value.
    mdl : bool
        Subtract release 8's ``log2(#thresholds) / N`` from a numeric split's gain
        (J48 ``-J`` turns it off).

    Returns
    -------
    attribute : int
        The chosen attribute, or -1 for a leaf.
    cut : float
        The numeric threshold before it is moved to a training value; for a nominal
        column the code of the value of branch 0 when ``binary``, else NaN.
    """
    ok, valid, gains, ratios, cuts, avg = split_measures(
        X, rows, wts, y, cnt, unit_cnt, wmap, srow, sval, scls, s_lo, s_hi, num_index, nominal,
        n_cats, n_classes, min_obj, few_values_ok, table, binary, mdl)
    if not ok:
        return -1, np.nan
    best = best_split(valid, gains, ratios, avg, valid)
    if best < 0:
        return -1, np.nan
    return best, cuts[best]


@njit(cache=True, nogil=True)
def split_measures(X, rows, wts, y, cnt, unit_cnt, wmap, srow, sval, scls, s_lo, s_hi,
                   num_index, nominal, n_cats, n_classes, min_obj, few_values_ok, table, binary,
                   mdl):
    """J48's measures of every candidate split of one node (the arguments of :func:`select_split`).

    Returns
    -------
    ok : bool
        False when the node is a leaf whatever the split (less than ``2 * min_obj`` weight,
        one class, or no valid candidate); the arrays are then zeros.
    valid : ndarray of bool of shape (d,)
        Whether the attribute gives a split (two branches of ``min_obj``, a threshold).
    gains, ratios : ndarray of shape (d,)
        Information gain (release 8's penalty on numeric ones) and gain ratio.
    cuts : ndarray of shape (d,)
        A numeric attribute's best threshold, before it is moved to a training value.
    avg : float
        The average gain of the valid candidates that count in it.
    """
    m = rows.shape[0]
    d = X.shape[1]
    total = 0.0
    per_class = np.zeros(n_classes)
    yn = np.empty(m, dtype=np.int64)
    whole_weights = table.shape[0] > 0
    unit_w = m >= 0  # True, as a bool (see _c45_kernels.grow_unpruned's unit_cnt)
    for i in range(m):
        yn[i] = y[rows[i]]
        total += wts[i]
        per_class[yn[i]] += wts[i]
        if wts[i] != math.floor(wts[i]):
            whole_weights = False
        if wts[i] != 1.0:
            unit_w = False
    whole = table if whole_weights and total < table.shape[0] else table[:0]
    best_c = 0.0
    for c in range(n_classes):
        if per_class[c] - best_c > SMALL:
            best_c = per_class[c]
    valid = np.zeros(d, dtype=np.bool_)
    gains = np.zeros(d)
    ratios = np.zeros(d)
    cuts = np.full(d, np.nan)
    if 2.0 * min_obj - total > SMALL or abs(total - best_c) < SMALL:
        return False, valid, gains, ratios, cuts, 0.0
    col = np.empty(m)
    avg = 0.0
    n_valid = 0
    for j in range(d):
        if nominal[j]:
            for i in range(m):
                col[i] = X[rows[i], j]
            if binary:
                ok, g, r, v = _binary_nominal_split(col, yn, wts, n_cats[j], n_classes,
                                                    min_obj, total, whole)
                cuts[j] = v
            else:
                ok, g, r = _nominal_split(col, yn, wts, n_cats[j], n_classes, min_obj, total,
                                          whole)
        else:
            k = num_index[j]
            a, b = s_lo[k], s_hi[k]
            ok, g, r, cut = _numeric_split(sval[k, a:b], srow[k, a:b], scls[k, a:b], wmap, cnt,
                                           unit_w, unit_cnt, n_classes, min_obj, total, whole,
                                           mdl)
            cuts[j] = cut
        valid[j] = ok
        gains[j] = g
        ratios[j] = r
        if ok and (not nominal[j] or few_values_ok[j]):
            avg += g
            n_valid += 1
    if n_valid == 0:
        return False, valid, gains, ratios, cuts, 0.0
    return True, valid, gains, ratios, cuts, avg / n_valid


@njit(cache=True, nogil=True)
def eligible(valid, gains, avg, j):
    """Whether candidate ``j`` competes on gain ratio: valid, and of at least average gain
    (less 1e-3, as J48)."""
    return valid[j] and gains[j] >= avg - 1e-3


@njit(cache=True, nogil=True)
def best_split(valid, gains, ratios, avg, allowed):
    """J48's choice among the measures of :func:`split_measures`: the first eligible
    candidate of largest gain ratio (by more than 1e-6) among those ``allowed``; -1 when
    no gain ratio exceeds 1e-6."""
    best = -1
    best_ratio = 0.0
    for j in range(valid.shape[0]):
        if allowed[j] and eligible(valid, gains, avg, j) and ratios[j] - best_ratio > SMALL:
            best = j
            best_ratio = ratios[j]
    if abs(best_ratio) < SMALL:
        return -1
    return best


@njit(cache=True, nogil=True)
def _class_shares(counts, i, total, weight, out, r, f_sum, top, laplace):
    """``weight * (counts[i, c] / total)`` per class ``c`` (zeros when ``total`` is not
    above ``SMALL``: Weka's ``Distribution.prob``, weighted), or with
    ``laplace`` ``weight * ((counts[i, c] + 1) / (total + n_classes))`` (Weka's
    ``Distribution.laplaceProb``, never zero): the result ``out[r]`` of a row when no
    frame is open (``top < 0``), else added to the open frame's sum ``f_sum[top]``."""
    k = counts.shape[1]
    if laplace:
        for c in range(k):
            share = weight * ((counts[i, c] + 1.0) / (total + k))
            if top < 0:
                out[r, c] = share
            else:
                f_sum[top, c] += share
    elif total <= SMALL:
        if top < 0:  # (adding zeros changes no sum: every share is >= +0)
            for c in range(k):
                out[r, c] = 0.0
    elif top < 0:
        for c in range(k):
            out[r, c] = weight * (counts[i, c] / total)
    else:
        for c in range(k):
            f_sum[top, c] += weight * (counts[i, c] / total)


@njit(cache=True, nogil=True)
def _branch_of(v, nominal, t):
    """The branch of a known value ``v`` at a split with threshold ``t``: for a nominal
    column the value's code, or (a binary split, ``t`` a code) 0 for ``t`` and 1 for any
    other value; for a numeric one 0 when ``v <= t``, else 1."""
    if nominal:
        if t != t:
            return int(v)
        return 0 if int(v) == int(t) else 1
    return 0 if v <= t else 1


@njit(cache=True, nogil=True)
def predict_proba(X, feature, threshold, nominal, child_start, n_children, value, bag_value,
                  is_empty, total, bag_total, n_classes, laplace=False):
    """J48's ``distributionForInstance`` for every row of ``X`` (``laplace``: J48 ``-A``).

    A missing value at a split sends the instance down every non-empty branch, weighted by
    the branch's share of the node's training weight; an instance reaching an empty branch
    gets the class distribution of that branch (the node's when the branch has no weight).
    The additions are Weka's (``ClassifierTree.getProbs``, recursive): a split on a missing
    value returns ``0 + p_0 + p_1 + ...``, each ``p_j`` its branch's own such sum, so a
    branch's leaves are summed before they are added to the leaves of earlier branches.
    Each open split of that kind is a frame of an explicit stack, with its running sum.
    ``total`` and ``bag_total`` are the totals of ``value`` and ``bag_value`` as J48 keeps
    them (``C45Model._totals``): class weights are divided by them, and a branch's share of
    a split is ``bag_total[branch] / total[split]``. With ``laplace`` every class share is
    Laplace-corrected (``_class_shares``), on the same paths.
    """
    n = X.shape[0]
    depth = _max_depth(child_start, n_children) + 2
    out = np.zeros((n, n_classes))
    f_node = np.empty(depth, dtype=np.int64)  # the split node of each open frame
    f_w = np.empty(depth)  # the weight the frame's row part arrived with
    f_next = np.empty(depth, dtype=np.int64)  # the next branch to go down
    f_sum = np.zeros((depth, n_classes))  # the frame's running sum
    f_tot = np.empty(depth)  # the split's training weight
    for r in range(n):
        top = -1  # no open frame
        node = 0
        wt = 1.0
        while True:
            # walk down from `node` with weight `wt` until a part is known or a frame opens
            ready = False
            while True:
                f = feature[node]
                if f < 0:
                    _class_shares(value, node, total[node], wt, out, r, f_sum, top, laplace)
                    ready = True
                    break
                v = X[r, f]
                if v != v:  # a missing value: open a frame at this split
                    top += 1
                    f_node[top] = node
                    f_w[top] = wt
                    f_next[top] = 0
                    for c in range(n_classes):
                        f_sum[top, c] = 0.0
                    f_tot[top] = total[node]
                    break
                ch = child_start[node] + _branch_of(v, nominal[f], threshold[node])
                if not is_empty[ch]:
                    node = ch
                    continue
                bt = bag_total[ch]
                if bt > SMALL:
                    _class_shares(bag_value, ch, bt, wt, out, r, f_sum, top, laplace)
                else:
                    _class_shares(value, node, total[node], wt, out, r, f_sum, top, laplace)
                ready = True
                break
            # a finished part is in the open frame's sum already, or the row's result
            while True:
                if ready and top < 0:
                    break
                # the next non-empty branch of the open frame, if any
                at = f_node[top]
                start = child_start[at]
                nch = n_children[at]
                j = f_next[top]
                while j < nch and is_empty[start + j]:
                    j += 1
                if j < nch:
                    f_next[top] = j + 1
                    node = start + j
                    wt = f_w[top] * (bag_total[node] / f_tot[top])
                    break
                # the frame is done: its sum is a finished part of the frame below
                for c in range(n_classes):
                    if top == 0:
                        out[r, c] = f_sum[0, c]
                    else:
                        f_sum[top - 1, c] += f_sum[top, c]
                top -= 1
                ready = True
            if ready and top < 0:
                break
    return out


@njit(cache=True, nogil=True)
def _max_depth(child_start, n_children):
    """Number of splits on the longest path from the root (children follow their parent)."""
    n = child_start.shape[0]
    depth = np.zeros(n, dtype=np.int64)
    best = 0
    for i in range(n):
        for j in range(n_children[i]):
            depth[child_start[i] + j] = depth[i] + 1
        best = max(best, depth[i])
    return best


@njit(cache=True, nogil=True)
def _incorrect(dist):
    # total weight less the weight of Weka's maxClass (first class beating the others by 1e-6)
    best = 0.0
    index = 0
    total = 0.0
    for c in range(dist.shape[0]):
        total += dist[c]
        if dist[c] - best > SMALL:
            best = dist[c]
            index = c
    return total - dist[index]


#: Rows from which the root's columns are sorted by radix rather than by comparisons.
_RADIX_ROWS = 4096


@njit(cache=True, nogil=True)
def _sorted_known(col):
    """The rows of ``col``'s known values in increasing order of value, and those values.

    A stable order (equal values, also -0 and +0, keep the order of their rows), so the
    same as a stable comparison sort; with many rows a least-significant-digit radix sort
    on the values' bits (flipped so that their order as unsigned integers is the numbers'
    order; -0 taken as +0), 11 bits a pass, a pass skipped when all rows share its digit.
    """
    n = col.shape[0]
    if n < _RADIX_ROWS:
        order = np.argsort(col, kind="mergesort")
        m = 0
        for r in order:
            if col[r] == col[r]:
                m += 1
        rows = np.empty(m, dtype=np.int32)
        vals = np.empty(m)
        p = 0
        for r in order:
            v = col[r]
            if v == v:
                rows[p] = r
                vals[p] = v
                p += 1
        return rows, vals
    m = 0
    for i in range(n):
        if col[i] == col[i]:
            m += 1
    vals = np.empty(m)
    rows = np.empty(m, dtype=np.int32)
    p = 0
    for i in range(n):
        v = col[i]
        if v == v:
            vals[p] = 0.0 if v == 0.0 else v
            rows[p] = i
            p += 1
    keys = vals.view(np.uint64).copy()
    top = np.uint64(1) << np.uint64(63)
    for i in range(m):
        if keys[i] & top:
            keys[i] = ~keys[i]
        else:
            keys[i] = keys[i] | top
    keys2 = np.empty(m, dtype=np.uint64)
    rows2 = np.empty(m, dtype=np.int32)
    count = np.empty(2048, dtype=np.int64)
    mask = np.uint64(2047)
    for pass_ in range(6):
        shift = np.uint64(11 * pass_)
        count[:] = 0
        for i in range(m):
            count[np.int64((keys[i] >> shift) & mask)] += 1
        if m == 0 or count[np.int64((keys[0] >> shift) & mask)] == m:
            continue
        total = 0
        for b in range(2048):
            c = count[b]
            count[b] = total
            total += c
        for i in range(m):
            b = np.int64((keys[i] >> shift) & mask)
            q = count[b]
            keys2[q] = keys[i]
            rows2[q] = rows[i]
            count[b] = q + 1
        keys, keys2 = keys2, keys
        rows, rows2 = rows2, rows
    for i in range(m):
        vals[i] = col[rows[i]]
    return rows, vals


@njit(cache=True, nogil=True)
def _grow_nodes(cap, n_classes):
    return (np.empty(cap, dtype=np.int64), np.empty(cap), np.empty(cap, dtype=np.int64),
            np.empty(cap, dtype=np.int64), np.empty((cap, n_classes)),
            np.empty((cap, n_classes)), np.empty(cap, dtype=np.bool_),
            np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64))


def _frozen(a):
    """A read-only view of ``a``, the kind of array the growth and pruning kernels are
    compiled for.

    numba compiles a kernel once per type of its arguments, and an array's type says
    whether it is writable: the rows of most fits are, scikit-learn's read-only memory maps
    are not. Each kind cost the growth kernel a compilation of its own (20-30 s); the
    wrappers pass the rows read-only, so that one compilation serves every caller.
    """
    view = a.view()
    view.flags.writeable = False
    return view


def grow_unpruned(X, y, w, cnt, nominal, n_cats, n_classes, min_obj, few_values_ok, zero_rep,
                  collapse, bmap, binary, mdl, actual_value, relocate, policy=None):
    """:func:`_grow_unpruned` with ``X`` and ``relocate`` read-only and ``policy`` passed
    (None or a tuple): one compiled signature per kind of policy and of codes, whatever
    the caller's arrays (:func:`_frozen`)."""
    return _grow_unpruned(_frozen(X), y, w, cnt, nominal, n_cats, n_classes, min_obj,
                          few_values_ok, zero_rep, collapse, bmap, binary, mdl, actual_value,
                          _frozen(relocate), policy)


@njit(cache=True, nogil=True)
def _grow_unpruned(X, y, w, cnt, nominal, n_cats, n_classes, min_obj, few_values_ok,
                   zero_rep, collapse, bmap, binary, mdl, actual_value, relocate, policy):
    """Grow J48's tree without pruning (``-U``), collapsed unless ``collapse`` is False.

    The same tree as the growth of :class:`ensemblekit.classifiers.c45.C45Tree` with
    ``unpruned=True``, in one compiled call (no Python per node): the path for the many
    small trees of the bagging ensembles. Each numeric column is sorted once, at the root;
    a child's sorted rows are filtered from its parent's (no sort per node). Nominal
    columns split one value against the rest when ``binary`` (``-B``; the value's code is
    the node's threshold), numeric splits' gains bear release 8's penalty when ``mdl``
    (not ``-J``). Unless ``actual_value`` is False (``-doNotMakeSplitPointActualValue``),
    a numeric cut is moved to the largest training value not above it, taken from the column's
    distinct values as ``numpy.unique`` gives them: where a column holds zeros of both
    signs, ``zero_rep[j]`` is the zero that ``numpy.unique`` keeps (else NaN, and the
    zeros all have one sign). Those values are ``X``'s, or, when ``relocate`` (a 2-d
    array with ``X``'s columns) has rows, ``relocate``'s: J48's reduced-error pruning grows
    on part of the data and moves its cuts to values of all of it. Returns the node arrays
    ``feature, threshold, child_start,
    n_children, value, bag_value, is_empty`` (children of a node contiguous, after it),
    then each node's training instances: rows ``rows[lo[i]:hi[i]]`` with weights
    ``weights[lo[i]:hi[i]]`` (what pruning re-distributes), as ``lo, hi, rows, weights``.

    ``y`` (class codes) and ``bmap`` (room for each row's branch at a split, ``n`` long,
    any content) are read and written at random rows: the caller makes them 8-bit when
    the codes fit, so that they stay in the processor's cache on large data.

    ``policy`` chooses each node's split: None, J48's (:func:`select_split`); a tuple
    of :func:`inner_policy`, the Inner-Ensemble C4.5's (:func:`inner_split`).
    """
    n, d = X.shape
    K = n_classes
    cap = 64
    # the table of x ln x for whole-number weights, when every weight is one and their
    # total is not far above the number of rows (else a logarithm per term)
    w_total = 0.0
    whole_weights = True
    for i in range(n):
        w_total += w[i]
        if w[i] != math.floor(w[i]):
            whole_weights = False
    if whole_weights and w_total <= 4.0 * n + 4096.0:
        table = _xlnx_table(int(w_total) + 1)
    else:
        table = np.empty(0)
    feature, threshold, child_start, n_children, value, bag_value, is_empty, seg_lo, seg_hi = \
        _grow_nodes(cap, K)
    buf_cap = 4 * n + 16
    buf_rows = np.empty(buf_cap, dtype=np.int32)
    buf_w = np.empty(buf_cap)
    for i in range(n):
        buf_rows[i] = i
        buf_w[i] = w[i]
    buf_len = n
    n_nodes = 1
    seg_lo[0] = 0
    seg_hi[0] = n
    for c in range(K):
        bag_value[0, c] = 0.0
    # each node's rows sorted by each numeric column (known values), children's lists
    # filtered from the parent's: no sort below the root
    num_index = np.full(d, -1, dtype=np.int64)
    n_num = 0
    for j in range(d):
        if not nominal[j]:
            num_index[j] = n_num
            n_num += 1
    # the lists of numeric column k of the nodes still to split form a stack in row k of
    # srow (row indices, int32: the caller keeps n below 2**31) with the column's values
    # and the rows' classes beside them in sval and scls (read in order, not row by row),
    # the next node's list on top, from s_lo[node, k] to s_top[k]: a node's children's
    # lists replace its own (more room is taken only for rows with a missing value, which
    # go down several branches)
    s_lo = np.empty((cap, n_num), dtype=np.int64)
    s_top = np.zeros(n_num, dtype=np.int64)
    s_cap = n + 16
    srow = np.empty((n_num, s_cap), dtype=np.int32)
    sval = np.empty((n_num, s_cap))
    scls = np.empty((n_num, s_cap), dtype=y.dtype)
    for j in range(d):
        if nominal[j]:
            continue
        k = num_index[j]
        rows_j, vals_j = _sorted_known(X[:, j].copy())
        for p in range(rows_j.shape[0]):
            srow[k, p] = rows_j[p]
            sval[k, p] = vals_j[p]
            scls[k, p] = y[rows_j[p]]
        s_lo[0, k] = 0
        s_top[k] = rows_j.shape[0]
    # each numeric column's distinct training values, increasing: the first of each run
    # of equal values in its sorted list (a run of zeros of both signs: zero_rep[j])
    # (or of `relocate`'s columns, sorted here, when it has rows)
    r_val, r_len = sval, s_top
    if relocate.shape[0] > 0:
        r_val = np.empty((n_num, relocate.shape[0]))
        r_len = np.zeros(n_num, dtype=np.int64)
        for j in range(d):
            if not nominal[j]:
                known = _sorted_known(relocate[:, j].copy())[1]
                r_val[num_index[j], :known.shape[0]] = known
                r_len[num_index[j]] = known.shape[0]
    value_start = np.zeros(d + 1, dtype=np.int64)
    for j in range(d):
        count = 0
        if not nominal[j]:
            col = r_val[num_index[j], :r_len[num_index[j]]]
            for p in range(col.shape[0]):
                if p == 0 or col[p] != col[p - 1]:
                    count += 1
        value_start[j + 1] = value_start[j] + count
    values = np.empty(value_start[d])
    for j in range(d):
        if nominal[j]:
            continue
        col = r_val[num_index[j], :r_len[num_index[j]]]
        q = value_start[j]
        for p in range(col.shape[0]):
            v = col[p]
            if p == 0 or v != col[p - 1]:
                values[q] = zero_rep[j] if v == 0.0 and zero_rep[j] == zero_rep[j] else v
                q += 1
    # one list at a time is copied aside while its children's lists are written over it
    t_cap = s_cap
    t_row = np.empty(t_cap, dtype=np.int32)
    t_val = np.empty(t_cap)
    t_cls = np.empty(t_cap, dtype=y.dtype)
    t_branch = np.empty(t_cap, dtype=np.int32)
    # True as a bool, not the literal True: numba would compile each kernel it is passed to
    # for the literal too (a typing step on the way to bool), several seconds each
    unit_cnt = n >= 0
    for i in range(n):
        if cnt[i] != 1.0:
            unit_cnt = False
    wmap = np.zeros(n)
    stack = np.empty(16, dtype=np.int64)
    stack[0] = 0
    top = 1
    first_root = True
    while top > 0:
        top -= 1
        node = stack[top]
        lo = seg_lo[node]
        hi = seg_hi[node]
        rows = buf_rows[lo:hi]
        wts = buf_w[lo:hi].copy()
        unit = True
        for i in range(rows.shape[0]):
            if wts[i] != 1.0:
                unit = False
        if not unit:  # (weights of 1 are not read from wmap)
            for i in range(rows.shape[0]):
                wmap[rows[i]] = wts[i]
        if policy is None:  # J48 (numba compiles one branch: policy's type decides)
            att, cut = select_split(X, rows, wts, y, cnt, unit_cnt, wmap, srow, sval, scls,
                                    s_lo[node], s_top, num_index, nominal, n_cats, K, min_obj,
                                    few_values_ok, table, binary, mdl)
        else:
            att, cut = inner_split(policy, X, rows, wts, y, cnt, unit_cnt, wmap, srow, sval,
                                   scls, s_lo[node], s_top, num_index, nominal, n_cats, K,
                                   min_obj, few_values_ok, table, mdl)
        if att < 0:
            feature[node] = -1
            threshold[node] = np.nan
            child_start[node] = -1
            n_children[node] = 0
            tot = 0.0
            for c in range(K):
                value[node, c] = 0.0
            for i in range(rows.shape[0]):
                value[node, y[rows[i]]] += wts[i]
                tot += wts[i]
            is_empty[node] = abs(tot) < SMALL
            for k in range(n_num):
                s_top[k] = s_lo[node, k]
            if first_root:
                for c in range(K):
                    bag_value[node, c] = value[node, c]
            first_root = False
            continue
        first_root = False
        nb = n_cats[att] if nominal[att] and not binary else 2
        m = rows.shape[0]
        branch = np.empty(m, dtype=np.int64)
        bags = np.zeros((nb, K))
        n_miss = 0
        for i in range(m):
            v = X[rows[i], att]
            if v != v:
                branch[i] = -1
                n_miss += 1
            else:
                b = _branch_of(v, nominal[att], cut)
                branch[i] = b
                bags[b, y[rows[i]]] += wts[i]
            bmap[rows[i]] = branch[i]
        if n_miss > 0:
            kb = np.zeros(nb)
            ktot = 0.0
            for b in range(nb):
                for c in range(K):
                    kb[b] += bags[b, c]
                ktot += kb[b]
            probs = np.empty(nb)
            for b in range(nb):
                probs[b] = kb[b] / ktot if abs(ktot) >= SMALL else 1.0 / nb
            mclass = np.zeros(K)
            for i in range(m):
                if branch[i] < 0:
                    mclass[y[rows[i]]] += wts[i]
            for b in range(nb):
                for c in range(K):
                    bags[b, c] += probs[b] * mclass[c]
        per_bag = np.zeros(nb)
        total = 0.0
        for b in range(nb):
            for c in range(K):
                per_bag[b] += bags[b, c]
            total += per_bag[b]
        if not nominal[att] and actual_value:
            vals = values[value_start[att]:value_start[att + 1]]
            k = np.searchsorted(vals, cut, side="right") - 1
            threshold[node] = vals[k] if k >= 0 else cut
        else:  # the midpoint cut; a binary nominal split's code; NaN (a multiway split)
            threshold[node] = cut
        feature[node] = att
        for c in range(K):
            value[node, c] = 0.0
            for b in range(nb):
                value[node, c] += bags[b, c]
        is_empty[node] = False
        # room for the children and their rows
        if n_nodes + nb > cap:
            new_cap = max(2 * cap, n_nodes + nb)
            f2, t2, cs2, nc2, v2, bv2, e2, l2, h2 = _grow_nodes(new_cap, K)
            f2[:n_nodes] = feature[:n_nodes]
            t2[:n_nodes] = threshold[:n_nodes]
            cs2[:n_nodes] = child_start[:n_nodes]
            nc2[:n_nodes] = n_children[:n_nodes]
            v2[:n_nodes] = value[:n_nodes]
            bv2[:n_nodes] = bag_value[:n_nodes]
            e2[:n_nodes] = is_empty[:n_nodes]
            l2[:n_nodes] = seg_lo[:n_nodes]
            h2[:n_nodes] = seg_hi[:n_nodes]
            so2 = np.empty((new_cap, n_num), dtype=np.int64)
            so2[:n_nodes] = s_lo[:n_nodes]
            s_lo = so2
            feature, threshold, child_start, n_children = f2, t2, cs2, nc2
            value, bag_value, is_empty, seg_lo, seg_hi = v2, bv2, e2, l2, h2
            cap = new_cap
        need = buf_len + m + n_miss * nb
        if need > buf_cap:
            new_cap = max(buf_cap + buf_cap // 2, need)
            r2 = np.empty(new_cap, dtype=np.int32)
            w2 = np.empty(new_cap)
            r2[:buf_len] = buf_rows[:buf_len]
            w2[:buf_len] = buf_w[:buf_len]
            buf_rows, buf_w, buf_cap = r2, w2, new_cap
        child_start[node] = n_nodes
        n_children[node] = nb
        for b in range(nb):
            ch = n_nodes + b
            frac = per_bag[b] / total
            seg_lo[ch] = buf_len
            for i in range(m):
                if branch[i] == b:
                    buf_rows[buf_len] = rows[i]
                    buf_w[buf_len] = wts[i]
                    buf_len += 1
            if n_miss > 0 and frac > SMALL:
                for i in range(m):
                    if branch[i] < 0:
                        buf_rows[buf_len] = rows[i]
                        buf_w[buf_len] = wts[i] * frac
                        buf_len += 1
            seg_hi[ch] = buf_len
            for c in range(K):
                bag_value[ch, c] = bags[b, c]
        # the children's sorted lists, last child lowest (the first child is split next),
        # written over the node's own list, in its order
        take = np.zeros(nb, dtype=np.bool_)
        for b in range(nb):
            take[b] = n_miss > 0 and per_bag[b] / total > SMALL
        sizes = np.zeros(nb, dtype=np.int64)
        put = np.empty(nb, dtype=np.int64)
        for k in range(n_num):
            lo_k = s_lo[node, k]
            m_k = s_top[k] - lo_k
            if m_k > t_cap:
                t_cap = max(t_cap + t_cap // 2, m_k)
                t_row = np.empty(t_cap, dtype=np.int32)
                t_val = np.empty(t_cap)
                t_cls = np.empty(t_cap, dtype=y.dtype)
                t_branch = np.empty(t_cap, dtype=np.int32)
            for b in range(nb):
                sizes[b] = 0
            k_miss = 0
            for i in range(m_k):
                r = srow[k, lo_k + i]
                t_row[i] = r
                t_val[i] = sval[k, lo_k + i]
                t_cls[i] = scls[k, lo_k + i]
                b = bmap[r]
                t_branch[i] = b
                if b >= 0:
                    sizes[b] += 1
                else:
                    k_miss += 1
            pos = lo_k
            for b in range(nb - 1, -1, -1):
                put[b] = pos
                s_lo[n_nodes + b, k] = pos
                pos += sizes[b] + (k_miss if take[b] else 0)
            if pos > s_cap:
                new_s = max(s_cap + s_cap // 2, pos)
                r2 = np.empty((n_num, new_s), dtype=np.int32)
                v2 = np.empty((n_num, new_s))
                c2 = np.empty((n_num, new_s), dtype=y.dtype)
                for kk in range(n_num):
                    r2[kk, :s_top[kk]] = srow[kk, :s_top[kk]]
                    v2[kk, :s_top[kk]] = sval[kk, :s_top[kk]]
                    c2[kk, :s_top[kk]] = scls[kk, :s_top[kk]]
                srow, sval, scls, s_cap = r2, v2, c2, new_s
            s_top[k] = pos
            for i in range(m_k):
                b = t_branch[i]
                if b >= 0:
                    q = put[b]
                    srow[k, q] = t_row[i]
                    sval[k, q] = t_val[i]
                    scls[k, q] = t_cls[i]
                    put[b] = q + 1
                else:
                    for bb in range(nb):
                        if take[bb]:
                            q = put[bb]
                            srow[k, q] = t_row[i]
                            sval[k, q] = t_val[i]
                            scls[k, q] = t_cls[i]
                            put[bb] = q + 1
        if top + nb > stack.shape[0]:
            s2 = np.empty(2 * stack.shape[0] + nb, dtype=np.int64)
            s2[:top] = stack[:top]
            stack = s2
        for b in range(nb - 1, -1, -1):
            stack[top] = n_nodes + b
            top += 1
        n_nodes += nb
    f_out, t_out, cs_out, nc_out, v_out, bv_out, e_out, lo_out, hi_out = _collapse_number(
        feature, threshold, child_start, n_children, value, bag_value, is_empty, seg_lo, seg_hi,
        n_nodes, collapse)
    return (f_out, t_out, cs_out, nc_out, v_out, bv_out, e_out, lo_out, hi_out,
            buf_rows[:buf_len], buf_w[:buf_len])


@njit(cache=True, nogil=True)
def _collapse_number(feature, threshold, child_start, n_children, value, bag_value, is_empty,
                     seg_lo, seg_hi, n_nodes, collapse):
    """The first ``n_nodes`` nodes collapsed (when ``collapse``; in place) and numbered
    breadth first: the node arrays of :func:`grow_unpruned` (children after their parent)."""
    K = value.shape[1]
    # collapse (Weka's collapse: top-down on the grown tree's subtree errors)
    alive = np.ones(n_nodes, dtype=np.bool_)
    if collapse:
        err = np.empty(n_nodes)
        for i in range(n_nodes - 1, -1, -1):
            if feature[i] < 0:
                err[i] = _incorrect(value[i])
            else:
                s = 0.0
                for j in range(n_children[i]):
                    s = s + err[child_start[i] + j]
                err[i] = s
        for i in range(n_nodes):
            alive[i] = False
        alive[0] = True
        for i in range(n_nodes):
            if not alive[i] or feature[i] < 0:
                continue
            if err[i] >= _incorrect(value[i]) - 1e-3:
                feature[i] = -1
                threshold[i] = np.nan
                n_children[i] = 0
                child_start[i] = -1
            else:
                for j in range(n_children[i]):
                    alive[child_start[i] + j] = True
    # renumber the nodes left, breadth first (children stay contiguous and after the parent)
    new_id = np.full(n_nodes, -1, dtype=np.int64)
    order = np.empty(n_nodes, dtype=np.int64)
    order[0] = 0
    new_id[0] = 0
    count = 1
    head = 0
    while head < count:
        i = order[head]
        head += 1
        for j in range(n_children[i]):
            ch = child_start[i] + j
            new_id[ch] = count
            order[count] = ch
            count += 1
    f_out = np.empty(count, dtype=np.int64)
    t_out = np.empty(count)
    cs_out = np.empty(count, dtype=np.int64)
    nc_out = np.empty(count, dtype=np.int64)
    v_out = np.empty((count, K))
    bv_out = np.empty((count, K))
    e_out = np.empty(count, dtype=np.bool_)
    lo_out = np.empty(count, dtype=np.int64)
    hi_out = np.empty(count, dtype=np.int64)
    for k in range(count):
        i = order[k]
        lo_out[k] = seg_lo[i]
        hi_out[k] = seg_hi[i]
        f_out[k] = feature[i]
        t_out[k] = threshold[i]
        nc_out[k] = n_children[i]
        cs_out[k] = new_id[child_start[i]] if n_children[i] > 0 else -1
        v_out[k] = value[i]
        bv_out[k] = bag_value[i]
        e_out[k] = is_empty[i]
    for c in range(K):
        bv_out[0, c] = v_out[0, c]
    return f_out, t_out, cs_out, nc_out, v_out, bv_out, e_out, lo_out, hi_out


@njit(cache=True, nogil=True)
def collapse_grown(feature, threshold, child_start, n_children, value, bag_value, is_empty,
                   seg_lo, seg_hi, rows, weights):
    """What :func:`grow_unpruned` returns with ``collapse``, from what it returned without.

    The grown tree is left as it is (the collapse works on copies), so that one growth
    gives both the collapsed tree and the grown one J48's bookkeeping is replayed on.
    """
    f_out, t_out, cs_out, nc_out, v_out, bv_out, e_out, lo_out, hi_out = _collapse_number(
        feature.copy(), threshold.copy(), child_start.copy(), n_children.copy(), value,
        bag_value, is_empty, seg_lo, seg_hi, feature.shape[0], True)
    return (f_out, t_out, cs_out, nc_out, v_out, bv_out, e_out, lo_out, hi_out, rows, weights)


# ---- the Inner-Ensemble C4.5's split decision (``iec45``, issue 34)
# :class:`ensemblekit.classifiers.iec45.InnerEnsembleC45Tree` grows, collapses and prunes
# as J48 does; only the choice of a node's split differs, and grow_unpruned takes it from
# :func:`inner_split` when its ``policy`` is a tuple (:func:`inner_policy`):
#
# 1. J48's measures on all of the node's instances decide whether the node may split at
#    all (enough weight, more than one class) and which attributes give a valid split;
#    only those can be chosen;
# 2. E samples of the node's m instances are drawn, each of max(2, round(max_samples * m))
#    instances (half up; at most m without replacement), as iebn sizes its samples; a
#    sample is the node's instances, in the node's order, with their weights multiplied
#    by the times each was drawn;
# 3. on each sample, J48's measures (split_measures);
# 4. combined: "average" (0) takes the attribute of largest mean gain ratio, a sample
#    where the attribute is not an eligible candidate (valid, of at least average gain)
#    giving it 0; "vote" (1) lets each sample name its best attribute by J48's rule ("no
#    split" when it has none) and takes the one named most often (ties: the larger mean
#    gain ratio, then the first); "no split" wins only when named more often than any;
# 5. a numeric attribute's threshold is the median of its best thresholds on the samples
#    where it gives a split; grow_unpruned moves it to a training value as J48's own.
#
# The samples come from a SplitMix64 stream whose state the policy carries, drawn node
# after node in the order of growth (depth first): the same seed, the same tree. This code
# lives here, beside grow_unpruned, on purpose: numba caches a compiled function with the
# code of every function it calls, and re-validates the cache against its own file only.

#: ``combine`` codes of a policy.
AVERAGE = 0
VOTE = 1

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def inner_policy(n_rows: int, n_estimators: int, max_samples: float, bootstrap: bool,
                 combine: int, seed: int) -> tuple:
    """The split policy of an Inner-Ensemble C4.5 fit on ``n_rows`` rows.

    Parameters
    ----------
    n_rows : int
        Rows of the training set (the policy's scratch arrays are indexed by row).
    n_estimators : int >= 1
        Ensemble size E: samples per node.
    max_samples : float in (0, 1]
        Sample size as a fraction of the node's instances.
    bootstrap : bool
        Draw with replacement.
    combine : {AVERAGE, VOTE}
    seed : int in [0, 2**63)
        The state of the SplitMix64 stream the samples are drawn from.

    Returns
    -------
    tuple
        What :func:`ensemblekit.classifiers._c45_growth.grow_c45` takes as
        ``split_policy`` (:func:`grow_unpruned`'s ``policy``); its state advances as the
        tree grows, so use it for one fit.
    """
    return (np.int64(n_estimators), float(max_samples), bool(bootstrap), np.int64(combine),
            np.array([seed], dtype=np.uint64), np.zeros(n_rows, dtype=np.int64),
            np.zeros(n_rows), np.zeros(n_rows))


@njit(cache=True, nogil=True)
def _below(state, m):
    """A uniform integer in ``[0, m)`` from the SplitMix64 stream ``state[0]`` (advanced)."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    k = int(float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0) * m)
    return min(k, m - 1)


@njit(cache=True, nogil=True)
def _draw(state, rows, times, size, bootstrap, perm):
    """Times each of the node's instances is drawn into one sample: ``times[rows[i]]``."""
    m = rows.shape[0]
    for i in range(m):
        times[rows[i]] = 0
    if bootstrap:
        for _ in range(size):
            times[rows[_below(state, m)]] += 1
        return
    for i in range(m):
        perm[i] = i
    for s in range(size):  # the first `size` places of a Fisher-Yates shuffle
        j = s + _below(state, m - s)
        perm[s], perm[j] = perm[j], perm[s]
        times[rows[perm[s]]] = 1


@njit(cache=True, nogil=True)
def _median(values, n):
    """Median of ``values[:n]`` (n >= 1): the middle one, or the mean of the two middle ones."""
    v = np.sort(values[:n])
    if n % 2 == 1:
        return v[n // 2]
    lo = v[n // 2 - 1]
    hi = v[n // 2]
    mid = (lo + hi) / 2.0
    if math.isinf(mid):  # two values near the float limits: halve first
        mid = lo / 2.0 + hi / 2.0
    return mid


@njit(cache=True, nogil=True)
def inner_split(policy, X, rows, wts, y, cnt, unit_cnt, wmap, srow, sval, scls, s_lo, s_hi,
                num_index, nominal, n_cats, n_classes, min_obj, few_values_ok, table, mdl):
    """The Inner-Ensemble C4.5's split of one node (steps 1-5 above).

    ``policy`` is :func:`inner_policy`'s tuple: E, ``max_samples``, ``bootstrap``,
    ``combine``, the stream's state, and scratch arrays indexed by row (times drawn,
    weight and instance count in the sample); the other arguments are those of
    :func:`select_split`.

    Returns
    -------
    attribute : int
        The chosen attribute, or -1 for a leaf.
    cut : float
        The median threshold of a numeric attribute before it is moved to a training
        value (NaN for nominal).
    """
    n_estimators, max_samples, bootstrap, combine, state, times, w_s, cnt_s = policy
    # False as a bool: split_measures is then J48's own compilation, not one more for
    # literal arguments (see grow_unpruned's unit_cnt)
    no = rows.shape[0] < 0
    ok, allowed, g0, r0, c0, a0 = split_measures(
        X, rows, wts, y, cnt, unit_cnt, wmap, srow, sval, scls, s_lo, s_hi, num_index, nominal,
        n_cats, n_classes, min_obj, few_values_ok, table, no, mdl)
    if not ok:
        return -1, np.nan
    m = rows.shape[0]
    d = X.shape[1]
    n_num = srow.shape[0]
    size = max(2, int(math.floor(max_samples * m + 0.5)))
    if not bootstrap:
        size = min(size, m)
    score = np.zeros(d)
    votes = np.zeros(d + 1, dtype=np.int64)  # votes[d]: "no split"
    sample_cuts = np.empty((n_estimators, d))
    has_cut = np.zeros((n_estimators, d), dtype=np.bool_)
    perm = np.empty(m, dtype=np.int64)
    rows_s = np.empty(m, dtype=rows.dtype)
    wts_s = np.empty(m)
    srow_s = np.empty((n_num, m), dtype=srow.dtype)
    sval_s = np.empty((n_num, m))
    scls_s = np.empty((n_num, m), dtype=scls.dtype)
    lo_s = np.zeros(n_num, dtype=np.int64)
    hi_s = np.zeros(n_num, dtype=np.int64)
    for e in range(n_estimators):
        _draw(state, rows, times, size, bootstrap, perm)
        k_s = 0
        for i in range(m):
            r = rows[i]
            t = times[r]
            if t > 0:
                rows_s[k_s] = r
                wts_s[k_s] = wts[i] * t
                w_s[r] = wts[i] * t
                cnt_s[r] = cnt[r] * t
                k_s += 1
        for k in range(n_num):
            q = 0
            for p in range(s_lo[k], s_hi[k]):
                r = srow[k, p]
                if times[r] > 0:
                    srow_s[k, q] = r
                    sval_s[k, q] = sval[k, p]
                    scls_s[k, q] = scls[k, p]
                    q += 1
            hi_s[k] = q
        ok_e, valid, gains, ratios, cuts, avg = split_measures(
            X, rows_s[:k_s], wts_s[:k_s], y, cnt_s, no, w_s, srow_s, sval_s, scls_s, lo_s,
            hi_s, num_index, nominal, n_cats, n_classes, min_obj, few_values_ok, table, no, mdl)
        if not ok_e:
            votes[d] += 1
            continue
        for j in range(d):
            if allowed[j] and eligible(valid, gains, avg, j):
                score[j] += ratios[j]
            if valid[j] and not nominal[j]:
                sample_cuts[e, j] = cuts[j]
                has_cut[e, j] = True
        best = best_split(valid, gains, ratios, avg, allowed)
        votes[d if best < 0 else best] += 1
    best = -1
    if combine == 0:  # average: J48's "first by more than 1e-6" rule on the mean ratios
        best_mean = 0.0
        for j in range(d):
            mean = score[j] / n_estimators
            if mean - best_mean > SMALL:
                best = j
                best_mean = mean
    else:  # vote: most votes; ties to the larger mean ratio, then the first attribute
        for j in range(d):
            if votes[j] == 0:
                continue
            if best < 0 or votes[j] > votes[best] or (
                    votes[j] == votes[best]
                    and score[j] / n_estimators - score[best] / n_estimators > SMALL):
                best = j
        if best >= 0 and votes[d] > votes[best]:
            best = -1
    if best < 0:
        return -1, np.nan
    if nominal[best]:
        return best, np.nan
    found = np.empty(n_estimators)
    n_found = 0
    for e in range(n_estimators):
        if has_cut[e, best]:
            found[n_found] = sample_cuts[e, best]
            n_found += 1
    return best, _median(found, n_found)
