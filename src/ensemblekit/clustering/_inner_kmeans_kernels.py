"""Compiled kernels of IEK-m's assignment and update steps (numba).

Private to :mod:`ensemblekit.clustering.inner_kmeans`, which imports this
module only when it fits, so that importing ensemblekit never loads numba.
Compiled code is cached on disk (``cache=True``), so only the first use on a
machine pays for compilation.

Arithmetic. A member's distance to a centre, up to a per-(instance, member)
constant, is ``sum_f x_f a_f + b`` with ``a_f = -2 W[e, f] mu[c, f]`` (see the
module docstring of ``inner_kmeans``). The kernels evaluate the sum as a
chain of fused multiply-adds over the member's features in increasing
order, starting from zero, then add ``b`` -- one rounding per feature, the
same operations, in the same order, as the matrix-product kernel of
OpenBLAS (0.3, x86-64) performs for each entry of ``X @ A``, where features
outside the subset contribute exact zeros. The result is a pure function of
the instance: it does not depend on the block of rows it is computed in.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

#: Features are taken four at a time; member subsets are padded to a multiple
#: of this with a feature whose value and multiplier are both zero.
GROUP = 4


@intrinsic
def _fma(typingctx, x, y, z):
    """``x * y + z`` with a single rounding (LLVM's ``llvm.fma.f64``)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@njit(cache=True, nogil=True)
def _member_nearest(XT, start, rows, A, b, feats, e, acc, best, nearest):
    """Nearest centre of each instance of a block under member ``e`` (ties: lowest index).

    The rows ``start .. start + rows`` of the data are the columns of ``XT``;
    ``acc`` is float64 scratch of shape (2, >= rows), ``best`` of length
    >= rows; the answer is written to ``nearest[:rows]``. The loops run over
    instances innermost, so that they vectorise; two centres are done at
    once (two independent chains of multiply-adds per instance, measured
    1.6x faster than one on letter), and the last group of features is
    fused with the comparison. With an odd number of centres the last pair
    repeats the last centre, which changes nothing (the comparison is
    strict).
    """
    n_clusters = A.shape[1]
    n_slots = feats.shape[1]
    last = n_slots - GROUP
    stop = start + rows
    acc0 = acc[0]
    acc1 = acc[1]
    for r in range(rows):
        best[r] = np.inf
        nearest[r] = 0
    for c0 in range(0, n_clusters, 2):
        c1 = min(c0 + 1, n_clusters - 1)
        for r in range(rows):
            acc0[r] = 0.0
            acc1[r] = 0.0
        for j in range(0, n_slots, GROUP):
            f0 = feats[e, j]
            f1 = feats[e, j + 1]
            f2 = feats[e, j + 2]
            f3 = feats[e, j + 3]
            a0 = A[e, c0, f0]
            a1 = A[e, c0, f1]
            a2 = A[e, c0, f2]
            a3 = A[e, c0, f3]
            p0 = A[e, c1, f0]
            p1 = A[e, c1, f1]
            p2 = A[e, c1, f2]
            p3 = A[e, c1, f3]
            x0 = XT[f0, start:stop]
            x1 = XT[f1, start:stop]
            x2 = XT[f2, start:stop]
            x3 = XT[f3, start:stop]
            if j < last:
                for r in range(rows):
                    u0 = x0[r]
                    u1 = x1[r]
                    u2 = x2[r]
                    u3 = x3[r]
                    acc0[r] = _fma(u3, a3, _fma(u2, a2, _fma(u1, a1, _fma(u0, a0, acc0[r]))))
                    acc1[r] = _fma(u3, p3, _fma(u2, p2, _fma(u1, p1, _fma(u0, p0, acc1[r]))))
            else:
                b0 = b[e, c0]
                b1 = b[e, c1]
                for r in range(rows):
                    u0 = x0[r]
                    u1 = x1[r]
                    u2 = x2[r]
                    u3 = x3[r]
                    d0 = _fma(u3, a3, _fma(u2, a2, _fma(u1, a1, _fma(u0, a0, acc0[r])))) + b0
                    d1 = _fma(u3, p3, _fma(u2, p2, _fma(u1, p1, _fma(u0, p0, acc1[r])))) + b1
                    low = best[r]
                    arg = nearest[r]
                    closer = d0 < low
                    low = d0 if closer else low
                    arg = c0 if closer else arg
                    closer = d1 < low
                    best[r] = d1 if closer else low
                    nearest[r] = c1 if closer else arg


@njit(cache=True, nogil=True)
def vote_assign(XT, A, b, feats, block_rows, labels, votes_out):
    """Assignment step of IEK-m: member votes, then the documented tie-break.

    Parameters
    ----------
    XT : ndarray of shape (n_features + 1, n_samples), float64, C-contiguous
        The data transposed, with a last row of zeros (the padding feature).
    A : ndarray of shape (n_estimators + 1, n_clusters, n_features + 1)
        Multipliers ``A[e, c, f] = -2 W[e, f] mu[c, f]``; member ``E`` (the
        last) has every feature once (full space); ``A[:, :, n_features] = 0``.
    b : ndarray of shape (n_estimators + 1, n_clusters)
        Offsets ``b[e, c] = sum_f W[e, f] mu[c, f]**2``.
    feats : ndarray of shape (n_estimators, n_slots), intp
        Member ``e``'s features with non-zero weight in increasing order, then
        the padding feature ``n_features``; ``n_slots`` a multiple of GROUP.
    block_rows : int
        Instances per block (>= 1).
    labels : ndarray of shape (n_samples,), intp
        Output: winning centre of each instance.
    votes_out : ndarray of shape (n_samples, n_clusters) or (0, n_clusters), intp
        Output, when it has rows: the vote counts.
    """
    n_samples = XT.shape[1]
    n_full = XT.shape[0] - 1
    n_estimators = A.shape[0] - 1
    n_clusters = A.shape[1]
    acc = np.empty((2, block_rows))
    best = np.empty(block_rows)
    nearest = np.empty(block_rows, dtype=np.intp)
    # Vote counts are held centre-major, so that the reductions over centres
    # below run across instances and vectorise (k is often too short to).
    votes = np.empty((n_clusters, block_rows), dtype=np.int32)
    top = np.empty(block_rows, dtype=np.int32)  # most votes
    n_top = np.empty(block_rows, dtype=np.int32)  # centres holding that many
    lead = np.empty(block_rows, dtype=np.intp)  # the lowest such centre
    for start in range(0, n_samples, block_rows):
        rows = min(block_rows, n_samples - start)
        votes[:, :rows] = 0
        for e in range(n_estimators):
            _member_nearest(XT, start, rows, A, b, feats, e, acc, best, nearest)
            for r in range(rows):
                votes[nearest[r], r] += 1
        top[:rows] = 0
        for c in range(n_clusters):
            votes_c = votes[c]
            for r in range(rows):
                top[r] = max(top[r], votes_c[r])
        n_top[:rows] = 0
        for c in range(n_clusters - 1, -1, -1):
            votes_c = votes[c]
            for r in range(rows):
                at_top = votes_c[r] == top[r]
                n_top[r] += at_top
                lead[r] = c if at_top else lead[r]
        for r in range(rows):
            if n_top[r] == 1:
                labels[start + r] = lead[r]
                continue
            # Tie on votes: nearest tied centre in the full space, then lowest index.
            i = start + r
            nearest_full = 0
            best_full = np.inf
            for c in range(n_clusters):
                if votes[c, r] != top[r]:
                    continue
                dist = 0.0
                for f in range(n_full):
                    dist = _fma(XT[f, i], A[n_estimators, c, f], dist)
                dist += b[n_estimators, c]
                if dist < best_full:
                    best_full = dist
                    nearest_full = c
            labels[i] = nearest_full
        if votes_out.shape[0] > 0:
            votes_out[start:start + rows] = votes[:, :rows].T


@njit(cache=True, nogil=True)
def cluster_sums(X, labels, n_clusters):
    """Per-cluster sums of the instances and counts, accumulated in instance order.

    Returns ``sums`` of shape (n_clusters, n_features) and ``counts`` of shape
    (n_clusters,), float64 -- the values ``np.bincount(labels, weights=X[:, f])``
    and ``np.bincount(labels)`` give, which add in the same order.
    """
    n_samples, n_features = X.shape
    sums = np.zeros((n_clusters, n_features))
    counts = np.zeros(n_clusters)
    for i in range(n_samples):
        c = labels[i]
        counts[c] += 1.0
        for f in range(n_features):
            sums[c, f] += X[i, f]
    return sums, counts
