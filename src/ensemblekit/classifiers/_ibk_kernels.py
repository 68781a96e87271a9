"""The compiled forms of IBk's distance sum and vote count (numba), for the ``knn`` estimator.

Imported lazily by :class:`ensemblekit.classifiers.ibk.IBk` (and a model fitted by
``IBkModel.fit_coded``) on its first prediction, never by the numpy-only
:class:`~ensemblekit.classifiers.ibk_model.IBkModel` a model file is rebuilt as
(``ensemblekit predict`` must not load numba). Compiled code is cached on disk
(``cache=True``), so only the first use on a machine compiles.

:func:`ordered_sums` has exactly the contract of
:func:`ensemblekit.classifiers.ibk_model.ordered_sums`, the numpy form: the same
floating-point operations on the same operands in the same order (a subtraction, a square
and an addition per numeric attribute, the addition of 0 or 1 per nominal one, attributes
in column order), so both give the same bits. Every rule that decides an operand (the
ranges, the scaling, the difference to a missing value, the neighbours, their weights and
the class distribution) stays in :mod:`ensemblekit.classifiers.ibk_model`, computed once
for both. The compiled loop only fuses the passes numpy makes over a block of distances
(one per attribute and operation) into one pass per test row. :func:`mismatch_counts`
is the same sum when every attribute is nominal: a count of whole numbers, exact in any
order, taken on one-byte codes. :func:`counted_votes` and
:func:`nearest_mismatch_votes` count uniform votes (whole numbers again) without the
boolean masks numpy builds; the bound they count within is numpy's, or for whole counts
the plain minimum.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def ordered_sums(Q, FQ, T, FT, nominal, out):
    """Squared IBk distances of the rows ``Q`` to the training rows ``T``, into ``out``.

    See :func:`ensemblekit.classifiers.ibk_model.ordered_sums` for the parameters; the
    loops run over training rows innermost, so that they vectorise without changing the
    order of any one row's sum.
    """
    m, p = Q.shape
    n = T.shape[1]
    for i in range(m):
        acc = out[i]
        for r in range(n):
            acc[r] = 0.0
        for j in range(p):
            q = Q[i, j]
            t = T[j]
            if nominal[j]:
                for r in range(n):  # NaN (missing) differs from every code
                    acc[r] += 1.0 if q != t[r] else 0.0
            elif q != q:  # the test value is missing
                ft = FT[j]
                for r in range(n):
                    d = 1.0 if t[r] != t[r] else ft[r]
                    acc[r] += d * d
            else:
                fq = FQ[i, j]
                for r in range(n):
                    tr = t[r]
                    d = fq if tr != tr else q - tr
                    acc[r] += d * d


@njit(cache=True, nogil=True)
def _count_mismatches(q, T, acc):
    """``acc[r]``: the attributes in which the codes ``q`` and ``T[:, r]`` differ.

    Two attributes per pass over ``acc`` (whole counts: any order gives the same count).
    """
    p, n = T.shape
    acc[:] = 0
    one, zero = acc.dtype.type(1), acc.dtype.type(0)
    for j in range(0, p - 1, 2):
        q0, q1, t0, t1 = q[j], q[j + 1], T[j], T[j + 1]
        for r in range(n):
            acc[r] += (one if t0[r] != q0 else zero) + (one if t1[r] != q1 else zero)
    if p % 2:
        q0, t0 = q[p - 1], T[p - 1]
        for r in range(n):
            acc[r] += one if t0[r] != q0 else zero


@njit(cache=True, nogil=True)
def mismatch_counts(Q, T, acc, out):
    """Squared IBk distances when every attribute is nominal: the number of mismatches.

    Each attribute then adds exactly 0 or 1, so the column-ordered float sum of
    :func:`ordered_sums` is a whole number and equals this count in any order: the same
    bits, counted on one-byte codes (many more of them per vector instruction).

    Parameters
    ----------
    Q : ndarray of uint8 of shape (m, n_features)
        Test rows' codes, a missing value as a code no training row holds (255).
    T : ndarray of uint8 of shape (n_features, n_samples)
        Training rows' codes, transposed, a missing value as another such code (254),
        so that a missing value differs from every value, itself included.
    acc : ndarray of uint8 or uint16 of shape (n_samples,)
        Scratch space, wide enough for ``n_features`` (uint8 up to 255 attributes).
    out : ndarray of float64 of shape (m, n_samples)
        Written with the counts.
    """
    for i in range(Q.shape[0]):
        _count_mismatches(Q[i], T, acc)
        for r in range(T.shape[1]):
            out[i, r] = acc[r]


@njit(cache=True, nogil=True)
def nearest_mismatch_votes(Q, T, acc, classes, out):
    """Uniform votes of the nearest rows (k = 1) when every attribute is nominal.

    What :func:`mismatch_counts` followed by IBk's vote gives: each test row's smallest
    count, and 1 added to ``out[i, classes[r]]`` for every training row ``r`` at it (ties
    included); counts are never NaN, so the smallest is the plain minimum. Whole
    numbers, the same bits, without the block of float distances.

    Parameters
    ----------
    Q, T, acc : as for :func:`mismatch_counts`
    classes : ndarray of int64 of shape (n_samples,)
        Class index of each training row.
    out : ndarray of float64 of shape (m, n_classes)
        Zeros on entry; the votes on exit.
    """
    n = T.shape[1]
    for i in range(Q.shape[0]):
        _count_mismatches(Q[i], T, acc)
        low = acc[0]
        for r in range(n):
            low = min(low, acc[r])
        for r in range(n):
            if acc[r] == low:
                out[i, classes[r]] += 1.0


@njit(cache=True, nogil=True)
def counted_votes(sq, kth, classes, out):
    """Uniform votes: add 1 to ``out[i, classes[r]]`` for every ``sq[i, r] <= kth[i]``.

    The neighbours of :meth:`ensemblekit.classifiers.ibk_model.IBkModel._add_votes`
    (the rows within the k-th smallest distance, ties included; a NaN distance or bound
    chooses none) counted without the boolean mask numpy builds. Whole counts, so the
    same bits as numpy's count.

    Parameters
    ----------
    sq : ndarray of float64 of shape (m, n_samples)
        Squared distances of each test row to the training rows.
    kth : ndarray of float64 of shape (m,)
        Each test row's k-th smallest distance.
    classes : ndarray of int64 of shape (n_samples,)
        Class index of each training row.
    out : ndarray of float64 of shape (m, n_classes)
        Zeros on entry; the counts on exit.
    """
    m, n = sq.shape
    for i in range(m):
        row = sq[i]
        bound = kth[i]
        for r in range(n):
            if row[r] <= bound:
                out[i, classes[r]] += 1.0
